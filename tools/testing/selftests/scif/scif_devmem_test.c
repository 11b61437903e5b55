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

#define DEVMEM_PORT	2370
#define CMB_BAR		2
#define CMB_LEN		(1024 * 1024)
#define PG		4096
#define MAX_PARAM	"/sys/module/scif/parameters/max_devmem_windows"

static const char *bdf, *other;
static unsigned int dom, bus, dev, fn;
static int nr_test, nr_fail;
static char why[256];
static volatile uint8_t *bar;	/* the CMB through sysfs */
static int a = -1, b = -1;	/* A owns the device window, B is its peer */

static void result(const char *name, bool ok)
{
	nr_test++;
	if (ok) {
		printf("ok %d %s\n", nr_test, name);
	} else {
		nr_fail++;
		printf("not ok %d %s # %s\n", nr_test, name, why);
	}
	fflush(stdout);
	why[0] = '\0';
}

static bool expect(bool cond, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (cond)
		return true;
	n = strlen(why);
	if (n < sizeof(why) - 2) {
		if (n)
			strcat(why, "; ");
		va_start(ap, fmt);
		vsnprintf(why + strlen(why), sizeof(why) - strlen(why), fmt, ap);
		va_end(ap);
	}
	return false;
}

static void fill(uint8_t *p, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++) {
		seed = seed * 1103515245 + 12345;
		p[i] = seed >> 16;
	}
}

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

/* First differing byte of two buffers, or -1. */
static long differs(const uint8_t *x, const uint8_t *y, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (x[i] != y[i])
			return (long)i;
	return -1;
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

/* A field of <debugfs>/scif/rma, or -1. */
static long rma_stat(const char *key)
{
	char buf[2048], *p;
	int fd = open("/sys/kernel/debug/scif/rma", O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, key);
	return p ? atol(p + strlen(key) + 1) : -1;
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

static int listen_epd = -1;

/* The connect waits for the accept: accepted on a thread of its own. */
static void *accept_one(void *arg)
{
	struct scif_port_id from;

	(void)arg;
	if (scif_accept(listen_epd, &from, &b, SCIF_ACCEPT_SYNC) < 0)
		b = -1;
	return NULL;
}

static int connect_pair(void)
{
	struct scif_port_id dst = { .port = DEVMEM_PORT };
	pthread_t t;
	uint16_t self;
	int err;

	if (scif_get_nodeIDs(NULL, 0, &self) < 0)
		return -1;
	dst.node = self;
	listen_epd = scif_open();
	if (listen_epd < 0 || scif_bind(listen_epd, DEVMEM_PORT) < 0 ||
	    scif_listen(listen_epd, 1) < 0)
		return -1;
	if (pthread_create(&t, NULL, accept_one, NULL))
		return -1;
	a = scif_open();
	err = a < 0 || scif_connect(a, &dst) < 0;
	pthread_join(t, NULL);
	scif_close(listen_epd);
	return err || b < 0 ? -1 : 0;
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

	if (other) {
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

static void t_rma(void)
{
	struct scifioctl_reg_pci r = cmb_req();
	uint8_t *want = malloc(CMB_LEN), *got = malloc(CMB_LEN);
	uint8_t *win = mmap(NULL, CMB_LEN, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	off_t dw, bw;
	long d, staged;
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
	d = scif_vwriteto(b, want, CMB_LEN, dw, SCIF_RMA_SYNC);
	bar_read(got, 0, CMB_LEN);
	staged = rma_stat("staged_bytes") - staged;
	result("vwriteto_device_window",
	       expect(d == 0, "errno %d", errno) &&
	       expect(staged == CMB_LEN, "staged_bytes moved by %ld", staged) &&
	       expect(differs(want, got, CMB_LEN) < 0, "byte %ld differs",
		      differs(want, got, CMB_LEN)));

	/* B reads it back into a buffer. */
	fill(want, CMB_LEN, 2);
	bar_write(0, want, CMB_LEN);
	memset(got, 0, CMB_LEN);
	d = scif_vreadfrom(b, got, CMB_LEN, dw, SCIF_RMA_SYNC);
	result("vreadfrom_device_window",
	       expect(d == 0, "errno %d", errno) &&
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
	t_rma();
	scif_close(a);
	scif_close(b);
	printf("1..%d\n", nr_test);
	return nr_fail ? 1 : 0;
}
