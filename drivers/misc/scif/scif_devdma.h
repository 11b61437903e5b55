/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: device mappings of windows (scif_devdma.c); the endpoint's
 * part, struct scif_epd_devdma, is in scif_endpt.h.  See
 * Documentation/scif/devices.rst ("A device's DMA into a window").
 */
#ifndef _SCIF_DEVDMA_H_
#define _SCIF_DEVDMA_H_

#include <linux/scif.h>
#include <linux/types.h>

struct device;
struct scif_endpt;
struct scif_rwindow;
struct scif_window;

int scif_devdma_init(void);
void scif_devdma_exit(void);
void scif_devdma_epd_init(struct scif_endpt *ep);
void scif_devdma_epd_teardown(struct scif_endpt *ep, int err);
void scif_devdma_revoke_remote(struct scif_endpt *ep, struct scif_rwindow *rw);
void scif_devdma_revoke_local(struct scif_endpt *ep, struct scif_window *w);

#endif /* _SCIF_DEVDMA_H_ */
