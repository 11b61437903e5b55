/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: an endpoint's user-space data path (scif_fp.c).  Lock
 * rules: struct scif_epd_fp and struct scif_fp_seen below, and the
 * lock order in scif_epd.h.
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

/**
 * struct scif_fp_seen - one side of the fast path as scif_fp_fold() last
 *	saw it
 * @bytes: user space's byte count (scif_fp_ctl.tx_bytes or rx_bytes)
 * @msgs: its message count
 * @kbytes: the bytes the kernel's own rounds had moved (scif_endpt.stats)
 * @allow: bytes the ring count moved beyond the kernel's own that user
 *	space has not claimed yet: the most it may still report
 * @pos: the ring count in the page (tx_write or rx_read)
 *
 * Under the side's data mutex (send_mutex, recv_mutex).
 */
struct scif_fp_seen {
	u64 bytes;
	u64 msgs;
	u64 kbytes;
	u64 allow;
	u32 pos;
};

/**
 * struct scif_epd_fp - an endpoint's user-space data path (scif_fp.c)
 * @ctl: the counter page once SCIF_FP_OPEN made it (never unset while
 *	files map it), NULL before: set under both data mutexes, read with
 *	smp_load_acquire(); from then on its tx_write and rx_read are the
 *	endpoint's counts (struct scif_rb's are loaded from it and stored
 *	back by each round of the kernel's data path)
 * @ctl_page: the page of @ctl
 * @dummy: a zeroed page that stands for the peer's half once revoked
 * @inode: the address_space shared by the endpoint's fast-path files
 * @lock: protects @live; taken by the fault handler (under mmap_lock or
 *	the VMA lock) and by revocation, with nothing nested in it but the
 *	page table locks
 * @live: the peer's half may be inserted into processes
 * @wc: map the peer's half write-combined, as the bus asks
 * @local_pfn: the first page frame of our half (struct scif_rb.local)
 * @nr_local: its pages
 * @remote_pfn: the first page frame of the peer's half, as the bus
 *	reaches it
 * @nr_remote: its pages
 * @tx: what scif_fp_fold() last saw of the transmit side (send_mutex)
 * @rx: of the receive side (recv_mutex)
 *
 * Everything but @ctl, @live and the counts is set once, under ctl_mutex,
 * before @ctl.
 */
struct scif_epd_fp {
	struct scif_fp_ctl *ctl;
	struct page *ctl_page;
	struct page *dummy;
	struct inode *inode;
	/* lock protects live */
	struct mutex lock;
	bool live;
	bool wc;
	unsigned long local_pfn;
	unsigned long nr_local;
	unsigned long remote_pfn;
	unsigned long nr_remote;
	struct scif_fp_seen tx;
	struct scif_fp_seen rx;
};

bool scif_fp_trylock(u32 *lock);
void scif_fp_unlock(u32 *lock);
struct file *scif_fp_open(struct scif_endpt *ep, struct scifioctl_fp *arg);
void scif_fp_revoke(struct scif_endpt *ep);
void scif_fp_fold(struct scif_endpt *ep, bool tx);
void scif_fp_init(struct scif_endpt *ep);
void scif_fp_destroy(struct scif_endpt *ep);

#endif /* _SCIF_FP_H_ */
