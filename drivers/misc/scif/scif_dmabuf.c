// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: dma-buf export of a range of windows, a kind of device
 * mapping (scif_devdma.c).  The dma-buf holds every window of the range
 * (local: this endpoint's, RAM only; remote: the peer's, reached through
 * the bus) from export until it is revoked and nothing maps it any more,
 * or until it is released.  SCIF is a dynamic exporter: importers with
 * importer_ops are told of a revocation through move_notify; a static
 * importer, which cannot be told, may only attach to a local range,
 * whose pages stay pinned as long as the dma-buf holds the window.
 *
 * Revocation (a window of the range unregistered, the connection ended,
 * the node lost) runs in the devdma work, with no SCIF lock held: under
 * the dma-buf's reservation lock the dma-buf is marked revoked and the
 * importers told (move_notify); then the CPU mappings are zapped; the
 * windows go when the last importer mapping and the kernel mapping
 * (vmap) are gone too, or at release.  After it, map_dma_buf, mmap,
 * vmap and begin_cpu_access fail with -ENODEV and a CPU access of a
 * mapping gets SIGBUS.
 *
 * Not built in this first version (Documentation/scif/devices.rst):
 * local device windows (refused by scif_devdma_begin(), -EOPNOTSUPP),
 * vmap of remote ranges (-EOPNOTSUPP).  A remote range holds the peer's
 * node (scif_devdma.c's count) until its windows are dropped.
 */
#define pr_fmt(fmt) "scif: " fmt

#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/export.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/iosys-map.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <linux/scif.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "scif_devdma.h"
#include "scif_dmabuf.h"
#include "scif_endpt.h"
#include "scif_fault.h"
#include "scif_lmap.h"
#include "scif_mmap.h"
#include "scif_nodes.h"
#include "scif_rma.h"

/* The dma-buf symbols are in the DMA_BUF namespace on 6.1 and 6.12. */
MODULE_IMPORT_NS(DMA_BUF);

static unsigned int scif_dmabuf_max = 256;
module_param_named(max_dmabufs_per_ep, scif_dmabuf_max, uint, 0644);
MODULE_PARM_DESC(max_dmabufs_per_ep,
		 "dma-bufs an endpoint may have exported and not yet released (default 256)");

/* A segment of the scatterlist is at most this long (sg lengths are u32). */
#define SCIF_DMABUF_SEG_MAX	SZ_1G

/**
 * struct scif_dmabuf_seg - a physically contiguous piece of the range
 * @addr: its address: physical (local) or as the peer published it
 * @off: where it starts in the range
 * @len: bytes, a page multiple, at most SCIF_DMABUF_SEG_MAX
 * @win: the index of its window in the mapping's windows
 */
struct scif_dmabuf_seg {
	u64 addr;
	u64 off;
	u32 len;
	unsigned long win;
};

/**
 * struct scif_dmabuf - an exported range of windows
 * @dd: the device mapping (its ep is the devdma's reference)
 * @dmabuf: the dma-buf, set once exported
 * @ep: the endpoint, with a reference of the dma-buf's until release
 * @inode: the dma-buf file's inode, referenced, whose mapping is zapped
 *	at revocation (the file may be going while the work runs)
 * @off: first byte of the range in its registered address space
 * @len: bytes of the range
 * @prot: SCIF_PROT_* asked for at export
 * @nr_segs: entries in @segs
 * @segs: the range's pieces, in order; read-only once exported
 * @live: @dd went live (release must end it)
 * @lock: protects the fields below; taken under the reservation lock
 *	(map, unmap, revoke), alone elsewhere (fault, vmap, vunmap); the
 *	windows are dropped outside it
 * @revoked: set once; read with READ_ONCE by begin/end_cpu_access
 * @zapped: the CPU mappings were zapped after the revocation
 * @dropped: the windows were dropped (or are being dropped)
 * @nr_maps: importer mappings (map_dma_buf not yet unmapped)
 * @nr_pins: pinned attachments (counted only: windows never move)
 * @vaddr: the kernel mapping (vmap), or NULL
 */
struct scif_dmabuf {
	struct scif_devdma dd;
	struct dma_buf *dmabuf;
	struct scif_endpt *ep;
	struct inode *inode;
	s64 off;
	u64 len;
	int prot;
	unsigned long nr_segs;
	struct scif_dmabuf_seg *segs;
	bool live;
	/* lock protects the fields below */
	struct mutex lock;
	bool revoked;
	bool zapped;
	bool dropped;
	unsigned int nr_maps;
	unsigned int nr_pins;
	void *vaddr;
};

/**
 * struct scif_dmabuf_map - one map_dma_buf of an attachment
 * @sgt: the table given to the importer
 * @pds: remote: each segment as the node layer mapped it; else NULL
 * @nr_pds: entries of @pds mapped
 * @dev: the importer's device
 * @dir: the direction
 */
struct scif_dmabuf_map {
	struct sg_table sgt;
	struct scif_pdmap *pds;
	unsigned long nr_pds;
	struct device *dev;
	enum dma_data_direction dir;
};

static const struct dma_buf_ops scif_dmabuf_ops;

/*
 * Whether the windows may go now: revoked, zapped, and nothing maps
 * them.  Marks them dropped; the caller drops them outside the lock.
 */
static bool scif_dmabuf_may_drop(struct scif_dmabuf *s)
{
	lockdep_assert_held(&s->lock);
	if (!s->revoked || !s->zapped || s->nr_maps || s->vaddr ||
	    s->dropped)
		return false;
	s->dropped = true;
	return true;
}

/* The revocation (devdma work): tell the importers, zap, maybe drop. */
static void scif_dmabuf_revoke(struct scif_devdma *d)
{
	struct scif_dmabuf *s = container_of(d, struct scif_dmabuf, dd);
	bool drop;

	dma_resv_lock(s->dmabuf->resv, NULL);
	mutex_lock(&s->lock);
	s->revoked = true;
	mutex_unlock(&s->lock);
	dma_buf_move_notify(s->dmabuf);
	dma_resv_unlock(s->dmabuf->resv);
	unmap_mapping_range(s->inode->i_mapping, 0, 0, 1);
	mutex_lock(&s->lock);
	s->zapped = true;
	drop = scif_dmabuf_may_drop(s);
	mutex_unlock(&s->lock);
	if (drop)
		scif_devdma_drop(&s->dd);
}

static const struct scif_devdma_ops scif_dmabuf_devdma_ops = {
	.revoke = scif_dmabuf_revoke,
};

/* Whether SCIF_PROT_* @prot allows a device access in direction @dir. */
static bool scif_dmabuf_dir_ok(int prot, enum dma_data_direction dir)
{
	switch (dir) {
	case DMA_TO_DEVICE:
		return prot & SCIF_PROT_READ;
	case DMA_FROM_DEVICE:
		return prot & SCIF_PROT_WRITE;
	case DMA_BIDIRECTIONAL:
		return (prot & SCIF_PROT_READ) && (prot & SCIF_PROT_WRITE);
	default:
		return false;
	}
}

static int scif_dmabuf_attach(struct dma_buf *dmabuf,
			      struct dma_buf_attachment *attach)
{
	struct scif_dmabuf *s = dmabuf->priv;

	/* A static importer could never be told; no pages to give. */
	if (s->dd.remote && (!attach->importer_ops || !attach->peer2peer))
		return -EOPNOTSUPP;
	return 0;
}

static int scif_dmabuf_pin(struct dma_buf_attachment *attach)
{
	struct scif_dmabuf *s = attach->dmabuf->priv;

	mutex_lock(&s->lock);
	s->nr_pins++;
	mutex_unlock(&s->lock);
	return 0;
}

static void scif_dmabuf_unpin(struct dma_buf_attachment *attach)
{
	struct scif_dmabuf *s = attach->dmabuf->priv;

	mutex_lock(&s->lock);
	if (!WARN_ON_ONCE(!s->nr_pins))
		s->nr_pins--;
	mutex_unlock(&s->lock);
}

/* Undo what @m mapped and free it. */
static void scif_dmabuf_map_free(struct scif_dmabuf *s,
				 struct scif_dmabuf_map *m, bool mapped)
{
	unsigned long i;

	if (m->pds) {
		for (i = 0; i < m->nr_pds; i++)
			scif_node_peer_dma_unmap(&m->pds[i]);
		kvfree(m->pds);
	} else if (mapped) {
		dma_unmap_sgtable(m->dev, &m->sgt, m->dir, 0);
	}
	sg_free_table(&m->sgt);
	kfree(m);
}

/* Local RAM: the pages, mapped by the DMA API for the importer. */
static int scif_dmabuf_map_local(struct scif_dmabuf *s,
				 struct scif_dmabuf_map *m)
{
	struct scatterlist *sg;
	unsigned long i;

	for_each_sgtable_sg(&m->sgt, sg, i)
		sg_set_page(sg, pfn_to_page(PHYS_PFN(s->segs[i].addr)),
			    s->segs[i].len, 0);
	return dma_map_sgtable(m->dev, &m->sgt, m->dir, 0);
}

/* Remote: no pages, the addresses the node layer maps for the device. */
static int scif_dmabuf_map_remote(struct scif_dmabuf *s,
				  struct scif_dmabuf_map *m)
{
	const struct scif_dmabuf_seg *seg;
	struct scatterlist *sg;
	unsigned long i;
	int err;

	m->pds = scif_kvcalloc(s->nr_segs, sizeof(*m->pds),
			       GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!m->pds)
		return -ENOMEM;
	for_each_sgtable_sg(&m->sgt, sg, i) {
		seg = &s->segs[i];
		err = scif_node_peer_dma_map(s->dd.wins.rws[seg->win]->node,
					     &m->pds[i], m->dev, seg->addr,
					     seg->len, m->dir);
		if (err)
			/* A range the link does not reach cannot be mapped. */
			return err == -EINVAL ? -ENXIO : err;
		m->nr_pds++;
		sg_dma_address(sg) = m->pds[i].dma;
		sg_dma_len(sg) = seg->len;
	}
	m->sgt.nents = m->sgt.orig_nents;
	return 0;
}

static struct sg_table *scif_dmabuf_map(struct dma_buf_attachment *attach,
					enum dma_data_direction dir)
{
	struct scif_dmabuf *s = attach->dmabuf->priv;
	struct scif_dmabuf_map *m;
	int err;

	dma_resv_assert_held(attach->dmabuf->resv);
	if (!scif_dmabuf_dir_ok(s->prot, dir))
		return ERR_PTR(-EACCES);
	if (READ_ONCE(s->revoked))
		return ERR_PTR(-ENODEV);
	m = scif_kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m)
		return ERR_PTR(-ENOMEM);
	m->dev = attach->dev;
	m->dir = dir;
	err = sg_alloc_table(&m->sgt, s->nr_segs, GFP_KERNEL_ACCOUNT);
	if (err) {
		kfree(m);
		return ERR_PTR(err);
	}
	/* revoked is only set under the reservation lock, which is held. */
	if (s->dd.remote)
		err = scif_dmabuf_map_remote(s, m);
	else
		err = scif_dmabuf_map_local(s, m);
	if (err) {
		scif_dmabuf_map_free(s, m, false);
		return ERR_PTR(err);
	}
	mutex_lock(&s->lock);
	s->nr_maps++;
	mutex_unlock(&s->lock);
	return &m->sgt;
}

static void scif_dmabuf_unmap(struct dma_buf_attachment *attach,
			      struct sg_table *sgt,
			      enum dma_data_direction dir)
{
	struct scif_dmabuf *s = attach->dmabuf->priv;
	struct scif_dmabuf_map *m = container_of(sgt, struct scif_dmabuf_map,
						 sgt);
	bool drop;

	scif_dmabuf_map_free(s, m, true);
	mutex_lock(&s->lock);
	if (!WARN_ON_ONCE(!s->nr_maps))
		s->nr_maps--;
	drop = scif_dmabuf_may_drop(s);
	mutex_unlock(&s->lock);
	if (drop)
		scif_devdma_drop(&s->dd);
}

/* The segment holding byte @off of the range (binary search). */
static const struct scif_dmabuf_seg *scif_dmabuf_seg_find(const struct scif_dmabuf *s,
							  u64 off)
{
	unsigned long lo = 0, hi = s->nr_segs, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (off < s->segs[mid].off)
			hi = mid;
		else if (off >= s->segs[mid].off + s->segs[mid].len)
			lo = mid + 1;
		else
			return &s->segs[mid];
	}
	return NULL;
}

/* The page frame of byte @off of the range; under s->lock, not revoked. */
static int scif_dmabuf_pfn(struct scif_dmabuf *s, u64 off, unsigned long *pfn,
			   bool *wc)
{
	const struct scif_dmabuf_seg *seg = scif_dmabuf_seg_find(s, off);
	phys_addr_t phys;
	u64 addr;
	int err;

	if (!seg)
		return -ENXIO;
	addr = seg->addr + (off - seg->off);
	if (!s->dd.remote) {
		*pfn = PHYS_PFN(addr);
		*wc = false;
		return 0;
	}
	err = scif_node_peer_phys(s->dd.wins.rws[seg->win]->node, addr,
				  PAGE_SIZE, &phys, wc);
	if (err)
		return err;
	*pfn = PHYS_PFN(phys);
	return 0;
}

static vm_fault_t scif_dmabuf_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct scif_dmabuf *s = vma->vm_private_data;
	u64 off = (u64)vmf->pgoff << PAGE_SHIFT;
	unsigned long pfn;
	vm_fault_t ret;
	bool wc;

	if (off >= s->len)
		return VM_FAULT_SIGBUS;
	mutex_lock(&s->lock);
	if (s->revoked || scif_dmabuf_pfn(s, off, &pfn, &wc))
		ret = VM_FAULT_SIGBUS;
	else
		ret = scif_mmap_insert(vma, vmf->address, pfn);
	mutex_unlock(&s->lock);
	return ret;
}

static const struct vm_operations_struct scif_dmabuf_vm_ops = {
	.fault = scif_dmabuf_fault,
};

static int scif_dmabuf_mmap(struct dma_buf *dmabuf, struct vm_area_struct *vma)
{
	struct scif_dmabuf *s = dmabuf->priv;
	vm_flags_t clear = 0;
	unsigned long pfn;
	bool wc = false;
	int err;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (!(s->prot & SCIF_PROT_READ) ||
	    ((vma->vm_flags & VM_WRITE) && !(s->prot & SCIF_PROT_WRITE)))
		return -EACCES;
	if (!(s->prot & SCIF_PROT_WRITE))
		clear |= VM_MAYWRITE;
	mutex_lock(&s->lock);
	err = s->revoked ? -ENODEV : 0;
	/* How the bus maps the peer's memory: the first page tells. */
	if (!err && s->dd.remote)
		err = scif_dmabuf_pfn(s, 0, &pfn, &wc);
	mutex_unlock(&s->lock);
	if (err)
		return err == -EINVAL ? -ENXIO : err;
	scif_mmap_vm_flags_mod(vma, SCIF_VM_FLAGS | VM_DONTCOPY, clear);
	if (wc)
		vma->vm_page_prot = pgprot_writecombine(vma->vm_page_prot);
	vma->vm_private_data = s;
	vma->vm_ops = &scif_dmabuf_vm_ops;
	return 0;
}

/* The pages of a local range, for vmap(); NULL if out of memory. */
static struct page **scif_dmabuf_pages(struct scif_dmabuf *s)
{
	unsigned long i, j, n = 0;
	struct page **pages;

	pages = scif_kvmalloc_array(s->len >> PAGE_SHIFT, sizeof(*pages),
				    GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!pages)
		return NULL;
	for (i = 0; i < s->nr_segs; i++)
		for (j = 0; j < s->segs[i].len >> PAGE_SHIFT; j++)
			pages[n++] = pfn_to_page(PHYS_PFN(s->segs[i].addr) + j);
	return pages;
}

static int scif_dmabuf_vmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	struct scif_dmabuf *s = dmabuf->priv;
	struct page **pages;
	void *vaddr = NULL;
	int err = 0;

	if (s->dd.remote)
		return -EOPNOTSUPP;
	mutex_lock(&s->lock);
	if (s->revoked)
		err = -ENODEV;
	else if (s->vaddr)
		err = -EBUSY;
	if (err)
		goto unlock;
	pages = scif_dmabuf_pages(s);
	if (pages)
		vaddr = vmap(pages, s->len >> PAGE_SHIFT, VM_MAP, PAGE_KERNEL);
	kvfree(pages);
	if (!vaddr) {
		err = -ENOMEM;
		goto unlock;
	}
	s->vaddr = vaddr;
	iosys_map_set_vaddr(map, vaddr);
unlock:
	mutex_unlock(&s->lock);
	return err;
}

static void scif_dmabuf_vunmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	struct scif_dmabuf *s = dmabuf->priv;
	bool drop;

	mutex_lock(&s->lock);
	if (WARN_ON_ONCE(!s->vaddr || map->vaddr != s->vaddr)) {
		mutex_unlock(&s->lock);
		return;
	}
	vunmap(s->vaddr);
	s->vaddr = NULL;
	drop = scif_dmabuf_may_drop(s);
	mutex_unlock(&s->lock);
	if (drop)
		scif_devdma_drop(&s->dd);
}

/* Nothing to flush on a coherent machine; refused once revoked. */
static int scif_dmabuf_cpu_access(struct dma_buf *dmabuf,
				  enum dma_data_direction dir)
{
	struct scif_dmabuf *s = dmabuf->priv;

	return READ_ONCE(s->revoked) ? -ENODEV : 0;
}

/* Free what the export made; the windows and the mapping are let go. */
static void scif_dmabuf_free(struct scif_dmabuf *s)
{
	if (s->inode)
		iput(s->inode);
	atomic_dec(&s->ep->devdma.dmabufs);
	scif_epd_put(s->ep);
	kvfree(s->segs);
	kfree(s);
}

static void scif_dmabuf_release(struct dma_buf *dmabuf)
{
	struct scif_dmabuf *s = dmabuf->priv;

	/* Ends it, or waits for its revocation under way. */
	if (s->live)
		scif_devdma_end(&s->dd);
	scif_devdma_drop(&s->dd);
	scif_dmabuf_free(s);
}

static const struct dma_buf_ops scif_dmabuf_ops = {
	.attach = scif_dmabuf_attach,
	.pin = scif_dmabuf_pin,
	.unpin = scif_dmabuf_unpin,
	.map_dma_buf = scif_dmabuf_map,
	.unmap_dma_buf = scif_dmabuf_unmap,
	.release = scif_dmabuf_release,
	.begin_cpu_access = scif_dmabuf_cpu_access,
	.end_cpu_access = scif_dmabuf_cpu_access,
	.mmap = scif_dmabuf_mmap,
	.vmap = scif_dmabuf_vmap,
	.vunmap = scif_dmabuf_vunmap,
};

/* The pieces of @s's held range, cut at SCIF_DMABUF_SEG_MAX. */
static int scif_dmabuf_segs(struct scif_dmabuf *s, u64 off)
{
	struct scif_pdmap *pieces;
	unsigned long i, n, nr = 0;
	u64 done, cut;

	n = scif_devdma_walk(&s->dd, off, s->len, NULL);
	pieces = scif_kvcalloc(n, sizeof(*pieces),
			       GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!pieces)
		return -ENOMEM;
	scif_devdma_walk(&s->dd, off, s->len, pieces);
	for (i = 0; i < n; i++)
		nr += DIV_ROUND_UP(pieces[i].len, SCIF_DMABUF_SEG_MAX);
	s->segs = scif_kvcalloc(nr, sizeof(*s->segs),
				GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!s->segs) {
		kvfree(pieces);
		return -ENOMEM;
	}
	done = 0;
	for (i = 0; i < n; i++) {
		for (cut = 0; cut < pieces[i].len; cut += SCIF_DMABUF_SEG_MAX) {
			struct scif_dmabuf_seg *seg = &s->segs[s->nr_segs++];

			seg->addr = pieces[i].addr + cut;
			seg->off = done;
			seg->len = min_t(u64, pieces[i].len - cut,
					 SCIF_DMABUF_SEG_MAX);
			seg->win = pieces[i].dma;
			done += seg->len;
		}
	}
	kvfree(pieces);
	return 0;
}

/* Whether the arguments of an export are acceptable. */
static bool scif_dmabuf_args_ok(s64 offset, u64 len, int prot, int flags)
{
	u64 end;

	return prot && !(prot & ~(SCIF_PROT_READ | SCIF_PROT_WRITE)) &&
	       !(flags & ~SCIF_DMABUF_REMOTE) && offset >= 0 && len &&
	       PAGE_ALIGNED(offset) && PAGE_ALIGNED(len) &&
	       !check_add_overflow((u64)offset, len, &end) &&
	       end - 1 <= S64_MAX && len >> PAGE_SHIFT <= INT_MAX;
}

/**
 * scif_dmabuf_export() - export a range of windows as a dma-buf
 * @epd: a connected endpoint
 * @offset: start of the range, page aligned, in @epd's registered
 *	address space, or in the peer's with SCIF_DMABUF_REMOTE
 * @len: bytes, a non-zero multiple of the page size
 * @prot: SCIF_PROT_READ and/or SCIF_PROT_WRITE, which every window of the
 *	range must allow; they bound what importers and mmap() may do
 * @flags: 0 (a range of @epd's windows, RAM only) or SCIF_DMABUF_REMOTE
 *	(of the peer's; the caller decides who may: SCIF_DMABUF_EXPORT
 *	asks for CAP_SYS_RAWIO)
 *
 * The range must lie in windows contiguous in their address space.  The
 * dma-buf holds @epd and the windows; it is revoked (importers told by
 * move_notify, CPU mappings zapped, new maps -ENODEV) when a window of
 * the range is unregistered, the connection ends or the node is lost.
 * At most max_dmabufs_per_ep per endpoint.  dma_buf_fd() gives it a
 * descriptor; dma_buf_put() releases it.
 *
 * Context: process context; may sleep.
 * Return: the dma-buf, or ERR_PTR() of -EINVAL (arguments), -ENXIO (not
 * inside windows, a staged window), -EACCES (a window forbids @prot),
 * -EOPNOTSUPP (a local window over device memory), -EMFILE (budget),
 * -ENOMEM, -ENOTCONN, -ECONNRESET or -ENODEV.
 */
struct dma_buf *scif_dmabuf_export(scif_epd_t epd, off_t offset, size_t len,
				   int prot, int flags)
{
	DEFINE_DMA_BUF_EXPORT_INFO(exp);
	struct scif_endpt *ep = epd;
	struct dma_buf *dmabuf;
	struct scif_dmabuf *s;
	int err;

	if (!ep || !scif_dmabuf_args_ok(offset, len, prot, flags))
		return ERR_PTR(-EINVAL);
	if (atomic_inc_return(&ep->devdma.dmabufs) >
	    READ_ONCE(scif_dmabuf_max)) {
		atomic_dec(&ep->devdma.dmabufs);
		return ERR_PTR(-EMFILE);
	}
	s = scif_kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s) {
		atomic_dec(&ep->devdma.dmabufs);
		return ERR_PTR(-ENOMEM);
	}
	kref_get(&ep->ref);
	s->ep = ep;
	s->off = offset;
	s->len = len;
	s->prot = prot;
	mutex_init(&s->lock);
	err = scif_devdma_begin(&s->dd, ep, &scif_dmabuf_devdma_ops, offset,
				len, prot, flags & SCIF_DMABUF_REMOTE);
	if (err)
		goto free;
	/* Listed from here: a revocation cancels the export. */
	err = scif_dmabuf_segs(s, offset);
	if (err)
		goto cancel;
	exp.exp_name = KBUILD_MODNAME;
	exp.owner = THIS_MODULE;
	exp.ops = &scif_dmabuf_ops;
	exp.size = len;
	exp.flags = O_RDWR;
	exp.priv = s;
	dmabuf = dma_buf_export(&exp);
	if (IS_ERR(dmabuf)) {
		err = PTR_ERR(dmabuf);
		goto cancel;
	}
	s->dmabuf = dmabuf;
	s->inode = file_inode(dmabuf->file);
	ihold(s->inode);
	err = scif_devdma_live(&s->dd);
	if (err) {
		/* Revoked while being made: release drops and frees. */
		dma_buf_put(dmabuf);
		return ERR_PTR(err);
	}
	s->live = true;
	return dmabuf;

cancel:
	scif_devdma_cancel(&s->dd);
	scif_devdma_drop(&s->dd);
free:
	scif_dmabuf_free(s);
	return ERR_PTR(err);
}
EXPORT_SYMBOL_GPL(scif_dmabuf_export);

/**
 * scif_is_dmabuf() - whether a dma-buf was exported by SCIF
 * @dmabuf: the dma-buf; NULL is none
 *
 * Context: any context.
 * Return: true if scif_dmabuf_export() made it.
 */
bool scif_is_dmabuf(struct dma_buf *dmabuf)
{
	return dmabuf && dmabuf->ops == &scif_dmabuf_ops;
}
EXPORT_SYMBOL_GPL(scif_is_dmabuf);

/**
 * scif_dmabuf_range() - the local range a SCIF dma-buf is over
 * @dmabuf: the dma-buf; its caller holds it
 * @epd: receives its endpoint, valid (referenced by the dma-buf) as long
 *	as the caller holds @dmabuf, connected or not
 * @offset: receives the range's first byte in @epd's registered space
 * @len: receives its length (the dma-buf's size)
 * @prot: receives the SCIF_PROT_* of the export
 *
 * Context: any context; the reservation lock held for the answer
 * -ENODEV to stay true (the revocation marks the dma-buf under it).
 * Return: 0; -EINVAL if scif_dmabuf_export() did not make @dmabuf;
 * -EOPNOTSUPP if it is a range of the peer's windows; -ENODEV if it was
 * revoked.
 */
int scif_dmabuf_range(struct dma_buf *dmabuf, scif_epd_t *epd,
		      off_t *offset, size_t *len, int *prot)
{
	struct scif_dmabuf *s;

	if (!scif_is_dmabuf(dmabuf))
		return -EINVAL;
	s = dmabuf->priv;
	if (s->dd.remote)
		return -EOPNOTSUPP;
	/* Set under the reservation lock, which the caller may hold. */
	if (READ_ONCE(s->revoked))
		return -ENODEV;
	*epd = s->ep;
	*offset = s->off;
	*len = s->len;
	*prot = s->prot;
	return 0;
}
EXPORT_SYMBOL_GPL(scif_dmabuf_range);

/**
 * scif_dmabuf_ioctl() - SCIF_DMABUF_EXPORT
 * @ep: the endpoint of the file
 * @uarg: the user's struct scifioctl_dmabuf
 *
 * A remote range needs CAP_SYS_RAWIO.  The descriptor is installed only
 * once the user's structure was written.
 *
 * Context: process context (ioctl).
 * Return: 0 or an error of scif_dmabuf_export(), -EPERM, -EFAULT, or
 * -EMFILE (no descriptor).
 */
long scif_dmabuf_ioctl(struct scif_endpt *ep,
		       struct scifioctl_dmabuf __user *uarg)
{
	struct scifioctl_dmabuf arg;
	struct dma_buf *dmabuf;
	int fd;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.reserved ||
	    !scif_dmabuf_args_ok(arg.offset, arg.len, arg.prot, arg.flags))
		return -EINVAL;
	if ((arg.flags & SCIF_DMABUF_REMOTE) && !capable(CAP_SYS_RAWIO))
		return -EPERM;
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return fd;
	dmabuf = scif_dmabuf_export(ep, arg.offset, arg.len, arg.prot,
				    arg.flags);
	if (IS_ERR(dmabuf)) {
		put_unused_fd(fd);
		return PTR_ERR(dmabuf);
	}
	if (put_user(fd, &uarg->fd)) {
		put_unused_fd(fd);
		dma_buf_put(dmabuf);
		return -EFAULT;
	}
	fd_install(fd, dmabuf->file);
	return 0;
}
