// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: devices across the fabric, the part of borrowing that needs
 * no hardware (Documentation/scif/devices.rst, "Borrowing a device").
 *
 * Lender side: the scif_lend PCI driver (bound only by driver_override)
 * keeps the lent list; it answers DEV_LIST, grants DEV_BORROW, takes
 * DEV_RETURN, withdraws a function's borrows when it is unbound, drops
 * the borrows of a lost node, and resets a function once its last
 * borrower is gone (a function with no reset method becomes dirty).
 *
 * Borrower side: scif_dev_list(), scif_dev_borrow(), scif_dev_return()
 * send requests and wait for their answers, each at most
 * dev_msg_timeout_ms; a borrow ends with its return, the loss of the
 * lender (-ENODEV) or a withdrawal (-EREMOTEIO).
 *
 * Every field of a DEV_* message is the peer's and is checked here;
 * this file never sees an endpoint.
 */
#define pr_fmt(fmt) "scif: " fmt

#include <linux/bitmap.h>
#include <linux/kref.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/random.h>
#include <linux/scif.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "scif_devices.h"
#include "scif_fault.h"
#include "scif_info.h"
#include "scif_nodes.h"
#include "scif_proto.h"
#include "scif_visibility.h"

static unsigned int dev_msg_timeout_ms = 5000;
module_param(dev_msg_timeout_ms, uint, 0644);
MODULE_PARM_DESC(dev_msg_timeout_ms,
		 "Milliseconds a device list, borrow or return request waits for the lender's answer before it fails with ETIMEDOUT (default 5000)");

static unsigned int dev_withdraw_ms = 5000;
module_param(dev_withdraw_ms, uint, 0644);
MODULE_PARM_DESC(dev_withdraw_ms,
		 "Milliseconds an unbind of scif_lend waits for the borrowers to answer a withdrawal before it resets the function anyway (default 5000)");

static unsigned int max_lent_devices = 256;
module_param(max_lent_devices, uint, 0644);
MODULE_PARM_DESC(max_lent_devices,
		 "Most PCI functions scif_lend may hold; further binds fail with ENOSPC (default 256)");

static unsigned int max_borrows_per_node = 64;
module_param(max_borrows_per_node, uint, 0644);
MODULE_PARM_DESC(max_borrows_per_node,
		 "Most borrows one node may hold on this lender; further borrows fail with EAGAIN (default 64)");

static unsigned int max_dev_borrowers = 16;
module_param(max_dev_borrowers, uint, 0644);
MODULE_PARM_DESC(max_dev_borrowers,
		 "Most shared borrowers of one lent function; further borrows fail with EAGAIN (default 16)");

static unsigned int max_dev_borrows = 256;
module_param(max_dev_borrows, uint, 0644);
MODULE_PARM_DESC(max_dev_borrows,
		 "Most borrows this node may hold at once, all lenders together; further borrows fail with EAGAIN (default 256)");

/* A filter's vendor or device that matches any. */
#define SCIF_DEV_ANY_ID		0xffff
/* Bytes of an entry one DEV_LIST_ACK part carries. */
#define SCIF_DEV_PART_LEN	24

static_assert(sizeof(struct scif_dev_entry) == 128);
static_assert(SCIF_DEV_LIST_PARTS * SCIF_DEV_PART_LEN >=
	      sizeof(struct scif_dev_entry));

/*
 * scif_devices_lock protects every list and field below that says so:
 * the lent list and its borrows, the borrows of this node, the pending
 * requests.  Held only for checks and list changes, never across a
 * message, a reset or a wait; taken in rx_work (a short mutex), nested
 * in nothing of SCIF's, and no SCIF lock is taken under it.
 */
static DEFINE_MUTEX(scif_devices_lock);
/* Woken when a request is answered or a lent function loses a borrow. */
static DECLARE_WAIT_QUEUE_HEAD(scif_dev_wq);

/**
 * struct scif_lend_borrow - a borrow of a lent function, at the lender
 * @link: in scif_lent.borrows
 * @id: the borrow id (random, non-zero, unique on its function)
 * @token: the borrower's token from DEV_BORROW
 * @node: the borrowing node
 * @exclusive: an exclusive borrow
 * @withdraw_sent: a DEV_WITHDRAW was sent for it
 *
 * Lock: scif_devices_lock.  Lifetime: made by DEV_BORROW, freed when
 * returned, withdrawn or its node is lost (scif_lend_drop()).
 */
struct scif_lend_borrow {
	struct list_head link;
	u64 id;
	u64 token;
	u16 node;
	bool exclusive;
	bool withdraw_sent;
};

/**
 * struct scif_lent - a PCI function bound to scif_lend
 * @link: in scif_lent_list, in @index order
 * @pdev: the function; set at probe, constant
 * @index: the low 32 bits of its fdid, never reused while scif.ko is
 *	loaded (counted up from a random start drawn at load); constant
 * @modes: SCIF_DEV_MODE_* it is offered in (attribute scif_modes)
 * @nodes: the nodes it is offered to (attribute scif_nodes); the others
 *	do not see it listed and are refused a borrow with -EACCES
 * @borrows: its borrows (struct scif_lend_borrow)
 * @nr_borrows: their number
 * @exclusive: the one borrow is exclusive
 * @resetting: reset_work is to reset it or does: no borrow is granted
 * @dirty: a reset failed (no reset method): no borrow is granted until
 *	scif_lend is unbound from it and bound again
 * @withdrawing: remove() runs: no borrow is granted, reset_work does
 *	nothing
 * @reset_work: resets the function once its last borrow is gone
 *
 * Lock: scif_devices_lock for every field but the constant ones and
 * @reset_work.  Lifetime: made by probe, freed by remove after
 * reset_work is cancelled and the function left the list.
 */
struct scif_lent {
	struct list_head link;
	struct pci_dev *pdev;
	u32 index;
	u8 modes;
	DECLARE_BITMAP(nodes, SCIF_MAX_NODES);
	struct list_head borrows;
	unsigned int nr_borrows;
	bool exclusive;
	bool resetting;
	bool dirty;
	bool withdrawing;
	struct delayed_work reset_work;
};

/* The lent functions; their count; the next index (scif_devices_lock). */
static LIST_HEAD(scif_lent_list);
static unsigned int scif_nr_lent;
static u32 scif_lent_next;
/* Borrows of each node on this lender (scif_devices_lock). */
static u16 scif_lend_node_borrows[SCIF_MAX_NODES];
/* This life's epoch, drawn at load; constant afterwards. */
static u16 scif_dev_epoch;

enum scif_borrow_state {
	SCIF_BORROW_PENDING,
	SCIF_BORROW_ACTIVE,
	SCIF_BORROW_LOST,
};

/**
 * struct scif_dev_borrow - a borrow this node holds
 * @link: in scif_borrows until returned
 * @ref: one for its holder, one for a queued @lost_work
 * @fdid: the borrowed function
 * @token: names it to the lender before its id is known
 * @id: the lender's borrow id (0 until granted)
 * @node: the lender
 * @flags: SCIF_DEV_EXCLUSIVE or 0
 * @state: PENDING until granted, ACTIVE, LOST once it ended without a
 *	return (or once the return started)
 * @why: -ENODEV (lender lost) or -EREMOTEIO (withdrawn), when LOST
 * @withdraw_id: the DEV_WITHDRAW to answer once lost() returned, or 0
 * @ops: the holder's callbacks, set once the borrow is handed over
 * @priv: given back to @ops
 * @wq: woken when the borrow is lost (poll of a borrow file)
 * @lost_work: calls @ops->lost, then answers @withdraw_id
 *
 * Lock: scif_devices_lock for @link, @id, @state, @why, @withdraw_id,
 * @ops and @priv; the rest is constant once made.  Lifetime: @ref.
 */
struct scif_dev_borrow {
	struct list_head link;
	struct kref ref;
	u64 fdid;
	u64 token;
	u64 id;
	u16 node;
	u32 flags;
	enum scif_borrow_state state;
	int why;
	u64 withdraw_id;
	const struct scif_dev_borrow_ops *ops;
	void *priv;
	wait_queue_head_t wq;
	struct work_struct lost_work;
};

/* Borrows this node holds, and their count (scif_devices_lock). */
static LIST_HEAD(scif_borrows);
static unsigned int scif_nr_borrows;

/**
 * struct scif_dev_req - a request waiting for its answer
 * @link: in scif_dev_reqs while waiting
 * @id: its id, unique while the module is loaded
 * @node: the node it was sent to
 * @answer_op: the message type of its answer
 * @done: answered, failed or its node lost
 * @err: 0, or why it failed (-ENODEV, -EPROTO)
 * @arg: the answer's arguments (BORROW_ACK, RETURN_ACK)
 * @borrow: the borrow a DEV_BORROW is for, or NULL
 * @part: DEV_LIST_ACK: the next part expected
 * @have_entry: DEV_LIST_ACK: @entry and @cursor came
 * @cursor: DEV_LIST_ACK: the next cursor
 * @entry: DEV_LIST_ACK: the entry, as the lender wrote it
 *
 * Lock: scif_devices_lock while on the list.  Lifetime: the requester's
 * stack; it leaves the list before the requester returns.
 */
struct scif_dev_req {
	struct list_head link;
	u64 id;
	u16 node;
	u32 answer_op;
	bool done;
	int err;
	u64 arg[5];
	struct scif_dev_borrow *borrow;
	u8 part;
	bool have_entry;
	u64 cursor;
	struct scif_dev_entry entry;
};

/* Requests waiting (scif_devices_lock); the last id given. */
static LIST_HEAD(scif_dev_reqs);
static atomic64_t scif_dev_req_id = ATOMIC64_INIT(0);

/* What a lender may answer a request with (scif_node_errno()). */
static const int scif_dev_answers[] = {
	EBUSY, ENOENT, EACCES, EAGAIN, EINVAL, ENXIO, ENODEV, 0
};

static u16 scif_dev_self(void)
{
	return READ_ONCE(scif_info.self);
}

static u64 scif_lent_fdid(const struct scif_lent *l)
{
	return (u64)scif_dev_self() << 48 | (u64)scif_dev_epoch << 32 |
	       l->index;
}

static u8 scif_lent_state(const struct scif_lent *l)
{
	lockdep_assert_held(&scif_devices_lock);
	if (l->dirty)
		return SCIF_DEV_STATE_DIRTY;
	if (l->resetting)
		return SCIF_DEV_STATE_RESETTING;
	if (l->exclusive)
		return SCIF_DEV_STATE_EXCLUSIVE;
	return l->nr_borrows ? SCIF_DEV_STATE_SHARED : SCIF_DEV_STATE_FREE;
}

static u8 scif_dev_bar_flags(unsigned long flags)
{
	u8 f = 0;

	if (flags & IORESOURCE_MEM)
		f |= SCIF_DEV_BAR_MEM;
	if (flags & IORESOURCE_MEM_64)
		f |= SCIF_DEV_BAR_64;
	if (flags & IORESOURCE_PREFETCH)
		f |= SCIF_DEV_BAR_PREFETCH;
	return f;
}

/* @l's list entry, into @e; never a kernel address. */
static void scif_lent_entry(const struct scif_lent *l,
			    struct scif_dev_entry *e)
{
	struct pci_dev *pdev = l->pdev;
	int i;

	lockdep_assert_held(&scif_devices_lock);
	memset(e, 0, sizeof(*e));
	e->fdid = scif_lent_fdid(l);
	e->pci_class = pdev->class & 0xffffff;
	e->borrowers = l->nr_borrows;
	e->node = scif_dev_self();
	e->vendor = pdev->vendor;
	e->device = pdev->device;
	e->subsystem_vendor = pdev->subsystem_vendor;
	e->subsystem_device = pdev->subsystem_device;
	e->revision = pdev->revision;
	e->modes = l->modes;
	e->state = scif_lent_state(l);
	for (i = 0; i < PCI_STD_NUM_BARS; i++) {
		if (!pci_resource_len(pdev, i))
			continue;
		e->nr_bars = i + 1;
		e->bar_size[i] = pci_resource_len(pdev, i);
		e->bar_flags[i] =
			scif_dev_bar_flags(pci_resource_flags(pdev, i));
	}
	strscpy(e->name, pci_name(pdev), sizeof(e->name));
}

/**
 * scif_dev_filter_valid() - whether a device-list filter makes sense
 * @f: the filter, from a caller
 *
 * Context: any.
 * Return: true if @f's class is 24 bits within its mask and it has no
 * unknown flag.
 */
bool scif_dev_filter_valid(const struct scif_dev_filter *f)
{
	return f->class_mask <= 0xffffff && !(f->pci_class & ~f->class_mask) &&
	       !(f->flags & ~SCIF_DEV_FREE);
}

SCIF_EXPORT_IF_KUNIT(scif_dev_filter_valid);

/* Whether @e passes @f; applied by the lender and again by the borrower. */
SCIF_VISIBLE_IF_KUNIT
bool scif_dev_filter_match(const struct scif_dev_filter *f,
			   const struct scif_dev_entry *e)
{
	if ((e->pci_class & f->class_mask) != f->pci_class)
		return false;
	if (f->vendor != SCIF_DEV_ANY_ID && e->vendor != f->vendor)
		return false;
	if (f->device != SCIF_DEV_ANY_ID && e->device != f->device)
		return false;
	return !(f->flags & SCIF_DEV_FREE) || e->state == SCIF_DEV_STATE_FREE;
}

SCIF_EXPORT_IF_KUNIT(scif_dev_filter_match);

static bool scif_dev_zero(const void *p, size_t len)
{
	return !memchr_inv(p, 0, len);
}

static bool scif_dev_bars_valid(const struct scif_dev_entry *e)
{
	u8 known = SCIF_DEV_BAR_MEM | SCIF_DEV_BAR_64 | SCIF_DEV_BAR_PREFETCH;
	int i;

	if (e->nr_bars > PCI_STD_NUM_BARS)
		return false;
	for (i = 0; i < PCI_STD_NUM_BARS; i++) {
		u64 size = e->bar_size[i];
		u8 flags = e->bar_flags[i];

		if (i >= e->nr_bars && (size || flags))
			return false;
		if (flags & ~known || (!size && flags))
			return false;
		if (size && (!is_power_of_2(size) ||
			     size < (flags & SCIF_DEV_BAR_MEM ? 16 : 4)))
			return false;
	}
	return true;
}

/*
 * Whether @e, sent by @node, is an entry a lender may send: its own
 * fdid, values in range, the name terminated, reserved bytes zero.
 */
SCIF_VISIBLE_IF_KUNIT
bool scif_dev_entry_valid(const struct scif_dev_entry *e, u16 node)
{
	if (e->fdid >> 48 != node || e->node != node)
		return false;
	if (e->pci_class > 0xffffff || e->state > SCIF_DEV_STATE_MAX)
		return false;
	if (!e->modes ||
	    e->modes & ~(SCIF_DEV_MODE_EXCLUSIVE | SCIF_DEV_MODE_SHARED))
		return false;
	if (!memchr(e->name, 0, sizeof(e->name)))
		return false;
	if (e->reserved0 || !scif_dev_zero(e->reserved1, sizeof(e->reserved1)) ||
	    !scif_dev_zero(e->reserved2, sizeof(e->reserved2)))
		return false;
	return scif_dev_bars_valid(e);
}

SCIF_EXPORT_IF_KUNIT(scif_dev_entry_valid);

/* ---- Lender: the lent list ---- */

static struct scif_lent *scif_lent_find(u64 fdid)
{
	struct scif_lent *l;

	lockdep_assert_held(&scif_devices_lock);
	if (fdid >> 48 != scif_dev_self() ||
	    ((fdid >> 32) & 0xffff) != scif_dev_epoch)
		return NULL;
	list_for_each_entry(l, &scif_lent_list, link)
		if (l->index == (u32)fdid)
			return l;
	return NULL;
}

/* Forget @b; the function's last borrow gone, queue its reset. */
static void scif_lend_drop(struct scif_lent *l, struct scif_lend_borrow *b)
{
	lockdep_assert_held(&scif_devices_lock);
	list_del(&b->link);
	WRITE_ONCE(l->nr_borrows, l->nr_borrows - 1);
	if (b->exclusive)
		l->exclusive = false;
	if (scif_lend_node_borrows[b->node])
		scif_lend_node_borrows[b->node]--;
	kfree(b);
	if (!l->nr_borrows && !l->withdrawing) {
		l->resetting = true;
		queue_delayed_work(scif_info.wq, &l->reset_work, 0);
	}
	wake_up_all(&scif_dev_wq);
}

/*
 * Stop @pdev's DMA and reset it; pci_reset_function*() save and restore
 * its configuration space.  @locked: the caller holds the device lock
 * (remove); else the lock is only tried, -EAGAIN if it is taken.
 */
static int scif_lend_reset(struct pci_dev *pdev, bool locked)
{
	pci_clear_master(pdev);
	if (locked)
		return pci_reset_function_locked(pdev);
	return pci_try_reset_function(pdev);
}

static void scif_lend_reset_work(struct work_struct *work)
{
	struct scif_lent *l = container_of(to_delayed_work(work),
					   struct scif_lent, reset_work);
	int err;

	mutex_lock(&scif_devices_lock);
	if (l->withdrawing || l->nr_borrows || !l->resetting) {
		mutex_unlock(&scif_devices_lock);
		return;
	}
	mutex_unlock(&scif_devices_lock);

	/* No borrow is granted while resetting: the function is ours. */
	err = scif_lend_reset(l->pdev, false);
	if (err == -EAGAIN) {
		queue_delayed_work(scif_info.wq, &l->reset_work, HZ / 10);
		return;
	}
	mutex_lock(&scif_devices_lock);
	l->resetting = false;
	if (err) {
		l->dirty = true;
		pci_info(l->pdev, "scif_lend: no reset (%d): dirty, not lent until bound again\n",
			 err);
	}
	mutex_unlock(&scif_devices_lock);
}

/* ---- Lender: message handlers (rx_work) ---- */

static void scif_lend_handle_list(struct scif_node *node,
				  const struct scif_msg *msg)
{
	struct scif_dev_filter f = {
		.pci_class = msg->arg[1] & 0xffffff,
		.class_mask = (msg->arg[1] >> 24) & 0xffffff,
		.vendor = (u16)msg->arg[2],
		.device = (u16)(msg->arg[2] >> 16),
		.flags = msg->arg[2] >> 32,
	};
	u64 cursor = msg->arg[3], next = 0;
	struct scif_dev_entry e = {};
	struct scif_msg reply;
	struct scif_lent *l;
	unsigned int part;
	u64 err = 0;

	if (!scif_dev_filter_valid(&f)) {
		err = EINVAL;
		goto end;
	}
	mutex_lock(&scif_devices_lock);
	list_for_each_entry(l, &scif_lent_list, link) {
		if (l->index < cursor || !test_bit(node->id, l->nodes))
			continue;
		scif_lent_entry(l, &e);
		if (scif_dev_filter_match(&f, &e)) {
			next = (u64)l->index + 1;
			break;
		}
	}
	mutex_unlock(&scif_devices_lock);
	if (!next)
		goto end;
	scif_dev_entry_maybe_corrupt(&e, &next);
	for (part = 0; part < SCIF_DEV_LIST_PARTS; part++) {
		size_t off = part * SCIF_DEV_PART_LEN;

		scif_nodemsg_init(&reply, SCIF_MSG_DEV_LIST_ACK, 0, 0);
		reply.arg[0] = msg->arg[0];
		reply.arg[1] = part;
		memcpy(&reply.arg[2], (u8 *)&e + off,
		       min_t(size_t, SCIF_DEV_PART_LEN, sizeof(e) - off));
		if (part == SCIF_DEV_LIST_PARTS - 1)
			reply.arg[3] = next;
		scif_node_reply(node, &reply);
	}
	return;
end:
	scif_nodemsg_init(&reply, SCIF_MSG_DEV_LIST_ACK, 0, 0);
	reply.arg[0] = msg->arg[0];
	reply.arg[1] = SCIF_DEV_LIST_END;
	reply.arg[2] = err;
	scif_node_reply(node, &reply);
}

/* Why @l cannot be borrowed by @node as @excl asks (-errno), or 0. */
static int scif_lend_refusal(struct scif_lent *l, u16 node, bool excl)
{
	lockdep_assert_held(&scif_devices_lock);
	if (!l || l->withdrawing)
		return -ENOENT;
	if (!test_bit(node, l->nodes))
		return -EACCES;
	if (l->dirty)
		return -ENXIO;
	if (l->resetting)
		return -EBUSY;
	if (!(l->modes & (excl ? SCIF_DEV_MODE_EXCLUSIVE :
			  SCIF_DEV_MODE_SHARED)))
		return -EACCES;
	if (excl ? l->nr_borrows : l->exclusive)
		return -EBUSY;
	if (scif_lend_node_borrows[node] >= READ_ONCE(max_borrows_per_node) ||
	    l->nr_borrows >= READ_ONCE(max_dev_borrowers))
		return -EAGAIN;
	return 0;
}

/* A borrow id not in use on @l, non-zero. */
static u64 scif_lend_new_id(struct scif_lent *l)
{
	struct scif_lend_borrow *b;
	u64 id;

	lockdep_assert_held(&scif_devices_lock);
again:
	id = get_random_u64();
	if (!id)
		goto again;
	list_for_each_entry(b, &l->borrows, link)
		if (b->id == id)
			goto again;
	return id;
}

static int scif_lend_grant(struct scif_node *node, const struct scif_msg *msg,
			   u64 *id)
{
	bool excl = msg->arg[2] & SCIF_DEV_EXCLUSIVE;
	struct scif_lend_borrow *b;
	struct scif_lent *l;
	int err;

	if (msg->arg[2] & ~(u64)SCIF_DEV_EXCLUSIVE || !msg->arg[3])
		return -EINVAL;
	/* Bounded: max_borrows_per_node per node, checked below. */
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -EAGAIN;
	mutex_lock(&scif_devices_lock);
	l = scif_lent_find(msg->arg[1]);
	err = scif_lend_refusal(l, node->id, excl);
	if (!err) {
		b->id = scif_lend_new_id(l);
		b->token = msg->arg[3];
		b->node = node->id;
		b->exclusive = excl;
		list_add_tail(&b->link, &l->borrows);
		l->nr_borrows++;
		l->exclusive = excl;
		scif_lend_node_borrows[node->id]++;
		*id = b->id;
	}
	mutex_unlock(&scif_devices_lock);
	if (err)
		kfree(b);
	return err;
}

static void scif_lend_handle_borrow(struct scif_node *node,
				    const struct scif_msg *msg)
{
	struct scif_msg reply;
	u64 id = 0;

	scif_nodemsg_init(&reply, SCIF_MSG_DEV_BORROW_ACK, 0, 0);
	reply.arg[0] = msg->arg[0];
	reply.arg[2] = -scif_lend_grant(node, msg, &id);
	reply.arg[1] = id;
	scif_node_reply(node, &reply);
}

/* @node's borrow of @l named by id @id, or by token @token if @id is 0. */
static struct scif_lend_borrow *scif_lend_borrow_find(struct scif_lent *l,
						      u16 node, u64 id,
						      u64 token)
{
	struct scif_lend_borrow *b;

	lockdep_assert_held(&scif_devices_lock);
	if (!l || (!id && !token))
		return NULL;
	list_for_each_entry(b, &l->borrows, link)
		if (b->node == node && (id ? b->id == id : b->token == token))
			return b;
	return NULL;
}

/* DEV_RETURN, and DEV_WITHDRAW_ACK (no answer). */
static void scif_lend_handle_return(struct scif_node *node,
				    const struct scif_msg *msg)
{
	bool ret = msg->op == SCIF_MSG_DEV_RETURN;
	struct scif_lend_borrow *b;
	struct scif_msg reply;
	struct scif_lent *l;

	mutex_lock(&scif_devices_lock);
	l = scif_lent_find(msg->arg[1]);
	b = scif_lend_borrow_find(l, node->id, msg->arg[2],
				  ret ? msg->arg[3] : 0);
	if (b && (ret || b->withdraw_sent))
		scif_lend_drop(l, b);
	else
		b = NULL;
	mutex_unlock(&scif_devices_lock);
	if (!b)
		atomic_inc(&scif_info.dropped_msgs);
	if (!ret)
		return;
	scif_nodemsg_init(&reply, SCIF_MSG_DEV_RETURN_ACK, 0, 0);
	reply.arg[0] = msg->arg[0];
	reply.arg[2] = b ? 0 : ENOENT;
	scif_node_reply(node, &reply);
}

/* ---- Borrower: requests ---- */

static struct scif_dev_req *scif_dev_req_find(u16 node, u64 id, u32 op)
{
	struct scif_dev_req *req;

	lockdep_assert_held(&scif_devices_lock);
	list_for_each_entry(req, &scif_dev_reqs, link)
		if (req->id == id && req->node == node &&
		    req->answer_op == op && !req->done)
			return req;
	return NULL;
}

static void scif_dev_req_finish(struct scif_dev_req *req, int err)
{
	lockdep_assert_held(&scif_devices_lock);
	req->err = err;
	WRITE_ONCE(req->done, true);
	wake_up_all(&scif_dev_wq);
}

/* A wait condition: no lock (the waiter takes it to read the answer). */
static bool scif_dev_req_done(struct scif_dev_req *req)
{
	return READ_ONCE(req->done);
}

/* Wait for @req's answer: jiffies left, 0 (timed out), < 0 (signal). */
static long scif_dev_wait(struct scif_dev_req *req, bool intr,
			  unsigned long tmo)
{
	if (!intr)
		return wait_event_timeout(scif_dev_wq, scif_dev_req_done(req),
					  tmo);
	return wait_event_interruptible_timeout(scif_dev_wq,
						scif_dev_req_done(req), tmo);
}

/*
 * Send @msg (its arg[0] set here) to node @nid and wait for its answer
 * of type @answer, at most dev_msg_timeout_ms; a signal ends the wait
 * (-EINTR) but for a return's answer, which close() waits for too.
 * Return: 0 with the answer in @req, or -ENODEV, -EINTR, -ETIMEDOUT,
 * -EPROTO.
 */
static int scif_dev_request(u16 nid, struct scif_msg *msg,
			    struct scif_dev_req *req, u32 answer)
{
	struct scif_node *node = scif_node_get_online(nid);
	unsigned long tmo = msecs_to_jiffies(READ_ONCE(dev_msg_timeout_ms));
	long left;
	int err;

	if (!node)
		return -ENODEV;
	req->id = atomic64_inc_return(&scif_dev_req_id);
	req->node = nid;
	req->answer_op = answer;
	req->done = false;
	req->err = 0;
	req->part = 0;
	req->have_entry = false;
	msg->arg[0] = req->id;
	mutex_lock(&scif_devices_lock);
	list_add_tail(&req->link, &scif_dev_reqs);
	mutex_unlock(&scif_devices_lock);

	err = scif_node_send(node, msg);
	if (!err) {
		left = scif_dev_wait(req, answer != SCIF_MSG_DEV_RETURN_ACK,
				     tmo);
		err = left < 0 ? -EINTR : !left ? -ETIMEDOUT : 0;
	}

	mutex_lock(&scif_devices_lock);
	list_del(&req->link);
	if (req->done)
		err = req->err;
	mutex_unlock(&scif_devices_lock);
	return err;
}

/* DEV_LIST_ACK: one part of an entry, or the end. */
static void scif_dev_handle_list_ack(struct scif_dev_req *req,
				     const struct scif_msg *msg)
{
	u64 part = msg->arg[1];
	size_t off;

	lockdep_assert_held(&scif_devices_lock);
	if (part == SCIF_DEV_LIST_END) {
		scif_dev_req_finish(req, scif_node_errno(msg->arg[2], true,
							 scif_dev_answers));
		return;
	}
	if (part != req->part) {
		scif_dev_req_finish(req, -EPROTO);
		return;
	}
	off = part * SCIF_DEV_PART_LEN;
	memcpy((u8 *)&req->entry + off, &msg->arg[2],
	       min_t(size_t, SCIF_DEV_PART_LEN, sizeof(req->entry) - off));
	req->part++;
	if (req->part < SCIF_DEV_LIST_PARTS)
		return;
	req->cursor = msg->arg[3];
	req->have_entry = true;
	scif_dev_req_finish(req, 0);
}

/* DEV_BORROW_ACK: a granted borrow is ACTIVE before anything follows. */
static void scif_dev_handle_borrow_ack(struct scif_dev_req *req,
				       const struct scif_msg *msg)
{
	struct scif_dev_borrow *b = req->borrow;
	int err;

	lockdep_assert_held(&scif_devices_lock);
	err = scif_node_errno(msg->arg[2], true, scif_dev_answers);
	if (!err && !msg->arg[1])
		err = -EPROTO;
	if (!err && b && b->state == SCIF_BORROW_PENDING) {
		b->id = msg->arg[1];
		b->state = SCIF_BORROW_ACTIVE;
	}
	memcpy(req->arg, msg->arg, sizeof(req->arg));
	scif_dev_req_finish(req, err);
}

static void scif_dev_handle_answer(struct scif_node *node,
				   const struct scif_msg *msg)
{
	struct scif_dev_req *req;

	mutex_lock(&scif_devices_lock);
	req = scif_dev_req_find(node->id, msg->arg[0], msg->op);
	if (!req) {
		mutex_unlock(&scif_devices_lock);
		atomic_inc(&scif_info.dropped_msgs);
		return;
	}
	if (msg->op == SCIF_MSG_DEV_LIST_ACK) {
		scif_dev_handle_list_ack(req, msg);
	} else if (msg->op == SCIF_MSG_DEV_BORROW_ACK) {
		scif_dev_handle_borrow_ack(req, msg);
	} else {
		memcpy(req->arg, msg->arg, sizeof(req->arg));
		scif_dev_req_finish(req, scif_node_errno(msg->arg[2], true,
							 scif_dev_answers));
	}
	mutex_unlock(&scif_devices_lock);
}

/* ---- Borrower: loss and withdrawal ---- */

static void scif_borrow_free(struct kref *ref)
{
	kfree(container_of(ref, struct scif_dev_borrow, ref));
}

static void scif_borrow_lost_work(struct work_struct *work)
{
	struct scif_dev_borrow *b = container_of(work, struct scif_dev_borrow,
						 lost_work);
	const struct scif_dev_borrow_ops *ops;
	struct scif_node *node;
	struct scif_msg msg;
	u64 withdraw_id;
	void *priv;

	mutex_lock(&scif_devices_lock);
	ops = b->ops;
	priv = b->priv;
	withdraw_id = b->withdraw_id;
	mutex_unlock(&scif_devices_lock);

	if (ops && ops->lost)
		ops->lost(b, priv, b->why);
	node = withdraw_id ? scif_node_get_online(b->node) : NULL;
	if (node) {
		scif_nodemsg_init(&msg, SCIF_MSG_DEV_WITHDRAW_ACK, 0, 0);
		msg.arg[0] = withdraw_id;
		msg.arg[1] = b->fdid;
		msg.arg[2] = b->id;
		scif_node_send(node, &msg);
	}
	kref_put(&b->ref, scif_borrow_free);
}

/* @b ends without a return; lost() and the answer follow in a work. */
static void scif_borrow_lose(struct scif_dev_borrow *b, int why,
			     u64 withdraw_id)
{
	lockdep_assert_held(&scif_devices_lock);
	b->state = SCIF_BORROW_LOST;
	b->why = why;
	b->withdraw_id = withdraw_id;
	kref_get(&b->ref);
	if (!queue_work(scif_info.wq, &b->lost_work))
		kref_put(&b->ref, scif_borrow_free);
	wake_up_all(&b->wq);
}

static void scif_dev_handle_withdraw(struct scif_node *node,
				     const struct scif_msg *msg)
{
	struct scif_dev_borrow *b, *found = NULL;
	struct scif_msg reply;

	mutex_lock(&scif_devices_lock);
	list_for_each_entry(b, &scif_borrows, link) {
		if (b->node == node->id && b->fdid == msg->arg[1] &&
		    b->id == msg->arg[2] && b->state == SCIF_BORROW_ACTIVE) {
			found = b;
			scif_borrow_lose(b, -EREMOTEIO, msg->arg[0]);
			break;
		}
	}
	mutex_unlock(&scif_devices_lock);
	if (found)
		return;
	/* Not ours (any more): say so at once, the lender waits. */
	atomic_inc(&scif_info.dropped_msgs);
	scif_nodemsg_init(&reply, SCIF_MSG_DEV_WITHDRAW_ACK, 0, 0);
	reply.arg[0] = msg->arg[0];
	reply.arg[1] = msg->arg[1];
	reply.arg[2] = msg->arg[2];
	scif_node_reply(node, &reply);
}

/**
 * scif_devices_handle_msg() - handle a DEV_* node message
 * @node: the node it came from
 * @msg: the message; every field is the peer's and checked here
 * @ep: NULL (DEV_* messages name no endpoint)
 *
 * Context: the node's rx_work; takes scif_devices_lock, waits for
 * nothing remote (answers are queued with scif_node_reply()).
 * Return: nothing; a message naming nothing known is counted in
 * dropped_msgs (and a withdrawal answered).
 */
void scif_devices_handle_msg(struct scif_node *node, const struct scif_msg *msg,
			     struct scif_endpt *ep)
{
	switch (msg->op) {
	case SCIF_MSG_DEV_LIST:
		scif_lend_handle_list(node, msg);
		break;
	case SCIF_MSG_DEV_BORROW:
		scif_lend_handle_borrow(node, msg);
		break;
	case SCIF_MSG_DEV_RETURN:
	case SCIF_MSG_DEV_WITHDRAW_ACK:
		scif_lend_handle_return(node, msg);
		break;
	case SCIF_MSG_DEV_WITHDRAW:
		scif_dev_handle_withdraw(node, msg);
		break;
	default:
		scif_dev_handle_answer(node, msg);
		break;
	}
}

/**
 * scif_devices_node_lost() - a node is gone or failed
 * @node: the node
 *
 * As lender: its borrows are dropped and each function so freed is
 * reset.  As borrower: its borrows are lost (-ENODEV), requests to it
 * fail with -ENODEV.
 *
 * Context: process context, may sleep; the node's rx_work stopped.
 * Return: nothing; lost() callbacks and resets follow in work items.
 */
void scif_devices_node_lost(struct scif_node *node)
{
	struct scif_lend_borrow *lb, *ltmp;
	struct scif_dev_borrow *b;
	struct scif_dev_req *req;
	struct scif_lent *l;

	mutex_lock(&scif_devices_lock);
	list_for_each_entry(l, &scif_lent_list, link)
		list_for_each_entry_safe(lb, ltmp, &l->borrows, link)
			if (lb->node == node->id)
				scif_lend_drop(l, lb);
	list_for_each_entry(b, &scif_borrows, link)
		if (b->node == node->id && b->state != SCIF_BORROW_LOST)
			scif_borrow_lose(b, -ENODEV, 0);
	list_for_each_entry(req, &scif_dev_reqs, link)
		if (req->node == node->id && !req->done)
			scif_dev_req_finish(req, -ENODEV);
	mutex_unlock(&scif_devices_lock);
}

/* ---- Borrower: the calls ---- */

/* The first entry of node @nid at index @cursor or beyond matching @f. */
static int scif_dev_list_one(u16 nid, const struct scif_dev_filter *f,
			     u64 cursor, struct scif_dev_req *req)
{
	struct scif_msg msg;
	int err;

	scif_nodemsg_init(&msg, SCIF_MSG_DEV_LIST, 0, 0);
	msg.arg[1] = f->pci_class | (u64)f->class_mask << 24;
	msg.arg[2] = f->vendor | (u32)f->device << 16 | (u64)f->flags << 32;
	msg.arg[3] = cursor;
	err = scif_dev_request(nid, &msg, req, SCIF_MSG_DEV_LIST_ACK);
	if (err || !req->have_entry)
		return err;
	if (!scif_dev_entry_valid(&req->entry, nid) ||
	    !scif_dev_filter_match(f, &req->entry) ||
	    (u32)req->entry.fdid < cursor ||
	    req->cursor != (u64)(u32)req->entry.fdid + 1)
		return -EPROTO;
	return 0;
}

static int scif_dev_list_node(u16 nid, const struct scif_dev_filter *f,
			      struct scif_dev_entry *info, int max)
{
	struct scif_dev_req *req;
	u64 cursor = 0;
	int n = 0, err = 0;

	req = kzalloc(sizeof(*req), GFP_KERNEL_ACCOUNT);
	if (!req)
		return -ENOMEM;
	while (n < max) {
		err = scif_dev_list_one(nid, f, cursor, req);
		if (err || !req->have_entry)
			break;
		info[n++] = req->entry;
		cursor = req->cursor;
	}
	kfree(req);
	return err ?: n;
}

/**
 * scif_dev_list() - list the PCI functions lent in the SCIF network
 * @node: a node id, or SCIF_DEV_ANY_NODE for every node online (this one
 *	included), one after another
 * @filter: which functions (struct scif_dev_filter)
 * @info: receives up to @max entries
 * @max: room at @info
 *
 * Each entry is checked (its fdid names the node that sent it, values in
 * range) and filtered again here.  With SCIF_DEV_ANY_NODE, a node that
 * goes offline meanwhile is skipped.
 *
 * Context: process context; sleeps for each lender's answers, at most
 * dev_msg_timeout_ms each.
 * Return: the entries written, or -EINVAL (bad filter, @max < 0),
 * -ENODEV (@node is not online), -ETIMEDOUT, -EPROTO (a lender's answer
 * made no sense), -ENOMEM, -EINTR.
 */
int scif_dev_list(u16 node, const struct scif_dev_filter *filter,
		  struct scif_dev_entry *info, int max)
{
	int n = 0, r;
	u16 id;

	if (!scif_dev_filter_valid(filter) || max < 0)
		return -EINVAL;
	if (node != SCIF_DEV_ANY_NODE)
		return scif_dev_list_node(node, filter, info, max);
	for (id = 0; id < SCIF_MAX_NODES && n < max; id++) {
		if (!scif_node_get_online(id))
			continue;
		r = scif_dev_list_node(id, filter, info + n, max - n);
		if (r == -ENODEV)
			continue;
		if (r < 0)
			return r;
		n += r;
	}
	return n;
}
EXPORT_SYMBOL_GPL(scif_dev_list);

static int scif_dev_send_return(struct scif_dev_borrow *b, u64 id, u64 token)
{
	struct scif_dev_req req = {};
	struct scif_msg msg;

	scif_nodemsg_init(&msg, SCIF_MSG_DEV_RETURN, 0, 0);
	msg.arg[1] = b->fdid;
	msg.arg[2] = id;
	msg.arg[3] = id ? 0 : token;
	return scif_dev_request(b->node, &msg, &req, SCIF_MSG_DEV_RETURN_ACK);
}

static struct scif_dev_borrow *scif_borrow_new(u64 fdid, int flags)
{
	struct scif_dev_borrow *b;

	b = kzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);
	if (!b)
		return ERR_PTR(-ENOMEM);
	kref_init(&b->ref);
	b->fdid = fdid;
	b->node = fdid >> 48;
	b->flags = flags;
	b->token = get_random_u64() | 1;
	b->state = SCIF_BORROW_PENDING;
	init_waitqueue_head(&b->wq);
	INIT_WORK(&b->lost_work, scif_borrow_lost_work);
	mutex_lock(&scif_devices_lock);
	if (scif_nr_borrows >= READ_ONCE(max_dev_borrows)) {
		mutex_unlock(&scif_devices_lock);
		kfree(b);
		return ERR_PTR(-EAGAIN);
	}
	list_add_tail(&b->link, &scif_borrows);
	scif_nr_borrows++;
	mutex_unlock(&scif_devices_lock);
	return b;
}

/*
 * Forget @b: take it off the list, give it back to the lender if it is
 * still active (a pending one by its token), wait for a queued lost(),
 * drop the holder's reference.  Return: the return's error, or 0.
 */
static int scif_borrow_end(struct scif_dev_borrow *b)
{
	enum scif_borrow_state state;
	int err = 0;
	u64 id;

	mutex_lock(&scif_devices_lock);
	list_del(&b->link);
	scif_nr_borrows--;
	state = b->state;
	id = b->id;
	b->state = SCIF_BORROW_LOST;
	mutex_unlock(&scif_devices_lock);
	if (state != SCIF_BORROW_LOST)
		err = scif_dev_send_return(b, id, b->token);
	flush_work(&b->lost_work);
	kref_put(&b->ref, scif_borrow_free);
	return err == -ENOENT ? 0 : err;
}

/**
 * scif_dev_borrow() - borrow a lent PCI function
 * @fdid: the function, from scif_dev_list()
 * @flags: SCIF_DEV_EXCLUSIVE, or 0 for a shared borrow
 * @ops: told when the borrow ends without a return; may be NULL
 * @priv: given back to @ops
 *
 * The lender decides: an exclusive borrow needs no other borrower, a
 * shared one no exclusive borrower.  A borrow whose answer did not come
 * in time is given back by its token.
 *
 * Context: process context; sleeps for the lender's answer, at most
 * dev_msg_timeout_ms or until a signal (then, to give the borrow back,
 * up to dev_msg_timeout_ms more, which no signal cuts).
 * Return: the borrow, or ERR_PTR() of -EINVAL (@flags), -ENOENT (no such
 * function, or one of a previous life of its lender), -EBUSY (the modes
 * conflict, or the function is being reset), -ENXIO (dirty: it could not
 * be reset), -EACCES (mode not offered), -EAGAIN (a budget), -ENODEV
 * (the lender is not online, or was lost), -ETIMEDOUT, -EPROTO, -ENOMEM,
 * -EINTR.
 */
struct scif_dev_borrow *scif_dev_borrow(u64 fdid, int flags,
					const struct scif_dev_borrow_ops *ops,
					void *priv)
{
	struct scif_dev_req req = {};
	struct scif_dev_borrow *b;
	struct scif_msg msg;
	int err;

	if (flags & ~SCIF_DEV_EXCLUSIVE)
		return ERR_PTR(-EINVAL);
	if (fdid >> 48 >= SCIF_MAX_NODES)
		return ERR_PTR(-ENOENT);
	b = scif_borrow_new(fdid, flags);
	if (IS_ERR(b))
		return b;
	req.borrow = b;
	scif_nodemsg_init(&msg, SCIF_MSG_DEV_BORROW, 0, 0);
	msg.arg[1] = fdid;
	msg.arg[2] = flags;
	msg.arg[3] = b->token;
	err = scif_dev_request(b->node, &msg, &req, SCIF_MSG_DEV_BORROW_ACK);

	mutex_lock(&scif_devices_lock);
	if (!err && b->state != SCIF_BORROW_ACTIVE)
		err = -ENODEV;		/* lost or withdrawn meanwhile */
	/* Refused: nothing to give back (timed out: maybe granted). */
	if (err && err != -ETIMEDOUT && err != -EINTR &&
	    b->state == SCIF_BORROW_PENDING)
		b->state = SCIF_BORROW_LOST;
	if (!err) {
		b->ops = ops;
		b->priv = priv;
	}
	mutex_unlock(&scif_devices_lock);
	if (!err)
		return b;
	/* A PENDING borrow is given back by its token: it may be granted. */
	scif_borrow_end(b);
	return ERR_PTR(err);
}
EXPORT_SYMBOL_GPL(scif_dev_borrow);

/**
 * scif_dev_return() - give a borrowed function back
 * @b: the borrow, from scif_dev_borrow(); freed here
 *
 * The lender resets the function once its last borrower returned it.
 * Must not be called from @b's lost() callback.
 *
 * Context: process context; sleeps for the lender's answer, at most
 * dev_msg_timeout_ms, and for a running lost() callback.
 * Return: 0 (also for a borrow that was lost: nothing is sent), or the
 * error of the return message (-ETIMEDOUT, -ENODEV, -EPROTO); @b is
 * freed either way.
 */
int scif_dev_return(struct scif_dev_borrow *b)
{
	return scif_borrow_end(b);
}
EXPORT_SYMBOL_GPL(scif_dev_return);

/**
 * scif_dev_borrow_info() - the entry of a borrowed function, as now
 * @b: the borrow
 * @info: receives the entry (borrowers and state as the lender has them)
 *
 * Context: process context; sleeps for the lender's answer, at most
 * dev_msg_timeout_ms.
 * Return: 0, -ENODEV (the borrow was lost), or an error of
 * scif_dev_list().
 */
int scif_dev_borrow_info(struct scif_dev_borrow *b,
			 struct scif_dev_entry *info)
{
	const struct scif_dev_filter any = {
		.vendor = SCIF_DEV_ANY_ID, .device = SCIF_DEV_ANY_ID,
	};
	struct scif_dev_req *req;
	int err;

	if (READ_ONCE(b->state) != SCIF_BORROW_ACTIVE)
		return -ENODEV;
	req = kzalloc(sizeof(*req), GFP_KERNEL_ACCOUNT);
	if (!req)
		return -ENOMEM;
	err = scif_dev_list_one(b->node, &any, (u32)b->fdid, req);
	if (!err && (!req->have_entry || req->entry.fdid != b->fdid))
		err = -ENODEV;		/* withdrawn */
	if (!err)
		*info = req->entry;
	kfree(req);
	return err;
}
EXPORT_SYMBOL_GPL(scif_dev_borrow_info);

/**
 * scif_dev_borrow_poll() - poll of a borrow file
 * @b: its borrow
 * @f: the file
 * @wait: the poll table
 *
 * Context: process context.
 * Return: EPOLLERR | EPOLLHUP once the borrow is lost, else 0.
 */
__poll_t scif_dev_borrow_poll(struct scif_dev_borrow *b, struct file *f,
			      poll_table *wait)
{
	poll_wait(f, &b->wq, wait);
	return READ_ONCE(b->state) == SCIF_BORROW_LOST ? EPOLLERR | EPOLLHUP :
							  0;
}

/* ---- The scif_lend driver ---- */

/* Only an override naming scif_lend binds it: never an id table. */
static bool scif_lend_overridden(struct pci_dev *pdev)
{
	bool set;

#ifdef SCIF_HAVE_DEV_DRIVER_OVERRIDE
	spin_lock(&pdev->dev.driver_override.lock);
	set = pdev->dev.driver_override.name &&
	      !strcmp(pdev->dev.driver_override.name, "scif_lend");
	spin_unlock(&pdev->dev.driver_override.lock);
#else
	device_lock_assert(&pdev->dev);
	set = pdev->driver_override &&
	      !strcmp(pdev->driver_override, "scif_lend");
#endif
	return set;
}

static int scif_lend_add(struct scif_lent *l)
{
	int err = 0;

	mutex_lock(&scif_devices_lock);
	if (scif_nr_lent >= READ_ONCE(max_lent_devices) || !scif_lent_next) {
		err = -ENOSPC;
	} else {
		l->index = scif_lent_next++;
		list_add_tail(&l->link, &scif_lent_list);
		scif_nr_lent++;
	}
	mutex_unlock(&scif_devices_lock);
	return err;
}

static int scif_lend_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct scif_lent *l;
	int err;

	if (!scif_lend_overridden(pdev))
		return -ENODEV;
	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return -ENOMEM;
	l->pdev = pdev;
	l->modes = SCIF_DEV_MODE_EXCLUSIVE | SCIF_DEV_MODE_SHARED;
	bitmap_fill(l->nodes, SCIF_MAX_NODES);
	INIT_LIST_HEAD(&l->borrows);
	INIT_DELAYED_WORK(&l->reset_work, scif_lend_reset_work);
	err = pci_enable_device(pdev);
	if (err)
		goto undo_alloc;
	err = pci_request_regions(pdev, "scif_lend");
	if (err)
		goto undo_enable;
	pci_set_drvdata(pdev, l);
	err = scif_lend_add(l);
	if (err)
		goto undo_regions;
	pci_info(pdev, "scif_lend: lent as fdid %#llx\n", scif_lent_fdid(l));
	return 0;

undo_regions:
	pci_release_regions(pdev);
undo_enable:
	pci_disable_device(pdev);
undo_alloc:
	kfree(l);
	return err;
}

/* Send DEV_WITHDRAW for each borrow of @l; one not sent is dropped. */
static void scif_lend_withdraw(struct scif_lent *l)
{
	struct scif_lend_borrow *b;
	struct scif_node *node;
	struct scif_msg msg;
	bool more = true;
	u16 nid = 0;

	while (more) {
		more = false;
		node = NULL;
		scif_nodemsg_init(&msg, SCIF_MSG_DEV_WITHDRAW, 0, 0);
		mutex_lock(&scif_devices_lock);
		list_for_each_entry(b, &l->borrows, link) {
			if (b->withdraw_sent)
				continue;
			b->withdraw_sent = true;
			msg.arg[0] = atomic64_inc_return(&scif_dev_req_id);
			msg.arg[1] = scif_lent_fdid(l);
			msg.arg[2] = b->id;
			msg.arg[3] = EREMOTEIO;
			nid = b->node;
			node = scif_node_get_online(nid);
			more = true;
			break;
		}
		mutex_unlock(&scif_devices_lock);
		if (more && (!node || scif_node_send(node, &msg))) {
			mutex_lock(&scif_devices_lock);
			b = scif_lend_borrow_find(l, nid, msg.arg[2], 0);
			if (b)
				scif_lend_drop(l, b);
			mutex_unlock(&scif_devices_lock);
		}
	}
}

/* A wait condition: no lock (remove() takes it afterwards). */
static bool scif_lend_unborrowed(struct scif_lent *l)
{
	return !READ_ONCE(l->nr_borrows);
}

/* Unbind, removal, unload: the borrowers are told, then it is reset. */
static void scif_lend_remove(struct pci_dev *pdev)
{
	struct scif_lent *l = pci_get_drvdata(pdev);
	struct scif_lend_borrow *b, *tmp;
	bool used;

	mutex_lock(&scif_devices_lock);
	l->withdrawing = true;
	used = l->nr_borrows || l->resetting;
	mutex_unlock(&scif_devices_lock);
	cancel_delayed_work_sync(&l->reset_work);

	scif_lend_withdraw(l);
	wait_event_timeout(scif_dev_wq, scif_lend_unborrowed(l),
			   msecs_to_jiffies(READ_ONCE(dev_withdraw_ms)));
	mutex_lock(&scif_devices_lock);
	list_for_each_entry_safe(b, tmp, &l->borrows, link)
		scif_lend_drop(l, b);
	list_del(&l->link);
	scif_nr_lent--;
	if (l->dirty)
		used = false;
	mutex_unlock(&scif_devices_lock);

	if (used && scif_lend_reset(pdev, true))
		pci_info(pdev, "scif_lend: no reset on withdrawal\n");
	pci_release_regions(pdev);
	pci_disable_device(pdev);
	kfree(l);
}

/*
 * The attributes scif_modes and scif_nodes of a lent function (root,
 * writable).  The driver core adds them after probe() and removes them,
 * waiting for a running show or store, before remove(): drvdata is the
 * function's struct scif_lent throughout.
 */

/* Whether a borrow of @l would lose its mode or node under @modes/@nodes. */
static bool scif_lend_would_drop(struct scif_lent *l, u8 modes,
				 const unsigned long *nodes)
{
	struct scif_lend_borrow *b;

	lockdep_assert_held(&scif_devices_lock);
	list_for_each_entry(b, &l->borrows, link) {
		if (!test_bit(b->node, nodes) ||
		    !(modes & (b->exclusive ? SCIF_DEV_MODE_EXCLUSIVE :
			       SCIF_DEV_MODE_SHARED)))
			return true;
	}
	return false;
}

/*
 * Set @l's modes (@modes non-zero) or nodes (@nodes non-NULL), unless a
 * borrow would lose its grant: -EBUSY then.
 */
static int scif_lend_offer(struct scif_lent *l, u8 modes,
			   const unsigned long *nodes)
{
	int err = 0;

	mutex_lock(&scif_devices_lock);
	if (scif_lend_would_drop(l, modes ?: l->modes, nodes ?: l->nodes))
		err = -EBUSY;
	else if (modes)
		l->modes = modes;
	else
		bitmap_copy(l->nodes, nodes, SCIF_MAX_NODES);
	mutex_unlock(&scif_devices_lock);
	return err;
}

static ssize_t scif_modes_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	struct scif_lent *l = dev_get_drvdata(dev);
	u8 modes;

	mutex_lock(&scif_devices_lock);
	modes = l->modes;
	mutex_unlock(&scif_devices_lock);
	return sysfs_emit(buf, "%s%s%s\n",
			  modes & SCIF_DEV_MODE_EXCLUSIVE ? "exclusive" : "",
			  modes == (SCIF_DEV_MODE_EXCLUSIVE |
				    SCIF_DEV_MODE_SHARED) ? " " : "",
			  modes & SCIF_DEV_MODE_SHARED ? "shared" : "");
}

/* "exclusive", "shared", or both separated by blanks or a comma. */
static int scif_modes_parse(const char *buf, u8 *modes)
{
	char word[16];
	size_t n;

	*modes = 0;
	for (;;) {
		buf = skip_spaces(buf);
		if (*buf == ',')
			buf = skip_spaces(buf + 1);
		if (!*buf)
			break;
		n = strcspn(buf, " \t\n,");
		if (n >= sizeof(word))
			return -EINVAL;
		memcpy(word, buf, n);
		word[n] = '\0';
		buf += n;
		if (!strcmp(word, "exclusive"))
			*modes |= SCIF_DEV_MODE_EXCLUSIVE;
		else if (!strcmp(word, "shared"))
			*modes |= SCIF_DEV_MODE_SHARED;
		else
			return -EINVAL;
	}
	return *modes ? 0 : -EINVAL;
}

static ssize_t scif_modes_store(struct device *dev,
				struct device_attribute *attr,
				const char *buf, size_t count)
{
	struct scif_lent *l = dev_get_drvdata(dev);
	u8 modes;
	int err;

	err = scif_modes_parse(buf, &modes);
	if (!err)
		err = scif_lend_offer(l, modes, NULL);
	return err ? err : count;
}
static DEVICE_ATTR_RW(scif_modes);

static ssize_t scif_nodes_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	struct scif_lent *l = dev_get_drvdata(dev);
	ssize_t n;

	mutex_lock(&scif_devices_lock);
	n = sysfs_emit(buf, "%*pbl\n", SCIF_MAX_NODES, l->nodes);
	mutex_unlock(&scif_devices_lock);
	return n;
}

/* "all", "none", or a list of node ids and ranges ("0,2-3"). */
static ssize_t scif_nodes_store(struct device *dev,
				struct device_attribute *attr,
				const char *buf, size_t count)
{
	struct scif_lent *l = dev_get_drvdata(dev);
	DECLARE_BITMAP(nodes, SCIF_MAX_NODES);
	int err;

	if (sysfs_streq(buf, "all"))
		bitmap_fill(nodes, SCIF_MAX_NODES);
	else if (sysfs_streq(buf, "none"))
		bitmap_zero(nodes, SCIF_MAX_NODES);
	else if (bitmap_parselist(buf, nodes, SCIF_MAX_NODES))
		return -EINVAL;
	err = scif_lend_offer(l, 0, nodes);
	return err ? err : count;
}
static DEVICE_ATTR_RW(scif_nodes);

static struct attribute *scif_lend_attrs[] = {
	&dev_attr_scif_modes.attr,
	&dev_attr_scif_nodes.attr,
	NULL
};
ATTRIBUTE_GROUPS(scif_lend);

static struct pci_driver scif_lend_driver = {
	.name = "scif_lend",
	.probe = scif_lend_probe,
	.remove = scif_lend_remove,
	.dev_groups = scif_lend_groups,
};

/**
 * scif_devices_init() - draw this life's epoch, register scif_lend
 *
 * Context: module load.
 * Return: 0 or an error of pci_register_driver().
 */
int scif_devices_init(void)
{
	scif_dev_epoch = get_random_u32() & 0xffff;
	/*
	 * Indices start anywhere in the lower half: a new life whose epoch
	 * happens to be the last one's still names its functions anew.
	 */
	scif_lent_next = (get_random_u32() >> 1) + 1;
	return pci_register_driver(&scif_lend_driver);
}

/**
 * scif_devices_exit() - unregister scif_lend, withdrawing what it lent
 *
 * Context: module unload, before the nodes go; borrows of this node are
 * gone (their holders keep the module).
 * Return: nothing; every lent function is withdrawn and reset first.
 */
void scif_devices_exit(void)
{
	pci_unregister_driver(&scif_lend_driver);
}
