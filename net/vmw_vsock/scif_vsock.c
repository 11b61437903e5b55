// SPDX-License-Identifier: GPL-2.0
/*
 * scif_vsock: an AF_VSOCK transport between SCIF nodes.
 *
 * The socket side is the kernel's virtio vsock common code (credit flow
 * control, connection states, SOCK_STREAM and SOCK_SEQPACKET); this
 * module only carries its packets, a struct virtio_vsock_hdr and the
 * payload it announces, over one SCIF connection per peer node, and
 * hands what arrives to virtio_transport_recv_pkt().  Node N has CID
 * N + SV_CID_BASE.  The connections (every node listens on SV_PORT, the
 * lower id of each pair connects; a kthread per link makes and remakes
 * its connection) are scif_peer_links.ko's, with links of this module's
 * own (scif_net has others); this file is the data path: the link thread
 * reads packets (sv_rx_one), and when the connection ends every socket
 * to that node is reset.  Packets
 * to send are queued by send_pkt and sent by a work item; beyond a
 * budget a link is congested and its senders wait for room
 * (stream_has_space says none) until the work item drains it.
 * Documentation/scif/vsock.rst has the design.
 */
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/scif.h>
#include <linux/scif_peer_links.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/virtio_vsock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <net/af_vsock.h>
#include <net/net_namespace.h>
#include <net/sock.h>

/* The well-known port; below SCIF_ADMIN_PORT_END, so privileged. */
#define SV_PORT		701
/* Node N is CID N + SV_CID_BASE: CIDs 0 to 2 are reserved by vsock. */
#define SV_CID_BASE	3
#define SV_HDR_LEN	sizeof(struct virtio_vsock_hdr)
/* The largest payload a packet may carry, as the common code sends. */
#define SV_MAX_PAYLOAD	VIRTIO_VSOCK_MAX_PKT_BUF_SIZE
#define SV_MAX_PKT	(SV_HDR_LEN + SV_MAX_PAYLOAD)
/* A link's transmit budget, packets and payload bytes queued: beyond it
 * the link is congested (senders wait); at half of it they are woken.
 */
#define SV_TXQ_PKTS	1024
#define SV_TXQ_BYTES	(4U << 20)
/* The hard limit, which only packets not gated by the budget reach
 * (replies the receive path makes, senders that passed the gate at once):
 * beyond it send_pkt refuses.
 */
#define SV_TXQ_HARD	4

/**
 * struct sv_link - a peer node's connection
 * @sl: the connection (scif_peer_links.ko); @sl.tx_mutex is held by
 *	@tx_work while it uses @sl.epd
 * @txq: packets to send; its lock also protects @tx_bytes,
 *	@tx_waiting and @connected
 * @tx_bytes: payload bytes in @txq
 * @tx_waiting: a sender found the link congested and waits; cleared,
 *	and every socket's writers woken, when @txq drains to half the
 *	budget
 * @connected: the link has a connection (from the link thread's up
 *	to its purge): only then does send_pkt queue packets, but for
 *	connection requests (see sv_send_pkt())
 * @tx_work: sends @txq
 * @rxbuf: a whole packet as read, before its header is checked (link
 *	thread only)
 * @txbuf: a whole packet as sent (@tx_work only, under @sl.tx_mutex)
 * @tx_dropped: packets refused by send_pkt (hard limit, no link) or
 *	lost with the connection
 * @rx_bad: headers refused (the connection is reset for each)
 *
 * Lock order: @sl.tx_mutex, then @sl.lock or @txq's lock.  No SCIF call
 * is made under a spinlock.
 */
struct sv_link {
	struct spl_link sl;
	struct sk_buff_head txq;
	u32 tx_bytes;
	bool tx_waiting;
	bool connected;
	struct work_struct tx_work;
	void *rxbuf;
	void *txbuf;
	atomic64_t tx_dropped;
	atomic64_t rx_bad;
};

/* sv_links: the links to every peer (scif_peer_links.ko), this module's
 * own.  They are read locklessly by send_pkt (spl_link_of()), which is
 * fine because a link lives until unload, and unload unregisters the
 * transport before it frees links.
 * sv_reset_cid: the CID whose sockets sv_reset_sock resets; written and
 * used under sv_reset_lock.
 */
static struct scif_peer_links sv_links;
static DEFINE_MUTEX(sv_reset_lock);
static u32 sv_reset_cid;

static struct virtio_transport sv_transport;

static u32 sv_cid_of(u16 node)
{
	return (u32)node + SV_CID_BASE;
}

static u32 sv_get_local_cid(void)
{
	return sv_cid_of(spl_self_id(&sv_links));
}

static struct sv_link *sv_link(struct spl_link *sl)
{
	return container_of(sl, struct sv_link, sl);
}

/* The link for @cid, or NULL if no node has it. */
static struct sv_link *sv_link_of_cid(u64 cid)
{
	struct spl_link *sl;

	if (cid < SV_CID_BASE || cid >= SV_CID_BASE + SCIF_MAX_NODES)
		return NULL;
	sl = spl_link_of(&sv_links, cid - SV_CID_BASE);
	return sl ? sv_link(sl) : NULL;
}

/* ---- transmit ---- */

/* Frees a packet the common code gave us, sent or not. */
static void sv_free_sent(struct sk_buff *skb)
{
#ifdef SV_HAVE_CONSUME_SENT
	virtio_transport_consume_skb_sent(skb, true);
#else
	consume_skb(skb);
#endif
}

/* Called under vsock_table_lock, for every connected socket of ours. */
static void sv_wake_writer(struct sock *sk)
{
	sk->sk_write_space(sk);
}

/* @link's queue drained: wake whoever waits for room (any socket may;
 * those to other nodes look again and wait on).
 */
static void sv_wake_writers(void)
{
	vsock_for_each_connected_socket(&sv_transport.transport,
					sv_wake_writer);
}

/* Over the budget: the link's senders wait.  Under @txq's lock. */
static bool sv_congested(struct sv_link *link)
{
	lockdep_assert_held(&link->txq.lock);
	return skb_queue_len(&link->txq) >= SV_TXQ_PKTS ||
	       link->tx_bytes >= SV_TXQ_BYTES;
}

/* A packet is off @txq: true if the senders waiting should be woken.
 * Under @txq's lock.
 */
static bool sv_tx_room(struct sv_link *link)
{
	lockdep_assert_held(&link->txq.lock);
	if (!link->tx_waiting || skb_queue_len(&link->txq) > SV_TXQ_PKTS / 2 ||
	    link->tx_bytes > SV_TXQ_BYTES / 2)
		return false;
	link->tx_waiting = false;
	return true;
}

/* Free what @link has queued; from now on it queues nothing more until
 * sv_up.
 */
static void sv_tx_purge(struct sv_link *link)
{
	struct sk_buff *skb;
	bool wake;

	spin_lock_bh(&link->txq.lock);
	link->connected = false;
	while ((skb = __skb_dequeue(&link->txq))) {
		link->tx_bytes -= skb->len;
		atomic64_inc(&link->tx_dropped);
		spin_unlock_bh(&link->txq.lock);
		sv_free_sent(skb);
		spin_lock_bh(&link->txq.lock);
	}
	wake = sv_tx_room(link);
	spin_unlock_bh(&link->txq.lock);
	if (wake)
		sv_wake_writers();
}

/* send_pkt: queue @skb for its node; never sleeps (the receive path
 * sends replies with it).  Senders wait for room before they make
 * packets (sv_stream_has_space), so the queue stays near the budget;
 * beyond SV_TXQ_HARD times it, or with no link, the packet is refused
 * and the common code fails the send that made it.
 *
 * While the link has no connection only connection requests are queued,
 * so that a connect() made before the link is (made again) waits for it,
 * within the socket's connect timeout.  Any other packet would hold its
 * socket, and the socket this module, for as long as the peer stays
 * without a connection: the reset a closed socket sends when its close
 * timeout ends, say.  It is refused: the sockets to the node were reset
 * when the connection ended, so nothing it says matters to the peer.  A
 * request leaves the queue with its socket's connect timeout or signal
 * (cancel_pkt) or its release (sv_release()).
 */
static int sv_send_pkt(struct sk_buff *skb)
{
	struct virtio_vsock_hdr *hdr = virtio_vsock_hdr(skb);
	struct sv_link *link = sv_link_of_cid(le64_to_cpu(hdr->dst_cid));
	int len = skb->len;
	int err = -EHOSTUNREACH;

	if (!link || !spl_peer_online(&sv_links, link->sl.peer))
		goto drop;
	err = -EMSGSIZE;
	if (len > SV_MAX_PAYLOAD || len != le32_to_cpu(hdr->len))
		goto drop;
	spin_lock_bh(&link->txq.lock);
	err = -EHOSTUNREACH;
	if (!link->connected &&
	    le16_to_cpu(hdr->op) != VIRTIO_VSOCK_OP_REQUEST) {
		spin_unlock_bh(&link->txq.lock);
		goto drop;
	}
	err = -ENOBUFS;
	if (skb_queue_len(&link->txq) >= SV_TXQ_HARD * SV_TXQ_PKTS ||
	    link->tx_bytes + len > SV_TXQ_HARD * SV_TXQ_BYTES) {
		spin_unlock_bh(&link->txq.lock);
		goto drop;
	}
	link->tx_bytes += len;
	__skb_queue_tail(&link->txq, skb);
	spin_unlock_bh(&link->txq.lock);
	queue_work(system_unbound_wq, &link->tx_work);
	return len;
drop:
	if (link)
		atomic64_inc(&link->tx_dropped);
	/* Not sv_free_sent(): the common code takes back the unsent bytes
	 * of a refused packet itself.
	 */
	kfree_skb(skb);
	return err;
}

static struct sk_buff *sv_tx_next(struct sv_link *link)
{
	struct sk_buff *skb;
	bool wake = false;

	spin_lock_bh(&link->txq.lock);
	skb = __skb_dequeue(&link->txq);
	if (skb) {
		link->tx_bytes -= skb->len;
		wake = sv_tx_room(link);
	}
	spin_unlock_bh(&link->txq.lock);
	if (wake)
		sv_wake_writers();
	return skb;
}

/* stream_has_space: the credit the peer gives, or none while the link to
 * it is congested (the sender then waits in the vsock core, its socket
 * unlocked, until sv_wake_writers).
 */
static s64 sv_stream_has_space(struct vsock_sock *vsk)
{
	struct sv_link *link = sv_link_of_cid(vsk->remote_addr.svm_cid);
	bool congested = false;

	if (link) {
		spin_lock_bh(&link->txq.lock);
		congested = sv_congested(link);
		if (congested)
			link->tx_waiting = true;
		spin_unlock_bh(&link->txq.lock);
	}
	return congested ? 0 : virtio_transport_stream_has_space(vsk);
}

static void sv_tx_work(struct work_struct *work)
{
	struct sv_link *link = container_of(work, struct sv_link, tx_work);
	struct sk_buff *skb;
	int err = 0;

	mutex_lock(&link->sl.tx_mutex);
	while (!err && link->sl.epd && !READ_ONCE(link->sl.closing) &&
	       (skb = sv_tx_next(link))) {
		memcpy(link->txbuf, virtio_vsock_hdr(skb), SV_HDR_LEN);
		err = skb_copy_bits(skb, 0, link->txbuf + SV_HDR_LEN, skb->len);
		if (!err)
			err = scif_peer_links_xfer(&link->sl, link->sl.epd,
						   link->txbuf,
						   SV_HDR_LEN + skb->len,
						   true, false);
		if (err) {
			atomic64_inc(&link->tx_dropped);
			scif_peer_links_tx_failed(&link->sl);
		} else {
			virtio_transport_deliver_tap_pkt(skb);
		}
		sv_free_sent(skb);
	}
	mutex_unlock(&link->sl.tx_mutex);
}

/* cancel_pkt: drop what @vsk still has queued (its connect failed). */
static int sv_cancel_pkt(struct vsock_sock *vsk)
{
	struct sv_link *link = sv_link_of_cid(vsk->remote_addr.svm_cid);
	struct sk_buff *skb, *tmp;
	struct sk_buff_head gone;
	bool wake;

	if (!link)
		return 0;
	__skb_queue_head_init(&gone);
	spin_lock_bh(&link->txq.lock);
	skb_queue_walk_safe(&link->txq, skb, tmp) {
		if (skb->sk != sk_vsock(vsk))
			continue;
		__skb_unlink(skb, &link->txq);
		link->tx_bytes -= skb->len;
		__skb_queue_tail(&gone, skb);
	}
	wake = sv_tx_room(link);
	spin_unlock_bh(&link->txq.lock);
	while ((skb = __skb_dequeue(&gone)))
		sv_free_sent(skb);
	if (wake)
		sv_wake_writers();
	return 0;
}

/* release: a socket closed while its link has no connection drops the
 * connection request it may have queued, which its connect timeout only
 * cancels while it is still connecting.
 */
static void sv_release(struct vsock_sock *vsk)
{
	struct sv_link *link = sv_link_of_cid(vsk->remote_addr.svm_cid);
	bool connected = true;

	if (link) {
		spin_lock_bh(&link->txq.lock);
		connected = link->connected;
		spin_unlock_bh(&link->txq.lock);
	}
	if (!connected)
		sv_cancel_pkt(vsk);
	virtio_transport_release(vsk);
}

/* ---- receive ---- */

/* A header from the peer of @link: the payload's length, or -EPROTO. */
static int sv_check_hdr(struct sv_link *link,
			const struct virtio_vsock_hdr *hdr)
{
	u32 len = le32_to_cpu(hdr->len);
	u16 type = le16_to_cpu(hdr->type);

	if (len > SV_MAX_PAYLOAD ||
	    le64_to_cpu(hdr->src_cid) != sv_cid_of(link->sl.peer) ||
	    le64_to_cpu(hdr->dst_cid) != sv_get_local_cid() ||
	    (type != VIRTIO_VSOCK_TYPE_STREAM &&
	     type != VIRTIO_VSOCK_TYPE_SEQPACKET))
		return -EPROTO;
	return len;
}

/* An skb of the packet in @link->rxbuf, as virtio_transport_recv_pkt()
 * takes it: the header at skb->head, the payload as its data.
 */
static struct sk_buff *sv_rx_skb(struct sv_link *link, u32 len)
{
	struct sk_buff *skb;

	skb = virtio_vsock_alloc_skb(SV_HDR_LEN + len, GFP_KERNEL);
	if (!skb)
		return NULL;
	memcpy(virtio_vsock_hdr(skb), link->rxbuf, SV_HDR_LEN);
	/* Large receive skbs are paged where virtio_vsock_skb_put() exists
	 * (Kbuild); it sizes either kind.
	 */
#ifdef SV_HAVE_SKB_PUT
	virtio_vsock_skb_put(skb, len);
#else
	virtio_vsock_skb_rx_put(skb);
#endif
	if (skb_store_bits(skb, 0, link->rxbuf + SV_HDR_LEN, len)) {
		kfree_skb(skb);
		return NULL;
	}
	return skb;
}

/* The link thread's read: one packet, delivered; 0, -EAGAIN if none came
 * within SPL_POLL_MS, or an error (the connection is then reset).
 */
static int sv_rx_one(struct spl_link *sl, scif_epd_t epd)
{
	struct sv_link *link = sv_link(sl);
	struct sk_buff *skb;
	int len, err, tries;

	err = scif_peer_links_xfer(sl, epd, link->rxbuf, SV_HDR_LEN, false, true);
	if (err)
		return err;
	len = sv_check_hdr(link, link->rxbuf);
	if (len < 0) {
		atomic64_inc(&link->rx_bad);
		pr_warn_ratelimited("scif_vsock: bad packet header from node %u\n",
				    sl->peer);
		return len;
	}
	err = scif_peer_links_xfer(sl, epd, link->rxbuf + SV_HDR_LEN, len, false, false);
	if (err)
		return err;
	/* A packet lost here would corrupt its stream: try a while, then
	 * give up the connection (and so its sockets) instead.
	 */
	for (tries = 0; !(skb = sv_rx_skb(link, len)); tries++) {
		if (tries == 10 || kthread_should_stop())
			return -ENOMEM;
		msleep(20);
	}
	virtio_transport_deliver_tap_pkt(skb);
	virtio_transport_recv_pkt(&sv_transport, skb);
	return 0;
}

/* ---- the connection (spl_ops) ---- */

/* Called under vsock_table_lock, for every connected socket of ours. */
static void sv_reset_sock(struct sock *sk)
{
	if (vsock_sk(sk)->remote_addr.svm_cid != sv_reset_cid)
		return;
	sk->sk_state = TCP_CLOSE;
	sk->sk_err = ECONNRESET;
	sk_error_report(sk);
}

/* The peer's state is gone with the connection: reset its sockets. */
static void sv_reset_peer_socks(struct spl_link *sl)
{
	mutex_lock(&sv_reset_lock);
	sv_reset_cid = sv_cid_of(sl->peer);
	vsock_for_each_connected_socket(&sv_transport.transport,
					sv_reset_sock);
	mutex_unlock(&sv_reset_lock);
}

/* The link thread has set @sl->epd: packets to the peer are queued from
 * now on.
 */
static void sv_up(struct spl_link *sl)
{
	struct sv_link *link = sv_link(sl);

	spin_lock_bh(&link->txq.lock);
	link->connected = true;
	spin_unlock_bh(&link->txq.lock);
}

static void sv_purge(struct spl_link *sl)
{
	sv_tx_purge(sv_link(sl));
}

/* The connection is closed: reset the peer's sockets (sv_purge has
 * stopped the link queueing their packets).
 */
static void sv_closed(struct spl_link *sl, int why)
{
	sv_reset_peer_socks(sl);
}

/* ---- links ---- */

static struct spl_link *sv_link_create(u16 self, u16 peer)
{
	struct sv_link *link;

	link = kzalloc(sizeof(*link), GFP_KERNEL);
	if (!link)
		return ERR_PTR(-ENOMEM);
	scif_peer_links_link_init(&sv_links, &link->sl, peer);
	skb_queue_head_init(&link->txq);
	INIT_WORK(&link->tx_work, sv_tx_work);
	link->rxbuf = kvmalloc(SV_MAX_PKT, GFP_KERNEL);
	link->txbuf = kvmalloc(SV_MAX_PKT, GFP_KERNEL);
	if (!link->rxbuf || !link->txbuf)
		goto free;
	return &link->sl;
free:
	kvfree(link->txbuf);
	kvfree(link->rxbuf);
	kfree(link);
	return ERR_PTR(-ENOMEM);
}

/* After the link thread has stopped (or failed to start) and, at unload,
 * the transport is unregistered: no send_pkt can come any more.
 */
static void sv_link_destroy(struct spl_link *sl)
{
	struct sv_link *link = sv_link(sl);

	cancel_work_sync(&link->tx_work);
	sv_tx_purge(link);
	kvfree(link->txbuf);
	kvfree(link->rxbuf);
	kfree(link);
}

/* SCIF's client callbacks carry no context: these name the links. */
static void sv_probe(struct scif_peer_dev *peer)
{
	scif_peer_links_node_online(&sv_links, peer);
}

static void sv_remove(struct scif_peer_dev *peer)
{
	scif_peer_links_node_offline(&sv_links, peer);
}

static const struct spl_ops sv_spl_ops = {
	.name = "scif_vsock",
	.port = SV_PORT,
	.probe = sv_probe,
	.remove = sv_remove,
	.create = sv_link_create,
	.destroy = sv_link_destroy,
	.up = sv_up,
	.rx = sv_rx_one,
	.purge = sv_purge,
	.closed = sv_closed,
};

/* ---- the transport ---- */

static bool sv_seqpacket_allow(u32 remote_cid)
{
	return true;
}

#ifdef SV_HAVE_ZEROCOPY
/* Packets are copied into the SCIF ring, so user pages are fine. */
static bool sv_msgzerocopy_allow(void)
{
	return true;
}
#endif

static struct virtio_transport sv_transport = {
	.transport = {
		.module = THIS_MODULE,
		.get_local_cid = sv_get_local_cid,
		.init = virtio_transport_do_socket_init,
		.destruct = virtio_transport_destruct,
		.release = sv_release,
		.connect = virtio_transport_connect,
		.shutdown = virtio_transport_shutdown,
		.cancel_pkt = sv_cancel_pkt,
		.dgram_bind = virtio_transport_dgram_bind,
		.dgram_dequeue = virtio_transport_dgram_dequeue,
		.dgram_enqueue = virtio_transport_dgram_enqueue,
		.dgram_allow = virtio_transport_dgram_allow,
		.stream_dequeue = virtio_transport_stream_dequeue,
		.stream_enqueue = virtio_transport_stream_enqueue,
		.stream_has_data = virtio_transport_stream_has_data,
		.stream_has_space = sv_stream_has_space,
		.stream_rcvhiwat = virtio_transport_stream_rcvhiwat,
		.stream_is_active = virtio_transport_stream_is_active,
		.stream_allow = virtio_transport_stream_allow,
		.seqpacket_dequeue = virtio_transport_seqpacket_dequeue,
		.seqpacket_enqueue = virtio_transport_seqpacket_enqueue,
		.seqpacket_allow = sv_seqpacket_allow,
		.seqpacket_has_data = virtio_transport_seqpacket_has_data,
		.notify_poll_in = virtio_transport_notify_poll_in,
		.notify_poll_out = virtio_transport_notify_poll_out,
		.notify_recv_init = virtio_transport_notify_recv_init,
		.notify_recv_pre_block = virtio_transport_notify_recv_pre_block,
		.notify_recv_pre_dequeue = virtio_transport_notify_recv_pre_dequeue,
		.notify_recv_post_dequeue = virtio_transport_notify_recv_post_dequeue,
		.notify_send_init = virtio_transport_notify_send_init,
		.notify_send_pre_block = virtio_transport_notify_send_pre_block,
		.notify_send_pre_enqueue = virtio_transport_notify_send_pre_enqueue,
		.notify_send_post_enqueue = virtio_transport_notify_send_post_enqueue,
		.notify_buffer_size = virtio_transport_notify_buffer_size,
#ifdef SV_HAVE_SET_RCVLOWAT
		.notify_set_rcvlowat = virtio_transport_notify_set_rcvlowat,
#endif
#ifdef SV_HAVE_UNSENT_BYTES
		.unsent_bytes = virtio_transport_unsent_bytes,
#endif
#ifdef SV_HAVE_READ_SKB
		.read_skb = virtio_transport_read_skb,
#endif
#ifdef SV_HAVE_ZEROCOPY
		.msgzerocopy_allow = sv_msgzerocopy_allow,
#endif
	},
	.send_pkt = sv_send_pkt,
};

/* The module that holds the slot sockets to remote CIDs are routed by:
 * a probe socket to a CID no node has is given its transport (nothing is
 * sent) and let go.
 */
static void sv_slot_holder(char *name, size_t size)
{
	struct vsock_sock *vsk;
	struct socket *sock;
	int err;

	strscpy(name, "an unknown module", size);
	if (sock_create_kern(&init_net, AF_VSOCK, SOCK_STREAM, 0, &sock))
		return;
	vsk = vsock_sk(sock->sk);
	lock_sock(sock->sk);
	vsock_addr_init(&vsk->remote_addr, VMADDR_CID_ANY - 1, 1024);
	err = vsock_assign_transport(vsk, NULL);
	if (!err && vsk->transport)
		strscpy(name, vsk->transport->module ?
			module_name(vsk->transport->module) : "the kernel",
			size);
	release_sock(sock->sk);
	sock_release(sock);
}

/* Both slots that route remote CIDs: guest->host (which sockets accepted
 * between two CIDs above 2 are given) and host->guest (connect()).
 */
static int sv_register(void)
{
	char holder[MODULE_NAME_LEN];
	int err;

	err = vsock_core_register(&sv_transport.transport,
				  VSOCK_TRANSPORT_F_G2H | VSOCK_TRANSPORT_F_H2G);
	if (err != -EBUSY)
		return err;
	sv_slot_holder(holder, sizeof(holder));
	pr_err("scif_vsock: the vsock slots for remote CIDs are taken by %s (virtio, VMCI, Hyper-V or vhost vsock); unload it to use vsock over SCIF\n",
	       holder);
	return err;
}

static int __init sv_init(void)
{
	u16 self;
	int err;

	scif_peer_links_init(&sv_links, &sv_spl_ops);
	self = spl_self_id(&sv_links);
	err = sv_register();
	if (err)
		return err;
	err = scif_peer_links_start(&sv_links);
	if (err)
		goto unregister;
	pr_info("scif_vsock: node %u is CID %u\n", self, sv_cid_of(self));
	return 0;
unregister:
	vsock_core_unregister(&sv_transport.transport);
	return err;
}

static void __exit sv_exit(void)
{
	/* Sockets hold the module: none is ours any more. */
	vsock_core_unregister(&sv_transport.transport);
	scif_peer_links_stop(&sv_links);
}

module_init(sv_init);
module_exit(sv_exit);
MODULE_DESCRIPTION("AF_VSOCK over SCIF: CID = node id + 3");
MODULE_LICENSE("GPL");
MODULE_VERSION("0.1.0");
