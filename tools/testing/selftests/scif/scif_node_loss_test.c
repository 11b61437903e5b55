// SPDX-License-Identifier: GPL-2.0
/*
 * Losing a node, in a 2-node cluster (qemu/cluster.sh).  Node 1 runs an
 * echo server until told to quit.  Node 0, three times in a row: keeps
 * four echo streams running to node 1, has the launcher kill node 1
 * (scif-cluster kill 1: its VM stops dead, as a crashed machine), checks
 * that every stream fails with ECONNRESET within a bound, that fence
 * waits on its own RMAs into node 1 and on node 1's RMAs into node 0
 * (a mark of the peer, waited for by message) end too, that a new
 * connect gets ENODEV and that the node list no longer has node 1; then
 * has node 1 restarted and waits for it to rejoin.  Then node 1 stalls
 * instead (stall_round()), twice: the second time node 0's heartbeat
 * work stops for a moment while node 1 comes back.  At the end it checks
 * a fresh connection works and tells node 1 to quit.
 *
 * Node 0 prints TAP; node 1 prints one line when it quits.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include "scif.h"
#include "scif_mmap_test.h"

#define PORT		2200
#define BLOCK		4096
#define STREAMS		4
#define ROUNDS		3
#define HB_TIMEOUT	"/sys/module/scif_ivshmem/parameters/hb_timeout_ms"
/*
 * Streams reset, fence waits end and mappings fault within this of the
 * kill: the bus's heartbeat timeout (scif_ivshmem's hb_timeout_ms, 1000
 * by default, more on the debug kernel: see scripts/check.sh) and 4 s.
 */
static long reset_bound_ms = 5000;
#define FENCE_WIN	(1024 * 1024L)

static int t;

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void check(int ok, const char *fmt, int round, const char *extra)
{
	printf("%sok %d round_%d_", ok ? "" : "not ", ++t, round);
	printf(fmt, extra);
	printf("\n");
	fflush(stdout);
}

/* ---- node 1: the echo server ---- */

/* "FENC": a window, then RMAs into node 0's window until the end. */
static void fence_producer(scif_epd_t epd, char *buf)
{
	static char win[FENCE_WIN] __attribute__((aligned(4096)));

	if (scif_register(epd, win, FENCE_WIN, 0,
			  SCIF_PROT_READ | SCIF_PROT_WRITE, SCIF_MAP_FIXED) ||
	    scif_send(epd, buf, BLOCK, SCIF_SEND_BLOCK) != BLOCK)
		return;
	while (!scif_writeto(epd, 0, FENCE_WIN, 0, 0))
		;
}

static void *echo_conn(void *arg)
{
	scif_epd_t epd = (intptr_t)arg;
	char buf[BLOCK];

	for (;;) {
		if (scif_recv(epd, buf, BLOCK, SCIF_RECV_BLOCK) != BLOCK)
			break;
		if (!memcmp(buf, "FENC", 4)) {
			fence_producer(epd, buf);
			break;
		}
		if (!memcmp(buf, "QUIT", 4)) {
			printf("# node 1: told to quit\n");
			fflush(stdout);
			exit(0);
		}
		if (scif_send(epd, buf, BLOCK, SCIF_SEND_BLOCK) != BLOCK)
			break;
	}
	scif_close(epd);
	return NULL;
}

static int serve(void)
{
	struct scif_port_id peer;
	scif_epd_t lep = scif_open(), epd;
	pthread_t th;

	if (lep < 0 || scif_bind(lep, PORT) < 0 || scif_listen(lep, 16) < 0)
		return 1;
	for (;;) {
		if (scif_accept(lep, &peer, &epd, SCIF_ACCEPT_SYNC) < 0)
			continue;
		pthread_create(&th, NULL, echo_conn, (void *)(intptr_t)epd);
		pthread_detach(th);
	}
}

/* ---- node 0: the driver ---- */

struct stream {
	pthread_t th;
	scif_epd_t epd;
	int err;
	long failed_at;
	long blocks;
};

static void *stream_fn(void *arg)
{
	struct stream *s = arg;
	char out[BLOCK], in[BLOCK];

	for (;;) {
		memset(out, (int)(s->blocks & 0xff), BLOCK);
		out[0] = 'D';
		if (scif_send(s->epd, out, BLOCK, SCIF_SEND_BLOCK) != BLOCK ||
		    scif_recv(s->epd, in, BLOCK, SCIF_RECV_BLOCK) != BLOCK)
			break;
		if (memcmp(in, out, BLOCK)) {
			s->err = EBADMSG;
			s->failed_at = now_ms();
			return NULL;
		}
		s->blocks++;
	}
	s->err = errno;
	s->failed_at = now_ms();
	return NULL;
}

/*
 * Fence waits that the loss of node 1 must end: on our own RMAs into
 * node 1's window, and on node 1's RMAs into ours (a peer mark).
 */
struct fencer {
	pthread_t th;
	scif_epd_t epd;
	int peer;		/* wait on node 1's RMAs */
	int err;
	long failed_at;
	long waits;
};

static void *fence_fn(void *arg)
{
	struct fencer *f = arg;
	int mark;

	for (;;) {
		if (!f->peer && scif_writeto(f->epd, 0, FENCE_WIN, 0, 0))
			break;
		if (scif_fence_mark(f->epd, f->peer ? SCIF_FENCE_INIT_PEER :
				    SCIF_FENCE_INIT_SELF, &mark) ||
		    scif_fence_wait(f->epd, mark))
			break;
		f->waits++;
	}
	f->err = errno;
	f->failed_at = now_ms();
	return NULL;
}

static scif_epd_t connect_to(uint16_t node, int tries);

/* A connection on which node 1 has a window and copies into ours. */
static scif_epd_t fence_conn(void)
{
	static char win[FENCE_WIN] __attribute__((aligned(4096)));
	char buf[BLOCK] = "FENC";
	scif_epd_t epd = connect_to(1, 50);

	if (epd < 0)
		return -1;
	if (scif_register(epd, win, FENCE_WIN, 0,
			  SCIF_PROT_READ | SCIF_PROT_WRITE, SCIF_MAP_FIXED) ||
	    scif_send(epd, buf, BLOCK, SCIF_SEND_BLOCK) != BLOCK ||
	    scif_recv(epd, buf, BLOCK, SCIF_RECV_BLOCK) != BLOCK) {
		scif_close(epd);
		return -1;
	}
	return epd;
}

static int nodes_online(uint16_t *self)
{
	uint16_t nodes[16];

	return scif_get_nodeIDs(nodes, 16, self);
}

static int wait_nodes(int want, int ms)
{
	long end = now_ms() + ms;
	uint16_t self;
	int n;

	while ((n = nodes_online(&self)) != want && now_ms() < end)
		usleep(100 * 1000);
	return n;
}

static scif_epd_t connect_to(uint16_t node, int tries)
{
	struct scif_port_id dst = { .node = node, .port = PORT };
	scif_epd_t epd;

	while (tries--) {
		epd = scif_open();
		if (epd < 0)
			return -1;
		if (scif_connect(epd, &dst) >= 0)
			return epd;
		scif_close(epd);
		usleep(200 * 1000);
	}
	return -1;
}

static int run_round(int round)
{
	struct stream s[STREAMS] = { 0 };
	struct fencer f[2] = { { .peer = 0 }, { .peer = 1 } };
	long killed, worst = 0;
	int i, ok = 1, epd;
	void *map;
	uint16_t self;

	check(wait_nodes(2, 60000) == 2, "node_1_online%s", round, "");
	for (i = 0; i < STREAMS; i++) {
		s[i].epd = connect_to(1, 50);
		if (s[i].epd < 0)
			ok = 0;
	}
	check(ok, "connected_%s_streams", round, "4");
	if (!ok)
		return -1;
	f[0].epd = f[1].epd = fence_conn();
	check(f[0].epd >= 0, "fence_connection%s", round, "");
	if (f[0].epd < 0)
		return -1;
	/* Node 1's window, mapped: readable until node 1 is lost. */
	map = scif_mmap(NULL, BLOCK, SCIF_PROT_READ, 0, f[0].epd, 0);
	check(map != MAP_FAILED && !probe(map, false), "window_mapped%s", round,
	      "");
	for (i = 0; i < STREAMS; i++)
		pthread_create(&s[i].th, NULL, stream_fn, &s[i]);
	for (i = 0; i < 2; i++)
		pthread_create(&f[i].th, NULL, fence_fn, &f[i]);
	sleep(1);
	killed = now_ms();
	check(system("scif-cluster kill 1") == 0, "node_1_killed%s", round, "");
	for (i = 0; i < STREAMS; i++) {
		pthread_join(s[i].th, NULL);
		if (s[i].err != ECONNRESET || !s[i].blocks) {
			printf("# stream %d: %ld blocks, then %s\n", i,
			       s[i].blocks, strerror(s[i].err));
			ok = 0;
		}
		if (s[i].failed_at - killed > worst)
			worst = s[i].failed_at - killed;
		scif_close(s[i].epd);
	}
	check(ok, "streams_were_moving_and_got_econnreset%s", round, "");
	ok = 1;
	for (i = 0; i < 2; i++) {
		pthread_join(f[i].th, NULL);
		if ((f[i].err != ENODEV && f[i].err != ECONNRESET) ||
		    f[i].failed_at - killed > reset_bound_ms) {
			printf("# fence wait %d: %ld waits, then %s after %ld ms\n",
			       i, f[i].waits, strerror(f[i].err),
			       f[i].failed_at - killed);
			ok = 0;
		}
	}
	check(ok, "fence_waits_ended_by_the_loss%s", round, "");
	ok = map != MAP_FAILED &&
	     !probe_until(map, SIGBUS, reset_bound_ms - (now_ms() - killed));
	printf("# round %d: the mapping got SIGBUS %ld ms after the kill\n",
	       round, now_ms() - killed);
	check(ok, "mapping_sigbus_after_the_loss%s", round, "");
	if (map != MAP_FAILED)
		scif_munmap(map, BLOCK);
	scif_close(f[0].epd);
	printf("# round %d: streams reset %ld ms after the kill\n", round, worst);
	check(worst < reset_bound_ms, "reset_within_bound%s", round, "");
	check(nodes_online(&self) == 1, "node_list_without_node_1%s", round, "");
	epd = scif_open();
	{
		struct scif_port_id dst = { .node = 1, .port = PORT };

		check(scif_connect(epd, &dst) < 0 && errno == ENODEV,
		      "connect_to_lost_node_enodev%s", round, "");
	}
	scif_close(epd);
	check(system("scif-cluster restart 1") == 0, "node_1_restarted%s",
	      round, "");
	return 0;
}

/* pinned_pages of <debugfs>/scif/rma, or -1. */
static long pinned_pages(void)
{
	FILE *f = fopen("/sys/kernel/debug/scif/rma", "r");
	char buf[2048], *p;
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strstr(buf, "pinned_pages");
	return p ? atol(p + strlen("pinned_pages") + 1) : -1;
}

static long pinned_settles_at(long want, int ms)
{
	long end = now_ms() + ms, n;

	while ((n = pinned_pages()) != want && now_ms() < end)
		usleep(100 * 1000);
	return n;
}

#define STALL		"/sys/kernel/debug/scif_ivshmem/stall_ms"
/* Under hb_timeout_ms (1000 or more): node 1 must not find node 0 silent. */
#define STALL_MS	"700"

/*
 * Node 0's heartbeat work stops for STALL_MS (a test hook of
 * scif_ivshmem's test build): 1 if it did, 0 if there is no such hook
 * (another bus), -1 if writing it failed.
 */
static int stall_heartbeat(void)
{
	FILE *f = fopen(STALL, "w");
	int ok;

	if (!f)
		return errno == ENOENT ? 0 : -1;
	ok = fputs(STALL_MS, f) >= 0;
	return fclose(f) == 0 && ok ? 1 : -1;
}

/*
 * Node 1 stalls (its VM stopped, as a machine that hangs) past the
 * heartbeat timeout while it writes into a window of ours.  It is
 * failed: our connection to it is reset at once, but the window it
 * writes into stays pinned after we close it, for it may still finish
 * that write, until node 1 wakes up, finds that we dropped it and lets
 * us go.  Then the pages are released and node 1 rejoins.
 *
 * SCIF_STALL_IS_LOSS=1: the bus reports a silent node down, not failed,
 * because the link it wrote through is gone (an NTB whose link drops): the
 * window is released as soon as we close it.
 *
 * @busy: node 0's heartbeat work stops from just before node 1 resumes,
 * long enough for node 1 to find that node 0 dropped it, drop node 0 in
 * turn and publish its next queue, all between two looks of node 0 (a
 * race that once kept node 1 out for good): node 1 must rejoin all the
 * same.
 */
static void stall_round(int round, bool busy)
{
	const char *loss = getenv("SCIF_STALL_IS_LOSS");
	char buf[BLOCK] = "ping";
	long base, held, t0;
	scif_epd_t epd;
	int hook;

	check(wait_nodes(2, 60000) == 2, "node_1_online%s", round, "");
	base = pinned_pages();
	epd = fence_conn();
	check(epd >= 0 && base >= 0, "node_1_writes_into_our_window%s", round,
	      "");
	if (epd < 0)
		return;
	held = pinned_pages();
	check(held >= base + FENCE_WIN / 4096, "window_pinned%s", round, "");
	check(system("scif-cluster pause 1") == 0, "node_1_paused%s", round, "");
	check(wait_nodes(1, 10000) == 1, "node_1_failed_while_paused%s", round,
	      "");
	check(scif_send(epd, buf, BLOCK, 0) < 0 && errno == ECONNRESET,
	      "connection_reset%s", round, "");
	scif_close(epd);
	sleep(1);
	printf("# stall: pinned %ld before, %ld with the window, %ld now\n",
	       base, held, pinned_pages());
	if (loss && !strcmp(loss, "1"))
		check(pinned_settles_at(base, 10000) == base,
		      "window_released_with_the_link%s", round, "");
	else
		check(pinned_pages() >= held,
		      "window_stays_pinned_while_node_1_may_write%s", round, "");
	if (busy) {
		hook = stall_heartbeat();
		check(hook >= 0, "node_0_busy_while_node_1_resumes%s", round,
		      hook ? "" : " # SKIP no " STALL " (not scif_ivshmem's test build)");
	}
	t0 = now_ms();
	check(system("scif-cluster resume 1") == 0, "node_1_resumed%s", round,
	      "");
	printf("# resuming node 1 took %ld ms\n", now_ms() - t0);
	check(wait_nodes(2, 60000) == 2, "node_1_rejoined_after_the_stall%s",
	      round, "");
	check(pinned_settles_at(base, 10000) == base,
	      "window_released_once_node_1_let_go%s", round, "");
}

static int drive(void)
{
	char msg[BLOCK] = "QUIT";
	int round, epd;

	printf("TAP version 13\n1..%d\n", ROUNDS * 12 + 10 + 11 + 2);
	for (round = 1; round <= ROUNDS; round++)
		if (run_round(round))
			return 1;
	stall_round(ROUNDS + 1, false);
	stall_round(ROUNDS + 2, true);
	check(wait_nodes(2, 60000) == 2, "node_1_rejoined%s", ROUNDS + 3, "");
	epd = connect_to(1, 50);
	check(epd >= 0 && scif_send(epd, msg, BLOCK, SCIF_SEND_BLOCK) == BLOCK,
	      "new_connection_works%s", ROUNDS + 3, "");
	scif_close(epd);
	return 0;
}

int main(void)
{
	const char *node = getenv("SCIF_NODE");
	long hb;
	FILE *f;

	if (!node || !getenv("SCIF_CONTROL")) {
		printf("1..0 # SKIP not in a cluster\n");
		return 4;
	}
	f = fopen(HB_TIMEOUT, "r");
	if (f) {
		if (fscanf(f, "%ld", &hb) == 1 && hb > 0)
			reset_bound_ms = hb + 4000;
		fclose(f);
	}
	return atoi(node) == 0 ? drive() : serve();
}
