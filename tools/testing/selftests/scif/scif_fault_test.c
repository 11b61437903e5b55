// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation failures on every allocation path of open, bind, listen,
 * connect, accept and send/recv: the failing call reports an error, the
 * others carry on or fail cleanly, and afterwards nothing is left behind
 * (no endpoint, no port; kmemleak checks memory at the end of the run).
 *
 * Uses the driver's fault attribute <debugfs>/scif/fail_alloc, present
 * on kernels with CONFIG_FAULT_INJECTION_DEBUG_FS (the debug kernel);
 * skipped elsewhere.  Failure point n fails the n-th allocation of the
 * driver after arming; n grows until a whole round runs without the
 * fault firing, so every allocation of the round has failed once.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "scif.h"

#include "kselftest_harness.h"
#include "scif_test_util.h"

#define FAIL_DIR	"/sys/kernel/debug/scif/fail_alloc/"
#define PORT		2900
#define MSG_LEN		100
#define MAX_POINTS	64

/* Write @val to the fault attribute @name: 0 or -1. */
static int write_attr(const char *name, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), FAIL_DIR "%s", name);
	return write_file(path, val);
}

/* The fault attribute @name's value, or -1. */
static long read_attr(const char *name)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), FAIL_DIR "%s", name);
	if (read_file(path, buf, sizeof(buf)) || !buf[0])
		return -1;
	return strtol(buf, NULL, 10);
}

/* Errors an injected allocation failure may surface as. */
static int expected_error(int err)
{
	return err == ENOMEM || err == ECONNREFUSED || err == ECONNRESET;
}

/* The connecting side, in a child: exit 0 on success or a clean error. */
static int connector(uint16_t self)
{
	struct scif_port_id dst = { .node = self, .port = PORT };
	char out[MSG_LEN], in[MSG_LEN];
	int epd, ret;

	memset(out, 0x5a, sizeof(out));
	epd = scif_open();
	if (epd < 0)
		return expected_error(errno) ? 0 : 10;
	ret = scif_connect(epd, &dst) < 0 ||
	      scif_send(epd, out, MSG_LEN, SCIF_SEND_BLOCK) != MSG_LEN ||
	      scif_recv(epd, in, MSG_LEN, SCIF_RECV_BLOCK) != MSG_LEN;
	if (ret && !expected_error(errno)) {
		fprintf(stderr, "# connector: %s\n", strerror(errno));
		ret = 11;
	}
	else if (!ret && memcmp(in, out, MSG_LEN))
		ret = 12;
	else
		ret = 0;
	close(epd);
	return ret;
}

/* The accepting side: echo one message back.  0, or an unexpected errno. */
static int acceptor(int lep)
{
	struct scif_port_id peer;
	struct pollfd pfd = { .fd = lep, .events = POLLIN };
	char buf[MSG_LEN];
	int epd, ret = 0;

	if (poll(&pfd, 1, 3000) != 1)
		return 0;		/* the request failed on its way */
	if (scif_accept(lep, &peer, &epd, 0) < 0)
		return expected_error(errno) || errno == EAGAIN ? 0 : errno;
	if (scif_recv(epd, buf, MSG_LEN, SCIF_RECV_BLOCK) != MSG_LEN ||
	    scif_send(epd, buf, MSG_LEN, SCIF_SEND_BLOCK) != MSG_LEN)
		ret = expected_error(errno) ? 0 : errno;
	close(epd);
	return ret;
}

/* One round under injection; returns 0 or a description of a failure. */
static const char *round_trip(uint16_t self)
{
	int lep, status, err;
	pid_t pid;

	lep = scif_open();
	if (lep < 0)
		return expected_error(errno) ? NULL : "open";
	if (scif_bind(lep, PORT) < 0 || scif_listen(lep, 4) < 0) {
		close(lep);
		return expected_error(errno) ? NULL : "bind/listen";
	}
	pid = fork();
	if (pid == 0) {
		/* Else the listener outlives the parent's close of it. */
		close(lep);
		alarm(20);
		_exit(connector(self));
	}
	err = acceptor(lep);
	close(lep);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return "fork/wait";
	if (err)
		return "accept side: unexpected error";
	if (!WIFEXITED(status))
		return "connect side: hung (killed by its alarm)";
	if (WEXITSTATUS(status))
		return "connect side: unexpected error";
	return NULL;
}

FIXTURE(fault) {
	int unused;
};

FIXTURE_SETUP(fault)
{
}

FIXTURE_TEARDOWN(fault)
{
	write_attr("times", "0");
}

TEST_F_TIMEOUT(fault, every_allocation_fails_cleanly, 600)
{
	uint16_t nodes[1], me;
	int base, point, fired = 1, probe;
	char val[16];
	const char *why;

	if (access(FAIL_DIR "times", W_OK))
		SKIP(return, "no fault injection in this kernel");
	ASSERT_LE(1, scif_get_nodeIDs(nodes, 1, &me));
	base = settled_count(EPD_LIST, 0, 300);
	ASSERT_LE(0, base);
	ASSERT_EQ(0, write_attr("verbose", "0"));
	ASSERT_EQ(0, write_attr("probability", "100"));
	ASSERT_EQ(0, write_attr("interval", "1"));

	for (point = 0; point < MAX_POINTS && fired; point++) {
		snprintf(val, sizeof(val), "%d", point);
		ASSERT_EQ(0, write_attr("space", val));
		ASSERT_EQ(0, write_attr("times", "1"));
		why = round_trip(me);
		fired = read_attr("times") == 0;
		ASSERT_EQ(0, write_attr("times", "0"));
		EXPECT_EQ(NULL, why) TH_LOG("failure point %d: %s", point, why);
		/* Nothing left behind: every endpoint goes, the port is free. */
		EXPECT_EQ(base, settled_count(EPD_LIST, base, 300))
			TH_LOG("failure point %d leaked endpoints", point);
		probe = scif_open();
		ASSERT_LE(0, probe);
		EXPECT_EQ(PORT, scif_bind(probe, PORT))
			TH_LOG("failure point %d leaked port %d", point, PORT);
		close(probe);
	}
	EXPECT_FALSE(fired) TH_LOG("more than %d allocation points", MAX_POINTS);
	TH_LOG("%d allocation points failed in turn", point - 1);
	EXPECT_LE(5, point - 1);	/* the round does allocate */
}

TEST_HARNESS_MAIN
