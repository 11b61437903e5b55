/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: allocation-failure injection, the lowest layer (it uses
 * nothing of the driver).  Every allocation of the core asks
 * scif_fail_alloc() first (see the scif_k*alloc() helpers below); on a
 * kernel with CONFIG_FAULT_INJECTION_DEBUG_FS the answer comes from the
 * kernel's fault injection, set through <debugfs>/scif/fail_alloc/
 * (Documentation/fault-injection), and is always "no" elsewhere.
 */
#ifndef _SCIF_FAULT_H_
#define _SCIF_FAULT_H_

#include <linux/slab.h>
#include <linux/types.h>

struct dentry;

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
bool scif_fail_alloc(void);
void scif_fault_init(struct dentry *dir);
#else
static inline bool scif_fail_alloc(void)
{
	return false;
}

static inline void scif_fault_init(struct dentry *dir)
{
}
#endif

/*
 * The driver's allocations: the kernel's, failed on request by the
 * fail_alloc fault injection (debug kernels; scif_fault.h).  Callers
 * pass their GFP flags (GFP_KERNEL_ACCOUNT for what a user sizes,
 * __GFP_NOWARN for what a user or a peer may ask too much of).
 */
static inline void *scif_kzalloc(size_t size, gfp_t gfp)
{
	return scif_fail_alloc() ? NULL : kzalloc(size, gfp);
}

static inline void *scif_kcalloc(size_t n, size_t size, gfp_t gfp)
{
	return scif_fail_alloc() ? NULL : kcalloc(n, size, gfp);
}

static inline void *scif_kmalloc_array(size_t n, size_t size, gfp_t gfp)
{
	return scif_fail_alloc() ? NULL : kmalloc_array(n, size, gfp);
}

static inline void *scif_kvcalloc(size_t n, size_t size, gfp_t gfp)
{
	return scif_fail_alloc() ? NULL : kvcalloc(n, size, gfp);
}

static inline void *scif_kvmalloc_array(size_t n, size_t size, gfp_t gfp)
{
	return scif_fail_alloc() ? NULL : kvmalloc_array(n, size, gfp);
}

#endif /* _SCIF_FAULT_H_ */
