// SPDX-License-Identifier: GPL-2.0
/*
 * A peer that sends random and mutated node messages of every op, in a
 * 3-node cluster (qemu/cluster.sh, peer-fuzz-steps) or on one node
 * (loopback: the node is its own attacker).  The attacker is the test
 * hook <debugfs>/scif/peer_fuzz of the test build (scif_testhooks.c).
 *
 *   node 0  the victim: runs an echo server (each connection registers
 *           a window, so REGISTER messages and window ids go both ways)
 *           and keeps an echo stream to node 2 going throughout
 *   node 1  the attacker: opens connections to node 0's echo server,
 *           registers windows, then writes "SEED COUNT 0" to peer_fuzz
 *           in rounds (its handles, ids and offsets are replayed), then
 *           tells node 0 it is done over a fresh connection
 *   node 2  the bystander: an echo server for node 0's stream
 *
 * Node 0's checks (TAP): the stream to node 2 kept moving, and every
 * echo came back intact, during and after the fuzz; node 0's endpoints,
 * windows (local and remote) and pinned pages return to what they were
 * before the test, and its unreclaimable slab to within 8 MiB of it.
 * That the victim stays up and its kernel log is clean is checked by
 * the harness (the run completes; check-log.sh).
 *
 * SEED and COUNT come from "peerfuzz=SEED,COUNT" on the kernel command
 * line (scripts/fuzz.sh), else the defaults below (make check).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include "scif.h"

#define ECHO_PORT	2401
#define CTL_PORT	2402
#define MSG		1024
#define WIN		(4 * 4096)
#define NCONN		4
#define ROUNDS		10
#define DEF_SEED	12
#define DEF_COUNT	20000
#define DBG		"/sys/kernel/debug/scif/"
#define SLAB_SLACK	(8L << 20)

static atomic_bool stop;
static atomic_long stream_ok, stream_bad;
static atomic_int servers;
static int t;

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void tap(bool ok, const char *name)
{
	printf("%sok %d %s\n", ok ? "" : "not ", ++t, name);
	fflush(stdout);
}

static long file_value(const char *path, const char *name)
{
	char line[256];
	long v = -1;
	FILE *f = fopen(path, "r");
	size_t n = strlen(name);

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) &&
		    (line[n] == ' ' || line[n] == ':'))
			v = atol(line + n + 1);
	fclose(f);
	return v;
}

static long lines(const char *path)
{
	char line[256];
	long n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

struct snap {
	long eps, pinned, windows, rwindows, slab_kb;
};

static void snap(struct snap *s)
{
	s->eps = lines(DBG "endpoints");
	s->pinned = file_value(DBG "rma", "pinned_pages");
	s->windows = file_value(DBG "rma", "windows");
	s->rwindows = file_value(DBG "rma", "remote_windows");
	s->slab_kb = file_value("/proc/meminfo", "SUnreclaim");
}

static bool same(const struct snap *a, const struct snap *b)
{
	/* What an earlier program left may still be going: not above. */
	return b->eps <= a->eps && b->pinned <= a->pinned &&
	       b->windows <= a->windows && b->rwindows <= a->rwindows;
}

/* One echo round on @fd: send MSG bytes of @tag, get them back. */
static int echo_round(int fd, uint32_t tag)
{
	char out[MSG], in[MSG];
	int i;

	for (i = 0; i < MSG; i++)
		out[i] = (char)(tag * 131 + i);
	if (scif_send(fd, out, MSG, SCIF_SEND_BLOCK) != MSG)
		return -1;
	if (scif_recv(fd, in, MSG, SCIF_RECV_BLOCK) != MSG)
		return -1;
	return memcmp(in, out, MSG) ? 1 : 0;
}

/* Serve one connection: a window, then echo until it ends. */
static void *serve_conn(void *arg)
{
	int fd = (intptr_t)arg;
	char buf[MSG];
	off_t off = -1;
	void *win;

	win = mmap(NULL, WIN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (win != MAP_FAILED)
		off = scif_register(fd, win, WIN, 0,
				    SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	while (!atomic_load(&stop)) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 200) <= 0)
			continue;
		if (p.revents & (POLLHUP | POLLERR) && !(p.revents & POLLIN))
			break;
		if (scif_recv(fd, buf, MSG, SCIF_RECV_BLOCK) != MSG ||
		    scif_send(fd, buf, MSG, SCIF_SEND_BLOCK) != MSG)
			break;
	}
	if (off >= 0)
		scif_unregister(fd, off, WIN);
	scif_close(fd);
	if (win != MAP_FAILED)
		munmap(win, WIN);
	atomic_fetch_sub(&servers, 1);
	return NULL;
}

/* Accept on @arg's listener until stop; a thread per connection. */
static void *echo_server(void *arg)
{
	int l = (intptr_t)arg, fd;
	struct scif_port_id peer;
	pthread_t th;

	while (!atomic_load(&stop)) {
		struct pollfd p = { .fd = l, .events = POLLIN };

		if (poll(&p, 1, 200) <= 0)
			continue;
		if (scif_accept(l, &peer, &fd, 0))
			continue;
		atomic_fetch_add(&servers, 1);
		if (pthread_create(&th, NULL, serve_conn, (void *)(intptr_t)fd)) {
			scif_close(fd);
			atomic_fetch_sub(&servers, 1);
			continue;
		}
		pthread_detach(th);
	}
	return NULL;
}

static int listen_on(uint16_t port)
{
	int l = scif_open();

	if (l < 0 || scif_bind(l, port) < 0 || scif_listen(l, 16)) {
		perror("# listen");
		return -1;
	}
	return l;
}

static int connect_to(uint16_t node, uint16_t port, int secs)
{
	struct scif_port_id dst = { .node = node, .port = port };
	long end = now_ms() + secs * 1000L;
	int fd;

	do {
		fd = scif_open();
		if (fd < 0)
			return -1;
		if (scif_connect(fd, &dst) >= 0)
			return fd;
		scif_close(fd);
		usleep(100000);
	} while (now_ms() < end);
	return -1;
}

/* The victim's stream to the bystander. */
static void *stream(void *arg)
{
	int fd = (intptr_t)arg;
	uint32_t tag = 0;

	while (!atomic_load(&stop)) {
		if (echo_round(fd, ++tag)) {
			atomic_fetch_add(&stream_bad, 1);
			printf("# stream to the bystander failed at round %u\n",
			       tag);
			break;
		}
		atomic_fetch_add(&stream_ok, 1);
	}
	return NULL;
}

static bool node_listed(uint16_t id)
{
	uint16_t nodes[16], self;
	int n = scif_get_nodeIDs(nodes, 16, &self), i;

	for (i = 0; i < n && i < 16; i++)
		if (nodes[i] == id)
			return true;
	return false;
}

/* The attacker: connections with windows, then the fuzz, in rounds. */
static int attack(uint16_t victim, uint64_t seed, unsigned int count)
{
	int fds[NCONN], i, r, sent_ok = 0, alive = 0;
	void *win[NCONN];
	char cmd[96], stats[256];

	for (i = 0; i < NCONN; i++) {
		fds[i] = connect_to(victim, ECHO_PORT, 60);
		win[i] = mmap(NULL, WIN, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (fds[i] < 0 || win[i] == MAP_FAILED) {
			printf("# attacker: no connection %d to node %u\n", i,
			       victim);
			continue;
		}
		scif_register(fds[i], win[i], WIN, 0,
			      SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
		echo_round(fds[i], i);
	}
	for (r = 0; r < ROUNDS; r++) {
		int fd = open(DBG "peer_fuzz", O_WRONLY);
		long t0 = now_ms();
		ssize_t n;

		snprintf(cmd, sizeof(cmd), "%llu %u %u",
			 (unsigned long long)seed + r, count / ROUNDS, victim);
		if (fd < 0) {
			printf("# peer_fuzz: %s\n", strerror(errno));
			return 1;
		}
		n = write(fd, cmd, strlen(cmd));
		printf("# peer-fuzz round %d: \"%s\": %s (%ld ms)\n", r, cmd,
		       n < 0 ? strerror(errno) : "sent", now_ms() - t0);
		close(fd);
		if (n < 0)
			break;
		sent_ok++;
	}
	for (i = 0; i < NCONN; i++)
		if (fds[i] >= 0 && echo_round(fds[i], 100 + i) == 0)
			alive++;
	printf("# peer-fuzz: %d of %d rounds sent; %d of %d attacker connections still echo\n",
	       sent_ok, ROUNDS, alive, NCONN);
	{
		int fd = open(DBG "peer_fuzz", O_RDONLY);
		ssize_t n = fd >= 0 ? read(fd, stats, sizeof(stats) - 1) : -1;

		if (n > 0) {
			stats[n] = '\0';
			for (char *p = strtok(stats, "\n"); p; p = strtok(NULL, "\n"))
				printf("# peer-fuzz: %s\n", p);
		}
		if (fd >= 0)
			close(fd);
	}
	for (i = 0; i < NCONN; i++)
		if (fds[i] >= 0)
			scif_close(fds[i]);
	return 0;
}

int main(void)
{
	uint64_t seed = DEF_SEED;
	unsigned int count = DEF_COUNT;
	uint16_t nodes[16], self;
	char cmdline[4096], *p;
	struct snap before, after;
	pthread_t srv, st;
	int nr, l, ctl = -1, sfd = -1, i;
	long ok0, ok1, ms;
	bool cluster;
	FILE *f;

	setvbuf(stdout, NULL, _IOLBF, 0);
	f = fopen("/proc/cmdline", "r");
	if (f) {
		size_t n = fread(cmdline, 1, sizeof(cmdline) - 1, f);

		cmdline[n] = '\0';
		fclose(f);
		p = strstr(cmdline, "peerfuzz=");
		if (p)
			sscanf(p, "peerfuzz=%llu,%u",
			       (unsigned long long *)&seed, &count);
	}
	cluster = getenv("SCIF_NODES") && atoi(getenv("SCIF_NODES")) >= 3;
	for (i = 0; i < 600; i++) {
		nr = scif_get_nodeIDs(nodes, 16, &self);
		if (nr >= (cluster ? 3 : 1))
			break;
		usleep(100000);
	}
	printf("# peer fuzz: seed %llu, %u messages, %s, node %u\n",
	       (unsigned long long)seed, count,
	       cluster ? "3-node cluster" : "loopback", self);
	if (access(DBG "peer_fuzz", F_OK)) {
		printf("1..0 # SKIP no %speer_fuzz (not the test build)\n", DBG);
		return 4;
	}
	if (cluster && self == 1) {
		int r = attack(0, seed, count);

		ctl = connect_to(0, CTL_PORT, 60);
		if (ctl >= 0) {
			scif_send(ctl, "done", 4, SCIF_SEND_BLOCK);
			scif_recv(ctl, cmdline, 4, SCIF_RECV_BLOCK);
			scif_close(ctl);
		} else {
			printf("# attacker: could not tell node 0 (%s)\n",
			       strerror(errno));
		}
		return r;
	}
	if (cluster && self == 2) {
		/* Serve node 0's stream until node 0 says it is done. */
		l = listen_on(ECHO_PORT);
		ctl = listen_on(CTL_PORT);
		if (l < 0 || ctl < 0)
			return 1;
		pthread_create(&srv, NULL, echo_server, (void *)(intptr_t)l);
		{
			struct scif_port_id peer;
			int fd;

			alarm(1400);
			if (!scif_accept(ctl, &peer, &fd, SCIF_ACCEPT_SYNC))
				scif_close(fd);
		}
		atomic_store(&stop, true);
		pthread_join(srv, NULL);
		return 0;
	}

	/* The victim. */
	printf("TAP version 13\n1..%d\n", cluster ? 6 : 5);
	snap(&before);
	l = listen_on(ECHO_PORT);
	if (l < 0)
		return 1;
	pthread_create(&srv, NULL, echo_server, (void *)(intptr_t)l);
	if (cluster) {
		ctl = listen_on(CTL_PORT);
		sfd = connect_to(2, ECHO_PORT, 60);
		if (ctl < 0 || sfd < 0) {
			printf("# no stream to node 2\n");
			return 1;
		}
		pthread_create(&st, NULL, stream, (void *)(intptr_t)sfd);
		/* Until node 1 is done, or gone. */
		ms = now_ms();
		ok0 = atomic_load(&stream_ok);
		for (;;) {
			struct pollfd pf = { .fd = ctl, .events = POLLIN };
			struct scif_port_id peer;
			int fd;

			if (poll(&pf, 1, 1000) == 1 &&
			    !scif_accept(ctl, &peer, &fd, 0)) {
				scif_recv(fd, cmdline, 4, SCIF_RECV_BLOCK);
				scif_send(fd, "done", 4, SCIF_SEND_BLOCK);
				scif_close(fd);
				break;
			}
			if (!node_listed(1)) {
				printf("# node 1 is no longer listed: the victim dropped it\n");
				break;
			}
			if (now_ms() - ms > 1300 * 1000L) {
				printf("# node 1 never said it was done\n");
				break;
			}
		}
		ok1 = atomic_load(&stream_ok);
		printf("# stream to node 2: %ld rounds during the fuzz (%ld s)\n",
		       ok1 - ok0, (now_ms() - ms) / 1000);
		tap(ok1 > ok0 && !atomic_load(&stream_bad),
		    "bystander_stream_during_fuzz");
		sleep(1);
		tap(atomic_load(&stream_ok) > ok1 && !atomic_load(&stream_bad),
		    "bystander_stream_after_fuzz");
		atomic_store(&stop, true);
		pthread_join(st, NULL);
		scif_close(sfd);
		/* Tell node 2 to finish. */
		sfd = connect_to(2, CTL_PORT, 10);
		if (sfd >= 0)
			scif_close(sfd);
		scif_close(ctl);
	} else {
		int r = attack(self, seed, count), fd;

		fd = connect_to(self, ECHO_PORT, 10);
		tap(!r && fd >= 0 && echo_round(fd, 7) == 0,
		    "new_connection_after_fuzz");
		if (fd >= 0)
			scif_close(fd);
		atomic_store(&stop, true);
	}
	pthread_join(srv, NULL);
	scif_close(l);
	for (i = 0; i < 300 && atomic_load(&servers); i++)
		usleep(100000);
	/* Destruction and unpinning are asynchronous. */
	for (i = 0; i < 300; i++) {
		snap(&after);
		if (same(&before, &after))
			break;
		usleep(100000);
	}
	printf("# before: endpoints %ld pinned %ld windows %ld remote %ld SUnreclaim %ld kB\n",
	       before.eps, before.pinned, before.windows, before.rwindows,
	       before.slab_kb);
	printf("# after:  endpoints %ld pinned %ld windows %ld remote %ld SUnreclaim %ld kB\n",
	       after.eps, after.pinned, after.windows, after.rwindows,
	       after.slab_kb);
	tap(after.eps <= before.eps, "endpoints_released");
	tap(after.pinned <= before.pinned, "pinned_pages_baseline");
	tap(after.windows <= before.windows && after.rwindows <= before.rwindows,
	    "windows_baseline");
	tap(after.slab_kb >= 0 &&
	    after.slab_kb * 1024 <= before.slab_kb * 1024 + SLAB_SLACK,
	    "slab_baseline");
	return 0;
}
