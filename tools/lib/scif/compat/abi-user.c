// SPDX-License-Identifier: LGPL-2.1
/*
 * A program as one built against Intel's libscif.so.0: test-compat.sh
 * links it against the stand-in (standin.c), so every scif_* reference
 * it holds asks for version SCIF_0.0, then runs it with our library in
 * the stand-in's place.  It takes the address of every API function, so
 * that with LD_BIND_NOW=1 each must resolve before main() runs.
 *
 * Prints "library: ours" when scif_get_fd() answered as ours does (an
 * endpoint is its own descriptor), "library: stand-in" otherwise; then,
 * if /dev/scif exists, opens an endpoint and lists the nodes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <scif.h>

static void *const api[] = {
	scif_open, scif_close, scif_bind, scif_listen, scif_connect,
	scif_accept, scif_send, scif_recv, scif_register, scif_unregister,
	scif_mmap, scif_munmap, scif_readfrom, scif_writeto, scif_vreadfrom,
	scif_vwriteto, scif_fence_mark, scif_fence_wait, scif_fence_signal,
	scif_get_nodeIDs, scif_get_fd, scif_poll,
};

int main(void)
{
	uint16_t nodes[16], self;
	unsigned int i;
	scif_epd_t epd;
	int n;

	for (i = 0; i < sizeof(api) / sizeof(api[0]); i++)
		if (!api[i])
			return 2;
	printf("functions: %u\n", i);
	printf("library: %s\n", scif_get_fd(7) == 7 ? "ours" : "stand-in");
	if (access("/dev/scif", F_OK))
		return 0;
	epd = scif_open();
	if (epd == SCIF_OPEN_FAILED) {
		printf("scif_open: %s\n", strerror(errno));
		return 1;
	}
	n = scif_get_nodeIDs(nodes, 16, &self);
	printf("nodes: %d, self %u\n", n, self);
	scif_close(epd);
	return n > 0 ? 0 : 1;
}
