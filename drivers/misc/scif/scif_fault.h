/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: allocation-failure injection, the lowest layer (it uses
 * nothing of the driver).  Every allocation of the core asks
 * scif_fail_alloc() first (see the scif_k*alloc() helpers of
 * scif_priv.h); on a kernel with CONFIG_FAULT_INJECTION_DEBUG_FS the
 * answer comes from the kernel's fault injection, set through
 * <debugfs>/scif/fail_alloc/ (Documentation/fault-injection), and is
 * always "no" elsewhere.
 */
#ifndef _SCIF_FAULT_H_
#define _SCIF_FAULT_H_

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

#endif /* _SCIF_FAULT_H_ */
