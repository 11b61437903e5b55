// SPDX-License-Identifier: GPL-2.0
/*
 * Test module for scif_rdma (Documentation/scif/rdma.rst): the tests
 * run as it loads, against the device named by dev= (made by "rdma link
 * add" on the scif_net interface netdev=), through ib_core's kernel
 * verbs and rdma_cm, as a kernel ULP would use them.  TAP lines in
 * <debugfs>/scif_rdma_test/results (scif_rdma_test.sh prints them).
 */

#include <linux/debugfs.h>
#include <linux/etherdevice.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/scatterlist.h>
#include <linux/seq_buf.h>
#include <linux/slab.h>
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

/* One completion within a second, or status -1. */
static struct ib_wc poll_one(struct ib_cq *cq)
{
	struct ib_wc wc = { .status = -1 };
	int i;

	for (i = 0; i < 1000; i++) {
		if (ib_poll_cq(cq, 1, &wc) == 1)
			return wc;
		usleep_range(1000, 2000);
	}
	wc.status = -1;
	return wc;
}

static struct ib_qp *make_qp(struct ctx *c, int max_wr)
{
	struct ib_qp_init_attr a = {
		.send_cq = c->cq,
		.recv_cq = c->cq,
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = max_wr, .max_recv_wr = max_wr,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ib_create_qp(c->pd, &a);
}

static void test_objects(struct ctx *c)
{
	struct ib_cq_init_attr big = { .cqe = 4097 };
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
	CHECK("qp_starts_reset", qp_state(c->qp) == IB_QPS_RESET,
	      qp_state(c->qp));
	CHECK("reset_to_rts_refused", modify(c->qp, IB_QPS_RTS) == -EINVAL,
	      qp_state(c->qp));
	CHECK("qp_to_rts", !modify(c->qp, IB_QPS_INIT) &&
	      !modify(c->qp, IB_QPS_RTR) && !modify(c->qp, IB_QPS_RTS) &&
	      qp_state(c->qp) == IB_QPS_RTS, qp_state(c->qp));
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
	c.ibdev = ib_device_get_by_name(dev, RDMA_DRIVER_UNKNOWN);
	CHECK("device_found", c.ibdev, 0);
	if (c.ibdev) {
		test_device(&c);
		test_objects(&c);
		if (c.qp)
			test_fastreg(&c);
		if (c.qp && c.buf)
			test_flush(&c);
		teardown(&c);
		test_resolve(c.ibdev);
		ib_device_put(c.ibdev);
	}
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
