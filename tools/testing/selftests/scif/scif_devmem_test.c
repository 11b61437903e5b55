// SPDX-License-Identifier: GPL-2.0
/*
 * Windows over device memory (Documentation/scif/devices.rst, "Windows
 * over device memory"), devmem_loopback: on one node, through the
 * loopback node.  scif_devmem_test.sh binds QEMU's NVMe controller to
 * vfio-pci (scif_lend on a kernel without VFIO) and gives its PCI name
 * in SCIF_DEVMEM_BDF; its BAR 2 is the
 * controller memory buffer (cmb_size_mb=1), which reads and writes as
 * memory.  SCIF_DEVMEM_OTHER names a function bound to another driver.
 *
 * Endpoint A registers the CMB with SCIF_REG_PCI; endpoint B, its
 * peer, reaches it by RMA (staged: STAGE_* messages that A's node
 * serves) in both directions, by buffer and by window, and A copies
 * between it and B's window as its local side.  Every byte is checked
 * through a second route: the BAR mapped through sysfs (resource2).
 * Then the errors: EPERM for uid 65534, EBUSY for a function bound to
 * another driver or to none, ENODEV, EINVAL for bad BARs, ranges and
 * fields, EAGAIN over max_devmem_windows, ENXIO for a remote mmap.
 * Last, the driver is unbound while the window exists: the unbind
 * unregisters it, and later RMA on it fails with ENXIO.
 *
 * One TAP line per check; a failed check says what it saw.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "scif.h"
#include "scif_rows.h"

#define DEVMEM_PORT	2370
#define CMB_BAR		2
#define CMB_LEN		(1024 * 1024)
#define PG		4096
#define MAX_PARAM	"/sys/module/scif/parameters/max_devmem_windows"

static const char *bdf, *other;
static unsigned int dom, bus, dev, fn;
static volatile uint8_t *bar;	/* the CMB through sysfs */
static int a = -1, b = -1;	/* A owns the device window, B is its peer */

/* The BAR through sysfs, 8 bytes at a time (an MMIO region). */
static void bar_read(void *dst, size_t off, size_t len)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = *(volatile uint64_t *)(bar + off + i);

		memcpy((uint8_t *)dst + i, &v, 8);
	}
}

static void bar_write(size_t off, const void *src, size_t len)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v;

		memcpy(&v, (const uint8_t *)src + i, 8);
		*(volatile uint64_t *)(bar + off + i) = v;
	}
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), ret;

	if (fd < 0)
		return -1;
	ret = write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -1;
	close(fd);
	return ret;
}

/* What scif_devmem_test.sh did after binding: awake, decoding. */
static void wake_function(void)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/power/control",
		 bdf);
	write_str(path, "on");
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/enable", bdf);
	write_str(path, "1");
}

static int reg_pci(int epd, struct scifioctl_reg_pci *r)
{
	return ioctl(epd, SCIF_REG_PCI, r);
}

static struct scifioctl_reg_pci cmb_req(void)
{
	struct scifioctl_reg_pci r = {
		.domain = dom, .bus = bus, .devfn = dev << 3 | fn,
		.bar = CMB_BAR, .bar_offset = 0, .len = CMB_LEN,
		.prot = SCIF_PROT_READ | SCIF_PROT_WRITE,
	};
	return r;
}

struct pair_arg {
	int lep, b;
};

/* The connect waits for the accept: accepted on a thread of its own. */
static void *accept_one(void *arg)
{
	struct pair_arg *pa = arg;
	struct scif_port_id from;

	if (scif_accept(pa->lep, &from, &pa->b, SCIF_ACCEPT_SYNC) < 0)
		pa->b = -1;
	return NULL;
}

/* A connected pair through the loopback node: *pa connects to *pb. */
static int connect_pair_on(uint16_t port, int *pa, int *pb)
{
	struct scif_port_id dst = { .port = port };
	struct pair_arg arg = { .b = -1 };
	pthread_t t;
	uint16_t self;
	int err;

	if (scif_get_nodeIDs(NULL, 0, &self) < 0)
		return -1;
	dst.node = self;
	arg.lep = scif_open();
	if (arg.lep < 0 || scif_bind(arg.lep, port) < 0 ||
	    scif_listen(arg.lep, 1) < 0)
		return -1;
	if (pthread_create(&t, NULL, accept_one, &arg))
		return -1;
	*pa = scif_open();
	err = *pa < 0 || scif_connect(*pa, &dst) < 0;
	pthread_join(t, NULL);
	scif_close(arg.lep);
	*pb = arg.b;
	return err || arg.b < 0 ? -1 : 0;
}

static int connect_pair(void)
{
	return connect_pair_on(DEVMEM_PORT, &a, &b);
}

static void t_errors(void)
{
	struct scifioctl_reg_pci r;
	pid_t pid;
	int st;

	pid = fork();
	if (pid == 0) {
		r = cmb_req();
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(2);
		_exit(reg_pci(a, &r) < 0 && errno == EPERM ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	result("reg_pci_eperm_unprivileged",
	       expect(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "child status %#x", st));

	{
		static const struct {
			const char *name;
			int field, bar;
			uint64_t bar_offset, len;
			int prot, flags, reserved;
		} bad[] = {
			{ "bar6", 0, 6, 0, PG, 3, 0, 0 },
			{ "bar_upper_half", 0, 1, 0, PG, 3, 0, 0 },
			{ "offset_past_end", 0, CMB_BAR, CMB_LEN, PG, 3, 0, 0 },
			{ "range_past_end", 0, CMB_BAR, CMB_LEN - PG, 2 * PG, 3, 0, 0 },
			{ "offset_unaligned", 0, CMB_BAR, 8, PG, 3, 0, 0 },
			{ "len_zero", 0, CMB_BAR, 0, 0, 3, 0, 0 },
			{ "len_unaligned", 0, CMB_BAR, 0, 100, 3, 0, 0 },
			{ "range_wraps", 0, CMB_BAR, ~0ULL << 12, 2 * PG, 3, 0, 0 },
			{ "prot_bad", 0, CMB_BAR, 0, PG, 8, 0, 0 },
			{ "flags_bad", 0, CMB_BAR, 0, PG, 3, 4, 0 },
			{ "reserved_set", 0, CMB_BAR, 0, PG, 3, 0, 1 },
		};
		bool ok = true;

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			r = cmb_req();
			r.bar = bad[i].bar;
			r.bar_offset = bad[i].bar_offset;
			r.len = bad[i].len;
			r.prot = bad[i].prot;
			r.flags = bad[i].flags;
			r.reserved0 = bad[i].reserved;
			errno = 0;
			ok &= expect(reg_pci(a, &r) < 0 && errno == EINVAL,
				     "%s: errno %d", bad[i].name, errno);
		}
		result("reg_pci_einval", ok);
	}

	r = cmb_req();
	r.bus = 0xfe;
	errno = 0;
	result("reg_pci_enodev_no_function",
	       expect(reg_pci(a, &r) < 0 && errno == ENODEV, "errno %d", errno));

	if (other && !*other && getenv("SCIF_DEVMEM_DMA")) {
		/* scif_devmem_dma.sh: every other driver is unloaded. */
		nr_test++;
		printf("ok %d reg_pci_ebusy_other_driver # SKIP no function bound to another driver in the DMA run\n",
		       nr_test);
	} else if (other) {
		unsigned int d2, b2, v2, f2;

		if (sscanf(other, "%x:%x:%x.%x", &d2, &b2, &v2, &f2) != 4) {
			expect(false, "SCIF_DEVMEM_OTHER %s", other);
			result("reg_pci_ebusy_other_driver", false);
		} else {
			r = cmb_req();
			r.domain = d2;
			r.bus = b2;
			r.devfn = v2 << 3 | f2;
			errno = 0;
			result("reg_pci_ebusy_other_driver",
			       expect(reg_pci(a, &r) < 0 && errno == EBUSY,
				      "%s: errno %d", other, errno));
		}
	}

	errno = 0;
	result("reg_pci_efault",
	       expect(ioctl(a, SCIF_REG_PCI, (void *)8) < 0 && errno == EFAULT,
		      "errno %d", errno));
}

/*
 * libscif's scif_register_pci(): the function by its sysfs name, a page
 * of the CMB as a window that B writes into; names that are not a PCI
 * function's, a BAR out of range, EINVAL before any ioctl.
 */
static void t_libscif(void)
{
	static const char *const bad[] = {
		"", "zz", "0000:00:04", "00:20.0", "00:04.8", "0000:00:04.0x",
		"10000:00:04.0", "0x0:00:04.0", " 00:04.0",
	};
	uint8_t want[PG], got[PG];
	char shortname[16];
	off_t off;
	long d;

	fill(want, PG, 9);
	errno = 0;
	off = scif_register_pci(a, bdf, CMB_BAR, PG, PG, 0,
				SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	d = off >= 0 ? scif_vwriteto(b, want, PG, off, SCIF_RMA_SYNC) : -1;
	bar_read(got, PG, PG);
	expect(off >= 0, "register %s: errno %d", bdf, errno);
	expect(d == 0, "vwriteto: errno %d", errno);
	expect(differs(want, got, PG) < 0, "byte %ld differs",
	       differs(want, got, PG));
	if (off >= 0)
		expect(!scif_unregister(a, off, PG), "unregister: errno %d",
		       errno);
	if (dom == 0) {
		/* The short name of domain 0 names the same function. */
		snprintf(shortname, sizeof(shortname), "%02x:%02x.%x", bus,
			 dev, fn);
		off = scif_register_pci(a, shortname, CMB_BAR, 0, PG, 0,
					SCIF_PROT_READ, 0);
		expect(off >= 0, "register %s: errno %d", shortname, errno);
		if (off >= 0)
			scif_unregister(a, off, PG);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		off = scif_register_pci(a, bad[i], CMB_BAR, 0, PG, 0,
					SCIF_PROT_READ, 0);
		expect(off == SCIF_REGISTER_FAILED && errno == EINVAL,
		       "name '%s': %lld errno %d", bad[i], (long long)off,
		       errno);
	}
	errno = 0;
	off = scif_register_pci(a, NULL, CMB_BAR, 0, PG, 0, SCIF_PROT_READ, 0);
	expect(off == SCIF_REGISTER_FAILED && errno == EINVAL,
	       "NULL name: errno %d", errno);
	off = scif_register_pci(a, bdf, 6, 0, PG, 0, SCIF_PROT_READ, 0);
	expect(off == SCIF_REGISTER_FAILED && errno == EINVAL,
	       "BAR 6: errno %d", errno);
	result("libscif_register_pci", !why[0]);
}

#define SERVE_PAIRS	12
#define SERVE_SLICE	(CMB_LEN / 16)
#define SERVE_ROUNDS	4
/* SCIF_NODE_DEFER_MAX of scif_nodes.c: serve items under way per node. */
#define SERVE_MAX	8

struct serve_arg {
	int a, b;
	off_t dw;
	uint8_t *buf;
	long ret;
	int err;
};

static void *serve_writer(void *arg)
{
	struct serve_arg *sa = arg;

	for (int k = 0; k < SERVE_ROUNDS && !sa->ret; k++) {
		sa->ret = scif_vwriteto(sa->b, sa->buf, SERVE_SLICE, sa->dw,
					SCIF_RMA_SYNC);
		sa->err = errno;
	}
	return NULL;
}

/* Pairs, each A with a slice of the CMB as its device window. */
static bool serve_setup(struct serve_arg *sa)
{
	struct scifioctl_reg_pci r;
	int i;

	for (i = 0; i < SERVE_PAIRS; i++)
		sa[i].a = sa[i].b = -1;
	for (i = 0; i < SERVE_PAIRS; i++) {
		if (connect_pair_on(DEVMEM_PORT + 1 + i, &sa[i].a, &sa[i].b))
			return expect(false, "pair %d: errno %d", i, errno);
		r = cmb_req();
		r.bar_offset = (uint64_t)i * SERVE_SLICE;
		r.len = SERVE_SLICE;
		if (reg_pci(sa[i].a, &r))
			return expect(false, "reg_pci %d: errno %d", i, errno);
		sa[i].dw = r.out_offset;
		sa[i].buf = malloc(SERVE_SLICE);
		if (!sa[i].buf)
			return expect(false, "malloc");
		fill(sa[i].buf, SERVE_SLICE, 100 + i);
	}
	return true;
}

/*
 * Serve items (devices.rst, "The owner's copy engine serves staged
 * device windows"): SERVE_PAIRS peers write into as many device windows
 * (slices of the CMB) at once.  Every byte lands, the node counts what
 * it served (stage_served_*), and no more than SERVE_MAX requests of
 * the node were ever under way (max_deferred_<node> of <debugfs>/scif/
 * stats; scif_devmem_dma.sh runs this with rma_stage_bufs=16, so the
 * initiator sends more than that at once).  With SCIF_DEVMEM_DMA=1 (a
 * DMA channel loaded) the items copy by DMA.
 */
static void t_serve(void)
{
	struct serve_arg sa[SERVE_PAIRS] = { 0 };
	uint8_t *got = malloc(SERVE_SLICE);
	long before, dma, served, maxd, bad;
	pthread_t t[SERVE_PAIRS];
	bool ok = got && serve_setup(sa);
	char key[32];
	uint16_t self = 0;
	int i, n;

	before = served_bytes();
	dma = rma_stat("stage_served_dma");
	for (n = 0; ok && n < SERVE_PAIRS; n++)
		if (pthread_create(&t[n], NULL, serve_writer, &sa[n]))
			break;
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	served = served_bytes() - before;
	dma = rma_stat("stage_served_dma") - dma;
	ok = ok && expect(n == SERVE_PAIRS, "%d threads", n);
	for (i = 0; ok && i < SERVE_PAIRS; i++) {
		ok = expect(sa[i].ret == 0, "pair %d: ret %ld errno %d", i,
			    sa[i].ret, sa[i].err);
		bar_read(got, (size_t)i * SERVE_SLICE, SERVE_SLICE);
		bad = differs(sa[i].buf, got, SERVE_SLICE);
		ok = ok && expect(bad < 0, "pair %d: byte %ld differs", i, bad);
	}
	result("serve_items_concurrent_bytes", ok);
	result("serve_items_counted",
	       expect(served == (long)SERVE_PAIRS * SERVE_ROUNDS * SERVE_SLICE,
		      "stage_served_* moved by %ld", served));
	scif_get_nodeIDs(NULL, 0, &self);
	snprintf(key, sizeof(key), "max_deferred_%u", self);
	maxd = debugfs_stat("stats", key);
	printf("# %s %ld, stage_served_dma moved by %ld\n", key, maxd, dma);
	result("serve_items_bounded",
	       expect(maxd >= 1 && maxd <= SERVE_MAX, "%s %ld", key, maxd));
	if (getenv("SCIF_DEVMEM_DMA"))
		result("serve_items_by_dma",
		       expect(dma > 0 && dma <= served,
			      "stage_served_dma moved by %ld of %ld", dma,
			      served));
	for (i = 0; i < SERVE_PAIRS; i++) {
		if (sa[i].a >= 0)
			scif_close(sa[i].a);
		if (sa[i].b >= 0)
			scif_close(sa[i].b);
		free(sa[i].buf);
	}
	free(got);
}

static void t_rma(void)
{
	struct scifioctl_reg_pci r = cmb_req();
	uint8_t *want = malloc(CMB_LEN), *got = malloc(CMB_LEN);
	uint8_t *win = mmap(NULL, CMB_LEN, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	off_t dw, bw;
	long d, staged, served, dmab;
	uint64_t v;
	void *m;

	if (!want || !got || win == MAP_FAILED)
		exit(1);
	errno = 0;
	result("reg_pci_cmb",
	       expect(reg_pci(a, &r) == 0 && r.out_offset >= 0,
		      "errno %d offset %lld", errno, (long long)r.out_offset));
	dw = r.out_offset;
	bw = scif_register(b, win, CMB_LEN, 0,
			   SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	if (!expect(bw >= 0, "register B: errno %d", errno)) {
		result("register_peer_window", false);
		return;
	}

	/* B writes into the device window from a buffer. */
	fill(want, CMB_LEN, 1);
	errno = 0;
	staged = rma_stat("staged_bytes");
	served = served_bytes();
	d = scif_vwriteto(b, want, CMB_LEN, dw, SCIF_RMA_SYNC);
	bar_read(got, 0, CMB_LEN);
	staged = rma_stat("staged_bytes") - staged;
	served = served_bytes() - served;
	result("vwriteto_device_window",
	       expect(d == 0, "errno %d", errno) &&
	       expect(staged == CMB_LEN, "staged_bytes moved by %ld", staged) &&
	       expect(served == CMB_LEN, "stage_served_* moved by %ld",
		      served) &&
	       expect(differs(want, got, CMB_LEN) < 0, "byte %ld differs",
		      differs(want, got, CMB_LEN)));

	/* B reads it back into a buffer. */
	fill(want, CMB_LEN, 2);
	bar_write(0, want, CMB_LEN);
	memset(got, 0, CMB_LEN);
	served = served_bytes();
	d = scif_vreadfrom(b, got, CMB_LEN, dw, SCIF_RMA_SYNC);
	served = served_bytes() - served;
	result("vreadfrom_device_window",
	       expect(d == 0, "errno %d", errno) &&
	       expect(served == CMB_LEN, "stage_served_* moved by %ld",
		      served) &&
	       expect(differs(want, got, CMB_LEN) < 0, "byte %ld differs",
		      differs(want, got, CMB_LEN)));

	/* Unaligned, short, inside a page. */
	fill(want, 200, 3);
	d = scif_vwriteto(b, want, 100, dw + PG + 13, SCIF_RMA_SYNC);
	bar_read(got, PG, 2 * PG);
	result("vwriteto_device_window_unaligned",
	       expect(d == 0, "errno %d", errno) &&
	       expect(differs(want, got + 13, 100) < 0, "byte %ld differs",
		      differs(want, got + 13, 100)));

	/* B's window into the device window and back. */
	fill(win, CMB_LEN, 4);
	d = scif_writeto(b, bw, CMB_LEN, dw, SCIF_RMA_SYNC);
	bar_read(got, 0, CMB_LEN);
	result("writeto_device_window",
	       expect(d == 0, "errno %d", errno) &&
	       expect(differs(win, got, CMB_LEN) < 0, "byte %ld differs",
		      differs(win, got, CMB_LEN)));
	fill(want, CMB_LEN, 5);
	bar_write(0, want, CMB_LEN);
	d = scif_readfrom(b, bw, CMB_LEN, dw, SCIF_RMA_SYNC);
	result("readfrom_device_window",
	       expect(d == 0, "errno %d", errno) &&
	       expect(differs(want, win, CMB_LEN) < 0, "byte %ld differs",
		      differs(want, win, CMB_LEN)));

	/* A's device window as the local side, B's RAM window remote. */
	fill(want, CMB_LEN, 6);
	bar_write(0, want, CMB_LEN);
	dmab = rma_stat("dma_bytes");
	d = scif_writeto(a, dw, CMB_LEN, bw, SCIF_RMA_SYNC);
	result("writeto_from_local_device_window",
	       expect(d == 0, "errno %d", errno) &&
	       expect(differs(want, win, CMB_LEN) < 0, "byte %ld differs",
		      differs(want, win, CMB_LEN)));
	fill(win, CMB_LEN, 7);
	d = scif_readfrom(a, dw, CMB_LEN, bw, SCIF_RMA_SYNC);
	bar_read(got, 0, CMB_LEN);
	result("readfrom_into_local_device_window",
	       expect(d == 0, "errno %d", errno) &&
	       expect(differs(win, got, CMB_LEN) < 0, "byte %ld differs",
		      differs(win, got, CMB_LEN)));
	/* With a channel, the copy engine's MMIO DMA path did both. */
	dmab = rma_stat("dma_bytes") - dmab;
	if (getenv("SCIF_DEVMEM_DMA"))
		result("local_device_window_by_dma",
		       expect(dmab == 2 * CMB_LEN, "dma_bytes moved by %ld",
			      dmab));

	/* Fence signals into the device window, by the peer and locally. */
	d = scif_fence_signal(b, 0, 0, dw + 64, 0x5c1f36a1b2c3d4e5ULL,
			      SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_REMOTE);
	bar_read(&v, 64, 8);
	result("fence_signal_remote_device_window",
	       expect(d == 0, "errno %d", errno) &&
	       expect(v == 0x5c1f36a1b2c3d4e5ULL, "read %#llx",
		      (unsigned long long)v));
	d = scif_fence_signal(a, dw + 128, 0x0123456789abcdefULL, 0, 0,
			      SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL);
	bar_read(&v, 128, 8);
	result("fence_signal_local_device_window",
	       expect(d == 0, "errno %d", errno) &&
	       expect(v == 0x0123456789abcdefULL, "read %#llx",
		      (unsigned long long)v));

	/* The peer cannot map a device window (staged). */
	errno = 0;
	m = scif_mmap(NULL, PG, SCIF_PROT_READ, 0, b, dw);
	result("remote_mmap_enxio",
	       expect(m == MAP_FAILED && errno == ENXIO, "errno %d", errno));
	if (m != MAP_FAILED)
		munmap(m, PG);

	/* max_devmem_windows: one is registered, so a second is over 1. */
	if (write_str(MAX_PARAM, "1") == 0) {
		struct scifioctl_reg_pci r2 = cmb_req();

		r2.len = PG;
		errno = 0;
		d = reg_pci(a, &r2);
		result("reg_pci_eagain_max_devmem_windows",
		       expect(d < 0 && errno == EAGAIN, "ret %ld errno %d", d,
			      errno));
		write_str(MAX_PARAM, "64");
	} else {
		expect(false, "cannot write %s", MAX_PARAM);
		result("reg_pci_eagain_max_devmem_windows", false);
	}

	/* vfio-pci unbound with the window registered: it goes first. */
	{
		char path[128];

		snprintf(path, sizeof(path),
			 "/sys/bus/pci/devices/%s/driver/unbind", bdf);
		result("unbind_with_window",
		       expect(write_str(path, bdf) == 0, "unbind: errno %d",
			      errno));
	}
	errno = 0;
	d = scif_vwriteto(b, want, PG, dw, SCIF_RMA_SYNC);
	result("rma_after_unbind_enxio",
	       expect(d < 0 && errno == ENXIO, "ret %ld errno %d", d, errno));
	errno = 0;
	d = scif_unregister(a, dw, CMB_LEN);
	result("unregister_after_unbind_enxio",
	       expect(d < 0 && errno == ENXIO, "ret %ld errno %d", d, errno));
	r = cmb_req();
	errno = 0;
	result("reg_pci_ebusy_unbound",
	       expect(reg_pci(a, &r) < 0 && errno == EBUSY, "errno %d", errno));

	/* Bound again (driver_override): a window again, closed with A. */
	write_str("/sys/bus/pci/drivers_probe", bdf);
	wake_function();
	r = cmb_req();
	errno = 0;
	d = reg_pci(a, &r);
	fill(want, PG, 8);
	if (d == 0)
		d = scif_vwriteto(b, want, PG, r.out_offset, SCIF_RMA_SYNC);
	bar_read(got, 0, PG);
	result("reg_pci_after_rebind",
	       expect(d == 0, "errno %d", errno) &&
	       expect(differs(want, got, PG) < 0, "byte %ld differs",
		      differs(want, got, PG)));
	scif_unregister(b, bw, CMB_LEN);
	munmap(win, CMB_LEN);
	free(want);
	free(got);
}

int main(void)
{
	char path[128];
	int fd;

	printf("TAP version 13\n");
	alarm(300);	/* a hang is a failure, not the cluster's timeout */
	bdf = getenv("SCIF_DEVMEM_BDF");
	other = getenv("SCIF_DEVMEM_OTHER");
	if (!bdf || sscanf(bdf, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4) {
		printf("1..0 # SKIP no SCIF_DEVMEM_BDF\n");
		return 4;
	}
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource%d", bdf,
		 CMB_BAR);
	fd = open(path, O_RDWR | O_SYNC);
	bar = fd < 0 ? MAP_FAILED : mmap(NULL, CMB_LEN, PROT_READ | PROT_WRITE,
					 MAP_SHARED, fd, 0);
	if (bar == MAP_FAILED || connect_pair()) {
		printf("1..1\nnot ok 1 devmem_setup # %s: errno %d\n", path,
		       errno);
		return 1;
	}
	{
		/* The BAR decodes (else every comparison would be moot). */
		uint64_t v = 0x5c1f36005c1f3600ULL, w;

		bar_write(CMB_LEN - 8, &v, 8);
		bar_read(&w, CMB_LEN - 8, 8);
		if (w != v) {
			printf("1..1\nnot ok 1 devmem_setup # BAR 2 does not hold what is written: %#llx\n",
			       (unsigned long long)w);
			return 1;
		}
	}
	t_errors();
	t_libscif();
	t_serve();
	t_rma();
	scif_close(a);
	scif_close(b);
	printf("1..%d\n", nr_test);
	return nr_fail ? 1 : 0;
}
