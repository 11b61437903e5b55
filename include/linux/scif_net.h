/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scif_net.ko's API for other kernel modules (Documentation/scif/net.rst).
 */
#ifndef _LINUX_SCIF_NET_H
#define _LINUX_SCIF_NET_H

#include <linux/types.h>

struct net_device;

/* What scif_net_peer() says of the shared device sn: every node. */
#define SCIF_NET_SHARED	0xffff

int scif_net_peer(const struct net_device *ndev);
int scif_net_node_of(const struct net_device *ndev, const u8 *mac);

#endif /* _LINUX_SCIF_NET_H */
