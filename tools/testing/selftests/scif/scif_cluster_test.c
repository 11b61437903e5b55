// SPDX-License-Identifier: GPL-2.0
/*
 * Messaging across a cluster, run on every node at once: each node
 * serves an echo port and, at the same time, connects to every other
 * node and checks the echo of messages of several sizes byte for byte.
 * So every pair talks in both directions at once.
 *
 * The cluster size comes from scif.nodes=N on the kernel command line
 * (qemu/cluster.sh sets it); with no cluster the test is skipped.
 * Prints TAP, one line per (peer, size), then one for the server.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "scif.h"

#define ECHO_PORT	2100
#define MAX_NODES	16

static const int sizes[] = { 1, 100, 65535, 65536, 1 << 20 };
#define NR_SIZES	(int)(sizeof(sizes) / sizeof(sizes[0]))

static uint16_t self, peers[MAX_NODES];
static int nr_nodes;
static int results[MAX_NODES][NR_SIZES];	/* 0 ok, else errno */

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

static void fill(uint8_t *buf, int len, unsigned int seed)
{
	for (int i = 0; i < len; i++) {
		seed = seed * 1103515245 + 12345;
		buf[i] = seed >> 16;
	}
}

/* Echo one message: a 4-byte length, then that many bytes. */
static int echo_one(scif_epd_t epd)
{
	uint32_t len;
	uint8_t *buf;
	int ok;

	if (scif_recv(epd, &len, sizeof(len), SCIF_RECV_BLOCK) != sizeof(len) ||
	    len > (1 << 24))
		return -1;
	buf = malloc(len);
	ok = buf && scif_recv(epd, buf, len, SCIF_RECV_BLOCK) == (int)len &&
	     scif_send(epd, buf, len, SCIF_SEND_BLOCK) == (int)len;
	free(buf);
	return ok ? 0 : -1;
}

/* The server, in a child: serve every peer's every size, then exit. */
static int serve(int lep, int expected)
{
	struct scif_port_id peer;
	int served = 0, epd;

	alarm(300);
	while (served < expected) {
		if (scif_accept(lep, &peer, &epd, SCIF_ACCEPT_SYNC) < 0)
			return 1;
		if (echo_one(epd))
			fprintf(stderr, "# echo for %u:%u failed\n", peer.node,
				peer.port);
		scif_close(epd);
		served++;
	}
	return 0;
}

static int exchange(uint16_t node, int len)
{
	struct scif_port_id dst = { .node = node, .port = ECHO_PORT };
	uint8_t *out = malloc(len), *in = malloc(len);
	uint32_t hdr = len;
	int epd, err = 0, tries;

	if (!out || !in) {
		err = ENOMEM;
		goto out;
	}
	fill(out, len, self * 7919u + node * 104729u + len);
	epd = scif_open();
	if (epd < 0) {
		err = errno;
		goto out;
	}
	/* The peer's server may not be listening yet. */
	for (tries = 0; tries < 100; tries++) {
		if (scif_connect(epd, &dst) >= 0)
			break;
		err = errno;
		if (err != ECONNREFUSED)
			break;
		usleep(100 * 1000);
	}
	if (tries < 100 && (err == 0 || err == ECONNREFUSED)) {
		err = 0;
		if (scif_send(epd, &hdr, sizeof(hdr), SCIF_SEND_BLOCK) != sizeof(hdr) ||
		    scif_send(epd, out, len, SCIF_SEND_BLOCK) != len ||
		    scif_recv(epd, in, len, SCIF_RECV_BLOCK) != len)
			err = errno ? errno : EIO;
		else if (memcmp(in, out, len))
			err = EBADMSG;
	}
	scif_close(epd);
out:
	free(out);
	free(in);
	return err;
}

static void *client(void *arg)
{
	int idx = (intptr_t)arg;

	for (int s = 0; s < NR_SIZES; s++)
		results[idx][s] = exchange(peers[idx], sizes[s]);
	return NULL;
}

static int wait_for_cluster(int want)
{
	uint16_t nodes[MAX_NODES];
	int n = 0;

	for (int i = 0; i < 600; i++) {
		n = scif_get_nodeIDs(nodes, MAX_NODES, &self);
		if (n >= want)
			break;
		usleep(100 * 1000);
	}
	nr_nodes = 0;
	for (int i = 0; i < n && i < MAX_NODES; i++)
		if (nodes[i] != self)
			peers[nr_nodes++] = nodes[i];
	return n;
}

int main(void)
{
	int want = cmdline_int("scif.nodes=", 1), n, lep, status, t = 0;
	pthread_t th[MAX_NODES];
	pid_t server;

	if (want < 2) {
		printf("1..0 # SKIP not in a cluster\n");
		return 4;
	}
	n = wait_for_cluster(want);
	printf("TAP version 13\n1..%d\n", (want - 1) * NR_SIZES + 2);
	printf("%sok %d cluster_formed # %d of %d nodes\n",
	       n == want ? "" : "not ", ++t, n, want);
	if (n != want)
		return 1;

	lep = scif_open();
	if (lep < 0 || scif_bind(lep, ECHO_PORT) < 0 || scif_listen(lep, 32) < 0) {
		printf("# listen: %s\n", strerror(errno));
		return 1;
	}
	fflush(stdout);
	server = fork();
	if (server == 0)
		_exit(serve(lep, (want - 1) * NR_SIZES));
	for (int i = 0; i < nr_nodes; i++)
		pthread_create(&th[i], NULL, client, (void *)(intptr_t)i);
	for (int i = 0; i < nr_nodes; i++) {
		pthread_join(th[i], NULL);
		for (int s = 0; s < NR_SIZES; s++)
			printf("%sok %d to_node_%u_size_%d%s%s\n",
			       results[i][s] ? "not " : "", ++t, peers[i],
			       sizes[s], results[i][s] ? " # " : "",
			       results[i][s] ? strerror(results[i][s]) : "");
	}
	status = -1;
	waitpid(server, &status, 0);
	printf("%sok %d served_every_peer\n",
	       WIFEXITED(status) && !WEXITSTATUS(status) ? "" : "not ", ++t);
	scif_close(lep);
	return 0;
}
