/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: connections: bind, listen, connect, accept, close and
 * their node messages (scif_conn.c).  Lock rules: scif_endpt.h.
 */
#ifndef _SCIF_CONN_H_
#define _SCIF_CONN_H_

#include <linux/types.h>

struct scif_conreq;
struct scif_endpt;
struct scif_msg;
struct scif_node;
struct scif_port_id;

int scif_epd_bind(struct scif_endpt *ep, u16 port);
int scif_epd_listen(struct scif_endpt *ep, int backlog);
int scif_epd_connect(struct scif_endpt *ep, struct scif_port_id *dst,
		     bool nonblock);
struct scif_conreq *scif_epd_take_request(struct scif_endpt *lep, int flags);
int scif_epd_accept_request(struct scif_endpt *ep, struct scif_conreq *req);
void scif_conreq_reject(struct scif_conreq *req);
int scif_epd_acceptreq(struct scif_endpt *lep, int flags,
		       struct scif_port_id *peer, u64 *cookie);
struct scif_conreq *scif_epd_unpark_request(u64 cookie);
void scif_epd_close(struct scif_endpt *ep);
void scif_conn_ring_broken(struct scif_endpt *ep);
void scif_conn_handle_connect(struct scif_node *node,
			      const struct scif_msg *msg,
			      struct scif_endpt *unused);
void scif_conn_handle_accept(struct scif_node *node,
			     const struct scif_msg *msg, struct scif_endpt *ep);
void scif_conn_handle_reject(struct scif_node *node,
			     const struct scif_msg *msg, struct scif_endpt *ep);
void scif_conn_handle_disconnect(struct scif_node *node,
				 const struct scif_msg *msg,
				 struct scif_endpt *ep);
void scif_conn_handle_disc_ack(struct scif_node *node,
			       const struct scif_msg *msg,
			       struct scif_endpt *ep);

#endif /* _SCIF_CONN_H_ */
