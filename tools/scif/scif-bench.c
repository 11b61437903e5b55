// SPDX-License-Identifier: GPL-2.0
/*
 * scif-bench: SCIF messaging figures, side by side with the transports a
 * user would otherwise reach for (TCP, AF_UNIX) and with memcpy.
 *
 *   scif-bench serve [-p PORT]
 *	serve every transport at once: SCIF port PORT, TCP port PORT on
 *	every address, AF_UNIX socket /tmp/scif-bench.<PORT>, and AF_VSOCK
 *	port PORT on any CID where the kernel has vsock (scif_vsock.ko
 *	loaded, for instance)
 *   scif-bench [-t TRANSPORT] [-n NODE] [-H HOST] [-p PORT] [-f FORMAT]
 *              [-i ITERS] [-s MIN[:MAX]] [-d SECONDS] [-P STREAMS] [-b]
 *              [-I IDLE] [-q] MODE...
 *   scif-bench --help | --version
 *	TRANSPORT scif (default; NODE, default this node), tcp (HOST, an
 *	IPv4 or IPv6 address or a name, default 127.0.0.1), unix or vsock
 *	(HOST, the server's CID; over scif_vsock, node N is CID N + 3);
 *	FORMAT table (default), csv or json;
 *	-q: tiny sizes and counts (a smoke run); -s: the message sizes of
 *	lat and bw, from MIN to MAX (suffixes K, M, G: KiB, MiB, GiB);
 *	-d: run each size of lat and bw for SECONDS instead of a count;
 *	-P: bw over STREAMS connections at once; -b: bw both ways at once
 *	(each stream has a second connection on which the server sends).
 *	Every option has a long form (scif-bench --help).  MODEs:
 *	  lat      ping-pong round trip of 8 B, 64 B, 1 KiB messages:
 *	           min, median and p99 over ITERS round trips after warm-up
 *	  bw       streaming send/recv, 64 B .. 1 MiB messages: MB/s
 *	  connect  connections set up (connect + accept) per second
 *	  memcpy   in-process memcpy bandwidth, 4 KiB .. 64 MiB (no peer)
 *	  copy64   the same with a plain copy by 8-byte moves, which is how
 *	           the kernel copies on CPUs without fast string moves
 *	  rma      RMA bandwidth (SCIF only), 4 KiB .. 64 MiB into or out of
 *	           a window the server registers: writeto, readfrom,
 *	           vwriteto, vreadfrom, and the v* calls with
 *	           SCIF_RMA_USECACHE (mode vwriteto-c, vreadfrom-c); via cpu
 *	           (SCIF_RMA_USECPU), eng (copy engine, each RMA
 *	           SCIF_RMA_SYNC) or eng-a (copy engine, asynchronous RMAs
 *	           and a fence, mark and wait, at the end)
 *	  reg      what one scif_register of 1 .. 64 MiB costs, in 4 KiB
 *	           pages (via 4k) and in 2 MiB pages (via hugetlb if the
 *	           pool has them, else thp): min, median and p99 in
 *	           microseconds
 *	  raw-lat  8-byte ping-pong through a shared ivshmem device used raw
 *	           (cluster.sh -R; -D names its sysfs resource file), no SCIF
 *	           on the way: the link's own round trip
 *	  raw-bw   memcpy into (raw-wr) and out of (raw-rd) that device
 *	  idle     what idle connections cost (SCIF only): the lat round
 *	           trips ("lat-base" rows), then -I N connections (default
 *	           10000) to the server, held open and unused, then the lat
 *	           round trips again ("lat-idle" rows) with them all open;
 *	           an "idle" row gives their set-up rate and an "idle-mem"
 *	           row the memory each took on this node (KiB, from
 *	           MemAvailable and the per-CPU free lists): the
 *	           server's side costs the same
 *	  mmap-lat 8-byte ping-pong through a SCIF window of the server
 *	           mapped into this process (scif_mmap): the server spins on
 *	           its own registered memory, this side on the mapping;
 *	           "lat" rows via "mmap", to set against raw-lat
 *	  stop     make the server exit
 *
 * Every figure is one row: mode, transport, size, count, min/median/p99
 * (microseconds, round trips) or MB/s (10^6 bytes per second); lat and
 * bw rows add the context switches and interrupts this system (all of
 * it, the server too when it runs here) counted meanwhile, from
 * /proc/stat, which tell a run that slept or handed its CPU over from
 * one that did not (other rows: empty in CSV, null in JSON).  Progress
 * goes to stderr when both it and stdout are a terminal.  The JSON format
 * is one object: "tool", "version", "meta" (host, kernel, node, options,
 * start time), "units" (of each field of a row) and "rows".
 */
#include <errno.h>
#include <getopt.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <linux/vm_sockets.h>
#include <sys/utsname.h>

#include "json.h"
#include "scif.h"

#define DEFAULT_PORT	2300
#define MIB		(1024 * 1024)

enum transport { T_SCIF, T_TCP, T_UNIX, T_VSOCK, T_NONE, T_RAW, T_MMAP };
static const char *const transport_names[] = {
	"scif", "tcp", "unix", "vsock", "-", "raw", "mmap"
};

/* What a client asks of the server on a new connection. */
enum request {
	REQ_PINGPONG = 1, REQ_STREAM, REQ_CLOSE, REQ_STOP, REQ_RAW_PONG,
	REQ_MMAP_PONG, REQ_WINDOW, REQ_SOURCE, REQ_HOLD,
};

/* The most idle connections one REQ_HOLD may ask the server to keep. */
#define HOLD_MAX	100000

#ifndef SCIF_TOOLS_VERSION
#define SCIF_TOOLS_VERSION "unknown"
#endif

/*
 * The raw link: an ivshmem-plain device that every node of the cluster
 * shares (cluster.sh -R), mapped from sysfs.  Ping-pong uses two cache
 * lines at its start, copies the rest.
 */
#define RAW_DEFAULT	"/sys/bus/pci/devices/0000:00:10.0/resource2"
#define RAW_PING	0	/* the client writes here */
#define RAW_PONG	64	/* the server answers here */
#define RAW_DATA	4096	/* copies start here */
/* Long enough for a guest starved of CPU by its host (4 TCG guests on 2 cores). */
#define RAW_TIMEOUT_S	30

static const char *raw_path = RAW_DEFAULT;

struct req_hdr {
	uint32_t kind;
	uint32_t size;		/* message size */
	uint64_t count;		/* messages */
};

/* --- a connection over any transport ------------------------------------ */

struct conn {
	enum transport t;
	int fd;
};

static int conn_send(struct conn *c, const void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		if (c->t == T_SCIF)
			n = scif_send(c->fd, (char *)buf + done, len - done,
				      SCIF_SEND_BLOCK);
		else
			n = send(c->fd, (const char *)buf + done, len - done,
				 MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += n;
	}
	return 0;
}

static int conn_recv(struct conn *c, void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		if (c->t == T_SCIF)
			n = scif_recv(c->fd, (char *)buf + done, len - done,
				      SCIF_RECV_BLOCK);
		else
			n = recv(c->fd, (char *)buf + done, len - done, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = ECONNRESET;
			return -1;
		}
		done += n;
	}
	return 0;
}

static void conn_close(struct conn *c)
{
	/* scif_close(): libscif's data path lets the endpoint go at once. */
	if (c->fd >= 0 && c->t == T_SCIF)
		scif_close(c->fd);
	else if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

static void unix_path(struct sockaddr_un *sa, int port)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path, sizeof(sa->sun_path), "/tmp/scif-bench.%d", port);
}

struct target {
	enum transport t;
	int node;		/* SCIF; -1: this node */
	const char *host;	/* TCP; vsock: the CID */
	int port;
	struct sockaddr_storage addr;	/* TCP: host and port, resolved */
	socklen_t addrlen;
};

static void tcp_unresolved(const struct target *tg, const char *why)
{
	fprintf(stderr, "scif-bench: cannot resolve host \"%s\": %s\n",
		tg->host, why);
	exit(2);
}

#ifdef SCIF_TOOLS_STATIC
/*
 * The TCP server's address, once, before any run.  Linked statically (as
 * in the test guests), with no resolver: a numeric IPv4 or IPv6 address,
 * or localhost.  Exits with a message naming the host otherwise.
 */
static void tcp_resolve(struct target *tg)
{
	struct sockaddr_in6 *sa6 = (struct sockaddr_in6 *)&tg->addr;
	struct sockaddr_in *sa4 = (struct sockaddr_in *)&tg->addr;
	const char *host = strcmp(tg->host, "localhost") ? tg->host :
			   "127.0.0.1";

	memset(&tg->addr, 0, sizeof(tg->addr));
	if (inet_pton(AF_INET, host, &sa4->sin_addr) == 1) {
		sa4->sin_family = AF_INET;
		sa4->sin_port = htons(tg->port);
		tg->addrlen = sizeof(*sa4);
	} else if (inet_pton(AF_INET6, host, &sa6->sin6_addr) == 1) {
		sa6->sin6_family = AF_INET6;
		sa6->sin6_port = htons(tg->port);
		tg->addrlen = sizeof(*sa6);
	} else {
		tcp_unresolved(tg, "this static build takes addresses and localhost only");
	}
}
#else
/*
 * The TCP server's address, once, before any run: an IPv4 or IPv6
 * address or a name the resolver knows.  Exits with a message naming the
 * host if it cannot be resolved.
 */
static void tcp_resolve(struct target *tg)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *ai;
	char port[8];
	int rc;

	snprintf(port, sizeof(port), "%d", tg->port);
	rc = getaddrinfo(tg->host, port, &hints, &ai);
	if (rc)
		tcp_unresolved(tg, rc == EAI_SYSTEM ? strerror(errno) :
			       gai_strerror(rc));
	memcpy(&tg->addr, ai->ai_addr, ai->ai_addrlen);
	tg->addrlen = ai->ai_addrlen;
	freeaddrinfo(ai);
}
#endif

/* TCP to the address tcp_resolve() found. */
static int tcp_connect(const struct target *tg)
{
	const struct sockaddr *sa = (const struct sockaddr *)&tg->addr;
	int fd, one = 1;

	fd = socket(sa->sa_family, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, sa, tg->addrlen)) {
		close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* AF_VSOCK to the CID that tg->host gives in decimal. */
static int vsock_connect(const struct target *tg)
{
	struct sockaddr_vm sa = { .svm_family = AF_VSOCK,
				  .svm_port = tg->port };
	unsigned long cid;
	char *end;
	int fd;

	errno = 0;
	cid = strtoul(tg->host, &end, 10);
	if (errno || end == tg->host || *end || cid > UINT32_MAX) {
		errno = EINVAL;
		return -1;
	}
	sa.svm_cid = cid;
	fd = socket(AF_VSOCK, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* After a failed scif_open() or node query: say why, if it is the module. */
static void scif_hint(void)
{
	static bool said;
	int err = errno;

	if (!said && (err == ENOENT || err == ENXIO || err == ENODEV)) {
		fprintf(stderr, "scif-bench: /dev/scif: %s: is scif.ko loaded? (modprobe scif, or insmod scif.ko)\n",
			strerror(err));
		said = true;
	} else if (!said && (err == EACCES || err == EPERM)) {
		fprintf(stderr, "scif-bench: /dev/scif: %s: it is for root and group scif (usermod -aG scif USER, then log in again)\n",
			strerror(err));
		said = true;
	}
	errno = err;
}

static int conn_open(struct conn *c, const struct target *tg)
{
	struct scif_port_id dst;
	struct sockaddr_un sa;
	uint16_t self;

	c->t = tg->t;
	c->fd = -1;
	switch (tg->t) {
	case T_SCIF:
		if (tg->node < 0) {
			if (scif_get_nodeIDs(NULL, 0, &self) < 0) {
				scif_hint();
				return -1;
			}
			dst.node = self;
		} else {
			dst.node = tg->node;
		}
		dst.port = tg->port;
		c->fd = scif_open();
		if (c->fd < 0) {
			scif_hint();
			return -1;
		}
		if (scif_connect(c->fd, &dst) < 0) {
			conn_close(c);
			return -1;
		}
		return 0;
	case T_TCP:
		c->fd = tcp_connect(tg);
		return c->fd < 0 ? -1 : 0;
	case T_VSOCK:
		c->fd = vsock_connect(tg);
		return c->fd < 0 ? -1 : 0;
	case T_UNIX:
		unix_path(&sa, tg->port);
		c->fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (c->fd < 0)
			return -1;
		if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa))) {
			conn_close(c);
			return -1;
		}
		return 0;
	default:
		errno = EINVAL;
		return -1;
	}
}

/* --- the raw link ---------------------------------------------------------- */

struct raw_map {
	volatile char *va;
	size_t size;
};

/* Map the raw link, write-combined where sysfs offers it: 0 or -1. */
static int raw_open(struct raw_map *m)
{
	char wc[256];
	struct stat st;
	int fd;

	snprintf(wc, sizeof(wc), "%s_wc", raw_path);
	fd = open(wc, O_RDWR);
	if (fd < 0)
		fd = open(raw_path, O_RDWR);
	if (fd < 0 || fstat(fd, &st) || st.st_size <= RAW_DATA) {
		fprintf(stderr, "scif-bench: raw link %s: %s\n", raw_path,
			fd < 0 ? strerror(errno) : "too small");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	m->size = st.st_size;
	m->va = mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m->va == MAP_FAILED) {
		perror("scif-bench: mmap of the raw link");
		return -1;
	}
	return 0;
}

static void raw_close(struct raw_map *m)
{
	munmap((void *)m->va, m->size);
}

static uint64_t raw_load(struct raw_map *m, size_t off)
{
	return __atomic_load_n((volatile uint64_t *)(m->va + off), __ATOMIC_ACQUIRE);
}

static void raw_store(struct raw_map *m, size_t off, uint64_t v)
{
	__atomic_store_n((volatile uint64_t *)(m->va + off), v, __ATOMIC_RELEASE);
}

/* Spin until the word at @off is @v: 0, or -1 after RAW_TIMEOUT_S. */
static int raw_wait(struct raw_map *m, size_t off, uint64_t v)
{
	time_t end = time(NULL) + RAW_TIMEOUT_S;
	unsigned long spins = 0;

	while (raw_load(m, off) != v) {
		if (!(++spins & 0xfffff) && time(NULL) > end) {
			errno = ETIMEDOUT;
			return -1;
		}
	}
	return 0;
}

/* Server side of raw ping-pong: answer @count pings from @base + 1 on. */
static int raw_pong(struct conn *c, uint64_t base, uint64_t count)
{
	struct raw_map m;
	uint64_t i, ok;

	ok = !raw_open(&m);
	if (conn_send(c, &ok, sizeof(ok)) || !ok) {
		if (ok)
			raw_close(&m);
		return -1;
	}
	for (i = 1; i <= count; i++) {
		if (raw_wait(&m, RAW_PING, base + i))
			break;
		raw_store(&m, RAW_PONG, base + i);
	}
	raw_close(&m);
	return i > count ? 0 : -1;
}

/*
 * Server side of mmap ping-pong: register a page of our memory as window
 * 0 of the connection, tell the client, then answer @count pings from
 * @base + 1 on in that page, which the client has mapped.  The page is
 * laid out as the raw link's first page (RAW_PING, RAW_PONG).
 */
static int mmap_pong(struct conn *c, uint64_t base, uint64_t count)
{
	struct raw_map m = { .size = RAW_DATA };
	uint64_t i = 0, ok;
	void *page;

	page = mmap(NULL, RAW_DATA, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ok = c->t == T_SCIF && page != MAP_FAILED &&
	     scif_register(c->fd, page, RAW_DATA, 0,
			   SCIF_PROT_READ | SCIF_PROT_WRITE, SCIF_MAP_FIXED) == 0;
	if (conn_send(c, &ok, sizeof(ok)) || !ok)
		goto out;
	m.va = page;
	for (i = 1; i <= count; i++) {
		if (raw_wait(&m, RAW_PING, base + i))
			break;
		raw_store(&m, RAW_PONG, base + i);
	}
	/*
	 * Unregistering revokes the client's mapping (mmap.rst), and the
	 * client may not have loaded the last answer yet: keep the window
	 * until the client says it has unmapped it.
	 */
	if (i > count && conn_recv(c, &ok, sizeof(ok)))
		i = 0;
	scif_unregister(c->fd, 0, RAW_DATA);
out:
	if (page != MAP_FAILED)
		munmap(page, RAW_DATA);
	return ok && i > count ? 0 : -1;
}

/* --- the server ----------------------------------------------------------- */

/*
 * REQ_WINDOW: register @size bytes at offset 0 for the client's RMAs,
 * answer with the offset (or -errno), keep it until the next request.
 */
static int serve_window(struct conn *c, uint64_t size)
{
	int rw = SCIF_PROT_READ | SCIF_PROT_WRITE;
	int64_t off = -EINVAL;
	void *mem = MAP_FAILED;

	if (c->t == T_SCIF && size && size <= 64 * MIB && !(size % 4096)) {
		mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem != MAP_FAILED) {
			memset(mem, 0x42, size);
			off = scif_register(c->fd, mem, size, 0, rw,
					    SCIF_MAP_FIXED);
			if (off < 0)
				off = -errno;
		} else {
			off = -ENOMEM;
		}
	}
	if (conn_send(c, &off, sizeof(off))) {
		if (mem != MAP_FAILED)
			munmap(mem, size);
		return -1;
	}
	/*
	 * The window stays until the client's next request, REQ_CLOSE:
	 * the connection ends then (so the caller is told to stop).
	 */
	if (off >= 0) {
		struct req_hdr h;

		conn_recv(c, &h, sizeof(h));
		scif_unregister(c->fd, 0, size);
	}
	if (mem != MAP_FAILED)
		munmap(mem, size);
	return -1;
}

/* Raise the open-file limit to what @n more descriptors need: 0 or -1. */
static int want_files(uint64_t n)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -1;
	if (rl.rlim_cur >= n + 256)
		return 0;
	rl.rlim_cur = n + 256;
	if (rl.rlim_max < rl.rlim_cur)
		rl.rlim_max = rl.rlim_cur;
	return setrlimit(RLIMIT_NOFILE, &rl);
}

/*
 * REQ_HOLD: listen on a new port, tell the client which (or -errno),
 * accept @count connections there and keep them, unused; say how many
 * came, then hold them until the client's next request or its end.
 */
static int serve_hold(struct conn *c, uint64_t count)
{
	struct scif_port_id peer;
	int64_t port = -EINVAL;
	uint64_t n = 0;
	int l = -1, *fds = NULL;

	if (c->t == T_SCIF && count && count <= HOLD_MAX &&
	    !want_files(count)) {
		fds = calloc(count, sizeof(*fds));
		l = fds ? scif_open() : -1;
		port = l < 0 ? -ENOMEM : scif_bind(l, 0);
		if (port >= 0 && scif_listen(l, 128))
			port = -errno;
		else if (port < 0)
			port = -errno;
	}
	if (conn_send(c, &port, sizeof(port)) || port < 0)
		goto out;
	while (n < count) {
		if (scif_accept(l, &peer, &fds[n], SCIF_ACCEPT_SYNC) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		n++;
	}
	if (!conn_send(c, &n, sizeof(n))) {
		struct req_hdr h;

		conn_recv(c, &h, sizeof(h));
	}
out:
	while (n)
		scif_close(fds[--n]);
	if (l >= 0)
		scif_close(l);
	free(fds);
	return -1;
}

static void *serve_conn(void *arg)
{
	struct conn *c = arg;
	struct req_hdr h;
	uint64_t i, ack = 0;
	char *buf = NULL;

	while (!conn_recv(c, &h, sizeof(h))) {
		if (h.kind == REQ_STOP) {
			fprintf(stderr, "scif-bench: stopped by request\n");
			conn_send(c, &h, sizeof(h));
			exit(0);
		}
		if (h.kind == REQ_RAW_PONG) {
			if (raw_pong(c, h.size, h.count))
				break;
			continue;
		}
		if (h.kind == REQ_MMAP_PONG) {
			if (mmap_pong(c, h.size, h.count))
				break;
			continue;
		}
		if (h.kind == REQ_WINDOW) {
			if (serve_window(c, h.size))
				break;
			continue;
		}
		if (h.kind == REQ_HOLD) {
			serve_hold(c, h.count);
			break;
		}
		if (h.kind == REQ_CLOSE || h.size > 64 * MIB)
			break;
		free(buf);
		buf = malloc(h.size ? h.size : 1);
		if (!buf)
			break;
		if (h.kind == REQ_PINGPONG) {
			for (i = 0; i < h.count; i++)
				if (conn_recv(c, buf, h.size) ||
				    conn_send(c, buf, h.size))
					goto out;
		} else if (h.kind == REQ_STREAM) {
			for (i = 0; i < h.count; i++)
				if (conn_recv(c, buf, h.size)) {
					fprintf(stderr, "scif-bench: %s stream ended at message %llu of %llu: %s\n",
						transport_names[c->t],
						(unsigned long long)i,
						(unsigned long long)h.count,
						strerror(errno));
					goto out;
				}
			ack = h.count;
			if (conn_send(c, &ack, sizeof(ack)))
				break;
		} else if (h.kind == REQ_SOURCE) {
			/* The other way: count messages to the client. */
			memset(buf, 5, h.size);
			for (i = 0; i < h.count; i++)
				if (conn_send(c, buf, h.size))
					goto out;
		} else {
			break;
		}
	}
out:
	free(buf);
	conn_close(c);
	free(c);
	return NULL;
}

static void spawn(enum transport t, int fd)
{
	struct conn *c = malloc(sizeof(*c));
	pthread_attr_t attr;
	pthread_t th;

	if (!c) {
		close(fd);
		return;
	}
	c->t = t;
	c->fd = fd;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, serve_conn, c)) {
		close(fd);
		free(c);
	}
	pthread_attr_destroy(&attr);
}

struct listener {
	enum transport t;
	int fd;
};

static void *accept_loop(void *arg)
{
	struct listener *l = arg;
	struct scif_port_id peer;
	int fd, one = 1;

	for (;;) {
		if (l->t == T_SCIF) {
			if (scif_accept(l->fd, &peer, &fd, SCIF_ACCEPT_SYNC) < 0) {
				if (errno == EINTR)
					continue;
				perror("scif-bench: scif_accept");
				return NULL;
			}
		} else {
			fd = accept(l->fd, NULL, NULL);
			if (fd < 0) {
				if (errno == EINTR || errno == ECONNABORTED)
					continue;
				perror("scif-bench: accept");
				return NULL;
			}
			if (l->t == T_TCP)
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
					   sizeof(one));
		}
		spawn(l->t, fd);
	}
}

/* A listener that could not be set up: said, closed, errno kept. */
static int listen_failed(enum transport t, int fd)
{
	int err = errno;

	fprintf(stderr, "scif-bench: %s listener: %s\n", transport_names[t],
		strerror(err));
	if (fd >= 0)
		close(fd);
	errno = err;
	return -1;
}

static int listen_scif(int port)
{
	int fd = scif_open();

	if (fd < 0) {
		scif_hint();
		return listen_failed(T_SCIF, -1);
	}
	if (scif_bind(fd, port) < 0 || scif_listen(fd, 128) < 0)
		return listen_failed(T_SCIF, fd);
	return fd;
}

static int listen_tcp(int port)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6,
				   .sin6_port = htons(port),
				   .sin6_addr = IN6ADDR_ANY_INIT };
	int fd = socket(AF_INET6, SOCK_STREAM, 0), one = 1;

	if (fd < 0) {
		/* A kernel without IPv6: IPv4 only. */
		struct sockaddr_in sa4 = { .sin_family = AF_INET,
					   .sin_port = htons(port) };

		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			return -1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&sa4, sizeof(sa4)) ||
		    listen(fd, 128))
			goto fail;
		return fd;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 128))
		goto fail;
	return fd;
fail:
	return listen_failed(T_TCP, fd);
}

/*
 * A socket left at @sa by a server that is gone (nobody accepts on it)
 * is removed; one a server still accepts on is that server's, and so is
 * anything that is not a socket: EADDRINUSE, and it is left alone.
 */
static int unix_path_free(const struct sockaddr_un *sa)
{
	struct stat st;
	int probe, ret;

	if (lstat(sa->sun_path, &st))
		return errno == ENOENT ? 0 : -1;
	if (!S_ISSOCK(st.st_mode)) {
		errno = EADDRINUSE;
		return -1;
	}
	probe = socket(AF_UNIX, SOCK_STREAM, 0);
	if (probe < 0)
		return -1;
	ret = connect(probe, (const struct sockaddr *)sa, sizeof(*sa));
	close(probe);
	if (!ret || errno != ECONNREFUSED) {
		errno = EADDRINUSE;
		return -1;
	}
	return unlink(sa->sun_path);
}

static int listen_unix(int port)
{
	struct sockaddr_un sa;
	int fd;

	unix_path(&sa, port);
	if (unix_path_free(&sa))
		return listen_failed(T_UNIX, -1);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0)
		return listen_failed(T_UNIX, -1);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 128))
		return listen_failed(T_UNIX, fd);
	return fd;
}

/* AF_VSOCK on any CID; quietly none where the kernel has no vsock. */
static int listen_vsock(int port)
{
	struct sockaddr_vm sa = { .svm_family = AF_VSOCK,
				  .svm_cid = VMADDR_CID_ANY,
				  .svm_port = port };
	int fd = socket(AF_VSOCK, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 128))
		return listen_failed(T_VSOCK, fd);
	return fd;
}

/*
 * Serve every transport that can be set up; runs until killed.  A port
 * another server holds on any transport (EADDRINUSE) is refused whole:
 * nothing is served, exit status 1.
 */
static int serve(int port)
{
	static int (*const listen_fn[])(int) = {
		[T_SCIF] = listen_scif, [T_TCP] = listen_tcp,
		[T_UNIX] = listen_unix, [T_VSOCK] = listen_vsock,
	};
	static const enum transport ts[] = { T_SCIF, T_TCP, T_UNIX, T_VSOCK };
	static struct listener l[4];
	bool busy = false;
	pthread_t th[4];
	int n = 0, i;

	for (i = 0; i < 4; i++) {
		l[n] = (struct listener){ ts[i], listen_fn[ts[i]](port) };
		if (l[n].fd >= 0)
			n++;
		else
			busy |= errno == EADDRINUSE;
	}
	if (busy) {
		fprintf(stderr, "scif-bench: port %d is in use (another server?): not serving\n",
			port);
		for (i = 0; i < n; i++)
			close(l[i].fd);
		return 1;
	}
	if (!n)
		return 1;
	for (i = 0; i < n; i++) {
		if (pthread_create(&th[i], NULL, accept_loop, &l[i]))
			return 1;
		fprintf(stderr, "scif-bench: serving %s on port %d\n",
			transport_names[l[i].t], port);
	}
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 1;
}

/* --- measurements --------------------------------------------------------- */

/* What /proc/stat counts for the whole system since it booted. */
struct sys_count {
	unsigned long long ctxt;	/* context switches */
	unsigned long long intr;	/* interrupts */
};

struct row {
	const char *mode;
	const char *via;		/* instead of the transport's name */
	enum transport t;
	size_t size;
	uint64_t count;
	double min_us, med_us, p99_us;	/* latency rows */
	double mbps;			/* bandwidth and rate rows */
	uint64_t bytes;			/* bw: bytes moved, both ways */
	double seconds;			/* bw, and lat with -d: time measured */
	struct sys_count sys;		/* lat, bw: this system's, meanwhile */
	bool counted;			/* @sys was counted */
};

enum format { F_TABLE, F_CSV, F_JSON };

static struct {
	enum format format;
	bool quick;
	long iters;
	int rows;
	size_t size_min, size_max;	/* -s; 0: the mode's own sizes */
	double duration;		/* -d seconds; 0: by count */
	int streams;			/* -P */
	long idle;			/* -I; 0: the mode's default */
	bool bidir;			/* -b */
	const struct target *tg;	/* for the JSON metadata */
	int argc;
	char **argv;
} opt = { .iters = 0, .streams = 1 };

/* -s: NUMBER[K|M|G][iB|B], binary units; 0 if malformed or out of range. */
static size_t parse_size(const char *arg)
{
	unsigned long long v, mul = 1;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg)
		return 0;
	switch (*end) {
	case 'k': case 'K':
		mul = 1024;
		break;
	case 'm': case 'M':
		mul = MIB;
		break;
	case 'g': case 'G':
		mul = 1024ULL * MIB;
		break;
	}
	if (mul > 1)
		end++;
	if (*end && strcmp(end, "iB") && strcmp(end, "B"))
		return 0;
	if (!v || v > 64ULL * MIB / mul)
		return 0;
	return v * mul;
}

/* -s MIN[:MAX] (a single size if no MAX): 0 or -1. */
static int parse_sizes(const char *arg)
{
	const char *colon = strchr(arg, ':');
	char min[32];

	if (colon && (size_t)(colon - arg) >= sizeof(min))
		return -1;
	snprintf(min, sizeof(min), "%.*s", colon ? (int)(colon - arg) :
		 (int)strlen(arg), arg);
	opt.size_min = parse_size(min);
	opt.size_max = colon ? parse_size(colon + 1) : opt.size_min;
	return opt.size_min && opt.size_max && opt.size_min <= opt.size_max ?
	       0 : -1;
}

/*
 * The sizes a mode measures, into @out (at most @max): those of -s, from
 * MIN by @factor up to MAX (MAX itself last), or the mode's @def.
 */
static int sizes_of(const size_t *def, int nr_def, size_t factor, size_t *out,
		    int max)
{
	size_t size;
	int n = 0;

	if (!opt.size_min) {
		memcpy(out, def, nr_def * sizeof(*def));
		return nr_def;
	}
	for (size = opt.size_min; size < opt.size_max && n < max - 1;
	     size *= factor)
		out[n++] = size;
	out[n++] = opt.size_max;
	return n;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* A progress line, on an interactive terminal only. */
static bool interactive(void)
{
	return isatty(STDERR_FILENO) && isatty(STDOUT_FILENO);
}

static void progress(const char *mode, enum transport t, size_t size)
{
	if (interactive())
		fprintf(stderr, "\r%-8s %-5s %9zu bytes ...", mode,
			transport_names[t], size);
}

/* Before the first JSON row: what was run, where, when, and the units. */
static void json_head(void)
{
	const struct target *tg = opt.tg;
	struct utsname u;
	char when[32];
	time_t now = time(NULL);
	uint16_t self;
	int i, node = -1;

	if (scif_get_nodeIDs(NULL, 0, &self) >= 0)
		node = self;
	if (uname(&u))
		memset(&u, 0, sizeof(u));
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	printf("{\n  \"tool\": \"scif-bench\",\n  \"version\": ");
	json_fputs(SCIF_TOOLS_VERSION, stdout);
	printf(",\n  \"meta\": {\"host\":");
	json_fputs(u.nodename, stdout);
	printf(",\"kernel\":");
	json_fputs(u.release, stdout);
	printf(",\"machine\":");
	json_fputs(u.machine, stdout);
	printf(",\"node\":%d,\"transport\":\"%s\",\"peer_node\":%d,"
	       "\"port\":%d,\"quick\":%s,\"iters\":%ld,\"size_min\":%zu,"
	       "\"size_max\":%zu,\"duration_s\":%.3f,\"streams\":%d,"
	       "\"bidir\":%s,\"started\":\"%s\",\"argv\":[",
	       node, transport_names[tg->t], tg->node < 0 ? node : tg->node,
	       tg->port, opt.quick ? "true" : "false", opt.iters, opt.size_min,
	       opt.size_max, opt.duration, opt.streams,
	       opt.bidir ? "true" : "false", when);
	for (i = 0; i < opt.argc; i++) {
		printf(i ? "," : "");
		json_fputs(opt.argv[i], stdout);
	}
	printf("]},\n  \"units\": {\"size\":\"bytes\",\"count\":"
	       "\"round trips, messages, connections, RMAs or copies\","
	       "\"min_us\":\"microseconds\",\"median_us\":\"microseconds\","
	       "\"p99_us\":\"microseconds\",\"rate\":\"MB/s (10^6 bytes per "
	       "second); connections per second for connect and idle, KiB per "
	       "connection for idle-mem\",\"bytes\":"
	       "\"bytes\",\"seconds\":\"seconds\",\"ctxt\":\"context "
	       "switches of this system meanwhile (lat, bw)\",\"intr\":"
	       "\"interrupts of this system meanwhile (lat, bw)\"},\n"
	       "  \"rows\": [\n");
}

#define COUNT_LEN 24	/* a count in decimal, with its NUL */

/* @v of @r in @buf (COUNT_LEN bytes), or @none if @r has no counts. */
static const char *count_str(const struct row *r, unsigned long long v,
			     const char *none, char *buf)
{
	if (!r->counted)
		return none;
	snprintf(buf, COUNT_LEN, "%llu", v);
	return buf;
}

static void print_row(const struct row *r)
{
	char c[COUNT_LEN], i[COUNT_LEN];
	bool lat = r->mbps == 0;

	if (interactive())
		fprintf(stderr, "\r%40s\r", "");
	switch (opt.format) {
	case F_TABLE:
		if (!opt.rows)
			printf("%-8s %-5s %10s %9s %10s %10s %10s %12s\n", "mode",
			       "via", "size", "count", "min_us", "median_us",
			       "p99_us", "MB/s|op/s");
		if (lat)
			printf("%-8s %-5s %10zu %9llu %10.2f %10.2f %10.2f %12s\n",
			       r->mode, (r->via ? r->via : transport_names[r->t]), r->size,
			       (unsigned long long)r->count, r->min_us,
			       r->med_us, r->p99_us, "-");
		else
			printf("%-8s %-5s %10zu %9llu %10s %10s %10s %12.1f\n",
			       r->mode, (r->via ? r->via : transport_names[r->t]), r->size,
			       (unsigned long long)r->count, "-", "-", "-",
			       r->mbps);
		break;
	case F_CSV:
		if (!opt.rows)
			printf("mode,via,size,count,min_us,median_us,p99_us,rate,ctxt,intr\n");
		printf("%s,%s,%zu,%llu,%.3f,%.3f,%.3f,%.3f,%s,%s\n", r->mode,
		       (r->via ? r->via : transport_names[r->t]), r->size,
		       (unsigned long long)r->count, r->min_us, r->med_us,
		       r->p99_us, r->mbps, count_str(r, r->sys.ctxt, "", c),
		       count_str(r, r->sys.intr, "", i));
		break;
	case F_JSON:
		if (!opt.rows)
			json_head();
		printf("%s    {\"mode\":\"%s\",\"via\":\"%s\",\"size\":%zu,"
		       "\"count\":%llu,\"min_us\":%.3f,\"median_us\":%.3f,"
		       "\"p99_us\":%.3f,\"rate\":%.3f,\"streams\":%d,"
		       "\"bidir\":%s,\"bytes\":%llu,\"seconds\":%.6f,"
		       "\"ctxt\":%s,\"intr\":%s}",
		       opt.rows ? ",\n" : "",
		       r->mode, (r->via ? r->via : transport_names[r->t]), r->size,
		       (unsigned long long)r->count, r->min_us, r->med_us,
		       r->p99_us, r->mbps,
		       !strcmp(r->mode, "bw") ? opt.streams : 1,
		       !strcmp(r->mode, "bw") && opt.bidir ? "true" : "false",
		       (unsigned long long)r->bytes, r->seconds,
		       count_str(r, r->sys.ctxt, "null", c),
		       count_str(r, r->sys.intr, "null", i));
		break;
	}
	opt.rows++;
	fflush(stdout);
}

/* The system's counts in @c; false if /proc/stat cannot tell. */
static bool sys_count_read(struct sys_count *c)
{
	FILE *f = fopen("/proc/stat", "re");
	char line[128];
	int found = 0;

	while (f && found < 2 && fgets(line, sizeof(line), f)) {
		/* "intr" has a field per interrupt line: the total comes first. */
		if (sscanf(line, "intr %llu", &c->intr) == 1 ||
		    sscanf(line, "ctxt %llu", &c->ctxt) == 1)
			found++;
		/* Skip the rest of a line longer than @line. */
		while (!strchr(line, '\n') && fgets(line, sizeof(line), f))
			;
	}
	if (f)
		fclose(f);
	return found == 2;
}

/* @r counts what the system did since @before, if both could be read. */
static void sys_count_since(struct row *r, const struct sys_count *before,
			    bool read_before)
{
	struct sys_count now;

	r->counted = read_before && sys_count_read(&now);
	if (r->counted) {
		r->sys.ctxt = now.ctxt - before->ctxt;
		r->sys.intr = now.intr - before->intr;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int start(struct conn *c, const struct target *tg, uint32_t kind,
		 size_t size, uint64_t count)
{
	struct req_hdr h = { .kind = kind, .size = size, .count = count };

	if (conn_open(c, tg)) {
		perror("scif-bench: connect");
		return -1;
	}
	if (conn_send(c, &h, sizeof(h))) {
		perror("scif-bench: request");
		conn_close(c);
		return -1;
	}
	return 0;
}

static void finish(struct conn *c)
{
	struct req_hdr h = { .kind = REQ_CLOSE };

	conn_send(c, &h, sizeof(h));
	conn_close(c);
}

/* Ask the server for @kind on connection @c, already open: 0 or -1. */
static int request(struct conn *c, uint32_t kind, size_t size, uint64_t count)
{
	struct req_hdr h = { .kind = kind, .size = size, .count = count };

	return conn_send(c, &h, sizeof(h));
}

/* Round trips of @size; with -d, in batches until the time is up. */
static long pingpong(struct conn *c, size_t size, long warm, long iters,
		     double **rt, long *cap)
{
	long batch = opt.duration > 0 ? 100 : iters, i, n = 0;
	double t0, end = now_us() + opt.duration * 1e6;
	char buf[64 * 1024];
	double *bigger;

	for (i = 0; i < warm; i++)
		if (conn_send(c, buf, size) || conn_recv(c, buf, size))
			return -1;
	do {
		if (n + batch > *cap) {
			bigger = realloc(*rt, (n + batch) * sizeof(**rt));
			if (!bigger)
				return -1;
			*rt = bigger;
			*cap = n + batch;
		}
		if (request(c, REQ_PINGPONG, size, batch))
			return -1;
		for (i = 0; i < batch; i++, n++) {
			t0 = now_us();
			if (conn_send(c, buf, size) || conn_recv(c, buf, size))
				return -1;
			(*rt)[n] = now_us() - t0;
		}
	} while (opt.duration > 0 && now_us() < end);
	return n;
}

/* lat, its rows named @mode. */
static int bench_lat_as(const struct target *tg, const char *mode)
{
	static const size_t def[] = { 8, 64, 1024 };
	long iters = opt.iters ? opt.iters : opt.quick ? 20 : 10000;
	long warm = iters / 10 + 1, cap = 0, n;
	struct row r = { .mode = mode, .t = tg->t };
	struct sys_count before;
	size_t sizes[32];
	double *rt = NULL, t0;
	struct conn c;
	bool counted;
	int s, nr;

	nr = sizes_of(def, 3, 8, sizes, 32);
	for (s = 0; s < nr; s++) {
		if (sizes[s] > 64 * 1024) {
			fprintf(stderr, "scif-bench: lat sizes are at most 64K\n");
			goto fail;
		}
		progress(r.mode, tg->t, sizes[s]);
		if (start(&c, tg, REQ_PINGPONG, sizes[s], warm))
			goto fail;
		counted = sys_count_read(&before);
		t0 = now_us();
		n = pingpong(&c, sizes[s], warm, iters, &rt, &cap);
		if (n <= 0) {
			perror("scif-bench: ping-pong");
			conn_close(&c);
			goto fail;
		}
		r.seconds = (now_us() - t0) / 1e6;
		sys_count_since(&r, &before, counted);
		finish(&c);
		qsort(rt, n, sizeof(*rt), cmp_double);
		r.size = sizes[s];
		r.count = n;
		r.bytes = 2 * sizes[s] * (uint64_t)n;
		r.min_us = rt[0];
		r.med_us = rt[n / 2];
		r.p99_us = rt[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1];
		print_row(&r);
	}
	free(rt);
	return 0;
fail:
	free(rt);
	return -1;
}

static int bench_lat(const struct target *tg)
{
	return bench_lat_as(tg, "lat");
}

/*
 * Free pages waiting in the per-CPU lists, in KiB (the "count:" lines of
 * /proc/zoneinfo's pagesets; 0 if unknown).  MemAvailable leaves them
 * out, and 6.12's kernel lets those lists grow after a burst of frees
 * and drains them back over seconds: in a make check VM MemAvailable
 * rose by 28 MB in 10 s with nothing running while they shrank by the
 * same amount.
 */
static long pcp_free_kib(void)
{
	FILE *f = fopen("/proc/zoneinfo", "re");
	long pages = 0, count;
	char line[128];

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, " count: %ld", &count) == 1 && count > 0)
			pages += count;
	if (f)
		fclose(f);
	return pages * (sysconf(_SC_PAGESIZE) / 1024);
}

/*
 * Memory free for use, in KiB: MemAvailable in /proc/meminfo and the
 * free pages of the per-CPU lists; -1 if unknown.
 */
static long mem_available_kib(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char line[128];
	long kib = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib < 0 ? -1 : kib + pcp_free_kib();
}

/* Open @n connections to @port of @node into @fds: how many opened. */
static long hold_open(int node, uint16_t port, int *fds, long n)
{
	struct scif_port_id dst = { .node = node, .port = port };
	long i;

	for (i = 0; i < n; i++) {
		fds[i] = scif_open();
		if (fds[i] < 0)
			break;
		if (scif_connect(fds[i], &dst) < 0) {
			scif_close(fds[i]);
			break;
		}
	}
	return i;
}

/*
 * idle: the server holds -I connections of ours open on a port of its
 * own (REQ_HOLD); what they cost in memory here, and the lat round
 * trips while they are open.
 */
static int bench_idle(const struct target *tg)
{
	long n = opt.idle ? opt.idle : opt.quick ? 100 : 10000, got = 0;
	struct row r = { .mode = "idle", .t = tg->t };
	long mem0, mem1;
	struct conn ctl;
	uint64_t held = 0;
	uint16_t self;
	int64_t port;
	int *fds = NULL, ret = -1, node = tg->node;
	double t0;

	if (node < 0 && scif_get_nodeIDs(NULL, 0, &self) >= 0)
		node = self;
	if (tg->t != T_SCIF || node < 0) {
		fprintf(stderr, "scif-bench: idle is for SCIF only\n");
		return -1;
	}
	if (want_files(n) || !(fds = calloc(n, sizeof(*fds)))) {
		perror("scif-bench: idle");
		return -1;
	}
	progress(r.mode, tg->t, 0);
	if (start(&ctl, tg, REQ_HOLD, 0, n))
		goto out;
	if (conn_recv(&ctl, &port, sizeof(port)) || port <= 0) {
		fprintf(stderr, "scif-bench: the server holds no connections (%s)\n",
			port < 0 ? strerror((int)-port) : "gone");
		goto close;
	}
	/* Without them, just before: the two are compared (bench-report.sh). */
	if (bench_lat_as(tg, "lat-base"))
		goto close;
	mem0 = mem_available_kib();
	t0 = now_us();
	got = hold_open(node, port, fds, n);
	r.seconds = (now_us() - t0) / 1e6;
	if (got < n) {
		perror("scif-bench: idle connection");
		goto close;
	}
	if (conn_recv(&ctl, &held, sizeof(held)) || held != (uint64_t)n) {
		fprintf(stderr, "scif-bench: the server accepted %llu of %ld\n",
			(unsigned long long)held, n);
		goto close;
	}
	mem1 = mem_available_kib();
	r.count = n;
	r.mbps = n / r.seconds;		/* connections per second */
	print_row(&r);
	r.mode = "idle-mem";
	r.mbps = mem0 < 0 || mem1 < 0 ? 0 : (double)(mem0 - mem1) / n;
	print_row(&r);
	ret = bench_lat_as(tg, "lat-idle");
close:
	finish(&ctl);
out:
	while (got)
		scif_close(fds[--got]);
	free(fds);
	return ret;
}

/* One connection of a bw run: sends (REQ_STREAM) or receives (REQ_SOURCE). */
struct stream {
	pthread_t th;
	const struct target *tg;
	pthread_barrier_t *go;
	bool rx;
	size_t size;
	uint64_t count;		/* messages, or per batch with -d */
	double end_us;		/* with -d: when to stop, set after @go */
	uint64_t done;		/* messages moved */
	double t_end;		/* when the last one was */
	int err;		/* 0, or the errno of what failed */
	const char *what;	/* what failed */
};

/* 0, or an errno (a wrong acknowledgement: EPROTO); sets @st->what. */
static int stream_batch(struct stream *st, struct conn *c, char *buf)
{
	uint64_t i, ack;

	st->what = "request";
	if (request(c, st->rx ? REQ_SOURCE : REQ_STREAM, st->size, st->count))
		return errno ? errno : EIO;
	st->what = st->rx ? "recv" : "send";
	for (i = 0; i < st->count; i++)
		if (st->rx ? conn_recv(c, buf, st->size) :
			     conn_send(c, buf, st->size))
			return errno ? errno : EIO;
	st->what = "acknowledgement";
	if (!st->rx && conn_recv(c, &ack, sizeof(ack)))
		return errno ? errno : EIO;
	if (!st->rx && ack != st->count)
		return EPROTO;
	st->done += st->count;
	return 0;
}

static void *stream_run(void *arg)
{
	struct stream *st = arg;
	struct conn c;
	char *buf = calloc(1, st->size);
	int opened;

	opened = buf && !conn_open(&c, st->tg);
	st->err = opened ? 0 : errno ? errno : ENOMEM;
	st->what = "connect";
	pthread_barrier_wait(st->go);		/* connected: start */
	pthread_barrier_wait(st->go);		/* end_us is set */
	if (opened) {
		do {
			st->err = stream_batch(st, &c, buf);
		} while (!st->err && opt.duration > 0 && now_us() < st->end_us);
		st->t_end = now_us();
		if (!st->err)
			finish(&c);
		else
			conn_close(&c);
	}
	free(buf);
	return NULL;
}

/* One size of bw: @n streams (each doubled by -b) at once; 0 or -1. */
static int bw_size(const struct target *tg, struct stream *st, int n,
		   size_t size, uint64_t count, struct row *r)
{
	struct sys_count before;
	pthread_barrier_t go;
	int i, started, err = 0, failed = -1;
	bool counted;
	double t0;

	pthread_barrier_init(&go, NULL, n + 1);
	for (started = 0; started < n; started++) {
		st[started] = (struct stream){ .tg = tg, .go = &go, .size = size,
					       .count = count,
					       .rx = opt.bidir && started % 2 };
		if (pthread_create(&st[started].th, NULL, stream_run,
				   &st[started]))
			break;
	}
	if (started < n) {	/* cannot happen but for lack of memory */
		fprintf(stderr, "scif-bench: no thread for stream %d\n", started);
		exit(1);
	}
	pthread_barrier_wait(&go);
	counted = sys_count_read(&before);
	t0 = now_us();
	for (i = 0; i < n; i++)
		st[i].end_us = t0 + opt.duration * 1e6;
	pthread_barrier_wait(&go);
	r->count = 0;
	r->seconds = 0;
	for (i = 0; i < n; i++) {
		pthread_join(st[i].th, NULL);
		if (st[i].err && failed < 0)
			failed = i;
		err |= st[i].err;
		r->count += st[i].done;
		if ((st[i].t_end - t0) / 1e6 > r->seconds)
			r->seconds = (st[i].t_end - t0) / 1e6;
	}
	sys_count_since(r, &before, counted);
	pthread_barrier_destroy(&go);
	if (err) {
		fprintf(stderr, "scif-bench: a stream of %zu-byte messages failed: %s: %s\n",
			size, st[failed].what, strerror(st[failed].err));
		return -1;
	}
	r->size = size;
	r->bytes = r->count * size;
	r->mbps = r->bytes / (r->seconds * 1e6);	/* bytes per us = MB/s */
	return 0;
}

static int bench_bw(const struct target *tg)
{
	static const size_t def[] = { 64, 256, 1024, 4096, 16384, 65536,
				      262144, 1048576 };
	uint64_t total = opt.quick ? MIB : 64ULL * MIB, count;
	struct row r = { .mode = "bw", .t = tg->t };
	int s, nr, n = opt.streams * (opt.bidir ? 2 : 1);
	size_t sizes[32];
	struct stream *st;

	st = calloc(n, sizeof(*st));
	if (!st)
		return -1;
	/* Quick: up to 64 KiB. */
	nr = sizes_of(def, opt.quick ? 6 : 8, 4, sizes, 32);
	for (s = 0; s < nr; s++) {
		progress(r.mode, tg->t, sizes[s]);
		/* The bytes of a run are shared by the streams of a way. */
		count = total / sizes[s] / opt.streams;
		if (opt.duration > 0)	/* per batch: about 1 MiB */
			count = MIB / sizes[s];
		if (opt.iters && (uint64_t)opt.iters < count)
			count = opt.iters;
		if (!count)
			count = 1;
		if (bw_size(tg, st, n, sizes[s], count, &r)) {
			free(st);
			return -1;
		}
		print_row(&r);
	}
	free(st);
	return 0;
}

static int bench_connect(const struct target *tg)
{
	long n = opt.iters ? opt.iters : opt.quick ? 10 : 500, i;
	struct row r = { .mode = "connect", .t = tg->t };
	struct conn c;
	double t0;

	progress(r.mode, tg->t, 0);
	t0 = now_us();
	for (i = 0; i < n; i++) {
		if (conn_open(&c, tg)) {
			perror("scif-bench: connect");
			return -1;
		}
		finish(&c);
	}
	r.count = n;
	r.mbps = n / ((now_us() - t0) / 1e6);	/* connections per second */
	print_row(&r);
	return 0;
}

/* Map the server's window 0 of connection @c (mmap ping-pong): 0 or -1. */
static int mmap_open(struct raw_map *m, struct conn *c)
{
	void *va = scif_mmap(NULL, RAW_DATA, SCIF_PROT_READ | SCIF_PROT_WRITE,
			     0, c->fd, 0);

	if (va == SCIF_MMAP_FAILED) {
		perror("scif-bench: scif_mmap of the server's window");
		return -1;
	}
	m->va = va;
	m->size = RAW_DATA;
	return 0;
}

/*
 * 8-byte ping-pong with the server's help: through the shared link used
 * raw (@t T_RAW), or through the server's window mapped here (T_MMAP).
 */
static int bench_pingpong_8(const struct target *tg, enum transport t)
{
	long iters = opt.iters ? opt.iters : opt.quick ? 20 : 10000;
	long warm = iters / 10 + 1, i;
	struct row r = { .mode = "lat", .t = t, .size = 8 };
	struct raw_map m = { .va = NULL };
	uint64_t base, ok = 0;
	struct conn c;
	double *rt, t0;
	int ret = -1;

	if (t == T_RAW && raw_open(&m))
		return -1;
	rt = calloc(iters, sizeof(*rt));
	/* Sequence numbers unlike any earlier run's; the size field takes it. */
	base = (uint32_t)(time(NULL) * 7919u ^ (uint32_t)getpid() << 16);
	if (t == T_RAW)
		raw_store(&m, RAW_PING, 0);
	progress(r.mode, r.t, r.size);
	if (!rt || start(&c, tg, t == T_RAW ? REQ_RAW_PONG : REQ_MMAP_PONG,
			 base, warm + iters))
		goto out;
	if (conn_recv(&c, &ok, sizeof(ok)) || !ok) {
		fprintf(stderr, "scif-bench: the server cannot %s\n",
			t == T_RAW ? "map the raw link" : "register a window");
		conn_close(&c);
		goto out;
	}
	if (t == T_MMAP && mmap_open(&m, &c)) {
		conn_close(&c);
		goto out;
	}
	for (i = 1; i <= warm + iters; i++) {
		t0 = now_us();
		raw_store(&m, RAW_PING, base + i);
		if (raw_wait(&m, RAW_PONG, base + i)) {
			perror(t == T_RAW ? "scif-bench: raw ping-pong" :
					    "scif-bench: mmap ping-pong");
			conn_close(&c);
			goto out;
		}
		if (i > warm)
			rt[i - warm - 1] = now_us() - t0;
	}
	if (t == T_MMAP) {
		/* The server keeps its window until this says it is unmapped. */
		raw_close(&m);
		m.va = NULL;
		conn_send(&c, &ok, sizeof(ok));
	}
	finish(&c);
	qsort(rt, iters, sizeof(*rt), cmp_double);
	r.count = iters;
	r.min_us = rt[0];
	r.med_us = rt[iters / 2];
	r.p99_us = rt[(iters * 99) / 100 < iters ? (iters * 99) / 100 : iters - 1];
	print_row(&r);
	ret = 0;
out:
	free(rt);
	if (m.va)
		raw_close(&m);
	return ret;
}

/* memcpy into (write) and out of (read) the raw link, 4 KiB .. 64 MiB. */
static int bench_raw_bw(void)
{
	size_t max = opt.quick ? MIB : 64 * MIB, size, room, done, n;
	struct row wr = { .mode = "raw-wr", .t = T_RAW };
	struct row rd = { .mode = "raw-rd", .t = T_RAW };
	uint64_t reps, i;
	struct raw_map m;
	double t0;
	char *buf;

	if (raw_open(&m))
		return -1;
	room = m.size - RAW_DATA;
	buf = malloc(max);
	if (!buf) {
		raw_close(&m);
		return -1;
	}
	memset(buf, 3, max);
	for (size = 4096; size <= max; size *= 4) {
		reps = (opt.quick ? 4 * MIB : 256ULL * MIB) / size;
		reps = reps ? reps : 1;
		for (int dir = 0; dir < 2; dir++) {
			struct row *r = dir ? &rd : &wr;

			progress(r->mode, r->t, size);
			t0 = now_us();
			for (i = 0; i < reps; i++) {
				for (done = 0; done < size; done += n) {
					n = size - done < room ? size - done : room;
					if (dir)
						memcpy(buf + done, (char *)m.va + RAW_DATA, n);
					else
						memcpy((char *)m.va + RAW_DATA, buf + done, n);
				}
				__asm__ __volatile__("" : : "r"(buf) : "memory");
			}
			r->size = size;
			r->count = reps;
			r->mbps = size * reps / (now_us() - t0);
			print_row(r);
		}
	}
	free(buf);
	raw_close(&m);
	return 0;
}

/* Ask the server to exit. */
static int stop_server(const struct target *tg)
{
	struct req_hdr h;
	struct conn c;

	if (start(&c, tg, REQ_STOP, 0, 0))
		return -1;
	/* It answers before it exits. */
	if (conn_recv(&c, &h, sizeof(h)) || h.kind != REQ_STOP) {
		perror("scif-bench: stop");
		conn_close(&c);
		return -1;
	}
	conn_close(&c);
	return 0;
}

/*
 * A copy by 8-byte loads and stores, four at a time, as the kernel's
 * memcpy does on CPUs without fast string moves: the registers keep the
 * compiler from making it a vector copy.
 */
static void copy64(void *dst, const void *src, size_t len)
{
	const uint64_t *s = src;
	uint64_t *d = dst, a, b, c, e;
	size_t i;

	for (i = 0; i + 4 <= len / 8; i += 4) {
		a = s[i];
		b = s[i + 1];
		c = s[i + 2];
		e = s[i + 3];
		__asm__ __volatile__("" : "+r"(a), "+r"(b), "+r"(c), "+r"(e));
		d[i] = a;
		d[i + 1] = b;
		d[i + 2] = c;
		d[i + 3] = e;
	}
	memcpy(d + i, s + i, len - i * 8);
}

/* memcpy (libc's), or with @by64 the 8-byte copy above. */
static int bench_memcpy(bool by64)
{
	size_t max = opt.quick ? MIB : 64 * MIB, size;
	struct row r = { .mode = by64 ? "copy64" : "memcpy", .t = T_NONE };
	uint64_t reps, i;
	char *a, *b;
	double t0;

	a = malloc(max);
	b = malloc(max);
	if (!a || !b) {
		free(a);
		free(b);
		return -1;
	}
	memset(a, 1, max);
	memset(b, 2, max);
	for (size = 4096; size <= max; size *= 4) {
		progress(r.mode, r.t, size);
		/* About 256 MiB (4 MiB quick) copied per size. */
		reps = (opt.quick ? 4 * MIB : 256ULL * MIB) / size;
		reps = reps ? reps : 1;
		t0 = now_us();
		for (i = 0; i < reps; i++) {
			if (by64)
				copy64(b, a, size);
			else
				memcpy(b, a, size);
			/* Keep the copy: the compiler may not drop it. */
			__asm__ __volatile__("" : : "r"(b) : "memory");
		}
		r.size = size;
		r.count = reps;
		r.mbps = size * reps / (now_us() - t0);
		print_row(&r);
	}
	free(a);
	free(b);
	return 0;
}

/* One RMA of the bench: @op 0..5 as in rma_ops, @flags SCIF_RMA_*. */
static int rma_one(int fd, int op, void *buf, off_t loff, size_t len,
		   int flags)
{
	switch (op) {
	case 0:
		return scif_writeto(fd, loff, len, 0, flags);
	case 1:
		return scif_readfrom(fd, loff, len, 0, flags);
	case 2:
		return scif_vwriteto(fd, buf, len, 0, flags);
	case 3:
		return scif_vreadfrom(fd, buf, len, 0, flags);
	case 4:
		return scif_vwriteto(fd, buf, len, 0, flags | SCIF_RMA_USECACHE);
	default:
		return scif_vreadfrom(fd, buf, len, 0,
				      flags | SCIF_RMA_USECACHE);
	}
}

/* Wait until every RMA issued through @fd so far has completed. */
static int fence_self(int fd)
{
	int mark;

	if (scif_fence_mark(fd, SCIF_FENCE_INIT_SELF, &mark))
		return -1;
	return scif_fence_wait(fd, mark);
}

static int bench_rma(const struct target *tg)
{
	static const char *const ops[] = {
		"writeto", "readfrom", "vwriteto", "vreadfrom",
		"vwriteto-c", "vreadfrom-c",
	};
	static const char *const vias[] = { "cpu", "eng", "eng-a" };
	static const int via_flags[] = {
		SCIF_RMA_USECPU, SCIF_RMA_SYNC, 0,
	};
	size_t max = opt.quick ? 64 * 1024 : 64 * MIB, size;
	uint64_t per = opt.quick ? 256 * 1024 : 64ULL * MIB, reps, i;
	struct row r = { .t = T_SCIF };
	int op, v, fd, err = 0;
	int64_t roff;
	off_t loff;
	struct conn c;
	double t0;
	char *buf;

	if (tg->t != T_SCIF) {
		fprintf(stderr, "scif-bench: rma is for SCIF only\n");
		return -1;
	}
	buf = mmap(NULL, max, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return -1;
	memset(buf, 1, max);
	if (start(&c, tg, REQ_WINDOW, max, 0))
		goto out;
	fd = c.fd;
	if (conn_recv(&c, &roff, sizeof(roff)) || roff < 0) {
		fprintf(stderr, "scif-bench: no window: %s\n",
			strerror(roff < 0 ? (int)-roff : errno));
		conn_close(&c);
		goto out;
	}
	loff = scif_register(fd, buf, max, 0,
			     SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	if (loff < 0) {
		perror("scif-bench: scif_register");
		conn_close(&c);
		goto out;
	}
	for (op = 0; op < 6 && !err; op++) {
		for (v = 0; v < 3 && !err; v++) {
			r.mode = ops[op];
			r.via = vias[v];
			for (size = 4096; size <= max && !err; size *= 4) {
				progress(r.mode, r.t, size);
				reps = per / size ? per / size : 1;
				/* Warm up (and fill the cache). */
				err = rma_one(fd, op, buf, loff, size,
					      via_flags[v] | SCIF_RMA_SYNC);
				t0 = now_us();
				for (i = 0; i < reps && !err; i++)
					err = rma_one(fd, op, buf, loff, size,
						      via_flags[v]);
				/* eng-a: a fence waits for them. */
				if (!err && !via_flags[v])
					err = fence_self(fd);
				if (err) {
					perror("scif-bench: rma");
					break;
				}
				r.size = size;
				r.count = reps;
				r.mbps = size * reps / (now_us() - t0);
				print_row(&r);
			}
		}
	}
	scif_unregister(fd, loff, max);
	finish(&c);
	munmap(buf, max);
	return err ? -1 : 0;
out:
	munmap(buf, max);
	return -1;
}

/*
 * Memory for the reg mode: @len bytes in 4 KiB pages (@huge false), or
 * in 2 MiB pages: hugetlbfs if the pool has them, else THP on an aligned
 * range.  Faulted in, so that registration is measured without faults.
 * Returns the range; *@base and *@maplen say what to munmap.
 */
static char *reg_memory(size_t len, bool huge, const char **via,
			void **base, size_t *maplen)
{
	int rw = PROT_READ | PROT_WRITE, priv = MAP_PRIVATE | MAP_ANONYMOUS;
	char *mem;

	*maplen = len;
	*via = "4k";
	mem = huge ? mmap(NULL, len, rw, priv | MAP_HUGETLB, -1, 0) :
		     MAP_FAILED;
	if (mem != MAP_FAILED) {
		*via = "hugetlb";
		*base = mem;
	} else {
		*maplen = len + (huge ? 2 * MIB : 0);
		mem = mmap(NULL, *maplen, rw, priv, -1, 0);
		if (mem == MAP_FAILED)
			return NULL;
		*base = mem;
		if (huge) {
			*via = "thp";
			mem = (char *)(((uintptr_t)mem + 2 * MIB - 1) &
				       ~(uintptr_t)(2 * MIB - 1));
		}
		/* No THP in this kernel: no huge-page row. */
		if (madvise(mem, len, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) &&
		    huge) {
			munmap(*base, *maplen);
			return NULL;
		}
	}
	memset(mem, 7, len);
	return mem;
}

/*
 * reg: what scif_register costs (pinning, the window, telling the peer)
 * for 1..64 MiB in 4 KiB pages and in huge pages.  Latency rows: min,
 * median and p99 of one call, in microseconds.
 */
static int bench_reg(const struct target *tg)
{
	long iters = opt.iters ? opt.iters : opt.quick ? 2 : 10, i;
	size_t max = opt.quick ? MIB : 64 * MIB, size, maplen;
	struct row r = { .mode = "reg", .t = T_SCIF };
	int rw = SCIF_PROT_READ | SCIF_PROT_WRITE, huge, err = 0;
	double *t, t0;
	struct conn c;
	void *base;
	char *mem;

	if (tg->t != T_SCIF) {
		fprintf(stderr, "scif-bench: reg is for SCIF only\n");
		return -1;
	}
	t = calloc(iters, sizeof(*t));
	if (!t || start(&c, tg, REQ_PINGPONG, 1, 0)) {
		free(t);
		return -1;
	}
	for (huge = 0; huge < 2 && !err; huge++) {
		for (size = MIB; size <= max && !err; size *= 4) {
			mem = reg_memory(size, huge, &r.via, &base, &maplen);
			if (!mem)
				break;	/* no such memory here: no row */
			progress(r.mode, r.t, size);
			for (i = 0; i < iters && !err; i++) {
				t0 = now_us();
				err = scif_register(c.fd, mem, size, 0, rw,
						    SCIF_MAP_FIXED) != 0;
				t[i] = now_us() - t0;
				if (!err)
					err = scif_unregister(c.fd, 0, size);
			}
			munmap(base, maplen);
			if (err) {
				perror("scif-bench: scif_register");
				break;
			}
			qsort(t, iters, sizeof(*t), cmp_double);
			r.size = size;
			r.count = iters;
			r.min_us = t[0];
			r.med_us = t[iters / 2];
			r.p99_us = t[iters - 1 - iters / 100];
			print_row(&r);
		}
	}
	finish(&c);
	free(t);
	return err ? -1 : 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: scif-bench serve [-p PORT]\n"
		"       scif-bench [OPTIONS] MODE...\n"
		"       scif-bench --help | --version\n"
		"Measure SCIF messaging, RMA and registration, next to TCP, AF_UNIX,\n"
		"AF_VSOCK and memcpy (see scif-bench(1)).\n"
		"  -t, --transport=scif|tcp|unix|vsock  what lat, bw and connect use\n"
		"                         (scif)\n"
		"  -n, --node=NODE        the SCIF node of the server (this node)\n"
		"  -H, --host=HOST        the TCP server, an address or a name (127.0.0.1),\n"
		"                         or the vsock server's CID\n"
		"  -p, --port=PORT        the server's port (%d)\n"
		"  -f, --format=table|csv|json  output format (table); csv and json\n"
		"                         rows of lat and bw add ctxt and intr, what\n"
		"                         the system counted meanwhile\n"
		"  -i, --iters=N          round trips, messages or calls per figure\n"
		"  -s, --sizes=MIN[:MAX]  message sizes of lat and bw, MIN to MAX\n"
		"                         (suffixes K, M, G; lat up to 64K, bw 64M)\n"
		"  -d, --duration=SECONDS run each size of lat and bw this long\n"
		"  -P, --streams=N        bw over N connections at once (1)\n"
		"  -b, --bidir            bw both ways at once\n"
		"  -I, --idle=N           idle connections the idle mode holds (10000)\n"
		"  -D, --rawdev=FILE      the raw link's sysfs resource file\n"
		"  -q, --quick            tiny sizes and counts (a smoke run)\n"
		"  -h, --help             this text;  -V, --version  the version\n"
		"MODEs: lat bw connect idle memcpy copy64 rma reg raw-lat raw-bw mmap-lat\n"
		"       stop\n",
		DEFAULT_PORT);
}

/* A usage error: exit status 2. */
static void bad_usage(const char *why, const char *arg)
{
	if (why)
		fprintf(stderr, "scif-bench: %s%s%s\n", why, arg ? ": " : "",
			arg ? arg : "");
	usage(stderr);
	exit(2);
}

static long number(const char *arg, long min, long max, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max)
		bad_usage(what, arg);
	return v;
}

static void parse_options(int argc, char **argv, struct target *tg)
{
	static const struct option opts[] = {
		{ "transport", required_argument, NULL, 't' },
		{ "node", required_argument, NULL, 'n' },
		{ "host", required_argument, NULL, 'H' },
		{ "port", required_argument, NULL, 'p' },
		{ "format", required_argument, NULL, 'f' },
		{ "iters", required_argument, NULL, 'i' },
		{ "sizes", required_argument, NULL, 's' },
		{ "duration", required_argument, NULL, 'd' },
		{ "streams", required_argument, NULL, 'P' },
		{ "bidir", no_argument, NULL, 'b' },
		{ "idle", required_argument, NULL, 'I' },
		{ "rawdev", required_argument, NULL, 'D' },
		{ "quick", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	char *end;
	int c, i;

	while ((c = getopt_long(argc, argv, "t:n:H:p:f:i:s:d:P:bI:D:qhV", opts,
				NULL)) != -1) {
		switch (c) {
		case 't':
			for (i = 0; i < T_NONE; i++)
				if (!strcmp(optarg, transport_names[i]))
					break;
			if (i == T_NONE)
				bad_usage("unknown transport", optarg);
			tg->t = i;
			break;
		case 'n':
			tg->node = number(optarg, 0, 65535, "bad node");
			break;
		case 'H':
			tg->host = optarg;
			break;
		case 'p':
			tg->port = number(optarg, 1, 65535, "bad port");
			break;
		case 'f':
			if (!strcmp(optarg, "table"))
				opt.format = F_TABLE;
			else if (!strcmp(optarg, "csv"))
				opt.format = F_CSV;
			else if (!strcmp(optarg, "json"))
				opt.format = F_JSON;
			else
				bad_usage("unknown format", optarg);
			break;
		case 'i':
			opt.iters = number(optarg, 1, 1000000000L, "bad count");
			break;
		case 's':
			if (parse_sizes(optarg))
				bad_usage("bad size range (MIN[:MAX], 1 to 64M)",
					  optarg);
			break;
		case 'd':
			errno = 0;
			opt.duration = strtod(optarg, &end);
			if (errno || end == optarg || *end ||
			    !(opt.duration > 0 && opt.duration <= 3600))
				bad_usage("bad duration (seconds, at most 3600)",
					  optarg);
			break;
		case 'P':
			opt.streams = number(optarg, 1, 64, "bad stream count (1..64)");
			break;
		case 'b':
			opt.bidir = true;
			break;
		case 'I':
			opt.idle = number(optarg, 1, HOLD_MAX, "bad idle count");
			break;
		case 'q':
			opt.quick = true;
			break;
		case 'D':
			raw_path = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("scif-bench %s\n", SCIF_TOOLS_VERSION);
			exit(0);
		default:
			bad_usage(NULL, NULL);
		}
	}
	if (optind >= argc)
		bad_usage("no mode", NULL);
}

static bool valid_mode(const char *mode)
{
	static const char *const modes[] = {
		"lat", "bw", "connect", "idle", "memcpy", "copy64", "rma", "reg",
		"raw-lat", "raw-bw", "mmap-lat", "stop",
	};
	size_t i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(mode, modes[i]))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	struct target tg = { .t = T_SCIF, .node = -1, .port = DEFAULT_PORT };
	int i, ret = 0;

	signal(SIGPIPE, SIG_IGN);
	parse_options(argc, argv, &tg);
	/* Without -H: this machine (vsock's VMADDR_CID_LOCAL). */
	if (!tg.host)
		tg.host = tg.t == T_VSOCK ? "1" : "127.0.0.1";
	if (tg.t == T_TCP && strcmp(argv[optind], "serve"))
		tcp_resolve(&tg);
	opt.tg = &tg;
	opt.argc = argc;
	opt.argv = argv;
	if (!strcmp(argv[optind], "serve"))
		return serve(tg.port);
	for (i = optind; i < argc; i++)
		if (!valid_mode(argv[i]))
			bad_usage("unknown mode", argv[i]);
	for (i = optind; i < argc && !ret; i++) {
		if (!strcmp(argv[i], "lat"))
			ret = bench_lat(&tg);
		else if (!strcmp(argv[i], "bw"))
			ret = bench_bw(&tg);
		else if (!strcmp(argv[i], "connect"))
			ret = bench_connect(&tg);
		else if (!strcmp(argv[i], "idle"))
			ret = bench_idle(&tg);
		else if (!strcmp(argv[i], "memcpy"))
			ret = bench_memcpy(false);
		else if (!strcmp(argv[i], "copy64"))
			ret = bench_memcpy(true);
		else if (!strcmp(argv[i], "rma"))
			ret = bench_rma(&tg);
		else if (!strcmp(argv[i], "reg"))
			ret = bench_reg(&tg);
		else if (!strcmp(argv[i], "raw-lat"))
			ret = bench_pingpong_8(&tg, T_RAW);
		else if (!strcmp(argv[i], "mmap-lat"))
			ret = bench_pingpong_8(&tg, T_MMAP);
		else if (!strcmp(argv[i], "raw-bw"))
			ret = bench_raw_bw();
		else if (!strcmp(argv[i], "stop"))
			ret = stop_server(&tg);
	}
	if (opt.format == F_JSON && opt.rows)
		printf("\n  ]\n}\n");
	return ret ? 1 : 0;
}
