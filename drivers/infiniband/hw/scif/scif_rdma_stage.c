// SPDX-License-Identifier: GPL-2.0
/*
 * scif_rdma: a QP's stage, the bytes of its connection read ahead of the
 * frames by a poller (scif_rdma_rxpoll.c), which every reader takes
 * before the endpoint's (srd_xfer()); all under the QP's @rx_mutex.
 */

#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "scif_rdma.h"

/**
 * srd_stage_fill() - read ahead what a QP's connection has, not waiting
 * @qp: the QP, with a stage, @rx_mutex held
 * @want: up to this many bytes in the stage
 *
 * Context: process.
 * Return: bytes read, or SCIF's error.
 */
int srd_stage_fill(struct srd_qp *qp, u32 want)
{
	struct srd_rxp_stage *st = qp->stage;
	int n;

	lockdep_assert_held(&qp->rx_mutex);
	if (st->len >= want)
		return 0;
	if (st->off) {
		memmove(st->buf, st->buf + st->off, st->len);
		st->off = 0;
	}
	n = scif_recv(qp->epd, st->buf + st->len, want - st->len, 0);
	if (n > 0)
		st->len += n;
	return n;
}

/**
 * srd_stage_take() - take staged bytes of a QP's connection
 * @qp: the QP, @rx_mutex held
 * @buf: where they go
 * @len: at most this many
 *
 * Context: process.
 * Return: the bytes taken (0 if none are staged or @qp has no stage).
 */
int srd_stage_take(struct srd_qp *qp, void *buf, int len)
{
	struct srd_rxp_stage *st = qp->stage;
	u32 n;

	if (!st)
		return 0;
	lockdep_assert_held(&qp->rx_mutex);
	n = min_t(u32, st->len, len);
	memcpy(buf, st->buf + st->off, n);
	st->off = n == st->len ? 0 : st->off + n;
	st->len -= n;
	return n;
}

/**
 * srd_stage_ready() - has a QP's connection bytes to read now
 * @qp: the QP, @rx_mutex held
 *
 * For the receive thread: with a stage, reads a header's worth ahead if
 * none is staged, without waiting; without one, the thread reads as it
 * always did, waiting for the bytes with @rx_mutex held (no poller).
 *
 * Context: process.
 * Return: true if a frame's bytes (or the connection's error) are there
 * to be read, or @qp has no stage.
 */
bool srd_stage_ready(struct srd_qp *qp)
{
	lockdep_assert_held(&qp->rx_mutex);
	if (!qp->stage || qp->stage->len)
		return true;
	return srd_stage_fill(qp, sizeof(struct srd_hdr)) != 0;
}

/**
 * srd_stage_start() - a QP's connection may be read by its CQs' pollers
 * @qp: the QP, whose endpoint is set and whose receive thread starts
 *
 * Context: process.
 */
void srd_stage_start(struct srd_qp *qp)
{
	mutex_lock(&qp->rx_mutex);
	if (qp->stage) {
		qp->stage->off = 0;
		qp->stage->len = 0;
	}
	qp->rxp_live = true;
	mutex_unlock(&qp->rx_mutex);
}

/**
 * srd_stage_stop() - no poller or @rx_work reads a QP's connection now
 * @qp: the QP, whose connection is closing (@closing set)
 *
 * Context: the receive thread, when it ends; waits for @rx_work (which
 * sees @closing within SRD_POLL_MS).
 */
void srd_stage_stop(struct srd_qp *qp)
{
	mutex_lock(&qp->rx_mutex);
	qp->rxp_live = false;
	mutex_unlock(&qp->rx_mutex);
	cancel_work_sync(&qp->rx_work);
}
