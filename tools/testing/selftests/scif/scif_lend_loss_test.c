// SPDX-License-Identifier: GPL-2.0
/*
 * Borrows that end because a node is lost (Documentation/scif/devices.rst,
 * "Borrowing a device"), in the 2-node lend-loss cluster (lend-loss-steps,
 * qemu/cluster.sh -I: an edu function per node, which
 * scif_lend_loss_test.sh binds to scif_lend and names in SCIF_LEND_BDF).
 * Node 0 drives and is never restarted; node 1's role is set by its life
 * (SCIF_RESTART):
 *
 *   life 0  lends its function and waits.  Node 0 borrows it exclusively
 *           and has the launcher kill node 1 (scif-cluster kill 1, a VM
 *           stopped dead): the borrow file reports POLLERR | POLLHUP
 *           within hb_timeout_ms + 4 s, SCIF_DEV_INFO is ENODEV, node 1
 *           leaves the node and device lists; node 1 is restarted.
 *   life 1  a new life of scif.ko, so a new epoch: node 0's old fdid is
 *           ENOENT, the listing has the function under a new fdid whose
 *           epoch differs, which borrows and returns.  Meanwhile node 1
 *           borrows node 0's function exclusively and node 0 kills it:
 *           node 0's function is freed (dirty: edu has no reset method)
 *           and borrowed again by node 0 itself through its loopback node.
 *   life 2  lends again; once node 0 borrowed its function, node 1 writes
 *           a bad count into its node queue with node 0 (the test build's
 *           "count 0" of <debugfs>/scif/corrupt): node 0 fails node 1, a
 *           failed node and not a gone one, which ends the borrow as a
 *           loss does.  Node 1 learns it was dropped, drops node 0 in
 *           turn (so frees its function) and joins again by itself, the
 *           same life of its scif.ko: node 0 lists the function under the
 *           same fdid, freed.  Then node 1 borrows node 0's function
 *           exclusively and fails the same way: node 0 frees it, node 1's
 *           borrow file reports the loss of node 0 (dropped in turn).
 *           Last, node 0 borrows node 1's function, bound again, and
 *           pauses node 1 (scif-cluster pause 1, a stalled machine) past
 *           the heartbeat: a failure again, by the heartbeat this time;
 *           resumed, node 1 joins again.  A SCIF connection tells node 1
 *           when node 0 is done.
 *
 * What a user without privilege may do (list, poll a borrow file, ask
 * SCIF_DEV_INFO) runs as uid 65534, on the borrow file root opened
 * (borrowing needs CAP_SYS_RAWIO).  Node 0 prints TAP, node 1 too in its
 * last life; a missing setup fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "scif.h"

#define DONE_PORT	2370
#define HB_TIMEOUT	"/sys/module/scif_ivshmem/parameters/hb_timeout_ms"
#define CORRUPT		"/sys/kernel/debug/scif/corrupt"
#define NOBODY		65534
#define NODE0_ROWS	31
#define NODE1_ROWS	8

static const char *bdf;
static bool has_reset;
static uint16_t self;
static long loss_bound_ms = 5000;
static int nr_test, nr_fail;
static char why[256];

static const struct scif_dev_filter any = {
	.vendor = 0xffff, .device = 0xffff,
};

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void result(const char *name, bool ok)
{
	nr_test++;
	if (ok) {
		printf("ok %d %s\n", nr_test, name);
	} else {
		nr_fail++;
		printf("not ok %d %s # %s\n", nr_test, name,
		       why[0] ? why : "?");
	}
	fflush(stdout);
	why[0] = '\0';
}

/* Records the first failed expectation of a row in why. */
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

static bool expect_errno(long ret, int want, const char *what)
{
	int e = errno;

	return expect(ret == -1 && e == want,
		      "%s: ret %ld errno %d (%s), want %s", what, ret,
		      ret == -1 ? e : 0, ret == -1 ? strerror(e) : "-",
		      strerror(want));
}

static unsigned int epoch_of(uint64_t fdid)
{
	return (fdid >> 32) & 0xffff;
}

static int nodes_online(void)
{
	uint16_t nodes[8], me;

	return scif_get_nodeIDs(nodes, 8, &me);
}

static int wait_nodes(int want, int ms)
{
	long end = now_ms() + ms;
	int n;

	while ((n = nodes_online()) != want && now_ms() < end)
		usleep(100 * 1000);
	return n;
}

/* Node @node's only lent function, waited for up to @ms: 0, or -1. */
static int wait_listed(uint16_t node, struct scif_dev_entry *e, int ms)
{
	long end = now_ms() + ms;
	int n;

	do {
		n = scif_get_device_list(node, &any, e, 1);
		if (n == 1 && e->node == node)
			return 0;
		usleep(200 * 1000);
	} while (now_ms() < end);
	return expect(false, "node %u's function not listed in %d ms: %d "
		      "(errno %d)", node, ms, n, n < 0 ? errno : 0) ? 0 : -1;
}

/* The state of node @node's only function once it is not resetting. */
static int settled_state(uint16_t node, struct scif_dev_entry *e, int ms)
{
	long end = now_ms() + ms;

	do {
		if (scif_get_device_list(node, &any, e, 1) != 1)
			return -1;
		if (e->state != SCIF_DEV_STATE_RESETTING)
			return e->state;
		usleep(50 * 1000);
	} while (now_ms() < end);
	return -1;
}

/* Own function's state and borrowers until both are @state, @borrowers. */
static int wait_own_state(unsigned int state, unsigned int borrowers, int ms,
			  struct scif_dev_entry *e)
{
	long end = now_ms() + ms;

	do {
		if (scif_get_device_list(self, &any, e, 1) == 1 &&
		    e->state == state && e->borrowers == borrowers)
			return 0;
		usleep(100 * 1000);
	} while (now_ms() < end);
	return -1;
}

static int sysfs_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok ? 0 : -1;
}

/* scif_lend unbound from our function and bound again: a new fdid. */
static int rebind(void)
{
	char path[128];

	if (sysfs_write("/sys/bus/pci/drivers/scif_lend/unbind", bdf) ||
	    sysfs_write("/sys/bus/pci/drivers_probe", bdf))
		return -1;
	snprintf(path, sizeof(path), "/sys/bus/pci/drivers/scif_lend/%s", bdf);
	return access(path, F_OK);
}

static bool cluster(const char *req)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "scif-cluster %s", req);
	return expect(system(cmd) == 0, "%s failed", cmd);
}

/*
 * As uid 65534, on the borrow file @b of node @lender's function
 * @fdid, which was lost (killed or failed) at @t0 on the monotonic
 * clock: the poll bits within loss_bound_ms of @t0, SCIF_DEV_INFO, and
 * the lists without the node.  Three rows.
 */
static void lost_lender_rows(int b, uint16_t lender, uint64_t fdid, long t0,
			     const char *how)
{
	char name[64];
	int status = -1;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct pollfd p = { .fd = b, .events = POLLIN };
		struct scif_dev_entry e[4];
		int bad = 0, n, ms;

		if (setgid(NOBODY) || setuid(NOBODY))
			_exit(64);
		ms = loss_bound_ms - (now_ms() - t0);
		n = poll(&p, 1, ms > 0 ? ms : 0);
		printf("# %s: borrow file after %ld ms: poll %d revents %#x\n",
		       how, now_ms() - t0, n, p.revents);
		if (n != 1 || (p.revents & (POLLERR | POLLHUP)) !=
		    (POLLERR | POLLHUP))
			bad |= 1;
		n = scif_get_device_info(b, e);
		if (n != -1 || errno != ENODEV) {
			printf("# info: %d errno %d, want ENODEV\n", n,
			       n == -1 ? errno : 0);
			bad |= 2;
		}
		n = scif_get_device_list(lender, &any, e, 4);
		if (n != -1 || errno != ENODEV) {
			printf("# list of node %u: %d errno %d, want ENODEV\n",
			       lender, n, n == -1 ? errno : 0);
			bad |= 4;
		}
		n = scif_get_device_list(SCIF_DEV_ANY_NODE, &any, e, 4);
		for (int i = 0; i < n; i++)
			if (e[i].node != self || e[i].fdid == fdid)
				bad |= 4;
		if (n != 1 || nodes_online() != 1) {
			printf("# any node: %d entries, %d nodes online\n", n,
			       nodes_online());
			bad |= 4;
		}
		fflush(stdout);
		_exit(bad);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	expect(WIFEXITED(status) && WEXITSTATUS(status) != 64,
	       "child status %#x", status);
	snprintf(name, sizeof(name), "%s_lender_pollerr_pollhup", how);
	expect(!(WEXITSTATUS(status) & 1), "no POLLERR|POLLHUP within %ld ms",
	       loss_bound_ms);
	result(name, !why[0]);
	snprintf(name, sizeof(name), "%s_lender_info_enodev", how);
	expect(WIFEXITED(status) && !(WEXITSTATUS(status) & 2),
	       "SCIF_DEV_INFO not ENODEV (status %#x)", status);
	result(name, !why[0]);
	snprintf(name, sizeof(name), "%s_lender_off_the_lists", how);
	expect(WIFEXITED(status) && !(WEXITSTATUS(status) & 4),
	       "node %u still listed (status %#x)", lender, status);
	result(name, !why[0]);
}

/* Life 0 of node 1: its lender killed under an exclusive borrow. */
static uint64_t lender_killed(void)
{
	struct scif_dev_entry pe = { 0 }, e = { 0 };
	uint64_t fdid = 0;
	long t0;
	int b = -1;

	expect(wait_nodes(2, 120000) == 2, "node 1 not online");
	if (!wait_listed(1, &pe, 120000))
		fdid = pe.fdid;
	expect(!fdid || fdid >> 48 == 1, "fdid %#llx", (unsigned long long)fdid);
	result("lender_listed", !why[0]);

	if (fdid) {
		b = scif_borrow_device(fdid, SCIF_DEV_EXCLUSIVE);
		expect(b >= 0, "borrow: %s", strerror(errno));
		expect(b < 0 || (!scif_get_device_info(b, &e) &&
				 e.fdid == fdid &&
				 e.state == SCIF_DEV_STATE_EXCLUSIVE &&
				 e.borrowers == 1),
		       "info: fdid %#llx state %u borrowers %u",
		       (unsigned long long)e.fdid, e.state, e.borrowers);
	}
	result("borrow_exclusive_before_kill", !why[0]);
	if (b < 0)
		return fdid;

	t0 = now_ms();
	cluster("kill 1");
	result("lender_killed", !why[0]);
	lost_lender_rows(b, 1, fdid, t0, "killed");
	expect(!scif_return_device(b), "return of the lost borrow: %s",
	       strerror(errno));
	expect_errno(scif_borrow_device(fdid, 0), ENODEV,
		     "borrow while node 1 is down");
	result("lost_borrow_returned_enodev_after", !why[0]);
	return fdid;
}

/* As uid 65534: node 1's function listed with a fdid other than @old. */
static uint64_t listed_as_nobody(uint64_t old)
{
	struct scif_dev_entry e = { 0 };
	int fds[2], status = -1;
	uint64_t fdid = 0;
	pid_t pid;

	if (pipe(fds))
		return 0;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		if (setgid(NOBODY) || setuid(NOBODY))
			_exit(1);
		if (wait_listed(1, &e, 120000))
			_exit(2);
		if (write(fds[1], &e.fdid, sizeof(e.fdid)) != sizeof(e.fdid))
			_exit(3);
		_exit(0);
	}
	close(fds[1]);
	if (pid > 0 && read(fds[0], &fdid, sizeof(fdid)) != sizeof(fdid))
		fdid = 0;
	close(fds[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	expect(WIFEXITED(status) && !WEXITSTATUS(status) && fdid,
	       "listing as uid %d: status %#x", NOBODY, status);
	expect(!fdid || (fdid >> 48 == 1 && fdid != old),
	       "fdid %#llx, old %#llx: the same",
	       (unsigned long long)fdid, (unsigned long long)old);
	printf("# node 1's fdid %#llx (epoch %#x), before %#llx (epoch %#x)\n",
	       (unsigned long long)fdid, epoch_of(fdid),
	       (unsigned long long)old, epoch_of(old));
	return fdid;
}

/* Life 1 of node 1, as lender: a new epoch. */
static uint64_t new_epoch(uint64_t old)
{
	struct scif_dev_entry e = { 0 };
	uint64_t fdid;
	int b, st;

	cluster("restart 1");
	result("lender_restarted", !why[0]);
	expect(wait_nodes(2, 120000) == 2, "node 1 did not rejoin");
	fdid = listed_as_nobody(old);
	result("new_life_listed_new_epoch", !why[0]);

	if (old)
		expect_errno(scif_borrow_device(old, SCIF_DEV_EXCLUSIVE),
			     ENOENT, "borrow of the old fdid");
	else
		expect(false, "no old fdid");
	result("old_life_fdid_enoent", !why[0]);

	b = fdid ? scif_borrow_device(fdid, SCIF_DEV_EXCLUSIVE) : -1;
	if (expect(b >= 0, "borrow of %#llx: %s", (unsigned long long)fdid,
		   strerror(errno))) {
		expect(!scif_get_device_info(b, &e) && e.fdid == fdid &&
		       e.state == SCIF_DEV_STATE_EXCLUSIVE,
		       "info: fdid %#llx state %u", (unsigned long long)e.fdid,
		       e.state);
		expect(!scif_return_device(b), "return: %s", strerror(errno));
		st = settled_state(1, &e, 5000);
		expect(st == (has_reset ? SCIF_DEV_STATE_FREE :
			      SCIF_DEV_STATE_DIRTY) && !e.borrowers,
		       "state after return %d borrowers %u", st, e.borrowers);
	}
	result("new_fdid_borrowed_and_returned", !why[0]);
	return fdid;
}

/* Life 1 of node 1, as borrower of our function: killed. */
static void borrower_killed(void)
{
	struct scif_dev_entry own = { 0 }, e = { 0 };
	long t0;
	int b, st;

	st = wait_own_state(SCIF_DEV_STATE_EXCLUSIVE, 1, 60000, &own);
	expect(!st, "own function not borrowed by node 1: state %u borrowers %u",
	       own.state, own.borrowers);
	result("borrower_holds_own_function", !why[0]);
	t0 = now_ms();
	cluster("kill 1");
	result("borrower_killed", !why[0]);

	/* Freed once the loss is seen: reset, or dirty without a method. */
	st = wait_own_state(has_reset ? SCIF_DEV_STATE_FREE :
			    SCIF_DEV_STATE_DIRTY, 0, loss_bound_ms, &e);
	expect(!st, "own after %ld ms: state %u borrowers %u", now_ms() - t0,
	       e.state, e.borrowers);
	printf("# own function freed %ld ms after the kill\n", now_ms() - t0);
	result("lost_borrower_function_freed", !why[0]);

	if (!has_reset) {
		expect_errno(scif_borrow_device(own.fdid, 0), ENXIO,
			     "borrow of the dirty function");
		expect(!rebind(), "rebind: %s", strerror(errno));
	}
	st = settled_state(self, &e, 5000);
	expect(st == SCIF_DEV_STATE_FREE && !e.borrowers &&
	       (has_reset ? e.fdid == own.fdid : e.fdid != own.fdid),
	       "own: state %d borrowers %u fdid %#llx (was %#llx)", st,
	       e.borrowers, (unsigned long long)e.fdid,
	       (unsigned long long)own.fdid);
	b = scif_borrow_device(e.fdid, SCIF_DEV_EXCLUSIVE);
	if (expect(b >= 0, "borrow through loopback: %s", strerror(errno)))
		expect(!scif_return_device(b), "return: %s", strerror(errno));
	/* Returned, dirty again: bound again for what follows. */
	if (!has_reset)
		expect(!rebind(), "rebind after: %s", strerror(errno));
	result("freed_function_borrowed_by_itself", !why[0]);
}

/* Life 2 of node 1: it fails (bad counts) under our exclusive borrow. */
static void lender_failed(uint64_t before)
{
	struct scif_dev_entry e = { 0 };
	uint64_t fdid;
	long t0;
	int b = -1, st;

	cluster("restart 1");
	result("lender_restarted_again", !why[0]);
	expect(wait_nodes(2, 120000) == 2, "node 1 did not rejoin");
	fdid = listed_as_nobody(before);
	if (fdid) {
		b = scif_borrow_device(fdid, SCIF_DEV_EXCLUSIVE);
		expect(b >= 0, "borrow: %s", strerror(errno));
	}
	result("borrow_before_failure", !why[0]);
	if (b < 0)
		return;
	/* Node 1 corrupts as soon as it sees the borrow. */
	t0 = now_ms();
	lost_lender_rows(b, 1, fdid, t0, "failed");
	expect(!scif_return_device(b), "return of the lost borrow: %s",
	       strerror(errno));
	result("failed_borrow_returned", !why[0]);

	/*
	 * Node 1, dropped, drops us in turn and comes back by itself: the
	 * same life of its scif.ko (same epoch), so the same fdid, for a
	 * function freed when we were lost to it (dirty without a reset).
	 */
	expect(wait_nodes(2, 60000) == 2, "node 1 did not come back");
	if (!wait_listed(1, &e, 60000)) {
		st = settled_state(1, &e, 5000);
		expect(e.fdid == fdid && st == (has_reset ? SCIF_DEV_STATE_FREE :
						SCIF_DEV_STATE_DIRTY) &&
		       !e.borrowers, "back: fdid %#llx (was %#llx) state %d "
		       "borrowers %u", (unsigned long long)e.fdid,
		       (unsigned long long)fdid, st, e.borrowers);
		if (!has_reset)
			expect_errno(scif_borrow_device(fdid, 0), ENXIO,
				     "borrow of the dirty function");
	}
	result("failed_lender_back_function_freed", !why[0]);
}

/*
 * Life 2 of node 1, as borrower: it borrows our function exclusively,
 * then fails again (bad counts): the function is freed as for a killed
 * borrower.
 */
static void borrower_failed(void)
{
	struct scif_dev_entry own = { 0 }, e = { 0 };
	long t0;
	int st;

	st = wait_own_state(SCIF_DEV_STATE_EXCLUSIVE, 1, 60000, &own);
	expect(!st, "own function not borrowed by node 1: state %u "
	       "borrowers %u", own.state, own.borrowers);
	result("failed_borrower_holds_own_function", !why[0]);
	t0 = now_ms();
	st = wait_own_state(has_reset ? SCIF_DEV_STATE_FREE :
			    SCIF_DEV_STATE_DIRTY, 0, 30000, &e);
	expect(!st, "own: state %u borrowers %u", e.state, e.borrowers);
	printf("# own function freed %ld ms after node 1's borrow was seen\n",
	       now_ms() - t0);
	if (!has_reset) {
		expect_errno(scif_borrow_device(own.fdid, 0), ENXIO,
			     "borrow of the dirty function");
		expect(!rebind(), "rebind: %s", strerror(errno));
	}
	result("failed_borrower_function_freed", !why[0]);

	expect(wait_nodes(2, 60000) == 2, "node 1 did not come back");
}

/*
 * Node 1 stalls (its VM paused: scif-cluster pause 1) under our
 * exclusive borrow of its function, bound again (free) once it came
 * back: the heartbeat fails it, the borrow ends as for a killed
 * lender.  Resumed, node 1 finds it was dropped, drops us in turn,
 * which frees its function, and joins again, the same life.
 */
static void lender_stalled(void)
{
	struct scif_dev_entry e = { 0 };
	uint64_t fdid = 0;
	long t0, end = now_ms() + 60000;
	int b = -1, st, epd;

	do {
		if (scif_get_device_list(1, &any, &e, 1) == 1 &&
		    e.state == SCIF_DEV_STATE_FREE) {
			fdid = e.fdid;
			break;
		}
		usleep(200 * 1000);
	} while (now_ms() < end);
	if (expect(fdid, "node 1's function not free: state %u", e.state)) {
		b = scif_borrow_device(fdid, SCIF_DEV_EXCLUSIVE);
		expect(b >= 0, "borrow: %s", strerror(errno));
	}
	result("borrow_before_stall", !why[0]);
	if (b < 0)
		return;
	t0 = now_ms();
	cluster("pause 1");
	result("lender_paused", !why[0]);
	lost_lender_rows(b, 1, fdid, t0, "stalled");
	expect(!scif_return_device(b), "return of the lost borrow: %s",
	       strerror(errno));
	cluster("resume 1");
	expect(wait_nodes(2, 60000) == 2, "node 1 did not come back");
	if (!wait_listed(1, &e, 60000)) {
		st = settled_state(1, &e, 10000);
		/* Node 1 may list before it learnt that we dropped it. */
		for (int i = 0; i < 100 && e.borrowers; i++) {
			usleep(100 * 1000);
			st = settled_state(1, &e, 10000);
		}
		expect(e.fdid == fdid && st == (has_reset ? SCIF_DEV_STATE_FREE :
						SCIF_DEV_STATE_DIRTY) &&
		       !e.borrowers, "back: fdid %#llx (was %#llx) state %d "
		       "borrowers %u", (unsigned long long)e.fdid,
		       (unsigned long long)fdid, st, e.borrowers);
	}
	result("stalled_lender_back_function_freed", !why[0]);

	/* Done: node 1 may end. */
	epd = scif_open();
	for (int i = 0; i < 300 && epd >= 0; i++) {
		struct scif_port_id dst = { .node = 1, .port = DONE_PORT };

		if (scif_connect(epd, &dst) >= 0) {
			char c = 'q';

			expect(scif_send(epd, &c, 1, SCIF_SEND_BLOCK) == 1,
			       "send: %s", strerror(errno));
			break;
		}
		usleep(200 * 1000);
	}
	if (epd >= 0)
		scif_close(epd);
}

static int drive(void)
{
	struct scif_dev_entry own;
	uint64_t fdid;

	printf("1..%d\n", NODE0_ROWS);
	expect(wait_listed(self, &own, 10000) == 0, "own function not lent");
	result("own_function_lent", !why[0]);
	fdid = lender_killed();
	fdid = new_epoch(fdid);
	borrower_killed();
	lender_failed(fdid);
	borrower_failed();
	lender_stalled();
	printf("# %d of %d failed\n", nr_fail, nr_test);
	return nr_fail || nr_test != NODE0_ROWS ? 1 : 0;
}

/* ---- node 1 ---- */

/* Lives 0 and 1: wait to be killed; ending is a failure of node 0's. */
static int wait_for_kill(void)
{
	sleep(300);
	printf("# node 1: not killed in 300 s\n");
	return 1;
}

/* Life 1: borrow node 0's function exclusively and hold it. */
static int borrow_and_hold(void)
{
	struct scif_dev_entry e = { 0 };
	int b;

	if (wait_listed(0, &e, 120000))
		return 1;
	b = scif_borrow_device(e.fdid, SCIF_DEV_EXCLUSIVE);
	printf("# node 1: borrowed %#llx: %d\n", (unsigned long long)e.fdid, b);
	fflush(stdout);
	return b < 0 ? 1 : wait_for_kill();
}

/*
 * As uid 65534, on the borrow file @b, lost since @t0: the poll bits
 * within loss_bound_ms, SCIF_DEV_INFO ENODEV; then returned.  Three rows.
 */
static void lost_borrow_rows(int b, long t0)
{
	int status = -1;
	pid_t pid;

	fflush(stdout);
	pid = b >= 0 ? fork() : -1;
	if (pid == 0) {
		struct pollfd p = { .fd = b, .events = POLLIN };
		struct scif_dev_entry e;
		int bad = 0, n, ms;

		if (setgid(NOBODY) || setuid(NOBODY))
			_exit(64);
		ms = loss_bound_ms - (now_ms() - t0);
		n = poll(&p, 1, ms > 0 ? ms : 0);
		printf("# borrow file after %ld ms: poll %d revents %#x\n",
		       now_ms() - t0, n, p.revents);
		if (n != 1 || (p.revents & (POLLERR | POLLHUP)) !=
		    (POLLERR | POLLHUP))
			bad |= 1;
		n = scif_get_device_info(b, &e);
		if (n != -1 || errno != ENODEV)
			bad |= 2;
		fflush(stdout);
		_exit(bad);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	expect(WIFEXITED(status) && !(WEXITSTATUS(status) & ~3),
	       "no borrow, or child status %#x", status);
	expect(!(WEXITSTATUS(status) & 1), "no POLLERR|POLLHUP within %ld ms",
	       loss_bound_ms);
	result("dropped_lender_pollerr_pollhup", !why[0]);
	expect(WIFEXITED(status) && !(WEXITSTATUS(status) & ~1),
	       "SCIF_DEV_INFO not ENODEV (status %#x)", status);
	result("dropped_lender_info_enodev", !why[0]);
	expect(b >= 0 && !scif_return_device(b), "return: %s",
	       strerror(errno));
	result("lost_borrow_returned", !why[0]);
}

/* Life 2: fail under node 0's borrow, free our function, join again. */
static int fail_and_return(void)
{
	struct scif_port_id from;
	struct scif_dev_entry e = { 0 };
	int lep, epd, st, b;
	char c;
	long t0;

	printf("1..%d\n", NODE1_ROWS);
	st = wait_own_state(SCIF_DEV_STATE_EXCLUSIVE, 1, 120000, &e);
	expect(!st, "not borrowed: state %u borrowers %u", e.state, e.borrowers);
	expect(!sysfs_write(CORRUPT, "count 0"), "%s: %s", CORRUPT,
	       strerror(errno));
	/* Node 0 fails us; we learn it and lose node 0 as a borrower. */
	st = wait_own_state(has_reset ? SCIF_DEV_STATE_FREE :
			    SCIF_DEV_STATE_DIRTY, 0, 30000, &e);
	expect(!st, "own after the failure: state %u borrowers %u", e.state,
	       e.borrowers);
	result("failed_node_frees_its_lent_function", !why[0]);

	/* Dropped, we drop node 0 in turn and join again by ourselves. */
	expect(wait_nodes(2, 60000) == 2, "node 0 not online again");
	result("failed_node_rejoins", !why[0]);

	/* Now a borrower of node 0's function, failed the same way. */
	b = -1;
	if (!wait_listed(0, &e, 60000)) {
		b = scif_borrow_device(e.fdid, SCIF_DEV_EXCLUSIVE);
		expect(b >= 0, "borrow of node 0's: %s", strerror(errno));
	}
	result("borrow_node_0_function", !why[0]);
	/* Node 0 looks every 100 ms: it sees the borrow before the end. */
	sleep(2);
	t0 = now_ms();
	if (b >= 0)
		expect(!sysfs_write(CORRUPT, "count 0"), "%s: %s", CORRUPT,
		       strerror(errno));
	lost_borrow_rows(b, t0);
	expect(wait_nodes(2, 60000) == 2, "node 0 not online again");
	/* Our function, dirty since the failure, lent again for the stall. */
	if (!has_reset)
		expect(!rebind(), "rebind: %s", strerror(errno));
	result("failed_borrower_rejoins", !why[0]);

	lep = scif_open();
	if (expect(lep >= 0 && scif_bind(lep, DONE_PORT) >= 0 &&
		   scif_listen(lep, 1) >= 0, "listen: %s", strerror(errno))) {
		alarm(180);
		if (expect(scif_accept(lep, &from, &epd, SCIF_ACCEPT_SYNC) >= 0,
			   "accept: %s", strerror(errno))) {
			expect(scif_recv(epd, &c, 1, SCIF_RECV_BLOCK) == 1,
			       "recv: %s", strerror(errno));
			scif_close(epd);
		}
		alarm(0);
	}
	if (lep >= 0)
		scif_close(lep);
	result("node_0_done", !why[0]);
	printf("# %d of %d failed\n", nr_fail, nr_test);
	return nr_fail || nr_test != NODE1_ROWS ? 1 : 0;
}

int main(void)
{
	const char *node = getenv("SCIF_NODE"), *life = getenv("SCIF_RESTART");
	const char *r = getenv("SCIF_LEND_RESET");
	long hb;
	FILE *f;

	bdf = getenv("SCIF_LEND_BDF");
	has_reset = r && !strcmp(r, "1");
	printf("TAP version 13\n");
	if (!node || !getenv("SCIF_CONTROL") || !bdf) {
		printf("1..1\nnot ok 1 lend_loss_setup # needs a cluster node "
		       "(SCIF_NODE, SCIF_CONTROL) and SCIF_LEND_BDF\n");
		return 1;
	}
	f = fopen(HB_TIMEOUT, "r");
	if (f) {
		if (fscanf(f, "%ld", &hb) == 1 && hb > 0)
			loss_bound_ms = hb + 4000;
		fclose(f);
	}
	self = atoi(node);
	printf("# node %u, life %s, lending %s, reset method: %s, bound %ld ms\n",
	       self, life ? life : "0", bdf, has_reset ? "yes" : "no",
	       loss_bound_ms);
	if (self == 0)
		return drive();
	switch (life ? atoi(life) : 0) {
	case 0:
		return wait_for_kill();
	case 1:
		return borrow_and_hold();
	default:
		return fail_and_return();
	}
}
