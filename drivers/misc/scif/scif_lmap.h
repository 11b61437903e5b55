/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: local memory mapped for a peer (scif_nodes.c).
 */
#ifndef _SCIF_LMAP_H_
#define _SCIF_LMAP_H_

#include <linux/dma-direction.h>
#include <linux/list.h>
#include <linux/types.h>

struct device;
struct scif_node;

/**
 * struct scif_lmap_ent - one range of local memory mapped for a peer
 * @phys: its physical address
 * @len: its length
 * @addr: the address the peer uses for it (from the bus's map_local)
 */
struct scif_lmap_ent {
	phys_addr_t phys;
	size_t len;
	u64 addr;
};

/**
 * struct scif_lmap - local memory mapped for one peer node
 * @link: in @node's @lmaps while @node is set
 * @node: the node it is mapped for; NULL while nothing is mapped (a
 *	zeroed struct is an empty map)
 * @nr: entries of @ent mapped
 * @max: room in @ent
 * @ent: the ranges: @one, or an array from scif_lmap_init()
 * @one: room for one range, the default
 *
 * Every address the core hands a peer is mapped through one of these
 * (scif_node_map_local()) and unmapped by its owner
 * (scif_node_unmap_local()) or, if the node goes first, by
 * scif_hw_node_down(); the fields are under @node's lmap_lock.
 */
struct scif_lmap {
	struct list_head link;
	struct scif_node *node;
	unsigned int nr;
	unsigned int max;
	struct scif_lmap_ent *ent;
	struct scif_lmap_ent one;
};

/**
 * struct scif_pdmap - a peer's memory mapped for DMA by a local device
 * @link: in @node's @pdmaps while @node is set
 * @node: the node whose memory it is; NULL once unmapped (a zeroed
 *	struct maps nothing)
 * @dev: the device
 * @addr: the address the peer published
 * @dma: the address @dev uses (from the bus's peer_dma_map)
 * @len: bytes
 * @dir: the direction it was mapped for
 *
 * Mapped by scif_node_peer_dma_map() and unmapped by its owner
 * (scif_node_peer_dma_unmap()) or, if the node goes first, by
 * scif_hw_node_down(); @link and @node are under the node's lmap_lock,
 * the rest is the owner's.
 */
struct scif_pdmap {
	struct list_head link;
	struct scif_node *node;
	struct device *dev;
	u64 addr;
	dma_addr_t dma;
	size_t len;
	enum dma_data_direction dir;
};

#endif /* _SCIF_LMAP_H_ */
