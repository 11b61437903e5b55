// SPDX-License-Identifier: GPL-2.0
/*
 * Remote mmap across a cluster, run on every node at once: each node
 * serves a window on a port and, at the same time, connects to every
 * other node and maps that node's window through its ivshmem aperture.
 * Through the mapping it ping-pongs an 8-byte counter with the serving
 * node, which polls its own registered memory (the round trip is printed
 * as a TAP comment), checks data both ways, the read-only protection
 * (EACCES, mprotect), and the lifetime: after the server unregisters the
 * window, and after it closes, an access gets SIGBUS.
 *
 * With SCIF_MMAP_UNREACHABLE=1 in the environment (a bus that reaches
 * registered pages only through staging, such as an NTB without a
 * full-reach window: Documentation/scif/ntb.rst), every mapping must
 * fail with ENXIO instead, and only that is checked.
 *
 * The cluster size comes from scif.nodes=N on the kernel command line;
 * with no cluster the test is skipped.  Clients run one after the other
 * (probing for SIGBUS uses the process's signal handlers).
 */
#include "scif_cluster_util.h"
#include <sys/mman.h>
#include "scif_mmap_test.h"

#define MMAP_PORT	2300
#define PG		4096L
#define WIN		(64 * 1024L)
#define RO_OFF		0x200000L
#define ROUNDS		500

enum { CMD_PONG = 1, CMD_FILL, CMD_CHECK, CMD_UNREG, CMD_DONE };

static const char *const checks[] = {
	"connect", "pingpong_8_bytes", "data_both_ways",
	"eacces_read_only_writable", "mprotect_upgrade_refused",
	"sigbus_after_unregister", "sigbus_after_peer_close",
};
#define NR_CHECKS	(int)(sizeof(checks) / sizeof(checks[0]))

static int results[CLUSTER_MAX_NODES][NR_CHECKS];	/* 0 ok, else errno */
static double rtt_us[CLUSTER_MAX_NODES];

static void fill(uint8_t *buf, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		x = x * 1664525u + 1013904223u;
		buf[i] = x >> 24;
	}
}

static uint8_t *anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int reply(scif_epd_t epd, int32_t r)
{
	return scif_send(epd, &r, sizeof(r), SCIF_SEND_BLOCK) == sizeof(r) ?
	       0 : -1;
}

/* Serve one peer: windows, then its commands until DONE. */
static int serve_one(scif_epd_t epd)
{
	uint8_t *win = anon(WIN), *ref = anon(WIN);
	volatile uint64_t *own = (volatile uint64_t *)win;
	uint32_t c[2] = { 0 };
	int32_t r;

	if (!win || !ref ||
	    scif_register(epd, win, WIN, 0, SCIF_PROT_READ | SCIF_PROT_WRITE,
			  SCIF_MAP_FIXED) != 0 ||
	    scif_register(epd, ref, PG, RO_OFF, SCIF_PROT_READ,
			  SCIF_MAP_FIXED) != RO_OFF || reply(epd, 0))
		return -1;
	while (scif_recv(epd, c, sizeof(c), SCIF_RECV_BLOCK) == sizeof(c)) {
		switch (c[0]) {
		case CMD_PONG:	/* ack first: the pinger starts after it */
			memset(win, 0, 128);
			if (reply(epd, 0))
				return -1;
			r = pong_rounds(own, own + 8, c[1]);
			break;
		case CMD_FILL:
			fill(win, WIN, c[1]);
			r = 0;
			break;
		case CMD_CHECK:
			r = 0;
			for (long i = 0; i < WIN; i += PG) {
				uint8_t page[PG];

				fill(page, PG, c[1] + i / PG);
				if (memcmp(win + i, page, PG))
					r = EBADMSG;
			}
			break;
		case CMD_UNREG:
			r = scif_unregister(epd, 0, WIN) ? errno : 0;
			break;
		default:
			goto out;
		}
		if (reply(epd, r))
			return -1;
	}
out:
	munmap(win, WIN);
	munmap(ref, WIN);
	return c[0] == CMD_DONE ? 0 : -1;
}

static int serve(int lep, int peers)
{
	return cluster_serve(lep, peers, 300, serve_one);
}

static int ask(scif_epd_t epd, uint32_t op, uint32_t arg)
{
	uint32_t c[2] = { op, arg };
	int32_t r;

	if (scif_send(epd, c, sizeof(c), SCIF_SEND_BLOCK) != sizeof(c) ||
	    scif_recv(epd, &r, sizeof(r), SCIF_RECV_BLOCK) != sizeof(r))
		return errno ? errno : EIO;
	return r;
}

/* Connect to @node's server, which says when it is ready. */
static int connect_to(uint16_t node, scif_epd_t *out)
{
	int err = cluster_connect(node, MMAP_PORT, out), ready;

	if (err)
		return err;
	if (scif_recv(*out, &ready, sizeof(ready), SCIF_RECV_BLOCK) !=
	    sizeof(ready)) {
		err = errno ? errno : EIO;
		scif_close(*out);
	}
	return err;
}

/* The server's pong result comes as the reply to the next command. */
static int pong_result(scif_epd_t epd)
{
	int32_t r;

	return scif_recv(epd, &r, sizeof(r), SCIF_RECV_BLOCK) == sizeof(r) ?
	       r : EIO;
}

static int data_both_ways(scif_epd_t epd, uint8_t *map)
{
	uint8_t page[PG], *ref = anon(WIN);
	int r = ask(epd, CMD_FILL, 11);

	if (!ref)
		return ENOMEM;
	/* FILL writes one stream over the whole window. */
	fill(ref, WIN, 11);
	if (!r)
		r = memcmp(map, ref, WIN) ? EBADMSG : 0;
	munmap(ref, WIN);
	if (r)
		return r;
	for (long i = 0; i < WIN; i += PG) {
		fill(page, PG, 21 + i / PG);
		memcpy(map + i, page, PG);
	}
	return ask(epd, CMD_CHECK, 21);
}

static void run_checks(int idx)
{
	int *res = results[idx], i;
	volatile uint64_t *map = NULL;
	scif_epd_t epd = -1;
	void *ro;

	res[0] = connect_to(peers[idx], &epd);
	if (!res[0]) {
		map = scif_mmap(NULL, WIN, SCIF_PROT_READ | SCIF_PROT_WRITE, 0,
				epd, 0);
		if (map == SCIF_MMAP_FAILED)
			res[0] = errno;
	}
	if (res[0]) {
		for (i = 1; i < NR_CHECKS; i++)
			res[i] = res[0];
		if (epd >= 0)
			scif_close(epd);
		return;
	}
	/* The server polls its own memory; we write through the mapping. */
	res[1] = ask(epd, CMD_PONG, ROUNDS);
	if (!res[1]) {
		rtt_us[idx] = ping_rounds(map, map + 8, ROUNDS);
		res[1] = pong_result(epd);
		if (!res[1] && rtt_us[idx] < 0)
			res[1] = ETIMEDOUT;
	}
	res[2] = data_both_ways(epd, (uint8_t *)map);

	ro = scif_mmap(NULL, PG, SCIF_PROT_READ | SCIF_PROT_WRITE, 0, epd,
		       RO_OFF);
	res[3] = ro != SCIF_MMAP_FAILED ? EBADMSG : errno == EACCES ? 0 : errno;
	ro = scif_mmap(NULL, PG, SCIF_PROT_READ, 0, epd, RO_OFF);
	if (ro == SCIF_MMAP_FAILED) {
		res[4] = errno;
	} else {
		res[4] = !mprotect(ro, PG, PROT_READ | PROT_WRITE) ? EBADMSG :
			 errno != EACCES ? errno :
			 probe(ro, true) != SIGSEGV ? EBADMSG : 0;
		scif_munmap(ro, PG);
	}

	res[5] = ask(epd, CMD_UNREG, 0);
	if (!res[5])
		res[5] = probe(map, false) == SIGBUS &&
			 probe(map + WIN / 16, true) == SIGBUS ? 0 : EBADMSG;
	scif_munmap((void *)map, WIN);

	/* A mapping of the read-only window, then the server closes. */
	ro = scif_mmap(NULL, PG, SCIF_PROT_READ, 0, epd, RO_OFF);
	if (ro == SCIF_MMAP_FAILED) {
		res[6] = errno;
	} else {
		res[6] = probe(ro, false);
		uint32_t c[2] = { CMD_DONE, 0 };

		if (!res[6] && scif_send(epd, c, sizeof(c), SCIF_SEND_BLOCK) !=
		    sizeof(c))
			res[6] = errno;
		if (!res[6] && probe_until(ro, SIGBUS, 5000))
			res[6] = ETIMEDOUT;
		scif_munmap(ro, PG);
	}
	scif_close(epd);
}

static const char *const unreachable_checks[] = {
	"connect", "mmap_rw_enxio", "mmap_ro_enxio",
};
static int unreachable_results[CLUSTER_MAX_NODES][3];

/* SCIF_MMAP_UNREACHABLE: both mappings fail with ENXIO. */
static void run_unreachable(int idx)
{
	uint32_t c[2] = { CMD_DONE, 0 };
	int *res = unreachable_results[idx];
	scif_epd_t epd = -1;
	void *m;

	res[0] = connect_to(peers[idx], &epd);
	res[1] = res[2] = res[0];
	if (res[0])
		return;
	errno = 0;
	m = scif_mmap(NULL, WIN, SCIF_PROT_READ | SCIF_PROT_WRITE, 0, epd, 0);
	res[1] = m != SCIF_MMAP_FAILED ? EBADMSG : errno == ENXIO ? 0 : errno;
	errno = 0;
	m = scif_mmap(NULL, PG, SCIF_PROT_READ, 0, epd, RO_OFF);
	res[2] = m != SCIF_MMAP_FAILED ? EBADMSG : errno == ENXIO ? 0 : errno;
	scif_send(epd, c, sizeof(c), SCIF_SEND_BLOCK);
	scif_close(epd);
}

/* The round trip of peer @idx's ping-pong, before its rows. */
static void note(int idx)
{
	if (!results[idx][1])
		printf("# mmap ping-pong with node %u: %d round trips, %.2f us each\n",
		       peers[idx], ROUNDS, rtt_us[idx]);
}

int main(void)
{
	static const struct cluster_test ct = {
		.prefix = "mmap", .port = MMAP_PORT,
		.checks = checks, .nr_checks = NR_CHECKS,
		.results = &results[0][0],
		.serve = serve, .run_checks = run_checks,
		.sequential = true, .note = note,
	};
	static const struct cluster_test ct_unreachable = {
		.prefix = "mmap", .port = MMAP_PORT,
		.checks = unreachable_checks, .nr_checks = 3,
		.results = &unreachable_results[0][0],
		.serve = serve, .run_checks = run_unreachable,
		.sequential = true,
	};
	const char *unreachable = getenv("SCIF_MMAP_UNREACHABLE");

	if (unreachable && !strcmp(unreachable, "1"))
		return cluster_main(&ct_unreachable);
	return cluster_main(&ct);
}
