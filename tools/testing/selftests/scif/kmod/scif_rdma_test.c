// SPDX-License-Identifier: GPL-2.0
/*
 * Test module for scif_rdma (Documentation/scif/rdma.rst): the tests
 * run as it loads, against the device named by dev= (made by "rdma link
 * add" on the scif_net interface netdev=), through ib_core's kernel
 * verbs and rdma_cm, as a kernel ULP would use them.  TAP lines in
 * <debugfs>/scif_rdma_test/results (scif_rdma_test.sh prints them).
 */

#include <linux/crc32.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/scatterlist.h>
#include <linux/scif.h>
#include <linux/seq_buf.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

static char *dev = "scif0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "The scif_rdma device to test");
static char *netdev = "sn1";
module_param(netdev, charp, 0444);
MODULE_PARM_DESC(netdev, "Its scif_net interface");
static char *peer_ip = "10.77.0.2";
module_param(peer_ip, charp, 0444);
MODULE_PARM_DESC(peer_ip, "An IPv4 address reached through netdev");

static bool serve;
module_param(serve, bool, 0444);
MODULE_PARM_DESC(serve, "Be the server of a connected run (on the peer node)");
static char *my_ip = "10.77.0.1";
module_param(my_ip, charp, 0444);
MODULE_PARM_DESC(my_ip, "Our IPv4 address on netdev (serve=1 listens on it)");
static int port = 18600;
module_param(port, int, 0444);
MODULE_PARM_DESC(port, "The rdma_cm port of the connected run");
static bool hostile;
module_param(hostile, bool, 0444);
MODULE_PARM_DESC(hostile, "Be the victim of scif_rdma_forge (port + 2)");
static bool bench;
module_param(bench, bool, 0444);
MODULE_PARM_DESC(bench, "Only the figures of make bench (with serve=1: their server)");

/* How long the server waits for the client: longer in make bench. */
static int wait_secs(void)
{
	return bench ? 600 : 60;
}

/* cm_flood(): requests sent, and how many of one node the CM keeps. */
#define FLOOD		30
#define FLOOD_PENDING	16

static char results[8192];
static struct seq_buf out;
static int nr_tests;
static struct dentry *dir;

static void report(bool ok, const char *name, long got)
{
	nr_tests++;
	if (ok)
		seq_buf_printf(&out, "ok %d %s\n", nr_tests, name);
	else
		seq_buf_printf(&out, "not ok %d %s # got %ld\n", nr_tests,
			       name, got);
}

#define CHECK(name, cond, val) report((cond), (name), (long)(val))

/* Objects of one run, undone by teardown(). */
struct ctx {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_mr *mr;
	void *buf;
	struct scatterlist sg;
	bool mapped;
};

static void test_device(struct ctx *c)
{
	struct ib_port_attr pa;
	struct net_device *nd;
	union ib_gid gid;
	int err;

	CHECK("node_type_rnic", c->ibdev->node_type == RDMA_NODE_RNIC,
	      c->ibdev->node_type);
	CHECK("port_iwarp", rdma_protocol_iwarp(c->ibdev, 1), 0);
	err = ib_query_port(c->ibdev, 1, &pa);
	CHECK("port_active", !err && pa.state == IB_PORT_ACTIVE,
	      err ? err : pa.state);
	CHECK("port_mtu_4096", !err && pa.active_mtu == IB_MTU_4096,
	      pa.active_mtu);
	err = rdma_query_gid(c->ibdev, 1, 0, &gid);
	nd = dev_get_by_name(&init_net, netdev);
	CHECK("gid_is_netdev_mac", !err && nd &&
	      ether_addr_equal(gid.raw, nd->dev_addr) &&
	      !memchr_inv(gid.raw + ETH_ALEN, 0, sizeof(gid) - ETH_ALEN), err);
	if (nd)
		dev_put(nd);
	CHECK("attr_max_fast_reg_pages",
	      c->ibdev->attrs.max_fast_reg_page_list_len == 256,
	      c->ibdev->attrs.max_fast_reg_page_list_len);
	CHECK("attr_no_atomics", c->ibdev->attrs.atomic_cap == IB_ATOMIC_NONE,
	      c->ibdev->attrs.atomic_cap);
}

/* The port events a device raised while watched (test_port_events()). */
struct port_watch {
	struct ib_event_handler h;
	spinlock_t lock;	/* @nr, @ev */
	wait_queue_head_t wq;
	int nr;
	enum ib_event_type ev[4];
};

static void port_watch_event(struct ib_event_handler *h, struct ib_event *e)
{
	struct port_watch *w = container_of(h, struct port_watch, h);
	unsigned long flags;

	if (e->event != IB_EVENT_PORT_ACTIVE && e->event != IB_EVENT_PORT_ERR)
		return;
	spin_lock_irqsave(&w->lock, flags);
	if (w->nr < ARRAY_SIZE(w->ev))
		w->ev[w->nr] = e->event;
	w->nr++;
	spin_unlock_irqrestore(&w->lock, flags);
	wake_up(&w->wq);
}

static int port_watch_nr(struct port_watch *w)
{
	unsigned long flags;
	int nr;

	spin_lock_irqsave(&w->lock, flags);
	nr = w->nr;
	spin_unlock_irqrestore(&w->lock, flags);
	return nr;
}

/* The scif_net interface netdev= taken down or up, as "ip link" does. */
static int netdev_set_up(bool up)
{
	struct net_device *nd = dev_get_by_name(&init_net, netdev);
	unsigned int flags;
	int err;

	if (!nd)
		return -ENODEV;
	rtnl_lock();
	flags = up ? nd->flags | IFF_UP : nd->flags & ~IFF_UP;
	err = dev_change_flags(nd, flags, NULL);
	rtnl_unlock();
	dev_put(nd);
	return err;
}

static int port_state(struct ib_device *ibdev)
{
	struct ib_port_attr pa;

	return ib_query_port(ibdev, 1, &pa) ? -1 : pa.state;
}

/*
 * The interface taken down, then up again: the device raises exactly
 * IB_EVENT_PORT_ERR, then IB_EVENT_PORT_ACTIVE (one each, though the
 * interface notifies more than once), and query_port says DOWN between
 * them and ACTIVE after.  The peer's link is not touched (only this
 * node's interface is down, for milliseconds).
 */
static void test_port_events(struct ib_device *ibdev)
{
	struct port_watch w = { };
	int err, down, nr;

	spin_lock_init(&w.lock);
	init_waitqueue_head(&w.wq);
	INIT_IB_EVENT_HANDLER(&w.h, ibdev, port_watch_event);
	ib_register_event_handler(&w.h);
	err = netdev_set_up(false);
	wait_event_timeout(w.wq, port_watch_nr(&w) >= 1, 10 * HZ);
	down = port_state(ibdev);
	err = err ?: netdev_set_up(true);
	wait_event_timeout(w.wq, port_watch_nr(&w) >= 2, 10 * HZ);
	/* A duplicate would come with the same notifications: give it time. */
	msleep(500);
	ib_unregister_event_handler(&w.h);
	nr = port_watch_nr(&w);
	CHECK("port_link_toggled", !err, err);
	CHECK("port_err_event_on_link_down", nr >= 1 &&
	      w.ev[0] == IB_EVENT_PORT_ERR, nr ? w.ev[0] : -1);
	CHECK("port_down_while_link_down", down == IB_PORT_DOWN, down);
	CHECK("port_active_event_on_link_up", nr >= 2 &&
	      w.ev[1] == IB_EVENT_PORT_ACTIVE, nr >= 2 ? w.ev[1] : -1);
	CHECK("port_events_once_each", nr == 2, nr);
	CHECK("port_active_after_link_up",
	      port_state(ibdev) == IB_PORT_ACTIVE, port_state(ibdev));
}

static int modify(struct ib_qp *qp, enum ib_qp_state state)
{
	struct ib_qp_attr a = { .qp_state = state };

	return ib_modify_qp(qp, &a, IB_QP_STATE);
}

static enum ib_qp_state qp_state(struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr a;

	if (ib_query_qp(qp, &a, IB_QP_STATE, &init))
		return -1;
	return a.qp_state;
}

/* One completion within 20 s, or status -1. */
static struct ib_wc poll_one(struct ib_cq *cq)
{
	struct ib_wc wc = { .status = -1 };
	int i;

	for (i = 0; i < 20000; i++) {
		if (ib_poll_cq(cq, 1, &wc) == 1)
			return wc;
		usleep_range(1000, 2000);
	}
	wc.status = -1;
	return wc;
}

static struct ib_qp *make_qp_sge(struct ctx *c, int max_wr, int max_sge)
{
	struct ib_qp_init_attr a = {
		.send_cq = c->cq,
		.recv_cq = c->cq,
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = max_wr, .max_recv_wr = max_wr,
			 .max_send_sge = max_sge, .max_recv_sge = 1 },
	};

	return ib_create_qp(c->pd, &a);
}

static struct ib_qp *make_qp(struct ctx *c, int max_wr)
{
	return make_qp_sge(c, max_wr, 1);
}

static void test_objects(struct ctx *c)
{
	struct ib_cq_init_attr big = { .cqe = 65537 };
	struct ib_qp *qp;
	struct ib_cq *cq;

	c->pd = ib_alloc_pd(c->ibdev, 0);
	CHECK("alloc_pd", !IS_ERR(c->pd), PTR_ERR_OR_ZERO(c->pd));
	if (IS_ERR(c->pd)) {
		c->pd = NULL;
		return;
	}
	c->cq = ib_alloc_cq(c->ibdev, NULL, 64, 0, IB_POLL_DIRECT);
	CHECK("alloc_cq", !IS_ERR(c->cq), PTR_ERR_OR_ZERO(c->cq));
	if (IS_ERR(c->cq)) {
		c->cq = NULL;
		return;
	}
	cq = ib_create_cq(c->ibdev, NULL, NULL, NULL, &big);
	CHECK("cq_over_limit_refused", IS_ERR(cq), PTR_ERR_OR_ZERO(cq));
	if (!IS_ERR(cq))
		ib_destroy_cq(cq);
	qp = make_qp(c, 2048);
	CHECK("qp_over_limit_refused", IS_ERR(qp), PTR_ERR_OR_ZERO(qp));
	if (!IS_ERR(qp))
		ib_destroy_qp(qp);
	c->qp = make_qp(c, 16);
	CHECK("create_qp_rc", !IS_ERR(c->qp), PTR_ERR_OR_ZERO(c->qp));
	if (IS_ERR(c->qp)) {
		c->qp = NULL;
		return;
	}
	/* Idle, INIT, as an iWARP device's. */
	CHECK("qp_starts_init", qp_state(c->qp) == IB_QPS_INIT,
	      qp_state(c->qp));
	CHECK("init_to_rts_refused", modify(c->qp, IB_QPS_RTS) == -EINVAL,
	      qp_state(c->qp));
	CHECK("qp_to_rts", !modify(c->qp, IB_QPS_INIT) &&
	      !modify(c->qp, IB_QPS_RTR) && !modify(c->qp, IB_QPS_RTS) &&
	      qp_state(c->qp) == IB_QPS_RTS, qp_state(c->qp));
}

/* IB_EVENT_QP_LAST_WQE_REACHED of the QP test_srq() watches: counted. */
static void srq_qp_event(struct ib_event *ev, void *context)
{
	if (ev->event == IB_EVENT_QP_LAST_WQE_REACHED)
		atomic_inc(context);
}

static struct ib_srq *make_srq(struct ib_pd *pd, u32 max_wr, u32 limit)
{
	struct ib_srq_init_attr a = {
		.srq_type = IB_SRQT_BASIC,
		.attr = { .max_wr = max_wr, .max_sge = 1, .srq_limit = limit },
	};

	return ib_create_srq(pd, &a);
}

static int post_srq(struct ib_srq *srq, u64 wr_id, void *buf, u32 lkey)
{
	struct ib_sge sge = { .addr = (u64)(uintptr_t)buf, .length = 64,
			      .lkey = lkey };
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				 .num_sge = 1 };
	const struct ib_recv_wr *bad;

	return ib_post_srq_recv(srq, &wr, &bad);
}

/*
 * A QP of an SRQ, unconnected: the verbs' bounds, then ERROR raises
 * IB_EVENT_QP_LAST_WQE_REACHED once (what ib_drain_qp() waits for on
 * 6.12), and again after a RESET; the data path is the server's
 * (server(): its QP takes its receives from an SRQ).
 */
static void test_srq(struct ctx *c)
{
	struct ib_qp_init_attr qa = {
		.send_cq = c->cq, .recv_cq = c->cq, .qp_type = IB_QPT_RC,
		.event_handler = srq_qp_event, .sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
	};
	struct ib_srq_attr sa = { .srq_limit = 3 };
	struct ib_recv_wr rwr = { .num_sge = 0 };
	const struct ib_recv_wr *bad;
	struct ib_pd *pd2;
	struct ib_srq *srq, *big;
	struct ib_qp *qp;
	atomic_t last = ATOMIC_INIT(0);
	int err, i;

	big = make_srq(c->pd, 4097, 0);
	CHECK("srq_over_limit_refused", IS_ERR(big), PTR_ERR_OR_ZERO(big));
	if (!IS_ERR(big))
		ib_destroy_srq(big);
	srq = make_srq(c->pd, 4, 0);
	CHECK("create_srq", !IS_ERR(srq), PTR_ERR_OR_ZERO(srq));
	if (IS_ERR(srq))
		return;
	err = ib_modify_srq(srq, &sa, IB_SRQ_LIMIT);
	sa.srq_limit = 0;
	err = err ?: ib_query_srq(srq, &sa);
	CHECK("srq_limit_armed", !err && sa.srq_limit == 3 && sa.max_wr == 4,
	      err ?: sa.srq_limit);
	for (i = 0, err = 0; i < 5 && !err; i++)
		err = post_srq(srq, i, c->buf, c->pd->local_dma_lkey);
	CHECK("srq_full_refused", err == -ENOMEM && i == 5, err);
	pd2 = ib_alloc_pd(c->ibdev, 0);
	qa.srq = srq;
	qp = IS_ERR(pd2) ? ERR_CAST(pd2) : ib_create_qp(pd2, &qa);
	CHECK("srq_of_other_pd_refused", PTR_ERR_OR_ZERO(qp) == -EINVAL,
	      PTR_ERR_OR_ZERO(qp));
	if (!IS_ERR(qp))
		ib_destroy_qp(qp);
	if (!IS_ERR(pd2))
		ib_dealloc_pd(pd2);
	qa.qp_context = &last;
	qp = ib_create_qp(c->pd, &qa);
	CHECK("create_qp_with_srq", !IS_ERR(qp), PTR_ERR_OR_ZERO(qp));
	if (IS_ERR(qp))
		goto out;
	CHECK("post_recv_on_srq_qp_refused",
	      ib_post_recv(qp, &rwr, &bad) == -EINVAL, 0);
	CHECK("destroy_busy_srq_refused",
	      ib_destroy_srq_user(srq, NULL) == -EBUSY, 0);
	err = modify(qp, IB_QPS_INIT) ?: modify(qp, IB_QPS_ERR);
	CHECK("srq_qp_last_wqe_on_error", !err && atomic_read(&last) == 1,
	      err ?: atomic_read(&last));
	err = modify(qp, IB_QPS_RESET) ?: modify(qp, IB_QPS_ERR);
	CHECK("srq_qp_last_wqe_again_after_reset",
	      !err && atomic_read(&last) == 2, err ?: atomic_read(&last));
	ib_destroy_qp(qp);
out:
	CHECK("destroy_srq", !ib_destroy_srq_user(srq, NULL), 0);
}

static int post_one(struct ib_qp *qp, struct ib_send_wr *wr)
{
	const struct ib_send_wr *bad;

	return ib_post_send(qp, wr, &bad);
}

static void test_fastreg(struct ctx *c)
{
	struct ib_reg_wr reg = {
		.wr = { .opcode = IB_WR_REG_MR, .send_flags = IB_SEND_SIGNALED,
			.wr_id = 1 },
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	};
	struct ib_send_wr inv = { .opcode = IB_WR_LOCAL_INV, .wr_id = 2,
				  .send_flags = IB_SEND_SIGNALED };
	struct ib_wc wc;
	int n;

	c->buf = kzalloc(8192, GFP_KERNEL);
	c->mr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG, 4);
	CHECK("alloc_mr", c->buf && !IS_ERR(c->mr), PTR_ERR_OR_ZERO(c->mr));
	if (!c->buf || IS_ERR(c->mr)) {
		c->mr = NULL;
		return;
	}
	sg_init_one(&c->sg, c->buf, 8192);
	c->mapped = ib_dma_map_sg(c->ibdev, &c->sg, 1, DMA_BIDIRECTIONAL) == 1;
	n = ib_map_mr_sg(c->mr, &c->sg, 1, NULL, PAGE_SIZE);
	CHECK("map_mr_sg", c->mapped && n == 1 && c->mr->length == 8192, n);
	ib_update_fast_reg_key(c->mr, 0x5a);
	reg.mr = c->mr;
	reg.key = c->mr->rkey;
	n = post_one(c->qp, &reg.wr);
	wc = poll_one(c->cq);
	CHECK("reg_mr_completes", !n && wc.status == IB_WC_SUCCESS &&
	      wc.opcode == IB_WC_REG_MR && wc.wr_id == 1, n ? n : wc.status);
	inv.ex.invalidate_rkey = c->mr->rkey;
	n = post_one(c->qp, &inv);
	wc = poll_one(c->cq);
	CHECK("local_inv_completes", !n && wc.status == IB_WC_SUCCESS &&
	      wc.opcode == IB_WC_LOCAL_INV && wc.wr_id == 2, n ? n : wc.status);
	inv.ex.invalidate_rkey = c->mr->rkey ^ 0x100;
	inv.wr_id = 3;
	n = post_one(c->qp, &inv);
	wc = poll_one(c->cq);
	CHECK("local_inv_bad_key_prot_err", !n && wc.status == IB_WC_LOC_PROT_ERR &&
	      wc.wr_id == 3, n ? n : wc.status);
	CHECK("bad_key_moves_qp_to_error", qp_state(c->qp) == IB_QPS_ERR,
	      qp_state(c->qp));
}

/* In ERROR every work request is flushed (what ib_drain_qp relies on). */
static void test_flush(struct ctx *c)
{
	struct ib_sge sge = { .addr = (u64)(uintptr_t)c->buf, .length = 64,
			      .lkey = c->pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_id = 10, .sg_list = &sge, .num_sge = 1 };
	struct ib_send_wr swr = { .wr_id = 11, .opcode = IB_WR_SEND,
				  .sg_list = &sge, .num_sge = 1 };
	const struct ib_recv_wr *rbad;
	struct ib_wc wc;
	int n;

	n = ib_post_recv(c->qp, &rwr, &rbad);
	wc = poll_one(c->cq);
	CHECK("recv_in_error_flushed", !n && wc.status == IB_WC_WR_FLUSH_ERR &&
	      wc.wr_id == 10, n ? n : wc.status);
	n = post_one(c->qp, &swr);
	wc = poll_one(c->cq);
	CHECK("send_in_error_flushed", !n && wc.status == IB_WC_WR_FLUSH_ERR &&
	      wc.wr_id == 11, n ? n : wc.status);
}

/*
 * The limits of an RDMA WRITE or READ (SRD_RMA_MAX_BOUNCE, 1 MiB and a
 * head and tail page per SGE, of bounce pages; SRD_RMA_MAX_LEN, 16 MiB)
 * are local checks: a QP in RTS without a connection completes such a
 * work request with IB_WC_LOC_LEN_ERR, not a flush.
 */
static int rma_limit_one(struct ctx *c, void *buf, u32 off, u32 skew,
			 u32 len)
{
	struct ib_sge sge[8];
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 30, .sg_list = sge, .num_sge = 8,
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = 0x10000, .rkey = 0x100,
	};
	struct ib_qp *qp;
	struct ib_wc wc;
	int i, n;

	for (i = 0; i < 8; i++)
		sge[i] = (struct ib_sge){ .addr = (u64)(uintptr_t)buf + off +
						  (i & 1) * skew,
					  .length = len,
					  .lkey = c->pd->local_dma_lkey };
	qp = make_qp_sge(c, 4, 8);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	n = modify(qp, IB_QPS_INIT) ?: modify(qp, IB_QPS_RTR) ?:
	    modify(qp, IB_QPS_RTS) ?: post_one(qp, &wr.wr);
	wc = poll_one(c->cq);
	ib_destroy_qp(qp);
	return n ? n : wc.status;
}

static void test_rma_limits(struct ctx *c)
{
	const u32 len = (5 * SZ_1M) / 2;	/* 8 of them: 20 MiB */
	void *buf = vzalloc(len + PAGE_SIZE);
	int st;

	if (!buf) {
		CHECK("rma_limit_buf", 0, -ENOMEM);
		return;
	}
	/*
	 * 8 SGEs of 1 MiB, every other one a byte off its place in the
	 * window's pages: those four are all bounce pages (over 1000).
	 */
	st = rma_limit_one(c, buf, 1, 1, SZ_1M);
	CHECK("rma_too_many_bounce_pages_loc_len_err", st == IB_WC_LOC_LEN_ERR,
	      st);
	/* 8 page-aligned SGEs of 2.5 MiB: no bounce page, but 20 MiB. */
	st = rma_limit_one(c, buf, 0, 0, len);
	CHECK("rma_over_16m_loc_len_err", st == IB_WC_LOC_LEN_ERR, st);
	vfree(buf);
}

static atomic_t comp_calls;

static void comp_handler(struct ib_cq *cq, void *ctx)
{
	atomic_inc(&comp_calls);
}

/* An armed CQ calls its comp_handler once for the next completion. */
static void test_notify(struct ctx *c)
{
	struct ib_cq_init_attr ca = { .cqe = 8 };
	struct ib_qp_init_attr qa = {
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_sge sge = { .addr = (u64)(uintptr_t)c->buf, .length = 64,
			      .lkey = c->pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_id = 20, .sg_list = &sge, .num_sge = 1 };
	const struct ib_recv_wr *rbad;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_wc wc;
	int r1, r2;

	cq = ib_create_cq(c->ibdev, comp_handler, NULL, NULL, &ca);
	if (IS_ERR(cq)) {
		CHECK("notify_cq", 0, PTR_ERR(cq));
		return;
	}
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qp = ib_create_qp(c->pd, &qa);
	if (IS_ERR(qp)) {
		CHECK("notify_qp", 0, PTR_ERR(qp));
		ib_destroy_cq(cq);
		return;
	}
	modify(qp, IB_QPS_ERR);
	r1 = ib_req_notify_cq(cq, IB_CQ_NEXT_COMP | IB_CQ_REPORT_MISSED_EVENTS);
	ib_post_recv(qp, &rwr, &rbad);
	ib_post_recv(qp, &rwr, &rbad);
	CHECK("comp_handler_called_once", r1 == 0 &&
	      atomic_read(&comp_calls) == 1, atomic_read(&comp_calls));
	r2 = ib_req_notify_cq(cq, IB_CQ_NEXT_COMP | IB_CQ_REPORT_MISSED_EVENTS);
	CHECK("notify_reports_missed", r2 == 1, r2);
	while (ib_poll_cq(cq, 1, &wc) == 1)
		;
	ib_destroy_qp(qp);
	ib_destroy_cq(cq);
}

static void teardown(struct ctx *c)
{
	if (c->mr)
		ib_dereg_mr(c->mr);
	if (c->mapped)
		ib_dma_unmap_sg(c->ibdev, &c->sg, 1, DMA_BIDIRECTIONAL);
	kfree(c->buf);
	if (c->qp)
		ib_destroy_qp(c->qp);
	if (c->cq)
		ib_free_cq(c->cq);
	if (c->pd)
		ib_dealloc_pd(c->pd);
}

struct cm_wait {
	struct completion done;
	enum rdma_cm_event_type event;
	int status;
};

static int cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct cm_wait *w = id->context;

	w->event = ev->event;
	w->status = ev->status;
	complete(&w->done);
	return 0;
}

/* rdma_cm finds the device by the peer's address, with no SCIF code. */
static void test_resolve(struct ib_device *ibdev)
{
	struct sockaddr_in dst = { .sin_family = AF_INET };
	struct rdma_cm_id *id;
	struct cm_wait w;
	int err;

	init_completion(&w.done);
	if (!in4_pton(peer_ip, -1, (u8 *)&dst.sin_addr.s_addr, -1, NULL)) {
		CHECK("peer_ip_valid", 0, 0);
		return;
	}
	id = rdma_create_id(&init_net, cm_handler, &w, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id)) {
		CHECK("rdma_create_id", 0, PTR_ERR(id));
		return;
	}
	err = rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000);
	if (!err && !wait_for_completion_timeout(&w.done, 5 * HZ))
		err = -ETIMEDOUT;
	CHECK("rdma_resolve_addr_finds_device", !err &&
	      w.event == RDMA_CM_EVENT_ADDR_RESOLVED && id->device == ibdev,
	      err ? err : w.event);
	rdma_destroy_id(id);
}

/* ---- the connected run: node 0 the client, node 1 the server ---- */

#define BUF_ORDER	8		/* 1 MiB, the largest fast-reg MR */
#define BUF_LEN		(PAGE_SIZE << BUF_ORDER)
#define INFO_PAT	64

/* What the server sends first: its MR, and bytes to compare. */
struct info {
	u64 addr;
	u32 rkey;
	u32 len;
	u64 addr2;	/* an MR over the buffer from its byte 8: no window */
	u32 rkey2;
	u32 pad;
	u8 pat[INFO_PAT];
};

/* The server's answer to a WRITE_WITH_IMM: the immediate and a crc. */
struct echo {
	u32 imm;
	u32 crc;
};

/*
 * Both ways at once (client_both_ways): the client's MR the server
 * writes into, BOTH_N pieces of BOTH_LEN each way, the server's from
 * BOTH_SRC of its buffer (past what the client writes into its MR from
 * byte 8).
 */
struct both {
	u64 addr;
	u32 rkey;
	u32 pad;
};

#define BOTH_N		24
#define BOTH_LEN	SZ_16K
#define BOTH_SRC	(512 * 1024)

struct conn {
	struct rdma_cm_id *id;		/* the connected one */
	struct rdma_cm_id *listen;
	struct cm_wait w;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_mr *mr;
	struct ib_mr *mr2;		/* server: from byte 8; victim: other PD */
	struct ib_pd *pd2;		/* the victim's other PD */
	struct ib_qp *qp2;		/* a QP of it, never connected */
	void *buf;			/* BUF_LEN: the MR (server), or source */
	void *buf2;			/* BUF_LEN: READ destination (client) */
	void *msg;			/* PAGE_SIZE: send/recv messages */
	struct scatterlist sg;
	bool mapped;
	atomic_t qp_events;		/* asynchronous events of the QP */
	int qp_event;			/* the last one's type */
	bool use_srq;			/* server: receives from @srq */
	struct ib_srq *srq;
	atomic_t last_wqe;		/* IB_EVENT_QP_LAST_WQE_REACHED */
	atomic_t srq_limits;		/* IB_EVENT_SRQ_LIMIT_REACHED */
};

/*
 * The server's second listen (port + 1) takes every CONNECT_REQUEST and
 * never answers one: the ids it was given, destroyed at the end.
 */
#define IGNORED_MAX	64
static struct rdma_cm_id *ignored[IGNORED_MAX];
static atomic_t nr_ignored;

static int ignore_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	int i;

	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		return 0;
	i = atomic_inc_return(&nr_ignored) - 1;
	if (i >= IGNORED_MAX)
		return -ENOSPC;		/* rdma_cm destroys it */
	ignored[i] = id;
	return 0;
}

static struct rdma_cm_id *ignoring_listen(struct sockaddr_in *a)
{
	struct sockaddr_in b = *a;
	struct rdma_cm_id *id;

	b.sin_port = htons(port + 1);
	id = rdma_create_id(&init_net, ignore_handler, NULL, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return NULL;
	if (rdma_bind_addr(id, (struct sockaddr *)&b) || rdma_listen(id, 64)) {
		rdma_destroy_id(id);
		return NULL;
	}
	return id;
}

static void ignoring_end(struct rdma_cm_id *listen)
{
	int i, n = min(atomic_read(&nr_ignored), IGNORED_MAX);

	if (!listen)
		return;
	rdma_destroy_id(listen);
	for (i = 0; i < n; i++)
		rdma_destroy_id(ignored[i]);
}

static int conn_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct conn *c = id->context;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		if (c->id)
			return -EBUSY;
		c->id = id;
	}
	c->w.event = ev->event;
	c->w.status = ev->status;
	complete(&c->w.done);
	return 0;
}

static int conn_wait(struct conn *c, enum rdma_cm_event_type want, int secs)
{
	if (!wait_for_completion_timeout(&c->w.done, secs * HZ))
		return -ETIMEDOUT;
	reinit_completion(&c->w.done);
	return c->w.event == want ? 0 : -1000 - c->w.event;
}

static u64 va(void *p)
{
	return (u64)(uintptr_t)p;
}

/*
 * The QP's asynchronous events (IB_EVENT_QP_FATAL...): counted; the
 * last WQE of an SRQ's QP apart.
 */
static void conn_qp_event(struct ib_event *ev, void *context)
{
	struct conn *c = context;

	if (ev->event == IB_EVENT_QP_LAST_WQE_REACHED) {
		atomic_inc(&c->last_wqe);
		return;
	}
	WRITE_ONCE(c->qp_event, ev->event);
	atomic_inc(&c->qp_events);
}

static void conn_srq_event(struct ib_event *ev, void *context)
{
	struct conn *c = context;

	if (ev->event == IB_EVENT_SRQ_LIMIT_REACHED)
		atomic_inc(&c->srq_limits);
}

/* The server's SRQ (@c->use_srq), of the size its QP's RQ would have. */
static int conn_srq(struct conn *c)
{
	struct ib_srq_init_attr a = {
		.event_handler = conn_srq_event,
		.srq_context = c,
		.srq_type = IB_SRQT_BASIC,
		.attr = { .max_wr = 16, .max_sge = 1 },
	};

	if (!c->use_srq)
		return 0;
	c->srq = ib_create_srq(c->pd, &a);
	if (IS_ERR(c->srq)) {
		int err = PTR_ERR(c->srq);

		c->srq = NULL;
		return err;
	}
	return 0;
}

static int conn_qp(struct conn *c, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr a = {
		.event_handler = conn_qp_event,
		.qp_context = c,
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		/* client_both_ways posts BOTH_N at once. */
		.cap = { .max_send_wr = 32, .max_recv_wr = 16,
			 .max_send_sge = 4, .max_recv_sge = 1 },
	};
	int err;

	c->pd = ib_alloc_pd(id->device, 0);
	if (IS_ERR(c->pd))
		return PTR_ERR(c->pd);
	c->cq = ib_alloc_cq(id->device, NULL, 64, 0, IB_POLL_DIRECT);
	if (IS_ERR(c->cq))
		return PTR_ERR(c->cq);
	a.send_cq = c->cq;
	a.recv_cq = c->cq;
	err = conn_srq(c);
	if (err)
		return err;
	a.srq = c->srq;
	return rdma_create_qp(id, c->pd, &a);
}

static int post_recv(struct conn *c, u64 wr_id)
{
	struct ib_sge sge = { .addr = va(c->msg) + (wr_id % 4) * 512,
			      .length = 512, .lkey = c->pd->local_dma_lkey };
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				 .num_sge = 1 };
	const struct ib_recv_wr *bad;

	if (c->srq)
		return ib_post_srq_recv(c->srq, &wr, &bad);
	return ib_post_recv(c->id->qp, &wr, &bad);
}

/* Post one signalled send WR and wait for its completion; its status. */
static int send_wait(struct conn *c, struct ib_send_wr *wr)
{
	struct ib_wc wc;
	int err;

	wr->send_flags = IB_SEND_SIGNALED;
	err = post_one(c->id->qp, wr);
	if (err)
		return err;
	wc = poll_one(c->cq);
	return wc.status;
}

static int send_msg(struct conn *c, void *p, u32 len, u32 imm_flag)
{
	struct ib_sge sge = { .addr = va(p), .length = len,
			      .lkey = c->pd->local_dma_lkey };
	struct ib_send_wr wr = { .wr_id = 100, .sg_list = &sge, .num_sge = 1,
				 .opcode = IB_WR_SEND };

	return send_wait(c, &wr);
}

static int rdma_op(struct conn *c, enum ib_wr_opcode op, void *local,
		   u32 len, u64 raddr, u32 rkey, u32 imm)
{
	struct ib_sge sge = { .addr = va(local), .length = len,
			      .lkey = c->pd->local_dma_lkey };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 200, .sg_list = &sge, .num_sge = 1,
			.opcode = op, .ex.imm_data = cpu_to_be32(imm) },
		.remote_addr = raddr,
		.rkey = rkey,
	};

	return send_wait(c, &wr.wr);
}

/* One connection's objects; the listen and the buffers stay. */
static void conn_objs_free(struct conn *c)
{
	if (c->id && c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->srq)
		ib_destroy_srq(c->srq);
	c->srq = NULL;
	if (c->qp2)
		ib_destroy_qp(c->qp2);
	if (c->mr)
		ib_dereg_mr(c->mr);
	if (c->mr2)
		ib_dereg_mr(c->mr2);
	if (c->pd2)
		ib_dealloc_pd(c->pd2);
	if (c->cq && !IS_ERR(c->cq))
		ib_free_cq(c->cq);
	if (c->pd && !IS_ERR(c->pd))
		ib_dealloc_pd(c->pd);
	if (c->id)
		rdma_destroy_id(c->id);
	c->id = NULL;
	c->mr = NULL;
	c->mr2 = NULL;
	c->qp2 = NULL;
	c->pd2 = NULL;
	c->cq = NULL;
	c->pd = NULL;
}

static void conn_free(struct conn *c)
{
	conn_objs_free(c);
	if (c->listen)
		rdma_destroy_id(c->listen);
	if (c->buf)
		free_pages((unsigned long)c->buf, BUF_ORDER);
	if (c->buf2)
		free_pages((unsigned long)c->buf2, BUF_ORDER);
	free_page((unsigned long)c->msg);
}

/* The connection manager id @c listens with: 0 or an error. */
static int conn_listen_id(struct conn *c)
{
	struct rdma_cm_id *id;

	id = rdma_create_id(&init_net, conn_handler, c, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	c->listen = id;
	return 0;
}

static int conn_bufs(struct conn *c)
{
	c->buf = (void *)__get_free_pages(GFP_KERNEL | __GFP_ZERO, BUF_ORDER);
	c->buf2 = (void *)__get_free_pages(GFP_KERNEL | __GFP_ZERO, BUF_ORDER);
	c->msg = (void *)get_zeroed_page(GFP_KERNEL);
	return c->buf && c->buf2 && c->msg ? 0 : -ENOMEM;
}

static void pattern(u8 *p, u32 len, u32 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(i * 7 + seed);
}

/* @p holds pattern(@len, @seed). */
static bool pattern_ok(const u8 *p, u32 len, u32 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		if (p[i] != (u8)(i * 7 + seed))
			return false;
	return true;
}

/*
 * An MR of @pd over the buffer from its byte @off, remote read and
 * write, made valid by an IB_WR_REG_MR on @qp whose completion is polled
 * on the connection's CQ: in *@mrp (freed with the connection's
 * objects).  0 or an error.
 */
static int buf_mr(struct conn *c, struct ib_pd *pd, struct ib_qp *qp,
		  struct ib_mr **mrp, unsigned int off, u64 wr_id)
{
	struct ib_reg_wr reg = {
		.wr = { .opcode = IB_WR_REG_MR, .wr_id = wr_id,
			.send_flags = IB_SEND_SIGNALED },
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			  IB_ACCESS_REMOTE_READ,
	};
	struct ib_wc wc;
	int n;

	*mrp = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 1U << BUF_ORDER);
	if (IS_ERR(*mrp)) {
		n = PTR_ERR(*mrp);
		*mrp = NULL;
		return n;
	}
	if (ib_map_mr_sg(*mrp, &c->sg, 1, &off, PAGE_SIZE) != 1)
		return -EIO;
	reg.mr = *mrp;
	reg.key = (*mrp)->rkey;
	n = post_one(qp, &reg.wr);
	if (n)
		return n;
	wc = poll_one(c->cq);
	return wc.status == IB_WC_SUCCESS && wc.wr_id == wr_id ? 0 : -EIO;
}

/* The server's MR: the whole buffer, remote read and write. */
static int server_mr(struct conn *c)
{
	sg_init_one(&c->sg, c->buf, BUF_LEN);
	if (ib_dma_map_sg(c->id->device, &c->sg, 1, DMA_BIDIRECTIONAL) != 1)
		return -EIO;
	return buf_mr(c, c->pd, c->id->qp, &c->mr, 0, 300);
}

/*
 * The server's second MR, over the buffer from its byte 8: not whole
 * pages, so scif_rdma opens no window over it and the client's WRITEs
 * and READs to it go inline or by the server's RMA (after server_mr,
 * whose mapping of c->sg it shares).
 */
static int server_mr2(struct conn *c)
{
	return buf_mr(c, c->pd, c->id->qp, &c->mr2, 8, 301);
}

/*
 * A plain SCIF RMA between the same nodes, for comparison: the server
 * registers its 1 MiB buffer on a SCIF connection of port PLAIN_PORT
 * before it listens through rdma_cm, the client writes and reads it 32
 * times.  Figures only (TAP comments).
 */
#define PLAIN_PORT	1905

static noinline_for_stack void server_plain_rma(void *buf)
{
	struct scif_pollepd pe = { .events = EPOLLIN };
	struct scif_port_id peer;
	scif_epd_t ep = NULL;
	off_t off = -1;
	u8 done;

	pe.epd = scif_open();
	if (!pe.epd)
		return;
	if (scif_bind(pe.epd, PLAIN_PORT) < 0 || scif_listen(pe.epd, 1) ||
	    scif_poll(&pe, 1, wait_secs() * 1000) <= 0 ||
	    scif_accept(pe.epd, &peer, &ep, SCIF_ACCEPT_SYNC))
		goto out;
	off = scif_register(ep, buf, BUF_LEN, 0,
			    SCIF_PROT_READ | SCIF_PROT_WRITE, SCIF_MAP_KERNEL);
	if (off >= 0 &&
	    scif_send(ep, &off, sizeof(off), SCIF_SEND_BLOCK) == sizeof(off))
		scif_recv(ep, &done, 1, SCIF_RECV_BLOCK);
	if (off >= 0)
		scif_unregister(ep, off, BUF_LEN);
	scif_close(ep);
out:
	scif_close(pe.epd);
}

static noinline_for_stack void client_plain_rma(void *buf, u16 node)
{
	struct scif_port_id to = { .node = node, .port = PLAIN_PORT };
	int i, k, err = -ENOMEM, tries;
	scif_epd_t ep;
	u8 done = 1;
	off_t off;
	u64 t0, ns;

	ep = scif_open();
	/* The server may come later in make bench: two minutes then. */
	for (tries = 0; ep && tries < (bench ? 1200 : 100); tries++) {
		err = scif_connect(ep, &to);
		if (err >= 0)
			break;
		scif_close(ep);
		msleep(100);
		ep = scif_open();
	}
	if (!ep || err < 0 ||
	    scif_recv(ep, &off, sizeof(off), SCIF_RECV_BLOCK) != sizeof(off))
		goto out;
	for (k = 0, err = 0; k < 2 && !err; k++) {
		t0 = ktime_get_ns();
		for (i = 0; i < 32 && !err; i++)
			err = k ? scif_vreadfrom(ep, buf, SZ_1M, off, SCIF_RMA_SYNC) :
				  scif_vwriteto(ep, buf, SZ_1M, off, SCIF_RMA_SYNC);
		ns = ktime_get_ns() - t0;
		seq_buf_printf(&out, "# bench: 32 x 1 MiB plain SCIF %s: %llu us, %llu MB/s\n",
			       k ? "vreadfrom" : "vwriteto", ns / 1000,
			       ns ? 32ULL * SZ_1M * 1000 / ns : 0);
		if (bench)	/* the kernel API's own RMA, same engine */
			seq_buf_printf(&out, "bench: 2vm,%s,kscif,%u,32,,,,%llu\n",
				       k ? "readfrom" : "writeto", SZ_1M,
				       ns ? 32ULL * SZ_1M * 1000 / ns : 0);
	}
	scif_send(ep, &done, 1, SCIF_SEND_BLOCK);
out:
	if (err)
		seq_buf_printf(&out, "# bench: plain SCIF RMA failed: %d\n", err);
	if (ep)
		scif_close(ep);
}

/*
 * The first 4 KiB of the buffer by WRITE_WITH_IMM (8192), and the
 * server's echo of it: the two completions in either order (a send
 * queue's and a receive queue's completions are not ordered with each
 * other).  0 if both succeeded (the echo's in *@echo), else an error.
 */
static noinline_for_stack int write_imm_echo(struct conn *c,
					     struct info *info,
					     struct ib_wc *echo)
{
	struct ib_sge sge = { .addr = va(c->buf), .length = 4096,
			      .lkey = c->pd->local_dma_lkey };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 200, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_RDMA_WRITE_WITH_IMM,
			.send_flags = IB_SEND_SIGNALED,
			.ex.imm_data = cpu_to_be32(8192) },
		.remote_addr = info->addr,
		.rkey = info->rkey,
	};
	int err, i, got = 0;
	struct ib_wc wc;

	err = post_one(c->id->qp, &wr.wr);
	for (i = 0; !err && i < 2; i++) {
		wc = poll_one(c->cq);
		if (wc.status != IB_WC_SUCCESS)
			err = -EIO;
		else if (wc.opcode == IB_WC_RECV)
			*echo = wc;
		got |= wc.opcode == IB_WC_RECV ? 1 : 2;
	}
	return err ?: got == 3 ? 0 : -EIO;
}

/*
 * Post BOTH_N inline WRITEs or READs of BOTH_LEN, @local + i * BOTH_LEN
 * to or from @raddr + i * BOTH_LEN, in one chain, only the last
 * signalled (wr_id 700 + BOTH_N - 1).  0 or the post's error.
 */
static int both_chain(struct conn *c, enum ib_wr_opcode op, void *local,
		      u64 raddr, u32 rkey)
{
	struct ib_rdma_wr *wr = kcalloc(BOTH_N, sizeof(*wr), GFP_KERNEL);
	struct ib_sge *sge = kcalloc(BOTH_N, sizeof(*sge), GFP_KERNEL);
	const struct ib_send_wr *bad;
	int i, err = -ENOMEM;

	if (wr && sge) {
		for (i = 0; i < BOTH_N; i++) {
			sge[i].addr = va(local + i * BOTH_LEN);
			sge[i].length = BOTH_LEN;
			sge[i].lkey = c->pd->local_dma_lkey;
			wr[i].wr.wr_id = 700 + i;
			wr[i].wr.sg_list = &sge[i];
			wr[i].wr.num_sge = 1;
			wr[i].wr.opcode = op;
			wr[i].wr.send_flags = i + 1 < BOTH_N ? 0 :
					      IB_SEND_SIGNALED;
			wr[i].wr.next = i + 1 < BOTH_N ? &wr[i + 1].wr : NULL;
			wr[i].remote_addr = raddr + i * BOTH_LEN;
			wr[i].rkey = rkey;
		}
		err = ib_post_send(c->id->qp, &wr[0].wr, &bad);
	}
	kfree(sge);
	kfree(wr);
	return err;
}

/*
 * The server's half of client_both_ways: the client's SEND names its MR;
 * the server writes BOTH_N pieces into it while the client writes into
 * the server's, then SENDs that it is done.
 */
static noinline_for_stack void server_both_ways(struct conn *c)
{
	struct ib_wc wc = poll_one(c->cq);
	struct both *b = c->msg + (wc.wr_id % 4) * 512;
	int err = -EIO;

	if (wc.status == IB_WC_SUCCESS && wc.opcode == IB_WC_RECV &&
	    wc.byte_len == sizeof(*b)) {
		pattern(c->buf + BOTH_SRC, BOTH_N * BOTH_LEN, 41);
		err = both_chain(c, IB_WR_RDMA_WRITE, c->buf + BOTH_SRC,
				 b->addr, b->rkey);
	}
	if (!err) {
		wc = poll_one(c->cq);
		err = wc.status == IB_WC_SUCCESS &&
		      wc.wr_id == 700 + BOTH_N - 1 ? 0 : -EIO;
	}
	CHECK("srv_both_ways_writes", !err, err ?: wc.status);
	err = send_msg(c, c->msg + 3584, 8, 0);
	CHECK("srv_both_ways_done_sent", !err, err);
}

/* The client's MR over its second buffer, remote write: in *@mrp. */
static int client_mr(struct conn *c, struct scatterlist *sg,
		     struct ib_mr **mrp)
{
	struct ib_reg_wr reg = {
		.wr = { .opcode = IB_WR_REG_MR, .wr_id = 330 },
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	};

	*mrp = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG, 1U << BUF_ORDER);
	if (IS_ERR(*mrp)) {
		int err = PTR_ERR(*mrp);

		*mrp = NULL;
		return err;
	}
	sg_init_one(sg, c->buf2, BUF_LEN);
	if (ib_dma_map_sg(c->id->device, sg, 1, DMA_BIDIRECTIONAL) != 1 ||
	    ib_map_mr_sg(*mrp, sg, 1, NULL, PAGE_SIZE) != 1)
		return -EIO;
	reg.mr = *mrp;
	reg.key = (*mrp)->rkey;
	return send_wait(c, &reg.wr);
}

/*
 * Both nodes write into each other's MR at once, inline, many more
 * bytes than a connection's ring holds each way: each node's receive
 * thread must keep reading while its own frames wait for room (before
 * the answers were queued for a worker of their own, each receive
 * thread waited to send its ACK behind its send worker, blocked on the
 * full ring the other receive thread no longer read).  Then the bytes
 * each way: the server's in the client's MR, the client's read back.
 */
static noinline_for_stack void client_both_ways(struct conn *c,
						struct info *info)
{
	struct both *b = c->msg + 2560;
	struct scatterlist sg;
	struct ib_mr *mr = NULL;
	int err, i, got = 0;
	struct ib_wc wc;

	err = client_mr(c, &sg, &mr);
	memset(c->buf2, 0, BOTH_N * BOTH_LEN);
	pattern(c->buf, BOTH_N * BOTH_LEN, 42);
	if (!err)
		err = post_recv(c, 2);
	if (!err) {
		b->addr = mr->iova;
		b->rkey = mr->rkey;
		err = send_msg(c, b, sizeof(*b), 0) ?:
		      both_chain(c, IB_WR_RDMA_WRITE, c->buf, info->addr2,
				 info->rkey2);
	}
	/* The chain's last WRITE and the server's SEND, in either order. */
	for (i = 0; !err && i < 2; i++) {
		wc = poll_one(c->cq);
		if (wc.status != IB_WC_SUCCESS)
			err = -EIO;
		else if (wc.opcode == IB_WC_RECV)
			got |= 1;
		else if (wc.wr_id == 700 + BOTH_N - 1)
			got |= 2;
	}
	CHECK("both_ways_completed", !err && got == 3, err ?: got);
	CHECK("both_ways_bytes_from_server", !err &&
	      pattern_ok(c->buf2, BOTH_N * BOTH_LEN, 41), err);
	if (!err) {
		memset(c->buf2, 0, BOTH_N * BOTH_LEN);
		err = both_chain(c, IB_WR_RDMA_READ, c->buf2, info->addr2,
				 info->rkey2);
	}
	if (!err) {
		wc = poll_one(c->cq);
		err = wc.status == IB_WC_SUCCESS ? 0 : -EIO;
	}
	CHECK("both_ways_bytes_to_server", !err &&
	      !memcmp(c->buf, c->buf2, BOTH_N * BOTH_LEN), err);
	if (mr)
		ib_dereg_mr(mr);
	ib_dma_unmap_sg(c->id->device, &sg, 1, DMA_BIDIRECTIONAL);
}

static void server(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	struct rdma_cm_id *ign = NULL;
	struct conn c = { };
	struct info *info;
	struct echo *e;
	struct ib_wc wc;
	int err, i;

	init_completion(&c.w.done);
	err = conn_bufs(&c);
	if (!err && !in4_pton(my_ip, -1, (u8 *)&a.sin_addr.s_addr, -1, NULL))
		err = -EINVAL;
	if (!err)
		server_plain_rma(c.buf);
	if (!err)
		err = conn_listen_id(&c);
	if (!err) {
		ign = ignoring_listen(&a);
		err = ign ? 0 : -EIO;
	}
	if (!err)
		err = rdma_bind_addr(c.listen, (struct sockaddr *)&a);
	if (!err)
		err = rdma_listen(c.listen, 1);
	CHECK("srv_listen", !err, err);
	if (err)
		goto out;
	err = conn_wait(&c, RDMA_CM_EVENT_CONNECT_REQUEST, wait_secs());
	CHECK("srv_connect_request", !err && c.id->device->node_type ==
	      RDMA_NODE_RNIC, err);
	if (err)
		goto out;
	/*
	 * The server's QP takes its receives from an SRQ, whose limit is
	 * armed at the 4 posted: the first receive taken raises it.
	 */
	c.use_srq = true;
	err = conn_qp(&c, c.id);
	for (i = 0; !err && i < 4; i++)
		err = post_recv(&c, i);
	if (!err)
		err = ib_modify_srq(c.srq, &(struct ib_srq_attr){ .srq_limit = 4 },
				    IB_SRQ_LIMIT);
	if (!err) {
		/* iWARP's accept needs the parameters (cma_accept_iw). */
		struct rdma_conn_param p = { .responder_resources = 1,
					     .initiator_depth = 1 };

		/*
		 * Outside the event handler, under its lock, as rdma_cm
		 * requires (lockdep checks it on the debug kernel).
		 */
		rdma_lock_handler(c.id);
		err = rdma_accept(c.id, &p);
		rdma_unlock_handler(c.id);
	}
	if (!err)
		err = conn_wait(&c, RDMA_CM_EVENT_ESTABLISHED, 10);
	CHECK("srv_accept_established", !err, err);
	if (err)
		goto out;
	err = server_mr(&c) ?: server_mr2(&c);
	CHECK("srv_reg_mr", !err, err);
	if (err)
		goto out;
	info = c.msg + 2048;
	info->addr = c.mr->iova;
	info->rkey = c.mr->rkey;
	info->len = BUF_LEN;
	info->addr2 = c.mr2->iova;
	info->rkey2 = c.mr2->rkey;
	pattern(info->pat, INFO_PAT, 3);
	err = send_msg(&c, info, sizeof(*info), 0);
	CHECK("srv_send_info", !err, err);
	if (bench) {
		err = conn_wait(&c, RDMA_CM_EVENT_DISCONNECTED, wait_secs());
		CHECK("srv_bench_disconnected", !err, err);
		goto out;
	}
	server_both_ways(&c);
	/* The client's WRITE_WITH_IMM, then the echo of what we hold. */
	for (i = 0; i < 3; i++) {
		wc = poll_one(c.cq);
		if (wc.status != (enum ib_wc_status)-1)
			break;
	}
	CHECK("srv_write_imm_received", wc.status == IB_WC_SUCCESS &&
	      wc.opcode == IB_WC_RECV_RDMA_WITH_IMM &&
	      (wc.wc_flags & IB_WC_WITH_IMM), wc.status);
	e = c.msg + 3072;
	e->imm = be32_to_cpu(wc.ex.imm_data);
	e->crc = crc32_le(0, c.buf, min_t(u32, e->imm, BUF_LEN));
	err = send_msg(&c, e, sizeof(*e), 0);
	CHECK("srv_send_echo", !err, err);
	/* The client's SEND_WITH_INV of our MR's rkey. */
	for (i = 0; i < 3; i++) {
		wc = poll_one(c.cq);
		if (wc.status != (enum ib_wc_status)-1)
			break;
	}
	CHECK("srv_send_with_inv_received", wc.status == IB_WC_SUCCESS &&
	      wc.opcode == IB_WC_RECV &&
	      (wc.wc_flags & IB_WC_WITH_INVALIDATE) &&
	      wc.ex.invalidate_rkey == c.mr->rkey, wc.status);
	/* The client ends with a bad key: the connection closes. */
	err = conn_wait(&c, RDMA_CM_EVENT_DISCONNECTED, 30);
	CHECK("srv_disconnected", !err, err);
	/* The responder's QP reports the access error, once. */
	CHECK("srv_bad_rkey_qp_access_err_event",
	      atomic_read(&c.qp_events) == 1 &&
	      READ_ONCE(c.qp_event) == IB_EVENT_QP_ACCESS_ERR,
	      atomic_read(&c.qp_events));
	/* Its SRQ's limit once, and its QP's last WQE once, in ERROR. */
	CHECK("srv_srq_limit_event_once", atomic_read(&c.srq_limits) == 1,
	      atomic_read(&c.srq_limits));
	CHECK("srv_srq_last_wqe_event_once", atomic_read(&c.last_wqe) == 1,
	      atomic_read(&c.last_wqe));
	/* The client's flood of CONNECTs to the ignoring listen. */
	CHECK("srv_unanswered_requests_bounded",
	      atomic_read(&nr_ignored) == FLOOD_PENDING,
	      atomic_read(&nr_ignored));
out:
	ignoring_end(ign);
	conn_free(&c);
}

static int client_connect(struct conn *c, struct sockaddr_in *dst)
{
	int err, tries;

	for (tries = 0; tries < 60; tries++) {
		c->id = rdma_create_id(&init_net, conn_handler, c, RDMA_PS_TCP,
				       IB_QPT_RC);
		if (IS_ERR(c->id)) {
			err = PTR_ERR(c->id);
			c->id = NULL;
			return err;
		}
		err = rdma_resolve_addr(c->id, NULL, (struct sockaddr *)dst, 2000);
		if (!err)
			err = conn_wait(c, RDMA_CM_EVENT_ADDR_RESOLVED, 5);
		if (!err)
			err = rdma_resolve_route(c->id, 2000);
		if (!err)
			err = conn_wait(c, RDMA_CM_EVENT_ROUTE_RESOLVED, 5);
		if (!err && !c->pd)
			err = conn_qp(c, c->id);
		else if (!err)
			err = rdma_create_qp(c->id, c->pd, &(struct ib_qp_init_attr){
				.qp_type = IB_QPT_RC, .send_cq = c->cq,
				.recv_cq = c->cq, .sq_sig_type = IB_SIGNAL_REQ_WR,
				.cap = { .max_send_wr = 32, .max_recv_wr = 16,
					 .max_send_sge = 4, .max_recv_sge = 1 } });
		if (!err)
			err = post_recv(c, 0) ?: post_recv(c, 1);
		if (!err) {
			struct rdma_conn_param p = { .responder_resources = 1,
						     .initiator_depth = 1 };

			err = rdma_connect(c->id, &p);
		}
		if (!err)
			err = conn_wait(c, RDMA_CM_EVENT_ESTABLISHED, 10);
		if (!err)
			return 0;
		if (c->id->qp)
			rdma_destroy_qp(c->id);
		rdma_destroy_id(c->id);
		c->id = NULL;
		reinit_completion(&c->w.done);
		msleep(500);
	}
	return err;
}

static noinline_for_stack void client_rma(struct conn *c, struct info *info)
{
	static const u32 sizes[] = { 4096, 65536, 1U << 20 };
	char name[40];
	int i, e1, e2;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		u64 t0 = ktime_get_ns();

		pattern(c->buf, sizes[i], i + 11);
		memset(c->buf2, 0, sizes[i]);
		e1 = rdma_op(c, IB_WR_RDMA_WRITE, c->buf, sizes[i], info->addr,
			     info->rkey, 0);
		e2 = e1 ? e1 : rdma_op(c, IB_WR_RDMA_READ, c->buf2, sizes[i],
				       info->addr, info->rkey, 0);
		seq_buf_printf(&out, "# write+read of %u bytes: %llu us\n",
			       sizes[i], (ktime_get_ns() - t0) / 1000);
		snprintf(name, sizeof(name), "rdma_write_read_%u", sizes[i]);
		CHECK(name, !e1 && !e2 && !memcmp(c->buf, c->buf2, sizes[i]),
		      e1 ? e1 : e2);
	}
}

/* An RDMA WRITE or READ of a list of SGEs; its status. */
static int rdma_sges(struct conn *c, enum ib_wr_opcode op, struct ib_sge *sge,
		     int n, u64 raddr, u32 rkey)
{
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 210, .sg_list = sge, .num_sge = n,
			.opcode = op },
		.remote_addr = raddr,
		.rkey = rkey,
	};
	int i;

	for (i = 0; i < n; i++)
		sge[i].lkey = c->pd->local_dma_lkey;
	return send_wait(c, &wr.wr);
}

/* Every byte of @p[0..@len) outside the @n SGEs is still @canary. */
static bool canaries_ok(const u8 *p, u32 len, const struct ib_sge *sge,
			int n, u8 canary)
{
	u32 i;
	int j;

	for (i = 0; i < len; i++) {
		for (j = 0; j < n; j++)
			if (va((void *)p + i) >= sge[j].addr &&
			    va((void *)p + i) < sge[j].addr + sge[j].length)
				break;
		if (j == n && p[i] != canary)
			return false;
	}
	return true;
}

/* The bytes of the SGEs, concatenated, into @out. */
static void gather(u8 *out, const struct ib_sge *sge, int n)
{
	int j;

	for (j = 0; j < n; j++) {
		memcpy(out, (void *)(uintptr_t)sge[j].addr, sge[j].length);
		out += sge[j].length;
	}
}

#define SGE(p, off, len) { .addr = va(p) + (off), .length = (len) }
#define SGE_AREA	(8 * PAGE_SIZE)

/*
 * WRITE @src to the server at @roff, READ it back into @dst (whose area
 * is filled with canaries first): the bytes compared, the canaries
 * beside the READ's SGEs (in the same pages) unchanged.
 */
static noinline_for_stack void sge_case(struct conn *c, u64 raddr, u32 rkey,
					const char *name, struct ib_sge *src,
					int ns, struct ib_sge *dst, int nd,
					u32 roff, u8 *want, u8 *got)
{
	u32 len = 0;
	char n2[64];
	int e1, e2, j;

	for (j = 0; j < ns; j++)
		len += src[j].length;
	pattern(c->buf, SGE_AREA, roff);
	memset(c->buf2, 0xa5, SGE_AREA);
	gather(want, src, ns);
	e1 = rdma_sges(c, IB_WR_RDMA_WRITE, src, ns, raddr + roff, rkey);
	e2 = e1 ? e1 : rdma_sges(c, IB_WR_RDMA_READ, dst, nd, raddr + roff,
				 rkey);
	gather(got, dst, nd);
	snprintf(n2, sizeof(n2), "%s_bytes", name);
	CHECK(n2, !e1 && !e2 && !memcmp(want, got, len), e1 ? e1 : e2);
	snprintf(n2, sizeof(n2), "%s_read_canaries", name);
	CHECK(n2, !e2 && canaries_ok(c->buf2, SGE_AREA, dst, nd, 0xa5), e2);
}

/*
 * Unaligned and multi-SGE lists, into the server's window (direct) and
 * into its MR from byte 8, which has none: up to 16 KiB in the frames
 * themselves (inline), beyond by the server's RMA from a temporary
 * window of the client's (bounce pages and real pages mixed).
 */
static noinline_for_stack void client_sges(struct conn *c, struct info *info)
{
	struct ib_sge s1[] = { SGE(c->buf, 100, 5000) };
	struct ib_sge d1[] = { SGE(c->buf2, 100, 5000) };
	/* 1000 + 4097 + 3001 = 8098 bytes; odd boundaries both sides. */
	struct ib_sge s3[] = { SGE(c->buf, 7, 1000), SGE(c->buf, 3000, 4097),
			       SGE(c->buf, 12301, 3001) };
	/* The second one is a whole page at a page boundary of the window. */
	struct ib_sge d3[] = { SGE(c->buf2, 4093, 3),
			       SGE(c->buf2, 8192, 4096),
			       SGE(c->buf2, 20001, 3999) };
	/* Over SRD_INLINE_MAX (16 KiB): 20000 and 24482 bytes. */
	struct ib_sge s1b[] = { SGE(c->buf, 100, 20000) };
	struct ib_sge d1b[] = { SGE(c->buf2, 100, 20000) };
	struct ib_sge s3b[] = { SGE(c->buf, 7, 1000), SGE(c->buf, 3000, 20481),
				SGE(c->buf, 24001, 3001) };
	struct ib_sge d3b[] = { SGE(c->buf2, 4093, 3),
				SGE(c->buf2, 8192, 20480),
				SGE(c->buf2, 28673, 3999) };
	u8 *want = kmalloc(2 * SGE_AREA, GFP_KERNEL);

	if (!want) {
		CHECK("sge_bufs", 0, -ENOMEM);
		return;
	}
	sge_case(c, info->addr, info->rkey, "rdma_sge_off100_len5000", s1, 1,
		 d1, 1, 0, want, want + SGE_AREA);
	sge_case(c, info->addr, info->rkey, "rdma_three_sges_odd", s3, 3, d3,
		 3, 3 * 4096 + 5, want, want + SGE_AREA);
	sge_case(c, info->addr2, info->rkey2, "inline_sge_off100_len5000", s1,
		 1, d1, 1, 0, want, want + SGE_AREA);
	sge_case(c, info->addr2, info->rkey2, "inline_three_sges_odd", s3, 3,
		 d3, 3, 3 * 4096 + 5, want, want + SGE_AREA);
	sge_case(c, info->addr2, info->rkey2, "frames_sge_off100_len20000",
		 s1b, 1, d1b, 1, 0, want, want + SGE_AREA);
	sge_case(c, info->addr2, info->rkey2, "frames_three_sges_odd", s3b, 3,
		 d3b, 3, 3 * 4096 + 5, want, want + SGE_AREA);
	kfree(want);
}

/*
 * @n WRITEs of @len bytes each into the server's MR from byte 8 (no
 * window: inline up to 16 KiB, else by the server's RMA from a window of
 * the client's), then @n READs of the same pieces back, posted in one
 * chain, each signalled: every one succeeds, they complete in the order
 * posted, and each READ finds what the WRITE before it in the chain
 * wrote (the responder serves them in order however many are
 * outstanding; the client's counter rdma_pipelined_reqs shows that
 * several were: scif_rdma_test.sh).
 */
static noinline_for_stack void pipe_case(struct conn *c, struct info *info,
					 const char *name, int n, u32 len)
{
	struct ib_rdma_wr *wr = kcalloc(2 * n, sizeof(*wr), GFP_KERNEL);
	struct ib_sge *sge = kcalloc(2 * n, sizeof(*sge), GFP_KERNEL);
	const struct ib_send_wr *bad;
	bool order = true, st = true;
	int i, err = -ENOMEM;
	struct ib_wc wc;
	char n2[64];

	if (wr && sge) {
		pattern(c->buf, n * len, len);
		memset(c->buf2, 0, n * len);
		for (i = 0; i < 2 * n; i++) {
			bool rd = i >= n;
			u32 off = (i % n) * len;

			sge[i].addr = va((rd ? c->buf2 : c->buf) + off);
			sge[i].length = len;
			sge[i].lkey = c->pd->local_dma_lkey;
			wr[i].wr.wr_id = 500 + i;
			wr[i].wr.sg_list = &sge[i];
			wr[i].wr.num_sge = 1;
			wr[i].wr.opcode = rd ? IB_WR_RDMA_READ :
					       IB_WR_RDMA_WRITE;
			wr[i].wr.send_flags = IB_SEND_SIGNALED;
			wr[i].wr.next = i + 1 < 2 * n ? &wr[i + 1].wr : NULL;
			wr[i].remote_addr = info->addr2 + off;
			wr[i].rkey = info->rkey2;
		}
		err = ib_post_send(c->id->qp, &wr[0].wr, &bad);
	}
	for (i = 0; !err && i < 2 * n; i++) {
		wc = poll_one(c->cq);
		order &= wc.wr_id == 500 + i;
		st &= wc.status == IB_WC_SUCCESS;
	}
	snprintf(n2, sizeof(n2), "%s_completions_in_order", name);
	CHECK(n2, !err && order && st, err);
	snprintf(n2, sizeof(n2), "%s_read_after_write_bytes", name);
	CHECK(n2, !err && !memcmp(c->buf, c->buf2, n * len), err);
	kfree(sge);
	kfree(wr);
}

/*
 * Several WRITEs and READs outstanding on one QP: inline ones (16 of
 * 2 KiB in one chain, as many as may wait for their answers at once),
 * and ones by the server's RMA (6 of 20000 bytes: more than the 4 that
 * may wait with a window at once).
 */
static noinline_for_stack void client_pipeline(struct conn *c,
					       struct info *info)
{
	pipe_case(c, info, "pipeline_inline", 8, 2048);
	pipe_case(c, info, "pipeline_frames", 3, 20000);
}

/*
 * @n WRITEs or READs of @size bytes posted at once, only the last
 * signaled (as perftest does), and that completion polled for every
 * 100 us: the time it took, or 0 if one failed.
 */
static u64 bench_batch(struct conn *c, enum ib_wr_opcode op, int n,
		       u32 size, struct info *info)
{
	struct ib_sge sge = { .addr = va(c->buf), .length = size,
			      .lkey = c->pd->local_dma_lkey };
	struct ib_rdma_wr *wr = kcalloc(n, sizeof(*wr), GFP_KERNEL);
	const struct ib_send_wr *bad;
	u64 t0, ns = 0;
	struct ib_wc wc;
	int i;

	if (!wr)
		return 0;
	for (i = 0; i < n; i++) {
		wr[i].wr.wr_id = 400 + i;
		wr[i].wr.sg_list = &sge;
		wr[i].wr.num_sge = 1;
		wr[i].wr.opcode = op;
		wr[i].wr.next = i + 1 < n ? &wr[i + 1].wr : NULL;
		wr[i].wr.send_flags = i + 1 < n ? 0 : IB_SEND_SIGNALED;
		wr[i].remote_addr = info->addr;
		wr[i].rkey = info->rkey;
	}
	t0 = ktime_get_ns();
	for (i = ib_post_send(c->id->qp, &wr[0].wr, &bad) ? 200000 : 0;
	     i < 200000; i++) {
		if (ib_poll_cq(c->cq, 1, &wc) == 1) {
			if (wc.status == IB_WC_SUCCESS && wc.wr_id == 400 + n - 1)
				ns = ktime_get_ns() - t0;
			break;
		}
		usleep_range(100, 200);
	}
	kfree(wr);
	return ns;
}

/* Bandwidth of 1 MiB WRITEs and READs (TAP comments; no pass/fail). */
static noinline_for_stack void client_bench(struct conn *c, struct info *info)
{
	static const enum ib_wr_opcode ops[] = { IB_WR_RDMA_WRITE,
						 IB_WR_RDMA_READ };
	u64 ns, t;
	int k, b;
	bool ok = true;

	for (k = 0; k < 2; k++) {
		for (b = 0, ns = 0; b < 2 && ok; b++) {
			t = bench_batch(c, ops[k], 16, SZ_1M, info);
			ok = t != 0;
			ns += t;
		}
		seq_buf_printf(&out, "# bench: 32 x 1 MiB RDMA %s: %llu us, %llu MB/s\n",
			       k ? "READ" : "WRITE", ns / 1000,
			       ns ? 32ULL * SZ_1M * 1000 / ns : 0);
	}
	CHECK("rdma_bench_1m_x32", ok, 0);
}

/* @count operations of @size in batches of 16: MB/s, or 0 on a failure. */
static u64 figures_bw(struct conn *c, enum ib_wr_opcode op, u32 size,
		      int count, struct info *info)
{
	u64 ns = 0, t;
	int b;

	for (b = 0; b < count / 16; b++) {
		t = bench_batch(c, op, 16, size, info);
		if (!t)
			return 0;
		ns += t;
	}
	return ns ? (u64)count * size * 1000 / ns : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * The round trip of an 8-byte RDMA READ (as ib_read_lat), @count times,
 * its completion polled without sleeping: "lat" row, times in us.
 */
static void figures_lat(struct conn *c, int count, struct info *info)
{
	struct ib_sge sge = { .addr = va(c->buf2), .length = 8,
			      .lkey = c->pd->local_dma_lkey };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 500, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_RDMA_READ,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = info->addr,
		.rkey = info->rkey,
	};
	u64 *ns = kcalloc(count, sizeof(*ns), GFP_KERNEL), t0, end;
	const struct ib_send_wr *bad;
	struct ib_wc wc;
	int i, got;

	for (i = 0; ns && i < count; i++) {
		t0 = ktime_get_ns();
		end = t0 + 20ULL * NSEC_PER_SEC;
		if (ib_post_send(c->id->qp, &wr.wr, &bad))
			break;
		while (!(got = ib_poll_cq(c->cq, 1, &wc)) && ktime_get_ns() < end)
			cond_resched();
		if (got != 1 || wc.status != IB_WC_SUCCESS)
			break;
		ns[i] = ktime_get_ns() - t0;
	}
	if (ns && i == count) {
		sort(ns, count, sizeof(*ns), cmp_u64, NULL);
		seq_buf_printf(&out, "bench: 2vm,lat,srd,8,%d,%llu.%llu,%llu.%llu,%llu.%llu,%llu\n",
			       count, ns[0] / 1000, ns[0] / 100 % 10,
			       ns[count / 2] / 1000, ns[count / 2] / 100 % 10,
			       ns[count * 99 / 100] / 1000,
			       ns[count * 99 / 100] / 100 % 10,
			       ns[count / 2] ? NSEC_PER_SEC / ns[count / 2] : 0);
	}
	CHECK("bench_read_latency", ns && i == count, i);
	kfree(ns);
}

/*
 * make bench's figures (rows "bench: SETUP,MODE,VIA,SIZE,COUNT,,,,RATE"
 * as scif-bench prints them): WRITE and READ bandwidth at 4 KiB, 64 KiB
 * and 1 MiB, and the READ round trip.
 */
static noinline_for_stack void client_figures(struct conn *c,
					      struct info *info)
{
	static const u32 sizes[] = { 4096, 65536, SZ_1M };
	u64 rate;
	int i, k, n;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		n = sizes[i] == SZ_1M ? 64 : 256;
		for (k = 0; k < 2; k++) {
			rate = figures_bw(c, k ? IB_WR_RDMA_READ :
					  IB_WR_RDMA_WRITE, sizes[i], n, info);
			seq_buf_printf(&out, "bench: 2vm,%s,srd,%u,%d,,,,%llu\n",
				       k ? "readfrom" : "writeto", sizes[i], n,
				       rate);
			CHECK(k ? "bench_read_bw" : "bench_write_bw", rate, 0);
		}
	}
	figures_lat(c, 200, info);
}

/*
 * RDMA_READ_WITH_INV as rdma_rw posts it on iWARP: a fast-reg MR of ours
 * over buf2 gets a new key by REG_MR, and the READ into it names it by
 * the key it had before; the server's bytes (the WRITE_WITH_IMM's 8 KiB)
 * must arrive.  Then SEND_WITH_INV of the server's rkey, whose receive
 * the server checks; its MR is invalid after (the bad-key test below).
 */
static void client_inv(struct conn *c, struct info *info)
{
	struct ib_reg_wr reg = {
		.wr = { .opcode = IB_WR_REG_MR, .wr_id = 310 },
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	};
	struct ib_sge sge = { .length = 8192 };
	struct ib_rdma_wr rd = {
		.wr = { .wr_id = 311, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_RDMA_READ_WITH_INV },
		.remote_addr = info->addr,
		.rkey = info->rkey,
	};
	struct ib_sge msg = { .addr = va(c->msg + 2048), .length = 16,
			      .lkey = c->pd->local_dma_lkey };
	struct ib_send_wr inv = { .wr_id = 312, .sg_list = &msg, .num_sge = 1,
				  .opcode = IB_WR_SEND_WITH_INV,
				  .ex.invalidate_rkey = info->rkey };
	int err = 0;

	c->mr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG, 8192 / PAGE_SIZE);
	if (IS_ERR(c->mr)) {
		err = PTR_ERR(c->mr);
		c->mr = NULL;
	}
	sg_init_one(&c->sg, c->buf2, 8192);
	if (!err && (ib_dma_map_sg(c->id->device, &c->sg, 1,
				   DMA_FROM_DEVICE) != 1 ||
		     ib_map_mr_sg(c->mr, &c->sg, 1, NULL, PAGE_SIZE) != 1))
		err = -EIO;
	if (!err) {
		rd.wr.ex.invalidate_rkey = c->mr->lkey;
		ib_update_fast_reg_key(c->mr, ib_inc_rkey(c->mr->lkey));
		reg.mr = c->mr;
		reg.key = c->mr->lkey;
		sge.addr = c->mr->iova;
		sge.lkey = c->mr->lkey;
		memset(c->buf2, 0, 8192);
		err = send_wait(c, &reg.wr) ?: send_wait(c, &rd.wr);
	}
	CHECK("read_with_inv_bytes", !err && !memcmp(c->buf, c->buf2, 8192),
	      err);
	err = send_wait(c, &inv);
	CHECK("send_with_inv_sent", !err, err);
}

/*
 * A good inline WRITE, one with the invalidated key, a good one, posted
 * at once: SUCCESS, IB_WC_REM_ACCESS_ERR, IB_WC_WR_FLUSH_ERR, in order.
 */
static noinline_for_stack void client_bad_rkey(struct conn *c,
					       struct info *info)
{
	struct ib_sge sge = { .addr = va(c->buf), .length = 4096,
			      .lkey = c->pd->local_dma_lkey };
	static const int want[3] = { IB_WC_SUCCESS, IB_WC_REM_ACCESS_ERR,
				     IB_WC_WR_FLUSH_ERR };
	struct ib_rdma_wr wr[3] = { };
	const struct ib_send_wr *bad;
	int i, err, got[3] = { -1, -1, -1 };
	struct ib_wc wc;
	bool order = true;

	for (i = 0; i < 3; i++) {
		wr[i].wr.wr_id = 600 + i;
		wr[i].wr.sg_list = &sge;
		wr[i].wr.num_sge = 1;
		wr[i].wr.opcode = IB_WR_RDMA_WRITE;
		wr[i].wr.send_flags = IB_SEND_SIGNALED;
		wr[i].wr.next = i < 2 ? &wr[i + 1].wr : NULL;
		wr[i].remote_addr = i == 1 ? info->addr : info->addr2;
		wr[i].rkey = i == 1 ? info->rkey : info->rkey2;
	}
	err = ib_post_send(c->id->qp, &wr[0].wr, &bad);
	for (i = 0; !err && i < 3; i++) {
		wc = poll_one(c->cq);
		got[i] = wc.status;
		order &= wc.wr_id == 600 + i;
	}
	seq_buf_printf(&out, "# bad rkey between good WRITEs: %d %d %d\n",
		       got[0], got[1], got[2]);
	CHECK("before_bad_rkey_succeeded", !err && order && got[0] == want[0],
	      err ?: got[0]);
	CHECK("bad_rkey_rem_access_err", got[1] == want[1], got[1]);
	CHECK("after_bad_rkey_flushed", got[2] == want[2], got[2]);
}

/*
 * An endpoint bound to a privileged port (at or below *next, which
 * moves down) and connected to the CM of @node; the peer's scif_rdma
 * may not be loaded yet: refused connections are retried for 30 s.
 */
static scif_epd_t cm_dial(u16 node, int *next, int *errp)
{
	struct scif_port_id to = { .node = node, .port = 702 };
	int tries, err = -ECONNREFUSED;
	scif_epd_t epd = NULL;

	for (tries = 0; tries < 60 && err == -ECONNREFUSED; tries++) {
		if (epd) {
			scif_close(epd);
			msleep(500);
		}
		epd = scif_open();
		if (!epd) {
			*errp = -ENOMEM;
			return NULL;
		}
		for (err = -EINVAL; *next > 800 && err == -EINVAL; (*next)--)
			err = scif_bind(epd, *next);
		if (err >= 0)
			err = scif_connect(epd, &to);
	}
	*errp = err < 0 ? err : 0;
	if (err >= 0)
		return epd;
	scif_close(epd);
	return NULL;
}

/*
 * A hostile privileged peer at the CM's SCIF port (702): a message with a
 * bad magic is refused at once, a truncated one after the CM's 10 s
 * bound; either way the endpoint is closed by the peer, which stays
 * usable (the real connection follows).
 */
static int cm_forged(u16 node, int len)
{
	struct scif_pollepd pe = { .events = EPOLLIN };
	int next = 1000, err, n;
	u8 junk[216];

	memset(junk, 0xa5, sizeof(junk));
	pe.epd = cm_dial(node, &next, &err);
	if (!pe.epd)
		return err;
	err = scif_send(pe.epd, junk, len, SCIF_SEND_BLOCK) == len ? 0 : -EIO;
	/* The peer must close it within 15 s: EPOLLHUP, or a REJECT then HUP. */
	for (n = 0; !err && n < 150; n++) {
		if (scif_poll(&pe, 1, 100) > 0 && (pe.revents & EPOLLHUP))
			break;
		if (pe.revents & EPOLLIN)
			scif_recv(pe.epd, junk, sizeof(junk), 0);
	}
	if (!err && n == 150)
		err = -ETIMEDOUT;
	scif_close(pe.epd);
	return err;
}

/* The CM's message, as scif_rdma_cm.c sends it (216 bytes). */
struct cm_msg {
	__le32 magic;
	u8 type, pdata_len, ord, ird;
	__be32 saddr, daddr;
	__be16 sport, dport;
	u8 pdata[196];
};

/*
 * A valid CONNECT to the server's ignoring listen from a privileged
 * connector (a port at or below *next, which moves down).
 */
static scif_epd_t cm_request(u16 node, struct cm_msg *m, int *next)
{
	scif_epd_t epd;
	int err;

	epd = cm_dial(node, next, &err);
	if (!epd)
		return NULL;
	err = scif_send(epd, m, sizeof(*m), SCIF_SEND_BLOCK);
	if (err == (int)sizeof(*m))
		return epd;
	scif_close(epd);
	return NULL;
}

/* In @secs seconds, how many of @epd[0..n) were refused, or closed. */
static int cm_answers(scif_epd_t *epd, int n, int secs, bool refused)
{
	struct scif_pollepd pe = { .events = EPOLLIN };
	struct cm_msg m;
	int i, t, got = 0;

	for (t = 0; t < secs * 10 && got < n; t++) {
		for (i = 0; i < n; i++) {
			pe.epd = epd[i];
			if (!pe.epd || scif_poll(&pe, 1, 0) <= 0)
				continue;
			if (refused && !(pe.revents & EPOLLIN))
				continue;
			if (refused && (scif_recv(pe.epd, &m, sizeof(m),
						  SCIF_RECV_BLOCK) != sizeof(m) ||
					m.type != 3))
				continue;
			if (!refused && !(pe.revents & EPOLLHUP))
				continue;
			scif_close(epd[i]);
			epd[i] = NULL;
			got++;
		}
		msleep(100);
	}
	return got;
}

/*
 * FLOOD valid CONNECTs to the server's listen that never answers: the
 * CM keeps FLOOD_PENDING of one node waiting and refuses the others at
 * once; the waiting ones are given up (closed) once the connector's
 * 10 s wait is over.
 */
static noinline_for_stack void cm_flood(u16 node, __be32 saddr, __be32 daddr)
{
	scif_epd_t epd[FLOOD] = { };
	struct cm_msg *m = kzalloc(sizeof(*m), GFP_KERNEL);
	int i, next = 899, refused, closed, sent = 0;

	for (i = 0; m && i < FLOOD; i++) {
		m->magic = cpu_to_le32(0x53524443);
		m->type = 1;
		m->ord = 1;
		m->ird = 1;
		m->saddr = saddr;
		m->daddr = daddr;
		m->sport = htons(40000 + i);
		m->dport = htons(port + 1);
		epd[i] = cm_request(node, m, &next);
		sent += !!epd[i];
	}
	CHECK("cm_flood_sent", sent == FLOOD, sent);
	refused = cm_answers(epd, FLOOD, 3, true);
	CHECK("cm_flood_refused_over_the_bound",
	      refused == FLOOD - FLOOD_PENDING, refused);
	closed = cm_answers(epd, FLOOD, 20, false);
	CHECK("cm_flood_unanswered_given_up", closed == FLOOD_PENDING, closed);
	for (i = 0; i < FLOOD; i++)
		if (epd[i])
			scif_close(epd[i]);
	kfree(m);
}

static void client(void)
{
	struct sockaddr_in dst = { .sin_family = AF_INET,
				   .sin_port = htons(port) };
	struct conn c = { };
	struct info *info;
	struct echo *e;
	struct ib_wc wc;
	u8 pat[INFO_PAT];
	int err, peer = -1;
	__be32 me = 0;

	init_completion(&c.w.done);
	err = conn_bufs(&c);
	if (!err && !in4_pton(peer_ip, -1, (u8 *)&dst.sin_addr.s_addr, -1, NULL))
		err = -EINVAL;
	if (!err) {
		struct net_device *nd = dev_get_by_name(&init_net, netdev);

		peer = nd ? nd->dev_addr[5] : -1;	/* scif_net's MAC */
		if (nd)
			dev_put(nd);
		err = peer < 0 || bench ? 0 : cm_forged(peer, 216);
		CHECK("cm_bad_magic_closed", peer >= 0 && !err, err);
		err = peer < 0 || bench ? 0 : cm_forged(peer, 40);
		CHECK("cm_truncated_closed", peer >= 0 && !err, err);
		if (peer >= 0)
			client_plain_rma(c.buf, peer);
		err = client_connect(&c, &dst);
	}
	CHECK("rdma_connect_established", !err, err);
	if (err)
		goto out;
	/* The server's listens are up: flood the ignoring one. */
	if (!bench && in4_pton(my_ip, -1, (u8 *)&me, -1, NULL))
		cm_flood(peer, me, dst.sin_addr.s_addr);
	wc = poll_one(c.cq);
	info = c.msg;
	pattern(pat, INFO_PAT, 3);
	CHECK("send_recv_bytes", wc.status == IB_WC_SUCCESS &&
	      wc.opcode == IB_WC_RECV && wc.byte_len == sizeof(*info) &&
	      !memcmp(info->pat, pat, INFO_PAT), wc.status);
	if (wc.status != IB_WC_SUCCESS)
		goto out;
	if (bench) {
		client_figures(&c, info);
		rdma_disconnect(c.id);
		goto out;
	}
	client_rma(&c, info);
	client_sges(&c, info);
	client_pipeline(&c, info);
	client_both_ways(&c, info);
	client_bench(&c, info);
	/*
	 * 8 KiB the server echoes a crc of (the immediate says how many
	 * bytes): the second half by a plain WRITE (direct), the first by
	 * WRITE_WITH_IMM (frames), so both land in the server's MR.
	 */
	pattern(c.buf, 8192, 5);
	err = rdma_op(&c, IB_WR_RDMA_WRITE, c.buf + 4096, 4096,
		      info->addr + 4096, info->rkey, 0) ?:
	      write_imm_echo(&c, info, &wc);
	e = c.msg + (wc.wr_id % 4) * 512;	/* both_ways took a receive */
	seq_buf_printf(&out, "# echo: wr_id %llu imm %u crc %x want %x\n",
		       wc.wr_id, e->imm, e->crc, crc32_le(0, c.buf, 8192));
	CHECK("write_with_imm", !err && e->imm == 8192 &&
	      e->crc == crc32_le(0, c.buf, 8192), err);
	client_inv(&c, info);
	/*
	 * A bad rkey, the server's that SEND_WITH_INV invalidated: remote
	 * access error, the QP to error, no bytes moved.  (A key of no MR
	 * at all is test_fastreg's LOCAL_INV.)  Posted between two good
	 * WRITEs, all three outstanding at once: the first succeeds, the
	 * one after the error is flushed.
	 */
	client_bad_rkey(&c, info);
	CHECK("bad_rkey_no_event_on_requester", !atomic_read(&c.qp_events),
	      READ_ONCE(c.qp_event));
	CHECK("bad_rkey_qp_error", qp_state(c.id->qp) == IB_QPS_ERR,
	      qp_state(c.id->qp));
	err = rdma_op(&c, IB_WR_RDMA_WRITE, c.buf, 4096,
		      info->addr + BUF_LEN - 100, info->rkey, 0);
	CHECK("after_error_flushed", err == IB_WC_WR_FLUSH_ERR, err);
	rdma_disconnect(c.id);
out:
	conn_free(&c);
}

/*
 * The victim of scif_rdma_forge (node 0, user space, speaking scif_rdma's
 * CM and frames itself): HOSTILE_CASES connections to port + 2, in the
 * forge's order.  Each gets a new QP and an MR over the buffer (remote
 * read and write), and the SEND of a struct hinfo: the MR, the key of
 * an MR registered and deregistered just before, and the key of a valid
 * MR of another PD.  Every case ends
 * with the connection (a forged frame the victim refuses, or the
 * forge's close): the victim sees the disconnect within 30 s and its QP
 * in ERROR.  Case HOSTILE_DIRECT: the forge writes into the window the
 * victim opened over its MR; the victim finds the bytes in the MR.  Case
 * HOSTILE_INLINE: the same for the forge's inline WRITE.  Case
 * HOSTILE_NOANSWER: the victim posts a READ the forge never answers;
 * it must complete (flushed) once the forge drops the connection, not
 * before.  Case HOSTILE_HELD: the forge sends part of a SEND and stops,
 * so that the victim's receive thread holds a receive; the victim
 * drains its QP as ib_drain_rq() does: every receive must complete,
 * flushed, before the drain's own.  The last: an honest WRITE and READ of the forge, then its
 * SEND; the victim finds the forge's bytes in its MR.
 */
#define HOSTILE_CASES		22
#define HOSTILE_HELD		2
#define HOSTILE_NOANSWER	(HOSTILE_CASES - 2)
#define HOSTILE_DIRECT		(HOSTILE_CASES - 3)
#define HOSTILE_INLINE		(HOSTILE_CASES - 8)
#define HOSTILE_IOFF		(512 * 1024)
#define HOSTILE_OFF		4096
#define HOSTILE_LEN		65536
#define HOSTILE_DOFF		(256 * 1024)

/*
 * The asynchronous event each case's end must report on the victim's QP
 * (-1: none): a frame refused is IB_EVENT_QP_FATAL, a bad key, right or
 * range of the forge's request IB_EVENT_QP_ACCESS_ERR, a bad window
 * range IB_EVENT_QP_REQ_ERR; a close, a truncated frame (the connection
 * ends under it) or a SEND too long for the RECV (a completion error of
 * the victim's own) none.  In the forge's order.
 */
static const int hostile_event[HOSTILE_CASES] = {
	-1, -1, -1, IB_EVENT_QP_FATAL, -1, IB_EVENT_QP_FATAL, IB_EVENT_QP_FATAL,
	IB_EVENT_QP_ACCESS_ERR, IB_EVENT_QP_ACCESS_ERR, IB_EVENT_QP_ACCESS_ERR,
	IB_EVENT_QP_ACCESS_ERR, IB_EVENT_QP_REQ_ERR, IB_EVENT_QP_REQ_ERR, IB_EVENT_QP_FATAL,
	IB_EVENT_QP_ACCESS_ERR, IB_EVENT_QP_FATAL,
	-1, IB_EVENT_QP_FATAL, IB_EVENT_QP_FATAL, -1, -1, -1,
};

struct hinfo {
	u64 addr;
	u32 rkey;
	u32 len;
	u32 dead_rkey;
	u32 other_rkey;
};

/*
 * A valid MR over the buffer in a PD of its own (valid by an REG_MR on
 * a QP of that PD that is never connected): its rkey, or 0.  A peer's
 * request with it must find no MR.
 */
static u32 other_pd_key(struct conn *c)
{
	struct ib_qp_init_attr a = {
		.send_cq = c->cq, .recv_cq = c->cq, .qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 2, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	c->pd2 = ib_alloc_pd(c->id->device, 0);
	if (IS_ERR(c->pd2)) {
		c->pd2 = NULL;
		return 0;
	}
	c->qp2 = ib_create_qp(c->pd2, &a);
	if (IS_ERR(c->qp2)) {
		c->qp2 = NULL;
		return 0;
	}
	if (modify(c->qp2, IB_QPS_INIT) || modify(c->qp2, IB_QPS_RTR) ||
	    modify(c->qp2, IB_QPS_RTS) ||
	    buf_mr(c, c->pd2, c->qp2, &c->mr2, 0, 302))
		return 0;
	return c->mr2->rkey;
}

/* An MR registered, then deregistered: its rkey, or 0. */
static u32 dead_key(struct conn *c)
{
	struct ib_mr *mr = c->mr;
	u32 key = 0;

	c->mr = NULL;
	if (!server_mr(c))
		key = c->mr->rkey;
	if (c->mr)
		ib_dereg_mr(c->mr);
	c->mr = mr;
	return key;
}

static int victim_accept(struct conn *c, int secs)
{
	struct rdma_conn_param p = { .responder_resources = 1,
				     .initiator_depth = 1 };
	int err, i;

	atomic_set(&c->qp_events, 0);
	err = conn_wait(c, RDMA_CM_EVENT_CONNECT_REQUEST, secs);
	if (!err)
		err = conn_qp(c, c->id);
	for (i = 0; !err && i < 4; i++)
		err = post_recv(c, i);
	if (!err) {
		rdma_lock_handler(c->id);
		err = rdma_accept(c->id, &p);
		rdma_unlock_handler(c->id);
	}
	return err ?: conn_wait(c, RDMA_CM_EVENT_ESTABLISHED, 10);
}

/* Case HOSTILE_NOANSWER: a READ the forge takes and never answers. */
static void victim_noanswer(struct conn *c)
{
	u64 t0 = ktime_get_ns(), ms;
	int st;

	st = rdma_op(c, IB_WR_RDMA_READ, c->buf2, 4096, 0, 0x100, 0);
	ms = (ktime_get_ns() - t0) / NSEC_PER_MSEC;
	seq_buf_printf(&out, "# unanswered READ completed after %llu ms\n", ms);
	CHECK("hostile_unanswered_read_flushed_at_drop",
	      st == IB_WC_WR_FLUSH_ERR && ms >= 2000, st);
}

/*
 * Case HOSTILE_HELD: once the forge's partial SEND has come (its receive
 * thread took receive 0 for it), the QP to ERROR and a receive posted as
 * ib_drain_rq() posts its marker; completions until the marker's: the
 * four receives, each flushed, must come before it.
 */
static void victim_drain_held(struct conn *c)
{
	unsigned int seen = 0, before = 0;
	struct ib_wc wc = { .status = -1 };
	int err;

	msleep(2000);
	err = modify(c->id->qp, IB_QPS_ERR) ?: post_recv(c, 99);
	while (!err) {
		wc = poll_one(c->cq);
		if (wc.status == -1 || wc.wr_id == 99)
			break;
		if (wc.wr_id < 4 && wc.status == IB_WC_WR_FLUSH_ERR)
			before |= BIT(wc.wr_id);
		seen++;
	}
	seq_buf_printf(&out,
		       "# drain: %u completions before the marker (receives %#x), marker status %d\n",
		       seen, before, wc.status);
	CHECK("hostile_held_receive_flushed_before_drain_marker",
	      !err && wc.wr_id == 99 && wc.status == IB_WC_WR_FLUSH_ERR &&
	      seen == 4 && before == 0xf, err ?: before);
}

/*
 * Case HOSTILE_DIRECT: the forge's own RMA into the window the victim
 * opened over its MR put its bytes in the MR; case HOSTILE_INLINE: its
 * inline WRITE did (checked once the forge has disconnected).
 */
static void victim_bytes(struct conn *c, const char *name, u32 off,
			 u32 len, u32 seed)
{
	u8 *want = kmalloc(len, GFP_KERNEL);

	if (want)
		pattern(want, len, seed);
	CHECK(name, want && !memcmp(c->buf + off, want, len), 0);
	kfree(want);
}

/* The last case: the forge's bytes, then its SEND. */
static void victim_good(struct conn *c)
{
	struct ib_wc wc = poll_one(c->cq);
	u8 *want = kmalloc(HOSTILE_LEN, GFP_KERNEL);

	if (want)
		pattern(want, HOSTILE_LEN, 77);
	CHECK("hostile_after_all_bytes_written", wc.status == IB_WC_SUCCESS &&
	      want && !memcmp(c->buf + HOSTILE_OFF, want, HOSTILE_LEN),
	      wc.status);
	kfree(want);
}

static int victim_case(struct conn *c, int i)
{
	struct hinfo *h = c->msg + 2048;
	char name[48];
	int err;

	err = victim_accept(c, i ? 30 : 120);
	if (!err) {
		h->dead_rkey = dead_key(c);
		err = server_mr(c);
	}
	if (!err) {
		h->other_rkey = other_pd_key(c);
		err = h->other_rkey ? 0 : -EIO;
	}
	if (!err) {
		h->addr = c->mr->iova;
		h->rkey = c->mr->rkey;
		h->len = BUF_LEN;
		err = send_msg(c, h, sizeof(*h), 0);
	}
	snprintf(name, sizeof(name), "hostile_%d_connected", i);
	CHECK(name, !err, err);
	if (err)
		return err;
	if (i == HOSTILE_NOANSWER)
		victim_noanswer(c);
	else if (i == HOSTILE_HELD)
		victim_drain_held(c);
	else if (i == HOSTILE_CASES - 1)
		victim_good(c);
	err = conn_wait(c, RDMA_CM_EVENT_DISCONNECTED, 30);
	snprintf(name, sizeof(name), "hostile_%d_closed_qp_error", i);
	CHECK(name, !err && qp_state(c->id->qp) == IB_QPS_ERR, err);
	snprintf(name, sizeof(name), "hostile_%d_async_event", i);
	CHECK(name, hostile_event[i] < 0 ? !atomic_read(&c->qp_events) :
	      atomic_read(&c->qp_events) == 1 &&
	      READ_ONCE(c->qp_event) == hostile_event[i],
	      atomic_read(&c->qp_events) ? READ_ONCE(c->qp_event) : -1);
	if (i == HOSTILE_DIRECT)
		victim_bytes(c, "hostile_direct_bytes_in_mr", HOSTILE_DOFF,
			     HOSTILE_LEN, 91);
	if (i == HOSTILE_INLINE)
		victim_bytes(c, "hostile_inline_bytes_in_mr", HOSTILE_IOFF,
			     4096, 55);
	return 0;
}

/* One connection's objects, before the next connection. */
static void victim_conn_free(struct conn *c)
{
	conn_objs_free(c);
	reinit_completion(&c->w.done);
}

static void victim(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port + 2) };
	struct conn c = { };
	int err, i;

	init_completion(&c.w.done);
	err = conn_bufs(&c);
	if (!err && !in4_pton(my_ip, -1, (u8 *)&a.sin_addr.s_addr, -1, NULL))
		err = -EINVAL;
	if (!err)
		err = conn_listen_id(&c);
	err = err ?: rdma_bind_addr(c.listen, (struct sockaddr *)&a);
	err = err ?: rdma_listen(c.listen, 1);
	CHECK("hostile_listen", !err, err);
	for (i = 0; !err && i < HOSTILE_CASES; i++) {
		err = victim_case(&c, i);
		victim_conn_free(&c);
	}
	conn_free(&c);
}

static int results_show(struct seq_file *s, void *unused)
{
	seq_printf(s, "%s1..%d\n", results, nr_tests);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(results);

static int __init scif_rdma_test_init(void)
{
	struct ctx c = { };

	seq_buf_init(&out, results, sizeof(results));
	if (serve) {
		server();
		goto done;
	}
	if (hostile) {
		victim();
		goto done;
	}
	c.ibdev = ib_device_get_by_name(dev, RDMA_DRIVER_UNKNOWN);
	CHECK("device_found", c.ibdev, 0);
	if (c.ibdev) {
		test_device(&c);
		test_objects(&c);
		if (c.qp)
			test_fastreg(&c);
		if (c.qp && c.buf)
			test_flush(&c);
		if (c.pd && c.cq)
			test_rma_limits(&c);
		if (c.pd && c.buf)
			test_notify(&c);
		if (c.pd && c.cq && c.buf)
			test_srq(&c);
		teardown(&c);
		test_port_events(c.ibdev);
		test_resolve(c.ibdev);
		ib_device_put(c.ibdev);
		client();
	}
done:
	dir = debugfs_create_dir("scif_rdma_test", NULL);
	debugfs_create_file("results", 0400, dir, NULL, &results_fops);
	return 0;
}

static void __exit scif_rdma_test_exit(void)
{
	debugfs_remove_recursive(dir);
}

module_init(scif_rdma_test_init);
module_exit(scif_rdma_test_exit);
MODULE_DESCRIPTION("Tests of scif_rdma through kernel verbs and rdma_cm");
MODULE_LICENSE("GPL");
