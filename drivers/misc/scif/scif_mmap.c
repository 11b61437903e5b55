// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: mapping the peer's registered memory into a process.
 *
 * mmap(MAP_SHARED) of an endpoint's file at offset off maps the peer's
 * registered address space from off on: the range must lie in windows
 * the peer registered, contiguous in its registered address space.  A
 * mapping is a struct scif_mmap, shared by the VMAs it may be split into
 * (vm_ops open/close count them).  It holds a reference on every remote
 * window of its range and the physical address of each piece of the
 * range, which the bus gave when the mapping was made (the peer's pages
 * through the aperture; on the loopback bus, the local pages themselves).
 * Pages are inserted as page frames when first touched, in special PTEs
 * that reference no struct page (scif_mmap_insert()).
 *
 * Revocation.  When a window of the range leaves the endpoint's tree (the
 * peer unregistered it, the connection went, or the peer's node was
 * lost), scif_mmap_revoke() marks the mapping revoked, zaps its PTEs in
 * every process (unmap_mapping_pages() on the file's own address_space)
 * and drops its window references, so that the acknowledgment the peer
 * waits for before it unpins the pages waits for nothing a process does.
 * A fault on a revoked mapping gets SIGBUS.  The fault handler checks
 * and inserts under the mapping's lock, which revocation takes to mark
 * it before it zaps, so no PTE survives the zap.
 *
 * Lifetimes.  A mapping is referenced by each of its VMAs and, while it
 * works, by a revoker.  It holds a reference on the file's inode, which
 * the zap needs after the last VMA (and the file) may have gone.  The
 * endpoint outlives the VMAs, each of which holds the file, and a revoker
 * is called by the endpoint's own teardown.
 *
 * Mappings of kernel clients (scif_mmap_vma()).  A client's mmap()
 * handler hands SCIF its VMA and a kernel endpoint; SCIF gives the VMA a
 * file of its own (one per mapping, on an inode of its own, which is
 * what revocation zaps) holding the module.  Such a mapping holds a
 * reference on the endpoint while it is live; revocation (which the
 * endpoint's closing does) takes it out of the endpoint's list and drops
 * that reference, so the mapping, revoked, then needs nothing of the
 * endpoint, and scif_close(), which for an endpoint with kernel windows
 * waits for the endpoint's end, waits for no process.  With a status
 * page (SCIF_MMAP_STATUS), revocation sets the page's revoked word
 * before it zaps, and a fault on the revoked range then
 * inserts the mapping's sink page instead of SIGBUS: a library that
 * stores through the mapping learns from the word, not from a signal,
 * whether its stores reached the peer.  Both pages are the mapping's
 * own, zeroed, and freed with it.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/mount.h>
#include <linux/pfn_t.h>
#include <linux/pseudo_fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "scif_endpt.h"
#include "scif_fault.h"
#include "scif_mmap.h"
#include "scif_nodes.h"
#include "scif_rma.h"

#define SCIF_FS_MAGIC	0x53434946	/* "SCIF" */

/* Gives each endpoint file an inode, hence an address_space, of its own. */
static struct vfsmount *scif_mnt;
static atomic_long_t scif_nr_mmaps;	/* mappings not yet released */
static atomic_long_t scif_nr_revoked;	/* mappings revoked, ever */

/**
 * struct scif_mmap_seg - a physically contiguous piece of a mapping
 * @pgoff: its first page, counted from the start of the mapping
 * @nr_pages: its size
 * @pfn: the page frame of its first page
 */
struct scif_mmap_seg {
	unsigned long pgoff;
	unsigned long nr_pages;
	unsigned long pfn;
};

/**
 * struct scif_mmap - a mapping of a range of the peer's registered memory
 * @ref: one per VMA, and one per revoker at work
 * @ep: the endpoint (not referenced: its file outlives the VMAs); for a
 *	kernel client's mapping (@client), a reference while the mapping
 *	is live, dropped and NULL once it is revoked
 * @inode: the file's inode (a reference)
 * @link: in the endpoint's mmap.maps (a kernel client's mapping leaves it
 *	when revoked)
 * @revoke_link: on the private list of a revoker
 * @lock: protects @revoked; taken by the fault handler around the check
 *	and the insertion, and by revocation (inside the endpoint's
 *	mmap.lock) to set it
 * @revoked: zapped, or being zapped: faults get SIGBUS (@sink if set)
 * @client: made by scif_mmap_vma()
 * @wc: write-combined, as the bus asks
 * @first: first page of the range in the peer's registered address space
 * @nr_pages: pages in the range
 * @nr_rw: entries in @rw
 * @rw: the remote windows of the range, in order, each with a reference
 *	until the mapping is revoked or released (kvmalloc'd)
 * @nr_segs: entries in @segs
 * @segs: the range, by physically contiguous piece, in order (kvmalloc'd)
 * @status: with SCIF_MMAP_STATUS, the page after the range (struct
 *	scif_mmap_status), else NULL
 * @sink: with @status, what the range maps once revoked
 *
 * @link is protected by the endpoint's mmap.lock, @revoked by @lock.
 * Once @revoked is set, @rw, @nr_rw and a client's @ep belong to the
 * revoker that set it; the rest is immutable once the mapping is in
 * mmap.maps.
 */
struct scif_mmap {
	struct kref ref;
	struct scif_endpt *ep;
	struct inode *inode;
	struct list_head link;
	struct list_head revoke_link;
	struct mutex lock;	/* @revoked */
	bool revoked;
	bool client;
	bool wc;
	unsigned long first;
	unsigned long nr_pages;
	unsigned long nr_rw;
	struct scif_rwindow **rw;
	unsigned long nr_segs;
	struct scif_mmap_seg *segs;
	struct page *status;
	struct page *sink;
};

/**
 * scif_mmap_vm_flags_mod() - set and clear flags of a VMA being mapped
 * @vma: the VMA, in an mmap() handler
 * @set: flags to set
 * @clear: flags to clear
 *
 * 6.3 made vm_flags read-only; Kbuild probes for the helpers.
 *
 * Context: under mmap_lock (write), as mmap() handlers are.
 */
void scif_mmap_vm_flags_mod(struct vm_area_struct *vma, vm_flags_t set,
			    vm_flags_t clear)
{
#ifdef SCIF_HAVE_VM_FLAGS_SET
	vm_flags_set(vma, set);
	vm_flags_clear(vma, clear);
#else
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
#endif
}

/**
 * scif_mmap_insert() - insert a page frame into a VMA of SCIF's
 * @vma: the VMA, whose flags include SCIF_VM_FLAGS
 * @addr: the faulting address
 * @pfn: the page frame: a peer's page through the bus, or a local page
 *
 * The PTE is special, with @vma's protection (on x86 the PAT then gives
 * the page the memory type reserved for it: write-back for RAM).  The
 * VMA is VM_MIXEDMAP, not VM_PFNMAP, only so that VFIO refuses it: see
 * SCIF_VM_FLAGS.
 *
 * Context: a fault handler.
 * Return: what the fault handler returns.
 */
vm_fault_t scif_mmap_insert(struct vm_area_struct *vma, unsigned long addr,
			    unsigned long pfn)
{
	return vmf_insert_mixed(vma, addr, __pfn_to_pfn_t(pfn, 0));
}

static void scif_mmap_put_windows(struct scif_mmap *map)
{
	unsigned long i;

	for (i = 0; i < map->nr_rw; i++)
		scif_rwindow_put(map->rw[i]);
	map->nr_rw = 0;
}

static void scif_mmap_free(struct scif_mmap *map)
{
	scif_mmap_put_windows(map);
	kvfree(map->rw);
	kvfree(map->segs);
	if (map->status)
		__free_page(map->status);
	if (map->sink)
		__free_page(map->sink);
	mutex_destroy(&map->lock);
	kfree(map);
}

static void scif_mmap_release(struct kref *ref)
{
	struct scif_mmap *map = container_of(ref, struct scif_mmap, ref);

	/* NULL: a client's mapping that revocation detached. */
	if (map->ep) {
		mutex_lock(&map->ep->mmap.lock);
		list_del(&map->link);
		if (map->client)
			map->ep->mmap.nr_client--;
		mutex_unlock(&map->ep->mmap.lock);
		if (map->client)
			scif_epd_put(map->ep);
	}
	iput(map->inode);
	scif_mmap_free(map);
	atomic_long_dec(&scif_nr_mmaps);
}

static void scif_mmap_put(struct scif_mmap *map)
{
	kref_put(&map->ref, scif_mmap_release);
}

/* Append @rw to @map->rw, growing it as needed. */
static int scif_mmap_add_window(struct scif_mmap *map, struct scif_rwindow *rw,
				unsigned long *cap)
{
	struct scif_rwindow **grown;
	unsigned long n;

	if (map->nr_rw == *cap) {
		n = *cap ? *cap * 2 : 8;
		grown = scif_kvmalloc_array(n, sizeof(*grown),
					    GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
		if (!grown)
			return -ENOMEM;
		if (map->nr_rw)
			memcpy(grown, map->rw, map->nr_rw * sizeof(*grown));
		kvfree(map->rw);
		map->rw = grown;
		*cap = n;
	}
	map->rw[map->nr_rw++] = rw;
	return 0;
}

/*
 * Take a reference on each window of the range, which must be covered
 * by contiguous windows allowing @prot; under mmap.lock.  On failure the
 * caller drops those taken.
 */
static int scif_mmap_windows(struct scif_endpt *ep, struct scif_mmap *map,
			     int prot, bool *may_write)
{
	u64 off = (u64)map->first << PAGE_SHIFT;
	u64 end = off + ((u64)map->nr_pages << PAGE_SHIFT);
	struct scif_rwindow *rw;
	unsigned long cap = 0;
	int err;

	lockdep_assert_held(&ep->mmap.lock);
	*may_write = true;
	while (off < end) {
		rw = scif_rwindow_get(ep, off, prot, &err);
		if (!rw)
			return err;
		err = scif_mmap_add_window(map, rw, &cap);
		if (err) {
			scif_rwindow_put(rw);
			return err;
		}
		if (!(rw->prot & SCIF_PROT_WRITE))
			*may_write = false;
		off = rw->offset + ((u64)rw->nr_pages << PAGE_SHIFT);
	}
	return 0;
}

/* The run of @rw holding byte @woff of it (the runs cover the window). */
static unsigned long scif_mmap_run_find(const struct scif_rwindow *rw, u64 woff)
{
	unsigned long lo = 0, hi = rw->nr_runs - 1, mid;

	while (lo < hi) {
		mid = lo + (hi - lo + 1) / 2;
		if (rw->runs[mid].woff <= woff)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * Walk the pieces of the range, window by window and run by run: count
 * them (@map->segs NULL) or fill @map->segs with their page frames.
 */
static int scif_mmap_walk(struct scif_mmap *map, unsigned long *count)
{
	u64 start = (u64)map->first << PAGE_SHIFT;
	u64 end = start + ((u64)map->nr_pages << PAGE_SHIFT);
	const struct scif_rwindow *rw;
	const struct scif_run *run;
	unsigned long i, r, n = 0;
	u64 lo, hi, rstart;
	phys_addr_t phys;
	int err;

	for (i = 0; i < map->nr_rw; i++) {
		rw = map->rw[i];
		lo = max(start, rw->offset);
		for (r = scif_mmap_run_find(rw, lo - rw->offset);
		     r < rw->nr_runs; r++) {
			run = &rw->runs[r];
			rstart = rw->offset + run->woff;
			if (rstart >= end)
				break;
			lo = max(start, rstart);
			hi = min(end, rstart + run->len);
			if (map->segs) {
				err = scif_node_peer_phys(rw->node,
							  run->addr + lo - rstart,
							  hi - lo, &phys,
							  &map->wc);
				if (err)
					return err;
				map->segs[n].pgoff = (lo - start) >> PAGE_SHIFT;
				map->segs[n].nr_pages = (hi - lo) >> PAGE_SHIFT;
				map->segs[n].pfn = PHYS_PFN(phys);
			}
			n++;
		}
		cond_resched();
	}
	*count = n;
	return 0;
}

/* Where the bus reaches each piece of the range; under mmap.lock. */
static int scif_mmap_segs(struct scif_mmap *map)
{
	unsigned long n;
	int err;

	scif_mmap_walk(map, &n);
	map->segs = scif_kvcalloc(n, sizeof(*map->segs),
				  GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!map->segs)
		return -ENOMEM;
	err = scif_mmap_walk(map, &map->nr_segs);
	return err == -EINVAL ? -ENXIO : err;
}

/* The piece holding page @pg of the mapping, or NULL. */
static const struct scif_mmap_seg *scif_mmap_seg_find(const struct scif_mmap *map,
						      unsigned long pg)
{
	unsigned long lo = 0, hi = map->nr_segs, mid;
	const struct scif_mmap_seg *seg;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		seg = &map->segs[mid];
		if (pg < seg->pgoff)
			hi = mid;
		else if (pg - seg->pgoff >= seg->nr_pages)
			lo = mid + 1;
		else
			return seg;
	}
	return NULL;
}

static void scif_mmap_vm_open(struct vm_area_struct *vma)
{
	struct scif_mmap *map = vma->vm_private_data;

	kref_get(&map->ref);
}

static void scif_mmap_vm_close(struct vm_area_struct *vma)
{
	scif_mmap_put(vma->vm_private_data);
}

static vm_fault_t scif_mmap_vm_fault(struct vm_fault *vmf)
{
	struct scif_mmap *map = vmf->vma->vm_private_data;
	const struct scif_mmap_seg *seg = NULL;
	vm_fault_t ret = VM_FAULT_SIGBUS;
	unsigned long pg;

	if (vmf->pgoff < map->first)
		return VM_FAULT_SIGBUS;
	pg = vmf->pgoff - map->first;
	/* The status page stays: revocation zaps only the range. */
	if (map->status && pg == map->nr_pages)
		return scif_mmap_insert(vmf->vma, vmf->address,
					page_to_pfn(map->status));
	mutex_lock(&map->lock);
	if (!map->revoked)
		seg = scif_mmap_seg_find(map, pg);
	if (seg)
		ret = scif_mmap_insert(vmf->vma, vmf->address,
				       seg->pfn + pg - seg->pgoff);
	else if (map->revoked && map->sink && pg < map->nr_pages)
		ret = scif_mmap_insert(vmf->vma, vmf->address,
				       page_to_pfn(map->sink));
	mutex_unlock(&map->lock);
	return ret;
}

static const struct vm_operations_struct scif_mmap_vm_ops = {
	.open = scif_mmap_vm_open,
	.close = scif_mmap_vm_close,
	.fault = scif_mmap_vm_fault,
};

/* Make the mapping of @vma's range; under mmap.lock. */
static int scif_mmap_make(struct scif_endpt *ep, struct scif_mmap *map,
			  struct vm_area_struct *vma, bool *may_write)
{
	int prot = SCIF_PROT_READ;

	lockdep_assert_held(&ep->mmap.lock);
	/* Any page the CPU can reach, it can read: READ is always needed. */
	if (vma->vm_flags & VM_WRITE)
		prot |= SCIF_PROT_WRITE;
	return scif_mmap_windows(ep, map, prot, may_write) ?:
	       scif_mmap_segs(map);
}

/* A zeroed page of a mapping's own, charged to its maker. */
static struct page *scif_mmap_page(void)
{
	if (scif_fail_alloc())
		return NULL;
	return alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
}

/*
 * Map @nr pages of the peer's registered address space from page @first
 * into @vma (and, with @status, a status page after them), revoked by
 * zapping @inode's address_space.  Under mmap_lock (write).
 */
static int scif_mmap_new(struct scif_endpt *ep, struct vm_area_struct *vma,
			 struct inode *inode, unsigned long first,
			 unsigned long nr, bool client, bool status)
{
	struct scif_epd_mmap *em = &ep->mmap;
	vm_flags_t clear = VM_MAYEXEC;
	struct scif_mmap *map;
	bool may_write;
	int err;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EACCES;
	if (!nr || first > SCIF_RMA_MAX_PAGE ||
	    nr > SCIF_RMA_MAX_PAGE - first + 1)
		return -ENXIO;
	map = scif_kzalloc(sizeof(*map), GFP_KERNEL_ACCOUNT);
	if (!map)
		return -ENOMEM;
	kref_init(&map->ref);
	mutex_init(&map->lock);
	map->ep = ep;
	map->first = first;
	map->nr_pages = nr;
	if (status) {
		map->status = scif_mmap_page();
		map->sink = scif_mmap_page();
		if (!map->status || !map->sink) {
			scif_mmap_free(map);
			return -ENOMEM;
		}
	}

	mutex_lock(&em->lock);
	err = client && em->nr_client >= SCIF_MMAP_CLIENT_MAX ? -ENOMEM :
	      scif_mmap_make(ep, map, vma, &may_write);
	if (!err) {
		ihold(inode);
		map->inode = inode;
		list_add_tail(&map->link, &em->maps);
		/* Dropped when it is revoked, or released unrevoked. */
		map->client = client;
		if (client) {
			kref_get(&ep->ref);
			em->nr_client++;
		}
	}
	mutex_unlock(&em->lock);
	if (err) {
		scif_mmap_free(map);
		return err;
	}
	atomic_long_inc(&scif_nr_mmaps);

	if (!may_write)
		clear |= VM_MAYWRITE;
	scif_mmap_vm_flags_mod(vma, SCIF_VM_FLAGS | VM_DONTCOPY, clear);
	if (map->wc)
		vma->vm_page_prot = pgprot_writecombine(vma->vm_page_prot);
	vma->vm_private_data = map;
	vma->vm_ops = &scif_mmap_vm_ops;
	return 0;
}

/**
 * scif_mmap() - map the peer's registered memory (mmap of an endpoint)
 * @f: the endpoint's file
 * @vma: the new VMA; vm_pgoff is the first page in the peer's registered
 *	address space
 *
 * Context: process context, under mmap_lock (write); takes mmap.lock
 * and rma.lock.
 * Return: 0; -EINVAL if the mapping is not shared; -EACCES if it asks for
 * execution, or for access a window does not allow (every window must
 * allow reading); -ENXIO if the range is not covered by contiguous
 * windows of the peer; a connection error (-ENOTCONN, -ECONNRESET,
 * -ENODEV); -ENOMEM.
 */
int scif_mmap(struct file *f, struct vm_area_struct *vma)
{
	struct scif_endpt *ep = f->private_data;

	return scif_mmap_new(ep, vma, ep->mmap.inode, vma->vm_pgoff,
			     vma_pages(vma), false, false);
}

/* The file of a kernel client's mapping: it holds the module. */
static const struct file_operations scif_mmap_client_fops = {
	.owner = THIS_MODULE,
};

/**
 * scif_mmap_client() - implement scif_mmap_vma()
 * @ep: a connected endpoint (of the kernel API)
 * @offset: start of the range, page aligned, not negative
 * @vma: the client's new VMA
 * @status: a status page after the range (SCIF_MMAP_STATUS)
 *
 * Context: process context, under mmap_lock (write); takes mmap.lock
 * and rma.lock.
 * Return: as scif_mmap_vma().
 */
int scif_mmap_client(struct scif_endpt *ep, s64 offset,
		     struct vm_area_struct *vma, bool status)
{
	unsigned long first = offset >> PAGE_SHIFT, nr = vma_pages(vma);
	struct inode *inode;
	struct file *f;
	int err;

	if (status && nr-- < 2)
		return -EINVAL;
	inode = scif_mmap_alloc_inode();
	if (IS_ERR(inode))
		return PTR_ERR(inode);
	/* The file's release puts the module, as for a file opened by path. */
	__module_get(THIS_MODULE);
	f = scif_mmap_alloc_file(inode, "[scif-map]", &scif_mmap_client_fops);
	if (IS_ERR(f)) {
		iput(inode);
		module_put(THIS_MODULE);
		return PTR_ERR(f);
	}
	err = scif_mmap_new(ep, vma, inode, first, nr, true, status);
	if (!err) {
		vma_set_file(vma, f);
		vma->vm_pgoff = first;
	}
	fput(f);
	return err;
}

/* Whether @map holds @rw (its windows are in offset order). */
static bool scif_mmap_holds(const struct scif_mmap *map,
			    const struct scif_rwindow *rw)
{
	unsigned long lo = 0, hi = map->nr_rw, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (map->rw[mid] == rw)
			return true;
		if (map->rw[mid]->offset < rw->offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/**
 * scif_mmap_revoke() - a remote window is going: revoke its mappings
 * @ep: the endpoint
 * @rw: the window, out of the endpoint's tree already
 *
 * Every mapping holding @rw is zapped in every process that has it (an
 * access then gets SIGBUS, or with a status page the sink page, the
 * page's revoked word set before the zap) and lets go of its windows.  Waits for no
 * process: only for a fault or an mmap() of the endpoint at work.
 *
 * Context: process context; no SCIF lock held but ctl_mutex.
 */
void scif_mmap_revoke(struct scif_endpt *ep, struct scif_rwindow *rw)
{
	struct scif_epd_mmap *em = &ep->mmap;
	struct scif_mmap *map, *tmp;
	LIST_HEAD(revoked);

	mutex_lock(&em->lock);
	list_for_each_entry_safe(map, tmp, &em->maps, link) {
		/* A mapping being released lets go of its windows itself. */
		if (map->revoked || !scif_mmap_holds(map, rw) ||
		    !kref_get_unless_zero(&map->ref))
			continue;
		mutex_lock(&map->lock);
		map->revoked = true;
		mutex_unlock(&map->lock);
		/* A client's mapping needs nothing of the endpoint now. */
		if (map->client) {
			list_del_init(&map->link);
			em->nr_client--;
		}
		list_add_tail(&map->revoke_link, &revoked);
	}
	mutex_unlock(&em->lock);

	list_for_each_entry_safe(map, tmp, &revoked, revoke_link) {
		if (map->status)
			WRITE_ONCE(((struct scif_mmap_status *)
				    page_address(map->status))->revoked, 1);
		/*
		 * The word is set, and seen, before the zap: a process that
		 * stored, then read 0 after a full barrier, stored before
		 * the zap, hence before the peer may reuse its pages.
		 */
		smp_mb();
		unmap_mapping_pages(map->inode->i_mapping, map->first,
				    map->nr_pages, true);
		scif_mmap_put_windows(map);
		if (map->client) {
			scif_epd_put(map->ep);
			map->ep = NULL;
		}
		atomic_long_inc(&scif_nr_revoked);
		scif_mmap_put(map);
	}
}

/**
 * scif_mmap_epd_init() - set up a new endpoint's mappings
 * @ep: the endpoint
 */
void scif_mmap_epd_init(struct scif_endpt *ep)
{
	mutex_init(&ep->mmap.lock);
	INIT_LIST_HEAD(&ep->mmap.maps);
	ep->mmap.nr_client = 0;
	ep->mmap.inode = NULL;
}

/**
 * scif_mmap_file_open() - give an endpoint's new file its address_space
 * @f: the file
 * @ep: its endpoint
 *
 * Context: process context.
 * Return: 0 or a negative errno.
 */
int scif_mmap_file_open(struct file *f, struct scif_endpt *ep)
{
	struct inode *inode;

	inode = scif_fail_alloc() ? ERR_PTR(-ENOMEM) :
		alloc_anon_inode(scif_mnt->mnt_sb);
	if (IS_ERR(inode))
		return PTR_ERR(inode);
	ep->mmap.inode = inode;
	f->f_mapping = inode->i_mapping;
	return 0;
}

/**
 * scif_mmap_alloc_inode() - an inode of the driver's own filesystem
 *
 * Gives a file an address_space of its own (see scif_fp.c).
 *
 * Context: process context.
 * Return: the inode, or an ERR_PTR().
 */
struct inode *scif_mmap_alloc_inode(void)
{
	if (scif_fail_alloc())
		return ERR_PTR(-ENOMEM);
	return alloc_anon_inode(scif_mnt->mnt_sb);
}

/**
 * scif_mmap_alloc_file() - a read-write file of an inode of the driver's
 *	filesystem
 * @inode: from scif_mmap_alloc_inode(); the file takes over a reference
 *	to it on success
 * @name: its name, for /proc/<pid>/maps
 * @fops: its operations
 *
 * Context: process context.
 * Return: the file, or an ERR_PTR() (the caller keeps its reference).
 */
struct file *scif_mmap_alloc_file(struct inode *inode, const char *name,
				  const struct file_operations *fops)
{
	return alloc_file_pseudo(inode, scif_mnt, name, O_RDWR, fops);
}

/**
 * scif_mmap_file_release() - the endpoint's file is closing
 * @ep: its endpoint; no VMA maps the file any more
 */
void scif_mmap_file_release(struct scif_endpt *ep)
{
	iput(ep->mmap.inode);
	ep->mmap.inode = NULL;
}

static int scif_mmap_show(struct seq_file *s, void *unused)
{
	seq_printf(s, "mappings %ld\nrevoked %ld\n",
		   atomic_long_read(&scif_nr_mmaps),
		   atomic_long_read(&scif_nr_revoked));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(scif_mmap);

static int scif_mmap_init_fs_context(struct fs_context *fc)
{
	return init_pseudo(fc, SCIF_FS_MAGIC) ? 0 : -ENOMEM;
}

/* No owner: the module's own mount must not pin the module. */
static struct file_system_type scif_fs_type = {
	.name = "scif",
	.init_fs_context = scif_mmap_init_fs_context,
	.kill_sb = kill_anon_super,
};

/**
 * scif_mmap_init() - mount the inodes of endpoint files
 * @dir: the driver's debugfs directory, for <debugfs>/scif/mmap
 *
 * Context: process context, at module load.
 * Return: 0 or a negative errno.
 */
int scif_mmap_init(struct dentry *dir)
{
	scif_mnt = kern_mount(&scif_fs_type);
	if (IS_ERR(scif_mnt))
		return PTR_ERR(scif_mnt);
	debugfs_create_file("mmap", 0400, dir, NULL, &scif_mmap_fops);
	return 0;
}

/**
 * scif_mmap_exit() - undo scif_mmap_init(); no endpoint file is left
 */
void scif_mmap_exit(void)
{
	kern_unmount(scif_mnt);
}
