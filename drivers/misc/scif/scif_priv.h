/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: every part's header, for the files not yet converted to
 * include their own (this file is going away).
 */
#ifndef _SCIF_PRIV_H_
#define _SCIF_PRIV_H_

#include <linux/kobject.h>
#include <linux/miscdevice.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uidgid.h>
#include <linux/uio.h>
#include <linux/xarray.h>

#include "scif_conn.h"
#include "scif_debugfs.h"
#include "scif_epd.h"
#include "scif_fault.h"
#include "scif_fd.h"
#include "scif_fp.h"
#include "scif_hw.h"
#include "scif_info.h"
#include "scif_lmap.h"
#include "scif_loopback.h"
#include "scif_mmap.h"
#include "scif_msg.h"
#include "scif_nodemsg.h"
#include "scif_nodes.h"
#include "scif_proto.h"
#include "scif_rb.h"
#include "scif_rma.h"
#include "scif_sysfs.h"
#include "scif_testhooks.h"

#endif /* _SCIF_PRIV_H_ */
