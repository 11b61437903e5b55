/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: device-map files (scif_devmap.c).  See
 * Documentation/scif/devices.rst ("User space: the device-map file").
 */
#ifndef _SCIF_DEVMAP_H_
#define _SCIF_DEVMAP_H_

#include <uapi/linux/scif_ioctl.h>

struct file;
struct scif_endpt;

struct file *scif_devmap_open(struct file *epf, struct scif_endpt *ep,
			      struct scifioctl_devmap *req);

#endif /* _SCIF_DEVMAP_H_ */
