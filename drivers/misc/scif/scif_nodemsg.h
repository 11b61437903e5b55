/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: the router of node messages to their handlers
 * (scif_nodemsg.c).  Lock rules: scif_nodes.h and scif_epd.h.
 */
#ifndef _SCIF_NODEMSG_H_
#define _SCIF_NODEMSG_H_

struct scif_msg;
struct scif_node;

void scif_nodemsg_dispatch(struct scif_node *node, const struct scif_msg *msg);

#endif /* _SCIF_NODEMSG_H_ */
