// SPDX-License-Identifier: GPL-2.0
/*
 * scif_ntb_hostile: a hostile peer on the other side of an NTB, for
 * scif_ntb's bootstrap and bus (test-only; scripts/scif-ntb-check.sh's
 * "hostile" run, Documentation/scif/ntb.rst).
 *
 * An ntb_client that takes the device in place of scif_ntb and, once the
 * link is up, runs these phases against the victim (scif_ntb on the other
 * port); after each it checks that the victim still keeps a valid record
 * in our scratchpads (its poll work lives on):
 *
 *  1. garbage: random values in every scratchpad of the victim's and
 *     random doorbell bits, @rounds times;
 *  2. records: records with a good check word and bad contents (the
 *     victim's own node id, node ids out of range, queue addresses
 *     outside, misaligned or past the windows, window masks and a
 *     full-reach index that do not exist), each held for a few of the
 *     victim's polls;
 *  3. flap: a new generation in every record, @rounds / 4 times, each
 *     with the "scratchpads changed" doorbell, 4 ms apart (the victim
 *     must not log a line per life);
 *  4. scribble: a valid record whose node queue is in our inbound
 *     window, which we fill with random bytes, while we write random
 *     bytes over the victim's inbound windows (its rings and node queue
 *     for us) and ring its message doorbell, for @scribble_ms;
 *  5. quiet: a new life with no node queue yet (the victim waits for
 *     it to come up), then our record cleared: the victim must drop us
 *     and draw a new generation of its own.
 *
 * What it saw goes to read-only parameters; "done" is 1 at the end.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/ntb.h>
#include <linux/pci.h>
#include <linux/prandom.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

/* scif_ntb's protocol (drivers/misc/scif/bus/scif_ntb.c). */
#define SNH_MAGIC	0x544e4353
#define SNH_VERSION	1
#define SNH_DB_MSG	BIT_ULL(0)
#define SNH_DB_BOOT	BIT_ULL(1)
#define SNH_ADDR_WIN	BIT_ULL(62)
#define SNH_ADDR_SHIFT	40
#define SNH_MAX_MWS	8
enum {
	SP_MAGIC, SP_VERSION, SP_NODE, SP_GEN, SP_QP_LO, SP_QP_HI, SP_CHECK,
	SP_COUNT
};

static unsigned int rounds = 2000;
module_param(rounds, uint, 0444);
MODULE_PARM_DESC(rounds, "Rounds of garbage (and a quarter as many generations)");

static unsigned int scribble_ms = 5000;
module_param(scribble_ms, uint, 0444);
MODULE_PARM_DESC(scribble_ms, "Milliseconds of scribbling over the windows");

static unsigned int seed = 1;
module_param(seed, uint, 0444);
MODULE_PARM_DESC(seed, "Seed of the random bytes");

static unsigned int self_node = 1;
module_param(self_node, uint, 0444);
MODULE_PARM_DESC(self_node, "The node id our valid records claim");

/* Results (read-only). */
static int done;
module_param(done, int, 0444);
MODULE_PARM_DESC(done, "1 when every phase ran, -1 if the link never came up");
static char phases_ok[64];
module_param_string(phases_ok, phases_ok, sizeof(phases_ok), 0444);
MODULE_PARM_DESC(phases_ok, "One letter per phase: y if the victim's record stayed valid after it, n if not");
static int victim_node = -1;
module_param(victim_node, int, 0444);
MODULE_PARM_DESC(victim_node, "The node id in the victim's record");
static int regen = -1;
module_param(regen, int, 0444);
MODULE_PARM_DESC(regen, "1 if the victim drew a new generation after the quiet phase, 0 if not");
static unsigned long scribbled;
module_param(scribbled, ulong, 0444);
MODULE_PARM_DESC(scribbled, "Bytes written over the victim's windows");

struct snh_rec {
	u32 magic, version, node, gen;
	u64 qp;
};

struct snh {
	struct ntb_dev *ntb;
	struct delayed_work work;
	struct rnd_state rnd;
	void *in_va;			/* our inbound window 0 */
	dma_addr_t in_dma;
	resource_size_t in_size;
	void __iomem *out[SNH_MAX_MWS];	/* the victim's inbound windows */
	resource_size_t out_size[SNH_MAX_MWS];
	int nr_out;
	u32 gen;
	int waited;
};

static struct snh *snh;

static u32 snh_check(const struct snh_rec *r)
{
	u32 v[] = { r->magic, r->version, r->node, r->gen,
		    lower_32_bits(r->qp), upper_32_bits(r->qp) };
	u32 sum = 0x5c1f0b7b;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(v); i++)
		sum = rol32(sum ^ v[i], 7) * 0x9e3779b1;
	return sum ?: 1;
}

static void snh_write(struct snh *s, const struct snh_rec *r, bool ring)
{
	struct ntb_dev *ntb = s->ntb;

	ntb_peer_spad_write(ntb, 0, SP_CHECK, 0);
	ntb_peer_spad_write(ntb, 0, SP_MAGIC, r->magic);
	ntb_peer_spad_write(ntb, 0, SP_VERSION, r->version);
	ntb_peer_spad_write(ntb, 0, SP_NODE, r->node);
	ntb_peer_spad_write(ntb, 0, SP_GEN, r->gen);
	ntb_peer_spad_write(ntb, 0, SP_QP_LO, lower_32_bits(r->qp));
	ntb_peer_spad_write(ntb, 0, SP_QP_HI, upper_32_bits(r->qp));
	wmb();	/* the fields before the check word */
	ntb_peer_spad_write(ntb, 0, SP_CHECK, snh_check(r));
	if (ring)
		ntb_peer_db_set(ntb, SNH_DB_BOOT);
}

/* The victim's record in our scratchpads, if it is valid. */
static bool snh_victim(struct snh *s, struct snh_rec *r)
{
	struct ntb_dev *ntb = s->ntb;
	u32 c = ntb_spad_read(ntb, SP_CHECK);

	r->magic = ntb_spad_read(ntb, SP_MAGIC);
	r->version = ntb_spad_read(ntb, SP_VERSION);
	r->node = ntb_spad_read(ntb, SP_NODE);
	r->gen = ntb_spad_read(ntb, SP_GEN);
	r->qp = ntb_spad_read(ntb, SP_QP_LO) |
		(u64)ntb_spad_read(ntb, SP_QP_HI) << 32;
	return r->magic == SNH_MAGIC && c == snh_check(r) &&
	       c == ntb_spad_read(ntb, SP_CHECK);
}

/* Wait up to 3 s for a valid record of the victim's; note the phase. */
static bool snh_phase_done(struct snh *s, struct snh_rec *r)
{
	int i;
	bool ok = false;

	for (i = 0; i < 150 && !ok; i++) {
		ok = snh_victim(s, r);
		if (!ok)
			msleep(20);
	}
	strlcat(phases_ok, ok ? "y" : "n", sizeof(phases_ok));
	pr_info("phase %zu: the victim's record is %s\n", strlen(phases_ok),
		ok ? "valid" : "gone");
	return ok;
}

static u32 snh_version(u32 mask, u32 full)
{
	return SNH_VERSION | mask << 16 | full << 24;
}

static struct snh_rec snh_valid(struct snh *s, u64 qp)
{
	struct snh_rec r = {
		.magic = SNH_MAGIC,
		.version = snh_version(s->in_va ? 1 : 0, 0),
		.node = self_node,
		.gen = ++s->gen ?: ++s->gen,
		.qp = qp,
	};
	return r;
}

static void snh_garbage(struct snh *s)
{
	u64 valid = ntb_db_valid_mask(s->ntb);
	int n = ntb_spad_count(s->ntb);
	unsigned int i;
	int j;

	for (i = 0; i < rounds; i++) {
		for (j = 0; j < n; j++)
			ntb_peer_spad_write(s->ntb, 0, j, prandom_u32_state(&s->rnd));
		ntb_peer_db_set(s->ntb, prandom_u32_state(&s->rnd) & valid);
		if (!(i % 64))
			cond_resched();
	}
}

static void snh_records(struct snh *s, u32 victim)
{
	u64 win0 = SNH_ADDR_WIN;
	struct snh_rec bad[] = {
		{ .node = victim, .qp = win0 },
		{ .node = U16_MAX, .qp = win0 },
		{ .node = 1000, .qp = win0 },
		{ .node = self_node, .qp = win0 | 0x10 },
		{ .node = self_node, .qp = win0 | (s->in_size - 64) },
		{ .node = self_node, .qp = win0 | s->in_size },
		{ .node = self_node, .qp = (u64)7 << SNH_ADDR_SHIFT | win0 },
		{ .node = self_node, .qp = 0x1000 },
		{ .node = self_node, .qp = U64_MAX },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct snh_rec r = snh_valid(s, bad[i].qp);

		r.node = bad[i].node;
		/* Windows we never translated; a full-reach index past all. */
		if (i % 3 == 1)
			r.version = snh_version(0xff, 0);
		if (i % 3 == 2)
			r.version = snh_version(1, 200);
		snh_write(s, &r, true);
		msleep(300);
	}
}

static void snh_flap(struct snh *s)
{
	unsigned int i;

	for (i = 0; i < rounds / 4; i++) {
		struct snh_rec r = snh_valid(s, i & 1 ? SNH_ADDR_WIN : 0);

		snh_write(s, &r, true);
		/* Long enough for the victim's poll to see most of them. */
		usleep_range(4000, 5000);
	}
}

static void snh_fill(struct snh *s, void __iomem *io, void *va, size_t len)
{
	u32 buf[64];
	size_t off;
	unsigned int i;

	for (off = 0; off + sizeof(buf) <= len; off += sizeof(buf)) {
		for (i = 0; i < ARRAY_SIZE(buf); i++)
			buf[i] = prandom_u32_state(&s->rnd);
		if (io)
			memcpy_toio(io + off, buf, sizeof(buf));
		else
			memcpy(va + off, buf, sizeof(buf));
	}
}

static void snh_scribble(struct snh *s)
{
	unsigned long end = jiffies + msecs_to_jiffies(scribble_ms);
	struct snh_rec r = snh_valid(s, SNH_ADDR_WIN);
	int w;

	snh_write(s, &r, true);
	while (time_before(jiffies, end)) {
		if (s->in_va)
			snh_fill(s, NULL, s->in_va, s->in_size);
		for (w = 0; w < s->nr_out; w++) {
			snh_fill(s, s->out[w], NULL, s->out_size[w]);
			scribbled += s->out_size[w];
		}
		ntb_peer_db_set(s->ntb, SNH_DB_MSG);
		cond_resched();
	}
}

static void snh_quiet(struct snh *s, u32 gen_before)
{
	struct snh_rec r;
	int i, j;

	for (j = 0; j < SP_COUNT; j++)
		ntb_peer_spad_write(s->ntb, 0, j, 0);
	ntb_peer_db_set(s->ntb, SNH_DB_BOOT);
	/* 30 bad reads of 100 ms each, and some slack. */
	regen = 0;
	for (i = 0; i < 100 && !regen; i++) {
		msleep(100);
		regen = snh_victim(s, &r) && r.gen != gen_before;
	}
	snh_phase_done(s, &r);
}

/* Our inbound window 0, translated, for a node queue of ours. */
static void snh_setup_windows(struct snh *s)
{
	struct device *dev = &s->ntb->pdev->dev;
	resource_size_t align, max, size;
	phys_addr_t phys;
	int w;

	if (!ntb_mw_count(s->ntb, 0) ||
	    ntb_mw_get_align(s->ntb, 0, 0, &align, NULL, &max) ||
	    ntb_peer_mw_get_addr(s->ntb, 0, NULL, &size))
		return;
	s->in_va = dma_alloc_coherent(dev, size, &s->in_dma, GFP_KERNEL);
	if (s->in_va && ntb_mw_set_trans(s->ntb, 0, 0, s->in_dma, size)) {
		dma_free_coherent(dev, size, s->in_va, s->in_dma);
		s->in_va = NULL;
	}
	s->in_size = s->in_va ? size : 0;
	for (w = 0; w < min(ntb_peer_mw_count(s->ntb), SNH_MAX_MWS); w++) {
		if (ntb_peer_mw_get_addr(s->ntb, w, &phys, &size))
			break;
		s->out[w] = ioremap_wc(phys, size);
		if (!s->out[w])
			break;
		s->out_size[w] = size;
		s->nr_out = w + 1;
	}
}

static void snh_run(struct work_struct *work)
{
	struct snh *s = container_of(work, struct snh, work.work);
	struct snh_rec v, r;

	if (!ntb_link_is_up(s->ntb, NULL, NULL)) {
		if (++s->waited < 600) {
			queue_delayed_work(system_unbound_wq, &s->work, HZ / 10);
			return;
		}
		done = -1;
		return;
	}
	snh_setup_windows(s);
	if (!snh_phase_done(s, &v)) {	/* phase 0: the victim is there */
		done = -1;
		return;
	}
	victim_node = v.node;
	snh_garbage(s);
	snh_phase_done(s, &v);
	snh_records(s, victim_node);
	snh_phase_done(s, &v);
	snh_flap(s);
	snh_phase_done(s, &v);
	snh_scribble(s);
	msleep(1000);
	snh_phase_done(s, &v);
	/*
	 * A new life with no node queue yet: whatever the victim made of
	 * the scribbling, it now knows a peer that is waiting to come up
	 * (its core wants the queue), which the silence must make it drop.
	 */
	r = snh_valid(s, 0);
	snh_write(s, &r, true);
	msleep(1000);
	snh_victim(s, &v);
	snh_quiet(s, v.gen);
	pr_info("phases %s, victim node %d, new generation %d, %lu bytes scribbled\n",
		phases_ok, victim_node, regen, scribbled);
	done = 1;
}

static void snh_db_event(void *ctx, int vector)
{
	struct snh *s = ctx;

	ntb_db_clear(s->ntb, ntb_db_read(s->ntb));
}

static void snh_link_event(void *ctx)
{
}

static const struct ntb_ctx_ops snh_ops = {
	.link_event = snh_link_event,
	.db_event = snh_db_event,
};

static int snh_probe(struct ntb_client *client, struct ntb_dev *ntb)
{
	struct snh *s;
	int err;

	if (snh || ntb_peer_port_count(ntb) != 1 ||
	    ntb_spad_count(ntb) < SP_COUNT)
		return -ENODEV;
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	s->ntb = ntb;
	prandom_seed_state(&s->rnd, seed);
	s->gen = seed << 16;
	INIT_DELAYED_WORK(&s->work, snh_run);
	err = ntb_set_ctx(ntb, s, &snh_ops);
	if (err) {
		kfree(s);
		return err;
	}
	ntb_db_clear(ntb, ntb_db_valid_mask(ntb));
	ntb_db_clear_mask(ntb, ntb_db_valid_mask(ntb));
	ntb_link_enable(ntb, NTB_SPEED_AUTO, NTB_WIDTH_AUTO);
	snh = s;
	/* Unbound: the phases run for tens of seconds, some copying. */
	queue_delayed_work(system_unbound_wq, &s->work, 0);
	return 0;
}

static void snh_remove(struct ntb_client *client, struct ntb_dev *ntb)
{
	struct snh *s = ntb->ctx;
	int w, j;

	cancel_delayed_work_sync(&s->work);
	for (j = 0; j < SP_COUNT; j++)
		ntb_peer_spad_write(ntb, 0, j, 0);
	ntb_link_disable(ntb);
	ntb_db_set_mask(ntb, ntb_db_valid_mask(ntb));
	ntb_clear_ctx(ntb);
	for (w = 0; w < s->nr_out; w++)
		iounmap(s->out[w]);
	if (s->in_va) {
		ntb_mw_clear_trans(ntb, 0, 0);
		dma_free_coherent(&ntb->pdev->dev, s->in_size, s->in_va,
				  s->in_dma);
	}
	kfree(s);
	snh = NULL;
}

static struct ntb_client snh_client = {
	.ops = {
		.probe = snh_probe,
		.remove = snh_remove,
	},
};
module_ntb_client(snh_client);

MODULE_DESCRIPTION("A hostile NTB peer of scif_ntb (test-only)");
MODULE_LICENSE("GPL");
