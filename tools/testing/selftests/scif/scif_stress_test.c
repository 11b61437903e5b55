// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF under load: a thousand connections open at once, each carrying
 * its own message both ways, all torn down without leaving an endpoint
 * behind; and eight 1 MiB streams on eight connections at the same time.
 *
 * Connections go to the node named by $SCIF_PEER_NODE (default: the
 * local node), so that the same program can later run across VMs.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <linux/scif_ioctl.h>

#include "scif.h"
#include "kselftest_harness.h"

#define EPD_LIST	"/sys/kernel/debug/scif/endpoints"
#define WAIT_MS		5000		/* bound on anything that should be quick */
#define NR_CONNS	1000
#define NR_STREAMS	8
#define STREAM_LEN	(1024 * 1024)
#define MSG_LEN		16

/* --- helpers ------------------------------------------------------------ */

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int count_lines(const char *path)
{
	char line[256];
	int n = 0;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

/* Poll @path for up to @ms until it has @want lines: the last count. */
static int wait_lines(const char *path, int want, int ms)
{
	long end = now_ms() + ms;
	int n;

	while ((n = count_lines(path)) != want && now_ms() < end)
		usleep(50 * 1000);
	return n;
}

/*
 * The line count of @path once it has not changed for 500 ms (endpoints
 * of earlier programs may still be going away), polling up to @ms.
 */
static int settled_lines(const char *path, int ms)
{
	long end = now_ms() + ms, stable_since = now_ms();
	int n = count_lines(path), m;

	while (now_ms() < end && now_ms() - stable_since < 500) {
		usleep(50 * 1000);
		m = count_lines(path);
		if (m != n)
			stable_since = now_ms();
		n = m;
	}
	return n;
}

static int raise_nofile(rlim_t want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -1;
	if (rl.rlim_cur >= want)
		return 0;
	rl.rlim_cur = want;
	if (rl.rlim_max < want)
		rl.rlim_max = want;
	return setrlimit(RLIMIT_NOFILE, &rl);
}

static uint16_t local_node(void)
{
	uint16_t nodes[64], self = 0;

	if (scif_get_nodeIDs(nodes, 64, &self) < 0)
		return 0;
	return self;
}

/* $SCIF_PEER_NODE, or the local node; looked up once. */
static uint16_t peer_node(void)
{
	static atomic_int cached = -1;
	const char *s = getenv("SCIF_PEER_NODE");
	unsigned long v;
	char *end;

	if (atomic_load(&cached) >= 0)
		return atomic_load(&cached);
	errno = 0;
	v = s && *s ? strtoul(s, &end, 0) : ULONG_MAX;
	if (v == ULONG_MAX || errno || *end || v > UINT16_MAX)
		v = local_node();
	atomic_store(&cached, v);
	return v;
}

/* A position-dependent byte stream, different for every @seed. */
static uint8_t pattern_next(uint32_t *x)
{
	*x = *x * 1664525u + 1013904223u;
	return *x >> 24;
}

static void fill_pattern(void *buf, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern_next(&x);
}

/* Offset of the first byte that is not the stream's, or -1. */
static ssize_t check_pattern(const void *buf, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pattern_next(&x))
			return i;
	return -1;
}

static void close_keep_errno(int fd)
{
	int err = errno;

	close(fd);
	errno = err;
}

/* An endpoint bound to any port and listening with @backlog. */
static int listener(int backlog, uint16_t *bound)
{
	int fd = scif_open(), p;

	if (fd < 0)
		return -1;
	p = scif_bind(fd, 0);
	if (p < 0 || scif_listen(fd, backlog) < 0) {
		close_keep_errno(fd);
		return -1;
	}
	*bound = p;
	return fd;
}

/* SIGALRM after @ms with a no-op handler and no SA_RESTART: EINTR. */
static void on_alarm(int sig)
{
	(void)sig;
}

static void alarm_in_ms(long ms)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = {
		.it_value = { .tv_sec = ms / 1000, .tv_usec = ms % 1000 * 1000 },
	};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

static void alarm_cancel(void)
{
	struct itimerval it = { 0 };

	setitimer(ITIMER_REAL, &it, NULL);
}

/* A blocking scif_connect() of a new endpoint, run in a thread. */
struct connector {
	pthread_t thread;
	int fd;
	struct scif_port_id dst;
	int ret;			/* scif_connect()'s result */
	int err;			/* and its errno */
	atomic_int done;
};

static void *connector_fn(void *arg)
{
	struct connector *c = arg;

	errno = 0;
	c->ret = scif_connect(c->fd, &c->dst);
	c->err = errno;
	atomic_store(&c->done, 1);
	return NULL;
}

/* Both ends of one connection. */
struct conn {
	int client, server;
};

/* Non-blocking accept retried for up to WAIT_MS, or until @c has failed. */
static int accept_wait(int lfd, int *nfd, struct connector *c)
{
	struct scif_port_id peer;
	long end = now_ms() + WAIT_MS;

	for (;;) {
		if (scif_accept(lfd, &peer, nfd, 0) == 0)
			return 0;
		if (errno != EAGAIN)
			return -1;
		if (atomic_load(&c->done) && c->ret < 0) {
			errno = c->err;
			return -1;
		}
		if (now_ms() > end) {
			errno = ETIMEDOUT;
			return -1;
		}
		usleep(1000);
	}
}

/*
 * Connect a new endpoint to listener @lfd at @port and accept it.  The
 * connector is heap-allocated and, if it never returns, left behind:
 * the test is failing then anyway.
 */
static int connect_to(int lfd, uint16_t port, struct conn *cn)
{
	struct connector *c = calloc(1, sizeof(*c));

	if (!c)
		return -1;
	c->dst.node = peer_node();
	c->dst.port = port;
	c->ret = -1;
	c->fd = scif_open();
	if (c->fd < 0 || pthread_create(&c->thread, NULL, connector_fn, c)) {
		fprintf(stderr, "# open/thread: %s\n", strerror(errno));
		return -1;
	}
	if (accept_wait(lfd, &cn->server, c)) {
		fprintf(stderr, "# accept: %s\n", strerror(errno));
		return -1;
	}
	pthread_join(c->thread, NULL);
	if (c->ret < 0) {
		fprintf(stderr, "# connect: %s\n", strerror(c->err));
		return -1;
	}
	cn->client = c->fd;
	free(c);
	return 0;
}

/* Send one MSG_LEN message of stream @seed on @from, blocking. */
static int send_msg(int from, uint32_t seed)
{
	uint8_t msg[MSG_LEN];

	fill_pattern(msg, sizeof(msg), seed);
	return scif_send(from, msg, sizeof(msg), SCIF_SEND_BLOCK) == MSG_LEN ?
		0 : -1;
}

/* Receive one message on @to: 0 if it is stream @seed's. */
static int recv_msg(int to, uint32_t seed)
{
	uint8_t msg[MSG_LEN] = { 0 };

	if (scif_recv(to, msg, sizeof(msg), SCIF_RECV_BLOCK) != MSG_LEN)
		return -1;
	return check_pattern(msg, sizeof(msg), seed) == -1 ? 0 : -1;
}

/* --- tests -------------------------------------------------------------- */

FIXTURE(stress) {
	int unused;
};

FIXTURE_SETUP(stress)
{
	/* Two endpoints per connection, plus the listener and stdio. */
	ASSERT_EQ(0, raise_nofile(4096));
}

FIXTURE_TEARDOWN(stress)
{
}

TEST_F_TIMEOUT(stress, thousand_connections, 180)
{
	struct conn *cn = calloc(NR_CONNS, sizeof(*cn));
	int before, lfd, i;
	uint16_t port;

	ASSERT_NE(NULL, cn);
	before = settled_lines(EPD_LIST, WAIT_MS);
	ASSERT_LE(0, before);
	lfd = listener(16, &port);
	ASSERT_LE(0, lfd);

	for (i = 0; i < NR_CONNS; i++)
		ASSERT_EQ(0, connect_to(lfd, port, &cn[i]))
			TH_LOG("connection %d", i);
	EXPECT_EQ(before + 1 + 2 * NR_CONNS, count_lines(EPD_LIST));

	/*
	 * All messages out before any is read, each of its own stream, so
	 * that one landing on the wrong connection shows.
	 */
	alarm_in_ms(60000);	/* a lost message ends in EINTR, not a hang */
	for (i = 0; i < NR_CONNS; i++)
		ASSERT_EQ(0, send_msg(cn[i].client, i)) TH_LOG("send %d", i);
	for (i = 0; i < NR_CONNS; i++)
		ASSERT_EQ(0, recv_msg(cn[i].server, i)) TH_LOG("recv %d", i);
	for (i = 0; i < NR_CONNS; i++)
		ASSERT_EQ(0, send_msg(cn[i].server, NR_CONNS + i))
			TH_LOG("reply %d", i);
	for (i = 0; i < NR_CONNS; i++)
		ASSERT_EQ(0, recv_msg(cn[i].client, NR_CONNS + i))
			TH_LOG("reply %d", i);
	alarm_cancel();

	for (i = 0; i < NR_CONNS; i++) {
		EXPECT_EQ(0, close(cn[i].client));
		EXPECT_EQ(0, close(cn[i].server));
	}
	EXPECT_EQ(0, close(lfd));
	/* Teardown is asynchronous: give it a moment. */
	EXPECT_EQ(before, wait_lines(EPD_LIST, before, WAIT_MS))
		system("sed 's/^/# left: /' " EPD_LIST);
	free(cn);
}

/* One side of one of the parallel streams. */
struct stream {
	int fd;
	uint8_t *buf;
	uint32_t seed;
	int chunk;			/* receive in pieces of this size */
	pthread_barrier_t *start;
	long moved;			/* bytes sent or received */
	int err;
	ssize_t bad;			/* first wrong byte received, or -1 */
};

static void *stream_send(void *arg)
{
	struct stream *s = arg;
	int n;

	pthread_barrier_wait(s->start);
	n = scif_send(s->fd, s->buf, STREAM_LEN, SCIF_SEND_BLOCK);
	s->err = errno;
	s->moved = n;
	return NULL;
}

static void *stream_recv(void *arg)
{
	struct stream *s = arg;
	long got = 0;
	int n, want;

	pthread_barrier_wait(s->start);
	while (got < STREAM_LEN) {
		want = STREAM_LEN - got < s->chunk ? STREAM_LEN - got : s->chunk;
		n = scif_recv(s->fd, s->buf + got, want, SCIF_RECV_BLOCK);
		if (n <= 0) {
			s->err = n < 0 ? errno : EIO;
			break;
		}
		got += n;
	}
	s->moved = got;
	s->bad = check_pattern(s->buf, got, s->seed);
	return NULL;
}

/* Join @t within @ms, or report it stuck. */
static int join_within(pthread_t t, int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	return pthread_timedjoin_np(t, NULL, &ts);
}

TEST_F_TIMEOUT(stress, parallel_streams, 120)
{
	struct stream tx[NR_STREAMS], rx[NR_STREAMS];
	pthread_t ttx[NR_STREAMS], trx[NR_STREAMS];
	struct conn cn[NR_STREAMS];
	pthread_barrier_t start;
	uint16_t port;
	int lfd, i;

	lfd = listener(NR_STREAMS, &port);
	ASSERT_LE(0, lfd);
	for (i = 0; i < NR_STREAMS; i++)
		ASSERT_EQ(0, connect_to(lfd, port, &cn[i])) TH_LOG("conn %d", i);
	close(lfd);

	ASSERT_EQ(0, pthread_barrier_init(&start, NULL, 2 * NR_STREAMS));
	for (i = 0; i < NR_STREAMS; i++) {
		tx[i] = (struct stream){ .fd = cn[i].client, .seed = 100 + i,
					 .start = &start };
		rx[i] = (struct stream){ .fd = cn[i].server, .seed = 100 + i,
					 .chunk = 4093 * (i + 1), .start = &start };
		tx[i].buf = malloc(STREAM_LEN);
		rx[i].buf = calloc(1, STREAM_LEN);
		ASSERT_NE(NULL, tx[i].buf);
		ASSERT_NE(NULL, rx[i].buf);
		fill_pattern(tx[i].buf, STREAM_LEN, tx[i].seed);
	}
	for (i = 0; i < NR_STREAMS; i++) {
		ASSERT_EQ(0, pthread_create(&trx[i], NULL, stream_recv, &rx[i]));
		ASSERT_EQ(0, pthread_create(&ttx[i], NULL, stream_send, &tx[i]));
	}

	for (i = 0; i < NR_STREAMS; i++) {
		ASSERT_EQ(0, join_within(trx[i], 90000)) TH_LOG("receiver %d stuck", i);
		ASSERT_EQ(0, join_within(ttx[i], 10000)) TH_LOG("sender %d stuck", i);
		EXPECT_EQ(STREAM_LEN, tx[i].moved)
			TH_LOG("sender %d: %s", i, strerror(tx[i].err));
		EXPECT_EQ(STREAM_LEN, rx[i].moved)
			TH_LOG("receiver %d: %s", i, strerror(rx[i].err));
		EXPECT_EQ(-1, rx[i].bad) TH_LOG("stream %d: first wrong byte at %zd",
						i, rx[i].bad);
		/* Nothing beyond the stream, nothing from another one. */
		EXPECT_EQ(0, scif_recv(cn[i].server, rx[i].buf, 1, 0));
	}
	for (i = 0; i < NR_STREAMS; i++) {
		close(cn[i].client);
		close(cn[i].server);
		free(tx[i].buf);
		free(rx[i].buf);
	}
	pthread_barrier_destroy(&start);
}

TEST_HARNESS_MAIN
