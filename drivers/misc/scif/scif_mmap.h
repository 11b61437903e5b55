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
#include <linux/mutex.h>

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
void scif_mmap_revoke(struct scif_endpt *ep, struct scif_rwindow *rw);
void scif_mmap_vm_flags_mod(struct vm_area_struct *vma, vm_flags_t set,
			    vm_flags_t clear);
struct inode *scif_mmap_alloc_inode(void);
struct file *scif_mmap_alloc_file(struct inode *inode, const char *name,
				  const struct file_operations *fops);

#endif /* _SCIF_MMAP_H_ */
