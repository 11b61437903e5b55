/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scif_rdma: what differs in ib_core between the kernels it builds for
 * (Debian's 6.1 and 6.12).
 */
#ifndef _SCIF_RDMA_COMPAT_H
#define _SCIF_RDMA_COMPAT_H

/*
 * create_cq's last argument: struct ib_udata * up to 6.10, then
 * struct uverbs_attr_bundle * (which carries the udata); Kbuild tells
 * which (SRD_HAVE_CQ_ATTRS).
 */
#ifdef SRD_HAVE_CQ_ATTRS
struct uverbs_attr_bundle;
#define SRD_CQ_UDATA_T	struct uverbs_attr_bundle
#else
#define SRD_CQ_UDATA_T	struct ib_udata
#endif

/*
 * reg_user_mr_dmabuf's last argument changed the same way (by 6.12); Kbuild
 * tells which (SRD_HAVE_MR_DMABUF_ATTRS).
 */
#ifdef SRD_HAVE_MR_DMABUF_ATTRS
struct uverbs_attr_bundle;
#define SRD_MR_UDATA_T	struct uverbs_attr_bundle
#else
#define SRD_MR_UDATA_T	struct ib_udata
#endif

/*
 * vm_flags became read-only in 6.3, written through vm_flags_clear();
 * Kbuild tells which (SRD_HAVE_VM_FLAGS_CLEAR).
 */
#ifdef SRD_HAVE_VM_FLAGS_CLEAR
#define srd_vm_flags_clear(vma, flags)	vm_flags_clear(vma, flags)
#else
#define srd_vm_flags_clear(vma, flags)	((vma)->vm_flags &= ~(flags))
#endif

#endif /* _SCIF_RDMA_COMPAT_H */
