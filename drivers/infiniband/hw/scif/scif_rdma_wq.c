// SPDX-License-Identifier: GPL-2.0
/*
 * scif_rdma: a QP's work queues (rdma.rst, "QP and connection manager"):
 * completions into a CQ, the receive ring, and the QP's state machine,
 * which the verbs, the send worker and the receive thread all move.
 */

#include <rdma/ib_verbs.h>

#include "scif_rdma.h"

/* The states a QP may move to from each state (IB spec, 10.3.1). */
static const u8 srd_qp_next[IB_QPS_ERR + 1] = {
	[IB_QPS_RESET] = BIT(IB_QPS_RESET) | BIT(IB_QPS_INIT) | BIT(IB_QPS_ERR),
	[IB_QPS_INIT] = BIT(IB_QPS_RESET) | BIT(IB_QPS_INIT) | BIT(IB_QPS_RTR) |
			BIT(IB_QPS_ERR),
	[IB_QPS_RTR] = BIT(IB_QPS_RESET) | BIT(IB_QPS_RTS) | BIT(IB_QPS_ERR),
	[IB_QPS_RTS] = BIT(IB_QPS_RESET) | BIT(IB_QPS_RTS) | BIT(IB_QPS_SQD) |
		       BIT(IB_QPS_ERR),
	[IB_QPS_SQD] = BIT(IB_QPS_RESET) | BIT(IB_QPS_ERR),
	[IB_QPS_SQE] = BIT(IB_QPS_RESET) | BIT(IB_QPS_ERR),
	[IB_QPS_ERR] = BIT(IB_QPS_RESET) | BIT(IB_QPS_ERR),
};

/* Put @wc into @cq's ring, under its lock: false if the ring is full. */
static bool srd_cq_store(struct srd_cq *cq, const struct ib_wc *wc)
{
	lockdep_assert_held(&cq->lock);
	if (cq->umap)
		return srd_ucq_store(cq, wc);
	if (cq->count == cq->size)
		return false;
	cq->wc[(cq->head + cq->count) % cq->size] = *wc;
	cq->count++;
	return true;
}

/**
 * srd_cq_add() - add a completion, and notify if the CQ was armed
 * @cq: the CQ
 * @wc: the completion
 *
 * A full ring is an overrun: the completion is lost and the CQ's
 * event handler is told (IB_EVENT_CQ_ERR), once.
 *
 * Context: any; calls the consumer's comp_handler or event_handler
 * without the CQ's lock.
 * Return: true if the completion was added.
 */
bool srd_cq_add(struct srd_cq *cq, const struct ib_wc *wc)
{
	bool notify = false, overrun = false;
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	if (!srd_cq_store(cq, wc)) {
		overrun = !cq->overrun;
		cq->overrun = true;
	} else if (cq->armed == IB_CQ_NEXT_COMP ||
		   (cq->armed == IB_CQ_SOLICITED &&
		    (wc->wc_flags & IB_WC_WITH_IMM))) {
		cq->armed = 0;
		notify = true;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	if (notify && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	if (overrun && cq->ibcq.event_handler) {
		struct ib_event ev = {
			.device = cq->ibcq.device,
			.element.cq = &cq->ibcq,
			.event = IB_EVENT_CQ_ERR,
		};

		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	}
	return !overrun && !READ_ONCE(cq->overrun);
}

/**
 * srd_complete() - add a work completion without data: a send work
 * request's, or a flushed receive's
 * @ibqp: the QP
 * @ibcq: its send or receive CQ
 * @wr_id: the work request's id
 * @opcode: IB_WC_*
 * @status: IB_WC_* status
 *
 * Context: any.
 */
void srd_complete(struct ib_qp *ibqp, struct ib_cq *ibcq, u64 wr_id,
		  enum ib_wc_opcode opcode, enum ib_wc_status status)
{
	struct ib_wc wc = {
		.wr_id = wr_id,
		.status = status,
		.opcode = opcode,
		.qp = ibqp,
	};

	srd_cq_add(to_srd_cq(ibcq), &wc);
}

/*
 * The oldest receive of an SRQ, with its QP's lock held; *@limit when
 * that took the SRQ below its armed limit (which it disarms).
 */
static bool srd_srq_pop(struct srd_srq *srq, struct srd_rqe *rqe,
			bool *limit)
{
	bool ok = false;

	spin_lock(&srq->lock);
	if (srq->count) {
		*rqe = srq->rq[srq->head];
		srq->head = (srq->head + 1) % srq->max_wr;
		srq->count--;
		ok = true;
		if (srq->limit && srq->count < srq->limit) {
			srq->limit = 0;
			*limit = true;
		}
	}
	spin_unlock(&srq->lock);
	return ok;
}

static void srd_srq_limit_event(struct srd_srq *srq)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

/**
 * srd_rq_pop() - take the oldest posted receive
 * @qp: the QP
 * @rqe: where it is copied
 *
 * From the QP's SRQ if it has one (raising IB_EVENT_SRQ_LIMIT_REACHED
 * when that takes the SRQ below its armed limit), else from its
 * receive queue.  The receive is the receive thread's until it hands it
 * back with srd_rq_complete(), which it must do: a flush of the
 * receive queue waits for that, so that nothing completes after the
 * receive a consumer posted to drain the queue (ib_drain_rq()), and
 * IB_EVENT_QP_LAST_WQE_REACHED comes after it.
 *
 * Context: the QP's receive thread.
 * Return: false if none was posted or the QP is in neither RTS nor SQD.
 */
bool srd_rq_pop(struct srd_qp *qp, struct srd_rqe *rqe)
{
	unsigned long flags;
	bool ok = false, limit = false;

	spin_lock_irqsave(&qp->lock, flags);
	if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD) {
		/* nothing taken */
	} else if (qp->srq) {
		ok = srd_srq_pop(qp->srq, rqe, &limit);
	} else if (qp->rq_count) {
		*rqe = qp->rq[qp->rq_head];
		qp->rq_head = (qp->rq_head + 1) % qp->max_recv_wr;
		qp->rq_count--;
		ok = true;
	}
	if (ok)
		qp->rq_busy = true;
	spin_unlock_irqrestore(&qp->lock, flags);
	if (limit)
		srd_srq_limit_event(qp->srq);
	return ok;
}

/* A QP of an SRQ in ERROR holds no receive of it any more: say so, once. */
static void srd_last_wqe_event(struct srd_qp *qp)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = IB_EVENT_QP_LAST_WQE_REACHED,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/**
 * srd_flush_rq() - flush or drop a QP's posted receives
 * @qp: the QP (in ERROR or RESET)
 * @flush: complete them with IB_WC_WR_FLUSH_ERR, else drop them (RESET)
 *
 * Unless the receive thread holds one (it flushes the rest after it) or
 * another flush runs (it goes on to the entries added meanwhile).  One
 * flusher at a time keeps them in order, a drain's receive last.  A QP
 * of an SRQ has none of its own: its flush in ERROR raises
 * IB_EVENT_QP_LAST_WQE_REACHED instead, once (ib_drain_qp() waits for
 * it), and RESET makes it due again.
 *
 * Context: any but atomic: the CQ's comp_handler may be called.
 */
void srd_flush_rq(struct srd_qp *qp, bool flush)
{
	unsigned long flags;
	bool last;
	u64 wr_id;

	spin_lock_irqsave(&qp->lock, flags);
	if (qp->rq_busy || qp->rq_flushing) {
		spin_unlock_irqrestore(&qp->lock, flags);
		return;
	}
	qp->rq_flushing = true;
	while (qp->rq_count) {
		wr_id = qp->rq[qp->rq_head].wr_id;
		qp->rq_head = (qp->rq_head + 1) % qp->max_recv_wr;
		qp->rq_count--;
		spin_unlock_irqrestore(&qp->lock, flags);
		if (flush)
			srd_complete(&qp->ibqp, qp->ibqp.recv_cq, wr_id,
				     IB_WC_RECV, IB_WC_WR_FLUSH_ERR);
		spin_lock_irqsave(&qp->lock, flags);
	}
	qp->rq_flushing = false;
	last = flush && qp->srq && !qp->last_wqe;
	qp->last_wqe = flush && qp->srq;
	spin_unlock_irqrestore(&qp->lock, flags);
	if (last)
		srd_last_wqe_event(qp);
}

/**
 * srd_rq_complete() - hand back the receive srd_rq_pop() took
 * @qp: the QP
 * @wc: its completion; if the QP left RTS meanwhile, it completes with
 *	IB_WC_WR_FLUSH_ERR instead, as the rest of the queue does
 *
 * Then the queue is flushed if the QP is in ERROR (dropped in RESET).
 *
 * Context: the QP's receive thread.
 */
void srd_rq_complete(struct srd_qp *qp, struct ib_wc *wc)
{
	enum ib_qp_state state = READ_ONCE(qp->state);
	unsigned long flags;

	if (state != IB_QPS_RTS && state != IB_QPS_SQD) {
		wc->status = IB_WC_WR_FLUSH_ERR;
		wc->wc_flags = 0;
		wc->byte_len = 0;
	}
	wc->qp = &qp->ibqp;
	srd_cq_add(to_srd_cq(qp->ibqp.recv_cq), wc);
	spin_lock_irqsave(&qp->lock, flags);
	qp->rq_busy = false;
	state = qp->state;
	spin_unlock_irqrestore(&qp->lock, flags);
	if (state == IB_QPS_ERR || state == IB_QPS_RESET)
		srd_flush_rq(qp, state == IB_QPS_ERR);
}

/**
 * srd_set_state() - move a QP to @state if the state machine allows it
 * @qp: the QP
 * @state: the new state
 *
 * ERROR flushes the receive queue (the send worker flushes the send
 * queue); ERROR and SQD end the connection, if any.
 *
 * Context: process or the QP's own threads; not atomic.
 * Return: 0 or -EINVAL.
 */
int srd_set_state(struct srd_qp *qp, enum ib_qp_state state)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&qp->lock, flags);
	if (state > IB_QPS_ERR || !(srd_qp_next[qp->state] & BIT(state)))
		err = -EINVAL;
	else
		WRITE_ONCE(qp->state, state);
	srd_uqp_state(qp);
	spin_unlock_irqrestore(&qp->lock, flags);
	if (err)
		return err;
	if (state == IB_QPS_ERR || state == IB_QPS_SQD)
		srd_qp_close(qp);
	if (state == IB_QPS_ERR || state == IB_QPS_RESET)
		srd_flush_rq(qp, state == IB_QPS_ERR);
	if (state == IB_QPS_ERR)
		queue_work(system_unbound_wq, &qp->tx_work);
	return 0;
}

/**
 * srd_wc_opcode() - the completion opcode of a send work request
 * @op: IB_WR_*
 *
 * Context: any.
 * Return: IB_WC_*.
 */
enum ib_wc_opcode srd_wc_opcode(enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
	case IB_WR_RDMA_READ_WITH_INV:
		return IB_WC_RDMA_READ;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	default:
		return IB_WC_SEND;
	}
}
