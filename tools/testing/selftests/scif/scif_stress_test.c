// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF under load: a thousand connections open at once, each carrying
 * its own message both ways, all torn down without leaving an endpoint
 * behind; and eight 1 MiB streams on eight connections at the same time.
 *
 * Connections go to the node named by $SCIF_PEER_NODE (default: the
 * local node).  When that is another node, the listener and the
 * accepted ends live there, driven through scif_peer_agent (see
 * scif_test_remote.h), and both nodes' endpoint lists are checked.
 */
#include <errno.h>
#include <stdbool.h>
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
#define SCIF_TEST_WITH_LIBSCIF
#include "scif_test_util.h"

#define NR_CONNS	1000
#define NR_STREAMS	8
#define STREAM_LEN	(1024 * 1024)
#define MSG_LEN		16

/* --- helpers ------------------------------------------------------------ */

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

/*
 * Connect a new endpoint to listener @lfd at @port and accept it, then
 * join the connector however long it takes.  The connector is heap-
 * allocated and, if it never returns, left behind: the test is failing
 * then anyway.
 */
static int connect_to(int lfd, uint16_t port, struct conn *cn)
{
	struct connector *c = connector_start(-1, port, 0);
	struct scif_port_id peer;

	if (!c) {
		fprintf(stderr, "# open/thread: %s\n", strerror(errno));
		return -1;
	}
	if (accept_wait(lfd, &peer, &cn->server, c)) {
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
	return ep_send(from, msg, sizeof(msg), SCIF_SEND_BLOCK) == MSG_LEN ?
		0 : -1;
}

/* Receive one message on @to: 0 if it is stream @seed's. */
static int recv_msg(int to, uint32_t seed)
{
	uint8_t msg[MSG_LEN] = { 0 };

	if (ep_recv(to, msg, sizeof(msg), SCIF_RECV_BLOCK) != MSG_LEN)
		return -1;
	return check_pattern(msg, sizeof(msg), seed) == -1 ? 0 : -1;
}

/* Poll the agent's node for up to @ms until it lists @want endpoints. */
static int wait_remote_lines(int want, int ms)
{
	long end = now_ms() + ms;
	int n;

	while ((n = agent_epcount()) != want && now_ms() < end)
		usleep(50 * 1000);
	return n;
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
	bool remote = remote_mode();
	int before, rbefore = 0, lfd, i;
	uint16_t port;

	ASSERT_NE(NULL, cn);
	/* The agent's control connection, if any, is in "before". */
	ASSERT_EQ(0, agent_ready());
	before = settled_lines(EPD_LIST, WAIT_MS);
	ASSERT_LE(0, before);
	if (remote) {
		rbefore = agent_epcount();
		ASSERT_LE(0, rbefore);
	}
	lfd = peer_listener(0, 16, &port);
	ASSERT_LE(0, lfd);

	for (i = 0; i < NR_CONNS; i++)
		ASSERT_EQ(0, connect_to(lfd, port, &cn[i]))
			TH_LOG("connection %d", i);
	/* The listener and the accepted ends are on the peer's node. */
	if (remote) {
		EXPECT_EQ(before + NR_CONNS, count_lines(EPD_LIST));
		EXPECT_EQ(rbefore + 1 + NR_CONNS, agent_epcount());
	} else {
		EXPECT_EQ(before + 1 + 2 * NR_CONNS, count_lines(EPD_LIST));
	}

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
		EXPECT_EQ(0, ep_close(cn[i].client));
		EXPECT_EQ(0, ep_close(cn[i].server));
	}
	EXPECT_EQ(0, ep_close(lfd));
	/* Teardown is asynchronous: give it a moment. */
	EXPECT_EQ(before, wait_lines(EPD_LIST, before, WAIT_MS))
		system("sed 's/^/# left: /' " EPD_LIST);
	if (remote)
		EXPECT_EQ(rbefore, wait_remote_lines(rbefore, WAIT_MS));
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
	n = ep_send(s->fd, s->buf, STREAM_LEN, SCIF_SEND_BLOCK);
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
		n = ep_recv(s->fd, s->buf + got, want, SCIF_RECV_BLOCK);
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

	lfd = peer_listener(0, NR_STREAMS, &port);
	ASSERT_LE(0, lfd);
	for (i = 0; i < NR_STREAMS; i++)
		ASSERT_EQ(0, connect_to(lfd, port, &cn[i])) TH_LOG("conn %d", i);
	ep_close(lfd);

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
		EXPECT_EQ(0, ep_recv(cn[i].server, rx[i].buf, 1, 0));
	}
	for (i = 0; i < NR_STREAMS; i++) {
		ep_close(cn[i].client);
		ep_close(cn[i].server);
		free(tx[i].buf);
		free(rx[i].buf);
	}
	pthread_barrier_destroy(&start);
}

TEST_HARNESS_MAIN
