/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF (Symmetric Communication Interface): the in-kernel API.
 *
 * Functions are declared here as the driver implements them; the flag
 * values and ABI structures shared with user space come from
 * <uapi/linux/scif_ioctl.h>.  Kernel-mode calls return a negative errno
 * where user mode would return -1 and set errno.
 */
#ifndef _LINUX_SCIF_H
#define _LINUX_SCIF_H

#include <linux/list.h>
#include <linux/poll.h>
#include <linux/types.h>
#include <uapi/linux/scif_ioctl.h>

/* Largest number of nodes a SCIF network can have. */
#define SCIF_MAX_NODES	64

/* An endpoint, as kernel clients hold it. */
typedef struct scif_endpt *scif_epd_t;

/* Pages pinned by scif_pin_pages(), opaque to clients. */
typedef struct scif_pinned_pages *scif_pinned_pages_t;
struct device;
struct pci_dev;
struct vm_area_struct;

/**
 * struct scif_range - pages of the peer's registered memory
 * @cookie: private to the driver; identifies the range to scif_put_pages()
 * @nr_pages: number of pages
 * @prot_flags: SCIF_PROT_* every page of the range allows
 * @phys_addr: the address of each page as this node's bus reaches it
 * @va: where this node's CPU reaches each page
 */
struct scif_range {
	void *cookie;
	int nr_pages;
	int prot_flags;
	dma_addr_t *phys_addr;
	void __iomem **va;
};

/**
 * struct scif_pollepd - an endpoint and the events to poll it for
 * @epd: the endpoint
 * @events: requested events (EPOLLIN, EPOLLOUT)
 * @revents: returned events; EPOLLERR and EPOLLHUP are always reported
 */
struct scif_pollepd {
	scif_epd_t epd;
	__poll_t events;
	__poll_t revents;
};

/**
 * struct scif_peer_dev - a node, as kernel clients are told of it
 * @dnode: the node's id
 */
struct scif_peer_dev {
	u16 dnode;
};

/**
 * struct scif_client - a kernel client notified as nodes come and go
 * @name: the client's name
 * @probe: called once for every node that is online (the local node
 *	included); may sleep
 * @remove: called once for every node that goes away or, on
 *	unregistration, for every node @probe was called for; may sleep
 * @list: private to the driver
 *
 * The callbacks must not register or unregister clients.
 */
struct scif_client {
	const char *name;
	void (*probe)(struct scif_peer_dev *peer);
	void (*remove)(struct scif_peer_dev *peer);
	struct list_head list;
};

scif_epd_t scif_open(void);
int scif_bind(scif_epd_t epd, u16 pn);
int scif_listen(scif_epd_t epd, int backlog);
int scif_connect(scif_epd_t epd, struct scif_port_id *dst);
int scif_accept(scif_epd_t epd, struct scif_port_id *peer, scif_epd_t *newepd,
		int flags);
int scif_close(scif_epd_t epd);
int scif_send(scif_epd_t epd, void *msg, int len, int flags);
int scif_recv(scif_epd_t epd, void *msg, int len, int flags);
int scif_poll(struct scif_pollepd *epds, unsigned int nepds, long timeout);
int scif_get_node_ids(u16 *nodes, int len, u16 *self);
int scif_pin_pages(void *addr, size_t len, int prot_flags, int map_flags,
		   scif_pinned_pages_t *pinned_pages);
int scif_unpin_pages(scif_pinned_pages_t pinned_pages);
off_t scif_register_pinned_pages(scif_epd_t epd,
				 scif_pinned_pages_t pinned_pages,
				 off_t offset, int map_flags);
off_t scif_register(scif_epd_t epd, void *addr, size_t len, off_t offset,
		    int prot_flags, int map_flags);
off_t scif_register_pci(scif_epd_t epd, struct pci_dev *pdev, int bar,
			u64 bar_offset, size_t len, off_t offset,
			int prot_flags, int map_flags);
off_t scif_register_alias(scif_epd_t dst, scif_epd_t src, off_t src_offset,
			  size_t len, off_t offset, int prot_flags,
			  int map_flags);
int scif_unregister(scif_epd_t epd, off_t offset, size_t len);
int scif_readfrom(scif_epd_t epd, off_t loffset, size_t len, off_t roffset,
		  int rma_flags);
int scif_writeto(scif_epd_t epd, off_t loffset, size_t len, off_t roffset,
		 int rma_flags);
int scif_vreadfrom(scif_epd_t epd, void *addr, size_t len, off_t roffset,
		   int rma_flags);
int scif_vwriteto(scif_epd_t epd, void *addr, size_t len, off_t roffset,
		  int rma_flags);
int scif_fence_mark(scif_epd_t epd, int flags, int *mark);
int scif_fence_wait(scif_epd_t epd, int mark);
int scif_fence_signal(scif_epd_t epd, off_t loff, u64 lval, off_t roff,
		      u64 rval, int flags);
int scif_get_pages(scif_epd_t epd, off_t offset, size_t len,
		   struct scif_range **pages);
int scif_put_pages(struct scif_range *pages);

/* scif_mmap_vma() flags */
#define SCIF_MMAP_STATUS	0x1	/* last page: struct scif_mmap_status */

int scif_mmap_vma(scif_epd_t epd, off_t offset, struct vm_area_struct *vma,
		  int flags);

/* scif_dma_map() flags, with SCIF_PROT_READ and/or SCIF_PROT_WRITE */
#define SCIF_DMA_LOCAL	0x100	/* a range of this endpoint's windows */
#define SCIF_DMA_REMOTE	0x200	/* a range of the peer's windows */

/**
 * struct scif_dma_seg - a run of DMA addresses of a device mapping
 * @addr: the first address, for the device the mapping was made for
 * @len: bytes
 */
struct scif_dma_seg {
	dma_addr_t addr;
	u64 len;
};

/**
 * struct scif_dma_map - a range of windows mapped for a device's DMA
 * @nr_segs: entries in @segs
 * @segs: the range's addresses, in order (physically contiguous runs,
 *	merged where their DMA addresses follow each other)
 * @cookie: private to the driver
 *
 * Made by scif_dma_map(); valid for the device until its revoke callback
 * returns or scif_dma_unmap() is called; freed by scif_dma_unmap().
 */
struct scif_dma_map {
	int nr_segs;
	struct scif_dma_seg *segs;
	void *cookie;
};

/*
 * Why a device mapping was revoked: -ENXIO (a window was unregistered),
 * -ECONNRESET (the connection ended), -ENODEV (the node is lost).
 */
typedef void (*scif_dma_revoke_t)(struct scif_dma_map *map, void *priv,
				  int why);

int scif_dma_map(scif_epd_t epd, struct device *dev, off_t offset, size_t len,
		 int flags, scif_dma_revoke_t revoke, void *priv,
		 struct scif_dma_map **map);
void scif_dma_unmap(struct scif_dma_map *map);

struct dma_buf;
struct dma_buf *scif_dmabuf_export(scif_epd_t epd, off_t offset, size_t len,
				   int prot, int flags);
bool scif_is_dmabuf(struct dma_buf *dmabuf);
int scif_dmabuf_range(struct dma_buf *dmabuf, scif_epd_t *epd,
		      off_t *offset, size_t *len, int *prot);
int scif_client_register(struct scif_client *client);
void scif_client_unregister(struct scif_client *client);

/**
 * struct scif_dev_filter - which lent functions scif_dev_list() gives
 * @pci_class: (PCI class & @class_mask) == @pci_class
 * @class_mask: 0 for any class
 * @vendor: PCI vendor id, PCI_ANY_ID (0xffff) for any
 * @device: PCI device id, PCI_ANY_ID (0xffff) for any
 * @flags: SCIF_DEV_FREE: only functions borrowable now
 */
struct scif_dev_filter {
	u32 pci_class;
	u32 class_mask;
	u16 vendor;
	u16 device;
	u32 flags;
};

struct scif_dev_borrow;

/**
 * struct scif_dev_borrow_ops - what a borrower is told
 * @lost: the borrow ended without a return: @why is -ENODEV (the lender
 *	was lost) or -EREMOTEIO (the lender withdrew the function).
 *	Context: process context (a work item), no SCIF lock held, may
 *	sleep; the borrower must stop using the function before it
 *	returns.  The borrow must still be given back with
 *	scif_dev_return(), which then sends nothing.
 */
struct scif_dev_borrow_ops {
	void (*lost)(struct scif_dev_borrow *b, void *priv, int why);
};

int scif_dev_list(u16 node, const struct scif_dev_filter *filter,
		  struct scif_dev_entry *info, int max);
struct scif_dev_borrow *scif_dev_borrow(u64 fdid, int flags,
					const struct scif_dev_borrow_ops *ops,
					void *priv);
int scif_dev_return(struct scif_dev_borrow *b);
int scif_dev_borrow_info(struct scif_dev_borrow *b,
			 struct scif_dev_entry *info);

#endif /* _LINUX_SCIF_H */
