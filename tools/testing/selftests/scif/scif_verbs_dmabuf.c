// SPDX-License-Identifier: GPL-2.0
/*
 * scif_verbs_dmabuf: an MR over a SCIF dma-buf (rdma.rst, "dma-buf
 * MRs"; devices.rst, "The importers") reached by the other node's RDMA
 * WRITEs and READs through libibverbs and librdmacm.
 *
 *   scif_verbs_dmabuf -s ADDR PORT   the server (the window's owner):
 *                                    listens on ADDR:PORT
 *   scif_verbs_dmabuf -c ADDR PORT   the client: connects to it
 *
 * The server connects a SCIF endpoint to a child through this node's
 * loopback node, registers a 64 KiB window of its own memory, exports
 * it (SCIF_DMABUF_EXPORT) and registers the dma-buf with
 * ibv_reg_dmabuf_mr() on the RDMA device.  First the refusals, each
 * with its errno: a dma-buf of the child's window (a remote range,
 * EOPNOTSUPP), a pipe (EINVAL), no descriptor (EBADF), an offset not
 * page aligned and ranges past the dma-buf (EINVAL), remote write on a
 * read-only export (EACCES).  Then the client RDMA WRITEs a pattern
 * into the MR, which the server finds in its window's memory; the
 * server writes another, which the client RDMA READs (whole and a
 * piece) and compares.  Then the server unregisters its window: the
 * dma-buf is revoked, so the MR is invalid and none of the window's
 * pages stays pinned (SCIF's pinned_pages back to what it was before
 * the window, the child's page alone) while the MR still exists;
 * the client's next WRITE completes in error, the server's QP reports
 * the access error, and its memory is untouched.  Last, nothing is left
 * pinned once everything is closed.
 *
 * TAP rows ("ok N name" / "not ok N name # why") from each side; exit 0
 * if all passed.  Needs root (the remote export asks CAP_SYS_RAWIO).
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include "scif_rdmacm.h"
#include "scif.h"
#include "scif_rows.h"

#define LEN	(64 * 1024L)	/* the window, the MR */
#define PG	4096L
#define L_OFF	0x100000L	/* the server's window */
#define R_OFF	0x200000L	/* the child's page */
#define IOVA	0x40000000ULL	/* the MR's address for the peer */
#define SPORT	2437		/* the child's SCIF port */
#define SEED_A	0xa11ceU	/* the client's WRITE */
#define SEED_B	0xb0bU		/* the server's bytes, READ back */
#define SEED_C	0xc0ffeeU	/* the WRITE after the revocation */
#define MSG	64

struct info {		/* the dma-buf MR, sent to the client first */
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
};

static void qp_attr(struct ibv_qp_init_attr *qa)
{
	memset(qa, 0, sizeof(*qa));
	qa->qp_type = IBV_QPT_RC;
	qa->sq_sig_all = 1;
	qa->cap.max_send_wr = 4;
	qa->cap.max_recv_wr = 4;
	qa->cap.max_send_sge = 1;
	qa->cap.max_recv_sge = 1;
}

static struct rdma_cm_id *endpoint(const char *addr, const char *port,
				   int passive)
{
	struct ibv_qp_init_attr qa;

	qp_attr(&qa);
	return rdmacm_endpoint(addr, port, passive, &qa);
}

/* Post a receive into slot @i of @buf. */
static int post_recv(struct rdma_cm_id *id, char *buf, int i,
		     struct ibv_mr *mr)
{
	return rdma_post_recv(id, NULL, buf + i * MSG, MSG, mr);
}

/* Wait for a message; it must be @want. */
static bool got_msg(struct rdma_cm_id *id, const char *buf, int i,
		    const char *want)
{
	struct ibv_wc wc;

	if (rdma_get_recv_comp(id, &wc) <= 0 || wc.status)
		return expect(false, "receive of \"%s\": status %d", want,
			      wc.status);
	return expect(!strcmp(buf + i * MSG, want), "got \"%.8s\", want \"%s\"",
		      buf + i * MSG, want);
}

static bool send_msg(struct rdma_cm_id *id, char *buf, int i,
		     struct ibv_mr *mr, const char *msg)
{
	struct ibv_wc wc;

	snprintf(buf + i * MSG, MSG, "%s", msg);
	if (rdma_post_send(id, NULL, buf + i * MSG, strlen(msg) + 1, mr, 0) ||
	    rdma_get_send_comp(id, &wc) <= 0 || wc.status)
		return expect(false, "send of \"%s\" failed", msg);
	return true;
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

static long pinned(void)
{
	return rma_stat("pinned_pages");
}

/* pinned_pages comes to @want within 10 s (final acks are asynchronous). */
static bool pinned_back(long want)
{
	for (int i = 0; i < 100 && pinned() != want; i++)
		usleep(100000);
	return expect(pinned() == want, "pinned_pages %ld, want %ld", pinned(),
		      want);
}

/* The child: the peer of the server's SCIF connection, with a page. */
static int child(int lfd)
{
	struct scif_port_id peer;
	void *page;
	int ep;
	char c;

	if (scif_accept(lfd, &peer, &ep, SCIF_ACCEPT_SYNC))
		_exit(1);
	page = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED ||
	    scif_register(ep, page, PG, R_OFF, SCIF_PROT_READ |
			  SCIF_PROT_WRITE, SCIF_MAP_FIXED) != R_OFF)
		_exit(1);
	c = 1;
	scif_send(ep, &c, 1, SCIF_SEND_BLOCK);
	scif_recv(ep, &c, 1, SCIF_RECV_BLOCK);	/* until the server closes */
	_exit(0);
}

/* A SCIF endpoint connected to a child of this node; -1 on failure. */
static int scif_pair(pid_t *pid)
{
	struct scif_port_id dst = { .port = SPORT };
	uint16_t nodes[16], self;
	int lfd, ep;
	char c;

	lfd = scif_open();
	if (lfd < 0 || scif_bind(lfd, SPORT) < 0 || scif_listen(lfd, 1) ||
	    scif_get_nodeIDs(nodes, 16, &self) < 0)
		return -1;
	*pid = fork();
	if (!*pid)
		child(lfd);
	scif_close(lfd);
	dst.node = self;
	ep = scif_open();
	if (ep < 0 || scif_connect(ep, &dst) < 0 ||
	    scif_recv(ep, &c, 1, SCIF_RECV_BLOCK) != 1)
		return -1;
	return ep;
}

static int export(int ep, int64_t off, uint64_t len, int prot, uint32_t flags)
{
	struct scifioctl_dmabuf d = { .offset = off, .len = len, .prot = prot,
				      .flags = flags, .fd = -1 };

	if (ioctl(ep, SCIF_DMABUF_EXPORT, &d) < 0)
		return -errno;
	return d.fd;
}

/* ibv_reg_dmabuf_mr() must fail with @err. */
static void refused(const char *name, struct ibv_pd *pd, uint64_t off,
		    size_t len, int fd, int access, int err)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_dmabuf_mr(pd, off, len, IOVA, fd, access);
	result(name, expect(!mr && errno == err, "%s, errno %d (%s), want %d",
			    mr ? "registered" : "refused", errno,
			    strerror(errno), err));
	if (mr)
		ibv_dereg_mr(mr);
}

static const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		      IBV_ACCESS_REMOTE_READ;

static void refusals(struct ibv_pd *pd, int ep, int fd, int fd_ro)
{
	int fd_r = export(ep, R_OFF, PG, SCIF_PROT_READ | SCIF_PROT_WRITE,
			  SCIF_DMABUF_REMOTE);
	int p[2] = { -1, -1 };

	result("remote_export_made", expect(fd_r >= 0, "export %d", fd_r));
	refused("remote_range_eopnotsupp", pd, 0, PG, fd_r, rw, EOPNOTSUPP);
	if (pipe(p))
		p[0] = -1;
	refused("pipe_einval", pd, 0, PG, p[0], rw, EINVAL);
	refused("no_fd_ebadf", pd, 0, PG, 1000, rw, EBADF);
	refused("offset_unaligned_einval", pd, 1, PG, fd, rw, EINVAL);
	refused("length_past_einval", pd, 0, LEN + PG, fd, rw, EINVAL);
	refused("offset_past_einval", pd, LEN, PG, fd, rw, EINVAL);
	refused("read_only_export_eacces", pd, 0, PG, fd_ro, rw, EACCES);
	close(p[0]);
	close(p[1]);
	close(fd_r);
}

/* The client's WRITE after the revocation: the server's QP sees it. */
static bool access_error_seen(struct rdma_cm_id *id)
{
	return expect(rdmacm_event_seen(id, IBV_EVENT_QP_ACCESS_ERR, "server"),
		      "no IBV_EVENT_QP_ACCESS_ERR within 20 s");
}

/* The exchange with the client; the server's rows. */
static void serve(struct rdma_cm_id *id, int ep, uint8_t *win, char *msgs,
		  struct ibv_mr *mmr, struct ibv_mr *mr, long base)
{
	struct info *info = (struct info *)(msgs + 3 * MSG);
	struct ibv_wc wc;

	info->addr = IOVA;
	info->rkey = mr->rkey;
	info->len = LEN;
	if (rdma_post_send(id, NULL, info, sizeof(*info), mmr, 0) ||
	    rdma_get_send_comp(id, &wc) <= 0 || wc.status) {
		result("key_sent", expect(false, "send failed"));
		return;
	}
	result("write_landed_in_window", got_msg(id, msgs, 0, "written") &&
	       same(win, LEN, SEED_A, 0));
	fill(win, LEN, SEED_B);
	result("read_ready_sent", send_msg(id, msgs, 4, mmr, "read"));
	result("reads_done", got_msg(id, msgs, 1, "readdone"));
	result("window_unregistered",
	       expect(!scif_unregister(ep, L_OFF, LEN), "scif_unregister: %s",
		      strerror(errno)));
	/* The child's page stays: its connection is still open. */
	result("revoked_nothing_pinned_mr_alive", pinned_back(base));
	result("revoked_sent", send_msg(id, msgs, 4, mmr, "revoked"));
	result("revoked_write_access_error", access_error_seen(id));
	result("revoked_write_touched_nothing", same(win, LEN, SEED_B, 0));
}

static int server(const char *addr, const char *port)
{
	struct rdma_cm_id *lid, *id = NULL;
	struct ibv_mr *mr = NULL, *mmr;
	long base = pinned(), with_child;
	int ep, fd, fd_ro, st;
	struct ibv_qp_init_attr qa;
	uint8_t *win;
	char *msgs;
	pid_t pid;

	printf("TAP version 13\n");
	ep = scif_pair(&pid);
	win = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	msgs = calloc(8, MSG);
	if (ep < 0 || win == MAP_FAILED || !msgs) {
		result("setup", expect(false, "SCIF pair: %s", strerror(errno)));
		return 1;
	}
	memset(win, 0, LEN);
	with_child = pinned();
	result("window_registered",
	       expect(scif_register(ep, win, LEN, L_OFF, SCIF_PROT_READ |
				    SCIF_PROT_WRITE, SCIF_MAP_FIXED) == L_OFF,
		      "scif_register: %s", strerror(errno)) &&
	       expect(pinned() == with_child + LEN / PG,
		      "pinned_pages %ld, want %ld", pinned(),
		      with_child + LEN / PG));
	fd = export(ep, L_OFF, LEN, SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	fd_ro = export(ep, L_OFF, LEN, SCIF_PROT_READ, 0);
	result("local_exports_made", expect(fd >= 0 && fd_ro >= 0,
					    "exports %d %d", fd, fd_ro));
	lid = endpoint(addr, port, 1);
	qp_attr(&qa);
	if (!lid || rdma_listen(lid, 1) || rdma_get_request(lid, &id) ||
	    rdma_create_qp(id, NULL, &qa)) {
		result("connected", expect(false, "listen: %s", strerror(errno)));
		return 1;
	}
	refusals(id->pd, ep, fd, fd_ro);
	mr = ibv_reg_dmabuf_mr(id->pd, 0, LEN, IOVA, fd, rw);
	result("dmabuf_mr_registered", expect(mr, "ibv_reg_dmabuf_mr: %s",
					      strerror(errno)));
	mmr = rdma_reg_msgs(id, msgs, 8 * MSG);
	if (!mr || !mmr || post_recv(id, msgs, 0, mmr) ||
	    post_recv(id, msgs, 1, mmr) || rdma_accept(id, NULL)) {
		result("accepted", expect(false, "accept: %s", strerror(errno)));
		return 1;
	}
	serve(id, ep, win, msgs, mmr, mr, with_child);
	result("dmabuf_mr_deregistered", expect(!ibv_dereg_mr(mr),
						"ibv_dereg_mr failed"));
	rdma_disconnect(id);
	rdma_dereg_mr(mmr);
	rdma_destroy_ep(id);
	rdma_destroy_ep(lid);
	close(fd);
	close(fd_ro);
	scif_close(ep);
	result("child_done", expect(waitpid(pid, &st, 0) == pid &&
				    WIFEXITED(st) && !WEXITSTATUS(st),
				    "child status %#x", st));
	result("closed_nothing_pinned", pinned_back(base));
	printf("1..%d\n", nr_test);
	return nr_fail != 0;
}

/* One RDMA WRITE or READ of @len bytes at @off of the server's MR. */
static int rdma_op(struct rdma_cm_id *id, int write, uint8_t *buf,
		   struct ibv_mr *mr, const struct info *info, size_t off,
		   size_t len)
{
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS };
	int ret;

	if (write)
		ret = rdma_post_write(id, NULL, buf, len, mr, 0,
				      info->addr + off, info->rkey);
	else
		ret = rdma_post_read(id, NULL, buf, len, mr, 0,
				     info->addr + off, info->rkey);
	if (ret || rdma_get_send_comp(id, &wc) <= 0)
		return -1;
	printf("# client: %s of %zu at %zu: status %s\n",
	       write ? "WRITE" : "READ", len, off,
	       ibv_wc_status_str(wc.status));
	return wc.status;
}

static void exchange(struct rdma_cm_id *id, const struct info *info,
		     uint8_t *buf, struct ibv_mr *bmr, char *msgs,
		     struct ibv_mr *mmr)
{
	int st;

	fill(buf, LEN, SEED_A);
	result("write_completed", expect(!rdma_op(id, 1, buf, bmr, info, 0, LEN),
					 "WRITE failed"));
	result("written_sent", send_msg(id, msgs, 4, mmr, "written"));
	result("read_ready", got_msg(id, msgs, 1, "read"));
	memset(buf, 0, LEN);
	result("read_whole_matches",
	       expect(!rdma_op(id, 0, buf, bmr, info, 0, LEN), "READ failed") &&
	       same(buf, LEN, SEED_B, 0));
	memset(buf, 0, LEN);
	result("read_piece_matches",
	       expect(!rdma_op(id, 0, buf, bmr, info, 3 * PG, 5 * PG),
		      "READ failed") && same(buf, 5 * PG, SEED_B, 3 * PG));
	result("readdone_sent", send_msg(id, msgs, 4, mmr, "readdone"));
	result("revoked_told", got_msg(id, msgs, 2, "revoked"));
	fill(buf, LEN, SEED_C);
	st = rdma_op(id, 1, buf, bmr, info, 0, LEN);
	result("revoked_write_error_completion",
	       expect(st > 0, "WRITE after revocation: status %d", st));
}

static int client(const char *addr, const char *port)
{
	struct ibv_mr *mmr, *bmr;
	struct rdma_cm_id *id;
	struct info info;
	struct ibv_wc wc;
	uint8_t *buf;
	char *msgs;

	printf("TAP version 13\n");
	id = endpoint(addr, port, 0);
	msgs = calloc(8, MSG);
	buf = malloc(LEN);
	if (!id || !msgs || !buf)
		return 1;
	mmr = rdma_reg_msgs(id, msgs, 8 * MSG);
	bmr = rdma_reg_read(id, buf, LEN);
	if (!mmr || !bmr || rdma_post_recv(id, NULL, msgs, MSG, mmr) ||
	    post_recv(id, msgs, 1, mmr) || post_recv(id, msgs, 2, mmr) ||
	    rdma_connect(id, NULL)) {
		result("connected", expect(false, "connect: %s", strerror(errno)));
		return 1;
	}
	if (rdma_get_recv_comp(id, &wc) <= 0 || wc.status) {
		result("key_received", expect(false, "status %d", wc.status));
		return 1;
	}
	memcpy(&info, msgs, sizeof(info));
	exchange(id, &info, buf, bmr, msgs, mmr);
	rdma_disconnect(id);
	rdma_dereg_mr(bmr);
	rdma_dereg_mr(mmr);
	rdma_destroy_ep(id);
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
