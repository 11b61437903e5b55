// SPDX-License-Identifier: GPL-2.0
/*
 * scif_rdma: RDMA WRITE and READ by SCIF RMA (rdma.rst, "RDMA WRITE and
 * READ by SCIF RMA").
 *
 * The requester lays the work request's bytes out in a temporary SCIF
 * window on the QP's endpoint: a window page is the work request's own
 * page only when all of it is bytes of one SGE, page aligned; every
 * other window page is a zeroed bounce page, so that no byte beside the
 * work request's is exposed.  It sends a frame with the window's offset
 * and no payload; the responder checks the rkey byte-exactly, as for
 * any frame, and moves the bytes itself between its MR and that window
 * (scif_vreadfrom for a WRITE, scif_vwriteto for a READ), one RMA per
 * physically contiguous run of the MR, then answers.
 *
 * A WRITE or READ whose key the responder opened a window for
 * (scif_rdma_map.c) skips all that: srd_rma_direct() is the requester's
 * own RMA into that window, run by run of its SGEs.
 */

#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>

#include "scif_rdma.h"

/**
 * struct srd_rma_win - the requester's window over one work request
 * @pages: @npages window pages: the work request's own or bounce pages
 *	(NULL in a dry run, which only counts)
 * @npages: window pages
 * @bounce: the bounce pages allocated, @nbounce of them
 * @nbounce: bounce pages used (counted in a dry run)
 * @last: the window page the last bounce page went to (U64_MAX: none)
 * @head: offset of the first byte in the first window page
 * @write: a WRITE's source (bytes are copied into the bounce pages)
 * @va: the vmap of @pages, or NULL
 * @epd: the endpoint it is registered on
 * @off: its offset in @epd's registered address space, or -1
 * @next: in the QP's rma_stale chain
 *
 * Locking: owned by the send worker, or (rma_stale) by the receive
 * thread once it has flushed the send worker.
 */
struct srd_rma_win {
	struct page **pages;
	u32 npages;
	struct page **bounce;
	u32 nbounce;
	u64 last;
	u32 head;
	bool write;
	void *va;
	scif_epd_t epd;
	off_t off;
	struct srd_rma_win *next;
};

typedef int (*srd_piece_fn)(void *ctx, u64 pos, void *kva, u64 len);

/**
 * srd_rma_op() - is an opcode an RDMA WRITE or READ
 * @op: a send work request's opcode (an RDMA_READ_WITH_INV is queued as
 *	an RDMA_READ)
 *
 * Context: any.
 * Return: true for RDMA_WRITE, RDMA_WRITE_WITH_IMM and RDMA_READ.
 */
bool srd_rma_op(enum ib_wr_opcode op)
{
	return op == IB_WR_RDMA_WRITE || op == IB_WR_RDMA_WRITE_WITH_IMM ||
	       op == IB_WR_RDMA_READ;
}

/*
 * The longest run from @addr (at most @len bytes) that is contiguous in
 * the linear map (so physically contiguous: SCIF's DMA engine can take
 * it), and its kernel address.  A user MR's short runs are not moved one
 * by one: all @len bytes go through the MR's vmap (SCIF copies them by
 * CPU) if it can be had.
 */
static u64 srd_rma_run(struct srd_mr *mr, u64 addr, u64 len, void **kva)
{
	u64 n = len, more;
	void *next, *va;

	*kva = srd_mr_kva(mr, addr, &n);
	while (n < len) {
		more = len - n;
		next = srd_mr_kva(mr, addr + n, &more);
		if (next != *kva + n || !virt_addr_valid(next))
			break;
		n += more;
	}
	if (n == len || n >= SRD_RUN_MIN || !mr->umem)
		return n;
	va = srd_mr_vmap(mr);
	if (!va)
		return n;
	*kva = va + offset_in_page(mr->iova) + (addr - mr->iova);
	return len;
}

/*
 * Call @fn(@ctx, ...) for each piece of the work request's byte stream,
 * in order, with its position from @pos: pieces contiguous in virtual
 * memory, or with @runs the longest runs contiguous in the linear map.
 * Each SGE's key is checked again, for a READ's sink with local write
 * (the consumer may have broken the rules since it was posted).
 * Return: 0, @fn's non-zero value, or -EACCES (a local key).
 */
static int srd_sge_walk(struct srd_qp *qp, const struct srd_swqe *w,
			bool read, bool runs, u64 pos, srd_piece_fn fn,
			void *ctx)
{
	int access = read ? IB_ACCESS_LOCAL_WRITE : 0;
	u64 addr, left, n;
	struct srd_mr *mr;
	int err = 0;
	void *kva;
	u32 i;

	for (i = 0; i < w->num_sge && !err; i++) {
		addr = w->sge[i].addr;
		left = w->sge[i].length;
		mr = srd_mr_lookup(qp->dev, w->sge[i].lkey, qp->ibqp.pd);
		if (!srd_mr_ok(mr, addr, left, access))
			err = -EACCES;
		while (!err && left) {
			n = left;
			if (runs)
				n = srd_rma_run(mr, addr, left, &kva);
			else
				kva = srd_mr_kva(mr, addr, &n); /* shortens n */
			err = fn(ctx, pos, kva, n);
			pos += n;
			addr += n;
			left -= n;
		}
		srd_mr_put(mr);
	}
	return err;
}

/* srd_sge_walk() of the work request over its window's pages. */
static int srd_rma_walk(struct srd_qp *qp, const struct srd_swqe *w,
			struct srd_rma_win *win, srd_piece_fn fn)
{
	return srd_sge_walk(qp, w, !win->write, false, win->head, fn, win);
}

/* The first piece: where the window starts in its first page. */
static int srd_rma_head(void *ctx, u64 pos, void *kva, u64 len)
{
	struct srd_rma_win *win = ctx;

	win->head = offset_in_page(kva);
	return 1;
}

/* Window page @pg needs a bounce page (one for a run of pieces). */
static int srd_rma_bounce(struct srd_rma_win *win, u64 pg)
{
	struct page *page;

	if (win->last == pg)
		return 0;
	if (win->nbounce >= SRD_RMA_MAX_BOUNCE)
		return -EMSGSIZE;
	win->last = pg;
	if (!win->pages) {
		win->nbounce++;		/* a dry run */
		return 0;
	}
	page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!page)
		return -ENOMEM;
	win->bounce[win->nbounce++] = page;
	win->pages[pg] = page;
	return 0;
}

/* A whole page of the work request that may be a window page itself. */
static struct page *srd_rma_own_page(u64 pos, void *kva, u64 len)
{
	if (offset_in_page(pos) || len < PAGE_SIZE || !PAGE_ALIGNED(kva))
		return NULL;
	return srd_kva_page(kva);
}

/* Place a piece in the window (a WRITE's bytes into bounce pages). */
static int srd_rma_place(void *ctx, u64 pos, void *kva, u64 len)
{
	struct srd_rma_win *win = ctx;
	struct page *own;
	u64 pg, n, o;
	int err;

	while (len) {
		pg = pos >> PAGE_SHIFT;
		o = offset_in_page(pos);
		own = srd_rma_own_page(pos, kva, len);
		if (own) {
			n = PAGE_SIZE;
			if (win->pages)
				win->pages[pg] = own;
		} else {
			n = min_t(u64, len, PAGE_SIZE - o);
			err = srd_rma_bounce(win, pg);
			if (err)
				return err;
			if (win->pages && win->write)
				memcpy(page_address(win->pages[pg]) + o, kva, n);
		}
		pos += n;
		kva += n;
		len -= n;
	}
	return 0;
}

/* A READ's answer came: copy the bounce pages' bytes to the piece. */
static int srd_rma_unplace(void *ctx, u64 pos, void *kva, u64 len)
{
	struct srd_rma_win *win = ctx;
	struct page *page;
	u64 n, o;

	while (len) {
		page = win->pages[pos >> PAGE_SHIFT];
		o = offset_in_page(pos);
		if (srd_rma_own_page(pos, kva, len) == page) {
			n = PAGE_SIZE;
		} else {
			n = min_t(u64, len, PAGE_SIZE - o);
			memcpy(kva, page_address(page) + o, n);
		}
		pos += n;
		kva += n;
		len -= n;
	}
	return 0;
}

/*
 * Lay the work request out: its window's head, then every page (a dry
 * run when @win->pages is NULL).  Return: 0, -EACCES (a local key),
 * -EMSGSIZE (too many bounce pages) or -ENOMEM.
 */
static int srd_rma_layout(struct srd_qp *qp, const struct srd_swqe *w,
			  struct srd_rma_win *win)
{
	int err;

	win->last = U64_MAX;
	win->nbounce = 0;
	err = srd_rma_walk(qp, w, win, srd_rma_head);
	if (err < 0)
		return err;
	return srd_rma_walk(qp, w, win, srd_rma_place);
}

/**
 * srd_rma_check() - the local limits of an RDMA WRITE or READ
 * @qp: the QP it was posted on
 * @w: the work request (any opcode; only WRITE and READ are checked)
 *
 * A dry run of the window's layout: nothing is allocated.  Done before
 * the connection is looked at, so that a work request over the limits
 * fails the same way connected or not.
 *
 * Context: the send worker.
 * Return: IB_WC_SUCCESS, IB_WC_LOC_LEN_ERR (over SRD_RMA_MAX_LEN or
 * SRD_RMA_MAX_BOUNCE) or IB_WC_LOC_PROT_ERR (a local key).
 */
enum ib_wc_status srd_rma_check(struct srd_qp *qp, const struct srd_swqe *w)
{
	struct srd_rma_win dry = { .write = w->opcode != IB_WR_RDMA_READ };
	int err;

	if (!srd_rma_op(w->opcode))
		return IB_WC_SUCCESS;
	if (srd_swqe_len(w) > SRD_RMA_MAX_LEN)
		return IB_WC_LOC_LEN_ERR;
	err = srd_rma_layout(qp, w, &dry);
	if (err == -EMSGSIZE)
		return IB_WC_LOC_LEN_ERR;
	return err < 0 ? IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
}

static void srd_rma_win_release(struct srd_rma_win *win)
{
	u32 i;

	if (win->va)
		vunmap(win->va);
	for (i = 0; i < win->nbounce; i++)
		__free_page(win->bounce[i]);
	kfree(win->bounce);
	kvfree(win->pages);
	kfree(win);
}

/* Allocate and lay out the window of @len bytes; not registered yet. */
static int srd_rma_win_alloc(struct srd_qp *qp, const struct srd_swqe *w,
			     u64 len, struct srd_rma_win **out)
{
	struct srd_rma_win *win;
	int err = -ENOMEM;

	win = kzalloc(sizeof(*win), GFP_KERNEL_ACCOUNT);
	if (!win)
		return -ENOMEM;
	win->off = -1;
	win->write = w->opcode != IB_WR_RDMA_READ;
	/* The head (< PAGE_SIZE) is known only after the first walk. */
	win->npages = DIV_ROUND_UP(len + PAGE_SIZE - 1, PAGE_SIZE);
	win->pages = kvcalloc(win->npages, sizeof(*win->pages),
			      GFP_KERNEL_ACCOUNT);
	win->bounce = kcalloc(SRD_RMA_MAX_BOUNCE, sizeof(*win->bounce),
			      GFP_KERNEL_ACCOUNT);
	if (!win->pages || !win->bounce)
		goto fail;
	err = srd_rma_layout(qp, w, win);
	if (err)
		goto fail;
	win->npages = DIV_ROUND_UP(win->head + len, PAGE_SIZE);
	err = -ENOMEM;
	win->va = vmap(win->pages, win->npages, VM_MAP, PAGE_KERNEL);
	if (!win->va)
		goto fail;
	*out = win;
	return 0;
fail:
	srd_rma_win_release(win);
	return err;
}

/*
 * The window of a WRITE's source (SCIF_PROT_READ only) or a READ's sink
 * (SCIF_PROT_WRITE only), registered on the QP's endpoint.
 */
static enum ib_wc_status srd_rma_win_make(struct srd_qp *qp,
					  const struct srd_swqe *w, u64 len,
					  struct srd_rma_win **out)
{
	struct srd_rma_win *win;
	off_t off;
	int err;

	err = srd_rma_win_alloc(qp, w, len, &win);
	if (err == -EMSGSIZE)
		return IB_WC_LOC_LEN_ERR;
	if (err == -EACCES)
		return IB_WC_LOC_PROT_ERR;
	if (err)
		return IB_WC_LOC_QP_OP_ERR;
	win->epd = qp->epd;
	off = scif_register(win->epd, win->va, (size_t)win->npages << PAGE_SHIFT,
			    0, win->write ? SCIF_PROT_READ : SCIF_PROT_WRITE,
			    SCIF_MAP_KERNEL);
	if (off < 0) {
		srd_rma_win_release(win);
		/* The connection's end flushes; anything else fails the QP. */
		return off == -ECONNRESET || off == -ENOTCONN || off == -ENODEV ?
		       IB_WC_WR_FLUSH_ERR : IB_WC_LOC_QP_OP_ERR;
	}
	win->off = off;
	*out = win;
	return IB_WC_SUCCESS;
}

/*
 * The answer came (@answered) or the wait ended: the window goes.  After
 * the answer the responder's RMA is done and scif_unregister returns
 * once the peer has let go.  Without an answer (the connection ends) the
 * responder may still be copying: the window is unregistered (no new
 * RMA reaches it) but its memory waits on the QP's rma_stale chain until
 * the receive thread has closed the endpoint; so does the memory of a
 * window whose unregistration failed (SCIF drops it at the close).  The
 * close of an endpoint with windows over kernel memory returns once the
 * peer no longer touches them.
 */
static void srd_rma_win_free(struct srd_qp *qp, struct srd_rma_win *win,
			     bool answered)
{
	if (!win)
		return;
	if (scif_unregister(win->epd, win->off,
			    (size_t)win->npages << PAGE_SHIFT) || !answered) {
		win->next = qp->rma_stale;
		qp->rma_stale = win;
		srd_qp_close(qp);
		return;
	}
	srd_rma_win_release(win);
}

/**
 * srd_rma_stale_free() - free the windows left by a broken connection
 * @qp: the QP, whose endpoint is closed (its windows are gone)
 *
 * Context: the receive thread, after scif_close() of the QP's endpoint.
 */
void srd_rma_stale_free(struct srd_qp *qp)
{
	struct srd_rma_win *win;

	while (qp->rma_stale) {
		win = qp->rma_stale;
		qp->rma_stale = win->next;
		srd_rma_win_release(win);
	}
}

/**
 * srd_rma_window() - the window of a WRITE or READ by the responder's RMA
 * @qp: the QP (connected)
 * @w: the work request, its SGEs checked
 * @h: its frame; @h->woff is set to the window's first byte
 * @len: the bytes of its SGEs (not 0)
 *
 * Registers the window over the work request's bytes, kept in @w->win
 * until srd_rma_finish().
 *
 * Context: the send worker; sleeps.
 * Return: IB_WC_SUCCESS, or the work request's completion status
 * (srd_rma_win_make()'s).
 */
enum ib_wc_status srd_rma_window(struct srd_qp *qp, struct srd_swqe *w,
				 struct srd_hdr *h, u64 len)
{
	enum ib_wc_status st = srd_rma_win_make(qp, w, len, &w->win);

	if (st == IB_WC_SUCCESS)
		h->woff = cpu_to_le64(w->win->off + w->win->head);
	return st;
}

/**
 * srd_rma_finish() - the window of a WRITE or READ by frames goes
 * @qp: the QP
 * @w: the work request, done, with a window (@w->win)
 * @st: its status: the answer's, or IB_WC_WR_FLUSH_ERR without one
 *
 * A READ's bounce pages are copied out to its SGEs first.  After the
 * answer the responder's RMA is over; without one its memory waits for
 * the endpoint's close (srd_rma_win_free()).
 *
 * Context: the send worker; sleeps.
 * Return: @st, or IB_WC_LOC_PROT_ERR if a READ's local key no longer
 * holds.
 */
enum ib_wc_status srd_rma_finish(struct srd_qp *qp, struct srd_swqe *w,
				 enum ib_wc_status st)
{
	struct srd_rma_win *win = w->win;

	w->win = NULL;
	if (!win->write && st == IB_WC_SUCCESS &&
	    srd_rma_walk(qp, w, win, srd_rma_unplace))
		st = IB_WC_LOC_PROT_ERR;
	srd_rma_win_free(qp, win, st != IB_WC_WR_FLUSH_ERR);
	return st;
}

/*
 * Is a WRITE or READ of @len bytes to @key, whose window is not known,
 * to ask the peer for one?  Above SRD_INLINE_MAX bytes, yes; fewer
 * travel in the frames, for a key a kernel consumer registers for one
 * I/O.  A user program registers its buffers once and uses them again
 * (perftest, MPI): a user QP asks for a key it has seen before.
 */
static bool srd_rma_ask(struct srd_qp *qp, u32 key, u64 len)
{
	u32 i;

	if (len > SRD_INLINE_MAX)
		return true;
	for (i = 0; qp->uc && key && i < SRD_MAP_CACHE; i++)
		if (qp->rkeys_seen[i] == key)
			return true;
	return false;
}

/* A user QP's @key went without a window: the next use asks for one. */
static void srd_rma_seen(struct srd_qp *qp, u32 key)
{
	if (!qp->uc || !key)
		return;
	qp->rkeys_seen[qp->next_seen] = key;
	qp->next_seen = (qp->next_seen + 1) % SRD_MAP_CACHE;
}

/**
 * srd_rma_overtakes() - may a WRITE or READ not leave while others wait
 * @qp: the QP
 * @w: the work request next in the send ring
 * @win_room: another window may wait for its answer
 *
 * A WRITE or READ that may go straight to the peer's window (its key's
 * window known, or asked about first) would move its bytes before the
 * responder has served those still waiting for their answers, and one
 * that needs a window while the most wait is held back too.
 *
 * Context: the send worker.
 * Return: true if @w must wait until no answer is outstanding (or, for
 * a window, until one has come).
 */
bool srd_rma_overtakes(struct srd_qp *qp, const struct srd_swqe *w,
		       bool win_room)
{
	enum ib_wc_status st;
	struct srd_rkey *rk;
	u64 len;

	if (!srd_rma_op(w->opcode))
		return false;
	len = srd_swqe_len(w);
	if (len && w->opcode != IB_WR_RDMA_WRITE_WITH_IMM) {
		rk = srd_rkey_get(qp, w->rkey, false, &st);
		if (rk ? rk->direct : srd_rma_ask(qp, w->rkey, len))
			return true;
	}
	return len > SRD_INLINE_MAX && !win_room;
}

/*
 * Move a WRITE's or READ's bytes to or from the peer's window at @woff,
 * each local key checked again.  Return: 0, -EACCES (a local key no
 * longer holds) or SCIF's error (-EPERM for its -EACCES).
 */
static int srd_rma_direct_copy(struct srd_qp *qp, const struct srd_swqe *w,
			       u64 woff, bool write);

/**
 * srd_rma_direct() - an RDMA WRITE or READ straight to the peer's window
 * @qp: the QP (connected)
 * @w: the work request, its SGEs checked
 * @len: the bytes of its SGEs
 * @st: its completion status, when done here
 *
 * A plain WRITE or READ (with immediate data it needs a frame) whose
 * key the peer opened a window for (scif_rdma_map.c), within the MR and
 * its rights, is one synchronous SCIF RMA per physically contiguous run
 * (a key not asked about yet is asked about only for more than
 * SRD_INLINE_MAX bytes, fewer travelling in the frames, or by a user QP
 * that used the key before: srd_rma_ask())
 * of the local SGEs, into or out of that window: the responder neither
 * sees nor answers it.  Anything else, and a window that has gone (its
 * MR invalidated), goes by frames, which get the responder's answer.
 *
 * Context: the send worker, or a user QP's poster (srd_sq_kick()), which
 * holds the QP's sq_mutex; sleeps.
 * Return: true if done (*@st set), false if the work request goes by
 * frames.
 */
bool srd_rma_direct(struct srd_qp *qp, struct srd_swqe *w, u64 len,
		    enum ib_wc_status *st)
{
	bool write = w->opcode == IB_WR_RDMA_WRITE;
	int right = write ? IB_ACCESS_REMOTE_WRITE : IB_ACCESS_REMOTE_READ;
	u64 raddr = w->remote_addr;
	struct srd_rkey *rk;
	int err;

	if (!len || (!write && w->opcode != IB_WR_RDMA_READ))
		return false;
	rk = srd_rkey_get(qp, w->rkey, srd_rma_ask(qp, w->rkey, len), st);
	if (*st != IB_WC_SUCCESS)
		return true;
	if (!rk)
		srd_rma_seen(qp, w->rkey);
	if (!rk || !rk->direct || !(rk->access & right) || raddr < rk->iova ||
	    len > rk->len || raddr - rk->iova > rk->len - len)
		return false;
	err = srd_rma_direct_copy(qp, w, rk->off + (raddr - rk->iova), write);
	switch (err) {
	case 0:
		*st = IB_WC_SUCCESS;
		return true;
	case -EACCES:
		*st = IB_WC_LOC_PROT_ERR;
		return true;
	case -ECONNRESET:
	case -ENOTCONN:
	case -ENODEV:
		*st = IB_WC_WR_FLUSH_ERR;
		return true;
	default:
		srd_rkey_forget(qp, w->rkey);	/* the window went */
		return false;
	}
}

/**
 * srd_rma_direct_known() - may a poster move a WRITE or READ itself
 * @qp: the QP
 * @w: its next work request
 *
 * Context: a user QP's poster, under the QP's sq_mutex.
 * Return: true for a plain WRITE or READ of 1 to SRD_SQ_CALLER_MAX bytes
 * whose key has a window known to this side (srd_rma_direct() then
 * moves it with no frame, or declines it, when the window has gone or
 * does not hold the range).
 */
bool srd_rma_direct_known(struct srd_qp *qp, const struct srd_swqe *w)
{
	enum ib_wc_status st;
	struct srd_rkey *rk;
	u64 len;

	lockdep_assert_held(&qp->sq_mutex);
	if (w->opcode != IB_WR_RDMA_WRITE && w->opcode != IB_WR_RDMA_READ)
		return false;
	len = srd_swqe_len(w);
	if (!len || len > SRD_SQ_CALLER_MAX)
		return false;
	rk = srd_rkey_get(qp, w->rkey, false, &st);
	return rk && rk->direct;
}

/* The answer for SCIF's error; *@lost when the connection is gone. */
static enum ib_wc_status srd_rma_status(int err, bool *lost)
{
	switch (err) {
	case 0:
		return IB_WC_SUCCESS;
	case -ENXIO:
	case -EACCES:
	case -EINVAL:
		return IB_WC_REM_INV_REQ_ERR;	/* the requester's window */
	case -ECONNRESET:
	case -ENOTCONN:
	case -ENODEV:
		*lost = true;
		return IB_WC_REM_OP_ERR;
	default:
		return IB_WC_REM_OP_ERR;	/* ours: no memory... */
	}
}

/**
 * srd_rma_serve() - move a WRITE's or READ's bytes, as the responder
 * @qp: the QP the frame came on
 * @mr: the MR of the frame's rkey, checked for the access and the
 *	range [@h->addr, @h->addr + @len) (a reference held by the caller
 *	until this returns)
 * @h: the frame (WRITE or READ_REQ)
 * @len: its length
 * @lost: set when the connection is gone (no answer to send)
 *
 * A WRITE reads the requester's window into the MR, a READ writes the
 * MR into the requester's window, one synchronous SCIF RMA per
 * physically contiguous run of the MR.  SCIF checks the window side: the
 * range must lie in windows the requester registered on this connection
 * with the protection the direction needs.
 *
 * Context: the receive thread; sleeps.
 * Return: IB_WC_SUCCESS, IB_WC_REM_INV_REQ_ERR (a window range or
 * length SCIF or we refuse) or IB_WC_REM_OP_ERR (any other failure).
 */
enum ib_wc_status srd_rma_serve(struct srd_qp *qp, struct srd_mr *mr,
				const struct srd_hdr *h, u32 len, bool *lost)
{
	bool write = h->type == SRD_F_WRITE;
	u64 addr = le64_to_cpu(h->addr);
	u64 woff = le64_to_cpu(h->woff);
	int err = 0;
	void *kva;
	u64 n;

	*lost = false;
	if (len > SRD_RMA_MAX_LEN || woff > S64_MAX - len)
		return IB_WC_REM_INV_REQ_ERR;
	while (len && !err) {
		n = srd_rma_run(mr, addr, len, &kva);
		err = write ? scif_vreadfrom(qp->epd, kva, n, woff, SCIF_RMA_SYNC) :
			      scif_vwriteto(qp->epd, kva, n, woff, SCIF_RMA_SYNC);
		addr += n;
		woff += n;
		len -= n;
	}
	return srd_rma_status(err, lost);
}

/* Where a direct WRITE or READ goes: the peer's window at @woff. */
struct srd_direct {
	scif_epd_t epd;
	u64 woff;
	bool write;
};

/* One run of a direct WRITE or READ (a window's refusal: -EPERM). */
static int srd_rma_direct_piece(void *ctx, u64 pos, void *kva, u64 len)
{
	struct srd_direct *d = ctx;
	int err;

	err = d->write ? scif_vwriteto(d->epd, kva, len, d->woff + pos,
				       SCIF_RMA_SYNC) :
			 scif_vreadfrom(d->epd, kva, len, d->woff + pos,
					SCIF_RMA_SYNC);
	return err == -EACCES ? -EPERM : err;
}

static int srd_rma_direct_copy(struct srd_qp *qp, const struct srd_swqe *w,
			       u64 woff, bool write)
{
	struct srd_direct d = { .epd = qp->epd, .woff = woff, .write = write };

	return srd_sge_walk(qp, w, !write, true, 0, srd_rma_direct_piece, &d);
}
