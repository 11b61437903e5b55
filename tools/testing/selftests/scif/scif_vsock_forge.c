// SPDX-License-Identifier: GPL-2.0
/*
 * A hostile scif_vsock peer, for scif_vsock_test.sh.  Run as root on
 * node 1 of a 2-node cluster before scif_vsock.ko loads there: it takes
 * scif_vsock's SCIF port (701) and, to each connection node 0's
 * scif_vsock makes (the lower id connects, again every 500 ms after a
 * failure), sends one packet header that node 0 must refuse, then waits
 * for node 0 to reset the connection.  One case per connection:
 *   len     a payload longer than the 64 KiB a packet may carry
 *   src     a source CID that is not node 1's
 *   dst     a destination CID that is not node 0's
 *   type    a socket type that is neither stream nor seqpacket
 * For each: "PASS name" if node 0 closed the connection within 10 s
 * without reading a payload, else "FAIL name" (node 0's side, that the
 * header was counted and the link came back, is checked by the script).
 *
 *   scif_vsock_forge [SECONDS]   wait at most SECONDS (120) for node 0
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/virtio_vsock.h>

#include "scif.h"

#define SV_PORT		701
#define CID_BASE	3
#define MAX_PAYLOAD	(64 * 1024)

struct forge_case {
	const char *name;
	void (*spoil)(struct virtio_vsock_hdr *hdr);
};

static void spoil_len(struct virtio_vsock_hdr *hdr)
{
	hdr->len = htole32(MAX_PAYLOAD + 1);
}

static void spoil_src(struct virtio_vsock_hdr *hdr)
{
	hdr->src_cid = htole64(CID_BASE + 7);
}

static void spoil_dst(struct virtio_vsock_hdr *hdr)
{
	hdr->dst_cid = htole64(CID_BASE + 1);
}

static void spoil_type(struct virtio_vsock_hdr *hdr)
{
	hdr->type = htole16(3);	/* VIRTIO_VSOCK_TYPE_SEQPACKET is 2 */
}

static const struct forge_case cases[] = {
	{ "forged_len_over_64KiB_reset", spoil_len },
	{ "forged_src_cid_reset", spoil_src },
	{ "forged_dst_cid_reset", spoil_dst },
	{ "forged_type_reset", spoil_type },
};

/* A header node 0 would take: a stream packet from node 1 to node 0. */
static void good_hdr(struct virtio_vsock_hdr *hdr)
{
	memset(hdr, 0, sizeof(*hdr));
	hdr->src_cid = htole64(CID_BASE + 1);
	hdr->dst_cid = htole64(CID_BASE + 0);
	hdr->src_port = htole32(1024);
	hdr->dst_port = htole32(1024);
	hdr->type = htole16(VIRTIO_VSOCK_TYPE_STREAM);
	hdr->op = htole16(VIRTIO_VSOCK_OP_RW);
	hdr->len = htole32(16);
	hdr->buf_alloc = htole32(256 * 1024);
}

/* True if the peer closed @epd within @secs seconds. */
static int reset_within(scif_epd_t epd, int secs)
{
	struct scif_pollepd pe = { .epd = epd, .events = SCIF_POLLIN };
	char c;
	int n;

	if (scif_poll(&pe, 1, secs * 1000) <= 0)
		return 0;
	n = scif_recv(epd, &c, 1, 0);
	return n < 0 && (errno == ECONNRESET || errno == ENOTCONN);
}

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 120, failed = 0;
	struct virtio_vsock_hdr hdr;
	struct scif_port_id peer;
	scif_epd_t l, epd;
	size_t i;

	l = scif_open();
	if (l < 0 || scif_bind(l, SV_PORT) < 0 || scif_listen(l, 4) < 0) {
		perror("scif_vsock_forge: listen on port 701");
		return 1;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct scif_pollepd pe = { .epd = l, .events = SCIF_POLLIN };
		int ok;

		if (scif_poll(&pe, 1, secs * 1000) <= 0 ||
		    scif_accept(l, &peer, &epd, 0) < 0) {
			printf("# no connection from node 0 for case %zu\n", i);
			printf("FAIL %s\n", cases[i].name);
			failed++;
			continue;
		}
		good_hdr(&hdr);
		cases[i].spoil(&hdr);
		ok = peer.node == 0 &&
		     scif_send(epd, &hdr, sizeof(hdr), SCIF_SEND_BLOCK) ==
			     (int)sizeof(hdr) &&
		     reset_within(epd, 10);
		printf("%s %s\n", ok ? "PASS" : "FAIL", cases[i].name);
		fflush(stdout);
		failed += !ok;
		scif_close(epd);
	}
	scif_close(l);
	return failed ? 1 : 0;
}
