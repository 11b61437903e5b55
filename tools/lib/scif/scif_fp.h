/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * libscif's user-space data path (scif_fp.c), internal to the library.
 */
#ifndef _SCIF_FP_H
#define _SCIF_FP_H

/*
 * Send or receive through the mapped rings; returns what the call
 * returns (bytes, or -1 with errno set), entering the kernel only where
 * it has to.  @kcall is the kernel's SCIF_SEND or SCIF_RECV, used for
 * what the rings cannot do now.
 */
int scif_fp_send(int epd, void *msg, int len, int flags,
		 int (*kcall)(int, void *, int, int));
int scif_fp_recv(int epd, void *msg, int len, int flags,
		 int (*kcall)(int, void *, int, int));

/* Forget the data path of @epd (a new endpoint there, or its close). */
void scif_fp_forget(int epd);

#endif /* _SCIF_FP_H */
