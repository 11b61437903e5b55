/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: the /dev/scif character device (scif_fd.c).  Lock rules:
 * scif_endpt.h.
 */
#ifndef _SCIF_FD_H_
#define _SCIF_FD_H_

int scif_fd_init(void);
void scif_fd_exit(void);

#endif /* _SCIF_FD_H_ */
