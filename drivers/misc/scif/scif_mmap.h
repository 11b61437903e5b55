/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: mapping the peer's registered memory into a process (mmap
 * of an endpoint's file).  See scif_mmap.c and
 * Documentation/scif/mmap.rst.
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

/**
 * struct scif_epd_mmap - an endpoint's mappings of its peer's windows
 * @lock: protects @maps and every mapping's @revoked; taken by the
 *	fault handler (under mmap_lock or the VMA lock), by mmap() (under
 *	mmap_lock, around scif_rwindow_get(), so rma.lock nests in it) and
 *	by revocation (under no SCIF lock but ctl_mutex)
 * @maps: struct scif_mmap of the endpoint's file, live or revoked
 * @inode: gives the file an address_space of its own, so that zapping
 *	touches only this endpoint's mappings; NULL for endpoints of the
 *	kernel API, which cannot be mapped
 */
struct scif_epd_mmap {
	/* lock protects maps and the mappings' revoked flags */
	struct mutex lock;
	struct list_head maps;
	struct inode *inode;
};

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
