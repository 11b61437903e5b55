/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF ivshmem bus: the points where its test hooks reach into
 * scif_ivshmem.c.  The hooks are in scif_ivshmem_testhooks.c, which
 * scif_ivshmem.c includes at its end in the test build (SCIF_TEST_HOOKS);
 * in the shipped build the calls below compile to nothing.
 */
#ifndef _SCIF_IVSHMEM_TESTHOOKS_H_
#define _SCIF_IVSHMEM_TESTHOOKS_H_

struct scif_iv;

#ifdef SCIF_TEST_HOOKS
/* How long the heartbeat work is still to stop for, in jiffies. */
static unsigned long scif_iv_stalled(struct scif_iv *iv);
/* Create <debugfs>/scif_ivshmem/ and the hooks' files in it. */
static void scif_iv_debugfs_init(struct scif_iv *iv);
#else
static inline unsigned long scif_iv_stalled(struct scif_iv *iv)
{
	return 0;
}

/* iv->debugfs stays NULL (iv is zeroed at allocation). */
static inline void scif_iv_debugfs_init(struct scif_iv *iv)
{
}
#endif

#endif /* _SCIF_IVSHMEM_TESTHOOKS_H_ */
