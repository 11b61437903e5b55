// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: the API exported to kernel clients (<linux/scif.h>).
 *
 * Thin wrappers over the endpoint operations; kernel buffers travel as
 * kvec iterators through the same code as user buffers.
 */
#include <linux/completion.h>
#include <linux/export.h>
#include <linux/jiffies.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uio.h>

#include "scif_conn.h"
#include "scif_epd.h"
#include "scif_fault.h"
#include "scif_mmap.h"
#include "scif_msg.h"
#include "scif_rma.h"

/*
 * Kernel callers see EINTR where a system call could be restarted.  64
 * bits wide: scif_register() returns offsets past 2^31 through it.
 */
static s64 scif_api_err(s64 ret)
{
	return ret == -ERESTARTSYS ? -EINTR : ret;
}

/**
 * scif_open() - create an endpoint
 *
 * Context: process context; may sleep.
 * Return: the endpoint, or NULL if memory or the max_endpoints limit ran
 * out.
 */
scif_epd_t scif_open(void)
{
	struct scif_endpt *ep = scif_epd_create(false);

	return IS_ERR(ep) ? NULL : ep;
}
EXPORT_SYMBOL_GPL(scif_open);

/**
 * scif_bind() - bind an endpoint to a local port
 * @epd: the endpoint
 * @pn: the port, or 0 to have one at or above SCIF_PORT_RSVD assigned;
 *	kernel callers may bind ports below SCIF_ADMIN_PORT_END
 *
 * Context: process context; may sleep.
 * Return: the port bound, -EINVAL if @epd or the port is bound already,
 * -EISCONN if @epd is connected, or -ENOSPC if no port is free.
 */
int scif_bind(scif_epd_t epd, u16 pn)
{
	return scif_epd_bind(epd, pn);
}
EXPORT_SYMBOL_GPL(scif_bind);

/**
 * scif_listen() - accept connection requests on a bound endpoint
 * @epd: the endpoint
 * @backlog: most requests that may wait; further ones are refused
 *
 * Context: process context; may sleep.
 * Return: 0, -EINVAL if @epd is not bound or @backlog is negative, or
 * -EISCONN if @epd is listening or connected.
 */
int scif_listen(scif_epd_t epd, int backlog)
{
	return scif_epd_listen(epd, backlog);
}
EXPORT_SYMBOL_GPL(scif_listen);

/**
 * scif_connect() - connect to a listening port, waiting for the accept
 * @epd: the endpoint; bound to a free port first if it is not bound
 * @dst: the node and port to connect to
 *
 * Context: process context; sleeps until the peer accepts or refuses.
 * Return: the local port, or -EINVAL (no @dst, or port 0), -ENODEV (no
 * such node online), -ECONNREFUSED, -EISCONN, -EOPNOTSUPP (@epd is
 * listening), -ENOSPC, -ENOMEM or -EINTR.
 */
int scif_connect(scif_epd_t epd, struct scif_port_id *dst)
{
	if (!dst)
		return -EINVAL;
	return scif_api_err(scif_epd_connect(epd, dst, false));
}
EXPORT_SYMBOL_GPL(scif_connect);

/**
 * scif_accept() - accept a connection request
 * @epd: a listening endpoint
 * @peer: receives the port id of the connecting endpoint
 * @newepd: receives the new, connected endpoint
 * @flags: 0, or SCIF_ACCEPT_SYNC to wait for a request
 *
 * Context: process context; may sleep.
 * Return: 0, -EINVAL (@epd not listening, bad @flags, no @peer or
 * @newepd), -EAGAIN (nothing to accept and no SCIF_ACCEPT_SYNC), -EINTR,
 * -ENODEV (the requesting node is gone) or -ENOMEM.
 */
int scif_accept(scif_epd_t epd, struct scif_port_id *peer, scif_epd_t *newepd,
		int flags)
{
	struct scif_conreq *req;
	struct scif_endpt *ep;
	int err;

	if (!peer || !newepd)
		return -EINVAL;
	req = scif_epd_take_request(epd, flags);
	if (IS_ERR(req))
		return scif_api_err(PTR_ERR(req));
	ep = scif_epd_create(false);
	if (IS_ERR(ep)) {
		scif_conreq_reject(req);
		return -ENOMEM;
	}
	*peer = req->peer;
	err = scif_epd_accept_request(ep, req);
	if (err) {
		scif_epd_close(ep);
		return err;
	}
	*newepd = ep;
	return 0;
}
EXPORT_SYMBOL_GPL(scif_accept);

/**
 * scif_close() - close an endpoint
 * @epd: the endpoint; not to be used again
 *
 * A listener refuses its waiting requests; the peer of a connected
 * endpoint sees the connection reset after receiving what was sent.  If
 * the endpoint had windows over kernel memory (SCIF_MAP_KERNEL), waits
 * until they are gone: until the peer has acknowledged the close, which
 * it does once none of its RMAs touches them any more, or its node is
 * gone.  A slow peer is waited for; a node held for a protocol error
 * until its bus reports it down.  The caller may free that memory when
 * the call returns.
 *
 * Context: process context; may sleep.  Not from a SCIF client's probe
 * or remove callback (the node lock is held there) when it may wait.
 * Return: 0.
 */
int scif_close(scif_epd_t epd)
{
	DECLARE_COMPLETION_ONSTACK(closed);
	bool wait = READ_ONCE(epd->rma.kernel_windows);

	/* Read by the endpoint's destruction, which the close may start. */
	if (wait)
		epd->closed = &closed;
	scif_epd_close(epd);
	if (wait)
		wait_for_completion(&closed);
	return 0;
}
EXPORT_SYMBOL_GPL(scif_close);

static int scif_api_msg(scif_epd_t epd, void *msg, int len, int flags,
			unsigned int dir)
{
	struct kvec kv = { .iov_base = msg, .iov_len = len };
	struct iov_iter iter;

	if (len < 0)
		return -EINVAL;
	iov_iter_kvec(&iter, dir, &kv, 1, len);
	return scif_api_err(dir == ITER_SOURCE ?
			       scif_epd_send(epd, &iter, flags) :
			       scif_epd_recv(epd, &iter, flags));
}

/**
 * scif_send() - send a message
 * @epd: a connected endpoint
 * @msg: the bytes
 * @len: how many
 * @flags: 0 to send what fits now, SCIF_SEND_BLOCK to send all
 *
 * Context: process context; may sleep.
 * Return: bytes sent, or -EINVAL, -ENOTCONN, -ECONNRESET or -EINTR if
 * none was.
 */
int scif_send(scif_epd_t epd, void *msg, int len, int flags)
{
	return scif_api_msg(epd, msg, len, flags, ITER_SOURCE);
}
EXPORT_SYMBOL_GPL(scif_send);

/**
 * scif_recv() - receive a message
 * @epd: a connected endpoint
 * @msg: where the bytes go
 * @len: room in @msg
 * @flags: 0 to take what is there now, SCIF_RECV_BLOCK to fill @msg
 *
 * Context: process context; may sleep.
 * Return: bytes received, or -EINVAL, -ENOTCONN, -ECONNRESET or -EINTR
 * if none was.
 */
int scif_recv(scif_epd_t epd, void *msg, int len, int flags)
{
	return scif_api_msg(epd, msg, len, flags, ITER_DEST);
}
EXPORT_SYMBOL_GPL(scif_recv);

static int scif_api_poll_scan(struct scif_pollepd *epds, unsigned int nepds)
{
	unsigned int i;
	int ready = 0;

	for (i = 0; i < nepds; i++) {
		epds[i].revents = scif_msg_poll_mask(epds[i].epd) &
				  (epds[i].events | EPOLLERR | EPOLLHUP);
		if (epds[i].revents)
			ready++;
	}
	return ready;
}

/**
 * scif_poll() - wait for events on endpoints
 * @epds: the endpoints and the events wanted; revents are filled in
 * @nepds: number of entries in @epds
 * @timeout: milliseconds to wait at most; 0 not to wait, negative for
 *	no limit
 *
 * Context: process context; may sleep.
 * Return: the number of entries with events, 0 on timeout, -ENOMEM or
 * -EINTR.
 */
int scif_poll(struct scif_pollepd *epds, unsigned int nepds, long timeout)
{
	long left = timeout < 0 ? MAX_SCHEDULE_TIMEOUT :
				  msecs_to_jiffies(timeout);
	struct wait_queue_entry *waits;
	unsigned int i;
	int ready;

	waits = scif_kcalloc(nepds, sizeof(*waits), GFP_KERNEL);
	if (nepds && !waits)
		return -ENOMEM;
	for (i = 0; i < nepds; i++) {
		init_waitqueue_entry(&waits[i], current);
		add_wait_queue(&epds[i].epd->wq, &waits[i]);
	}
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		ready = scif_api_poll_scan(epds, nepds);
		if (ready || !left)
			break;
		if (signal_pending(current)) {
			ready = -EINTR;
			break;
		}
		left = schedule_timeout(left);
	}
	__set_current_state(TASK_RUNNING);
	for (i = 0; i < nepds; i++)
		remove_wait_queue(&epds[i].epd->wq, &waits[i]);
	kfree(waits);
	return ready;
}
EXPORT_SYMBOL_GPL(scif_poll);

/**
 * scif_pin_pages() - pin memory for scif_register_pinned_pages()
 * @addr: start, page aligned: a user address of the current process,
 *	or with SCIF_MAP_KERNEL a kernel address (linear map or vmalloc),
 *	which the caller keeps valid until every window over it is gone
 * @len: bytes, a non-zero multiple of the page size
 * @prot_flags: SCIF_PROT_READ and/or SCIF_PROT_WRITE
 * @map_flags: 0 or SCIF_MAP_KERNEL
 * @pinned_pages: receives the pinned pages
 *
 * User pages are pinned for the long term and charged to the process's
 * RLIMIT_MEMLOCK.
 *
 * Context: process context; may sleep.
 * Return: 0, or -EINVAL (bad flags, alignment or length), -EFAULT
 * (memory that cannot be pinned), -EAGAIN (over RLIMIT_MEMLOCK), -ENOMEM
 * or -EINTR.
 */
int scif_pin_pages(void *addr, size_t len, int prot_flags, int map_flags,
		   scif_pinned_pages_t *pinned_pages)
{
	if (!pinned_pages)
		return -EINVAL;
	return scif_pin_range((unsigned long)addr, len, prot_flags, map_flags,
			    pinned_pages);
}
EXPORT_SYMBOL_GPL(scif_pin_pages);

/**
 * scif_unpin_pages() - let go of pages from scif_pin_pages()
 * @pinned_pages: the pages; not to be used again by the caller
 *
 * The pages are unpinned at once, or when the last window registered
 * over them is gone.
 *
 * Context: process context; may sleep.
 * Return: 0, or -EINVAL if @pinned_pages is NULL.
 */
int scif_unpin_pages(scif_pinned_pages_t pinned_pages)
{
	if (!pinned_pages)
		return -EINVAL;
	scif_pin_put(pinned_pages);
	return 0;
}
EXPORT_SYMBOL_GPL(scif_unpin_pages);

/**
 * scif_register_pinned_pages() - open a window over pinned pages
 * @epd: a connected endpoint
 * @pinned_pages: from scif_pin_pages(); the window keeps them pinned
 * @offset: with SCIF_MAP_FIXED the window's offset, page aligned;
 *	otherwise a hint, 0 for none
 * @map_flags: 0 or SCIF_MAP_FIXED
 *
 * Context: process context; sleeps until the peer has the window.
 * Return: the window's offset, or -EINVAL, -EADDRINUSE (SCIF_MAP_FIXED
 * range taken), -ENOMEM, -ENOTCONN, -ECONNRESET, -ENODEV, -EINTR or
 * -EPROTO (the peer refused the window).
 */
off_t scif_register_pinned_pages(scif_epd_t epd,
				 scif_pinned_pages_t pinned_pages,
				 off_t offset, int map_flags)
{
	int err;

	if (!pinned_pages || (map_flags & ~SCIF_MAP_FIXED))
		return -EINVAL;
	err = scif_window_conn_err(epd);
	if (err)
		return err;
	return scif_api_err(scif_epd_register(epd, pinned_pages, offset,
						 map_flags));
}
EXPORT_SYMBOL_GPL(scif_register_pinned_pages);

/**
 * scif_register() - pin memory and open a window over it
 * @epd: a connected endpoint
 * @addr: start, page aligned: a user address of the current process, or
 *	with SCIF_MAP_KERNEL a kernel address the caller keeps valid until
 *	the window is gone
 * @len: bytes, a non-zero multiple of the page size
 * @offset: with SCIF_MAP_FIXED the window's offset, page aligned;
 *	otherwise a hint, 0 for none
 * @prot_flags: SCIF_PROT_READ and/or SCIF_PROT_WRITE
 * @map_flags: SCIF_MAP_FIXED and/or SCIF_MAP_KERNEL
 *
 * Context: process context; sleeps until the peer has the window.
 * Return: the window's offset, or -EINVAL, -EFAULT, -EAGAIN (over
 * RLIMIT_MEMLOCK), -EADDRINUSE, -ENOMEM, -ENOTCONN, -ECONNRESET,
 * -ENODEV, -EINTR or -EPROTO.
 */
off_t scif_register(scif_epd_t epd, void *addr, size_t len, off_t offset,
		    int prot_flags, int map_flags)
{
	return scif_api_err(scif_epd_register_mem(epd, (unsigned long)addr,
						     len, offset, prot_flags,
						     map_flags));
}
EXPORT_SYMBOL_GPL(scif_register);

/**
 * scif_register_alias() - a window over the pages of registered windows
 * @dst: a connected endpoint, where the new window is made
 * @src: a connected endpoint of this node; [@src_offset, @src_offset +
 *	@len) of its registered address space must be covered by windows
 *	over RAM (no device window)
 * @src_offset: page aligned
 * @len: bytes, a non-zero multiple of the page size
 * @offset: with SCIF_MAP_FIXED the new window's offset, page aligned;
 *	otherwise a hint, 0 for none
 * @prot_flags: SCIF_PROT_READ and/or SCIF_PROT_WRITE: what the new window
 *	allows; every window of the range must allow them too
 * @map_flags: 0 or SCIF_MAP_FIXED
 *
 * The new window shares the pinned pages of @src's windows: unregistering
 * those leaves the pages pinned until the alias is unregistered too (or
 * @dst closed).  It pins and charges nothing new, and counts in @dst's
 * and its peer's window budgets as any window.
 *
 * Context: process context; sleeps until @dst's peer has the window.
 * Return: the new window's offset, or -EINVAL, -ENXIO (the range is not
 * all registered on @src), -EACCES, -EOPNOTSUPP (a device window),
 * -EADDRINUSE, -ENOMEM, -ENOTCONN, -ECONNRESET, -ENODEV, -EINTR or
 * -EPROTO.
 */
off_t scif_register_alias(scif_epd_t dst, scif_epd_t src, off_t src_offset,
			  size_t len, off_t offset, int prot_flags,
			  int map_flags)
{
	if (!dst || !src)
		return -EINVAL;
	return scif_api_err(scif_epd_register_alias(dst, src, src_offset, len,
						       offset, prot_flags,
						       map_flags));
}
EXPORT_SYMBOL_GPL(scif_register_alias);

/**
 * scif_register_pci() - open a window over a range of a PCI BAR
 * @epd: a connected endpoint
 * @pdev: the PCI function, whose driver (the caller) is bound
 * @bar: a memory BAR of @pdev, 0..5
 * @bar_offset: first byte of the range in the BAR, page aligned
 * @len: bytes, a non-zero multiple of the page size, inside the BAR
 * @offset: with SCIF_MAP_FIXED the window's offset, page aligned;
 *	otherwise a hint, 0 for none
 * @prot_flags: SCIF_PROT_READ and/or SCIF_PROT_WRITE
 * @map_flags: 0 or SCIF_MAP_FIXED
 *
 * A device window: the range is mapped (write-combined for a
 * prefetchable BAR), nothing is pinned or charged, and the peer reaches
 * it through staging (STAGE_* messages); a remote mmap of it fails with
 * -ENXIO.  The caller unregisters it with scif_unregister() before it
 * unbinds its driver; should it not, the unbind unregisters it first.
 * At most max_devmem_windows device windows exist on the node.
 *
 * Context: process context; sleeps until the peer answers.
 * Return: the window's offset, or -EINVAL (not a memory BAR, a range
 * outside it or not page aligned, bad flags), -EBUSY (no driver bound
 * to @pdev), -EAGAIN (max_devmem_windows reached), -ENODEV (the driver
 * unbound meanwhile, or the node went), or an error of scif_register().
 */
off_t scif_register_pci(scif_epd_t epd, struct pci_dev *pdev, int bar,
			u64 bar_offset, size_t len, off_t offset,
			int prot_flags, int map_flags)
{
	struct scif_pinned_pages *pp;
	s64 ret;
	int err;

	if (!epd || (map_flags & ~SCIF_MAP_FIXED) || offset < 0)
		return -EINVAL;
	err = scif_window_conn_err(epd) ?:
	      scif_devmem_pin(pdev, bar, bar_offset, len, prot_flags, &pp);
	if (err)
		return err;
	ret = scif_epd_register_devmem(epd, pp, offset, map_flags);
	scif_pin_put(pp);
	return scif_api_err(ret);
}
EXPORT_SYMBOL_GPL(scif_register_pci);

/**
 * scif_unregister() - close the windows inside a range
 * @epd: the endpoint
 * @offset: start of the range, page aligned
 * @len: bytes, a non-zero multiple of the page size
 *
 * Every window entirely inside the range is closed; if one is only
 * partly inside, nothing is.  A window's pages are unpinned once the
 * peer has let go of it and no RMA of this endpoint uses it.  For a
 * window over kernel memory (SCIF_MAP_KERNEL) the call returns only
 * once the peer's last RMA on it is done, so that the caller may free
 * or reuse the memory then; after an error the memory must be kept
 * until the endpoint is closed.
 *
 * Context: process context; sleeps until the peer has let go.
 * Return: 0, or -EINVAL (alignment, a window partly in the range),
 * -ENXIO (no window in the range), -ENOTCONN, -ECONNRESET, -ENODEV or
 * -EINTR (a fatal signal).
 */
int scif_unregister(scif_epd_t epd, off_t offset, size_t len)
{
	return scif_epd_unregister(epd, offset, len);
}
EXPORT_SYMBOL_GPL(scif_unregister);

/**
 * scif_get_pages() - the pages behind a range of the peer's windows
 * @epd: a connected endpoint
 * @offset: start of the range in the peer's registered address space,
 *	page aligned
 * @len: bytes, a non-zero multiple of the page size
 * @pages: receives the range (see struct scif_range)
 *
 * The range must lie in windows of the peer that are contiguous in its
 * registered address space.  Every window of the range stays referenced
 * until scif_put_pages(): the peer's scif_unregister() of it, and this
 * endpoint's scif_close() or the loss of its peer, wait until then, so
 * the pages must be put promptly (and before scif_close()).
 *
 * Context: process context; may sleep.
 * Return: 0, or -EINVAL (alignment, length), -ENXIO (not inside the
 * peer's windows), -ENOMEM, -ENOTCONN, -ECONNRESET or -ENODEV.
 */
int scif_get_pages(scif_epd_t epd, off_t offset, size_t len,
		   struct scif_range **pages)
{
	if (!pages)
		return -EINVAL;
	return scif_api_err(scif_epd_get_pages(epd, offset, len, pages));
}
EXPORT_SYMBOL_GPL(scif_get_pages);

/**
 * scif_put_pages() - give back a range from scif_get_pages()
 * @pages: the range; freed here, with the window references it held
 *
 * Context: process context; may sleep.
 * Return: 0, or -EINVAL if @pages is not a range scif_get_pages()
 * returned (or was put already, as far as that can be told).
 */
int scif_put_pages(struct scif_range *pages)
{
	return scif_epd_put_pages(pages);
}
EXPORT_SYMBOL_GPL(scif_put_pages);

/**
 * scif_mmap_vma() - map a range of the peer's windows into a process
 * @epd: a connected endpoint
 * @offset: start of the range in the peer's registered address space,
 *	page aligned
 * @vma: a shared VMA the caller's mmap() handler was given: the range is
 *	as long as it (less its last page with SCIF_MMAP_STATUS), mapped
 *	with its protection (every window must allow it; reading always)
 * @flags: 0 or SCIF_MMAP_STATUS
 *
 * For a kernel client that hands a process the peer's memory through its
 * own file (as the RDMA device does for its QPs).  The VMA becomes one
 * of SCIF's: its file is replaced by one of SCIF's own (which holds the
 * endpoint and the module for as long as the VMA lives) and vm_pgoff by
 * @offset's page.  The mapping is revoked as a mapping of /dev/scif is
 * (Documentation/scif/mmap.rst): when a window of the range leaves (the
 * peer's scif_unregister(), scif_close(), the loss of the node), its
 * pages are taken out of every process.  Without flags an access then
 * gets SIGBUS; with SCIF_MMAP_STATUS the VMA's last page holds a struct
 * scif_mmap_status whose @revoked is set first, and the range then
 * reads zeroes and takes writes into a page of its own.
 *
 * Context: process context, in an mmap() handler (mmap_lock held for
 * writing); may sleep.
 * Return: 0; -EINVAL (bad @flags or @offset, a private mapping, no room
 * for the status page); -EACCES (execution, or access a window does
 * not allow); -ENXIO (the range is not covered by contiguous windows of
 * the peer, or the bus cannot map it into processes); -ENOTCONN,
 * -ECONNRESET or -ENODEV; -ENOMEM (also past SCIF_MMAP_CLIENT_MAX, 256,
 * live mappings of the endpoint).
 */
int scif_mmap_vma(scif_epd_t epd, off_t offset, struct vm_area_struct *vma,
		  int flags)
{
	if (!epd || !vma || (flags & ~SCIF_MMAP_STATUS) || offset < 0 ||
	    !PAGE_ALIGNED(offset))
		return -EINVAL;
	return scif_mmap_client(epd, offset, vma, flags & SCIF_MMAP_STATUS);
}
EXPORT_SYMBOL_GPL(scif_mmap_vma);

static int scif_api_rma(scif_epd_t epd, struct scif_rma_req *req)
{
	return scif_api_err(scif_epd_rma(epd, req));
}

/**
 * scif_readfrom() - copy from the peer's registered memory into ours
 * @epd: a connected endpoint
 * @loffset: where the bytes go, in @epd's registered address space
 * @len: bytes
 * @roffset: where they come from, in the peer's registered address space
 * @rma_flags: SCIF_RMA_USECPU, SCIF_RMA_SYNC, SCIF_RMA_ORDERED,
 *	SCIF_RMA_USECACHE; every copy is done by the CPU before the call
 *	returns (SCIF_RMA_USECACHE has no effect)
 *
 * Each range may span several windows if they are contiguous.
 *
 * Context: process context; may sleep.
 * Return: 0, or -EINVAL (bad flags, @len 0), -ENXIO (a range not inside
 * windows, or a negative offset), -EACCES (a window forbids the access),
 * -ENOTCONN, -ECONNRESET, -ENODEV or -EINTR.
 */
int scif_readfrom(scif_epd_t epd, off_t loffset, size_t len, off_t roffset,
		  int rma_flags)
{
	struct scif_rma_req req = {
		.loffset = loffset, .len = len, .roffset = roffset,
		.flags = rma_flags, .kind = SCIF_RMA_WINDOW,
	};

	return scif_api_rma(epd, &req);
}
EXPORT_SYMBOL_GPL(scif_readfrom);

/**
 * scif_writeto() - copy from our registered memory into the peer's
 * @epd: a connected endpoint
 * @loffset: where the bytes come from, in @epd's registered address space
 * @len: bytes
 * @roffset: where they go, in the peer's registered address space
 * @rma_flags: as for scif_readfrom()
 *
 * Context: process context; may sleep.
 * Return: as for scif_readfrom().
 */
int scif_writeto(scif_epd_t epd, off_t loffset, size_t len, off_t roffset,
		 int rma_flags)
{
	struct scif_rma_req req = {
		.loffset = loffset, .len = len, .roffset = roffset,
		.flags = rma_flags, .kind = SCIF_RMA_WINDOW, .to_remote = true,
	};

	return scif_api_rma(epd, &req);
}
EXPORT_SYMBOL_GPL(scif_writeto);

/**
 * scif_vreadfrom() - copy from the peer's registered memory into a buffer
 * @epd: a connected endpoint
 * @addr: kernel buffer of @len bytes
 * @len: bytes
 * @roffset: where they come from, in the peer's registered address space
 * @rma_flags: as for scif_readfrom()
 *
 * Context: process context; may sleep.
 * Return: as for scif_readfrom().
 */
int scif_vreadfrom(scif_epd_t epd, void *addr, size_t len, off_t roffset,
		   int rma_flags)
{
	struct scif_rma_req req = {
		.kaddr = addr, .len = len, .roffset = roffset,
		.flags = rma_flags, .kind = SCIF_RMA_KERNEL,
	};

	return scif_api_rma(epd, &req);
}
EXPORT_SYMBOL_GPL(scif_vreadfrom);

/**
 * scif_vwriteto() - copy from a buffer into the peer's registered memory
 * @epd: a connected endpoint
 * @addr: kernel buffer of @len bytes
 * @len: bytes
 * @roffset: where they go, in the peer's registered address space
 * @rma_flags: as for scif_readfrom()
 *
 * Context: process context; may sleep.
 * Return: as for scif_readfrom().
 */
int scif_vwriteto(scif_epd_t epd, void *addr, size_t len, off_t roffset,
		  int rma_flags)
{
	struct scif_rma_req req = {
		.kaddr = addr, .len = len, .roffset = roffset,
		.flags = rma_flags, .kind = SCIF_RMA_KERNEL, .to_remote = true,
	};

	return scif_api_rma(epd, &req);
}
EXPORT_SYMBOL_GPL(scif_vwriteto);

/**
 * scif_fence_mark() - mark the RMAs not yet completed
 * @epd: a connected endpoint
 * @flags: SCIF_FENCE_INIT_SELF (the RMAs initiated through @epd) or
 *	SCIF_FENCE_INIT_PEER (those initiated through its peer)
 * @mark: receives the mark, to pass to scif_fence_wait()
 *
 * A mark covers every asynchronous RMA of the set issued before the
 * call (with SCIF_FENCE_INIT_PEER: before the peer received the request).
 * RMAs that completed before their call returned (SCIF_RMA_SYNC,
 * SCIF_RMA_USECPU) need no fence.
 *
 * Context: process context; with SCIF_FENCE_INIT_PEER sleeps until the
 * peer answers.
 * Return: 0, or -EINVAL (@flags), -ENOTCONN, -ECONNRESET, -ENODEV or
 * -EINTR (fatal signal).
 */
int scif_fence_mark(scif_epd_t epd, int flags, int *mark)
{
	if (!mark)
		return -EINVAL;
	return scif_api_err(scif_epd_fence_mark(epd, flags, mark));
}
EXPORT_SYMBOL_GPL(scif_fence_mark);

/**
 * scif_fence_wait() - wait until every RMA of a mark has completed
 * @epd: the endpoint the mark was taken on
 * @mark: a value from scif_fence_mark()
 *
 * Returns at once if the marked RMAs have completed already (or if no
 * RMA was outstanding when the mark was taken).  If the peer goes away
 * the wait ends with its error: the marked RMAs may not all have been
 * copied.
 *
 * Context: process context; sleeps, interruptibly.
 * Return: 0, or -ENOMEM, -ENOTCONN, -ECONNRESET, -ENODEV or -EINTR
 * (a signal).
 */
int scif_fence_wait(scif_epd_t epd, int mark)
{
	return scif_api_err(scif_epd_fence_wait(epd, mark));
}
EXPORT_SYMBOL_GPL(scif_fence_wait);

/**
 * scif_fence_signal() - write values once the RMAs not yet completed have
 * @epd: a connected endpoint
 * @loff: offset in @epd's registered address space (SCIF_SIGNAL_LOCAL)
 * @lval: the 64-bit value written at @loff
 * @roff: offset in the peer's registered address space
 *	(SCIF_SIGNAL_REMOTE)
 * @rval: the 64-bit value written at @roff
 * @flags: exactly one of SCIF_FENCE_INIT_SELF and SCIF_FENCE_INIT_PEER
 *	(as for scif_fence_mark()), and SCIF_SIGNAL_LOCAL,
 *	SCIF_SIGNAL_REMOTE or both
 *
 * Returns without waiting for the RMAs: the values are written after
 * every RMA of the set issued before the call has completed and its data
 * is visible.  Each offset used must be 4-byte aligned, and its 8 bytes
 * must lie in windows that allow writing; an 8-byte aligned value is
 * written by a single store.
 *
 * Context: process context; may sleep for room in the copy engine's
 * queue, or with SCIF_FENCE_INIT_PEER until the peer answers.
 * Return: 0, or -EINVAL (@flags, an offset not 4-byte aligned), -ENXIO
 * (an offset not inside windows), -EACCES (a window does not allow
 * writing), -ENOMEM, -ENOTCONN, -ECONNRESET, -ENODEV or -EINTR (fatal
 * signal).
 */
int scif_fence_signal(scif_epd_t epd, off_t loff, u64 lval, off_t roff,
		      u64 rval, int flags)
{
	return scif_api_err(scif_epd_fence_signal(epd, loff, lval, roff,
						     rval, flags));
}
EXPORT_SYMBOL_GPL(scif_fence_signal);
