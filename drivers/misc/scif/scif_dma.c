// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: the copy engine's DMA channels.
 *
 * At load the engine takes up to dma_channels DMA_MEMCPY channels from
 * dmaengine (a bus whose hardware has a copy engine registers it there
 * as a DMA_MEMCPY provider).  Each endpoint is given one, chosen round robin among the
 * channels on the NUMA node of the bus that reaches its peer (all of
 * them when none is there), so endpoints copy in parallel and near
 * their link.
 *
 * The RMA code hands a batch the pieces of a copy as physical ranges,
 * both sides at once: local memory is mapped for the channel's device
 * with dma_map_page(), a peer's memory (an aperture, not RAM) with
 * dma_map_resource().  Pieces are submitted as they come and the batch
 * waits for all of them at the end, then unmaps everything.  A piece
 * the channel or the DMA API refuses is left to the CPU; a piece the
 * channel reports failed fails the batch with -EIO.  See
 * Documentation/scif/rma.rst.
 */
#define pr_fmt(fmt) "scif: " fmt

#include <linux/dma-mapping.h>
#include <linux/dmaengine.h>
#include <linux/moduleparam.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "scif_rma.h"

#define SCIF_DMA_MAX_CHANNELS	16
/* Pieces a batch holds before it must be finished. */
#define SCIF_DMA_BATCH		64
/* A batch gives up on a channel that completed nothing for this long. */
#define SCIF_DMA_STALL		(10 * HZ)

static unsigned int scif_dma_channels = 4;
module_param_named(dma_channels, scif_dma_channels, uint, 0444);
MODULE_PARM_DESC(dma_channels,
		 "Most DMA_MEMCPY channels the copy engine takes at load, at most 16; 0: copy with the CPU (default 4)");

static unsigned int scif_dma_min_len = SZ_16K;
module_param_named(dma_min, scif_dma_min_len, uint, 0644);
MODULE_PARM_DESC(dma_min,
		 "RMA descriptors shorter than this many bytes are copied by the CPU, not DMA (default 16384)");

/*
 * The channels, set at init and released at exit: read without a lock
 * in between.
 */
static struct dma_chan *scif_dma_pool[SCIF_DMA_MAX_CHANNELS];
static unsigned int scif_dma_nr;

static atomic64_t scif_dma_bytes;
static atomic64_t scif_dma_pieces;
static atomic64_t scif_dma_refused;
static atomic64_t scif_dma_failed;

/**
 * struct scif_dma_map - one mapping of a batch
 * @addr: the DMA address
 * @len: its length
 * @dir: DMA_TO_DEVICE (a source) or DMA_FROM_DEVICE (a destination)
 * @resource: mapped with dma_map_resource() (else dma_map_page())
 */
struct scif_dma_map {
	dma_addr_t addr;
	size_t len;
	enum dma_data_direction dir;
	bool resource;
};

/**
 * struct scif_dma_batch - the DMA pieces of one copy
 * @chan: the channel
 * @dev: its device, which the mappings are for
 * @nr_maps: entries of @maps in use
 * @pending: pieces submitted and not completed, plus one held by the
 *	submitter until scif_dma_batch_finish()
 * @completed: pieces completed (progress, for the stall check)
 * @failed: a piece completed with an error
 * @done: completed when @pending drops to 0 in a callback
 * @maps: the mappings, two per piece
 *
 * The callbacks touch only @pending, @completed, @failed and @done, and
 * nothing after their decrement of @pending but @done: the batch is
 * freed once scif_dma_batch_finish() returns.
 */
struct scif_dma_batch {
	struct dma_chan *chan;
	struct device *dev;
	unsigned int nr_maps;
	atomic_t pending;
	atomic_t completed;
	bool failed;
	struct completion done;
	struct scif_dma_map maps[2 * SCIF_DMA_BATCH];
};

/**
 * scif_dma_pick() - the channel for an endpoint
 * @numa: NUMA node of the bus that reaches the endpoint's peer, or
 *	NUMA_NO_NODE
 * @idx: the endpoint's round-robin index
 *
 * Context: any.
 * Return: a channel, or NULL if the engine has none.
 */
struct dma_chan *scif_dma_pick(int numa, unsigned int idx)
{
	unsigned int i, near = 0;

	for (i = 0; numa != NUMA_NO_NODE && i < scif_dma_nr; i++)
		near += dev_to_node(scif_dma_pool[i]->device->dev) == numa;
	if (!near)
		return scif_dma_nr ? scif_dma_pool[idx % scif_dma_nr] : NULL;
	idx %= near;
	for (i = 0; i < scif_dma_nr; i++) {
		if (dev_to_node(scif_dma_pool[i]->device->dev) != numa)
			continue;
		if (!idx--)
			break;
	}
	return scif_dma_pool[i];
}

/**
 * scif_dma_min() - the shortest copy worth a DMA transfer
 *
 * Context: any.
 * Return: the dma_min parameter, in bytes (at least 1).
 */
u64 scif_dma_min(void)
{
	return max(READ_ONCE(scif_dma_min_len), 1U);
}

/**
 * scif_dma_batch_start() - a batch for pieces on a channel
 * @chan: the channel (from scif_dma_pick())
 *
 * Context: process context; may sleep.
 * Return: the batch, or NULL (out of memory: copy with the CPU).
 */
struct scif_dma_batch *scif_dma_batch_start(struct dma_chan *chan)
{
	struct scif_dma_batch *b;

	b = kmalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return NULL;
	b->chan = chan;
	b->dev = chan->device->dev;
	b->nr_maps = 0;
	atomic_set(&b->pending, 1);
	atomic_set(&b->completed, 0);
	b->failed = false;
	init_completion(&b->done);
	return b;
}

static void scif_dma_piece_done(void *param,
				const struct dmaengine_result *res)
{
	struct scif_dma_batch *b = param;

	if (res && res->result != DMA_TRANS_NOERROR)
		WRITE_ONCE(b->failed, true);
	atomic_inc(&b->completed);
	if (atomic_dec_and_test(&b->pending))
		complete(&b->done);
}

/* Map @len bytes at @phys for the channel; false if it cannot be. */
static bool scif_dma_map(struct scif_dma_batch *b, phys_addr_t phys,
			 size_t len, enum dma_data_direction dir)
{
	struct scif_dma_map *m = &b->maps[b->nr_maps];

	/* dma_map_resource() refuses RAM: that is mapped as pages. */
	m->resource = !pfn_valid(PHYS_PFN(phys));
	if (m->resource)
		m->addr = dma_map_resource(b->dev, phys, len, dir, 0);
	else
		m->addr = dma_map_page(b->dev, pfn_to_page(PHYS_PFN(phys)),
				       offset_in_page(phys), len, dir);
	if (dma_mapping_error(b->dev, m->addr))
		return false;
	m->len = len;
	m->dir = dir;
	b->nr_maps++;
	return true;
}

static void scif_dma_unmap(struct scif_dma_batch *b, struct scif_dma_map *m)
{
	if (m->resource)
		dma_unmap_resource(b->dev, m->addr, m->len, m->dir, 0);
	else
		dma_unmap_page(b->dev, m->addr, m->len, m->dir);
}

/* Unmap the last @n mappings (a piece that was not submitted). */
static void scif_dma_unmap_last(struct scif_dma_batch *b, unsigned int n)
{
	while (n--)
		scif_dma_unmap(b, &b->maps[--b->nr_maps]);
}

/**
 * scif_dma_batch_add() - copy a piece by DMA
 * @b: the batch
 * @dst: physical address of the destination
 * @src: physical address of the source
 * @len: bytes; both ranges are physically contiguous
 *
 * The piece is submitted; it is complete once scif_dma_batch_finish()
 * returns.
 *
 * Context: process context; may sleep.
 * Return: 0; -ENOSPC if the batch is full (finish it, start another);
 * -EIO if the piece could not be submitted (copy it with the CPU).
 */
int scif_dma_batch_add(struct scif_dma_batch *b, phys_addr_t dst,
		       phys_addr_t src, size_t len)
{
	struct dma_async_tx_descriptor *tx;
	dma_cookie_t cookie;

	if (b->nr_maps + 2 > ARRAY_SIZE(b->maps))
		return -ENOSPC;
	if (!scif_dma_map(b, src, len, DMA_TO_DEVICE))
		goto refused;
	if (!scif_dma_map(b, dst, len, DMA_FROM_DEVICE)) {
		scif_dma_unmap_last(b, 1);
		goto refused;
	}
	tx = dmaengine_prep_dma_memcpy(b->chan, b->maps[b->nr_maps - 1].addr,
				       b->maps[b->nr_maps - 2].addr, len,
				       DMA_PREP_INTERRUPT);
	if (!tx)
		goto unmap;
	tx->callback_result = scif_dma_piece_done;
	tx->callback_param = b;
	atomic_inc(&b->pending);
	cookie = dmaengine_submit(tx);
	if (dma_submit_error(cookie)) {
		/* Not submitted: its callback will not run. */
		atomic_dec(&b->pending);
		goto unmap;
	}
	dma_async_issue_pending(b->chan);
	atomic64_add(len, &scif_dma_bytes);
	atomic64_inc(&scif_dma_pieces);
	return 0;

unmap:
	scif_dma_unmap_last(b, 2);
refused:
	atomic64_inc(&scif_dma_refused);
	return -EIO;
}

/*
 * Wait for the batch's pieces.  A channel that completes nothing for
 * SCIF_DMA_STALL is stopped, which drops what it still holds (other
 * batches on it then fail as well).
 */
static bool scif_dma_wait(struct scif_dma_batch *b)
{
	int seen;

	if (atomic_dec_and_test(&b->pending))
		return true;
	do {
		seen = atomic_read(&b->completed);
		if (wait_for_completion_timeout(&b->done, SCIF_DMA_STALL))
			return true;
	} while (atomic_read(&b->completed) != seen);
	pr_err_ratelimited("DMA channel %s completed nothing for %u s: stopped\n",
			   dma_chan_name(b->chan), SCIF_DMA_STALL / HZ);
	dmaengine_terminate_sync(b->chan);
	return false;
}

/**
 * scif_dma_batch_finish() - wait for a batch, unmap it and free it
 * @b: the batch (from scif_dma_batch_start())
 *
 * Context: process context; sleeps until the channel has completed the
 * batch's pieces.
 * Return: 0, or -EIO if a piece failed (what it copied is undefined).
 */
int scif_dma_batch_finish(struct scif_dma_batch *b)
{
	bool ok = scif_dma_wait(b) && !READ_ONCE(b->failed);
	unsigned int i;

	for (i = 0; i < b->nr_maps; i++)
		scif_dma_unmap(b, &b->maps[i]);
	kfree(b);
	if (ok)
		return 0;
	atomic64_inc(&scif_dma_failed);
	return -EIO;
}

/**
 * scif_dma_show() - the DMA figures, for <debugfs>/scif/rma
 * @s: the file
 *
 * Context: process context (a seq_file show).
 */
void scif_dma_show(struct seq_file *s)
{
	unsigned int i;

	seq_printf(s, "dma %u\ndma_channels", scif_dma_nr);
	for (i = 0; i < scif_dma_nr; i++)
		seq_printf(s, " %s", dma_chan_name(scif_dma_pool[i]));
	seq_putc(s, '\n');
	seq_printf(s, "dma_bytes %lld\ndma_pieces %lld\n",
		   (long long)atomic64_read(&scif_dma_bytes),
		   (long long)atomic64_read(&scif_dma_pieces));
	seq_printf(s, "dma_refused %lld\ndma_failed %lld\n",
		   (long long)atomic64_read(&scif_dma_refused),
		   (long long)atomic64_read(&scif_dma_failed));
}

/**
 * scif_dma_init() - take the copy engine's DMA channels
 *
 * None is not an error: the CPU copies then.
 *
 * Context: module init.
 */
void scif_dma_init(void)
{
	unsigned int want = min(scif_dma_channels, SCIF_DMA_MAX_CHANNELS);
	dma_cap_mask_t mask;
	struct dma_chan *chan;

	dma_cap_zero(mask);
	dma_cap_set(DMA_MEMCPY, mask);
	while (scif_dma_nr < want) {
		chan = dma_request_chan_by_mask(&mask);
		if (IS_ERR(chan))
			break;
		scif_dma_pool[scif_dma_nr++] = chan;
	}
	if (scif_dma_nr)
		pr_info("copy engine: %u DMA channel(s), first %s\n",
			scif_dma_nr, dma_chan_name(scif_dma_pool[0]));
}

/**
 * scif_dma_exit() - release the channels
 *
 * Context: module exit, once no copy is left.
 */
void scif_dma_exit(void)
{
	while (scif_dma_nr)
		dma_release_channel(scif_dma_pool[--scif_dma_nr]);
}
