// SPDX-License-Identifier: GPL-2.0
/*
 * The far end of the selftests that run with their peer on another node
 * (see scif_test_remote.h): serves control connections on AGENT_PORT,
 * one thread each, and makes the SCIF calls they ask for on endpoints
 * of this node.
 *
 *   scif_peer_agent            serve until asked to stop (TAP: ok if a
 *                              stop came; not ok if no control connection
 *                              was open for IDLE_S seconds)
 *   scif_peer_agent wait NODE  wait up to WAIT_S seconds for the agent
 *                              on NODE to answer (TAP)
 *   scif_peer_agent stop NODE  ask the agent on NODE to stop (TAP)
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/scif_ioctl.h>

#include "scif.h"
#include "scif_test_remote.h"

#define MAX_HANDLES	4096
#define IDLE_S		300
#define WAIT_S		120
#define EPD_LIST	"/sys/kernel/debug/scif/endpoints"

/* Endpoints by handle, and the session that owns each; under table_lock. */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int fd;			/* 0: free slot (fd 0 is stdin, never ours) */
	unsigned long owner;
} table[MAX_HANDLES];

static atomic_int sessions_open, sessions_served, stop_requested;
static atomic_long last_activity;
static atomic_ulong next_session = 1;

static long now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static int64_t handle_add(int fd, unsigned long owner)
{
	int64_t h = -1;
	int i;

	pthread_mutex_lock(&table_lock);
	for (i = 0; i < MAX_HANDLES; i++) {
		if (!table[i].fd) {
			table[i].fd = fd;
			table[i].owner = owner;
			h = i;
			break;
		}
	}
	pthread_mutex_unlock(&table_lock);
	if (h < 0) {
		scif_close(fd);
		errno = EMFILE;
	}
	return h;
}

/* The fd of handle @h, or -1 with EBADF. */
static int handle_fd(int64_t h)
{
	int fd = -1;

	pthread_mutex_lock(&table_lock);
	if (h >= 0 && h < MAX_HANDLES && table[h].fd)
		fd = table[h].fd;
	pthread_mutex_unlock(&table_lock);
	if (fd < 0)
		errno = EBADF;
	return fd;
}

static int handle_close(int64_t h)
{
	int fd = -1;

	pthread_mutex_lock(&table_lock);
	if (h >= 0 && h < MAX_HANDLES && table[h].fd) {
		fd = table[h].fd;
		table[h].fd = 0;
	}
	pthread_mutex_unlock(&table_lock);
	if (fd < 0) {
		errno = EBADF;
		return -1;
	}
	return scif_close(fd);
}

/* What a process exit would do: close every endpoint of @owner. */
static void handles_release(unsigned long owner)
{
	int i;

	pthread_mutex_lock(&table_lock);
	for (i = 0; i < MAX_HANDLES; i++) {
		if (table[i].fd && table[i].owner == owner) {
			scif_close(table[i].fd);
			table[i].fd = 0;
		}
	}
	pthread_mutex_unlock(&table_lock);
}

static int count_endpoints(void)
{
	char line[256];
	FILE *f = fopen(EPD_LIST, "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

/* All of @len bytes over @fd, blocking: 0, or -1 when the session ends. */
static int xfer(int fd, void *buf, size_t len, bool out)
{
	return agent_xfer_all(fd, buf, len, out, true);
}

struct session {
	int fd;
	unsigned long id;
};

static int64_t do_accept(int fd, int flags, struct session *s,
			 struct agent_rep *rep)
{
	struct scif_port_id peer;
	int nfd;

	if (scif_accept(fd, &peer, &nfd, flags) < 0)
		return -1;
	rep->val[0] = peer.node;
	rep->val[1] = peer.port;
	return handle_add(nfd, s->id);
}

static int64_t do_acceptreq(int fd, struct agent_rep *rep)
{
	struct scifioctl_accept req;

	memset(&req, 0, sizeof(req));
	if (ioctl(fd, SCIF_ACCEPTREQ, &req) < 0)
		return -1;
	rep->val[0] = req.endpt;
	rep->val[1] = req.peer.node;
	rep->val[2] = req.peer.port;
	return 0;
}

static int64_t do_poll(int fd, int events, int ms, struct agent_rep *rep)
{
	struct pollfd p = { .fd = fd, .events = events };
	int n = poll(&p, 1, ms);

	if (n > 0)
		rep->val[0] = p.revents;
	return n;
}

/* Run @req on this node; fills @rep, and *@out with RPC_RECV's data. */
static void execute(struct session *s, const struct agent_req *req,
		    void *payload, void **out, struct agent_rep *rep)
{
	const int64_t *a = req->arg;
	int fd = -1;

	errno = 0;
	if (req->op != RPC_OPEN && req->op != RPC_CLOSE &&
	    req->op != RPC_EPCOUNT && req->op != RPC_STOP) {
		fd = handle_fd(a[0]);
		if (fd < 0) {
			rep->ret = -1;
			goto out;
		}
	}
	switch (req->op) {
	case RPC_OPEN:
		fd = scif_open();
		rep->ret = fd < 0 ? -1 : handle_add(fd, s->id);
		break;
	case RPC_CLOSE:
		rep->ret = handle_close(a[0]);
		break;
	case RPC_BIND:
		rep->ret = scif_bind(fd, a[1]);
		break;
	case RPC_LISTEN:
		rep->ret = scif_listen(fd, a[1]);
		break;
	case RPC_CONNECT: {
		struct scif_port_id dst = { .node = a[1], .port = a[2] };

		rep->ret = scif_connect(fd, &dst);
		break;
	}
	case RPC_ACCEPT:
		rep->ret = do_accept(fd, a[1], s, rep);
		break;
	case RPC_ACCEPTREQ:
		rep->ret = do_acceptreq(fd, rep);
		break;
	case RPC_ACCEPTREG: {
		uint64_t cookie = a[1];

		rep->ret = ioctl(fd, SCIF_ACCEPTREG, &cookie);
		break;
	}
	case RPC_SEND:
		rep->ret = scif_send(fd, payload, req->len, a[1]);
		break;
	case RPC_RECV:
		if (a[1] < 0) {
			/* scif_recv() judges a bad length itself. */
			rep->ret = scif_recv(fd, NULL, a[1], a[2]);
			break;
		}
		if (a[1] > AGENT_MAX_PAYLOAD) {
			rep->ret = -1;
			errno = E2BIG;
			break;
		}
		*out = malloc(a[1] ? a[1] : 1);
		if (!*out) {
			rep->ret = -1;
			errno = ENOMEM;
			break;
		}
		rep->ret = scif_recv(fd, *out, a[1], a[2]);
		if (rep->ret > 0)
			rep->len = rep->ret;
		break;
	case RPC_POLL:
		rep->ret = do_poll(fd, a[1], a[2], rep);
		break;
	case RPC_EPCOUNT:
		rep->ret = count_endpoints();
		break;
	case RPC_STOP:
		atomic_store(&stop_requested, 1);
		rep->ret = 0;
		break;
	default:
		rep->ret = -1;
		errno = ENOSYS;
	}
out:
	rep->err = rep->ret < 0 ? errno : 0;
}

static void *serve_session(void *arg)
{
	struct session *s = arg;
	struct agent_req req;
	struct agent_rep rep;
	void *payload, *out;
	bool ok = true;

	while (ok && !xfer(s->fd, &req, sizeof(req), false)) {
		atomic_store(&last_activity, now_s());
		payload = out = NULL;
		memset(&rep, 0, sizeof(rep));
		if (req.len > AGENT_MAX_PAYLOAD)
			break;
		payload = malloc(req.len ? req.len : 1);
		if (!payload || xfer(s->fd, payload, req.len, false)) {
			free(payload);
			break;
		}
		execute(s, &req, payload, &out, &rep);
		ok = !xfer(s->fd, &rep, sizeof(rep), true) &&
		     !xfer(s->fd, out, rep.len, true);
		free(payload);
		free(out);
	}
	handles_release(s->id);
	scif_close(s->fd);
	free(s);
	atomic_fetch_sub(&sessions_open, 1);
	atomic_store(&last_activity, now_s());
	return NULL;
}

static int start_session(int fd)
{
	struct session *s = malloc(sizeof(*s));
	pthread_attr_t attr;
	pthread_t t;
	int err;

	if (!s)
		return -1;
	s->fd = fd;
	s->id = atomic_fetch_add(&next_session, 1);
	atomic_fetch_add(&sessions_open, 1);
	atomic_fetch_add(&sessions_served, 1);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&t, &attr, serve_session, s);
	pthread_attr_destroy(&attr);
	if (err) {
		atomic_fetch_sub(&sessions_open, 1);
		free(s);
		return -1;
	}
	return 0;
}

static int serve(void)
{
	struct scif_port_id peer;
	struct scif_pollepd p;
	int lfd, fd;

	printf("TAP version 13\n1..1\n");
	lfd = scif_open();
	if (lfd < 0 || scif_bind(lfd, AGENT_PORT) < 0 || scif_listen(lfd, 64) < 0) {
		printf("not ok 1 agent_served # listen: %s\n", strerror(errno));
		return 1;
	}
	atomic_store(&last_activity, now_s());
	while (!atomic_load(&stop_requested)) {
		if (atomic_load(&sessions_open) == 0 &&
		    now_s() - atomic_load(&last_activity) > IDLE_S) {
			printf("not ok 1 agent_served # idle for %d s, %d sessions\n",
			       IDLE_S, atomic_load(&sessions_served));
			return 1;
		}
		p = (struct scif_pollepd){ .epd = lfd, .events = POLLIN };
		if (scif_poll(&p, 1, 200) <= 0)
			continue;
		if (scif_accept(lfd, &peer, &fd, 0) < 0)
			continue;
		if (start_session(fd)) {
			printf("# session: %s\n", strerror(errno));
			scif_close(fd);
		}
	}
	printf("ok 1 agent_served # stopped by request after %d sessions\n",
	       atomic_load(&sessions_served));
	scif_close(lfd);
	return 0;
}

/* One call without payload on the agent of @node: 0, or -1. */
static int call(uint16_t node, uint32_t op)
{
	struct scif_port_id dst = { .node = node, .port = AGENT_PORT };
	struct agent_req req = { .op = op };
	struct agent_rep rep;
	int fd = scif_open(), ret = -1;

	if (fd < 0)
		return -1;
	if (scif_connect(fd, &dst) >= 0 &&
	    !xfer(fd, &req, sizeof(req), true) &&
	    !xfer(fd, &rep, sizeof(rep), false) && rep.ret >= 0 && !rep.len)
		ret = 0;
	scif_close(fd);
	return ret;
}

static int client(const char *what, uint16_t node)
{
	long end = now_s() + WAIT_S;
	int ret;

	printf("TAP version 13\n1..1\n");
	if (!strcmp(what, "stop")) {
		ret = call(node, RPC_STOP);
	} else {
		while ((ret = call(node, RPC_EPCOUNT)) && now_s() < end)
			usleep(200 * 1000);
	}
	printf("%sok 1 agent_%s_node_%u%s%s\n", ret ? "not " : "", what, node,
	       ret ? " # " : "", ret ? strerror(errno) : "");
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && (!strcmp(argv[1], "stop") || !strcmp(argv[1], "wait")))
		return client(argv[1], atoi(argv[2]));
	if (argc != 1) {
		fprintf(stderr, "usage: %s [wait|stop NODE]\n", argv[0]);
		return 2;
	}
	return serve();
}
