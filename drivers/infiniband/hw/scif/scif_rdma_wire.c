// SPDX-License-Identifier: GPL-2.0
/*
 * scif_rdma: a QP's connection as a byte stream (rdma.rst, "Data path"):
 * bytes over the SCIF endpoint, a frame's header under the QP's
 * tx_mutex, the bytes of a list of SGEs, the answers queued for the peer,
 * and the connection's end asked for.
 */

#include <linux/completion.h>
#include <linux/lockdep.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "scif_rdma.h"

/**
 * srd_xfer() - move @len bytes over a SCIF connection
 * @qp: the QP whose connection it is (its @closing ends the wait), or
 *	NULL (the CM's connection, before it is a QP's)
 * @epd: the endpoint
 * @buf: the bytes
 * @len: how many
 * @tx: send, else receive
 * @timeout_ms: the longest the whole transfer may take, or 0: as long
 *	as the peer is there (a slow peer is not a broken one)
 *
 * Waits for room or bytes killably: a process's pending signal (a user
 * QP's poster, a CM call of rdma_ucm) does not cut a frame short.  A
 * QP's bytes read ahead into its stage are received first (@qp's
 * @rx_mutex held).
 *
 * Context: process; sleeps.
 * Return: 0, -ECONNABORTED if the QP closes first, -ETIMEDOUT, -EINTR
 * for a fatal signal, or SCIF's error.
 */
int srd_xfer(struct srd_qp *qp, scif_epd_t epd, void *buf, int len, bool tx,
	     unsigned int timeout_ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(timeout_ms);
	struct scif_pollepd pe = { .epd = epd,
				   .events = tx ? EPOLLOUT : EPOLLIN };
	int done = 0, n;

	/* A poller's read-ahead comes first (scif_rdma_rxpoll.c). */
	if (!tx && qp)
		done = srd_stage_take(qp, buf, len);
	while (done < len) {
		n = tx ? scif_send(epd, buf + done, len - done, 0) :
			 scif_recv(epd, buf + done, len - done, 0);
		if (n < 0)
			return n;
		done += n;
		if (n)
			continue;
		if (qp && READ_ONCE(qp->closing))
			return -ECONNABORTED;
		if (timeout_ms && time_after(jiffies, end))
			return -ETIMEDOUT;
		n = scif_poll(&pe, 1, SRD_POLL_MS);
		if (n == -EINTR && !fatal_signal_pending(current)) {
			/* A poster's signal (srd_sq_kick()): wait killably. */
			schedule_timeout_killable(1);
			continue;
		}
		if (n < 0)
			return n;
		/* Bytes the peer sent before it closed are still read. */
		if (n && !(pe.revents & pe.events) &&
		    (pe.revents & (EPOLLERR | EPOLLHUP)))
			return -ECONNRESET;
	}
	return 0;
}

/**
 * srd_mr_xfer() - move bytes of an MR over a QP's connection
 * @qp: the connected QP
 * @mr: the MR (a reference held by the caller)
 * @addr: the first byte, inside @mr (the caller checked the range)
 * @len: bytes to move
 * @tx: send, else receive
 *
 * Context: process; sleeps.
 * Return: 0 or srd_xfer()'s error.
 */
int srd_mr_xfer(struct srd_qp *qp, struct srd_mr *mr, u64 addr, u64 len,
		bool tx)
{
	/* A user MR's pages, rarely contiguous, in one range (or NULL). */
	void *va = len > PAGE_SIZE ? srd_mr_vmap(mr) : NULL;
	u64 chunk;
	void *kva;
	int err;

	while (len) {
		chunk = min_t(u64, len, SZ_1M);
		if (va)
			kva = va + offset_in_page(mr->iova) + (addr - mr->iova);
		else
			kva = srd_mr_kva(mr, addr, &chunk); /* shortens chunk */
		err = srd_xfer(qp, qp->epd, kva, chunk, tx, 0);
		if (err)
			return err;
		addr += chunk;
		len -= chunk;
	}
	return 0;
}

/**
 * srd_sges_ok() - check the local SGEs of a work request
 * @qp: the QP it was posted on
 * @sge: the SGEs
 * @n: how many
 * @access: IB_ACCESS_* their MRs must allow (LOCAL_WRITE for a sink)
 * @len: set to their total length
 *
 * Context: any.
 * Return: 0, -EACCES (a key, range or right) or -EMSGSIZE (over
 * SRD_MAX_MSG in all).
 */
int srd_sges_ok(struct srd_qp *qp, const struct ib_sge *sge, u32 n,
		int access, u64 *len)
{
	struct srd_mr *mr;
	bool ok;
	u32 i;

	*len = 0;
	for (i = 0; i < n; i++) {
		mr = srd_mr_lookup(qp->dev, sge[i].lkey, qp->ibqp.pd);
		ok = srd_mr_ok(mr, sge[i].addr, sge[i].length, access);
		srd_mr_put(mr);
		if (!ok)
			return -EACCES;
		*len += sge[i].length;
	}
	return *len > SRD_MAX_MSG ? -EMSGSIZE : 0;
}

/**
 * srd_sges_xfer() - move bytes between the connection and a list of SGEs
 * @qp: the connected QP
 * @sge: the SGEs, in order
 * @n: how many
 * @len: bytes to move (at most their total)
 * @tx: send, else receive
 *
 * Each SGE's key is looked up again: an MR gone since the work request
 * was checked (the consumer broke the rules) fails it.
 *
 * Context: process; sleeps.
 * Return: 0, -EACCES or srd_xfer()'s error.
 */
int srd_sges_xfer(struct srd_qp *qp, const struct ib_sge *sge, u32 n,
		  u64 len, bool tx)
{
	struct srd_mr *mr;
	u64 part;
	u32 i;
	int err;

	for (i = 0; i < n && len; i++) {
		part = min_t(u64, len, sge[i].length);
		mr = srd_mr_lookup(qp->dev, sge[i].lkey, qp->ibqp.pd);
		/* Checked when posted; gone since if the consumer broke the rules. */
		err = mr ? srd_mr_xfer(qp, mr, sge[i].addr, part, tx) : -EACCES;
		srd_mr_put(mr);
		if (err)
			return err;
		len -= part;
	}
	return 0;
}

/**
 * srd_send_hdr() - send a frame without payload
 * @qp: the connected QP
 * @h: the header
 *
 * Under @qp's tx_mutex (srd_tx_lock()), so that it never lands inside
 * another frame.
 *
 * Context: process; sleeps; takes qp->tx_mutex.
 * Return: 0 or srd_xfer()'s error.
 */
int srd_send_hdr(struct srd_qp *qp, struct srd_hdr *h)
{
	int err;

	srd_tx_lock(qp);
	err = srd_xfer(qp, qp->epd, h, sizeof(*h), true, 0);
	mutex_unlock(&qp->tx_mutex);
	return err;
}

/**
 * srd_answer() - queue an answer to the peer's request
 * @qp: the connected QP
 * @h: the answer's header (copied)
 * @data: the bytes that follow it (kmalloc'd; the queue owns them from
 *	now on, freed even on failure), or NULL
 * @len: their length
 *
 * The answer leaves from @qp's ans_work, in the order queued, so that
 * the receive thread never waits for this side's frames to leave: if it
 * did, two nodes whose send workers both fill the other's ring would
 * each wait for the other to read.  It waits for room only when the
 * peer has more requests outstanding than an honest one may have.
 *
 * Context: the receive thread; sleeps.
 * Return: 0, or -ECONNABORTED if the QP closes while it waits for room.
 */
int srd_answer(struct srd_qp *qp, const struct srd_hdr *h, void *data,
	       u32 len)
{
	unsigned long flags;
	struct srd_ans *a;

	spin_lock_irqsave(&qp->ans_lock, flags);
	while (qp->ans_count >= SRD_ANS_MAX) {
		spin_unlock_irqrestore(&qp->ans_lock, flags);
		if (READ_ONCE(qp->closing)) {
			kfree(data);
			return -ECONNABORTED;
		}
		wait_event_timeout(qp->ans_room,
				   READ_ONCE(qp->ans_count) < SRD_ANS_MAX ||
				   READ_ONCE(qp->closing),
				   msecs_to_jiffies(SRD_POLL_MS));
		spin_lock_irqsave(&qp->ans_lock, flags);
	}
	a = &qp->ans[(qp->ans_head + qp->ans_count++) % SRD_ANS_MAX];
	a->h = *h;
	a->data = data;
	a->len = len;
	spin_unlock_irqrestore(&qp->ans_lock, flags);
	queue_work(system_unbound_wq, &qp->ans_work);
	return 0;
}

/*
 * Send the answers queued so far, in order (those queued meanwhile wait
 * for the next turn, so that a stream of the peer's requests cannot
 * hold the send worker here); with @qp's tx_mutex held.  An answer that
 * cannot leave (the connection is ending) ends the connection; the rest
 * are still tried, and dropped by srd_ans_stop().
 */
static void srd_ans_send(struct srd_qp *qp)
{
	unsigned long flags;
	struct srd_ans a;
	u32 n;
	int err;

	lockdep_assert_held(&qp->tx_mutex);
	spin_lock_irqsave(&qp->ans_lock, flags);
	n = qp->ans_count;
	spin_unlock_irqrestore(&qp->ans_lock, flags);
	while (n--) {
		spin_lock_irqsave(&qp->ans_lock, flags);
		a = qp->ans[qp->ans_head];
		spin_unlock_irqrestore(&qp->ans_lock, flags);
		err = srd_xfer(qp, qp->epd, &a.h, sizeof(a.h), true, 0);
		if (!err && a.len)
			err = srd_xfer(qp, qp->epd, a.data, a.len, true, 0);
		kfree(a.data);
		spin_lock_irqsave(&qp->ans_lock, flags);
		qp->ans_head = (qp->ans_head + 1) % SRD_ANS_MAX;
		qp->ans_count--;
		spin_unlock_irqrestore(&qp->ans_lock, flags);
		wake_up(&qp->ans_room);
		if (err)
			srd_qp_close(qp);
	}
}

/**
 * srd_tx_room() - may a frame start on a QP's connection without waiting
 * @qp: the connected QP
 *
 * Context: process; does not wait for the peer.
 * Return: true if the ring to the peer has room for some bytes now.
 */
bool srd_tx_room(struct srd_qp *qp)
{
	struct scif_pollepd pe = { .epd = qp->epd, .events = EPOLLOUT };

	return scif_poll(&pe, 1, 0) > 0 && (pe.revents & EPOLLOUT);
}

/**
 * srd_tx_lock() - take a QP's tx_mutex to send a frame, answers first
 * @qp: the connected QP
 *
 * The answers the receive thread queued before leave first: the
 * consumer may have reacted to what the receive thread completed after
 * it queued them (a RECV_RDMA_WITH_IMM after its WRITE's ACK), and its
 * frames must not overtake them.  Released with mutex_unlock().
 *
 * Context: process; sleeps.
 */
void srd_tx_lock(struct srd_qp *qp)
{
	mutex_lock(&qp->tx_mutex);
	srd_ans_send(qp);
}

/**
 * srd_ans_work() - send the answers the receive thread queued
 * @work: the QP's ans_work
 *
 * Context: a workqueue; sleeps.  Never runs twice at once for a QP.
 */
void srd_ans_work(struct work_struct *work)
{
	struct srd_qp *qp = container_of(work, struct srd_qp, ans_work);

	srd_tx_lock(qp);
	mutex_unlock(&qp->tx_mutex);
}

/**
 * srd_ans_stop() - no answer leaves any more
 * @qp: the QP, whose receive thread queues no more answers and whose
 *	send worker sends no more frames
 *
 * Waits for @qp's ans_work (it ends soon once the QP is closing), then
 * drops the answers left, if any.
 *
 * Context: the receive thread before it closes the endpoint, or
 * destroy_qp; sleeps.
 */
void srd_ans_stop(struct srd_qp *qp)
{
	unsigned long flags;

	cancel_work_sync(&qp->ans_work);
	mutex_lock(&qp->tx_mutex);
	spin_lock_irqsave(&qp->ans_lock, flags);
	while (qp->ans_count) {
		kfree(qp->ans[qp->ans_head].data);
		qp->ans[qp->ans_head].data = NULL;
		qp->ans_head = (qp->ans_head + 1) % SRD_ANS_MAX;
		qp->ans_count--;
	}
	spin_unlock_irqrestore(&qp->ans_lock, flags);
	mutex_unlock(&qp->tx_mutex);
}

/**
 * srd_qp_close() - end a QP's connection, if it has one
 * @qp: the QP
 *
 * The receive thread sees it within SRD_POLL_MS and does the rest.
 *
 * Context: any; does not wait.
 */
void srd_qp_close(struct srd_qp *qp)
{
	WRITE_ONCE(qp->closing, true);
}

/**
 * srd_cm_msg_fill() - a CM message to send
 * @m: the message
 * @type: SRD_CM_*
 * @pdata: its private data
 * @len: the private data's length, at most SRD_CM_PDATA
 *
 * Context: any.
 */
void srd_cm_msg_fill(struct srd_cm_msg *m, u8 type, const void *pdata,
		     u8 len)
{
	memset(m, 0, sizeof(*m));
	m->magic = cpu_to_le32(SRD_CM_MAGIC);
	m->type = type;
	m->ord = 1;
	m->ird = 1;
	m->pdata_len = len;
	if (len)
		memcpy(m->pdata, pdata, len);
}

/**
 * srd_cm_msg_xfer() - send or receive a whole CM message
 * @epd: the CM's endpoint
 * @m: the message
 * @tx: send it (else receive it and check its magic and length)
 *
 * A peer that sends part of the message and stalls is given up on after
 * SRD_CM_WAIT_MS.
 *
 * Context: process; sleeps.
 * Return: 0, -EPROTO for a received message that is not one, or the
 * error of the transfer.
 */
int srd_cm_msg_xfer(scif_epd_t epd, struct srd_cm_msg *m, bool tx)
{
	int err = srd_xfer(NULL, epd, m, sizeof(*m), tx, SRD_CM_WAIT_MS);

	if (err)
		return err;
	if (!tx && (m->magic != cpu_to_le32(SRD_CM_MAGIC) ||
		    m->pdata_len > SRD_CM_PDATA))
		return -EPROTO;
	return 0;
}

/**
 * srd_cm_dial() - an endpoint connected to a node's CM listener
 * @dev: the dialing device
 * @node: the node: the device's peer (on sn, any node), or this node
 *	(loopback)
 *
 * Binds a free privileged port (SRD_PORT_BOTTOM..SRD_PORT_TOP), which
 * the listener requires of a connector, then connects to SRD_CM_PORT,
 * or from a device on sn to SRD_CM_SHARED_PORT (the node's device on sn).
 * A connection to this node itself then sends @dev's index (le32): no
 * node names the device there (srd_dev_of_peer_fn).
 *
 * Context: process; sleeps.
 * Return: the endpoint, or an ERR_PTR (-ENOMEM, -EINVAL if no port is
 * free, or scif_connect()'s or the send's error).
 */
scif_epd_t srd_cm_dial(struct srd_dev *dev, u16 node)
{
	struct scif_port_id to = {
		.node = node,
		.port = srd_dev_shared(dev) ? SRD_CM_SHARED_PORT : SRD_CM_PORT,
	};
	scif_epd_t epd = scif_open();
	__le32 index = cpu_to_le32(dev->ibdev.index);
	int port, err;
	u16 self;

	if (!epd)
		return ERR_PTR(-ENOMEM);
	for (port = SRD_PORT_TOP, err = -EINVAL;
	     port >= SRD_PORT_BOTTOM && err == -EINVAL; port--)
		err = scif_bind(epd, port);
	if (err >= 0)
		err = scif_connect(epd, &to);
	scif_get_node_ids(NULL, 0, &self);
	if (err >= 0 && node == self)
		err = srd_xfer(NULL, epd, &index, sizeof(index), true,
			       SRD_CM_WAIT_MS);
	if (err < 0) {
		scif_close(epd);
		return ERR_PTR(err);
	}
	return epd;
}
