/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: device mappings of windows (scif_devdma.c); the endpoint's
 * part, struct scif_epd_devdma, is in scif_endpt.h.  See
 * Documentation/scif/devices.rst ("A device's DMA into a window").
 */
#ifndef _SCIF_DEVDMA_H_
#define _SCIF_DEVDMA_H_

#include <linux/list.h>
#include <linux/scif.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "scif_rma.h"

struct scif_devdma;
struct scif_endpt;
struct scif_node;
struct scif_pdmap;

enum scif_devdma_state {
	SCIF_DEVDMA_MAKING,
	SCIF_DEVDMA_CANCELLED,
	SCIF_DEVDMA_LIVE,
	SCIF_DEVDMA_REVOKING,
	SCIF_DEVDMA_GONE,
};

/**
 * struct scif_devdma_ops - what a kind of device mapping does
 * @revoke: the mapping is revoked (@why set): from the revocation work,
 *	with no SCIF lock held; when it returns the holder's device no
 *	longer uses the range, or cannot reach it.  It may sleep.  It drops
 *	the windows (scif_devdma_drop()) now or when the holder lets go.
 */
struct scif_devdma_ops {
	void (*revoke)(struct scif_devdma *d);
};

/**
 * struct scif_devdma - a device mapping of a range of windows
 * @ops: its kind's operations
 * @ep: the endpoint, with a reference, until the mapping leaves the
 *	endpoint's list (then NULL; read under RCU by scif_devdma_end())
 * @link: in the endpoint's devdma.maps
 * @work: the revocation
 * @state: enum scif_devdma_state
 * @why: why it was revoked (-ENXIO, -ECONNRESET, -ENODEV)
 * @remote: a range of the peer's windows, else of the endpoint's
 * @wins: the windows of the range, held until scif_devdma_drop()
 * @node: for a remote range, the peer's node, counted
 *	(scif_node_hold_get()) until scif_devdma_drop()
 *
 * @state and @link are under the endpoint's devdma.lock; @why is
 * written under it before the work is queued; the rest is set by
 * scif_devdma_begin() and belongs to the kind.  Embedded in the kind's
 * object, which outlives @work.
 */
struct scif_devdma {
	const struct scif_devdma_ops *ops;
	struct scif_endpt *ep;
	struct list_head link;
	struct work_struct work;
	enum scif_devdma_state state;
	int why;
	bool remote;
	struct scif_win_range wins;
	struct scif_node *node;
};

int scif_devdma_init(void);
void scif_devdma_exit(void);
void scif_devdma_epd_init(struct scif_endpt *ep);
void scif_devdma_epd_teardown(struct scif_endpt *ep, int err);
void scif_devdma_revoke_remote(struct scif_endpt *ep, struct scif_rwindow *rw);
void scif_devdma_revoke_local(struct scif_endpt *ep, struct scif_window *w);
int scif_devdma_begin(struct scif_devdma *d, struct scif_endpt *ep,
		      const struct scif_devdma_ops *ops, u64 off, u64 len,
		      int prot, bool remote);
int scif_devdma_live(struct scif_devdma *d);
void scif_devdma_cancel(struct scif_devdma *d);
bool scif_devdma_end(struct scif_devdma *d);
void scif_devdma_drop(struct scif_devdma *d);
void scif_devdma_queue_delayed(struct delayed_work *dw, unsigned long delay);
unsigned long scif_devdma_walk(const struct scif_devdma *d, u64 off, u64 len,
			       struct scif_pdmap *pieces);

#endif /* _SCIF_DEVDMA_H_ */
