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
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/uio.h>

#include "scif_fault.h"
#include "scif_proto.h"
#include "scif_rb.h"
#include "scif_visibility.h"

/*
 * Freed queue-pair areas kept for the next connection, so that a
 * connection storm pays neither a high-order allocation per endpoint nor
 * the page allocator's zeroing of the whole power-of-two block under
 * init_on_alloc (128 KiB for a 64 KiB ring and its header page).  At most
 * SCIF_QP_CACHE_MAX areas of at most SCIF_QP_CACHE_RING bytes of ring
 * (1.1 MiB with the default ring size).  A cached area stays charged to
 * the memory cgroup that allocated it until the cache frees it.  It is
 * zeroed when it is taken, in whole pages like a new area: the user-space
 * data path maps the last page whole, and the previous connection's
 * owner (or its peer) may have written anywhere in it, past the ring too.
 * scif_qp_cache_lock protects the array.
 */
#define SCIF_QP_CACHE_MAX	16
#define SCIF_QP_CACHE_RING	SZ_64K

static DEFINE_SPINLOCK(scif_qp_cache_lock);
static struct scif_qp_cached {
	void *va;
	u32 rx_size;
} scif_qp_cache[SCIF_QP_CACHE_MAX];
static unsigned int scif_qp_nr_cached;

/*
 * The bytes an area of @rx_size spans in whole pages: what the page
 * allocator gives, what processes can map, and what is zeroed for each
 * new owner.
 */
static size_t scif_qp_span(u32 rx_size)
{
	return PAGE_ALIGN(scif_qp_len(rx_size));
}

static void *scif_qp_cache_take(u32 rx_size)
{
	void *va = NULL;
	unsigned int i;

	spin_lock(&scif_qp_cache_lock);
	for (i = 0; i < scif_qp_nr_cached; i++) {
		if (scif_qp_cache[i].rx_size != rx_size)
			continue;
		va = scif_qp_cache[i].va;
		scif_qp_cache[i] = scif_qp_cache[--scif_qp_nr_cached];
		break;
	}
	spin_unlock(&scif_qp_cache_lock);
	return va;
}

static bool scif_qp_cache_put(void *va, u32 rx_size)
{
	bool kept = false;

	if (rx_size > SCIF_QP_CACHE_RING)
		return false;
	spin_lock(&scif_qp_cache_lock);
	if (scif_qp_nr_cached < SCIF_QP_CACHE_MAX) {
		scif_qp_cache[scif_qp_nr_cached].va = va;
		scif_qp_cache[scif_qp_nr_cached].rx_size = rx_size;
		scif_qp_nr_cached++;
		kept = true;
	}
	spin_unlock(&scif_qp_cache_lock);
	return kept;
}

/**
 * scif_qp_cache_drain() - free the areas kept for reuse
 *
 * For the module's exit, once no endpoint or node holds an area.
 *
 * Context: process context.
 */
void scif_qp_cache_drain(void)
{
	void *va;
	u32 rx_size;

	for (;;) {
		spin_lock(&scif_qp_cache_lock);
		if (!scif_qp_nr_cached) {
			spin_unlock(&scif_qp_cache_lock);
			return;
		}
		scif_qp_nr_cached--;
		va = scif_qp_cache[scif_qp_nr_cached].va;
		rx_size = scif_qp_cache[scif_qp_nr_cached].rx_size;
		spin_unlock(&scif_qp_cache_lock);
		free_pages_exact(va, scif_qp_span(rx_size));
	}
}

/**
 * scif_qp_alloc_gfp() - allocate and zero one side's half of a queue pair
 * @rx_size: size of its receive ring, a power of two
 * @gfp: GFP_KERNEL, or GFP_KERNEL_ACCOUNT for a ring a user asked for
 *
 * A failure is reported to the caller, not warned about: the area is of
 * high order, and a user chooses when to ask for one.  An area freed
 * earlier is reused if one of the size is kept (see scif_qp_free()).
 * Either way every page of the area is zeroed whole, up to the end of
 * its last page: the user-space data path maps whole pages.
 *
 * Context: process context; may sleep.
 * Return: the area (physically contiguous), or NULL.
 */
struct scif_qp_shm *scif_qp_alloc_gfp(u32 rx_size, gfp_t gfp)
{
	size_t span = scif_qp_span(rx_size);
	void *va;

	if (scif_fail_alloc())
		return NULL;
	va = scif_qp_cache_take(rx_size);
	if (va) {
		memset(va, 0, span);
		return va;
	}
	/*
	 * Zeroed here, not with __GFP_ZERO: that would clear the whole
	 * power-of-two block before alloc_pages_exact() gives back the
	 * pages past @span.  init_on_alloc has cleared it already.
	 */
	va = alloc_pages_exact(span, gfp | __GFP_NOWARN);
	if (va && !want_init_on_alloc(gfp))
		memset(va, 0, span);
	return va;
}

SCIF_EXPORT_IF_KUNIT(scif_qp_alloc_gfp);

/**
 * scif_qp_free() - free an area from scif_qp_alloc_gfp()
 * @shm: the area, or NULL
 * @rx_size: the size it was allocated with
 *
 * The area is kept for reuse while the cache has room.
 *
 * Context: process context.
 */
void scif_qp_free(struct scif_qp_shm *shm, u32 rx_size)
{
	if (shm && !scif_qp_cache_put(shm, rx_size))
		free_pages_exact(shm, scif_qp_span(rx_size));
}

SCIF_EXPORT_IF_KUNIT(scif_qp_free);

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
 * scif_rb_put_n() - send @n bytes of @from, for which there is room
 * @rb: the ring; the caller owns its transmit side
 * @from: the data; advanced by what was sent
 * @n: at most the room the caller saw (scif_rb_tx_room()) and what
 *	@from holds: the peer's count is not read again, so a count the
 *	peer changes meanwhile cannot make the send short (0 if the peer
 *	is not mapped: scif_rb_tx_room() says so)
 *
 * Context: any that may fault on @from; the caller's lock on the
 * transmit side (an endpoint's send mutex) held.
 * Return: the number of bytes sent, short of @n only if @from faulted.
 */
size_t scif_rb_put_n(struct scif_rb *rb, struct iov_iter *from, size_t n)
{
	size_t done;

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
 * scif_rb_put() - send as much of @from as there is room for
 * @rb: the ring; the caller owns its transmit side
 * @from: the data; advanced by what was sent
 *
 * Return: the number of bytes sent, which is short of the room only if
 * @from faulted.
 */
size_t scif_rb_put(struct scif_rb *rb, struct iov_iter *from)
{
	return scif_rb_put_n(rb, from, min_t(size_t, scif_rb_tx_room(rb),
					     iov_iter_count(from)));
}

/**
 * scif_rb_get_n() - receive @n bytes, which are waiting, into @to
 * @rb: the ring; the caller owns its receive side
 * @to: where the data goes; advanced by what was received
 * @n: at most what the caller saw waiting (scif_rb_rx_avail()) and what
 *	@to holds: the peer's count is not read again, so a count the peer
 *	changes meanwhile cannot make the receive short
 *
 * The read count is published to the peer only while it is mapped.
 *
 * Context: any that may fault on @to; the caller's lock on the receive
 * side (an endpoint's receive mutex) held.
 * Return: the number of bytes received, short of @n only if @to faulted.
 */
size_t scif_rb_get_n(struct scif_rb *rb, struct iov_iter *to, size_t n)
{
	size_t done;

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

/**
 * scif_rb_get() - receive as much as is waiting, up to what @to holds
 * @rb: the ring; the caller owns its receive side
 * @to: where the data goes; advanced by what was received
 *
 * Return: the number of bytes received (short only if @to faulted).
 */
size_t scif_rb_get(struct scif_rb *rb, struct iov_iter *to)
{
	u32 avail;

	if (scif_rb_rx_avail(rb, &avail))
		return 0;
	return scif_rb_get_n(rb, to, min_t(size_t, avail, iov_iter_count(to)));
}
