// SPDX-License-Identifier: GPL-2.0
/*
 * scif_rdma: mapped QPs (rdma.rst, "WRITEs and READs without a system
 * call").
 *
 * A user QP created with SCIF_RDMA_QP_MAPPED (<rdma/scif_rdma_abi.h>)
 * has an info page the process maps read-only: the QP's state, how many
 * of its send work requests the kernel holds, and the peer's keys whose
 * windows the QP knows (a copy of the requester's key cache, @rkeys,
 * each entry under a sequence count).  The process may map the window of
 * such a key (srd_uqp_mmap_win(), through scif_mmap_vma() with a status
 * page) and, while the kernel holds none of the QP's work requests, do a
 * WRITE or READ within the key itself, by storing into or loading from
 * the mapping: the bytes go to the peer's MR as the kernel's own direct
 * RMA would take them, with nothing of either kernel.
 *
 * The kernel trusts nothing of this: the page is read-only to the
 * process and written here only; a window is mapped only for the QP's
 * own context, for an entry as it is now, with the protection the
 * responder gave the window, and the window's revocation by the
 * responder (dereg_mr, invalidation, the connection's end, the node's
 * loss) takes the pages out of the process before the responder reuses
 * them (scif_mmap_vma()).
 */

#include <linux/mm.h>
#include <linux/scif.h>
#include <rdma/ib_verbs.h>
#include <rdma/scif_rdma_abi.h>
#include <rdma/uverbs_ioctl.h>

#include "scif_rdma.h"

static_assert(SRD_MAP_CACHE == SCIF_RDMA_QP_KEYS);
/* SCIF_RDMA_WIN_OFFSET() counts pages of 4 KiB. */
static_assert(PAGE_SHIFT == 12);
static_assert(sizeof(struct scif_rdma_qp_info) <= PAGE_SIZE);

/* The fields of a window's mmap offset (SCIF_RDMA_WIN_OFFSET()), in pages. */
#define SRD_UQP_PG_QPN(pg)	(((pg) >> 25) & 0xffffff)
#define SRD_UQP_PG_IDX(pg)	(((pg) >> 21) & 0xf)
#define SRD_UQP_PG_SEQ(pg)	((pg) & 0x1fffff)

static struct scif_rdma_qp_info *srd_uqp_info(struct srd_qp *qp)
{
	return srd_umap_buf(qp->uinfo);
}

/**
 * srd_uqp_create() - give a user QP its info page, if its creator asked
 * @qp: the QP being created (its lock set up, not yet numbered)
 * @udata: the create_qp's driver data (NULL for a kernel QP)
 *
 * Context: process.
 * Return: 0 (mapped or not, as asked), -EINVAL for driver data that is
 * neither nothing nor a mapping request with room for the response,
 * -ENOMEM, or -EFAULT.
 */
int srd_uqp_create(struct srd_qp *qp, struct ib_udata *udata)
{
	struct scif_rdma_create_qp_resp resp = {};
	unsigned long flags;
	struct srd_umap *m;
	int err;

	mutex_init(&qp->umap_mutex);
	if (udata)
		qp->uctx = rdma_udata_to_drv_context(udata, struct srd_ucontext,
						     ibuc);
	err = srd_umap_asked(udata, SCIF_RDMA_QP_MAPPED, sizeof(resp));
	if (err <= 0)
		return err;
	m = srd_umap_new(qp->uctx, PAGE_SIZE, true, &resp.info_offset);
	if (IS_ERR(m))
		return PTR_ERR(m);
	resp.info_bytes = PAGE_SIZE;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err) {
		srd_umap_remove(m);
		return err;
	}
	qp->uinfo = m;
	spin_lock_irqsave(&qp->lock, flags);
	srd_uqp_state(qp);
	spin_unlock_irqrestore(&qp->lock, flags);
	return 0;
}

/**
 * srd_uqp_destroy() - let go of a QP's info page
 * @qp: the QP, whose threads have ended
 *
 * Context: process.
 */
void srd_uqp_destroy(struct srd_qp *qp)
{
	if (qp->uinfo)
		srd_umap_remove(qp->uinfo);
	qp->uinfo = NULL;
}

/**
 * srd_uqp_key() - show the process entry @idx of the QP's key cache
 * @qp: the QP
 * @idx: the entry of @qp->rkeys just written (or cleared)
 *
 * Only a key with a window is shown; anything else is an empty entry.
 *
 * Context: process (the send worker, a poster, the connection's start),
 * under @qp->sq_mutex or before the QP's threads run; takes @qp->lock.
 */
void srd_uqp_key(struct srd_qp *qp, u32 idx)
{
	const struct srd_rkey *rk = &qp->rkeys[idx];
	struct scif_rdma_qp_key *k;
	unsigned long flags;
	u32 seq;

	if (!qp->uinfo)
		return;
	k = &srd_uqp_info(qp)->keys[idx];
	spin_lock_irqsave(&qp->lock, flags);
	seq = k->seq;
	WRITE_ONCE(k->seq, seq + 1);
	/* The odd count is seen before the fields change. */
	smp_wmb();
	WRITE_ONCE(k->rkey, rk->direct ? rk->key : 0);
	WRITE_ONCE(k->access, rk->direct ? rk->access : 0);
	WRITE_ONCE(k->iova, rk->direct ? rk->iova : 0);
	WRITE_ONCE(k->length, rk->direct ? rk->len : 0);
	qp->ukey_off[idx] = rk->direct ? rk->off : 0;
	/* The fields are seen before the even count that closes them. */
	smp_store_release(&k->seq, seq + 2);
	spin_unlock_irqrestore(&qp->lock, flags);
}

/**
 * srd_uqp_state() - show the process the QP's state and its send queue
 * @qp: the QP
 *
 * Called after @qp->state or @qp->sq_count changed.  The count is
 * published after the completions of the work requests it no longer
 * counts are in the CQ.
 *
 * Context: any, under @qp->lock.
 */
void srd_uqp_state(struct srd_qp *qp)
{
	struct scif_rdma_qp_info *info;

	lockdep_assert_held(&qp->lock);
	if (!qp->uinfo)
		return;
	info = srd_uqp_info(qp);
	WRITE_ONCE(info->state, qp->state);
	/* Release: the completions it no longer counts are seen first. */
	smp_store_release(&info->sq_pending, qp->sq_count);
}

/**
 * srd_uqp_connect() - processes may map windows of the QP's connection
 * @qp: the QP
 * @epd: its connected endpoint, before its receive thread starts
 *
 * Context: process.
 */
void srd_uqp_connect(struct srd_qp *qp, scif_epd_t epd)
{
	mutex_lock(&qp->umap_mutex);
	qp->umap_epd = epd;
	mutex_unlock(&qp->umap_mutex);
}

/**
 * srd_uqp_disconnect() - no new mapping of the QP's connection
 * @qp: the QP, whose endpoint is about to be closed
 *
 * Mappings made stay until the endpoint's closing revokes them.
 *
 * Context: process (the receive thread).
 */
void srd_uqp_disconnect(struct srd_qp *qp)
{
	mutex_lock(&qp->umap_mutex);
	qp->umap_epd = NULL;
	mutex_unlock(&qp->umap_mutex);
}

/**
 * srd_uqp_mmap_win() - map the window of one of the QP's keys
 * @qp: the QP, of the caller's context, held by the caller
 * @vma: the mapping: at SCIF_RDMA_WIN_OFFSET() of the entry as it is
 *	now, as long as the window and one page more (the status page)
 *
 * Context: process, under mmap_lock (write).
 * Return: 0; -EINVAL (not a mapped QP, an entry empty or rewritten, a
 * wrong length, a private mapping); -ENOTCONN (the connection is
 * ending); scif_mmap_vma()'s errors (-EACCES for more access than the
 * window allows).
 */
int srd_uqp_mmap_win(struct srd_qp *qp, struct vm_area_struct *vma)
{
	u32 idx = SRD_UQP_PG_IDX(vma->vm_pgoff);
	const struct scif_rdma_qp_key *k;
	unsigned long flags;
	u64 off = 0, len = 0;
	int err;

	if (!qp->uinfo)
		return -EINVAL;
	k = &srd_uqp_info(qp)->keys[idx];
	spin_lock_irqsave(&qp->lock, flags);
	if ((k->seq & 0x1fffff) == SRD_UQP_PG_SEQ(vma->vm_pgoff) && k->rkey) {
		off = qp->ukey_off[idx];
		len = k->length;
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	if (!len || vma->vm_end - vma->vm_start != len + PAGE_SIZE)
		return -EINVAL;
	mutex_lock(&qp->umap_mutex);
	err = -ENOTCONN;
	if (qp->umap_epd)
		err = scif_mmap_vma(qp->umap_epd, off, vma, SCIF_MMAP_STATUS);
	mutex_unlock(&qp->umap_mutex);
	if (!err)
		srd_stat_add(qp->dev, SRD_STAT_USER_WIN_MAPS, 1);
	return err;
}

/**
 * srd_uqp_mmap_qpn() - the QP number an mmap offset names, if any
 * @pgoff: the mapping's first page
 * @qpn: receives the QP number of a window's offset
 *
 * Context: any.
 * Return: true if @pgoff is a window's offset (SCIF_RDMA_WIN_OFFSET()).
 */
bool srd_uqp_mmap_qpn(unsigned long pgoff, u32 *qpn)
{
	if (!(pgoff & SCIF_RDMA_WIN_TAG))
		return false;
	*qpn = SRD_UQP_PG_QPN(pgoff);
	return true;
}
