/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: devices across the fabric, the lent list and borrows
 * (scif_devices.c).  Lock rules: scif_devices.c, next to its structures.
 */
#ifndef _SCIF_DEVICES_H_
#define _SCIF_DEVICES_H_

#include <linux/poll.h>
#include <linux/types.h>

struct file;
struct scif_dev_borrow;
struct scif_dev_entry;
struct scif_dev_filter;
struct scif_endpt;
struct scif_msg;
struct scif_node;

int scif_devices_init(void);
void scif_devices_exit(void);
void scif_devices_handle_msg(struct scif_node *node, const struct scif_msg *msg,
			     struct scif_endpt *ep);
void scif_devices_node_lost(struct scif_node *node);
__poll_t scif_dev_borrow_poll(struct scif_dev_borrow *b, struct file *f,
			      poll_table *wait);
bool scif_dev_filter_valid(const struct scif_dev_filter *f);
#ifdef SCIF_KUNIT
/* Visible to scif_kunit.ko only (scif_visibility.h). */
bool scif_dev_filter_match(const struct scif_dev_filter *f,
			   const struct scif_dev_entry *e);
bool scif_dev_entry_valid(const struct scif_dev_entry *e, u16 node);
#endif

#endif /* _SCIF_DEVICES_H_ */
