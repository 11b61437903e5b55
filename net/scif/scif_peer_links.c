// SPDX-License-Identifier: GPL-2.0
/*
 * scif_peer_links.c: one SCIF connection per peer node, for a kernel
 * client of SCIF.  scif_net.c and scif_vsock.c #include this file, so
 * each module has its own copy of the state below (its own port, thread
 * names, links and SCIF client) and scif.ko gains no API.  Only the
 * connections are here; each client keeps its data path (what it sends
 * and how it reads) behind struct spl_ops.
 *
 * Every node listens on the client's port; of each pair of nodes the one
 * with the lower id connects, the higher accepts.  The listener kthread
 * hands each accepted endpoint to the link of the node it came from.  A
 * link's kthread owns its connection: it takes the endpoint the listener
 * accepted or connects (retrying every SPL_RETRY_MS), reads until the
 * connection fails, closes it and starts again.  The connecting side
 * binds a privileged port (below SCIF_ADMIN_PORT_END) and the listener
 * closes at once a connection from any other port: only a kernel client
 * or a root process of the peer node can be the link, no unprivileged
 * user can take it over.  The SCIF client's probe and remove only mark
 * nodes online or offline and queue a work item, which creates the link
 * of a node seen for the first time.  A link lives until the module
 * unloads.  Documentation/scif/net.rst has the design.
 */
#include <linux/bitops.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/mutex.h>
#include <linux/scif.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

/* Milliseconds a thread waits on SCIF before it looks at its flags. */
#define SPL_POLL_MS	100
/* Between attempts to connect. */
#define SPL_RETRY_MS	500
/* The ports a link connects from, tried from the top down: privileged,
 * so that the peer's listener knows a kernel client (or a root process)
 * made the connection.  256 of them: room for two clients' links to 63
 * peers each and for ports root processes hold, and the well-known ports
 * (700, 701) stay below, never taken by a link.
 */
#define SPL_PORT_TOP	(SCIF_ADMIN_PORT_END - 1)
#define SPL_PORT_BOTTOM	(SCIF_ADMIN_PORT_END - 256)

/**
 * struct spl_link - a peer node's connection, embedded in the client's link
 * @peer: the peer's node id
 * @tx_mutex: held by the client's sender while it uses @epd; the link
 *	thread takes it to set or clear @epd
 * @epd: the connected endpoint, or NULL; written by the link thread
 *	under @tx_mutex, read by the link thread and by the sender under it
 * @closing: set by the link thread before it takes @tx_mutex to end the
 *	connection, so that the sender lets go at once
 * @tx_failed: set by the sender (spl_tx_failed()) when a send failed;
 *	the link thread then resets the connection
 * @lock: protects @pending
 * @pending: an endpoint the listener accepted from @peer, not yet taken
 *	by the link thread
 * @wq: the link thread waits here (for @pending, the peer's return, and
 *	whatever the client's @rx waits for)
 * @thread: the link thread; runs from creation to module unload
 *
 * Lock order: @tx_mutex, then @lock or the client's own spinlocks.  No
 * SCIF call is made under a spinlock.
 */
struct spl_link {
	u16 peer;
	struct mutex tx_mutex;	/* see above */
	scif_epd_t epd;
	bool closing;
	bool tx_failed;
	spinlock_t lock;	/* see above */
	scif_epd_t pending;
	wait_queue_head_t wq;
	struct task_struct *thread;
};

/**
 * struct spl_ops - the client: its names and its data path
 * @name: the module's name: the SCIF client's, "<name>_listen" for the
 *	listener and "<name>/<peer>" for the link threads
 * @port: the well-known SCIF port every node listens on
 * @create: make the client's link to @peer (which calls spl_link_init()),
 *	or an ERR_PTR; from the nodes work
 * @destroy: free a link @create made, after its thread has stopped (or
 *	failed to start) and its pending endpoint is closed
 * @up: @link->epd is set: start sending
 * @rx: read one unit from @epd: 0, -EAGAIN if none came within
 *	SPL_POLL_MS, or an error (the connection is then reset)
 * @down: optional; the connection is about to end, before @closing is set
 * @purge: drop what waits to be sent; called under @tx_mutex, @epd cleared
 * @closed: the endpoint is closed; @why is what ended the connection
 */
struct spl_ops {
	const char *name;
	u16 port;
	struct spl_link *(*create)(u16 self, u16 peer);
	void (*destroy)(struct spl_link *link);
	void (*up)(struct spl_link *link);
	int (*rx)(struct spl_link *link, scif_epd_t epd);
	void (*down)(struct spl_link *link);
	void (*purge)(struct spl_link *link);
	void (*closed)(struct spl_link *link, int why);
};

/* spl_links[]: the links by peer id, created by spl_nodes_work and freed
 * at unload; written under spl_links_lock, which is never held across a
 * SCIF call, and read locklessly (READ_ONCE) by spl_link_of(): a link
 * lives until unload.
 * spl_online: the nodes SCIF reports online (atomic bitops).
 * spl_self: this node's id, as spl_nodes_work last read it (READ_ONCE).
 * spl_ops, spl_client.name: set by spl_init(), before anything runs.
 */
static const struct spl_ops *spl_ops;
static struct spl_link *spl_links[SCIF_MAX_NODES];
static DEFINE_MUTEX(spl_links_lock);
static DECLARE_BITMAP(spl_online, SCIF_MAX_NODES);
static u16 spl_self;
static struct task_struct *spl_listener;
static scif_epd_t spl_listen_epd;

static inline u16 spl_self_id(void)
{
	return READ_ONCE(spl_self);
}

static inline bool spl_peer_online(u16 node)
{
	return test_bit(node, spl_online);
}

/* The link to @node, or NULL if there is none (yet). */
static inline struct spl_link *spl_link_of(u64 node)
{
	if (node >= SCIF_MAX_NODES)
		return NULL;
	return READ_ONCE(spl_links[node]);
}

/* For @create: the shared part of a zeroed link. */
static void spl_link_init(struct spl_link *link, u16 peer)
{
	link->peer = peer;
	mutex_init(&link->tx_mutex);
	spin_lock_init(&link->lock);
	init_waitqueue_head(&link->wq);
}

/* For the sender: a send failed, reset the connection. */
static void spl_tx_failed(struct spl_link *link)
{
	WRITE_ONCE(link->tx_failed, true);
	wake_up(&link->wq);
}

/* @tx: asked by the sender, which is not the link thread. */
static bool spl_stopping(struct spl_link *link, bool tx)
{
	return (!tx && kthread_should_stop()) || READ_ONCE(link->closing) ||
	       READ_ONCE(link->tx_failed) || READ_ONCE(link->pending) ||
	       !test_bit(link->peer, spl_online);
}

/* Move @len bytes to (@tx) or from the connection, in slices, waiting at
 * most SPL_POLL_MS at a time so that a reason to stop is seen: then
 * -EAGAIN if @may_stop and no byte moved yet, else -ECONNABORTED.
 */
static int spl_xfer(struct spl_link *link, scif_epd_t epd, void *buf,
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
		if (spl_stopping(link, tx))
			return (may_stop && !done) ? -EAGAIN : -ECONNABORTED;
		n = scif_poll(&pe, 1, SPL_POLL_MS);
		if (n < 0)
			return n;
	}
	return 0;
}

/* ---- the connection ---- */

static void spl_up(struct spl_link *link, scif_epd_t epd)
{
	mutex_lock(&link->tx_mutex);
	link->epd = epd;
	WRITE_ONCE(link->closing, false);
	WRITE_ONCE(link->tx_failed, false);
	mutex_unlock(&link->tx_mutex);
	spl_ops->up(link);
}

static void spl_down(struct spl_link *link, int why)
{
	scif_epd_t epd;

	if (spl_ops->down)
		spl_ops->down(link);
	WRITE_ONCE(link->closing, true);
	mutex_lock(&link->tx_mutex);
	epd = link->epd;
	link->epd = NULL;
	spl_ops->purge(link);
	mutex_unlock(&link->tx_mutex);
	scif_close(epd);
	spl_ops->closed(link, why);
}

/* Read until the connection fails or the thread is to stop. */
static int spl_rx_loop(struct spl_link *link, scif_epd_t epd)
{
	int err;

	for (;;) {
		/* Asked between reads too: traffic may never pause. */
		if (spl_stopping(link, false))
			break;
		err = spl_ops->rx(link, epd);
		if (!err)
			continue;
		if (err != -EAGAIN)
			return err;
		break;
	}
	return kthread_should_stop() ? -ESHUTDOWN : -ECONNABORTED;
}

static scif_epd_t spl_take_pending(struct spl_link *link)
{
	scif_epd_t epd;

	spin_lock(&link->lock);
	epd = link->pending;
	link->pending = NULL;
	spin_unlock(&link->lock);
	return epd;
}

/* Bind @epd to the highest free port of the links' range: 0 or an errno. */
static int spl_bind_privileged(scif_epd_t epd)
{
	int port, err;

	for (port = SPL_PORT_TOP; port >= SPL_PORT_BOTTOM; port--) {
		err = scif_bind(epd, port);
		if (err != -EINVAL)	/* -EINVAL: in use, try the next */
			return err < 0 ? err : 0;
	}
	return -EADDRINUSE;
}

/* The lower id's side: connect to the peer's listener. */
static scif_epd_t spl_connect(struct spl_link *link)
{
	struct scif_port_id dst = { .node = link->peer, .port = spl_ops->port };
	scif_epd_t epd;
	int err;

	epd = scif_open();
	if (!epd)
		return NULL;
	err = spl_bind_privileged(epd);
	if (err) {
		pr_warn_ratelimited("%s: no free port below %u for node %u: %d\n",
				    spl_ops->name, SCIF_ADMIN_PORT_END,
				    link->peer, err);
		goto fail;
	}
	if (scif_connect(epd, &dst) < 0)
		goto fail;
	return epd;
fail:
	scif_close(epd);
	return NULL;
}

/* An endpoint connected to the peer, or NULL after a wait. */
static scif_epd_t spl_establish(struct spl_link *link)
{
	scif_epd_t epd = spl_take_pending(link);

	if (epd)
		return epd;
	if (test_bit(link->peer, spl_online) &&
	    READ_ONCE(spl_self) < link->peer) {
		epd = spl_connect(link);
		if (epd)
			return epd;
	}
	wait_event_interruptible_timeout(link->wq, kthread_should_stop() ||
					 READ_ONCE(link->pending),
					 msecs_to_jiffies(SPL_RETRY_MS));
	return NULL;
}

static int spl_link_thread(void *arg)
{
	struct spl_link *link = arg;
	scif_epd_t epd;
	int err;

	while (!kthread_should_stop()) {
		epd = spl_establish(link);
		if (!epd)
			continue;
		spl_up(link, epd);
		err = spl_rx_loop(link, epd);
		spl_down(link, err);
	}
	return 0;
}

/* ---- the listener ---- */

/* Give @epd, accepted from @node, to its link; closes it if none wants it. */
static void spl_hand_over(scif_epd_t epd, u16 node)
{
	struct spl_link *link = NULL;
	scif_epd_t old = epd;

	mutex_lock(&spl_links_lock);
	if (node < SCIF_MAX_NODES && node < READ_ONCE(spl_self))
		link = spl_links[node];
	if (link) {
		spin_lock(&link->lock);
		old = link->pending;
		link->pending = epd;
		spin_unlock(&link->lock);
		wake_up(&link->wq);
	}
	mutex_unlock(&spl_links_lock);
	if (old)
		scif_close(old);
}

/* A link's connection comes from a privileged port: only a kernel client
 * or a process with CAP_NET_BIND_SERVICE binds one (scif_fd.c).  Any
 * other connection is closed before a link sees it, and logged.
 */
static bool spl_privileged(const struct scif_port_id *peer)
{
	return peer->port && peer->port < SCIF_ADMIN_PORT_END;
}

static void spl_refuse(scif_epd_t epd, const struct scif_port_id *peer)
{
	scif_close(epd);
	pr_info_ratelimited("%s: refused a link from node %u port %u: not a privileged port\n",
			    spl_ops->name, peer->node, peer->port);
}

static int spl_listen_thread(void *arg)
{
	struct scif_pollepd pe = { .epd = arg, .events = EPOLLIN };
	struct scif_port_id peer;
	scif_epd_t epd;

	while (!kthread_should_stop()) {
		if (scif_poll(&pe, 1, SPL_POLL_MS) <= 0)
			continue;
		if (scif_accept(pe.epd, &peer, &epd, 0))
			continue;
		if (spl_privileged(&peer))
			spl_hand_over(epd, peer.node);
		else
			spl_refuse(epd, &peer);
	}
	return 0;
}

static int spl_listen_start(void)
{
	scif_epd_t epd = scif_open();
	int err;

	if (!epd)
		return -ENOMEM;
	err = scif_bind(epd, spl_ops->port);
	if (err < 0)
		goto fail;
	err = scif_listen(epd, SCIF_MAX_NODES);
	if (err)
		goto fail;
	spl_listener = kthread_run(spl_listen_thread, epd, "%s_listen",
				   spl_ops->name);
	if (IS_ERR(spl_listener)) {
		err = PTR_ERR(spl_listener);
		goto fail;
	}
	spl_listen_epd = epd;
	return 0;
fail:
	scif_close(epd);
	return err;
}

static void spl_listen_stop(void)
{
	kthread_stop(spl_listener);
	scif_close(spl_listen_epd);
}

/* ---- links ---- */

static struct spl_link *spl_link_create(u16 self, u16 peer)
{
	struct spl_link *link = spl_ops->create(self, peer);
	int err;

	if (IS_ERR(link))
		return link;
	link->thread = kthread_run(spl_link_thread, link, "%s/%u",
				   spl_ops->name, peer);
	if (IS_ERR(link->thread)) {
		err = PTR_ERR(link->thread);
		spl_ops->destroy(link);
		return ERR_PTR(err);
	}
	return link;
}

static void spl_link_destroy(struct spl_link *link)
{
	scif_epd_t epd;

	/* The thread closes its connection; the listener may have left one. */
	kthread_stop(link->thread);
	epd = spl_take_pending(link);
	if (epd)
		scif_close(epd);
	spl_ops->destroy(link);
}

/* ---- SCIF's nodes ---- */

/* Creates the links of nodes that came online; wakes all links. */
static void spl_nodes_work_fn(struct work_struct *work)
{
	struct spl_link *link;
	u16 self, id;

	scif_get_node_ids(NULL, 0, &self);
	WRITE_ONCE(spl_self, self);
	mutex_lock(&spl_links_lock);
	for (id = 0; id < SCIF_MAX_NODES; id++) {
		link = spl_links[id];
		if (!link && id != self && test_bit(id, spl_online)) {
			link = spl_link_create(self, id);
			if (IS_ERR(link)) {
				pr_err("%s: no link to node %u: %ld\n",
				       spl_ops->name, id, PTR_ERR(link));
				link = NULL;
			}
			WRITE_ONCE(spl_links[id], link);
		}
		if (link)
			wake_up(&link->wq);
	}
	mutex_unlock(&spl_links_lock);
}

static DECLARE_WORK(spl_nodes_work, spl_nodes_work_fn);

/* Called under SCIF's node lock: only flags and a work item here. */
static void spl_probe(struct scif_peer_dev *peer)
{
	if (peer->dnode >= SCIF_MAX_NODES)
		return;
	set_bit(peer->dnode, spl_online);
	schedule_work(&spl_nodes_work);
}

static void spl_remove(struct scif_peer_dev *peer)
{
	if (peer->dnode >= SCIF_MAX_NODES)
		return;
	clear_bit(peer->dnode, spl_online);
	schedule_work(&spl_nodes_work);
}

static struct scif_client spl_client = {
	.probe = spl_probe,
	.remove = spl_remove,
};

/* ---- the module's side ---- */

/* First, at module init: take @ops and this node's id. */
static void spl_init(const struct spl_ops *ops)
{
	u16 self;

	spl_ops = ops;
	spl_client.name = ops->name;
	scif_get_node_ids(NULL, 0, &self);
	WRITE_ONCE(spl_self, self);
}

/* Listen, then be told of nodes: links come as peers do.  0 or an errno. */
static int spl_start(void)
{
	int err;

	err = spl_listen_start();
	if (err)
		return err;
	err = scif_client_register(&spl_client);
	if (err)
		goto stop;
	return 0;
stop:
	spl_listen_stop();
	return err;
}

/* At unload: no more nodes, no listener, then every link destroyed. */
static void spl_stop(void)
{
	u16 id;

	scif_client_unregister(&spl_client);
	cancel_work_sync(&spl_nodes_work);
	spl_listen_stop();
	for (id = 0; id < SCIF_MAX_NODES; id++)
		if (spl_links[id])
			spl_link_destroy(spl_links[id]);
}
