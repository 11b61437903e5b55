// SPDX-License-Identifier: GPL-2.0
/*
 * ivshmem-server - doorbell server for QEMU's ivshmem-doorbell device
 *
 * Usage: scif-ivshmem-server -d DIR -n NODES -v VECTORS -s SHM_SIZE [-F]
 *
 * Creates DIR/doorbell.shm (SHM_SIZE bytes, a power of two >= 4096) and
 * listens on the UNIX stream sockets DIR/node0.sock .. DIR/node<NODES-1>.sock.
 * Each VM's ivshmem-doorbell chardev connects to one of them.
 *
 * Peer ids: a client that connects on DIR/node<k>.sock is peer k.  The id is
 * therefore chosen by the launcher and stays the same when that VM restarts.
 * While peer k is connected, a second client on node<k>.sock is refused (its
 * connection is closed at once).
 *
 * Protocol (QEMU 7.2 ivshmem-doorbell).  The server only ever sends; every
 * message is one little-endian int64, optionally with exactly one file
 * descriptor as SCM_RIGHTS ancillary data.  A client that connects receives:
 *   1. the protocol version, 0 (no fd);
 *   2. its own peer id (no fd);
 *   3. -1 with the shared memory fd;
 *   4. for every other peer that has eventfds (connected now, or connected
 *      earlier and gone since): that peer's id VECTORS times, each with one
 *      of that peer's eventfds, in vector order (writing the 8-byte value 1
 *      to it interrupts that peer on that vector);
 *   5. its own id VECTORS times with its own eventfds, in vector order.
 * When peer k connects for the first time, every other client gets k's id
 * VECTORS times with its eventfds.
 *
 * Deviation from upstream: peers never leave.  Upstream's server tells every
 * other client when peer k's socket closes (k's id once, no fd) and gives k
 * fresh eventfds when it comes back, announcing them again.  QEMU 7.2's
 * ivshmem-doorbell frees a peer's eventfd array on that leave message and
 * writes the next announcement of the same id into the freed array, which
 * aborts QEMU (malloc_consolidate(): invalid chunk size): restarting one VM
 * of a cluster would crash all the others.  So here:
 *   - when k's socket closes, nobody is told, and k's eventfds stay open,
 *     owned by id k (the others may keep ringing them; nobody reads them
 *     while k is down);
 *   - when a client connects on node<k>.sock again, it gets those same
 *     eventfds as its own (step 5), each drained first (its counter read
 *     without blocking) so no interrupt rung while k was down is delivered;
 *     clients that already have k's eventfds are told nothing, since they
 *     hold the very same objects; only a client never sent them (k vanished
 *     mid-greeting in its first life) gets the announcement.
 * Nothing is lost by this: QEMU tells the guest nothing about a peer
 * leaving anyway, and the guest driver notices a lost peer by its heartbeat.
 *
 * Peer k's VECTORS eventfds are made, non-blocking like upstream's, the first
 * time a client connects on node<k>.sock, and closed when the server exits.
 * Messages go through a per-client queue written with non-blocking sends,
 * so a client that stops reading cannot stall the others (one that lets
 * QUEUE_MAX messages pile up is dropped).  A client whose send fails
 * (EPIPE, ECONNRESET, ...) has left.
 *
 * Single-threaded poll() loop.  Writes DIR/server.pid (flock()ed, so two
 * servers cannot share a DIR), logs one line per event to stderr, daemonizes
 * unless -F, and on SIGTERM, SIGINT or SIGHUP removes its sockets and pid
 * file (doorbell.shm is left for the launcher).  A node<k>.sock only appears
 * once it accepts connections; the pid is written once all of them do (with
 * -F by the server, else by the parent before it exits 0).
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#define PROTO_VERSION	0
#define MAX_NODES	16
#define MAX_VECTORS	64
#define MIN_SHM_SIZE	4096ULL
#define MAX_SHM_SIZE	(1ULL << 40)
#define QUEUE_MAX	16384		/* queued messages before a client is dropped */
#define NOFILE_WANT	65536		/* see raise_nofile() */
#define SHM_NAME	"doorbell.shm"
#define PID_NAME	"server.pid"

/*
 * A peer's eventfds, shared by the peer id (for the server's whole life) and
 * the messages queued to clients
 */
struct evset {
	unsigned int refs;
	unsigned int n;
	int fd[];
};

struct msg {
	int64_t val;
	int fd;			/* fd to pass, or -1 */
	struct evset *ref;	/* keeps fd open while queued, or NULL */
};

struct peer {
	unsigned int id;
	int sock;		/* -1: nobody connected on this id */
	const char *why;	/* set once the peer must go */
	int err;
	uint32_t known;		/* peers whose eventfds this client was sent */
	struct evset *ev;	/* NULL until the id's first client; then kept */
	struct msg *q;
	unsigned int qhead, qtail, qcap;
};

struct server {
	const char *dir;
	unsigned int nodes;
	unsigned int vectors;
	uint64_t shm_size;
	bool foreground;
	bool pid_locked;
	int pid_fd;
	int shm_fd;
	int sig_fd;
	int lsock[MAX_NODES];
	struct peer peer[MAX_NODES];
};

static void logmsg(const char *fmt, ...)
{
	char buf[512];
	struct timespec ts;
	struct tm tm;
	size_t len;
	ssize_t n;
	va_list ap;

	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	len = strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
	len += snprintf(buf + len, sizeof(buf) - len, ".%03ld ivshmem-server[%d]: ",
			ts.tv_nsec / 1000000, (int)getpid());
	va_start(ap, fmt);
	vsnprintf(buf + len, sizeof(buf) - len, fmt, ap);
	va_end(ap);
	len = strlen(buf);
	if (len == sizeof(buf) - 1)
		len--;
	buf[len++] = '\n';
	n = write(STDERR_FILENO, buf, len);	/* nowhere to report failure */
	(void)n;
}

/* ---- eventfd sets ---- */

static void evset_put(struct evset *ev)
{
	unsigned int i;

	if (!ev || --ev->refs)
		return;
	for (i = 0; i < ev->n; i++)
		close(ev->fd[i]);
	free(ev);
}

static struct evset *evset_get(struct evset *ev)
{
	if (ev)
		ev->refs++;
	return ev;
}

static struct evset *evset_new(unsigned int n)
{
	struct evset *ev = calloc(1, sizeof(*ev) + n * sizeof(int));
	int err;

	if (!ev)
		return NULL;
	ev->refs = 1;
	for (ev->n = 0; ev->n < n; ev->n++) {
		ev->fd[ev->n] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (ev->fd[ev->n] < 0) {
			err = errno;
			evset_put(ev);
			errno = err;
			return NULL;
		}
	}
	return ev;
}

/* Reset every counter of @ev, so that rings of the past are not delivered */
static void evset_drain(struct evset *ev)
{
	uint64_t cnt;
	unsigned int i;

	for (i = 0; i < ev->n; i++)
		if (read(ev->fd[i], &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
			logmsg("eventfd: read: %m");
}

/* ---- per-client output queue ---- */

static bool peer_live(const struct peer *p)
{
	return p->sock >= 0 && !p->why;
}

/* Mark @p for removal; the first reason wins.  reap() does the rest. */
static void peer_drop(struct peer *p, const char *why, int err)
{
	if (!p->why) {
		p->why = why;
		p->err = err;
	}
}

static int queue_grow(struct peer *p)
{
	unsigned int len = p->qtail - p->qhead;
	unsigned int cap;
	struct msg *q;

	if (p->qhead) {
		memmove(p->q, p->q + p->qhead, len * sizeof(*q));
		p->qhead = 0;
		p->qtail = len;
		if (len < p->qcap)
			return 0;
	}
	if (len >= QUEUE_MAX) {
		peer_drop(p, "not reading, queue full", 0);
		return -1;
	}
	cap = p->qcap ? 2 * p->qcap : 64;
	q = realloc(p->q, cap * sizeof(*q));
	if (!q) {
		peer_drop(p, "queue", ENOMEM);
		return -1;
	}
	p->q = q;
	p->qcap = cap;
	return 0;
}

static void peer_queue(struct peer *p, int64_t val, int fd, struct evset *ref)
{
	struct msg *m;

	if (p->why || (p->qtail == p->qcap && queue_grow(p) < 0))
		return;
	m = &p->q[p->qtail++];
	m->val = val;
	m->fd = fd;
	m->ref = evset_get(ref);
}

/* Queue @of's id once per vector, each with one of its eventfds, to @to */
static void peer_queue_ids(struct peer *to, struct peer *of)
{
	unsigned int v;

	for (v = 0; v < of->ev->n; v++)
		peer_queue(to, of->id, of->ev->fd[v], of->ev);
	to->known |= 1U << of->id;
}

static ssize_t send_msg(int sock, int64_t val, int fd)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	uint64_t le = htole64((uint64_t)val);
	struct iovec iov = { .iov_base = &le, .iov_len = sizeof(le) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cmsg;

	if (fd >= 0) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		cmsg = CMSG_FIRSTHDR(&mh);
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		cmsg->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
	}
	return sendmsg(sock, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* Send as much of @p's queue as its socket takes without blocking */
static void peer_flush(struct peer *p)
{
	struct msg *m;
	ssize_t n;

	while (!p->why && p->qhead < p->qtail) {
		m = &p->q[p->qhead];
		n = send_msg(p->sock, m->val, m->fd);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;		/* poll() for POLLOUT */
		if (n < 0) {
			peer_drop(p, "send", errno);
			return;
		}
		if (n != sizeof(m->val)) {	/* AF_UNIX never does this */
			peer_drop(p, "short send", 0);
			return;
		}
		evset_put(m->ref);
		p->qhead++;
	}
	if (p->qhead == p->qtail)
		p->qhead = p->qtail = 0;
}

/* Forget @p's client: its socket and queue; the id keeps its eventfds */
static void peer_disconnect(struct peer *p)
{
	while (p->qhead < p->qtail)
		evset_put(p->q[p->qhead++].ref);
	free(p->q);
	p->q = NULL;
	p->qhead = p->qtail = p->qcap = 0;
	if (p->sock >= 0)
		close(p->sock);
	p->sock = -1;
	p->why = NULL;
	p->err = 0;
	p->known = 0;
}

/* ---- joins and leaves ---- */

/*
 * Disconnect every dropped peer.  Nobody is told (see the top of the file):
 * no message is sent, so this cannot drop anyone else.
 */
static void reap(struct server *s)
{
	struct peer *p;
	unsigned int i;

	for (i = 0; i < s->nodes; i++) {
		p = &s->peer[i];
		if (p->sock < 0 || !p->why)
			continue;
		logmsg("peer %u left: %s%s%s; keeping its eventfds", i, p->why,
		       p->err ? ": " : "", p->err ? strerror(p->err) : "");
		peer_disconnect(p);
	}
}

static void peer_greet(struct server *s, struct peer *p)
{
	unsigned int i;

	peer_queue(p, PROTO_VERSION, -1, NULL);
	peer_queue(p, p->id, -1, NULL);
	peer_queue(p, -1, s->shm_fd, NULL);
	for (i = 0; i < s->nodes; i++)
		if (i != p->id && s->peer[i].ev)
			peer_queue_ids(p, &s->peer[i]);
	peer_queue_ids(p, p);
	peer_flush(p);
}

/* Send @p's eventfds to every other client that does not have them yet */
static void peer_announce(struct server *s, struct peer *p)
{
	struct peer *q;
	unsigned int i;

	for (i = 0; i < s->nodes; i++) {
		q = &s->peer[i];
		if (q != p && peer_live(q) && !(q->known & (1U << p->id))) {
			peer_queue_ids(q, p);
			peer_flush(q);
		}
	}
}

static void accept_client(struct server *s, unsigned int id)
{
	struct peer *p = &s->peer[id];
	int sock;

	sock = accept4(s->lsock[id], NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (sock < 0) {
		if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
			logmsg("node%u.sock: accept: %m", id);
		return;
	}
	if (p->sock >= 0) {
		logmsg("refused a client on node%u.sock: peer %u is connected",
		       id, id);
		close(sock);
		return;
	}
	if (p->ev) {
		evset_drain(p->ev);
		logmsg("peer %u joined on node%u.sock again, with its earlier eventfds",
		       id, id);
	} else {
		p->ev = evset_new(s->vectors);
		if (!p->ev) {
			logmsg("refused a client on node%u.sock: eventfd: %m", id);
			close(sock);
			return;
		}
		logmsg("peer %u joined on node%u.sock", id, id);
	}
	p->sock = sock;
	peer_greet(s, p);
	if (!p->why)
		peer_announce(s, p);
}

/* Clients never send; read and ignore anything, and notice EOF */
static void peer_input(struct peer *p, short revents)
{
	char buf[256];
	ssize_t n;

	if (revents & POLLIN) {
		n = recv(p->sock, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0)
			peer_drop(p, "disconnected", 0);
		else if (n < 0 && errno != EAGAIN && errno != EINTR)
			peer_drop(p, "recv", errno);
	} else if (revents & (POLLHUP | POLLERR)) {
		peer_drop(p, "disconnected", 0);
	}
}

/* ---- main loop ---- */

static int serve(struct server *s)
{
	struct pollfd pfd[1 + 2 * MAX_NODES];
	struct pollfd *lpfd = pfd + 1, *ppfd = pfd + 1 + s->nodes;
	struct signalfd_siginfo si;
	struct peer *p;
	unsigned int i;

	for (;;) {
		pfd[0] = (struct pollfd){ .fd = s->sig_fd, .events = POLLIN };
		for (i = 0; i < s->nodes; i++) {
			p = &s->peer[i];
			lpfd[i] = (struct pollfd){ .fd = s->lsock[i], .events = POLLIN };
			ppfd[i] = (struct pollfd){ .fd = p->sock, .events = POLLIN };
			if (p->qhead < p->qtail)
				ppfd[i].events |= POLLOUT;
		}
		if (poll(pfd, 1 + 2 * s->nodes, -1) < 0) {
			if (errno == EINTR)
				continue;
			logmsg("poll: %m");
			return -1;
		}
		if (pfd[0].revents) {
			if (read(s->sig_fd, &si, sizeof(si)) != sizeof(si))
				si.ssi_signo = 0;
			logmsg("%s, exiting", si.ssi_signo ?
			       strsignal(si.ssi_signo) : "signal");
			return 0;
		}
		for (i = 0; i < s->nodes; i++) {
			p = &s->peer[i];
			if (p->sock < 0 || !ppfd[i].revents)
				continue;
			if (ppfd[i].revents & POLLOUT)
				peer_flush(p);
			peer_input(p, ppfd[i].revents);
		}
		reap(s);
		for (i = 0; i < s->nodes; i++) {
			if (lpfd[i].revents & POLLIN) {
				accept_client(s, i);
				reap(s);
			}
		}
	}
}

/* ---- setup and teardown ---- */

static int pidfile_lock(struct server *s)
{
	s->pid_fd = open(PID_NAME, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (s->pid_fd < 0) {
		logmsg("%s/%s: %m", s->dir, PID_NAME);
		return -1;
	}
	if (flock(s->pid_fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK)
			logmsg("another server is running in %s", s->dir);
		else
			logmsg("%s/%s: flock: %m", s->dir, PID_NAME);
		return -1;
	}
	s->pid_locked = true;
	return 0;
}

static int pidfile_write(struct server *s, pid_t pid)
{
	char buf[24];
	int len = snprintf(buf, sizeof(buf), "%d\n", (int)pid);

	if (ftruncate(s->pid_fd, 0) < 0 || pwrite(s->pid_fd, buf, len, 0) != len) {
		logmsg("%s/%s: write: %m", s->dir, PID_NAME);
		return -1;
	}
	return 0;
}

/*
 * The header that makes the memory SCIF's (struct scif_iv_header in
 * drivers/misc/scif/bus/scif_ivshmem.c): scif_ivshmem takes a doorbell
 * device only if its memory starts with it, and writes nothing into any
 * other.
 */
struct scif_table_header {
	uint64_t magic;		/* "SCIFTBL1" */
	uint32_t version;	/* 1 */
	uint32_t max_nodes;	/* 16 */
	uint32_t slot_size;	/* 512 */
	uint32_t slots_off;	/* 4096: the slots follow in the next page */
};

#define SCIF_TABLE_MAGIC	0x314c425446494353ULL

/*
 * A fresh file each time: a QEMU still mapping an old doorbell.shm keeps its
 * pages instead of having the file truncated under it.
 */
static int shm_create(struct server *s)
{
	struct scif_table_header h = {
		.magic = SCIF_TABLE_MAGIC, .version = 1, .max_nodes = 16,
		.slot_size = 512, .slots_off = 4096,
	};

	if (unlink(SHM_NAME) < 0 && errno != ENOENT)
		goto fail;
	s->shm_fd = open(SHM_NAME, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (s->shm_fd < 0)
		goto fail;
	if (ftruncate(s->shm_fd, (off_t)s->shm_size) < 0)
		goto fail;
	/* (scif_ivshmem also wants 4096 + 16 * 512 bytes at least.) */
	if (pwrite(s->shm_fd, &h, sizeof(h), 0) != sizeof(h))
		goto fail;
	return 0;
fail:
	logmsg("%s/%s: %m", s->dir, SHM_NAME);
	return -1;
}

/*
 * Bind under a temporary name and rename() once listening, so a launcher
 * that waits for node<k>.sock to appear never sees it refuse connections
 * (the rename also replaces a stale socket left by a killed server).
 */
static int listen_node(struct server *s, unsigned int id)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char name[32];
	int fd;

	snprintf(name, sizeof(name), "node%u.sock", id);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s.new", name);
	if (unlink(sa.sun_path) < 0 && errno != ENOENT)
		goto fail;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		goto fail;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 8) < 0 || rename(sa.sun_path, name) < 0) {
		logmsg("%s/%s: %m", s->dir, sa.sun_path);
		close(fd);
		unlink(sa.sun_path);
		return -1;
	}
	s->lsock[id] = fd;
	return 0;
fail:
	logmsg("%s/%s: %m", s->dir, sa.sun_path);
	return -1;
}

static int signals_setup(struct server *s)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		goto fail;
	s->sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->sig_fd < 0)
		goto fail;
	return 0;
fail:
	logmsg("signals: %m");
	return -1;
}

/*
 * Besides our own eventfds, every fd sitting in a client's socket counts
 * against the sender's RLIMIT_NOFILE (unless root): ask for more than 1024.
 */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= NOFILE_WANT)
		return;
	rl.rlim_cur = rl.rlim_max < NOFILE_WANT ? rl.rlim_max : NOFILE_WANT;
	setrlimit(RLIMIT_NOFILE, &rl);
}

static int setup(struct server *s)
{
	unsigned int i;

	if (chdir(s->dir) < 0) {
		logmsg("%s: %m", s->dir);
		return -1;
	}
	if (signals_setup(s) < 0 || pidfile_lock(s) < 0 || shm_create(s) < 0)
		return -1;
	for (i = 0; i < s->nodes; i++)
		if (listen_node(s, i) < 0)
			return -1;
	return 0;
}

static void teardown(struct server *s)
{
	char name[32];
	unsigned int i;

	for (i = 0; i < s->nodes; i++) {
		peer_disconnect(&s->peer[i]);
		evset_put(s->peer[i].ev);
		s->peer[i].ev = NULL;
		if (s->lsock[i] < 0)
			continue;
		close(s->lsock[i]);
		snprintf(name, sizeof(name), "node%u.sock", i);
		unlink(name);
	}
	if (s->shm_fd >= 0)
		close(s->shm_fd);
	if (s->sig_fd >= 0)
		close(s->sig_fd);
	if (s->pid_locked)
		unlink(PID_NAME);
	if (s->pid_fd >= 0)
		close(s->pid_fd);
}

/*
 * The sockets already listen, so the launcher may connect as soon as the
 * parent exits; the parent records the daemon's pid before it does.
 */
static int daemonize(struct server *s)
{
	pid_t pid;
	int fd;

	pid = fork();
	if (pid < 0) {
		logmsg("fork: %m");
		return -1;
	}
	if (pid > 0) {
		if (pidfile_write(s, pid) < 0) {
			kill(pid, SIGTERM);
			_exit(1);
		}
		_exit(0);
	}
	setsid();
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		close(fd);
	}
	return 0;
}

/* ---- command line ---- */

static void usage(void)
{
	fprintf(stderr,
		"Usage: scif-ivshmem-server -d DIR -n NODES -v VECTORS -s SHM_SIZE [-F]\n"
		"  -d DIR      create DIR/doorbell.shm, DIR/node<k>.sock, DIR/server.pid\n"
		"  -n NODES    number of peers, 1..%d; node<k>.sock gives peer id k\n"
		"  -v VECTORS  eventfds per peer, 1..%d\n"
		"  -s SIZE     doorbell memory size in bytes, a power of two >= 4096\n"
		"              (K, M, G suffixes allowed)\n"
		"  -F          stay in the foreground\n", MAX_NODES, MAX_VECTORS);
}

static int parse_uint(const char *str, unsigned int min, unsigned int max,
		      unsigned int *out)
{
	unsigned long val;
	char *end;

	if (*str < '0' || *str > '9')
		return -1;
	errno = 0;
	val = strtoul(str, &end, 10);
	if (errno || *end || val < min || val > max)
		return -1;
	*out = val;
	return 0;
}

static int parse_size(const char *str, uint64_t *out)
{
	unsigned long long val;
	unsigned int shift = 0;
	char *end;

	if (*str < '0' || *str > '9')
		return -1;
	errno = 0;
	val = strtoull(str, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'G': case 'g':
		shift += 10;
		/* fall through */
	case 'M': case 'm':
		shift += 10;
		/* fall through */
	case 'K': case 'k':
		shift += 10;
		end++;
		/* fall through */
	case '\0':
		break;
	default:
		return -1;
	}
	if (*end || val > (MAX_SHM_SIZE >> shift))
		return -1;
	val <<= shift;
	if (val < MIN_SHM_SIZE || (val & (val - 1)))
		return -1;
	*out = val;
	return 0;
}

static int parse_args(struct server *s, int argc, char **argv)
{
	int opt;

	while ((opt = getopt(argc, argv, "d:n:v:s:Fh")) != -1) {
		switch (opt) {
		case 'd':
			s->dir = optarg;
			break;
		case 'n':
			if (parse_uint(optarg, 1, MAX_NODES, &s->nodes) < 0)
				goto bad;
			break;
		case 'v':
			if (parse_uint(optarg, 1, MAX_VECTORS, &s->vectors) < 0)
				goto bad;
			break;
		case 's':
			if (parse_size(optarg, &s->shm_size) < 0)
				goto bad;
			break;
		case 'F':
			s->foreground = true;
			break;
		default:
			usage();
			return -1;
		}
	}
	if (optind == argc && s->dir && s->nodes && s->vectors && s->shm_size)
		return 0;
	usage();
	return -1;
bad:
	fprintf(stderr, "ivshmem-server: bad value for -%c: '%s'\n", opt, optarg);
	usage();
	return -1;
}

static void server_init(struct server *s)
{
	unsigned int i;

	memset(s, 0, sizeof(*s));
	s->pid_fd = s->shm_fd = s->sig_fd = -1;
	for (i = 0; i < MAX_NODES; i++) {
		s->lsock[i] = -1;
		s->peer[i].id = i;
		s->peer[i].sock = -1;
	}
}

int main(int argc, char **argv)
{
	struct server s;
	int ret;

	server_init(&s);
	if (parse_args(&s, argc, argv) < 0)
		return 2;
	raise_nofile();
	ret = setup(&s);
	if (!ret)
		ret = s.foreground ? pidfile_write(&s, getpid()) : daemonize(&s);
	if (!ret) {
		logmsg("serving %u nodes, %u vectors, %" PRIu64
		       " bytes of doorbell memory in %s",
		       s.nodes, s.vectors, s.shm_size, s.dir);
		ret = serve(&s);
	}
	teardown(&s);
	return ret ? 1 : 0;
}
