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
 */
#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/maple_tree.h>
#include <linux/mutex.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "scif_priv.h"

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

/* Declared here and in scif_main.c: the shipped build has neither. */
#ifdef SCIF_TEST_HOOKS
void scif_testhooks_init(void);
#endif

/**
 * scif_testhooks_init() - create the test hooks' debugfs files
 *
 * Called once at module load, after scif_debugfs_init(); the files go
 * with the driver's debugfs directory.  Failure is not fatal.
 *
 * Context: process context (module init).
 * Return: nothing.
 */
void scif_testhooks_init(void)
{
	debugfs_create_file("peer_fuzz", 0600, scif_info.debugfs, NULL,
			    &peer_fuzz_fops);
	debugfs_create_file("forge", 0200, scif_info.debugfs, NULL,
			    &forge_fops);
}
