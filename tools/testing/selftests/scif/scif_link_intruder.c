// SPDX-License-Identifier: GPL-2.0
/*
 * An unprivileged user on a lower node tries to become a kernel client's
 * peer link (scif_net's port 700, scif_vsock's 701: scif_peer_links.c),
 * for scif_net_test.sh and scif_vsock_test.sh.  Run as root on node 0 of
 * a 2-node cluster; it becomes nobody (uid and gid 65534) first, checks
 * that it cannot bind a privileged port, then connects to NODE:PORT
 * COUNT times, one connection at a time.  The peer's listener must close
 * each connection at once, before the link reads or sends a byte on it:
 * "PASS name" if every connection was refused or reset within 5 s with
 * no byte received, else "FAIL name" and why; one line each:
 *   intruder_is_unprivileged   the bind of port 1023 fails with EACCES
 *   intruder_port_<PORT>_refused
 * That the kernel's own link kept its connection is checked by the
 * scripts (its carrier, its log).
 *
 *   scif_link_intruder NODE PORT [COUNT]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scif.h"

#define NOBODY		65534
#define WAIT_MS		5000

static int verdict(int ok, const char *name)
{
	printf("%s %s\n", ok ? "PASS" : "FAIL", name);
	fflush(stdout);
	return !ok;
}

/* True if an unprivileged process is what runs now. */
static int unprivileged(void)
{
	scif_epd_t epd;
	int ok;

	if (setgid(NOBODY) || setuid(NOBODY) || !getuid()) {
		perror("# setuid nobody");
		return 0;
	}
	epd = scif_open();
	if (epd < 0) {
		perror("# scif_open");
		return 0;
	}
	errno = 0;
	ok = scif_bind(epd, 1023) < 0 && errno == EACCES;
	if (!ok)
		printf("# bind 1023 as nobody: errno %d\n", errno);
	scif_close(epd);
	return ok;
}

/* One connection: 1 if the listener refused or reset it in time. */
static int refused_once(struct scif_port_id *dst)
{
	struct scif_pollepd pe = { .events = SCIF_POLLIN };
	int port, n, got = 0;
	char buf[256];

	pe.epd = scif_open();
	if (pe.epd < 0) {
		perror("# scif_open");
		return 0;
	}
	port = scif_connect(pe.epd, dst);
	if (port < 0) {
		printf("# connect to %u:%u: %s\n", dst->node, dst->port,
		       strerror(errno));
		n = errno == ECONNREFUSED || errno == ECONNRESET;
		goto out;
	}
	for (;;) {
		if (scif_poll(&pe, 1, WAIT_MS) <= 0) {
			printf("# from port %d: still connected after %d ms\n",
			       port, WAIT_MS);
			n = 0;
			goto out;
		}
		n = scif_recv(pe.epd, buf, sizeof(buf), 0);
		if (n <= 0)
			break;
		got += n;
	}
	printf("# from port %d: %d bytes, then %s\n", port, got,
	       n < 0 ? strerror(errno) : "end");
	n = n < 0 && (errno == ECONNRESET || errno == ENOTCONN) && !got;
out:
	scif_close(pe.epd);
	return n;
}

int main(int argc, char **argv)
{
	struct scif_port_id dst;
	int i, count, ok = 1;
	char name[64];

	if (argc < 3) {
		fprintf(stderr, "usage: %s NODE PORT [COUNT]\n", argv[0]);
		return 2;
	}
	dst.node = atoi(argv[1]);
	dst.port = atoi(argv[2]);
	count = argc > 3 ? atoi(argv[3]) : 3;
	if (verdict(unprivileged(), "intruder_is_unprivileged"))
		return 1;
	for (i = 0; i < count; i++)
		ok &= refused_once(&dst);
	snprintf(name, sizeof(name), "intruder_port_%u_refused", dst.port);
	return verdict(ok, name);
}
