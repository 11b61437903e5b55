/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scif_net.ko's own declarations, shared by its files, from the top:
 *
 *   scif_net_main.c    the module: its start and end, and its API for
 *                      other modules (<linux/scif_net.h>)
 *   scif_net_shared.c  the shared device "sn": one interface that
 *                      reaches every node, whose frames travel on the
 *                      links marked as its own
 *   scif_net_link.c    the links (one per peer node), their devices
 *                      sn<peer>, the framing, sending and receiving;
 *                      it reaches sn only through struct sn_upper
 *
 * A file calls those below it; none calls one above it.
 *
 * Documentation/scif/net.rst has the design.
 */
#ifndef _SCIF_NET_H
#define _SCIF_NET_H

#include <linux/atomic.h>
#include <linux/netdevice.h>
#include <linux/scif_peer_links.h>
#include <linux/skbuff.h>
#include <linux/workqueue.h>

#define SN_MAGIC	0x534e4554	/* "SNET": a frame of sn<peer> */
#define SN_MAGIC_SHARED	0x534e5348	/* "SNSH": a frame of sn */
#define SN_MAX_MTU	65535
#define SN_MAX_FRAME	(ETH_HLEN + SN_MAX_MTU)
/* Frames waiting to be sent before the queue is stopped. */
#define SN_TXQ_MAX	64
/* Frames waiting for NAPI before the reader waits (sn<peer>) or drops (sn). */
#define SN_RXQ_MAX	256

/**
 * struct sn_hdr - what precedes every frame on the connection
 * @magic: SN_MAGIC or SN_MAGIC_SHARED: the device the frame is for
 * @len: bytes of the frame that follows, ETH_HLEN to SN_MAX_FRAME
 */
struct sn_hdr {
	__le32 magic;
	__le32 len;
};

/**
 * struct sn_stats - a device's counters, updated without locks
 * @rx_packets: frames delivered to NAPI
 * @rx_bytes: their bytes
 * @tx_packets: frames sent whole
 * @tx_bytes: their bytes
 * @rx_errors: frames refused: a header (the connection is reset for
 *	each), or on sn a source address that is not the sender's
 * @rx_dropped: frames dropped on receive (no memory, device down, sn's
 *	queue full)
 * @tx_dropped: frames dropped on transmit (no carrier, send failed, no
 *	such node)
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
 * @sl: the connection (scif_peer_links.ko); @sl.tx_mutex is held by
 *	@tx_work while it uses @sl.epd, and the link thread waits on @sl.wq
 *	for room in @rxq too
 * @ndev: the net device sn<peer>
 * @napi: delivers the frames of @rxq
 * @rxq: frames read for @ndev, for NAPI; its own lock
 * @txq: frames to send, of @ndev and of sn (each skb's dev says which);
 *	its own lock
 * @tx_work: sends @txq
 * @stats: @ndev's counters
 * @parent: the net device's parent, /sys/devices/scif_net.<peer>: the
 *	link to that peer as a device, so that what sits on the net device
 *	(scif_rdma's RDMA device) finds it through its own parent, as on a
 *	NIC; made before the net device and removed after it (whose
 *	unregistration waits for every user of the net device to let go)
 *
 * Lock order: @sl.tx_mutex, then @sl.lock.  No SCIF call is made under
 * @sl.lock.  A link lives from its creation to scif_peer_links_stop().
 */
struct sn_link {
	struct spl_link sl;
	struct net_device *ndev;
	struct napi_struct napi;
	struct sk_buff_head rxq;
	struct sk_buff_head txq;
	struct work_struct tx_work;
	struct sn_stats stats;
	struct device *parent;
};

/**
 * struct sn_upper - what the links hand the layer above (sn)
 * @link_made: a link is being made, by the links' nodes work (process
 *	context): sn is made with the first; 0 or a negative errno (the
 *	link is made anyway)
 * @rx: a frame for sn read by a link's thread, at least ETH_HLEN
 *	bytes; consumed
 * @carrier: a link's carrier changed (in its thread)
 * @wake: a link's send queue has room (any context)
 * @stats: the counters of a device that is not a link's, whose frame
 *	was queued on a link (any context)
 */
struct sn_upper {
	int (*link_made)(u16 self);
	void (*rx)(struct sn_link *link, struct sk_buff *skb);
	void (*carrier)(void);
	void (*wake)(void);
	struct sn_stats *(*stats)(struct net_device *ndev);
};

/* scif_net_link.c */
int sn_links_start(const struct sn_upper *upper);
void sn_links_stop(void);
struct sn_link *sn_link_to(u64 node);
int sn_link_peer(const struct net_device *ndev);
void sn_link_xmit(struct sn_link *link, struct sk_buff *skb,
		  struct net_device *from, u32 magic);
int sn_napi_deliver(struct napi_struct *napi, struct sk_buff_head *rxq,
		    int budget);
void sn_stats_fill(const struct sn_stats *s, struct rtnl_link_stats64 *st);

/* scif_net_shared.c */
extern const struct sn_upper sn_shared_upper;
struct net_device *sn_shared_stop(void);
void sn_shared_free(struct net_device *ndev);
bool sn_shared_owns(const struct net_device *ndev);
int sn_shared_node_of(const u8 *mac);

#endif /* _SCIF_NET_H */
