// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: fences.  scif_fence_mark() names the RMAs initiated so far
 * through an endpoint (SCIF_FENCE_INIT_SELF) or through its peer
 * (SCIF_FENCE_INIT_PEER), scif_fence_wait() waits for them, and
 * scif_fence_signal() has values written to registered memory once they
 * completed.  See Documentation/scif/fences.rst.
 *
 * Everything rests on the copy engine's sequence numbers: the RMAs of an
 * endpoint complete in the order they were queued (struct scif_epd_rma),
 * so a mark is the number of the last one queued, a wait sleeps until
 * rma.done reaches it, and a signal is a descriptor queued behind them.
 *
 * A mark is an int: the low 31 bits of the sequence number, and bit 31
 * (SCIF_FENCE_PEER) for a mark of the peer's RMAs.  A wait takes the
 * most recent sequence number, at most the last one issued, that has
 * those low bits: it can only wait too long, and only if 2^31 RMAs were
 * issued between the mark and the wait.
 *
 * The peer's RMAs are marked, waited for and signalled by the peer: the
 * requester sends FENCE_MARK, FENCE_WAIT or FENCE_SIGNAL naming its
 * request, and sleeps until the FENCE_ACK naming it comes back or the
 * connection ends.  The peer answers a mark or a signal at once; a wait
 * whose number is not reached yet is parked on rma.waiters, and the
 * engine answers it when rma.done passes it.  Requests are checked as
 * hostile input: an answer names a request by id only, and a request
 * gets an error back, never a crash or an unbounded allocation.
 */
#include <linux/list.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "scif_endpt.h"
#include "scif_info.h"
#include "scif_nodes.h"
#include "scif_proto.h"
#include "scif_rma.h"
#include "scif_trace.h"
#include "scif_visibility.h"

/* Bit 31 of a mark: it names RMAs initiated by the peer. */
#define SCIF_FENCE_PEER		BIT(31)
#define SCIF_FENCE_SEQ_MASK	(SCIF_FENCE_PEER - 1)
/* The peer's waits parked on one endpoint, at most. */
#define SCIF_FENCE_MAX_WAITERS	256

#define SCIF_FENCE_INIT		(SCIF_FENCE_INIT_SELF | SCIF_FENCE_INIT_PEER)
#define SCIF_SIGNAL_BOTH	(SCIF_SIGNAL_LOCAL | SCIF_SIGNAL_REMOTE)

/**
 * struct scif_fence_req - a request to the peer, waiting for its answer
 * @link: in rma.fence_reqs
 * @id: the request's id (arg[0] of the request and of the answer)
 * @done: the answer came (set under rma.fence_lock)
 * @err: the answer's error, as a negative errno
 * @val: the answer's value (the mark, for FENCE_MARK)
 */
struct scif_fence_req {
	struct list_head link;
	u64 id;
	bool done;
	int err;
	u64 val;
};

/**
 * struct scif_fence_waiter - a wait of the peer parked on this endpoint
 * @link: in rma.waiters
 * @node: the peer's node
 * @src: the requesting endpoint's handle
 * @id: its request id
 * @seq: the sequence number to reach
 */
struct scif_fence_waiter {
	struct list_head link;
	struct scif_node *node;
	u64 src;
	u64 id;
	u64 seq;
};

/**
 * scif_fence_epd_init() - set up an endpoint's fence bookkeeping
 * @ep: the endpoint
 */
void scif_fence_epd_init(struct scif_endpt *ep)
{
	spin_lock_init(&ep->rma.fence_lock);
	INIT_LIST_HEAD(&ep->rma.fence_reqs);
}

/*
 * The sequence number a 31-bit mark stands for (see the notes); 0 (no
 * RMA) for a mark that no number issued so far can have given.
 */
SCIF_VISIBLE_IF_KUNIT
u64 scif_fence_seq(struct scif_endpt *ep, u32 mark)
{
	u64 issued = scif_rma_mark(ep);
	u64 back = (issued - mark) & SCIF_FENCE_SEQ_MASK;

	return back > issued ? 0 : issued - back;
}

SCIF_EXPORT_IF_KUNIT(scif_fence_seq);

static void scif_fence_ack_fill(struct scif_msg *reply, u64 dst, u64 src,
				u64 id, u64 val, int err)
{
	scif_nodemsg_init(reply, SCIF_MSG_FENCE_ACK, dst, src);
	reply->arg[0] = id;
	reply->arg[1] = val;
	reply->arg[2] = -err;
}

static void scif_fence_answer(struct scif_node *node,
			      const struct scif_fence_waiter *w, u64 src)
{
	struct scif_msg reply;

	scif_fence_ack_fill(&reply, w->src, src, w->id, 0, 0);
	scif_node_reply(node, &reply);
}

/*
 * Answers the peer's waits the engine reached on @ep, whose rma.done
 * advanced.  Context: whoever runs the engine's queue (its worker, or
 * the caller of a synchronous RMA); no lock held.
 */
static void scif_fence_engine_done(struct scif_endpt *ep)
{
	struct scif_fence_waiter *w, *tmp;
	LIST_HEAD(ready);

	spin_lock(&ep->rma.eng_lock);
	list_for_each_entry_safe(w, tmp, &ep->rma.waiters, link) {
		if (ep->rma.done >= w->seq) {
			list_move_tail(&w->link, &ready);
			ep->rma.nr_waiters--;
		}
	}
	spin_unlock(&ep->rma.eng_lock);
	list_for_each_entry_safe(w, tmp, &ready, link) {
		scif_fence_answer(w->node, w, ep->handle);
		kfree(w);
	}
}

/**
 * scif_fence_init() - hear of the copy engine's progress
 *
 * Subscribes scif_fence_engine_done() with scif_rma_on_engine_done().
 *
 * Context: process context, at module load, before any endpoint exists.
 */
void scif_fence_init(void)
{
	scif_rma_on_engine_done(scif_fence_engine_done);
}

/**
 * scif_fence_epd_teardown() - forget the peer's parked waits
 * @ep: the endpoint, no longer connected
 *
 * The peer's waiters wake on the end of the connection on their own.
 *
 * Context: process context.
 */
void scif_fence_epd_teardown(struct scif_endpt *ep)
{
	struct scif_fence_waiter *w, *tmp;
	LIST_HEAD(gone);

	spin_lock(&ep->rma.eng_lock);
	list_splice_init(&ep->rma.waiters, &gone);
	ep->rma.nr_waiters = 0;
	spin_unlock(&ep->rma.eng_lock);
	list_for_each_entry_safe(w, tmp, &gone, link)
		kfree(w);
}

/* Requests to the peer ---------------------------------------------- */

static bool scif_fence_answered(struct scif_endpt *ep,
				struct scif_fence_req *req)
{
	return READ_ONCE(req->done) || scif_window_conn_err(ep);
}

/*
 * Send @msg (op and arguments but arg[0] filled) to the peer and wait
 * for its answer: interruptibly with @intr, else killably.  The answer's
 * value goes to @val.
 */
static int scif_fence_ask(struct scif_endpt *ep, struct scif_msg *msg,
			  bool intr, u64 *val)
{
	struct scif_fence_req req = { 0 };
	long ret = 0;
	int err;

	spin_lock(&ep->rma.fence_lock);
	req.id = ++ep->rma.fence_next_id;
	list_add_tail(&req.link, &ep->rma.fence_reqs);
	spin_unlock(&ep->rma.fence_lock);

	msg->dst = READ_ONCE(ep->peer_handle);
	msg->src = ep->handle;
	msg->arg[0] = req.id;
	err = scif_node_send(ep->node, msg);
	if (!err && intr)
		ret = wait_event_interruptible(ep->wq,
					       scif_fence_answered(ep, &req));
	else if (!err)
		ret = wait_event_killable(ep->wq,
					  scif_fence_answered(ep, &req));

	spin_lock(&ep->rma.fence_lock);
	list_del(&req.link);
	spin_unlock(&ep->rma.fence_lock);

	if (req.done) {
		*val = req.val;
		return req.err;
	}
	if (err)	/* -ENODEV or -EINTR */
		return err;
	if (ret)
		return intr ? -ERESTARTSYS : -EINTR;
	/* The connection ended. */
	return scif_window_conn_err(ep) ?: -ECONNRESET;
}

/* What a peer may answer a fence request with (scif_node_errno()). */
static const int scif_fence_answers[] = {
	EINVAL, ENXIO, EACCES, ENOMEM, ECONNRESET, ENODEV, ENOTCONN, 0
};

static void scif_fence_handle_ack(const struct scif_msg *msg,
				  struct scif_endpt *ep)
{
	struct scif_fence_req *req;

	spin_lock(&ep->rma.fence_lock);
	list_for_each_entry(req, &ep->rma.fence_reqs, link) {
		if (req->id != msg->arg[0] || req->done)
			continue;
		req->val = msg->arg[1];
		req->err = scif_node_errno(msg->arg[2], true, scif_fence_answers);
		WRITE_ONCE(req->done, true);
		break;
	}
	spin_unlock(&ep->rma.fence_lock);
	wake_up_all(&ep->wq);
}

/* The peer's requests ----------------------------------------------- */

/* FENCE_WAIT: answered now, or parked for the engine to answer. */
static int scif_fence_handle_wait(struct scif_node *node,
				  const struct scif_msg *msg,
				  struct scif_endpt *ep)
{
	struct scif_fence_waiter *w;
	int err = 0;
	u64 seq;

	if (msg->arg[1] & ~(u64)SCIF_FENCE_SEQ_MASK)
		return -EINVAL;
	seq = scif_fence_seq(ep, msg->arg[1]);
	w = kmalloc(sizeof(*w), GFP_KERNEL);
	spin_lock(&ep->rma.eng_lock);
	if (ep->rma.done >= seq) {
		err = 0;
	} else if (!w || ep->rma.nr_waiters >= SCIF_FENCE_MAX_WAITERS) {
		err = -ENOMEM;
	} else {
		w->node = node;
		w->src = msg->src;
		w->id = msg->arg[0];
		w->seq = seq;
		list_add_tail(&w->link, &ep->rma.waiters);
		ep->rma.nr_waiters++;
		w = NULL;
		err = 1;	/* parked: the engine answers */
	}
	spin_unlock(&ep->rma.eng_lock);
	kfree(w);
	return err;
}

/* Whether @off is a usable signal offset of the peer's request. */
SCIF_VISIBLE_IF_KUNIT
int scif_fence_off_check(u64 off)
{
	if (off == SCIF_FENCE_NO_OFF)
		return 0;
	if (!IS_ALIGNED(off, sizeof(u32)))
		return -EINVAL;
	if (off > S64_MAX - sizeof(u64) + 1)
		return -ENXIO;
	return 0;
}

SCIF_EXPORT_IF_KUNIT(scif_fence_off_check);

/*
 * Queue the signal descriptors for @off[i] (in this endpoint's own
 * registered address space for i == 0, in its peer's for i == 1),
 * checked first, both built before either is queued.
 */
static int scif_fence_queue_signals(struct scif_endpt *ep, const u64 *off,
				    const u64 *val, bool wait)
{
	struct scif_rma_desc *d[2] = { NULL, NULL };
	int err = 0, i;

	for (i = 0; i < 2 && !err; i++) {
		if (off[i] != SCIF_FENCE_NO_OFF)
			d[i] = scif_rma_signal_build(ep, off[i], val[i], i == 1,
						     &err);
	}
	for (i = 0; i < 2; i++) {
		if (err || !d[i]) {
			scif_rma_signal_free(d[i]);
			continue;
		}
		err = scif_rma_signal_queue(ep, d[i], wait);
	}
	return err;
}

static int scif_fence_handle_signal(const struct scif_msg *msg,
				    struct scif_endpt *ep)
{
	u64 off[2] = { msg->arg[1], msg->arg[3] };
	u64 val[2] = { msg->arg[2], msg->arg[4] };
	int err;

	if (off[0] == SCIF_FENCE_NO_OFF && off[1] == SCIF_FENCE_NO_OFF)
		return -EINVAL;
	err = scif_fence_off_check(off[0]) ?: scif_fence_off_check(off[1]);
	if (err)
		return err;
	return scif_fence_queue_signals(ep, off, val, false);
}

/**
 * scif_fence_handle_msg() - handle a fence message for an endpoint
 * @node: the node it came from
 * @msg: FENCE_MARK, FENCE_WAIT, FENCE_SIGNAL or FENCE_ACK
 * @ep: the endpoint it names, whose peer is on @node
 *
 * Context: the node's rx_work: waits for nothing remote; answers are
 * queued with scif_node_reply().
 */
void scif_fence_handle_msg(struct scif_node *node, const struct scif_msg *msg,
			   struct scif_endpt *ep)
{
	struct scif_msg reply;
	u64 val = 0;
	int err;

	if (msg->src != READ_ONCE(ep->peer_handle)) {
		atomic_inc(&scif_info.dropped_msgs);
		return;
	}
	if (msg->op == SCIF_MSG_FENCE_ACK) {
		scif_fence_handle_ack(msg, ep);
		return;
	}
	/* Closing or closed: the requester's connection is reset. */
	err = scif_window_conn_err(ep) ? -ECONNRESET : 0;
	if (err)
		goto answer;
	switch (msg->op) {
	case SCIF_MSG_FENCE_MARK:
		val = scif_rma_mark(ep) & SCIF_FENCE_SEQ_MASK;
		break;
	case SCIF_MSG_FENCE_WAIT:
		err = scif_fence_handle_wait(node, msg, ep);
		if (err > 0)
			return;
		break;
	default:
		err = scif_fence_handle_signal(msg, ep);
		break;
	}
answer:
	scif_fence_ack_fill(&reply, msg->src, ep->handle, msg->arg[0], val,
			    err);
	scif_node_reply(node, &reply);
}

/* The calls --------------------------------------------------------- */

static int scif_epd_do_fence_mark(struct scif_endpt *ep, int flags, int *mark);

/**
 * scif_epd_fence_mark() - implement scif_fence_mark()
 * @ep: the endpoint
 * @flags: SCIF_FENCE_INIT_SELF or SCIF_FENCE_INIT_PEER
 * @mark: receives the mark
 *
 * Context: process context; with SCIF_FENCE_INIT_PEER sleeps (killably)
 * until the peer answers.
 * Return: 0, -EINVAL (@flags), -ENOTCONN, -ECONNRESET, -ENODEV or -EINTR.
 */
int scif_epd_fence_mark(struct scif_endpt *ep, int flags, int *mark)
{
	int err = scif_epd_do_fence_mark(ep, flags, mark);

	trace_scif_fence(ep->handle, "mark", err ? 0 : (u32)*mark, flags, err);
	return err;
}

/* The same, without its tracepoint. */
static int scif_epd_do_fence_mark(struct scif_endpt *ep, int flags, int *mark)
{
	struct scif_msg msg = { .op = SCIF_MSG_FENCE_MARK };
	u64 val;
	int err;

	if (flags != SCIF_FENCE_INIT_SELF && flags != SCIF_FENCE_INIT_PEER)
		return -EINVAL;
	err = scif_window_conn_err(ep);
	if (err)
		return err;
	if (flags == SCIF_FENCE_INIT_SELF) {
		*mark = scif_rma_mark(ep) & SCIF_FENCE_SEQ_MASK;
		return 0;
	}
	err = scif_fence_ask(ep, &msg, false, &val);
	if (err)
		return err;
	*mark = (int)((val & SCIF_FENCE_SEQ_MASK) | SCIF_FENCE_PEER);
	return 0;
}

static int scif_epd_do_fence_wait(struct scif_endpt *ep, int mark);

/**
 * scif_epd_fence_wait() - implement scif_fence_wait()
 * @ep: the endpoint
 * @mark: a mark from scif_epd_fence_mark() on @ep
 *
 * Context: process context; sleeps, interruptibly.
 * Return: 0, -ENOMEM (the peer could not park the wait), -ENOTCONN,
 * -ECONNRESET, -ENODEV (the peer went away, before or while waiting) or
 * -ERESTARTSYS (signal).
 */
int scif_epd_fence_wait(struct scif_endpt *ep, int mark)
{
	int err = scif_epd_do_fence_wait(ep, mark);

	trace_scif_fence(ep->handle, "wait", (u32)mark, 0, err);
	return err;
}

/* The same, without its tracepoint. */
static int scif_epd_do_fence_wait(struct scif_endpt *ep, int mark)
{
	struct scif_msg msg = { .op = SCIF_MSG_FENCE_WAIT };
	u32 m = (u32)mark;
	u64 val;
	int err;

	err = scif_window_conn_err(ep);
	if (err)
		return err;
	if (!(m & SCIF_FENCE_PEER))
		return scif_rma_wait(ep, scif_fence_seq(ep, m), true);
	msg.arg[1] = m & SCIF_FENCE_SEQ_MASK;
	return scif_fence_ask(ep, &msg, true, &val);
}

/* Check a signal offset given by the caller. */
SCIF_VISIBLE_IF_KUNIT
int scif_fence_sig_off(s64 off)
{
	if (!IS_ALIGNED(off, sizeof(u32)))
		return -EINVAL;
	if (off < 0 || off > S64_MAX - (s64)sizeof(u64) + 1)
		return -ENXIO;
	return 0;
}

SCIF_EXPORT_IF_KUNIT(scif_fence_sig_off);

static int scif_epd_do_fence_signal(struct scif_endpt *ep, s64 loff,
				    u64 lval, s64 roff, u64 rval, int flags);

/**
 * scif_epd_fence_signal() - implement scif_fence_signal()
 * @ep: the endpoint
 * @loff: offset in @ep's registered address space (SCIF_SIGNAL_LOCAL)
 * @lval: the value written there
 * @roff: offset in the peer's registered address space
 *	(SCIF_SIGNAL_REMOTE)
 * @rval: the value written there
 * @flags: exactly one of SCIF_FENCE_INIT_SELF and SCIF_FENCE_INIT_PEER,
 *	one or both of SCIF_SIGNAL_LOCAL and SCIF_SIGNAL_REMOTE
 *
 * The values are written, 8 bytes each, by the copy engine of the side
 * that initiated the marked RMAs, right after them.  Each offset used
 * must be 4-byte aligned and its 8 bytes inside windows that allow
 * writing.
 *
 * Context: process context; may sleep (killably) for room in the copy
 * engine's queue, or with SCIF_FENCE_INIT_PEER until the peer answered.
 * Return: 0, -EINVAL (@flags, alignment), -ENXIO (an offset not inside
 * windows), -EACCES (a window does not allow writing), -ENOMEM,
 * -ENOTCONN, -ECONNRESET, -ENODEV or -EINTR.
 */
int scif_epd_fence_signal(struct scif_endpt *ep, s64 loff, u64 lval,
			  s64 roff, u64 rval, int flags)
{
	int err = scif_epd_do_fence_signal(ep, loff, lval, roff, rval, flags);

	trace_scif_fence(ep->handle, "signal",
			 flags & SCIF_SIGNAL_LOCAL ? lval : rval, flags, err);
	return err;
}

/* The same, without its tracepoint. */
static int scif_epd_do_fence_signal(struct scif_endpt *ep, s64 loff,
				    u64 lval, s64 roff, u64 rval, int flags)
{
	struct scif_msg msg = { .op = SCIF_MSG_FENCE_SIGNAL };
	int init = flags & SCIF_FENCE_INIT;
	u64 off[2], val[2], ignored;
	int err;

	if ((flags & ~(SCIF_FENCE_INIT | SCIF_SIGNAL_BOTH)) ||
	    (init != SCIF_FENCE_INIT_SELF && init != SCIF_FENCE_INIT_PEER) ||
	    !(flags & SCIF_SIGNAL_BOTH))
		return -EINVAL;
	err = (flags & SCIF_SIGNAL_LOCAL) ? scif_fence_sig_off(loff) : 0;
	if (!err && (flags & SCIF_SIGNAL_REMOTE))
		err = scif_fence_sig_off(roff);
	if (!err)
		err = scif_window_conn_err(ep);
	if (err)
		return err;
	off[0] = (flags & SCIF_SIGNAL_LOCAL) ? (u64)loff : SCIF_FENCE_NO_OFF;
	off[1] = (flags & SCIF_SIGNAL_REMOTE) ? (u64)roff : SCIF_FENCE_NO_OFF;
	val[0] = lval;
	val[1] = rval;
	if (init == SCIF_FENCE_INIT_SELF)
		return scif_fence_queue_signals(ep, off, val, true);
	/* The peer's own space is our remote one, and the other way round. */
	msg.arg[1] = off[1];
	msg.arg[2] = val[1];
	msg.arg[3] = off[0];
	msg.arg[4] = val[0];
	return scif_fence_ask(ep, &msg, false, &ignored);
}
