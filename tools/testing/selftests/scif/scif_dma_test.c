// SPDX-License-Identifier: GPL-2.0
/*
 * RMA by DMA: run with scif_soft_dma.ko loaded before scif.ko (the
 * test build's software DMA_MEMCPY provider), so that the copy engine
 * has channels.  Data is compared byte for byte after copies by DMA in
 * every shape (windows, user buffers, unaligned, large), the driver's
 * DMA figures prove the channel did the work (and that SCIF_RMA_USECPU
 * keeps it away), and the provider's fault injection checks the error
 * paths: a failed transfer fails its RMA with EIO and the endpoint stays
 * usable; late completions keep fences and signals ordered; a channel
 * out of descriptors leaves pieces to the CPU; closing with transfers
 * in flight leaves nothing pinned.
 */
#include <errno.h>
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

#define SOFT_DMA	"/sys/module/scif_soft_dma/parameters/"
#define PG		4096L
#define WIN		(4L << 20)
#define ROFF		0x1000000L

/* Set a fault-injection parameter of the provider: 0 or -1. */
static int soft_dma_set(const char *name, long val)
{
	char path[256], v[32];

	snprintf(path, sizeof(path), SOFT_DMA "%s", name);
	snprintf(v, sizeof(v), "%ld", val);
	return write_file(path, v);
}

static uint8_t *map_mem(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

FIXTURE(dma) {
	struct conn cn;
	uint8_t *lbuf, *rbuf;	/* behind the client's and the server's window */
	off_t loff;
	long pinned0;
};

FIXTURE_SETUP(dma)
{
	ASSERT_EQ(0, access(SOFT_DMA "fail_every", W_OK))
		TH_LOG("scif_soft_dma.ko is not loaded");
	ASSERT_EQ(0, soft_dma_set("fail_every", 0));
	ASSERT_EQ(0, soft_dma_set("delay_ms", 0));
	ASSERT_EQ(0, soft_dma_set("max_desc", 0));
	ASSERT_LT(0, rma_stat("dma")) TH_LOG("the copy engine has no channel");
	self->pinned0 = rma_stat("pinned_pages");
	ASSERT_EQ(0, connect_pair(&self->cn));
	self->lbuf = map_mem(WIN);
	self->rbuf = map_mem(WIN);
	ASSERT_TRUE(self->lbuf && self->rbuf);
	/* Registered before they are filled, as programs do. */
	self->loff = scif_register(self->cn.client, self->lbuf, WIN, 0,
				   SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	ASSERT_LE(0, self->loff) TH_LOG("register: %s", strerror(errno));
	ASSERT_EQ(ROFF, scif_register(self->cn.server, self->rbuf, WIN, ROFF,
				      SCIF_PROT_READ | SCIF_PROT_WRITE,
				      SCIF_MAP_FIXED));
	fill_pattern(self->lbuf, WIN, 1);
	fill_pattern(self->rbuf, WIN, 2);
}

FIXTURE_TEARDOWN(dma)
{
	soft_dma_set("fail_every", 0);
	soft_dma_set("delay_ms", 0);
	soft_dma_set("max_desc", 0);
	if (self->cn.client >= 0)
		close(self->cn.client);
	if (self->cn.server >= 0)
		close(self->cn.server);
	EXPECT_EQ(0, rma_stat_settles_at("rma_pinned_pages", 0));
	EXPECT_EQ(self->pinned0, pinned_settles_at(self->pinned0));
	munmap(self->lbuf, WIN);
	munmap(self->rbuf, WIN);
}

/* Copy [off, off + len) of the client's window to the server's, and back. */
static void round_trip(struct __test_metadata *_metadata,
		       FIXTURE_DATA(dma) *self, long off, long len, int flags)
{
	uint8_t *back;
	int mark;

	fill_pattern(self->lbuf + off, len, (uint32_t)(len + off));
	ASSERT_EQ(0, scif_writeto(self->cn.client, self->loff + off, len,
				  ROFF + off, flags))
		TH_LOG("writeto %ld at %ld: %s", len, off, strerror(errno));
	if (!(flags & SCIF_RMA_SYNC)) {
		ASSERT_EQ(0, scif_fence_mark(self->cn.client,
					     SCIF_FENCE_INIT_SELF, &mark));
		ASSERT_EQ(0, scif_fence_wait(self->cn.client, mark));
	}
	EXPECT_EQ(-1, check_pattern(self->rbuf + off, len,
				    (uint32_t)(len + off)))
		TH_LOG("writeto %ld at %ld", len, off);
	back = map_mem(len + PG);
	ASSERT_NE(NULL, back);
	/* Back into a user buffer, not registered, at an odd address. */
	ASSERT_EQ(0, scif_vreadfrom(self->cn.client, back + 3, len, ROFF + off,
				    flags | SCIF_RMA_SYNC));
	EXPECT_EQ(-1, check_pattern(back + 3, len, (uint32_t)(len + off)));
	munmap(back, len + PG);
}

TEST_F(dma, shapes_by_dma_data_checked)
{
	static const long shape[][2] = {	/* offset, length */
		{ 0, 4096 }, { 100, 4096 }, { 4095, 65537 }, { 0, 1L << 20 },
		{ 8, (3L << 20) + 123 }, { 1000, 1024 }, { 0, WIN },
	};
	long before = rma_stat("dma_bytes"), total = 0;
	long failed = rma_stat("dma_failed");
	unsigned int i;

	for (i = 0; i < sizeof(shape) / sizeof(shape[0]); i++) {
		round_trip(_metadata, self, shape[i][0], shape[i][1],
			   SCIF_RMA_SYNC);
		round_trip(_metadata, self, shape[i][0], shape[i][1], 0);
		total += 4 * shape[i][1];
	}
	/* Both directions of the large shapes went by DMA. */
	EXPECT_LE(total / 2, rma_stat("dma_bytes") - before);
	EXPECT_EQ(failed, rma_stat("dma_failed"));
}

TEST_F(dma, window_to_window_readfrom)
{
	long before = rma_stat("dma_bytes");

	fill_pattern(self->rbuf, WIN, 7);
	ASSERT_EQ(0, scif_readfrom(self->cn.client, self->loff, WIN, ROFF,
				   SCIF_RMA_SYNC));
	EXPECT_EQ(-1, check_pattern(self->lbuf, WIN, 7));
	EXPECT_LE(WIN, rma_stat("dma_bytes") - before);
}

TEST_F(dma, usecpu_keeps_the_channel_away)
{
	long before = rma_stat("dma_bytes");

	fill_pattern(self->lbuf, WIN, 3);
	ASSERT_EQ(0, scif_writeto(self->cn.client, self->loff, WIN, ROFF,
				  SCIF_RMA_USECPU | SCIF_RMA_SYNC));
	EXPECT_EQ(-1, check_pattern(self->rbuf, WIN, 3));
	EXPECT_EQ(before, rma_stat("dma_bytes"));
}

TEST_F(dma, failed_transfer_eio_then_usable)
{
	long failed = rma_stat("dma_failed");
	uint8_t *buf = map_mem(1L << 20);

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, soft_dma_set("fail_every", 1));
	EXPECT_ERRNO(EIO, scif_writeto(self->cn.client, self->loff, 1L << 20,
				       ROFF, SCIF_RMA_SYNC));
	/* Asynchronous, small, nothing pending: run before returning. */
	EXPECT_ERRNO(EIO, scif_writeto(self->cn.client, self->loff, 65536,
				       ROFF, 0));
	fill_pattern(buf, 1L << 20, 5);
	EXPECT_ERRNO(EIO, scif_vwriteto(self->cn.client, buf, 1L << 20, ROFF,
					SCIF_RMA_SYNC));
	EXPECT_ERRNO(EIO, scif_vreadfrom(self->cn.client, buf, 1L << 20, ROFF,
					 SCIF_RMA_SYNC));
	EXPECT_LE(failed + 4, rma_stat("dma_failed"));
	EXPECT_EQ(0, rma_stat_settles_at("rma_pinned_pages", 0));

	/* The endpoint, its windows and the channel still work. */
	ASSERT_EQ(0, soft_dma_set("fail_every", 0));
	round_trip(_metadata, self, 0, 1L << 20, SCIF_RMA_SYNC);
	fill_pattern(buf, 1L << 20, 6);
	ASSERT_EQ(0, scif_vwriteto(self->cn.client, buf, 1L << 20, ROFF,
				   SCIF_RMA_SYNC));
	EXPECT_EQ(-1, check_pattern(self->rbuf, 1L << 20, 6));
	munmap(buf, 1L << 20);
}

TEST_F(dma, late_completions_keep_fences_ordered)
{
	volatile uint64_t *sig = (volatile uint64_t *)(self->lbuf + WIN - PG);
	long len = 512L << 10;
	int mark, i;

	ASSERT_EQ(0, soft_dma_set("delay_ms", 5));
	for (i = 0; i < 2; i++) {
		fill_pattern(self->lbuf, len, 20 + i);
		*sig = 0;
		/* Longer than what the caller runs itself: to the worker. */
		ASSERT_EQ(0, scif_writeto(self->cn.client, self->loff, len,
					  ROFF, 0));
		ASSERT_EQ(0, scif_fence_signal(self->cn.client,
					       self->loff + WIN - PG, 1 + i,
					       0, 0, SCIF_FENCE_INIT_SELF |
					       SCIF_SIGNAL_LOCAL));
		alarm_in_ms(20000);
		while (*sig != (uint64_t)(1 + i))
			usleep(1000);
		alarm_cancel();
		/* The signal comes after the data it follows. */
		EXPECT_EQ(-1, check_pattern(self->rbuf, len, 20 + i));
	}
	fill_pattern(self->lbuf, len, 30);
	ASSERT_EQ(0, scif_writeto(self->cn.client, self->loff, len, ROFF, 0));
	ASSERT_EQ(0, scif_fence_mark(self->cn.client, SCIF_FENCE_INIT_SELF,
				     &mark));
	ASSERT_EQ(0, scif_fence_wait(self->cn.client, mark));
	EXPECT_EQ(-1, check_pattern(self->rbuf, len, 30));
}

TEST_F(dma, out_of_descriptors_cpu_takes_over)
{
	long refused = rma_stat("dma_refused"), failed = rma_stat("dma_failed");

	/* One descriptor at a time, each completing late: most are refused. */
	ASSERT_EQ(0, soft_dma_set("max_desc", 1));
	ASSERT_EQ(0, soft_dma_set("delay_ms", 2));
	round_trip(_metadata, self, 0, 1L << 20, SCIF_RMA_SYNC);
	EXPECT_LT(refused, rma_stat("dma_refused"));
	EXPECT_EQ(failed, rma_stat("dma_failed"));
}

TEST_F(dma, close_with_transfers_in_flight)
{
	ASSERT_EQ(0, soft_dma_set("delay_ms", 5));
	ASSERT_EQ(0, scif_writeto(self->cn.client, self->loff, WIN, ROFF, 0));
	ASSERT_EQ(0, scif_vwriteto(self->cn.client, self->lbuf, 1L << 20,
				   ROFF, 0));
	close(self->cn.client);
	close(self->cn.server);
	self->cn.client = -1;
	self->cn.server = -1;
	/* The teardown checks that nothing stays pinned. */
}

TEST_HARNESS_MAIN
