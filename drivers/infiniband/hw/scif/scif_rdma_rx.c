// SPDX-License-Identifier: GPL-2.0
/*
 * scif_rdma: a connected QP's receive thread (rdma.rst, "Data path").
 *
 * The send worker (scif_rdma_sq.c) sends the frames: a SEND with its
 * bytes; an RDMA WRITE or READ that does not go straight into a window
 * the responder opened (scif_rdma_map.c) travels, up to SRD_INLINE_MAX
 * bytes, in the frames (inline: a WRITE's bytes follow it, a READ's its
 * answer), or is one frame that the responder checks, moves the bytes
 * of by SCIF RMA (scif_rdma_rma.c) and answers (ACK, READ_RESP, no
 * payload).  The receive thread reads the frames, each field checked
 * before use: a SEND into the next receive, a peer's WRITE or READ
 * served, an answer to the send queue's oldest request (srd_sq_answer),
 * a MAP_REQ to scif_rdma_map.c.  It ends the connection on any error,
 * and when the connection ends, it ends the QP's part of it.
 */

#include <linux/kthread.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "scif_rdma.h"

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

/*
 * SEND_WITH_INV: the key must name a fast-reg MR of the QP's PD that
 * was given remote access (so its rkey was handed out); it becomes
 * invalid, as a LOCAL_INV would make it.
 */
static bool srd_remote_inv(struct srd_qp *qp, u32 key)
{
	struct srd_mr *mr = srd_mr_lookup(qp->dev, key, qp->ibqp.pd);
	bool ok;

	ok = mr && srd_mr_fast_reg(mr) && (READ_ONCE(mr->access) &
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
 * the MR (@ok: the key checked) or dropped first; a READ's are copied
 * out of the MR now, to follow the answer (no memory for them:
 * IB_WC_REM_OP_ERR).  Return: 0, or the connection's error.
 */
static int srd_rx_inline(struct srd_qp *qp, struct srd_mr *mr,
			 const struct srd_hdr *h, u32 len, bool ok,
			 struct srd_hdr *a)
{
	u64 addr = le64_to_cpu(h->addr);
	void *data;
	int err;

	a->status = ok ? IB_WC_SUCCESS : IB_WC_REM_ACCESS_ERR;
	if (h->type == SRD_F_WRITE) {
		err = ok ? srd_mr_xfer(qp, mr, addr, len, false) :
			   srd_drain(qp, len);
		return err ?: srd_answer(qp, a, NULL, 0);
	}
	if (!ok)
		return srd_answer(qp, a, NULL, 0);
	data = kmalloc(len, GFP_KERNEL_ACCOUNT);
	if (!data) {
		a->status = IB_WC_REM_OP_ERR;
		return srd_answer(qp, a, NULL, 0);
	}
	srd_mr_read(mr, addr, data, len);
	a->flags = SRD_F_INLINE;
	a->len = cpu_to_le32(len);
	return srd_answer(qp, a, data, len);
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
	if (lost || (!inl && srd_answer(qp, &a, NULL, 0)))
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
	if (!srd_resp_ok(h, len))
		return false;
	return h->type == SRD_F_MAP_RESP ? srd_map_answer(qp, h) :
					   srd_sq_answer(qp, h, len);
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

/**
 * srd_rx_frame() - read and take in the next frame of a QP's connection
 * @qp: the connected QP, its @rx_mutex held
 *
 * Each field is checked before use; the frame's bytes are waited for
 * (those staged first, srd_xfer()).
 *
 * Context: process: the receive thread, @rx_work, or a poller of a
 * mapped CQ with the frame wholly staged; sleeps.
 * Return: false if the connection is to end (an error of the peer's or
 * of the connection's), else true.
 */
bool srd_rx_frame(struct srd_qp *qp)
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
 * Wait for the connection's bytes (or its end, or @closing) without
 * @rx_mutex, so that a poller may take them in meanwhile.
 */
static void srd_rx_wait(struct srd_qp *qp)
{
	struct scif_pollepd pe = { .epd = qp->epd, .events = EPOLLIN };

	scif_poll(&pe, 1, SRD_POLL_MS);
}

/* The receive thread's turn: a frame if one is there; false ends it. */
static bool srd_rx_turn(struct srd_qp *qp)
{
	bool ok = true, ready;

	mutex_lock(&qp->rx_mutex);
	ready = srd_stage_ready(qp);
	if (ready)
		ok = srd_rx_frame(qp);
	mutex_unlock(&qp->rx_mutex);
	if (ok && !ready)
		srd_rx_wait(qp);
	return ok;
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

	while (!READ_ONCE(qp->closing) && srd_rx_turn(qp))
		;
	/* An error's answer leaves first, as long as the peer reads. */
	flush_work(&qp->ans_work);
	WRITE_ONCE(qp->closing, true);
	srd_stage_stop(qp);	/* no poller reads from now on */
	spin_lock_irqsave(&qp->lock, flags);
	WRITE_ONCE(qp->state, IB_QPS_ERR);
	srd_uqp_state(qp);
	spin_unlock_irqrestore(&qp->lock, flags);
	srd_sq_stop(qp);	/* no answer comes: the waiting ones flushed */
	srd_ans_stop(qp);	/* none leaves */
	srd_qp_event(qp);
	srd_map_qp_close(qp);	/* before the endpoint goes */
	srd_uqp_disconnect(qp);	/* no process maps its windows any more */
	scif_close(qp->epd);
	srd_rma_stale_free(qp);
	WRITE_ONCE(qp->epd, NULL);
	srd_set_state(qp, IB_QPS_ERR);
	flush_work(&qp->tx_work);
	/* A QP connected without the CM (scif_rdma_direct.c) has none. */
	if (cm_id) {
		ev.local_addr = cm_id->m_local_addr;
		ev.remote_addr = cm_id->m_remote_addr;
		cm_id->event_handler(cm_id, &ev);
		cm_id->rem_ref(cm_id);
	}
	complete(&qp->rx_done);
	return 0;
}

/**
 * srd_qp_connected() - give a QP its connection and start its receiver
 * @qp: the QP, not connected before
 * @epd: the connected endpoint (the QP's from now on)
 * @cm_id: the connection's cm_id (the caller's reference becomes the
 *	QP's, dropped at the CLOSE event), or NULL for a QP connected
 *	without the CM
 *
 * Work requests posted while the QP waited for its connection go now.
 *
 * Context: process.
 * Return: 0 (the QP is in RTS), or -errno (nothing taken: the QP has a
 * connection, is in ERROR or RESET, or is being destroyed).
 */
int srd_qp_connected(struct srd_qp *qp, scif_epd_t epd,
		     struct iw_cm_id *cm_id)
{
	struct task_struct *t;
	unsigned long flags;
	u32 i;

	spin_lock_irqsave(&qp->lock, flags);
	if (qp->epd || qp->destroyed || qp->state == IB_QPS_ERR ||
	    qp->state == IB_QPS_RESET) {
		spin_unlock_irqrestore(&qp->lock, flags);
		return -EINVAL;
	}
	WRITE_ONCE(qp->state, IB_QPS_RTS);
	srd_uqp_state(qp);
	WRITE_ONCE(qp->closing, false);
	qp->epd = epd;
	qp->cm_id = cm_id;
	/* Under the lock: destroy_qp, once it has marked the QP, waits. */
	reinit_completion(&qp->rx_done);
	spin_unlock_irqrestore(&qp->lock, flags);
	mutex_lock(&qp->resp_mutex);
	qp->await_stop = false;
	mutex_unlock(&qp->resp_mutex);
	/* Keys resolved on an earlier connection mean nothing on this one. */
	memset(qp->rkeys, 0, sizeof(qp->rkeys));
	for (i = 0; i < SRD_MAP_CACHE; i++)
		srd_uqp_key(qp, i);
	qp->next_rkey = 0;
	memset(qp->rkeys_seen, 0, sizeof(qp->rkeys_seen));
	qp->next_seen = 0;
	srd_stage_start(qp);
	srd_uqp_connect(qp, epd);
	t = kthread_run(srd_rx_thread, qp, "srd_rx%u", qp->ibqp.qp_num);
	if (IS_ERR(t)) {
		srd_uqp_disconnect(qp);
		srd_stage_stop(qp);
		WRITE_ONCE(qp->epd, NULL);
		qp->cm_id = NULL;
		complete(&qp->rx_done);
		return PTR_ERR(t);
	}
	srd_stat_add(qp->dev, SRD_STAT_CM_CONNECTS, 1);
	queue_work(system_unbound_wq, &qp->tx_work);
	return 0;
}
