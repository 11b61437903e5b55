// SPDX-License-Identifier: GPL-2.0
/*
 * scif_rdma: frames taken in by a mapped CQ's poller (rdma.rst,
 * "Receives taken in by the poller").
 *
 * A process polls a mapped CQ in its ring; when the ring is empty, the
 * provider asks the kernel once (poll_cq) to take in what has arrived
 * for the CQ's QPs.  For each user QP of the CQ whose receive side is
 * free (@rx_mutex tried, never waited for), the bytes waiting on the
 * connection are read ahead into the QP's stage, without waiting, and
 * each whole SEND or answer (ACK, READ_RESP, MAP_RESP) at its head is
 * taken in there, as the receive thread would have: so a completion is
 * in the ring when the call returns, without the receive thread's
 * wake-up.  A frame that may wait (a request of the peer's: a WRITE or
 * READ to serve, a window to open, a SEND that invalidates a key) or that
 * does not fit the stage is left for @rx_work, which takes in what is
 * staged; a frame whose bytes have not all come is left in the stage
 * for whoever reads next (its last bytes wake the receive thread).
 * Every reader takes the staged bytes first (srd_xfer()), so frames are
 * read in order whoever reads them.
 */

#include <linux/slab.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "scif_rdma.h"

/* Where the stage's first frame stands. */
enum srd_rxp_head {
	SRD_RXP_NONE,		/* not even its header is staged */
	SRD_RXP_PART,		/* a poller's, not all of it staged yet */
	SRD_RXP_TAKE,		/* a poller's, whole: take it in */
	SRD_RXP_HAND,		/* @rx_work's or the receive thread's */
};

/* Bytes that follow a frame's header on the wire. */
static u32 srd_rxp_payload(const struct srd_hdr *h)
{
	if (h->type == SRD_F_SEND || (h->flags & SRD_F_INLINE))
		return le32_to_cpu(h->len);
	return 0;
}

/* Whether a poller may take @h in: a SEND or an answer, none may wait. */
static bool srd_rxp_ours(const struct srd_hdr *h)
{
	switch (h->type) {
	case SRD_F_SEND:
		return !(h->flags & SRD_F_INV);
	case SRD_F_ACK:
	case SRD_F_READ_RESP:
	case SRD_F_MAP_RESP:
		return true;
	default:
		return false;
	}
}

static enum srd_rxp_head srd_rxp_head(struct srd_qp *qp)
{
	struct srd_rxp_stage *st = qp->stage;
	struct srd_hdr h;
	u64 need;

	if (st->len < sizeof(h))
		return SRD_RXP_NONE;
	memcpy(&h, st->buf + st->off, sizeof(h));
	need = sizeof(h) + (u64)srd_rxp_payload(&h);
	if (!srd_rxp_ours(&h) || need > sizeof(st->buf))
		return SRD_RXP_HAND;
	return st->len >= need ? SRD_RXP_TAKE : SRD_RXP_PART;
}

/* Take in the staged frames @rx_work has to (each whole or completed). */
static void srd_rxp_work(struct work_struct *work)
{
	struct srd_qp *qp = container_of(work, struct srd_qp, rx_work);

	mutex_lock(&qp->rx_mutex);
	while (qp->rxp_live && !READ_ONCE(qp->closing) && qp->stage->len) {
		if (!srd_rx_frame(qp)) {
			srd_qp_close(qp);	/* the receive thread ends it */
			break;
		}
	}
	mutex_unlock(&qp->rx_mutex);
}

/*
 * A poller's turn on @qp: stage what has come, take in the whole SENDs
 * and answers at its head; a frame it leaves that nothing more is to
 * come for goes to @rx_work.
 */
static void srd_rxp_poll(struct srd_qp *qp)
{
	enum srd_rxp_head head = SRD_RXP_NONE;
	u32 n = 0;

	if (!mutex_trylock(&qp->rx_mutex))
		return;
	if (!qp->rxp_live || work_pending(&qp->rx_work))
		goto out;
	while (n < SRD_RXP_BUDGET && !READ_ONCE(qp->closing)) {
		if (srd_stage_fill(qp, sizeof(qp->stage->buf)) < 0)
			break;	/* the receive thread sees the error */
		head = srd_rxp_head(qp);
		if (head != SRD_RXP_TAKE)
			break;
		if (!srd_rx_frame(qp)) {
			srd_qp_close(qp);
			head = SRD_RXP_NONE;
			break;
		}
		n++;
	}
	if (head == SRD_RXP_HAND || head == SRD_RXP_TAKE)
		queue_work(system_unbound_wq, &qp->rx_work);
	srd_stat_add(qp->dev, SRD_STAT_POLLER_FRAMES, n);
out:
	mutex_unlock(&qp->rx_mutex);
}

/**
 * srd_rxp_poll_cq() - take in what has arrived for a mapped CQ's QPs
 * @cq: the CQ (mapped), polled by its process through poll_cq
 *
 * Context: process; sleeps only on @cq's @rxp_mutex and for locks a
 * frame's taking-in needs (never for the peer: only whole frames).
 */
void srd_rxp_poll_cq(struct srd_cq *cq)
{
	struct srd_rxp_link *l;

	mutex_lock(&cq->rxp_mutex);
	list_for_each_entry(l, &cq->rxp_qps, node)
		srd_rxp_poll(l->qp);
	mutex_unlock(&cq->rxp_mutex);
}

static void srd_rxp_list(struct srd_rxp_link *l, struct srd_qp *qp,
			 struct ib_cq *ibcq)
{
	struct srd_cq *cq = to_srd_cq(ibcq);

	l->qp = qp;
	l->cq = cq;
	mutex_lock(&cq->rxp_mutex);
	list_add_tail(&l->node, &cq->rxp_qps);
	mutex_unlock(&cq->rxp_mutex);
}

static void srd_rxp_unlist(struct srd_rxp_link *l)
{
	if (!l->cq)
		return;
	mutex_lock(&l->cq->rxp_mutex);
	list_del(&l->node);
	mutex_unlock(&l->cq->rxp_mutex);
	l->cq = NULL;
}

/**
 * srd_rxp_init() - a new QP's receive side
 * @qp: the QP
 * @attr: its CQs
 * @user: created through uverbs
 *
 * A user QP with a mapped CQ gets a stage (charged to its creator) and
 * joins the lists of its mapped CQs' pollers.
 *
 * Context: process.
 * Return: 0 or -ENOMEM.
 */
int srd_rxp_init(struct srd_qp *qp, const struct ib_qp_init_attr *attr,
		 bool user)
{
	bool scq = attr->send_cq && to_srd_cq(attr->send_cq)->umap;
	bool rcq = attr->recv_cq && to_srd_cq(attr->recv_cq)->umap;

	mutex_init(&qp->rx_mutex);
	INIT_WORK(&qp->rx_work, srd_rxp_work);
	if (!user || !(scq || rcq))
		return 0;
	qp->stage = kvzalloc(sizeof(*qp->stage), GFP_KERNEL_ACCOUNT);
	if (!qp->stage)
		return -ENOMEM;
	if (scq)
		srd_rxp_list(&qp->rxp[0], qp, attr->send_cq);
	if (rcq && attr->recv_cq != attr->send_cq)
		srd_rxp_list(&qp->rxp[1], qp, attr->recv_cq);
	return 0;
}

/**
 * srd_rxp_fini() - a QP's receive side goes, its receive thread ended
 * @qp: the QP
 *
 * Context: process; waits for a poller of its CQs that is at it.
 */
void srd_rxp_fini(struct srd_qp *qp)
{
	srd_rxp_unlist(&qp->rxp[0]);
	srd_rxp_unlist(&qp->rxp[1]);
	cancel_work_sync(&qp->rx_work);
	kvfree(qp->stage);
	qp->stage = NULL;
}
