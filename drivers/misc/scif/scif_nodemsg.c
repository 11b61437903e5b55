// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: the node-message router.  Every message a node's rx_work
 * takes out of the node queue pair comes here and goes, by the table
 * below, to the handler of its type in the file that owns it:
 *
 *   CONNECT ... DISC_ACK         scif_conn.c    scif_conn_handle_*()
 *   DATA, SPACE                  scif_msg.c     scif_msg_handle_notify()
 *   REGISTER ... UNREGISTER_ACK  scif_window.c  scif_window_handle_msg()
 *   FENCE_*                      scif_fence.c   scif_fence_handle_msg()
 *   STAGE_*                      scif_rma.c     scif_rma_stage_handle_msg()
 *   DEV_*                        scif_devices.c scif_devices_handle_msg()
 *
 * A message names its endpoint by handle (dst); the router looks it up
 * and hands it over only if its peer is on the sending node.  A message
 * for an endpoint that is gone (or that is not connected to that node)
 * is an orphan: it is counted as dropped, and if its sender waits for an
 * answer, the table says which answer it gets, so that no peer waits for
 * an endpoint that no longer exists.  Nothing here waits for anything
 * remote: handlers queue their answers with scif_node_reply().
 */
#define pr_fmt(fmt) "scif: " fmt

#include <linux/nospec.h>

#include "scif_conn.h"
#include "scif_devices.h"
#include "scif_epd.h"
#include "scif_info.h"
#include "scif_msg.h"
#include "scif_nodemsg.h"
#include "scif_nodes.h"
#include "scif_proto.h"
#include "scif_rma.h"
#include "scif_visibility.h"

/*
 * The message names no endpoint: the handler is called without a
 * lookup, with a NULL endpoint (CONNECT names a listening port).
 */
#define SCIF_NODEMSG_NO_EPD	BIT(0)

/**
 * struct scif_nodemsg_route - how one message type is handled
 * @handle: the handler, given the endpoint the message names (holding a
 *	reference), whose peer is on the sending node; every field of the
 *	message but @op is still unchecked
 * @flags: SCIF_NODEMSG_*
 * @orphan_op: the answer to an orphan of this type, sent back to its
 *	sender (if it named itself: src not 0) with src and dst swapped;
 *	0 for none
 * @orphan_args: leading arguments of the orphan copied into that answer
 *	(the request's id, and the window's offset)
 * @orphan_err: positive errno the answer carries in arg[2], or 0
 */
struct scif_nodemsg_route {
	void (*handle)(struct scif_node *node, const struct scif_msg *msg,
		       struct scif_endpt *ep);
	u8 flags;
	u8 orphan_op;
	u8 orphan_args;
	u8 orphan_err;
};

static const struct scif_nodemsg_route scif_nodemsg_routes[SCIF_MSG_NR] = {
	[SCIF_MSG_CONNECT] = {
		.handle = scif_conn_handle_connect,
		.flags = SCIF_NODEMSG_NO_EPD,
	},
	/* Release the peer endpoint that was made for us. */
	[SCIF_MSG_ACCEPT] = {
		.handle = scif_conn_handle_accept,
		.orphan_op = SCIF_MSG_DISCONNECT,
	},
	[SCIF_MSG_REJECT] = {
		.handle = scif_conn_handle_reject,
	},
	[SCIF_MSG_DISCONNECT] = {
		.handle = scif_conn_handle_disconnect,
		.orphan_op = SCIF_MSG_DISC_ACK,
	},
	[SCIF_MSG_DISC_ACK] = {
		.handle = scif_conn_handle_disc_ack,
	},
	[SCIF_MSG_DATA] = {
		.handle = scif_msg_handle_notify,
	},
	[SCIF_MSG_SPACE] = {
		.handle = scif_msg_handle_notify,
	},
	/* A registrant never waits for an endpoint that is gone. */
	[SCIF_MSG_REGISTER] = {
		.handle = scif_window_handle_msg,
		.orphan_op = SCIF_MSG_REGISTER_ACK,
		.orphan_args = 2,
		.orphan_err = ECONNRESET,
	},
	[SCIF_MSG_REGISTER_ACK] = {
		.handle = scif_window_handle_msg,
	},
	[SCIF_MSG_UNREGISTER] = {
		.handle = scif_window_handle_msg,
		.orphan_op = SCIF_MSG_UNREGISTER_ACK,
		.orphan_args = 2,
	},
	[SCIF_MSG_UNREGISTER_ACK] = {
		.handle = scif_window_handle_msg,
	},
	/* Nor does a fence requester. */
	[SCIF_MSG_FENCE_MARK] = {
		.handle = scif_fence_handle_msg,
		.orphan_op = SCIF_MSG_FENCE_ACK,
		.orphan_args = 1,
		.orphan_err = ECONNRESET,
	},
	[SCIF_MSG_FENCE_WAIT] = {
		.handle = scif_fence_handle_msg,
		.orphan_op = SCIF_MSG_FENCE_ACK,
		.orphan_args = 1,
		.orphan_err = ECONNRESET,
	},
	[SCIF_MSG_FENCE_SIGNAL] = {
		.handle = scif_fence_handle_msg,
		.orphan_op = SCIF_MSG_FENCE_ACK,
		.orphan_args = 1,
		.orphan_err = ECONNRESET,
	},
	[SCIF_MSG_FENCE_ACK] = {
		.handle = scif_fence_handle_msg,
	},
	/* Nor an initiator of a staged RMA. */
	[SCIF_MSG_STAGE_WRITE] = {
		.handle = scif_rma_stage_handle_msg,
		.orphan_op = SCIF_MSG_STAGE_ACK,
		.orphan_args = 1,
		.orphan_err = ECONNRESET,
	},
	[SCIF_MSG_STAGE_READ] = {
		.handle = scif_rma_stage_handle_msg,
		.orphan_op = SCIF_MSG_STAGE_ACK,
		.orphan_args = 1,
		.orphan_err = ECONNRESET,
	},
	[SCIF_MSG_STAGE_ACK] = {
		.handle = scif_rma_stage_handle_msg,
	},
	/*
	 * Devices: node-level, no endpoint; a requester waits at most
	 * dev_msg_timeout_ms, so nothing needs an orphan answer.
	 */
	[SCIF_MSG_DEV_LIST] = {
		.handle = scif_devices_handle_msg,
		.flags = SCIF_NODEMSG_NO_EPD,
	},
	[SCIF_MSG_DEV_LIST_ACK] = {
		.handle = scif_devices_handle_msg,
		.flags = SCIF_NODEMSG_NO_EPD,
	},
	[SCIF_MSG_DEV_BORROW] = {
		.handle = scif_devices_handle_msg,
		.flags = SCIF_NODEMSG_NO_EPD,
	},
	[SCIF_MSG_DEV_BORROW_ACK] = {
		.handle = scif_devices_handle_msg,
		.flags = SCIF_NODEMSG_NO_EPD,
	},
	[SCIF_MSG_DEV_RETURN] = {
		.handle = scif_devices_handle_msg,
		.flags = SCIF_NODEMSG_NO_EPD,
	},
	[SCIF_MSG_DEV_RETURN_ACK] = {
		.handle = scif_devices_handle_msg,
		.flags = SCIF_NODEMSG_NO_EPD,
	},
	[SCIF_MSG_DEV_WITHDRAW] = {
		.handle = scif_devices_handle_msg,
		.flags = SCIF_NODEMSG_NO_EPD,
	},
	[SCIF_MSG_DEV_WITHDRAW_ACK] = {
		.handle = scif_devices_handle_msg,
		.flags = SCIF_NODEMSG_NO_EPD,
	},
};

static const struct scif_nodemsg_route *scif_nodemsg_route(u32 op)
{
	if (!op || op >= SCIF_MSG_NR)
		return NULL;
	return &scif_nodemsg_routes[array_index_nospec(op, SCIF_MSG_NR)];
}

/*
 * The answer to @msg, a message for an endpoint that no longer exists,
 * in @reply; false if it gets none.  The answer names the vanished
 * endpoint as its source: the peer only accepts a DISCONNECT or DISC_ACK
 * from the endpoint it is connected to.
 */
SCIF_VISIBLE_IF_KUNIT
bool scif_nodemsg_orphan_reply(const struct scif_msg *msg,
			       struct scif_msg *reply)
{
	const struct scif_nodemsg_route *route = scif_nodemsg_route(msg->op);
	unsigned int i;

	if (!route || !route->orphan_op || !msg->src)
		return false;
	scif_nodemsg_init(reply, route->orphan_op, msg->src, msg->dst);
	for (i = 0; i < route->orphan_args; i++)
		reply->arg[i] = msg->arg[i];
	if (route->orphan_err)
		reply->arg[2] = route->orphan_err;
	return true;
}

SCIF_EXPORT_IF_KUNIT(scif_nodemsg_orphan_reply);

/**
 * scif_nodemsg_dispatch() - route one node message to its handler
 * @node: the node it came from
 * @msg: the message, a copy out of the node queue pair; every field is
 *	checked before use
 *
 * A type the table does not know (0, SCIF_MSG_NR or beyond) is counted
 * as dropped and logged (rate limited); the node stays up.  A message
 * naming no live endpoint of @node is an orphan: counted as dropped and
 * answered as its table entry says.  Anything else is handed to its
 * type's handler with a reference to the endpoint, dropped afterwards.
 *
 * Context: the node's rx_work; must not wait for anything remote.
 */
void scif_nodemsg_dispatch(struct scif_node *node, const struct scif_msg *msg)
{
	const struct scif_nodemsg_route *route = scif_nodemsg_route(msg->op);
	struct scif_msg reply;
	struct scif_endpt *ep;

	if (!route || !route->handle) {
		atomic_inc(&scif_info.dropped_msgs);
		pr_warn_ratelimited("node %u sent message type %u\n",
				    node->id, msg->op);
		return;
	}
	if (route->flags & SCIF_NODEMSG_NO_EPD) {
		route->handle(node, msg, NULL);
		return;
	}
	ep = scif_epd_lookup(msg->dst);
	if (!ep || READ_ONCE(ep->node) != node) {
		atomic_inc(&scif_info.dropped_msgs);
		if (scif_nodemsg_orphan_reply(msg, &reply))
			scif_node_reply(node, &reply);
	} else {
		route->handle(node, msg, ep);
	}
	if (ep)
		scif_epd_put(ep);
}
