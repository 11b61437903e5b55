// SPDX-License-Identifier: GPL-2.0
/*
 * scif_verbs_direct: RDMA WRITEs and READs that the provider does itself,
 * through a mapping of the peer's window (rdma.rst, "WRITEs and READs
 * without a system call"), between two nodes through libibverbs and
 * librdmacm, as a program written for any RDMA device uses them.
 *
 *   scif_verbs_direct -s ADDR PORT   the server: listens on ADDR:PORT
 *   scif_verbs_direct -c ADDR PORT   the client: connects to it
 *
 * The server registers LEN bytes of whole pages (remote read and write)
 * and sends their address and key.  The client's QP has CQs of its own,
 * without a completion channel.  Three signaled 8-byte WRITEs go first
 * (the kernel's: the first to a key goes in a frame, the second asks for
 * the key's window, which the QP's info page then shows).  Then, from a
 * thread that a seccomp filter forbids ioctl, read and write (the system
 * calls of every uverbs command: where the kernel has no seccomp, as the
 * debug kernel, unfiltered, as the row says), the client WRITEs a
 * pattern over the whole MR in pieces of odd lengths and offsets, every
 * other one unsignaled, polls the completions, and READs the MR back in
 * other pieces, compared byte for byte; the server checks its memory.
 * Then a SEND too large for the poster (the kernel's send worker sends
 * it) and four WRITEs posted one by one: the provider waits for the
 * SEND, does the WRITEs, and the five complete in order.
 * Last the server deregisters its MR: the client's next WRITE to the key
 * (its mapping revoked under it) must not kill it but complete with a
 * remote access error, and the server's memory must be untouched.
 * scif_verbs_test.sh checks the kernel's counters around the run: the
 * window was mapped, and the kernel moved only the first WRITEs.
 *
 * TAP rows ("ok N name" / "not ok N name # why") from each side; exit 0
 * if all passed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <sys/mman.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include "scif_rdmacm.h"
#include "scif.h"
#include "scif_rows.h"

#define LEN	(64 * 1024L)	/* the server's MR */
#define PG	4096L
#define SEED_S	0x5e7U		/* the server's bytes at first */
#define SEED_W	0xd1ec7U	/* the client's WRITEs */
#define SEED_X	0xbadU		/* the WRITE after the deregistration */
#define SEED_B	0xb16U		/* the large SEND's bytes */
#define MSG	64
#define SLOT	(40 * 1024L)	/* a receive of the server's */
#define BIG	(32 * 1024L)	/* the SEND the send worker sends */
#define DEPTH	64

struct info {		/* the server's MR, sent to the client first */
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
};

/* The pieces the MR is written in, and read back in (sums of LEN). */
static const uint32_t wpiece[] = { 1, 7, 100, 4000, 8192, 4096, 3, 20000,
				   12345, 16792, 0 };
static const uint32_t rpiece[] = { 4095, 2, 30000, 1, 31438, 0 };

static void qp_attr(struct ibv_qp_init_attr *qa, struct ibv_cq *cq,
		    struct ibv_cq *rcq)
{
	memset(qa, 0, sizeof(*qa));
	qa->qp_type = IBV_QPT_RC;
	qa->send_cq = cq;
	qa->recv_cq = rcq;
	qa->sq_sig_all = cq ? 0 : 1;
	qa->cap.max_send_wr = DEPTH;
	qa->cap.max_recv_wr = 4;
	qa->cap.max_send_sge = 1;
	qa->cap.max_recv_sge = 1;
}

/* @p holds the bytes fill() makes of @seed from byte @skip on. */
static bool same(const uint8_t *p, size_t len, uint32_t seed, size_t skip)
{
	static uint8_t want[LEN];
	long i;

	fill(want, LEN, seed);
	i = differs(p, want + skip, len);
	return expect(i < 0, "byte %ld is %#x, want %#x", (long)skip + i,
		      i < 0 ? 0 : p[i], i < 0 ? 0 : want[skip + i]);
}

/* The server's side, on rdma_cm's CQs (with their channels). */

static bool srv_got(struct rdma_cm_id *id, const char *buf, const char *want)
{
	struct ibv_wc wc;

	if (rdma_get_recv_comp(id, &wc) <= 0 || wc.status)
		return expect(false, "receive of \"%s\": status %d", want,
			      wc.status);
	return expect(!strcmp(buf + wc.wr_id * SLOT, want),
		      "got \"%.8s\", want \"%s\"", buf + wc.wr_id * SLOT, want);
}

/* The large SEND, in slot 1. */
static bool srv_got_big(struct rdma_cm_id *id, const char *buf)
{
	struct ibv_wc wc;

	if (rdma_get_recv_comp(id, &wc) <= 0 || wc.status)
		return expect(false, "receive: status %d", wc.status);
	return expect(wc.wr_id == 1 && wc.byte_len == BIG,
		      "slot %llu, %u bytes", (unsigned long long)wc.wr_id,
		      wc.byte_len) &&
	       same((const uint8_t *)buf + SLOT, BIG, SEED_B, 0);
}

static bool srv_send(struct rdma_cm_id *id, char *buf, struct ibv_mr *mr,
		     const char *msg)
{
	struct ibv_wc wc;

	snprintf(buf + 3 * SLOT, MSG, "%s", msg);
	if (rdma_post_send(id, NULL, buf + 3 * SLOT, strlen(msg) + 1, mr, 0) ||
	    rdma_get_send_comp(id, &wc) <= 0 || wc.status)
		return expect(false, "send of \"%s\" failed", msg);
	return true;
}

static bool access_error_seen(struct rdma_cm_id *id)
{
	return expect(rdmacm_event_seen(id, IBV_EVENT_QP_ACCESS_ERR, "server"),
		      "no IBV_EVENT_QP_ACCESS_ERR within 20 s");
}

static void serve(struct rdma_cm_id *id, uint8_t *mem, struct ibv_mr *mr,
		  char *msgs, struct ibv_mr *mmr)
{
	struct info *info = (struct info *)(msgs + 3 * SLOT);
	struct ibv_wc wc;

	info->addr = (uintptr_t)mem;
	info->rkey = mr->rkey;
	info->len = LEN;
	if (rdma_post_send(id, NULL, info, sizeof(*info), mmr, 0) ||
	    rdma_get_send_comp(id, &wc) <= 0 || wc.status) {
		result("key_sent", expect(false, "send failed"));
		return;
	}
	result("writes_landed", srv_got(id, msgs, "written") &&
	       same(mem, LEN, SEED_W, 0));
	result("large_send_received", srv_got_big(id, msgs));
	result("dereg_asked", srv_got(id, msgs, "dereg"));
	result("mr_deregistered", expect(!ibv_dereg_mr(mr), "ibv_dereg_mr: %s",
					 strerror(errno)));
	result("gone_sent", srv_send(id, msgs, mmr, "gone"));
	result("late_write_access_error", access_error_seen(id));
	result("late_write_touched_nothing", same(mem, LEN, SEED_W, 0));
}

static int server(const char *addr, const char *port)
{
	struct rdma_cm_id *lid, *id;
	struct ibv_qp_init_attr qa;
	struct ibv_mr *mr, *mmr;
	uint8_t *mem;
	char *msgs;
	int i;

	printf("TAP version 13\n");
	lid = rdmacm_endpoint(addr, port, 1, NULL);
	if (!lid || rdma_listen(lid, 1) || rdma_get_request(lid, &id)) {
		result("listen", expect(false, "%s", strerror(errno)));
		return 1;
	}
	qp_attr(&qa, NULL, NULL);
	msgs = calloc(4, SLOT);
	if (!msgs || posix_memalign((void **)&mem, PG, LEN) ||
	    rdma_create_qp(id, NULL, &qa)) {
		result("setup", expect(false, "%s", strerror(errno)));
		return 1;
	}
	fill(mem, LEN, SEED_S);
	mr = ibv_reg_mr(id->pd, mem, LEN, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	mmr = rdma_reg_msgs(id, msgs, 4 * SLOT);
	for (i = 0; mr && mmr && i < 3; i++)
		if (rdma_post_recv(id, (void *)(uintptr_t)i, msgs + i * SLOT,
				   SLOT, mmr))
			mr = NULL;
	if (!mr || !mmr || rdma_accept(id, NULL)) {
		result("accepted", expect(false, "%s", strerror(errno)));
		return 1;
	}
	serve(id, mem, mr, msgs, mmr);
	rdma_disconnect(id);
	rdma_dereg_mr(mmr);
	rdma_destroy_ep(id);
	rdma_destroy_ep(lid);
	free(mem);
	printf("1..%d\n", nr_test);
	return nr_fail != 0;
}

/* The client's side, on CQs of its own without a channel. */

struct cli {
	struct rdma_cm_id *id;
	struct ibv_cq *scq, *rcq;
	struct ibv_mr *bmr, *mmr;
	uint8_t *buf;
	char *msgs;
	struct info info;
};

/* One completion of @cq within 20 s: its status, or -1. */
static int comp(struct ibv_cq *cq, struct ibv_wc *wc)
{
	struct timespec t0, t;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? -1 : (int)wc->status;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 20);
	return -1;
}

/* Post one WRITE or READ of @len at @off of the MR, from @buf + @off. */
static int post(struct cli *c, int write, uint64_t off, uint32_t len,
		int signaled, uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->buf + off, .length = len,
		.lkey = c->bmr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
		.send_flags = signaled ? IBV_SEND_SIGNALED : 0,
		.wr.rdma = { .remote_addr = c->info.addr + off,
			     .rkey = c->info.rkey },
	}, *bad;

	return ibv_post_send(c->id->qp, &wr, &bad);
}

static bool cli_send(struct cli *c, const char *msg)
{
	struct ibv_wc wc;

	snprintf(c->msgs + 3 * MSG, MSG, "%s", msg);
	if (rdma_post_send(c->id, NULL, c->msgs + 3 * MSG, strlen(msg) + 1,
			   c->mmr, IBV_SEND_SIGNALED) || comp(c->scq, &wc))
		return expect(false, "send of \"%s\" failed", msg);
	return true;
}

static bool cli_got(struct cli *c, const char *want)
{
	struct ibv_wc wc;

	if (comp(c->rcq, &wc))
		return expect(false, "receive of \"%s\" failed", want);
	return expect(!strcmp(c->msgs + wc.wr_id * MSG, want),
		      "got \"%.8s\", want \"%s\"", c->msgs + wc.wr_id * MSG,
		      want);
}

/* The WRITEs and READs with no ioctl/read/write, in a thread. */
struct nosys {
	struct cli *c;
	int filtered, err;
	char why[128];
};

/* Each piece of @piece, every other one signaled; completions checked. */
static int pieces(struct nosys *ns, int write, const uint32_t *piece)
{
	uint64_t off = 0, i, n;
	struct ibv_wc wc;
	int st;

	for (n = 0; piece[n]; n++)
		;
	for (i = 0; i < n; off += piece[i++]) {
		if (post(ns->c, write, off, piece[i], i % 2 == 0, i)) {
			snprintf(ns->why, sizeof(ns->why), "%s %llu: post: %s",
				 write ? "WRITE" : "READ",
				 (unsigned long long)i, strerror(errno));
			return -1;
		}
	}
	for (i = 0; i < n; i += 2) {
		st = comp(ns->c->scq, &wc);
		if (st || wc.wr_id != i ||
		    wc.opcode != (write ? IBV_WC_RDMA_WRITE : IBV_WC_RDMA_READ)) {
			snprintf(ns->why, sizeof(ns->why),
				 "%s completion %llu: status %d, wr_id %llu",
				 write ? "WRITE" : "READ",
				 (unsigned long long)i, st,
				 (unsigned long long)wc.wr_id);
			return -1;
		}
	}
	return off == LEN ? 0 : -1;
}

static void *nosys_fn(void *arg)
{
	struct nosys *ns = arg;
	int ret = rdmacm_deny_uverbs();

	if (ret < 0) {
		ns->err = -ret;
		return NULL;
	}
	ns->filtered = ret;
	fill(ns->c->buf, LEN, SEED_W);
	if (pieces(ns, 1, wpiece)) {
		ns->err = EIO;
		return NULL;
	}
	memset(ns->c->buf, 0, LEN);
	if (pieces(ns, 0, rpiece))
		ns->err = EIO;
	return NULL;
}

/*
 * A SEND the kernel's send worker sends (too large for the poster), then
 * four WRITEs, each posted alone: the provider waits for the SEND to be
 * done, does them, and the five complete in order.
 */
static bool send_then_writes(struct cli *c)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->buf, .length = BIG, .lkey = c->bmr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 300, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;
	int i, st;

	fill(c->buf, BIG, SEED_B);
	if (ibv_post_send(c->id->qp, &wr, &bad))
		return expect(false, "SEND: %s", strerror(errno));
	/* Bytes the MR holds already (SEED_W), past the SEND's. */
	for (i = 0; i < 4; i++)
		if (post(c, 1, LEN - 64 + 8 * i, 8, 1, 301 + i))
			return expect(false, "WRITE %d: %s", i, strerror(errno));
	for (i = 0; i < 5; i++) {
		st = comp(c->scq, &wc);
		if (st || wc.wr_id != (uint64_t)300 + i)
			return expect(false, "completion %d: status %d, wr_id %llu",
				      i, st, (unsigned long long)wc.wr_id);
	}
	return true;
}

static void exchange(struct cli *c)
{
	struct nosys ns = { .c = c };
	struct ibv_wc wc;
	pthread_t th;
	int i, st;

	/* The kernel's: a frame, then the key's window asked for. */
	for (i = 0, st = 0; i < 3 && !st; i++)
		st = post(c, 1, 8 * i, 8, 1, 100 + i) ?: comp(c->scq, &wc);
	result("first_writes_by_kernel", expect(!st, "status %d", st));
	/*
	 * The kernel completes a work request before it stops counting it
	 * in the QP's info page: give it that moment before the thread
	 * that may no longer enter the kernel posts.
	 */
	usleep(200000);
	if (pthread_create(&th, NULL, nosys_fn, &ns) || pthread_join(th, NULL))
		ns.err = EAGAIN;
	printf("# client: WRITEs and READs %s\n", ns.filtered ?
	       "with ioctl, read and write forbidden" :
	       "unfiltered (no seccomp in this kernel)");
	result("writes_reads_without_system_call",
	       expect(!ns.err, "%s %s", strerror(ns.err), ns.why));
	result("read_back_matches", expect(!ns.err, "not read") &&
	       same(c->buf, LEN, SEED_W, 0));
	result("written_sent", cli_send(c, "written"));
	result("send_then_writes_in_order", send_then_writes(c));
	result("dereg_sent", cli_send(c, "dereg"));
	result("gone_told", cli_got(c, "gone"));
	/* Its window is revoked: no signal, an error completion. */
	fill(c->buf, LEN, SEED_X);
	st = post(c, 1, PG - 4, 8, 1, 200) ?: comp(c->scq, &wc);
	result("late_write_remote_access_error",
	       expect(st == IBV_WC_REM_ACCESS_ERR, "status %d (%s)", st,
		      st > 0 ? ibv_wc_status_str(st) : "-"));
}

static int client(const char *addr, const char *port)
{
	struct ibv_qp_init_attr qa;
	struct cli c = {};
	struct ibv_pd *pd;
	struct ibv_wc wc;
	int i;

	printf("TAP version 13\n");
	c.id = rdmacm_endpoint(addr, port, 0, NULL);
	c.msgs = calloc(4, MSG);
	if (!c.id || !c.msgs || posix_memalign((void **)&c.buf, PG, LEN))
		return 1;
	pd = ibv_alloc_pd(c.id->verbs);
	c.scq = pd ? ibv_create_cq(c.id->verbs, DEPTH, NULL, NULL, 0) : NULL;
	c.rcq = c.scq ? ibv_create_cq(c.id->verbs, 4, NULL, NULL, 0) : NULL;
	qp_attr(&qa, c.scq, c.rcq);
	if (!c.rcq || rdma_create_qp(c.id, pd, &qa)) {
		result("qp", expect(false, "%s", strerror(errno)));
		return 1;
	}
	c.mmr = ibv_reg_mr(pd, c.msgs, 4 * MSG, IBV_ACCESS_LOCAL_WRITE);
	c.bmr = ibv_reg_mr(pd, c.buf, LEN, IBV_ACCESS_LOCAL_WRITE);
	for (i = 0; c.mmr && c.bmr && i < 3; i++)
		if (rdma_post_recv(c.id, (void *)(uintptr_t)i, c.msgs + i * MSG,
				   MSG, c.mmr))
			c.bmr = NULL;
	if (!c.mmr || !c.bmr || rdma_connect(c.id, NULL)) {
		result("connected", expect(false, "connect: %s", strerror(errno)));
		return 1;
	}
	if (comp(c.rcq, &wc)) {
		result("key_received", expect(false, "status %d", wc.status));
		return 1;
	}
	memcpy(&c.info, c.msgs + wc.wr_id * MSG, sizeof(c.info));
	exchange(&c);
	rdma_disconnect(c.id);
	ibv_dereg_mr(c.bmr);
	ibv_dereg_mr(c.mmr);
	rdma_destroy_qp(c.id);
	ibv_destroy_cq(c.scq);
	ibv_destroy_cq(c.rcq);
	ibv_dealloc_pd(pd);
	rdma_destroy_id(c.id);
	free(c.buf);
	printf("1..%d\n", nr_test);
	return nr_fail != 0;
}

int main(int argc, char **argv)
{
	if (argc != 4 || (strcmp(argv[1], "-s") && strcmp(argv[1], "-c"))) {
		fprintf(stderr, "usage: %s -s|-c ADDR PORT\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	return argv[1][1] == 's' ? server(argv[2], argv[3]) :
				   client(argv[2], argv[3]);
}
