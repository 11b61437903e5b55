// SPDX-License-Identifier: GPL-2.0
/*
 * Observability on one node (Documentation/scif/observability.rst): the
 * per-node counters in sysfs and the per-endpoint ones in debugfs against
 * traffic of known size over the loopback bus, the node's state in sysfs
 * read by an unprivileged user, and scif-info --json (as that user too)
 * parsed and compared with sysfs; a user who may not open /dev/scif is
 * told to join its group.  Nothing else may use SCIF meanwhile:
 * the counters are compared exactly.  scif-info must be on $PATH.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define SCIF_TEST_WITH_LIBSCIF
#include "kselftest_harness.h"
#include "scif_json.h"
#include "scif_test_util.h"

#define PORT		2470
#define MSGS		10
#define MSG_LEN		1000
#define REPLIES		3
#define REPLY_LEN	500
#define RMAS		2
#define WIN		(4 * 4096)

#define NR_COUNTERS	7
static const char *const counter_names[NR_COUNTERS] = {
	"tx_bytes", "tx_msgs", "rx_bytes", "rx_msgs", "rma_ops", "rma_bytes",
	"errors",
};

static void node_counters(long long *c)
{
	char name[32];
	int i;

	for (i = 0; i < NR_COUNTERS; i++) {
		snprintf(name, sizeof(name), "stats/%s", counter_names[i]);
		c[i] = node_file(name);
	}
}

struct pair {
	int lep, client, server;
	unsigned int client_port;
};

/* The accept, in a thread of its own: a connect waits for it. */
static void *pair_accept(void *arg)
{
	struct pair *p = arg;
	struct scif_port_id peer;

	if (scif_accept(p->lep, &peer, &p->server, SCIF_ACCEPT_SYNC) < 0)
		p->server = -1;
	return NULL;
}

static int pair_open(struct pair *p)
{
	struct scif_port_id dst = { .node = local_node(), .port = PORT };
	pthread_t th;
	int port;

	p->lep = scif_open();
	p->client = scif_open();
	if (p->lep < 0 || p->client < 0 || scif_bind(p->lep, PORT) < 0 ||
	    scif_listen(p->lep, 1) < 0 ||
	    pthread_create(&th, NULL, pair_accept, p))
		return -1;
	port = scif_connect(p->client, &dst);
	pthread_join(th, NULL);
	if (port < 0 || p->server < 0)
		return -1;
	p->client_port = port;
	return 0;
}

static void pair_close(struct pair *p)
{
	scif_close(p->client);
	scif_close(p->server);
	scif_close(p->lep);
}

/* Known traffic: MSGS to the server, REPLIES back, RMAS writes of a page. */
static int traffic(struct pair *p, char *win)
{
	char buf[MSG_LEN];
	off_t off;
	int i;

	memset(buf, 7, sizeof(buf));
	for (i = 0; i < MSGS; i++)
		if (scif_send(p->client, buf, MSG_LEN, SCIF_SEND_BLOCK) != MSG_LEN ||
		    scif_recv(p->server, buf, MSG_LEN, SCIF_RECV_BLOCK) != MSG_LEN)
			return -1;
	for (i = 0; i < REPLIES; i++)
		if (scif_send(p->server, buf, REPLY_LEN, SCIF_SEND_BLOCK) != REPLY_LEN ||
		    scif_recv(p->client, buf, REPLY_LEN, SCIF_RECV_BLOCK) != REPLY_LEN)
			return -1;
	off = scif_register(p->server, win, WIN, 0,
			    SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	if (off < 0)
		return -1;
	for (i = 0; i < RMAS; i++)
		if (scif_vwriteto(p->client, buf, MSG_LEN,
				  off + i * 4096, SCIF_RMA_USECPU))
			return -1;
	return 0;
}

TEST(counters_match_known_traffic)
{
	long long before[NR_COUNTERS], after[NR_COUNTERS];
	/* Both ends are on this node: each byte is sent and received here. */
	const long long want[NR_COUNTERS] = {
		MSGS * MSG_LEN + REPLIES * REPLY_LEN, MSGS + REPLIES,
		MSGS * MSG_LEN + REPLIES * REPLY_LEN, MSGS + REPLIES,
		RMAS, RMAS * MSG_LEN, 0,
	};
	unsigned long long ep[NR_COUNTERS];
	int i, bad, len;
	char msg[512] = "";
	struct pair p;
	char *win;

	win = mmap(NULL, WIN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, win);
	node_counters(before);
	for (i = 0, bad = 0; i < NR_COUNTERS; i++)
		bad += before[i] < 0;
	ASSERT_EQ(0, bad) TH_LOG("%d counters unreadable", bad);
	ASSERT_EQ(0, pair_open(&p)) TH_LOG("connect: %s", strerror(errno));
	ASSERT_EQ(0, traffic(&p, win)) TH_LOG("traffic: %s", strerror(errno));
	node_counters(after);
	for (i = 0, len = 0, bad = 0; i < NR_COUNTERS; i++) {
		if (after[i] - before[i] == want[i])
			continue;
		bad++;
		len += snprintf(msg + len, sizeof(msg) - len,
				" %s %lld -> %lld (want +%lld)", counter_names[i],
				before[i], after[i], want[i]);
		if (len >= (int)sizeof(msg))
			break;
	}
	EXPECT_EQ(0, bad) TH_LOG("node counters:%s", msg);

	/* The client's own: what it sent, received and wrote. */
	ASSERT_EQ(0, ep_counters(p.client_port, "connected", ep));
	EXPECT_EQ(MSGS * MSG_LEN, ep[0]);
	EXPECT_EQ(MSGS, ep[1]);
	EXPECT_EQ(REPLIES * REPLY_LEN, ep[2]);
	EXPECT_EQ(REPLIES, ep[3]);
	EXPECT_EQ(RMAS, ep[4]);
	EXPECT_EQ(RMAS * MSG_LEN, ep[5]);
	EXPECT_EQ(0, ep[6]);

	/* An error: receiving after the peer closed, once drained. */
	scif_close(p.server);
	p.server = scif_open();
	EXPECT_EQ(-1, scif_recv(p.client, win, 1, SCIF_RECV_BLOCK));
	EXPECT_EQ(ECONNRESET, errno);
	EXPECT_EQ(after[6] + 1, node_file("stats/errors"));
	pair_close(&p);
	munmap(win, WIN);
}

/* In a child that dropped to uid 65534: 0 if every check passed. */
static int unprivileged_reads(void)
{
	static const char *const files[] = {
		"state", "bus", "generation", "heartbeat_age_ms",
		"held_mappings", "stats/tx_bytes", "stats/tx_msgs", "stats/rx_bytes",
		"stats/rx_msgs", "stats/rma_ops", "stats/rma_bytes",
		"stats/errors",
	};
	char path[256], buf[64];
	unsigned int i;
	int fd;

	if (setgid(65534) || setuid(65534) || !getuid())
		return 10;
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), SYSFS_NODES "/%u/%s",
			 local_node(), files[i]);
		if (read_file(path, buf, sizeof(buf)) < 0 || !buf[0]) {
			fprintf(stderr, "# %s: %s\n", path, strerror(errno));
			return 11;
		}
		/* Read only, for everyone. */
		fd = open(path, O_WRONLY);
		if (fd >= 0 || errno != EACCES) {
			fprintf(stderr, "# %s opened for writing\n", path);
			return 12;
		}
	}
	snprintf(path, sizeof(path), SYSFS_NODES "/%u/state", local_node());
	if (read_file(path, buf, sizeof(buf)) < 0 || strcmp(buf, "online\n"))
		return 13;
	snprintf(path, sizeof(path), SYSFS_NODES "/%u/bus", local_node());
	if (read_file(path, buf, sizeof(buf)) < 0 || strcmp(buf, "loopback\n"))
		return 14;
	/* The loopback bus has no heartbeat. */
	if (node_file("heartbeat_age_ms") != -1 || node_file("generation") < 1)
		return 15;
	/* Nothing maps the loopback node's windows for a device here. */
	if (node_file("held_mappings") != 0)
		return 16;
	return 0;
}

TEST(sysfs_state_readable_by_anyone)
{
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(unprivileged_reads());
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* Run scif-info --json (@drop: as uid 65534); its output, malloc'ed. */
static char *scif_info_json(bool drop)
{
	size_t len = 0, cap = 65536;
	char *out = malloc(cap);
	int fds[2], status;
	ssize_t n;
	pid_t pid;

	if (!out || pipe(fds))
		return NULL;
	pid = fork();
	if (!pid) {
		dup2(fds[1], 1);
		close(fds[0]);
		if (drop && (setgid(65534) || setuid(65534)))
			_exit(10);
		execlp("scif-info", "scif-info", "--json", (char *)NULL);
		_exit(11);
	}
	close(fds[1]);
	while ((n = read(fds[0], out + len, cap - len - 1)) > 0)
		len += n;
	close(fds[0]);
	out[len] = '\0';
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		free(out);
		return NULL;
	}
	return out;
}

static void check_info_json(struct __test_metadata *_metadata, bool drop)
{
	char *out = scif_info_json(drop), path[64], val[64];
	int i, nodes;

	ASSERT_NE(NULL, out);
	ASSERT_TRUE(json_valid(out)) TH_LOG("not JSON: %s", out);
	ASSERT_EQ(0, json_get(out, "self", val, sizeof(val)));
	EXPECT_EQ(local_node(), atoi(val));
	nodes = json_count(out, "nodes");
	ASSERT_LE(1, nodes);
	for (i = 0; i < nodes; i++) {
		snprintf(path, sizeof(path), "nodes/%d/id", i);
		ASSERT_EQ(0, json_get(out, path, val, sizeof(val)));
		if (atoi(val) == local_node())
			break;
	}
	ASSERT_LT(i, nodes) TH_LOG("no node %u in %s", local_node(), out);
	snprintf(path, sizeof(path), "nodes/%d/state", i);
	ASSERT_EQ(0, json_get(out, path, val, sizeof(val)));
	EXPECT_STREQ("online", val);
	snprintf(path, sizeof(path), "nodes/%d/bus", i);
	ASSERT_EQ(0, json_get(out, path, val, sizeof(val)));
	EXPECT_STREQ("loopback", val);
	snprintf(path, sizeof(path), "nodes/%d/self", i);
	ASSERT_EQ(0, json_get(out, path, val, sizeof(val)));
	EXPECT_STREQ("true", val);
	snprintf(path, sizeof(path), "nodes/%d/generation", i);
	ASSERT_EQ(0, json_get(out, path, val, sizeof(val)));
	EXPECT_EQ(node_file("generation"), atoll(val));
	/* Nothing moves while we look: the counters are sysfs's. */
	snprintf(path, sizeof(path), "nodes/%d/stats/tx_bytes", i);
	ASSERT_EQ(0, json_get(out, path, val, sizeof(val)));
	EXPECT_EQ(node_file("stats/tx_bytes"), atoll(val));
	snprintf(path, sizeof(path), "nodes/%d/stats/errors", i);
	ASSERT_EQ(0, json_get(out, path, val, sizeof(val)));
	EXPECT_EQ(node_file("stats/errors"), atoll(val));
	snprintf(path, sizeof(path), "nodes/%d/stats/user_tx_bytes", i);
	ASSERT_EQ(0, json_get(out, path, val, sizeof(val)));
	EXPECT_EQ(node_file("stats/user_tx_bytes"), atoll(val));
	/*
	 * Endpoints need debugfs: root only, null otherwise.  As root, an
	 * array, with the endpoints other programs have open, if any.
	 */
	if (drop) {
		ASSERT_EQ(0, json_get(out, "endpoints", val, sizeof(val)));
		EXPECT_STREQ("null", val);
	} else {
		EXPECT_LE(0, json_count(out, "endpoints"));
	}
	free(out);
}

TEST(scif_info_json_as_root)
{
	check_info_json(_metadata, false);
}

TEST(scif_info_json_unprivileged)
{
	check_info_json(_metadata, true);
}

/*
 * /dev/scif as the packages make it (not for others: here 0600): a user
 * who may not open it is told why and what to do (join group scif), and
 * scif-info fails.  The device's mode is put back whatever happens.
 */
TEST(scif_info_permission_hint)
{
	char err[1024] = "";
	int fds[2], status = -1;
	struct stat st;
	ssize_t n = 0;
	pid_t pid;

	ASSERT_EQ(0, stat("/dev/scif", &st));
	ASSERT_EQ(0, pipe(fds));
	ASSERT_EQ(0, chmod("/dev/scif", 0600));
	pid = fork();
	if (!pid) {
		dup2(fds[1], 2);
		close(fds[0]);
		if (setgid(65534) || setuid(65534))
			_exit(10);
		execlp("scif-info", "scif-info", "nodes", (char *)NULL);
		_exit(11);
	}
	close(fds[1]);
	if (pid > 0) {
		n = read(fds[0], err, sizeof(err) - 1);
		waitpid(pid, &status, 0);
	}
	close(fds[0]);
	ASSERT_EQ(0, chmod("/dev/scif", st.st_mode & 07777));
	ASSERT_LT(0, pid);
	err[n > 0 ? n : 0] = '\0';
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_NE(0, WEXITSTATUS(status));
	EXPECT_NE(10, WEXITSTATUS(status));
	EXPECT_NE(NULL, strstr(err, "Permission denied")) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, "group scif")) TH_LOG("%s", err);
}

TEST_HARNESS_MAIN
