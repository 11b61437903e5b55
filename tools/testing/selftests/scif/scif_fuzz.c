// SPDX-License-Identifier: GPL-2.0
/*
 * scif_fuzz: random, stateful, multi-threaded calls into /dev/scif.
 *
 *   scif_fuzz [-s SEED] [-n CALLS] [-t THREADS] [-u UID] [-m MEMLOCK]
 *             [-T SECONDS] [-v]
 *
 * Started as root, it forks a child that sets RLIMIT_MEMLOCK (-m bytes,
 * default 4 MiB), drops to UID (default 65534) and makes CALLS calls
 * (default 3000) from THREADS threads (default 4) sharing one table of
 * endpoints: open, bind, listen, connect, accept (libscif and the raw
 * ACCEPTREQ/ACCEPTREG, with cookies of other threads), send, recv,
 * poll, register, unregister, the four RMAs with every flag, fence
 * mark/wait/signal, mmap of the peer's windows, munmap, touching the
 * mappings, fork (the child uses the inherited endpoints), close,
 * get_nodeIDs and ioctls with garbage.  Arguments lean to the edges:
 * 0, -1, page +- 1, huge, unaligned, just-freed offsets and memory,
 * other endpoints.  Each thread also owns a connected pair nobody else
 * touches, on which it checks that what arrives is what was sent (a
 * stream, and RMA into registered windows) and that fence signals are
 * written.
 *
 * Nothing may hang: a watchdog thread interrupts (SIGUSR1, no
 * SA_RESTART) any call that has run for 200 ms (5 s for the checks),
 * the fork children run under alarm(), and the parent kills the child
 * after SECONDS (default 300).
 *
 * Checks (TAP, printed by the parent): the calls completed; every errno
 * is one the man page documents for the call (EINTR only when the call
 * was interrupted; EBADF everywhere); the private pairs' data matched;
 * no call needed more than 30 s to end once interrupted; after the
 * child has gone, the driver's endpoints and pinned pages return to
 * what they were before.  The kernel log is checked by the harness.
 *
 * The seed is printed first; "-s SEED -t 1" replays a run exactly (with
 * more threads the interleaving differs from run to run).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <linux/scif_ioctl.h>
#include "scif.h"
#include "scif_fuzz_rng.h"

#define PG		4096L
#define NSLOT		24
#define NCHUNK		8
#define CHUNK		(64 * PG)
#define NMAP		32
#define NPOOL		64
#define MAXT		64
#define BUFSZ		(64 * 1024)
#define NERR		134
#define QUICK_MS	200
#define CHECK_MS	5000
#define HANG_MS		30000
#define PAIR_PAGES	4
#define DBG		"/sys/kernel/debug/scif/"
#define MAPSLOT		(256 * PG)
#define ARENA		(NCHUNK * CHUNK + MAXT * BUFSZ + NMAP * MAPSLOT)
#define GUARD		(256L << 20)

/* ---- Operations and the errno values their man pages document ---- */

enum op {
	OP_OPEN, OP_CLOSE, OP_BIND, OP_LISTEN, OP_CONNECT, OP_ACCEPT,
	OP_ACCEPTREQ, OP_ACCEPTREG, OP_SEND, OP_RECV, OP_POLL, OP_REG,
	OP_UNREG, OP_READFROM, OP_WRITETO, OP_VREADFROM, OP_VWRITETO,
	OP_FENCE_MARK, OP_FENCE_WAIT, OP_FENCE_SIGNAL, OP_MMAP, OP_MUNMAP,
	OP_TOUCH, OP_FORK, OP_REMAP, OP_NODEIDS, OP_RAW, OP_CHECK_STREAM,
	OP_CHECK_RMA, OP_PAIR, NR_OPS
};

static const char *const op_name[NR_OPS] = {
	"open", "close", "bind", "listen", "connect", "accept", "acceptreq",
	"acceptreg", "send", "recv", "poll", "register", "unregister",
	"readfrom", "writeto", "vreadfrom", "vwriteto", "fence_mark",
	"fence_wait", "fence_signal", "mmap", "munmap", "touch", "fork",
	"remap", "get_nodeids", "raw_ioctl", "check_stream", "check_rma", "pair",
};

/* Relative weights: the calls with state and arguments come most. */
static const int op_weight[NR_OPS] = {
	6, 4, 5, 3, 5, 3, 2, 2, 6, 6, 2, 8, 6, 5, 5, 5, 5, 3, 3, 3, 4, 2,
	3, 1, 1, 1, 3, 3, 3, 5,
};

typedef unsigned __int128 errset;
#define E(x)	((errset)1 << (x))
/* Man page ERRORS; EBADF (a just-closed endpoint) is allowed everywhere. */
static errset op_doc[NR_OPS] = {
	[OP_OPEN] = E(ENOMEM) | E(ENOENT) | E(ENXIO) | E(EMFILE) | E(ENFILE),
	[OP_CLOSE] = 0,
	[OP_BIND] = E(EACCES) | E(EINVAL) | E(EISCONN) | E(ENOSPC),
	[OP_LISTEN] = E(EINVAL) | E(EISCONN),
	[OP_CONNECT] = E(ECONNREFUSED) | E(EINPROGRESS) | E(EINVAL) |
		E(EISCONN) | E(ENODEV) | E(ENOMEM) | E(ENOSPC) | E(EOPNOTSUPP),
	[OP_ACCEPT] = E(EAGAIN) | E(EINVAL) | E(ENODEV) | E(ENOENT) |
		E(ENOMEM) | E(EMFILE) | E(ENFILE),
	[OP_SEND] = E(EAGAIN) | E(ECONNRESET) | E(EFAULT) | E(EINVAL) |
		E(ENODEV) | E(ENOMEM) | E(ENOTCONN),
	[OP_POLL] = E(EFAULT) | E(EINVAL) | E(ENOMEM),
	[OP_REG] = E(EADDRINUSE) | E(EAGAIN) | E(ECONNRESET) | E(EFAULT) |
		E(EINVAL) | E(ENODEV) | E(ENOMEM) | E(ENOTCONN) | E(EPROTO),
	[OP_UNREG] = E(ECONNRESET) | E(EINVAL) | E(ENODEV) | E(ENOTCONN) |
		E(ENXIO),
	[OP_READFROM] = E(EACCES) | E(ECONNRESET) | E(EINVAL) | E(ENODEV) |
		E(ENOTCONN) | E(ENXIO),
	[OP_VREADFROM] = E(EACCES) | E(ECONNRESET) | E(EFAULT) | E(EINVAL) |
		E(ENODEV) | E(ENOTCONN) | E(ENXIO),
	[OP_FENCE_MARK] = E(ECONNRESET) | E(ENODEV) | E(ENOTCONN) |
		E(ENOMEM) | E(EINVAL) | E(ENXIO) | E(EACCES),
	[OP_MMAP] = E(EACCES) | E(EINVAL) | E(ECONNRESET) | E(ENODEV) |
		E(ENOMEM) | E(ENOTCONN) | E(ENXIO),
	[OP_NODEIDS] = E(EFAULT) | E(ENOENT) | E(ENXIO),
};

/*
 * errno values the driver returns that the call's man page does not
 * list, seen on main when this fuzzer was written; reported apart
 * ("undocumented, known") and not failed on.  See testing.rst.
 */
static errset op_known[NR_OPS];

/*
 * -D: a DMA provider injects failures (scif_soft_dma fail_every): RMAs
 * may fail with EIO (rma.rst), and the private pair's checks use only
 * synchronous RMAs, as an asynchronous one handed to the worker fails
 * silently (its data tell).
 */
static int opt_dma_faults;

static void errno_tables(void)
{
	errset rma = op_doc[OP_READFROM];
	int i;

	op_doc[OP_ACCEPTREQ] = op_doc[OP_ACCEPT];
	op_doc[OP_ACCEPTREG] = op_doc[OP_ACCEPT];
	op_doc[OP_RECV] = op_doc[OP_SEND];
	op_doc[OP_WRITETO] = rma;
	op_doc[OP_VWRITETO] = op_doc[OP_VREADFROM];
	op_doc[OP_FENCE_WAIT] = op_doc[OP_FENCE_MARK];
	op_doc[OP_FENCE_SIGNAL] = op_doc[OP_FENCE_MARK];
	op_doc[OP_MUNMAP] = E(EINVAL);
	/* A garbage ioctl may get any of them, or ENOTTY. */
	for (i = 0; i < NR_OPS; i++)
		op_doc[OP_RAW] |= op_doc[i];
	op_doc[OP_RAW] |= E(ENOTTY) | E(EFAULT);
	/* Not calls of the interface: whatever they return is counted. */
	op_doc[OP_TOUCH] = op_doc[OP_FORK] = op_doc[OP_REMAP] = ~(errset)0;
	op_doc[OP_CHECK_STREAM] = op_doc[OP_CHECK_RMA] = ~(errset)0;
	op_doc[OP_PAIR] = ~(errset)0;
	/* The raw ioctl is given a bad address on purpose. */
	op_doc[OP_ACCEPTREQ] |= E(EFAULT);
	/* mmap(2) itself, before the driver: offset + length overflows. */
	op_known[OP_MMAP] |= E(EOVERFLOW);
	/* A second connect while the first is under way. */
	op_known[OP_CONNECT] |= E(EALREADY);
	op_known[OP_RAW] |= E(EALREADY);
	/* mmap(2) itself: MAP_LOCKED beyond RLIMIT_MEMLOCK. */
	op_known[OP_MMAP] |= E(EAGAIN);
	/* A bad address for the mark: the man page does not say EFAULT. */
	op_known[OP_FENCE_MARK] |= E(EFAULT);
	if (opt_dma_faults) {
		op_known[OP_READFROM] |= E(EIO);
		op_known[OP_WRITETO] |= E(EIO);
		op_known[OP_VREADFROM] |= E(EIO);
		op_known[OP_VWRITETO] |= E(EIO);
		op_known[OP_RAW] |= E(EIO);
	}
}

/* ---- Options, shared state ---- */

static uint64_t opt_seed;
static long opt_calls = 3000;
static int opt_threads = 4;
static uid_t opt_uid = 65534;
static long opt_memlock = 4L << 20;
static int opt_secs = 300;
static int opt_verbose;

static uint16_t self_node;

struct slot {
	int fd;
	int users;
	bool closing;
	bool listening;
	uint16_t port;
};

struct mapping {
	void *addr;
	size_t len;
	int prot;
	bool busy;
};

/* tbl_lock protects everything in this block. */
static pthread_mutex_t tbl_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot slots[NSLOT];
static struct mapping maps[NMAP];
static int64_t offs[NPOOL];		/* offsets registered or just freed */
static unsigned int noffs;
static int marks[NPOOL];
static unsigned int nmarks;
static uint64_t cookies[NPOOL];		/* accept cookies, taken or not */
static unsigned int ncookies;
static uint16_t ports[NPOOL];		/* ports bound or listened on */
static unsigned int nports;
static char *arena;			/* all memory RMAs may write */
static char *chunk[NCHUNK];		/* registration memory */
static bool chunk_gone[NCHUNK];		/* munmapped by OP_REMAP */
static int memfd = -1;

static atomic_long calls_done;
static atomic_long err_hist[NR_OPS][NERR];
static atomic_long ok_hist[NR_OPS];
static atomic_long undoc[NR_OPS][NERR];
static atomic_long n_undoc, n_known, n_mismatch, n_hung, n_faults,
	n_interrupted, n_child_bad, n_checks, n_dma_eio;

/* Per-thread state, read by the watchdog. */
struct worker {
	pthread_t tid;
	int idx;
	uint64_t rng;
	atomic_long call_start;		/* ms, 0 when not in a call */
	atomic_int limit_ms;
	atomic_int op;
	atomic_bool kicked;		/* interrupted during this call */
	bool hung_reported;
	char *buf;			/* send/recv buffer */
	/* The private pair: c (connector) sends to a (accepted). */
	int pa, pc;
	char *wa, *wc;			/* their windows' memory */
	off_t oa, oc;
	uint32_t stream_seq;
};

static struct worker workers[MAXT];
/* SIGUSR1s this thread took: a kick may land on the call after its own. */
static __thread volatile sig_atomic_t usr1_seen;
static __thread sig_atomic_t usr1_at_begin;
/* The call this thread is in, for the report of a fault nobody expected. */
static __thread volatile int fault_op = -1;
static atomic_bool stop;

/* ---- Random values leaning to the edges ---- */

static uint64_t edge_len(struct worker *w)
{
	static const uint64_t e[] = {
		0, 1, PG - 1, PG, PG + 1, 2 * PG, 3 * PG, 8 * PG, 16 * PG,
		64 * PG, 65 * PG, INT_MAX, (uint64_t)INT_MAX + 1, 1ULL << 32,
		1ULL << 40, 1ULL << 44, UINT64_MAX, UINT64_MAX - PG + 1,
	};

	switch (fuzz_below(&w->rng, 4)) {
	case 0:
		return e[fuzz_below(&w->rng, sizeof(e) / sizeof(e[0]))];
	case 1:
		return fuzz_below(&w->rng, 16 * PG);
	default:
		return (1 + fuzz_below(&w->rng, 16)) * PG;
	}
}

static int64_t pool_off(struct worker *w)
{
	int64_t v = 0;

	pthread_mutex_lock(&tbl_lock);
	if (noffs)
		v = offs[fuzz_below(&w->rng, noffs < NPOOL ? noffs : NPOOL)];
	pthread_mutex_unlock(&tbl_lock);
	return v;
}

static void pool_add_off(int64_t off)
{
	pthread_mutex_lock(&tbl_lock);
	offs[noffs++ % NPOOL] = off;
	pthread_mutex_unlock(&tbl_lock);
}

static int64_t edge_off(struct worker *w)
{
	static const int64_t e[] = {
		0, -1, PG - 1, PG, PG + 1, -PG, 1LL << 40, 1LL << 62,
		INT64_MAX, INT64_MIN, INT64_MAX - PG + 1, 1LL << 52,
	};

	switch (fuzz_below(&w->rng, 6)) {
	case 0:
		return e[fuzz_below(&w->rng, sizeof(e) / sizeof(e[0]))];
	case 1:
		return pool_off(w) + (int64_t)fuzz_below(&w->rng, 3) - 1;
	case 2:
		return pool_off(w) + (int64_t)fuzz_below(&w->rng, 16) * PG;
	default:
		return pool_off(w);
	}
}

/*
 * libscif's user-space data path copies send and receive buffers itself,
 * so a buffer the process cannot access faults in the process rather
 * than failing with EFAULT (fastpath.rst), except in the first 64 KiB.
 * With the data path on (SCIF_FASTPATH unset or not 0), scif_send() and
 * scif_recv() get only buffers in our own memory or in those 64 KiB; the
 * raw ioctls and a run with SCIF_FASTPATH=0 keep the bad ones.
 */
static bool fastpath_on;

/*
 * On 6.1 a MAP_FIXED mmap that fails leaves its range unmapped, a hole
 * in the arena, and libscif's data path maps its rings with mmap(NULL),
 * which the kernel may place in that hole, where a later fixed mapping
 * of ours would replace them.  So a fixed scif_mmap() holds this for
 * writing until the hole is closed again, and the calls in which
 * libscif may map (send, recv) hold it for reading.  Writers first: the
 * readers never stop coming.
 */
static pthread_rwlock_t hole_lock;

static void fastpath_buffer(struct worker *w, char **b, int *len)
{
	char *end = w->buf + BUFSZ;

	if ((uintptr_t)*b < 65536)
		return;
	if (*b < w->buf || *b >= end)
		*b = w->buf;
	if (*len > end - *b)
		*len = end - *b;
}

/* Memory to register, send from or copy into: mostly in the chunks. */
static void *edge_addr(struct worker *w)
{
	static const uintptr_t e[] = {
		0, 1, PG, ~(uintptr_t)0, ~(uintptr_t)0 - PG + 1,
		0xffff888000000000UL, 1UL << 47,
	};
	char *c;

	switch (fuzz_below(&w->rng, 10)) {
	case 0:
		return (void *)e[fuzz_below(&w->rng, sizeof(e) / sizeof(e[0]))];
	case 1:
		return w->buf + fuzz_below(&w->rng, BUFSZ);
	case 2:
		pthread_mutex_lock(&tbl_lock);
		c = maps[fuzz_below(&w->rng, NMAP)].addr;
		pthread_mutex_unlock(&tbl_lock);
		if (c)
			return c;
		/* fall through */
	default:
		c = chunk[fuzz_below(&w->rng, NCHUNK)] + fuzz_below(&w->rng, CHUNK / PG) * PG;
		return fuzz_chance(&w->rng, 10) ? c + 1 + fuzz_below(&w->rng, PG - 1) : c;
	}
}

/* ---- Endpoint slots: an endpoint is never closed while in use ---- */

static int slot_get(int i)
{
	int fd = -1;

	pthread_mutex_lock(&tbl_lock);
	if (slots[i].fd >= 0 && !slots[i].closing) {
		slots[i].users++;
		fd = slots[i].fd;
	}
	pthread_mutex_unlock(&tbl_lock);
	return fd;
}

static void slot_put(int i)
{
	int fd = -1;

	pthread_mutex_lock(&tbl_lock);
	if (!--slots[i].users && slots[i].closing) {
		fd = slots[i].fd;
		slots[i].fd = -1;
		slots[i].closing = false;
	}
	pthread_mutex_unlock(&tbl_lock);
	if (fd >= 0)
		close(fd);
}

/* Put a new endpoint in a free slot, or close it. */
static void slot_install(int fd)
{
	int i;

	pthread_mutex_lock(&tbl_lock);
	for (i = 0; i < NSLOT; i++) {
		if (slots[i].fd < 0) {
			slots[i].fd = fd;
			slots[i].port = 0;
			slots[i].listening = false;
			fd = -1;
			break;
		}
	}
	pthread_mutex_unlock(&tbl_lock);
	if (fd >= 0)
		close(fd);
}

static void slot_close(int i)
{
	int fd = -1;

	pthread_mutex_lock(&tbl_lock);
	if (slots[i].fd >= 0 && !slots[i].closing) {
		if (slots[i].users) {
			slots[i].closing = true;
		} else {
			fd = slots[i].fd;
			slots[i].fd = -1;
		}
	}
	pthread_mutex_unlock(&tbl_lock);
	if (fd >= 0)
		close(fd);
}

static uint16_t pool_port(struct worker *w)
{
	uint16_t p = 0;

	pthread_mutex_lock(&tbl_lock);
	if (nports)
		p = ports[fuzz_below(&w->rng, nports < NPOOL ? nports : NPOOL)];
	pthread_mutex_unlock(&tbl_lock);
	return p;
}

static void pool_add_port(uint16_t p)
{
	pthread_mutex_lock(&tbl_lock);
	ports[nports++ % NPOOL] = p;
	pthread_mutex_unlock(&tbl_lock);
}

static uint16_t edge_port(struct worker *w)
{
	static const uint16_t e[] = {
		0, 1, SCIF_ADMIN_PORT_END - 1, SCIF_ADMIN_PORT_END,
		SCIF_PORT_RSVD - 1, SCIF_PORT_RSVD, 65535,
	};

	switch (fuzz_below(&w->rng, 4)) {
	case 0:
		return e[fuzz_below(&w->rng, sizeof(e) / sizeof(e[0]))];
	case 1:
		return 2000 + fuzz_below(&w->rng, 64);
	default:
		return pool_port(w);
	}
}

/* ---- Calls: each marks the thread busy for the watchdog ---- */

static void call_begin(struct worker *w, enum op op, int limit)
{
	atomic_store(&w->op, op);
	fault_op = op;
	atomic_store(&w->kicked, false);
	usr1_at_begin = usr1_seen;
	atomic_store(&w->limit_ms, limit);
	atomic_store(&w->call_start, fuzz_now_ms());
}

/* The watchdog kicked this call (or a kick meant for the last one hit it). */
static bool interrupted(struct worker *w)
{
	return atomic_load(&w->kicked) || usr1_seen != usr1_at_begin;
}

static void call_end(struct worker *w)
{
	atomic_store(&w->call_start, 0);
	fault_op = -1;
}

/* Record the outcome of @op: @ret < 0 means failure with @err. */
static void outcome(struct worker *w, enum op op, long ret, int err)
{
	if (ret >= 0) {
		atomic_fetch_add(&ok_hist[op], 1);
		return;
	}
	if (err <= 0 || err >= NERR)
		err = 0;
	atomic_fetch_add(&err_hist[op][err], 1);
	if (err == EBADF || (err < 128 && (op_doc[op] & E(err))))
		return;
	if (err == EINTR && interrupted(w)) {
		atomic_fetch_add(&n_interrupted, 1);
		return;
	}
	if (err < 128 && (op_known[op] & E(err))) {
		atomic_fetch_add(&n_known, 1);
		return;
	}
	if (atomic_fetch_add(&undoc[op][err], 1) == 0)
		printf("# undocumented errno: %s -> %s (%d), thread %d, call %ld\n",
		       op_name[op], strerror(err), err, w->idx,
		       atomic_load(&calls_done));
	atomic_fetch_add(&n_undoc, 1);
}

/* A call that returns -1/errno: run it between begin and end. */
#define CALL(w, op, expr) ({						\
	long r_;							\
	int e_;								\
	call_begin(w, op, QUICK_MS);					\
	errno = 0;							\
	r_ = (long)(expr);						\
	e_ = errno;							\
	call_end(w);							\
	outcome(w, op, r_, e_);						\
	errno = e_;							\
	r_;								\
})

static void mismatch(struct worker *w, const char *what, long a, long b)
{
	atomic_fetch_add(&n_mismatch, 1);
	printf("# MISMATCH thread %d (seed %llu): %s: %ld != %ld\n", w->idx,
	       (unsigned long long)opt_seed, what, a, b);
}

/* ---- SIGBUS/SIGSEGV on touching a mapping; SIGUSR1 interrupts ---- */

static __thread sigjmp_buf fault_jmp;
static __thread volatile sig_atomic_t fault_armed;

/* Where the fault was, and the mappings around it, before dying of it. */
static void fault_report(int sig, siginfo_t *si, void *uc)
{
	char line[256];
	ssize_t n;
	int fd;

	n = snprintf(line, sizeof(line),
		     "# signal %d at %p (code %d) in %s, pc %#llx\n", sig,
		     si->si_addr, si->si_code,
		     fault_op >= 0 ? op_name[fault_op] : "no call",
#if defined(__x86_64__)
		     (unsigned long long)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP]
#else
		     0ULL
#endif
		     );
	if (n > 0 && write(1, line, (size_t)n) < 0)
		return;
	fd = open("/proc/self/maps", O_RDONLY);
	while (fd >= 0 && (n = read(fd, line, sizeof(line))) > 0)
		if (write(1, line, (size_t)n) < 0)
			break;
	if (fd >= 0)
		close(fd);
}

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	if (fault_armed) {
		fault_armed = 0;
		siglongjmp(fault_jmp, 1);
	}
	fault_report(sig, si, uc);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_usr1(int sig)
{
	(void)sig;
	usr1_seen++;
}

/* Read (and maybe write) a byte of @p; false if it faulted. */
static bool touch(void *p, bool write)
{
	volatile char *c = p;

	if (sigsetjmp(fault_jmp, 1)) {
		atomic_fetch_add(&n_faults, 1);
		return false;
	}
	fault_armed = 1;
	if (write)
		*c = *c + 1;
	else
		(void)*c;
	fault_armed = 0;
	return true;
}

/* ---- The private pair and its checks ---- */

static void pair_drop(struct worker *w)
{
	if (w->pa >= 0)
		close(w->pa);
	if (w->pc >= 0)
		close(w->pc);
	w->pa = w->pc = -1;
}

/* Listener, non-blocking connect, accept: a pair only this thread uses. */
static int pair_make(struct worker *w)
{
	struct scif_port_id dst = { .node = self_node }, peer;
	int l, c, a = -1, fl, rc = -1;
	off_t oa, oc;

	l = scif_open();
	if (l < 0)
		return -1;
	c = scif_open();
	if (c < 0)
		goto out_l;
	call_begin(w, OP_CHECK_STREAM, CHECK_MS);
	fl = scif_bind(l, 0);
	if (fl < 0)
		goto out;
	dst.port = fl;
	if (scif_listen(l, 1))
		goto out;
	fl = fcntl(c, F_GETFL);
	fcntl(c, F_SETFL, fl | O_NONBLOCK);
	if (scif_connect(c, &dst) < 0 && errno != EINPROGRESS)
		goto out;
	if (scif_accept(l, &peer, &a, SCIF_ACCEPT_SYNC))
		goto out;
	{
		struct pollfd p = { .fd = c, .events = POLLOUT };

		if (poll(&p, 1, CHECK_MS) != 1 || !(p.revents & POLLOUT))
			goto out;
	}
	fcntl(c, F_SETFL, fl);
	oa = scif_register(a, w->wa, PAIR_PAGES * PG, 0,
			   SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	oc = scif_register(c, w->wc, PAIR_PAGES * PG, 0,
			   SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	if (oa < 0 || oc < 0)
		goto out;
	w->oa = oa;
	w->oc = oc;
	w->pa = a;
	w->pc = c;
	a = c = -1;
	rc = 0;
out:
	call_end(w);
	if (a >= 0)
		close(a);
	if (c >= 0)
		close(c);
out_l:
	close(l);
	return rc;
}

/* Blocking send of a pattern from c, blocking recv on a, compare. */
static void check_stream(struct worker *w)
{
	static __thread char rx[8192];
	char tx[8192];
	int len = 1 + fuzz_below(&w->rng, sizeof(tx)), got = 0, n;
	uint32_t seed = ++w->stream_seq;

	for (n = 0; n < len; n++)
		tx[n] = (char)(seed * 31 + n * 7 + (n >> 8));
	pthread_rwlock_rdlock(&hole_lock);
	call_begin(w, OP_CHECK_STREAM, CHECK_MS);
	n = scif_send(w->pc, tx, len, SCIF_SEND_BLOCK);
	if (n == len)
		got = scif_recv(w->pa, rx, len, SCIF_RECV_BLOCK);
	call_end(w);
	pthread_rwlock_unlock(&hole_lock);
	if (n != len || got != len) {
		/* Interrupted or reset: the stream's position is unknown. */
		if (!interrupted(w))
			mismatch(w, "stream send/recv count", n == len ? got : n,
				 len);
		pair_drop(w);
		return;
	}
	atomic_fetch_add(&n_checks, 1);
	if (memcmp(tx, rx, len))
		mismatch(w, "stream bytes differ, length", len, len);
}

/* An RMA of random kind and flags between the pair's windows. */
static void check_rma(struct worker *w)
{
	static const int fl[] = {
		SCIF_RMA_SYNC, SCIF_RMA_SYNC | SCIF_RMA_USECPU,
		SCIF_RMA_SYNC | SCIF_RMA_ORDERED, 0, SCIF_RMA_USECPU,
		SCIF_RMA_ORDERED, SCIF_RMA_USECACHE | SCIF_RMA_SYNC,
	};
	size_t off = fuzz_below(&w->rng, PAIR_PAGES) * PG;
	size_t len = 1 + fuzz_below(&w->rng, PAIR_PAGES * PG - off);
	/* With -D, the first three only: the synchronous ones. */
	int nfl = opt_dma_faults ? 3 : sizeof(fl) / sizeof(fl[0]);
	int flags = fl[fuzz_below(&w->rng, nfl)];
	int kind = fuzz_below(&w->rng, 4), mark = 0, rc;
	uint8_t v = (uint8_t)fuzz_rnd(&w->rng), *src, *dst;
	/* The signal value lands in the last 8 bytes of c's window. */
	off_t sig = w->oc + PAIR_PAGES * PG - 8;
	uint64_t sval = fuzz_rnd(&w->rng) | 1;

	if (off + len > PAIR_PAGES * PG - 8)
		len = PAIR_PAGES * PG - 8 - off;
	if (!len)
		len = 1;
	/* writeto/vwriteto: c -> a; readfrom/vreadfrom: c <- a */
	src = (kind & 1) ? (uint8_t *)w->wa : (uint8_t *)w->wc;
	dst = (kind & 1) ? (uint8_t *)w->wc : (uint8_t *)w->wa;
	memset(src + off, v, len);
	memset(dst + off, (uint8_t)~v, len);
	call_begin(w, OP_CHECK_RMA, CHECK_MS);
	switch (kind) {
	case 0:
		rc = scif_writeto(w->pc, w->oc + off, len, w->oa + off, flags);
		break;
	case 1:
		rc = scif_readfrom(w->pc, w->oc + off, len, w->oa + off, flags);
		break;
	case 2:
		rc = scif_vwriteto(w->pc, w->wc + off, len, w->oa + off, flags);
		break;
	default:
		rc = scif_vreadfrom(w->pc, w->wc + off, len, w->oa + off,
				    flags);
		break;
	}
	if (!rc && !(flags & SCIF_RMA_SYNC)) {
		/* Wait for it: a mark and a wait, or a local signal. */
		if (fuzz_chance(&w->rng, 50)) {
			rc = scif_fence_mark(w->pc, SCIF_FENCE_INIT_SELF, &mark);
			if (!rc)
				rc = scif_fence_wait(w->pc, mark);
		} else {
			*(volatile uint64_t *)(w->wc + PAIR_PAGES * PG - 8) = 0;
			rc = scif_fence_signal(w->pc, sig, sval, 0, 0,
					       SCIF_FENCE_INIT_SELF |
					       SCIF_SIGNAL_LOCAL);
			while (!rc && *(volatile uint64_t *)(w->wc + PAIR_PAGES *
							    PG - 8) != sval) {
				if (interrupted(w)) {
					rc = -1;
					errno = EINTR;
					break;
				}
				sched_yield();
			}
		}
	}
	call_end(w);
	if (rc && opt_dma_faults && errno == EIO) {
		atomic_fetch_add(&n_dma_eio, 1);
		return;		/* an injected failure: the bytes are undefined */
	}
	if (rc) {
		if (!interrupted(w))
			mismatch(w, "rma/fence on the private pair failed, errno",
				 errno, 0);
		pair_drop(w);
		return;
	}
	atomic_fetch_add(&n_checks, 1);
	if (memcmp(src + off, dst + off, len))
		mismatch(w, "rma bytes differ, kind", kind, flags);
}

/* ---- The fuzzed calls ---- */

static int rma_flags(struct worker *w)
{
	int f = fuzz_below(&w->rng, 16);

	if (fuzz_chance(&w->rng, 5))
		f |= 1 << fuzz_below(&w->rng, 31);
	return f;
}

static int fence_flags(struct worker *w)
{
	static const int e[] = {
		0, SCIF_FENCE_INIT_SELF, SCIF_FENCE_INIT_PEER,
		SCIF_FENCE_INIT_SELF | SCIF_FENCE_INIT_PEER,
		SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL,
		SCIF_FENCE_INIT_PEER | SCIF_SIGNAL_REMOTE,
		SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL | SCIF_SIGNAL_REMOTE,
		SCIF_FENCE_INIT_PEER | SCIF_SIGNAL_LOCAL | SCIF_SIGNAL_REMOTE,
		SCIF_SIGNAL_LOCAL, 0x40, -1,
	};

	return e[fuzz_below(&w->rng, sizeof(e) / sizeof(e[0]))];
}

/* Where mapping @k goes: a slot of the arena, PROT_NONE while unused. */
static char *zone(int k)
{
	return arena + NCHUNK * CHUNK + MAXT * BUFSZ + (long)k * MAPSLOT;
}

/*
 * Unmap by mapping PROT_NONE over the slot (or part of it): the scif
 * mapping goes as with munmap(), and no hole opens in which the kernel
 * could place memory of ours that a later RMA would overwrite.
 */
static int zone_unmap(void *p, size_t len)
{
	return mmap(p, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		    MAP_FIXED | MAP_NORESERVE, -1, 0) == p ? 0 : -1;
}

/* Claim mapping slot @k (unmapping what it holds); false if busy. */
static bool map_claim(int k)
{
	struct mapping old;

	pthread_mutex_lock(&tbl_lock);
	old = maps[k];
	if (old.busy) {
		pthread_mutex_unlock(&tbl_lock);
		return false;
	}
	maps[k].busy = true;
	maps[k].addr = NULL;
	pthread_mutex_unlock(&tbl_lock);
	if (old.addr)
		zone_unmap(zone(k), MAPSLOT);
	return true;
}

static void map_release(int k, void *p, size_t len, int prot)
{
	pthread_mutex_lock(&tbl_lock);
	maps[k] = (struct mapping){ p, len, prot, false };
	pthread_mutex_unlock(&tbl_lock);
}

/*
 * A connection between two new endpoints of the table, through a
 * listener of the table (a new one if there is none): the calls that
 * need a connection get one often.
 */
static void make_pair(struct worker *w)
{
	struct scif_port_id dst = { .node = self_node }, peer;
	int i, li = -1, l, c, a = -1, r;

	pthread_mutex_lock(&tbl_lock);
	for (i = fuzz_below(&w->rng, NSLOT); li < 0 && i < 2 * NSLOT; i++)
		if (slots[i % NSLOT].listening && slots[i % NSLOT].port)
			li = i % NSLOT;
	pthread_mutex_unlock(&tbl_lock);
	if (li < 0) {
		l = CALL(w, OP_OPEN, scif_open());
		if (l < 0)
			return;
		r = CALL(w, OP_BIND, scif_bind(l, 0));
		if (r < 0 || CALL(w, OP_LISTEN, scif_listen(l, 4))) {
			close(l);
			return;
		}
		pthread_mutex_lock(&tbl_lock);
		for (i = 0; i < NSLOT && slots[i].fd >= 0; i++)
			;
		if (i == NSLOT) {
			pthread_mutex_unlock(&tbl_lock);
			close(l);
			return;
		}
		slots[i] = (struct slot){ .fd = l, .listening = true,
					  .port = r };
		pthread_mutex_unlock(&tbl_lock);
		li = i;
	}
	l = slot_get(li);
	if (l < 0)
		return;
	pthread_mutex_lock(&tbl_lock);
	dst.port = slots[li].port;
	pthread_mutex_unlock(&tbl_lock);
	c = CALL(w, OP_OPEN, scif_open());
	if (c < 0)
		goto out;
	fcntl(c, F_SETFL, O_NONBLOCK);
	r = CALL(w, OP_CONNECT, scif_connect(c, &dst));
	if (r < 0 && errno != EINPROGRESS) {
		close(c);
		goto out;
	}
	if (CALL(w, OP_ACCEPT, scif_accept(l, &peer, &a, SCIF_ACCEPT_SYNC)))
		a = -1;
	call_begin(w, OP_POLL, QUICK_MS);
	poll(&(struct pollfd){ .fd = c, .events = POLLOUT }, 1, 100);
	call_end(w);
	if (fuzz_chance(&w->rng, 70))
		fcntl(c, F_SETFL, 0);
	slot_install(c);
	if (a >= 0)
		slot_install(a);
out:
	slot_put(li);
}

/* The child of OP_FORK: a few calls on what it inherited, then exit. */
static void fork_child(struct worker *w)
{
	char b[64];
	int i, fd;

	alarm(10);
	for (i = 0; i < 8; i++) {
		fd = slots[fuzz_below(&w->rng, NSLOT)].fd;
		if (fd < 0)
			continue;
		switch (fuzz_below(&w->rng, 5)) {
		case 0:
			scif_send(fd, b, sizeof(b), 0);
			break;
		case 1:
			scif_recv(fd, b, sizeof(b), 0);
			break;
		case 2:
			scif_fence_mark(fd, SCIF_FENCE_INIT_SELF, (int *)b);
			break;
		case 3:
			scif_writeto(fd, offs[fuzz_below(&w->rng, NPOOL)], PG,
				     offs[fuzz_below(&w->rng, NPOOL)], 0);
			break;
		default:
			close(fd);
			break;
		}
	}
	if (maps[0].addr)
		touch(maps[0].addr, false);
	_exit(0);
}

static void do_op(struct worker *w, enum op op)
{
	int si = fuzz_below(&w->rng, NSLOT), fd = -1, r, mark;
	struct scif_port_id id, peer;
	struct mapping m;
	void *p;
	long ret;

	switch (op) {
	case OP_OPEN:
		r = CALL(w, op, scif_open());
		if (r >= 0) {
			if (fuzz_chance(&w->rng, 20))
				fcntl(r, F_SETFL, O_NONBLOCK);
			slot_install(r);
		}
		return;
	case OP_CLOSE:
		slot_close(si);
		outcome(w, op, 0, 0);
		return;
	case OP_FORK: {
		pid_t pid;
		int st;

		pthread_mutex_lock(&tbl_lock);
		pid = fork();
		if (pid == 0)
			fork_child(w);
		pthread_mutex_unlock(&tbl_lock);
		if (pid < 0) {
			outcome(w, op, -1, errno);
			return;
		}
		call_begin(w, op, CHECK_MS);
		r = waitpid(pid, &st, 0);
		call_end(w);
		if (r == pid && WIFSIGNALED(st) && WTERMSIG(st) != SIGALRM) {
			atomic_fetch_add(&n_child_bad, 1);
			printf("# fork child killed by signal %d\n",
			       WTERMSIG(st));
		} else if (r == pid && WIFSIGNALED(st)) {
			atomic_fetch_add(&n_hung, 1);
			printf("# fork child hung (alarm)\n");
		}
		outcome(w, op, 0, 0);
		return;
	}
	case OP_REMAP: {
		int c = fuzz_below(&w->rng, NCHUNK);

		/* Registered windows keep the old pages; new ones differ. */
		/* Fixed mappings: the arena never has a hole. */
		pthread_mutex_lock(&tbl_lock);
		if (!chunk_gone[c]) {
			zone_unmap(chunk[c], CHUNK);
			chunk_gone[c] = true;
		} else {
			p = mmap(chunk[c], CHUNK, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
				 -1, 0);
			chunk_gone[c] = p != chunk[c];
		}
		pthread_mutex_unlock(&tbl_lock);
		outcome(w, op, 0, 0);
		return;
	}
	case OP_NODEIDS: {
		uint16_t nodes[4], self;
		int len = fuzz_below(&w->rng, 6) - 1;

		CALL(w, op, scif_get_nodeIDs(fuzz_chance(&w->rng, 10) ? (uint16_t *)8 :
					     nodes, len, &self));
		return;
	}
	case OP_MUNMAP: {
		int k = fuzz_below(&w->rng, NMAP);
		size_t part;

		pthread_mutex_lock(&tbl_lock);
		m = maps[k];
		if (!m.busy && m.addr)
			maps[k].busy = true;
		pthread_mutex_unlock(&tbl_lock);
		if (m.busy || !m.addr)
			return;
		/* A page in the middle (splitting it), its tail, or all. */
		part = m.len / PG > 2 && fuzz_chance(&w->rng, 30) ? PG : m.len;
		if (part == m.len) {
			r = CALL(w, op, zone_unmap(m.addr, m.len));
			map_release(k, NULL, 0, 0);
		} else {
			r = CALL(w, op, zone_unmap((char *)m.addr + PG, part));
			map_release(k, m.addr, PG, m.prot);
		}
		return;
	}
	case OP_TOUCH:
		pthread_mutex_lock(&tbl_lock);
		m = maps[fuzz_below(&w->rng, NMAP)];
		pthread_mutex_unlock(&tbl_lock);
		/* Another thread may unmap it meanwhile: that faults too. */
		if (m.addr)
			touch((char *)m.addr + fuzz_below(&w->rng, m.len / PG) * PG,
			      fuzz_chance(&w->rng, 50));
		outcome(w, op, 0, 0);
		return;
	case OP_PAIR:
		make_pair(w);
		return;
	case OP_CHECK_STREAM:
	case OP_CHECK_RMA:
		if (w->pa < 0 && pair_make(w)) {
			pair_drop(w);
			return;
		}
		if (op == OP_CHECK_STREAM)
			check_stream(w);
		else
			check_rma(w);
		return;
	default:
		break;
	}

	/* The rest take an endpoint (sometimes a bad descriptor). */
	if (fuzz_chance(&w->rng, 2)) {
		fd = fuzz_chance(&w->rng, 50) ? -1 : 1000;
		si = -1;
	} else {
		fd = slot_get(si);
		if (fd < 0)
			return;
	}

	switch (op) {
	case OP_BIND:
		ret = CALL(w, op, scif_bind(fd, edge_port(w)));
		if (ret > 0) {
			pool_add_port(ret);
			pthread_mutex_lock(&tbl_lock);
			slots[si].port = ret;
			pthread_mutex_unlock(&tbl_lock);
		}
		break;
	case OP_LISTEN:
		r = fuzz_below(&w->rng, 4) ? fuzz_below(&w->rng, 8) : (int)fuzz_rnd(&w->rng);
		if (!CALL(w, op, scif_listen(fd, r))) {
			pthread_mutex_lock(&tbl_lock);
			slots[si].listening = true;
			pthread_mutex_unlock(&tbl_lock);
		}
		break;
	case OP_CONNECT:
		id.node = fuzz_chance(&w->rng, 90) ? self_node : fuzz_below(&w->rng, 70000);
		id.port = edge_port(w);
		call_begin(w, op, QUICK_MS);
		errno = 0;
		r = scif_connect(fd, fuzz_chance(&w->rng, 3) ? NULL : &id);
		r = r < 0 ? -1 : r;
		call_end(w);
		outcome(w, op, r, errno);
		break;
	case OP_ACCEPT: {
		int nfd = -1;

		r = CALL(w, op, scif_accept(fd, &peer, &nfd,
					    fuzz_chance(&w->rng, 50) ? SCIF_ACCEPT_SYNC :
					    fuzz_chance(&w->rng, 90) ? 0 : 7));
		if (!r && nfd >= 0)
			slot_install(nfd);
		break;
	}
	case OP_ACCEPTREQ: {
		struct scifioctl_accept req = {
			.flags = fuzz_chance(&w->rng, 30) ? SCIF_ACCEPT_SYNC : 0,
		};

		r = CALL(w, op, ioctl(fd, SCIF_ACCEPTREQ,
				      fuzz_chance(&w->rng, 3) ? (void *)8 : &req));
		if (!r) {
			pthread_mutex_lock(&tbl_lock);
			cookies[ncookies++ % NPOOL] = req.endpt;
			pthread_mutex_unlock(&tbl_lock);
		}
		break;
	}
	case OP_ACCEPTREG: {
		uint64_t ck;
		int nfd;

		pthread_mutex_lock(&tbl_lock);
		ck = cookies[fuzz_below(&w->rng, NPOOL)];
		pthread_mutex_unlock(&tbl_lock);
		if (fuzz_chance(&w->rng, 10))
			ck = fuzz_rnd(&w->rng);
		if (fuzz_chance(&w->rng, 60)) {
			/* On a fresh endpoint, as libscif does. */
			slot_put(si);
			si = -1;
			nfd = CALL(w, OP_OPEN, scif_open());
			if (nfd < 0)
				return;
			r = CALL(w, op, ioctl(nfd, SCIF_ACCEPTREG, &ck));
			slot_install(nfd);
			return;
		}
		CALL(w, op, ioctl(fd, SCIF_ACCEPTREG, &ck));
		break;
	}
	case OP_SEND:
	case OP_RECV: {
		int len = fuzz_chance(&w->rng, 10) ? (int)edge_len(w) : (int)fuzz_below(&w->rng, 9000);
		char *b = w->buf;
		int flags = fuzz_chance(&w->rng, 20) ? SCIF_SEND_BLOCK : 0;

		if (fuzz_chance(&w->rng, 3))
			flags = (int)fuzz_rnd(&w->rng);
		if (fuzz_chance(&w->rng, 5))
			b = edge_addr(w);
		else if (len > BUFSZ || len < 0)
			len = BUFSZ;
		if (fastpath_on)
			fastpath_buffer(w, &b, &len);
		pthread_rwlock_rdlock(&hole_lock);
		if (op == OP_SEND)
			CALL(w, op, scif_send(fd, b, len, flags));
		else
			CALL(w, op, scif_recv(fd, b, len, flags));
		pthread_rwlock_unlock(&hole_lock);
		break;
	}
	case OP_POLL: {
		struct scif_pollepd pe[2] = {
			{ .epd = fd, .events = POLLIN | POLLOUT },
			{ .epd = slots[fuzz_below(&w->rng, NSLOT)].fd, .events = POLLIN },
		};

		CALL(w, op, scif_poll(pe, 1 + fuzz_below(&w->rng, 2), fuzz_below(&w->rng, 3) * 10));
		break;
	}
	case OP_REG: {
		static const int prots[] = {
			SCIF_PROT_READ, SCIF_PROT_WRITE,
			SCIF_PROT_READ | SCIF_PROT_WRITE, 0, 4,
		};
		uint64_t len = edge_len(w);
		int64_t off = fuzz_chance(&w->rng, 50) ? edge_off(w) :
			      (int64_t)fuzz_below(&w->rng, 64) * PG;
		int mflags = fuzz_chance(&w->rng, 40) ? SCIF_MAP_FIXED :
			     fuzz_chance(&w->rng, 95) ? 0 : (int)fuzz_rnd(&w->rng);

		void *a = edge_addr(w);
		int prot = prots[fuzz_below(&w->rng, 5)];

		if (fuzz_chance(&w->rng, 50)) {
			/* Plausible: pages of a chunk, at a free offset. */
			int pg = fuzz_below(&w->rng, CHUNK / PG);

			a = chunk[fuzz_below(&w->rng, NCHUNK)] + pg * PG;
			len = (1 + fuzz_below(&w->rng, CHUNK / PG - pg)) * PG;
			if (len > 16 * PG)
				len = (1 + fuzz_below(&w->rng, 16)) * PG;
			prot = SCIF_PROT_READ | SCIF_PROT_WRITE;
			mflags = fuzz_chance(&w->rng, 30) ? SCIF_MAP_FIXED : 0;
			off = fuzz_below(&w->rng, 1024) * PG;
		}
		ret = CALL(w, op, scif_register(fd, a, len, off, prot, mflags));
		if (ret >= 0)
			pool_add_off(ret);
		break;
	}
	case OP_UNREG: {
		int64_t off = edge_off(w);

		r = CALL(w, op, scif_unregister(fd, off, edge_len(w)));
		if (!r)
			pool_add_off(off);	/* now a just-freed offset */
		break;
	}
	case OP_READFROM:
	case OP_WRITETO:
	case OP_VREADFROM:
	case OP_VWRITETO: {
		bool sane = fuzz_chance(&w->rng, 60);
		int64_t lo = sane ? pool_off(w) : edge_off(w);
		int64_t ro = sane ? pool_off(w) : edge_off(w);
		uint64_t len = sane ? (fuzz_chance(&w->rng, 50) ? 1 + fuzz_below(&w->rng, 3 * PG) :
				       (1 + fuzz_below(&w->rng, 4)) * PG) : edge_len(w);
		void *a = sane ? chunk[fuzz_below(&w->rng, NCHUNK)] + fuzz_below(&w->rng, 32) * PG :
			  edge_addr(w);
		int f = sane ? (int)fuzz_below(&w->rng, 16) : rma_flags(w);

		if (op == OP_READFROM)
			CALL(w, op, scif_readfrom(fd, lo, len, ro, f));
		else if (op == OP_WRITETO)
			CALL(w, op, scif_writeto(fd, lo, len, ro, f));
		else if (op == OP_VREADFROM)
			CALL(w, op, scif_vreadfrom(fd, a, len, ro, f));
		else
			CALL(w, op, scif_vwriteto(fd, a, len, ro, f));
		break;
	}
	case OP_FENCE_MARK:
		r = CALL(w, op, scif_fence_mark(fd, fence_flags(w),
						fuzz_chance(&w->rng, 3) ? (int *)8 : &mark));
		if (!r) {
			pthread_mutex_lock(&tbl_lock);
			marks[nmarks++ % NPOOL] = mark;
			pthread_mutex_unlock(&tbl_lock);
		}
		break;
	case OP_FENCE_WAIT:
		pthread_mutex_lock(&tbl_lock);
		mark = fuzz_chance(&w->rng, 80) ? marks[fuzz_below(&w->rng, NPOOL)] : (int)fuzz_rnd(&w->rng);
		pthread_mutex_unlock(&tbl_lock);
		CALL(w, op, scif_fence_wait(fd, mark));
		break;
	case OP_FENCE_SIGNAL:
		CALL(w, op, scif_fence_signal(fd, edge_off(w), fuzz_rnd(&w->rng),
					      edge_off(w), fuzz_rnd(&w->rng),
					      fence_flags(w)));
		break;
	case OP_MMAP: {
		static const int prots[] = {
			PROT_READ, PROT_WRITE, PROT_READ | PROT_WRITE, 0,
		};
		size_t len = fuzz_chance(&w->rng, 10) ? edge_len(w) :
			     (1 + fuzz_below(&w->rng, 8)) * PG;
		int prot = prots[fuzz_below(&w->rng, 4)];

		int k = fuzz_below(&w->rng, NMAP);

		if (len > MAPSLOT || fuzz_chance(&w->rng, 3)) {
			/* Anywhere, mmap(2)'s flags: unmapped at once. */
			static const int fl[] = {
				MAP_SHARED, MAP_PRIVATE,
				MAP_SHARED | MAP_POPULATE,
				MAP_PRIVATE | MAP_POPULATE,
				MAP_SHARED | MAP_LOCKED, MAP_SHARED_VALIDATE,
				MAP_SHARED | MAP_NORESERVE,
			};

			p = (void *)CALL(w, op, mmap(NULL, len, prot,
						     fl[fuzz_below(&w->rng, 7)], fd,
						     edge_off(w)));
			if (p != MAP_FAILED)
				munmap(p, len);
			break;
		}
		if (!map_claim(k))
			break;
		pthread_rwlock_wrlock(&hole_lock);
		p = (void *)CALL(w, op, scif_mmap(zone(k), len, prot,
						  SCIF_MAP_FIXED, fd,
						  fuzz_chance(&w->rng, 50) ? pool_off(w) :
						  edge_off(w)));
		if (p == MAP_FAILED)
			zone_unmap(zone(k), MAPSLOT);
		pthread_rwlock_unlock(&hole_lock);
		map_release(k, p == MAP_FAILED ? NULL : p, len, prot);
		break;
	}
	case OP_RAW: {
		/* Any SCIF ioctl number (and a few others), garbage arg. */
		unsigned long nr = fuzz_below(&w->rng, 20);
		unsigned long dir = fuzz_below(&w->rng, 4), size = fuzz_below(&w->rng, 64);
		unsigned long cmd = (dir << 30) | (size << 16) | ('s' << 8) | nr;
		static const unsigned long real[] = {
			SCIF_BIND, SCIF_LISTEN, SCIF_CONNECT, SCIF_ACCEPTREQ,
			SCIF_ACCEPTREG, SCIF_SEND, SCIF_RECV, SCIF_REG,
			SCIF_UNREG, SCIF_READFROM, SCIF_WRITETO,
			SCIF_VREADFROM, SCIF_VWRITETO, SCIF_GET_NODEIDS,
			SCIF_FENCE_MARK, SCIF_FENCE_WAIT, SCIF_FENCE_SIGNAL,
		};
		uint64_t arg[8];
		unsigned int i;
		void *a;

		for (i = 0; i < 8; i++)
			arg[i] = fuzz_chance(&w->rng, 30) ? (uint64_t)edge_off(w) :
				 fuzz_chance(&w->rng, 30) ? edge_len(w) : fuzz_rnd(&w->rng);
		/* A receive/send buffer must stay in our own memory. */
		arg[0] = (uintptr_t)(w->buf + fuzz_below(&w->rng, BUFSZ / 2));
		arg[1] &= 0xfff;
		arg[3] = (uintptr_t)chunk[fuzz_below(&w->rng, NCHUNK)];
		if (fuzz_chance(&w->rng, 80))
			cmd = real[fuzz_below(&w->rng, 17)];
		if (cmd == SCIF_LISTEN || cmd == SCIF_FENCE_WAIT)
			a = (void *)(uintptr_t)fuzz_rnd(&w->rng);
		else
			a = fuzz_chance(&w->rng, 5) ? (void *)edge_addr(w) : arg;
		/* SCIF_ACCEPTREG/RECV may write through arg[0]: our buffer. */
		CALL(w, op, ioctl(fd, cmd, a));
		break;
	}
	default:
		break;
	}
	if (si >= 0)
		slot_put(si);
}

/* ---- Threads ---- */

static enum op pick_op(struct worker *w)
{
	static int total;
	int r, i;

	if (!total)
		for (i = 0; i < NR_OPS; i++)
			total += op_weight[i];
	r = fuzz_below(&w->rng, total);
	for (i = 0; r >= op_weight[i]; i++)
		r -= op_weight[i];
	return i;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	while (!atomic_load(&stop)) {
		long n = atomic_fetch_add(&calls_done, 1);
		enum op op;

		if (n >= opt_calls)
			break;
		op = pick_op(w);
		if (opt_verbose)
			printf("# t%d %ld %s\n", w->idx, n, op_name[op]);
		do_op(w, op);
	}
	pair_drop(w);
	return NULL;
}

/* Interrupts calls that run too long; reports those that never end. */
static void *watchdog_main(void *arg)
{
	int i;

	(void)arg;
	while (!atomic_load(&stop)) {
		long now = fuzz_now_ms();

		for (i = 0; i < opt_threads; i++) {
			struct worker *w = &workers[i];
			long t0 = atomic_load(&w->call_start);

			if (!t0 || now - t0 < atomic_load(&w->limit_ms))
				continue;
			atomic_store(&w->kicked, true);
			pthread_kill(w->tid, SIGUSR1);
			if (now - t0 > HANG_MS && !w->hung_reported) {
				w->hung_reported = true;
				atomic_fetch_add(&n_hung, 1);
				printf("# HANG: thread %d in %s for %ld ms after SIGUSR1\n",
				       i, op_name[atomic_load(&w->op)],
				       now - t0);
				fflush(stdout);
			}
		}
		usleep(20000);
	}
	return NULL;
}

static void print_figures(long ms)
{
	long total_err = 0, hist[NERR] = { 0 };
	int i, e;

	printf("# fuzz: seed %llu threads %d calls %ld in %ld ms (%.0f calls/s)\n",
	       (unsigned long long)opt_seed, opt_threads,
	       atomic_load(&calls_done) < opt_calls ?
	       atomic_load(&calls_done) : opt_calls, ms,
	       ms ? 1000.0 * (atomic_load(&calls_done) < opt_calls ?
			      atomic_load(&calls_done) : opt_calls) / ms : 0.0);
	for (i = 0; i < NR_OPS; i++) {
		char line[1024];
		int n = 0;

		n += snprintf(line + n, sizeof(line) - n, "# op %-13s ok %ld",
			      op_name[i], atomic_load(&ok_hist[i]));
		for (e = 0; e < NERR; e++) {
			long c = atomic_load(&err_hist[i][e]);

			if (!c)
				continue;
			hist[e] += c;
			total_err += c;
			if (n < (int)sizeof(line) - 40)
				n += snprintf(line + n, sizeof(line) - n,
					      " %s %ld",
					      e ? strerrorname_np(e) : "E?", c);
		}
		printf("%s\n", line);
	}
	printf("# fuzz-errno:");
	for (e = 0; e < NERR; e++)
		if (hist[e])
			printf(" %s=%ld", e ? strerrorname_np(e) : "E?", hist[e]);
	printf("\n# fuzz: failed calls %ld, interrupted %ld, faults caught %ld, checks %ld, undocumented %ld (known %ld), mismatches %ld, hangs %ld, bad children %ld\n",
	       total_err, atomic_load(&n_interrupted), atomic_load(&n_faults),
	       atomic_load(&n_checks), atomic_load(&n_undoc),
	       atomic_load(&n_known), atomic_load(&n_mismatch),
	       atomic_load(&n_hung), atomic_load(&n_child_bad));
	if (opt_dma_faults)
		printf("# fuzz: checks failed by injected DMA faults (EIO) %ld\n",
		       atomic_load(&n_dma_eio));
}

/* The unprivileged part; its exit status is a bit mask (see main). */
static int fuzz_child(void)
{
	struct rlimit rl = { opt_memlock, opt_memlock };
	struct sigaction sa = { 0 };
	pthread_rwlockattr_t rwa;
	pthread_t wd;
	sigset_t set;
	long t0;
	int i;

	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		perror("# setrlimit");
	if (getuid() == 0 &&
	    (setgroups(0, NULL) || setresgid(opt_uid, opt_uid, opt_uid) ||
	     setresuid(opt_uid, opt_uid, opt_uid))) {
		perror("# setresuid");
		return 64;
	}
	pthread_rwlockattr_init(&rwa);
	pthread_rwlockattr_setkind_np(&rwa,
				      PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&hole_lock, &rwa);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_NODEFER | SA_SIGINFO;
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* Only the workers take SIGUSR1. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	/*
	 * Everything a fuzzed call may write into (chunks, send/recv
	 * buffers) lies in one arena followed by a large PROT_NONE guard:
	 * a vreadfrom or recv that runs past its buffer faults (EFAULT)
	 * instead of overwriting the fuzzer's own heap or stacks.
	 */
	arena = mmap(NULL, ARENA + GUARD, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (arena == MAP_FAILED)
		return 64;
	memfd = memfd_create("scif_fuzz", 0);
	if (memfd >= 0 && ftruncate(memfd, CHUNK))
		perror("# ftruncate");
	for (i = 0; i < NCHUNK; i++) {
		char *want = arena + (long)i * CHUNK;

		if (i == 1 && memfd >= 0)
			chunk[i] = mmap(want, CHUNK, PROT_READ | PROT_WRITE,
					MAP_SHARED | MAP_FIXED, memfd, 0);
		else
			chunk[i] = mmap(want, CHUNK, i == 2 ? PROT_READ :
					PROT_READ | PROT_WRITE,
					(i == 3 ? MAP_SHARED : MAP_PRIVATE) |
					MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (chunk[i] != want)
			return 64;
		if (i == 4)
			memset(chunk[i], 0x5a, CHUNK);
	}
	for (i = 0; i < NSLOT; i++)
		slots[i].fd = -1;
	for (i = 0; i < opt_threads; i++) {
		struct worker *w = &workers[i];

		w->idx = i;
		w->rng = opt_seed * 0x9e3779b97f4a7c15ULL + i + 1;
		w->pa = w->pc = -1;
		w->buf = mmap(arena + NCHUNK * CHUNK + (long)i * BUFSZ, BUFSZ,
			      PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		/* The private pairs' windows: the oracle, not inherited. */
		w->wa = mmap(NULL, PAIR_PAGES * PG, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		w->wc = mmap(NULL, PAIR_PAGES * PG, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (w->buf == MAP_FAILED || w->wa == MAP_FAILED ||
		    w->wc == MAP_FAILED)
			return 64;
		madvise(w->wa, PAIR_PAGES * PG, MADV_DONTFORK);
		madvise(w->wc, PAIR_PAGES * PG, MADV_DONTFORK);
	}
	t0 = fuzz_now_ms();
	for (i = 0; i < opt_threads; i++)
		pthread_create(&workers[i].tid, NULL, worker_main, &workers[i]);
	pthread_create(&wd, NULL, watchdog_main, NULL);
	for (i = 0; i < opt_threads; i++)
		pthread_join(workers[i].tid, NULL);
	atomic_store(&stop, true);
	pthread_join(wd, NULL);
	print_figures(fuzz_now_ms() - t0);
	for (i = 0; i < NSLOT; i++)
		if (slots[i].fd >= 0)
			close(slots[i].fd);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	return (atomic_load(&n_undoc) ? 1 : 0) |
	       (atomic_load(&n_mismatch) || atomic_load(&n_child_bad) ? 2 : 0) |
	       (atomic_load(&n_hung) ? 4 : 0);
}

/* "name value" from <debugfs>/scif/<file>, or -1. */
static long dbg_value(const char *file, const char *name)
{
	char path[128], line[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), DBG "%s", file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, strlen(name)) &&
		    line[strlen(name)] == ' ')
			v = atol(line + strlen(name) + 1);
	fclose(f);
	return v;
}

static long dbg_lines(const char *file)
{
	char path[128], line[256];
	long n = 0;
	FILE *f;

	snprintf(path, sizeof(path), DBG "%s", file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

#define DMA_MIN_PARAM	"/sys/module/scif/parameters/dma_min"

/*
 * -D: every copy of the engine by DMA (dma_min 1), so that the injected
 * failures meet the fuzzed RMAs; @old receives the value to restore.
 */
static int dma_min_set(const char *val, char *old, size_t len)
{
	FILE *f = fopen(DMA_MIN_PARAM, "r");
	int rc = -1;

	if (old && (!f || !fgets(old, len, f)))
		goto out;
	if (f)
		fclose(f);
	f = fopen(DMA_MIN_PARAM, "w");
	if (f && fputs(val, f) >= 0)
		rc = 0;
out:
	if (f && fclose(f))
		rc = -1;
	return rc;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: scif_fuzz [-s SEED] [-n CALLS] [-t THREADS] [-u UID] [-m MEMLOCK] [-T SECONDS] [-D] [-v]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	long ep0, pin0, win0, ep1 = -1, pin1 = -1, win1 = -1;
	char dma_min0[32] = "";
	int c, st = 0, t, code = -1;
	uint16_t nodes[1];
	pid_t pid;
	long t0;

	opt_seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
	fastpath_on = !getenv("SCIF_FASTPATH") ||
		      strcmp(getenv("SCIF_FASTPATH"), "0");
	while ((c = getopt(argc, argv, "s:n:t:u:m:T:Dv")) != -1) {
		switch (c) {
		case 's': opt_seed = strtoull(optarg, NULL, 0); break;
		case 'n': opt_calls = atol(optarg); break;
		case 't': opt_threads = atoi(optarg); break;
		case 'u': opt_uid = atoi(optarg); break;
		case 'm': opt_memlock = atol(optarg); break;
		case 'T': opt_secs = atoi(optarg); break;
		case 'D': opt_dma_faults = 1; break;
		case 'v': opt_verbose = 1; break;
		default: usage();
		}
	}
	if (opt_threads < 1 || opt_threads > MAXT || opt_calls < 0)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	errno_tables();
	printf("TAP version 13\n1..4\n");
	printf("# scif_fuzz -s %llu -n %ld -t %d (replay: the same -s with -t 1)\n",
	       (unsigned long long)opt_seed, opt_calls, opt_threads);
	if (scif_get_nodeIDs(nodes, 1, &self_node) < 0) {
		printf("# no SCIF (%s)\n", strerror(errno));
		for (t = 1; t <= 4; t++)
			printf("not ok %d scif available\n", t);
		return 1;
	}
	ep0 = dbg_lines("endpoints");
	pin0 = dbg_value("rma", "pinned_pages");
	win0 = dbg_value("rma", "windows");
	if (opt_dma_faults && dma_min_set("1", dma_min0, sizeof(dma_min0))) {
		printf("# -D: cannot set %s (%s)\n", DMA_MIN_PARAM,
		       strerror(errno));
		dma_min0[0] = '\0';
	}

	t0 = fuzz_now_ms();
	pid = fork();
	if (pid == 0)
		_exit(fuzz_child());
	while (pid > 0) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid) {
			code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
			break;
		}
		if (fuzz_now_ms() - t0 > opt_secs * 1000L) {
			printf("# child still running after %d s: killed\n",
			       opt_secs);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			break;
		}
		usleep(50000);
	}
	if (dma_min0[0])
		dma_min_set(dma_min0, NULL, 0);
	if (code >= 0 && code < 64) {
		printf("%sok 1 calls_complete\n", (code & 4) ? "not " : "");
		printf("%sok 2 errno_documented\n", (code & 1) ? "not " : "");
		printf("%sok 3 data_intact\n", (code & 2) ? "not " : "");
	} else {
		printf("# child ended with status %#x\n", st);
		printf("not ok 1 calls_complete\nnot ok 2 errno_documented\nnot ok 3 data_intact\n");
	}
	/*
	 * Endpoints are destroyed, pages unpinned, asynchronously: the
	 * baseline may still count some of an earlier program (or of
	 * scif_get_nodeIDs() above), so "back" means "not above it".
	 */
	for (t = 0; t < 200; t++) {
		ep1 = dbg_lines("endpoints");
		pin1 = dbg_value("rma", "pinned_pages");
		win1 = dbg_value("rma", "windows");
		if (ep1 <= ep0 && pin1 <= pin0 && win1 <= win0)
			break;
		usleep(50000);
	}
	printf("# after: endpoints %ld (before %ld), pinned pages %ld (%ld), windows %ld (%ld)\n",
	       ep1, ep0, pin1, pin0, win1, win0);
	printf("%sok 4 resources_released\n",
	       ep1 <= ep0 && pin1 <= pin0 && win1 <= win0 ? "" : "not ");
	return code == 0 && ep1 <= ep0 && pin1 <= pin0 && win1 <= win0 ? 0 : 1;
}
