// SPDX-License-Identifier: GPL-2.0
/*
 * scif_net's shared device "sn": one Ethernet interface that reaches
 * every node, so that one subnet spans the cluster and the kernel's
 * neighbour table maps a peer's address to its node.
 *
 * Its MAC names the node, 02:53:4e:00:<node>:ff.  A frame to a peer's
 * MAC goes on the link to that peer (scif_net_main.c), a broadcast or
 * multicast frame on every link that is up; its header's magic says it
 * is sn's, and the peer hands it to its own sn.  A frame whose source
 * is not the MAC of the node it came from is refused.  sn has no queue
 * of its own on the links: its frames wait in the links' send queues,
 * counted on sn.  This file is the layer above the links
 * (scif_net_link.c), which reach it through sn_shared_upper only.
 * Documentation/scif/net.rst has the design.
 */
#include <linux/etherdevice.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>

#include "scif_net.h"

/**
 * struct sn_shared - the shared device (netdev_priv of "sn")
 * @ndev: the net device
 * @napi: delivers the frames of @rxq
 * @rxq: frames read for sn by every link thread; its own lock.  When
 *	SN_RXQ_MAX wait, more are dropped (a link thread does not wait for
 *	sn, whose NAPI would have to know every link to wake it)
 * @stats: counters
 * @parent: /sys/devices/scif_net, the net device's parent (as each
 *	link's), made before it and removed after it
 * @self: this node's id, which the MAC names
 */
struct sn_shared {
	struct net_device *ndev;
	struct napi_struct napi;
	struct sk_buff_head rxq;
	struct sn_stats stats;
	struct device *parent;
	u16 self;
};

/* sn_shared_mutex protects the making and the ending of sn and its
 * carrier (set from every link thread).  sn_shared is written under it
 * (WRITE_ONCE): set once sn is registered, cleared before sn is
 * unregistered at unload.  The link threads and the send works read it
 * without the mutex (READ_ONCE): sn is freed only after every one of
 * them has stopped (sn_exit()).  Lock order: sn_shared_mutex, then RTNL.
 */
static DEFINE_MUTEX(sn_shared_mutex);
static struct sn_shared *sn_shared;
static bool sn_shared_closed;

static void sn_shared_mac(u8 *mac, u16 node)
{
	static const u8 base[ETH_ALEN] = { 0x02, 0x53, 0x4e, 0, 0, 0xff };

	ether_addr_copy(mac, base);
	mac[4] = node;
}

/* The node a unicast MAC of sn names, or SCIF_MAX_NODES. */
static u16 sn_shared_node(const u8 *mac)
{
	u8 node[ETH_ALEN];

	sn_shared_mac(node, mac[4]);
	if (!ether_addr_equal(mac, node) || mac[4] >= SCIF_MAX_NODES)
		return SCIF_MAX_NODES;
	return mac[4];
}

/* ---- transmit ---- */

/* A broadcast or multicast frame: a copy on every link that is up. */
static void sn_shared_flood(struct sn_shared *sh, struct sk_buff *skb)
{
	struct sk_buff *copy;
	struct sn_link *link;
	u16 node;

	for (node = 0; node < SCIF_MAX_NODES; node++) {
		link = sn_link_to(node);
		if (node == sh->self || !link || !netif_carrier_ok(link->ndev))
			continue;
		copy = skb_copy_expand(skb, sizeof(struct sn_hdr), 0,
				       GFP_ATOMIC);
		if (!copy) {
			atomic64_inc(&sh->stats.tx_dropped);
			continue;
		}
		sn_link_xmit(link, copy, sh->ndev, SN_MAGIC_SHARED);
	}
	consume_skb(skb);
}

static netdev_tx_t sn_shared_xmit(struct sk_buff *skb, struct net_device *ndev)
{
	struct sn_shared *sh = netdev_priv(ndev);
	struct sn_link *link;
	u16 node;

	if (skb->len < ETH_HLEN)
		goto drop;
	if (is_multicast_ether_addr(skb->data)) {
		sn_shared_flood(sh, skb);
		return NETDEV_TX_OK;
	}
	node = sn_shared_node(skb->data);
	link = node == sh->self ? NULL : sn_link_to(node);
	if (!link)
		goto drop;
	sn_link_xmit(link, skb, ndev, SN_MAGIC_SHARED);
	return NETDEV_TX_OK;
drop:
	atomic64_inc(&sh->stats.tx_dropped);
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

/* A link's send queue has room: wake sn's.  sn's queue is stopped when
 * the queue of the link a frame went on is full; any link's room wakes
 * it (sn_link_xmit() bounds what one link then takes).
 */
static void sn_shared_wake(void)
{
	struct sn_shared *sh = READ_ONCE(sn_shared);

	if (sh && netif_queue_stopped(sh->ndev))
		netif_wake_queue(sh->ndev);
}

/* ---- receive ---- */

/* A frame for sn (at least ETH_HLEN bytes, consumed), read by @link's
 * thread: refused unless its source is the MAC of @link's node; dropped
 * when sn is down or SN_RXQ_MAX frames wait for its NAPI.
 */
static void sn_shared_rx(struct sn_link *link, struct sk_buff *skb)
{
	struct sn_shared *sh = READ_ONCE(sn_shared);
	u8 src[ETH_ALEN];

	if (!sh) {
		atomic64_inc(&link->stats.rx_dropped);
		goto free;
	}
	sn_shared_mac(src, link->sl.peer);
	if (!ether_addr_equal(skb->data + ETH_ALEN, src)) {
		atomic64_inc(&sh->stats.rx_errors);
		netdev_warn_once(sh->ndev, "frame from node %u with another's source\n",
				 link->sl.peer);
		goto free;
	}
	if (!netif_running(sh->ndev) || skb_queue_len(&sh->rxq) >= SN_RXQ_MAX) {
		atomic64_inc(&sh->stats.rx_dropped);
		goto free;
	}
	skb->protocol = eth_type_trans(skb, sh->ndev);
	atomic64_inc(&sh->stats.rx_packets);
	atomic64_add(skb->len + ETH_HLEN, &sh->stats.rx_bytes);
	skb_queue_tail(&sh->rxq, skb);
	local_bh_disable();
	napi_schedule(&sh->napi);
	local_bh_enable();
	return;
free:
	kfree_skb(skb);
}

static int sn_shared_poll(struct napi_struct *napi, int budget)
{
	struct sn_shared *sh = container_of(napi, struct sn_shared, napi);

	return sn_napi_deliver(napi, &sh->rxq, budget);
}

/* ---- the net device ---- */

/* A link's carrier changed (in its thread): sn's follows, on while any
 * link's is.  Takes sn_shared_mutex.
 */
static void sn_shared_carrier(void)
{
	struct sn_link *link;
	bool any = false;
	u16 node;

	mutex_lock(&sn_shared_mutex);
	if (!sn_shared)
		goto out;
	for (node = 0; node < SCIF_MAX_NODES && !any; node++) {
		link = sn_link_to(node);
		any = link && netif_carrier_ok(link->ndev);
	}
	if (any)
		netif_carrier_on(sn_shared->ndev);
	else
		netif_carrier_off(sn_shared->ndev);
out:
	mutex_unlock(&sn_shared_mutex);
}

static int sn_shared_open(struct net_device *ndev)
{
	struct sn_shared *sh = netdev_priv(ndev);

	skb_queue_purge(&sh->rxq);
	napi_enable(&sh->napi);
	netif_start_queue(ndev);
	return 0;
}

static int sn_shared_close(struct net_device *ndev)
{
	struct sn_shared *sh = netdev_priv(ndev);

	netif_stop_queue(ndev);
	napi_disable(&sh->napi);
	return 0;
}

static void sn_shared_get_stats64(struct net_device *ndev,
				  struct rtnl_link_stats64 *st)
{
	sn_stats_fill(&((struct sn_shared *)netdev_priv(ndev))->stats, st);
}

/* No ndo_set_mac_address: the MAC names the node. */
static const struct net_device_ops sn_shared_ops = {
	.ndo_open = sn_shared_open,
	.ndo_stop = sn_shared_close,
	.ndo_start_xmit = sn_shared_xmit,
	.ndo_get_stats64 = sn_shared_get_stats64,
	.ndo_validate_addr = eth_validate_addr,
};

/* The counters of sn, a device that is not a link's (an skb of it). */
static struct sn_stats *sn_shared_stats(struct net_device *ndev)
{
	return &((struct sn_shared *)netdev_priv(ndev))->stats;
}

/**
 * sn_shared_owns() - whether a net device is sn
 * @ndev: any net device
 *
 * Context: any.
 * Return: true for sn.
 */
bool sn_shared_owns(const struct net_device *ndev)
{
	return ndev->netdev_ops == &sn_shared_ops;
}

/**
 * sn_shared_node_of() - the node a MAC of sn names
 * @mac: any MAC, a neighbour's on sn
 *
 * Context: any.
 * Return: the node (this node's own included), or -EHOSTUNREACH.
 */
int sn_shared_node_of(const u8 *mac)
{
	u16 node = sn_shared_node(mac);

	return node < SCIF_MAX_NODES ? node : -EHOSTUNREACH;
}

static struct sn_shared *sn_shared_alloc(u16 self)
{
	struct net_device *ndev;
	struct sn_shared *sh;
	u8 mac[ETH_ALEN];

	ndev = alloc_netdev(sizeof(*sh), "sn", NET_NAME_PREDICTABLE,
			    ether_setup);
	if (!ndev)
		return NULL;
	sh = netdev_priv(ndev);
	sh->ndev = ndev;
	sh->self = self;
	skb_queue_head_init(&sh->rxq);
	ndev->netdev_ops = &sn_shared_ops;
	ndev->needed_headroom = sizeof(struct sn_hdr);
	ndev->min_mtu = ETH_MIN_MTU;
	ndev->max_mtu = SN_MAX_MTU;
	ndev->mtu = SN_MAX_MTU;
	sn_shared_mac(mac, self);
	eth_hw_addr_set(ndev, mac);
	netif_napi_add(ndev, &sh->napi, sn_shared_poll);
	netif_carrier_off(ndev);
	return sh;
}

/* A link is being made (by the links' nodes work): make sn, unless it
 * is there.  0, or a negative errno (sn is then tried again at the next
 * link; -ESHUTDOWN once the module unloads).  Takes sn_shared_mutex,
 * then RTNL.
 */
static int sn_shared_create(u16 self)
{
	struct device *parent;
	struct sn_shared *sh;
	int err = 0;

	mutex_lock(&sn_shared_mutex);
	if (sn_shared || sn_shared_closed) {
		err = sn_shared_closed ? -ESHUTDOWN : 0;
		goto out;
	}
	parent = root_device_register("scif_net");
	if (IS_ERR(parent)) {
		err = PTR_ERR(parent);
		goto out;
	}
	sh = sn_shared_alloc(self);
	if (!sh) {
		err = -ENOMEM;
		goto unparent;
	}
	sh->parent = parent;
	SET_NETDEV_DEV(sh->ndev, parent);
	err = register_netdev(sh->ndev);
	if (err)
		goto free;
	WRITE_ONCE(sn_shared, sh);
	goto out;
free:
	netif_napi_del(&sh->napi);
	free_netdev(sh->ndev);
unparent:
	root_device_unregister(parent);
out:
	mutex_unlock(&sn_shared_mutex);
	return err;
}

/* What the links hand sn (struct sn_upper). */
const struct sn_upper sn_shared_upper = {
	.link_made = sn_shared_create,
	.rx = sn_shared_rx,
	.carrier = sn_shared_carrier,
	.wake = sn_shared_wake,
	.stats = sn_shared_stats,
};

/**
 * sn_shared_stop() - the module unloads: unregister sn
 *
 * After it no frame of sn is sent, its carrier is left alone and none
 * is made again; the link threads drop sn's frames from then on.
 *
 * Context: process, module exit, before the links stop; takes
 * sn_shared_mutex, then RTNL.
 * Return: sn's net device, for sn_shared_free(), or NULL.
 */
struct net_device *sn_shared_stop(void)
{
	struct sn_shared *sh;

	mutex_lock(&sn_shared_mutex);
	sh = sn_shared;
	WRITE_ONCE(sn_shared, NULL);
	sn_shared_closed = true;
	if (sh)
		unregister_netdev(sh->ndev);
	mutex_unlock(&sn_shared_mutex);
	return sh ? sh->ndev : NULL;
}

/**
 * sn_shared_free() - free sn
 * @ndev: what sn_shared_stop() returned, or NULL
 *
 * Context: process, module exit, after every link thread and send work
 * has stopped.
 */
void sn_shared_free(struct net_device *ndev)
{
	struct sn_shared *sh;
	struct device *parent;

	if (!ndev)
		return;
	sh = netdev_priv(ndev);
	parent = sh->parent;
	skb_queue_purge(&sh->rxq);
	netif_napi_del(&sh->napi);
	free_netdev(ndev);
	root_device_unregister(parent);
}
