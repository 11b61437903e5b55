// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF bus for QEMU ivshmem: VMs on one host, each seeing the others'
 * RAM through ivshmem-plain devices (the apertures, as through an NTB
 * window) and sharing one ivshmem-doorbell device per VM.
 *
 * - This node's id is the doorbell device's IVPosition.
 * - The doorbell device's memory, shared by the whole cluster, holds the
 *   bootstrap table: one struct scif_iv_slot per node, written only by
 *   its node (state, generation, heartbeat, where its queue for each
 *   peer lives, and a signature).
 * - An aperture is matched to its node by reading, through it, the
 *   random signature that node published at an address of its own RAM;
 *   PCI enumeration order means nothing.
 * - Doorbells are MSI-X vectors: a node rings peer p on the vector equal
 *   to its own id, so vector j means "node j rang".
 * - Peers are watched by heartbeat: a peer that restarted (new
 *   generation and signature) or left is reported lost; one whose
 *   heartbeat stops for hb_timeout_ms is reported failed (it may only be
 *   stalled, and still write into our memory) and lost once it
 *   restarts, leaves or takes back its queue for us; a peer that beats
 *   again after it was lost is brought up again.
 * - A peer that is up but whose slot no longer matches what it was
 *   brought up with (magic, generation, signature, queue address) is
 *   alive and misbehaving: it is reported failed (scif_hw_node_failed())
 *   and stays so until it restarts or dies, when it is reported lost.
 *   A node is brought up only once its signature is found, through its
 *   aperture, where its slot says.  A peer that takes back the queue it
 *   published for us (qp_addr 0) dropped us: it is reported lost.
 *
 * Everything read from the table or through an aperture is written by
 * another node and checked before use.  The emulation lets every node
 * reach all of every other node's RAM; this driver only ever touches
 * memory its owner published.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/ioport.h>
#include <linux/io.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/pci.h>
#include <linux/random.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "../scif_hw.h"
#include "scif_ivshmem_testhooks.h"

#define IVSHMEM_REG_IVPOSITION	0x08
#define IVSHMEM_REG_DOORBELL	0x0c

#define SCIF_IV_MAX_NODES	16
#define SCIF_IV_SLOT_SIZE	512
#define SCIF_IV_MAGIC		0x4853564946494353ULL	/* "SCIFIVSH" */
#define SCIF_IV_TABLE_MAGIC	0x314c425446494353ULL	/* "SCIFTBL1" */
#define SCIF_IV_SIG_MAGIC	0x3147495346494353ULL	/* "SCIFSIG1" */
#define SCIF_IV_TABLE_VERSION	1
/* The slots follow the table header, a page of its own. */
#define SCIF_IV_SLOTS_OFF	4096
/* A node's RAM layout: at most this many ranges, in this version. */
#define SCIF_IV_MAX_RANGES	8
#define SCIF_IV_LAYOUT_VERSION	1

static unsigned int hb_interval_ms = 100;
module_param(hb_interval_ms, uint, 0444);
MODULE_PARM_DESC(hb_interval_ms, "Milliseconds between heartbeats (default 100)");

static unsigned int hb_timeout_ms = 1000;
module_param(hb_timeout_ms, uint, 0444);
MODULE_PARM_DESC(hb_timeout_ms,
		 "Milliseconds without a heartbeat after which a node is lost (default 1000)");

static unsigned long ram_below_4g = SZ_2G;
module_param(ram_below_4g, ulong, 0444);
MODULE_PARM_DESC(ram_below_4g,
		 "Bytes at the start of this VM's RAM file that sit below 4 GiB when it has RAM above 4 GiB (q35: 2 GiB, the default)");

static char *devices;
module_param(devices, charp, 0444);
MODULE_PARM_DESC(devices,
		 "Comma-separated PCI devices (0000:00:05.0) given to SCIF without proof: a doorbell device whose memory has no SCIF table header gets one");

/**
 * struct scif_iv_header - what makes a doorbell device's memory SCIF's
 * @magic: SCIF_IV_TABLE_MAGIC
 * @version: SCIF_IV_TABLE_VERSION
 * @max_nodes: SCIF_IV_MAX_NODES
 * @slot_size: SCIF_IV_SLOT_SIZE
 * @slots_off: SCIF_IV_SLOTS_OFF
 *
 * Laid down by the ivshmem server (qemu/ivshmem-server.c) when it
 * creates the memory, or by this driver for a device the administrator
 * named; never written otherwise.  A doorbell device without it is left
 * to other drivers, and nothing is written into its memory.
 */
struct scif_iv_header {
	u64 magic;
	u32 version;
	u32 max_nodes;
	u32 slot_size;
	u32 slots_off;
};

/**
 * struct scif_iv_sig - a node's signature, in its own RAM
 * @magic: SCIF_IV_SIG_MAGIC
 * @node: the node's id
 * @generation: the life it belongs to
 * @value: random, drawn anew for each life (its slot's sig_value)
 *
 * Read by the other nodes through their apertures: the aperture that
 * shows, at the address the slot names, a signature naming the slot's
 * node, generation and value, and the only aperture that does, reaches
 * that node.
 */
struct scif_iv_sig {
	u64 magic;
	u32 node;
	u32 generation;
	u64 value;
};

/**
 * struct scif_iv_range - guest-physical addresses backed by a memory file
 * @gpa: the first guest-physical address
 * @offset: where @gpa is in the node's RAM file (and so in its aperture)
 * @len: bytes
 */
struct scif_iv_range {
	u64 gpa;
	u64 offset;
	u64 len;
};

/**
 * struct scif_iv_layout - where a node's RAM is in its memory file
 * @version: SCIF_IV_LAYOUT_VERSION; 0 (a node that publishes none) means
 *	guest-physical address == file offset
 * @nr: ranges in use, 1 to SCIF_IV_MAX_RANGES
 * @range: sorted by @gpa and by @offset, neither overlapping, all page
 *	aligned and inside the file
 *
 * Published by each node in its slot before it goes up, and read by the
 * others, which translate the addresses it gives them (its signature,
 * its queues, its windows) into offsets in their aperture onto it.  On
 * q35 a guest with more than 2 GiB has its RAM above 4 GiB at file
 * offset 2 GiB, not at its address.  See scif_iv_layout_check().
 */
struct scif_iv_layout {
	u32 version;
	u32 nr;
	struct scif_iv_range range[SCIF_IV_MAX_RANGES];
};

/**
 * struct scif_iv_slot - one node's entry in the bootstrap table
 * @magic: SCIF_IV_MAGIC once the slot is valid
 * @generation: incremented each time the node's driver starts
 * @up: non-zero while the node takes part
 * @heartbeat: incremented every hb_interval_ms
 * @sig_addr: address, in the node's RAM, of its signature
 * @sig_value: the signature
 * @qp_addr: where the node's inbound queue for each peer lives, or 0
 * @layout: the node's RAM layout (all addresses above are guest-physical
 *	addresses of the node, translated by it)
 */
struct scif_iv_slot {
	u64 magic;
	u32 generation;
	u32 up;
	u64 heartbeat;
	u64 sig_addr;
	u64 sig_value;
	u64 qp_addr[SCIF_IV_MAX_NODES];
	struct scif_iv_layout layout;
};

static_assert(sizeof(struct scif_iv_slot) <= SCIF_IV_SLOT_SIZE);

struct scif_iv_aperture {
	struct list_head list;
	struct pci_dev *pdev;
	void *va;
	phys_addr_t phys;
	resource_size_t size;
	int node;
};

struct scif_iv;

/**
 * struct scif_iv_peer - what this node knows of another
 * @iv: back pointer, for the doorbell interrupt
 * @ap: the aperture that reaches it, once identified
 * @up: reported up to the core
 * @pending: scif_hw_node_up() said -EAGAIN; our half is published
 * @failed: reported failed to the core (its slot went bad, or it went
 *	silent, while up)
 * @silent: @failed because its heartbeat stopped, not for its slot: once
 *	it beats again, a queue for us other than the one we were given
 *	means that it dropped us (and may already have published the next)
 * @stale: reported lost while its slot may still show the queue it
 *	published for us in that life, which is not to be used again: it
 *	is brought up again only once it took that queue back (qp_addr 0)
 *	or restarted (not set when it was lost for taking it back)
 * @stale_gen: the generation that was reported lost
 * @held: reported lost for dropping us: it is brought up again only once
 *	it has looked at our slot since our queue for it read 0
 *	(scif_iv_held_out()), so that it sees that 0 before our next queue
 * @held_armed: that 0 was seen, and @held_hb read after it
 * @held_hb: its heartbeat, read just after our queue for it read 0
 * @closed: the core closed its aperture (close_aperture): devices may
 *	still hold addresses of its last life; it is not looked for
 *	through the aperture until the core opens it again
 * @generation: the generation it was brought up with
 * @sig_addr: the signature address it was brought up with
 * @sig_value: the signature it was brought up with
 * @qp: the queue address the core was given for it (by peer_qp)
 * @heartbeat: its heartbeat as last read
 * @seen: jiffies when @heartbeat last moved
 * @raw: its slot's layout as it was brought up with (to notice change)
 * @layout: @raw checked against @ap (scif_iv_layout_check()): what every
 *	address it gives is translated with
 *
 * Used by the heartbeat work only (and @ap, @qp by the bus operations
 * while the node is up; @closed is written by close_aperture, read with
 * READ_ONCE).  It is the node's context for the core
 * (scif_hw_node_up()): the bus operations get it back.
 */
struct scif_iv_peer {
	struct scif_iv *iv;
	struct scif_iv_aperture *ap;
	bool up;
	bool pending;
	bool failed;
	bool silent;
	bool stale;
	u32 stale_gen;
	bool held;
	bool held_armed;
	u64 held_hb;
	bool closed;
	u32 generation;
	u64 sig_addr;
	u64 sig_value;
	u64 qp;
	u64 heartbeat;
	unsigned long seen;
	struct scif_iv_layout raw;
	struct scif_iv_layout layout;
};

/*
 * struct scif_iv - the doorbell device, one per node.  @layout (this
 * node's RAM layout, scif_iv_local_layout()) is set at probe and read
 * only after.
 */
struct scif_iv {
	struct scif_hw_dev hw;
	struct pci_dev *pdev;
	void __iomem *regs;
	u8 *table;
	u16 self;
	int nr_vectors;
	struct scif_iv_sig *sig;
	struct scif_iv_layout layout;
	struct delayed_work hb_work;
	struct dentry *debugfs;
	struct scif_iv_peer peers[SCIF_IV_MAX_NODES];
};

/* scif_iv_lock protects scif_iv_apertures, scif_iv_dev, scif_iv_exiting */
static DEFINE_MUTEX(scif_iv_lock);
static LIST_HEAD(scif_iv_apertures);
static struct scif_iv *scif_iv_dev;
static bool scif_iv_exiting;

static struct pci_driver scif_iv_driver;
static void scif_iv_attach_work(struct work_struct *work);
static DECLARE_WORK(scif_iv_attach, scif_iv_attach_work);
static unsigned long scif_iv_attach_last;

static struct scif_iv *to_iv(struct scif_hw_dev *hw)
{
	return container_of(hw, struct scif_iv, hw);
}

static struct scif_iv_slot *scif_iv_slot(struct scif_iv *iv, u16 node)
{
	return (struct scif_iv_slot *)(iv->table + SCIF_IV_SLOTS_OFF +
				       node * SCIF_IV_SLOT_SIZE);
}

/* The node a per-node context stands for. */
static u16 scif_iv_node(struct scif_iv_peer *peer)
{
	return peer - peer->iv->peers;
}

/*
 * Check the layout @raw, a copy of what a peer wrote in its slot (it
 * may change the slot meanwhile), against @size, the size of the file
 * behind the aperture onto it; the checked layout goes to @out.  Version
 * 0, a node that publishes none, stands for guest-physical address ==
 * file offset over the whole file.  Each range must be non-empty and
 * page aligned; the ranges must be sorted by address and by offset,
 * overlap in neither, and lie inside the file.
 */
static bool scif_iv_layout_check(const struct scif_iv_layout *raw, u64 size,
				 struct scif_iv_layout *out)
{
	u64 gpa_end = 0, off_end = 0, e1, e2;
	const struct scif_iv_range *r;
	u32 i;

	memset(out, 0, sizeof(*out));
	out->version = SCIF_IV_LAYOUT_VERSION;
	if (!raw->version) {
		out->nr = 1;
		out->range[0].len = size;
		return size && PAGE_ALIGNED(size);
	}
	if (raw->version != SCIF_IV_LAYOUT_VERSION || !raw->nr ||
	    raw->nr > SCIF_IV_MAX_RANGES)
		return false;
	for (i = 0; i < raw->nr; i++) {
		r = &raw->range[i];
		if (!r->len || !PAGE_ALIGNED(r->gpa | r->offset | r->len) ||
		    check_add_overflow(r->gpa, r->len, &e1) ||
		    check_add_overflow(r->offset, r->len, &e2) ||
		    e2 > size || (i && (r->gpa < gpa_end || r->offset < off_end)))
			return false;
		gpa_end = e1;
		off_end = e2;
		out->range[i] = *r;
	}
	out->nr = raw->nr;
	return true;
}

/*
 * Where, in a node's file, the @len bytes at its address @addr are, by
 * its checked layout @l: in *@off; false if no one range holds them all.
 */
static bool scif_iv_translate(const struct scif_iv_layout *l, u64 addr,
			      u64 len, u64 *off)
{
	const struct scif_iv_range *r;
	u64 end;
	u32 i;

	if (check_add_overflow(addr, len, &end))
		return false;
	for (i = 0; i < l->nr && i < SCIF_IV_MAX_RANGES; i++) {
		r = &l->range[i];
		if (addr >= r->gpa && end <= r->gpa + r->len) {
			*off = addr - r->gpa + r->offset;
			return true;
		}
	}
	return false;
}

/*
 * Whether @peer's aperture reaches @len bytes at its address @addr, and
 * where in the aperture (*@off) they are.
 */
static struct scif_iv_aperture *scif_iv_reach(struct scif_iv_peer *peer,
					      u64 addr, size_t len, u64 *off)
{
	struct scif_iv_aperture *ap = peer->ap;

	if (!ap || !scif_iv_translate(&peer->layout, addr, len, off) ||
	    *off + len > ap->size)
		return NULL;
	return ap;
}

static void *scif_iv_map_peer(struct scif_hw_dev *hw, void *ctx, u64 addr,
			      size_t len)
{
	struct scif_iv_aperture *ap;
	u64 off;

	ap = scif_iv_reach(ctx, addr, len, &off);
	return ap ? ap->va + off : ERR_PTR(-EINVAL);
}

/*
 * The aperture is a BAR onto the peer's RAM file: the peer's address
 * @addr is at BAR + its offset in that file (by the peer's layout).
 */
static int scif_iv_peer_phys(struct scif_hw_dev *hw, void *ctx, u64 addr,
			     size_t len, phys_addr_t *phys)
{
	struct scif_iv_aperture *ap;
	u64 off;

	ap = scif_iv_reach(ctx, addr, len, &off);
	if (!ap)
		return -EINVAL;
	*phys = ap->phys + off;
	return 0;
}

static void scif_iv_unmap_peer(struct scif_hw_dev *hw, void *ctx, void *va,
			       size_t len)
{
}

/*
 * A local device reaches the peer's memory through the aperture BAR, as
 * the CPU does: the range translated as for peer_phys, then mapped for
 * @dev as the MMIO it is (in QEMU's q35 every device sits on the root
 * bus, and QEMU forwards a device's access to another device's
 * RAM-backed BAR).
 */
static int scif_iv_peer_dma_map(struct scif_hw_dev *hw, void *ctx,
				struct device *dev, u64 addr, size_t len,
				enum dma_data_direction dir, dma_addr_t *dma)
{
	phys_addr_t phys;
	int err;

	err = scif_iv_peer_phys(hw, ctx, addr, len, &phys);
	if (err)
		return err;
	return scif_hw_dma_map_phys(dev, phys, len, dir, dma);
}

static void scif_iv_peer_dma_unmap(struct scif_hw_dev *hw, struct device *dev,
				   u64 addr, dma_addr_t dma, size_t len,
				   enum dma_data_direction dir)
{
	dma_unmap_resource(dev, dma, len, dir, 0);
}

/*
 * A peer reaches this node's RAM through its aperture onto our memory
 * file, and translates the physical addresses we give it into offsets
 * in that file by the layout we publish (scif_iv_local_layout()).  So
 * only RAM inside one range of that layout can be given out.
 */
static int scif_iv_map_local(struct scif_hw_dev *hw, void *ctx,
			     phys_addr_t phys, size_t len, u64 *addr)
{
	u64 off;

	if (!len || !scif_iv_translate(&to_iv(hw)->layout, phys, len, &off) ||
	    region_intersects(phys, len, IORESOURCE_SYSTEM_RAM,
			      IORES_DESC_NONE) != REGION_INTERSECTS)
		return -EINVAL;
	*addr = phys;
	return 0;
}

static void scif_iv_unmap_local(struct scif_hw_dev *hw, void *ctx,
				phys_addr_t phys, size_t len, u64 addr)
{
}

static void scif_iv_publish_qp(struct scif_hw_dev *hw, void *ctx, u64 addr)
{
	struct scif_iv *iv = to_iv(hw);

	WRITE_ONCE(scif_iv_slot(iv, iv->self)->qp_addr[scif_iv_node(ctx)],
		   addr);
}

/*
 * An address that is not page aligned or that the aperture cannot reach
 * is as good as none; the one given out is remembered, to notice change.
 */
static u64 scif_iv_peer_qp(struct scif_hw_dev *hw, void *ctx)
{
	struct scif_iv *iv = to_iv(hw);
	struct scif_iv_peer *peer = ctx;
	u64 addr, off;

	addr = READ_ONCE(scif_iv_slot(iv, scif_iv_node(peer))->qp_addr[iv->self]);
	if (!PAGE_ALIGNED(addr) || !scif_iv_reach(peer, addr, PAGE_SIZE, &off))
		addr = 0;
	peer->qp = addr;
	return addr;
}

static void scif_iv_ring(struct scif_hw_dev *hw, void *ctx)
{
	struct scif_iv *iv = to_iv(hw);

	writel((u32)scif_iv_node(ctx) << 16 | iv->self,
	       iv->regs + IVSHMEM_REG_DOORBELL);
}

/*
 * Clearing Memory Space in the aperture's command register unmaps its
 * BAR: QEMU then drops every access to it, a device's DMA included (the
 * guarantee the core wants for a node whose last life devices may
 * still write into).  Meanwhile the heartbeat work does not read
 * through the aperture.
 */
static void scif_iv_close_aperture(struct scif_hw_dev *hw, u16 node,
				   bool closed)
{
	struct scif_iv_peer *peer;
	struct scif_iv_aperture *ap;
	u16 cmd;

	if (node >= SCIF_IV_MAX_NODES)
		return;
	peer = &to_iv(hw)->peers[node];
	WRITE_ONCE(peer->closed, closed);
	ap = READ_ONCE(peer->ap);
	if (!ap)
		return;
	pci_read_config_word(ap->pdev, PCI_COMMAND, &cmd);
	if (closed)
		cmd &= ~PCI_COMMAND_MEMORY;
	else
		cmd |= PCI_COMMAND_MEMORY;
	pci_write_config_word(ap->pdev, PCI_COMMAND, cmd);
}

static const struct scif_hw_ops scif_iv_ops = {
	.map_peer = scif_iv_map_peer,
	.unmap_peer = scif_iv_unmap_peer,
	.peer_phys = scif_iv_peer_phys,
	.peer_dma_map = scif_iv_peer_dma_map,
	.peer_dma_unmap = scif_iv_peer_dma_unmap,
	.close_aperture = scif_iv_close_aperture,
	.map_local = scif_iv_map_local,
	.unmap_local = scif_iv_unmap_local,
	.publish_qp = scif_iv_publish_qp,
	.peer_qp = scif_iv_peer_qp,
	.ring = scif_iv_ring,
};

static irqreturn_t scif_iv_irq(int irq, void *data)
{
	struct scif_iv_peer *peer = data;
	struct scif_iv *iv = peer->iv;

	scif_hw_doorbell(&iv->hw, peer - iv->peers);
	return IRQ_HANDLED;
}

/*
 * Whether @ap shows, at @addr (translated by the layout @raw, checked
 * first against @ap), the signature of @node's life @gen with @value.
 * Everything read is the peer's; reads stay inside the aperture.
 */
static bool scif_iv_sig_at(struct scif_iv_aperture *ap,
			   const struct scif_iv_layout *raw, u16 node, u32 gen,
			   u64 addr, u64 value)
{
	struct scif_iv_layout l;
	struct scif_iv_sig sig;
	u64 off;

	if (!ap || !value || !IS_ALIGNED(addr, sizeof(u64)) ||
	    !scif_iv_layout_check(raw, ap->size, &l) ||
	    !scif_iv_translate(&l, addr, sizeof(sig), &off) ||
	    off + sizeof(sig) > ap->size)
		return false;
	memcpy(&sig, ap->va + off, sizeof(sig));
	return sig.magic == SCIF_IV_SIG_MAGIC && sig.node == node &&
	       sig.generation == gen && sig.value == value;
}

/*
 * The unclaimed aperture through which @node's signature can be read,
 * provided no other aperture shows it too: a signature that is not
 * unique proves nothing (a peer naming memory that every VM holds the
 * same would otherwise claim another node's aperture).
 */
static struct scif_iv_aperture *scif_iv_find_aperture(struct scif_iv_slot *slot,
						      u16 node)
{
	u64 addr = READ_ONCE(slot->sig_addr), want = READ_ONCE(slot->sig_value);
	u32 gen = READ_ONCE(slot->generation);
	struct scif_iv_aperture *ap, *found = NULL;
	struct scif_iv_layout raw;
	int seen = 0;

	memcpy(&raw, &slot->layout, sizeof(raw));
	mutex_lock(&scif_iv_lock);
	list_for_each_entry(ap, &scif_iv_apertures, list) {
		if (!scif_iv_sig_at(ap, &raw, node, gen, addr, want))
			continue;
		seen++;
		found = ap;
	}
	if (seen != 1 || found->node >= 0)
		found = NULL;
	if (found)
		found->node = node;
	mutex_unlock(&scif_iv_lock);
	return found;
}

/*
 * A peer is up but no aperture reaches it yet: its aperture may be one
 * of the ivshmem-plain devices left unbound because they showed no
 * signature when probed.  Probe them again, at most once a second.
 */
static void scif_iv_want_apertures(struct scif_iv *iv)
{
	if (scif_iv_attach_last &&
	    time_before(jiffies, scif_iv_attach_last + HZ))
		return;
	scif_iv_attach_last = jiffies | 1;
	mutex_lock(&scif_iv_lock);
	if (!scif_iv_exiting)
		queue_work(system_long_wq, &scif_iv_attach);
	mutex_unlock(&scif_iv_lock);
}

/* Offer every unbound ivshmem-plain device to the driver core again. */
static void scif_iv_attach_work(struct work_struct *work)
{
	struct pci_dev *pdev = NULL;

	while ((pdev = pci_get_device(0x1af4, 0x1110, pdev))) {
		if (READ_ONCE(pdev->dev.driver) || pci_resource_len(pdev, 1))
			continue;
		if (device_attach(&pdev->dev) < 0)
			continue;
	}
}

/* Whether the administrator gave @pdev to SCIF (devices=, driver_override). */
static bool scif_iv_named(struct pci_dev *pdev)
{
	const char *name = pci_name(pdev), *p = devices;
	size_t len = strlen(name);

#ifdef SCIF_HAVE_DEV_DRIVER_OVERRIDE
	bool set;

	/* Only an override naming this driver lets the core call us. */
	spin_lock(&pdev->dev.driver_override.lock);
	set = pdev->dev.driver_override.name;
	spin_unlock(&pdev->dev.driver_override.lock);
	if (set)
		return true;
#else
	if (pdev->driver_override)
		return true;
#endif
	while (p && *p) {
		if (!strncmp(p, name, len) && (p[len] == ',' || !p[len]))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

static void scif_iv_peer_down(struct scif_iv *iv, u16 node, const char *why)
{
	struct scif_iv_peer *peer = &iv->peers[node];

	if (peer->up) {
		dev_info(&iv->pdev->dev, "node %u lost: %s\n", node, why);
		peer->stale = true;
		peer->stale_gen = peer->generation;
	}
	if (peer->up || peer->pending)
		scif_hw_node_down(&iv->hw, node);
	peer->up = false;
	peer->pending = false;
	peer->failed = false;
	peer->silent = false;
	peer->held = false;
}

/* What a slot said at one look; every field is the peer's to corrupt. */
struct scif_iv_view {
	u64 magic;
	u32 generation;
	u32 up;
	u64 sig_addr;
	u64 sig_value;
	u64 qp;
	struct scif_iv_layout layout;
};

static void scif_iv_read_slot(struct scif_iv *iv, u16 node,
			      struct scif_iv_view *v)
{
	struct scif_iv_slot *slot = scif_iv_slot(iv, node);

	v->magic = READ_ONCE(slot->magic);
	v->generation = READ_ONCE(slot->generation);
	v->up = READ_ONCE(slot->up);
	v->sig_addr = READ_ONCE(slot->sig_addr);
	v->sig_value = READ_ONCE(slot->sig_value);
	v->qp = READ_ONCE(slot->qp_addr[iv->self]);
	memcpy(&v->layout, &slot->layout, sizeof(v->layout));
}

/* What is wrong with the slot of a peer that is up, or NULL. */
static const char *scif_iv_slot_changed(struct scif_iv_peer *peer,
					const struct scif_iv_view *v)
{
	if (v->magic != SCIF_IV_MAGIC)
		return "bad magic";
	if (v->generation != peer->generation)
		return "generation changed";
	if (v->sig_addr != peer->sig_addr || v->sig_value != peer->sig_value)
		return "signature changed";
	if (v->qp != peer->qp)
		return "queue address changed";
	if (memcmp(&v->layout, &peer->raw, sizeof(peer->raw)))
		return "RAM layout changed";
	return NULL;
}

/*
 * A peer that is up stopped beating.  If its slot still says it is up,
 * in the generation we know, it may only be stalled (a busy host, a
 * paused VM) and go on writing into our memory when it wakes up: no bus
 * can take its view of our RAM away.  It is failed then, which resets
 * its connections but keeps what it may write into, until it restarts,
 * leaves or drops us (scif_iv_check_peer()), or this driver goes.
 * Return: true if the caller should go on looking at the slot.
 */
static bool scif_iv_peer_silent(struct scif_iv *iv, u16 node,
				const struct scif_iv_view *v)
{
	struct scif_iv_peer *peer = &iv->peers[node];

	if (v->magic != SCIF_IV_MAGIC || !v->up ||
	    v->generation != peer->generation) {
		scif_iv_peer_down(iv, node, "no heartbeat");
		return false;
	}
	if (!peer->failed) {
		peer->failed = true;
		peer->silent = true;
		dev_info(&iv->pdev->dev, "node %u lost: no heartbeat\n", node);
		scif_hw_node_failed(&iv->hw, node, "stopped beating");
	}
	return true;
}

/* A peer that is up (or failed): lost, restarted, misbehaving or fine. */
static void scif_iv_check_peer(struct scif_iv *iv, u16 node,
			       const struct scif_iv_view *v, bool fresh)
{
	struct scif_iv_peer *peer = &iv->peers[node];
	const char *why;

	if (!fresh && !scif_iv_peer_silent(iv, node, v))
		return;
	if (v->magic == SCIF_IV_MAGIC && !v->up) {
		scif_iv_peer_down(iv, node, "left");
		return;
	}
	/* A restart shows a new signature, found where the slot says. */
	if (v->magic == SCIF_IV_MAGIC && v->sig_value != peer->sig_value &&
	    scif_iv_sig_at(peer->ap, &v->layout, node, v->generation,
			   v->sig_addr, v->sig_value)) {
		scif_iv_peer_down(iv, node, "restarted");
		return;
	}
	/*
	 * The core took our queue for it back: it found a protocol error,
	 * and the node stays offline until it restarts or dies.
	 */
	if (!READ_ONCE(scif_iv_slot(iv, iv->self)->qp_addr[node]))
		peer->failed = true;
	/*
	 * It took its queue for us back: it dropped us (a protocol error,
	 * or it lost us) and no longer touches our memory.  One that was
	 * silent may have published the next queue for us already, between
	 * two of our looks: that says the same.
	 */
	if (v->magic == SCIF_IV_MAGIC && peer->qp &&
	    (!v->qp || (peer->silent && v->qp != peer->qp))) {
		scif_iv_peer_down(iv, node, "it dropped this node");
		/*
		 * Nothing stale to wait for: its queue for us is gone already,
		 * and the next one it publishes is for the new life (which may
		 * come before our next look at its slot).  Our next one waits
		 * until it has seen ours go.
		 */
		peer->stale = false;
		peer->held = true;
		peer->held_armed = false;
		return;
	}
	if (peer->failed)
		return;
	why = scif_iv_slot_changed(peer, v);
	if (why) {
		peer->failed = true;
		dev_warn(&iv->pdev->dev, "node %u: invalid bootstrap slot (%s)\n",
			 node, why);
		scif_hw_node_failed(&iv->hw, node, "wrote an invalid bootstrap slot");
		return;
	}
	/* A lost doorbell costs latency, never progress. */
	scif_hw_doorbell(&iv->hw, node);
}

/*
 * A peer we dropped for dropping us may be in the same place: it failed
 * us for silence, and waits to see our queue for it go.  We publish our
 * next queue (often at the same address: the page is reused) only once
 * it has looked at our slot while it read 0; until then it could take
 * the new queue for the old one, and each node would wait for the other
 * for good.  Its heartbeat work looks at our slot right after each beat,
 * one pass at a time, so its heartbeat two beats past the one read just
 * after our 0 means a whole look since.  Return: true once that is so.
 */
static bool scif_iv_held_out(struct scif_iv *iv, u16 node)
{
	struct scif_iv_peer *peer = &iv->peers[node];
	u64 hb;

	/* Our node-down takes it back from the core's work. */
	if (READ_ONCE(scif_iv_slot(iv, iv->self)->qp_addr[node]))
		return false;
	smp_rmb();	/* the 0, then its heartbeat */
	hb = READ_ONCE(scif_iv_slot(iv, node)->heartbeat);
	if (!peer->held_armed) {
		peer->held_armed = true;
		peer->held_hb = hb;
		return false;
	}
	if (hb - peer->held_hb < 2)
		return false;
	peer->held = false;
	return true;
}

static void scif_iv_watch_peer(struct scif_iv *iv, u16 node)
{
	struct scif_iv_slot *slot = scif_iv_slot(iv, node);
	struct scif_iv_peer *peer = &iv->peers[node];
	u64 hb = READ_ONCE(slot->heartbeat);
	struct scif_iv_view v;
	bool fresh;
	int err;

	if (hb != peer->heartbeat) {
		peer->heartbeat = hb;
		peer->seen = jiffies;
		if (peer->up)
			scif_hw_node_heartbeat(&iv->hw, node);
	}
	fresh = peer->seen &&
		time_before(jiffies, peer->seen + msecs_to_jiffies(hb_timeout_ms));
	scif_iv_read_slot(iv, node, &v);

	if (peer->up) {
		scif_iv_check_peer(iv, node, &v, fresh);
		return;
	}
	if (v.magic != SCIF_IV_MAGIC || !v.up || !fresh) {
		scif_iv_peer_down(iv, node, "gone");
		return;
	}
	/*
	 * Lost while alive (a false heartbeat timeout): it learns that we
	 * dropped it (our queue for it went) and takes its own queue for us
	 * back; bringing it up before that would map the old queue, whose
	 * counts are not ours any more.
	 */
	if (peer->stale && v.qp && v.generation == peer->stale_gen)
		return;
	peer->stale = false;
	if (peer->held && !scif_iv_held_out(iv, node))
		return;
	if (READ_ONCE(peer->closed))
		return;
	if (!peer->ap)
		WRITE_ONCE(peer->ap, scif_iv_find_aperture(slot, node));
	if (!scif_iv_sig_at(peer->ap, &v.layout, node, v.generation,
			    v.sig_addr, v.sig_value)) {
		scif_iv_want_apertures(iv);
		return;
	}
	/* Checked by scif_iv_sig_at(); what the bus operations translate by. */
	peer->raw = v.layout;
	scif_iv_layout_check(&peer->raw, peer->ap->size, &peer->layout);
	err = scif_hw_node_up(&iv->hw, node, peer);
	peer->pending = err == -EAGAIN;
	if (err)
		return;
	peer->up = true;
	scif_hw_node_heartbeat(&iv->hw, node);
	peer->generation = v.generation;
	peer->sig_addr = v.sig_addr;
	peer->sig_value = v.sig_value;
	dev_info(&iv->pdev->dev, "node %u up (generation %u)\n", node,
		 v.generation);
}

static void scif_iv_hb_work(struct work_struct *work)
{
	struct scif_iv *iv = container_of(to_delayed_work(work), struct scif_iv,
					  hb_work);
	struct scif_iv_slot *me = scif_iv_slot(iv, iv->self);
	unsigned long stall = scif_iv_stalled(iv);
	u16 node;

	if (stall) {
		queue_delayed_work(system_highpri_wq, &iv->hb_work, stall);
		return;
	}
	WRITE_ONCE(me->heartbeat, me->heartbeat + 1);
	for (node = 0; node < SCIF_IV_MAX_NODES; node++)
		if (node != iv->self)
			scif_iv_watch_peer(iv, node);
	/*
	 * Loss detection runs in the high-priority pool: a loss is declared
	 * on time while CPU-bound work items hold the normal pool.
	 */
	queue_delayed_work(system_highpri_wq, &iv->hb_work,
			   msecs_to_jiffies(hb_interval_ms));
}

/* Start a new life in our slot: clear what a former life left. */
static void scif_iv_claim_slot(struct scif_iv *iv)
{
	struct scif_iv_slot *me = scif_iv_slot(iv, iv->self);
	u32 gen = READ_ONCE(me->magic) == SCIF_IV_MAGIC ?
		  READ_ONCE(me->generation) + 1 : 1;

	WRITE_ONCE(me->up, 0);
	wmb();	/* peers must see the slot down before it changes */
	memset(me->qp_addr, 0, sizeof(me->qp_addr));
	/* A fresh signature for each life. */
	iv->sig->magic = SCIF_IV_SIG_MAGIC;
	iv->sig->node = iv->self;
	iv->sig->generation = gen;
	iv->sig->value = get_random_u64() | 1;
	me->sig_addr = virt_to_phys(iv->sig);
	me->sig_value = iv->sig->value;
	memcpy(&me->layout, &iv->layout, sizeof(me->layout));
	me->generation = gen;
	me->magic = SCIF_IV_MAGIC;
	wmb();	/* ... and the new contents before it is up again */
	WRITE_ONCE(me->up, 1);
	dev_info(&iv->pdev->dev, "node %u, generation %u\n", iv->self, gen);
}

static int scif_iv_setup_irqs(struct scif_iv *iv)
{
	struct pci_dev *pdev = iv->pdev;
	int nvec, i, err;

	nvec = pci_msix_vec_count(pdev);
	if (nvec <= 0)
		return -ENODEV;
	/* MSI-X messages are writes by the device: it must master the bus. */
	pci_set_master(pdev);
	nvec = pci_alloc_irq_vectors(pdev, 1, min(nvec, SCIF_IV_MAX_NODES),
				     PCI_IRQ_MSIX);
	if (nvec < 0)
		return nvec;
	for (i = 0; i < nvec; i++) {
		err = devm_request_irq(&pdev->dev, pci_irq_vector(pdev, i),
				       scif_iv_irq, 0, "scif_ivshmem",
				       &iv->peers[i]);
		if (err) {
			while (--i >= 0)
				devm_free_irq(&pdev->dev, pci_irq_vector(pdev, i),
					      &iv->peers[i]);
			pci_free_irq_vectors(pdev);
			return err;
		}
	}
	iv->nr_vectors = nvec;
	return 0;
}

static void scif_iv_free_irqs(struct scif_iv *iv)
{
	int i;

	for (i = 0; i < iv->nr_vectors; i++)
		devm_free_irq(&iv->pdev->dev, pci_irq_vector(iv->pdev, i),
			      &iv->peers[i]);
	pci_free_irq_vectors(iv->pdev);
}

static bool scif_iv_header_ok(const struct scif_iv_header *h)
{
	return READ_ONCE(h->magic) == SCIF_IV_TABLE_MAGIC &&
	       READ_ONCE(h->version) == SCIF_IV_TABLE_VERSION &&
	       READ_ONCE(h->max_nodes) == SCIF_IV_MAX_NODES &&
	       READ_ONCE(h->slot_size) == SCIF_IV_SLOT_SIZE &&
	       READ_ONCE(h->slots_off) == SCIF_IV_SLOTS_OFF;
}

/*
 * Map the doorbell memory, and take it only if it is SCIF's: it carries
 * the table header, or the administrator named the device (the header
 * is then laid down here).  Nothing is written before that.
 */
static int scif_iv_map_table(struct scif_iv *iv)
{
	struct pci_dev *pdev = iv->pdev;
	resource_size_t len = pci_resource_len(pdev, 2);
	struct scif_iv_header *h;

	if (len < SCIF_IV_SLOTS_OFF + SCIF_IV_MAX_NODES * SCIF_IV_SLOT_SIZE)
		return -ENODEV;
	iv->table = devm_memremap(&pdev->dev, pci_resource_start(pdev, 2),
				  len, MEMREMAP_WB);
	if (IS_ERR(iv->table))
		return PTR_ERR(iv->table);
	h = (struct scif_iv_header *)iv->table;
	if (!scif_iv_header_ok(h)) {
		if (!scif_iv_named(pdev)) {
			dev_info(&pdev->dev, "no SCIF table header: not SCIF's, left alone\n");
			return -ENODEV;
		}
		dev_info(&pdev->dev, "named by the administrator: laying the SCIF table header down\n");
		memset(iv->table, 0, SCIF_IV_SLOTS_OFF +
		       SCIF_IV_MAX_NODES * SCIF_IV_SLOT_SIZE);
		h->version = SCIF_IV_TABLE_VERSION;
		h->max_nodes = SCIF_IV_MAX_NODES;
		h->slot_size = SCIF_IV_SLOT_SIZE;
		h->slots_off = SCIF_IV_SLOTS_OFF;
		wmb();	/* the rest before the magic that validates it */
		WRITE_ONCE(h->magic, SCIF_IV_TABLE_MAGIC);
	}
	iv->regs = pcim_iomap(pdev, 0, 0);
	return iv->regs ? 0 : -ENOMEM;
}

/* The highest ends of this node's System RAM below and above 4 GiB. */
struct scif_iv_ram {
	u64 low_end;
	u64 high_end;
};

static int scif_iv_ram_cb(struct resource *res, void *arg)
{
	struct scif_iv_ram *ram = arg;
	u64 end = (u64)res->end + 1;

	if (end <= SZ_4G)
		ram->low_end = max(ram->low_end, end);
	else
		ram->high_end = max(ram->high_end, end);
	return 0;
}

/*
 * This node's RAM layout, which it publishes for its peers to translate
 * by.  QEMU puts a guest's RAM in its file in one piece: what is below
 * the 32-bit PCI hole at its own address, the rest from 4 GiB up right
 * after it in the file.  How much is below is the machine's choice
 * (q35: all of it up to 2.75 GiB of RAM, else 2 GiB), which the guest
 * cannot read: ram_below_4g says it when there is RAM above 4 GiB.  A
 * wrong value is caught by the peers: the signature is then not where
 * the layout says, and this node is never brought up.
 */
static int scif_iv_local_layout(struct scif_iv *iv)
{
	struct scif_iv_layout *l = &iv->layout;
	struct scif_iv_ram ram = { 0, 0 };
	u64 low;

	walk_iomem_res_desc(IORES_DESC_NONE, IORESOURCE_SYSTEM_RAM, 0,
			    U64_MAX, &ram, scif_iv_ram_cb);
	low = PAGE_ALIGN(ram.low_end);
	memset(l, 0, sizeof(*l));
	l->version = SCIF_IV_LAYOUT_VERSION;
	l->nr = 1;
	l->range[0].len = low;
	if (!low)
		return -ENODEV;
	if (!ram.high_end)
		return 0;
	if (!PAGE_ALIGNED(ram_below_4g) || ram_below_4g < low ||
	    ram_below_4g > SZ_4G) {
		dev_err(&iv->pdev->dev, "ram_below_4g=%lu: not page aligned, or not between %llu and 4 GiB\n",
			ram_below_4g, low);
		return -EINVAL;
	}
	l->range[1].gpa = SZ_4G;
	l->range[1].offset = ram_below_4g;
	l->range[1].len = PAGE_ALIGN(ram.high_end) - SZ_4G;
	l->nr = 2;
	dev_info(&iv->pdev->dev, "RAM: %llu MiB at 0, %llu MiB at 4 GiB (file offset %lu MiB)\n",
		 low >> 20, l->range[1].len >> 20, ram_below_4g >> 20);
	return 0;
}

static int scif_iv_probe_doorbell(struct pci_dev *pdev)
{
	struct scif_iv *iv;
	u32 pos;
	int err, i;

	iv = devm_kzalloc(&pdev->dev, sizeof(*iv), GFP_KERNEL);
	if (!iv)
		return -ENOMEM;
	iv->pdev = pdev;
	iv->hw.name = "ivshmem";
	iv->hw.ops = &scif_iv_ops;
	iv->hw.dev = &pdev->dev;
	iv->hw.owner = THIS_MODULE;
	/* The apertures are mapped write-combined (scif_iv_probe_aperture). */
	iv->hw.peer_wc = true;
	for (i = 0; i < SCIF_IV_MAX_NODES; i++)
		iv->peers[i].iv = iv;
	INIT_DELAYED_WORK(&iv->hb_work, scif_iv_hb_work);

	err = scif_iv_map_table(iv);
	if (err)
		return err;
	pos = readl(iv->regs + IVSHMEM_REG_IVPOSITION);
	if (pos >= SCIF_IV_MAX_NODES)
		return -EINVAL;
	iv->self = pos;
	err = scif_iv_local_layout(iv);
	if (err)
		return err;
	iv->sig = (struct scif_iv_sig *)get_zeroed_page(GFP_KERNEL);
	if (!iv->sig)
		return -ENOMEM;

	err = scif_iv_setup_irqs(iv);
	if (err)
		goto undo_sig;
	iv->hw.self = iv->self;
	err = scif_hw_register(&iv->hw);
	if (err)
		goto undo_irqs;
	scif_iv_claim_slot(iv);

	mutex_lock(&scif_iv_lock);
	scif_iv_dev = iv;
	mutex_unlock(&scif_iv_lock);
	pci_set_drvdata(pdev, iv);
	scif_iv_debugfs_init(iv);
	queue_delayed_work(system_highpri_wq, &iv->hb_work, 0);
	return 0;

undo_irqs:
	scif_iv_free_irqs(iv);
undo_sig:
	free_page((unsigned long)iv->sig);
	return err;
}

static void scif_iv_remove_doorbell(struct pci_dev *pdev)
{
	struct scif_iv *iv = pci_get_drvdata(pdev);

	debugfs_remove_recursive(iv->debugfs);
	cancel_delayed_work_sync(&iv->hb_work);
	WRITE_ONCE(scif_iv_slot(iv, iv->self)->up, 0);
	mutex_lock(&scif_iv_lock);
	scif_iv_dev = NULL;
	mutex_unlock(&scif_iv_lock);
	scif_hw_unregister(&iv->hw);
	scif_iv_free_irqs(iv);
	free_page((unsigned long)iv->sig);
}

/*
 * Whether the memory behind @ap shows the signature of a node of the
 * SCIF table (read only): it is then that node's RAM, an aperture.
 */
static bool scif_iv_aperture_proven(struct scif_iv_aperture *ap)
{
	struct scif_iv *iv = scif_iv_dev;
	struct scif_iv_view v;
	u16 node;

	lockdep_assert_held(&scif_iv_lock);
	if (!iv)
		return false;
	for (node = 0; node < SCIF_IV_MAX_NODES; node++) {
		if (node == iv->self)
			continue;
		scif_iv_read_slot(iv, node, &v);
		if (v.magic == SCIF_IV_MAGIC && v.up &&
		    scif_iv_sig_at(ap, &v.layout, node, v.generation,
				   v.sig_addr, v.sig_value))
			return true;
	}
	return false;
}

/*
 * An ivshmem-plain device is taken only if it is provably an aperture
 * (it shows a SCIF node's signature: see scif_iv_aperture_proven()) or
 * the administrator named it.  Until a SCIF doorbell device is bound,
 * the probe is deferred (the driver core retries it when the doorbell
 * binds); a device that shows no signature is left unbound, and offered
 * again (scif_iv_want_apertures()) while a peer lacks an aperture.
 */
static int scif_iv_probe_aperture(struct pci_dev *pdev)
{
	struct scif_iv_aperture *ap;
	bool named = scif_iv_named(pdev);
	int err;

	mutex_lock(&scif_iv_lock);
	err = !named && !scif_iv_dev ? -EPROBE_DEFER : 0;
	mutex_unlock(&scif_iv_lock);
	if (err)
		return err;
	ap = devm_kzalloc(&pdev->dev, sizeof(*ap), GFP_KERNEL);
	if (!ap)
		return -ENOMEM;
	ap->pdev = pdev;
	ap->node = -1;
	ap->size = pci_resource_len(pdev, 2);
	ap->phys = pci_resource_start(pdev, 2);
	ap->va = devm_memremap(&pdev->dev, ap->phys, ap->size, MEMREMAP_WC);
	if (IS_ERR(ap->va))
		return PTR_ERR(ap->va);
	mutex_lock(&scif_iv_lock);
	if (!named && !scif_iv_aperture_proven(ap)) {
		mutex_unlock(&scif_iv_lock);
		devm_memunmap(&pdev->dev, ap->va);
		return -ENODEV;
	}
	list_add_tail(&ap->list, &scif_iv_apertures);
	mutex_unlock(&scif_iv_lock);
	pci_set_drvdata(pdev, ap);
	return 0;
}

/* An aperture going away takes its node down first. */
static void scif_iv_remove_aperture(struct pci_dev *pdev)
{
	struct scif_iv_aperture *ap = pci_get_drvdata(pdev);
	struct scif_iv *iv;

	mutex_lock(&scif_iv_lock);
	list_del(&ap->list);
	iv = scif_iv_dev;
	mutex_unlock(&scif_iv_lock);
	if (!iv || ap->node < 0)
		return;
	cancel_delayed_work_sync(&iv->hb_work);
	scif_iv_peer_down(iv, ap->node, "aperture removed");
	iv->peers[ap->node].ap = NULL;
	queue_delayed_work(system_highpri_wq, &iv->hb_work, 0);
}

static int scif_iv_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	int err;

	err = pcim_enable_device(pdev);
	if (err)
		return err;
	/* Only the doorbell flavour has BAR1, its MSI-X table. */
	if (pci_resource_len(pdev, 1))
		return scif_iv_probe_doorbell(pdev);
	return scif_iv_probe_aperture(pdev);
}

static void scif_iv_remove(struct pci_dev *pdev)
{
	if (pci_resource_len(pdev, 1))
		scif_iv_remove_doorbell(pdev);
	else
		scif_iv_remove_aperture(pdev);
}

static const struct pci_device_id scif_iv_ids[] = {
	{ PCI_DEVICE(0x1af4, 0x1110) },
	{ }
};
MODULE_DEVICE_TABLE(pci, scif_iv_ids);

static struct pci_driver scif_iv_driver = {
	.name = "scif_ivshmem",
	.id_table = scif_iv_ids,
	.probe = scif_iv_probe,
	.remove = scif_iv_remove,
};

static int __init scif_iv_init(void)
{
	return pci_register_driver(&scif_iv_driver);
}
module_init(scif_iv_init);

static void __exit scif_iv_exit(void)
{
	mutex_lock(&scif_iv_lock);
	scif_iv_exiting = true;
	mutex_unlock(&scif_iv_lock);
	cancel_work_sync(&scif_iv_attach);
	pci_unregister_driver(&scif_iv_driver);
}
module_exit(scif_iv_exit);

MODULE_DESCRIPTION("SCIF bus over QEMU ivshmem (VMs as PCIe nodes)");
MODULE_LICENSE("GPL");
MODULE_VERSION(SCIF_DRIVER_VERSION);

#ifdef SCIF_TEST_HOOKS
#include "scif_ivshmem_testhooks.c"
#endif
#ifdef SCIF_KUNIT
#include "scif_ivshmem_kunit.c"
#endif
