// SPDX-License-Identifier: GPL-2.0
/*
 * What an NTB without a full-reach window cannot do, in a 2-node cluster
 * joined by the emulated NTB (qemu/cluster.sh -T ntb, scif_ntb): node 1
 * serves one connection; node 0 connects, checks that registering memory
 * for RMA fails with EOPNOTSUPP (the windows reach only the rings), that
 * nothing was registered (a remote mmap of the peer finds no window,
 * ENXIO), and that the connection still carries bytes both ways.
 *
 * Node 0 prints TAP; node 1 prints one line when done.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "scif.h"

#define PORT	2300
#define LEN	(64 * 1024)

static int t, failed;

static void check(int ok, const char *name)
{
	printf("%sok %d %s\n", ok ? "" : "not ", ++t, name);
	fflush(stdout);
	failed |= !ok;
}

static int serve(void)
{
	struct scif_port_id peer;
	int lep, epd;
	char c;

	alarm(120);
	lep = scif_open();
	if (lep < 0 || scif_bind(lep, PORT) < 0 || scif_listen(lep, 1) < 0 ||
	    scif_accept(lep, &peer, &epd, SCIF_ACCEPT_SYNC) < 0)
		return 1;
	/* Echo one byte, then wait for the peer to close. */
	if (scif_recv(epd, &c, 1, SCIF_RECV_BLOCK) != 1 ||
	    scif_send(epd, &c, 1, SCIF_SEND_BLOCK) != 1)
		return 1;
	scif_recv(epd, &c, 1, SCIF_RECV_BLOCK);
	scif_close(epd);
	scif_close(lep);
	printf("# node 1: served\n");
	return 0;
}

static int connect_node1(void)
{
	struct scif_port_id dst = { .node = 1, .port = PORT };
	int i, epd;

	for (i = 0; i < 600; i++) {
		epd = scif_open();
		if (epd < 0)
			return -1;
		if (scif_connect(epd, &dst) >= 0)
			return epd;
		scif_close(epd);
		usleep(100 * 1000);
	}
	return -1;
}

static int drive(void)
{
	void *buf, *map;
	off_t off;
	int epd;
	char c = 'x';

	printf("1..5\n");
	epd = connect_node1();
	check(epd >= 0, "connected_to_node_1");
	if (epd < 0)
		return 1;
	buf = aligned_alloc(4096, LEN);
	if (!buf)
		return 1;
	memset(buf, 0x5a, LEN);
	errno = 0;
	off = scif_register(epd, buf, LEN, 0,
			    SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	printf("# scif_register: %lld, %s\n", (long long)off, strerror(errno));
	check(off < 0 && errno == EOPNOTSUPP, "register_fails_eopnotsupp");
	errno = 0;
	map = scif_mmap(NULL, 4096, SCIF_PROT_READ, 0, epd, 0);
	printf("# scif_mmap of the peer: %s\n", strerror(errno));
	check(map == MAP_FAILED && errno == ENXIO, "no_remote_window_enxio");
	check(scif_send(epd, &c, 1, SCIF_SEND_BLOCK) == 1, "send_after_refusal");
	c = 0;
	check(scif_recv(epd, &c, 1, SCIF_RECV_BLOCK) == 1 && c == 'x',
	      "echo_after_refusal");
	scif_close(epd);
	free(buf);
	return failed;
}

int main(void)
{
	const char *node = getenv("SCIF_NODE");

	if (!node || !getenv("SCIF_NODES")) {
		printf("1..0 # SKIP not a cluster node\n");
		return 0;
	}
	return atoi(node) == 0 ? drive() : serve();
}
