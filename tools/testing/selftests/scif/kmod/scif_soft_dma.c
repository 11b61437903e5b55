// SPDX-License-Identifier: GPL-2.0
/*
 * scif_soft_dma: a dmaengine provider whose "hardware" is a CPU.
 *
 * Test-only.  QEMU has no memcpy-capable DMA engine for x86 guests, so
 * the dmaengine path of SCIF's copy engine (and the kernel's dmatest)
 * needs something to run on.  This module registers a platform device
 * and a DMA_MEMCPY dma_device with "channels" channels.  Descriptors
 * complete asynchronously: issue_pending queues a per-channel work item
 * that copies the issued descriptors in order, completes their cookies
 * and calls their callbacks.
 *
 * The addresses it is given are DMA addresses of its own device; in the
 * guests (no IOMMU, dma-direct) they are physical addresses.  System RAM
 * is reached page by page through kmap_local_page(), anything else (a
 * PCI BAR such as ivshmem's aperture) through a write-combining
 * memremap().
 *
 * Faults are injected through writable parameters (fail_every,
 * delay_ms, max_desc) and what happened is counted in read-only ones;
 * see Documentation/scif/soft-dma.rst.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/dmaengine.h>
#include <linux/highmem.h>
#include <linux/io.h>
#include <linux/jiffies.h>
#include <linux/ioport.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/platform_device.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/workqueue.h>

#define SDMA_NAME		"scif_soft_dma"
#define SDMA_MAX_CHANNELS	16

static unsigned int channels = 4;
module_param(channels, uint, 0444);
MODULE_PARM_DESC(channels, "DMA_MEMCPY channels to register, 1..16 (default 4)");

static unsigned int fail_every;
module_param(fail_every, uint, 0644);
MODULE_PARM_DESC(fail_every,
		 "Every Nth descriptor run copies only half its bytes and completes with DMA_TRANS_ABORTED (0: never)");

static unsigned int delay_ms;
module_param(delay_ms, uint, 0644);
MODULE_PARM_DESC(delay_ms, "Milliseconds each descriptor waits before it is run (default 0)");

static unsigned int max_desc;
module_param(max_desc, uint, 0644);
MODULE_PARM_DESC(max_desc,
		 "Most descriptors prepared and not yet finished per channel; prep fails beyond (0: unlimited)");

/* Counters, read-only parameters: all channels together since load. */
static atomic_long_t stat_completed;
static atomic_long_t stat_bytes;
static atomic_long_t stat_io_bytes;
static atomic_long_t stat_failed;
static atomic_long_t stat_refused;
static atomic_long_t stat_terminated;

static int sdma_get_counter(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(kp->arg));
}

static const struct kernel_param_ops sdma_counter_ops = {
	.get = sdma_get_counter,
};

module_param_cb(completed, &sdma_counter_ops, &stat_completed, 0444);
MODULE_PARM_DESC(completed, "Descriptors completed, with or without error (read-only)");
module_param_cb(bytes_copied, &sdma_counter_ops, &stat_bytes, 0444);
MODULE_PARM_DESC(bytes_copied, "Bytes copied (read-only)");
module_param_cb(io_bytes_copied, &sdma_counter_ops, &stat_io_bytes, 0444);
MODULE_PARM_DESC(io_bytes_copied, "Bytes of those copied to or from memory that is not RAM (read-only)");
module_param_cb(failed, &sdma_counter_ops, &stat_failed, 0444);
MODULE_PARM_DESC(failed, "Descriptors completed with an error, injected or not (read-only)");
module_param_cb(prep_refused, &sdma_counter_ops, &stat_refused, 0444);
MODULE_PARM_DESC(prep_refused, "Descriptors refused by prep because of max_desc (read-only)");
module_param_cb(terminated, &sdma_counter_ops, &stat_terminated, 0444);
MODULE_PARM_DESC(terminated, "Descriptors dropped by terminate_all or channel release (read-only)");

struct sdma_desc {
	struct dma_async_tx_descriptor tx;
	struct list_head node;
	dma_addr_t dst;
	dma_addr_t src;
	size_t len;
};

/*
 * A descriptor is on one list at a time: prepared (not yet submitted),
 * submitted (cookie assigned, not yet issued) or issued (waiting for the
 * work item); the work item takes it off as it runs it (active).
 */
struct sdma_chan {
	struct dma_chan chan;
	spinlock_t lock;		/* the lists, the cookies, outstanding */
	struct list_head prepared;
	struct list_head submitted;
	struct list_head issued;
	struct sdma_desc *active;
	bool active_dropped;		/* terminated while it ran */
	unsigned int outstanding;	/* prepared and not yet freed */
	dma_cookie_t failed_cookie;	/* latest cookie completed in error */
	struct work_struct work;
};

struct sdma_device {
	struct dma_device dma;
	struct sdma_chan chans[SDMA_MAX_CHANNELS];
};

static struct workqueue_struct *sdma_wq;
static struct platform_device *sdma_pdev;
static struct sdma_device *sdma;
static atomic_long_t sdma_runs;

static struct sdma_chan *to_sdma_chan(struct dma_chan *chan)
{
	return container_of(chan, struct sdma_chan, chan);
}

static struct sdma_desc *to_sdma_desc(struct dma_async_tx_descriptor *tx)
{
	return container_of(tx, struct sdma_desc, tx);
}

/* ---- The copy ---- */

/*
 * One side of a copy: either all of it lies outside System RAM and is
 * mapped once (io), or it is mapped page by page, each page by
 * kmap_local_page() when it is RAM and by memremap() when it is not
 * (asked of each page only when the side is partly RAM).
 */
struct sdma_side {
	phys_addr_t addr;
	void *io;
	bool per_page;
	bool all_ram;
	void *map;		/* the mapping of the current chunk */
	bool map_is_io;
	bool is_dst;
};

static int sdma_side_open(struct sdma_side *s, phys_addr_t addr, size_t len,
			  bool is_dst)
{
	int region;

	s->addr = addr;
	s->io = NULL;
	s->map = NULL;
	s->is_dst = is_dst;
	region = region_intersects(addr, len, IORESOURCE_SYSTEM_RAM,
				   IORES_DESC_NONE);
	s->all_ram = region == REGION_INTERSECTS;
	s->per_page = region != REGION_DISJOINT;
	if (s->per_page)
		return 0;
	s->io = memremap(addr, len, MEMREMAP_WC);
	return s->io ? 0 : -EFAULT;
}

static void sdma_side_close(struct sdma_side *s)
{
	if (s->io) {
		if (s->is_dst)
			wmb();	/* drain the write-combining buffers */
		memunmap(s->io);
	}
}

static bool sdma_pfn_is_ram(const struct sdma_side *s, unsigned long pfn)
{
	return pfn_valid(pfn) && (s->all_ram || page_is_ram(pfn));
}

/* Bytes from @off that one mapping of this side can cover, at most @max. */
static size_t sdma_side_span(const struct sdma_side *s, size_t off, size_t max)
{
	if (!s->per_page)
		return max;
	return min_t(size_t, max, PAGE_SIZE - offset_in_page(s->addr + off));
}

static void *sdma_side_map(struct sdma_side *s, size_t off, size_t len)
{
	phys_addr_t pa = s->addr + off;
	unsigned long pfn = PHYS_PFN(pa);

	if (!s->per_page)
		return s->io + off;
	s->map_is_io = !sdma_pfn_is_ram(s, pfn);
	if (s->map_is_io)
		s->map = memremap(pa, len, MEMREMAP_WC);
	else
		s->map = kmap_local_page(pfn_to_page(pfn)) + offset_in_page(pa);
	return s->map;
}

static void sdma_side_unmap(struct sdma_side *s)
{
	if (!s->per_page || !s->map)
		return;
	if (s->map_is_io) {
		if (s->is_dst)
			wmb();	/* as in sdma_side_close() */
		memunmap(s->map);
	} else {
		kunmap_local(s->map);
	}
	s->map = NULL;
}

static bool sdma_side_is_io(const struct sdma_side *s)
{
	return s->io || (s->map && s->map_is_io);
}

/*
 * Copy @len bytes from DMA address @src to DMA address @dst.  Returns
 * the bytes copied; on a mapping failure *result says which side failed.
 */
static size_t sdma_copy(dma_addr_t dst, dma_addr_t src, size_t len,
			enum dmaengine_tx_result *result)
{
	struct sdma_side d, s;
	size_t done = 0, io = 0;

	if (!len)
		return 0;
	if (sdma_side_open(&d, dst, len, true)) {
		*result = DMA_TRANS_WRITE_FAILED;
		return 0;
	}
	if (sdma_side_open(&s, src, len, false)) {
		sdma_side_close(&d);
		*result = DMA_TRANS_READ_FAILED;
		return 0;
	}
	while (done < len) {
		size_t n = sdma_side_span(&d, done, len - done);
		void *to, *from;

		n = sdma_side_span(&s, done, n);
		to = sdma_side_map(&d, done, n);
		if (!to) {
			*result = DMA_TRANS_WRITE_FAILED;
			break;
		}
		from = sdma_side_map(&s, done, n);
		if (!from) {
			sdma_side_unmap(&d);
			*result = DMA_TRANS_READ_FAILED;
			break;
		}
		memcpy(to, from, n);
		if (sdma_side_is_io(&d) || sdma_side_is_io(&s))
			io += n;
		/* kmap_local mappings are released in reverse order */
		sdma_side_unmap(&s);
		sdma_side_unmap(&d);
		done += n;
		cond_resched();
	}
	sdma_side_close(&s);
	sdma_side_close(&d);
	atomic_long_add(done, &stat_bytes);
	atomic_long_add(io, &stat_io_bytes);
	return done;
}

/* ---- Descriptors and the channel work ---- */

static void sdma_free_desc(struct sdma_chan *sc, struct sdma_desc *d)
{
	unsigned long flags;

	spin_lock_irqsave(&sc->lock, flags);
	sc->outstanding--;
	spin_unlock_irqrestore(&sc->lock, flags);
	kfree(d);
}

/* Drop descriptors taken off the lists: no cookie completes, no callback. */
static void sdma_drop_list(struct sdma_chan *sc, struct list_head *list)
{
	struct sdma_desc *d, *tmp;

	list_for_each_entry_safe(d, tmp, list, node) {
		list_del(&d->node);
		dma_descriptor_unmap(&d->tx);
		atomic_long_inc(&stat_terminated);
		sdma_free_desc(sc, d);
	}
}

static void sdma_callback(struct sdma_desc *d,
			  const struct dmaengine_result *res)
{
	struct dma_async_tx_descriptor *tx = &d->tx;

	if (tx->callback_result)
		tx->callback_result(tx->callback_param, res);
	else if (tx->callback)
		tx->callback(tx->callback_param);
}

static void sdma_run(struct sdma_chan *sc, struct sdma_desc *d)
{
	struct dmaengine_result res = { .result = DMA_TRANS_NOERROR };
	unsigned int every = READ_ONCE(fail_every);
	unsigned int ms = READ_ONCE(delay_ms);
	size_t todo = d->len, done;
	unsigned long flags;
	bool dropped;

	if (ms)
		msleep(ms);
	if (every && atomic_long_inc_return(&sdma_runs) % every == 0) {
		todo = d->len / 2;
		res.result = DMA_TRANS_ABORTED;
	}
	done = sdma_copy(d->dst, d->src, todo, &res.result);
	res.residue = d->len - done;
	if (res.residue && res.result == DMA_TRANS_NOERROR)
		res.result = DMA_TRANS_ABORTED;

	spin_lock_irqsave(&sc->lock, flags);
	dropped = sc->active_dropped;
	sc->active = NULL;
	sc->active_dropped = false;
	if (!dropped) {
		sc->chan.completed_cookie = d->tx.cookie;
		if (res.result != DMA_TRANS_NOERROR)
			sc->failed_cookie = d->tx.cookie;
	}
	spin_unlock_irqrestore(&sc->lock, flags);

	if (dropped) {
		atomic_long_inc(&stat_terminated);
	} else {
		atomic_long_inc(&stat_completed);
		if (res.result != DMA_TRANS_NOERROR)
			atomic_long_inc(&stat_failed);
		sdma_callback(d, &res);
		dma_run_dependencies(&d->tx);
	}
	dma_descriptor_unmap(&d->tx);
	sdma_free_desc(sc, d);
}

static void sdma_work(struct work_struct *work)
{
	struct sdma_chan *sc = container_of(work, struct sdma_chan, work);
	struct sdma_desc *d;
	unsigned long flags;

	for (;;) {
		spin_lock_irqsave(&sc->lock, flags);
		d = list_first_entry_or_null(&sc->issued, struct sdma_desc,
					     node);
		if (d) {
			list_del(&d->node);
			sc->active = d;
		}
		spin_unlock_irqrestore(&sc->lock, flags);
		if (!d)
			return;
		sdma_run(sc, d);
		cond_resched();
	}
}

/* ---- dmaengine operations ---- */

static dma_cookie_t sdma_tx_submit(struct dma_async_tx_descriptor *tx)
{
	struct sdma_chan *sc = to_sdma_chan(tx->chan);
	struct sdma_desc *d = to_sdma_desc(tx);
	unsigned long flags;
	dma_cookie_t cookie;

	spin_lock_irqsave(&sc->lock, flags);
	cookie = sc->chan.cookie + 1;
	if (cookie < DMA_MIN_COOKIE)
		cookie = DMA_MIN_COOKIE;
	sc->chan.cookie = cookie;
	tx->cookie = cookie;
	list_move_tail(&d->node, &sc->submitted);
	spin_unlock_irqrestore(&sc->lock, flags);
	return cookie;
}

static struct dma_async_tx_descriptor *
sdma_prep_memcpy(struct dma_chan *chan, dma_addr_t dst, dma_addr_t src,
		 size_t len, unsigned long flags)
{
	struct sdma_chan *sc = to_sdma_chan(chan);
	unsigned int limit = READ_ONCE(max_desc);
	struct sdma_desc *d;
	unsigned long irqflags;

	spin_lock_irqsave(&sc->lock, irqflags);
	if (limit && sc->outstanding >= limit) {
		spin_unlock_irqrestore(&sc->lock, irqflags);
		atomic_long_inc(&stat_refused);
		return NULL;
	}
	sc->outstanding++;
	spin_unlock_irqrestore(&sc->lock, irqflags);

	/* prep may be called in atomic context */
	d = kzalloc(sizeof(*d), GFP_NOWAIT);
	if (!d) {
		spin_lock_irqsave(&sc->lock, irqflags);
		sc->outstanding--;
		spin_unlock_irqrestore(&sc->lock, irqflags);
		return NULL;
	}
	dma_async_tx_descriptor_init(&d->tx, chan);
	d->tx.flags = flags;
	d->tx.tx_submit = sdma_tx_submit;
	d->dst = dst;
	d->src = src;
	d->len = len;

	spin_lock_irqsave(&sc->lock, irqflags);
	list_add_tail(&d->node, &sc->prepared);
	spin_unlock_irqrestore(&sc->lock, irqflags);
	return &d->tx;
}

static void sdma_issue_pending(struct dma_chan *chan)
{
	struct sdma_chan *sc = to_sdma_chan(chan);
	unsigned long flags;
	bool kick;

	spin_lock_irqsave(&sc->lock, flags);
	list_splice_tail_init(&sc->submitted, &sc->issued);
	kick = !list_empty(&sc->issued);
	spin_unlock_irqrestore(&sc->lock, flags);
	if (kick)
		queue_work(sdma_wq, &sc->work);
}

static enum dma_status sdma_tx_status(struct dma_chan *chan,
				      dma_cookie_t cookie,
				      struct dma_tx_state *state)
{
	struct sdma_chan *sc = to_sdma_chan(chan);
	dma_cookie_t last, used, failed;
	enum dma_status status;
	unsigned long flags;

	spin_lock_irqsave(&sc->lock, flags);
	last = chan->completed_cookie;
	used = chan->cookie;
	failed = sc->failed_cookie;
	spin_unlock_irqrestore(&sc->lock, flags);

	status = dma_async_is_complete(cookie, last, used);
	dma_set_tx_state(state, last, used, 0);
	if (status == DMA_COMPLETE && cookie == failed)
		status = DMA_ERROR;
	return status;
}

/*
 * Drop what is submitted or issued; a descriptor being copied finishes
 * its copy but neither completes nor calls back.  May be called in
 * atomic context (from a callback, say).
 */
static int sdma_terminate_all(struct dma_chan *chan)
{
	struct sdma_chan *sc = to_sdma_chan(chan);
	unsigned long flags;
	LIST_HEAD(drop);

	spin_lock_irqsave(&sc->lock, flags);
	list_splice_tail_init(&sc->submitted, &drop);
	list_splice_tail_init(&sc->issued, &drop);
	if (sc->active)
		sc->active_dropped = true;
	spin_unlock_irqrestore(&sc->lock, flags);
	sdma_drop_list(sc, &drop);
	return 0;
}

/* After terminate_all: wait until no callback of this channel runs. */
static void sdma_synchronize(struct dma_chan *chan)
{
	flush_work(&to_sdma_chan(chan)->work);
}

static int sdma_alloc_chan_resources(struct dma_chan *chan)
{
	return 0;
}

static void sdma_free_chan_resources(struct dma_chan *chan)
{
	struct sdma_chan *sc = to_sdma_chan(chan);
	unsigned long flags;
	LIST_HEAD(drop);

	sdma_terminate_all(chan);
	sdma_synchronize(chan);
	/* Prepared and never submitted: the client gave up on them. */
	spin_lock_irqsave(&sc->lock, flags);
	list_splice_tail_init(&sc->prepared, &drop);
	spin_unlock_irqrestore(&sc->lock, flags);
	sdma_drop_list(sc, &drop);
	WARN_ON(sc->outstanding);
}

/* ---- A round trip through memory that is not RAM (mmio_test) ---- */

static DEFINE_MUTEX(sdma_test_lock);

static bool sdma_filter(struct dma_chan *chan, void *param)
{
	return chan->device == param;
}

/*
 * Copy a known pattern from RAM to @pa, back from @pa into other RAM,
 * through one of our channels as a dmaengine client, and compare.  The
 * addresses are unaligned and the length crosses pages at both ends.
 */
static int sdma_mmio_roundtrip(phys_addr_t pa, size_t len)
{
	unsigned int order = get_order(len + PAGE_SIZE);
	struct device *dev = &sdma_pdev->dev;
	struct dma_async_tx_descriptor *tx;
	dma_addr_t a_dma, b_dma;
	dma_cookie_t c1, c2;
	dma_cap_mask_t mask;
	struct dma_chan *chan;
	u8 *a, *b;
	size_t i;
	int ret = -ENOMEM;

	a = (u8 *)__get_free_pages(GFP_KERNEL, order);
	b = (u8 *)__get_free_pages(GFP_KERNEL | __GFP_ZERO, order);
	if (!a || !b)
		goto out_free;
	for (i = 0; i < len; i++)
		a[i + 100] = (u8)(i * 7 + (i >> 12));

	dma_cap_zero(mask);
	dma_cap_set(DMA_MEMCPY, mask);
	chan = dma_request_channel(mask, sdma_filter, &sdma->dma);
	ret = -EBUSY;
	if (!chan)
		goto out_free;

	a_dma = dma_map_single(dev, a + 100, len, DMA_TO_DEVICE);
	b_dma = dma_map_single(dev, b + 200, len, DMA_FROM_DEVICE);
	ret = -ENOMEM;
	if (dma_mapping_error(dev, a_dma) || dma_mapping_error(dev, b_dma))
		goto out_unmap;

	ret = -EIO;
	tx = dmaengine_prep_dma_memcpy(chan, pa, a_dma, len, 0);
	if (!tx)
		goto out_unmap;
	c1 = dmaengine_submit(tx);
	tx = dmaengine_prep_dma_memcpy(chan, b_dma, pa, len, 0);
	if (!tx) {
		dmaengine_terminate_sync(chan);
		goto out_unmap;
	}
	c2 = dmaengine_submit(tx);
	if (dma_sync_wait(chan, c2) != DMA_COMPLETE ||
	    dma_async_is_tx_complete(chan, c1, NULL, NULL) != DMA_COMPLETE) {
		dmaengine_terminate_sync(chan);
		goto out_unmap;
	}
	ret = 0;
out_unmap:
	if (!dma_mapping_error(dev, b_dma))
		dma_unmap_single(dev, b_dma, len, DMA_FROM_DEVICE);
	if (!dma_mapping_error(dev, a_dma))
		dma_unmap_single(dev, a_dma, len, DMA_TO_DEVICE);
	dma_release_channel(chan);
	if (!ret && memcmp(a + 100, b + 200, len))
		ret = -EIO;
out_free:
	free_pages((unsigned long)b, order);
	free_pages((unsigned long)a, order);
	return ret;
}

static int sdma_mmio_test_set(const char *val, const struct kernel_param *kp)
{
	u64 pa;
	int ret;

	ret = kstrtou64(val, 0, &pa);
	if (ret)
		return ret;
	/* Only memory that is not RAM: writing RAM here would corrupt it. */
	if (region_intersects(pa, SZ_1M + 5000, IORESOURCE_SYSTEM_RAM,
			      IORES_DESC_NONE) != REGION_DISJOINT)
		return -EINVAL;
	mutex_lock(&sdma_test_lock);
	ret = sdma_mmio_roundtrip(pa, SZ_1M + 5000);
	mutex_unlock(&sdma_test_lock);
	return ret;
}

static const struct kernel_param_ops sdma_mmio_test_ops = {
	.set = sdma_mmio_test_set,
};

module_param_cb(mmio_test, &sdma_mmio_test_ops, NULL, 0200);
MODULE_PARM_DESC(mmio_test,
		 "Write a physical address outside RAM (a PCI BAR): copy 1 MiB + 5000 bytes there and back through a channel and compare; the write fails if they differ");

/* ---- terminate_all drops what is queued (terminate_test) ---- */

#define SDMA_TT_DESCS	16

static void sdma_tt_callback(void *param)
{
	atomic_inc(param);
}

/*
 * Submit 16 copies of 256 KiB on one channel, issue the first 8 only,
 * wait for the first callback, then dmaengine_terminate_sync(): the 8
 * never issued and whatever was not yet run must be dropped (no
 * callback, cookie not complete), no callback may come after the call,
 * and the channel must still work.
 */
static int sdma_terminate_check(void)
{
	size_t len = SZ_256K;
	unsigned int order = get_order(len);
	struct device *dev = &sdma_pdev->dev;
	dma_cookie_t cookies[SDMA_TT_DESCS], cookie;
	struct dma_async_tx_descriptor *tx;
	long terminated0, dropped;
	unsigned long timeout;
	dma_addr_t a_dma, b_dma;
	dma_cap_mask_t mask;
	struct dma_chan *chan;
	atomic_t calls;
	int i, called, ret = -ENOMEM;
	void *a, *b;

	a = (void *)__get_free_pages(GFP_KERNEL | __GFP_ZERO, order);
	b = (void *)__get_free_pages(GFP_KERNEL, order);
	if (!a || !b)
		goto out_free;
	dma_cap_zero(mask);
	dma_cap_set(DMA_MEMCPY, mask);
	chan = dma_request_channel(mask, sdma_filter, &sdma->dma);
	ret = -EBUSY;
	if (!chan)
		goto out_free;
	a_dma = dma_map_single(dev, a, len, DMA_TO_DEVICE);
	b_dma = dma_map_single(dev, b, len, DMA_FROM_DEVICE);
	ret = -ENOMEM;
	if (dma_mapping_error(dev, a_dma) || dma_mapping_error(dev, b_dma))
		goto out_unmap;

	atomic_set(&calls, 0);
	terminated0 = atomic_long_read(&stat_terminated);
	ret = -EIO;
	for (i = 0; i < SDMA_TT_DESCS; i++) {
		tx = dmaengine_prep_dma_memcpy(chan, b_dma, a_dma, len,
					       DMA_PREP_INTERRUPT);
		if (!tx)
			break;
		tx->callback = sdma_tt_callback;
		tx->callback_param = &calls;
		cookies[i] = dmaengine_submit(tx);
		if (i == SDMA_TT_DESCS / 2 - 1) {
			dma_async_issue_pending(chan);
			/* terminate while the issued ones run */
			timeout = jiffies + 2 * HZ;
			while (!atomic_read(&calls) &&
			       time_before(jiffies, timeout))
				usleep_range(100, 200);
		}
	}
	/* Also the way out when a prep failed: no callback may follow. */
	dmaengine_terminate_sync(chan);
	if (i < SDMA_TT_DESCS)
		goto out_unmap;
	called = atomic_read(&calls);
	dropped = atomic_long_read(&stat_terminated) - terminated0;
	msleep(50);
	if (atomic_read(&calls) != called) {
		pr_err("terminate_test: a callback after terminate_sync\n");
		goto out_unmap;
	}
	if (!called || dropped < SDMA_TT_DESCS / 2 ||
	    called + dropped != SDMA_TT_DESCS) {
		pr_err("terminate_test: %d called back, %ld dropped of %d\n",
		       called, dropped, SDMA_TT_DESCS);
		goto out_unmap;
	}
	if (dma_async_is_tx_complete(chan, cookies[SDMA_TT_DESCS - 1],
				     NULL, NULL) == DMA_COMPLETE) {
		pr_err("terminate_test: a dropped cookie is complete\n");
		goto out_unmap;
	}
	/* The channel goes on working. */
	tx = dmaengine_prep_dma_memcpy(chan, b_dma, a_dma, len, 0);
	if (!tx)
		goto out_unmap;
	cookie = dmaengine_submit(tx);
	if (dma_sync_wait(chan, cookie) != DMA_COMPLETE) {
		dmaengine_terminate_sync(chan);
		goto out_unmap;
	}
	ret = 0;
out_unmap:
	if (!dma_mapping_error(dev, b_dma))
		dma_unmap_single(dev, b_dma, len, DMA_FROM_DEVICE);
	if (!dma_mapping_error(dev, a_dma))
		dma_unmap_single(dev, a_dma, len, DMA_TO_DEVICE);
	dma_release_channel(chan);
out_free:
	free_pages((unsigned long)b, order);
	free_pages((unsigned long)a, order);
	return ret;
}

static int sdma_terminate_test_set(const char *val,
				   const struct kernel_param *kp)
{
	int ret;

	mutex_lock(&sdma_test_lock);
	ret = sdma_terminate_check();
	mutex_unlock(&sdma_test_lock);
	return ret;
}

static const struct kernel_param_ops sdma_terminate_test_ops = {
	.set = sdma_terminate_test_set,
};

module_param_cb(terminate_test, &sdma_terminate_test_ops, NULL, 0200);
MODULE_PARM_DESC(terminate_test,
		 "Write anything: check on one channel that terminate_sync drops what is queued, calls back none of it, and the channel works on; the write fails if not");

/* ---- Device, driver, module ---- */

static int sdma_probe(struct platform_device *pdev)
{
	struct dma_device *dd;
	unsigned int i;
	int ret;

	ret = dma_coerce_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
	sdma = kzalloc(sizeof(*sdma), GFP_KERNEL);
	if (!sdma)
		return -ENOMEM;
	dd = &sdma->dma;
	dma_cap_set(DMA_MEMCPY, dd->cap_mask);
	/* Only for clients that ask for a channel: never async_tx's pick. */
	dma_cap_set(DMA_PRIVATE, dd->cap_mask);
	dd->dev = &pdev->dev;
	dd->copy_align = DMAENGINE_ALIGN_1_BYTE;
	dd->residue_granularity = DMA_RESIDUE_GRANULARITY_DESCRIPTOR;
	dd->device_alloc_chan_resources = sdma_alloc_chan_resources;
	dd->device_free_chan_resources = sdma_free_chan_resources;
	dd->device_prep_dma_memcpy = sdma_prep_memcpy;
	dd->device_issue_pending = sdma_issue_pending;
	dd->device_tx_status = sdma_tx_status;
	dd->device_terminate_all = sdma_terminate_all;
	dd->device_synchronize = sdma_synchronize;
	INIT_LIST_HEAD(&dd->channels);
	for (i = 0; i < channels; i++) {
		struct sdma_chan *sc = &sdma->chans[i];

		spin_lock_init(&sc->lock);
		INIT_LIST_HEAD(&sc->prepared);
		INIT_LIST_HEAD(&sc->submitted);
		INIT_LIST_HEAD(&sc->issued);
		INIT_WORK(&sc->work, sdma_work);
		sc->chan.device = dd;
		sc->chan.cookie = DMA_MIN_COOKIE;
		sc->chan.completed_cookie = DMA_MIN_COOKIE;
		list_add_tail(&sc->chan.device_node, &dd->channels);
	}
	ret = dma_async_device_register(dd);
	if (ret) {
		kfree(sdma);
		sdma = NULL;
		return ret;
	}
	dev_info(&pdev->dev, "%u memcpy channels\n", channels);
	return 0;
}

/*
 * No .remove (its type differs between 6.1 and 6.12): the module's exit
 * unregisters the dma_device before the platform device, and sysfs
 * cannot unbind the driver.
 */
static struct platform_driver sdma_driver = {
	.probe = sdma_probe,
	.driver = {
		.name = SDMA_NAME,
		.suppress_bind_attrs = true,
	},
};

static void sdma_teardown(void)
{
	unsigned int i;

	if (!sdma)
		return;
	/* Channels are released (module references held by clients). */
	dma_async_device_unregister(&sdma->dma);
	for (i = 0; i < channels; i++)
		flush_work(&sdma->chans[i].work);
	kfree(sdma);
	sdma = NULL;
}

static int __init sdma_init(void)
{
	int ret;

	if (!channels || channels > SDMA_MAX_CHANNELS) {
		pr_err("channels must be 1..%d\n", SDMA_MAX_CHANNELS);
		return -EINVAL;
	}
	sdma_wq = alloc_workqueue(SDMA_NAME, WQ_UNBOUND, 0);
	if (!sdma_wq)
		return -ENOMEM;
	ret = platform_driver_register(&sdma_driver);
	if (ret)
		goto err_wq;
	sdma_pdev = platform_device_register_simple(SDMA_NAME, -1, NULL, 0);
	if (IS_ERR(sdma_pdev)) {
		ret = PTR_ERR(sdma_pdev);
		goto err_driver;
	}
	if (!sdma) {
		/* probe failed (it said why) */
		ret = -ENODEV;
		goto err_pdev;
	}
	return 0;

err_pdev:
	platform_device_unregister(sdma_pdev);
err_driver:
	platform_driver_unregister(&sdma_driver);
err_wq:
	destroy_workqueue(sdma_wq);
	return ret;
}

static void __exit sdma_exit(void)
{
	sdma_teardown();
	platform_device_unregister(sdma_pdev);
	platform_driver_unregister(&sdma_driver);
	destroy_workqueue(sdma_wq);
}

module_init(sdma_init);
module_exit(sdma_exit);
MODULE_DESCRIPTION("Software dmaengine memcpy provider for SCIF tests");
MODULE_LICENSE("GPL");
