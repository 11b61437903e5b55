// SPDX-License-Identifier: GPL-2.0
/*
 * scif_rdma: shared receive queues (rdma.rst, "Shared receive queues").
 * The verbs of the object and its posting; the QPs of an SRQ take their
 * receives from it in srd_rq_pop() (scif_rdma_wq.c), which also raises
 * the limit event.
 */

#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "scif_rdma.h"

/**
 * srd_create_srq() - the create_srq verb
 * @ibsrq: the SRQ ib_core allocated
 * @init: its type (IB_SRQT_BASIC only), size, SGEs and limit
 * @udata: user space's (its driver data empty), or NULL for a kernel SRQ
 *
 * Context: process.
 * Return: 0, -EOPNOTSUPP for another type, -EINVAL for a size, SGE
 * count or limit out of bounds or driver data, or -ENOMEM (past
 * SRD_MAX_SRQ, user space's share of it or the user's part of that, or
 * no memory).
 */
int srd_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		   struct ib_udata *udata)
{
	struct srd_dev *dev = to_srd_dev(ibsrq->device);
	struct srd_srq *srq = to_srd_srq(ibsrq);
	struct ib_srq_attr *a = &init->attr;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if ((udata && (udata->inlen || udata->outlen)) || !a->max_wr ||
	    a->max_wr > SRD_MAX_SRQ_WR || !a->max_sge ||
	    a->max_sge > SRD_MAX_SGE || a->srq_limit > a->max_wr)
		return -EINVAL;
	srq->uc = srd_udata_ucount(udata);
	if (!srd_user_take(dev, srq->uc, SRD_UOBJ_SRQ, SRD_MAX_SRQ))
		return -ENOMEM;
	if (!atomic_add_unless(&dev->num_srq, 1, SRD_MAX_SRQ))
		goto unuser;
	srq->rq = kvcalloc(a->max_wr, sizeof(*srq->rq), GFP_KERNEL_ACCOUNT);
	if (!srq->rq)
		goto uncount;
	spin_lock_init(&srq->lock);
	srq->max_wr = a->max_wr;
	srq->max_sge = a->max_sge;
	srq->limit = a->srq_limit;
	return 0;
uncount:
	atomic_dec(&dev->num_srq);
unuser:
	srd_user_put(dev, srq->uc, SRD_UOBJ_SRQ);
	return -ENOMEM;
}

/**
 * srd_modify_srq() - the modify_srq verb: arm the limit
 * @ibsrq: the SRQ
 * @attr: the new limit (srq_limit)
 * @mask: IB_SRQ_LIMIT; IB_SRQ_MAX_WR (a resize) is not supported
 * @udata: user space's (its driver data empty), or NULL
 *
 * Context: process.
 * Return: 0, -EOPNOTSUPP for a resize or driver data, or -EINVAL for a
 * limit above the SRQ's size.
 */
int srd_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		   enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct srd_srq *srq = to_srd_srq(ibsrq);
	unsigned long flags;

	if ((udata && (udata->inlen || udata->outlen)) ||
	    (mask & ~IB_SRQ_LIMIT))
		return -EOPNOTSUPP;
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit > srq->max_wr)
		return -EINVAL;
	spin_lock_irqsave(&srq->lock, flags);
	srq->limit = attr->srq_limit;
	spin_unlock_irqrestore(&srq->lock, flags);
	return 0;
}

/**
 * srd_query_srq() - the query_srq verb
 * @ibsrq: the SRQ
 * @attr: filled with its size, SGEs and current limit
 *
 * Context: any.
 * Return: 0.
 */
int srd_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct srd_srq *srq = to_srd_srq(ibsrq);
	unsigned long flags;

	spin_lock_irqsave(&srq->lock, flags);
	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = srq->limit;
	spin_unlock_irqrestore(&srq->lock, flags);
	return 0;
}

/**
 * srd_destroy_srq() - the destroy_srq verb
 * @ibsrq: the SRQ, used by no QP (ib_core checks)
 * @udata: unused
 *
 * The receives still posted are dropped, without completions.
 *
 * Context: process.
 * Return: 0.
 */
int srd_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct srd_dev *dev = to_srd_dev(ibsrq->device);
	struct srd_srq *srq = to_srd_srq(ibsrq);

	kvfree(srq->rq);
	srd_user_put(dev, srq->uc, SRD_UOBJ_SRQ);
	atomic_dec(&dev->num_srq);
	return 0;
}

/* Queue one receive; 0, -EINVAL (too many SGEs) or -ENOMEM (full). */
static int srd_srq_queue(struct srd_srq *srq, const struct ib_recv_wr *wr)
{
	struct srd_rqe *rqe;
	unsigned long flags;
	int ret = 0;

	if (wr->num_sge < 0 || wr->num_sge > srq->max_sge)
		return -EINVAL;
	spin_lock_irqsave(&srq->lock, flags);
	if (srq->count == srq->max_wr) {
		ret = -ENOMEM;
	} else {
		rqe = &srq->rq[(srq->head + srq->count) % srq->max_wr];
		rqe->wr_id = wr->wr_id;
		rqe->num_sge = wr->num_sge;
		memcpy(rqe->sge, wr->sg_list, wr->num_sge * sizeof(*wr->sg_list));
		srq->count++;
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	return ret;
}

/**
 * srd_post_srq_recv() - the post_srq_recv verb
 * @ibsrq: the SRQ
 * @wr: the chain of receive work requests
 * @bad_wr: where the first refused one is reported
 *
 * The SGEs' keys are checked when a SEND lands in the receive, against
 * the PD of the QP that takes it (which is the SRQ's: srd_create_qp()).
 *
 * Context: any; no sleeping.
 * Return: 0, -EINVAL for too many SGEs, -ENOMEM if the SRQ is full.
 */
int srd_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr)
{
	struct srd_srq *srq = to_srd_srq(ibsrq);
	int ret;

	for (; wr; wr = wr->next) {
		ret = srd_srq_queue(srq, wr);
		if (ret) {
			*bad_wr = wr;
			return ret;
		}
	}
	return 0;
}
