// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: test hooks of the test build only (SCIF_TEST=1, see Kbuild).
 *
 *   <debugfs>/scif/peer_fuzz
 *	write "SEED COUNT NODE": make this node a hostile peer of NODE and
 *	send it COUNT node messages (COUNT at most 1000000) built from SEED.
 *	Every op (and a few that do not exist) comes in turn, in random
 *	bursts sent back to back without waiting for any answer; fields
 *	are random, boundary values, or replayed from real traffic (the
 *	handles of NODE's endpoints connected to ours, our own handles,
 *	the ids and offsets of the windows registered in both directions),
 *	and one message in four is a plausible one with bits flipped.
 *	NODE may be this node itself (loopback).  The write returns once
 *	every message went into NODE's queue: ENODEV if NODE was or went
 *	offline, EINTR on a fatal signal.
 *	read: "sent N\nbursts N\nreplayed N\nlast_err N\n", totals of the
 *	writes since the module was loaded.
 *
 *   <debugfs>/scif/forge
 *	write "NODE OP DST SRC ARG0 ARG1 ARG2 ARG3 ARG4" (the last seven in
 *	hex): send NODE that one node message, exactly as given, for tests
 *	of a precise sequence (scif_proto_test).  ENODEV if NODE is offline.
 *
 * The sender's side of a message is deterministic for a given SEED and
 * pool of replayed values; the pool is read from the live endpoints at
 * the start of each write and every 4096 messages.
 *
 * Addresses of the sender's memory that a message hands the receiver (a
 * queue pair half in CONNECT and ACCEPT, a run list in REGISTER, a
 * staging buffer in STAGE_WRITE and STAGE_READ) always
 * have bit 40 set: in no node's RAM, so the receiver's checks of them
 * are exercised without letting it write into this node's memory (on
 * loopback, its own), which a real peer could only do to itself.
 * For the same reason, on loopback the messages that let the receiver
 * free memory its peer may still be using never name a live endpoint:
 * the acknowledgments (DISC_ACK, REGISTER_ACK, UNREGISTER_ACK, and
 * STAGE_ACK, after which a staging buffer is freed), and the
 * connection messages by which a peer says it no longer uses (REJECT,
 * DISCONNECT) or starts using (ACCEPT) the receiver's ring.  There the
 * peer is this kernel, whose endpoint still writes into that ring (a
 * forged DISCONNECT in the name of a live local endpoint made its peer
 * free its ring under it: KASAN, seed 12); a real peer can speak only for
 * its own endpoints, and its writes into memory it said it let go of are
 * its own doing.
 *
 * Also here: <debugfs>/scif/corrupt, node_test, corrupt_runlist and
 * drop_rma_msgs, and the module parameters test_listener_close_delay_ms,
 * eng_delay_ms, eng_piece_delay_ms and eng_defer, each described where
 * it is defined below.
 * The driver reaches the hooks only through the hook points of
 * scif_fault.h, which call the struct scif_test_hooks that
 * scif_testhooks_init() registers, and compile to nothing in the
 * shipped build.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/maple_tree.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/random.h>
#include <linux/scif.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "scif_endpt.h"
#include "scif_fault.h"
#include "scif_hw.h"
#include "scif_info.h"
#include "scif_loopback.h"
#include "scif_nodes.h"
#include "scif_proto.h"
#include "scif_rma.h"
#include "scif_testhooks.h"

#define FUZZ_MAX_COUNT	1000000
#define FUZZ_POOL	64
#define FUZZ_EPS	16
#define FUZZ_REFRESH	4096
#define FUZZ_FAR	BIT_ULL(40)

/* Values seen in real traffic, for replay. */
struct fuzz_pool {
	u64 handle[FUZZ_POOL];	/* NODE's endpoints (our peers) */
	unsigned int nr_handle;
	u64 own[FUZZ_POOL];	/* ours, connected to NODE */
	unsigned int nr_own;
	u64 val[FUZZ_POOL];	/* window ids, offsets, pages */
	unsigned int nr_val;
};

/* fuzz_mutex serialises writers and protects the totals. */
static DEFINE_MUTEX(fuzz_mutex);
static u64 fuzz_sent, fuzz_bursts, fuzz_replayed;
static int fuzz_last_err;

/* xorshift64*: the same sequence for the same seed on every kernel. */
static u64 fuzz_next(u64 *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static u64 fuzz_below(u64 *s, u64 n)
{
	return n ? fuzz_next(s) % n : 0;
}

static void fuzz_add(u64 *arr, unsigned int *nr, u64 v)
{
	if (*nr < FUZZ_POOL)
		arr[(*nr)++] = v;
}

/* The windows of one endpoint, under its rma.lock (taken alone). */
static void fuzz_pool_windows(struct fuzz_pool *p, struct scif_endpt *ep)
{
	struct scif_rwindow *rw;
	struct scif_window *w;
	unsigned long idx;

	mutex_lock(&ep->rma.lock);
	idx = 0;
	mt_for_each(&ep->rma.local, w, idx, ULONG_MAX) {
		fuzz_add(p->val, &p->nr_val, w->id);
		fuzz_add(p->val, &p->nr_val, w->offset);
	}
	idx = 0;
	mt_for_each(&ep->rma.remote, rw, idx, ULONG_MAX) {
		fuzz_add(p->val, &p->nr_val, rw->id);
		fuzz_add(p->val, &p->nr_val, rw->offset);
		fuzz_add(p->val, &p->nr_val, rw->nr_pages);
	}
	mutex_unlock(&ep->rma.lock);
}

/*
 * Handles of the endpoints connected or connecting to @node, and of
 * their peers; then the windows of up to FUZZ_EPS of them, each held by
 * a reference while eplock is dropped (rma.lock nests outside eplock).
 */
static void fuzz_pool_fill(struct fuzz_pool *p, u16 node)
{
	struct scif_endpt *eps[FUZZ_EPS], *ep;
	unsigned int nr = 0, i;

	memset(p, 0, sizeof(*p));
	mutex_lock(&scif_info.eplock);
	list_for_each_entry(ep, &scif_info.endpoints, list) {
		bool match;

		spin_lock(&ep->lock);
		match = ep->node && ep->node->id == node;
		if (match && ep->peer_handle)
			fuzz_add(p->handle, &p->nr_handle, ep->peer_handle);
		spin_unlock(&ep->lock);
		if (!match)
			continue;
		fuzz_add(p->own, &p->nr_own, ep->handle);
		if (nr < FUZZ_EPS && kref_get_unless_zero(&ep->ref))
			eps[nr++] = ep;
	}
	mutex_unlock(&scif_info.eplock);
	for (i = 0; i < nr; i++) {
		fuzz_pool_windows(p, eps[i]);
		scif_epd_put(eps[i]);
	}
}

static const u64 fuzz_edges[] = {
	0, 1, 2, 0x7f, 0xff, 0xfff, 0x1000, 0x1001, 0xffff, 0x10000,
	0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ULL,
	0x7fffffffffffffffULL, 0x8000000000000000ULL, U64_MAX - 0xfff,
	U64_MAX - 1, U64_MAX,
};

/* One field: random, a boundary, or a value replayed from @from. */
static u64 fuzz_field(u64 *s, const u64 *from, unsigned int nr)
{
	switch (fuzz_below(s, 8)) {
	case 0:
	case 1:
		return fuzz_next(s);
	case 2:
		return fuzz_next(s) & 0xffffffff;
	case 3:
		return fuzz_below(s, 64) << PAGE_SHIFT;
	case 4:
	case 5:
		return fuzz_edges[fuzz_below(s, ARRAY_SIZE(fuzz_edges))];
	default:
		if (!nr)
			return fuzz_below(s, 16);
		fuzz_replayed++;
		return from[fuzz_below(s, nr)] +
		       (fuzz_below(s, 8) ? 0 : fuzz_below(s, 3) - 1);
	}
}

/*
 * A message that looks like what a peer sends for @op (right handles,
 * small counts, page-aligned offsets from the pool), before mutation.
 */
static void fuzz_plausible(u64 *s, const struct fuzz_pool *p,
			   struct scif_msg *msg)
{
	unsigned int i;

	msg->dst = p->nr_handle ? p->handle[fuzz_below(s, p->nr_handle)] : 0;
	msg->src = p->nr_own ? p->own[fuzz_below(s, p->nr_own)] : 0;
	for (i = 0; i < ARRAY_SIZE(msg->arg); i++)
		msg->arg[i] = p->nr_val && fuzz_below(s, 2) ?
			      p->val[fuzz_below(s, p->nr_val)] :
			      fuzz_below(s, 4) << PAGE_SHIFT;
	switch (msg->op) {
	case SCIF_MSG_CONNECT:
	case SCIF_MSG_ACCEPT:
		msg->arg[0] = fuzz_below(s, 4096);
		msg->arg[1] = fuzz_below(s, 4096);
		msg->arg[3] = PAGE_SIZE << fuzz_below(s, 12);
		break;
	case SCIF_MSG_REGISTER:
		msg->arg[2] = 1 + fuzz_below(s, 64);
		msg->arg[3] = (1 + fuzz_below(s, 3)) |
			      ((1 + fuzz_below(s, 4)) << 32);
		break;
	case SCIF_MSG_REGISTER_ACK:
		msg->arg[2] = fuzz_below(s, 2) ? 0 : fuzz_below(s, 200);
		break;
	case SCIF_MSG_FENCE_WAIT:
		msg->arg[1] = fuzz_below(s, 64);
		break;
	case SCIF_MSG_FENCE_SIGNAL:
		if (fuzz_below(s, 2))
			msg->arg[1] = SCIF_FENCE_NO_OFF;
		if (fuzz_below(s, 2))
			msg->arg[3] = SCIF_FENCE_NO_OFF;
		break;
	}
}

static void fuzz_build(u64 *s, const struct fuzz_pool *p, u64 i,
		       struct scif_msg *msg)
{
	unsigned int k, nr_ops = SCIF_MSG_NR + 2;

	memset(msg, 0, sizeof(*msg));
	/* Every op in turn, then any op, then any value at all. */
	if (fuzz_below(s, 2))
		msg->op = i % nr_ops;
	else if (fuzz_below(s, 16))
		msg->op = fuzz_below(s, nr_ops);
	else
		msg->op = fuzz_next(s);
	if (fuzz_below(s, 4) == 0) {
		fuzz_plausible(s, p, msg);
		/* Flip a few bits of one field. */
		for (k = 1 + fuzz_below(s, 3); k; k--)
			((u8 *)msg)[fuzz_below(s, sizeof(*msg))] ^=
				1 << fuzz_below(s, 8);
		return;
	}
	msg->pad = fuzz_below(s, 8) ? 0 : fuzz_next(s);
	msg->dst = fuzz_field(s, p->handle, p->nr_handle);
	msg->src = fuzz_field(s, p->own, p->nr_own);
	for (k = 0; k < ARRAY_SIZE(msg->arg); k++)
		msg->arg[k] = fuzz_field(s, p->val, p->nr_val);
}

/* Addresses of our memory point at none (see the comment at the top). */
static void fuzz_far(struct scif_msg *msg, bool loopback)
{
	if (loopback && (msg->op == SCIF_MSG_DISC_ACK ||
			 msg->op == SCIF_MSG_REGISTER_ACK ||
			 msg->op == SCIF_MSG_UNREGISTER_ACK ||
			 msg->op == SCIF_MSG_ACCEPT ||
			 msg->op == SCIF_MSG_REJECT ||
			 msg->op == SCIF_MSG_DISCONNECT ||
			 msg->op == SCIF_MSG_STAGE_ACK))
		msg->dst = 0;
	switch (msg->op) {
	case SCIF_MSG_CONNECT:
		msg->arg[2] |= FUZZ_FAR;
		break;
	case SCIF_MSG_ACCEPT:
		msg->arg[0] |= FUZZ_FAR;
		break;
	case SCIF_MSG_REGISTER:
	case SCIF_MSG_STAGE_WRITE:
	case SCIF_MSG_STAGE_READ:
		msg->arg[4] |= FUZZ_FAR;
		break;
	}
}

/* Send @count messages to @id; under fuzz_mutex. */
static int fuzz_run(u64 seed, unsigned int count, u16 id)
{
	struct fuzz_pool *p;
	struct scif_node *node;
	struct scif_msg msg;
	u64 s = seed ?: 1, i;
	unsigned int burst = 0;
	int err = 0;

	lockdep_assert_held(&fuzz_mutex);
	p = kmalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	for (i = 0; i < count && !err; i++) {
		if (i % FUZZ_REFRESH == 0)
			fuzz_pool_fill(p, id);
		if (!burst) {
			/* Bursts of 1 to 512 messages, back to back. */
			burst = 1 + fuzz_below(&s, 512);
			fuzz_bursts++;
			cond_resched();
		}
		burst--;
		fuzz_build(&s, p, i, &msg);
		fuzz_far(&msg, id == scif_info.self);
		node = scif_node_get_online(id);
		err = node ? scif_node_send(node, &msg) : -ENODEV;
		if (!err)
			fuzz_sent++;
		else if (fatal_signal_pending(current))
			err = -EINTR;
	}
	kfree(p);
	fuzz_last_err = err;
	return err;
}

static ssize_t peer_fuzz_write(struct file *file, const char __user *ubuf,
			       size_t len, loff_t *ppos)
{
	unsigned int count, id;
	char buf[64];
	u64 seed;
	int err;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%llu %u %u", &seed, &count, &id) != 3 ||
	    count > FUZZ_MAX_COUNT || id >= SCIF_MAX_NODES)
		return -EINVAL;
	if (mutex_lock_killable(&fuzz_mutex))
		return -EINTR;
	err = fuzz_run(seed, count, id);
	mutex_unlock(&fuzz_mutex);
	return err ?: len;
}

static ssize_t peer_fuzz_read(struct file *file, char __user *ubuf,
			      size_t len, loff_t *ppos)
{
	char buf[128];
	int n;

	mutex_lock(&fuzz_mutex);
	n = scnprintf(buf, sizeof(buf),
		      "sent %llu\nbursts %llu\nreplayed %llu\nlast_err %d\n",
		      fuzz_sent, fuzz_bursts, fuzz_replayed, fuzz_last_err);
	mutex_unlock(&fuzz_mutex);
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct file_operations peer_fuzz_fops = {
	.owner = THIS_MODULE,
	.read = peer_fuzz_read,
	.write = peer_fuzz_write,
	.llseek = default_llseek,
};

static ssize_t forge_write(struct file *file, const char __user *ubuf,
			   size_t len, loff_t *ppos)
{
	struct scif_node *node;
	struct scif_msg msg = {};
	unsigned int id;
	char buf[256];
	int err;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%u %u %llx %llx %llx %llx %llx %llx %llx", &id,
		   &msg.op, &msg.dst, &msg.src, &msg.arg[0], &msg.arg[1],
		   &msg.arg[2], &msg.arg[3], &msg.arg[4]) != 9 ||
	    id >= SCIF_MAX_NODES)
		return -EINVAL;
	node = scif_node_get_online(id);
	err = node ? scif_node_send(node, &msg) : -ENODEV;
	return err ?: len;
}

static const struct file_operations forge_fops = {
	.owner = THIS_MODULE,
	.write = forge_write,
	.llseek = noop_llseek,
};

/*
 * Test hook, module parameter test_listener_close_delay_ms: a listener's
 * close pauses in its walk of parked requests (scif_conn.c).
 */
static unsigned int scif_test_close_delay_ms;
module_param_named(test_listener_close_delay_ms, scif_test_close_delay_ms,
		   uint, 0644);
MODULE_PARM_DESC(test_listener_close_delay_ms,
		 "Test build only: milliseconds a listener's close waits in its walk of the parked requests (default 0)");

/**
 * scif_testhooks_close_delay() - test hook: a listener's close pauses
 *
 * Context: process context; may sleep.
 * Return: nothing; returns after test_listener_close_delay_ms.
 */
static void scif_testhooks_close_delay(void)
{
	unsigned int ms = READ_ONCE(scif_test_close_delay_ms);

	if (ms)
		msleep(ms);
}

/*
 * Test hook, module parameter eng_delay_ms: milliseconds the engine's
 * worker sleeps before it looks at its endpoint (scif_rma.c), so that
 * tests can close the endpoint while the work item is pending or running.
 */
static unsigned int scif_eng_delay_ms;
module_param_named(eng_delay_ms, scif_eng_delay_ms, uint, 0644);
MODULE_PARM_DESC(eng_delay_ms,
		 "Test build: delay of the copy engine's worker, in ms (default 0)");

/**
 * scif_testhooks_rma_delay() - test hook: the copy engine's worker pauses
 *
 * Context: process context (the engine's work item); may sleep.
 * Return: nothing; returns after eng_delay_ms.
 */
static void scif_testhooks_rma_delay(void)
{
	unsigned int ms = READ_ONCE(scif_eng_delay_ms);

	if (ms)
		msleep(ms);
}

/*
 * Test hook, module parameter eng_piece_delay_ms: milliseconds the copy
 * engine sleeps after it found the connection alive and before it
 * copies a piece of a descriptor (scif_rma.c), so that tests can close
 * the peer's endpoint while an RMA into its window is under way.
 */
static unsigned int scif_eng_piece_delay_ms;
module_param_named(eng_piece_delay_ms, scif_eng_piece_delay_ms, uint, 0644);
MODULE_PARM_DESC(eng_piece_delay_ms,
		 "Test build: delay of the copy engine before each piece, in ms (default 0)");

/**
 * scif_testhooks_rma_piece_delay() - test hook: the copy engine pauses before
 * a piece
 *
 * Context: process context (the copy engine); may sleep.
 * Return: nothing; returns after eng_piece_delay_ms.
 */
static void scif_testhooks_rma_piece_delay(void)
{
	unsigned int ms = READ_ONCE(scif_eng_piece_delay_ms);

	if (ms)
		msleep(ms);
}

/*
 * Test hook, module parameter eng_defer: every RMA and signal goes to
 * the worker, as if something were pending, so that tests can hold it
 * back.
 */
static bool scif_eng_defer;
module_param_named(eng_defer, scif_eng_defer, bool, 0644);
MODULE_PARM_DESC(eng_defer,
		 "Test build: hand every RMA to the copy engine's worker (default N)");

/**
 * scif_testhooks_rma_defer() - test hook: whether every RMA goes to the worker
 *
 * Context: any context.
 * Return: the value of eng_defer.
 */
static bool scif_testhooks_rma_defer(void)
{
	return READ_ONCE(scif_eng_defer);
}

/*
 * Test hook, <debugfs>/scif/drop_rma_msgs (root only): while non-zero,
 * each REGISTER or UNREGISTER this node receives is ignored (left
 * unanswered) and the count goes down by one: a silent peer.
 */
static atomic_t scif_drop_rma_msgs;

/**
 * scif_testhooks_window_drop_msg() - test hook: whether to ignore a REGISTER or
 *	UNREGISTER received
 *
 * Context: any context.
 * Return: true (and one fewer to drop) while drop_rma_msgs is non-zero.
 */
static bool scif_testhooks_window_drop_msg(void)
{
	return atomic_add_unless(&scif_drop_rma_msgs, -1, 0);
}

/*
 * Test hook, <debugfs>/scif/corrupt_runlist (root only): when non-zero,
 * the next run list this node sends is damaged so that the peer's checks
 * can be exercised (1 unaligned address, 2 run longer than the window,
 * 3 runs adding up to more than the window, 4 address outside what the
 * bus reaches, 5 zero length, 6 more runs claimed than the list holds).
 * Reset after use.
 */
static u32 scif_corrupt_runlist;

static void scif_window_runlist_corrupt(struct scif_runlist *rl,
					struct scif_msg *msg)
{
	switch (xchg(&scif_corrupt_runlist, 0)) {
	case 1:
		rl->run[0].addr += 64;
		break;
	case 2:
		rl->run[0].len = PAGE_MASK;
		break;
	case 3:
		rl->run[rl->nr - 1].len += PAGE_SIZE;
		break;
	case 4:
		rl->run[0].addr = 1ULL << 50;
		break;
	case 5:
		rl->run[0].len = 0;
		break;
	case 6:
		msg->arg[3] += 1ULL << 32;
		break;
	}
}

/**
 * scif_testhooks_runlist_corrupt() - test hook: damage a run list sent
 * @rl: the run list about to go to the peer
 * @msg: the REGISTER message that names it
 *
 * Context: process context.
 * Return: nothing; @rl or @msg damaged as corrupt_runlist asked, once.
 */
static void scif_testhooks_runlist_corrupt(struct scif_runlist *rl,
					   struct scif_msg *msg)
{
	if (unlikely(READ_ONCE(scif_corrupt_runlist)))
		scif_window_runlist_corrupt(rl, msg);
}

/*
 * "dev <k>" of <debugfs>/scif/corrupt: the next device list entry this
 * node sends as a lender is damaged, as a broken or hostile lender
 * could send it (1 fdid of another node, 2 entry's node another node,
 * 3 name not terminated, 4 no mode, 5 unknown mode, 6 unknown state,
 * 7 class beyond 24 bits, 8 reserved field set, 9 more than six BARs,
 * 10 a BAR size not a power of two, 11 a cursor that does not advance).
 * Reset after use.
 */
#define SCIF_CORRUPT_DEV_KINDS	11
static u32 scif_corrupt_dev;

static void scif_testhooks_dev_entry_corrupt(struct scif_dev_entry *e,
					     u64 *next)
{
	if (likely(!READ_ONCE(scif_corrupt_dev)))
		return;
	switch (xchg(&scif_corrupt_dev, 0)) {
	case 1:
		e->fdid ^= 1ULL << 48;
		break;
	case 2:
		e->node ^= 1;
		break;
	case 3:
		memset(e->name, 'x', sizeof(e->name));
		break;
	case 4:
		e->modes = 0;
		break;
	case 5:
		e->modes |= 0x80;
		break;
	case 6:
		e->state = SCIF_DEV_STATE_MAX + 1;
		break;
	case 7:
		e->pci_class = 0x1000000;
		break;
	case 8:
		e->reserved0 = 1;
		break;
	case 9:
		e->nr_bars = PCI_STD_NUM_BARS + 1;
		break;
	case 10:
		e->bar_size[0] = 3 * 4096;
		break;
	case 11:
		*next = (u32)e->fdid;
		break;
	}
}

static int scif_corrupt_dev_set(u32 kind)
{
	WRITE_ONCE(scif_corrupt_dev, kind);
	return 0;
}

/* A DATA or SPACE message to @ep's peer, as scif_msg.c sends them. */
static void scif_test_notify(struct scif_endpt *ep, u32 op)
{
	struct scif_msg msg;

	scif_nodemsg_init(&msg, op, ep->peer_handle, ep->handle);
	scif_node_send(ep->node, &msg);
}

/*
 * "conn <port>" of <debugfs>/scif/corrupt: for every connected endpoint
 * bound to @port, stores counts that make no sense in the peer's half of
 * the queue pair (a write count beyond the ring, a read count of bytes
 * never sent) and tells the peer with DATA and SPACE.  Returns the
 * number of connections broken.
 */
static int scif_msg_corrupt_rings(u16 port)
{
	struct scif_endpt *ep, *batch[16];
	int i, n = 0;

	mutex_lock(&scif_info.eplock);
	list_for_each_entry(ep, &scif_info.endpoints, list) {
		if (READ_ONCE(ep->port) != port ||
		    READ_ONCE(ep->state) != SCIF_EPD_CONNECTED ||
		    !kref_get_unless_zero(&ep->ref))
			continue;
		batch[n++] = ep;
		if (n == ARRAY_SIZE(batch))
			break;
	}
	mutex_unlock(&scif_info.eplock);
	for (i = 0; i < n; i++) {
		ep = batch[i];
		mutex_lock(&ep->send_mutex);
		if (ep->rb.remote) {
			WRITE_ONCE(ep->rb.remote->rx_write, ep->rb.tx_write +
				   ep->rb.tx_size + 1 + get_random_u32() % 4096);
			WRITE_ONCE(ep->rb.remote->tx_read, ep->rb.rx_read +
				   ep->rb.rx_size + 1 + get_random_u32() % 4096);
		}
		mutex_unlock(&ep->send_mutex);
		if (READ_ONCE(ep->state) == SCIF_EPD_CONNECTED) {
			scif_test_notify(ep, SCIF_MSG_DATA);
			scif_test_notify(ep, SCIF_MSG_SPACE);
		}
		scif_epd_put(ep);
	}
	return n;
}

/**
 * scif_node_corrupt() - test hook: break our node queue pair towards a node
 * @id: the node whose ring we fill
 * @count: store a write count larger than the ring in the peer's half;
 *	else send @nr messages of random bytes
 * @nr: number of random messages
 *
 * Makes this node the misbehaving peer of scif_corrupt_test; reached
 * only through debugfs.
 *
 * Context: process context; may sleep.
 * Return: 0, or -ENODEV if @id is not online.
 */
static int scif_node_corrupt(u16 id, bool count, unsigned int nr)
{
	struct scif_node *node = scif_node_get_online(id);
	struct scif_msg msg;
	int err = 0;

	if (!node)
		return -ENODEV;
	if (count) {
		mutex_lock(&scif_info.node_lock);
		mutex_lock(&node->tx_mutex);
		if (node->online && node->rb.remote) {
			/* Sticky: later sends publish bad counts too. */
			node->rb.tx_skew = node->rb.tx_size + 1 +
					   get_random_u32() % 4096;
			WRITE_ONCE(node->rb.remote->rx_write,
				   node->rb.tx_write + node->rb.tx_skew);
			node->hw->ops->ring(node->hw, node->hw_ctx);
		}
		mutex_unlock(&node->tx_mutex);
		mutex_unlock(&scif_info.node_lock);
		return 0;
	}
	while (nr-- && !err) {
		get_random_bytes(&msg, sizeof(msg));
		/* Mostly known types, so that handles and arguments are read. */
		msg.op %= SCIF_MSG_NR + 2;
		err = scif_node_send(node, &msg);
	}
	return err;
}

/*
 * Test hooks, <debugfs>/scif/node_test (root only, write only):
 *   "hold <node> <bits>"  bit 0: rx_work leaves the node's messages in
 *                         the ring (this node stops draining it, as a
 *                         stuck peer would); bit 1: reply_work sends
 *                         nothing (replies pile up, as towards a peer
 *                         that does not drain)
 *   "flood <node> <n>"    send n CONNECT requests to port 0 (no
 *                         listener): each asks for a REJECT reply
 *   "loopback down|up"    take this node's loopback node down / up
 *   "delay <point> <ms>"  sleep at a delay point (enum scif_node_delay)
 */
static unsigned int scif_test_delay_ms[SCIF_DELAY_NR];

/**
 * scif_testhooks_node_held() - test hook: whether work for @node is held back
 * @node: the node
 * @what: 1 for rx_work, 2 for reply_work
 *
 * Context: any context.
 * Return: true if "hold" asked for @what to do nothing.
 */
static bool scif_testhooks_node_held(struct scif_node *node, unsigned int what)
{
	return READ_ONCE(node->test_held) & what;
}

static int scif_node_test_flood(u16 id, unsigned int nr)
{
	struct scif_node *node = scif_node_get_online(id);
	struct scif_msg msg;
	int err = 0;

	if (!node)
		return -ENODEV;
	memset(&msg, 0, sizeof(msg));
	msg.op = SCIF_MSG_CONNECT;
	while (nr-- && !err)
		err = scif_node_send(node, &msg);
	return err;
}

/**
 * scif_testhooks_node_delay() - test hook: sleep at a delay point if asked to
 * @point: the delay point
 *
 * Context: process context; may sleep.
 * Return: nothing; returns after the delay set for @point, if any.
 */
static void scif_testhooks_node_delay(enum scif_node_delay point)
{
	unsigned int ms = scif_test_delay_ms[point];

	if (ms)
		msleep(ms);
}

static ssize_t scif_node_test_write(struct file *file,
				    const char __user *ubuf, size_t len,
				    loff_t *ppos)
{
	unsigned int a, b;
	char buf[64];
	int err = 0;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "hold %u %u", &a, &b) == 2 && a < SCIF_MAX_NODES) {
		WRITE_ONCE(scif_info.nodes[a].test_held, b);
		queue_work(scif_info.wq, &scif_info.nodes[a].rx_work);
		queue_work(scif_info.wq, &scif_info.nodes[a].reply_work);
	} else if (sscanf(buf, "flood %u %u", &a, &b) == 2 &&
		   a < SCIF_MAX_NODES && b <= 100000) {
		err = scif_node_test_flood(a, b);
	} else if (sscanf(buf, "delay %u %u", &a, &b) == 2 &&
		   a < SCIF_DELAY_NR && b <= 60000) {
		scif_test_delay_ms[a] = b;
	} else if (!strncmp(buf, "loopback down", 13)) {
		scif_loopback_exit();
	} else if (!strncmp(buf, "loopback up", 11)) {
		err = scif_loopback_init();
	} else {
		err = -EINVAL;
	}
	return err ?: len;
}

static const struct file_operations scif_node_test_fops = {
	.owner = THIS_MODULE,
	.write = scif_node_test_write,
	.llseek = noop_llseek,
};

/*
 * Test hook, <debugfs>/scif/corrupt (root only, write only): make this
 * node a peer that breaks what it writes into another node's memory:
 *   "msgs <node> <n>"  n node messages of random bytes
 *   "count <node>"     a write count beyond the node ring
 *   "conn <port>"      bad counts in the rings of every connection bound
 *                      to local <port>
 *   "dev <k>"          the next device list entry sent damaged, kind k
 *                      1..11 (scif_testhooks_dev_entry_corrupt())
 *   "fence <k> <dst> <src> <a0> .. <a4>" (hex but <k>)
 *                      a forged fence message to this node itself
 *                      (loopback): FENCE_MARK + k, k 0..3, with the given
 *                      handles and arguments, as a peer could send it
 */
/* "fence ...": a fence message as a hostile peer would send it. */
static int scif_debugfs_fence(const char *buf)
{
	struct scif_msg msg = { 0 };
	struct scif_node *node;
	unsigned int k;

	if (sscanf(buf, "fence %u %llx %llx %llx %llx %llx %llx %llx", &k,
		   &msg.dst, &msg.src, &msg.arg[0], &msg.arg[1], &msg.arg[2],
		   &msg.arg[3], &msg.arg[4]) != 8 || k > 3)
		return -EINVAL;
	msg.op = SCIF_MSG_FENCE_MARK + k;
	node = scif_node_get_online(scif_info.self);
	return node ? scif_node_send(node, &msg) : -ENODEV;
}

static ssize_t corrupt_write(struct file *file, const char __user *ubuf,
			     size_t len, loff_t *ppos)
{
	unsigned int a, b;
	char buf[256];
	int err;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "msgs %u %u", &a, &b) == 2 && a <= U16_MAX &&
	    b <= 1024)
		err = scif_node_corrupt(a, false, b);
	else if (sscanf(buf, "count %u", &a) == 1 && a <= U16_MAX)
		err = scif_node_corrupt(a, true, 0);
	else if (sscanf(buf, "conn %u", &a) == 1 && a && a <= U16_MAX)
		err = scif_msg_corrupt_rings(a) ? 0 : -ENOENT;
	else if (sscanf(buf, "dev %u", &a) == 1 && a &&
		 a <= SCIF_CORRUPT_DEV_KINDS)
		err = scif_corrupt_dev_set(a);
	else if (!strncmp(buf, "fence ", 6))
		err = scif_debugfs_fence(buf);
	else
		err = -EINVAL;
	return err ?: len;
}

static const struct file_operations corrupt_fops = {
	.owner = THIS_MODULE,
	.write = corrupt_write,
	.llseek = noop_llseek,
};

/* What the core's hook points call in the test build (scif_fault.h). */
static const struct scif_test_hooks scif_testhooks_ops = {
	.node_delay = scif_testhooks_node_delay,
	.node_held = scif_testhooks_node_held,
	.close_delay = scif_testhooks_close_delay,
	.rma_delay = scif_testhooks_rma_delay,
	.rma_piece_delay = scif_testhooks_rma_piece_delay,
	.rma_defer = scif_testhooks_rma_defer,
	.window_drop_msg = scif_testhooks_window_drop_msg,
	.runlist_corrupt = scif_testhooks_runlist_corrupt,
	.dev_entry_corrupt = scif_testhooks_dev_entry_corrupt,
};

/**
 * scif_testhooks_init() - create the test hooks' debugfs files and
 *	register the hooks with the core
 *
 * Called once at module load, after scif_debugfs_init(); the files go
 * with the driver's debugfs directory.  Failure is not fatal.
 *
 * Context: process context (module init).
 * Return: nothing.
 */
void scif_testhooks_init(void)
{
	struct dentry *dir = scif_info.debugfs;

	/* The hook points of the core (scif_fault.h) call these from now on. */
	WRITE_ONCE(scif_test_hooks, &scif_testhooks_ops);

	debugfs_create_file("peer_fuzz", 0600, dir, NULL, &peer_fuzz_fops);
	debugfs_create_file("forge", 0200, dir, NULL, &forge_fops);
	debugfs_create_file("corrupt", 0200, dir, NULL, &corrupt_fops);
	debugfs_create_file("node_test", 0200, dir, NULL,
			    &scif_node_test_fops);
	debugfs_create_u32("corrupt_runlist", 0600, dir, &scif_corrupt_runlist);
	debugfs_create_u32("drop_rma_msgs", 0600, dir,
			   (u32 *)&scif_drop_rma_msgs.counter);
}
