/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF hardware bus: the interface between the SCIF core and the links
 * that join this node to its peers (loopback, QEMU ivshmem, NTB).
 *
 * A backend fills a struct scif_hw_ops and registers a struct scif_hw_dev
 * with scif_hw_register().  It then reports the nodes it reaches with
 * scif_hw_node_up()/scif_hw_node_down() and incoming doorbells with
 * scif_hw_doorbell().  A node that is alive but whose bootstrap data
 * turned invalid is reported with scif_hw_node_failed(); it stays offline
 * until the backend reports it down (it restarted or died).  Backends
 * know nothing of endpoints, rings or windows; the core's node layer is
 * the only user of these operations.
 */
#ifndef _SCIF_HW_H_
#define _SCIF_HW_H_

#include <linux/types.h>

struct scif_hw_dev;

/**
 * struct scif_hw_ops - what a hardware bus offers the core
 * @map_peer: map @len bytes of @node's memory, starting at the address
 *	@addr that the peer published, for CPU access; returns a kernel
 *	virtual address or an ERR_PTR().  May sleep.  The backend must
 *	refuse a range that its link does not reach.
 * @unmap_peer: undo @map_peer.  May sleep.
 * @peer_phys: the physical address through which this node's CPU reaches
 *	the @len bytes of @node's memory at @addr (an address the peer
 *	published), for mapping them into a process; -EINVAL if the link
 *	does not reach the whole range.  Does not sleep.  Optional: without
 *	it, peer memory cannot be mapped into processes.
 * @local_addr: the address a peer must use to reach the local physical
 *	address @phys.
 * @publish_qp: tell @node where this node's inbound queue for its
 *	messages lives (an address as returned by @local_addr).
 * @peer_qp: where @node's inbound queue for this node's messages lives,
 *	or 0 if @node has not published it yet.
 * @ring: ring @node's doorbell.  Callable from any context.
 */
struct scif_hw_ops {
	void *(*map_peer)(struct scif_hw_dev *hw, u16 node, u64 addr,
			  size_t len);
	void (*unmap_peer)(struct scif_hw_dev *hw, u16 node, void *va,
			   size_t len);
	int (*peer_phys)(struct scif_hw_dev *hw, u16 node, u64 addr,
			 size_t len, phys_addr_t *phys);
	u64 (*local_addr)(struct scif_hw_dev *hw, phys_addr_t phys);
	void (*publish_qp)(struct scif_hw_dev *hw, u16 node, u64 addr);
	u64 (*peer_qp)(struct scif_hw_dev *hw, u16 node);
	void (*ring)(struct scif_hw_dev *hw, u16 node);
};

/**
 * struct scif_hw_dev - one hardware bus, as the core sees it
 * @name: short name, for messages and debugfs
 * @ops: the bus operations
 * @peer_wc: processes map peer memory write-combined (as the bus maps
 *	it itself) rather than cached
 */
struct scif_hw_dev {
	const char *name;
	const struct scif_hw_ops *ops;
	bool peer_wc;
};

int scif_hw_set_self(u16 self);
int scif_hw_register(struct scif_hw_dev *hw);
void scif_hw_unregister(struct scif_hw_dev *hw);
int scif_hw_node_up(struct scif_hw_dev *hw, u16 node);
void scif_hw_node_down(struct scif_hw_dev *hw, u16 node);
void scif_hw_node_failed(struct scif_hw_dev *hw, u16 node, const char *why);
void scif_hw_doorbell(struct scif_hw_dev *hw, u16 node);

#endif /* _SCIF_HW_H_ */
