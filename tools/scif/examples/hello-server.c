// SPDX-License-Identifier: GPL-2.0
/*
 * hello-server: the smallest SCIF server.  It listens on a port, accepts
 * one client at a time, reads a length-prefixed greeting and answers
 * "hello, <greeting>" the same way.
 *
 *   hello-server [PORT [CLIENTS]]
 *
 * PORT defaults to 2600; with CLIENTS it exits after serving that many
 * (else it runs until killed).  Build against libscif: cc hello-server.c
 * -lscif.  Run hello-client on this node or another one.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <scif.h>

#define MAX_GREETING	256

/* Receive a 32-bit length, then that many bytes (at most @size - 1). */
static int recv_str(scif_epd_t epd, char *buf, uint32_t size)
{
	uint32_t len;

	if (scif_recv(epd, &len, sizeof(len), SCIF_RECV_BLOCK) != sizeof(len))
		return -1;
	if (len >= size) {
		errno = EMSGSIZE;
		return -1;
	}
	if (len && scif_recv(epd, buf, len, SCIF_RECV_BLOCK) != (int)len)
		return -1;
	buf[len] = '\0';
	return 0;
}

static int send_str(scif_epd_t epd, const char *s)
{
	uint32_t len = strlen(s);

	if (scif_send(epd, &len, sizeof(len), SCIF_SEND_BLOCK) != sizeof(len))
		return -1;
	return scif_send(epd, (void *)s, len, SCIF_SEND_BLOCK) == (int)len ?
	       0 : -1;
}

static int serve_one(scif_epd_t lep)
{
	char greeting[MAX_GREETING], answer[MAX_GREETING + 8];
	struct scif_port_id peer;
	scif_epd_t epd;
	int ret = -1;

	if (scif_accept(lep, &peer, &epd, SCIF_ACCEPT_SYNC) < 0) {
		perror("hello-server: scif_accept");
		return -1;
	}
	if (recv_str(epd, greeting, sizeof(greeting)) == 0) {
		printf("hello-server: node %u port %u says \"%s\"\n",
		       peer.node, peer.port, greeting);
		fflush(stdout);
		snprintf(answer, sizeof(answer), "hello, %s", greeting);
		ret = send_str(epd, answer);
	}
	if (ret)
		perror("hello-server: client");
	scif_close(epd);
	return ret;
}

int main(int argc, char **argv)
{
	int port = argc > 1 ? atoi(argv[1]) : 2600;
	long clients = argc > 2 ? atol(argv[2]) : -1, served;
	scif_epd_t lep;
	int failed = 0;

	if (port <= 0 || port > 65535 || argc > 3) {
		fprintf(stderr, "usage: hello-server [PORT [CLIENTS]]\n");
		return 2;
	}
	lep = scif_open();
	if (lep == SCIF_OPEN_FAILED) {
		perror("hello-server: scif_open (is scif.ko loaded?)");
		return 1;
	}
	if (scif_bind(lep, port) < 0 || scif_listen(lep, 16) < 0) {
		perror("hello-server: bind/listen");
		scif_close(lep);
		return 1;
	}
	printf("hello-server: listening on port %d\n", port);
	fflush(stdout);
	for (served = 0; clients < 0 || served < clients; served++)
		failed |= serve_one(lep) != 0;
	scif_close(lep);
	return failed;
}
