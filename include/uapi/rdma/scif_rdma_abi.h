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
 *
 * A create_qp may ask for a mapped QP (rdma.rst, "WRITEs and READs
 * without a system call"): the kernel then shows the process, in a
 * read-only page it maps at @info_offset of the response (struct
 * scif_rdma_qp_info), the QP's state, how many of its work requests the
 * kernel still holds, and the peer's keys whose windows it knows.  The
 * process may map such a window (mmap of the uverbs file at
 * SCIF_RDMA_WIN_OFFSET() of the QP, the key's entry and its @seq, for
 * @length bytes and one page more, which is a struct scif_mmap_status
 * of <linux/scif_ioctl.h>) and then do RDMA WRITEs and READs within the
 * key by storing and loading through it.
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

#define SCIF_RDMA_QP_MAPPED	0x1	/* scif_rdma_create_qp.flags */
#define SCIF_RDMA_QP_KEYS	16	/* entries of scif_rdma_qp_info.keys */

/* create_qp's driver data in: 0 or SCIF_RDMA_QP_MAPPED. */
struct scif_rdma_create_qp {
	__aligned_u64 flags;
};

/* create_qp's driver data out, for a mapped QP. */
struct scif_rdma_create_qp_resp {
	__aligned_u64 info_offset;	/* of the info page in the uverbs file */
	__u32 info_bytes;		/* bytes to map (one page) */
	__u32 reserved;
};

/*
 * A peer's key whose window the kernel knows.  @seq is odd while the
 * kernel rewrites the entry and grows by 2 with each rewrite; @rkey 0 is
 * an empty entry.  The window covers [@iova, @iova + @length) of the
 * peer's MR with @access (IB_ACCESS_REMOTE_READ and/or _WRITE).
 */
struct scif_rdma_qp_key {
	__u32 seq;
	__u32 rkey;
	__u32 access;
	__u32 reserved;
	__aligned_u64 iova;
	__aligned_u64 length;
};

struct scif_rdma_qp_info {
	__u32 state;		/* enum ib_qp_state */
	__u32 sq_pending;	/* posted work requests not yet done */
	__u32 reserved[14];
	struct scif_rdma_qp_key keys[SCIF_RDMA_QP_KEYS];
};

/*
 * The mmap offset of the window of key entry @idx (0 to 15) of QP @qpn,
 * as the entry was at @seq.  An entry rewritten since is EINVAL.
 */
#define SCIF_RDMA_WIN_TAG	(1ULL << 49)
#define SCIF_RDMA_WIN_OFFSET(qpn, idx, seq)				\
	((SCIF_RDMA_WIN_TAG | ((__u64)((qpn) & 0xffffff) << 25) |	\
	  ((__u64)((idx) & 0xf) << 21) | ((seq) & 0x1fffff)) << 12)

#endif /* SCIF_RDMA_ABI_H */
