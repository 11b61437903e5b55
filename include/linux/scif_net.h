/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scif_net.ko's API for other kernel modules (Documentation/scif/net.rst).
 */
#ifndef _LINUX_SCIF_NET_H
#define _LINUX_SCIF_NET_H

struct net_device;

int scif_net_peer(const struct net_device *ndev);

#endif /* _LINUX_SCIF_NET_H */
