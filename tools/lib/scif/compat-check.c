// SPDX-License-Identifier: LGPL-2.1
/*
 * Build-only check that a program written against the long-standing
 * libscif names (scif_get_nodeIDs, struct scif_portID, int endpoints)
 * compiles and links against this library.
 */
#include <stdio.h>
#include <stdint.h>
#include <scif.h>

int main(void)
{
	uint16_t nodes[32], self;
	struct scif_portID addr;
	scif_epd_t epd;
	int n, port;

	n = scif_get_nodeIDs(nodes, 32, &self);
	if (n < 0) {
		perror("scif_get_nodeIDs");
		return 1;
	}
	printf("%d node(s), self %u\n", n, self);

	epd = scif_open();
	if (epd == SCIF_OPEN_FAILED) {
		perror("scif_open");
		return 1;
	}
	port = scif_bind(epd, 0);
	if (port < 0) {
		perror("scif_bind");
		scif_close(epd);
		return 1;
	}
	addr.node = self;
	addr.port = port;
	printf("bound to %u:%u\n", addr.node, addr.port);
	return scif_close(epd) ? 1 : 0;
}
