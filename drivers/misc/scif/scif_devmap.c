// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: device-map files (SCIF_DEVMAP_OPEN).  A device-map file maps
 * a range of the peer's windows for a process that hands it to a device
 * of its own (VFIO_IOMMU_MAP_DMA of the file's mapping).  It is a device
 * mapping of scif_devdma.c: it holds the windows, and the peer's node
 * (whose going then closes the aperture until the file is released).
 *
 * Unlike scif_mmap(), its revocation (the peer unregistered a window of
 * the range, the connection ended, the node went) does not let go of the
 * windows: it zaps the CPU's mappings, says so through poll (EPOLLPRI |
 * EPOLLERR) and SCIF_DEVMAP_STATUS, and keeps the peer's pages pinned
 * (the peer's window withdrawn) until the file is released and
 * devmap_linger_ms more have passed, since the IOMMU may still map them
 * for the process's device (Documentation/scif/devices.rst, "User space:
 * the device-map file").
 *
 * Lifetime: the file holds the endpoint's file from SCIF_DEVMAP_OPEN to
 * the end of the linger (so the endpoint, and the module, stay); the
 * linger runs on scif_devdma's workqueue, which the module's exit
 * destroys after the last one ran.  A devmap is freed by its linger.
 */
#define pr_fmt(fmt) "scif: " fmt

#include <linux/capability.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "scif_devdma.h"
#include "scif_devmap.h"
#include "scif_endpt.h"
#include "scif_fault.h"
#include "scif_lmap.h"
#include "scif_mmap.h"
#include "scif_nodes.h"

static unsigned int scif_devmap_linger_ms = 1000;
module_param_named(devmap_linger_ms, scif_devmap_linger_ms, uint, 0644);
MODULE_PARM_DESC(devmap_linger_ms,
		 "Milliseconds a released device-map file keeps the peer's pages (0 to 60000, default 1000)");

static unsigned int scif_max_devmaps_ep = 64;
module_param_named(max_devmaps_per_ep, scif_max_devmaps_ep, uint, 0644);
MODULE_PARM_DESC(max_devmaps_per_ep,
		 "Device-map files per endpoint (default 64)");

/**
 * struct scif_devmap_piece - a physically contiguous piece of the range
 * @pgoff: its first page in the file
 * @nr_pages: its pages
 * @pfn: where the CPU (and a device through the IOMMU) reaches it
 */
struct scif_devmap_piece {
	unsigned long pgoff;
	unsigned long nr_pages;
	unsigned long pfn;
};

/**
 * struct scif_devmap - a device-map file's state
 * @dd: the device mapping (windows, node hold, revocation)
 * @epf: the endpoint's file, referenced until the linger ends
 * @inode: the file's inode, whose mapping is zapped at revocation
 * @lock: serialises mmap() against revocation (@revoked)
 * @revoked: set (under @lock) when revoked; @why says why
 * @why: a negative errno: -ENXIO, -ECONNRESET or -ENODEV
 * @wq: poll waiters
 * @prot: SCIF_PROT_* asked for
 * @wc: map write-combined, as the bus says
 * @nr_pages: the range's pages
 * @nr_pieces: entries in @pieces
 * @pieces: the range, piece by piece
 * @linger: lets the windows go after the release
 */
struct scif_devmap {
	struct scif_devdma dd;
	struct file *epf;
	struct inode *inode;
	struct mutex lock;	/* protects revoked, why */
	bool revoked;
	int why;
	wait_queue_head_t wq;
	int prot;
	bool wc;
	unsigned long nr_pages;
	unsigned long nr_pieces;
	struct scif_devmap_piece *pieces;
	struct delayed_work linger;
};

/* Revocation (devdma work, no SCIF lock): zap, tell; keep the windows. */
static void scif_devmap_revoke(struct scif_devdma *d)
{
	struct scif_devmap *dm = container_of(d, struct scif_devmap, dd);

	mutex_lock(&dm->lock);
	dm->revoked = true;
	dm->why = d->why;
	mutex_unlock(&dm->lock);
	unmap_mapping_range(dm->inode->i_mapping, 0, 0, 1);
	wake_up_interruptible_poll(&dm->wq, EPOLLPRI | EPOLLERR);
}

static const struct scif_devdma_ops scif_devmap_ops = {
	.revoke = scif_devmap_revoke,
};

static void scif_devmap_free(struct scif_devmap *dm)
{
	kvfree(dm->pieces);
	kfree(dm);
}

/* The end of the linger: the peer may have its pages back. */
static void scif_devmap_linger_work(struct work_struct *work)
{
	struct scif_devmap *dm = container_of(to_delayed_work(work),
					      struct scif_devmap, linger);
	struct scif_endpt *ep = dm->epf->private_data;
	struct file *epf = dm->epf;

	scif_devdma_drop(&dm->dd);
	atomic_dec(&ep->devdma.nr_files);
	scif_devmap_free(dm);
	fput(epf);
}

static int scif_devmap_release(struct inode *inode, struct file *f)
{
	struct scif_devmap *dm = f->private_data;
	unsigned int ms = min(READ_ONCE(scif_devmap_linger_ms), 60000U);

	/* Live: off the endpoint's list now; revoked: its work is done. */
	scif_devdma_end(&dm->dd);
	scif_devdma_queue_delayed(&dm->linger, msecs_to_jiffies(ms));
	return 0;
}

static vm_fault_t scif_devmap_fault(struct vm_fault *vmf)
{
	/* Every PTE was installed at mmap(); a fault is a revoked range. */
	return VM_FAULT_SIGBUS;
}

static const struct vm_operations_struct scif_devmap_vm_ops = {
	.fault = scif_devmap_fault,
};

/* Install the PTEs of @vma's part of the range; under dm->lock. */
static int scif_devmap_remap(struct scif_devmap *dm,
			     struct vm_area_struct *vma)
{
	unsigned long first = vma->vm_pgoff, n = vma_pages(vma), i, lo, hi;
	const struct scif_devmap_piece *p;
	int err;

	for (i = 0; i < dm->nr_pieces; i++) {
		p = &dm->pieces[i];
		lo = max(first, p->pgoff);
		hi = min(first + n, p->pgoff + p->nr_pages);
		if (lo >= hi)
			continue;
		err = remap_pfn_range(vma,
				      vma->vm_start + ((lo - first) << PAGE_SHIFT),
				      p->pfn + (lo - p->pgoff),
				      (hi - lo) << PAGE_SHIFT, vma->vm_page_prot);
		if (err)
			return err;
	}
	return 0;
}

static int scif_devmap_mmap(struct file *f, struct vm_area_struct *vma)
{
	struct scif_devmap *dm = f->private_data;
	unsigned long n = vma_pages(vma);
	int err;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_pgoff > dm->nr_pages || n > dm->nr_pages - vma->vm_pgoff)
		return -ENXIO;
	if (((vma->vm_flags & VM_WRITE) && !(dm->prot & SCIF_PROT_WRITE)) ||
	    ((vma->vm_flags & VM_READ) && !(dm->prot & SCIF_PROT_READ)))
		return -EACCES;
	scif_mmap_vm_flags_mod(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP,
			       dm->prot & SCIF_PROT_WRITE ? 0 : VM_MAYWRITE);
	if (dm->wc)
		vma->vm_page_prot = pgprot_writecombine(vma->vm_page_prot);
	vma->vm_ops = &scif_devmap_vm_ops;
	mutex_lock(&dm->lock);
	err = dm->revoked ? dm->why : scif_devmap_remap(dm, vma);
	mutex_unlock(&dm->lock);
	return err;
}

static __poll_t scif_devmap_poll(struct file *f, poll_table *wait)
{
	struct scif_devmap *dm = f->private_data;
	__poll_t mask = 0;

	poll_wait(f, &dm->wq, wait);
	mutex_lock(&dm->lock);
	if (dm->revoked)
		mask = EPOLLPRI | EPOLLERR;
	mutex_unlock(&dm->lock);
	return mask;
}

static long scif_devmap_ioctl(struct file *f, unsigned int cmd,
			      unsigned long arg)
{
	struct scif_devmap *dm = f->private_data;
	struct scifioctl_devmap_status st = { };

	if (cmd != SCIF_DEVMAP_STATUS)
		return -ENOTTY;
	mutex_lock(&dm->lock);
	st.state = dm->revoked;
	st.why = dm->revoked ? -dm->why : 0;
	mutex_unlock(&dm->lock);
	if (copy_to_user((void __user *)arg, &st, sizeof(st)))
		return -EFAULT;
	return 0;
}

static const struct file_operations scif_devmap_fops = {
	.owner = THIS_MODULE,
	.release = scif_devmap_release,
	.mmap = scif_devmap_mmap,
	.poll = scif_devmap_poll,
	.unlocked_ioctl = scif_devmap_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

/* Where the CPU reaches each piece of @dm's held range. */
static int scif_devmap_pieces(struct scif_devmap *dm, u64 off, u64 len)
{
	struct scif_pdmap *pd;
	unsigned long i, n;
	phys_addr_t phys;
	int err = -ENOMEM;
	u64 pos = 0;

	n = scif_devdma_walk(&dm->dd, off, len, NULL);
	pd = scif_kvmalloc_array(n, sizeof(*pd), GFP_KERNEL_ACCOUNT);
	dm->pieces = scif_kvmalloc_array(n, sizeof(*dm->pieces),
					 GFP_KERNEL_ACCOUNT);
	if (!pd || !dm->pieces)
		goto out;
	scif_devdma_walk(&dm->dd, off, len, pd);
	for (i = 0; i < n; i++) {
		err = scif_node_peer_phys(dm->dd.wins.rws[pd[i].dma]->node,
					  pd[i].addr, pd[i].len, &phys,
					  &dm->wc);
		if (err) {
			/* No bus that maps it: the node went, or cannot. */
			err = err == -EINVAL ? -ENXIO : err;
			goto out;
		}
		dm->pieces[i].pgoff = pos >> PAGE_SHIFT;
		dm->pieces[i].nr_pages = pd[i].len >> PAGE_SHIFT;
		dm->pieces[i].pfn = PHYS_PFN(phys);
		pos += pd[i].len;
	}
	dm->nr_pieces = n;
	err = 0;
out:
	kvfree(pd);
	return err;
}

/* Check SCIF_DEVMAP_OPEN's argument. */
static int scif_devmap_check(const struct scifioctl_devmap *req)
{
	u64 end;

	if (req->flags || req->reserved || req->offset < 0 || !req->len ||
	    !PAGE_ALIGNED(req->offset) || !PAGE_ALIGNED(req->len) ||
	    check_add_overflow((u64)req->offset, req->len, &end) ||
	    end - 1 > S64_MAX || req->len >> PAGE_SHIFT > INT_MAX ||
	    !req->prot || (req->prot & ~(SCIF_PROT_READ | SCIF_PROT_WRITE)))
		return -EINVAL;
	return 0;
}

/*
 * A device-map file of @ep's peer's range; the caller checked @req and
 * counted the file in nr_files, which a failure here counts down (or,
 * once the file exists, its linger).
 */
static struct file *scif_devmap_make(struct file *epf, struct scif_endpt *ep,
				     const struct scifioctl_devmap *req)
{
	struct scif_devmap *dm;
	struct file *f;
	int err = -ENOMEM;

	dm = scif_kzalloc(sizeof(*dm), GFP_KERNEL_ACCOUNT);
	if (!dm)
		return ERR_PTR(-ENOMEM);
	mutex_init(&dm->lock);
	init_waitqueue_head(&dm->wq);
	INIT_DELAYED_WORK(&dm->linger, scif_devmap_linger_work);
	dm->prot = req->prot;
	dm->nr_pages = req->len >> PAGE_SHIFT;
	dm->inode = scif_mmap_alloc_inode();
	if (IS_ERR(dm->inode))
		goto free;
	err = scif_devdma_begin(&dm->dd, ep, &scif_devmap_ops, req->offset,
				req->len, req->prot, true);
	if (err)
		goto iput;
	err = scif_devmap_pieces(dm, req->offset, req->len);
	if (err)
		goto cancel;
	/* The file's release puts the module, as for a file opened by path. */
	__module_get(THIS_MODULE);
	f = scif_mmap_alloc_file(dm->inode, "[scif-devmap]", &scif_devmap_fops);
	if (IS_ERR(f)) {
		module_put(THIS_MODULE);
		err = PTR_ERR(f);
		goto cancel;
	}
	f->private_data = dm;
	dm->epf = get_file(epf);
	err = scif_devdma_live(&dm->dd);
	if (err) {
		/* Revoked while being made: the file's release drops it all. */
		fput(f);
		return ERR_PTR(err);
	}
	return f;

cancel:
	scif_devdma_cancel(&dm->dd);
	scif_devdma_drop(&dm->dd);
iput:
	iput(dm->inode);
free:
	scif_devmap_free(dm);
	atomic_dec(&ep->devdma.nr_files);
	return ERR_PTR(err);
}

/**
 * scif_devmap_open() - SCIF_DEVMAP_OPEN: a device-map file of a range of
 *	the peer's windows
 * @epf: the endpoint's file (held by the new file until its linger ends)
 * @ep: its endpoint
 * @req: the request; @req->fd receives the descriptor reserved for the
 *	file, which the caller installs (fd_install()) or lets go of with
 *	the file (fput(), put_unused_fd())
 *
 * Context: process context; takes rma.lock, devdma.lock.
 * Return: the file; ERR_PTR(-EPERM) without CAP_SYS_RAWIO; -EINVAL for
 * the argument; -EOPNOTSUPP if the bus cannot close the node's aperture
 * or map its memory into processes; -EMFILE past max_devmaps_per_ep or
 * out of descriptors; else as mmap of the range (-ENXIO, -EACCES,
 * -ENOTCONN, -ECONNRESET, -ENODEV, -ENOMEM).
 */
struct file *scif_devmap_open(struct file *epf, struct scif_endpt *ep,
			      struct scifioctl_devmap *req)
{
	struct file *f;
	int fd, err;

	if (!capable(CAP_SYS_RAWIO))
		return ERR_PTR(-EPERM);
	err = scif_devmap_check(req);
	if (err)
		return ERR_PTR(err);
	err = scif_window_conn_err(ep);
	if (err)
		return ERR_PTR(err);
	if (!scif_node_can_close(ep->node))
		return ERR_PTR(-EOPNOTSUPP);
	if (atomic_inc_return(&ep->devdma.nr_files) > scif_max_devmaps_ep) {
		err = -EMFILE;
		goto uncount;
	}
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		err = fd;
		goto uncount;
	}
	f = scif_devmap_make(epf, ep, req);
	if (IS_ERR(f)) {
		put_unused_fd(fd);
		return f;
	}
	req->fd = fd;
	return f;

uncount:
	atomic_dec(&ep->devdma.nr_files);
	return ERR_PTR(err);
}
