// SPDX-License-Identifier: GPL-2.0
/*
 * scif_rdma: protection domains, completion queues and memory regions
 * (rdma.rst, "Verbs objects").  Objects for user space (with udata)
 * are refused: user verbs are not in this slice.
 */

#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "scif_rdma.h"

/* Take one of at most @max of a device's objects counted by @n. */
static bool srd_take(atomic_t *n, int max)
{
	return atomic_add_unless(n, 1, max);
}

/**
 * srd_alloc_pd() - the alloc_pd verb
 * @ibpd: the PD ib_core allocated
 * @udata: user data: refused
 *
 * Context: process.
 * Return: 0, -EOPNOTSUPP for a user PD, or -ENOMEM past SRD_MAX_PD.
 */
int srd_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct srd_dev *dev = to_srd_dev(ibpd->device);

	if (udata)
		return -EOPNOTSUPP;
	return srd_take(&dev->num_pd, SRD_MAX_PD) ? 0 : -ENOMEM;
}

/**
 * srd_dealloc_pd() - the dealloc_pd verb
 * @ibpd: the PD
 * @udata: unused (no user PDs)
 *
 * Context: process.
 * Return: 0.
 */
int srd_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_srd_dev(ibpd->device)->num_pd);
	return 0;
}

/**
 * srd_create_cq() - the create_cq verb
 * @ibcq: the CQ ib_core allocated
 * @attr: the size asked (cqe) and the completion vector
 * @udata: user data (6.1) or attributes (6.12): refused
 *
 * Context: process.
 * Return: 0, -EOPNOTSUPP for a user CQ, -EINVAL for a size or vector
 * out of bounds, or -ENOMEM.
 */
int srd_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		  SRD_CQ_UDATA_T *udata)
{
	struct srd_dev *dev = to_srd_dev(ibcq->device);
	struct srd_cq *cq = to_srd_cq(ibcq);

	if (udata)
		return -EOPNOTSUPP;
	if (attr->flags || !attr->cqe || attr->cqe > SRD_MAX_CQE ||
	    attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	if (!srd_take(&dev->num_cq, SRD_MAX_CQ))
		return -ENOMEM;
	cq->wc = kvcalloc(attr->cqe, sizeof(*cq->wc), GFP_KERNEL_ACCOUNT);
	if (!cq->wc) {
		atomic_dec(&dev->num_cq);
		return -ENOMEM;
	}
	spin_lock_init(&cq->lock);
	cq->size = attr->cqe;
	ibcq->cqe = attr->cqe;
	return 0;
}

/**
 * srd_destroy_cq() - the destroy_cq verb
 * @ibcq: the CQ, no QP using it any more (ib_core's usecnt)
 * @udata: unused
 *
 * Context: process.
 * Return: 0.
 */
int srd_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct srd_cq *cq = to_srd_cq(ibcq);

	kvfree(cq->wc);
	atomic_dec(&to_srd_dev(ibcq->device)->num_cq);
	return 0;
}

/**
 * srd_poll_cq() - the poll_cq verb: take the oldest completions
 * @ibcq: the CQ
 * @num_entries: room in @wc
 * @wc: where the completions go
 *
 * Context: any.
 * Return: the number of completions taken.
 */
int srd_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct srd_cq *cq = to_srd_cq(ibcq);
	unsigned long flags;
	int n = 0;

	spin_lock_irqsave(&cq->lock, flags);
	while (n < num_entries && cq->count) {
		wc[n++] = cq->wc[cq->head];
		cq->head = (cq->head + 1) % cq->size;
		cq->count--;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/**
 * srd_req_notify_cq() - the req_notify_cq verb: arm the CQ
 * @ibcq: the CQ
 * @flags: IB_CQ_SOLICITED or IB_CQ_NEXT_COMP, and maybe
 *	IB_CQ_REPORT_MISSED_EVENTS
 *
 * Context: any.
 * Return: 1 if IB_CQ_REPORT_MISSED_EVENTS was asked and completions are
 * waiting, else 0.
 */
int srd_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct srd_cq *cq = to_srd_cq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	cq->armed = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && cq->count)
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

/* Give @mr keys: index << 8, plus the key byte (0 at first). */
static int srd_mr_insert(struct srd_dev *dev, struct srd_mr *mr)
{
	u32 index;
	int err;

	if (!srd_take(&dev->num_mr, SRD_MAX_MR))
		return -ENOMEM;
	refcount_set(&mr->refs, 1);
	init_completion(&mr->gone);
	INIT_LIST_HEAD(&mr->maps);
	err = xa_alloc_cyclic(&dev->mrs, &index, mr,
			      XA_LIMIT(1, (1U << 24) - 1), &dev->next_mr,
			      GFP_KERNEL_ACCOUNT);
	if (err < 0) {
		atomic_dec(&dev->num_mr);
		return err;
	}
	mr->ibmr.lkey = index << 8;
	mr->ibmr.rkey = index << 8;
	mr->key = index << 8;
	return 0;
}

/**
 * srd_get_dma_mr() - the get_dma_mr verb: local access to all memory
 * @ibpd: the PD
 * @access: IB_ACCESS_*: only local write is granted
 *
 * Context: process.
 * Return: the MR, ERR_PTR(-EINVAL) if remote access was asked (a DMA MR
 * is never exposed to the peer), or ERR_PTR(-ENOMEM).
 */
struct ib_mr *srd_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct srd_dev *dev = to_srd_dev(ibpd->device);
	struct srd_mr *mr;
	int err;

	if (access & ~IB_ACCESS_LOCAL_WRITE)
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->dma = true;
	mr->valid = true;
	mr->access = access;
	err = srd_mr_insert(dev, mr);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/**
 * srd_reg_user_mr() - the reg_user_mr verb: not in this slice
 * @ibpd: unused
 * @start: unused
 * @length: unused
 * @virt: unused
 * @access: unused
 * @udata: unused
 *
 * Context: process.
 * Return: ERR_PTR(-EOPNOTSUPP).
 */
struct ib_mr *srd_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			      u64 virt, int access, struct ib_udata *udata)
{
	return ERR_PTR(-EOPNOTSUPP);
}

/**
 * srd_alloc_mr() - the alloc_mr verb: a fast-registration MR
 * @ibpd: the PD
 * @type: IB_MR_TYPE_MEM_REG only
 * @max_num_sg: pages the MR may map (at most SRD_MAX_FR_PAGES)
 *
 * Context: process.
 * Return: the MR (invalid until IB_WR_REG_MR), ERR_PTR(-EINVAL) for
 * another type or too many pages, or ERR_PTR(-ENOMEM).
 */
struct ib_mr *srd_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			   u32 max_num_sg)
{
	struct srd_dev *dev = to_srd_dev(ibpd->device);
	struct srd_mr *mr;
	int err = -ENOMEM;

	if (type != IB_MR_TYPE_MEM_REG || !max_num_sg ||
	    max_num_sg > SRD_MAX_FR_PAGES)
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->pages = kcalloc(max_num_sg, sizeof(*mr->pages), GFP_KERNEL_ACCOUNT);
	if (!mr->pages)
		goto free_mr;
	mr->max_pages = max_num_sg;
	err = srd_mr_insert(dev, mr);
	if (err)
		goto free_pages;
	return &mr->ibmr;
free_pages:
	kfree(mr->pages);
free_mr:
	kfree(mr);
	return ERR_PTR(err);
}

static int srd_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct srd_mr *mr = to_srd_mr(ibmr);

	if (mr->npages == mr->max_pages)
		return -ENOMEM;
	mr->pages[mr->npages++] = addr;
	return 0;
}

/**
 * srd_map_mr_sg() - the map_mr_sg verb: fill a fast-reg MR's page list
 * @ibmr: the MR (from srd_alloc_mr)
 * @sg: the scatterlist, mapped by ib_dma_map_sg (virtual addresses)
 * @sg_nents: entries in @sg
 * @sg_offset: the first byte's offset in @sg (may be NULL)
 *
 * Context: process or softirq; no sleeping.
 * Return: the number of entries mapped, or -EINVAL for a DMA MR.
 */
int srd_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		  unsigned int *sg_offset)
{
	struct srd_mr *mr = to_srd_mr(ibmr);

	if (mr->dma)
		return -EINVAL;
	mr->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, srd_set_page);
}

/**
 * srd_dereg_mr() - the dereg_mr verb
 * @ibmr: the MR
 * @udata: unused (no user MRs)
 *
 * Context: process.
 * Return: 0.
 */
int srd_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct srd_dev *dev = to_srd_dev(ibmr->device);
	struct srd_mr *mr = to_srd_mr(ibmr);

	xa_erase(&dev->mrs, ibmr->lkey >> 8);
	/*
	 * A peer's WRITE or READ in progress ends before the memory goes:
	 * its windows are closed (their RMAs done), then the frames'.
	 */
	srd_map_mr_close(dev, mr, true);
	srd_mr_put(mr);
	wait_for_completion(&mr->gone);
	/* A lookup that found it before the erase has let go of it too. */
	synchronize_rcu();
	atomic_dec(&dev->num_mr);
	kfree(mr->pages);
	kfree(mr);
	return 0;
}
