// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: the node table, node queue pairs, the hardware bus entry
 * points and kernel clients' probe/remove.
 */
#define pr_fmt(fmt) "scif: " fmt

#include <linux/device.h>
#include <linux/err.h>
#include <linux/export.h>
#include <linux/io.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/srcu.h>
#include <linux/uio.h>

#include "scif_fault.h"
#include "scif_hw.h"
#include "scif_info.h"
#include "scif_lmap.h"
#include "scif_nodes.h"
#include "scif_proto.h"
#include "scif_rb.h"
#include "scif_trace.h"
#include "scif_visibility.h"

struct scif_reply {
	struct list_head list;
	struct scif_msg msg;
};

/* How long a sender sleeps before looking at a full queue again. */
#define SCIF_TX_RECHECK		(HZ / 50)
/* Messages rx_work handles before it lets others run and requeues. */
#define SCIF_RX_BUDGET		64
/*
 * Replies queued for a node: rx_work takes no new message from the node
 * while SCIF_REPLY_HIGH are queued (the node's own sends then wait for
 * room), and a node that lets SCIF_REPLY_MAX pile up is taken offline.
 * Replies sent outside rx_work in numbers the peer does not bound (one
 * per window released) use replies reserved in advance, which count
 * toward SCIF_REPLY_HIGH but not SCIF_REPLY_MAX.
 */
#define SCIF_REPLY_HIGH		256
#define SCIF_REPLY_MAX		4096
/*
 * Requests of one node that rx_work took and left for a work item to
 * serve (scif_node_defer_get()): rx_work takes no new message from the
 * node while this many are under way.
 */
#define SCIF_NODE_DEFER_MAX	8
/*
 * Room in a node's queue that only replies may take: a request goes
 * while more than this is free.  Replies are what lets the peer take
 * more requests; stuck behind ours, both sides (or the loopback node,
 * whose queue carries both) would wait for each other until the stall
 * timeout failed the node.
 */
#define SCIF_REPLY_ROOM		(64 * sizeof(struct scif_msg))

/*
 * What the layers above hear of nodes (struct scif_node_events): set by
 * scif_nodes_init() before any bus registers, read without a lock.
 */
static const struct scif_node_events *scif_node_events;

static unsigned int node_stall_ms = 10000;
module_param(node_stall_ms, uint, 0644);
MODULE_PARM_DESC(node_stall_ms,
		 "Milliseconds a node may leave its message queue full while this node waits to send before it is taken offline (default 10000, 0: never)");

/*
 * Readers of scif_node.hw: a bus pointer read under srcu_read_lock() stays
 * valid until srcu_read_unlock(); scif_hw_node_down() clears the pointer
 * and waits for readers before returning to the bus, which may then free
 * what the pointer reaches.
 */
DEFINE_STATIC_SRCU(scif_hw_srcu);

/**
 * scif_node_get_online() - a node that messages can be sent to
 * @id: the node id, from anyone
 *
 * Return: the node, or NULL if there is no such node online.
 */
struct scif_node *scif_node_get_online(u16 id)
{
	if (id >= SCIF_MAX_NODES || !READ_ONCE(scif_info.nodes[id].online))
		return NULL;
	return &scif_info.nodes[id];
}

SCIF_EXPORT_IF_KUNIT(scif_node_get_online);

/*
 * Whether the node has left its queue full for longer than node_stall_ms
 * while we wait to send: it makes no progress (it may still heartbeat).
 */
static bool scif_node_tx_stalled(struct scif_node *node)
{
	unsigned int ms = READ_ONCE(node_stall_ms);

	lockdep_assert_held(&node->tx_mutex);
	if (!node->tx_full_since) {
		node->tx_full_since = jiffies | 1;
		return false;
	}
	if (!ms || time_before(jiffies, node->tx_full_since +
			       msecs_to_jiffies(ms)))
		return false;
	if (!node->stall_reported) {
		node->stall_reported = true;
		atomic_inc(&scif_info.node_stalls);
		pr_warn_ratelimited("node %u drained nothing for %u ms\n",
				    node->id, ms);
	}
	return true;
}

static bool scif_node_tx_ready(struct scif_node *node, u32 need)
{
	return !READ_ONCE(node->online) || scif_rb_tx_room(&node->rb) >= need;
}

/*
 * reply_work waits for room: rx_work must not pause for the replies it
 * queues (scif_node_rx_throttle()), or on the loopback node, or between
 * two nodes both paused, nothing would ever make that room.
 */
static void scif_node_reply_waits(struct scif_node *node, bool waits)
{
	bool resume;

	spin_lock(&node->reply_lock);
	node->reply_waiting = waits;
	resume = waits && node->rx_throttled;
	if (resume)
		node->rx_throttled = false;
	spin_unlock(&node->reply_lock);
	if (resume)
		queue_work(scif_info.wq, &node->rx_work);
}

/*
 * Send @msg once @need bytes are free in the peer's queue (see
 * scif_node_send()); @reply: from reply_work, which may take the room
 * kept for replies.
 */
static int __scif_node_send(struct scif_node *node, const struct scif_msg *msg,
			    bool reply)
{
	u32 need = sizeof(*msg) + (reply ? 0 : SCIF_REPLY_ROOM);
	struct kvec kv = { .iov_base = (void *)msg, .iov_len = sizeof(*msg) };
	struct iov_iter iter;
	int err = 0;

	mutex_lock(&node->tx_mutex);
	while (READ_ONCE(node->online) && scif_rb_tx_room(&node->rb) < need) {
		if (scif_rb_tx_broken(&node->rb) || scif_node_tx_stalled(node)) {
			scif_node_protocol_error(node);
			err = -ENODEV;
			goto out;
		}
		/* Ask for a doorbell once the peer has made room. */
		WRITE_ONCE(node->rb.remote->rx_waiting, 1);
		/* The flag must be visible before we look at the room again. */
		mb();
		if (scif_rb_tx_room(&node->rb) >= need)
			break;
		mutex_unlock(&node->tx_mutex);
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			goto out_unlocked;
		}
		if (reply)
			scif_node_reply_waits(node, true);
		wait_event_timeout(node->tx_wq, scif_node_tx_ready(node, need),
				   SCIF_TX_RECHECK);
		mutex_lock(&node->tx_mutex);
	}
	if (!READ_ONCE(node->online)) {
		err = -ENODEV;
		goto out;
	}
	iov_iter_kvec(&iter, ITER_SOURCE, &kv, 1, sizeof(*msg));
	scif_rb_put(&node->rb, &iter);
	node->tx_full_since = 0;
	/* Stable: node down clears it under tx_mutex, after online. */
	node->hw->ops->ring(node->hw, node->hw_ctx);
out:
	mutex_unlock(&node->tx_mutex);
out_unlocked:
	if (reply)
		scif_node_reply_waits(node, false);
	return err;
}

/**
 * scif_node_send() - send a node message
 * @node: the destination node
 * @msg: the message
 *
 * Sleeps while the peer's queue is full, or nearly: the last
 * SCIF_REPLY_ROOM bytes are kept for replies.  Only a fatal signal or the
 * loss of the node ends the wait early; a read count from the peer that
 * makes no sense is a protocol error, which takes the node offline.
 *
 * Context: process context; takes @node->tx_mutex.
 * Return: 0, -ENODEV if the node is gone, or -EINTR.
 */
int scif_node_send(struct scif_node *node, const struct scif_msg *msg)
{
	return __scif_node_send(node, msg, false);
}

/* Put @r, filled, on @node's reply queue and kick the reply work. */
static void scif_node_reply_queue(struct scif_node *node, struct scif_reply *r)
{
	spin_lock(&node->reply_lock);
	list_add_tail(&r->list, &node->replies);
	node->nr_replies++;
	node->max_replies = max(node->max_replies, node->nr_replies);
	spin_unlock(&node->reply_lock);
	queue_work(scif_info.wq, &node->reply_work);
}

/**
 * scif_node_reply() - queue a message for sending from process context
 * @node: the destination node
 * @msg: the message, copied
 *
 * For the node's rx_work, which must not wait for room in the peer's
 * queue.  The queue is bounded: rx_work stops taking messages from a node
 * with SCIF_REPLY_HIGH replies queued for it, and a node that lets
 * SCIF_REPLY_MAX pile up (or whose reply cannot be allocated) is taken
 * offline, as it no longer takes what it asks for; the reply is then
 * dropped with the node.  A reply sent outside rx_work whose number is
 * not bounded by what the peer asked must use a reply reserved in
 * advance (scif_node_reply_reserve()) instead.
 *
 * Context: process context.
 */
void scif_node_reply(struct scif_node *node, const struct scif_msg *msg)
{
	struct scif_reply *r = NULL;

	/* (Not under fail_alloc: a lost reply fails the node, see above.) */
	if (READ_ONCE(node->nr_replies) < SCIF_REPLY_MAX)
		r = kmalloc(sizeof(*r), GFP_KERNEL | __GFP_NOWARN);
	if (!r) {
		scif_node_protocol_error(node);
		return;
	}
	r->msg = *msg;
	scif_node_reply_queue(node, r);
}

/**
 * scif_node_reply_reserve() - set aside a reply for later
 *
 * For an answer the node owes whatever happens, sent later from any
 * process context (an UNREGISTER_ACK sent when the last RMA lets go of a
 * window): the memory is taken, and charged to the caller's memory
 * cgroup, when the object that owes it is made, so sending it can
 * neither fail nor count against SCIF_REPLY_MAX.  Such replies are
 * bounded by the objects that reserve them.
 *
 * Context: process context.
 * Return: the reply, to be given to scif_node_reply_reserved() or
 * scif_node_reply_unreserve(), or NULL if out of memory.
 */
struct scif_reply *scif_node_reply_reserve(void)
{
	return scif_kzalloc(sizeof(struct scif_reply), GFP_KERNEL_ACCOUNT);
}

/**
 * scif_node_reply_unreserve() - give back a reply that was not sent
 * @r: from scif_node_reply_reserve(), or NULL
 *
 * Context: any context.
 */
void scif_node_reply_unreserve(struct scif_reply *r)
{
	kfree(r);
}

/**
 * scif_node_reply_reserved() - queue a message in a reserved reply
 * @node: the destination node
 * @r: from scif_node_reply_reserve(); the reply queue takes it over
 * @msg: the message, copied
 *
 * Unlike scif_node_reply(), never takes the node offline: the reply's
 * memory exists already.  It still counts toward SCIF_REPLY_HIGH, which
 * pauses rx_work until the queue drains.
 *
 * Context: process context (any, not only rx_work).
 */
void scif_node_reply_reserved(struct scif_node *node, struct scif_reply *r,
			      const struct scif_msg *msg)
{
	r->msg = *msg;
	scif_node_reply_queue(node, r);
}

static void scif_node_reply_work(struct work_struct *work)
{
	struct scif_node *node = container_of(work, struct scif_node,
					      reply_work);
	struct scif_reply *r;
	bool resume;

	if (scif_node_test_held(node, 2))
		return;
	for (;;) {
		spin_lock(&node->reply_lock);
		r = list_first_entry_or_null(&node->replies, struct scif_reply,
					     list);
		if (r) {
			list_del(&r->list);
			node->nr_replies--;
		}
		/* rx_work paused for us: let it go on once below the mark. */
		resume = node->rx_throttled &&
			 node->nr_replies < SCIF_REPLY_HIGH / 2;
		if (resume)
			node->rx_throttled = false;
		spin_unlock(&node->reply_lock);
		if (resume)
			queue_work(scif_info.wq, &node->rx_work);
		if (!r)
			return;
		__scif_node_send(node, &r->msg, true);
		kfree(r);
		cond_resched();
	}
}

static void scif_node_drop_replies(struct scif_node *node)
{
	struct scif_reply *r, *tmp;

	spin_lock(&node->reply_lock);
	list_for_each_entry_safe(r, tmp, &node->replies, list) {
		list_del(&r->list);
		kfree(r);
	}
	node->nr_replies = 0;
	node->rx_throttled = false;
	spin_unlock(&node->reply_lock);
}

/**
 * scif_node_defer_get() - count a request whose answer rx_work leaves for later
 * @node: the node that asked
 *
 * For a handler that takes a request in rx_work and serves it from a
 * work item (a copy too slow for rx_work, see scif_rma.c).  rx_work takes
 * no new message from a node with SCIF_NODE_DEFER_MAX such requests
 * under way, so a peer cannot make this node queue more; and a node that
 * goes offline waits for them before it drops its replies, so that no
 * answer outlives the node's life.  The work item queues its answer
 * (from a reply reserved in rx_work), then calls scif_node_defer_put().
 *
 * Context: the node's rx_work.
 * Return: true if counted; false at the bound, when the caller must
 * serve the request at once instead.
 */
bool scif_node_defer_get(struct scif_node *node)
{
	bool ok;

	spin_lock(&node->reply_lock);
	ok = node->nr_deferred < SCIF_NODE_DEFER_MAX;
	if (ok) {
		node->nr_deferred++;
		node->max_deferred = max(node->max_deferred,
					 node->nr_deferred);
	}
	spin_unlock(&node->reply_lock);
	return ok;
}

/**
 * scif_node_defer_put() - a deferred request is answered
 * @node: the node that asked
 *
 * Lets rx_work take the node's messages again if it stopped for the
 * bound.  The caller must not touch what the node's life owns (its
 * endpoints, its bus) afterwards.
 *
 * Context: process context.
 */
void scif_node_defer_put(struct scif_node *node)
{
	bool resume, idle;

	spin_lock(&node->reply_lock);
	node->nr_deferred--;
	idle = !node->nr_deferred;
	resume = node->rx_throttled;
	if (resume)
		node->rx_throttled = false;
	spin_unlock(&node->reply_lock);
	if (resume)
		queue_work(scif_info.wq, &node->rx_work);
	if (idle)
		wake_up_all(&node->defer_wq);
}

static bool scif_node_defer_idle(struct scif_node *node)
{
	bool idle;

	spin_lock(&node->reply_lock);
	idle = !node->nr_deferred;
	spin_unlock(&node->reply_lock);
	return idle;
}

/* Whether rx_work must leave the node's messages be for now. */
static bool scif_node_rx_throttle(struct scif_node *node)
{
	bool stop;

	spin_lock(&node->reply_lock);
	stop = (node->nr_replies >= SCIF_REPLY_HIGH && !node->reply_waiting) ||
	       node->nr_deferred >= SCIF_NODE_DEFER_MAX;
	if (stop)
		node->rx_throttled = true;
	spin_unlock(&node->reply_lock);
	return stop;
}

/* 1 with a message in @msg, 0 if none is waiting, -EPROTO. */
static int scif_node_recv(struct scif_node *node, struct scif_msg *msg)
{
	struct kvec kv = { .iov_base = msg, .iov_len = sizeof(*msg) };
	struct iov_iter iter;
	u32 avail;
	int err;

	err = scif_rb_rx_avail(&node->rb, &avail);
	if (err)
		return err;
	if (avail < sizeof(*msg))
		return 0;
	iov_iter_kvec(&iter, ITER_DEST, &kv, 1, sizeof(*msg));
	return scif_rb_get(&node->rb, &iter) == sizeof(*msg);
}

/**
 * scif_node_progress() - a count that moves while a node works for us
 * @node: the node
 *
 * Moves each time this node handles a message of @node's, and when
 * @node is seen to have read further into our queue.  A caller that
 * waits for @node's answer to a request samples it: a peer that works
 * through a long queue (ours or its own) is slow, not broken, and only
 * one that lets it stand still while an answer is owed may be declared
 * failed.  The value itself means nothing.
 *
 * Context: any context.
 * Return: the count.
 */
unsigned long scif_node_progress(const struct scif_node *node)
{
	return READ_ONCE(node->rx_handled) + READ_ONCE(node->tx_read_seen);
}

static void scif_node_rx_work(struct work_struct *work)
{
	struct scif_node *node = container_of(work, struct scif_node, rx_work);
	unsigned int budget = SCIF_RX_BUDGET;
	struct scif_msg msg;
	int ret = 0;

	if (!READ_ONCE(node->online) || scif_node_test_held(node, 1))
		return;
	while (budget) {
		/* Replies pile up: its messages wait in its ring meanwhile. */
		if (scif_node_rx_throttle(node))
			break;
		ret = scif_node_recv(node, &msg);
		if (ret <= 0)
			break;
		scif_node_test_delay(SCIF_DELAY_RX_MSG);
		scif_node_events->message(node, &msg);
		WRITE_ONCE(node->rx_handled, node->rx_handled + 1);
		budget--;
	}
	if (ret < 0) {
		scif_node_protocol_error(node);
		return;
	}
	/* More may be waiting: let others run, then go on. */
	if (!budget)
		queue_work(scif_info.wq, &node->rx_work);

	WRITE_ONCE(node->tx_read_seen, READ_ONCE(node->rb.local->tx_read));
	if (READ_ONCE(node->rb.local->rx_waiting)) {
		WRITE_ONCE(node->rb.local->rx_waiting, 0);
		node->hw->ops->ring(node->hw, node->hw_ctx);
	}
	/* A doorbell may also mean the peer made room in its queue. */
	wake_up_all(&node->tx_wq);
}

/* The bus of @node and its context; under the caller's SRCU read lock. */
static struct scif_hw_dev *scif_node_bus(struct scif_node *node, void **ctx)
{
	/* Pairs with the release in scif_hw_node_up(): @hw_ctx is set. */
	struct scif_hw_dev *hw = smp_load_acquire(&node->hw);

	if (hw)
		*ctx = READ_ONCE(node->hw_ctx);
	return hw;
}

/**
 * scif_node_map() - map memory a peer published, for CPU access
 * @node: the peer
 * @addr: the address it published
 * @len: bytes to map
 *
 * The node may go at any time, and with it its bus: a caller that found
 * it online before sleeping gets -ENODEV here if it went meanwhile.
 *
 * Context: process context.
 * Return: the mapping, or an ERR_PTR(): -ENODEV if no bus reaches the
 * node any more, or the bus's error.
 */
void *scif_node_map(struct scif_node *node, u64 addr, size_t len)
{
	struct scif_hw_dev *hw;
	void *va = ERR_PTR(-ENODEV), *ctx;
	int idx;

	idx = srcu_read_lock(&scif_hw_srcu);
	hw = scif_node_bus(node, &ctx);
	if (hw)
		va = hw->ops->map_peer(hw, ctx, addr, len);
	srcu_read_unlock(&scif_hw_srcu, idx);
	return va;
}

/**
 * scif_node_unmap() - undo scif_node_map()
 * @node: the peer
 * @va: the mapping
 * @len: its length
 *
 * A no-op once no bus reaches the node: its mappings went with it.
 *
 * Context: process context.
 */
void scif_node_unmap(struct scif_node *node, void *va, size_t len)
{
	struct scif_hw_dev *hw;
	void *ctx;
	int idx;

	idx = srcu_read_lock(&scif_hw_srcu);
	hw = scif_node_bus(node, &ctx);
	if (hw)
		hw->ops->unmap_peer(hw, ctx, va, len);
	srcu_read_unlock(&scif_hw_srcu, idx);
}

/**
 * scif_node_peer_phys() - where the CPU reaches memory a peer published
 * @node: the peer
 * @addr: the address it published
 * @len: bytes
 * @phys: receives the physical address, for mapping into a process
 * @wc: receives whether it is to be mapped write-combined; may be NULL
 *
 * Context: any context that may take an SRCU read lock.
 * Return: 0, -EINVAL if the bus does not reach the range, -ENODEV if no
 * bus reaches the node any more or the bus cannot map peer memory into
 * processes.
 */
int scif_node_peer_phys(struct scif_node *node, u64 addr, size_t len,
			phys_addr_t *phys, bool *wc)
{
	struct scif_hw_dev *hw;
	int idx, err = -ENODEV;
	void *ctx;

	idx = srcu_read_lock(&scif_hw_srcu);
	hw = scif_node_bus(node, &ctx);
	if (hw && hw->ops->peer_phys) {
		if (wc)
			*wc = hw->peer_wc;
		err = hw->ops->peer_phys(hw, ctx, addr, len, phys);
	}
	srcu_read_unlock(&scif_hw_srcu, idx);
	return err;
}

/**
 * scif_node_numa() - the NUMA node of the bus that reaches a node
 * @node: the node
 *
 * Context: any context that may take an SRCU read lock.
 * Return: the NUMA node of the bus's device, or NUMA_NO_NODE if no bus
 * reaches the node any more.
 */
int scif_node_numa(struct scif_node *node)
{
	struct scif_hw_dev *hw;
	int idx, numa = NUMA_NO_NODE;
	void *ctx;

	idx = srcu_read_lock(&scif_hw_srcu);
	hw = scif_node_bus(node, &ctx);
	if (hw)
		numa = dev_to_node(hw->dev);
	srcu_read_unlock(&scif_hw_srcu, idx);
	return numa;
}

/**
 * scif_lmap_init() - give a local map room for @max ranges
 * @lm: an empty map (zeroed, or unmapped by scif_node_unmap_local())
 * @max: ranges it will hold; 1 needs no allocation
 * @gfp: for the array
 *
 * A zeroed map has room for one range without this call.
 *
 * Context: process context; may sleep.
 * Return: 0 or -ENOMEM.
 */
int scif_lmap_init(struct scif_lmap *lm, unsigned int max, gfp_t gfp)
{
	memset(lm, 0, sizeof(*lm));
	if (max <= 1)
		return 0;
	lm->ent = scif_kvcalloc(max, sizeof(*lm->ent), gfp);
	if (!lm->ent)
		return -ENOMEM;
	lm->max = max;
	return 0;
}

SCIF_EXPORT_IF_KUNIT(scif_lmap_init);

/**
 * scif_node_map_local() - make local memory reachable by a node
 * @node: the peer that will be given the address
 * @lm: the owner's map, empty or already mapping ranges for @node
 * @phys: physical address of the memory
 * @len: its length
 * @addr: receives the address to hand @node
 *
 * The range stays mapped until scif_node_unmap_local() on @lm or, if the
 * node goes first, until scif_hw_node_down() for it.
 *
 * Context: process context; may sleep; takes @node->lmap_lock.
 * Return: 0, -ENODEV if no bus reaches the node any more, -ENOSPC if @lm
 * is full or maps for another node, or the bus's error.
 */
int scif_node_map_local(struct scif_node *node, struct scif_lmap *lm,
			phys_addr_t phys, size_t len, u64 *addr)
{
	struct scif_hw_dev *hw;
	int err;

	if (!lm->ent) {
		lm->ent = &lm->one;
		lm->max = 1;
	}
	mutex_lock(&node->lmap_lock);
	hw = node->lmap_hw;
	err = -ENODEV;
	if (!hw)
		goto out;
	err = -ENOSPC;
	if (WARN_ON_ONCE(lm->nr >= lm->max ||
			 (lm->node && lm->node != node)))
		goto out;
	err = hw->ops->map_local(hw, node->lmap_ctx, phys, len, addr);
	if (err)
		goto out;
	lm->ent[lm->nr].phys = phys;
	lm->ent[lm->nr].len = len;
	lm->ent[lm->nr].addr = *addr;
	lm->nr++;
	atomic_inc(&scif_info.local_maps);
	if (!lm->node) {
		lm->node = node;
		list_add_tail(&lm->link, &node->lmaps);
	}
out:
	mutex_unlock(&node->lmap_lock);
	return err;
}

SCIF_EXPORT_IF_KUNIT(scif_node_map_local);

/* Unmap every range of @lm; under the node's lmap_lock. */
static void scif_lmap_drop(struct scif_node *node, struct scif_lmap *lm)
{
	struct scif_hw_dev *hw = node->lmap_hw;
	struct scif_lmap_ent *e;

	lockdep_assert_held(&node->lmap_lock);
	while (lm->nr) {
		e = &lm->ent[--lm->nr];
		hw->ops->unmap_local(hw, node->lmap_ctx, e->phys, e->len,
				     e->addr);
		atomic_dec(&scif_info.local_maps);
	}
	list_del(&lm->link);
	/* Read unlocked by scif_node_unmap_local(). */
	WRITE_ONCE(lm->node, NULL);
}

/**
 * scif_node_unmap_local() - undo every scif_node_map_local() on @lm
 * @lm: the map; may be empty, or emptied by its node's going
 *
 * The map keeps its room and may be used again, for any node.
 *
 * Context: process context; may sleep.
 */
void scif_node_unmap_local(struct scif_lmap *lm)
{
	struct scif_node *node = READ_ONCE(lm->node);

	/* Only the owner maps into @lm: a set node changes only to NULL. */
	if (!node)
		return;
	mutex_lock(&node->lmap_lock);
	if (lm->node)
		scif_lmap_drop(node, lm);
	mutex_unlock(&node->lmap_lock);
}

/**
 * scif_lmap_free() - unmap @lm and free its room
 * @lm: the map
 *
 * Context: process context; may sleep.
 */
void scif_lmap_free(struct scif_lmap *lm)
{
	scif_node_unmap_local(lm);
	if (lm->ent != &lm->one)
		kvfree(lm->ent);
	lm->ent = NULL;
	lm->max = 0;
}

SCIF_EXPORT_IF_KUNIT(scif_lmap_free);

/**
 * scif_node_peer_dma_map() - map a peer's memory for a local device
 * @node: the peer
 * @pd: the owner's record, zeroed or unmapped
 * @dev: the device
 * @addr: the address the peer published
 * @len: bytes
 * @dir: the direction of the device's accesses
 *
 * The range stays mapped, its DMA address in @pd->dma, until
 * scif_node_peer_dma_unmap() of @pd or, if the node goes first, until
 * scif_hw_node_down() for it.
 *
 * Context: process context; may sleep; takes @node->lmap_lock.
 * Return: 0, -ENODEV if no bus reaches the node any more, -EOPNOTSUPP if
 * its bus cannot map peer memory for devices, or the bus's error.
 */
int scif_node_peer_dma_map(struct scif_node *node, struct scif_pdmap *pd,
			   struct device *dev, u64 addr, size_t len,
			   enum dma_data_direction dir)
{
	struct scif_hw_dev *hw;
	int err = -ENODEV;

	mutex_lock(&node->lmap_lock);
	hw = node->lmap_hw;
	if (!hw)
		goto out;
	err = -EOPNOTSUPP;
	if (!hw->ops->peer_dma_map || !hw->ops->peer_dma_unmap)
		goto out;
	err = hw->ops->peer_dma_map(hw, node->lmap_ctx, dev, addr, len, dir,
				    &pd->dma);
	if (err)
		goto out;
	pd->dev = dev;
	pd->addr = addr;
	pd->len = len;
	pd->dir = dir;
	pd->node = node;
	list_add_tail(&pd->link, &node->pdmaps);
out:
	mutex_unlock(&node->lmap_lock);
	return err;
}

/* Unmap @pd; under the node's lmap_lock. */
static void scif_pdmap_drop(struct scif_node *node, struct scif_pdmap *pd)
{
	struct scif_hw_dev *hw = node->lmap_hw;

	lockdep_assert_held(&node->lmap_lock);
	hw->ops->peer_dma_unmap(hw, pd->dev, pd->addr, pd->dma, pd->len,
				pd->dir);
	list_del(&pd->link);
	/* Read unlocked by scif_node_peer_dma_unmap(). */
	WRITE_ONCE(pd->node, NULL);
}

/**
 * scif_node_peer_dma_unmap() - undo scif_node_peer_dma_map()
 * @pd: the record; may be unmapped already (by its node's going)
 *
 * Context: process context; may sleep.
 */
void scif_node_peer_dma_unmap(struct scif_pdmap *pd)
{
	struct scif_node *node = READ_ONCE(pd->node);

	/* Only the owner maps @pd: a set node changes only to NULL. */
	if (!node)
		return;
	mutex_lock(&node->lmap_lock);
	if (pd->node)
		scif_pdmap_drop(node, pd);
	mutex_unlock(&node->lmap_lock);
}

/*
 * The node goes: unmap what is left mapped for it, and refuse mappings
 * from now on.  Its bus context stays valid until this returns.
 */
/**
 * scif_node_hold_get() - count a device mapping of a node's windows
 * @node: the node, online: the caller holds a window of its current
 *	life, under the endpoint's rma.lock
 *
 * Until the matching scif_node_hold_put(), a going of the node closes its
 * aperture and keeps its next life out (Documentation/scif/devices.rst,
 * "When the peer goes").
 *
 * Context: process context; takes the node's lmap_lock.
 */
void scif_node_hold_get(struct scif_node *node)
{
	mutex_lock(&node->lmap_lock);
	node->held_maps++;
	mutex_unlock(&node->lmap_lock);
}

/**
 * scif_node_hold_put() - a device mapping of a node's windows is released
 * @node: the node
 *
 * The last one opens the aperture again if the node's going closed it.
 *
 * Context: process context; takes the node's lmap_lock.
 */
void scif_node_hold_put(struct scif_node *node)
{
	struct scif_hw_dev *hw;

	mutex_lock(&node->lmap_lock);
	if (!WARN_ON_ONCE(!node->held_maps) && !--node->held_maps) {
		hw = node->ap_hw;
		node->ap_hw = NULL;
		if (hw) {
			hw->ops->close_aperture(hw, node->id, false);
			pr_info("node %u: aperture open again (device mappings released)\n",
				node->id);
		}
	}
	mutex_unlock(&node->lmap_lock);
}

/**
 * scif_node_can_close() - whether a node's bus can close its aperture
 * @node: the node
 *
 * Context: process context; takes the node's lmap_lock.
 * Return: true if the bus that reaches it now has close_aperture.
 */
bool scif_node_can_close(struct scif_node *node)
{
	bool can;

	mutex_lock(&node->lmap_lock);
	can = node->lmap_hw && node->lmap_hw->ops->close_aperture;
	mutex_unlock(&node->lmap_lock);
	return can;
}

static void scif_node_drop_lmaps(struct scif_node *n)
{
	struct scif_pdmap *pd, *ptmp;
	struct scif_lmap *lm, *tmp;

	mutex_lock(&n->lmap_lock);
	if (n->lmap_hw) {
		list_for_each_entry_safe(lm, tmp, &n->lmaps, link)
			scif_lmap_drop(n, lm);
		list_for_each_entry_safe(pd, ptmp, &n->pdmaps, link)
			scif_pdmap_drop(n, pd);
		/* Devices may still hold addresses of this life: close. */
		if (n->held_maps && n->lmap_hw->ops->close_aperture &&
		    !n->ap_hw) {
			n->ap_hw = n->lmap_hw;
			n->ap_hw->ops->close_aperture(n->ap_hw, n->id, true);
			pr_info("node %u: aperture closed while %u device mappings of it remain\n",
				n->id, n->held_maps);
		}
	}
	n->lmap_hw = NULL;
	n->lmap_ctx = NULL;
	mutex_unlock(&n->lmap_lock);
}

/* Whether @rb's local half suits @hw's node: same source of memory. */
static bool scif_area_fits(struct scif_rb *rb, struct scif_hw_dev *hw)
{
	if (!rb->local)
		return false;
	if (hw->ops->alloc_local)
		return rb->area_hw == hw;
	return !rb->area_hw;
}

/*
 * @pin: hold a reference to the bus's module while the area lives.  Not
 * for a node queue pair: it is freed when its node goes down, which
 * unloading the bus's module does (a reference would forbid that).
 * A bus's area is zeroed in whole pages, as the page allocator's are
 * (scif_qp_alloc_gfp()): its pool hands the same pages to one connection
 * after another, and the user-space data path maps the last page whole.
 */
static int scif_area_alloc(struct scif_rb *rb, struct scif_hw_dev *hw,
			   u32 rx_size, gfp_t gfp, bool pin)
{
	size_t len = scif_qp_len(rx_size);
	void *va;

	if (!hw->ops->alloc_local) {
		rb->local = scif_qp_alloc_gfp(rx_size, gfp);
		if (!rb->local)
			return -ENOMEM;
		rb->area_phys = virt_to_phys(rb->local);
		rb->area_hw = NULL;
		rb->rx_size = rx_size;
		return 0;
	}
	if (pin && !try_module_get(hw->owner))
		return -ENODEV;
	va = scif_fail_alloc() ? NULL :
	     hw->ops->alloc_local(hw, len, gfp, &rb->area_phys);
	if (!va) {
		if (pin)
			module_put(hw->owner);
		return -ENOMEM;
	}
	memset(va, 0, PAGE_ALIGN(len));
	rb->area_pinned = pin;
	rb->local = va;
	rb->area_hw = hw;
	rb->rx_size = rx_size;
	return 0;
}

/**
 * scif_node_area_get() - the local half of a queue pair with @node
 * @node: the peer
 * @rb: the queue pair; a local half it has is kept if it came from where
 *	@node's bus wants it, else freed
 * @rx_size: receive ring size of a new half
 * @gfp: GFP_KERNEL, or GFP_KERNEL_ACCOUNT for a ring a user asked for
 *
 * A new half comes from the bus's alloc_local if it has one, else from
 * the page allocator.  A new or kept half is zeroed whole, to the end of
 * its last page: a kept one was mapped for the peer of an earlier
 * attempt, and processes map whole pages.  The caller maps it for @node
 * with scif_node_map_area().
 *
 * Context: process context; may sleep.
 * Return: 0, -ENODEV if no bus reaches the node any more, or -ENOMEM.
 */
int scif_node_area_get(struct scif_node *node, struct scif_rb *rb,
		       u32 rx_size, gfp_t gfp)
{
	struct scif_hw_dev *hw;
	int idx, err = 0;
	void *ctx;

	idx = srcu_read_lock(&scif_hw_srcu);
	hw = scif_node_bus(node, &ctx);
	if (!hw) {
		err = -ENODEV;
	} else if (scif_area_fits(rb, hw)) {
		memset(rb->local, 0, PAGE_ALIGN(scif_qp_len(rb->rx_size)));
	} else {
		scif_node_area_free(rb);
		err = scif_area_alloc(rb, hw, rx_size, gfp, rb != &node->rb);
	}
	srcu_read_unlock(&scif_hw_srcu, idx);
	return err;
}

/**
 * scif_node_area_free() - unmap and free the local half of a queue pair
 * @rb: the queue pair; its local half may be NULL
 *
 * Context: process context; may sleep.
 */
void scif_node_area_free(struct scif_rb *rb)
{
	struct scif_hw_dev *hw = rb->area_hw;

	scif_node_unmap_local(&rb->lmap);
	if (!rb->local)
		return;
	if (hw) {
		hw->ops->free_local(hw, rb->local, rb->area_phys,
				    sizeof(*rb->local) + rb->rx_size);
		if (rb->area_pinned)
			module_put(hw->owner);
		rb->area_pinned = false;
	} else {
		scif_qp_free(rb->local, rb->rx_size);
	}
	rb->local = NULL;
	rb->area_hw = NULL;
}

/**
 * scif_node_map_area() - map the local half of @rb for @node
 * @node: the peer
 * @rb: the queue pair, with its local half (scif_node_area_get())
 * @addr: receives the address to hand @node
 *
 * What @rb->lmap mapped before (an earlier connection) is unmapped.
 *
 * Context: process context; may sleep.
 * Return: 0 or an error of scif_node_map_local().
 */
int scif_node_map_area(struct scif_node *node, struct scif_rb *rb, u64 *addr)
{
	scif_node_unmap_local(&rb->lmap);
	return scif_node_map_local(node, &rb->lmap, rb->area_phys,
				   sizeof(*rb->local) + rb->rx_size, addr);
}

/* Callers hold scif_info.node_lock. */
static void scif_clients_probe(struct scif_node *node)
{
	struct scif_client *client;

	list_for_each_entry(client, &scif_info.clients, list)
		if (client->probe)
			client->probe(&node->peer);
}

static void scif_clients_remove(struct scif_node *node)
{
	struct scif_client *client;

	list_for_each_entry(client, &scif_info.clients, list)
		if (client->remove)
			client->remove(&node->peer);
}

/*
 * Publish our half of the node queue pair (once per life of the node)
 * and map the peer's.  -EAGAIN while the peer has not published its
 * half: ours stays published, so two nodes coming up together meet.
 */
static int scif_node_connect_qp(struct scif_node *node)
{
	size_t len = scif_qp_len(SCIF_NODE_QP_SIZE);
	struct scif_hw_dev *hw = node->hw;
	struct scif_qp_shm *remote;
	u64 addr;
	int err;

	if (!node->rb.local) {
		err = scif_node_area_get(node, &node->rb, SCIF_NODE_QP_SIZE,
					 GFP_KERNEL);
		if (err)
			return err;
		node->rb.tx_size = SCIF_NODE_QP_SIZE;
		node->rb.tx_write = 0;
		scif_rb_set_skew(&node->rb, 0);
		node->rb.rx_read = 0;
		err = scif_node_map_area(node, &node->rb, &addr);
		if (err)
			return err;
		hw->ops->publish_qp(hw, node->hw_ctx, addr);
	}
	addr = hw->ops->peer_qp(hw, node->hw_ctx);
	if (!addr)
		return -EAGAIN;
	remote = scif_node_map(node, addr, len);
	if (IS_ERR(remote))
		return PTR_ERR(remote);
	node->rb.remote = remote;
	return 0;
}

/* Undo scif_node_connect_qp(); the caller holds node_lock. */
static void scif_node_release_qp(struct scif_node *n)
{
	struct scif_hw_dev *hw = n->hw;

	lockdep_assert_held(&scif_info.node_lock);
	if (n->rb.lmap.node)
		hw->ops->publish_qp(hw, n->hw_ctx, 0);
	if (n->rb.remote)
		scif_node_unmap(n, n->rb.remote,
				scif_qp_len(SCIF_NODE_QP_SIZE));
	n->rb.remote = NULL;
	scif_node_area_free(&n->rb);
	/* Whatever else is still mapped for the node. */
	scif_node_drop_lmaps(n);
	scif_node_events->absent(n);
	/* Readers outside node_lock: see scif_hw_srcu. */
	WRITE_ONCE(n->hw, NULL);
}

/**
 * scif_hw_node_up() - a bus reports that it reaches a node
 * @hw: the bus
 * @node: the node's id
 * @ctx: the bus's context for the node, handed back to every per-node
 *	operation until scif_hw_node_down() for the node returns (or this
 *	call fails with an error other than -EAGAIN)
 *
 * Sets up the node queue pair and tells kernel clients of the node.  On
 * -EAGAIN the bus calls again later with the same @ctx (or
 * scif_hw_node_down() to give up); this node's half of the queue pair
 * stays published meanwhile.
 *
 * Context: process context; may sleep.
 * Return: 0, -EINVAL for a bad id, -EBUSY if the
 * node is online, was taken offline for a protocol error and not reported
 * down since, or is reached through another bus or context, -EAGAIN if
 * the node has not published its half of the queue pair yet, or another
 * negative errno.
 */
int scif_hw_node_up(struct scif_hw_dev *hw, u16 node, void *ctx)
{
	struct scif_node *n;
	int err;

	if (node >= SCIF_MAX_NODES)
		return -EINVAL;
	n = &scif_info.nodes[node];
	mutex_lock(&scif_info.node_lock);
	if (n->online || n->failed ||
	    (n->hw && (n->hw != hw || n->hw_ctx != ctx))) {
		err = -EBUSY;
		goto out;
	}
	/*
	 * Devices may still hold addresses of its last life: it waits.  A
	 * bus that came (back) since that life closes its aperture now.
	 */
	mutex_lock(&n->lmap_lock);
	err = !n->hw && n->held_maps ? -EAGAIN : 0;
	if (err && !n->ap_hw && hw->ops->close_aperture) {
		n->ap_hw = hw;
		hw->ops->close_aperture(hw, node, true);
	}
	mutex_unlock(&n->lmap_lock);
	if (err)
		goto out;
	if (!n->hw) {
		WRITE_ONCE(n->heartbeat, 0);
		WRITE_ONCE(n->hw_ctx, ctx);
		mutex_lock(&n->lmap_lock);
		n->lmap_hw = hw;
		n->lmap_ctx = ctx;
		mutex_unlock(&n->lmap_lock);
	}
	/* The context first: see scif_node_bus(). */
	smp_store_release(&n->hw, hw);
	n->tx_full_since = 0;
	n->stall_reported = false;
	spin_lock(&n->reply_lock);
	n->max_replies = 0;
	n->max_deferred = 0;
	spin_unlock(&n->reply_lock);
	err = scif_node_connect_qp(n);
	if (err) {
		if (err != -EAGAIN)
			scif_node_release_qp(n);
		goto out;
	}
	WRITE_ONCE(n->online, true);
	WRITE_ONCE(n->generation, n->generation + 1);
	pr_debug("node %u: joining -> online (bus %s, generation %u)\n",
		 node, hw->name, n->generation);
	trace_scif_node_up(node, hw->name, n->generation, "");
	scif_node_events->online(n);
	/* The peer may have sent before we were online. */
	queue_work(scif_info.wq, &n->rx_work);
	scif_clients_probe(n);
out:
	if (err == -EAGAIN)
		pr_debug("node %u: joining (bus %s): waiting for its queue\n",
			 node, hw->name);
	else if (err)
		pr_debug("node %u: not brought up (bus %s): %d\n", node,
			 hw->name, err);
	mutex_unlock(&scif_info.node_lock);
	return err;
}
EXPORT_SYMBOL_GPL(scif_hw_node_up);

/**
 * scif_hw_node_heartbeat() - a bus saw a node's heartbeat
 * @hw: the bus
 * @node: the node's id
 *
 * Optional for a bus that watches its peers' heartbeats: it feeds the
 * node's heartbeat age in sysfs (heartbeat_age_ms).
 *
 * Context: any context.
 */
void scif_hw_node_heartbeat(struct scif_hw_dev *hw, u16 node)
{
	struct scif_node *n;

	if (node >= SCIF_MAX_NODES)
		return;
	n = &scif_info.nodes[node];
	if (READ_ONCE(n->hw) == hw)
		WRITE_ONCE(n->heartbeat, jiffies | 1);
}
EXPORT_SYMBOL_GPL(scif_hw_node_heartbeat);

/**
 * scif_node_held_count() - the device mappings of a node not yet released
 * @node: the node
 *
 * Mappings of the node's windows made in its current or last life
 * (scif_node_hold_get()); while the node is down and this is not 0, its
 * next life waits (the "held" state).
 *
 * Context: process context; takes @node's lmap_lock.
 * Return: the count, a snapshot.
 */
unsigned int scif_node_held_count(struct scif_node *node)
{
	unsigned int held;

	mutex_lock(&node->lmap_lock);
	held = node->held_maps;
	mutex_unlock(&node->lmap_lock);
	return held;
}

/**
 * scif_node_state_name() - the state of a node, as sysfs shows it
 * @node: the node
 *
 * Context: process context, with scif_info.node_lock held.
 * Return: "absent", "joining", "online", "failed" or "held" (gone, but
 * devices may still hold addresses of it: its next life waits).
 */
const char *scif_node_state_name(struct scif_node *node)
{
	lockdep_assert_held(&scif_info.node_lock);
	if (node->failed)
		return "failed";
	if (node->online)
		return "online";
	if (!node->hw && scif_node_held_count(node))
		return "held";
	return node->hw ? "joining" : "absent";
}

/**
 * scif_node_stats_sum() - add up a node's per-CPU counters
 * @node: the node
 * @sum: receives the totals
 *
 * Context: any context.  Counters updated meanwhile may or may not be in.
 */
void scif_node_stats_sum(struct scif_node *node, struct scif_stats *sum)
{
	const struct scif_stats *c;
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		c = per_cpu_ptr(node->stats, cpu);
		sum->tx_bytes += READ_ONCE(c->tx_bytes);
		sum->tx_msgs += READ_ONCE(c->tx_msgs);
		sum->rx_bytes += READ_ONCE(c->rx_bytes);
		sum->rx_msgs += READ_ONCE(c->rx_msgs);
		sum->rma_ops += READ_ONCE(c->rma_ops);
		sum->rma_bytes += READ_ONCE(c->rma_bytes);
		sum->errors += READ_ONCE(c->errors);
		sum->user_tx_bytes += READ_ONCE(c->user_tx_bytes);
		sum->user_tx_msgs += READ_ONCE(c->user_tx_msgs);
		sum->user_rx_bytes += READ_ONCE(c->user_rx_bytes);
		sum->user_rx_msgs += READ_ONCE(c->user_rx_msgs);
	}
}

/*
 * Take an online node offline: clients are told, rx_work stops, every
 * endpoint connected to it is reset (@hold: keeping what the node may
 * still write into, see the notes; only fail_work holds) and queued
 * replies are dropped.
 * Called and returns with scif_info.node_lock held; drops it meanwhile.
 */
static void scif_node_offline(struct scif_node *n, bool hold)
{
	pr_debug("node %u: online -> %s\n", n->id, hold ? "failed" : "absent");
	WRITE_ONCE(n->online, false);
	wake_up_all(&n->tx_wq);
	scif_clients_remove(n);
	mutex_unlock(&scif_info.node_lock);

	cancel_work_sync(&n->rx_work);
	/* rx_work is stopped: nothing queues fail_work any more. */
	if (!hold)	/* (not called from fail_work) */
		cancel_work_sync(&n->fail_work);
	scif_node_events->lost(n, hold);
	/* Requests served later queue their answers first. */
	wait_event(n->defer_wq, scif_node_defer_idle(n));
	cancel_work_sync(&n->reply_work);

	mutex_lock(&scif_info.node_lock);
	mutex_lock(&n->tx_mutex);
	scif_node_drop_replies(n);
	mutex_unlock(&n->tx_mutex);
}

/**
 * scif_hw_node_down() - a bus reports that a node is gone
 * @hw: the bus
 * @node: the node's id
 *
 * Every endpoint connected to the node is reset, every waiter woken and
 * the node queue pair released.  For a node taken offline for a protocol
 * error, this releases what was kept for it.
 *
 * Context: process context; may sleep.
 */
void scif_hw_node_down(struct scif_hw_dev *hw, u16 node)
{
	struct scif_node *n;
	bool held;

	if (node >= SCIF_MAX_NODES)
		return;
	n = &scif_info.nodes[node];
	/* A protocol error being handled completes first. */
	cancel_work_sync(&n->fail_work);
	mutex_lock(&scif_info.node_lock);
	if (n->hw != hw)
		goto out;
	if (n->online) {
		scif_node_offline(n, false);
	} else if (n->failed) {
		mutex_unlock(&scif_info.node_lock);
		scif_node_events->lost(n, false);
		mutex_lock(&scif_info.node_lock);
	}
	held = n->failed;
	n->failed = false;
	mutex_lock(&n->tx_mutex);
	scif_node_release_qp(n);
	mutex_unlock(&n->tx_mutex);
	if (held)	/* a peer can fail and go again and again */
		pr_info_ratelimited("node %u gone; what was kept for it is freed\n",
				    node);
	pr_debug("node %u: %s -> absent (bus %s reports it down)\n", node,
		 held ? "failed" : "online or joining", hw->name);
	trace_scif_node_down(node, hw->name, n->generation,
			     held ? "failed" : "");
out:
	mutex_unlock(&scif_info.node_lock);
	/*
	 * Whoever found the node online before it went may be using the
	 * bus pointer it read (scif_node_map()...): the bus may free what
	 * it reaches once we return.
	 */
	synchronize_srcu(&scif_hw_srcu);
}
EXPORT_SYMBOL_GPL(scif_hw_node_down);

/*
 * Take a node that broke the protocol offline, keeping what it may
 * still write into until its bus reports it down.
 */
static void scif_node_fail(struct scif_node *n, const char *why)
{
	mutex_lock(&scif_info.node_lock);
	if (!n->online) {
		mutex_unlock(&scif_info.node_lock);
		return;
	}
	n->failed = true;
	atomic_inc(&scif_info.node_failures);
	scif_node_count_error(n);
	pr_warn_ratelimited("node %u %s: offline until it restarts\n",
			    n->id, why);
	trace_scif_node_failed(n->id, n->hw->name, n->generation, why);
	scif_node_offline(n, true);
	mutex_lock(&n->tx_mutex);
	if (n->rb.remote)
		scif_node_unmap(n, n->rb.remote, scif_qp_len(SCIF_NODE_QP_SIZE));
	n->rb.remote = NULL;
	/* The peer may learn from this that we dropped it. */
	n->hw->ops->publish_qp(n->hw, n->hw_ctx, 0);
	mutex_unlock(&n->tx_mutex);
	mutex_unlock(&scif_info.node_lock);
}

static void scif_node_fail_work(struct work_struct *work)
{
	struct scif_node *n = container_of(work, struct scif_node, fail_work);

	scif_node_fail(n, READ_ONCE(n->stall_reported) ?
		       "left its queue full" : "broke its node queue pair");
}

/**
 * scif_node_errno() - the error code a peer answered with, checked
 * @e: the positive errno from the peer's message (0: success)
 * @success: whether this answer may say success
 * @allowed: the errnos it may carry, 0-terminated
 *
 * ENOTCONN (the peer's endpoint is closing) means the connection is
 * going and becomes ECONNRESET wherever it is allowed.
 *
 * Context: any.
 * Return: 0 for an allowed success, -@e if @allowed has it, -ECONNRESET
 * for an allowed ENOTCONN, -EPROTO for anything else.
 */
int scif_node_errno(u64 e, bool success, const int *allowed)
{
	const int *a;

	if (!e)
		return success ? 0 : -EPROTO;
	for (a = allowed; *a; a++)
		if (e == (u64)*a)
			return e == ENOTCONN ? -ECONNRESET : -*a;
	return -EPROTO;
}

SCIF_EXPORT_IF_KUNIT(scif_node_errno);

/**
 * scif_node_protocol_error() - a node broke its node queue pair
 * @node: the node
 *
 * Context: any context; the node is taken offline from the workqueue.
 */
void scif_node_protocol_error(struct scif_node *node)
{
	queue_work(scif_info.wq, &node->fail_work);
}

/**
 * scif_hw_node_failed() - a bus finds a node that may still be alive unfit
 * @hw: the bus
 * @node: the node's id
 * @why: what was wrong, for the kernel log
 *
 * For a node whose bootstrap data turned invalid, or that went silent
 * without the bus being able to tell that it no longer writes into this
 * node's memory (a stalled peer that still reaches our RAM).  The node
 * is taken offline as for a protocol error: endpoints connected to it
 * are reset, new operations get -ENODEV, what it may write into stays,
 * and it stays offline until the bus calls scif_hw_node_down() (it
 * restarted, left, or can no longer reach us).
 *
 * Context: process context; may sleep.
 */
void scif_hw_node_failed(struct scif_hw_dev *hw, u16 node, const char *why)
{
	if (node >= SCIF_MAX_NODES || READ_ONCE(scif_info.nodes[node].hw) != hw)
		return;
	scif_node_fail(&scif_info.nodes[node], why);
}
EXPORT_SYMBOL_GPL(scif_hw_node_failed);

/**
 * scif_hw_doorbell() - a bus reports a doorbell from a node
 * @hw: the bus
 * @node: the node that rang
 *
 * Context: any context.
 */
void scif_hw_doorbell(struct scif_hw_dev *hw, u16 node)
{
	struct scif_node *n;

	if (node >= SCIF_MAX_NODES)
		return;
	n = &scif_info.nodes[node];
	if (READ_ONCE(n->online) && READ_ONCE(n->hw) == hw)
		queue_work(scif_info.wq, &n->rx_work);
}
EXPORT_SYMBOL_GPL(scif_hw_doorbell);

/*
 * Registered buses, and this node's id: fixed by the node_id parameter
 * or by the first bus that knows it (scif_self_by names it), checked
 * against every later one.  Until then the node is node 0 provisionally,
 * over the buses that reach only this node (self SCIF_HW_SELF_ANY),
 * which move when the id is fixed.  scif_bus_lock protects all of it and
 * is taken outside scif_info.node_lock.
 */
static DEFINE_MUTEX(scif_bus_lock);
static LIST_HEAD(scif_buses);
static bool scif_self_fixed;
static char scif_self_by[32];

static int node_id = -1;
module_param(node_id, int, 0444);
MODULE_PARM_DESC(node_id,
		 "This node's id (0..255); default -1: the first bus that knows it sets it (ivshmem: its IVPosition), node 0 until then");

/* -EINVAL, with a message, if @hw lacks the operation @what. */
static int scif_hw_need(const struct scif_hw_dev *hw, bool has,
			const char *what)
{
	if (has)
		return 0;
	dev_err(hw->dev, "scif: bus %s: no %s operation: refused\n",
		hw->name, what);
	return -EINVAL;
}

/* Whether @hw offers what the core needs. */
static int scif_hw_check(struct scif_hw_dev *hw)
{
	if (!hw->name || !hw->ops || !hw->dev) {
		pr_err("bus %s: no name, operations or device: refused\n",
		       hw->name ?: "(unnamed)");
		return -EINVAL;
	}
	if (scif_hw_need(hw, hw->ops->map_peer, "map_peer") ||
	    scif_hw_need(hw, hw->ops->unmap_peer, "unmap_peer") ||
	    scif_hw_need(hw, hw->ops->map_local, "map_local") ||
	    scif_hw_need(hw, hw->ops->unmap_local, "unmap_local") ||
	    scif_hw_need(hw, hw->ops->publish_qp, "publish_qp") ||
	    scif_hw_need(hw, hw->ops->peer_qp, "peer_qp") ||
	    scif_hw_need(hw, hw->ops->ring, "ring"))
		return -EINVAL;
	if (!hw->ops->alloc_local != !hw->ops->free_local) {
		dev_err(hw->dev, "scif: bus %s: alloc_local without free_local, or the reverse: refused\n",
			hw->name);
		return -EINVAL;
	}
	if (hw->self == SCIF_HW_SELF_ANY)
		return scif_hw_need(hw, hw->ops->self_moved, "self_moved");
	if (hw->self < 0 || hw->self >= SCIF_MAX_NODES) {
		dev_err(hw->dev, "scif: bus %s: node id %d out of range: refused\n",
			hw->name, hw->self);
		return -EINVAL;
	}
	return 0;
}

/* Apply @hw's idea of this node's id; under scif_bus_lock. */
static int scif_hw_claim_self(struct scif_hw_dev *hw)
{
	struct scif_hw_dev *b;
	u16 old = scif_info.self;
	int err;

	lockdep_assert_held(&scif_bus_lock);
	if (hw->self == SCIF_HW_SELF_ANY)
		return 0;
	if (scif_self_fixed) {
		if (hw->self == old)
			return 0;
		dev_err(hw->dev, "scif: bus %s says this is node %d, but it is node %u (set by %s): refused\n",
			hw->name, hw->self, old, scif_self_by);
		return -EINVAL;
	}
	scif_self_fixed = true;
	strscpy(scif_self_by, hw->name, sizeof(scif_self_by));
	if (hw->self == old)
		return 0;
	WRITE_ONCE(scif_info.self, hw->self);
	pr_info("this is node %d (from bus %s)\n", hw->self, hw->name);
	list_for_each_entry(b, &scif_buses, list) {
		if (b->self != SCIF_HW_SELF_ANY)
			continue;
		err = b->ops->self_moved(b, old, hw->self);
		if (err)
			dev_warn(b->dev, "scif: bus %s could not move to node %d: %d\n",
				 b->name, hw->self, err);
	}
	return 0;
}

/**
 * scif_hw_register() - a bus announces itself
 * @hw: the bus, with every mandatory operation, its device and its idea
 *	of this node's id (or SCIF_HW_SELF_ANY)
 *
 * The first bus that knows this node's id fixes it, unless the node_id
 * parameter did; a bus that disagrees with the fixed id is refused.
 *
 * Context: process context; may sleep.
 * Return: 0, or -EINVAL for a bus that lacks a mandatory operation or
 * disagrees about this node's id (a message says why).
 */
int scif_hw_register(struct scif_hw_dev *hw)
{
	int err;

	err = scif_hw_check(hw);
	if (err)
		return err;
	mutex_lock(&scif_bus_lock);
	err = scif_hw_claim_self(hw);
	if (!err) {
		get_device(hw->dev);
		get_device(hw->link_dev);
		list_add_tail(&hw->list, &scif_buses);
	}
	mutex_unlock(&scif_bus_lock);
	if (!err)
		dev_dbg(hw->dev, "scif: bus %s registered\n", hw->name);
	return err;
}
EXPORT_SYMBOL_GPL(scif_hw_register);

/**
 * scif_hw_unregister() - a bus goes away; every node it reached goes too
 * @hw: a registered bus
 *
 * This node's id stays as it is.
 *
 * Context: process context; may sleep.
 */
void scif_hw_unregister(struct scif_hw_dev *hw)
{
	struct scif_node *n;
	u16 id;

	for (id = 0; id < SCIF_MAX_NODES; id++) {
		n = &scif_info.nodes[id];
		if (READ_ONCE(n->hw) == hw)
			scif_hw_node_down(hw, id);
		/* An aperture it closed is its business once it goes. */
		mutex_lock(&n->lmap_lock);
		if (n->ap_hw == hw)
			n->ap_hw = NULL;
		mutex_unlock(&n->lmap_lock);
	}
	mutex_lock(&scif_bus_lock);
	list_del_init(&hw->list);
	mutex_unlock(&scif_bus_lock);
	put_device(hw->link_dev);
	put_device(hw->dev);
}
EXPORT_SYMBOL_GPL(scif_hw_unregister);

/**
 * scif_buses_show() - list the registered buses, for debugfs
 * @s: one line per bus: "<name> <device> <node>...", the nodes it
 *	reaches (up, or coming up)
 *
 * Context: process context; takes the bus list lock and node_lock.
 */
void scif_buses_show(struct seq_file *s)
{
	struct scif_hw_dev *hw;
	u16 id;

	mutex_lock(&scif_bus_lock);
	list_for_each_entry(hw, &scif_buses, list) {
		seq_printf(s, "%s %s", hw->name, dev_name(hw->dev));
		mutex_lock(&scif_info.node_lock);
		for (id = 0; id < SCIF_MAX_NODES; id++)
			if (scif_info.nodes[id].hw == hw)
				seq_printf(s, " %u", id);
		mutex_unlock(&scif_info.node_lock);
		seq_putc(s, '\n');
	}
	mutex_unlock(&scif_bus_lock);
}

/**
 * scif_get_node_ids() - list the nodes that are online
 * @nodes: array that receives up to @len node ids; may be NULL if @len is 0
 * @len: number of entries @nodes has room for; negative counts as 0
 * @self: receives the id of the local node
 *
 * Context: any context that may sleep.
 * Return: the number of nodes online, which may exceed @len; only the
 * first @len of them are stored.
 */
int scif_get_node_ids(u16 *nodes, int len, u16 *self)
{
	int online = 0;
	u16 id;

	*self = scif_info.self;
	mutex_lock(&scif_info.node_lock);
	for (id = 0; id < SCIF_MAX_NODES; id++) {
		if (!scif_info.nodes[id].online)
			continue;
		if (online < len)
			nodes[online] = id;
		online++;
	}
	mutex_unlock(&scif_info.node_lock);
	return online;
}
EXPORT_SYMBOL_GPL(scif_get_node_ids);

/**
 * scif_client_register() - register a kernel client
 * @client: the client; its probe is called at once for every node online
 *
 * Context: process context; may sleep.
 * Return: 0.
 */
int scif_client_register(struct scif_client *client)
{
	u16 id;

	mutex_lock(&scif_info.node_lock);
	list_add_tail(&client->list, &scif_info.clients);
	for (id = 0; id < SCIF_MAX_NODES; id++)
		if (scif_info.nodes[id].online && client->probe)
			client->probe(&scif_info.nodes[id].peer);
	mutex_unlock(&scif_info.node_lock);
	return 0;
}
EXPORT_SYMBOL_GPL(scif_client_register);

/**
 * scif_client_unregister() - unregister a kernel client
 * @client: the client; its remove is called for every node online
 *
 * Context: process context; may sleep.
 */
void scif_client_unregister(struct scif_client *client)
{
	u16 id;

	mutex_lock(&scif_info.node_lock);
	for (id = 0; id < SCIF_MAX_NODES; id++)
		if (scif_info.nodes[id].online && client->remove)
			client->remove(&scif_info.nodes[id].peer);
	list_del(&client->list);
	mutex_unlock(&scif_info.node_lock);
}
EXPORT_SYMBOL_GPL(scif_client_unregister);

static void scif_nodes_free_stats(void)
{
	u16 id;

	for (id = 0; id < SCIF_MAX_NODES; id++) {
		free_percpu(scif_info.nodes[id].stats);
		scif_info.nodes[id].stats = NULL;
	}
}

/**
 * scif_nodes_init() - set up the node table
 * @events: what the layers above hear of nodes; kept until module unload
 *
 * Context: process context, at module load, before any bus registers.
 * Return: 0, -EINVAL for a bad node_id parameter, or -ENOMEM.
 */
int scif_nodes_init(const struct scif_node_events *events)
{
	u16 id;

	scif_node_events = events;

	if (node_id >= SCIF_MAX_NODES) {
		pr_err("node_id %d is not in 0..%d\n", node_id,
		       SCIF_MAX_NODES - 1);
		return -EINVAL;
	}
	if (node_id >= 0) {
		scif_info.self = node_id;
		scif_self_fixed = true;
		strscpy(scif_self_by, "node_id=", sizeof(scif_self_by));
	}
	for (id = 0; id < SCIF_MAX_NODES; id++) {
		struct scif_node *n = &scif_info.nodes[id];

		n->stats = alloc_percpu(struct scif_stats);
		if (!n->stats) {
			scif_nodes_free_stats();
			return -ENOMEM;
		}
		n->id = id;
		n->peer.dnode = id;
		mutex_init(&n->tx_mutex);
		mutex_init(&n->lmap_lock);
		INIT_LIST_HEAD(&n->lmaps);
		INIT_LIST_HEAD(&n->pdmaps);
		init_waitqueue_head(&n->tx_wq);
		INIT_WORK(&n->rx_work, scif_node_rx_work);
		spin_lock_init(&n->reply_lock);
		init_waitqueue_head(&n->defer_wq);
		INIT_LIST_HEAD(&n->replies);
		INIT_WORK(&n->reply_work, scif_node_reply_work);
		INIT_WORK(&n->fail_work, scif_node_fail_work);
	}
	return 0;
}

/**
 * scif_nodes_exit() - check that every bus has gone
 */
void scif_nodes_exit(void)
{
	u16 id;

	for (id = 0; id < SCIF_MAX_NODES; id++)
		WARN_ON(scif_info.nodes[id].hw);
	WARN_ON(!list_empty(&scif_buses));
	scif_nodes_free_stats();
}
