// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: connections.  Bind, listen, connect, accept and close, and
 * the node messages that carry them between nodes:
 *
 *   connector                         listener's node
 *   CONNECT(src, port, area) ------->  queued at the listener, or REJECT
 *                            <-------  ACCEPT(src, area) when accepted
 *   either side: DISCONNECT -------->  peer stops touching our memory,
 *                            <-------  DISC_ACK; then our area is freed
 */
#define pr_fmt(fmt) "scif: " fmt

#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/pid.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "scif_conn.h"
#include "scif_epd.h"
#include "scif_fault.h"
#include "scif_fp.h"
#include "scif_info.h"
#include "scif_nodes.h"
#include "scif_proto.h"
#include "scif_rb.h"
#include "scif_rma.h"
#include "scif_trace.h"

static bool scif_conn_ring_size_ok(u64 size)
{
	return size >= SCIF_RING_MIN && size <= SCIF_RING_MAX &&
	       is_power_of_2(size);
}

/* Drop the protocol's reference if it still holds one. */
static void scif_conn_drop_proto_ref(struct scif_endpt *ep)
{
	bool drop;

	spin_lock(&ep->lock);
	drop = ep->proto_ref;
	ep->proto_ref = false;
	spin_unlock(&ep->lock);
	if (drop)
		scif_epd_put(ep);
}

static void scif_conn_set_bound(struct scif_endpt *ep, u16 port)
{
	spin_lock(&ep->lock);
	ep->port = port;
	ep->state = SCIF_EPD_BOUND;
	spin_unlock(&ep->lock);
}

/**
 * scif_epd_bind() - bind an endpoint to a port
 * @ep: the endpoint
 * @port: the port, or 0 for one at or above SCIF_PORT_RSVD; privilege
 *	for ports below SCIF_ADMIN_PORT_END is the caller's to check
 *
 * Return: the port, -EINVAL if @ep or @port is bound already, -EISCONN
 * if @ep is connected, or -ENOSPC if no port is free.
 */
int scif_epd_bind(struct scif_endpt *ep, u16 port)
{
	int err;

	mutex_lock(&ep->ctl_mutex);
	switch (READ_ONCE(ep->state)) {
	case SCIF_EPD_UNBOUND:
		err = port ? scif_port_claim(port) : scif_port_alloc(&port);
		break;
	case SCIF_EPD_CONNECTING:
	case SCIF_EPD_CONNECTED:
	case SCIF_EPD_DISCONNECTED:
		err = -EISCONN;
		break;
	default:
		err = -EINVAL;
		break;
	}
	if (!err)
		scif_conn_set_bound(ep, port);
	mutex_unlock(&ep->ctl_mutex);
	return err ?: port;
}

/**
 * scif_epd_listen() - make a bound endpoint accept connection requests
 * @ep: the endpoint
 * @backlog: most requests that may wait to be accepted
 *
 * At most max_backlog requests wait, whatever @backlog says.
 *
 * Return: 0, -EINVAL if @ep is not bound or @backlog is negative, or
 * -EISCONN if @ep is listening or connected already.
 */
int scif_epd_listen(struct scif_endpt *ep, int backlog)
{
	int err = 0;

	if (backlog < 0)
		return -EINVAL;
	mutex_lock(&ep->ctl_mutex);
	switch (READ_ONCE(ep->state)) {
	case SCIF_EPD_BOUND:
		break;
	case SCIF_EPD_UNBOUND:
		err = -EINVAL;
		goto out;
	default:
		err = -EISCONN;
		goto out;
	}
	mutex_lock(&scif_info.port_lock);
	err = scif_fail_alloc() ? -ENOMEM :
	      xa_insert(&scif_info.listeners, ep->port, ep, GFP_KERNEL);
	mutex_unlock(&scif_info.port_lock);
	if (err)
		goto out;
	spin_lock(&ep->lock);
	/* Like somaxconn: a larger backlog is quietly reduced. */
	ep->backlog = min_t(unsigned int, backlog, READ_ONCE(scif_max_backlog));
	ep->state = SCIF_EPD_LISTENING;
	spin_unlock(&ep->lock);
out:
	mutex_unlock(&ep->ctl_mutex);
	return err;
}

/* The outcome of a connect that finished without its caller waiting. */
static int scif_connect_report(struct scif_endpt *ep)
{
	int err;

	spin_lock(&ep->lock);
	ep->conn_async = false;
	ep->conn_intr = false;
	err = ep->conn_err;
	ep->conn_err = 0;
	spin_unlock(&ep->lock);
	return err ?: ep->port;
}

/* Whether a connect may start; > 0 means report an earlier outcome. */
static int scif_connect_check(struct scif_endpt *ep)
{
	switch (READ_ONCE(ep->state)) {
	case SCIF_EPD_UNBOUND:
		return 0;
	case SCIF_EPD_BOUND:
		return READ_ONCE(ep->conn_async) ? 1 : 0;
	case SCIF_EPD_LISTENING:
		return -EOPNOTSUPP;
	case SCIF_EPD_CONNECTING:
		return -EALREADY;
	default:
		return READ_ONCE(ep->conn_async) ? 1 : -EISCONN;
	}
}

/*
 * Allocate (or reuse, after a refusal) the endpoint's receive area for a
 * connection with @node; a user's is charged to its memory cgroup.
 */
static int scif_conn_prepare_area(struct scif_endpt *ep,
				  struct scif_node *node)
{
	int err;

	lockdep_assert_held(&ep->ctl_mutex);
	err = scif_node_area_get(node, &ep->rb, READ_ONCE(scif_msg_ring_size),
				 ep->user ? GFP_KERNEL_ACCOUNT : GFP_KERNEL);
	if (err)
		return err;
	ep->rb.rx_read = 0;
	ep->rb.tx_write = 0;
	scif_rb_set_skew(&ep->rb, 0);
	return 0;
}

static int scif_connect_start(struct scif_endpt *ep, struct scif_port_id *dst,
			      bool nonblock)
{
	struct scif_node *node;
	struct scif_msg msg;
	u16 port;
	u64 addr;
	int err;

	lockdep_assert_held(&ep->ctl_mutex);
	node = scif_node_get_online(dst->node);
	if (!node)
		return -ENODEV;
	if (READ_ONCE(ep->state) == SCIF_EPD_UNBOUND) {
		err = scif_port_alloc(&port);
		if (err)
			return err;
		scif_conn_set_bound(ep, port);
	}
	err = scif_conn_prepare_area(ep, node);
	if (err)
		return err;
	scif_node_test_delay(SCIF_DELAY_CONNECT);
	/* Mapped until the endpoint goes, or connects again. */
	err = scif_node_map_area(node, &ep->rb, &addr);
	if (err)
		return err;

	spin_lock(&ep->lock);
	ep->node = node;
	ep->peer = *dst;
	ep->peer_handle = 0;
	ep->conn_err = 0;
	ep->conn_async = nonblock;
	ep->conn_intr = false;
	ep->state = SCIF_EPD_CONNECTING;
	spin_unlock(&ep->lock);

	scif_nodemsg_init(&msg, SCIF_MSG_CONNECT, 0, ep->handle);
	msg.arg[0] = dst->port;
	msg.arg[1] = ep->port;
	msg.arg[2] = addr;
	msg.arg[3] = ep->rb.rx_size;
	err = scif_node_send(node, &msg);
	if (err) {
		spin_lock(&ep->lock);
		ep->state = SCIF_EPD_BOUND;
		ep->conn_async = false;
		spin_unlock(&ep->lock);
	}
	return err;
}

static int scif_epd_do_connect(struct scif_endpt *ep,
			       struct scif_port_id *dst, bool nonblock);

/**
 * scif_epd_connect() - connect an endpoint to a listening port
 * @ep: the endpoint; bound to a free port first if it is not bound
 * @dst: the node and port to connect to
 * @nonblock: return -EINPROGRESS at once and let the connection complete
 *	in the background; a later call reports the outcome
 *
 * A blocking connect interrupted by a signal goes on in the background;
 * if the call is restarted (the signal was ignored, or its handler asked
 * for it) it waits again for the same connection.
 *
 * Return: the local port once connected, or -EINVAL, -ENODEV,
 * -ECONNREFUSED, -EISCONN, -EALREADY, -EOPNOTSUPP, -ENOSPC, -ENOMEM,
 * -EINPROGRESS or -ERESTARTSYS (a signal).
 */
int scif_epd_connect(struct scif_endpt *ep, struct scif_port_id *dst,
		     bool nonblock)
{
	int ret = scif_epd_do_connect(ep, dst, nonblock);

	trace_scif_connect(ep->handle, READ_ONCE(ep->port), dst->node,
			   dst->port, ret < 0 ? ret : 0);
	return ret;
}

/* scif_epd_connect() without its tracepoint. */
static int scif_epd_do_connect(struct scif_endpt *ep,
			       struct scif_port_id *dst, bool nonblock)
{
	int err;

	mutex_lock(&ep->ctl_mutex);
	err = scif_connect_check(ep);
	if (err == -EALREADY && !nonblock && READ_ONCE(ep->conn_intr))
		goto wait;	/* a restarted, interrupted connect */
	if (err > 0) {
		err = scif_connect_report(ep);
		goto out;
	}
	if (!err && !dst->port)
		err = -EINVAL;
	if (!err)
		err = scif_connect_start(ep, dst, nonblock);
	if (!err && nonblock)
		err = -EINPROGRESS;
	if (err)
		goto out;
wait:
	mutex_unlock(&ep->ctl_mutex);

	if (wait_event_interruptible(ep->wq,
				     READ_ONCE(ep->state) != SCIF_EPD_CONNECTING)) {
		spin_lock(&ep->lock);
		err = ep->state == SCIF_EPD_CONNECTING ? -ERESTARTSYS : 0;
		if (err) {
			ep->conn_async = true;
			ep->conn_intr = true;
		}
		spin_unlock(&ep->lock);
		if (err)
			return err;
	}
	mutex_lock(&ep->ctl_mutex);
	err = scif_connect_report(ep);
out:
	mutex_unlock(&ep->ctl_mutex);
	return err;
}

static bool scif_listener_ready(struct scif_endpt *lep)
{
	return READ_ONCE(lep->nr_conreqs) ||
	       READ_ONCE(lep->state) != SCIF_EPD_LISTENING;
}

/*
 * Take the oldest request; with @park, also one of @lep's parked slots
 * (the request stays queued if none is free).
 */
static struct scif_conreq *scif_take_request(struct scif_endpt *lep,
					     int flags, bool park)
{
	struct scif_conreq *req;

	if (flags & ~SCIF_ACCEPT_SYNC)
		return ERR_PTR(-EINVAL);
	for (;;) {
		spin_lock(&lep->lock);
		if (lep->state != SCIF_EPD_LISTENING) {
			spin_unlock(&lep->lock);
			return ERR_PTR(-EINVAL);
		}
		req = list_first_entry_or_null(&lep->conreqs,
					       struct scif_conreq, list);
		if (req && park &&
		    lep->nr_parked >= READ_ONCE(scif_max_parked)) {
			spin_unlock(&lep->lock);
			return ERR_PTR(-ENOMEM);
		}
		if (req) {
			list_del(&req->list);
			lep->nr_conreqs--;
			if (park)
				lep->nr_parked++;
		}
		spin_unlock(&lep->lock);
		if (req)
			return req;
		if (!(flags & SCIF_ACCEPT_SYNC))
			return ERR_PTR(-EAGAIN);
		if (wait_event_interruptible(lep->wq, scif_listener_ready(lep)))
			return ERR_PTR(-ERESTARTSYS);
	}
}

/**
 * scif_epd_take_request() - take the oldest connection request
 * @lep: a listening endpoint
 * @flags: 0, or SCIF_ACCEPT_SYNC to wait for a request
 *
 * Context: process context; may sleep.
 * Return: the request, or ERR_PTR(-EINVAL) if @lep is not listening or
 * @flags is bad, ERR_PTR(-EAGAIN) if none is waiting and @flags says not
 * to wait, or ERR_PTR(-ERESTARTSYS) on a signal.
 */
struct scif_conreq *scif_epd_take_request(struct scif_endpt *lep, int flags)
{
	return scif_take_request(lep, flags, false);
}

/**
 * scif_conreq_reject() - refuse a connection request and free it
 * @req: the request
 *
 * Context: process context; may sleep.
 */
void scif_conreq_reject(struct scif_conreq *req)
{
	struct scif_msg msg;

	scif_nodemsg_init(&msg, SCIF_MSG_REJECT, req->peer_handle, 0);
	if (READ_ONCE(req->node->online))
		scif_node_send(req->node, &msg);
	put_pid(req->owner);
	kfree(req);
}

/*
 * The endpoint stops writing into the peer's area (the ring counts and
 * message flags of scif_msg_handle_notify()) before telling the peer it lets
 * go: once told, the peer may free it.  With @disconnect, a connected
 * endpoint also becomes disconnected, in the same step as far as senders
 * and receivers can see.
 */
static void scif_conn_unmap_remote(struct scif_endpt *ep, bool disconnect)
{
	void *remote;

	/*
	 * First out of the fast path: a process whose call saw the reset
	 * (the state below) must not then find the fast path live, with an
	 * empty ring, and read 0 for a reset.  Again once the pointer is
	 * gone, for a fast path set up meanwhile.
	 */
	scif_fp_revoke(ep);
	mutex_lock(&ep->recv_mutex);
	mutex_lock(&ep->send_mutex);
	spin_lock(&ep->lock);
	if (disconnect && ep->state == SCIF_EPD_CONNECTED)
		ep->state = SCIF_EPD_DISCONNECTED;
	remote = ep->rb.remote;
	ep->rb.remote = NULL;
	spin_unlock(&ep->lock);
	mutex_unlock(&ep->send_mutex);
	mutex_unlock(&ep->recv_mutex);
	if (remote) {
		scif_fp_revoke(ep);
		scif_node_unmap(ep->node, remote, scif_qp_len(ep->rb.tx_size));
	}
}

/*
 * scif_conn_disconnect_work() - the peer disconnected: let go of it
 * @work: the endpoint's disc_work
 *
 * Excludes senders and receivers while the peer's area is unmapped, so
 * nothing touches the peer's memory after the acknowledgment; the data
 * already received stays readable.
 */
static void scif_conn_disconnect_work(struct work_struct *work)
{
	struct scif_endpt *ep = container_of(work, struct scif_endpt,
					     disc_work);
	struct scif_msg msg;

	scif_conn_unmap_remote(ep, true);
	/* The peer dropped our windows before it disconnected. */
	scif_epd_parts_teardown(ep, true, -ECONNRESET);
	wake_up_all(&ep->wq);
	scif_nodemsg_init(&msg, SCIF_MSG_DISC_ACK, ep->peer_handle, ep->handle);
	scif_node_send(ep->node, &msg);
	scif_epd_put(ep);
}

/*
 * @ep is connected from now on.  Its disc_work is queued only while it
 * is (scif_conn_handle_disconnect(), under ep->lock), and an endpoint is
 * connected once: the work is set up here rather than by scif_epd.c.
 */
static void scif_conn_set_connected(struct scif_endpt *ep)
{
	lockdep_assert_held(&ep->lock);
	INIT_WORK(&ep->disc_work, scif_conn_disconnect_work);
	ep->state = SCIF_EPD_CONNECTED;
}

static int scif_accept_connect(struct scif_endpt *ep, struct scif_conreq *req)
{
	struct scif_qp_shm *remote;
	struct scif_msg msg;
	u64 addr;
	int err;

	lockdep_assert_held(&ep->ctl_mutex);
	if (READ_ONCE(ep->state) != SCIF_EPD_UNBOUND)
		return -EINVAL;
	if (!READ_ONCE(req->node->online))
		return -ENODEV;
	err = scif_conn_prepare_area(ep, req->node);
	if (err)
		return err;
	scif_node_test_delay(SCIF_DELAY_ACCEPT);
	/* Mapped until the endpoint goes. */
	err = scif_node_map_area(req->node, &ep->rb, &addr);
	if (err)
		return err;
	remote = scif_node_map(req->node, req->addr, scif_qp_len(req->size));
	if (IS_ERR(remote))
		return PTR_ERR(remote);

	scif_port_get(req->port);
	spin_lock(&ep->lock);
	ep->port = req->port;
	ep->node = req->node;
	ep->peer = req->peer;
	ep->peer_handle = req->peer_handle;
	ep->rb.remote = remote;
	ep->rb.remote_addr = req->addr;
	ep->rb.tx_size = req->size;
	scif_conn_set_connected(ep);
	spin_unlock(&ep->lock);

	scif_nodemsg_init(&msg, SCIF_MSG_ACCEPT, req->peer_handle, ep->handle);
	msg.arg[0] = addr;
	msg.arg[1] = ep->rb.rx_size;
	err = scif_node_send(req->node, &msg);
	if (err) {
		spin_lock(&ep->lock);
		ep->state = SCIF_EPD_DISCONNECTED;
		spin_unlock(&ep->lock);
		/* The requester is refused next and may free its area. */
		scif_conn_unmap_remote(ep, false);
	}
	return err;
}

/**
 * scif_epd_accept_request() - complete a connection request into @ep
 * @ep: a fresh, unbound endpoint that becomes the connected one
 * @req: the request, consumed: freed on success, refused on failure
 *
 * Return: 0, -EINVAL if @ep is not fresh, -ENODEV if the requesting
 * node is gone, or -ENOMEM.
 */
int scif_epd_accept_request(struct scif_endpt *ep, struct scif_conreq *req)
{
	int err;

	mutex_lock(&ep->ctl_mutex);
	err = scif_accept_connect(ep, req);
	mutex_unlock(&ep->ctl_mutex);
	trace_scif_accept(ep->handle, req->port, req->node->id, req->peer.port,
			  err);
	if (err) {
		scif_conreq_reject(req);
		return err;
	}
	put_pid(req->owner);
	kfree(req);
	return 0;
}

static void scif_park_unreserve(struct scif_endpt *lep)
{
	spin_lock(&lep->lock);
	lep->nr_parked--;
	spin_unlock(&lep->lock);
}

/*
 * The caller erased @req from scif_info.parked and so owns it: it leaves
 * its listener's list, slot and reference.
 */
static void scif_conreq_unparked(struct scif_conreq *req)
{
	struct scif_endpt *lep = req->listener;

	spin_lock(&lep->lock);
	list_del(&req->list);
	lep->nr_parked--;
	spin_unlock(&lep->lock);
	req->listener = NULL;
	scif_epd_put(lep);
}

/**
 * scif_epd_acceptreq() - take a request and park it for SCIF_ACCEPTREG
 * @lep: a listening endpoint
 * @flags: 0, or SCIF_ACCEPT_SYNC to wait for a request
 * @peer: receives the requesting endpoint's port id
 * @cookie: receives the cookie (random bits above a small id) under which
 *	only the current thread group may claim the request, once
 *
 * At most max_parked requests of @lep are parked at a time; when that
 * many are, a request that is there fails the call and stays at the
 * listener.  A parked request goes when it is claimed or @lep is closed,
 * whichever comes first.
 *
 * Context: process context; may sleep.
 * Return: 0, -ENOMEM (max_parked reached, or memory), or an error of
 * scif_epd_take_request().
 */
int scif_epd_acceptreq(struct scif_endpt *lep, int flags,
		       struct scif_port_id *peer, u64 *cookie)
{
	struct scif_conreq *req;
	u32 id;
	int err;

	req = scif_take_request(lep, flags, true);
	if (IS_ERR(req))
		return PTR_ERR(req);
	/* The id is reserved; the request is published once complete. */
	err = scif_fail_alloc() ? -ENOMEM :
	      xa_alloc(&scif_info.parked, &id, NULL, xa_limit_31b, GFP_KERNEL);
	if (err)
		goto reject;
	req->owner = get_pid(task_tgid(current));
	/* The top bit stays clear: a cookie never looks like a kernel address. */
	req->cookie = (u64)(get_random_u32() >> 1) << 32 | id;
	*peer = req->peer;
	*cookie = req->cookie;

	/* Only while @lep listens: its close then finds the request. */
	err = -EINVAL;
	spin_lock(&lep->lock);
	if (lep->state == SCIF_EPD_LISTENING) {
		kref_get(&lep->ref);
		req->listener = lep;
		list_add_tail(&req->list, &lep->parked);
		/* Fills the reserved slot: nothing to allocate. */
		err = xa_err(xa_store(&scif_info.parked, id, req, GFP_NOWAIT));
		if (err) {
			list_del(&req->list);
			req->listener = NULL;
		}
	}
	spin_unlock(&lep->lock);
	if (!err)
		return 0;
	if (err != -EINVAL)
		scif_epd_put(lep);
	xa_erase(&scif_info.parked, id);
reject:
	scif_conreq_reject(req);
	scif_park_unreserve(lep);
	return err;
}

/**
 * scif_epd_unpark_request() - claim a parked request by its cookie
 * @cookie: the cookie, from user space
 *
 * Return: the request, now owned by the caller, or NULL if @cookie names
 * no request parked by the current thread group.
 */
struct scif_conreq *scif_epd_unpark_request(u64 cookie)
{
	struct scif_conreq *req;
	u32 id = (u32)cookie;

	xa_lock(&scif_info.parked);
	req = xa_load(&scif_info.parked, id);
	if (req && req->cookie == cookie && req->owner == task_tgid(current))
		__xa_erase(&scif_info.parked, id);
	else
		req = NULL;
	xa_unlock(&scif_info.parked);
	if (req)
		scif_conreq_unparked(req);
	return req;
}

/*
 * Refuse the requests waiting at a closed listener and those parked from
 * it.  A parked request is the listener's to refuse only if it erases it
 * from scif_info.parked; one claimed meanwhile leaves the list itself.
 */
static void scif_listener_close(struct scif_endpt *lep)
{
	struct scif_conreq *req, *tmp;
	LIST_HEAD(reqs);
	int nr = 0;

	lockdep_assert_held(&lep->ctl_mutex);
	mutex_lock(&scif_info.port_lock);
	xa_erase(&scif_info.listeners, lep->port);
	mutex_unlock(&scif_info.port_lock);

	spin_lock(&lep->lock);
	list_splice_init(&lep->conreqs, &reqs);
	lep->nr_conreqs = 0;
	spin_unlock(&lep->lock);
	list_for_each_entry_safe(req, tmp, &reqs, list) {
		list_del(&req->list);
		scif_conreq_reject(req);
	}

	scif_test_close_delay();
	spin_lock(&lep->lock);
	list_for_each_entry_safe(req, tmp, &lep->parked, list) {
		if (xa_cmpxchg(&scif_info.parked, (u32)req->cookie, req, NULL,
			       0) != req)
			continue;
		list_move_tail(&req->list, &reqs);
		lep->nr_parked--;
		nr++;
	}
	spin_unlock(&lep->lock);
	list_for_each_entry_safe(req, tmp, &reqs, list) {
		list_del(&req->list);
		req->listener = NULL;
		scif_conreq_reject(req);
	}
	/* The closing owner still holds @lep: these are not the last. */
	while (nr--)
		scif_epd_put(lep);
}

/*
 * The endpoint no longer touches the peer's windows: set @flag (which
 * says so) to @value and acknowledge a DISCONNECT of the peer that came
 * meanwhile (see scif_conn_handle_disconnect()).
 */
static void scif_conn_drained(struct scif_endpt *ep, bool *flag, bool value)
{
	struct scif_msg ack;
	bool owed;

	spin_lock(&ep->lock);
	*flag = value;
	owed = ep->disc_ack_owed;
	ep->disc_ack_owed = false;
	spin_unlock(&ep->lock);
	if (owed) {
		scif_nodemsg_init(&ack, SCIF_MSG_DISC_ACK, ep->peer_handle,
				  ep->handle);
		scif_node_send(ep->node, &ack);
	}
}

/* A closing endpoint is done with the peer's windows. */
static void scif_conn_close_drained(struct scif_endpt *ep)
{
	lockdep_assert_held(&ep->ctl_mutex);
	scif_conn_drained(ep, &ep->close_drained, true);
}

/**
 * scif_epd_close() - the owner lets go of an endpoint
 * @ep: the endpoint; the owner's reference is dropped
 *
 * A listener refuses its waiting requests; a connected endpoint tells its
 * peer and lives on until the peer acknowledges.  The port is released
 * at once.  The endpoint stops counting against the endpoint limits now,
 * or when destroyed if the protocol still holds it.
 *
 * Context: process context; may sleep.
 */
void scif_epd_close(struct scif_endpt *ep)
{
	enum scif_epd_state state;
	struct scif_msg msg;
	bool linger;

	mutex_lock(&ep->ctl_mutex);
	spin_lock(&ep->lock);
	state = ep->state;
	trace_scif_close(ep->handle, scif_epd_state_name(state),
			 READ_ONCE(ep->stats.tx_bytes),
			 READ_ONCE(ep->stats.rx_bytes));
	ep->state = SCIF_EPD_CLOSING;
	ep->close_drained = state != SCIF_EPD_CONNECTED;
	if (state == SCIF_EPD_CONNECTING || state == SCIF_EPD_CONNECTED) {
		kref_get(&ep->ref);
		ep->proto_ref = true;
	}
	spin_unlock(&ep->lock);
	wake_up_all(&ep->wq);

	if (state == SCIF_EPD_LISTENING)
		scif_listener_close(ep);
	scif_cache_destroy(ep);
	if (state == SCIF_EPD_CONNECTED) {
		/* Done with the peer's windows and area before it hears of
		 * the close; ours stay until it acknowledges.
		 */
		scif_conn_unmap_remote(ep, false);
		scif_epd_parts_teardown(ep, false, -ECONNRESET);
		scif_conn_close_drained(ep);
		scif_nodemsg_init(&msg, SCIF_MSG_DISCONNECT, ep->peer_handle,
				  ep->handle);
		if (scif_node_send(ep->node, &msg))
			scif_conn_drop_proto_ref(ep);
	}
	/* Messages name endpoints by handle: the port is free at once. */
	if (ep->port)
		scif_port_put(ep->port);
	mutex_unlock(&ep->ctl_mutex);
	/* Nothing takes the protocol's reference after the close. */
	spin_lock(&ep->lock);
	linger = ep->proto_ref;
	ep->count_until_free = linger;
	spin_unlock(&ep->lock);
	if (!linger)
		scif_epd_uncount(ep);
	scif_epd_put(ep);
}

static struct scif_endpt *scif_listener_get(u64 port)
{
	struct scif_endpt *lep;

	if (!port || port > U16_MAX)
		return NULL;
	mutex_lock(&scif_info.port_lock);
	lep = xa_load(&scif_info.listeners, port);
	if (lep && !kref_get_unless_zero(&lep->ref))
		lep = NULL;
	mutex_unlock(&scif_info.port_lock);
	return lep;
}

static struct scif_conreq *scif_conreq_from_msg(struct scif_node *node,
						const struct scif_msg *msg,
						struct scif_endpt *lep)
{
	struct scif_conreq *req;

	if (msg->arg[1] > U16_MAX || !scif_conn_ring_size_ok(msg->arg[3]) ||
	    !msg->arg[2] || !PAGE_ALIGNED(msg->arg[2]) || !msg->src)
		return NULL;
	req = scif_kzalloc(sizeof(*req), GFP_KERNEL);
	if (!req)
		return NULL;
	req->node = node;
	req->peer.node = node->id;
	req->peer.port = msg->arg[1];
	req->peer_handle = msg->src;
	req->addr = msg->arg[2];
	req->size = msg->arg[3];
	req->port = lep->port;
	return req;
}

/**
 * scif_conn_handle_connect() - handle CONNECT: queue it at the listener
 * @node: the node it came from
 * @msg: the request; names a port, not an endpoint
 * @unused: NULL (see scif_nodemsg.c)
 *
 * A request that cannot be queued (no listener on the port, a full
 * backlog, bad arguments) is answered with REJECT.
 *
 * Context: the node's rx_work.
 */
void scif_conn_handle_connect(struct scif_node *node,
			      const struct scif_msg *msg,
			      struct scif_endpt *unused)
{
	struct scif_conreq *req = NULL;
	struct scif_endpt *lep;
	struct scif_msg reply;

	lep = scif_listener_get(msg->arg[0]);
	/* A full backlog costs the sender nothing but the refusal. */
	if (lep && READ_ONCE(lep->nr_conreqs) < READ_ONCE(lep->backlog))
		req = scif_conreq_from_msg(node, msg, lep);
	if (req) {
		spin_lock(&lep->lock);
		if (lep->state == SCIF_EPD_LISTENING &&
		    lep->nr_conreqs < lep->backlog) {
			list_add_tail(&req->list, &lep->conreqs);
			lep->nr_conreqs++;
			req = NULL;
			wake_up_all(&lep->wq);
		} else {
			kfree(req);
		}
		spin_unlock(&lep->lock);
		if (!req) {
			scif_epd_put(lep);
			return;
		}
	}
	if (lep)
		scif_epd_put(lep);
	scif_nodemsg_init(&reply, SCIF_MSG_REJECT, msg->src, 0);
	scif_node_reply(node, &reply);
}

/**
 * scif_conn_handle_accept() - handle ACCEPT: the peer accepted
 * @node: the node it came from
 * @msg: the message
 * @ep: the connecting endpoint it names
 *
 * Maps the peer's area while connecting; if the endpoint was closed (or
 * cannot map), disconnects from the new peer endpoint and waits for its
 * acknowledgment before the area may go.
 *
 * Context: the node's rx_work.
 */
void scif_conn_handle_accept(struct scif_node *node,
			     const struct scif_msg *msg, struct scif_endpt *ep)
{
	void *remote = ERR_PTR(-EPROTO);
	struct scif_msg reply;
	bool connected = false;

	if (READ_ONCE(ep->state) == SCIF_EPD_CONNECTING &&
	    scif_conn_ring_size_ok(msg->arg[1]) && msg->src)
		remote = scif_node_map(node, msg->arg[0],
				       scif_qp_len(msg->arg[1]));

	spin_lock(&ep->lock);
	if (ep->state == SCIF_EPD_CONNECTING && !IS_ERR(remote)) {
		ep->rb.remote = remote;
		ep->rb.remote_addr = msg->arg[0];
		ep->rb.tx_size = msg->arg[1];
		ep->peer_handle = msg->src;
		scif_conn_set_connected(ep);
		connected = true;
	} else if (ep->state == SCIF_EPD_CONNECTING ||
		   (ep->state == SCIF_EPD_CLOSING && ep->proto_ref &&
		    !ep->peer_handle)) {
		if (ep->state == SCIF_EPD_CONNECTING) {
			ep->state = SCIF_EPD_DISCONNECTED;
			ep->conn_err = -ECONNREFUSED;
			kref_get(&ep->ref);
			ep->proto_ref = true;
		}
		ep->peer_handle = msg->src;
	} else {
		spin_unlock(&ep->lock);
		return;
	}
	spin_unlock(&ep->lock);
	wake_up_all(&ep->wq);
	if (connected)
		return;
	if (!IS_ERR(remote))
		scif_node_unmap(node, remote, scif_qp_len(msg->arg[1]));
	scif_nodemsg_init(&reply, SCIF_MSG_DISCONNECT, msg->src, ep->handle);
	scif_node_reply(node, &reply);
}

/**
 * scif_conn_handle_reject() - handle REJECT: the listener refused
 * @node: the node it came from
 * @msg: the message
 * @ep: the connecting endpoint it names
 *
 * Context: the node's rx_work.
 */
void scif_conn_handle_reject(struct scif_node *node,
			     const struct scif_msg *msg, struct scif_endpt *ep)
{
	bool drop = false;

	spin_lock(&ep->lock);
	if (ep->state == SCIF_EPD_CONNECTING) {
		ep->state = SCIF_EPD_BOUND;
		ep->conn_err = -ECONNREFUSED;
	} else if (ep->state == SCIF_EPD_CLOSING && ep->proto_ref &&
		   !ep->peer_handle) {
		ep->proto_ref = false;
		drop = true;
	}
	spin_unlock(&ep->lock);
	wake_up_all(&ep->wq);
	if (drop)
		scif_epd_put(ep);
}

/**
 * scif_conn_handle_disconnect() - handle DISCONNECT: the peer closed
 * @node: the node it came from
 * @msg: the message, from the peer endpoint or ignored
 * @ep: the endpoint it names
 *
 * Context: the node's rx_work.
 */
void scif_conn_handle_disconnect(struct scif_node *node,
				 const struct scif_msg *msg,
				 struct scif_endpt *ep)
{
	struct scif_msg reply;
	bool ack = false;

	spin_lock(&ep->lock);
	if (msg->src != ep->peer_handle) {
		spin_unlock(&ep->lock);
		return;
	}
	if (ep->state == SCIF_EPD_CONNECTED) {
		kref_get(&ep->ref);
		if (!queue_work(scif_info.wq, &ep->disc_work))
			scif_epd_put(ep);
	} else if ((ep->state == SCIF_EPD_CLOSING && !ep->close_drained) ||
		   ep->reset_draining) {
		/*
		 * Both ends are closing (or ours reset a broken ring) and
		 * ours still has RMAs or mappings on the peer's windows:
		 * the peer frees them on the acknowledgment, so it waits
		 * until we are done.
		 */
		ep->disc_ack_owed = true;
	} else {
		ack = true;
	}
	spin_unlock(&ep->lock);
	if (ack) {
		scif_nodemsg_init(&reply, SCIF_MSG_DISC_ACK, msg->src,
				  ep->handle);
		scif_node_reply(node, &reply);
	}
}

/**
 * scif_conn_ring_broken() - the peer broke a connection's ring: reset it
 * @ep: the endpoint, whose peer wrote a count that makes no sense
 *
 * Costs only this connection: it is reset (ECONNRESET) and the peer is
 * sent DISCONNECT, as if this side had closed; the receive area stays
 * (held by the protocol) until the peer acknowledges or its node goes.
 * As on a close, the peer's windows are let go of first, and a DISCONNECT
 * of the peer that crosses ours is acknowledged only after that.
 *
 * Context: process context, without the endpoint's data mutexes.
 */
void scif_conn_ring_broken(struct scif_endpt *ep)
{
	struct scif_msg msg;
	void *remote = NULL;
	bool reset = false;

	mutex_lock(&ep->recv_mutex);
	mutex_lock(&ep->send_mutex);
	spin_lock(&ep->lock);
	if (ep->state == SCIF_EPD_CONNECTED) {
		ep->state = SCIF_EPD_DISCONNECTED;
		ep->reset_draining = true;
		remote = ep->rb.remote;
		ep->rb.remote = NULL;
		if (!ep->proto_ref) {
			kref_get(&ep->ref);
			ep->proto_ref = true;
		}
		reset = true;
	}
	spin_unlock(&ep->lock);
	mutex_unlock(&ep->send_mutex);
	mutex_unlock(&ep->recv_mutex);
	if (!reset)
		return;

	atomic_inc(&scif_info.ring_failures);
	pr_warn_ratelimited("node %u broke the ring of endpoint %#llx: connection reset\n",
			    ep->node->id, ep->handle);
	if (remote) {
		scif_fp_revoke(ep);
		scif_node_unmap(ep->node, remote, scif_qp_len(ep->rb.tx_size));
	}
	wake_up_all(&ep->wq);
	/* Ours stay until the peer acknowledges, as on a close. */
	scif_epd_parts_teardown(ep, false, -ECONNRESET);
	scif_nodemsg_init(&msg, SCIF_MSG_DISCONNECT, ep->peer_handle,
			  ep->handle);
	if (scif_node_send(ep->node, &msg))
		scif_conn_drop_proto_ref(ep);
	scif_conn_drained(ep, &ep->reset_draining, false);
}

/**
 * scif_conn_handle_disc_ack() - handle DISC_ACK: the peer let go of us
 * @node: the node it came from
 * @msg: the message, from the peer endpoint or ignored
 * @ep: the closing or disconnected endpoint it names
 *
 * Drops the protocol's reference: the endpoint's memory may go.
 *
 * Context: the node's rx_work.
 */
void scif_conn_handle_disc_ack(struct scif_node *node,
			       const struct scif_msg *msg,
			       struct scif_endpt *ep)
{
	bool drop = false;

	spin_lock(&ep->lock);
	if (ep->proto_ref && ep->peer_handle == msg->src &&
	    (ep->state == SCIF_EPD_CLOSING ||
	     ep->state == SCIF_EPD_DISCONNECTED)) {
		ep->proto_ref = false;
		drop = true;
	}
	spin_unlock(&ep->lock);
	if (drop)
		scif_epd_put(ep);
}
