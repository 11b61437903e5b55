// SPDX-License-Identifier: GPL-2.0
/*
 * scif_net: an Ethernet device per peer node, over a SCIF connection.
 *
 * Every node listens on SN_PORT; of each pair of nodes the one with the
 * lower id connects.  A link (one net device, "sn<peer>") has a kthread
 * that owns its connection: it connects or takes the endpoint the
 * listener accepted, reads frames and hands them to NAPI, and resets
 * and remakes the connection when it fails.  Frames to send are queued
 * by ndo_start_xmit and sent by a work item.  Documentation/scif/net.rst
 * has the design.
 */
#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/etherdevice.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/scif.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

/* The well-known port; below SCIF_ADMIN_PORT_END, so privileged. */
#define SN_PORT		700
#define SN_MAGIC	0x534e4554	/* "SNET" */
#define SN_MAX_MTU	65535
#define SN_MAX_FRAME	(ETH_HLEN + SN_MAX_MTU)
/* Frames waiting to be sent before the queue is stopped. */
#define SN_TXQ_MAX	64
/* Frames waiting for NAPI before the reader waits. */
#define SN_RXQ_MAX	256
/* Milliseconds a thread waits on SCIF before it looks at its flags. */
#define SN_POLL_MS	100
/* Between attempts to connect. */
#define SN_RETRY_MS	500

/**
 * struct sn_hdr - what precedes every frame on the connection
 * @magic: SN_MAGIC
 * @len: bytes of the frame that follows, ETH_HLEN to SN_MAX_FRAME
 */
struct sn_hdr {
	__le32 magic;
	__le32 len;
};

/**
 * struct sn_stats - a link's counters, updated without locks
 * @rx_packets: frames delivered to NAPI
 * @rx_bytes: their bytes
 * @tx_packets: frames sent whole
 * @tx_bytes: their bytes
 * @rx_errors: headers refused (the connection is reset for each)
 * @rx_dropped: frames dropped on receive (no memory, device down)
 * @tx_dropped: frames dropped on transmit (no carrier, send failed)
 */
struct sn_stats {
	atomic64_t rx_packets;
	atomic64_t rx_bytes;
	atomic64_t tx_packets;
	atomic64_t tx_bytes;
	atomic64_t rx_errors;
	atomic64_t rx_dropped;
	atomic64_t tx_dropped;
};

/**
 * struct sn_link - a peer node's device and connection (netdev_priv)
 * @ndev: the net device
 * @peer: the peer's node id
 * @napi: delivers the frames of @rxq
 * @rxq: frames read, for NAPI; its own lock
 * @txq: frames to send; its own lock
 * @tx_work: sends @txq
 * @tx_mutex: held by @tx_work while it uses @epd; the link thread takes
 *	it to set or clear @epd
 * @epd: the connected endpoint, or NULL; written by the link thread
 *	under @tx_mutex, read by the link thread and by @tx_work under it
 * @closing: set by the link thread before it takes @tx_mutex to end the
 *	connection, so that @tx_work lets go at once
 * @tx_failed: set by @tx_work when a send failed; the link thread then
 *	resets the connection
 * @lock: protects @pending
 * @pending: an endpoint the listener accepted from @peer, not yet taken
 *	by the link thread
 * @wq: the link thread waits here (for @pending, the peer's return, room
 *	in @rxq)
 * @thread: the link thread; runs from creation to module unload
 * @stats: counters
 *
 * Lock order: @tx_mutex, then @lock.  No SCIF call is made under @lock.
 */
struct sn_link {
	struct net_device *ndev;
	u16 peer;
	struct napi_struct napi;
	struct sk_buff_head rxq;
	struct sk_buff_head txq;
	struct work_struct tx_work;
	struct mutex tx_mutex;	/* see above */
	scif_epd_t epd;
	bool closing;
	bool tx_failed;
	spinlock_t lock;	/* see above */
	scif_epd_t pending;
	wait_queue_head_t wq;
	struct task_struct *thread;
	struct sn_stats stats;
};

/* sn_links[]: the links by peer id, created by sn_nodes_work and freed
 * at unload; under sn_links_lock, which is never held across a SCIF call.
 * sn_online: the nodes SCIF reports online (atomic bitops).
 * sn_self: this node's id, as sn_nodes_work last read it (READ_ONCE).
 */
static struct sn_link *sn_links[SCIF_MAX_NODES];
static DEFINE_MUTEX(sn_links_lock);
static DECLARE_BITMAP(sn_online, SCIF_MAX_NODES);
static u16 sn_self;
static struct task_struct *sn_listener;
static scif_epd_t sn_listen_epd;

/* @tx: asked by the send work, which is not the link thread. */
static bool sn_link_stopping(struct sn_link *link, bool tx)
{
	return (!tx && kthread_should_stop()) || READ_ONCE(link->closing) ||
	       READ_ONCE(link->tx_failed) || READ_ONCE(link->pending) ||
	       !test_bit(link->peer, sn_online);
}

/* Move @len bytes to (@tx) or from the connection, in slices, waiting at
 * most SN_POLL_MS at a time so that a reason to stop is seen: then
 * -EAGAIN if @may_stop and no byte moved yet, else -ECONNABORTED.
 */
static int sn_xfer(struct sn_link *link, scif_epd_t epd, void *buf,
		   int len, bool tx, bool may_stop)
{
	struct scif_pollepd pe = { .epd = epd };
	int done = 0, n;

	pe.events = tx ? EPOLLOUT : EPOLLIN;
	while (done < len) {
		n = tx ? scif_send(epd, buf + done, len - done, 0) :
			 scif_recv(epd, buf + done, len - done, 0);
		if (n < 0)
			return n;
		done += n;
		if (n)
			continue;
		if (sn_link_stopping(link, tx))
			return (may_stop && !done) ? -EAGAIN : -ECONNABORTED;
		n = scif_poll(&pe, 1, SN_POLL_MS);
		if (n < 0)
			return n;
	}
	return 0;
}

/* ---- transmit ---- */

static netdev_tx_t sn_start_xmit(struct sk_buff *skb, struct net_device *ndev)
{
	struct sn_link *link = netdev_priv(ndev);
	struct sn_hdr *hdr;
	unsigned int len = skb->len;

	if (!netif_carrier_ok(ndev) || len > SN_MAX_FRAME ||
	    skb_linearize(skb) || skb_cow_head(skb, sizeof(*hdr)))
		goto drop;
	hdr = skb_push(skb, sizeof(*hdr));
	hdr->magic = cpu_to_le32(SN_MAGIC);
	hdr->len = cpu_to_le32(len);
	skb_queue_tail(&link->txq, skb);
	if (skb_queue_len(&link->txq) >= SN_TXQ_MAX)
		netif_stop_queue(ndev);
	queue_work(system_unbound_wq, &link->tx_work);
	return NETDEV_TX_OK;
drop:
	atomic64_inc(&link->stats.tx_dropped);
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

static void sn_tx_purge(struct sn_link *link)
{
	struct sk_buff *skb;

	while ((skb = skb_dequeue(&link->txq))) {
		atomic64_inc(&link->stats.tx_dropped);
		dev_kfree_skb_any(skb);
	}
	netif_wake_queue(link->ndev);
}

static void sn_tx_wake(struct sn_link *link)
{
	if (netif_queue_stopped(link->ndev) &&
	    skb_queue_len(&link->txq) < SN_TXQ_MAX / 2)
		netif_wake_queue(link->ndev);
}

static void sn_tx_work(struct work_struct *work)
{
	struct sn_link *link = container_of(work, struct sn_link, tx_work);
	struct sk_buff *skb;
	int err = 0;

	mutex_lock(&link->tx_mutex);
	while (!err && link->epd && !READ_ONCE(link->closing) &&
	       (skb = skb_dequeue(&link->txq))) {
		err = sn_xfer(link, link->epd, skb->data, skb->len, true, false);
		if (err) {
			atomic64_inc(&link->stats.tx_dropped);
			WRITE_ONCE(link->tx_failed, true);
			wake_up(&link->wq);
		} else {
			atomic64_inc(&link->stats.tx_packets);
			atomic64_add(skb->len - sizeof(struct sn_hdr),
				     &link->stats.tx_bytes);
		}
		dev_kfree_skb_any(skb);
		sn_tx_wake(link);
	}
	if (!link->epd)
		sn_tx_purge(link);
	/* ndo_start_xmit queues this work after stopping the queue. */
	sn_tx_wake(link);
	mutex_unlock(&link->tx_mutex);
}

/* ---- receive ---- */

static int sn_napi_poll(struct napi_struct *napi, int budget)
{
	struct sn_link *link = container_of(napi, struct sn_link, napi);
	struct sk_buff *skb;
	int done = 0;

	while (done < budget && (skb = skb_dequeue(&link->rxq))) {
		napi_gro_receive(napi, skb);
		done++;
	}
	if (skb_queue_len(&link->rxq) < SN_RXQ_MAX / 2)
		wake_up(&link->wq);
	if (done < budget && napi_complete_done(napi, done) &&
	    !skb_queue_empty(&link->rxq))
		napi_schedule(napi);
	return done;
}

/* A header from the peer: the frame's length, or -EPROTO. */
static int sn_check_hdr(const struct sn_hdr *hdr)
{
	u32 len = le32_to_cpu(hdr->len);

	if (le32_to_cpu(hdr->magic) != SN_MAGIC || len < ETH_HLEN ||
	    len > SN_MAX_FRAME)
		return -EPROTO;
	return len;
}

static void sn_deliver(struct sn_link *link, struct sk_buff *skb)
{
	struct net_device *ndev = link->ndev;

	if (!netif_running(ndev)) {
		atomic64_inc(&link->stats.rx_dropped);
		kfree_skb(skb);
		return;
	}
	skb->protocol = eth_type_trans(skb, ndev);
	atomic64_inc(&link->stats.rx_packets);
	atomic64_add(skb->len + ETH_HLEN, &link->stats.rx_bytes);
	skb_queue_tail(&link->rxq, skb);
	local_bh_disable();
	napi_schedule(&link->napi);
	local_bh_enable();
}

/* Read one frame: 0, -EAGAIN if none came within SN_POLL_MS, or an error. */
static int sn_rx_one(struct sn_link *link, scif_epd_t epd)
{
	struct sn_hdr hdr;
	struct sk_buff *skb;
	int len, err;

	err = sn_xfer(link, epd, &hdr, sizeof(hdr), false, true);
	if (err)
		return err;
	len = sn_check_hdr(&hdr);
	if (len < 0) {
		atomic64_inc(&link->stats.rx_errors);
		netdev_warn_once(link->ndev, "bad frame header from node %u\n",
				 link->peer);
		return len;
	}
	skb = __netdev_alloc_skb_ip_align(link->ndev, len, GFP_KERNEL);
	if (!skb)
		return -ENOMEM;
	err = sn_xfer(link, epd, skb_put(skb, len), len, false, false);
	if (err) {
		kfree_skb(skb);
		return err;
	}
	sn_deliver(link, skb);
	return 0;
}

/* ---- the connection ---- */

static void sn_link_up(struct sn_link *link, scif_epd_t epd)
{
	mutex_lock(&link->tx_mutex);
	link->epd = epd;
	WRITE_ONCE(link->closing, false);
	WRITE_ONCE(link->tx_failed, false);
	mutex_unlock(&link->tx_mutex);
	netif_carrier_on(link->ndev);
	netdev_info(link->ndev, "connected to node %u\n", link->peer);
}

static void sn_link_down(struct sn_link *link, int why)
{
	scif_epd_t epd;

	netif_carrier_off(link->ndev);
	WRITE_ONCE(link->closing, true);
	mutex_lock(&link->tx_mutex);
	epd = link->epd;
	link->epd = NULL;
	sn_tx_purge(link);
	mutex_unlock(&link->tx_mutex);
	scif_close(epd);
	netdev_info(link->ndev, "connection to node %u down (%d)\n",
		    link->peer, why);
}

/* Wait for room in @rxq: false if the link thread is to stop. */
static bool sn_rx_room(struct sn_link *link)
{
	while (skb_queue_len(&link->rxq) >= SN_RXQ_MAX) {
		if (!netif_running(link->ndev))
			skb_queue_purge(&link->rxq);
		wait_event_timeout(link->wq, kthread_should_stop() ||
				   skb_queue_len(&link->rxq) < SN_RXQ_MAX,
				   msecs_to_jiffies(SN_POLL_MS));
		if (kthread_should_stop())
			return false;
	}
	return true;
}

/* Read frames until the connection fails or the thread is to stop. */
static int sn_rx_loop(struct sn_link *link, scif_epd_t epd)
{
	int err;

	for (;;) {
		/* Asked between frames too: traffic may never pause. */
		if (sn_link_stopping(link, false))
			break;
		if (!sn_rx_room(link))
			return -ESHUTDOWN;
		err = sn_rx_one(link, epd);
		if (!err)
			continue;
		/* Without the frame the stream is out of step: start again. */
		if (err == -ENOMEM)
			atomic64_inc(&link->stats.rx_dropped);
		if (err != -EAGAIN)
			return err;
		break;
	}
	return kthread_should_stop() ? -ESHUTDOWN : -ECONNABORTED;
}

static scif_epd_t sn_take_pending(struct sn_link *link)
{
	scif_epd_t epd;

	spin_lock(&link->lock);
	epd = link->pending;
	link->pending = NULL;
	spin_unlock(&link->lock);
	return epd;
}

/* The lower id's side: connect to the peer's listener. */
static scif_epd_t sn_connect(struct sn_link *link)
{
	struct scif_port_id dst = { .node = link->peer, .port = SN_PORT };
	scif_epd_t epd;
	int err;

	epd = scif_open();
	if (!epd)
		return NULL;
	err = scif_connect(epd, &dst);
	if (err < 0) {
		scif_close(epd);
		return NULL;
	}
	return epd;
}

/* An endpoint connected to the peer, or NULL after a wait. */
static scif_epd_t sn_establish(struct sn_link *link)
{
	scif_epd_t epd = sn_take_pending(link);

	if (epd)
		return epd;
	if (test_bit(link->peer, sn_online) &&
	    READ_ONCE(sn_self) < link->peer) {
		epd = sn_connect(link);
		if (epd)
			return epd;
	}
	wait_event_interruptible_timeout(link->wq, kthread_should_stop() ||
					 READ_ONCE(link->pending),
					 msecs_to_jiffies(SN_RETRY_MS));
	return NULL;
}

static int sn_link_thread(void *arg)
{
	struct sn_link *link = arg;
	scif_epd_t epd;
	int err;

	while (!kthread_should_stop()) {
		epd = sn_establish(link);
		if (!epd)
			continue;
		sn_link_up(link, epd);
		queue_work(system_unbound_wq, &link->tx_work);
		err = sn_rx_loop(link, epd);
		sn_link_down(link, err);
	}
	return 0;
}

/* ---- the listener ---- */

/* Give @epd, accepted from @node, to its link; closes it if none wants it. */
static void sn_hand_over(scif_epd_t epd, u16 node)
{
	struct sn_link *link = NULL;
	scif_epd_t old = epd;

	mutex_lock(&sn_links_lock);
	if (node < SCIF_MAX_NODES && node < READ_ONCE(sn_self))
		link = sn_links[node];
	if (link) {
		spin_lock(&link->lock);
		old = link->pending;
		link->pending = epd;
		spin_unlock(&link->lock);
		wake_up(&link->wq);
	}
	mutex_unlock(&sn_links_lock);
	if (old)
		scif_close(old);
}

static int sn_listen_thread(void *arg)
{
	struct scif_pollepd pe = { .epd = arg, .events = EPOLLIN };
	struct scif_port_id peer;
	scif_epd_t epd;

	while (!kthread_should_stop()) {
		if (scif_poll(&pe, 1, SN_POLL_MS) <= 0)
			continue;
		if (!scif_accept(pe.epd, &peer, &epd, 0))
			sn_hand_over(epd, peer.node);
	}
	return 0;
}

static int sn_listen_start(void)
{
	scif_epd_t epd = scif_open();
	int err;

	if (!epd)
		return -ENOMEM;
	err = scif_bind(epd, SN_PORT);
	if (err < 0)
		goto fail;
	err = scif_listen(epd, SCIF_MAX_NODES);
	if (err)
		goto fail;
	sn_listener = kthread_run(sn_listen_thread, epd, "scif_net_listen");
	if (IS_ERR(sn_listener)) {
		err = PTR_ERR(sn_listener);
		goto fail;
	}
	sn_listen_epd = epd;
	return 0;
fail:
	scif_close(epd);
	return err;
}

/* ---- the net device ---- */

static int sn_open(struct net_device *ndev)
{
	struct sn_link *link = netdev_priv(ndev);

	skb_queue_purge(&link->rxq);
	napi_enable(&link->napi);
	netif_start_queue(ndev);
	return 0;
}

static int sn_stop(struct net_device *ndev)
{
	struct sn_link *link = netdev_priv(ndev);

	netif_stop_queue(ndev);
	napi_disable(&link->napi);
	return 0;
}

static void sn_get_stats64(struct net_device *ndev,
			   struct rtnl_link_stats64 *st)
{
	struct sn_stats *s = &((struct sn_link *)netdev_priv(ndev))->stats;

	st->rx_packets = atomic64_read(&s->rx_packets);
	st->rx_bytes = atomic64_read(&s->rx_bytes);
	st->tx_packets = atomic64_read(&s->tx_packets);
	st->tx_bytes = atomic64_read(&s->tx_bytes);
	st->rx_errors = atomic64_read(&s->rx_errors);
	st->rx_frame_errors = st->rx_errors;
	st->rx_dropped = atomic64_read(&s->rx_dropped);
	st->tx_dropped = atomic64_read(&s->tx_dropped);
}

static const struct net_device_ops sn_netdev_ops = {
	.ndo_open = sn_open,
	.ndo_stop = sn_stop,
	.ndo_start_xmit = sn_start_xmit,
	.ndo_get_stats64 = sn_get_stats64,
	.ndo_validate_addr = eth_validate_addr,
	.ndo_set_mac_address = eth_mac_addr,
};

/* 02:53:4e:00:<self>:<peer>: locally administered, unique per pair. */
static void sn_set_mac(struct net_device *ndev, u16 self, u16 peer)
{
	u8 addr[ETH_ALEN] = { 0x02, 0x53, 0x4e, 0, self, peer };

	eth_hw_addr_set(ndev, addr);
}

static struct sn_link *sn_link_create(u16 self, u16 peer)
{
	struct net_device *ndev;
	struct sn_link *link;
	char name[IFNAMSIZ];
	int err;

	snprintf(name, sizeof(name), "sn%u", peer);
	ndev = alloc_netdev(sizeof(*link), name, NET_NAME_PREDICTABLE,
			    ether_setup);
	if (!ndev)
		return ERR_PTR(-ENOMEM);
	link = netdev_priv(ndev);
	link->ndev = ndev;
	link->peer = peer;
	skb_queue_head_init(&link->rxq);
	skb_queue_head_init(&link->txq);
	INIT_WORK(&link->tx_work, sn_tx_work);
	mutex_init(&link->tx_mutex);
	spin_lock_init(&link->lock);
	init_waitqueue_head(&link->wq);
	ndev->netdev_ops = &sn_netdev_ops;
	ndev->needed_headroom = sizeof(struct sn_hdr);
	ndev->min_mtu = ETH_MIN_MTU;
	ndev->max_mtu = SN_MAX_MTU;
	ndev->mtu = SN_MAX_MTU;
	sn_set_mac(ndev, self, peer);
	netif_napi_add(ndev, &link->napi, sn_napi_poll);
	netif_carrier_off(ndev);
	err = register_netdev(ndev);
	if (err)
		goto free;
	link->thread = kthread_run(sn_link_thread, link, "scif_net/%u", peer);
	if (IS_ERR(link->thread)) {
		err = PTR_ERR(link->thread);
		goto unregister;
	}
	return link;
unregister:
	unregister_netdev(ndev);
free:
	netif_napi_del(&link->napi);
	free_netdev(ndev);
	return ERR_PTR(err);
}

static void sn_link_destroy(struct sn_link *link)
{
	struct net_device *ndev = link->ndev;
	scif_epd_t epd;

	/* The thread closes its connection; the listener may have left one. */
	kthread_stop(link->thread);
	epd = sn_take_pending(link);
	if (epd)
		scif_close(epd);
	unregister_netdev(ndev);
	cancel_work_sync(&link->tx_work);
	skb_queue_purge(&link->txq);
	skb_queue_purge(&link->rxq);
	netif_napi_del(&link->napi);
	free_netdev(ndev);
}

/* ---- SCIF's nodes ---- */

/* Creates the links of nodes that came online; wakes all links. */
static void sn_nodes_work_fn(struct work_struct *work)
{
	struct sn_link *link;
	u16 self, id;

	scif_get_node_ids(NULL, 0, &self);
	WRITE_ONCE(sn_self, self);
	mutex_lock(&sn_links_lock);
	for (id = 0; id < SCIF_MAX_NODES; id++) {
		link = sn_links[id];
		if (!link && id != self && test_bit(id, sn_online)) {
			link = sn_link_create(self, id);
			if (IS_ERR(link)) {
				pr_err("scif_net: no device for node %u: %ld\n",
				       id, PTR_ERR(link));
				link = NULL;
			}
			sn_links[id] = link;
		}
		if (link)
			wake_up(&link->wq);
	}
	mutex_unlock(&sn_links_lock);
}

static DECLARE_WORK(sn_nodes_work, sn_nodes_work_fn);

/* Called under SCIF's node lock: only flags and a work item here. */
static void sn_probe(struct scif_peer_dev *peer)
{
	if (peer->dnode >= SCIF_MAX_NODES)
		return;
	set_bit(peer->dnode, sn_online);
	schedule_work(&sn_nodes_work);
}

static void sn_remove(struct scif_peer_dev *peer)
{
	if (peer->dnode >= SCIF_MAX_NODES)
		return;
	clear_bit(peer->dnode, sn_online);
	schedule_work(&sn_nodes_work);
}

static struct scif_client sn_client = {
	.name = "scif_net",
	.probe = sn_probe,
	.remove = sn_remove,
};

static int __init sn_init(void)
{
	u16 self;
	int err;

	scif_get_node_ids(NULL, 0, &self);
	WRITE_ONCE(sn_self, self);
	err = sn_listen_start();
	if (err)
		return err;
	err = scif_client_register(&sn_client);
	if (err)
		goto stop;
	return 0;
stop:
	kthread_stop(sn_listener);
	scif_close(sn_listen_epd);
	return err;
}

static void __exit sn_exit(void)
{
	u16 id;

	scif_client_unregister(&sn_client);
	cancel_work_sync(&sn_nodes_work);
	kthread_stop(sn_listener);
	scif_close(sn_listen_epd);
	for (id = 0; id < SCIF_MAX_NODES; id++)
		if (sn_links[id])
			sn_link_destroy(sn_links[id]);
}

module_init(sn_init);
module_exit(sn_exit);
MODULE_DESCRIPTION("Ethernet over SCIF: a net device per peer node");
MODULE_LICENSE("GPL");
MODULE_VERSION("0.1.0");
