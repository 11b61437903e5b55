// SPDX-License-Identifier: GPL-2.0
/*
 * scif_kmap_client: a test client of scif_mmap_vma() (Documentation/
 * scif/mmap.rst, "Mappings of kernel clients").
 *
 * Test-only.  One kernel endpoint, driven through debugfs by
 * scif_kmap_test (each write is one command, its result the write's):
 *
 *   <debugfs>/scif_kmap_client/ctl
 *     connect NODE PORT   open the endpoint and connect it
 *     close               scif_close() it (its mappings stay, revoked)
 *   <debugfs>/scif_kmap_client/status   mmap(): scif_mmap_vma() of the
 *                         peer's space from the mmap offset on, with
 *                         SCIF_MMAP_STATUS
 *   <debugfs>/scif_kmap_client/plain    the same without flags
 *   <debugfs>/scif_kmap_client/badflags the same with flags 0x80
 *                         (must be EINVAL)
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/scif.h>
#include <linux/string.h>
#include <linux/uaccess.h>

/*
 * Guards kmap_ep: the mmap() handlers use it under the lock, and it is
 * connected before and closed after it is published or taken under it,
 * so that neither scif_connect() nor scif_close() runs under the lock,
 * which nests inside mmap_lock (connect and close take locks that a
 * copy to user space nests mmap_lock inside).
 */
static DEFINE_MUTEX(kmap_lock);
static scif_epd_t kmap_ep;
static struct dentry *kmap_dir;

static int kmap_connect(u16 node, u16 port)
{
	struct scif_port_id dst = { .node = node, .port = port };
	scif_epd_t epd;
	int err;

	epd = scif_open();
	if (!epd)
		return -ENOMEM;
	err = scif_connect(epd, &dst);
	if (err >= 0) {
		mutex_lock(&kmap_lock);
		err = kmap_ep ? -EBUSY : 0;
		if (!err)
			kmap_ep = epd;
		mutex_unlock(&kmap_lock);
	}
	if (err < 0) {
		scif_close(epd);
		return err;
	}
	return 0;
}

/* Take the endpoint from the mmap() handlers and close it. */
static int kmap_close(void)
{
	scif_epd_t epd;

	mutex_lock(&kmap_lock);
	epd = kmap_ep;
	kmap_ep = NULL;
	mutex_unlock(&kmap_lock);
	return epd ? scif_close(epd) : -ENOTCONN;
}

static ssize_t kmap_ctl_write(struct file *f, const char __user *ubuf,
			      size_t len, loff_t *pos)
{
	unsigned int node, port;
	char buf[64];
	int err = -EINVAL;

	if (!len || len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	if (sscanf(buf, "connect %u %u", &node, &port) == 2 &&
	    node <= U16_MAX && port <= U16_MAX)
		err = kmap_connect(node, port);
	else if (sysfs_streq(buf, "close"))
		err = kmap_close();
	return err ?: len;
}

static int kmap_mmap(struct vm_area_struct *vma, int flags)
{
	int err = -ENOTCONN;

	mutex_lock(&kmap_lock);
	if (kmap_ep)
		err = scif_mmap_vma(kmap_ep, vma->vm_pgoff << PAGE_SHIFT, vma,
				    flags);
	mutex_unlock(&kmap_lock);
	return err;
}

static int kmap_status_mmap(struct file *f, struct vm_area_struct *vma)
{
	return kmap_mmap(vma, SCIF_MMAP_STATUS);
}

static int kmap_plain_mmap(struct file *f, struct vm_area_struct *vma)
{
	return kmap_mmap(vma, 0);
}

static int kmap_badflags_mmap(struct file *f, struct vm_area_struct *vma)
{
	return kmap_mmap(vma, 0x80);
}

static const struct file_operations kmap_ctl_fops = {
	.owner = THIS_MODULE,
	.write = kmap_ctl_write,
};

static const struct file_operations kmap_status_fops = {
	.owner = THIS_MODULE,
	.mmap = kmap_status_mmap,
};

static const struct file_operations kmap_plain_fops = {
	.owner = THIS_MODULE,
	.mmap = kmap_plain_mmap,
};

static const struct file_operations kmap_badflags_fops = {
	.owner = THIS_MODULE,
	.mmap = kmap_badflags_mmap,
};

static int __init kmap_init(void)
{
	kmap_dir = debugfs_create_dir("scif_kmap_client", NULL);
	debugfs_create_file("ctl", 0200, kmap_dir, NULL, &kmap_ctl_fops);
	/* mmap() is not proxied by debugfs: the files' own operations. */
	debugfs_create_file_unsafe("status", 0600, kmap_dir, NULL,
				   &kmap_status_fops);
	debugfs_create_file_unsafe("plain", 0600, kmap_dir, NULL,
				   &kmap_plain_fops);
	debugfs_create_file_unsafe("badflags", 0600, kmap_dir, NULL,
				   &kmap_badflags_fops);
	return 0;
}

static void __exit kmap_exit(void)
{
	debugfs_remove_recursive(kmap_dir);
	kmap_close();
}

module_init(kmap_init);
module_exit(kmap_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Test client of scif_mmap_vma()");
