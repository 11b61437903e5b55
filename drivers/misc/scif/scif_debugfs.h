/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: the driver's debugfs files (scif_debugfs.c).  Lock
 * rules: scif_endpt.h.
 */
#ifndef _SCIF_DEBUGFS_H_
#define _SCIF_DEBUGFS_H_

void scif_debugfs_init(void);
void scif_debugfs_exit(void);

#endif /* _SCIF_DEBUGFS_H_ */
