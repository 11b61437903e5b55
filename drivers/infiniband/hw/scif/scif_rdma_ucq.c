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
 * (struct srd_ucq_map), which ib_core frees (srd_ucq_mmap_free()) once the
 * CQ removed it and no mmap() is at work on it; the pages a process
 * mapped stay referenced by its mapping until it goes.
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
 * struct srd_ucq_map - a mapped CQ's ring, as an mmap entry of its context
 * @rdma: ib_core's part
 * @ring: the ring (vmalloc'd)
 * @bytes: its size, whole pages
 */
struct srd_ucq_map {
	struct rdma_user_mmap_entry rdma;
	struct scif_rdma_cq_ring *ring;
	size_t bytes;
};

/* The driver data of a create_cq: 0 and its flags, or an errno. */
static int srd_ucq_flags(struct ib_udata *udata, u64 *flags)
{
	struct scif_rdma_create_cq cmd = {};

	*flags = 0;
	if (!udata || (!udata->inlen && !udata->outlen))
		return 0;
	if (udata->inlen != sizeof(cmd) ||
	    ib_copy_from_udata(&cmd, udata, sizeof(cmd)))
		return -EINVAL;
	if (cmd.flags != SCIF_RDMA_CQ_MAPPED ||
	    udata->outlen < sizeof(struct scif_rdma_create_cq_resp))
		return -EINVAL;
	*flags = cmd.flags;
	return 0;
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
	struct srd_ucq_map *m;
	u64 flags;
	int err;

	err = srd_ucq_flags(udata, &flags);
	if (err || !flags)
		return err;
	uctx = rdma_udata_to_drv_context(udata, struct srd_ucontext, ibuc);
	m = kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m)
		return -ENOMEM;
	m->bytes = PAGE_ALIGN(struct_size(m->ring, cqe, cq->size));
	m->ring = __vmalloc(m->bytes, GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!m->ring)
		goto nomem;
	err = rdma_user_mmap_entry_insert(&uctx->ibuc, &m->rdma, m->bytes);
	if (err)
		goto unring;
	resp.mmap_offset = rdma_user_mmap_get_offset(&m->rdma);
	resp.entries = cq->size;
	resp.ring_bytes = m->bytes;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err) {
		/* The entry frees the ring (srd_ucq_mmap_free()). */
		rdma_user_mmap_entry_remove(&m->rdma);
		return err;
	}
	cq->umap = m;
	return 1;
unring:
	vfree(m->ring);
nomem:
	kfree(m);
	return -ENOMEM;
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
		rdma_user_mmap_entry_remove(&cq->umap->rdma);
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
	return cq->tail - smp_load_acquire(&cq->umap->ring->head);
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
	struct scif_rdma_cq_ring *ring = cq->umap->ring;
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
 * srd_ucq_mmap() - the mmap verb: map a CQ's ring
 * @ibuc: the context whose uverbs file is mapped
 * @vma: the mapping: shared, not executable, the ring's whole size at
 *	the offset create_cq gave
 *
 * Context: process, under mmap_lock (write).
 * Return: 0, -EINVAL for an offset or size that is no ring's or a
 * mapping that is private or executable, or vm_insert_page()'s error.
 */
int srd_ucq_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma;
	struct srd_ucq_map *m;
	unsigned long off;
	int err = 0;

	if (!(vma->vm_flags & VM_SHARED) || (vma->vm_flags & VM_EXEC))
		return -EINVAL;
	rdma = rdma_user_mmap_entry_get(ibuc, vma);
	if (!rdma)
		return -EINVAL;
	m = container_of(rdma, struct srd_ucq_map, rdma);
	for (off = 0; off < m->bytes && !err; off += PAGE_SIZE)
		err = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page((u8 *)m->ring + off));
	rdma_user_mmap_entry_put(rdma);
	return err;
}

/**
 * srd_ucq_mmap_free() - the mmap_free verb: free a CQ's ring
 * @entry: the ring's mmap entry, removed and no longer referenced
 *
 * Context: process.
 */
void srd_ucq_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct srd_ucq_map *m = container_of(entry, struct srd_ucq_map, rdma);

	vfree(m->ring);
	kfree(m);
}
