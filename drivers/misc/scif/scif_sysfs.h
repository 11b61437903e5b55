/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: the nodes' sysfs directories (scif_sysfs.c).  Lock rules:
 * scif_nodes.h (struct scif_node.kobj).
 */
#ifndef _SCIF_SYSFS_H_
#define _SCIF_SYSFS_H_

struct scif_node;

int scif_sysfs_init(void);
void scif_sysfs_exit(void);
void scif_sysfs_node_add(struct scif_node *node);
void scif_sysfs_node_absent(struct scif_node *node);

#endif /* _SCIF_SYSFS_H_ */
