/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scif_rdma: an RDMA device over SCIF (Documentation/scif/rdma.rst).
 * The objects of one device, their limits and their locking rules.
 */
#ifndef _SCIF_RDMA_H
#define _SCIF_RDMA_H

#include <linux/completion.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/refcount.h>
#include <linux/sizes.h>
#include <linux/scif.h>
#include <linux/scif_net.h>
#include <linux/workqueue.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/iw_cm.h>

#include "scif_rdma_compat.h"

struct srd_umap;
struct srd_rxp_stage;

struct srd_rma_win;	/* scif_rdma_rma.c */
struct srd_map;		/* scif_rdma_map.c */

/* Per-device limits (rdma.rst, "Limits"); query_device reports them. */
#define SRD_MAX_QP		256
#define SRD_MAX_CQ		256
#define SRD_MAX_CQE		65536
#define SRD_MAX_MR		4096
#define SRD_MAX_PD		256
#define SRD_MAX_SRQ		64
#define SRD_MAX_WR		1024
/* An SRQ serves several QPs: four queues' worth. */
#define SRD_MAX_SRQ_WR		4096
#define SRD_MAX_SGE		8
#define SRD_MAX_FR_PAGES	256
/* The largest message a work request may move: 1 GiB. */
#define SRD_MAX_MSG		BIT(30)
/* GIDs of the port: the MAC zero-padded, and its link-local form. */
#define SRD_GIDS		2
/*
 * RDMA WRITE and READ (scif_rdma_rma.c): the most bytes one work request
 * may move, and the most bounce pages its window may need (1 MiB, plus a
 * head and a tail page per SGE); over either: IB_WC_LOC_LEN_ERR.
 */
#define SRD_RMA_MAX_LEN		SZ_16M
#define SRD_RMA_MAX_BOUNCE	((SZ_1M >> PAGE_SHIFT) + 2 * SRD_MAX_SGE)
/*
 * Direct RDMA WRITE and READ (scif_rdma_map.c): the windows a responder
 * opens over its MRs for one connection (at most SRD_MAP_MAX of them,
 * over at most SRD_MAP_PAGES pages in all), each in a slot of its own of
 * SRD_MAP_SLOT bytes (the largest MR) from SRD_MAP_BASE up in the
 * registered address space, never used twice on a connection, so that
 * an offset the requester kept finds no window once it is closed; the
 * requester keeps what SRD_MAP_CACHE keys resolved to.
 */
/*
 * A WRITE or READ of at most SRD_INLINE_MAX bytes that has no window to
 * go to travels in its frame (WRITE) or its answer (READ) instead.
 */
#define SRD_INLINE_MAX		SZ_16K
/*
 * A user QP's WRITE or READ of at most SRD_SQ_CALLER_MAX bytes whose key
 * has a window known to the requester is moved by the thread that posts
 * it, in ibv_post_send() (scif_rdma_sq.c), not handed to the send worker.
 */
#define SRD_SQ_CALLER_MAX	SZ_64K
/*
 * A user QP whose CQ is mapped has a stage of SRD_RXP_STAGE bytes: a
 * poll of the CQ that finds it empty reads the QP's frames ahead into it
 * and takes in up to SRD_RXP_BUDGET whole SENDs and answers of a QP
 * itself (scif_rdma_rxpoll.c), so that no receive thread has to wake up.
 */
#define SRD_RXP_STAGE		(SZ_16K + sizeof(struct srd_hdr))
#define SRD_RXP_BUDGET		64
/*
 * The send queue (scif_rdma_sq.c): the most WRITEs and READs of a QP
 * whose answers are outstanding at once, and of them the most with a
 * window (each up to SRD_RMA_MAX_BOUNCE bounce pages).
 */
#define SRD_SQ_AWAIT		16
#define SRD_SQ_AWAIT_WIN	4
/*
 * Answers to the peer's requests waiting to leave (scif_rdma_wire.c):
 * as many as an honest requester may have outstanding.
 */
#define SRD_ANS_MAX		SRD_SQ_AWAIT
/* How long one wait on a QP's connection lasts before the QP is checked. */
#define SRD_POLL_MS		100
#define SRD_MAP_MAX		64
#define SRD_MAP_CACHE		16
#define SRD_MAP_SLOT		((u64)SRD_MAX_MSG)
#define SRD_MAP_PAGES		(SZ_4G >> PAGE_SHIFT)
/*
 * A run of a user MR shorter than this (its pages are rarely contiguous)
 * is not moved alone: the whole range goes through the MR's vmap.
 */
#define SRD_RUN_MIN		SZ_64K
#define SRD_MAP_BASE		BIT_ULL(62)
/*
 * User-space objects (rdma.rst, "User verbs"): of each kind at most
 * half of the device's limit may be user space's, so that the kernel's
 * consumers (NVMe-oF, NFS) always find the other half.
 */
#define SRD_USER_SHARE(max)	((max) / 2)
/*
 * The entries of all user space's CQs on a device (struct ib_wc each,
 * about 70 MiB in all, charged to the creators' memory cgroups): room
 * for libfabric's 65536-entry CQs of sixteen processes.
 */
#define SRD_USER_CQES		BIT(20)
/*
 * Of user space's share, one user (uid) may hold a quarter: the others
 * always find room beside the biggest.
 */
#define SRD_USER_EACH(max)	(SRD_USER_SHARE(max) / 4)
#define SRD_USER_CQES_EACH	(SRD_USER_CQES / 4)

/*
 * The device's counters ("rdma statistic", scif_rdma_stats.c), in the
 * order of their names there.
 */
enum srd_stat {
	SRD_STAT_SENDS,			/* SENDs sent */
	SRD_STAT_RECVS,			/* SENDs received into a RECV */
	SRD_STAT_WRITE_REQS,		/* RDMA WRITEs sent */
	SRD_STAT_READ_REQS,		/* RDMA READs sent */
	SRD_STAT_REQ_BYTES,		/* their bytes, when they succeeded */
	SRD_STAT_WRITES_SERVED,		/* a peer's WRITEs done */
	SRD_STAT_READS_SERVED,		/* a peer's READs done */
	SRD_STAT_SERVED_BYTES,		/* their bytes (SCIF RMA) */
	SRD_STAT_REM_ACCESS_ERR,	/* answered IB_WC_REM_ACCESS_ERR */
	SRD_STAT_REM_INV_REQ_ERR,	/* answered IB_WC_REM_INV_REQ_ERR */
	SRD_STAT_REM_OP_ERR,		/* answered IB_WC_REM_OP_ERR */
	SRD_STAT_BAD_FRAMES,		/* connections ended by a bad frame */
	SRD_STAT_CM_CONNECTS,		/* QPs connected (either side) */
	SRD_STAT_CM_REFUSED,		/* CONNECTs refused or rejected */
	SRD_STAT_DIRECT_REQS,		/* WRITEs and READs done directly */
	SRD_STAT_MAPS_OPENED,		/* windows opened over MRs for a peer */
	SRD_STAT_INLINE_REQS,		/* WRITEs and READs done inline */
	SRD_STAT_PIPELINED_REQS,	/* ... that left while one waited */
	SRD_STAT_POSTER_REQS,		/* SENDs and direct ones: by their poster */
	SRD_STAT_POLLER_FRAMES,		/* frames taken in by a CQ's poller */
	SRD_STAT_USER_WIN_MAPS,		/* windows mapped into processes */
	SRD_STAT_NR
};

/* The kinds of object user space may create (srd_dev's @user_objs). */
enum srd_uobj {
	SRD_UOBJ_PD,
	SRD_UOBJ_CQ,
	SRD_UOBJ_QP,
	SRD_UOBJ_MR,
	SRD_UOBJ_SRQ,
	SRD_UOBJ_NR
};

/**
 * struct srd_dev - one device, tied to one scif_net interface
 * @ibdev: the RDMA core's device; first, as ib_alloc_device() wants
 * @ndev: the scif_net interface (a reference held until dealloc_driver)
 * @peer: the SCIF node at the other end of @ndev, or SCIF_NET_SHARED
 *	when @ndev is scif_net's sn, which reaches every node: each
 *	connection's node is then its destination's (srd_dev_shared())
 * @list: in the module's device list (srd_devs, under srd_devs_lock)
 * @qps: QP number -> struct srd_qp; xarray's own lock
 * @mrs: MR index (key >> 8) -> struct srd_mr; xarray's own lock
 * @num_pd: PDs allocated (bounded by SRD_MAX_PD)
 * @num_cq: CQs allocated (bounded by SRD_MAX_CQ)
 * @num_qp: QPs allocated (bounded by SRD_MAX_QP)
 * @num_mr: MRs allocated (bounded by SRD_MAX_MR)
 * @num_srq: SRQs allocated (bounded by SRD_MAX_SRQ)
 * @user_objs: of those, user space's, by kind (enum srd_uobj; each
 *	bounded by SRD_USER_SHARE() of the kind's limit)
 * @user_cqes: the entries of user space's CQs (at most SRD_USER_CQES)
 * @ucounts: uid -> struct srd_ucount, what each user holds of
 *	@user_objs and @user_cqes; xarray's own lock
 * @next_qpn: where the cyclic QP number allocation goes on
 * @next_mr: where the cyclic MR index allocation goes on
 * @cm_lock: protects @listens
 * @listens: the iWARP CM's listens on this device (struct srd_listen)
 * @map_mutex: protects every MR's and QP's @maps and window counts
 *	(@nr_maps); never held across scif_register() or scif_unregister(),
 *	which wait for the peer node: a slow node holds up only what waits
 *	for its own windows (scif_rdma_map.c)
 * @map_wq: woken when a window is no longer counted (an invalidation,
 *	dereg_mr and a QP's end wait there for their windows)
 * @stats: the counters (enum srd_stat), atomics, only ever increased
 * @port_up: the port state last reported to the RDMA core (ACTIVE or
 *	ERR events); under RTNL, as the netdev notifier that sets it runs
 *
 * Locking: the counters are atomics; the xarrays lock themselves; an
 * object found in an xarray is used only by a caller that owns it
 * (ib_core serialises create/destroy against the object's other verbs).
 * @map_mutex is never taken under another lock of scif_rdma.
 */
struct srd_dev {
	struct ib_device ibdev;
	struct net_device *ndev;
	u16 peer;
	struct list_head list;
	struct xarray qps;
	struct xarray mrs;
	atomic_t num_pd;
	atomic_t num_cq;
	atomic_t num_qp;
	atomic_t num_mr;
	atomic_t num_srq;
	atomic_t user_objs[SRD_UOBJ_NR];
	atomic_t user_cqes;
	struct xarray ucounts;
	u32 next_qpn;
	u32 next_mr;
	struct mutex cm_lock;	/* @listens */
	struct list_head listens;
	struct mutex map_mutex;	/* see above */
	wait_queue_head_t map_wq;
	atomic64_t stats[SRD_STAT_NR];
	bool port_up;
};

/* Whether @dev is on sn, reaching every node (struct srd_dev's @peer). */
static inline bool srd_dev_shared(const struct srd_dev *dev)
{
	return dev->peer == SCIF_NET_SHARED;
}

/**
 * struct srd_listen - an iw_create_listen
 * @list: in the device's listens
 * @cm_id: the listening cm_id (a reference held until iw_destroy_listen)
 */
struct srd_listen {
	struct list_head list;
	struct iw_cm_id *cm_id;
};

/**
 * struct srd_conn - a CONNECT request waiting for iw_accept / iw_reject
 * @list: in the CM's pending requests (scif_rdma_cm.c)
 * @epd: the endpoint, connected to the peer's CM connector
 * @cookie: what the request's cm_id holds as provider_data: accept and
 *	reject find the request by it, and find nothing once it was given up
 * @node: the peer node it came from
 * @deadline: jiffies after which it is given up (the connector has
 *	stopped waiting for the answer by then)
 *
 * Lifetime: owned by the pending list until iw_accept, iw_reject, the
 * CM's reaper or the module's exit takes it off; the taker closes or
 * hands on @epd and frees it.
 */
struct srd_conn {
	struct list_head list;
	scif_epd_t epd;
	unsigned long cookie;
	u16 node;
	unsigned long deadline;
};

/**
 * struct srd_ucount - what one user holds of user space's share of a device
 * @objs: the user's objects by kind (enum srd_uobj), each at most
 *	SRD_USER_EACH() of the kind's device limit
 * @cqes: the entries of the user's CQs (at most SRD_USER_CQES_EACH)
 *
 * One for each user (uid) that opened a context on the device, made by
 * alloc_ucontext, kept in the device's @ucounts until dealloc_driver
 * (only root can make many users).  Counted with atomics.
 */
struct srd_ucount {
	atomic_t objs[SRD_UOBJ_NR];
	atomic_t cqes;
};

/**
 * struct srd_ucontext - a user-space context
 * @ibuc: ib_core's part; first (INIT_RDMA_OBJ_SIZE)
 * @uc: its user's counts (the uid of the process that opened it)
 */
struct srd_ucontext {
	struct ib_ucontext ibuc;
	struct srd_ucount *uc;
};

/**
 * struct srd_pd - a protection domain: nothing beyond ib_core's
 * @ibpd: ib_core's part; first (INIT_RDMA_OBJ_SIZE)
 * @uc: the user it is counted to (struct srd_ucount), NULL for the kernel's
 */
struct srd_pd {
	struct ib_pd ibpd;
	struct srd_ucount *uc;
};

/**
 * struct srd_cq - a completion queue
 * @ibcq: ib_core's part; first (INIT_RDMA_OBJ_SIZE)
 * @lock: see below
 * @wc: the ring of @size completions (NULL for a mapped CQ)
 * @size: entries in the ring (at least the asked cqe, at most SRD_MAX_CQE)
 * @head: the oldest completion (not of a mapped CQ)
 * @count: completions in the ring (not of a mapped CQ)
 * @armed: 0, IB_CQ_SOLICITED or IB_CQ_NEXT_COMP: the next completion
 *	(solicited only for IB_CQ_SOLICITED) calls the comp_handler
 * @overrun: a completion found the ring full; the CQ is in error
 * @uc: the user it is counted to (struct srd_ucount), NULL for the kernel's
 * @tail: completions ever written into a mapped CQ's ring: the kernel's
 *	own count, which it copies into the ring and never reads back
 * @umap: a mapped CQ's ring, which the process polls, and its mmap entry
 *	(scif_rdma_ucq.c); NULL for a CQ that is not mapped
 * @rxp_mutex: a mapped CQ's: held while its poller takes in frames for
 *	@rxp_qps and while a QP joins or leaves it; taken before any QP's
 *	@rx_mutex (which is only tried under it)
 * @rxp_qps: a mapped CQ's user QPs that complete to it and have a stage
 *	(struct srd_rxp_link; scif_rdma_rxpoll.c)
 */
struct srd_cq {
	struct ib_cq ibcq;
	spinlock_t lock;	/* @wc, @head, @count, @armed, @overrun, @tail */
	struct ib_wc *wc;
	u32 size;
	u32 head;
	u32 count;
	int armed;
	bool overrun;
	struct srd_ucount *uc;
	u32 tail;
	struct srd_umap *umap;
	struct mutex rxp_mutex;	/* @rxp_qps */
	struct list_head rxp_qps;
};

/**
 * struct srd_dbuf - what a dma-buf MR holds
 * @dev: the MR's device (ibmr.device is set only once the verb returns)
 * @dmabuf: the dma-buf, with a reference, until dereg_mr
 * @attach: our attachment, until dereg_mr
 * @epd: the exporting endpoint (the dma-buf holds it)
 * @off: the MR's first byte in @epd's registered address space
 * @prot: SCIF_PROT_* of the export
 *
 * Immutable once the MR is registered (scif_rdma_dmabuf.c).
 */
struct srd_dbuf {
	struct srd_dev *dev;
	struct dma_buf *dmabuf;
	struct dma_buf_attachment *attach;
	scif_epd_t epd;
	off_t off;
	int prot;
};

/**
 * struct srd_mr - a memory region
 * @ibmr: ib_core's part
 * @pages: for a fast-registration MR, the page list map_mr_sg filled;
 *	for a user MR, its pinned pages (kernel virtual addresses both: the
 *	device uses virtual DMA)
 * @max_pages: entries @pages has room for
 * @npages: entries map_mr_sg filled (a user MR: all of them)
 * @dma: a get_dma_mr MR: any kernel address, local access only
 * @umem: a user MR (reg_user_mr): its pinned memory, released by
 *	dereg_mr; such an MR is valid from its registration to dereg_mr
 *	and is never changed by a work request
 * @valid: the keys may be used (a DMA MR and a user MR always; a
 *	fast-reg MR between IB_WR_REG_MR and IB_WR_LOCAL_INV)
 * @access: IB_ACCESS_* the last IB_WR_REG_MR gave
 * @key: the key in effect: the one the last IB_WR_REG_MR gave (the
 *	consumer changes ibmr's keys with ib_update_fast_reg_key before
 *	posting it), index << 8 before that
 * @iova: the first byte's address, as the last IB_WR_REG_MR mapped it
 * @length: bytes the last IB_WR_REG_MR mapped
 * @refs: one for the device's table (dropped by dereg_mr), one for each
 *	user of a key found by srd_mr_lookup() (the data path, while it
 *	moves the bytes; dropped by srd_mr_put())
 * @gone: completed when @refs drops to zero; dereg_mr waits for it
 *	before it frees the MR, so that a peer's WRITE or READ in progress
 *	never touches a freed MR
 * @maps: the windows opened over it for peers (struct srd_map, each
 *	holding a reference), under the device's map_mutex; closed before
 *	an invalidation or a re-registration completes and before dereg_mr
 *	waits for @gone
 * @nr_maps: windows over it being opened, open or being closed (written
 *	under the device's map_mutex, read with READ_ONCE): an
 *	invalidation waits until it is 0
 * @dying: dereg_mr has begun: no window may be opened (map_mutex)
 * @uc: a user MR's user (struct srd_ucount), NULL for the kernel's
 * @kmap: a user MR's pages in one kernel range (srd_mr_vmap()), made
 *	on first use, set once (cmpxchg), unmapped by dereg_mr after @gone
 * @dbuf: a dma-buf MR (reg_user_mr_dmabuf, scif_rdma_dmabuf.c): its
 *	dma-buf; such an MR has no pages and is reached only through the
 *	windows opened over it; valid from its registration until the
 *	dma-buf is revoked (move_notify), never changed by a work request
 *
 * Locking: @valid and @access change only in post_send of a QP of the
 * MR's PD (the consumer orders those work requests, as verbs require),
 * and @valid also in the receive thread of such a QP (a peer's
 * SEND_WITH_INV, which the consumer orders by handing out the rkey);
 * they are read with READ_ONCE by the data path.  A reference is taken
 * under RCU from a non-zero count; dereg_mr frees the MR after an RCU
 * grace period.
 */
struct srd_mr {
	struct ib_mr ibmr;
	u64 *pages;
	u32 max_pages;
	u32 npages;
	bool dma;
	struct ib_umem *umem;
	bool valid;
	int access;
	u32 key;
	u64 iova;
	u64 length;
	refcount_t refs;
	struct completion gone;
	struct list_head maps;
	u32 nr_maps;
	bool dying;
	struct srd_ucount *uc;
	void *kmap;
	struct srd_dbuf *dbuf;
};

/**
 * struct srd_rqe - a posted receive work request
 * @wr_id: the consumer's id
 * @num_sge: entries used in @sge
 * @sge: the scatter list
 */
struct srd_rqe {
	u64 wr_id;
	u32 num_sge;
	struct ib_sge sge[SRD_MAX_SGE];
};

/**
 * struct srd_srq - a shared receive queue (scif_rdma_srq.c)
 * @ibsrq: ib_core's SRQ; first, as INIT_RDMA_OBJ_SIZE wants
 * @lock: protects everything below; taken after a QP's lock when a QP's
 *	receive thread takes a receive (srd_rq_pop())
 * @rq: the ring of posted receives, @max_wr entries
 * @head: the oldest posted receive
 * @count: receives posted and not yet taken
 * @max_wr: the ring's size
 * @max_sge: scatter entries per receive
 * @limit: when @count falls below it, IB_EVENT_SRQ_LIMIT_REACHED is
 *	raised and @limit set to 0 (disarmed) until modify_srq arms it
 * @uc: the user it is counted to (struct srd_ucount), NULL for the
 *	kernel's (set at creation)
 *
 * Lifetime: ib_core's; it refuses destroy_srq while a QP uses the SRQ.
 * The receives still posted at destroy_srq are dropped.
 */
struct srd_srq {
	struct ib_srq ibsrq;
	spinlock_t lock;	/* see above */
	struct srd_rqe *rq;
	u32 head;
	u32 count;
	u32 max_wr;
	u32 max_sge;
	u32 limit;
	struct srd_ucount *uc;
};

/**
 * struct srd_swqe - a posted send work request, as the send worker needs it
 * @wr_id: the consumer's id
 * @opcode: IB_WR_*
 * @signaled: completes even when successful
 * @num_sge: entries used in @sge
 * @sge: the gather list (the scatter list of an RDMA READ)
 * @imm: the immediate data (network order)
 * @remote_addr: RDMA WRITE/READ: the address in the peer's MR
 * @rkey: RDMA WRITE/READ: the peer's key; LOCAL_INV: the key;
 *	SEND_WITH_INV: the peer's key to invalidate
 * @reg_mr: REG_MR: the MR
 * @reg_key: REG_MR: the key it gets
 * @reg_access: REG_MR: the access it gets
 * @read_inv: an RDMA_READ_WITH_INV (queued as an RDMA_READ): once the
 *	READ has succeeded, the local MR of @inv_key's index is invalidated
 * @inv_key: RDMA_READ_WITH_INV: that key
 * @fence: IB_SEND_FENCE: taken only once every answer before it has come
 *
 * Set by the send worker once it has taken the work request
 * (scif_rdma_sq.c):
 *
 * @len: RDMA WRITE/READ: the bytes of its SGEs
 * @resp: the answer it waits for (SRD_F_ACK or SRD_F_READ_RESP), or 0
 * @inl: an inline WRITE or READ (a READ's answer brings its bytes)
 * @win: a WRITE's or READ's window for the responder's RMA, or NULL;
 *	freed when the work request completes
 * @done: @status is final: set by the send worker for a work request
 *	that waits for no answer, else under the QP's @resp_mutex by the
 *	receive thread (the answer) or srd_sq_stop() (the connection's end)
 * @status: its completion status
 */
struct srd_swqe {
	u64 wr_id;
	enum ib_wr_opcode opcode;
	bool signaled;
	u32 num_sge;
	struct ib_sge sge[SRD_MAX_SGE];
	__be32 imm;
	u64 remote_addr;
	u32 rkey;
	struct ib_mr *reg_mr;
	u32 reg_key;
	int reg_access;
	bool read_inv;
	u32 inv_key;
	bool fence;
	u64 len;
	u8 resp;
	bool inl;
	struct srd_rma_win *win;
	bool done;
	enum ib_wc_status status;
};

/* The frames on a QP's connection (rdma.rst, "Data path"). */
/*
 * The connection manager's SCIF port and message (scif_rdma_cm.c; also
 * the QPs connected without it, scif_rdma_direct.c).  A connector binds
 * a port of SRD_PORT_BOTTOM..SRD_PORT_TOP (privileged: a kernel client
 * or a peer's root), connects to SRD_CM_PORT (SRD_CM_SHARED_PORT from a
 * device on sn, for the device on sn) and sends one message; the answer
 * comes back on the same endpoint, which becomes the QP's connection.
 * Every exchange finishes within SRD_CM_WAIT_MS.
 */
#define SRD_CM_PORT		702
#define SRD_CM_SHARED_PORT	703
#define SRD_PORT_TOP		767
#define SRD_PORT_BOTTOM		512
#define SRD_CM_MAGIC		0x53524443	/* "SRDC" */
#define SRD_CM_PDATA		196
#define SRD_CM_WAIT_MS		10000

enum { SRD_CM_CONNECT = 1, SRD_CM_ACCEPT, SRD_CM_REJECT, SRD_CM_DIRECT };

/**
 * struct srd_cm_msg - the CM's one message (fixed size; hostile)
 * @magic: SRD_CM_MAGIC, little endian
 * @type: SRD_CM_CONNECT, SRD_CM_ACCEPT, SRD_CM_REJECT or SRD_CM_DIRECT
 * @pdata_len: bytes used in @pdata (at most SRD_CM_PDATA)
 * @ord: the sender's outbound RDMA READ depth
 * @ird: the sender's inbound RDMA READ depth
 * @saddr: CONNECT: the connector's IPv4 address (network order)
 * @daddr: CONNECT: the address it connects to
 * @sport: CONNECT: the connector's port (network order)
 * @dport: CONNECT: the port it connects to
 * @pdata: the private data; DIRECT: struct srd_direct_req
 */
struct srd_cm_msg {
	__le32 magic;
	u8 type;
	u8 pdata_len;
	u8 ord;
	u8 ird;
	__be32 saddr;
	__be32 daddr;
	__be16 sport;
	__be16 dport;
	u8 pdata[SRD_CM_PDATA];
};

/**
 * struct srd_direct_req - a DIRECT's private data
 * @src_qpn: the connector's QP number
 * @dst_qpn: the QP number it was given as its peer's (IB_QP_DEST_QPN)
 */
struct srd_direct_req {
	__le32 src_qpn;
	__le32 dst_qpn;
};

enum srd_frame_type {
	SRD_F_SEND = 1,
	SRD_F_WRITE,
	SRD_F_READ_REQ,
	SRD_F_READ_RESP,
	SRD_F_ACK,
	SRD_F_MAP_REQ,
	SRD_F_MAP_RESP,
};

#define SRD_F_IMM	0x1
#define SRD_F_INV	0x2	/* SEND only: invalidate the MR of @rkey */
#define SRD_F_INLINE	0x4	/* WRITE, READ_REQ, READ_RESP: bytes follow */

/**
 * struct srd_hdr - a frame's header (every field from the peer is hostile)
 * @type: enum srd_frame_type
 * @flags: SRD_F_IMM, SRD_F_INV (SEND_WITH_INV), SRD_F_INLINE (a WRITE
 *	whose @len bytes follow, a READ_REQ whose READ_RESP brings them)
 * @status: ACK and READ_RESP: IB_WC_SUCCESS or the responder's error;
 *	MAP_RESP: IB_WC_SUCCESS (a window) or IB_WC_REM_ACCESS_ERR (none)
 * @rsvd: zero
 * @imm: the immediate data, network order; MAP_RESP: the window's
 *	IB_ACCESS_REMOTE_* rights, network order
 * @len: SEND: payload bytes that follow; WRITE, READ_REQ: bytes to move
 *	(no payload: the responder moves them by SCIF RMA; with
 *	SRD_F_INLINE a WRITE's follow its header, a READ's its answer);
 *	MAP_RESP: the MR's bytes; READ_RESP with SRD_F_INLINE: the READ's
 *	bytes, which follow; ACK, READ_RESP, MAP_REQ: 0
 * @rkey: WRITE, READ_REQ, MAP_REQ, MAP_RESP: the responder's MR key;
 *	SEND with SRD_F_INV: the key of the receiver's MR to invalidate
 * @addr: WRITE, READ_REQ: the address in that MR; MAP_RESP: the MR's
 *	first byte
 * @woff: WRITE, READ_REQ: where the first byte is in the requester's
 *	registered address space on this connection (its temporary window);
 *	MAP_RESP: the offset of the window over the MR in the responder's
 *	registered address space
 */
struct srd_hdr {
	u8 type;
	u8 flags;
	u8 status;
	u8 rsvd;
	__be32 imm;
	__le32 len;
	__le32 rkey;
	__le64 addr;
	__le64 woff;
};

/**
 * struct srd_ans - an answer the receive thread queued for the peer
 * @h: its header
 * @data: the bytes that follow it (an inline READ's, kmalloc'd), or NULL
 * @len: their length
 */
struct srd_ans {
	struct srd_hdr h;
	void *data;
	u32 len;
};

/**
 * struct srd_rkey - a peer's key as its MAP_RESP described it
 * @key: the key (0: the entry is free)
 * @direct: the peer opened a window: RDMA WRITE and READ within
 *	[@iova, @iova + @len) go straight to it; else by frames
 * @access: IB_ACCESS_REMOTE_READ and/or _WRITE the window allows
 * @iova: the MR's first byte
 * @len: its bytes
 * @off: the window's offset in the peer's registered address space
 */
struct srd_rkey {
	u32 key;
	bool direct;
	int access;
	u64 iova;
	u64 len;
	u64 off;
};

/**
 * struct srd_rxp_stage - bytes read ahead of a QP's frames
 * @off: the first byte not taken yet
 * @len: bytes held from @off
 * @buf: the bytes
 */
struct srd_rxp_stage {
	u32 off;
	u32 len;
	u8 buf[SRD_RXP_STAGE];
};

/**
 * struct srd_rxp_link - a QP in the list of a CQ's poller
 * @node: in the CQ's @rxp_qps, under its @rxp_mutex
 * @qp: the QP
 * @cq: the CQ, or NULL: not listed
 */
struct srd_rxp_link {
	struct list_head node;
	struct srd_qp *qp;
	struct srd_cq *cq;
};

/**
 * struct srd_qp - a reliable-connected queue pair
 * @ibqp: ib_core's part; first (INIT_RDMA_OBJ_SIZE)
 * @dev: the device
 * @uc: the user it is counted to (created through uverbs: struct
 *	srd_ucount), NULL for the kernel's
 * @lock: protects @state (also read without it), both rings' indices
 *	and counts, @rq_busy and @rq_flushing; not held while a completion
 *	is added
 * @state: IB_QPS_*
 * @sig_all: every send work request completes (IB_SIGNAL_ALL_WR)
 * @max_send_wr: send queue depth
 * @max_recv_wr: receive queue depth
 * @access: IB_ACCESS_*: remote read and write from the creation, as on
 *	other iWARP devices, and what modify_qp's IB_QP_ACCESS_FLAGS adds
 *	(WRITE_ONCE/READ_ONCE)
 * @max_send_sge: gather entries per send work request
 * @max_recv_sge: scatter entries per receive work request
 * @rq: the receive ring of @max_recv_wr entries
 * @rq_head: the oldest posted receive
 * @rq_count: receives posted and not yet taken
 * @rq_busy: the receive thread took a receive (srd_rq_pop()) and has not
 *	completed it yet (srd_rq_complete()): a flush waits for it
 * @rq_flushing: a flush of @rq runs (one at a time, so in order)
 * @srq: the shared receive queue the QP takes its receives from (then
 *	@rq is not used), or NULL; set at creation
 * @last_wqe: IB_EVENT_QP_LAST_WQE_REACHED was raised (a QP of @srq in
 *	ERROR whose receive thread holds none of the SRQ's receives);
 *	under @lock
 * @sq: the send ring of @max_send_wr entries (under @lock)
 * @sq_head: the oldest send work request not yet done
 * @sq_count: send work requests posted and not yet done
 * @sq_taken: of them, those the send worker has taken (from @sq_head:
 *	done, or waiting for their answers); under @sq_mutex
 * @sq_hold: a taken work request must complete before the next is
 *	taken (it failed here, or it is an RDMA_READ_WITH_INV, whose
 *	invalidation may still fail); cleared when none is taken; under
 *	@sq_mutex
 * @sq_caller: @sq_mutex is held by a user thread posting (not the send
 *	worker): a work request it cannot finish there is left for the
 *	worker (@sq_defer)
 * @sq_defer: the work request just tried is not taken: the worker does
 *	it (set and cleared under @sq_mutex)
 * @sq_mutex: held by whoever takes and completes @sq's work requests:
 *	the send worker, or for a user QP the thread in post_send
 *	(srd_sq_kick()); outside @tx_mutex and @resp_mutex.  The worker
 *	waits for it, so flushing @tx_work also waits for a poster's run
 * @tx_work: the send worker: takes @sq in order (scif_rdma_sq.c)
 * @epd: the SCIF connection once connected (set before @rx starts,
 *	closed by the receive thread when it ends)
 * @cm_id: the connection's cm_id (a reference held until the CLOSE
 *	event), NULL if never connected
 * @closing: the connection is to end (disconnect, ERROR, destroy)
 * @rx_done: completed when the receive thread has ended (or never ran)
 * @resp: the answer to the outstanding MAP_REQ (the send worker waits
 *	for it; the receive thread completes it)
 * @resp_hdr: that MAP_RESP, for the send worker
 * @resp_want: a MAP_REQ waits for its answer: set by the send worker
 *	before the request leaves, cleared when the receive thread takes
 *	the answer or the send worker gives up; a MAP_RESP while it is
 *	clear is one nobody asked for
 * @await: the taken WRITEs and READs waiting for their answers (ACK,
 *	READ_RESP), oldest first, as indices in @sq: a ring of
 *	SRD_SQ_AWAIT from @await_head; answers come in the order the
 *	requests left, so each answer is the oldest's
 * @await_head: the oldest entry of @await
 * @await_count: entries in @await
 * @await_win: of them, those with a window (at most SRD_SQ_AWAIT_WIN)
 * @await_stop: the connection has ended: no answer is awaited any more
 *	(set by srd_sq_stop(), cleared by srd_qp_connected())
 * @resp_mutex: held by the receive thread while it takes an answer, and
 *	by the send worker to set up a request or give up waiting for one
 *	(@resp_want, @resp_hdr, @await and its counts, @await_stop, and the
 *	@done and @status of a work request in @await)
 * @tx_mutex: held for the whole of a frame sent on @epd (header and
 *	payload), by the send worker and by @ans_work, so that their
 *	frames never interleave; never taken by the receive thread, which
 *	so never waits for this side's frames to leave
 * @ans: the answers (ACK, READ_RESP, MAP_RESP) the receive thread
 *	queued, a ring of SRD_ANS_MAX from @ans_head, sent in order by
 *	@ans_work or, ahead of its own frames, by the send worker
 *	(srd_tx_lock()); the receive thread waits for room only when the
 *	peer has more requests outstanding than an honest one may have
 * @ans_head: the oldest queued answer
 * @ans_count: answers queued
 * @ans_lock: protects @ans, @ans_head and @ans_count
 * @ans_room: woken when an answer has left the ring
 * @ans_work: sends the queued answers (scif_rdma_wire.c)
 * @rx_event: the asynchronous event (IB_EVENT_QP_FATAL, _QP_REQ_ERR or
 *	_QP_ACCESS_ERR) the connection's end reports, set by the receive
 *	thread when it ends the connection for the peer's error
 * @rx_event_set: @rx_event holds one (the receive thread's own)
 * @rma_stale: a WRITE's or READ's window that could not be unregistered
 *	(the connection broke): its memory is freed by the receive thread
 *	once the endpoint is closed (set by the send worker, which the
 *	receive thread flushes before it closes)
 * @maps: as a responder, the windows opened over MRs for the peer
 *	(struct srd_map; the device's map_mutex)
 * @nr_maps: its windows being opened, open or being closed (at most
 *	SRD_MAP_MAX; written under the device's map_mutex, read with
 *	READ_ONCE: the receive thread waits until it is 0 before it closes
 *	the endpoint)
 * @map_pages: their pages (at most SRD_MAP_PAGES)
 * @next_slot: the slot the next window goes in (map_mutex)
 * @rkeys: as a requester, what the peer's keys resolved to (under
 *	@sq_mutex)
 * @next_rkey: the entry of @rkeys the next key replaces
 * @rkeys_seen: a user QP's keys of small WRITEs and READs that went
 *	without asking for a window (under @sq_mutex): a key seen again
 *	is asked about (scif_rdma_rma.c)
 * @next_seen: the entry of @rkeys_seen the next key replaces
 * @iw_refs: references of the iWARP CM (iw_add_ref/iw_rem_ref) plus
 *	one of the QP's own, dropped by destroy_qp
 * @iw_done: completed when @iw_refs reaches zero; destroy_qp waits for
 *	it, since ib_core frees the QP when destroy_qp returns
 * @dest_qpn: a QP connected without the CM: the other QP's number, from
 *	modify_qp to RTR (IB_QP_DEST_QPN); under @lock
 * @dest_node: the node of that QP: the device's peer node, or this node
 *	when the address handle's GID is one of this port's; under @lock
 * @direct: @dest_qpn is set: the QP is to be connected to that QP of
 *	@dest_node (scif_rdma_direct.c); under @lock
 * @destroyed: destroy_qp has begun: no connection may be given to the
 *	QP any more; under @lock
 * @direct_work: the lower of two such QPs (by node, then QP number)
 *	dials the other with it, until @direct_until (jiffies)
 * @direct_until: when @direct_work gives up and moves the QP to ERROR
 * @rx_mutex: held by whoever reads the connection's frames: the receive
 *	thread (from a frame's first byte to its last), @rx_work, or a
 *	poller of a mapped CQ (scif_rdma_rxpoll.c, which only tries it);
 *	outside @resp_mutex, the device's map_mutex and the CQs' locks
 * @stage: a user QP with a mapped CQ: the bytes a poller read ahead of
 *	the frames (struct srd_rxp_stage), which every reader of the
 *	connection takes before the endpoint's (srd_xfer()); under
 *	@rx_mutex; NULL for other QPs
 * @uctx: a user QP's context (whose uverbs file alone may map its
 *	windows), NULL for a kernel QP; set at creation
 * @uinfo: a mapped QP's info page (struct scif_rdma_qp_info, read-only
 *	to the process) and its mmap entry (scif_rdma_uqp.c), NULL for
 *	other QPs; set at creation, let go by destroy_qp.  The page is
 *	written under @lock only
 * @ukey_off: where the window of each entry of the page's keys is in
 *	the peer's registered address space (under @lock)
 * @umap_epd: @epd while processes may map windows of it: set with it,
 *	cleared by the receive thread before it closes it; under
 *	@umap_mutex
 * @umap_mutex: held around the mapping of a window (under the
 *	process's mmap_lock) and around clearing @umap_epd, so that no
 *	mapping is made on an endpoint being closed
 * @rxp_live: the connection may be read by a poller or @rx_work: set by
 *	srd_qp_connected(), cleared by the receive thread when it ends;
 *	under @rx_mutex
 * @rx_work: takes in the frames a poller staged but left (a request of
 *	the peer's, or one too big for @stage), under @rx_mutex
 * @rxp: the QP's entries in the @rxp_qps of its send CQ and of its
 *	receive CQ (one used when they are the same CQ)
 */
struct srd_qp {
	struct ib_qp ibqp;
	struct srd_dev *dev;
	struct srd_ucount *uc;
	spinlock_t lock;	/* @state, the rings' indices: see above */
	enum ib_qp_state state;
	bool sig_all;
	u32 max_send_wr;
	u32 max_recv_wr;
	int access;
	u32 max_send_sge;
	u32 max_recv_sge;
	struct srd_rqe *rq;
	u32 rq_head;
	u32 rq_count;
	bool rq_busy;
	bool rq_flushing;
	struct srd_srq *srq;
	bool last_wqe;
	struct srd_swqe *sq;
	u32 sq_head;
	u32 sq_count;
	u32 sq_taken;
	bool sq_hold;
	bool sq_caller;
	bool sq_defer;
	struct mutex sq_mutex;		/* see above */
	struct work_struct tx_work;
	scif_epd_t epd;
	struct iw_cm_id *cm_id;
	bool closing;
	struct completion rx_done;
	struct completion resp;
	struct srd_hdr resp_hdr;
	bool resp_want;
	u32 await[SRD_SQ_AWAIT];
	u32 await_head;
	u32 await_count;
	u32 await_win;
	bool await_stop;
	struct mutex resp_mutex;	/* see above */
	struct mutex tx_mutex;		/* see above */
	struct srd_ans ans[SRD_ANS_MAX];
	u32 ans_head;
	u32 ans_count;
	spinlock_t ans_lock;		/* @ans, @ans_head, @ans_count */
	wait_queue_head_t ans_room;
	struct work_struct ans_work;
	enum ib_event_type rx_event;
	bool rx_event_set;
	struct srd_rma_win *rma_stale;
	struct list_head maps;
	u32 nr_maps;
	u64 map_pages;
	u64 next_slot;
	struct srd_rkey rkeys[SRD_MAP_CACHE];
	u32 next_rkey;
	u32 rkeys_seen[SRD_MAP_CACHE];
	u32 next_seen;
	refcount_t iw_refs;
	struct completion iw_done;
	u32 dest_qpn;
	u16 dest_node;
	bool direct;
	bool destroyed;
	struct delayed_work direct_work;
	unsigned long direct_until;
	struct mutex rx_mutex;		/* see above */
	struct srd_rxp_stage *stage;
	struct srd_ucontext *uctx;
	struct srd_umap *uinfo;
	u64 ukey_off[SRD_MAP_CACHE];
	scif_epd_t umap_epd;
	struct mutex umap_mutex;	/* @umap_epd */
	bool rxp_live;
	struct work_struct rx_work;
	struct srd_rxp_link rxp[2];
};

static inline struct srd_dev *to_srd_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct srd_dev, ibdev);
}

static inline struct srd_cq *to_srd_cq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct srd_cq, ibcq);
}

static inline struct srd_mr *to_srd_mr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct srd_mr, ibmr);
}

static inline struct srd_qp *to_srd_qp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct srd_qp, ibqp);
}

static inline struct srd_srq *to_srd_srq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct srd_srq, ibsrq);
}

/* The bytes of a send work request's SGEs. */
static inline u64 srd_swqe_len(const struct srd_swqe *w)
{
	u64 len = 0;
	u32 i;

	for (i = 0; i < w->num_sge; i++)
		len += w->sge[i].length;
	return len;
}

/*
 * Is @mr a fast-registration MR: the only kind that IB_WR_REG_MR, a
 * LOCAL_INV, a SEND_WITH_INV or a READ_WITH_INV may change.
 */
static inline bool srd_mr_fast_reg(const struct srd_mr *mr)
{
	return !mr->dma && !mr->umem && !mr->dbuf;
}

/* Count @n more of counter @stat of @dev. */
static inline void srd_stat_add(struct srd_dev *dev, enum srd_stat stat, u64 n)
{
	atomic64_add(n, &dev->stats[stat]);
}

/*
 * The prototypes of each part, in the order of the layer table of
 * rdma.rst ("Files and layers"), from the top: a part calls only those
 * below it (scripts/lint-layers.sh).
 */

/* scif_rdma_cm.c: the connection manager */
/*
 * The device a connection from SCIF node @node is for, with a reference
 * (ib_device_put), or NULL: the one whose netdev leads to @node, or with
 * @shared the one on sn; for a connection from this node itself, the
 * device of index @index (the dialing device's, which srd_cm_dial()
 * sends first).
 */
typedef struct srd_dev *(*srd_dev_of_peer_fn)(u16 node, u32 index,
					      bool shared);
int srd_cm_init(srd_dev_of_peer_fn dev_of_peer);
void srd_cm_exit(void);
int srd_iw_connect(struct iw_cm_id *cm_id, struct iw_cm_conn_param *p);
int srd_iw_accept(struct iw_cm_id *cm_id, struct iw_cm_conn_param *p);
int srd_iw_reject(struct iw_cm_id *cm_id, const void *pdata, u8 len);
int srd_iw_create_listen(struct iw_cm_id *cm_id, int backlog);
int srd_iw_destroy_listen(struct iw_cm_id *cm_id);

/* scif_rdma_verbs.c: user contexts, PD, CQ, MR */
int srd_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void srd_dealloc_ucontext(struct ib_ucontext *ibuc);
bool srd_user_take(struct srd_dev *dev, struct srd_ucount *uc,
		   enum srd_uobj kind, int max);
void srd_user_put(struct srd_dev *dev, struct srd_ucount *uc,
		  enum srd_uobj kind);
struct srd_ucount *srd_udata_ucount(struct ib_udata *udata);
int srd_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int srd_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int srd_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		  SRD_CQ_UDATA_T *udata);
int srd_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int srd_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int srd_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
struct ib_mr *srd_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *srd_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			      u64 virt, int access, struct ib_udata *udata);
struct ib_mr *srd_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			   u32 max_num_sg);
int srd_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		  unsigned int *sg_offset);
struct ib_mr *srd_reg_user_mr_dmabuf(struct ib_pd *ibpd, u64 offset,
				     u64 length, u64 virt, int fd, int access,
				     SRD_MR_UDATA_T *udata);
int srd_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);

/* scif_rdma_srq.c: shared receive queues */
int srd_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		   struct ib_udata *udata);
int srd_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		   enum ib_srq_attr_mask mask, struct ib_udata *udata);
int srd_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int srd_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int srd_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr);

/* scif_rdma_qp.c: QP, posting work requests, the iWARP CM's QP callbacks, mmap */
int srd_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
		  struct ib_udata *udata);
int srd_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_udata *udata);
int srd_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		 struct ib_qp_init_attr *init);
int srd_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int srd_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		  const struct ib_send_wr **bad_wr);
int srd_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		  const struct ib_recv_wr **bad_wr);
void srd_iw_add_ref(struct ib_qp *ibqp);
void srd_iw_rem_ref(struct ib_qp *ibqp);
struct ib_qp *srd_iw_get_qp(struct ib_device *ibdev, int qpn);
int srd_qp_mmap_win(struct ib_ucontext *ibuc, struct vm_area_struct *vma,
		    u32 qpn);
int srd_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);

/* scif_rdma_stats.c: "rdma statistic" */
struct rdma_hw_stats *srd_alloc_hw_port_stats(struct ib_device *ibdev,
					      u32 port);
int srd_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		     u32 port, int index);

/* scif_rdma_direct.c: QPs connected without the CM, by modify_qp */
void srd_direct_init(struct srd_qp *qp);
void srd_direct_gid(struct srd_dev *dev, int index, union ib_gid *gid);
int srd_direct_node(struct srd_dev *dev, const struct ib_qp_attr *attr,
		    int mask);
int srd_direct_start(struct srd_qp *qp, u32 dest_qpn, u16 node);
void srd_direct_reset(struct srd_qp *qp);
void srd_direct_stop(struct srd_qp *qp);
bool srd_direct_accept(struct srd_dev *dev, scif_epd_t epd, u16 node,
		       const struct srd_cm_msg *m);

/* scif_rdma_rxpoll.c: frames taken in by a mapped CQ's poller */
int srd_rxp_init(struct srd_qp *qp, const struct ib_qp_init_attr *attr,
		 bool user);
void srd_rxp_fini(struct srd_qp *qp);
void srd_rxp_poll_cq(struct srd_cq *cq);

/* scif_rdma_rx.c: a connected QP's receive thread */
int srd_qp_connected(struct srd_qp *qp, scif_epd_t epd,
		     struct iw_cm_id *cm_id);
bool srd_rx_frame(struct srd_qp *qp);

/* scif_rdma_sq.c: the send queue, in order, several answers awaited */
void srd_sq_work(struct work_struct *work);
void srd_sq_kick(struct srd_qp *qp);
bool srd_sq_await(struct srd_qp *qp, struct srd_swqe *w, u8 type);
bool srd_sq_answer(struct srd_qp *qp, const struct srd_hdr *h, u32 len);
void srd_sq_stop(struct srd_qp *qp);

/* scif_rdma_rma.c: RDMA WRITE and READ by SCIF RMA */
bool srd_rma_op(enum ib_wr_opcode op);
enum ib_wc_status srd_rma_check(struct srd_qp *qp, const struct srd_swqe *w);
bool srd_rma_overtakes(struct srd_qp *qp, const struct srd_swqe *w,
		       bool win_room);
bool srd_rma_direct(struct srd_qp *qp, struct srd_swqe *w, u64 len,
		    enum ib_wc_status *st);
bool srd_rma_direct_known(struct srd_qp *qp, const struct srd_swqe *w);
enum ib_wc_status srd_rma_window(struct srd_qp *qp, struct srd_swqe *w,
				 struct srd_hdr *h, u64 len);
enum ib_wc_status srd_rma_finish(struct srd_qp *qp, struct srd_swqe *w,
				 enum ib_wc_status st);
enum ib_wc_status srd_rma_serve(struct srd_qp *qp, struct srd_mr *mr,
				const struct srd_hdr *h, u32 len, bool *fatal);
void srd_rma_stale_free(struct srd_qp *qp);

/* scif_rdma_map.c: the windows of direct RDMA WRITE and READ */
int srd_map_serve(struct srd_qp *qp, const struct srd_hdr *h, u32 len);
/* scif_rdma_dmabuf.c */
int srd_dbuf_get(struct srd_dev *dev, struct srd_mr *mr, int fd, u64 offset,
		 u64 length, int access);
void srd_dbuf_put(struct srd_mr *mr);
void srd_map_mr_close(struct srd_dev *dev, struct srd_mr *mr, bool dying);
void srd_map_qp_close(struct srd_qp *qp);
struct srd_rkey *srd_rkey_get(struct srd_qp *qp, u32 key, bool ask,
			      enum ib_wc_status *st);
void srd_rkey_forget(struct srd_qp *qp, u32 key);
bool srd_map_answer(struct srd_qp *qp, const struct srd_hdr *h);

/* scif_rdma_ucq.c: mapped CQs, which processes poll without a system call */
struct srd_umap *srd_umap_new(struct srd_ucontext *uctx, size_t bytes,
			      bool ro, u64 *offset);
void *srd_umap_buf(struct srd_umap *m);
void srd_umap_remove(struct srd_umap *m);
int srd_umap_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void srd_umap_mmap_free(struct rdma_user_mmap_entry *entry);
int srd_umap_asked(struct ib_udata *udata, u64 want, size_t resp_len);
int srd_ucq_create(struct srd_cq *cq, struct ib_udata *udata);
void srd_ucq_destroy(struct srd_cq *cq);
bool srd_ucq_store(struct srd_cq *cq, const struct ib_wc *wc);
bool srd_ucq_pending(struct srd_cq *cq);

/* scif_rdma_uqp.c: mapped QPs, whose WRITEs and READs processes do */
int srd_uqp_create(struct srd_qp *qp, struct ib_udata *udata);
void srd_uqp_destroy(struct srd_qp *qp);
void srd_uqp_key(struct srd_qp *qp, u32 idx);
void srd_uqp_state(struct srd_qp *qp);
void srd_uqp_connect(struct srd_qp *qp, scif_epd_t epd);
void srd_uqp_disconnect(struct srd_qp *qp);
int srd_uqp_mmap_win(struct srd_qp *qp, struct vm_area_struct *vma);
bool srd_uqp_mmap_qpn(unsigned long pgoff, u32 *qpn);

/* scif_rdma_wq.c: completions, the receive ring, the QP's states */
bool srd_cq_add(struct srd_cq *cq, const struct ib_wc *wc);
void srd_complete(struct ib_qp *ibqp, struct ib_cq *ibcq, u64 wr_id,
		  enum ib_wc_opcode opcode, enum ib_wc_status status);
enum ib_wc_opcode srd_wc_opcode(enum ib_wr_opcode op);
bool srd_rq_pop(struct srd_qp *qp, struct srd_rqe *rqe);
void srd_rq_complete(struct srd_qp *qp, struct ib_wc *wc);
void srd_flush_rq(struct srd_qp *qp, bool flush);
int srd_set_state(struct srd_qp *qp, enum ib_qp_state state);

/* scif_rdma_wire.c: a QP's connection as a byte stream */
int srd_xfer(struct srd_qp *qp, scif_epd_t epd, void *buf, int len, bool tx,
	     unsigned int timeout_ms);
int srd_mr_xfer(struct srd_qp *qp, struct srd_mr *mr, u64 addr, u64 len,
		bool tx);
int srd_sges_ok(struct srd_qp *qp, const struct ib_sge *sge, u32 n,
		int access, u64 *len);
int srd_sges_xfer(struct srd_qp *qp, const struct ib_sge *sge, u32 n,
		  u64 len, bool tx);
int srd_send_hdr(struct srd_qp *qp, struct srd_hdr *h);
int srd_answer(struct srd_qp *qp, const struct srd_hdr *h, void *data,
	       u32 len);
bool srd_tx_room(struct srd_qp *qp);
void srd_tx_lock(struct srd_qp *qp);
void srd_ans_work(struct work_struct *work);
void srd_ans_stop(struct srd_qp *qp);
void srd_qp_close(struct srd_qp *qp);
void srd_cm_msg_fill(struct srd_cm_msg *m, u8 type, const void *pdata,
		     u8 len);
int srd_cm_msg_xfer(scif_epd_t epd, struct srd_cm_msg *m, bool tx);
scif_epd_t srd_cm_dial(struct srd_dev *dev, u16 node);

/* scif_rdma_mr.c: MRs as the data path sees them */
struct srd_mr *srd_mr_lookup(struct srd_dev *dev, u32 key, struct ib_pd *pd);
void srd_mr_put(struct srd_mr *mr);
void *srd_mr_kva(struct srd_mr *mr, u64 addr, u64 *len);
bool srd_mr_ok(struct srd_mr *mr, u64 addr, u64 len, int access);
void srd_mr_read(struct srd_mr *mr, u64 addr, void *buf, u64 len);
struct page *srd_kva_page(void *kva);
void *srd_mr_pages_vmap(struct srd_mr *mr, u32 n);
void *srd_mr_vmap(struct srd_mr *mr);

/* scif_rdma_stage.c: a QP's bytes read ahead of its frames */
int srd_stage_fill(struct srd_qp *qp, u32 want);
int srd_stage_take(struct srd_qp *qp, void *buf, int len);
bool srd_stage_ready(struct srd_qp *qp);
void srd_stage_start(struct srd_qp *qp);
void srd_stage_stop(struct srd_qp *qp);

#endif /* _SCIF_RDMA_H */
