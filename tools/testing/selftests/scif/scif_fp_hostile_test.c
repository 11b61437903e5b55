// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF's user-space data path against its own user, and its revocation
 * order forced:
 *
 * - traffic counts a process writes into its counter page, however
 *   absurd (huge, "negative", going back), never reach the node's
 *   world-readable statistics of what the kernel measured (sysfs
 *   stats/tx_bytes...) nor the endpoint's (debugfs); what libscif
 *   really counted shows in the user_* fields only, never more than its
 *   rings moved;
 * - with the test build's delay point SCIF_DELAY_FP_REVOKE (<debugfs>/
 *   scif/node_test "delay 3 <ms>") widening the window between the two
 *   steps of scif_fp_revoke(), a process that reads the state word as
 *   not live finds the peer's half already gone (skipped without the
 *   hook).
 *
 * Both ends live in this process, on the local node.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/scif_ioctl.h>

#include "scif.h"
#include "kselftest_harness.h"
#define SCIF_TEST_WITH_LIBSCIF
#include "scif_test_util.h"
#include "scif_fp_raw.h"

#define NODE_TEST	"/sys/kernel/debug/scif/node_test"
#define DELAY_FP_REVOKE	3	/* SCIF_DELAY_FP_REVOKE in scif_fault.h */
#define REVOKE_DELAY_MS	1000
#define DELAY_MSG_COUNT	4	/* SCIF_DELAY_MSG_COUNT in scif_fault.h */
#define COUNT_DELAY_MS	1000
#define STR_(x)		#x
#define STR(x)		STR_(x)

/* Every endpoint of this test gets libscif's data path on its first call. */
__attribute__((constructor)) static void no_warmup(void)
{
	setenv("SCIF_FASTPATH_WARMUP", "0", 0);
}

enum { TXB, TXM, RXB, RXM, UTXB, UTXM, URXB, URXM, NR_STATS };

static const char *const stat_names[NR_STATS] = {
	"stats/tx_bytes", "stats/tx_msgs", "stats/rx_bytes", "stats/rx_msgs",
	"stats/user_tx_bytes", "stats/user_tx_msgs", "stats/user_rx_bytes",
	"stats/user_rx_msgs",
};

static void node_stats(long long *c)
{
	int i;

	for (i = 0; i < NR_STATS; i++)
		c[i] = node_file(stat_names[i]);
}

FIXTURE(pair) {
	struct conn cn;
};

FIXTURE_SETUP(pair)
{
	self->cn.client = self->cn.server = -1;
	ASSERT_EQ(0, connect_pair(&self->cn));
}

FIXTURE_TEARDOWN(pair)
{
	if (!access(NODE_TEST, W_OK)) {
		write_file(NODE_TEST, "delay 3 0");
		write_file(NODE_TEST, "delay 4 0");
	}
	if (self->cn.client >= 0)
		scif_close(self->cn.client);
	if (self->cn.server >= 0)
		scif_close(self->cn.server);
}

/* Huge, "negative", going back, just under the old 2 GiB cut, wrapping. */
static const uint64_t forged[] = {
	0x7fffffffULL, 1ULL << 62, UINT64_MAX, (uint64_t)-5000, 0x10,
	3, 0x7ffffffeULL, 0xfffffffcULL, 0x17ffffff0ULL, 0,
};

#define KBYTES	100	/* what the kernel moves per round of the test */

/*
 * Forged counts never reach the node's or the endpoint's kernel-measured
 * counters: those move by exactly what SCIF_SEND and SCIF_RECV moved.
 */
TEST_F(pair, forged_counts_stay_out_of_node_stats)
{
	long long before[NR_STATS], after[NR_STATS];
	unsigned long long ep[7];
	struct rawfp c, s;
	char buf[KBYTES];
	unsigned int i, n = sizeof(forged) / sizeof(forged[0]);

	node_stats(before);
	ASSERT_LE(0, before[TXB]);
	ASSERT_EQ(0, rawfp_open(self->cn.client, &c));
	ASSERT_EQ(0, rawfp_open(self->cn.server, &s));
	memset(buf, 'k', sizeof(buf));
	for (i = 0; i < n; i++) {
		c.ctl->tx_bytes = forged[i];
		c.ctl->tx_msgs = forged[i] >> (i & 1);
		s.ctl->rx_bytes = forged[i];
		s.ctl->rx_msgs = forged[i] >> (i & 1);
		/* Both ways into the kernel: a notify, a round of its own. */
		ASSERT_EQ(0, ioctl(self->cn.client, SCIF_FP_NOTIFY,
				   (long)SCIF_FP_NOTIFY_DATA));
		ASSERT_EQ(0, ioctl(self->cn.server, SCIF_FP_NOTIFY,
				   (long)SCIF_FP_NOTIFY_SPACE));
		ASSERT_EQ(KBYTES, kxfer(self->cn.client, SCIF_SEND, buf,
					KBYTES, SCIF_SEND_BLOCK));
		ASSERT_EQ(KBYTES, kxfer(self->cn.server, SCIF_RECV, buf,
					KBYTES, SCIF_RECV_BLOCK));
	}
	node_stats(after);
	/* Both ends are on this node: each byte is sent and received here. */
	EXPECT_EQ(n * KBYTES, after[TXB] - before[TXB]);
	EXPECT_EQ(n, after[TXM] - before[TXM]);
	EXPECT_EQ(n * KBYTES, after[RXB] - before[RXB]);
	EXPECT_EQ(n, after[RXM] - before[RXM]);
	/* The kernel moved every byte the rings carried: nothing is left. */
	EXPECT_EQ(0, after[UTXB] - before[UTXB]);
	EXPECT_EQ(0, after[UTXM] - before[UTXM]);
	EXPECT_EQ(0, after[URXB] - before[URXB]);
	EXPECT_EQ(0, after[URXM] - before[URXM]);
	if (!ep_counters(self->cn.client_port, NULL, ep)) {
		EXPECT_EQ(n * KBYTES, ep[0]);
		EXPECT_EQ(n, ep[1]);
	}
	rawfp_close(&c);
	rawfp_close(&s);
}

/*
 * What libscif moved and counted shows in the user_* fields, never in
 * the kernel's.
 */
TEST_F(pair, library_counts_reported_apart)
{
	long long before[NR_STATS], after[NR_STATS];
	char out[1000], in[1000];
	int i;

	if (getenv("SCIF_FASTPATH") && !strcmp(getenv("SCIF_FASTPATH"), "0"))
		SKIP(return, "libscif's data path is off");
	node_stats(before);
	ASSERT_LE(0, before[UTXB]) TH_LOG("no stats/user_tx_bytes");
	fill_pattern(out, sizeof(out), 3);
	for (i = 0; i < 10; i++) {
		ASSERT_EQ(1000, scif_send(self->cn.client, out, 1000,
					  SCIF_SEND_BLOCK));
		ASSERT_EQ(1000, scif_recv(self->cn.server, in, 1000,
					  SCIF_RECV_BLOCK));
	}
	/* The kernel looks at the counts when the process next enters it. */
	ASSERT_EQ(0, ioctl(self->cn.client, SCIF_FP_NOTIFY,
			   (long)SCIF_FP_NOTIFY_DATA));
	ASSERT_EQ(0, ioctl(self->cn.server, SCIF_FP_NOTIFY,
			   (long)SCIF_FP_NOTIFY_SPACE));
	node_stats(after);
	EXPECT_EQ(10000, after[UTXB] - before[UTXB]);
	EXPECT_EQ(10, after[UTXM] - before[UTXM]);
	EXPECT_EQ(10000, after[URXB] - before[URXB]);
	EXPECT_EQ(10, after[URXM] - before[URXM]);
	EXPECT_EQ(0, after[TXB] - before[TXB]);
	EXPECT_EQ(0, after[RXB] - before[RXB]);
}

struct closer {
	int fd;
	atomic_int done;
};

static void *closer_fn(void *arg)
{
	struct closer *cl = arg;

	scif_close(cl->fd);
	atomic_store(&cl->done, 1);
	return NULL;
}

/*
 * The peer closes while revocation is held between its two steps: a
 * process that reads the state word as not live must find the peer's
 * half already gone (zeroes).  Before commit a8f1073 the state was
 * cleared first and the half stayed mapped for the whole delay.
 */
TEST_F(pair, revoke_order_forced)
{
	struct closer cl = { .fd = self->cn.server };
	uint32_t rx_write = 0;
	long start, live_ms;
	pthread_t t;
	struct rawfp r;

	if (access(NODE_TEST, W_OK))
		SKIP(return, "no test hooks (root, test build)");
	ASSERT_EQ(0, rawfp_open(self->cn.client, &r));
	ASSERT_EQ(5, kxfer(self->cn.client, SCIF_SEND, "hello", 5,
			   SCIF_SEND_BLOCK));
	ASSERT_NE(0, r.remote->rx_write);
	ASSERT_EQ(0, write_file(NODE_TEST, "delay 3 " STR(REVOKE_DELAY_MS)));
	start = now_ms();
	/* The close may wait for this side's revocation: close elsewhere. */
	self->cn.server = -1;
	ASSERT_EQ(0, pthread_create(&t, NULL, closer_fn, &cl));
	while (__atomic_load_n(&r.ctl->state, __ATOMIC_ACQUIRE) &&
	       now_ms() - start < 10000)
		;
	rx_write = __atomic_load_n(&r.remote->rx_write, __ATOMIC_RELAXED);
	live_ms = now_ms() - start;
	pthread_join(t, NULL);
	ASSERT_EQ(0, write_file(NODE_TEST, "delay 3 0"));
	ASSERT_EQ(0, r.ctl->state) TH_LOG("state still live after 10 s");
	/* The state was cleared, yet the half was still the peer's. */
	EXPECT_EQ(0, rx_write);
	/* The hook held the revocation (else the test proves nothing). */
	EXPECT_LE(REVOKE_DELAY_MS / 2, live_ms);
	TH_LOG("state live for %ld ms after the close", live_ms);
	rawfp_close(&r);
}


/* Writes @val into @word @after_ms after it starts: the hostile peer. */
struct scribbler {
	uint32_t *word;
	uint32_t val;
	long after_ms;
};

static void *scribble_fn(void *arg)
{
	struct scribbler *sc = arg;

	usleep(sc->after_ms * 1000);
	__atomic_store_n(sc->word, sc->val, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The server's process, as its peer, breaks the count the client's
 * kernel reads (through the server's mapping of the client's half) while
 * a send or a receive of the client is held between its look at that
 * count and its copy (delay point 4).  The call must move what it saw,
 * or report the reset: never EFAULT for a good buffer.  Before the fix
 * the count was read again for the copy, found broken, nothing copied,
 * and the call failed with EFAULT.
 */
static void count_broken_mid_call(struct __test_metadata *_metadata,
				  struct conn *cn, bool send)
{
	char out[100], in[100];
	struct scribbler sc;
	struct rawfp s;
	pthread_t t;
	int n, err;

	fill_pattern(out, sizeof(out), 11);
	if (!send)
		ASSERT_EQ(100, kxfer(cn->server, SCIF_SEND, out, 100,
				     SCIF_SEND_BLOCK));
	ASSERT_EQ(0, rawfp_open(cn->server, &s));
	sc.word = send ? &s.remote->tx_read : &s.remote->rx_write;
	sc.val = *sc.word + 0x40000000u;
	sc.after_ms = COUNT_DELAY_MS / 3;
	ASSERT_EQ(0, write_file(NODE_TEST,
				"delay 4 " STR(COUNT_DELAY_MS)));
	ASSERT_EQ(0, pthread_create(&t, NULL, scribble_fn, &sc));
	n = send ? kxfer(cn->client, SCIF_SEND, out, 100, 0) :
		   kxfer(cn->client, SCIF_RECV, in, 100, 0);
	err = errno;
	pthread_join(t, NULL);
	ASSERT_EQ(0, write_file(NODE_TEST, "delay 4 0"));
	EXPECT_TRUE(n == 100 || (n < 0 && err == ECONNRESET))
		TH_LOG("%s: %d (%s)", send ? "send" : "recv", n,
		       n < 0 ? strerror(err) : "bytes");
	if (!send && n == 100)
		EXPECT_EQ(-1, check_pattern(in, 100, 11));
	rawfp_close(&s);
}

TEST_F(pair, count_broken_mid_send_is_no_efault)
{
	if (access(NODE_TEST, W_OK))
		SKIP(return, "no test hooks (root, test build)");
	count_broken_mid_call(_metadata, &self->cn, true);
}

TEST_F(pair, count_broken_mid_recv_is_no_efault)
{
	if (access(NODE_TEST, W_OK))
		SKIP(return, "no test hooks (root, test build)");
	count_broken_mid_call(_metadata, &self->cn, false);
}

TEST_HARNESS_MAIN
