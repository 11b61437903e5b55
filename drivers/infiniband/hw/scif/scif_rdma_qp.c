// SPDX-License-Identifier: GPL-2.0
/*
 * scif_rdma: queue pairs and their work requests (rdma.rst, "QP and
 * connection manager", "Data path").  Send work requests go to the
 * send ring and are done in order by the QP's send worker
 * (scif_rdma_sq.c); in ERROR every work request, send or receive,
 * completes with IB_WC_WR_FLUSH_ERR (what ib_drain_qp needs).  The
 * rings' other side and the state machine are scif_rdma_wq.c's.
 */

#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "scif_rdma.h"

/*
 * A QP of an SRQ has no receive queue of its own (its receive capacities
 * are ignored) and must be of the SRQ's PD, against which the keys of
 * the SRQ's receives are checked.
 */
static int srd_check_caps(const struct ib_qp *ibqp,
			  const struct ib_qp_init_attr *attr)
{
	const struct ib_qp_cap *cap = &attr->cap;

	if (attr->qp_type != IB_QPT_RC || attr->create_flags ||
	    !attr->send_cq || !attr->recv_cq)
		return -EOPNOTSUPP;
	if (!cap->max_send_wr || cap->max_send_wr > SRD_MAX_WR ||
	    cap->max_send_sge > SRD_MAX_SGE || cap->max_inline_data)
		return -EINVAL;
	if (attr->srq)
		return attr->srq->pd == ibqp->pd ? 0 : -EINVAL;
	if (!cap->max_recv_wr || cap->max_recv_wr > SRD_MAX_WR ||
	    cap->max_recv_sge > SRD_MAX_SGE)
		return -EINVAL;
	return 0;
}

/**
 * srd_create_qp() - the create_qp verb: an RC QP
 * @ibqp: the QP ib_core allocated
 * @attr: its type, CQs and capacities (bounded by the device's limits)
 * @udata: user space's (its driver data empty), or NULL for a kernel QP
 *
 * Context: process.
 * Return: 0, -EOPNOTSUPP for a type other than RC or create flags,
 * -EINVAL for capacities out of bounds, an SRQ of another PD or driver
 * data, or -ENOMEM (past SRD_MAX_QP, user space's share of it or the
 * user's part of that).
 */
int srd_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
		  struct ib_udata *udata)
{
	struct srd_dev *dev = to_srd_dev(ibqp->device);
	struct srd_qp *qp = to_srd_qp(ibqp);
	u32 qpn;
	int err;

	err = srd_check_caps(ibqp, attr);
	if (err)
		return err;
	qp->uc = srd_udata_ucount(udata);
	if (!srd_user_take(dev, qp->uc, SRD_UOBJ_QP, SRD_MAX_QP))
		return -ENOMEM;
	err = -ENOMEM;
	if (!atomic_add_unless(&dev->num_qp, 1, SRD_MAX_QP))
		goto unuser;
	if (attr->srq) {
		qp->srq = to_srd_srq(attr->srq);
		attr->cap.max_recv_wr = 0;
		attr->cap.max_recv_sge = 0;
	} else {
		qp->rq = kvcalloc(attr->cap.max_recv_wr, sizeof(*qp->rq),
				  GFP_KERNEL_ACCOUNT);
		if (!qp->rq)
			goto uncount;
	}
	qp->sq = kvcalloc(attr->cap.max_send_wr, sizeof(*qp->sq),
			  GFP_KERNEL_ACCOUNT);
	if (!qp->sq)
		goto free_rq;
	INIT_WORK(&qp->tx_work, srd_sq_work);
	INIT_WORK(&qp->ans_work, srd_ans_work);
	spin_lock_init(&qp->ans_lock);
	init_waitqueue_head(&qp->ans_room);
	init_completion(&qp->rx_done);
	complete(&qp->rx_done);
	init_completion(&qp->resp);
	INIT_LIST_HEAD(&qp->maps);
	mutex_init(&qp->resp_mutex);
	mutex_init(&qp->tx_mutex);
	mutex_init(&qp->sq_mutex);
	qp->dev = dev;
	spin_lock_init(&qp->lock);
	/* As on every iWARP device, a new QP is idle: INIT (rdma-core's tests). */
	qp->state = IB_QPS_INIT;
	qp->sig_all = attr->sq_sig_type == IB_SIGNAL_ALL_WR;
	/*
	 * As on the other iWARP devices, the peer's WRITEs and READs are
	 * allowed from the start; modify_qp only adds rights (librdmacm
	 * gives the active side's user QP none before its connection).
	 */
	qp->access = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;
	qp->max_send_wr = attr->cap.max_send_wr;
	qp->max_recv_wr = attr->cap.max_recv_wr;
	qp->max_send_sge = attr->cap.max_send_sge;
	qp->max_recv_sge = attr->cap.max_recv_sge;
	refcount_set(&qp->iw_refs, 1);
	init_completion(&qp->iw_done);
	srd_direct_init(qp);
	err = srd_rxp_init(qp, attr, !!udata);
	if (err)
		goto free_rxp;
	err = srd_uqp_create(qp, udata);
	if (err)
		goto free_rxp;
	/* QP numbers 0 and 1 are the special QPs' in verbs. */
	err = xa_alloc_cyclic(&dev->qps, &qpn, qp, XA_LIMIT(2, 0xffffff),
			      &dev->next_qpn, GFP_KERNEL_ACCOUNT);
	if (err < 0)
		goto unmap;
	ibqp->qp_num = qpn;
	return 0;
unmap:
	srd_uqp_destroy(qp);
free_rxp:
	srd_rxp_fini(qp);
free_rq:
	kvfree(qp->sq);
	kvfree(qp->rq);
uncount:
	atomic_dec(&dev->num_qp);
unuser:
	srd_user_put(dev, qp->uc, SRD_UOBJ_QP);
	return err;
}

/**
 * srd_modify_qp() - the modify_qp verb
 * @ibqp: the QP
 * @attr: the new attributes
 * @mask: which of @attr to apply (IB_QP_STATE, IB_QP_ACCESS_FLAGS, which
 *	only adds rights to remote read and write, allowed from the QP's
 *	creation (the remote atomic right is accepted and ignored);
 *	IB_QP_DEST_QPN with a move to RTR: the QP is connected to that QP
 *	of the peer node, or of this node if IB_QP_AV's GID is the port's,
 *	without the CM, scif_rdma_direct.c; the others a connected-mode
 *	iWARP QP has no use for are ignored)
 * @udata: user data: refused
 *
 * Context: process.
 * Return: 0, -EOPNOTSUPP with user data, or -EINVAL for a transition
 * the QP state machine does not have or a QP number given to a QP the
 * CM connected.
 */
int srd_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_udata *udata)
{
	struct srd_qp *qp = to_srd_qp(ibqp);
	int err, node = 0;
	bool direct;

	if (udata && (udata->inlen || udata->outlen))
		return -EOPNOTSUPP;
	if (mask & IB_QP_ACCESS_FLAGS) {
		/* The remote atomic right: accepted, of no use (no atomics). */
		if (attr->qp_access_flags & ~(IB_ACCESS_LOCAL_WRITE |
					      IB_ACCESS_REMOTE_WRITE |
					      IB_ACCESS_REMOTE_READ |
					      IB_ACCESS_REMOTE_ATOMIC))
			return -EINVAL;
		WRITE_ONCE(qp->access, qp->access | (attr->qp_access_flags &
						     ~IB_ACCESS_REMOTE_ATOMIC));
	}
	if (mask & IB_QP_STATE) {
		/*
		 * iw_cm's graceful close (SQD) of a QP whose connection the
		 * peer ended already (ERROR): nothing is left to close.
		 */
		if (attr->qp_state == IB_QPS_SQD &&
		    READ_ONCE(qp->state) == IB_QPS_ERR)
			return 0;
		/* Connected by its peer's QP number, without the CM. */
		direct = attr->qp_state == IB_QPS_RTR && (mask & IB_QP_DEST_QPN);
		if (direct) {
			node = srd_direct_node(qp->dev, attr, mask);
			if (node < 0)
				return node;
		}
		if (attr->qp_state == IB_QPS_RESET)
			srd_direct_reset(qp);
		err = srd_set_state(qp, attr->qp_state);
		if (err)
			return err;
		if (direct)
			return srd_direct_start(qp, attr->dest_qp_num, node);
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
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}

/**
 * srd_destroy_qp() - the destroy_qp verb
 * @ibqp: the QP
 * @udata: unused
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
	unsigned long flags;

	spin_lock_irqsave(&qp->lock, flags);
	qp->destroyed = true;	/* no connection from now on */
	spin_unlock_irqrestore(&qp->lock, flags);
	xa_erase(&dev->qps, ibqp->qp_num);
	srd_direct_stop(qp);
	srd_qp_close(qp);
	wait_for_completion(&qp->rx_done);
	cancel_work_sync(&qp->tx_work);
	srd_ans_stop(qp);
	srd_iw_rem_ref(ibqp);
	wait_for_completion(&qp->iw_done);
	srd_rxp_fini(qp);
	srd_uqp_destroy(qp);
	kvfree(qp->sq);
	kvfree(qp->rq);
	srd_user_put(dev, qp->uc, SRD_UOBJ_QP);
	atomic_dec(&dev->num_qp);
	return 0;
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
	srd_uqp_state(qp);
	spin_unlock_irqrestore(&qp->lock, flags);
	return ret;
}

/**
 * srd_post_send() - the post_send verb
 * @ibqp: the QP
 * @wr: the chain of work requests
 * @bad_wr: where the first refused one is reported
 *
 * The work requests are done in order by the QP's send worker (a user
 * QP's small direct WRITEs and READs by the caller: srd_sq_kick()).  One
 * that fails always completes with its error and moves the QP to ERROR;
 * a successful one completes if signalled.  In ERROR every one
 * completes with IB_WC_WR_FLUSH_ERR, after those posted before it (so a
 * drain's work request is the last to complete).
 *
 * Context: any for a kernel QP (no sleeping); process context for a
 * user QP (sleeps).
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
	srd_sq_kick(qp);
	return ret;
}

/* Queue one receive; 0, -EINVAL, -ENOMEM (queue full), or 1: flush. */
static int srd_queue_recv(struct srd_qp *qp, const struct ib_recv_wr *wr)
{
	struct srd_rqe *rqe;
	unsigned long flags;
	int ret = 0;

	if (qp->srq || wr->num_sge < 0 || wr->num_sge > qp->max_recv_sge)
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
 * every receive posted before it), -EINVAL for a QP in RESET, a QP of
 * an SRQ (post to the SRQ) or too many SGEs, -ENOMEM if the queue is
 * full.
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

/**
 * srd_qp_mmap_win() - the mmap verb for a window of a QP's key
 * @ibuc: the context whose uverbs file is mapped
 * @vma: the mapping (srd_uqp_mmap_win())
 * @qpn: the QP its offset names, which must be one of @ibuc's
 *
 * Context: process, under mmap_lock (write).
 * Return: 0, -EINVAL (no such QP of @ibuc), or srd_uqp_mmap_win()'s
 * errors.
 */
int srd_qp_mmap_win(struct ib_ucontext *ibuc, struct vm_area_struct *vma,
		    u32 qpn)
{
	struct srd_dev *dev = to_srd_dev(ibuc->device);
	struct srd_qp *qp;
	int err;

	xa_lock(&dev->qps);
	qp = xa_load(&dev->qps, qpn);
	/* The QP's own reference holds it until destroy_qp drops it. */
	if (qp && (!qp->uctx || &qp->uctx->ibuc != ibuc ||
		   !refcount_inc_not_zero(&qp->iw_refs)))
		qp = NULL;
	xa_unlock(&dev->qps);
	if (!qp)
		return -EINVAL;
	err = srd_uqp_mmap_win(qp, vma);
	srd_iw_rem_ref(&qp->ibqp);
	return err;
}

/**
 * srd_mmap() - the mmap verb: a mapped CQ's ring, a mapped QP's info
 *	page, or the window of a mapped QP's key
 * @ibuc: the context whose uverbs file is mapped
 * @vma: the mapping; its offset tells which
 *
 * Context: process, under mmap_lock (write).
 * Return: 0 or srd_umap_mmap()'s or srd_qp_mmap_win()'s errors.
 */
int srd_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	u32 qpn;

	if (srd_uqp_mmap_qpn(vma->vm_pgoff, &qpn))
		return srd_qp_mmap_win(ibuc, vma, qpn);
	return srd_umap_mmap(ibuc, vma);
}
