// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF remote mmap on one node (loopback): an 8-byte ping-pong through a
 * mapping of the peer's window (round trip printed), data both ways,
 * ranges across contiguous windows, the errors of mmap (EINVAL, ENXIO,
 * EACCES, ENOTCONN), protection (read-only windows, mprotect), and the
 * lifetime: SIGBUS after the peer unregisters or closes, nothing in a
 * forked child, munmap letting go of the window, a partial munmap.
 *
 * Both ends are in this process, so the server's window can be checked
 * in memory directly.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <linux/scif_ioctl.h>

#include "scif.h"
#include "kselftest_harness.h"
#define SCIF_TEST_WITH_LIBSCIF
#include "scif_test_util.h"
#include "scif_mmap_test.h"

#define MMAP_STATS	"/sys/kernel/debug/scif/mmap"
#define RMA_STATS	"/sys/kernel/debug/scif/rma"
#define PG		4096L
#define WIN		(64 * 1024L)
#define ROFF		0x100000L
#define ROUNDS		2000

static uint8_t *anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

FIXTURE(mm) {
	struct conn cn;
	uint8_t *rbuf;		/* behind the server's window at ROFF */
	long maps0, rwins0;
};

FIXTURE_SETUP(mm)
{
	self->maps0 = file_stat(MMAP_STATS, "mappings");
	self->rwins0 = file_stat(RMA_STATS, "remote_windows");
	ASSERT_LE(0, self->maps0) TH_LOG("no %s", MMAP_STATS);
	ASSERT_EQ(0, connect_pair(&self->cn));
	self->rbuf = anon(2 * WIN);
	ASSERT_NE(NULL, self->rbuf);
	memset(self->rbuf, 0, 2 * WIN);
	ASSERT_EQ(ROFF, scif_register(self->cn.server, self->rbuf, WIN, ROFF,
				      SCIF_PROT_READ | SCIF_PROT_WRITE,
				      SCIF_MAP_FIXED));
}

FIXTURE_TEARDOWN(mm)
{
	if (self->cn.client >= 0)
		close(self->cn.client);
	if (self->cn.server >= 0)
		close(self->cn.server);
	EXPECT_EQ(self->maps0, file_stat_settles_at(MMAP_STATS, "mappings",
					       self->maps0));
	EXPECT_EQ(self->rwins0, file_stat_settles_at(RMA_STATS, "remote_windows",
						self->rwins0));
	munmap(self->rbuf, 2 * WIN);
}

struct echo {
	volatile uint64_t *ping, *pong;
	int ret;
};

static void *echo_fn(void *arg)
{
	struct echo *e = arg;

	e->ret = pong_rounds(e->ping, e->pong, ROUNDS);
	return NULL;
}

TEST_F(mm, pingpong_8_bytes_through_mapping)
{
	volatile uint64_t *map, *own = (volatile uint64_t *)self->rbuf;
	struct echo e = { .ping = own, .pong = own + 8 };
	pthread_t th;
	double rtt;

	map = scif_mmap(NULL, PG, SCIF_PROT_READ | SCIF_PROT_WRITE, 0,
			self->cn.client, ROFF);
	ASSERT_NE(SCIF_MMAP_FAILED, (void *)map) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, pthread_create(&th, NULL, echo_fn, &e));
	/* The client writes through the mapping; the server polls its own. */
	rtt = ping_rounds(map, map + 8, ROUNDS);
	pthread_join(th, NULL);
	EXPECT_EQ(0, e.ret);
	ASSERT_LT(0, rtt);
	printf("# mmap ping-pong on loopback: %d round trips, %.2f us each\n",
	       ROUNDS, rtt);
	EXPECT_EQ(ROUNDS, own[0]);
	EXPECT_EQ(0, scif_munmap((void *)map, PG));
}

TEST_F(mm, data_both_ways_across_contiguous_windows)
{
	uint8_t *map, *ref = anon(2 * WIN);

	ASSERT_NE(NULL, ref);
	/* A second window right after the first: one range of 2 * WIN. */
	ASSERT_EQ(ROFF + WIN, scif_register(self->cn.server, self->rbuf + WIN,
					    WIN, ROFF + WIN,
					    SCIF_PROT_READ | SCIF_PROT_WRITE,
					    SCIF_MAP_FIXED));
	map = scif_mmap(NULL, 2 * WIN, SCIF_PROT_READ | SCIF_PROT_WRITE, 0,
			self->cn.client, ROFF);
	ASSERT_NE(SCIF_MMAP_FAILED, map) TH_LOG("%s", strerror(errno));
	fill_pattern(ref, 2 * WIN, 7);
	memcpy(map, ref, 2 * WIN);
	EXPECT_EQ(0, memcmp(self->rbuf, ref, 2 * WIN));
	fill_pattern(self->rbuf, 2 * WIN, 8);
	fill_pattern(ref, 2 * WIN, 8);
	EXPECT_EQ(0, memcmp(map, ref, 2 * WIN));
	/* A piece in the middle, at an offset inside the first window. */
	EXPECT_EQ(0, scif_munmap(map, 2 * WIN));
	map = scif_mmap(NULL, 2 * PG, SCIF_PROT_READ, 0, self->cn.client,
			ROFF + WIN - PG);
	ASSERT_NE(SCIF_MMAP_FAILED, map) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(0, memcmp(map, ref + WIN - PG, 2 * PG));
	EXPECT_EQ(0, scif_munmap(map, 2 * PG));
	munmap(ref, 2 * WIN);
}

TEST_F(mm, mmap_errors)
{
	int c = self->cn.client;
	void *p;

	/* Private mappings and execution are refused. */
	p = mmap(NULL, PG, PROT_READ, MAP_PRIVATE, c, ROFF);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, PG, PROT_READ | PROT_EXEC, MAP_SHARED, c, ROFF);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	/* Offsets outside windows, ranges past the end, or across a gap. */
	EXPECT_EQ(SCIF_MMAP_FAILED, scif_mmap(NULL, PG, SCIF_PROT_READ, 0, c, 0));
	EXPECT_EQ(ENXIO, errno);
	EXPECT_EQ(SCIF_MMAP_FAILED, scif_mmap(NULL, WIN + PG, SCIF_PROT_READ,
					      0, c, ROFF));
	EXPECT_EQ(ENXIO, errno);
	EXPECT_EQ(SCIF_MMAP_FAILED, scif_mmap(NULL, 2 * PG, SCIF_PROT_READ, 0,
					      c, ROFF - PG));
	EXPECT_EQ(ENXIO, errno);
	ASSERT_EQ(ROFF + WIN + PG,
		  scif_register(self->cn.server, self->rbuf + WIN, PG,
				ROFF + WIN + PG, SCIF_PROT_READ,
				SCIF_MAP_FIXED));
	EXPECT_EQ(SCIF_MMAP_FAILED, scif_mmap(NULL, WIN + 2 * PG,
					      SCIF_PROT_READ, 0, c, ROFF));
	EXPECT_EQ(ENXIO, errno);
	/* Unaligned offsets, no length, bad flags. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, PG, PROT_READ, MAP_SHARED, c, ROFF + 8));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(SCIF_MMAP_FAILED, scif_mmap(NULL, 0, SCIF_PROT_READ, 0, c,
					      ROFF));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(SCIF_MMAP_FAILED, scif_mmap(NULL, PG, SCIF_PROT_READ,
					      MAP_PRIVATE, c, ROFF));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(SCIF_MMAP_FAILED, scif_mmap(NULL, PG, 0x10, 0, c, ROFF));
	EXPECT_EQ(EINVAL, errno);
	/* Far offsets, negative ones, and the largest. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, PG, PROT_READ, MAP_SHARED, c,
				   (off_t)1 << 62));
	EXPECT_EQ(ENXIO, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, PG, PROT_READ, MAP_SHARED, c, -PG));
	EXPECT_TRUE(errno == ENXIO || errno == EOVERFLOW || errno == EINVAL);
	/* A listening or unconnected endpoint. */
	int fd = scif_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(SCIF_MMAP_FAILED, scif_mmap(NULL, PG, SCIF_PROT_READ, 0, fd,
					      ROFF));
	EXPECT_EQ(ENOTCONN, errno);
	scif_close(fd);
	EXPECT_EQ(self->maps0, file_stat(MMAP_STATS, "mappings"));
}

TEST_F(mm, read_only_window_protection)
{
	int c = self->cn.client;
	volatile uint64_t *map;

	ASSERT_EQ(0x300000, scif_register(self->cn.server, self->rbuf + WIN,
					  PG, 0x300000, SCIF_PROT_READ,
					  SCIF_MAP_FIXED));
	ASSERT_EQ(0x301000, scif_register(self->cn.server, self->rbuf + WIN + PG,
					  PG, 0x301000, SCIF_PROT_WRITE,
					  SCIF_MAP_FIXED));
	EXPECT_EQ(SCIF_MMAP_FAILED, scif_mmap(NULL, PG, SCIF_PROT_READ |
					      SCIF_PROT_WRITE, 0, c, 0x300000));
	EXPECT_EQ(EACCES, errno);
	/* The CPU reads whatever it can write: a write-only one is refused. */
	EXPECT_EQ(SCIF_MMAP_FAILED, scif_mmap(NULL, PG, SCIF_PROT_WRITE, 0, c,
					      0x301000));
	EXPECT_EQ(EACCES, errno);
	/* A writable range running into the read-only window. */
	EXPECT_EQ(SCIF_MMAP_FAILED, scif_mmap(NULL, 2 * PG, SCIF_PROT_READ |
					      SCIF_PROT_WRITE, 0, c,
					      0x300000 - PG));
	map = scif_mmap(NULL, PG, SCIF_PROT_READ, 0, c, 0x300000);
	ASSERT_NE(SCIF_MMAP_FAILED, (void *)map) TH_LOG("%s", strerror(errno));
	self->rbuf[WIN] = 0x42;
	EXPECT_EQ(0x42, *(volatile uint8_t *)map);
	EXPECT_EQ(SIGSEGV, probe(map, true));
	EXPECT_EQ(-1, mprotect((void *)map, PG, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(-1, mprotect((void *)map, PG, PROT_READ | PROT_EXEC));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(0x42, self->rbuf[WIN]);
	EXPECT_EQ(0, scif_munmap((void *)map, PG));
}

TEST_F(mm, unregister_while_mapped_sigbus)
{
	volatile uint64_t *map;
	long t0;

	map = scif_mmap(NULL, WIN, SCIF_PROT_READ | SCIF_PROT_WRITE, 0,
			self->cn.client, ROFF);
	ASSERT_NE(SCIF_MMAP_FAILED, (void *)map);
	map[0] = 1234;
	EXPECT_EQ(1234, ((uint64_t *)self->rbuf)[0]);
	t0 = now_ms();
	EXPECT_EQ(0, scif_unregister(self->cn.server, ROFF, WIN));
	EXPECT_GT(WAIT_MS, now_ms() - t0);
	/* Pages touched before and pages never touched: both are gone. */
	EXPECT_EQ(SIGBUS, probe(map, false));
	EXPECT_EQ(SIGBUS, probe(map + PG, true));
	EXPECT_EQ(1234, ((uint64_t *)self->rbuf)[0]);
	/* The range is no window any more; the mapping is still there. */
	EXPECT_EQ(SCIF_MMAP_FAILED, scif_mmap(NULL, PG, SCIF_PROT_READ, 0,
					      self->cn.client, ROFF));
	EXPECT_EQ(ENXIO, errno);
	EXPECT_EQ(self->maps0 + 1, file_stat(MMAP_STATS, "mappings"));
	EXPECT_EQ(0, scif_munmap((void *)map, WIN));
}

TEST_F(mm, peer_close_while_mapped_sigbus)
{
	volatile uint64_t *map;

	map = scif_mmap(NULL, PG, SCIF_PROT_READ | SCIF_PROT_WRITE, 0,
			self->cn.client, ROFF);
	ASSERT_NE(SCIF_MMAP_FAILED, (void *)map);
	EXPECT_EQ(0, probe(map, true));
	close(self->cn.server);
	self->cn.server = -1;
	EXPECT_EQ(0, probe_until(map, SIGBUS, WAIT_MS));
	EXPECT_EQ(SCIF_MMAP_FAILED, scif_mmap(NULL, PG, SCIF_PROT_READ, 0,
					      self->cn.client, ROFF));
	EXPECT_EQ(ECONNRESET, errno);
	EXPECT_EQ(0, scif_munmap((void *)map, PG));
}

TEST_F(mm, fork_does_not_inherit_mapping)
{
	volatile uint64_t *map;
	int status;
	pid_t pid;

	map = scif_mmap(NULL, PG, SCIF_PROT_READ | SCIF_PROT_WRITE, 0,
			self->cn.client, ROFF);
	ASSERT_NE(SCIF_MMAP_FAILED, (void *)map);
	map[0] = 77;
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(probe(map, false) == SIGSEGV &&
		      probe(map, true) == SIGSEGV ? 0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(77, map[0]);
	EXPECT_EQ(77, ((uint64_t *)self->rbuf)[0]);
	/* MADV_DOFORK cannot turn it back on. */
	EXPECT_EQ(-1, madvise((void *)map, PG, MADV_DOFORK));
	EXPECT_EQ(0, scif_munmap((void *)map, PG));
}

TEST_F(mm, munmap_releases_window)
{
	void *map;
	long t0;

	map = scif_mmap(NULL, WIN, SCIF_PROT_READ, 0, self->cn.client, ROFF);
	ASSERT_NE(SCIF_MMAP_FAILED, map);
	EXPECT_EQ(self->maps0 + 1, file_stat(MMAP_STATS, "mappings"));
	/* A partial munmap splits it; both halves hold the mapping. */
	EXPECT_EQ(0, munmap((uint8_t *)map + PG, PG));
	EXPECT_EQ(0, probe((uint64_t *)map, false));
	EXPECT_EQ(SIGSEGV, probe((uint64_t *)((uint8_t *)map + PG), false));
	EXPECT_EQ(0, probe((uint64_t *)((uint8_t *)map + 2 * PG), false));
	EXPECT_EQ(self->maps0 + 1, file_stat(MMAP_STATS, "mappings"));
	EXPECT_EQ(0, munmap(map, PG));
	EXPECT_EQ(0, munmap((uint8_t *)map + 2 * PG, WIN - 2 * PG));
	EXPECT_EQ(self->maps0, file_stat(MMAP_STATS, "mappings"));
	t0 = now_ms();
	EXPECT_EQ(0, scif_unregister(self->cn.server, ROFF, WIN));
	EXPECT_GT(WAIT_MS, now_ms() - t0);
	EXPECT_EQ(self->rwins0, file_stat_settles_at(RMA_STATS, "remote_windows",
						self->rwins0));
}

TEST_F(mm, close_fd_keeps_mapping_until_munmap)
{
	volatile uint64_t *map;
	int v;

	map = scif_mmap(NULL, PG, SCIF_PROT_READ | SCIF_PROT_WRITE, 0,
			self->cn.client, ROFF);
	ASSERT_NE(SCIF_MMAP_FAILED, (void *)map);
	/* The mapping holds the file: the endpoint stays connected. */
	close(self->cn.client);
	self->cn.client = -1;
	map[1] = 99;
	EXPECT_EQ(99, ((uint64_t *)self->rbuf)[1]);
	EXPECT_EQ(0, scif_recv(self->cn.server, &v, sizeof(v), 0));
	EXPECT_EQ(0, scif_munmap((void *)map, PG));
	/* Now the endpoint closes, and its peer sees the reset. */
	for (int i = 0; i < 500; i++) {
		if (scif_recv(self->cn.server, &v, sizeof(v), 0) < 0 &&
		    errno == ECONNRESET)
			break;
		usleep(10000);
	}
	EXPECT_EQ(ECONNRESET, errno);
}

#define SCIF_DBG	"/sys/kernel/debug/scif/"
#define CYCLE_CONNS	8

/* Wait (up to 5 s) for this node's sysfs state to be @want: 0 if it is. */
static int node_state_is(const char *want)
{
	char path[64], buf[32];

	snprintf(path, sizeof(path), "/sys/class/misc/scif/nodes/%u/state",
		 local_node());
	for (int i = 0; i < 500; i++) {
		if (!read_file(path, buf, sizeof(buf)) &&
		    !strncmp(buf, want, strlen(want)))
			return 0;
		usleep(10000);
	}
	return -1;
}

/* One bench-like round: a fresh page as window 0, mapped and pinged. */
static int fresh_window_round(struct __test_metadata *_metadata)
{
	volatile uint64_t *map, *own;
	struct echo e;
	struct conn cn;
	pthread_t th;
	int sig;

	EXPECT_EQ(0, connect_pair(&cn));
	own = (volatile uint64_t *)anon(PG);
	EXPECT_NE(NULL, own);
	if (!own)
		return -1;
	EXPECT_EQ(0, scif_register(cn.server, (void *)own, PG, 0,
				   SCIF_PROT_READ | SCIF_PROT_WRITE,
				   SCIF_MAP_FIXED));
	map = scif_mmap(NULL, PG, SCIF_PROT_READ | SCIF_PROT_WRITE, 0,
			cn.client, 0);
	EXPECT_NE(SCIF_MMAP_FAILED, (void *)map) TH_LOG("%s", strerror(errno));
	if (map == SCIF_MMAP_FAILED)
		return -1;
	/* The first access, then the rounds: a live window gives no signal. */
	sig = probe(map + 16, true);
	EXPECT_EQ(0, sig);
	e = (struct echo){ .ping = own, .pong = own + 8 };
	EXPECT_EQ(0, pthread_create(&th, NULL, echo_fn, &e));
	EXPECT_LT(0, ping_rounds(map, map + 8, ROUNDS));
	pthread_join(th, NULL);
	EXPECT_EQ(0, e.ret);
	EXPECT_EQ(0, scif_unregister(cn.server, 0, PG));
	EXPECT_EQ(0, scif_munmap((void *)map, PG));
	close(cn.client);
	close(cn.server);
	munmap((void *)own, PG);
	return sig ? -1 : 0;
}

/*
 * The loopback node failed, taken down and brought up again (the test
 * build's hooks): connections of the new life map fresh windows and use
 * them without SIGBUS, connection after connection (scif-bench mmap-lat's
 * pattern: a new page registered at offset 0 each time).
 */
TEST(mapping_after_node_cycle_no_sigbus)
{
	char cmd[32];
	int i;

	if (access(SCIF_DBG "corrupt", W_OK) ||
	    access(SCIF_DBG "node_test", W_OK))
		SKIP(return, "not the test build (no %s hooks)", SCIF_DBG);
	snprintf(cmd, sizeof(cmd), "count %u", local_node());
	ASSERT_EQ(0, write_file(SCIF_DBG "corrupt", cmd));
	ASSERT_EQ(0, node_state_is("failed"));
	ASSERT_EQ(0, write_file(SCIF_DBG "node_test", "loopback down"));
	ASSERT_EQ(0, node_state_is("absent"));
	ASSERT_EQ(0, write_file(SCIF_DBG "node_test", "loopback up"));
	ASSERT_EQ(0, node_state_is("online"));
	for (i = 0; i < CYCLE_CONNS; i++)
		ASSERT_EQ(0, fresh_window_round(_metadata)) TH_LOG("round %d", i);
}

TEST_HARNESS_MAIN
