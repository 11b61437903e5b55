// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: allocation-failure injection through the kernel's fault
 * injection framework, on kernels with CONFIG_FAULT_INJECTION_DEBUG_FS,
 * and the test build's hooks, which its hook points call (see
 * scif_fault.h).
 */
#include <linux/gfp.h>
#include <linux/types.h>
/* (fault-inject.h needs the two above when fault injection is off) */
#include <linux/fault-inject.h>

#include "scif_fault.h"

/* Set by the test build's scif_testhooks_init(), read by the hook points. */
#ifdef SCIF_TEST_HOOKS
const struct scif_test_hooks *scif_test_hooks;
#endif

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
static DECLARE_FAULT_ATTR(scif_fail_alloc_attr);

/**
 * scif_fail_alloc() - whether the next allocation is to fail
 *
 * Context: any context.
 * Return: true when fault injection says so.
 */
bool scif_fail_alloc(void)
{
	return should_fail(&scif_fail_alloc_attr, 1);
}

/**
 * scif_fault_init() - create the fail_alloc attributes
 * @dir: the driver's debugfs directory
 *
 * Failure is not fatal: fault injection is for tests only.
 *
 * Context: process context, at module load.
 * Return: nothing.
 */
void scif_fault_init(struct dentry *dir)
{
	fault_create_debugfs_attr("fail_alloc", dir, &scif_fail_alloc_attr);
}
#endif /* CONFIG_FAULT_INJECTION_DEBUG_FS */
