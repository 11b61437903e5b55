// SPDX-License-Identifier: GPL-2.0
/*
 * STAGE_* node messages (RMA through staging buffers, design.rst "Memory
 * the link cannot reach") as a hostile peer sends them, on one node: a
 * connection through this node's loopback bus, the server side of which
 * registers a read-write window and a read-only one; messages in the
 * client's name are forged through the test build's hook
 * <debugfs>/scif/forge.  Lying lengths, offsets past or across the
 * windows, offsets that overflow, a read-only window, a staging buffer
 * the bus does not reach, a sender that is not the peer and an endpoint
 * that does not exist are all refused without a byte written; answers
 * to no request are ignored.  Two valid requests (a user page of this
 * process as the buffer, by its physical address from
 * /proc/self/pagemap: on loopback the peer's addresses are physical
 * ones) are served, which shows that the refused ones reached the
 * handler too.  The connection then still carries RMAs and bytes.
 * Skipped without the test build's hooks.
 *
 * hostile_stage_into_device_window does the same into device windows
 * (devices.rst, "The owner's copy engine serves staged device
 * windows"), whose requests serve items answer off rx_work: the server
 * registers two slices of QEMU's NVMe controller memory buffer (BAR 2
 * of the function SCIF_DEVMEM_BDF names, which scif_stage_devmem.sh
 * binds to vfio-pci or scif_lend), one read-only; every byte is checked
 * through the BAR mapped from sysfs, and the node's stage_served_*
 * counters must move by exactly the two valid requests.  Skipped
 * without SCIF_DEVMEM_BDF.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "scif.h"
#include "kselftest_harness.h"
#define SCIF_TEST_WITH_LIBSCIF
#include "scif_test_util.h"

#define DBG		"/sys/kernel/debug/scif/"
#define PG		4096L
#define WIN		(64 * 1024L)
#define RO_OFF		0x100000L
#define MSG_STAGE_WRITE	16
#define MSG_STAGE_READ	17
#define MSG_STAGE_ACK	18
#define STAGE_LEN	(256 * 1024L)
#define FAR		(1ULL << 40)

static int forge(uint16_t node, unsigned int op, uint64_t dst, uint64_t src,
		 uint64_t id, uint64_t off, uint64_t len, uint64_t addr)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "%u %u %llx %llx %llx %llx 0 %llx %llx",
		 node, op, (unsigned long long)dst, (unsigned long long)src,
		 (unsigned long long)id, (unsigned long long)off,
		 (unsigned long long)len, (unsigned long long)addr);
	return write_file(DBG "forge", buf);
}

/* A counter of <debugfs>/scif/stats, or -1. */
static long stats_of(const char *key)
{
	char buf[1024], *p;

	if (read_file(DBG "stats", buf, sizeof(buf)))
		return -1;
	p = strstr(buf, key);
	return p ? atol(p + strlen(key) + 1) : -1;
}

/* Handles of the client and server ends of @cn (<debugfs>/scif/endpoints). */
static int find_handles(const struct conn *cn, uint64_t *ch, uint64_t *sh)
{
	unsigned int port, pnode, pport;
	unsigned long long h;
	char line[256], st[32];
	FILE *f = fopen(DBG "endpoints", "r");

	*ch = *sh = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %31s %u %u:%u", &h, st, &port, &pnode,
			   &pport) != 5 || strcmp(st, "connected"))
			continue;
		if (port == (unsigned int)cn->client_port)
			*ch = h;
		else if (pport == (unsigned int)cn->client_port)
			*sh = h;
	}
	fclose(f);
	return *ch && *sh ? 0 : -1;
}

/* Physical address of the (locked, present) page at @p, or 0. */
static uint64_t phys_of(void *p)
{
	uint64_t ent = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);
	off_t at = (uintptr_t)p / PG * sizeof(ent);

	if (fd < 0)
		return 0;
	if (pread(fd, &ent, sizeof(ent), at) != sizeof(ent))
		ent = 0;
	close(fd);
	if (!(ent >> 63) || !(ent & ((1ULL << 55) - 1)))
		return 0;
	return (ent & ((1ULL << 55) - 1)) * PG + (uintptr_t)p % PG;
}

static void pattern(uint8_t *p, long len, uint8_t seed)
{
	for (long i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

/* Wait (up to 5 s) for @len bytes at @a to equal @b. */
static int equal_soon(const volatile uint8_t *a, const uint8_t *b, long len)
{
	for (int i = 0; i < 500; i++) {
		if (!memcmp((const void *)a, b, len))
			return 1;
		usleep(10000);
	}
	return 0;
}

FIXTURE(stage) {
	struct conn cn;
	uint8_t *win, *ro, *want, *page;
	uint16_t self;
};

FIXTURE_SETUP(stage)
{
	uint16_t ids[8];

	if (access(DBG "forge", W_OK))
		SKIP(return, "no %sforge (not the test build)", DBG);
	ASSERT_LE(1, scif_get_nodeIDs(ids, 8, &self->self));
	ASSERT_EQ(0, connect_pair(&self->cn));
	self->win = mmap(NULL, WIN + 2 * PG, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->win);
	self->ro = self->win + WIN;
	self->page = self->ro + PG;
	self->want = malloc(WIN);
	ASSERT_NE(NULL, self->want);
	ASSERT_EQ(0, mlock(self->page, PG));
	pattern(self->win, WIN, 1);
	pattern(self->ro, PG, 2);
	ASSERT_EQ(0, scif_register(self->cn.server, self->win, WIN, 0,
				   SCIF_PROT_READ | SCIF_PROT_WRITE,
				   SCIF_MAP_FIXED));
	ASSERT_EQ(RO_OFF, scif_register(self->cn.server, self->ro, PG, RO_OFF,
					SCIF_PROT_READ, SCIF_MAP_FIXED));
}

FIXTURE_TEARDOWN(stage)
{
	if (self->cn.client > 0)
		scif_close(self->cn.client);
	if (self->cn.server > 0)
		scif_close(self->cn.server);
}

TEST_F(stage, hostile_stage_messages)
{
	uint16_t me = self->self;
	uint64_t ch, sh, buf, far = FAR;
	long dropped;
	char c = 'q';

	ASSERT_EQ(0, find_handles(&self->cn, &ch, &sh));
	pattern(self->page, PG, 3);
	buf = phys_of(self->page);
	ASSERT_NE(0, buf);
	dropped = stats_of("dropped_msgs");
	ASSERT_LE(0, dropped);

	/* Lengths: 0, one past the bound, and the bound from afar. */
	EXPECT_EQ(0, forge(me, MSG_STAGE_WRITE, sh, ch, 1, 0, 0, buf));
	EXPECT_EQ(0, forge(me, MSG_STAGE_WRITE, sh, ch, 2, 0, STAGE_LEN + 1,
			   buf));
	EXPECT_EQ(0, forge(me, MSG_STAGE_READ, sh, ch, 3, 0, STAGE_LEN, far));
	/* Offsets: past the windows, across the end, overflowing. */
	EXPECT_EQ(0, forge(me, MSG_STAGE_WRITE, sh, ch, 4, 2 * RO_OFF, 8, buf));
	EXPECT_EQ(0, forge(me, MSG_STAGE_WRITE, sh, ch, 5, WIN - 8, 64, buf));
	EXPECT_EQ(0, forge(me, MSG_STAGE_WRITE, sh, ch, 6, UINT64_MAX - 10,
			   100, buf));
	EXPECT_EQ(0, forge(me, MSG_STAGE_WRITE, sh, ch, 7,
			   0x7ffffffffffff000ULL, 8192, buf));
	/* The read-only window; a buffer no bus reaches. */
	EXPECT_EQ(0, forge(me, MSG_STAGE_WRITE, sh, ch, 8, RO_OFF, 64, buf));
	EXPECT_EQ(0, forge(me, MSG_STAGE_WRITE, sh, ch, 9, 0, 64, far));
	EXPECT_EQ(0, forge(me, MSG_STAGE_READ, sh, ch, 10, 0, 64, far + buf));
	/* Not from the peer; for no endpoint (an orphan, answered). */
	EXPECT_EQ(0, forge(me, MSG_STAGE_WRITE, sh, ch ^ 1, 11, 0, 64, buf));
	EXPECT_EQ(0, forge(me, MSG_STAGE_WRITE, sh ^ (1ULL << 40), ch, 12, 0,
			   64, buf));
	/* Answers to nothing. */
	EXPECT_EQ(0, forge(me, MSG_STAGE_ACK, ch, sh, 12345, 0, 0, 0));
	EXPECT_EQ(0, forge(me, MSG_STAGE_ACK, ch, sh, 0, 0, 0, 0));

	/* A valid write: page[16..116) lands at offset 8192 + 5. */
	EXPECT_EQ(0, forge(me, MSG_STAGE_WRITE, sh, ch, 13, 8192 + 5, 100,
			   buf + 16));
	pattern(self->want, WIN, 1);
	memcpy(self->want + 8192 + 5, self->page + 16, 100);
	EXPECT_TRUE(equal_soon(self->win + 8192 + 5, self->page + 16, 100));
	/* Nothing else was written: the whole window, the read-only one. */
	EXPECT_EQ(0, memcmp(self->win, self->want, WIN));
	pattern(self->want, PG, 2);
	EXPECT_EQ(0, memcmp(self->ro, self->want, PG));
	/* A valid read: the read-only window's bytes 64..164 into page. */
	EXPECT_EQ(0, forge(me, MSG_STAGE_READ, sh, ch, 14, RO_OFF + 64, 100,
			   buf + 200));
	EXPECT_TRUE(equal_soon(self->page + 200, self->ro + 64, 100));
	EXPECT_LE(dropped + 1, stats_of("dropped_msgs"));

	/* The connection still works: an RMA, then a byte each way. */
	pattern(self->want, PG, 9);
	EXPECT_EQ(0, scif_vwriteto(self->cn.client, self->want, PG, 3 * PG,
				   SCIF_RMA_SYNC));
	EXPECT_EQ(0, memcmp(self->win + 3 * PG, self->want, PG));
	EXPECT_EQ(1, scif_send(self->cn.client, &c, 1, SCIF_SEND_BLOCK));
	c = 0;
	EXPECT_EQ(1, scif_recv(self->cn.server, &c, 1, SCIF_RECV_BLOCK));
	EXPECT_EQ('q', c);
}

#define DEV_OFF		0x200000L
#define DEV_RO_OFF	0x300000L
#define DEV_LEN		(64 * 1024L)

/* <debugfs>/scif/rma's stage_served_dma + stage_served_cpu, or < 0. */
static long served_bytes(void)
{
	long dma = -1, cpu = -1;
	char buf[2048], *p;

	if (read_file(DBG "rma", buf, sizeof(buf)))
		return -1;
	p = strstr(buf, "stage_served_dma ");
	if (p)
		dma = atol(p + strlen("stage_served_dma "));
	p = strstr(buf, "stage_served_cpu ");
	if (p)
		cpu = atol(p + strlen("stage_served_cpu "));
	return dma < 0 || cpu < 0 ? -1 : dma + cpu;
}

/* Two CMB slices: read-write at DEV_OFF, read-only at DEV_RO_OFF. */
static int reg_cmb(int epd, const char *bdf)
{
	struct scifioctl_reg_pci r = {
		.bar = 2, .len = DEV_LEN, .offset = DEV_OFF,
		.prot = SCIF_PROT_READ | SCIF_PROT_WRITE,
		.flags = SCIF_MAP_FIXED,
	};
	unsigned int d, b, v, f;

	if (sscanf(bdf, "%x:%x:%x.%x", &d, &b, &v, &f) != 4)
		return -1;
	r.domain = d;
	r.bus = b;
	r.devfn = v << 3 | f;
	if (ioctl(epd, SCIF_REG_PCI, &r) || r.out_offset != DEV_OFF)
		return -1;
	r.bar_offset = DEV_LEN;
	r.offset = DEV_RO_OFF;
	r.prot = SCIF_PROT_READ;
	if (ioctl(epd, SCIF_REG_PCI, &r) || r.out_offset != DEV_RO_OFF)
		return -1;
	return 0;
}

/* The BAR through sysfs, 8 bytes at a time (an MMIO region). */
static void bar_get(volatile uint8_t *bar, void *dst, long off, long len)
{
	for (long i = 0; i < len; i += 8) {
		uint64_t v = *(volatile uint64_t *)(bar + off + i);

		memcpy((uint8_t *)dst + i, &v, 8);
	}
}

static void bar_put(volatile uint8_t *bar, long off, const void *src,
		    long len)
{
	for (long i = 0; i < len; i += 8) {
		uint64_t v;

		memcpy(&v, (const uint8_t *)src + i, 8);
		*(volatile uint64_t *)(bar + off + i) = v;
	}
}

/* Wait (up to 5 s) for the BAR at @off to hold @want's @len bytes. */
static int bar_soon(volatile uint8_t *bar, long off, const uint8_t *want,
		    long len)
{
	uint8_t got[PG];

	for (int i = 0; i < 500; i++) {
		bar_get(bar, got, off & ~7L, PG);
		if (!memcmp(got + (off & 7), want, len))
			return 1;
		usleep(10000);
	}
	return 0;
}

TEST_F(stage, hostile_stage_into_device_window)
{
	const char *bdf = getenv("SCIF_DEVMEM_BDF");
	uint64_t ch, sh, buf, far = FAR;
	uint16_t me = self->self;
	volatile uint8_t *bar;
	long served;
	char path[128];
	uint8_t *got;
	int fd;

	if (!bdf)
		SKIP(return, "no SCIF_DEVMEM_BDF (scif_stage_devmem.sh sets it)");
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource2", bdf);
	fd = open(path, O_RDWR | O_SYNC);
	ASSERT_LE(0, fd);
	bar = mmap(NULL, 2 * DEV_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   0);
	ASSERT_NE(MAP_FAILED, (void *)bar);
	got = malloc(2 * DEV_LEN);
	ASSERT_NE(NULL, got);
	ASSERT_EQ(0, reg_cmb(self->cn.server, bdf));
	ASSERT_EQ(0, find_handles(&self->cn, &ch, &sh));
	pattern(self->want, DEV_LEN, 21);
	bar_put(bar, 0, self->want, DEV_LEN);
	pattern(self->want, DEV_LEN, 22);
	bar_put(bar, DEV_LEN, self->want, DEV_LEN);
	pattern(self->page, PG, 23);
	buf = phys_of(self->page);
	ASSERT_NE(0, buf);
	served = served_bytes();
	ASSERT_LE(0, served);

	/* Lengths; the ranges past, across and around the device window. */
	EXPECT_EQ(0, forge(me, MSG_STAGE_WRITE, sh, ch, 1, DEV_OFF, 0, buf));
	EXPECT_EQ(0, forge(me, MSG_STAGE_WRITE, sh, ch, 2, DEV_OFF,
			   STAGE_LEN + 1, buf));
	EXPECT_EQ(0, forge(me, MSG_STAGE_WRITE, sh, ch, 3,
			   DEV_OFF + DEV_LEN - 8, 64, buf));
	EXPECT_EQ(0, forge(me, MSG_STAGE_READ, sh, ch, 4, DEV_OFF - 8, 64,
			   buf));
	EXPECT_EQ(0, forge(me, MSG_STAGE_WRITE, sh, ch, 5, DEV_RO_OFF, 64,
			   buf));
	/* Buffers no bus reaches: checked by the serve item. */
	EXPECT_EQ(0, forge(me, MSG_STAGE_WRITE, sh, ch, 6, DEV_OFF, 64, far));
	EXPECT_EQ(0, forge(me, MSG_STAGE_READ, sh, ch, 7, DEV_OFF, STAGE_LEN,
			   far + buf));
	/* Not from the peer. */
	EXPECT_EQ(0, forge(me, MSG_STAGE_WRITE, sh, ch ^ 1, 8, DEV_OFF, 64,
			   buf));

	/* A valid write: page[16..116) at DEV_OFF + 8192 + 5. */
	EXPECT_EQ(0, forge(me, MSG_STAGE_WRITE, sh, ch, 9, DEV_OFF + 8192 + 5,
			   100, buf + 16));
	EXPECT_TRUE(bar_soon(bar, 8192 + 5, self->page + 16, 100));
	/* Nothing else was written, in either slice. */
	pattern(self->want, DEV_LEN, 21);
	memcpy(self->want + 8192 + 5, self->page + 16, 100);
	bar_get(bar, got, 0, 2 * DEV_LEN);
	EXPECT_EQ(0, memcmp(got, self->want, DEV_LEN));
	pattern(self->want, DEV_LEN, 22);
	EXPECT_EQ(0, memcmp(got + DEV_LEN, self->want, DEV_LEN));
	/* A valid read: the read-only slice's bytes 64..164 into page. */
	EXPECT_EQ(0, forge(me, MSG_STAGE_READ, sh, ch, 10, DEV_RO_OFF + 64,
			   100, buf + 200));
	EXPECT_TRUE(equal_soon(self->page + 200, got + DEV_LEN + 64, 100));
	/* The serve items ran for the valid requests only. */
	for (int i = 0; i < 500 && served_bytes() < served + 200; i++)
		usleep(10000);
	usleep(100000);
	EXPECT_EQ(served + 200, served_bytes());

	/* The connection still carries an RMA into the device window. */
	pattern(self->want, PG, 24);
	EXPECT_EQ(0, scif_vwriteto(self->cn.client, self->want, PG,
				   DEV_OFF + 3 * PG, SCIF_RMA_SYNC));
	bar_get(bar, got, 3 * PG, PG);
	EXPECT_EQ(0, memcmp(got, self->want, PG));
	munmap((void *)bar, 2 * DEV_LEN);
	close(fd);
	free(got);
}

TEST_HARNESS_MAIN
