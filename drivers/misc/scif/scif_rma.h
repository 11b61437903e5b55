/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: registered memory.  Types shared by scif_pin.c (pinning),
 * scif_window.c (the registered address space, the window exchange),
 * scif_rma.c (the copies), scif_fence.c and scif_rma_cache.c; the
 * endpoint's part, struct scif_epd_rma, is in scif_endpt.h.  See
 * Documentation/scif/rma.rst.
 *
 * Offsets are kept in maple trees indexed by page number (offset >>
 * PAGE_SHIFT); a window occupies the range of its pages.  Each endpoint
 * has two trees: its own windows (@local) and the windows its peer has
 * told it about (@remote).
 *
 * Lifetimes.  A local window is reference counted: the tree holds one
 * reference from registration until the window leaves the tree (the
 * peer acknowledged the unregistration, the connection went, or the
 * endpoint was destroyed); every RMA holds one while it copies.  A
 * window the peer withdrew while its RMAs still used it stays in the tree
 * (SCIF_WIN_WITHDRAWN, unusable, its offsets taken) until the peer's
 * final acknowledgment.  The pinned pages are released with the last
 * reference.  What a caller waits for is let go of before the wait ends,
 * so that the pages are unpinned when its call returns: the tree's
 * reference before the window is seen out of it (unless it is the
 * last), an RMA's windows and pages before the RMA is seen complete.
 * A remote window is reference counted the same way; it is
 * unmapped with its last reference, and if the peer asked for it to go,
 * the final acknowledgment (after which the peer may unpin the pages)
 * is sent only then, in a reply reserved when the window was made.
 *
 * Each endpoint's part of all this is set up and torn down by
 * scif_epd.c, which calls each file's own init and teardown in order
 * (scif_epd_parts_teardown()): the peer's parked fence waits are
 * forgotten, then the windows dropped, when a connection ends.
 *
 * The copy engine: each descriptor queued holds a reference to its
 * endpoint, and so does the endpoint's work item while it is queued or
 * running, so neither can see the endpoint freed.  User pages pinned for
 * a descriptor are charged to the issuer's mm (RLIMIT_MEMLOCK) until
 * the descriptor is freed; the descriptor holds the mm (mmgrab).
 */
#ifndef _SCIF_RMA_H_
#define _SCIF_RMA_H_

#include <linux/bits.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/maple_tree.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/types.h>

#include "scif_lmap.h"

struct scif_endpt;
struct scif_node;
struct scif_reply;
struct scif_msg;
struct mm_struct;
struct page;
struct pci_dev;
struct seq_file;

/* Highest page number of the registered address space (offsets are off_t). */
#define SCIF_RMA_MAX_PAGE	((unsigned long)(S64_MAX >> PAGE_SHIFT))
/* Bounds on one window, ours or a peer's. */
#define SCIF_WINDOW_MAX_PAGES	((1UL << 32) - 1)
#define SCIF_WINDOW_MAX_RUNS	BIT(21)

/**
 * struct scif_run - physically contiguous piece of a window
 * @woff: byte offset of the piece in the window
 * @addr: local window: its physical address; remote window: the address
 *	the peer published for it
 * @len: bytes, a multiple of the page size
 * @va: where the CPU reaches it (linear map, or the peer mapping)
 * @io: the run of a device window (SCIF_PP_MMIO): its ioremap(), which
 *	only the *_io accessors may touch
 */
struct scif_run {
	u64 woff;
	u64 addr;
	u64 len;
	union {
		void *va;
		void __iomem *io;
	};
};

/**
 * enum scif_pp_kind - what a pinned set is made of
 * @SCIF_PP_PAGES: pages of RAM (page pointers, runs of the linear map)
 * @SCIF_PP_MMIO: a range of a PCI memory BAR (no struct page): one run,
 *	reached through @io, nothing pinned or charged (scif_devmem.c)
 */
enum scif_pp_kind {
	SCIF_PP_PAGES,
	SCIF_PP_MMIO,
};

/**
 * struct scif_pinned_pages - pages pinned for registration
 * @ref: held by the creator (until scif_unpin_pages()) and by each window
 * @kind: RAM or device memory
 * @pages: the pages, one pointer each (kvmalloc'd); NULL for SCIF_PP_MMIO
 * @nr_pages: number of pages
 * @prot: SCIF_PROT_* the pages were pinned for
 * @user: pinned from user space (else kernel memory, not referenced)
 * @mm: the mm charged for @nr_pages pinned pages (user only)
 * @runs: the physically contiguous runs of @pages (kvmalloc'd)
 * @nr_runs: entries in @runs
 * @pdev: SCIF_PP_MMIO: the PCI function, with a reference (pci_dev_get())
 * @bar: SCIF_PP_MMIO: the BAR of @pdev the run is in
 * @devmem: SCIF_PP_MMIO: on scif_devmem.c's list of device memory sets
 * @gone: SCIF_PP_MMIO: @pdev's driver is unbinding, or @pdev is removed
 * @owner: SCIF_PP_MMIO: handle of the endpoint whose window it is
 * @offset: SCIF_PP_MMIO: that window's offset; -1 until it is registered
 * @parents: an alias (scif_pin_alias_new()): the sets its pages are
 *	taken from, one reference each, dropped when it is released; the
 *	alias pins and charges nothing of its own
 * @nr_parents: entries of @parents filled
 *
 * Immutable once created, but for @devmem, @gone, @owner and @offset,
 * which scif_devmem.c's lock protects.
 */
struct scif_pinned_pages {
	struct kref ref;
	enum scif_pp_kind kind;
	struct page **pages;
	unsigned long nr_pages;
	int prot;
	bool user;
	struct mm_struct *mm;
	struct scif_run *runs;
	unsigned long nr_runs;
	struct pci_dev *pdev;
	int bar;
	struct list_head devmem;
	bool gone;
	u64 owner;
	s64 offset;
	struct scif_pinned_pages **parents;
	unsigned long nr_parents;
};

/**
 * enum scif_window_state - life of a local window
 * @SCIF_WIN_REGISTERING: in the tree, REGISTER on its way to the peer
 * @SCIF_WIN_REGISTERED: usable
 * @SCIF_WIN_UNREGISTERING: UNREGISTER on its way; no new RMA may use it
 * @SCIF_WIN_WITHDRAWN: unregistered, unusable, but an RMA of the peer
 *	still uses it: in the tree until the peer's final acknowledgment
 * @SCIF_WIN_DEAD: out of the tree; @err says why
 */
enum scif_window_state {
	SCIF_WIN_REGISTERING,
	SCIF_WIN_REGISTERED,
	SCIF_WIN_UNREGISTERING,
	SCIF_WIN_WITHDRAWN,
	SCIF_WIN_DEAD,
};

/**
 * struct scif_window - a window of this endpoint's registered address space
 * @ref: see the notes at the top
 * @id: names the window in node messages (with @offset)
 * @offset: first byte in the registered address space
 * @nr_pages: size in pages
 * @prot: SCIF_PROT_*
 * @pinned: the pages (a reference)
 * @state: enum scif_window_state
 * @err: why the window died (negative errno), for a waiting registrant
 * @abandoned: the registrant stopped waiting (fatal signal): the
 *	acknowledgment handler finishes the job
 * @xfer: pages holding the run list the peer reads at registration
 * @nr_xfer: entries in @xfer
 * @xfer_map: @xfer as the peer reaches it; unmapped when @xfer is freed
 * @run_map: the runs of @pinned as the peer reaches them; unmapped when
 *	the window is released (or its node goes)
 * @staged: the bus cannot make the pages reachable by the peer
 *	(map_local said -EOPNOTSUPP): the peer has no run list and reaches
 *	the window through STAGE_* messages only
 * @unreg: on the private list of scif_epd_unregister()
 * @dead: on the private list of a teardown
 *
 * @state, @err, @abandoned and the tree are protected by the endpoint's
 * rma.lock; the rest is immutable after registration, except @xfer,
 * which is freed (under rma.lock) when the peer has read it.
 */
struct scif_window {
	struct kref ref;
	u64 id;
	u64 offset;
	unsigned long nr_pages;
	int prot;
	struct scif_pinned_pages *pinned;
	enum scif_window_state state;
	int err;
	bool abandoned;
	struct page **xfer;
	unsigned int nr_xfer;
	struct scif_lmap xfer_map;
	struct scif_lmap run_map;
	bool staged;
	struct list_head unreg;
	struct list_head dead;
};

/**
 * struct scif_rwindow - a window of the peer's registered address space
 * @ref: see the notes at the top
 * @ep: the endpoint it belongs to, with a reference
 * @node: the peer's node
 * @id: the peer's name for it
 * @offset: first byte in the peer's registered address space
 * @nr_pages: size in pages
 * @prot: SCIF_PROT_*
 * @ack_on_release: the peer unregistered it and waits for UNREGISTER_ACK
 * @ack: the reply that acknowledgment goes in, reserved at creation so
 *	that sending it from wherever the last reference drops cannot fail
 * @staged: this node cannot reach the pages: no runs (@nr_runs 0), RMAs
 *	go through STAGE_* messages, and it cannot be mapped
 * @link: on a private list while being torn down
 * @nr_runs: entries in @runs
 * @runs: the runs, as the peer sent them, each mapped (kvmalloc'd)
 * @dev_refs: references held by device mappings (scif_window_range_hold()
 *	with SCIF_RANGE_MAPPED), atomic; while not 0 the window counts in
 *	its endpoint's rma.nr_devheld
 *
 * Immutable once in the tree, but for @ack_on_release (rma.lock) and
 * @dev_refs.
 */
struct scif_rwindow {
	struct kref ref;
	struct scif_endpt *ep;
	struct scif_node *node;
	u64 id;
	u64 offset;
	unsigned long nr_pages;
	int prot;
	bool ack_on_release;
	struct scif_reply *ack;
	bool staged;
	struct list_head link;
	unsigned long nr_runs;
	struct scif_run *runs;
	atomic_t dev_refs;
};

struct scif_rma_cache;
struct scif_range;

/* scif_window.c */
void scif_window_epd_init(struct scif_endpt *ep);
void scif_window_epd_teardown(struct scif_endpt *ep, bool local, int err);
void scif_window_epd_destroy(struct scif_endpt *ep);
void scif_window_handle_msg(struct scif_node *node, const struct scif_msg *msg,
			    struct scif_endpt *ep);
void scif_window_stats_show(struct seq_file *s);
void scif_window_counts(struct scif_endpt *ep, unsigned int *local,
			unsigned int *remote);
void scif_window_totals(long *local, long *remote);

/**
 * struct scif_window_revoker - told of windows that go
 * @remote: a peer's window was taken out of an endpoint's tree (the
 *	peer unregistered it, or the connection ended), before the
 *	window's reference is dropped: revoke the mappings holding it.
 *	Process context, may sleep, with no SCIF lock held but the
 *	endpoint's ctl_mutex (connection teardown) or none (the node's
 *	rx_work, for the peer's UNREGISTER).  May be NULL.
 * @local: one of the endpoint's own windows is being unregistered by it
 *	(now SCIF_WIN_UNREGISTERING, so that nothing new takes it): revoke
 *	what holds it and wait until that let go, before the peer is told.
 *	Process context, may sleep, no SCIF lock held (scif_unregister()'s
 *	caller).  May be NULL.
 */
struct scif_window_revoker {
	void (*remote)(struct scif_endpt *ep, struct scif_rwindow *rw);
	void (*local)(struct scif_endpt *ep, struct scif_window *w);
};

/* Slots of scif_window_on_revoke(): mmap's, then devdma's. */
#define SCIF_WINDOW_REVOKERS	2

void scif_window_on_revoke(unsigned int slot,
			   const struct scif_window_revoker *revoker);
s64 scif_epd_register(struct scif_endpt *ep, struct scif_pinned_pages *pp,
		      s64 offset, int map_flags);
s64 scif_epd_register_mem(struct scif_endpt *ep, unsigned long addr,
			  size_t len, s64 offset, int prot, int map_flags);
s64 scif_epd_register_alias(struct scif_endpt *dst, struct scif_endpt *src,
			    s64 src_off, u64 len, s64 offset, int prot,
			    int map_flags);
s64 scif_epd_register_devmem(struct scif_endpt *ep,
			     struct scif_pinned_pages *pp, s64 offset,
			     int map_flags);
int scif_epd_unregister(struct scif_endpt *ep, s64 offset, u64 len);
int scif_window_conn_err(struct scif_endpt *ep);

/**
 * struct scif_win_range - the windows covering a range of a registered
 *	address space, in order, one reference each
 *	(scif_window_range_hold(), scif_window_range_put())
 * @lws: this endpoint's windows, for a local range; else NULL
 * @rws: the peer's windows, for a remote range; else NULL
 * @nr_wins: entries in @lws or @rws
 * @dev: held for a device (SCIF_RANGE_MAPPED): counted in @rws' dev_refs
 */
struct scif_win_range {
	struct scif_window **lws;
	struct scif_rwindow **rws;
	unsigned long nr_wins;
	bool dev;
};

/* scif_window_range_hold() flags */
#define SCIF_RANGE_REMOTE	0x1	/* the peer's windows */
#define SCIF_RANGE_UNREG	0x2	/* local windows being unregistered too */
#define SCIF_RANGE_MAPPED	0x4	/* no staged remote, no local device memory */

int scif_window_range_hold(struct scif_endpt *ep, struct scif_win_range *r,
			   u64 off, u64 len, int prot, unsigned int flags,
			   void (*locked)(void *arg), void *arg);
void scif_window_range_put(struct scif_win_range *r);
struct scif_rwindow *scif_rwindow_get(struct scif_endpt *ep, u64 off,
				      int prot, int *err);
void scif_window_put(struct scif_window *w);
void scif_rwindow_put(struct scif_rwindow *rw);

#ifdef SCIF_KUNIT
/* scif_window.c, visible to scif_kunit.ko only (scif_visibility.h) */
bool scif_window_register_msg_ok(const struct scif_msg *msg);
int scif_rwindow_read_runs(struct scif_rwindow *rw, u64 addr);
int scif_window_place(struct scif_endpt *ep, struct scif_window *w,
		      s64 offset, bool fixed);
#endif

/* scif_pin.c */
int scif_pin_charge(struct mm_struct *mm, unsigned long n);
void scif_pin_uncharge(struct mm_struct *mm, unsigned long n);
int scif_pin_user_range(unsigned long start, unsigned long nr, bool write,
			struct page **pages);
int scif_pin_check(unsigned long addr, size_t len, int prot, int map_flags);
int scif_pin_range(unsigned long addr, size_t len, int prot, int map_flags,
		   struct scif_pinned_pages **pinned);
void scif_pin_put(struct scif_pinned_pages *pp);
struct scif_pinned_pages *scif_pin_alias_new(unsigned long nr_pages,
					     unsigned long nr_parents,
					     int prot);
void scif_pin_alias_add(struct scif_pinned_pages *pp,
			struct scif_pinned_pages *parent, unsigned long first,
			unsigned long n);
int scif_pin_alias_done(struct scif_pinned_pages *pp);
long scif_pin_nr_pages(void);

/* scif_devmem.c: device memory as pinned sets (SCIF_PP_MMIO) */
int scif_devmem_range_check(u64 start, u64 size, unsigned long flags,
			    u64 bar_offset, u64 len);
int scif_devmem_pin(struct pci_dev *pdev, int bar, u64 bar_offset, u64 len,
		    int prot, struct scif_pinned_pages **pinned);
int scif_devmem_pin_user(u32 domain, u8 bus, u8 devfn, int bar,
			 u64 bar_offset, u64 len, int prot,
			 struct scif_pinned_pages **pinned);
int scif_devmem_opened(struct scif_pinned_pages *pp, u64 owner, s64 offset);
void scif_devmem_release(struct scif_pinned_pages *pp);
void scif_devmem_on_gone(void (*gone)(u64 owner, s64 offset, u64 len));
int scif_devmem_init(void);
void scif_devmem_exit(void);

/* scif_rma.c */

/**
 * struct scif_rma_req - one RMA
 * @loffset: local registered offset (readfrom, writeto)
 * @kaddr: kernel buffer (vreadfrom, vwriteto from the kernel API)
 * @uaddr: user buffer (vreadfrom, vwriteto from /dev/scif)
 * @len: bytes
 * @roffset: the peer's registered offset
 * @flags: SCIF_RMA_*
 * @to_remote: writeto/vwriteto (else readfrom/vreadfrom)
 * @kind: where the local side is
 */
struct scif_rma_req {
	s64 loffset;
	void *kaddr;
	unsigned long uaddr;
	u64 len;
	s64 roffset;
	int flags;
	bool to_remote;
	enum { SCIF_RMA_WINDOW, SCIF_RMA_KERNEL, SCIF_RMA_USER } kind;
};

int scif_epd_rma(struct scif_endpt *ep, const struct scif_rma_req *req);
int scif_rma_init(void);
void scif_rma_debugfs_init(struct dentry *dir);
void scif_rma_on_engine_done(void (*done)(struct scif_endpt *ep));
void scif_rma_exit(void);
void scif_rma_engine_init(struct scif_endpt *ep);
u64 scif_rma_mark(struct scif_endpt *ep);
int scif_rma_wait(struct scif_endpt *ep, u64 seq, bool intr);
long scif_rma_transient_pinned(void);
long scif_rma_nr_queued(void);
struct scif_rma_desc;
struct scif_rma_desc *scif_rma_signal_build(struct scif_endpt *ep, u64 off,
					    u64 val, bool remote, int *err);
int scif_rma_signal_queue(struct scif_endpt *ep, struct scif_rma_desc *d,
			  bool wait);
void scif_rma_signal_free(struct scif_rma_desc *d);
void scif_rma_stage_handle_msg(struct scif_node *node,
			       const struct scif_msg *msg,
			       struct scif_endpt *ep);
long scif_rma_staged_bytes(void);

/* scif_fence.c */
void scif_fence_epd_init(struct scif_endpt *ep);
void scif_fence_epd_teardown(struct scif_endpt *ep);
void scif_fence_init(void);
void scif_fence_handle_msg(struct scif_node *node, const struct scif_msg *msg,
			   struct scif_endpt *ep);
int scif_epd_fence_mark(struct scif_endpt *ep, int flags, int *mark);
int scif_epd_fence_wait(struct scif_endpt *ep, int mark);
int scif_epd_fence_signal(struct scif_endpt *ep, s64 loff, u64 lval,
			  s64 roff, u64 rval, int flags);
int scif_epd_get_pages(struct scif_endpt *ep, s64 offset, u64 len,
		       struct scif_range **pages);
int scif_epd_put_pages(struct scif_range *pages);

#ifdef SCIF_KUNIT
/* scif_fence.c, visible to scif_kunit.ko only (scif_visibility.h) */
u64 scif_fence_seq(struct scif_endpt *ep, u32 mark);
int scif_fence_off_check(u64 off);
int scif_fence_sig_off(s64 off);
#endif

/* scif_dma.c: the copy engine's DMA channels */
struct dma_chan;
struct scif_dma_batch;
void scif_dma_init(void);
void scif_dma_exit(void);
struct dma_chan *scif_dma_pick(int numa, unsigned int idx);
u64 scif_dma_min(void);
struct scif_dma_batch *scif_dma_batch_start(struct dma_chan *chan);
int scif_dma_batch_add(struct scif_dma_batch *b, phys_addr_t dst,
		       phys_addr_t src, size_t len);
int scif_dma_batch_finish(struct scif_dma_batch *b);
void scif_dma_show(struct seq_file *s);

/* scif_rma_cache.c: the registration cache (needs MMU notifiers) */

/**
 * struct scif_cache_ent - user pages the registration cache keeps pinned
 * @notifier: tells when the process unmaps or changes the range
 * @ref: held by the cache while the entry is in it, and by each RMA
 *	using its pages
 * @link: in the cache's list, most recently used first
 * @cache: the cache it belongs to
 * @start: first user address, page aligned
 * @nr_pages: size in pages
 * @write: pinned for writing (vreadfrom)
 * @stale: the notifier fired; never used again
 * @mm: the mm charged for the pages
 * @pages: the pinned pages
 */
struct scif_cache_ent {
	struct mmu_interval_notifier notifier;
	struct kref ref;
	struct list_head link;
	struct scif_rma_cache *cache;
	unsigned long start;
	unsigned long nr_pages;
	bool write;
	bool stale;
	struct mm_struct *mm;
	struct page **pages;
};

#ifdef CONFIG_MMU_NOTIFIER
void scif_cache_epd_init(struct scif_endpt *ep);
struct scif_cache_ent *scif_cache_get(struct scif_endpt *ep,
				      unsigned long addr, u64 len,
				      bool write, int *err);
void scif_cache_put(struct scif_cache_ent *ce);
void scif_cache_destroy(struct scif_endpt *ep);
long scif_cache_pinned(void);
#else
static inline void scif_cache_epd_init(struct scif_endpt *ep)
{
}

static inline struct scif_cache_ent *
scif_cache_get(struct scif_endpt *ep, unsigned long addr, u64 len, bool write,
	       int *err)
{
	*err = 0;
	return NULL;
}

static inline void scif_cache_put(struct scif_cache_ent *ce)
{
}

static inline void scif_cache_destroy(struct scif_endpt *ep)
{
}

static inline long scif_cache_pinned(void)
{
	return -1;
}
#endif

#endif /* _SCIF_RMA_H_ */
