/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the SCIF selftests.  Include after
 * kselftest_harness.h (EXPECT_ERRNO uses it).
 *
 * The part that calls libscif is compiled only where the test defines
 * SCIF_TEST_WITH_LIBSCIF before including this header: scif_dev_test
 * and scif_abi_test do not link libscif.
 */
#ifndef SCIF_TEST_UTIL_H
#define SCIF_TEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/time.h>
#include <sys/types.h>

#define EPD_LIST	"/sys/kernel/debug/scif/endpoints"
#define WAIT_MS		5000		/* bound on anything that should be quick */

/* The call must fail with errno @err. */
#define EXPECT_ERRNO(err, call) do {					\
	int ret_, err_;							\
	errno = 0;							\
	ret_ = (call);							\
	err_ = errno;							\
	EXPECT_EQ(-1, ret_) TH_LOG("%s", #call);			\
	EXPECT_EQ(err, err_) TH_LOG("%s: %s", #call, strerror(err_));	\
} while (0)

/*
 * Without /dev/scif (scif.ko not loaded, or not a SCIF machine) a test
 * program has nothing to test: it says so as kselftest does and exits
 * with KSFT_SKIP (4) before its harness starts, so that run_tests and
 * run_kselftest.sh report a skip, not a failure.
 */
__attribute__((constructor)) static void test_need_scif_dev(void)
{
	if (access("/dev/scif", F_OK) && errno == ENOENT) {
		printf("1..0 # SKIP /dev/scif: no such device (load scif.ko)\n");
		exit(4);
	}
}

/* CLOCK_MONOTONIC in milliseconds. */
static inline long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/*
 * SCIF_TEST_SLOW=1 (set by make coverage for its gcov kernel, several
 * times slower than the debug kernel): long loops run a tenth of their
 * rounds and the 1 GiB registrations are skipped.  Never set by make check.
 */
static inline bool test_slow_kernel(void)
{
	const char *s = getenv("SCIF_TEST_SLOW");

	return s && s[0] == '1';
}

/*
 * The debug kernel (KASAN, kmemleak, lockdep: kmemleak's file tells it)
 * runs a small RMA a hundred times slower than Debian's kernels under
 * QEMU without KVM; what it is there to catch (a bad access, a leak, a
 * lock order) shows in the first rounds of a loop as in the last.
 * SCIF_TEST_FULL_ROUNDS=1 gives its loops all their rounds.
 */
static inline bool test_debug_kernel(void)
{
	return !access("/sys/kernel/debug/kmemleak", F_OK);
}

/*
 * Whether long loops run a tenth of their rounds and the longest tests
 * are left out: on a slow kernel or, unless SCIF_TEST_FULL_ROUNDS=1, on
 * the debug kernel.
 */
static inline bool test_few_rounds(void)
{
	return test_slow_kernel() ||
	       (test_debug_kernel() && !getenv("SCIF_TEST_FULL_ROUNDS"));
}

/* @n rounds, or a tenth of them (at least one) when test_few_rounds(). */
static inline long test_rounds(long n)
{
	return test_few_rounds() && n >= 10 ? n / 10 : n;
}

/* The number of lines in @path (a debugfs list), or -1. */
static inline int count_lines(const char *path)
{
	char line[256];
	int n = 0;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

/*
 * Endpoints are destroyed asynchronously after their last close: count
 * the lines of @path up to @tries times, 10 ms apart, until there are
 * @want.  The last count.
 */
static inline int settled_count(const char *path, int want, int tries)
{
	int n = -1;

	for (; tries > 0; tries--) {
		n = count_lines(path);
		if (n == want)
			break;
		usleep(10000);
	}
	return n;
}

/* Read a small file (sysfs, debugfs) into @buf, NUL-terminated: 0 or -1. */
static inline int read_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* The driver's RMA figures (debugfs, root only). */
#define RMA_STATS	"/sys/kernel/debug/scif/rma"

/* A field ("key value") of a debugfs statistics file, or -1. */
static inline long file_stat(const char *path, const char *key)
{
	char buf[2048], *p;

	if (read_file(path, buf, sizeof(buf)))
		return -1;
	p = strstr(buf, key);
	return p ? atol(p + strlen(key) + 1) : -1;
}

/* Wait (up to 5 s) for @key of @path to be @want; its last value. */
static inline long file_stat_settles_at(const char *path, const char *key,
					long want)
{
	long n = -1;
	int i;

	for (i = 0; i < 500; i++) {
		n = file_stat(path, key);
		if (n == want)
			break;
		usleep(10000);
	}
	return n;
}

/* A field of RMA_STATS, or -1. */
static inline long rma_stat(const char *key)
{
	return file_stat(RMA_STATS, key);
}

/* Wait (up to 5 s) for @key of RMA_STATS to be @want; its last value. */
static inline long rma_stat_settles_at(const char *key, long want)
{
	return file_stat_settles_at(RMA_STATS, key, want);
}

/* Wait (up to 5 s) for pinned_pages to be @want; its last value. */
static inline long pinned_settles_at(long want)
{
	return rma_stat_settles_at("pinned_pages", want);
}

/* VmPin of this process in kB, or -1. */
static inline long vm_pin_kb(void)
{
	char buf[4096], *p;

	if (read_file("/proc/self/status", buf, sizeof(buf)))
		return -1;
	p = strstr(buf, "VmPin:");
	return p ? atol(p + 6) : -1;
}

/* Write all of @val to @path in one write: 0 or -1. */
static inline int write_file(const char *path, const char *val)
{
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/* A position-dependent byte stream, different for every @seed. */
static inline uint8_t pattern_next(uint32_t *x)
{
	*x = *x * 1664525u + 1013904223u;
	return *x >> 24;
}

/* Fill @buf with the first @len bytes of stream @seed. */
static inline void fill_pattern(void *buf, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern_next(&x);
}

/* Offset of the first byte that is not the stream's, or -1. */
static inline ssize_t check_pattern(const void *buf, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pattern_next(&x))
			return i;
	return -1;
}

/* poll() one fd: its revents, 0 on timeout, -1 on error. */
static inline int poll_one(int fd, short events, int ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int n = poll(&p, 1, ms);

	return n < 0 ? -1 : n == 0 ? 0 : p.revents;
}

/* close() that leaves errno as it was. */
static inline void util_close_keep_errno(int fd)
{
	int err = errno;

	close(fd);
	errno = err;
}

/* SIGALRM after @ms with a no-op handler and no SA_RESTART: EINTR. */
static inline void on_alarm(int sig)
{
	(void)sig;
}

static inline void alarm_in_ms(long ms)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = {
		.it_value = { .tv_sec = ms / 1000, .tv_usec = ms % 1000 * 1000 },
	};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

/* Disarm alarm_in_ms(). */
static inline void alarm_cancel(void)
{
	struct itimerval it = { 0 };

	setitimer(ITIMER_REAL, &it, NULL);
}

#ifdef SCIF_TEST_WITH_LIBSCIF
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <linux/scif_ioctl.h>
#include "scif.h"
#include "scif_test_remote.h"

/* This node's id, or 0. */
static inline uint16_t local_node(void)
{
	uint16_t nodes[64], self = 0;

	if (scif_get_nodeIDs(nodes, 64, &self) < 0)
		return 0;
	return self;
}

#define SYSFS_NODES	"/sys/class/misc/scif/nodes"

/* nodes/<self>/<name> (e.g. "stats/tx_bytes") as a number; -1 if unreadable. */
static inline long long node_file(const char *name)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), SYSFS_NODES "/%u/%s", local_node(), name);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	return strtoll(buf, NULL, 10);
}

/*
 * The 7 counters (tx bytes and messages, rx bytes and messages, RMA
 * operations and bytes, errors) of the endpoint bound to local @port and,
 * unless @state is NULL, in that state, from debugfs.  0, or -1 if there
 * is none.
 */
static inline int ep_counters(unsigned int port, const char *state,
			      unsigned long long *c)
{
	unsigned int lport, pnode, pport;
	char line[512], handle[32], st[32];
	FILE *f = fopen(EPD_LIST, "r");
	int found = -1;

	if (!f)
		return -1;
	while (found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%31s %31s %u %u:%u %llu %llu %llu %llu %llu %llu %llu",
			   handle, st, &lport, &pnode, &pport, &c[0], &c[1],
			   &c[2], &c[3], &c[4], &c[5], &c[6]) == 12 &&
		    lport == port && (!state || !strcmp(st, state)))
			found = 0;
	fclose(f);
	return found;
}

/* $SCIF_PEER_NODE, or the local node; looked up once. */
static inline uint16_t peer_node(void)
{
	static atomic_int cached = -1;
	const char *s = getenv("SCIF_PEER_NODE");
	unsigned long v;
	char *end;

	if (atomic_load(&cached) >= 0)
		return atomic_load(&cached);
	errno = 0;
	v = s && *s ? strtoul(s, &end, 0) : ULONG_MAX;
	if (v == ULONG_MAX || errno || *end || v > UINT16_MAX)
		v = local_node();
	atomic_store(&cached, v);
	return v;
}

/* --- endpoints on the peer node (see scif_test_remote.h) ---------------- */

/* True when the peer is another node: then peer endpoints are remote. */
static inline bool remote_mode(void)
{
	return peer_node() != local_node();
}

static inline bool ep_is_remote(int fd)
{
	return fd >= REMOTE_FD_BASE;
}

/* The node an endpoint lives on. */
static inline uint16_t ep_node(int fd)
{
	return ep_is_remote(fd) ? peer_node() : local_node();
}

/* This thread's control connection to the agent, and who opened it. */
static __thread int agent_fd = -1;
static __thread pid_t agent_pid;
static pthread_key_t agent_key;
static pthread_once_t agent_once = PTHREAD_ONCE_INIT;

/* A thread's control connection ends with the thread. */
static inline void agent_thread_exit(void *arg)
{
	scif_close((int)(intptr_t)arg - 1);
}

static inline void agent_key_init(void)
{
	pthread_key_create(&agent_key, agent_thread_exit);
}

/* Close this thread's control connection (the thread-exit hook too). */
static inline void agent_drop(void)
{
	int err = errno;

	if (agent_fd >= 0 && agent_pid == getpid()) {
		scif_close(agent_fd);
		pthread_setspecific(agent_key, NULL);
	}
	agent_fd = -1;
	errno = err;
}

/* This thread's control connection (a fork gets its own): fd or -1. */
static inline int agent_session(void)
{
	struct scif_port_id dst = { .node = peer_node(), .port = AGENT_PORT };
	int fd, tries;

	if (agent_fd >= 0 && agent_pid == getpid())
		return agent_fd;
	agent_fd = -1;
	pthread_once(&agent_once, agent_key_init);
	for (tries = 0; ; tries++) {
		fd = scif_open();
		if (fd < 0)
			return -1;
		if (scif_connect(fd, &dst) >= 0)
			break;
		util_close_keep_errno(fd);
		/* The agent may still be starting. */
		if (errno != ECONNREFUSED || tries == 50)
			return -1;
		usleep(100 * 1000);
	}
	agent_fd = fd;
	agent_pid = getpid();
	pthread_setspecific(agent_key, (void *)(intptr_t)(fd + 1));
	return fd;
}

/* Move all of @len bytes over @fd; a signal ends it (EINTR). */
static inline int agent_xfer(int fd, void *buf, size_t len, bool out)
{
	return agent_xfer_all(fd, buf, len, out, false);
}

/*
 * One call on the agent: @req (its len set from @plen) and @payload out,
 * the reply into @rep and up to @cap bytes of its payload into @buf.
 * Returns rep->ret with errno from rep->err.  A transport failure
 * (a signal, the agent gone) drops the control connection, whose remote
 * endpoints the agent then closes, and returns -1 with its errno.
 */
static inline int64_t agent_call(struct agent_req *req, const void *payload,
				 size_t plen, struct agent_rep *rep,
				 void *buf, size_t cap)
{
	int fd = agent_session();

	memset(rep, 0, sizeof(*rep));
	if (fd < 0)
		return -1;
	req->len = plen;
	if (agent_xfer(fd, req, sizeof(*req), true) ||
	    agent_xfer(fd, (void *)payload, plen, true) ||
	    agent_xfer(fd, rep, sizeof(*rep), false))
		goto broken;
	if (rep->len > cap) {
		errno = EPROTO;
		goto broken;
	}
	if (agent_xfer(fd, buf, rep->len, false))
		goto broken;
	errno = rep->err;
	return rep->ret;
broken:
	fprintf(stderr, "# agent: %s\n", strerror(errno));
	agent_drop();
	return -1;
}

/* A call without payloads, on remote endpoint @fd (or none). */
static inline int64_t agent_simple(uint32_t op, int fd, int64_t a1,
				   int64_t a2, struct agent_rep *rep)
{
	struct agent_req req = {
		.op = op, .arg = { fd - REMOTE_FD_BASE, a1, a2 },
	};
	struct agent_rep dummy;

	return agent_call(&req, NULL, 0, rep ? rep : &dummy, NULL, 0);
}

/* Make sure this thread's control connection exists: 0 or -1. */
static inline int agent_ready(void)
{
	return !remote_mode() || agent_session() >= 0 ? 0 : -1;
}

/* Endpoints listed on the agent's node, or -1. */
static inline int agent_epcount(void)
{
	return agent_simple(RPC_EPCOUNT, REMOTE_FD_BASE, 0, 0, NULL);
}

/* An endpoint on the peer node (this node when the peer is local). */
static inline int peer_open(void)
{
	int64_t h;

	if (!remote_mode())
		return scif_open();
	h = agent_simple(RPC_OPEN, REMOTE_FD_BASE, 0, 0, NULL);
	return h < 0 ? -1 : REMOTE_FD_BASE + (int)h;
}

static inline int ep_close(int fd)
{
	if (!ep_is_remote(fd))
		return scif_close(fd);
	return agent_simple(RPC_CLOSE, fd, 0, 0, NULL);
}

/* ep_close() that leaves errno as it was. */
static inline void ep_close_keep_errno(int fd)
{
	int err = errno;

	ep_close(fd);
	errno = err;
}

static inline int ep_bind(int fd, uint16_t port)
{
	if (!ep_is_remote(fd))
		return scif_bind(fd, port);
	return agent_simple(RPC_BIND, fd, port, 0, NULL);
}

static inline int ep_listen(int fd, int backlog)
{
	if (!ep_is_remote(fd))
		return scif_listen(fd, backlog);
	return agent_simple(RPC_LISTEN, fd, backlog, 0, NULL);
}

static inline int ep_connect(int fd, struct scif_port_id *dst)
{
	if (!ep_is_remote(fd))
		return scif_connect(fd, dst);
	return agent_simple(RPC_CONNECT, fd, dst->node, dst->port, NULL);
}

static inline int ep_accept(int fd, struct scif_port_id *peer, int *nfd,
			    int flags)
{
	struct agent_rep rep;
	int64_t h;

	if (!ep_is_remote(fd))
		return scif_accept(fd, peer, nfd, flags);
	h = agent_simple(RPC_ACCEPT, fd, flags, 0, &rep);
	if (h < 0)
		return -1;
	*nfd = REMOTE_FD_BASE + (int)h;
	peer->node = rep.val[0];
	peer->port = rep.val[1];
	return 0;
}

/* ioctl(SCIF_ACCEPTREQ) on listener @fd. */
static inline int ep_acceptreq(int fd, struct scifioctl_accept *req)
{
	struct agent_rep rep;

	if (!ep_is_remote(fd))
		return ioctl(fd, SCIF_ACCEPTREQ, req);
	if (agent_simple(RPC_ACCEPTREQ, fd, 0, 0, &rep) < 0)
		return -1;
	req->endpt = rep.val[0];
	req->peer.node = rep.val[1];
	req->peer.port = rep.val[2];
	return 0;
}

/* ioctl(SCIF_ACCEPTREG) of @cookie on @fd. */
static inline int ep_acceptreg(int fd, uint64_t cookie)
{
	if (!ep_is_remote(fd))
		return ioctl(fd, SCIF_ACCEPTREG, &cookie);
	return agent_simple(RPC_ACCEPTREG, fd, cookie, 0, NULL);
}

static inline int ep_send(int fd, void *buf, int len, int flags)
{
	struct agent_req req = { .op = RPC_SEND };
	struct agent_rep rep;

	if (!ep_is_remote(fd))
		return scif_send(fd, buf, len, flags);
	/* Errors the agent could not see: the buffer is ours. */
	if (len < 0 || len > AGENT_MAX_PAYLOAD) {
		errno = EINVAL;
		return -1;
	}
	req.arg[0] = fd - REMOTE_FD_BASE;
	req.arg[1] = flags;
	return agent_call(&req, buf, len, &rep, NULL, 0);
}

static inline int ep_recv(int fd, void *buf, int len, int flags)
{
	struct agent_req req = { .op = RPC_RECV };
	struct agent_rep rep;

	if (!ep_is_remote(fd))
		return scif_recv(fd, buf, len, flags);
	req.arg[0] = fd - REMOTE_FD_BASE;
	req.arg[1] = len;
	req.arg[2] = flags;
	return agent_call(&req, NULL, 0, &rep, buf, len > 0 ? len : 0);
}

/* poll_one() on a local or remote endpoint. */
static inline int ep_poll(int fd, short events, int ms)
{
	struct agent_rep rep;

	if (!ep_is_remote(fd))
		return poll_one(fd, events, ms);
	if (agent_simple(RPC_POLL, fd, events, ms, &rep) < 0)
		return -1;
	return rep.ret == 0 ? 0 : rep.val[0];
}

/* An endpoint bound to @port (0: any) and listening with @backlog. */
static inline int listener(uint16_t port, int backlog, uint16_t *bound)
{
	int fd = scif_open(), p;

	if (fd < 0)
		return -1;
	p = scif_bind(fd, port);
	if (p < 0 || scif_listen(fd, backlog) < 0) {
		util_close_keep_errno(fd);
		return -1;
	}
	if (bound)
		*bound = p;
	return fd;
}

/* listener() on the peer node: the endpoint to connect to. */
static inline int peer_listener(uint16_t port, int backlog, uint16_t *bound)
{
	int fd = peer_open(), p;

	if (fd < 0)
		return -1;
	p = ep_bind(fd, port);
	if (p < 0 || ep_listen(fd, backlog) < 0) {
		ep_close_keep_errno(fd);
		return -1;
	}
	if (bound)
		*bound = p;
	return fd;
}

/*
 * A blocking scif_connect() run in a thread, optionally after a delay.
 * Heap-allocated: a thread stuck in the kernel never outlives its data.
 */
struct connector {
	pthread_t thread;
	int fd;
	int delay_ms;
	struct scif_port_id dst;
	int ret;			/* scif_connect()'s result */
	int err;			/* and its errno */
	atomic_int done;
	int joined;
};

static inline void *connector_fn(void *arg)
{
	struct connector *c = arg;

	if (c->delay_ms)
		usleep(c->delay_ms * 1000);
	errno = 0;
	c->ret = scif_connect(c->fd, &c->dst);
	c->err = errno;
	atomic_store(&c->done, 1);
	return NULL;
}

/* Connect @fd (-1: a new endpoint) to @port of @node. */
static inline struct connector *connector_start_to(int fd, uint16_t node,
						   uint16_t port, int delay_ms)
{
	struct connector *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->ret = -1;
	c->delay_ms = delay_ms;
	c->dst.node = node;
	c->dst.port = port;
	c->fd = fd >= 0 ? fd : scif_open();
	if (c->fd < 0 || pthread_create(&c->thread, NULL, connector_fn, c)) {
		if (fd < 0 && c->fd >= 0)
			close(c->fd);
		free(c);
		return NULL;
	}
	return c;
}

/* Connect @fd (-1: a new endpoint) to @port of the peer node. */
static inline struct connector *connector_start(int fd, uint16_t port,
						int delay_ms)
{
	return connector_start_to(fd, peer_node(), port, delay_ms);
}

/*
 * Wait up to @ms for the connect to return and reap the thread: its
 * result with its errno, or -1/ETIMEDOUT.
 */
static inline int connector_wait(struct connector *c, int ms)
{
	long end = now_ms() + ms;

	while (!atomic_load(&c->done) && now_ms() < end)
		usleep(1000);
	if (!atomic_load(&c->done)) {
		errno = ETIMEDOUT;
		return -1;
	}
	if (!c->joined)
		pthread_join(c->thread, NULL);
	c->joined = 1;
	errno = c->err;
	return c->ret;
}

/* Free @c and close its endpoint, unless its thread is still running. */
static inline void connector_free(struct connector *c)
{
	if (!c || !c->joined)
		return;
	close(c->fd);
	free(c);
}

/* Non-blocking accept retried for up to WAIT_MS, or until @c has failed. */
static inline int accept_wait(int lfd, struct scif_port_id *peer, int *nfd,
			      struct connector *c)
{
	long end = now_ms() + WAIT_MS;

	for (;;) {
		if (ep_accept(lfd, peer, nfd, 0) == 0)
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

/* Both ends of one connection, and what each side learnt of the other. */
struct conn {
	int client, server;
	int client_port;		/* scif_connect()'s result */
	struct scif_port_id peer;	/* scif_accept()'s peer */
};

/*
 * Connect @fd (-1: a new endpoint) to listener @lfd at @port and accept
 * it, each step bounded by WAIT_MS.  @cn->client is set on success only.
 */
static inline int connect_fd_to(int fd, int lfd, uint16_t port,
				struct conn *cn)
{
	struct connector *c = connector_start_to(fd, ep_node(lfd), port, 0);
	int ret;

	if (!c)
		return -1;
	if (accept_wait(lfd, &cn->peer, &cn->server, c)) {
		fprintf(stderr, "# accept: %s\n", strerror(errno));
		connector_wait(c, 0);
		connector_free(c);
		return -1;
	}
	ret = connector_wait(c, WAIT_MS);
	if (ret < 0) {
		fprintf(stderr, "# connect: %s\n", strerror(errno));
		return -1;
	}
	cn->client = c->fd;
	cn->client_port = ret;
	free(c);
	return 0;
}

/*
 * A connection through a listener of its own on the peer node, closed
 * afterwards: @cn->client is local, @cn->server on the peer node.
 */
static inline int connect_pair(struct conn *cn)
{
	uint16_t port;
	int lfd, ret;

	lfd = peer_listener(0, 1, &port);
	if (lfd < 0)
		return -1;
	ret = connect_fd_to(-1, lfd, port, cn);
	ep_close(lfd);
	return ret;
}
#endif /* SCIF_TEST_WITH_LIBSCIF */

#endif /* SCIF_TEST_UTIL_H */
