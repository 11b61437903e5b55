// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: KUnit suites for the code that checks what a peer writes
 * (ring counts, REGISTER messages, run lists, fence messages), for the
 * placement of windows in the registered address space, for the
 * answers the node-message router gives to messages for endpoints that
 * are gone, and for the reuse of queue-pair areas.
 *
 * Built as scif_kunit.ko only in the test build on a kernel with KUnit
 * (see Kbuild); tools/testing/selftests/scif/scif_kunit.sh loads it after
 * scif.ko, which runs the suites, and reports their results.
 */
#include <kunit/test.h>
#include <linux/gfp.h>
#include <linux/io.h>
#include <linux/ioport.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "scif_devices.h"
#include "scif_epd.h"
#include "scif_nodemsg.h"
#include "scif_lmap.h"
#include "scif_nodes.h"
#include "scif_proto.h"
#include "scif_rb.h"
#include "scif_rma.h"

/* ---- ring counts ---- */

struct scif_rb_ctx {
	struct scif_qp_shm *local;
	struct scif_qp_shm *remote;
	struct scif_rb rb;
};

static int scif_rb_kunit_init(struct kunit *test)
{
	struct scif_rb_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	if (!c)
		return -ENOMEM;
	c->local = kunit_kzalloc(test, sizeof(*c->local), GFP_KERNEL);
	c->remote = kunit_kzalloc(test, sizeof(*c->remote), GFP_KERNEL);
	if (!c->local || !c->remote)
		return -ENOMEM;
	c->rb.local = c->local;
	c->rb.remote = c->remote;
	c->rb.rx_size = 4096;
	c->rb.tx_size = 4096;
	test->priv = c;
	return 0;
}

static void scif_rb_rx_counts(struct kunit *test)
{
	struct scif_rb_ctx *c = test->priv;
	u32 avail = 77;

	c->rb.rx_read = 100;
	c->local->rx_write = 100;
	KUNIT_EXPECT_EQ(test, scif_rb_rx_avail(&c->rb, &avail), 0);
	KUNIT_EXPECT_EQ(test, avail, 0U);

	c->local->rx_write = 100 + 4096;
	KUNIT_EXPECT_EQ(test, scif_rb_rx_avail(&c->rb, &avail), 0);
	KUNIT_EXPECT_EQ(test, avail, 4096U);

	/* One byte more than the ring holds, and a count gone backwards. */
	avail = 77;
	c->local->rx_write = 100 + 4097;
	KUNIT_EXPECT_EQ(test, scif_rb_rx_avail(&c->rb, &avail), -EPROTO);
	c->local->rx_write = 99;
	KUNIT_EXPECT_EQ(test, scif_rb_rx_avail(&c->rb, &avail), -EPROTO);
	KUNIT_EXPECT_EQ(test, avail, 77U);

	/* The counts wrap at 2^32. */
	c->rb.rx_read = 0xfffffff0;
	c->local->rx_write = 0x10;
	KUNIT_EXPECT_EQ(test, scif_rb_rx_avail(&c->rb, &avail), 0);
	KUNIT_EXPECT_EQ(test, avail, 0x20U);
	c->local->rx_write = 0xfffffff0 + 4097;
	KUNIT_EXPECT_EQ(test, scif_rb_rx_avail(&c->rb, &avail), -EPROTO);
}

static void scif_rb_tx_counts(struct kunit *test)
{
	struct scif_rb_ctx *c = test->priv;

	c->rb.tx_write = 5000;
	c->local->tx_read = 5000;
	KUNIT_EXPECT_EQ(test, scif_rb_tx_room(&c->rb), 4096U);
	KUNIT_EXPECT_FALSE(test, scif_rb_tx_broken(&c->rb));

	c->local->tx_read = 5000 - 4096;
	KUNIT_EXPECT_EQ(test, scif_rb_tx_room(&c->rb), 0U);
	KUNIT_EXPECT_FALSE(test, scif_rb_tx_broken(&c->rb));

	/* Read a byte never sent, or fall behind by more than the ring. */
	c->local->tx_read = 5001;
	KUNIT_EXPECT_EQ(test, scif_rb_tx_room(&c->rb), 0U);
	KUNIT_EXPECT_TRUE(test, scif_rb_tx_broken(&c->rb));
	c->local->tx_read = 5000 - 4097;
	KUNIT_EXPECT_EQ(test, scif_rb_tx_room(&c->rb), 0U);
	KUNIT_EXPECT_TRUE(test, scif_rb_tx_broken(&c->rb));

	/* Wrapping counts. */
	c->rb.tx_write = 0x100;
	c->local->tx_read = 0xffffff00;
	KUNIT_EXPECT_EQ(test, scif_rb_tx_room(&c->rb), 4096U - 0x200);
	KUNIT_EXPECT_FALSE(test, scif_rb_tx_broken(&c->rb));

	/* Not mapped: no room, and nothing to call broken. */
	c->rb.remote = NULL;
	KUNIT_EXPECT_EQ(test, scif_rb_tx_room(&c->rb), 0U);
	KUNIT_EXPECT_FALSE(test, scif_rb_tx_broken(&c->rb));
}

static struct kunit_case scif_rb_cases[] = {
	KUNIT_CASE(scif_rb_rx_counts),
	KUNIT_CASE(scif_rb_tx_counts),
	{}
};

static struct kunit_suite scif_rb_suite = {
	.name = "scif_ring_counts",
	.init = scif_rb_kunit_init,
	.test_cases = scif_rb_cases,
};

/* ---- REGISTER messages ---- */

static void scif_reg_msg_fill(struct scif_msg *msg, u64 offset, u64 pages,
			      u64 runs, u64 prot)
{
	memset(msg, 0, sizeof(*msg));
	msg->op = SCIF_MSG_REGISTER;
	msg->arg[0] = 1;
	msg->arg[1] = offset;
	msg->arg[2] = pages;
	msg->arg[3] = runs << 32 | prot;
	msg->arg[4] = PAGE_SIZE;
}

static bool scif_reg_ok(u64 offset, u64 pages, u64 runs, u64 prot)
{
	struct scif_msg msg;

	scif_reg_msg_fill(&msg, offset, pages, runs, prot);
	return scif_window_register_msg_ok(&msg);
}

static void scif_register_msg_fields(struct kunit *test)
{
	const u64 rw = SCIF_PROT_READ | SCIF_PROT_WRITE;
	const u64 last = SCIF_RMA_MAX_PAGE;

	KUNIT_EXPECT_TRUE(test, scif_reg_ok(0, 1, 1, SCIF_PROT_READ));
	KUNIT_EXPECT_TRUE(test, scif_reg_ok(PAGE_SIZE * 7, 16, 3, rw));
	KUNIT_EXPECT_TRUE(test, scif_reg_ok(0, 16, 16, 0));
	/* The last page of the address space, and the window ending there. */
	KUNIT_EXPECT_TRUE(test, scif_reg_ok(last << PAGE_SHIFT, 1, 1, rw));
	KUNIT_EXPECT_TRUE(test, scif_reg_ok((last - 3) << PAGE_SHIFT, 4, 1, rw));

	KUNIT_EXPECT_FALSE(test, scif_reg_ok(1, 1, 1, rw));
	KUNIT_EXPECT_FALSE(test, scif_reg_ok(PAGE_SIZE - 1, 1, 1, rw));
	KUNIT_EXPECT_FALSE(test, scif_reg_ok((u64)S64_MAX + 1, 1, 1, rw));
	KUNIT_EXPECT_FALSE(test, scif_reg_ok(U64_MAX & PAGE_MASK, 1, 1, rw));
	KUNIT_EXPECT_FALSE(test, scif_reg_ok((last - 3) << PAGE_SHIFT, 5, 1, rw));
	KUNIT_EXPECT_FALSE(test, scif_reg_ok(0, 0, 1, rw));
	KUNIT_EXPECT_FALSE(test, scif_reg_ok(0, SCIF_WINDOW_MAX_PAGES + 1, 1,
					     rw));
	KUNIT_EXPECT_FALSE(test, scif_reg_ok(0, 1, 1, 4));
	KUNIT_EXPECT_FALSE(test, scif_reg_ok(0, 1, 1, 0xffffffff));
	KUNIT_EXPECT_FALSE(test, scif_reg_ok(0, 1, 0, rw));
	KUNIT_EXPECT_FALSE(test, scif_reg_ok(0, 4, 5, rw));
	KUNIT_EXPECT_FALSE(test, scif_reg_ok(0, SCIF_WINDOW_MAX_PAGES,
					     SCIF_WINDOW_MAX_RUNS + 1, rw));
}

static struct kunit_case scif_register_cases[] = {
	KUNIT_CASE(scif_register_msg_fields),
	{}
};

static struct kunit_suite scif_register_suite = {
	.name = "scif_register_msg",
	.test_cases = scif_register_cases,
};

/*
 * ---- run lists ----
 *
 * The "peer" is this node through the loopback bus, so that the addresses
 * in a run list are physical addresses of pages the test allocated.
 */

#define SCIF_KUNIT_DATA_PAGES	8

/* Addresses a test hands the "peer", each mapped through the bus. */
#define SCIF_KUNIT_MAPS		32

struct scif_runlist_ctx {
	struct scif_node *node;
	struct scif_runlist *rl[2];
	void *data;
	struct scif_rwindow rw;
	struct scif_lmap lmap;
};

static int scif_runlist_kunit_init(struct kunit *test)
{
	struct scif_runlist_ctx *c;
	u16 self;

	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	test->priv = c;
	if (scif_get_node_ids(NULL, 0, &self) < 0)
		return -ENODEV;
	c->node = scif_node_get_online(self);
	if (!c->node)
		return -ENODEV;
	if (scif_lmap_init(&c->lmap, SCIF_KUNIT_MAPS, GFP_KERNEL))
		return -ENOMEM;
	c->rl[0] = (void *)get_zeroed_page(GFP_KERNEL);
	c->rl[1] = (void *)get_zeroed_page(GFP_KERNEL);
	c->data = alloc_pages_exact(SCIF_KUNIT_DATA_PAGES * PAGE_SIZE,
				    GFP_KERNEL | __GFP_ZERO);
	test->priv = c;
	if (!c->rl[0] || !c->rl[1] || !c->data)
		return -ENOMEM;
	c->rw.node = c->node;
	c->rw.nr_pages = SCIF_KUNIT_DATA_PAGES;
	return 0;
}

static void scif_runlist_kunit_exit(struct kunit *test)
{
	struct scif_runlist_ctx *c = test->priv;

	if (!c)
		return;
	/* Unmapped before the memory goes. */
	scif_lmap_free(&c->lmap);
	free_page((unsigned long)c->rl[0]);
	free_page((unsigned long)c->rl[1]);
	if (c->data)
		free_pages_exact(c->data, SCIF_KUNIT_DATA_PAGES * PAGE_SIZE);
}

/*
 * The address the "peer" uses for @len bytes at @va, mapped for it as
 * the core maps what it hands a peer; 0 (never valid) if that fails.
 */
static u64 scif_kunit_map(struct scif_runlist_ctx *c, void *va, size_t len)
{
	u64 addr;

	if (scif_node_map_local(c->node, &c->lmap, virt_to_phys(va), len,
				&addr))
		return 0;
	return addr;
}

static u64 scif_kunit_addr(struct scif_runlist_ctx *c, void *va)
{
	return scif_kunit_map(c, va, PAGE_SIZE);
}

/* Run @i of @c's data: pages [first, first + n). */
static void scif_kunit_run(struct scif_runlist_ctx *c, int page, int i,
			   unsigned int first, unsigned int n)
{
	c->rl[page]->run[i].addr = scif_kunit_map(c, c->data +
						  first * PAGE_SIZE,
						  (size_t)max(n, 1U) * PAGE_SIZE);
	c->rl[page]->run[i].len = (u64)n * PAGE_SIZE;
}

/* Read @c's run list as a window of @nr_runs runs; keep what was read. */
static int scif_kunit_read_keep(struct scif_runlist_ctx *c,
				unsigned long nr_runs)
{
	c->rw.nr_runs = nr_runs;
	c->rw.runs = NULL;
	return scif_rwindow_read_runs(&c->rw, scif_kunit_addr(c, c->rl[0]));
}

static int scif_kunit_read(struct scif_runlist_ctx *c, unsigned long nr_runs)
{
	int err = scif_kunit_read_keep(c, nr_runs);

	if (!err) {
		/* Mapped through the loopback bus: nothing to unmap. */
		kvfree(c->rw.runs);
	}
	return err;
}

static void scif_runlist_good(struct kunit *test)
{
	struct scif_runlist_ctx *c = test->priv;

	scif_kunit_run(c, 0, 0, 0, 3);
	scif_kunit_run(c, 0, 1, 3, 5);
	c->rl[0]->nr = 2;
	KUNIT_ASSERT_EQ(test, scif_kunit_read_keep(c, 2), 0);
	KUNIT_EXPECT_EQ(test, c->rw.runs[0].woff, 0ULL);
	KUNIT_EXPECT_EQ(test, c->rw.runs[0].len, 3ULL * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, c->rw.runs[1].woff, 3ULL * PAGE_SIZE);
	KUNIT_EXPECT_PTR_EQ(test, c->rw.runs[1].va, c->data + 3 * PAGE_SIZE);
	kvfree(c->rw.runs);

	/* Two pages of run list. */
	c->rl[0]->nr = 1;
	c->rl[0]->next = scif_kunit_addr(c, c->rl[1]);
	scif_kunit_run(c, 1, 0, 3, 5);
	c->rl[1]->nr = 1;
	KUNIT_EXPECT_EQ(test, scif_kunit_read(c, 2), 0);
}

static void scif_runlist_bad_counts(struct kunit *test)
{
	struct scif_runlist_ctx *c = test->priv;

	scif_kunit_run(c, 0, 0, 0, 8);
	c->rl[0]->nr = 0;
	KUNIT_EXPECT_EQ(test, scif_kunit_read(c, 1), -EINVAL);
	c->rl[0]->nr = SCIF_RUNLIST_RUNS + 1;
	KUNIT_EXPECT_EQ(test, scif_kunit_read(c, SCIF_RUNLIST_RUNS + 1),
			-EINVAL);
	/* More runs on the page than the REGISTER message announced. */
	c->rl[0]->nr = 2;
	scif_kunit_run(c, 0, 1, 0, 1);
	KUNIT_EXPECT_EQ(test, scif_kunit_read(c, 1), -EINVAL);
	/* Fewer: the list goes on to a page that is not there. */
	c->rl[0]->nr = 1;
	c->rl[0]->next = 0;
	KUNIT_EXPECT_EQ(test, scif_kunit_read(c, 2), -EINVAL);
	/* A list that points back at itself ends with the announced count. */
	scif_kunit_run(c, 0, 0, 0, 1);
	c->rl[0]->next = scif_kunit_addr(c, c->rl[0]);
	KUNIT_EXPECT_EQ(test, scif_kunit_read(c, 3), -EINVAL);
}

static void scif_runlist_bad_runs(struct kunit *test)
{
	struct scif_runlist_ctx *c = test->priv;

	c->rl[0]->nr = 1;
	/* Shorter, longer than the window, empty, unaligned, unreachable. */
	scif_kunit_run(c, 0, 0, 0, 7);
	KUNIT_EXPECT_EQ(test, scif_kunit_read(c, 1), -EINVAL);
	scif_kunit_run(c, 0, 0, 0, 9);
	KUNIT_EXPECT_EQ(test, scif_kunit_read(c, 1), -EINVAL);
	scif_kunit_run(c, 0, 0, 0, 0);
	KUNIT_EXPECT_EQ(test, scif_kunit_read(c, 1), -EINVAL);
	scif_kunit_run(c, 0, 0, 0, 8);
	c->rl[0]->run[0].addr += 8;
	KUNIT_EXPECT_EQ(test, scif_kunit_read(c, 1), -EINVAL);
	scif_kunit_run(c, 0, 0, 0, 8);
	c->rl[0]->run[0].len -= 8;
	KUNIT_EXPECT_EQ(test, scif_kunit_read(c, 1), -EINVAL);
	c->rl[0]->run[0].addr = U64_MAX & PAGE_MASK;
	c->rl[0]->run[0].len = 8 * PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, scif_kunit_read(c, 1), -EINVAL);
	/* A second run that would overflow the window's byte count. */
	c->rl[0]->nr = 2;
	scif_kunit_run(c, 0, 0, 0, 4);
	c->rl[0]->run[1].addr = scif_kunit_addr(c, c->data);
	c->rl[0]->run[1].len = U64_MAX & PAGE_MASK;
	KUNIT_EXPECT_EQ(test, scif_kunit_read(c, 2), -EINVAL);
}

static void scif_runlist_bad_list_addr(struct kunit *test)
{
	struct scif_runlist_ctx *c = test->priv;
	u64 list = scif_kunit_addr(c, c->rl[0]);

	c->rw.nr_runs = 1;
	KUNIT_EXPECT_EQ(test, scif_rwindow_read_runs(&c->rw, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, scif_rwindow_read_runs(&c->rw, list + 16),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, scif_rwindow_read_runs(&c->rw,
						     U64_MAX & PAGE_MASK),
			-EINVAL);
}

static struct kunit_case scif_runlist_cases[] = {
	KUNIT_CASE(scif_runlist_good),
	KUNIT_CASE(scif_runlist_bad_counts),
	KUNIT_CASE(scif_runlist_bad_runs),
	KUNIT_CASE(scif_runlist_bad_list_addr),
	{}
};

static struct kunit_suite scif_runlist_suite = {
	.name = "scif_runlist",
	.init = scif_runlist_kunit_init,
	.exit = scif_runlist_kunit_exit,
	.test_cases = scif_runlist_cases,
};

/* ---- fence messages and marks ---- */

static void scif_fence_offsets(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, scif_fence_off_check(SCIF_FENCE_NO_OFF), 0);
	KUNIT_EXPECT_EQ(test, scif_fence_off_check(0), 0);
	KUNIT_EXPECT_EQ(test, scif_fence_off_check(4), 0);
	KUNIT_EXPECT_EQ(test, scif_fence_off_check(2), -EINVAL);
	KUNIT_EXPECT_EQ(test, scif_fence_off_check(S64_MAX - 7), 0);
	KUNIT_EXPECT_EQ(test, scif_fence_off_check(S64_MAX - 3), -ENXIO);
	KUNIT_EXPECT_EQ(test, scif_fence_off_check((u64)S64_MAX + 1), -ENXIO);
	KUNIT_EXPECT_EQ(test, scif_fence_off_check(U64_MAX - 3), -ENXIO);

	KUNIT_EXPECT_EQ(test, scif_fence_sig_off(0), 0);
	KUNIT_EXPECT_EQ(test, scif_fence_sig_off(8), 0);
	KUNIT_EXPECT_EQ(test, scif_fence_sig_off(6), -EINVAL);
	KUNIT_EXPECT_EQ(test, scif_fence_sig_off(-8), -ENXIO);
	KUNIT_EXPECT_EQ(test, scif_fence_sig_off(S64_MAX - 7), 0);
	KUNIT_EXPECT_EQ(test, scif_fence_sig_off(S64_MAX - 3), -ENXIO);
}

static void scif_fence_marks(struct kunit *test)
{
	struct scif_endpt *ep = kunit_kzalloc(test, sizeof(*ep), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ep);
	spin_lock_init(&ep->rma.eng_lock);

	ep->rma.issued = 10;
	KUNIT_EXPECT_EQ(test, scif_fence_seq(ep, 10), 10ULL);
	KUNIT_EXPECT_EQ(test, scif_fence_seq(ep, 3), 3ULL);
	/* A mark no number issued so far can have given: no RMA. */
	KUNIT_EXPECT_EQ(test, scif_fence_seq(ep, 11), 0ULL);
	KUNIT_EXPECT_EQ(test, scif_fence_seq(ep, 0x7fffffff), 0ULL);

	/* Past 2^31 RMAs the mark is the low 31 bits of the number. */
	ep->rma.issued = 0x180000005ULL;
	KUNIT_EXPECT_EQ(test, scif_fence_seq(ep, 3), 0x180000003ULL);
	KUNIT_EXPECT_EQ(test, scif_fence_seq(ep, 5), 0x180000005ULL);
	KUNIT_EXPECT_EQ(test, scif_fence_seq(ep, 6), 0x100000006ULL);
	ep->rma.issued = 0;
	KUNIT_EXPECT_EQ(test, scif_fence_seq(ep, 0), 0ULL);
	KUNIT_EXPECT_EQ(test, scif_fence_seq(ep, 1), 0ULL);
}

static struct kunit_case scif_fence_cases[] = {
	KUNIT_CASE(scif_fence_offsets),
	KUNIT_CASE(scif_fence_marks),
	{}
};

static struct kunit_suite scif_fence_suite = {
	.name = "scif_fence_msg",
	.test_cases = scif_fence_cases,
};

/* ---- window placement ---- */

struct scif_place_ctx {
	struct scif_endpt *ep;
	struct scif_window w[4];
};

static int scif_place_kunit_init(struct kunit *test)
{
	struct scif_place_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	if (!c)
		return -ENOMEM;
	c->ep = kunit_kzalloc(test, sizeof(*c->ep), GFP_KERNEL);
	if (!c->ep)
		return -ENOMEM;
	mutex_init(&c->ep->rma.lock);
	mt_init_flags(&c->ep->rma.local, MT_FLAGS_ALLOC_RANGE);
	test->priv = c;
	return 0;
}

static void scif_place_kunit_exit(struct kunit *test)
{
	struct scif_place_ctx *c = test->priv;

	if (c)
		mtree_destroy(&c->ep->rma.local);
}

static int scif_kunit_place(struct scif_place_ctx *c, int i,
			    unsigned long pages, s64 offset, bool fixed)
{
	int err;

	c->w[i].nr_pages = pages;
	c->w[i].offset = U64_MAX;
	mutex_lock(&c->ep->rma.lock);
	err = scif_window_place(c->ep, &c->w[i], offset, fixed);
	mutex_unlock(&c->ep->rma.lock);
	return err;
}

static void scif_place_fixed(struct kunit *test)
{
	struct scif_place_ctx *c = test->priv;
	const s64 last = (s64)SCIF_RMA_MAX_PAGE << PAGE_SHIFT;

	KUNIT_EXPECT_EQ(test, scif_kunit_place(c, 0, 4, 0, true), 0);
	KUNIT_EXPECT_EQ(test, c->w[0].offset, 0ULL);
	KUNIT_EXPECT_EQ(test, scif_kunit_place(c, 1, 1, 3 * PAGE_SIZE, true),
			-EADDRINUSE);
	KUNIT_EXPECT_EQ(test, scif_kunit_place(c, 1, 1, 4 * PAGE_SIZE, true),
			0);
	/* The very end of the address space, and one page past it. */
	KUNIT_EXPECT_EQ(test, scif_kunit_place(c, 2, 1, last, true), 0);
	KUNIT_EXPECT_EQ(test, c->w[2].offset, (u64)last);
	KUNIT_EXPECT_EQ(test, scif_kunit_place(c, 3, 2, last, true), -EINVAL);
}

static void scif_place_hint(struct kunit *test)
{
	struct scif_place_ctx *c = test->priv;
	const s64 last = (s64)SCIF_RMA_MAX_PAGE << PAGE_SHIFT;

	/* No hint: the lowest free pages. */
	KUNIT_EXPECT_EQ(test, scif_kunit_place(c, 0, 2, 0, false), 0);
	KUNIT_EXPECT_EQ(test, c->w[0].offset, 0ULL);
	/* A free hint is taken as it is. */
	KUNIT_EXPECT_EQ(test, scif_kunit_place(c, 1, 2, 16 * PAGE_SIZE,
					       false), 0);
	KUNIT_EXPECT_EQ(test, c->w[1].offset, 16ULL * PAGE_SIZE);
	/* A taken one: the next room above it. */
	KUNIT_EXPECT_EQ(test, scif_kunit_place(c, 2, 4, 17 * PAGE_SIZE,
					       false), 0);
	KUNIT_EXPECT_EQ(test, c->w[2].offset, 18ULL * PAGE_SIZE);
	/* No room above the hint: anywhere, lowest first. */
	KUNIT_EXPECT_EQ(test, scif_kunit_place(c, 3, 3, last, false), 0);
	KUNIT_EXPECT_EQ(test, c->w[3].offset, 2ULL * PAGE_SIZE);
}

static void scif_place_full(struct kunit *test)
{
	struct scif_place_ctx *c = test->priv;

	/* The whole address space in one window; then nothing fits. */
	KUNIT_EXPECT_EQ(test, scif_kunit_place(c, 0, SCIF_WINDOW_MAX_PAGES,
					       0, true), 0);
	KUNIT_EXPECT_EQ(test, scif_kunit_place(c, 1, SCIF_WINDOW_MAX_PAGES,
					       0, false), 0);
	KUNIT_EXPECT_EQ(test, c->w[1].offset,
			(u64)SCIF_WINDOW_MAX_PAGES << PAGE_SHIFT);
	KUNIT_EXPECT_EQ(test, scif_kunit_place(c, 2, SCIF_RMA_MAX_PAGE, 0,
					       false), -ENOMEM);
}

static struct kunit_case scif_place_cases[] = {
	KUNIT_CASE(scif_place_fixed),
	KUNIT_CASE(scif_place_hint),
	KUNIT_CASE(scif_place_full),
	{}
};

static struct kunit_suite scif_place_suite = {
	.name = "scif_window_place",
	.init = scif_place_kunit_init,
	.exit = scif_place_kunit_exit,
	.test_cases = scif_place_cases,
};

/* ---- answers to orphans (scif_nodemsg.c) ---- */

/* What an orphan of @op gets: its type, echoed arguments, errno. */
static const struct {
	u32 op;
	u32 reply;
	unsigned int echo;
	u64 err;
} scif_orphan_answers[] = {
	{ SCIF_MSG_ACCEPT, SCIF_MSG_DISCONNECT, 0, 0 },
	{ SCIF_MSG_DISCONNECT, SCIF_MSG_DISC_ACK, 0, 0 },
	{ SCIF_MSG_REGISTER, SCIF_MSG_REGISTER_ACK, 2, ECONNRESET },
	{ SCIF_MSG_UNREGISTER, SCIF_MSG_UNREGISTER_ACK, 2, 0 },
	{ SCIF_MSG_FENCE_MARK, SCIF_MSG_FENCE_ACK, 1, ECONNRESET },
	{ SCIF_MSG_FENCE_WAIT, SCIF_MSG_FENCE_ACK, 1, ECONNRESET },
	{ SCIF_MSG_FENCE_SIGNAL, SCIF_MSG_FENCE_ACK, 1, ECONNRESET },
};

static void scif_orphan_msg(struct scif_msg *msg, u32 op, u64 src)
{
	unsigned int i;

	memset(msg, 0xa5, sizeof(*msg));
	msg->op = op;
	msg->pad = 0;
	msg->dst = 0x100000007ULL;
	msg->src = src;
	for (i = 0; i < ARRAY_SIZE(msg->arg); i++)
		msg->arg[i] = 0x1000 + i;
}

static void scif_orphan_answered(struct kunit *test)
{
	struct scif_msg msg, reply;
	unsigned int i, k;

	for (i = 0; i < ARRAY_SIZE(scif_orphan_answers); i++) {
		scif_orphan_msg(&msg, scif_orphan_answers[i].op,
				0x200000009ULL);
		memset(&reply, 0xff, sizeof(reply));
		KUNIT_ASSERT_TRUE(test, scif_nodemsg_orphan_reply(&msg, &reply));
		KUNIT_EXPECT_EQ(test, reply.op, scif_orphan_answers[i].reply);
		KUNIT_EXPECT_EQ(test, reply.pad, 0U);
		KUNIT_EXPECT_EQ(test, reply.dst, 0x200000009ULL);
		KUNIT_EXPECT_EQ(test, reply.src, 0x100000007ULL);
		for (k = 0; k < ARRAY_SIZE(reply.arg); k++) {
			u64 want = 0;

			if (k < scif_orphan_answers[i].echo)
				want = 0x1000 + k;
			else if (k == 2)
				want = scif_orphan_answers[i].err;
			KUNIT_EXPECT_EQ_MSG(test, reply.arg[k], want,
					    "op %u arg %u",
					    scif_orphan_answers[i].op, k);
		}
		/* A sender that did not name itself gets nothing. */
		scif_orphan_msg(&msg, scif_orphan_answers[i].op, 0);
		KUNIT_EXPECT_FALSE(test, scif_nodemsg_orphan_reply(&msg, &reply));
	}
}

static void scif_orphan_unanswered(struct kunit *test)
{
	static const u32 ops[] = {
		0, SCIF_MSG_CONNECT, SCIF_MSG_REJECT, SCIF_MSG_DISC_ACK,
		SCIF_MSG_DATA, SCIF_MSG_SPACE, SCIF_MSG_REGISTER_ACK,
		SCIF_MSG_UNREGISTER_ACK, SCIF_MSG_FENCE_ACK, SCIF_MSG_NR,
		SCIF_MSG_NR + 1, U32_MAX,
	};
	struct scif_msg msg, reply;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		scif_orphan_msg(&msg, ops[i], 0x200000009ULL);
		KUNIT_EXPECT_FALSE_MSG(test,
				       scif_nodemsg_orphan_reply(&msg, &reply),
				       "op %u", ops[i]);
	}
}

static struct kunit_case scif_orphan_cases[] = {
	KUNIT_CASE(scif_orphan_answered),
	KUNIT_CASE(scif_orphan_unanswered),
	{}
};

static struct kunit_suite scif_orphan_suite = {
	.name = "scif_nodemsg_orphan",
	.test_cases = scif_orphan_cases,
};

/* ---- errnos a peer answers with (scif_nodemsg.c) ---- */

static void scif_node_errno_checked(struct kunit *test)
{
	static const int some[] = { ENOMEM, ENOTCONN, 0 };

	KUNIT_EXPECT_EQ(test, scif_node_errno(0, true, some), 0);
	KUNIT_EXPECT_EQ(test, scif_node_errno(0, false, some), -EPROTO);
	KUNIT_EXPECT_EQ(test, scif_node_errno(ENOMEM, false, some), -ENOMEM);
	KUNIT_EXPECT_EQ(test, scif_node_errno(ENOTCONN, true, some),
			-ECONNRESET);
	KUNIT_EXPECT_EQ(test, scif_node_errno(EINVAL, true, some), -EPROTO);
	KUNIT_EXPECT_EQ(test, scif_node_errno(ENOMEM | BIT_ULL(32), true, some),
			-EPROTO);
	KUNIT_EXPECT_EQ(test, scif_node_errno((u64)-ENOMEM, true, some),
			-EPROTO);
	KUNIT_EXPECT_EQ(test, scif_node_errno(U64_MAX, true, some), -EPROTO);
}

static struct kunit_case scif_node_errno_cases[] = {
	KUNIT_CASE(scif_node_errno_checked),
	{}
};

static struct kunit_suite scif_node_errno_suite = {
	.name = "scif_node_errno",
	.test_cases = scif_node_errno_cases,
};

/* ---- queue-pair areas ---- */

/*
 * An area freed and taken again comes back zeroed, to the end of its last
 * page (processes map whole pages).
 */
static void scif_qp_area_reused_zeroed(struct kunit *test)
{
	const u32 rx_size = SZ_8K;
	size_t len = PAGE_ALIGN(scif_qp_len(rx_size)), i;
	struct scif_qp_shm *a, *b;
	const u8 *p;

	a = scif_qp_alloc_gfp(rx_size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	memset(a, 0xa5, len);
	scif_qp_free(a, rx_size);
	b = scif_qp_alloc_gfp(rx_size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b);
	if (b != a)
		kunit_info(test, "the area was not kept (the cache was full)");
	p = (const u8 *)b;
	for (i = 0; i < len && !p[i]; i++)
		;
	KUNIT_EXPECT_EQ(test, i, len);
	scif_qp_free(b, rx_size);
}

static struct kunit_case scif_qp_area_cases[] = {
	KUNIT_CASE(scif_qp_area_reused_zeroed),
	{}
};

static struct kunit_suite scif_qp_area_suite = {
	.name = "scif_qp_area",
	.test_cases = scif_qp_area_cases,
};

/* ---- device-list entries and filters (scif_devices.c) ---- */

/* A well-formed entry of node 3, as a lender sends it. */
static void scif_dev_good_entry(struct scif_dev_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->fdid = 3ULL << 48 | 0x1234ULL << 32 | 7;
	e->node = 3;
	e->pci_class = 0x010802;
	e->vendor = 0x1b36;
	e->device = 0x0010;
	e->nr_bars = 3;
	e->bar_size[0] = SZ_16K;
	e->bar_flags[0] = SCIF_DEV_BAR_MEM | SCIF_DEV_BAR_64;
	e->bar_size[2] = 8;
	e->modes = SCIF_DEV_MODE_EXCLUSIVE | SCIF_DEV_MODE_SHARED;
	e->state = SCIF_DEV_STATE_SHARED;
	strscpy(e->name, "0000:00:04.0", sizeof(e->name));
}

static void scif_dev_wire_good(struct kunit *test)
{
	struct scif_dev_entry e;

	scif_dev_good_entry(&e);
	KUNIT_EXPECT_TRUE(test, scif_dev_entry_valid(&e, 3));
	e.state = SCIF_DEV_STATE_DIRTY;
	e.nr_bars = 6;
	e.bar_size[5] = SZ_1G;
	e.bar_flags[5] = SCIF_DEV_BAR_MEM | SCIF_DEV_BAR_PREFETCH;
	memset(e.name, 'a', sizeof(e.name) - 1);
	e.name[15] = 0;
	KUNIT_EXPECT_TRUE(test, scif_dev_entry_valid(&e, 3));
}

static void scif_dev_wire_bad(struct kunit *test)
{
	struct scif_dev_entry e;

	scif_dev_good_entry(&e);
	KUNIT_EXPECT_FALSE(test, scif_dev_entry_valid(&e, 4));	/* foreign */
	e.fdid = 4ULL << 48;
	KUNIT_EXPECT_FALSE(test, scif_dev_entry_valid(&e, 3));
	scif_dev_good_entry(&e);
	e.nr_bars = 7;
	KUNIT_EXPECT_FALSE(test, scif_dev_entry_valid(&e, 3));
	scif_dev_good_entry(&e);
	e.bar_size[0] = 3 * SZ_4K;			/* not a power of 2 */
	KUNIT_EXPECT_FALSE(test, scif_dev_entry_valid(&e, 3));
	e.bar_size[0] = 8;				/* memory under 16 */
	KUNIT_EXPECT_FALSE(test, scif_dev_entry_valid(&e, 3));
	scif_dev_good_entry(&e);
	e.bar_size[4] = SZ_4K;				/* beyond nr_bars */
	KUNIT_EXPECT_FALSE(test, scif_dev_entry_valid(&e, 3));
	scif_dev_good_entry(&e);
	e.bar_flags[1] = SCIF_DEV_BAR_MEM;		/* flags, no size */
	KUNIT_EXPECT_FALSE(test, scif_dev_entry_valid(&e, 3));
	scif_dev_good_entry(&e);
	memset(e.name, 'a', sizeof(e.name));		/* unterminated */
	KUNIT_EXPECT_FALSE(test, scif_dev_entry_valid(&e, 3));
	scif_dev_good_entry(&e);
	e.modes = 0;
	KUNIT_EXPECT_FALSE(test, scif_dev_entry_valid(&e, 3));
	e.modes = 4;
	KUNIT_EXPECT_FALSE(test, scif_dev_entry_valid(&e, 3));
	scif_dev_good_entry(&e);
	e.state = SCIF_DEV_STATE_MAX + 1;
	KUNIT_EXPECT_FALSE(test, scif_dev_entry_valid(&e, 3));
	scif_dev_good_entry(&e);
	e.pci_class = 0x1000000;
	KUNIT_EXPECT_FALSE(test, scif_dev_entry_valid(&e, 3));
	scif_dev_good_entry(&e);
	e.reserved2[15] = 1;
	KUNIT_EXPECT_FALSE(test, scif_dev_entry_valid(&e, 3));
}

static void scif_dev_filter_checks(struct kunit *test)
{
	struct scif_dev_filter f = { .vendor = 0xffff, .device = 0xffff };
	struct scif_dev_entry e;

	scif_dev_good_entry(&e);
	KUNIT_EXPECT_TRUE(test, scif_dev_filter_valid(&f));
	KUNIT_EXPECT_TRUE(test, scif_dev_filter_match(&f, &e));
	f.pci_class = 0x010800;
	f.class_mask = 0xffff00;
	KUNIT_EXPECT_TRUE(test, scif_dev_filter_match(&f, &e));
	f.pci_class = 0x020000;
	KUNIT_EXPECT_FALSE(test, scif_dev_filter_match(&f, &e));
	f.pci_class = 0x0200ff;				/* outside the mask */
	KUNIT_EXPECT_FALSE(test, scif_dev_filter_valid(&f));
	f.pci_class = 0;
	f.class_mask = 0x1000000;
	KUNIT_EXPECT_FALSE(test, scif_dev_filter_valid(&f));
	f.class_mask = 0;
	f.vendor = 0x1b36;
	f.device = 0x0011;
	KUNIT_EXPECT_FALSE(test, scif_dev_filter_match(&f, &e));
	f.device = 0x0010;
	KUNIT_EXPECT_TRUE(test, scif_dev_filter_match(&f, &e));
	f.flags = SCIF_DEV_FREE;			/* e is shared */
	KUNIT_EXPECT_FALSE(test, scif_dev_filter_match(&f, &e));
	e.state = SCIF_DEV_STATE_FREE;
	KUNIT_EXPECT_TRUE(test, scif_dev_filter_match(&f, &e));
	f.flags = 2;
	KUNIT_EXPECT_FALSE(test, scif_dev_filter_valid(&f));
}

static struct kunit_case scif_dev_cases[] = {
	KUNIT_CASE(scif_dev_wire_good),
	KUNIT_CASE(scif_dev_wire_bad),
	KUNIT_CASE(scif_dev_filter_checks),
	{}
};

static struct kunit_suite scif_dev_suite = {
	.name = "scif_dev",
	.test_cases = scif_dev_cases,
};

/*
 * The BAR range checks of a device window (scif_devmem_range_check()):
 * a memory BAR with a page aligned start, a page aligned, non-empty
 * range inside it, whatever the caller asks.
 */
static void scif_devmem_ranges(struct kunit *test)
{
	const unsigned long mem = IORESOURCE_MEM, pf = mem | IORESOURCE_PREFETCH;
	const u64 base = 0xfe000000ULL, size = SZ_1M;

	KUNIT_EXPECT_EQ(test, scif_devmem_range_check(base, size, mem, 0, size), 0);
	KUNIT_EXPECT_EQ(test, scif_devmem_range_check(base, size, pf, size - PAGE_SIZE,
						      PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, scif_devmem_range_check(base, size, mem, PAGE_SIZE,
						      2 * PAGE_SIZE), 0);
	/* Not a memory BAR, none, or one not placed. */
	KUNIT_EXPECT_EQ(test, scif_devmem_range_check(base, size, IORESOURCE_IO, 0,
						      PAGE_SIZE), -EINVAL);
	KUNIT_EXPECT_EQ(test, scif_devmem_range_check(0, 0, 0, 0, PAGE_SIZE),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, scif_devmem_range_check(base, 0, mem, 0, PAGE_SIZE),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, scif_devmem_range_check(base, size,
						      mem | IORESOURCE_UNSET, 0,
						      PAGE_SIZE), -EINVAL);
	/* A BAR smaller than a page, not page aligned. */
	KUNIT_EXPECT_EQ(test, scif_devmem_range_check(base + 0x100, 0x100, mem, 0,
						      PAGE_SIZE), -EINVAL);
	/* Ranges: empty, unaligned, past the end, wrapping, too long. */
	KUNIT_EXPECT_EQ(test, scif_devmem_range_check(base, size, mem, 0, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, scif_devmem_range_check(base, size, mem, 8,
						      PAGE_SIZE), -EINVAL);
	KUNIT_EXPECT_EQ(test, scif_devmem_range_check(base, size, mem, 0, 100),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, scif_devmem_range_check(base, size, mem, size,
						      PAGE_SIZE), -EINVAL);
	KUNIT_EXPECT_EQ(test, scif_devmem_range_check(base, size, mem,
						      size - PAGE_SIZE,
						      2 * PAGE_SIZE), -EINVAL);
	KUNIT_EXPECT_EQ(test, scif_devmem_range_check(base, U64_MAX & PAGE_MASK,
						      mem, PAGE_MASK & U64_MAX,
						      2 * PAGE_SIZE), -EINVAL);
	KUNIT_EXPECT_EQ(test, scif_devmem_range_check(base, U64_MAX & PAGE_MASK,
						      mem, 0,
						      (SCIF_WINDOW_MAX_PAGES + 1) <<
						      PAGE_SHIFT), -EINVAL);
}

static struct kunit_case scif_devmem_cases[] = {
	KUNIT_CASE(scif_devmem_ranges),
	{}
};

static struct kunit_suite scif_devmem_suite = {
	.name = "scif_devmem",
	.test_cases = scif_devmem_cases,
};

kunit_test_suites(&scif_rb_suite, &scif_register_suite, &scif_runlist_suite,
		  &scif_fence_suite, &scif_place_suite, &scif_orphan_suite,
		  &scif_node_errno_suite, &scif_qp_area_suite,
		  &scif_dev_suite, &scif_devmem_suite);

MODULE_DESCRIPTION("KUnit suites of the SCIF core (test build only)");
MODULE_LICENSE("GPL");
