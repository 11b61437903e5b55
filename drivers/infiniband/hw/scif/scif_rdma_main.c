// SPDX-License-Identifier: GPL-2.0
/*
 * scif_rdma: the module, the device and its port (rdma.rst).
 *
 * A device is made by "rdma link add NAME type scif netdev sn<peer>"
 * for one scif_net interface, and goes with that interface, with
 * "rdma link delete" or with the module.
 */

#include <linux/etherdevice.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/scif_net.h>
#include <net/addrconf.h>
#include <rdma/ib_verbs.h>
#include <rdma/iw_cm.h>
#include <rdma/rdma_netlink.h>

#include "scif_rdma.h"

/*
 * The devices of the module; srd_devs_lock protects the list.  Lock
 * order: RTNL (the netdev notifier's, and srd_newlink()'s), then
 * srd_devs_lock.
 */
static LIST_HEAD(srd_devs);
static DEFINE_MUTEX(srd_devs_lock);

static int srd_query_device(struct ib_device *ibdev,
			    struct ib_device_attr *attr, struct ib_udata *udata)
{
	struct srd_dev *dev = to_srd_dev(ibdev);

	if (udata && (udata->inlen || udata->outlen))
		return -EOPNOTSUPP;
	memset(attr, 0, sizeof(*attr));
	attr->max_mr_size = SRD_MAX_MSG;
	attr->page_size_cap = PAGE_SIZE;
	attr->vendor_id = 0xffffff;
	attr->hw_ver = 1;
	attr->max_qp = SRD_MAX_QP;
	attr->max_qp_wr = SRD_MAX_WR;
	attr->device_cap_flags = IB_DEVICE_MEM_MGT_EXTENSIONS;
	/* "rdma link delete" may remove the device. */
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	attr->max_send_sge = SRD_MAX_SGE;
	attr->max_recv_sge = SRD_MAX_SGE;
	attr->max_sge_rd = SRD_MAX_SGE;
	attr->max_cq = SRD_MAX_CQ;
	attr->max_cqe = SRD_MAX_CQE;
	attr->max_mr = SRD_MAX_MR;
	attr->max_pd = SRD_MAX_PD;
	attr->max_srq = SRD_MAX_SRQ;
	attr->max_srq_wr = SRD_MAX_SRQ_WR;
	attr->max_srq_sge = SRD_MAX_SGE;
	attr->max_qp_rd_atom = 1;
	attr->max_qp_init_rd_atom = 1;
	attr->max_res_rd_atom = SRD_MAX_QP;
	attr->atomic_cap = IB_ATOMIC_NONE;
	attr->max_fast_reg_page_list_len = SRD_MAX_FR_PAGES;
	attr->max_pkeys = 1;
	ether_addr_copy((u8 *)&attr->sys_image_guid, dev->ndev->dev_addr);
	return 0;
}

static bool srd_ndev_up(struct net_device *ndev)
{
	return netif_running(ndev) && netif_carrier_ok(ndev);
}

static int srd_query_port(struct ib_device *ibdev, u32 port,
			  struct ib_port_attr *attr)
{
	struct srd_dev *dev = to_srd_dev(ibdev);
	bool up = srd_ndev_up(dev->ndev);

	/* ib_core zeroes *attr before calling. */
	attr->state = up ? IB_PORT_ACTIVE : IB_PORT_DOWN;
	attr->phys_state = up ? IB_PORT_PHYS_STATE_LINK_UP :
				IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = IB_MTU_4096;
	attr->gid_tbl_len = SRD_GIDS;
	attr->pkey_tbl_len = 1;
	attr->port_cap_flags = IB_PORT_CM_SUP | IB_PORT_DEVICE_MGMT_SUP;
	attr->max_msg_sz = SRD_MAX_MSG;
	attr->active_width = IB_WIDTH_4X;
	attr->active_speed = IB_SPEED_EDR;
	return 0;
}

static int srd_get_port_immutable(struct ib_device *ibdev, u32 port,
				  struct ib_port_immutable *imm)
{
	imm->gid_tbl_len = SRD_GIDS;
	imm->pkey_tbl_len = 1;
	imm->core_cap_flags = RDMA_CORE_PORT_IWARP;
	return 0;
}

/*
 * GID 0 is the MAC address, zero-padded (as rdma_cm computes an iWARP
 * port's); GID 1 the link-local form of the same address (fe80:: and the
 * EUI-64 of the MAC), whose interface id is not zero.  Either, as the
 * destination of a QP connected by modify_qp, names this node
 * (srd_direct_node()).
 */
static int srd_query_gid(struct ib_device *ibdev, u32 port, int index,
			 union ib_gid *gid)
{
	struct srd_dev *dev = to_srd_dev(ibdev);

	if (index < 0 || index >= SRD_GIDS)
		return -EINVAL;
	srd_direct_gid(dev, index, gid);
	return 0;
}

static int srd_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			  u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = 0xffff;
	return 0;
}

static void srd_dealloc_driver(struct ib_device *ibdev)
{
	struct srd_dev *dev = to_srd_dev(ibdev);
	struct srd_ucount *uc;
	unsigned long uid;

	mutex_lock(&srd_devs_lock);
	list_del(&dev->list);
	mutex_unlock(&srd_devs_lock);
	WARN_ON(!xa_empty(&dev->qps));
	WARN_ON(!xa_empty(&dev->mrs));
	xa_destroy(&dev->qps);
	xa_destroy(&dev->mrs);
	xa_for_each(&dev->ucounts, uid, uc)
		kfree(uc);
	xa_destroy(&dev->ucounts);
	dev_put(dev->ndev);
}

static const struct ib_device_ops srd_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = 1,

	.query_device = srd_query_device,
	.query_port = srd_query_port,
	.get_port_immutable = srd_get_port_immutable,
	.query_gid = srd_query_gid,
	.query_pkey = srd_query_pkey,
	.dealloc_driver = srd_dealloc_driver,

	.alloc_ucontext = srd_alloc_ucontext,
	.dealloc_ucontext = srd_dealloc_ucontext,
	.alloc_pd = srd_alloc_pd,
	.dealloc_pd = srd_dealloc_pd,
	.create_cq = srd_create_cq,
	.destroy_cq = srd_destroy_cq,
	.poll_cq = srd_poll_cq,
	.req_notify_cq = srd_req_notify_cq,
	.mmap = srd_mmap,
	.mmap_free = srd_umap_mmap_free,
	.get_dma_mr = srd_get_dma_mr,
	.reg_user_mr = srd_reg_user_mr,
	.reg_user_mr_dmabuf = srd_reg_user_mr_dmabuf,
	.alloc_mr = srd_alloc_mr,
	.map_mr_sg = srd_map_mr_sg,
	.dereg_mr = srd_dereg_mr,
	.create_qp = srd_create_qp,
	.modify_qp = srd_modify_qp,
	.query_qp = srd_query_qp,
	.destroy_qp = srd_destroy_qp,
	.post_send = srd_post_send,
	.post_recv = srd_post_recv,
	.create_srq = srd_create_srq,
	.modify_srq = srd_modify_srq,
	.query_srq = srd_query_srq,
	.destroy_srq = srd_destroy_srq,
	.post_srq_recv = srd_post_srq_recv,

	.alloc_hw_port_stats = srd_alloc_hw_port_stats,
	.get_hw_stats = srd_get_hw_stats,

	.iw_add_ref = srd_iw_add_ref,
	.iw_rem_ref = srd_iw_rem_ref,
	.iw_get_qp = srd_iw_get_qp,
	.iw_connect = srd_iw_connect,
	.iw_accept = srd_iw_accept,
	.iw_reject = srd_iw_reject,
	.iw_create_listen = srd_iw_create_listen,
	.iw_destroy_listen = srd_iw_destroy_listen,

	INIT_RDMA_OBJ_SIZE(ib_ucontext, srd_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_pd, srd_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_cq, srd_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_qp, srd_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, srd_srq, ibsrq),
};

/* The device on @ndev, with srd_devs_lock held; NULL if none. */
static struct srd_dev *srd_find(struct net_device *ndev)
{
	struct srd_dev *dev;

	lockdep_assert_held(&srd_devs_lock);
	list_for_each_entry(dev, &srd_devs, list)
		if (dev->ndev == ndev)
			return dev;
	return NULL;
}

static struct srd_dev *srd_dev_alloc(struct net_device *ndev, int peer)
{
	struct srd_dev *dev;
	struct ib_device *ibdev;

	dev = ib_alloc_device(srd_dev, ibdev);
	if (!dev)
		return NULL;
	ibdev = &dev->ibdev;
	dev->ndev = ndev;
	dev->peer = peer;
	INIT_LIST_HEAD(&dev->list);
	mutex_init(&dev->cm_lock);
	mutex_init(&dev->map_mutex);
	init_waitqueue_head(&dev->map_wq);
	INIT_LIST_HEAD(&dev->listens);
	xa_init_flags(&dev->qps, XA_FLAGS_ALLOC1);
	xa_init_flags(&dev->mrs, XA_FLAGS_ALLOC1);
	xa_init(&dev->ucounts);
	/* The netdev's parent (scif_net's link device), as a NIC's. */
	ibdev->dev.parent = ndev->dev.parent;
	ibdev->node_type = RDMA_NODE_RNIC;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = 1;
	ibdev->iw_driver_flags = IW_F_NO_PORT_MAP;
	memcpy(ibdev->iw_ifname, ndev->name, sizeof(ibdev->iw_ifname));
	addrconf_addr_eui48((u8 *)&ibdev->node_guid, ndev->dev_addr);
	strscpy(ibdev->node_desc, "scif_rdma", sizeof(ibdev->node_desc));
	/*
	 * User space posts and polls through these commands (no queues are
	 * shared with it): ib_core leaves them off unless a driver asks.
	 */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POLL_CQ) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_RECV) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_SRQ_RECV);
	ib_set_device_ops(ibdev, &srd_ops);
	return dev;
}

/*
 * rdma link add NAME type scif netdev sn<peer> (or sn).  Once on the list the
 * device is undone by ib_dealloc_device (dealloc_driver), which takes
 * it off again and drops the netdev reference.
 */
static int srd_newlink(const char *name, struct net_device *ndev)
{
	struct srd_dev *dev;
	int peer, err;

	peer = scif_net_peer(ndev);
	if (peer < 0)
		return -EINVAL;
	/* RTNL first, as the netdev notifier holds it when it takes
	 * srd_devs_lock: the port state read here is what its first event
	 * changes from.
	 */
	rtnl_lock();
	mutex_lock(&srd_devs_lock);
	dev = srd_find(ndev) ? ERR_PTR(-EEXIST) : srd_dev_alloc(ndev, peer);
	if (!IS_ERR_OR_NULL(dev)) {
		dev_hold(ndev);
		dev->port_up = srd_ndev_up(ndev);
		list_add_tail(&dev->list, &srd_devs);
	}
	mutex_unlock(&srd_devs_lock);
	rtnl_unlock();
	if (IS_ERR_OR_NULL(dev))
		return dev ? PTR_ERR(dev) : -ENOMEM;
	err = ib_device_set_netdev(&dev->ibdev, ndev, 1);
	if (err)
		goto dealloc;
	err = ib_register_device(&dev->ibdev, name, NULL);
	if (err)
		goto dealloc;
	return 0;
dealloc:
	ib_dealloc_device(&dev->ibdev);
	return err;
}

/*
 * The device whose netdev leads to @node (with @shared, the one on sn),
 * or for this node itself the device of index @index (on sn with
 * @shared), with a reference (ib_device_put), or NULL: the CM's
 * srd_dev_of_peer_fn.
 */
static struct srd_dev *srd_dev_of_peer(u16 node, u32 index, bool shared)
{
	struct srd_dev *dev, *found = NULL;
	bool self_node;
	u16 self;

	scif_get_node_ids(NULL, 0, &self);
	self_node = node == self;
	mutex_lock(&srd_devs_lock);
	list_for_each_entry(dev, &srd_devs, list) {
		if (srd_dev_shared(dev) != shared)
			continue;
		if ((self_node ? dev->ibdev.index == index :
				 shared || dev->peer == node) &&
		    ib_device_try_get(&dev->ibdev)) {
			found = dev;
			break;
		}
	}
	mutex_unlock(&srd_devs_lock);
	return found;
}

static struct rdma_link_ops srd_link_ops = {
	.type = "scif",
	.newlink = srd_newlink,
};

/*
 * IB_EVENT_PORT_ACTIVE or IB_EVENT_PORT_ERR when the port's state (the
 * interface up with a carrier, as query_port says) is not the one last
 * reported: a notification that changes nothing the port shows (a
 * carrier change while the interface is down) makes no event.
 */
static void srd_port_event(struct srd_dev *dev)
{
	struct ib_event ev = {
		.device = &dev->ibdev,
		.element.port_num = 1,
	};
	bool up = srd_ndev_up(dev->ndev);

	ASSERT_RTNL();
	if (up == dev->port_up)
		return;
	dev->port_up = up;
	ev.event = up ? IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR;
	ib_dispatch_event(&ev);
}

static int srd_netdev_event(struct notifier_block *nb, unsigned long event,
			    void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct srd_dev *dev;

	mutex_lock(&srd_devs_lock);
	dev = srd_find(ndev);
	if (!dev || !ib_device_try_get(&dev->ibdev)) {
		mutex_unlock(&srd_devs_lock);
		return NOTIFY_DONE;
	}
	mutex_unlock(&srd_devs_lock);
	switch (event) {
	case NETDEV_UNREGISTER:
		ib_unregister_device_queued(&dev->ibdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		srd_port_event(dev);
		break;
	}
	ib_device_put(&dev->ibdev);
	return NOTIFY_OK;
}

static struct notifier_block srd_netdev_nb = {
	.notifier_call = srd_netdev_event,
};

static int __init srd_init(void)
{
	int err;

	err = srd_cm_init(srd_dev_of_peer);
	if (err)
		return err;
	err = register_netdevice_notifier(&srd_netdev_nb);
	if (err) {
		srd_cm_exit();
		return err;
	}
	rdma_link_register(&srd_link_ops);
	return 0;
}

/* Unregister every device; dealloc_driver takes it off the list. */
static void __exit srd_exit(void)
{
	struct srd_dev *dev;

	rdma_link_unregister(&srd_link_ops);
	unregister_netdevice_notifier(&srd_netdev_nb);
	srd_cm_exit();
	for (;;) {
		mutex_lock(&srd_devs_lock);
		dev = list_first_entry_or_null(&srd_devs, struct srd_dev, list);
		if (dev)
			get_device(&dev->ibdev.dev);
		mutex_unlock(&srd_devs_lock);
		if (!dev)
			break;
		ib_unregister_device(&dev->ibdev);
		put_device(&dev->ibdev.dev);
	}
}

module_init(srd_init);
module_exit(srd_exit);
MODULE_DESCRIPTION("RDMA verbs over SCIF: an iWARP-style device per scif_net interface");
MODULE_LICENSE("GPL");
MODULE_VERSION("0.1.0");
MODULE_ALIAS_RDMA_LINK("scif");
