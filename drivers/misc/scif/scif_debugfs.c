// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: debugfs introspection under <debugfs>/scif/.
 *
 *   endpoints   one line per endpoint not yet destroyed:
 *               "<handle> <state> <port> <peer node>:<peer port>
 *               <tx_bytes> <tx_msgs> <rx_bytes> <rx_msgs> <rma_ops>
 *               <rma_bytes> <errors> <user_tx_bytes> <user_tx_msgs>
 *               <user_rx_bytes> <user_rx_msgs>" (struct scif_stats; the
 *               user_* ones as user space reported them, apart)
 *   nodes       one line per node online: "<id> <bus>"
 *   buses       one line per registered bus: "<name> <device> <node>...",
 *               the nodes it reaches (up or coming up)
 *   stats       "<name> <count>" lines: node messages dropped, nodes
 *               taken offline and connections reset for protocol errors,
 *               ranges of local memory mapped for peers (local_maps)
 *   fail_alloc  fault injection into every allocation of the driver
 *               (scif_fault.c; kernels with CONFIG_FAULT_INJECTION_DEBUG_FS;
 *               see Documentation/fault-injection/ for the attributes)
 *
 * The test build adds its hooks here (corrupt, node_test, forge,
 * peer_fuzz, corrupt_runlist, drop_rma_msgs): see scif_testhooks.c.
 */
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/string.h>

#include "scif_debugfs.h"
#include "scif_epd.h"
#include "scif_fault.h"
#include "scif_hw.h"
#include "scif_info.h"
#include "scif_nodes.h"

static int endpoints_show(struct seq_file *s, void *unused)
{
	struct scif_endpt *ep;

	mutex_lock(&scif_info.eplock);
	list_for_each_entry(ep, &scif_info.endpoints, list) {
		spin_lock(&ep->lock);
		seq_printf(s, "%#llx %s %u %u:%u %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu\n",
			   ep->handle, scif_epd_state_name(ep->state),
			   ep->port, ep->peer.node, ep->peer.port,
			   READ_ONCE(ep->stats.tx_bytes),
			   READ_ONCE(ep->stats.tx_msgs),
			   READ_ONCE(ep->stats.rx_bytes),
			   READ_ONCE(ep->stats.rx_msgs), ep->stats.rma_ops,
			   ep->stats.rma_bytes, ep->stats.errors,
			   READ_ONCE(ep->stats.user_tx_bytes),
			   READ_ONCE(ep->stats.user_tx_msgs),
			   READ_ONCE(ep->stats.user_rx_bytes),
			   READ_ONCE(ep->stats.user_rx_msgs));
		spin_unlock(&ep->lock);
	}
	mutex_unlock(&scif_info.eplock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(endpoints);

static int buses_show(struct seq_file *s, void *unused)
{
	scif_buses_show(s);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(buses);

static int nodes_show(struct seq_file *s, void *unused)
{
	u16 id;

	mutex_lock(&scif_info.node_lock);
	for (id = 0; id < SCIF_MAX_NODES; id++)
		if (scif_info.nodes[id].online)
			seq_printf(s, "%u %s\n", id, scif_info.nodes[id].hw->name);
	mutex_unlock(&scif_info.node_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nodes);

static int stats_show(struct seq_file *s, void *unused)
{
	u16 id;

	seq_printf(s, "dropped_msgs %d\n", atomic_read(&scif_info.dropped_msgs));
	seq_printf(s, "node_failures %d\n",
		   atomic_read(&scif_info.node_failures));
	seq_printf(s, "ring_failures %d\n",
		   atomic_read(&scif_info.ring_failures));
	seq_printf(s, "node_stalls %d\n", atomic_read(&scif_info.node_stalls));
	seq_printf(s, "local_maps %d\n", atomic_read(&scif_info.local_maps));
	mutex_lock(&scif_info.node_lock);
	for (id = 0; id < SCIF_MAX_NODES; id++) {
		if (scif_info.nodes[id].max_replies)
			seq_printf(s, "max_replies_%u %u\n", id,
				   READ_ONCE(scif_info.nodes[id].max_replies));
		if (scif_info.nodes[id].max_deferred)
			seq_printf(s, "max_deferred_%u %u\n", id,
				   READ_ONCE(scif_info.nodes[id].max_deferred));
	}
	mutex_unlock(&scif_info.node_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(stats);

/**
 * scif_debugfs_init() - create the debugfs directory and its files
 *
 * Failure is not fatal: debugfs is for introspection only.
 */
void scif_debugfs_init(void)
{
	scif_info.debugfs = debugfs_create_dir(SCIF_DRV_NAME, NULL);
	debugfs_create_file("endpoints", 0400, scif_info.debugfs, NULL,
			    &endpoints_fops);
	debugfs_create_file("nodes", 0400, scif_info.debugfs, NULL,
			    &nodes_fops);
	debugfs_create_file("stats", 0400, scif_info.debugfs, NULL,
			    &stats_fops);
	debugfs_create_file("buses", 0400, scif_info.debugfs, NULL,
			    &buses_fops);
	scif_fault_init(scif_info.debugfs);
}

/**
 * scif_debugfs_exit() - remove the debugfs directory
 */
void scif_debugfs_exit(void)
{
	debugfs_remove_recursive(scif_info.debugfs);
}
