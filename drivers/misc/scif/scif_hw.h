/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF hardware bus: the interface between the SCIF core and the links
 * that join this node to its peers: loopback (the core's own,
 * scif_loopback.c), and in bus/ QEMU ivshmem (scif_ivshmem.c) and the
 * Linux NTB API (scif_ntb.c), each of which includes only this header.
 * Documentation/scif/design.rst ("The hardware bus seam") is the full
 * contract: read it before writing a bus.
 *
 * A backend fills a struct scif_hw_ops and registers a struct scif_hw_dev
 * with scif_hw_register().  It then reports the nodes it reaches with
 * scif_hw_node_up()/scif_hw_node_down(), giving the core, for each node,
 * a context pointer that the core hands back to every per-node operation,
 * and incoming doorbells with scif_hw_doorbell().  A bus that watches
 * its peers' heartbeats reports each one it sees with
 * scif_hw_node_heartbeat() (optional; sysfs shows the age).  A node that
 * may be alive and still reach this node's memory, but whose bootstrap
 * data turned invalid or that went silent, is reported with
 * scif_hw_node_failed(); it stays offline, with what it may write into
 * kept, until the backend reports it down (it restarted, left, or can no
 * longer reach us).  Backends know nothing of endpoints, rings
 * or windows; the core's node layer is the only user of these operations.
 */
#ifndef _SCIF_HW_H_
#define _SCIF_HW_H_

#include <linux/dma-direction.h>
#include <linux/dma-mapping.h>
#include <linux/list.h>
#include <linux/types.h>

struct device;
struct module;
struct scif_hw_dev;

/*
 * The release of this driver, the MODULE_VERSION of every module it
 * builds.  dkms.conf, debian/changelog and libscif carry the same number
 * (scripts/test-packaging.sh checks that they agree).
 */
#define SCIF_DRIVER_VERSION	"0.1.0"

/* scif_hw_dev.self of a bus that reaches only this node, whatever its id. */
#define SCIF_HW_SELF_ANY	(-1)

/**
 * struct scif_hw_ops - what a hardware bus offers the core
 *
 * Per-node operations get the bus and the context @ctx the bus gave
 * scif_hw_node_up() for the node; the core calls them only between that
 * call and the return of scif_hw_node_down() for the node.
 *
 * @map_peer: map @len bytes of the node's memory, starting at the address
 *	@addr that the peer published, for CPU access; returns a kernel
 *	virtual address or an ERR_PTR().  May sleep.  The backend must
 *	refuse a range that its link does not reach.  Mandatory.
 * @unmap_peer: undo @map_peer.  May sleep.  Mandatory.
 * @peer_phys: the physical address through which this node's CPU reaches
 *	the @len bytes of the node's memory at @addr (an address the peer
 *	published), for mapping them into a process and for
 *	scif_get_pages(); -EINVAL if the link does not reach the whole
 *	range.  Does not sleep.  Optional: without it, peer memory cannot
 *	be mapped into processes nor handed out by scif_get_pages().
 * @map_local: make the @len bytes of local memory at physical address
 *	@phys reachable by the node and store in @addr the address the
 *	node must use for them; 0 or a negative errno (the range cannot be
 *	reached: -ENOSPC, -EINVAL, -ENOMEM...).  -EOPNOTSUPP says the link
 *	can never reach that memory: the core then reaches a registered
 *	window through staging buffers (alloc_local memory) and node
 *	messages instead of mapping its pages (design.rst, "Memory the
 *	link cannot reach").  Every address the core hands a peer comes
 *	from here.  May sleep; called under core locks,
 *	so it must not call back into the core.  Mandatory.
 * @unmap_local: undo one @map_local (same @phys, @len, and the @addr it
 *	gave).  Each successful @map_local gets exactly one, at the latest
 *	from scif_hw_node_down() for the node.  May sleep; must not call
 *	back into the core.  Mandatory.
 * @publish_qp: tell the node where this node's inbound queue for its
 *	messages lives (an address as given by @map_local), or 0 to take it
 *	back.  Mandatory.
 * @peer_qp: where the node's inbound queue for this node's messages
 *	lives, or 0 if the node has not published it yet.  Mandatory.
 * @ring: ring the node's doorbell.  Callable from any context.  Mandatory.
 * @alloc_local: per bus, optional (with @free_local): allocate @len bytes
 *	of physically contiguous memory that the bus's peers can reach
 *	(through @map_local), for queue areas and connection rings; returns
 *	its kernel address and stores its physical address in @phys, or
 *	NULL.  Whole pages that hold nothing else: the core zeroes them up
 *	to the end of the last one and processes may map them.  May sleep.
 *	Without it they come from the page allocator.
 * @free_local: give back what @alloc_local gave.  May be called after
 *	scif_hw_unregister() (a ring outlives its node while an endpoint
 *	is open): see design.rst.  May sleep.
 * @peer_dma_map: map the @len bytes of the node's memory at @addr (an
 *	address the peer published) for DMA by the local device @dev in
 *	direction @dir, and store in @dma the address @dev must use; 0, or
 *	-EOPNOTSUPP (@dev cannot reach the node's memory peer to peer),
 *	-EINVAL (the link does not reach the whole range) or -ENOMEM (the
 *	DMA API failed).  Process context, may sleep; called under core
 *	locks (the node's lmap_lock), so it must not call back into the
 *	core.  Optional: without it, no device may be given the node's
 *	memory (scif_dma_map() of a peer window fails with -EOPNOTSUPP).
 * @peer_dma_unmap: undo one @peer_dma_map (same @dev, @addr, @len,
 *	@dir and the @dma it gave).  It takes no context: it needs only
 *	the device, so the core may call it after the node went down, and
 *	each successful @peer_dma_map gets exactly one, at the latest from
 *	scif_hw_node_down() for the node.  May sleep; must not call back
 *	into the core.  Mandatory with @peer_dma_map.
 * @close_aperture: make the node's memory unreachable to every local
 *	device (@closed true), or reachable again (false): the core closes
 *	it when a node goes down while devices may still hold addresses of
 *	it (device-map files, dma-bufs, Documentation/scif/devices.rst "When
 *	the peer goes"), and opens it once the last such mapping is
 *	released; the bus need not look for the node's next life meanwhile.
 *	Called after scif_hw_node_down() for the node began, under the
 *	node's lmap_lock; must not call back into the core.  May sleep.
 *	Optional: without it, processes may not map the node's memory for
 *	devices (SCIF_DEVMAP_OPEN fails with -EOPNOTSUPP).
 * @self_moved: mandatory for a bus registered with self
 *	SCIF_HW_SELF_ANY, unused otherwise: this node's id changed from @old
 *	to @self (once, when a bus that knows the id registers); the bus
 *	moves what it reaches.  Called with the core's bus list locked: it
 *	may report nodes up and down, but not register buses.  May sleep.
 */
struct scif_hw_ops {
	void *(*map_peer)(struct scif_hw_dev *hw, void *ctx, u64 addr,
			  size_t len);
	void (*unmap_peer)(struct scif_hw_dev *hw, void *ctx, void *va,
			   size_t len);
	int (*peer_phys)(struct scif_hw_dev *hw, void *ctx, u64 addr,
			 size_t len, phys_addr_t *phys);
	int (*map_local)(struct scif_hw_dev *hw, void *ctx, phys_addr_t phys,
			 size_t len, u64 *addr);
	void (*unmap_local)(struct scif_hw_dev *hw, void *ctx, phys_addr_t phys,
			    size_t len, u64 addr);
	void (*publish_qp)(struct scif_hw_dev *hw, void *ctx, u64 addr);
	u64 (*peer_qp)(struct scif_hw_dev *hw, void *ctx);
	void (*ring)(struct scif_hw_dev *hw, void *ctx);
	void *(*alloc_local)(struct scif_hw_dev *hw, size_t len, gfp_t gfp,
			     phys_addr_t *phys);
	void (*free_local)(struct scif_hw_dev *hw, void *va, phys_addr_t phys,
			   size_t len);
	int (*peer_dma_map)(struct scif_hw_dev *hw, void *ctx,
			    struct device *dev, u64 addr, size_t len,
			    enum dma_data_direction dir, dma_addr_t *dma);
	void (*peer_dma_unmap)(struct scif_hw_dev *hw, struct device *dev,
			       u64 addr, dma_addr_t dma, size_t len,
			       enum dma_data_direction dir);
	void (*close_aperture)(struct scif_hw_dev *hw, u16 node, bool closed);
	int (*self_moved)(struct scif_hw_dev *hw, u16 old, u16 self);
};

/**
 * struct scif_hw_dev - one hardware bus, as the core sees it
 * @name: short name, for messages and debugfs
 * @ops: the bus operations
 * @dev: the bus's device: DMA mapping and messages; the core holds a
 *	reference to it while the bus is registered
 * @link_dev: optional: the device that sysfs shows as the "device" of
 *	the nodes the bus reaches, when it is not @dev (NTB: the NTB device
 *	its client driver is bound to, while @dev is the bridge's PCI
 *	function); NULL: @dev.  Referenced as @dev is
 * @owner: the module that implements @ops (THIS_MODULE); the core holds
 *	a reference to it for each allocation of @alloc_local not yet freed
 * @self: this node's id as the bus knows it, or SCIF_HW_SELF_ANY for a
 *	bus that reaches only this node (it then implements @self_moved)
 * @peer_wc: processes map peer memory write-combined (as the bus maps
 *	it itself) rather than cached
 * @list: private to the core (its list of registered buses)
 */
struct scif_hw_dev {
	const char *name;
	const struct scif_hw_ops *ops;
	struct device *dev;
	struct device *link_dev;
	struct module *owner;
	int self;
	bool peer_wc;
	struct list_head list;
};

/**
 * scif_hw_dma_map_phys() - a peer_dma_map of a bus that reaches the peer
 *	through a BAR of its own
 * @dev: the local device
 * @phys: where in that BAR the range is (the bus's peer_phys)
 * @len: bytes
 * @dir: the direction of the device's DMA
 * @dma: receives the address @dev must use
 *
 * The range is mapped for @dev as the MMIO it is; undone by
 * dma_unmap_resource().
 *
 * Context: process context.
 * Return: 0, or -ENOMEM (the DMA API refused).
 */
static inline int scif_hw_dma_map_phys(struct device *dev, phys_addr_t phys,
				       size_t len, enum dma_data_direction dir,
				       dma_addr_t *dma)
{
	dma_addr_t d = dma_map_resource(dev, phys, len, dir, 0);

	if (dma_mapping_error(dev, d))
		return -ENOMEM;
	*dma = d;
	return 0;
}

int scif_hw_register(struct scif_hw_dev *hw);
void scif_hw_unregister(struct scif_hw_dev *hw);
int scif_hw_node_up(struct scif_hw_dev *hw, u16 node, void *ctx);
void scif_hw_node_down(struct scif_hw_dev *hw, u16 node);
void scif_hw_node_failed(struct scif_hw_dev *hw, u16 node, const char *why);
void scif_hw_doorbell(struct scif_hw_dev *hw, u16 node);
void scif_hw_node_heartbeat(struct scif_hw_dev *hw, u16 node);

#endif /* _SCIF_HW_H_ */
