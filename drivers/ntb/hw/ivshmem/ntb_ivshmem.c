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
 * Vector 1 says "my link state changed".
 *
 * Link: up while both ports have it enabled, each sees the other's
 * heartbeat (a counter that a delayed work advances every poll_ms; a peer
 * whose heartbeat stands still for link_timeout_ms, and for as many of our
 * own polls, is lost) and each has acked the other's current link epoch.
 * A port whose link goes down for a reason of its own (disabled, peer
 * lost) starts a new epoch, so that the peer's link goes down as well: a
 * link drop is seen by both ports, as on a real NTB, even when only one
 * of them saw the peer stall (two VMs under TCG on a loaded host).  Acks
 * wait 2 poll periods after a port's own link change, so that its clients
 * have cleaned up (ntb_transport zeroes its scratchpads on link down)
 * before the peer sees the link up again and writes them. *
 * With full_reach=1 each port has a third memory window, index 2: the
 * "large BAR" some NTB hardware offers, reaching all of the peer's RAM.
 * It needs each VM's RAM to be a shared memory-backend-file and the other
 * VM to have an ivshmem-plain device on that file (qemu/ntb-vm.sh -2 -R),
 * whose BAR2 then shows the peer's guest-physical address P at offset P
 * (q35 puts a guest of up to 2 GiB entirely below the PCI hole, at its
 * file offset).  That BAR2 is the outbound window 2; the inbound window 2
 * is all of our own RAM, translated only at address 0 with the RAM's size
 * (mw_get_align() gives it), which is what the peer's BAR2 shows.  Which
 * ivshmem-plain device is the peer's RAM is not guessed: each port keeps
 * a signature (a magic, its port number and a random 64-bit value) in a
 * page of its RAM and publishes that page's address and the value in its
 * registers; the peer takes the one ivshmem-plain device that shows that
 * signature at that address (none or several: no window 2, link down).
 *
 * The shared memory holds no secrets and the peer may write anything in it:
 * the driver only uses values read from it as data, never as indices or
 * sizes.  The emulation does not isolate the ports as an NTB with an IOMMU
 * would: both see the whole memory file.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/dma-map-ops.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/ioport.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/ntb.h>
#include <linux/pci.h>
#include <linux/random.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#define IVNTB_PORTS		2
#define IVNTB_MWS		2	/* the windows backed by the memory file */
#define IVNTB_MW_FULL		2	/* index of the full-reach window */
#define IVNTB_SPADS		16
#define IVNTB_DB_BITS		32
#define IVNTB_DB_VALID		GENMASK_ULL(IVNTB_DB_BITS - 1, 0)
#define IVNTB_MAGIC		0x4e544269	/* "iBTN" */
#define IVNTB_VERSION		1
#define IVNTB_MW_MIN		SZ_4M
#define IVNTB_MW_MAX		SZ_256M
#define IVNTB_REG_STRIDE	SZ_4K
#define IVNTB_RAM_MAGIC		0x4d41525642544e49ULL	/* "INTBVRAM" */

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

static bool full_reach;
module_param(full_reach, bool, 0444);
MODULE_PARM_DESC(full_reach,
		 "Memory window 2 over all of the peer's RAM, through the ivshmem-plain device on it (default off)");

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
	u64 ram_sig_addr;	/* full_reach: our RAM signature's address */
	u64 ram_sig_value;	/* ... and its value; 0: none */
	u32 epoch;		/* this port's link epoch */
	u32 ack;		/* the peer's epoch this port has taken */
};

/* A port's signature, in a page of its RAM (full_reach) */
struct ivntb_ram_sig {
	u64 magic;		/* IVNTB_RAM_MAGIC */
	u64 value;		/* random, non-zero, also in the registers */
	u32 port;
	u32 reserved;
};

/**
 * struct ivntb_ram - the peer's RAM, the full-reach window (full_reach)
 * @sig: the page of our RAM holding our signature, or NULL
 * @size: our RAM's size: the inbound full-reach window's
 * @pdev: the ivshmem-plain device found showing the peer's signature, or
 *	NULL; kept (region requested, device enabled) until remove
 * @phys: its BAR2, the outbound full-reach window
 * @len: its size
 * @ok: @pdev shows the signature the peer publishes now
 * @tried_addr: the peer's signature address last looked for ...
 * @tried_value: ... its value ...
 * @tried_time: ... and when
 *
 * Written by the poll work only; @pdev, @phys and @len, once set, do not
 * change until remove, and are read under ivntb_dev.lock.
 */
struct ivntb_ram {
	struct page *sig;
	resource_size_t size;
	struct pci_dev *pdev;
	phys_addr_t phys;
	resource_size_t len;
	bool ok;
	u64 tried_addr;
	u64 tried_value;
	unsigned long tried_time;
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
	spinlock_t lock;		/* the mw_* fields, db_mask, ram.pdev */
	u64 db_mask;
	bool mw_full_trans;		/* window 2's translation set */
	struct ivntb_ram ram;		/* full_reach only */

	const struct dma_map_ops *old_dma_ops;
	bool dma_ops_set;

	struct delayed_work poll;
	bool enabled;			/* ntb_link_enable() called */
	/* The rest is the poll work's, read elsewhere with READ_ONCE(). */
	bool en_seen;			/* enabled, as the poll last saw it */
	u32 peer_hb;			/* peer heartbeat last seen ... */
	unsigned long peer_hb_time;	/* ... and when it last moved ... */
	unsigned int peer_still;	/* ... and our polls since */
	bool peer_alive;
	u32 epoch;			/* ours, as in regs->epoch */
	u32 ack;			/* as in regs->ack */
	unsigned long quiet_until;	/* no ack before: clients clean up */
	bool link_up;			/* state of the last link event */
	bool stopping;
	bool registered;		/* ntb_register_device() done */

	struct dentry *dbgfs;		/* debugfs: regs */
	atomic_t irq_db;		/* interrupts counted, for regs */
	atomic_t irq_link;
	atomic_t poll_db;		/* doorbell events raised by the poll */
};

static struct dentry *ivntb_dbgfs_root;

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

/*
 * Whether the link is up, from the registers of both ports: so both ports
 * see it come up at the same moment (ntb_perf drops a command that comes
 * in while its own side still says "down").  Not before our own quiet
 * time after a change (enable included) is over, so that a client's own
 * link-down work, queued on the event that said "down" just before, has
 * run (ntb_transport's cancels its link work if it runs later).
 */
static bool ivntb_link_check(struct ivntb_dev *iv)
{
	struct ivntb_port_regs *pr = iv->pregs;
	bool en = READ_ONCE(iv->enabled);

	return en && READ_ONCE(iv->en_seen) == en && READ_ONCE(iv->peer_alive) &&
	       (READ_ONCE(pr->status) & IVNTB_ST_ENABLED) &&
	       (!full_reach || READ_ONCE(iv->ram.ok)) &&
	       READ_ONCE(iv->regs->ack) == READ_ONCE(pr->epoch) &&
	       READ_ONCE(pr->ack) == READ_ONCE(iv->regs->epoch) &&
	       time_after_eq(jiffies, READ_ONCE(iv->quiet_until));
}

static u64 ivntb_link_is_up(struct ntb_dev *ntb, enum ntb_speed *speed,
			    enum ntb_width *width)
{
	struct ivntb_dev *iv = ntb_to_iv(ntb);
	bool up = ivntb_link_check(iv);

	if (speed)
		*speed = up ? NTB_SPEED_GEN3 : NTB_SPEED_NONE;
	if (width)
		*width = up ? NTB_WIDTH_4 : NTB_WIDTH_NONE;
	return up ? BIT_ULL(0) : 0;
}

static u64 ivntb_db_read(struct ntb_dev *ntb);
static u64 ivntb_db_read_mask(struct ntb_dev *ntb);

/* ---- the full-reach window: finding the peer's RAM ---- */

static int ivntb_ram_end(struct resource *res, void *arg)
{
	u64 *end = arg;

	*end = max_t(u64, *end, res->end + 1);
	return 0;
}

/*
 * Our RAM as the peer's ivshmem-plain device shows it: from 0 to the end
 * of the highest System RAM range, rounded up to a power of two (a BAR's
 * size: ntb-vm.sh -R gives the guests power-of-two RAM).  0 when RAM
 * reaches above 2 GiB: q35 may then put some of it above 4 GiB, where
 * its address is not its file offset.
 */
static resource_size_t ivntb_ram_size(void)
{
	u64 end = 0;

	walk_iomem_res_desc(IORES_DESC_NONE,
			    IORESOURCE_SYSTEM_RAM | IORESOURCE_BUSY, 0, U64_MAX,
			    &end, ivntb_ram_end);
	if (!end || end > SZ_2G)
		return 0;
	return roundup_pow_of_two(end);
}

/* Put our signature in a page of our RAM and say where it is. */
static int ivntb_ram_publish(struct ivntb_dev *iv)
{
	struct ivntb_ram_sig *sig;

	iv->ram.size = ivntb_ram_size();
	if (!iv->ram.size) {
		dev_err(&iv->pdev->dev,
			"full_reach needs all RAM below 2 GiB, at its file offset\n");
		return -EINVAL;
	}
	iv->ram.sig = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!iv->ram.sig)
		return -ENOMEM;
	sig = page_address(iv->ram.sig);
	sig->magic = IVNTB_RAM_MAGIC;
	sig->value = get_random_u64() | 1;
	sig->port = iv->port;
	/* The signature, then the registers that point at it. */
	smp_wmb();
	WRITE_ONCE(iv->regs->ram_sig_addr, page_to_phys(iv->ram.sig));
	WRITE_ONCE(iv->regs->ram_sig_value, sig->value);
	return 0;
}

static void ivntb_ram_release(struct pci_dev *pdev)
{
	pci_disable_device(pdev);
	pci_release_region(pdev, 2);
	pci_dev_put(pdev);
}

static void ivntb_ram_unpublish(struct ivntb_dev *iv)
{
	WRITE_ONCE(iv->regs->ram_sig_value, 0);
	WRITE_ONCE(iv->regs->ram_sig_addr, 0);
	if (iv->ram.sig)
		__free_page(iv->ram.sig);
	iv->ram.sig = NULL;
	if (iv->ram.pdev)
		ivntb_ram_release(iv->ram.pdev);
	iv->ram.pdev = NULL;
}

/*
 * Whether @pdev's BAR2 shows, at @addr, the signature of @port with
 * @value.  @addr is the peer's: checked against the BAR's size.
 */
static bool ivntb_ram_shows(struct pci_dev *pdev, int port, u64 addr,
			    u64 value)
{
	resource_size_t len = pci_resource_len(pdev, 2);
	struct ivntb_ram_sig sig;
	void __iomem *p;

	if (!IS_ALIGNED(addr, sizeof(u64)) || len < sizeof(sig) ||
	    addr > len - sizeof(sig))
		return false;
	p = pci_iomap_range(pdev, 2, addr, sizeof(sig));
	if (!p)
		return false;
	memcpy_fromio(&sig, p, sizeof(sig));
	pci_iounmap(pdev, p);
	return sig.magic == IVNTB_RAM_MAGIC && sig.value == value &&
	       sig.port == port;
}

/*
 * The one ivshmem-plain device (no BAR1) not taken by another driver that
 * shows the peer's signature, claimed (its BAR2 region requested, the
 * device enabled, a reference held); NULL if none or several do.
 */
static struct pci_dev *ivntb_ram_find(struct ivntb_dev *iv, u64 addr,
				      u64 value)
{
	struct pci_dev *pdev = NULL, *found = NULL;
	int seen = 0;

	while ((pdev = pci_get_device(PCI_VENDOR_ID_REDHAT_QUMRANET, 0x1110,
				      pdev))) {
		if (pci_resource_len(pdev, 1) ||
		    !(pci_resource_flags(pdev, 2) & IORESOURCE_MEM) ||
		    pci_request_region(pdev, 2, KBUILD_MODNAME " peer RAM"))
			continue;
		if (!pci_enable_device_mem(pdev)) {
			if (ivntb_ram_shows(pdev, iv->peer, addr, value) &&
			    !seen++) {
				found = pci_dev_get(pdev);
				continue;
			}
			pci_disable_device(pdev);
		}
		pci_release_region(pdev, 2);
	}
	if (found && seen != 1) {
		ivntb_ram_release(found);
		found = NULL;
	}
	return found;
}

/*
 * Poll work, full_reach: find the peer's RAM once it publishes its
 * signature, then check that it still shows the one published (a peer
 * that restarted publishes a new one).  A signature not found is looked
 * for again once a second.
 */
static void ivntb_ram_poll(struct ivntb_dev *iv)
{
	struct ivntb_ram *ram = &iv->ram;
	u64 addr = READ_ONCE(iv->pregs->ram_sig_addr);
	u64 value = READ_ONCE(iv->pregs->ram_sig_value);
	bool fresh = addr != ram->tried_addr || value != ram->tried_value;
	struct pci_dev *pdev;
	unsigned long flags;

	if (!value) {
		WRITE_ONCE(ram->ok, false);
		return;
	}
	if (!fresh && (ram->ok ||
		       time_before(jiffies, ram->tried_time + HZ)))
		return;
	ram->tried_addr = addr;
	ram->tried_value = value;
	ram->tried_time = jiffies;
	if (ram->pdev) {
		WRITE_ONCE(ram->ok, ivntb_ram_shows(ram->pdev, iv->peer, addr,
						    value));
		return;
	}
	pdev = ivntb_ram_find(iv, addr, value);
	if (!pdev) {
		if (fresh)
			dev_info(&iv->pdev->dev,
				 "full_reach: no single ivshmem-plain device shows the peer's RAM signature\n");
		return;
	}
	spin_lock_irqsave(&iv->lock, flags);
	ram->pdev = pdev;
	ram->phys = pci_resource_start(pdev, 2);
	ram->len = pci_resource_len(pdev, 2);
	spin_unlock_irqrestore(&iv->lock, flags);
	WRITE_ONCE(ram->ok, true);
	dev_info(&iv->pdev->dev,
		 "full-reach window: the peer's RAM is %s (%llu MiB)\n",
		 pci_name(pdev), (u64)ram->len >> 20);
}

/*
 * Our heartbeat, and the peer's: it is lost when its heartbeat stood still
 * for link_timeout_ms and for as many of our polls (if this VM was not
 * scheduled for a while, the peer was not late).
 */
static void ivntb_heartbeat(struct ivntb_dev *iv)
{
	unsigned int polls = max(1U, link_timeout_ms / max(1U, poll_ms));
	u32 hb;

	WRITE_ONCE(iv->regs->heartbeat, iv->regs->heartbeat + 1);
	hb = READ_ONCE(iv->pregs->heartbeat);
	if (hb != iv->peer_hb) {
		iv->peer_hb = hb;
		iv->peer_hb_time = jiffies;
		iv->peer_still = 0;
		WRITE_ONCE(iv->peer_alive, true);
		return;
	}
	if (iv->peer_still < polls)
		iv->peer_still++;
	if (iv->peer_still >= polls &&
	    time_after(jiffies, iv->peer_hb_time +
		       msecs_to_jiffies(link_timeout_ms)))
		WRITE_ONCE(iv->peer_alive, false);
}

/* A new link epoch of ours: the peer must take it before the link is up. */
static void ivntb_new_epoch(struct ivntb_dev *iv)
{
	iv->epoch++;
	WRITE_ONCE(iv->regs->epoch, iv->epoch);
	WRITE_ONCE(iv->quiet_until, jiffies + msecs_to_jiffies(2 * poll_ms));
	ivntb_ring(iv, IVNTB_VEC_LINK);
}

/*
 * The link state machine (see "Link" at the top).  The link is up while
 * both ports are enabled, each sees the other's heartbeat, and each has
 * taken (acked) the other's current epoch.  A port whose link goes down
 * for a reason of its own starts a new epoch, so the peer's link goes down
 * too, even if the peer saw nothing wrong; a port acks the peer's new
 * epoch only when its own link is down and 2 poll periods after its last
 * change, so that its clients' link-down work (ntb_transport clears its
 * scratchpads) is done before the peer can see the link up again.
 */
static void ivntb_link_poll(struct ivntb_dev *iv)
{
	struct ivntb_port_regs *pr = iv->pregs;
	u32 pepoch = READ_ONCE(pr->epoch), pack = READ_ONCE(pr->ack);
	bool en = READ_ONCE(iv->enabled);
	bool acked, up;

	if (en != iv->en_seen) {
		WRITE_ONCE(iv->en_seen, en);
		WRITE_ONCE(iv->regs->status, en ? IVNTB_ST_ENABLED : 0);
		ivntb_new_epoch(iv);
	}
	acked = iv->ack == pepoch && pack == iv->epoch;
	up = ivntb_link_check(iv);
	if (iv->link_up && !up) {
		if (acked)	/* our own reason: the peer must follow */
			ivntb_new_epoch(iv);
		WRITE_ONCE(iv->quiet_until,
			   jiffies + msecs_to_jiffies(2 * poll_ms));
	} else if (!iv->link_up && iv->ack != pepoch &&
		   time_after_eq(jiffies, iv->quiet_until)) {
		iv->ack = pepoch;
		WRITE_ONCE(iv->regs->ack, pepoch);
		ivntb_ring(iv, IVNTB_VEC_LINK);
		up = ivntb_link_check(iv);
	}
	if (up != iv->link_up) {
		WRITE_ONCE(iv->link_up, up);
		dev_info(&iv->pdev->dev, "link %s\n", up ? "up" : "down");
		ntb_link_event(&iv->ntb);
	}
}

/* Look at the peer and report a change of the link state. */
static void ivntb_poll_work(struct work_struct *work)
{
	struct ivntb_dev *iv = container_of(to_delayed_work(work),
					    struct ivntb_dev, poll);

	ivntb_heartbeat(iv);
	if (full_reach)
		ivntb_ram_poll(iv);
	ivntb_link_poll(iv);
	/*
	 * A doorbell whose interrupt was lost is still found here (an
	 * interrupt rung before the handler was set up, or lost by QEMU).
	 */
	if (READ_ONCE(iv->registered) &&
	    (ivntb_db_read(&iv->ntb) & ~ivntb_db_read_mask(&iv->ntb))) {
		atomic_inc(&iv->poll_db);
		ntb_db_event(&iv->ntb, 0);
	}
	if (!READ_ONCE(iv->stopping))
		schedule_delayed_work(&iv->poll, msecs_to_jiffies(poll_ms));
}

/*
 * The poll work changes the link, at once; a disabled port also clears
 * its status bit here, so that the peer's link_is_up() says "down" as
 * soon as ours does (ntb_test.sh reads the peer's link right after its
 * own went down).
 */
static void ivntb_set_enabled(struct ivntb_dev *iv, bool on)
{
	WRITE_ONCE(iv->enabled, on);
	if (!on)
		WRITE_ONCE(iv->regs->status, 0);
	if (!READ_ONCE(iv->stopping))
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
	if (pidx != 0)
		return -EINVAL;
	return full_reach ? IVNTB_MWS + 1 : IVNTB_MWS;
}

/* Window 2 (full_reach): all of our RAM, at 0, as one piece. */
static int ivntb_mw_full_get_align(struct ivntb_dev *iv,
				   resource_size_t *addr_align,
				   resource_size_t *size_align,
				   resource_size_t *size_max)
{
	if (addr_align)
		*addr_align = iv->ram.size;
	if (size_align)
		*size_align = iv->ram.size;
	if (size_max)
		*size_max = iv->ram.size;
	return 0;
}

static int ivntb_mw_full_set_trans(struct ivntb_dev *iv, dma_addr_t addr,
				   resource_size_t size)
{
	unsigned long flags;

	if (size && (addr || size != iv->ram.size)) {
		dev_dbg(&iv->pdev->dev,
			"the full-reach window translates only 0+%pa, not %pad+%pa\n",
			&iv->ram.size, &addr, &size);
		return -EINVAL;
	}
	spin_lock_irqsave(&iv->lock, flags);
	iv->mw_full_trans = size != 0;
	spin_unlock_irqrestore(&iv->lock, flags);
	return 0;
}

static int ivntb_mw_get_align(struct ntb_dev *ntb, int pidx, int widx,
			      resource_size_t *addr_align,
			      resource_size_t *size_align,
			      resource_size_t *size_max)
{
	struct ivntb_dev *iv = ntb_to_iv(ntb);

	if (full_reach && pidx == 0 && widx == IVNTB_MW_FULL)
		return ivntb_mw_full_get_align(iv, addr_align, size_align,
					       size_max);
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

	if (full_reach && pidx == 0 && widx == IVNTB_MW_FULL)
		return ivntb_mw_full_set_trans(iv, addr, size);
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
	return full_reach ? IVNTB_MWS + 1 : IVNTB_MWS;
}

/* The outbound full-reach window: -ENODEV until the peer's RAM is found. */
static int ivntb_peer_mw_full_get_addr(struct ivntb_dev *iv,
				       phys_addr_t *base,
				       resource_size_t *size)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&iv->lock, flags);
	if (!iv->ram.pdev) {
		err = -ENODEV;
	} else {
		if (base)
			*base = iv->ram.phys;
		if (size)
			*size = iv->ram.len;
	}
	spin_unlock_irqrestore(&iv->lock, flags);
	return err;
}

static int ivntb_peer_mw_get_addr(struct ntb_dev *ntb, int widx,
				  phys_addr_t *base, resource_size_t *size)
{
	struct ivntb_dev *iv = ntb_to_iv(ntb);

	if (full_reach && widx == IVNTB_MW_FULL)
		return ivntb_peer_mw_full_get_addr(iv, base, size);
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
	/*
	 * As hardware would, bits that were waiting behind the mask fire:
	 * from the poll work, not here, since callers hold their own locks
	 * (ntb_pingpong's timer holds pp->lock, which its link event takes
	 * under the core's ctx_lock: lockdep saw the cycle).
	 */
	if (pending && !READ_ONCE(iv->stopping))
		mod_delayed_work(system_wq, &iv->poll, 0);
	return 0;
}

static int ivntb_peer_db_set(struct ntb_dev *ntb, u64 db_bits)
{
	struct ivntb_dev *iv = ntb_to_iv(ntb);

	if (db_bits & ~IVNTB_DB_VALID)
		return -EINVAL;
	/* The client's writes (windows are write-combined) before the bit. */
	wmb();
	atomic64_or(db_bits, &iv->pregs->db);
	ivntb_ring(iv, IVNTB_VEC_DB);
	return 0;
}

static irqreturn_t ivntb_db_irq(int irq, void *data)
{
	struct ivntb_dev *iv = data;

	atomic_inc(&iv->irq_db);
	/* Before registration the NTB core's doorbell path is not set up. */
	if (READ_ONCE(iv->registered) &&
	    (ivntb_db_read(&iv->ntb) & ~ivntb_db_read_mask(&iv->ntb)))
		ntb_db_event(&iv->ntb, 0);
	return IRQ_HANDLED;
}

static irqreturn_t ivntb_link_irq(int irq, void *data)
{
	struct ivntb_dev *iv = data;

	atomic_inc(&iv->irq_link);
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

/* ---- debugfs: the registers as this port sees them ---- */

static void ivntb_show_regs(struct seq_file *m, const char *who,
			    struct ivntb_port_regs *r)
{
	int i;

	seq_printf(m, "%s: status %#x heartbeat %u db %#llx spad", who,
		   READ_ONCE(r->status), READ_ONCE(r->heartbeat),
		   (u64)atomic64_read(&r->db));
	for (i = 0; i < IVNTB_SPADS; i++)
		seq_printf(m, " %#x", READ_ONCE(r->spad[i]));
	seq_putc(m, '\n');
}

static int ivntb_regs_show(struct seq_file *m, void *unused)
{
	struct ivntb_dev *iv = m->private;

	seq_printf(m, "port %d enabled %d peer_alive %d link %d epoch %#x ack %#x db_mask %#llx\n",
		   iv->port, READ_ONCE(iv->enabled), READ_ONCE(iv->peer_alive),
		   READ_ONCE(iv->link_up), READ_ONCE(iv->regs->epoch),
		   READ_ONCE(iv->regs->ack), ivntb_db_read_mask(&iv->ntb));
	seq_printf(m, "irq db %d link %d; poll db events %d\n",
		   atomic_read(&iv->irq_db), atomic_read(&iv->irq_link),
		   atomic_read(&iv->poll_db));
	ivntb_show_regs(m, "mine", iv->regs);
	ivntb_show_regs(m, "peer", iv->pregs);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ivntb_regs);

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
	WRITE_ONCE(iv->regs->ram_sig_value, 0);
	WRITE_ONCE(iv->regs->ram_sig_addr, 0);
	iv->epoch = get_random_u32();
	WRITE_ONCE(iv->regs->epoch, iv->epoch);
	WRITE_ONCE(iv->regs->ack, 0);
	iv->peer_hb = READ_ONCE(iv->pregs->heartbeat);
	iv->peer_hb_time = jiffies;
	iv->quiet_until = jiffies;
	if (full_reach) {
		err = ivntb_ram_publish(iv);
		if (err)
			return err;
	}

	pci_set_drvdata(pdev, iv);
	err = ivntb_irqs(iv);
	if (err)
		goto unpublish;
	ivntb_set_dma_ops(iv);
	schedule_delayed_work(&iv->poll, 0);

	iv->ntb.pdev = pdev;
	iv->ntb.topo = iv->port == 0 ? NTB_TOPO_B2B_USD : NTB_TOPO_B2B_DSD;
	iv->ntb.ops = &ivntb_ops;
	err = ntb_register_device(&iv->ntb);
	if (err)
		goto stop;
	WRITE_ONCE(iv->registered, true);
	iv->dbgfs = debugfs_create_dir(pci_name(pdev), ivntb_dbgfs_root);
	debugfs_create_file("regs", 0400, iv->dbgfs, iv, &ivntb_regs_fops);
	dev_info(&pdev->dev, "emulated NTB port %d: windows of %llu and %llu MiB at %pa\n",
		 iv->port, (u64)ivntb_mw_len(iv, 0) >> 20,
		 (u64)ivntb_mw_len(iv, 1) >> 20, &iv->shm_phys);
	if (full_reach)
		dev_info(&pdev->dev, "full-reach window 2: inbound 0 + %llu MiB, signature at %#llx\n",
			 (u64)iv->ram.size >> 20,
			 (u64)page_to_phys(iv->ram.sig));
	return 0;

stop:
	WRITE_ONCE(iv->stopping, true);
	cancel_delayed_work_sync(&iv->poll);
	ivntb_restore_dma_ops(iv);
	ivntb_free_irqs(iv);
unpublish:
	ivntb_ram_unpublish(iv);
	return err;
}

static void ivntb_remove(struct pci_dev *pdev)
{
	struct ivntb_dev *iv = pci_get_drvdata(pdev);

	debugfs_remove_recursive(iv->dbgfs);
	/* The clients go first, and give their window memory back. */
	ntb_unregister_device(&iv->ntb);
	WRITE_ONCE(iv->stopping, true);
	ivntb_free_irqs(iv);
	cancel_delayed_work_sync(&iv->poll);
	WRITE_ONCE(iv->regs->status, 0);
	ivntb_ring(iv, IVNTB_VEC_LINK);
	ivntb_restore_dma_ops(iv);
	ivntb_ram_unpublish(iv);
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

static int __init ivntb_init(void)
{
	int err;

	ivntb_dbgfs_root = debugfs_create_dir(KBUILD_MODNAME, NULL);
	err = pci_register_driver(&ivntb_driver);
	if (err)
		debugfs_remove_recursive(ivntb_dbgfs_root);
	return err;
}
module_init(ivntb_init);

static void __exit ivntb_exit(void)
{
	pci_unregister_driver(&ivntb_driver);
	debugfs_remove_recursive(ivntb_dbgfs_root);
}
module_exit(ivntb_exit);

MODULE_DESCRIPTION("Emulated NTB over QEMU ivshmem-doorbell devices");
MODULE_LICENSE("GPL");
MODULE_VERSION("0.1.0");
