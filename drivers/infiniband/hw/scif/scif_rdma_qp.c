// SPDX-License-Identifier: GPL-2.0
/*
 * scif_rdma: queue pairs and their work requests (rdma.rst, "QP and
 * connection manager", "Data path").  Send work requests go to the
 * send ring and are done in order by the QP's send worker
 * (scif_rdma_data.c); in ERROR every work request, send or receive,
 * completes with IB_WC_WR_FLUSH_ERR (what ib_drain_qp needs).
 */

#include <linux/slab.h>
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

static int srd_check_caps(const struct ib_qp_init_attr *attr)
{
	const struct ib_qp_cap *cap = &attr->cap;

	if (attr->qp_type != IB_QPT_RC || attr->srq || attr->create_flags ||
	    !attr->send_cq || !attr->recv_cq)
		return -EOPNOTSUPP;
	if (!cap->max_send_wr || cap->max_send_wr > SRD_MAX_WR ||
	    !cap->max_recv_wr || cap->max_recv_wr > SRD_MAX_WR ||
	    cap->max_send_sge > SRD_MAX_SGE || cap->max_recv_sge > SRD_MAX_SGE ||
	    cap->max_inline_data)
		return -EINVAL;
	return 0;
}

/**
 * srd_create_qp() - the create_qp verb: a kernel RC QP
 * @ibqp: the QP ib_core allocated
 * @attr: its type, CQs and capacities (bounded by the device's limits)
 * @udata: user data: refused
 *
 * Context: process.
 * Return: 0, -EOPNOTSUPP for a user QP, a type other than RC, an SRQ or
 * create flags, -EINVAL for capacities out of bounds, or -ENOMEM.
 */
int srd_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
		  struct ib_udata *udata)
{
	struct srd_dev *dev = to_srd_dev(ibqp->device);
	struct srd_qp *qp = to_srd_qp(ibqp);
	u32 qpn;
	int err;

	if (udata)
		return -EOPNOTSUPP;
	err = srd_check_caps(attr);
	if (err)
		return err;
	if (!atomic_add_unless(&dev->num_qp, 1, SRD_MAX_QP))
		return -ENOMEM;
	err = -ENOMEM;
	qp->rq = kvcalloc(attr->cap.max_recv_wr, sizeof(*qp->rq),
			  GFP_KERNEL_ACCOUNT);
	if (!qp->rq)
		goto uncount;
	qp->sq = kvcalloc(attr->cap.max_send_wr, sizeof(*qp->sq),
			  GFP_KERNEL_ACCOUNT);
	if (!qp->sq)
		goto free_rq;
	INIT_WORK(&qp->tx_work, srd_sq_work);
	init_completion(&qp->rx_done);
	complete(&qp->rx_done);
	init_completion(&qp->resp);
	INIT_LIST_HEAD(&qp->maps);
	mutex_init(&qp->resp_mutex);
	mutex_init(&qp->tx_mutex);
	qp->dev = dev;
	spin_lock_init(&qp->lock);
	qp->state = IB_QPS_RESET;
	qp->sig_all = attr->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->max_send_wr = attr->cap.max_send_wr;
	qp->max_recv_wr = attr->cap.max_recv_wr;
	qp->max_send_sge = attr->cap.max_send_sge;
	qp->max_recv_sge = attr->cap.max_recv_sge;
	refcount_set(&qp->iw_refs, 1);
	init_completion(&qp->iw_done);
	/* QP numbers 0 and 1 are the special QPs' in verbs. */
	err = xa_alloc_cyclic(&dev->qps, &qpn, qp, XA_LIMIT(2, 0xffffff),
			      &dev->next_qpn, GFP_KERNEL_ACCOUNT);
	if (err < 0)
		goto free_rq;
	ibqp->qp_num = qpn;
	return 0;
free_rq:
	kvfree(qp->sq);
	kvfree(qp->rq);
uncount:
	atomic_dec(&dev->num_qp);
	return err;
}

/**
 * srd_complete() - add a work completion
 * @ibqp: the QP
 * @ibcq: its send or receive CQ
 * @wr_id: the work request's id
 * @opcode: IB_WC_*
 * @status: IB_WC_* status
 * @len: bytes received (receives)
 * @imm: the immediate data (with IB_WC_WITH_IMM in @flags)
 * @flags: IB_WC_WITH_IMM or 0
 *
 * Context: any.
 */
void srd_complete(struct ib_qp *ibqp, struct ib_cq *ibcq, u64 wr_id,
		  enum ib_wc_opcode opcode, enum ib_wc_status status, u32 len,
		  __be32 imm, int flags)
{
	struct ib_wc wc = {
		.wr_id = wr_id,
		.status = status,
		.opcode = opcode,
		.qp = ibqp,
		.byte_len = len,
		.ex.imm_data = imm,
		.wc_flags = flags,
	};

	srd_cq_add(to_srd_cq(ibcq), &wc);
}

/**
 * srd_rq_pop() - take the oldest posted receive
 * @qp: the QP
 * @rqe: where it is copied
 *
 * The receive is the receive thread's until it hands it back with
 * srd_rq_complete(), which it must do: a flush of the receive queue
 * waits for that, so that nothing completes after the receive a
 * consumer posted to drain the queue (ib_drain_rq()).
 *
 * Context: the QP's receive thread.
 * Return: false if none was posted or the QP is in neither RTS nor SQD.
 */
bool srd_rq_pop(struct srd_qp *qp, struct srd_rqe *rqe)
{
	unsigned long flags;
	bool ok = false;

	spin_lock_irqsave(&qp->lock, flags);
	if (qp->rq_count &&
	    (qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD)) {
		*rqe = qp->rq[qp->rq_head];
		qp->rq_head = (qp->rq_head + 1) % qp->max_recv_wr;
		qp->rq_count--;
		qp->rq_busy = true;
		ok = true;
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	return ok;
}

/*
 * Complete every posted receive with IB_WC_WR_FLUSH_ERR (@flush), or
 * drop them (the QP went to RESET); unless the receive thread holds one
 * (it flushes the rest after it) or another flush runs (it goes on to
 * the entries added meanwhile).  One flusher at a time keeps them in
 * order, a drain's receive last.
 */
static void srd_flush_rq(struct srd_qp *qp, bool flush)
{
	unsigned long flags;
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
				     IB_WC_RECV, IB_WC_WR_FLUSH_ERR, 0, 0, 0);
		spin_lock_irqsave(&qp->lock, flags);
	}
	qp->rq_flushing = false;
	spin_unlock_irqrestore(&qp->lock, flags);
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
 * srd_modify_qp() - the modify_qp verb
 * @ibqp: the QP
 * @attr: the new attributes
 * @mask: which of @attr to apply (IB_QP_STATE, IB_QP_ACCESS_FLAGS; the
 *	others a connected-mode iWARP QP has no use for are ignored)
 * @udata: user data: refused
 *
 * Context: process.
 * Return: 0, -EOPNOTSUPP with user data, or -EINVAL for a transition
 * the QP state machine does not have.
 */
int srd_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_udata *udata)
{
	struct srd_qp *qp = to_srd_qp(ibqp);
	int err;

	if (udata && (udata->inlen || udata->outlen))
		return -EOPNOTSUPP;
	if (mask & IB_QP_ACCESS_FLAGS) {
		if (attr->qp_access_flags & ~(IB_ACCESS_LOCAL_WRITE |
					      IB_ACCESS_REMOTE_WRITE |
					      IB_ACCESS_REMOTE_READ))
			return -EINVAL;
		WRITE_ONCE(qp->access, attr->qp_access_flags);
	}
	if (mask & IB_QP_STATE) {
		err = srd_set_state(qp, attr->qp_state);
		if (err)
			return err;
	}
	return 0;
}

/**
 * srd_query_qp() - the query_qp verb
 * @ibqp: the QP
 * @attr: filled with the state, access flags and capacities
 * @mask: ignored: everything known is filled
 * @init: filled with the creation attributes
 *
 * Context: process.
 * Return: 0.
 */
int srd_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		 struct ib_qp_init_attr *init)
{
	struct srd_qp *qp = to_srd_qp(ibqp);

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	attr->qp_state = READ_ONCE(qp->state);
	attr->cur_qp_state = attr->qp_state;
	attr->qp_access_flags = READ_ONCE(qp->access);
	attr->path_mtu = IB_MTU_4096;
	attr->cap.max_send_wr = qp->max_send_wr;
	attr->cap.max_recv_wr = qp->max_recv_wr;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_recv_sge = qp->max_recv_sge;
	init->qp_type = IB_QPT_RC;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}

/**
 * srd_destroy_qp() - the destroy_qp verb
 * @ibqp: the QP
 * @udata: unused (no user QPs)
 *
 * Waits until the iWARP CM has dropped its references: ib_core frees
 * the QP when this returns.  Posted work requests are dropped without
 * completions, as the verb specifies.
 *
 * Context: process; may sleep.
 * Return: 0.
 */
int srd_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct srd_qp *qp = to_srd_qp(ibqp);
	struct srd_dev *dev = qp->dev;

	xa_erase(&dev->qps, ibqp->qp_num);
	srd_qp_close(qp);
	wait_for_completion(&qp->rx_done);
	cancel_work_sync(&qp->tx_work);
	srd_iw_rem_ref(ibqp);
	wait_for_completion(&qp->iw_done);
	kvfree(qp->sq);
	kvfree(qp->rq);
	atomic_dec(&dev->num_qp);
	return 0;
}

/**
 * srd_reg_mr() - IB_WR_REG_MR: make a fast-reg MR's keys valid
 * @qp: the QP it was posted on
 * @w: the work request
 *
 * Context: the send worker.
 * Return: IB_WC_SUCCESS or IB_WC_MW_BIND_ERR.
 */
enum ib_wc_status srd_reg_mr(struct srd_qp *qp, struct srd_swqe *w)
{
	struct srd_mr *mr = to_srd_mr(w->reg_mr);

	if (w->reg_mr->device != qp->ibqp.device ||
	    w->reg_mr->pd != qp->ibqp.pd || mr->dma ||
	    (w->reg_key >> 8) != (mr->ibmr.lkey >> 8) ||
	    (w->reg_access & ~(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			       IB_ACCESS_REMOTE_READ)))
		return IB_WC_MW_BIND_ERR;
	/* Windows over what it mapped before are closed first. */
	WRITE_ONCE(mr->valid, false);
	srd_map_mr_close(qp->dev, mr, false);
	mr->access = w->reg_access;
	mr->iova = w->reg_mr->iova;
	mr->length = w->reg_mr->length;
	WRITE_ONCE(mr->key, w->reg_key);
	WRITE_ONCE(mr->valid, true);
	return IB_WC_SUCCESS;
}

/**
 * srd_local_inv() - IB_WR_LOCAL_INV: the key must name a fast-reg MR
 * of the QP's PD
 * @qp: the QP it was posted on
 * @key: the key
 *
 * Context: the send worker.
 * Return: IB_WC_SUCCESS or IB_WC_LOC_PROT_ERR.
 */
enum ib_wc_status srd_local_inv(struct srd_qp *qp, u32 key)
{
	struct srd_mr *mr = srd_mr_lookup(qp->dev, key, qp->ibqp.pd);
	enum ib_wc_status st = IB_WC_LOC_PROT_ERR;

	if (mr && !mr->dma) {
		WRITE_ONCE(mr->valid, false);
		srd_map_mr_close(qp->dev, mr, false);
		st = IB_WC_SUCCESS;
	}
	srd_mr_put(mr);
	return st;
}

/**
 * srd_read_inv() - the invalidation an RDMA_READ_WITH_INV ends with
 * @qp: the QP it was posted on
 * @key: the work request's invalidate_rkey
 *
 * Only the key's index counts, as in iWARP: rdma_rw names the sink MR
 * by the key it had before the IB_WR_REG_MR of the same chain gave it a
 * new one.  The MR at that index, a fast-reg MR of the QP's PD, becomes
 * invalid.
 *
 * Context: the send worker.
 * Return: IB_WC_SUCCESS or IB_WC_LOC_PROT_ERR.
 */
enum ib_wc_status srd_read_inv(struct srd_qp *qp, u32 key)
{
	enum ib_wc_status st = IB_WC_LOC_PROT_ERR;
	struct srd_mr *mr;

	rcu_read_lock();	/* an MR is freed after a grace period */
	mr = xa_load(&qp->dev->mrs, key >> 8);
	if (mr && (mr->ibmr.pd != qp->ibqp.pd || mr->dma ||
		   !refcount_inc_not_zero(&mr->refs)))
		mr = NULL;
	rcu_read_unlock();
	if (mr) {
		WRITE_ONCE(mr->valid, false);
		srd_map_mr_close(qp->dev, mr, false);
		st = IB_WC_SUCCESS;
	}
	srd_mr_put(mr);
	return st;
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

static void srd_fill_swqe(struct srd_swqe *w, const struct ib_send_wr *wr,
			  bool sig_all)
{
	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->signaled = sig_all || (wr->send_flags & IB_SEND_SIGNALED);
	w->fence = wr->send_flags & IB_SEND_FENCE;
	w->num_sge = wr->num_sge;
	memcpy(w->sge, wr->sg_list, wr->num_sge * sizeof(*wr->sg_list));
	if (wr->opcode == IB_WR_SEND_WITH_IMM ||
	    wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM)
		w->imm = wr->ex.imm_data;
	if (wr->opcode == IB_WR_LOCAL_INV ||
	    wr->opcode == IB_WR_SEND_WITH_INV)
		w->rkey = wr->ex.invalidate_rkey;
	if (wr->opcode == IB_WR_RDMA_WRITE ||
	    wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM ||
	    wr->opcode == IB_WR_RDMA_READ) {
		w->remote_addr = rdma_wr(wr)->remote_addr;
		w->rkey = rdma_wr(wr)->rkey;
	}
	if (wr->opcode == IB_WR_RDMA_READ_WITH_INV) {
		w->opcode = IB_WR_RDMA_READ;
		w->remote_addr = rdma_wr(wr)->remote_addr;
		w->rkey = rdma_wr(wr)->rkey;
		w->read_inv = true;
		w->inv_key = wr->ex.invalidate_rkey;
	}
	if (wr->opcode == IB_WR_REG_MR) {
		w->reg_mr = reg_wr(wr)->mr;
		w->reg_key = reg_wr(wr)->key;
		w->reg_access = reg_wr(wr)->access;
	}
}

/* Queue one send work request: 0 or a negative errno (refused). */
static int srd_queue_send(struct srd_qp *qp, const struct ib_send_wr *wr)
{
	unsigned long flags;
	int ret = 0;

	if (wr->num_sge < 0 || wr->num_sge > qp->max_send_sge ||
	    (wr->send_flags & IB_SEND_INLINE))
		return -EINVAL;
	switch (wr->opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
	case IB_WR_RDMA_READ_WITH_INV:
	case IB_WR_REG_MR:
	case IB_WR_LOCAL_INV:
		break;
	default:
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->lock, flags);
	/* In ERROR the send worker flushes it, after those before it. */
	if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_ERR)
		ret = -EINVAL;
	else if (qp->sq_count == qp->max_send_wr)
		ret = -ENOMEM;
	else
		srd_fill_swqe(&qp->sq[(qp->sq_head + qp->sq_count++) %
				      qp->max_send_wr], wr, qp->sig_all);
	spin_unlock_irqrestore(&qp->lock, flags);
	return ret;
}

/**
 * srd_post_send() - the post_send verb
 * @ibqp: the QP
 * @wr: the chain of work requests
 * @bad_wr: where the first refused one is reported
 *
 * The work requests are done in order by the QP's send worker.  One
 * that fails always completes with its error and moves the QP to ERROR;
 * a successful one completes if signalled.  In ERROR every one
 * completes with IB_WC_WR_FLUSH_ERR, after those posted before it (so a
 * drain's work request is the last to complete).
 *
 * Context: any; no sleeping.
 * Return: 0, -EINVAL for a WR the QP's state or capacities refuse or an
 * opcode not supported, -ENOMEM if the send queue is full.
 */
int srd_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		  const struct ib_send_wr **bad_wr)
{
	struct srd_qp *qp = to_srd_qp(ibqp);
	int ret = 0;

	for (; wr; wr = wr->next) {
		ret = srd_queue_send(qp, wr);
		if (ret < 0) {
			*bad_wr = wr;
			break;
		}
	}
	queue_work(system_unbound_wq, &qp->tx_work);
	return ret;
}

/* Queue one receive; 0, -EINVAL, -ENOMEM (queue full), or 1: flush. */
static int srd_queue_recv(struct srd_qp *qp, const struct ib_recv_wr *wr)
{
	struct srd_rqe *rqe;
	unsigned long flags;
	int ret = 0;

	if (wr->num_sge < 0 || wr->num_sge > qp->max_recv_sge)
		return -EINVAL;
	spin_lock_irqsave(&qp->lock, flags);
	if (qp->state == IB_QPS_RESET) {
		ret = -EINVAL;
	} else if (qp->rq_count == qp->max_recv_wr) {
		ret = -ENOMEM;
	} else {
		/* In ERROR it is flushed, after those before it. */
		ret = qp->state == IB_QPS_ERR;
		rqe = &qp->rq[(qp->rq_head + qp->rq_count) % qp->max_recv_wr];
		rqe->wr_id = wr->wr_id;
		rqe->num_sge = wr->num_sge;
		memcpy(rqe->sge, wr->sg_list, wr->num_sge * sizeof(*wr->sg_list));
		qp->rq_count++;
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	return ret;
}

/**
 * srd_post_recv() - the post_recv verb
 * @ibqp: the QP
 * @wr: the chain of receive work requests
 * @bad_wr: where the first refused one is reported
 *
 * Context: any; no sleeping.
 * Return: 0 (in ERROR each WR completes with IB_WC_WR_FLUSH_ERR, after
 * every receive posted before it), -EINVAL for a QP in RESET or too
 * many SGEs, -ENOMEM if the queue is full.
 */
int srd_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		  const struct ib_recv_wr **bad_wr)
{
	struct srd_qp *qp = to_srd_qp(ibqp);
	bool flush = false;
	int ret = 0;

	for (; wr; wr = wr->next) {
		ret = srd_queue_recv(qp, wr);
		if (ret < 0) {
			*bad_wr = wr;
			break;
		}
		flush |= ret;
		ret = 0;
	}
	if (flush)
		srd_flush_rq(qp, true);
	return ret;
}

/**
 * srd_iw_add_ref() - the iWARP CM takes a reference on a QP
 * @ibqp: the QP
 *
 * Context: any.
 */
void srd_iw_add_ref(struct ib_qp *ibqp)
{
	refcount_inc(&to_srd_qp(ibqp)->iw_refs);
}

/**
 * srd_iw_rem_ref() - the iWARP CM drops a reference on a QP
 * @ibqp: the QP
 *
 * Context: any.
 */
void srd_iw_rem_ref(struct ib_qp *ibqp)
{
	struct srd_qp *qp = to_srd_qp(ibqp);

	if (refcount_dec_and_test(&qp->iw_refs))
		complete(&qp->iw_done);
}

/**
 * srd_iw_get_qp() - the QP of a number, for the iWARP CM
 * @ibdev: the device
 * @qpn: the QP number
 *
 * Context: any.
 * Return: the QP, or NULL if @ibdev has no QP @qpn.
 */
struct ib_qp *srd_iw_get_qp(struct ib_device *ibdev, int qpn)
{
	struct srd_qp *qp = xa_load(&to_srd_dev(ibdev)->qps, qpn);

	return qp ? &qp->ibqp : NULL;
}
