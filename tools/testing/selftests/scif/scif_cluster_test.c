// SPDX-License-Identifier: GPL-2.0
/*
 * Messaging across a cluster, run on every node at once: each node
 * serves an echo port and, at the same time, connects to every other
 * node and checks the echo of messages of several sizes byte for byte.
 * So every pair talks in both directions at once.  The first connection
 * to each peer also checks that SCIF_FP_OPEN says the peer is remote.
 *
 * The cluster size comes from scif.nodes=N on the kernel command line
 * (qemu/cluster.sh sets it); with no cluster the test is skipped.
 * Prints TAP, one line per (peer, size), then one for the server.
 */
#include <sys/ioctl.h>
#include <linux/scif_ioctl.h>

#include "scif_cluster_util.h"

#define ECHO_PORT	2100

static const int sizes[] = { 1, 100, 65535, 65536, 1 << 20 };
#define NR_SIZES	(int)(sizeof(sizes) / sizeof(sizes[0]))

static const char *const checks[] = {
	"size_1", "size_100", "size_65535", "size_65536", "size_1048576",
	"fp_open_says_peer_remote",
};
#define NR_CHECKS	(NR_SIZES + 1)
_Static_assert(sizeof(checks) / sizeof(checks[0]) == NR_CHECKS,
		"a check name per size, and the fast path's");
static int results[CLUSTER_MAX_NODES][NR_CHECKS];	/* 0 ok, else errno */

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
static int serve(int lep, int nr_peers)
{
	int served = 0, epd, expected = nr_peers * NR_SIZES;
	struct scif_port_id peer;

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

/*
 * SCIF_FP_OPEN on a connection to another node: SCIF_FP_PEER_REMOTE, so
 * that libscif does not give up its CPU for the peer.  0 (also on a bus
 * without the fast path), or an errno.
 */
static int fp_remote(int epd)
{
	struct scifioctl_fp req = { 0 };

	if (ioctl(epd, SCIF_FP_OPEN, &req) < 0)
		return errno == EOPNOTSUPP ? 0 : errno;
	close(req.fd);
	return req.flags == SCIF_FP_PEER_REMOTE ? 0 : EPROTO;
}

/* One echo of @len bytes; with @fp_err, fp_remote() of the connection. */
static int exchange(uint16_t node, int len, int *fp_err)
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
		if (fp_err)
			*fp_err = fp_remote(epd);
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

static void run_checks(int idx)
{
	results[idx][NR_SIZES] = ENOTCONN;
	for (int s = 0; s < NR_SIZES; s++)
		results[idx][s] = exchange(peers[idx], sizes[s],
					   s ? NULL : &results[idx][NR_SIZES]);
}

int main(void)
{
	static const struct cluster_test ct = {
		.prefix = "to", .port = ECHO_PORT,
		.checks = checks, .nr_checks = NR_CHECKS,
		.results = &results[0][0],
		.serve = serve, .run_checks = run_checks,
	};

	return cluster_main(&ct);
}
