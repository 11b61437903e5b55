// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: remote memory access.  scif_readfrom/writeto copy between a
 * local and a remote window, scif_vreadfrom/vwriteto between a buffer and
 * a remote window.
 *
 * An RMA is cut into descriptors.  A descriptor holds everything its copy
 * touches: a reference to every window of both ranges, and the pages of
 * a user buffer (pinned for the descriptor, or lent by the registration
 * cache).  Nothing is looked up while copying, so a window unregistered
 * meanwhile stays until the copy is over, and a process that exits
 * leaves the pages pinned only until its descriptors complete.
 *
 * With SCIF_RMA_USECPU the caller's CPU runs the descriptors before the
 * call returns.  Otherwise they go to the copy engine: each endpoint has
 * a queue, run in order by a work item on an unbound workqueue (several
 * endpoints copy in parallel).  The engine copies by the endpoint's DMA
 * channel (scif_dma.c) when it has one, local memory and peer memory
 * alike, and by the CPU what the channel refuses; a copy the channel
 * reports failed fails its RMA with -EIO.  SCIF_RMA_SYNC waits for
 * completion; without it the call returns once the descriptors are
 * queued.  Every descriptor queued gets the endpoint's next sequence
 * number and they complete in that order (see struct scif_epd_rma),
 * which is what fences wait on.  See Documentation/scif/rma.rst.
 *
 * A peer's window that this node's bus cannot reach (a staged window:
 * the peer's bus refused to map its pages, see scif_window.c) is copied
 * through a staging buffer instead: a descriptor takes one of the
 * node's rma_stage_bufs buffers (alloc_local memory the peer reaches),
 * and moves SCIF_STAGE_LEN bytes at a time, each with a STAGE_WRITE or
 * STAGE_READ that the peer serves in its rx_work (it copies between the
 * buffer and its own pages) and answers with STAGE_ACK.  A request is
 * answered before the next is sent, so the descriptor completes, in its
 * place in the queue, only once the peer has copied everything.
 */
#include <linux/debugfs.h>
#include <linux/highmem.h>
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/semaphore.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "scif_endpt.h"
#include "scif_fault.h"
#include "scif_nodes.h"
#include "scif_proto.h"
#include "scif_rb.h"
#include "scif_rma.h"
#include "scif_trace.h"

#define SCIF_RMA_FLAGS	(SCIF_RMA_USECPU | SCIF_RMA_USECACHE | \
			 SCIF_RMA_SYNC | SCIF_RMA_ORDERED)
/* User pages one descriptor pins (or borrows from the cache) at most. */
#define SCIF_RMA_DESC_PAGES	256
/* Descriptors an endpoint may have queued; the issuer waits beyond. */
#define SCIF_RMA_MAX_QUEUED	64
/*
 * Descriptors the worker runs for an endpoint before it requeues the
 * endpoint's work item behind the others (see scif_rma_engine_work()).
 */
#define SCIF_ENG_BUDGET		16
/*
 * An asynchronous RMA longer than this goes to the worker even when
 * nothing is pending: its caller does not wait for a long copy, which
 * it may overlap with its own work (synchronous RMAs have no bound).
 */
#define SCIF_RMA_INLINE_MAX	SZ_256K
#define SCIF_CACHELINE		64
/* Pieces of a DMA copy shorter than this are left to the CPU. */
#define SCIF_DMA_PIECE_MIN	1024

static struct workqueue_struct *scif_rma_wq;
/* Spreads endpoints over the DMA channels (see scif_dma_pick()). */
static atomic_t scif_rma_dma_rr = ATOMIC_INIT(0);
/* User pages pinned by descriptors (not the cache's, not windows'). */
static atomic_long_t scif_rma_pinned;

/*
 * Descriptors queued on all endpoints (scif_rma_queued), bounded by
 * rma_max_queued: an issuer waits (killably) on scif_rma_room for a
 * place, as for one in its endpoint's queue.  A caller that runs its own
 * descriptors as it queues them (see scif_rma_claim_idle()) is counted
 * but never waits: it has one at a time.
 *
 * The waits are exclusive and each place given back wakes one waiter,
 * the longest waiting: with hundreds of issuers waiting, waking them all
 * for every descriptor completed spent the CPUs on wake-ups instead of
 * copies, and left who got the place to chance.
 */
static unsigned int scif_rma_max_queued = 4096;
module_param_named(rma_max_queued, scif_rma_max_queued, uint, 0644);
MODULE_PARM_DESC(rma_max_queued,
		 "Most RMA descriptors queued to the copy engine on all endpoints; issuers wait beyond (default 4096)");
static atomic_t scif_rma_queued = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(scif_rma_room);

/*
 * Answers the peer's fence waits the engine reached: scif_fence.c's,
 * given by scif_fence_init() through scif_rma_on_engine_done().  Lock
 * rules: set once at module load, before any endpoint exists, and kept
 * until module unload; read without a lock.
 */
static void (*scif_rma_done_fn)(struct scif_endpt *ep);

/**
 * scif_rma_on_engine_done() - subscribe to the progress of the engine
 * @done: called each time an endpoint's rma.done advances, by whoever
 *	runs the endpoint's queue (its worker, or the caller of a
 *	synchronous RMA), in process context with no lock held
 *
 * Context: process context, at module load, before any endpoint exists.
 */
void scif_rma_on_engine_done(void (*done)(struct scif_endpt *ep))
{
	scif_rma_done_fn = done;
}

/*
 * Staging buffers (SCIF_STAGE_LEN bytes each, from the bus's alloc_local
 * pool) in use at once on this node; a descriptor that needs one waits
 * for it.  A peer silent for SCIF_STAGE_TIMEOUT_MS on a STAGE_* request
 * is declared failed.
 */
static unsigned int scif_stage_bufs = 4;
module_param_named(rma_stage_bufs, scif_stage_bufs, uint, 0444);
MODULE_PARM_DESC(rma_stage_bufs,
		 "Staging buffers of 256 KiB for RMAs to windows the link cannot reach, in use at once (default 4, 1..64)");
static struct semaphore scif_stage_sem;
static atomic_long_t scif_staged_bytes;
/* Bytes this node served into or out of its device windows, each way. */
static atomic_long_t scif_stage_served_dma;
static atomic_long_t scif_stage_served_cpu;
/* Serve items (STAGE_* into device windows, struct scif_stage_item). */
static struct workqueue_struct *scif_stage_wq;
#define SCIF_STAGE_TIMEOUT_MS	10000

/**
 * struct scif_rma_side - one side of a descriptor's copy
 * @wins: the windows covering the range (local or remote)
 * @idx: the window the position is in
 * @off: registered offset of the position (windows)
 * @buf: kernel buffer, at the position
 * @buf_phys: where @buf's position is physically (memory a peer
 *	published, for the DMA path), or 0 if it is in the linear map
 * @pages: user pages; the position is @pgoff bytes into @pages[0]
 * @pgoff: see @pages
 * @nr_pages: entries in @pages (of the descriptor's range)
 * @pinned: @pages were pinned for the descriptor (else the cache's)
 * @mm: the mm charged for @pages (@pinned), with a reference (mmgrab)
 * @ce: the cache entry lending @pages, with a reference
 */
struct scif_rma_side {
	struct scif_win_range wins;
	unsigned long idx;
	u64 off;
	u8 *buf;
	phys_addr_t buf_phys;
	struct page **pages;
	size_t pgoff;
	unsigned long nr_pages;
	bool pinned;
	struct mm_struct *mm;
	struct scif_cache_ent *ce;
};

/**
 * struct scif_rma_status - how a synchronous RMA ended
 * @ref: held by the caller and by each of its descriptors
 * @err: the first error of a descriptor (written by the engine)
 */
struct scif_rma_status {
	refcount_t ref;
	int err;
};

/**
 * struct scif_rma_desc - a piece of an RMA, ready to copy
 * @link: in the endpoint's queue
 * @ep: the endpoint, with a reference while queued
 * @seq: its sequence number, given as it is queued
 * @status: where a synchronous RMA's caller looks for errors, or NULL
 * @len: bytes
 * @ordered: write the destination's last cache line last
 * @dst: destination
 * @src: source
 * @write_user: the destination is user pages (dirty them)
 * @signal: a fence signal: @val is written at @dst (8 bytes), no @src
 * @val: the value of a fence signal
 * @staged: a window of the remote side is staged: the whole descriptor
 *	goes through a staging buffer
 */
struct scif_rma_desc {
	struct list_head link;
	struct scif_endpt *ep;
	u64 seq;
	struct scif_rma_status *status;
	u64 len;
	bool ordered;
	struct scif_rma_side dst;
	struct scif_rma_side src;
	bool write_user;
	bool signal;
	u64 val;
	bool staged;
};

/* The run of @runs that covers byte @off of its window. */
static const struct scif_run *scif_rma_run_find(const struct scif_run *runs,
						unsigned long nr, u64 off)
{
	unsigned long lo = 0, hi = nr;

	while (hi - lo > 1) {
		unsigned long mid = lo + (hi - lo) / 2;

		if (runs[mid].woff <= off)
			lo = mid;
		else
			hi = mid;
	}
	return &runs[lo];
}

/* Where @runs cover byte @off of their window, and how much follows. */
static void *scif_rma_run_va(const struct scif_run *runs, unsigned long nr,
			     u64 off, u64 *avail)
{
	const struct scif_run *r = scif_rma_run_find(runs, nr, off);

	*avail = r->woff + r->len - off;
	return r->va + (off - r->woff);
}

static u64 scif_rma_side_win_start(const struct scif_rma_side *s)
{
	if (s->wins.lws)
		return s->wins.lws[s->idx]->offset;
	return s->wins.rws[s->idx]->offset;
}

static u64 scif_rma_side_win_end(const struct scif_rma_side *s)
{
	if (s->wins.lws)
		return s->wins.lws[s->idx]->offset +
		       ((u64)s->wins.lws[s->idx]->nr_pages << PAGE_SHIFT);
	return s->wins.rws[s->idx]->offset +
	       ((u64)s->wins.rws[s->idx]->nr_pages << PAGE_SHIFT);
}

/*
 * The I/O address of @s's position and how many bytes follow there, if
 * the position is in a window over device memory (SCIF_PP_MMIO); NULL
 * otherwise.  The CPU reaches such a window only through the *_io
 * accessors, never through scif_rma_side_va().
 */
static void __iomem *scif_rma_side_io(struct scif_rma_side *s, u64 *avail)
{
	const struct scif_pinned_pages *pp;
	const struct scif_run *r;
	u64 woff;

	if (s->buf || s->pages || !s->wins.lws)
		return NULL;
	while (s->off >= scif_rma_side_win_end(s))
		s->idx++;
	pp = s->wins.lws[s->idx]->pinned;
	if (pp->kind != SCIF_PP_MMIO)
		return NULL;
	woff = s->off - scif_rma_side_win_start(s);
	r = scif_rma_run_find(pp->runs, pp->nr_runs, woff);
	*avail = r->woff + r->len - woff;
	return r->io + (woff - r->woff);
}

/*
 * The CPU address of @s's position and how many bytes follow there; not
 * for device memory (see scif_rma_side_io()).
 */
static void *scif_rma_side_va(struct scif_rma_side *s, u64 *avail)
{
	u64 woff;

	if (s->buf) {
		*avail = U64_MAX;
		return s->buf;
	}
	if (s->pages) {
		*avail = PAGE_SIZE - offset_in_page(s->pgoff);
		return page_address(s->pages[s->pgoff >> PAGE_SHIFT]) +
		       offset_in_page(s->pgoff);
	}
	while (s->off >= scif_rma_side_win_end(s))
		s->idx++;
	woff = s->off - scif_rma_side_win_start(s);
	if (s->wins.lws)
		return scif_rma_run_va(s->wins.lws[s->idx]->pinned->runs,
				       s->wins.lws[s->idx]->pinned->nr_runs,
				       woff, avail);
	return scif_rma_run_va(s->wins.rws[s->idx]->runs,
			       s->wins.rws[s->idx]->nr_runs, woff, avail);
}

static void scif_rma_side_advance(struct scif_rma_side *s, u64 n)
{
	if (s->buf) {
		s->buf += n;
		if (s->buf_phys)
			s->buf_phys += n;
	} else if (s->pages) {
		s->pgoff += n;
	} else {
		s->off += n;
	}
}

/*
 * Bytes of the last cache line (or part of one) of the next @n bytes at
 * @s: windows are page aligned and user pages keep the offset of their
 * user address, so every kind of position has its memory's alignment.
 */
static u64 scif_rma_last_line(const struct scif_rma_side *s, u64 n)
{
	u64 end;

	if (s->buf)
		end = (uintptr_t)s->buf + n;
	else if (s->pages)
		end = s->pgoff + n;
	else
		end = s->off + n;
	return min(n, (end - 1) % SCIF_CACHELINE + 1);
}

/*
 * The physical address of @s's position and how many bytes follow it
 * contiguously; false if the DMA path cannot use it (a kernel buffer
 * outside the linear map, peer memory the bus cannot name).
 */
static bool scif_rma_side_phys(struct scif_rma_side *s, u64 *avail,
			       phys_addr_t *phys)
{
	const struct scif_pinned_pages *pp;
	const struct scif_rwindow *rw;
	const struct scif_run *r;
	unsigned long i;
	u64 woff;

	if (s->buf && s->buf_phys) {
		*phys = s->buf_phys;
		*avail = U64_MAX;
		return true;
	}
	if (s->buf) {
		if (!virt_addr_valid(s->buf))
			return false;
		*phys = virt_to_phys(s->buf);
		*avail = PAGE_SIZE - offset_in_page(s->buf);
		return true;
	}
	if (s->pages) {
		i = s->pgoff >> PAGE_SHIFT;
		*phys = page_to_phys(s->pages[i]) + offset_in_page(s->pgoff);
		*avail = PAGE_SIZE - offset_in_page(s->pgoff);
		while (++i < s->nr_pages &&
		       page_to_pfn(s->pages[i]) == page_to_pfn(s->pages[i - 1]) + 1)
			*avail += PAGE_SIZE;
		return true;
	}
	while (s->off >= scif_rma_side_win_end(s))
		s->idx++;
	woff = s->off - scif_rma_side_win_start(s);
	if (s->wins.lws) {
		pp = s->wins.lws[s->idx]->pinned;
		r = scif_rma_run_find(pp->runs, pp->nr_runs, woff);
		*avail = r->woff + r->len - woff;
		if (pp->kind == SCIF_PP_MMIO) {
			*phys = r->addr + (woff - r->woff);
			/* scif_dma.c maps it with dma_map_resource(). */
			return !pfn_valid(PHYS_PFN(*phys));
		}
		*phys = virt_to_phys(r->va + (woff - r->woff));
		return true;
	}
	rw = s->wins.rws[s->idx];
	r = scif_rma_run_find(rw->runs, rw->nr_runs, woff);
	*avail = r->woff + r->len - woff;
	return !scif_node_peer_phys(rw->node, r->addr + (woff - r->woff),
				    *avail, phys, NULL);
}

/**
 * struct scif_rma_dma - a descriptor's use of a DMA channel
 * @chan: the endpoint's channel
 * @batch: the pieces submitted and not yet waited for, or NULL
 * @err: the first error of a batch
 * @bytes: bytes handed to the channel (complete or failed, see @err)
 */
struct scif_rma_dma {
	struct dma_chan *chan;
	struct scif_dma_batch *batch;
	int err;
	u64 bytes;
};

/* Wait for the pieces in flight, if any, keeping the first error. */
static void scif_rma_dma_flush(struct scif_rma_dma *dma)
{
	int err;

	if (!dma->batch)
		return;
	err = scif_dma_batch_finish(dma->batch);
	dma->batch = NULL;
	if (!dma->err)
		dma->err = err;
}

/*
 * Hand the next piece, at most @len bytes, to the channel: its length,
 * or 0 if the CPU is to copy it.
 */
static u64 scif_rma_dma_piece(struct scif_rma_dma *dma,
			      struct scif_rma_side *dst,
			      struct scif_rma_side *src, u64 len)
{
	phys_addr_t sp, dp;
	u64 sa, da, n;
	int err;

	if (!scif_rma_side_phys(src, &sa, &sp) ||
	    !scif_rma_side_phys(dst, &da, &dp))
		return 0;
	n = min3(len, sa, da);
	if (n < SCIF_DMA_PIECE_MIN)
		return 0;
	do {
		if (!dma->batch)
			dma->batch = scif_dma_batch_start(dma->chan);
		if (!dma->batch)
			return 0;
		err = scif_dma_batch_add(dma->batch, dp, sp, n);
		if (err == -ENOSPC)
			scif_rma_dma_flush(dma);
	} while (err == -ENOSPC);
	if (err)
		return 0;
	dma->bytes += n;
	return n;
}

/* Bytes of device memory copied to device memory per bounce. */
#define SCIF_RMA_BOUNCE		256

/*
 * Copy by the CPU the next piece of at most @len bytes (as much as both
 * sides hold contiguously) and return its length.  Device memory is
 * read and written with memcpy_fromio()/memcpy_toio(); from device
 * memory to device memory through a small bounce buffer.
 */
static u64 scif_rma_cpu_piece(struct scif_rma_side *dst,
			      struct scif_rma_side *src, u64 len)
{
	u8 bounce[SCIF_RMA_BOUNCE];
	void __iomem *sio, *dio;
	void *s = NULL, *d = NULL;
	u64 sa, da, n;

	sio = scif_rma_side_io(src, &sa);
	if (!sio)
		s = scif_rma_side_va(src, &sa);
	dio = scif_rma_side_io(dst, &da);
	if (!dio)
		d = scif_rma_side_va(dst, &da);
	n = min3(len, sa, da);
	if (sio && dio) {
		n = min_t(u64, n, sizeof(bounce));
		memcpy_fromio(bounce, sio, n);
		memcpy_toio(dio, bounce, n);
	} else if (sio) {
		memcpy_fromio(d, sio, n);
	} else if (dio) {
		memcpy_toio(dio, s, n);
	} else {
		memcpy(d, s, n);
	}
	return n;
}

/*
 * Copy @len bytes from @src to @dst: by DMA where @dma (if not NULL)
 * takes a piece (complete once @dma is flushed), else by the CPU.
 */
static void scif_rma_copy_span(struct scif_rma_side *dst,
			       struct scif_rma_side *src, u64 len,
			       struct scif_rma_dma *dma)
{
	u64 n;

	while (len) {
		n = dma ? scif_rma_dma_piece(dma, dst, src, len) : 0;
		if (!n)
			n = scif_rma_cpu_piece(dst, src, len);
		scif_rma_side_advance(src, n);
		scif_rma_side_advance(dst, n);
		len -= n;
	}
}

static bool scif_rma_reached(struct scif_endpt *ep, u64 seq);

/* The peer is gone: whatever is left of the descriptors is dropped. */
static int scif_rma_lost(struct scif_endpt *ep)
{
	if (!READ_ONCE(ep->node->online))
		return -ENODEV;
	if (READ_ONCE(ep->state) == SCIF_EPD_DISCONNECTED)
		return -ECONNRESET;
	return 0;
}

/* Staging: the initiator's side ------------------------------------- */

/**
 * struct scif_stage_req - a STAGE_* request waiting for the peer's answer
 * @link: in rma.stage_reqs
 * @id: its id (arg[0] of the request and of the answer)
 * @done: the answer came (set under rma.stage_lock)
 * @err: the answer's error, as a negative errno
 */
struct scif_stage_req {
	struct list_head link;
	u64 id;
	bool done;
	int err;
};

/**
 * struct scif_stage - a descriptor's staging buffer
 * @rb: holds the buffer as it would hold the local half of a queue pair
 *	(alloc_local memory, mapped for the peer's node)
 * @buf: the data: SCIF_STAGE_LEN bytes after the header
 * @addr: @buf as the peer reaches it
 */
struct scif_stage {
	struct scif_rb rb;
	u8 *buf;
	u64 addr;
};

/* Take one of the node's staging buffers, waiting (killably) for one. */
static int scif_stage_get(struct scif_node *node, struct scif_stage *st)
{
	int err;

	memset(st, 0, sizeof(*st));
	if (down_killable(&scif_stage_sem))
		return -EINTR;
	err = scif_node_area_get(node, &st->rb, SCIF_STAGE_LEN, GFP_KERNEL) ?:
	      scif_node_map_area(node, &st->rb, &st->addr);
	if (err) {
		scif_node_area_free(&st->rb);
		up(&scif_stage_sem);
		return err;
	}
	st->buf = st->rb.local->rx_data;
	st->addr += offsetof(struct scif_qp_shm, rx_data);
	return 0;
}

static void scif_stage_put(struct scif_stage *st)
{
	scif_node_area_free(&st->rb);
	up(&scif_stage_sem);
}

/* What a peer may answer a STAGE_* request with (scif_node_errno()). */
static const int scif_stage_answers[] = {
	ENXIO, EACCES, ENOMEM, ECONNRESET, ENODEV, ENOTCONN, 0
};

static bool scif_stage_answered(struct scif_endpt *ep,
				const struct scif_stage_req *req)
{
	bool done;

	spin_lock(&ep->rma.stage_lock);
	done = req->done;
	spin_unlock(&ep->rma.stage_lock);
	return done;
}

/*
 * Ask the peer to move @len bytes between offset @off of its registered
 * address space and @st (@op STAGE_WRITE: into its pages; STAGE_READ:
 * into @st), and wait for its answer.  The peer may touch @st until it
 * answers, so only the answer or the loss of the node end the wait (not
 * a signal, nor the end of the connection: the peer answers those
 * too); a peer silent for SCIF_STAGE_TIMEOUT_MS is declared failed.
 */
static int scif_stage_xfer(struct scif_endpt *ep, const struct scif_stage *st,
			   u32 op, u64 off, u64 len)
{
	struct scif_node *node = ep->node;
	struct scif_stage_req req = { };
	struct scif_msg msg;
	int err;

	spin_lock(&ep->rma.stage_lock);
	req.id = ++ep->rma.stage_next_id;
	list_add_tail(&req.link, &ep->rma.stage_reqs);
	spin_unlock(&ep->rma.stage_lock);
	scif_nodemsg_init(&msg, op, READ_ONCE(ep->peer_handle), ep->handle);
	msg.arg[0] = req.id;
	msg.arg[1] = off;
	msg.arg[3] = len;
	msg.arg[4] = st->addr;
	err = scif_node_send(node, &msg);
	if (!err)
		wait_event_timeout(ep->wq, scif_stage_answered(ep, &req) ||
				   !READ_ONCE(node->online),
				   msecs_to_jiffies(SCIF_STAGE_TIMEOUT_MS));
	spin_lock(&ep->rma.stage_lock);
	list_del(&req.link);
	spin_unlock(&ep->rma.stage_lock);
	if (err || req.done)
		return err ?: req.err;
	if (READ_ONCE(node->online)) {
		pr_warn("scif: node %u did not answer a staged RMA in %u ms\n",
			node->id, SCIF_STAGE_TIMEOUT_MS);
		scif_node_protocol_error(node);
	}
	return -ENODEV;
}

/* Whether a window of @s (a remote side) is staged. */
static bool scif_rma_side_staged(const struct scif_rma_side *s)
{
	unsigned long i;

	for (i = 0; s->wins.rws && i < s->wins.nr_wins; i++)
		if (s->wins.rws[i]->staged)
			return true;
	return false;
}

/*
 * Bytes of the next staged request, of @left: at most a buffer, and with
 * SCIF_RMA_ORDERED the destination's last cache line in a request of its
 * own, the last one.
 */
static u64 scif_stage_piece(struct scif_rma_desc *d, u64 left)
{
	u64 tail;

	if (left > SCIF_STAGE_LEN)
		return SCIF_STAGE_LEN;
	tail = d->ordered ? scif_rma_last_line(&d->dst, left) : left;
	return tail < left ? left - tail : left;
}

/* Run a staged descriptor (not a signal): one request per piece. */
static int scif_rma_stage_run(struct scif_rma_desc *d)
{
	bool to_remote = d->dst.wins.rws;
	struct scif_rma_side *rs = to_remote ? &d->dst : &d->src;
	struct scif_rma_side *ls = to_remote ? &d->src : &d->dst;
	struct scif_rma_side sb = { };
	u64 left = d->len, n;
	struct scif_stage st;
	int err;

	err = scif_stage_get(d->ep->node, &st);
	while (!err && left) {
		err = scif_rma_lost(d->ep);
		if (err)
			break;
		n = scif_stage_piece(d, left);
		sb.buf = st.buf;
		if (to_remote) {
			scif_rma_copy_span(&sb, ls, n, NULL);
			err = scif_stage_xfer(d->ep, &st, SCIF_MSG_STAGE_WRITE,
					      rs->off, n);
		} else {
			err = scif_stage_xfer(d->ep, &st, SCIF_MSG_STAGE_READ,
					      rs->off, n);
			if (!err)
				scif_rma_copy_span(ls, &sb, n, NULL);
		}
		rs->off += n;
		left -= n;
		if (!err)
			atomic_long_add(n, &scif_staged_bytes);
		cond_resched();
	}
	if (st.buf)
		scif_stage_put(&st);
	return err;
}

/* A fence signal into a staged window: 8 bytes, one request. */
static int scif_rma_stage_signal(struct scif_rma_desc *d)
{
	struct scif_stage st;
	int err;

	err = scif_stage_get(d->ep->node, &st);
	if (err)
		return err;
	memcpy(st.buf, &d->val, sizeof(d->val));
	err = scif_stage_xfer(d->ep, &st, SCIF_MSG_STAGE_WRITE, d->dst.off,
			      sizeof(d->val));
	scif_stage_put(&st);
	return err;
}

/*
 * A fence signal: the value in one 64-bit store where its 8 bytes are
 * contiguous (a 4-byte aligned offset may put them across a page, and
 * pages of a window need not be adjacent: then two 32-bit stores, low
 * half first).  The descriptors before it completed, and the engine's
 * barrier after each made their data visible first.
 */
struct scif_u64_packed {
	u64 v;
} __packed;

/* Store 32 bits at @s's position, RAM or device memory. */
static void scif_rma_store_u32(struct scif_rma_side *s, u32 val)
{
	void __iomem *io;
	u64 avail;

	io = scif_rma_side_io(s, &avail);
	if (io)
		writel(val, io);
	else
		WRITE_ONCE(*(u32 *)scif_rma_side_va(s, &avail), val);
}

/* The 64-bit store of a signal into device memory; false if split. */
static bool scif_rma_store_io_u64(struct scif_rma_side *s, u64 val)
{
	void __iomem *io;
	u64 avail;

	io = scif_rma_side_io(s, &avail);
	if (!io || avail < sizeof(u64))
		return false;
	if (IS_ALIGNED((unsigned long)io, sizeof(u64)))
		writeq(val, io);
	else
		memcpy_toio(io, &val, sizeof(val));
	return true;
}

static void scif_rma_signal_run(struct scif_rma_desc *d)
{
	u64 avail;
	void *va;

	if (scif_rma_store_io_u64(&d->dst, d->val))
		return;
	if (scif_rma_side_io(&d->dst, &avail))
		goto split;
	va = scif_rma_side_va(&d->dst, &avail);
	if (avail >= sizeof(u64)) {
		if (IS_ALIGNED((unsigned long)va, sizeof(u64)))
			WRITE_ONCE(*(u64 *)va, d->val);
		else	/* one unaligned store on x86 */
			((struct scif_u64_packed *)va)->v = d->val;
		return;
	}
split:
	scif_rma_store_u32(&d->dst, lower_32_bits(d->val));
	scif_rma_side_advance(&d->dst, sizeof(u32));
	scif_rma_store_u32(&d->dst, upper_32_bits(d->val));
}

/*
 * Copy a descriptor, a bounded piece at a time: by the endpoint's DMA
 * channel, if it has one, when @engine.
 */
static int scif_rma_desc_copy(struct scif_rma_desc *d, bool engine);

/* scif_rma_desc_copy(), traced. */
static int scif_rma_desc_run(struct scif_rma_desc *d, bool engine)
{
	int err = scif_rma_desc_copy(d, engine);

	trace_scif_rma_complete(d->ep->handle, d->signal ? sizeof(u64) : d->len,
				d->signal, engine, err);
	return err;
}

static int scif_rma_desc_copy(struct scif_rma_desc *d, bool engine)
{
	struct scif_rma_dma dma = { };
	u64 left = d->len, n, tail;
	int err;

	if (d->signal) {
		err = scif_rma_lost(d->ep);
		if (!err && d->staged)
			err = scif_rma_stage_signal(d);
		else if (!err)
			scif_rma_signal_run(d);
		return err;
	}
	if (d->staged)
		return scif_rma_stage_run(d);
	if (engine && d->len >= scif_dma_min())
		dma.chan = scif_dma_pick(scif_node_numa(d->ep->node),
					 d->ep->rma.dma_idx);
	while (left) {
		err = scif_rma_lost(d->ep);
		if (err)
			return err;
		scif_rma_test_piece_delay();
		n = min_t(u64, left, SZ_1M);
		tail = d->ordered && n == left ? scif_rma_last_line(&d->dst, n) : 0;
		scif_rma_copy_span(&d->dst, &d->src, n - tail,
				   dma.chan ? &dma : NULL);
		scif_rma_dma_flush(&dma);
		if (dma.err)
			return scif_rma_lost(d->ep) ?: dma.err;
		if (tail) {
			wmb();	/* everything else is visible first */
			scif_rma_copy_span(&d->dst, &d->src, tail, NULL);
		}
		left -= n;
		cond_resched();
	}
	return 0;
}

static void scif_rma_side_release(struct scif_rma_side *s, bool dirty)
{
	scif_window_range_put(&s->wins);
	if (s->pinned) {
		unpin_user_pages_dirty_lock(s->pages, s->nr_pages, dirty);
		atomic_long_sub(s->nr_pages, &scif_rma_pinned);
		scif_pin_uncharge(s->mm, s->nr_pages);
		mmdrop(s->mm);
		kfree(s->pages);
	}
	if (s->ce)
		scif_cache_put(s->ce);
}

static void scif_rma_status_put(struct scif_rma_status *st)
{
	if (st && refcount_dec_and_test(&st->ref))
		kfree(st);
}

static void scif_rma_desc_free(struct scif_rma_desc *d)
{
	scif_rma_side_release(&d->dst, d->write_user);
	scif_rma_side_release(&d->src, false);
	scif_rma_status_put(d->status);
	kfree(d);
}

/* Hold the windows of [@off, @off + @len) in @s; see scif_window_range_hold(). */
static int scif_rma_side_hold(struct scif_endpt *ep, struct scif_rma_side *s,
			      u64 off, u64 len, bool remote, int prot)
{
	s->off = off;
	return scif_window_range_hold(ep, &s->wins, off, len, prot,
				      remote ? SCIF_RANGE_REMOTE : 0, NULL,
				      NULL);
}

/* The pages of a piece of a user buffer: @ce's, or pinned now. */
static int scif_rma_side_user(struct scif_rma_side *s, unsigned long addr,
			      u64 len, bool write, struct scif_cache_ent *ce)
{
	unsigned long start = addr & PAGE_MASK;
	unsigned long nr = DIV_ROUND_UP(addr - start + len, PAGE_SIZE);
	struct mm_struct *mm = current->mm;
	int got, err;

	s->pgoff = addr - start;
	if (ce) {
		kref_get(&ce->ref);
		s->ce = ce;
		s->pages = ce->pages + ((start - ce->start) >> PAGE_SHIFT);
		s->nr_pages = nr;
		return 0;
	}
	if (!mm)
		return -EFAULT;
	/*
	 * Charged like a window's pages: -EAGAIN beyond RLIMIT_MEMLOCK (the
	 * RMA waits for its endpoint's earlier ones and tries again, then
	 * fails with ENOMEM).
	 */
	err = scif_pin_charge(mm, nr);
	if (err)
		return err;
	s->pages = scif_kmalloc_array(nr, sizeof(*s->pages),
				      GFP_KERNEL_ACCOUNT);
	if (!s->pages) {
		err = -ENOMEM;
		goto uncharge;
	}
	got = pin_user_pages_fast(start, nr, write ? FOLL_WRITE : 0, s->pages);
	if (got != nr) {
		if (got > 0)
			unpin_user_pages(s->pages, got);
		kfree(s->pages);
		s->pages = NULL;
		err = got < 0 && got != -EFAULT ? got : -EFAULT;
		goto uncharge;
	}
	s->nr_pages = nr;
	s->pinned = true;
	mmgrab(mm);
	s->mm = mm;
	atomic_long_add(nr, &scif_rma_pinned);
	return 0;

uncharge:
	scif_pin_uncharge(mm, nr);
	return err;
}

/*
 * Build the descriptor for [done, done + len) of @req; the local side
 * first (a user buffer may fault), then the windows.  @ce: the cache
 * entry holding the whole user buffer, or NULL.
 */
static struct scif_rma_desc *scif_rma_desc_build(struct scif_endpt *ep,
						 const struct scif_rma_req *req,
						 struct scif_cache_ent *ce,
						 u64 done, u64 len, int *err)
{
	int rprot = req->to_remote ? SCIF_PROT_WRITE : SCIF_PROT_READ;
	int lprot = req->to_remote ? SCIF_PROT_READ : SCIF_PROT_WRITE;
	struct scif_rma_side *ls, *rs;
	struct scif_rma_desc *d;

	d = scif_kzalloc(sizeof(*d), GFP_KERNEL_ACCOUNT);
	if (!d) {
		*err = -ENOMEM;
		return NULL;
	}
	d->ep = ep;
	d->len = len;
	d->ordered = (req->flags & SCIF_RMA_ORDERED) && done + len == req->len;
	ls = req->to_remote ? &d->src : &d->dst;
	rs = req->to_remote ? &d->dst : &d->src;
	switch (req->kind) {
	case SCIF_RMA_USER:
		d->write_user = !req->to_remote;
		*err = scif_rma_side_user(ls, req->uaddr + done, len,
					  !req->to_remote, ce);
		break;
	case SCIF_RMA_KERNEL:
		ls->buf = (u8 *)req->kaddr + done;
		*err = 0;
		break;
	default:
		*err = scif_rma_side_hold(ep, ls, req->loffset + done, len, false,
					  lprot);
		break;
	}
	if (!*err)
		*err = scif_rma_side_hold(ep, rs, req->roffset + done, len, true,
					  rprot);
	if (*err) {
		scif_rma_desc_free(d);
		return NULL;
	}
	d->staged = scif_rma_side_staged(rs);
	return d;
}

/* Become the one context that runs @ep's queue; false if one already is. */
static bool scif_rma_claim_queue(struct scif_endpt *ep)
{
	bool claimed;

	spin_lock(&ep->rma.eng_lock);
	claimed = !ep->rma.running;
	ep->rma.running = true;
	spin_unlock(&ep->rma.eng_lock);
	return claimed;
}

/*
 * Claim @ep's queue if nothing is pending on it: the caller then runs
 * its descriptors itself as it queues them, before returning, and
 * anything issued meanwhile by others waits behind them.
 */
static bool scif_rma_claim_idle(struct scif_endpt *ep)
{
	bool claimed;

	if (scif_rma_test_defer())
		return false;
	spin_lock(&ep->rma.eng_lock);
	claimed = !ep->rma.running && list_empty(&ep->rma.queue);
	if (claimed)
		ep->rma.running = true;
	spin_unlock(&ep->rma.eng_lock);
	return claimed;
}

/* Give back a place in the global count (see scif_rma_slot_get()). */
static void scif_rma_slot_put(void)
{
	atomic_dec(&scif_rma_queued);
	/* wq_has_sleeper()'s barrier orders the decrement before the look. */
	if (wq_has_sleeper(&scif_rma_room))
		wake_up(&scif_rma_room);	/* one exclusive waiter */
}

/*
 * Hand @ep's queue to the worker.  The work item holds a reference to
 * the endpoint from the moment it is queued until its function is done
 * with the endpoint, so the endpoint outlives it (a work item queued
 * while it runs takes one reference more).
 */
static void scif_rma_kick(struct scif_endpt *ep)
{
	kref_get(&ep->ref);
	if (!queue_work(scif_rma_wq, &ep->rma.eng_work))
		scif_epd_put(ep);
}

/*
 * Run @ep's queue in order, as the context that claimed it, until it is
 * empty or every descriptor up to @until has completed.  Unless @keep,
 * the claim is let go then and what is left goes back to the worker.
 */
static void scif_rma_run_queue(struct scif_endpt *ep, u64 until, bool keep)
{
	struct scif_rma_desc *d;
	unsigned int puts = 0;
	bool more = false;
	u64 seq;
	int err;

	for (;;) {
		spin_lock(&ep->rma.eng_lock);
		d = list_first_entry_or_null(&ep->rma.queue,
					     struct scif_rma_desc, link);
		if (!d || ep->rma.done >= until) {
			if (!keep) {
				ep->rma.running = false;
				more = d;
			}
			spin_unlock(&ep->rma.eng_lock);
			break;
		}
		spin_unlock(&ep->rma.eng_lock);
		err = scif_rma_desc_run(d, true);
		spin_lock(&ep->rma.eng_lock);
		list_del(&d->link);
		ep->rma.nr_queued--;
		seq = d->seq;
		if (err && d->status && !d->status->err)
			d->status->err = err;
		spin_unlock(&ep->rma.eng_lock);
		scif_rma_slot_put();
		/*
		 * Its windows and pages are let go of before it is said to
		 * be complete: an unregistration or an unpin that follows
		 * the completion finds them no longer in use.
		 */
		scif_node_test_delay(SCIF_DELAY_RELEASE);
		scif_rma_desc_free(d);
		/* The copy is visible before it is said to be complete. */
		wmb();
		spin_lock(&ep->rma.eng_lock);
		ep->rma.done = seq;
		spin_unlock(&ep->rma.eng_lock);
		wake_up_all(&ep->wq);
		scif_rma_done_fn(ep);	/* answers the peer's fence waits */
		puts++;
	}
	if (more)
		scif_rma_kick(ep);
	/* Each descriptor held the endpoint; nothing touches it after. */
	while (puts--)
		scif_epd_put(ep);
}

/*
 * The worker runs at most SCIF_ENG_BUDGET descriptors, then hands what
 * is left back to the workqueue, whose work item goes behind the others
 * waiting.  The workqueue runs at most 256 work items at once (its
 * max_active); a worker that ran its queue until empty, on an endpoint
 * whose issuer queues as fast as it copies, never returned, so that the
 * endpoints beyond the 256th were never run and their closes, which wait
 * for their RMAs, never returned.  With the budget each work item waits
 * at most for a budget of each one ahead of it.
 */
static void scif_rma_engine_work(struct work_struct *work)
{
	struct scif_endpt *ep = container_of(work, struct scif_endpt,
					     rma.eng_work);
	u64 until;

	scif_rma_test_delay();
	/* Whoever runs the queue now hands back what it leaves. */
	if (scif_rma_claim_queue(ep)) {
		spin_lock(&ep->rma.eng_lock);
		until = ep->rma.done + SCIF_ENG_BUDGET;
		spin_unlock(&ep->rma.eng_lock);
		scif_rma_run_queue(ep, until, false);
	}
	/* The reference scif_rma_kick() took for this run. */
	scif_epd_put(ep);
}

/* Take a place in the engine's global count, unless it is full. */
static bool scif_rma_slot_get(void)
{
	int max = clamp_val(READ_ONCE(scif_rma_max_queued), 1, INT_MAX);
	int old = atomic_read(&scif_rma_queued);

	do {
		if (old >= max)
			return false;
	} while (!atomic_try_cmpxchg(&scif_rma_queued, &old, old + 1));
	return true;
}

/*
 * Put a descriptor, which holds a place in the global count, on @ep's
 * queue with the next sequence number, if the queue has room or with
 * @force; false if it has not.
 */
static bool scif_rma_desc_try_enqueue(struct scif_endpt *ep,
				      struct scif_rma_desc *d, u64 *seq, bool force)
{
	spin_lock(&ep->rma.eng_lock);
	if (!force && ep->rma.nr_queued >= SCIF_RMA_MAX_QUEUED) {
		spin_unlock(&ep->rma.eng_lock);
		return false;
	}
	kref_get(&ep->ref);
	d->seq = ++ep->rma.issued;
	*seq = d->seq;
	list_add_tail(&d->link, &ep->rma.queue);
	ep->rma.nr_queued++;
	spin_unlock(&ep->rma.eng_lock);
	return true;
}

/*
 * Queue a descriptor for the caller that claimed @ep's queue, which runs
 * it next: it is counted but never waits.
 */
static void scif_rma_desc_enqueue_claimed(struct scif_endpt *ep,
					  struct scif_rma_desc *d, u64 *seq)
{
	atomic_inc(&scif_rma_queued);
	scif_rma_desc_try_enqueue(ep, d, seq, true);
}

/*
 * Queue a descriptor, waiting (killably) for a place in the global count
 * and then in @ep's queue; it is the engine's then.  Before waiting, the
 * worker is told of what @ep has queued already (a synchronous RMA does
 * not tell it), so that the wait ends.  With @kick the worker is told of
 * the descriptor too.
 */
static int scif_rma_desc_queue(struct scif_endpt *ep, struct scif_rma_desc *d,
			       u64 *seq, bool kick)
{
	if (!scif_rma_slot_get()) {
		if (READ_ONCE(ep->rma.nr_queued))
			scif_rma_kick(ep);
		if (wait_event_killable_exclusive(scif_rma_room,
						  scif_rma_slot_get()))
			goto intr;
	}
	if (!scif_rma_desc_try_enqueue(ep, d, seq, false)) {
		scif_rma_kick(ep);
		if (wait_event_killable(ep->wq,
					scif_rma_desc_try_enqueue(ep, d, seq,
								  false))) {
			scif_rma_slot_put();
			goto intr;
		}
	}
	if (kick)
		scif_rma_kick(ep);
	return 0;

intr:
	scif_rma_desc_free(d);
	return -EINTR;
}

static int scif_rma_check(const struct scif_rma_req *req)
{
	u64 end;

	if (req->flags & ~SCIF_RMA_FLAGS)
		return -EINVAL;
	if (!req->len)
		return -EINVAL;
	if (req->kind == SCIF_RMA_KERNEL && !req->kaddr)
		return -EFAULT;
	if (req->kind == SCIF_RMA_USER &&
	    !access_ok((void __user *)req->uaddr, req->len))
		return -EFAULT;
	if (req->roffset < 0 ||
	    check_add_overflow((u64)req->roffset, req->len, &end) ||
	    end - 1 > S64_MAX)
		return -ENXIO;
	if (req->kind == SCIF_RMA_WINDOW &&
	    (req->loffset < 0 ||
	     check_add_overflow((u64)req->loffset, req->len, &end) ||
	     end - 1 > S64_MAX))
		return -ENXIO;
	return 0;
}

/* Check both ranges before anything is copied. */
static int scif_rma_check_ranges(struct scif_endpt *ep,
				 const struct scif_rma_req *req)
{
	int rprot = req->to_remote ? SCIF_PROT_WRITE : SCIF_PROT_READ;
	int lprot = req->to_remote ? SCIF_PROT_READ : SCIF_PROT_WRITE;
	struct scif_rma_side s = { 0 };
	int err;

	err = scif_rma_side_hold(ep, &s, req->roffset, req->len, true, rprot);
	scif_rma_side_release(&s, false);
	if (err || req->kind != SCIF_RMA_WINDOW)
		return err;
	memset(&s, 0, sizeof(s));
	err = scif_rma_side_hold(ep, &s, req->loffset, req->len, false, lprot);
	scif_rma_side_release(&s, false);
	return err;
}

/* A request and the cache entry holding its user buffer, if any. */
struct scif_rma_cache_ref {
	struct scif_rma_req req;
	struct scif_cache_ent *ce;
};

/*
 * Bytes of the next descriptor of @req, from @done on: a user buffer
 * pinned for the RMA goes a bounded piece at a time; one in the cache
 * is pinned already.
 */
static u64 scif_rma_desc_len(const struct scif_rma_req *req, u64 done)
{
	unsigned long addr;

	if (req->kind != SCIF_RMA_USER || (req->flags & SCIF_RMA_USECACHE))
		return req->len;
	addr = req->uaddr + done;
	return min_t(u64, req->len - done,
		     SCIF_RMA_DESC_PAGES * PAGE_SIZE - offset_in_page(addr));
}

/*
 * Build a descriptor.  If its pages would take the caller over
 * RLIMIT_MEMLOCK, the RMAs in flight on @ep (whose pins are charged too)
 * complete first, run by the caller if it holds the queue (@claimed),
 * else by the engine, and it is tried once more; -ENOMEM if it is still
 * over.
 */
static struct scif_rma_desc *
scif_rma_desc_build_charged(struct scif_endpt *ep, const struct scif_rma_req *req,
			    struct scif_cache_ent *ce, u64 done, u64 len,
			    bool claimed, int *err)
{
	struct scif_rma_desc *d;
	u64 mark;

	d = scif_rma_desc_build(ep, req, ce, done, len, err);
	if (d || *err != -EAGAIN)
		return d;
	mark = scif_rma_mark(ep);
	if (!scif_rma_reached(ep, mark)) {
		if (claimed) {
			scif_rma_run_queue(ep, mark, true);
		} else {
			scif_rma_kick(ep);
			*err = scif_rma_wait(ep, mark, false);
			if (*err)
				return NULL;
		}
		d = scif_rma_desc_build(ep, req, ce, done, len, err);
	}
	if (!d && *err == -EAGAIN)
		*err = -ENOMEM;
	return d;
}

/*
 * With the CPU: the descriptors of an RMA are built and run one after
 * another.  They complete before the call returns, so they need no
 * sequence number.
 */
static int scif_rma_cpu(struct scif_endpt *ep, const struct scif_rma_req *req,
			struct scif_cache_ent *ce)
{
	struct scif_rma_desc *d;
	u64 done = 0, len;
	int err = 0;

	while (done < req->len) {
		len = scif_rma_desc_len(req, done);
		d = scif_rma_desc_build_charged(ep, req, ce, done, len, false, &err);
		if (!d)
			break;
		err = scif_rma_desc_run(d, false);
		scif_rma_desc_free(d);
		if (err)
			break;
		done += len;
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			break;
		}
	}
	return err;
}

/*
 * To the engine.  With nothing pending on the endpoint, the caller of a
 * synchronous RMA or of an asynchronous one of at most
 * SCIF_RMA_INLINE_MAX bytes claims its queue and runs each descriptor as
 * soon as it is queued, so the RMA is complete when the call returns.
 * Otherwise each descriptor is queued
 * as soon as it is built, behind what is pending: the worker runs them,
 * or a synchronous caller runs the queue up to its own last one.
 */
static int scif_rma_engine(struct scif_endpt *ep,
			   const struct scif_rma_req *req,
			   struct scif_cache_ent *ce)
{
	bool sync = req->flags & SCIF_RMA_SYNC, claimed;
	struct scif_rma_status *st;
	struct scif_rma_desc *d;
	u64 done = 0, len, seq = 0;
	int err = 0;

	st = scif_kzalloc(sizeof(*st), GFP_KERNEL_ACCOUNT);
	if (!st)
		return -ENOMEM;
	refcount_set(&st->ref, 1);
	claimed = (sync || req->len <= SCIF_RMA_INLINE_MAX) &&
		  scif_rma_claim_idle(ep);
	while (done < req->len) {
		len = scif_rma_desc_len(req, done);
		d = scif_rma_desc_build_charged(ep, req, ce, done, len, claimed,
						&err);
		if (!d)
			break;
		if (sync || claimed) {
			refcount_inc(&st->ref);
			d->status = st;
		}
		if (claimed) {
			scif_rma_desc_enqueue_claimed(ep, d, &seq);
			scif_rma_run_queue(ep, seq, true);
		} else {
			/*
			 * A synchronous RMA kicks the worker only when the
			 * queue is full, so that the engine makes room.
			 */
			err = scif_rma_desc_queue(ep, d, &seq,
						  !sync ||
						  READ_ONCE(ep->rma.nr_queued) >=
						  SCIF_RMA_MAX_QUEUED - 1);
			if (err)
				break;
		}
		done += len;
		if (claimed && done < req->len &&
		    fatal_signal_pending(current)) {
			err = -EINTR;
			break;
		}
	}
	/*
	 * A synchronous caller would only sleep until the engine is done
	 * with its descriptors: unless the engine is busy already, it runs
	 * them (and any queued before them, in order) itself, which saves
	 * handing them to a worker and being woken.
	 */
	if (claimed)
		scif_rma_run_queue(ep, seq, false);
	else if (sync && seq && scif_rma_claim_queue(ep))
		scif_rma_run_queue(ep, seq, false);
	else if (sync && seq)
		scif_rma_kick(ep);
	/* On an error, what was queued is copied but the RMA failed. */
	if (!err && sync && !claimed)
		err = scif_rma_wait(ep, seq, false);
	if (!err && (sync || claimed)) {
		spin_lock(&ep->rma.eng_lock);
		err = st->err;
		spin_unlock(&ep->rma.eng_lock);
	}
	scif_rma_status_put(st);
	return err;
}

/* Count an RMA on its endpoint and node: done, or failed (@err). */
static void scif_rma_count(struct scif_endpt *ep, u64 len, int err)
{
	if (err) {
		if (err != -EINTR)
			scif_epd_count_error(ep);
		return;
	}
	spin_lock(&ep->lock);
	ep->stats.rma_ops++;
	ep->stats.rma_bytes += len;
	spin_unlock(&ep->lock);
	scif_node_count_rma(ep->node, len);
}

/**
 * scif_epd_rma() - perform an RMA
 * @ep: a connected endpoint
 * @req: what to copy
 *
 * The ranges are checked first, so a bad range fails before anything is
 * copied.  Then the RMA runs on the caller's CPU (SCIF_RMA_USECPU) or is
 * queued to the copy engine; with SCIF_RMA_SYNC, or on the CPU, the call
 * returns once it has completed.
 *
 * Context: process context; may sleep.
 * Return: 0, or -EINVAL (flags, length 0), -ENXIO (a range not inside
 * windows), -EACCES (a window's protection forbids the access), -EFAULT
 * (bad buffer), -ENOMEM, -ENOTCONN, -ECONNRESET, -ENODEV or -EINTR
 * (fatal signal).
 */
int scif_epd_rma(struct scif_endpt *ep, const struct scif_rma_req *req)
{
	struct scif_rma_cache_ref ref = { 0 };
	int err;

	trace_scif_rma_submit(ep->handle, req->to_remote,
			      req->kind == SCIF_RMA_WINDOW ? req->loffset : -1,
			      req->roffset, req->len, req->flags);
	err = scif_rma_check(req) ?: scif_window_conn_err(ep) ?:
	      scif_rma_check_ranges(ep, req);
	if (err)
		goto out;
	if (req->kind == SCIF_RMA_USER && (req->flags & SCIF_RMA_USECACHE))
		ref.ce = scif_cache_get(ep, req->uaddr, req->len,
					!req->to_remote, &err);
	/* Without an entry, the buffer is pinned a piece at a time. */
	ref.req = *req;
	if (!ref.ce)
		ref.req.flags &= ~SCIF_RMA_USECACHE;
	if (req->flags & SCIF_RMA_USECPU)
		err = scif_rma_cpu(ep, &ref.req, ref.ce);
	else
		err = scif_rma_engine(ep, &ref.req, ref.ce);
	if (ref.ce)
		scif_cache_put(ref.ce);
out:
	scif_rma_count(ep, req->len, err);
	return err;
}

/**
 * scif_rma_signal_build() - prepare a fence signal
 * @ep: a connected endpoint
 * @off: where to write, in @ep's registered address space (@remote
 *	false) or its peer's; at most S64_MAX - 7
 * @val: the value
 * @remote: @off is in the peer's registered address space
 * @err: receives the error
 *
 * The 8 bytes at @off must lie in windows (contiguous if more than one)
 * that allow writing; they stay referenced until the signal is written.
 *
 * Context: process context (the node's rx_work included); may sleep.
 * Return: the descriptor, to queue with scif_rma_signal_queue() or free
 * with scif_rma_signal_free(); NULL with -ENXIO, -EACCES, -ENOMEM or a
 * connection error in @err.
 */
struct scif_rma_desc *scif_rma_signal_build(struct scif_endpt *ep, u64 off,
					    u64 val, bool remote, int *err)
{
	struct scif_rma_desc *d;

	d = scif_kzalloc(sizeof(*d), GFP_KERNEL_ACCOUNT);
	if (!d) {
		*err = -ENOMEM;
		return NULL;
	}
	d->ep = ep;
	d->len = sizeof(u64);
	d->signal = true;
	d->val = val;
	*err = scif_rma_side_hold(ep, &d->dst, off, sizeof(u64), remote,
				  SCIF_PROT_WRITE);
	if (*err) {
		scif_rma_desc_free(d);
		return NULL;
	}
	d->staged = scif_rma_side_staged(&d->dst);
	return d;
}

/**
 * scif_rma_signal_queue() - write a fence signal behind the RMAs issued
 * @ep: the endpoint it was built for
 * @d: the descriptor; the engine's (or freed) whatever the result
 * @wait: wait (killably) for room in the queue; else fail at twice the
 *	usual bound (for the node's rx_work, which must not wait)
 *
 * With nothing pending on @ep the caller writes the value before this
 * returns; otherwise the descriptor is queued behind what is pending.
 * A signal into a staged window waits for the peer's answer, which the
 * node's rx_work receives: for the rx_work (!@wait) it always goes to
 * the worker.
 *
 * Context: process context (the node's rx_work included).
 * Return: 0, -EINTR (fatal signal) or -ENOMEM (queue full, !@wait).
 */
int scif_rma_signal_queue(struct scif_endpt *ep, struct scif_rma_desc *d,
			  bool wait)
{
	u64 seq;

	/* Nothing pending: written now, before the caller answers. */
	if ((wait || !d->staged) && scif_rma_claim_idle(ep)) {
		scif_rma_desc_enqueue_claimed(ep, d, &seq);
		scif_rma_run_queue(ep, seq, false);
		return 0;
	}
	if (wait)
		return scif_rma_desc_queue(ep, d, &seq, true);
	if (READ_ONCE(ep->rma.nr_queued) >= 2 * SCIF_RMA_MAX_QUEUED) {
		scif_rma_desc_free(d);
		return -ENOMEM;
	}
	/* Counted, but the rx_work does not wait for a place. */
	atomic_inc(&scif_rma_queued);
	scif_rma_desc_try_enqueue(ep, d, &seq, true);
	scif_rma_kick(ep);
	return 0;
}

/**
 * scif_rma_signal_free() - drop a fence signal that was not queued
 * @d: the descriptor, or NULL
 *
 * Context: process context.
 */
void scif_rma_signal_free(struct scif_rma_desc *d)
{
	if (d)
		scif_rma_desc_free(d);
}

/**
 * scif_rma_mark() - the sequence number of the last RMA issued
 * @ep: the endpoint
 *
 * For fences: once scif_rma_wait() returns 0 for the value, every RMA
 * initiated through @ep before this call has completed.
 *
 * Context: any context.
 * Return: the sequence number (0 if no RMA was ever issued).
 */
u64 scif_rma_mark(struct scif_endpt *ep)
{
	u64 seq;

	spin_lock(&ep->rma.eng_lock);
	seq = ep->rma.issued;
	spin_unlock(&ep->rma.eng_lock);
	return seq;
}

static bool scif_rma_reached(struct scif_endpt *ep, u64 seq)
{
	bool ret;

	spin_lock(&ep->rma.eng_lock);
	ret = ep->rma.done >= seq;
	spin_unlock(&ep->rma.eng_lock);
	return ret;
}

/**
 * scif_rma_wait() - wait until the RMAs up to a sequence number completed
 * @ep: the endpoint
 * @seq: a value scif_rma_mark() returned
 * @intr: interruptible by any signal (else only by a fatal one)
 *
 * The engine drops the copies of an endpoint whose peer is lost, so
 * the wait ends then too, and the waiter is told of the loss (its RMAs
 * may not all have been copied).
 *
 * Context: process context; sleeps.
 * Return: 0, -ECONNRESET or -ENODEV (the peer is gone),
 * -ERESTARTSYS (signal, with @intr) or -EINTR (fatal signal).
 */
int scif_rma_wait(struct scif_endpt *ep, u64 seq, bool intr)
{
	long ret;

	if (intr)
		ret = wait_event_interruptible(ep->wq,
					       scif_rma_reached(ep, seq) ||
					       scif_rma_lost(ep));
	else
		ret = wait_event_killable(ep->wq,
					  scif_rma_reached(ep, seq) ||
					  scif_rma_lost(ep));
	if (ret)
		return intr ? -ERESTARTSYS : -EINTR;
	return scif_rma_lost(ep);
}

/* Staging: the window owner's side ---------------------------------- */

/*
 * Write 8 bytes at @win as one store where they lie in one run (a fence
 * signal from the peer); false if they do not.
 */
static bool scif_stage_store_u64(struct scif_rma_side *win, const void *src)
{
	void __iomem *io;
	u64 avail, val;
	void *va;

	memcpy(&val, src, sizeof(val));
	io = scif_rma_side_io(win, &avail);
	if (io) {
		if (avail < sizeof(u64) ||
		    !IS_ALIGNED((unsigned long)io, sizeof(u64)))
			return false;
		writeq(val, io);
		return true;
	}
	va = scif_rma_side_va(win, &avail);
	if (avail < sizeof(u64) || !IS_ALIGNED((unsigned long)va, sizeof(u64)))
		return false;
	WRITE_ONCE(*(u64 *)va, val);
	return true;
}

/*
 * Check the peer's STAGE_WRITE or STAGE_READ (its length and range, the
 * windows and their protection) and hold the windows in @win.
 * Return: 0, -EINVAL (bad length), -ENXIO or -EACCES (range).
 */
static int scif_stage_hold(struct scif_endpt *ep, const struct scif_msg *msg,
			   struct scif_rma_side *win)
{
	bool write = msg->op == SCIF_MSG_STAGE_WRITE;
	u64 off = msg->arg[1], len = msg->arg[3], end;

	if (!len || len > SCIF_STAGE_LEN ||
	    check_add_overflow(off, len, &end) || end - 1 > S64_MAX)
		return -EINVAL;
	win->off = off;
	return scif_window_range_hold(ep, &win->wins, off, len,
				      write ? SCIF_PROT_WRITE : SCIF_PROT_READ,
				      SCIF_RANGE_UNREG, NULL, NULL);
}

/* Whether a window of @win is device memory. */
static bool scif_stage_side_mmio(const struct scif_rma_side *win)
{
	unsigned long i;

	for (i = 0; i < win->wins.nr_wins; i++)
		if (win->wins.lws[i]->pinned->kind == SCIF_PP_MMIO)
			return true;
	return false;
}

/*
 * Copy between the held windows @win and the peer's buffer the request
 * names, whose address the bus refuses if it does not reach it; by DMA
 * on @chan (if not NULL) where it takes the pieces, else by the CPU.
 * Return: 0 or -EINVAL (bad buffer).
 */
static int scif_stage_copy(struct scif_node *node, const struct scif_msg *msg,
			   struct scif_rma_side *win, struct dma_chan *chan)
{
	bool write = msg->op == SCIF_MSG_STAGE_WRITE;
	struct scif_rma_dma dma = { .chan = chan };
	struct scif_rma_side peer = { }, w0 = *win;
	u64 len = msg->arg[3];
	void *va;

	va = scif_node_map(node, msg->arg[4], len);
	if (IS_ERR(va))
		return -EINVAL;
	peer.buf = va;
	if (chan && scif_node_peer_phys(node, msg->arg[4], len,
					&peer.buf_phys, NULL))
		dma.chan = NULL;
	if (write && len == sizeof(u64) && scif_stage_store_u64(win, va))
		dma.chan = NULL;
	else if (write)
		scif_rma_copy_span(win, &peer, len, dma.chan ? &dma : NULL);
	else
		scif_rma_copy_span(&peer, win, len, dma.chan ? &dma : NULL);
	scif_rma_dma_flush(&dma);
	if (dma.err) {
		/* Whatever the channel did, the CPU does it all again. */
		*win = w0;
		peer = (struct scif_rma_side){ .buf = va };
		dma.bytes = 0;
		if (write)
			scif_rma_copy_span(win, &peer, len, NULL);
		else
			scif_rma_copy_span(&peer, win, len, NULL);
	}
	/* The copy is visible before the answer says it is done. */
	wmb();
	scif_node_unmap(node, va, len);
	if (scif_stage_side_mmio(&w0)) {
		atomic_long_add(dma.bytes, &scif_stage_served_dma);
		atomic_long_add(len - dma.bytes, &scif_stage_served_cpu);
	}
	return 0;
}

static void scif_stage_answer(struct scif_node *node, struct scif_endpt *ep,
			      const struct scif_msg *msg, int err,
			      struct scif_reply *reserved)
{
	struct scif_msg reply;

	scif_nodemsg_init(&reply, SCIF_MSG_STAGE_ACK, msg->src, ep->handle);
	reply.arg[0] = msg->arg[0];
	reply.arg[2] = -err;
	if (reserved)
		scif_node_reply_reserved(node, reserved, &reply);
	else
		scif_node_reply(node, &reply);
}

/**
 * struct scif_stage_item - a STAGE_* request into device memory, served
 *	off rx_work (the window owner's side)
 * @work: on scif_stage_wq
 * @node: the node that asked; counted by scif_node_defer_get() until
 *	the item is done
 * @ep: the endpoint, with a reference
 * @msg: the request, checked but for the buffer's address
 * @win: the request's windows, held until the answer is queued, so an
 *	unregister waits for the item as for an RMA
 * @reply: reserved for the answer
 */
struct scif_stage_item {
	struct work_struct work;
	struct scif_node *node;
	struct scif_endpt *ep;
	struct scif_msg msg;
	struct scif_rma_side win;
	struct scif_reply *reply;
};

static void scif_stage_item_work(struct work_struct *work)
{
	struct scif_stage_item *it = container_of(work, struct scif_stage_item,
						  work);
	struct scif_node *node = it->node;
	struct dma_chan *chan = NULL;
	int err;

	err = scif_window_conn_err(it->ep);
	if (!err && it->msg.arg[3] >= scif_dma_min())
		chan = scif_dma_pick(scif_node_numa(node), it->ep->rma.dma_idx);
	if (!err)
		err = scif_stage_copy(node, &it->msg, &it->win, chan);
	scif_stage_answer(node, it->ep, &it->msg, err, it->reply);
	scif_rma_side_release(&it->win, false);
	scif_epd_put(it->ep);
	kfree(it);
	/* Last: the node's life may end once it is answered. */
	scif_node_defer_put(node);
}

/*
 * Leave the request, whose windows @win holds, to a serve item; false
 * if it must be served at once (no memory, or the node's bound reached).
 */
static bool scif_stage_defer(struct scif_node *node, struct scif_endpt *ep,
			     const struct scif_msg *msg,
			     struct scif_rma_side *win)
{
	struct scif_stage_item *it;

	it = kzalloc(sizeof(*it), GFP_KERNEL | __GFP_NOWARN);
	if (!it)
		return false;
	it->reply = scif_node_reply_reserve();
	if (!it->reply || !scif_node_defer_get(node)) {
		scif_node_reply_unreserve(it->reply);
		kfree(it);
		return false;
	}
	INIT_WORK(&it->work, scif_stage_item_work);
	it->node = node;
	kref_get(&ep->ref);
	it->ep = ep;
	it->msg = *msg;
	it->win = *win;
	queue_work(scif_stage_wq, &it->work);
	return true;
}

/**
 * scif_rma_stage_handle_msg() - handle a staging message for an endpoint
 * @node: the node it came from
 * @msg: STAGE_WRITE, STAGE_READ or STAGE_ACK
 * @ep: the endpoint it names, whose peer is on @node
 *
 * A request into RAM windows is served at once (a bounded copy,
 * SCIF_STAGE_LEN at most) and answered; one into a device window, whose
 * uncached copy is slow, is checked here and left to a serve item
 * (DMA or CPU), which answers it.  An answer wakes the request it
 * names, if it still waits.
 *
 * Context: the node's rx_work; waits for nothing remote.
 */
void scif_rma_stage_handle_msg(struct scif_node *node,
			       const struct scif_msg *msg,
			       struct scif_endpt *ep)
{
	struct scif_rma_side win = { };
	struct scif_stage_req *req;
	int err;

	if (msg->src != READ_ONCE(ep->peer_handle))
		return;
	if (msg->op == SCIF_MSG_STAGE_ACK) {
		spin_lock(&ep->rma.stage_lock);
		list_for_each_entry(req, &ep->rma.stage_reqs, link) {
			if (req->id == msg->arg[0] && !req->done) {
				req->err = scif_node_errno(msg->arg[2], true,
							   scif_stage_answers);
				req->done = true;
				break;
			}
		}
		spin_unlock(&ep->rma.stage_lock);
		wake_up_all(&ep->wq);
		return;
	}
	err = scif_window_conn_err(ep) ?: scif_stage_hold(ep, msg, &win);
	if (!err && scif_stage_side_mmio(&win) &&
	    scif_stage_defer(node, ep, msg, &win))
		return;
	if (!err)
		err = scif_stage_copy(node, msg, &win, NULL);
	scif_rma_side_release(&win, false);
	scif_stage_answer(node, ep, msg, err, NULL);
}

/**
 * scif_rma_staged_bytes() - bytes moved through staging buffers
 *
 * Return: the count, by RMAs this node initiated, since load.
 */
long scif_rma_staged_bytes(void)
{
	return atomic_long_read(&scif_staged_bytes);
}

/* What scif_get_pages() hands out. */
#define SCIF_RANGE_MAGIC	0x5c1f9a9e

struct scif_range_priv {
	struct scif_range range;
	struct scif_rma_side side;
	u32 magic;
};

/**
 * scif_epd_get_pages() - implement scif_get_pages()
 * @ep: a connected endpoint
 * @offset: page aligned offset in the peer's registered address space
 * @len: bytes, a non-zero multiple of the page size
 * @pages: receives the range
 *
 * The addresses are physical addresses through which this node reaches
 * the peer's pages (the bus's peer_phys), not those the peer published.
 *
 * Context: process context; may sleep.
 * Return: 0, -EINVAL, -ENXIO (a page in no window, or in a window this
 * node reaches only through staging), -ENOMEM, -ENODEV (the node went,
 * or its bus cannot give such addresses) or a connection error.
 */
int scif_epd_get_pages(struct scif_endpt *ep, s64 offset, u64 len,
		       struct scif_range **pages)
{
	const struct scif_run *run;
	struct scif_range_priv *rp;
	struct scif_rwindow *rw;
	unsigned long i, nr;
	u64 end, avail;
	phys_addr_t phys;
	void *va;
	int err;

	if (offset < 0 || !len || !PAGE_ALIGNED(offset) || !PAGE_ALIGNED(len) ||
	    check_add_overflow((u64)offset, len, &end) || end - 1 > S64_MAX ||
	    len >> PAGE_SHIFT > INT_MAX)
		return -EINVAL;
	nr = len >> PAGE_SHIFT;
	err = scif_window_conn_err(ep);
	if (err)
		return err;
	rp = scif_kzalloc(sizeof(*rp), GFP_KERNEL);
	if (!rp)
		return -ENOMEM;
	err = scif_rma_side_hold(ep, &rp->side, offset, len, true, 0);
	if (err)
		goto free;
	err = -ENXIO;
	if (scif_rma_side_staged(&rp->side))
		goto release;
	err = -ENOMEM;
	rp->range.phys_addr = scif_kvmalloc_array(nr, sizeof(dma_addr_t),
						  GFP_KERNEL);
	rp->range.va = scif_kvmalloc_array(nr, sizeof(void *), GFP_KERNEL);
	if (!rp->range.phys_addr || !rp->range.va)
		goto release;
	rp->range.prot_flags = SCIF_PROT_READ | SCIF_PROT_WRITE;
	for (i = 0; i < rp->side.wins.nr_wins; i++)
		rp->range.prot_flags &= rp->side.wins.rws[i]->prot;
	for (i = 0; i < nr; i++) {
		rp->side.off = offset + (i << PAGE_SHIFT);
		va = scif_rma_side_va(&rp->side, &avail);
		rw = rp->side.wins.rws[rp->side.idx];
		rp->range.va[i] = (void __force __iomem *)va;
		run = scif_rma_run_find(rw->runs, rw->nr_runs,
					rp->side.off - rw->offset);
		/* The peer's address, as this node's bus reaches it. */
		err = scif_node_peer_phys(rw->node, run->addr + (rp->side.off -
					  rw->offset - run->woff), PAGE_SIZE,
					  &phys, NULL);
		if (err)
			goto release;
		rp->range.phys_addr[i] = phys;
	}
	rp->range.nr_pages = nr;
	rp->range.cookie = rp;
	rp->magic = SCIF_RANGE_MAGIC;
	*pages = &rp->range;
	return 0;

release:
	kvfree(rp->range.phys_addr);
	kvfree(rp->range.va);
	scif_rma_side_release(&rp->side, false);
free:
	kfree(rp);
	return err;
}

/**
 * scif_epd_put_pages() - implement scif_put_pages()
 * @pages: a range from scif_epd_get_pages()
 *
 * Context: process context; may sleep.
 * Return: 0 or -EINVAL.
 */
int scif_epd_put_pages(struct scif_range *pages)
{
	struct scif_range_priv *rp;

	if (!pages || !pages->cookie)
		return -EINVAL;
	rp = container_of(pages, struct scif_range_priv, range);
	if (pages->cookie != rp || rp->magic != SCIF_RANGE_MAGIC)
		return -EINVAL;
	rp->magic = 0;
	pages->cookie = NULL;
	scif_rma_side_release(&rp->side, false);
	kvfree(rp->range.phys_addr);
	kvfree(rp->range.va);
	kfree(rp);
	return 0;
}

/**
 * scif_rma_engine_init() - set up an endpoint's copy engine queue
 * @ep: the endpoint
 */
void scif_rma_engine_init(struct scif_endpt *ep)
{
	spin_lock_init(&ep->rma.eng_lock);
	INIT_LIST_HEAD(&ep->rma.queue);
	INIT_WORK(&ep->rma.eng_work, scif_rma_engine_work);
	INIT_LIST_HEAD(&ep->rma.waiters);
	spin_lock_init(&ep->rma.stage_lock);
	INIT_LIST_HEAD(&ep->rma.stage_reqs);
	ep->rma.dma_idx = atomic_inc_return(&scif_rma_dma_rr);
}

/**
 * scif_rma_transient_pinned() - user pages pinned by RMAs in flight
 *
 * Return: the number of pages.
 */
long scif_rma_transient_pinned(void)
{
	return atomic_long_read(&scif_rma_pinned);
}

/**
 * scif_rma_nr_queued() - descriptors queued to the copy engine
 *
 * Return: the number, on all endpoints.
 */
long scif_rma_nr_queued(void)
{
	return atomic_read(&scif_rma_queued);
}

static int scif_rma_stats_show(struct seq_file *s, void *unused)
{
	scif_window_stats_show(s);
	seq_printf(s, "rma_pinned_pages %ld\ncache_pinned_pages %ld\n",
		   scif_rma_transient_pinned(), scif_cache_pinned());
	seq_printf(s, "queued %ld\nstaged_bytes %ld\n", scif_rma_nr_queued(),
		   scif_rma_staged_bytes());
	scif_dma_show(s);
	/* Last: readers that look for the first "dma" find the engine's. */
	seq_printf(s, "stage_served_dma %ld\nstage_served_cpu %ld\n",
		   atomic_long_read(&scif_stage_served_dma),
		   atomic_long_read(&scif_stage_served_cpu));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(scif_rma_stats);

/**
 * scif_rma_debugfs_init() - create <debugfs>/scif/rma
 * @dir: the driver's debugfs directory
 *
 * Context: process context, at module load.
 */
void scif_rma_debugfs_init(struct dentry *dir)
{
	debugfs_create_file("rma", 0400, dir, NULL, &scif_rma_stats_fops);
}

/**
 * scif_rma_init() - start the copy engine
 *
 * Context: module init.
 * Return: 0 or -ENOMEM.
 */
int scif_rma_init(void)
{
	scif_rma_wq = alloc_workqueue("scif_rma", WQ_UNBOUND, 0);
	if (!scif_rma_wq)
		return -ENOMEM;
	scif_stage_wq = alloc_workqueue("scif_stage", WQ_UNBOUND, 0);
	if (!scif_stage_wq) {
		destroy_workqueue(scif_rma_wq);
		return -ENOMEM;
	}
	sema_init(&scif_stage_sem, clamp_val(scif_stage_bufs, 1, 64));
	scif_dma_init();
	return 0;
}

/**
 * scif_rma_exit() - stop the copy engine
 *
 * Context: module exit, once no endpoint is left.
 */
void scif_rma_exit(void)
{
	destroy_workqueue(scif_stage_wq);
	destroy_workqueue(scif_rma_wq);
	scif_dma_exit();
}
