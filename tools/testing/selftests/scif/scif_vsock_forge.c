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
 * Then a silent peer, on the next connection: it answers the first vsock
 * connection node 0 asks for, never answers its shutdown, and closes the
 * link 1 s after it; it leaves port 701 closed for 15 s more, so node
 * 0's link stays down until after the closed socket's close timeout (8 s)
 * has made it send its reset.  "PASS silent_peer" if the shutdown came;
 * node 0's script checks that the socket let go of scif_vsock.
 *
 *   scif_vsock_forge [SECONDS]   wait at most SECONDS (120) for node 0
 */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
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
#define SILENT_HOLD	15

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

/* One whole packet from @epd within @secs, its payload skipped: 0 or -1. */
static int read_pkt(scif_epd_t epd, struct virtio_vsock_hdr *hdr, int secs)
{
	struct scif_pollepd pe = { .epd = epd, .events = SCIF_POLLIN };
	static char payload[MAX_PAYLOAD];
	uint32_t len;

	if (scif_poll(&pe, 1, secs * 1000) <= 0 ||
	    scif_recv(epd, hdr, sizeof(*hdr), SCIF_RECV_BLOCK) !=
		    (int)sizeof(*hdr))
		return -1;
	len = le32toh(hdr->len);
	if (len > MAX_PAYLOAD ||
	    (len && scif_recv(epd, payload, len, SCIF_RECV_BLOCK) != (int)len))
		return -1;
	return 0;
}

/* The RESPONSE that accepts the connection @req asks for. */
static int respond(scif_epd_t epd, const struct virtio_vsock_hdr *req)
{
	struct virtio_vsock_hdr hdr;

	good_hdr(&hdr);
	hdr.src_port = req->dst_port;
	hdr.dst_port = req->src_port;
	hdr.type = req->type;
	hdr.op = htole16(VIRTIO_VSOCK_OP_RESPONSE);
	hdr.len = 0;
	return scif_send(epd, &hdr, sizeof(hdr), SCIF_SEND_BLOCK) ==
	       (int)sizeof(hdr) ? 0 : -1;
}

/*
 * The silent peer on listener @l (closed here): 0 if node 0 connected,
 * was answered and shut its socket down.
 */
static int silent_peer(scif_epd_t l, int secs)
{
	struct scif_pollepd pe = { .epd = l, .events = SCIF_POLLIN };
	struct virtio_vsock_hdr hdr;
	int answered = 0, shut = 0;
	struct scif_port_id peer;
	scif_epd_t epd;

	if (scif_poll(&pe, 1, secs * 1000) <= 0 ||
	    scif_accept(l, &peer, &epd, 0) < 0) {
		scif_close(l);
		printf("# no connection from node 0 for the silent peer\n");
		return -1;
	}
	scif_close(l);
	while (!shut && !read_pkt(epd, &hdr, secs)) {
		switch (le16toh(hdr.op)) {
		case VIRTIO_VSOCK_OP_REQUEST:
			if (!answered && !respond(epd, &hdr))
				answered = 1;
			break;
		case VIRTIO_VSOCK_OP_SHUTDOWN:
			shut = answered;
			break;
		}
	}
	printf("# silent peer: connection %s, shutdown %s\n",
	       answered ? "answered" : "not asked for",
	       shut ? "left unanswered" : "not seen");
	sleep(1);
	scif_close(epd);
	sleep(SILENT_HOLD);
	return shut ? 0 : -1;
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
	if (silent_peer(l, secs)) {
		printf("FAIL silent_peer\n");
		failed++;
	} else {
		printf("PASS silent_peer\n");
	}
	return failed ? 1 : 0;
}
