// SPDX-License-Identifier: GPL-2.0
/*
 * RMA over an NTB without a full-reach window, in a 2-node cluster joined
 * by the emulated NTB (qemu/cluster.sh -T ntb, scif_ntb, two windows of
 * 4 and 2 MiB): registered pages are out of the windows' reach, so every
 * RMA goes through staging buffers (Documentation/scif/design.rst,
 * "Memory the link cannot reach").  Node 1 registers a 16 MiB window
 * and serves commands (fill, check) on it; node 0 checks that:
 *
 * - both sides can register (the peer's window is announced "staged");
 * - a remote mmap of the peer's window fails with ENXIO (documented: no
 *   window of the NTB reaches those pages);
 * - all four RMA calls move the right bytes, synchronous, asynchronous
 *   (then fence mark and wait, or a fence signal local and remote) and
 *   by the CPU, for lengths from 1 byte to 16 MiB at unaligned offsets;
 *   the serving node compares its own memory;
 * - the staging counter (debugfs rma "staged_bytes") grew by at least
 *   the bytes moved: the data did go through staging;
 * - the connection still carries bytes afterwards.
 *
 * Node 0 prints TAP; node 1 prints one line when done.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "scif.h"
#include "scif_test_util.h"

#define PORT	2300
#define MB	(1024 * 1024L)
#define WIN	(16 * MB + 64 * 1024)
#define SIG_OFF	(WIN - 64)

enum { CMD_FILL = 1, CMD_CHECK, CMD_CHECKVAL, CMD_DONE };

struct cmd {
	uint32_t op;
	uint32_t seed;
	uint64_t off;
	uint64_t len;
};

static const struct {
	long off, len;
} cases[] = {
	{ 0, 1 }, { 1, 4095 }, { 4093, 65537 }, { 777, 256 * 1024 + 3 },
	{ 5, MB + 7 }, { 0, 16 * MB },
};
#define NR_CASES	(int)(sizeof(cases) / sizeof(cases[0]))

static int t, failed;

static void check(int ok, const char *name)
{
	printf("%sok %d %s\n", ok ? "" : "not ", ++t, name);
	fflush(stdout);
	failed |= !ok;
}

static void fill(uint8_t *buf, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		x = x * 1664525u + 1013904223u;
		buf[i] = x >> 24;
	}
}

static int same(const uint8_t *buf, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		x = x * 1664525u + 1013904223u;
		if (buf[i] != (uint8_t)(x >> 24))
			return 0;
	}
	return 1;
}

static uint8_t *map_mem(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int send_all(int epd, const void *p, int len)
{
	return scif_send(epd, (void *)p, len, SCIF_SEND_BLOCK) == len ? 0 : -1;
}

static int recv_all(int epd, void *p, int len)
{
	return scif_recv(epd, p, len, SCIF_RECV_BLOCK) == len ? 0 : -1;
}

/* Wait (up to 10 s) for the 8 bytes at @p to be @want. */
static int value_comes(volatile uint64_t *p, uint64_t want)
{
	int i;

	for (i = 0; i < 10000 && *p != want; i++)
		usleep(1000);
	return *p == want;
}

/*
 * CMD_CHECKVAL waits for the value: a remote signal is written once the
 * RMAs before it completed, with no order against later messages.
 */
static int32_t serve_cmd(uint8_t *win, const struct cmd *c)
{
	if (c->off > WIN - 8 || (c->op == CMD_CHECKVAL && c->off % 8) ||
	    (c->op != CMD_CHECKVAL && c->len > WIN - c->off))
		return EINVAL;
	switch (c->op) {
	case CMD_FILL:
		fill(win + c->off, c->len, c->seed);
		return 0;
	case CMD_CHECK:
		return same(win + c->off, c->len, c->seed) ? 0 : EBADMSG;
	case CMD_CHECKVAL:
		return value_comes((volatile uint64_t *)(win + c->off), c->len) ?
		       0 : EBADMSG;
	}
	return EINVAL;
}

static int serve(void)
{
	struct scif_port_id peer;
	uint8_t *win = map_mem(WIN);
	int lep, epd;
	int32_t r = 0;
	struct cmd c;

	alarm(900);
	lep = scif_open();
	if (!win || lep < 0 || scif_bind(lep, PORT) < 0 ||
	    scif_listen(lep, 1) < 0 ||
	    scif_accept(lep, &peer, &epd, SCIF_ACCEPT_SYNC) < 0)
		return 1;
	if (scif_register(epd, win, WIN, 0, SCIF_PROT_READ | SCIF_PROT_WRITE,
			  SCIF_MAP_FIXED) != 0)
		r = errno;
	if (send_all(epd, &r, sizeof(r)) || r)
		return 1;
	while (!recv_all(epd, &c, sizeof(c)) && c.op != CMD_DONE) {
		r = serve_cmd(win, &c);
		if (send_all(epd, &r, sizeof(r)))
			return 1;
	}
	/* Echo one byte, then wait for the peer to close. */
	if (recv_all(epd, &r, 1) || send_all(epd, &r, 1))
		return 1;
	scif_recv(epd, &r, 1, SCIF_RECV_BLOCK);
	scif_close(epd);
	scif_close(lep);
	printf("# node 1: served\n");
	return 0;
}

static int ask(int epd, uint32_t op, uint32_t seed, uint64_t off, uint64_t len)
{
	struct cmd c = { op, seed, off, len };
	int32_t r;

	if (send_all(epd, &c, sizeof(c)) || recv_all(epd, &r, sizeof(r)))
		return errno ? errno : EIO;
	return r;
}

static int connect_node1(void)
{
	struct scif_port_id dst = { .node = 1, .port = PORT };
	int i, epd;

	for (i = 0; i < 600; i++) {
		epd = scif_open();
		if (epd < 0)
			return -1;
		if (scif_connect(epd, &dst) >= 0)
			return epd;
		scif_close(epd);
		usleep(100 * 1000);
	}
	return -1;
}

/*
 * One length at one offset, four ways: vwriteto (sync) and vreadfrom by
 * the CPU, then writeto (async, fence mark and wait) and readfrom
 * (async, then a fence signal local and remote).
 */
static void one_case(int epd, uint8_t *lwin, uint8_t *buf, int i)
{
	long off = cases[i].off, len = cases[i].len;
	uint32_t seed = 100 + 4 * i;
	volatile uint64_t *lsig = (volatile uint64_t *)(lwin + SIG_OFF);
	char name[80];
	int ok, mark;

	fill(buf, len, seed);
	ok = !scif_vwriteto(epd, buf, len, off, SCIF_RMA_SYNC) &&
	     !ask(epd, CMD_CHECK, seed, off, len);
	snprintf(name, sizeof(name), "vwriteto_sync_%ld_at_%ld", len, off);
	check(ok, name);

	memset(buf, 0, len);
	ok = !scif_vreadfrom(epd, buf, len, off, SCIF_RMA_USECPU) &&
	     same(buf, len, seed);
	snprintf(name, sizeof(name), "vreadfrom_cpu_%ld_at_%ld", len, off);
	check(ok, name);

	fill(lwin + off, len, seed + 1);
	ok = !scif_writeto(epd, off, len, off, 0) &&
	     !scif_fence_mark(epd, SCIF_FENCE_INIT_SELF, &mark) &&
	     !scif_fence_wait(epd, mark) &&
	     !ask(epd, CMD_CHECK, seed + 1, off, len);
	snprintf(name, sizeof(name), "writeto_async_fence_wait_%ld_at_%ld",
		 len, off);
	check(ok, name);

	memset(lwin + off, 0, len);
	*lsig = 0;
	ok = !ask(epd, CMD_FILL, seed + 2, off, len) &&
	     !scif_readfrom(epd, off, len, off, 0) &&
	     !scif_fence_signal(epd, SIG_OFF, seed + 7, SIG_OFF, seed + 9,
				SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL |
				SCIF_SIGNAL_REMOTE) &&
	     value_comes(lsig, seed + 7) && same(lwin + off, len, seed + 2) &&
	     !ask(epd, CMD_CHECKVAL, 0, SIG_OFF, seed + 9);
	snprintf(name, sizeof(name), "readfrom_async_fence_signal_%ld_at_%ld",
		 len, off);
	check(ok, name);
}

static int drive(void)
{
	uint8_t *lwin = map_mem(WIN), *buf = map_mem(WIN);
	long staged0, staged1, moved = 0;
	struct cmd done = { 0 };
	int32_t ready = -1;
	off_t off;
	void *map;
	int epd, i;
	char c = 'x';

	printf("1..%d\n", 6 + 4 * NR_CASES);
	epd = connect_node1();
	check(epd >= 0, "connected_to_node_1");
	if (epd < 0 || !lwin || !buf)
		return 1;
	check(!recv_all(epd, &ready, sizeof(ready)) && !ready,
	      "peer_registered_16_MiB");
	errno = 0;
	off = scif_register(epd, lwin, WIN, 0,
			    SCIF_PROT_READ | SCIF_PROT_WRITE, SCIF_MAP_FIXED);
	printf("# scif_register: %lld, %s\n", (long long)off, strerror(errno));
	check(off == 0, "register_local_16_MiB");
	errno = 0;
	map = scif_mmap(NULL, 4096, SCIF_PROT_READ, 0, epd, 0);
	printf("# scif_mmap of the peer's window: %s\n", strerror(errno));
	check(map == SCIF_MMAP_FAILED && errno == ENXIO,
	      "mmap_unreachable_window_enxio");
	staged0 = rma_stat("staged_bytes");
	for (i = 0; i < NR_CASES; i++) {
		one_case(epd, lwin, buf, i);
		moved += 4 * cases[i].len;
	}
	staged1 = rma_stat("staged_bytes");
	printf("# staged_bytes: %ld -> %ld (moved %ld)\n", staged0, staged1,
	       moved);
	check(staged0 >= 0 && staged1 - staged0 >= moved,
	      "rma_went_through_staging");
	done.op = CMD_DONE;
	send_all(epd, &done, sizeof(done));
	check(!send_all(epd, &c, 1) && (c = 0, !recv_all(epd, &c, 1)) &&
	      c == 'x', "echo_after_rma");
	scif_close(epd);
	return failed;
}

int main(void)
{
	const char *node = getenv("SCIF_NODE");

	if (!node || !getenv("SCIF_NODES")) {
		printf("1..0 # SKIP not a cluster node\n");
		return 0;
	}
	return atoi(node) == 0 ? drive() : serve();
}
