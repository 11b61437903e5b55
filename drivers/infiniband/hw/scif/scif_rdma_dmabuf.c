// SPDX-License-Identifier: GPL-2.0
/*
 * scif_rdma: MRs over SCIF dma-bufs (rdma.rst, "dma-buf MRs";
 * devices.rst, "The importers").
 *
 * The device has no DMA of its own (its "DMA addresses" are kernel
 * addresses), so a dma-buf is never mapped: only a SCIF dma-buf over a
 * range of this node's windows is taken, and the MR names that range.
 * The peer's direct WRITEs and READs reach it through a window that
 * SCIF opens on the QP's endpoint over the same pinned pages
 * (scif_register_alias()), in place of the vmap a user MR's window is
 * registered over.  The MR has no page list, so its bytes are reached
 * by those windows only (srd_mr_ok() refuses it to the frames).
 *
 * The attachment is dynamic, with allow_peer2peer, on the ib_device's
 * own struct device, only to hear revocations: SCIF calls move_notify
 * (under the dma-buf's reservation lock, from its revocation work) when
 * a window of the range is unregistered or the connection ends, and the
 * MR is then invalid for good and its windows closed before it returns.
 */

#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "scif_rdma.h"

MODULE_IMPORT_NS(DMA_BUF);

/* The range was revoked: the MR's keys are no longer usable. */
static void srd_dbuf_move_notify(struct dma_buf_attachment *attach)
{
	struct srd_mr *mr = attach->importer_priv;

	dma_resv_assert_held(attach->dmabuf->resv);
	WRITE_ONCE(mr->valid, false);
	srd_map_mr_close(mr->dbuf->dev, mr, false);
}

static const struct dma_buf_attach_ops srd_dbuf_ops = {
	.allow_peer2peer = true,
	.move_notify = srd_dbuf_move_notify,
};

/* SCIF's protection an MR's remote rights need. */
static int srd_dbuf_prot(int access)
{
	return (access & IB_ACCESS_REMOTE_READ ? SCIF_PROT_READ : 0) |
	       (access & IB_ACCESS_REMOTE_WRITE ? SCIF_PROT_WRITE : 0);
}

/*
 * Under the reservation lock: the dma-buf must be SCIF's, over a local
 * range not revoked, hold [@offset, @offset + @length), and allow
 * @access.  Then the MR is valid until move_notify.
 */
static int srd_dbuf_check(struct srd_mr *mr, u64 offset, u64 length,
			  int access)
{
	struct srd_dbuf *db = mr->dbuf;
	size_t size;
	int err;

	err = scif_dmabuf_range(db->dmabuf, &db->epd, &db->off, &size,
				&db->prot);
	if (err == -EINVAL)
		return -EOPNOTSUPP;	/* another exporter's */
	if (err)
		return err;
	if (offset > size || length > size - offset)
		return -EINVAL;
	if (srd_dbuf_prot(access) & ~db->prot)
		return -EACCES;
	db->off += offset;
	mr->valid = true;
	return 0;
}

/**
 * srd_dbuf_get() - take a SCIF dma-buf for an MR
 * @dev: the device
 * @mr: the MR (not in the table yet, its maps list initialised)
 * @fd: the dma-buf's descriptor
 * @offset: the MR's first byte in the dma-buf, page aligned
 * @length: its bytes, page aligned
 * @access: IB_ACCESS_* of the MR
 *
 * On success @mr->dbuf is set and @mr valid; srd_dbuf_put() undoes it.
 *
 * Context: process; sleeps.
 * Return: 0, -EBADF or -EINVAL (@fd is no dma-buf), -EOPNOTSUPP (not a
 * SCIF dma-buf, or a range of the peer's windows), -ENODEV (revoked),
 * -EINVAL (the range is past the dma-buf), -EACCES (the export does not
 * allow @access's remote rights), -ENOMEM.
 */
int srd_dbuf_get(struct srd_dev *dev, struct srd_mr *mr, int fd, u64 offset,
		 u64 length, int access)
{
	struct srd_dbuf *db;
	int err;

	db = kzalloc(sizeof(*db), GFP_KERNEL_ACCOUNT);
	if (!db)
		return -ENOMEM;
	db->dev = dev;
	db->dmabuf = dma_buf_get(fd);
	if (IS_ERR(db->dmabuf)) {
		err = PTR_ERR(db->dmabuf);
		goto free;
	}
	err = -EOPNOTSUPP;
	if (!scif_is_dmabuf(db->dmabuf))
		goto put;
	mr->dbuf = db;
	db->attach = dma_buf_dynamic_attach(db->dmabuf, &dev->ibdev.dev,
					    &srd_dbuf_ops, mr);
	if (IS_ERR(db->attach)) {
		err = PTR_ERR(db->attach);
		goto put;
	}
	dma_resv_lock(db->dmabuf->resv, NULL);
	err = srd_dbuf_check(mr, offset, length, access);
	dma_resv_unlock(db->dmabuf->resv);
	if (err)
		goto detach;
	return 0;
detach:
	dma_buf_detach(db->dmabuf, db->attach);
put:
	mr->dbuf = NULL;
	dma_buf_put(db->dmabuf);
free:
	kfree(db);
	return err;
}

/**
 * srd_dbuf_put() - let go of a dma-buf MR's dma-buf
 * @mr: the MR, whose windows are closed and which no one uses any more
 *
 * Context: process; sleeps.
 */
void srd_dbuf_put(struct srd_mr *mr)
{
	struct srd_dbuf *db = mr->dbuf;

	dma_buf_detach(db->dmabuf, db->attach);
	dma_buf_put(db->dmabuf);
	kfree(db);
	mr->dbuf = NULL;
}
