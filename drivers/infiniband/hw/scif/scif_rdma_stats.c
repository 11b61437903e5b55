// SPDX-License-Identifier: GPL-2.0
/*
 * scif_rdma: the device's counters, as ib_core's port counters
 * ("rdma statistic show link DEV/1"; rdma.rst, "Counters").
 */

#include <rdma/ib_verbs.h>

#include "scif_rdma.h"

static const struct rdma_stat_desc srd_stat_descs[SRD_STAT_NR] = {
	[SRD_STAT_SENDS]		= { .name = "sends" },
	[SRD_STAT_RECVS]		= { .name = "recvs" },
	[SRD_STAT_WRITE_REQS]		= { .name = "rdma_write_reqs" },
	[SRD_STAT_READ_REQS]		= { .name = "rdma_read_reqs" },
	[SRD_STAT_REQ_BYTES]		= { .name = "rdma_req_bytes" },
	[SRD_STAT_WRITES_SERVED]	= { .name = "rdma_writes_served" },
	[SRD_STAT_READS_SERVED]		= { .name = "rdma_reads_served" },
	[SRD_STAT_SERVED_BYTES]		= { .name = "rdma_served_bytes" },
	[SRD_STAT_REM_ACCESS_ERR]	= { .name = "rem_access_errs" },
	[SRD_STAT_REM_INV_REQ_ERR]	= { .name = "rem_inv_req_errs" },
	[SRD_STAT_REM_OP_ERR]		= { .name = "rem_op_errs" },
	[SRD_STAT_BAD_FRAMES]		= { .name = "bad_frames" },
	[SRD_STAT_CM_CONNECTS]		= { .name = "cm_connects" },
	[SRD_STAT_CM_REFUSED]		= { .name = "cm_refused" },
	[SRD_STAT_DIRECT_REQS]		= { .name = "rdma_direct_reqs" },
	[SRD_STAT_MAPS_OPENED]		= { .name = "rdma_windows_opened" },
	[SRD_STAT_INLINE_REQS]		= { .name = "rdma_inline_reqs" },
	[SRD_STAT_PIPELINED_REQS]	= { .name = "rdma_pipelined_reqs" },
	[SRD_STAT_POSTER_REQS]		= { .name = "rdma_poster_reqs" },
	[SRD_STAT_POLLER_FRAMES]	= { .name = "rdma_poller_frames" },
	[SRD_STAT_USER_WIN_MAPS]	= { .name = "rdma_user_win_maps" },
};

/**
 * srd_alloc_hw_port_stats() - the counters' descriptions, for ib_core
 * @ibdev: the device
 * @port: its port (the only one, 1)
 *
 * Context: process.
 * Return: the struct ib_core fills with srd_get_hw_stats(), or NULL.
 */
struct rdma_hw_stats *srd_alloc_hw_port_stats(struct ib_device *ibdev,
					      u32 port)
{
	return rdma_alloc_hw_stats_struct(srd_stat_descs, SRD_STAT_NR,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/**
 * srd_get_hw_stats() - read the device's counters
 * @ibdev: the device
 * @stats: what srd_alloc_hw_port_stats() gave
 * @port: the port
 * @index: the counter asked for, or all of them (ib_core reads all)
 *
 * Context: process.
 * Return: the number of counters filled.
 */
int srd_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		     u32 port, int index)
{
	struct srd_dev *dev = to_srd_dev(ibdev);
	int i;

	for (i = 0; i < SRD_STAT_NR && i < stats->num_counters; i++)
		stats->value[i] = atomic64_read(&dev->stats[i]);
	return i;
}
