// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: debugfs introspection under <debugfs>/scif/.
 *
 *   endpoints   one line per endpoint: "<id> <state>"
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "scif_priv.h"

static int endpoints_show(struct seq_file *s, void *unused)
{
	struct scif_endpt *ep;

	mutex_lock(&scif_info.eplock);
	list_for_each_entry(ep, &scif_info.endpoints, list)
		seq_printf(s, "%llu %s\n", ep->id, scif_epd_state_name(ep->state));
	mutex_unlock(&scif_info.eplock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(endpoints);

/**
 * scif_debugfs_init() - create the debugfs directory and its files
 *
 * Failure is not fatal: debugfs is for introspection only.
 */
void scif_debugfs_init(void)
{
	scif_info.debugfs = debugfs_create_dir(SCIF_DRV_NAME, NULL);
	debugfs_create_file("endpoints", 0400, scif_info.debugfs, NULL,
			    &endpoints_fops);
}

/**
 * scif_debugfs_exit() - remove the debugfs directory
 */
void scif_debugfs_exit(void)
{
	debugfs_remove_recursive(scif_info.debugfs);
}
