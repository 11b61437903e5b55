// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: the node table, node queue pairs, the hardware bus entry
 * points and kernel clients' probe/remove.
 */
#include <linux/err.h>
#include <linux/export.h>
#include <linux/io.h>
#include <linux/minmax.h>
#include <linux/random.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "scif_kunit.h"
#include "scif_priv.h"

struct scif_reply {
	struct list_head list;
	struct scif_msg msg;
};

/* How long a sender sleeps before looking at a full queue again. */
#define SCIF_TX_RECHECK		(HZ / 50)

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

static bool scif_node_tx_ready(struct scif_node *node)
{
	return !READ_ONCE(node->online) ||
	       scif_rb_tx_room(&node->rb) >= sizeof(struct scif_msg);
}

/**
 * scif_node_send() - send a node message
 * @node: the destination node
 * @msg: the message
 *
 * Sleeps while the peer's queue is full.  Only a fatal signal or the
 * loss of the node ends the wait early; a read count from the peer that
 * makes no sense is a protocol error, which takes the node offline.
 *
 * Context: process context; takes @node->tx_mutex.
 * Return: 0, -ENODEV if the node is gone, or -EINTR.
 */
int scif_node_send(struct scif_node *node, const struct scif_msg *msg)
{
	struct kvec kv = { .iov_base = (void *)msg, .iov_len = sizeof(*msg) };
	struct iov_iter iter;
	int err = 0;

	mutex_lock(&node->tx_mutex);
	while (READ_ONCE(node->online) &&
	       scif_rb_tx_room(&node->rb) < sizeof(*msg)) {
		if (scif_rb_tx_broken(&node->rb)) {
			scif_node_protocol_error(node);
			err = -ENODEV;
			goto out;
		}
		/* Ask for a doorbell once the peer has made room. */
		WRITE_ONCE(node->rb.remote->rx_waiting, 1);
		/* The flag must be visible before we look at the room again. */
		mb();
		if (scif_rb_tx_room(&node->rb) >= sizeof(*msg))
			break;
		mutex_unlock(&node->tx_mutex);
		if (fatal_signal_pending(current))
			return -EINTR;
		wait_event_timeout(node->tx_wq, scif_node_tx_ready(node),
				   SCIF_TX_RECHECK);
		mutex_lock(&node->tx_mutex);
	}
	if (!READ_ONCE(node->online)) {
		err = -ENODEV;
		goto out;
	}
	iov_iter_kvec(&iter, ITER_SOURCE, &kv, 1, sizeof(*msg));
	scif_rb_put(&node->rb, &iter);
	node->hw->ops->ring(node->hw, node->id);
out:
	mutex_unlock(&node->tx_mutex);
	return err;
}

/**
 * scif_node_reply() - queue a message for sending from process context
 * @node: the destination node
 * @msg: the message, copied
 *
 * For the node's rx_work, which must not wait for room in the peer's
 * queue.  The copy cannot fail, so a reply is never lost.
 *
 * Context: process context.
 */
void scif_node_reply(struct scif_node *node, const struct scif_msg *msg)
{
	struct scif_reply *r = kmalloc(sizeof(*r), GFP_KERNEL | __GFP_NOFAIL);

	r->msg = *msg;
	spin_lock(&node->reply_lock);
	list_add_tail(&r->list, &node->replies);
	spin_unlock(&node->reply_lock);
	queue_work(scif_info.wq, &node->reply_work);
}

static void scif_node_reply_work(struct work_struct *work)
{
	struct scif_node *node = container_of(work, struct scif_node,
					      reply_work);
	struct scif_reply *r;

	for (;;) {
		spin_lock(&node->reply_lock);
		r = list_first_entry_or_null(&node->replies, struct scif_reply,
					     list);
		if (r)
			list_del(&r->list);
		spin_unlock(&node->reply_lock);
		if (!r)
			return;
		scif_node_send(node, &r->msg);
		kfree(r);
	}
}

static void scif_node_drop_replies(struct scif_node *node)
{
	struct scif_reply *r, *tmp;

	list_for_each_entry_safe(r, tmp, &node->replies, list) {
		list_del(&r->list);
		kfree(r);
	}
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

static void scif_node_rx_work(struct work_struct *work)
{
	struct scif_node *node = container_of(work, struct scif_node, rx_work);
	struct scif_msg msg;
	int ret;

	if (!READ_ONCE(node->online))
		return;
	while ((ret = scif_node_recv(node, &msg)) > 0)
		scif_msg_dispatch(node, &msg);
	if (ret < 0) {
		scif_node_protocol_error(node);
		return;
	}

	if (READ_ONCE(node->rb.local->rx_waiting)) {
		WRITE_ONCE(node->rb.local->rx_waiting, 0);
		node->hw->ops->ring(node->hw, node->id);
	}
	/* A doorbell may also mean the peer made room in its queue. */
	wake_up_all(&node->tx_wq);
}

/**
 * scif_node_map() - map memory a peer published, for CPU access
 * @node: the peer
 * @addr: the address it published
 * @len: bytes to map
 *
 * Context: process context.
 * Return: the mapping, or an ERR_PTR().
 */
void *scif_node_map(struct scif_node *node, u64 addr, size_t len)
{
	return node->hw->ops->map_peer(node->hw, node->id, addr, len);
}

/**
 * scif_node_unmap() - undo scif_node_map()
 * @node: the peer
 * @va: the mapping
 * @len: its length
 */
void scif_node_unmap(struct scif_node *node, void *va, size_t len)
{
	node->hw->ops->unmap_peer(node->hw, node->id, va, len);
}

/**
 * scif_node_peer_phys() - where the CPU reaches memory a peer published
 * @node: the peer
 * @addr: the address it published
 * @len: bytes
 * @phys: receives the physical address, for mapping into a process
 * @wc: receives whether it is to be mapped write-combined
 *
 * Context: any; the caller keeps the node's bus (it holds a window of
 * the node).
 * Return: 0, -EINVAL if the bus does not reach the range, -ENODEV if the
 * bus cannot map peer memory into processes.
 */
int scif_node_peer_phys(struct scif_node *node, u64 addr, size_t len,
			phys_addr_t *phys, bool *wc)
{
	struct scif_hw_dev *hw = node->hw;

	if (!hw->ops->peer_phys)
		return -ENODEV;
	*wc = hw->peer_wc;
	return hw->ops->peer_phys(hw, node->id, addr, len, phys);
}

/**
 * scif_node_local_addr() - the address @node uses to reach local memory
 * @node: the peer
 * @va: a kernel address in the linear map
 *
 * Return: the address to publish to @node.
 */
u64 scif_node_local_addr(struct scif_node *node, void *va)
{
	return node->hw->ops->local_addr(node->hw, virt_to_phys(va));
}

SCIF_EXPORT_IF_KUNIT(scif_node_local_addr);

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
	size_t len = sizeof(struct scif_qp_shm) + SCIF_NODE_QP_SIZE;
	struct scif_hw_dev *hw = node->hw;
	struct scif_qp_shm *remote;
	u64 addr;

	if (!node->rb.local) {
		node->rb.local = scif_qp_alloc(SCIF_NODE_QP_SIZE);
		if (!node->rb.local)
			return -ENOMEM;
		node->rb.rx_size = SCIF_NODE_QP_SIZE;
		node->rb.tx_size = SCIF_NODE_QP_SIZE;
		node->rb.tx_write = 0;
		node->rb.tx_skew = 0;
		node->rb.rx_read = 0;
		hw->ops->publish_qp(hw, node->id,
				    scif_node_local_addr(node, node->rb.local));
	}
	addr = hw->ops->peer_qp(hw, node->id);
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

	if (n->rb.local)
		hw->ops->publish_qp(hw, n->id, 0);
	if (n->rb.remote)
		scif_node_unmap(n, n->rb.remote,
				sizeof(struct scif_qp_shm) + SCIF_NODE_QP_SIZE);
	n->rb.remote = NULL;
	scif_qp_free(n->rb.local, SCIF_NODE_QP_SIZE);
	n->rb.local = NULL;
	n->hw = NULL;
}

/**
 * scif_hw_node_up() - a bus reports that it reaches a node
 * @hw: the bus
 * @node: the node's id
 *
 * Sets up the node queue pair and tells kernel clients of the node.  On
 * -EAGAIN the bus calls again later (or scif_hw_node_down() to give up);
 * this node's half of the queue pair stays published meanwhile.
 *
 * Context: process context; may sleep.
 * Return: 0, -EINVAL for a bad id, -EBUSY if the node is online, was
 * taken offline for a protocol error and not reported down since, or is
 * reached through another bus, -EAGAIN if the node has not published
 * its half of the queue pair yet, or another negative errno.
 */
int scif_hw_node_up(struct scif_hw_dev *hw, u16 node)
{
	struct scif_node *n;
	int err;

	if (node >= SCIF_MAX_NODES)
		return -EINVAL;
	n = &scif_info.nodes[node];
	mutex_lock(&scif_info.node_lock);
	if (n->online || n->failed || (n->hw && n->hw != hw)) {
		err = -EBUSY;
		goto out;
	}
	n->hw = hw;
	err = scif_node_connect_qp(n);
	if (err) {
		if (err != -EAGAIN)
			scif_node_release_qp(n);
		goto out;
	}
	WRITE_ONCE(n->online, true);
	/* The peer may have sent before we were online. */
	queue_work(scif_info.wq, &n->rx_work);
	scif_clients_probe(n);
out:
	mutex_unlock(&scif_info.node_lock);
	return err;
}
EXPORT_SYMBOL_GPL(scif_hw_node_up);

/*
 * Take an online node offline: clients are told, rx_work stops, every
 * endpoint connected to it is reset (@hold: keeping what the node may
 * still write into, see the notes; only fail_work holds) and queued
 * replies are dropped.
 * Called and returns with scif_info.node_lock held; drops it meanwhile.
 */
static void scif_node_offline(struct scif_node *n, bool hold)
{
	WRITE_ONCE(n->online, false);
	wake_up_all(&n->tx_wq);
	scif_clients_remove(n);
	mutex_unlock(&scif_info.node_lock);

	cancel_work_sync(&n->rx_work);
	/* rx_work is stopped: nothing queues fail_work any more. */
	if (!hold)	/* (not called from fail_work) */
		cancel_work_sync(&n->fail_work);
	scif_epd_node_lost(n, hold);
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
		scif_epd_node_lost(n, false);
		mutex_lock(&scif_info.node_lock);
	}
	held = n->failed;
	n->failed = false;
	mutex_lock(&n->tx_mutex);
	scif_node_release_qp(n);
	mutex_unlock(&n->tx_mutex);
	if (held)
		pr_info("scif: node %u gone; what was kept for it is freed\n",
			node);
out:
	mutex_unlock(&scif_info.node_lock);
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
	pr_warn_ratelimited("scif: node %u %s: offline until it restarts\n",
			    n->id, why);
	scif_node_offline(n, true);
	mutex_lock(&n->tx_mutex);
	if (n->rb.remote)
		scif_node_unmap(n, n->rb.remote,
				sizeof(struct scif_qp_shm) + SCIF_NODE_QP_SIZE);
	n->rb.remote = NULL;
	/* The peer may learn from this that we dropped it. */
	n->hw->ops->publish_qp(n->hw, n->id, 0);
	mutex_unlock(&n->tx_mutex);
	mutex_unlock(&scif_info.node_lock);
}

static void scif_node_fail_work(struct work_struct *work)
{
	scif_node_fail(container_of(work, struct scif_node, fail_work),
		       "broke its node queue pair");
}

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
 * scif_hw_node_failed() - a bus finds a live node's bootstrap data invalid
 * @hw: the bus
 * @node: the node's id
 * @why: what was wrong, for the kernel log
 *
 * The node is taken offline as for a protocol error: endpoints connected
 * to it are reset, new operations get -ENODEV, and it stays offline
 * until the bus calls scif_hw_node_down() (it restarted or died).
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

/**
 * scif_hw_register() - a bus announces itself
 * @hw: the bus
 *
 * Context: process context.
 * Return: 0.
 */
int scif_hw_register(struct scif_hw_dev *hw)
{
	pr_debug("scif: bus %s registered\n", hw->name);
	return 0;
}
EXPORT_SYMBOL_GPL(scif_hw_register);

/**
 * scif_hw_unregister() - a bus goes away; every node it reached goes too
 * @hw: the bus
 *
 * Context: process context; may sleep.
 */
void scif_hw_unregister(struct scif_hw_dev *hw)
{
	u16 id;

	for (id = 0; id < SCIF_MAX_NODES; id++)
		if (READ_ONCE(scif_info.nodes[id].hw) == hw)
			scif_hw_node_down(hw, id);
}
EXPORT_SYMBOL_GPL(scif_hw_unregister);

/**
 * scif_hw_set_self() - a bus gives this node its id in the network
 * @self: the id
 *
 * The loopback node moves to the new id; connections through it are
 * reset.  Meant for a bus that comes up before the node is in use.
 *
 * Context: process context; may sleep.
 * Return: 0, -EINVAL for a bad id, or an error bringing loopback back.
 */
int scif_hw_set_self(u16 self)
{
	if (self >= SCIF_MAX_NODES)
		return -EINVAL;
	if (self == READ_ONCE(scif_info.self))
		return 0;
	scif_loopback_exit();
	WRITE_ONCE(scif_info.self, self);
	return scif_loopback_init();
}
EXPORT_SYMBOL_GPL(scif_hw_set_self);

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

/**
 * scif_node_corrupt() - test hook: break our node queue pair towards a node
 * @id: the node whose ring we fill
 * @count: store a write count larger than the ring in the peer's half;
 *	else send @nr messages of random bytes
 * @nr: number of random messages
 *
 * Makes this node the misbehaving peer of scif_corrupt_test; reached
 * only through debugfs.
 *
 * Context: process context; may sleep.
 * Return: 0, or -ENODEV if @id is not online.
 */
int scif_node_corrupt(u16 id, bool count, unsigned int nr)
{
	struct scif_node *node = scif_node_get_online(id);
	struct scif_msg msg;
	int err = 0;

	if (!node)
		return -ENODEV;
	if (count) {
		mutex_lock(&scif_info.node_lock);
		mutex_lock(&node->tx_mutex);
		if (node->online && node->rb.remote) {
			/* Sticky: later sends publish bad counts too. */
			node->rb.tx_skew = node->rb.tx_size + 1 +
					   get_random_u32() % 4096;
			WRITE_ONCE(node->rb.remote->rx_write,
				   node->rb.tx_write + node->rb.tx_skew);
			node->hw->ops->ring(node->hw, node->id);
		}
		mutex_unlock(&node->tx_mutex);
		mutex_unlock(&scif_info.node_lock);
		return 0;
	}
	while (nr-- && !err) {
		get_random_bytes(&msg, sizeof(msg));
		/* Mostly known types, so that handles and arguments are read. */
		msg.op %= SCIF_MSG_NR + 2;
		err = scif_node_send(node, &msg);
	}
	return err;
}

/**
 * scif_nodes_init() - set up the node table
 *
 * Return: 0.
 */
int scif_nodes_init(void)
{
	u16 id;

	for (id = 0; id < SCIF_MAX_NODES; id++) {
		struct scif_node *n = &scif_info.nodes[id];

		n->id = id;
		n->peer.dnode = id;
		mutex_init(&n->tx_mutex);
		init_waitqueue_head(&n->tx_wq);
		INIT_WORK(&n->rx_work, scif_node_rx_work);
		spin_lock_init(&n->reply_lock);
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
}
