// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: endpoint creation, destruction and state names.
 */
#include <linux/slab.h>

#include "scif_priv.h"

static const char * const scif_epd_state_names[] = {
	[SCIF_EPD_UNBOUND] = "unbound",
};

/**
 * scif_epd_state_name() - printable name of an endpoint state
 * @state: the state
 *
 * Return: a static string.
 */
const char *scif_epd_state_name(enum scif_epd_state state)
{
	if (state >= ARRAY_SIZE(scif_epd_state_names))
		return "invalid";
	return scif_epd_state_names[state];
}

static bool scif_epd_count_get(void)
{
	if (atomic_inc_return(&scif_info.nr_endpoints) <=
	    READ_ONCE(scif_max_endpoints))
		return true;
	atomic_dec(&scif_info.nr_endpoints);
	return false;
}

/**
 * scif_epd_create() - allocate a new, unbound endpoint
 *
 * Context: process context; may sleep.
 * Return: the endpoint, ERR_PTR(-ENFILE) when max_endpoints endpoints
 * exist already, or ERR_PTR(-ENOMEM).
 */
struct scif_endpt *scif_epd_create(void)
{
	struct scif_endpt *ep;

	if (!scif_epd_count_get())
		return ERR_PTR(-ENFILE);

	ep = kzalloc(sizeof(*ep), GFP_KERNEL);
	if (!ep) {
		atomic_dec(&scif_info.nr_endpoints);
		return ERR_PTR(-ENOMEM);
	}
	ep->id = atomic64_inc_return(&scif_info.next_epd_id);
	ep->state = SCIF_EPD_UNBOUND;

	mutex_lock(&scif_info.eplock);
	list_add_tail(&ep->list, &scif_info.endpoints);
	mutex_unlock(&scif_info.eplock);
	return ep;
}

/**
 * scif_epd_destroy() - release an endpoint and everything it holds
 * @ep: the endpoint; no other reference to it may remain
 *
 * Context: process context; may sleep.
 */
void scif_epd_destroy(struct scif_endpt *ep)
{
	mutex_lock(&scif_info.eplock);
	list_del(&ep->list);
	mutex_unlock(&scif_info.eplock);

	kfree(ep);
	atomic_dec(&scif_info.nr_endpoints);
}
