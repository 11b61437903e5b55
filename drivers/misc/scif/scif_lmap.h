/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: local memory mapped for a peer (scif_nodes.c).
 */
#ifndef _SCIF_LMAP_H_
#define _SCIF_LMAP_H_

#include <linux/list.h>
#include <linux/types.h>

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

#endif /* _SCIF_LMAP_H_ */
