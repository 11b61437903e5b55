// SPDX-License-Identifier: GPL-2.0
/*
 * scif_mmap_vma(), the mappings of kernel clients (Documentation/scif/
 * mmap.rst), through the test client scif_kmap_client.ko, which
 * scif_kmap_test.sh loads: its kernel endpoint connects to this
 * process's listener on the loopback node, and an mmap() of its debugfs
 * files maps the window this process registered on the accepted end.
 *
 * Bytes both ways through the mapping; the status page (0, then 1 once
 * the window is unregistered or the client closes its endpoint, with no
 * SIGBUS after and the window's own bytes untouched); SIGBUS without
 * the status page; the errors (bad flags, no room for the status page,
 * private, no window, a read-only window written, not connected); the
 * mapping counts back to where they were; and a mapping that outlives
 * the client module, which is unloaded under it.
 */
#include <errno.h>
#include <fcntl.h>
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

#define KMAP		"/sys/kernel/debug/scif_kmap_client/"
#define MMAP_STATS	"/sys/kernel/debug/scif/mmap"
#define PG		4096L
#define WIN		(4 * PG)
#define ROFF		0x200000L
#define KMAP_PORT	3110

static int ctl(const char *cmd)
{
	return write_file(KMAP "ctl", cmd) ? -errno : 0;
}

struct dialer {
	char cmd[64];
	int ret;
};

static void *dial_fn(void *arg)
{
	struct dialer *d = arg;

	d->ret = ctl(d->cmd);
	return NULL;
}

/* mmap() of one of the client's files; MAP_FAILED with errno. */
static void *kmap(const char *file, size_t len, int prot, int flags, long off)
{
	int fd = open(file, O_RDWR);
	void *p;

	if (fd < 0)
		return MAP_FAILED;
	p = mmap(NULL, len, prot, flags, fd, off);
	if (p == MAP_FAILED) {
		int e = errno;

		close(fd);
		errno = e;
		return p;
	}
	/* The VMA holds SCIF's file, not this one. */
	close(fd);
	return p;
}

FIXTURE(km) {
	int lep, ep;
	uint8_t *buf;		/* behind the window at ROFF */
	long maps0;
};

FIXTURE_SETUP(km)
{
	struct scif_port_id peer;
	struct dialer d = { .ret = -1 };
	uint16_t self_node = 0;
	pthread_t th;

	self->ep = -1;
	self->lep = -1;
	self->buf = MAP_FAILED;
	self->maps0 = file_stat(MMAP_STATS, "mappings");
	ASSERT_LE(0, self->maps0) TH_LOG("no %s", MMAP_STATS);
	if (access(KMAP "ctl", W_OK))
		SKIP(return, "scif_kmap_client.ko is not loaded");
	ASSERT_LE(0, scif_get_nodeIDs(NULL, 0, &self_node));
	self->lep = scif_open();
	ASSERT_LE(0, self->lep);
	ASSERT_EQ(KMAP_PORT, scif_bind(self->lep, KMAP_PORT));
	ASSERT_EQ(0, scif_listen(self->lep, 1));
	snprintf(d.cmd, sizeof(d.cmd), "connect %u %d", self_node, KMAP_PORT);
	ASSERT_EQ(0, pthread_create(&th, NULL, dial_fn, &d));
	ASSERT_EQ(0, scif_accept(self->lep, &peer, &self->ep, SCIF_ACCEPT_SYNC));
	pthread_join(th, NULL);
	ASSERT_EQ(0, d.ret);
	self->buf = mmap(NULL, WIN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	ASSERT_EQ(ROFF, scif_register(self->ep, self->buf, WIN, ROFF,
				      SCIF_PROT_READ | SCIF_PROT_WRITE,
				      SCIF_MAP_FIXED));
	/* Filled after registering, as programs do. */
	fill_pattern(self->buf, WIN, 11);
}

FIXTURE_TEARDOWN(km)
{
	/* Not loaded any more after mapping_outlives_client_module. */
	if (!access(KMAP "ctl", W_OK))
		ctl("close");
	if (self->ep >= 0)
		scif_close(self->ep);
	if (self->lep >= 0)
		scif_close(self->lep);
	EXPECT_EQ(self->maps0, file_stat_settles_at(MMAP_STATS, "mappings",
					       self->maps0));
	if (self->buf != MAP_FAILED)
		munmap(self->buf, WIN);
}

static const struct scif_mmap_status *status_of(void *map)
{
	return (const struct scif_mmap_status *)((uint8_t *)map + WIN);
}

TEST_F(km, bytes_both_ways_and_status_0)
{
	uint8_t *map, *ref = malloc(WIN);

	ASSERT_NE(NULL, ref);
	map = kmap(KMAP "status", WIN + PG, PROT_READ | PROT_WRITE,
		   MAP_SHARED, ROFF);
	ASSERT_NE(MAP_FAILED, map) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(self->maps0 + 1, file_stat(MMAP_STATS, "mappings"));
	EXPECT_EQ(0, memcmp(map, self->buf, WIN));
	fill_pattern(ref, WIN, 12);
	memcpy(map, ref, WIN);
	EXPECT_EQ(0, memcmp(self->buf, ref, WIN));
	EXPECT_EQ(0, status_of(map)->revoked);
	EXPECT_EQ(0, status_of(map)->reserved);
	EXPECT_EQ(0, munmap(map, WIN + PG));
	free(ref);
}

TEST_F(km, unregister_sets_status_no_sigbus)
{
	volatile uint64_t *map;
	uint8_t *ref = malloc(WIN);

	ASSERT_NE(NULL, ref);
	map = kmap(KMAP "status", WIN + PG, PROT_READ | PROT_WRITE,
		   MAP_SHARED, ROFF);
	ASSERT_NE(MAP_FAILED, (void *)map) TH_LOG("%s", strerror(errno));
	map[0] = 0x1234;
	EXPECT_EQ(0x1234, ((uint64_t *)self->buf)[0]);
	EXPECT_EQ(0, scif_unregister(self->ep, ROFF, WIN));
	EXPECT_EQ(1, status_of((void *)map)->revoked);
	memcpy(ref, self->buf, WIN);
	/* Touched and untouched pages: zeroes to read, writes kept apart. */
	EXPECT_EQ(0, probe(map, false));
	EXPECT_EQ(0, map[0]);
	EXPECT_EQ(0, probe(map + 2 * PG / 8, false));
	EXPECT_EQ(0, map[2 * PG / 8]);
	EXPECT_EQ(0, probe(map + PG / 8, true));
	EXPECT_EQ(0, memcmp(ref, self->buf, WIN));
	EXPECT_EQ(1, status_of((void *)map)->revoked);
	EXPECT_EQ(0, munmap((void *)map, WIN + PG));
	free(ref);
}

TEST_F(km, client_close_sets_status)
{
	volatile uint64_t *map;

	map = kmap(KMAP "status", 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED,
		   ROFF + PG);
	ASSERT_NE(MAP_FAILED, (void *)map) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(((uint64_t *)self->buf)[PG / 8], map[0]);
	EXPECT_EQ(0, ctl("close"));
	EXPECT_EQ(1, ((const struct scif_mmap_status *)(map + PG / 8))->revoked);
	EXPECT_EQ(0, probe(map, true));
	/* The endpoint is gone for the client; the mapping still holds it. */
	EXPECT_EQ(self->maps0 + 1, file_stat(MMAP_STATS, "mappings"));
	EXPECT_EQ(0, munmap((void *)map, 2 * PG));
	EXPECT_EQ(self->maps0, file_stat_settles_at(MMAP_STATS, "mappings",
					       self->maps0));
	/* Not connected any more. */
	EXPECT_EQ(MAP_FAILED, kmap(KMAP "status", 2 * PG, PROT_READ, MAP_SHARED,
				   ROFF));
	EXPECT_EQ(ENOTCONN, errno);
}

TEST_F(km, plain_mapping_sigbus_when_revoked)
{
	volatile uint64_t *map;

	map = kmap(KMAP "plain", WIN, PROT_READ | PROT_WRITE, MAP_SHARED, ROFF);
	ASSERT_NE(MAP_FAILED, (void *)map) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(((uint64_t *)self->buf)[0], map[0]);
	/* The whole length is the range: its last page is the window's. */
	EXPECT_EQ(((uint64_t *)self->buf)[3 * PG / 8], map[3 * PG / 8]);
	EXPECT_EQ(0, scif_unregister(self->ep, ROFF, WIN));
	EXPECT_EQ(SIGBUS, probe(map, false));
	EXPECT_EQ(SIGBUS, probe(map + PG / 8, true));
	EXPECT_EQ(0, munmap((void *)map, WIN));
}

TEST_F(km, errors)
{
	void *p;

	p = kmap(KMAP "badflags", 2 * PG, PROT_READ, MAP_SHARED, ROFF);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* The status page needs a page of the range before it. */
	p = kmap(KMAP "status", PG, PROT_READ, MAP_SHARED, ROFF);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = kmap(KMAP "status", 2 * PG, PROT_READ, MAP_PRIVATE, ROFF);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* Past the window, and no window at all. */
	p = kmap(KMAP "status", WIN + 2 * PG, PROT_READ, MAP_SHARED, ROFF);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(ENXIO, errno);
	p = kmap(KMAP "plain", PG, PROT_READ, MAP_SHARED, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(ENXIO, errno);
	/* A read-only window is not written, nor made writable later. */
	ASSERT_EQ(ROFF + WIN, scif_register(self->ep, self->buf, PG, ROFF + WIN,
					    SCIF_PROT_READ, SCIF_MAP_FIXED));
	p = kmap(KMAP "status", 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED,
		 ROFF + WIN);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	p = kmap(KMAP "status", 2 * PG, PROT_READ, MAP_SHARED, ROFF + WIN);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, mprotect(p, PG, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(0, memcmp(p, self->buf, PG));
	EXPECT_EQ(0, munmap(p, 2 * PG));
	EXPECT_EQ(self->maps0, file_stat_settles_at(MMAP_STATS, "mappings",
					       self->maps0));
}

TEST_F(km, not_inherited_by_fork)
{
	volatile uint64_t *map;
	int status;
	pid_t pid;

	map = kmap(KMAP "status", WIN + PG, PROT_READ | PROT_WRITE,
		   MAP_SHARED, ROFF);
	ASSERT_NE(MAP_FAILED, (void *)map);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(probe(map, false) == SIGSEGV ? 0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(0, munmap((void *)map, WIN + PG));
}

/* An endpoint holds at most 256 live mappings of kernel clients. */
TEST_F(km, live_mappings_capped)
{
	static void *map[257];
	int i, n;

	for (n = 0; n < 257; n++) {
		map[n] = kmap(KMAP "status", 2 * PG, PROT_READ, MAP_SHARED,
			      ROFF);
		if (map[n] == MAP_FAILED)
			break;
	}
	EXPECT_EQ(256, n);
	EXPECT_EQ(ENOMEM, errno);
	for (i = 0; i < n; i++)
		munmap(map[i], 2 * PG);
	/* Room again once they are gone. */
	map[0] = kmap(KMAP "status", 2 * PG, PROT_READ, MAP_SHARED, ROFF);
	ASSERT_NE(MAP_FAILED, map[0]);
	EXPECT_EQ(0, munmap(map[0], 2 * PG));
}

/* Last: unloads the client; the mapping needs nothing of it. */
TEST_F(km, mapping_outlives_client_module)
{
	volatile uint64_t *map;
	int status;

	map = kmap(KMAP "status", WIN + PG, PROT_READ | PROT_WRITE,
		   MAP_SHARED, ROFF);
	ASSERT_NE(MAP_FAILED, (void *)map);
	map[1] = 77;
	EXPECT_EQ(77, ((uint64_t *)self->buf)[1]);
	status = system("rmmod scif_kmap_client");
	ASSERT_EQ(0, status);
	/* Its exit closed the endpoint: revoked, and still no SIGBUS. */
	EXPECT_EQ(1, status_of((void *)map)->revoked);
	EXPECT_EQ(0, probe(map, true));
	EXPECT_EQ(77, ((uint64_t *)self->buf)[1]);
	EXPECT_EQ(0, munmap((void *)map, WIN + PG));
	EXPECT_EQ(self->maps0, file_stat_settles_at(MMAP_STATS, "mappings",
					       self->maps0));
}

TEST_HARNESS_MAIN
