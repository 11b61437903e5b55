/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: the nodes of the network and their queue pairs
 * (scif_nodes.c).  Lock rules: the notes below, struct scif_node, and
 * the lock order in scif_endpt.h.
 *
 * Implementation notes
 *
 * Node queue pairs.  One per node this node reaches (this node itself
 * included, through the loopback bus).  Messages are received by the
 * node's rx_work, which hands each to its handler through the router's
 * table (scif_nodemsg.c) and never waits for anything remote: replies
 * it must send are queued to reply_work.  That queue is bounded
 * (rx_work pauses while it is long, unless reply_work itself waits for
 * room; a node that lets it overflow is failed), and rx_work requeues
 * itself after a budget of messages.  A request too slow to serve in
 * rx_work (a copy of device memory) may be served by a work item, which
 * answers from a reply reserved in rx_work; rx_work pauses while
 * SCIF_NODE_DEFER_MAX of a node's are under way, and the node going
 * offline waits for them (scif_node_defer_get()).  Senders in process
 * context sleep while the peer's queue is full; the last
 * SCIF_REPLY_ROOM bytes of it are for replies, so that requests never
 * hold back the replies that drain them.  A node that leaves its queue full for node_stall_ms is
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
 */
#ifndef _SCIF_NODES_H_
#define _SCIF_NODES_H_

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/scif.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "scif_lmap.h"
#include "scif_rb.h"

struct kobject;
struct scif_hw_dev;
struct scif_msg;
struct scif_reply;
struct seq_file;

/* Size of the receive ring of a node queue pair. */
#define SCIF_NODE_QP_SIZE	(64 * 1024)

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
 * @lmap_lock: protects @lmaps, @pdmaps, @lmap_hw, @lmap_ctx, @held_maps,
 *	@ap_hw and the structs scif_lmap and scif_pdmap on @lmaps and
 *	@pdmaps; innermost (only the bus's map_local, unmap_local,
 *	peer_dma_map, peer_dma_unmap and close_aperture run under it)
 * @lmaps: local memory mapped for the node (struct scif_lmap)
 * @pdmaps: the node's memory mapped for local devices (struct
 *	scif_pdmap, scif_devdma.c's)
 * @lmap_hw: the bus while mappings for the node may be made: set by
 *	scif_hw_node_up(), cleared once @lmaps and @pdmaps are emptied at
 *	node down
 * @lmap_ctx: the bus's context for the node, with @lmap_hw
 * @held_maps: device mappings of the node's windows not yet released
 *	(scif_node_hold_get()); while not 0 after the node went down, its
 *	next life waits (scif_hw_node_up() answers -EAGAIN)
 * @ap_hw: the bus that closed the node's aperture (close_aperture) at
 *	node down because @held_maps was not 0; it is opened again when
 *	@held_maps drops to 0, or forgotten if the bus unregisters first
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
 *	long or @nr_deferred is at its bound; @reply_work or the last
 *	scif_node_defer_put() requeues it
 * @nr_deferred: requests of the node taken by @rx_work and served later
 *	in process context (scif_node_defer_get()), not yet answered;
 *	bounded by SCIF_NODE_DEFER_MAX
 * @max_deferred: most deferred requests ever under way at once, for
 *	debugfs
 * @defer_wq: woken when @nr_deferred drops to 0
 * @reply_waiting: @reply_work waits for room in the peer's queue; @rx_work
 *	does not pause meanwhile (the room may have to come from it)
 * @tx_full_since: jiffies (| 1) since senders found the peer's queue
 *	full, 0 when it had room; under @tx_mutex
 * @stall_reported: the node was taken offline for leaving its queue
 *	full (node_stall_ms); under @tx_mutex
 * @rx_handled: node messages @rx_work has handled (written by it only,
 *	read with READ_ONCE; see scif_node_progress())
 * @tx_read_seen: how far the peer had read @rb's transmit side when
 *	@rx_work last ran (written by it only, read with READ_ONCE)
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

	/* lmap_lock protects lmaps, pdmaps, lmap_hw, lmap_ctx, held_maps, ap_hw */
	struct mutex lmap_lock;
	struct list_head lmaps;
	struct list_head pdmaps;
	struct scif_hw_dev *lmap_hw;
	void *lmap_ctx;
	unsigned int held_maps;
	struct scif_hw_dev *ap_hw;

	struct scif_rb rb;
	/* tx_mutex serialises writers of rb's transmit side */
	struct mutex tx_mutex;
	wait_queue_head_t tx_wq;
	struct work_struct rx_work;

	/*
	 * reply_lock protects replies, nr_replies, max_replies, rx_throttled,
	 * reply_waiting, nr_deferred and max_deferred
	 */
	spinlock_t reply_lock;
	struct list_head replies;
	unsigned int nr_replies;
	unsigned int max_replies;
	bool rx_throttled;
	bool reply_waiting;
	unsigned int nr_deferred;
	unsigned int max_deferred;
	wait_queue_head_t defer_wq;
	struct work_struct reply_work;

	unsigned long tx_full_since;
	bool stall_reported;

	unsigned long rx_handled;
	u32 tx_read_seen;

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
 * struct scif_node_events - what scif_nodes.c tells the layers above it
 * @message: a node message came in (scif_nodemsg_dispatch()).  Context:
 *	the node's rx_work, process context, no lock held; must not wait
 *	for anything remote.
 * @online: a node came online (scif_sysfs_node_add()).  Context: process
 *	context, scif_info.node_lock held.
 * @absent: a node's bus let go of it: it went down, or never came up
 *	and was given up (scif_sysfs_node_absent()).  Called before the
 *	node forgets its bus.  Context: process context,
 *	scif_info.node_lock held.
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
	void (*absent)(struct scif_node *node);
	void (*lost)(struct scif_node *node, bool hold);
};

int scif_nodes_init(const struct scif_node_events *events);
void scif_nodes_exit(void);
struct scif_node *scif_node_get_online(u16 id);
int scif_node_send(struct scif_node *node, const struct scif_msg *msg);
unsigned long scif_node_progress(const struct scif_node *node);
void scif_node_reply(struct scif_node *node, const struct scif_msg *msg);
struct scif_reply *scif_node_reply_reserve(void);
void scif_node_reply_unreserve(struct scif_reply *r);
void scif_node_reply_reserved(struct scif_node *node, struct scif_reply *r,
			      const struct scif_msg *msg);
bool scif_node_defer_get(struct scif_node *node);
void scif_node_defer_put(struct scif_node *node);
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
int scif_node_peer_dma_map(struct scif_node *node, struct scif_pdmap *pd,
			   struct device *dev, u64 addr, size_t len,
			   enum dma_data_direction dir);
void scif_node_peer_dma_unmap(struct scif_pdmap *pd);
void scif_node_hold_get(struct scif_node *node);
void scif_node_hold_put(struct scif_node *node);
bool scif_node_can_close(struct scif_node *node);
int scif_node_map_area(struct scif_node *node, struct scif_rb *rb, u64 *addr);
int scif_node_area_get(struct scif_node *node, struct scif_rb *rb,
		       u32 rx_size, gfp_t gfp);
void scif_node_area_free(struct scif_rb *rb);
void scif_buses_show(struct seq_file *s);
void scif_node_protocol_error(struct scif_node *node);
int scif_node_errno(u64 e, bool success, const int *allowed);
unsigned int scif_node_held_count(struct scif_node *node);
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

#endif /* _SCIF_NODES_H_ */
