/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the selftests that run on every node of a cluster at once share:
 * the cluster size from the kernel command line, waiting for every node,
 * and the run itself: a server process answers every other node on a
 * port while this process runs a list of checks against each of them,
 * then prints one TAP line per node and check.
 */
#ifndef SCIF_CLUSTER_UTIL_H
#define SCIF_CLUSTER_UTIL_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "scif.h"

#define CLUSTER_MAX_NODES	16

/**
 * struct cluster_test - one test run on every node of a cluster
 * @prefix: rows are named <prefix>_node_<node>_<check>
 * @port: the server's SCIF port
 * @checks: the names of the checks, @nr_checks of them
 * @nr_checks: how many
 * @results: @nr_checks entries per peer, peer after peer: 0 for a check
 *	that passed, else an errno
 * @serve: the server: answers @peers other nodes on @lep, returns the
 *	exit status of the server process (0: every peer served)
 * @run_checks: runs every check against peer @idx, filling @results
 * @sequential: one peer after the other (else a thread per peer)
 * @note: if set, prints comment lines about peer @idx before its rows
 */
struct cluster_test {
	const char *prefix;
	uint16_t port;
	const char *const *checks;
	int nr_checks;
	int *results;
	int (*serve)(int lep, int peers);
	void (*run_checks)(int idx);
	bool sequential;
	void (*note)(int idx);
};

/* This node and the others, once cluster_wait() has seen them. */
static uint16_t self, peers[CLUSTER_MAX_NODES];
static int nr_nodes;

static int cmdline_int(const char *key, int def)
{
	char buf[4096], *p;
	FILE *f = fopen("/proc/cmdline", "r");
	size_t n;

	if (!f)
		return def;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strstr(buf, key);
	return p ? atoi(p + strlen(key)) : def;
}

/* Up to a minute for @want nodes; fills self and peers.  Returns the count. */
static int cluster_wait(int want)
{
	uint16_t nodes[CLUSTER_MAX_NODES];
	int n = 0;

	for (int i = 0; i < 600; i++) {
		n = scif_get_nodeIDs(nodes, CLUSTER_MAX_NODES, &self);
		if (n >= want)
			break;
		usleep(100 * 1000);
	}
	nr_nodes = 0;
	for (int i = 0; i < n && i < CLUSTER_MAX_NODES; i++)
		if (nodes[i] != self)
			peers[nr_nodes++] = nodes[i];
	return n;
}

/*
 * Connect to @port of @node, retrying for 10 s while nobody listens there
 * yet.  Returns 0 with the endpoint in *@out, or an errno.
 */
static inline int cluster_connect(uint16_t node, uint16_t port,
				  scif_epd_t *out)
{
	struct scif_port_id dst = { .node = node, .port = port };
	int epd = scif_open(), err = 0;

	if (epd < 0)
		return errno;
	for (int tries = 0; tries < 100; tries++) {
		if (scif_connect(epd, &dst) >= 0) {
			*out = epd;
			return 0;
		}
		err = errno;
		if (err != ECONNREFUSED)
			break;
		usleep(100 * 1000);
	}
	scif_close(epd);
	return err;
}

/*
 * The server of a test whose every peer connects once: accept @peers
 * connections, one after the other, and run @serve_one on each; killed
 * after @secs.  Returns 0 if every one was served.
 */
static inline int cluster_serve(int lep, int peers, unsigned int secs,
				int (*serve_one)(scif_epd_t epd))
{
	struct scif_port_id peer;
	int bad = 0, epd;

	alarm(secs);
	for (int served = 0; served < peers; served++) {
		if (scif_accept(lep, &peer, &epd, SCIF_ACCEPT_SYNC) < 0)
			return 1;
		if (serve_one(epd)) {
			fprintf(stderr, "# serving %u:%u failed\n", peer.node,
				peer.port);
			bad++;
		}
		scif_close(epd);
	}
	return bad ? 1 : 0;
}

/* 0 if the call failed with @want, else the errno (or EBADMSG). */
static inline int want_errno(int ret, int want)
{
	if (ret == 0)
		return EBADMSG;
	return errno == want ? 0 : errno;
}

static long cluster_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const struct cluster_test *cluster_current;

static void *cluster_client(void *arg)
{
	cluster_current->run_checks((intptr_t)arg);
	return NULL;
}

static void cluster_rows(const struct cluster_test *ct, int i, int *t)
{
	const int *res = ct->results + i * ct->nr_checks;

	if (ct->note)
		ct->note(i);
	for (int c = 0; c < ct->nr_checks; c++)
		printf("%sok %d %s_node_%u_%s%s%s\n", res[c] ? "not " : "",
		       ++*t, ct->prefix, peers[i], ct->checks[c],
		       res[c] ? " # " : "", res[c] ? strerror(res[c]) : "");
	fflush(stdout);
}

/* The whole run; main() returns what this returns. */
static int cluster_main(const struct cluster_test *ct)
{
	int want = cmdline_int("scif.nodes=", 1), n, lep, status, t = 0;
	pthread_t th[CLUSTER_MAX_NODES];
	long t0 = cluster_now_ms();
	pid_t server;

	if (want < 2) {
		printf("1..0 # SKIP not in a cluster\n");
		return 4;
	}
	n = cluster_wait(want);
	printf("TAP version 13\n1..%d\n", (want - 1) * ct->nr_checks + 2);
	printf("%sok %d cluster_formed # %d of %d nodes\n",
	       n == want ? "" : "not ", ++t, n, want);
	if (n != want)
		return 1;

	lep = scif_open();
	if (lep < 0 || scif_bind(lep, ct->port) < 0 ||
	    scif_listen(lep, 32) < 0) {
		printf("# listen: %s\n", strerror(errno));
		return 1;
	}
	fflush(stdout);
	server = fork();
	if (server == 0)
		_exit(ct->serve(lep, want - 1));
	cluster_current = ct;
	for (int i = 0; i < nr_nodes && !ct->sequential; i++)
		pthread_create(&th[i], NULL, cluster_client,
			       (void *)(intptr_t)i);
	for (int i = 0; i < nr_nodes; i++) {
		if (ct->sequential)
			ct->run_checks(i);
		else
			pthread_join(th[i], NULL);
		cluster_rows(ct, i, &t);
	}
	status = -1;
	waitpid(server, &status, 0);
	printf("%sok %d served_every_peer # %ld ms\n",
	       WIFEXITED(status) && !WEXITSTATUS(status) ? "" : "not ", ++t,
	       cluster_now_ms() - t0);
	scif_close(lep);
	return 0;
}

#endif /* SCIF_CLUSTER_UTIL_H */
