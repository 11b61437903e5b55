/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: what the KUnit suites (scif_kunit.c, the module
 * scif_kunit.ko) may reach inside scif.ko.  That module is built only in
 * the test build on a kernel with KUnit (SCIF_KUNIT; see Kbuild), and
 * only then are the functions marked below visible and exported, their
 * prototypes in their own files' headers under SCIF_KUNIT; everywhere
 * else they stay static (as <kunit/visibility.h> does for the kernel).
 */
#ifndef _SCIF_VISIBILITY_H_
#define _SCIF_VISIBILITY_H_

#include <linux/export.h>

#ifdef SCIF_KUNIT
#define SCIF_VISIBLE_IF_KUNIT
/* Only the test build's scif_kunit.ko uses these exports. */
#define SCIF_EXPORT_IF_KUNIT(sym) \
	EXPORT_SYMBOL_GPL(sym)
#else
#define SCIF_VISIBLE_IF_KUNIT static
#define SCIF_EXPORT_IF_KUNIT(sym)
#endif

#endif /* _SCIF_VISIBILITY_H_ */
