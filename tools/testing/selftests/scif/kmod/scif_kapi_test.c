// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of the SCIF kernel API, run from kernel context when the module
 * loads.  The results, in TAP, are read from
 * <debugfs>/scif_kapi_test/results (scif_kapi_test.sh does).
 */
#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/iommu.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/platform_device.h>
#include <linux/random.h>
#include <linux/scif.h>
#include <linux/seq_buf.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#define TEST_PORT	3001
#define CROSS_PORT	3002
#define DATA_LEN	(300 * 1024)

/*
 * Across nodes (scif_kapi_test.sh cross_peer=N on one node, cross_serve=1
 * on node N): only the cross-node test runs.
 */
static int cross_peer = -1;
module_param(cross_peer, int, 0444);
MODULE_PARM_DESC(cross_peer, "Node whose cross_serve instance to test scif_get_pages() against");
static bool cross_serve;
module_param(cross_serve, bool, 0444);

/*
 * With cross_peer or cross_serve: the node loss variant (scif_kapi_dma_
 * loss.sh): the client keeps its device mapping of the server's window
 * live, and the script unloads the bus to lose the server's node; the
 * server expects its connection to be lost rather than answered.
 */
static bool cross_loss;
module_param(cross_loss, bool, 0444);
MODULE_PARM_DESC(cross_loss, "cross_peer/cross_serve: the node is lost with a device mapping live");
/* Only test_withdrawn(), with the copy engine held back (see there). */
static bool withdrawn;
module_param(withdrawn, bool, 0444);
/* Only test_close_waits(), with the copy engine paused (see there). */
static bool close_waits;
module_param(close_waits, bool, 0444);
MODULE_PARM_DESC(cross_serve, "Serve one cross_peer instance: register a window of known bytes");
/*
 * Only the device calls (scif_lend_test.sh, this node's own function
 * bound to scif_lend): the borrow is kept until unload, and its lost()
 * calls are shown in <debugfs>/scif_kapi_test/lost for the script to
 * read after it unbinds the function.
 */
static bool lend;
module_param(lend, bool, 0444);
MODULE_PARM_DESC(lend, "Test scif_dev_list/borrow/borrow_info/return on this node's lent function");
/*
 * Only scif_register_pci() (scif_kapi_pci.sh): on the function named
 * (dddd:bb:dd.f), bound to vfio-pci by scif_devmem_test.sh, whose BAR 2
 * is QEMU's NVMe controller memory buffer.
 */
static char *pci;
module_param(pci, charp, 0444);
MODULE_PARM_DESC(pci, "Test scif_register_pci() on this PCI function's BAR 2");

static char results[8192];
static struct seq_buf out;
static int nr_tests;
static struct dentry *dir;

static void report(bool ok, const char *name, long got)
{
	nr_tests++;
	if (ok)
		seq_buf_printf(&out, "ok %d %s\n", nr_tests, name);
	else
		seq_buf_printf(&out, "not ok %d %s # got %ld\n", nr_tests,
			       name, got);
}

#define CHECK(name, cond, val) report((cond), (name), (long)(val))

struct connector {
	struct completion done;
	struct scif_port_id dst;
	scif_epd_t epd;
	int result;
};

static int connector_fn(void *data)
{
	struct connector *c = data;

	c->result = scif_connect(c->epd, &c->dst);
	complete(&c->done);
	return 0;
}

static void test_bind(void)
{
	scif_epd_t a = scif_open(), b = scif_open();
	int ret;

	CHECK("open", a && b, 0);
	if (!a || !b)
		goto out;
	ret = scif_bind(a, 0);
	CHECK("bind_auto_port", ret >= SCIF_PORT_RSVD, ret);
	ret = scif_bind(a, 5000);
	CHECK("bind_twice_einval", ret == -EINVAL, ret);
	ret = scif_bind(b, 100);
	CHECK("bind_admin_port_kernel", ret == 100, ret);
	ret = scif_listen(b, -1);
	CHECK("listen_negative_backlog_einval", ret == -EINVAL, ret);
out:
	if (a)
		scif_close(a);
	if (b)
		scif_close(b);
}

static void test_connect_errors(void)
{
	struct scif_port_id nowhere = { .node = 63, .port = TEST_PORT };
	struct scif_port_id closed = { .node = 0, .port = 4999 };
	scif_epd_t e = scif_open();
	int ret;

	if (!e) {
		CHECK("open", 0, 0);
		return;
	}
	ret = scif_connect(e, &nowhere);
	CHECK("connect_absent_node_enodev", ret == -ENODEV, ret);
	ret = scif_connect(e, &closed);
	CHECK("connect_no_listener_econnrefused", ret == -ECONNREFUSED, ret);
	scif_close(e);
}

/*
 * Connects to TEST_PORT of @node, where @lep listens; returns the
 * accepted endpoint, with the connector's in *cepd.
 */
static scif_epd_t make_pair_on(scif_epd_t lep, u16 node, scif_epd_t *cepd)
{
	struct connector c = { .dst = { .node = node, .port = TEST_PORT } };
	struct scif_port_id peer;
	struct task_struct *t;
	scif_epd_t aep = NULL;
	int ret;

	init_completion(&c.done);
	c.epd = scif_open();
	if (!c.epd)
		return NULL;
	t = kthread_run(connector_fn, &c, "scif_kapi_conn");
	if (IS_ERR(t)) {
		scif_close(c.epd);
		return NULL;
	}
	ret = scif_accept(lep, &peer, &aep, SCIF_ACCEPT_SYNC);
	wait_for_completion(&c.done);
	CHECK("accept_sync", ret == 0, ret);
	CHECK("connect_returns_port", c.result >= SCIF_PORT_RSVD, c.result);
	CHECK("accept_peer_is_connector", ret == 0 && peer.port == c.result,
	      peer.port);
	if (ret || c.result < 0) {
		if (!ret)
			scif_close(aep);
		scif_close(c.epd);
		return NULL;
	}
	*cepd = c.epd;
	return aep;
}

static scif_epd_t make_pair(scif_epd_t lep, scif_epd_t *cepd)
{
	return make_pair_on(lep, 0, cepd);
}

static void test_data(scif_epd_t a, scif_epd_t b)
{
	u8 *src = vmalloc(DATA_LEN), *dst = vzalloc(DATA_LEN);
	struct scif_pollepd pe = { .epd = b, .events = EPOLLIN };
	int i, ret;

	if (!src || !dst)
		goto out;
	for (i = 0; i < DATA_LEN; i++)
		src[i] = i * 31 + (i >> 11);
	ret = scif_poll(&pe, 1, 0);
	CHECK("poll_nothing_yet", ret == 0, ret);
	ret = scif_send(a, src, 1000, SCIF_SEND_BLOCK);
	CHECK("send_small", ret == 1000, ret);
	ret = scif_poll(&pe, 1, 1000);
	CHECK("poll_data_pollin", ret == 1 && (pe.revents & EPOLLIN), ret);
	ret = scif_recv(b, dst, 1000, SCIF_RECV_BLOCK);
	CHECK("recv_small", ret == 1000 && !memcmp(src, dst, 1000), ret);
	/* Larger than the ring: a blocking send needs the reader. */
	ret = scif_send(a, src, 60 * 1024, SCIF_SEND_BLOCK);
	CHECK("send_60k", ret == 60 * 1024, ret);
	ret = scif_recv(b, dst, 60 * 1024, SCIF_RECV_BLOCK);
	CHECK("recv_60k_intact", ret == 60 * 1024 &&
	      !memcmp(src, dst, 60 * 1024), ret);
	ret = scif_send(a, src, 10, 0x8);
	CHECK("send_bad_flags_einval", ret == -EINVAL, ret);
	ret = scif_recv(b, dst, -1, 0);
	CHECK("recv_negative_len_einval", ret == -EINVAL, ret);
out:
	vfree(src);
	vfree(dst);
}

#define WIN_LEN		(64 * 1024)
#define RW		(SCIF_PROT_READ | SCIF_PROT_WRITE)

/*
 * Whether the physical addresses of @r are where this node reaches the
 * peer's pages: mapped here, they show the bytes of @want.
 */
static bool phys_shows(struct scif_range *r, const u8 *want)
{
	bool same = true;
	void *va;
	int i;

	for (i = 0; i < r->nr_pages && same; i++) {
		va = memremap(r->phys_addr[i], PAGE_SIZE, MEMREMAP_WB);
		if (!va)
			return false;
		same = !memcmp(va, want + i * PAGE_SIZE, PAGE_SIZE);
		memunmap(va);
	}
	return same;
}

/* scif_get_pages() of @a's peer window at @off (over @bwin). */
static void test_get_pages(scif_epd_t a, long off, u8 *bwin)
{
	struct scif_range *r = NULL;
	int ret, i;
	bool same = true;

	ret = scif_get_pages(a, off + 1, PAGE_SIZE, &r);
	CHECK("get_pages_unaligned_einval", ret == -EINVAL, ret);
	ret = scif_get_pages(a, off + WIN_LEN - PAGE_SIZE, 2 * PAGE_SIZE, &r);
	CHECK("get_pages_outside_enxio", ret == -ENXIO, ret);
	ret = scif_get_pages(a, off + PAGE_SIZE, 3 * PAGE_SIZE, &r);
	CHECK("get_pages", ret == 0 && r && r->nr_pages == 3 &&
	      r->prot_flags == RW, ret);
	if (ret)
		return;
	for (i = 0; i < 3; i++)
		if (memcmp((void __force *)r->va[i],
			   bwin + (i + 1) * PAGE_SIZE, PAGE_SIZE) ||
		    !r->phys_addr[i])
			same = false;
	CHECK("get_pages_va_is_the_window", same, 0);
	CHECK("get_pages_phys_shows_the_window",
	      phys_shows(r, bwin + PAGE_SIZE), 0);
	ret = scif_put_pages(r);
	CHECK("put_pages", ret == 0, ret);
	ret = scif_put_pages(NULL);
	CHECK("put_pages_null_einval", ret == -EINVAL, ret);
}

/*
 * Fences through the kernel API: async writetos from @a, a remote signal
 * behind them into @b's window at @off, marks of both sides, errors.
 */
static void test_fences(scif_epd_t a, scif_epd_t b, long aoff, long off,
			u8 *awin, u8 *bwin)
{
	u64 flag = 0;
	int ret = 0, mark = -1, i;

	memset(bwin, 0, WIN_LEN);
	for (i = 0; i < 3 && !ret; i++)
		ret = scif_writeto(a, aoff, PAGE_SIZE, off + i * PAGE_SIZE, 0);
	ret = scif_fence_signal(a, 0, 0, off + WIN_LEN - 8, 0x1234,
				SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_REMOTE);
	CHECK("fence_signal_remote", ret == 0, ret);
	ret = scif_fence_mark(b, SCIF_FENCE_INIT_PEER, &mark);
	CHECK("fence_mark_peer", ret == 0 && mark < 0, ret ?: mark);
	ret = scif_fence_wait(b, mark);
	memcpy(&flag, bwin + WIN_LEN - 8, sizeof(flag));
	CHECK("fence_wait_peer_then_data_and_flag", ret == 0 &&
	      flag == 0x1234 && !memcmp(bwin + 2 * PAGE_SIZE, awin, PAGE_SIZE),
	      ret ?: (long)flag);
	ret = scif_fence_mark(a, SCIF_FENCE_INIT_SELF, &mark);
	CHECK("fence_mark_self", ret == 0 && mark >= 0, ret ?: mark);
	ret = scif_fence_wait(a, mark);
	CHECK("fence_wait_self", ret == 0, ret);
	ret = scif_fence_mark(a, SCIF_FENCE_INIT_SELF, NULL);
	CHECK("fence_mark_null_einval", ret == -EINVAL, ret);
	ret = scif_fence_signal(a, 0, 0, off + 2, 1,
				SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_REMOTE);
	CHECK("fence_signal_misaligned_einval", ret == -EINVAL, ret);
	ret = scif_fence_signal(a, aoff + 4 * PAGE_SIZE, 1, 0, 0,
				SCIF_FENCE_INIT_PEER | SCIF_SIGNAL_LOCAL);
	CHECK("fence_signal_outside_enxio", ret == -ENXIO, ret);
}

/* Windows over kernel memory on both ends, and the four copies. */
static void test_rma(scif_epd_t a, scif_epd_t b)
{
	u8 *bwin = vzalloc(WIN_LEN), *awin = vmalloc(4 * PAGE_SIZE);
	u8 *src = vmalloc(WIN_LEN), *dst = vzalloc(WIN_LEN);
	scif_pinned_pages_t pp = NULL;
	long off, aoff = -1;
	int i, ret;

	if (!bwin || !awin || !src || !dst)
		goto out;
	for (i = 0; i < WIN_LEN; i++)
		src[i] = i * 7 + (i >> 9);
	memcpy(awin, src + 3, 4 * PAGE_SIZE);
	off = scif_register(b, bwin, WIN_LEN, 3L << 61, RW,
			    SCIF_MAP_KERNEL | SCIF_MAP_FIXED);
	CHECK("register_kernel_memory_fixed_past_2g", off == 3L << 61, off);
	if (off >= 0)
		scif_unregister(b, off, WIN_LEN);
	off = scif_register(b, bwin, WIN_LEN, 0, RW, SCIF_MAP_KERNEL);
	CHECK("register_kernel_memory", off >= 0 && !(off % PAGE_SIZE), off);
	if (off < 0)
		goto out;
	ret = scif_pin_pages(awin + 1, PAGE_SIZE, RW, SCIF_MAP_KERNEL, &pp);
	CHECK("pin_pages_unaligned_einval", ret == -EINVAL, ret);
	ret = scif_pin_pages(awin, 4 * PAGE_SIZE, RW, SCIF_MAP_KERNEL, &pp);
	CHECK("pin_pages", ret == 0, ret);
	if (ret)
		goto unreg;
	aoff = scif_register_pinned_pages(a, pp, 1L << 40, SCIF_MAP_FIXED);
	CHECK("register_pinned_pages_fixed_past_2g", aoff == 1L << 40, aoff);
	ret = scif_unregister(a, 1L << 40, 4 * PAGE_SIZE);
	CHECK("unregister_past_2g", ret == 0, ret);
	aoff = scif_register_pinned_pages(a, pp, 0x10000, SCIF_MAP_FIXED);
	CHECK("register_pinned_pages_fixed", aoff == 0x10000, aoff);
	ret = scif_register_pinned_pages(a, pp, 0x12000, SCIF_MAP_FIXED);
	CHECK("register_pinned_pages_collision_eaddrinuse",
	      ret == -EADDRINUSE, ret);
	ret = scif_unpin_pages(pp);
	CHECK("unpin_pages_window_keeps_them", ret == 0, ret);

	ret = scif_vwriteto(a, src + 1, 3000, off + 5, SCIF_RMA_SYNC);
	CHECK("vwriteto", ret == 0 && !memcmp(bwin + 5, src + 1, 3000), ret);
	ret = scif_vreadfrom(a, dst + 3, 3000, off + 5, SCIF_RMA_USECPU);
	CHECK("vreadfrom", ret == 0 && !memcmp(dst + 3, src + 1, 3000), ret);
	ret = scif_writeto(a, aoff + 10, 3 * PAGE_SIZE, off + 100,
			   SCIF_RMA_ORDERED | SCIF_RMA_SYNC);
	CHECK("writeto", ret == 0 &&
	      !memcmp(bwin + 100, src + 13, 3 * PAGE_SIZE), ret);
	memset(bwin, 0x5a, WIN_LEN);
	ret = scif_readfrom(a, aoff + 1, 5000, off + 33, SCIF_RMA_SYNC);
	CHECK("readfrom", ret == 0 && awin[1] == 0x5a && awin[5000] == 0x5a &&
	      awin[5001] == src[5004], ret);
	test_get_pages(a, off, bwin);
	test_fences(a, b, aoff, off, awin, bwin);
	/* Asynchronous, then a synchronous one: both done after it. */
	ret = scif_writeto(a, aoff, PAGE_SIZE, off, 0);
	CHECK("writeto_async", ret == 0, ret);
	ret = scif_vwriteto(a, src, 100, off + 2 * PAGE_SIZE + 7,
			    SCIF_RMA_SYNC);
	CHECK("async_then_sync", ret == 0 && !memcmp(bwin, awin, PAGE_SIZE) &&
	      !memcmp(bwin + 2 * PAGE_SIZE + 7, src, 100), ret);
	ret = scif_writeto(b, off, 100, aoff + 4 * PAGE_SIZE - 50, 0);
	CHECK("writeto_past_window_enxio", ret == -ENXIO, ret);
	ret = scif_readfrom(a, aoff, 8, off, 0x100);
	CHECK("readfrom_bad_flags_einval", ret == -EINVAL, ret);
	ret = scif_unregister(a, aoff, PAGE_SIZE);
	CHECK("unregister_partial_einval", ret == -EINVAL, ret);
	ret = scif_unregister(a, aoff, 4 * PAGE_SIZE);
	CHECK("unregister_pinned", ret == 0, ret);
unreg:
	ret = scif_unregister(b, off, WIN_LEN);
	CHECK("unregister_kernel_memory", ret == 0, ret);
out:
	vfree(bwin);
	vfree(awin);
	vfree(src);
	vfree(dst);
}

/*
 * Device mappings (scif_dma_map()) for a device of the test's own, a
 * platform device with a 64-bit DMA mask and no IOMMU, as a "soft DMA"
 * engine: the addresses it is given are checked against what the DMA
 * API gives the same device for the same memory, and where the device
 * has no IOMMU (dma-direct: a DMA address is the physical address) the
 * "device" writes or reads through memremap() of each segment, and the
 * bytes are compared on the windows' owner.
 */
static struct platform_device *dma_pdev;

static struct device *dma_dev(void)
{
	struct platform_device *pdev;

	if (dma_pdev)
		return &dma_pdev->dev;
	pdev = platform_device_register_simple("scif_kapi_dma",
					       PLATFORM_DEVID_NONE, NULL, 0);
	if (IS_ERR(pdev))
		return NULL;
	if (dma_coerce_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64))) {
		platform_device_unregister(pdev);
		return NULL;
	}
	dma_pdev = pdev;
	return &pdev->dev;
}

/* What a revoke callback was told. */
struct dma_ctx {
	struct completion done;
	atomic_t calls;
	int why;
	unsigned int sleep_ms;
};

static void dma_ctx_init(struct dma_ctx *c, unsigned int sleep_ms)
{
	init_completion(&c->done);
	atomic_set(&c->calls, 0);
	c->why = 0;
	c->sleep_ms = sleep_ms;
}

static void dma_revoke(struct scif_dma_map *map, void *priv, int why)
{
	struct dma_ctx *c = priv;

	might_sleep();
	if (c->sleep_ms)
		msleep(c->sleep_ms);
	WRITE_ONCE(c->why, why);
	atomic_inc(&c->calls);
	complete(&c->done);
}

/* The DMA address of byte @off of @m, or 0 past its end. */
static dma_addr_t dma_at(struct scif_dma_map *m, u64 off)
{
	int i;

	for (i = 0; i < m->nr_segs; i++) {
		if (off < m->segs[i].len)
			return m->segs[i].addr + off;
		off -= m->segs[i].len;
	}
	return 0;
}

static u64 dma_total(struct scif_dma_map *m)
{
	u64 n = 0;
	int i;

	for (i = 0; i < m->nr_segs; i++)
		n += m->segs[i].len;
	return n;
}

/*
 * Whether each of the @nr pages of @m has the address the DMA API gives
 * @dev for the page of @buf (vmalloc'd) or, with @buf NULL, for the
 * physical address @phys[i] (a peer's aperture: dma_map_resource()).
 */
static bool dma_addrs_match(struct device *dev, struct scif_dma_map *m,
			    const u8 *buf, const dma_addr_t *phys, int nr)
{
	dma_addr_t want;
	bool same = true;
	int i;

	if (dma_total(m) != (u64)nr * PAGE_SIZE)
		return false;
	for (i = 0; i < nr && same; i++) {
		if (buf)
			want = dma_map_page(dev,
					    vmalloc_to_page(buf + i * PAGE_SIZE),
					    0, PAGE_SIZE, DMA_BIDIRECTIONAL);
		else
			want = dma_map_resource(dev, phys[i], PAGE_SIZE,
						DMA_TO_DEVICE, 0);
		if (dma_mapping_error(dev, want))
			return false;
		same = dma_at(m, (u64)i * PAGE_SIZE) == want;
		if (buf)
			dma_unmap_page(dev, want, PAGE_SIZE, DMA_BIDIRECTIONAL);
		else
			dma_unmap_resource(dev, want, PAGE_SIZE, DMA_TO_DEVICE,
					   0);
	}
	return same;
}

/* Whether the soft DMA can run: a DMA address is a physical one. */
static bool soft_dma_ok(struct device *dev)
{
	return !device_iommu_mapped(dev);
}

/*
 * The soft DMA: copy @len bytes between @buf and the segments of @m,
 * into them (@wr: the device writes) or out of them (it reads).
 */
static bool soft_dma(struct scif_dma_map *m, u8 *buf, u64 len, bool wr)
{
	void *va;
	int i;

	for (i = 0; i < m->nr_segs && len; i++) {
		u64 n = min(len, m->segs[i].len);

		va = memremap(m->segs[i].addr, n,
			      pfn_valid(PHYS_PFN(m->segs[i].addr)) ?
			      MEMREMAP_WB : MEMREMAP_WC);
		if (!va)
			return false;
		if (wr)
			memcpy(va, buf, n);
		else
			memcpy(buf, va, n);
		memunmap(va);
		buf += n;
		len -= n;
	}
	return !len;
}

/* A connected pair on @lep, quietly: the accepted end, the other in @c. */
static scif_epd_t dma_pair(scif_epd_t lep, scif_epd_t *c)
{
	struct scif_port_id dst = { .node = 0, .port = TEST_PORT };
	struct connector cn = { .dst = dst };
	struct scif_port_id peer;
	struct task_struct *t;
	scif_epd_t aep = NULL;
	int ret;

	init_completion(&cn.done);
	scif_get_node_ids(NULL, 0, &cn.dst.node);
	cn.epd = scif_open();
	if (!cn.epd)
		return NULL;
	t = kthread_run(connector_fn, &cn, "scif_kapi_dma");
	if (IS_ERR(t)) {
		scif_close(cn.epd);
		return NULL;
	}
	ret = scif_accept(lep, &peer, &aep, SCIF_ACCEPT_SYNC);
	wait_for_completion(&cn.done);
	if (ret || cn.result < 0) {
		if (!ret)
			scif_close(aep);
		scif_close(cn.epd);
		return NULL;
	}
	*c = cn.epd;
	return aep;
}

#define DMA_PAGES	4

/*
 * scif_dma_map()'s refusals, on @b's windows at @off and at @rooff (one
 * read-only page, the last window of @b).
 */
static void test_dma_errors(struct device *dev, scif_epd_t a, scif_epd_t b,
			    long off, long rooff)
{
	struct scif_dma_map *m = NULL;
	struct dma_ctx c;
	int ret;

	dma_ctx_init(&c, 0);
	ret = scif_dma_map(a, dev, off + 1, PAGE_SIZE, SCIF_DMA_REMOTE | RW,
			   dma_revoke, &c, &m);
	CHECK("kapi_dma_unaligned_offset_einval", ret == -EINVAL, ret);
	ret = scif_dma_map(a, dev, off, PAGE_SIZE + 1, SCIF_DMA_REMOTE | RW,
			   dma_revoke, &c, &m);
	CHECK("kapi_dma_unaligned_len_einval", ret == -EINVAL, ret);
	ret = scif_dma_map(a, dev, off, 0, SCIF_DMA_REMOTE | RW, dma_revoke,
			   &c, &m);
	CHECK("kapi_dma_len_0_einval", ret == -EINVAL, ret);
	ret = scif_dma_map(a, dev, off, PAGE_SIZE,
			   SCIF_DMA_REMOTE | SCIF_DMA_LOCAL | RW, dma_revoke,
			   &c, &m);
	CHECK("kapi_dma_both_flags_einval", ret == -EINVAL, ret);
	ret = scif_dma_map(a, dev, off, PAGE_SIZE, RW, dma_revoke, &c, &m);
	CHECK("kapi_dma_no_flag_einval", ret == -EINVAL, ret);
	ret = scif_dma_map(a, dev, off, PAGE_SIZE, SCIF_DMA_REMOTE, dma_revoke,
			   &c, &m);
	CHECK("kapi_dma_no_prot_einval", ret == -EINVAL, ret);
	ret = scif_dma_map(a, dev, off, PAGE_SIZE, SCIF_DMA_REMOTE | RW | 0x8,
			   dma_revoke, &c, &m);
	CHECK("kapi_dma_unknown_flag_einval", ret == -EINVAL, ret);
	ret = scif_dma_map(a, dev, off, PAGE_SIZE, SCIF_DMA_REMOTE | RW, NULL,
			   &c, &m);
	CHECK("kapi_dma_no_revoke_einval", ret == -EINVAL, ret);
	ret = scif_dma_map(a, NULL, off, PAGE_SIZE, SCIF_DMA_REMOTE | RW,
			   dma_revoke, &c, &m);
	CHECK("kapi_dma_no_device_einval", ret == -EINVAL, ret);
	ret = scif_dma_map(a, dev, rooff, PAGE_SIZE,
			   SCIF_DMA_REMOTE | SCIF_PROT_WRITE, dma_revoke, &c, &m);
	CHECK("kapi_dma_remote_read_only_window_eacces", ret == -EACCES, ret);
	ret = scif_dma_map(b, dev, rooff, PAGE_SIZE,
			   SCIF_DMA_LOCAL | SCIF_PROT_WRITE, dma_revoke, &c, &m);
	CHECK("kapi_dma_local_read_only_window_eacces", ret == -EACCES, ret);
	ret = scif_dma_map(a, dev, rooff, 2 * PAGE_SIZE,
			   SCIF_DMA_REMOTE | SCIF_PROT_READ, dma_revoke, &c, &m);
	CHECK("kapi_dma_past_window_enxio", ret == -ENXIO, ret);
	ret = scif_dma_map(a, dev, off, PAGE_SIZE, SCIF_DMA_LOCAL | RW,
			   dma_revoke, &c, &m);
	CHECK("kapi_dma_local_not_a_window_enxio", ret == -ENXIO, ret);
	CHECK("kapi_dma_refused_no_revoke", atomic_read(&c.calls) == 0,
	      atomic_read(&c.calls));
}

/*
 * A live mapping's addresses, the soft DMA through them (remote: @a's
 * device writes @b's window; local: @b's device writes its own window
 * and @a reads it by RMA), and its unmapping (no revoke called).
 */
static void test_dma_live(struct device *dev, scif_epd_t a, scif_epd_t b,
			  long off, u8 *bwin)
{
	u8 *pat = vmalloc(DMA_PAGES * PAGE_SIZE);
	u8 *got = vzalloc(DMA_PAGES * PAGE_SIZE);
	struct scif_dma_map *m = NULL;
	struct dma_ctx c;
	int ret, i;

	if (!pat || !got)
		goto out;
	for (i = 0; i < DMA_PAGES * PAGE_SIZE; i++)
		pat[i] = i * 11 + (i >> 10) + 1;
	dma_ctx_init(&c, 0);
	ret = scif_dma_map(a, dev, off + PAGE_SIZE, DMA_PAGES * PAGE_SIZE,
			   SCIF_DMA_REMOTE | RW, dma_revoke, &c, &m);
	CHECK("kapi_dma_map_remote", ret == 0 && m && m->nr_segs >= 1 &&
	      m->nr_segs <= DMA_PAGES, ret);
	if (ret)
		goto out;
	CHECK("kapi_dma_remote_addrs_are_the_dma_apis",
	      dma_addrs_match(dev, m, bwin + PAGE_SIZE, NULL, DMA_PAGES), 0);
	if (soft_dma_ok(dev)) {
		memset(bwin, 0, WIN_LEN);
		CHECK("kapi_dma_remote_soft_write_seen_by_owner",
		      soft_dma(m, pat, DMA_PAGES * PAGE_SIZE, true) &&
		      !memcmp(bwin + PAGE_SIZE, pat, DMA_PAGES * PAGE_SIZE) &&
		      !bwin[0] && !bwin[(DMA_PAGES + 1) * PAGE_SIZE], 0);
	}
	scif_dma_unmap(m);
	CHECK("kapi_dma_remote_unmap_no_revoke", atomic_read(&c.calls) == 0,
	      atomic_read(&c.calls));
	/* Unmapped: the window is nobody's but its owner's again. */
	m = NULL;
	ret = scif_dma_map(b, dev, off, DMA_PAGES * PAGE_SIZE,
			   SCIF_DMA_LOCAL | RW, dma_revoke, &c, &m);
	CHECK("kapi_dma_map_local", ret == 0 && m, ret);
	if (ret)
		goto out;
	CHECK("kapi_dma_local_addrs_are_the_dma_apis",
	      dma_addrs_match(dev, m, bwin, NULL, DMA_PAGES), 0);
	if (soft_dma_ok(dev)) {
		for (i = 0; i < DMA_PAGES * PAGE_SIZE; i++)
			pat[i] ^= 0x5a;
		ret = soft_dma(m, pat, DMA_PAGES * PAGE_SIZE, true) ? 0 : -EIO;
		ret = ret ?: scif_vreadfrom(a, got, DMA_PAGES * PAGE_SIZE, off,
					    SCIF_RMA_SYNC);
		CHECK("kapi_dma_local_soft_write_read_by_peer",
		      ret == 0 && !memcmp(got, pat, DMA_PAGES * PAGE_SIZE), ret);
		memset(got, 0, DMA_PAGES * PAGE_SIZE);
		CHECK("kapi_dma_local_soft_read",
		      soft_dma(m, got, DMA_PAGES * PAGE_SIZE, false) &&
		      !memcmp(got, bwin, DMA_PAGES * PAGE_SIZE), 0);
	}
	scif_dma_unmap(m);
	CHECK("kapi_dma_local_unmap_no_revoke", atomic_read(&c.calls) == 0,
	      atomic_read(&c.calls));
	scif_dma_unmap(NULL);
out:
	vfree(pat);
	vfree(got);
}

/*
 * Revocation when a window goes: @b's own (a local range of @b's,
 * revoked before scif_unregister() returns) and @b's seen by @a (the
 * peer unregistered it: revoked before @b's scif_unregister() of kernel
 * memory returns, since the window stays withdrawn until the mapping
 * lets go).  A slow revoke callback is waited for.
 */
static void test_dma_revoke_unregister(struct device *dev, scif_epd_t a,
				       scif_epd_t b)
{
	u8 *win = vzalloc(2 * PAGE_SIZE);
	struct scif_dma_map *m = NULL;
	struct dma_ctx c;
	long off;
	int ret;

	if (!win)
		return;
	off = scif_register(b, win, 2 * PAGE_SIZE, 0, RW, SCIF_MAP_KERNEL);
	CHECK("kapi_dma_revoke_setup_local", off >= 0, off);
	if (off < 0)
		goto out;
	dma_ctx_init(&c, 300);
	ret = scif_dma_map(b, dev, off, 2 * PAGE_SIZE, SCIF_DMA_LOCAL | RW,
			   dma_revoke, &c, &m);
	CHECK("kapi_dma_revoke_map_local", ret == 0, ret);
	ret = scif_unregister(b, off, 2 * PAGE_SIZE);
	CHECK("kapi_dma_revoke_own_unregister_enxio_before_return",
	      ret == 0 && atomic_read(&c.calls) == (m ? 1 : 0) &&
	      (!m || READ_ONCE(c.why) == -ENXIO), ret ?: READ_ONCE(c.why));
	if (m)
		scif_dma_unmap(m);
	CHECK("kapi_dma_revoke_own_once", atomic_read(&c.calls) == 1,
	      atomic_read(&c.calls));

	m = NULL;
	off = scif_register(b, win, 2 * PAGE_SIZE, 0, RW, SCIF_MAP_KERNEL);
	CHECK("kapi_dma_revoke_setup_remote", off >= 0, off);
	if (off < 0)
		goto out;
	dma_ctx_init(&c, 300);
	ret = scif_dma_map(a, dev, off, 2 * PAGE_SIZE, SCIF_DMA_REMOTE | RW,
			   dma_revoke, &c, &m);
	CHECK("kapi_dma_revoke_map_remote", ret == 0, ret);
	ret = scif_unregister(b, off, 2 * PAGE_SIZE);
	CHECK("kapi_dma_revoke_peer_unregister_enxio_before_return",
	      ret == 0 && atomic_read(&c.calls) == (m ? 1 : 0) &&
	      (!m || READ_ONCE(c.why) == -ENXIO), ret ?: READ_ONCE(c.why));
	if (m)
		scif_dma_unmap(m);
	CHECK("kapi_dma_revoke_peer_once", atomic_read(&c.calls) == 1,
	      atomic_read(&c.calls));
out:
	vfree(win);
}

/*
 * Revocation when the connection ends: this end's scif_close() revokes
 * before it returns (and scif_dma_unmap() after it only frees, the
 * endpoint gone); the peer's close revokes this end's mapping soon.
 */
static void test_dma_revoke_close(struct device *dev, scif_epd_t lep)
{
	u8 *win = vzalloc(2 * PAGE_SIZE);
	struct scif_dma_map *m = NULL, *m2 = NULL;
	scif_epd_t a = NULL, b;
	struct dma_ctx c;
	long off;
	int ret;

	if (!win)
		return;
	b = dma_pair(lep, &a);
	CHECK("kapi_dma_close_pair", b != NULL, 0);
	if (!b)
		goto out;
	off = scif_register(b, win, 2 * PAGE_SIZE, 0, RW, SCIF_MAP_KERNEL);
	dma_ctx_init(&c, 100);
	ret = off < 0 ? off : scif_dma_map(a, dev, off, 2 * PAGE_SIZE,
					   SCIF_DMA_REMOTE | RW, dma_revoke,
					   &c, &m);
	CHECK("kapi_dma_close_map", ret == 0, ret);
	scif_close(a);
	CHECK("kapi_dma_revoke_own_close_econnreset_before_return",
	      atomic_read(&c.calls) == (m ? 1 : 0) &&
	      (!m || READ_ONCE(c.why) == -ECONNRESET), READ_ONCE(c.why));
	if (m)
		scif_dma_unmap(m);
	scif_close(b);

	m = NULL;
	b = dma_pair(lep, &a);
	CHECK("kapi_dma_peer_close_pair", b != NULL, 0);
	if (!b)
		goto out;
	off = scif_register(b, win, 2 * PAGE_SIZE, 0, RW, SCIF_MAP_KERNEL);
	dma_ctx_init(&c, 0);
	ret = off < 0 ? off : scif_dma_map(a, dev, off, 2 * PAGE_SIZE,
					   SCIF_DMA_REMOTE | SCIF_PROT_READ,
					   dma_revoke, &c, &m);
	CHECK("kapi_dma_peer_close_map", ret == 0, ret);
	scif_close(b);
	ret = m ? wait_for_completion_timeout(&c.done, 10 * HZ) : 0;
	CHECK("kapi_dma_revoke_peer_close_econnreset", ret > 0 &&
	      atomic_read(&c.calls) == 1 && READ_ONCE(c.why) == -ECONNRESET,
	      READ_ONCE(c.why));
	ret = m ? scif_dma_map(a, dev, off, 2 * PAGE_SIZE,
			       SCIF_DMA_REMOTE | SCIF_PROT_READ, dma_revoke,
			       &c, &m2) : 0;
	CHECK("kapi_dma_map_after_reset_fails", ret == -ECONNRESET ||
	      ret == -ENOTCONN, ret);
	if (!ret && m2)
		scif_dma_unmap(m2);
	if (m)
		scif_dma_unmap(m);
	scif_close(a);
out:
	vfree(win);
}

/* kapi_dma: scif_dma_map() through the loopback node. */
static void test_dma(scif_epd_t lep, scif_epd_t a, scif_epd_t b)
{
	u8 *bwin = vzalloc(WIN_LEN), *rowin = vzalloc(PAGE_SIZE);
	struct device *dev = dma_dev();
	long off = -1, rooff = -1;

	CHECK("kapi_dma_device", dev != NULL, 0);
	if (!bwin || !rowin || !dev)
		goto out;
	off = scif_register(b, bwin, WIN_LEN, 0, RW, SCIF_MAP_KERNEL);
	rooff = scif_register(b, rowin, PAGE_SIZE, 0, SCIF_PROT_READ,
			      SCIF_MAP_KERNEL);
	CHECK("kapi_dma_register", off >= 0 && rooff >= 0,
	      off < 0 ? off : rooff);
	if (off < 0 || rooff < 0)
		goto unreg;
	test_dma_errors(dev, a, b, off, rooff);
	test_dma_live(dev, a, b, off, bwin);
	test_dma_revoke_unregister(dev, a, b);
	test_dma_revoke_close(dev, lep);
unreg:
	if (off >= 0)
		scif_unregister(b, off, WIN_LEN);
	if (rooff >= 0)
		scif_unregister(b, rooff, PAGE_SIZE);
out:
	vfree(bwin);
	vfree(rowin);
}

/* NULL and out-of-range arguments, and calls made in the wrong state. */
static void test_bad_args(void)
{
	struct scif_port_id peer;
	struct scif_pollepd pe;
	scif_pinned_pages_t pp;
	scif_epd_t e, x;
	void *buf;
	long ret;

	e = scif_open();
	buf = kzalloc(PAGE_SIZE, GFP_KERNEL);
	CHECK("open", e && buf, 0);
	if (!e || !buf)
		goto out;
	ret = scif_connect(e, NULL);
	CHECK("connect_null_dst_einval", ret == -EINVAL, ret);
	ret = scif_accept(e, NULL, &x, 0);
	CHECK("accept_null_peer_einval", ret == -EINVAL, ret);
	ret = scif_accept(e, &peer, &x, 0);
	CHECK("accept_not_listening_einval", ret == -EINVAL, ret);
	ret = scif_get_pages(e, 0, PAGE_SIZE, NULL);
	CHECK("get_pages_null_einval", ret == -EINVAL, ret);
	ret = scif_pin_pages(buf, PAGE_SIZE, SCIF_PROT_READ, SCIF_MAP_KERNEL,
			     NULL);
	CHECK("pin_pages_null_einval", ret == -EINVAL, ret);
	ret = scif_unpin_pages(NULL);
	CHECK("unpin_pages_null_einval", ret == -EINVAL, ret);
	ret = scif_register_pinned_pages(e, NULL, 0, 0);
	CHECK("register_pinned_null_einval", ret == -EINVAL, ret);
	ret = scif_pin_pages(buf, PAGE_SIZE, SCIF_PROT_READ, SCIF_MAP_KERNEL,
			     &pp);
	CHECK("pin_pages_kernel", ret == 0, ret);
	if (!ret) {
		ret = scif_register_pinned_pages(e, pp, 0, SCIF_MAP_KERNEL);
		CHECK("register_pinned_bad_flags_einval", ret == -EINVAL, ret);
		ret = scif_register_pinned_pages(e, pp, 0, 0);
		CHECK("register_pinned_unconnected_enotconn",
		      ret == -ENOTCONN, ret);
		ret = scif_unpin_pages(pp);
		CHECK("unpin_pages", ret == 0, ret);
	}
	ret = scif_poll(NULL, 0, 0);
	CHECK("poll_nothing_zero", ret == 0, ret);
	ret = scif_bind(e, 0);
	CHECK("bind_for_poll", ret > 0, ret);
	ret = scif_listen(e, 1);
	CHECK("listen_for_poll", ret == 0, ret);
	pe = (struct scif_pollepd){ .epd = e, .events = EPOLLIN };
	ret = scif_poll(&pe, 1, 20);
	CHECK("poll_idle_listener_times_out", ret == 0 && !pe.revents,
	      ret ? ret : (__force long)pe.revents);
out:
	kfree(buf);
	if (e)
		scif_close(e);
}

static void test_connection(void)
{
	scif_epd_t lep = scif_open(), a = NULL, b;
	struct scif_port_id peer;
	char byte = 'x';
	int ret;

	if (!lep) {
		CHECK("open", 0, 0);
		return;
	}
	ret = scif_bind(lep, TEST_PORT);
	CHECK("bind_port", ret == TEST_PORT, ret);
	ret = scif_listen(lep, 4);
	CHECK("listen", ret == 0, ret);
	ret = scif_accept(lep, &peer, &b, 0);
	CHECK("accept_nothing_eagain", ret == -EAGAIN, ret);
	b = make_pair(lep, &a);
	if (b) {
		test_data(a, b);
		test_rma(a, b);
		test_dma(lep, a, b);
		ret = scif_send(a, &byte, 1, SCIF_SEND_BLOCK);
		scif_close(a);
		ret = scif_recv(b, &byte, 1, SCIF_RECV_BLOCK);
		CHECK("recv_after_peer_close_gets_data", ret == 1, ret);
		ret = scif_recv(b, &byte, 1, SCIF_RECV_BLOCK);
		CHECK("recv_after_peer_close_econnreset", ret == -ECONNRESET,
		      ret);
		ret = scif_send(b, &byte, 1, 0);
		CHECK("send_after_peer_close_econnreset", ret == -ECONNRESET,
		      ret);
		scif_close(b);
	}
	scif_close(lep);
}

/*
 * A connected pair on @lep with a window over kernel memory on @b and an
 * RMA of @a's from @src into it queued, held back by the test build's
 * engine hooks, which scif_kapi_test.sh sets for the two tests below:
 * eng_defer (the RMA goes to the copy engine's worker) and a delay.
 */
struct held_rma {
	scif_epd_t lep, a, b;
	u8 *bwin, *src;
	long off;
};

/* CHECK() under the name "@what_@step". */
static void held_rma_check(const char *what, const char *step, bool cond,
			   long val)
{
	char name[48];

	snprintf(name, sizeof(name), "%s_%s", what, step);
	report(cond, name, val);
}

static bool held_rma_start(struct held_rma *h, const char *what)
{
	int i, ret;

	h->lep = scif_open();
	h->bwin = vzalloc(WIN_LEN);
	h->src = vmalloc(WIN_LEN);
	ret = h->lep && h->bwin && h->src ? scif_bind(h->lep, TEST_PORT) :
					    -ENOMEM;
	if (ret == TEST_PORT)
		ret = scif_listen(h->lep, 1);
	held_rma_check(what, "listen", ret == 0, ret);
	if (ret)
		return false;
	h->b = make_pair(h->lep, &h->a);
	if (!h->b)
		return false;
	for (i = 0; i < WIN_LEN; i++)
		h->src[i] = i * 13 + 5;
	h->off = scif_register(h->b, h->bwin, WIN_LEN, 0, RW, SCIF_MAP_KERNEL);
	held_rma_check(what, "register", h->off >= 0, h->off);
	if (h->off < 0)
		return false;
	ret = scif_vwriteto(h->a, h->src, WIN_LEN, h->off, 0);
	held_rma_check(what, "rma_queued", ret == 0, ret);
	msleep(100);
	return !ret;
}

static void held_rma_end(struct held_rma *h)
{
	if (h->b)
		scif_close(h->b);
	if (h->a)
		scif_close(h->a);
	if (h->lep)
		scif_close(h->lep);
	vfree(h->bwin);
	vfree(h->src);
}

/*
 * The window unregistered while the peer's RMA still holds it (the
 * worker sleeps eng_delay_ms before it copies): scif_unregister() must
 * return only once the RMA is done, since the caller frees the memory
 * then: the bytes are there when it returns.
 */
static void test_withdrawn(void)
{
	struct held_rma h = { };
	unsigned long t0;
	int ret;

	if (held_rma_start(&h, "withdrawn")) {
		t0 = jiffies;
		ret = scif_unregister(h.b, h.off, WIN_LEN);
		CHECK("unregister_kernel_window_waits_for_peer_rma",
		      ret == 0 && !memcmp(h.bwin, h.src, WIN_LEN), ret);
		CHECK("unregister_kernel_window_waited_ms",
		      time_after_eq(jiffies, t0 + msecs_to_jiffies(500)),
		      jiffies_to_msecs(jiffies - t0));
	}
	held_rma_end(&h);
}

/*
 * The window closed with its endpoint while the peer's RMA writes into
 * it (the engine, having found the connection alive, sleeps
 * eng_piece_delay_ms before it copies): scif_close() must return only
 * once the peer no longer touches the window, since the caller frees
 * the memory then: nothing may change in it after the call returns
 * (before, the call returned at once and the RMA wrote 1.4 s later).
 */
static void test_close_waits(void)
{
	u8 *snap = vmalloc(WIN_LEN);
	struct held_rma h = { };
	unsigned long t0;

	CHECK("close_waits_snapshot", snap, 0);
	if (snap && held_rma_start(&h, "close_waits")) {
		t0 = jiffies;
		scif_close(h.b);
		h.b = NULL;
		memcpy(snap, h.bwin, WIN_LEN);
		seq_buf_printf(&out, "# scif_close() took %u ms\n",
			       jiffies_to_msecs(jiffies - t0));
		msleep(2500);
		CHECK("close_kernel_window_nothing_written_after",
		      !memcmp(snap, h.bwin, WIN_LEN), 0);
	}
	held_rma_end(&h);
	vfree(snap);
}

static int probes, removes;

static void client_probe(struct scif_peer_dev *peer)
{
	probes++;
}

static void client_remove(struct scif_peer_dev *peer)
{
	removes++;
}

static struct scif_client test_client = {
	.name = "scif_kapi_test",
	.probe = client_probe,
	.remove = client_remove,
};

static void test_nodes_and_clients(void)
{
	u16 nodes[SCIF_MAX_NODES], self = 0xffff;
	int n;

	n = scif_get_node_ids(nodes, SCIF_MAX_NODES, &self);
	CHECK("get_node_ids_counts_self", n >= 1, n);
	CHECK("get_node_ids_self_listed", n >= 1 && nodes[0] == self, self);
	scif_client_register(&test_client);
	CHECK("client_probe_per_node", probes == n, probes);
	scif_client_unregister(&test_client);
	CHECK("client_remove_per_node", removes == n, removes);
}

#define CROSS_PAGES	4
#define CROSS_LEN	(CROSS_PAGES * PAGE_SIZE)

static void cross_fill(u8 *p)
{
	int i;

	for (i = 0; i < CROSS_LEN; i++)
		p[i] = i * 13 + (i >> 12) + 0x5c;
}

/* cross_serve: a window of known bytes for one cross_peer instance. */
static void cross_server(void)
{
	scif_epd_t lep = scif_open(), ep = NULL;
	u8 *win = vmalloc(CROSS_LEN), byte;
	struct scif_port_id peer;
	long off;
	int ret, i;

	CHECK("cross_serve_setup", lep && win, 0);
	if (!lep || !win)
		goto out;
	cross_fill(win);
	ret = scif_bind(lep, CROSS_PORT);
	CHECK("cross_serve_bind", ret == CROSS_PORT, ret);
	ret = scif_listen(lep, 1);
	for (i = 0; i < 1200 && !ret; i++) {
		ret = scif_accept(lep, &peer, &ep, 0);
		if (ret != -EAGAIN)
			break;
		ret = 0;
		msleep(100);
	}
	CHECK("cross_serve_accept", ret == 0 && ep, ret);
	if (ret || !ep)
		goto out;
	off = scif_register(ep, win, CROSS_LEN, 0, SCIF_PROT_READ,
			    SCIF_MAP_KERNEL);
	CHECK("cross_serve_register", off >= 0, off);
	if (off < 0)
		goto out;
	ret = scif_send(ep, &off, sizeof(off), SCIF_SEND_BLOCK);
	CHECK("cross_serve_send_offset", ret == sizeof(off), ret);
	/* The peer answers once it has looked, or is lost (cross_loss). */
	ret = scif_recv(ep, &byte, 1, SCIF_RECV_BLOCK);
	if (cross_loss)
		CHECK("cross_serve_peer_lost", ret == -ECONNRESET ||
		      ret == -ENODEV, ret);
	else
		CHECK("cross_serve_peer_done", ret == 1, ret);
	scif_unregister(ep, off, CROSS_LEN);
out:
	if (ep)
		scif_close(ep);
	if (lep)
		scif_close(lep);
	vfree(win);
}

static scif_epd_t cross_connect(void)
{
	struct scif_port_id dst = { .node = cross_peer, .port = CROSS_PORT };
	scif_epd_t ep;
	int ret = -ENOMEM, i;

	/* The server may not listen yet: two minutes to show up. */
	for (i = 0; i < 1200; i++) {
		ep = scif_open();
		if (!ep)
			break;
		ret = scif_connect(ep, &dst);
		if (ret >= 0)
			return ep;
		scif_close(ep);
		if (ret != -ECONNREFUSED && ret != -ENODEV)
			break;
		msleep(100);
	}
	CHECK("cross_connect", 0, ret);
	return NULL;
}

/*
 * cross_peer, kapi_dma across nodes: the peer's read-only window at @off
 * (whose pages @r, from scif_get_pages(), shows) mapped for the test's
 * device gets the addresses the DMA API gives for the bus's physical
 * addresses of the pages (the aperture, on ivshmem), and the soft DMA
 * reads the window's bytes through them.  The mapping is returned live,
 * to be revoked by the server's unregistration, or NULL.
 */
static struct scif_dma_map *cross_dma(scif_epd_t ep, long off,
				      struct scif_range *r, const u8 *want,
				      struct dma_ctx *c)
{
	struct device *dev = dma_dev();
	struct scif_dma_map *m = NULL;
	u8 *got = vzalloc(CROSS_LEN);
	int ret;

	dma_ctx_init(c, 0);
	CHECK("cross_dma_device", dev && got, 0);
	if (!dev || !got)
		goto out;
	ret = scif_dma_map(ep, dev, off, CROSS_LEN,
			   SCIF_DMA_REMOTE | SCIF_PROT_WRITE, dma_revoke, c, &m);
	CHECK("cross_dma_read_only_window_eacces", ret == -EACCES, ret);
	ret = scif_dma_map(ep, dev, off, CROSS_LEN,
			   SCIF_DMA_REMOTE | SCIF_PROT_READ, dma_revoke, c, &m);
	CHECK("cross_dma_map_remote", ret == 0, ret);
	if (ret) {
		m = NULL;
		goto out;
	}
	CHECK("cross_dma_addrs_are_the_dma_apis",
	      dma_addrs_match(dev, m, NULL, r->phys_addr, CROSS_PAGES), 0);
	if (soft_dma_ok(dev))
		CHECK("cross_dma_soft_read_shows_the_window",
		      soft_dma(m, got, CROSS_LEN, false) &&
		      !memcmp(got, want, CROSS_LEN), 0);
out:
	vfree(got);
	return m;
}

/*
 * cross_peer: scif_get_pages() of a window on another node gives, for
 * each page, an address through which this node reaches it (the
 * aperture, on ivshmem), not the address the peer published.
 */
/* cross_loss: the live mapping, its endpoint and what its revoke saw. */
static scif_epd_t loss_ep;
static struct scif_dma_map *loss_map;
static struct dma_ctx loss_ctx;

static int dma_lost_show(struct seq_file *sf, void *unused)
{
	seq_printf(sf, "%d %d\n", atomic_read(&loss_ctx.calls),
		   READ_ONCE(loss_ctx.why));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(dma_lost);

static void cross_client(void)
{
	u8 *want = vmalloc(CROSS_LEN), byte = 'd';
	struct scif_dma_map *dm = NULL;
	struct dma_ctx *c = &loss_ctx;
	struct scif_range *r = NULL;
	bool same = true;
	scif_epd_t ep;
	long off = 0;
	int ret, i;

	if (!want)
		return;
	cross_fill(want);
	ep = cross_connect();
	if (!ep)
		goto out;
	ret = scif_recv(ep, &off, sizeof(off), SCIF_RECV_BLOCK);
	CHECK("cross_recv_offset", ret == sizeof(off), ret);
	ret = scif_get_pages(ep, off, CROSS_LEN, &r);
	CHECK("cross_get_pages", ret == 0 && r->nr_pages == CROSS_PAGES, ret);
	if (!ret) {
		for (i = 0; i < CROSS_PAGES; i++)
			if (memcmp((void __force *)r->va[i],
				   want + i * PAGE_SIZE, PAGE_SIZE))
				same = false;
		CHECK("cross_get_pages_va_shows_the_window", same, 0);
		CHECK("cross_get_pages_phys_shows_the_window",
		      phys_shows(r, want), 0);
		dm = cross_dma(ep, off, r, want, c);
		ret = scif_put_pages(r);
		CHECK("cross_put_pages", ret == 0, ret);
	}
	if (cross_loss) {
		/* Kept until the node is lost (scif_kapi_dma_loss.sh). */
		loss_ep = ep;
		loss_map = dm;
		vfree(want);
		return;
	}
	scif_send(ep, &byte, 1, SCIF_SEND_BLOCK);
	if (dm) {
		/* The server unregisters its window once told we are done. */
		ret = wait_for_completion_timeout(&c->done, 60 * HZ);
		CHECK("cross_dma_revoke_peer_unregister_enxio", ret > 0 &&
		      atomic_read(&c->calls) == 1 &&
		      READ_ONCE(c->why) == -ENXIO, READ_ONCE(c->why));
		scif_dma_unmap(dm);
	}
	scif_close(ep);
out:
	vfree(want);
}

#define PCI_BAR		2
#define PCI_LEN		(4 * PAGE_SIZE)

/* Bad BARs and ranges of scif_register_pci(): each -EINVAL. */
static void test_register_pci_einval(scif_epd_t a, struct pci_dev *pdev)
{
	static const struct {
		const char *name;
		int bar;
		u64 bar_offset;
		size_t len;
	} bad[] = {
		{ "kapi_reg_pci_einval_bar6", 6, 0, PAGE_SIZE },
		{ "kapi_reg_pci_einval_bar_upper_half", PCI_BAR + 1, 0,
		  PAGE_SIZE },
		{ "kapi_reg_pci_einval_unaligned", PCI_BAR, 100, PAGE_SIZE },
		{ "kapi_reg_pci_einval_len0", PCI_BAR, 0, 0 },
	};
	u64 end = pci_resource_len(pdev, PCI_BAR);
	unsigned int i;
	off_t off;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		off = scif_register_pci(a, pdev, bad[i].bar, bad[i].bar_offset,
					bad[i].len, 0,
					SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
		CHECK(bad[i].name, off == -EINVAL, off);
		if (off >= 0)
			scif_unregister(a, off, bad[i].len);
	}
	off = scif_register_pci(a, pdev, PCI_BAR, end - PAGE_SIZE,
				2 * PAGE_SIZE, 0, SCIF_PROT_READ, 0);
	CHECK("kapi_reg_pci_einval_past_end", end && off == -EINVAL, off);
	if (off >= 0)
		scif_unregister(a, off, 2 * PAGE_SIZE);
}

/*
 * A kernel client's device window (devices.rst, "Kernel API"): A
 * registers two pages into BAR 2 of the function (the NVMe controller's
 * memory buffer), B, its peer through the loopback node, writes and
 * reads it back by RMA (staged: served by the owner's serve items);
 * the bad arguments; the window unregistered.
 */
static void test_register_pci(void)
{
	unsigned int dom, bus, dev, fn;
	scif_epd_t lep, a = NULL, b;
	u8 *src = NULL, *dst = NULL;
	struct pci_dev *pdev;
	u16 self = 0;
	off_t off;
	int ret;

	if (sscanf(pci, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4) {
		CHECK("kapi_reg_pci_function_named", 0, -EINVAL);
		return;
	}
	pdev = pci_get_domain_bus_and_slot(dom, bus, PCI_DEVFN(dev, fn));
	CHECK("kapi_reg_pci_function_found", pdev, 0);
	lep = scif_open();
	if (!pdev || !lep || scif_bind(lep, TEST_PORT) < 0 ||
	    scif_listen(lep, 1) < 0)
		goto out;
	scif_get_node_ids(NULL, 0, &self);
	b = make_pair_on(lep, self, &a);
	src = vmalloc(PCI_LEN);
	dst = vzalloc(PCI_LEN);
	if (!b || !src || !dst)
		goto close;
	test_register_pci_einval(a, pdev);
	off = scif_register_pci(a, pdev, PCI_BAR, PAGE_SIZE, PCI_LEN, 0,
				SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	CHECK("kapi_reg_pci", off >= 0, off);
	if (off < 0)
		goto close;
	get_random_bytes(src, PCI_LEN);
	ret = scif_vwriteto(b, src, PCI_LEN, off, SCIF_RMA_SYNC);
	CHECK("kapi_reg_pci_vwriteto", ret == 0, ret);
	ret = scif_vreadfrom(b, dst, PCI_LEN, off, SCIF_RMA_SYNC);
	CHECK("kapi_reg_pci_vreadfrom_same_bytes",
	      ret == 0 && !memcmp(src, dst, PCI_LEN), ret);
	ret = scif_unregister(a, off, PCI_LEN);
	CHECK("kapi_reg_pci_unregister", ret == 0, ret);
	ret = scif_vreadfrom(b, dst, PAGE_SIZE, off, SCIF_RMA_SYNC);
	CHECK("kapi_reg_pci_rma_after_unregister_enxio", ret == -ENXIO, ret);
close:
	vfree(src);
	vfree(dst);
	if (b)
		scif_close(b);
	if (a)
		scif_close(a);
out:
	if (lep)
		scif_close(lep);
	pci_dev_put(pdev);
}

/* The borrow test_lend() keeps, and what its lost() was told. */
static struct scif_dev_borrow *lend_borrow;
static atomic_t lend_lost_calls = ATOMIC_INIT(0);
static int lend_lost_why;

static void lend_lost(struct scif_dev_borrow *b, void *priv, int why)
{
	WRITE_ONCE(lend_lost_why, why);
	atomic_inc(&lend_lost_calls);
}

static const struct scif_dev_borrow_ops lend_ops = { .lost = lend_lost };

/*
 * A kernel client's borrow of this node's own function (through the
 * loopback node): listed, borrowed exclusively with ops, its info, a
 * second borrow EBUSY, a return and a new borrow kept for the unbind.
 */
static void test_lend(void)
{
	struct scif_dev_filter any = { .vendor = 0xffff, .device = 0xffff };
	struct scif_dev_borrow *b, *b2;
	struct scif_dev_entry *e;
	u16 self = 0;
	int n, ret;

	e = kcalloc(2, sizeof(*e), GFP_KERNEL);
	if (!e)
		return;
	scif_get_node_ids(NULL, 0, &self);
	n = scif_dev_list(self, &any, e, 2);
	CHECK("kapi_dev_list_own", n == 1 && e[0].node == self, n);
	if (n != 1)
		goto out;
	b = scif_dev_borrow(e[0].fdid, SCIF_DEV_EXCLUSIVE, &lend_ops, NULL);
	CHECK("kapi_dev_borrow", !IS_ERR(b), PTR_ERR_OR_ZERO(b));
	if (IS_ERR(b))
		goto out;
	ret = scif_dev_borrow_info(b, &e[1]);
	CHECK("kapi_dev_borrow_info", !ret && e[1].fdid == e[0].fdid &&
	      e[1].state == SCIF_DEV_STATE_EXCLUSIVE && e[1].borrowers == 1,
	      ret ?: e[1].state);
	b2 = scif_dev_borrow(e[0].fdid, 0, NULL, NULL);
	CHECK("kapi_dev_borrow_ebusy", PTR_ERR(b2) == -EBUSY,
	      PTR_ERR_OR_ZERO(b2));
	if (!IS_ERR(b2))
		scif_dev_return(b2);
	b2 = scif_dev_borrow(e[0].fdid, 0x100, NULL, NULL);
	CHECK("kapi_dev_borrow_einval", PTR_ERR(b2) == -EINVAL,
	      PTR_ERR_OR_ZERO(b2));
	if (!IS_ERR(b2))
		scif_dev_return(b2);
	ret = scif_dev_return(b);
	CHECK("kapi_dev_return", ret == 0, ret);
	CHECK("kapi_dev_no_lost_on_return",
	      atomic_read(&lend_lost_calls) == 0,
	      atomic_read(&lend_lost_calls));
out:
	kfree(e);
}

/*
 * The kept borrow: a write to <debugfs>/scif_kapi_test/borrow borrows
 * this node's own lent function, exclusively, with lend_ops.
 */
static ssize_t borrow_write(struct file *f, const char __user *buf,
			    size_t len, loff_t *pos)
{
	struct scif_dev_filter any = { .vendor = 0xffff, .device = 0xffff };
	struct scif_dev_borrow *b;
	struct scif_dev_entry *e;
	u16 self = 0;
	int n;

	if (lend_borrow)
		return -EBUSY;
	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	scif_get_node_ids(NULL, 0, &self);
	n = scif_dev_list(self, &any, e, 1);
	if (n == 1) {
		b = scif_dev_borrow(e->fdid, SCIF_DEV_EXCLUSIVE, &lend_ops,
				    NULL);
		n = IS_ERR(b) ? PTR_ERR(b) : 0;
		if (!n)
			lend_borrow = b;
	} else if (n >= 0) {
		n = -ENOENT;
	}
	kfree(e);
	return n ? n : len;
}

static const struct file_operations borrow_fops = {
	.owner = THIS_MODULE,
	.write = borrow_write,
};

static int lost_show(struct seq_file *s, void *unused)
{
	seq_printf(s, "%d %d\n", atomic_read(&lend_lost_calls),
		   READ_ONCE(lend_lost_why));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(lost);

static int results_show(struct seq_file *s, void *unused)
{
	seq_printf(s, "TAP version 13\n1..%d\n%s", nr_tests, results);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(results);

static int __init scif_kapi_test_init(void)
{
	seq_buf_init(&out, results, sizeof(results));
	if (lend) {
		test_lend();
	} else if (pci) {
		test_register_pci();
	} else if (withdrawn) {
		test_withdrawn();
	} else if (close_waits) {
		test_close_waits();
	} else if (cross_serve) {
		cross_server();
	} else if (cross_peer >= 0) {
		cross_client();
	} else {
		test_bind();
		test_connect_errors();
		test_bad_args();
		test_connection();
		test_nodes_and_clients();
	}
	dir = debugfs_create_dir("scif_kapi_test", NULL);
	debugfs_create_file("results", 0400, dir, NULL, &results_fops);
	if (cross_loss && cross_peer >= 0)
		debugfs_create_file("dma_lost", 0400, dir, NULL,
				    &dma_lost_fops);
	if (lend) {
		debugfs_create_file("borrow", 0200, dir, NULL, &borrow_fops);
		debugfs_create_file("lost", 0400, dir, NULL, &lost_fops);
	}
	return 0;
}

static void __exit scif_kapi_test_exit(void)
{
	debugfs_remove_recursive(dir);
	scif_dma_unmap(loss_map);
	if (loss_ep)
		scif_close(loss_ep);
	if (dma_pdev)
		platform_device_unregister(dma_pdev);
	if (lend_borrow)
		scif_dev_return(lend_borrow);
}

module_init(scif_kapi_test_init);
module_exit(scif_kapi_test_exit);
MODULE_DESCRIPTION("Tests of the SCIF kernel API");
MODULE_LICENSE("GPL");
