// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF registered windows and pinning:
 *  - a window registered over memory not touched yet, filled afterwards,
 *    carries the bytes written (not the zero page or a stale page cache
 *    page), for every kind of memory: anonymous (posix_memalign, mmap),
 *    shared anonymous, file MAP_SHARED and MAP_PRIVATE, hugetlb, THP,
 *    read-only mappings, and the registration cache (SCIF_RMA_USECACHE);
 *  - huge lengths are refused before anything is allocated for them
 *    (EFAULT, EAGAIN under RLIMIT_MEMLOCK as an unprivileged user, ENXIO
 *    for mmap), with no kernel warning;
 *  - the peer's budgets for remote windows and runs (module parameters)
 *    refuse a window with EAGAIN, and give the budget back;
 *  - a silent peer (test hook drop_rma_msgs, test build only) ends
 *    scif_register() and scif_unregister() with ENODEV after
 *    rma_ack_timeout_ms and leaves nothing pinned.  These two tests mark
 *    the node failed, so they run only when $SCIF_REG_SILENT names them
 *    (the step list reloads the module around them).
 *
 * Both ends of each connection are in this process (the local node, or
 * $SCIF_PEER_NODE).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <linux/scif_ioctl.h>

#include "scif.h"
#include "kselftest_harness.h"
#define SCIF_TEST_WITH_LIBSCIF
#include "scif_test_util.h"

#define DROP_HOOK	"/sys/kernel/debug/scif/drop_rma_msgs"
#define PARAMS		"/sys/module/scif/parameters/"
#define TAINTED		"/proc/sys/kernel/tainted"
#define TAINT_WARN	(1L << 9)
#define PG		4096L
#define MB		(1024 * 1024L)
#define HUGE_LEN	((1UL << 44) - PG)	/* the largest window: 2^32-1 pages */

/* The silent-peer runs (see the top) run nothing else. */
#define NOT_SILENT() do {						\
	if (getenv("SCIF_REG_SILENT"))					\
		SKIP(return, "a silent-peer run");			\
} while (0)

static long read_long(const char *path)
{
	char buf[64];

	return read_file(path, buf, sizeof(buf)) ? -1 : atol(buf);
}

static int set_param(const char *name, long val)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), PARAMS "%s", name);
	snprintf(buf, sizeof(buf), "%ld", val);
	return write_file(path, buf);
}

static long get_param(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), PARAMS "%s", name);
	return read_long(path);
}

/*
 * The heart of the zero page tests: register @len bytes at @src (not
 * touched yet) read-only on the client, then let @fill write them, then
 * check that scif_writeto() from that window and scif_readfrom() by the
 * server both carry what was written.
 */
static void reg_fill_rma(struct __test_metadata *_metadata, void *src,
			 size_t len, void (*fill)(void *, size_t, uint32_t))
{
	struct conn cn;
	uint8_t *dst;
	off_t soff, doff;
	long pinned0 = rma_stat("pinned_pages");

	ASSERT_LE(0, pinned0) TH_LOG("no %s", RMA_STATS);
	ASSERT_EQ(0, connect_pair(&cn));
	dst = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, dst);
	memset(dst, 0x5a, len);

	soff = scif_register(cn.client, src, len, 0, SCIF_PROT_READ, 0);
	ASSERT_LE(0, soff) TH_LOG("register src: %s", strerror(errno));
	doff = scif_register(cn.server, dst, len, 0,
			     SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	ASSERT_LE(0, doff) TH_LOG("register dst: %s", strerror(errno));

	fill(src, len, 7);
	ASSERT_EQ(-1, check_pattern(src, len, 7));

	ASSERT_EQ(0, scif_writeto(cn.client, soff, len, doff, SCIF_RMA_SYNC))
		TH_LOG("writeto: %s", strerror(errno));
	EXPECT_EQ(-1, check_pattern(dst, len, 7))
		TH_LOG("writeto carried other bytes (first byte %#x)", dst[0]);

	memset(dst, 0x5a, len);
	ASSERT_EQ(0, scif_readfrom(cn.server, doff, len, soff, SCIF_RMA_SYNC))
		TH_LOG("readfrom: %s", strerror(errno));
	EXPECT_EQ(-1, check_pattern(dst, len, 7))
		TH_LOG("readfrom carried other bytes (first byte %#x)", dst[0]);

	EXPECT_EQ(0, scif_unregister(cn.client, soff, len));
	EXPECT_EQ(0, scif_unregister(cn.server, doff, len));
	close(cn.client);
	close(cn.server);
	munmap(dst, len);
	EXPECT_EQ(pinned0, pinned_settles_at(pinned0));
}

TEST(zero_page_posix_memalign)
{
	void *p;

	NOT_SILENT();
	ASSERT_EQ(0, posix_memalign(&p, PG, MB));
	reg_fill_rma(_metadata, p, MB, fill_pattern);
	free(p);
}

TEST(zero_page_anon_mmap)
{
	void *p = mmap(NULL, MB, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	NOT_SILENT();
	ASSERT_NE(MAP_FAILED, p);
	reg_fill_rma(_metadata, p, MB, fill_pattern);
	munmap(p, MB);
}

TEST(zero_page_shared_anon)
{
	void *p = mmap(NULL, MB, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	NOT_SILENT();
	ASSERT_NE(MAP_FAILED, p);
	reg_fill_rma(_metadata, p, MB, fill_pattern);
	munmap(p, MB);
}

/* A file of @len bytes not written yet (a hole), mapped with @flags. */
static void *map_file(size_t len, int prot, int flags, int open_flags)
{
	char path[] = "/tmp/scif_reg_XXXXXX";
	int fd = mkstemp(path);
	void *p;

	if (fd < 0)
		return MAP_FAILED;
	if (ftruncate(fd, len)) {
		close(fd);
		unlink(path);
		return MAP_FAILED;
	}
	if (open_flags != O_RDWR) {
		close(fd);
		fd = open(path, open_flags);
	}
	p = mmap(NULL, len, prot, flags, fd, 0);
	close(fd);
	unlink(path);
	return p;
}

TEST(zero_page_file_shared)
{
	void *p = map_file(MB, PROT_READ | PROT_WRITE, MAP_SHARED, O_RDWR);

	NOT_SILENT();
	ASSERT_NE(MAP_FAILED, p);
	reg_fill_rma(_metadata, p, MB, fill_pattern);
	munmap(p, MB);
}

TEST(zero_page_file_private)
{
	void *p = map_file(MB, PROT_READ | PROT_WRITE, MAP_PRIVATE, O_RDWR);

	NOT_SILENT();
	ASSERT_NE(MAP_FAILED, p);
	reg_fill_rma(_metadata, p, MB, fill_pattern);
	munmap(p, MB);
}

/* The file's own pages change under a MAP_SHARED read-only window too. */
static int file_fd = -1;

static void fill_through_fd(void *buf, size_t len, uint32_t seed)
{
	uint8_t *tmp = malloc(len);

	fill_pattern(tmp, len, seed);
	if (pwrite(file_fd, tmp, len, 0) != (ssize_t)len)
		memset(buf, 0, len);
	free(tmp);
}

TEST(zero_page_file_shared_readonly_mapping)
{
	char path[] = "/tmp/scif_reg_XXXXXX";
	void *p;

	NOT_SILENT();
	file_fd = mkstemp(path);
	ASSERT_LE(0, file_fd);
	unlink(path);
	ASSERT_EQ(0, ftruncate(file_fd, MB));
	p = mmap(NULL, MB, PROT_READ, MAP_SHARED, file_fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	reg_fill_rma(_metadata, p, MB, fill_through_fd);
	munmap(p, MB);
	close(file_fd);
}

TEST(readonly_private_mapping_registers)
{
	/* Not writable by anyone: pinned read-only, reads as zeros. */
	uint8_t *p = mmap(NULL, MB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	uint8_t *dst = mmap(NULL, MB, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct conn cn;
	off_t soff, doff;
	long i, bad = 0;

	NOT_SILENT();
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_NE(MAP_FAILED, dst);
	memset(dst, 0x5a, MB);
	ASSERT_EQ(0, connect_pair(&cn));
	soff = scif_register(cn.client, p, MB, 0, SCIF_PROT_READ, 0);
	ASSERT_LE(0, soff) TH_LOG("register: %s", strerror(errno));
	EXPECT_ERRNO(EFAULT, scif_register(cn.client, p, MB, 0,
					   SCIF_PROT_READ | SCIF_PROT_WRITE, 0));
	doff = scif_register(cn.server, dst, MB, 0,
			     SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	ASSERT_LE(0, doff);
	ASSERT_EQ(0, scif_writeto(cn.client, soff, MB, doff, SCIF_RMA_SYNC));
	for (i = 0; i < MB; i++)
		bad += dst[i] != 0;
	EXPECT_EQ(0, bad);
	close(cn.client);
	close(cn.server);
	munmap(p, MB);
	munmap(dst, MB);
}

TEST(zero_page_hugetlb)
{
	long old = read_long("/proc/sys/vm/nr_hugepages");
	char buf[32];
	void *p;

	NOT_SILENT();
	if (old < 0)
		SKIP(return, "no hugetlb");
	snprintf(buf, sizeof(buf), "%ld", old + 2);
	write_file("/proc/sys/vm/nr_hugepages", buf);
	p = mmap(NULL, 2 * MB, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (p == MAP_FAILED) {
		snprintf(buf, sizeof(buf), "%ld", old);
		write_file("/proc/sys/vm/nr_hugepages", buf);
		SKIP(return, "no huge page: %s", strerror(errno));
	}
	reg_fill_rma(_metadata, p, 2 * MB, fill_pattern);
	munmap(p, 2 * MB);
	snprintf(buf, sizeof(buf), "%ld", old);
	write_file("/proc/sys/vm/nr_hugepages", buf);
}

TEST(zero_page_hugetlb_shared)
{
	long old = read_long("/proc/sys/vm/nr_hugepages");
	char buf[32];
	void *p;

	NOT_SILENT();
	if (old < 0)
		SKIP(return, "no hugetlb");
	snprintf(buf, sizeof(buf), "%ld", old + 2);
	write_file("/proc/sys/vm/nr_hugepages", buf);
	p = mmap(NULL, 2 * MB, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (p == MAP_FAILED) {
		snprintf(buf, sizeof(buf), "%ld", old);
		write_file("/proc/sys/vm/nr_hugepages", buf);
		SKIP(return, "no huge page: %s", strerror(errno));
	}
	reg_fill_rma(_metadata, p, 2 * MB, fill_pattern);
	munmap(p, 2 * MB);
	snprintf(buf, sizeof(buf), "%ld", old);
	write_file("/proc/sys/vm/nr_hugepages", buf);
}

TEST(zero_page_thp)
{
	/* A 2 MiB aligned anonymous range: a read fault maps the huge zero page. */
	uint8_t *raw = mmap(NULL, 4 * MB, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *p;

	NOT_SILENT();
	ASSERT_NE(MAP_FAILED, raw);
	p = (uint8_t *)(((uintptr_t)raw + 2 * MB - 1) & ~(2 * MB - 1));
	madvise(p, 2 * MB, MADV_HUGEPAGE);
	reg_fill_rma(_metadata, p, 2 * MB, fill_pattern);
	munmap(raw, 4 * MB);
}

TEST(zero_page_thp_read_first)
{
	/* Read first (huge zero page mapped), then register, then fill. */
	uint8_t *raw = mmap(NULL, 4 * MB, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	volatile uint8_t *v;
	uint8_t *p;
	long i, sum = 0;

	NOT_SILENT();
	ASSERT_NE(MAP_FAILED, raw);
	p = (uint8_t *)(((uintptr_t)raw + 2 * MB - 1) & ~(2 * MB - 1));
	madvise(p, 2 * MB, MADV_HUGEPAGE);
	v = p;
	for (i = 0; i < 2 * MB; i += PG)
		sum += v[i];
	ASSERT_EQ(0, sum);
	reg_fill_rma(_metadata, p, 2 * MB, fill_pattern);
	munmap(raw, 4 * MB);
}

TEST(zero_page_registration_cache)
{
	/*
	 * vwriteto with SCIF_RMA_USECACHE from a buffer not touched yet, then
	 * filled, then sent again: the cached pages must be the filled ones.
	 */
	uint8_t *src = mmap(NULL, MB, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *dst = mmap(NULL, MB, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	long cached0 = rma_stat("cache_pinned_pages");
	struct conn cn;
	off_t doff;
	long i, bad = 0;

	NOT_SILENT();
	ASSERT_NE(MAP_FAILED, src);
	ASSERT_NE(MAP_FAILED, dst);
	ASSERT_EQ(0, connect_pair(&cn));
	doff = scif_register(cn.server, dst, MB, 0,
			     SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	ASSERT_LE(0, doff);
	memset(dst, 0x5a, MB);
	ASSERT_EQ(0, scif_vwriteto(cn.client, src, MB, doff,
				   SCIF_RMA_USECACHE | SCIF_RMA_SYNC));
	for (i = 0; i < MB; i++)
		bad += dst[i] != 0;
	EXPECT_EQ(0, bad);
	if (cached0 >= 0)
		EXPECT_LE(cached0 + MB / PG, rma_stat("cache_pinned_pages"));
	fill_pattern(src, MB, 9);
	ASSERT_EQ(0, scif_vwriteto(cn.client, src, MB, doff,
				   SCIF_RMA_USECACHE | SCIF_RMA_SYNC));
	EXPECT_EQ(-1, check_pattern(dst, MB, 9));
	/* And the same with a buffer the cache keeps read-only pinned. */
	fill_pattern(src, MB, 10);
	ASSERT_EQ(0, scif_vwriteto(cn.client, src, MB, doff,
				   SCIF_RMA_USECACHE | SCIF_RMA_SYNC));
	EXPECT_EQ(-1, check_pattern(dst, MB, 10));
	close(cn.client);
	close(cn.server);
	munmap(src, MB);
	munmap(dst, MB);
}

/* Sizes ------------------------------------------------------------- */

/* An address with @len bytes unmapped after it. */
static void *hole(size_t len)
{
	void *p = mmap(NULL, len, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	munmap(p, len);
	return p;
}

static bool warned(void)
{
	return read_long(TAINTED) & TAINT_WARN;
}

TEST(huge_register_unmapped_efault)
{
	bool warned0 = warned();
	struct conn cn;
	void *p = hole(HUGE_LEN);

	NOT_SILENT();
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, connect_pair(&cn));
	EXPECT_ERRNO(EFAULT, scif_register(cn.client, p, HUGE_LEN, 0,
					   SCIF_PROT_READ, 0));
	EXPECT_ERRNO(EFAULT, scif_register(cn.client, p, HUGE_LEN, 0,
					   SCIF_PROT_READ | SCIF_PROT_WRITE, 0));
	/* Mapped, but not readable: refused before the page array too. */
	p = mmap(p, HUGE_LEN, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_ERRNO(EFAULT, scif_register(cn.client, p, HUGE_LEN, 0,
					   SCIF_PROT_READ, 0));
	munmap(p, HUGE_LEN);
	/* A hole in the middle of a range. */
	p = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	munmap((char *)p + PG, PG);
	EXPECT_ERRNO(EFAULT, scif_register(cn.client, p, 3 * PG, 0,
					   SCIF_PROT_READ, 0));
	munmap(p, 3 * PG);
	close(cn.client);
	close(cn.server);
	if (!warned0)
		EXPECT_FALSE(warned()) TH_LOG("the kernel warned");
}

TEST(huge_register_unprivileged_eagain)
{
	bool warned0 = warned();
	struct conn cn;
	void *p = hole(HUGE_LEN), *small;
	int status;
	pid_t pid;

	NOT_SILENT();
	ASSERT_NE(NULL, p);
	small = mmap(NULL, 32 * PG, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, small);
	ASSERT_EQ(0, connect_pair(&cn));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct rlimit rl = { 16 * PG, 16 * PG };
		off_t off;

		if (setrlimit(RLIMIT_MEMLOCK, &rl) ||
		    setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(10);
		errno = 0;
		if (scif_register(cn.client, p, HUGE_LEN, 0,
				  SCIF_PROT_READ, 0) != -1 || errno != EAGAIN)
			_exit(11);
		if (scif_register(cn.client, small, 32 * PG, 0,
				  SCIF_PROT_READ, 0) != -1 || errno != EAGAIN)
			_exit(12);
		off = scif_register(cn.client, small, 8 * PG, 0,
				    SCIF_PROT_READ, 0);
		if (off < 0)
			_exit(13);
		if (scif_unregister(cn.client, off, 8 * PG))
			_exit(14);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(cn.client);
	close(cn.server);
	munmap(small, 32 * PG);
	if (!warned0)
		EXPECT_FALSE(warned()) TH_LOG("the kernel warned");
}

TEST(huge_mmap_enxio)
{
	bool warned0 = warned();
	struct conn cn;
	void *p;

	NOT_SILENT();
	ASSERT_EQ(0, connect_pair(&cn));
	p = mmap(NULL, HUGE_LEN, PROT_READ, MAP_SHARED, cn.client, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(ENXIO, errno);
	close(cn.client);
	close(cn.server);
	if (!warned0)
		EXPECT_FALSE(warned()) TH_LOG("the kernel warned");
}

/* Budgets for the peer's windows ----------------------------------- */

static const char *const budget_params[] = {
	"max_remote_windows_per_ep", "max_remote_runs_per_ep",
	"max_remote_windows_per_node", "max_remote_runs_per_node",
	"max_remote_user_share",
};
#define NR_BUDGET	ARRAY_SIZE(budget_params)

FIXTURE(budget) {
	long saved[NR_BUDGET];
	struct conn a, b;
	uint8_t *buf;
	long pinned0;
};

FIXTURE_SETUP(budget)
{
	int i;

	self->a.client = self->a.server = -1;
	self->b.client = self->b.server = -1;
	self->buf = MAP_FAILED;
	if (getenv("SCIF_REG_SILENT"))
		return;		/* the test skips */
	for (i = 0; i < NR_BUDGET; i++) {
		self->saved[i] = get_param(budget_params[i]);
		ASSERT_LT(0, self->saved[i]) TH_LOG("no %s", budget_params[i]);
	}
	/* The budgets below, not the user's share (scif_limits_test's). */
	ASSERT_EQ(0, set_param("max_remote_user_share", 100));
	self->pinned0 = rma_stat("pinned_pages");
	ASSERT_EQ(0, connect_pair(&self->a));
	ASSERT_EQ(0, connect_pair(&self->b));
	self->buf = mmap(NULL, 16 * PG, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
}

FIXTURE_TEARDOWN(budget)
{
	int i;

	if (self->buf == MAP_FAILED)
		return;
	close(self->a.client);
	close(self->a.server);
	close(self->b.client);
	close(self->b.server);
	for (i = 0; i < NR_BUDGET; i++)
		set_param(budget_params[i], self->saved[i]);
	munmap(self->buf, 16 * PG);
	EXPECT_EQ(self->pinned0, pinned_settles_at(self->pinned0));
}

static off_t reg1(int fd, void *p)
{
	return scif_register(fd, p, PG, 0, SCIF_PROT_READ, 0);
}

TEST_F(budget, windows_per_ep)
{
	off_t o[3];

	NOT_SILENT();
	ASSERT_EQ(0, set_param("max_remote_windows_per_ep", 2));
	o[0] = reg1(self->a.client, self->buf);
	o[1] = reg1(self->a.client, self->buf + PG);
	ASSERT_LE(0, o[0]);
	ASSERT_LE(0, o[1]);
	EXPECT_ERRNO(EAGAIN, reg1(self->a.client, self->buf + 2 * PG));
	/* Another endpoint has its own budget. */
	o[2] = reg1(self->b.client, self->buf + 2 * PG);
	EXPECT_LE(0, o[2]);
	/* Given back when a window goes. */
	ASSERT_EQ(0, scif_unregister(self->a.client, o[0], PG));
	o[0] = reg1(self->a.client, self->buf + 3 * PG);
	EXPECT_LE(0, o[0]) TH_LOG("register: %s", strerror(errno));
	/* The refused window is not left pinned or placed. */
	EXPECT_EQ(self->pinned0 + 3, rma_stat("pinned_pages"));
}

TEST_F(budget, runs_per_ep)
{
	NOT_SILENT();
	ASSERT_EQ(0, set_param("max_remote_runs_per_ep", 2));
	ASSERT_LE(0, reg1(self->a.client, self->buf));
	ASSERT_LE(0, reg1(self->a.client, self->buf + PG));
	EXPECT_ERRNO(EAGAIN, reg1(self->a.client, self->buf + 2 * PG));
	EXPECT_LE(0, reg1(self->b.client, self->buf + 2 * PG));
}

TEST_F(budget, windows_per_node)
{
	NOT_SILENT();
	ASSERT_EQ(0, set_param("max_remote_windows_per_node", 3));
	ASSERT_LE(0, reg1(self->a.client, self->buf));
	ASSERT_LE(0, reg1(self->a.client, self->buf + PG));
	ASSERT_LE(0, reg1(self->b.client, self->buf + 2 * PG));
	EXPECT_ERRNO(EAGAIN, reg1(self->b.client, self->buf + 3 * PG));
	EXPECT_ERRNO(EAGAIN, reg1(self->a.server, self->buf + 3 * PG));
	/* Given back when a connection goes. */
	close(self->a.client);
	close(self->a.server);
	self->a.client = self->a.server = -1;
	usleep(100000);
	EXPECT_LE(0, reg1(self->b.client, self->buf + 3 * PG))
		TH_LOG("register: %s", strerror(errno));
}

TEST_F(budget, runs_per_node)
{
	NOT_SILENT();
	ASSERT_EQ(0, set_param("max_remote_runs_per_node", 2));
	ASSERT_LE(0, reg1(self->a.client, self->buf));
	ASSERT_LE(0, reg1(self->b.client, self->buf + PG));
	EXPECT_ERRNO(EAGAIN, reg1(self->b.server, self->buf + 2 * PG));
}

/* Memory cgroups ---------------------------------------------------- */

#define CG_ROOT		"/sys/fs/cgroup"
#define CG_WINDOWS	4000

/* A fresh cgroup v2 group with the memory controller, in @dir; 0 or -1. */
static int cg_make(char *dir, size_t len)
{
	char buf[256];

	if (access(CG_ROOT "/cgroup.controllers", R_OK) &&
	    mount("none", CG_ROOT, "cgroup2", 0, NULL))
		return -1;
	if (read_file(CG_ROOT "/cgroup.controllers", buf, sizeof(buf)) ||
	    !strstr(buf, "memory"))
		return -1;
	write_file(CG_ROOT "/cgroup.subtree_control", "+memory");
	snprintf(dir, len, CG_ROOT "/scif_reg_%d", getpid());
	return mkdir(dir, 0755);
}

static int cg_enter(const char *dir)
{
	char path[300], pid[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(pid, sizeof(pid), "%d", getpid());
	return write_file(path, pid);
}

static long cg_current(const char *dir)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/memory.current", dir);
	return read_long(path);
}

/*
 * Issue 31, item 6: what the peer's REGISTER makes this node allocate for
 * an endpoint (the remote window, its run array, the reply reserved for
 * its release) is allocated by the receive work, a kernel thread; it is
 * charged to the memory cgroup of the endpoint's opener.  The server end
 * is opened inside a group, the process leaves it, and the client
 * registers CG_WINDOWS one-page windows: the group's memory.current must
 * grow by what they cost (about 400 bytes each), though nothing of the
 * group runs.  Before, they were charged to no one's group (the run
 * array not at all, the rest to the kernel thread's).
 */
TEST(remote_windows_charged_to_owner_cgroup)
{
	uint8_t *buf = mmap(NULL, CG_WINDOWS * PG, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	long before, after, pinned0 = rma_stat("pinned_pages");
	struct conn cn;
	char dir[200];
	int i;

	NOT_SILENT();
	ASSERT_NE(MAP_FAILED, buf);
	if (cg_make(dir, sizeof(dir)))
		SKIP(munmap(buf, CG_WINDOWS * PG); return,
		     "no cgroup v2 memory controller");
	ASSERT_EQ(0, cg_enter(dir));
	ASSERT_EQ(0, connect_pair(&cn));
	ASSERT_EQ(0, cg_enter(CG_ROOT));
	usleep(200000);
	before = cg_current(dir);
	for (i = 0; i < CG_WINDOWS; i++)
		ASSERT_LE(0, scif_register(cn.client, buf + i * PG, PG, 0,
					   SCIF_PROT_READ, 0))
			TH_LOG("window %d: %s", i, strerror(errno));
	after = cg_current(dir);
	TH_LOG("group's memory.current: %ld -> %ld", before, after);
	EXPECT_LE(before + CG_WINDOWS * 128L, after);
	close(cn.client);
	close(cn.server);
	munmap(buf, CG_WINDOWS * PG);
	/* The windows go in the background: wait for them (30 s). */
	for (i = 0; i < 6 && pinned_settles_at(pinned0) != pinned0; i++)
		;
	EXPECT_EQ(pinned0, rma_stat("pinned_pages"));
	/* Everything given back: the group can go. */
	for (i = 0; i < 100 && rmdir(dir); i++)
		usleep(50000);
	EXPECT_EQ(0, access(dir, F_OK) ? 0 : -1);
}

/* A silent peer ----------------------------------------------------- */

/* Whether $SCIF_REG_SILENT names @what. */
static bool silent_run(const char *what)
{
	const char *e = getenv("SCIF_REG_SILENT");

	return e && !strcmp(e, what);
}

TEST(silent_peer_register_enodev)
{
	long t0, ms, pinned0 = rma_stat("pinned_pages");
	struct conn cn;
	uint8_t *p;

	if (!silent_run("register"))
		SKIP(return, "marks the node failed: run with SCIF_REG_SILENT=register");
	if (access(DROP_HOOK, W_OK))
		SKIP(return, "no %s (not the test build)", DROP_HOOK);
	p = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, connect_pair(&cn));
	ASSERT_EQ(0, set_param("rma_ack_timeout_ms", 1000));
	ASSERT_EQ(0, write_file(DROP_HOOK, "1"));
	t0 = now_ms();
	EXPECT_ERRNO(ENODEV, scif_register(cn.client, p, 4 * PG, 0,
					   SCIF_PROT_READ, 0));
	ms = now_ms() - t0;
	EXPECT_LE(900, ms);
	EXPECT_GE(5000, ms);
	/* The node is failed: the connection is reset (no message sent). */
	for (t0 = now_ms(); now_ms() - t0 < WAIT_MS; usleep(10000))
		if (scif_unregister(cn.client, 0, PG) < 0 && errno == ENODEV)
			break;
	EXPECT_ERRNO(ENODEV, scif_unregister(cn.client, 0, PG));
	EXPECT_ERRNO(ENODEV, scif_register(cn.client, p, PG, 0,
					   SCIF_PROT_READ, 0));
	close(cn.client);
	close(cn.server);
	/*
	 * A node failed for breaking the protocol may still write into our
	 * windows: they stay pinned until the bus reports it down (for the
	 * loopback node, at rmmod), neither more nor less.
	 */
	usleep(200000);
	EXPECT_EQ(pinned0 + 4, rma_stat("pinned_pages"));
	write_file(DROP_HOOK, "0");
	munmap(p, 4 * PG);
}

TEST(silent_peer_unregister_enodev)
{
	long t0, ms, pinned0 = rma_stat("pinned_pages");
	struct conn cn;
	uint8_t *p;
	off_t off;

	if (!silent_run("unregister"))
		SKIP(return, "marks the node failed: run with SCIF_REG_SILENT=unregister");
	if (access(DROP_HOOK, W_OK))
		SKIP(return, "no %s (not the test build)", DROP_HOOK);
	p = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, connect_pair(&cn));
	off = scif_register(cn.client, p, 4 * PG, 0, SCIF_PROT_READ, 0);
	ASSERT_LE(0, off);
	ASSERT_EQ(pinned0 + 4, rma_stat("pinned_pages"));
	ASSERT_EQ(0, set_param("rma_ack_timeout_ms", 1000));
	ASSERT_EQ(0, write_file(DROP_HOOK, "1"));
	t0 = now_ms();
	EXPECT_ERRNO(ENODEV, scif_unregister(cn.client, off, 4 * PG));
	ms = now_ms() - t0;
	EXPECT_LE(900, ms);
	EXPECT_GE(5000, ms);
	/* The node is failed: the connection is reset. */
	for (t0 = now_ms(); now_ms() - t0 < WAIT_MS; usleep(10000))
		if (scif_unregister(cn.client, off, 4 * PG) < 0 &&
		    errno == ENODEV)
			break;
	EXPECT_ERRNO(ENODEV, scif_unregister(cn.client, off, 4 * PG));
	close(cn.client);
	close(cn.server);
	/* Kept for the failed node until it is down (see above). */
	usleep(200000);
	EXPECT_EQ(pinned0 + 4, rma_stat("pinned_pages"));
	write_file(DROP_HOOK, "0");
	munmap(p, 4 * PG);
}

TEST_HARNESS_MAIN
