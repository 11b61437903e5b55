// SPDX-License-Identifier: GPL-2.0
/*
 * scif_net's links: an Ethernet device per peer node, over a SCIF
 * connection, whose connection also carries the frames of the shared
 * device sn (scif_net_shared.c, the layer above: it registered struct
 * sn_upper, through which this file hands it what is its).
 *
 * A link is one net device, "sn<peer>".  Its SCIF connection (every
 * node listens on SN_PORT, the lower id of each pair connects; a kthread
 * per link makes and remakes it) is scif_peer_links.ko's, with links of
 * this module's own (scif_vsock has others); this file is the data path:
 * the link thread reads frames (sn_rx) and hands them to NAPI, and
 * frames to send are queued by ndo_start_xmit and sent by a work item.
 * Documentation/scif/net.rst has the design.
 */
#include <linux/atomic.h>
#include <linux/device.h>
#include <linux/etherdevice.h>
#include <linux/kthread.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/scif.h>
#include <linux/scif_peer_links.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "scif_net.h"

/* The well-known port; below SCIF_ADMIN_PORT_END, so privileged. */
#define SN_PORT		700

/* The links to every peer (scif_peer_links.ko), this module's own. */
static struct scif_peer_links sn_links;
/* The layer above (sn), set by sn_links_start() before any link runs. */
static const struct sn_upper *sn_upper;

static struct sn_link *sn_link(struct spl_link *sl)
{
	return container_of(sl, struct sn_link, sl);
}

/**
 * sn_link_to() - the link to a node
 * @node: any value, a peer's hostile ones too
 *
 * Context: any.
 * Return: the link, which lives until the module unloads, or NULL.
 */
struct sn_link *sn_link_to(u64 node)
{
	struct spl_link *sl = spl_link_of(&sn_links, node);

	return sl ? sn_link(sl) : NULL;
}

/* ---- transmit ---- */

static struct sn_stats *sn_stats_of(struct net_device *ndev);

/**
 * sn_link_xmit() - queue a frame on a link, or drop it
 * @link: the link to the frame's node
 * @skb: the frame, from @from's ndo_start_xmit
 * @from: @link's sn<peer>, or sn
 * @magic: SN_MAGIC for sn<peer>, SN_MAGIC_SHARED for sn
 *
 * Without @link's carrier the frame is dropped.  @from's queue is stopped
 * when @link's is full; sn's frames are dropped beyond twice that, as
 * sn's queue is woken by any link's.
 *
 * Context: ndo_start_xmit (softirq or process, may not sleep).
 */
void sn_link_xmit(struct sn_link *link, struct sk_buff *skb,
		  struct net_device *from, u32 magic)
{
	unsigned int qlen = skb_queue_len(&link->txq);
	unsigned int len = skb->len;
	struct sn_hdr *hdr;

	if (!netif_carrier_ok(link->ndev) || len > SN_MAX_FRAME ||
	    (magic == SN_MAGIC_SHARED && qlen >= 2 * SN_TXQ_MAX) ||
	    skb_linearize(skb) || skb_cow_head(skb, sizeof(*hdr)))
		goto drop;
	hdr = skb_push(skb, sizeof(*hdr));
	hdr->magic = cpu_to_le32(magic);
	hdr->len = cpu_to_le32(len);
	skb->dev = from;
	skb_queue_tail(&link->txq, skb);
	if (skb_queue_len(&link->txq) >= SN_TXQ_MAX)
		netif_stop_queue(from);
	queue_work(system_unbound_wq, &link->tx_work);
	return;
drop:
	atomic64_inc(&sn_stats_of(from)->tx_dropped);
	dev_kfree_skb_any(skb);
}

static netdev_tx_t sn_start_xmit(struct sk_buff *skb, struct net_device *ndev)
{
	sn_link_xmit(netdev_priv(ndev), skb, ndev, SN_MAGIC);
	return NETDEV_TX_OK;
}

static void sn_tx_purge(struct sn_link *link)
{
	struct sk_buff *skb;

	while ((skb = skb_dequeue(&link->txq))) {
		atomic64_inc(&sn_stats_of(skb->dev)->tx_dropped);
		dev_kfree_skb_any(skb);
	}
	netif_wake_queue(link->ndev);
	sn_upper->wake();
}

static void sn_tx_wake(struct sn_link *link)
{
	if (skb_queue_len(&link->txq) >= SN_TXQ_MAX / 2)
		return;
	if (netif_queue_stopped(link->ndev))
		netif_wake_queue(link->ndev);
	sn_upper->wake();
}

static void sn_tx_work(struct work_struct *work)
{
	struct sn_link *link = container_of(work, struct sn_link, tx_work);
	struct sn_stats *stats;
	struct sk_buff *skb;
	int err = 0;

	mutex_lock(&link->sl.tx_mutex);
	while (!err && link->sl.epd && !READ_ONCE(link->sl.closing) &&
	       (skb = skb_dequeue(&link->txq))) {
		err = scif_peer_links_xfer(&link->sl, link->sl.epd, skb->data,
					   skb->len, true, false);
		stats = sn_stats_of(skb->dev);
		if (err) {
			atomic64_inc(&stats->tx_dropped);
			scif_peer_links_tx_failed(&link->sl);
		} else {
			atomic64_inc(&stats->tx_packets);
			atomic64_add(skb->len - sizeof(struct sn_hdr),
				     &stats->tx_bytes);
		}
		dev_kfree_skb_any(skb);
		sn_tx_wake(link);
	}
	if (!link->sl.epd)
		sn_tx_purge(link);
	/* ndo_start_xmit queues this work after stopping the queue. */
	sn_tx_wake(link);
	mutex_unlock(&link->sl.tx_mutex);
}

/* ---- receive ---- */

/**
 * sn_napi_deliver() - a NAPI poll's delivery of a receive queue
 * @napi: the device's NAPI
 * @rxq: the frames it delivers
 * @budget: at most this many
 *
 * Context: NAPI poll (softirq).
 * Return: the frames delivered; NAPI is completed when fewer than
 * @budget were, and scheduled again if more came meanwhile.
 */
int sn_napi_deliver(struct napi_struct *napi, struct sk_buff_head *rxq,
		    int budget)
{
	struct sk_buff *skb;
	int done = 0;

	while (done < budget && (skb = skb_dequeue(rxq))) {
		napi_gro_receive(napi, skb);
		done++;
	}
	if (done < budget && napi_complete_done(napi, done) &&
	    !skb_queue_empty(rxq))
		napi_schedule(napi);
	return done;
}

static int sn_napi_poll(struct napi_struct *napi, int budget)
{
	struct sn_link *link = container_of(napi, struct sn_link, napi);
	int done = sn_napi_deliver(napi, &link->rxq, budget);

	if (skb_queue_len(&link->rxq) < SN_RXQ_MAX / 2)
		wake_up(&link->sl.wq);
	return done;
}

/* A header from the peer: the frame's length, or -EPROTO; @shared: sn's. */
static int sn_check_hdr(const struct sn_hdr *hdr, bool *shared)
{
	u32 magic = le32_to_cpu(hdr->magic);
	u32 len = le32_to_cpu(hdr->len);

	if ((magic != SN_MAGIC && magic != SN_MAGIC_SHARED) ||
	    len < ETH_HLEN || len > SN_MAX_FRAME)
		return -EPROTO;
	*shared = magic == SN_MAGIC_SHARED;
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

/* Read one frame: 0, -EAGAIN if none came within SPL_POLL_MS, or an error. */
static int sn_rx_one(struct sn_link *link, scif_epd_t epd)
{
	struct sn_hdr hdr;
	struct sk_buff *skb;
	bool shared;
	int len, err;

	err = scif_peer_links_xfer(&link->sl, epd, &hdr, sizeof(hdr), false, true);
	if (err)
		return err;
	len = sn_check_hdr(&hdr, &shared);
	if (len < 0) {
		atomic64_inc(&link->stats.rx_errors);
		netdev_warn_once(link->ndev, "bad frame header from node %u\n",
				 link->sl.peer);
		return len;
	}
	skb = __netdev_alloc_skb_ip_align(link->ndev, len, GFP_KERNEL);
	if (!skb)
		return -ENOMEM;
	err = scif_peer_links_xfer(&link->sl, epd, skb_put(skb, len), len, false, false);
	if (err) {
		kfree_skb(skb);
		return err;
	}
	if (shared)
		sn_upper->rx(link, skb);
	else
		sn_deliver(link, skb);
	return 0;
}

/* ---- the connection (spl_ops) ---- */

/* The link thread has set @sl->epd. */
static void sn_up(struct spl_link *sl)
{
	struct sn_link *link = sn_link(sl);

	netif_carrier_on(link->ndev);
	sn_upper->carrier();
	queue_work(system_unbound_wq, &link->tx_work);
}

static void sn_down(struct spl_link *sl)
{
	netif_carrier_off(sn_link(sl)->ndev);
	sn_upper->carrier();
}

static void sn_purge(struct spl_link *sl)
{
	sn_tx_purge(sn_link(sl));
}

/* Wait for room in @rxq: false if the link thread is to stop. */
static bool sn_rx_room(struct sn_link *link)
{
	while (skb_queue_len(&link->rxq) >= SN_RXQ_MAX) {
		if (!netif_running(link->ndev))
			skb_queue_purge(&link->rxq);
		wait_event_timeout(link->sl.wq, kthread_should_stop() ||
				   skb_queue_len(&link->rxq) < SN_RXQ_MAX,
				   msecs_to_jiffies(SPL_POLL_MS));
		if (kthread_should_stop())
			return false;
	}
	return true;
}

/* The link thread's read: one frame, once @rxq has room. */
static int sn_rx(struct spl_link *sl, scif_epd_t epd)
{
	struct sn_link *link = sn_link(sl);
	int err;

	if (!sn_rx_room(link))
		return -ESHUTDOWN;
	err = sn_rx_one(link, epd);
	/* Without the frame the stream is out of step: start again. */
	if (err == -ENOMEM)
		atomic64_inc(&link->stats.rx_dropped);
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

/**
 * sn_stats_fill() - a device's counters, for ndo_get_stats64
 * @s: the counters
 * @st: filled
 *
 * Context: any.
 */
void sn_stats_fill(const struct sn_stats *s, struct rtnl_link_stats64 *st)
{
	st->rx_packets = atomic64_read(&s->rx_packets);
	st->rx_bytes = atomic64_read(&s->rx_bytes);
	st->tx_packets = atomic64_read(&s->tx_packets);
	st->tx_bytes = atomic64_read(&s->tx_bytes);
	st->rx_errors = atomic64_read(&s->rx_errors);
	st->rx_frame_errors = st->rx_errors;
	st->rx_dropped = atomic64_read(&s->rx_dropped);
	st->tx_dropped = atomic64_read(&s->tx_dropped);
}

static void sn_get_stats64(struct net_device *ndev,
			   struct rtnl_link_stats64 *st)
{
	sn_stats_fill(&((struct sn_link *)netdev_priv(ndev))->stats, st);
}

static const struct net_device_ops sn_netdev_ops = {
	.ndo_open = sn_open,
	.ndo_stop = sn_stop,
	.ndo_start_xmit = sn_start_xmit,
	.ndo_get_stats64 = sn_get_stats64,
	.ndo_validate_addr = eth_validate_addr,
	.ndo_set_mac_address = eth_mac_addr,
};

/* The counters of sn<peer> or sn, whose frames share the links' queues. */
static struct sn_stats *sn_stats_of(struct net_device *ndev)
{
	if (ndev->netdev_ops == &sn_netdev_ops)
		return &((struct sn_link *)netdev_priv(ndev))->stats;
	return sn_upper->stats(ndev);
}

/**
 * sn_link_peer() - the peer node of sn<peer>
 * @ndev: any net device
 *
 * Context: any; @ndev must be held by the caller.
 * Return: the peer, or -ENODEV when @ndev is not a link's device.
 */
int sn_link_peer(const struct net_device *ndev)
{
	const struct sn_link *link;

	if (ndev->netdev_ops != &sn_netdev_ops)
		return -ENODEV;
	link = netdev_priv(ndev);
	return link->sl.peer;
}

/* 02:53:4e:00:<self>:<peer>: locally administered, unique per pair. */
static void sn_set_mac(struct net_device *ndev, u16 self, u16 peer)
{
	u8 addr[ETH_ALEN] = { 0x02, 0x53, 0x4e, 0, self, peer };

	eth_hw_addr_set(ndev, addr);
}

static struct spl_link *sn_link_create(u16 self, u16 peer)
{
	struct net_device *ndev;
	struct device *parent;
	struct sn_link *link;
	char name[IFNAMSIZ];
	int err;

	/* Without sn the links still work; the next link tries again. */
	err = sn_upper->link_made(self);
	if (err)
		pr_warn("scif_net: no shared device sn (%d)\n", err);
	snprintf(name, sizeof(name), "scif_net.%u", peer);
	parent = root_device_register(name);
	if (IS_ERR(parent))
		return ERR_CAST(parent);
	snprintf(name, sizeof(name), "sn%u", peer);
	ndev = alloc_netdev(sizeof(*link), name, NET_NAME_PREDICTABLE,
			    ether_setup);
	if (!ndev) {
		err = -ENOMEM;
		goto unparent;
	}
	link = netdev_priv(ndev);
	scif_peer_links_link_init(&sn_links, &link->sl, peer);
	link->ndev = ndev;
	link->parent = parent;
	skb_queue_head_init(&link->rxq);
	skb_queue_head_init(&link->txq);
	INIT_WORK(&link->tx_work, sn_tx_work);
	ndev->netdev_ops = &sn_netdev_ops;
	ndev->needed_headroom = sizeof(struct sn_hdr);
	ndev->min_mtu = ETH_MIN_MTU;
	ndev->max_mtu = SN_MAX_MTU;
	ndev->mtu = SN_MAX_MTU;
	sn_set_mac(ndev, self, peer);
	SET_NETDEV_DEV(ndev, parent);
	netif_napi_add(ndev, &link->napi, sn_napi_poll);
	netif_carrier_off(ndev);
	err = register_netdev(ndev);
	if (err)
		goto free;
	return &link->sl;
free:
	netif_napi_del(&link->napi);
	free_netdev(ndev);
unparent:
	root_device_unregister(parent);
	return ERR_PTR(err);
}

/* After the link thread has stopped (or failed to start). */
static void sn_link_destroy(struct spl_link *sl)
{
	struct sn_link *link = sn_link(sl);
	struct net_device *ndev = link->ndev;
	struct device *parent = link->parent;

	unregister_netdev(ndev);
	cancel_work_sync(&link->tx_work);
	skb_queue_purge(&link->txq);
	skb_queue_purge(&link->rxq);
	netif_napi_del(&link->napi);
	free_netdev(ndev);
	root_device_unregister(parent);
}

/* SCIF's client callbacks carry no context: these name the links. */
static void sn_probe(struct scif_peer_dev *peer)
{
	scif_peer_links_node_online(&sn_links, peer);
}

static void sn_remove(struct scif_peer_dev *peer)
{
	scif_peer_links_node_offline(&sn_links, peer);
}

static const struct spl_ops sn_spl_ops = {
	.name = "scif_net",
	.port = SN_PORT,
	.probe = sn_probe,
	.remove = sn_remove,
	.create = sn_link_create,
	.destroy = sn_link_destroy,
	.up = sn_up,
	.rx = sn_rx,
	.down = sn_down,
	.purge = sn_purge,
};

/**
 * sn_links_start() - start making the links, one per peer node
 * @upper: the layer above, which the links hand sn's part to
 *
 * Context: process (module init).
 * Return: 0, or scif_peer_links_start()'s error.
 */
int sn_links_start(const struct sn_upper *upper)
{
	sn_upper = upper;
	scif_peer_links_init(&sn_links, &sn_spl_ops);
	return scif_peer_links_start(&sn_links);
}

/**
 * sn_links_stop() - stop every link thread and destroy every link
 *
 * Context: process (module exit); sleeps until the threads have stopped.
 */
void sn_links_stop(void)
{
	scif_peer_links_stop(&sn_links);
}
