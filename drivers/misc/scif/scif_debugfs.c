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
 *   corrupt     test hook (write only; the test build, SCIF_TEST_HOOKS,
 *               only): make this node a peer that breaks
 *               what it writes into another node's memory:
 *                 "msgs <node> <n>"  n node messages of random bytes
 *                 "count <node>"     a write count beyond the node ring
 *                 "conn <port>"      bad counts in the rings of every
 *                                    connection bound to local <port>
 *                 "fence <k> <dst> <src> <a0> .. <a4>" (hex but <k>)
 *                                    a forged fence message to this node
 *                                    itself (loopback): FENCE_MARK + k,
 *                                    k 0..3, with the given handles and
 *                                    arguments, as a peer could send it
 *   node_test   test hooks of the node layer (scif_nodes.c)
 *   fail_alloc  fault injection into every allocation of the driver
 *               (scif_fault.c; kernels with CONFIG_FAULT_INJECTION_DEBUG_FS;
 *               see Documentation/fault-injection/ for the attributes)
 */
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "scif_priv.h"

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
	for (id = 0; id < SCIF_MAX_NODES; id++)
		if (scif_info.nodes[id].max_replies)
			seq_printf(s, "max_replies_%u %u\n", id,
				   READ_ONCE(scif_info.nodes[id].max_replies));
	mutex_unlock(&scif_info.node_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(stats);

#ifdef SCIF_TEST_HOOKS
/* "fence ...": a fence message as a hostile peer would send it. */
static int scif_debugfs_fence(const char *buf)
{
	struct scif_msg msg = { 0 };
	struct scif_node *node;
	unsigned int k;

	if (sscanf(buf, "fence %u %llx %llx %llx %llx %llx %llx %llx", &k,
		   &msg.dst, &msg.src, &msg.arg[0], &msg.arg[1], &msg.arg[2],
		   &msg.arg[3], &msg.arg[4]) != 8 || k > 3)
		return -EINVAL;
	msg.op = SCIF_MSG_FENCE_MARK + k;
	node = scif_node_get_online(scif_info.self);
	return node ? scif_node_send(node, &msg) : -ENODEV;
}

static ssize_t corrupt_write(struct file *file, const char __user *ubuf,
			     size_t len, loff_t *ppos)
{
	unsigned int a, b;
	char buf[256];
	int err;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "msgs %u %u", &a, &b) == 2 && a <= U16_MAX &&
	    b <= 1024)
		err = scif_node_corrupt(a, false, b);
	else if (sscanf(buf, "count %u", &a) == 1 && a <= U16_MAX)
		err = scif_node_corrupt(a, true, 0);
	else if (sscanf(buf, "conn %u", &a) == 1 && a && a <= U16_MAX)
		err = scif_msg_corrupt_rings(a) ? 0 : -ENOENT;
	else if (!strncmp(buf, "fence ", 6))
		err = scif_debugfs_fence(buf);
	else
		err = -EINVAL;
	return err ?: len;
}

static const struct file_operations corrupt_fops = {
	.owner = THIS_MODULE,
	.write = corrupt_write,
	.llseek = noop_llseek,
};

static void scif_debugfs_hooks_init(void)
{
	debugfs_create_file("corrupt", 0200, scif_info.debugfs, NULL,
			    &corrupt_fops);
}
#else
static void scif_debugfs_hooks_init(void)
{
}
#endif /* SCIF_TEST_HOOKS */

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
	scif_debugfs_hooks_init();
	scif_fault_init(scif_info.debugfs);
	scif_nodes_debugfs_init(scif_info.debugfs);
}

/**
 * scif_debugfs_exit() - remove the debugfs directory
 */
void scif_debugfs_exit(void)
{
	debugfs_remove_recursive(scif_info.debugfs);
}
