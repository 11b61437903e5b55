/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: the router of node messages to their handlers
 * (scif_nodemsg.c).  Lock rules: scif_nodes.h and scif_endpt.h.
 */
#ifndef _SCIF_NODEMSG_H_
#define _SCIF_NODEMSG_H_

struct scif_msg;
struct scif_node;

void scif_nodemsg_dispatch(struct scif_node *node, const struct scif_msg *msg);
#ifdef SCIF_KUNIT
/* Visible to scif_kunit.ko only (scif_visibility.h). */
bool scif_nodemsg_orphan_reply(const struct scif_msg *msg,
			       struct scif_msg *reply);
#endif

#endif /* _SCIF_NODEMSG_H_ */
