// SPDX-License-Identifier: GPL-2.0
/*
 * Endpoints held open for scif_info_test.sh, which looks at them with
 * "scif-info ps" as their owner, as another user and as root.
 *
 *   scif_ep_hold [-u UID]                hold endpoints (as UID)
 *   scif_ep_hold -u UID PROG [ARG...]    run PROG as UID
 *
 * Holding, it opens three endpoints on the local node: a listener, a
 * client connected to it and the endpoint the listener accepted, prints
 * "ready PORT" (the listener's port), then waits for signals: SIGUSR1
 * registers one page on the client endpoint and prints "registered
 * OFFSET" (or "register failed ERRNO"); SIGTERM or SIGINT ends it, and
 * it ends by itself after 300 s (SIGALRM) if nobody does.
 *
 * -u UID takes uid and gid UID, with no supplementary group, then
 * executes the program again (or PROG): a process that only changed its
 * ids is not dumpable, so its /proc/PID files would stay root's and
 * UID could not read its descriptors; one that executed afterwards is
 * UID's like any other.
 */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scif.h"

#define PAGE		4096
#define LIFETIME_S	300

struct acceptor {
	scif_epd_t listener;
	scif_epd_t accepted;
	int err;
};

static void *accept_one(void *arg)
{
	struct acceptor *a = arg;
	struct scif_port_id peer;

	if (scif_accept(a->listener, &peer, &a->accepted, SCIF_ACCEPT_SYNC))
		a->err = errno;
	return NULL;
}

static int fail(const char *what)
{
	printf("error %s: %s\n", what, strerror(errno));
	fflush(stdout);
	return 1;
}

static int hold(void)
{
	struct acceptor a = { .listener = -1, .accepted = -1 };
	struct scif_port_id dst;
	scif_epd_t client;
	sigset_t set;
	pthread_t t;
	off_t off;
	void *buf;
	int port, sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	/* Blocked in every thread: sigwait() below takes them. */
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return fail("sigprocmask");
	alarm(LIFETIME_S);

	if (scif_get_nodeIDs(NULL, 0, &dst.node) < 0)
		return fail("scif_get_nodeIDs");
	a.listener = scif_open();
	if (a.listener < 0)
		return fail("scif_open");
	port = scif_bind(a.listener, 0);
	if (port < 0 || scif_listen(a.listener, 1))
		return fail("bind/listen");
	dst.port = port;
	if (pthread_create(&t, NULL, accept_one, &a))
		return fail("pthread_create");
	client = scif_open();
	if (client < 0 || scif_connect(client, &dst) < 0)
		return fail("connect");
	pthread_join(t, NULL);
	if (a.err) {
		errno = a.err;
		return fail("accept");
	}
	buf = aligned_alloc(PAGE, PAGE);
	if (!buf)
		return fail("aligned_alloc");
	memset(buf, 0, PAGE);
	printf("ready %d\n", port);
	fflush(stdout);

	for (;;) {
		if (sigwait(&set, &sig))
			return fail("sigwait");
		if (sig != SIGUSR1)
			break;
		off = scif_register(client, buf, PAGE, 0,
				    SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
		if (off < 0)
			printf("register failed %d\n", errno);
		else
			printf("registered %lld\n", (long long)off);
		fflush(stdout);
	}
	scif_close(client);
	scif_close(a.accepted);
	scif_close(a.listener);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	char self[PATH_MAX];
	char *again[] = { self, NULL };
	ssize_t len;
	long uid;

	if (argc == 1)
		return hold();
	if (argc < 3 || strcmp(argv[1], "-u")) {
		fprintf(stderr, "usage: scif_ep_hold [-u UID [PROG [ARG...]]]\n");
		return 2;
	}
	uid = strtol(argv[2], NULL, 10);
	if (uid <= 0 || uid > 65535) {
		fprintf(stderr, "scif_ep_hold: bad uid %s\n", argv[2]);
		return 2;
	}
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid)) {
		perror("scif_ep_hold: dropping to the uid");
		return 1;
	}
	if (argc > 3) {
		execvp(argv[3], argv + 3);
		perror(argv[3]);
		return 127;
	}
	/* Its own file again, by name: the command stays "scif_ep_hold". */
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0) {
		perror("scif_ep_hold: /proc/self/exe");
		return 1;
	}
	self[len] = '\0';
	execv(self, again);
	perror(self);
	return 127;
}
