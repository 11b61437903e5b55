// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: endpoint lifetime, handles, ports, and the reset of
 * endpoints whose peer node is lost.
 */
#include <linux/capability.h>
#include <linux/completion.h>
#include <linux/cred.h>
#include <linux/memcontrol.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>

#include "scif_devdma.h"
#include "scif_epd.h"
#include "scif_fault.h"
#include "scif_fp.h"
#include "scif_info.h"
#include "scif_mmap.h"
#include "scif_nodes.h"
#include "scif_proto.h"
#include "scif_rma.h"

static const char * const scif_epd_state_names[] = {
	[SCIF_EPD_UNBOUND] = "unbound",
	[SCIF_EPD_BOUND] = "bound",
	[SCIF_EPD_LISTENING] = "listening",
	[SCIF_EPD_CONNECTING] = "connecting",
	[SCIF_EPD_CONNECTED] = "connected",
	[SCIF_EPD_DISCONNECTED] = "disconnected",
	[SCIF_EPD_CLOSING] = "closing",
};

/**
 * scif_epd_state_name() - printable name of an endpoint state
 * @state: the state
 *
 * Return: a static string.
 */
const char *scif_epd_state_name(enum scif_epd_state state)
{
	if (state >= ARRAY_SIZE(scif_epd_state_names))
		return "invalid";
	return scif_epd_state_names[state];
}

static bool scif_epd_count_get(void)
{
	if (atomic_inc_return(&scif_info.nr_endpoints) <=
	    READ_ONCE(scif_max_endpoints))
		return true;
	atomic_dec(&scif_info.nr_endpoints);
	return false;
}

/* The entry of @uid, with one more reference; under user_lock. */
static struct scif_user *scif_user_get(kuid_t uid)
{
	struct scif_user *u = xa_load(&scif_info.users, __kuid_val(uid));
	int err;

	lockdep_assert_held(&scif_info.user_lock);
	if (u) {
		u->ref++;
		return u;
	}
	u = scif_kzalloc(sizeof(*u), GFP_KERNEL);
	if (!u)
		return ERR_PTR(-ENOMEM);
	u->uid = uid;
	u->ref = 1;
	err = scif_fail_alloc() ? -ENOMEM :
	      xa_err(xa_store(&scif_info.users, __kuid_val(uid), u,
			      GFP_KERNEL));
	if (err) {
		kfree(u);
		return ERR_PTR(err);
	}
	return u;
}

/* Drop a reference of scif_user_get(); under user_lock. */
static void scif_user_put(struct scif_user *u)
{
	lockdep_assert_held(&scif_info.user_lock);
	if (--u->ref)
		return;
	WARN_ON_ONCE(u->nr_endpoints || atomic_long_read(&u->nr_rwindows) ||
		     atomic_long_read(&u->nr_rruns));
	xa_erase(&scif_info.users, __kuid_val(u->uid));
	kfree(u);
}

/*
 * Make the current user the owner of a new endpoint and count it against
 * max_user_endpoints: 0, -EMFILE or -ENOMEM.  The privilege is asked
 * about only at the limit (capable() is not free, and marks the task as
 * having used it): below it every endpoint counts, beyond it a
 * CAP_SYS_RESOURCE caller's are not counted (but still owned).
 */
static int scif_epd_user_charge(struct scif_endpt *ep)
{
	struct scif_user *u;
	bool over;

	mutex_lock(&scif_info.user_lock);
	u = scif_user_get(current_uid());
	if (IS_ERR(u)) {
		mutex_unlock(&scif_info.user_lock);
		return PTR_ERR(u);
	}
	over = u->nr_endpoints >= READ_ONCE(scif_max_user_endpoints);
	if (!over)
		u->nr_endpoints++;
	mutex_unlock(&scif_info.user_lock);
	ep->owner = u;
	ep->user_charged = !over;
	if (over && !capable(CAP_SYS_RESOURCE))
		return -EMFILE;	/* the caller lets go of the owner */
	return 0;
}

/* Stop counting @ep against max_user_endpoints. */
static void scif_epd_user_uncharge(struct scif_endpt *ep)
{
	if (!ep->user_charged)
		return;
	ep->user_charged = false;
	mutex_lock(&scif_info.user_lock);
	WARN_ON_ONCE(!ep->owner->nr_endpoints--);
	mutex_unlock(&scif_info.user_lock);
}

/* The endpoint is destroyed: it no longer holds its owner. */
static void scif_epd_user_release(struct scif_endpt *ep)
{
	if (!ep->owner)
		return;
	scif_epd_user_uncharge(ep);
	mutex_lock(&scif_info.user_lock);
	scif_user_put(ep->owner);
	mutex_unlock(&scif_info.user_lock);
	ep->owner = NULL;
}

/**
 * scif_epd_uncount() - an endpoint stops counting against the limits
 * @ep: the endpoint, counted since scif_epd_create(); called once, by
 *	its close or, if it lingers for the protocol, by its destruction
 *
 * Context: process context; may sleep.
 */
void scif_epd_uncount(struct scif_endpt *ep)
{
	scif_epd_user_uncharge(ep);
	atomic_dec(&scif_info.nr_endpoints);
}

/*
 * The parts of an endpoint.  Besides its connection, an endpoint carries
 * the state of parts that other files own, each with its own init and
 * teardown, called from here in this order:
 *
 *   registered address spaces  scif_window.c     scif_window_epd_*()
 *   copy engine queue          scif_rma.c        scif_rma_engine_init()
 *   registration cache         scif_rma_cache.c  scif_cache_epd_init(),
 *                                                scif_cache_destroy()
 *   fences                     scif_fence.c      scif_fence_epd_*()
 *   mappings of peer windows   scif_mmap.c       scif_mmap_epd_init()
 *   device mappings            scif_devdma.c     scif_devdma_epd_*()
 *   user-space data path       scif_fp.c         scif_fp_init(),
 *                                                scif_fp_revoke(),
 *                                                scif_fp_destroy()
 *
 * Each file sets up and tears down only its own part.
 */
static void scif_epd_parts_init(struct scif_endpt *ep)
{
	scif_window_epd_init(ep);
	scif_rma_engine_init(ep);
	scif_cache_epd_init(ep);
	scif_fence_epd_init(ep);
	scif_mmap_epd_init(ep);
	scif_devdma_epd_init(ep);
	scif_fp_init(ep);
}

/**
 * scif_epd_parts_teardown() - let go of a connection's registered memory
 * @ep: the endpoint; its state already says it is no longer connected
 * @local: drop this endpoint's own windows too (only once the peer no
 *	longer touches them)
 * @err: what a registrant still waiting is told
 *
 * Forgets the peer's parked fence waits, which end with the connection,
 * revokes the device mappings of windows and waits for their clients,
 * then drops the peer's windows (and with @local ours) and waits until
 * no RMA uses the peer's windows any more: after this, the endpoint does
 * not touch the peer's memory.
 *
 * Context: process context; not under any endpoint lock but ctl_mutex.
 */
void scif_epd_parts_teardown(struct scif_endpt *ep, bool local, int err)
{
	scif_fence_epd_teardown(ep);
	scif_devdma_epd_teardown(ep, err);
	scif_window_epd_teardown(ep, local, err);
}

/* The endpoint is unreferenced: release what is left of its parts. */
static void scif_epd_parts_destroy(struct scif_endpt *ep)
{
	scif_cache_destroy(ep);
	scif_epd_parts_teardown(ep, true, -ECONNRESET);
	scif_window_epd_destroy(ep);
	scif_fp_destroy(ep);
}

static void scif_epd_free_work(struct work_struct *work)
{
	struct scif_endpt *ep = container_of(work, struct scif_endpt,
					     free_work);

	xa_erase(&scif_info.epds, (u32)ep->handle);
	mutex_lock(&scif_info.eplock);
	list_del(&ep->list);
	mutex_unlock(&scif_info.eplock);

	scif_epd_parts_destroy(ep);

	if (ep->rb.remote && READ_ONCE(ep->node->hw))
		scif_node_unmap(ep->node, ep->rb.remote,
				scif_qp_len(ep->rb.tx_size));
	scif_node_area_free(&ep->rb);
	if (ep->count_until_free)
		scif_epd_uncount(ep);
	scif_epd_user_release(ep);
	mem_cgroup_put(ep->memcg);
	if (ep->closed)
		complete(ep->closed);
	kfree_rcu(ep, rcu);
}

/**
 * scif_epd_lookup() - find an endpoint by the handle a message names
 * @handle: the handle, from anyone
 *
 * Return: the endpoint with a reference the caller must put, or NULL.
 */
struct scif_endpt *scif_epd_lookup(u64 handle)
{
	struct scif_endpt *ep;

	rcu_read_lock();
	ep = xa_load(&scif_info.epds, (u32)handle);
	if (ep && (ep->handle != handle || !kref_get_unless_zero(&ep->ref)))
		ep = NULL;
	rcu_read_unlock();
	return ep;
}

/**
 * scif_epd_create() - allocate a new, unbound endpoint
 * @user: for user space: charge it to the current user (and its memory
 *	cgroup); false for kernel clients
 *
 * Context: process context; may sleep.
 * Return: the endpoint, ERR_PTR(-ENFILE) when max_endpoints endpoints
 * exist already, ERR_PTR(-EMFILE) when the user has max_user_endpoints,
 * or ERR_PTR(-ENOMEM).
 */
struct scif_endpt *scif_epd_create(bool user)
{
	gfp_t gfp = user ? GFP_KERNEL_ACCOUNT : GFP_KERNEL;
	struct scif_endpt *ep;
	u32 id;
	int err;

	if (!scif_epd_count_get())
		return ERR_PTR(-ENFILE);
	ep = scif_kzalloc(sizeof(*ep), gfp);
	if (!ep) {
		err = -ENOMEM;
		goto undo_count;
	}
	ep->user = user;
	if (user) {
		err = scif_epd_user_charge(ep);
		if (err)
			goto undo_charge;
		ep->memcg = get_mem_cgroup_from_mm(current->mm);
	}
	kref_init(&ep->ref);
	init_waitqueue_head(&ep->wq);
	INIT_WORK(&ep->free_work, scif_epd_free_work);
	mutex_init(&ep->ctl_mutex);
	mutex_init(&ep->recv_mutex);
	mutex_init(&ep->send_mutex);
	spin_lock_init(&ep->lock);
	INIT_LIST_HEAD(&ep->conreqs);
	INIT_LIST_HEAD(&ep->parked);
	scif_epd_parts_init(ep);
	ep->state = SCIF_EPD_UNBOUND;

	err = scif_fail_alloc() ? -ENOMEM :
	      xa_alloc(&scif_info.epds, &id, ep, xa_limit_31b, gfp);
	if (err)
		goto undo_charge;
	ep->handle = (u64)(u32)atomic_inc_return(&scif_info.next_gen) << 32 | id;
	mutex_lock(&scif_info.eplock);
	list_add_tail(&ep->list, &scif_info.endpoints);
	mutex_unlock(&scif_info.eplock);
	return ep;

undo_charge:
	mem_cgroup_put(ep->memcg);
	scif_epd_user_release(ep);
	kfree(ep);
undo_count:
	atomic_dec(&scif_info.nr_endpoints);
	return ERR_PTR(err);
}

/*
 * First half of resetting an endpoint whose peer node is gone: wake no
 * one yet, but cut every path to the peer's receive area (the state, the
 * kernel's mapping, the fast path's user mappings).  With @hold the node
 * is alive but broke the protocol: the protocol keeps (or takes) a
 * reference instead of dropping it, so the receive area the node may
 * still write into lives until the node is reported down.
 *
 * Return: whether scif_epd_lost_finish() drops the protocol's reference.
 */
static bool scif_epd_lost_cut(struct scif_endpt *ep, bool hold)
{
	bool drop = false, take = false;
	void *remote;

	/* As scif_conn_unmap_remote(): the fast path goes before the state. */
	scif_fp_revoke(ep);
	mutex_lock(&ep->recv_mutex);
	mutex_lock(&ep->send_mutex);
	spin_lock(&ep->lock);
	if (ep->state == SCIF_EPD_CONNECTING) {
		/* With @hold the area is not reused by a later connect. */
		ep->state = hold ? SCIF_EPD_DISCONNECTED : SCIF_EPD_BOUND;
		ep->conn_err = -ENODEV;
		take = hold;
	} else if (ep->state == SCIF_EPD_CONNECTED) {
		ep->state = SCIF_EPD_DISCONNECTED;
		take = hold;
	}
	remote = ep->rb.remote;
	ep->rb.remote = NULL;
	if (take && !ep->proto_ref) {
		kref_get(&ep->ref);
		ep->proto_ref = true;
	} else if (!hold) {
		drop = ep->proto_ref;
		ep->proto_ref = false;
	}
	spin_unlock(&ep->lock);
	mutex_unlock(&ep->send_mutex);
	mutex_unlock(&ep->recv_mutex);

	if (remote) {
		scif_fp_revoke(ep);
		scif_node_unmap(ep->node, remote, scif_qp_len(ep->rb.tx_size));
	}
	return drop;
}

/*
 * Second half: drop the endpoint's windows, wake its waiters and, with
 * @drop, the protocol's reference, which may free its receive area.
 */
static void scif_epd_lost_finish(struct scif_endpt *ep, bool hold, bool drop)
{
	/*
	 * The peer's windows go.  Ours go too if the peer is gone; a peer
	 * held for a protocol error may still write into them, so they
	 * stay pinned until its bus reports it down (see scif_nodes.h).
	 */
	scif_epd_parts_teardown(ep, !hold, -ENODEV);
	wake_up_all(&ep->wq);
	if (drop)
		scif_epd_put(ep);
}

static bool scif_epd_needs_reset(struct scif_endpt *ep,
				 struct scif_node *node, bool hold)
{
	enum scif_epd_state state = READ_ONCE(ep->state);

	return READ_ONCE(ep->node) == node &&
	       (state == SCIF_EPD_CONNECTING || state == SCIF_EPD_CONNECTED ||
		READ_ONCE(ep->rb.remote) || (!hold && READ_ONCE(ep->proto_ref)));
}

/* Take a reference to every endpoint to reset onto @batch; how many. */
static unsigned int scif_epd_lost_collect(struct scif_node *node, bool hold,
					  struct list_head *batch)
{
	struct scif_endpt *ep;
	unsigned int n = 0;

	mutex_lock(&scif_info.eplock);
	list_for_each_entry(ep, &scif_info.endpoints, list) {
		if (!scif_epd_needs_reset(ep, node, hold) ||
		    !kref_get_unless_zero(&ep->ref))
			continue;
		list_add_tail(&ep->lost, batch);
		n++;
	}
	mutex_unlock(&scif_info.eplock);
	return n;
}

/**
 * scif_epd_devmem_gone() - unregister a window whose PCI function goes
 * @owner: the handle of the window's endpoint
 * @offset: the window's offset
 * @len: its length in bytes
 *
 * Given to scif_devmem.c (scif_devmem_on_gone()): the driver of the
 * function under the window unbinds, or the function is removed.  The
 * window is unregistered as its owner would, waiting until the peer
 * let go of it; an endpoint that is gone or has no such window any more
 * (it was unregistered, or the connection ended) is left alone.
 *
 * Context: process context (the PCI bus notifier); sleeps.
 */
void scif_epd_devmem_gone(u64 owner, s64 offset, u64 len)
{
	struct scif_endpt *ep = scif_epd_lookup(owner);
	int err;

	if (!ep)
		return;
	err = scif_epd_unregister(ep, offset, len);
	if (err && err != -ENXIO && err != -ENOTCONN && err != -ECONNRESET)
		pr_warn("scif: window at %lld of endpoint %llx not unregistered (%d)\n",
			offset, owner, err);
	scif_epd_put(ep);
}

/**
 * scif_epd_node_lost() - reset every endpoint whose peer is on @node
 * @node: the node that is gone; no message from it is handled any more
 * @hold: the node broke the protocol and may still write into our
 *	memory: keep the receive areas it knows of (see scif_nodes.h)
 *
 * In two passes over all of them: first every path to a peer's receive
 * area is cut, then references are dropped.  On the loopback node both
 * ends of a connection are here, and one end's area (freed with its
 * last reference) is the other's peer area: no end may still reach an
 * area when it goes, through the kernel (scif_rb_put()) or the fast
 * path's user mappings.  Repeated until none is left to reset.
 *
 * Context: process context; may sleep.
 */
void scif_epd_node_lost(struct scif_node *node, bool hold)
{
	struct scif_endpt *ep, *tmp;
	LIST_HEAD(batch);

	while (scif_epd_lost_collect(node, hold, &batch)) {
		list_for_each_entry(ep, &batch, lost)
			ep->lost_drop = scif_epd_lost_cut(ep, hold);
		scif_node_test_delay(SCIF_DELAY_NODE_LOST);
		list_for_each_entry_safe(ep, tmp, &batch, lost) {
			list_del(&ep->lost);
			scif_epd_lost_finish(ep, hold, ep->lost_drop);
			scif_epd_put(ep);
		}
	}
}

/**
 * scif_port_claim() - take a free port for an endpoint
 * @port: the port, not 0
 *
 * Return: 0, or -EINVAL if the port is in use.
 */
int scif_port_claim(u16 port)
{
	int err;

	if (scif_fail_alloc())
		return -ENOMEM;
	mutex_lock(&scif_info.port_lock);
	err = xa_insert(&scif_info.ports, port, xa_mk_value(1), GFP_KERNEL);
	mutex_unlock(&scif_info.port_lock);
	return err == -EBUSY ? -EINVAL : err;
}

/**
 * scif_port_alloc() - take a free port at or above SCIF_PORT_RSVD
 * @port: receives the port
 *
 * Return: 0, or -ENOSPC if every such port is in use.
 */
int scif_port_alloc(u16 *port)
{
	static u32 next = SCIF_PORT_RSVD;
	u32 id;
	int err;

	if (scif_fail_alloc())
		return -ENOMEM;
	mutex_lock(&scif_info.port_lock);
	err = xa_alloc_cyclic(&scif_info.ports, &id, xa_mk_value(1),
			      XA_LIMIT(SCIF_PORT_RSVD, U16_MAX), &next,
			      GFP_KERNEL);
	mutex_unlock(&scif_info.port_lock);
	if (err == -EBUSY)
		return -ENOSPC;
	if (err < 0)
		return err;
	*port = id;
	return 0;
}

/**
 * scif_port_get() - one more endpoint bound to a port in use
 * @port: the port
 */
void scif_port_get(u16 port)
{
	mutex_lock(&scif_info.port_lock);
	xa_store(&scif_info.ports, port,
		 xa_mk_value(xa_to_value(xa_load(&scif_info.ports, port)) + 1),
		 GFP_KERNEL);
	mutex_unlock(&scif_info.port_lock);
}

/**
 * scif_port_put() - one endpoint fewer bound to a port
 * @port: the port; freed with its last endpoint
 */
void scif_port_put(u16 port)
{
	unsigned long users;

	mutex_lock(&scif_info.port_lock);
	users = xa_to_value(xa_load(&scif_info.ports, port));
	if (users > 1)
		xa_store(&scif_info.ports, port, xa_mk_value(users - 1),
			 GFP_KERNEL);
	else
		xa_erase(&scif_info.ports, port);
	mutex_unlock(&scif_info.port_lock);
}
