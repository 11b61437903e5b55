// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: messaging on connected endpoints, and their poll state.
 *
 * send copies into the peer's receive ring, recv copies out of the local
 * ring; each publishes its count and sends DATA or SPACE only when the
 * peer has asked for it before going to sleep (see struct scif_qp_shm).
 * Blocking calls watch the ring for busy_poll_us, then sleep on the
 * endpoint's wait queue without holding the data mutexes, so a
 * disconnect can always proceed.
 */
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/poll.h>
#include <linux/uio.h>

#include "scif_conn.h"
#include "scif_epd.h"
#include "scif_fault.h"
#include "scif_fp.h"
#include "scif_info.h"
#include "scif_msg.h"
#include "scif_nodes.h"
#include "scif_proto.h"
#include "scif_rb.h"
#include "scif_trace.h"

/*
 * The most one round of send or recv moves: a quarter of the ring, so
 * that the reader copies out one piece while the writer copies in the
 * next instead of each waiting for the other's whole ring.
 */
#define SCIF_XFER_PIECE(ring_size)	((ring_size) / 4)

static void scif_msg_notify(struct scif_endpt *ep, u32 op)
{
	struct scif_msg msg;

	scif_nodemsg_init(&msg, op, ep->peer_handle, ep->handle);
	/* A lost node is seen by the endpoint's state, not here. */
	scif_node_send(ep->node, &msg);
}

/*
 * Ask the peer for a DATA (@data) or SPACE message when it next moves
 * data (see struct scif_qp_shm), before looking at the ring once more.
 */
static void scif_msg_want(struct scif_endpt *ep, bool data)
{
	spin_lock(&ep->lock);
	if (ep->rb.remote) {
		if (data)
			WRITE_ONCE(ep->rb.remote->tx_wanted, 1);
		else
			WRITE_ONCE(ep->rb.remote->rx_waiting, 1);
	}
	spin_unlock(&ep->lock);
	mb();	/* the flag, then the ring counts */
}

/**
 * scif_msg_handle_notify() - a DATA or SPACE message came: wake the waiters
 * @node: the node it came from
 * @msg: DATA or SPACE
 * @ep: the endpoint it is for
 *
 * The flag that asked for it is cleared first; waiters that go back to
 * sleep set it again.
 *
 * Context: process context (the node's message worker).
 */
void scif_msg_handle_notify(struct scif_node *node, const struct scif_msg *msg,
			    struct scif_endpt *ep)
{
	bool data = msg->op == SCIF_MSG_DATA;

	spin_lock(&ep->lock);
	if (ep->rb.remote) {
		if (data)
			WRITE_ONCE(ep->rb.remote->tx_wanted, 0);
		else
			WRITE_ONCE(ep->rb.remote->rx_waiting, 0);
	}
	spin_unlock(&ep->lock);
	mb();	/* cleared before any waiter looks again */
	wake_up_all(&ep->wq);
}

static int scif_msg_tx_state(struct scif_endpt *ep)
{
	switch (READ_ONCE(ep->state)) {
	case SCIF_EPD_CONNECTED:
		return 0;
	case SCIF_EPD_DISCONNECTED:
		return -ECONNRESET;
	default:
		return -ENOTCONN;
	}
}

/*
 * The endpoint's counts: once it has a user-space data path, those of its
 * counter page (scif_fp.c), which a round loads into ep->rb under the
 * data mutex and stores back.  Read without the mutex, for a hint only.
 */
static u32 scif_msg_tx_write(struct scif_endpt *ep)
{
	struct scif_fp_ctl *ctl = scif_fp_ctl(ep);

	return ctl ? READ_ONCE(ctl->tx_write) : ep->rb.tx_write;
}

static u32 scif_msg_rx_read(struct scif_endpt *ep)
{
	struct scif_fp_ctl *ctl = scif_fp_ctl(ep);

	return ctl ? READ_ONCE(ctl->rx_read) : ep->rb.rx_read;
}

static bool scif_msg_send_ready(struct scif_endpt *ep)
{
	u32 tx_write = scif_msg_tx_write(ep);

	return READ_ONCE(ep->state) != SCIF_EPD_CONNECTED ||
	       scif_rb_tx_room_at(&ep->rb, tx_write) ||
	       scif_rb_tx_broken_at(&ep->rb, tx_write);
}

/* scif_msg_send_ready() for a sender about to sleep: asks for SPACE first. */
static bool scif_msg_send_ready_or_ask(struct scif_endpt *ep)
{
	scif_msg_want(ep, false);
	return scif_msg_send_ready(ep);
}

/*
 * Take a side of the user-space data path for a round, if the endpoint
 * has one: its lock word, then its count into ep->rb (*@count), and what
 * user space counted.  Under the side's data mutex.  Returns the counter
 * page, NULL without one, or ERR_PTR(-EBUSY) while user space holds it.
 */
static struct scif_fp_ctl *scif_msg_fp_take(struct scif_endpt *ep, bool tx,
					    u32 *count)
{
	struct scif_fp_ctl *ctl = scif_fp_ctl(ep);

	if (!ctl)
		return NULL;
	if (!scif_fp_trylock(tx ? &ctl->tx_lock : &ctl->rx_lock))
		return ERR_PTR(-EBUSY);
	*count = tx ? READ_ONCE(ctl->tx_write) : READ_ONCE(ctl->rx_read);
	scif_fp_fold(ep, tx);
	return ctl;
}

/* Undo scif_msg_fp_take(), storing the count back. */
static void scif_msg_fp_give(struct scif_fp_ctl *ctl, bool tx, u32 count)
{
	if (!ctl)
		return;
	if (tx) {
		WRITE_ONCE(ctl->tx_write, count);
		scif_fp_unlock(&ctl->tx_lock);
	} else {
		WRITE_ONCE(ctl->rx_read, count);
		scif_fp_unlock(&ctl->rx_lock);
	}
}

/*
 * One round of sending: what fits now.  Returns bytes sent or -errno
 * (-EBUSY: user space holds the data path, try again).  The call is
 * counted as a message in its first round that moves data (*@counted
 * false until then).
 */
static ssize_t scif_msg_send_some(struct scif_endpt *ep, struct iov_iter *from,
				  bool *counted)
{
	size_t count, want = 0, sent = 0;
	struct scif_fp_ctl *ctl;
	bool broken = false;
	int err;

	mutex_lock(&ep->send_mutex);
	ctl = scif_msg_fp_take(ep, true, &ep->rb.tx_write);
	if (IS_ERR(ctl)) {
		mutex_unlock(&ep->send_mutex);
		return PTR_ERR(ctl);
	}
	err = scif_msg_tx_state(ep);
	if (err)
		goto out;
	if (scif_rb_tx_broken(&ep->rb)) {
		broken = true;
		goto out;
	}
	count = iov_iter_count(from);
	iov_iter_truncate(from, SCIF_XFER_PIECE(ep->rb.tx_size));
	/* One look at the peer's count: short only if @from faulted. */
	want = min_t(size_t, scif_rb_tx_room(&ep->rb), iov_iter_count(from));
	scif_node_test_delay(SCIF_DELAY_MSG_COUNT);
	sent = scif_rb_put_n(&ep->rb, from, want);
	iov_iter_reexpand(from, count - sent);
	if (sent) {
		ep->stats.tx_bytes += sent;
		ep->stats.tx_msgs += !*counted;
		scif_node_count_tx(ep->node, sent, !*counted);
		*counted = true;
	}
out:
	scif_msg_fp_give(ctl, true, ep->rb.tx_write);
	mutex_unlock(&ep->send_mutex);
	if (broken) {
		scif_conn_ring_broken(ep);
		return -ECONNRESET;
	}
	if (err)
		return err;

	/* The count is out; does the peer wait for it (see scif_proto.h)? */
	mb();
	if (sent && READ_ONCE(ep->rb.local->tx_wanted))
		scif_msg_notify(ep, SCIF_MSG_DATA);
	return sent < want && !sent ? -EFAULT : sent;
}

static bool scif_msg_recv_ready(struct scif_endpt *ep)
{
	u32 avail = 0;

	return READ_ONCE(ep->state) != SCIF_EPD_CONNECTED ||
	       scif_rb_rx_avail_at(&ep->rb, scif_msg_rx_read(ep), &avail) ||
	       avail;
}

/* scif_msg_recv_ready() for a receiver about to sleep: asks for DATA first. */
static bool scif_msg_recv_ready_or_ask(struct scif_endpt *ep)
{
	scif_msg_want(ep, true);
	return scif_msg_recv_ready(ep);
}

/* One round of receiving: what is there now.  Bytes or -errno.  Counted
 * as scif_msg_send_some() counts.
 */
static ssize_t scif_msg_recv_some(struct scif_endpt *ep, struct iov_iter *to,
				  bool *counted)
{
	enum scif_epd_state state;
	size_t count, want = 0, got = 0;
	struct scif_fp_ctl *ctl;
	u32 avail = 0;
	int err = 0;

	mutex_lock(&ep->recv_mutex);
	ctl = scif_msg_fp_take(ep, false, &ep->rb.rx_read);
	if (IS_ERR(ctl)) {
		mutex_unlock(&ep->recv_mutex);
		return PTR_ERR(ctl);
	}
	state = READ_ONCE(ep->state);
	if (state != SCIF_EPD_CONNECTED && state != SCIF_EPD_DISCONNECTED) {
		err = -ENOTCONN;
		goto out;
	}
	if (scif_rb_rx_avail(&ep->rb, &avail)) {
		err = -EPROTO;	/* the peer broke the ring */
		goto out;
	}
	count = iov_iter_count(to);
	iov_iter_truncate(to, SCIF_XFER_PIECE(ep->rb.rx_size));
	/* One look at the peer's count: short only if @to faulted. */
	want = min_t(size_t, avail, iov_iter_count(to));
	scif_node_test_delay(SCIF_DELAY_MSG_COUNT);
	got = scif_rb_get_n(&ep->rb, to, want);
	iov_iter_reexpand(to, count - got);
	if (got) {
		ep->stats.rx_bytes += got;
		ep->stats.rx_msgs += !*counted;
		scif_node_count_rx(ep->node, got, !*counted);
		*counted = true;
	}
out:
	scif_msg_fp_give(ctl, false, ep->rb.rx_read);
	mutex_unlock(&ep->recv_mutex);
	if (err == -EPROTO) {
		scif_conn_ring_broken(ep);
		return -ECONNRESET;
	}
	if (err)
		return err;

	if (!avail && state == SCIF_EPD_DISCONNECTED)
		return -ECONNRESET;
	/* The count is out; does the peer wait for room (scif_proto.h)? */
	mb();
	if (got && state == SCIF_EPD_CONNECTED &&
	    READ_ONCE(ep->rb.local->rx_waiting))
		scif_msg_notify(ep, SCIF_MSG_SPACE);
	return got < want && !got ? -EFAULT : got;
}

/*
 * Before sleeping, watch for @ready for up to busy_poll_us: the peer
 * writes its ring counts straight into our memory, so a reply that comes
 * soon is seen without waiting for its doorbell, the interrupt, the node
 * message worker and a wake-up.  Gives the CPU up at once to anything
 * else that wants it, and to signals.
 */
static bool scif_msg_busy_poll(struct scif_endpt *ep,
			       bool (*ready)(struct scif_endpt *))
{
	unsigned int us = READ_ONCE(scif_busy_poll_us);
	u64 end;

	if (!us)
		return false;
	end = ktime_get_ns() + (u64)us * NSEC_PER_USEC;
	do {
		if (ready(ep))
			return true;
		if (need_resched() || signal_pending(current))
			return false;
		cpu_relax();
	} while (ktime_get_ns() < end);
	return false;
}

/*
 * Move data in rounds until @iter is done or, without @block, until a
 * round moves nothing; sleep between rounds that moved nothing.  One loop
 * for send and recv: @round moves what it can now, @ready says when to
 * look again, @ready_or_ask is @ready for a caller about to sleep.
 */
static int scif_msg_xfer(struct scif_endpt *ep, struct iov_iter *iter,
			 bool block,
			 ssize_t (*round)(struct scif_endpt *, struct iov_iter *,
					  bool *),
			 bool (*ready)(struct scif_endpt *),
			 bool (*ready_or_ask)(struct scif_endpt *))
{
	bool counted = false;
	size_t total = 0;
	ssize_t n;

	for (;;) {
		n = round(ep, iter, &counted);
		if (n == -EBUSY) {
			/* User space holds the data path: a moment, then again. */
			n = 0;
			if (!block)
				break;
			if (signal_pending(current)) {
				n = -ERESTARTSYS;
				break;
			}
			schedule_timeout_interruptible(1);
			continue;
		}
		if (n < 0)
			break;
		total += n;
		/* Without @block: every round that moves something. */
		if (!iov_iter_count(iter) || (!block && !n))
			break;
		if (!n && !scif_msg_busy_poll(ep, ready) &&
		    wait_event_interruptible(ep->wq, ready_or_ask(ep))) {
			n = -ERESTARTSYS;	/* EINTR, or restarted if it may be */
			break;
		}
	}
	if (!total && n < 0 && n != -ERESTARTSYS)
		scif_epd_count_error(ep);
	return total ? total : min_t(ssize_t, n, 0);
}

/**
 * scif_epd_send() - send on a connected endpoint
 * @ep: the endpoint
 * @from: the data
 * @flags: 0, or SCIF_SEND_BLOCK to send all of @from
 *
 * Return: bytes sent (0 if there was no room and @flags says not to
 * wait), or -EINVAL, -ENOTCONN, -ECONNRESET, -EFAULT or -ERESTARTSYS
 * (a signal) when nothing was sent.
 */
int scif_epd_send(struct scif_endpt *ep, struct iov_iter *from, int flags)
{
	size_t len = iov_iter_count(from);
	int ret = -EINVAL;

	if (!(flags & ~SCIF_SEND_BLOCK))
		ret = scif_msg_xfer(ep, from, flags & SCIF_SEND_BLOCK,
				    scif_msg_send_some, scif_msg_send_ready,
				    scif_msg_send_ready_or_ask);
	trace_scif_send(ep->handle, len, flags, ret);
	return ret;
}

/**
 * scif_epd_recv() - receive on a connected endpoint
 * @ep: the endpoint
 * @to: where the data goes
 * @flags: 0, or SCIF_RECV_BLOCK to fill all of @to
 *
 * Data that arrived before the peer closed stays receivable.
 *
 * Return: bytes received (0 if none was waiting and @flags says not to
 * wait), or -EINVAL, -ENOTCONN, -ECONNRESET, -EFAULT or -ERESTARTSYS
 * (a signal) when nothing was received.
 */
int scif_epd_recv(struct scif_endpt *ep, struct iov_iter *to, int flags)
{
	size_t len = iov_iter_count(to);
	int ret = -EINVAL;

	if (!(flags & ~SCIF_RECV_BLOCK))
		ret = scif_msg_xfer(ep, to, flags & SCIF_RECV_BLOCK,
				    scif_msg_recv_some, scif_msg_recv_ready,
				    scif_msg_recv_ready_or_ask);
	trace_scif_recv(ep->handle, len, flags, ret);
	return ret;
}

/**
 * scif_msg_poll_mask() - the poll events an endpoint has now
 * @ep: the endpoint
 *
 * Return: EPOLLIN for data or a waiting connection request, EPOLLOUT
 * for room to send, EPOLLHUP | EPOLLERR once the connection is reset,
 * EPOLLERR for a failed non-blocking connect.
 */
__poll_t scif_msg_poll_mask(struct scif_endpt *ep)
{
	__poll_t mask = 0;
	u32 avail = 0;

	spin_lock(&ep->lock);
	switch (ep->state) {
	case SCIF_EPD_LISTENING:
		if (ep->nr_conreqs)
			mask |= EPOLLIN | EPOLLRDNORM;
		break;
	case SCIF_EPD_CONNECTED:
	case SCIF_EPD_DISCONNECTED:
		/* A poller may sleep next: ask for both messages. */
		if (ep->rb.remote) {
			WRITE_ONCE(ep->rb.remote->tx_wanted, 1);
			WRITE_ONCE(ep->rb.remote->rx_waiting, 1);
			mb();	/* the flags, then the ring counts */
		}
		if (scif_rb_rx_avail_at(&ep->rb, scif_msg_rx_read(ep), &avail) ||
		    avail)
			mask |= EPOLLIN | EPOLLRDNORM;
		if (ep->state == SCIF_EPD_DISCONNECTED)
			mask |= EPOLLHUP | EPOLLERR;
		else if (scif_rb_tx_room_at(&ep->rb, scif_msg_tx_write(ep)))
			mask |= EPOLLOUT | EPOLLWRNORM;
		break;
	case SCIF_EPD_BOUND:
		if (ep->conn_async && ep->conn_err)
			mask |= EPOLLERR;
		break;
	default:
		break;
	}
	spin_unlock(&ep->lock);
	return mask;
}

/**
 * scif_epd_fp_notify() - SCIF_FP_NOTIFY: user space moved data the peer
 *	waits for
 * @ep: the endpoint
 * @what: SCIF_FP_NOTIFY_DATA after sending, SCIF_FP_NOTIFY_SPACE after
 *	receiving
 *
 * The message goes only if the peer asked for it (its flag in our half),
 * as after a round of the kernel's own.  What user space counted is
 * added to the endpoint's counters.
 *
 * Context: process context; takes the side's data mutex.
 * Return: 0; -EINVAL for @what; -ENOTCONN or -ECONNRESET if the
 * endpoint is not connected.
 */
int scif_epd_fp_notify(struct scif_endpt *ep, int what)
{
	bool data = what == SCIF_FP_NOTIFY_DATA;
	struct mutex *m = data ? &ep->send_mutex : &ep->recv_mutex;
	int err;

	if (what != SCIF_FP_NOTIFY_DATA && what != SCIF_FP_NOTIFY_SPACE)
		return -EINVAL;
	mutex_lock(m);
	scif_fp_fold(ep, data);
	err = scif_msg_tx_state(ep);
	mutex_unlock(m);
	if (err)
		return err;
	/* User space published its count before this call. */
	mb();
	if (data ? READ_ONCE(ep->rb.local->tx_wanted) :
		   READ_ONCE(ep->rb.local->rx_waiting))
		scif_msg_notify(ep, data ? SCIF_MSG_DATA : SCIF_MSG_SPACE);
	return 0;
}
