/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: the test hooks (scif_testhooks.c), built only in the test
 * build (SCIF_TEST=1, which defines SCIF_TEST_HOOKS; see Kbuild).  The
 * module's init registers them; from then on the core's hook points
 * (scif_fault.h, the lowest layer) call them.  In the shipped build
 * there is nothing to register and every hook point compiles to
 * nothing.
 */
#ifndef _SCIF_TESTHOOKS_H_
#define _SCIF_TESTHOOKS_H_

#ifdef SCIF_TEST_HOOKS
void scif_testhooks_init(void);
#else
static inline void scif_testhooks_init(void)
{
}
#endif

#endif /* _SCIF_TESTHOOKS_H_ */
