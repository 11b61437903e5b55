// SPDX-License-Identifier: GPL-2.0
/*
 * The copy engine under load: every RMA and every close finishes in
 * bounded time (issue 31, item 10).
 *
 * 264 loopback pairs (more than the 256 work items an unbound workqueue
 * runs at once), each fed asynchronous RMAs longer than 256 KiB (so
 * they go to the engine's worker) by a thread of its own.  Meanwhile a
 * victim pair queues an asynchronous RMA, runs a synchronous one and
 * closes both ends; then the load stops and every pair is closed.  Each
 * of these steps must finish within a bound, with its errno checked and
 * the victim's bytes compared.  A watchdog dumps the stacks of the
 * blocked threads (/proc/PID/task/TID/stack) if the run takes too long,
 * then stops the load: if things finish then, it was starvation, else a
 * deadlock.
 *
 * rma_max_queued is raised for the run so that each feeder is bounded
 * by its endpoint's queue (64 descriptors) rather than by the engine's
 * global count: a feeder then keeps its endpoint's queue from ever
 * running empty, and a worker that ran its queue until empty (before
 * the fix) never returned.
 *
 * $SCIF_STRESS_PAIRS (default 264) and $SCIF_STRESS_LOAD_S (seconds of
 * load before the victim, default 5) scale it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

#include "scif.h"
#include "kselftest_harness.h"
#define SCIF_TEST_WITH_LIBSCIF
#include "scif_test_util.h"

#define LEN		(512 * 1024L)	/* > 256 KiB: the worker's; one descriptor */
#define ROFF		0x100000L	/* the server's window */
#define QUEUED_PARAM	"/sys/module/scif/parameters/rma_max_queued"
#define EP_QUEUE	64		/* SCIF_RMA_MAX_QUEUED */
#define NPAIRS		264
#define BOUND_S		60		/* any one step */
#define CLOSE_ALL_S	120		/* closing the loaded pairs */
#define WATCHDOG_S	90		/* the whole victim and stop phase */

struct feeder {
	struct conn cn;
	uint8_t *lbuf, *rbuf;
	pthread_t th;
	long calls;
	int err;			/* first errno, or 0 */
	atomic_int done;
};

static atomic_int stop_load;
static atomic_int phase_done;
static atomic_int watchdog_fired;
static char max0[32];			/* rma_max_queued before the run */
static long load_s;			/* seconds of load before the victim */
/*
 * The feeders start together, once all are created: a thread created
 * under the load of the others took over a second each on the debug
 * kernel (264 took 320 s), which starved the rest of the test.
 */
static pthread_barrier_t start_line;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint8_t *map_mem(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static long env_long(const char *name, long def)
{
	const char *s = getenv(name);

	return s && *s ? atol(s) : def;
}

/*
 * A pair, through listener @lfd on @port, whose server has a window at
 * ROFF over @rbuf; its client writes from @lbuf.  The feeders share one
 * pair of buffers (their bytes are not compared, only the victim's): a
 * buffer each made the step take over 8 minutes on the debug kernel,
 * mostly faulting in and filling 528 MiB under KASAN.
 */
static int feeder_open(struct feeder *f, int lfd, uint16_t port,
		       uint8_t *lbuf, uint8_t *rbuf, long len)
{
	memset(f, 0, sizeof(*f));
	f->cn.client = f->cn.server = -1;
	if (connect_fd_to(-1, lfd, port, &f->cn))
		return -1;
	f->lbuf = lbuf;
	f->rbuf = rbuf;
	if (scif_register(f->cn.server, f->rbuf, len, ROFF,
			  SCIF_PROT_READ | SCIF_PROT_WRITE,
			  SCIF_MAP_FIXED) != ROFF)
		return -1;
	return 0;
}

/* Close both ends; the buffers are the caller's. */
static void feeder_close(struct feeder *f)
{
	if (f->cn.client >= 0)
		close(f->cn.client);
	if (f->cn.server >= 0)
		close(f->cn.server);
	f->cn.client = f->cn.server = -1;
}

static void *feeder_fn(void *arg)
{
	struct feeder *f = arg;

	pthread_barrier_wait(&start_line);
	while (!atomic_load(&stop_load)) {
		if (scif_vwriteto(f->cn.client, f->lbuf, LEN, ROFF, 0)) {
			f->err = errno;
			break;
		}
		f->calls++;
	}
	atomic_store(&f->done, 1);
	return NULL;
}

/*
 * The stacks of this process's threads in D state, to stderr, but for
 * the feeders waiting for room in their queue (expected).  Not sysrq w:
 * the hundreds of feeders' stacks take minutes on a serial console.
 */
static void dump_blocked(void)
{
	char path[600], buf[4096], stat[1024], self[16];
	struct dirent *pe, *te;
	DIR *pd, *td;

	snprintf(self, sizeof(self), "%d", getpid());
	pd = opendir("/proc");
	while (pd && (pe = readdir(pd))) {
		if (strcmp(pe->d_name, self))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", pe->d_name);
		td = opendir(path);
		while (td && (te = readdir(td))) {
			char *st;

			if (te->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/task/%s/stat",
				 pe->d_name, te->d_name);
			if (read_file(path, stat, sizeof(stat)))
				continue;
			st = strrchr(stat, ')');
			if (!st || st[2] != 'D')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/task/%s/stack",
				 pe->d_name, te->d_name);
			if (read_file(path, buf, sizeof(buf)) ||
			    strstr(buf, "scif_rma_desc_queue"))
				continue;
			fprintf(stderr, "# D: task %s:\n%s", te->d_name, buf);
		}
		if (td)
			closedir(td);
	}
	if (pd)
		closedir(pd);
}

static void *watchdog_fn(void *arg)
{
	double end = now_s() + load_s + WATCHDOG_S;

	(void)arg;
	while (!atomic_load(&phase_done) && now_s() < end)
		usleep(100000);
	if (atomic_load(&phase_done))
		return NULL;
	fprintf(stderr, "# watchdog: still blocked after %d s; stacks:\n",
		WATCHDOG_S);
	atomic_store(&watchdog_fired, 1);
	dump_blocked();
	/* If the load is all that holds things up, they finish now. */
	atomic_store(&stop_load, 1);
	return NULL;
}

/* Run @what, which returns 0 or -1 with errno; its time in @secs. */
#define TIMED(secs, what) ({				\
	double _t0 = now_s();				\
	int _r = (what);				\
	(secs) = now_s() - _t0;				\
	_r;						\
})

FIXTURE(stress) {
	int unused;
};

FIXTURE_SETUP(stress)
{
}

FIXTURE_TEARDOWN(stress)
{
	if (max0[0])
		write_file(QUEUED_PARAM, max0);
}

TEST_F_TIMEOUT(stress, many_pairs_victim_finishes_in_bounded_time, 600)
{
	long npairs = env_long("SCIF_STRESS_PAIRS", NPAIRS);
	double t_async, t_sync, t_async2, t_cclose, t_sclose, t_stop, t0;
	struct feeder *fs, v;
	uint8_t *lbuf, *rbuf, *vl, *vr;
	char max[32];
	pthread_t wd;
	uint16_t port;
	int lfd;
	long i, calls = 0;
	int r;

	if (remote_mode())
		SKIP(return, "both ends must be on this node");
	load_s = env_long("SCIF_STRESS_LOAD_S", 5);
	ASSERT_EQ(0, read_file(QUEUED_PARAM, max0, sizeof(max0)));
	max0[strcspn(max0, "\n")] = '\0';
	snprintf(max, sizeof(max), "%ld", (npairs + 1) * EP_QUEUE);
	ASSERT_EQ(0, write_file(QUEUED_PARAM, max));
	fs = calloc(npairs, sizeof(*fs));
	ASSERT_NE(NULL, fs);
	lbuf = map_mem(LEN);
	rbuf = map_mem(LEN);
	vl = map_mem(3 * LEN);
	vr = map_mem(3 * LEN);
	ASSERT_TRUE(lbuf && rbuf && vl && vr);
	fill_pattern(lbuf, LEN, 7);
	lfd = peer_listener(0, 16, &port);
	ASSERT_LE(0, lfd);
	t0 = now_s();
	for (i = 0; i < npairs; i++)
		ASSERT_EQ(0, feeder_open(&fs[i], lfd, port, lbuf, rbuf, LEN))
			TH_LOG("pair %ld: %s", i, strerror(errno));
	ASSERT_EQ(0, feeder_open(&v, lfd, port, vl, vr, 3 * LEN));
	TH_LOG("%ld pairs set up in %.2f s", npairs + 1, now_s() - t0);
	ep_close(lfd);
	fill_pattern(v.lbuf, 3 * LEN, 3);
	ASSERT_EQ(0, pthread_barrier_init(&start_line, NULL, npairs + 1));
	for (i = 0; i < npairs; i++)
		ASSERT_EQ(0, pthread_create(&fs[i].th, NULL, feeder_fn,
					    &fs[i]));
	ASSERT_EQ(0, pthread_create(&wd, NULL, watchdog_fn, NULL));
	pthread_barrier_wait(&start_line);
	sleep(load_s);

	/* The victim, while the others keep going. */
	r = TIMED(t_async, scif_vwriteto(v.cn.client, v.lbuf, LEN, ROFF, 0));
	EXPECT_EQ(0, r) TH_LOG("async: %s", strerror(errno));
	r = TIMED(t_sync, scif_vwriteto(v.cn.client, v.lbuf + LEN, LEN,
					ROFF + LEN, SCIF_RMA_SYNC));
	EXPECT_EQ(0, r) TH_LOG("sync: %s", strerror(errno));
	/* Both were copied whole (in order: the sync one after the other). */
	EXPECT_EQ(0, memcmp(v.rbuf, v.lbuf, 2 * LEN));
	/* One more left to the worker: the close waits for it. */
	r = TIMED(t_async2, scif_vwriteto(v.cn.client, v.lbuf + 2 * LEN, LEN,
					  ROFF + 2 * LEN, 0));
	EXPECT_EQ(0, r) TH_LOG("async: %s", strerror(errno));
	r = TIMED(t_cclose, close(v.cn.client));
	EXPECT_EQ(0, r) TH_LOG("close client: %s", strerror(errno));
	v.cn.client = -1;
	r = TIMED(t_sclose, close(v.cn.server));
	EXPECT_EQ(0, r) TH_LOG("close server: %s", strerror(errno));
	v.cn.server = -1;
	EXPECT_EQ(0, memcmp(v.rbuf, v.lbuf, 3 * LEN));

	/* Then the load stops: every feeder returns. */
	t0 = now_s();
	atomic_store(&stop_load, 1);
	for (i = 0; i < npairs; i++)
		pthread_join(fs[i].th, NULL);
	pthread_barrier_destroy(&start_line);
	t_stop = now_s() - t0;
	atomic_store(&phase_done, 1);
	pthread_join(wd, NULL);
	TH_LOG("async %.2f s, sync %.2f s, async %.2f s, close %.2f + %.2f s, stop %.2f s",
	       t_async, t_sync, t_async2, t_cclose, t_sclose, t_stop);
	EXPECT_EQ(0, atomic_load(&watchdog_fired));
	EXPECT_GT(BOUND_S, t_async);
	EXPECT_GT(BOUND_S, t_sync);
	EXPECT_GT(BOUND_S, t_async2);
	EXPECT_GT(BOUND_S, t_cclose);
	EXPECT_GT(BOUND_S, t_sclose);
	EXPECT_GT(BOUND_S, t_stop);
	for (i = 0; i < npairs; i++) {
		EXPECT_EQ(0, fs[i].err)
			TH_LOG("pair %ld: %s", i, strerror(fs[i].err));
		calls += fs[i].calls;
	}
	TH_LOG("%ld pairs, %ld RMAs", npairs, calls);

	/* Every pair closes in bounded time too. */
	t0 = now_s();
	for (i = 0; i < npairs; i++)
		feeder_close(&fs[i]);
	TH_LOG("closed the pairs in %.2f s", now_s() - t0);
	EXPECT_GT(CLOSE_ALL_S, now_s() - t0);
	EXPECT_EQ(0, rma_stat_settles_at("queued", 0));
	EXPECT_EQ(0, write_file(QUEUED_PARAM, max0));
	max0[0] = '\0';
	feeder_close(&v);
	munmap(lbuf, LEN);
	munmap(rbuf, LEN);
	munmap(vl, 3 * LEN);
	munmap(vr, 3 * LEN);
	free(fs);
}

TEST_HARNESS_MAIN
