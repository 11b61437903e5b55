// SPDX-License-Identifier: GPL-2.0
/*
 * Device list and borrow bookkeeping (Documentation/scif/devices.rst,
 * "Borrowing a device"), on both nodes of a 2-node cluster at once, each
 * lending one PCI function bound to scif_lend (scif_lend_test.sh binds
 * it and gives its PCI name in SCIF_LEND_BDF, and in SCIF_LEND_RESET
 * whether the kernel has a reset method for it).
 *
 * First each node alone, on its own function through the loopback
 * node: the list and its filters, exclusive and shared borrows and
 * their EBUSY rules, returns (the function reset, or dirty when it has
 * no reset method), stale and unknown fdids, EINVAL, EFAULT, EPERM for
 * uid 65534, the borrow file's poll and SCIF_DEV_INFO after the lender
 * withdraws (unbind).  Then, in step with the other node (a SCIF
 * connection as barrier), each borrows the other's function: listing
 * every node, exclusivity seen on the lender, withdrawal across nodes
 * and a return across nodes.
 *
 * One TAP line per check; a failed check says what it saw.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include "scif.h"

#define LEND_PORT	2360
#define EDU_VENDOR	0x1234
#define EDU_DEVICE	0x11e8
#define EDU_CLASS	0x00ff00
#define EDU_BAR0	(1024 * 1024)

static const char *bdf;
static bool has_reset;
static uint16_t self, peer;
static int barrier_epd = -1;
static int nr_test, nr_fail;
static char why[256];

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

/* Records the first failed expectation of a check in why. */
static bool expect(bool cond, const char *fmt, ...)
{
	va_list ap;

	if (cond || why[0])
		return cond;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return cond;
}

/* The call returned -1 with errno @want. */
static bool expect_errno(long ret, int want, const char *what)
{
	int e = errno;

	return expect(ret == -1 && e == want, "%s: ret %ld errno %d (%s), want %s",
		      what, ret, ret == -1 ? e : 0, ret == -1 ? strerror(e) : "-",
		      strerror(want));
}

static const struct scif_dev_filter any = {
	.vendor = 0xffff, .device = 0xffff,
};

static int list(uint16_t node, const struct scif_dev_filter *f,
		struct scif_dev_entry *e, int max)
{
	return scif_get_device_list(node, f ? f : &any, e, max);
}

/* This node's own lent function: 0, or -1 with why set. */
static int own_entry(struct scif_dev_entry *e)
{
	int n = list(self, NULL, e, 1);

	return expect(n == 1, "own list: %d (errno %d)", n, errno) ? 0 : -1;
}

static int rebind(void)
{
	char path[128];
	int fd, ok;

	fd = open("/sys/bus/pci/drivers_probe", O_WRONLY);
	if (fd < 0)
		return -1;
	ok = write(fd, bdf, strlen(bdf)) == (ssize_t)strlen(bdf);
	close(fd);
	snprintf(path, sizeof(path), "/sys/bus/pci/drivers/scif_lend/%s", bdf);
	return ok && access(path, F_OK) == 0 ? 0 : -1;
}

static int unbind(void)
{
	int fd, ok;

	fd = open("/sys/bus/pci/drivers/scif_lend/unbind", O_WRONLY);
	if (fd < 0)
		return -1;
	ok = write(fd, bdf, strlen(bdf)) == (ssize_t)strlen(bdf);
	close(fd);
	return ok ? 0 : -1;
}

/* The state of node @node's only function once it is not resetting. */
static int settled_state(uint16_t node, struct scif_dev_entry *e)
{
	for (int i = 0; i < 50; i++) {
		if (list(node, NULL, e, 1) != 1)
			return -1;
		if (e->state != SCIF_DEV_STATE_RESETTING)
			return e->state;
		usleep(20 * 1000);
	}
	return -1;
}

/* After a full return: the state the reset truth gives, then free again. */
static bool check_returned(uint64_t fdid)
{
	struct scif_dev_entry e;
	int st = settled_state(self, &e), want;

	want = has_reset ? SCIF_DEV_STATE_FREE : SCIF_DEV_STATE_DIRTY;
	if (!expect(st == want, "state after return %d, want %d", st, want))
		return false;
	if (has_reset)
		return expect(e.borrowers == 0, "borrowers %u", e.borrowers);
	/* Dirty: not lent until bound again; then a new fdid. */
	if (!expect_errno(scif_borrow_device(fdid, 0), ENXIO, "borrow dirty"))
		return false;
	if (!expect(!unbind() && !rebind(), "rebind: %s", strerror(errno)) ||
	    own_entry(&e))
		return false;
	return expect(e.state == SCIF_DEV_STATE_FREE && e.fdid != fdid,
		      "after rebind: state %u fdid %#llx (old %#llx)", e.state,
		      (unsigned long long)e.fdid, (unsigned long long)fdid);
}

static void t_list_self(struct scif_dev_entry *e)
{
	if (!own_entry(e)) {
		expect(e->vendor == EDU_VENDOR && e->device == EDU_DEVICE,
		       "ids %04x:%04x", e->vendor, e->device);
		expect(e->pci_class == EDU_CLASS, "class %06x", e->pci_class);
		expect(e->node == self && e->fdid >> 48 == self,
		       "node %u fdid %#llx", e->node,
		       (unsigned long long)e->fdid);
		expect(!strcmp(e->name, bdf), "name '%s'", e->name);
		expect(e->nr_bars >= 1 && e->bar_size[0] == EDU_BAR0 &&
		       (e->bar_flags[0] & SCIF_DEV_BAR_MEM),
		       "bars %u bar0 %llu flags %u", e->nr_bars,
		       (unsigned long long)e->bar_size[0], e->bar_flags[0]);
		expect(e->modes == (SCIF_DEV_MODE_EXCLUSIVE |
				    SCIF_DEV_MODE_SHARED) &&
		       e->state == SCIF_DEV_STATE_FREE && !e->borrowers,
		       "modes %u state %u borrowers %u", e->modes, e->state,
		       e->borrowers);
	}
	result("list_self_fields", !why[0]);
}

static void t_filters(void)
{
	struct scif_dev_filter f = any;
	struct scif_dev_entry e[4];
	int n;

	f.pci_class = EDU_CLASS;
	f.class_mask = 0xffffff;
	n = list(self, &f, e, 4);
	expect(n == 1, "class match: %d", n);
	f.pci_class = 0x010802;
	n = list(self, &f, e, 4);
	expect(n == 0, "class 010802: %d", n);
	f = any;
	f.vendor = EDU_VENDOR;
	f.device = EDU_DEVICE;
	n = list(self, &f, e, 4);
	expect(n == 1, "vendor/device match: %d", n);
	f.vendor = 0x8086;
	n = list(self, &f, e, 4);
	expect(n == 0, "vendor 8086: %d", n);
	f = any;
	f.flags = SCIF_DEV_FREE;
	n = list(self, &f, e, 4);
	expect(n == 1, "free: %d", n);
	n = list(self, NULL, e, 0);
	expect(n == 0, "max 0: %d", n);
	result("list_filters", !why[0]);
}

static void t_list_errors(void)
{
	struct scif_dev_entry e[2];
	struct scifioctl_dev_list req;
	int fd = open("/dev/scif", O_RDWR);

	memset(&req, 0, sizeof(req));
	req.vendor = req.device = 0xffff;
	req.node = self;
	req.max = 2;
	req.entries = (uintptr_t)e;
	req.reserved0 = 1;
	expect_errno(ioctl(fd, SCIF_DEV_LIST, &req), EINVAL, "reserved0");
	req.reserved0 = 0;
	req.reserved1 = 1;
	expect_errno(ioctl(fd, SCIF_DEV_LIST, &req), EINVAL, "reserved1");
	req.reserved1 = 0;
	req.max = SCIF_DEV_LIST_MAX + 1;
	expect_errno(ioctl(fd, SCIF_DEV_LIST, &req), EINVAL, "max 1025");
	req.max = 2;
	req.flags = 2;
	expect_errno(ioctl(fd, SCIF_DEV_LIST, &req), EINVAL, "flags 2");
	req.flags = 0;
	req.pci_class = 0xff;
	req.class_mask = 0xff00;
	expect_errno(ioctl(fd, SCIF_DEV_LIST, &req), EINVAL, "class off mask");
	req.pci_class = req.class_mask = 0;
	req.node = 63;
	expect_errno(ioctl(fd, SCIF_DEV_LIST, &req), ENODEV, "node 63");
	req.node = self;
	req.entries = 8;
	expect_errno(ioctl(fd, SCIF_DEV_LIST, &req), EFAULT, "entries 8");
	expect_errno(ioctl(fd, SCIF_DEV_LIST, (void *)8), EFAULT, "arg 8");
	req.entries = (uintptr_t)e;
	expect(ioctl(fd, SCIF_DEV_LIST, &req) == 0 && req.count == 1,
	       "valid after errors: count %u", req.count);
	close(fd);
	result("list_einval_enodev_efault", !why[0]);
}

static void t_exclusive(const struct scif_dev_entry *own)
{
	struct scif_dev_filter f = any;
	struct scif_dev_entry e, l[2];
	struct pollfd p;
	void *m;
	int b, n;

	b = scif_borrow_device(own->fdid, SCIF_DEV_EXCLUSIVE);
	if (!expect(b >= 0, "borrow exclusive: %s", strerror(errno))) {
		result("borrow_exclusive", false);
		return;
	}
	expect_errno(scif_borrow_device(own->fdid, SCIF_DEV_EXCLUSIVE), EBUSY,
		     "second exclusive");
	expect_errno(scif_borrow_device(own->fdid, 0), EBUSY, "shared");
	expect(!scif_get_device_info(b, &e) && e.fdid == own->fdid &&
	       e.state == SCIF_DEV_STATE_EXCLUSIVE && e.borrowers == 1,
	       "info: fdid %#llx state %u borrowers %u",
	       (unsigned long long)e.fdid, e.state, e.borrowers);
	f.flags = SCIF_DEV_FREE;
	n = list(self, &f, l, 2);
	expect(n == 0, "free while borrowed: %d", n);
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, b, 0);
	expect(m == MAP_FAILED && errno == ENXIO, "mmap: %p errno %d", m,
	       errno);
	p = (struct pollfd){ .fd = b, .events = POLLIN };
	n = poll(&p, 1, 0);
	expect(n == 0, "poll while active: %d revents %#x", n, p.revents);
	expect(fcntl(b, F_GETFD) == FD_CLOEXEC, "not close-on-exec");
	result("borrow_exclusive", !why[0]);

	expect(!scif_return_device(b), "close: %s", strerror(errno));
	check_returned(own->fdid);
	result("return_exclusive", !why[0]);
}

static void t_shared(void)
{
	struct scif_dev_entry own, e;
	int b1, b2;

	if (own_entry(&own)) {
		result("borrow_shared", false);
		return;
	}
	b1 = scif_borrow_device(own.fdid, 0);
	b2 = scif_borrow_device(own.fdid, 0);
	expect(b1 >= 0 && b2 >= 0, "shared borrows: %d %d (%s)", b1, b2,
	       strerror(errno));
	expect_errno(scif_borrow_device(own.fdid, SCIF_DEV_EXCLUSIVE), EBUSY,
		     "exclusive over shared");
	expect(!scif_get_device_info(b1, &e) &&
	       e.state == SCIF_DEV_STATE_SHARED && e.borrowers == 2,
	       "info: state %u borrowers %u", e.state, e.borrowers);
	if (b1 >= 0)
		scif_return_device(b1);
	expect(!own_entry(&e) && e.state == SCIF_DEV_STATE_SHARED &&
	       e.borrowers == 1, "after one return: state %u borrowers %u",
	       e.state, e.borrowers);
	if (b2 >= 0)
		scif_return_device(b2);
	check_returned(own.fdid);
	result("borrow_shared", !why[0]);
}

static void t_borrow_errors(uint64_t stale)
{
	struct scifioctl_dev_borrow req;
	struct scif_dev_entry own;
	int fd = open("/dev/scif", O_RDWR);

	if (own_entry(&own)) {
		result("borrow_enoent_einval_efault", false);
		close(fd);
		return;
	}
	if (stale != own.fdid)
		expect_errno(scif_borrow_device(stale, 0), ENOENT,
			     "stale fdid");
	expect_errno(scif_borrow_device(own.fdid | 0xffffffffULL, 0), ENOENT,
		     "unknown index");
	expect_errno(scif_borrow_device(own.fdid ^ (1ULL << 32), 0), ENOENT,
		     "other epoch");
	expect_errno(scif_borrow_device((uint64_t)63 << 48, 0), ENODEV,
		     "node 63");
	expect_errno(scif_borrow_device(own.fdid, 2), EINVAL, "flags 2");
	memset(&req, 0, sizeof(req));
	req.fdid = own.fdid;
	req.reserved = 1;
	expect_errno(ioctl(fd, SCIF_DEV_BORROW, &req), EINVAL, "reserved");
	expect_errno(ioctl(fd, SCIF_DEV_BORROW, (void *)8), EFAULT, "arg 8");
	close(fd);
	expect(!own_entry(&own) && own.state == SCIF_DEV_STATE_FREE &&
	       !own.borrowers, "after errors: state %u borrowers %u",
	       own.state, own.borrowers);
	result("borrow_enoent_einval_efault", !why[0]);
}

/* uid 65534: the list works, a borrow is EPERM. */
static void t_unprivileged(void)
{
	struct scif_dev_entry own;
	int status = -1;
	pid_t pid;

	if (own_entry(&own)) {
		result("unprivileged_eperm", false);
		return;
	}
	pid = fork();
	if (pid == 0) {
		struct scif_dev_entry e;

		if (setgid(65534) || setuid(65534))
			_exit(10);
		if (list(self, NULL, &e, 1) != 1 || e.fdid != own.fdid)
			_exit(11);
		if (scif_borrow_device(own.fdid, 0) != -1 || errno != EPERM)
			_exit(12);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	expect(WIFEXITED(status) && !WEXITSTATUS(status),
	       "child status %#x (10 setuid, 11 list, 12 not EPERM)", status);
	result("unprivileged_eperm", !why[0]);
}

/* Unbind under a borrow: the borrow file reports the loss. */
static bool lost_borrow_in(int b, const char *what, int ms)
{
	struct pollfd p = { .fd = b, .events = POLLIN };
	struct scif_dev_entry e;
	int n = poll(&p, 1, ms);

	expect(n == 1 && (p.revents & (POLLERR | POLLHUP)) ==
	       (POLLERR | POLLHUP), "%s: poll %d revents %#x", what, n,
	       p.revents);
	return expect_errno(scif_get_device_info(b, &e), ENODEV, what);
}

static bool lost_borrow(int b, const char *what)
{
	return lost_borrow_in(b, what, 10000);
}

static void t_withdraw_local(void)
{
	struct scif_dev_entry own;
	int b;

	if (own_entry(&own)) {
		result("withdraw_local", false);
		return;
	}
	b = scif_borrow_device(own.fdid, SCIF_DEV_EXCLUSIVE);
	if (expect(b >= 0, "borrow: %s", strerror(errno))) {
		expect(!unbind(), "unbind: %s", strerror(errno));
		lost_borrow(b, "withdrawn");
		scif_return_device(b);
	}
	expect(!rebind() && !own_entry(&own) &&
	       own.state == SCIF_DEV_STATE_FREE, "rebound: state %u",
	       own.state);
	result("withdraw_local", !why[0]);
}

/* ---- Budgets (module parameters) ---- */

static int param_write(const char *name, unsigned int v)
{
	char path[128], val[16];
	int fd, ok;

	snprintf(path, sizeof(path), "/sys/module/scif/parameters/%s", name);
	snprintf(val, sizeof(val), "%u", v);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok ? 0 : -1;
}

/*
 * Each budget at 1, then a second shared borrow of the same function:
 * EAGAIN from the lender's per-function and per-node budgets and from
 * this node's own; the budgets back at their defaults afterwards.
 */
static void t_budgets(void)
{
	static const struct { const char *name; unsigned int def; } p[] = {
		{ "max_dev_borrowers", 16 },
		{ "max_borrows_per_node", 64 },
		{ "max_dev_borrows", 256 },
	};
	struct scif_dev_entry own, e;
	int b1, b2;

	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
		if (own_entry(&own))
			break;
		if (!expect(!param_write(p[i].name, 1), "%s=1: %s", p[i].name,
			    strerror(errno)))
			break;
		b1 = scif_borrow_device(own.fdid, 0);
		expect(b1 >= 0, "%s: first borrow: %s", p[i].name,
		       strerror(errno));
		b2 = scif_borrow_device(own.fdid, 0);
		if (!expect_errno(b2, EAGAIN, p[i].name) && b2 >= 0)
			scif_return_device(b2);
		expect(!own_entry(&e) && e.borrowers == (b1 >= 0),
		       "%s: borrowers %u", p[i].name, e.borrowers);
		expect(!param_write(p[i].name, p[i].def), "%s back: %s",
		       p[i].name, strerror(errno));
		if (b1 >= 0)
			scif_return_device(b1);
		check_returned(own.fdid);
	}
	result("budgets_eagain", !why[0]);
}

/* ---- The attributes scif_modes and scif_nodes ---- */

/* Writes @val to the function's attribute @name: 0, or -1 with errno. */
static int attr_write(const char *name, const char *val)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", bdf, name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	if (n < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/* The attribute's value, without its newline, in @buf ("" if unread). */
static const char *attr_read(const char *name, char *buf, size_t len)
{
	char path[128];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", bdf, name);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return buf;
}

/* Modes and nodes on this node's own function, through loopback. */
static void t_attributes(void)
{
	struct scif_dev_entry own, e;
	char v[64], only_peer[8];
	int b, n;

	if (own_entry(&own)) {
		result("attr_modes_nodes", false);
		return;
	}
	expect(!strcmp(attr_read("scif_modes", v, sizeof(v)),
		       "exclusive shared"), "scif_modes '%s'", v);
	expect(!strcmp(attr_read("scif_nodes", v, sizeof(v)), "0-63"),
	       "scif_nodes '%s'", v);
	expect(!attr_write("scif_modes", "shared\n"), "modes shared: %s",
	       strerror(errno));
	expect(!own_entry(&e) && e.modes == SCIF_DEV_MODE_SHARED,
	       "listed modes %u", e.modes);
	expect_errno(scif_borrow_device(own.fdid, SCIF_DEV_EXCLUSIVE), EACCES,
		     "exclusive, shared only");
	expect(!attr_write("scif_modes", "exclusive"), "modes exclusive: %s",
	       strerror(errno));
	expect_errno(scif_borrow_device(own.fdid, 0), EACCES,
		     "shared, exclusive only");
	expect_errno(attr_write("scif_modes", "both"), EINVAL, "modes both");
	expect_errno(attr_write("scif_modes", "\n"), EINVAL, "modes empty");
	expect_errno(attr_write("scif_nodes", "64"), EINVAL, "nodes 64");
	expect_errno(attr_write("scif_nodes", "x"), EINVAL, "nodes x");
	snprintf(only_peer, sizeof(only_peer), "%u", peer);
	expect(!attr_write("scif_nodes", only_peer), "nodes %s: %s", only_peer,
	       strerror(errno));
	expect(!strcmp(attr_read("scif_nodes", v, sizeof(v)), only_peer),
	       "scif_nodes '%s', want '%s'", v, only_peer);
	n = list(self, NULL, &e, 1);
	expect(n == 0, "listed to a node not offered it: %d", n);
	expect_errno(scif_borrow_device(own.fdid, SCIF_DEV_EXCLUSIVE), EACCES,
		     "borrow, node not offered it");
	expect(!attr_write("scif_nodes", "all") &&
	       !attr_write("scif_modes", "exclusive, shared"),
	       "back to all, both: %s", strerror(errno));
	result("attr_modes_nodes", !why[0]);

	/* A write that would take a current borrow's grant away: EBUSY. */
	b = scif_borrow_device(own.fdid, 0);
	if (expect(b >= 0, "shared borrow: %s", strerror(errno))) {
		expect_errno(attr_write("scif_modes", "exclusive"), EBUSY,
			     "modes exclusive under a shared borrow");
		expect_errno(attr_write("scif_nodes", only_peer), EBUSY,
			     "nodes without the borrower");
		expect(!attr_write("scif_modes", "shared") &&
		       !attr_write("scif_nodes", "0-63"),
		       "writes keeping the borrow: %s", strerror(errno));
		expect(!own_entry(&e) && e.modes == SCIF_DEV_MODE_SHARED &&
		       e.borrowers == 1, "modes %u borrowers %u", e.modes,
		       e.borrowers);
		scif_return_device(b);
	}
	check_returned(own.fdid);
	/* Bound again (or reset): a new scif_lent, the defaults again. */
	if (!has_reset)
		expect(!strcmp(attr_read("scif_modes", v, sizeof(v)),
			       "exclusive shared"), "rebound scif_modes '%s'", v);
	else
		attr_write("scif_modes", "exclusive shared");
	result("attr_ebusy_under_borrow", !why[0]);
}

/* ---- Forged DEV_* messages (the test build's forge hook) ---- */

#define DBG		"/sys/kernel/debug/scif/"
#define OP_LIST		19	/* SCIF_MSG_DEV_LIST, scif_proto.h */

static int stat_of(const char *name)
{
	char buf[512], *p;
	int fd = open(DBG "stats", O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, name);
	return p ? atoi(p + strlen(name) + 1) : -1;
}

/* Send this node a DEV_* message (op DEV_LIST + @k) as a peer could. */
static int forge(int k, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3)
{
	char buf[256];
	int fd = open(DBG "forge", O_WRONLY), ok;

	if (fd < 0)
		return -1;
	snprintf(buf, sizeof(buf), "%u %u 0 0 %llx %llx %llx %llx 0", self,
		 OP_LIST + k, (unsigned long long)a0, (unsigned long long)a1,
		 (unsigned long long)a2, (unsigned long long)a3);
	ok = write(fd, buf, strlen(buf)) == (ssize_t)strlen(buf);
	close(fd);
	return ok ? 0 : -1;
}

/* dropped_msgs reaches @want within 2 s and stays there. */
static bool dropped_settles(int want)
{
	int n = -1;

	for (int i = 0; i < 100; i++) {
		n = stat_of("dropped_msgs");
		if (n >= want)
			break;
		usleep(20 * 1000);
	}
	usleep(100 * 1000);
	n = stat_of("dropped_msgs");
	return expect(n == want, "dropped_msgs %d, want %d", n, want);
}

/*
 * Answers with no request, a withdrawal and a return of borrows that do
 * not exist, a bad borrow and a bad filter: each dropped and counted
 * (the lender's answers to the last four too); nothing fails the node.
 * Then a borrow whose answer never reached a request (as after a
 * timeout) is given back by its token alone.
 */
static void t_forged(void)
{
	int d0 = stat_of("dropped_msgs"), f0 = stat_of("node_failures");
	struct scif_dev_entry own;
	bool sent;

	if (own_entry(&own) || !expect(d0 >= 0, "no %sstats", DBG)) {
		result("forged_messages_dropped", false);
		result("forged_borrow_returned_by_token", false);
		return;
	}
	sent = !forge(1, 999999, 0, 0, 0) &&		/* LIST_ACK */
	       !forge(3, 999999, 5, 0, 0) &&		/* BORROW_ACK */
	       !forge(6, 1, own.fdid, 777, 5) &&	/* WITHDRAW */
	       !forge(4, 999998, own.fdid, 777, 0) &&	/* RETURN */
	       !forge(2, 999997, own.fdid, 2, 0x1234) &&	/* flags 2 */
	       !forge(0, 999996, 0xff | 0xff00ULL << 24, 0xffffffff, 0);
	expect(sent, "forge: %s", strerror(errno));
	dropped_settles(d0 + 8);
	expect(stat_of("node_failures") == f0, "node_failures %d (was %d)",
	       stat_of("node_failures"), f0);
	expect(!own_entry(&own) && own.state == SCIF_DEV_STATE_FREE,
	       "state %u", own.state);
	result("forged_messages_dropped", !why[0]);

	expect(!forge(2, 999995, own.fdid, SCIF_DEV_EXCLUSIVE, 0xabc),
	       "forge borrow");
	dropped_settles(d0 + 9);	/* its BORROW_ACK: no request */
	expect(!own_entry(&own) && own.state == SCIF_DEV_STATE_EXCLUSIVE &&
	       own.borrowers == 1, "granted: state %u borrowers %u",
	       own.state, own.borrowers);
	expect_errno(scif_borrow_device(own.fdid, 0), EBUSY, "over it");
	expect(!forge(4, 999994, own.fdid, 0, 0xabc), "forge return");
	dropped_settles(d0 + 10);	/* its RETURN_ACK */
	check_returned(own.fdid);
	result("forged_borrow_returned_by_token", !why[0]);
}

/*
 * A lender's damaged entries (the test build's "dev <k>" of
 * <debugfs>/scif/corrupt, on this node as lender, through loopback):
 * each kind fails the listing with EPROTO, takes no node down, and the
 * next listing is whole again.
 */
#define CORRUPT_DEV_KINDS	11

static int corrupt_dev(int k)
{
	char buf[32];
	int fd = open(DBG "corrupt", O_WRONLY), ok;

	if (fd < 0)
		return -1;
	snprintf(buf, sizeof(buf), "dev %d", k);
	ok = write(fd, buf, strlen(buf)) == (ssize_t)strlen(buf);
	close(fd);
	return ok ? 0 : -1;
}

static void t_corrupt_entries(void)
{
	int failures = stat_of("node_failures"), n;
	struct scif_dev_entry e[2];

	for (int k = 1; k <= CORRUPT_DEV_KINDS; k++) {
		if (!expect(!corrupt_dev(k), "corrupt dev %d: %s", k,
			    strerror(errno)))
			break;
		n = list(self, NULL, e, 2);
		if (!expect(n == -1 && errno == EPROTO,
			    "kind %d: list %d errno %d, want EPROTO", k, n,
			    n == -1 ? errno : 0))
			break;
		n = list(self, NULL, e, 2);
		expect(n == 1, "kind %d: list after %d (errno %d)", k, n,
		       errno);
	}
	expect_errno(corrupt_dev(CORRUPT_DEV_KINDS + 1), EINVAL,
		     "unknown kind");
	n = stat_of("node_failures");
	expect(n == failures, "node_failures %d, was %d", n, failures);
	result("corrupt_entries_eproto", !why[0]);
}

/*
 * A lender that does not answer (the test build's "hold <self> 2" of
 * <debugfs>/scif/node_test: this node's replies to itself are held):
 * a listing and a borrow fail with ETIMEDOUT after dev_msg_timeout_ms,
 * the borrow, granted meanwhile, is given back by its token; once the
 * replies go, the eight late answers (six of the entry, the grant and
 * the return's) are dropped and counted, and the function is free of
 * borrowers again.
 */
static int node_test(const char *cmd)
{
	int fd = open(DBG "node_test", O_WRONLY), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, cmd, strlen(cmd)) == (ssize_t)strlen(cmd);
	close(fd);
	return ok ? 0 : -1;
}

static void on_alarm(int sig)
{
}

/* A SIGALRM in 50 ms, its handler installed without SA_RESTART. */
static void alarm_soon(void)
{
	struct itimerval it = { .it_value = { .tv_usec = 50 * 1000 } };
	struct sigaction sa = { .sa_handler = on_alarm };

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

/*
 * With the replies still held back and dev_msg_timeout_ms at 300, a
 * signal ends a listing's and a borrow's wait first: EINTR.  The late
 * answers (six, then the grant and the answer to the return by token)
 * are dropped and counted, and the borrow is given back.
 */
static void t_signals(void)
{
	char hold[32], unhold[32];
	struct scif_dev_entry own, e;
	int d0, n, b;

	snprintf(hold, sizeof(hold), "hold %u 2", self);
	snprintf(unhold, sizeof(unhold), "hold %u 0", self);
	if (own_entry(&own))
		return;
	d0 = stat_of("dropped_msgs");
	if (!expect(!node_test(hold), "hold: %s", strerror(errno)))
		return;
	alarm_soon();
	n = list(self, NULL, &e, 1);
	expect(n == -1 && errno == EINTR, "list, signalled: %d errno %d", n,
	       n == -1 ? errno : 0);
	alarm_soon();
	b = scif_borrow_device(own.fdid, 0);
	if (!expect_errno(b, EINTR, "borrow, signalled") && b >= 0)
		scif_return_device(b);
	expect(!node_test(unhold), "unhold: %s", strerror(errno));
	dropped_settles(d0 + 8);
	check_returned(own.fdid);
}

static void t_timeouts(void)
{
	struct scif_dev_entry own, e;
	char hold[32], unhold[32];
	int d0, n, b;

	snprintf(hold, sizeof(hold), "hold %u 2", self);
	snprintf(unhold, sizeof(unhold), "hold %u 0", self);
	if (own_entry(&own) ||
	    !expect(!param_write("dev_msg_timeout_ms", 300),
		    "dev_msg_timeout_ms: %s", strerror(errno))) {
		result("timeout_late_answers_dropped", false);
		result("signal_eintr", false);
		return;
	}
	d0 = stat_of("dropped_msgs");
	if (expect(!node_test(hold), "hold: %s", strerror(errno))) {
		n = list(self, NULL, &e, 1);
		expect(n == -1 && errno == ETIMEDOUT,
		       "list, held: %d errno %d", n, n == -1 ? errno : 0);
		b = scif_borrow_device(own.fdid, 0);
		if (!expect_errno(b, ETIMEDOUT, "borrow, held") && b >= 0)
			scif_return_device(b);
		expect(!node_test(unhold), "unhold: %s", strerror(errno));
	}
	dropped_settles(d0 + 8);
	check_returned(own.fdid);
	result("timeout_late_answers_dropped", !why[0]);

	t_signals();
	expect(!param_write("dev_msg_timeout_ms", 5000),
	       "dev_msg_timeout_ms back: %s", strerror(errno));
	result("signal_eintr", !why[0]);
}

/* ---- Both nodes ---- */

static int barrier(void)
{
	char c = 'b';

	if (scif_send(barrier_epd, &c, 1, SCIF_SEND_BLOCK) != 1 ||
	    scif_recv(barrier_epd, &c, 1, SCIF_RECV_BLOCK) != 1)
		return -1;
	return 0;
}

static int barrier_setup(void)
{
	struct scif_port_id dst = { .node = peer, .port = LEND_PORT }, from;
	int lep, epd;

	if (self < peer) {
		lep = scif_open();
		if (lep < 0 || scif_bind(lep, LEND_PORT) < 0 ||
		    scif_listen(lep, 1) < 0)
			return -1;
		alarm(120);
		if (scif_accept(lep, &from, &epd, SCIF_ACCEPT_SYNC) < 0)
			return -1;
		alarm(0);
		scif_close(lep);
		barrier_epd = epd;
		return 0;
	}
	epd = scif_open();
	for (int i = 0; i < 600 && epd >= 0; i++) {
		if (scif_connect(epd, &dst) >= 0) {
			barrier_epd = epd;
			return 0;
		}
		usleep(100 * 1000);
	}
	return -1;
}

static int peer_entry(struct scif_dev_entry *e)
{
	int n = list(peer, NULL, e, 1);

	return expect(n == 1 && e->node == peer, "peer list: %d (errno %d)",
		      n, errno) ? 0 : -1;
}

static void t_cross(void)
{
	struct scif_dev_entry all[4], pe, own, e;
	int n, b, seen = 0;

	n = list(SCIF_DEV_ANY_NODE, NULL, all, 4);
	for (int i = 0; i < n; i++)
		seen |= (all[i].node == self ? 1 : 0) |
			(all[i].node == peer ? 2 : 0);
	expect(n == 2 && seen == 3, "any node: %d entries, seen %d", n, seen);
	n = list(SCIF_DEV_ANY_NODE, NULL, all, 1);
	expect(n == 1, "any node, max 1: %d", n);
	result("list_any_node", !why[0]);

	b = -1;
	if (!peer_entry(&pe)) {
		b = scif_borrow_device(pe.fdid, SCIF_DEV_EXCLUSIVE);
		expect(b >= 0, "borrow peer's: %s", strerror(errno));
		expect(!scif_get_device_info(b, &e) && e.node == peer &&
		       e.fdid == pe.fdid && e.state == SCIF_DEV_STATE_EXCLUSIVE,
		       "info: node %u state %u", e.node, e.state);
		expect_errno(scif_borrow_device(pe.fdid, 0), EBUSY,
			     "shared over remote exclusive");
	}
	barrier();
	/* Both borrowed: the lender's view of our own function. */
	expect(!own_entry(&own) && own.state == SCIF_DEV_STATE_EXCLUSIVE &&
	       own.borrowers == 1, "own, borrowed by peer: state %u borrowers %u",
	       own.state, own.borrowers);
	expect_errno(scif_borrow_device(own.fdid, 0), EBUSY,
		     "local shared over peer's exclusive");
	result("borrow_remote_exclusive", !why[0]);
	barrier();

	/* Each lender withdraws: the other's borrow file reports it. */
	expect(!unbind(), "unbind: %s", strerror(errno));
	if (b >= 0) {
		lost_borrow(b, "withdrawn by peer");
		scif_return_device(b);
	}
	barrier();
	expect(!rebind(), "rebind: %s", strerror(errno));
	result("withdraw_remote", !why[0]);
	barrier();

	/* A return across nodes; the lender's state settles. */
	if (!peer_entry(&pe)) {
		b = scif_borrow_device(pe.fdid, 0);
		expect(b >= 0, "borrow peer's shared: %s", strerror(errno));
		if (b >= 0)
			scif_return_device(b);
		n = settled_state(peer, &e);
		expect(n == (has_reset ? SCIF_DEV_STATE_FREE :
			     SCIF_DEV_STATE_DIRTY) && !e.borrowers,
		       "peer's state after return %d borrowers %u", n,
		       e.borrowers);
	}
	barrier();
	if (!has_reset)
		expect(!unbind() && !rebind(), "rebind: %s", strerror(errno));
	result("return_remote", !why[0]);
}

/* Each node offers its function to itself only: the other is refused. */
static void t_cross_nodes(void)
{
	struct scif_dev_entry pe, e;
	char me[8];
	int n, got = -1;

	barrier();	/* both functions bound again after return_remote */
	got = peer_entry(&pe);
	barrier();
	snprintf(me, sizeof(me), "%u", self);
	expect(!attr_write("scif_nodes", me), "nodes %s: %s", me,
	       strerror(errno));
	barrier();
	n = list(peer, NULL, &e, 1);
	expect(n == 0, "peer's list, not offered to us: %d", n);
	if (!got)
		expect_errno(scif_borrow_device(pe.fdid, 0), EACCES,
			     "borrow of the peer's, not offered to us");
	n = list(self, NULL, &e, 1);
	expect(n == 1, "own list, offered to ourselves: %d", n);
	barrier();
	expect(!attr_write("scif_nodes", "all"), "nodes all: %s",
	       strerror(errno));
	barrier();
	n = list(peer, NULL, &e, 1);
	expect(n == 1 && (got || e.fdid == pe.fdid),
	       "peer's list, offered again: %d", n);
	result("attr_nodes_remote", !why[0]);
}

/* Nodes online, waiting up to @secs for @want. */
static int nodes_online(int want, int secs)
{
	uint16_t nodes[4], me;
	int n = 0;

	for (int i = 0; i < secs * 10; i++) {
		n = scif_get_nodeIDs(nodes, 4, &me);
		if (n == want)
			break;
		usleep(100 * 1000);
	}
	return n;
}

#define IV_RELOAD "p=; for a in $(cat /proc/cmdline); do case $a in " \
	"scif_ivshmem.*=*) p=\"$p ${a#scif_ivshmem.}\";; esac; done; " \
	"insmod /modules/scif_ivshmem.ko $p"

/*
 * Node loss, both sides at once: each node borrows the other's function,
 * then the higher node unloads its bus (scif_ivshmem), so each loses
 * the other: its borrow file reports the loss, and the function the
 * other borrowed is freed and reset (dirty here).  The bus comes back
 * and the cluster forms again; the peer's function is listed again.
 */
static void t_node_loss(void)
{
	struct scif_dev_entry pe, own;
	bool leaver = self > peer;
	int b = -1, st, n;

	barrier();	/* both functions bound again after return_remote */
	if (!peer_entry(&pe)) {
		b = scif_borrow_device(pe.fdid, SCIF_DEV_EXCLUSIVE);
		expect(b >= 0, "borrow peer's: %s", strerror(errno));
	}
	barrier();
	expect(!own_entry(&own) && own.state == SCIF_DEV_STATE_EXCLUSIVE &&
	       own.borrowers == 1, "own before: state %u borrowers %u",
	       own.state, own.borrowers);
	barrier();
	/* The connection's rings hold the bus module: closed first. */
	scif_close(barrier_epd);
	barrier_epd = -1;
	if (leaver)
		expect(system("rmmod scif_ivshmem") == 0, "rmmod scif_ivshmem");
	if (b >= 0) {
		lost_borrow_in(b, "lender lost", 20000);
		scif_return_device(b);
	}
	st = settled_state(self, &own);
	expect(st == (has_reset ? SCIF_DEV_STATE_FREE : SCIF_DEV_STATE_DIRTY) &&
	       own.borrowers == 0, "own after loss: state %d borrowers %u",
	       st, own.borrowers);
	result("node_loss_both_sides", !why[0]);

	if (leaver)
		expect(system(IV_RELOAD) == 0, "insmod scif_ivshmem");
	n = nodes_online(2, 60);
	expect(n == 2, "nodes online again: %d", n);
	/* Both nodes see each other before either lists, and both list. */
	if (!expect(!barrier_setup() && !barrier(), "no barrier after")) {
		result("node_back_listed", false);
		return;
	}
	n = list(peer, NULL, &pe, 1);
	expect(n == 1 && pe.node == peer && pe.fdid >> 48 == peer,
	       "peer's list after: %d (errno %d)", n, errno);
	if (!has_reset)		/* its borrower (us) was lost: dirty */
		expect_errno(scif_borrow_device(pe.fdid, 0), ENXIO,
			     "peer's function after the loss");
	barrier();
	result("node_back_listed", !why[0]);
}

/*
 * SCIF_LEND_RESET_ONLY: this node's only lent function has a reset
 * method (scif_lend_test.sh lends QEMU's NVMe controller for it): a
 * returned function is reset and lent again under the same fdid, free.
 */
static int reset_only(void)
{
	struct scif_dev_entry own, e;
	int b, st;

	printf("1..1\n");
	if (!own_entry(&own)) {
		for (int round = 0; round < 2; round++) {
			b = scif_borrow_device(own.fdid, round ?
					       0 : SCIF_DEV_EXCLUSIVE);
			if (!expect(b >= 0, "round %d: borrow: %s", round,
				    strerror(errno)))
				break;
			expect(!scif_return_device(b), "return: %s",
			       strerror(errno));
			st = settled_state(self, &e);
			expect(st == SCIF_DEV_STATE_FREE && !e.borrowers &&
			       e.fdid == own.fdid,
			       "round %d: state %d borrowers %u fdid %#llx",
			       round, st, e.borrowers,
			       (unsigned long long)e.fdid);
		}
	}
	result("return_reset_free", !why[0]);
	return nr_fail ? 1 : 0;
}

int main(void)
{
	struct scif_dev_entry own;
	uint16_t nodes[4];
	const char *r = getenv("SCIF_LEND_RESET");
	int n;

	bdf = getenv("SCIF_LEND_BDF");
	has_reset = r && !strcmp(r, "1");
	printf("TAP version 13\n");
	/* Run first in a cluster's steps, the other node may still come. */
	nodes_online(2, 60);
	n = scif_get_nodeIDs(nodes, 4, &self);
	if (!bdf || n != 2) {
		printf("1..0 # SKIP needs SCIF_LEND_BDF and 2 nodes (%d)\n", n);
		return 4;
	}
	peer = nodes[0] == self ? nodes[1] : nodes[0];
	if (getenv("SCIF_LEND_RESET_ONLY"))
		return reset_only();
	printf("1..24\n# node %u, peer %u, lending %s, reset method: %s\n",
	       self, peer, bdf, has_reset ? "yes" : "no (dirty)");

	t_list_self(&own);
	t_filters();
	t_list_errors();
	t_exclusive(&own);
	t_shared();
	t_unprivileged();
	t_withdraw_local();
	/* The function was bound again: own.fdid is stale now. */
	t_borrow_errors(own.fdid);
	t_forged();
	t_corrupt_entries();
	t_attributes();
	t_budgets();
	t_timeouts();
	if (barrier_setup() || barrier()) {
		printf("# no barrier with node %u\n", peer);
		return 1;
	}
	t_cross();
	t_cross_nodes();
	t_node_loss();
	printf("# %d of %d failed\n", nr_fail, nr_test);
	return nr_fail ? 1 : 0;
}
