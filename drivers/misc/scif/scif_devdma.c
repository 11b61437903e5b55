// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: device mappings of windows.  A device mapping (struct
 * scif_devdma, embedded in what a kind of mapping keeps) holds every
 * window of a range of this endpoint's windows or of the peer's, so
 * that the pages stay the window's while a device may use them (the
 * peer's window, unregistered meanwhile, stays withdrawn and pinned on
 * the peer).  It is revoked when a window of the range is unregistered
 * (by the peer, or by this endpoint for a local range), when the
 * connection ends and when the node is lost: the window hooks of
 * scif_window.c (filled by scif_main.c) and the endpoint's teardown mark
 * it and queue its work; the work, with no SCIF lock held, has the kind
 * revoke it (ops->revoke: after it the holder's device no longer uses
 * the range, or is blocked from it), then unlinks it and drops its
 * endpoint.  When the windows go is the kind's business
 * (scif_devdma_drop()).
 *
 * Kinds: the kernel API's scif_dma_map() (here: a client's struct device,
 * the DMA addresses of the range; its revoke calls the client, then
 * unmaps and drops the windows).  The two calls of the kernel API live
 * here rather than in scif_api.c: struct scif_dma_map has the name of
 * scif_dma_map(), so every file naming the struct would seem to
 * reference the function.
 *
 * States, under the endpoint's devdma.lock:
 *
 *   MAKING --(revoked)--> CANCELLED (the maker fails with why)
 *     |
 *   LIVE --(revoked)--> REVOKING (work queued) --(work done)--> GONE
 *     \--(scif_devdma_end(): the holder let go)------------------^
 *
 * A mapping is on the endpoint's list from the moment it holds windows
 * (listed under rma.lock, with them) until it leaves MAKING for
 * CANCELLED or LIVE for GONE; each unlinking counts in devdma.unlinked
 * and wakes ep->wq, which the teardown and a local unregistration wait
 * on.  Lock order: see scif_endpt.h.
 */
#define pr_fmt(fmt) "scif: " fmt

#include <linux/dma-mapping.h>
#include <linux/export.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "scif_devdma.h"
#include "scif_endpt.h"
#include "scif_fault.h"
#include "scif_lmap.h"
#include "scif_nodes.h"
#include "scif_rma.h"

#define SCIF_DEVDMA_MAGIC	0x5c1fd3aa
/* A revocation still running after this long is logged (once). */
#define SCIF_DEVDMA_SLOW	(10 * HZ)

/* Revocation works; set while the module is loaded. */
static struct workqueue_struct *scif_devdma_wq;

/**
 * struct scif_devdma_map - a kernel client's device mapping (scif_dma_map())
 * @pub: what the client sees; @pub.cookie points here
 * @magic: SCIF_DEVDMA_MAGIC while the mapping exists
 * @dd: the device mapping
 * @dev: the device, with a reference (get_device())
 * @revoke: the client's callback
 * @priv: its argument
 * @dir: the direction the pieces are mapped for
 * @nr_pieces: entries in @pieces
 * @nr_mapped: the first @nr_mapped pieces are mapped
 * @pieces: each physically contiguous piece of the range, as mapped for
 *	@dev: by the node layer (remote; @node set while mapped) or by
 *	dma_map_page() (local; @node NULL)
 *
 * Set before @dd is listed; then whoever takes @dd off the list (the
 * work, scif_dma_unmap(), or scif_dma_map() itself when cancelled)
 * unmaps the pieces.
 */
struct scif_devdma_map {
	struct scif_dma_map pub;
	u32 magic;
	struct scif_devdma dd;
	struct device *dev;
	scif_dma_revoke_t revoke;
	void *priv;
	enum dma_data_direction dir;
	unsigned long nr_pieces;
	unsigned long nr_mapped;
	struct scif_pdmap *pieces;
};

/**
 * scif_devdma_epd_init() - set up a new endpoint's device mappings
 * @ep: the endpoint
 *
 * Called by scif_epd.c with the endpoint's other parts.
 *
 * Context: process context.
 */
void scif_devdma_epd_init(struct scif_endpt *ep)
{
	mutex_init(&ep->devdma.lock);
	INIT_LIST_HEAD(&ep->devdma.maps);
	ep->devdma.unlinked = 0;
	atomic_set(&ep->devdma.nr_files, 0);
	atomic_set(&ep->devdma.dmabufs, 0);
}

/* Whether @d holds window @win (a struct scif_window or scif_rwindow). */
static bool scif_devdma_holds(const struct scif_devdma *d, bool remote,
			      const void *win)
{
	unsigned long i;

	if (d->remote != remote)
		return false;
	for (i = 0; i < d->wins.nr_wins; i++)
		if ((remote ? (const void *)d->wins.rws[i] :
			      (const void *)d->wins.lws[i]) == win)
			return true;
	return false;
}

/* Revoke @d for @why: cancel it if being made, else queue its work. */
static void scif_devdma_mark(struct scif_devdma *d, int why)
{
	lockdep_assert_held(&d->ep->devdma.lock);
	if (d->state == SCIF_DEVDMA_MAKING) {
		d->state = SCIF_DEVDMA_CANCELLED;
		d->why = why;
	} else if (d->state == SCIF_DEVDMA_LIVE) {
		d->state = SCIF_DEVDMA_REVOKING;
		d->why = why;
		queue_work(scif_devdma_wq, &d->work);
	}
}

/* Take @d off its endpoint's list and wake the waiters; under the lock. */
static void scif_devdma_unlink(struct scif_devdma *d,
			       enum scif_devdma_state state)
{
	struct scif_endpt *ep = d->ep;

	lockdep_assert_held(&ep->devdma.lock);
	list_del(&d->link);
	d->state = state;
	WRITE_ONCE(ep->devdma.unlinked, ep->devdma.unlinked + 1);
	/* From now on scif_devdma_end() does not touch the endpoint. */
	WRITE_ONCE(d->ep, NULL);
	wake_up_all(&ep->wq);
}

/**
 * scif_devdma_drop() - let go of a device mapping's windows
 * @d: the mapping, off its endpoint's list or never on it
 *
 * The kind calls it once no device can use the range any more; for a
 * remote range the peer's node is no longer held for it (its aperture
 * opens again, and its next life may come, once none is).  Dropping
 * twice does nothing.
 *
 * Context: process context; no SCIF lock held.
 */
void scif_devdma_drop(struct scif_devdma *d)
{
	scif_window_range_put(&d->wins);
	if (d->node)
		scif_node_hold_put(d->node);
	d->node = NULL;
}

/* The revocation: the kind's, then the mapping leaves the list. */
static void scif_devdma_work(struct work_struct *work)
{
	struct scif_devdma *d = container_of(work, struct scif_devdma, work);
	struct scif_endpt *ep = d->ep;

	d->ops->revoke(d);
	mutex_lock(&ep->devdma.lock);
	scif_devdma_unlink(d, SCIF_DEVDMA_GONE);
	mutex_unlock(&ep->devdma.lock);
	scif_epd_put(ep);
}

/* Why a mapping of @ep's is revoked when a window leaves with its link. */
static int scif_devdma_conn_why(struct scif_endpt *ep)
{
	int err = scif_window_conn_err(ep);

	if (!err)
		return -ENXIO;
	return err == -ENODEV ? -ENODEV : -ECONNRESET;
}

/**
 * scif_devdma_revoke_remote() - a peer's window left an endpoint's tree
 * @ep: the endpoint
 * @rw: the window
 *
 * The window hook (struct scif_window_revoker): every mapping holding
 * @rw is revoked, with -ENXIO if the peer unregistered it, else with the
 * connection's end.  Only marks and queues: the works revoke.
 *
 * Context: process context; takes devdma.lock.
 */
void scif_devdma_revoke_remote(struct scif_endpt *ep, struct scif_rwindow *rw)
{
	struct scif_devdma *d;
	int why = scif_devdma_conn_why(ep);

	mutex_lock(&ep->devdma.lock);
	list_for_each_entry(d, &ep->devdma.maps, link)
		if (scif_devdma_holds(d, true, rw))
			scif_devdma_mark(d, why);
	mutex_unlock(&ep->devdma.lock);
}

/*
 * Wait until no mapping of @ep holds @w (a local window), or, with @w
 * NULL, until @ep has no mapping listed.  Logs once a wait that lasts.
 */
static void scif_devdma_wait(struct scif_endpt *ep, struct scif_window *w)
{
	unsigned long seen, start = jiffies;
	struct scif_devdma *d;
	bool busy;

	for (;;) {
		mutex_lock(&ep->devdma.lock);
		busy = false;
		list_for_each_entry(d, &ep->devdma.maps, link)
			if (!w || scif_devdma_holds(d, false, w))
				busy = true;
		seen = ep->devdma.unlinked;
		mutex_unlock(&ep->devdma.lock);
		if (!busy)
			return;
		if (!wait_event_timeout(ep->wq,
					READ_ONCE(ep->devdma.unlinked) != seen,
					SCIF_DEVDMA_SLOW) &&
		    !time_before(jiffies, start + SCIF_DEVDMA_SLOW))
			pr_warn_once("a device mapping's revocation has run for over %d s; still waiting\n",
				     SCIF_DEVDMA_SLOW / HZ);
	}
}

/**
 * scif_devdma_revoke_local() - one of an endpoint's windows is being
 *	unregistered by it
 * @ep: the endpoint
 * @w: the window, SCIF_WIN_UNREGISTERING: no new mapping takes it
 *
 * The window hook (struct scif_window_revoker): every mapping holding
 * @w is revoked with -ENXIO, and this waits until their revocations
 * ran, so that the window's pages (kernel memory its registrant frees
 * once scif_unregister() returns) are no device's any more.
 *
 * Context: process context, no SCIF lock held; sleeps.
 */
void scif_devdma_revoke_local(struct scif_endpt *ep, struct scif_window *w)
{
	struct scif_devdma *d;

	mutex_lock(&ep->devdma.lock);
	list_for_each_entry(d, &ep->devdma.maps, link)
		if (scif_devdma_holds(d, false, w))
			scif_devdma_mark(d, -ENXIO);
	mutex_unlock(&ep->devdma.lock);
	scif_devdma_wait(ep, w);
}

/**
 * scif_devdma_epd_teardown() - revoke every device mapping of a connection
 * @ep: the endpoint; its state already says it is no longer connected,
 *	so no new mapping is made
 * @err: why the connection ended: -ENODEV (node lost), else reset
 *
 * Revokes them all (-ENODEV or -ECONNRESET) and waits until their
 * revocations ran.  Called by scif_epd_parts_teardown() before the
 * windows go.
 *
 * Context: process context; not under any endpoint lock but ctl_mutex;
 * sleeps.
 */
void scif_devdma_epd_teardown(struct scif_endpt *ep, int err)
{
	struct scif_devdma *d;
	int why = err == -ENODEV ? -ENODEV : -ECONNRESET;

	mutex_lock(&ep->devdma.lock);
	list_for_each_entry(d, &ep->devdma.maps, link)
		scif_devdma_mark(d, why);
	mutex_unlock(&ep->devdma.lock);
	scif_devdma_wait(ep, NULL);
}

/* The runs of window @i of @d, where the window starts and its length. */
static const struct scif_run *scif_devdma_runs(const struct scif_devdma *d,
					       unsigned long i,
					       unsigned long *nr, u64 *start,
					       u64 *len)
{
	if (d->remote) {
		*nr = d->wins.rws[i]->nr_runs;
		*start = d->wins.rws[i]->offset;
		*len = (u64)d->wins.rws[i]->nr_pages << PAGE_SHIFT;
		return d->wins.rws[i]->runs;
	}
	*nr = d->wins.lws[i]->pinned->nr_runs;
	*start = d->wins.lws[i]->offset;
	*len = (u64)d->wins.lws[i]->nr_pages << PAGE_SHIFT;
	return d->wins.lws[i]->pinned->runs;
}

/**
 * scif_devdma_walk() - the physically contiguous pieces of a held range
 * @d: the mapping, holding the windows of the range
 * @off: start of the range (as held)
 * @len: its length
 * @pieces: if not NULL, receives each piece's address (@addr: the run's,
 *	a physical address for a local window, the address the peer
 *	published for a remote one), @len, and in @dma the index of its
 *	window in @d->wins
 *
 * Context: any context.
 * Return: the number of pieces.
 */
unsigned long scif_devdma_walk(const struct scif_devdma *d, u64 off, u64 len,
			       struct scif_pdmap *pieces)
{
	unsigned long i, j, nr, n = 0;
	const struct scif_run *runs;
	u64 wstart, wlen, lo, hi, s, e;

	for (i = 0; i < d->wins.nr_wins; i++) {
		runs = scif_devdma_runs(d, i, &nr, &wstart, &wlen);
		lo = max(off, wstart) - wstart;
		hi = min(off + len, wstart + wlen) - wstart;
		for (j = 0; j < nr; j++) {
			if (runs[j].woff + runs[j].len <= lo ||
			    runs[j].woff >= hi)
				continue;
			s = max(lo, runs[j].woff);
			e = min(hi, runs[j].woff + runs[j].len);
			if (pieces) {
				pieces[n].addr = runs[j].addr +
						 (s - runs[j].woff);
				pieces[n].len = e - s;
				pieces[n].dma = i;
			}
			n++;
		}
	}
	return n;
}

/*
 * List @arg (a struct scif_devdma) on its endpoint and count a remote
 * range on the peer's node; under rma.lock, with the windows just held
 * (so the node is in the life they belong to).
 */
static void scif_devdma_list(void *arg)
{
	struct scif_devdma *d = arg;

	if (d->remote) {
		d->node = d->ep->node;
		scif_node_hold_get(d->node);
	}

	mutex_lock(&d->ep->devdma.lock);
	d->state = SCIF_DEVDMA_MAKING;
	list_add_tail(&d->link, &d->ep->devdma.maps);
	mutex_unlock(&d->ep->devdma.lock);
}

/**
 * scif_devdma_begin() - hold a range's windows for a new device mapping
 * @d: the mapping, zeroed but for what its kind set
 * @ep: the endpoint; referenced until the mapping leaves its list
 * @ops: the kind's operations
 * @off: start of the range, page aligned
 * @len: its length, a page multiple, not 0, @off + @len not past S64_MAX
 * @prot: SCIF_PROT_* every window must allow
 * @remote: a range of the peer's windows, else of @ep's
 *
 * On success the windows are held (staged remote windows and local
 * device memory refused) and @d is listed as being made: a revocation
 * from now on cancels it, which scif_devdma_live() reports.  On failure
 * nothing is held or listed.
 *
 * Context: process context; takes rma.lock and devdma.lock.
 * Return: 0 or an error of scif_window_range_hold().
 */
int scif_devdma_begin(struct scif_devdma *d, struct scif_endpt *ep,
		      const struct scif_devdma_ops *ops, u64 off, u64 len,
		      int prot, bool remote)
{
	int err;

	d->ops = ops;
	d->remote = remote;
	d->ep = ep;
	INIT_WORK(&d->work, scif_devdma_work);
	kref_get(&ep->ref);
	err = scif_window_range_hold(ep, &d->wins, off, len, prot,
				     SCIF_RANGE_MAPPED |
				     (remote ? SCIF_RANGE_REMOTE : 0),
				     scif_devdma_list, d);
	if (err) {
		d->ep = NULL;
		scif_epd_put(ep);
	}
	return err;
}

/**
 * scif_devdma_live() - a device mapping being made is ready
 * @d: the mapping, from scif_devdma_begin()
 *
 * Context: process context; takes devdma.lock.
 * Return: 0 (now live: a revocation runs ops->revoke), or why it was
 * revoked while being made (then it is off the list and its endpoint
 * dropped; the caller undoes what it made and drops the windows).
 */
int scif_devdma_live(struct scif_devdma *d)
{
	struct scif_endpt *ep = d->ep;
	int err = 0;

	mutex_lock(&ep->devdma.lock);
	if (d->state == SCIF_DEVDMA_MAKING)
		d->state = SCIF_DEVDMA_LIVE;
	else
		err = d->why;
	if (err)
		scif_devdma_unlink(d, SCIF_DEVDMA_CANCELLED);
	mutex_unlock(&ep->devdma.lock);
	if (err)
		scif_epd_put(ep);
	return err;
}

/**
 * scif_devdma_cancel() - give up a device mapping being made
 * @d: the mapping, from scif_devdma_begin(), not live
 *
 * Takes it off the list and drops its endpoint; the caller undoes what
 * it made and drops the windows.
 *
 * Context: process context; takes devdma.lock.
 */
void scif_devdma_cancel(struct scif_devdma *d)
{
	struct scif_endpt *ep = d->ep;

	mutex_lock(&ep->devdma.lock);
	scif_devdma_unlink(d, SCIF_DEVDMA_CANCELLED);
	mutex_unlock(&ep->devdma.lock);
	scif_epd_put(ep);
}

/**
 * scif_devdma_end() - the holder lets go of a live device mapping
 * @d: the mapping
 *
 * If it was not revoked, it leaves its list now and the caller undoes
 * it (its device no longer uses the range) and drops its windows;
 * otherwise the revocation under way is waited for.
 *
 * Context: process context; takes devdma.lock; not from ops->revoke.
 * Return: true if the caller must undo it, false if it was revoked.
 */
bool scif_devdma_end(struct scif_devdma *d)
{
	struct scif_endpt *ep;
	bool own = false;

	/* The endpoint, if the mapping is still on its list. */
	rcu_read_lock();
	ep = READ_ONCE(d->ep);
	if (ep && !kref_get_unless_zero(&ep->ref))
		ep = NULL;
	rcu_read_unlock();
	if (ep) {
		mutex_lock(&ep->devdma.lock);
		if (d->state == SCIF_DEVDMA_LIVE) {
			own = true;
			scif_devdma_unlink(d, SCIF_DEVDMA_GONE);
		}
		mutex_unlock(&ep->devdma.lock);
		if (own)
			scif_epd_put(ep);	/* the mapping's */
		scif_epd_put(ep);
	}
	if (!own)
		flush_work(&d->work);
	return own;
}

/* Kernel clients' mappings (scif_dma_map()) -------------------------- */

/* Unmap what @m mapped and drop its windows; no lock held. */
static void scif_devdma_map_release(struct scif_devdma_map *m)
{
	struct scif_pdmap *pd;
	unsigned long i;

	for (i = 0; i < m->nr_mapped; i++) {
		pd = &m->pieces[i];
		if (m->dd.remote)
			scif_node_peer_dma_unmap(pd);
		else
			dma_unmap_page(m->dev, pd->dma, pd->len, m->dir);
	}
	m->nr_mapped = 0;
	scif_devdma_drop(&m->dd);
}

static void scif_devdma_map_free(struct scif_devdma_map *m)
{
	m->magic = 0;
	kvfree(m->pub.segs);
	kvfree(m->pieces);
	put_device(m->dev);
	kfree(m);
}

/* The client first, with no SCIF lock held; then the addresses go. */
static void scif_devdma_map_revoke(struct scif_devdma *d)
{
	struct scif_devdma_map *m = container_of(d, struct scif_devdma_map,
						 dd);

	m->revoke(&m->pub, m->priv, d->why);
	scif_devdma_map_release(m);
}

static const struct scif_devdma_ops scif_devdma_map_ops = {
	.revoke = scif_devdma_map_revoke,
};

/* Map piece @pd of @m for its device. */
static int scif_devdma_map_piece(struct scif_devdma_map *m,
				 struct scif_pdmap *pd)
{
	unsigned long win = pd->dma;
	dma_addr_t dma;
	int err;

	if (m->dd.remote) {
		err = scif_node_peer_dma_map(m->dd.wins.rws[win]->node, pd,
					     m->dev, pd->addr, pd->len, m->dir);
		/* A range the link does not reach cannot be mapped. */
		return err == -EINVAL ? -ENXIO : err;
	}
	dma = dma_map_page(m->dev, pfn_to_page(PHYS_PFN(pd->addr)),
			   offset_in_page(pd->addr), pd->len, m->dir);
	if (dma_mapping_error(m->dev, dma))
		return -ENOMEM;
	pd->dma = dma;
	pd->dev = m->dev;
	pd->dir = m->dir;
	return 0;
}

/* The segments of @m: its pieces, merged where their addresses follow. */
static int scif_devdma_segs(struct scif_devdma_map *m)
{
	struct scif_dma_seg *seg;
	unsigned long i;

	m->pub.segs = scif_kvmalloc_array(m->nr_pieces, sizeof(*m->pub.segs),
					  GFP_KERNEL_ACCOUNT);
	if (!m->pub.segs)
		return -ENOMEM;
	seg = m->pub.segs;
	for (i = 0; i < m->nr_pieces; i++) {
		if (i && seg->addr + seg->len == m->pieces[i].dma) {
			seg->len += m->pieces[i].len;
			continue;
		}
		if (i)
			seg++;
		seg->addr = m->pieces[i].dma;
		seg->len = m->pieces[i].len;
	}
	m->pub.nr_segs = seg - m->pub.segs + 1;
	return 0;
}

/* Map the pieces of @m's held range for its device. */
static int scif_devdma_map_pieces(struct scif_devdma_map *m, u64 off,
				  u64 len)
{
	unsigned long i;
	int err;

	m->nr_pieces = scif_devdma_walk(&m->dd, off, len, NULL);
	m->pieces = scif_kvmalloc_array(m->nr_pieces, sizeof(*m->pieces),
					GFP_KERNEL_ACCOUNT);
	if (!m->pieces)
		return -ENOMEM;
	memset(m->pieces, 0, m->nr_pieces * sizeof(*m->pieces));
	scif_devdma_walk(&m->dd, off, len, m->pieces);
	for (i = 0; i < m->nr_pieces; i++) {
		err = scif_devdma_map_piece(m, &m->pieces[i]);
		if (err)
			return err;
		m->nr_mapped++;
	}
	return scif_devdma_segs(m);
}

/* scif_dma_map() on @ep; see there. */
static int scif_devdma_map_range(struct scif_endpt *ep, struct device *dev,
				 s64 offset, u64 len, int flags,
				 scif_dma_revoke_t revoke, void *priv,
				 struct scif_dma_map **map)
{
	int prot = flags & (SCIF_PROT_READ | SCIF_PROT_WRITE);
	int where = flags & (SCIF_DMA_LOCAL | SCIF_DMA_REMOTE);
	struct scif_devdma_map *m;
	u64 end;
	int err;

	if (!ep || !dev || !revoke || !map || !prot ||
	    (flags & ~(SCIF_PROT_READ | SCIF_PROT_WRITE | SCIF_DMA_LOCAL |
		       SCIF_DMA_REMOTE)) ||
	    (where != SCIF_DMA_LOCAL && where != SCIF_DMA_REMOTE) ||
	    offset < 0 || !len || !PAGE_ALIGNED(offset) || !PAGE_ALIGNED(len) ||
	    check_add_overflow((u64)offset, len, &end) || end - 1 > S64_MAX ||
	    len >> PAGE_SHIFT > INT_MAX)
		return -EINVAL;
	m = scif_kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m)
		return -ENOMEM;
	m->dir = prot == SCIF_PROT_READ ? DMA_TO_DEVICE :
		 prot == SCIF_PROT_WRITE ? DMA_FROM_DEVICE : DMA_BIDIRECTIONAL;
	m->revoke = revoke;
	m->priv = priv;
	m->dev = get_device(dev);
	err = scif_devdma_begin(&m->dd, ep, &scif_devdma_map_ops, offset, len,
				prot, where == SCIF_DMA_REMOTE);
	if (err)
		goto free;
	/* From here @m is listed: a revocation cancels it (see the notes). */
	err = scif_devdma_map_pieces(m, offset, len);
	if (err) {
		scif_devdma_cancel(&m->dd);
		goto release;
	}
	m->pub.cookie = m;
	m->magic = SCIF_DEVDMA_MAGIC;
	err = scif_devdma_live(&m->dd);
	if (!err) {
		*map = &m->pub;
		return 0;
	}
	/* Revoked while being made: the window or the connection went. */
release:
	scif_devdma_map_release(m);
free:
	scif_devdma_map_free(m);
	return err;
}

/**
 * scif_dma_map() - map a range of windows for a device's DMA
 * @epd: a connected endpoint
 * @dev: the device that will use the addresses (its DMA mask and IOMMU
 *	domain decide them); referenced until the mapping is freed
 * @offset: start of the range, page aligned, in @epd's registered address
 *	space (SCIF_DMA_LOCAL) or in the peer's (SCIF_DMA_REMOTE)
 * @len: bytes, a non-zero multiple of the page size
 * @flags: exactly one of SCIF_DMA_LOCAL and SCIF_DMA_REMOTE, with
 *	SCIF_PROT_READ (the device reads the windows) and/or
 *	SCIF_PROT_WRITE (it writes them); every window of the range must
 *	allow them
 * @revoke: mandatory: called once, from a workqueue, with no SCIF lock
 *	held, when a window of the range is unregistered (-ENXIO; by the
 *	peer, or by @epd for a local range), the connection ends
 *	(-ECONNRESET) or the node is lost (-ENODEV).  It may sleep; when it
 *	returns the device must no longer use the addresses.  It must not
 *	call scif_dma_unmap(), scif_unregister() or scif_close() on @epd
 * @priv: given to @revoke
 * @map: receives the mapping: its segments are the range's physically
 *	contiguous runs, merged where their DMA addresses follow each other
 *
 * The range must lie in windows that are contiguous in their registered
 * address space.  Each window stays referenced, its pages pinned, until
 * the mapping is revoked or unmapped: the peer's scif_unregister() of a
 * window of a remote range returns (the window withdrawn) while the
 * device may still use it; this endpoint's scif_unregister() of a window
 * of a local range, and its scif_close(), wait for @revoke.  A range of
 * the peer's windows needs a bus that can map them for devices.
 *
 * Context: process context; may sleep.
 * Return: 0, or -EINVAL (alignment, length, flags, a NULL argument),
 * -ENXIO (not inside windows, a staged window, or a window that went
 * meanwhile), -EACCES (a window forbids the access), -EOPNOTSUPP (a
 * window over device memory of this node, or a bus that cannot map the
 * peer's memory for @dev), -ENOMEM (memory, or the DMA API failed),
 * -ENOTCONN, -ECONNRESET or -ENODEV.
 */
int scif_dma_map(scif_epd_t epd, struct device *dev, off_t offset, size_t len,
		 int flags, scif_dma_revoke_t revoke, void *priv,
		 struct scif_dma_map **map)
{
	return scif_devdma_map_range(epd, dev, offset, len, flags, revoke,
				     priv, map);
}
EXPORT_SYMBOL_GPL(scif_dma_map);

/**
 * scif_dma_unmap() - release a mapping from scif_dma_map()
 * @map: the mapping; NULL does nothing
 *
 * Before revocation, the addresses are unmapped (the device must no
 * longer use them) and the windows let go of; after, the mapping is only
 * freed (a revocation under way is waited for).  Each mapping is
 * released exactly once.
 *
 * Context: process context; may sleep; never from a revoke callback.
 */
void scif_dma_unmap(struct scif_dma_map *map)
{
	struct scif_devdma_map *m;

	if (!map)
		return;
	m = map->cookie;
	if (WARN_ON_ONCE(!m || &m->pub != map ||
			 m->magic != SCIF_DEVDMA_MAGIC))
		return;
	if (scif_devdma_end(&m->dd))
		scif_devdma_map_release(m);
	scif_devdma_map_free(m);
}
EXPORT_SYMBOL_GPL(scif_dma_unmap);

/**
 * scif_devdma_queue_delayed() - run a device mapping's delayed work on
 *	the revocation workqueue
 * @dw: the work, embedded in an object that lives until it ran
 * @delay: jiffies
 *
 * The module's exit destroys the workqueue, after the last such work
 * ran: a work that drops the last reference to the module is done
 * before the module goes.
 *
 * Context: any context.
 */
void scif_devdma_queue_delayed(struct delayed_work *dw, unsigned long delay)
{
	queue_delayed_work(scif_devdma_wq, dw, delay);
}

/**
 * scif_devdma_init() - start the revocation workqueue
 *
 * Context: process context, at module load.
 * Return: 0 or -ENOMEM.
 */
int scif_devdma_init(void)
{
	scif_devdma_wq = alloc_workqueue("scif_devdma", WQ_UNBOUND, 0);
	return scif_devdma_wq ? 0 : -ENOMEM;
}

/**
 * scif_devdma_exit() - undo scif_devdma_init()
 *
 * Every mapping was unmapped: its clients are modules that use scif.ko.
 *
 * Context: process context, at module unload.
 */
void scif_devdma_exit(void)
{
	destroy_workqueue(scif_devdma_wq);
}
