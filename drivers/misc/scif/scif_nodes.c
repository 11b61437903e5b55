// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: the node table and node enumeration.
 *
 * Until a hardware bus reports peers, the only node online is this one,
 * the management node.
 */
#include <linux/export.h>
#include <linux/minmax.h>
#include <linux/scif.h>

#include "scif_priv.h"

/**
 * scif_self_node() - the node id of this node
 *
 * Return: the local node id.
 */
u16 scif_self_node(void)
{
	return SCIF_MGMT_NODE;
}

/**
 * scif_get_node_ids() - list the nodes that are online
 * @nodes: array that receives up to @len node ids; may be NULL if @len is 0
 * @len: number of entries @nodes has room for; negative counts as 0
 * @self: receives the id of the local node
 *
 * Context: any context that may sleep.
 * Return: the number of nodes online, which may exceed @len; only the
 * first @len of them are stored.
 */
int scif_get_node_ids(u16 *nodes, int len, u16 *self)
{
	int online = 1;
	int i;

	*self = scif_self_node();
	for (i = 0; i < min(len, online); i++)
		nodes[i] = scif_self_node();
	return online;
}
EXPORT_SYMBOL_GPL(scif_get_node_ids);
