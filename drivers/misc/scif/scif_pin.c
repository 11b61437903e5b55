// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: pinning.  The pages of registered windows (scif_pin_range(),
 * scif_pin_pages() of the kernel API, struct scif_pinned_pages), the user
 * pages of the registration cache (scif_pin_user_range()), and the
 * charge of user pages to the process's RLIMIT_MEMLOCK through
 * mm->pinned_vm (scif_pin_charge(), CAP_IPC_LOCK exempt), which is made
 * before anything is allocated for them.
 *
 * User pages are pinned FOLL_LONGTERM, for writing where the window asks
 * for it and where the mapping is private and writable (see
 * scif_pin_vma_write()); kernel memory (SCIF_MAP_KERNEL) is only looked
 * up, its owner keeps it.  A pin is described as physically contiguous
 * runs, which windows publish to the peer.
 */
#include <linux/capability.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/scif.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "scif_fault.h"
#include "scif_rma.h"

/* Pages pinned per call of pin_user_pages_fast(). */
#define SCIF_PIN_CHUNK		512

/* Runs are reached through the linear map. */
static_assert(!IS_ENABLED(CONFIG_HIGHMEM));

static atomic_long_t scif_pin_total;	/* user pages pinned by windows */

/**
 * scif_pin_charge() - charge pages about to be pinned to RLIMIT_MEMLOCK
 * @mm: the mm of the process they are pinned for
 * @n: pages
 *
 * Adds @n to @mm->pinned_vm, unless that goes over the process's
 * RLIMIT_MEMLOCK and it lacks CAP_IPC_LOCK.  Called before anything is
 * allocated for the pages; scif_pin_uncharge() undoes it.
 *
 * Context: process context, in the process the pages are pinned for.
 * Return: 0, or -EAGAIN (over the limit; nothing charged).
 */
int scif_pin_charge(struct mm_struct *mm, unsigned long n)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	s64 total = atomic64_add_return(n, &mm->pinned_vm);

	if ((u64)total > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(n, &mm->pinned_vm);
		return -EAGAIN;
	}
	return 0;
}

/**
 * scif_pin_uncharge() - undo scif_pin_charge()
 * @mm: the mm that was charged
 * @n: pages
 *
 * Context: any context.
 */
void scif_pin_uncharge(struct mm_struct *mm, unsigned long n)
{
	atomic64_sub(n, &mm->pinned_vm);
}

/*
 * Whether a page of @vma is pinned for writing when the window does not
 * ask for it.  A read-only pin of a page the process has not written yet
 * may pin a page it does not own: the shared zero page (or the huge zero
 * page) of untouched anonymous memory, the page cache page of a private
 * file mapping.  The process's first write then moves it to a new page,
 * and the window keeps the old one.  Pinning for writing breaks the copy
 * on write now, so the window and the process share the page for good.
 * This is only done where the process itself may write (a private,
 * writable mapping); shared mappings have no copy on write.
 */
static bool scif_pin_vma_write(struct vm_area_struct *vma)
{
	return !(vma->vm_flags & VM_SHARED) && (vma->vm_flags & VM_WRITE);
}

/*
 * Check that [@addr, @addr + @len) is mapped readable (and writable for
 * @write) by the current process, before anything is allocated for it.
 */
static int scif_pin_user_check(unsigned long addr, unsigned long len,
			       bool write)
{
	struct mm_struct *mm = current->mm;
	unsigned long end = addr + len;
	struct vm_area_struct *vma;
	int err = 0;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	while (addr < end) {
		vma = vma_lookup(mm, addr);
		if (!vma || !(vma->vm_flags & VM_READ) ||
		    (write && !(vma->vm_flags & VM_WRITE))) {
			err = -EFAULT;
			break;
		}
		addr = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return err;
}

/**
 * scif_pin_user_range() - pin user pages long term, breaking copy on write
 * @start: first address, page aligned, in the current process
 * @nr: pages
 * @write: the pages will be written (else only read)
 * @pages: receives the pages
 *
 * Pins with FOLL_WRITE where @write asks for it and also where the VMA is
 * private and writable, so that the pages are the ones the process will
 * write later (see scif_pin_vma_write()).  A read-only private mapping
 * is pinned read-only.  Pins in chunks and stops on a fatal signal.
 *
 * Context: process context with a user mm; takes its mmap lock.
 * Return: 0 with @nr pages pinned, or -EFAULT, -ENOMEM, -EINTR with
 * none pinned.
 */
int scif_pin_user_range(unsigned long start, unsigned long nr, bool write,
			struct page **pages)
{
	struct mm_struct *mm = current->mm;
	unsigned long done = 0, a, seg;
	struct vm_area_struct *vma;
	unsigned int flags;
	int n, err;

	while (done < nr) {
		a = start + done * PAGE_SIZE;
		if (mmap_read_lock_killable(mm)) {
			err = -EINTR;
			goto unpin;
		}
		vma = vma_lookup(mm, a);
		if (!vma) {
			mmap_read_unlock(mm);
			err = -EFAULT;
			goto unpin;
		}
		flags = FOLL_LONGTERM;
		if (write || scif_pin_vma_write(vma))
			flags |= FOLL_WRITE;
		seg = min3(nr - done, (vma->vm_end - a) >> PAGE_SHIFT,
			   (unsigned long)SCIF_PIN_CHUNK);
		mmap_read_unlock(mm);
		/* A VMA changed meanwhile makes GUP fail or pin read-only. */
		n = pin_user_pages_fast(a, seg, flags, pages + done);
		if (n <= 0) {
			err = n ? n : -EFAULT;
			goto unpin;
		}
		done += n;
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			goto unpin;
		}
		cond_resched();
	}
	return 0;

unpin:
	unpin_user_pages(pages, done);
	return err;
}

/* Kernel memory: the caller keeps it; the pages are only looked up. */
static int scif_pin_kernel_pages(struct scif_pinned_pages *pp,
				 unsigned long addr)
{
	unsigned long i;
	struct page *page;
	void *va;

	for (i = 0; i < pp->nr_pages; i++) {
		va = (void *)(addr + i * PAGE_SIZE);
		if (is_vmalloc_addr(va))
			page = vmalloc_to_page(va);
		else
			page = virt_addr_valid(va) ? virt_to_page(va) : NULL;
		if (!page)
			return -EFAULT;
		pp->pages[i] = page;
	}
	return 0;
}

static bool scif_pin_adjacent(struct page *a, struct page *b)
{
	return page_to_pfn(a) + 1 == page_to_pfn(b);
}

/* Describe @pp->pages as physically contiguous runs. */
static int scif_pin_runs(struct scif_pinned_pages *pp)
{
	unsigned long i, nr = 1, r = 0;
	struct scif_run *run;

	for (i = 1; i < pp->nr_pages; i++)
		if (!scif_pin_adjacent(pp->pages[i - 1], pp->pages[i]))
			nr++;
	if (nr > SCIF_WINDOW_MAX_RUNS)
		return -ENOMEM;
	pp->runs = scif_kvcalloc(nr, sizeof(*pp->runs),
				 GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!pp->runs)
		return -ENOMEM;
	pp->nr_runs = nr;
	for (i = 0; i < pp->nr_pages; i++) {
		if (i && scif_pin_adjacent(pp->pages[i - 1], pp->pages[i])) {
			pp->runs[r - 1].len += PAGE_SIZE;
			continue;
		}
		run = &pp->runs[r++];
		run->woff = (u64)i << PAGE_SHIFT;
		run->addr = page_to_phys(pp->pages[i]);
		run->len = PAGE_SIZE;
		run->va = page_address(pp->pages[i]);
	}
	return 0;
}

/**
 * scif_pin_check() - check the arguments of a pin before doing anything
 * @addr: start, page aligned (a kernel address with SCIF_MAP_KERNEL)
 * @len: bytes, a non-zero multiple of the page size
 * @prot: SCIF_PROT_*
 * @map_flags: 0 or SCIF_MAP_KERNEL
 *
 * Context: process context.
 * Return: 0, -EINVAL (bad arguments, or user memory without a user mm)
 * or -EFAULT (not a user range).
 */
int scif_pin_check(unsigned long addr, size_t len, int prot, int map_flags)
{
	unsigned long end;

	if ((prot & ~(SCIF_PROT_READ | SCIF_PROT_WRITE)) ||
	    (map_flags & ~SCIF_MAP_KERNEL) || !len ||
	    !PAGE_ALIGNED(addr) || !PAGE_ALIGNED(len) ||
	    check_add_overflow(addr, len, &end) ||
	    len >> PAGE_SHIFT > SCIF_WINDOW_MAX_PAGES)
		return -EINVAL;
	if (map_flags & SCIF_MAP_KERNEL)
		return 0;
	if (!current->mm)
		return -EINVAL;
	return access_ok((void __user *)addr, len) ? 0 : -EFAULT;
}

/**
 * scif_pin_range() - pin pages for registration
 * @addr: start, page aligned: a user address of the current process, or
 *	with SCIF_MAP_KERNEL a kernel address (linear map or vmalloc)
 * @len: bytes, a non-zero multiple of the page size
 * @prot: SCIF_PROT_* the pages are for; SCIF_PROT_WRITE pins for writing
 * @map_flags: 0 or SCIF_MAP_KERNEL
 * @pinned: receives the pinned pages, with one reference
 *
 * User pages are charged to the process's RLIMIT_MEMLOCK (unless it has
 * CAP_IPC_LOCK) and checked to be mapped before anything is allocated
 * for them, then pinned FOLL_LONGTERM in chunks by scif_pin_user_range()
 * (for writing where the mapping is private and writable, whatever
 * @prot says: see Documentation/scif/rma.rst).
 *
 * Context: process context; may sleep.
 * Return: 0, -EINVAL (bad arguments), -EFAULT (bad memory), -EAGAIN
 * (over RLIMIT_MEMLOCK), -ENOMEM or -EINTR (fatal signal).
 */
int scif_pin_range(unsigned long addr, size_t len, int prot, int map_flags,
		   struct scif_pinned_pages **pinned)
{
	struct scif_pinned_pages *pp;
	unsigned long nr;
	bool user;
	int err;

	err = scif_pin_check(addr, len, prot, map_flags);
	if (err)
		return err;
	nr = len >> PAGE_SHIFT;
	user = !(map_flags & SCIF_MAP_KERNEL);
	/* Limits first: nothing is allocated for a range over them. */
	if (user) {
		err = scif_pin_charge(current->mm, nr);
		if (err)
			return err;
		err = scif_pin_user_check(addr, len, prot & SCIF_PROT_WRITE);
		if (err)
			goto uncharge;
	}
	err = -ENOMEM;
	pp = scif_kzalloc(sizeof(*pp), GFP_KERNEL_ACCOUNT);
	if (!pp)
		goto uncharge;
	kref_init(&pp->ref);
	pp->nr_pages = nr;
	pp->prot = prot;
	pp->user = user;
	pp->pages = scif_kvcalloc(nr, sizeof(*pp->pages),
				  GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!pp->pages)
		goto free_pp;
	if (!user) {
		err = scif_pin_kernel_pages(pp, addr);
		if (err)
			goto free_pages;
		goto runs;
	}
	err = scif_pin_user_range(addr, nr, prot & SCIF_PROT_WRITE, pp->pages);
	if (err)
		goto free_pages;
	pp->mm = current->mm;
	mmgrab(pp->mm);
	atomic_long_add(pp->nr_pages, &scif_pin_total);
runs:
	err = scif_pin_runs(pp);
	if (err)
		goto put;
	*pinned = pp;
	return 0;

put:	/* undoes the pinning, the charge and the rest */
	scif_pin_put(pp);
	return err;
free_pages:
	kvfree(pp->pages);
free_pp:
	kfree(pp);
uncharge:
	if (user)
		scif_pin_uncharge(current->mm, nr);
	return err;
}

static void scif_pin_release(struct kref *ref)
{
	struct scif_pinned_pages *pp = container_of(ref,
						    struct scif_pinned_pages,
						    ref);

	if (pp->kind == SCIF_PP_MMIO) {
		scif_devmem_release(pp);
		return;
	}
	while (pp->nr_parents)
		scif_pin_put(pp->parents[--pp->nr_parents]);
	kvfree(pp->parents);
	if (pp->user) {
		unpin_user_pages_dirty_lock(pp->pages, pp->nr_pages,
					    pp->prot & SCIF_PROT_WRITE);
		scif_pin_uncharge(pp->mm, pp->nr_pages);
		atomic_long_sub(pp->nr_pages, &scif_pin_total);
		mmdrop(pp->mm);
	}
	kvfree(pp->runs);
	kvfree(pp->pages);
	kfree(pp);
}

/**
 * scif_pin_put() - drop a reference to pinned pages
 * @pp: the pages; unpinned with the last reference (a device memory set
 *	is unmapped and lets go of its PCI function instead)
 *
 * Context: process context; may sleep.
 */
void scif_pin_put(struct scif_pinned_pages *pp)
{
	kref_put(&pp->ref, scif_pin_release);
}

/**
 * scif_pin_alias_new() - an empty set to take pages of other sets
 * @nr_pages: its size in pages, not 0, at most SCIF_WINDOW_MAX_PAGES
 * @nr_parents: how many sets it will take pages from, not 0
 * @prot: SCIF_PROT_* (the caller checked that the parents allow them)
 *
 * Filled by scif_pin_alias_add(), in order, then scif_pin_alias_done().
 * An alias is a set of RAM pages that pins nothing itself: it holds its
 * parents, which keep their pages pinned (and charged to whoever pinned
 * them) until the last window over either goes.
 *
 * Context: process context; may sleep.
 * Return: the set, with one reference, or NULL (no memory).
 */
struct scif_pinned_pages *scif_pin_alias_new(unsigned long nr_pages,
					     unsigned long nr_parents,
					     int prot)
{
	struct scif_pinned_pages *pp;

	pp = scif_kzalloc(sizeof(*pp), GFP_KERNEL_ACCOUNT);
	if (!pp)
		return NULL;
	kref_init(&pp->ref);
	pp->prot = prot;
	pp->pages = scif_kvcalloc(nr_pages, sizeof(*pp->pages),
				  GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	pp->parents = scif_kvcalloc(nr_parents, sizeof(*pp->parents),
				    GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!pp->pages || !pp->parents) {
		kvfree(pp->pages);
		kvfree(pp->parents);
		kfree(pp);
		return NULL;
	}
	return pp;
}

/**
 * scif_pin_alias_add() - append pages of a set to an alias
 * @pp: the alias, from scif_pin_alias_new(), with room for them
 * @parent: a set of RAM pages (SCIF_PP_PAGES); referenced by @pp
 * @first: the first of its pages to take
 * @n: how many (@first + @n within @parent)
 *
 * Context: any context.
 */
void scif_pin_alias_add(struct scif_pinned_pages *pp,
			struct scif_pinned_pages *parent, unsigned long first,
			unsigned long n)
{
	memcpy(pp->pages + pp->nr_pages, parent->pages + first,
	       n * sizeof(*pp->pages));
	pp->nr_pages += n;
	kref_get(&parent->ref);
	pp->parents[pp->nr_parents++] = parent;
}

/**
 * scif_pin_alias_done() - an alias's pages are all there: its runs
 * @pp: the alias
 *
 * Context: process context; may sleep.
 * Return: 0, or -ENOMEM (no memory, or more runs than a window may have).
 */
int scif_pin_alias_done(struct scif_pinned_pages *pp)
{
	return scif_pin_runs(pp);
}

/**
 * scif_pin_nr_pages() - user pages pinned for windows
 *
 * Return: the number of pages.
 */
long scif_pin_nr_pages(void)
{
	return atomic_long_read(&scif_pin_total);
}
