// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF messaging: ep_send() and ep_recv() errors, byte-exact
 * transfers from 1 byte to 16 MiB both ways, blocking and not, what a
 * close or a killed peer leaves behind, signals during a blocking recv,
 * and the poll() bits of endpoints.
 *
 * Connections go to the node named by $SCIF_PEER_NODE (default: the
 * local node).  When that is another node, the accepting side of every
 * connection lives there, driven through scif_peer_agent (see
 * scif_test_remote.h); what must happen in this process (a signal, a
 * bad buffer, a killed process) happens on the local side.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <linux/scif_ioctl.h>

#include "scif.h"
#include "kselftest_harness.h"
#define SCIF_TEST_WITH_LIBSCIF
#include "scif_test_util.h"

#define RING_PARAM	"/sys/module/scif/parameters/msg_ring_size"
#define MIB		(1024L * 1024)

/* --- helpers ------------------------------------------------------------ */

/* A number in a sysfs file: 0, or -1 if unreadable or no number. */
static int read_sysfs_long(const char *path, long *val)
{
	char buf[64], *end;

	if (read_file(path, buf, sizeof(buf)))
		return -1;
	errno = 0;
	*val = strtol(buf, &end, 0);
	return errno || end == buf ? -1 : 0;
}

/* The per-connection receive ring, in bytes: a power of two. */
static int ring_size(long *ring)
{
	if (read_sysfs_long(RING_PARAM, ring))
		return -1;
	return *ring > 0 && !(*ring & (*ring - 1)) ? 0 : -1;
}

static void close_conn(struct conn *cn)
{
	if (cn->client >= 0)
		ep_close(cn->client);
	if (cn->server >= 0)
		ep_close(cn->server);
	cn->client = cn->server = -1;
}

/* One direction of a transfer: @len bytes of @buf over @fd. */
struct xfer {
	int fd;
	uint8_t *buf;
	size_t len;
	bool blocking;
	long moved;		/* bytes moved, or -1 */
	int err;		/* errno of the failure, if any */
};

/*
 * Send or receive all of @x, with one blocking call or with non-blocking
 * calls that wait in poll() for room or data.  Gives up after WAIT_MS
 * without progress.
 */
static void xfer_run(struct xfer *x, bool sending)
{
	short event = sending ? POLLOUT : POLLIN;
	size_t moved = 0;
	int n;

	x->err = 0;
	if (x->blocking) {
		n = sending ? ep_send(x->fd, x->buf, x->len, SCIF_SEND_BLOCK) :
			      ep_recv(x->fd, x->buf, x->len, SCIF_RECV_BLOCK);
		x->err = errno;
		x->moved = n;
		return;
	}
	while (moved < x->len) {
		if (ep_poll(x->fd, event, WAIT_MS) <= 0) {
			x->err = ETIMEDOUT;
			break;
		}
		n = sending ? ep_send(x->fd, x->buf + moved, x->len - moved, 0) :
			      ep_recv(x->fd, x->buf + moved, x->len - moved, 0);
		if (n < 0) {
			x->err = errno;
			break;
		}
		moved += n;
	}
	x->moved = moved;
}

static void *send_thread(void *arg)
{
	xfer_run(arg, true);
	return NULL;
}

/*
 * Receive with non-blocking calls until one fails: its errno, or
 * ETIMEDOUT after WAIT_MS without data.  *@got counts the bytes.
 */
static int drain_until_error(int fd, uint8_t *buf, size_t cap, size_t *got)
{
	int n;

	*got = 0;
	for (;;) {
		if (ep_poll(fd, POLLIN, WAIT_MS) <= 0)
			return ETIMEDOUT;
		n = ep_recv(fd, buf + *got, cap - *got, 0);
		if (n < 0)
			return errno;
		*got += n;
		if (*got == cap)
			return 0;	/* more than a ring: not a drain */
	}
}

/* send/recv on @fd, blocking and not, fail with ENOTCONN. */
static void expect_not_connected(struct __test_metadata *_metadata, int fd)
{
	char buf[16] = { 0 };

	EXPECT_ERRNO(ENOTCONN, ep_send(fd, buf, sizeof(buf), 0));
	EXPECT_ERRNO(ENOTCONN, ep_send(fd, buf, sizeof(buf), SCIF_SEND_BLOCK));
	EXPECT_ERRNO(ENOTCONN, ep_recv(fd, buf, sizeof(buf), 0));
	EXPECT_ERRNO(ENOTCONN, ep_recv(fd, buf, sizeof(buf), SCIF_RECV_BLOCK));
}

/* --- errors ------------------------------------------------------------- */

TEST(not_connected_enotconn)
{
	int fd = scif_open(), lfd;

	ASSERT_LE(0, fd);
	expect_not_connected(_metadata, fd);
	ASSERT_LE(SCIF_PORT_RSVD, ep_bind(fd, 0));
	expect_not_connected(_metadata, fd);
	ep_close(fd);

	lfd = listener(0, 1, NULL);
	ASSERT_LE(0, lfd);
	expect_not_connected(_metadata, lfd);
	ep_close(lfd);
}

/* A connected pair, and the ring size. */
FIXTURE(pair) {
	struct conn cn;
	long ring;
};

FIXTURE_SETUP(pair)
{
	self->cn.client = self->cn.server = -1;
	ASSERT_EQ(0, ring_size(&self->ring));
	ASSERT_EQ(0, connect_pair(&self->cn));
}

FIXTURE_TEARDOWN(pair)
{
	close_conn(&self->cn);
}

TEST_F(pair, bad_flags_einval)
{
	const int bad[] = { 2, -1, 0x100, SCIF_SEND_BLOCK | 2, INT_MIN };
	char buf[16] = { 0 };
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_ERRNO(EINVAL, ep_send(self->cn.client, buf, 16, bad[i]));
		EXPECT_ERRNO(EINVAL, ep_recv(self->cn.server, buf, 16, bad[i]));
	}
	/* Nothing went out. */
	EXPECT_EQ(0, ep_recv(self->cn.server, buf, 16, 0));
}

TEST_F(pair, negative_len_einval)
{
	const int bad[] = { -1, -4096, INT_MIN };
	char buf[16] = { 0 };
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_ERRNO(EINVAL, ep_send(self->cn.client, buf, bad[i], 0));
		EXPECT_ERRNO(EINVAL, ep_send(self->cn.client, buf, bad[i],
					       SCIF_SEND_BLOCK));
		EXPECT_ERRNO(EINVAL, ep_recv(self->cn.server, buf, bad[i], 0));
		EXPECT_ERRNO(EINVAL, ep_recv(self->cn.server, buf, bad[i],
					       SCIF_RECV_BLOCK));
	}
	EXPECT_EQ(0, ep_recv(self->cn.server, buf, 16, 0));
}

TEST_F(pair, zero_len_is_zero)
{
	char buf[16] = { 0 };

	EXPECT_EQ(0, ep_send(self->cn.client, buf, 0, 0));
	EXPECT_EQ(0, ep_send(self->cn.client, buf, 0, SCIF_SEND_BLOCK));
	alarm_in_ms(10000);	/* a blocking recv of nothing must not wait */
	EXPECT_EQ(0, ep_recv(self->cn.server, buf, 0, SCIF_RECV_BLOCK));
	alarm_cancel();
	EXPECT_EQ(0, ep_recv(self->cn.server, buf, 0, 0));
	EXPECT_EQ(0, ep_recv(self->cn.server, buf, 16, 0));
}

TEST_F(pair, bad_buffer_efault)
{
	void *bad = (void *)8;
	char buf[16];

	EXPECT_ERRNO(EFAULT, ep_send(self->cn.client, bad, 16, 0));
	EXPECT_ERRNO(EFAULT, ep_send(self->cn.client, bad, 16, SCIF_SEND_BLOCK));

	/*
	 * recv only touches the buffer when there is something to copy.
	 * (The bad buffer must be on the receiving side's node: the client.)
	 */
	fill_pattern(buf, sizeof(buf), 1);
	ASSERT_EQ(16, ep_send(self->cn.server, buf, 16, SCIF_SEND_BLOCK));
	ASSERT_EQ(POLLIN, ep_poll(self->cn.client, POLLIN, WAIT_MS));
	EXPECT_ERRNO(EFAULT, ep_recv(self->cn.client, bad, 16, 0));
	ASSERT_EQ(16, ep_send(self->cn.server, buf, 16, SCIF_SEND_BLOCK));
	alarm_in_ms(10000);
	EXPECT_ERRNO(EFAULT, ep_recv(self->cn.client, bad, 16, SCIF_RECV_BLOCK));
	alarm_cancel();
}

TEST_F(pair, nonblocking_moves_what_fits)
{
	size_t len = 2 * self->ring, got = 0;
	uint8_t *src = malloc(len), *dst = calloc(1, len);
	long end = now_ms() + WAIT_MS;
	int sent, n;

	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	fill_pattern(src, len, 2);

	/* Nothing to receive is 0, not EAGAIN. */
	EXPECT_EQ(0, ep_recv(self->cn.server, dst, 100, 0));

	/* Twice the ring: only part fits, and then nothing does. */
	sent = ep_send(self->cn.client, src, len, 0);
	ASSERT_LT(0, sent);
	ASSERT_GE(self->ring, sent);
	EXPECT_EQ(0, ep_send(self->cn.client, src + sent, 1, 0));

	/* A recv larger than what is there returns what is there. */
	ASSERT_EQ(POLLIN, ep_poll(self->cn.server, POLLIN, WAIT_MS));
	while (got < (size_t)sent && now_ms() < end) {
		n = ep_recv(self->cn.server, dst + got, len - got, 0);
		ASSERT_LE(0, n) TH_LOG("recv: %s", strerror(errno));
		ASSERT_GE(sent - got, n);
		got += n;
	}
	ASSERT_EQ(sent, got);
	EXPECT_EQ(-1, check_pattern(dst, got, 2));
	EXPECT_EQ(0, ep_recv(self->cn.server, dst, 100, 0));

	/* Room again once drained. */
	EXPECT_TRUE(ep_poll(self->cn.client, POLLOUT, WAIT_MS) & POLLOUT);
	EXPECT_LT(0, ep_send(self->cn.client, src + sent, len - sent, 0));
	free(src);
	free(dst);
}

/* --- data integrity ----------------------------------------------------- */

/* The two ends of a fresh pair, and the ring size. */
FIXTURE(xfer) {
	struct conn cn;
	long ring;
};

/* @size bytes (or ring + @size with @ring_relative) in one direction. */
FIXTURE_VARIANT(xfer) {
	long size;
	bool ring_relative;
	bool to_client;
	bool blocking;
};

#define XFER_VARIANTS(name, sz, rel)					\
	FIXTURE_VARIANT_ADD(xfer, name##_to_server_blocking) {		\
		.size = sz, .ring_relative = rel,			\
		.to_client = false, .blocking = true };			\
	FIXTURE_VARIANT_ADD(xfer, name##_to_server_nonblocking) {	\
		.size = sz, .ring_relative = rel,			\
		.to_client = false, .blocking = false };		\
	FIXTURE_VARIANT_ADD(xfer, name##_to_client_blocking) {		\
		.size = sz, .ring_relative = rel,			\
		.to_client = true, .blocking = true };			\
	FIXTURE_VARIANT_ADD(xfer, name##_to_client_nonblocking) {	\
		.size = sz, .ring_relative = rel,			\
		.to_client = true, .blocking = false }

XFER_VARIANTS(one_byte, 1, false);
XFER_VARIANTS(hundred_bytes, 100, false);
XFER_VARIANTS(ring_minus_one, -1, true);
XFER_VARIANTS(ring, 0, true);
XFER_VARIANTS(one_mib, MIB, false);
XFER_VARIANTS(sixteen_mib, 16 * MIB, false);

FIXTURE_SETUP(xfer)
{
	self->cn.client = self->cn.server = -1;
	ASSERT_EQ(0, ring_size(&self->ring));
	ASSERT_EQ(0, connect_pair(&self->cn));
}

FIXTURE_TEARDOWN(xfer)
{
	close_conn(&self->cn);
}

TEST_F_TIMEOUT(xfer, integrity, 120)
{
	size_t len = variant->size + (variant->ring_relative ? self->ring : 0);
	uint32_t seed = len * 4 + variant->to_client * 2 + variant->blocking;
	struct xfer tx = { .len = len, .blocking = variant->blocking };
	struct xfer rx = { .len = len, .blocking = variant->blocking };
	pthread_t sender;
	ssize_t bad;

	/* 64 MiB through the ring: a minute of the debug kernel's run for
	 * the code the 1 MiB variants run.
	 */
	if (variant->size >= 16 * MIB && test_few_rounds())
		SKIP(return, "debug kernel (SCIF_TEST_FULL_ROUNDS=1 runs it)");
	tx.fd = variant->to_client ? self->cn.server : self->cn.client;
	rx.fd = variant->to_client ? self->cn.client : self->cn.server;
	tx.buf = malloc(len);
	rx.buf = calloc(1, len);
	ASSERT_NE(NULL, tx.buf);
	ASSERT_NE(NULL, rx.buf);
	fill_pattern(tx.buf, len, seed);

	ASSERT_EQ(0, pthread_create(&sender, NULL, send_thread, &tx));
	xfer_run(&rx, false);
	/* On failure the sender may be stuck: do not join it. */
	ASSERT_EQ((long)len, rx.moved) TH_LOG("recv: %s", strerror(rx.err));
	pthread_join(sender, NULL);
	EXPECT_EQ((long)len, tx.moved) TH_LOG("send: %s", strerror(tx.err));

	bad = check_pattern(rx.buf, len, seed);
	EXPECT_EQ(-1, bad) TH_LOG("first wrong byte at %zd of %zu", bad, len);
	/* And not a byte more. */
	EXPECT_EQ(0, ep_recv(rx.fd, rx.buf, 1, 0));
	free(tx.buf);
	free(rx.buf);
}

/* --- close and killed peers -------------------------------------------- */

/* Blocking and not, send and recv on @fd all fail with ECONNRESET. */
static void expect_reset(struct __test_metadata *_metadata, int fd)
{
	char buf[16] = { 0 };

	alarm_in_ms(10000);	/* a missed reset ends in EINTR, not a hang */
	EXPECT_ERRNO(ECONNRESET, ep_recv(fd, buf, 1, SCIF_RECV_BLOCK));
	EXPECT_ERRNO(ECONNRESET, ep_recv(fd, buf, 1, 0));
	EXPECT_ERRNO(ECONNRESET, ep_send(fd, buf, 1, 0));
	EXPECT_ERRNO(ECONNRESET, ep_send(fd, buf, 1, SCIF_SEND_BLOCK));
	alarm_cancel();
}

TEST_F(pair, close_leaves_data_readable)
{
	uint8_t src[1000], dst[1000] = { 0 };

	fill_pattern(src, sizeof(src), 3);
	ASSERT_EQ(1000, ep_send(self->cn.client, src, 1000, SCIF_SEND_BLOCK));
	ep_close(self->cn.client);
	self->cn.client = -1;

	alarm_in_ms(10000);
	EXPECT_EQ(1000, ep_recv(self->cn.server, dst, 1000, SCIF_RECV_BLOCK));
	alarm_cancel();
	EXPECT_EQ(-1, check_pattern(dst, sizeof(dst), 3));
	expect_reset(_metadata, self->cn.server);
}

TEST_F(pair, close_with_full_ring)
{
	size_t len = 2 * self->ring;
	uint8_t *src = malloc(len), *dst = calloc(1, len);
	int sent;

	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	fill_pattern(src, len, 4);
	sent = ep_send(self->cn.server, src, len, 0);
	ASSERT_LT(0, sent);
	ep_close(self->cn.server);
	self->cn.server = -1;

	alarm_in_ms(10000);
	EXPECT_EQ(sent, ep_recv(self->cn.client, dst, sent, SCIF_RECV_BLOCK));
	alarm_cancel();
	EXPECT_EQ(-1, check_pattern(dst, sent, 4));
	expect_reset(_metadata, self->cn.client);
	free(src);
	free(dst);
}

/*
 * Fork a child that connects back to us and runs @fn on its endpoint;
 * *@fd is our accepted end.  The child's exit code is @fn's result.
 */
static pid_t fork_peer(int (*fn)(int fd, long arg), long arg, int *fd)
{
	struct scif_port_id peer;
	uint16_t port;
	int lfd, status;
	pid_t pid;

	lfd = peer_listener(0, 1, &port);
	if (lfd < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		struct scif_port_id dst = { .node = peer_node(), .port = port };
		int cfd;

		if (!ep_is_remote(lfd))	/* a remote one is the parent's */
			close(lfd);
		signal(SIGALRM, SIG_DFL);
		alarm(60);	/* never outlive a failed parent for long */
		cfd = scif_open();
		if (cfd < 0 || ep_connect(cfd, &dst) < 0)
			_exit(20);
		_exit(fn(cfd, arg));
	}
	if (pid > 0 && accept_wait(lfd, &peer, fd, NULL)) {
		fprintf(stderr, "# accept: %s\n", strerror(errno));
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		pid = -1;
	}
	ep_close(lfd);
	return pid;
}

/* Child: send @len bytes of stream 5, which the parent never reads. */
static int send_forever(int fd, long len)
{
	uint8_t *buf = malloc(len);

	if (!buf)
		return 21;
	fill_pattern(buf, len, 5);
	ep_send(fd, buf, len, SCIF_SEND_BLOCK);
	return 22;	/* should have been killed in there */
}

TEST(peer_killed_in_send)
{
	size_t len, got;
	int fd, status, err;
	uint8_t *buf;
	long ring;
	pid_t pid;

	ASSERT_EQ(0, ring_size(&ring));
	len = 4 * ring;
	buf = calloc(1, len);
	ASSERT_NE(NULL, buf);
	pid = fork_peer(send_forever, len, &fd);
	ASSERT_LT(0, pid);

	/* Let the child fill the ring and block. */
	ASSERT_EQ(POLLIN, ep_poll(fd, POLLIN, WAIT_MS));
	usleep(300 * 1000);
	ASSERT_EQ(0, waitpid(pid, &status, WNOHANG));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	/* What was sent before the kill is still there, then the reset. */
	err = drain_until_error(fd, buf, len, &got);
	EXPECT_EQ(ECONNRESET, err) TH_LOG("drain: %s after %zu", strerror(err), got);
	EXPECT_LE(ring / 2, got);
	EXPECT_GT(len, got);
	EXPECT_EQ(-1, check_pattern(buf, got, 5));
	expect_reset(_metadata, fd);
	ep_close(fd);
	free(buf);
}

/* Child: say "ready", then wait for a MiB that never comes. */
static int recv_forever(int fd, long unused)
{
	uint8_t *buf = malloc(MIB);

	(void)unused;
	if (!buf || ep_send(fd, "rdy!", 4, SCIF_SEND_BLOCK) != 4)
		return 21;
	ep_recv(fd, buf, MIB, SCIF_RECV_BLOCK);
	return 22;	/* should have been killed in there */
}

struct killer {
	pid_t pid;
	int delay_ms;
};

static void *killer_fn(void *arg)
{
	struct killer *k = arg;

	usleep(k->delay_ms * 1000);
	kill(k->pid, SIGKILL);
	return NULL;
}

TEST(peer_killed_in_recv)
{
	struct killer k = { .delay_ms = 300 };
	char buf[100], ready[4];
	sigset_t alrm, old;
	int fd, status, ret, err;
	pthread_t killer;
	long t0;

	k.pid = fork_peer(recv_forever, 0, &fd);
	ASSERT_LT(0, k.pid);
	alarm_in_ms(10000);
	ASSERT_EQ(4, ep_recv(fd, ready, 4, SCIF_RECV_BLOCK));
	alarm_cancel();
	ASSERT_EQ(0, memcmp(ready, "rdy!", 4));
	fill_pattern(buf, sizeof(buf), 6);
	ASSERT_EQ(100, ep_send(fd, buf, 100, SCIF_SEND_BLOCK));

	/* The killer must not take our SIGALRM: it starts with it blocked. */
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, &old);
	ASSERT_EQ(0, pthread_create(&killer, NULL, killer_fn, &k));
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	/* Both sides wait in recv; the child dies; ours must wake. */
	alarm_in_ms(10000);
	t0 = now_ms();
	errno = 0;
	ret = ep_recv(fd, buf, sizeof(buf), SCIF_RECV_BLOCK);
	err = errno;
	alarm_cancel();
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(ECONNRESET, err) TH_LOG("recv: %s", strerror(err));
	EXPECT_LE(250, now_ms() - t0);

	pthread_join(killer, NULL);
	ASSERT_EQ(k.pid, waitpid(k.pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	expect_reset(_metadata, fd);
	ep_close(fd);
}

/* --- signals ------------------------------------------------------------ */

TEST_F(pair, recv_interrupted_nothing_eintr)
{
	char buf[100];
	long t0;

	alarm_in_ms(300);
	t0 = now_ms();
	EXPECT_ERRNO(EINTR, ep_recv(self->cn.client, buf, 100, SCIF_RECV_BLOCK));
	EXPECT_LE(250, now_ms() - t0);

	/* The connection is none the worse for it. */
	fill_pattern(buf, sizeof(buf), 7);
	ASSERT_EQ(100, ep_send(self->cn.server, buf, 100, SCIF_SEND_BLOCK));
	memset(buf, 0, sizeof(buf));
	alarm_in_ms(10000);
	EXPECT_EQ(100, ep_recv(self->cn.client, buf, 100, SCIF_RECV_BLOCK));
	alarm_cancel();
	EXPECT_EQ(-1, check_pattern(buf, sizeof(buf), 7));
}

TEST_F(pair, recv_interrupted_partial_count)
{
	uint8_t src[100], dst[100] = { 0 };
	long t0;

	fill_pattern(src, sizeof(src), 8);
	ASSERT_EQ(10, ep_send(self->cn.server, src, 10, SCIF_SEND_BLOCK));
	ASSERT_EQ(POLLIN, ep_poll(self->cn.client, POLLIN, WAIT_MS));

	alarm_in_ms(300);
	t0 = now_ms();
	EXPECT_EQ(10, ep_recv(self->cn.client, dst, 100, SCIF_RECV_BLOCK));
	EXPECT_LE(250, now_ms() - t0);
	EXPECT_EQ(-1, check_pattern(dst, 10, 8));

	/* The stream carries on where it was cut. */
	ASSERT_EQ(90, ep_send(self->cn.server, src + 10, 90, SCIF_SEND_BLOCK));
	alarm_in_ms(10000);
	EXPECT_EQ(90, ep_recv(self->cn.client, dst + 10, 90, SCIF_RECV_BLOCK));
	alarm_cancel();
	EXPECT_EQ(-1, check_pattern(dst, sizeof(dst), 8));
}

/* --- poll --------------------------------------------------------------- */

TEST(poll_listener_pending_request)
{
	struct scif_port_id peer;
	struct connector *c;
	uint16_t port;
	int lfd, nfd;

	lfd = peer_listener(0, 1, &port);
	ASSERT_LE(0, lfd);
	EXPECT_EQ(0, ep_poll(lfd, POLLIN, 0));
	c = connector_start(-1, port, 0);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(POLLIN, ep_poll(lfd, POLLIN, WAIT_MS));
	ASSERT_EQ(0, accept_wait(lfd, &peer, &nfd, c));
	ASSERT_LE(0, connector_wait(c, WAIT_MS));
	EXPECT_EQ(0, ep_poll(lfd, POLLIN, 0));	/* nothing left pending */
	ep_close(c->fd);
	free(c);
	ep_close(nfd);
	ep_close(lfd);
}

TEST_F(pair, poll_data_and_room)
{
	int cl = self->cn.client, sv = self->cn.server, n = -1, i;
	size_t len = 2 * self->ring;
	uint8_t *buf = malloc(len);

	ASSERT_NE(NULL, buf);
	fill_pattern(buf, len, 9);
	EXPECT_EQ(POLLOUT, ep_poll(cl, POLLIN | POLLOUT, 0));
	EXPECT_EQ(POLLOUT, ep_poll(sv, POLLIN | POLLOUT, 0));

	ASSERT_EQ(10, ep_send(cl, buf, 10, SCIF_SEND_BLOCK));
	EXPECT_EQ(POLLIN, ep_poll(sv, POLLIN, WAIT_MS));
	EXPECT_EQ(POLLIN | POLLOUT, ep_poll(sv, POLLIN | POLLOUT, 0));
	EXPECT_EQ(POLLOUT, ep_poll(cl, POLLIN | POLLOUT, 0));
	ASSERT_EQ(10, ep_recv(sv, buf, 10, SCIF_RECV_BLOCK));
	EXPECT_EQ(0, ep_poll(sv, POLLIN, 0));

	/* Fill the ring: no room, no POLLOUT. */
	for (i = 0; i < 100 && (n = ep_send(cl, buf, len, 0)) > 0; i++)
		;
	ASSERT_EQ(0, n) TH_LOG("send: %s", strerror(errno));
	EXPECT_EQ(0, ep_poll(cl, POLLOUT, 0));

	/* Drain it: room again. */
	while (ep_poll(sv, POLLIN, 0) & POLLIN)
		ASSERT_LT(0, ep_recv(sv, buf, len, 0));
	EXPECT_EQ(POLLOUT, ep_poll(cl, POLLOUT, WAIT_MS));
	free(buf);
}

TEST_F(pair, poll_peer_closed_hup)
{
	int revents;

	ep_close(self->cn.client);
	self->cn.client = -1;
	revents = ep_poll(self->cn.server, POLLIN, WAIT_MS);
	ASSERT_LE(0, revents);
	EXPECT_TRUE(revents & POLLHUP) TH_LOG("revents %#x", revents);
	EXPECT_TRUE(revents & POLLERR) TH_LOG("revents %#x", revents);
}

TEST_F(pair, scif_poll_bits)
{
	struct scif_pollepd e[2] = {
		{ .epd = self->cn.client, .events = POLLIN | POLLOUT },
		{ .epd = self->cn.server, .events = POLLIN | POLLOUT },
	};
	char buf[10];

	if (remote_mode())
		SKIP(return, "scif_poll() takes local endpoints only");
	EXPECT_EQ(2, scif_poll(e, 2, 0));
	EXPECT_EQ(POLLOUT, e[0].revents);
	EXPECT_EQ(POLLOUT, e[1].revents);

	fill_pattern(buf, sizeof(buf), 10);
	ASSERT_EQ(10, ep_send(self->cn.server, buf, 10, SCIF_SEND_BLOCK));
	e[0].events = e[1].events = POLLIN;
	EXPECT_EQ(1, scif_poll(e, 2, WAIT_MS));
	EXPECT_EQ(POLLIN, e[0].revents);
	EXPECT_EQ(0, e[1].revents);
	ASSERT_EQ(10, ep_recv(self->cn.client, buf, 10, SCIF_RECV_BLOCK));
	EXPECT_EQ(-1, check_pattern(buf, sizeof(buf), 10));

	ep_close(self->cn.server);
	self->cn.server = -1;
	EXPECT_EQ(1, scif_poll(e, 1, WAIT_MS));
	EXPECT_TRUE(e[0].revents & POLLHUP) TH_LOG("revents %#x", e[0].revents);
}

TEST_HARNESS_MAIN
