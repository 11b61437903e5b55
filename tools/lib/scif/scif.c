// SPDX-License-Identifier: LGPL-2.1
/*
 * libscif: thin wrappers over the ioctls, mmap and poll of /dev/scif,
 * and a data path for send and recv that mostly bypasses them (scif_fp.c).
 *
 * Policy (flag and range checks) is the kernel's; the library only turns
 * arguments into the ioctl structures and results back into return values.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "scif.h"
#include "scif_fp.h"

#define SCIF_DEV	"/dev/scif"
#define SCIF_EXPORT	__attribute__((visibility("default")))

_Static_assert(sizeof(struct scif_pollepd) == sizeof(struct pollfd) &&
	       offsetof(struct scif_pollepd, epd) == offsetof(struct pollfd, fd) &&
	       offsetof(struct scif_pollepd, events) ==
			offsetof(struct pollfd, events) &&
	       offsetof(struct scif_pollepd, revents) ==
			offsetof(struct pollfd, revents),
	       "struct scif_pollepd must match struct pollfd");
_Static_assert(SCIF_MAP_FIXED == MAP_FIXED, "SCIF_MAP_FIXED != MAP_FIXED");
_Static_assert(SCIF_PROT_READ == PROT_READ && SCIF_PROT_WRITE == PROT_WRITE,
	       "SCIF_PROT_* != PROT_*");

/* ioctl() whose success is always reported as 0. */
static int scif_ioctl(scif_epd_t epd, unsigned long req, void *arg)
{
	return ioctl(epd, req, arg) < 0 ? -1 : 0;
}

/* close() that leaves errno as it was, for error paths. */
static void close_keep_errno(int fd)
{
	int err = errno;

	close(fd);
	errno = err;
}

SCIF_EXPORT scif_epd_t scif_open(void)
{
	int fd = open(SCIF_DEV, O_RDWR | O_CLOEXEC);

	/* A descriptor closed with close(2) may come back as a new endpoint. */
	scif_fp_forget(fd);
	return fd;
}

SCIF_EXPORT int scif_close(scif_epd_t epd)
{
	scif_fp_forget(epd);
	return close(epd);
}

SCIF_EXPORT int scif_bind(scif_epd_t epd, uint16_t pn)
{
	/* The kernel reads and writes back exactly 16 bits here. */
	if (scif_ioctl(epd, SCIF_BIND, &pn))
		return -1;
	return pn;
}

SCIF_EXPORT int scif_listen(scif_epd_t epd, int backlog)
{
	return ioctl(epd, SCIF_LISTEN, (long)backlog) < 0 ? -1 : 0;
}

SCIF_EXPORT int scif_connect(scif_epd_t epd, struct scif_port_id *dst)
{
	struct scifioctl_connect req = { 0 };

	if (!dst) {
		errno = EINVAL;
		return -1;
	}
	req.peer = *dst;
	if (scif_ioctl(epd, SCIF_CONNECT, &req))
		return -1;
	return req.self.port;
}

SCIF_EXPORT int scif_accept(scif_epd_t epd, struct scif_port_id *peer,
			    scif_epd_t *newepd, int flags)
{
	struct scifioctl_accept req = { .flags = flags };
	int fd;

	if (!peer || !newepd) {
		errno = EINVAL;
		return -1;
	}
	fd = open(SCIF_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (scif_ioctl(epd, SCIF_ACCEPTREQ, &req) ||
	    scif_ioctl(fd, SCIF_ACCEPTREG, &req.endpt)) {
		close_keep_errno(fd);
		return -1;
	}
	scif_fp_forget(fd);
	*peer = req.peer;
	*newepd = fd;
	return 0;
}

static int scif_msg(scif_epd_t epd, unsigned long req, void *msg, int len,
		    int flags)
{
	struct scifioctl_msg m = {
		.msg = (uintptr_t)msg,
		.len = len,
		.flags = flags,
	};

	if (scif_ioctl(epd, req, &m))
		return -1;
	return m.out_len;
}

static int scif_ksend(int epd, void *msg, int len, int flags)
{
	return scif_msg(epd, SCIF_SEND, msg, len, flags);
}

static int scif_krecv(int epd, void *msg, int len, int flags)
{
	return scif_msg(epd, SCIF_RECV, msg, len, flags);
}

/* Through the mapped rings where it can (scif_fp.c), else the kernel. */
SCIF_EXPORT int scif_send(scif_epd_t epd, void *msg, int len, int flags)
{
	return scif_fp_send(epd, msg, len, flags, scif_ksend);
}

SCIF_EXPORT int scif_recv(scif_epd_t epd, void *msg, int len, int flags)
{
	return scif_fp_recv(epd, msg, len, flags, scif_krecv);
}

SCIF_EXPORT off_t scif_register(scif_epd_t epd, void *addr, size_t len,
				off_t offset, int prot_flags, int map_flags)
{
	struct scifioctl_reg reg = {
		.addr = (uintptr_t)addr,
		.len = len,
		.offset = offset,
		.prot = prot_flags,
		.flags = map_flags,
	};

	if (scif_ioctl(epd, SCIF_REG, &reg))
		return SCIF_REGISTER_FAILED;
	return reg.out_offset;
}

/* A field of 1 to @max hex digits at *@p, which moves past it; -1 if none. */
static long scif_hex_field(const char **p, int max)
{
	long v = 0;
	int n = 0;

	for (; n < max && isxdigit((unsigned char)**p); n++, (*p)++)
		v = v * 16 + (isdigit((unsigned char)**p) ? **p - '0' :
			      (tolower((unsigned char)**p) - 'a' + 10));
	return n ? v : -1;
}

/*
 * A PCI function's name as sysfs gives it, "dddd:bb:dd.f" or "bb:dd.f"
 * (hex digits only; domain 0), into the fields of SCIF_REG_PCI: 0, or
 * -1 if it is not such a name.
 */
static int scif_pci_name(const char *name, struct scifioctl_reg_pci *reg)
{
	long f[4] = { 0 };
	const char *p = name;
	int i, n;

	if (!name)
		return -1;
	n = strchr(name, ':') != strrchr(name, ':') ? 4 : 3;
	for (i = 4 - n; i < 4; i++) {
		f[i] = scif_hex_field(&p, i == 0 ? 4 : 2);
		if (f[i] < 0 || *p++ != (i == 3 ? '\0' : i == 2 ? '.' : ':'))
			return -1;
	}
	if (f[2] > 0x1f || f[3] > 7)
		return -1;
	reg->domain = f[0];
	reg->bus = f[1];
	reg->devfn = f[2] << 3 | f[3];
	return 0;
}

SCIF_EXPORT off_t scif_register_pci(scif_epd_t epd, const char *pci_name,
				    int bar, off_t bar_offset, size_t len,
				    off_t offset, int prot_flags, int map_flags)
{
	struct scifioctl_reg_pci reg = {
		.bar_offset = bar_offset,
		.len = len,
		.offset = offset,
		.prot = prot_flags,
		.flags = map_flags,
	};

	if (scif_pci_name(pci_name, &reg) || bar < 0 || bar > 5 ||
	    bar_offset < 0) {
		errno = EINVAL;
		return SCIF_REGISTER_FAILED;
	}
	reg.bar = bar;
	if (scif_ioctl(epd, SCIF_REG_PCI, &reg))
		return SCIF_REGISTER_FAILED;
	return reg.out_offset;
}

SCIF_EXPORT int scif_unregister(scif_epd_t epd, off_t offset, size_t len)
{
	struct scifioctl_unreg unreg = { .offset = offset, .len = len };

	return scif_ioctl(epd, SCIF_UNREG, &unreg);
}

SCIF_EXPORT void *scif_mmap(void *addr, size_t len, int prot_flags,
			    int map_flags, scif_epd_t epd, off_t offset)
{
	/* SCIF_MAP_FIXED is MAP_FIXED; mmap(2) would take other flags. */
	if ((map_flags & ~SCIF_MAP_FIXED) ||
	    (prot_flags & ~(SCIF_PROT_READ | SCIF_PROT_WRITE))) {
		errno = EINVAL;
		return SCIF_MMAP_FAILED;
	}
	/* MAP_FAILED is SCIF_MMAP_FAILED. */
	return mmap(addr, len, prot_flags, map_flags | MAP_SHARED, epd, offset);
}

SCIF_EXPORT int scif_munmap(void *addr, size_t len)
{
	return munmap(addr, len);
}

static int scif_copy(scif_epd_t epd, unsigned long req, off_t loffset,
		     void *addr, size_t len, off_t roffset, int rma_flags)
{
	struct scifioctl_copy copy = {
		.loffset = loffset,
		.len = len,
		.roffset = roffset,
		.addr = (uintptr_t)addr,
		.flags = rma_flags,
	};

	return scif_ioctl(epd, req, &copy);
}

SCIF_EXPORT int scif_readfrom(scif_epd_t epd, off_t loffset, size_t len,
			      off_t roffset, int rma_flags)
{
	return scif_copy(epd, SCIF_READFROM, loffset, NULL, len, roffset,
			 rma_flags);
}

SCIF_EXPORT int scif_writeto(scif_epd_t epd, off_t loffset, size_t len,
			     off_t roffset, int rma_flags)
{
	return scif_copy(epd, SCIF_WRITETO, loffset, NULL, len, roffset,
			 rma_flags);
}

SCIF_EXPORT int scif_vreadfrom(scif_epd_t epd, void *addr, size_t len,
			       off_t roffset, int rma_flags)
{
	return scif_copy(epd, SCIF_VREADFROM, 0, addr, len, roffset,
			 rma_flags);
}

SCIF_EXPORT int scif_vwriteto(scif_epd_t epd, void *addr, size_t len,
			      off_t roffset, int rma_flags)
{
	return scif_copy(epd, SCIF_VWRITETO, 0, addr, len, roffset,
			 rma_flags);
}

SCIF_EXPORT int scif_fence_mark(scif_epd_t epd, int flags, int *mark)
{
	struct scifioctl_fence_mark req = {
		.flags = flags,
		.mark = (uintptr_t)mark,
	};

	return scif_ioctl(epd, SCIF_FENCE_MARK, &req);
}

SCIF_EXPORT int scif_fence_wait(scif_epd_t epd, int mark)
{
	return ioctl(epd, SCIF_FENCE_WAIT, (long)mark) < 0 ? -1 : 0;
}

SCIF_EXPORT int scif_fence_signal(scif_epd_t epd, off_t loff, uint64_t lval,
				  off_t roff, uint64_t rval, int flags)
{
	struct scifioctl_fence_signal req = {
		.loff = loff,
		.lval = lval,
		.roff = roff,
		.rval = rval,
		.flags = flags,
	};

	return scif_ioctl(epd, SCIF_FENCE_SIGNAL, &req);
}

SCIF_EXPORT int scif_get_nodeIDs(uint16_t *nodes, int len, uint16_t *self)
{
	struct scifioctl_node_ids req = {
		.nodes = (uintptr_t)nodes,
		.self = (uintptr_t)self,
		.len = len,
	};
	int fd, ret;

	fd = open(SCIF_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ret = scif_ioctl(fd, SCIF_GET_NODEIDS, &req);
	close_keep_errno(fd);
	return ret ? -1 : req.len;
}

SCIF_EXPORT int scif_get_fd(scif_epd_t epd)
{
	return epd;
}

SCIF_EXPORT int scif_poll(struct scif_pollepd *epds, unsigned int nepds,
			  long timeout)
{
	struct timespec ts = {
		.tv_sec = timeout / 1000,
		.tv_nsec = timeout % 1000 * 1000000L,
	};

	/* ppoll() so that a timeout beyond INT_MAX ms is not truncated. */
	return ppoll((struct pollfd *)epds, nepds, timeout < 0 ? NULL : &ts,
		     NULL);
}

/* Every function when filter is NULL; node may be SCIF_DEV_ANY_NODE. */
SCIF_EXPORT int scif_get_device_list(uint16_t node,
				     const struct scif_dev_filter *filter,
				     struct scif_dev_entry *entries, int max)
{
	struct scifioctl_dev_list req = {
		.vendor = 0xffff,
		.device = 0xffff,
		.node = node,
		.max = max < 0 ? 0 : max,
		.entries = (uintptr_t)entries,
	};
	int fd, ret;

	if (max < 0) {
		errno = EINVAL;
		return -1;
	}
	if (filter) {
		req.pci_class = filter->pci_class;
		req.class_mask = filter->class_mask;
		req.vendor = filter->vendor;
		req.device = filter->device;
		req.flags = filter->flags;
	}
	fd = open(SCIF_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ret = scif_ioctl(fd, SCIF_DEV_LIST, &req);
	close_keep_errno(fd);
	return ret ? -1 : (int)req.count;
}

/* The borrow file's descriptor; closing it (scif_return_device) returns. */
SCIF_EXPORT int scif_borrow_device(uint64_t fdid, int flags)
{
	struct scifioctl_dev_borrow req = {
		.fdid = fdid,
		.flags = flags,
	};
	int fd, ret;

	fd = open(SCIF_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ret = scif_ioctl(fd, SCIF_DEV_BORROW, &req);
	close_keep_errno(fd);
	return ret ? -1 : req.fd;
}

SCIF_EXPORT int scif_get_device_info(int bfd, struct scif_dev_entry *entry)
{
	return scif_ioctl(bfd, SCIF_DEV_INFO, entry);
}

SCIF_EXPORT int scif_return_device(int bfd)
{
	return close(bfd);
}
