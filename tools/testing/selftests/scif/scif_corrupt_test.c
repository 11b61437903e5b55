// SPDX-License-Identifier: GPL-2.0
/*
 * A peer that writes garbage, in a 2- or 3-node cluster (qemu/cluster.sh).
 * Node 1 misbehaves on command, through the test hooks in debugfs
 * (<debugfs>/scif/corrupt and <debugfs>/scif_ivshmem/corrupt_slot);
 * node 0 is the victim and checks what happens to it:
 *
 *   msgs        random node messages: dropped (counted), nothing else
 *               changes: an echo stream keeps working, node 1 stays
 *   conn        bad counts in one connection's ring: that connection
 *               (blocked in recv) gets ECONNRESET, the others carry on
 *   count       a bad count on the node queue pair, and garbage in the
 *   slot:*      bootstrap slot: node 1 is taken offline: streams to it
 *               get ECONNRESET within a bound, a blocked recv ends,
 *               connect gets ENODEV, scif_get_nodeIDs() drops node 1;
 *               node 1 reloads its modules and a fresh connection works
 *
 * Node 0 runs the loss kinds named on its command line, or all of them:
 * over a bus other than scif_ivshmem (scif_ntb) there is no slot hook, and
 * scripts/scif-ntb-check.sh asks for "count" only.
 *
 * A node 2, if there is one, is a bystander: node 0 keeps an echo stream
 * to it running throughout and checks, after every kind, that it still
 * moves and that node 2 stays listed.
 *
 * Commands go over a SCIF connection to node 1's control port.  Node 1
 * serves each life of its modules in a child process; after a kind that
 * costs it the node, it waits until its own connection to node 0 is
 * reset (node 0 unpublished its queue half: node 1 learns it was
 * dropped), lets node 0 finish its checks, and reloads its modules.
 *
 * Node 0 prints TAP; node 1 prints comments.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SCIF_TEST_WITH_LIBSCIF
#include "scif_test_util.h"

#define CTL_PORT	2300
#define ECHO_PORT	2301
#define CONN_PORT	2302
#define BLOCK		4096
#define CMD		64
#define STREAMS		2
#define BOUND_MS	10000	/* a reset, a blocked call ending */
#define REJOIN_MS	60000
#define GRACE_S		3	/* node 1 lets node 0 check before reloading */

#define SCIF_DBG	"/sys/kernel/debug/scif/"
#define SLOT_HOOK	"/sys/kernel/debug/scif_ivshmem/corrupt_slot"

static const char * const loss_kinds[] = {
	"count", "slot:magic", "slot:generation", "slot:signature",
	"slot:sig_addr", "slot:qp_addr", "slot:qp_far",
};

#define NR_LOSS	(sizeof(loss_kinds) / sizeof(loss_kinds[0]))

static int t;

static int check(int ok, const char *name, const char *kind)
{
	printf("%sok %d %s_%s\n", ok ? "" : "not ", ++t, kind, name);
	fflush(stdout);
	return ok;
}

static int stat_of(const char *name)
{
	char buf[256], *p;

	if (read_file(SCIF_DBG "stats", buf, sizeof(buf)))
		return -1;
	p = strstr(buf, name);
	return p ? atoi(p + strlen(name) + 1) : -1;
}

/* ---- node 1: one life of the modules, in a child process ---- */

static void *echo_conn(void *arg)
{
	int epd = (intptr_t)arg;
	char buf[BLOCK];

	while (scif_recv(epd, buf, BLOCK, SCIF_RECV_BLOCK) == BLOCK &&
	       scif_send(epd, buf, BLOCK, SCIF_SEND_BLOCK) == BLOCK)
		;
	scif_close(epd);
	return NULL;
}

/* Accept on @port forever; echo on each connection if @echo. */
static void *acceptor(void *arg)
{
	intptr_t port = (intptr_t)arg;
	struct scif_port_id peer;
	int lep, epd;
	pthread_t th;

	lep = listener(port & 0xffff, 16, NULL);
	if (lep < 0)
		return NULL;
	for (;;) {
		if (scif_accept(lep, &peer, &epd, SCIF_ACCEPT_SYNC) < 0)
			continue;
		if (port == ECHO_PORT) {
			pthread_create(&th, NULL, echo_conn, (void *)(intptr_t)epd);
			pthread_detach(th);
		}	/* CONN_PORT: kept open, for the conn hook */
	}
	return NULL;
}

static int do_hook(const char *kind)
{
	char cmd[64];

	if (!strncmp(kind, "slot:", 5))
		return write_file(SLOT_HOOK, kind + 5);
	if (!strcmp(kind, "msgs"))
		return write_file(SCIF_DBG "corrupt", "msgs 0 200");
	if (!strcmp(kind, "count"))
		return write_file(SCIF_DBG "corrupt", "count 0");
	snprintf(cmd, sizeof(cmd), "conn %d", CONN_PORT);
	return write_file(SCIF_DBG "corrupt", cmd);
}

/* Exit status: 0 to reload the modules and serve again, 1 to quit. */
static int serve_life(void)
{
	struct scif_port_id peer;
	char cmd[CMD], reply[CMD];
	int lep, ctl, err;
	pthread_t th;

	pthread_create(&th, NULL, acceptor, (void *)(intptr_t)ECHO_PORT);
	pthread_create(&th, NULL, acceptor, (void *)(intptr_t)CONN_PORT);
	lep = listener(CTL_PORT, 1, NULL);
	if (lep < 0)
		return 2;
	/* Node 0 may have given up (a failed check): do not wait forever. */
	alarm_in_ms(2 * REJOIN_MS);
	err = scif_accept(lep, &peer, &ctl, SCIF_ACCEPT_SYNC);
	alarm_cancel();
	if (err < 0) {
		printf("# node %s: no control connection: %s\n",
		       getenv("SCIF_NODE"), strerror(errno));
		return 2;
	}
	for (;;) {
		if (scif_recv(ctl, cmd, CMD, SCIF_RECV_BLOCK) != CMD)
			return 2;
		cmd[CMD - 1] = '\0';
		if (!strcmp(cmd, "QUIT"))
			return 1;
		printf("# node 1: corrupting: %s\n", cmd);
		fflush(stdout);
		err = do_hook(cmd);
		if (!strcmp(cmd, "msgs") || !strcmp(cmd, "conn")) {
			snprintf(reply, sizeof(reply), "DONE %d", err);
			if (scif_send(ctl, reply, CMD, SCIF_SEND_BLOCK) != CMD)
				return 2;
			continue;
		}
		/* Node 0 drops us: our connection to it is reset. */
		alarm_in_ms(BOUND_MS * 2);
		errno = 0;
		err = scif_recv(ctl, cmd, CMD, SCIF_RECV_BLOCK);
		alarm_cancel();
		printf("# node 1: control connection ended: %d (%s)\n", err,
		       strerror(errno));
		fflush(stdout);
		sleep(GRACE_S);
		return 0;
	}
}

static int serve(void)
{
	int status;
	pid_t pid;

	for (;;) {
		fflush(stdout);
		pid = fork();
		if (pid < 0)
			return 1;
		if (!pid)
			_exit(serve_life());
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
			return 1;
		if (WEXITSTATUS(status) == 1)
			return 0;
		if (WEXITSTATUS(status) != 0)
			return 1;
		printf("# node 1: reloading the modules\n");
		fflush(stdout);
		if (system("for m in $(sed '1!G;h;$!d' /modules/order); do rmmod ${m%.ko}; done; "
			   "for m in $(cat /modules/order); do insmod /modules/$m || exit 1; done"))
			return 1;
	}
}

/* ---- node 0: the victim ---- */

struct stream {
	pthread_t th;
	int epd;
	int err;
	long blocks;
	int stop;
	int done;
};

static int nr_nodes;
static struct stream *bystander;

static void *stream_fn(void *arg)
{
	struct stream *s = arg;
	char out[BLOCK], in[BLOCK];

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		fill_pattern(out, BLOCK, s->blocks);
		if (scif_send(s->epd, out, BLOCK, SCIF_SEND_BLOCK) != BLOCK ||
		    scif_recv(s->epd, in, BLOCK, SCIF_RECV_BLOCK) != BLOCK)
			break;
		if (memcmp(in, out, BLOCK)) {
			errno = EBADMSG;
			break;
		}
		s->blocks++;
	}
	s->err = __atomic_load_n(&s->stop, __ATOMIC_ACQUIRE) ? 0 : errno;
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Join within @ms; a stream still blocked is a hang. */
static int stream_join(struct stream *s, long ms)
{
	long end = now_ms() + ms;

	while (!__atomic_load_n(&s->done, __ATOMIC_ACQUIRE) && now_ms() < end)
		usleep(10000);
	if (!__atomic_load_n(&s->done, __ATOMIC_ACQUIRE))
		return -1;
	pthread_join(s->th, NULL);
	return 0;
}

static int nodes_online(void)
{
	uint16_t nodes[16], self;

	return scif_get_nodeIDs(nodes, 16, &self);
}

static int wait_nodes(int want, long ms)
{
	long end = now_ms() + ms;
	int n;

	while ((n = nodes_online()) != want && now_ms() < end)
		usleep(100 * 1000);
	return n;
}

static int connect_node(uint16_t node, uint16_t port, int tries)
{
	struct scif_port_id dst = { .node = node, .port = port };
	int epd;

	while (tries--) {
		epd = scif_open();
		if (epd < 0)
			return -1;
		alarm_in_ms(BOUND_MS);
		if (scif_connect(epd, &dst) >= 0) {
			alarm_cancel();
			return epd;
		}
		alarm_cancel();
		scif_close(epd);
		usleep(200 * 1000);
	}
	return -1;
}

static int connect_to(uint16_t port, int tries)
{
	return connect_node(1, port, tries);
}

static int send_cmd(int ctl, const char *kind)
{
	char cmd[CMD] = { 0 };

	snprintf(cmd, sizeof(cmd), "%s", kind);
	return scif_send(ctl, cmd, CMD, SCIF_SEND_BLOCK) == CMD ? 0 : -1;
}

/* recv bounded by an alarm: its result, errno set. */
static int recv_bounded(int epd, char *buf, int len, long ms)
{
	int ret;

	alarm_in_ms(ms);
	errno = 0;
	ret = scif_recv(epd, buf, len, SCIF_RECV_BLOCK);
	alarm_cancel();
	return ret;
}

static int start_stream_to(struct stream *s, uint16_t node)
{
	memset(s, 0, sizeof(*s));
	s->epd = connect_node(node, ECHO_PORT, 50);
	if (s->epd < 0)
		return -1;
	return pthread_create(&s->th, NULL, stream_fn, s);
}

static int start_stream(struct stream *s)
{
	return start_stream_to(s, 1);
}

/* The bystander's stream moves and node 2 is listed (if there is one). */
static void check_bystander(const char *kind)
{
	long moved;
	uint16_t nodes[16], self;
	int i, n, listed = 0;

	if (!bystander)
		return;
	moved = bystander->blocks;
	usleep(300 * 1000);
	check(bystander->blocks > moved && !bystander->done,
	      "bystander_stream_carries_on", kind);
	n = scif_get_nodeIDs(nodes, 16, &self);
	for (i = 0; i < n && i < 16; i++)
		listed |= nodes[i] == 2;
	check(listed, "bystander_listed", kind);
}

/* A kind that must cost nothing but what it broke. */
static int harmless_round(int ctl, const char *kind)
{
	int dropped = stat_of("dropped_msgs"), rings = stat_of("ring_failures");
	int failures = stat_of("node_failures");
	struct stream s;
	char buf[CMD];
	int victim = -1, ret, ok;
	long moved;

	if (!check(start_stream(&s) == 0, "echo_stream_started", kind))
		return -1;
	if (!strcmp(kind, "conn")) {
		victim = connect_to(CONN_PORT, 50);
		check(victim >= 0, "victim_connected", kind);
	}
	usleep(300 * 1000);
	check(send_cmd(ctl, kind) == 0, "command_sent", kind);
	if (victim >= 0) {
		/* Blocked in recv when the ring breaks: must end, ECONNRESET. */
		ret = recv_bounded(victim, buf, CMD, BOUND_MS);
		check(ret < 0 && errno == ECONNRESET,
		      "blocked_recv_econnreset", kind);
		errno = 0;
		ret = scif_send(victim, buf, CMD, 0);
		check(ret < 0 && errno == ECONNRESET, "send_econnreset", kind);
		check(stat_of("ring_failures") == rings + 1,
		      "one_ring_failure_counted", kind);
		scif_close(victim);
	}
	ret = recv_bounded(ctl, buf, CMD, BOUND_MS);
	check(ret == CMD && !strcmp(buf, "DONE 0"), "hook_done", kind);
	if (!strcmp(kind, "msgs"))
		check(stat_of("dropped_msgs") > dropped, "messages_dropped",
		      kind);
	moved = s.blocks;
	usleep(500 * 1000);
	check(s.blocks > moved && !s.done, "echo_stream_carries_on", kind);
	check(nodes_online() == nr_nodes, "node_1_still_listed", kind);
	check_bystander(kind);
	check(stat_of("node_failures") == failures, "no_node_failure", kind);
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
	ok = stream_join(&s, BOUND_MS) == 0;
	check(ok && !s.err, "stream_stopped_cleanly", kind);
	if (ok)
		scif_close(s.epd);
	return ok ? 0 : -1;
}

/* A kind that must cost node 1 its place until it restarts. */
static int loss_round(int ctl, const char *kind)
{
	int failures = stat_of("node_failures"), i, ok = 1, epd;
	struct scif_port_id dst = { .node = 1, .port = ECHO_PORT };
	struct stream s[STREAMS];
	long start, worst = 0;
	char buf[CMD];

	if (!check(wait_nodes(nr_nodes, REJOIN_MS) == nr_nodes,
		   "node_1_online", kind))
		return -1;
	if (ctl < 0)
		ctl = connect_to(CTL_PORT, 100);
	if (!check(ctl >= 0, "control_connected", kind))
		return -1;
	for (i = 0; i < STREAMS; i++)
		if (start_stream(&s[i]))
			ok = 0;
	if (!check(ok, "streams_started", kind))
		return -1;
	usleep(500 * 1000);
	start = now_ms();
	check(send_cmd(ctl, kind) == 0, "command_sent", kind);
	for (i = 0; i < STREAMS; i++) {
		if (stream_join(&s[i], BOUND_MS)) {
			printf("# stream %d still blocked after %d ms\n", i,
			       BOUND_MS);
			check(0, "streams_reset", kind);
			return -1;	/* a hang: nothing more to learn */
		}
		if (s[i].err != ECONNRESET || !s[i].blocks) {
			printf("# stream %d: %ld blocks, then %s\n", i,
			       s[i].blocks, strerror(s[i].err));
			ok = 0;
		}
		scif_close(s[i].epd);
	}
	worst = now_ms() - start;
	printf("# %s: streams reset within %ld ms\n", kind, worst);
	check(ok, "streams_got_econnreset", kind);
	check(recv_bounded(ctl, buf, CMD, BOUND_MS) < 0 && errno == ECONNRESET,
	      "control_recv_econnreset", kind);
	scif_close(ctl);
	check(nodes_online() == nr_nodes - 1, "node_list_without_node_1",
	      kind);
	epd = scif_open();
	errno = 0;
	check(scif_connect(epd, &dst) < 0 && errno == ENODEV,
	      "connect_enodev", kind);
	scif_close(epd);
	check(stat_of("node_failures") == failures + 1,
	      "node_failure_counted", kind);
	check_bystander(kind);
	return 0;
}

static int drive(const char * const *kinds, int nr_kinds)
{
	char out[BLOCK], in[BLOCK];
	int ctl, epd, k;

	printf("TAP version 13\n");
	if (!check(wait_nodes(nr_nodes, REJOIN_MS) == nr_nodes,
		   "all_nodes_online", "start"))
		return 1;
	ctl = connect_to(CTL_PORT, 100);
	if (!check(ctl >= 0, "control_connected", "start"))
		return 1;
	if (nr_nodes > 2) {
		static struct stream by;

		if (!check(start_stream_to(&by, 2) == 0,
			   "bystander_stream_started", "start"))
			return 1;
		bystander = &by;
	}
	if (harmless_round(ctl, "msgs") || harmless_round(ctl, "conn"))
		return 1;
	/* The first loss ends node 1's life and its control connection. */
	for (k = 0; k < nr_kinds; k++, ctl = -1)
		if (loss_round(ctl, kinds[k]))
			return 1;

	check(wait_nodes(nr_nodes, REJOIN_MS) == nr_nodes, "node_1_rejoined",
	      "end");
	epd = connect_to(ECHO_PORT, 50);
	fill_pattern(out, BLOCK, 7);
	check(epd >= 0 && scif_send(epd, out, BLOCK, SCIF_SEND_BLOCK) == BLOCK &&
	      recv_bounded(epd, in, BLOCK, BOUND_MS) == BLOCK &&
	      !memcmp(in, out, BLOCK), "fresh_connection_echoes", "end");
	scif_close(epd);
	if (bystander) {
		__atomic_store_n(&bystander->stop, 1, __ATOMIC_RELEASE);
		check(stream_join(bystander, BOUND_MS) == 0 && !bystander->err,
		      "bystander_stream_stopped_cleanly", "end");
		scif_close(bystander->epd);
		ctl = connect_node(2, CTL_PORT, 100);
		send_cmd(ctl, "QUIT");
		scif_close(ctl);
	}
	ctl = connect_to(CTL_PORT, 100);
	send_cmd(ctl, "QUIT");
	scif_close(ctl);
	printf("1..%d\n", t);
	return 0;
}

/* Every argument must be a loss kind: a typo must not shrink the run. */
static int known_kinds(char **argv, int argc)
{
	size_t k;
	int i;

	for (i = 0; i < argc; i++) {
		for (k = 0; k < NR_LOSS; k++)
			if (!strcmp(argv[i], loss_kinds[k]))
				break;
		if (k == NR_LOSS) {
			printf("not ok 1 unknown loss kind '%s'\n1..1\n", argv[i]);
			return 0;
		}
	}
	return 1;
}

int main(int argc, char **argv)
{
	const char *node = getenv("SCIF_NODE");

	if (!node || !getenv("SCIF_CONTROL") || !getenv("SCIF_NODES")) {
		printf("1..0 # SKIP not in a cluster\n");
		return 4;
	}
	nr_nodes = atoi(getenv("SCIF_NODES"));
	switch (atoi(node)) {
	case 0:
		if (!known_kinds(argv + 1, argc - 1))
			return 1;
		if (argc > 1)
			return drive((const char * const *)argv + 1, argc - 1);
		return drive(loss_kinds, NR_LOSS);
	case 1:
		return serve();
	default:	/* a bystander: serves until told to quit */
		return serve_life() == 1 ? 0 : 1;
	}
}
