/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: what the KUnit suites (scif_kunit.c, the module
 * scif_kunit.ko) reach inside scif.ko.  That module is built only in the
 * test build on a kernel with KUnit (SCIF_KUNIT; see Kbuild), and only
 * then are the functions below visible and exported; everywhere else
 * they stay static.
 */
#ifndef _SCIF_KUNIT_H_
#define _SCIF_KUNIT_H_

#include <linux/export.h>

#ifdef SCIF_KUNIT
#define SCIF_VISIBLE_IF_KUNIT
/* Only the test build's scif_kunit.ko uses these exports. */
#define SCIF_EXPORT_IF_KUNIT(sym) \
	EXPORT_SYMBOL_GPL(sym)

struct scif_endpt;
struct scif_msg;
struct scif_rwindow;
struct scif_window;

bool scif_window_register_msg_ok(const struct scif_msg *msg);
int scif_rwindow_read_runs(struct scif_rwindow *rw, u64 addr);
int scif_window_place(struct scif_endpt *ep, struct scif_window *w,
		      s64 offset, bool fixed);
u64 scif_fence_seq(struct scif_endpt *ep, u32 mark);
int scif_fence_off_check(u64 off);
int scif_fence_sig_off(s64 off);
bool scif_nodemsg_orphan_reply(const struct scif_msg *msg,
			       struct scif_msg *reply);
#else
#define SCIF_VISIBLE_IF_KUNIT static
#define SCIF_EXPORT_IF_KUNIT(sym)
#endif

#endif /* _SCIF_KUNIT_H_ */
