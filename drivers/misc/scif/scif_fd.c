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
 */
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/scif.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "scif_priv.h"

static int scif_fd_open(struct inode *inode, struct file *f)
{
	struct scif_endpt *ep;

	ep = scif_epd_create();
	if (IS_ERR(ep))
		return PTR_ERR(ep);
	f->private_data = ep;
	return stream_open(inode, f);
}

static int scif_fd_release(struct inode *inode, struct file *f)
{
	scif_epd_destroy(f->private_data);
	return 0;
}

static long scif_ioctl_get_node_ids(struct scifioctl_node_ids __user *uarg)
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
		nodes = kcalloc(count, sizeof(*nodes), GFP_KERNEL);
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
 * Operations whose ABI is fixed but whose core is not implemented yet:
 * the argument is read exactly as the finished operation will read it, so
 * a bad pointer is reported as EFAULT already, and then EOPNOTSUPP.
 */
static long scif_ioctl_not_yet(unsigned int cmd, void __user *uarg)
{
	u8 buf[sizeof(struct scifioctl_reg)];
	size_t size;

	BUILD_BUG_ON(sizeof(struct scifioctl_copy) > sizeof(buf) ||
		     sizeof(struct scifioctl_fence_signal) > sizeof(buf));
	switch (cmd) {
	case SCIF_LISTEN:
	case SCIF_FENCE_WAIT:
		size = 0;
		break;
	case SCIF_BIND:
		size = sizeof(u16);
		break;
	default:
		size = _IOC_SIZE(cmd);
		break;
	}
	if (copy_from_user(buf, uarg, size))
		return -EFAULT;
	return -EOPNOTSUPP;
}

static long scif_fd_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case SCIF_GET_NODEIDS:
		return scif_ioctl_get_node_ids(uarg);
	case SCIF_BIND:
	case SCIF_LISTEN:
	case SCIF_CONNECT:
	case SCIF_ACCEPTREQ:
	case SCIF_ACCEPTREG:
	case SCIF_SEND:
	case SCIF_RECV:
	case SCIF_REG:
	case SCIF_UNREG:
	case SCIF_READFROM:
	case SCIF_WRITETO:
	case SCIF_VREADFROM:
	case SCIF_VWRITETO:
	case SCIF_FENCE_MARK:
	case SCIF_FENCE_WAIT:
	case SCIF_FENCE_SIGNAL:
		return scif_ioctl_not_yet(cmd, uarg);
	}
	return -ENOTTY;
}

static const struct file_operations scif_fops = {
	.owner = THIS_MODULE,
	.open = scif_fd_open,
	.release = scif_fd_release,
	.unlocked_ioctl = scif_fd_ioctl,
};

static ssize_t node_id_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%u\n", scif_self_node());
}
static DEVICE_ATTR_RO(node_id);

static struct attribute *scif_dev_attrs[] = {
	&dev_attr_node_id.attr,
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
