// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: module parameters, initialisation and teardown.
 */
#include <linux/module.h>

#include "scif_priv.h"

unsigned int scif_max_endpoints = 65536;
module_param_named(max_endpoints, scif_max_endpoints, uint, 0644);
MODULE_PARM_DESC(max_endpoints,
		 "Most endpoints (open files of /dev/scif) that may exist at once; further opens fail with ENFILE (default 65536)");

struct scif_info scif_info = {
	.eplock = __MUTEX_INITIALIZER(scif_info.eplock),
	.endpoints = LIST_HEAD_INIT(scif_info.endpoints),
};

static int __init scif_init(void)
{
	int err;

	scif_debugfs_init();
	err = scif_fd_init();
	if (err)
		goto undo_debugfs;
	return 0;

undo_debugfs:
	scif_debugfs_exit();
	return err;
}

static void __exit scif_exit(void)
{
	scif_fd_exit();
	scif_debugfs_exit();
}

module_init(scif_init);
module_exit(scif_exit);

MODULE_DESCRIPTION("SCIF: Symmetric Communication Interface over PCIe and NTB");
MODULE_LICENSE("GPL");
