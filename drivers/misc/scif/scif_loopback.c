// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF loopback bus: this node reaching itself.
 *
 * Always present.  Peer memory is local memory, so an address a "peer"
 * publishes is a physical address of this node and mapping it is a
 * lookup in the linear map.  The doorbell is a direct call into the core.
 * The data still goes through the queue pairs and rings the core uses
 * for every other bus.
 */
#include <linux/err.h>
#include <linux/io.h>
#include <linux/mm.h>

#include "scif_priv.h"

static u64 scif_loopback_qp;

static void *scif_loopback_map(struct scif_hw_dev *hw, u16 node, u64 addr,
			       size_t len)
{
	phys_addr_t end;

	if (node != scif_info.self || check_add_overflow(addr, (u64)len, &end) ||
	    !pfn_valid(PHYS_PFN(addr)) || !pfn_valid(PHYS_PFN(end - 1)))
		return ERR_PTR(-EINVAL);
	return phys_to_virt(addr);
}

static void scif_loopback_unmap(struct scif_hw_dev *hw, u16 node, void *va,
				size_t len)
{
}

/* The "peer's" memory is this node's RAM, pinned by the window. */
static int scif_loopback_peer_phys(struct scif_hw_dev *hw, u16 node, u64 addr,
				   size_t len, phys_addr_t *phys)
{
	void *va = scif_loopback_map(hw, node, addr, len);

	if (IS_ERR(va))
		return PTR_ERR(va);
	*phys = addr;
	return 0;
}

static u64 scif_loopback_local_addr(struct scif_hw_dev *hw, phys_addr_t phys)
{
	return phys;
}

static void scif_loopback_publish_qp(struct scif_hw_dev *hw, u16 node,
				     u64 addr)
{
	WRITE_ONCE(scif_loopback_qp, addr);
}

static u64 scif_loopback_peer_qp(struct scif_hw_dev *hw, u16 node)
{
	return READ_ONCE(scif_loopback_qp);
}

static void scif_loopback_ring(struct scif_hw_dev *hw, u16 node)
{
	scif_hw_doorbell(hw, node);
}

static const struct scif_hw_ops scif_loopback_ops = {
	.map_peer = scif_loopback_map,
	.unmap_peer = scif_loopback_unmap,
	.peer_phys = scif_loopback_peer_phys,
	.local_addr = scif_loopback_local_addr,
	.publish_qp = scif_loopback_publish_qp,
	.peer_qp = scif_loopback_peer_qp,
	.ring = scif_loopback_ring,
};

static struct scif_hw_dev scif_loopback_dev = {
	.name = "loopback",
	.ops = &scif_loopback_ops,
};

/**
 * scif_loopback_init() - bring up the loopback bus and this node
 *
 * Return: 0 or a negative errno.
 */
int scif_loopback_init(void)
{
	int err;

	err = scif_hw_register(&scif_loopback_dev);
	if (err)
		return err;
	err = scif_hw_node_up(&scif_loopback_dev, scif_info.self);
	if (err)
		scif_hw_unregister(&scif_loopback_dev);
	return err;
}

/**
 * scif_loopback_exit() - take this node and the loopback bus down
 */
void scif_loopback_exit(void)
{
	scif_hw_unregister(&scif_loopback_dev);
}
