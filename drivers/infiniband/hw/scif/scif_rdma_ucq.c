// SPDX-License-Identifier: GPL-2.0
/*
 * scif_rdma: mapped CQs (rdma.rst, "Completions without a system call").
 *
 * A user CQ created with SCIF_RDMA_CQ_MAPPED (<rdma/scif_rdma_abi.h>)
 * keeps its completions in a ring the process maps from the uverbs file
 * and polls itself: the kernel writes an entry, then the ring's tail;
 * the process reads entries up to the tail, then writes the head.  The
 * kernel counts what it wrote in the CQ (srd_cq.tail) and reads only the
 * head from the ring, once per completion, as a hostile value: a head
 * that would leave no room, or more entries than the ring holds (one
 * ahead of the tail, say), is a full ring, and the CQ overruns as any
 * CQ whose consumer does not keep up (IB_EVENT_CQ_ERR, its QPs in
 * error).  Only that process's CQ is affected.
 *
 * Memory and lifetime.  The ring is vmalloc'd zeroed in whole pages and
 * charged to the creator's memory cgroup; its entries are counted in the
 * user's CQE budget as any CQ's.  The ring belongs to the CQ's mmap entry
 * (struct srd_umap, which a mapped QP's info page uses too), which
 * ib_core frees (srd_umap_mmap_free()) once the CQ removed it and no
 * mmap() is at work on it; the pages a process mapped stay referenced by
 * its mapping until it goes.
 */

#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>
#include <rdma/scif_rdma_abi.h>
#include <rdma/uverbs_ioctl.h>

#include "scif_rdma.h"

static_assert(sizeof(struct scif_rdma_cqe) == 48);
static_assert(offsetof(struct scif_rdma_cq_ring, cqe) == 128);

/**
 * struct srd_umap - zeroed pages a process maps, as an mmap entry of its
 *	context: a mapped CQ's ring, a mapped QP's info page
 * @rdma: ib_core's part
 * @buf: the pages (vmalloc'd)
 * @bytes: their size, whole pages
 * @ro: mapped read-only (the kernel trusts what it wrote there)
 */
struct srd_umap {
	struct rdma_user_mmap_entry rdma;
	void *buf;
	size_t bytes;
	bool ro;
};

/**
 * srd_umap_new() - zeroed pages for a process to map
 * @uctx: the process's context
 * @bytes: how many (rounded up to whole pages)
 * @ro: to be mapped read-only
 * @offset: receives their mmap offset in the uverbs file
 *
 * Context: process.
 * Return: the entry, or an ERR_PTR() (-ENOMEM, or the entry's insertion
 * error).
 */
struct srd_umap *srd_umap_new(struct srd_ucontext *uctx, size_t bytes,
			      bool ro, u64 *offset)
{
	struct srd_umap *m;
	int err = -ENOMEM;

	m = kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m)
		return ERR_PTR(-ENOMEM);
	m->bytes = PAGE_ALIGN(bytes);
	m->ro = ro;
	m->buf = __vmalloc(m->bytes, GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!m->buf)
		goto free;
	err = rdma_user_mmap_entry_insert(&uctx->ibuc, &m->rdma, m->bytes);
	if (err)
		goto unbuf;
	*offset = rdma_user_mmap_get_offset(&m->rdma);
	return m;
unbuf:
	vfree(m->buf);
free:
	kfree(m);
	return ERR_PTR(err);
}

/**
 * srd_umap_buf() - the kernel's address of an entry's pages
 * @m: the entry
 *
 * Context: any.
 * Return: the pages' address.
 */
void *srd_umap_buf(struct srd_umap *m)
{
	return m->buf;
}

/**
 * srd_umap_remove() - no new mapping of an entry's pages
 * @m: the entry; those mapped keep its pages, freed after the last goes
 *
 * Context: process.
 */
void srd_umap_remove(struct srd_umap *m)
{
	rdma_user_mmap_entry_remove(&m->rdma);
}

/* The ring of a mapped CQ. */
static struct scif_rdma_cq_ring *srd_ucq_ring(struct srd_cq *cq)
{
	return cq->umap->buf;
}

/* Both mapping requests are a word of flags. */
static_assert(sizeof(struct scif_rdma_create_cq) == sizeof(u64));
static_assert(sizeof(struct scif_rdma_create_qp) == sizeof(u64));

/**
 * srd_umap_asked() - whether a create command's driver data asks for a
 *	mapping
 * @udata: the driver data (NULL for a kernel object)
 * @want: the one flag a request may carry (SCIF_RDMA_CQ_MAPPED, ...)
 * @resp_len: the bytes of the answer, for which there must be room
 *
 * Context: process.
 * Return: 1 if asked, 0 if there is no driver data, -EINVAL for driver
 * data that is anything else.
 */
int srd_umap_asked(struct ib_udata *udata, u64 want, size_t resp_len)
{
	u64 flags;

	if (!udata || (!udata->inlen && !udata->outlen))
		return 0;
	if (udata->inlen != sizeof(flags) ||
	    ib_copy_from_udata(&flags, udata, sizeof(flags)) ||
	    flags != want || udata->outlen < resp_len)
		return -EINVAL;
	return 1;
}

/**
 * srd_ucq_create() - make a user CQ mapped, if its creator asked
 * @cq: the CQ, its @size and @uc set
 * @udata: the create_cq's driver data (NULL for a kernel CQ)
 *
 * Context: process.
 * Return: 1 if @cq is now mapped (the response written), 0 if it was not
 * asked to be, -EINVAL for driver data that is neither nothing nor a
 * mapping request with room for the response, -ENOMEM, or -EFAULT.
 */
int srd_ucq_create(struct srd_cq *cq, struct ib_udata *udata)
{
	struct srd_ucontext *uctx;
	struct scif_rdma_create_cq_resp resp = {};
	struct scif_rdma_cq_ring *ring;
	struct srd_umap *m;
	int err;

	err = srd_umap_asked(udata, SCIF_RDMA_CQ_MAPPED, sizeof(resp));
	if (err <= 0)
		return err;
	uctx = rdma_udata_to_drv_context(udata, struct srd_ucontext, ibuc);
	m = srd_umap_new(uctx, struct_size(ring, cqe, cq->size), false,
			 &resp.mmap_offset);
	if (IS_ERR(m))
		return PTR_ERR(m);
	resp.entries = cq->size;
	resp.ring_bytes = m->bytes;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err) {
		/* The entry frees the ring (srd_umap_mmap_free()). */
		srd_umap_remove(m);
		return err;
	}
	cq->umap = m;
	return 1;
}

/**
 * srd_ucq_destroy() - let go of a CQ's ring
 * @cq: the CQ, mapped or not, which no QP uses any more
 *
 * No new mapping of the ring can be made; those made keep its pages.
 *
 * Context: process.
 */
void srd_ucq_destroy(struct srd_cq *cq)
{
	if (cq->umap)
		srd_umap_remove(cq->umap);
	cq->umap = NULL;
}

/* Entries in the ring, as the head the process wrote says: may be bogus. */
static u32 srd_ucq_used(struct srd_cq *cq)
{
	/*
	 * Pairs with the process's release of the head: it read the
	 * entries before it moved the head past them, so they are not
	 * written again before it did.
	 */
	return cq->tail - smp_load_acquire(&srd_ucq_ring(cq)->head);
}

/**
 * srd_ucq_store() - write a completion into a mapped CQ's ring
 * @cq: the mapped CQ
 * @wc: the completion
 *
 * Context: any, under @cq's lock.
 * Return: true, or false if the ring is full (or its head is bogus).
 */
bool srd_ucq_store(struct srd_cq *cq, const struct ib_wc *wc)
{
	struct scif_rdma_cq_ring *ring = srd_ucq_ring(cq);
	struct scif_rdma_cqe *e;

	lockdep_assert_held(&cq->lock);
	if (srd_ucq_used(cq) >= cq->size)
		return false;
	e = &ring->cqe[cq->tail % cq->size];
	*e = (struct scif_rdma_cqe){
		.wr_id = wc->wr_id,
		.status = wc->status,
		.opcode = wc->opcode,
		.vendor_err = wc->vendor_err,
		.byte_len = wc->byte_len,
		.imm_data = (__force u32)wc->ex.imm_data,
		.qp_num = wc->qp->qp_num,
		.src_qp = wc->src_qp,
		.wc_flags = wc->wc_flags,
		.pkey_index = wc->pkey_index,
		.slid = ib_lid_cpu16(wc->slid),
		.sl = wc->sl,
		.dlid_path_bits = wc->dlid_path_bits,
		.port_num = wc->port_num,
	};
	/* The entry is seen before the tail that covers it. */
	smp_store_release(&ring->tail, ++cq->tail);
	return true;
}

/**
 * srd_ucq_pending() - whether a mapped CQ's ring holds completions
 * @cq: the mapped CQ
 *
 * Context: any, under @cq's lock.
 * Return: true if the process has not taken every completion written
 * (or its head is bogus).
 */
bool srd_ucq_pending(struct srd_cq *cq)
{
	lockdep_assert_held(&cq->lock);
	return srd_ucq_used(cq) != 0;
}

/**
 * srd_umap_mmap() - map an entry's pages (a CQ's ring, a QP's info page)
 * @ibuc: the context whose uverbs file is mapped
 * @vma: the mapping: shared, not executable, not writable for a
 *	read-only entry, the entry's whole size at the offset it was given
 *
 * Context: process, under mmap_lock (write).
 * Return: 0, -EINVAL for an offset or size that is no entry's or a
 * mapping that is private, executable or writes a read-only entry, or
 * vm_insert_page()'s error.
 */
int srd_umap_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma;
	struct srd_umap *m;
	unsigned long off;
	int err = 0;

	if (!(vma->vm_flags & VM_SHARED) || (vma->vm_flags & VM_EXEC))
		return -EINVAL;
	rdma = rdma_user_mmap_entry_get(ibuc, vma);
	if (!rdma)
		return -EINVAL;
	m = container_of(rdma, struct srd_umap, rdma);
	if (m->ro && (vma->vm_flags & VM_WRITE))
		err = -EINVAL;
	else if (m->ro)
		srd_vm_flags_clear(vma, VM_MAYWRITE);
	for (off = 0; off < m->bytes && !err; off += PAGE_SIZE)
		err = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page((u8 *)m->buf + off));
	rdma_user_mmap_entry_put(rdma);
	return err;
}

/**
 * srd_umap_mmap_free() - the mmap_free verb: free an entry's pages
 * @entry: the mmap entry, removed and no longer referenced
 *
 * Context: process.
 */
void srd_umap_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct srd_umap *m = container_of(entry, struct srd_umap, rdma);

	vfree(m->buf);
	kfree(m);
}
