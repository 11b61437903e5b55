// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF ivshmem bus: test hooks of the test build (SCIF_TEST=1), under
 * <debugfs>/scif_ivshmem/.  scif_ivshmem.c includes this file at its
 * end in the test build only (SCIF_TEST_HOOKS); the shipped module has
 * none of it, and scif_ivshmem_testhooks.h gives the calls into it that
 * compile to nothing there.
 */
#include <linux/uaccess.h>

/*
 * Until when the heartbeat work stops (stall_ms), in jiffies: the
 * module drives one doorbell device (scif_iv_dev).
 */
static unsigned long scif_iv_stall_until;

/*
 * Test hook, <debugfs>/scif_ivshmem/corrupt_slot (root only, write only):
 * this node writes garbage into its own bootstrap slot, as a misbehaving
 * peer would.  Words: magic, generation, signature, sig_addr (outside
 * any aperture), qp_addr (random), qp_far (page aligned, outside any
 * aperture).  Undone only by reloading the module (a new life).
 */
static ssize_t scif_iv_corrupt_write(struct file *file, const char __user *ubuf,
				     size_t len, loff_t *ppos)
{
	struct scif_iv *iv = file->private_data;
	struct scif_iv_slot *me = scif_iv_slot(iv, iv->self);
	char buf[16];
	int i;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	strim(buf);
	if (!strcmp(buf, "magic")) {
		WRITE_ONCE(me->magic, get_random_u64() | 1);
	} else if (!strcmp(buf, "generation")) {
		WRITE_ONCE(me->generation, me->generation + 1 +
			   get_random_u32() % 1000);
	} else if (!strcmp(buf, "signature")) {
		WRITE_ONCE(me->sig_value, get_random_u64() | 1);
	} else if (!strcmp(buf, "sig_addr")) {
		WRITE_ONCE(me->sig_addr, (get_random_u64() | BIT_ULL(62)) &
			   ~(u64)7);
	} else if (!strcmp(buf, "qp_addr")) {
		for (i = 0; i < SCIF_IV_MAX_NODES; i++)
			if (i != iv->self)
				WRITE_ONCE(me->qp_addr[i], get_random_u64());
	} else if (!strcmp(buf, "qp_far")) {
		for (i = 0; i < SCIF_IV_MAX_NODES; i++)
			if (i != iv->self)
				WRITE_ONCE(me->qp_addr[i], BIT_ULL(40) +
					   i * PAGE_SIZE);
	} else {
		return -EINVAL;
	}
	return len;
}

static const struct file_operations scif_iv_corrupt_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = scif_iv_corrupt_write,
	.llseek = noop_llseek,
};

/*
 * Test hook, <debugfs>/scif_ivshmem/stall_ms (root only, write only):
 * write N (at most 60000) and the heartbeat work stops
 * for N ms, neither beating nor looking at the other nodes' slots, as a
 * busy host can hold it back, so that a test can have another node's slot
 * change twice between two of this node's looks.
 */
static ssize_t scif_iv_stall_write(struct file *file, const char __user *ubuf,
				   size_t len, loff_t *ppos)
{
	unsigned int ms;
	int err;

	err = kstrtouint_from_user(ubuf, len, 10, &ms);
	if (err)
		return err;
	if (ms > 60000)
		return -EINVAL;
	WRITE_ONCE(scif_iv_stall_until, jiffies + msecs_to_jiffies(ms));
	return len;
}

static const struct file_operations scif_iv_stall_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = scif_iv_stall_write,
	.llseek = noop_llseek,
};

/* How long the heartbeat work is still to stop for, in jiffies. */
static unsigned long scif_iv_stalled(struct scif_iv *iv)
{
	unsigned long until = READ_ONCE(scif_iv_stall_until);

	return time_before(jiffies, until) ? until - jiffies : 0;
}

static void scif_iv_debugfs_init(struct scif_iv *iv)
{
	WRITE_ONCE(scif_iv_stall_until, jiffies);
	iv->debugfs = debugfs_create_dir("scif_ivshmem", NULL);
	debugfs_create_file("corrupt_slot", 0200, iv->debugfs, iv,
			    &scif_iv_corrupt_fops);
	debugfs_create_file("stall_ms", 0200, iv->debugfs, iv,
			    &scif_iv_stall_fops);
}
