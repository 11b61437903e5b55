// SPDX-License-Identifier: GPL-2.0
/*
 * A hostile root on a peer node as scif_net's and scif_vsock's links
 * (scif_peer_links.c), for scif_link_fuzz.sh in a 2-node cluster.  The
 * links have no handshake: frames start with the connection's first
 * byte.  The lower id connects (from a privileged port), the higher
 * listens (ports 700 and 701) and takes only privileged connectors of
 * lower ids, so a root of the other node can be a link two ways:
 *
 *   scif_link_fuzz peer SEED COUNT SECS [net|vsock|both [VICTIM]]
 *	the fuzzer, root, with neither module loaded on its node; VICTIM
 *	(0) is the other node.  If VICTIM's id is the lower, it holds the
 *	well-known ports as the modules would and VICTIM's links connect
 *	to it; if the higher, it connects to VICTIM's listeners from the
 *	highest free privileged port, as VICTIM's peer kernel would, and
 *	again whenever the connection ends.  On each link, in a thread of
 *	its own, COUNT frames at most (SECS seconds at most), drawn from
 *	a generator seeded with SEED:
 *	  valid frames with random contents (net: Ethernet frames of every
 *	  kind, IPv4 with random headers among them; vsock: packets from
 *	  its CID to VICTIM's with random op, ports, flags, credit and
 *	  length, so that connections to VICTIM's vsock listener are made,
 *	  written, credited and reset), the largest the link takes, frames
 *	  sent a few bytes at a time;
 *	  headers VICTIM must refuse (net: bad magic, lengths 0 to 13,
 *	  over the maximum; vsock: payload over 64 KiB, foreign CIDs,
 *	  unknown type) and garbage: after each the connection must end
 *	  within 5 s, and a new one must be made within 10 s;
 *	  truncated frames (a part of a header or of a payload, then the
 *	  connection closed).
 *	Whatever VICTIM sends is read and parsed (ARP requests answered).
 *	Then a valid exchange on the link: an ICMP echo to VICTIM's
 *	10.77.0.<id + 1> answered; a vsock connection to VICTIM's port
 *	5000 accepted and a message echoed.  It serves VICTIM's bystander
 *	stream (port 2411) meanwhile, then sends its verdicts ("PASS name",
 *	"FAIL name") and figures ("# " lines) to VICTIM (port 2412), and
 *	prints them and the victim's, which come back.
 *   scif_link_fuzz victim SECS [FUZZER]
 *	the victim (FUZZER: the other node, 1): a SCIF loopback echo
 *	stream and a stream to FUZZER's bystander server, a vsock echo
 *	listener on port 5000, until FUZZER reports (SECS at most); prints
 *	FUZZER's verdicts and its own: both streams moved and echoed
 *	intact during and after the fuzz, FUZZER still online; sends its
 *	own to FUZZER.
 *   scif_link_fuzz notify NODE PORT SECS / await PORT SECS
 *	a connection made / accepted: the scripts' handshakes once the
 *	links are the modules' again.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <endian.h>
#include <sys/socket.h>
#include <linux/virtio_vsock.h>
#include <linux/vm_sockets.h>

#include "scif.h"

#define NET_PORT	700
#define VSOCK_PORT	701
#define BYST_PORT	2411
#define CTL_PORT	2412
#define LOOP_PORT	2413
#define VS_SERVE_PORT	5000
#define VS_FINAL_PORT	7777
#define SN_MAGIC	0x534e4554
#define ETH_HLEN	14
#define SN_HDR		8
#define SN_MAX_FRAME	(ETH_HLEN + 65535)
#define VS_HDR		((int)sizeof(struct virtio_vsock_hdr))
#define VS_MAX_PAYLOAD	(64 * 1024)
#define CID_BASE	3
#define BUF_MAX		(SN_HDR + SN_MAX_FRAME + VS_MAX_PAYLOAD + 4096)
#define MSG		1024
#define RESET_MS	5000
#define ACCEPT_MS	10000
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const char final_msg[] = "scif_link_fuzz: the link works";

/* The victim's and the fuzzer's node ids and what follows from them:
 * scif_net's MAC addresses (02:53:4e:00:<self>:<peer>), the addresses
 * the script gives (10.77.0.<id + 1>), the CIDs (<id + 3>).  The fuzzer
 * connects if its id is the lower, else it listens (connecting).
 */
static uint16_t vnode, fnode;
static uint8_t mac_v[6], mac_f[6], ip_v[4], ip_f[4];
static uint64_t cid_v, cid_f;
static bool connecting;

static atomic_bool stop;

static void roles(uint16_t victim, uint16_t fuzzer)
{
	static const uint8_t mac[6] = { 0x02, 0x53, 0x4e, 0, 0, 0 };
	static const uint8_t net[4] = { 10, 77, 0, 0 };

	vnode = victim;
	fnode = fuzzer;
	connecting = fuzzer < victim;
	memcpy(mac_v, mac, 6);
	memcpy(mac_f, mac, 6);
	mac_v[4] = victim;
	mac_v[5] = fuzzer;
	mac_f[4] = fuzzer;
	mac_f[5] = victim;
	memcpy(ip_v, net, 4);
	memcpy(ip_f, net, 4);
	ip_v[3] = victim + 1;
	ip_f[3] = fuzzer + 1;
	cid_v = victim + CID_BASE;
	cid_f = fuzzer + CID_BASE;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* ---- the generator: splitmix64, one state per link ---- */

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t below(uint64_t *s, uint32_t n)
{
	return n ? (uint32_t)(rnd(s) % n) : 0;
}

static void fill(uint64_t *s, uint8_t *p, size_t n)
{
	while (n--)
		*p++ = (uint8_t)rnd(s);
}

/* A value from the edges of a u32 as often as from the middle. */
static uint32_t edgy32(uint64_t *s)
{
	static const uint32_t e[] = { 0, 1, 2, 0x7fffffff, 0x80000000,
				      0xfffffffe, 0xffffffff, 4096, 65535,
				      65536, 262144 };

	return below(s, 2) ? e[below(s, ARRAY_SIZE(e))] :
			     (uint32_t)rnd(s);
}

/* ---- a link, as node 1 holds it ---- */

enum {
	C_VALID, C_BIG, C_MAX, C_SPLIT, C_BAD, C_GARBAGE, C_TRUNC, C_HDRTRUNC,
	C_NR
};

static const char * const case_name[C_NR] = {
	"valid", "big", "max", "split", "refused", "garbage", "truncated",
	"hdr-truncated" };

struct link {
	const char *name;
	bool vsock;
	uint16_t port;
	int listener;
	int epd;
	uint64_t rng;
	uint8_t *tx, *rx;
	size_t rxlen;
	long frames, cases[C_NR], conns, resets, bad_kept, bytes, rx_units;
	long ms, unpriv, stalls;
	bool arp_due;
	uint8_t arp_mac[6], arp_ip[4];
	int final_stage;	/* what the final exchange has seen */
	bool reconnect_failed;
	char verdicts[1024];
};

static void verdict(struct link *lk, bool ok, const char *what)
{
	size_t n = strlen(lk->verdicts);

	snprintf(lk->verdicts + n, sizeof(lk->verdicts) - n, "%s %s_%s\n",
		 ok ? "PASS" : "FAIL", lk->name, what);
}

static uint16_t csum(const uint8_t *p, size_t n)
{
	uint32_t s = 0;

	for (; n > 1; p += 2, n -= 2)
		s += (p[0] << 8) | p[1];
	if (n)
		s += p[0] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* An IPv4 header at @p for @len bytes in all, then its checksum. */
static void ip4(uint8_t *p, int len, uint8_t proto)
{
	uint16_t c;

	memset(p, 0, 20);
	p[0] = 0x45;
	p[2] = len >> 8;
	p[3] = len;
	p[8] = 64;
	p[9] = proto;
	memcpy(p + 12, ip_f, 4);
	memcpy(p + 16, ip_v, 4);
	c = csum(p, 20);
	p[10] = c >> 8;
	p[11] = c;
}

/* ---- node 0's side of the stream, parsed ---- */

static void net_seen(struct link *lk, const uint8_t *f, uint32_t len)
{
	if (len >= 42 && f[12] == 0x08 && f[13] == 0x06 && f[21] == 1 &&
	    !memcmp(f + 38, ip_f, 4)) {
		memcpy(lk->arp_mac, f + 22, 6);
		memcpy(lk->arp_ip, f + 28, 4);
		lk->arp_due = true;
	}
	/* An echo reply to the final echo (id 0x5c1f). */
	if (len >= 42 && f[12] == 0x08 && f[13] == 0x00 && f[23] == 1 &&
	    f[34] == 0 && f[38] == 0x5c && f[39] == 0x1f)
		lk->final_stage = 2;
}

static void vsock_seen(struct link *lk, const struct virtio_vsock_hdr *h,
		       const uint8_t *data, uint32_t len)
{
	uint16_t op = le16toh(h->op);

	if (le32toh(h->src_port) != VS_SERVE_PORT ||
	    le32toh(h->dst_port) != VS_FINAL_PORT)
		return;
	if (op == VIRTIO_VSOCK_OP_RESPONSE && lk->final_stage == 0)
		lk->final_stage = 1;
	if (op == VIRTIO_VSOCK_OP_RW && len == sizeof(final_msg) &&
	    !memcmp(data, final_msg, len))
		lk->final_stage = 2;
}

/* Whole units of node 0's stream in @lk->rx, handled and dropped. */
static void parse(struct link *lk)
{
	size_t off = 0;
	uint32_t len;

	for (;;) {
		size_t left = lk->rxlen - off;
		const uint8_t *p = lk->rx + off;

		if (lk->vsock) {
			const struct virtio_vsock_hdr *h = (const void *)p;

			if (left < (size_t)VS_HDR)
				break;
			len = le32toh(h->len);
			if (len > VS_MAX_PAYLOAD) {
				off = lk->rxlen;	/* out of step */
				break;
			}
			if (left < VS_HDR + len)
				break;
			vsock_seen(lk, h, p + VS_HDR, len);
			off += VS_HDR + len;
		} else {
			uint32_t magic;

			if (left < SN_HDR)
				break;
			memcpy(&magic, p, 4);
			memcpy(&len, p + 4, 4);
			len = le32toh(len);
			if (le32toh(magic) != SN_MAGIC || len > SN_MAX_FRAME) {
				off = lk->rxlen;
				break;
			}
			if (left < SN_HDR + len)
				break;
			net_seen(lk, p + SN_HDR, len);
			off += SN_HDR + len;
		}
		lk->rx_units++;
	}
	memmove(lk->rx, lk->rx + off, lk->rxlen - off);
	lk->rxlen -= off;
}

/* Read what node 0 sent: 0, or -errno once the connection is gone. */
static int drain(struct link *lk)
{
	int n;

	for (;;) {
		n = scif_recv(lk->epd, lk->rx + lk->rxlen,
			      BUF_MAX - lk->rxlen, 0);
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		if (!n)
			return 0;
		lk->rxlen += n;
		parse(lk);
	}
}

static void drop(struct link *lk)
{
	if (lk->epd >= 0)
		scif_close(lk->epd);
	lk->epd = -1;
	lk->rxlen = 0;
}

/* As the victim's kernel would: from the highest free privileged port
 * (scif_peer_links.c), to the link's well-known port.  0 or -1.
 */
static int take_by_connecting(struct link *lk, int ms)
{
	struct scif_port_id dst = { .node = vnode, .port = lk->port };
	long end = now_ms() + ms;
	int port;

	do {
		lk->epd = scif_open();
		if (lk->epd < 0)
			return -1;
		for (port = 1023; port >= 768; port--)
			if (scif_bind(lk->epd, port) >= 0)
				break;
		if (port >= 768 && scif_connect(lk->epd, &dst) >= 0) {
			lk->conns++;
			return 0;
		}
		scif_close(lk->epd);
		lk->epd = -1;
		usleep(50000);
	} while (now_ms() < end);
	return -1;
}

/* The victim's next connection: 0, or -1 if none came in time. */
static int take(struct link *lk, int ms)
{
	struct scif_pollepd pe = { .epd = lk->listener, .events = SCIF_POLLIN };
	struct scif_port_id peer;

	drop(lk);
	if (connecting)
		return take_by_connecting(lk, ms);
	if (scif_poll(&pe, 1, ms) <= 0 ||
	    scif_accept(lk->listener, &peer, &lk->epd, 0) < 0) {
		lk->epd = -1;
		return -1;
	}
	lk->conns++;
	if (peer.node != vnode || !peer.port || peer.port >= 1024) {
		printf("# %s: a connection from %u:%u\n", lk->name, peer.node,
		       peer.port);
		lk->unpriv++;
	}
	return 0;
}

/* Wait up to @ms for one of @events, draining node 0's side: the poll's
 * revents, 0 on timeout, or -errno when the connection is gone.
 */
static int wait_epd(struct link *lk, short events, int ms)
{
	struct scif_pollepd pe = { .epd = lk->epd };
	int n, err;

	pe.events = events | SCIF_POLLIN;
	n = scif_poll(&pe, 1, ms);
	if (n < 0)
		return -errno;
	if (!n)
		return 0;
	if (pe.revents & SCIF_POLLIN) {
		err = drain(lk);
		if (err)
			return err;
	}
	if (pe.revents & (SCIF_POLLERR | SCIF_POLLHUP | SCIF_POLLNVAL))
		return -ECONNRESET;
	return pe.revents;
}

/* Send @len bytes of @buf: 0, or -errno (the connection is gone). */
static int put(struct link *lk, const uint8_t *buf, int len)
{
	long end = now_ms() + RESET_MS;
	int done = 0, n;

	while (done < len) {
		n = scif_send(lk->epd, (void *)(buf + done), len - done, 0);
		if (n < 0)
			return -errno;
		done += n;
		lk->bytes += n;
		if (done == len)
			break;
		n = wait_epd(lk, SCIF_POLLOUT, 200);
		if (n < 0)
			return n;
		if (now_ms() > end)
			return -ETIMEDOUT;
	}
	return 0;
}

/* After a header node 0 must refuse: true if it ended the connection. */
static bool reset_seen(struct link *lk)
{
	long end = now_ms() + RESET_MS;
	int n;

	while (now_ms() < end) {
		n = wait_epd(lk, 0, 200);
		if (n < 0)
			return true;
	}
	return false;
}

static void arp_reply(struct link *lk)
{
	uint8_t *f = lk->tx + SN_HDR;
	uint32_t v;

	lk->arp_due = false;
	memcpy(f, lk->arp_mac, 6);
	memcpy(f + 6, mac_f, 6);
	memcpy(f + 12, "\x08\x06\x00\x01\x08\x00\x06\x04\x00\x02", 10);
	memcpy(f + 22, mac_f, 6);
	memcpy(f + 28, ip_f, 4);
	memcpy(f + 32, lk->arp_mac, 6);
	memcpy(f + 38, lk->arp_ip, 4);
	v = htole32(SN_MAGIC);
	memcpy(lk->tx, &v, 4);
	v = htole32(42);
	memcpy(lk->tx + 4, &v, 4);
	put(lk, lk->tx, SN_HDR + 42);
}

/* ---- frames ---- */

static void net_hdr(uint8_t *p, uint32_t magic, uint32_t len)
{
	magic = htole32(magic);
	len = htole32(len);
	memcpy(p, &magic, 4);
	memcpy(p + 4, &len, 4);
}

/* An Ethernet frame of @len bytes at @f: random, but often addressed to
 * node 0 and often an IPv4 packet with a plausible header.
 */
static void net_frame(uint64_t *s, uint8_t *f, uint32_t len)
{
	static const uint16_t types[] = { 0x0800, 0x0806, 0x86dd, 0x8100,
					  0x88cc, 0x0000, 0xffff };
	uint16_t type = types[below(s, 7)];

	fill(s, f, len);
	if (below(s, 4))
		memcpy(f, below(s, 3) ? mac_v : (const uint8_t *)"\xff\xff\xff\xff\xff\xff", 6);
	if (below(s, 2))
		memcpy(f + 6, mac_f, 6);
	if (below(s, 8)) {
		f[12] = type >> 8;
		f[13] = type;
	}
	if (type == 0x0800 && len >= ETH_HLEN + 20 && below(s, 4)) {
		static const uint8_t protos[] = { 1, 6, 17, 2, 47, 255 };

		ip4(f + ETH_HLEN, below(s, 2) ? len - ETH_HLEN : edgy32(s),
		    protos[below(s, 6)]);
		if (below(s, 3))
			f[ETH_HLEN] = 0x40 | below(s, 16);	/* any IHL */
		if (below(s, 3))	/* fragments */
			f[ETH_HLEN + 6] = below(s, 256);
	}
}

/* A vsock header from node 1 to node 0, every field random. */
static void vs_hdr(uint64_t *s, struct virtio_vsock_hdr *h, uint32_t len)
{
	static const uint32_t ports[] = { VS_SERVE_PORT, VS_SERVE_PORT + 1,
					  1024, 1025, 1026, 1027, 0, 0xffffffff };

	h->src_cid = htole64(cid_f);
	h->dst_cid = htole64(cid_v);
	h->src_port = htole32(below(s, 2) ? 1024 + below(s, 8) : edgy32(s));
	h->dst_port = htole32(below(s, 2) ? VS_SERVE_PORT :
			      ports[below(s, 8)]);
	h->len = htole32(len);
	h->type = htole16(below(s, 2) + VIRTIO_VSOCK_TYPE_STREAM);
	h->op = htole16(below(s, 4) ? VIRTIO_VSOCK_OP_REQUEST + below(s, 7) :
			below(s, 65536));
	h->flags = htole32(below(s, 2) ? below(s, 4) : edgy32(s));
	h->buf_alloc = htole32(below(s, 2) ? 262144 : edgy32(s));
	h->fwd_cnt = htole32(below(s, 2) ? below(s, 4096) : edgy32(s));
}

/* A header node 0 must refuse. */
static uint32_t bad_hdr(struct link *lk, uint8_t *p)
{
	uint64_t *s = &lk->rng;

	if (lk->vsock) {
		struct virtio_vsock_hdr *h = (void *)p;

		vs_hdr(s, h, below(s, 64));
		switch (below(s, 4)) {
		case 0:
			h->len = htole32(VS_MAX_PAYLOAD + 1 +
					 below(s, 0xfffeffff));
			break;
		case 1:
			h->src_cid = htole64(below(s, 2) ? rnd(s) : cid_v);
			break;
		case 2:
			h->dst_cid = htole64(below(s, 2) ? rnd(s) : cid_f);
			break;
		default:
			h->type = htole16(below(s, 2) ? 0 : 3 + below(s, 65533));
			break;
		}
		return VS_HDR;
	}
	switch (below(s, 3)) {
	case 0:
		net_hdr(p, SN_MAGIC, below(s, ETH_HLEN));
		break;
	case 1:
		net_hdr(p, SN_MAGIC, SN_MAX_FRAME + 1 +
			below(s, 0xffffffff - SN_MAX_FRAME));
		break;
	default:
		net_hdr(p, SN_MAGIC ^ (1u << below(s, 32)), below(s, 2000));
		break;
	}
	return SN_HDR;
}

/* Garbage that is certainly no header node 0 takes. */
static uint32_t garbage(struct link *lk, uint8_t *p)
{
	uint32_t n = (lk->vsock ? VS_HDR : SN_HDR) + below(&lk->rng, 256);
	uint32_t magic;

	fill(&lk->rng, p, n);
	if (lk->vsock) {
		p[15] = 0xa5;	/* dst_cid's top byte: never CID 3 */
	} else {
		memcpy(&magic, p, 4);
		if (le32toh(magic) == SN_MAGIC)
			p[0] ^= 1;
	}
	return n;
}

/* A valid frame of @len payload bytes at @lk->tx: its size in all. */
static uint32_t valid(struct link *lk, uint32_t len)
{
	uint64_t *s = &lk->rng;

	if (lk->vsock) {
		vs_hdr(s, (void *)lk->tx, len);
		fill(s, lk->tx + VS_HDR, len);
		return VS_HDR + len;
	}
	net_hdr(lk->tx, SN_MAGIC, len);
	net_frame(s, lk->tx + SN_HDR, len);
	return SN_HDR + len;
}

static uint32_t small_len(struct link *lk)
{
	uint64_t *s = &lk->rng;

	if (lk->vsock)
		return below(s, 3) ? below(s, 128) : below(s, 4097);
	return ETH_HLEN + (below(s, 3) ? below(s, 128) : below(s, 1501));
}

static int pick(uint64_t *s)
{
	static const int w[C_NR] = { 820, 30, 4, 30, 45, 40, 16, 15 };
	int r = below(s, 1000), c;

	for (c = 0; c < C_NR - 1; c++) {
		if (r < w[c])
			return c;
		r -= w[c];
	}
	return c;
}

/* One frame of case @c: 0, or -errno when the connection went. */
static int one(struct link *lk, int c)
{
	uint64_t *s = &lk->rng;
	uint32_t n, i, piece;
	int err = 0;

	switch (c) {
	case C_VALID:
		return put(lk, lk->tx, valid(lk, small_len(lk)));
	case C_BIG:
		return put(lk, lk->tx, valid(lk, below(s, lk->vsock ?
				VS_MAX_PAYLOAD : SN_MAX_FRAME - ETH_HLEN) +
				(lk->vsock ? 0 : ETH_HLEN)));
	case C_MAX:
		return put(lk, lk->tx, valid(lk, lk->vsock ? VS_MAX_PAYLOAD :
					     SN_MAX_FRAME));
	case C_SPLIT:
		n = valid(lk, small_len(lk));
		for (i = 0; i < n && !err; i += piece) {
			piece = 1 + below(s, 7);
			if (piece > n - i)
				piece = n - i;
			err = put(lk, lk->tx + i, piece);
		}
		return err;
	case C_BAD:
	case C_GARBAGE:
		n = c == C_BAD ? bad_hdr(lk, lk->tx) : garbage(lk, lk->tx);
		err = put(lk, lk->tx, n);
		if (!err && !reset_seen(lk)) {
			lk->bad_kept++;
			printf("# %s: frame %ld (%s) did not end the connection\n",
			       lk->name, lk->frames, case_name[c]);
		}
		return -ECONNRESET;
	case C_TRUNC:
		n = valid(lk, 1 + small_len(lk));
		i = lk->vsock ? VS_HDR : SN_HDR;
		put(lk, lk->tx, i + below(s, n - i));
		return -ECONNRESET;
	default:
		valid(lk, small_len(lk));
		put(lk, lk->tx, 1 + below(s, (lk->vsock ? VS_HDR : SN_HDR) - 1));
		return -ECONNRESET;
	}
}

/* ---- the final exchange ---- */

static uint32_t final_net(struct link *lk)
{
	uint8_t *f = lk->tx + SN_HDR, *ic = f + ETH_HLEN + 20;
	uint32_t len = ETH_HLEN + 20 + 8 + sizeof(final_msg);
	uint16_t c;

	net_hdr(lk->tx, SN_MAGIC, len);
	memcpy(f, mac_v, 6);
	memcpy(f + 6, mac_f, 6);
	f[12] = 0x08;
	f[13] = 0x00;
	ip4(f + ETH_HLEN, len - ETH_HLEN, 1);
	memset(ic, 0, 8);
	ic[0] = 8;
	ic[4] = 0x5c;
	ic[5] = 0x1f;
	ic[7] = 1;
	memcpy(ic + 8, final_msg, sizeof(final_msg));
	c = csum(ic, 8 + sizeof(final_msg));
	ic[2] = c >> 8;
	ic[3] = c;
	return SN_HDR + len;
}

static uint32_t final_vsock(struct link *lk, uint16_t op)
{
	struct virtio_vsock_hdr *h = (void *)lk->tx;
	uint32_t len = op == VIRTIO_VSOCK_OP_RW ? sizeof(final_msg) : 0;

	memset(h, 0, VS_HDR);
	h->src_cid = htole64(cid_f);
	h->dst_cid = htole64(cid_v);
	h->src_port = htole32(VS_FINAL_PORT);
	h->dst_port = htole32(VS_SERVE_PORT);
	h->len = htole32(len);
	h->type = htole16(VIRTIO_VSOCK_TYPE_STREAM);
	h->op = htole16(op);
	h->buf_alloc = htole32(262144);
	memcpy(lk->tx + VS_HDR, final_msg, len);
	return VS_HDR + len;
}

/* Wait up to @ms for the final exchange to reach @stage. */
static bool final_wait(struct link *lk, int stage, int ms)
{
	long end = now_ms() + ms;

	while (now_ms() < end && lk->final_stage < stage) {
		if (wait_epd(lk, 0, 100) < 0)
			return false;
		if (lk->arp_due)
			arp_reply(lk);
	}
	return lk->final_stage >= stage;
}

/* A valid exchange on the link as it is (or on node 0's next connection
 * if it ended): true if node 0 answered.
 */
static bool final_check(struct link *lk)
{
	int attempt;

	for (attempt = 0; attempt < 4; attempt++) {
		if (lk->epd < 0 && take(lk, ACCEPT_MS))
			return false;
		lk->final_stage = 0;
		if (lk->vsock) {
			if (put(lk, lk->tx, final_vsock(lk, VIRTIO_VSOCK_OP_RST)) ||
			    put(lk, lk->tx, final_vsock(lk, VIRTIO_VSOCK_OP_REQUEST)) ||
			    !final_wait(lk, 1, 3000) ||
			    put(lk, lk->tx, final_vsock(lk, VIRTIO_VSOCK_OP_RW)) ||
			    !final_wait(lk, 2, 3000)) {
				printf("# %s: final exchange, attempt %d: stage %d\n",
				       lk->name, attempt, lk->final_stage);
				drop(lk);
				continue;
			}
			put(lk, lk->tx, final_vsock(lk, VIRTIO_VSOCK_OP_RST));
			return true;
		}
		if (put(lk, lk->tx, final_net(lk)) || !final_wait(lk, 2, 3000)) {
			printf("# %s: final echo, attempt %d: no reply\n",
			       lk->name, attempt);
			if (lk->epd >= 0 && wait_epd(lk, 0, 0) >= 0)
				continue;	/* still up: ask again */
			drop(lk);
			continue;
		}
		return true;
	}
	return false;
}

/* ---- the fuzzer: the links ---- */

static void *fuzz_link(void *arg)
{
	struct link *lk = arg;
	long t0, count = lk->frames, deadline;
	int c, err;

	lk->frames = 0;
	lk->epd = -1;
	if (take(lk, 120000)) {
		printf("# %s: no connection with node %u\n", lk->name, vnode);
		verdict(lk, false, "link_taken");
		lk->ms = 0;
		return NULL;
	}
	t0 = now_ms();
	deadline = t0 + lk->ms;		/* SECS from the first connection */
	while (lk->frames < count && now_ms() < deadline) {
		if (lk->epd < 0 && take(lk, ACCEPT_MS)) {
			printf("# %s: no connection with node %u again within %d ms\n",
			       lk->name, vnode, ACCEPT_MS);
			lk->reconnect_failed = true;
			break;
		}
		c = pick(&lk->rng);
		lk->cases[c]++;
		lk->frames++;
		err = one(lk, c);
		if (!err)
			err = drain(lk);
		if (!err && lk->arp_due)
			arp_reply(lk);
		if (err == -ETIMEDOUT) {
			printf("# %s: frame %ld (%s): node %u stopped reading\n",
			       lk->name, lk->frames, case_name[c], vnode);
			lk->stalls++;
		}
		if (err) {
			lk->resets++;
			drop(lk);
		}
	}
	lk->ms = now_ms() - t0;
	verdict(lk, lk->conns && !lk->unpriv, connecting ?
		"connections_handed_over" :
		"connections_from_victim_privileged_ports");
	verdict(lk, !lk->bad_kept, "every_refused_header_ends_the_connection");
	verdict(lk, !lk->reconnect_failed, "link_taken_again_each_time");
	verdict(lk, !lk->stalls, "victim_keeps_reading");
	verdict(lk, final_check(lk), "valid_exchange_after_fuzz");
	return NULL;
}

static int listen_on(uint16_t port, int backlog)
{
	int l = scif_open();

	if (l < 0 || scif_bind(l, port) < 0 || scif_listen(l, backlog)) {
		printf("# listen on port %u: %s\n", port, strerror(errno));
		if (l >= 0)
			scif_close(l);
		return -1;
	}
	return l;
}

static int connect_to(uint16_t node, uint16_t port, int secs)
{
	struct scif_port_id dst = { .node = node, .port = port };
	long end = now_ms() + secs * 1000L;
	int fd;

	do {
		fd = scif_open();
		if (fd < 0)
			return -1;
		if (scif_connect(fd, &dst) >= 0)
			return fd;
		scif_close(fd);
		usleep(100000);
	} while (now_ms() < end);
	return -1;
}

/* Receive exactly @len bytes within @ms: 0 or -1. */
static int recv_all(int fd, void *buf, int len, int ms)
{
	struct scif_pollepd pe = { .epd = fd, .events = SCIF_POLLIN };
	long end = now_ms() + ms;
	int done = 0, n;

	while (done < len) {
		n = scif_recv(fd, (char *)buf + done, len - done, 0);
		if (n < 0 && errno != EAGAIN)
			return -1;
		if (n > 0) {
			done += n;
			continue;
		}
		if (now_ms() > end || scif_poll(&pe, 1, 200) < 0)
			return -1;
	}
	return 0;
}

/* Echo every connection of listener @arg until stop. */
static void *serve_echo(void *arg)
{
	struct scif_pollepd pe[9] = { { .epd = (intptr_t)arg,
					 .events = SCIF_POLLIN } };
	struct scif_port_id peer;
	int nr = 1, i, n, fd;
	char buf[MSG];

	while (!atomic_load(&stop)) {
		if (scif_poll(pe, nr, 200) <= 0)
			continue;
		if ((pe[0].revents & SCIF_POLLIN) && nr < 9 &&
		    !scif_accept(pe[0].epd, &peer, &fd, 0)) {
			pe[nr].epd = fd;
			pe[nr++].events = SCIF_POLLIN;
		}
		for (i = 1; i < nr; i++) {
			if (!pe[i].revents)
				continue;
			n = scif_recv(pe[i].epd, buf, MSG, 0);
			if (n > 0 && scif_send(pe[i].epd, buf, n,
					       SCIF_SEND_BLOCK) == n)
				continue;
			if (n < 0 && errno == EAGAIN)
				continue;
			scif_close(pe[i].epd);
			pe[i--] = pe[--nr];
		}
	}
	for (i = 1; i < nr; i++)
		scif_close(pe[i].epd);
	return NULL;
}

static bool report(int ctl, int ms, const char *end);

static int peer_main(uint64_t seed, long count, int secs, const char *which)
{
	struct link lk[2] = {
		{ .name = "net", .vsock = false },
		{ .name = "vsock", .vsock = true },
	};
	bool use[2] = { strcmp(which, "vsock") != 0, strcmp(which, "net") != 0 };
	pthread_t th[2], bys;
	int i, l, ctl;
	bool acked;

	l = listen_on(BYST_PORT, 4);
	if (l < 0)
		return 1;
	pthread_create(&bys, NULL, serve_echo, (void *)(intptr_t)l);
	for (i = 0; i < 2; i++) {
		if (!use[i])
			continue;
		lk[i].port = i ? VSOCK_PORT : NET_PORT;
		lk[i].listener = connecting ? -1 : listen_on(lk[i].port, 4);
		lk[i].tx = malloc(BUF_MAX);
		lk[i].rx = malloc(BUF_MAX);
		if ((!connecting && lk[i].listener < 0) || !lk[i].tx || !lk[i].rx)
			return 1;
		lk[i].rng = seed * 2 + i;
		lk[i].frames = count;
		lk[i].ms = secs * 1000L;
		pthread_create(&th[i], NULL, fuzz_link, &lk[i]);
	}
	for (i = 0; i < 2; i++)
		if (use[i])
			pthread_join(th[i], NULL);
	ctl = connect_to(vnode, CTL_PORT, 60);
	for (i = 0; i < 2; i++) {
		char out[2048];
		int n, c;

		if (!use[i])
			continue;
		n = snprintf(out, sizeof(out),
			     "# linkfuzz %s: node %u %s node %u, seed %llu, %ld frames in %ld ms (%ld/s), %ld bytes, %ld connections, %ld frames back\n# linkfuzz %s cases:",
			     lk[i].name, fnode, connecting ? "connects to" :
			     "listens for", vnode, (unsigned long long)seed,
			     lk[i].frames, lk[i].ms,
			     lk[i].ms ? lk[i].frames * 1000 / lk[i].ms : 0,
			     lk[i].bytes, lk[i].conns, lk[i].rx_units, lk[i].name);
		for (c = 0; c < C_NR; c++)
			n += snprintf(out + n, sizeof(out) - n, " %s=%ld",
				      case_name[c], lk[i].cases[c]);
		n += snprintf(out + n, sizeof(out) - n, "\n%s", lk[i].verdicts);
		fputs(out, stdout);
		if (ctl >= 0)
			scif_send(ctl, out, n, SCIF_SEND_BLOCK);
	}
	fflush(stdout);
	if (ctl < 0) {
		printf("# could not report to node %u: %s\n", vnode,
		       strerror(errno));
		return 1;
	}
	scif_send(ctl, "END\n", 4, SCIF_SEND_BLOCK);
	/* The victim checks its streams and sends its verdicts. */
	acked = report(ctl, 120000, "GO");
	scif_close(ctl);
	atomic_store(&stop, true);
	pthread_join(bys, NULL);
	scif_close(l);
	for (i = 0; i < 2; i++) {
		if (!use[i])
			continue;
		drop(&lk[i]);
		if (lk[i].listener >= 0)
			scif_close(lk[i].listener);
	}
	return acked ? 0 : 1;
}

/* ---- the victim ---- */

static atomic_long rounds[2], bad_rounds[2];

struct stream_arg {
	int fd, idx;
};

static void *stream(void *arg)
{
	struct stream_arg *a = arg;
	char out[MSG], in[MSG];
	uint32_t tag = 0;
	int i;

	while (!atomic_load(&stop)) {
		tag++;
		for (i = 0; i < MSG; i++)
			out[i] = (char)(tag * 131 + i);
		if (scif_send(a->fd, out, MSG, SCIF_SEND_BLOCK) != MSG ||
		    recv_all(a->fd, in, MSG, 10000) || memcmp(in, out, MSG)) {
			atomic_fetch_add(&bad_rounds[a->idx], 1);
			printf("# echo %d failed at round %u\n", a->idx, tag);
			break;
		}
		atomic_fetch_add(&rounds[a->idx], 1);
	}
	return NULL;
}

static atomic_int vs_conns;

static void *vs_echo(void *arg)
{
	int fd = (intptr_t)arg;
	char buf[4096];
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
		if (send(fd, buf, n, MSG_NOSIGNAL) != n)
			break;
	close(fd);
	atomic_fetch_sub(&vs_conns, 1);
	return NULL;
}

/* Node 0's vsock listener, for the fuzzer's packets: echoes. */
static void *vs_serve(void *arg)
{
	int l = (intptr_t)arg, fd;
	pthread_t th;

	while (!atomic_load(&stop)) {
		struct pollfd p = { .fd = l, .events = POLLIN };

		if (poll(&p, 1, 200) <= 0)
			continue;
		fd = accept(l, NULL, NULL);
		if (fd < 0)
			continue;
		if (atomic_load(&vs_conns) >= 64) {
			close(fd);
			continue;
		}
		atomic_fetch_add(&vs_conns, 1);
		if (pthread_create(&th, NULL, vs_echo, (void *)(intptr_t)fd)) {
			close(fd);
			atomic_fetch_sub(&vs_conns, 1);
			continue;
		}
		pthread_detach(th);
	}
	close(l);
	return NULL;
}

static int vs_listen(void)
{
	struct sockaddr_vm a = { .svm_family = AF_VSOCK,
				 .svm_cid = VMADDR_CID_ANY,
				 .svm_port = VS_SERVE_PORT };
	int l = socket(AF_VSOCK, SOCK_STREAM, 0);

	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(l, 16)) {
		printf("# vsock listener: %s\n", strerror(errno));
		if (l >= 0)
			close(l);
		return -1;
	}
	return l;
}

static bool node_listed(uint16_t id)
{
	uint16_t nodes[16], self;
	int n = scif_get_nodeIDs(nodes, 16, &self), i;

	for (i = 0; i < n && i < 16; i++)
		if (nodes[i] == id)
			return true;
	return false;
}

/* The victim's verdicts, printed and kept for the fuzzer. */
static char said[2048];

static void say(bool ok, const char *name)
{
	size_t n = strlen(said);

	snprintf(said + n, sizeof(said) - n, "%s %s\n", ok ? "PASS" : "FAIL",
		 name);
	printf("%s %s\n", ok ? "PASS" : "FAIL", name);
}

/* The other side's lines, printed as they come until the line @end:
 * true if it came.
 */
static bool report(int ctl, int ms, const char *end)
{
	char buf[4096];
	int len = 0;

	for (;;) {
		if (recv_all(ctl, buf + len, 1, ms))
			return false;
		if (buf[len] != '\n') {
			if (len < (int)sizeof(buf) - 2)
				len++;
			continue;
		}
		buf[len] = '\0';
		if (!strcmp(buf, end))
			return true;
		printf("%s\n", buf);
		len = 0;
	}
}

static int victim_main(int secs, uint16_t fuzzer)
{
	struct stream_arg sa[2];
	pthread_t srv, vs = 0, st[2];
	struct scif_port_id peer;
	long r0[2], r1[2];
	uint16_t nodes[16], self = 0;
	int l, ctl, fd = -1, vl, i;
	bool got;

	scif_get_nodeIDs(nodes, 16, &self);
	roles(self, fuzzer);

	l = listen_on(LOOP_PORT, 4);
	ctl = listen_on(CTL_PORT, 4);
	if (l < 0 || ctl < 0)
		return 1;
	pthread_create(&srv, NULL, serve_echo, (void *)(intptr_t)l);
	vl = vs_listen();
	if (vl >= 0)
		pthread_create(&vs, NULL, vs_serve, (void *)(intptr_t)vl);
	sa[0].fd = connect_to(vnode, LOOP_PORT, 10);
	sa[1].fd = connect_to(fnode, BYST_PORT, 120);
	if (sa[0].fd < 0 || sa[1].fd < 0) {
		printf("# no loopback stream or no stream to node %u\n", fnode);
		say(false, "streams_started");
		return 1;
	}
	for (i = 0; i < 2; i++) {
		sa[i].idx = i;
		pthread_create(&st[i], NULL, stream, &sa[i]);
	}
	{
		struct scif_pollepd pe = { .epd = ctl, .events = SCIF_POLLIN };

		got = scif_poll(&pe, 1, secs * 1000L) == 1 &&
		      !scif_accept(ctl, &peer, &fd, 0) &&
		      report(fd, 30000, "END");
	}
	say(got, "fuzzer_reported");
	for (i = 0; i < 2; i++)
		r0[i] = atomic_load(&rounds[i]);
	printf("# node %u's streams during the fuzz: loopback %ld rounds, to node %u %ld\n",
	       vnode, r0[0], fnode, r0[1]);
	say(r0[0] > 0 && !atomic_load(&bad_rounds[0]), "loopback_stream_during_fuzz");
	say(r0[1] > 0 && !atomic_load(&bad_rounds[1]), "bystander_stream_during_fuzz");
	sleep(1);
	for (i = 0; i < 2; i++)
		r1[i] = atomic_load(&rounds[i]);
	say(r1[0] > r0[0] && !atomic_load(&bad_rounds[0]), "loopback_stream_after_fuzz");
	say(r1[1] > r0[1] && !atomic_load(&bad_rounds[1]), "bystander_stream_after_fuzz");
	say(node_listed(fnode), "fuzzer_node_still_online");
	atomic_store(&stop, true);
	for (i = 0; i < 2; i++) {
		pthread_join(st[i], NULL);
		scif_close(sa[i].fd);
	}
	pthread_join(srv, NULL);
	if (vl >= 0)
		pthread_join(vs, NULL);
	if (fd >= 0) {
		scif_send(fd, said, strlen(said), SCIF_SEND_BLOCK);
		scif_send(fd, "GO\n", 3, SCIF_SEND_BLOCK);
		scif_close(fd);
	}
	scif_close(ctl);
	scif_close(l);
	return got ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct scif_port_id peer;
	int fd, l, ok;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 5 && !strcmp(argv[1], "peer")) {
		uint16_t nodes[16], self = 0;

		scif_get_nodeIDs(nodes, 16, &self);
		roles(argc > 6 ? atoi(argv[6]) : 0, self);
		return peer_main(strtoull(argv[2], NULL, 0), atol(argv[3]),
				 atoi(argv[4]), argc > 5 ? argv[5] : "both");
	}
	if (argc >= 3 && !strcmp(argv[1], "victim"))
		return victim_main(atoi(argv[2]), argc > 3 ? atoi(argv[3]) : 1);
	if (argc >= 5 && !strcmp(argv[1], "notify")) {
		fd = connect_to(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
		if (fd >= 0)
			scif_close(fd);
		return fd < 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "await")) {
		struct scif_pollepd pe = { .events = SCIF_POLLIN };

		l = listen_on(atoi(argv[2]), 1);
		if (l < 0)
			return 1;
		pe.epd = l;
		ok = scif_poll(&pe, 1, atoi(argv[3]) * 1000L) == 1 &&
		     !scif_accept(l, &peer, &fd, 0);
		if (ok)
			scif_close(fd);
		scif_close(l);
		return !ok;
	}
	fprintf(stderr, "usage: %s peer SEED COUNT SECS [net|vsock|both [VICTIM]]\n"
		"       %s victim SECS [FUZZER]\n       %s notify NODE PORT SECS\n"
		"       %s await PORT SECS\n", argv[0], argv[0], argv[0],
		argv[0]);
	return 2;
}
