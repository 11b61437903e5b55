/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * scif_rdma's driver data in uverbs commands, between scif_rdma.ko and
 * its libibverbs provider (Documentation/scif/rdma.rst, "Completions
 * without a system call").
 *
 * A create_cq may ask for a mapped CQ: its completions are then written
 * by the kernel into a ring that the process maps (mmap of the uverbs
 * file at @mmap_offset of the response) and polls without a system
 * call.  The ring is a struct scif_rdma_cq_ring: the kernel writes
 * entries and then @tail, the process reads entries up to @tail and then
 * writes @head.  Both count entries for ever (32 bits, wrapping); entry
 * n is ring->cqe[n % entries].  The kernel trusts nothing the process
 * writes there: a @head that claims entries the kernel has not written,
 * or frees more than the ring holds, is an overrun of that CQ.
 */
#ifndef SCIF_RDMA_ABI_H
#define SCIF_RDMA_ABI_H

#include <linux/types.h>

#define SCIF_RDMA_CQ_MAPPED	0x1	/* scif_rdma_create_cq.flags */

/* create_cq's driver data in: 0 or SCIF_RDMA_CQ_MAPPED. */
struct scif_rdma_create_cq {
	__aligned_u64 flags;
};

/* create_cq's driver data out, for a mapped CQ. */
struct scif_rdma_create_cq_resp {
	__aligned_u64 mmap_offset;	/* of the ring in the uverbs file */
	__u32 entries;			/* the ring's entries */
	__u32 ring_bytes;		/* bytes to map (whole pages) */
};

/* A completion, as uverbs' struct ib_uverbs_wc gives it. */
struct scif_rdma_cqe {
	__aligned_u64 wr_id;
	__u32 status;
	__u32 opcode;
	__u32 vendor_err;
	__u32 byte_len;
	__u32 imm_data;		/* or the invalidated rkey; big endian */
	__u32 qp_num;
	__u32 src_qp;
	__u32 wc_flags;
	__u16 pkey_index;
	__u16 slid;
	__u8 sl;
	__u8 dlid_path_bits;
	__u8 port_num;
	__u8 reserved;
};

struct scif_rdma_cq_ring {
	__u32 head;		/* written by the process */
	__u32 reserved0[15];
	__u32 tail;		/* written by the kernel */
	__u32 reserved1[15];
	struct scif_rdma_cqe cqe[];
};

#endif /* SCIF_RDMA_ABI_H */
