// SPDX-License-Identifier: GPL-2.0
/*
 * scif_rdma: the iWARP connection manager's SCIF side (rdma.rst, "QP
 * and connection manager").  A listener thread on SCIF port 702
 * accepts connectors bound to a privileged port only; a CONNECT
 * message carries the IPv4 4-tuple and the private data; the answer
 * (ACCEPT or REJECT) comes back on the same endpoint, which becomes the
 * QP's connection.  A DIRECT, from a QP connected without the CM, goes
 * to scif_rdma_direct.c.  A connection to an address of this host is a
 * loopback one: it is made to this node's own listener, and the device
 * is the dialer's (srd_cm_dial() sends its index first).  The device on
 * scif_net's sn reaches every node: a connection goes to the node its
 * destination's neighbour entry names, at port 703, where the
 * listener takes it for its own device on sn.
 */

#include <linux/etherdevice.h>
#include <linux/in.h>
#include <linux/inetdevice.h>
#include <linux/kthread.h>
#include <linux/slab.h>
#include <net/arp.h>
#include <net/neighbour.h>
#include <rdma/iw_cm.h>

#include "scif_rdma.h"

/* CONNECT requests of one peer node waiting for an answer, at most. */
#define SRD_CM_PENDING_MAX	16

static struct task_struct *srd_listener;
/* Listening on SRD_CM_PORT, and on SRD_CM_SHARED_PORT for sn's device. */
static scif_epd_t srd_listen_epd, srd_shared_epd;
/* The module's lookup of a node's device (srd_cm_init). */
static srd_dev_of_peer_fn srd_cm_dev_of_peer;

/*
 * CONNECT requests handed to a listen and not yet answered (struct
 * srd_conn), at most SRD_CM_PENDING_MAX a peer node.  iw_cm may drop a
 * request it queued (its listen destroyed meanwhile) without calling
 * accept or reject: the listener thread gives up every request older
 * than the connector's wait, so none outlives it.
 * Lock order: a device's cm_lock, then srd_pending_lock.
 */
static DEFINE_MUTEX(srd_pending_lock);	/* the list and the cookies */
static LIST_HEAD(srd_pending);
static unsigned long srd_next_cookie;

/* Take the request @cookie names off the pending list; NULL if gone. */
static struct srd_conn *srd_pending_take(void *cookie)
{
	struct srd_conn *conn, *found = NULL;

	mutex_lock(&srd_pending_lock);
	list_for_each_entry(conn, &srd_pending, list) {
		if (conn->cookie == (unsigned long)cookie) {
			list_del(&conn->list);
			found = conn;
			break;
		}
	}
	mutex_unlock(&srd_pending_lock);
	return found;
}

/* Put @conn on the pending list, unless its node has too many there. */
static bool srd_pending_add(struct srd_conn *conn)
{
	struct srd_conn *p;
	unsigned int n = 0;

	mutex_lock(&srd_pending_lock);
	list_for_each_entry(p, &srd_pending, list)
		n += p->node == conn->node;
	if (n < SRD_CM_PENDING_MAX) {
		/* Never 0: a cm_id without a request has NULL. */
		conn->cookie = ++srd_next_cookie ?: ++srd_next_cookie;
		conn->deadline = jiffies + msecs_to_jiffies(SRD_CM_WAIT_MS);
		list_add_tail(&conn->list, &srd_pending);
	}
	mutex_unlock(&srd_pending_lock);
	return n < SRD_CM_PENDING_MAX;
}

/* Close the pending requests past their deadline, or all of them. */
static void srd_pending_reap(bool all)
{
	struct srd_conn *conn, *next;
	LIST_HEAD(gone);

	mutex_lock(&srd_pending_lock);
	list_for_each_entry_safe(conn, next, &srd_pending, list)
		if (all || time_after(jiffies, conn->deadline))
			list_move(&conn->list, &gone);
	mutex_unlock(&srd_pending_lock);
	list_for_each_entry_safe(conn, next, &gone, list) {
		scif_close(conn->epd);
		kfree(conn);
	}
}

static void srd_cm_event(struct iw_cm_id *cm_id, enum iw_cm_event_type type,
			 int status, const struct srd_cm_msg *m, void *provider)
{
	struct iw_cm_event ev = {
		.event = type,
		.status = status,
		.local_addr = cm_id->m_local_addr,
		.remote_addr = cm_id->m_remote_addr,
		.provider_data = provider,
	};

	if (m && m->pdata_len) {
		ev.private_data = (void *)m->pdata;
		ev.private_data_len = m->pdata_len;
	}
	if (m) {
		ev.ord = m->ord;
		ev.ird = m->ird;
	}
	cm_id->event_handler(cm_id, &ev);
}

static struct srd_qp *srd_cm_qp(struct iw_cm_id *cm_id, u32 qpn)
{
	struct ib_qp *ibqp = srd_iw_get_qp(cm_id->device, qpn);

	return ibqp ? to_srd_qp(ibqp) : NULL;
}

/*
 * The node of @daddr on sn: the one its neighbour entry's MAC names
 * (rdma_resolve_addr() resolved it), or -EHOSTUNREACH.
 */
static int srd_cm_neigh_node(struct srd_dev *dev, __be32 daddr)
{
	struct neighbour *n = neigh_lookup(&arp_tbl, &daddr, dev->ndev);
	u8 mac[ETH_ALEN];
	bool valid;
	int node;

	if (!n)
		return -EHOSTUNREACH;
	valid = READ_ONCE(n->nud_state) & NUD_VALID;
	neigh_ha_snapshot(mac, n, dev->ndev);
	neigh_release(n);
	node = valid ? scif_net_node_of(dev->ndev, mac) : -EHOSTUNREACH;
	return node < 0 ? -EHOSTUNREACH : node;
}

/*
 * The node a CONNECT to @dst goes to: this node when @dst is an address
 * of this host (in the device's netdev's namespace), else the peer (on
 * sn, the node of @dst), or -EHOSTUNREACH.
 */
static int srd_cm_node_of(struct srd_dev *dev, const struct sockaddr_in *dst)
{
	u16 self;

	if (inet_addr_type(dev_net(dev->ndev), dst->sin_addr.s_addr) ==
	    RTN_LOCAL) {
		scif_get_node_ids(NULL, 0, &self);
		return self;
	}
	if (srd_dev_shared(dev))
		return srd_cm_neigh_node(dev, dst->sin_addr.s_addr);
	return dev->peer;
}

/**
 * srd_iw_connect() - the iw_connect verb: connect to the peer's CM
 * @cm_id: the active side's cm_id (IPv4 addresses)
 * @p: the QP number and the private data
 *
 * Done here, in the caller's process context: connect, send CONNECT,
 * wait at most SRD_CM_WAIT_MS for the answer, then CONNECT_REPLY.
 *
 * Context: process; sleeps.
 * Return: 0 (the outcome is in the CONNECT_REPLY event), or -errno
 * (no event).
 */
int srd_iw_connect(struct iw_cm_id *cm_id, struct iw_cm_conn_param *p)
{
	struct sockaddr_in *src = (struct sockaddr_in *)&cm_id->m_local_addr;
	struct sockaddr_in *dst = (struct sockaddr_in *)&cm_id->m_remote_addr;
	struct srd_dev *dev = to_srd_dev(cm_id->device);
	struct srd_qp *qp = srd_cm_qp(cm_id, p->qpn);
	struct srd_cm_msg *m;
	scif_epd_t epd;
	int err, node;

	if (!qp || src->sin_family != AF_INET || dst->sin_family != AF_INET ||
	    p->private_data_len > SRD_CM_PDATA)
		return -EINVAL;
	node = srd_cm_node_of(dev, dst);
	if (node < 0)
		return node;
	m = kmalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return -ENOMEM;
	epd = srd_cm_dial(dev, node);
	if (IS_ERR(epd)) {
		err = PTR_ERR(epd);
		goto free;
	}
	srd_cm_msg_fill(m, SRD_CM_CONNECT, p->private_data, p->private_data_len);
	m->saddr = src->sin_addr.s_addr;
	m->daddr = dst->sin_addr.s_addr;
	m->sport = src->sin_port;
	m->dport = dst->sin_port;
	err = srd_cm_msg_xfer(epd, m, true);
	if (!err)
		err = srd_cm_msg_xfer(epd, m, false);
	if (!err && m->type != SRD_CM_ACCEPT)
		err = -ECONNREFUSED;
	cm_id->add_ref(cm_id);
	if (!err)
		err = srd_qp_connected(qp, epd, cm_id);
	srd_cm_event(cm_id, IW_CM_EVENT_CONNECT_REPLY,
		     err ? -ECONNREFUSED : 0, m, NULL);
	if (err) {
		cm_id->rem_ref(cm_id);
		scif_close(epd);
	}
	kfree(m);
	return 0;
free:
	kfree(m);
	return err;
}

/**
 * srd_iw_accept() - the iw_accept verb: answer ACCEPT, connect the QP
 * @cm_id: the child cm_id of the CONNECT_REQUEST (provider_data: ours)
 * @p: the QP number and the private data
 *
 * Context: process; sleeps.
 * Return: 0 (ESTABLISHED follows), -ECONNRESET if the request was given
 * up (not answered within SRD_CM_WAIT_MS, or answered already), or
 * another -errno (the request is refused).
 */
int srd_iw_accept(struct iw_cm_id *cm_id, struct iw_cm_conn_param *p)
{
	struct srd_conn *conn = srd_pending_take(cm_id->provider_data);
	struct srd_qp *qp = srd_cm_qp(cm_id, p->qpn);
	struct srd_cm_msg *m;
	int err = -EINVAL;

	cm_id->provider_data = NULL;
	if (!conn)
		return -ECONNRESET;
	m = kmalloc(sizeof(*m), GFP_KERNEL);
	if (!m) {
		err = -ENOMEM;
		goto close;
	}
	if (!qp || p->private_data_len > SRD_CM_PDATA)
		goto close;
	srd_cm_msg_fill(m, SRD_CM_ACCEPT, p->private_data, p->private_data_len);
	err = srd_cm_msg_xfer(conn->epd, m, true);
	if (err)
		goto close;
	cm_id->add_ref(cm_id);
	err = srd_qp_connected(qp, conn->epd, cm_id);
	if (err) {
		cm_id->rem_ref(cm_id);
		goto close;
	}
	srd_cm_event(cm_id, IW_CM_EVENT_ESTABLISHED, 0, NULL, NULL);
	kfree(m);
	kfree(conn);
	return 0;
close:
	kfree(m);
	scif_close(conn->epd);
	kfree(conn);
	return err;
}

/**
 * srd_iw_reject() - the iw_reject verb: answer REJECT and close
 * @cm_id: the child cm_id of the CONNECT_REQUEST
 * @pdata: private data for the connector
 * @len: its length
 *
 * Context: process; sleeps.
 * Return: 0, or -EINVAL if the request was already answered or given up.
 */
int srd_iw_reject(struct iw_cm_id *cm_id, const void *pdata, u8 len)
{
	struct srd_conn *conn = srd_pending_take(cm_id->provider_data);
	struct srd_cm_msg *m;

	cm_id->provider_data = NULL;
	if (!conn)
		return -EINVAL;
	srd_stat_add(to_srd_dev(cm_id->device), SRD_STAT_CM_REFUSED, 1);
	m = kmalloc(sizeof(*m), GFP_KERNEL);
	if (m) {
		srd_cm_msg_fill(m, SRD_CM_REJECT, pdata, min_t(u8, len, SRD_CM_PDATA));
		srd_cm_msg_xfer(conn->epd, m, true);
		kfree(m);
	}
	scif_close(conn->epd);
	kfree(conn);
	return 0;
}

/**
 * srd_iw_create_listen() - the iw_create_listen verb
 * @cm_id: the listening cm_id (its m_local_addr: address and port)
 * @backlog: unused (the SCIF listener's backlog applies)
 *
 * Context: process.
 * Return: 0, or -ENOMEM.
 */
int srd_iw_create_listen(struct iw_cm_id *cm_id, int backlog)
{
	struct srd_dev *dev = to_srd_dev(cm_id->device);
	struct srd_listen *l = kzalloc(sizeof(*l), GFP_KERNEL_ACCOUNT);

	if (!l)
		return -ENOMEM;
	cm_id->add_ref(cm_id);
	l->cm_id = cm_id;
	mutex_lock(&dev->cm_lock);
	list_add_tail(&l->list, &dev->listens);
	mutex_unlock(&dev->cm_lock);
	return 0;
}

/**
 * srd_iw_destroy_listen() - the iw_destroy_listen verb
 * @cm_id: the listening cm_id
 *
 * Context: process.
 * Return: 0.
 */
int srd_iw_destroy_listen(struct iw_cm_id *cm_id)
{
	struct srd_dev *dev = to_srd_dev(cm_id->device);
	struct srd_listen *l, *found = NULL;

	mutex_lock(&dev->cm_lock);
	list_for_each_entry(l, &dev->listens, list) {
		if (l->cm_id == cm_id) {
			list_del(&l->list);
			found = l;
			break;
		}
	}
	mutex_unlock(&dev->cm_lock);
	if (found) {
		cm_id->rem_ref(cm_id);
		kfree(found);
	}
	return 0;
}

static bool srd_listen_matches(struct iw_cm_id *cm_id,
			       const struct srd_cm_msg *m)
{
	struct sockaddr_in *a = (struct sockaddr_in *)&cm_id->m_local_addr;

	return a->sin_family == AF_INET && a->sin_port == m->dport &&
	       (a->sin_addr.s_addr == htonl(INADDR_ANY) ||
		a->sin_addr.s_addr == m->daddr);
}

/*
 * A CONNECT from conn->node to @dev: to the matching listen, pending till
 * it is answered; false if refused (no listen, too many pending), and
 * then @conn is the caller's again.
 */
static bool srd_cm_request(struct srd_dev *dev, struct srd_conn *conn,
			   struct srd_cm_msg *m)
{
	struct iw_cm_event ev = { .event = IW_CM_EVENT_CONNECT_REQUEST };
	struct sockaddr_in *la = (struct sockaddr_in *)&ev.local_addr;
	struct sockaddr_in *ra = (struct sockaddr_in *)&ev.remote_addr;
	struct iw_cm_id *cm_id = NULL;
	struct srd_listen *l;
	int err = -ECONNREFUSED;

	la->sin_family = AF_INET;
	la->sin_addr.s_addr = m->daddr;
	la->sin_port = m->dport;
	ra->sin_family = AF_INET;
	ra->sin_addr.s_addr = m->saddr;
	ra->sin_port = m->sport;
	ev.private_data = m->pdata_len ? m->pdata : NULL;
	ev.private_data_len = m->pdata_len;
	ev.ord = 1;
	ev.ird = 1;
	mutex_lock(&dev->cm_lock);
	list_for_each_entry(l, &dev->listens, list) {
		if (!srd_listen_matches(l->cm_id, m))
			continue;
		if (!srd_pending_add(conn))
			break;
		ev.provider_data = (void *)conn->cookie;
		cm_id = l->cm_id;
		/* The event is queued by iw_cm; not called back here. */
		err = cm_id->event_handler(cm_id, &ev);
		/* Not queued: nobody can have taken it yet. */
		if (err)
			srd_pending_take(ev.provider_data);
		break;
	}
	mutex_unlock(&dev->cm_lock);
	if (err)
		srd_stat_add(dev, SRD_STAT_CM_REFUSED, 1);
	return !err;
}

/*
 * The device an accepted endpoint of @node is for: the one that leads to
 * @node (the one on sn if it came to SRD_CM_SHARED_PORT, @shared); for
 * this node itself, the one whose index the dialer sent first.  With a
 * reference, or NULL.
 */
static struct srd_dev *srd_cm_dev_of(scif_epd_t epd, u16 node, bool shared)
{
	__le32 index = 0;
	u16 self;

	scif_get_node_ids(NULL, 0, &self);
	if (node == self &&
	    srd_xfer(NULL, epd, &index, sizeof(index), false, SRD_CM_WAIT_MS))
		return NULL;
	return srd_cm_dev_of_peer(node, le32_to_cpu(index), shared);
}

/*
 * Read the message of an accepted endpoint and hand it on: a CONNECT to
 * a listen of @dev (then @conn is the pending request's), a DIRECT to
 * the QP it names.  Return: 1 if the endpoint was taken, 0 if the dialer
 * is to get a REJECT, -EPROTO if it is to be closed unanswered.
 */
static int srd_cm_dispatch(struct srd_dev *dev, scif_epd_t epd, u16 node,
			   struct srd_conn *conn, struct srd_cm_msg *m)
{
	if (srd_cm_msg_xfer(epd, m, false))
		return -EPROTO;
	if (m->type == SRD_CM_DIRECT)	/* refused: the dialer tries again */
		return srd_direct_accept(dev, epd, node, m);
	if (m->type != SRD_CM_CONNECT)
		return -EPROTO;
	conn->epd = epd;
	conn->node = node;
	return srd_cm_request(dev, conn, m);
}

/*
 * An accepted endpoint: its message, a CONNECT, goes to a listen of its
 * device, a DIRECT to the QP it names.
 */
static void srd_cm_accepted(scif_epd_t epd, u16 node, bool shared)
{
	struct srd_conn *conn = kzalloc(sizeof(*conn), GFP_KERNEL);
	struct srd_cm_msg *m = kmalloc(sizeof(*m), GFP_KERNEL);
	struct srd_dev *dev = NULL;
	int ret = -EPROTO;

	if (conn && m)
		dev = srd_cm_dev_of(epd, node, shared);
	if (dev) {
		ret = srd_cm_dispatch(dev, epd, node, conn, m);
		ib_device_put(&dev->ibdev);
	} else if (conn && m) {
		ret = 0;	/* no such device (yet): REJECT */
	}
	if (ret > 0) {
		/* A CONNECT's request is pending now, with @conn. */
		if (m->type == SRD_CM_DIRECT)
			kfree(conn);
		kfree(m);
		return;
	}
	if (!ret) {
		srd_cm_msg_fill(m, SRD_CM_REJECT, NULL, 0);
		srd_cm_msg_xfer(epd, m, true);
	}
	kfree(m);
	kfree(conn);
	scif_close(epd);
}

/* Accept what waits on @pe (the listen of sn's device if @shared). */
static void srd_listen_accept(struct scif_pollepd *pe, bool shared)
{
	struct scif_port_id peer;
	scif_epd_t epd;

	if (!(pe->revents & EPOLLIN) || scif_accept(pe->epd, &peer, &epd, 0))
		return;
	if (peer.port && peer.port < SCIF_ADMIN_PORT_END)
		srd_cm_accepted(epd, peer.node, shared);
	else
		scif_close(epd);
}

static int srd_listen_thread(void *arg)
{
	struct scif_pollepd pe[2] = {
		{ .epd = srd_listen_epd, .events = EPOLLIN },
		{ .epd = srd_shared_epd, .events = EPOLLIN },
	};

	while (!kthread_should_stop()) {
		srd_pending_reap(false);
		if (scif_poll(pe, ARRAY_SIZE(pe), 200) <= 0)
			continue;
		srd_listen_accept(&pe[0], false);
		srd_listen_accept(&pe[1], true);
	}
	return 0;
}

/* An endpoint listening on @port, or an ERR_PTR. */
static scif_epd_t srd_cm_listen(u16 port)
{
	scif_epd_t epd = scif_open();
	int err;

	if (!epd)
		return ERR_PTR(-ENOMEM);
	err = scif_bind(epd, port);
	if (err >= 0)
		err = scif_listen(epd, SCIF_MAX_NODES);
	if (err < 0) {
		scif_close(epd);
		return ERR_PTR(err);
	}
	return epd;
}

/**
 * srd_cm_init() - start the CM's listener on SCIF ports 702 and 703
 * @dev_of_peer: how the CM finds the device that leads to a node (the
 *	module's, which owns the devices)
 *
 * Context: process (module init).
 * Return: 0 or -errno.
 */
int srd_cm_init(srd_dev_of_peer_fn dev_of_peer)
{
	int err;

	srd_cm_dev_of_peer = dev_of_peer;

	srd_listen_epd = srd_cm_listen(SRD_CM_PORT);
	if (IS_ERR(srd_listen_epd))
		return PTR_ERR(srd_listen_epd);
	srd_shared_epd = srd_cm_listen(SRD_CM_SHARED_PORT);
	if (IS_ERR(srd_shared_epd)) {
		err = PTR_ERR(srd_shared_epd);
		goto close;
	}
	srd_listener = kthread_run(srd_listen_thread, NULL, "srd_cm_listen");
	if (IS_ERR(srd_listener)) {
		err = PTR_ERR(srd_listener);
		goto close_shared;
	}
	return 0;
close_shared:
	scif_close(srd_shared_epd);
close:
	scif_close(srd_listen_epd);
	return err;
}

/**
 * srd_cm_exit() - stop the listener
 *
 * Context: process (module exit).
 */
void srd_cm_exit(void)
{
	kthread_stop(srd_listener);
	scif_close(srd_shared_epd);
	scif_close(srd_listen_epd);
	srd_pending_reap(true);
}
