/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * libscif: the user-space interface to SCIF endpoints.
 *
 * An endpoint is an open file of /dev/scif, and scif_epd_t is that file
 * descriptor, so endpoints work with poll(2), fcntl(2) and close(2) too.
 * Every call returns -1 (SCIF_OPEN_FAILED, SCIF_REGISTER_FAILED or
 * SCIF_MMAP_FAILED where the return type asks for it) and sets errno on
 * failure.  Flag values and struct scif_port_id come from the kernel's
 * <linux/scif_ioctl.h>.  See scif_open(3) and the pages it refers to.
 */
#ifndef _SCIF_H
#define _SCIF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/scif_ioctl.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int scif_epd_t;

#define SCIF_OPEN_FAILED	((scif_epd_t)-1)
#define SCIF_REGISTER_FAILED	((off_t)-1)
#define SCIF_MMAP_FAILED	((void *)-1)

/* The name older programs use for struct scif_port_id. */
#define scif_portID		scif_port_id

/* Laid out exactly like struct pollfd. */
struct scif_pollepd {
	scif_epd_t epd;
	short events;
	short revents;
};

scif_epd_t scif_open(void);
int scif_close(scif_epd_t epd);
int scif_bind(scif_epd_t epd, uint16_t pn);
int scif_listen(scif_epd_t epd, int backlog);
int scif_connect(scif_epd_t epd, struct scif_port_id *dst);
int scif_accept(scif_epd_t epd, struct scif_port_id *peer,
		scif_epd_t *newepd, int flags);
int scif_send(scif_epd_t epd, void *msg, int len, int flags);
int scif_recv(scif_epd_t epd, void *msg, int len, int flags);
off_t scif_register(scif_epd_t epd, void *addr, size_t len, off_t offset,
		    int prot_flags, int map_flags);
int scif_unregister(scif_epd_t epd, off_t offset, size_t len);
void *scif_mmap(void *addr, size_t len, int prot_flags, int map_flags,
		scif_epd_t epd, off_t offset);
int scif_munmap(void *addr, size_t len);
int scif_readfrom(scif_epd_t epd, off_t loffset, size_t len, off_t roffset,
		  int rma_flags);
int scif_writeto(scif_epd_t epd, off_t loffset, size_t len, off_t roffset,
		 int rma_flags);
int scif_vreadfrom(scif_epd_t epd, void *addr, size_t len, off_t roffset,
		   int rma_flags);
int scif_vwriteto(scif_epd_t epd, void *addr, size_t len, off_t roffset,
		  int rma_flags);
int scif_fence_mark(scif_epd_t epd, int flags, int *mark);
int scif_fence_wait(scif_epd_t epd, int mark);
int scif_fence_signal(scif_epd_t epd, off_t loff, uint64_t lval, off_t roff,
		      uint64_t rval, int flags);
int scif_get_nodeIDs(uint16_t *nodes, int len, uint16_t *self);
int scif_get_fd(scif_epd_t epd);
int scif_poll(struct scif_pollepd *epds, unsigned int nepds, long timeout);

#ifdef __cplusplus
}
#endif

#endif /* _SCIF_H */
