/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: endpoints' lifetime, handles, ports and parts (scif_epd.c).
 * The endpoint object and the lock order are in scif_endpt.h.
 */
#ifndef _SCIF_EPD_H_
#define _SCIF_EPD_H_

#include <linux/list.h>
#include <linux/types.h>

#include "scif_endpt.h"

struct pid;

/**
 * struct scif_conreq - a connection request waiting at a listener
 * @list: link in the listener's @conreqs or @parked, or in a private list
 * @node: the requesting node
 * @peer: the requesting endpoint's port id
 * @peer_handle: the requesting endpoint's handle
 * @addr: where the requester's half of the queue pair is
 * @size: the requester's ring size
 * @port: the listener's port
 * @listener: while parked, the listener it was taken from (a reference,
 *	and one of the listener's @nr_parked)
 * @owner: thread group that may complete a parked request
 * @cookie: key of a parked request in scif_info.parked
 *
 * A request is owned by one party at a time: the listener's @conreqs
 * (under its lock), whoever took it from there, or scif_info.parked,
 * from which only the party that erases it (under the xarray's lock)
 * takes it; nobody else dereferences a parked request.
 */
struct scif_conreq {
	struct list_head list;
	struct scif_node *node;
	struct scif_port_id peer;
	u64 peer_handle;
	u64 addr;
	u32 size;
	u16 port;
	struct scif_endpt *listener;
	struct pid *owner;
	u64 cookie;
};

struct scif_endpt *scif_epd_create(bool user);
void scif_epd_uncount(struct scif_endpt *ep);
struct scif_endpt *scif_epd_lookup(u64 handle);
const char *scif_epd_state_name(enum scif_epd_state state);
void scif_epd_node_lost(struct scif_node *node, bool hold);
void scif_epd_devmem_gone(u64 owner, s64 offset, u64 len);
void scif_epd_parts_teardown(struct scif_endpt *ep, bool local, int err);
int scif_port_claim(u16 port);
int scif_port_alloc(u16 *port);
void scif_port_get(u16 port);
void scif_port_put(u16 port);

#endif /* _SCIF_EPD_H_ */
