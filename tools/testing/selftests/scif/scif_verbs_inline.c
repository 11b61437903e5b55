// SPDX-License-Identifier: GPL-2.0
/*
 * scif_verbs_inline: inline SENDs and RDMA WRITEs between two nodes
 * through libibverbs and librdmacm (Documentation/scif/rdma.rst, "User
 * verbs"), as a program written for any RDMA device uses them.
 *
 *   scif_verbs_inline -s ADDR PORT   the server: listens on ADDR:PORT
 *   scif_verbs_inline -c ADDR PORT   the client: connects to it
 *
 * The client posts COUNT inline SENDs of lengths 1 to 256 bytes, each
 * with a pattern of its own, BATCH at a time before it polls their
 * completions, and fills its buffer with another byte right after each
 * post (the inline flag says the buffer is free again then).  It then
 * writes COUNT patterns the same way with inline RDMA WRITEs into the
 * server's MR, whose address and key the server sent first, and ends
 * with an inline SEND "done".  The server checks every SEND's length
 * and bytes as it arrives and, after "done", every WRITE's bytes.
 * Before "done" the client also reads the WRITEs back by RDMA READ, in
 * pieces at odd offsets that cross the pages of the server's buffer
 * and all at once, and checks every byte (the responder once read past
 * the end of an MR's page: into whatever page came next in physical
 * memory, which KASAN reported on the debug kernel).
 * The server's buffer starts 0x2a0 into its first page, whose pages it
 * touches last to first, so that the pages next to each other in it
 * are seldom next to each other in physical memory.
 *
 * The client's CQs are mapped ones (rdma.rst, "Completions without a
 * system call"): it then posts BATCH WRITEs and polls their completions
 * from a thread that a seccomp filter forbids ioctl, read and write, the
 * system calls through which completions would otherwise come (on a
 * kernel without seccomp, unfiltered, as the line printed says).  Last,
 * after "done", it writes a bogus head into each of its CQ rings (found
 * among its mappings of the uverbs device) and posts one more WRITE:
 * its send CQ must overrun (IBV_EVENT_CQ_ERR on its own async events),
 * and it must still tear everything down.
 * Exit 0 if all of it held; messages say what did not.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include "scif_rdmacm.h"

#define COUNT	64	/* SENDs, then WRITEs */
#define BATCH	8	/* posted before their completions are polled */
#define SLICE	256	/* the largest inline work request, and a slot */

struct info {		/* the server's MR, sent to the client first */
	uint64_t addr;
	uint32_t rkey;
};

static uint32_t len_of(int i)
{
	return 1 + (i * 37) % SLICE;
}

static unsigned char byte_of(int i, uint32_t j, int write)
{
	return (unsigned char)(i * 7 + j * 13 + (write ? 101 : 3));
}

static void pattern(unsigned char *p, int i, int write)
{
	uint32_t j;

	for (j = 0; j < SLICE; j++)
		p[j] = byte_of(i, j, write);
}

static int bad(const unsigned char *p, uint32_t len, int i, int write)
{
	uint32_t j;

	for (j = 0; j < len; j++)
		if (p[j] != byte_of(i, j, write)) {
			printf("%s %d: byte %u is %u, want %u\n",
			       write ? "WRITE" : "SEND", i, j, p[j],
			       byte_of(i, j, write));
			return 1;
		}
	return 0;
}

static void qp_attr(struct ibv_qp_init_attr *qa)
{
	memset(qa, 0, sizeof(*qa));
	qa->qp_type = IBV_QPT_RC;
	qa->sq_sig_all = 1;
	qa->cap.max_send_wr = BATCH;
	qa->cap.max_recv_wr = COUNT + 1;
	qa->cap.max_send_sge = 1;
	qa->cap.max_recv_sge = 1;
	qa->cap.max_inline_data = SLICE;
}

static struct rdma_cm_id *endpoint(const char *addr, const char *port,
				   int passive)
{
	struct ibv_qp_init_attr qa;

	qp_attr(&qa);
	return rdmacm_endpoint(addr, port, passive, &qa);
}

static int recv_comp(struct rdma_cm_id *id, struct ibv_wc *wc)
{
	if (rdma_get_recv_comp(id, wc) <= 0 || wc->status != IBV_WC_SUCCESS) {
		printf("receive failed: status %d\n", wc->status);
		return 1;
	}
	return 0;
}

static int server_check(struct rdma_cm_id *id, unsigned char *buf)
{
	unsigned char *writes = buf + (COUNT + 1) * SLICE;
	int i, fail = 0;
	struct ibv_wc wc;

	for (i = 0; i < COUNT; i++) {
		if (recv_comp(id, &wc))
			return 1;
		if (wc.wr_id != (uint64_t)i || wc.byte_len != len_of(i)) {
			printf("SEND %d: wr_id %llu, %u bytes, want %u\n", i,
			       (unsigned long long)wc.wr_id, wc.byte_len,
			       len_of(i));
			fail = 1;
		}
		fail |= bad(buf + i * SLICE, len_of(i), i, 0);
	}
	if (recv_comp(id, &wc) || wc.byte_len != 5 ||
	    memcmp(buf + COUNT * SLICE, "done", 5)) {
		printf("no \"done\"\n");
		return 1;
	}
	for (i = 0; i < COUNT; i++)
		fail |= bad(writes + i * SLICE, SLICE, i, 1);
	return fail;
}

/* @len bytes at 0x2a0 into fresh pages, touched last to first; or NULL. */
static unsigned char *server_buf(size_t len, size_t *maplen)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), off;
	unsigned char *map;

	*maplen = (0x2a0 + len + pg - 1) / pg * pg;
	map = mmap(NULL, *maplen, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	for (off = *maplen; off; off -= pg)
		map[off - pg] = 0;
	return map + 0x2a0;
}

static int server(const char *addr, const char *port)
{
	size_t len = (2 * COUNT + 2) * SLICE, maplen;
	struct rdma_cm_id *lid, *id;
	struct ibv_qp_init_attr qa;
	struct ibv_wc wc;
	struct info *info;
	unsigned char *buf;
	struct ibv_mr *mr;
	int i, fail;

	lid = endpoint(addr, port, 1);
	if (!lid || rdma_listen(lid, 1) || rdma_get_request(lid, &id)) {
		perror("listen");
		return 1;
	}
	qp_attr(&qa);
	buf = server_buf(len, &maplen);
	if (!buf || rdma_create_qp(id, NULL, &qa)) {
		perror("rdma_create_qp");
		return 1;
	}
	mr = ibv_reg_mr(id->pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!mr) {
		perror("ibv_reg_mr");
		return 1;
	}
	for (i = 0; i <= COUNT; i++)
		if (rdma_post_recv(id, (void *)(uintptr_t)i, buf + i * SLICE,
				   SLICE, mr)) {
			perror("rdma_post_recv");
			return 1;
		}
	if (rdma_accept(id, NULL)) {
		perror("rdma_accept");
		return 1;
	}
	info = (struct info *)(buf + len - SLICE);
	info->addr = (uintptr_t)(buf + (COUNT + 1) * SLICE);
	info->rkey = mr->rkey;
	if (rdma_post_send(id, NULL, info, sizeof(*info), mr, 0) ||
	    rdma_get_send_comp(id, &wc) <= 0 || wc.status) {
		printf("sending the MR's key failed\n");
		return 1;
	}
	fail = server_check(id, buf);
	printf("server: %d SENDs and %d WRITEs %s\n", COUNT, COUNT,
	       fail ? "wrong" : "checked");
	rdma_disconnect(id);
	rdma_dereg_mr(mr);
	rdma_destroy_ep(id);
	rdma_destroy_ep(lid);
	munmap(buf - 0x2a0, maplen);
	return fail;
}

/* Post COUNT inline SENDs or WRITEs, BATCH before each poll. */
static int client_run(struct rdma_cm_id *id, const struct info *info,
		      int write)
{
	unsigned char src[SLICE];
	struct ibv_wc wc;
	int i, k, ret;

	for (i = 0; i < COUNT; i += BATCH) {
		for (k = i; k < i + BATCH; k++) {
			pattern(src, k, write);
			if (write)
				ret = rdma_post_write(id, NULL, src, SLICE, NULL,
						      IBV_SEND_INLINE,
						      info->addr + k * SLICE,
						      info->rkey);
			else
				ret = rdma_post_send(id, NULL, src, len_of(k),
						     NULL, IBV_SEND_INLINE);
			if (ret) {
				perror(write ? "rdma_post_write" : "rdma_post_send");
				return 1;
			}
			memset(src, 0xee, sizeof(src));	/* free again */
		}
		for (k = 0; k < BATCH; k++)
			if (rdma_get_send_comp(id, &wc) <= 0 || wc.status) {
				printf("completion %d: status %d\n", i + k,
				       wc.status);
				return 1;
			}
	}
	return 0;
}

/* Read the WRITEs back from the server's MR by RDMA READ; check them. */
static int client_read(struct rdma_cm_id *id, const struct info *info)
{
	static const uint32_t piece[][2] = {	/* offset, length */
		{ 1, 4095 }, { 4000, 300 }, { 4093, 8200 }, { 7, 9000 },
		{ 0, COUNT * SLICE },
	};
	uint32_t total = COUNT * SLICE, off, len, j;
	unsigned char *dst = malloc(total);
	struct ibv_mr *mr = dst ? rdma_reg_read(id, dst, total) : NULL;
	struct ibv_wc wc;
	unsigned int k;
	int fail = 0;

	if (!mr) {
		perror("rdma_reg_read");
		return 1;
	}
	for (k = 0; k < sizeof(piece) / sizeof(piece[0]) && !fail; k++) {
		off = piece[k][0];
		len = piece[k][1];
		memset(dst, 0, len);
		if (rdma_post_read(id, NULL, dst, len, mr, 0, info->addr + off,
				   info->rkey) ||
		    rdma_get_send_comp(id, &wc) <= 0 || wc.status) {
			printf("READ of %u at %u: status %d\n", len, off,
			       wc.status);
			fail = 1;
			break;
		}
		for (j = 0; j < len; j++)
			if (dst[j] != byte_of((off + j) / SLICE,
					      (off + j) % SLICE, 1)) {
				printf("READ of %u at %u: byte %u is %u, want %u\n",
				       len, off, j, dst[j],
				       byte_of((off + j) / SLICE,
					       (off + j) % SLICE, 1));
				fail = 1;
				break;
			}
	}
	rdma_dereg_mr(mr);
	free(dst);
	return fail;
}

/*
 * A thread polling @cq for BATCH completions with no ioctl/read/write;
 * @filtered is 0 on a kernel without seccomp (the debug kernel's
 * configuration leaves it out), where it polls all the same.
 */
struct nosys {
	struct ibv_cq *cq;
	int got, status, err, filtered;
};

static void *poll_nosys(void *arg)
{
	struct nosys *ns = arg;
	struct timespec t0, t;
	struct ibv_wc wc;
	int n = rdmacm_deny_uverbs();

	if (n < 0) {
		ns->err = -n;
		return NULL;
	}
	ns->filtered = n;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (ns->got < BATCH) {
		n = ibv_poll_cq(ns->cq, 1, &wc);
		if (n < 0) {
			ns->err = -n;
			break;
		}
		if (n && wc.status)
			ns->status = wc.status;
		ns->got += n;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 20) {
			ns->err = ETIMEDOUT;
			break;
		}
	}
	return NULL;
}

/* BATCH WRITEs, their completions polled with no system call. */
static int client_nosys(struct rdma_cm_id *id, const struct info *info)
{
	struct nosys ns = { .cq = id->send_cq };
	unsigned char src[SLICE];
	pthread_t th;
	int k;

	for (k = 0; k < BATCH; k++) {
		pattern(src, k, 1);
		if (rdma_post_write(id, NULL, src, SLICE, NULL, IBV_SEND_INLINE,
				    info->addr + k * SLICE, info->rkey)) {
			perror("rdma_post_write");
			return 1;
		}
	}
	if (pthread_create(&th, NULL, poll_nosys, &ns) ||
	    pthread_join(th, NULL))
		return 1;
	printf("client: %d of %d completions polled %s%s%s\n", ns.got, BATCH,
	       ns.filtered ? "with no system call" :
			     "(no seccomp in this kernel: not filtered)",
	       ns.err ? ": " : "", ns.err ? strerror(ns.err) : "");
	return ns.err || ns.status || ns.got != BATCH;
}

/* Write a bogus head into each of our CQ rings; the count of them. */
static int corrupt_rings(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long lo, hi;
	char line[512], perm[8];
	int n = 0;

	/* Writable: a QP's info page is mapped read-only. */
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "/dev/infiniband/uverbs") &&
		    sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) == 3 &&
		    perm[1] == 'w') {
			/* The head: the kernel must take it for a full ring. */
			*(volatile uint32_t *)lo += 0x40000000;
			n++;
		}
	if (f)
		fclose(f);
	return n;
}

/* The rings corrupted, a WRITE must overrun our send CQ, and only it. */
static int client_corrupt(struct rdma_cm_id *id, const struct info *info)
{
	struct pollfd pfd = { .fd = id->verbs->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	int rings = corrupt_rings(), seen = 0;

	printf("client: %d CQ rings mapped\n", rings);
	if (rings < 1)
		return 1;
	/* Into the slot of the server's key, which it no longer reads. */
	if (rdma_post_write(id, NULL, "x", 1, NULL, IBV_SEND_INLINE,
			    info->addr + COUNT * SLICE, info->rkey)) {
		perror("rdma_post_write");
		return 1;
	}
	while (!seen && poll(&pfd, 1, 10000) == 1 &&
	       !ibv_get_async_event(id->verbs, &ev)) {
		seen = ev.event_type == IBV_EVENT_CQ_ERR &&
		       ev.element.cq == id->send_cq;
		printf("client: async event %s\n",
		       ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
	}
	printf("client: send CQ overrun %s\n", seen ? "reported" : "missing");
	return !seen;
}

static int client(const char *addr, const char *port)
{
	struct info info, *got;
	struct rdma_cm_id *id;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	int fail;

	id = endpoint(addr, port, 0);
	got = calloc(1, SLICE);
	if (!id || !got)
		return 1;
	mr = rdma_reg_msgs(id, got, SLICE);
	if (!mr || rdma_post_recv(id, NULL, got, SLICE, mr) ||
	    rdma_connect(id, NULL)) {
		perror("connect");
		return 1;
	}
	if (recv_comp(id, &wc))
		return 1;
	info = *got;
	fail = client_run(id, &info, 0) || client_run(id, &info, 1) ||
	       client_read(id, &info) || client_nosys(id, &info);
	if (!fail && (rdma_post_send(id, NULL, "done", 5, NULL,
				     IBV_SEND_INLINE) ||
		      rdma_get_send_comp(id, &wc) <= 0 || wc.status)) {
		printf("\"done\" failed\n");
		fail = 1;
	}
	printf("client: %d SENDs and %d WRITEs %s, READs %s\n", COUNT, COUNT,
	       fail ? "failed" : "posted inline", fail ? "-" : "checked");
	if (!fail)
		fail = client_corrupt(id, &info);
	rdma_disconnect(id);
	rdma_dereg_mr(mr);
	rdma_destroy_ep(id);
	free(got);
	return fail;
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
