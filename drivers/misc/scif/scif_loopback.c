// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF loopback bus: this node reaching itself.
 *
 * Always present.  Peer memory is local memory, so an address a "peer"
 * publishes is a physical address of this node and mapping it is a
 * lookup in the linear map; local memory is handed out by its physical
 * address (map_local is the identity, unmap_local has nothing to undo).
 * The doorbell is a direct call into the core.  The data still goes
 * through the queue pairs and rings the core uses for every other bus.
 *
 * The bus's device is a platform device of its own, "scif_loopback",
 * registered with the bus (a DMA mask of 64 bits: it reaches all RAM).
 * The bus reaches only this node, whatever its id (SCIF_HW_SELF_ANY):
 * when the id is fixed by another bus, self_moved moves the node.
 */
#include <linux/dma-mapping.h>
#include <linux/err.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/platform_device.h>

#include "scif_hw.h"
#include "scif_info.h"
#include "scif_loopback.h"

/**
 * struct scif_loopback - the loopback bus
 * @hw: as registered
 * @pdev: its device
 * @node: the node it reaches (this node), while registered
 * @qp: where this node's queue for itself lives (publish_qp)
 *
 * The per-node context given to the core is the struct itself.
 */
struct scif_loopback {
	struct scif_hw_dev hw;
	struct platform_device *pdev;
	u16 node;
	u64 qp;
};

static struct scif_loopback scif_loopback;

/* Whether @addr..+@len is RAM of this node. */
static bool scif_loopback_ram(u64 addr, size_t len)
{
	phys_addr_t end;

	return len && !check_add_overflow(addr, (u64)len, &end) &&
	       pfn_valid(PHYS_PFN(addr)) && pfn_valid(PHYS_PFN(end - 1));
}

static void *scif_loopback_map(struct scif_hw_dev *hw, void *ctx, u64 addr,
			       size_t len)
{
	if (!scif_loopback_ram(addr, len))
		return ERR_PTR(-EINVAL);
	return phys_to_virt(addr);
}

static void scif_loopback_unmap(struct scif_hw_dev *hw, void *ctx, void *va,
				size_t len)
{
}

/* The "peer's" memory is this node's RAM, pinned by the window. */
static int scif_loopback_peer_phys(struct scif_hw_dev *hw, void *ctx, u64 addr,
				   size_t len, phys_addr_t *phys)
{
	if (!scif_loopback_ram(addr, len))
		return -EINVAL;
	*phys = addr;
	return 0;
}

static int scif_loopback_map_local(struct scif_hw_dev *hw, void *ctx,
				   phys_addr_t phys, size_t len, u64 *addr)
{
	if (!scif_loopback_ram(phys, len))
		return -EINVAL;
	*addr = phys;
	return 0;
}

static void scif_loopback_unmap_local(struct scif_hw_dev *hw, void *ctx,
				      phys_addr_t phys, size_t len, u64 addr)
{
}

/*
 * A local device reaches the "peer's" memory as this node's: RAM by
 * dma_map_page() (the DMA API refuses dma_map_resource() of RAM), any
 * other physical range (a device window, once loopback maps them) by
 * dma_map_resource().
 */
static int scif_loopback_peer_dma_map(struct scif_hw_dev *hw, void *ctx,
				      struct device *dev, u64 addr, size_t len,
				      enum dma_data_direction dir,
				      dma_addr_t *dma)
{
	phys_addr_t end;
	dma_addr_t d;

	if (!len || check_add_overflow(addr, (u64)len, &end))
		return -EINVAL;
	if (scif_loopback_ram(addr, len))
		d = dma_map_page(dev, pfn_to_page(PHYS_PFN(addr)),
				 offset_in_page(addr), len, dir);
	else if (!pfn_valid(PHYS_PFN(addr)) && !pfn_valid(PHYS_PFN(end - 1)))
		d = dma_map_resource(dev, addr, len, dir, 0);
	else
		return -EINVAL;
	if (dma_mapping_error(dev, d))
		return -ENOMEM;
	*dma = d;
	return 0;
}

static void scif_loopback_peer_dma_unmap(struct scif_hw_dev *hw,
					 struct device *dev, u64 addr,
					 dma_addr_t dma, size_t len,
					 enum dma_data_direction dir)
{
	if (scif_loopback_ram(addr, len))
		dma_unmap_page(dev, dma, len, dir);
	else
		dma_unmap_resource(dev, dma, len, dir, 0);
}

static void scif_loopback_publish_qp(struct scif_hw_dev *hw, void *ctx,
				     u64 addr)
{
	struct scif_loopback *lb = ctx;

	WRITE_ONCE(lb->qp, addr);
}

static u64 scif_loopback_peer_qp(struct scif_hw_dev *hw, void *ctx)
{
	struct scif_loopback *lb = ctx;

	return READ_ONCE(lb->qp);
}

static void scif_loopback_ring(struct scif_hw_dev *hw, void *ctx)
{
	struct scif_loopback *lb = ctx;

	scif_hw_doorbell(hw, READ_ONCE(lb->node));
}

/*
 * Nothing to close: the "peer" memory devices reach through loopback is
 * this node's own, and its life is the module's, which device mappings
 * (files holding /dev/scif) outlive never.
 */
static void scif_loopback_close_aperture(struct scif_hw_dev *hw, u16 node,
					 bool closed)
{
}

/* This node's id was fixed by another bus: the node moves with it. */
static int scif_loopback_self_moved(struct scif_hw_dev *hw, u16 old, u16 self)
{
	struct scif_loopback *lb = container_of(hw, struct scif_loopback, hw);

	scif_hw_node_down(hw, old);
	WRITE_ONCE(lb->node, self);
	return scif_hw_node_up(hw, self, lb);
}

static const struct scif_hw_ops scif_loopback_ops = {
	.map_peer = scif_loopback_map,
	.unmap_peer = scif_loopback_unmap,
	.peer_phys = scif_loopback_peer_phys,
	.map_local = scif_loopback_map_local,
	.unmap_local = scif_loopback_unmap_local,
	.publish_qp = scif_loopback_publish_qp,
	.peer_qp = scif_loopback_peer_qp,
	.ring = scif_loopback_ring,
	.peer_dma_map = scif_loopback_peer_dma_map,
	.peer_dma_unmap = scif_loopback_peer_dma_unmap,
	.close_aperture = scif_loopback_close_aperture,
	.self_moved = scif_loopback_self_moved,
};

static int scif_loopback_device(struct scif_loopback *lb)
{
	int err;

	lb->pdev = platform_device_register_simple("scif_loopback",
						   PLATFORM_DEVID_NONE, NULL, 0);
	if (IS_ERR(lb->pdev))
		return PTR_ERR(lb->pdev);
	err = dma_coerce_mask_and_coherent(&lb->pdev->dev, DMA_BIT_MASK(64));
	if (err)
		platform_device_unregister(lb->pdev);
	return err;
}

/**
 * scif_loopback_init() - bring up the loopback bus and this node
 *
 * Context: process context; may sleep.
 * Return: 0 or a negative errno.
 */
int scif_loopback_init(void)
{
	struct scif_loopback *lb = &scif_loopback;
	int err;

	if (lb->pdev)
		return -EBUSY;
	err = scif_loopback_device(lb);
	if (err)
		return err;
	lb->hw.name = "loopback";
	lb->hw.ops = &scif_loopback_ops;
	lb->hw.dev = &lb->pdev->dev;
	lb->hw.owner = THIS_MODULE;
	lb->hw.self = SCIF_HW_SELF_ANY;
	lb->qp = 0;
	err = scif_hw_register(&lb->hw);
	if (err)
		goto undo_dev;
	/* Registered: the id does not move before node up has read it. */
	lb->node = READ_ONCE(scif_info.self);
	err = scif_hw_node_up(&lb->hw, lb->node, lb);
	if (err)
		goto undo_reg;
	return 0;

undo_reg:
	scif_hw_unregister(&lb->hw);
undo_dev:
	platform_device_unregister(lb->pdev);
	lb->pdev = NULL;
	return err;
}

/**
 * scif_loopback_exit() - take this node and the loopback bus down
 *
 * A no-op if the bus is not up.
 *
 * Context: process context; may sleep.
 */
void scif_loopback_exit(void)
{
	struct scif_loopback *lb = &scif_loopback;

	if (!lb->pdev)
		return;
	scif_hw_unregister(&lb->hw);
	platform_device_unregister(lb->pdev);
	lb->pdev = NULL;
}
