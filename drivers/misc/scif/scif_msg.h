/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: messages on a connection, send and receive (scif_msg.c).
 * Lock rules: scif_endpt.h.
 */
#ifndef _SCIF_MSG_H_
#define _SCIF_MSG_H_

#include <linux/types.h>

struct iov_iter;
struct scif_endpt;
struct scif_msg;
struct scif_node;

int scif_epd_send(struct scif_endpt *ep, struct iov_iter *from, int flags);
int scif_epd_recv(struct scif_endpt *ep, struct iov_iter *to, int flags);
void scif_msg_handle_notify(struct scif_node *node, const struct scif_msg *msg,
			    struct scif_endpt *ep);
__poll_t scif_msg_poll_mask(struct scif_endpt *ep);
int scif_epd_fp_notify(struct scif_endpt *ep, int what);

#endif /* _SCIF_MSG_H_ */
