// SPDX-License-Identifier: GPL-2.0
/*
 * scif_verbs_limits: what scif_rdma refuses a user-space program through
 * libibverbs and libscif_rdma (Documentation/scif/rdma.rst, "User
 * verbs"), on one node, with the exact errno: MRs with rights the
 * device does not have (remote atomics ignored: never usable), of no length, or beyond an unprivileged
 * caller's RLIMIT_MEMLOCK; CQs and QPs out of bounds; SRQs; one user's
 * part of PDs, CQs, QPs and MRs (a quarter of user space's share, which
 * is half of each device limit), and the share itself, reached by four
 * users (1001 to 1004; a fifth is refused).  Then create_cq commands of
 * its own with driver data the provider never sends (written to the
 * uverbs file as any process may), and bad mappings of a CQ's ring; the
 * ring stays readable after the context that made it is gone.
 * Prints "PASS name" or "FAIL name" a line (scif_verbs_test.sh makes
 * TAP of them).  Usage: scif_verbs_limits DEVICE (e.g. scif0), as root.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/scif_rdma_abi.h>

/* The device's limits and user space's share (scif_rdma.h). */
#define MAX_QP		256
#define MAX_CQ		256
#define MAX_CQE		65536
#define MAX_INLINE	256	/* a QP's inline bytes (the provider allows 512) */
#define MAX_MR		4096
#define MAX_PD		256
#define MAX_SRQ		64
#define SHARE(max)	((max) / 2)
#define EACH(max)	(SHARE(max) / 4)	/* one user's part of it */
#define SHARE_USERS	5	/* the device-share test's users */

static int failures;

static void verdict(const char *name, int ok, const char *why)
{
	printf("%s %s", ok ? "PASS" : "FAIL", name);
	if (!ok && why)
		printf(" (%s)", why);
	printf("\n");
	fflush(stdout);
	failures += !ok;
}

/* A call that must fail with @want: its errno said. */
static void refused(const char *name, int failed, int err, int want)
{
	char why[64];

	snprintf(why, sizeof(why), "errno %d, want %d", failed ? err : 0, want);
	verdict(name, failed && err == want, why);
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

static void mr_rights(struct ibv_pd *pd, char *buf)
{
	struct ibv_device_attr da;
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_MW_BIND |
			IBV_ACCESS_LOCAL_WRITE);
	refused("mr_mw_bind_eopnotsupp", !mr, errno, EOPNOTSUPP);
	if (mr)
		ibv_dereg_mr(mr);
	/* Never usable (no atomics), so ignored: libfabric asks for it. */
	mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_REMOTE_ATOMIC |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE);
	verdict("mr_atomic_ignored", mr && !ibv_query_device(pd->context, &da) &&
		da.atomic_cap == IBV_ATOMIC_NONE, strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	errno = 0;
	mr = ibv_reg_mr(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE);
	refused("mr_no_length_einval", !mr, errno, EINVAL);
	if (mr)
		ibv_dereg_mr(mr);
	mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_RELAXED_ORDERING);
	verdict("mr_relaxed_ordering_ignored", mr != NULL, strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
}

/* An RC QP of one work request each way on @cq. */
static void rc_attr(struct ibv_qp_init_attr *qa, struct ibv_cq *cq)
{
	memset(qa, 0, sizeof(*qa));
	qa->qp_type = IBV_QPT_RC;
	qa->send_cq = cq;
	qa->recv_cq = cq;
	qa->cap.max_send_wr = 1;
	qa->cap.max_recv_wr = 1;
	qa->cap.max_send_sge = 1;
	qa->cap.max_recv_sge = 1;
}

/* A QP that must be refused with EINVAL. */
static void qp_refused(struct ibv_pd *pd, struct ibv_qp_init_attr *qa,
		       const char *name)
{
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_create_qp(pd, qa);
	refused(name, !qp, errno, EINVAL);
	if (qp)
		ibv_destroy_qp(qp);
}

/*
 * Inline data: up to 512 bytes a work request (the provider's slots),
 * what the QP was created with reported back by ibv_query_qp, and a
 * longer inline work request refused before it is posted.
 */
static void inline_bounds(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr qa, init;
	struct ibv_send_wr wr, *bad = NULL;
	static char data[MAX_INLINE + 1];
	struct ibv_sge sge;
	struct ibv_qp_attr attr;
	struct ibv_qp *qp;

	rc_attr(&qa, cq);
	qa.cap.max_inline_data = 513;
	qp_refused(pd, &qa, "qp_inline_over_max_einval");
	rc_attr(&qa, cq);
	qa.cap.max_inline_data = MAX_INLINE;
	qp = ibv_create_qp(pd, &qa);
	verdict("qp_inline_created", qp != NULL, strerror(errno));
	if (!qp)
		return;
	memset(&attr, 0, sizeof(attr));
	verdict("qp_inline_queried",
		!ibv_query_qp(qp, &attr, IBV_QP_CAP, &init) &&
		attr.cap.max_inline_data == MAX_INLINE &&
		init.cap.max_inline_data == MAX_INLINE, "max_inline_data");
	sge.addr = (uintptr_t)data;
	sge.length = MAX_INLINE + 1;
	sge.lkey = 0;
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_INLINE;
	verdict("post_inline_too_long_einval",
		ibv_post_send(qp, &wr, &bad) == EINVAL && bad == &wr,
		"post_send");
	ibv_destroy_qp(qp);
}

/*
 * SRQs: one over 4096 work requests refused (EINVAL); one of 16 made and
 * queried; a receive with more SGEs than it takes refused (EINVAL).
 */
static void srq_bounds(struct ibv_pd *pd)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4097, .max_sge = 1 } };
	struct ibv_recv_wr wr = { .num_sge = 2 }, *bad = NULL;
	struct ibv_sge sge[2] = {};
	struct ibv_srq_attr attr;
	struct ibv_srq *srq;

	errno = 0;
	srq = ibv_create_srq(pd, &sa);
	refused("srq_over_max_wr_einval", !srq, errno, EINVAL);
	if (srq)
		ibv_destroy_srq(srq);
	sa.attr.max_wr = 16;
	srq = ibv_create_srq(pd, &sa);
	verdict("srq_created", srq != NULL, strerror(errno));
	if (!srq)
		return;
	verdict("srq_queried", !ibv_query_srq(srq, &attr) &&
		attr.max_wr >= 16 && attr.max_sge >= 1, "query_srq");
	wr.sg_list = sge;
	verdict("srq_recv_too_many_sges_einval",
		ibv_post_srq_recv(srq, &wr, &bad) == EINVAL && bad == &wr,
		"post_srq_recv");
	ibv_destroy_srq(srq);
}

static void cq_qp_bounds(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_qp_init_attr qa;
	struct ibv_cq *cq;

	errno = 0;
	cq = ibv_create_cq(ctx, MAX_CQE + 1, NULL, NULL, 0);
	refused("cq_over_max_cqe_einval", !cq, errno, EINVAL);
	if (cq)
		ibv_destroy_cq(cq);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!cq) {
		verdict("cq_created", 0, strerror(errno));
		return;
	}
	inline_bounds(pd, cq);
	rc_attr(&qa, cq);
	qa.cap.max_send_wr = 1025;
	qp_refused(pd, &qa, "qp_over_max_wr_einval");
	srq_bounds(pd);
	ibv_destroy_cq(cq);
}

/* What the share tests make their objects of. */
struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	char *buf;
};

/*
 * A kind of object: how one is made (NULL and errno when refused) and
 * dropped, and user space's share of it.
 */
struct kind {
	const char *name;
	int share;
	void *(*make)(struct env *env);
	void (*drop)(void *obj);
};

static void *make_qp(struct env *env)
{
	struct ibv_qp_init_attr qa;

	rc_attr(&qa, env->cq);
	return ibv_create_qp(env->pd, &qa);
}

static void *make_cq(struct env *env)
{
	return ibv_create_cq(env->ctx, 1, NULL, NULL, 0);
}

static void *make_pd(struct env *env)
{
	return ibv_alloc_pd(env->ctx);
}

static void *make_mr(struct env *env)
{
	return ibv_reg_mr(env->pd, env->buf, 4096, IBV_ACCESS_LOCAL_WRITE);
}

static void *make_srq(struct env *env)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 1, .max_sge = 1 } };

	return ibv_create_srq(env->pd, &sa);
}

static void drop_srq(void *srq)
{
	ibv_destroy_srq(srq);
}

static void drop_qp(void *qp)
{
	ibv_destroy_qp(qp);
}

static void drop_cq(void *cq)
{
	ibv_destroy_cq(cq);
}

static void drop_pd(void *pd)
{
	ibv_dealloc_pd(pd);
}

static void drop_mr(void *mr)
{
	ibv_dereg_mr(mr);
}

/*
 * Objects of @k made until one is refused: this user's part of user
 * space's share of the device (less the @held ones made before), then
 * ENOMEM.
 */
static void share(const struct kind *k, struct env *env, int held)
{
	void **objs = calloc(k->share + 2, sizeof(*objs));
	int made = 0, err = 0;
	char name[64], why[64];

	snprintf(name, sizeof(name), "%s_user_part", k->name);
	if (!objs) {
		verdict(name, 0, "calloc");
		return;
	}
	while (made <= k->share) {
		errno = 0;
		objs[made] = k->make(env);
		if (!objs[made]) {
			err = errno;
			break;
		}
		made++;
	}
	snprintf(why, sizeof(why), "%d made, then errno %d", made, err);
	verdict(name, made + held == k->share && err == ENOMEM, why);
	while (made)
		k->drop(objs[--made]);
	free(objs);
}

static void shares(struct env *env)
{
	static const struct kind kinds[] = {
		{ "qp", EACH(MAX_QP), make_qp, drop_qp },
		{ "cq", EACH(MAX_CQ), make_cq, drop_cq },
		{ "pd", EACH(MAX_PD), make_pd, drop_pd },
		{ "mr", EACH(MAX_MR), make_mr, drop_mr },
		{ "srq", EACH(MAX_SRQ), make_srq, drop_srq },
	};
	unsigned int i;

	env->cq = ibv_create_cq(env->ctx, 16, NULL, NULL, 0);
	if (!env->cq) {
		verdict("share_cq", 0, strerror(errno));
		return;
	}
	/* This process holds one PD (env's) and one CQ (env's) already. */
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		share(&kinds[i], env, !strcmp(kinds[i].name, "pd") ||
		      !strcmp(kinds[i].name, "cq"));
	ibv_destroy_cq(env->cq);
}

/*
 * A user (@uid) of the device-share test: PDs, then CQs, made until one
 * is refused; how many of each and the errno that ended them written to
 * @out; then held until @in closes.
 */
static void share_child(const char *dev, uid_t uid, int out, int in)
{
	int got[4] = { -1, 0, -1, 0 }, n, i;
	struct ibv_context *ctx;
	char c;

	if (!setgid(uid) && !setuid(uid) && (ctx = open_dev(dev))) {
		for (i = 0; i < 2; i++) {
			for (n = 0; n <= SHARE(MAX_PD); n++) {
				errno = 0;
				if (!(i ? (void *)ibv_create_cq(ctx, 1, NULL, NULL, 0) :
					  (void *)ibv_alloc_pd(ctx)))
					break;
			}
			got[2 * i] = n;
			got[2 * i + 1] = errno;
		}
	}
	if (write(out, got, sizeof(got)) != sizeof(got))
		_exit(1);
	while (read(in, &c, 1) > 0)
		;
	_exit(0);	/* its objects go with its file */
}

/*
 * Users 1001 to 1005, one after another, each holding what it made:
 * the first four get their part of PDs and CQs each (the fourth one PD
 * less: this process holds one), the fifth none, refused with ENOMEM
 * (user space's share is four users' parts).
 */
static void device_share(const char *dev)
{
	int got[SHARE_USERS][4], res[2], rel[2], u, want_pd, want_cq, ok = 1;
	char why[160] = "";
	pid_t pids[SHARE_USERS];

	if (pipe(res) || pipe(rel)) {
		verdict("device_share", 0, "pipe");
		return;
	}
	for (u = 0; u < SHARE_USERS; u++) {
		pids[u] = fork();
		if (pids[u] == 0) {
			close(rel[1]);
			share_child(dev, 1001 + u, res[1], rel[0]);
		}
		if (pids[u] < 0 ||
		    read(res[0], got[u], sizeof(got[u])) != sizeof(got[u])) {
			got[u][0] = -2;
			got[u][2] = -2;
		}
		want_pd = u < 3 ? EACH(MAX_PD) : u == 3 ? EACH(MAX_PD) - 1 : 0;
		want_cq = u < 4 ? EACH(MAX_CQ) : 0;
		if (got[u][0] != want_pd || got[u][1] != ENOMEM ||
		    got[u][2] != want_cq || got[u][3] != ENOMEM) {
			ok = 0;
			snprintf(why, sizeof(why),
				 "user %d: %d PDs (errno %d), %d CQs (errno %d)",
				 1001 + u, got[u][0], got[u][1], got[u][2],
				 got[u][3]);
		}
	}
	close(rel[1]);
	for (u = 0; u < SHARE_USERS; u++)
		if (pids[u] > 0)
			waitpid(pids[u], NULL, 0);
	close(rel[0]);
	close(res[0]);
	close(res[1]);
	verdict("device_share_four_users", ok, why);
}

/*
 * An unprivileged process (nobody) with RLIMIT_MEMLOCK of 1 MiB: 512 KiB
 * may be registered, 4 MiB more may not (ENOMEM).
 */
static int memlock_child(const char *dev)
{
	struct rlimit rl = { 1 << 20, 1 << 20 };
	struct ibv_mr *small, *big;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	char *buf;

	if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgid(65534) || setuid(65534))
		return 2;
	ctx = open_dev(dev);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	buf = aligned_alloc(4096, 5 << 20);
	if (!pd || !buf)
		return 3;
	memset(buf, 1, 5 << 20);
	small = ibv_reg_mr(pd, buf, 512 << 10, IBV_ACCESS_LOCAL_WRITE);
	errno = 0;
	big = ibv_reg_mr(pd, buf + (1 << 20), 4 << 20, IBV_ACCESS_LOCAL_WRITE);
	if (!small)
		return 4;
	if (big || errno != ENOMEM)
		return 5;
	ibv_dereg_mr(small);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}

static void memlock(const char *dev)
{
	char why[32];
	pid_t pid;
	int st;

	pid = fork();
	if (pid == 0)
		_exit(memlock_child(dev));
	if (pid < 0 || waitpid(pid, &st, 0) != pid) {
		verdict("mr_memlock_unprivileged", 0, "fork");
		return;
	}
	snprintf(why, sizeof(why), "child status %d",
		 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	verdict("mr_memlock_unprivileged", WIFEXITED(st) && !WEXITSTATUS(st),
		why);
}

/* A create_cq with driver data: the write() command's result, or -errno. */
static int raw_create_cq(int fd, const void *drv, size_t drv_len,
			 struct scif_rdma_create_cq_resp *out, size_t out_len,
			 uint32_t *handle)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_create_cq core;
		unsigned char drv[16];
	} cmd = {};
	struct {
		struct ib_uverbs_create_cq_resp core;
		struct scif_rdma_create_cq_resp drv;
	} resp = {};
	size_t len = sizeof(cmd.hdr) + sizeof(cmd.core) + drv_len;

	cmd.hdr.command = IB_USER_VERBS_CMD_CREATE_CQ;
	cmd.hdr.in_words = len / 4;
	cmd.hdr.out_words = (sizeof(resp.core) + out_len) / 4;
	cmd.core.response = (uintptr_t)&resp;
	cmd.core.cqe = 16;
	cmd.core.comp_channel = -1;
	memcpy(cmd.drv, drv, drv_len);
	if (write(fd, &cmd, len) != (ssize_t)len)
		return -errno;
	if (out)
		*out = resp.drv;
	*handle = resp.core.cq_handle;
	return 0;
}

/* A destroy_cq command: 0 or -errno. */
static int raw_destroy_cq(int fd, uint32_t handle)
{
	struct ib_uverbs_destroy_cq_resp resp;
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_destroy_cq core;
	} cmd = {
		.hdr = { .command = IB_USER_VERBS_CMD_DESTROY_CQ,
			 .in_words = sizeof(cmd) / 4,
			 .out_words = sizeof(resp) / 4 },
		.core = { .response = (uintptr_t)&resp, .cq_handle = handle },
	};

	return write(fd, &cmd, sizeof(cmd)) == sizeof(cmd) ? 0 : -errno;
}

/* An mmap that must fail: its errno, or 0 (unmapped again) if it did not. */
static int map_errno(int fd, size_t len, int prot, int flags, uint64_t off)
{
	void *p = mmap(NULL, len, prot, flags, fd, off);

	if (p == MAP_FAILED)
		return errno;
	munmap(p, len);
	return 0;
}

/* Driver data of create_cq, and mappings of a CQ's ring. */
static void cq_driver_data(const char *dev)
{
	struct ibv_context *ctx = open_dev(dev);
	uint64_t flags[2] = { SCIF_RDMA_CQ_MAPPED, 0 }, bad = 2;
	struct scif_rdma_create_cq_resp r = {};
	volatile struct scif_rdma_cq_ring *ring;
	uint32_t h;
	size_t len;
	int ret;

	if (!ctx) {
		verdict("cq_driver_data_context", 0, strerror(errno));
		return;
	}
	ret = raw_create_cq(ctx->cmd_fd, &bad, 8, &r, sizeof(r), &h);
	refused("cq_unknown_flag_einval", ret < 0, -ret, EINVAL);
	ret = raw_create_cq(ctx->cmd_fd, flags, 16, &r, sizeof(r), &h);
	refused("cq_request_too_long_einval", ret < 0, -ret, EINVAL);
	ret = raw_create_cq(ctx->cmd_fd, flags, 8, NULL, 0, &h);
	refused("cq_no_room_for_answer_einval", ret < 0, -ret, EINVAL);
	ret = raw_create_cq(ctx->cmd_fd, flags, 8, &r, sizeof(r), &h);
	verdict("cq_mapped_created", !ret && r.entries == 16 &&
		r.ring_bytes && !(r.ring_bytes % 4096), strerror(-ret));
	if (ret || !r.ring_bytes) {
		ibv_close_device(ctx);
		return;
	}
	len = r.ring_bytes;
	ret = map_errno(ctx->cmd_fd, len, PROT_READ | PROT_WRITE, MAP_PRIVATE,
			r.mmap_offset);
	refused("cq_ring_private_einval", ret, ret, EINVAL);
	ret = map_errno(ctx->cmd_fd, len, PROT_READ | PROT_EXEC, MAP_SHARED,
			r.mmap_offset);
	refused("cq_ring_exec_einval", ret, ret, EINVAL);
	ret = map_errno(ctx->cmd_fd, len + 4096, PROT_READ, MAP_SHARED,
			r.mmap_offset);
	refused("cq_ring_wrong_size_einval", ret, ret, EINVAL);
	ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		    ctx->cmd_fd, r.mmap_offset);
	verdict("cq_ring_mapped_zeroed", ring != MAP_FAILED && !ring->head &&
		!ring->tail && !ring->cqe[15].wr_id, strerror(errno));
	ret = raw_destroy_cq(ctx->cmd_fd, h);
	verdict("cq_mapped_destroyed", !ret, strerror(-ret));
	if (ring != MAP_FAILED) {
		/* The CQ is gone: the pages stay ours until munmap. */
		ring->head = 7;
		verdict("cq_ring_outlives_cq", ring->head == 7 && !ring->tail,
			NULL);
		ret = map_errno(ctx->cmd_fd, len, PROT_READ, MAP_SHARED,
				r.mmap_offset);
		refused("cq_ring_of_destroyed_cq_einval", ret, ret, EINVAL);
		munmap((void *)ring, len);
	}
	ibv_close_device(ctx);
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct env env;
	struct ibv_pd *pd;
	char *buf;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
		return 2;
	}
	ctx = open_dev(argv[1]);
	if (!ctx) {
		verdict("device_opened", 0, strerror(errno));
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, 4096);
	if (!pd || !buf) {
		verdict("pd_allocated", 0, strerror(errno));
		return 1;
	}
	memset(buf, 0, 4096);
	mr_rights(pd, buf);
	cq_qp_bounds(ctx, pd);
	env = (struct env){ .ctx = ctx, .pd = pd, .buf = buf };
	shares(&env);
	device_share(argv[1]);
	memlock(argv[1]);
	cq_driver_data(argv[1]);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(buf);
	return failures ? 1 : 0;
}
