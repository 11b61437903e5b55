/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: the endpoint object, struct scif_endpt, with the state of
 * each of its parts (registered memory, mappings, the user-space data
 * path), which the files of those parts and of the layers above use;
 * its lifetime, handles and ports are scif_epd.c's (scif_epd.h).  Lock
 * rules: the notes below, which give the lock order of the whole core,
 * and each structure's own.  Only types and inline helpers live here,
 * so that every layer may include it.
 *
 * Implementation notes
 *
 * Endpoints.  An endpoint is reference counted (kref).  References are
 * held by its owner (an open file of /dev/scif, or a kernel client
 * between scif_open() and scif_close()), by the protocol while it waits
 * for the peer to let go of the endpoint's memory (@proto_ref), and
 * briefly by whoever looked it up by handle.  Every endpoint has a
 * handle, (generation << 32 | id), in scif_info.epds; messages from
 * peers name endpoints by handle, and a handle is never reused while the
 * module is loaded.  The last reference queues the endpoint's
 * destruction on scif_info.wq, so a reference may be dropped under any
 * lock that destruction does not take.
 *
 * Limits.  An endpoint counts against max_endpoints, and against
 * max_user_endpoints of the user that opened it (its real uid; callers
 * with CAP_SYS_RESOURCE and kernel clients are not charged), from its
 * creation until its owner closes it or, if the protocol still holds it
 * then (a close while connecting or connected), until it is destroyed:
 * an endpoint that lingers for its peer keeps its slot.  A user's
 * endpoint holds its user's struct scif_user until it is destroyed; the
 * peers' windows that the user's endpoints hold are counted there too,
 * against the user's share of the node budgets.  Endpoints and
 * their receive rings are charged to the memory cgroup of the task that
 * allocates them.  A listener holds at most max_backlog requests (the
 * backlog given to listen is clamped to it) and at most max_parked
 * requests taken by SCIF_ACCEPTREQ and not yet claimed by SCIF_ACCEPTREG;
 * a parked request holds a reference to its listener and is counted in
 * its @nr_parked until whoever erases it from scif_info.parked (the
 * claimer or the listener's close) lets it go.
 *
 * An endpoint's receive area (its half of the connection's queue pair)
 * is written by the peer, so it lives as long as the endpoint, and the
 * endpoint outlives its owner until the peer has acknowledged a
 * disconnect (SCIF_MSG_DISC_ACK) or its node is gone.  The peer's area
 * is mapped while connected and unmapped, under both data mutexes,
 * before this side tells the peer it may free it: before acknowledging
 * the peer's disconnect, and before sending its own DISCONNECT (a close,
 * or the reset of a broken ring) or the refusal of a request it had
 * mapped.  Nothing writes into it through scif_rb.remote after that.
 *
 * Node queue pairs, the bus of a node, local memory handed to a peer
 * and protocol errors: see the notes of scif_nodes.h.
 *
 * Registered memory (scif_rma.h) has its own notes.  Its lock,
 * scif_endpt.rma.lock, nests inside ctl_mutex (close) and mmap.lock
 * (mmap()) and is otherwise taken alone, including by rx_work: nothing
 * is ever waited for under it but memory, and it is never held while
 * sending a node message.
 * Only scif_node.reply_lock and the maple trees' own locks nest in it.
 * The copy engine's scif_endpt.rma.eng_lock is a spinlock taken alone
 * (innermost; it also guards the peer's parked fence waits), and so is
 * rma.fence_lock (this side's fence requests to the peer, see
 * scif_fence.c); rma.cache_lock (registration cache) is a mutex that
 * nests inside ctl_mutex only, and outside the mm's mmap lock.  The engine's worker holds no lock
 * while copying and drops window references (which may send a reply
 * through reply_work) outside all of them; so does any other context
 * that runs an endpoint's queue: an RMA's caller, or the node's rx_work
 * writing a peer's fence signal when nothing is pending.
 *
 * Mappings of the peer's windows (scif_mmap.c).  A user copy may fault
 * under recv_mutex or send_mutex, and the fault handler of a mapping
 * takes scif_endpt.mmap.lock under mmap_lock (or the VMA lock); mmap()
 * takes it under mmap_lock and looks windows up (rma.lock) under it.
 * Revocation takes it under no lock but ctl_mutex, and zaps (i_mmap_rwsem,
 * page table locks) after letting go of it.  Nothing takes mmap_lock
 * under mmap.lock or rma.lock, and neither is held while taking
 * recv_mutex or send_mutex.
 *
 * Device mappings (scif_devdma.c).  scif_endpt.devdma.lock nests inside
 * rma.lock where scif_devdma_begin() lists a mapping of the windows it
 * just took, and is taken alone everywhere else: by the window revoke
 * hooks (which only mark mappings and queue their works), by the works
 * (which have the mapping's kind revoke it with no SCIF lock held, then
 * take it to unlink) and by scif_devdma_live(), _cancel() and _end().
 * No SCIF lock is held while a kind revokes or a client's revoke runs.
 *
 * Lock order (outermost first):
 *   scif_endpt.ctl_mutex
 *   scif_endpt.recv_mutex
 *   scif_endpt.send_mutex
 *   mmap_lock (of a process faulting on a mapping, or in mmap())
 *   scif_endpt.mmap.lock
 *   scif_endpt.rma.lock (see above)
 *     scif_endpt.devdma.lock (scif_devdma_begin() only; else alone)
 *   scif_node.tx_mutex
 *   scif_info.port_lock
 *   scif_info.eplock
 *   scif_endpt.lock (spinlock)
 *   scif_info.parked's xa_lock (spinlock)
 * scif_info.user_lock (mutex) is taken alone.
 * scif_node.reply_lock (spinlock) is innermost; it is taken under
 * tx_mutex (when replies are dropped) and under rma.lock.
 * scif_info.node_lock (mutex) is taken without any of the above held;
 * scif_node.tx_mutex nests inside it.  The bus list lock (scif_nodes.c)
 * is taken outside node_lock.
 * scif_node.lmap_lock (mutex) is innermost: taken under any of the
 * above, with nothing but the bus's map_local/unmap_local under it.
 */
#ifndef _SCIF_ENDPT_H_
#define _SCIF_ENDPT_H_

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/maple_tree.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/scif.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "scif_info.h"
#include "scif_nodes.h"
#include "scif_rb.h"

struct completion;
struct inode;
struct mem_cgroup;
struct page;
struct scif_fp_ctl;
struct scif_rma_cache;

/**
 * enum scif_epd_state - the states of an endpoint
 * @SCIF_EPD_UNBOUND: opened, no port yet
 * @SCIF_EPD_BOUND: bound to a port
 * @SCIF_EPD_LISTENING: accepting connection requests
 * @SCIF_EPD_CONNECTING: a connection request is on its way
 * @SCIF_EPD_CONNECTED: connected to a peer endpoint
 * @SCIF_EPD_DISCONNECTED: the peer closed, or its node was lost
 * @SCIF_EPD_CLOSING: closed by its owner, waiting for the peer
 */
enum scif_epd_state {
	SCIF_EPD_UNBOUND,
	SCIF_EPD_BOUND,
	SCIF_EPD_LISTENING,
	SCIF_EPD_CONNECTING,
	SCIF_EPD_CONNECTED,
	SCIF_EPD_DISCONNECTED,
	SCIF_EPD_CLOSING,
};

/**
 * struct scif_epd_rma - an endpoint's registered memory
 * @lock: protects both trees, window states and @nr_rwindows changes
 *	made under it; never held while sending a node message
 * @local: this endpoint's windows, by page number
 * @remote: the peer's windows, by page number
 * @nr_windows: windows in @local (changed under @lock, read without it)
 * @nr_rwindows: remote windows not yet released (in the tree or held
 *	by an RMA, a mapping or a device mapping)
 * @nr_devheld: those of them held by device mappings (their dev_refs not
 *	0); teardown waits until every window not yet released is one of
 *	these, which their holders (device-map files, dma-bufs) release
 *	later
 * @nr_rruns: runs of those windows (charged against max_remote_runs_per_ep
 *	before the REGISTER is read, uncharged as the window is released)
 * @kernel_windows: a window over kernel memory (SCIF_MAP_KERNEL) was
 *	placed in @local: the kernel API's scif_close() waits until the
 *	endpoint's windows are gone (set once, never cleared)
 * @eng_lock: protects the copy engine's fields below
 * @queue: descriptors waiting for or in the copy engine, in issue order
 * @nr_queued: entries in @queue
 * @issued: sequence number of the last descriptor queued (0: none yet)
 * @done: every descriptor with a sequence number up to @done completed
 * @running: a context is running @queue: the work item, a caller of a
 *	synchronous RMA that runs the queue up to its own descriptors, or a
 *	caller that found nothing pending and runs its own RMA or fence
 *	signal before returning
 * @eng_work: runs @queue on the copy engine's workqueue; holds a
 *	reference to the endpoint from queue_work() until its function is
 *	done with it (scif_rma_kick()), so the endpoint outlives it; runs at
 *	most SCIF_ENG_BUDGET descriptors, then queues itself again behind
 *	the other endpoints' (the workqueue runs 256 at once)
 * @waiters: the peer's fence waits (struct scif_fence_waiter) for a
 *	sequence number not yet reached; the engine answers them as @done
 *	passes their number
 * @nr_waiters: entries in @waiters
 * @dma_idx: which of the DMA channels near the peer's bus the engine
 *	uses for this endpoint (see scif_dma_pick()); set at creation
 * @cache_lock: protects @cache
 * @cache: the registration cache (SCIF_RMA_USECACHE), or NULL
 * @fence_lock: protects @fence_reqs and @fence_next_id
 * @fence_reqs: this side's fence requests waiting for the peer's answer
 *	(struct scif_fence_req, on the requesters' stacks)
 * @fence_next_id: the id of the last fence request sent
 * @stage_lock: protects @stage_reqs and @stage_next_id
 * @stage_reqs: this side's STAGE_* requests waiting for the peer's
 *	answer (struct scif_stage_req, on the requesters' stacks)
 * @stage_next_id: the id of the last STAGE_* request sent
 *
 * Each descriptor queued to the engine gets the next sequence number; the
 * engine runs @queue in order, so "every RMA up to N completed" is
 * @done >= N.  CPU RMAs (SCIF_RMA_USECPU) complete before their call
 * returns and take no number.  @nr_queued is at most 64 but for
 * descriptors queued by the context that runs the queue (one at a time)
 * and fence signals of the peer (at most 128); every descriptor also
 * counts in the engine's global count (module parameter
 * rma_max_queued), see scif_rma.c.
 */
struct scif_epd_rma {
	/* lock protects local, remote and the windows' states */
	struct mutex lock;
	struct maple_tree local;
	struct maple_tree remote;
	atomic_t nr_windows;
	atomic_t nr_rwindows;
	atomic_t nr_devheld;
	atomic_long_t nr_rruns;
	bool kernel_windows;

	/* eng_lock protects queue through nr_waiters */
	spinlock_t eng_lock;
	struct list_head queue;
	unsigned int nr_queued;
	u64 issued;
	u64 done;
	bool running;
	struct work_struct eng_work;
	struct list_head waiters;
	unsigned int nr_waiters;
	unsigned int dma_idx;

	/* cache_lock protects cache */
	struct mutex cache_lock;
	struct scif_rma_cache *cache;

	/* fence_lock (innermost, taken alone) protects fence_reqs, next_id */
	spinlock_t fence_lock;
	struct list_head fence_reqs;
	u64 fence_next_id;

	/* stage_lock (innermost, taken alone) protects stage_reqs, next_id */
	spinlock_t stage_lock;
	struct list_head stage_reqs;
	u64 stage_next_id;
};

/**
 * struct scif_epd_mmap - an endpoint's mappings of its peer's windows
 * @lock: protects @maps; taken by mmap() (under mmap_lock, around
 *	scif_rwindow_get(), so rma.lock nests in it), by revocation (under
 *	no SCIF lock but ctl_mutex; a mapping's own lock nests in it) and
 *	by a mapping's release
 * @maps: struct scif_mmap of the endpoint's file, live or revoked, and
 *	the live ones of kernel clients (scif_mmap_vma())
 * @nr_client: those of kernel clients in @maps (at most
 *	SCIF_MMAP_CLIENT_MAX); under @lock
 * @inode: gives the file an address_space of its own, so that zapping
 *	touches only this endpoint's mappings; NULL for endpoints of the
 *	kernel API, which cannot be mapped
 */
struct scif_epd_mmap {
	/* lock protects maps and nr_client */
	struct mutex lock;
	struct list_head maps;
	unsigned int nr_client;
	struct inode *inode;
};

/**
 * struct scif_epd_devdma - an endpoint's device mappings (scif_devdma.c)
 * @lock: protects @maps and every mapping's state; taken by
 *	scif_devdma_begin() under rma.lock (so that a mapping is listed
 *	before the windows it holds can leave the trees), by the window
 *	revoke hooks, the revocation works and the makers and holders of
 *	mappings, under no other SCIF lock; only the workqueue's own lock
 *	nests in it
 * @maps: struct scif_devdma, being made, live or being revoked; a
 *	mapping leaves the list once revoked or unmapped (ep->wq is woken)
 * @unlinked: mappings that left @maps, ever (under @lock; read with
 *	READ_ONCE by waiters on ep->wq)
 * @nr_files: device-map files of the endpoint not yet done lingering
 *	(scif_devmap.c; atomic, bounded by max_devmaps_per_ep)
 * @dmabufs: dma-bufs exported over the endpoint's or its peer's windows
 *	and not yet released (scif_dmabuf.c; atomic, no lock)
 */
struct scif_epd_devdma {
	/* lock protects maps, unlinked and the mappings' states */
	struct mutex lock;
	struct list_head maps;
	unsigned long unlinked;
	atomic_t nr_files;
	atomic_t dmabufs;
};

/**
 * struct scif_fp_seen - one side of the fast path as scif_fp_fold() last
 *	saw it
 * @bytes: user space's byte count (scif_fp_ctl.tx_bytes or rx_bytes)
 * @msgs: its message count
 * @kbytes: the bytes the kernel's own rounds had moved (scif_endpt.stats)
 * @allow: bytes the ring count moved beyond the kernel's own that user
 *	space has not claimed yet: the most it may still report
 * @pos: the ring count in the page (tx_write or rx_read)
 *
 * Under the side's data mutex (send_mutex, recv_mutex).
 */
struct scif_fp_seen {
	u64 bytes;
	u64 msgs;
	u64 kbytes;
	u64 allow;
	u32 pos;
};

/**
 * struct scif_epd_fp - an endpoint's user-space data path (scif_fp.c)
 * @ctl: the counter page once SCIF_FP_OPEN made it (never unset while
 *	files map it), NULL before: set under both data mutexes, read with
 *	smp_load_acquire(); from then on its tx_write and rx_read are the
 *	endpoint's counts (struct scif_rb's are loaded from it and stored
 *	back by each round of the kernel's data path)
 * @ctl_page: the page of @ctl
 * @dummy: a zeroed page that stands for the peer's half once revoked
 * @inode: the address_space shared by the endpoint's fast-path files
 * @lock: protects @live; taken by the fault handler (under mmap_lock or
 *	the VMA lock) and by revocation, with nothing nested in it but the
 *	page table locks
 * @live: the peer's half may be inserted into processes
 * @wc: map the peer's half write-combined, as the bus asks
 * @local_pfn: the first page frame of our half (struct scif_rb.local)
 * @nr_local: its pages
 * @remote_pfn: the first page frame of the peer's half, as the bus
 *	reaches it
 * @nr_remote: its pages
 * @tx: what scif_fp_fold() last saw of the transmit side (send_mutex)
 * @rx: of the receive side (recv_mutex)
 *
 * Everything but @ctl, @live and the counts is set once, under ctl_mutex,
 * before @ctl.
 */
struct scif_epd_fp {
	struct scif_fp_ctl *ctl;
	struct page *ctl_page;
	struct page *dummy;
	struct inode *inode;
	/* lock protects live */
	struct mutex lock;
	bool live;
	bool wc;
	unsigned long local_pfn;
	unsigned long nr_local;
	unsigned long remote_pfn;
	unsigned long nr_remote;
	struct scif_fp_seen tx;
	struct scif_fp_seen rx;
};

/**
 * struct scif_user - what the endpoints of one local user hold
 * @uid: the user (real uid of the opener), its index in scif_info.users
 * @ref: endpoints whose @owner this is, until they are destroyed
 * @nr_endpoints: those counted against max_user_endpoints
 * @nr_rwindows: peers' windows known to the user's endpoints, of every
 *	node (atomic; charged by scif_window.c against the user's share of
 *	max_remote_windows_per_node)
 * @nr_rruns: their runs (the share of max_remote_runs_per_node)
 *
 * Kernel clients' endpoints have none.
 */
struct scif_user {
	kuid_t uid;

	/* scif_info.user_lock protects ref and nr_endpoints */
	unsigned int ref;
	unsigned int nr_endpoints;

	atomic_long_t nr_rwindows;
	atomic_long_t nr_rruns;
};

/**
 * struct scif_endpt - one SCIF endpoint
 * @ref: see the implementation notes
 * @rcu: frees the endpoint after lookups that may still see it
 * @handle: names the endpoint in node messages and debugfs
 * @list: link in scif_info.endpoints, under scif_info.eplock
 * @lost: link in scif_epd_node_lost()'s private list, while it resets
 *	the endpoint; an endpoint has one node, and the resets of one node
 *	never run at once (scif_hw_node_down() cancels fail_work first)
 * @lost_drop: whether scif_epd_node_lost()'s second pass drops the
 *	protocol's reference; used only by it
 * @wq: woken on every change of state, data, room or requests
 * @free_work: destruction, queued by the last reference
 * @disc_work: handles the peer's disconnect outside the node's rx_work;
 *	set up by scif_conn.c when the endpoint connects
 * @ctl_mutex: serialises the owner's control operations (bind, listen,
 *	connect, accept, close)
 * @recv_mutex: serialises receivers; protects the receive side of @rb
 * @send_mutex: serialises senders; protects the transmit side of @rb
 *	and the peer mapping while it is used
 * @rb: the connection's queue pair
 * @lock: protects the fields below it
 * @state: enum scif_epd_state
 * @port: bound port, or 0
 * @node: the peer's node, when connecting or connected
 * @peer: the peer's port id
 * @peer_handle: the peer endpoint's handle
 * @conn_err: result of a connect that completed without the caller
 *	waiting for it (non-blocking or interrupted), reported once
 * @conn_async: a connect is completing without its caller waiting
 * @conn_intr: that is because a blocking connect was interrupted
 * @proto_ref: the protocol holds a reference (see the notes)
 * @close_drained: closing, and done with the peer's memory: no RMA or
 *	mapping uses its windows any more (true unless a close of a
 *	connected endpoint is still letting go of them)
 * @reset_draining: the peer broke the connection's ring and this side,
 *	having reset it, is still letting go of the peer's windows
 * @disc_ack_owed: the peer's DISCONNECT came before @close_drained, or
 *	while @reset_draining; it is acknowledged once drained (the peer
 *	frees its windows on the acknowledgment)
 * @backlog: most requests that may wait at a listener (at most
 *	max_backlog)
 * @nr_conreqs: requests waiting in @conreqs
 * @conreqs: requests waiting at a listener
 * @nr_parked: requests of this listener in scif_info.parked, or about to
 *	be (at most max_parked)
 * @parked: those in scif_info.parked
 * @user: opened by user space: its memory is charged to the opener's
 *	memory cgroup
 * @owner: for @user, the user that opened the endpoint (a reference,
 *	until the endpoint is destroyed): what its peer makes this node
 *	hold is charged to it too (max_remote_user_share)
 * @user_charged: counted in @owner's nr_endpoints
 * @memcg: for @user, the opener's memory cgroup (a reference, dropped
 *	when the endpoint is freed): what the peer makes this node allocate
 *	for the endpoint outside the opener's context (a remote window's run
 *	array, in the receive work) is charged to it; else NULL
 * @count_until_free: closed, but counted until destroyed (see the notes)
 * @rma: registered memory: windows, ours and the peer's (own lock)
 * @mmap: mappings of the peer's windows into processes (own lock)
 * @devdma: device mappings of windows, ours and the peer's (own lock)
 * @fp: the user-space data path (own lock)
 * @closed: completed by the endpoint's destruction, once its windows are
 *	gone; set by the kernel API's scif_close(), which waits for it, of
 *	an endpoint that had windows over kernel memory (its caller frees
 *	that memory when the call returns); else NULL
 * @stats: traffic counters: tx_* under @send_mutex, rx_* under
 *	@recv_mutex; rma_* and errors under @lock (read by debugfs and the
 *	close tracepoint without the mutexes: a reader may see a count a
 *	round behind)
 */
struct scif_endpt {
	struct kref ref;
	struct rcu_head rcu;
	u64 handle;
	struct list_head list;
	struct list_head lost;
	bool lost_drop;
	wait_queue_head_t wq;
	struct work_struct free_work;
	struct work_struct disc_work;

	/* ctl_mutex serialises the owner's control operations */
	struct mutex ctl_mutex;
	/* recv_mutex protects rb's receive side */
	struct mutex recv_mutex;
	/* send_mutex protects rb's transmit side and the peer mapping */
	struct mutex send_mutex;
	struct scif_rb rb;

	/* lock protects state through count_until_free */
	spinlock_t lock;
	enum scif_epd_state state;
	u16 port;
	struct scif_node *node;
	struct scif_port_id peer;
	u64 peer_handle;
	int conn_err;
	bool conn_async;
	bool conn_intr;
	bool proto_ref;
	bool close_drained;
	bool reset_draining;
	bool disc_ack_owed;
	int backlog;
	int nr_conreqs;
	struct list_head conreqs;
	int nr_parked;
	struct list_head parked;
	bool count_until_free;

	bool user;
	struct scif_user *owner;
	bool user_charged;
	struct mem_cgroup *memcg;

	struct scif_epd_rma rma;
	struct scif_epd_mmap mmap;
	struct scif_epd_devdma devdma;
	struct scif_epd_fp fp;
	struct completion *closed;
	struct scif_stats stats;
};

/* The counter page of @ep's user-space data path (scif_fp.c), or NULL. */
static inline struct scif_fp_ctl *scif_fp_ctl(struct scif_endpt *ep)
{
	/* Pairs with the release in scif_fp_enable(): the counts are set. */
	return smp_load_acquire(&ep->fp.ctl);
}

/*
 * Count a failed send, receive or RMA on the endpoint and, once it has
 * one, on its peer's node.  Context: process context; takes @ep->lock.
 */
static inline void scif_epd_count_error(struct scif_endpt *ep)
{
	struct scif_node *node;

	spin_lock(&ep->lock);
	ep->stats.errors++;
	node = ep->node;
	spin_unlock(&ep->lock);
	if (node)
		scif_node_count_error(node);
}

/* The last reference is gone: the free_work scif_epd.c set up runs. */
static inline void scif_epd_release(struct kref *ref)
{
	struct scif_endpt *ep = container_of(ref, struct scif_endpt, ref);

	queue_work(scif_info.wq, &ep->free_work);
}

/*
 * Drop a reference to an endpoint; every layer holds them.  The last
 * one queues the endpoint's free_work, which scif_epd_create() set up:
 * the layers below scif_epd.c reach its destruction only through it.
 * Context: any context.
 */
static inline void scif_epd_put(struct scif_endpt *ep)
{
	kref_put(&ep->ref, scif_epd_release);
}

#endif /* _SCIF_ENDPT_H_ */
