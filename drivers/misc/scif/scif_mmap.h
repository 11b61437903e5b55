/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: mapping the peer's registered memory into a process (mmap
 * of an endpoint's file).  See scif_mmap.c and
 * Documentation/scif/mmap.rst; the endpoint's part, struct
 * scif_epd_mmap, is in scif_endpt.h.
 */
#ifndef _SCIF_MMAP_H_
#define _SCIF_MMAP_H_

#include <linux/fs.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mutex.h>

/*
 * The flags of every VMA through which SCIF hands a process page frames
 * (remote mmap, the fast-path file).  Not VM_PFNMAP: VFIO type1 follows
 * the page frames of a VM_PFNMAP range into an IOMMU (VFIO_IOMMU_MAP_DMA),
 * with no reference and no notifier, so a device would keep a peer's
 * pages after SCIF zapped them and the peer reused them.  VFIO refuses
 * any other range that get_user_pages() cannot pin, and get_user_pages()
 * refuses VM_IO.  The PTEs are special either way (scif_mmap_insert()).
 */
#define SCIF_VM_FLAGS	(VM_MIXEDMAP | VM_IO | VM_DONTEXPAND | VM_DONTDUMP)

/*
 * Live mappings of kernel clients (scif_mmap_vma()) an endpoint may
 * have: each costs its maker two pages and a file.
 */
#define SCIF_MMAP_CLIENT_MAX	256

struct dentry;
struct file;
struct inode;
struct scif_endpt;
struct scif_rwindow;
struct vm_area_struct;

int scif_mmap_init(struct dentry *dir);
void scif_mmap_exit(void);
void scif_mmap_epd_init(struct scif_endpt *ep);
int scif_mmap_file_open(struct file *f, struct scif_endpt *ep);
void scif_mmap_file_release(struct scif_endpt *ep);
int scif_mmap(struct file *f, struct vm_area_struct *vma);
int scif_mmap_client(struct scif_endpt *ep, s64 offset,
		     struct vm_area_struct *vma, bool status);
void scif_mmap_revoke(struct scif_endpt *ep, struct scif_rwindow *rw);
vm_fault_t scif_mmap_insert(struct vm_area_struct *vma, unsigned long addr,
			    unsigned long pfn);
void scif_mmap_vm_flags_mod(struct vm_area_struct *vma, vm_flags_t set,
			    vm_flags_t clear);
struct inode *scif_mmap_alloc_inode(void);
struct file *scif_mmap_alloc_file(struct inode *inode, const char *name,
				  const struct file_operations *fops);

#endif /* _SCIF_MMAP_H_ */
