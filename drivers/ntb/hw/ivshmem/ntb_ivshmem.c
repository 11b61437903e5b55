// SPDX-License-Identifier: GPL-2.0
/*
 * ntb_ivshmem - an emulated non-transparent bridge over QEMU's
 * ivshmem-doorbell device, for testing NTB clients without NTB hardware.
 *
 * Two ivshmem-doorbell devices (in one VM, or one in each of two VMs) share
 * one memory file through our ivshmem server and are the two ports of one
 * emulated NTB: each registers a struct ntb_dev whose only peer is the
 * other.  The port number is the device's ivshmem peer id (IVPosition, 0
 * or 1).  Each port has two inbound memory windows, window 0 of S bytes
 * and window 1 of S / 2 bytes, where S (4 MiB to 256 MiB) is a quarter of
 * the size of the memory file (BAR2):
 *
 *   [0, S)           port 0's inbound memory window 0
 *   [S, 2 S)         port 1's inbound memory window 0
 *   [2 S, 5/2 S)     port 0's inbound memory window 1
 *   [5/2 S, 3 S)     port 1's inbound memory window 1
 *   3 S              header (magic, version, S)
 *   3 S + 4K * (1 + p)   port p's registers: link status, heartbeat,
 *                    doorbell bits, scratchpads
 *   up to 4 S        unused
 *
 * Every window is aligned to its size.
 *
 * A port's outbound window w is the peer's inbound window w, at a fixed
 * address in its own BAR2.  Inbound translation: a real NTB translates a
 * peer's writes into any memory the host allocated; this one can only
 * "reach" the memory of the window itself, so the driver gives the PCI
 * device DMA operations whose coherent allocations come from the port's
 * inbound windows (one whole window per allocation: the smallest free
 * window that holds the size asked for), and mw_set_trans() accepts exactly
 * that window's own address and nothing else.  The upstream clients
 * (ntb_tool, ntb_perf, ntb_transport) allocate their inbound buffers with
 * dma_alloc_coherent() on the NTB's PCI device, of the size of the
 * window they mean (mw_get_align() gives the window's size as its address
 * alignment, or the peer told them its outbound window's size); the two
 * windows differing in size, each gets the window it will translate.  (With
 * equal sizes the allocator would have to guess: ntb_perf asks
 * mw_get_align() about one window and translates the other.)  ntb_perf
 * also kmalloc()s a buffer of its outbound window's size, which fails
 * above 4 MiB: it runs unchanged with S = 4 MiB, its default here.  Kernels
 * without per-device DMA operations (CONFIG_DMA_OPS /
 * CONFIG_ARCH_HAS_DMA_OPS unset) get no inbound windows: mw_set_trans()
 * refuses every address.
 *
 * Doorbells: peer_db_set() ORs the bits into the peer's doorbell register
 * and rings the peer's ivshmem doorbell, MSI-X vector 0; the peer's
 * interrupt handler raises a doorbell event for the bits not masked.
 * Vector 1 says "my link state changed".  The link is up while both ports
 * have it enabled and each sees the other's heartbeat, a counter that a
 * delayed work advances every poll_ms; a peer whose heartbeat stands still
 * for link_timeout_ms (a VM that died) is down.
 *
 * The shared memory holds no secrets and the peer may write anything in it:
 * the driver only uses values read from it as data, never as indices or
 * sizes.  The emulation does not isolate the ports as an NTB with an IOMMU
 * would: both see the whole memory file.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/dma-map-ops.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/ntb.h>
#include <linux/pci.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#define IVNTB_PORTS		2
#define IVNTB_MWS		2
#define IVNTB_SPADS		16
#define IVNTB_DB_BITS		32
#define IVNTB_DB_VALID		GENMASK_ULL(IVNTB_DB_BITS - 1, 0)
#define IVNTB_MAGIC		0x4e544269	/* "iBTN" */
#define IVNTB_VERSION		1
#define IVNTB_MW_MIN		SZ_4M
#define IVNTB_MW_MAX		SZ_256M
#define IVNTB_REG_STRIDE	SZ_4K

/* ivshmem BAR0 registers */
#define IVSHMEM_IVPOSITION	0x08
#define IVSHMEM_DOORBELL	0x0c

/* MSI-X vectors, also the vector numbers a peer rings */
#define IVNTB_VEC_DB		0
#define IVNTB_VEC_LINK		1
#define IVNTB_VECS		2

/* ivntb_port_regs.status */
#define IVNTB_ST_ENABLED	BIT(0)

#if defined(CONFIG_DMA_OPS) || defined(CONFIG_ARCH_HAS_DMA_OPS)
#define IVNTB_HAVE_DMA_OPS	1
#else
#define IVNTB_HAVE_DMA_OPS	0
#endif

static unsigned int poll_ms = 100;
module_param(poll_ms, uint, 0444);
MODULE_PARM_DESC(poll_ms, "Heartbeat and link poll period in ms (default 100)");

static unsigned int link_timeout_ms = 3000;
module_param(link_timeout_ms, uint, 0444);
MODULE_PARM_DESC(link_timeout_ms,
		 "A peer whose heartbeat stands still this long is down (default 3000)");

struct ivntb_header {
	u32 magic;
	u32 version;
	u64 mw_unit;
};

struct ivntb_port_regs {
	u32 status;
	u32 heartbeat;
	atomic64_t db;
	u32 spad[IVNTB_SPADS];
};

struct ivntb_dev {
	struct ntb_dev ntb;
	struct pci_dev *pdev;
	void __iomem *mmio;		/* BAR0 */
	phys_addr_t shm_phys;		/* BAR2 */
	resource_size_t mw_unit;	/* S: window 0's size, twice window 1's */
	int port;
	int peer;

	struct ivntb_header *hdr;	/* the header and register pages */
	struct ivntb_port_regs *regs;	/* ours */
	struct ivntb_port_regs *pregs;	/* the peer's */

	void *mw_virt[IVNTB_MWS];	/* our inbound windows */
	bool mw_busy[IVNTB_MWS];	/* handed out by the allocator */
	bool mw_trans[IVNTB_MWS];	/* translation set */
	spinlock_t lock;		/* the mw_* fields and db_mask */
	u64 db_mask;

	const struct dma_map_ops *old_dma_ops;
	bool dma_ops_set;

	struct delayed_work poll;
	bool enabled;			/* ntb_link_enable() called */
	u32 peer_hb;			/* peer heartbeat last seen ... */
	unsigned long peer_hb_time;	/* ... and when it last moved */
	bool peer_alive;
	bool link_reported;		/* state of the last link event */
	bool stopping;
};

static struct ivntb_dev *ntb_to_iv(struct ntb_dev *ntb)
{
	return container_of(ntb, struct ivntb_dev, ntb);
}

static resource_size_t ivntb_mw_len(struct ivntb_dev *iv, int widx)
{
	return widx == 0 ? iv->mw_unit : iv->mw_unit / 2;
}

static resource_size_t ivntb_mw_offset(struct ivntb_dev *iv, int port, int widx)
{
	return widx == 0 ? port * iv->mw_unit :
			   2 * iv->mw_unit + port * (iv->mw_unit / 2);
}

static void ivntb_ring(struct ivntb_dev *iv, int vector)
{
	iowrite32(((u32)iv->peer << 16) | vector, iv->mmio + IVSHMEM_DOORBELL);
}

/* ---- port numbers ---- */

static int ivntb_port_number(struct ntb_dev *ntb)
{
	return ntb_to_iv(ntb)->port;
}

static int ivntb_peer_port_count(struct ntb_dev *ntb)
{
	return 1;
}

static int ivntb_peer_port_number(struct ntb_dev *ntb, int pidx)
{
	return pidx == 0 ? ntb_to_iv(ntb)->peer : -EINVAL;
}

static int ivntb_peer_port_idx(struct ntb_dev *ntb, int port)
{
	return port == ntb_to_iv(ntb)->peer ? 0 : -EINVAL;
}

/* ---- link ---- */

static bool ivntb_link_up(struct ivntb_dev *iv)
{
	return iv->enabled && READ_ONCE(iv->peer_alive) &&
	       (READ_ONCE(iv->pregs->status) & IVNTB_ST_ENABLED);
}

static u64 ivntb_link_is_up(struct ntb_dev *ntb, enum ntb_speed *speed,
			    enum ntb_width *width)
{
	struct ivntb_dev *iv = ntb_to_iv(ntb);
	bool up = ivntb_link_up(iv);

	if (speed)
		*speed = up ? NTB_SPEED_GEN3 : NTB_SPEED_NONE;
	if (width)
		*width = up ? NTB_WIDTH_4 : NTB_WIDTH_NONE;
	return up ? BIT_ULL(0) : 0;
}

static u64 ivntb_db_read(struct ntb_dev *ntb);
static u64 ivntb_db_read_mask(struct ntb_dev *ntb);

/* Look at the peer and report a change of the link state. */
static void ivntb_poll_work(struct work_struct *work)
{
	struct ivntb_dev *iv = container_of(to_delayed_work(work),
					    struct ivntb_dev, poll);
	u32 hb;
	bool up;

	WRITE_ONCE(iv->regs->heartbeat, iv->regs->heartbeat + 1);
	hb = READ_ONCE(iv->pregs->heartbeat);
	if (hb != iv->peer_hb) {
		iv->peer_hb = hb;
		iv->peer_hb_time = jiffies;
		WRITE_ONCE(iv->peer_alive, true);
	} else if (time_after(jiffies, iv->peer_hb_time +
			      msecs_to_jiffies(link_timeout_ms))) {
		WRITE_ONCE(iv->peer_alive, false);
	}

	up = ivntb_link_up(iv);
	if (up != iv->link_reported) {
		iv->link_reported = up;
		dev_info(&iv->pdev->dev, "link %s\n", up ? "up" : "down");
		ntb_link_event(&iv->ntb);
	}
	/*
	 * A doorbell whose interrupt was lost (seen between two VMs on 6.12:
	 * no MSI-X interrupt at all in some runs) is still found here.
	 */
	if (ivntb_db_read(&iv->ntb) & ~ivntb_db_read_mask(&iv->ntb))
		ntb_db_event(&iv->ntb, 0);
	if (!READ_ONCE(iv->stopping))
		schedule_delayed_work(&iv->poll, msecs_to_jiffies(poll_ms));
}

static void ivntb_set_enabled(struct ivntb_dev *iv, bool on)
{
	iv->enabled = on;
	WRITE_ONCE(iv->regs->status, on ? IVNTB_ST_ENABLED : 0);
	/* The peer's link changes too: tell it now, not at its next poll. */
	ivntb_ring(iv, IVNTB_VEC_LINK);
	mod_delayed_work(system_wq, &iv->poll, 0);
}

static int ivntb_link_enable(struct ntb_dev *ntb, enum ntb_speed max_speed,
			     enum ntb_width max_width)
{
	ivntb_set_enabled(ntb_to_iv(ntb), true);
	return 0;
}

static int ivntb_link_disable(struct ntb_dev *ntb)
{
	ivntb_set_enabled(ntb_to_iv(ntb), false);
	return 0;
}

/* ---- memory windows ---- */

static int ivntb_mw_count(struct ntb_dev *ntb, int pidx)
{
	return pidx == 0 ? IVNTB_MWS : -EINVAL;
}

static int ivntb_mw_get_align(struct ntb_dev *ntb, int pidx, int widx,
			      resource_size_t *addr_align,
			      resource_size_t *size_align,
			      resource_size_t *size_max)
{
	struct ivntb_dev *iv = ntb_to_iv(ntb);

	if (pidx != 0 || widx < 0 || widx >= IVNTB_MWS)
		return -EINVAL;
	/*
	 * The window reaches exactly its own memory, aligned to its size.
	 * The size limit given is window 0's, the larger, for both: ntb_perf
	 * checks its buffer against the limit of a window (its own port's
	 * index) other than the one it translates (the peer's); a buffer too
	 * large for its window is still refused, by mw_set_trans().
	 */
	if (addr_align)
		*addr_align = ivntb_mw_len(iv, widx);
	if (size_align)
		*size_align = PAGE_SIZE;
	if (size_max)
		*size_max = ivntb_mw_len(iv, 0);
	return 0;
}

static int ivntb_mw_set_trans(struct ntb_dev *ntb, int pidx, int widx,
			      dma_addr_t addr, resource_size_t size)
{
	struct ivntb_dev *iv = ntb_to_iv(ntb);
	unsigned long flags;
	dma_addr_t base;

	if (pidx != 0 || widx < 0 || widx >= IVNTB_MWS)
		return -EINVAL;
	base = iv->shm_phys + ivntb_mw_offset(iv, iv->port, widx);
	if (!size) {
		spin_lock_irqsave(&iv->lock, flags);
		iv->mw_trans[widx] = false;
		spin_unlock_irqrestore(&iv->lock, flags);
		return 0;
	}
	if (!IVNTB_HAVE_DMA_OPS || addr != base ||
	    size > ivntb_mw_len(iv, widx)) {
		dev_dbg(&iv->pdev->dev,
			"mw%d cannot reach %pad+%pa (it reaches only %pad)\n",
			widx, &addr, &size, &base);
		return -EINVAL;
	}
	spin_lock_irqsave(&iv->lock, flags);
	iv->mw_trans[widx] = true;
	spin_unlock_irqrestore(&iv->lock, flags);
	return 0;
}

static int ivntb_mw_clear_trans(struct ntb_dev *ntb, int pidx, int widx)
{
	return ivntb_mw_set_trans(ntb, pidx, widx, 0, 0);
}

static int ivntb_peer_mw_count(struct ntb_dev *ntb)
{
	return IVNTB_MWS;
}

static int ivntb_peer_mw_get_addr(struct ntb_dev *ntb, int widx,
				  phys_addr_t *base, resource_size_t *size)
{
	struct ivntb_dev *iv = ntb_to_iv(ntb);

	if (widx < 0 || widx >= IVNTB_MWS)
		return -EINVAL;
	if (base)
		*base = iv->shm_phys + ivntb_mw_offset(iv, iv->peer, widx);
	if (size)
		*size = ivntb_mw_len(iv, widx);
	return 0;
}

/* ---- doorbells ---- */

static u64 ivntb_db_valid_mask(struct ntb_dev *ntb)
{
	return IVNTB_DB_VALID;
}

static int ivntb_db_vector_count(struct ntb_dev *ntb)
{
	return 1;
}

static u64 ivntb_db_vector_mask(struct ntb_dev *ntb, int db_vector)
{
	return db_vector == 0 ? IVNTB_DB_VALID : 0;
}

static u64 ivntb_db_read(struct ntb_dev *ntb)
{
	return (u64)atomic64_read(&ntb_to_iv(ntb)->regs->db) & IVNTB_DB_VALID;
}

static int ivntb_db_clear(struct ntb_dev *ntb, u64 db_bits)
{
	atomic64_andnot(db_bits & IVNTB_DB_VALID, &ntb_to_iv(ntb)->regs->db);
	return 0;
}

static u64 ivntb_db_read_mask(struct ntb_dev *ntb)
{
	struct ivntb_dev *iv = ntb_to_iv(ntb);
	unsigned long flags;
	u64 mask;

	spin_lock_irqsave(&iv->lock, flags);
	mask = iv->db_mask;
	spin_unlock_irqrestore(&iv->lock, flags);
	return mask;
}

static int ivntb_db_set_mask(struct ntb_dev *ntb, u64 db_bits)
{
	struct ivntb_dev *iv = ntb_to_iv(ntb);
	unsigned long flags;

	spin_lock_irqsave(&iv->lock, flags);
	iv->db_mask |= db_bits & IVNTB_DB_VALID;
	spin_unlock_irqrestore(&iv->lock, flags);
	return 0;
}

static int ivntb_db_clear_mask(struct ntb_dev *ntb, u64 db_bits)
{
	struct ivntb_dev *iv = ntb_to_iv(ntb);
	unsigned long flags;
	u64 pending;

	spin_lock_irqsave(&iv->lock, flags);
	iv->db_mask &= ~db_bits;
	pending = ivntb_db_read(ntb) & ~iv->db_mask;
	spin_unlock_irqrestore(&iv->lock, flags);
	/* As hardware would: bits that were waiting behind the mask fire. */
	if (pending)
		ntb_db_event(ntb, 0);
	return 0;
}

static int ivntb_peer_db_set(struct ntb_dev *ntb, u64 db_bits)
{
	struct ivntb_dev *iv = ntb_to_iv(ntb);

	if (db_bits & ~IVNTB_DB_VALID)
		return -EINVAL;
	atomic64_or(db_bits, &iv->pregs->db);
	ivntb_ring(iv, IVNTB_VEC_DB);
	return 0;
}

static irqreturn_t ivntb_db_irq(int irq, void *data)
{
	struct ivntb_dev *iv = data;

	if (ivntb_db_read(&iv->ntb) & ~ivntb_db_read_mask(&iv->ntb))
		ntb_db_event(&iv->ntb, 0);
	return IRQ_HANDLED;
}

static irqreturn_t ivntb_link_irq(int irq, void *data)
{
	struct ivntb_dev *iv = data;

	/* The peer's state is read at once, its heartbeat after a poll. */
	if (!READ_ONCE(iv->stopping))
		mod_delayed_work(system_wq, &iv->poll, 0);
	return IRQ_HANDLED;
}

/* ---- scratchpads ---- */

static int ivntb_spad_count(struct ntb_dev *ntb)
{
	return IVNTB_SPADS;
}

static u32 ivntb_spad_read(struct ntb_dev *ntb, int sidx)
{
	if (sidx < 0 || sidx >= IVNTB_SPADS)
		return 0;
	return READ_ONCE(ntb_to_iv(ntb)->regs->spad[sidx]);
}

static int ivntb_spad_write(struct ntb_dev *ntb, int sidx, u32 val)
{
	if (sidx < 0 || sidx >= IVNTB_SPADS)
		return -EINVAL;
	WRITE_ONCE(ntb_to_iv(ntb)->regs->spad[sidx], val);
	return 0;
}

static u32 ivntb_peer_spad_read(struct ntb_dev *ntb, int pidx, int sidx)
{
	if (pidx != 0 || sidx < 0 || sidx >= IVNTB_SPADS)
		return 0;
	return READ_ONCE(ntb_to_iv(ntb)->pregs->spad[sidx]);
}

static int ivntb_peer_spad_write(struct ntb_dev *ntb, int pidx, int sidx,
				 u32 val)
{
	if (pidx != 0 || sidx < 0 || sidx >= IVNTB_SPADS)
		return -EINVAL;
	WRITE_ONCE(ntb_to_iv(ntb)->pregs->spad[sidx], val);
	return 0;
}

static const struct ntb_dev_ops ivntb_ops = {
	.port_number		= ivntb_port_number,
	.peer_port_count	= ivntb_peer_port_count,
	.peer_port_number	= ivntb_peer_port_number,
	.peer_port_idx		= ivntb_peer_port_idx,
	.link_is_up		= ivntb_link_is_up,
	.link_enable		= ivntb_link_enable,
	.link_disable		= ivntb_link_disable,
	.mw_count		= ivntb_mw_count,
	.mw_get_align		= ivntb_mw_get_align,
	.mw_set_trans		= ivntb_mw_set_trans,
	.mw_clear_trans		= ivntb_mw_clear_trans,
	.peer_mw_count		= ivntb_peer_mw_count,
	.peer_mw_get_addr	= ivntb_peer_mw_get_addr,
	.db_valid_mask		= ivntb_db_valid_mask,
	.db_vector_count	= ivntb_db_vector_count,
	.db_vector_mask		= ivntb_db_vector_mask,
	.db_read		= ivntb_db_read,
	.db_clear		= ivntb_db_clear,
	.db_read_mask		= ivntb_db_read_mask,
	.db_set_mask		= ivntb_db_set_mask,
	.db_clear_mask		= ivntb_db_clear_mask,
	.peer_db_set		= ivntb_peer_db_set,
	.spad_count		= ivntb_spad_count,
	.spad_read		= ivntb_spad_read,
	.spad_write		= ivntb_spad_write,
	.peer_spad_read		= ivntb_peer_spad_read,
	.peer_spad_write	= ivntb_peer_spad_write,
};

/* ---- inbound window memory as the PCI device's coherent memory ---- */

#if IVNTB_HAVE_DMA_OPS
static struct ivntb_dev *dev_to_iv(struct device *dev)
{
	return pci_get_drvdata(to_pci_dev(dev));
}

static void *ivntb_dma_alloc(struct device *dev, size_t size,
			     dma_addr_t *dma_handle, gfp_t gfp,
			     unsigned long attrs)
{
	struct ivntb_dev *iv = dev_to_iv(dev);
	unsigned long flags;
	void *virt = NULL;
	int w;

	if (!iv)
		return NULL;
	spin_lock_irqsave(&iv->lock, flags);
	/* Window 1 is the smaller: try it first. */
	for (w = IVNTB_MWS - 1; w >= 0; w--)
		if (!iv->mw_busy[w] && size <= ivntb_mw_len(iv, w))
			break;
	if (w >= 0) {
		iv->mw_busy[w] = true;
		virt = iv->mw_virt[w];
		*dma_handle = iv->shm_phys + ivntb_mw_offset(iv, iv->port, w);
	}
	spin_unlock_irqrestore(&iv->lock, flags);
	if (virt)
		memset(virt, 0, size);
	return virt;
}

static void ivntb_dma_free(struct device *dev, size_t size, void *vaddr,
			   dma_addr_t dma_handle, unsigned long attrs)
{
	struct ivntb_dev *iv = dev_to_iv(dev);
	unsigned long flags;
	int w;

	if (!iv)
		return;
	spin_lock_irqsave(&iv->lock, flags);
	for (w = 0; w < IVNTB_MWS; w++) {
		if (iv->mw_virt[w] == vaddr) {
			iv->mw_busy[w] = false;
			break;
		}
	}
	spin_unlock_irqrestore(&iv->lock, flags);
	WARN_ON(w == IVNTB_MWS);
}

/* Only window memory is reachable: streaming mappings of RAM are refused. */
static dma_addr_t ivntb_dma_map_page(struct device *dev, struct page *page,
				     unsigned long offset, size_t size,
				     enum dma_data_direction dir,
				     unsigned long attrs)
{
	return DMA_MAPPING_ERROR;
}

static int ivntb_dma_map_sg(struct device *dev, struct scatterlist *sg,
			    int nents, enum dma_data_direction dir,
			    unsigned long attrs)
{
	return -EIO;
}

static const struct dma_map_ops ivntb_dma_ops = {
	.alloc		= ivntb_dma_alloc,
	.free		= ivntb_dma_free,
	.map_page	= ivntb_dma_map_page,
	.map_sg		= ivntb_dma_map_sg,
};

static void ivntb_set_dma_ops(struct ivntb_dev *iv)
{
	iv->old_dma_ops = iv->pdev->dev.dma_ops;
	set_dma_ops(&iv->pdev->dev, &ivntb_dma_ops);
	iv->dma_ops_set = true;
}

static void ivntb_restore_dma_ops(struct ivntb_dev *iv)
{
	if (iv->dma_ops_set)
		set_dma_ops(&iv->pdev->dev, iv->old_dma_ops);
}
#else
static void ivntb_set_dma_ops(struct ivntb_dev *iv)
{
	dev_warn(&iv->pdev->dev,
		 "no per-device DMA operations in this kernel: no inbound memory windows\n");
}

static void ivntb_restore_dma_ops(struct ivntb_dev *iv)
{
}
#endif

/* ---- probe and remove ---- */

static int ivntb_map(struct ivntb_dev *iv)
{
	struct pci_dev *pdev = iv->pdev;
	resource_size_t len = pci_resource_len(pdev, 2);
	resource_size_t regs;
	int w;

	if (len < 4 * IVNTB_MW_MIN || len > 4 * (resource_size_t)IVNTB_MW_MAX ||
	    !is_power_of_2(len)) {
		dev_info(&pdev->dev,
			 "shared memory of %pa bytes is no emulated NTB (4 * %u to 4 * %u MiB)\n",
			 &len, IVNTB_MW_MIN / SZ_1M, IVNTB_MW_MAX / SZ_1M);
		return -ENODEV;
	}
	iv->mw_unit = len / 4;
	iv->shm_phys = pci_resource_start(pdev, 2);
	regs = 3 * iv->mw_unit;
	iv->hdr = devm_memremap(&pdev->dev, iv->shm_phys + regs,
				IVNTB_REG_STRIDE * (1 + IVNTB_PORTS),
				MEMREMAP_WB);
	if (IS_ERR(iv->hdr))
		return PTR_ERR(iv->hdr);
	iv->regs = (void *)iv->hdr + IVNTB_REG_STRIDE * (1 + iv->port);
	iv->pregs = (void *)iv->hdr + IVNTB_REG_STRIDE * (1 + iv->peer);
	for (w = 0; w < IVNTB_MWS; w++) {
		iv->mw_virt[w] = devm_memremap(&pdev->dev, iv->shm_phys +
					       ivntb_mw_offset(iv, iv->port, w),
					       ivntb_mw_len(iv, w), MEMREMAP_WB);
		if (IS_ERR(iv->mw_virt[w]))
			return PTR_ERR(iv->mw_virt[w]);
	}

	/* The first port up writes the header; both check it. */
	if (cmpxchg(&iv->hdr->magic, 0, IVNTB_MAGIC) == 0) {
		WRITE_ONCE(iv->hdr->version, IVNTB_VERSION);
		WRITE_ONCE(iv->hdr->mw_unit, iv->mw_unit);
	} else if (READ_ONCE(iv->hdr->magic) != IVNTB_MAGIC) {
		dev_info(&pdev->dev, "shared memory not laid out for an emulated NTB\n");
		return -ENODEV;
	}
	return 0;
}

static int ivntb_irqs(struct ivntb_dev *iv)
{
	struct pci_dev *pdev = iv->pdev;
	int err;

	err = pci_alloc_irq_vectors(pdev, IVNTB_VECS, IVNTB_VECS, PCI_IRQ_MSIX);
	if (err < 0) {
		dev_err(&pdev->dev, "needs %d MSI-X vectors (ivshmem-doorbell vectors=%d)\n",
			IVNTB_VECS, IVNTB_VECS);
		return err;
	}
	err = request_irq(pci_irq_vector(pdev, IVNTB_VEC_DB), ivntb_db_irq, 0,
			  "ntb_ivshmem-db", iv);
	if (err)
		goto free_vectors;
	err = request_irq(pci_irq_vector(pdev, IVNTB_VEC_LINK), ivntb_link_irq,
			  0, "ntb_ivshmem-link", iv);
	if (err)
		goto free_db;
	return 0;

free_db:
	free_irq(pci_irq_vector(pdev, IVNTB_VEC_DB), iv);
free_vectors:
	pci_free_irq_vectors(pdev);
	return err;
}

static void ivntb_free_irqs(struct ivntb_dev *iv)
{
	free_irq(pci_irq_vector(iv->pdev, IVNTB_VEC_LINK), iv);
	free_irq(pci_irq_vector(iv->pdev, IVNTB_VEC_DB), iv);
	pci_free_irq_vectors(iv->pdev);
}

static int ivntb_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct ivntb_dev *iv;
	int err;

	/* Only ivshmem-doorbell has BAR1 (MSI-X) and a peer id. */
	if (!pci_resource_len(pdev, 1))
		return -ENODEV;

	iv = devm_kzalloc(&pdev->dev, sizeof(*iv), GFP_KERNEL);
	if (!iv)
		return -ENOMEM;
	iv->pdev = pdev;
	spin_lock_init(&iv->lock);
	INIT_DELAYED_WORK(&iv->poll, ivntb_poll_work);

	err = pcim_enable_device(pdev);
	if (err)
		return err;
	err = pcim_iomap_regions(pdev, BIT(0), KBUILD_MODNAME);
	if (err)
		return err;
	iv->mmio = pcim_iomap_table(pdev)[0];
	iv->port = ioread32(iv->mmio + IVSHMEM_IVPOSITION);
	if (iv->port < 0 || iv->port >= IVNTB_PORTS) {
		dev_info(&pdev->dev, "peer id %d is no NTB port (0 or 1)\n",
			 iv->port);
		return -ENODEV;
	}
	iv->peer = 1 - iv->port;
	err = ivntb_map(iv);
	if (err)
		return err;
	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (err)
		return err;
	pci_set_master(pdev);

	/* A previous life's state is gone; the link starts disabled. */
	WRITE_ONCE(iv->regs->status, 0);
	atomic64_set(&iv->regs->db, 0);
	memset(iv->regs->spad, 0, sizeof(iv->regs->spad));
	iv->peer_hb = READ_ONCE(iv->pregs->heartbeat);
	iv->peer_hb_time = jiffies;

	pci_set_drvdata(pdev, iv);
	err = ivntb_irqs(iv);
	if (err)
		return err;
	ivntb_set_dma_ops(iv);
	schedule_delayed_work(&iv->poll, 0);

	iv->ntb.pdev = pdev;
	iv->ntb.topo = iv->port == 0 ? NTB_TOPO_B2B_USD : NTB_TOPO_B2B_DSD;
	iv->ntb.ops = &ivntb_ops;
	err = ntb_register_device(&iv->ntb);
	if (err)
		goto stop;
	dev_info(&pdev->dev, "emulated NTB port %d: windows of %llu and %llu MiB at %pa\n",
		 iv->port, (u64)ivntb_mw_len(iv, 0) >> 20,
		 (u64)ivntb_mw_len(iv, 1) >> 20, &iv->shm_phys);
	return 0;

stop:
	WRITE_ONCE(iv->stopping, true);
	cancel_delayed_work_sync(&iv->poll);
	ivntb_restore_dma_ops(iv);
	ivntb_free_irqs(iv);
	return err;
}

static void ivntb_remove(struct pci_dev *pdev)
{
	struct ivntb_dev *iv = pci_get_drvdata(pdev);

	/* The clients go first, and give their window memory back. */
	ntb_unregister_device(&iv->ntb);
	WRITE_ONCE(iv->stopping, true);
	ivntb_free_irqs(iv);
	cancel_delayed_work_sync(&iv->poll);
	WRITE_ONCE(iv->regs->status, 0);
	ivntb_ring(iv, IVNTB_VEC_LINK);
	ivntb_restore_dma_ops(iv);
}

static const struct pci_device_id ivntb_ids[] = {
	{ PCI_DEVICE(0x1af4, 0x1110) },	/* QEMU ivshmem */
	{ }
};
MODULE_DEVICE_TABLE(pci, ivntb_ids);

static struct pci_driver ivntb_driver = {
	.name		= KBUILD_MODNAME,
	.id_table	= ivntb_ids,
	.probe		= ivntb_probe,
	.remove		= ivntb_remove,
};
module_pci_driver(ivntb_driver);

MODULE_DESCRIPTION("Emulated NTB over QEMU ivshmem-doorbell devices");
MODULE_LICENSE("GPL");
