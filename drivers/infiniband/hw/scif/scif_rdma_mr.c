// SPDX-License-Identifier: GPL-2.0
/*
 * scif_rdma: memory regions as the data path sees them (rdma.rst,
 * "Verbs objects"): a key resolved to its MR, a reference held while
 * the bytes move, and the kernel address of a byte of it.  The lowest
 * layer of the module: it calls no other part.
 */

#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>

#include "scif_rdma.h"

/**
 * srd_mr_lookup() - the MR a key names, for a QP of @pd, referenced
 * @dev: the device
 * @key: an lkey or rkey
 * @pd: the PD the MR must belong to
 *
 * The caller drops the reference with srd_mr_put() once it is done with
 * the MR's memory; dereg_mr waits for that.
 *
 * Context: any (RCU read side inside).
 * Return: the MR, or NULL if the key names none, or one of another PD,
 * or one being deregistered.
 */
struct srd_mr *srd_mr_lookup(struct srd_dev *dev, u32 key, struct ib_pd *pd)
{
	struct srd_mr *mr;

	rcu_read_lock();
	mr = xa_load(&dev->mrs, key >> 8);
	if (mr && (READ_ONCE(mr->key) != key || mr->ibmr.pd != pd ||
		   !refcount_inc_not_zero(&mr->refs)))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/**
 * srd_mr_put() - drop a reference srd_mr_lookup() took
 * @mr: the MR, or NULL
 *
 * Context: any.
 */
void srd_mr_put(struct srd_mr *mr)
{
	if (mr && refcount_dec_and_test(&mr->refs))
		complete(&mr->gone);
}

/**
 * srd_mr_kva() - the kernel address of a byte of an MR
 * @mr: the MR
 * @addr: the byte's address, inside @mr (the caller checked the bounds)
 * @len: bytes wanted from there; shortened to what is contiguous
 *
 * Context: any.
 * Return: the kernel virtual address of @addr.
 */
void *srd_mr_kva(struct srd_mr *mr, u64 addr, u64 *len)
{
	u64 psz, abs;
	void *kva;

	if (mr->dma)
		return (void *)(uintptr_t)addr;
	psz = mr->ibmr.page_size;
	abs = (mr->iova & (psz - 1)) + (addr - mr->iova);
	kva = (void *)(uintptr_t)mr->pages[abs / psz] + abs % psz;
	*len = min(*len, psz - abs % psz);
	return kva;
}

/**
 * srd_mr_ok() - may a key's MR be used for a range
 * @mr: the MR a key resolved to, or NULL
 * @addr: start of the range
 * @len: its bytes
 * @access: IB_ACCESS_* wanted
 *
 * Local write is enforced on a user MR only: the pages of one registered
 * without it may be another's (pinned without write access).  A dma-buf
 * MR is never usable here (the frames' path, local SGEs).
 *
 * Context: any.
 * Return: true if @mr is valid, allows @access and holds the range.
 */
bool srd_mr_ok(struct srd_mr *mr, u64 addr, u64 len, int access)
{
	int missing;

	/* A dma-buf MR has no pages: only its windows reach it. */
	if (!mr || !READ_ONCE(mr->valid) || mr->dbuf)
		return false;
	missing = access & ~READ_ONCE(mr->access);
	if (!mr->umem)
		missing &= ~IB_ACCESS_LOCAL_WRITE;
	if (missing)
		return false;
	if (mr->dma)
		return !(access & (IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE));
	return len <= mr->length && addr >= mr->iova &&
	       addr - mr->iova <= mr->length - len;
}

/**
 * srd_kva_page() - the page of a kernel address
 * @kva: a linear-map or vmalloc address
 *
 * Context: any.
 * Return: the page, or NULL if @kva has none that may be mapped.
 */
struct page *srd_kva_page(void *kva)
{
	if (is_vmalloc_addr(kva))
		return vmalloc_to_page(kva);
	return virt_addr_valid(kva) ? virt_to_page(kva) : NULL;
}

/**
 * srd_mr_pages_vmap() - an MR's first pages in one kernel range
 * @mr: the MR (not a DMA MR; a reference held)
 * @n: how many of its pages (at most its @npages)
 *
 * Context: process; sleeps.
 * Return: the range (vunmap() it), or NULL (no memory, or a page that
 * may not be mapped).
 */
void *srd_mr_pages_vmap(struct srd_mr *mr, u32 n)
{
	struct page **pages;
	void *va = NULL;
	u32 i;

	pages = kvcalloc(n, sizeof(*pages), GFP_KERNEL_ACCOUNT);
	if (!pages)
		return NULL;
	for (i = 0; i < n; i++) {
		pages[i] = srd_kva_page((void *)(uintptr_t)mr->pages[i]);
		if (!pages[i])
			goto out;
	}
	va = vmap(pages, n, VM_MAP, PAGE_KERNEL);
out:
	kvfree(pages);
	return va;
}

/**
 * srd_mr_vmap() - a user MR's pages in one kernel range, kept
 * @mr: the MR (a reference held)
 *
 * Made on first use and kept until dereg_mr: its pages never change
 * (struct srd_mr).  A work request's bytes then move through it in one
 * piece instead of a page at a time, and the windows opened over the MR
 * share it.  Its page tables are the kernel's, about 0.2% of the pages
 * the owner pinned (and was charged for).
 *
 * Context: process; sleeps.
 * Return: the address of the MR's first page, or NULL (not a user MR,
 * or no memory).
 */
void *srd_mr_vmap(struct srd_mr *mr)
{
	void *va;

	/* Pairs with the cmpxchg that published it: its page tables are seen. */
	va = smp_load_acquire(&mr->kmap);
	if (va || !mr->umem)
		return va;
	va = srd_mr_pages_vmap(mr, mr->npages);
	if (va && cmpxchg(&mr->kmap, NULL, va)) {
		vunmap(va);	/* another got there first */
		va = smp_load_acquire(&mr->kmap);	/* as above */
	}
	return va;
}

/**
 * srd_mr_read() - copy bytes of an MR out
 * @mr: the MR (a reference held by the caller)
 * @addr: the first byte, inside @mr (the caller checked the range)
 * @buf: where to
 * @len: how many
 *
 * Context: any.
 */
void srd_mr_read(struct srd_mr *mr, u64 addr, void *buf, u64 len)
{
	void *kva;
	u64 n;

	while (len) {
		n = len;
		/*
		 * Apart from the copy: memcpy(buf, srd_mr_kva(..., &n), n)
		 * took n before srd_mr_kva() shortened it (the order is the
		 * compiler's; FORTIFY_SOURCE's memcpy reads the size first),
		 * so it read past the end of the MR's page.
		 */
		kva = srd_mr_kva(mr, addr, &n);	/* shortens n */
		memcpy(buf, kva, n);
		buf += n;
		addr += n;
		len -= n;
	}
}
