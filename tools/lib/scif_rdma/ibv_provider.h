/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The part of libibverbs' private provider interface that the scif_rdma
 * provider uses, stated as ABI facts of Debian 12's libibverbs1 44.0-2
 * (symbol version IBVERBS_PRIVATE_34, providers named lib*-rdmav34.so).
 *
 * rdma-core's own header for this (infiniband/driver.h) is not installed
 * by any Debian package, so every layout and prototype below was
 * established from the installed binaries: libibverbs.so.1 and the
 * providers siw and rxe (libsiw-rdmav34.so, librxe-rdmav34.so), read
 * with objdump -d, readelf -r and the contents of their .data.rel.ro.
 * Addresses quoted in the comments are of those files in 44.0-2.  Each
 * fact that the provider depends on is checked by a _Static_assert at
 * the end, against the sizes and offsets found in the binaries.
 *
 * Only what this provider uses is described, except struct
 * verbs_context_ops, which verbs_set_ops() reads by offset and which is
 * therefore complete and in libibverbs' order.
 *
 * Public types (struct ibv_*, struct verbs_context) come from
 * <infiniband/verbs.h> (libibverbs-dev); the command and response
 * layouts of the uverbs write() ABI from the kernel's <rdma/ib_user_verbs.h>.
 */
#ifndef SCIF_RDMA_IBV_PROVIDER_H
#define SCIF_RDMA_IBV_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

struct verbs_sysfs_dev;
struct verbs_device;
struct verbs_match_ent;

/* A registration of a provider: verbs_register_driver_34()'s argument. */
struct verbs_device_ops {
	const char *name;
	/* The kernel device's uverbs ABI (class/infiniband_verbs/.../abi_version). */
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	/* Not read by libibverbs.so.1 (NULL in siw and rxe too). */
	const void *unused_0x18;
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

/*
 * What libibverbs knows of a kernel device before it picks a provider;
 * allocated (calloc 0x3e0) and freed by libibverbs.  Only the two names
 * the provider reads are described.
 */
#define VERBS_SYSFS_NAME_MAX	64
#define VERBS_SYSFS_PATH_MAX	256

struct verbs_sysfs_dev {
	uint8_t libibverbs_private_0x00[0x70];
	char ibdev_name[VERBS_SYSFS_NAME_MAX];	/* "scif_rdma0" */
	char ibdev_path[VERBS_SYSFS_PATH_MAX];	/* <sysfs>/class/infiniband/<name> */
	/* more of libibverbs' own, up to 0x3e0 */
};

/*
 * The device object a provider allocates in alloc_device(), with the
 * public struct ibv_device first; libibverbs fills in everything.
 */
struct verbs_device {
	struct ibv_device device;
	const struct verbs_device_ops *ops;
	int refcount;				/* atomic, libibverbs' */
	struct {
		void *next;
		void *prev;
	} entry;				/* libibverbs' device list */
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;			/* IB_UVERBS_CORE_SUPPORT_* */
};

/* A memory region as ibv_cmd_reg_mr() fills it and ibv_dereg_mr() reads it. */
struct verbs_mr {
	struct ibv_mr ibv_mr;
	uint32_t mr_type;			/* 0: an ordinary registration */
	int access;				/* IBV_ACCESS_* of the registration */
};

/*
 * The provider's operations, handed to verbs_set_ops().  Each non-NULL
 * member at offset N is copied to libibverbs' private copy (priv + 0x18
 * + N) and, for most, to the public slot of struct verbs_context or
 * struct ibv_context named in the comment.  The members are in
 * alphabetical order; the order was anchored slot by slot as follows:
 *   "vctx.X"   verbs_set_ops() stores the op into verbs_context.X too;
 *   "ops.X"    ...into ibv_context.ops.X (X, or _compat_X, in verbs.h);
 *   "f()"      not stored publicly, but the public libibverbs function
 *              f() calls through priv + 0x18 + N.
 * 76 members, 0x260 bytes.  The types of the members this provider
 * does not set were not established: they are plain placeholders and
 * must stay NULL.
 */
typedef void (*verbs_unset_op)(void);

struct verbs_context_ops {
	verbs_unset_op advise_mr;		/* 0x000 vctx.advise_mr */
	verbs_unset_op alloc_dm;		/* 0x008 vctx.alloc_dm */
	verbs_unset_op alloc_mw;		/* 0x010 ops.alloc_mw */
	verbs_unset_op alloc_null_mr;		/* 0x018 vctx.alloc_null_mr */
	verbs_unset_op alloc_parent_domain;	/* 0x020 vctx.alloc_parent_domain */
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
						/* 0x028 ops._compat_alloc_pd */
	verbs_unset_op alloc_td;		/* 0x030 vctx.alloc_td */
	verbs_unset_op async_event;		/* 0x038 ops._compat_async_event */
	/* 0x040 vctx.attach_counters_point_flow */
	verbs_unset_op attach_counters_point_flow;
	verbs_unset_op attach_mcast;		/* 0x048 ops._compat_attach_mcast */
	verbs_unset_op bind_mw;			/* 0x050 ops.bind_mw */
	verbs_unset_op close_xrcd;		/* 0x058 vctx.close_xrcd */
	verbs_unset_op cq_event;		/* 0x060 ops._compat_cq_event */
	verbs_unset_op create_ah;		/* 0x068 ops._compat_create_ah */
	verbs_unset_op create_counters;		/* 0x070 vctx.create_counters */
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
						/* 0x078 ops._compat_create_cq */
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *attr);
						/* 0x080 ibv_create_cq_ex() */
	verbs_unset_op create_flow;		/* 0x088 vctx.ibv_create_flow */
	/* 0x090 vctx.create_flow_action_esp */
	verbs_unset_op create_flow_action_esp;
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
						/* 0x098 ops._compat_create_qp */
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr);
						/* 0x0a0 vctx.create_qp_ex */
	/* 0x0a8 vctx.create_rwq_ind_table */
	verbs_unset_op create_rwq_ind_table;
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr);
						/* 0x0b0 ops._compat_create_srq */
	verbs_unset_op create_srq_ex;		/* 0x0b8 vctx.create_srq_ex */
	verbs_unset_op create_wq;		/* 0x0c0 vctx.create_wq */
	verbs_unset_op dealloc_mw;		/* 0x0c8 ops.dealloc_mw */
	int (*dealloc_pd)(struct ibv_pd *pd);	/* 0x0d0 ops._compat_dealloc_pd */
	verbs_unset_op dealloc_td;		/* 0x0d8 vctx.dealloc_td */
	int (*dereg_mr)(struct verbs_mr *vmr);	/* 0x0e0 ops._compat_dereg_mr */
	verbs_unset_op destroy_ah;		/* 0x0e8 ops._compat_destroy_ah */
	verbs_unset_op destroy_counters;	/* 0x0f0 vctx.destroy_counters */
	int (*destroy_cq)(struct ibv_cq *cq);	/* 0x0f8 ops._compat_destroy_cq */
	verbs_unset_op destroy_flow;		/* 0x100 vctx.ibv_destroy_flow */
	verbs_unset_op destroy_flow_action;	/* 0x108 vctx.destroy_flow_action */
	int (*destroy_qp)(struct ibv_qp *qp);	/* 0x110 ops._compat_destroy_qp */
	/* 0x118 vctx.destroy_rwq_ind_table */
	verbs_unset_op destroy_rwq_ind_table;
	int (*destroy_srq)(struct ibv_srq *srq);
						/* 0x120 ops._compat_destroy_srq */
	verbs_unset_op destroy_wq;		/* 0x128 vctx.destroy_wq */
	verbs_unset_op detach_mcast;		/* 0x130 ops._compat_detach_mcast */
	void (*free_context)(struct ibv_context *context);
						/* 0x138 ibv_close_device() */
	verbs_unset_op free_dm;			/* 0x140 vctx.free_dm */
	verbs_unset_op get_srq_num;		/* 0x148 vctx.get_srq_num */
	verbs_unset_op import_dm;		/* 0x150 ibv_import_dm() */
	verbs_unset_op import_mr;		/* 0x158 ibv_import_mr() */
	verbs_unset_op import_pd;		/* 0x160 ibv_import_pd() */
	verbs_unset_op modify_cq;		/* 0x168 vctx.modify_cq */
	/* 0x170 vctx.modify_flow_action_esp */
	verbs_unset_op modify_flow_action_esp;
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);	/* 0x178 ops._compat_modify_qp */
	/* 0x180 vctx.modify_qp_rate_limit */
	verbs_unset_op modify_qp_rate_limit;
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			  int attr_mask);	/* 0x188 ops._compat_modify_srq */
	verbs_unset_op modify_wq;		/* 0x190 vctx.modify_wq */
	verbs_unset_op open_qp;			/* 0x198 vctx.open_qp */
	verbs_unset_op open_xrcd;		/* 0x1a0 vctx.open_xrcd */
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
						/* 0x1a8 ops.poll_cq */
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
						/* 0x1b0 ops.post_recv */
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
						/* 0x1b8 ops.post_send */
	verbs_unset_op post_srq_ops;		/* 0x1c0 vctx.post_srq_ops */
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr);
						/* 0x1c8 ops.post_srq_recv */
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
						/* 0x1d0 vctx.query_device_ex */
	verbs_unset_op query_ece;		/* 0x1d8 ibv_query_ece() */
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
						/* 0x1e0 ibv_query_port() */
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
						/* 0x1e8 ops._compat_query_qp */
	verbs_unset_op query_qp_data_in_order;	/* 0x1f0 ibv_query_qp_data_in_order() */
	verbs_unset_op query_rt_values;		/* 0x1f8 vctx.query_rt_values */
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr);
						/* 0x200 ops._compat_query_srq */
	verbs_unset_op read_counters;		/* 0x208 vctx.read_counters */
	verbs_unset_op reg_dm_mr;		/* 0x210 vctx.reg_dm_mr */
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access);
						/* 0x218 vctx.reg_dmabuf_mr (+0x230,
						 * called by ibv_reg_dmabuf_mr 0x17a94) */
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
						/* 0x220 ops._compat_reg_mr */
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
						/* 0x228 ops.req_notify_cq */
	verbs_unset_op rereg_mr;		/* 0x230 ops._compat_rereg_mr */
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
						/* 0x238 ops._compat_resize_cq */
	verbs_unset_op set_ece;			/* 0x240 ibv_set_ece() */
	verbs_unset_op unimport_dm;		/* 0x248 ibv_unimport_dm() */
	verbs_unset_op unimport_mr;		/* 0x250 ibv_unimport_mr() */
	verbs_unset_op unimport_pd;		/* 0x258 ibv_unimport_pd() */
};

/*
 * Commands of the uverbs write() ABI as the ibv_cmd_*() functions take
 * them: the 8-byte header, then the kernel's request.  A provider with
 * driver data would append it; this one has none, so it passes exactly
 * these sizes (the "core" sizes that each ibv_cmd_*() hard-codes), and
 * exactly the kernel's response structures.
 */
struct ibv_get_context {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_get_context core;
};

struct ibv_query_port {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_query_port core;
};

struct ibv_alloc_pd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_alloc_pd core;
};

struct ibv_reg_mr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_reg_mr core;
};

struct ibv_create_cq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_cq core;
};

struct ibv_create_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_qp core;
};

struct ibv_query_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_query_qp core;
};

struct ibv_modify_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_modify_qp core;
};

struct ibv_create_srq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_srq core;
};

struct ibv_modify_srq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_modify_srq core;
};

struct ibv_query_srq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_query_srq core;
};

/*
 * The functions, all IBVERBS_PRIVATE_34.  The ibv_cmd_*() return 0 or
 * an errno value, except ibv_cmd_poll_cq() (entries polled, or -1).
 * The argument order is that of the call sites in siw (addresses of
 * the call; the sizes it passes are its own, with driver data) and of
 * the registers each function uses in lib.
 */

/* siw 0x2320: lea rdi,<ops>; jmp.  lib 0x14430 links rdi into its list. */
void verbs_register_driver_34(const struct verbs_device_ops *ops);

/*
 * lib 0x119d0: calloc(1, alloc_size), initialises the struct
 * verbs_context at start + context_offset (device reference, cmd_fd,
 * private part) and returns the start, or NULL with cmd_fd closed.
 * siw 0x2460 passes (device, cmd_fd, 0x290, 0, RDMA_DRIVER_SIW).  The
 * offset travels in a pointer-sized register; size_t states that.
 */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size, size_t context_offset,
				    uint32_t driver_id);
/*
 * lib 0x11d20: frees the private part, closes cmd_fd and async_fd,
 * drops the device reference; the caller frees (siw 0x2410).
 */
void verbs_uninit_context(struct verbs_context *context);
/* lib 0x12560 (vctx, ops); siw 0x2499. */
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);

/* siw 0x2486; lib stores async_fd at vctx+0x24c (0xb371). */
int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
/*
 * siw 0x2602 passes its own four arguments, then &resp and &resp_size
 * (0x130).  lib 0xbb90: input may be NULL, else input->comp_mask must
 * be 0; attr_size at least 0xe8; *resp_size is in and out.
 */
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
/* siw 0x3622 (context, port, attr, cmd, 0x18). */
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);
/* siw 0x3b4e (context, pd, cmd, 0x10, resp, 4); lib 0x7d80 sets pd. */
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
/* siw 0x3089. */
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
/*
 * siw 0x2586: six register arguments, then on the stack cmd, 0x38,
 * resp, 0x14.  lib 0x7e9c fills handle, lkey, rkey, type and access.
 */
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
/*
 * 0xdc50: the pd, offset, length, iova, fd and access in registers and
 * the verbs_mr on the stack (read at 0x130(%rsp) after 0x128 bytes of
 * frame): seven arguments; the ioctl method UVERBS_METHOD_REG_DMABUF_MR.
 */
int ibv_cmd_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
			  uint64_t iova, int fd, int access,
			  struct verbs_mr *vmr);
/* siw 0x3059; lib 0xda8a reads the handle at +0x20. */
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
/*
 * siw 0x337e: (context, cqe, channel, comp_vector, cq, cmd) in
 * registers, then 0x28, resp, 0x18 on the stack.  lib fills the handle
 * and cqe; ibv_create_cq (lib 0x17de7) initialises the rest of the cq.
 */
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
/* siw 0x3c6c. */
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
/* lib 0x8060: malloc(num_entries * 48 + 8) for the kernel's answer. */
int ibv_cmd_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
/* lib 0x8190: solicited_only is tested for non-zero. */
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
/*
 * siw 0x3796: (pd, qp, attr, cmd, 0x40, resp) in registers, 0x40 on the
 * stack.  lib (0xe155, 0xe85d..0xe8bb) sets every public field of a
 * plain struct ibv_qp, its mutex and cond included.
 */
int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr, struct ibv_create_qp *cmd,
		      size_t cmd_size, struct ib_uverbs_create_qp_resp *resp,
		      size_t resp_size);
/* siw 0x35ce (qp, attr, attr_mask, init_attr, cmd, 0x18). */
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		     int attr_mask, struct ibv_qp_init_attr *init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
/* siw 0x36b8 (qp, attr, attr_mask, cmd, 0x78). */
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size);
/* siw 0x3bec. */
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
/* lib 0x8ba0 / 0x8e20: walk wr through ->next, *bad_wr on failure. */
int ibv_cmd_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr);
int ibv_cmd_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);
/*
 * The SRQ commands, as rdma-core 44 declares them (driver.h) and its
 * providers call them with a plain struct ibv_srq: lib 0xfa40 create
 * (pd, srq, attr, cmd, cmd_size, resp, resp_size; it sets the handle
 * and the attr's max_wr and max_sge from the answer), 0x8260 modify
 * (srq, attr, attr_mask, cmd, cmd_size), 0x82d0 query (srq, attr, cmd,
 * cmd_size), 0xfc70 destroy, 0x8fe0 post_srq_recv (walks wr through
 * ->next, *bad_wr on failure).
 */
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		       int attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);
int ibv_cmd_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad_wr);

/*
 * A QP as libibverbs sees it: ibv_qp_to_qp_ex() (lib 0x17fc0) returns
 * the QP itself when bit VERBS_QP_EX of the word at +0x160, just past
 * the larger of struct ibv_qp and struct ibv_qp_ex, is set, else NULL.
 */
struct verbs_xrcd;
struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};
#define VERBS_QP_EX	(1u << 1)

/*
 * The checks.  "siw" and "rxe" are the providers' .so files, "lib" is
 * libibverbs.so.1; hex numbers are their addresses.
 */
#define IBV_ASSERT_AT(type, member, off)				\
	_Static_assert(offsetof(struct type, member) == (off),		\
		       #type "." #member " is not at " #off)
#define IBV_ASSERT_SIZE(type, size)					\
	_Static_assert(sizeof(struct type) == (size),			\
		       "sizeof(struct " #type ") is not " #size)

/*
 * verbs_device_ops: siw's instance (.data.rel.ro 0x59e0, passed to
 * verbs_register_driver_34 by its constructor at 0x2320) holds name,
 * two u32 1s, its match table, 0, 0, then alloc_context (0x2430: calls
 * _verbs_init_and_alloc_context), 0, alloc_device (0x2400: calloc
 * 0x2c8) and uninit_device (0x23f0: free).  lib's driver matching
 * (0x13950) reads +0x10 and calls +0x20 with the sysfs device when the
 * table is NULL, compares the ABI with +0x08/+0x0c and calls +0x38;
 * verbs_open_device calls +0x28 (device, cmd_fd, private_data);
 * ibv_import_device calls +0x30; the last device reference calls +0x40.
 */
IBV_ASSERT_AT(verbs_device_ops, match_min_abi_version, 0x08);
IBV_ASSERT_AT(verbs_device_ops, match_max_abi_version, 0x0c);
IBV_ASSERT_AT(verbs_device_ops, match_table, 0x10);
IBV_ASSERT_AT(verbs_device_ops, match_device, 0x20);
IBV_ASSERT_AT(verbs_device_ops, alloc_context, 0x28);
IBV_ASSERT_AT(verbs_device_ops, import_context, 0x30);
IBV_ASSERT_AT(verbs_device_ops, alloc_device, 0x38);
IBV_ASSERT_AT(verbs_device_ops, uninit_device, 0x40);
IBV_ASSERT_SIZE(verbs_device_ops, 0x48);

/*
 * verbs_sysfs_dev: both of lib's enumerations (netlink, 0x135b5; sysfs,
 * 0x1429b) write the device name at +0x70 (64 bytes) and then
 * snprintf(+0xb0, 0x100, "%s/class/infiniband/%s", sysfs_path, name);
 * the driver matching copies +0x70 to ibv_device.name and +0xb0 to
 * ibv_device.ibdev_path (0x13af0..0x13b10).
 */
IBV_ASSERT_AT(verbs_sysfs_dev, ibdev_name, 0x70);
IBV_ASSERT_AT(verbs_sysfs_dev, ibdev_path, 0xb0);

/*
 * verbs_device: after alloc_device, lib stores the ops at +0x298 and a
 * refcount of 1 at +0x2a0 (0x13a04), links the device through +0x2a8,
 * keeps the sysfs device at +0x2b8 (0x13b15) and ibv_cmd_get_context
 * stores the core support mask at +0x2c0 (0xb39a).  siw, erdma, irdma,
 * mana and qedr allocate 0x2c8 for a device that is this alone.
 */
IBV_ASSERT_SIZE(ibv_device, 0x298);
IBV_ASSERT_AT(verbs_device, ops, 0x298);
IBV_ASSERT_AT(verbs_device, refcount, 0x2a0);
IBV_ASSERT_AT(verbs_device, entry, 0x2a8);
IBV_ASSERT_AT(verbs_device, sysfs, 0x2b8);
IBV_ASSERT_AT(verbs_device, core_support, 0x2c0);
IBV_ASSERT_SIZE(verbs_device, 0x2c8);

/*
 * verbs_context (public): verbs_open_device returns alloc_context's
 * result + 0x140 as the ibv_context, siw's free_context subtracts 0x140,
 * lib stores sz = 0x288 at +0x138 when it initialises one (0x118a6)
 * and reaches its private part (verbs_set_ops' target) at +0xd0.
 */
IBV_ASSERT_AT(verbs_context, priv, 0xd0);
IBV_ASSERT_AT(verbs_context, context, 0x140);
IBV_ASSERT_SIZE(verbs_context, 0x288);

/*
 * verbs_mr: ibv_cmd_reg_mr stores the MR type 0 at +0x30 and the access
 * flags at +0x34 (0x7eaf, 0x7eb9); ibv_dereg_mr reads both; siw's reg_mr
 * allocates 0x38.
 */
IBV_ASSERT_AT(verbs_mr, mr_type, 0x30);
IBV_ASSERT_AT(verbs_mr, access, 0x34);
IBV_ASSERT_SIZE(verbs_mr, 0x38);

/*
 * verbs_context_ops: verbs_set_ops (lib 0x12560) tests and copies every
 * pointer from ops+0x000 to ops+0x258, 76 of them, to priv+0x18+N; the
 * private part is calloc(0x280) = 0x18 + 0x260 + 8.  The offsets of the
 * members this provider sets, and the size:
 */
IBV_ASSERT_AT(verbs_context_ops, alloc_pd, 0x028);
IBV_ASSERT_AT(verbs_context_ops, create_cq, 0x078);
/* lib 0x117e8: vctx.create_cq_ex's wrapper calls priv+0x98, then verbs_init_cq. */
IBV_ASSERT_AT(verbs_context_ops, create_cq_ex, 0x080);
IBV_ASSERT_AT(verbs_context_ops, create_qp, 0x098);
IBV_ASSERT_AT(verbs_context_ops, create_qp_ex, 0x0a0);
IBV_ASSERT_AT(verbs_context_ops, create_srq, 0x0b0);
IBV_ASSERT_AT(verbs_context_ops, dealloc_pd, 0x0d0);
IBV_ASSERT_AT(verbs_context_ops, dereg_mr, 0x0e0);
IBV_ASSERT_AT(verbs_context_ops, destroy_cq, 0x0f8);
IBV_ASSERT_AT(verbs_context_ops, destroy_qp, 0x110);
IBV_ASSERT_AT(verbs_context_ops, free_context, 0x138);
IBV_ASSERT_AT(verbs_context_ops, modify_qp, 0x178);
IBV_ASSERT_AT(verbs_context_ops, poll_cq, 0x1a8);
IBV_ASSERT_AT(verbs_context_ops, post_recv, 0x1b0);
IBV_ASSERT_AT(verbs_context_ops, post_send, 0x1b8);
IBV_ASSERT_AT(verbs_context_ops, query_device_ex, 0x1d0);
IBV_ASSERT_AT(verbs_context_ops, query_port, 0x1e0);
IBV_ASSERT_AT(verbs_context_ops, query_qp, 0x1e8);
IBV_ASSERT_AT(verbs_context_ops, reg_dmabuf_mr, 0x218);
IBV_ASSERT_AT(verbs_context_ops, reg_mr, 0x220);
IBV_ASSERT_AT(verbs_context_ops, req_notify_cq, 0x228);
IBV_ASSERT_AT(verbs_context_ops, resize_cq, 0x238);
IBV_ASSERT_AT(verbs_context_ops, unimport_pd, 0x258);
IBV_ASSERT_SIZE(verbs_context_ops, 0x260);

/*
 * The public slots verbs_set_ops() stores into, for the anchors above
 * (lib 0x12560: e.g. ops+0x1a8 is stored at vctx+0x1a0).
 */
IBV_ASSERT_AT(verbs_context, context.ops.poll_cq, 0x1a0);
IBV_ASSERT_AT(verbs_context, context.ops.req_notify_cq, 0x1a8);
IBV_ASSERT_AT(verbs_context, context.ops.post_send, 0x210);
IBV_ASSERT_AT(verbs_context, context.ops.post_recv, 0x218);
IBV_ASSERT_AT(verbs_context, query_device_ex, 0xd8);
/* lib 0x1270d: ops+0xa0 stored at vctx+0x108. */
IBV_ASSERT_AT(verbs_context, create_qp_ex, 0x108);
IBV_ASSERT_AT(verbs_qp, comp_mask, 0x160);

/*
 * Command sizes: each ibv_cmd_*() passes its core request and response
 * sizes as immediates to its command helper (lib: get_context 0x10/0x8
 * at 0xb1a8/0xb115, alloc_pd 0x10/0x4 at 0x7d6e, reg_mr 0x30/0xc at
 * 0x7e73, create_cq 0x28/0x8 at 0xa595/0xa5a0, create_qp 0x40/0x20 at
 * 0xec82/0xec78, query_qp 0x18 at 0x84d6, modify_qp 0x78 at 0x87d2), and
 * siw passes query_port 0x18 (0x35fc); the ex query_device response is
 * 0x130 long (lib 0xbe40; siw 0x25f9).
 */
IBV_ASSERT_SIZE(ib_uverbs_cmd_hdr, 0x8);
IBV_ASSERT_SIZE(ibv_get_context, 0x10);
IBV_ASSERT_SIZE(ib_uverbs_get_context_resp, 0x8);
IBV_ASSERT_SIZE(ibv_query_port, 0x18);
IBV_ASSERT_SIZE(ibv_alloc_pd, 0x10);
IBV_ASSERT_SIZE(ib_uverbs_alloc_pd_resp, 0x4);
IBV_ASSERT_SIZE(ibv_reg_mr, 0x30);
IBV_ASSERT_SIZE(ib_uverbs_reg_mr_resp, 0xc);
IBV_ASSERT_SIZE(ibv_create_cq, 0x28);
IBV_ASSERT_SIZE(ib_uverbs_create_cq_resp, 0x8);
IBV_ASSERT_SIZE(ibv_create_qp, 0x40);
IBV_ASSERT_SIZE(ib_uverbs_create_qp_resp, 0x20);
IBV_ASSERT_SIZE(ibv_query_qp, 0x18);
IBV_ASSERT_SIZE(ibv_modify_qp, 0x78);
IBV_ASSERT_SIZE(ib_uverbs_ex_query_device_resp, 0x130);

#undef IBV_ASSERT_AT
#undef IBV_ASSERT_SIZE

#endif /* SCIF_RDMA_IBV_PROVIDER_H */
