// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: the user-space data path ("fast path").
 *
 * SCIF_FP_OPEN on a connected endpoint gives the process a file that maps
 * three things (<uapi/linux/scif_ioctl.h>): a page of counters shared with
 * the kernel (struct scif_fp_ctl), this side's half of the connection's
 * queue pair, read-only, and the peer's half, through the link.  With
 * them libscif sends and receives without entering the kernel, and enters
 * it only to sleep (SCIF_SEND, SCIF_RECV) and to send the peer the DATA or
 * SPACE message it asked for (SCIF_FP_NOTIFY).  The protocol on the rings
 * is the kernel's own (struct scif_qp_shm): the peer cannot tell the
 * difference.
 *
 * Once the page exists, its counts are the endpoint's: the kernel's data
 * path loads them into struct scif_rb under the data mutexes and stores
 * them back, and takes the page's lock word of that side (tx_lock,
 * rx_lock) for the round, as user space does.  Everything in the page is
 * hostile: a count that makes no sense resets the connection as a peer's
 * would, a lock held by a process that no longer exists is taken over,
 * and the kernel never waits for the lock but in an interruptible sleep.
 * The traffic counts libscif keeps there are the process's word: they
 * reach only the user_* counters, validated (scif_fp_fold()), never what
 * the kernel measured.
 *
 * Revocation.  The peer's half may be freed once this side tells the peer
 * it lets go of it, so scif_fp_revoke() runs wherever the core unmaps the
 * half, before the peer is told: it zaps the peer's half out of every
 * process (unmap_mapping_pages() on the endpoint's own fast-path inode),
 * then clears the page's state word, so that a process that reads the
 * state as not live finds the half already gone.  A later access faults
 * in a zeroed page of the endpoint's instead: a process that raced with
 * the disconnect writes into nothing and learns of it from the state word
 * or its next system call, never from SIGBUS.
 *
 * Nothing of an earlier owner.  Processes map whole pages, so every page
 * a file can map is zeroed whole before it is handed to a connection:
 * the counter page and the zeroed page are allocated zeroed for each
 * endpoint, and both halves, wherever they come from (the page
 * allocator, the area cache, a bus's pool, a half kept after a refused
 * connection), are zeroed to the end of their last page when they are
 * handed out (scif_qp_alloc_gfp(), scif_node_area_get()).
 *
 * Lifetimes.  Each fast-path file holds a reference to its endpoint, so
 * the endpoint, its rings and the pages of struct scif_epd_fp outlive
 * every VMA (which holds the file); they are freed with the endpoint.
 */
#include <linux/fs.h>
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/threads.h>

#include "scif_endpt.h"
#include "scif_fault.h"
#include "scif_fp.h"
#include "scif_info.h"
#include "scif_mmap.h"
#include "scif_nodes.h"
#include "scif_proto.h"
#include "scif_rb.h"

/* The pages of a fast-path file: the counters, our half, the peer's. */
#define SCIF_FP_LOCAL_PGOFF	1UL

static_assert(sizeof(struct scif_fp_ctl) <= PAGE_SIZE);
static_assert(sizeof(struct scif_fp_half) == sizeof(struct scif_qp_shm));
static_assert(offsetof(struct scif_fp_half, rx_write) ==
	      offsetof(struct scif_qp_shm, rx_write));
static_assert(offsetof(struct scif_fp_half, rx_waiting) ==
	      offsetof(struct scif_qp_shm, rx_waiting));
static_assert(offsetof(struct scif_fp_half, tx_wanted) ==
	      offsetof(struct scif_qp_shm, tx_wanted));
static_assert(offsetof(struct scif_fp_half, tx_read) ==
	      offsetof(struct scif_qp_shm, tx_read));

static unsigned long scif_fp_remote_pgoff(const struct scif_epd_fp *fp)
{
	return SCIF_FP_LOCAL_PGOFF + fp->nr_local;
}

/* Whether the process @holder names is gone (or never was one). */
static bool scif_fp_holder_gone(u32 holder)
{
	bool gone;

	if (holder == SCIF_FP_KERNEL || holder > PID_MAX_LIMIT)
		return true;
	rcu_read_lock();
	gone = !pid_task(find_vpid(holder), PIDTYPE_TGID);
	rcu_read_unlock();
	return gone;
}

/**
 * scif_fp_trylock() - take one side's lock word of the counter page
 * @lock: &ctl->tx_lock under send_mutex, or &ctl->rx_lock under recv_mutex
 *
 * The kernel's own rounds are serialised by the data mutexes, so the
 * kernel's holder value found here is left over (or forged): it is taken
 * over, as is the lock of a process that is gone.
 *
 * Context: process context, under the side's data mutex.
 * Return: true if the caller now holds the lock.
 */
bool scif_fp_trylock(u32 *lock)
{
	u32 holder = cmpxchg(lock, 0, SCIF_FP_KERNEL);

	if (!holder)
		return true;
	return scif_fp_holder_gone(holder) &&
	       cmpxchg(lock, holder, SCIF_FP_KERNEL) == holder;
}

/**
 * scif_fp_unlock() - let go of a lock word taken by scif_fp_trylock()
 * @lock: the lock word
 *
 * The counts written before are visible before the lock is seen free.
 */
void scif_fp_unlock(u32 *lock)
{
	/* Pairs with user space's acquiring compare-and-swap. */
	smp_store_release(lock, 0);
}

/*
 * The peer's half while it is live, else the endpoint's zeroed page (RAM,
 * which the PAT maps write-back whatever the VMA asks).  Inserted under
 * fp->lock, after which revocation zaps.
 */
static vm_fault_t scif_fp_fault_remote(struct vm_fault *vmf,
				       struct scif_epd_fp *fp, unsigned long pg)
{
	struct vm_area_struct *vma = vmf->vma;
	vm_fault_t ret;

	mutex_lock(&fp->lock);
	if (fp->live)
		ret = scif_mmap_insert(vma, vmf->address, fp->remote_pfn + pg);
	else
		ret = scif_mmap_insert(vma, vmf->address,
				       page_to_pfn(fp->dummy));
	mutex_unlock(&fp->lock);
	return ret;
}

static vm_fault_t scif_fp_fault(struct vm_fault *vmf)
{
	struct scif_endpt *ep = vmf->vma->vm_file->private_data;
	struct scif_epd_fp *fp = &ep->fp;
	unsigned long pg = vmf->pgoff, remote = scif_fp_remote_pgoff(fp);
	unsigned long pfn;

	if (pg >= remote)
		return pg - remote < fp->nr_remote ?
		       scif_fp_fault_remote(vmf, fp, pg - remote) :
		       VM_FAULT_SIGBUS;
	if (pg < SCIF_FP_LOCAL_PGOFF)
		pfn = page_to_pfn(fp->ctl_page);
	else
		pfn = fp->local_pfn + pg - SCIF_FP_LOCAL_PGOFF;
	return scif_mmap_insert(vmf->vma, vmf->address, pfn);
}

static const struct vm_operations_struct scif_fp_vm_ops = {
	.fault = scif_fp_fault,
};

/*
 * mmap() of a fast-path file: one of its three parts, or a piece of one;
 * shared, never executable, our half never writable.
 */
static int scif_fp_mmap(struct file *f, struct vm_area_struct *vma)
{
	struct scif_endpt *ep = f->private_data;
	struct scif_epd_fp *fp = &ep->fp;
	unsigned long first = vma->vm_pgoff, nr = vma_pages(vma), lo, hi;
	unsigned long remote = scif_fp_remote_pgoff(fp);
	vm_flags_t clear = VM_MAYEXEC;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EACCES;
	if (first < SCIF_FP_LOCAL_PGOFF) {
		lo = 0;
		hi = SCIF_FP_LOCAL_PGOFF;
	} else if (first < remote) {
		lo = SCIF_FP_LOCAL_PGOFF;
		hi = remote;
		if (vma->vm_flags & VM_WRITE)
			return -EACCES;
		clear |= VM_MAYWRITE;
	} else {
		lo = remote;
		hi = remote + fp->nr_remote;
	}
	if (first < lo || first >= hi || nr > hi - first)
		return -EINVAL;
	scif_mmap_vm_flags_mod(vma, SCIF_VM_FLAGS, clear);
	if (lo == remote && fp->wc)
		vma->vm_page_prot = pgprot_writecombine(vma->vm_page_prot);
	vma->vm_ops = &scif_fp_vm_ops;
	return 0;
}

static int scif_fp_release(struct inode *inode, struct file *f)
{
	scif_epd_put(f->private_data);
	return 0;
}

static const struct file_operations scif_fp_fops = {
	.owner = THIS_MODULE,
	.mmap = scif_fp_mmap,
	.release = scif_fp_release,
};

/*
 * Where processes reach the two halves; the rings stay put while
 * connected.  Each half is mapped to the end of its last page, which
 * its node zeroed whole for this connection.
 */
static int scif_fp_locate(struct scif_endpt *ep)
{
	struct scif_epd_fp *fp = &ep->fp;
	size_t rlen = PAGE_ALIGN(scif_qp_len(ep->rb.tx_size));
	phys_addr_t phys;
	int err;

	if (!virt_addr_valid(ep->rb.local) ||
	    !PAGE_ALIGNED(ep->rb.local) || !PAGE_ALIGNED(ep->rb.remote_addr))
		return -EOPNOTSUPP;
	err = scif_node_peer_phys(ep->node, ep->rb.remote_addr, rlen, &phys,
				  &fp->wc);
	if (err)
		return err == -ENODEV ? -EOPNOTSUPP : err;
	if (!PAGE_ALIGNED(phys))
		return -EOPNOTSUPP;
	fp->remote_pfn = PHYS_PFN(phys);
	fp->nr_remote = rlen >> PAGE_SHIFT;
	fp->local_pfn = page_to_pfn(virt_to_page(ep->rb.local));
	fp->nr_local = PAGE_ALIGN(scif_qp_len(ep->rb.rx_size)) >> PAGE_SHIFT;
	return 0;
}

/* Allocate the pages and the inode, then hand the counts to the page. */
static int scif_fp_enable(struct scif_endpt *ep)
{
	struct scif_epd_fp *fp = &ep->fp;
	struct scif_fp_ctl *ctl;
	int err;

	lockdep_assert_held(&ep->ctl_mutex);
	if (fp->ctl)
		return 0;
	if (READ_ONCE(ep->state) != SCIF_EPD_CONNECTED)
		return -ENOTCONN;
	err = scif_fp_locate(ep);
	if (err)
		return err;
	fp->ctl_page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	fp->dummy = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	fp->inode = scif_mmap_alloc_inode();
	if (!fp->ctl_page || !fp->dummy || IS_ERR(fp->inode)) {
		err = IS_ERR(fp->inode) ? PTR_ERR(fp->inode) : -ENOMEM;
		goto err_free;
	}
	ctl = page_address(fp->ctl_page);

	err = -ECONNRESET;
	mutex_lock(&ep->recv_mutex);
	mutex_lock(&ep->send_mutex);
	spin_lock(&ep->lock);
	if (ep->state == SCIF_EPD_CONNECTED && ep->rb.remote) {
		ctl->tx_write = ep->rb.tx_write;
		ctl->rx_read = ep->rb.rx_read;
		fp->tx.pos = ep->rb.tx_write;
		fp->rx.pos = ep->rb.rx_read;
		fp->tx.kbytes = ep->stats.tx_bytes;
		fp->rx.kbytes = ep->stats.rx_bytes;
		ctl->state = SCIF_FP_LIVE;
		fp->live = true;
		/* The counts, then the pointer that makes them the endpoint's. */
		smp_store_release(&fp->ctl, ctl);
		err = 0;
	}
	spin_unlock(&ep->lock);
	mutex_unlock(&ep->send_mutex);
	mutex_unlock(&ep->recv_mutex);
	if (!err)
		return 0;
err_free:
	scif_fp_destroy(ep);
	return err;
}

/* A new file of the endpoint's fast path, with a reference to it. */
static struct file *scif_fp_new_file(struct scif_endpt *ep)
{
	struct file *f;

	/* The file's release puts the module, as for a file opened by path. */
	__module_get(THIS_MODULE);
	ihold(ep->fp.inode);
	f = scif_mmap_alloc_file(ep->fp.inode, "[scif-fp]", &scif_fp_fops);
	if (IS_ERR(f)) {
		iput(ep->fp.inode);
		module_put(THIS_MODULE);
		return f;
	}
	kref_get(&ep->ref);
	f->private_data = ep;
	return f;
}

/**
 * scif_fp_open() - SCIF_FP_OPEN: give the caller the endpoint's fast path
 * @ep: a connected endpoint of user space
 * @arg: receives the layout of the file's parts (and @arg->fd, the
 *	descriptor reserved for it)
 *
 * The caller installs the file at @arg->fd (fd_install()), or lets go of
 * both (fput(), put_unused_fd()).
 *
 * Context: process context; takes ctl_mutex and the data mutexes.
 * Return: the file; ERR_PTR(-EINVAL) for flags; -ENOTCONN or -ECONNRESET
 * if the endpoint is not connected; -EOPNOTSUPP if the bus cannot map the
 * peer's memory into processes (the caller keeps using SCIF_SEND and
 * SCIF_RECV); -ENOMEM; -EMFILE.
 */
struct file *scif_fp_open(struct scif_endpt *ep, struct scifioctl_fp *arg)
{
	struct scif_epd_fp *fp = &ep->fp;
	bool remote;
	struct file *f;
	int fd, err;

	if (arg->flags)
		return ERR_PTR(-EINVAL);
	if (!ep->user)
		return ERR_PTR(-EOPNOTSUPP);
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return ERR_PTR(fd);
	mutex_lock(&ep->ctl_mutex);
	err = scif_fp_enable(ep);
	f = err ? ERR_PTR(err) : scif_fp_new_file(ep);
	remote = ep->peer.node != READ_ONCE(scif_info.self);
	mutex_unlock(&ep->ctl_mutex);
	if (IS_ERR(f)) {
		put_unused_fd(fd);
		return f;
	}
	memset(arg, 0, sizeof(*arg));
	arg->fd = fd;
	arg->flags = remote ? SCIF_FP_PEER_REMOTE : 0;
	arg->rx_size = ep->rb.rx_size;
	arg->tx_size = ep->rb.tx_size;
	arg->ring_off = sizeof(struct scif_qp_shm);
	arg->local_off = SCIF_FP_LOCAL_PGOFF << PAGE_SHIFT;
	arg->local_len = fp->nr_local << PAGE_SHIFT;
	arg->remote_off = scif_fp_remote_pgoff(fp) << PAGE_SHIFT;
	arg->remote_len = fp->nr_remote << PAGE_SHIFT;
	return f;
}

/**
 * scif_fp_revoke() - the peer's half is being let go of: take it from
 *	every process
 * @ep: the endpoint; its rb.remote was just cleared, or is about to be
 *
 * Must run before the peer is told it may free the half.  Called again,
 * it does no harm: the fast path never comes back to life.
 *
 * Context: process context; no SCIF lock held but ctl_mutex.
 */
void scif_fp_revoke(struct scif_endpt *ep)
{
	struct scif_epd_fp *fp = &ep->fp;
	struct scif_fp_ctl *ctl = scif_fp_ctl(ep);

	if (!ctl)
		return;
	mutex_lock(&fp->lock);
	fp->live = false;
	mutex_unlock(&fp->lock);
	/* Test build: widen the window between the two steps. */
	scif_node_test_delay(SCIF_DELAY_FP_REVOKE);
	unmap_mapping_pages(fp->inode->i_mapping, scif_fp_remote_pgoff(fp),
			    fp->nr_remote, true);
	/* Only now: a process that reads the state as 0 finds the half gone. */
	smp_store_release(&ctl->state, 0);
}

/* Whether the side's ring count in the page makes sense against the ring. */
static bool scif_fp_pos_sane(struct scif_endpt *ep, bool tx, u32 pos)
{
	u32 avail;

	return tx ? !scif_rb_tx_broken_at(&ep->rb, pos) :
		    !scif_rb_rx_avail_at(&ep->rb, pos, &avail);
}

/*
 * The bytes user space may now claim on one side: what the ring count
 * moved since the last look (if it makes sense) beyond what the kernel's
 * own rounds moved meanwhile, added to what it has not claimed yet.
 */
static u64 scif_fp_allowance(struct scif_endpt *ep, bool tx,
			     struct scif_fp_seen *s, u32 pos)
{
	u64 kbytes = tx ? ep->stats.tx_bytes : ep->stats.rx_bytes;
	u64 kmoved = kbytes - s->kbytes;
	u32 moved = pos - s->pos;

	s->pos = pos;
	s->kbytes = kbytes;
	if (moved > kmoved && scif_fp_pos_sane(ep, tx, pos))
		s->allow = min_t(u64, s->allow + moved - kmoved, U32_MAX);
	return s->allow;
}

/**
 * scif_fp_fold() - take what user space says it moved through the fast
 *	path into the endpoint's and the node's user_* counters
 * @ep: the endpoint
 * @tx: the transmit side (under send_mutex) or the receive side (under
 *	recv_mutex)
 *
 * The counts are the process's own word: they are kept apart from what
 * the kernel measured (tx_bytes... of struct scif_stats, which they never
 * reach) and taken only by their increase, never more bytes than the
 * ring count moved beyond the kernel's own rounds, never more messages
 * than bytes.  A count that goes back is taken as the new start.
 *
 * Context: process context, under the side's data mutex.
 */
void scif_fp_fold(struct scif_endpt *ep, bool tx)
{
	struct scif_fp_ctl *ctl = scif_fp_ctl(ep);
	struct scif_fp_seen *s = tx ? &ep->fp.tx : &ep->fp.rx;
	u64 allow, b, m, db, dm;

	if (!ctl)
		return;
	allow = scif_fp_allowance(ep, tx, s, tx ? READ_ONCE(ctl->tx_write) :
						  READ_ONCE(ctl->rx_read));
	b = tx ? READ_ONCE(ctl->tx_bytes) : READ_ONCE(ctl->rx_bytes);
	m = tx ? READ_ONCE(ctl->tx_msgs) : READ_ONCE(ctl->rx_msgs);
	db = b - s->bytes;
	dm = m - s->msgs;
	s->bytes = b;
	s->msgs = m;
	if ((s64)db < 0 || (s64)dm < 0)
		return;
	db = min(db, allow);
	dm = min(dm, db);
	s->allow -= db;
	if (tx) {
		ep->stats.user_tx_bytes += db;
		ep->stats.user_tx_msgs += dm;
	} else {
		ep->stats.user_rx_bytes += db;
		ep->stats.user_rx_msgs += dm;
	}
	scif_node_count_user(ep->node, tx, db, dm);
}

/**
 * scif_fp_init() - set up a new endpoint's fast path (none yet)
 * @ep: the endpoint
 */
void scif_fp_init(struct scif_endpt *ep)
{
	mutex_init(&ep->fp.lock);
}

/**
 * scif_fp_destroy() - free the fast path of an endpoint no file maps
 * @ep: the endpoint
 *
 * Context: process context.
 */
void scif_fp_destroy(struct scif_endpt *ep)
{
	struct scif_epd_fp *fp = &ep->fp;

	WRITE_ONCE(fp->ctl, NULL);
	if (fp->inode && !IS_ERR(fp->inode))
		iput(fp->inode);
	fp->inode = NULL;
	if (fp->ctl_page)
		__free_page(fp->ctl_page);
	if (fp->dummy)
		__free_page(fp->dummy);
	fp->ctl_page = NULL;
	fp->dummy = NULL;
}
