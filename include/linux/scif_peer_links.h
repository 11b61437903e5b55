/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scif_peer_links.ko: one SCIF connection per peer node, for a kernel
 * client of SCIF (scif_net, scif_vsock).  Each client has its own
 * struct scif_peer_links: its port, its callbacks (struct spl_ops), its
 * links and its listener; the module keeps no state of its own.  Only
 * the connections are here; each client keeps its data path (what it
 * sends and how it reads) behind struct spl_ops.  net/scif/
 * scif_peer_links.c has how a link is made, Documentation/scif/net.rst
 * the design.
 *
 * This header sits next to <linux/scif.h> because it is an API between
 * modules of different folders (drivers/net/scif, net/vmw_vsock), which
 * find it where they find SCIF's own.
 */
#ifndef _LINUX_SCIF_PEER_LINKS_H
#define _LINUX_SCIF_PEER_LINKS_H

#include <linux/bitops.h>
#include <linux/mutex.h>
#include <linux/ratelimit.h>
#include <linux/scif.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

/* Milliseconds a link thread waits on SCIF before it looks at its flags. */
#define SPL_POLL_MS	100

struct scif_peer_links;

/**
 * struct spl_link - a peer node's connection, embedded in the client's link
 * @spl: the client's links, which this one is of
 * @peer: the peer's node id
 * @tx_mutex: held by the client's sender while it uses @epd; the link
 *	thread takes it to set or clear @epd
 * @epd: the connected endpoint, or NULL; written by the link thread
 *	under @tx_mutex, read by the link thread and by the sender under it
 * @closing: set by the link thread before it takes @tx_mutex to end the
 *	connection, so that the sender lets go at once
 * @tx_failed: set by the sender (scif_peer_links_tx_failed()) when a send failed;
 *	the link thread then resets the connection
 * @lock: protects @pending
 * @pending: an endpoint the listener accepted from @peer, not yet taken
 *	by the link thread
 * @wq: the link thread waits here (for @pending, the peer's return, and
 *	whatever the client's @rx waits for)
 * @thread: the link thread; runs from creation to scif_peer_links_stop()
 * @log_rs: how many connections a while have their "connected" and
 *	"down" lines logged (a peer's root may reset the link in a loop)
 * @log_conn: the current connection's lines are logged
 * @log_missed: connections not logged since the last one logged
 *
 * Lock order: @tx_mutex, then @lock or the client's own spinlocks.  No
 * SCIF call is made under a spinlock.  @log_rs, @log_conn and
 * @log_missed belong to the link thread alone.
 */
struct spl_link {
	struct scif_peer_links *spl;
	u16 peer;
	struct mutex tx_mutex;	/* see above */
	scif_epd_t epd;
	bool closing;
	bool tx_failed;
	spinlock_t lock;	/* see above */
	scif_epd_t pending;
	wait_queue_head_t wq;
	struct task_struct *thread;
	struct ratelimit_state log_rs;
	bool log_conn;
	unsigned int log_missed;
};

/**
 * struct spl_ops - the client: its names, its SCIF callbacks, its data path
 * @name: the module's name: the SCIF client's, "<name>_listen" for the
 *	listener and "<name>/<peer>" for the link threads
 * @port: the well-known SCIF port every node listens on
 * @probe: the SCIF client's probe: calls scif_peer_links_node_online() on the
 *	client's struct scif_peer_links (SCIF's callbacks carry no context)
 * @remove: the SCIF client's remove: calls scif_peer_links_node_offline()
 * @create: make the client's link to @peer (which calls scif_peer_links_link_init()),
 *	or an ERR_PTR; from the nodes work
 * @destroy: free a link @create made, after its thread has stopped (or
 *	failed to start) and its pending endpoint is closed
 * @up: @link->epd is set: start sending
 * @rx: read one unit from @epd: 0, -EAGAIN if none came within
 *	SPL_POLL_MS, or an error (the connection is then reset)
 * @down: optional; the connection is about to end, before @closing is set
 * @purge: drop what waits to be sent; called under @tx_mutex, @epd cleared
 * @closed: optional; the endpoint is closed; @why is what ended the
 *	connection
 *
 * The module logs each connection's start and end (rate-limited per
 * link): the client need not.
 */
struct spl_ops {
	const char *name;
	u16 port;
	void (*probe)(struct scif_peer_dev *peer);
	void (*remove)(struct scif_peer_dev *peer);
	struct spl_link *(*create)(u16 self, u16 peer);
	void (*destroy)(struct spl_link *link);
	void (*up)(struct spl_link *link);
	int (*rx)(struct spl_link *link, scif_epd_t epd);
	void (*down)(struct spl_link *link);
	void (*purge)(struct spl_link *link);
	void (*closed)(struct spl_link *link, int why);
};

/**
 * struct scif_peer_links - a client's links, one per peer node
 * @ops: the client; set by scif_peer_links_init(), before anything runs
 * @links: the links by peer id, created by @nodes_work and freed by
 *	scif_peer_links_stop(); written under @links_lock, read locklessly (READ_ONCE)
 *	by spl_link_of(): a link lives until scif_peer_links_stop()
 * @links_lock: protects the writing of @links and the listener's hand-over;
 *	never held across a SCIF call
 * @online: the nodes SCIF reports online (atomic bitops)
 * @self: this node's id, as @nodes_work last read it (READ_ONCE)
 * @listener: the listener thread, from scif_peer_links_start() to scif_peer_links_stop()
 * @listen_epd: the endpoint it listens on
 * @nodes_work: creates the links of nodes that came online
 * @client: the SCIF client, named after @ops
 *
 * Lock order: @links_lock, then a link's @lock.  The client allocates
 * this structure (statically or not) and owns it; the module only uses
 * it between scif_peer_links_init() and scif_peer_links_stop().
 */
struct scif_peer_links {
	const struct spl_ops *ops;
	struct spl_link *links[SCIF_MAX_NODES];
	struct mutex links_lock;	/* see above */
	DECLARE_BITMAP(online, SCIF_MAX_NODES);
	u16 self;
	struct task_struct *listener;
	scif_epd_t listen_epd;
	struct work_struct nodes_work;
	struct scif_client client;
};

/**
 * spl_self_id() - this node's id
 * @spl: the client's links
 *
 * Context: any.
 * Return: the id the nodes work last read (scif_peer_links_init() reads it first).
 */
static inline u16 spl_self_id(struct scif_peer_links *spl)
{
	return READ_ONCE(spl->self);
}

/**
 * spl_peer_online() - whether SCIF reports @node online
 * @spl: the client's links
 * @node: a node id below SCIF_MAX_NODES
 *
 * Context: any.
 * Return: true if @node is online.
 */
static inline bool spl_peer_online(struct scif_peer_links *spl, u16 node)
{
	return test_bit(node, spl->online);
}

/**
 * spl_link_of() - the link to a node
 * @spl: the client's links
 * @node: any value, the peer's hostile ones too
 *
 * Context: any; the link lives until scif_peer_links_stop().
 * Return: the link to @node, or NULL if there is none (yet).
 */
static inline struct spl_link *spl_link_of(struct scif_peer_links *spl,
					   u64 node)
{
	if (node >= SCIF_MAX_NODES)
		return NULL;
	return READ_ONCE(spl->links[node]);
}

void scif_peer_links_init(struct scif_peer_links *spl,
			  const struct spl_ops *ops);
int scif_peer_links_start(struct scif_peer_links *spl);
void scif_peer_links_stop(struct scif_peer_links *spl);
void scif_peer_links_node_online(struct scif_peer_links *spl,
				 struct scif_peer_dev *peer);
void scif_peer_links_node_offline(struct scif_peer_links *spl,
				  struct scif_peer_dev *peer);
void scif_peer_links_link_init(struct scif_peer_links *spl,
			       struct spl_link *link, u16 peer);
void scif_peer_links_tx_failed(struct spl_link *link);
int scif_peer_links_xfer(struct spl_link *link, scif_epd_t epd, void *buf,
			 int len, bool tx, bool may_stop);

#endif /* _LINUX_SCIF_PEER_LINKS_H */
