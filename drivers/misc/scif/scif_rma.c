// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: remote memory access, CPU path.  scif_readfrom/writeto copy
 * between a local and a remote window, scif_vreadfrom/vwriteto between a
 * buffer and a remote window.  Every copy runs to completion on the
 * caller's CPU before the call returns, whatever SCIF_RMA_* flags say:
 * that satisfies the semantics of the asynchronous flags too (there is
 * no copy engine yet; see Documentation/scif/rma.rst).
 *
 * The copy walks both ranges window by window, holding a reference to
 * the windows it is between (never a lock) while it copies.  User
 * buffers are pinned a chunk at a time before any window is looked up,
 * so no page fault happens while a window of the peer is held: tearing
 * a connection down waits for such copies only, which are short.
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "scif_priv.h"

#define SCIF_RMA_FLAGS	(SCIF_RMA_USECPU | SCIF_RMA_USECACHE | \
			 SCIF_RMA_SYNC | SCIF_RMA_ORDERED)
/* User pages pinned at a time by vreadfrom/vwriteto. */
#define SCIF_RMA_CHUNK	64
#define SCIF_CACHELINE	64

/* Where run @r of @runs covers byte @off of its window, and how much. */
static void *scif_run_va(const struct scif_run *runs, unsigned long nr,
			 u64 off, u64 *avail)
{
	unsigned long lo = 0, hi = nr;

	while (hi - lo > 1) {
		unsigned long mid = lo + (hi - lo) / 2;

		if (runs[mid].woff <= off)
			lo = mid;
		else
			hi = mid;
	}
	*avail = runs[lo].woff + runs[lo].len - off;
	return runs[lo].va + (off - runs[lo].woff);
}

/**
 * struct scif_rma_pos - one side of a copy, at its current position
 * @lw: local window (readfrom/writeto), or NULL
 * @rw: remote window, or NULL
 * @off: registered offset of the position
 * @buf: kernel buffer (kernel vreadfrom/vwriteto), or NULL
 * @pages: pinned chunk of a user buffer, or NULL
 * @pgoff: offset of the position from the start of @pages[0]
 */
struct scif_rma_pos {
	struct scif_window *lw;
	struct scif_rwindow *rw;
	u64 off;
	u8 *buf;
	struct page **pages;
	size_t pgoff;
};

/* The CPU address of @p's position and how many bytes follow there. */
static void *scif_pos_va(struct scif_rma_pos *p, u64 *avail)
{
	u64 woff;

	if (p->buf) {
		*avail = U64_MAX;
		return p->buf;
	}
	if (p->pages) {
		*avail = PAGE_SIZE - offset_in_page(p->pgoff);
		return page_address(p->pages[p->pgoff >> PAGE_SHIFT]) +
		       offset_in_page(p->pgoff);
	}
	if (p->lw) {
		woff = p->off - p->lw->offset;
		return scif_run_va(p->lw->pinned->runs, p->lw->pinned->nr_runs,
				   woff, avail);
	}
	woff = p->off - p->rw->offset;
	return scif_run_va(p->rw->runs, p->rw->nr_runs, woff, avail);
}

static void scif_pos_advance(struct scif_rma_pos *p, u64 n)
{
	if (p->buf)
		p->buf += n;
	else if (p->pages)
		p->pgoff += n;
	else
		p->off += n;
}

/* Bytes left in the window at @p (for a buffer: no limit). */
static u64 scif_pos_window_left(const struct scif_rma_pos *p)
{
	if (p->lw)
		return p->lw->offset + ((u64)p->lw->nr_pages << PAGE_SHIFT) -
		       p->off;
	if (p->rw)
		return p->rw->offset + ((u64)p->rw->nr_pages << PAGE_SHIFT) -
		       p->off;
	return U64_MAX;
}

/*
 * Bytes of the last cache line (or part of one) of the next @n bytes at
 * @p: windows are page aligned and pinned pages keep the offset of their
 * user address, so every kind of position has its memory's alignment.
 */
static u64 scif_last_line(const struct scif_rma_pos *p, u64 n)
{
	u64 end;

	if (p->buf)
		end = (uintptr_t)p->buf + n;
	else if (p->pages)
		end = p->pgoff + n;
	else
		end = p->off + n;
	return min(n, (end - 1) % SCIF_CACHELINE + 1);
}

/* Copy @len bytes from @src to @dst; neither crosses a window here. */
static void scif_copy_span(struct scif_rma_pos *dst, struct scif_rma_pos *src,
			   u64 len)
{
	u64 sa, da, n;
	void *s, *d;

	while (len) {
		s = scif_pos_va(src, &sa);
		d = scif_pos_va(dst, &da);
		n = min3(len, sa, da);
		memcpy(d, s, n);
		scif_pos_advance(src, n);
		scif_pos_advance(dst, n);
		len -= n;
	}
}

static int scif_pos_get(struct scif_endpt *ep, struct scif_rma_pos *p,
			bool remote, int prot)
{
	int err;

	if (remote)
		p->rw = scif_rwindow_get(ep, p->off, prot, &err);
	else
		p->lw = scif_window_get(ep, p->off, prot, &err);
	return err;
}

static void scif_pos_put(struct scif_rma_pos *p)
{
	if (p->rw)
		scif_rwindow_put(p->rw);
	if (p->lw)
		scif_window_put(p->lw);
	p->rw = NULL;
	p->lw = NULL;
}

/*
 * Copy @len bytes between @dst and @src, window by window.  @ordered:
 * the last cache line of the destination is written after the rest
 * is visible.
 */
static int scif_rma_walk(struct scif_endpt *ep, struct scif_rma_pos *dst,
			 bool dst_remote, struct scif_rma_pos *src,
			 bool src_remote, u64 len, bool ordered)
{
	bool dst_win = !dst->buf && !dst->pages;
	bool src_win = !src->buf && !src->pages;
	u64 n, tail = 0;
	int err = 0;

	while (len) {
		if (dst_win)
			err = scif_pos_get(ep, dst, dst_remote, SCIF_PROT_WRITE);
		if (!err && src_win)
			err = scif_pos_get(ep, src, src_remote, SCIF_PROT_READ);
		if (err)
			break;
		n = min3(len, scif_pos_window_left(dst),
			 scif_pos_window_left(src));
		if (ordered && n == len)
			tail = scif_last_line(dst, n);
		scif_copy_span(dst, src, n - tail);
		if (tail) {
			wmb();	/* everything else is visible first */
			scif_copy_span(dst, src, tail);
		}
		scif_pos_put(dst);
		scif_pos_put(src);
		len -= n;
		cond_resched();
	}
	scif_pos_put(dst);
	scif_pos_put(src);
	return err;
}

/* Check that [off, off + len) is covered by windows allowing @prot. */
static int scif_rma_check_range(struct scif_endpt *ep, u64 off, u64 len,
				bool remote, int prot)
{
	struct scif_rma_pos p = { .off = off };
	u64 n;
	int err;

	while (len) {
		err = scif_pos_get(ep, &p, remote, prot);
		if (err)
			return err;
		n = min(len, scif_pos_window_left(&p));
		scif_pos_put(&p);
		p.off += n;
		len -= n;
	}
	return 0;
}

/* vreadfrom/vwriteto of a user buffer: pin a chunk, copy it, unpin. */
static int scif_rma_user(struct scif_endpt *ep, const struct scif_rma_req *req)
{
	struct page *pages[SCIF_RMA_CHUNK];
	unsigned long addr = req->uaddr, start;
	struct scif_rma_pos upos, rpos = { .off = req->roffset };
	u64 left = req->len, n;
	int nr, got, err = 0;
	bool ordered;

	if (!access_ok((void __user *)addr, left))
		return -EFAULT;
	while (left) {
		start = addr & PAGE_MASK;
		n = min_t(u64, left, SCIF_RMA_CHUNK * PAGE_SIZE -
				     (addr - start));
		nr = DIV_ROUND_UP(addr - start + n, PAGE_SIZE);
		got = pin_user_pages_fast(start, nr,
					  req->to_remote ? 0 : FOLL_WRITE,
					  pages);
		if (got != nr) {
			if (got > 0)
				unpin_user_pages(pages, got);
			return -EFAULT;
		}
		upos = (struct scif_rma_pos){ .pages = pages,
					      .pgoff = addr - start };
		ordered = (req->flags & SCIF_RMA_ORDERED) && n == left;
		/* The walk moves rpos on by n. */
		if (req->to_remote)
			err = scif_rma_walk(ep, &rpos, true, &upos, false, n,
					    ordered);
		else
			err = scif_rma_walk(ep, &upos, false, &rpos, true, n,
					    ordered);
		unpin_user_pages_dirty_lock(pages, nr, !req->to_remote);
		if (err)
			return err;
		addr += n;
		left -= n;
		if (fatal_signal_pending(current))
			return -EINTR;
	}
	return 0;
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

/**
 * scif_epd_rma() - perform an RMA on the caller's CPU
 * @ep: a connected endpoint
 * @req: what to copy
 *
 * The ranges are checked first (so a bad range fails before anything is
 * copied), then copied window by window.  A window unregistered in the
 * middle of the copy ends it with -ENXIO.
 *
 * Context: process context; may sleep.
 * Return: 0, or -EINVAL (flags, length 0), -ENXIO (a range not inside
 * windows), -EACCES (a window's protection forbids the access), -EFAULT
 * (bad buffer), -ENOTCONN, -ECONNRESET, -ENODEV or -EINTR.
 */
int scif_epd_rma(struct scif_endpt *ep, const struct scif_rma_req *req)
{
	int rprot = req->to_remote ? SCIF_PROT_WRITE : SCIF_PROT_READ;
	int lprot = req->to_remote ? SCIF_PROT_READ : SCIF_PROT_WRITE;
	bool ordered = req->flags & SCIF_RMA_ORDERED;
	struct scif_rma_pos lpos = { 0 }, rpos = { .off = req->roffset };
	int err;

	err = scif_rma_check(req) ?: scif_rma_conn_err(ep);
	if (err)
		return err;
	err = scif_rma_check_range(ep, req->roffset, req->len, true, rprot);
	if (!err && req->kind == SCIF_RMA_WINDOW)
		err = scif_rma_check_range(ep, req->loffset, req->len, false,
					   lprot);
	if (err)
		return err;

	switch (req->kind) {
	case SCIF_RMA_USER:
		return scif_rma_user(ep, req);
	case SCIF_RMA_KERNEL:
		lpos.buf = req->kaddr;
		break;
	default:
		lpos.off = req->loffset;
		break;
	}
	if (req->to_remote)
		return scif_rma_walk(ep, &rpos, true, &lpos, false, req->len,
				     ordered);
	return scif_rma_walk(ep, &lpos, false, &rpos, true, req->len, ordered);
}
