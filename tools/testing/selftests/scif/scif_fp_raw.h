/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fast path of one endpoint mapped by hand, as libscif maps it
 * (Documentation/scif/fastpath.rst), and the SCIF_SEND / SCIF_RECV
 * ioctls called directly, bypassing libscif: for the tests that play a
 * user who does not go through the library.
 */
#ifndef SCIF_FP_RAW_H
#define SCIF_FP_RAW_H

#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/scif_ioctl.h>

/* The data path of one endpoint, mapped by hand. */
struct rawfp {
	struct scifioctl_fp req;
	struct scif_fp_ctl *ctl;
	const struct scif_fp_half *local;
	struct scif_fp_half *remote;
};

/* SCIF_FP_OPEN on @ep, then its three mappings; 0 or -1. */
static inline int rawfp_open(int ep, struct rawfp *r)
{
	long pg = sysconf(_SC_PAGESIZE);

	memset(r, 0, sizeof(*r));
	if (ioctl(ep, SCIF_FP_OPEN, &r->req) < 0)
		return -1;
	r->ctl = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, r->req.fd,
		      SCIF_FP_CTL_OFF);
	r->local = mmap(NULL, r->req.local_len, PROT_READ, MAP_SHARED,
			r->req.fd, r->req.local_off);
	r->remote = mmap(NULL, r->req.remote_len, PROT_READ | PROT_WRITE,
			 MAP_SHARED, r->req.fd, r->req.remote_off);
	close(r->req.fd);
	if (r->ctl == MAP_FAILED || r->local == MAP_FAILED ||
	    r->remote == MAP_FAILED)
		return -1;
	return 0;
}

static inline void rawfp_close(struct rawfp *r)
{
	munmap(r->ctl, sysconf(_SC_PAGESIZE));
	munmap((void *)r->local, r->req.local_len);
	munmap(r->remote, r->req.remote_len);
}

/* SCIF_SEND or SCIF_RECV (@cmd) itself: the bytes moved, or -1. */
static inline int kxfer(int ep, unsigned long cmd, void *buf, int len,
			int flags)
{
	struct scifioctl_msg m = {
		.msg = (uintptr_t)buf, .len = len, .flags = flags,
	};

	return ioctl(ep, cmd, &m) < 0 ? -1 : m.out_len;
}

#endif /* SCIF_FP_RAW_H */
