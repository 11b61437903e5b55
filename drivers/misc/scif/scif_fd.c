// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: the /dev/scif front end.
 *
 * The only code that touches user pointers and the ioctl structures of
 * <uapi/linux/scif_ioctl.h>.  Each open file is one endpoint.  The device
 * is world accessible (0666); privilege is checked per operation.
 *
 * 32-bit processes are not supported: the ABI structures have a different
 * layout there, and without a .compat_ioctl their ioctls fail with ENOTTY.
 *
 * /proc/<pid>/fdinfo/<fd> of an open /dev/scif shows its endpoint, one
 * "scif-<key>:\t<value>" line each (scif_fd_show_fdinfo(); the format
 * is in Documentation/scif/observability.rst); what it prints is the
 * endpoint's handle, ids and counts, never a kernel address.
 */
#include <linux/anon_inodes.h>
#include <linux/capability.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/scif.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uio.h>

#include "scif_conn.h"
#include "scif_devices.h"
#include "scif_devmap.h"
#include "scif_dmabuf.h"
#include "scif_epd.h"
#include "scif_fault.h"
#include "scif_fd.h"
#include "scif_fp.h"
#include "scif_info.h"
#include "scif_mmap.h"
#include "scif_msg.h"
#include "scif_rma.h"

static int scif_fd_open(struct inode *inode, struct file *f)
{
	struct scif_endpt *ep;
	int err;

	ep = scif_epd_create(true);
	if (IS_ERR(ep))
		return PTR_ERR(ep);
	err = scif_mmap_file_open(f, ep);
	if (err) {
		scif_epd_close(ep);
		return err;
	}
	f->private_data = ep;
	return stream_open(inode, f);
}

static int scif_fd_release(struct inode *inode, struct file *f)
{
	struct scif_endpt *ep = f->private_data;

	/* Every VMA of the file is gone: nothing maps the endpoint. */
	scif_mmap_file_release(ep);
	scif_epd_close(ep);
	return 0;
}

static __poll_t scif_fd_poll(struct file *f, poll_table *wait)
{
	struct scif_endpt *ep = f->private_data;

	poll_wait(f, &ep->wq, wait);
	return scif_msg_poll_mask(ep);
}

/* "-" for no port, else "<node>:<port>", into @buf (12 bytes). */
static const char *scif_fd_port_id(char *buf, size_t size, u16 node, u16 port)
{
	if (!port)
		return "-";
	snprintf(buf, size, "%u:%u", node, port);
	return buf;
}

/*
 * The endpoint of an open /dev/scif, for /proc/<pid>/fdinfo/<fd>.  The
 * reader holds a reference to the file, so the endpoint is there.  Its
 * state, ids and RMA counters are copied under its spinlock, the data
 * path's counters read as debugfs reads them (a round behind, maybe),
 * the window counts without rma.lock.
 */
static void scif_fd_show_fdinfo(struct seq_file *m, struct file *f)
{
	struct scif_endpt *ep = f->private_data;
	char lbuf[12], pbuf[12];
	unsigned int nr_local, nr_remote;
	u64 rma_ops, rma_bytes, errors;
	enum scif_epd_state state;
	struct scif_port_id peer;
	u16 port;

	spin_lock(&ep->lock);
	state = ep->state;
	port = ep->port;
	peer = ep->peer;
	rma_ops = ep->stats.rma_ops;
	rma_bytes = ep->stats.rma_bytes;
	errors = ep->stats.errors;
	spin_unlock(&ep->lock);
	scif_window_counts(ep, &nr_local, &nr_remote);

	seq_printf(m, "scif-handle:\t%#llx\n", ep->handle);
	seq_printf(m, "scif-state:\t%s\n", scif_epd_state_name(state));
	seq_printf(m, "scif-local:\t%s\n",
		   scif_fd_port_id(lbuf, sizeof(lbuf), READ_ONCE(scif_info.self),
				   port));
	seq_printf(m, "scif-peer:\t%s\n",
		   scif_fd_port_id(pbuf, sizeof(pbuf), peer.node, peer.port));
	seq_printf(m, "scif-windows:\t%u\n", nr_local);
	seq_printf(m, "scif-remote-windows:\t%u\n", nr_remote);
	seq_printf(m, "scif-tx-bytes:\t%llu\n", READ_ONCE(ep->stats.tx_bytes));
	seq_printf(m, "scif-tx-msgs:\t%llu\n", READ_ONCE(ep->stats.tx_msgs));
	seq_printf(m, "scif-rx-bytes:\t%llu\n", READ_ONCE(ep->stats.rx_bytes));
	seq_printf(m, "scif-rx-msgs:\t%llu\n", READ_ONCE(ep->stats.rx_msgs));
	seq_printf(m, "scif-rma-ops:\t%llu\n", rma_ops);
	seq_printf(m, "scif-rma-bytes:\t%llu\n", rma_bytes);
	seq_printf(m, "scif-errors:\t%llu\n", errors);
}

/* Exactly 16 bits are read and written back: callers pass a u16 or int. */
static long scif_fd_ioctl_bind(struct scif_endpt *ep, u16 __user *uport)
{
	u16 port;
	int ret;

	if (get_user(port, uport))
		return -EFAULT;
	if (port && port < SCIF_ADMIN_PORT_END &&
	    !capable(CAP_NET_BIND_SERVICE))
		return -EACCES;
	ret = scif_epd_bind(ep, port);
	if (ret < 0)
		return ret;
	return put_user((u16)ret, uport) ? -EFAULT : 0;
}

static long scif_fd_ioctl_connect(struct file *f, struct scif_endpt *ep,
				  struct scifioctl_connect __user *uarg)
{
	struct scifioctl_connect req;
	int ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	ret = scif_epd_connect(ep, &req.peer, f->f_flags & O_NONBLOCK);
	if (ret < 0)
		return ret;
	req.self.node = scif_info.self;
	req.self.port = ret;
	return copy_to_user(&uarg->self, &req.self, sizeof(req.self)) ?
	       -EFAULT : 0;
}

/*
 * First half of accept: take a request and park it under a cookie that
 * the caller passes to SCIF_ACCEPTREG on a new endpoint.
 */
static long scif_fd_ioctl_acceptreq(struct scif_endpt *lep,
				    struct scifioctl_accept __user *uarg)
{
	struct scifioctl_accept acc;
	struct scif_conreq *req;
	int err;

	if (copy_from_user(&acc, uarg, sizeof(acc)))
		return -EFAULT;
	err = scif_epd_acceptreq(lep, acc.flags, &acc.peer, &acc.endpt);
	if (err)
		return err;
	if (copy_to_user(&uarg->peer, &acc.peer, sizeof(acc.peer)) ||
	    put_user(acc.endpt, &uarg->endpt)) {
		req = scif_epd_unpark_request(acc.endpt);
		if (req)
			scif_conreq_reject(req);
		return -EFAULT;
	}
	return 0;
}

/* Second half: the parked request becomes this (fresh) endpoint. */
static long scif_fd_ioctl_acceptreg(struct scif_endpt *ep, u64 __user *ucookie)
{
	struct scif_conreq *req;
	u64 cookie;

	if (get_user(cookie, ucookie))
		return -EFAULT;
	if (READ_ONCE(ep->state) != SCIF_EPD_UNBOUND)
		return -EINVAL;
	req = scif_epd_unpark_request(cookie);
	if (!req)
		return -ENOENT;
	return scif_epd_accept_request(ep, req);
}

static long scif_fd_ioctl_msg(struct scif_endpt *ep,
			      struct scifioctl_msg __user *uarg, bool send)
{
	struct scifioctl_msg m;
	struct iov_iter iter;
	void __user *buf;
	int ret;

	if (copy_from_user(&m, uarg, sizeof(m)))
		return -EFAULT;
	if (m.len < 0)
		return -EINVAL;
	buf = u64_to_user_ptr(m.msg);
	if (!access_ok(buf, m.len))
		return -EFAULT;
	iov_iter_ubuf(&iter, send ? ITER_SOURCE : ITER_DEST, buf, m.len);
	ret = send ? scif_epd_send(ep, &iter, m.flags) :
		     scif_epd_recv(ep, &iter, m.flags);
	if (ret < 0)
		return ret;
	return put_user(ret, &uarg->out_len) ? -EFAULT : 0;
}

static long scif_fd_ioctl_get_node_ids(struct scifioctl_node_ids __user *uarg)
{
	struct scifioctl_node_ids req;
	u16 __user *unodes;
	u16 *nodes = NULL;
	int online, count;
	long err = 0;
	u16 self;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	count = clamp(req.len, 0, SCIF_MAX_NODES);
	if (count) {
		nodes = scif_kcalloc(count, sizeof(*nodes), GFP_KERNEL);
		if (!nodes)
			return -ENOMEM;
	}
	online = scif_get_node_ids(nodes, count, &self);
	count = min(count, online);

	unodes = u64_to_user_ptr(req.nodes);
	if (copy_to_user(unodes, nodes, count * sizeof(*nodes)) ||
	    put_user(self, (u16 __user *)u64_to_user_ptr(req.self)) ||
	    put_user(online, &uarg->len))
		err = -EFAULT;
	kfree(nodes);
	return err;
}

/*
 * Tell the caller of a registration ioctl where its window @off (@len
 * bytes) is; one that cannot be told is closed again (-EFAULT).
 */
static long scif_fd_reg_out(struct scif_endpt *ep, s64 off, u64 len,
			    __s64 __user *out)
{
	if (off < 0)
		return off;
	if (put_user(off, out)) {
		scif_epd_unregister(ep, off, len);
		return -EFAULT;
	}
	return 0;
}

/* Only out_offset is written back; SCIF_MAP_KERNEL is for the kernel API. */
static long scif_fd_ioctl_reg(struct scif_endpt *ep,
			      struct scifioctl_reg __user *uarg)
{
	struct scifioctl_reg reg;
	s64 ret;

	if (copy_from_user(&reg, uarg, sizeof(reg)))
		return -EFAULT;
	if (reg.flags & SCIF_MAP_KERNEL)
		return -EINVAL;
	ret = scif_epd_register_mem(ep, reg.addr, reg.len, reg.offset,
				    reg.prot, reg.flags);
	return scif_fd_reg_out(ep, ret, reg.len, &uarg->out_offset);
}

static long scif_fd_ioctl_reg_pci(struct scif_endpt *ep,
				  struct scifioctl_reg_pci __user *uarg)
{
	struct scifioctl_reg_pci reg;
	struct scif_pinned_pages *pp;
	s64 ret;

	if (!capable(CAP_SYS_RAWIO))
		return -EPERM;
	if (copy_from_user(&reg, uarg, sizeof(reg)))
		return -EFAULT;
	if (reg.reserved0 || (reg.flags & ~SCIF_MAP_FIXED) || reg.offset < 0 ||
	    ((reg.flags & SCIF_MAP_FIXED) && !PAGE_ALIGNED(reg.offset)))
		return -EINVAL;
	ret = scif_window_conn_err(ep);
	if (ret)
		return ret;
	ret = scif_devmem_pin_user(reg.domain, reg.bus, reg.devfn, reg.bar,
				   reg.bar_offset, reg.len, reg.prot, &pp);
	if (ret)
		return ret;
	ret = scif_epd_register_devmem(ep, pp, reg.offset, reg.flags);
	scif_pin_put(pp);
	return scif_fd_reg_out(ep, ret, reg.len, &uarg->out_offset);
}

static long scif_fd_ioctl_unreg(struct scif_endpt *ep,
				struct scifioctl_unreg __user *uarg)
{
	struct scifioctl_unreg unreg;

	if (copy_from_user(&unreg, uarg, sizeof(unreg)))
		return -EFAULT;
	return scif_epd_unregister(ep, unreg.offset, unreg.len);
}

static long scif_fd_ioctl_copy(struct scif_endpt *ep, unsigned int cmd,
			       struct scifioctl_copy __user *uarg)
{
	struct scifioctl_copy copy;
	struct scif_rma_req req = { 0 };

	if (copy_from_user(&copy, uarg, sizeof(copy)))
		return -EFAULT;
	req.loffset = copy.loffset;
	req.len = copy.len;
	req.roffset = copy.roffset;
	req.flags = copy.flags;
	req.to_remote = cmd == SCIF_WRITETO || cmd == SCIF_VWRITETO;
	if (cmd == SCIF_VREADFROM || cmd == SCIF_VWRITETO) {
		req.kind = SCIF_RMA_USER;
		req.uaddr = copy.addr;
	} else {
		req.kind = SCIF_RMA_WINDOW;
	}
	return scif_epd_rma(ep, &req);
}

/* The mark is written through the user pointer in the argument. */
static long scif_fd_ioctl_fence_mark(struct scif_endpt *ep,
				     struct scifioctl_fence_mark __user *uarg)
{
	struct scifioctl_fence_mark req;
	int mark, err;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	err = scif_epd_fence_mark(ep, req.flags, &mark);
	if (err)
		return err;
	return put_user(mark, (int __user *)u64_to_user_ptr(req.mark)) ?
	       -EFAULT : 0;
}

static long
scif_fd_ioctl_fence_signal(struct scif_endpt *ep,
			   struct scifioctl_fence_signal __user *uarg)
{
	struct scifioctl_fence_signal req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	return scif_epd_fence_signal(ep, req.loff, req.lval, req.roff,
				     req.rval, req.flags);
}

/* The file is installed only once the caller has its descriptor. */
static long scif_fd_ioctl_fp_open(struct scif_endpt *ep,
				  struct scifioctl_fp __user *uarg)
{
	struct scifioctl_fp req;
	struct file *fp;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	fp = scif_fp_open(ep, &req);
	if (IS_ERR(fp))
		return PTR_ERR(fp);
	if (copy_to_user(uarg, &req, sizeof(req))) {
		fput(fp);
		put_unused_fd(req.fd);
		return -EFAULT;
	}
	fd_install(req.fd, fp);
	return 0;
}

/* SCIF_DEVMAP_OPEN: a device-map file of a range of the peer's windows. */
static long scif_fd_ioctl_devmap(struct file *epf, struct scif_endpt *ep,
				 struct scifioctl_devmap __user *uarg)
{
	struct scifioctl_devmap req;
	struct file *f;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	f = scif_devmap_open(epf, ep, &req);
	if (IS_ERR(f))
		return PTR_ERR(f);
	if (put_user(req.fd, &uarg->fd)) {
		fput(f);
		put_unused_fd(req.fd);
		return -EFAULT;
	}
	fd_install(req.fd, f);
	return 0;
}

/* SCIF_DEV_LIST: up to req.max entries, counted before they are copied. */
static long scif_fd_ioctl_dev_list(struct scifioctl_dev_list __user *uarg)
{
	struct scif_dev_entry *ents = NULL;
	struct scifioctl_dev_list req;
	struct scif_dev_filter f;
	long n;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved0 || req.reserved1 || req.max > SCIF_DEV_LIST_MAX)
		return -EINVAL;
	f = (struct scif_dev_filter) {
		.pci_class = req.pci_class, .class_mask = req.class_mask,
		.vendor = req.vendor, .device = req.device, .flags = req.flags,
	};
	if (!scif_dev_filter_valid(&f))
		return -EINVAL;
	if (req.max) {
		ents = kvcalloc(req.max, sizeof(*ents), GFP_KERNEL_ACCOUNT);
		if (!ents)
			return -ENOMEM;
	}
	n = scif_dev_list(req.node, &f, ents, req.max);
	if (n >= 0 &&
	    (copy_to_user(u64_to_user_ptr(req.entries), ents,
			  n * sizeof(*ents)) ||
	     put_user(n, &uarg->count)))
		n = -EFAULT;
	kvfree(ents);
	return n < 0 ? n : 0;
}

static int scif_borrow_release(struct inode *inode, struct file *f)
{
	scif_dev_return(f->private_data);
	return 0;
}

static __poll_t scif_borrow_poll(struct file *f, poll_table *wait)
{
	return scif_dev_borrow_poll(f->private_data, f, wait);
}

static long scif_borrow_ioctl(struct file *f, unsigned int cmd,
			      unsigned long arg)
{
	struct scif_dev_entry e;
	int err;

	if (cmd != SCIF_DEV_INFO)
		return -ENOTTY;
	err = scif_dev_borrow_info(f->private_data, &e);
	if (err)
		return err;
	if (copy_to_user((void __user *)arg, &e, sizeof(e)))
		return -EFAULT;
	return 0;
}

/* BARs are mapped on real NTB hardware only (devices.rst). */
static int scif_borrow_mmap(struct file *f, struct vm_area_struct *vma)
{
	return -ENXIO;
}

static const struct file_operations scif_borrow_fops = {
	.owner = THIS_MODULE,
	.release = scif_borrow_release,
	.poll = scif_borrow_poll,
	.unlocked_ioctl = scif_borrow_ioctl,
	.mmap = scif_borrow_mmap,
	.llseek = noop_llseek,
};

/* SCIF_DEV_BORROW: the borrow file is installed once fd is written. */
static long scif_fd_ioctl_dev_borrow(struct scifioctl_dev_borrow __user *uarg)
{
	struct scifioctl_dev_borrow req;
	struct scif_dev_borrow *b;
	struct file *fp;
	int fd;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (!capable(CAP_SYS_RAWIO))
		return -EPERM;
	if (req.reserved || req.flags & ~SCIF_DEV_EXCLUSIVE)
		return -EINVAL;
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return fd;
	b = scif_dev_borrow(req.fdid, req.flags, NULL, NULL);
	if (IS_ERR(b)) {
		put_unused_fd(fd);
		return PTR_ERR(b);
	}
	fp = anon_inode_getfile("[scif_borrow]", &scif_borrow_fops, b,
				O_RDWR | O_CLOEXEC);
	if (IS_ERR(fp)) {
		scif_dev_return(b);
		put_unused_fd(fd);
		return PTR_ERR(fp);
	}
	req.fd = fd;
	if (copy_to_user(uarg, &req, sizeof(req))) {
		fput(fp);
		put_unused_fd(fd);
		return -EFAULT;
	}
	fd_install(fd, fp);
	return 0;
}

static long scif_fd_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	struct scif_endpt *ep = f->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case SCIF_BIND:
		return scif_fd_ioctl_bind(ep, uarg);
	case SCIF_LISTEN:
		return scif_epd_listen(ep, (int)arg);
	case SCIF_CONNECT:
		return scif_fd_ioctl_connect(f, ep, uarg);
	case SCIF_ACCEPTREQ:
		return scif_fd_ioctl_acceptreq(ep, uarg);
	case SCIF_ACCEPTREG:
		return scif_fd_ioctl_acceptreg(ep, uarg);
	case SCIF_SEND:
		return scif_fd_ioctl_msg(ep, uarg, true);
	case SCIF_RECV:
		return scif_fd_ioctl_msg(ep, uarg, false);
	case SCIF_GET_NODEIDS:
		return scif_fd_ioctl_get_node_ids(uarg);
	case SCIF_REG:
		return scif_fd_ioctl_reg(ep, uarg);
	case SCIF_UNREG:
		return scif_fd_ioctl_unreg(ep, uarg);
	case SCIF_REG_PCI:
		return scif_fd_ioctl_reg_pci(ep, uarg);
	case SCIF_READFROM:
	case SCIF_WRITETO:
	case SCIF_VREADFROM:
	case SCIF_VWRITETO:
		return scif_fd_ioctl_copy(ep, cmd, uarg);
	case SCIF_FENCE_MARK:
		return scif_fd_ioctl_fence_mark(ep, uarg);
	case SCIF_FENCE_WAIT:
		/* The mark is the argument itself (an int). */
		return scif_epd_fence_wait(ep, (int)arg);
	case SCIF_FENCE_SIGNAL:
		return scif_fd_ioctl_fence_signal(ep, uarg);
	case SCIF_FP_OPEN:
		return scif_fd_ioctl_fp_open(ep, uarg);
	case SCIF_DEVMAP_OPEN:
		return scif_fd_ioctl_devmap(f, ep, uarg);
	case SCIF_DMABUF_EXPORT:
		return scif_dmabuf_ioctl(ep, uarg);
	case SCIF_DEV_LIST:
		return scif_fd_ioctl_dev_list(uarg);
	case SCIF_DEV_BORROW:
		return scif_fd_ioctl_dev_borrow(uarg);
	case SCIF_FP_NOTIFY:
		return scif_epd_fp_notify(ep, (int)arg);
	}
	return -ENOTTY;
}

static const struct file_operations scif_fops = {
	.owner = THIS_MODULE,
	.open = scif_fd_open,
	.release = scif_fd_release,
	.unlocked_ioctl = scif_fd_ioctl,
	.poll = scif_fd_poll,
	.mmap = scif_mmap,
	.show_fdinfo = scif_fd_show_fdinfo,
};

static ssize_t node_id_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%u\n", scif_info.self);
}
static DEVICE_ATTR_RO(node_id);

/* The windows of this node's endpoints, and the peers' they hold. */
static ssize_t windows_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	long local, remote;

	scif_window_totals(&local, &remote);
	return sysfs_emit(buf, "%ld\n", local);
}
static DEVICE_ATTR_RO(windows);

static ssize_t remote_windows_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	long local, remote;

	scif_window_totals(&local, &remote);
	return sysfs_emit(buf, "%ld\n", remote);
}
static DEVICE_ATTR_RO(remote_windows);

static struct attribute *scif_dev_attrs[] = {
	&dev_attr_node_id.attr,
	&dev_attr_windows.attr,
	&dev_attr_remote_windows.attr,
	NULL,
};
ATTRIBUTE_GROUPS(scif_dev);

/**
 * scif_fd_init() - register /dev/scif
 *
 * Return: 0 or a negative errno from misc_register().
 */
int scif_fd_init(void)
{
	scif_info.mdev.minor = MISC_DYNAMIC_MINOR;
	scif_info.mdev.name = SCIF_DRV_NAME;
	scif_info.mdev.fops = &scif_fops;
	scif_info.mdev.mode = 0666;
	scif_info.mdev.groups = scif_dev_groups;
	return misc_register(&scif_info.mdev);
}

/**
 * scif_fd_exit() - unregister /dev/scif
 */
void scif_fd_exit(void)
{
	misc_deregister(&scif_info.mdev);
}
