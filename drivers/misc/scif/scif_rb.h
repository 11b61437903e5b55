/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: rings, one side's view of a queue pair (scif_rb.c).
 * Lock rules: the owner of a ring serialises each of its sides (see
 * struct scif_rb); the owners' locks are in scif_nodes.h (node queue
 * pairs) and scif_endpt.h (connections).
 */
#ifndef _SCIF_RB_H_
#define _SCIF_RB_H_

#include <linux/types.h>

#include "scif_lmap.h"

struct iov_iter;
struct scif_hw_dev;
struct scif_qp_shm;

/* Bounds of a connection's receive ring, ours or a peer's. */
#define SCIF_RING_MIN		PAGE_SIZE
#define SCIF_RING_MAX		(4 * 1024 * 1024)

/**
 * struct scif_rb - this side's view of a queue pair
 * @local: our half, in our memory (receive ring and what the peer writes)
 * @lmap: @local as the peer reaches it
 * @area_hw: the bus whose alloc_local gave @local, or NULL (the page
 *	allocator)
 * @area_phys: the physical address of @local
 * @area_pinned: @local holds a reference to @area_hw's module (every
 *	area but a node queue pair's, which goes with its node)
 * @remote: the peer's half, mapped; NULL when not (or no longer) mapped
 * @remote_addr: where the peer published its half (connections only)
 * @rx_size: size of local->rx_data
 * @tx_size: size of remote->rx_data
 * @tx_write: bytes we have put into remote->rx_data
 * @rx_read: bytes we have taken from local->rx_data
 * @tx_skew: test build only: 0, set only by the corrupt test hook
 *	(scif_node_corrupt()),
 *	added to every write count published to the peer so that the
 *	peer sees a bad count however often this side sends afterwards
 *
 * The transmit side (@tx_write, writes through @remote) and the receive
 * side (@rx_read) each have a single user at a time, serialised by the
 * owner of the ring.
 */
struct scif_rb {
	struct scif_qp_shm *local;
	struct scif_lmap lmap;
	struct scif_hw_dev *area_hw;
	phys_addr_t area_phys;
	bool area_pinned;
	struct scif_qp_shm *remote;
	u64 remote_addr;
	u32 rx_size;
	u32 tx_size;
	u32 tx_write;
	u32 rx_read;
#ifdef SCIF_TEST_HOOKS
	u32 tx_skew;
#endif
};

#ifdef SCIF_TEST_HOOKS
static inline u32 scif_rb_skew(const struct scif_rb *rb)
{
	return rb->tx_skew;
}

static inline void scif_rb_set_skew(struct scif_rb *rb, u32 skew)
{
	rb->tx_skew = skew;
}
#else
static inline u32 scif_rb_skew(const struct scif_rb *rb)
{
	return 0;
}

static inline void scif_rb_set_skew(struct scif_rb *rb, u32 skew)
{
}
#endif

struct scif_qp_shm *scif_qp_alloc_gfp(u32 rx_size, gfp_t gfp);
void scif_qp_free(struct scif_qp_shm *shm, u32 rx_size);
void scif_qp_cache_drain(void);
u32 scif_rb_tx_room(const struct scif_rb *rb);
u32 scif_rb_tx_room_at(const struct scif_rb *rb, u32 tx_write);
bool scif_rb_tx_broken(const struct scif_rb *rb);
bool scif_rb_tx_broken_at(const struct scif_rb *rb, u32 tx_write);
int scif_rb_rx_avail(const struct scif_rb *rb, u32 *avail);
int scif_rb_rx_avail_at(const struct scif_rb *rb, u32 rx_read, u32 *avail);
size_t scif_rb_put(struct scif_rb *rb, struct iov_iter *from);
size_t scif_rb_put_n(struct scif_rb *rb, struct iov_iter *from, size_t n);
size_t scif_rb_get(struct scif_rb *rb, struct iov_iter *to);
size_t scif_rb_get_n(struct scif_rb *rb, struct iov_iter *to, size_t n);

#endif /* _SCIF_RB_H_ */
