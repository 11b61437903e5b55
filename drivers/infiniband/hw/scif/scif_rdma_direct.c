// SPDX-License-Identifier: GPL-2.0
/*
 * scif_rdma: QPs connected without the CM (rdma.rst, "QPs connected by
 * modify_qp").  A program that trades QP numbers out of band, as
 * ibv_rc_pingpong does, moves its QP to RTR with the peer's QP number
 * (IB_QP_DEST_QPN); the other end is that QP on the device's peer node,
 * or on this node when the address handle's GID is one of this port's
 * (a loopback connection, as any RDMA device has: srd_direct_node()).
 * Of the two QPs, the lower by (node, QP number) dials: its work item
 * connects from a privileged port to the peer's CM listener (SCIF port
 * 702) and sends DIRECT with both numbers.  The listener hands it to
 * srd_direct_accept(), which connects the named QP if that QP waits for
 * exactly this one, in RTR or RTS.  Until the peer's QP gets there the
 * answer is REJECT and the dialer tries again every SRD_DIRECT_RETRY_MS,
 * for at most SRD_DIRECT_WAIT_MS; then its QP goes to ERROR.  Work
 * requests posted before the connection wait for it (scif_rdma_sq.c).
 */

#include <linux/etherdevice.h>
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/addrconf.h>

#include "scif_rdma.h"

#define SRD_DIRECT_RETRY_MS	50
#define SRD_DIRECT_WAIT_MS	30000

static void srd_direct_work(struct work_struct *work);

/**
 * srd_direct_init() - set up a new QP's part
 * @qp: the QP, being created
 *
 * Context: process.
 */
void srd_direct_init(struct srd_qp *qp)
{
	INIT_DELAYED_WORK(&qp->direct_work, srd_direct_work);
}

/**
 * srd_direct_gid() - one of the port's GIDs
 * @dev: the device
 * @index: 0: the netdev's MAC zero-padded, as rdma_cm computes an iWARP
 *	port's GID; 1: the link-local form of the MAC (fe80::, then the
 *	MAC's EUI-64), whose interface id is not zero
 * @gid: filled
 *
 * Context: any.
 */
void srd_direct_gid(struct srd_dev *dev, int index, union ib_gid *gid)
{
	const u8 *mac = dev->ndev->dev_addr;

	memset(gid, 0, sizeof(*gid));
	if (!index) {
		ether_addr_copy(gid->raw, mac);
		return;
	}
	gid->raw[0] = 0xfe;
	gid->raw[1] = 0x80;
	addrconf_addr_eui48(&gid->raw[8], mac);
}

/*
 * The MAC a GID of the form srd_direct_gid() makes names (of any node's
 * port), or false: index 0's (the MAC, zero-padded) or index 1's
 * (fe80::, the MAC's EUI-64).
 */
static bool srd_direct_gid_mac(const union ib_gid *gid, u8 *mac)
{
	static const u8 zero[10];
	const u8 *r = gid->raw;

	if (!memcmp(r + ETH_ALEN, zero, sizeof(zero))) {
		ether_addr_copy(mac, r);
		return true;
	}
	if (r[0] != 0xfe || r[1] != 0x80 || memcmp(r + 2, zero, 6) ||
	    r[11] != 0xff || r[12] != 0xfe)
		return false;
	mac[0] = r[8] ^ 0x02;
	mac[1] = r[9];
	mac[2] = r[10];
	mac[3] = r[13];
	mac[4] = r[14];
	mac[5] = r[15];
	return true;
}

/**
 * srd_direct_node() - the node a QP moved to RTR is to be connected to
 * @dev: the QP's device
 * @attr: the modify_qp attributes
 * @mask: which of them are given
 *
 * This node when an address handle with a GRH is given whose destination
 * GID is one of the port's (srd_direct_gid()).  Otherwise, on sn, the
 * node whose port has that GID (the MAC it holds names the node); on
 * sn<peer>, the device's peer node, whatever the address handle says
 * (the peer is the only other end the device has).
 *
 * Context: process.
 * Return: the node, or -EINVAL on sn without a GRH naming a node.
 */
int srd_direct_node(struct srd_dev *dev, const struct ib_qp_attr *attr,
		    int mask)
{
	const struct ib_global_route *grh = NULL;
	union ib_gid gid;
	u8 mac[ETH_ALEN];
	u16 self;
	int i;

	if ((mask & IB_QP_AV) &&
	    (rdma_ah_get_ah_flags(&attr->ah_attr) & IB_AH_GRH))
		grh = rdma_ah_read_grh(&attr->ah_attr);
	for (i = 0; grh && i < SRD_GIDS; i++) {
		srd_direct_gid(dev, i, &gid);
		if (!memcmp(&gid, &grh->dgid, sizeof(gid))) {
			scif_get_node_ids(NULL, 0, &self);
			return self;
		}
	}
	if (!srd_dev_shared(dev))
		return dev->peer;
	if (!grh || !srd_direct_gid_mac(&grh->dgid, mac))
		return -EINVAL;
	i = scif_net_node_of(dev->ndev, mac);
	return i < 0 ? -EINVAL : i;
}

/*
 * Whether this end of the pair dials: the lower (node, QP number).
 * Context: process (asks SCIF for this node's id).
 */
static bool srd_direct_dials(struct srd_qp *qp, u16 node, u32 dest_qpn)
{
	u16 self;

	scif_get_node_ids(NULL, 0, &self);
	return self < node || (self == node && qp->ibqp.qp_num < dest_qpn);
}

/**
 * srd_direct_start() - a QP moved to RTR with the other QP's number
 * @qp: the QP, in RTR, not connected
 * @dest_qpn: the other QP's number
 * @node: its node (srd_direct_node())
 *
 * The dialing end starts dialing now; the other waits for the dialer.
 *
 * Context: process.
 * Return: 0, or -EINVAL if the QP has a connection or a CM already.
 */
int srd_direct_start(struct srd_qp *qp, u32 dest_qpn, u16 node)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&qp->lock, flags);
	if (qp->epd || qp->cm_id) {
		err = -EINVAL;
	} else {
		qp->dest_qpn = dest_qpn;
		qp->dest_node = node;
		qp->direct = true;
		qp->direct_until = jiffies +
				   msecs_to_jiffies(SRD_DIRECT_WAIT_MS);
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	if (!err && srd_direct_dials(qp, node, dest_qpn))
		queue_delayed_work(system_unbound_wq, &qp->direct_work, 0);
	return err;
}

/**
 * srd_direct_reset() - a QP moves to RESET: it forgets its peer's number
 * @qp: the QP
 *
 * A dial in progress finds the QP no longer waiting and stops.
 *
 * Context: process.
 */
void srd_direct_reset(struct srd_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->lock, flags);
	qp->direct = false;
	spin_unlock_irqrestore(&qp->lock, flags);
}

/**
 * srd_direct_stop() - no more dialing (the QP is being destroyed)
 * @qp: the QP, marked destroyed
 *
 * Context: process; waits for a dial in progress (at most
 * SRD_CM_WAIT_MS a step).
 */
void srd_direct_stop(struct srd_qp *qp)
{
	cancel_delayed_work_sync(&qp->direct_work);
}

/* Whether @qp still waits for a connection of its own. */
static bool srd_direct_waiting(struct srd_qp *qp)
{
	unsigned long flags;
	bool waiting;

	spin_lock_irqsave(&qp->lock, flags);
	waiting = qp->direct && !qp->epd && !qp->destroyed &&
		  (qp->state == IB_QPS_RTR || qp->state == IB_QPS_RTS);
	spin_unlock_irqrestore(&qp->lock, flags);
	return waiting;
}

/* One dial: 0 and *@epd connected, or -errno (-EAGAIN: not yet). */
static int srd_direct_dial(struct srd_qp *qp, struct srd_cm_msg *m,
			   scif_epd_t *epd)
{
	struct srd_direct_req req = {
		.src_qpn = cpu_to_le32(qp->ibqp.qp_num),
		.dst_qpn = cpu_to_le32(READ_ONCE(qp->dest_qpn)),
	};
	int err;

	*epd = srd_cm_dial(qp->dev, READ_ONCE(qp->dest_node));
	if (IS_ERR(*epd)) {
		err = PTR_ERR(*epd);
		*epd = NULL;
		return err;
	}
	srd_cm_msg_fill(m, SRD_CM_DIRECT, &req, sizeof(req));
	err = srd_cm_msg_xfer(*epd, m, true) ?:
	      srd_cm_msg_xfer(*epd, m, false);
	if (!err && m->type != SRD_CM_ACCEPT)
		err = -EAGAIN;
	if (err) {
		scif_close(*epd);
		*epd = NULL;
	}
	return err;
}

static void srd_direct_work(struct work_struct *work)
{
	struct srd_qp *qp = container_of(to_delayed_work(work), struct srd_qp,
					 direct_work);
	struct srd_cm_msg *m;
	scif_epd_t epd;
	int err = -ENOMEM;

	if (!srd_direct_waiting(qp))
		return;
	m = kmalloc(sizeof(*m), GFP_KERNEL);
	if (m)
		err = srd_direct_dial(qp, m, &epd);
	kfree(m);
	if (!err) {
		err = srd_qp_connected(qp, epd, NULL);
		if (err)
			scif_close(epd);
		return;		/* not connected: the QP is going */
	}
	if (!srd_direct_waiting(qp))
		return;
	if (time_before(jiffies, qp->direct_until)) {
		queue_delayed_work(system_unbound_wq, &qp->direct_work,
				   msecs_to_jiffies(SRD_DIRECT_RETRY_MS));
		return;
	}
	srd_set_state(qp, IB_QPS_ERR);
}

/* The QP @qpn of @dev, with an iw reference, or NULL. */
static struct srd_qp *srd_direct_qp(struct srd_dev *dev, u32 qpn)
{
	struct srd_qp *qp;

	xa_lock(&dev->qps);
	qp = xa_load(&dev->qps, qpn);
	if (qp && !refcount_inc_not_zero(&qp->iw_refs))
		qp = NULL;
	xa_unlock(&dev->qps);
	return qp;
}

/**
 * srd_direct_accept() - a DIRECT from the other end's dialing QP
 * @dev: the device that leads to @node, or the dialing device when
 *	@node is this node
 * @epd: the accepted endpoint (the caller's until this returns true)
 * @node: the dialer's node
 * @m: the DIRECT, as read (hostile)
 *
 * Connects the QP the DIRECT names if that QP waits for exactly the
 * dialer's QP on @node, in RTR or RTS, and answers ACCEPT.
 *
 * Context: process (the CM's listener thread); sleeps.
 * Return: true if @epd is the QP's now; false if the caller is to
 * refuse (REJECT) and close it.
 */
bool srd_direct_accept(struct srd_dev *dev, scif_epd_t epd, u16 node,
		       const struct srd_cm_msg *m)
{
	const struct srd_direct_req *req = (const void *)m->pdata;
	struct srd_cm_msg *ans;
	struct srd_qp *qp;
	bool ok;

	if (m->pdata_len != sizeof(*req))
		return false;
	qp = srd_direct_qp(dev, le32_to_cpu(req->dst_qpn));
	if (!qp)
		return false;
	ok = srd_direct_waiting(qp) &&
	     READ_ONCE(qp->dest_node) == node &&
	     READ_ONCE(qp->dest_qpn) == le32_to_cpu(req->src_qpn) &&
	     !srd_direct_dials(qp, node, qp->dest_qpn);
	ans = ok ? kmalloc(sizeof(*ans), GFP_KERNEL) : NULL;
	if (ans) {
		srd_cm_msg_fill(ans, SRD_CM_ACCEPT, NULL, 0);
		ok = !srd_cm_msg_xfer(epd, ans, true) &&
		     !srd_qp_connected(qp, epd, NULL);
		kfree(ans);
	} else {
		ok = false;
	}
	/* Our reference, dropped as srd_iw_rem_ref() does (a layer up). */
	if (refcount_dec_and_test(&qp->iw_refs))
		complete(&qp->iw_done);
	return ok;
}
