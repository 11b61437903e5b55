/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: dma-buf export of windows (scif_dmabuf.c).  See
 * Documentation/scif/devices.rst ("dma-buf export").
 */
#ifndef _SCIF_DMABUF_H_
#define _SCIF_DMABUF_H_

#include <linux/types.h>

struct scif_endpt;
struct scifioctl_dmabuf;

long scif_dmabuf_ioctl(struct scif_endpt *ep,
		       struct scifioctl_dmabuf __user *uarg);

#endif /* _SCIF_DMABUF_H_ */
