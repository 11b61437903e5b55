// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF connections: bind, listen, connect and accept with every error
 * they document, the raw two-step accept (SCIF_ACCEPTREQ's cookie and
 * SCIF_ACCEPTREG), unprivileged binds, non-blocking connect with poll,
 * the listen backlog and listeners closed under pending requests.
 *
 * Connections go to the node named by $SCIF_PEER_NODE (default: the
 * local node).  When that is another node, the listeners that are
 * connected to and the endpoints they accept live there, driven through
 * scif_peer_agent (see scif_test_remote.h).
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <linux/scif_ioctl.h>

#include "scif.h"
#include "kselftest_harness.h"
#define SCIF_TEST_WITH_LIBSCIF
#include "scif_test_util.h"

#define OFFLINE_NODE	63		/* never online in these setups */
#define FREE_PORT	65001		/* nobody binds it in these tests */
#define KERNEL_SPACE	0xffff800000000000ULL

/* --- helpers ------------------------------------------------------------ */

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* accept_wait() with the raw SCIF_ACCEPTREQ: fills @req, cookie included. */
static int acceptreq_wait(int lfd, struct scifioctl_accept *req,
			  struct connector *c)
{
	long end = now_ms() + WAIT_MS;

	for (;;) {
		memset(req, 0, sizeof(*req));
		if (ep_acceptreq(lfd, req) == 0)
			return 0;
		if (errno != EAGAIN)
			return -1;
		if (c && atomic_load(&c->done) && c->ret < 0) {
			errno = c->err;
			return -1;
		}
		if (now_ms() > end) {
			errno = ETIMEDOUT;
			return -1;
		}
		usleep(1000);
	}
}

/*
 * SCIF_ACCEPTREG of @cookie on a fresh endpoint on the listener's node
 * (the peer node): the new fd, or -1.
 */
static int acceptreg_fresh(uint64_t cookie)
{
	int fd = peer_open();

	if (fd < 0)
		return -1;
	if (ep_acceptreg(fd, cookie) < 0) {
		ep_close_keep_errno(fd);
		return -1;
	}
	return fd;
}

/* Connect a new endpoint to listener @lfd at @port, and accept it. */
static int connect_to(int lfd, uint16_t port, struct conn *cn)
{
	return connect_fd_to(-1, lfd, port, cn);
}

static void close_conn(struct conn *cn)
{
	ep_close(cn->client);
	ep_close(cn->server);
}

/* @len (<= 256) pattern bytes from @from must arrive intact at @to. */
static int exchange(int from, int to, int len, uint32_t seed)
{
	char out[256], in[256];
	int n;

	fill_pattern(out, len, seed);
	memset(in, 0, sizeof(in));
	n = ep_send(from, out, len, SCIF_SEND_BLOCK);
	if (n != len) {
		fprintf(stderr, "# send: %d (%s)\n", n, strerror(errno));
		return -1;
	}
	n = ep_recv(to, in, len, SCIF_RECV_BLOCK);
	if (n != len || check_pattern(in, len, seed) != -1) {
		fprintf(stderr, "# recv: %d (%s)\n", n, strerror(errno));
		return -1;
	}
	return 0;
}

/* Data flows both ways between @a and @b. */
static int link_works(int a, int b)
{
	if (exchange(a, b, 200, a * 31 + b))
		return -1;
	return exchange(b, a, 17, b * 7 + a);
}

/* --- bind --------------------------------------------------------------- */

TEST(bind_any_port_is_assigned)
{
	int a = scif_open(), b = scif_open(), pa, pb;

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	pa = ep_bind(a, 0);
	pb = ep_bind(b, 0);
	EXPECT_LE(SCIF_PORT_RSVD, pa);
	EXPECT_LE(SCIF_PORT_RSVD, pb);
	EXPECT_NE(pa, pb);
	ep_close(a);
	ep_close(b);
}

TEST(bind_given_port)
{
	int fd = scif_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(4242, ep_bind(fd, 4242));
	ep_close(fd);

	/* Closing the endpoint frees its port. */
	fd = scif_open();
	ASSERT_LE(0, fd);
	EXPECT_EQ(4242, ep_bind(fd, 4242));
	ep_close(fd);
}

TEST(bind_twice_einval)
{
	int fd = scif_open();

	ASSERT_LE(0, fd);
	ASSERT_LE(SCIF_PORT_RSVD, ep_bind(fd, 0));
	EXPECT_ERRNO(EINVAL, ep_bind(fd, 0));
	EXPECT_ERRNO(EINVAL, ep_bind(fd, 4243));
	ep_close(fd);
}

TEST(bind_port_in_use_einval)
{
	int a = scif_open(), b = scif_open(), p;

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	p = ep_bind(a, 0);
	ASSERT_LE(SCIF_PORT_RSVD, p);
	EXPECT_ERRNO(EINVAL, ep_bind(b, p));

	/* The failed bind left b unbound, and a's port is free once a is. */
	ep_close(a);
	EXPECT_EQ(p, ep_bind(b, p));
	ep_close(b);
}

TEST(bind_admin_port_as_root)
{
	int fd = scif_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(100, ep_bind(fd, 100));
	ep_close(fd);
}

/* Child: exit 0 if an unprivileged user gets EACCES below 1024 only. */
static int unprivileged_bind_child(void)
{
	int fd;

	if (setgid(65534) || setuid(65534))
		return 10;
	fd = scif_open();
	if (fd < 0)
		return 11;
	errno = 0;
	if (ep_bind(fd, 100) != -1 || errno != EACCES) {
		fprintf(stderr, "# bind 100 as nobody: errno %d\n", errno);
		return 12;
	}
	ep_close(fd);
	fd = scif_open();
	if (fd < 0)
		return 13;
	if (ep_bind(fd, 2000) != 2000) {
		fprintf(stderr, "# bind 2000 as nobody: %s\n", strerror(errno));
		return 14;
	}
	ep_close(fd);
	return 0;
}

TEST(bind_admin_port_unprivileged_eacces)
{
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(unprivileged_bind_child());
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST(bind_connected_eisconn)
{
	struct conn cn;

	ASSERT_EQ(0, connect_pair(&cn));
	EXPECT_ERRNO(EISCONN, ep_bind(cn.client, 0));
	EXPECT_ERRNO(EISCONN, ep_bind(cn.server, 0));
	EXPECT_ERRNO(EISCONN, ep_bind(cn.server, 4245));
	close_conn(&cn);
}

/* --- listen ------------------------------------------------------------- */

TEST(listen_unbound_einval)
{
	int fd = scif_open();

	ASSERT_LE(0, fd);
	EXPECT_ERRNO(EINVAL, ep_listen(fd, 1));
	ep_close(fd);
}

TEST(listen_negative_backlog_einval)
{
	int fd = scif_open();

	ASSERT_LE(0, fd);
	ASSERT_LE(SCIF_PORT_RSVD, ep_bind(fd, 0));
	EXPECT_ERRNO(EINVAL, ep_listen(fd, -1));
	EXPECT_ERRNO(EINVAL, ep_listen(fd, -1000));
	/* Still bound and not listening: a good backlog works. */
	EXPECT_EQ(0, ep_listen(fd, 1));
	ep_close(fd);
}

TEST(listen_twice_eisconn)
{
	int fd = listener(0, 1, NULL);

	ASSERT_LE(0, fd);
	EXPECT_ERRNO(EISCONN, ep_listen(fd, 1));
	ep_close(fd);
}

TEST(listen_connected_eisconn)
{
	struct conn cn;

	ASSERT_EQ(0, connect_pair(&cn));
	EXPECT_ERRNO(EISCONN, ep_listen(cn.client, 1));
	EXPECT_ERRNO(EISCONN, ep_listen(cn.server, 1));
	close_conn(&cn);
}

/* --- connect ------------------------------------------------------------ */

TEST(connect_port_zero_einval)
{
	struct scif_port_id dst = { .node = peer_node(), .port = 0 };
	int fd = scif_open();

	ASSERT_LE(0, fd);
	EXPECT_ERRNO(EINVAL, ep_connect(fd, &dst));
	ep_close(fd);
}

TEST(connect_offline_node_enodev)
{
	struct scif_port_id dst = { .node = OFFLINE_NODE, .port = 2000 };
	int fd = scif_open();

	ASSERT_LE(0, fd);
	EXPECT_ERRNO(ENODEV, ep_connect(fd, &dst));
	ep_close(fd);
}

TEST(connect_nobody_listening_econnrefused)
{
	struct scif_port_id dst = { .node = peer_node(), .port = FREE_PORT };
	int fd = scif_open(), bound = scif_open(), p;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, bound);
	EXPECT_ERRNO(ECONNREFUSED, ep_connect(fd, &dst));
	ep_close(fd);

	/* Bound but not listening refuses just the same. */
	p = ep_bind(bound, 0);
	ASSERT_LE(SCIF_PORT_RSVD, p);
	dst.port = p;
	fd = scif_open();
	ASSERT_LE(0, fd);
	EXPECT_ERRNO(ECONNREFUSED, ep_connect(fd, &dst));
	ep_close(fd);
	ep_close(bound);
}

TEST(connect_from_listener_eopnotsupp)
{
	struct scif_port_id dst = { .node = peer_node() };
	int lfd, target;

	lfd = listener(0, 1, NULL);
	ASSERT_LE(0, lfd);
	target = peer_listener(0, 1, &dst.port);
	ASSERT_LE(0, target);
	EXPECT_ERRNO(EOPNOTSUPP, ep_connect(lfd, &dst));
	EXPECT_EQ(0, ep_poll(target, POLLIN, 0));
	ep_close(lfd);
	ep_close(target);
}

TEST(connect_connected_eisconn)
{
	struct scif_port_id dst = { .node = peer_node() };
	struct conn cn;
	int lfd;

	lfd = peer_listener(0, 1, &dst.port);
	ASSERT_LE(0, lfd);
	ASSERT_EQ(0, connect_to(lfd, dst.port, &cn));
	EXPECT_ERRNO(EISCONN, ep_connect(cn.client, &dst));
	EXPECT_ERRNO(EISCONN, ep_connect(cn.server, &dst));
	/* Nothing was queued on the listener by those attempts. */
	EXPECT_EQ(0, ep_poll(lfd, POLLIN, 0));
	EXPECT_EQ(0, link_works(cn.client, cn.server));
	close_conn(&cn);
	ep_close(lfd);
}

TEST(connect_unbound_binds_automatically)
{
	struct conn cn;

	ASSERT_EQ(0, connect_pair(&cn));
	EXPECT_LE(SCIF_PORT_RSVD, cn.client_port);
	EXPECT_EQ(cn.client_port, cn.peer.port);
	EXPECT_EQ(0, link_works(cn.client, cn.server));
	close_conn(&cn);
}

TEST(connect_from_bound_port)
{
	struct conn cn;
	uint16_t port;
	int lfd, fd;

	lfd = peer_listener(0, 1, &port);
	ASSERT_LE(0, lfd);
	fd = scif_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(4246, ep_bind(fd, 4246));
	ASSERT_EQ(0, connect_fd_to(fd, lfd, port, &cn));
	EXPECT_EQ(4246, cn.client_port);
	EXPECT_EQ(4246, cn.peer.port);
	EXPECT_EQ(0, link_works(cn.client, cn.server));
	close_conn(&cn);
	ep_close(lfd);
}

TEST(connect_blocks_until_accepted)
{
	struct scif_port_id peer;
	struct connector *c;
	uint16_t port;
	int lfd, nfd;

	lfd = peer_listener(0, 1, &port);
	ASSERT_LE(0, lfd);
	c = connector_start(-1, port, 0);
	ASSERT_NE(NULL, c);
	ASSERT_EQ(POLLIN, ep_poll(lfd, POLLIN, WAIT_MS));
	usleep(300 * 1000);
	EXPECT_EQ(0, atomic_load(&c->done))
		TH_LOG("connect returned before the accept");

	ASSERT_EQ(0, ep_accept(lfd, &peer, &nfd, 0));
	ASSERT_LE(SCIF_PORT_RSVD, connector_wait(c, WAIT_MS));
	EXPECT_EQ(c->ret, peer.port);
	EXPECT_EQ(0, link_works(c->fd, nfd));
	connector_free(c);
	ep_close(nfd);
	ep_close(lfd);
}

TEST(connect_nonblocking_with_poll)
{
	struct scif_port_id dst = { .node = peer_node() }, peer;
	int lfd, fd, nfd, port;

	lfd = peer_listener(0, 1, &dst.port);
	ASSERT_LE(0, lfd);
	fd = scif_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, set_nonblock(fd));

	EXPECT_ERRNO(EINPROGRESS, ep_connect(fd, &dst));
	EXPECT_ERRNO(EALREADY, ep_connect(fd, &dst));
	EXPECT_EQ(0, ep_poll(fd, POLLOUT, 0) & POLLOUT)
		TH_LOG("POLLOUT before the accept");

	ASSERT_EQ(0, accept_wait(lfd, &peer, &nfd, NULL));
	EXPECT_TRUE(ep_poll(fd, POLLOUT, WAIT_MS) & POLLOUT);
	port = ep_connect(fd, &dst);
	EXPECT_LE(SCIF_PORT_RSVD, port);
	EXPECT_EQ(peer.port, port);
	EXPECT_ERRNO(EISCONN, ep_connect(fd, &dst));
	EXPECT_EQ(0, link_works(fd, nfd));
	ep_close(fd);
	ep_close(nfd);
	ep_close(lfd);
}

/* --- accept ------------------------------------------------------------- */

TEST(accept_not_listening_einval)
{
	struct scif_port_id peer;
	int fd = scif_open(), nfd = -1;
	struct conn cn;

	ASSERT_LE(0, fd);
	EXPECT_ERRNO(EINVAL, ep_accept(fd, &peer, &nfd, 0));
	ASSERT_LE(SCIF_PORT_RSVD, ep_bind(fd, 0));
	EXPECT_ERRNO(EINVAL, ep_accept(fd, &peer, &nfd, 0));
	EXPECT_ERRNO(EINVAL, ep_accept(fd, &peer, &nfd, SCIF_ACCEPT_SYNC));
	ep_close(fd);

	ASSERT_EQ(0, connect_pair(&cn));
	EXPECT_ERRNO(EINVAL, ep_accept(cn.server, &peer, &nfd, 0));
	EXPECT_ERRNO(EINVAL, ep_accept(cn.client, &peer, &nfd, 0));
	close_conn(&cn);
}

TEST(accept_bad_flags_einval)
{
	struct scif_port_id peer;
	int lfd, nfd = -1;

	lfd = listener(0, 1, NULL);
	ASSERT_LE(0, lfd);
	EXPECT_ERRNO(EINVAL, ep_accept(lfd, &peer, &nfd, 2));
	EXPECT_ERRNO(EINVAL, ep_accept(lfd, &peer, &nfd, -1));
	EXPECT_ERRNO(EINVAL, ep_accept(lfd, &peer, &nfd, SCIF_ACCEPT_SYNC | 4));
	ep_close(lfd);
}

TEST(accept_nothing_pending_eagain)
{
	struct scif_port_id peer;
	int lfd, nfd = -1;

	lfd = listener(0, 1, NULL);
	ASSERT_LE(0, lfd);
	EXPECT_ERRNO(EAGAIN, ep_accept(lfd, &peer, &nfd, 0));
	ep_close(lfd);
}

TEST(accept_sync_waits_for_request)
{
	struct scif_port_id peer;
	struct connector *c;
	uint16_t port;
	int lfd, nfd, ret;
	long t0;

	lfd = peer_listener(0, 1, &port);
	ASSERT_LE(0, lfd);
	c = connector_start(-1, port, 300);
	ASSERT_NE(NULL, c);
	t0 = now_ms();
	alarm_in_ms(10000);	/* a lost request ends in EINTR, not a hang */
	ret = ep_accept(lfd, &peer, &nfd, SCIF_ACCEPT_SYNC);
	alarm_cancel();
	ASSERT_EQ(0, ret) TH_LOG("accept: %s", strerror(errno));
	EXPECT_LE(250, now_ms() - t0);
	ASSERT_LE(0, connector_wait(c, WAIT_MS));
	EXPECT_EQ(c->ret, peer.port);
	EXPECT_EQ(0, link_works(c->fd, nfd));
	connector_free(c);
	ep_close(nfd);
	ep_close(lfd);
}

TEST(accept_sync_interrupted_eintr)
{
	struct scif_port_id peer;
	uint16_t port;
	int lfd, nfd = -1;
	struct conn cn;
	long t0;

	lfd = listener(0, 1, &port);
	ASSERT_LE(0, lfd);
	alarm_in_ms(300);
	t0 = now_ms();
	EXPECT_ERRNO(EINTR, ep_accept(lfd, &peer, &nfd, SCIF_ACCEPT_SYNC));
	EXPECT_LE(250, now_ms() - t0);

	/* The listener is none the worse for it. */
	ASSERT_EQ(0, connect_to(lfd, port, &cn));
	EXPECT_EQ(0, link_works(cn.client, cn.server));
	close_conn(&cn);
	ep_close(lfd);
}

TEST(accept_reports_connector)
{
	struct conn cn;

	ASSERT_EQ(0, connect_pair(&cn));
	EXPECT_EQ(local_node(), cn.peer.node);
	EXPECT_EQ(cn.client_port, cn.peer.port);
	close_conn(&cn);
}

TEST(listener_accepts_many)
{
	enum { N = 4 };
	struct conn cn[N];
	uint16_t port;
	int lfd, i;

	lfd = peer_listener(0, 1, &port);
	ASSERT_LE(0, lfd);
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, connect_to(lfd, port, &cn[i])) TH_LOG("conn %d", i);
		EXPECT_EQ(cn[i].client_port, cn[i].peer.port);
	}
	EXPECT_ERRNO(EISCONN, ep_listen(lfd, 1));	/* still listening */
	for (i = 0; i < N; i++) {
		EXPECT_EQ(0, link_works(cn[i].client, cn[i].server));
		close_conn(&cn[i]);
	}
	ep_close(lfd);
}

/* --- the raw two-step accept ------------------------------------------- */

/* A listener with one request taken by SCIF_ACCEPTREQ, and its connector. */
FIXTURE(parked) {
	int lfd;
	struct connector *c;
	struct scifioctl_accept req;
};

FIXTURE_SETUP(parked)
{
	uint16_t port;

	self->lfd = peer_listener(0, 1, &port);
	ASSERT_LE(0, self->lfd);
	self->c = connector_start(-1, port, 0);
	ASSERT_NE(NULL, self->c);
	ASSERT_EQ(0, acceptreq_wait(self->lfd, &self->req, self->c))
		TH_LOG("ACCEPTREQ: %s", strerror(errno));
}

FIXTURE_TEARDOWN(parked)
{
	if (self->lfd >= 0)
		ep_close(self->lfd);
	connector_free(self->c);
}

/* The request parked in setup is completed on @fd and carries data. */
static int parked_completes(struct connector *c, int fd)
{
	if (connector_wait(c, WAIT_MS) < SCIF_PORT_RSVD) {
		fprintf(stderr, "# connect: %s\n", strerror(errno));
		return -1;
	}
	return link_works(c->fd, fd);
}

TEST_F(parked, cookie_is_opaque)
{
	int fd;

	EXPECT_NE(0, self->req.endpt);
	EXPECT_GT(KERNEL_SPACE, self->req.endpt)
		TH_LOG("cookie %#llx looks like a kernel address",
		       (unsigned long long)self->req.endpt);
	EXPECT_EQ(local_node(), self->req.peer.node);

	fd = acceptreg_fresh(self->req.endpt);
	ASSERT_LE(0, fd) TH_LOG("ACCEPTREG: %s", strerror(errno));
	EXPECT_EQ(0, parked_completes(self->c, fd));
	EXPECT_EQ(self->c->ret, self->req.peer.port);
	ep_close(fd);
}

TEST_F(parked, forged_cookie_enoent)
{
	const uint64_t forged[] = {
		self->req.endpt ^ 1,
		self->req.endpt ^ 0x5a5a5a5a00000000ULL,
		self->req.endpt + 4096,
		0x0123456789abcdefULL,
	};
	size_t i;
	int fd;

	for (i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
		if (forged[i] == self->req.endpt)
			continue;
		EXPECT_ERRNO(ENOENT, acceptreg_fresh(forged[i]));
	}
	EXPECT_EQ(0, atomic_load(&self->c->done));

	/* The genuine cookie was not used up by the forgeries. */
	fd = acceptreg_fresh(self->req.endpt);
	ASSERT_LE(0, fd) TH_LOG("ACCEPTREG: %s", strerror(errno));
	EXPECT_EQ(0, parked_completes(self->c, fd));
	ep_close(fd);
}

TEST_F(parked, cookie_single_use)
{
	int fd;

	fd = acceptreg_fresh(self->req.endpt);
	ASSERT_LE(0, fd) TH_LOG("ACCEPTREG: %s", strerror(errno));
	EXPECT_ERRNO(ENOENT, acceptreg_fresh(self->req.endpt));
	EXPECT_EQ(0, parked_completes(self->c, fd));
	ep_close(fd);
}

/* Child: exit 0 if the parent's cookie is ENOENT here. */
static int foreign_cookie_child(uint64_t cookie)
{
	int fd = scif_open();

	if (fd < 0)
		return 10;
	errno = 0;
	if (ioctl(fd, SCIF_ACCEPTREG, &cookie) != -1 || errno != ENOENT) {
		fprintf(stderr, "# ACCEPTREG in the child: errno %d\n", errno);
		return 11;
	}
	return 0;
}

TEST_F(parked, cookie_of_other_process_enoent)
{
	int status, fd;
	pid_t pid;

	if (remote_mode())
		SKIP(return, "the listener is on another node");

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(foreign_cookie_child(self->req.endpt));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));

	/* Still the parent's to use, once. */
	fd = acceptreg_fresh(self->req.endpt);
	ASSERT_LE(0, fd) TH_LOG("ACCEPTREG: %s", strerror(errno));
	EXPECT_EQ(0, parked_completes(self->c, fd));
	EXPECT_ERRNO(ENOENT, acceptreg_fresh(self->req.endpt));
	ep_close(fd);
}

TEST_F(parked, acceptreg_on_bound_fd_einval)
{
	int fd = peer_open();

	ASSERT_LE(0, fd);
	ASSERT_LE(SCIF_PORT_RSVD, ep_bind(fd, 0));
	EXPECT_ERRNO(EINVAL, ep_acceptreg(fd, self->req.endpt));
	ep_close(fd);

	/* Whatever became of the request, closing the listener refuses it. */
	ep_close(self->lfd);
	self->lfd = -1;
	EXPECT_ERRNO(ECONNREFUSED, connector_wait(self->c, WAIT_MS));
}

TEST_F(parked, listener_closed_refuses)
{
	EXPECT_EQ(0, atomic_load(&self->c->done));
	ep_close(self->lfd);
	self->lfd = -1;
	EXPECT_ERRNO(ECONNREFUSED, connector_wait(self->c, WAIT_MS));
}

/* --- backlog and listeners closed under pending requests --------------- */

TEST(backlog_overflow_refused)
{
	struct scif_port_id dst = { .node = peer_node() }, peer[2];
	int lfd, fd[2], nfd[2], port[2], dummy, i;
	struct connector *third;

	lfd = peer_listener(0, 2, &dst.port);
	ASSERT_LE(0, lfd);
	for (i = 0; i < 2; i++) {
		fd[i] = scif_open();
		ASSERT_LE(0, fd[i]);
		ASSERT_EQ(0, set_nonblock(fd[i]));
		EXPECT_ERRNO(EINPROGRESS, ep_connect(fd[i], &dst));
	}
	ASSERT_EQ(POLLIN, ep_poll(lfd, POLLIN, WAIT_MS));
	usleep(300 * 1000);	/* let the second request arrive too */

	/* A blocking third: the refusal must come, not a wait. */
	third = connector_start(-1, dst.port, 0);
	ASSERT_NE(NULL, third);
	EXPECT_ERRNO(ECONNREFUSED, connector_wait(third, WAIT_MS));
	connector_free(third);

	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, accept_wait(lfd, &peer[i], &nfd[i], NULL));
	EXPECT_ERRNO(EAGAIN, ep_accept(lfd, &peer[0], &dummy, 0));
	for (i = 0; i < 2; i++) {
		EXPECT_TRUE(ep_poll(fd[i], POLLOUT, WAIT_MS) & POLLOUT);
		port[i] = ep_connect(fd[i], &dst);
		EXPECT_LE(SCIF_PORT_RSVD, port[i]);
	}

	/* Each accepted endpoint is the peer of one of the connectors. */
	ASSERT_TRUE((peer[0].port == port[0] && peer[1].port == port[1]) ||
		    (peer[0].port == port[1] && peer[1].port == port[0]));
	for (i = 0; i < 2; i++)
		EXPECT_EQ(0, link_works(peer[i].port == port[0] ? fd[0] : fd[1],
					nfd[i]));
	for (i = 0; i < 2; i++) {
		ep_close(nfd[i]);
		ep_close(fd[i]);
	}
	ep_close(lfd);
}

TEST(listener_close_refuses_pending_nonblocking)
{
	struct scif_port_id dst = { .node = peer_node() };
	int lfd, fd, revents;

	lfd = peer_listener(0, 4, &dst.port);
	ASSERT_LE(0, lfd);
	fd = scif_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, set_nonblock(fd));
	EXPECT_ERRNO(EINPROGRESS, ep_connect(fd, &dst));
	ASSERT_EQ(POLLIN, ep_poll(lfd, POLLIN, WAIT_MS));

	ep_close(lfd);
	revents = ep_poll(fd, POLLIN | POLLOUT, WAIT_MS);
	ASSERT_LE(0, revents);
	EXPECT_TRUE(revents & POLLERR) TH_LOG("revents %#x", revents);
	EXPECT_ERRNO(ECONNREFUSED, ep_connect(fd, &dst));
	ep_close(fd);
}

TEST(listener_close_refuses_pending_blocking)
{
	struct connector *c[2];
	uint16_t port;
	int lfd, i;

	lfd = peer_listener(0, 4, &port);
	ASSERT_LE(0, lfd);
	for (i = 0; i < 2; i++) {
		c[i] = connector_start(-1, port, 0);
		ASSERT_NE(NULL, c[i]);
	}
	ASSERT_EQ(POLLIN, ep_poll(lfd, POLLIN, WAIT_MS));
	usleep(300 * 1000);	/* let the second request arrive too */

	ep_close(lfd);
	for (i = 0; i < 2; i++) {
		EXPECT_ERRNO(ECONNREFUSED, connector_wait(c[i], WAIT_MS));
		connector_free(c[i]);
	}
}

TEST_HARNESS_MAIN
