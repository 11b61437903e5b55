// SPDX-License-Identifier: LGPL-2.1
/*
 * Written the way programs for Intel's MPSS used the SCIF library: the
 * header as <scif.h>, the port id as portID_t and struct portID, the flag
 * names without the SCIF_ prefix, SCIF_POLL* events and the reserved
 * port names.  test-compat.sh compiles it strictly and links it against
 * libscif; with an argument "run" it also runs against the module: it
 * opens an endpoint, lists the nodes and polls the endpoint once.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <scif.h>

/* Values MPSS programs rely on, checked at compile time. */
_Static_assert(sizeof(portID_t) == 4, "portID_t is node and port");
_Static_assert(sizeof(struct portID) == sizeof(struct scif_portID),
	       "struct portID is struct scif_portID");
_Static_assert(ACCEPT_SYNC == SCIF_ACCEPT_SYNC && SEND_BLOCK == 1 &&
	       RECV_BLOCK == 1, "deprecated flag aliases");
_Static_assert(SCIF_POLLIN == POLLIN && SCIF_POLLOUT == POLLOUT &&
	       SCIF_POLLERR == POLLERR && SCIF_POLLHUP == POLLHUP &&
	       SCIF_POLLNVAL == POLLNVAL, "poll events");
_Static_assert(SCIF_COI_PORT_0 == 40 && SCIF_OFED_PORT_0 == 60 &&
	       SCIF_NETDEV_PORT_0 == 80 && SCIF_RAS_PORT_0 == 100 &&
	       SCIF_PM_PORT_0 == 120 && SCIF_BT_PORT_0 == 130,
	       "reserved ports below SCIF_ADMIN_PORT_END");
_Static_assert(SCIF_COI_PORT_9 < SCIF_OFED_PORT_0 &&
	       SCIF_BT_PORT_9 < SCIF_ADMIN_PORT_END &&
	       SCIF_MYO_PORT_0 > SCIF_ADMIN_PORT_END &&
	       SCIF_ST_PORT_9 < SCIF_PORT_RSVD, "reserved port ranges");
_Static_assert(SCIF_FENCE_RAS_SELF == 4 && SCIF_FENCE_RAS_PEER == 8,
	       "RAS fence flags");

static int show_nodes(void)
{
	uint16_t nodes[32], self;
	int n, i;

	n = scif_get_nodeIDs(nodes, 32, &self);
	if (n < 0) {
		printf("scif_get_nodeIDs: %s\n", strerror(errno));
		return -1;
	}
	printf("self %u, %d node(s):", self, n);
	for (i = 0; i < n && i < 32; i++)
		printf(" %u", nodes[i]);
	putchar('\n');
	return 0;
}

int main(int argc, char **argv)
{
	struct scif_pollepd pe;
	struct portID dst = { .node = 0, .port = SCIF_COI_PORT_0 };
	portID_t peer;
	scif_epd_t epd, nepd;
	int ret = 0;

	if (argc < 2 || strcmp(argv[1], "run"))
		return 0;
	epd = scif_open();
	if (epd == SCIF_OPEN_FAILED) {
		printf("scif_open: %s\n", strerror(errno));
		return 1;
	}
	if (show_nodes())
		ret = 1;
	pe.epd = epd;
	pe.events = SCIF_POLLIN | SCIF_POLLOUT;
	pe.revents = 0;
	/* The events of a fresh endpoint are the driver's business: shown. */
	if (scif_poll(&pe, 1, 0) < 0)
		ret = 1;
	printf("poll revents 0x%x\n", pe.revents);
	/* Never reached with this argument list: shows the call shapes. */
	if (argc > 2) {
		scif_connect(epd, &dst);
		scif_accept(epd, &peer, &nepd, ACCEPT_SYNC);
		scif_send(epd, &peer, sizeof(peer), SEND_BLOCK);
		scif_recv(epd, &peer, sizeof(peer), RECV_BLOCK);
	}
	scif_close(epd);
	return ret;
}
