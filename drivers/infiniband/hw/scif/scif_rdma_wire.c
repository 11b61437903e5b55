// SPDX-License-Identifier: GPL-2.0
/*
 * scif_rdma: a QP's connection as a byte stream (rdma.rst, "Data path"):
 * bytes over the SCIF endpoint, a frame's header under the QP's
 * tx_mutex, the bytes of a list of SGEs, the answer slot of a MAP_REQ,
 * and the connection's end asked for.
 */

#include <linux/completion.h>
#include <rdma/ib_verbs.h>

#include "scif_rdma.h"

/* How long one wait on the connection lasts before the QP is checked. */
#define SRD_POLL_MS	100

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
 * Context: process; sleeps.
 * Return: 0, -ECONNABORTED if the QP closes first, -ETIMEDOUT, or
 * SCIF's error.
 */
int srd_xfer(struct srd_qp *qp, scif_epd_t epd, void *buf, int len, bool tx,
	     unsigned int timeout_ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(timeout_ms);
	struct scif_pollepd pe = { .epd = epd,
				   .events = tx ? EPOLLOUT : EPOLLIN };
	int done = 0, n;

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
	u64 chunk;
	void *kva;
	int err;

	while (len) {
		chunk = min_t(u64, len, SZ_1M);
		kva = srd_mr_kva(mr, addr, &chunk);	/* shortens chunk */
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
 * Under @qp's tx_mutex, so that it never lands inside another frame.
 *
 * Context: process; sleeps; takes qp->tx_mutex.
 * Return: 0 or srd_xfer()'s error.
 */
int srd_send_hdr(struct srd_qp *qp, struct srd_hdr *h)
{
	int err;

	mutex_lock(&qp->tx_mutex);
	err = srd_xfer(qp, qp->epd, h, sizeof(*h), true, 0);
	mutex_unlock(&qp->tx_mutex);
	return err;
}

/**
 * srd_want_resp() - get ready for the answer to a MAP_REQ about to leave
 * @qp: the QP (no WRITE or READ waits for an answer: MAP_RESP is next)
 *
 * Context: the send worker; takes qp->resp_mutex.
 */
void srd_want_resp(struct srd_qp *qp)
{
	mutex_lock(&qp->resp_mutex);
	reinit_completion(&qp->resp);
	qp->resp_want = true;
	mutex_unlock(&qp->resp_mutex);
}

/**
 * srd_wait_resp() - wait for the answer to this side's MAP_REQ
 * @qp: the QP
 *
 * The requester waits as long as the connection lasts: a slow responder
 * is not a broken one (iWARP has no response timeout either); its loss,
 * a disconnect or the QP's destruction end the wait.  Then no late
 * answer is taken (@resp_want cleared under @resp_mutex).
 *
 * Context: the send worker; sleeps.
 * Return: the answer's status, or IB_WC_WR_FLUSH_ERR.
 */
enum ib_wc_status srd_wait_resp(struct srd_qp *qp)
{
	while (!wait_for_completion_timeout(&qp->resp,
					    msecs_to_jiffies(SRD_POLL_MS))) {
		if (READ_ONCE(qp->closing)) {
			mutex_lock(&qp->resp_mutex);
			qp->resp_want = false;
			mutex_unlock(&qp->resp_mutex);
			return IB_WC_WR_FLUSH_ERR;
		}
	}
	return qp->resp_hdr.status;
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
