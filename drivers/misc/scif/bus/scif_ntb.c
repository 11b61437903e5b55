// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF bus over the Linux NTB API: an ntb_client that joins this node to
 * the one peer behind each NTB device it is given.
 *
 * - Inbound: every memory window the NTB offers gets one coherent buffer
 *   of the window's size, allocated on the NTB's PCI device and
 *   translated with ntb_mw_set_trans().  Those buffers are this bus's
 *   pool (alloc_local): the core's queue areas and connection rings for
 *   the peer live there, and map_local reaches nothing else.
 * - Outbound: the peer's windows, mapped write-combined.  An address the
 *   peer publishes names a window and an offset in it (SCIF_NTB_ADDR_*);
 *   it is checked against the window's size, and against the windows the
 *   peer said it translated, before any use.
 * - Bootstrap: scratchpads.  Each side writes into the other's
 *   scratchpads a magic, a version with the mask of windows it
 *   translated, its node id, a generation, the address of its node queue
 *   and a check word written last.  A reader takes the values only if
 *   the check word matches them and is the same before and after.
 * - Doorbells: bit 0 is the seam's ring; bit 1 says "my scratchpads
 *   changed" and only hurries the poll work, which also runs every
 *   poll_ms.
 * - Node up and down: the poll work follows the link state and the
 *   peer's scratchpads.  A new generation is a new life of the peer
 *   (restart, reload, or it dropped us): the node is reported down and
 *   brought up again.  When this side drops the peer for a reason of its
 *   own (link down, a record that stays invalid), it draws a new
 *   generation, so that the peer notices too; when the peer took its
 *   queue back (its core dropped us for an error), it does not, and the
 *   two stay apart until one of them starts a new life.  A generation
 *   that was dropped is never used again.
 *
 * Everything read from a scratchpad or through a window is written by
 * the peer and checked before use, and what the peer makes us log is
 * rate-limited: a peer that starts a new life every few milliseconds
 * must not flood this node's kernel log.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-mapping.h>
#include <linux/bitmap.h>
#include <linux/io.h>
#include <linux/kref.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/ntb.h>
#include <linux/overflow.h>
#include <linux/pci.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "../scif_hw.h"

#define SCIF_NTB_MAGIC		0x544e4353	/* "SCNT" */
#define SCIF_NTB_VERSION	1
#define SCIF_NTB_MAX_MWS	8

/* Scratchpads, as written into the peer's and read from our own. */
enum {
	SCIF_NTB_SPAD_MAGIC,
	SCIF_NTB_SPAD_VERSION,	/* version | translated windows << 16 |
				 * (full-reach window + 1) << 24
				 */
	SCIF_NTB_SPAD_NODE,
	SCIF_NTB_SPAD_GEN,
	SCIF_NTB_SPAD_QP_LO,
	SCIF_NTB_SPAD_QP_HI,
	SCIF_NTB_SPAD_CHECK,	/* written last */
	SCIF_NTB_SPADS
};

#define SCIF_NTB_DB_MSG		BIT_ULL(0)
#define SCIF_NTB_DB_BOOT	BIT_ULL(1)

/*
 * A window address: SCIF_NTB_ADDR_WIN | window << 40 | offset.  Bit 62
 * keeps it apart from any physical address a full-reach window would use.
 */
#define SCIF_NTB_ADDR_WIN	BIT_ULL(62)
#define SCIF_NTB_ADDR_SHIFT	40
#define SCIF_NTB_ADDR_OFF	(BIT_ULL(SCIF_NTB_ADDR_SHIFT) - 1)

/* Consecutive inconsistent scratchpad reads after which an up peer goes. */
#define SCIF_NTB_BAD_READS	30

static unsigned int poll_ms = 100;
module_param(poll_ms, uint, 0444);
MODULE_PARM_DESC(poll_ms, "Milliseconds between looks at the link and the peer's scratchpads (default 100)");

static int self_node = -1;
module_param(self_node, int, 0444);
MODULE_PARM_DESC(self_node, "This node's SCIF id (default: the NTB port number)");

/**
 * struct scif_ntb_info - what one side tells the other in scratchpads
 * @magic: SCIF_NTB_MAGIC
 * @version: SCIF_NTB_VERSION, and the mask of translated windows << 16
 * @node: the writer's node id
 * @gen: the writer's generation, never 0
 * @qp: the writer's node queue for the reader (a window address), or 0
 */
struct scif_ntb_info {
	u32 magic;
	u32 version;
	u32 node;
	u32 gen;
	u64 qp;
};

/*
 * A window: inbound, a coherent buffer (@va, @dma) whose pages @map
 * tracks (set: allocated, under scif_ntb.pool_lock); outbound, the
 * peer's window mapped at @va.
 */
struct scif_ntb_mw {
	void *va;
	dma_addr_t dma;
	phys_addr_t phys;
	resource_size_t size;
	unsigned long *map;
	unsigned int pages;
};

/**
 * struct scif_ntb - one NTB device, one peer
 * @hw: the bus, registered with the core
 * @ntb: the NTB device
 * @pdev: its PCI device (a reference is held while inbound memory exists)
 * @ref: one for the device, one per alloc_local allocation not yet freed:
 *	the inbound windows and their page maps live until the last put
 * @orphaned: the device went while allocations were left: the windows'
 *	buffers are not freed (the device's memory may be gone)
 * @pool_lock: protects the page maps of the inbound windows (the pool)
 * @in: inbound windows (their coherent buffers)
 * @nr_in: how many of @in were allocated
 * @in_mask: the ones of @in translated (the pool holds those with a
 *	buffer)
 * @full_in: our full-reach inbound window (translated at 0), or -1
 * @full_size: its size: the peer reaches our RAM below it
 * @out: outbound windows (the peer's), mapped at @out[].va
 * @nr_out: how many of @out are mapped
 * @self: this node's id
 * @spad_lock: serializes writes of our scratchpads in the peer (the poll
 *	work and publish_qp); protects @gen and @my_qp
 * @gen: our generation
 * @my_qp: the node queue address we published
 * @kick_lock: protects @stopping against the event callbacks
 * @stopping: set at remove: no more poll work queued
 * @poll: the poll work; everything below is used by it alone (and @qp,
 *	@peer_mws by the bus operations while the node is up)
 * @in_done: the inbound windows were set up (at the first link up)
 * @link: the link was up at the last look
 * @wrote: our scratchpads were written since the link came up
 * @known: a peer life is reported to the core (up, pending or failed)
 * @up: scif_hw_node_up() succeeded for it
 * @failed: it was reported failed
 * @node: its node id
 * @peer_gen: its generation
 * @dead_gen: a generation of the peer's that was dropped: never taken again
 * @dead_valid: @dead_gen is set
 * @qp: its queue address as given to the core
 * @peer_mws: the windows it translated (mask), from its scratchpads
 * @peer_full: its full-reach window, or U32_MAX: our outbound window of
 *	that index reaches its RAM at offset = physical address
 * @bad_reads: consecutive inconsistent reads while @known
 * @refused: the last scif_hw_node_up() failed with this error (logged once)
 */
struct scif_ntb {
	struct scif_hw_dev hw;
	struct ntb_dev *ntb;
	struct pci_dev *pdev;
	struct kref ref;
	bool orphaned;
	spinlock_t pool_lock;	/* the inbound windows' page maps */
	struct scif_ntb_mw in[SCIF_NTB_MAX_MWS];
	int nr_in;
	u32 in_mask;
	int full_in;
	resource_size_t full_size;
	struct scif_ntb_mw out[SCIF_NTB_MAX_MWS];
	int nr_out;
	u16 self;
	struct mutex spad_lock;	/* our scratchpads in the peer, @gen, @my_qp */
	u32 gen;
	u64 my_qp;
	spinlock_t kick_lock;	/* @stopping */
	bool stopping;
	struct delayed_work poll;
	bool in_done;
	bool link;
	bool wrote;
	bool known;
	bool up;
	bool failed;
	u16 node;
	u32 peer_gen;
	u32 dead_gen;
	bool dead_valid;
	u64 qp;
	u32 peer_mws;
	u32 peer_full;
	unsigned int bad_reads;
	int refused;
};

static struct scif_ntb *to_sn(struct scif_hw_dev *hw)
{
	return container_of(hw, struct scif_ntb, hw);
}

/* ---- addresses ---- */

static u64 scif_ntb_addr(int w, u64 off)
{
	return SCIF_NTB_ADDR_WIN | (u64)w << SCIF_NTB_ADDR_SHIFT | off;
}

/*
 * The peer's window that holds [@addr, @addr + @len), or NULL: the window
 * must exist, be translated by the peer and hold the whole range.
 */
static struct scif_ntb_mw *scif_ntb_reach(struct scif_ntb *sn, u64 addr,
					  size_t len, u64 *off)
{
	u64 w, o = addr & SCIF_NTB_ADDR_OFF;

	if (!len)
		return NULL;
	if (addr & SCIF_NTB_ADDR_WIN) {
		w = (addr & ~SCIF_NTB_ADDR_WIN) >> SCIF_NTB_ADDR_SHIFT;
	} else {
		/* An address in the peer's RAM, through its full window. */
		w = READ_ONCE(sn->peer_full);
		o = addr;
	}
	if (w >= sn->nr_out || !(READ_ONCE(sn->peer_mws) & BIT(w)))
		return NULL;
	if (o > sn->out[w].size || len > sn->out[w].size - o)
		return NULL;
	*off = o;
	return &sn->out[w];
}

static void *scif_ntb_map_peer(struct scif_hw_dev *hw, void *ctx, u64 addr,
			       size_t len)
{
	struct scif_ntb_mw *mw;
	u64 off;

	mw = scif_ntb_reach(to_sn(hw), addr, len, &off);
	return mw ? mw->va + off : ERR_PTR(-EINVAL);
}

static void scif_ntb_unmap_peer(struct scif_hw_dev *hw, void *ctx, void *va,
				size_t len)
{
}

static int scif_ntb_peer_phys(struct scif_hw_dev *hw, void *ctx, u64 addr,
			      size_t len, phys_addr_t *phys)
{
	struct scif_ntb_mw *mw;
	u64 off;

	mw = scif_ntb_reach(to_sn(hw), addr, len, &off);
	if (!mw)
		return -EINVAL;
	*phys = mw->phys + off;
	return 0;
}

/*
 * A local device reaches the peer's memory through the outbound window,
 * as the CPU does: the range peer_phys finds (one window must hold it
 * whole), mapped for @dev as the MMIO it is; the NTB translates it.
 */
static int scif_ntb_peer_dma_map(struct scif_hw_dev *hw, void *ctx,
				 struct device *dev, u64 addr, size_t len,
				 enum dma_data_direction dir, dma_addr_t *dma)
{
	phys_addr_t phys;
	int err;

	err = scif_ntb_peer_phys(hw, ctx, addr, len, &phys);
	if (err)
		return err;
	return scif_hw_dma_map_phys(dev, phys, len, dir, dma);
}

static void scif_ntb_peer_dma_unmap(struct scif_hw_dev *hw,
				    struct device *dev, u64 addr,
				    dma_addr_t dma, size_t len,
				    enum dma_data_direction dir)
{
	dma_unmap_resource(dev, dma, len, dir, 0);
}

/*
 * Only memory inside our translated inbound windows (what alloc_local
 * gives), or below the full-reach window's size, is reachable by the
 * peer; anything else (the pages of a window registered for RMA) is
 * refused with -EOPNOTSUPP: this link cannot, and the core reaches such
 * a window through staging buffers in the pool instead (design.rst).
 */
static int scif_ntb_map_local(struct scif_hw_dev *hw, void *ctx,
			      phys_addr_t phys, size_t len, u64 *addr)
{
	struct scif_ntb *sn = to_sn(hw);
	int w;

	for (w = 0; w < sn->nr_in && len; w++) {
		struct scif_ntb_mw *mw = &sn->in[w];

		if (!(sn->in_mask & BIT(w)) || !mw->va || phys < mw->dma ||
		    phys - mw->dma > mw->size || len > mw->size - (phys - mw->dma))
			continue;
		*addr = scif_ntb_addr(w, phys - mw->dma);
		return 0;
	}
	/* Through the full-reach window, the peer sees our RAM at 0. */
	if (sn->full_in >= 0 && len && phys < sn->full_size &&
	    len <= sn->full_size - phys) {
		*addr = phys;
		return 0;
	}
	return -EOPNOTSUPP;
}

static void scif_ntb_unmap_local(struct scif_hw_dev *hw, void *ctx,
				 phys_addr_t phys, size_t len, u64 addr)
{
}

/* ---- scratchpads ---- */

static u32 scif_ntb_check(const struct scif_ntb_info *in)
{
	u32 v[] = { in->magic, in->version, in->node, in->gen,
		    lower_32_bits(in->qp), upper_32_bits(in->qp) };
	u32 sum = 0x5c1f0b7b;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(v); i++)
		sum = rol32(sum ^ v[i], 7) * 0x9e3779b1;
	return sum ?: 1;
}

/* Write our scratchpads in the peer; under spad_lock. */
static void scif_ntb_write_info(struct scif_ntb *sn)
{
	struct scif_ntb_info in = {
		.magic = SCIF_NTB_MAGIC,
		.version = SCIF_NTB_VERSION | sn->in_mask << 16 |
			   (u32)(sn->full_in + 1) << 24,
		.node = sn->self,
		.gen = sn->gen,
		.qp = sn->my_qp,
	};
	struct ntb_dev *ntb = sn->ntb;

	lockdep_assert_held(&sn->spad_lock);
	ntb_peer_spad_write(ntb, 0, SCIF_NTB_SPAD_CHECK, 0);
	ntb_peer_spad_write(ntb, 0, SCIF_NTB_SPAD_MAGIC, in.magic);
	ntb_peer_spad_write(ntb, 0, SCIF_NTB_SPAD_VERSION, in.version);
	ntb_peer_spad_write(ntb, 0, SCIF_NTB_SPAD_NODE, in.node);
	ntb_peer_spad_write(ntb, 0, SCIF_NTB_SPAD_GEN, in.gen);
	ntb_peer_spad_write(ntb, 0, SCIF_NTB_SPAD_QP_LO, lower_32_bits(in.qp));
	ntb_peer_spad_write(ntb, 0, SCIF_NTB_SPAD_QP_HI, upper_32_bits(in.qp));
	wmb();	/* the fields before the check word */
	ntb_peer_spad_write(ntb, 0, SCIF_NTB_SPAD_CHECK, scif_ntb_check(&in));
	ntb_peer_db_set(ntb, SCIF_NTB_DB_BOOT);
}

/* Take back everything we told the peer (remove). */
static void scif_ntb_clear_info(struct scif_ntb *sn)
{
	int i;

	mutex_lock(&sn->spad_lock);
	for (i = SCIF_NTB_SPADS - 1; i >= 0; i--)
		ntb_peer_spad_write(sn->ntb, 0, i, 0);
	mutex_unlock(&sn->spad_lock);
}

/* Our next generation: anything but 0 and the current one. */
static void scif_ntb_new_gen(struct scif_ntb *sn)
{
	mutex_lock(&sn->spad_lock);
	sn->gen++;
	if (!sn->gen)
		sn->gen = 1;
	scif_ntb_write_info(sn);
	mutex_unlock(&sn->spad_lock);
}

/*
 * Read what the peer wrote in our scratchpads.  Return: true if it is a
 * consistent, valid record (magic, version, check word), else false.
 */
static bool scif_ntb_read_info(struct scif_ntb *sn, struct scif_ntb_info *in)
{
	struct ntb_dev *ntb = sn->ntb;
	u32 c1, c2;

	c1 = ntb_spad_read(ntb, SCIF_NTB_SPAD_CHECK);
	rmb();	/* the check word before the fields */
	in->magic = ntb_spad_read(ntb, SCIF_NTB_SPAD_MAGIC);
	in->version = ntb_spad_read(ntb, SCIF_NTB_SPAD_VERSION);
	in->node = ntb_spad_read(ntb, SCIF_NTB_SPAD_NODE);
	in->gen = ntb_spad_read(ntb, SCIF_NTB_SPAD_GEN);
	in->qp = ntb_spad_read(ntb, SCIF_NTB_SPAD_QP_LO) |
		 (u64)ntb_spad_read(ntb, SCIF_NTB_SPAD_QP_HI) << 32;
	rmb();	/* the fields before the check word again */
	c2 = ntb_spad_read(ntb, SCIF_NTB_SPAD_CHECK);
	return c1 == c2 && c1 == scif_ntb_check(in) &&
	       in->magic == SCIF_NTB_MAGIC && in->gen &&
	       (in->version & 0xffff) == SCIF_NTB_VERSION &&
	       in->node <= U16_MAX;
}

static void scif_ntb_publish_qp(struct scif_hw_dev *hw, void *ctx, u64 addr)
{
	struct scif_ntb *sn = to_sn(hw);

	mutex_lock(&sn->spad_lock);
	sn->my_qp = addr;
	scif_ntb_write_info(sn);
	mutex_unlock(&sn->spad_lock);
}

static u64 scif_ntb_peer_qp(struct scif_hw_dev *hw, void *ctx)
{
	return to_sn(hw)->qp;
}

static void scif_ntb_ring(struct scif_hw_dev *hw, void *ctx)
{
	ntb_peer_db_set(to_sn(hw)->ntb, SCIF_NTB_DB_MSG);
}

/* ---- the pool: our inbound windows ---- */

static void scif_ntb_release(struct kref *ref)
{
	struct scif_ntb *sn = container_of(ref, struct scif_ntb, ref);
	int w;

	for (w = 0; w < sn->nr_in; w++)
		bitmap_free(sn->in[w].map);
	for (w = 0; w < sn->nr_in && !sn->orphaned; w++)
		if (sn->in[w].va)
			dma_free_coherent(&sn->pdev->dev, sn->in[w].size,
					  sn->in[w].va, sn->in[w].dma);
	pci_dev_put(sn->pdev);
	kfree(sn);
}

/*
 * Whole pages of the first inbound window that has room.  They held
 * another connection's ring before: the core zeroes all of them, to the
 * end of the last one, for each new owner (the windows' buffers start
 * zeroed from dma_alloc_coherent()).
 */
static void *scif_ntb_alloc_local(struct scif_hw_dev *hw, size_t len,
				  gfp_t gfp, phys_addr_t *phys)
{
	struct scif_ntb *sn = to_sn(hw);
	unsigned long n = DIV_ROUND_UP(len, PAGE_SIZE), at;
	struct scif_ntb_mw *mw;
	void *va = NULL;
	int w;

	spin_lock(&sn->pool_lock);
	for (w = 0; w < sn->nr_in && !va && len; w++) {
		mw = &sn->in[w];
		if (!mw->map || n > mw->pages)
			continue;
		at = bitmap_find_next_zero_area(mw->map, mw->pages, 0, n, 0);
		if (at >= mw->pages)
			continue;
		bitmap_set(mw->map, at, n);
		va = mw->va + at * PAGE_SIZE;
		*phys = mw->dma + at * PAGE_SIZE;
	}
	spin_unlock(&sn->pool_lock);
	if (va)
		kref_get(&sn->ref);
	return va;
}

static void scif_ntb_free_local(struct scif_hw_dev *hw, void *va,
				phys_addr_t phys, size_t len)
{
	struct scif_ntb *sn = to_sn(hw);
	struct scif_ntb_mw *mw;
	int w;

	spin_lock(&sn->pool_lock);
	for (w = 0; w < sn->nr_in; w++) {
		mw = &sn->in[w];
		if (mw->map && va >= mw->va && va < mw->va + mw->size) {
			bitmap_clear(mw->map, (va - mw->va) / PAGE_SIZE,
				     DIV_ROUND_UP(len, PAGE_SIZE));
			break;
		}
	}
	spin_unlock(&sn->pool_lock);
	WARN_ON_ONCE(w == sn->nr_in);
	kref_put(&sn->ref, scif_ntb_release);
}

static const struct scif_hw_ops scif_ntb_ops = {
	.map_peer = scif_ntb_map_peer,
	.unmap_peer = scif_ntb_unmap_peer,
	.peer_phys = scif_ntb_peer_phys,
	.peer_dma_map = scif_ntb_peer_dma_map,
	.peer_dma_unmap = scif_ntb_peer_dma_unmap,
	.map_local = scif_ntb_map_local,
	.unmap_local = scif_ntb_unmap_local,
	.publish_qp = scif_ntb_publish_qp,
	.peer_qp = scif_ntb_peer_qp,
	.ring = scif_ntb_ring,
	.alloc_local = scif_ntb_alloc_local,
	.free_local = scif_ntb_free_local,
};

/* ---- windows ---- */

/*
 * Map the peer's windows not mapped yet: at probe, and at the first link
 * up (a full-reach window may exist only then).
 */
static int scif_ntb_setup_out(struct scif_ntb *sn)
{
	struct scif_ntb_mw *mw;
	int w, n;

	n = min(ntb_peer_mw_count(sn->ntb), SCIF_NTB_MAX_MWS);
	for (w = sn->nr_out; w < n; w++) {
		mw = &sn->out[w];
		if (ntb_peer_mw_get_addr(sn->ntb, w, &mw->phys, &mw->size))
			break;
		mw->va = memremap(mw->phys, mw->size, MEMREMAP_WC);
		if (!mw->va)
			return -ENOMEM;
		sn->nr_out = w + 1;
	}
	return 0;
}

/*
 * A window too large for a coherent buffer may be a full-reach window
 * (the "large BAR" of some NTBs): one translated at address 0 over all
 * of our RAM, @size_max bytes.  Return: whether it took that translation.
 */
static bool scif_ntb_setup_full(struct scif_ntb *sn, int w,
				resource_size_t size_max)
{
	if (sn->full_in >= 0 || ntb_mw_set_trans(sn->ntb, 0, w, 0, size_max))
		return false;
	sn->full_in = w;
	sn->full_size = size_max;
	dev_info(&sn->pdev->dev, "inbound window %d: full reach, %pa bytes at 0\n",
		 w, &size_max);
	return true;
}

/*
 * Inbound window @w: a coherent buffer of the window's size, translated
 * and added to the pool, or else the full-reach translation.
 * Return: whether the window is translated.
 */
static bool scif_ntb_setup_in_one(struct scif_ntb *sn, int w)
{
	struct device *dev = &sn->pdev->dev;
	resource_size_t align, size, max;
	struct scif_ntb_mw *mw = &sn->in[w];

	/* Our inbound window w is the peer's outbound window w. */
	if (ntb_mw_get_align(sn->ntb, 0, w, &align, NULL, &max) ||
	    ntb_peer_mw_get_addr(sn->ntb, w, NULL, &size))
		return false;
	mw->va = dma_alloc_coherent(dev, size, &mw->dma, GFP_KERNEL);
	if (!mw->va)
		return scif_ntb_setup_full(sn, w, max);
	mw->size = size;
	if (!IS_ALIGNED(mw->dma, align ?: 1) ||
	    ntb_mw_set_trans(sn->ntb, 0, w, mw->dma, size))
		return false;
	mw->pages = size / PAGE_SIZE;
	mw->map = bitmap_zalloc(mw->pages, GFP_KERNEL);
	if (!mw->map) {
		ntb_mw_clear_trans(sn->ntb, 0, w);
		return false;
	}
	return true;
}

/* Every inbound window, once the link is up (ntb_mw_get_align() wants it). */
static void scif_ntb_setup_in(struct scif_ntb *sn)
{
	struct device *dev = &sn->pdev->dev;
	int w, n;

	n = min(ntb_mw_count(sn->ntb, 0), SCIF_NTB_MAX_MWS);
	sn->nr_in = n;
	for (w = 0; w < n; w++) {
		if (scif_ntb_setup_in_one(sn, w))
			sn->in_mask |= BIT(w);
		else
			dev_info(dev, "inbound window %d: not translated\n", w);
	}
	if (!sn->in_mask)
		dev_warn(dev, "no inbound window could be translated: the peer cannot reach this node\n");
	else
		dev_info(dev, "inbound windows: %d (translated: mask %#x)\n",
			 sn->nr_in, sn->in_mask);
}

/* ---- the peer's lives ---- */

static void scif_ntb_kick(struct scif_ntb *sn, unsigned long delay)
{
	unsigned long flags;

	spin_lock_irqsave(&sn->kick_lock, flags);
	if (!sn->stopping)
		mod_delayed_work(system_wq, &sn->poll, delay);
	spin_unlock_irqrestore(&sn->kick_lock, flags);
}

/*
 * Report the peer's life down.  @ours: we drop it for a reason of our
 * own (not a new generation of the peer's): draw a new generation, so
 * that the peer drops us too and both start afresh.
 */
static void scif_ntb_drop(struct scif_ntb *sn, bool ours)
{
	if (sn->known) {
		scif_hw_node_down(&sn->hw, sn->node);
		sn->dead_gen = sn->peer_gen;
		sn->dead_valid = true;
	}
	sn->known = false;
	sn->up = false;
	sn->failed = false;
	sn->qp = 0;
	sn->bad_reads = 0;
	if (ours && sn->link)
		scif_ntb_new_gen(sn);
}

/* A new life of the peer, as its scratchpads tell: try to bring it up. */
static void scif_ntb_node_up(struct scif_ntb *sn, const struct scif_ntb_info *in)
{
	u64 off;
	int err;

	if (!sn->known) {
		if (sn->dead_valid && in->gen == sn->dead_gen)
			return;		/* a life already dropped */
		if (in->node == sn->self) {
			if (sn->refused != -EEXIST)
				dev_warn_ratelimited(sn->hw.dev, "the peer claims our node id %u\n",
						     sn->self);
			sn->refused = -EEXIST;
			return;
		}
		sn->known = true;
		sn->node = in->node;
		sn->peer_gen = in->gen;
	}
	WRITE_ONCE(sn->peer_mws, (in->version >> 16) & (BIT(sn->nr_out) - 1) & 0xff);
	/* U32_MAX (none) for 0; a bad index is refused by scif_ntb_reach(). */
	WRITE_ONCE(sn->peer_full, (in->version >> 24) - 1);
	sn->qp = scif_ntb_reach(sn, in->qp, PAGE_SIZE, &off) ? in->qp : 0;
	err = scif_hw_node_up(&sn->hw, sn->node, sn);
	if (!err) {
		sn->up = true;
		sn->refused = 0;
		dev_info_ratelimited(sn->hw.dev, "node %u up (generation %#x)\n",
				     sn->node, sn->peer_gen);
		return;
	}
	if (err == -EAGAIN)
		return;
	if (err != sn->refused)
		dev_warn_ratelimited(sn->hw.dev, "node %u: not brought up: %d\n",
				     sn->node, err);
	sn->refused = err;
	sn->known = false;	/* the core let go of it: try again later */
}

/* The peer is up: did it change what it told us? */
static void scif_ntb_check_up(struct scif_ntb *sn, const struct scif_ntb_info *in)
{
	if (in->qp == sn->qp || sn->failed)
		return;
	/*
	 * It took its queue back in the same life: its core dropped us on
	 * purpose (a protocol error) and wants us apart until one side
	 * starts a new life, so no new generation of ours.
	 */
	if (!in->qp) {
		dev_info_ratelimited(sn->hw.dev, "node %u dropped us\n",
				     sn->node);
		scif_ntb_drop(sn, false);
		return;
	}
	sn->failed = true;
	scif_hw_node_failed(&sn->hw, sn->node, "moved its node queue");
}

static void scif_ntb_poll(struct work_struct *work)
{
	struct scif_ntb *sn = container_of(work, struct scif_ntb, poll.work);
	struct scif_ntb_info in;
	bool link = ntb_link_is_up(sn->ntb, NULL, NULL);

	if (!link) {
		if (sn->known)
			dev_info_ratelimited(sn->hw.dev, "link down: node %u lost\n",
					     sn->node);
		sn->link = false;
		sn->wrote = false;
		scif_ntb_drop(sn, true);
		goto again;
	}
	if (!sn->in_done) {
		/* ntb_mw_get_align() wants the link up. */
		sn->in_done = true;
		scif_ntb_setup_in(sn);
		if (scif_ntb_setup_out(sn))
			dev_warn(sn->hw.dev, "outbound window %d not mapped\n",
				 sn->nr_out);
	}
	if (!sn->link || !sn->wrote) {
		sn->link = true;
		sn->wrote = true;
		scif_ntb_new_gen(sn);
	}
	if (!scif_ntb_read_info(sn, &in)) {
		if (sn->known && ++sn->bad_reads >= SCIF_NTB_BAD_READS) {
			dev_warn_ratelimited(sn->hw.dev, "node %u: its scratchpads stay invalid\n",
					     sn->node);
			scif_ntb_drop(sn, true);
		}
		goto again;
	}
	sn->bad_reads = 0;
	if (sn->known && (in.gen != sn->peer_gen || in.node != sn->node)) {
		dev_info_ratelimited(sn->hw.dev, "node %u: new generation %#x\n",
				     sn->node, in.gen);
		scif_ntb_drop(sn, false);
	}
	if (sn->up)
		scif_ntb_check_up(sn, &in);
	else if (!sn->failed)
		scif_ntb_node_up(sn, &in);
again:
	scif_ntb_kick(sn, msecs_to_jiffies(poll_ms));
}

static void scif_ntb_link_event(void *ctx)
{
	scif_ntb_kick(ctx, 0);
}

static void scif_ntb_db_event(void *ctx, int vector)
{
	struct scif_ntb *sn = ctx;
	u64 bits = ntb_db_read(sn->ntb);

	ntb_db_clear(sn->ntb, bits);
	if (bits & SCIF_NTB_DB_MSG && READ_ONCE(sn->up))
		scif_hw_doorbell(&sn->hw, READ_ONCE(sn->node));
	if (bits & SCIF_NTB_DB_BOOT)
		scif_ntb_kick(sn, 0);
}

static const struct ntb_ctx_ops scif_ntb_ctx_ops = {
	.link_event = scif_ntb_link_event,
	.db_event = scif_ntb_db_event,
};

/* ---- probe and remove ---- */

static void scif_ntb_teardown(struct scif_ntb *sn)
{
	int w;

	for (w = 0; w < sn->nr_out; w++)
		memunmap(sn->out[w].va);
	for (w = 0; w < sn->nr_in; w++)
		if (sn->in_mask & BIT(w))
			ntb_mw_clear_trans(sn->ntb, 0, w);
	kref_put(&sn->ref, scif_ntb_release);
}

static int scif_ntb_check_dev(struct ntb_dev *ntb)
{
	if (ntb_peer_port_count(ntb) != 1 ||
	    ntb_spad_count(ntb) < SCIF_NTB_SPADS ||
	    (ntb_db_valid_mask(ntb) & 3) != 3) {
		dev_info(&ntb->dev, "scif_ntb needs one peer, %d scratchpads and 2 doorbell bits\n",
			 SCIF_NTB_SPADS);
		return -ENODEV;
	}
	if (self_node < -1 || self_node > U16_MAX ||
	    (self_node < 0 && ntb_port_number(ntb) < 0))
		return -EINVAL;
	return 0;
}

static struct scif_ntb *scif_ntb_new(struct ntb_dev *ntb)
{
	struct scif_ntb *sn = kzalloc(sizeof(*sn), GFP_KERNEL);

	if (!sn)
		return NULL;
	sn->ntb = ntb;
	sn->pdev = pci_dev_get(ntb->pdev);
	kref_init(&sn->ref);
	mutex_init(&sn->spad_lock);
	spin_lock_init(&sn->pool_lock);
	spin_lock_init(&sn->kick_lock);
	INIT_DELAYED_WORK(&sn->poll, scif_ntb_poll);
	sn->self = self_node >= 0 ? self_node : ntb_port_number(ntb);
	sn->gen = get_random_u32();
	sn->full_in = -1;
	sn->peer_full = U32_MAX;
	sn->hw.name = "ntb";
	sn->hw.ops = &scif_ntb_ops;
	sn->hw.dev = &ntb->pdev->dev;
	/* What sysfs shows of the nodes: the NTB device, bound to us. */
	sn->hw.link_dev = &ntb->dev;
	sn->hw.owner = THIS_MODULE;
	sn->hw.self = sn->self;
	/* The outbound windows are mapped write-combined. */
	sn->hw.peer_wc = true;
	return sn;
}

static int scif_ntb_probe(struct ntb_client *client, struct ntb_dev *ntb)
{
	struct scif_ntb *sn;
	int err;

	err = scif_ntb_check_dev(ntb);
	if (err)
		return err;
	sn = scif_ntb_new(ntb);
	if (!sn)
		return -ENOMEM;
	err = scif_ntb_setup_out(sn);
	if (err)
		goto err_teardown;
	err = ntb_set_ctx(ntb, sn, &scif_ntb_ctx_ops);
	if (err)
		goto err_teardown;
	err = scif_hw_register(&sn->hw);
	if (err)
		goto err_ctx;
	ntb_db_clear(ntb, ntb_db_valid_mask(ntb));
	ntb_db_clear_mask(ntb, SCIF_NTB_DB_MSG | SCIF_NTB_DB_BOOT);
	ntb_link_enable(ntb, NTB_SPEED_AUTO, NTB_WIDTH_AUTO);
	scif_ntb_kick(sn, 0);
	dev_info(&ntb->dev, "SCIF node %u, %d outbound window(s)\n",
		 sn->self, sn->nr_out);
	return 0;

err_ctx:
	ntb_clear_ctx(ntb);
err_teardown:
	scif_ntb_teardown(sn);
	return err;
}

static void scif_ntb_remove(struct ntb_client *client, struct ntb_dev *ntb)
{
	struct scif_ntb *sn = ntb->ctx;

	spin_lock_irq(&sn->kick_lock);
	sn->stopping = true;
	spin_unlock_irq(&sn->kick_lock);
	cancel_delayed_work_sync(&sn->poll);
	scif_hw_unregister(&sn->hw);
	/* After the core's last publish_qp(0). */
	scif_ntb_clear_info(sn);
	ntb_link_disable(ntb);
	ntb_db_set_mask(ntb, SCIF_NTB_DB_MSG | SCIF_NTB_DB_BOOT);
	ntb_clear_ctx(ntb);
	/*
	 * Rings of endpoints still open live in the windows, and the
	 * device's memory may be gone before they are freed: keep it.
	 */
	if (kref_read(&sn->ref) > 1) {
		sn->orphaned = true;
		dev_warn(&ntb->dev, "endpoints still hold rings in the inbound windows: the windows are not given back\n");
	}
	scif_ntb_teardown(sn);
}

static struct ntb_client scif_ntb_client = {
	.ops = {
		.probe = scif_ntb_probe,
		.remove = scif_ntb_remove,
	},
};

static int __init scif_ntb_init(void)
{
	return ntb_register_client(&scif_ntb_client);
}
module_init(scif_ntb_init);

static void __exit scif_ntb_exit(void)
{
	ntb_unregister_client(&scif_ntb_client);
}
module_exit(scif_ntb_exit);

MODULE_DESCRIPTION("SCIF bus over the Linux NTB API");
MODULE_VERSION(SCIF_DRIVER_VERSION);
MODULE_LICENSE("GPL");
