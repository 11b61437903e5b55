// SPDX-License-Identifier: GPL-2.0
/*
 * scif_rdma: the data path of a connected QP (rdma.rst, "Data path").
 *
 * The send worker (scif_rdma_sq.c) takes the send ring in order: SEND
 * is one frame with its bytes (SCIF messages); RDMA WRITE and READ go
 * straight into a window the responder opened (scif_rdma_map.c), or, up
 * to SRD_INLINE_MAX bytes, in the frames (inline: a WRITE's bytes follow
 * it, a READ's its answer), or are one frame each that the responder
 * checks, moves the bytes of by SCIF RMA (scif_rdma_rma.c) and answers
 * (ACK, READ_RESP, no payload).  The receive thread reads the frames,
 * each field checked before use, and ends the connection on any error.
 */

#include <linux/kthread.h>
#include <linux/slab.h>
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
 * srd_mr_kva() - the kernel address of a byte of an MR
 * @mr: the MR
 * @addr: the byte's address, inside @mr (the caller checked the bounds)
 * @len: bytes wanted from there; shortened to what is contiguous
 *
 * Context: any.
 * Return: the kernel virtual address of @addr.
 */
void *srd_mr_kva(struct srd_mr *mr, u64 addr, u64 *len)
{
	u64 psz, abs;
	void *kva;

	if (mr->dma)
		return (void *)(uintptr_t)addr;
	psz = mr->ibmr.page_size;
	abs = (mr->iova & (psz - 1)) + (addr - mr->iova);
	kva = (void *)(uintptr_t)mr->pages[abs / psz] + abs % psz;
	*len = min(*len, psz - abs % psz);
	return kva;
}

/**
 * srd_mr_ok() - may a key's MR be used for a range
 * @mr: the MR a key resolved to, or NULL
 * @addr: start of the range
 * @len: its bytes
 * @access: IB_ACCESS_* wanted
 *
 * Context: any.
 * Return: true if @mr is valid, allows @access and holds the range.
 */
bool srd_mr_ok(struct srd_mr *mr, u64 addr, u64 len, int access)
{
	if (!mr || !READ_ONCE(mr->valid) || (access & ~mr->access & ~IB_ACCESS_LOCAL_WRITE))
		return false;
	if (mr->dma)
		return !(access & (IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE));
	return len <= mr->length && addr >= mr->iova &&
	       addr - mr->iova <= mr->length - len;
}

/* Move [@addr, @addr + @len) of @mr over the connection. */
static int srd_mr_xfer(struct srd_qp *qp, struct srd_mr *mr, u64 addr,
		       u64 len, bool tx)
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

/* The local SGEs of a work request: their MRs, checked; total in *@len. */
static int srd_sges_ok(struct srd_qp *qp, const struct ib_sge *sge, u32 n,
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

/* Read and drop @len bytes (a frame that cannot be taken). */
static int srd_drain(struct srd_qp *qp, u64 len)
{
	static u8 sink[256];
	int err;

	while (len) {
		u32 n = min_t(u64, len, sizeof(sink));

		err = srd_xfer(qp, qp->epd, sink, n, false, 0);
		if (err)
			return err;
		len -= n;
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

/*
 * A WRITE or READ of at most SRD_INLINE_MAX bytes with no window: a
 * WRITE's bytes follow its frame, a READ's come after its answer, which
 * the send worker does not wait for here (srd_sq_answer() takes it).
 */
static enum ib_wc_status srd_inline_request(struct srd_qp *qp,
					    struct srd_swqe *w,
					    struct srd_hdr *h, u64 len)
{
	bool read = h->type == SRD_F_READ_REQ;
	bool err;

	h->flags |= SRD_F_INLINE;
	w->inl = true;
	if (!srd_sq_await(qp, w, read ? SRD_F_READ_RESP : SRD_F_ACK))
		return IB_WC_WR_FLUSH_ERR;
	mutex_lock(&qp->tx_mutex);
	err = srd_xfer(qp, qp->epd, h, sizeof(*h), true, 0) ||
	      (!read && srd_sges_xfer(qp, w->sge, w->num_sge, len, true));
	mutex_unlock(&qp->tx_mutex);
	if (err)
		srd_qp_close(qp);	/* the connection's end flushes it */
	return IB_WC_SUCCESS;
}

/*
 * An RDMA WRITE or READ, straight to the peer's window (done here), in
 * the frames (small ones) or by the responder's RMA (both then wait for
 * the answer), counted: its completion status so far.
 */
static enum ib_wc_status srd_rma_counted(struct srd_qp *qp,
					 struct srd_swqe *w,
					 struct srd_hdr *h, u64 len)
{
	enum ib_wc_status st;

	srd_stat_add(qp->dev, h->type == SRD_F_WRITE ? SRD_STAT_WRITE_REQS :
			      SRD_STAT_READ_REQS, 1);
	w->len = len;
	if (srd_rma_direct(qp, w, len, &st)) {
		srd_stat_add(qp->dev, SRD_STAT_DIRECT_REQS, 1);
		return st;
	}
	if (len && len <= SRD_INLINE_MAX) {
		srd_stat_add(qp->dev, SRD_STAT_INLINE_REQS, 1);
		return srd_inline_request(qp, w, h, len);
	}
	return srd_rma_request(qp, w, h, len);
}

/* One data work request on the connection: its completion status. */
static enum ib_wc_status srd_do_data(struct srd_qp *qp, struct srd_swqe *w)
{
	bool read = w->opcode == IB_WR_RDMA_READ;
	struct srd_hdr h = { .imm = w->imm };
	bool err;
	u64 len;

	if (srd_sges_ok(qp, w->sge, w->num_sge,
			read ? IB_ACCESS_LOCAL_WRITE : 0, &len))
		return IB_WC_LOC_PROT_ERR;
	h.len = cpu_to_le32(len);
	h.rkey = cpu_to_le32(w->rkey);
	h.addr = cpu_to_le64(w->remote_addr);
	if (w->opcode == IB_WR_SEND_WITH_IMM ||
	    w->opcode == IB_WR_RDMA_WRITE_WITH_IMM)
		h.flags = SRD_F_IMM;
	if (w->opcode == IB_WR_SEND_WITH_INV)
		h.flags = SRD_F_INV;
	if (w->opcode == IB_WR_SEND || w->opcode == IB_WR_SEND_WITH_IMM ||
	    w->opcode == IB_WR_SEND_WITH_INV)
		h.type = SRD_F_SEND;
	else if (read)
		h.type = SRD_F_READ_REQ;
	else
		h.type = SRD_F_WRITE;
	if (h.type != SRD_F_SEND)
		return srd_rma_counted(qp, w, &h, len);
	/* What the key resolved to goes with the MR: asked again. */
	if (w->opcode == IB_WR_SEND_WITH_INV)
		srd_rkey_forget(qp, w->rkey);
	/* Header and payload at once: no answer may come between them. */
	mutex_lock(&qp->tx_mutex);
	err = srd_xfer(qp, qp->epd, &h, sizeof(h), true, 0) ||
	      srd_sges_xfer(qp, w->sge, w->num_sge, len, true);
	mutex_unlock(&qp->tx_mutex);
	if (err)
		return IB_WC_WR_FLUSH_ERR;
	srd_stat_add(qp->dev, SRD_STAT_SENDS, 1);
	return IB_WC_SUCCESS;
}

/**
 * srd_do_wr() - do a send work request's part on this side
 * @qp: the QP
 * @w: the work request, the oldest not taken yet
 *
 * A local operation is done; a SEND has left; a WRITE or READ has moved
 * its bytes (straight to the peer's window), or its request has left and
 * @w->resp says which answer it waits for.
 *
 * Context: the send worker; sleeps.
 * Return: its completion status, or IB_WC_SUCCESS while it waits for
 * its answer.
 */
enum ib_wc_status srd_do_wr(struct srd_qp *qp, struct srd_swqe *w)
{
	enum ib_wc_status st;

	if (w->opcode == IB_WR_REG_MR)
		return srd_reg_mr(qp, w);
	if (w->opcode == IB_WR_LOCAL_INV)
		return srd_local_inv(qp, w->rkey);
	st = srd_rma_check(qp, w);	/* local limits, connected or not */
	if (st != IB_WC_SUCCESS)
		return st;
	if (!READ_ONCE(qp->epd))
		return IB_WC_WR_FLUSH_ERR;
	return srd_do_data(qp, w);
}

/*
 * SEND_WITH_INV: the key must name a fast-reg MR of the QP's PD that
 * was given remote access (so its rkey was handed out); it becomes
 * invalid, as a LOCAL_INV would make it.
 */
static bool srd_remote_inv(struct srd_qp *qp, u32 key)
{
	struct srd_mr *mr = srd_mr_lookup(qp->dev, key, qp->ibqp.pd);
	bool ok;

	ok = mr && !mr->dma && (READ_ONCE(mr->access) &
				(IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE));
	if (ok) {
		WRITE_ONCE(mr->valid, false);
		srd_map_mr_close(qp->dev, mr, false);
	}
	srd_mr_put(mr);
	return ok;
}

/* The receive a SEND landed in completes (with the invalidated key). */
static void srd_recv_done(struct srd_qp *qp, const struct srd_hdr *h,
			  u64 wr_id, u32 len)
{
	struct ib_wc wc = {
		.wr_id = wr_id,
		.status = IB_WC_SUCCESS,
		.opcode = IB_WC_RECV,
		.byte_len = len,
	};

	if (h->flags & SRD_F_INV) {
		wc.wc_flags = IB_WC_WITH_INVALIDATE;
		wc.ex.invalidate_rkey = le32_to_cpu(h->rkey);
	} else if (h->flags & SRD_F_IMM) {
		wc.wc_flags = IB_WC_WITH_IMM;
		wc.ex.imm_data = h->imm;
	}
	srd_rq_complete(qp, &wc);
	srd_stat_add(qp->dev, SRD_STAT_RECVS, 1);
}

/* A receive srd_rq_pop() took fails with @status. */
static void srd_recv_failed(struct srd_qp *qp, u64 wr_id,
			    enum ib_wc_status status)
{
	struct ib_wc wc = {
		.wr_id = wr_id,
		.status = status,
		.opcode = IB_WC_RECV,
	};

	srd_rq_complete(qp, &wc);
}

/* SEND: into the next posted receive; false ends the connection. */
static bool srd_rx_send(struct srd_qp *qp, const struct srd_hdr *h, u32 len)
{
	struct srd_rqe rqe;
	u64 room;

	if (!srd_rq_pop(qp, &rqe)) {
		srd_drain(qp, len);
		return false;	/* RNR: iWARP has no retry, the QP fails */
	}
	if (srd_sges_ok(qp, rqe.sge, rqe.num_sge, IB_ACCESS_LOCAL_WRITE,
			&room) || len > room) {
		srd_drain(qp, len);
		srd_recv_failed(qp, rqe.wr_id, len > room ? IB_WC_LOC_LEN_ERR :
				IB_WC_LOC_PROT_ERR);
		return false;
	}
	if ((h->flags & SRD_F_INV) &&
	    !srd_remote_inv(qp, le32_to_cpu(h->rkey))) {
		srd_drain(qp, len);
		srd_recv_failed(qp, rqe.wr_id, IB_WC_REM_INV_REQ_ERR);
		return false;
	}
	if (srd_sges_xfer(qp, rqe.sge, rqe.num_sge, len, false)) {
		/* The connection broke in the middle of the payload. */
		srd_recv_failed(qp, rqe.wr_id, IB_WC_WR_FLUSH_ERR);
		return false;
	}
	srd_recv_done(qp, h, rqe.wr_id, len);
	return true;
}

/* The first error of the peer's that ends the connection: its event. */
static void srd_rx_event(struct srd_qp *qp, enum ib_event_type type)
{
	if (qp->rx_event_set)
		return;
	qp->rx_event = type;
	qp->rx_event_set = true;
}

/* The connection ended for the peer's error: tell the consumer. */
static void srd_qp_event(struct srd_qp *qp)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = qp->rx_event,
	};

	if (qp->rx_event_set && qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	qp->rx_event_set = false;
}

/*
 * A frame refused: counted, and reported as IB_EVENT_QP_FATAL when the
 * connection ends; false, which ends it.
 */
static bool srd_bad_frame(struct srd_qp *qp)
{
	srd_stat_add(qp->dev, SRD_STAT_BAD_FRAMES, 1);
	srd_rx_event(qp, IB_EVENT_QP_FATAL);
	return false;
}

/* Count a peer's WRITE or READ answered with @status. */
static void srd_rma_served(struct srd_qp *qp, bool write, u8 status, u32 len)
{
	switch (status) {
	case IB_WC_SUCCESS:
		srd_stat_add(qp->dev, write ? SRD_STAT_WRITES_SERVED :
				      SRD_STAT_READS_SERVED, 1);
		srd_stat_add(qp->dev, SRD_STAT_SERVED_BYTES, len);
		break;
	case IB_WC_REM_ACCESS_ERR:
		srd_stat_add(qp->dev, SRD_STAT_REM_ACCESS_ERR, 1);
		break;
	case IB_WC_REM_INV_REQ_ERR:
		srd_stat_add(qp->dev, SRD_STAT_REM_INV_REQ_ERR, 1);
		break;
	default:
		srd_stat_add(qp->dev, SRD_STAT_REM_OP_ERR, 1);
	}
}

/*
 * The answer to an inline WRITE or READ: a WRITE's bytes are taken into
 * the MR (@ok: the key checked) or dropped first, a READ's follow the
 * answer.  Return: 0, or the connection's error.
 */
static int srd_rx_inline(struct srd_qp *qp, struct srd_mr *mr,
			 const struct srd_hdr *h, u32 len, bool ok,
			 struct srd_hdr *a)
{
	u64 addr = le64_to_cpu(h->addr);
	int err;

	a->status = ok ? IB_WC_SUCCESS : IB_WC_REM_ACCESS_ERR;
	if (h->type == SRD_F_WRITE) {
		err = ok ? srd_mr_xfer(qp, mr, addr, len, false) :
			   srd_drain(qp, len);
		return err ?: srd_send_hdr(qp, a);
	}
	if (!ok)
		return srd_send_hdr(qp, a);
	a->flags = SRD_F_INLINE;
	a->len = cpu_to_le32(len);
	mutex_lock(&qp->tx_mutex);
	err = srd_xfer(qp, qp->epd, a, sizeof(*a), true, 0) ?:
	      srd_mr_xfer(qp, mr, addr, len, true);
	mutex_unlock(&qp->tx_mutex);
	return err;
}

/*
 * WRITE or READ_REQ: check the key, move the bytes (by SCIF RMA, or in
 * the frames for an inline one; the MR referenced until they have
 * moved), answer; an error ends the connection after the answer.
 */
static bool srd_rx_rma(struct srd_qp *qp, const struct srd_hdr *h, u32 len)
{
	bool write = h->type == SRD_F_WRITE, inl = h->flags & SRD_F_INLINE;
	int right = write ? IB_ACCESS_REMOTE_WRITE : IB_ACCESS_REMOTE_READ;
	struct srd_hdr a = { .type = write ? SRD_F_ACK : SRD_F_READ_RESP };
	u64 addr = le64_to_cpu(h->addr);
	bool lost = false, ok;
	struct srd_mr *mr;
	struct srd_rqe rqe;

	if ((h->flags & ~((write ? SRD_F_IMM : 0) | SRD_F_INLINE)) ||
	    (inl && (len > SRD_INLINE_MAX || h->woff)))
		return srd_bad_frame(qp);
	mr = srd_mr_lookup(qp->dev, le32_to_cpu(h->rkey), qp->ibqp.pd);
	ok = srd_mr_ok(mr, addr, len, right) && (READ_ONCE(qp->access) & right);
	if (inl)
		lost = srd_rx_inline(qp, mr, h, len, ok, &a);
	else if (ok)
		a.status = srd_rma_serve(qp, mr, h, len, &lost);
	else
		a.status = IB_WC_REM_ACCESS_ERR;
	srd_mr_put(mr);
	if (lost || (!inl && srd_send_hdr(qp, &a)))
		return false;
	srd_rma_served(qp, write, a.status, len);
	if (a.status == IB_WC_REM_ACCESS_ERR)
		srd_rx_event(qp, IB_EVENT_QP_ACCESS_ERR);
	else if (a.status == IB_WC_REM_INV_REQ_ERR)
		srd_rx_event(qp, IB_EVENT_QP_REQ_ERR);
	if (a.status != IB_WC_SUCCESS)
		return false;
	if (write && (h->flags & SRD_F_IMM)) {
		struct ib_wc wc = {
			.status = IB_WC_SUCCESS,
			.opcode = IB_WC_RECV_RDMA_WITH_IMM,
			.byte_len = len,
			.ex.imm_data = h->imm,
			.wc_flags = IB_WC_WITH_IMM,
		};

		if (!srd_rq_pop(qp, &rqe))
			return false;
		wc.wr_id = rqe.wr_id;
		srd_rq_complete(qp, &wc);
	}
	return true;
}

/* The statuses a responder may answer (srd_rx_rma, srd_rma_serve). */
static bool srd_resp_status_ok(u8 status)
{
	return status == IB_WC_SUCCESS || status == IB_WC_REM_ACCESS_ERR ||
	       status == IB_WC_REM_INV_REQ_ERR || status == IB_WC_REM_OP_ERR;
}

/*
 * An answer's fields: a MAP_RESP says whether there is a window (its
 * description is checked by the send worker); an inline READ's
 * successful READ_RESP has its bytes' length (checked against the
 * READ's); an ACK or READ_RESP has no payload, key, address or window,
 * and a responder's status.
 */
static bool srd_resp_ok(const struct srd_hdr *h, u32 len)
{
	if (h->type == SRD_F_MAP_RESP)
		return !h->flags && (h->status == IB_WC_SUCCESS ||
				     h->status == IB_WC_REM_ACCESS_ERR);
	if (h->flags == SRD_F_INLINE)
		return h->type == SRD_F_READ_RESP && len &&
		       h->status == IB_WC_SUCCESS && !h->imm && !h->rkey &&
		       !h->addr && !h->woff;
	return !len && !h->flags && !h->imm && !h->rkey && !h->addr &&
	       !h->woff && srd_resp_status_ok(h->status);
}

/*
 * ACK, READ_RESP or MAP_RESP: the answer to one of this side's requests
 * (the responder moved the bytes, or says which window it opened).  An
 * ACK or READ_RESP is the oldest outstanding WRITE's or READ's
 * (srd_sq_answer()); a MAP_RESP the MAP_REQ's, which is only asked
 * while no WRITE or READ is outstanding.
 */
static bool srd_rx_resp(struct srd_qp *qp, const struct srd_hdr *h, u32 len)
{
	bool ok;

	if (!srd_resp_ok(h, len))
		return false;
	if (h->type != SRD_F_MAP_RESP)
		return srd_sq_answer(qp, h, len);
	mutex_lock(&qp->resp_mutex);
	ok = qp->resp_want;	/* else an answer nobody asked for */
	if (ok) {
		qp->resp_want = false;
		qp->resp_hdr = *h;
		complete(&qp->resp);
	}
	mutex_unlock(&qp->resp_mutex);
	return ok;
}

/*
 * Known flags only; INVALIDATE only on a SEND, and not with immediate;
 * INLINE only on a WRITE, READ_REQ or READ_RESP.
 */
static bool srd_flags_ok(const struct srd_hdr *h)
{
	if (h->flags & ~(SRD_F_IMM | SRD_F_INV | SRD_F_INLINE))
		return false;
	if ((h->flags & SRD_F_INLINE) && h->type != SRD_F_WRITE &&
	    h->type != SRD_F_READ_REQ && h->type != SRD_F_READ_RESP)
		return false;
	return !(h->flags & SRD_F_INV) ||
	       (h->type == SRD_F_SEND && !(h->flags & SRD_F_IMM));
}

/* One frame; false ends the connection. */
static bool srd_rx_one(struct srd_qp *qp)
{
	struct srd_hdr h;
	u32 len;
	int err;

	if (srd_xfer(qp, qp->epd, &h, sizeof(h), false, 0))
		return false;
	len = le32_to_cpu(h.len);
	if (len > SRD_MAX_MSG || h.rsvd || !srd_flags_ok(&h))
		return srd_bad_frame(qp);
	switch (h.type) {
	case SRD_F_SEND:
		return h.woff ? srd_bad_frame(qp) : srd_rx_send(qp, &h, len);
	case SRD_F_WRITE:
	case SRD_F_READ_REQ:
		return srd_rx_rma(qp, &h, len);
	case SRD_F_READ_RESP:
	case SRD_F_ACK:
	case SRD_F_MAP_RESP:
		return srd_rx_resp(qp, &h, len) || srd_bad_frame(qp);
	case SRD_F_MAP_REQ:
		err = srd_map_serve(qp, &h, len);
		return err == -EPROTO ? srd_bad_frame(qp) : !err;
	default:
		return srd_bad_frame(qp);
	}
}

/*
 * The receive thread: frames until the connection ends, then the end:
 * the QP to ERROR (flushing it), the asynchronous event of the peer's
 * error if it ended for one, the endpoint closed, the CM told.
 */
static int srd_rx_thread(void *arg)
{
	struct srd_qp *qp = arg;
	struct iw_cm_id *cm_id = qp->cm_id;
	struct iw_cm_event ev = { .event = IW_CM_EVENT_CLOSE };
	unsigned long flags;

	while (!READ_ONCE(qp->closing) && srd_rx_one(qp))
		;
	WRITE_ONCE(qp->closing, true);
	spin_lock_irqsave(&qp->lock, flags);
	WRITE_ONCE(qp->state, IB_QPS_ERR);
	spin_unlock_irqrestore(&qp->lock, flags);
	srd_sq_stop(qp);	/* no answer comes: the waiting ones flushed */
	srd_qp_event(qp);
	srd_map_qp_close(qp);	/* before the endpoint goes */
	scif_close(qp->epd);
	srd_rma_stale_free(qp);
	WRITE_ONCE(qp->epd, NULL);
	srd_set_state(qp, IB_QPS_ERR);
	flush_work(&qp->tx_work);
	ev.local_addr = cm_id->m_local_addr;
	ev.remote_addr = cm_id->m_remote_addr;
	cm_id->event_handler(cm_id, &ev);
	cm_id->rem_ref(cm_id);
	complete(&qp->rx_done);
	return 0;
}

/**
 * srd_qp_connected() - give a QP its connection and start its receiver
 * @qp: the QP, not connected before
 * @epd: the connected endpoint (the QP's from now on)
 * @cm_id: the connection's cm_id (the caller's reference becomes the
 *	QP's, dropped at the CLOSE event)
 *
 * Context: process.
 * Return: 0 (the QP is in RTS), or -errno (nothing taken).
 */
int srd_qp_connected(struct srd_qp *qp, scif_epd_t epd,
		     struct iw_cm_id *cm_id)
{
	struct task_struct *t;
	unsigned long flags;

	spin_lock_irqsave(&qp->lock, flags);
	if (qp->epd || qp->state == IB_QPS_ERR || qp->state == IB_QPS_RESET) {
		spin_unlock_irqrestore(&qp->lock, flags);
		return -EINVAL;
	}
	WRITE_ONCE(qp->state, IB_QPS_RTS);
	WRITE_ONCE(qp->closing, false);
	qp->epd = epd;
	qp->cm_id = cm_id;
	spin_unlock_irqrestore(&qp->lock, flags);
	mutex_lock(&qp->resp_mutex);
	qp->await_stop = false;
	mutex_unlock(&qp->resp_mutex);
	/* Keys resolved on an earlier connection mean nothing on this one. */
	memset(qp->rkeys, 0, sizeof(qp->rkeys));
	qp->next_rkey = 0;
	reinit_completion(&qp->rx_done);
	t = kthread_run(srd_rx_thread, qp, "srd_rx%u", qp->ibqp.qp_num);
	if (IS_ERR(t)) {
		WRITE_ONCE(qp->epd, NULL);
		qp->cm_id = NULL;
		complete(&qp->rx_done);
		return PTR_ERR(t);
	}
	srd_stat_add(qp->dev, SRD_STAT_CM_CONNECTS, 1);
	return 0;
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
