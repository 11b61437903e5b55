// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF's user-space data path (SCIF_FP_OPEN, SCIF_FP_NOTIFY and libscif's
 * use of them): whether libscif uses it, the checks of the file and its
 * mappings, counts and locks forged by the process (they cost only its
 * own connection, never the kernel), the peer's half once the connection
 * is gone (zeroes, never SIGBUS), and threads, forked processes and the
 * kernel's own calls sharing one endpoint, byte for byte.
 *
 * Both ends live in this process, on the local node.  Run with
 * SCIF_FASTPATH=0 too: libscif then leaves the data path alone, which
 * fastpath_mapped checks; the raw tests do not depend on it.
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <linux/scif_ioctl.h>

#include "scif.h"
#include "kselftest_harness.h"
#define SCIF_TEST_WITH_LIBSCIF
#include "scif_test_util.h"
#include "scif_fp_raw.h"

/* Every endpoint of this test gets libscif's data path on its first call. */
__attribute__((constructor)) static void no_warmup(void)
{
	setenv("SCIF_FASTPATH_WARMUP", "0", 0);
}

/* Lines of /proc/self/maps naming the data path's files. */
static int fp_mappings(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "[scif-fp]") != NULL;
	fclose(f);
	return n;
}

static bool fastpath_off(void)
{
	const char *env = getenv("SCIF_FASTPATH");

	return env && !strcmp(env, "0");
}

FIXTURE(pair) {
	struct conn cn;
	long ring;
};

FIXTURE_SETUP(pair)
{
	char buf[16];

	self->cn.client = self->cn.server = -1;
	ASSERT_EQ(0, read_file("/sys/module/scif/parameters/msg_ring_size",
			       buf, sizeof(buf)));
	self->ring = atol(buf);
	ASSERT_EQ(0, connect_pair(&self->cn));
}

FIXTURE_TEARDOWN(pair)
{
	if (self->cn.client >= 0)
		scif_close(self->cn.client);
	if (self->cn.server >= 0)
		scif_close(self->cn.server);
}

/* libscif maps the three parts once a connected endpoint moves data. */
TEST_F(pair, fastpath_mapped)
{
	char out[8] = "0123456", in[8];
	int before = fp_mappings();

	ASSERT_LE(0, before);
	ASSERT_EQ(8, scif_send(self->cn.client, out, 8, SCIF_SEND_BLOCK));
	ASSERT_EQ(8, scif_recv(self->cn.server, in, 8, SCIF_RECV_BLOCK));
	EXPECT_EQ(0, memcmp(out, in, 8));
	if (fastpath_off()) {
		EXPECT_EQ(before, fp_mappings());
	} else {
		EXPECT_EQ(before + 6, fp_mappings());
	}
	scif_close(self->cn.client);
	scif_close(self->cn.server);
	self->cn.client = self->cn.server = -1;
	/* scif_close() lets go of them. */
	EXPECT_EQ(before, fp_mappings());
}

TEST(open_needs_a_connection)
{
	struct scifioctl_fp req = { 0 };
	int ep = scif_open();

	ASSERT_LE(0, ep);
	EXPECT_EQ(-1, ioctl(ep, SCIF_FP_OPEN, &req));
	EXPECT_EQ(ENOTCONN, errno);
	EXPECT_EQ(-1, ioctl(ep, SCIF_FP_NOTIFY, (long)SCIF_FP_NOTIFY_DATA));
	EXPECT_EQ(ENOTCONN, errno);
	scif_close(ep);
}

TEST_F(pair, open_and_mmap_checks)
{
	struct scifioctl_fp req = { .flags = 1 };
	long pg = sysconf(_SC_PAGESIZE);
	struct rawfp r;
	void *p;

	EXPECT_EQ(-1, ioctl(self->cn.client, SCIF_FP_OPEN, &req));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->cn.client, SCIF_FP_NOTIFY, 3L));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->cn.client, SCIF_FP_OPEN, NULL));
	EXPECT_EQ(EFAULT, errno);

	ASSERT_EQ(0, rawfp_open(self->cn.client, &r));
	/* The peer is on this node: it may need this CPU. */
	EXPECT_EQ(0, r.req.flags);
	EXPECT_EQ(self->ring, r.req.rx_size);
	EXPECT_EQ(self->ring, r.req.tx_size);
	EXPECT_EQ(sizeof(struct scif_fp_half), r.req.ring_off);
	EXPECT_EQ(SCIF_FP_LIVE, r.ctl->state);
	EXPECT_LE(r.req.ring_off + self->ring, r.req.local_len);

	memset(&req, 0, sizeof(req));
	ASSERT_EQ(0, ioctl(self->cn.client, SCIF_FP_OPEN, &req));
	/* Our half is the peer's to write: never writable here. */
	p = mmap(NULL, r.req.local_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 req.fd, r.req.local_off);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	EXPECT_NE(0, mprotect((void *)r.local, pg, PROT_READ | PROT_WRITE));
	/* Shared only, one part at a time, nothing beyond. */
	p = mmap(NULL, pg, PROT_READ, MAP_PRIVATE, req.fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, 2 * pg, PROT_READ, MAP_SHARED, req.fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, pg, PROT_READ, MAP_SHARED, req.fd,
		 r.req.remote_off + r.req.remote_len);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, pg, PROT_READ | PROT_EXEC, MAP_SHARED, req.fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	close(req.fd);
	rawfp_close(&r);
}

/* Bytes moved by hand through the mappings arrive, in order. */
TEST_F(pair, raw_rings_carry_data)
{
	struct rawfp r;
	char in[64];
	uint32_t w;

	ASSERT_EQ(0, rawfp_open(self->cn.client, &r));
	w = r.ctl->tx_write;
	memcpy((char *)r.remote + r.req.ring_off + (w & (r.req.tx_size - 1)),
	       "by hand", 7);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	r.ctl->tx_write = w + 7;
	r.remote->rx_write = w + 7;
	ASSERT_EQ(7, kxfer(self->cn.server, SCIF_RECV, in, sizeof(in), 0));
	EXPECT_EQ(0, memcmp(in, "by hand", 7));
	/* The kernel continues from the page's count. */
	ASSERT_EQ(5, kxfer(self->cn.client, SCIF_SEND, "after", 5, SCIF_SEND_BLOCK));
	EXPECT_EQ(w + 12, r.ctl->tx_write);
	ASSERT_EQ(5, kxfer(self->cn.server, SCIF_RECV, in, 5, SCIF_RECV_BLOCK));
	EXPECT_EQ(0, memcmp(in, "after", 5));
	rawfp_close(&r);
}

/* A count that makes no sense resets this connection, and only it. */
TEST_F(pair, forged_count_resets_own_connection)
{
	struct conn other = { .client = -1, .server = -1 };
	struct rawfp r;
	char buf[8] = "abcdefg";

	ASSERT_EQ(0, connect_pair(&other));
	ASSERT_EQ(0, rawfp_open(self->cn.client, &r));
	r.ctl->tx_write += 3 * r.req.tx_size;
	EXPECT_EQ(-1, kxfer(self->cn.client, SCIF_SEND, buf, 8, SCIF_SEND_BLOCK));
	EXPECT_EQ(ECONNRESET, errno);
	EXPECT_EQ(0, r.ctl->state);
	r.ctl->rx_read = 12345;		/* harmless now */
	EXPECT_EQ(-1, kxfer(self->cn.client, SCIF_SEND, buf, 8, 0));
	EXPECT_EQ(ECONNRESET, errno);
	/* The other connection does not notice. */
	ASSERT_EQ(8, scif_send(other.client, buf, 8, SCIF_SEND_BLOCK));
	ASSERT_EQ(8, scif_recv(other.server, buf, 8, SCIF_RECV_BLOCK));
	EXPECT_EQ(0, memcmp(buf, "abcdefg", 8));
	rawfp_close(&r);
	scif_close(other.client);
	scif_close(other.server);
}

/* A lock left by a process that is gone, or forged, is taken over. */
TEST_F(pair, stale_lock_taken_over)
{
	struct rawfp r;
	char buf[4] = "xyz";
	pid_t pid;

	ASSERT_EQ(0, rawfp_open(self->cn.client, &r));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(0);
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
	r.ctl->tx_lock = pid;
	EXPECT_EQ(4, kxfer(self->cn.client, SCIF_SEND, buf, 4, SCIF_SEND_BLOCK));
	EXPECT_EQ(0, r.ctl->tx_lock);
	EXPECT_EQ(4, kxfer(self->cn.server, SCIF_RECV, buf, 4, SCIF_RECV_BLOCK));
	r.ctl->tx_lock = 0x7fffffff;	/* no such process */
	EXPECT_EQ(4, kxfer(self->cn.client, SCIF_SEND, buf, 4, 0));
	EXPECT_EQ(4, kxfer(self->cn.server, SCIF_RECV, buf, 4, SCIF_RECV_BLOCK));
	/* The kernel's own value, forged. */
	r.ctl->rx_lock = SCIF_FP_KERNEL;
	EXPECT_EQ(4, kxfer(self->cn.server, SCIF_SEND, buf, 4, SCIF_SEND_BLOCK));
	EXPECT_EQ(4, kxfer(self->cn.client, SCIF_RECV, buf, 4, SCIF_RECV_BLOCK));
	EXPECT_EQ(0, r.ctl->rx_lock);
	EXPECT_EQ(0, memcmp(buf, "xyz", 4));
	rawfp_close(&r);
}

/* A lock a live process holds: the kernel waits, interruptibly. */
TEST_F(pair, held_lock_waits_interruptibly)
{
	struct rawfp r;
	char buf[4] = "xyz";

	ASSERT_EQ(0, rawfp_open(self->cn.client, &r));
	r.ctl->tx_lock = getpid();
	EXPECT_EQ(0, kxfer(self->cn.client, SCIF_SEND, buf, 4, 0));
	alarm_in_ms(300);
	EXPECT_EQ(-1, kxfer(self->cn.client, SCIF_SEND, buf, 4, SCIF_SEND_BLOCK));
	EXPECT_EQ(EINTR, errno);
	alarm_cancel();
	/* libscif leaves it to the kernel, which waits too: not forever. */
	alarm_in_ms(300);
	EXPECT_EQ(-1, scif_send(self->cn.client, buf, 4, SCIF_SEND_BLOCK));
	EXPECT_EQ(EINTR, errno);
	alarm_cancel();
	r.ctl->tx_lock = 0;
	EXPECT_EQ(4, scif_send(self->cn.client, buf, 4, SCIF_SEND_BLOCK));
	EXPECT_EQ(4, scif_recv(self->cn.server, buf, 4, SCIF_RECV_BLOCK));
	rawfp_close(&r);
}

/*
 * Whether @ctl's state word reads as not live within @ms: the kernel
 * clears it once the peer's half is gone from every process, which may
 * be a moment after the endpoint reports POLLHUP.
 */
static bool fp_gone_within(volatile struct scif_fp_ctl *ctl, int ms)
{
	while (__atomic_load_n(&ctl->state, __ATOMIC_ACQUIRE) && ms-- > 0)
		usleep(1000);
	return !__atomic_load_n(&ctl->state, __ATOMIC_ACQUIRE);
}

/* Once the peer is gone its half reads as zeroes and takes writes. */
TEST_F(pair, revoked_half_never_faults)
{
	struct rawfp r;
	char buf[32];
	int i;

	ASSERT_EQ(0, rawfp_open(self->cn.client, &r));
	ASSERT_EQ(5, scif_send(self->cn.client, "hello", 5, SCIF_SEND_BLOCK));
	EXPECT_NE(0, r.remote->rx_write);
	scif_close(self->cn.server);
	self->cn.server = -1;
	/* The peer's close reaches this side asynchronously. */
	ASSERT_EQ(POLLHUP, poll_one(self->cn.client, 0, 10000) & POLLHUP);
	ASSERT_TRUE(fp_gone_within(r.ctl, 10000));
	EXPECT_EQ(0, r.remote->rx_write);
	for (i = 0; i < 16; i++)
		((volatile char *)r.remote)[r.req.ring_off + i] = 'z';
	r.remote->rx_write = 1234;
	EXPECT_EQ(-1, scif_send(self->cn.client, buf, 8, SCIF_SEND_BLOCK));
	EXPECT_EQ(ECONNRESET, errno);
	EXPECT_EQ(-1, scif_recv(self->cn.client, buf, 8, 0));
	EXPECT_EQ(ECONNRESET, errno);
	rawfp_close(&r);
}

/* Data sent before the peer closed stays receivable through libscif. */
TEST_F(pair, data_outlives_peer_close)
{
	char out[100], in[100];

	fill_pattern(out, sizeof(out), 7);
	ASSERT_EQ(100, scif_send(self->cn.server, out, 100, SCIF_SEND_BLOCK));
	scif_close(self->cn.server);
	self->cn.server = -1;
	ASSERT_EQ(POLLHUP, poll_one(self->cn.client, 0, 10000) & POLLHUP);
	ASSERT_EQ(100, scif_recv(self->cn.client, in, 100, SCIF_RECV_BLOCK));
	EXPECT_EQ(0, memcmp(out, in, 100));
	EXPECT_EQ(-1, scif_recv(self->cn.client, in, 1, 0));
	EXPECT_EQ(ECONNRESET, errno);
}

/* libscif and the kernel's own calls take turns on one byte stream. */
TEST_F(pair, library_and_kernel_interleave)
{
	enum { N = 300, LEN = 777 };
	uint8_t *out = malloc(N * LEN), *in = malloc(N * LEN);
	int i, got = 0, n;

	ASSERT_NE(NULL, out);
	ASSERT_NE(NULL, in);
	fill_pattern(out, N * LEN, 11);
	for (i = 0; i < N; i++) {
		n = i % 2 ? kxfer(self->cn.client, SCIF_SEND, out + i * LEN, LEN,
				  SCIF_SEND_BLOCK) :
			    scif_send(self->cn.client, out + i * LEN, LEN,
				      SCIF_SEND_BLOCK);
		ASSERT_EQ(LEN, n);
		n = i % 3 ? scif_recv(self->cn.server, in + got, LEN,
				      SCIF_RECV_BLOCK) :
			    kxfer(self->cn.server, SCIF_RECV, in + got, LEN,
				  SCIF_RECV_BLOCK);
		ASSERT_EQ(LEN, n);
		got += n;
	}
	EXPECT_EQ(0, memcmp(out, in, N * LEN));
	free(out);
	free(in);
}

/* A duplicated descriptor is the same endpoint: one byte stream. */
TEST_F(pair, dup_shares_stream)
{
	char out[600], in[600];
	int d = dup(self->cn.client), i;

	ASSERT_LE(0, d);
	fill_pattern(out, sizeof(out), 5);
	for (i = 0; i < 6; i++)
		ASSERT_EQ(100, scif_send(i % 2 ? d : self->cn.client,
					 out + i * 100, 100, SCIF_SEND_BLOCK));
	ASSERT_EQ(600, scif_recv(self->cn.server, in, 600, SCIF_RECV_BLOCK));
	EXPECT_EQ(0, memcmp(out, in, 600));
	/* Closing the duplicate leaves the endpoint to the original. */
	EXPECT_EQ(0, scif_close(d));
	ASSERT_EQ(100, scif_send(self->cn.client, out, 100, SCIF_SEND_BLOCK));
	ASSERT_EQ(100, scif_recv(self->cn.server, in, 100, SCIF_RECV_BLOCK));
	EXPECT_EQ(0, memcmp(out, in, 100));
}

/* One blocking call of a whole buffer, from a thread. */
struct bulk {
	int ep;
	uint8_t *buf;
	long len;
	bool tx;
	long ret;
};

static void *bulk_fn(void *arg)
{
	struct bulk *b = arg;

	b->ret = b->tx ? scif_send(b->ep, b->buf, b->len, SCIF_SEND_BLOCK) :
			 scif_recv(b->ep, b->buf, b->len, SCIF_RECV_BLOCK);
	return NULL;
}

/*
 * @waiter makes a blocking call of @len bytes from a thread, sending
 * @out (@tx) or receiving into @in; 200 ms later @other makes the
 * matching call.  0 when both moved @len bytes and they arrived intact.
 */
static int late_partner(int waiter, int other, bool tx, uint8_t *out,
			uint8_t *in, long len)
{
	struct bulk b = { .ep = waiter, .buf = tx ? out : in, .len = len,
			  .tx = tx };
	pthread_t t;
	long n;

	memset(in, 0, len);
	if (pthread_create(&t, NULL, bulk_fn, &b))
		return -1;
	usleep(200000);
	n = tx ? scif_recv(other, in, len, SCIF_RECV_BLOCK) :
		 scif_send(other, out, len, SCIF_SEND_BLOCK);
	pthread_join(t, NULL);
	return n == len && b.ret == len && !memcmp(out, in, len) ? 0 : -1;
}

/*
 * A blocking call that has to sleep leaves only the sleep to the kernel:
 * the rest of its buffer still goes through libscif, whose own counts
 * (in the counter page) say how much it moved.  Both ways: a sender that
 * fills the ring before the receiver comes, a receiver that waits for
 * data sent later.
 */
TEST_F(pair, sleep_leaves_rest_to_library)
{
	long total = 4 * self->ring;
	uint8_t *out = malloc(total), *in = malloc(total);
	struct rawfp c, s;
	uint64_t before;

	if (fastpath_off())
		SKIP(return, "the data path is off");
	ASSERT_NE(NULL, out);
	ASSERT_NE(NULL, in);
	ASSERT_EQ(0, rawfp_open(self->cn.client, &c));
	ASSERT_EQ(0, rawfp_open(self->cn.server, &s));
	fill_pattern(out, total, 23);

	before = c.ctl->tx_bytes;
	ASSERT_EQ(0, late_partner(self->cn.client, self->cn.server, true,
				  out, in, total));
	EXPECT_LT(total - self->ring, (long)(c.ctl->tx_bytes - before));
	before = s.ctl->rx_bytes;
	ASSERT_EQ(0, late_partner(self->cn.server, self->cn.client, false,
				  out, in, total));
	EXPECT_LT(total - self->ring, (long)(s.ctl->rx_bytes - before));
	rawfp_close(&c);
	rawfp_close(&s);
	free(out);
	free(in);
}

struct sender {
	int ep;
	uint8_t val;
	int total;
};

static void *send_fn(void *arg)
{
	struct sender *s = arg;
	uint8_t buf[1000];
	int sent = 0, n;

	memset(buf, s->val, sizeof(buf));
	while (sent < s->total) {
		n = scif_send(s->ep, buf, sizeof(buf), SCIF_SEND_BLOCK);
		if (n != sizeof(buf))
			return (void *)1;
		sent += n;
	}
	return NULL;
}

/* Receive @total bytes and count each value. */
static int recv_count(int ep, long total, long counts[256])
{
	uint8_t buf[4096];
	long got = 0;
	int n, i;

	while (got < total) {
		n = scif_recv(ep, buf, sizeof(buf), 0);
		if (n < 0)
			return -1;
		if (!n && poll_one(ep, POLLIN, 20000) <= 0)
			return -1;
		for (i = 0; i < n; i++)
			counts[buf[i]]++;
		got += n;
	}
	return 0;
}

/* Four threads send on one endpoint: every byte arrives once. */
TEST_F(pair, threads_share_endpoint)
{
	enum { THREADS = 4, EACH = 200000 };
	struct sender s[THREADS];
	pthread_t t[THREADS];
	long counts[256] = { 0 };
	void *ret;
	int i;

	for (i = 0; i < THREADS; i++) {
		s[i] = (struct sender){ self->cn.client, i + 1, EACH };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, send_fn, &s[i]));
	}
	EXPECT_EQ(0, recv_count(self->cn.server, (long)THREADS * EACH, counts));
	for (i = 0; i < THREADS; i++) {
		pthread_join(t[i], &ret);
		EXPECT_EQ(NULL, ret);
		EXPECT_EQ(EACH, counts[i + 1]);
	}
}

/* A forked child sends on the inherited endpoint beside its parent. */
TEST_F(pair, fork_shares_endpoint)
{
	enum { EACH = 300000 };
	struct sender s = { self->cn.client, 1, EACH };
	long counts[256] = { 0 };
	char b[8] = "warm";
	pthread_t t;
	void *ret;
	int status;
	pid_t pid;

	/* The parent's data path exists before the fork. */
	ASSERT_EQ(4, scif_send(self->cn.client, b, 4, SCIF_SEND_BLOCK));
	ASSERT_EQ(4, scif_recv(self->cn.server, b, 4, SCIF_RECV_BLOCK));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		s.val = 2;
		_exit(send_fn(&s) ? 1 : 0);
	}
	/* The parent sends from a thread and receives both streams. */
	ASSERT_EQ(0, pthread_create(&t, NULL, send_fn, &s));
	EXPECT_EQ(0, recv_count(self->cn.server, 2L * EACH, counts));
	pthread_join(t, &ret);
	EXPECT_EQ(NULL, ret);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(EACH, counts[1]);
	EXPECT_EQ(EACH, counts[2]);
}

/* A child killed while it may hold the lock costs nothing but itself. */
TEST_F(pair, killed_sender_leaves_endpoint_usable)
{
	struct sender s = { self->cn.client, 3, 1 << 30 };
	long counts[256] = { 0 };
	uint8_t buf[4096];
	int i, n;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(send_fn(&s) ? 1 : 0);
	/* Let it fill the ring, then kill it mid-stream. */
	for (i = 0; i < 50; i++) {
		n = scif_recv(self->cn.server, buf, sizeof(buf), SCIF_RECV_BLOCK);
		ASSERT_EQ((int)sizeof(buf), n);
	}
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
	/* Drain what it left. */
	while (scif_recv(self->cn.server, buf, sizeof(buf), 0) > 0)
		;
	memset(buf, 9, 1000);
	alarm_in_ms(10000);
	EXPECT_EQ(1000, scif_send(self->cn.client, buf, 1000, SCIF_SEND_BLOCK));
	/*
	 * A child killed between its count and the peer's sees its last
	 * bytes go out with ours: they are its own (3), never anything else.
	 */
	while (counts[9] < 1000 && !recv_count(self->cn.server, 1, counts))
		;
	alarm_cancel();
	EXPECT_EQ(1000, counts[9]);
	for (i = 0; i < 256; i++) {
		if (i != 3 && i != 9) {
			EXPECT_EQ(0, counts[i]);
		}
	}
}

/*
 * Nothing an earlier owner left shows in a new connection's pages.
 * Processes map whole pages: both halves to the end of their last page,
 * past the ring.  The kernel keeps up to 16 freed halves for the next
 * connections and takes the rest from the page allocator (which, with
 * init_on_alloc off, hands out what was last written there).
 */
#define STALE_PAIRS	24	/* 48 halves: the 16 the kernel keeps, and more */
#define STALE_BYTE	0xa5

/* Whether byte @off of a half is one of its four words of live state. */
static bool fp_live_byte(size_t off)
{
	static const size_t words[] = {
		offsetof(struct scif_fp_half, rx_write),
		offsetof(struct scif_fp_half, rx_waiting),
		offsetof(struct scif_fp_half, tx_wanted),
		offsetof(struct scif_fp_half, tx_read),
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(words); i++)
		if (off >= words[i] && off < words[i] + sizeof(__u32))
			return true;
	return false;
}

/*
 * Bytes of a mapped half of @len bytes that are not zero, but for the
 * live words; the first one's offset in @first.
 */
static size_t fp_stale_bytes(const uint8_t *p, size_t len,
			     size_t *first)
{
	size_t off, n = 0;

	for (off = 0; off < len; off++) {
		if (!p[off] || fp_live_byte(off))
			continue;
		if (!n++)
			*first = off;
	}
	return n;
}

/*
 * Open @n pairs and their data paths; every byte this process can write
 * in them (the counter pages, the peers' halves to the end of their last
 * page) gets STALE_BYTE.  Then close everything.
 */
static int fp_dirty_pairs(int n)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct conn cn[STALE_PAIRS];
	struct rawfp r;
	int i, j, err = 0;

	for (i = 0; i < n; i++) {
		cn[i].client = cn[i].server = -1;
		if (connect_pair(&cn[i]))
			err = -1;
	}
	for (i = 0; i < n && !err; i++) {
		for (j = 0; j < 2 && !err; j++) {
			if (rawfp_open(j ? cn[i].server : cn[i].client, &r)) {
				err = -1;
				break;
			}
			memset(r.ctl, STALE_BYTE, pg);
			memset(r.remote, STALE_BYTE, r.req.remote_len);
			rawfp_close(&r);
		}
	}
	for (i = 0; i < n; i++) {
		if (cn[i].client >= 0)
			scif_close(cn[i].client);
		if (cn[i].server >= 0)
			scif_close(cn[i].server);
	}
	return err;
}

/*
 * Child: open @n pairs and their data paths and read every byte of every
 * mapped page, as @uid.  Exit 0 if all are zero (but for the live words
 * of the halves and the counter page's state), else the number of mapped
 * parts (three per endpoint) that are not; 250 and above: set-up failed.
 */
static int fp_clean_pairs_child(int n, uid_t uid)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct conn cn[STALE_PAIRS];
	struct scif_fp_ctl ctl;
	size_t first = 0, bad, parts = 0, dirty = 0;
	struct rawfp r;
	int i, j;

	if (setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
		return 250;
	for (i = 0; i < n; i++)
		if (connect_pair(&cn[i]))
			return 251;
	for (i = 0; i < n; i++) {
		for (j = 0; j < 2; j++) {
			if (rawfp_open(j ? cn[i].server : cn[i].client, &r))
				return 252;
			memcpy(&ctl, r.ctl, sizeof(ctl));
			ctl.state = 0;
			bad = fp_stale_bytes((uint8_t *)&ctl, sizeof(ctl),
					     &first) +
			      fp_stale_bytes((uint8_t *)r.ctl + sizeof(ctl),
					     pg - sizeof(ctl), &first);
			if (bad)
				fprintf(stderr, "# pair %d/%d: counter page: %zu stale bytes\n",
					i, j, bad);
			dirty += !!bad;
			bad = fp_stale_bytes((const uint8_t *)r.local,
					     r.req.local_len, &first);
			if (bad)
				fprintf(stderr, "# pair %d/%d: our half: %zu stale bytes of %llu, the first at %zu (ring ends at %zu)\n",
					i, j, bad,
					(unsigned long long)r.req.local_len,
					first,
					(size_t)(r.req.ring_off + r.req.rx_size));
			dirty += !!bad;
			bad = fp_stale_bytes((const uint8_t *)r.remote,
					     r.req.remote_len, &first);
			if (bad)
				fprintf(stderr, "# pair %d/%d: peer's half: %zu stale bytes of %llu, the first at %zu (ring ends at %zu)\n",
					i, j, bad,
					(unsigned long long)r.req.remote_len,
					first,
					(size_t)(r.req.ring_off + r.req.tx_size));
			dirty += !!bad;
			parts += 3;
			rawfp_close(&r);
		}
	}
	fprintf(stderr, "# %zu of %zu mapped parts held stale bytes\n", dirty,
		parts);
	for (i = 0; i < n; i++) {
		scif_close(cn[i].client);
		scif_close(cn[i].server);
	}
	return dirty > 249 ? 249 : (int)dirty;
}

/*
 * This process (root) fills the pages of @pairs connections with a
 * pattern and closes them; another user's @pairs new connections, whose
 * halves the kernel takes from its cache of freed ones and from the page
 * allocator, must read zeroes in every page they map.  @rounds times.
 */
static void fp_no_stale_bytes(struct __test_metadata *_metadata, int pairs,
			      int rounds)
{
	int base, status, r;
	pid_t pid;

	base = settled_count(EPD_LIST, 0, 300);
	ASSERT_LE(0, base);
	for (r = 0; r < rounds; r++) {
		ASSERT_EQ(0, fp_dirty_pairs(pairs));
		/* The halves are freed with their endpoints, asynchronously. */
		ASSERT_EQ(base, settled_count(EPD_LIST, base, 1000));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			_exit(fp_clean_pairs_child(pairs, 65534));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		ASSERT_GT(250, WEXITSTATUS(status))
			TH_LOG("round %d: the child failed to set up (%d)", r,
			       WEXITSTATUS(status));
		EXPECT_EQ(0, WEXITSTATUS(status))
			TH_LOG("round %d: %d mapped parts held an earlier owner's bytes",
			       r, WEXITSTATUS(status));
		ASSERT_EQ(base, settled_count(EPD_LIST, base, 1000));
	}
}

/*
 * 48 halves: the kernel's cache gives up to 16 of them (areas this
 * process filled), the page allocator the rest (with init_on_alloc off,
 * often the very pages this process filled).
 */
TEST(no_stale_bytes_for_next_user)
{
	fp_no_stale_bytes(_metadata, STALE_PAIRS, 1);
}

/*
 * 16 halves, round after round: as many as the cache keeps, so that the
 * next user's connections are made of reused areas.
 */
TEST(no_stale_bytes_after_cache_reuse)
{
	fp_no_stale_bytes(_metadata, 8, 3);
}

TEST_HARNESS_MAIN
