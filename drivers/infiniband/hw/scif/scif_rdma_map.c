// SPDX-License-Identifier: GPL-2.0
/*
 * scif_rdma: the windows of direct RDMA WRITE and READ (rdma.rst,
 * "Direct RDMA WRITE and READ").
 *
 * As a responder, a QP opens a SCIF window over one of its fast-reg MRs
 * when the requester asks (MAP_REQ) and answers with the window's
 * offset (MAP_RESP).  As a requester, a QP keeps what the peer's keys
 * resolved to (struct srd_rkey) and moves the bytes of later WRITEs and
 * READs within the MR by its own SCIF RMA (srd_rma_direct()): no frame,
 * nothing of the responder's CPU.
 *
 * A window is opened only over whole pages that are all the MR's (its
 * first byte at the start of a page, its length a multiple of the page
 * size), with the rights both the MR and the QP give, so that the bounds
 * and rights SCIF enforces are the MR's own.  It is closed with
 * scif_unregister(), which for kernel memory returns only once the
 * peer's RMAs on it are done, before an invalidation of its MR, a new
 * registration or a deregistration completes, and before the QP's
 * endpoint is closed.  No offset is used twice on a connection, so an
 * offset the requester kept finds no window once it is closed, and the
 * requester's frames then get the exact answer.
 */

#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "scif_rdma.h"

static bool srd_direct = true;
module_param_named(direct_rma, srd_direct, bool, 0644);
MODULE_PARM_DESC(direct_rma,
		 "RDMA WRITE and READ straight into windows the responder opens over its MRs (default Y)");

/**
 * struct srd_map - a window a responder opened over one of its MRs
 * @mr_node: in @mr's maps
 * @qp_node: in @qp's maps
 * @mr: the MR (a reference held until the window is closed)
 * @qp: the QP on whose endpoint it is registered
 * @va: the vmap of the MR's pages it was registered over (a user MR's
 *	own, srd_mr_vmap(): not this window's to unmap); NULL for a dma-buf
 *	MR's (an alias of the exporter's windows)
 * @rights: IB_ACCESS_REMOTE_READ and/or _WRITE it gives
 * @off: its offset in the endpoint's registered address space
 * @len: its bytes (the MR's)
 *
 * Life: reserved (counted in the QP's and the MR's nr_maps, on no
 * list), registered and listed by the receive thread, taken off both
 * lists by whoever closes it, unregistered with no lock held, then no
 * longer counted.  Locking: the lists and the counts under the device's
 * map_mutex; the other fields are set before it is listed and read by
 * whoever holds it listed or detached.
 */
struct srd_map {
	struct list_head mr_node;
	struct list_head qp_node;
	struct srd_mr *mr;
	struct srd_qp *qp;
	void *va;
	int rights;
	u64 off;
	u64 len;
};

/* Whole pages that are all the MR's: the window's bounds are its own. */
static bool srd_map_fits(struct srd_mr *mr)
{
	u64 n = mr->length >> PAGE_SHIFT;

	return !mr->dma && mr->ibmr.page_size == PAGE_SIZE &&
	       PAGE_ALIGNED(mr->iova) && mr->length &&
	       PAGE_ALIGNED(mr->length) &&
	       (mr->dbuf || n <= READ_ONCE(mr->npages)) &&
	       mr->length <= SRD_MAP_SLOT;
}

/*
 * The MR's first @len bytes in one kernel range, or NULL: a user MR's
 * own (kept until dereg_mr), a fast-reg MR's a new one (its pages change
 * with the next registration).
 */
static void *srd_map_vmap(struct srd_mr *mr, u64 len)
{
	return mr->umem ? srd_mr_vmap(mr) :
			  srd_mr_pages_vmap(mr, len >> PAGE_SHIFT);
}

/* SCIF's protection for IB_ACCESS_REMOTE_* @rights. */
static int srd_map_prot(int rights)
{
	return (rights & IB_ACCESS_REMOTE_READ ? SCIF_PROT_READ : 0) |
	       (rights & IB_ACCESS_REMOTE_WRITE ? SCIF_PROT_WRITE : 0);
}

/*
 * Reserve a window over @mr for @qp's peer, in the next slot: counted in
 * the QP's limits and in @mr's windows (which an invalidation waits
 * for), but on no list until srd_map_attach().
 */
static struct srd_map *srd_map_reserve(struct srd_qp *qp, struct srd_mr *mr,
				       int rights)
{
	u64 n = mr->length >> PAGE_SHIFT;
	struct srd_map *map;

	lockdep_assert_held(&qp->dev->map_mutex);
	if (qp->nr_maps >= SRD_MAP_MAX || !srd_map_fits(mr) ||
	    qp->map_pages + n > SRD_MAP_PAGES ||
	    qp->next_slot >= (S64_MAX - SRD_MAP_BASE) / SRD_MAP_SLOT)
		return NULL;
	map = kzalloc(sizeof(*map), GFP_KERNEL_ACCOUNT);
	if (!map)
		return NULL;
	refcount_inc(&mr->refs);	/* the caller's lookup holds one */
	map->mr = mr;
	map->qp = qp;
	map->rights = rights;
	map->len = mr->length;
	map->off = SRD_MAP_BASE + qp->next_slot++ * SRD_MAP_SLOT;
	WRITE_ONCE(qp->nr_maps, qp->nr_maps + 1);
	qp->map_pages += n;
	WRITE_ONCE(mr->nr_maps, mr->nr_maps + 1);
	return map;
}

/*
 * A window is no longer counted: its registration failed, or it was
 * unregistered.  An invalidation or the QP's end waiting for it goes on.
 */
static void srd_map_release(struct srd_map *map)
{
	struct srd_qp *qp = map->qp;
	struct srd_mr *mr = map->mr;

	if (map->va && !mr->umem)
		vunmap(map->va);
	mutex_lock(&qp->dev->map_mutex);
	WRITE_ONCE(qp->nr_maps, qp->nr_maps - 1);
	qp->map_pages -= map->len >> PAGE_SHIFT;
	WRITE_ONCE(mr->nr_maps, mr->nr_maps - 1);
	mutex_unlock(&qp->dev->map_mutex);
	wake_up_all(&qp->dev->map_wq);
	srd_mr_put(mr);
	kfree(map);
}

/* MAP_RESP @a describes @map (its MR's iova is fixed while it is open). */
static void srd_map_resp(struct srd_hdr *a, const struct srd_map *map)
{
	a->status = IB_WC_SUCCESS;
	a->imm = cpu_to_be32(map->rights);
	a->len = cpu_to_le32(map->len);
	a->addr = cpu_to_le64(map->mr->iova);
	a->woff = cpu_to_le64(map->off);
}

/*
 * Register a reserved window (no lock held: SCIF waits for the peer
 * node), then list it if its MR still holds the key, and describe it in
 * @a while it cannot be closed; else it goes.  The MR's pages cannot
 * change meanwhile: a new registration or an invalidation waits for the
 * MR's counted windows.
 */
static void srd_map_attach(struct srd_map *map, u32 key, struct srd_hdr *a)
{
	struct srd_qp *qp = map->qp;
	struct srd_mr *mr = map->mr;
	bool ok = false;
	off_t off = -ENOMEM;

	if (mr->dbuf)		/* over the dma-buf's pages themselves */
		off = scif_register_alias(qp->epd, mr->dbuf->epd,
					  mr->dbuf->off, map->len, map->off,
					  srd_map_prot(map->rights),
					  SCIF_MAP_FIXED);
	else
		map->va = srd_map_vmap(mr, map->len);
	if (map->va)
		off = scif_register(qp->epd, map->va, map->len, map->off,
				    srd_map_prot(map->rights),
				    SCIF_MAP_KERNEL | SCIF_MAP_FIXED);
	if (off >= 0) {
		mutex_lock(&qp->dev->map_mutex);
		ok = READ_ONCE(mr->valid) && !mr->dying &&
		     READ_ONCE(mr->key) == key;
		if (ok) {
			list_add_tail(&map->mr_node, &mr->maps);
			list_add_tail(&map->qp_node, &qp->maps);
			srd_map_resp(a, map);
		}
		mutex_unlock(&qp->dev->map_mutex);
		if (ok) {
			srd_stat_add(qp->dev, SRD_STAT_MAPS_OPENED, 1);
			return;
		}
		if (scif_unregister(qp->epd, map->off, map->len) == -EINTR)
			srd_qp_close(qp);
	}
	srd_map_release(map);
}

/*
 * @qp's window over @mr for key @key: the one open, or NULL with *@new
 * a reservation for a new one (srd_map_attach() next, unlocked).
 */
static struct srd_map *srd_map_get(struct srd_qp *qp, struct srd_mr *mr,
				   u32 key, struct srd_map **new)
{
	int rights = READ_ONCE(mr->access) & READ_ONCE(qp->access) &
		     (IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE);
	struct srd_map *map;

	lockdep_assert_held(&qp->dev->map_mutex);
	*new = NULL;
	/* An invalidation sets valid before it takes map_mutex. */
	if (!READ_ONCE(mr->valid) || mr->dying || READ_ONCE(mr->key) != key ||
	    !rights)
		return NULL;
	list_for_each_entry(map, &qp->maps, qp_node)
		if (map->mr == mr)
			return map->rights == rights ? map : NULL;
	*new = srd_map_reserve(qp, mr, rights);
	return NULL;
}

/**
 * srd_map_serve() - a MAP_REQ: a window over the key's MR, if it can have one
 * @qp: the QP the frame came on
 * @h: the frame
 * @len: its length
 *
 * Answers MAP_RESP with the window (IB_WC_SUCCESS: its offset, the MR's
 * first byte and length, the rights) or without one (IB_WC_REM_ACCESS_ERR:
 * a key of no valid MR of the QP's PD, no remote right, an MR that does
 * not fit a window, SRD_MAP_MAX windows or SRD_MAP_PAGES pages open,
 * direct_rma off, or SCIF refusing the window).  Nothing else changes:
 * the requester's frames then get the exact answer.
 *
 * Context: the receive thread; sleeps; takes the device's map_mutex.
 * Return: 0, -EPROTO (a malformed frame) or srd_answer()'s error.
 */
int srd_map_serve(struct srd_qp *qp, const struct srd_hdr *h, u32 len)
{
	struct srd_hdr a = { .type = SRD_F_MAP_RESP,
			     .status = IB_WC_REM_ACCESS_ERR, .rkey = h->rkey };
	u32 key = le32_to_cpu(h->rkey);
	struct srd_map *map, *new;
	struct srd_mr *mr;

	if (len || h->flags || h->status || h->imm || h->addr || h->woff)
		return -EPROTO;
	mr = READ_ONCE(srd_direct) ?
	     srd_mr_lookup(qp->dev, key, qp->ibqp.pd) : NULL;
	if (mr) {
		mutex_lock(&qp->dev->map_mutex);
		map = srd_map_get(qp, mr, key, &new);
		if (map)
			srd_map_resp(&a, map);
		mutex_unlock(&qp->dev->map_mutex);
		if (new)
			srd_map_attach(new, key, &a);
	}
	srd_mr_put(mr);
	return srd_answer(qp, &a, NULL, 0);
}

/* Take @map off its MR's and QP's lists, onto @out (by mr_node). */
static void srd_map_detach(struct srd_map *map, struct list_head *out)
{
	lockdep_assert_held(&map->qp->dev->map_mutex);
	list_del(&map->qp_node);
	list_move_tail(&map->mr_node, out);
}

/*
 * Close detached windows: each unregistered (when the connection is
 * gone, SCIF has closed it already; SCIF waits for the peer's RMAs on
 * it), then no longer counted.  Only a fatal signal leaves one
 * registered: its connection then ends (rdma.rst).  Its QP's endpoint
 * stays open meanwhile: srd_map_qp_close() waits for the QP's counted
 * windows before the receive thread closes it.
 */
static void srd_map_close_list(struct list_head *list)
{
	struct srd_map *map, *tmp;

	list_for_each_entry_safe(map, tmp, list, mr_node) {
		list_del(&map->mr_node);
		if (scif_unregister(map->qp->epd, map->off, map->len) == -EINTR)
			srd_qp_close(map->qp);
		srd_map_release(map);
	}
}

/**
 * srd_map_mr_close() - close the windows open over an MR
 * @dev: its device
 * @mr: the MR, invalid already (or being re-registered or deregistered)
 * @dying: dereg_mr: no window may be opened over it any more
 *
 * Returns once the peers' RMAs on those windows are done, and once the
 * windows other threads were opening or closing over it are gone too.
 * No lock is held while SCIF waits for a peer node, so a slow node
 * holds up only what waits for its own windows.
 *
 * Context: process; sleeps; takes the device's map_mutex.
 */
void srd_map_mr_close(struct srd_dev *dev, struct srd_mr *mr, bool dying)
{
	struct srd_map *map, *tmp;
	LIST_HEAD(closing);

	mutex_lock(&dev->map_mutex);
	if (dying)
		mr->dying = true;
	list_for_each_entry_safe(map, tmp, &mr->maps, mr_node)
		srd_map_detach(map, &closing);
	mutex_unlock(&dev->map_mutex);
	srd_map_close_list(&closing);
	wait_event(dev->map_wq, !READ_ONCE(mr->nr_maps));
}

/**
 * srd_map_qp_close() - close the windows a QP opened for its peer
 * @qp: the QP, whose endpoint is still open
 *
 * Returns once none of the QP's windows is registered, also those an
 * invalidation on another thread is closing.
 *
 * Context: the receive thread, before it closes the endpoint; sleeps;
 * takes the device's map_mutex.
 */
void srd_map_qp_close(struct srd_qp *qp)
{
	struct srd_map *map, *tmp;
	LIST_HEAD(closing);

	mutex_lock(&qp->dev->map_mutex);
	list_for_each_entry_safe(map, tmp, &qp->maps, qp_node)
		srd_map_detach(map, &closing);
	mutex_unlock(&qp->dev->map_mutex);
	srd_map_close_list(&closing);
	wait_event(qp->dev->map_wq, !READ_ONCE(qp->nr_maps));
}

/*
 * The answer slot of a MAP_REQ about to leave (no WRITE or READ waits
 * for an answer then: MAP_RESP is the next answer).
 */
static void srd_map_want(struct srd_qp *qp)
{
	mutex_lock(&qp->resp_mutex);
	reinit_completion(&qp->resp);
	qp->resp_want = true;
	mutex_unlock(&qp->resp_mutex);
}

/*
 * Wait for the MAP_REQ's answer as long as the connection lasts (a slow
 * responder is not a broken one); its loss, a disconnect or the QP's
 * destruction end the wait, and then no late answer is taken.  Return:
 * the answer's status, or IB_WC_WR_FLUSH_ERR.
 */
static enum ib_wc_status srd_map_wait(struct srd_qp *qp)
{
	while (!wait_for_completion_timeout(&qp->resp,
					    msecs_to_jiffies(SRD_POLL_MS))) {
		if (READ_ONCE(qp->closing)) {
			mutex_lock(&qp->resp_mutex);
			qp->resp_want = false;
			mutex_unlock(&qp->resp_mutex);
			return IB_WC_WR_FLUSH_ERR;
		}
	}
	return qp->resp_hdr.status;
}

/**
 * srd_map_answer() - a MAP_RESP came: the waiting MAP_REQ's answer
 * @qp: the QP
 * @h: the answer, its fields checked by the receive thread
 *
 * Context: the receive thread; takes qp->resp_mutex.
 * Return: false if no MAP_REQ waits (an answer nobody asked for).
 */
bool srd_map_answer(struct srd_qp *qp, const struct srd_hdr *h)
{
	bool ok;

	mutex_lock(&qp->resp_mutex);
	ok = qp->resp_want;
	if (ok) {
		qp->resp_want = false;
		qp->resp_hdr = *h;
		complete(&qp->resp);
	}
	mutex_unlock(&qp->resp_mutex);
	return ok;
}

/* Keep what the peer answered for @key (anything odd: no window). */
static void srd_rkey_fill(struct srd_rkey *rk, u32 key,
			  const struct srd_hdr *h)
{
	u64 len = le32_to_cpu(h->len), off = le64_to_cpu(h->woff);
	u64 iova = le64_to_cpu(h->addr);

	rk->key = key;
	rk->access = be32_to_cpu(h->imm) &
		     (IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE);
	rk->direct = h->status == IB_WC_SUCCESS && le32_to_cpu(h->rkey) == key &&
		     len && PAGE_ALIGNED(off) && off <= S64_MAX - len &&
		     iova <= U64_MAX - len && rk->access;
	rk->iova = iova;
	rk->len = len;
	rk->off = off;
}

/**
 * srd_rkey_get() - what a peer's key resolves to, asking the peer once
 * @qp: the QP (connected)
 * @key: the peer's key
 * @ask: ask the peer if the key is not in the cache
 * @st: IB_WC_SUCCESS, or IB_WC_WR_FLUSH_ERR if the connection ended
 *	while asking
 *
 * Context: the send worker; sleeps.  Also a user QP's poster, under the
 * QP's sq_mutex, which never asks.
 * Return: the key's entry in @qp's cache, or NULL (not there and not to
 * be asked, direct_rma off, or the connection ended).
 */
struct srd_rkey *srd_rkey_get(struct srd_qp *qp, u32 key, bool ask,
			      enum ib_wc_status *st)
{
	struct srd_hdr h = { .type = SRD_F_MAP_REQ, .rkey = cpu_to_le32(key) };
	struct srd_rkey *rk;
	u32 i;

	*st = IB_WC_SUCCESS;
	for (i = 0; key && i < SRD_MAP_CACHE; i++)	/* 0: a free entry */
		if (qp->rkeys[i].key == key)
			return &qp->rkeys[i];
	if (!ask || !READ_ONCE(srd_direct))
		return NULL;
	srd_map_want(qp);
	if (srd_send_hdr(qp, &h) ||
	    srd_map_wait(qp) == IB_WC_WR_FLUSH_ERR) {
		*st = IB_WC_WR_FLUSH_ERR;
		return NULL;
	}
	rk = &qp->rkeys[qp->next_rkey];
	srd_rkey_fill(rk, key, &qp->resp_hdr);
	srd_uqp_key(qp, qp->next_rkey);
	qp->next_rkey = (qp->next_rkey + 1) % SRD_MAP_CACHE;
	return rk;
}

/**
 * srd_rkey_forget() - drop what a peer's key resolved to
 * @qp: the QP
 * @key: the key (its window failed, or a SEND_WITH_INV invalidates it)
 *
 * Context: the send worker.
 */
void srd_rkey_forget(struct srd_qp *qp, u32 key)
{
	u32 i;

	for (i = 0; key && i < SRD_MAP_CACHE; i++)
		if (qp->rkeys[i].key == key) {
			memset(&qp->rkeys[i], 0, sizeof(qp->rkeys[i]));
			srd_uqp_key(qp, i);
		}
}
