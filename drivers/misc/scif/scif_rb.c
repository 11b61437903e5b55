// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: the ring buffers of queue pairs, for node messages and for
 * connections alike.
 *
 * A sender copies into the peer's receive ring through the peer mapping,
 * then publishes its new write count there; the receiver copies out of
 * its own ring and publishes its read count into the sender's half.
 * Counts are free running 32-bit values, positions are counts modulo the
 * (power of two) ring size.  The counts come from the peer: a count that
 * claims more than a ring holds is refused, and no copy ever leaves the
 * ring.
 */
#include <linux/gfp.h>
#include <linux/minmax.h>
#include <linux/mm.h>

#include "scif_kunit.h"
#include "scif_priv.h"

/**
 * scif_qp_alloc_gfp() - allocate and zero one side's half of a queue pair
 * @rx_size: size of its receive ring, a power of two
 * @gfp: GFP_KERNEL, or GFP_KERNEL_ACCOUNT for a ring a user asked for
 *
 * A failure is reported to the caller, not warned about: the area is of
 * high order, and a user chooses when to ask for one.
 *
 * Context: process context; may sleep.
 * Return: the area (physically contiguous), or NULL.
 */
struct scif_qp_shm *scif_qp_alloc_gfp(u32 rx_size, gfp_t gfp)
{
	size_t len = scif_qp_len(rx_size);
	void *va;

	if (scif_fail_alloc())
		return NULL;
	/*
	 * Zeroed here, not with __GFP_ZERO: that would clear the whole
	 * power-of-two block (128 KiB for the default 64 KiB ring and its
	 * header page) before alloc_pages_exact() gives back the tail.
	 */
	va = alloc_pages_exact(len, gfp | __GFP_NOWARN);
	if (va)
		memset(va, 0, len);
	return va;
}

/**
 * scif_qp_free() - free an area from scif_qp_alloc_gfp()
 * @shm: the area, or NULL
 * @rx_size: the size it was allocated with
 */
void scif_qp_free(struct scif_qp_shm *shm, u32 rx_size)
{
	if (shm)
		free_pages_exact(shm, scif_qp_len(rx_size));
}

/**
 * scif_rb_tx_room_at() - bytes that can be sent, for a given write count
 * @rb: the ring
 * @tx_write: this side's write count (rb->tx_write, or the user-space
 *	data path's)
 *
 * Return: free bytes in the peer's ring; 0 if the peer is not mapped or
 * the counts make no sense.
 */
u32 scif_rb_tx_room_at(const struct scif_rb *rb, u32 tx_write)
{
	u32 used;

	if (!rb->remote)
		return 0;
	used = tx_write - READ_ONCE(rb->local->tx_read);
	return used > rb->tx_size ? 0 : rb->tx_size - used;
}

/**
 * scif_rb_tx_room() - bytes that can be sent now
 * @rb: the ring
 *
 * Return: free bytes in the peer's ring; 0 if the peer is not mapped or
 * reports a read count that makes no sense.
 */
u32 scif_rb_tx_room(const struct scif_rb *rb)
{
	return scif_rb_tx_room_at(rb, rb->tx_write);
}

SCIF_EXPORT_IF_KUNIT(scif_rb_tx_room);

/**
 * scif_rb_tx_broken_at() - whether the counts of the transmit side make
 *	no sense
 * @rb: the ring
 * @tx_write: this side's write count
 *
 * Return: true if the peer claims to have read bytes never sent.
 */
bool scif_rb_tx_broken_at(const struct scif_rb *rb, u32 tx_write)
{
	return rb->remote &&
	       tx_write - READ_ONCE(rb->local->tx_read) > rb->tx_size;
}

/**
 * scif_rb_tx_broken() - whether the peer's read count makes no sense
 * @rb: the ring
 *
 * Return: true if the peer claims to have read bytes never sent.
 */
bool scif_rb_tx_broken(const struct scif_rb *rb)
{
	return scif_rb_tx_broken_at(rb, rb->tx_write);
}

SCIF_EXPORT_IF_KUNIT(scif_rb_tx_broken);

/**
 * scif_rb_rx_avail_at() - bytes waiting, for a given read count
 * @rb: the ring
 * @rx_read: this side's read count
 * @avail: receives the count
 *
 * Return: 0, or -EPROTO if the counts make no sense.
 */
int scif_rb_rx_avail_at(const struct scif_rb *rb, u32 rx_read, u32 *avail)
{
	u32 n = READ_ONCE(rb->local->rx_write) - rx_read;

	if (n > rb->rx_size)
		return -EPROTO;
	*avail = n;
	return 0;
}

/**
 * scif_rb_rx_avail() - bytes waiting to be received
 * @rb: the ring
 * @avail: receives the count
 *
 * Return: 0, or -EPROTO if the peer's write count makes no sense.
 */
int scif_rb_rx_avail(const struct scif_rb *rb, u32 *avail)
{
	return scif_rb_rx_avail_at(rb, rb->rx_read, avail);
}

SCIF_EXPORT_IF_KUNIT(scif_rb_rx_avail);

/*
 * Copy @n bytes between @iter and a ring of @size bytes, starting at
 * @pos and wrapping at the end.  Returns the bytes copied (short only if
 * @iter faulted).
 */
static size_t scif_rb_copy(u8 *ring, u32 size, u32 pos, size_t n,
			   struct iov_iter *iter, bool into_ring)
{
	size_t first = min_t(size_t, n, size - pos), done;

	done = into_ring ? copy_from_iter(ring + pos, first, iter) :
			   copy_to_iter(ring + pos, first, iter);
	if (done == first && n > first)
		done += into_ring ? copy_from_iter(ring, n - first, iter) :
				    copy_to_iter(ring, n - first, iter);
	return done;
}

/**
 * scif_rb_put() - send as much of @from as there is room for
 * @rb: the ring; the caller owns its transmit side
 * @from: the data; advanced by what was sent
 *
 * Return: the number of bytes sent, which is short of the room only if
 * @from faulted.
 */
size_t scif_rb_put(struct scif_rb *rb, struct iov_iter *from)
{
	size_t n, done;

	n = min_t(size_t, scif_rb_tx_room(rb), iov_iter_count(from));
	if (!n)
		return 0;
	done = scif_rb_copy(rb->remote->rx_data, rb->tx_size,
			    rb->tx_write & (rb->tx_size - 1), n, from, true);
	if (!done)
		return 0;

	rb->tx_write += done;
	/* The bytes must land before the count that exposes them. */
	wmb();
	WRITE_ONCE(rb->remote->rx_write, rb->tx_write + scif_rb_skew(rb));
	return done;
}

/**
 * scif_rb_get() - receive as much as is waiting, up to what @to holds
 * @rb: the ring; the caller owns its receive side
 * @to: where the data goes; advanced by what was received
 *
 * The read count is published to the peer only while it is mapped.
 *
 * Return: the number of bytes received (short only if @to faulted).
 */
size_t scif_rb_get(struct scif_rb *rb, struct iov_iter *to)
{
	size_t n, done;
	u32 avail;

	if (scif_rb_rx_avail(rb, &avail))
		return 0;
	n = min_t(size_t, avail, iov_iter_count(to));
	if (!n)
		return 0;
	/* Read the data only after the count that exposed it. */
	rmb();
	done = scif_rb_copy(rb->local->rx_data, rb->rx_size,
			    rb->rx_read & (rb->rx_size - 1), n, to, false);
	if (!done)
		return 0;

	rb->rx_read += done;
	/* Our reads must be done before the peer may overwrite the bytes. */
	mb();
	if (rb->remote)
		WRITE_ONCE(rb->remote->tx_read, rb->rx_read);
	return done;
}
