// SPDX-License-Identifier: LGPL-2.1
/*
 * A loopback test written as an existing SCIF program would have been
 * against Intel's libscif: only the long-standing names (scif_get_nodeIDs,
 * struct scif_portID, struct scif_pollepd, int endpoints) and no
 * _GNU_SOURCE.  The parent listens and accepts; a forked child connects;
 * a few KiB go each way and are compared byte for byte.
 *
 * Prints TAP, one line per step (the steps after a failure are skipped),
 * and exits 1 if a step failed.  Needs scif.ko loaded: the selftests run
 * it in the guest as compat-check-static; "make compat-check" only builds.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <scif.h>

#define MSG_LEN		(5 * 1024 + 13)	/* a few KiB, not a round size */
#define POLL_MS		30000L		/* generous: guests run under TCG */
#define ALARM_S		120		/* ends a run that hangs anyway */
#define MAX_NODES	64

static struct {
	uint16_t self;
	int port;		/* the listener's */
	scif_epd_t lep, nep;	/* listening and accepted endpoints */
	pid_t child;
	int pipe_rd;		/* the child's port after its connect */
	unsigned char out[MSG_LEN], in[MSG_LEN];
} t = { .lep = -1, .nep = -1, .pipe_rd = -1 };

/* A TAP diagnostic line; returns -1 for "return fail(...)". */
static __attribute__((format(printf, 1, 2))) int fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("# ");
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	return -1;
}

static int sysfail(const char *what)
{
	return fail("%s: %s", what, strerror(errno));
}

/* Deterministic bytes, different for each direction. */
static void fill(unsigned char *buf, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = seed >> 24;
	}
}

/* 0 if @buf holds the bytes of @seed, else the offset of the first + 1. */
static size_t mismatch(const unsigned char *buf, size_t len, uint32_t seed)
{
	static unsigned char want[MSG_LEN];
	size_t i;

	fill(want, len, seed);
	for (i = 0; i < len; i++)
		if (buf[i] != want[i])
			return i + 1;
	return 0;
}

static int poll_one(scif_epd_t epd, short events)
{
	struct scif_pollepd pe = { epd, events, 0 };
	int n = scif_poll(&pe, 1, POLL_MS);

	if (n < 0)
		return sysfail("scif_poll");
	if (n != 1 || !(pe.revents & events))
		return fail("scif_poll: %d ready, revents %#x", n, pe.revents);
	return 0;
}

/* The child: connect, receive and check, send, wait for the ack. */
static int client(int pipe_wr)
{
	struct scif_portID dst;
	unsigned char ack;
	scif_epd_t epd;
	size_t bad;
	int lport;

	dst.node = t.self;
	dst.port = t.port;
	epd = scif_open();
	if (epd == SCIF_OPEN_FAILED)
		return sysfail("client: scif_open");
	lport = scif_connect(epd, &dst);
	if (lport < 0)
		return sysfail("client: scif_connect");
	if (write(pipe_wr, &lport, sizeof(lport)) != sizeof(lport))
		return sysfail("client: write");
	if (scif_recv(epd, t.in, MSG_LEN, SCIF_RECV_BLOCK) != MSG_LEN)
		return sysfail("client: scif_recv");
	bad = mismatch(t.in, MSG_LEN, 1);
	if (bad)
		return fail("client: byte %zu differs", bad - 1);
	fill(t.out, MSG_LEN, 2);
	if (scif_send(epd, t.out, MSG_LEN, SCIF_SEND_BLOCK) != MSG_LEN)
		return sysfail("client: scif_send");
	if (scif_recv(epd, &ack, 1, SCIF_RECV_BLOCK) != 1)
		return sysfail("client: scif_recv (ack)");
	return scif_close(epd) ? sysfail("client: scif_close") : 0;
}

static int get_node_ids(void)
{
	uint16_t nodes[MAX_NODES];
	int i, n;

	n = scif_get_nodeIDs(nodes, MAX_NODES, &t.self);
	if (n < 1)
		return n < 0 ? sysfail("scif_get_nodeIDs") : fail("no node");
	for (i = 0; i < n && i < MAX_NODES; i++)
		if (nodes[i] == t.self)
			return 0;
	return fail("self %u not among the %d nodes", t.self, n);
}

static int open_bind_listen(void)
{
	t.lep = scif_open();
	if (t.lep == SCIF_OPEN_FAILED)
		return sysfail("scif_open");
	t.port = scif_bind(t.lep, 0);
	if (t.port <= 0)
		return sysfail("scif_bind");
	return scif_listen(t.lep, 4) ? sysfail("scif_listen") : 0;
}

static int get_fd(void)
{
	int fd = scif_get_fd(t.lep);

	if (fd < 0 || fcntl(fd, F_GETFD) < 0)
		return sysfail("scif_get_fd");
	return 0;
}

static int fork_client(void)
{
	int p[2];

	if (pipe(p))
		return sysfail("pipe");
	fflush(stdout);
	t.child = fork();
	if (t.child < 0)
		return sysfail("fork");
	if (t.child == 0) {
		close(p[0]);
		_exit(client(p[1]) ? 1 : 0);
	}
	close(p[1]);
	t.pipe_rd = p[0];
	return 0;
}

static int poll_listener(void)
{
	return poll_one(t.lep, POLLIN);
}

static int accept_sync(void)
{
	struct scif_portID peer;
	int cport;

	if (scif_accept(t.lep, &peer, &t.nep, SCIF_ACCEPT_SYNC))
		return sysfail("scif_accept");
	if (read(t.pipe_rd, &cport, sizeof(cport)) != sizeof(cport))
		return fail("no port from the client");
	if (peer.node != t.self || peer.port != cport)
		return fail("peer %u:%u, client %u:%d", peer.node, peer.port,
			    t.self, cport);
	return 0;
}

static int send_block(void)
{
	int n;

	if (poll_one(t.nep, POLLOUT))
		return -1;
	fill(t.out, MSG_LEN, 1);
	n = scif_send(t.nep, t.out, MSG_LEN, SCIF_SEND_BLOCK);
	if (n != MSG_LEN)
		return n < 0 ? sysfail("scif_send") : fail("sent %d", n);
	return 0;
}

static int recv_block(void)
{
	size_t bad;
	int n;

	if (poll_one(t.nep, POLLIN))
		return -1;
	n = scif_recv(t.nep, t.in, MSG_LEN, SCIF_RECV_BLOCK);
	if (n != MSG_LEN)
		return n < 0 ? sysfail("scif_recv") : fail("received %d", n);
	bad = mismatch(t.in, MSG_LEN, 2);
	return bad ? fail("byte %zu differs", bad - 1) : 0;
}

/* The child checked our bytes; the ack lets it close. */
static int client_done(void)
{
	unsigned char ack = 0;
	int status;

	if (scif_send(t.nep, &ack, 1, SCIF_SEND_BLOCK) != 1) {
		sysfail("scif_send (ack)");
		kill(t.child, SIGKILL);
	}
	if (waitpid(t.child, &status, 0) != t.child)
		return sysfail("waitpid");
	t.child = 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return fail("client status %#x", status);
	return 0;
}

static int close_all(void)
{
	int ret = scif_close(t.nep) | scif_close(t.lep);

	t.nep = t.lep = -1;
	return ret ? sysfail("scif_close") : 0;
}

static const struct {
	const char *name;
	int (*run)(void);
} steps[] = {
	{ "scif_get_nodeIDs", get_node_ids },
	{ "scif_open_bind_listen", open_bind_listen },
	{ "scif_get_fd", get_fd },
	{ "fork_client", fork_client },
	{ "scif_poll_connection_request", poll_listener },
	{ "scif_accept_sync", accept_sync },
	{ "scif_send_block", send_block },
	{ "scif_recv_block", recv_block },
	{ "client_received_and_exited", client_done },
	{ "scif_close", close_all },
};

int main(void)
{
	int nsteps = sizeof(steps) / sizeof(steps[0]);
	int i, failed = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(ALARM_S);
	printf("1..%d\n", nsteps);
	for (i = 0; i < nsteps; i++) {
		if (failed) {
			printf("ok %d %s # SKIP an earlier step failed\n",
			       i + 1, steps[i].name);
		} else if (steps[i].run()) {
			printf("not ok %d %s\n", i + 1, steps[i].name);
			failed = 1;
		} else {
			printf("ok %d %s\n", i + 1, steps[i].name);
		}
	}
	if (t.child > 0) {
		kill(t.child, SIGKILL);
		waitpid(t.child, NULL, 0);
	}
	if (t.pipe_rd >= 0)
		close(t.pipe_rd);
	if (t.nep >= 0)
		scif_close(t.nep);
	if (t.lep >= 0)
		scif_close(t.lep);
	return failed;
}
