// SPDX-License-Identifier: GPL-2.0
/*
 * scif_rdma: user contexts, protection domains, completion queues and
 * memory regions (rdma.rst, "Verbs objects", "User verbs").  User
 * space's objects carry no driver data (the provider passes none).
 */

#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/iter.h>
#include <rdma/uverbs_ioctl.h>

#include "scif_rdma.h"

/* Take one of at most @max of a device's objects counted by @n. */
static bool srd_take(atomic_t *n, int max)
{
	return atomic_add_unless(n, 1, max);
}

/* User data the provider must not send: none in, none out. */
static bool srd_udata_bad(const struct ib_udata *udata)
{
	return udata && (udata->inlen || udata->outlen);
}

/**
 * srd_user_take() - count one more user-space object of a kind
 * @dev: the device
 * @uc: the user it is for, or NULL for a kernel object (not counted)
 * @kind: SRD_UOBJ_*
 * @max: the kind's device limit, of which user space gets its share
 *	and each user a part of that
 *
 * Context: any.
 * Return: true, or false if the user has its part or user space its
 * share already.
 */
bool srd_user_take(struct srd_dev *dev, struct srd_ucount *uc,
		   enum srd_uobj kind, int max)
{
	if (!uc)
		return true;
	if (!srd_take(&uc->objs[kind], SRD_USER_EACH(max)))
		return false;
	if (srd_take(&dev->user_objs[kind], SRD_USER_SHARE(max)))
		return true;
	atomic_dec(&uc->objs[kind]);
	return false;
}

/**
 * srd_user_put() - count one user-space object of a kind less
 * @dev: the device
 * @uc: the user it was counted to, or NULL (a kernel object)
 * @kind: SRD_UOBJ_*
 *
 * Context: any.
 */
void srd_user_put(struct srd_dev *dev, struct srd_ucount *uc,
		  enum srd_uobj kind)
{
	if (!uc)
		return;
	atomic_dec(&uc->objs[kind]);
	atomic_dec(&dev->user_objs[kind]);
}

/**
 * srd_udata_ucount() - the user a verb's caller counts to
 * @udata: the verb's user data, NULL for a kernel caller
 *
 * Context: process.
 * Return: the counts of the user whose context the call came through,
 * or NULL for a kernel caller.
 */
struct srd_ucount *srd_udata_ucount(struct ib_udata *udata)
{
	struct srd_ucontext *uctx;

	uctx = rdma_udata_to_drv_context(udata, struct srd_ucontext, ibuc);
	return uctx ? uctx->uc : NULL;
}

/* @uid's counts on @dev, made on its first context there. */
static struct srd_ucount *srd_ucount_get(struct srd_dev *dev, kuid_t uid)
{
	unsigned long idx = from_kuid(&init_user_ns, uid);
	struct srd_ucount *uc, *old;

	uc = xa_load(&dev->ucounts, idx);
	if (uc)
		return uc;
	uc = kzalloc(sizeof(*uc), GFP_KERNEL_ACCOUNT);
	if (!uc)
		return NULL;
	old = xa_cmpxchg(&dev->ucounts, idx, NULL, uc, GFP_KERNEL_ACCOUNT);
	if (!old)
		return uc;
	kfree(uc);	/* another context of the user got there first */
	return xa_is_err(old) ? NULL : old;
}

/**
 * srd_alloc_ucontext() - the alloc_ucontext verb: a user-space context
 * @ibuc: the context ib_core allocated
 * @udata: the provider's data: must be empty
 *
 * Its objects are counted to the caller's user (struct srd_ucount).
 *
 * Context: process.
 * Return: 0, -EINVAL for driver data (this ABI has none), or -ENOMEM.
 */
int srd_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct srd_ucontext *uctx = container_of(ibuc, struct srd_ucontext,
						 ibuc);

	if (srd_udata_bad(udata))
		return -EINVAL;
	uctx->uc = srd_ucount_get(to_srd_dev(ibuc->device), current_uid());
	return uctx->uc ? 0 : -ENOMEM;
}

/**
 * srd_dealloc_ucontext() - the dealloc_ucontext verb
 * @ibuc: the context; ib_core has destroyed its objects
 *
 * Context: process.
 */
void srd_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

/**
 * srd_alloc_pd() - the alloc_pd verb
 * @ibpd: the PD ib_core allocated
 * @udata: user space's (empty), or NULL for a kernel PD
 *
 * Context: process.
 * Return: 0, -EINVAL for driver data, or -ENOMEM past SRD_MAX_PD or
 * user space's share of it or the user's part of that.
 */
int srd_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct srd_dev *dev = to_srd_dev(ibpd->device);
	struct srd_pd *pd = container_of(ibpd, struct srd_pd, ibpd);
	struct srd_ucount *uc = srd_udata_ucount(udata);

	if (srd_udata_bad(udata))
		return -EINVAL;
	if (!srd_user_take(dev, uc, SRD_UOBJ_PD, SRD_MAX_PD))
		return -ENOMEM;
	if (!srd_take(&dev->num_pd, SRD_MAX_PD)) {
		srd_user_put(dev, uc, SRD_UOBJ_PD);
		return -ENOMEM;
	}
	pd->uc = uc;
	return 0;
}

/**
 * srd_dealloc_pd() - the dealloc_pd verb
 * @ibpd: the PD
 * @udata: unused
 *
 * Context: process.
 * Return: 0.
 */
int srd_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct srd_dev *dev = to_srd_dev(ibpd->device);

	srd_user_put(dev, container_of(ibpd, struct srd_pd, ibpd)->uc,
		     SRD_UOBJ_PD);
	atomic_dec(&dev->num_pd);
	return 0;
}

/*
 * Count @n more entries of user CQs to @uc and its device: false past
 * the user's part or user space's budget (nothing counted then).
 */
static bool srd_cqes_take(struct srd_dev *dev, struct srd_ucount *uc, int n)
{
	if (!uc)
		return true;
	if (atomic_add_return(n, &uc->cqes) > SRD_USER_CQES_EACH)
		goto user;
	if (atomic_add_return(n, &dev->user_cqes) <= SRD_USER_CQES)
		return true;
	atomic_sub(n, &dev->user_cqes);
user:
	atomic_sub(n, &uc->cqes);
	return false;
}

static void srd_cqes_put(struct srd_dev *dev, struct srd_ucount *uc, int n)
{
	if (!uc)
		return;
	atomic_sub(n, &uc->cqes);
	atomic_sub(n, &dev->user_cqes);
}

/* The user data of a create_cq: NULL for a kernel CQ. */
static struct ib_udata *srd_cq_udata(SRD_CQ_UDATA_T *udata)
{
#ifdef SRD_HAVE_CQ_ATTRS
	return udata ? &udata->driver_udata : NULL;
#else
	return udata;
#endif
}

/**
 * srd_create_cq() - the create_cq verb
 * @ibcq: the CQ ib_core allocated
 * @attr: the size asked (cqe) and the completion vector
 * @udata: user data (6.1) or attributes (6.12): NULL for a kernel CQ;
 *	a user CQ's driver data is nothing, or a request for a mapped CQ
 *	(<rdma/scif_rdma_abi.h>) with room for its response
 *
 * Context: process.
 * Return: 0, -EINVAL for a size or vector out of bounds or driver data
 * that is neither, -EFAULT if the response cannot be written, or -ENOMEM
 * (past SRD_MAX_CQ, user space's share of it or the user's part of that,
 * or past user space's entries: SRD_USER_CQES in all, SRD_USER_CQES_EACH
 * for one user).
 */
int srd_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		  SRD_CQ_UDATA_T *udata)
{
	struct srd_dev *dev = to_srd_dev(ibcq->device);
	struct srd_cq *cq = to_srd_cq(ibcq);
	struct ib_udata *ud = srd_cq_udata(udata);
	struct srd_ucount *uc = srd_udata_ucount(ud);
	int err = -ENOMEM;

	if (attr->flags || !attr->cqe || attr->cqe > SRD_MAX_CQE ||
	    attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	if (!srd_user_take(dev, uc, SRD_UOBJ_CQ, SRD_MAX_CQ))
		return -ENOMEM;
	if (!srd_cqes_take(dev, uc, attr->cqe))
		goto unuser;
	if (!srd_take(&dev->num_cq, SRD_MAX_CQ))
		goto uncqes;
	spin_lock_init(&cq->lock);
	mutex_init(&cq->rxp_mutex);
	INIT_LIST_HEAD(&cq->rxp_qps);
	cq->size = attr->cqe;
	cq->uc = uc;
	err = srd_ucq_create(cq, ud);
	if (err < 0)
		goto uncount;
	if (!err) {
		err = -ENOMEM;
		cq->wc = kvcalloc(attr->cqe, sizeof(*cq->wc),
				  GFP_KERNEL_ACCOUNT);
		if (!cq->wc)
			goto uncount;
	}
	ibcq->cqe = attr->cqe;
	return 0;
uncount:
	atomic_dec(&dev->num_cq);
uncqes:
	srd_cqes_put(dev, uc, attr->cqe);
unuser:
	srd_user_put(dev, uc, SRD_UOBJ_CQ);
	return err;
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
	struct srd_dev *dev = to_srd_dev(ibcq->device);
	struct srd_cq *cq = to_srd_cq(ibcq);

	kvfree(cq->wc);
	srd_ucq_destroy(cq);
	srd_cqes_put(dev, cq->uc, cq->size);
	srd_user_put(dev, cq->uc, SRD_UOBJ_CQ);
	atomic_dec(&dev->num_cq);
	return 0;
}

/**
 * srd_poll_cq() - the poll_cq verb: take the oldest completions
 * @ibcq: the CQ
 * @num_entries: room in @wc
 * @wc: where the completions go
 *
 * A mapped CQ is polled by its process, in its ring, not by this verb:
 * for it, the verb (uverbs' poll_cq) takes in what has arrived for the
 * CQ's QPs, whose completions then are in the ring (scif_rdma_rxpoll.c).
 *
 * Context: any; process for a mapped CQ.
 * Return: the number of completions taken (always 0 for a mapped CQ).
 */
int srd_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct srd_cq *cq = to_srd_cq(ibcq);
	unsigned long flags;
	int n = 0;

	if (cq->umap) {
		srd_rxp_poll_cq(cq);
		return 0;
	}
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
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    (cq->umap ? srd_ucq_pending(cq) : cq->count))
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

/* Pin a user MR's memory and list its pages. */
static int srd_mr_pin(struct srd_mr *mr, struct ib_pd *ibpd, u64 start,
		      u64 length, int access)
{
	struct ib_block_iter biter;
	size_t n;

	mr->umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem))
		return PTR_ERR(mr->umem);
	n = ib_umem_num_dma_blocks(mr->umem, PAGE_SIZE);
	mr->pages = kvcalloc(n, sizeof(*mr->pages), GFP_KERNEL_ACCOUNT);
	if (!mr->pages) {
		ib_umem_release(mr->umem);
		return -ENOMEM;
	}
	/* Virtual DMA: a block's DMA address is its kernel address. */
	rdma_umem_for_each_dma_block(mr->umem, &biter, PAGE_SIZE)
		mr->pages[mr->npages++] = rdma_block_iter_dma_address(&biter);
	mr->max_pages = mr->npages;
	return 0;
}

/*
 * A user MR's beginning, for both kinds: its rights checked, a slot of
 * the MR budgets taken, the MR allocated with its address, length and
 * rights; srd_user_mr_free() undoes it.  Optional rights (relaxed
 * ordering) are hints a device may ignore, and remote atomics can never
 * be used here (atomic_cap is IB_ATOMIC_NONE: a peer's atomic request is
 * an unknown opcode); libfabric's verbs provider asks for them with
 * remote write.  So both are dropped, and any other right is refused.
 */
static struct srd_mr *srd_user_mr_new(struct srd_dev *dev,
				      struct srd_ucount *uc, int access,
				      u64 virt, u64 length)
{
	struct srd_mr *mr;

	access &= ~(IB_ACCESS_OPTIONAL | IB_ACCESS_REMOTE_ATOMIC);
	if (access & ~(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		       IB_ACCESS_REMOTE_READ))
		return ERR_PTR(-EOPNOTSUPP);
	if (!srd_user_take(dev, uc, SRD_UOBJ_MR, SRD_MAX_MR))
		return ERR_PTR(-ENOMEM);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr) {
		srd_user_put(dev, uc, SRD_UOBJ_MR);
		return ERR_PTR(-ENOMEM);
	}
	mr->uc = uc;
	mr->ibmr.page_size = PAGE_SIZE;
	mr->ibmr.iova = virt;
	mr->ibmr.length = length;
	mr->iova = virt;
	mr->length = length;
	mr->access = access;
	return mr;
}

/* Undo srd_user_mr_new() for an MR that never got into the table. */
static void srd_user_mr_free(struct srd_dev *dev, struct srd_mr *mr)
{
	struct srd_ucount *uc = mr->uc;

	kfree(mr);
	srd_user_put(dev, uc, SRD_UOBJ_MR);
}

/**
 * srd_reg_user_mr() - the reg_user_mr verb: an MR over user memory
 * @ibpd: the PD (user space's)
 * @start: the memory's first byte in the caller's address space
 * @length: its bytes (at most SRD_MAX_MSG)
 * @virt: the address work requests and peers name its first byte by
 * @access: IB_ACCESS_LOCAL_WRITE, _REMOTE_WRITE, _REMOTE_READ, and
 *	_REMOTE_ATOMIC or any of the optional ones (ignored)
 * @udata: the provider's data: must be empty
 *
 * The pages are pinned (ib_umem_get charges them to the caller's
 * RLIMIT_MEMLOCK) until dereg_mr.
 *
 * Context: process.
 * Return: the MR, ERR_PTR(-EINVAL) for a length out of bounds, @virt at
 * another offset in its page than @start, or driver data,
 * ERR_PTR(-EOPNOTSUPP) for another access right, ERR_PTR(-ENOMEM) past
 * SRD_MAX_MR, user space's share of it or the user's part of that, or
 * ib_umem_get's error.
 */
struct ib_mr *srd_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			      u64 virt, int access, struct ib_udata *udata)
{
	struct srd_dev *dev = to_srd_dev(ibpd->device);
	struct srd_ucount *uc = srd_udata_ucount(udata);
	struct srd_mr *mr;
	int err;

	/*
	 * ib_core checks it too: @virt lies where @start does in its page,
	 * so that the page list maps @virt's iova space as it maps @start.
	 */
	if (srd_udata_bad(udata) || !length || length > SRD_MAX_MSG ||
	    ((start ^ virt) & ~PAGE_MASK))
		return ERR_PTR(-EINVAL);
	mr = srd_user_mr_new(dev, uc, access, virt, length);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	err = srd_mr_pin(mr, ibpd, start, length, mr->access);
	if (err)
		goto free_mr;
	mr->valid = true;
	err = srd_mr_insert(dev, mr);
	if (err)
		goto unpin;
	return &mr->ibmr;
unpin:
	kvfree(mr->pages);
	ib_umem_release(mr->umem);
free_mr:
	srd_user_mr_free(dev, mr);
	return ERR_PTR(err);
}

static struct ib_udata *srd_mr_udata(SRD_MR_UDATA_T *udata)
{
#ifdef SRD_HAVE_MR_DMABUF_ATTRS
	return udata ? &udata->driver_udata : NULL;
#else
	return udata;
#endif
}

/**
 * srd_reg_user_mr_dmabuf() - the reg_user_mr_dmabuf verb: an MR over a
 *	SCIF dma-buf of this node's windows
 * @ibpd: the PD (user space's)
 * @offset: the MR's first byte in the dma-buf, page aligned
 * @length: its bytes, page aligned, at most SRD_MAP_SLOT
 * @virt: the address work requests and peers name its first byte by,
 *	page aligned
 * @fd: the dma-buf (SCIF_DMABUF_EXPORT of a local range)
 * @access: as reg_user_mr's
 * @udata: the provider's data: must be empty
 *
 * The MR is reached only by the peers' direct RDMA WRITEs and READs,
 * through windows over the dma-buf's pages (scif_rdma_dmabuf.c); it
 * becomes invalid when the dma-buf is revoked.
 *
 * Context: process.
 * Return: the MR, ERR_PTR(-EINVAL) for an offset, length or @virt out of
 * bounds or not page aligned, or driver data, ERR_PTR(-EOPNOTSUPP) for
 * another access right, another exporter's dma-buf or a range of the
 * peer's windows, ERR_PTR(-ENOMEM) past the MR budgets, or the errors of
 * srd_dbuf_get().
 */
struct ib_mr *srd_reg_user_mr_dmabuf(struct ib_pd *ibpd, u64 offset,
				     u64 length, u64 virt, int fd, int access,
				     SRD_MR_UDATA_T *udata)
{
	struct srd_dev *dev = to_srd_dev(ibpd->device);
	struct ib_udata *ud = srd_mr_udata(udata);
	struct srd_ucount *uc = srd_udata_ucount(ud);
	struct srd_mr *mr;
	int err;

	if (srd_udata_bad(ud) || !length || length > SRD_MAP_SLOT ||
	    !PAGE_ALIGNED(offset) || !PAGE_ALIGNED(length) ||
	    !PAGE_ALIGNED(virt))
		return ERR_PTR(-EINVAL);
	mr = srd_user_mr_new(dev, uc, access, virt, length);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	/* move_notify may close windows before the MR is in the table. */
	INIT_LIST_HEAD(&mr->maps);
	err = srd_dbuf_get(dev, mr, fd, offset, length, mr->access);
	if (err)
		goto free_mr;
	err = srd_mr_insert(dev, mr);
	if (err)
		goto put;
	return &mr->ibmr;
put:
	srd_dbuf_put(mr);
free_mr:
	srd_user_mr_free(dev, mr);
	return ERR_PTR(err);
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

	if (!srd_mr_fast_reg(mr))
		return -EINVAL;
	mr->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, srd_set_page);
}

/**
 * srd_dereg_mr() - the dereg_mr verb
 * @ibmr: the MR
 * @udata: unused
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
	if (mr->kmap)
		vunmap(mr->kmap);
	if (mr->umem) {
		ib_umem_release(mr->umem);
		srd_user_put(dev, mr->uc, SRD_UOBJ_MR);
	}
	if (mr->dbuf) {
		srd_dbuf_put(mr);
		srd_user_put(dev, mr->uc, SRD_UOBJ_MR);
	}
	kvfree(mr->pages);
	kfree(mr);
	return 0;
}
