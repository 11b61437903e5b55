// SPDX-License-Identifier: GPL-2.0
/*
 * The limits on what a local user can make the driver keep: endpoints
 * per user (max_user_endpoints, EMFILE), endpoints closed while their
 * connection request waits still counted, the listen backlog
 * (max_backlog) and requests parked by SCIF_ACCEPTREQ (max_parked,
 * ENOMEM), and one user's share of the node's budget for the peer's
 * windows (max_remote_user_share).  The defaults must let one user queue
 * and accept a thousand concurrent connection requests at one listener.
 * The users are unprivileged children (setresuid); the parent (root)
 * sets the module parameters and counts endpoints in debugfs.
 *
 * Also the race of a listener's close with SCIF_ACCEPTREG of one of its
 * parked requests, made deterministic by a delay hook of the test build
 * (test_listener_close_delay_ms); the kernel log must stay clean.
 *
 * Everything is on the local node.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <linux/scif_ioctl.h>

#include "scif.h"
#include "kselftest_harness.h"
#define SCIF_TEST_WITH_LIBSCIF
#include "scif_test_util.h"

#define PARAM_DIR	"/sys/module/scif/parameters/"
#define P_USER		PARAM_DIR "max_user_endpoints"
#define P_BACKLOG	PARAM_DIR "max_backlog"
#define P_PARKED	PARAM_DIR "max_parked"
#define P_CLOSE_DELAY	PARAM_DIR "test_listener_close_delay_ms"
#define P_RWIN_EP	PARAM_DIR "max_remote_windows_per_ep"
#define P_RWIN_NODE	PARAM_DIR "max_remote_windows_per_node"
#define P_SHARE		PARAM_DIR "max_remote_user_share"

#define UID_A		1000
#define UID_B		1001
#define LOOPS		2000

/* --- helpers ------------------------------------------------------------ */

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static int set_param(const char *path, long val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", val);
	return write_file(path, buf);
}

/* Drop every privilege: all three uids and gids become @uid. */
static int become(uid_t uid)
{
	if (setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
		return -1;
	return geteuid() == uid ? 0 : -1;
}

/* A child's report to the parent, and the parent's go-ahead. */
struct chan {
	int up[2];	/* child -> parent */
	int down[2];	/* parent -> child */
};

static int chan_open(struct chan *ch)
{
	if (pipe(ch->up))
		return -1;
	if (pipe(ch->down)) {
		close(ch->up[0]);
		close(ch->up[1]);
		return -1;
	}
	return 0;
}

static void chan_child(struct chan *ch)
{
	close(ch->up[0]);
	close(ch->down[1]);
}

static void chan_parent(struct chan *ch)
{
	close(ch->up[1]);
	close(ch->down[0]);
}

static int chan_put(int fd, int val)
{
	return write(fd, &val, sizeof(val)) == sizeof(val) ? 0 : -1;
}

/* A value from @fd within @ms, or -1 (timeout, EOF). */
static int chan_get(int fd, int ms, int *val)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, ms) != 1)
		return -1;
	return read(fd, val, sizeof(*val)) == sizeof(*val) ? 0 : -1;
}

/* The exit status of @pid (reaped), or -1. */
static int reap(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Poll debugfs up to @ms until at most @most endpoints exist: the count. */
static int count_at_most(int most, int ms)
{
	long end = now_ms() + ms;
	int n;

	for (;;) {
		n = count_lines(EPD_LIST);
		if (n <= most || now_ms() > end)
			return n;
		usleep(20000);
	}
}

/* A non-blocking connect to @port of this node: EINPROGRESS expected. */
static int connect_nb(int fd, uint16_t port)
{
	struct scif_port_id dst = { .node = local_node(), .port = port };

	if (set_nonblock(fd))
		return -1;
	if (scif_connect(fd, &dst) == 0 || errno != EINPROGRESS)
		return -1;
	return 0;
}

/* The saved module parameters, restored after each test. */
FIXTURE(limits) {
	char user[32], backlog[32], parked[32], rwin_ep[32], rwin_node[32];
	int have_user, have_backlog, have_parked, have_rwin;
	int base;
};

FIXTURE_SETUP(limits)
{
	self->have_user = !read_file(P_USER, self->user, sizeof(self->user));
	self->have_backlog = !read_file(P_BACKLOG, self->backlog,
					sizeof(self->backlog));
	self->have_parked = !read_file(P_PARKED, self->parked,
				       sizeof(self->parked));
	self->have_rwin = !read_file(P_RWIN_EP, self->rwin_ep,
				     sizeof(self->rwin_ep)) &&
			  !read_file(P_RWIN_NODE, self->rwin_node,
				     sizeof(self->rwin_node));
	/* Earlier tests' endpoints are gone when the list stops shrinking. */
	self->base = count_at_most(0, 1000);
	ASSERT_LE(0, self->base) TH_LOG("no %s", EPD_LIST);
}

FIXTURE_TEARDOWN(limits)
{
	if (self->have_user)
		EXPECT_EQ(0, write_file(P_USER, self->user));
	if (self->have_backlog)
		EXPECT_EQ(0, write_file(P_BACKLOG, self->backlog));
	if (self->have_parked)
		EXPECT_EQ(0, write_file(P_PARKED, self->parked));
	if (self->have_rwin) {
		EXPECT_EQ(0, write_file(P_RWIN_EP, self->rwin_ep));
		EXPECT_EQ(0, write_file(P_RWIN_NODE, self->rwin_node));
	}
}

/* --- open/connect/close against one's own listener --------------------- */

/*
 * Child, as @uid: a listener that never accepts, with a huge backlog,
 * then LOOPS times (test_rounds(): 200 on the debug kernel, still many
 * times the cap) open, connect (non-blocking) to it, close.  Reports
 * the port, the loops whose open failed (a limit: fine) and those with
 * another failure; then waits for the parent before closing the listener.
 */
static int churn_child(struct chan *ch, uid_t uid)
{
	int lfd, fd, i, enfile = 0, bad = 0;
	uint16_t port;

	chan_child(ch);
	if (become(uid))
		return 10;
	lfd = listener(0, 1 << 30, &port);
	if (lfd < 0)
		return 11;
	for (i = 0; i < test_rounds(LOOPS); i++) {
		fd = scif_open();
		if (fd < 0) {
			if (errno != EMFILE && errno != ENFILE)
				bad++;
			enfile++;
			usleep(1000);
			continue;
		}
		if (connect_nb(fd, port))
			bad++;
		close(fd);
	}
	if (chan_put(ch->up[1], enfile) || chan_put(ch->up[1], bad))
		return 12;
	if (chan_get(ch->down[0], 60000, &i))
		return 13;
	close(lfd);
	return 0;
}

TEST_F_TIMEOUT(limits, connect_close_churn_is_bounded, 300)
{
	const int cap = 16;
	int n, enfile = -1, bad = -1, status;
	struct chan ch;
	pid_t pid;

	/* The default backlog cap (and per-user limit) must bound it too. */
	EXPECT_TRUE(self->have_backlog) TH_LOG("no max_backlog parameter");
	if (self->have_backlog)
		ASSERT_EQ(0, set_param(P_BACKLOG, cap));

	ASSERT_EQ(0, chan_open(&ch));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(churn_child(&ch, UID_A));
	chan_parent(&ch);
	EXPECT_EQ(0, chan_get(ch.up[0], 240000, &enfile));
	EXPECT_EQ(0, chan_get(ch.up[0], 1000, &bad));
	EXPECT_EQ(0, bad);

	/*
	 * The listener, its waiting requests (at most the cap) and the
	 * closed connectors behind them; every other connector was refused
	 * and is gone.
	 */
	n = count_at_most(self->base + 1 + 2 * cap, 5000);
	EXPECT_GE(self->base + 1 + 2 * cap, n)
		TH_LOG("%d endpoints live after %d open/connect/close (%d opens refused)",
		       n - self->base, (int)test_rounds(LOOPS), enfile);

	chan_put(ch.down[1], 0);
	status = reap(pid);
	EXPECT_EQ(0, status);
	close(ch.up[0]);
	close(ch.down[1]);
	/* Closing the listener refuses the rest: all of it goes. */
	EXPECT_EQ(self->base, count_at_most(self->base, 10000));
}

/* --- the per-user limit ------------------------------------------------- */

/*
 * Child, as @uid: open until the limit (@limit endpoints), expect EMFILE
 * for one more, report, wait, close one, open again.  Exit 0 if all went
 * as expected.
 */
static int hog_child(struct chan *ch, uid_t uid, int limit)
{
	int fds[64], i, fd, go;

	chan_child(ch);
	if (become(uid) || limit > 64)
		return 10;
	for (i = 0; i < limit; i++) {
		fds[i] = scif_open();
		if (fds[i] < 0) {
			fprintf(stderr, "# uid %d: open %d: %s\n", uid, i,
				strerror(errno));
			return 11;
		}
	}
	errno = 0;
	fd = scif_open();
	if (fd >= 0 || errno != EMFILE) {
		fprintf(stderr, "# uid %d: open over the limit: %d, %s\n",
			uid, fd, strerror(errno));
		return 12;
	}
	if (chan_put(ch->up[1], 1) || chan_get(ch->down[0], 60000, &go))
		return 13;
	/* A slot freed is a slot usable again, at once. */
	close(fds[0]);
	fds[0] = scif_open();
	if (fds[0] < 0)
		return 14;
	for (i = 0; i < limit; i++)
		close(fds[i]);
	return 0;
}

TEST_F(limits, per_user_limit_emfile)
{
	const int limit = 8;
	int ready = 0, fd;
	struct chan a, b;
	pid_t pa, pb;

	ASSERT_TRUE(self->have_user) TH_LOG("no max_user_endpoints parameter");
	ASSERT_EQ(0, set_param(P_USER, limit));

	ASSERT_EQ(0, chan_open(&a));
	pa = fork();
	ASSERT_LE(0, pa);
	if (pa == 0)
		_exit(hog_child(&a, UID_A, limit));
	chan_parent(&a);
	EXPECT_EQ(0, chan_get(a.up[0], 30000, &ready));

	/* While A is at its limit, B (another uid) reaches its own... */
	ASSERT_EQ(0, chan_open(&b));
	pb = fork();
	ASSERT_LE(0, pb);
	if (pb == 0)
		_exit(hog_child(&b, UID_B, limit));
	chan_parent(&b);
	EXPECT_EQ(0, chan_get(b.up[0], 30000, &ready));

	/* ...and root is not held to the per-user limit. */
	fd = scif_open();
	EXPECT_LE(0, fd) TH_LOG("root: %s", strerror(errno));
	if (fd >= 0)
		close(fd);

	chan_put(a.down[1], 0);
	chan_put(b.down[1], 0);
	EXPECT_EQ(0, reap(pa));
	EXPECT_EQ(0, reap(pb));
	close(a.up[0]);
	close(a.down[1]);
	close(b.up[0]);
	close(b.down[1]);
}

/*
 * Child, as @uid, with a limit of 4: a listener and a connector whose
 * request waits; the connector is closed but must still count until the
 * listener lets go of the request.
 */
static int linger_child(uid_t uid)
{
	int lfd, fd, fds[3], i, ret = 0;
	uint16_t port;

	if (become(uid))
		return 10;
	lfd = listener(0, 4, &port);
	if (lfd < 0)
		return 11;
	fd = scif_open();
	if (fd < 0 || connect_nb(fd, port))
		return 12;
	if (poll_one(lfd, POLLIN, WAIT_MS) != POLLIN)
		return 13;
	close(fd);		/* its request still waits at lfd */
	for (i = 0; i < 2; i++) {
		fds[i] = scif_open();
		if (fds[i] < 0)
			return 14;
	}
	errno = 0;
	fds[2] = scif_open();
	if (fds[2] >= 0 || errno != EMFILE) {
		fprintf(stderr, "# closed connector not counted: %d, %s\n",
			fds[2], strerror(errno));
		ret = 15;
		if (fds[2] >= 0)
			close(fds[2]);
	}
	/* The listener's close refuses the request: the slot comes back. */
	close(lfd);
	for (i = 0; i < 500; i++) {
		fds[2] = scif_open();
		if (fds[2] >= 0)
			break;
		usleep(10000);
	}
	if (fds[2] < 0 && !ret)
		ret = 16;
	for (i = 0; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return ret;
}

TEST_F(limits, closed_connecting_endpoint_counts)
{
	pid_t pid;

	ASSERT_TRUE(self->have_user) TH_LOG("no max_user_endpoints parameter");
	ASSERT_EQ(0, set_param(P_USER, 4));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(linger_child(UID_A));
	EXPECT_EQ(0, reap(pid));
}

/* --- the backlog cap ---------------------------------------------------- */

static int backlog_child(uid_t uid, int cap)
{
	int lfd, fd[8], i, refused = 0, pending = 0, r;
	struct scif_port_id dst = { .node = local_node() };

	if (become(uid) || cap + 2 > 8)
		return 10;
	lfd = listener(0, 100000, &dst.port);
	if (lfd < 0)
		return 11;
	for (i = 0; i < cap + 2; i++) {
		fd[i] = scif_open();
		if (fd[i] < 0 || connect_nb(fd[i], dst.port))
			return 12;
		usleep(20000);	/* requests arrive in order */
	}
	for (i = 0; i < cap + 2; i++) {
		r = poll_one(fd[i], POLLOUT, 300);
		if (r & POLLERR) {
			errno = 0;
			if (scif_connect(fd[i], &dst) != -1 ||
			    errno != ECONNREFUSED)
				return 13;
			refused++;
		} else if (r == 0) {
			pending++;
		} else {
			return 14;
		}
	}
	if (pending != cap || refused != 2) {
		fprintf(stderr, "# backlog 100000, cap %d: %d pending, %d refused\n",
			cap, pending, refused);
		return 15;
	}
	close(lfd);
	for (i = 0; i < cap + 2; i++)
		close(fd[i]);
	return 0;
}

TEST_F(limits, backlog_is_clamped)
{
	pid_t pid;

	ASSERT_TRUE(self->have_backlog) TH_LOG("no max_backlog parameter");
	ASSERT_EQ(0, set_param(P_BACKLOG, 3));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(backlog_child(UID_A, 3));
	EXPECT_EQ(0, reap(pid));
}

/* --- the cap on parked requests ----------------------------------------- */

static int parked_child(uid_t uid, int cap)
{
	int lfd, fd[8], nfd, i, ret = 0;
	struct scifioctl_accept req[8];
	uint16_t port;

	if (become(uid) || cap + 1 > 8)
		return 10;
	lfd = listener(0, 8, &port);
	if (lfd < 0)
		return 11;
	for (i = 0; i < cap + 1; i++) {
		fd[i] = scif_open();
		if (fd[i] < 0 || connect_nb(fd[i], port))
			return 12;
	}
	for (i = 0; i < cap; i++) {
		memset(&req[i], 0, sizeof(req[i]));
		req[i].flags = SCIF_ACCEPT_SYNC;
		if (ioctl(lfd, SCIF_ACCEPTREQ, &req[i]))
			return 13;
	}
	/* One more is refused, and its request stays at the listener. */
	memset(&req[cap], 0, sizeof(req[cap]));
	req[cap].flags = SCIF_ACCEPT_SYNC;
	errno = 0;
	if (ioctl(lfd, SCIF_ACCEPTREQ, &req[cap]) != -1 || errno != ENOMEM) {
		fprintf(stderr, "# parked over the cap: %s\n", strerror(errno));
		ret = 14;
	}
	if (!(poll_one(lfd, POLLIN, WAIT_MS) & POLLIN))
		ret = ret ?: 15;
	/* Completing one makes room for the next. */
	nfd = scif_open();
	if (nfd < 0 || ioctl(nfd, SCIF_ACCEPTREG, &req[0].endpt))
		return 16;
	if (ioctl(lfd, SCIF_ACCEPTREQ, &req[cap]))
		ret = ret ?: 17;
	close(nfd);
	close(lfd);
	for (i = 0; i < cap + 1; i++)
		close(fd[i]);
	return ret;
}

TEST_F(limits, parked_requests_capped_enomem)
{
	pid_t pid;

	ASSERT_TRUE(self->have_parked) TH_LOG("no max_parked parameter");
	ASSERT_EQ(0, set_param(P_PARKED, 3));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(parked_child(UID_A, 3));
	EXPECT_EQ(0, reap(pid));
}

/* --- a thousand concurrent requests at the default limits --------------- */

#define NCONN		1000

/* The soft limit on open files raised towards the hard one (no privilege). */
static int raise_nofile(rlim_t want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -1;
	if (rl.rlim_cur >= want)
		return 0;
	if (rl.rlim_max < want)
		return -1;
	rl.rlim_cur = want;
	return setrlimit(RLIMIT_NOFILE, &rl);
}

/*
 * Wait up to @ms until every one of the @n endpoints in @fd reports an
 * event for POLLOUT; each one's revents goes to @rev (0: none came).
 */
static void settle_all(const int *fd, short *rev, int n, int ms)
{
	static struct pollfd p[NCONN];
	long end = now_ms() + ms;
	int i, left = n;

	for (i = 0; i < n; i++) {
		p[i] = (struct pollfd){ .fd = fd[i], .events = POLLOUT };
		rev[i] = 0;
	}
	while (left && now_ms() < end) {
		if (poll(p, n, 100) < 0)
			return;
		for (i = 0; i < n; i++) {
			if (p[i].fd < 0 || !p[i].revents)
				continue;
			rev[i] = p[i].revents;
			p[i].fd = -1;	/* ignored from now on */
			left--;
		}
	}
}

/*
 * Child, as @uid, with every limit at its default: a listener with a
 * backlog of NCONN, NCONN non-blocking connects to it issued at once,
 * then every request accepted.  Each connect must end connected: none
 * refused.  The counts go to stderr.
 */
static int thousand_child(uid_t uid)
{
	static int fd[NCONN], nfd[NCONN];
	static short rev[NCONN];
	struct scif_port_id dst = { .node = local_node() }, peer;
	int lfd, i, refused = 0, accepted = 0, connected = 0, other = 0;

	if (become(uid))
		return 10;
	/* Both ends of every connection, the listener and stdio. */
	if (raise_nofile(2 * NCONN + 32)) {
		fprintf(stderr, "# cannot have %d files open\n", 2 * NCONN + 32);
		return 11;
	}
	lfd = listener(0, NCONN, &dst.port);
	if (lfd < 0)
		return 12;
	for (i = 0; i < NCONN; i++) {
		fd[i] = scif_open();
		if (fd[i] < 0 || connect_nb(fd[i], dst.port)) {
			fprintf(stderr, "# connect %d: %s\n", i, strerror(errno));
			return 13;
		}
	}
	while (accepted < NCONN && poll_one(lfd, POLLIN, WAIT_MS) == POLLIN) {
		if (scif_accept(lfd, &peer, &nfd[accepted], 0)) {
			fprintf(stderr, "# accept %d: %s\n", accepted,
				strerror(errno));
			break;
		}
		accepted++;
	}
	settle_all(fd, rev, NCONN, 2 * WAIT_MS);
	for (i = 0; i < NCONN; i++) {
		if (rev[i] & POLLERR)
			refused++;
		else if ((rev[i] & POLLOUT) && scif_connect(fd[i], &dst) > 0)
			connected++;
		else
			other++;
	}
	fprintf(stderr, "# %d concurrent connects, backlog %d: %d refused, %d accepted, %d connected, %d neither\n",
		NCONN, NCONN, refused, accepted, connected, other);
	for (i = 0; i < accepted; i++)
		close(nfd[i]);
	for (i = 0; i < NCONN; i++)
		close(fd[i]);
	close(lfd);
	return refused || accepted != NCONN || connected != NCONN ? 14 : 0;
}

TEST_F_TIMEOUT(limits, thousand_concurrent_connects_queued, 120)
{
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(thousand_child(UID_A));
	EXPECT_EQ(0, reap(pid));
	/* Every endpoint of the child goes. */
	EXPECT_EQ(self->base, count_at_most(self->base, 30000));
}

/* --- one user's share of the node's window budget ------------------------ */

#define WIN_PER_EP	8
#define WIN_NODE	64
#define WIN_PAIRS	16
#define PG		4096

/* A connected pair through this node's listener @lfd at @port: 0 or -1. */
static int pair_open(int lfd, uint16_t port, int *cfd, int *sfd)
{
	struct scif_port_id dst = { .node = local_node(), .port = port }, peer;
	int fl;

	*cfd = scif_open();
	if (*cfd < 0 || connect_nb(*cfd, port) ||
	    poll_one(lfd, POLLIN, WAIT_MS) != POLLIN ||
	    scif_accept(lfd, &peer, sfd, 0) ||
	    !(poll_one(*cfd, POLLOUT, WAIT_MS) & POLLOUT) ||
	    scif_connect(*cfd, &dst) <= 0)
		return -1;
	fl = fcntl(*cfd, F_GETFL);
	return fl < 0 ? -1 : fcntl(*cfd, F_SETFL, fl & ~O_NONBLOCK);
}

/*
 * Child, as @uid: connection after connection to its own listener, each
 * registering one-page windows until EAGAIN; it stops at the first
 * connection refused before its own budget (WIN_PER_EP) is used up: the
 * user's (or the node's) budget is.  Reports the windows it holds and
 * whether it stopped so, then keeps them until the parent says.
 */
static int win_hog_child(struct chan *ch, uid_t uid)
{
	int lfd, cfd[WIN_PAIRS], sfd[WIN_PAIRS], i, n, total = 0, full = 0;
	uint8_t *buf;
	uint16_t port;

	chan_child(ch);
	if (become(uid))
		return 10;
	buf = mmap(NULL, (WIN_NODE + 1) * PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	lfd = listener(0, 4, &port);
	if (buf == MAP_FAILED || lfd < 0)
		return 11;
	for (i = 0; i < WIN_PAIRS && !full; i++) {
		if (pair_open(lfd, port, &cfd[i], &sfd[i]))
			return 12;
		for (n = 0; total <= WIN_NODE; n++, total++)
			if (scif_register(cfd[i], buf + total * PG, PG, 0,
					  SCIF_PROT_READ, 0) < 0)
				break;
		if (total > WIN_NODE || errno != EAGAIN) {
			fprintf(stderr, "# uid %d: register %d: %s\n", uid,
				total, strerror(errno));
			return 13;
		}
		full = n < WIN_PER_EP;
	}
	if (chan_put(ch->up[1], total) || chan_put(ch->up[1], full) ||
	    chan_get(ch->down[0], 60000, &n))
		return 14;
	return 0;	/* the exit closes everything */
}

/* Child, as @uid: one connection, one window.  0, or the errno. */
static int win_one_child(uid_t uid)
{
	int lfd, cfd, sfd;
	uint8_t *buf;
	uint16_t port;

	if (become(uid))
		return 100;
	buf = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	lfd = listener(0, 4, &port);
	if (buf == MAP_FAILED || lfd < 0 || pair_open(lfd, port, &cfd, &sfd))
		return 101;
	if (scif_register(cfd, buf, PG, 0, SCIF_PROT_READ, 0) < 0)
		return errno;
	return 0;
}

TEST_F(limits, window_budget_shared_fairly_between_users)
{
	int total = -1, full = -1, status;
	char share[32] = "";
	struct chan ch;
	pid_t pa, pb;

	ASSERT_TRUE(self->have_rwin) TH_LOG("no window budget parameters");
	/* The node's budget small, an endpoint's smaller: A needs several. */
	ASSERT_EQ(0, set_param(P_RWIN_NODE, WIN_NODE));
	ASSERT_EQ(0, set_param(P_RWIN_EP, WIN_PER_EP));
	if (!read_file(P_SHARE, share, sizeof(share)))
		share[strcspn(share, "\n")] = '\0';

	ASSERT_EQ(0, chan_open(&ch));
	pa = fork();
	ASSERT_LE(0, pa);
	if (pa == 0)
		_exit(win_hog_child(&ch, UID_A));
	chan_parent(&ch);
	EXPECT_EQ(0, chan_get(ch.up[0], 60000, &total));
	EXPECT_EQ(0, chan_get(ch.up[0], 1000, &full));
	EXPECT_EQ(1, full) TH_LOG("uid %d never refused", UID_A);
	fprintf(stderr, "# uid %d holds %d windows, the node's budget %d (share %s)\n",
		UID_A, total, WIN_NODE, share[0] ? share : "none");
	/* What the share gives, rounded down. */
	if (share[0] && atoi(share) < 100)
		EXPECT_EQ(WIN_NODE * atoi(share) / 100, total);

	/* While A holds all it could, B still registers. */
	pb = fork();
	ASSERT_LE(0, pb);
	if (pb == 0)
		_exit(win_one_child(UID_B));
	status = reap(pb);
	EXPECT_EQ(0, status)
		TH_LOG("uid %d holds %d of the node's %d windows (share %s): uid %d's register: %s",
		       UID_A, total, WIN_NODE, share[0] ? share : "none",
		       UID_B, status > 0 && status < 100 ? strerror(status) :
		       "setup failed");
	EXPECT_GT(WIN_NODE, total);

	chan_put(ch.down[1], 0);
	EXPECT_EQ(0, reap(pa));
	close(ch.up[0]);
	close(ch.down[1]);
}

/* --- listener close racing SCIF_ACCEPTREG -------------------------------- */

/* The first kernel report in the log since @fd was opened, or NULL. */
static const char *kmsg_report(int fd, char *buf, size_t len)
{
	static const char * const bad[] = {
		"BUG:", "KASAN", "WARNING:", "general protection", "Oops",
	};
	ssize_t n;
	size_t i;

	for (;;) {
		n = read(fd, buf, len - 1);
		if (n < 0) {
			if (errno == EPIPE)	/* overwritten records */
				continue;
			return NULL;
		}
		buf[n] = '\0';
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			if (strstr(buf, bad[i]))
				return buf;
	}
}

struct closer {
	int fd;
	atomic_int done;
};

static void *closer_fn(void *arg)
{
	struct closer *c = arg;

	close(c->fd);
	atomic_store(&c->done, 1);
	return NULL;
}

TEST(listener_close_races_acceptreg)
{
	struct scif_port_id dst = { .node = local_node() };
	int lfd, cfd, nfd, kfd, delay, round, reg, r;
	struct scifioctl_accept req;
	struct closer cl;
	pthread_t t;
	char buf[1024];
	const char *rep;

	delay = !access(P_CLOSE_DELAY, W_OK);
	if (!delay)
		TH_LOG("no close delay hook: racing without it");
	kfd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, kfd);
	lseek(kfd, 0, SEEK_END);

	for (round = 0; round < (delay ? 4 : 200); round++) {
		lfd = listener(0, 4, &dst.port);
		ASSERT_LE(0, lfd);
		cfd = scif_open();
		ASSERT_LE(0, cfd);
		ASSERT_EQ(0, connect_nb(cfd, dst.port));
		memset(&req, 0, sizeof(req));
		req.flags = SCIF_ACCEPT_SYNC;
		ASSERT_EQ(0, ioctl(lfd, SCIF_ACCEPTREQ, &req));
		nfd = scif_open();
		ASSERT_LE(0, nfd);

		if (delay)
			ASSERT_EQ(0, set_param(P_CLOSE_DELAY, 300));
		cl.fd = lfd;
		atomic_store(&cl.done, 0);
		ASSERT_EQ(0, pthread_create(&t, NULL, closer_fn, &cl));
		/* Inside the close's walk of the parked requests. */
		usleep(delay ? 100000 : round % 7 * 50);
		reg = ioctl(nfd, SCIF_ACCEPTREG, &req.endpt);
		pthread_join(t, NULL);
		if (delay) {
			EXPECT_EQ(0, set_param(P_CLOSE_DELAY, 0));
			/* The close had not reached the request yet. */
			EXPECT_EQ(0, reg) TH_LOG("ACCEPTREG: %s", strerror(errno));
		}

		/* Exactly one of them had the request. */
		r = poll_one(cfd, POLLOUT, WAIT_MS);
		if (reg == 0) {
			EXPECT_EQ(POLLOUT, r);
			EXPECT_LE(SCIF_PORT_RSVD, scif_connect(cfd, &dst));
		} else {
			EXPECT_EQ(ENOENT, errno);
			EXPECT_TRUE(r & POLLERR);
			EXPECT_ERRNO(ECONNREFUSED, scif_connect(cfd, &dst));
		}
		close(nfd);
		close(cfd);
		rep = kmsg_report(kfd, buf, sizeof(buf));
		ASSERT_EQ(NULL, rep) TH_LOG("round %d: %s", round, rep);
	}
	close(kfd);
}

TEST_HARNESS_MAIN
