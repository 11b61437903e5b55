/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: the state global to the driver, struct scif_info, and the
 * module's parameters; both are defined in scif_main.c.  Lock rules:
 * struct scif_info below, and the lock order in scif_endpt.h.
 */
#ifndef _SCIF_INFO_H_
#define _SCIF_INFO_H_

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/scif.h>
#include <linux/types.h>
#include <linux/xarray.h>

#include "scif_nodes.h"

struct dentry;
struct workqueue_struct;

#define SCIF_DRV_NAME		"scif"

/**
 * struct scif_info - state global to the driver
 * @mdev: the /dev/scif misc device
 * @debugfs: root of the driver's debugfs directory
 * @wq: the driver's workqueue (node messages, endpoint destruction)
 * @self: this node's id
 * @eplock: protects @endpoints
 * @endpoints: every endpoint not yet destroyed
 * @epds: endpoints by id (the low half of their handle)
 * @nr_endpoints: endpoints counted (see the notes), bounded by
 *	max_endpoints
 * @user_lock: protects @users and the users' @ref and @nr_endpoints
 * @users: the struct scif_user of each user with an endpoint, by kuid
 * @next_gen: generation source for handles
 * @port_lock: protects @ports and @listeners
 * @ports: reference count of each port in use (xa_mk_value)
 * @listeners: the listening endpoint of each port
 * @parked: accepted requests waiting for SCIF_ACCEPTREG, by cookie; its
 *	lock nests inside scif_endpt.lock (a listener publishing a request)
 * @node_lock: protects nodes' @hw/@online, @clients
 * @clients: registered kernel clients
 * @nodes: every possible node
 * @dropped_msgs: node messages dropped: unknown type, or naming no
 *	endpoint of the sending node
 * @node_failures: nodes taken offline for a protocol error
 * @ring_failures: connections reset because the peer broke their ring
 * @node_stalls: nodes taken offline for leaving their queue full
 * @local_maps: ranges of local memory mapped for peers (map_local not
 *	yet undone), for debugfs
 */
struct scif_info {
	struct miscdevice mdev;
	struct dentry *debugfs;
	struct workqueue_struct *wq;
	u16 self;

	/* eplock protects endpoints */
	struct mutex eplock;
	struct list_head endpoints;
	struct xarray epds;
	atomic_t nr_endpoints;
	atomic_t next_gen;

	/* user_lock protects users, their ref and nr_endpoints; alone */
	struct mutex user_lock;
	struct xarray users;

	/* port_lock protects ports and listeners */
	struct mutex port_lock;
	struct xarray ports;
	struct xarray listeners;
	struct xarray parked;

	/* node_lock protects clients and the nodes' hw and online */
	struct mutex node_lock;
	struct list_head clients;
	struct scif_node nodes[SCIF_MAX_NODES];

	atomic_t dropped_msgs;
	atomic_t node_failures;
	atomic_t ring_failures;
	atomic_t node_stalls;
	atomic_t local_maps;
};

extern struct scif_info scif_info;
extern unsigned int scif_max_endpoints;
extern unsigned int scif_max_user_endpoints;
extern unsigned int scif_max_backlog;
extern unsigned int scif_max_parked;
extern unsigned int scif_msg_ring_size;
extern unsigned int scif_busy_poll_us;

#endif /* _SCIF_INFO_H_ */
