// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF fences on one node: scif_fence_mark(), scif_fence_wait() and
 * scif_fence_signal().  A producer issues 100 asynchronous writetos and a
 * remote signal, a thousand times, while a consumer polls the flag and
 * checks every byte when it changes (never an early or torn flag); the
 * same with local signals behind readfroms, with marks and signals of
 * the peer's RMAs, a signal at an offset whose 8 bytes cross a page, a
 * wait interrupted by a signal (EINTR, for a mark of either side), a
 * fence with nothing outstanding (at once), every error, waiters woken
 * by the peer's close, and forged fence messages of a hostile peer.
 *
 * Both ends are in this process on the loopback bus, so what lands in a
 * window is checked in memory directly.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/scif_ioctl.h>

#include "scif.h"
#include "kselftest_harness.h"
#define SCIF_TEST_WITH_LIBSCIF
#include "scif_test_util.h"

#define PG		4096L
#define WIN		(256 * 1024L)
#define ROFF		0x100000L	/* the server's window */
#define NR_RMAS		100
#define CHUNK		1024L		/* NR_RMAS chunks: the data region */
#define FLAG		(WIN - 64)	/* the flag, in either window */
#define BIG		(4 * 1024 * 1024L)
#define BIG_OFF		0x1000000L	/* big windows, for long waits */
#define SELF_REMOTE	(SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_REMOTE)
#define SELF_LOCAL	(SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL)
#define PEER_REMOTE	(SCIF_FENCE_INIT_PEER | SCIF_SIGNAL_REMOTE)
#define PEER_LOCAL	(SCIF_FENCE_INIT_PEER | SCIF_SIGNAL_LOCAL)

static uint8_t *map_mem(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static uint64_t load64(const uint8_t *p)
{
	return __atomic_load_n((const uint64_t *)p, __ATOMIC_ACQUIRE);
}

/*
 * Wait (yielding, up to WAIT_MS) until the flag at @p is no longer
 * @old; its value, or @old on timeout.
 */
static uint64_t flag_change(const uint8_t *p, uint64_t old)
{
	long end = now_ms() + WAIT_MS;
	uint64_t v;

	while ((v = load64(p)) == old && now_ms() < end)
		sched_yield();
	return v;
}

/* Wait (up to WAIT_MS) until the flag at @p is @want. */
static bool flag_is(const uint8_t *p, uint64_t want)
{
	long end = now_ms() + WAIT_MS;

	while (load64(p) != want && now_ms() < end)
		sched_yield();
	return load64(p) == want;
}

/* 8 bytes at any alignment. */
static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Issue NR_RMAS async copies from @fd's window at @from to @to. */
static int copies(int fd, off_t from, off_t to, bool write)
{
	for (long k = 0; k < NR_RMAS; k++) {
		int ret = write ?
			  scif_writeto(fd, from + k * CHUNK, CHUNK,
				       to + k * CHUNK, 0) :
			  scif_readfrom(fd, to + k * CHUNK, CHUNK,
					from + k * CHUNK, 0);
		if (ret)
			return -1;
	}
	return 0;
}

FIXTURE(fence) {
	struct conn cn;
	uint8_t *lbuf, *rbuf;	/* behind the client's and the server's window */
	off_t loff;		/* the client's window */
};

FIXTURE_SETUP(fence)
{
	int rw = SCIF_PROT_READ | SCIF_PROT_WRITE;

	if (remote_mode())
		SKIP(return, "both ends must be on this node");
	ASSERT_EQ(0, connect_pair(&self->cn));
	self->lbuf = map_mem(WIN);
	self->rbuf = map_mem(WIN);
	ASSERT_TRUE(self->lbuf && self->rbuf);
	self->loff = scif_register(self->cn.client, self->lbuf, WIN, 0, rw, 0);
	ASSERT_LE(0, self->loff) TH_LOG("register: %s", strerror(errno));
	ASSERT_EQ(ROFF, scif_register(self->cn.server, self->rbuf, WIN, ROFF,
				      rw, SCIF_MAP_FIXED));
}

FIXTURE_TEARDOWN(fence)
{
	if (self->cn.client >= 0)
		close(self->cn.client);
	if (self->cn.server >= 0)
		close(self->cn.server);
	munmap(self->lbuf, WIN);
	munmap(self->rbuf, WIN);
}

TEST(not_connected_enotconn)
{
	int fd = scif_open(), mark;

	ASSERT_LE(0, fd);
	EXPECT_ERRNO(ENOTCONN, scif_fence_mark(fd, SCIF_FENCE_INIT_SELF, &mark));
	EXPECT_ERRNO(ENOTCONN, scif_fence_mark(fd, SCIF_FENCE_INIT_PEER, &mark));
	EXPECT_ERRNO(ENOTCONN, scif_fence_wait(fd, 0));
	EXPECT_ERRNO(ENOTCONN, scif_fence_signal(fd, 0, 1, 0, 1, SELF_REMOTE));
	EXPECT_ERRNO(ENOTCONN, scif_fence_signal(fd, 0, 1, 0, 1, PEER_LOCAL));
	scif_close(fd);
}

TEST_F(fence, bad_flags_and_alignment_einval)
{
	int c = self->cn.client, mark;
	off_t l = self->loff;

	EXPECT_ERRNO(EINVAL, scif_fence_mark(c, 0, &mark));
	EXPECT_ERRNO(EINVAL, scif_fence_mark(c, SCIF_FENCE_INIT_SELF |
					     SCIF_FENCE_INIT_PEER, &mark));
	EXPECT_ERRNO(EINVAL, scif_fence_mark(c, 4, &mark));
	EXPECT_ERRNO(EINVAL, scif_fence_mark(c, SCIF_SIGNAL_LOCAL, &mark));
	/* Exactly one INIT, at least one SIGNAL, nothing else. */
	EXPECT_ERRNO(EINVAL, scif_fence_signal(c, l, 1, ROFF, 1,
					       SCIF_SIGNAL_LOCAL));
	EXPECT_ERRNO(EINVAL, scif_fence_signal(c, l, 1, ROFF, 1,
					       SCIF_FENCE_INIT_SELF));
	EXPECT_ERRNO(EINVAL, scif_fence_signal(c, l, 1, ROFF, 1,
					       SELF_LOCAL | PEER_LOCAL));
	EXPECT_ERRNO(EINVAL, scif_fence_signal(c, l, 1, ROFF, 1,
					       SELF_LOCAL | 0x100));
	EXPECT_ERRNO(EINVAL, scif_fence_signal(c, l, 1, ROFF, 1,
					       SELF_LOCAL | SCIF_RMA_SYNC));
	/* Offsets must be 4-byte aligned: only those that are used. */
	EXPECT_ERRNO(EINVAL, scif_fence_signal(c, l + 2, 1, ROFF, 1,
					       SELF_LOCAL));
	EXPECT_ERRNO(EINVAL, scif_fence_signal(c, l, 1, ROFF + 6, 1,
					       SELF_REMOTE));
	EXPECT_ERRNO(EINVAL, scif_fence_signal(c, l + 1, 1, ROFF, 1,
					       PEER_LOCAL));
	EXPECT_ERRNO(EINVAL, scif_fence_signal(c, l, 1, ROFF + 3, 1,
					       PEER_REMOTE | SCIF_SIGNAL_LOCAL));
	EXPECT_EQ(0, scif_fence_signal(c, l + 1, 1, ROFF + 8, 7, SELF_REMOTE));
	EXPECT_EQ(0, scif_fence_signal(c, l + 12, 9, ROFF + 1, 1, SELF_LOCAL));
	EXPECT_TRUE(flag_is(self->rbuf + 8, 7));
	usleep(50000);
	EXPECT_EQ(9, get64(self->lbuf + 12));
}

TEST_F(fence, offsets_outside_windows_enxio)
{
	int c = self->cn.client, s = self->cn.server;
	off_t l = self->loff;

	EXPECT_ERRNO(ENXIO, scif_fence_signal(c, 0, 1, ROFF + WIN, 1,
					      SELF_REMOTE));
	EXPECT_ERRNO(ENXIO, scif_fence_signal(c, 0, 1, ROFF - 8, 1,
					      SELF_REMOTE));
	/* The 8 bytes must all be inside. */
	EXPECT_ERRNO(ENXIO, scif_fence_signal(c, 0, 1, ROFF + WIN - 4, 1,
					      SELF_REMOTE));
	EXPECT_ERRNO(ENXIO, scif_fence_signal(c, l + WIN, 1, 0, 1, SELF_LOCAL));
	EXPECT_ERRNO(ENXIO, scif_fence_signal(c, -8, 1, 0, 1, SELF_LOCAL));
	EXPECT_ERRNO(ENXIO, scif_fence_signal(c, 0, 1, -8, 1, SELF_REMOTE));
	EXPECT_ERRNO(ENXIO, scif_fence_signal(c, 0, 1, INT64_MAX - 3, 1,
					      SELF_REMOTE));
	/* Checked by the peer for its own RMAs. */
	EXPECT_ERRNO(ENXIO, scif_fence_signal(c, l, 1, ROFF + WIN, 1,
					      PEER_REMOTE));
	EXPECT_ERRNO(ENXIO, scif_fence_signal(c, l + WIN - 4, 1, ROFF, 1,
					      PEER_LOCAL));
	EXPECT_ERRNO(ENXIO, scif_fence_signal(s, 0, 1, l + WIN, 1,
					      PEER_REMOTE));
	/* Nothing was written by the failed calls. */
	EXPECT_EQ(0, load64(self->rbuf + WIN - 8));
	/* Both in one call: one bad offset fails it all. */
	EXPECT_ERRNO(ENXIO, scif_fence_signal(c, l + FLAG, 5, ROFF + WIN, 5,
					      SELF_LOCAL | SCIF_SIGNAL_REMOTE));
	EXPECT_ERRNO(ENXIO, scif_fence_signal(c, l + FLAG, 5, ROFF + WIN, 5,
					      PEER_LOCAL | SCIF_SIGNAL_REMOTE));
	usleep(50000);
	EXPECT_EQ(0, load64(self->lbuf + FLAG));
}

TEST_F(fence, read_only_window_eacces)
{
	int c = self->cn.client, s = self->cn.server;

	ASSERT_EQ(0x400000, scif_register(s, self->rbuf, PG, 0x400000,
					  SCIF_PROT_READ, SCIF_MAP_FIXED));
	ASSERT_EQ(0x400000, scif_register(c, self->lbuf, PG, 0x400000,
					  SCIF_PROT_READ, SCIF_MAP_FIXED));
	EXPECT_ERRNO(EACCES, scif_fence_signal(c, 0, 1, 0x400000, 1,
					       SELF_REMOTE));
	EXPECT_ERRNO(EACCES, scif_fence_signal(c, 0x400000, 1, 0, 1,
					       SELF_LOCAL));
	EXPECT_ERRNO(EACCES, scif_fence_signal(c, 0, 1, 0x400000, 1,
					       PEER_REMOTE));
	EXPECT_ERRNO(EACCES, scif_fence_signal(c, 0x400000, 1, 0, 1,
					       PEER_LOCAL));
}

TEST_F(fence, nothing_outstanding_returns_at_once)
{
	int c = self->cn.client, s = self->cn.server, m1 = -1, m2 = 0;
	long t0 = now_ms();

	ASSERT_EQ(0, scif_fence_mark(c, SCIF_FENCE_INIT_SELF, &m1));
	EXPECT_LE(0, m1);
	EXPECT_EQ(0, scif_fence_wait(c, m1));
	ASSERT_EQ(0, scif_fence_mark(c, SCIF_FENCE_INIT_PEER, &m2));
	EXPECT_GT(0, m2) TH_LOG("a peer mark has bit 31: %#x", m2);
	EXPECT_EQ(0, scif_fence_wait(c, m2));
	EXPECT_EQ(0, scif_fence_wait(s, m1));
	/* Marks no RMA could have given are reached at once too. */
	EXPECT_EQ(0, scif_fence_wait(c, 0x7fffffff));
	EXPECT_EQ(0, scif_fence_wait(c, 12345));
	EXPECT_EQ(0, scif_fence_wait(c, (int)0x80000005));
	EXPECT_EQ(0, scif_fence_signal(c, 0, 0, ROFF + FLAG, 3, SELF_REMOTE));
	EXPECT_TRUE(flag_is(self->rbuf + FLAG, 3));
	EXPECT_EQ(0, scif_fence_signal(c, self->loff + FLAG, 4, 0, 0,
				       PEER_LOCAL));
	EXPECT_TRUE(flag_is(self->lbuf + FLAG, 4));
	/* Once everything completed, a new mark is also reached at once. */
	fill_pattern(self->lbuf, NR_RMAS * CHUNK, 1);
	ASSERT_EQ(0, copies(c, self->loff, ROFF, true));
	ASSERT_EQ(0, scif_fence_mark(c, SCIF_FENCE_INIT_SELF, &m1));
	ASSERT_EQ(0, scif_fence_wait(c, m1));
	ASSERT_EQ(0, scif_fence_mark(c, SCIF_FENCE_INIT_SELF, &m2));
	EXPECT_EQ(m1, m2);
	EXPECT_EQ(0, scif_fence_wait(c, m2));
	EXPECT_LT(now_ms() - t0, WAIT_MS);
	EXPECT_EQ(0, memcmp(self->rbuf, self->lbuf, NR_RMAS * CHUNK));
}

/* The consumer of the producer/consumer tests. */
struct consumer {
	const uint8_t *flag;	/* where the signal lands */
	const uint8_t *data;	/* NR_RMAS * CHUNK bytes, pattern i */
	long rounds;
	_Atomic long acked;	/* last round checked */
	long bad_round;		/* first round that went wrong, or 0 */
	uint64_t bad_flag;
	long bad_byte;
};

static void *consume(void *arg)
{
	struct consumer *co = arg;
	uint64_t prev = 0, v;
	ssize_t bad;

	for (long i = 1; i <= co->rounds; i++) {
		v = flag_change(co->flag, prev);
		bad = v == (uint64_t)i ?
		      check_pattern(co->data, NR_RMAS * CHUNK, i) : -1;
		if (v != (uint64_t)i || bad >= 0) {
			co->bad_round = i;
			co->bad_flag = v;
			co->bad_byte = bad;
			break;
		}
		prev = v;
		atomic_store(&co->acked, i);
	}
	return NULL;
}

/* Wait (up to WAIT_MS) until the consumer checked @round. */
static bool consumer_at(struct consumer *co, long round)
{
	long end = now_ms() + WAIT_MS;

	while (atomic_load(&co->acked) < round && !co->bad_round &&
	       now_ms() < end)
		sched_yield();
	return atomic_load(&co->acked) >= round;
}

/*
 * The producer issues NR_RMAS async writetos of pattern i into the
 * server's window and a remote signal of i, ROUNDS times; the consumer
 * sees each i only once all of round i's bytes are there.
 */
TEST_F_TIMEOUT(fence, producer_consumer_signal_remote, 300)
{
	struct consumer co = { .flag = self->rbuf + FLAG, .data = self->rbuf,
			       .rounds = test_rounds(1000) };
	int c = self->cn.client;
	long i, t0 = now_ms();
	pthread_t th;

	ASSERT_EQ(0, pthread_create(&th, NULL, consume, &co));
	for (i = 1; i <= co.rounds; i++) {
		if (!consumer_at(&co, i - 1))
			break;
		fill_pattern(self->lbuf, NR_RMAS * CHUNK, i);
		if (copies(c, self->loff, ROFF, true) ||
		    scif_fence_signal(c, 0, 0, ROFF + FLAG, i, SELF_REMOTE)) {
			TH_LOG("round %ld: %s", i, strerror(errno));
			break;
		}
	}
	pthread_join(th, NULL);
	EXPECT_EQ(0, co.bad_round)
		TH_LOG("round %ld: flag %#llx, byte %ld", co.bad_round,
		       (unsigned long long)co.bad_flag, co.bad_byte);
	EXPECT_EQ(co.rounds, atomic_load(&co.acked));
	TH_LOG("%ld rounds of %d writetos and a signal: %ld ms", co.rounds,
	       NR_RMAS, now_ms() - t0);
}

/* readfroms into the client's window, then a local signal. */
TEST_F_TIMEOUT(fence, producer_consumer_signal_local, 300)
{
	struct consumer co = { .flag = self->lbuf + FLAG, .data = self->lbuf,
			       .rounds = test_rounds(300) };
	int c = self->cn.client;
	pthread_t th;
	long i;

	ASSERT_EQ(0, pthread_create(&th, NULL, consume, &co));
	for (i = 1; i <= co.rounds; i++) {
		if (!consumer_at(&co, i - 1))
			break;
		fill_pattern(self->rbuf, NR_RMAS * CHUNK, i);
		if (copies(c, ROFF, self->loff, false) ||
		    scif_fence_signal(c, self->loff + FLAG, i, 0, 0,
				      SELF_LOCAL)) {
			TH_LOG("round %ld: %s", i, strerror(errno));
			break;
		}
	}
	pthread_join(th, NULL);
	EXPECT_EQ(0, co.bad_round)
		TH_LOG("round %ld: flag %#llx, byte %ld", co.bad_round,
		       (unsigned long long)co.bad_flag, co.bad_byte);
	EXPECT_EQ(co.rounds, atomic_load(&co.acked));
}

TEST_F(fence, signal_local_and_remote_at_once)
{
	int c = self->cn.client;

	fill_pattern(self->lbuf, NR_RMAS * CHUNK, 77);
	ASSERT_EQ(0, copies(c, self->loff, ROFF, true));
	ASSERT_EQ(0, scif_fence_signal(c, self->loff + FLAG, 11, ROFF + FLAG,
				       22, SELF_LOCAL | SCIF_SIGNAL_REMOTE));
	EXPECT_TRUE(flag_is(self->rbuf + FLAG, 22));
	EXPECT_TRUE(flag_is(self->lbuf + FLAG, 11));
	EXPECT_EQ(-1, check_pattern(self->rbuf, NR_RMAS * CHUNK, 77));
}

/* A 4-byte aligned signal whose 8 bytes cross into the next page. */
TEST_F(fence, signal_across_a_page)
{
	int c = self->cn.client;
	uint64_t v = 0x1122334455667788ULL, got;

	ASSERT_EQ(0, scif_fence_signal(c, 0, 0, ROFF + PG - 4, v,
				       SELF_REMOTE));
	ASSERT_EQ(0, scif_fence_signal(c, self->loff + 2 * PG - 4, ~v, 0, 0,
				       PEER_LOCAL));
	usleep(100000);
	got = get64(self->rbuf + PG - 4);
	EXPECT_EQ(v, got);
	got = get64(self->lbuf + 2 * PG - 4);
	EXPECT_EQ(~v, got);
}

/* The server's RMAs, marked and waited for by the client. */
TEST_F_TIMEOUT(fence, init_peer_mark_and_wait, 300)
{
	int c = self->cn.client, s = self->cn.server, mark, i;

	for (i = 1; i <= test_rounds(100); i++) {
		fill_pattern(self->rbuf, NR_RMAS * CHUNK, i);
		ASSERT_EQ(0, copies(s, ROFF, self->loff, true));
		ASSERT_EQ(0, scif_fence_mark(c, SCIF_FENCE_INIT_PEER, &mark));
		ASSERT_EQ(0, scif_fence_wait(c, mark));
		ASSERT_EQ(-1, check_pattern(self->lbuf, NR_RMAS * CHUNK, i))
			TH_LOG("round %d", i);
	}
}

/* The server's RMAs, signalled into the client's window. */
TEST_F_TIMEOUT(fence, init_peer_signal, 300)
{
	struct consumer co = { .flag = self->lbuf + FLAG, .data = self->lbuf,
			       .rounds = test_rounds(100) };
	int c = self->cn.client, s = self->cn.server;
	pthread_t th;
	long i;

	ASSERT_EQ(0, pthread_create(&th, NULL, consume, &co));
	for (i = 1; i <= co.rounds; i++) {
		if (!consumer_at(&co, i - 1))
			break;
		fill_pattern(self->rbuf, NR_RMAS * CHUNK, i);
		if (copies(s, ROFF, self->loff, true) ||
		    scif_fence_signal(c, self->loff + FLAG, i, ROFF + FLAG,
				      ~i, PEER_LOCAL | SCIF_SIGNAL_REMOTE)) {
			TH_LOG("round %ld: %s", i, strerror(errno));
			break;
		}
	}
	pthread_join(th, NULL);
	EXPECT_EQ(0, co.bad_round)
		TH_LOG("round %ld: flag %#llx, byte %ld", co.bad_round,
		       (unsigned long long)co.bad_flag, co.bad_byte);
	EXPECT_EQ(co.rounds, atomic_load(&co.acked));
	EXPECT_TRUE(flag_is(self->rbuf + FLAG, ~(uint64_t)co.rounds));
}

/* Big windows on both sides, for RMAs that take a while. */
static int big_windows(struct __test_metadata *_metadata, struct conn *cn,
		       uint8_t **a, uint8_t **b)
{
	int rw = SCIF_PROT_READ | SCIF_PROT_WRITE;

	*a = map_mem(BIG);
	*b = map_mem(BIG);
	if (!*a || !*b)
		return -1;
	memset(*a, 1, BIG);
	memset(*b, 2, BIG);
	if (scif_register(cn->client, *a, BIG, BIG_OFF, rw,
			  SCIF_MAP_FIXED) != BIG_OFF ||
	    scif_register(cn->server, *b, BIG, BIG_OFF, rw,
			  SCIF_MAP_FIXED) != BIG_OFF)
		return -1;
	return 0;
}

/* Fill @fd's engine queue with big copies into the other side. */
static int big_copies(int fd, int n)
{
	for (int i = 0; i < n; i++)
		if (scif_writeto(fd, BIG_OFF, BIG, BIG_OFF, 0))
			return -1;
	return 0;
}

/*
 * A wait on the copies of @from, marked through @by, interrupted by
 * SIGALRM: EINTR (tried a few times in case the copies were faster
 * than the alarm); then the wait completes.
 */
static int interrupted_wait(int from, int by, int flags)
{
	int mark, ret = 0, err = 0, t;

	for (t = 0; t < 5; t++) {
		if (big_copies(from, 60) ||
		    scif_fence_mark(by, flags, &mark))
			return -1;
		alarm_in_ms(2);
		ret = scif_fence_wait(by, mark);
		err = errno;
		alarm_cancel();
		if (scif_fence_wait(by, mark))
			return -1;
		if (ret)
			break;
	}
	return ret == -1 && err == EINTR ? 0 : -1;
}

TEST_F_TIMEOUT(fence, wait_interrupted_eintr, 300)
{
	uint8_t *a, *b;

	ASSERT_EQ(0, big_windows(_metadata, &self->cn, &a, &b));
	EXPECT_EQ(0, interrupted_wait(self->cn.client, self->cn.client,
				      SCIF_FENCE_INIT_SELF));
	EXPECT_EQ(0, interrupted_wait(self->cn.server, self->cn.client,
				      SCIF_FENCE_INIT_PEER));
	close(self->cn.client);
	close(self->cn.server);
	self->cn.client = self->cn.server = -1;
	munmap(a, BIG);
	munmap(b, BIG);
}

struct waiter {
	int fd, mark, ret, err;
	_Atomic bool done;
};

static void *wait_fn(void *arg)
{
	struct waiter *w = arg;

	w->ret = scif_fence_wait(w->fd, w->mark);
	w->err = errno;
	atomic_store(&w->done, true);
	return NULL;
}

/* A wait on the peer's copies ends when the peer closes; then ECONNRESET. */
TEST_F_TIMEOUT(fence, peer_close_wakes_and_resets, 120)
{
	int c = self->cn.client, mark;
	struct waiter w = { .fd = c };
	uint8_t *a, *b;
	pthread_t th;
	long end;

	ASSERT_EQ(0, big_windows(_metadata, &self->cn, &a, &b));
	ASSERT_EQ(0, big_copies(self->cn.server, 60));
	ASSERT_EQ(0, scif_fence_mark(c, SCIF_FENCE_INIT_PEER, &w.mark));
	ASSERT_EQ(0, pthread_create(&th, NULL, wait_fn, &w));
	close(self->cn.server);
	self->cn.server = -1;
	end = now_ms() + 60000;
	while (!atomic_load(&w.done) && now_ms() < end)
		usleep(10000);
	ASSERT_TRUE(atomic_load(&w.done));
	pthread_join(th, NULL);
	/* The copies may have completed before the close took effect. */
	EXPECT_TRUE(w.ret == 0 || w.err == ECONNRESET)
		TH_LOG("wait: %s", strerror(w.err));
	end = now_ms() + WAIT_MS;
	while (scif_fence_mark(c, SCIF_FENCE_INIT_PEER, &mark) == 0 &&
	       now_ms() < end)
		usleep(10000);
	EXPECT_ERRNO(ECONNRESET, scif_fence_mark(c, SCIF_FENCE_INIT_PEER,
						 &mark));
	EXPECT_ERRNO(ECONNRESET, scif_fence_mark(c, SCIF_FENCE_INIT_SELF,
						 &mark));
	EXPECT_ERRNO(ECONNRESET, scif_fence_wait(c, 0));
	EXPECT_ERRNO(ECONNRESET, scif_fence_wait(c, w.mark));
	EXPECT_ERRNO(ECONNRESET, scif_fence_signal(c, self->loff, 1, 0, 1,
						   SELF_LOCAL));
	EXPECT_ERRNO(ECONNRESET, scif_fence_signal(c, self->loff, 1, 0, 1,
						   PEER_LOCAL));
	munmap(a, BIG);
	munmap(b, BIG);
}

#define SCIF_DBG	"/sys/kernel/debug/scif/"

/* A debugfs counter of <debugfs>/scif/stats, or -1. */
static long stat_of(const char *key)
{
	char buf[512], *p;

	if (read_file(SCIF_DBG "stats", buf, sizeof(buf)))
		return -1;
	p = strstr(buf, key);
	return p ? atol(p + strlen(key) + 1) : -1;
}

/* The handles of both ends of @cn, from <debugfs>/scif/endpoints. */
static int handles(const struct conn *cn, uint64_t *client, uint64_t *server)
{
	unsigned int port, pnode, pport;
	char line[256], state[32];
	unsigned long long h;
	FILE *f = fopen(SCIF_DBG "endpoints", "r");

	*client = *server = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %31s %u %u:%u", &h, state, &port, &pnode,
			   &pport) != 5 || strcmp(state, "connected"))
			continue;
		if (port == (unsigned int)cn->client_port)
			*client = h;
		else if (pport == (unsigned int)cn->client_port)
			*server = h;
	}
	fclose(f);
	return *client && *server ? 0 : -1;
}

/* Forge a fence message to this node: FENCE_MARK + @k. */
static int forge(int k, uint64_t dst, uint64_t src, uint64_t a0, uint64_t a1,
		 uint64_t a2, uint64_t a3, uint64_t a4)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "fence %d %llx %llx %llx %llx %llx %llx %llx",
		 k, (unsigned long long)dst, (unsigned long long)src,
		 (unsigned long long)a0, (unsigned long long)a1,
		 (unsigned long long)a2, (unsigned long long)a3,
		 (unsigned long long)a4);
	return write_file(SCIF_DBG "corrupt", cmd);
}

enum { F_MARK, F_WAIT, F_SIGNAL, F_ACK };
#define NO_OFF	UINT64_MAX

/*
 * The peer's fence messages are hostile input: forged ones (through the
 * corrupt hook, as if from the peer) with bad handles, offsets, marks
 * and answers are refused or dropped, and the connection carries on.
 */
TEST_F(fence, hostile_fence_messages)
{
	int c = self->cn.client, s = self->cn.server, mark;
	uint64_t ch, sh, big = UINT64_MAX / 2;
	long dropped;

	if (access(SCIF_DBG "corrupt", W_OK))
		SKIP(return, "no %scorrupt", SCIF_DBG);
	ASSERT_EQ(0, handles(&self->cn, &ch, &sh));
	dropped = stat_of("dropped_msgs");
	ASSERT_LE(0, dropped);
	/* Not from the server's peer, or for no endpoint: dropped. */
	EXPECT_EQ(0, forge(F_SIGNAL, sh, ch ^ 1, 1, FLAG, 1, NO_OFF, 0));
	EXPECT_EQ(0, forge(F_MARK, sh ^ (1ULL << 40), ch, 1, 0, 0, 0, 0));
	EXPECT_EQ(0, forge(F_ACK, ch, sh ^ 2, 1, 0, 0, 0, 0));
	EXPECT_EQ(0, forge(F_WAIT, 0, 0, 1, 0, 0, 0, 0));
	/* From the client: refused by the server, answers ignored. */
	EXPECT_EQ(0, forge(F_SIGNAL, sh, ch, 7, ROFF + 2, 1, NO_OFF, 0));
	EXPECT_EQ(0, forge(F_SIGNAL, sh, ch, 7, big, 1, NO_OFF, 0));
	EXPECT_EQ(0, forge(F_SIGNAL, sh, ch, 7, NO_OFF - 4, 1, big + 4, 1));
	EXPECT_EQ(0, forge(F_SIGNAL, sh, ch, 7, NO_OFF, 1, NO_OFF, 1));
	EXPECT_EQ(0, forge(F_SIGNAL, sh, ch, 7, ROFF + WIN - 4, 1, NO_OFF, 0));
	EXPECT_EQ(0, forge(F_SIGNAL, sh, ch, 7, NO_OFF, 0, WIN + 8, 1));
	EXPECT_EQ(0, forge(F_WAIT, sh, ch, 7, 1ULL << 31, 0, 0, 0));
	EXPECT_EQ(0, forge(F_WAIT, sh, ch, 7, big, 0, 0, 0));
	EXPECT_EQ(0, forge(F_WAIT, sh, ch, 7, 0x7fffffff, 0, 0, 0));
	EXPECT_EQ(0, forge(F_ACK, ch, sh, 12345, 99, 0, 0, 0));
	EXPECT_EQ(0, forge(F_ACK, ch, sh, 0, 99, 0xdead, 0, 0));
	/* A valid request from the "peer" is served like a real one. */
	EXPECT_EQ(0, forge(F_SIGNAL, sh, ch, 8, ROFF + FLAG, 0x5a5a, NO_OFF,
			   0));
	EXPECT_TRUE(flag_is(self->rbuf + FLAG, 0x5a5a));
	EXPECT_LE(dropped + 4, stat_of("dropped_msgs"));
	/* Nothing was written where it should not have been. */
	EXPECT_EQ(0, load64(self->rbuf + WIN - 8));
	/* The connection and its fences still work, both ways. */
	fill_pattern(self->lbuf, NR_RMAS * CHUNK, 5);
	ASSERT_EQ(0, copies(c, self->loff, ROFF, true));
	ASSERT_EQ(0, scif_fence_mark(s, SCIF_FENCE_INIT_PEER, &mark));
	ASSERT_EQ(0, scif_fence_wait(s, mark));
	EXPECT_EQ(-1, check_pattern(self->rbuf, NR_RMAS * CHUNK, 5));
	ASSERT_EQ(0, scif_fence_signal(c, 0, 0, ROFF + FLAG, 6, SELF_REMOTE));
	EXPECT_TRUE(flag_is(self->rbuf + FLAG, 6));
}

TEST_HARNESS_MAIN
