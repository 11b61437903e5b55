// SPDX-License-Identifier: GPL-2.0
/*
 * scif_fp_fuzz: a hostile user of SCIF's user-space data path.
 *
 *   scif_fp_fuzz [-s SEED] [-n OPS] [-T SECONDS] [-p PAIRS] [-w WRITERS]
 *                [-k KTHREADS] [-u UID] [-v]
 *
 * Started as root, it forks a child that drops to UID (default 65534)
 * and connects PAIRS (default 8) endpoint pairs on the local node, each
 * end with its data path mapped by hand (SCIF_FP_OPEN, then the counter
 * page, our half read-only and the peer's half read-write, as libscif
 * maps them; Documentation/scif/fastpath.rst).  Then, until OPS
 * operations (calls plus word writes; default 200000) or SECONDS
 * (default 45) are done:
 *
 * - WRITERS threads (default 2) write into every word a user can write:
 *   the counter page (tx_write, rx_read, both lock words, the state, the
 *   four traffic counts, the padding) and the peer's half (rx_write,
 *   rx_waiting, tx_wanted, tx_read, the padding, ring bytes and the
 *   bytes past the ring to the end of the last page), with plausible
 *   small steps (60 %), 0, ~0, 2^31 +- 1, the ring size +- 1, the
 *   current count +- 1, one ring ahead or
 *   behind, huge and "negative" 64-bit counts, live, dead, forged and
 *   the kernel's holder values for the locks, and racing flips (a word
 *   toggled between a sane and an insane value many times in a row);
 * - KTHREADS threads (default 2) call SCIF_SEND and SCIF_RECV through
 *   the ioctl itself (kxfer(), no libscif), blocking or not, with bad
 *   flags and negative lengths too, SCIF_FP_NOTIFY with good and bad
 *   arguments, poll(), SCIF_FP_OPEN and mmap() of its file at any
 *   offset, length and protection, and mprotect() of our half to
 *   writable;
 * - one thread calls libscif's scif_send() and scif_recv() on the same
 *   endpoints (libscif maps the same data path: SCIF_FASTPATH_WARMUP=0);
 * - one thread closes one end of a pair, or both, and connects and maps
 *   them again (mostly, once the kernel reset them), or maps an end's
 *   data path again;
 * - a bystander pair, never written into, streams a pattern with
 *   libscif and the ioctls mixed, which its receiver compares byte by
 *   byte;
 * - a monitor samples /sys/class/misc/scif/nodes/<n>/stats/.
 *
 * A watchdog interrupts (SIGUSR1, no SA_RESTART) any call that has run
 * for 200 ms: a lock word held by a live process makes the kernel wait
 * in an interruptible sleep.
 *
 * Checks (TAP, printed by the parent): the calls completed (none stayed
 * in the kernel 30 s after it was interrupted); every failed call gave an
 * errno the interface documents for it (table errs[] below; EINTR only
 * when a signal came during that call); the bystander's bytes all
 * arrived, equal, with no stall of 20 s; the node statistics never went
 * back and never counted more messages than bytes; every endpoint closed
 * with 0; after the child is gone the driver's endpoint count
 * (<debugfs>/scif/endpoints) is back where it was.  The kernel log is
 * checked by the harness.
 *
 * The seed is printed; each thread's random choices follow from it, the
 * interleaving of the threads does not.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <linux/scif_ioctl.h>

#include "scif.h"
#include "scif_fp_raw.h"
#include "scif_fuzz_rng.h"

#define MAXPAIRS	64
#define MAXW		16
#define BUFSZ		(256 * 1024)
#define QUICK_MS	200
#define SETUP_MS	5000
#define HANG_MS		30000
#define STALL_MS	20000
#define PID_LIMIT	(4 * 1024 * 1024)	/* PID_MAX_LIMIT on 64 bits */
#define EPD_LIST	"/sys/kernel/debug/scif/endpoints"

/* ---- Calls and the errno values documented for them ---- */

enum op {
	C_SEND, C_RECV, C_NOTIFY, C_POLL, C_FP_OPEN, C_MMAP, C_MPROTECT,
	C_LSEND, C_LRECV, C_CLOSE, C_SETUP, C_BYSTANDER, NR_OPS
};

static const char *const op_name[NR_OPS] = {
	"SCIF_SEND", "SCIF_RECV", "SCIF_FP_NOTIFY", "poll", "SCIF_FP_OPEN",
	"mmap", "mprotect", "scif_send", "scif_recv", "scif_close",
	"connect", "bystander",
};

typedef unsigned __int128 errset;
#define E(x)	((errset)1 << (x))
/*
 * What each call may fail with on a connection whose data path its user
 * wrote anything into (scif_send.3, scif_recv.3, fastpath.rst): the
 * connection reset by the kernel (ECONNRESET) or not connected any more
 * (ENOTCONN, once the peer is gone and for an end never connected).
 * EINVAL only where the fuzzer passed bad flags or a negative length
 * (the op adds it), EINTR only when a signal came during the call.
 */
static const errset errs[NR_OPS] = {
	[C_SEND] = E(ECONNRESET) | E(ENOTCONN),
	[C_RECV] = E(ECONNRESET) | E(ENOTCONN),
	[C_NOTIFY] = E(ECONNRESET) | E(ENOTCONN),
	[C_POLL] = 0,
	/* fastpath.rst: flags; not connected; no memory (the two pages). */
	[C_FP_OPEN] = E(ECONNRESET) | E(ENOTCONN) | E(ENOMEM),
	/*
	 * Parts only, whole pages of one part, shared, never executable;
	 * mmap(2) itself: EOVERFLOW, ENOMEM, EPERM (PROT_EXEC on a no-exec
	 * file system, as the pseudo file system of the file may be).
	 */
	[C_MMAP] = E(EINVAL) | E(EACCES) | E(ENOMEM) | E(EOVERFLOW) |
		E(EPERM),
	/* Our half is never writable. */
	[C_MPROTECT] = E(EACCES),
	[C_LSEND] = E(ECONNRESET) | E(ENOTCONN),
	[C_LRECV] = E(ECONNRESET) | E(ENOTCONN),
	[C_CLOSE] = 0,
	/* Non-blocking connect under way. */
	[C_SETUP] = E(EINPROGRESS),
	[C_BYSTANDER] = 0,
};

/* ---- Options and shared state ---- */

static uint64_t opt_seed;
static long opt_ops = 200000;
static int opt_secs = 45;
static int opt_pairs = 8;
static int opt_writers = 2;
static int opt_kthreads = 2;
static uid_t opt_uid = 65534;
static int opt_verbose;

static uint16_t self_node;
static atomic_bool stop;
static long t_start;

/*
 * One end of a fuzzed pair.  lk is held for reading by whoever uses the
 * descriptor or the mappings, for writing by whoever closes or unmaps.
 */
struct side {
	pthread_rwlock_t lk;
	int fd;			/* -1: closed */
	bool mapped;
	struct rawfp fp;
};

static struct side sides[2 * MAXPAIRS];
static int listen_fd = -1;
static uint16_t listen_port;
static pthread_mutex_t setup_lock = PTHREAD_MUTEX_INITIALIZER;

static atomic_long n_calls, n_writes, n_resets, n_eintr, n_bad_errno,
	n_hung, n_stats_bad, n_close_bad, n_pairs_made;
static atomic_long ok_hist[NR_OPS];
static atomic_long err_hist[NR_OPS][134];

/* Per-thread state, read by the watchdog. */
struct worker {
	pthread_t tid;
	int idx;
	uint64_t rng;
	atomic_long call_start;		/* ms; 0 outside a call */
	atomic_int limit_ms;
	atomic_int op;
	bool hung_reported;
	char *buf;
};

static struct worker workers[MAXW + 8];
static int nworkers;
/* SIGUSR1s this thread took, and their number when its call began. */
static __thread volatile sig_atomic_t usr1_seen;
static __thread sig_atomic_t usr1_at_begin;


static bool budget_left(void)
{
	return !atomic_load(&stop) &&
	       atomic_load(&n_calls) + atomic_load(&n_writes) < opt_ops &&
	       fuzz_now_ms() - t_start < opt_secs * 1000L;
}

/* ---- Calls: timing, interruption, errno ---- */

static void on_usr1(int sig)
{
	(void)sig;
	usr1_seen++;
}

static void call_begin(struct worker *w, enum op op, int limit)
{
	usr1_at_begin = usr1_seen;
	atomic_store(&w->op, op);
	atomic_store(&w->limit_ms, limit);
	atomic_store(&w->call_start, fuzz_now_ms());
}

/*
 * The end of a call that returned @ret (< 0: failed with @err); @extra
 * are the errno values this call's arguments made legitimate.
 */
static void call_end(struct worker *w, enum op op, long ret, int err,
		     errset extra)
{
	bool signalled = usr1_seen != usr1_at_begin;

	atomic_store(&w->call_start, 0);
	atomic_fetch_add(&n_calls, 1);
	if (ret >= 0) {
		atomic_fetch_add(&ok_hist[op], 1);
		return;
	}
	if (err > 0 && err < 134)
		atomic_fetch_add(&err_hist[op][err], 1);
	if (err == ECONNRESET)
		atomic_fetch_add(&n_resets, 1);
	if (err == EINTR && signalled) {
		atomic_fetch_add(&n_eintr, 1);
		return;
	}
	if (err > 0 && err < 128 && ((errs[op] | extra) & E(err)))
		return;
	atomic_fetch_add(&n_bad_errno, 1);
	printf("# UNDOCUMENTED: thread %d %s failed with %s (%d)%s\n", w->idx,
	       op_name[op], strerrorname_np(err) ?: "?", err,
	       signalled ? " after a signal" : "");
}

/* Interrupts calls that run too long; reports those that never end. */
static void *watchdog_main(void *arg)
{
	int i;

	(void)arg;
	while (!atomic_load(&stop)) {
		long now = fuzz_now_ms();

		for (i = 0; i < nworkers; i++) {
			struct worker *w = &workers[i];
			long t0 = atomic_load(&w->call_start);

			if (!t0 || now - t0 < atomic_load(&w->limit_ms))
				continue;
			pthread_kill(w->tid, SIGUSR1);
			if (now - t0 > HANG_MS && !w->hung_reported) {
				w->hung_reported = true;
				atomic_fetch_add(&n_hung, 1);
				printf("# HANG: thread %d in %s for %ld ms\n", i,
				       op_name[atomic_load(&w->op)], now - t0);
			}
		}
		usleep(20000);
	}
	return NULL;
}

/* ---- Pairs: connect, map, close ---- */

/* Map @s's data path by hand; a failure of SCIF_FP_OPEN is a call. */
static void side_map(struct worker *w, struct side *s)
{
	int err;

	call_begin(w, C_FP_OPEN, SETUP_MS);
	err = rawfp_open(s->fd, &s->fp);
	call_end(w, C_FP_OPEN, err, errno, 0);
	if (!err) {
		s->mapped = true;
		return;
	}
	/* rawfp_open() maps nothing once SCIF_FP_OPEN failed. */
	if (s->fp.ctl && s->fp.ctl != MAP_FAILED)
		munmap(s->fp.ctl, sysconf(_SC_PAGESIZE));
	if (s->fp.local && s->fp.local != MAP_FAILED)
		munmap((void *)s->fp.local, s->fp.req.local_len);
	if (s->fp.remote && s->fp.remote != MAP_FAILED)
		munmap(s->fp.remote, s->fp.req.remote_len);
	s->mapped = false;
}

/* Unmap and close @s; its lock held for writing. */
static void side_close(struct worker *w, struct side *s)
{
	int ret;

	if (s->mapped)
		rawfp_close(&s->fp);
	s->mapped = false;
	if (s->fd < 0)
		return;
	call_begin(w, C_CLOSE, SETUP_MS);
	ret = scif_close(s->fd);
	call_end(w, C_CLOSE, ret, errno, 0);
	if (ret) {
		atomic_fetch_add(&n_close_bad, 1);
		printf("# scif_close(%d): %s\n", s->fd, strerror(errno));
	}
	s->fd = -1;
}

/* A new connection: *@c the connector, *@a the accepted end; 0 or -1. */
static int connect_one(struct worker *w, int *c, int *a)
{
	struct scif_port_id dst = { .node = self_node, .port = listen_port };
	struct scif_port_id peer;
	int r, e;

	*a = -1;
	pthread_mutex_lock(&setup_lock);
	*c = scif_open();
	if (*c < 0) {
		pthread_mutex_unlock(&setup_lock);
		return -1;
	}
	fcntl(*c, F_SETFL, O_NONBLOCK);
	call_begin(w, C_SETUP, SETUP_MS);
	r = scif_connect(*c, &dst);
	e = errno;
	call_end(w, C_SETUP, r, e, 0);
	if (r >= 0 || e == EINPROGRESS) {
		call_begin(w, C_SETUP, SETUP_MS);
		r = scif_accept(listen_fd, &peer, a, SCIF_ACCEPT_SYNC);
		call_end(w, C_SETUP, r, errno, 0);
	}
	pthread_mutex_unlock(&setup_lock);
	if (*a >= 0 &&
	    poll(&(struct pollfd){ .fd = *c, .events = POLLOUT }, 1,
		 SETUP_MS) == 1) {
		fcntl(*c, F_SETFL, 0);
		atomic_fetch_add(&n_pairs_made, 1);
		return 0;
	}
	printf("# could not connect a pair\n");
	scif_close(*c);
	if (*a >= 0)
		scif_close(*a);
	*c = *a = -1;
	return -1;
}

/* Connect pair @p and map both ends; both locks held for writing. */
static void pair_make(struct worker *w, int p)
{
	struct side *s0 = &sides[2 * p], *s1 = &sides[2 * p + 1];

	if (connect_one(w, &s0->fd, &s1->fd))
		return;
	side_map(w, s0);
	side_map(w, s1);
}

/* ---- Values leaning to the edges ---- */

/*
 * A count: mostly a plausible step (garbage data that moves, the
 * connection lives on), else one of the edges, which mostly reset it.
 */
static uint32_t wild32(struct worker *w, uint32_t cur, uint32_t ring)
{
	if (fuzz_chance(&w->rng, 60))
		return cur + fuzz_below(&w->rng, 256);
	switch (fuzz_below(&w->rng, 14)) {
	case 0: return 0;
	case 1: return ~0U;
	case 2: return 0x7fffffff;
	case 3: return 0x80000000;
	case 4: return ring;
	case 5: return ring + 1;
	case 6: return cur + 1;
	case 7: return cur - 1;
	case 8: return cur + ring;
	case 9: return cur + ring + 1;
	case 10: return cur - ring - 1;
	case 11: return cur + fuzz_below(&w->rng, ring);	/* plausible: garbage data */
	case 12: return cur;
	default: return fuzz_rnd(&w->rng);
	}
}

static uint64_t wild64(struct worker *w, uint64_t cur)
{
	switch (fuzz_below(&w->rng, 10)) {
	case 0: return 0;
	case 1: return ~0ULL;
	case 2: return (1ULL << 31) - 1;
	case 3: return 1ULL << 62;
	case 4: return (uint64_t)-5000;
	case 5: return cur + (1ULL << 40);
	case 6: return cur - 1;
	case 7: return cur + fuzz_below(&w->rng, 1 << 20);
	case 8: return cur;
	default: return fuzz_rnd(&w->rng);
	}
}

static uint32_t wild_lock(struct worker *w)
{
	switch (fuzz_below(&w->rng, 10)) {
	case 0: return SCIF_FP_KERNEL;
	case 1: return getpid();		/* live: the kernel waits */
	case 2: return gettid();		/* a thread, not a process */
	case 3: return 1;			/* init: live */
	case 4: return PID_LIMIT + 1;
	case 5: return 0x80000000;
	case 6: return fuzz_rnd(&w->rng);
	default: return 0;			/* mostly: let go */
	}
}

/* ---- The writers ---- */

static void put32(volatile uint32_t *p, uint32_t v)
{
	*p = v;
	atomic_fetch_add(&n_writes, 1);
}

static void put64(volatile __u64 *p, uint64_t v)
{
	*p = v;
	atomic_fetch_add(&n_writes, 1);
}

/* A word of the counter page. */
static void write_ctl(struct worker *w, struct side *s)
{
	volatile struct scif_fp_ctl *c = s->fp.ctl;
	uint32_t ring = s->fp.req.tx_size, rring = s->fp.req.rx_size;

	switch (fuzz_below(&w->rng, 12)) {
	case 0: put32(&c->tx_write, wild32(w, c->tx_write, ring)); break;
	case 1: put32(&c->rx_read, wild32(w, c->rx_read, rring)); break;
	case 2: put32(&c->tx_lock, wild_lock(w)); break;
	case 3: put32(&c->rx_lock, wild_lock(w)); break;
	case 4: put32(&c->state, fuzz_below(&w->rng, 4) == 0 ? ~0U : fuzz_below(&w->rng, 3)); break;
	case 5: put64(&c->tx_bytes, wild64(w, c->tx_bytes)); break;
	case 6: put64(&c->tx_msgs, wild64(w, c->tx_msgs)); break;
	case 7: put64(&c->rx_bytes, wild64(w, c->rx_bytes)); break;
	case 8: put64(&c->rx_msgs, wild64(w, c->rx_msgs)); break;
	case 9: put32(&c->pad0[fuzz_below(&w->rng, 13)], fuzz_rnd(&w->rng)); break;
	case 10: put32(&c->pad1[fuzz_below(&w->rng, 14)], fuzz_rnd(&w->rng)); break;
	default:
		/* Past the structure, to the end of the page. */
		put32((uint32_t *)((char *)c + sizeof(*c)) +
		      fuzz_below(&w->rng, (4096 - sizeof(*c)) / 4), fuzz_rnd(&w->rng));
	}
}

/* A word of the peer's half: its header, its ring, or past the ring. */
static void write_remote(struct worker *w, struct side *s)
{
	volatile struct scif_fp_half *h = s->fp.remote;
	uint32_t ring = s->fp.req.tx_size, off;
	size_t len = s->fp.req.remote_len;

	switch (fuzz_below(&w->rng, 8)) {
	case 0: put32(&h->rx_write, wild32(w, h->rx_write, ring)); break;
	case 1: put32(&h->tx_read, wild32(w, h->tx_read, ring)); break;
	case 2: put32(&h->rx_waiting, fuzz_below(&w->rng, 3) ? fuzz_below(&w->rng, 2) : fuzz_rnd(&w->rng)); break;
	case 3: put32(&h->tx_wanted, fuzz_below(&w->rng, 3) ? fuzz_below(&w->rng, 2) : fuzz_rnd(&w->rng)); break;
	case 4:
		put32((uint32_t *)&h->pad0[4 * fuzz_below(&w->rng, 13)], fuzz_rnd(&w->rng));
		break;
	case 5:
		put32((uint32_t *)&h->pad1[4 * fuzz_below(&w->rng, 15)], fuzz_rnd(&w->rng));
		break;
	case 6:
		off = s->fp.req.ring_off + ring;
		if (off + 4 <= len)
			put32((uint32_t *)((char *)h + off +
					   4 * fuzz_below(&w->rng, (len - off) / 4)),
			      fuzz_rnd(&w->rng));
		break;
	default:
		put32((uint32_t *)((char *)h + s->fp.req.ring_off +
				   4 * fuzz_below(&w->rng, ring / 4)), fuzz_rnd(&w->rng));
	}
}

/*
 * Racing flips: one count toggled between its value and one a ring
 * ahead many times, then given back, while the kernel may be in a round.
 */
static void flip(struct worker *w, struct side *s)
{
	volatile uint32_t *p;
	uint32_t v, bad;
	int i, n = 16 + fuzz_below(&w->rng, 240);

	switch (fuzz_below(&w->rng, 4)) {
	case 0: p = &s->fp.ctl->tx_write; break;
	case 1: p = &s->fp.ctl->rx_read; break;
	case 2: p = &s->fp.remote->rx_write; break;
	default: p = &s->fp.remote->tx_read; break;
	}
	v = *p;
	bad = v + s->fp.req.tx_size + 1 + fuzz_below(&w->rng, 3);
	for (i = 0; i < n; i++)
		put32(p, i & 1 ? v : bad);
	put32(p, v);
}

static void *writer_main(void *arg)
{
	struct worker *w = arg;

	while (budget_left()) {
		struct side *s = &sides[fuzz_below(&w->rng, 2 * opt_pairs)];
		int i, n = 1 + fuzz_below(&w->rng, 8);

		pthread_rwlock_rdlock(&s->lk);
		if (s->mapped) {
			if (fuzz_chance(&w->rng, 5))
				flip(w, s);
			else
				for (i = 0; i < n; i++) {
					if (fuzz_chance(&w->rng, 50))
						write_ctl(w, s);
					else
						write_remote(w, s);
				}
			/* Often let go of the locks, so that calls move data. */
			if (fuzz_chance(&w->rng, 30)) {
				put32(&s->fp.ctl->tx_lock, 0);
				put32(&s->fp.ctl->rx_lock, 0);
			}
		}
		pthread_rwlock_unlock(&s->lk);
		/* About as many writes as calls, rather than 30 times more. */
		usleep(fuzz_below(&w->rng, 1000));
	}
	return NULL;
}

/* ---- The callers: the kernel's path and libscif's ---- */

static int wild_len(struct worker *w)
{
	static const int e[] = { 0, 1, 63, 64, 4095, 4096, 65535, 65536,
				 65537, 131072, BUFSZ };

	if (fuzz_chance(&w->rng, 30))
		return e[fuzz_below(&w->rng, sizeof(e) / sizeof(e[0]))];
	return fuzz_below(&w->rng, 8192);
}

/* mmap() of the file of SCIF_FP_OPEN at any offset, length, protection. */
static void wild_mmap(struct worker *w, struct side *s)
{
	static const int prots[] = {
		PROT_READ, PROT_READ | PROT_WRITE, PROT_WRITE,
		PROT_READ | PROT_EXEC, PROT_NONE,
	};
	struct scifioctl_fp req = { 0 };
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t off, len;
	int r, prot, flags;
	void *p;

	call_begin(w, C_FP_OPEN, QUICK_MS);
	r = ioctl(s->fd, SCIF_FP_OPEN, &req);
	call_end(w, C_FP_OPEN, r, errno, 0);
	if (r < 0)
		return;
	switch (fuzz_below(&w->rng, 5)) {
	case 0: off = 0; break;
	case 1: off = req.local_off; break;
	case 2: off = req.remote_off; break;
	case 3: off = req.remote_off + req.remote_len; break;
	default: off = fuzz_below(&w->rng, 40) * pg; break;
	}
	if (fuzz_chance(&w->rng, 5))
		off = fuzz_chance(&w->rng, 50) ? ~0ULL - pg + 1 : off + 1;
	len = fuzz_chance(&w->rng, 10) ? (uint64_t)1 << (30 + fuzz_below(&w->rng, 20)) :
			      (1 + fuzz_below(&w->rng, 20)) * pg;
	prot = prots[fuzz_below(&w->rng, 5)];
	flags = fuzz_chance(&w->rng, 85) ? MAP_SHARED : MAP_PRIVATE;
	call_begin(w, C_MMAP, QUICK_MS);
	p = mmap(NULL, len, prot, flags, req.fd, off);
	call_end(w, C_MMAP, p == MAP_FAILED ? -1 : 0, errno, 0);
	if (p != MAP_FAILED) {
		/* Read what it maps: a fault would end the fuzzer. */
		if ((prot & PROT_READ) && off + len <= req.remote_off +
		    req.remote_len && flags == MAP_SHARED)
			(void)*(volatile char *)p;
		munmap(p, len);
	}
	close(req.fd);
}

static void kcall(struct worker *w, struct side *s)
{
	int len, flags = 0, r, what, k = fuzz_below(&w->rng, 100);
	errset extra = 0;
	bool block = fuzz_chance(&w->rng, 10), tx;

	if (k < 60) {
		tx = k < 30;
		len = wild_len(w);
		if (block)
			flags = tx ? SCIF_SEND_BLOCK : SCIF_RECV_BLOCK;
		if (fuzz_chance(&w->rng, 3)) {
			flags |= 1 << (1 + fuzz_below(&w->rng, 30));
			extra = E(EINVAL);
		}
		if (fuzz_chance(&w->rng, 2)) {
			len = -1 - (int)fuzz_below(&w->rng, 1 << 30);
			extra = E(EINVAL);
		}
		call_begin(w, tx ? C_SEND : C_RECV, QUICK_MS);
		r = kxfer(s->fd, tx ? SCIF_SEND : SCIF_RECV, w->buf, len, flags);
		call_end(w, tx ? C_SEND : C_RECV, r, errno, extra);
	} else if (k < 75) {
		what = fuzz_chance(&w->rng, 90) ? 1 + fuzz_below(&w->rng, 2) : (int)fuzz_rnd(&w->rng);
		if (what != SCIF_FP_NOTIFY_DATA && what != SCIF_FP_NOTIFY_SPACE)
			extra = E(EINVAL);
		call_begin(w, C_NOTIFY, QUICK_MS);
		r = ioctl(s->fd, SCIF_FP_NOTIFY, what);
		call_end(w, C_NOTIFY, r, errno, extra);
	} else if (k < 85) {
		struct pollfd pfd = { .fd = s->fd, .events = POLLIN | POLLOUT };

		call_begin(w, C_POLL, QUICK_MS);
		r = poll(&pfd, 1, block ? 50 : 0);
		call_end(w, C_POLL, r, errno, 0);
	} else if (k < 95) {
		wild_mmap(w, s);
	} else if (s->mapped) {
		call_begin(w, C_MPROTECT, QUICK_MS);
		r = mprotect((void *)s->fp.local, s->fp.req.local_len,
			     PROT_READ | PROT_WRITE);
		call_end(w, C_MPROTECT, r, errno, 0);
		if (!r) {
			printf("# our half became writable\n");
			atomic_fetch_add(&n_bad_errno, 1);
		}
	}
}

static void lcall(struct worker *w, struct side *s)
{
	bool tx = fuzz_chance(&w->rng, 50), block = fuzz_chance(&w->rng, 5);
	errset extra = 0;
	int len = 1 + fuzz_below(&w->rng, 16384), flags = 0, r;

	if (block)
		flags = tx ? SCIF_SEND_BLOCK : SCIF_RECV_BLOCK;
	if (fuzz_chance(&w->rng, 2)) {
		flags = 4 + fuzz_below(&w->rng, 100);
		extra = E(EINVAL);
	}
	call_begin(w, tx ? C_LSEND : C_LRECV, QUICK_MS);
	r = tx ? scif_send(s->fd, w->buf, len, flags) :
		 scif_recv(s->fd, w->buf, len, flags);
	call_end(w, tx ? C_LSEND : C_LRECV, r, errno, extra);
}

static void *caller_main(void *arg)
{
	struct worker *w = arg;
	bool lib = w->idx == opt_writers + opt_kthreads;

	while (budget_left()) {
		struct side *s = &sides[fuzz_below(&w->rng, 2 * opt_pairs)];

		pthread_rwlock_rdlock(&s->lk);
		if (s->fd >= 0) {
			if (lib)
				lcall(w, s);
			else
				kcall(w, s);
		}
		pthread_rwlock_unlock(&s->lk);
	}
	return NULL;
}

/* Close and connect again, one end or both; map an end again. */
static void *reopen_main(void *arg)
{
	struct worker *w = arg;

	while (budget_left()) {
		int p = fuzz_below(&w->rng, opt_pairs), k = fuzz_below(&w->rng, 10);
		struct side *s0 = &sides[2 * p], *s1 = &sides[2 * p + 1];
		struct side *s = fuzz_chance(&w->rng, 50) ? s0 : s1;

		usleep(500 + fuzz_below(&w->rng, 5000));
		/* A pair the kernel reset (or half closed) is connected again. */
		if ((s0->fd < 0 || s1->fd < 0 ||
		     (s0->mapped && !s0->fp.ctl->state)) && fuzz_chance(&w->rng, 80))
			k = 5;
		if (k < 3) {
			/* One end goes; the other is fuzzed on, half dead. */
			pthread_rwlock_wrlock(&s->lk);
			side_close(w, s);
			pthread_rwlock_unlock(&s->lk);
		} else if (k < 7) {
			pthread_rwlock_wrlock(&s0->lk);
			pthread_rwlock_wrlock(&s1->lk);
			side_close(w, s0);
			side_close(w, s1);
			pair_make(w, p);
			pthread_rwlock_unlock(&s1->lk);
			pthread_rwlock_unlock(&s0->lk);
		} else {
			pthread_rwlock_wrlock(&s->lk);
			if (s->mapped)
				rawfp_close(&s->fp);
			s->mapped = false;
			if (s->fd >= 0)
				side_map(w, s);
			pthread_rwlock_unlock(&s->lk);
		}
	}
	return NULL;
}

/* ---- The bystander: a pair nobody writes into ---- */

static int by_tx = -1, by_rx = -1;
static atomic_ullong by_sent, by_recv, by_mismatch;
static atomic_bool by_done;		/* the sender has stopped */
static atomic_long by_last_progress, by_max_gap;

static uint8_t by_byte(uint64_t off)
{
	return (uint8_t)((off * 2654435761ULL) >> 13) ^ (uint8_t)opt_seed;
}

static void *by_sender(void *arg)
{
	struct worker *w = arg;
	uint64_t off = 0;

	while (budget_left()) {
		int len = 1 + fuzz_below(&w->rng, fuzz_chance(&w->rng, 10) ? BUFSZ : 4096), i, r;

		for (i = 0; i < len; i++)
			w->buf[i] = by_byte(off + i);
		if (fuzz_chance(&w->rng, 20))
			r = kxfer(by_tx, SCIF_SEND, w->buf, len, SCIF_SEND_BLOCK);
		else
			r = scif_send(by_tx, w->buf, len, SCIF_SEND_BLOCK);
		atomic_fetch_add(&n_calls, 1);
		if (r >= 0)
			atomic_fetch_add(&ok_hist[C_BYSTANDER], 1);
		if (r < 0) {
			printf("# bystander send: %s\n", strerror(errno));
			atomic_fetch_add(&by_mismatch, 1);
			break;
		}
		/* A blocking send moves everything unless interrupted. */
		off += r;
		atomic_store(&by_sent, off);
	}
	atomic_store(&by_done, true);
	return NULL;
}

static void *by_receiver(void *arg)
{
	struct worker *w = arg;
	uint64_t off = 0;
	long last = fuzz_now_ms(), deadline = 0;
	int i, r;

	for (;;) {
		long now = fuzz_now_ms();

		if (atomic_load(&by_done)) {
			if (off >= atomic_load(&by_sent))
				break;
			if (!deadline)
				deadline = now + STALL_MS;
			if (now > deadline) {
				printf("# bystander: %llu of %llu bytes arrived\n",
				       (unsigned long long)off,
				       (unsigned long long)atomic_load(&by_sent));
				atomic_fetch_add(&by_mismatch, 1);
				break;
			}
		}
		poll(&(struct pollfd){ .fd = by_rx, .events = POLLIN }, 1, 100);
		if (fuzz_chance(&w->rng, 20))
			r = kxfer(by_rx, SCIF_RECV, w->buf, BUFSZ, 0);
		else
			r = scif_recv(by_rx, w->buf, BUFSZ, 0);
		atomic_fetch_add(&n_calls, 1);
		if (r >= 0)
			atomic_fetch_add(&ok_hist[C_BYSTANDER], 1);
		if (r < 0) {
			printf("# bystander recv: %s\n", strerror(errno));
			atomic_fetch_add(&by_mismatch, 1);
			break;
		}
		for (i = 0; i < r; i++)
			if ((uint8_t)w->buf[i] != by_byte(off + i)) {
				printf("# bystander: byte %llu is %#x, not %#x\n",
				       (unsigned long long)(off + i),
				       (uint8_t)w->buf[i], by_byte(off + i));
				atomic_fetch_add(&by_mismatch, 1);
				return NULL;
			}
		off += r;
		atomic_store(&by_recv, off);
		now = fuzz_now_ms();
		if (r > 0) {
			if (now - last > atomic_load(&by_max_gap))
				atomic_store(&by_max_gap, now - last);
			last = now;
			atomic_store(&by_last_progress, now);
		} else if (!atomic_load(&by_done) && now - last > STALL_MS &&
			   atomic_load(&by_sent) > off) {
			printf("# bystander: no byte for %ld ms\n", now - last);
			atomic_fetch_add(&by_mismatch, 1);
			last = now;
		}
	}
	return NULL;
}

/* ---- The monitor: the node statistics stay sane ---- */

enum { TXM, TXB, RXM, RXB, UTXM, UTXB, URXM, URXB, NR_ST };
static const char *const st_name[NR_ST] = {
	"tx_msgs", "tx_bytes", "rx_msgs", "rx_bytes", "user_tx_msgs",
	"user_tx_bytes", "user_rx_msgs", "user_rx_bytes",
};

#define MAXNODES	8
static char node_dir[MAXNODES][128];
static int nnodes;
static long long st_prev[MAXNODES][NR_ST];
static long n_samples;

static long long read_ll(const char *dir, const char *name)
{
	char path[300], buf[64];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f) || sscanf(buf, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/*
 * One sample: counts never go back, and no more messages than bytes
 * (each message moved at least one byte).  Messages are read before
 * their bytes, so a sample taken during a round errs on the safe side.
 */
static void stats_sample(bool report)
{
	int n, i;

	for (n = 0; n < nnodes; n++) {
		long long v[NR_ST];

		for (i = 0; i < NR_ST; i++)
			v[i] = read_ll(node_dir[n], st_name[i]);
		for (i = 0; i < NR_ST; i++) {
			bool bad = v[i] < 0 || v[i] < st_prev[n][i] ||
				   (!(i & 1) && v[i] > v[i + 1]);

			if (bad) {
				atomic_fetch_add(&n_stats_bad, 1);
				printf("# stats: %s/%s %lld (was %lld; bytes %lld)\n",
				       node_dir[n], st_name[i], v[i],
				       st_prev[n][i], i & 1 ? v[i] : v[i + 1]);
			}
			st_prev[n][i] = v[i];
		}
		if (report)
			printf("# stats %s: tx %lld B %lld msgs, rx %lld B %lld msgs, user tx %lld B, user rx %lld B\n",
			       node_dir[n], v[TXB], v[TXM], v[RXB], v[RXM],
			       v[UTXB], v[URXB]);
	}
	n_samples++;
}

static void stats_init(void)
{
	glob_t g;
	size_t i;

	if (glob("/sys/class/misc/scif/nodes/*/stats", 0, NULL, &g))
		return;
	for (i = 0; i < g.gl_pathc && nnodes < MAXNODES; i++)
		if (strlen(g.gl_pathv[i]) < sizeof(node_dir[0]))
			strcpy(node_dir[nnodes++], g.gl_pathv[i]);
	globfree(&g);
	if (!nnodes) {
		printf("# no node statistics in sysfs\n");
		atomic_fetch_add(&n_stats_bad, 1);
	}
	stats_sample(true);
}

/* ---- The child ---- */

static void print_figures(long ms)
{
	long calls = atomic_load(&n_calls), writes = atomic_load(&n_writes);
	int i, e;

	printf("# fp-fuzz: seed %llu pairs %d ops %ld calls %ld writes %ld in %ld ms (%.0f ops/s)\n",
	       (unsigned long long)opt_seed, opt_pairs, calls + writes, calls,
	       writes, ms, ms ? 1000.0 * (calls + writes) / ms : 0.0);
	printf("# fp-fuzz-errno:");
	for (e = 1; e < 134; e++) {
		long c = 0;

		for (i = 0; i < NR_OPS; i++)
			c += atomic_load(&err_hist[i][e]);
		if (c)
			printf(" %s=%ld", strerrorname_np(e) ?: "?", c);
	}
	printf("\n");
	for (i = 0; i < NR_OPS; i++) {
		printf("# op %-15s ok %ld", op_name[i], atomic_load(&ok_hist[i]));
		for (e = 1; e < 134; e++)
			if (atomic_load(&err_hist[i][e]))
				printf(" %s %ld", strerrorname_np(e) ?: "?",
				       atomic_load(&err_hist[i][e]));
		printf("\n");
	}
	printf("# fp-fuzz: pairs connected %ld, resets %ld, interrupted %ld, undocumented %ld, hangs %ld, stats samples %ld (bad %ld), bad closes %ld\n",
	       atomic_load(&n_pairs_made), atomic_load(&n_resets),
	       atomic_load(&n_eintr), atomic_load(&n_bad_errno),
	       atomic_load(&n_hung), n_samples, atomic_load(&n_stats_bad),
	       atomic_load(&n_close_bad));
	printf("# fp-fuzz: bystander %llu bytes sent, %llu received, longest gap %ld ms, mismatches %llu\n",
	       (unsigned long long)atomic_load(&by_sent),
	       (unsigned long long)atomic_load(&by_recv),
	       atomic_load(&by_max_gap),
	       (unsigned long long)atomic_load(&by_mismatch));
}

static struct worker *new_worker(void)
{
	struct worker *w = &workers[nworkers];

	w->idx = nworkers++;
	w->rng = opt_seed * 0x9e3779b97f4a7c15ULL + w->idx + 1;
	w->buf = malloc(BUFSZ);
	return w;
}

static int start_listener(void)
{
	struct worker *w = new_worker();
	int r;

	listen_fd = scif_open();
	if (listen_fd < 0)
		return -1;
	r = scif_bind(listen_fd, 0);
	if (r < 0 || scif_listen(listen_fd, 16))
		return -1;
	listen_port = r;
	if (connect_one(w, &by_tx, &by_rx))
		return -1;
	return 0;
}

/* The unprivileged part; its exit status is a bit mask (see main). */
static int fuzz_child(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	pthread_rwlockattr_t rwa;
	pthread_t wd, bys, byr;
	int i, nth;
	long t0;

	if (getuid() == 0 &&
	    (setgroups(0, NULL) || setresgid(opt_uid, opt_uid, opt_uid) ||
	     setresuid(opt_uid, opt_uid, opt_uid))) {
		perror("# setresuid");
		return 64;
	}
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (start_listener()) {
		printf("# no listener or bystander: %s\n", strerror(errno));
		return 64;
	}
	stats_init();
	/* The closer must not starve behind the users of an end. */
	pthread_rwlockattr_init(&rwa);
	pthread_rwlockattr_setkind_np(&rwa,
				      PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	for (i = 0; i < 2 * opt_pairs; i++) {
		pthread_rwlock_init(&sides[i].lk, &rwa);
		sides[i].fd = -1;
	}
	for (i = 0; i < opt_pairs; i++)
		pair_make(&workers[0], i);
	t_start = t0 = fuzz_now_ms();
	/* workers[0] made the listener; the threads get their own. */
	nworkers = 0;
	nth = opt_writers + opt_kthreads + 2;
	for (i = 0; i < nth; i++)
		new_worker();
	for (i = 0; i < nth; i++)
		pthread_create(&workers[i].tid, NULL,
			       i < opt_writers ? writer_main :
			       i < nth - 1 ? caller_main : reopen_main,
			       &workers[i]);
	pthread_create(&wd, NULL, watchdog_main, NULL);
	pthread_create(&bys, NULL, by_sender, new_worker());
	pthread_create(&byr, NULL, by_receiver, new_worker());
	while (budget_left()) {
		usleep(50000);
		stats_sample(false);
		if (opt_verbose && !(n_samples % 100))
			printf("# %ld calls, %ld writes\n",
			       atomic_load(&n_calls), atomic_load(&n_writes));
	}
	for (i = 0; i < nth; i++)
		pthread_join(workers[i].tid, NULL);
	pthread_join(bys, NULL);
	pthread_join(byr, NULL);
	atomic_store(&stop, true);
	pthread_join(wd, NULL);
	stats_sample(true);
	print_figures(fuzz_now_ms() - t0);
	/* Every endpoint, fuzzed or not, must close. */
	for (i = 0; i < 2 * opt_pairs; i++)
		side_close(&workers[0], &sides[i]);
	if (scif_close(by_tx) || scif_close(by_rx) || scif_close(listen_fd)) {
		printf("# bystander or listener close: %s\n", strerror(errno));
		atomic_fetch_add(&n_close_bad, 1);
	}
	return (atomic_load(&n_hung) ? 1 : 0) |
	       (atomic_load(&n_bad_errno) ? 2 : 0) |
	       (atomic_load(&by_mismatch) || !atomic_load(&by_recv) ? 4 : 0) |
	       (atomic_load(&n_stats_bad) ? 8 : 0) |
	       (atomic_load(&n_close_bad) ? 16 : 0);
}

static long count_lines(const char *path)
{
	char line[512];
	long n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: scif_fp_fuzz [-s SEED] [-n OPS] [-T SECONDS] [-p PAIRS] [-w WRITERS] [-k KTHREADS] [-u UID] [-v]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const char *const names[] = {
		"calls_complete", "errno_documented", "bystander_intact",
		"stats_sane", "endpoints_closed",
	};
	uint16_t nodes[1];
	long ep0, ep1 = -1, t0;
	int c, st = 0, code = -1, t;
	pid_t pid;

	opt_seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
	while ((c = getopt(argc, argv, "s:n:T:p:w:k:u:v")) != -1) {
		switch (c) {
		case 's': opt_seed = strtoull(optarg, NULL, 0); break;
		case 'n': opt_ops = atol(optarg); break;
		case 'T': opt_secs = atoi(optarg); break;
		case 'p': opt_pairs = atoi(optarg); break;
		case 'w': opt_writers = atoi(optarg); break;
		case 'k': opt_kthreads = atoi(optarg); break;
		case 'u': opt_uid = atoi(optarg); break;
		case 'v': opt_verbose = 1; break;
		default: usage();
		}
	}
	if (opt_pairs < 1 || opt_pairs > MAXPAIRS || opt_writers < 0 ||
	    opt_kthreads < 0 || opt_writers + opt_kthreads > MAXW ||
	    opt_ops < 0 || opt_secs < 1)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* libscif maps the data path of every endpoint on its first call. */
	setenv("SCIF_FASTPATH_WARMUP", "0", 1);
	printf("TAP version 13\n1..6\n");
	printf("# scif_fp_fuzz -s %llu -n %ld -T %d -p %d -w %d -k %d\n",
	       (unsigned long long)opt_seed, opt_ops, opt_secs, opt_pairs,
	       opt_writers, opt_kthreads);
	if (scif_get_nodeIDs(nodes, 1, &self_node) < 0) {
		printf("# no SCIF (%s)\n", strerror(errno));
		for (t = 1; t <= 6; t++)
			printf("not ok %d scif available\n", t);
		return 1;
	}
	ep0 = count_lines(EPD_LIST);
	t0 = fuzz_now_ms();
	pid = fork();
	if (pid == 0)
		_exit(fuzz_child());
	while (pid > 0) {
		if (waitpid(pid, &st, WNOHANG) == pid) {
			code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
			break;
		}
		if (fuzz_now_ms() - t0 > (opt_secs + 60) * 1000L) {
			printf("# child still running after %d s: killed\n",
			       opt_secs + 60);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			break;
		}
		usleep(50000);
	}
	if (code < 0 || code >= 64)
		printf("# child ended with status %#x\n", st);
	for (t = 0; t < 5; t++)
		printf("%sok %d %s\n",
		       code >= 0 && code < 64 && !(code & (1 << t)) ? "" :
		       "not ", t + 1, names[t]);
	/* Endpoints are destroyed asynchronously: wait up to 10 s. */
	for (t = 0; t < 200; t++) {
		ep1 = count_lines(EPD_LIST);
		if (ep1 <= ep0)
			break;
		usleep(50000);
	}
	printf("# endpoints after %ld (before %ld)\n", ep1, ep0);
	printf("%sok 6 endpoints_released\n", ep1 <= ep0 ? "" : "not ");
	return code == 0 && ep1 <= ep0 ? 0 : 1;
}
