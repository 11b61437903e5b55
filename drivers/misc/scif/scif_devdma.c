// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: device mappings of windows (scif_dma_map()).  A kernel
 * client asks for the DMA addresses through which a struct device of its
 * own reaches a range of this endpoint's windows (SCIF_DMA_LOCAL: RAM,
 * mapped with dma_map_page()) or of the peer's (SCIF_DMA_REMOTE: through
 * the bus, scif_node_peer_dma_map(), which the node layer unmaps when
 * the node goes if the mapping has not been unmapped before).
 *
 * Every window of the range is referenced until the mapping is revoked
 * or unmapped, so that the pages stay the window's (the peer's window,
 * unregistered meanwhile, stays withdrawn and pinned on the peer).  A
 * mapping is revoked when a window of the range is unregistered (by the
 * peer, or by this endpoint for a local range), when the connection
 * ends and when the node is lost: the window hooks of scif_window.c
 * (filled by scif_main.c) and the endpoint's teardown mark it and queue
 * its work; the work, with no SCIF lock held, calls the client's revoke
 * (after which the device must no longer use the addresses), unmaps,
 * drops the windows and the endpoint, and unlinks the mapping.
 * scif_dma_unmap() of a revoked mapping only frees it.
 *
 * The two calls of the kernel API live here rather than in scif_api.c:
 * struct scif_dma_map has the name of scif_dma_map(), so every file
 * naming the struct would seem to reference the function.
 *
 * States, under the endpoint's devdma.lock:
 *
 *   MAKING --(revoked)--> CANCELLED (scif_dma_map() fails with why)
 *     |
 *   LIVE --(revoked)--> REVOKING (work queued) --(work done)--> GONE
 *     \--(scif_dma_unmap())-------------------------------------^
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
/* A client's revoke still running after this long is logged (once). */
#define SCIF_DEVDMA_SLOW	(10 * HZ)

/* Works calling clients' revoke callbacks; set while the module is loaded. */
static struct workqueue_struct *scif_devdma_wq;

enum scif_devdma_state {
	SCIF_DEVDMA_MAKING,
	SCIF_DEVDMA_CANCELLED,
	SCIF_DEVDMA_LIVE,
	SCIF_DEVDMA_REVOKING,
	SCIF_DEVDMA_GONE,
};

/**
 * struct scif_devdma_map - a device mapping
 * @pub: what the client sees; @pub.cookie points here
 * @magic: SCIF_DEVDMA_MAGIC while the mapping exists
 * @ep: the endpoint, with a reference, until the mapping leaves the
 *	endpoint's list (then NULL; read under RCU by scif_dma_unmap())
 * @dev: the device, with a reference (get_device())
 * @link: in the endpoint's devdma.maps
 * @work: the revocation
 * @revoke: the client's callback
 * @priv: its argument
 * @dir: the direction the pieces are mapped for
 * @state: enum scif_devdma_state
 * @why: why it was revoked (-ENXIO, -ECONNRESET, -ENODEV)
 * @remote: a range of the peer's windows (@rws), else of ours (@lws)
 * @nr_wins: entries in @lws or @rws
 * @lws: this endpoint's windows of the range, one reference each
 * @rws: the peer's windows of the range, one reference each
 * @nr_pieces: entries in @pieces
 * @nr_mapped: the first @nr_mapped pieces are mapped
 * @pieces: each physically contiguous piece of the range, as mapped for
 *	@dev: by the node layer (remote; @node set while mapped) or by
 *	dma_map_page() (local; @node NULL)
 *
 * @state and @link are under the endpoint's devdma.lock; the rest is
 * set before the mapping is listed and belongs, after it, to whoever
 * takes it off the list (the work, scif_dma_unmap(), or scif_dma_map()
 * itself when cancelled).
 */
struct scif_devdma_map {
	struct scif_dma_map pub;
	u32 magic;
	struct scif_endpt *ep;
	struct device *dev;
	struct list_head link;
	struct work_struct work;
	scif_dma_revoke_t revoke;
	void *priv;
	enum dma_data_direction dir;
	enum scif_devdma_state state;
	int why;
	bool remote;
	unsigned long nr_wins;
	union {
		struct scif_window **lws;
		struct scif_rwindow **rws;
	};
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
}

/* Whether @m holds window @win (a struct scif_window or scif_rwindow). */
static bool scif_devdma_holds(const struct scif_devdma_map *m, bool remote,
			      const void *win)
{
	unsigned long i;

	if (m->remote != remote)
		return false;
	for (i = 0; i < m->nr_wins; i++)
		if ((remote ? (const void *)m->rws[i] :
			      (const void *)m->lws[i]) == win)
			return true;
	return false;
}

/* Revoke @m for @why: cancel it if being made, else queue its work. */
static void scif_devdma_mark(struct scif_devdma_map *m, int why)
{
	lockdep_assert_held(&m->ep->devdma.lock);
	if (m->state == SCIF_DEVDMA_MAKING) {
		m->state = SCIF_DEVDMA_CANCELLED;
		m->why = why;
	} else if (m->state == SCIF_DEVDMA_LIVE) {
		m->state = SCIF_DEVDMA_REVOKING;
		m->why = why;
		queue_work(scif_devdma_wq, &m->work);
	}
}

/* Take @m off its endpoint's list and wake the waiters; under the lock. */
static void scif_devdma_unlink(struct scif_devdma_map *m,
			       enum scif_devdma_state state)
{
	struct scif_endpt *ep = m->ep;

	lockdep_assert_held(&ep->devdma.lock);
	list_del(&m->link);
	m->state = state;
	WRITE_ONCE(ep->devdma.unlinked, ep->devdma.unlinked + 1);
	/* From now on scif_dma_unmap() does not touch the endpoint. */
	WRITE_ONCE(m->ep, NULL);
	wake_up_all(&ep->wq);
}

/* Unmap what @m mapped and drop its windows; no lock held. */
static void scif_devdma_release(struct scif_devdma_map *m)
{
	struct scif_pdmap *pd;
	unsigned long i;

	for (i = 0; i < m->nr_mapped; i++) {
		pd = &m->pieces[i];
		if (m->remote)
			scif_node_peer_dma_unmap(pd);
		else
			dma_unmap_page(m->dev, pd->dma, pd->len, m->dir);
	}
	m->nr_mapped = 0;
	for (i = 0; i < m->nr_wins; i++) {
		if (m->remote)
			scif_rwindow_put(m->rws[i]);
		else
			scif_window_put(m->lws[i]);
	}
	m->nr_wins = 0;
}

static void scif_devdma_free(struct scif_devdma_map *m)
{
	m->magic = 0;
	kvfree(m->pub.segs);
	kvfree(m->pieces);
	kvfree(m->lws);		/* or m->rws: the same pointer */
	put_device(m->dev);
	kfree(m);
}

/*
 * The revocation: the client first, with no SCIF lock held; then the
 * addresses and the windows go, and the mapping leaves the list.
 */
static void scif_devdma_work(struct work_struct *work)
{
	struct scif_devdma_map *m = container_of(work, struct scif_devdma_map,
						 work);
	struct scif_endpt *ep = m->ep;

	m->revoke(&m->pub, m->priv, m->why);
	scif_devdma_release(m);
	mutex_lock(&ep->devdma.lock);
	scif_devdma_unlink(m, SCIF_DEVDMA_GONE);
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
 * connection's end.  Only marks and queues: the works call the clients.
 *
 * Context: process context; takes devdma.lock.
 */
void scif_devdma_revoke_remote(struct scif_endpt *ep, struct scif_rwindow *rw)
{
	struct scif_devdma_map *m;
	int why = scif_devdma_conn_why(ep);

	mutex_lock(&ep->devdma.lock);
	list_for_each_entry(m, &ep->devdma.maps, link)
		if (scif_devdma_holds(m, true, rw))
			scif_devdma_mark(m, why);
	mutex_unlock(&ep->devdma.lock);
}

/*
 * Wait until no mapping of @ep holds @w (a local window), or, with @w
 * NULL, until @ep has no mapping listed.  Logs once a wait that lasts.
 */
static void scif_devdma_wait(struct scif_endpt *ep, struct scif_window *w)
{
	unsigned long seen, start = jiffies;
	struct scif_devdma_map *m;
	bool busy;

	for (;;) {
		mutex_lock(&ep->devdma.lock);
		busy = false;
		list_for_each_entry(m, &ep->devdma.maps, link)
			if (!w || scif_devdma_holds(m, false, w))
				busy = true;
		seen = ep->devdma.unlinked;
		mutex_unlock(&ep->devdma.lock);
		if (!busy)
			return;
		if (!wait_event_timeout(ep->wq,
					READ_ONCE(ep->devdma.unlinked) != seen,
					SCIF_DEVDMA_SLOW) &&
		    !time_before(jiffies, start + SCIF_DEVDMA_SLOW))
			pr_warn_once("a device mapping's revoke has run for over %d s; still waiting\n",
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
 * @w is revoked with -ENXIO, and this waits until their revoke callbacks
 * returned and their addresses were unmapped, so that the window's pages
 * (kernel memory its registrant frees once scif_unregister() returns) are
 * no device's any more.
 *
 * Context: process context, no SCIF lock held; sleeps.
 */
void scif_devdma_revoke_local(struct scif_endpt *ep, struct scif_window *w)
{
	struct scif_devdma_map *m;

	mutex_lock(&ep->devdma.lock);
	list_for_each_entry(m, &ep->devdma.maps, link)
		if (scif_devdma_holds(m, false, w))
			scif_devdma_mark(m, -ENXIO);
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
 * revoke callbacks returned and their addresses were unmapped.  Called
 * by scif_epd_parts_teardown() before the windows go.
 *
 * Context: process context; not under any endpoint lock but ctl_mutex;
 * sleeps.
 */
void scif_devdma_epd_teardown(struct scif_endpt *ep, int err)
{
	struct scif_devdma_map *m;
	int why = err == -ENODEV ? -ENODEV : -ECONNRESET;

	mutex_lock(&ep->devdma.lock);
	list_for_each_entry(m, &ep->devdma.maps, link)
		scif_devdma_mark(m, why);
	mutex_unlock(&ep->devdma.lock);
	scif_devdma_wait(ep, NULL);
}

/* The runs of window @i of @m, where the window starts and its length. */
static const struct scif_run *scif_devdma_runs(const struct scif_devdma_map *m,
					       unsigned long i,
					       unsigned long *nr, u64 *start,
					       u64 *len)
{
	if (m->remote) {
		*nr = m->rws[i]->nr_runs;
		*start = m->rws[i]->offset;
		*len = (u64)m->rws[i]->nr_pages << PAGE_SHIFT;
		return m->rws[i]->runs;
	}
	*nr = m->lws[i]->pinned->nr_runs;
	*start = m->lws[i]->offset;
	*len = (u64)m->lws[i]->nr_pages << PAGE_SHIFT;
	return m->lws[i]->pinned->runs;
}

/*
 * Walk the pieces of [@off, @off + @len) in @m's windows: with @fill,
 * record each one's window, address and length in @m->pieces.
 * Return: the number of pieces.
 */
static unsigned long scif_devdma_walk(struct scif_devdma_map *m, u64 off,
				      u64 len, bool fill)
{
	unsigned long i, j, nr, n = 0;
	const struct scif_run *runs;
	u64 wstart, wlen, lo, hi, s, e;

	for (i = 0; i < m->nr_wins; i++) {
		runs = scif_devdma_runs(m, i, &nr, &wstart, &wlen);
		lo = max(off, wstart) - wstart;
		hi = min(off + len, wstart + wlen) - wstart;
		for (j = 0; j < nr; j++) {
			if (runs[j].woff + runs[j].len <= lo ||
			    runs[j].woff >= hi)
				continue;
			s = max(lo, runs[j].woff);
			e = min(hi, runs[j].woff + runs[j].len);
			if (fill) {
				m->pieces[n].addr = runs[j].addr +
						    (s - runs[j].woff);
				m->pieces[n].len = e - s;
				/* Which window: kept in dma until mapped. */
				m->pieces[n].dma = i;
			}
			n++;
		}
	}
	return n;
}

/*
 * Take a reference to every window of [@off, @off + @len), which must
 * be covered by contiguous windows allowing @prot, and list @m on the
 * endpoint, both under rma.lock: a window that leaves its tree after
 * this finds @m listed.
 */
static int scif_devdma_hold(struct scif_endpt *ep, struct scif_devdma_map *m,
			    u64 off, u64 len, int prot)
{
	struct maple_tree *mt = m->remote ? &ep->rma.remote : &ep->rma.local;
	unsigned long first = off >> PAGE_SHIFT, pg, last, nr = 0, i;
	struct scif_rwindow *rw;
	struct scif_window *w;
	void **arr;
	int err;

	last = (off + len - 1) >> PAGE_SHIFT;
	mutex_lock(&ep->rma.lock);
	err = scif_window_conn_err(ep);
	for (pg = first; !err && pg <= last; nr++) {
		if (m->remote) {
			rw = mtree_load(mt, pg);
			if (!rw || rw->staged)
				err = -ENXIO;
			else if ((rw->prot & prot) != prot)
				err = -EACCES;
			else
				pg = (rw->offset >> PAGE_SHIFT) + rw->nr_pages;
		} else {
			w = mtree_load(mt, pg);
			if (!w || w->state != SCIF_WIN_REGISTERED)
				err = -ENXIO;
			else if ((w->prot & prot) != prot)
				err = -EACCES;
			else if (w->pinned->kind != SCIF_PP_PAGES)
				err = -EOPNOTSUPP;	/* device memory */
			else
				pg = (w->offset >> PAGE_SHIFT) + w->nr_pages;
		}
	}
	if (err)
		goto out;
	arr = scif_kvmalloc_array(nr, sizeof(*arr), GFP_KERNEL_ACCOUNT);
	if (!arr) {
		err = -ENOMEM;
		goto out;
	}
	for (pg = first, i = 0; i < nr; i++) {
		if (m->remote) {
			rw = mtree_load(mt, pg);
			kref_get(&rw->ref);
			arr[i] = rw;
			pg = (rw->offset >> PAGE_SHIFT) + rw->nr_pages;
		} else {
			w = mtree_load(mt, pg);
			kref_get(&w->ref);
			arr[i] = w;
			pg = (w->offset >> PAGE_SHIFT) + w->nr_pages;
		}
	}
	if (m->remote)
		m->rws = (struct scif_rwindow **)arr;
	else
		m->lws = (struct scif_window **)arr;
	m->nr_wins = nr;
	mutex_lock(&ep->devdma.lock);
	m->state = SCIF_DEVDMA_MAKING;
	list_add_tail(&m->link, &ep->devdma.maps);
	mutex_unlock(&ep->devdma.lock);
out:
	mutex_unlock(&ep->rma.lock);
	return err;
}

/* Map piece @pd of @m for its device. */
static int scif_devdma_map_piece(struct scif_devdma_map *m,
				 struct scif_pdmap *pd)
{
	unsigned long win = pd->dma;
	dma_addr_t dma;
	int err;

	if (m->remote) {
		err = scif_node_peer_dma_map(m->rws[win]->node, pd, m->dev,
					     pd->addr, pd->len, m->dir);
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

/* scif_dma_map() on @ep; see there. */
static int scif_devdma_map_range(struct scif_endpt *ep, struct device *dev,
				 s64 offset, u64 len, int flags,
				 scif_dma_revoke_t revoke, void *priv,
				 struct scif_dma_map **map)
{
	int prot = flags & (SCIF_PROT_READ | SCIF_PROT_WRITE);
	int where = flags & (SCIF_DMA_LOCAL | SCIF_DMA_REMOTE);
	struct scif_devdma_map *m;
	unsigned long i;
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
	m->remote = where == SCIF_DMA_REMOTE;
	m->dir = prot == SCIF_PROT_READ ? DMA_TO_DEVICE :
		 prot == SCIF_PROT_WRITE ? DMA_FROM_DEVICE : DMA_BIDIRECTIONAL;
	m->revoke = revoke;
	m->priv = priv;
	m->dev = get_device(dev);
	INIT_WORK(&m->work, scif_devdma_work);
	kref_get(&ep->ref);
	m->ep = ep;
	err = scif_devdma_hold(ep, m, offset, len, prot);
	if (err)
		goto put_ep;
	/* From here @m is listed: a revocation cancels it (see the notes). */
	m->nr_pieces = scif_devdma_walk(m, offset, len, false);
	m->pieces = scif_kvmalloc_array(m->nr_pieces, sizeof(*m->pieces),
					GFP_KERNEL_ACCOUNT);
	err = -ENOMEM;
	if (!m->pieces)
		goto unlist;
	memset(m->pieces, 0, m->nr_pieces * sizeof(*m->pieces));
	scif_devdma_walk(m, offset, len, true);
	for (i = 0; i < m->nr_pieces; i++) {
		err = scif_devdma_map_piece(m, &m->pieces[i]);
		if (err)
			goto unlist;
		m->nr_mapped++;
	}
	err = scif_devdma_segs(m);
	if (err)
		goto unlist;
	m->pub.cookie = m;
	m->magic = SCIF_DEVDMA_MAGIC;
	mutex_lock(&ep->devdma.lock);
	if (m->state == SCIF_DEVDMA_MAKING) {
		m->state = SCIF_DEVDMA_LIVE;
		mutex_unlock(&ep->devdma.lock);
		*map = &m->pub;
		return 0;
	}
	/* Revoked while being made: the window or the connection went. */
	err = m->why;
	scif_devdma_unlink(m, SCIF_DEVDMA_CANCELLED);
	mutex_unlock(&ep->devdma.lock);
	goto release;

unlist:
	mutex_lock(&ep->devdma.lock);
	scif_devdma_unlink(m, SCIF_DEVDMA_CANCELLED);
	mutex_unlock(&ep->devdma.lock);
release:
	scif_devdma_release(m);
put_ep:
	scif_epd_put(ep);
	scif_devdma_free(m);
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
	struct scif_endpt *ep;
	bool own = false;

	if (!map)
		return;
	m = map->cookie;
	if (WARN_ON_ONCE(!m || &m->pub != map ||
			 m->magic != SCIF_DEVDMA_MAGIC))
		return;
	/* The endpoint, if the mapping is still on its list. */
	rcu_read_lock();
	ep = READ_ONCE(m->ep);
	if (ep && !kref_get_unless_zero(&ep->ref))
		ep = NULL;
	rcu_read_unlock();
	if (ep) {
		mutex_lock(&ep->devdma.lock);
		if (m->state == SCIF_DEVDMA_LIVE) {
			own = true;
			scif_devdma_unlink(m, SCIF_DEVDMA_GONE);
		}
		mutex_unlock(&ep->devdma.lock);
		if (own) {
			scif_devdma_release(m);
			scif_epd_put(ep);	/* the mapping's */
		}
		scif_epd_put(ep);
	}
	/* A revocation under way finishes first. */
	flush_work(&m->work);
	scif_devdma_free(m);
}
EXPORT_SYMBOL_GPL(scif_dma_unmap);

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
