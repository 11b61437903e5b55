// SPDX-License-Identifier: GPL-2.0
/*
 * A hostile scif_rdma peer, for scif_rdma_test.sh.  Run as root on node 0
 * of a 2-node cluster while node 1 runs scif_rdma_test.ko hostile=1 (the
 * victim: a listen through rdma_cm on PEER_IP, port + 2, accepting one
 * connection at a time).  It speaks scif_rdma's CM and frames itself
 * (Documentation/scif/rdma.rst): from a privileged SCIF port it connects
 * to node 1's CM port (702), sends a CONNECT, takes the ACCEPT and the
 * victim's first SEND (its MR's address, rkey and length, the rkey of
 * an MR it deregistered and that of a valid MR of another PD), then
 * plays one case:
 *   trunc_hdr            half a frame header, then the close
 *   trunc_send           a SEND of 400 bytes cut after 100
 *   held_send_drained    a SEND of 400 bytes, 100 sent, then nothing:
 *                        the victim drains its QP while its receive
 *                        thread holds the receive; closed within 10 s
 *   send_len_over_limit  a SEND of 1 GiB + 1
 *   send_over_recv       a SEND of 4096 bytes into a 512-byte RECV
 *   unknown_type         a frame of type 9
 *   unknown_flag         a WRITE with flag 0x80
 *   write_bad_rkey       a WRITE with the key of no MR
 *   read_out_of_bounds   a READ past the MR's end
 *   write_dead_rkey      a WRITE with the deregistered MR's key
 *   write_other_pd_rkey  a WRITE with the key of a valid MR of another PD
 *   read_bad_woff        a READ into a window offset never registered
 *   write_woff_overflow  a WRITE from window offset 2^63
 *   unsolicited_ack      an ACK nobody asked for
 *   inline               4 KiB written inline (the bytes in the frame:
 *                        the victim finds them in its MR at IOFF), read
 *                        back inline (they come in the answer), then an
 *                        inline WRITE with a bad key: REM_ACCESS_ERR
 *   inline_over          an inline WRITE of 16 KiB + 1
 *   map_bad_key          a MAP_REQ for a bad key: a MAP_RESP without a
 *                        window (the connection stays)
 *   map_malformed        a MAP_REQ with an address
 *   map_unsolicited      a MAP_RESP nobody asked for
 *   map_direct           a MAP_REQ for the MR: its window (offset at or
 *                        above 2^62, the MR's bounds and both rights);
 *                        64 KiB written into it by the forge's own RMA
 *                        at DOFF (the victim finds them in its MR), read
 *                        back; past its end ENXIO; asked again: the
 *                        same window; the dead key's and the other
 *                        PD's: none
 *   read_never_answered  takes the victim's READ_REQ (inline: 4 KiB;
 *                        a MAP_REQ before it is answered without a
 *                        window), answers nothing, drops the connection
 *                        3 s later
 *   direct_unknown_rejected  DIRECTs (QPs connected without the CM)
 *                        naming QPs 2 to 5, which wait for no such
 *                        peer: REJECT; with private data of 0 and 5
 *                        bytes: REJECT; of 197: closed, no answer (no
 *                        CM connection of its own)
 *   honest               a WRITE of 64 KiB, a READ of it back, a SEND
 * The answers the victim owes (REM_ACCESS_ERR 10, REM_INV_REQ_ERR 9) are
 * checked, and that it closes the connection within 10 s after every
 * forged frame; the last case compares the bytes read back.  "PASS
 * name" or "FAIL name" a case; the victim's side is checked by its
 * module.
 *
 *   scif_rdma_forge NODE MY_IP PEER_IP PORT
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "scif.h"

#define CM_PORT		702
#define CM_MAGIC	0x53524443
#define HOFF		4096
#define HLEN		65536
#define DOFF		(256 * 1024)
#define IOFF		(512 * 1024)
#define F_INLINE	4
#define INLINE_MAX	16384

enum { T_SEND = 1, T_WRITE, T_READ_REQ, T_READ_RESP, T_ACK, T_MAP_REQ,
       T_MAP_RESP };
#define RIGHTS		6	/* IB_ACCESS_REMOTE_WRITE | _READ */
enum { ST_OK = 0, ST_INV_REQ = 9, ST_ACCESS = 10 };

struct cm_msg {
	uint32_t magic;
	uint8_t type, pdata_len, ord, ird;
	uint32_t saddr, daddr;
	uint16_t sport, dport;
	uint8_t pdata[196];
};

struct hdr {
	uint8_t type, flags, status, rsvd;
	uint32_t imm, len, rkey;
	uint64_t addr, woff;
};

struct hinfo {
	uint64_t addr;
	uint32_t rkey, len, dead_rkey, other_rkey;
};

struct peer {
	scif_epd_t epd;
	struct hinfo info;
	uint8_t *buf;		/* the window: 2 x HLEN */
	off_t win;
};

static int node, port, next_port = 1000;
static uint32_t my_ip, peer_ip;

static int xfer(scif_epd_t epd, void *p, int len, int tx)
{
	int n = tx ? scif_send(epd, p, len, SCIF_SEND_BLOCK) :
		     scif_recv(epd, p, len, SCIF_RECV_BLOCK);

	return n == len ? 0 : -1;
}

/* A CM message of @type (1 CONNECT, 4 DIRECT), no private data. */
static void cm_fill(struct cm_msg *m, uint8_t type)
{
	memset(m, 0, sizeof(*m));
	m->magic = htole32(CM_MAGIC);
	m->type = type;
	m->ord = 1;
	m->ird = 1;
}

/* A privileged endpoint connected to the victim's CM, or -1. */
static scif_epd_t dial(void)
{
	struct scif_port_id to = { .node = node, .port = CM_PORT };
	scif_epd_t epd = scif_open();

	if (epd < 0)
		return -1;
	if (next_port < 700)
		next_port = 1000;
	while (next_port > 600 && scif_bind(epd, next_port--) < 0)
		;
	if (scif_connect(epd, &to) < 0) {
		scif_close(epd);
		return -1;
	}
	return epd;
}

/* CONNECT, ACCEPT and the victim's info; retried for 60 s. */
static int connect_case(struct peer *p, int i)
{
	struct cm_msg m;
	struct hdr h;
	int tries;

	for (tries = 0; tries < 120; tries++, usleep(500000)) {
		p->epd = dial();
		if (p->epd < 0)
			continue;
		cm_fill(&m, 1);
		m.saddr = my_ip;
		m.daddr = peer_ip;
		m.sport = htons(41000 + i);
		m.dport = htons(port + 2);
		if (!xfer(p->epd, &m, sizeof(m), 1) &&
		    !xfer(p->epd, &m, sizeof(m), 0) && m.type == 2)
			break;
		scif_close(p->epd);
		p->epd = -1;
	}
	if (p->epd < 0)
		return -1;
	if (xfer(p->epd, &h, sizeof(h), 0) || h.type != T_SEND ||
	    le32toh(h.len) != sizeof(p->info) ||
	    xfer(p->epd, &p->info, sizeof(p->info), 0))
		return -1;
	p->win = scif_register(p->epd, p->buf, 2 * HLEN, 0,
			       SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	return p->win < 0 ? -1 : 0;
}

/* True if the victim closes the connection within 10 s. */
static int closed_within(scif_epd_t epd)
{
	struct scif_pollepd pe = { .epd = epd, .events = SCIF_POLLIN };
	char c[64];
	int i, n;

	for (i = 0; i < 100; i++) {
		if (scif_poll(&pe, 1, 100) <= 0)
			continue;
		n = scif_recv(epd, c, sizeof(c), 0);
		if (n < 0)
			return errno == ECONNRESET || errno == ENOTCONN;
	}
	return 0;
}

static int frame(struct peer *p, int type, uint32_t len, uint32_t rkey,
		 uint64_t addr, uint64_t woff)
{
	struct hdr h = { .type = type, .len = htole32(len),
			 .rkey = htole32(rkey), .addr = htole64(addr),
			 .woff = htole64(woff) };

	return xfer(p->epd, &h, sizeof(h), 1);
}

/* The answer to our WRITE or READ_REQ has @status. */
static int answer_is(struct peer *p, int type, int status)
{
	struct hdr h;

	if (xfer(p->epd, &h, sizeof(h), 0))
		return 0;
	if (h.type != type || h.status != status)
		printf("# answer: type %d status %d\n", h.type, h.status);
	return h.type == type && h.status == status;
}

/* A forged RMA frame: the victim answers @status, then closes. */
static int rma_refused(struct peer *p, int type, uint32_t len, uint32_t rkey,
		       uint64_t addr, uint64_t woff, int status)
{
	return !frame(p, type, len, rkey, addr, woff) &&
	       answer_is(p, type == T_WRITE ? T_ACK : T_READ_RESP, status) &&
	       closed_within(p->epd);
}

static int c_trunc_hdr(struct peer *p)
{
	struct hdr h = { .type = T_SEND, .len = htole32(8) };

	return !xfer(p->epd, &h, 10, 1);	/* the close follows */
}

static int c_trunc_send(struct peer *p)
{
	return !frame(p, T_SEND, 400, 0, 0, 0) &&
	       !xfer(p->epd, p->buf, 100, 1);
}

static int c_held_send(struct peer *p)
{
	return !frame(p, T_SEND, 400, 0, 0, 0) &&
	       !xfer(p->epd, p->buf, 100, 1) && closed_within(p->epd);
}

static int c_send_over(struct peer *p)
{
	return !frame(p, T_SEND, (1U << 30) + 1, 0, 0, 0) &&
	       closed_within(p->epd);
}

static int c_send_over_recv(struct peer *p)
{
	return !frame(p, T_SEND, 4096, 0, 0, 0) &&
	       !xfer(p->epd, p->buf, 4096, 1) && closed_within(p->epd);
}

static int c_type(struct peer *p)
{
	return !frame(p, 9, 0, 0, 0, 0) && closed_within(p->epd);
}

static int c_flag(struct peer *p)
{
	struct hdr h = { .type = T_WRITE, .flags = 0x80, .len = htole32(64),
			 .rkey = htole32(p->info.rkey),
			 .addr = htole64(p->info.addr),
			 .woff = htole64(p->win) };

	return !xfer(p->epd, &h, sizeof(h), 1) && closed_within(p->epd);
}

static int c_bad_rkey(struct peer *p)
{
	return rma_refused(p, T_WRITE, 4096, p->info.rkey ^ 0x7f00,
			   p->info.addr, p->win, ST_ACCESS);
}

static int c_oob(struct peer *p)
{
	return rma_refused(p, T_READ_REQ, 4096, p->info.rkey,
			   p->info.addr + p->info.len - 100, p->win, ST_ACCESS);
}

static int c_dead(struct peer *p)
{
	return p->info.dead_rkey &&
	       rma_refused(p, T_WRITE, 4096, p->info.dead_rkey, p->info.addr,
			   p->win, ST_ACCESS);
}

static int c_other_pd(struct peer *p)
{
	return p->info.other_rkey &&
	       rma_refused(p, T_WRITE, 4096, p->info.other_rkey, p->info.addr,
			   p->win, ST_ACCESS);
}

static int c_bad_woff(struct peer *p)
{
	return rma_refused(p, T_READ_REQ, 4096, p->info.rkey, p->info.addr,
			   p->win + (64 << 20), ST_INV_REQ);
}

static int c_woff_overflow(struct peer *p)
{
	return rma_refused(p, T_WRITE, 4096, p->info.rkey, p->info.addr,
			   1ULL << 63, ST_INV_REQ);
}

static int c_ack(struct peer *p)
{
	return !frame(p, T_ACK, 0, 0, 0, 0) && closed_within(p->epd);
}

/* A MAP_REQ for @rkey; the answer in @a.  0, or -1. */
static int map_ask(struct peer *p, uint32_t rkey, struct hdr *a)
{
	return frame(p, T_MAP_REQ, 0, rkey, 0, 0) ||
	       xfer(p->epd, a, sizeof(*a), 0) || a->type != T_MAP_RESP ||
	       le32toh(a->rkey) != rkey ? -1 : 0;
}

/* An inline frame of @type for @len bytes at IOFF of the MR. */
static struct hdr inline_hdr(struct peer *p, int type, uint32_t len,
			     uint32_t rkey)
{
	struct hdr h = { .type = type, .flags = F_INLINE,
			 .len = htole32(len), .rkey = htole32(rkey),
			 .addr = htole64(p->info.addr + IOFF) };

	return h;
}

static int c_inline(struct peer *p)
{
	struct hdr h = inline_hdr(p, T_WRITE, 4096, p->info.rkey), a;
	int i;

	for (i = 0; i < 4096; i++)
		p->buf[i] = (uint8_t)(i * 7 + 55);
	if (xfer(p->epd, &h, sizeof(h), 1) || xfer(p->epd, p->buf, 4096, 1) ||
	    !answer_is(p, T_ACK, ST_OK))
		return 0;
	h = inline_hdr(p, T_READ_REQ, 4096, p->info.rkey);
	if (xfer(p->epd, &h, sizeof(h), 1) || xfer(p->epd, &a, sizeof(a), 0) ||
	    a.type != T_READ_RESP || a.status != ST_OK || a.flags != F_INLINE ||
	    le32toh(a.len) != 4096 || xfer(p->epd, p->buf + HLEN, 4096, 0) ||
	    memcmp(p->buf, p->buf + HLEN, 4096)) {
		printf("# inline READ: type %d status %d flags %d len %u\n",
		       a.type, a.status, a.flags, le32toh(a.len));
		return 0;
	}
	/* A bad key: the bytes are dropped, then the answer, the close. */
	h = inline_hdr(p, T_WRITE, 4096, p->info.rkey ^ 0x7f00);
	return !xfer(p->epd, &h, sizeof(h), 1) &&
	       !xfer(p->epd, p->buf, 4096, 1) &&
	       answer_is(p, T_ACK, ST_ACCESS) && closed_within(p->epd);
}

static int c_inline_over(struct peer *p)
{
	struct hdr h = inline_hdr(p, T_WRITE, INLINE_MAX + 1, p->info.rkey);

	return !xfer(p->epd, &h, sizeof(h), 1) && closed_within(p->epd);
}

static int c_map_bad_key(struct peer *p)
{
	struct hdr a;

	return !map_ask(p, p->info.rkey ^ 0x7f00, &a) &&
	       a.status == ST_ACCESS && !a.woff && !a.len;
}

static int c_map_malformed(struct peer *p)
{
	return !frame(p, T_MAP_REQ, 0, p->info.rkey, 1, 0) &&
	       closed_within(p->epd);
}

static int c_map_unsolicited(struct peer *p)
{
	return !frame(p, T_MAP_RESP, 0, p->info.rkey, 0, 0) &&
	       closed_within(p->epd);
}

/* The window's description is the MR's; 0 if not. */
static int map_window_ok(struct peer *p, const struct hdr *a)
{
	uint64_t woff = le64toh(a->woff);

	if (a->status != ST_OK || le32toh(a->len) != p->info.len ||
	    le64toh(a->addr) != p->info.addr || ntohl(a->imm) != RIGHTS ||
	    woff < (1ULL << 62) || woff % 4096) {
		printf("# map: status %d len %u woff %llx imm %x\n", a->status,
		       le32toh(a->len), (unsigned long long)woff,
		       ntohl(a->imm));
		return 0;
	}
	return 1;
}

static int c_map_direct(struct peer *p)
{
	struct hdr a, b;
	uint64_t woff;
	int i;

	if (map_ask(p, p->info.rkey, &a) || !map_window_ok(p, &a))
		return 0;
	woff = le64toh(a.woff);
	for (i = 0; i < HLEN; i++)
		p->buf[i] = (uint8_t)(i * 7 + 91);
	memset(p->buf + HLEN, 0, HLEN);
	if (scif_vwriteto(p->epd, p->buf, HLEN, woff + DOFF, SCIF_RMA_SYNC) ||
	    scif_vreadfrom(p->epd, p->buf + HLEN, HLEN, woff + DOFF,
			   SCIF_RMA_SYNC) ||
	    memcmp(p->buf, p->buf + HLEN, HLEN)) {
		printf("# map: RMA into the window: %s\n", strerror(errno));
		return 0;
	}
	if (scif_vwriteto(p->epd, p->buf, 4096,
			  woff + p->info.len - 100, SCIF_RMA_SYNC) != -1 ||
	    errno != ENXIO) {
		printf("# map: RMA past the window: %s\n", strerror(errno));
		return 0;
	}
	return !map_ask(p, p->info.rkey, &b) && b.woff == a.woff &&
	       !map_ask(p, p->info.dead_rkey, &b) && b.status == ST_ACCESS &&
	       !map_ask(p, p->info.other_rkey, &b) && b.status == ST_ACCESS;
}

static int c_noanswer(struct peer *p)
{
	struct hdr h, a = { .type = T_MAP_RESP, .status = ST_ACCESS };

	if (xfer(p->epd, &h, sizeof(h), 0))
		return 0;
	if (h.type == T_MAP_REQ) {
		a.rkey = h.rkey;
		if (xfer(p->epd, &a, sizeof(a), 1) ||
		    xfer(p->epd, &h, sizeof(h), 0))
			return 0;
	}
	if (h.type != T_READ_REQ)
		return 0;
	sleep(3);
	return 1;	/* the close follows; the victim checks its READ */
}

static int c_honest(struct peer *p)
{
	uint64_t a = p->info.addr + HOFF;
	int i;

	for (i = 0; i < HLEN; i++)
		p->buf[i] = (uint8_t)(i * 7 + 77);
	memset(p->buf + HLEN, 0, HLEN);
	if (frame(p, T_WRITE, HLEN, p->info.rkey, a, p->win) ||
	    !answer_is(p, T_ACK, ST_OK) ||
	    frame(p, T_READ_REQ, HLEN, p->info.rkey, a, p->win + HLEN) ||
	    !answer_is(p, T_READ_RESP, ST_OK) ||
	    memcmp(p->buf, p->buf + HLEN, HLEN))
		return 0;
	return !frame(p, T_SEND, 8, 0, 0, 0) && !xfer(p->epd, p->buf, 8, 1);
}

/*
 * A DIRECT (a QP connected without the CM) with @len bytes of private
 * data naming the victim's QP @dst: the answer's type, or -1 if the
 * endpoint was closed without one.
 */
static int direct_answer(uint8_t len, uint32_t dst)
{
	uint32_t qpns[2] = { htole32(1234), htole32(dst) };
	scif_epd_t epd = dial();
	struct cm_msg m;
	int type = -1;

	if (epd < 0)
		return -2;
	cm_fill(&m, 4);
	m.pdata_len = len;
	memcpy(m.pdata, qpns, sizeof(qpns));
	if (!xfer(epd, &m, sizeof(m), 1) && !xfer(epd, &m, sizeof(m), 0))
		type = m.type;
	scif_close(epd);
	return type;
}

/*
 * DIRECTs that no QP of the victim waits for (its QPs were connected by
 * the CM, or do not exist): REJECT; private data of the wrong length:
 * REJECT; longer than a message holds: closed without an answer.
 */
static int c_direct(struct peer *p)
{
	int ok = 1, q;

	(void)p;
	for (q = 2; q < 6; q++)
		ok &= direct_answer(8, q) == 3;
	ok &= direct_answer(0, 2) == 3;
	ok &= direct_answer(5, 2) == 3;
	ok &= direct_answer(197, 2) == -1;
	return ok;
}

/* @nocm: the case makes no CM connection of its own. */
static const struct {
	const char *name;
	int (*run)(struct peer *p);
	int nocm;
} cases[] = {
	{ "trunc_hdr", c_trunc_hdr },
	{ "trunc_send", c_trunc_send },
	{ "held_send_drained_closed", c_held_send },
	{ "send_len_over_limit_closed", c_send_over },
	{ "send_over_recv_closed", c_send_over_recv },
	{ "unknown_type_closed", c_type },
	{ "unknown_flag_closed", c_flag },
	{ "write_bad_rkey_rem_access_err", c_bad_rkey },
	{ "read_out_of_bounds_rem_access_err", c_oob },
	{ "write_dead_rkey_rem_access_err", c_dead },
	{ "write_other_pd_rkey_rem_access_err", c_other_pd },
	{ "read_bad_woff_rem_inv_req_err", c_bad_woff },
	{ "write_woff_overflow_rem_inv_req_err", c_woff_overflow },
	{ "unsolicited_ack_closed", c_ack },
	{ "inline_write_read_bad_key_rem_access_err", c_inline },
	{ "inline_over_limit_closed", c_inline_over },
	{ "map_bad_key_no_window", c_map_bad_key },
	{ "map_malformed_closed", c_map_malformed },
	{ "map_unsolicited_closed", c_map_unsolicited },
	{ "map_direct_window_is_the_mr", c_map_direct },
	{ "read_never_answered", c_noanswer },
	{ "direct_unknown_rejected", c_direct, 1 },
	{ "honest_write_read_after", c_honest },
};

int main(int argc, char **argv)
{
	struct peer p = { .epd = -1 };
	int failed = 0, ok;
	size_t i;

	if (argc != 5 || inet_pton(AF_INET, argv[2], &my_ip) != 1 ||
	    inet_pton(AF_INET, argv[3], &peer_ip) != 1) {
		fprintf(stderr, "usage: %s NODE MY_IP PEER_IP PORT\n", argv[0]);
		return 2;
	}
	node = atoi(argv[1]);
	port = atoi(argv[4]);
	p.buf = mmap(NULL, 2 * HLEN, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p.buf == MAP_FAILED)
		return 1;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ok = (cases[i].nocm || !connect_case(&p, i)) &&
		     cases[i].run(&p);
		printf("%s %s\n", ok ? "PASS" : "FAIL", cases[i].name);
		fflush(stdout);
		failed += !ok;
		if (p.epd >= 0)
			scif_close(p.epd);
		p.epd = -1;
	}
	return failed ? 1 : 0;
}
