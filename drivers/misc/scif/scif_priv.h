/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: types shared by the files of the driver.
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
 * Node queue pairs.  One per node this node reaches (this node itself
 * included, through the loopback bus).  Messages are received by the
 * node's rx_work, which hands each to its handler through the router's
 * table (scif_nodemsg.c) and never waits for anything remote: replies
 * it must send are queued to reply_work.  That queue is bounded
 * (rx_work pauses while it is long, unless reply_work itself waits for
 * room; a node that lets it overflow is failed), and rx_work requeues
 * itself after a budget of messages.  Senders in process context sleep
 * while the peer's queue is full; the last SCIF_REPLY_ROOM bytes of it
 * are for replies, so that requests never hold back the replies that
 * drain them.  A node that leaves its queue full for node_stall_ms is
 * failed (scif_nodes.c).
 *
 * The bus of a node (scif_node.hw) goes with the node: it is cleared on
 * node down, and whoever found the node online earlier reaches the bus
 * only through scif_node_map() and its siblings, which read the pointer
 * under an SRCU read lock; scif_hw_node_down() waits for them before the
 * bus may free what the pointer reaches.  Senders that found the node
 * online under scif_node.tx_mutex use it directly (node down clears it
 * under that mutex).  The same holds for the bus's context for the node
 * (scif_node.hw_ctx), set before the pointer.
 *
 * Local memory handed to a peer.  Every address a peer is given (node
 * queue area, connection ring, window run list and runs) is mapped for
 * that node by the bus (scif_node_map_local()) into a struct scif_lmap
 * of its owner, linked on the node's @lmaps: the owner unmaps it when
 * the peer no longer uses the memory (node queue: node down; connection
 * ring: endpoint destruction, or a new connection; run list: the
 * peer's REGISTER_ACK or the window's release; runs: the window's
 * release), and scif_hw_node_down() unmaps whatever is left for the
 * node before it returns, after which the owner's unmap is a no-op.
 * Queue areas and rings come from the bus's alloc_local when it has
 * one (struct scif_rb.area_hw; a reference to the bus's module is held
 * for each), else from the page allocator.
 *
 * Protocol errors.  A peer that breaks a queue pair (a count claiming
 * more than the ring holds) or whose bootstrap data turns invalid is
 * alive and may still write into our memory, so it is not "gone": the
 * core takes it offline on its own (scif_node.failed, set by fail_work
 * or by scif_hw_node_failed() from the bus), resets every endpoint
 * connected to it as on node loss (ECONNRESET, ENODEV for new
 * operations) and unpublishes its queue half, but frees nothing the
 * peer may still write into: the local half of the node queue pair and
 * the receive area of every endpoint that was connected or connecting
 * to it (held by @proto_ref) stay until the bus reports the node down
 * (it restarted or died), which frees them.  Only then may the bus bring
 * the node up again, as a new node.  A broken connection ring costs only
 * that connection: it is reset and the peer is asked to disconnect, as
 * if this side had closed.
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
 * Lock order (outermost first):
 *   scif_endpt.ctl_mutex
 *   scif_endpt.recv_mutex
 *   scif_endpt.send_mutex
 *   mmap_lock (of a process faulting on a mapping, or in mmap())
 *   scif_endpt.mmap.lock
 *   scif_endpt.rma.lock (see above)
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
#ifndef _SCIF_PRIV_H_
#define _SCIF_PRIV_H_

#include <linux/atomic.h>
#include <linux/kobject.h>
#include <linux/kref.h>
#include <linux/percpu.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/scif.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/uio.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "scif_fault.h"
#include "scif_hw.h"
#include "scif_lmap.h"
#include "scif_mmap.h"
#include "scif_proto.h"
#include "scif_rma.h"
#include "scif_testhooks.h"

#define SCIF_DRV_NAME		"scif"
/* Size of the receive ring of a node queue pair. */
#define SCIF_NODE_QP_SIZE	(64 * 1024)
/* Bounds of a connection's receive ring, ours or a peer's. */
#define SCIF_RING_MIN		PAGE_SIZE
#define SCIF_RING_MAX		(4 * 1024 * 1024)

/**
 * struct scif_rb - this side's view of a queue pair
 * @local: our half, in our memory (receive ring and what the peer writes)
 * @lmap: @local as the peer reaches it
 * @area_hw: the bus whose alloc_local gave @local, or NULL (the page
 *	allocator)
 * @area_phys: the physical address of @local
 * @area_pinned: @local holds a reference to @area_hw's module (every
 *	area but a node queue pair's, which goes with its node)
 * @remote: the peer's half, mapped; NULL when not (or no longer) mapped
 * @remote_addr: where the peer published its half (connections only)
 * @rx_size: size of local->rx_data
 * @tx_size: size of remote->rx_data
 * @tx_write: bytes we have put into remote->rx_data
 * @rx_read: bytes we have taken from local->rx_data
 * @tx_skew: test build only: 0, set only by the corrupt test hook
 *	(scif_node_corrupt()),
 *	added to every write count published to the peer so that the
 *	peer sees a bad count however often this side sends afterwards
 *
 * The transmit side (@tx_write, writes through @remote) and the receive
 * side (@rx_read) each have a single user at a time, serialised by the
 * owner of the ring.
 */
struct scif_rb {
	struct scif_qp_shm *local;
	struct scif_lmap lmap;
	struct scif_hw_dev *area_hw;
	phys_addr_t area_phys;
	bool area_pinned;
	struct scif_qp_shm *remote;
	u64 remote_addr;
	u32 rx_size;
	u32 tx_size;
	u32 tx_write;
	u32 rx_read;
#ifdef SCIF_TEST_HOOKS
	u32 tx_skew;
#endif
};

#ifdef SCIF_TEST_HOOKS
static inline u32 scif_rb_skew(const struct scif_rb *rb)
{
	return rb->tx_skew;
}

static inline void scif_rb_set_skew(struct scif_rb *rb, u32 skew)
{
	rb->tx_skew = skew;
}
#else
static inline u32 scif_rb_skew(const struct scif_rb *rb)
{
	return 0;
}

static inline void scif_rb_set_skew(struct scif_rb *rb, u32 skew)
{
}
#endif

/**
 * struct scif_stats - traffic counters of a node or an endpoint
 * @tx_bytes: bytes sent (scif_send)
 * @tx_msgs: sends that moved at least one byte
 * @rx_bytes: bytes received (scif_recv)
 * @rx_msgs: receives that moved at least one byte
 * @rma_ops: RMAs that completed without error, counted by their caller
 *	(asynchronous ones when queued)
 * @rma_bytes: their bytes
 * @errors: sends, receives and RMAs that failed (not counting
 *	interruptions by a signal), and, for a node, each time it was taken
 *	offline for a protocol error
 * @user_tx_bytes: bytes user space says it sent through the fast path
 *	(its counter page), as validated by scif_fp_fold(): never in the
 *	fields above, which the kernel measured itself
 * @user_tx_msgs: the sends it says moved them
 * @user_rx_bytes: bytes user space says it received through the fast path
 * @user_rx_msgs: the receives it says moved them
 *
 * A node has one per CPU (scif_node.stats), updated with this_cpu_add()
 * and summed by readers; an endpoint has one (scif_endpt.stats) whose
 * fields are updated under the lock named in struct scif_endpt (the
 * user_tx_* ones under send_mutex, the user_rx_* ones under recv_mutex).
 */
struct scif_stats {
	u64 tx_bytes;
	u64 tx_msgs;
	u64 rx_bytes;
	u64 rx_msgs;
	u64 rma_ops;
	u64 rma_bytes;
	u64 errors;
	u64 user_tx_bytes;
	u64 user_tx_msgs;
	u64 user_rx_bytes;
	u64 user_rx_msgs;
};

/**
 * struct scif_node - a node of the SCIF network, as seen from here
 * @id: node id
 * @hw: the bus that reaches it; NULL while the node is absent
 * @hw_ctx: the bus's context for it (given to scif_hw_node_up()),
 *	handed back to every per-node operation; valid while @hw is set
 * @lmap_lock: protects @lmaps, @lmap_hw, @lmap_ctx and the struct
 *	scif_lmap on @lmaps; innermost (only the bus's map_local and
 *	unmap_local run under it)
 * @lmaps: local memory mapped for the node (struct scif_lmap)
 * @lmap_hw: the bus while mappings for the node may be made: set by
 *	scif_hw_node_up(), cleared once @lmaps is emptied at node down
 * @lmap_ctx: the bus's context for the node, with @lmap_hw
 * @online: true while messages can be exchanged with it
 * @peer: what clients' probe/remove callbacks are given
 * @rb: the node queue pair
 * @tx_mutex: serialises senders on @rb's transmit side
 * @tx_wq: woken when the peer's queue may have room, or the node goes
 * @rx_work: drains @rb's receive side
 * @reply_lock: protects @replies
 * @replies: messages queued by @rx_work for @reply_work to send
 * @reply_work: sends @replies
 * @nr_replies: length of @replies (bounded, see scif_node_reply())
 * @max_replies: most replies ever queued at once, for debugfs
 * @rx_throttled: @rx_work stopped taking messages because @replies is
 *	long; @reply_work requeues it
 * @reply_waiting: @reply_work waits for room in the peer's queue; @rx_work
 *	does not pause meanwhile (the room may have to come from it)
 * @tx_full_since: jiffies (| 1) since senders found the peer's queue
 *	full, 0 when it had room; under @tx_mutex
 * @stall_reported: the node was taken offline for leaving its queue
 *	full (node_stall_ms); under @tx_mutex
 * @failed: taken offline for a protocol error, until the bus reports it
 *	down (see the implementation notes)
 * @fail_work: takes the node offline when @rx_work or a sender finds
 *	its node queue pair broken, or the node stalled
 * @nr_rwindows: remote windows of this node's endpoints (atomic; charged
 *	against max_remote_windows_per_node by scif_window.c)
 * @nr_rruns: their runs (max_remote_runs_per_node)
 * @test_held: test hook: @rx_work (bit 0) or @reply_work (bit 1) does
 *	nothing
 * @generation: times the node came online since the module was loaded
 *	(under scif_info.node_lock; read with READ_ONCE)
 * @heartbeat: jiffies when the bus last saw the node's heartbeat
 *	(scif_hw_node_heartbeat()), 0 if it never did; READ_ONCE/WRITE_ONCE
 * @stats: traffic counters, per CPU (see struct scif_stats)
 * @kobj: the node's sysfs directory once the node has come up
 *	(scif_sysfs.c), under scif_info.node_lock
 *
 * @hw, @online and @failed change under scif_info.node_lock; @online is
 * read without it (READ_ONCE) on the data path.  @hw is also read
 * without it (READ_ONCE) by scif_node_map() and its siblings, under the
 * SRCU read lock that keeps the bus valid (scif_nodes.c); it stays
 * stable for a sender that found the node online under @tx_mutex.
 */
struct scif_node {
	u16 id;
	struct scif_hw_dev *hw;
	void *hw_ctx;
	bool online;
	struct scif_peer_dev peer;

	/* lmap_lock protects lmaps, lmap_hw, lmap_ctx */
	struct mutex lmap_lock;
	struct list_head lmaps;
	struct scif_hw_dev *lmap_hw;
	void *lmap_ctx;

	struct scif_rb rb;
	/* tx_mutex serialises writers of rb's transmit side */
	struct mutex tx_mutex;
	wait_queue_head_t tx_wq;
	struct work_struct rx_work;

	/*
	 * reply_lock protects replies, nr_replies, max_replies, rx_throttled
	 * and reply_waiting
	 */
	spinlock_t reply_lock;
	struct list_head replies;
	unsigned int nr_replies;
	unsigned int max_replies;
	bool rx_throttled;
	bool reply_waiting;
	struct work_struct reply_work;

	unsigned long tx_full_since;
	bool stall_reported;

	bool failed;
	struct work_struct fail_work;

	/* remote windows of this node's endpoints, and their runs */
	atomic_long_t nr_rwindows;
	atomic_long_t nr_rruns;
#ifdef SCIF_TEST_HOOKS
	unsigned int test_held;
#endif
	u32 generation;
	unsigned long heartbeat;
	struct scif_stats __percpu *stats;
	struct kobject *kobj;
};

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
 * struct scif_conreq - a connection request waiting at a listener
 * @list: link in the listener's @conreqs or @parked, or in a private list
 * @node: the requesting node
 * @peer: the requesting endpoint's port id
 * @peer_handle: the requesting endpoint's handle
 * @addr: where the requester's half of the queue pair is
 * @size: the requester's ring size
 * @port: the listener's port
 * @listener: while parked, the listener it was taken from (a reference,
 *	and one of the listener's @nr_parked)
 * @owner: thread group that may complete a parked request
 * @cookie: key of a parked request in scif_info.parked
 *
 * A request is owned by one party at a time: the listener's @conreqs
 * (under its lock), whoever took it from there, or scif_info.parked,
 * from which only the party that erases it (under the xarray's lock)
 * takes it; nobody else dereferences a parked request.
 */
struct scif_conreq {
	struct list_head list;
	struct scif_node *node;
	struct scif_port_id peer;
	u64 peer_handle;
	u64 addr;
	u32 size;
	u16 port;
	struct scif_endpt *listener;
	struct pid *owner;
	u64 cookie;
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
 * @fp: the user-space data path (own lock)
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
	struct scif_epd_fp fp;
	struct scif_stats stats;
};

/* The counter page of @ep's user-space data path (scif_fp.c), or NULL. */
static inline struct scif_fp_ctl *scif_fp_ctl(struct scif_endpt *ep)
{
	/* Pairs with the release in scif_fp_enable(): the counts are set. */
	return smp_load_acquire(&ep->fp.ctl);
}

/**
 * struct scif_info - state global to the driver
 * @mdev: the /dev/scif misc device
 * @debugfs: root of the driver's debugfs directory
 * @wq: the driver's workqueue (node messages, endpoint destruction)
 * @self: this node's id
 * @eplock: protects @endpoints
 * @endpoints: every endpoint not yet destroyed
 * @epds: endpoints by id (the low half of their handle)
 * @nr_endpoints: endpoints counted (see the notes), bounded by
 *	max_endpoints
 * @user_lock: protects @users and the users' @ref and @nr_endpoints
 * @users: the struct scif_user of each user with an endpoint, by kuid
 * @next_gen: generation source for handles
 * @port_lock: protects @ports and @listeners
 * @ports: reference count of each port in use (xa_mk_value)
 * @listeners: the listening endpoint of each port
 * @parked: accepted requests waiting for SCIF_ACCEPTREG, by cookie; its
 *	lock nests inside scif_endpt.lock (a listener publishing a request)
 * @node_lock: protects nodes' @hw/@online, @clients
 * @clients: registered kernel clients
 * @nodes: every possible node
 * @dropped_msgs: node messages dropped: unknown type, or naming no
 *	endpoint of the sending node
 * @node_failures: nodes taken offline for a protocol error
 * @ring_failures: connections reset because the peer broke their ring
 * @node_stalls: nodes taken offline for leaving their queue full
 * @local_maps: ranges of local memory mapped for peers (map_local not
 *	yet undone), for debugfs
 */
struct scif_info {
	struct miscdevice mdev;
	struct dentry *debugfs;
	struct workqueue_struct *wq;
	u16 self;

	/* eplock protects endpoints */
	struct mutex eplock;
	struct list_head endpoints;
	struct xarray epds;
	atomic_t nr_endpoints;
	atomic_t next_gen;

	/* user_lock protects users, their ref and nr_endpoints; alone */
	struct mutex user_lock;
	struct xarray users;

	/* port_lock protects ports and listeners */
	struct mutex port_lock;
	struct xarray ports;
	struct xarray listeners;
	struct xarray parked;

	/* node_lock protects clients and the nodes' hw and online */
	struct mutex node_lock;
	struct list_head clients;
	struct scif_node nodes[SCIF_MAX_NODES];

	atomic_t dropped_msgs;
	atomic_t node_failures;
	atomic_t ring_failures;
	atomic_t node_stalls;
	atomic_t local_maps;
};

extern struct scif_info scif_info;
extern unsigned int scif_max_endpoints;
extern unsigned int scif_max_user_endpoints;
extern unsigned int scif_max_backlog;
extern unsigned int scif_max_parked;
extern unsigned int scif_msg_ring_size;
extern unsigned int scif_busy_poll_us;

/* scif_rb.c */
struct scif_qp_shm *scif_qp_alloc_gfp(u32 rx_size, gfp_t gfp);
void scif_qp_free(struct scif_qp_shm *shm, u32 rx_size);
void scif_qp_cache_drain(void);
u32 scif_rb_tx_room(const struct scif_rb *rb);
u32 scif_rb_tx_room_at(const struct scif_rb *rb, u32 tx_write);
bool scif_rb_tx_broken(const struct scif_rb *rb);
bool scif_rb_tx_broken_at(const struct scif_rb *rb, u32 tx_write);
int scif_rb_rx_avail(const struct scif_rb *rb, u32 *avail);
int scif_rb_rx_avail_at(const struct scif_rb *rb, u32 rx_read, u32 *avail);
size_t scif_rb_put(struct scif_rb *rb, struct iov_iter *from);
size_t scif_rb_put_n(struct scif_rb *rb, struct iov_iter *from, size_t n);
size_t scif_rb_get(struct scif_rb *rb, struct iov_iter *to);
size_t scif_rb_get_n(struct scif_rb *rb, struct iov_iter *to, size_t n);

/* scif_nodes.c */

/**
 * struct scif_node_events - what scif_nodes.c tells the layers above it
 * @message: a node message came in (scif_nodemsg_dispatch()).  Context:
 *	the node's rx_work, process context, no lock held; must not wait
 *	for anything remote.
 * @online: a node came online (scif_sysfs_node_add()).  Context: process
 *	context, scif_info.node_lock held.
 * @lost: a node is gone, every endpoint on it is to be reset
 *	(scif_epd_node_lost()).  Context: process context, may sleep;
 *	scif_info.node_lock not held, the node's rx_work stopped.
 *
 * The node layer calls the layers above it only through these: the top
 * layer (scif_main.c) fills the table with their functions and gives it
 * to scif_nodes_init(), so the node layer names none of them.  Each is
 * called where the node layer called the function by name before, in
 * the same order with the other teardown steps and under the same locks.
 *
 * Lock rules: set once by scif_nodes_init(), before any bus registers,
 * and never changed while the module is loaded: read without a lock.
 */
struct scif_node_events {
	void (*message)(struct scif_node *node, const struct scif_msg *msg);
	void (*online)(struct scif_node *node);
	void (*lost)(struct scif_node *node, bool hold);
};

struct scif_reply;
int scif_nodes_init(const struct scif_node_events *events);
void scif_nodes_exit(void);
struct scif_node *scif_node_get_online(u16 id);
int scif_node_send(struct scif_node *node, const struct scif_msg *msg);
void scif_node_reply(struct scif_node *node, const struct scif_msg *msg);
struct scif_reply *scif_node_reply_reserve(void);
void scif_node_reply_unreserve(struct scif_reply *r);
void scif_node_reply_reserved(struct scif_node *node, struct scif_reply *r,
			      const struct scif_msg *msg);
void *scif_node_map(struct scif_node *node, u64 addr, size_t len);
void scif_node_unmap(struct scif_node *node, void *va, size_t len);
int scif_node_peer_phys(struct scif_node *node, u64 addr, size_t len,
			phys_addr_t *phys, bool *wc);
int scif_node_numa(struct scif_node *node);
int scif_lmap_init(struct scif_lmap *lm, unsigned int max, gfp_t gfp);
int scif_node_map_local(struct scif_node *node, struct scif_lmap *lm,
			phys_addr_t phys, size_t len, u64 *addr);
void scif_node_unmap_local(struct scif_lmap *lm);
void scif_lmap_free(struct scif_lmap *lm);
int scif_node_map_area(struct scif_node *node, struct scif_rb *rb, u64 *addr);
int scif_node_area_get(struct scif_node *node, struct scif_rb *rb,
		       u32 rx_size, gfp_t gfp);
void scif_node_area_free(struct scif_rb *rb);
void scif_buses_show(struct seq_file *s);
void scif_node_protocol_error(struct scif_node *node);
int scif_node_errno(u64 e, bool success, const int *allowed);
const char *scif_node_state_name(struct scif_node *node);
void scif_node_stats_sum(struct scif_node *node, struct scif_stats *sum);

/*
 * Count on a node (per CPU: any context, no lock): @bytes sent or
 * received in @msgs messages; an RMA of @bytes; an error.
 */
static inline void scif_node_count_tx(struct scif_node *node, u64 bytes,
				      u64 msgs)
{
	this_cpu_add(node->stats->tx_bytes, bytes);
	this_cpu_add(node->stats->tx_msgs, msgs);
}

static inline void scif_node_count_rx(struct scif_node *node, u64 bytes,
				      u64 msgs)
{
	this_cpu_add(node->stats->rx_bytes, bytes);
	this_cpu_add(node->stats->rx_msgs, msgs);
}

/* Traffic user space reports through the fast path, once validated. */
static inline void scif_node_count_user(struct scif_node *node, bool tx,
					u64 bytes, u64 msgs)
{
	if (tx) {
		this_cpu_add(node->stats->user_tx_bytes, bytes);
		this_cpu_add(node->stats->user_tx_msgs, msgs);
	} else {
		this_cpu_add(node->stats->user_rx_bytes, bytes);
		this_cpu_add(node->stats->user_rx_msgs, msgs);
	}
}

static inline void scif_node_count_rma(struct scif_node *node, u64 bytes)
{
	this_cpu_inc(node->stats->rma_ops);
	this_cpu_add(node->stats->rma_bytes, bytes);
}

static inline void scif_node_count_error(struct scif_node *node)
{
	this_cpu_inc(node->stats->errors);
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

/* scif_sysfs.c */
int scif_sysfs_init(void);
void scif_sysfs_exit(void);
void scif_sysfs_node_add(struct scif_node *node);

/* scif_epd.c */
struct scif_endpt *scif_epd_create(bool user);
void scif_epd_uncount(struct scif_endpt *ep);
struct scif_endpt *scif_epd_lookup(u64 handle);
const char *scif_epd_state_name(enum scif_epd_state state);
void scif_epd_node_lost(struct scif_node *node, bool hold);
void scif_epd_parts_teardown(struct scif_endpt *ep, bool local, int err);
int scif_port_claim(u16 port);
int scif_port_alloc(u16 *port);
void scif_port_get(u16 port);
void scif_port_put(u16 port);

/* scif_conn.c */
int scif_epd_bind(struct scif_endpt *ep, u16 port);
int scif_epd_listen(struct scif_endpt *ep, int backlog);
int scif_epd_connect(struct scif_endpt *ep, struct scif_port_id *dst,
		     bool nonblock);
struct scif_conreq *scif_epd_take_request(struct scif_endpt *lep, int flags);
int scif_epd_accept_request(struct scif_endpt *ep, struct scif_conreq *req);
void scif_conreq_reject(struct scif_conreq *req);
int scif_epd_acceptreq(struct scif_endpt *lep, int flags,
		       struct scif_port_id *peer, u64 *cookie);
struct scif_conreq *scif_epd_unpark_request(u64 cookie);
void scif_epd_close(struct scif_endpt *ep);
void scif_conn_ring_broken(struct scif_endpt *ep);
void scif_conn_handle_connect(struct scif_node *node,
			      const struct scif_msg *msg,
			      struct scif_endpt *unused);
void scif_conn_handle_accept(struct scif_node *node,
			     const struct scif_msg *msg, struct scif_endpt *ep);
void scif_conn_handle_reject(struct scif_node *node,
			     const struct scif_msg *msg, struct scif_endpt *ep);
void scif_conn_handle_disconnect(struct scif_node *node,
				 const struct scif_msg *msg,
				 struct scif_endpt *ep);
void scif_conn_handle_disc_ack(struct scif_node *node,
			       const struct scif_msg *msg,
			       struct scif_endpt *ep);

/* scif_msg.c */
int scif_epd_send(struct scif_endpt *ep, struct iov_iter *from, int flags);
int scif_epd_recv(struct scif_endpt *ep, struct iov_iter *to, int flags);
void scif_msg_handle_notify(struct scif_node *node, const struct scif_msg *msg,
			    struct scif_endpt *ep);
__poll_t scif_msg_poll_mask(struct scif_endpt *ep);
int scif_epd_fp_notify(struct scif_endpt *ep, int what);

/* scif_fp.c */
bool scif_fp_trylock(u32 *lock);
void scif_fp_unlock(u32 *lock);
struct file *scif_fp_open(struct scif_endpt *ep, struct scifioctl_fp *arg);
void scif_fp_revoke(struct scif_endpt *ep);
void scif_fp_fold(struct scif_endpt *ep, bool tx);
void scif_fp_init(struct scif_endpt *ep);
void scif_fp_destroy(struct scif_endpt *ep);

/* scif_nodemsg.c */
void scif_nodemsg_dispatch(struct scif_node *node, const struct scif_msg *msg);

/* scif_fd.c */
int scif_fd_init(void);
void scif_fd_exit(void);

/* scif_loopback.c */
int scif_loopback_init(void);
void scif_loopback_exit(void);

/* scif_debugfs.c */
void scif_debugfs_init(void);
void scif_debugfs_exit(void);

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

#endif /* _SCIF_PRIV_H_ */
