/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: types shared by the files of the driver.
 *
 * Implementation notes
 *
 * Object lifetimes: an endpoint (struct scif_endpt) is created when
 * /dev/scif is opened and destroyed when the last reference to that open
 * file goes away (the ->release of the file).  The file's private_data
 * points to it for its whole life.
 *
 * Global state lives in the single struct scif_info instance scif_info.
 *
 * Lock order (outermost first):
 *   scif_info.eplock
 */
#ifndef _SCIF_PRIV_H_
#define _SCIF_PRIV_H_

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/types.h>

#define SCIF_DRV_NAME "scif"

/**
 * enum scif_epd_state - the states of an endpoint
 * @SCIF_EPD_UNBOUND: opened, no port yet
 */
enum scif_epd_state {
	SCIF_EPD_UNBOUND,
};

/**
 * struct scif_endpt - one SCIF endpoint (one open file of /dev/scif)
 * @id: number naming the endpoint in debugfs; never reused while loaded
 * @state: see enum scif_epd_state
 * @list: link in scif_info.endpoints, protected by scif_info.eplock
 */
struct scif_endpt {
	u64 id;
	enum scif_epd_state state;
	struct list_head list;
};

/**
 * struct scif_info - state global to the driver
 * @mdev: the /dev/scif misc device
 * @debugfs: root of the driver's debugfs directory, or an error pointer
 * @eplock: protects @endpoints
 * @endpoints: every live endpoint
 * @nr_endpoints: number of live endpoints, bounded by max_endpoints
 * @next_epd_id: source of endpoint ids
 */
struct scif_info {
	struct miscdevice mdev;
	struct dentry *debugfs;

	/* eplock protects endpoints */
	struct mutex eplock;
	struct list_head endpoints;

	atomic_t nr_endpoints;
	atomic64_t next_epd_id;
};

extern struct scif_info scif_info;
extern unsigned int scif_max_endpoints;

/* scif_epd.c */
struct scif_endpt *scif_epd_create(void);
void scif_epd_destroy(struct scif_endpt *ep);
const char *scif_epd_state_name(enum scif_epd_state state);

/* scif_fd.c */
int scif_fd_init(void);
void scif_fd_exit(void);

/* scif_nodes.c */
u16 scif_self_node(void);

/* scif_debugfs.c */
void scif_debugfs_init(void);
void scif_debugfs_exit(void);

#endif /* _SCIF_PRIV_H_ */
