// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: module parameters, initialisation and teardown.
 */
#define pr_fmt(fmt) "scif: " fmt

#include <linux/log2.h>
#include <linux/module.h>

#include "scif_debugfs.h"
#include "scif_devdma.h"
#include "scif_devices.h"
#include "scif_epd.h"
#include "scif_fd.h"
#include "scif_hw.h"
#include "scif_info.h"
#include "scif_loopback.h"
#include "scif_mmap.h"
#include "scif_nodemsg.h"
#include "scif_nodes.h"
#include "scif_rb.h"
#include "scif_rma.h"
#include "scif_sysfs.h"
#include "scif_testhooks.h"

#define CREATE_TRACE_POINTS
#include "scif_trace.h"

unsigned int scif_max_endpoints = 65536;
module_param_named(max_endpoints, scif_max_endpoints, uint, 0644);
MODULE_PARM_DESC(max_endpoints,
		 "Most endpoints that may exist at once: open ones, and closed ones the peer still holds; further opens fail with ENFILE (default 65536)");

/*
 * Enough for one user's 4000 connections with both ends on this node
 * (a backlog of its own connectors near the somaxconn cap, accepted),
 * and an eighth of max_endpoints, so that one user leaves room for others.
 */
unsigned int scif_max_user_endpoints = 8192;
module_param_named(max_user_endpoints, scif_max_user_endpoints, uint, 0644);
MODULE_PARM_DESC(max_user_endpoints,
		 "Most endpoints that one user (real uid) may have at once, counted as for max_endpoints; further opens fail with EMFILE. Not applied to CAP_SYS_RESOURCE nor to kernel clients (default 8192)");

/* Today's somaxconn: what a listener asks for is queued, as in SCIF. */
unsigned int scif_max_backlog = 4096;
module_param_named(max_backlog, scif_max_backlog, uint, 0644);
MODULE_PARM_DESC(max_backlog,
		 "Most connection requests that may wait at one listener, whatever backlog listen was given (as somaxconn); further requests are refused (default 4096)");

unsigned int scif_max_parked = 64;
module_param_named(max_parked, scif_max_parked, uint, 0644);
MODULE_PARM_DESC(max_parked,
		 "Most requests of one listener taken by SCIF_ACCEPTREQ and not yet claimed by SCIF_ACCEPTREG; further SCIF_ACCEPTREQ fail with ENOMEM (default 64)");

unsigned int scif_msg_ring_size = 64 * 1024;
module_param_named(msg_ring_size, scif_msg_ring_size, uint, 0444);
MODULE_PARM_DESC(msg_ring_size,
		 "Bytes in each connection's receive ring: a power of two from 4096 to 4194304 (default 65536)");

unsigned int scif_busy_poll_us = 50;
module_param_named(busy_poll_us, scif_busy_poll_us, uint, 0644);
MODULE_PARM_DESC(busy_poll_us,
		 "Microseconds a blocking send or recv watches its ring before it sleeps; 0 never (default 50)");

struct scif_info scif_info = {
	.eplock = __MUTEX_INITIALIZER(scif_info.eplock),
	.endpoints = LIST_HEAD_INIT(scif_info.endpoints),
	.epds = XARRAY_INIT(scif_info.epds, XA_FLAGS_ALLOC1),
	.user_lock = __MUTEX_INITIALIZER(scif_info.user_lock),
	.users = XARRAY_INIT(scif_info.users, 0),
	.port_lock = __MUTEX_INITIALIZER(scif_info.port_lock),
	.ports = XARRAY_INIT(scif_info.ports, XA_FLAGS_ALLOC),
	.listeners = XARRAY_INIT(scif_info.listeners, 0),
	.parked = XARRAY_INIT(scif_info.parked, XA_FLAGS_ALLOC1),
	.node_lock = __MUTEX_INITIALIZER(scif_info.node_lock),
	.clients = LIST_HEAD_INIT(scif_info.clients),
};

static int __init scif_check_params(void)
{
	if (scif_msg_ring_size < SCIF_RING_MIN ||
	    scif_msg_ring_size > SCIF_RING_MAX ||
	    !is_power_of_2(scif_msg_ring_size)) {
		pr_err("msg_ring_size %u is not a power of two in [%lu, %u]\n",
		       scif_msg_ring_size, SCIF_RING_MIN, SCIF_RING_MAX);
		return -EINVAL;
	}
	return 0;
}

/* A node is gone: its endpoints are reset, its device borrows end. */
static void scif_main_node_lost(struct scif_node *node, bool hold)
{
	scif_epd_node_lost(node, hold);
	scif_devices_node_lost(node);
}

/* The layers above the nodes hear of them through this (design.rst). */
static const struct scif_node_events scif_main_node_events = {
	.message = scif_nodemsg_dispatch,
	.online = scif_sysfs_node_add,
	.absent = scif_sysfs_node_absent,
	.lost = scif_main_node_lost,
};

/*
 * What holds a window is revoked when it goes: the user mappings of a
 * peer's window (scif_mmap.c), then the device mappings of any window
 * (scif_devdma.c).
 */
static const struct scif_window_revoker scif_main_mmap_revoker = {
	.remote = scif_mmap_revoke,
};

static const struct scif_window_revoker scif_main_devdma_revoker = {
	.remote = scif_devdma_revoke_remote,
	.local = scif_devdma_revoke_local,
};

static int __init scif_init(void)
{
	int err;

	err = scif_check_params();
	if (err)
		return err;
	scif_info.wq = alloc_workqueue("scif", WQ_UNBOUND, 0);
	if (!scif_info.wq)
		return -ENOMEM;
	err = scif_rma_init();
	if (err)
		goto undo_wq;
	err = scif_devdma_init();
	if (err)
		goto undo_rma_init;
	scif_window_on_revoke(0, &scif_main_mmap_revoker);
	scif_window_on_revoke(1, &scif_main_devdma_revoker);
	scif_fence_init();
	err = scif_nodes_init(&scif_main_node_events);
	if (err)
		goto undo_devdma;
	err = scif_loopback_init();
	if (err)
		goto undo_nodes;
	scif_debugfs_init();
	scif_rma_debugfs_init(scif_info.debugfs);
	scif_testhooks_init();
	err = scif_mmap_init(scif_info.debugfs);
	if (err)
		goto undo_debugfs;
	err = scif_fd_init();
	if (err)
		goto undo_mmap;
	err = scif_sysfs_init();
	if (err)
		goto undo_fd;
	err = scif_devices_init();
	if (err)
		goto undo_sysfs;
	scif_devmem_on_gone(scif_epd_devmem_gone);
	err = scif_devmem_init();
	if (err)
		goto undo_devices;
	return 0;

undo_devices:
	scif_devices_exit();
undo_sysfs:
	scif_sysfs_exit();
undo_fd:
	scif_fd_exit();
undo_mmap:
	scif_mmap_exit();
undo_debugfs:
	scif_debugfs_exit();
	scif_loopback_exit();
undo_nodes:
	scif_nodes_exit();
undo_devdma:
	scif_devdma_exit();
undo_rma_init:
	scif_rma_exit();
undo_wq:
	destroy_workqueue(scif_info.wq);
	scif_qp_cache_drain();
	return err;
}

static void __exit scif_exit(void)
{
	scif_devmem_exit();
	/* Withdrawals are messages: before the nodes go. */
	scif_devices_exit();
	scif_sysfs_exit();
	scif_fd_exit();
	scif_mmap_exit();
	scif_debugfs_exit();
	scif_loopback_exit();
	/* Every device mapping was unmapped by its client module. */
	scif_devdma_exit();
	/* The copy engine's last puts may queue endpoint destructions. */
	scif_rma_exit();
	/* Endpoints still waiting for their destruction go now. */
	destroy_workqueue(scif_info.wq);
	rcu_barrier();
	scif_nodes_exit();
	/* Nothing holds a queue-pair area any more. */
	scif_qp_cache_drain();
	WARN_ON(!list_empty(&scif_info.endpoints));
	WARN_ON(!xa_empty(&scif_info.users));
}

module_init(scif_init);
module_exit(scif_exit);

MODULE_DESCRIPTION("SCIF: Symmetric Communication Interface over PCIe and NTB");
MODULE_LICENSE("GPL");
MODULE_VERSION(SCIF_DRIVER_VERSION);
