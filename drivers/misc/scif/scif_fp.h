/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: an endpoint's user-space data path (scif_fp.c).  Its state
 * in the endpoint, struct scif_epd_fp and struct scif_fp_seen, with
 * their lock rules, and the lock order are in scif_endpt.h.
 */
#ifndef _SCIF_FP_H_
#define _SCIF_FP_H_

#include <linux/mutex.h>
#include <linux/types.h>

struct file;
struct inode;
struct page;
struct scif_endpt;
struct scif_fp_ctl;
struct scifioctl_fp;

bool scif_fp_trylock(u32 *lock);
void scif_fp_unlock(u32 *lock);
struct file *scif_fp_open(struct scif_endpt *ep, struct scifioctl_fp *arg);
void scif_fp_revoke(struct scif_endpt *ep);
void scif_fp_fold(struct scif_endpt *ep, bool tx);
void scif_fp_init(struct scif_endpt *ep);
void scif_fp_destroy(struct scif_endpt *ep);

#endif /* _SCIF_FP_H_ */
