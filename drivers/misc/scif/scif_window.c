// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: registered memory windows.  Each endpoint's registered
 * address space (a maple tree of windows over pages pinned by
 * scif_pin.c), and the exchange that tells the peer about a window:
 *
 *   registrant                             peer
 *   run list in its own memory
 *   REGISTER(id, offset, pages, prot|runs,
 *            list address) ------------->  maps and copies the run list,
 *                                          checks it, maps every run
 *                         <-------------   REGISTER_ACK(id, offset, errno)
 *   frees the run list
 *   UNREGISTER(id, offset) ------------->  takes the window out of use
 *                                          (no new RMA or mapping); if
 *                                          RMAs still hold it:
 *                         <-------------   UNREGISTER_ACK(id, offset,
 *                                                         WITHDRAWN)
 *   scif_unregister() returns; the
 *   window stays, out of use
 *                                          once the last RMA lets go:
 *                         <-------------   UNREGISTER_ACK(id, offset)
 *   frees the offsets, unpins the pages
 *
 * As the SCIF API has it, a window unregistered while it is referenced
 * (an RMA in progress, a mapping) can no longer be used, but keeps its
 * offsets and pages until the last reference goes.  The peer answers
 * UNREGISTER as soon as it reads it, so the registrant's wait never
 * depends on how long the peer's copy queue is.  The final
 * acknowledgment is sent from wherever the last reference drops, in a
 * reply reserved when the remote window was made (one per window, so a
 * burst of them never overflows the reply queue).
 *
 * A disconnect or the loss of the node drops every window on both sides:
 * an endpoint stops using its peer's windows before it sends DISCONNECT
 * or DISC_ACK, so a DISCONNECT (or the node's loss) also tells that the
 * peer no longer touches ours.
 */
#define pr_fmt(fmt) "scif: " fmt

#include <linux/io.h>
#include <linux/math.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/refcount.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "scif_endpt.h"
#include "scif_fault.h"
#include "scif_nodes.h"
#include "scif_proto.h"
#include "scif_rma.h"
#include "scif_trace.h"
#include "scif_visibility.h"

static_assert(SCIF_RUNLIST_PAGE == PAGE_SIZE);

static atomic_long_t scif_nr_windows;
static atomic_long_t scif_nr_rwindows;

/*
 * Revoke what holds a window that is going: for a peer's window the
 * mapping layer's scif_mmap_revoke() (user mappings), then
 * scif_devdma.c's (device mappings); for one of ours being unregistered,
 * scif_devdma.c's.  scif_main.c fills them (scif_window_on_revoke()).
 * Lock rules: set once at module load, before an endpoint can hold a
 * window, and kept until module unload (windows still go while the
 * buses go down); read without a lock.
 */
static struct scif_window_revoker scif_window_revokers[SCIF_WINDOW_REVOKERS];
static atomic64_t scif_window_ids;

/*
 * What a peer may make us hold for its windows: each remote window costs
 * a descriptor and 32 bytes per run, and a REGISTER beyond these budgets
 * is refused with EAGAIN (the registrant's scif_register() fails with
 * it).  See Documentation/scif/rma.rst.
 */
static unsigned int scif_max_rwindows_ep = 16384;
module_param_named(max_remote_windows_per_ep, scif_max_rwindows_ep, uint,
		   0644);
MODULE_PARM_DESC(max_remote_windows_per_ep,
		 "Windows the peer of one endpoint may register (default 16384)");
static unsigned int scif_max_rruns_ep = 1U << 20;
module_param_named(max_remote_runs_per_ep, scif_max_rruns_ep, uint, 0644);
MODULE_PARM_DESC(max_remote_runs_per_ep,
		 "Runs (contiguous pieces) of those windows (default 1048576)");
static unsigned int scif_max_rwindows_node = 65536;
module_param_named(max_remote_windows_per_node, scif_max_rwindows_node, uint,
		   0644);
MODULE_PARM_DESC(max_remote_windows_per_node,
		 "Windows the endpoints of one peer node may register (default 65536)");
static unsigned int scif_max_rruns_node = 1U << 22;
module_param_named(max_remote_runs_per_node, scif_max_rruns_node, uint, 0644);
MODULE_PARM_DESC(max_remote_runs_per_node,
		 "Runs of those windows (default 4194304)");
/*
 * On loopback every local user's endpoints charge the same node: the
 * endpoints of one local user (the opener of the endpoint the peer
 * registers with) together hold at most this percentage of the two
 * per-node budgets, over all nodes, so one user leaves room to others.
 */
static unsigned int scif_rwindow_user_share = 25;
module_param_named(max_remote_user_share, scif_rwindow_user_share, uint,
		   0644);
MODULE_PARM_DESC(max_remote_user_share,
		 "Percent of max_remote_windows_per_node and of max_remote_runs_per_node that the endpoints of one local user may hold, over all nodes; 100 or more: no share, the node budgets alone (default 25)");

/*
 * How long a registrant waits for the peer's answer to REGISTER or
 * UNREGISTER while the peer shows no progress at all (see
 * struct scif_window_watch) before it declares the peer node failed.
 */
static unsigned int scif_rma_ack_timeout_ms = 10000;
module_param_named(rma_ack_timeout_ms, scif_rma_ack_timeout_ms, uint, 0644);
MODULE_PARM_DESC(rma_ack_timeout_ms,
		 "Wait for a peer's REGISTER/UNREGISTER answer while the peer handles none of this node's messages and sends none, ms (default 10000)");

/*
 * Longest single sleep of a registrant between two looks at the peer's
 * progress.
 */
#define SCIF_WINDOW_WATCH_SLICE	HZ

/**
 * struct scif_window_watch - a registrant's watch over a peer that owes
 *	it answers
 * @node: the peer
 * @progress: scif_node_progress() when last seen to move
 * @since: jiffies when it was last seen to move
 *
 * A peer that handles our messages or sends its own is alive: the
 * answer may be behind thousands of others (a loopback node whose one
 * queue carries a burst of releases, a debug kernel).  Only a peer that
 * stands still for rma_ack_timeout_ms while an answer is owed is
 * declared failed.  One watch serves every answer of a call.  On the
 * registrant's stack; no lock.
 */
struct scif_window_watch {
	struct scif_node *node;
	unsigned long progress;
	unsigned long since;
};

static void scif_window_watch_start(struct scif_window_watch *ww,
				    struct scif_node *node)
{
	ww->node = node;
	ww->progress = scif_node_progress(node);
	ww->since = jiffies;
}

/* Jiffies left before the watched peer counts as silent; <= 0: it is. */
static long scif_window_watch_left(struct scif_window_watch *ww)
{
	unsigned long now = scif_node_progress(ww->node);

	if (now != ww->progress) {
		ww->progress = now;
		ww->since = jiffies;
	}
	return (long)(ww->since +
		      msecs_to_jiffies(READ_ONCE(scif_rma_ack_timeout_ms)) -
		      jiffies);
}

/**
 * scif_window_stats_show() - the windows' lines of <debugfs>/scif/rma
 * @s: the file, shown by scif_rma.c
 *
 * Context: process context.
 */
void scif_window_stats_show(struct seq_file *s)
{
	seq_printf(s, "pinned_pages %ld\nwindows %ld\nremote_windows %ld\n",
		   scif_pin_nr_pages(),
		   atomic_long_read(&scif_nr_windows),
		   atomic_long_read(&scif_nr_rwindows));
}

/**
 * scif_window_counts() - how many windows an endpoint has
 * @ep: the endpoint
 * @local: receives the number of its own windows, those whose offsets
 *	it holds: registered, or on their way in or out
 * @remote: receives the number of its peer's windows it knows of and has
 *	not yet released
 *
 * Read without rma.lock: a registration or release going on may or may
 * not be counted.
 *
 * Context: any context.
 */
void scif_window_counts(struct scif_endpt *ep, unsigned int *local,
			unsigned int *remote)
{
	*local = atomic_read(&ep->rma.nr_windows);
	*remote = atomic_read(&ep->rma.nr_rwindows);
}

/**
 * scif_window_totals() - how many windows this node holds
 * @local: receives the number of windows of its endpoints not yet freed
 *	(registered, on their way in or out, or unregistered but still used
 *	by an RMA of the peer)
 * @remote: receives the number of peers' windows its endpoints hold
 *
 * Context: any context.
 */
void scif_window_totals(long *local, long *remote)
{
	*local = atomic_long_read(&scif_nr_windows);
	*remote = atomic_long_read(&scif_nr_rwindows);
}

/**
 * scif_window_on_revoke() - subscribe to the going of windows
 * @slot: which of the SCIF_WINDOW_REVOKERS; called in slot order
 * @revoker: its callbacks (see struct scif_window_revoker); copied
 *
 * Context: process context, at module load, before any endpoint exists.
 */
void scif_window_on_revoke(unsigned int slot,
			   const struct scif_window_revoker *revoker)
{
	if (!WARN_ON(slot >= SCIF_WINDOW_REVOKERS))
		scif_window_revokers[slot] = *revoker;
}

/* A peer's window left @ep's tree: revoke what holds it. */
static void scif_window_revoke(struct scif_endpt *ep, struct scif_rwindow *rw)
{
	unsigned int i;

	for (i = 0; i < SCIF_WINDOW_REVOKERS; i++)
		if (scif_window_revokers[i].remote)
			scif_window_revokers[i].remote(ep, rw);
}

/* @w, one of @ep's, is being unregistered: revoke what holds it. */
static void scif_window_revoke_local(struct scif_endpt *ep,
				     struct scif_window *w)
{
	unsigned int i;

	for (i = 0; i < SCIF_WINDOW_REVOKERS; i++)
		if (scif_window_revokers[i].local)
			scif_window_revokers[i].local(ep, w);
}

/**
 * scif_window_epd_init() - set up a new endpoint's registered address spaces
 * @ep: the endpoint
 *
 * Called by scif_epd.c with the endpoint's other parts (see
 * scif_epd_parts_teardown()).
 *
 * Context: any context.
 */
void scif_window_epd_init(struct scif_endpt *ep)
{
	mutex_init(&ep->rma.lock);
	mt_init_flags(&ep->rma.local, MT_FLAGS_ALLOC_RANGE);
	mt_init_flags(&ep->rma.remote, 0);
	atomic_set(&ep->rma.nr_windows, 0);
	atomic_set(&ep->rma.nr_rwindows, 0);
	atomic_set(&ep->rma.nr_devheld, 0);
	atomic_long_set(&ep->rma.nr_rruns, 0);
}

/**
 * scif_window_conn_err() - whether windows and RMAs may be used now
 * @ep: the endpoint
 *
 * Used by every user of windows and RMAs (scif_rma.c, scif_fence.c,
 * scif_api.c), so it lives in the lowest of their files.
 *
 * Context: any context.
 * Return: 0 if connected, -ECONNRESET if the peer closed, -ENODEV if its
 * node is gone, else -ENOTCONN.
 */
int scif_window_conn_err(struct scif_endpt *ep)
{
	switch (READ_ONCE(ep->state)) {
	case SCIF_EPD_CONNECTED:
		return 0;
	case SCIF_EPD_DISCONNECTED:
		return READ_ONCE(ep->node->online) ? -ECONNRESET : -ENODEV;
	default:
		return -ENOTCONN;
	}
}

/* Ranges of windows ------------------------------------------------- */

/*
 * Whether the window of @ep's local or remote tree at page @pg may be
 * held for @prot under @flags: 0 with it in *@win and the page after it
 * in *@next, else the error.  Under rma.lock.
 */
static int scif_window_range_at(struct scif_endpt *ep, unsigned long pg,
				int prot, unsigned int flags, void **win,
				unsigned long *next)
{
	struct scif_rwindow *rw;
	struct scif_window *w;

	if (flags & SCIF_RANGE_REMOTE) {
		rw = mtree_load(&ep->rma.remote, pg);
		if (!rw || (rw->staged && (flags & SCIF_RANGE_MAPPED)))
			return -ENXIO;
		if ((rw->prot & prot) != prot)
			return -EACCES;
		*next = (rw->offset >> PAGE_SHIFT) + rw->nr_pages;
		*win = rw;
		return 0;
	}
	w = mtree_load(&ep->rma.local, pg);
	if (!w || (w->state != SCIF_WIN_REGISTERED &&
		   (!(flags & SCIF_RANGE_UNREG) ||
		    w->state != SCIF_WIN_UNREGISTERING)))
		return -ENXIO;
	if ((w->prot & prot) != prot)
		return -EACCES;
	if ((flags & SCIF_RANGE_MAPPED) && w->pinned->kind != SCIF_PP_PAGES)
		return -EOPNOTSUPP;	/* device memory */
	*next = (w->offset >> PAGE_SHIFT) + w->nr_pages;
	*win = w;
	return 0;
}

/* Reference @rw for a range (@dev: for a device); under rma.lock. */
static void scif_window_range_get_remote(struct scif_endpt *ep,
					 struct scif_rwindow *rw, bool dev)
{
	kref_get(&rw->ref);
	if (dev && atomic_inc_return(&rw->dev_refs) == 1)
		atomic_inc(&ep->rma.nr_devheld);
}

/**
 * scif_window_range_hold() - reference the windows of a registered range
 * @ep: the endpoint
 * @r: receives the windows, in order, one reference each
 * @off: start of the range (in @ep's registered space, or with
 *	SCIF_RANGE_REMOTE in the peer's)
 * @len: its length, not 0, @off + @len not past S64_MAX
 * @prot: SCIF_PROT_* every window must allow
 * @flags: SCIF_RANGE_REMOTE; SCIF_RANGE_UNREG (local windows being
 *	unregistered count: the peer may use them until it acknowledges);
 *	SCIF_RANGE_MAPPED (the range is for a device or a mapping: a staged
 *	remote window is -ENXIO, a local window over device memory
 *	-EOPNOTSUPP)
 * @locked: if not NULL, called with @arg under rma.lock once the
 *	windows are held, so that a window leaving its tree afterwards
 *	finds what the caller recorded there
 * @arg: for @locked
 *
 * The range must be covered by windows contiguous in the registered
 * space.  The array is %GFP_KERNEL_ACCOUNT, one entry per window.
 *
 * Context: process context; takes rma.lock.
 * Return: 0; -ENXIO (a gap, or a window refused), -EACCES, -EOPNOTSUPP,
 * -ENOMEM, or the connection's error (scif_window_conn_err()).
 */
int scif_window_range_hold(struct scif_endpt *ep, struct scif_win_range *r,
			   u64 off, u64 len, int prot, unsigned int flags,
			   void (*locked)(void *arg), void *arg)
{
	unsigned long pg, last = (off + len - 1) >> PAGE_SHIFT, nr = 0, i;
	void **arr, *win;
	int err;

	mutex_lock(&ep->rma.lock);
	err = scif_window_conn_err(ep);
	/* Count the windows and check them. */
	for (pg = off >> PAGE_SHIFT; !err && pg <= last; nr++)
		err = scif_window_range_at(ep, pg, prot, flags, &win, &pg);
	if (err)
		goto out;
	err = -ENOMEM;
	arr = scif_kvmalloc_array(nr, sizeof(*arr), GFP_KERNEL_ACCOUNT);
	if (!arr)
		goto out;
	r->dev = (flags & SCIF_RANGE_MAPPED) && (flags & SCIF_RANGE_REMOTE);
	for (pg = off >> PAGE_SHIFT, i = 0; i < nr; i++) {
		scif_window_range_at(ep, pg, prot, flags, &arr[i], &pg);
		if (flags & SCIF_RANGE_REMOTE)
			scif_window_range_get_remote(ep, arr[i], r->dev);
		else
			kref_get(&((struct scif_window *)arr[i])->ref);
	}
	r->lws = flags & SCIF_RANGE_REMOTE ? NULL : (struct scif_window **)arr;
	r->rws = flags & SCIF_RANGE_REMOTE ? (struct scif_rwindow **)arr : NULL;
	r->nr_wins = nr;
	err = 0;
	if (locked)
		locked(arg);
out:
	mutex_unlock(&ep->rma.lock);
	return err;
}

/**
 * scif_window_range_put() - drop what scif_window_range_hold() took
 * @r: the range; emptied (putting an empty one does nothing)
 *
 * Context: process context (a window's last reference may send its
 * final UNREGISTER_ACK).
 */
void scif_window_range_put(struct scif_win_range *r)
{
	struct scif_rwindow *rw;
	unsigned long i;

	for (i = 0; r->lws && i < r->nr_wins; i++)
		scif_window_put(r->lws[i]);
	for (i = 0; r->rws && i < r->nr_wins; i++) {
		rw = r->rws[i];
		/* The endpoint's teardown may wait for this. */
		if (r->dev && atomic_dec_and_test(&rw->dev_refs)) {
			atomic_dec(&rw->ep->rma.nr_devheld);
			wake_up_all(&rw->ep->wq);
		}
		scif_rwindow_put(rw);
	}
	kvfree(r->lws);
	kvfree(r->rws);
	r->lws = NULL;
	r->rws = NULL;
	r->nr_wins = 0;
}

/* Local windows ------------------------------------------------------ */

static void scif_window_free_xfer(struct scif_window *w)
{
	unsigned int i;

	/* The peer read it, or never will: unmapped before it goes. */
	scif_lmap_free(&w->xfer_map);
	for (i = 0; i < w->nr_xfer; i++)
		__free_page(w->xfer[i]);
	kvfree(w->xfer);
	w->xfer = NULL;
	w->nr_xfer = 0;
}

static void scif_window_release(struct kref *ref)
{
	struct scif_window *w = container_of(ref, struct scif_window, ref);

	scif_window_free_xfer(w);
	/* The peer let go of the window (or its node went). */
	scif_lmap_free(&w->run_map);
	scif_pin_put(w->pinned);
	atomic_long_dec(&scif_nr_windows);
	kfree(w);
}

/**
 * scif_window_put() - drop a reference to a local window
 * @w: the window
 *
 * Context: process context; not under rma.lock.
 */
void scif_window_put(struct scif_window *w)
{
	kref_put(&w->ref, scif_window_release);
}

/*
 * Take @w out of the tree, under rma.lock.  The tree's reference is
 * dropped here, before the window is seen dead, unless it is the last:
 * a caller waiting for the window (scif_epd_unregister()) then drops
 * the last one, so that its call returns with the pages unpinned.
 * Return: true if the tree's reference was the last, which the caller
 * drops once it has let go of the lock.
 */
static bool scif_window_unlink(struct scif_endpt *ep, struct scif_window *w,
			       int err)
{
	bool last;

	lockdep_assert_held(&ep->rma.lock);
	mtree_erase(&ep->rma.local, w->offset >> PAGE_SHIFT);
	atomic_dec(&ep->rma.nr_windows);
	last = !refcount_dec_not_one(&w->ref.refcount);
	w->state = SCIF_WIN_DEAD;
	w->err = err;
	return last;
}

/*
 * Map the run list pages and every run for @node (w->xfer_map,
 * w->run_map); the caller frees both maps on error.
 */
static int scif_window_map_runs(struct scif_window *w, struct scif_node *node)
{
	struct scif_pinned_pages *pp = w->pinned;
	unsigned long r;
	unsigned int i;
	u64 addr;
	int err;

	/* No bus maps device memory for a peer yet: always staged. */
	if (pp->kind == SCIF_PP_MMIO)
		return -EOPNOTSUPP;
	err = scif_lmap_init(&w->xfer_map, w->nr_xfer, GFP_KERNEL_ACCOUNT) ?:
	      scif_lmap_init(&w->run_map, pp->nr_runs, GFP_KERNEL_ACCOUNT);
	for (i = 0; !err && i < w->nr_xfer; i++)
		err = scif_node_map_local(node, &w->xfer_map,
					  page_to_phys(w->xfer[i]), PAGE_SIZE,
					  &addr);
	for (r = 0; !err && r < pp->nr_runs; r++)
		err = scif_node_map_local(node, &w->run_map,
					  virt_to_phys(pp->runs[r].va),
					  pp->runs[r].len, &addr);
	return err;
}

/* Write the run list the peer reads; under rma.lock, connected. */
static int scif_window_build_xfer(struct scif_window *w, struct scif_node *node)
{
	struct scif_pinned_pages *pp = w->pinned;
	unsigned int n = DIV_ROUND_UP(pp->nr_runs, SCIF_RUNLIST_RUNS), i, j;
	struct scif_runlist *rl;
	unsigned long r = 0;
	int err;

	w->xfer = scif_kvcalloc(n, sizeof(*w->xfer), GFP_KERNEL_ACCOUNT);
	if (!w->xfer)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		w->xfer[i] = scif_fail_alloc() ? NULL :
			     alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!w->xfer[i]) {
			scif_window_free_xfer(w);
			return -ENOMEM;
		}
		w->nr_xfer++;
	}
	err = scif_window_map_runs(w, node);
	if (err) {
		scif_window_free_xfer(w);
		scif_lmap_free(&w->run_map);
		/* The link cannot reach the pages: the peer stages its RMAs. */
		w->staged = err == -EOPNOTSUPP;
		return w->staged ? 0 : err;
	}
	for (i = 0; i < n; i++) {
		rl = page_address(w->xfer[i]);
		rl->nr = min_t(unsigned long, pp->nr_runs - r,
			       SCIF_RUNLIST_RUNS);
		for (j = 0; j < rl->nr; j++, r++) {
			rl->run[j].addr = w->run_map.ent[r].addr;
			rl->run[j].len = pp->runs[r].len;
		}
		rl->next = i + 1 < n ? w->xfer_map.ent[i + 1].addr : 0;
	}
	return 0;
}

/*
 * The lowest free run of @size pages at or above @min; under rma.lock,
 * which keeps it free.  (mtree_alloc_range() of 6.1 mishandles an empty
 * tree, so the gap is looked up and then inserted.)
 */
static int scif_window_gap(struct scif_endpt *ep, unsigned long min,
			   unsigned long size, unsigned long *start)
{
	MA_STATE(mas, &ep->rma.local, 0, 0);
	int err;

	lockdep_assert_held(&ep->rma.lock);
	mtree_lock(&ep->rma.local);
	err = mas_empty_area(&mas, min, SCIF_RMA_MAX_PAGE, size);
	mtree_unlock(&ep->rma.local);
	if (err)
		return err;
	if (mas.index < min || mas.index > SCIF_RMA_MAX_PAGE - size + 1)
		return -EBUSY;
	*start = mas.index;
	return 0;
}

/* Find room for @w in the registered address space; under rma.lock. */
SCIF_VISIBLE_IF_KUNIT
int scif_window_place(struct scif_endpt *ep, struct scif_window *w,
		      s64 offset, bool fixed)
{
	unsigned long first = (u64)offset >> PAGE_SHIFT, start;
	int err;

	lockdep_assert_held(&ep->rma.lock);
	if (fixed) {
		if (first > SCIF_RMA_MAX_PAGE - w->nr_pages + 1)
			return -EINVAL;
		err = mtree_insert_range(&ep->rma.local, first,
					 first + w->nr_pages - 1, w, GFP_KERNEL);
		if (err == -EEXIST)
			err = -EADDRINUSE;
		if (!err) {
			w->offset = offset;
			atomic_inc(&ep->rma.nr_windows);
		}
		return err;
	}
	/* Near the hint if there is room above it, else anywhere. */
	err = -EBUSY;
	if (first && first <= SCIF_RMA_MAX_PAGE - w->nr_pages)
		err = scif_window_gap(ep, first, w->nr_pages, &start);
	if (err == -EBUSY)
		err = scif_window_gap(ep, 0, w->nr_pages, &start);
	if (!err)
		err = mtree_insert_range(&ep->rma.local, start,
					 start + w->nr_pages - 1, w, GFP_KERNEL);
	if (err)
		return err == -EBUSY || err == -EEXIST ? -ENOMEM : err;
	w->offset = (u64)start << PAGE_SHIFT;
	atomic_inc(&ep->rma.nr_windows);
	return 0;
}

SCIF_EXPORT_IF_KUNIT(scif_window_place);

/* A window message: arg[0] and arg[1] name the window (id, offset). */
static void scif_window_msg(struct scif_msg *msg, u32 op, u64 dst, u64 src,
			    u64 id, u64 offset)
{
	scif_nodemsg_init(msg, op, dst, src);
	msg->arg[0] = id;
	msg->arg[1] = offset;
}

/* Reserve the offsets and write the run list; fills the REGISTER. */
static int scif_window_open(struct scif_endpt *ep, struct scif_window *w,
			    s64 offset, bool fixed, struct scif_msg *msg)
{
	struct scif_pinned_pages *pp = w->pinned;
	int err;

	mutex_lock(&ep->rma.lock);
	err = scif_window_conn_err(ep);
	if (err)
		goto out;
	err = scif_window_place(ep, w, offset, fixed);
	if (err)
		goto out;
	err = scif_window_build_xfer(w, ep->node);
	if (err) {
		mtree_erase(&ep->rma.local, w->offset >> PAGE_SHIFT);
		atomic_dec(&ep->rma.nr_windows);
		goto out;
	}
	scif_window_msg(msg, SCIF_MSG_REGISTER, ep->peer_handle, ep->handle,
			w->id, w->offset);
	msg->arg[2] = w->nr_pages;
	if (w->staged) {
		msg->arg[3] = (u32)w->prot | SCIF_REGISTER_STAGED;
		goto out;
	}
	msg->arg[3] = (u64)pp->nr_runs << 32 | (u32)w->prot;
	msg->arg[4] = w->xfer_map.ent[0].addr;
	scif_window_runlist_maybe_corrupt(page_address(w->xfer[0]), msg);
out:
	mutex_unlock(&ep->rma.lock);
	return err;
}

/*
 * Wait until @w leaves @state.  A peer that has shown no progress for
 * rma_ack_timeout_ms meanwhile (@ww) is declared failed: -ENODEV.  A
 * fatal signal gives -EINTR.
 */
static int scif_window_wait(struct scif_endpt *ep, struct scif_window *w,
			    enum scif_window_state state,
			    struct scif_window_watch *ww)
{
	long left;

	while ((left = scif_window_watch_left(ww)) > 0) {
		if (wait_event_killable_timeout(ep->wq,
						READ_ONCE(w->state) != state,
						min_t(long, left,
						      SCIF_WINDOW_WATCH_SLICE)) < 0)
			return -EINTR;
		if (READ_ONCE(w->state) != state)
			return 0;
	}
	pr_warn("node %u owes a window answer and did nothing for %u ms\n",
		ep->node->id, READ_ONCE(scif_rma_ack_timeout_ms));
	scif_node_protocol_error(ep->node);
	return -ENODEV;
}

/*
 * A window over kernel memory, withdrawn: an RMA of the peer still
 * writes or reads its pages, and the kernel caller frees or reuses them
 * as soon as scif_epd_unregister() returns.  So wait for the peer's final
 * answer (or the end of the connection or node), with no deadline: a
 * slow peer is not a broken one.  A fatal signal gives -EINTR.
 */
static int scif_window_wait_released(struct scif_endpt *ep,
				     struct scif_window *w)
{
	if (w->pinned->user)
		return 0;
	if (wait_event_killable(ep->wq,
				READ_ONCE(w->state) != SCIF_WIN_WITHDRAWN))
		return -EINTR;
	return 0;
}

/*
 * The registrant's wait for REGISTER_ACK is over (or given up with
 * @err): a window still waiting for its answer is abandoned to the
 * acknowledgment handler, or to the teardown of the connection.
 */
static s64 scif_window_opened(struct scif_endpt *ep, struct scif_window *w,
			      int err)
{
	s64 ret;

	mutex_lock(&ep->rma.lock);
	switch (w->state) {
	case SCIF_WIN_REGISTERING:
		w->abandoned = true;
		ret = err ?: -EINTR;
		break;
	case SCIF_WIN_DEAD:
		ret = w->err;
		break;
	default:
		ret = w->offset;
		break;
	}
	mutex_unlock(&ep->rma.lock);
	return ret;
}

static s64 scif_epd_do_register(struct scif_endpt *ep,
				struct scif_pinned_pages *pp, s64 offset,
				int map_flags);

/**
 * scif_epd_register() - open a window over pinned pages
 * @ep: a connected endpoint
 * @pp: the pages; the window takes a reference of its own
 * @offset: the offset (SCIF_MAP_FIXED), or a hint (0: none)
 * @map_flags: SCIF_MAP_FIXED, SCIF_MAP_KERNEL (ignored here)
 *
 * Places the window, tells the peer and waits for its answer for as long
 * as the peer makes progress (struct scif_window_watch): a peer that
 * handles none of our messages and sends none for rma_ack_timeout_ms
 * meanwhile is declared failed (scif_node_protocol_error()) and -ENODEV
 * returned.
 *
 * Context: process context; sleeps until the peer answers.
 * Return: the window's offset, or -EINVAL, -EADDRINUSE, -ENOMEM,
 * -ENOTCONN, -ECONNRESET, -ENODEV, -EINTR (fatal signal), -EAGAIN (over
 * the peer's budget for remote windows) or -EPROTO (the peer refused the
 * window for a reason it should not have).
 */
s64 scif_epd_register(struct scif_endpt *ep, struct scif_pinned_pages *pp,
		      s64 offset, int map_flags)
{
	s64 ret = scif_epd_do_register(ep, pp, offset, map_flags);

	trace_scif_register(ep->handle, ret < 0 ? offset : ret,
			    (u64)pp->nr_pages << PAGE_SHIFT,
			    ret < 0 ? (int)ret : 0);
	return ret;
}

/* scif_epd_register() without its tracepoint. */
static s64 scif_epd_do_register(struct scif_endpt *ep,
				struct scif_pinned_pages *pp, s64 offset,
				int map_flags)
{
	bool fixed = map_flags & SCIF_MAP_FIXED;
	struct scif_window *w;
	struct scif_msg msg;
	s64 ret;
	int err;

	if ((map_flags & ~(SCIF_MAP_FIXED | SCIF_MAP_KERNEL)) || offset < 0 ||
	    (fixed && !PAGE_ALIGNED(offset)))
		return -EINVAL;
	w = scif_kzalloc(sizeof(*w), GFP_KERNEL_ACCOUNT);
	if (!w)
		return -ENOMEM;
	kref_init(&w->ref);		/* the tree's */
	w->id = atomic64_inc_return(&scif_window_ids);
	w->nr_pages = pp->nr_pages;
	w->prot = pp->prot;
	w->pinned = pp;
	kref_get(&pp->ref);
	w->state = SCIF_WIN_REGISTERING;
	atomic_long_inc(&scif_nr_windows);

	err = scif_window_open(ep, w, offset, fixed, &msg);
	if (err) {
		scif_window_put(w);
		return err;
	}
	/* The close of its endpoint waits until the window is gone. */
	if (!pp->user)
		WRITE_ONCE(ep->rma.kernel_windows, true);
	kref_get(&w->ref);		/* ours, while we wait */
	err = scif_node_send(ep->node, &msg);
	if (err) {
		mutex_lock(&ep->rma.lock);
		if (w->state == SCIF_WIN_REGISTERING)
			scif_window_unlink(ep, w, err);	/* not the last */
		mutex_unlock(&ep->rma.lock);
	} else {
		struct scif_window_watch ww;

		scif_window_watch_start(&ww, ep->node);
		err = scif_window_wait(ep, w, SCIF_WIN_REGISTERING, &ww);
	}
	ret = scif_window_opened(ep, w, err);
	scif_window_put(w);
	return ret;
}

/* Check [first, last] for scif_epd_unregister(); under rma.lock. */
static int scif_window_unregister_check(struct scif_endpt *ep,
					unsigned long first,
					unsigned long last)
{
	unsigned long idx = first, wfirst;
	struct scif_window *w;
	int found = 0;

	lockdep_assert_held(&ep->rma.lock);
	mt_for_each(&ep->rma.local, w, idx, last) {
		wfirst = w->offset >> PAGE_SHIFT;
		if (wfirst < first || wfirst + w->nr_pages - 1 > last)
			return -EINVAL;
		if (w->state == SCIF_WIN_REGISTERED)
			found++;
	}
	return found ? 0 : -ENXIO;
}

static int scif_epd_do_unregister(struct scif_endpt *ep, s64 offset,
				  u64 len);

/**
 * scif_epd_unregister() - close the windows inside a range
 * @ep: the endpoint
 * @offset: start of the range, page aligned
 * @len: length of the range, a non-zero multiple of the page size
 *
 * Every window entirely inside the range is closed; a window that is
 * only partly inside fails the call and nothing is closed.  Waits until
 * the peer has taken the windows out of use, which it does as soon as it
 * reads the request, whatever RMAs it still runs on them.  A window an
 * RMA of the peer still uses keeps its offsets and its pages (pinned and
 * charged) until that RMA is done.  A window over kernel memory
 * (SCIF_MAP_KERNEL) is waited for until then, with no deadline, since its
 * caller reuses the memory when the call returns.
 *
 * If UNREGISTER cannot be sent (the node went, or a fatal signal), the
 * windows not yet told to the peer stay registered and the error is
 * returned.  If the wait is cut short (fatal signal: -EINTR) or the peer
 * owes an answer and shows no progress for rma_ack_timeout_ms (the node
 * is declared failed: -ENODEV; see struct scif_window_watch), the
 * windows told to the peer stay unusable and are released
 * when the peer acknowledges or the connection or the node goes.
 *
 * Context: process context; sleeps until the peer answers.
 * Return: 0, -EINVAL, -ENXIO (no window in the range), -ENOTCONN,
 * -ECONNRESET, -ENODEV or -EINTR.
 */
int scif_epd_unregister(struct scif_endpt *ep, s64 offset, u64 len)
{
	int err = scif_epd_do_unregister(ep, offset, len);

	trace_scif_unregister(ep->handle, offset, len, err);
	return err;
}

/* scif_epd_unregister() without its tracepoint. */
static int scif_epd_do_unregister(struct scif_endpt *ep, s64 offset, u64 len)
{
	unsigned long first, last, idx;
	struct scif_window_watch ww;
	struct scif_window *w, *tmp;
	unsigned long sent = 0;
	struct scif_msg msg;
	LIST_HEAD(batch);
	int err;

	if (offset < 0 || !len || !PAGE_ALIGNED(offset) || !PAGE_ALIGNED(len))
		return -EINVAL;
	first = (u64)offset >> PAGE_SHIFT;
	last = len >> PAGE_SHIFT > SCIF_RMA_MAX_PAGE - first ?
	       SCIF_RMA_MAX_PAGE : first + (len >> PAGE_SHIFT) - 1;

	mutex_lock(&ep->rma.lock);
	err = scif_window_conn_err(ep) ?:
	      scif_window_unregister_check(ep, first, last);
	if (err) {
		mutex_unlock(&ep->rma.lock);
		return err;
	}
	idx = first;
	mt_for_each(&ep->rma.local, w, idx, last) {
		if (w->state != SCIF_WIN_REGISTERED)
			continue;
		w->state = SCIF_WIN_UNREGISTERING;
		kref_get(&w->ref);
		list_add_tail(&w->unreg, &batch);
	}
	mutex_unlock(&ep->rma.lock);

	/* No new mapping takes them now: revoke what holds them. */
	list_for_each_entry(w, &batch, unreg)
		scif_window_revoke_local(ep, w);

	list_for_each_entry(w, &batch, unreg) {
		scif_window_msg(&msg, SCIF_MSG_UNREGISTER, ep->peer_handle,
				ep->handle, w->id, w->offset);
		err = scif_node_send(ep->node, &msg);
		if (err)
			break;
		sent++;
	}
	scif_window_watch_start(&ww, ep->node);
	list_for_each_entry_safe(w, tmp, &batch, unreg) {
		if (sent) {
			/*
			 * Interrupted or timed out: the window stays in
			 * UNREGISTERING and goes when the peer acknowledges
			 * or the connection or node goes.
			 */
			if (!err)
				err = scif_window_wait(ep, w,
						       SCIF_WIN_UNREGISTERING,
						       &ww) ?:
				      scif_window_wait_released(ep, w);
			sent--;
		} else {
			/* Never told to the peer: usable again. */
			mutex_lock(&ep->rma.lock);
			if (w->state == SCIF_WIN_UNREGISTERING)
				w->state = SCIF_WIN_REGISTERED;
			mutex_unlock(&ep->rma.lock);
		}
		list_del(&w->unreg);
		scif_window_put(w);
	}
	return err;
}

/* Remote windows ----------------------------------------------------- */

static void scif_rwindow_unmap(struct scif_rwindow *rw, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		scif_node_unmap(rw->node, rw->runs[i].va, rw->runs[i].len);
}

/* Give back what scif_rwindow_charge() took. */
static void scif_rwindow_uncharge(struct scif_endpt *ep, struct scif_node *node,
				  unsigned long runs)
{
	struct scif_user *u = ep->owner;

	atomic_long_sub(runs, &ep->rma.nr_rruns);
	atomic_long_dec(&node->nr_rwindows);
	atomic_long_sub(runs, &node->nr_rruns);
	if (u) {
		atomic_long_dec(&u->nr_rwindows);
		atomic_long_sub(runs, &u->nr_rruns);
	}
}

/*
 * Charge the user's share of the node budgets; true if over it.  Always
 * counted, so that the uncharge matches whatever the share is by then.
 */
static bool scif_rwindow_user_over(struct scif_user *u, unsigned long runs)
{
	unsigned int share = READ_ONCE(scif_rwindow_user_share);
	unsigned long max_windows = READ_ONCE(scif_max_rwindows_node);
	unsigned long max_runs = READ_ONCE(scif_max_rruns_node);
	unsigned long windows, nr_runs;

	windows = atomic_long_inc_return(&u->nr_rwindows);
	nr_runs = atomic_long_add_return(runs, &u->nr_rruns);
	if (share >= 100)
		return false;
	return windows > mult_frac(max_windows, share, 100) ||
	       nr_runs > mult_frac(max_runs, share, 100);
}

/*
 * Charge a remote window of @runs runs to the budgets of the endpoint,
 * of its owner (a local user) and of the node, before anything is
 * allocated for it; -EAGAIN if over one.  (The endpoint's window count
 * is nr_rwindows, changed under rma.lock, which the caller holds; the
 * owner outlives the endpoint's windows.)
 */
static int scif_rwindow_charge(struct scif_endpt *ep, struct scif_node *node,
			       unsigned long runs)
{
	bool over;

	lockdep_assert_held(&ep->rma.lock);
	over = atomic_read(&ep->rma.nr_rwindows) >=
	       READ_ONCE(scif_max_rwindows_ep);
	over |= atomic_long_add_return(runs, &ep->rma.nr_rruns) >
		READ_ONCE(scif_max_rruns_ep);
	over |= atomic_long_inc_return(&node->nr_rwindows) >
		READ_ONCE(scif_max_rwindows_node);
	over |= atomic_long_add_return(runs, &node->nr_rruns) >
		READ_ONCE(scif_max_rruns_node);
	if (ep->owner)
		over |= scif_rwindow_user_over(ep->owner, runs);
	if (over) {
		scif_rwindow_uncharge(ep, node, runs);
		return -EAGAIN;
	}
	return 0;
}

static void scif_rwindow_release(struct kref *ref)
{
	struct scif_rwindow *rw = container_of(ref, struct scif_rwindow, ref);
	struct scif_endpt *ep = rw->ep;
	struct scif_msg msg;

	scif_rwindow_unmap(rw, rw->nr_runs);
	if (rw->ack_on_release && READ_ONCE(rw->node->online)) {
		scif_window_msg(&msg, SCIF_MSG_UNREGISTER_ACK, ep->peer_handle,
				ep->handle, rw->id, rw->offset);
		scif_node_reply_reserved(rw->node, rw->ack, &msg);
		rw->ack = NULL;
	}
	scif_node_reply_unreserve(rw->ack);
	kvfree(rw->runs);
	scif_rwindow_uncharge(ep, rw->node, rw->nr_runs);
	kfree(rw);
	atomic_long_dec(&scif_nr_rwindows);
	atomic_dec(&ep->rma.nr_rwindows);
	wake_up_all(&ep->wq);
	scif_epd_put(ep);
}

/**
 * scif_rwindow_put() - drop a reference to a remote window
 * @rw: the window
 *
 * Context: process context; not under rma.lock.
 */
void scif_rwindow_put(struct scif_rwindow *rw)
{
	kref_put(&rw->ref, scif_rwindow_release);
}

/**
 * scif_rwindow_get() - the peer's window at an offset
 * @ep: the endpoint
 * @off: the offset in the peer's registered address space, <= S64_MAX
 * @prot: SCIF_PROT_* the caller needs
 * @err: receives -ENXIO, -EACCES or a connection error on failure
 *
 * For mapping the window into a process (its only user): a window this
 * node reaches only through staging (see design.rst) has no pages to map
 * and gives -ENXIO, as does a range the bus cannot reach.
 *
 * Return: the window with a reference, or NULL.
 */
struct scif_rwindow *scif_rwindow_get(struct scif_endpt *ep, u64 off,
				      int prot, int *err)
{
	struct scif_rwindow *rw;

	mutex_lock(&ep->rma.lock);
	*err = scif_window_conn_err(ep);
	rw = *err ? NULL : mtree_load(&ep->rma.remote, off >> PAGE_SHIFT);
	if (!*err && (!rw || rw->staged))
		*err = -ENXIO;
	else if (!*err && (rw->prot & prot) != prot)
		*err = -EACCES;
	if (*err)
		rw = NULL;
	else
		kref_get(&rw->ref);
	mutex_unlock(&ep->rma.lock);
	return rw;
}

/* Copy, check and map one page of the peer's run list. */
static int scif_rwindow_read_page(struct scif_rwindow *rw, u64 addr,
				  unsigned long *r, u64 *next)
{
	u64 size = (u64)rw->nr_pages << PAGE_SHIFT, woff, a, len, nr, j;
	struct scif_runlist *rl;
	struct scif_run *run;
	int err = 0;
	void *va;

	if (!addr || !PAGE_ALIGNED(addr))
		return -EINVAL;
	rl = scif_node_map(rw->node, addr, SCIF_RUNLIST_PAGE);
	if (IS_ERR(rl))
		return -EINVAL;
	nr = READ_ONCE(rl->nr);
	*next = READ_ONCE(rl->next);
	if (!nr || nr > SCIF_RUNLIST_RUNS || nr > rw->nr_runs - *r)
		err = -EINVAL;
	woff = *r ? rw->runs[*r - 1].woff + rw->runs[*r - 1].len : 0;
	for (j = 0; !err && j < nr; j++) {
		a = READ_ONCE(rl->run[j].addr);
		len = READ_ONCE(rl->run[j].len);
		if (!len || !PAGE_ALIGNED(a) || !PAGE_ALIGNED(len) ||
		    len > size - woff) {
			err = -EINVAL;
			break;
		}
		va = scif_node_map(rw->node, a, len);
		if (IS_ERR(va)) {
			err = -EINVAL;
			break;
		}
		run = &rw->runs[(*r)++];
		run->woff = woff;
		run->addr = a;
		run->len = len;
		run->va = va;
		woff += len;
	}
	scif_node_unmap(rw->node, rl, SCIF_RUNLIST_PAGE);
	return err;
}

/* Read the whole run list; every run is mapped on success. */
SCIF_VISIBLE_IF_KUNIT
int scif_rwindow_read_runs(struct scif_rwindow *rw, u64 addr)
{
	unsigned long r = 0;
	u64 last;
	int err;

	rw->runs = scif_kvcalloc(rw->nr_runs, sizeof(*rw->runs),
				 GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!rw->runs)
		return -ENOMEM;
	while (r < rw->nr_runs) {
		err = scif_rwindow_read_page(rw, addr, &r, &addr);
		if (err)
			goto unmap;
		cond_resched();
	}
	last = rw->runs[r - 1].woff + rw->runs[r - 1].len;
	if (last == (u64)rw->nr_pages << PAGE_SHIFT)
		return 0;
	err = -EINVAL;
unmap:
	scif_rwindow_unmap(rw, r);
	kvfree(rw->runs);
	return err;
}

SCIF_EXPORT_IF_KUNIT(scif_rwindow_read_runs);

SCIF_VISIBLE_IF_KUNIT
bool scif_window_register_msg_ok(const struct scif_msg *msg)
{
	u64 offset = msg->arg[1], pages = msg->arg[2];
	u64 runs = msg->arg[3] >> 32, prot = (u32)msg->arg[3];

	if (!PAGE_ALIGNED(offset) || offset > S64_MAX ||
	    !pages || pages > SCIF_WINDOW_MAX_PAGES ||
	    (offset >> PAGE_SHIFT) > SCIF_RMA_MAX_PAGE - pages + 1)
		return false;
	/* A staged window: no run list at all. */
	if (prot & SCIF_REGISTER_STAGED)
		return !runs && !msg->arg[4] &&
		       !(prot & ~(u64)(SCIF_PROT_READ | SCIF_PROT_WRITE |
				       SCIF_REGISTER_STAGED));
	return !(prot & ~(u64)(SCIF_PROT_READ | SCIF_PROT_WRITE)) &&
	       runs && runs <= pages && runs <= SCIF_WINDOW_MAX_RUNS;
}

SCIF_EXPORT_IF_KUNIT(scif_window_register_msg_ok);

/* Build the remote window a REGISTER describes; under rma.lock. */
static int scif_rwindow_add(struct scif_node *node, const struct scif_msg *msg,
			    struct scif_endpt *ep)
{
	struct scif_rwindow *rw;
	unsigned long first;
	int err;

	lockdep_assert_held(&ep->rma.lock);
	if (!scif_window_register_msg_ok(msg))
		return -EINVAL;
	err = scif_rwindow_charge(ep, node, msg->arg[3] >> 32);
	if (err)
		return err;
	rw = scif_kzalloc(sizeof(*rw), GFP_KERNEL_ACCOUNT);
	if (rw)
		rw->ack = scif_node_reply_reserve();
	if (!rw || !rw->ack) {
		kfree(rw);
		scif_rwindow_uncharge(ep, node, msg->arg[3] >> 32);
		return -ENOMEM;
	}
	kref_init(&rw->ref);
	rw->ep = ep;
	rw->node = node;
	rw->id = msg->arg[0];
	rw->offset = msg->arg[1];
	rw->nr_pages = msg->arg[2];
	rw->prot = (u32)msg->arg[3] & (SCIF_PROT_READ | SCIF_PROT_WRITE);
	rw->staged = msg->arg[3] & SCIF_REGISTER_STAGED;
	rw->nr_runs = msg->arg[3] >> 32;
	err = rw->staged ? 0 : scif_rwindow_read_runs(rw, msg->arg[4]);
	if (err)
		goto free;
	first = rw->offset >> PAGE_SHIFT;
	err = mtree_insert_range(&ep->rma.remote, first,
				 first + rw->nr_pages - 1, rw, GFP_KERNEL);
	if (err) {
		err = err == -EEXIST ? -EINVAL : err;
		goto unmap;
	}
	kref_get(&ep->ref);
	atomic_inc(&ep->rma.nr_rwindows);
	atomic_long_inc(&scif_nr_rwindows);
	return 0;

unmap:
	scif_rwindow_unmap(rw, rw->nr_runs);
	kvfree(rw->runs);
free:
	scif_rwindow_uncharge(ep, node, rw->nr_runs);
	scif_node_reply_unreserve(rw->ack);
	kfree(rw);
	return err;
}

static void scif_window_handle_register(struct scif_node *node,
					const struct scif_msg *msg,
					struct scif_endpt *ep)
{
	struct mem_cgroup *memcg;
	struct scif_msg reply;
	int err;

	/*
	 * The run list is read under rma.lock while connected: teardown
	 * (before DISCONNECT goes out) waits for it, so the registrant
	 * never frees the list under our feet.  What the window costs is
	 * charged to the endpoint owner's memory cgroup, not to ours.
	 */
	mutex_lock(&ep->rma.lock);
	err = scif_window_conn_err(ep);
	if (!err) {
		memcg = set_active_memcg(ep->memcg);
		err = scif_rwindow_add(node, msg, ep);
		set_active_memcg(memcg);
	}
	mutex_unlock(&ep->rma.lock);
	if (err)
		pr_debug("node %u window refused: %d\n", node->id, err);
	scif_window_msg(&reply, SCIF_MSG_REGISTER_ACK, msg->src, ep->handle,
			msg->arg[0], msg->arg[1]);
	reply.arg[2] = -err;
	scif_node_reply(node, &reply);
}

static void scif_window_handle_unregister(struct scif_node *node,
					  const struct scif_msg *msg,
					  struct scif_endpt *ep)
{
	struct scif_rwindow *rw;
	struct scif_msg reply;

	mutex_lock(&ep->rma.lock);
	rw = msg->arg[1] <= S64_MAX ?
	     mtree_load(&ep->rma.remote, msg->arg[1] >> PAGE_SHIFT) : NULL;
	if (rw && rw->offset == msg->arg[1] && rw->id == msg->arg[0]) {
		mtree_erase(&ep->rma.remote, rw->offset >> PAGE_SHIFT);
		rw->ack_on_release = true;
	} else {
		rw = NULL;
	}
	mutex_unlock(&ep->rma.lock);
	scif_window_msg(&reply, SCIF_MSG_UNREGISTER_ACK, msg->src, ep->handle,
			msg->arg[0], msg->arg[1]);
	if (!rw) {
		scif_node_reply(node, &reply);
		return;
	}
	scif_window_revoke(ep, rw);	/* zaps the window's mappings */
	/*
	 * Out of the tree and unmapped, so no one takes a new reference:
	 * if an RMA still holds one, say at once that the window is out of
	 * use, before the final acknowledgment its release sends.  (Not for
	 * a staged window: its RMAs go on through the registrant's tree.)
	 */
	if (kref_read(&rw->ref) > 1 && !rw->staged) {
		reply.arg[2] = SCIF_UNREGISTER_WITHDRAWN;
		scif_node_reply(node, &reply);
	}
	scif_rwindow_put(rw);	/* acknowledges, now or later */
}

/* Why a peer may refuse a window (scif_node_errno()). */
static const int scif_window_refusals[] = {
	ENOMEM, EAGAIN, ECONNRESET, ENODEV, ENOTCONN, 0
};

/* A local window named by an acknowledgment, in state @state. */
static struct scif_window *scif_window_acked(struct scif_endpt *ep,
					     const struct scif_msg *msg,
					     enum scif_window_state state)
{
	struct scif_window *w;

	if (msg->arg[1] > S64_MAX)
		return NULL;
	w = mtree_load(&ep->rma.local, msg->arg[1] >> PAGE_SHIFT);
	if (!w || w->offset != msg->arg[1] || w->id != msg->arg[0] ||
	    w->state != state)
		return NULL;
	return w;
}

static void scif_window_handle_register_ack(struct scif_node *node,
					    const struct scif_msg *msg,
					    struct scif_endpt *ep)
{
	struct scif_window *w, *dead = NULL;
	struct scif_msg unreg;
	bool send = false;

	mutex_lock(&ep->rma.lock);
	w = scif_window_acked(ep, msg, SCIF_WIN_REGISTERING);
	if (!w)
		goto out;
	scif_window_free_xfer(w);
	if (msg->arg[2]) {
		if (scif_window_unlink(ep, w,
				       scif_node_errno(msg->arg[2], false,
						       scif_window_refusals)))
			dead = w;
	} else if (w->abandoned) {
		w->state = SCIF_WIN_UNREGISTERING;
		scif_window_msg(&unreg, SCIF_MSG_UNREGISTER, ep->peer_handle,
				ep->handle, w->id, w->offset);
		send = true;
	} else {
		w->state = SCIF_WIN_REGISTERED;
	}
out:
	mutex_unlock(&ep->rma.lock);
	wake_up_all(&ep->wq);
	if (send)
		scif_node_reply(node, &unreg);
	if (dead)
		scif_window_put(dead);
}

/*
 * UNREGISTER_ACK: with WITHDRAWN, the peer took the window out of use but
 * an RMA of its own still holds it: the unregistration is done, the window
 * keeps its offsets and pages until the final acknowledgment, which takes
 * it out of the tree.  (A WITHDRAWN that comes after the final answer
 * finds nothing and is ignored.)
 */
static void scif_window_handle_unregister_ack(const struct scif_msg *msg,
					      struct scif_endpt *ep)
{
	bool withdrawn = msg->arg[2] == SCIF_UNREGISTER_WITHDRAWN;
	struct scif_window *w;

	mutex_lock(&ep->rma.lock);
	w = scif_window_acked(ep, msg, SCIF_WIN_UNREGISTERING);
	if (!w && !withdrawn)
		w = scif_window_acked(ep, msg, SCIF_WIN_WITHDRAWN);
	if (w && withdrawn) {
		w->state = SCIF_WIN_WITHDRAWN;
		w = NULL;
	} else if (w && !scif_window_unlink(ep, w, 0)) {
		w = NULL;
	}
	mutex_unlock(&ep->rma.lock);
	wake_up_all(&ep->wq);
	scif_node_test_delay(SCIF_DELAY_RELEASE);
	if (w)
		scif_window_put(w);
}

/**
 * scif_window_handle_msg() - handle a window message for an endpoint
 * @node: the node it came from
 * @msg: REGISTER, REGISTER_ACK, UNREGISTER or UNREGISTER_ACK
 * @ep: the endpoint it names, whose peer is on @node
 *
 * Context: the node's rx_work.  Takes rma.lock, which is never held
 * while waiting for anything remote.
 */
void scif_window_handle_msg(struct scif_node *node, const struct scif_msg *msg,
			    struct scif_endpt *ep)
{
	if (msg->src != READ_ONCE(ep->peer_handle))
		return;
	if ((msg->op == SCIF_MSG_REGISTER || msg->op == SCIF_MSG_UNREGISTER) &&
	    scif_window_drop_msg())
		return;
	switch (msg->op) {
	case SCIF_MSG_REGISTER:
		scif_window_handle_register(node, msg, ep);
		break;
	case SCIF_MSG_REGISTER_ACK:
		scif_window_handle_register_ack(node, msg, ep);
		break;
	case SCIF_MSG_UNREGISTER:
		scif_window_handle_unregister(node, msg, ep);
		break;
	case SCIF_MSG_UNREGISTER_ACK:
		scif_window_handle_unregister_ack(msg, ep);
		break;
	}
}

/* Teardown ----------------------------------------------------------- */

/**
 * scif_window_epd_teardown() - drop the windows of a connection
 * @ep: the endpoint; its state already says it is no longer connected
 * @local: drop this endpoint's own windows too (only once the peer no
 *	longer touches them)
 * @err: what a registrant still waiting is told
 *
 * Waits until no RMA or mapping uses the peer's windows any more: after
 * this, the endpoint does not touch the peer's memory.  Windows held by
 * device mappings (device-map files, dma-bufs: revoked by now) are not
 * waited for: their holders let go of them later, and their pages stay
 * the windows' meanwhile (scif_node_hold_get()).
 *
 * Context: process context; not under any endpoint lock but ctl_mutex.
 */
void scif_window_epd_teardown(struct scif_endpt *ep, bool local, int err)
{
	struct scif_window *w, *wtmp;
	struct scif_rwindow *rw, *rtmp;
	LIST_HEAD(rwins);
	LIST_HEAD(wins);
	unsigned long idx;

	mutex_lock(&ep->rma.lock);
	idx = 0;
	while ((rw = mt_find(&ep->rma.remote, &idx, ULONG_MAX))) {
		mtree_erase(&ep->rma.remote, rw->offset >> PAGE_SHIFT);
		list_add_tail(&rw->link, &rwins);
	}
	idx = 0;
	while (local && (w = mt_find(&ep->rma.local, &idx, ULONG_MAX))) {
		if (scif_window_unlink(ep, w, err))
			list_add_tail(&w->dead, &wins);
	}
	mutex_unlock(&ep->rma.lock);
	wake_up_all(&ep->wq);

	list_for_each_entry_safe(rw, rtmp, &rwins, link) {
		scif_window_revoke(ep, rw);	/* zaps the window's mappings */
		scif_rwindow_put(rw);
	}
	list_for_each_entry_safe(w, wtmp, &wins, dead)
		scif_window_put(w);
	/* Device mappings keep theirs until their holders let go. */
	wait_event(ep->wq, atomic_read(&ep->rma.nr_rwindows) ==
		   atomic_read(&ep->rma.nr_devheld));
}

/**
 * scif_window_epd_destroy() - free the registered address spaces
 * @ep: the endpoint, unreferenced, after scif_window_epd_teardown() of
 *	its local windows too: both trees are empty
 *
 * Context: process context.
 */
void scif_window_epd_destroy(struct scif_endpt *ep)
{
	mtree_destroy(&ep->rma.local);
	mtree_destroy(&ep->rma.remote);
}

/**
 * scif_epd_register_mem() - pin memory and open a window over it
 * @ep: a connected endpoint
 * @addr: start, page aligned (a kernel address with SCIF_MAP_KERNEL)
 * @len: bytes, a non-zero multiple of the page size
 * @offset: the offset (SCIF_MAP_FIXED), or a hint (0: none)
 * @prot: SCIF_PROT_*
 * @map_flags: SCIF_MAP_FIXED, SCIF_MAP_KERNEL
 *
 * Arguments and the connection are checked before anything is pinned.
 *
 * Context: process context; sleeps until the peer answers.
 * Return: the window's offset, or an error of scif_pin_range() or
 * scif_epd_register().
 */
s64 scif_epd_register_mem(struct scif_endpt *ep, unsigned long addr,
			  size_t len, s64 offset, int prot, int map_flags)
{
	struct scif_pinned_pages *pp;
	s64 ret;
	int err;

	if ((map_flags & ~(SCIF_MAP_FIXED | SCIF_MAP_KERNEL)) || offset < 0 ||
	    ((map_flags & SCIF_MAP_FIXED) && !PAGE_ALIGNED(offset)))
		return -EINVAL;
	err = scif_pin_check(addr, len, prot, map_flags & SCIF_MAP_KERNEL) ?:
	      scif_window_conn_err(ep);
	if (err)
		return err;
	err = scif_pin_range(addr, len, prot, map_flags & SCIF_MAP_KERNEL, &pp);
	if (err)
		return err;
	ret = scif_epd_register(ep, pp, offset, map_flags);
	scif_pin_put(pp);
	return ret;
}

/**
 * scif_epd_register_devmem() - open a window over a device memory set
 * @ep: a connected endpoint
 * @pp: the set (SCIF_PP_MMIO, from scif_devmem_pin*()); the caller
 *	keeps its reference
 * @offset: the offset (SCIF_MAP_FIXED), or a hint (0: none)
 * @map_flags: 0 or SCIF_MAP_FIXED
 *
 * The window is always staged: the peers reach it through STAGE_*
 * messages.  Once it is registered, an unbind of the function
 * unregisters it (scif_devmem.c); if the function went while it was
 * being registered, it is unregistered here.
 *
 * Context: process context; sleeps until the peer answers.
 * Return: the window's offset, or an error of scif_epd_register(), or
 * -ENODEV (the function's driver unbound meanwhile).
 */
s64 scif_epd_register_devmem(struct scif_endpt *ep,
			     struct scif_pinned_pages *pp, s64 offset,
			     int map_flags)
{
	s64 ret;

	if (pp->kind != SCIF_PP_MMIO || (map_flags & ~SCIF_MAP_FIXED))
		return -EINVAL;
	ret = scif_epd_register(ep, pp, offset, map_flags);
	if (ret < 0)
		return ret;
	if (scif_devmem_opened(pp, ep->handle, ret)) {
		scif_epd_unregister(ep, ret, (u64)pp->nr_pages << PAGE_SHIFT);
		return -ENODEV;
	}
	return ret;
}

/* The pages of @ep's registered range [@off, @off + @len) as one alias. */
static int scif_window_alias_pages(struct scif_endpt *ep, u64 off, u64 len,
				   int prot, struct scif_pinned_pages **out)
{
	u64 end = off + len, start, stop, wend;
	struct scif_pinned_pages *pp;
	struct scif_win_range r = {};
	struct scif_window *w;
	unsigned long i;
	int err;

	err = scif_window_range_hold(ep, &r, off, len, prot, SCIF_RANGE_MAPPED,
				     NULL, NULL);
	if (err)
		return err;
	err = -ENOMEM;
	pp = scif_pin_alias_new(len >> PAGE_SHIFT, r.nr_wins, prot);
	if (!pp)
		goto put;
	/* The windows' pages cannot change: each holds its set. */
	for (i = 0; i < r.nr_wins; i++) {
		w = r.lws[i];
		wend = w->offset + ((u64)w->nr_pages << PAGE_SHIFT);
		start = max(off, w->offset);
		stop = min(end, wend);
		scif_pin_alias_add(pp, w->pinned,
				   (start - w->offset) >> PAGE_SHIFT,
				   (stop - start) >> PAGE_SHIFT);
	}
	err = scif_pin_alias_done(pp);
	if (err) {
		scif_pin_put(pp);
		goto put;
	}
	*out = pp;
put:
	scif_window_range_put(&r);
	return err;
}

/**
 * scif_epd_register_alias() - a window over the pages of other windows
 * @dst: a connected endpoint: where the new window is
 * @src: a connected endpoint of this node whose registered range
 *	[@src_off, @src_off + @len) lies in windows over RAM
 * @src_off: page aligned
 * @len: a non-zero multiple of the page size, at most
 *	SCIF_WINDOW_MAX_PAGES pages
 * @offset: the new window's offset (SCIF_MAP_FIXED), or a hint (0: none)
 * @prot: SCIF_PROT_READ and/or SCIF_PROT_WRITE, which every window of
 *	the range must allow
 * @map_flags: 0 or SCIF_MAP_FIXED
 *
 * The new window is over the same pinned pages (struct scif_pinned_pages
 * of the alias references the windows' sets): unregistering the windows
 * of @src leaves its pages pinned until it goes too.  It is charged to
 * nothing new (the pages are charged to whoever pinned them) and counts
 * in @dst's and the peer's window budgets as any window.
 *
 * Context: process context; sleeps until @dst's peer answers.
 * Return: the window's offset, or -EINVAL (arguments), -ENXIO (the range
 * is not all registered on @src), -EACCES (a window forbids @prot),
 * -EOPNOTSUPP (a window over device memory), -ENOMEM, or an error of
 * scif_window_conn_err() for either endpoint or of scif_epd_register().
 */
s64 scif_epd_register_alias(struct scif_endpt *dst, struct scif_endpt *src,
			    s64 src_off, u64 len, s64 offset, int prot,
			    int map_flags)
{
	struct scif_pinned_pages *pp;
	s64 ret;
	int err;

	if ((map_flags & ~SCIF_MAP_FIXED) || offset < 0 || src_off < 0 ||
	    ((map_flags & SCIF_MAP_FIXED) && !PAGE_ALIGNED(offset)) ||
	    !PAGE_ALIGNED(src_off) || !len || !PAGE_ALIGNED(len) ||
	    len >> PAGE_SHIFT > SCIF_WINDOW_MAX_PAGES ||
	    (u64)src_off > S64_MAX - len || !prot ||
	    (prot & ~(SCIF_PROT_READ | SCIF_PROT_WRITE)))
		return -EINVAL;
	err = scif_window_conn_err(dst);
	if (err)
		return err;
	err = scif_window_alias_pages(src, src_off, len, prot, &pp);
	if (err)
		return err;
	ret = scif_epd_register(dst, pp, offset, map_flags);
	scif_pin_put(pp);
	return ret;
}
