// SPDX-License-Identifier: GPL-2.0
/*
 * hello-client: the smallest SCIF client.  It connects to hello-server
 * on node NODE, port PORT, sends a length-prefixed greeting and prints
 * the answer.
 *
 *   hello-client [NODE [PORT [GREETING]]]
 *
 * NODE defaults to this node, PORT to 2600, GREETING to "world".  Exits
 * 0 if the answer is "hello, GREETING".
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <scif.h>

#define MAX_ANSWER	272

int main(int argc, char **argv)
{
	const char *greeting = argc > 3 ? argv[3] : "world";
	struct scif_port_id dst = { .port = 2600 };
	char answer[MAX_ANSWER], want[MAX_ANSWER];
	uint32_t len = strlen(greeting);
	uint16_t self;
	scif_epd_t epd;
	int ok;

	if (argc > 4 || len > 255) {
		fprintf(stderr, "usage: hello-client [NODE [PORT [GREETING]]] (GREETING: at most 255 bytes)\n");
		return 2;
	}
	if (scif_get_nodeIDs(NULL, 0, &self) < 0) {
		perror("hello-client: scif_get_nodeIDs (is scif.ko loaded?)");
		return 1;
	}
	dst.node = argc > 1 ? atoi(argv[1]) : self;
	if (argc > 2)
		dst.port = atoi(argv[2]);
	epd = scif_open();
	if (epd == SCIF_OPEN_FAILED || scif_connect(epd, &dst) < 0) {
		perror("hello-client: connect");
		return 1;
	}
	ok = scif_send(epd, &len, sizeof(len), SCIF_SEND_BLOCK) == sizeof(len) &&
	     scif_send(epd, (void *)greeting, len, SCIF_SEND_BLOCK) == (int)len &&
	     scif_recv(epd, &len, sizeof(len), SCIF_RECV_BLOCK) == sizeof(len) &&
	     len < sizeof(answer) &&
	     scif_recv(epd, answer, len, SCIF_RECV_BLOCK) == (int)len;
	scif_close(epd);
	if (!ok) {
		perror("hello-client: exchange");
		return 1;
	}
	answer[len] = '\0';
	printf("%s\n", answer);
	snprintf(want, sizeof(want), "hello, %s", greeting);
	return strcmp(answer, want) ? 1 : 0;
}
