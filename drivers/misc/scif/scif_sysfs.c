// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: per-node state and counters in sysfs, readable by anyone:
 *
 *   /sys/class/misc/scif/nodes/<id>/state             absent, joining,
 *                                                     online or failed
 *   /sys/class/misc/scif/nodes/<id>/bus               the bus, or "-"
 *   /sys/class/misc/scif/nodes/<id>/generation        times it came online
 *   /sys/class/misc/scif/nodes/<id>/heartbeat_age_ms  -1 if unknown
 *   /sys/class/misc/scif/nodes/<id>/stats/<counter>   struct scif_stats
 *   /sys/class/misc/scif/nodes/<id>/device            link to the bus's
 *                                                     device, while the
 *                                                     node has a bus
 *
 * A node's directory appears the first time the node comes online and
 * stays until the module is unloaded.  Its device link is made each
 * time the node comes online and removed when its bus lets go of it
 * (before the bus may delete the device).  The ABI is documented in
 * Documentation/scif/observability.rst.
 *
 * Locking: the directories are created and listed in scif_sysfs_nodes
 * under scif_info.node_lock, and the device links made and removed
 * under it; the state, bus and generation files read under it too, so
 * the directories are removed (which waits for readers) with it
 * released.  A link has no reader to wait for: it is removed under it.
 */
#define pr_fmt(fmt) "scif: " fmt

#include <linux/device.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/kobject.h>
#include <linux/stddef.h>
#include <linux/sysfs.h>

#include "scif_hw.h"
#include "scif_info.h"
#include "scif_nodes.h"
#include "scif_sysfs.h"

/* "nodes", under the misc device; NULL when not created (node_lock). */
static struct kobject *scif_sysfs_nodes;

/* The node whose directory (or its stats/) holds @kobj. */
static struct scif_node *scif_sysfs_node(struct kobject *kobj)
{
	u16 id;

	if (kstrtou16(kobject_name(kobj), 10, &id) || id >= SCIF_MAX_NODES)
		return NULL;
	return &scif_info.nodes[id];
}

static ssize_t state_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	struct scif_node *n = scif_sysfs_node(kobj);
	ssize_t len;

	if (!n)
		return -ENODEV;
	mutex_lock(&scif_info.node_lock);
	len = sysfs_emit(buf, "%s\n", scif_node_state_name(n));
	mutex_unlock(&scif_info.node_lock);
	return len;
}

static ssize_t bus_show(struct kobject *kobj, struct kobj_attribute *attr,
			char *buf)
{
	struct scif_node *n = scif_sysfs_node(kobj);
	ssize_t len;

	if (!n)
		return -ENODEV;
	mutex_lock(&scif_info.node_lock);
	len = sysfs_emit(buf, "%s\n", n->hw ? n->hw->name : "-");
	mutex_unlock(&scif_info.node_lock);
	return len;
}

static ssize_t generation_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	struct scif_node *n = scif_sysfs_node(kobj);

	if (!n)
		return -ENODEV;
	return sysfs_emit(buf, "%u\n", READ_ONCE(n->generation));
}

static ssize_t heartbeat_age_ms_show(struct kobject *kobj,
				     struct kobj_attribute *attr, char *buf)
{
	struct scif_node *n = scif_sysfs_node(kobj);
	unsigned long seen, now = jiffies;

	if (!n)
		return -ENODEV;
	seen = READ_ONCE(n->heartbeat);
	if (!seen || !READ_ONCE(n->hw))
		return sysfs_emit(buf, "-1\n");
	/* (seen may be a jiffy ahead: it is stored with its low bit set) */
	return sysfs_emit(buf, "%u\n", time_after(now, seen) ?
			  jiffies_to_msecs(now - seen) : 0);
}

static ssize_t held_mappings_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	struct scif_node *n = scif_sysfs_node(kobj);

	if (!n)
		return -ENODEV;
	return sysfs_emit(buf, "%u\n", scif_node_held_count(n));
}

static struct kobj_attribute scif_attr_state = __ATTR_RO(state);
static struct kobj_attribute scif_attr_bus = __ATTR_RO(bus);
static struct kobj_attribute scif_attr_generation = __ATTR_RO(generation);
static struct kobj_attribute scif_attr_heartbeat = __ATTR_RO(heartbeat_age_ms);
static struct kobj_attribute scif_attr_held = __ATTR_RO(held_mappings);

static struct attribute *scif_node_attrs[] = {
	&scif_attr_state.attr,
	&scif_attr_bus.attr,
	&scif_attr_generation.attr,
	&scif_attr_heartbeat.attr,
	&scif_attr_held.attr,
	NULL
};

static const struct attribute_group scif_node_group = {
	.attrs = scif_node_attrs,
};

/* One file per counter of struct scif_stats, in the group "stats". */
struct scif_stat_attr {
	struct kobj_attribute attr;
	size_t off;
};

static ssize_t scif_stat_show(struct kobject *kobj, struct kobj_attribute *attr,
			      char *buf)
{
	struct scif_stat_attr *sa = container_of(attr, struct scif_stat_attr,
						 attr);
	struct scif_node *n = scif_sysfs_node(kobj);
	struct scif_stats sum;

	if (!n)
		return -ENODEV;
	scif_node_stats_sum(n, &sum);
	return sysfs_emit(buf, "%llu\n", *(u64 *)((char *)&sum + sa->off));
}

static struct scif_stat_attr scif_attr_tx_bytes = {
	.attr = __ATTR(tx_bytes, 0444, scif_stat_show, NULL),
	.off = offsetof(struct scif_stats, tx_bytes),
};

static struct scif_stat_attr scif_attr_tx_msgs = {
	.attr = __ATTR(tx_msgs, 0444, scif_stat_show, NULL),
	.off = offsetof(struct scif_stats, tx_msgs),
};

static struct scif_stat_attr scif_attr_rx_bytes = {
	.attr = __ATTR(rx_bytes, 0444, scif_stat_show, NULL),
	.off = offsetof(struct scif_stats, rx_bytes),
};

static struct scif_stat_attr scif_attr_rx_msgs = {
	.attr = __ATTR(rx_msgs, 0444, scif_stat_show, NULL),
	.off = offsetof(struct scif_stats, rx_msgs),
};

static struct scif_stat_attr scif_attr_rma_ops = {
	.attr = __ATTR(rma_ops, 0444, scif_stat_show, NULL),
	.off = offsetof(struct scif_stats, rma_ops),
};

static struct scif_stat_attr scif_attr_rma_bytes = {
	.attr = __ATTR(rma_bytes, 0444, scif_stat_show, NULL),
	.off = offsetof(struct scif_stats, rma_bytes),
};

static struct scif_stat_attr scif_attr_errors = {
	.attr = __ATTR(errors, 0444, scif_stat_show, NULL),
	.off = offsetof(struct scif_stats, errors),
};

/* What user space reports through the fast path (scif_fp_fold()). */
static struct scif_stat_attr scif_attr_user_tx_bytes = {
	.attr = __ATTR(user_tx_bytes, 0444, scif_stat_show, NULL),
	.off = offsetof(struct scif_stats, user_tx_bytes),
};

static struct scif_stat_attr scif_attr_user_tx_msgs = {
	.attr = __ATTR(user_tx_msgs, 0444, scif_stat_show, NULL),
	.off = offsetof(struct scif_stats, user_tx_msgs),
};

static struct scif_stat_attr scif_attr_user_rx_bytes = {
	.attr = __ATTR(user_rx_bytes, 0444, scif_stat_show, NULL),
	.off = offsetof(struct scif_stats, user_rx_bytes),
};

static struct scif_stat_attr scif_attr_user_rx_msgs = {
	.attr = __ATTR(user_rx_msgs, 0444, scif_stat_show, NULL),
	.off = offsetof(struct scif_stats, user_rx_msgs),
};

static struct attribute *scif_stats_attrs[] = {
	&scif_attr_tx_bytes.attr.attr,
	&scif_attr_tx_msgs.attr.attr,
	&scif_attr_rx_bytes.attr.attr,
	&scif_attr_rx_msgs.attr.attr,
	&scif_attr_rma_ops.attr.attr,
	&scif_attr_rma_bytes.attr.attr,
	&scif_attr_errors.attr.attr,
	&scif_attr_user_tx_bytes.attr.attr,
	&scif_attr_user_tx_msgs.attr.attr,
	&scif_attr_user_rx_bytes.attr.attr,
	&scif_attr_user_rx_msgs.attr.attr,
	NULL
};

static const struct attribute_group scif_stats_group = {
	.name = "stats",
	.attrs = scif_stats_attrs,
};

static const struct attribute_group *scif_node_groups[] = {
	&scif_node_group,
	&scif_stats_group,
	NULL
};

/*
 * Link the node's directory to the device of the bus that reaches it;
 * under node_lock, with the node's bus set.  Any link it had goes first.
 */
static void scif_sysfs_link_device(struct scif_node *node)
{
	struct scif_hw_dev *hw = node->hw;
	struct device *dev = hw->link_dev ?: hw->dev;
	int err;

	lockdep_assert_held(&scif_info.node_lock);
	sysfs_remove_link(node->kobj, "device");
	err = sysfs_create_link(node->kobj, &dev->kobj, "device");
	if (err)
		pr_warn("node %u: no sysfs device link: %d\n", node->id, err);
}

/**
 * scif_sysfs_node_add() - give a node that came online its directory
 * @node: the node
 *
 * Makes the directory if the node has none, then links it to the
 * device of the node's bus.  Does nothing before scif_sysfs_init().  A
 * failure is logged, not returned: the node works without it.
 *
 * Context: process context, with scif_info.node_lock held.
 */
void scif_sysfs_node_add(struct scif_node *node)
{
	char name[8];
	int err;

	lockdep_assert_held(&scif_info.node_lock);
	if (!scif_sysfs_nodes)
		return;
	if (!node->kobj) {
		snprintf(name, sizeof(name), "%u", node->id);
		node->kobj = kobject_create_and_add(name, scif_sysfs_nodes);
		if (!node->kobj) {
			pr_warn("node %u: no sysfs directory\n", node->id);
			return;
		}
		err = sysfs_create_groups(node->kobj, scif_node_groups);
		if (err) {
			pr_warn("node %u: no sysfs files: %d\n", node->id, err);
			kobject_put(node->kobj);
			node->kobj = NULL;
			return;
		}
	}
	if (node->hw)
		scif_sysfs_link_device(node);
}

/**
 * scif_sysfs_node_absent() - a node's bus lets go of it: unlink its device
 * @node: the node, whose bus is still set
 *
 * Removes the node's device link, if it has one, before the bus may
 * delete the device.  The directory stays.
 *
 * Context: process context, with scif_info.node_lock held.
 */
void scif_sysfs_node_absent(struct scif_node *node)
{
	lockdep_assert_held(&scif_info.node_lock);
	if (node->kobj)
		sysfs_remove_link(node->kobj, "device");
}

/**
 * scif_sysfs_init() - create the nodes directory under /dev/scif's device
 *
 * The nodes that came online before (the loopback node) get theirs.
 *
 * Context: process context, at module load, after scif_fd_init().
 * Return: 0 or -ENOMEM.
 */
int scif_sysfs_init(void)
{
	struct kobject *dir;
	u16 id;

	dir = kobject_create_and_add("nodes", &scif_info.mdev.this_device->kobj);
	if (!dir)
		return -ENOMEM;
	mutex_lock(&scif_info.node_lock);
	scif_sysfs_nodes = dir;
	for (id = 0; id < SCIF_MAX_NODES; id++)
		if (scif_info.nodes[id].generation)
			scif_sysfs_node_add(&scif_info.nodes[id]);
	mutex_unlock(&scif_info.node_lock);
	return 0;
}

/**
 * scif_sysfs_exit() - remove the nodes directory and its contents
 *
 * Context: process context, at module unload, before scif_fd_exit().
 */
void scif_sysfs_exit(void)
{
	struct kobject *kobjs[SCIF_MAX_NODES], *dir;
	u16 id;

	/* Taken out under node_lock, removed without it (see the top). */
	mutex_lock(&scif_info.node_lock);
	for (id = 0; id < SCIF_MAX_NODES; id++) {
		kobjs[id] = scif_info.nodes[id].kobj;
		scif_info.nodes[id].kobj = NULL;
	}
	dir = scif_sysfs_nodes;
	scif_sysfs_nodes = NULL;
	mutex_unlock(&scif_info.node_lock);
	for (id = 0; id < SCIF_MAX_NODES; id++)
		kobject_put(kobjs[id]);
	kobject_put(dir);
}
