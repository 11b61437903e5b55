// SPDX-License-Identifier: GPL-2.0
/*
 * scif_dmabuf_import: a test importer of SCIF's dma-bufs
 * (Documentation/scif/devices.rst, "The importers").
 *
 * Test-only.  At load it takes a DMA_MEMCPY channel of the software DMA
 * engine (scif_soft_dma.ko, loaded first); its device is the importer's.
 * Driven through <debugfs>/scif_dmabuf_import/ctl by a process whose
 * descriptors it reads (each write is one command, its result the
 * write's):
 *
 *   import FD [lazy]  a dynamic attachment (allow_peer2peer) of dma-buf
 *                     FD, mapped at once (DMA_BIDIRECTIONAL); its
 *                     move_notify is counted and unmaps, unless lazy:
 *                     then the mapping stays until release
 *   copy SEED         the channel copies the pattern of SEED (byte i of
 *                     the range is (SEED + i * 7) & 0xff) into the
 *                     mapping's DMA addresses; -ENODEV if not mapped
 *   map               map again (the first map or after move_notify)
 *   release           unmap, detach, let go of the dma-buf
 *   static FD         a static attachment of FD, detached at once
 *   nop2p FD          a dynamic attachment without allow_peer2peer,
 *                     detached at once
 *   vmap              the imported dma-buf's kernel mapping: its first
 *                     8 bytes are kept (state's vhead), then vunmap
 *
 * <debugfs>/scif_dmabuf_import/state: "moves N mapped M segs S vhead H".
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/dmaengine.h>
#include <linux/iosys-map.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/version.h>

MODULE_IMPORT_NS(DMA_BUF);

/* The bounce buffer the pattern is copied from. */
#define IMP_BUF		SZ_64K

/**
 * struct imp - the importer
 * @cmd_lock: serializes the commands; never taken by move_notify
 * @chan: the DMA_MEMCPY channel, whose device is the importer's
 * @dir: debugfs directory
 * @buf: the imported dma-buf, or NULL
 * @att: its attachment
 * @sgt: its mapping, or NULL; under @buf's reservation lock
 * @lazy: move_notify does not unmap
 * @vhead: the first 8 bytes the last vmap command read
 * @moves: move_notify calls, ever
 */
struct imp {
	/* cmd_lock serializes buf, att and lazy */
	struct mutex cmd_lock;
	struct dma_chan *chan;
	struct dentry *dir;
	struct dma_buf *buf;
	struct dma_buf_attachment *att;
	struct sg_table *sgt;
	bool lazy;
	u64 vhead;
	atomic_t moves;
};

static struct imp imp;

static struct device *imp_dev(void)
{
	return imp.chan->device->dev;
}

/* Called with the reservation lock held, by the exporter's revocation. */
static void imp_move_notify(struct dma_buf_attachment *att)
{
	atomic_inc(&imp.moves);
	if (imp.lazy || !imp.sgt)
		return;
	dma_buf_unmap_attachment(att, imp.sgt, DMA_BIDIRECTIONAL);
	imp.sgt = NULL;
}

static const struct dma_buf_attach_ops imp_p2p_ops = {
	.allow_peer2peer = true,
	.move_notify = imp_move_notify,
};

static void imp_nop2p_move(struct dma_buf_attachment *att)
{
}

static const struct dma_buf_attach_ops imp_nop2p_ops = {
	.allow_peer2peer = false,
	.move_notify = imp_nop2p_move,
};

/* Map the attachment; under cmd_lock. */
static int imp_map(void)
{
	struct sg_table *sgt;
	int err = 0;

	if (!imp.att)
		return -ENOENT;
	dma_resv_lock(imp.buf->resv, NULL);
	if (imp.sgt) {
		err = -EBUSY;
	} else {
		sgt = dma_buf_map_attachment(imp.att, DMA_BIDIRECTIONAL);
		if (IS_ERR(sgt))
			err = PTR_ERR(sgt);
		else
			imp.sgt = sgt;
	}
	dma_resv_unlock(imp.buf->resv);
	return err;
}

/* Unmap, detach and let go; under cmd_lock. */
static void imp_release(void)
{
	if (!imp.buf)
		return;
	dma_resv_lock(imp.buf->resv, NULL);
	if (imp.sgt)
		dma_buf_unmap_attachment(imp.att, imp.sgt, DMA_BIDIRECTIONAL);
	imp.sgt = NULL;
	dma_resv_unlock(imp.buf->resv);
	dma_buf_detach(imp.buf, imp.att);
	dma_buf_put(imp.buf);
	imp.att = NULL;
	imp.buf = NULL;
}

static int imp_import(int fd, bool lazy)
{
	struct dma_buf *buf;
	int err;

	if (imp.buf)
		return -EBUSY;
	buf = dma_buf_get(fd);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	imp.lazy = lazy;
	imp.att = dma_buf_dynamic_attach(buf, imp_dev(), &imp_p2p_ops, NULL);
	if (IS_ERR(imp.att)) {
		err = PTR_ERR(imp.att);
		imp.att = NULL;
		dma_buf_put(buf);
		return err;
	}
	imp.buf = buf;
	err = imp_map();
	if (err)
		imp_release();
	return err;
}

/* A one-shot attachment (static, or dynamic without P2P); its result. */
static int imp_try_attach(int fd, bool dynamic)
{
	struct dma_buf_attachment *att;
	struct dma_buf *buf;
	int err = 0;

	buf = dma_buf_get(fd);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	if (dynamic)
		att = dma_buf_dynamic_attach(buf, imp_dev(), &imp_nop2p_ops,
					     NULL);
	else
		att = dma_buf_attach(buf, imp_dev());
	if (IS_ERR(att))
		err = PTR_ERR(att);
	else
		dma_buf_detach(buf, att);
	dma_buf_put(buf);
	return err;
}

static void imp_dma_done(void *arg)
{
	complete(arg);
}

/*
 * Copy @len bytes from @src to @dst with the channel, and wait, sleeping
 * (the engine's CPU is a work item: dma_sync_wait()'s spin would starve
 * it on a guest of one CPU).
 */
static int imp_dma(dma_addr_t dst, dma_addr_t src, size_t len)
{
	DECLARE_COMPLETION_ONSTACK(done);
	struct dma_async_tx_descriptor *tx;
	struct dma_tx_state state;
	dma_cookie_t cookie;

	tx = dmaengine_prep_dma_memcpy(imp.chan, dst, src, len,
				       DMA_PREP_INTERRUPT | DMA_CTRL_ACK);
	if (!tx)
		return -ENOMEM;
	tx->callback = imp_dma_done;
	tx->callback_param = &done;
	cookie = dmaengine_submit(tx);
	if (dma_submit_error(cookie))
		return -EIO;
	dma_async_issue_pending(imp.chan);
	if (!wait_for_completion_timeout(&done, 10 * HZ)) {
		dmaengine_terminate_sync(imp.chan);
		return -ETIMEDOUT;
	}
	return dmaengine_tx_status(imp.chan, cookie, &state) == DMA_COMPLETE ?
	       0 : -EIO;
}

/* The pattern into the mapping, through the channel; under cmd_lock. */
static int imp_copy(unsigned int seed)
{
	struct scatterlist *sg;
	dma_addr_t bdma;
	u64 off = 0, done;
	unsigned int i;
	size_t n, j;
	int err = 0;
	u8 *b;

	if (!imp.buf)
		return -ENOENT;
	b = dma_alloc_coherent(imp_dev(), IMP_BUF, &bdma, GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	/* The reservation lock keeps the mapping until the copy is done. */
	dma_resv_lock(imp.buf->resv, NULL);
	if (!imp.sgt) {
		err = -ENODEV;
		goto unlock;
	}
	for_each_sgtable_dma_sg(imp.sgt, sg, i) {
		for (done = 0; done < sg_dma_len(sg); done += n) {
			n = min_t(u64, IMP_BUF, sg_dma_len(sg) - done);
			for (j = 0; j < n; j++)
				b[j] = seed + (off + done + j) * 7;
			err = imp_dma(sg_dma_address(sg) + done, bdma, n);
			if (err)
				goto unlock;
		}
		off += sg_dma_len(sg);
	}
unlock:
	dma_resv_unlock(imp.buf->resv);
	dma_free_coherent(imp_dev(), IMP_BUF, b, bdma);
	return err;
}

/* The kernel mapping of the dma-buf; under cmd_lock. */
static int imp_vmap(void)
{
	struct iosys_map map;
	int err;

	if (!imp.buf)
		return -ENOENT;
	/* 6.2 made dma_buf_vmap() the caller's to lock. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	err = dma_buf_vmap_unlocked(imp.buf, &map);
#else
	err = dma_buf_vmap(imp.buf, &map);
#endif
	if (err)
		return err;
	iosys_map_memcpy_from(&imp.vhead, &map, 0, sizeof(imp.vhead));
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	dma_buf_vunmap_unlocked(imp.buf, &map);
#else
	dma_buf_vunmap(imp.buf, &map);
#endif
	return 0;
}

static ssize_t imp_ctl_write(struct file *f, const char __user *ubuf,
			     size_t len, loff_t *ppos)
{
	char cmd[16] = "", opt[16] = "", buf[64];
	unsigned int arg = 0;
	int err;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%15s %u %15s", cmd, &arg, opt) < 1)
		return -EINVAL;
	mutex_lock(&imp.cmd_lock);
	if (!strcmp(cmd, "import"))
		err = imp_import(arg, !strcmp(opt, "lazy"));
	else if (!strcmp(cmd, "copy"))
		err = imp_copy(arg);
	else if (!strcmp(cmd, "map"))
		err = imp_map();
	else if (!strcmp(cmd, "release"))
		err = imp.buf ? (imp_release(), 0) : -ENOENT;
	else if (!strcmp(cmd, "static"))
		err = imp_try_attach(arg, false);
	else if (!strcmp(cmd, "nop2p"))
		err = imp_try_attach(arg, true);
	else if (!strcmp(cmd, "vmap"))
		err = imp_vmap();
	else
		err = -EINVAL;
	mutex_unlock(&imp.cmd_lock);
	return err ? err : len;
}

static const struct file_operations imp_ctl_fops = {
	.owner = THIS_MODULE,
	.write = imp_ctl_write,
};

static int imp_state_show(struct seq_file *s, void *unused)
{
	unsigned int segs = 0;
	bool mapped = false;
	u64 vhead;

	mutex_lock(&imp.cmd_lock);
	vhead = imp.vhead;
	if (imp.buf) {
		dma_resv_lock(imp.buf->resv, NULL);
		mapped = imp.sgt;
		segs = mapped ? imp.sgt->nents : 0;
		dma_resv_unlock(imp.buf->resv);
	}
	mutex_unlock(&imp.cmd_lock);
	seq_printf(s, "moves %d mapped %d segs %u vhead %llu\n",
		   atomic_read(&imp.moves), mapped, segs, vhead);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(imp_state);

static int __init imp_init(void)
{
	dma_cap_mask_t mask;

	mutex_init(&imp.cmd_lock);
	dma_cap_zero(mask);
	dma_cap_set(DMA_MEMCPY, mask);
	imp.chan = dma_request_chan_by_mask(&mask);
	if (IS_ERR(imp.chan))
		return PTR_ERR(imp.chan);
	if (strcmp(dev_driver_string(imp_dev()), "scif_soft_dma")) {
		pr_err("the channel is %s's, not the software DMA engine's\n",
		       dev_driver_string(imp_dev()));
		dma_release_channel(imp.chan);
		return -ENODEV;
	}
	imp.dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("ctl", 0200, imp.dir, NULL, &imp_ctl_fops);
	debugfs_create_file("state", 0444, imp.dir, NULL, &imp_state_fops);
	pr_info("importing for %s\n", dev_name(imp_dev()));
	return 0;
}

static void __exit imp_exit(void)
{
	debugfs_remove_recursive(imp.dir);
	mutex_lock(&imp.cmd_lock);
	imp_release();
	mutex_unlock(&imp.cmd_lock);
	dma_release_channel(imp.chan);
}

module_init(imp_init);
module_exit(imp_exit);
MODULE_DESCRIPTION("SCIF test: a dma-buf importer on the software DMA engine");
MODULE_LICENSE("GPL");
