/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: allocation-failure injection and the test build's hook
 * points, the lowest layer (it uses nothing of the driver).  Every
 * allocation of the core asks scif_fail_alloc() first (see the
 * scif_k*alloc() helpers below); on a kernel with
 * CONFIG_FAULT_INJECTION_DEBUG_FS the answer comes from the kernel's
 * fault injection, set through <debugfs>/scif/fail_alloc/
 * (Documentation/fault-injection), and is always "no" elsewhere.
 *
 * The hook points (scif_node_test_delay() and the others below) are
 * where the test build's hooks reach into the driver: they call the
 * struct scif_test_hooks that scif_testhooks.c registers at module load
 * (in scif_test_hooks, before any other code of the module runs), and
 * compile to nothing in the shipped build, which has no hooks.
 */
#ifndef _SCIF_FAULT_H_
#define _SCIF_FAULT_H_

#include <linux/compiler.h>
#include <linux/slab.h>
#include <linux/types.h>

struct dentry;
struct scif_dev_entry;
struct scif_msg;
struct scif_node;
struct scif_runlist;

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
bool scif_fail_alloc(void);
void scif_fault_init(struct dentry *dir);
#else
static inline bool scif_fail_alloc(void)
{
	return false;
}

static inline void scif_fault_init(struct dentry *dir)
{
}
#endif

/* Delay points: scif_node_test_delay(), "delay" of <debugfs>/scif/node_test */
enum scif_node_delay {
	SCIF_DELAY_CONNECT,	/* connect: node found online, area allocated */
	SCIF_DELAY_ACCEPT,	/* accept: node found online, area allocated */
	SCIF_DELAY_NODE_LOST,	/* node lost: paths cut, references not dropped */
	SCIF_DELAY_FP_REVOKE,	/* fast path revoked: not live, half not zapped */
	SCIF_DELAY_MSG_COUNT,	/* send/recv: peer's count read, copy not begun */
	SCIF_DELAY_RELEASE,	/* a window seen out of the tree, an RMA
				 * taken off the queue: references not
				 * dropped yet
				 */
	SCIF_DELAY_RX_MSG,	/* rx_work: a node message read, not handled */
	SCIF_DELAY_NR
};

/**
 * struct scif_test_hooks - the test build's hooks (scif_testhooks.c)
 * @node_delay: sleep at a delay point if asked to
 * @node_held: whether work for a node is held back
 * @close_delay: a listener's close pauses in its walk of parked requests
 * @rma_delay: the copy engine pauses before a descriptor
 * @rma_piece_delay: the copy engine pauses before a piece of a copy
 * @rma_defer: whether a caller leaves its RMA to the engine's work
 * @window_drop_msg: whether to drop a window message
 * @runlist_corrupt: corrupt a run list about to be sent, if asked to
 * @dev_entry_corrupt: corrupt a device list entry (and the cursor after
 *	it) about to be sent, if asked to
 */
struct scif_test_hooks {
	void (*node_delay)(enum scif_node_delay point);
	bool (*node_held)(struct scif_node *node, unsigned int what);
	void (*close_delay)(void);
	void (*rma_delay)(void);
	void (*rma_piece_delay)(void);
	bool (*rma_defer)(void);
	bool (*window_drop_msg)(void);
	void (*runlist_corrupt)(struct scif_runlist *rl, struct scif_msg *msg);
	void (*dev_entry_corrupt)(struct scif_dev_entry *e, u64 *next);
};

#ifdef SCIF_TEST_HOOKS
extern const struct scif_test_hooks *scif_test_hooks;

static inline void scif_node_test_delay(enum scif_node_delay point)
{
	const struct scif_test_hooks *h = READ_ONCE(scif_test_hooks);

	if (h)
		h->node_delay(point);
}

static inline bool scif_node_test_held(struct scif_node *node,
				       unsigned int what)
{
	const struct scif_test_hooks *h = READ_ONCE(scif_test_hooks);

	return h && h->node_held(node, what);
}

static inline void scif_test_close_delay(void)
{
	const struct scif_test_hooks *h = READ_ONCE(scif_test_hooks);

	if (h)
		h->close_delay();
}

static inline void scif_rma_test_delay(void)
{
	const struct scif_test_hooks *h = READ_ONCE(scif_test_hooks);

	if (h)
		h->rma_delay();
}

static inline void scif_rma_test_piece_delay(void)
{
	const struct scif_test_hooks *h = READ_ONCE(scif_test_hooks);

	if (h)
		h->rma_piece_delay();
}

static inline bool scif_rma_test_defer(void)
{
	const struct scif_test_hooks *h = READ_ONCE(scif_test_hooks);

	return h && h->rma_defer();
}

static inline bool scif_window_drop_msg(void)
{
	const struct scif_test_hooks *h = READ_ONCE(scif_test_hooks);

	return h && h->window_drop_msg();
}

static inline void scif_window_runlist_maybe_corrupt(struct scif_runlist *rl,
						     struct scif_msg *msg)
{
	const struct scif_test_hooks *h = READ_ONCE(scif_test_hooks);

	if (h)
		h->runlist_corrupt(rl, msg);
}

static inline void scif_dev_entry_maybe_corrupt(struct scif_dev_entry *e,
						u64 *next)
{
	const struct scif_test_hooks *h = READ_ONCE(scif_test_hooks);

	if (h)
		h->dev_entry_corrupt(e, next);
}
#else
static inline void scif_node_test_delay(enum scif_node_delay point)
{
}

static inline bool scif_node_test_held(struct scif_node *node,
				       unsigned int what)
{
	return false;
}

static inline void scif_test_close_delay(void)
{
}

static inline void scif_rma_test_delay(void)
{
}

static inline void scif_rma_test_piece_delay(void)
{
}

static inline bool scif_rma_test_defer(void)
{
	return false;
}

static inline bool scif_window_drop_msg(void)
{
	return false;
}

static inline void scif_window_runlist_maybe_corrupt(struct scif_runlist *rl,
						     struct scif_msg *msg)
{
}

static inline void scif_dev_entry_maybe_corrupt(struct scif_dev_entry *e,
						u64 *next)
{
}
#endif

/*
 * The driver's allocations: the kernel's, failed on request by the
 * fail_alloc fault injection (debug kernels; scif_fault.h).  Callers
 * pass their GFP flags (GFP_KERNEL_ACCOUNT for what a user sizes,
 * __GFP_NOWARN for what a user or a peer may ask too much of).
 */
static inline void *scif_kzalloc(size_t size, gfp_t gfp)
{
	return scif_fail_alloc() ? NULL : kzalloc(size, gfp);
}

static inline void *scif_kcalloc(size_t n, size_t size, gfp_t gfp)
{
	return scif_fail_alloc() ? NULL : kcalloc(n, size, gfp);
}

static inline void *scif_kmalloc_array(size_t n, size_t size, gfp_t gfp)
{
	return scif_fail_alloc() ? NULL : kmalloc_array(n, size, gfp);
}

static inline void *scif_kvcalloc(size_t n, size_t size, gfp_t gfp)
{
	return scif_fail_alloc() ? NULL : kvcalloc(n, size, gfp);
}

static inline void *scif_kvmalloc_array(size_t n, size_t size, gfp_t gfp)
{
	return scif_fail_alloc() ? NULL : kvmalloc_array(n, size, gfp);
}

#endif /* _SCIF_FAULT_H_ */
