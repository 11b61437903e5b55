// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: allocation-failure injection through the kernel's fault
 * injection framework (see scif_fault.h).  Built on kernels with
 * CONFIG_FAULT_INJECTION_DEBUG_FS only (see Kbuild).
 */
#include <linux/fault-inject.h>

#include "scif_fault.h"

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
