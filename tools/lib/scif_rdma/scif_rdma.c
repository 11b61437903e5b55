// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libscif_rdma-rdmav34.so: the libibverbs provider for scif_rdma.ko.
 *
 * Every verb is an ordinary uverbs command, but polling a CQ and most
 * WRITEs and READs.  A CQ is created mapped (<rdma/scif_rdma_abi.h>):
 * the kernel writes its completions into a ring this provider maps and
 * polls without a system call (a kernel that does not know the request
 * refuses it, and the CQ is then made and polled the old way, by
 * commands).  A QP is created mapped too: its info page shows the peer's
 * keys whose windows the kernel knows, and while the kernel holds none
 * of the QP's work requests, a WRITE or READ within such a key is done
 * here, by storing into or loading from a mapping of the window, and
 * completed into the CQ's local queue, which polling merges with the
 * ring in order (Documentation/scif/rdma.rst, "WRITEs and READs without
 * a system call").  Arming a CQ and the other posts go through the
 * kernel.  SRQs are basic ones (no XRC); QPs
 * are RC, and may post by ibv_wr_*() (struct ibv_qp_ex) as well; CQs
 * may be polled by ibv_start_poll() and the like (struct ibv_cq_ex).
 *
 * Inline data is the provider's own: the kernel device has none.  A QP
 * created with max_inline_data (at most SCIF_RDMA_MAX_INLINE) gets a
 * buffer of slots registered as an MR of its PD; post_send copies an
 * IBV_SEND_INLINE work request's bytes into the next slot and posts it
 * with one SGE there instead, so its own buffers are free again when
 * ibv_post_send() returns, as the flag promises.  Slots go round in
 * the order the kernel takes work requests, and there are twice as many
 * as the send queue holds: when the kernel has taken the work request
 * of slot n - max_send_wr, the one of slot n - 2 * max_send_wr is
 * complete, and a batch of at most max_send_wr work requests never
 * writes over a slot still in use.
 *
 * libibverbs loads this file for "driver scif_rdma" in
 * /etc/libibverbs.d/scif_rdma.driver and offers it every device it finds;
 * the provider takes the ones whose node description is "scif_rdma", which
 * scif_rdma.ko gives its devices and nothing can change (the device has no
 * modify_device).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/scif_ioctl.h>
#include <rdma/scif_rdma_abi.h>

#include "ibv_provider.h"

#define SCIF_RDMA_ABI_VERSION	1	/* the kernel's uverbs_abi_ver */
#define SCIF_RDMA_NODE_DESC	"scif_rdma"	/* the kernel's node_desc */
#define SCIF_RDMA_MAX_INLINE	512	/* inline bytes a work request may carry */
#define SCIF_RDMA_POST_BATCH	16	/* work requests a post_send command takes */
#define SCIF_RDMA_PAGE		4096	/* SCIF_RDMA_WIN_OFFSET()'s pages */
#define SCIF_RDMA_MR_HASH	256	/* buckets of a context's MR table */
#define SCIF_RDMA_DIRECT_SGES	16	/* SGEs of a WRITE or READ done here */
#define SCIF_RDMA_DRAIN_US	2000	/* waited for the kernel's to finish */

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

struct scif_rdma_device {
	struct verbs_device vdev;
};

/*
 * An MR of the context, as a WR's SGE names it: @iova is where the
 * SGE's addresses start (the registration's hca_va), @addr the
 * process's address of that byte.
 */
struct scif_rdma_mrent {
	struct scif_rdma_mrent *next;
	struct ibv_pd *pd;
	uint32_t lkey;
	int access;
	uint64_t iova;
	uint64_t length;
	uintptr_t addr;
};

/* @mrs: the context's ordinary MRs, by lkey, under @mr_lock. */
struct scif_rdma_context {
	struct verbs_context vctx;
	pthread_rwlock_t mr_lock;
	struct scif_rdma_mrent *mrs[SCIF_RDMA_MR_HASH];
};

/*
 * A window of the peer's key as this process maps it (entry n of a
 * mapped QP's info page, at its count @seq; 0: none): @map is @bytes
 * long, the window then its status page; @failed: that mmap failed, and
 * is not tried again for this count.
 */
struct scif_rdma_win {
	uint8_t *map;
	size_t bytes;
	uint32_t seq;
	int failed;
};

/*
 * A QP, with its inline slots if it was created with max_inline_data:
 * @info is its info page if the kernel mapped it; @direct: WRITEs and
 * READs may be done here (a mapped QP whose send CQ is mapped, and
 * SCIF_RDMA_DIRECT is not 0; a signaled one only if that CQ has no
 * completion channel), through @win;
 * @lock serialises post_send (inline or not: the slot counter follows
 * every work request the kernel takes), @posted counts those work
 * requests, @inl holds @nslots slots of @slot_size bytes, registered as
 * @inl_mr; @wrs is the ibv_wr_*() batch of a QP created with
 * send_ops_flags (else NULL), and @lock is held from ibv_wr_start() to
 * ibv_wr_complete() or ibv_wr_abort().  @vqp is what libibverbs sees:
 * its comp_mask has VERBS_QP_EX when @wrs is there.
 */
struct scif_rdma_qp {
	struct verbs_qp vqp;
	uint32_t max_inline;
	uint32_t max_send_wr;
	pthread_mutex_t lock;
	uint64_t posted;
	char *inl;
	struct verbs_mr *inl_mr;
	uint32_t nslots;
	uint32_t slot_size;
	struct scif_rdma_wrs *wrs;
	const struct scif_rdma_qp_info *info;
	uint32_t max_send_sge;
	int sig_all;
	int direct;
	struct scif_rdma_win win[SCIF_RDMA_QP_KEYS];
};

/*
 * The work requests of an ibv_wr_start() .. ibv_wr_complete() batch of
 * a QP created with send_ops_flags (ibv_qp_ex): at most @max of them,
 * @n so far, each with @max_sge SGEs in @sges and, for inline data,
 * @max_inline bytes in @inl; @err is the first error of the batch
 * (ibv_wr_complete() returns it and posts nothing).
 */
struct scif_rdma_wrs {
	struct ibv_send_wr *wr;
	struct ibv_sge *sges;
	char *inl;
	uint32_t max;
	uint32_t max_sge;
	uint32_t n;
	int err;
};

/*
 * A CQ, with its ring if the kernel mapped it: @lock serialises polling
 * and @local, the completions of the provider's own work requests
 * (@lreserved more of them being done),
 * @head counts the completions taken (the ring's head is its copy, for
 * the kernel), @entries and @ring_bytes are what create_cq answered;
 * @cur is the completion an extended CQ's poll is at; @take_in: an empty
 * ring is followed by one poll_cq command, which has the kernel take in
 * what has arrived for the CQ's QPs (0 with SCIF_RDMA_BUSY_POLL=0 in the
 * environment, or once a kernel that cannot has refused it).
 */
struct scif_rdma_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
	struct ibv_wc cur;
	struct scif_rdma_cq_ring *ring;
	pthread_spinlock_t lock;
	uint32_t head;
	uint32_t entries;
	size_t ring_bytes;
	int take_in;
	struct scif_rdma_lwc *local;
	uint32_t lhead;
	uint32_t lcount;
	uint32_t lreserved;
};

/*
 * A completion of a work request done by the provider (a mapped CQ's
 * local queue, a ring of @entries from @lhead): it comes after the
 * ring's completions before @pos, the kernel's tail when it was done.
 */
struct scif_rdma_lwc {
	uint64_t wr_id;
	uint32_t opcode;
	uint32_t qp_num;
	uint32_t pos;
};

static struct scif_rdma_cq *to_scq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct scif_rdma_cq, cq);
}

static struct scif_rdma_context *to_sctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct scif_rdma_context, vctx.context);
}

static struct scif_rdma_qp *to_sqp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct scif_rdma_qp, vqp.qp);
}

/* Device and context */

static int scif_rdma_query_device(struct ibv_context *ibctx,
				  const struct ibv_query_device_ex_input *input,
				  struct ibv_device_attr_ex *attr,
				  size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(ibctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;

	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32) & 0xffff,
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

static int scif_rdma_query_port(struct ibv_context *ibctx, uint8_t port,
				struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

/* Protection domains and memory regions */

static struct ibv_pd *scif_rdma_alloc_pd(struct ibv_context *ibctx)
{
	struct ib_uverbs_alloc_pd_resp resp = {};
	struct ibv_alloc_pd cmd = {};
	struct ibv_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	ret = ibv_cmd_alloc_pd(ibctx, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	return pd;
}

static int scif_rdma_dealloc_pd(struct ibv_pd *pd)
{
	int ret;

	ret = ibv_cmd_dealloc_pd(pd);
	if (!ret)
		free(pd);
	return ret;
}

/*
 * Remember an ordinary MR, for the SGEs of WRITEs and READs done here
 * (libibverbs fills the MR's pd, addr and length only once reg_mr
 * returned).
 */
static void scif_rdma_mr_add(struct ibv_pd *pd, struct ibv_mr *mr, void *addr,
			     size_t length, uint64_t hca_va, int access)
{
	struct scif_rdma_context *ctx = to_sctx(pd->context);
	struct scif_rdma_mrent *e = calloc(1, sizeof(*e));
	struct scif_rdma_mrent **b;

	if (!e)
		return;	/* its work requests go through the kernel */
	e->pd = pd;
	e->lkey = mr->lkey;
	e->access = access;
	e->iova = hca_va;
	e->length = length;
	e->addr = (uintptr_t)addr;
	b = &ctx->mrs[mr->lkey % SCIF_RDMA_MR_HASH];
	pthread_rwlock_wrlock(&ctx->mr_lock);
	e->next = *b;
	*b = e;
	pthread_rwlock_unlock(&ctx->mr_lock);
}

static void scif_rdma_mr_del(struct ibv_mr *mr)
{
	struct scif_rdma_context *ctx = to_sctx(mr->context);
	struct scif_rdma_mrent **b, *e;

	pthread_rwlock_wrlock(&ctx->mr_lock);
	for (b = &ctx->mrs[mr->lkey % SCIF_RDMA_MR_HASH]; *b; b = &(*b)->next) {
		if ((*b)->lkey == mr->lkey) {
			e = *b;
			*b = e->next;
			free(e);
			break;
		}
	}
	pthread_rwlock_unlock(&ctx->mr_lock);
}

/*
 * The process's address of an SGE's bytes, if @lkey is an MR of @pd
 * that holds them with @access; else NULL.
 */
static void *scif_rdma_mr_find(struct scif_rdma_context *ctx,
			       struct ibv_pd *pd, const struct ibv_sge *sge,
			       int access)
{
	struct scif_rdma_mrent *e;
	void *p = NULL;

	pthread_rwlock_rdlock(&ctx->mr_lock);
	for (e = ctx->mrs[sge->lkey % SCIF_RDMA_MR_HASH]; e; e = e->next) {
		if (e->lkey != sge->lkey)
			continue;
		if (e->pd == pd && (e->access & access) == access &&
		    sge->addr >= e->iova && sge->length <= e->length &&
		    sge->addr - e->iova <= e->length - sge->length)
			p = (void *)(e->addr + (uintptr_t)(sge->addr - e->iova));
		break;
	}
	pthread_rwlock_unlock(&ctx->mr_lock);
	return p;
}

static struct ibv_mr *scif_rdma_reg_mr(struct ibv_pd *pd, void *addr,
				       size_t length, uint64_t hca_va,
				       int access)
{
	struct ib_uverbs_reg_mr_resp resp = {};
	struct ibv_reg_mr cmd = {};
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;

	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	scif_rdma_mr_add(pd, &vmr->ibv_mr, addr, length, hca_va, access);
	return &vmr->ibv_mr;
}

/*
 * An MR over a dma-buf: the kernel takes only a SCIF dma-buf of this
 * node's windows (EOPNOTSUPP otherwise), reached by the peers' direct
 * RDMA WRITEs and READs (Documentation/scif/rdma.rst, "dma-buf MRs").
 */
static struct ibv_mr *scif_rdma_reg_dmabuf_mr(struct ibv_pd *pd,
					      uint64_t offset, size_t length,
					      uint64_t iova, int fd, int access)
{
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	ret = ibv_cmd_reg_dmabuf_mr(pd, offset, length, iova, fd, access, vmr);
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

static int scif_rdma_dereg_mr(struct verbs_mr *vmr)
{
	int ret;

	/* An ordinary MR's entry (none for a dma-buf MR). */
	scif_rdma_mr_del(&vmr->ibv_mr);
	ret = ibv_cmd_dereg_mr(vmr);
	if (!ret)
		free(vmr);
	return ret;
}

/* Completion queues */

/* Whether an empty ring's poll asks the kernel to take frames in. */
static int scif_rdma_busy_poll(void)
{
	const char *v = getenv("SCIF_RDMA_BUSY_POLL");

	return !v || strcmp(v, "0");
}

/* create_cq, asking for a mapped CQ if @mapped: 0 or an errno value. */
static int scif_rdma_cmd_create_cq(struct ibv_context *ibctx, int cqe,
				   struct ibv_comp_channel *channel,
				   int comp_vector, struct scif_rdma_cq *scq,
				   int mapped)
{
	struct {
		struct ibv_create_cq ibv;
		struct scif_rdma_create_cq drv;
	} cmd = { .drv.flags = SCIF_RDMA_CQ_MAPPED };
	struct {
		struct ib_uverbs_create_cq_resp ibv;
		struct scif_rdma_create_cq_resp drv;
	} resp = {};
	void *ring;
	int ret;

	ret = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &scq->cq,
				&cmd.ibv, mapped ? sizeof(cmd) : sizeof(cmd.ibv),
				&resp.ibv,
				mapped ? sizeof(resp) : sizeof(resp.ibv));
	if (ret || !mapped)
		return ret;
	ring = MAP_FAILED;
	if (resp.drv.entries)
		ring = mmap(NULL, resp.drv.ring_bytes, PROT_READ | PROT_WRITE,
			    MAP_SHARED, ibctx->cmd_fd, resp.drv.mmap_offset);
	if (ring == MAP_FAILED) {
		ret = resp.drv.entries ? errno : EPROTO;
		ibv_cmd_destroy_cq(&scq->cq);
		return ret;
	}
	scq->local = calloc(resp.drv.entries, sizeof(*scq->local));
	if (!scq->local) {
		munmap(ring, resp.drv.ring_bytes);
		ibv_cmd_destroy_cq(&scq->cq);
		return ENOMEM;
	}
	scq->ring = ring;
	scq->entries = resp.drv.entries;
	scq->ring_bytes = resp.drv.ring_bytes;
	scq->take_in = scif_rdma_busy_poll();
	return 0;
}

static struct ibv_cq *scif_rdma_create_cq(struct ibv_context *ibctx, int cqe,
					  struct ibv_comp_channel *channel,
					  int comp_vector)
{
	struct scif_rdma_cq *scq;
	int ret;

	scq = calloc(1, sizeof(*scq));
	if (!scq)
		return NULL;
	pthread_spin_init(&scq->lock, PTHREAD_PROCESS_PRIVATE);
	ret = scif_rdma_cmd_create_cq(ibctx, cqe, channel, comp_vector, scq, 1);
	/* A kernel before mapped CQs refuses the request: the old way. */
	if (ret == EINVAL)
		ret = scif_rdma_cmd_create_cq(ibctx, cqe, channel, comp_vector,
					      scq, 0);
	if (ret) {
		pthread_spin_destroy(&scq->lock);
		free(scq);
		errno = ret;
		return NULL;
	}
	return &scq->cq;
}

static int scif_rdma_destroy_cq(struct ibv_cq *cq)
{
	struct scif_rdma_cq *scq = to_scq(cq);
	int ret;

	ret = ibv_cmd_destroy_cq(cq);
	if (ret)
		return ret;
	if (scq->ring)
		munmap(scq->ring, scq->ring_bytes);
	free(scq->local);
	pthread_spin_destroy(&scq->lock);
	free(scq);
	return 0;
}

static void scif_rdma_wc(struct ibv_wc *wc, const struct scif_rdma_cqe *e)
{
	wc->wr_id = e->wr_id;
	wc->status = e->status;
	wc->opcode = e->opcode;
	wc->vendor_err = e->vendor_err;
	wc->byte_len = e->byte_len;
	wc->imm_data = e->imm_data;
	wc->qp_num = e->qp_num;
	wc->src_qp = e->src_qp;
	wc->wc_flags = e->wc_flags;
	wc->pkey_index = e->pkey_index;
	wc->slid = e->slid;
	wc->sl = e->sl;
	wc->dlid_path_bits = e->dlid_path_bits;
}

/*
 * A mapped CQ: the completions between our head and the kernel's tail,
 * read after the tail (acquire), given back by the head (release).  A
 * tail more than the ring ahead can only be this process's own doing.
 */
static int scif_rdma_poll_ring(struct scif_rdma_cq *scq, int num_entries,
			       struct ibv_wc *wc)
{
	struct scif_rdma_cq_ring *ring = scq->ring;
	struct scif_rdma_lwc *l;
	uint32_t tail, head;
	int n = 0;

	pthread_spin_lock(&scq->lock);
	head = scq->head;
	tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
	if (tail - head > scq->entries) {
		pthread_spin_unlock(&scq->lock);
		return -EIO;
	}
	for (; n < num_entries; n++) {
		l = scq->lcount ? &scq->local[scq->lhead] : NULL;
		/* The ring's completions before it, then a local one. */
		if (l && (head == tail || (int32_t)(l->pos - head) <= 0)) {
			memset(&wc[n], 0, sizeof(wc[n]));
			wc[n].wr_id = l->wr_id;
			wc[n].status = IBV_WC_SUCCESS;
			wc[n].opcode = l->opcode;
			wc[n].qp_num = l->qp_num;
			scq->lhead = (scq->lhead + 1) % scq->entries;
			scq->lcount--;
			continue;
		}
		if (head == tail)
			break;
		scif_rdma_wc(&wc[n], &ring->cqe[head % scq->entries]);
		head++;
	}
	if (head != scq->head) {
		scq->head = head;
		__atomic_store_n(&ring->head, head, __ATOMIC_RELEASE);
	}
	pthread_spin_unlock(&scq->lock);
	return n;
}

/*
 * An empty ring: one poll_cq command has the kernel take in what has come
 * for the CQ's QPs (it returns no completion: they go to the ring), and
 * the ring is read again.  A kernel that refuses it is not asked again.
 */
static int scif_rdma_poll_cq(struct ibv_cq *cq, int num_entries,
			     struct ibv_wc *wc)
{
	struct scif_rdma_cq *scq = to_scq(cq);
	struct ibv_wc none;
	int n;

	if (!scq->ring)
		return ibv_cmd_poll_cq(cq, num_entries, wc);
	n = scif_rdma_poll_ring(scq, num_entries, wc);
	if (n || num_entries <= 0 || !__atomic_load_n(&scq->take_in,
						      __ATOMIC_RELAXED))
		return n;
	if (ibv_cmd_poll_cq(cq, 1, &none))
		__atomic_store_n(&scq->take_in, 0, __ATOMIC_RELAXED);
	return scif_rdma_poll_ring(scq, num_entries, wc);
}

/* Room in @scq's local queue for one more completion: 1, or 0 (none). */
static int scif_rdma_cq_reserve(struct scif_rdma_cq *scq)
{
	int ok;

	pthread_spin_lock(&scq->lock);
	ok = scq->lcount + scq->lreserved < scq->entries;
	if (ok)
		scq->lreserved++;
	pthread_spin_unlock(&scq->lock);
	return ok;
}

/*
 * The end of a reservation: if @done, the completion of a work request
 * done here, after every completion the ring holds now.
 */
static void scif_rdma_cq_commit(struct scif_rdma_cq *scq, uint64_t wr_id,
				uint32_t opcode, uint32_t qp_num, int done)
{
	struct scif_rdma_lwc *l;

	pthread_spin_lock(&scq->lock);
	scq->lreserved--;
	if (done) {
		l = &scq->local[(scq->lhead + scq->lcount) % scq->entries];
		l->wr_id = wr_id;
		l->opcode = opcode;
		l->qp_num = qp_num;
		l->pos = __atomic_load_n(&scq->ring->tail, __ATOMIC_ACQUIRE);
		scq->lcount++;
	}
	pthread_spin_unlock(&scq->lock);
}

static int scif_rdma_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	return ibv_cmd_req_notify_cq(cq, solicited_only);
}

/*
 * The kernel device cannot resize a CQ.  ibv_resize_cq() hands this
 * back as it is: a positive errno value, as from the ibv_cmd_*().
 */
static int scif_rdma_resize_cq(struct ibv_cq *cq, int cqe)
{
	(void)cq;
	(void)cqe;
	return EOPNOTSUPP;
}

/*
 * Extended CQs (ibv_create_cq_ex): the same CQ, polled one completion at
 * a time by ibv_start_poll() / ibv_next_poll(), each read into @cur.
 */
#define SCIF_RDMA_WC_FLAGS	(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | \
				 IBV_WC_EX_WITH_QP_NUM | \
				 IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID | \
				 IBV_WC_EX_WITH_SL | \
				 IBV_WC_EX_WITH_DLID_PATH_BITS)

static struct scif_rdma_cq *cqx_to_scq(struct ibv_cq_ex *cqx)
{
	return to_scq(ibv_cq_ex_to_cq(cqx));
}

/* The next completion into @cur: 0, ENOENT (none) or an errno value. */
static int scif_rdma_cqx_take(struct ibv_cq_ex *cqx)
{
	struct scif_rdma_cq *scq = cqx_to_scq(cqx);
	int n = scif_rdma_poll_cq(&scq->cq, 1, &scq->cur);

	if (n <= 0)
		return n ? -n : ENOENT;
	cqx->wr_id = scq->cur.wr_id;
	cqx->status = scq->cur.status;
	return 0;
}

static int scif_rdma_start_poll(struct ibv_cq_ex *cqx,
				struct ibv_poll_cq_attr *attr)
{
	if (attr->comp_mask)
		return EINVAL;
	return scif_rdma_cqx_take(cqx);
}

static int scif_rdma_next_poll(struct ibv_cq_ex *cqx)
{
	return scif_rdma_cqx_take(cqx);
}

static void scif_rdma_end_poll(struct ibv_cq_ex *cqx)
{
	(void)cqx;	/* each completion was taken whole */
}

static enum ibv_wc_opcode scif_rdma_read_opcode(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur.opcode;
}

static uint32_t scif_rdma_read_vendor_err(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur.vendor_err;
}

static uint32_t scif_rdma_read_byte_len(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur.byte_len;
}

static __be32 scif_rdma_read_imm_data(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur.imm_data;
}

static uint32_t scif_rdma_read_qp_num(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur.qp_num;
}

static uint32_t scif_rdma_read_src_qp(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur.src_qp;
}

static unsigned int scif_rdma_read_wc_flags(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur.wc_flags;
}

static uint32_t scif_rdma_read_slid(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur.slid;
}

static uint8_t scif_rdma_read_sl(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur.sl;
}

static uint8_t scif_rdma_read_dlid_path_bits(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur.dlid_path_bits;
}

/*
 * An extended CQ: the completion fields of SCIF_RDMA_WC_FLAGS, and the
 * single-threaded hint (every CQ is locked anyway); time stamps, flow
 * tags, parent domains and the like are not supported.
 */
static struct ibv_cq_ex *scif_rdma_create_cq_ex(struct ibv_context *ibctx,
						struct ibv_cq_init_attr_ex *a)
{
	struct ibv_cq_ex *cqx;
	struct ibv_cq *cq;

	if ((a->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS) ||
	    ((a->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (a->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED)) ||
	    (a->wc_flags & ~(uint64_t)SCIF_RDMA_WC_FLAGS)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	cq = scif_rdma_create_cq(ibctx, a->cqe, a->channel, a->comp_vector);
	if (!cq)
		return NULL;
	cqx = &to_scq(cq)->cq_ex;
	cqx->start_poll = scif_rdma_start_poll;
	cqx->next_poll = scif_rdma_next_poll;
	cqx->end_poll = scif_rdma_end_poll;
	cqx->read_opcode = scif_rdma_read_opcode;
	cqx->read_vendor_err = scif_rdma_read_vendor_err;
	cqx->read_byte_len = scif_rdma_read_byte_len;
	cqx->read_imm_data = scif_rdma_read_imm_data;
	cqx->read_qp_num = scif_rdma_read_qp_num;
	cqx->read_src_qp = scif_rdma_read_src_qp;
	cqx->read_wc_flags = scif_rdma_read_wc_flags;
	cqx->read_slid = scif_rdma_read_slid;
	cqx->read_sl = scif_rdma_read_sl;
	cqx->read_dlid_path_bits = scif_rdma_read_dlid_path_bits;
	return cqx;
}

/* Queue pairs */

/*
 * The inline slots of a QP the kernel made with @qp->max_send_wr work
 * requests: two for each, registered as an MR.  Return: 0 or an errno
 * value.
 */
static int scif_rdma_inline_alloc(struct scif_rdma_qp *qp, struct ibv_pd *pd)
{
	size_t len;
	long page = sysconf(_SC_PAGESIZE);
	struct ibv_mr *mr;

	qp->slot_size = (qp->max_inline + 63) & ~63U;
	qp->nslots = 2 * qp->max_send_wr;
	len = (size_t)qp->slot_size * qp->nslots;
	len = (len + page - 1) & ~(size_t)(page - 1);
	if (posix_memalign((void **)&qp->inl, page, len))
		return ENOMEM;
	/*
	 * Pinned for writing, so that the pages pinned are the ones the
	 * process writes (a read-only pin of untouched memory could pin
	 * the zero page); only this provider names the key.
	 */
	memset(qp->inl, 0, len);
	mr = scif_rdma_reg_mr(pd, qp->inl, len, (uintptr_t)qp->inl,
			      IBV_ACCESS_LOCAL_WRITE);
	if (!mr) {
		free(qp->inl);
		qp->inl = NULL;
		return errno;
	}
	qp->inl_mr = container_of(mr, struct verbs_mr, ibv_mr);
	return 0;
}

static void scif_rdma_wrs_free(struct scif_rdma_wrs *wrs)
{
	if (!wrs)
		return;
	free(wrs->wr);
	free(wrs->sges);
	free(wrs->inl);
	free(wrs);
}

/* A batch's room for @qp: a send queue's worth; NULL with errno set. */
static struct scif_rdma_wrs *scif_rdma_wrs_alloc(struct scif_rdma_qp *qp,
						 uint32_t max_sge)
{
	struct scif_rdma_wrs *wrs = calloc(1, sizeof(*wrs));

	if (!wrs)
		return NULL;
	wrs->max = qp->max_send_wr;
	wrs->max_sge = max_sge ? max_sge : 1;
	wrs->wr = calloc(wrs->max, sizeof(*wrs->wr));
	wrs->sges = calloc((size_t)wrs->max * wrs->max_sge, sizeof(*wrs->sges));
	if (qp->max_inline)
		wrs->inl = malloc((size_t)wrs->max * qp->max_inline);
	if (!wrs->wr || !wrs->sges || (qp->max_inline && !wrs->inl)) {
		scif_rdma_wrs_free(wrs);
		errno = ENOMEM;
		return NULL;
	}
	return wrs;
}

/*
 * create_qp, asking for a mapped QP if @mapped (its info page mapped
 * into @qp->info): 0 or an errno value.
 */
static int scif_rdma_cmd_create_qp(struct ibv_pd *pd, struct scif_rdma_qp *qp,
				   struct ibv_qp_init_attr *attr, int mapped)
{
	struct {
		struct ibv_create_qp ibv;
		struct scif_rdma_create_qp drv;
	} cmd = { .drv.flags = SCIF_RDMA_QP_MAPPED };
	struct {
		struct ib_uverbs_create_qp_resp ibv;
		struct scif_rdma_create_qp_resp drv;
	} resp = {};
	void *info;
	int ret;

	ret = ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, &cmd.ibv,
				mapped ? sizeof(cmd) : sizeof(cmd.ibv),
				&resp.ibv,
				mapped ? sizeof(resp) : sizeof(resp.ibv));
	if (ret || !mapped)
		return ret;
	info = MAP_FAILED;
	if (resp.drv.info_bytes == SCIF_RDMA_PAGE)
		info = mmap(NULL, resp.drv.info_bytes, PROT_READ, MAP_SHARED,
			    pd->context->cmd_fd, resp.drv.info_offset);
	if (info == MAP_FAILED) {
		ret = resp.drv.info_bytes ? errno : EPROTO;
		ibv_cmd_destroy_qp(&qp->vqp.qp);
		return ret;
	}
	qp->info = info;
	return 0;
}

/* Whether the provider may do @qp's WRITEs and READs itself. */
static int scif_rdma_direct_ok(struct scif_rdma_qp *qp,
			       const struct ibv_qp_init_attr *attr)
{
	const char *v = getenv("SCIF_RDMA_DIRECT");

	return qp->info && attr->send_cq && to_scq(attr->send_cq)->ring &&
	       (!v || strcmp(v, "0"));
}

/* An RC QP of @pd; NULL with errno set. */
static struct scif_rdma_qp *scif_rdma_qp_new(struct ibv_pd *pd,
					     struct ibv_qp_init_attr *attr)
{
	struct scif_rdma_qp *qp;
	uint32_t max_inline;
	int ret;

	if (attr->qp_type != IBV_QPT_RC) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	max_inline = attr->cap.max_inline_data;
	if (max_inline > SCIF_RDMA_MAX_INLINE) {
		errno = EINVAL;
		return NULL;
	}

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	pthread_mutex_init(&qp->lock, NULL);

	attr->cap.max_inline_data = 0;	/* the kernel's: none */
	ret = scif_rdma_cmd_create_qp(pd, qp, attr, 1);
	/* A kernel before mapped QPs refuses the request: the old way. */
	if (ret == EINVAL)
		ret = scif_rdma_cmd_create_qp(pd, qp, attr, 0);
	attr->cap.max_inline_data = max_inline;
	if (ret)
		goto free_qp;
	qp->max_inline = max_inline;
	qp->max_send_wr = attr->cap.max_send_wr;
	qp->max_send_sge = attr->cap.max_send_sge;
	qp->sig_all = attr->sq_sig_all;
	qp->direct = scif_rdma_direct_ok(qp, attr);
	if (max_inline) {
		ret = scif_rdma_inline_alloc(qp, pd);
		if (ret)
			goto destroy;
	}
	return qp;
destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
	if (qp->info)
		munmap((void *)qp->info, SCIF_RDMA_PAGE);
free_qp:
	pthread_mutex_destroy(&qp->lock);
	free(qp);
	errno = ret;
	return NULL;
}

static struct ibv_qp *scif_rdma_create_qp(struct ibv_pd *pd,
					  struct ibv_qp_init_attr *attr)
{
	struct scif_rdma_qp *qp = scif_rdma_qp_new(pd, attr);

	return qp ? &qp->vqp.qp : NULL;
}

static int scif_rdma_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			      int attr_mask,
			      struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};
	int ret;

	ret = ibv_cmd_query_qp(qp, attr, attr_mask, init_attr, &cmd,
			       sizeof(cmd));
	if (!ret) {
		attr->cap.max_inline_data = to_sqp(qp)->max_inline;
		init_attr->cap.max_inline_data = to_sqp(qp)->max_inline;
	}
	return ret;
}

static int scif_rdma_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			       int attr_mask)
{
	struct ibv_modify_qp cmd = {};

	return ibv_cmd_modify_qp(qp, attr, attr_mask, &cmd, sizeof(cmd));
}

static int scif_rdma_destroy_qp(struct ibv_qp *ibqp)
{
	struct scif_rdma_qp *qp = to_sqp(ibqp);
	int ret, i;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;
	for (i = 0; i < SCIF_RDMA_QP_KEYS; i++)
		if (qp->win[i].map)
			munmap(qp->win[i].map, qp->win[i].bytes);
	if (qp->info)
		munmap((void *)qp->info, SCIF_RDMA_PAGE);
	if (qp->inl_mr && !scif_rdma_dereg_mr(qp->inl_mr))
		free(qp->inl);	/* else pinned still: left to the process's end */
	scif_rdma_wrs_free(qp->wrs);
	pthread_mutex_destroy(&qp->lock);
	free(qp);
	return 0;
}

/*
 * An inline work request's bytes into slot @seq: @sge then names them
 * there.  Return: 0, or EINVAL (more than the QP's max_inline_data).
 */
static int scif_rdma_inline_copy(struct scif_rdma_qp *qp,
				 const struct ibv_send_wr *wr, uint64_t seq,
				 struct ibv_sge *sge)
{
	char *slot = qp->inl + (seq % qp->nslots) * qp->slot_size;
	uint32_t len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		if (wr->sg_list[i].length > qp->max_inline - len)
			return EINVAL;
		memcpy(slot + len, (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		len += wr->sg_list[i].length;
	}
	sge->addr = (uintptr_t)slot;
	sge->length = len;
	sge->lkey = qp->inl_mr->ibv_mr.lkey;
	return 0;
}

/* May @wr carry its bytes inline (an opcode that sends them)? */
static bool scif_rdma_inline_op(const struct ibv_send_wr *wr)
{
	return (wr->send_flags & IBV_SEND_INLINE) &&
	       wr->opcode != IBV_WR_RDMA_READ;
}

/*
 * Post @wr's chain in batches, the inline ones from their slots.  The
 * caller holds @qp->lock.  Return: 0 or an errno value, *@bad_wr then
 * the first work request not taken.
 */
static int scif_rdma_post_inline(struct scif_rdma_qp *qp,
				 struct ibv_send_wr *wr,
				 struct ibv_send_wr **bad_wr)
{
	struct ibv_send_wr shadow[SCIF_RDMA_POST_BATCH], *orig[SCIF_RDMA_POST_BATCH];
	struct ibv_sge sge[SCIF_RDMA_POST_BATCH];
	uint32_t n, batch = SCIF_RDMA_POST_BATCH;
	struct ibv_send_wr *bad = shadow;
	int ret = 0, cret;

	if (batch > qp->max_send_wr)
		batch = qp->max_send_wr;
	while (wr && !ret) {
		for (n = 0; wr && n < batch; wr = wr->next, n++) {
			if (scif_rdma_inline_op(wr)) {
				ret = scif_rdma_inline_copy(qp, wr,
							    qp->posted + n,
							    &sge[n]);
				if (ret)
					break;
			}
			orig[n] = wr;
			shadow[n] = *wr;
			shadow[n].next = NULL;
			if (n)
				shadow[n - 1].next = &shadow[n];
			if (scif_rdma_inline_op(wr)) {
				shadow[n].sg_list = &sge[n];
				shadow[n].num_sge = sge[n].length ? 1 : 0;
				shadow[n].send_flags &= ~IBV_SEND_INLINE;
			}
		}
		if (ret)
			*bad_wr = wr;	/* the inline one too long */
		if (!n)
			break;
		cret = ibv_cmd_post_send(&qp->vqp.qp, shadow, &bad);
		if (cret) {
			qp->posted += bad - shadow;
			*bad_wr = orig[bad - shadow];
			return cret;
		}
		qp->posted += n;
	}
	return ret;
}

/* WRITEs and READs done here */

/*
 * Entry @idx of @qp's info page if it holds @rkey, read whole into @k:
 * its count, or 0 (not there, or being rewritten).
 */
static uint32_t scif_rdma_key_read(struct scif_rdma_qp *qp, uint32_t rkey,
				   struct scif_rdma_qp_key *k, int *idx)
{
	const struct scif_rdma_qp_key *e;
	uint32_t seq;
	int i;

	for (i = 0; i < SCIF_RDMA_QP_KEYS; i++) {
		e = &qp->info->keys[i];
		if (!rkey || __atomic_load_n(&e->rkey, __ATOMIC_RELAXED) != rkey)
			continue;
		seq = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
		if (seq & 1)
			return 0;
		k->rkey = __atomic_load_n(&e->rkey, __ATOMIC_RELAXED);
		k->access = __atomic_load_n(&e->access, __ATOMIC_RELAXED);
		k->iova = __atomic_load_n(&e->iova, __ATOMIC_RELAXED);
		k->length = __atomic_load_n(&e->length, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&e->seq, __ATOMIC_RELAXED) != seq ||
		    k->rkey != rkey)
			return 0;
		*idx = i;
		return seq;
	}
	return 0;
}

/* The mapping of the window of entry @idx at count @seq, or NULL. */
static uint8_t *scif_rdma_win_map(struct scif_rdma_qp *qp, int idx,
				  uint32_t seq, const struct scif_rdma_qp_key *k)
{
	struct scif_rdma_win *w = &qp->win[idx];
	int prot = PROT_READ;
	void *p;

	if (w->seq == seq)
		return w->failed ? NULL : w->map;
	if (w->map)
		munmap(w->map, w->bytes);
	w->map = NULL;
	w->seq = seq;
	w->failed = 1;
	if (k->length > SIZE_MAX - SCIF_RDMA_PAGE)
		return NULL;
	w->bytes = k->length + SCIF_RDMA_PAGE;
	if (k->access & IBV_ACCESS_REMOTE_WRITE)
		prot |= PROT_WRITE;
	p = mmap(NULL, w->bytes, prot, MAP_SHARED, qp->vqp.qp.context->cmd_fd,
		 SCIF_RDMA_WIN_OFFSET(qp->vqp.qp.qp_num, idx, seq));
	if (p == MAP_FAILED)
		return NULL;
	w->map = p;
	w->failed = 0;
	return p;
}

/*
 * The process's addresses of @wr's local bytes into @va, their total in
 * @len: 0, or -1 if an SGE is not in an MR of the QP's PD that a READ
 * (@write 0) may write (the kernel then gives the exact error).  A
 * WRITE's inline data needs no MR.
 */
static int scif_rdma_sges(struct scif_rdma_qp *qp, const struct ibv_send_wr *wr,
			  int write, void **va, uint64_t *len)
{
	struct scif_rdma_context *ctx = to_sctx(qp->vqp.qp.context);
	int inl = write && (wr->send_flags & IBV_SEND_INLINE);
	int access = write ? 0 : IBV_ACCESS_LOCAL_WRITE;
	int i;

	*len = 0;
	for (i = 0; i < wr->num_sge; i++) {
		if (wr->sg_list[i].length > (1U << 31) - *len)
			return -1;
		*len += wr->sg_list[i].length;
		va[i] = inl ? (void *)(uintptr_t)wr->sg_list[i].addr :
			      scif_rdma_mr_find(ctx, qp->vqp.qp.pd,
						&wr->sg_list[i], access);
		if (!va[i] && wr->sg_list[i].length)
			return -1;
	}
	if (inl && *len > qp->max_inline)
		return -1;
	return 0;
}

/*
 * Wait a little (SCIF_RDMA_DRAIN_US at most, giving the CPU away) for
 * the kernel to finish the work requests of @qp it holds, so that the
 * next may follow them in order: 1 once it holds none and the QP is in
 * RTS, else 0.  A stream of WRITEs or READs whose first ones the kernel
 * did goes on here without it.
 */
static int scif_rdma_drained(struct scif_rdma_qp *qp)
{
	struct timespec t0, t;
	long us;
	int i;

	for (i = 0; __atomic_load_n(&qp->info->sq_pending, __ATOMIC_ACQUIRE);
	     i++) {
		if (!(i % 64)) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (!i)
				t0 = t;
			us = (t.tv_sec - t0.tv_sec) * 1000000L +
			     (t.tv_nsec - t0.tv_nsec) / 1000;
			if (us > SCIF_RDMA_DRAIN_US)
				return 0;
		}
		sched_yield();
	}
	return __atomic_load_n(&qp->info->state, __ATOMIC_ACQUIRE) ==
	       IBV_QPS_RTS;
}

/*
 * Do @wr here if it is a WRITE or READ within a key whose window the
 * kernel shows (with remote read: a mapping can always be read), the
 * kernel holds none of the QP's work requests (once those it holds are
 * done) and the CQ has room: 1, done (and completed if signaled); else
 * 0, and nothing is completed (the kernel does it).  Under @qp->lock.
 */
static int scif_rdma_direct_wr(struct scif_rdma_qp *qp,
			       const struct ibv_send_wr *wr)
{
	int write = wr->opcode == IBV_WR_RDMA_WRITE, idx = 0, done = 0, sig, i;
	struct scif_rdma_cq *scq = to_scq(qp->vqp.qp.send_cq);
	const struct scif_mmap_status *st;
	void *va[SCIF_RDMA_DIRECT_SGES];
	uint64_t len, off, raddr = wr->wr.rdma.remote_addr;
	struct scif_rdma_qp_key k;
	uint32_t seq;
	uint8_t *map;

	if (!qp->direct || (!write && wr->opcode != IBV_WR_RDMA_READ) ||
	    wr->num_sge < 0 || wr->num_sge > SCIF_RDMA_DIRECT_SGES ||
	    (uint32_t)wr->num_sge > qp->max_send_sge ||
	    __atomic_load_n(&qp->info->state, __ATOMIC_ACQUIRE) != IBV_QPS_RTS)
		return 0;
	if (scif_rdma_sges(qp, wr, write, va, &len))
		return 0;
	seq = scif_rdma_key_read(qp, wr->wr.rdma.rkey, &k, &idx);
	/* A key without remote read is not mapped: its bytes are not ours. */
	if (!seq || !(k.access & IBV_ACCESS_REMOTE_READ) ||
	    (write && !(k.access & IBV_ACCESS_REMOTE_WRITE)) ||
	    raddr < k.iova || len > k.length || raddr - k.iova > k.length - len)
		return 0;
	sig = qp->sig_all || (wr->send_flags & IBV_SEND_SIGNALED);
	/*
	 * A completion of the local queue raises no event: one that a
	 * completion channel may wait for is the kernel's to make.
	 */
	if (sig && scq->cq.channel)
		return 0;
	map = scif_rdma_win_map(qp, idx, seq, &k);
	if (!map || !scif_rdma_drained(qp) ||
	    (sig && !scif_rdma_cq_reserve(scq)))
		return 0;
	off = raddr - k.iova;
	for (i = 0; i < wr->num_sge; off += wr->sg_list[i++].length) {
		if (write)
			memcpy(map + off, va[i], wr->sg_list[i].length);
		else
			memcpy(va[i], map + off, wr->sg_list[i].length);
	}
	/*
	 * The stores are out before the status and the entry are read: if
	 * they still say live, the bytes reached the peer's MR before the
	 * kernel let go of it.  Else the kernel does the work request.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	st = (const struct scif_mmap_status *)(map + k.length);
	done = !__atomic_load_n(&st->revoked, __ATOMIC_RELAXED) &&
	       __atomic_load_n(&qp->info->keys[idx].seq, __ATOMIC_RELAXED) == seq;
	if (sig)
		scif_rdma_cq_commit(scq, wr->wr_id, write ? IBV_WC_RDMA_WRITE :
				    IBV_WC_RDMA_READ, qp->vqp.qp.qp_num, done);
	return done;
}

/* Post @wr's chain, under @qp->lock: what can be done here first. */
static int scif_rdma_post(struct scif_rdma_qp *qp, struct ibv_send_wr *wr,
			  struct ibv_send_wr **bad_wr)
{
	while (wr && scif_rdma_direct_wr(qp, wr))
		wr = wr->next;
	if (!wr)
		return 0;
	/* The kernel refuses inline data (EINVAL): the slots carry it. */
	if (qp->inl)
		return scif_rdma_post_inline(qp, wr, bad_wr);
	return ibv_cmd_post_send(&qp->vqp.qp, wr, bad_wr);
}

static int scif_rdma_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			       struct ibv_send_wr **bad_wr)
{
	struct scif_rdma_qp *qp = to_sqp(ibqp);
	int ret;

	if (!qp->inl && !qp->direct)
		return ibv_cmd_post_send(ibqp, wr, bad_wr);
	pthread_mutex_lock(&qp->lock);
	ret = scif_rdma_post(qp, wr, bad_wr);
	pthread_mutex_unlock(&qp->lock);
	return ret;
}

/*
 * Posting by ibv_wr_*() (struct ibv_qp_ex), for a QP created with
 * send_ops_flags: the calls between ibv_wr_start() and ibv_wr_complete()
 * build a chain of work requests, which ibv_wr_complete() posts as
 * ibv_post_send() would, under the QP's lock held since ibv_wr_start().
 * The bytes of ibv_wr_set_inline_data() are copied when it is called.
 */
static struct scif_rdma_qp *qpx_to_sqp(struct ibv_qp_ex *qpx)
{
	return to_sqp(&qpx->qp_base);
}

static void scif_rdma_wr_start(struct ibv_qp_ex *qpx)
{
	struct scif_rdma_qp *qp = qpx_to_sqp(qpx);

	pthread_mutex_lock(&qp->lock);
	qp->wrs->n = 0;
	qp->wrs->err = 0;
}

/* A new work request of the batch, or NULL (the batch's error set). */
static struct ibv_send_wr *scif_rdma_wr_new(struct ibv_qp_ex *qpx,
					    enum ibv_wr_opcode opcode)
{
	struct scif_rdma_wrs *wrs = qpx_to_sqp(qpx)->wrs;
	struct ibv_send_wr *wr;

	if (wrs->n == wrs->max) {
		wrs->err = wrs->err ? wrs->err : ENOMEM;
		return NULL;
	}
	wr = &wrs->wr[wrs->n];
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = qpx->wr_id;
	wr->send_flags = qpx->wr_flags;
	wr->opcode = opcode;
	wr->sg_list = &wrs->sges[(size_t)wrs->n * wrs->max_sge];
	wrs->n++;
	return wr;
}

/* The work request being built, or NULL (the batch's error set). */
static struct ibv_send_wr *scif_rdma_wr_cur(struct ibv_qp_ex *qpx)
{
	struct scif_rdma_wrs *wrs = qpx_to_sqp(qpx)->wrs;

	if (!wrs->n) {
		wrs->err = wrs->err ? wrs->err : EINVAL;
		return NULL;
	}
	return &wrs->wr[wrs->n - 1];
}

static void scif_rdma_wr_send(struct ibv_qp_ex *qpx)
{
	scif_rdma_wr_new(qpx, IBV_WR_SEND);
}

static void scif_rdma_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct ibv_send_wr *wr = scif_rdma_wr_new(qpx, IBV_WR_SEND_WITH_IMM);

	if (wr)
		wr->imm_data = imm;
}

static void scif_rdma_wr_rdma(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op,
			      uint32_t rkey, uint64_t addr, __be32 imm)
{
	struct ibv_send_wr *wr = scif_rdma_wr_new(qpx, op);

	if (!wr)
		return;
	wr->wr.rdma.rkey = rkey;
	wr->wr.rdma.remote_addr = addr;
	wr->imm_data = imm;
}

static void scif_rdma_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
				    uint64_t addr)
{
	scif_rdma_wr_rdma(qpx, IBV_WR_RDMA_WRITE, rkey, addr, 0);
}

static void scif_rdma_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
					uint64_t addr, __be32 imm)
{
	scif_rdma_wr_rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr, imm);
}

static void scif_rdma_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
				   uint64_t addr)
{
	scif_rdma_wr_rdma(qpx, IBV_WR_RDMA_READ, rkey, addr, 0);
}

static void scif_rdma_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num,
				      const struct ibv_sge *sge)
{
	struct scif_rdma_wrs *wrs = qpx_to_sqp(qpx)->wrs;
	struct ibv_send_wr *wr = scif_rdma_wr_cur(qpx);

	if (!wr)
		return;
	if (num > wrs->max_sge) {
		wrs->err = wrs->err ? wrs->err : EINVAL;
		return;
	}
	memcpy(wr->sg_list, sge, num * sizeof(*sge));
	wr->num_sge = num;
}

static void scif_rdma_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey,
				 uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	scif_rdma_wr_set_sge_list(qpx, 1, &sge);
}

static void scif_rdma_wr_set_inline_data_list(struct ibv_qp_ex *qpx,
					      size_t num,
					      const struct ibv_data_buf *buf)
{
	struct scif_rdma_qp *qp = qpx_to_sqp(qpx);
	struct scif_rdma_wrs *wrs = qp->wrs;
	struct ibv_send_wr *wr = scif_rdma_wr_cur(qpx);
	size_t i, len = 0;
	char *dst;

	if (!wr)
		return;
	dst = wrs->inl + (size_t)(wr - wrs->wr) * qp->max_inline;
	for (i = 0; i < num; i++) {
		if (buf[i].length > qp->max_inline - len) {
			wrs->err = wrs->err ? wrs->err : EINVAL;
			return;
		}
		memcpy(dst + len, buf[i].addr, buf[i].length);
		len += buf[i].length;
	}
	wr->num_sge = 0;
	if (!len)
		return;
	wr->sg_list[0].addr = (uintptr_t)dst;
	wr->sg_list[0].length = len;
	wr->sg_list[0].lkey = 0;
	wr->num_sge = 1;
	wr->send_flags |= IBV_SEND_INLINE;
}

static void scif_rdma_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
					 size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	scif_rdma_wr_set_inline_data_list(qpx, 1, &buf);
}

static int scif_rdma_wr_complete(struct ibv_qp_ex *qpx)
{
	struct scif_rdma_qp *qp = qpx_to_sqp(qpx);
	struct scif_rdma_wrs *wrs = qp->wrs;
	struct ibv_send_wr *bad;
	uint32_t i;
	int ret = wrs->err;

	for (i = 0; !ret && i < wrs->n; i++)
		wrs->wr[i].next = i + 1 < wrs->n ? &wrs->wr[i + 1] : NULL;
	if (!ret && wrs->n)
		ret = scif_rdma_post(qp, wrs->wr, &bad);
	wrs->n = 0;
	pthread_mutex_unlock(&qp->lock);
	return ret;
}

static void scif_rdma_wr_abort(struct ibv_qp_ex *qpx)
{
	struct scif_rdma_qp *qp = qpx_to_sqp(qpx);

	qp->wrs->n = 0;
	pthread_mutex_unlock(&qp->lock);
}

/* The operations ibv_wr_*() may build: those the device has. */
#define SCIF_RDMA_SEND_OPS	(IBV_QP_EX_WITH_SEND | \
				 IBV_QP_EX_WITH_SEND_WITH_IMM | \
				 IBV_QP_EX_WITH_RDMA_WRITE | \
				 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
				 IBV_QP_EX_WITH_RDMA_READ)

/* @qp's struct ibv_qp_ex: its batch's room and the ibv_wr_*() calls. */
static int scif_rdma_qp_ex_init(struct scif_rdma_qp *qp, uint32_t max_sge)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;

	qp->wrs = scif_rdma_wrs_alloc(qp, max_sge);
	if (!qp->wrs)
		return errno;
	qpx->wr_start = scif_rdma_wr_start;
	qpx->wr_complete = scif_rdma_wr_complete;
	qpx->wr_abort = scif_rdma_wr_abort;
	qpx->wr_send = scif_rdma_wr_send;
	qpx->wr_send_imm = scif_rdma_wr_send_imm;
	qpx->wr_rdma_write = scif_rdma_wr_rdma_write;
	qpx->wr_rdma_write_imm = scif_rdma_wr_rdma_write_imm;
	qpx->wr_rdma_read = scif_rdma_wr_rdma_read;
	qpx->wr_set_sge = scif_rdma_wr_set_sge;
	qpx->wr_set_sge_list = scif_rdma_wr_set_sge_list;
	qpx->wr_set_inline_data = scif_rdma_wr_set_inline_data;
	qpx->wr_set_inline_data_list = scif_rdma_wr_set_inline_data_list;
	qp->vqp.comp_mask |= VERBS_QP_EX;
	return 0;
}

/*
 * ibv_create_qp_ex() with more than a PD (libibverbs takes that alone to
 * create_qp): an RC QP, with ibv_wr_*() posting when send_ops_flags asks
 * for operations the device has.  Creation flags, XRC domains, receive
 * hash tables and the like are not supported.
 */
static struct ibv_qp *scif_rdma_create_qp_ex(struct ibv_context *ibctx,
					     struct ibv_qp_init_attr_ex *ax)
{
	const uint32_t known = IBV_QP_INIT_ATTR_PD |
			       IBV_QP_INIT_ATTR_CREATE_FLAGS |
			       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	struct ibv_qp_init_attr attr = {
		.qp_context = ax->qp_context,
		.send_cq = ax->send_cq,
		.recv_cq = ax->recv_cq,
		.srq = ax->srq,
		.cap = ax->cap,
		.qp_type = ax->qp_type,
		.sq_sig_all = ax->sq_sig_all,
	};
	struct scif_rdma_qp *qp;
	int ret;

	(void)ibctx;	/* the PD's */
	if ((ax->comp_mask & ~known) ||
	    ((ax->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     ax->create_flags) ||
	    ((ax->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	     (ax->send_ops_flags & ~(uint64_t)SCIF_RDMA_SEND_OPS))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(ax->comp_mask & IBV_QP_INIT_ATTR_PD)) {
		errno = EINVAL;
		return NULL;
	}
	qp = scif_rdma_qp_new(ax->pd, &attr);
	if (!qp)
		return NULL;
	ax->cap = attr.cap;
	if (ax->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		ret = scif_rdma_qp_ex_init(qp, attr.cap.max_send_sge);
		if (ret) {
			scif_rdma_destroy_qp(&qp->vqp.qp);
			errno = ret;
			return NULL;
		}
	}
	return &qp->vqp.qp;
}

static int scif_rdma_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			       struct ibv_recv_wr **bad_wr)
{
	return ibv_cmd_post_recv(qp, wr, bad_wr);
}

/* Shared receive queues (basic ones: no XRC) */

static struct ibv_srq *scif_rdma_create_srq(struct ibv_pd *pd,
					    struct ibv_srq_init_attr *attr)
{
	struct ib_uverbs_create_srq_resp resp = {};
	struct ibv_create_srq cmd = {};
	struct ibv_srq *srq;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;

	ret = ibv_cmd_create_srq(pd, srq, attr, &cmd, sizeof(cmd), &resp,
				 sizeof(resp));
	if (ret) {
		free(srq);
		errno = ret;
		return NULL;
	}
	return srq;
}

static int scif_rdma_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
				int attr_mask)
{
	struct ibv_modify_srq cmd = {};

	return ibv_cmd_modify_srq(srq, attr, attr_mask, &cmd, sizeof(cmd));
}

static int scif_rdma_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(srq, attr, &cmd, sizeof(cmd));
}

static int scif_rdma_destroy_srq(struct ibv_srq *srq)
{
	int ret;

	ret = ibv_cmd_destroy_srq(srq);
	if (!ret)
		free(srq);
	return ret;
}

static int scif_rdma_post_srq_recv(struct ibv_srq *srq,
				   struct ibv_recv_wr *wr,
				   struct ibv_recv_wr **bad_wr)
{
	return ibv_cmd_post_srq_recv(srq, wr, bad_wr);
}

static void scif_rdma_free_context(struct ibv_context *ibctx)
{
	struct scif_rdma_context *ctx = to_sctx(ibctx);
	struct scif_rdma_mrent *e;
	int i;

	/* MRs the program did not deregister (the kernel drops them). */
	for (i = 0; i < SCIF_RDMA_MR_HASH; i++) {
		while ((e = ctx->mrs[i])) {
			ctx->mrs[i] = e->next;
			free(e);
		}
	}
	pthread_rwlock_destroy(&ctx->mr_lock);

	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

static const struct verbs_context_ops scif_rdma_ctx_ops = {
	.alloc_pd = scif_rdma_alloc_pd,
	.create_cq = scif_rdma_create_cq,
	.create_cq_ex = scif_rdma_create_cq_ex,
	.create_qp = scif_rdma_create_qp,
	.create_qp_ex = scif_rdma_create_qp_ex,
	.create_srq = scif_rdma_create_srq,
	.dealloc_pd = scif_rdma_dealloc_pd,
	.dereg_mr = scif_rdma_dereg_mr,
	.destroy_cq = scif_rdma_destroy_cq,
	.destroy_qp = scif_rdma_destroy_qp,
	.destroy_srq = scif_rdma_destroy_srq,
	.free_context = scif_rdma_free_context,
	.modify_qp = scif_rdma_modify_qp,
	.modify_srq = scif_rdma_modify_srq,
	.poll_cq = scif_rdma_poll_cq,
	.post_recv = scif_rdma_post_recv,
	.post_send = scif_rdma_post_send,
	.post_srq_recv = scif_rdma_post_srq_recv,
	.query_device_ex = scif_rdma_query_device,
	.query_port = scif_rdma_query_port,
	.query_qp = scif_rdma_query_qp,
	.query_srq = scif_rdma_query_srq,
	.reg_dmabuf_mr = scif_rdma_reg_dmabuf_mr,
	.reg_mr = scif_rdma_reg_mr,
	.req_notify_cq = scif_rdma_req_notify_cq,
	.resize_cq = scif_rdma_resize_cq,
};

static struct verbs_context *
scif_rdma_alloc_context(struct ibv_device *ibdev, int cmd_fd,
			void *private_data)
{
	struct ib_uverbs_get_context_resp resp = {};
	struct ibv_get_context cmd = {};
	struct scif_rdma_context *ctx;
	int ret;

	(void)private_data;	/* a provider's own open calls' (ibv_open_device: NULL) */

	ctx = _verbs_init_and_alloc_context(ibdev, cmd_fd, sizeof(*ctx),
					    offsetof(struct scif_rdma_context,
						     vctx),
					    RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	ret = ibv_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd), &resp,
				  sizeof(resp));
	if (ret) {
		verbs_uninit_context(&ctx->vctx);
		free(ctx);
		errno = ret;
		return NULL;
	}

	pthread_rwlock_init(&ctx->mr_lock, NULL);
	verbs_set_ops(&ctx->vctx, &scif_rdma_ctx_ops);
	return &ctx->vctx;
}

/* Device matching */

static bool scif_rdma_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	char path[VERBS_SYSFS_PATH_MAX + sizeof("/node_desc")];
	char desc[80];
	size_t n;
	FILE *f;
	int len;

	len = snprintf(path, sizeof(path), "%s/node_desc",
		       sysfs_dev->ibdev_path);
	if (len < 0 || (size_t)len >= sizeof(path))
		return false;
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(desc, 1, sizeof(desc) - 1, f);
	fclose(f);
	desc[n] = '\0';
	return strcmp(desc, SCIF_RDMA_NODE_DESC "\n") == 0 ||
	       strcmp(desc, SCIF_RDMA_NODE_DESC) == 0;
}

static struct verbs_device *
scif_rdma_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct scif_rdma_device *dev;

	(void)sysfs_dev;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	return &dev->vdev;
}

static void scif_rdma_uninit_device(struct verbs_device *vdev)
{
	free(container_of(vdev, struct scif_rdma_device, vdev));
}

static const struct verbs_device_ops scif_rdma_dev_ops = {
	.name = "scif_rdma",
	.match_min_abi_version = SCIF_RDMA_ABI_VERSION,
	.match_max_abi_version = SCIF_RDMA_ABI_VERSION,
	.match_device = scif_rdma_match_device,
	.alloc_context = scif_rdma_alloc_context,
	.alloc_device = scif_rdma_alloc_device,
	.uninit_device = scif_rdma_uninit_device,
};

static void __attribute__((constructor)) scif_rdma_register(void)
{
	verbs_register_driver_34(&scif_rdma_dev_ops);
}
