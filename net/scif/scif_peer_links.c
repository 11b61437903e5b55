// SPDX-License-Identifier: GPL-2.0
/*
 * scif_peer_links.ko: one SCIF connection per peer node, for a kernel
 * client of SCIF (scif_net.ko, scif_vsock.ko).  Each client has its own
 * struct scif_peer_links (<linux/scif_peer_links.h>): its port, thread
 * names, links, listener and SCIF client; this module keeps no state of
 * its own, and scif.ko gains no API.  Only the connections are here; each
 * client keeps its data path (what it sends and how it reads) behind
 * struct spl_ops.
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
 * of a node seen for the first time.  A link lives until the client
 * calls scif_peer_links_stop() (at its unload).  Documentation/scif/net.rst has the
 * design.
 */
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/scif_peer_links.h>

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
/* A link logs its first SPL_LOG_BURST connections (a line as each starts
 * and one as it ends), then that many every SPL_LOG_INTERVAL at most: a
 * peer's root resetting the link in a loop must not flood the log.
 */
#define SPL_LOG_INTERVAL	(30 * HZ)
#define SPL_LOG_BURST		10

/**
 * scif_peer_links_link_init() - the shared part of a client's new link
 * @spl: the client's links
 * @link: the link, zeroed, embedded in the client's
 * @peer: the peer's node id
 *
 * For &spl_ops.create, before the link is used.
 *
 * Context: any.
 */
void scif_peer_links_link_init(struct scif_peer_links *spl,
			       struct spl_link *link, u16 peer)
{
	link->spl = spl;
	link->peer = peer;
	mutex_init(&link->tx_mutex);
	spin_lock_init(&link->lock);
	init_waitqueue_head(&link->wq);
	/* Its own state per link: one peer's resets hide no other's. */
	ratelimit_state_init(&link->log_rs, SPL_LOG_INTERVAL, SPL_LOG_BURST);
	/* The count goes into the next line logged, not a line of its own. */
	ratelimit_set_flags(&link->log_rs, RATELIMIT_MSG_ON_RELEASE);
}
EXPORT_SYMBOL_GPL(scif_peer_links_link_init);

/**
 * scif_peer_links_tx_failed() - a send on @link failed: reset its connection
 * @link: the link
 *
 * For the client's sender; the link thread then ends the connection.
 *
 * Context: any.
 */
void scif_peer_links_tx_failed(struct spl_link *link)
{
	WRITE_ONCE(link->tx_failed, true);
	wake_up(&link->wq);
}
EXPORT_SYMBOL_GPL(scif_peer_links_tx_failed);

/* @tx: asked by the sender, which is not the link thread. */
static bool spl_stopping(struct spl_link *link, bool tx)
{
	return (!tx && kthread_should_stop()) || READ_ONCE(link->closing) ||
	       READ_ONCE(link->tx_failed) || READ_ONCE(link->pending) ||
	       !spl_peer_online(link->spl, link->peer);
}

/**
 * scif_peer_links_xfer() - move bytes over a link's connection
 * @link: the link
 * @epd: its connected endpoint: the link thread's, or @link->epd under
 *	@link->tx_mutex
 * @buf: the bytes
 * @len: how many
 * @tx: send (the client's sender), else receive (the link thread)
 * @may_stop: whether the caller may stop before the first byte
 *
 * Moves @len bytes to (@tx) or from the connection, in slices, waiting at
 * most SPL_POLL_MS at a time so that a reason to stop (the thread to
 * stop, the connection ending, a pending endpoint, the peer gone) is
 * seen.
 *
 * Context: process; sleeps.
 * Return: 0 when all of @len moved; -EAGAIN on a reason to stop if
 * @may_stop and no byte moved yet, else -ECONNABORTED; or SCIF's error.
 */
int scif_peer_links_xfer(struct spl_link *link, scif_epd_t epd, void *buf,
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
EXPORT_SYMBOL_GPL(scif_peer_links_xfer);

/* ---- the connection ---- */

/* Whether this connection's lines are logged; its first says so. */
static void spl_log_up(struct spl_link *link)
{
	const char *name = link->spl->ops->name;

	link->log_conn = __ratelimit(&link->log_rs);
	if (!link->log_conn) {
		link->log_missed++;
		return;
	}
	if (link->log_missed)
		pr_info("%s: connected to node %u (%u connections not logged before)\n",
			name, link->peer, link->log_missed);
	else
		pr_info("%s: connected to node %u\n", name, link->peer);
	link->log_missed = 0;
}

static void spl_up(struct spl_link *link, scif_epd_t epd)
{
	mutex_lock(&link->tx_mutex);
	link->epd = epd;
	WRITE_ONCE(link->closing, false);
	WRITE_ONCE(link->tx_failed, false);
	mutex_unlock(&link->tx_mutex);
	spl_log_up(link);
	link->spl->ops->up(link);
}

static void spl_down(struct spl_link *link, int why)
{
	const struct spl_ops *ops = link->spl->ops;
	scif_epd_t epd;

	if (ops->down)
		ops->down(link);
	WRITE_ONCE(link->closing, true);
	mutex_lock(&link->tx_mutex);
	epd = link->epd;
	link->epd = NULL;
	ops->purge(link);
	mutex_unlock(&link->tx_mutex);
	scif_close(epd);
	if (link->log_conn)
		pr_info("%s: connection to node %u down (%d)\n", ops->name,
			link->peer, why);
	if (ops->closed)
		ops->closed(link, why);
}

/* Read until the connection fails or the thread is to stop. */
static int spl_rx_loop(struct spl_link *link, scif_epd_t epd)
{
	int err;

	for (;;) {
		/* Asked between reads too: traffic may never pause. */
		if (spl_stopping(link, false))
			break;
		err = link->spl->ops->rx(link, epd);
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
	const struct spl_ops *ops = link->spl->ops;
	struct scif_port_id dst = { .node = link->peer, .port = ops->port };
	scif_epd_t epd;
	int err;

	epd = scif_open();
	if (!epd)
		return NULL;
	err = spl_bind_privileged(epd);
	if (err) {
		pr_warn_ratelimited("%s: no free port below %u for node %u: %d\n",
				    ops->name, SCIF_ADMIN_PORT_END,
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
	if (spl_peer_online(link->spl, link->peer) &&
	    spl_self_id(link->spl) < link->peer) {
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
static void spl_hand_over(struct scif_peer_links *spl, scif_epd_t epd,
			  u16 node)
{
	struct spl_link *link = NULL;
	scif_epd_t old = epd;

	mutex_lock(&spl->links_lock);
	if (node < SCIF_MAX_NODES && node < spl_self_id(spl))
		link = spl->links[node];
	if (link) {
		spin_lock(&link->lock);
		old = link->pending;
		link->pending = epd;
		spin_unlock(&link->lock);
		wake_up(&link->wq);
	}
	mutex_unlock(&spl->links_lock);
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

static void spl_refuse(struct scif_peer_links *spl, scif_epd_t epd,
		       const struct scif_port_id *peer)
{
	scif_close(epd);
	pr_info_ratelimited("%s: refused a link from node %u port %u: not a privileged port\n",
			    spl->ops->name, peer->node, peer->port);
}

static int spl_listen_thread(void *arg)
{
	struct scif_peer_links *spl = arg;
	struct scif_pollepd pe = { .epd = spl->listen_epd, .events = EPOLLIN };
	struct scif_port_id peer;
	scif_epd_t epd;

	while (!kthread_should_stop()) {
		if (scif_poll(&pe, 1, SPL_POLL_MS) <= 0)
			continue;
		if (scif_accept(pe.epd, &peer, &epd, 0))
			continue;
		if (spl_privileged(&peer))
			spl_hand_over(spl, epd, peer.node);
		else
			spl_refuse(spl, epd, &peer);
	}
	return 0;
}

static int spl_listen_start(struct scif_peer_links *spl)
{
	scif_epd_t epd = scif_open();
	int err;

	if (!epd)
		return -ENOMEM;
	err = scif_bind(epd, spl->ops->port);
	if (err < 0)
		goto fail;
	err = scif_listen(epd, SCIF_MAX_NODES);
	if (err)
		goto fail;
	spl->listen_epd = epd;
	spl->listener = kthread_run(spl_listen_thread, spl, "%s_listen",
				    spl->ops->name);
	if (IS_ERR(spl->listener)) {
		err = PTR_ERR(spl->listener);
		goto fail;
	}
	return 0;
fail:
	spl->listen_epd = NULL;
	scif_close(epd);
	return err;
}

static void spl_listen_stop(struct scif_peer_links *spl)
{
	kthread_stop(spl->listener);
	scif_close(spl->listen_epd);
}

/* ---- links ---- */

static struct spl_link *spl_link_create(struct scif_peer_links *spl,
					u16 self, u16 peer)
{
	struct spl_link *link = spl->ops->create(self, peer);
	int err;

	if (IS_ERR(link))
		return link;
	link->thread = kthread_run(spl_link_thread, link, "%s/%u",
				   spl->ops->name, peer);
	if (IS_ERR(link->thread)) {
		err = PTR_ERR(link->thread);
		spl->ops->destroy(link);
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
	link->spl->ops->destroy(link);
}

/* ---- SCIF's nodes ---- */

/* Creates the links of nodes that came online; wakes all links. */
static void spl_nodes_work_fn(struct work_struct *work)
{
	struct scif_peer_links *spl = container_of(work, struct scif_peer_links,
						   nodes_work);
	struct spl_link *link;
	u16 self, id;

	scif_get_node_ids(NULL, 0, &self);
	WRITE_ONCE(spl->self, self);
	mutex_lock(&spl->links_lock);
	for (id = 0; id < SCIF_MAX_NODES; id++) {
		link = spl->links[id];
		if (!link && id != self && spl_peer_online(spl, id)) {
			link = spl_link_create(spl, self, id);
			if (IS_ERR(link)) {
				pr_err("%s: no link to node %u: %ld\n",
				       spl->ops->name, id, PTR_ERR(link));
				link = NULL;
			}
			WRITE_ONCE(spl->links[id], link);
		}
		if (link)
			wake_up(&link->wq);
	}
	mutex_unlock(&spl->links_lock);
}

/**
 * scif_peer_links_node_online() - SCIF's probe of a client, for its links
 * @spl: the client's links
 * @peer: the node SCIF reports online
 *
 * Marks @peer online and queues the work that creates its link.
 *
 * Context: SCIF's client probe, under SCIF's node lock: takes no lock.
 */
void scif_peer_links_node_online(struct scif_peer_links *spl, struct scif_peer_dev *peer)
{
	if (peer->dnode >= SCIF_MAX_NODES)
		return;
	set_bit(peer->dnode, spl->online);
	schedule_work(&spl->nodes_work);
}
EXPORT_SYMBOL_GPL(scif_peer_links_node_online);

/**
 * scif_peer_links_node_offline() - SCIF's remove of a client, for its links
 * @spl: the client's links
 * @peer: the node gone
 *
 * Marks @peer offline, which ends its link's connection; the link stays.
 *
 * Context: SCIF's client remove, under SCIF's node lock: takes no lock.
 */
void scif_peer_links_node_offline(struct scif_peer_links *spl, struct scif_peer_dev *peer)
{
	if (peer->dnode >= SCIF_MAX_NODES)
		return;
	clear_bit(peer->dnode, spl->online);
	schedule_work(&spl->nodes_work);
}
EXPORT_SYMBOL_GPL(scif_peer_links_node_offline);

/* ---- the client's side ---- */

/**
 * scif_peer_links_init() - make a client's links ready to start
 * @spl: the client's links, zeroed
 * @ops: the client, which outlives @spl's use
 *
 * First, at the client's module init: takes @ops and this node's id.
 *
 * Context: process.
 */
void scif_peer_links_init(struct scif_peer_links *spl, const struct spl_ops *ops)
{
	u16 self;

	spl->ops = ops;
	mutex_init(&spl->links_lock);
	INIT_WORK(&spl->nodes_work, spl_nodes_work_fn);
	spl->client.name = ops->name;
	spl->client.probe = ops->probe;
	spl->client.remove = ops->remove;
	scif_get_node_ids(NULL, 0, &self);
	WRITE_ONCE(spl->self, self);
}
EXPORT_SYMBOL_GPL(scif_peer_links_init);

/**
 * scif_peer_links_start() - listen, then be told of nodes: links come as peers do
 * @spl: the client's links, after scif_peer_links_init()
 *
 * Context: process; sleeps.
 * Return: 0, or an errno (nothing is left running).
 */
int scif_peer_links_start(struct scif_peer_links *spl)
{
	int err;

	err = spl_listen_start(spl);
	if (err)
		return err;
	err = scif_client_register(&spl->client);
	if (err)
		goto stop;
	return 0;
stop:
	spl_listen_stop(spl);
	return err;
}
EXPORT_SYMBOL_GPL(scif_peer_links_start);

/**
 * scif_peer_links_stop() - no more nodes, no listener, then every link destroyed
 * @spl: the client's links, after scif_peer_links_start() succeeded
 *
 * At the client's unload: &spl_ops.destroy is called for every link.
 *
 * Context: process; sleeps until every thread has stopped.
 */
void scif_peer_links_stop(struct scif_peer_links *spl)
{
	u16 id;

	scif_client_unregister(&spl->client);
	cancel_work_sync(&spl->nodes_work);
	spl_listen_stop(spl);
	for (id = 0; id < SCIF_MAX_NODES; id++) {
		if (spl->links[id])
			spl_link_destroy(spl->links[id]);
		spl->links[id] = NULL;
	}
}
EXPORT_SYMBOL_GPL(scif_peer_links_stop);

MODULE_DESCRIPTION("SCIF: one connection per peer node, for kernel clients");
MODULE_LICENSE("GPL");
MODULE_VERSION("0.1.0");
