/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF (Symmetric Communication Interface): the in-kernel API.
 *
 * Functions are declared here as the driver implements them; the flag
 * values and ABI structures shared with user space come from
 * <uapi/linux/scif_ioctl.h>.
 */
#ifndef _LINUX_SCIF_H
#define _LINUX_SCIF_H

#include <linux/types.h>
#include <uapi/linux/scif_ioctl.h>

/* Largest number of nodes a SCIF network can have. */
#define SCIF_MAX_NODES	64

int scif_get_node_ids(u16 *nodes, int len, u16 *self);

#endif /* _LINUX_SCIF_H */
