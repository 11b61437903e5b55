/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: the loopback bus, this node reaching itself
 * (scif_loopback.c).  Lock rules: scif_hw.h and scif_nodes.h.
 */
#ifndef _SCIF_LOOPBACK_H_
#define _SCIF_LOOPBACK_H_

int scif_loopback_init(void);
void scif_loopback_exit(void);

#endif /* _SCIF_LOOPBACK_H_ */
