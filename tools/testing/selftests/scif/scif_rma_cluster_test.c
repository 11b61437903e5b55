// SPDX-License-Identifier: GPL-2.0
/*
 * RMA across a cluster, run on every node at once: each node serves
 * windows on a port and, at the same time, connects to every other node
 * and copies into and out of that node's window through the ivshmem
 * apertures with all four RMA calls, at random offsets and lengths; the
 * serving node checks what landed in its memory and answers by message.
 * Then the errors across the link (ENXIO, EACCES) and the reset that a
 * close of the serving side leaves (ECONNRESET).
 *
 * The cluster size comes from scif.nodes=N on the kernel command line;
 * with no cluster the test is skipped.  TAP, one line per (peer, check),
 * then one for the server.
 */
#include "scif_cluster_util.h"
#include <sys/mman.h>

#define RMA_PORT	2200
#define WIN		(1024 * 1024L)
#define RO_OFF		0x200000L
#define ROUNDS		24

enum { CMD_CHECK = 1, CMD_FILL, CMD_DONE };

struct cmd {
	uint32_t op;
	uint32_t seed;
	uint64_t off;
	uint64_t len;
};

static const char *const checks[] = {
	"connect", "writeto_whole_window", "vwriteto_random",
	"readfrom_random", "vreadfrom_random", "writeto_random",
	"enxio_past_window", "eacces_read_only_window",
	"econnreset_after_peer_close",
};
#define NR_CHECKS	(int)(sizeof(checks) / sizeof(checks[0]))

static int results[CLUSTER_MAX_NODES][NR_CHECKS];	/* 0 ok, else errno */

/* The byte stream of @seed from its start, @len bytes of it. */
static void fill(uint8_t *buf, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		x = x * 1664525u + 1013904223u;
		buf[i] = x >> 24;
	}
}

static uint32_t rnd(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static uint8_t *map_mem(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Serve one peer: a window, then its commands until DONE. */
static int serve_one(scif_epd_t epd)
{
	uint8_t *win = map_mem(WIN), *ref = map_mem(WIN);
	int32_t reply = 0;
	struct cmd c;

	if (!win || !ref ||
	    scif_register(epd, win, WIN, 0, SCIF_PROT_READ | SCIF_PROT_WRITE,
			  SCIF_MAP_FIXED) != 0 ||
	    scif_register(epd, win, 4096, RO_OFF, SCIF_PROT_READ,
			  SCIF_MAP_FIXED) != RO_OFF ||
	    scif_send(epd, &reply, sizeof(reply), SCIF_SEND_BLOCK) !=
	    sizeof(reply))
		return -1;
	while (scif_recv(epd, &c, sizeof(c), SCIF_RECV_BLOCK) == sizeof(c)) {
		if (c.op == CMD_DONE || c.off > WIN || c.len > WIN - c.off)
			break;
		if (c.op == CMD_FILL) {
			fill(win, WIN, c.seed);
			reply = 0;
		} else {
			fill(ref, c.len, c.seed);
			reply = memcmp(win + c.off, ref, c.len) ? EBADMSG : 0;
		}
		if (scif_send(epd, &reply, sizeof(reply), SCIF_SEND_BLOCK) !=
		    sizeof(reply))
			return -1;
	}
	munmap(win, WIN);
	munmap(ref, WIN);
	return c.op == CMD_DONE ? 0 : -1;
}

static int serve(int lep, int peers)
{
	return cluster_serve(lep, peers, 300, serve_one);
}

/* Ask the server something; its answer (0 ok), or an errno. */
static int ask(scif_epd_t epd, uint32_t op, uint32_t seed, uint64_t off,
	       uint64_t len)
{
	struct cmd c = { .op = op, .seed = seed, .off = off, .len = len };
	int32_t reply;

	if (scif_send(epd, &c, sizeof(c), SCIF_SEND_BLOCK) != sizeof(c) ||
	    scif_recv(epd, &reply, sizeof(reply), SCIF_RECV_BLOCK) !=
	    sizeof(reply))
		return errno ? errno : EIO;
	return reply;
}

/* Connect to @node's server, which says when it is ready. */
static int connect_to(uint16_t node, scif_epd_t *out)
{
	int err = cluster_connect(node, RMA_PORT, out), ready;

	if (err)
		return err;
	if (scif_recv(*out, &ready, sizeof(ready), SCIF_RECV_BLOCK) !=
	    sizeof(ready)) {
		err = errno ? errno : EIO;
		scif_close(*out);
	}
	return err;
}

static void run_checks(int idx)
{
	uint8_t *lwin = map_mem(WIN), *buf = map_mem(WIN + 4096);
	uint8_t *ref = map_mem(WIN);
	int *res = results[idx], r, err, i;
	uint32_t s = self * 131 + peers[idx] * 7 + 1, seed;
	uint64_t lo, ro, len;
	scif_epd_t epd = -1;

	res[0] = connect_to(peers[idx], &epd);
	if (res[0] || !lwin || !buf || !ref) {
		for (i = 1; i < NR_CHECKS; i++)
			res[i] = res[0] ? res[0] : ENOMEM;
		return;
	}
	if (scif_register(epd, lwin, WIN, 0, SCIF_PROT_READ | SCIF_PROT_WRITE,
			  0) < 0)
		res[1] = errno;

	/* Window to window, all of it; the server checks. */
	fill(lwin, WIN, s);
	if (!res[1])
		res[1] = scif_writeto(epd, 0, WIN, 0, SCIF_RMA_SYNC) ? errno :
			 ask(epd, CMD_CHECK, s, 0, WIN);

	/* Unaligned buffers into random places; the server checks. */
	for (r = 0; r < ROUNDS && !res[2]; r++) {
		len = 1 + rnd(&s) % (r & 1 ? 5000 : WIN / 2);
		ro = rnd(&s) % (WIN - len + 1);
		fill(buf + r % 64, len, s);
		res[2] = scif_vwriteto(epd, buf + r % 64, len, ro,
				       SCIF_RMA_SYNC |
				       (r & 2 ? SCIF_RMA_ORDERED :
					SCIF_RMA_USECPU)) ? errno :
			 ask(epd, CMD_CHECK, s, ro, len);
	}

	/* The server fills its window; we read random pieces of it. */
	res[3] = ask(epd, CMD_FILL, s, 0, 0);
	fill(ref, WIN, s);
	for (r = 0; r < ROUNDS && !res[3]; r++) {
		len = 1 + rnd(&s) % (r & 1 ? 5000 : WIN / 2);
		lo = rnd(&s) % (WIN - len + 1);
		ro = rnd(&s) % (WIN - len + 1);
		err = scif_readfrom(epd, lo, len, ro, SCIF_RMA_SYNC);
		res[3] = err ? errno : memcmp(lwin + lo, ref + ro, len) ?
				       EBADMSG : 0;
	}
	for (r = 0; r < ROUNDS && !res[4]; r++) {
		len = 1 + rnd(&s) % (r & 1 ? 5000 : WIN / 2);
		ro = rnd(&s) % (WIN - len + 1);
		err = scif_vreadfrom(epd, buf + r % 61, len, ro,
				     r & 1 ? SCIF_RMA_SYNC : SCIF_RMA_USECPU);
		res[4] = err ? errno : memcmp(buf + r % 61, ref + ro, len) ?
				       EBADMSG : 0;
	}

	/* Window pieces to random places; the server checks. */
	seed = s + 1;
	fill(lwin, WIN, seed);
	for (r = 0; r < ROUNDS && !res[5]; r++) {
		len = 1 + rnd(&s) % 20000;
		ro = rnd(&s) % (WIN - len + 1);
		res[5] = scif_writeto(epd, 0, len, ro, SCIF_RMA_SYNC) ? errno :
			 ask(epd, CMD_CHECK, seed, ro, len);
	}

	res[6] = want_errno(scif_writeto(epd, 0, 16, WIN - 8, 0), ENXIO);
	res[7] = want_errno(scif_vwriteto(epd, buf, 8, RO_OFF, 0), EACCES);
	if (!res[7] && scif_vreadfrom(epd, buf, 8, RO_OFF, 0))
		res[7] = errno;

	/* The server closes: copies and windows are reset. */
	ask(epd, CMD_DONE, 0, 0, 0);
	res[8] = ETIMEDOUT;
	for (r = 0; r < 500 && res[8] == ETIMEDOUT; r++) {
		if (scif_vreadfrom(epd, buf, 8, 0, 0) && errno == ECONNRESET)
			res[8] = 0;
		else
			usleep(10000);
	}
	if (!res[8])
		res[8] = want_errno(scif_unregister(epd, 0, WIN), ECONNRESET);
	scif_close(epd);
	munmap(lwin, WIN);
	munmap(buf, WIN + 4096);
	munmap(ref, WIN);
}

int main(void)
{
	static const struct cluster_test ct = {
		.prefix = "rma", .port = RMA_PORT,
		.checks = checks, .nr_checks = NR_CHECKS,
		.results = &results[0][0],
		.serve = serve, .run_checks = run_checks,
	};

	return cluster_main(&ct);
}
