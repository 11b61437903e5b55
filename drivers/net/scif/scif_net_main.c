// SPDX-License-Identifier: GPL-2.0
/*
 * scif_net: Ethernet between SCIF nodes.  An Ethernet device per peer
 * node, sn<peer>, over a SCIF connection (scif_net_link.c), and one
 * shared device, sn, that reaches every node over the same connections
 * (scif_net_shared.c).  This file is the module: its start and end, and
 * what other modules may ask of its devices (<linux/scif_net.h>).
 * Documentation/scif/net.rst has the design.
 */
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/scif_net.h>

#include "scif_net.h"

/**
 * scif_net_peer() - the peer node of a scif_net interface
 * @ndev: any net device
 *
 * Context: any; @ndev must be held by the caller.
 * Return: the SCIF node at the other end of sn<peer>, SCIF_NET_SHARED
 * for sn (scif_net_node_of() names the node of each of its neighbours),
 * or -ENODEV when @ndev is not one of scif_net's.
 */
int scif_net_peer(const struct net_device *ndev)
{
	if (sn_shared_owns(ndev))
		return SCIF_NET_SHARED;
	return sn_link_peer(ndev);
}
EXPORT_SYMBOL_GPL(scif_net_peer);

/**
 * scif_net_node_of() - the node a neighbour's MAC on a scif_net interface is
 * @ndev: any net device
 * @mac: a neighbour's MAC on @ndev (from its neighbour table)
 *
 * Context: any; @ndev must be held by the caller.
 * Return: for sn, the node @mac names (this node's own included), or
 * -EHOSTUNREACH if it names none; for sn<peer>, the peer whatever @mac
 * is; -ENODEV when @ndev is not one of scif_net's.
 */
int scif_net_node_of(const struct net_device *ndev, const u8 *mac)
{
	if (sn_shared_owns(ndev))
		return sn_shared_node_of(mac);
	return sn_link_peer(ndev);
}
EXPORT_SYMBOL_GPL(scif_net_node_of);

static int __init sn_init(void)
{
	return sn_links_start(&sn_shared_upper);
}

static void __exit sn_exit(void)
{
	/* sn first: no frame of it is queued on a link after this. */
	struct net_device *shared = sn_shared_stop();

	sn_links_stop();
	sn_shared_free(shared);
}

module_init(sn_init);
module_exit(sn_exit);
MODULE_DESCRIPTION("Ethernet over SCIF: a net device per peer node, and one for all");
MODULE_LICENSE("GPL");
MODULE_VERSION("0.1.0");
