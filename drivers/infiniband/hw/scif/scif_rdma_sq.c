// SPDX-License-Identifier: GPL-2.0
/*
 * scif_rdma: the send queue (rdma.rst, "The send queue").
 *
 * The send worker takes the send ring's work requests in order and does
 * each one's part on this side (srd_sq_do_wr()).  A WRITE or READ by frames
 * (inline, or by the responder's RMA) then waits for its answer while
 * the worker goes on with the next ones: at most SRD_SQ_AWAIT wait at
 * once, SRD_SQ_AWAIT_WIN of them with a window.  What must not overtake
 * them waits until every answer has come: a local operation (REG_MR,
 * LOCAL_INV), a fenced work request, and a WRITE or READ that may go
 * straight to the peer's window (it would move its bytes before the
 * responder has served the earlier ones).  Work requests complete in
 * the order they were posted: the worker retires the oldest while it is
 * done.  The receive thread gives each answer to the oldest work request
 * waiting for one (answers come in the order the requests left) and
 * wakes the worker; when the connection ends, srd_sq_stop() flushes
 * those still waiting.
 */

#include <linux/lockdep.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "scif_rdma.h"

/* The oldest work request waiting for an answer leaves @await. */
static struct srd_swqe *srd_sq_await_pop(struct srd_qp *qp)
{
	struct srd_swqe *w = &qp->sq[qp->await[qp->await_head]];

	lockdep_assert_held(&qp->resp_mutex);
	qp->await_head = (qp->await_head + 1) % SRD_SQ_AWAIT;
	qp->await_count--;
	if (w->win)
		qp->await_win--;
	return w;
}

/**
 * srd_sq_await() - a work request's frame is about to leave: await its answer
 * @qp: the QP (fewer than SRD_SQ_AWAIT answers awaited, and fewer than
 *	SRD_SQ_AWAIT_WIN with a window if @w has one)
 * @w: the work request being taken, its @len, @inl and @win set
 * @type: the answer it waits for (SRD_F_ACK or SRD_F_READ_RESP)
 *
 * Called before the frame leaves, so that its answer is never missed.
 *
 * Context: the send worker; takes qp->resp_mutex.
 * Return: true, or false if the connection has ended (no answer comes).
 */
bool srd_sq_await(struct srd_qp *qp, struct srd_swqe *w, u8 type)
{
	bool ok;

	mutex_lock(&qp->resp_mutex);
	ok = !qp->await_stop && qp->await_count < SRD_SQ_AWAIT;
	if (ok) {
		if (qp->await_count)
			srd_stat_add(qp->dev, SRD_STAT_PIPELINED_REQS, 1);
		qp->await[(qp->await_head + qp->await_count++) %
			  SRD_SQ_AWAIT] = w - qp->sq;
		if (w->win)
			qp->await_win++;
		w->resp = type;
	}
	mutex_unlock(&qp->resp_mutex);
	return ok;
}

/**
 * srd_sq_answer() - an ACK or READ_RESP came: the oldest waiting one's
 * @qp: the QP
 * @h: the answer, its fields checked (srd_resp_ok())
 * @len: the bytes that follow it (an inline READ's, else 0)
 *
 * An answer of another type than the oldest waits for, or with no work
 * request waiting, is one nobody asked for.  An inline READ's success
 * brings exactly its bytes, scattered into its SGEs here, without
 * resp_mutex (a slow peer then holds no lock the send worker needs):
 * only this thread takes the oldest out of the ring, and the send
 * worker completes a work request only once it is done, so the READ
 * and its SGEs stay put meanwhile.  Any other answer brings none.
 *
 * Context: the receive thread; sleeps; takes qp->resp_mutex.
 * Return: false if the answer is refused (the caller ends the
 * connection), else true (also when the connection broke under an
 * inline READ's bytes: its end flushes the READ).
 */
bool srd_sq_answer(struct srd_qp *qp, const struct srd_hdr *h, u32 len)
{
	struct srd_swqe *w = NULL;
	bool bytes;

	mutex_lock(&qp->resp_mutex);
	if (qp->await_count)
		w = &qp->sq[qp->await[qp->await_head]];
	if (w && h->type != w->resp)
		w = NULL;
	bytes = w && w->inl && w->resp == SRD_F_READ_RESP &&
		h->status == IB_WC_SUCCESS;
	mutex_unlock(&qp->resp_mutex);
	if (!w || (bytes ? h->flags != SRD_F_INLINE || len != w->len :
		   h->flags))
		return false;
	if (bytes && srd_sges_xfer(qp, w->sge, w->num_sge, len, false)) {
		srd_qp_close(qp);
		return true;
	}
	mutex_lock(&qp->resp_mutex);
	srd_sq_await_pop(qp);
	w->status = h->status;
	w->done = true;
	mutex_unlock(&qp->resp_mutex);
	queue_work(system_unbound_wq, &qp->tx_work);
	return true;
}

/**
 * srd_sq_stop() - the connection ends: no answer is awaited any more
 * @qp: the QP (closing, in ERROR)
 *
 * Every work request still waiting completes with IB_WC_WR_FLUSH_ERR,
 * and none waits from now on (srd_sq_await() refuses) until the QP is
 * connected again.  Returns once the send worker has completed them and
 * freed (or handed to the QP's stale windows) their windows.
 *
 * Context: the receive thread as it ends, before the endpoint's close;
 * sleeps.
 */
void srd_sq_stop(struct srd_qp *qp)
{
	struct srd_swqe *w;

	mutex_lock(&qp->resp_mutex);
	qp->await_stop = true;
	while (qp->await_count) {
		w = srd_sq_await_pop(qp);
		w->status = IB_WC_WR_FLUSH_ERR;
		w->done = true;
	}
	mutex_unlock(&qp->resp_mutex);
	queue_work(system_unbound_wq, &qp->tx_work);
	flush_work(&qp->tx_work);
}

/**
 * srd_sq_reg_mr() - IB_WR_REG_MR: make a fast-reg MR's keys valid
 * @qp: the QP it was posted on
 * @w: the work request
 *
 * Context: the send worker.
 * Return: IB_WC_SUCCESS or IB_WC_MW_BIND_ERR.
 */
static enum ib_wc_status srd_sq_reg_mr(struct srd_qp *qp, struct srd_swqe *w)
{
	struct srd_mr *mr = to_srd_mr(w->reg_mr);

	if (w->reg_mr->device != qp->ibqp.device ||
	    w->reg_mr->pd != qp->ibqp.pd || !srd_mr_fast_reg(mr) ||
	    (w->reg_key >> 8) != (mr->ibmr.lkey >> 8) ||
	    (w->reg_access & ~(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			       IB_ACCESS_REMOTE_READ)))
		return IB_WC_MW_BIND_ERR;
	/* Windows over what it mapped before are closed first. */
	WRITE_ONCE(mr->valid, false);
	srd_map_mr_close(qp->dev, mr, false);
	mr->access = w->reg_access;
	mr->iova = w->reg_mr->iova;
	mr->length = w->reg_mr->length;
	WRITE_ONCE(mr->key, w->reg_key);
	WRITE_ONCE(mr->valid, true);
	return IB_WC_SUCCESS;
}

/**
 * srd_sq_local_inv() - IB_WR_LOCAL_INV: the key must name a fast-reg MR
 * of the QP's PD
 * @qp: the QP it was posted on
 * @key: the key
 *
 * Context: the send worker.
 * Return: IB_WC_SUCCESS or IB_WC_LOC_PROT_ERR.
 */
static enum ib_wc_status srd_sq_local_inv(struct srd_qp *qp, u32 key)
{
	struct srd_mr *mr = srd_mr_lookup(qp->dev, key, qp->ibqp.pd);
	enum ib_wc_status st = IB_WC_LOC_PROT_ERR;

	if (mr && srd_mr_fast_reg(mr)) {
		WRITE_ONCE(mr->valid, false);
		srd_map_mr_close(qp->dev, mr, false);
		st = IB_WC_SUCCESS;
	}
	srd_mr_put(mr);
	return st;
}

/**
 * srd_sq_read_inv() - the invalidation an RDMA_READ_WITH_INV ends with
 * @qp: the QP it was posted on
 * @key: the work request's invalidate_rkey
 *
 * Only the key's index counts, as in iWARP: rdma_rw names the sink MR
 * by the key it had before the IB_WR_REG_MR of the same chain gave it a
 * new one.  The MR at that index, a fast-reg MR of the QP's PD, becomes
 * invalid.
 *
 * Context: the send worker.
 * Return: IB_WC_SUCCESS or IB_WC_LOC_PROT_ERR.
 */
static enum ib_wc_status srd_sq_read_inv(struct srd_qp *qp, u32 key)
{
	enum ib_wc_status st = IB_WC_LOC_PROT_ERR;
	struct srd_mr *mr;

	rcu_read_lock();	/* an MR is freed after a grace period */
	mr = xa_load(&qp->dev->mrs, key >> 8);
	if (mr && (mr->ibmr.pd != qp->ibqp.pd || !srd_mr_fast_reg(mr) ||
		   !refcount_inc_not_zero(&mr->refs)))
		mr = NULL;
	rcu_read_unlock();
	if (mr) {
		WRITE_ONCE(mr->valid, false);
		srd_map_mr_close(qp->dev, mr, false);
		st = IB_WC_SUCCESS;
	}
	srd_mr_put(mr);
	return st;
}

/*
 * A WRITE or READ of at most SRD_INLINE_MAX bytes with no window: a
 * WRITE's bytes follow its frame, a READ's come after its answer, which
 * the send worker does not wait for here (srd_sq_answer() takes it).
 */
static enum ib_wc_status srd_sq_inline(struct srd_qp *qp,
				       struct srd_swqe *w,
				       struct srd_hdr *h, u64 len)
{
	bool read = h->type == SRD_F_READ_REQ;
	bool err;

	h->flags |= SRD_F_INLINE;
	w->inl = true;
	if (!srd_sq_await(qp, w, read ? SRD_F_READ_RESP : SRD_F_ACK))
		return IB_WC_WR_FLUSH_ERR;
	srd_tx_lock(qp);
	err = srd_xfer(qp, qp->epd, h, sizeof(*h), true, 0) ||
	      (!read && srd_sges_xfer(qp, w->sge, w->num_sge, len, true));
	mutex_unlock(&qp->tx_mutex);
	if (err)
		srd_qp_close(qp);	/* the connection's end flushes it */
	return IB_WC_SUCCESS;
}

/*
 * A WRITE or READ by the responder's RMA: its window (if it moves any
 * bytes), then its frame, whose answer srd_sq_answer() takes.
 */
static enum ib_wc_status srd_sq_frames(struct srd_qp *qp,
				       struct srd_swqe *w,
				       struct srd_hdr *h, u64 len)
{
	enum ib_wc_status st;

	st = len ? srd_rma_window(qp, w, h, len) : IB_WC_SUCCESS;
	if (st != IB_WC_SUCCESS)
		return st;
	if (!srd_sq_await(qp, w, h->type == SRD_F_WRITE ? SRD_F_ACK :
			  SRD_F_READ_RESP))
		return IB_WC_WR_FLUSH_ERR;
	if (srd_send_hdr(qp, h))
		srd_qp_close(qp);	/* the connection's end flushes it */
	return IB_WC_SUCCESS;
}

/*
 * An RDMA WRITE or READ, straight to the peer's window (done here), in
 * the frames (small ones) or by the responder's RMA (both then wait for
 * the answer), counted: its completion status so far.
 */
static enum ib_wc_status srd_sq_rma(struct srd_qp *qp, struct srd_swqe *w,
				    struct srd_hdr *h, u64 len)
{
	enum srd_stat stat = h->type == SRD_F_WRITE ? SRD_STAT_WRITE_REQS :
			     SRD_STAT_READ_REQS;
	enum ib_wc_status st;

	w->len = len;
	if (srd_rma_direct(qp, w, len, &st)) {
		srd_stat_add(qp->dev, stat, 1);
		srd_stat_add(qp->dev, SRD_STAT_DIRECT_REQS, 1);
		if (qp->sq_caller)
			srd_stat_add(qp->dev, SRD_STAT_POSTER_REQS, 1);
		return st;
	}
	if (qp->sq_caller) {	/* by frames: the send worker's */
		qp->sq_defer = true;
		return IB_WC_SUCCESS;
	}
	srd_stat_add(qp->dev, stat, 1);
	if (len && len <= SRD_INLINE_MAX) {
		srd_stat_add(qp->dev, SRD_STAT_INLINE_REQS, 1);
		return srd_sq_inline(qp, w, h, len);
	}
	return srd_sq_frames(qp, w, h, len);
}

/* One data work request on the connection: its completion status. */
static enum ib_wc_status srd_sq_data(struct srd_qp *qp, struct srd_swqe *w)
{
	bool read = w->opcode == IB_WR_RDMA_READ;
	struct srd_hdr h = { .imm = w->imm };
	bool err;
	u64 len;

	if (srd_sges_ok(qp, w->sge, w->num_sge,
			read ? IB_ACCESS_LOCAL_WRITE : 0, &len))
		return IB_WC_LOC_PROT_ERR;
	h.len = cpu_to_le32(len);
	h.rkey = cpu_to_le32(w->rkey);
	h.addr = cpu_to_le64(w->remote_addr);
	if (w->opcode == IB_WR_SEND_WITH_IMM ||
	    w->opcode == IB_WR_RDMA_WRITE_WITH_IMM)
		h.flags = SRD_F_IMM;
	if (w->opcode == IB_WR_SEND_WITH_INV)
		h.flags = SRD_F_INV;
	if (w->opcode == IB_WR_SEND || w->opcode == IB_WR_SEND_WITH_IMM ||
	    w->opcode == IB_WR_SEND_WITH_INV)
		h.type = SRD_F_SEND;
	else if (read)
		h.type = SRD_F_READ_REQ;
	else
		h.type = SRD_F_WRITE;
	if (h.type != SRD_F_SEND)
		return srd_sq_rma(qp, w, &h, len);
	/* What the key resolved to goes with the MR: asked again. */
	if (w->opcode == IB_WR_SEND_WITH_INV)
		srd_rkey_forget(qp, w->rkey);
	/* A poster never waits for the peer to make room: the worker may. */
	if (qp->sq_caller && !srd_tx_room(qp)) {
		qp->sq_defer = true;
		return IB_WC_SUCCESS;
	}
	/* Header and payload at once: no answer may come between them. */
	srd_tx_lock(qp);
	err = srd_xfer(qp, qp->epd, &h, sizeof(h), true, 0) ||
	      srd_sges_xfer(qp, w->sge, w->num_sge, len, true);
	mutex_unlock(&qp->tx_mutex);
	if (err) {
		srd_qp_close(qp);	/* a frame cut short: the stream is lost */
		return IB_WC_WR_FLUSH_ERR;
	}
	srd_stat_add(qp->dev, SRD_STAT_SENDS, 1);
	if (qp->sq_caller)
		srd_stat_add(qp->dev, SRD_STAT_POSTER_REQS, 1);
	return IB_WC_SUCCESS;
}

/**
 * srd_sq_do_wr() - do a send work request's part on this side
 * @qp: the QP
 * @w: the work request, the oldest not taken yet
 *
 * A local operation is done; a SEND has left; a WRITE or READ has moved
 * its bytes (straight to the peer's window), or its request has left and
 * @w->resp says which answer it waits for.
 *
 * Context: the send worker; sleeps.
 * Return: its completion status, or IB_WC_SUCCESS while it waits for
 * its answer.
 */
static enum ib_wc_status srd_sq_do_wr(struct srd_qp *qp, struct srd_swqe *w)
{
	enum ib_wc_status st;

	if (w->opcode == IB_WR_REG_MR)
		return srd_sq_reg_mr(qp, w);
	if (w->opcode == IB_WR_LOCAL_INV)
		return srd_sq_local_inv(qp, w->rkey);
	st = srd_rma_check(qp, w);	/* local limits, connected or not */
	if (st != IB_WC_SUCCESS)
		return st;
	if (!READ_ONCE(qp->epd))
		return IB_WC_WR_FLUSH_ERR;
	return srd_sq_data(qp, w);
}

/* The oldest taken work request is done: complete it, in order. */
static void srd_sq_complete(struct srd_qp *qp, struct srd_swqe *w)
{
	enum ib_wc_status st = w->status;

	if (w->win)
		st = srd_rma_finish(qp, w, st);
	if (st == IB_WC_SUCCESS && w->read_inv)
		st = srd_sq_read_inv(qp, w->inv_key);
	if (st == IB_WC_SUCCESS && srd_rma_op(w->opcode))
		srd_stat_add(qp->dev, SRD_STAT_REQ_BYTES, w->len);
	if (st != IB_WC_SUCCESS || w->signaled)
		srd_complete(&qp->ibqp, qp->ibqp.send_cq, w->wr_id,
			     srd_wc_opcode(w->opcode), st);
	if (st != IB_WC_SUCCESS && st != IB_WC_WR_FLUSH_ERR)
		srd_set_state(qp, IB_QPS_ERR);
}

/* Complete the taken work requests that are done, oldest first. */
static void srd_sq_retire(struct srd_qp *qp)
{
	unsigned long flags;
	struct srd_swqe *w;
	bool done;

	while (qp->sq_taken) {
		w = &qp->sq[qp->sq_head];
		mutex_lock(&qp->resp_mutex);
		done = w->done;
		mutex_unlock(&qp->resp_mutex);
		if (!done)
			return;
		srd_sq_complete(qp, w);
		spin_lock_irqsave(&qp->lock, flags);
		qp->sq_head = (qp->sq_head + 1) % qp->max_send_wr;
		qp->sq_count--;
		srd_uqp_state(qp);
		spin_unlock_irqrestore(&qp->lock, flags);
		if (!--qp->sq_taken)
			qp->sq_hold = false;
	}
}

/* May @w leave now, with the answers awaited so far? */
static bool srd_sq_may_take(struct srd_qp *qp, const struct srd_swqe *w)
{
	u32 waiting, win;

	mutex_lock(&qp->resp_mutex);
	waiting = qp->await_count;
	win = qp->await_win;
	mutex_unlock(&qp->resp_mutex);
	if (!waiting)
		return true;
	if (waiting >= SRD_SQ_AWAIT || w->fence ||
	    w->opcode == IB_WR_REG_MR || w->opcode == IB_WR_LOCAL_INV)
		return false;
	return !srd_rma_overtakes(qp, w, win < SRD_SQ_AWAIT_WIN);
}

/*
 * The next work request to take, and whether it is flushed (posted in
 * ERROR, or before it; or a RESET after it), or NULL: none, or it must
 * wait for answers or for the completion of one that holds the queue.
 */
static struct srd_swqe *srd_sq_next(struct srd_qp *qp, bool *flush)
{
	struct srd_swqe *w = NULL;
	unsigned long flags;

	if (qp->sq_hold)
		return NULL;
	spin_lock_irqsave(&qp->lock, flags);
	if (qp->sq_taken < qp->sq_count)
		w = &qp->sq[(qp->sq_head + qp->sq_taken) % qp->max_send_wr];
	*flush = qp->state == IB_QPS_ERR || qp->state == IB_QPS_RESET;
	/* Connected without the CM: wait for the dialer (srd_qp_connected). */
	if (!*flush && qp->direct && !qp->epd)
		w = NULL;
	spin_unlock_irqrestore(&qp->lock, flags);
	if (w && !*flush && !srd_sq_may_take(qp, w))
		return NULL;
	return w;
}

/* Take @w: do its part, or flush it. */
static void srd_sq_take(struct srd_qp *qp, struct srd_swqe *w, bool flush)
{
	enum ib_wc_status st;

	lockdep_assert_held(&qp->sq_mutex);
	st = flush ? IB_WC_WR_FLUSH_ERR : srd_sq_do_wr(qp, w);
	if (qp->sq_defer)
		return;		/* not taken: the send worker's */
	qp->sq_taken++;
	if (w->resp)
		return;		/* srd_sq_answer() or srd_sq_stop() ends it */
	w->status = st;
	w->done = true;
	/* Nothing after an error, or after a READ that may yet fail. */
	if ((st != IB_WC_SUCCESS && st != IB_WC_WR_FLUSH_ERR) ||
	    (w->read_inv && !flush))
		qp->sq_hold = true;
}

/*
 * May a user QP's poster take @w itself: a SEND of at most
 * SRD_INLINE_MAX bytes (its frame leaves at once when the ring has room),
 * or a WRITE or READ that goes straight to a known window?
 */
static bool srd_sq_poster_may(struct srd_qp *qp, const struct srd_swqe *w)
{
	switch (w->opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		return srd_swqe_len(w) <= SRD_INLINE_MAX;
	default:
		return srd_rma_direct_known(qp, w);
	}
}

/*
 * Take and complete what can be, in order; a poster (@qp->sq_caller)
 * takes only small SENDs and what moves straight to the peer's window
 * without a frame (and flushed work requests).  Return: true if the send
 * worker must go on from a work request the poster left.
 */
static bool srd_sq_run(struct srd_qp *qp)
{
	struct srd_swqe *w;
	bool flush;

	lockdep_assert_held(&qp->sq_mutex);
	for (;;) {
		srd_sq_retire(qp);
		w = srd_sq_next(qp, &flush);
		if (!w)
			return false;
		if (qp->sq_caller && !flush && !srd_sq_poster_may(qp, w))
			return true;
		srd_sq_take(qp, w, flush);
		if (qp->sq_defer) {
			qp->sq_defer = false;
			return true;
		}
	}
}

/**
 * srd_sq_work() - the send worker: do the send ring's work requests
 * @work: the QP's tx_work
 *
 * Queued by post_send, by an answer, by the move to ERROR and by
 * srd_sq_stop(); returns when nothing more can be done before an answer
 * comes.
 *
 * Context: a workqueue; sleeps; takes the QP's sq_mutex, so never runs
 * at once with another run of the QP's send queue.
 */
void srd_sq_work(struct work_struct *work)
{
	struct srd_qp *qp = container_of(work, struct srd_qp, tx_work);

	mutex_lock(&qp->sq_mutex);
	srd_sq_run(qp);
	mutex_unlock(&qp->sq_mutex);
}

/**
 * srd_sq_kick() - work requests were posted: have them done
 * @qp: the QP
 *
 * For a user QP whose send queue no one is running, the posting thread
 * does at once, before ibv_post_send() returns, the SENDs of at most
 * SRD_INLINE_MAX bytes and the WRITEs and READs of at most
 * SRD_SQ_CALLER_MAX bytes that go straight into a window the peer
 * opened (scif_rdma_rma.c), and completes them: a hand-off to the send
 * worker is a wake-up, and the worker may wait a whole time slice
 * behind the poster, which polls its CQ meanwhile.  A SEND is left to
 * the worker when the ring has no room (the poster then waits at most
 * for the rest of a frame it began).  SCIF's RMA waits only killably,
 * and srd_xfer() waits for ring room killably, so no signal but a fatal
 * one fails the work request.  Anything else, and all of a kernel
 * consumer's work requests (posted in any context), go to the send
 * worker.
 *
 * Context: any, for a kernel QP; process context for a user QP (the
 * uverbs post_send command): sleeps then.
 */
void srd_sq_kick(struct srd_qp *qp)
{
	bool worker = true;

	if (qp->uc && mutex_trylock(&qp->sq_mutex)) {
		qp->sq_caller = true;
		worker = srd_sq_run(qp);
		qp->sq_caller = false;
		mutex_unlock(&qp->sq_mutex);
	}
	if (worker)
		queue_work(system_unbound_wq, &qp->tx_work);
}
