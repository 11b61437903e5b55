// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: device memory.  A range of a PCI memory BAR made into a
 * pinned set of kind SCIF_PP_MMIO, which a window is then registered
 * over (scif_register_pci(), SCIF_REG_PCI): the range is checked against
 * the BAR, mapped once (ioremap_wc() for a prefetchable BAR, ioremap()
 * otherwise) and described as one run; the set holds a reference on the
 * struct pci_dev.  Nothing is pinned and nothing is charged to
 * RLIMIT_MEMLOCK: device memory is not the kernel's to lend or reclaim.
 * At most max_devmem_windows sets exist at once, all users together.
 *
 * The sets cannot keep the function's driver or its BAR, so a notifier
 * on pci_bus_type hears of a driver unbinding from a function
 * (BUS_NOTIFY_UNBIND_DRIVER, sent before the driver's remove) or of the
 * function's removal (BUS_NOTIFY_DEL_DEVICE) and, for each window over
 * a set of that function, calls the callback the layers above gave
 * (scif_devmem_on_gone()), which unregisters the window as its owner
 * would and waits for the peer to let go.  Only then does the unbind go
 * on.  See Documentation/scif/devices.rst.
 */
#define pr_fmt(fmt) "scif: " fmt

#include <linux/device.h>
#include <linux/io.h>
#include <linux/ioport.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/scif.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "scif_fault.h"
#include "scif_rma.h"
#include "scif_visibility.h"

static unsigned int scif_devmem_max = 64;
module_param_named(max_devmem_windows, scif_devmem_max, uint, 0644);
MODULE_PARM_DESC(max_devmem_windows,
		 "Most windows over device memory (PCI BAR ranges) on this node, all users together (default 64)");

/*
 * Every SCIF_PP_MMIO set, from its creation to its release, and the
 * fields of each that name its window (@gone, @owner, @offset).  Lock
 * order: a function's device lock (held by the driver core around the
 * bus notifier, and by scif_devmem_pin_user()) before scif_devmem_lock;
 * scif_devmem_lock is never held while a window is unregistered.
 */
static DEFINE_MUTEX(scif_devmem_lock);
static LIST_HEAD(scif_devmem_list);
static atomic_t scif_devmem_nr = ATOMIC_INIT(0);

/*
 * Unregisters a window whose function goes: scif_epd.c's, given by
 * scif_main.c through scif_devmem_on_gone().  Set once at module load,
 * before the notifier is registered, kept until unload; read without a
 * lock.
 */
static void (*scif_devmem_gone_fn)(u64 owner, s64 offset, u64 len);

/**
 * scif_devmem_range_check() - check a range of a BAR for a device window
 * @start: the BAR's first physical address
 * @size: the BAR's size in bytes (0: no such BAR)
 * @flags: the BAR's resource flags (IORESOURCE_*)
 * @bar_offset: first byte of the range in the BAR, page aligned
 * @len: bytes, a non-zero multiple of the page size
 *
 * The BAR must be a memory BAR with a page aligned start, and the range
 * must lie inside it.  Pure: no device is touched.
 *
 * Context: any context.
 * Return: 0 or -EINVAL.
 */
int scif_devmem_range_check(u64 start, u64 size, unsigned long flags,
			    u64 bar_offset, u64 len)
{
	u64 end;

	if (!(flags & IORESOURCE_MEM) || (flags & IORESOURCE_UNSET) || !size ||
	    !PAGE_ALIGNED(start) || !len || !PAGE_ALIGNED(bar_offset) ||
	    !PAGE_ALIGNED(len) || len >> PAGE_SHIFT > SCIF_WINDOW_MAX_PAGES ||
	    check_add_overflow(bar_offset, len, &end) || end > size)
		return -EINVAL;
	return 0;
}

SCIF_EXPORT_IF_KUNIT(scif_devmem_range_check);

/* Make the set; the caller made sure the function's driver is bound. */
static int scif_devmem_make(struct pci_dev *pdev, int bar, u64 bar_offset,
			    u64 len, int prot,
			    struct scif_pinned_pages **pinned)
{
	struct scif_pinned_pages *pp;
	phys_addr_t phys;
	unsigned long flags;
	int err;

	if (bar < 0 || bar >= PCI_STD_NUM_BARS ||
	    (prot & ~(SCIF_PROT_READ | SCIF_PROT_WRITE)))
		return -EINVAL;
	flags = pci_resource_flags(pdev, bar);
	err = scif_devmem_range_check(pci_resource_start(pdev, bar),
				      pci_resource_len(pdev, bar), flags,
				      bar_offset, len);
	if (err)
		return err;
	if (atomic_inc_return(&scif_devmem_nr) > READ_ONCE(scif_devmem_max)) {
		err = -EAGAIN;
		goto uncount;
	}
	err = -ENOMEM;
	pp = scif_kzalloc(sizeof(*pp), GFP_KERNEL_ACCOUNT);
	if (!pp)
		goto uncount;
	pp->runs = scif_kzalloc(sizeof(*pp->runs), GFP_KERNEL_ACCOUNT);
	if (!pp->runs)
		goto free_pp;
	phys = pci_resource_start(pdev, bar) + bar_offset;
	if (flags & IORESOURCE_PREFETCH)
		pp->runs[0].io = ioremap_wc(phys, len);
	else
		pp->runs[0].io = ioremap(phys, len);
	if (!pp->runs[0].io)
		goto free_runs;
	kref_init(&pp->ref);
	pp->kind = SCIF_PP_MMIO;
	pp->nr_pages = len >> PAGE_SHIFT;
	pp->prot = prot;
	pp->runs[0].addr = phys;
	pp->runs[0].len = len;
	pp->nr_runs = 1;
	pp->pdev = pci_dev_get(pdev);
	pp->bar = bar;
	pp->offset = -1;
	mutex_lock(&scif_devmem_lock);
	list_add_tail(&pp->devmem, &scif_devmem_list);
	mutex_unlock(&scif_devmem_lock);
	*pinned = pp;
	return 0;

free_runs:
	kfree(pp->runs);
free_pp:
	kfree(pp);
uncount:
	atomic_dec(&scif_devmem_nr);
	return err;
}

/**
 * scif_devmem_pin() - a pinned set over a range of a BAR, for a driver
 * @pdev: the function, whose driver (the caller) is bound
 * @bar: a memory BAR, 0..5
 * @bar_offset: first byte of the range in the BAR, page aligned
 * @len: bytes, a non-zero multiple of the page size
 * @prot: SCIF_PROT_* of the window to come
 * @pinned: receives the set, with one reference (scif_pin_put())
 *
 * Context: process context; may sleep.  The caller keeps its driver
 * bound to @pdev (it may hold the device lock).
 * Return: 0, -EINVAL (bad BAR, range or @prot), -EBUSY (no driver is
 * bound to @pdev), -EAGAIN (max_devmem_windows reached) or -ENOMEM.
 */
int scif_devmem_pin(struct pci_dev *pdev, int bar, u64 bar_offset, u64 len,
		    int prot, struct scif_pinned_pages **pinned)
{
	if (!pdev || !pinned)
		return -EINVAL;
	if (!READ_ONCE(pdev->dev.driver))
		return -EBUSY;
	return scif_devmem_make(pdev, bar, bar_offset, len, prot, pinned);
}

/* The drivers under which a process may register a function's BAR. */
static bool scif_devmem_driver_ok(const struct device_driver *drv)
{
	return drv && (!strcmp(drv->name, "vfio-pci") ||
		       !strcmp(drv->name, "scif_lend"));
}

/**
 * scif_devmem_pin_user() - a pinned set over a range of a BAR, for a process
 * @domain: the function's PCI domain
 * @bus: its bus number
 * @devfn: its device and function numbers
 * @bar: a memory BAR, 0..5
 * @bar_offset: first byte of the range in the BAR, page aligned
 * @len: bytes, a non-zero multiple of the page size
 * @prot: SCIF_PROT_* of the window to come
 * @pinned: receives the set, with one reference (scif_pin_put())
 *
 * The function must be bound to vfio-pci or scif_lend, so that no kernel
 * driver of the device uses the range.  Checked, and the set put on the
 * list the bus notifier reads, under the function's device lock, so an
 * unbind either comes after and finds the set, or came before and the
 * call fails.  The caller checked CAP_SYS_RAWIO.
 *
 * Context: process context; takes the function's device lock
 * (interruptible).
 * Return: 0, -ENODEV (no such function), -EBUSY (another driver, or
 * none), -EINVAL, -EAGAIN, -ENOMEM or -EINTR (signal).
 */
int scif_devmem_pin_user(u32 domain, u8 bus, u8 devfn, int bar,
			 u64 bar_offset, u64 len, int prot,
			 struct scif_pinned_pages **pinned)
{
	struct pci_dev *pdev;
	int err;

	if (domain > INT_MAX)
		return -ENODEV;
	pdev = pci_get_domain_bus_and_slot(domain, bus, devfn);
	if (!pdev)
		return -ENODEV;
	err = device_lock_interruptible(&pdev->dev);
	if (err) {
		err = -EINTR;
		goto put;
	}
	if (!scif_devmem_driver_ok(pdev->dev.driver))
		err = -EBUSY;
	else
		err = scif_devmem_make(pdev, bar, bar_offset, len, prot, pinned);
	device_unlock(&pdev->dev);
put:
	pci_dev_put(pdev);
	return err;
}

/**
 * scif_devmem_opened() - say which window a device memory set is under
 * @pp: the set (SCIF_PP_MMIO)
 * @owner: the handle of the window's endpoint
 * @offset: the window's offset
 *
 * From now on an unbind of the function unregisters the window.
 *
 * Context: process context.
 * Return: 0, or -ENODEV if the function went meanwhile (the caller
 * unregisters the window itself).
 */
int scif_devmem_opened(struct scif_pinned_pages *pp, u64 owner, s64 offset)
{
	int err = 0;

	mutex_lock(&scif_devmem_lock);
	if (pp->gone) {
		err = -ENODEV;
	} else {
		pp->owner = owner;
		pp->offset = offset;
	}
	mutex_unlock(&scif_devmem_lock);
	return err;
}

/**
 * scif_devmem_release() - free a device memory set
 * @pp: the set (SCIF_PP_MMIO), whose last reference went
 *
 * Unmaps the range and drops the function's reference; called by
 * scif_pin_put().
 *
 * Context: process context; may sleep.
 */
void scif_devmem_release(struct scif_pinned_pages *pp)
{
	/* The same whether scif_pin_put() or scif_devmem_put() drops it. */
	mutex_lock(&scif_devmem_lock);
	list_del(&pp->devmem);
	mutex_unlock(&scif_devmem_lock);
	iounmap(pp->runs[0].io);
	pci_dev_put(pp->pdev);
	atomic_dec(&scif_devmem_nr);
	kfree(pp->runs);
	kfree(pp);
}

static void scif_devmem_kref_release(struct kref *ref)
{
	scif_devmem_release(container_of(ref, struct scif_pinned_pages, ref));
}

/* scif_pin_put() of a device memory set (scif_pin.c calls up here). */
static void scif_devmem_put(struct scif_pinned_pages *pp)
{
	kref_put(&pp->ref, scif_devmem_kref_release);
}

/**
 * scif_devmem_on_gone() - subscribe to the end of device memory windows
 * @gone: unregisters the window at @offset (@len bytes) of the endpoint
 *	whose handle is @owner and waits for the peer to let go; called
 *	from the PCI bus notifier, in process context, with no SCIF lock
 *	held (the function's device lock is held)
 *
 * Context: process context, at module load, before scif_devmem_init().
 */
void scif_devmem_on_gone(void (*gone)(u64 owner, s64 offset, u64 len))
{
	scif_devmem_gone_fn = gone;
}

/*
 * The windows over device memory of @pdev go, one after the other; the
 * sets not yet under a window are marked, and their registrant
 * unregisters (scif_devmem_opened()).  At most max_devmem_windows sets
 * are looked at each round.
 */
static void scif_devmem_function_gone(struct pci_dev *pdev)
{
	struct scif_pinned_pages *pp, *found;

	do {
		found = NULL;
		mutex_lock(&scif_devmem_lock);
		list_for_each_entry(pp, &scif_devmem_list, devmem) {
			if (pp->pdev != pdev || pp->gone)
				continue;
			pp->gone = true;
			if (pp->offset >= 0 && kref_get_unless_zero(&pp->ref)) {
				found = pp;
				break;
			}
		}
		mutex_unlock(&scif_devmem_lock);
		if (!found)
			break;
		pci_info(pdev, "scif: unregistering the window at %lld over BAR %d\n",
			 found->offset, found->bar);
		scif_devmem_gone_fn(found->owner, found->offset,
				    (u64)found->nr_pages << PAGE_SHIFT);
		scif_devmem_put(found);
	} while (found);
}

static int scif_devmem_notify(struct notifier_block *nb, unsigned long action,
			      void *data)
{
	struct device *dev = data;

	if (action != BUS_NOTIFY_UNBIND_DRIVER &&
	    action != BUS_NOTIFY_DEL_DEVICE)
		return NOTIFY_DONE;
	scif_devmem_function_gone(to_pci_dev(dev));
	return NOTIFY_OK;
}

static struct notifier_block scif_devmem_nb = {
	.notifier_call = scif_devmem_notify,
};

/**
 * scif_devmem_init() - start hearing of PCI unbinds and removals
 *
 * Context: process context, at module load.
 * Return: 0 or a negative errno.
 */
int scif_devmem_init(void)
{
	return bus_register_notifier(&pci_bus_type, &scif_devmem_nb);
}

/**
 * scif_devmem_exit() - stop hearing of them
 *
 * Sets still released after this (endpoints destroyed late in the
 * unload) need no notifier: their windows are gone.
 *
 * Context: process context, at module unload.
 */
void scif_devmem_exit(void)
{
	bus_unregister_notifier(&pci_bus_type, &scif_devmem_nb);
}
