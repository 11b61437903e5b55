/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * SCIF (Symmetric Communication Interface) user ABI: the ioctls of
 * /dev/scif, their argument structures and the flag values they take.
 *
 * The layout is binary compatible, on x86_64, with the interface of the
 * SCIF driver that Linux carried from 4.2 to 5.9, so that programs and
 * user libraries written for it run unchanged.  Several structures have
 * implicit padding; it is part of that ABI and is left as it was.
 *
 * One open file of /dev/scif is one SCIF endpoint.
 */
#ifndef _UAPI_LINUX_SCIF_IOCTL_H
#define _UAPI_LINUX_SCIF_IOCTL_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* Flags of accept, send and recv. */
#define SCIF_ACCEPT_SYNC	1
#define SCIF_SEND_BLOCK		1
#define SCIF_RECV_BLOCK		1

/* Window protection; the same values as PROT_READ and PROT_WRITE. */
#define SCIF_PROT_READ		0x1
#define SCIF_PROT_WRITE		0x2

/* Registration flags; SCIF_MAP_FIXED has the value of MAP_FIXED. */
#define SCIF_MAP_FIXED		0x10
#define SCIF_MAP_KERNEL		0x20

/* Fence flags. */
#define SCIF_FENCE_INIT_SELF	0x1
#define SCIF_FENCE_INIT_PEER	0x2
#define SCIF_SIGNAL_LOCAL	0x10
#define SCIF_SIGNAL_REMOTE	0x20

/* Remote memory access flags. */
#define SCIF_RMA_USECPU		0x1
#define SCIF_RMA_USECACHE	0x2
#define SCIF_RMA_SYNC		0x4
#define SCIF_RMA_ORDERED	0x8

/* Ports below SCIF_ADMIN_PORT_END need privilege to bind. */
#define SCIF_ADMIN_PORT_END	1024
/* Ports the driver assigns itself are at or above SCIF_PORT_RSVD. */
#define SCIF_PORT_RSVD		1088

/* The management node. */
#define SCIF_MGMT_NODE		0

/**
 * struct scif_port_id - the address of an endpoint
 * @node: node on which the endpoint lives
 * @port: port the endpoint is bound to
 */
struct scif_port_id {
	__u16 node;
	__u16 port;
};

/**
 * struct scifioctl_connect - SCIF_CONNECT argument
 * @self: out: the local port id the connection was made from
 * @peer: in: the port id to connect to
 */
struct scifioctl_connect {
	struct scif_port_id self;
	struct scif_port_id peer;
};

/**
 * struct scifioctl_accept - SCIF_ACCEPTREQ argument
 * @flags: in: 0 or SCIF_ACCEPT_SYNC
 * @peer: out: the port id of the connecting endpoint
 * @endpt: out: opaque single-use cookie naming the new connection; pass
 *	its address to SCIF_ACCEPTREG on a freshly opened /dev/scif
 */
struct scifioctl_accept {
	__s32 flags;
	struct scif_port_id peer;
	__u64 endpt;
};

/**
 * struct scifioctl_msg - SCIF_SEND and SCIF_RECV argument
 * @msg: in: user address of the message buffer
 * @len: in: length of the buffer in bytes
 * @flags: in: 0, or SCIF_SEND_BLOCK / SCIF_RECV_BLOCK
 * @out_len: out: number of bytes sent or received
 */
struct scifioctl_msg {
	__u64 msg;
	__s32 len;
	__s32 flags;
	__s32 out_len;
};

/**
 * struct scifioctl_reg - SCIF_REG argument
 * @addr: in: start of the user memory to register, page aligned
 * @len: in: length in bytes, a multiple of the page size
 * @offset: in: requested offset in the registered address space
 * @prot: in: SCIF_PROT_READ and/or SCIF_PROT_WRITE
 * @flags: in: 0 or SCIF_MAP_FIXED
 * @out_offset: out: the offset the window was placed at
 */
struct scifioctl_reg {
	__u64 addr;
	__u64 len;
	__s64 offset;
	__s32 prot;
	__s32 flags;
	__s64 out_offset;
};

/**
 * struct scifioctl_unreg - SCIF_UNREG argument
 * @offset: start of the range to unregister
 * @len: length of the range in bytes
 */
struct scifioctl_unreg {
	__s64 offset;
	__u64 len;
};

/**
 * struct scifioctl_copy - SCIF_READFROM/WRITETO/VREADFROM/VWRITETO argument
 * @loffset: offset in the local registered address space
 * @len: number of bytes to copy
 * @roffset: offset in the peer's registered address space
 * @addr: user buffer, for the V variants only
 * @flags: SCIF_RMA_* flags
 */
struct scifioctl_copy {
	__s64 loffset;
	__u64 len;
	__s64 roffset;
	__u64 addr;
	__s32 flags;
};

/**
 * struct scifioctl_fence_mark - SCIF_FENCE_MARK argument
 * @flags: SCIF_FENCE_INIT_SELF or SCIF_FENCE_INIT_PEER
 * @mark: user address of a __s32 that receives the mark
 */
struct scifioctl_fence_mark {
	__s32 flags;
	__u64 mark;
};

/**
 * struct scifioctl_fence_signal - SCIF_FENCE_SIGNAL argument
 * @loff: local offset to write @lval to, with SCIF_SIGNAL_LOCAL
 * @lval: value written at @loff
 * @roff: remote offset to write @rval to, with SCIF_SIGNAL_REMOTE
 * @rval: value written at @roff
 * @flags: SCIF_FENCE_INIT_* and SCIF_SIGNAL_* flags
 */
struct scifioctl_fence_signal {
	__s64 loff;
	__u64 lval;
	__s64 roff;
	__u64 rval;
	__s32 flags;
};

/**
 * struct scifioctl_node_ids - SCIF_GET_NODEIDS argument
 * @nodes: in: user address of a __u16 array of @len entries
 * @self: in: user address of a __u16 that receives the local node id
 * @len: in: capacity of @nodes; out: number of nodes online
 */
struct scifioctl_node_ids {
	__u64 nodes;
	__u64 self;
	__s32 len;
};

/*
 * The user-space data path (an extension of this driver; the original
 * driver had none).  Documentation/scif/fastpath.rst describes the
 * protocol.  SCIF_FP_OPEN, on a connected endpoint, returns a new file
 * whose mmap() offsets are:
 *
 *   SCIF_FP_CTL_OFF     one page, struct scif_fp_ctl, read-write
 *   scifioctl_fp.local_off   this side's half of the queue pair
 *			(struct scif_fp_half), read-only
 *   scifioctl_fp.remote_off  the peer's half, read-write
 *
 * Every count in them is checked by the kernel as it checks a peer's.
 */
#define SCIF_FP_CTL_OFF		0

/**
 * struct scif_fp_half - the header of one side's half of a queue pair
 * @rx_write: written by the peer: bytes it put into the ring
 * @rx_waiting: written by the peer: it waits for room, send it
 *	SCIF_FP_NOTIFY_SPACE after taking data out of the ring
 * @tx_wanted: written by the peer: it waits for data, send it
 *	SCIF_FP_NOTIFY_DATA after putting data into its ring
 * @pad0: padding
 * @tx_read: written by the peer: bytes it took out of its own ring
 * @pad1: padding; the ring follows, scifioctl_fp.ring_off bytes from the
 *	start of the half
 */
struct scif_fp_half {
	__u32 rx_write;
	__u32 rx_waiting;
	__u32 tx_wanted;
	__u8 pad0[52];
	__u32 tx_read;
	__u8 pad1[60];
};

/* scif_fp_ctl.state */
#define SCIF_FP_LIVE		1

/* scif_fp_ctl.tx_lock and rx_lock: the kernel's holder value. */
#define SCIF_FP_KERNEL		0xffffffffU

/**
 * struct scif_fp_ctl - the counters an endpoint's data path shares with
 *	user space
 * @tx_write: bytes put into the peer's ring, under @tx_lock
 * @tx_lock: 0, or the holder: a process id, or SCIF_FP_KERNEL
 * @state: written by the kernel: SCIF_FP_LIVE while the peer's half is
 *	mapped; 0 once it is not (use SCIF_SEND and SCIF_RECV then)
 * @pad0: keeps the receive side on a cache line of its own
 * @rx_read: bytes taken from our ring, under @rx_lock
 * @rx_lock: as @tx_lock
 * @pad1: cache line padding
 * @tx_bytes: bytes sent by user space, counted by it
 * @tx_msgs: its sends that moved data
 * @rx_bytes: bytes received by user space
 * @rx_msgs: its receives that moved data
 */
struct scif_fp_ctl {
	__u32 tx_write;
	__u32 tx_lock;
	__u32 state;
	__u32 pad0[13];
	__u32 rx_read;
	__u32 rx_lock;
	__u32 pad1[14];
	__u64 tx_bytes;
	__u64 tx_msgs;
	__u64 rx_bytes;
	__u64 rx_msgs;
};

/**
 * struct scifioctl_fp - SCIF_FP_OPEN argument
 * @fd: out: the new file (O_CLOEXEC), to map and close
 * @flags: in: 0; out: SCIF_FP_PEER_REMOTE if the peer endpoint is on
 *	another node (it never needs this node's CPUs)
 * @rx_size: out: size of our receive ring
 * @tx_size: out: size of the peer's receive ring
 * @ring_off: out: offset of the ring in a half (the size of its header)
 * @local_off: out: mmap offset of our half
 * @local_len: out: its length, in bytes, a multiple of the page size
 * @remote_off: out: mmap offset of the peer's half
 * @remote_len: out: its length
 */
struct scifioctl_fp {
	__s32 fd;
	__u32 flags;
	__u32 rx_size;
	__u32 tx_size;
	__u32 ring_off;
	__u32 reserved;
	__u64 local_off;
	__u64 local_len;
	__u64 remote_off;
	__u64 remote_len;
};

/* SCIF_FP_OPEN's flags, out. */
#define SCIF_FP_PEER_REMOTE	1

/* SCIF_FP_NOTIFY's argument: which message the peer asked for. */
#define SCIF_FP_NOTIFY_DATA	1
#define SCIF_FP_NOTIFY_SPACE	2

/**
 * struct scif_mmap_status - the status page of a kernel client's mapping
 * @revoked: 0 while the mapping reaches the peer's memory; 1 once it is
 *	revoked (the peer unregistered a window of it, the connection went
 *	or the peer's node was lost), set before the peer's pages are taken
 *	out of the mapping
 * @reserved: 0
 *
 * A kernel client of SCIF that maps a range of its peer's windows into
 * a process with scif_mmap_vma(..., SCIF_MMAP_STATUS) (an extension of
 * this driver; Documentation/scif/mmap.rst, "Mappings of kernel
 * clients") gives that process one more page after the range, holding
 * this.  Once @revoked is set the range reads zeroes and writes to it
 * land in a page of the mapping's own instead of faulting, so that a
 * library can store through the mapping, then read @revoked (after a
 * full barrier) to learn whether its stores reached the peer.
 */
struct scif_mmap_status {
	__u32 revoked;
	__u32 reserved;
};

/*
 * Devices across the fabric: the device list and borrowing
 * (Documentation/scif/devices.rst, "Borrowing a device").
 */
#define SCIF_DEV_ANY_NODE	0xffff	/* scifioctl_dev_list.node: all */
#define SCIF_DEV_FREE		1	/* scifioctl_dev_list.flags */
#define SCIF_DEV_EXCLUSIVE	1	/* scifioctl_dev_borrow.flags */
#define SCIF_DEV_LIST_MAX	1024	/* most entries of one SCIF_DEV_LIST */

/* scif_dev_entry.modes: what the lender offers */
#define SCIF_DEV_MODE_EXCLUSIVE	1
#define SCIF_DEV_MODE_SHARED	2

/* scif_dev_entry.state */
#define SCIF_DEV_STATE_FREE		0	/* no borrower */
#define SCIF_DEV_STATE_SHARED		1	/* shared borrowers */
#define SCIF_DEV_STATE_EXCLUSIVE	2	/* one exclusive borrower */
#define SCIF_DEV_STATE_RESETTING	3	/* being reset after a return */
#define SCIF_DEV_STATE_DIRTY		4	/* no reset method: not lent */
#define SCIF_DEV_STATE_MAX		4

/* scif_dev_entry.bar_flags[] */
#define SCIF_DEV_BAR_MEM	1	/* memory (else I/O ports) */
#define SCIF_DEV_BAR_64		2
#define SCIF_DEV_BAR_PREFETCH	4

/**
 * struct scif_dev_entry - a lent PCI function, as listed (128 bytes)
 * @fdid: fabric device id: lender node << 48 | epoch << 32 | index
 * @pci_class: PCI class code (24 bits)
 * @borrowers: borrows it has now
 * @node: the lender's node id
 * @vendor: PCI vendor id
 * @device: PCI device id
 * @subsystem_vendor: PCI subsystem vendor id
 * @subsystem_device: PCI subsystem device id
 * @revision: PCI revision
 * @nr_bars: BARs (0 to 6); @bar_size beyond them is 0
 * @modes: SCIF_DEV_MODE_* the lender offers
 * @state: SCIF_DEV_STATE_*
 * @reserved0: 0
 * @bar_size: size of each BAR, 0 for none
 * @bar_flags: SCIF_DEV_BAR_* of each BAR
 * @reserved1: 0
 * @name: the lender's PCI name of the function, NUL-terminated
 * @reserved2: 0
 */
struct scif_dev_entry {
	__u64 fdid;
	__u32 pci_class;
	__u32 borrowers;
	__u16 node;
	__u16 vendor;
	__u16 device;
	__u16 subsystem_vendor;
	__u16 subsystem_device;
	__u8 revision;
	__u8 nr_bars;
	__u8 modes;
	__u8 state;
	__u16 reserved0;
	__u64 bar_size[6];
	__u8 bar_flags[6];
	__u8 reserved1[10];
	char name[16];
	__u8 reserved2[16];
};

/**
 * struct scifioctl_dev_list - SCIF_DEV_LIST argument
 * @pci_class: in: (PCI class & @class_mask) == @pci_class
 * @class_mask: in: 0 for any class
 * @vendor: in: PCI vendor id, 0xffff for any
 * @device: in: PCI device id, 0xffff for any
 * @flags: in: SCIF_DEV_FREE (only functions borrowable now), or 0
 * @node: in: a node id, or SCIF_DEV_ANY_NODE for every node online
 * @reserved0: 0
 * @max: in: room at @entries, at most SCIF_DEV_LIST_MAX
 * @entries: in: user address of @max struct scif_dev_entry
 * @count: out: entries written
 * @reserved1: 0
 */
struct scifioctl_dev_list {
	__u32 pci_class;
	__u32 class_mask;
	__u16 vendor;
	__u16 device;
	__u32 flags;
	__u16 node;
	__u16 reserved0;
	__u32 max;
	__u64 entries;
	__u32 count;
	__u32 reserved1;
};

/**
 * struct scifioctl_dev_borrow - SCIF_DEV_BORROW argument
 * @fdid: in: the function, from SCIF_DEV_LIST
 * @flags: in: SCIF_DEV_EXCLUSIVE, or 0 for a shared borrow
 * @fd: out: the borrow file (close-on-exec); closing it returns the
 *	function
 * @reserved: 0
 */
struct scifioctl_dev_borrow {
	__u64 fdid;
	__u32 flags;
	__s32 fd;
	__u64 reserved;
};

/**
 * struct scifioctl_reg_pci - SCIF_REG_PCI argument
 * @domain: in: the PCI function's domain
 * @bus: in: its bus number
 * @devfn: in: its device and function numbers
 * @bar: in: a memory BAR of it, 0..5
 * @reserved0: 0
 * @bar_offset: in: first byte of the range in the BAR, page aligned
 * @len: in: length in bytes, a non-zero multiple of the page size
 * @offset: in: requested offset in the registered address space
 * @prot: in: SCIF_PROT_READ and/or SCIF_PROT_WRITE
 * @flags: in: 0 or SCIF_MAP_FIXED
 * @out_offset: out: the offset the window was placed at
 *
 * Needs CAP_SYS_RAWIO; the function must be bound to vfio-pci or
 * scif_lend.
 */
struct scifioctl_reg_pci {
	__u32 domain;
	__u8 bus;
	__u8 devfn;
	__u8 bar;
	__u8 reserved0;
	__u64 bar_offset;
	__u64 len;
	__s64 offset;
	__s32 prot;
	__s32 flags;
	__s64 out_offset;
};

/**
 * struct scifioctl_devmap - SCIF_DEVMAP_OPEN argument
 * @offset: in: start of the range in the peer's registered address
 *	space, page aligned
 * @len: in: length, a non-zero multiple of the page size
 * @prot: in: SCIF_PROT_READ and/or SCIF_PROT_WRITE
 * @flags: in: 0
 * @fd: out: the device-map file (close-on-exec)
 * @reserved: 0
 *
 * Needs CAP_SYS_RAWIO.  See Documentation/scif/devices.rst.
 */
struct scifioctl_devmap {
	__s64 offset;
	__u64 len;
	__s32 prot;
	__u32 flags;
	__s32 fd;
	__u32 reserved;
};

/**
 * struct scifioctl_devmap_status - SCIF_DEVMAP_STATUS argument (on a
 *	device-map file)
 * @state: out: 0 live, 1 revoked
 * @why: out: once revoked, a positive errno: ENXIO (the peer unregistered
 *	a window of the range), ECONNRESET (the connection ended) or ENODEV
 *	(the node was lost); else 0
 */
struct scifioctl_devmap_status {
	__s32 state;
	__s32 why;
};

/* scifioctl_dmabuf.flags */
#define SCIF_DMABUF_REMOTE	1	/* a range of the peer's windows */

/**
 * struct scifioctl_dmabuf - SCIF_DMABUF_EXPORT: a dma-buf over a range of
 *	windows
 * @offset: in: start of the range, page aligned, in the endpoint's
 *	registered address space (or the peer's, with SCIF_DMABUF_REMOTE)
 * @len: in: length in bytes, a non-zero multiple of the page size
 * @prot: in: SCIF_PROT_READ and/or SCIF_PROT_WRITE, which every window of
 *	the range must allow
 * @flags: in: 0 (a range of the endpoint's own windows) or
 *	SCIF_DMABUF_REMOTE (of the peer's; needs CAP_SYS_RAWIO)
 * @fd: out: the dma-buf's descriptor (O_CLOEXEC, read-write)
 * @reserved: 0
 */
struct scifioctl_dmabuf {
	__s64 offset;
	__u64 len;
	__s32 prot;
	__u32 flags;
	__s32 fd;
	__u32 reserved;
};

/*
 * SCIF_BIND takes the address of the port, of which exactly 16 bits are
 * read and written; SCIF_LISTEN and SCIF_FENCE_WAIT take their value
 * (backlog, mark) as the ioctl argument itself.
 */
#define SCIF_BIND		_IOWR('s', 1, __u64)
#define SCIF_LISTEN		_IOW('s', 2, __s32)
#define SCIF_CONNECT		_IOWR('s', 3, struct scifioctl_connect)
#define SCIF_ACCEPTREQ		_IOWR('s', 4, struct scifioctl_accept)
#define SCIF_ACCEPTREG		_IOWR('s', 5, __u64)
#define SCIF_SEND		_IOWR('s', 6, struct scifioctl_msg)
#define SCIF_RECV		_IOWR('s', 7, struct scifioctl_msg)
#define SCIF_REG		_IOWR('s', 8, struct scifioctl_reg)
#define SCIF_UNREG		_IOWR('s', 9, struct scifioctl_unreg)
#define SCIF_READFROM		_IOWR('s', 10, struct scifioctl_copy)
#define SCIF_WRITETO		_IOWR('s', 11, struct scifioctl_copy)
#define SCIF_VREADFROM		_IOWR('s', 12, struct scifioctl_copy)
#define SCIF_VWRITETO		_IOWR('s', 13, struct scifioctl_copy)
#define SCIF_GET_NODEIDS	_IOWR('s', 14, struct scifioctl_node_ids)
#define SCIF_FENCE_MARK		_IOWR('s', 15, struct scifioctl_fence_mark)
#define SCIF_FENCE_WAIT		_IOWR('s', 16, __s32)
#define SCIF_FENCE_SIGNAL	_IOWR('s', 17, struct scifioctl_fence_signal)
/* Extensions: the user-space data path (not in the original driver). */
#define SCIF_FP_OPEN		_IOWR('s', 32, struct scifioctl_fp)
#define SCIF_FP_NOTIFY		_IOW('s', 33, __s32)
/* Extensions: devices across the fabric (not in the original driver). */
#define SCIF_DEVMAP_OPEN	_IOWR('s', 34, struct scifioctl_devmap)
#define SCIF_DEVMAP_STATUS	_IOR('s', 35, struct scifioctl_devmap_status)
/* A dma-buf over a range of windows. */
#define SCIF_DMABUF_EXPORT	_IOWR('s', 36, struct scifioctl_dmabuf)
#define SCIF_DEV_LIST		_IOWR('s', 37, struct scifioctl_dev_list)
#define SCIF_DEV_BORROW		_IOWR('s', 38, struct scifioctl_dev_borrow)
/* On a borrow file: the borrowed function's entry. */
#define SCIF_DEV_INFO		_IOR('s', 39, struct scif_dev_entry)
/* A window over a range of a PCI BAR (device memory). */
#define SCIF_REG_PCI		_IOWR('s', 40, struct scifioctl_reg_pci)

#endif /* _UAPI_LINUX_SCIF_IOCTL_H */
