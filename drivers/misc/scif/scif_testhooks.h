/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: the points where the test hooks reach into the driver.
 * The hooks live in scif_testhooks.c, built only in the test build
 * (SCIF_TEST=1, which defines SCIF_TEST_HOOKS; see Kbuild); in the
 * shipped build every call below compiles to nothing.
 */
#ifndef _SCIF_TESTHOOKS_H_
#define _SCIF_TESTHOOKS_H_

#include <linux/types.h>

struct scif_msg;
struct scif_node;
struct scif_runlist;

/* Delay points: scif_node_test_delay(), "delay" of <debugfs>/scif/node_test */
enum scif_node_delay {
	SCIF_DELAY_CONNECT,	/* connect: node found online, area allocated */
	SCIF_DELAY_ACCEPT,	/* accept: node found online, area allocated */
	SCIF_DELAY_NODE_LOST,	/* node lost: paths cut, references not dropped */
	SCIF_DELAY_FP_REVOKE,	/* fast path revoked: not live, half not zapped */
	SCIF_DELAY_MSG_COUNT,	/* send/recv: peer's count read, copy not begun */
	SCIF_DELAY_RELEASE,	/* a window seen out of the tree, an RMA
				 * taken off the queue: references not
				 * dropped yet
				 */
	SCIF_DELAY_RX_MSG,	/* rx_work: a node message read, not handled */
	SCIF_DELAY_NR
};

#ifdef SCIF_TEST_HOOKS
void scif_testhooks_init(void);
void scif_node_test_delay(enum scif_node_delay point);
bool scif_node_test_held(struct scif_node *node, unsigned int what);
void scif_test_close_delay(void);
void scif_rma_test_delay(void);
void scif_rma_test_piece_delay(void);
bool scif_rma_test_defer(void);
bool scif_window_drop_msg(void);
void scif_window_runlist_maybe_corrupt(struct scif_runlist *rl,
				       struct scif_msg *msg);
#else
static inline void scif_testhooks_init(void)
{
}

static inline void scif_node_test_delay(enum scif_node_delay point)
{
}

static inline bool scif_node_test_held(struct scif_node *node,
				       unsigned int what)
{
	return false;
}

static inline void scif_test_close_delay(void)
{
}

static inline void scif_rma_test_delay(void)
{
}

static inline void scif_rma_test_piece_delay(void)
{
}

static inline bool scif_rma_test_defer(void)
{
	return false;
}

static inline bool scif_window_drop_msg(void)
{
	return false;
}

static inline void scif_window_runlist_maybe_corrupt(struct scif_runlist *rl,
						     struct scif_msg *msg)
{
}
#endif

#endif /* _SCIF_TESTHOOKS_H_ */
