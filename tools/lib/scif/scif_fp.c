// SPDX-License-Identifier: LGPL-2.1
/*
 * libscif: the user-space data path.
 *
 * On the first send or receive of a connected endpoint, the library asks
 * the kernel for the endpoint's data path (SCIF_FP_OPEN) and maps its
 * three parts: the counter page shared with the kernel, this side's half
 * of the queue pair (read-only) and the peer's half, through the link.
 * scif_send() then copies into the peer's ring and scif_recv() out of
 * ours without a system call, following the kernel's ring protocol: the
 * counts are published after the bytes, and the peer is sent the DATA or
 * SPACE message it asked for before sleeping (SCIF_FP_NOTIFY).  What the
 * rings cannot do now is left to SCIF_SEND and SCIF_RECV, which work on
 * the same counts: errors and a connection that went away (the rest of
 * the call), and sleeping for data or room (a few bytes, then the call
 * goes on here).
 *
 * Each side of the counter page has a lock word, taken for a round by
 * the library (with the process id) and by the kernel; a round that finds
 * it taken goes to the kernel, which waits for it.  So threads, forked
 * processes (the mappings are shared) and the kernel's own calls take
 * turns.  Once the connection goes, the kernel clears the page's state
 * and the peer's half is replaced by a page of zeroes, so a round that
 * raced with the disconnect writes into nothing and the next call gets
 * the kernel's answer (ECONNRESET); no access ever faults.
 *
 * SCIF_FASTPATH=0 in the environment turns the data path off;
 * SCIF_FASTPATH_WARMUP=N (default 16) is how many calls an endpoint makes
 * through the kernel before it gets its data path, a call of more than
 * 4 KiB counting once per 4 KiB more.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/scif_ioctl.h>

#include "scif_fp.h"

/* Endpoints by descriptor: FP_TOP blocks of FP_BLK entries. */
#define FP_BLK		1024
#define FP_TOP		1024
/* The kernel cannot give this endpoint a data path: do not ask again. */
#define FP_NONE		((struct fp *)1)
/*
 * Calls of an endpoint through the kernel before it gets a data path; a
 * call counts once more for each FP_WARMUP_BYTES it asks to move, so a
 * stream of large messages does not send its first sixteen through the
 * kernel's copy (a quarter of a 64 MiB run of 1 MiB messages).
 */
#define FP_WARMUP	16
#define FP_WARMUP_BYTES	4096
/* Below mmap_min_addr's default: no buffer is ever there. */
#define FP_MIN_ADDR	65536
/* The most one round moves: a quarter of the ring, as the kernel does. */
#define FP_PIECE(size)	((size) / 4)
/*
 * Ring copies go through memcpy() in pieces of at most this: glibc's x86
 * memcpy copies blocks above 2 KiB (SSE2), 4 KiB (AVX) or 8 KiB
 * (AVX-512) and below its non-temporal threshold with "rep movsb", which
 * QEMU's TCG emulates an element at a time: 0.6 GB/s against 3 to 5
 * GB/s for its vector loop, the dip of messages of 16 KiB to 256 KiB in
 * make bench (performance.rst).  On hardware the vector loop runs at
 * about the speed of rep movsb for blocks this size.
 */
#define FP_COPY_PIECE	2048

/*
 * What a blocking call hands the kernel when it must sleep: the kernel
 * sleeps until the ring has room (or data), moves these few bytes with
 * its own copy, and the call goes on in user space.  Handing it the
 * whole rest made one sleep cost the rest of a large message at the
 * kernel's copy speed: the 64 KiB dip between VMs (performance.rst).
 */
#define FP_SLEEP_BYTES	64

/* How often a waiter whose peer is on another node offers its CPU. */
#define FP_REMOTE_YIELD_NS	10000u

struct fp {
	struct scif_fp_ctl *ctl;
	const volatile struct scif_fp_half *local;
	volatile struct scif_fp_half *remote;
	const unsigned char *rx_ring;
	unsigned char *tx_ring;
	uint32_t rx_size;
	uint32_t tx_size;
	size_t local_len;
	size_t remote_len;
	int peer_remote;	/* SCIF_FP_PEER_REMOTE: it never needs our CPU */
};

/*
 * A descriptor's entry.  The blocks are never freed, so a call counts
 * itself in @users before it looks at @f, and scif_fp_forget() takes
 * @f away, then waits for @users to drain before unmapping.
 */
struct fp_slot {
	struct fp *f;
	int users;
	unsigned int calls;	/* made before @f was asked for */
};

static struct fp_slot *fp_table[FP_TOP];
static pthread_mutex_t fp_table_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t fp_once = PTHREAD_ONCE_INIT;
static int fp_inited;		/* fp_init() has run: no pthread_once() */
static int fp_off;
static unsigned int fp_warmup;
static unsigned int fp_spin_ns;
static uint32_t fp_pid;

/*
 * The child has only the thread that forked: the uses other threads
 * counted are not its own.
 */
static void fp_atfork_child(void)
{
	int t, i;

	__atomic_store_n(&fp_pid, (uint32_t)getpid(), __ATOMIC_RELAXED);
	for (t = 0; t < FP_TOP; t++)
		for (i = 0; fp_table[t] && i < FP_BLK; i++)
			fp_table[t][i].users = 0;
}

/*
 * How long a blocking call watches the ring before it sleeps: the
 * kernel's own busy_poll_us, so that both paths wait alike.
 */
static unsigned int fp_busy_poll_us(void)
{
	FILE *f = fopen("/sys/module/scif/parameters/busy_poll_us", "re");
	unsigned int us = 50;

	if (f) {
		if (fscanf(f, "%u", &us) != 1 || us > 10000)
			us = 50;
		fclose(f);
	}
	return us;
}

static void fp_init(void)
{
	const char *env = getenv("SCIF_FASTPATH");

	fp_off = env && !strcmp(env, "0");
	/*
	 * An endpoint gets its data path once its calls add up to more
	 * than FP_WARMUP: the few messages of a short-lived connection are
	 * not worth the mappings, a large one is.
	 */
	env = getenv("SCIF_FASTPATH_WARMUP");
	fp_warmup = env ? strtoul(env, NULL, 10) : FP_WARMUP;
	fp_spin_ns = fp_busy_poll_us() * 1000;
	fp_pid = getpid();
	pthread_atfork(NULL, NULL, fp_atfork_child);
	__atomic_store_n(&fp_inited, 1, __ATOMIC_RELEASE);
}

static struct fp_slot *fp_slot(int epd, int create)
{
	unsigned int top = (unsigned int)epd / FP_BLK;
	struct fp_slot *blk;

	if (epd < 0 || top >= FP_TOP)
		return NULL;
	blk = __atomic_load_n(&fp_table[top], __ATOMIC_ACQUIRE);
	if (!blk && create) {
		pthread_mutex_lock(&fp_table_lock);
		blk = fp_table[top];
		if (!blk) {
			blk = calloc(FP_BLK, sizeof(*blk));
			__atomic_store_n(&fp_table[top], blk, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&fp_table_lock);
	}
	return blk ? &blk[epd % FP_BLK] : NULL;
}

static void fp_unmap(struct fp *f)
{
	munmap(f->ctl, sysconf(_SC_PAGESIZE));
	if (f->local)
		munmap((void *)f->local, f->local_len);
	if (f->remote)
		munmap((void *)f->remote, f->remote_len);
	free(f);
}

static void *fp_map(int fd, size_t len, int prot, uint64_t off)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, (off_t)off);

	return p == MAP_FAILED ? NULL : p;
}

/* Ask the kernel for @epd's data path; NULL if there is none (yet). */
static struct fp *fp_open(int epd, int *never)
{
	struct scifioctl_fp req = { 0 };
	struct fp *f;
	int err;

	if (ioctl(epd, SCIF_FP_OPEN, &req) < 0) {
		/*
		 * Never again for a bus that cannot, or a connection that
		 * is gone; anything else (not connected yet, not an
		 * endpoint, out of memory) may change.
		 */
		*never = errno == EOPNOTSUPP || errno == ECONNRESET;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (f) {
		f->ctl = fp_map(req.fd, sysconf(_SC_PAGESIZE),
				PROT_READ | PROT_WRITE, SCIF_FP_CTL_OFF);
		f->local_len = req.local_len;
		f->remote_len = req.remote_len;
		f->local = fp_map(req.fd, req.local_len, PROT_READ,
				  req.local_off);
		f->remote = fp_map(req.fd, req.remote_len,
				   PROT_READ | PROT_WRITE, req.remote_off);
		f->rx_size = req.rx_size;
		f->tx_size = req.tx_size;
		f->peer_remote = !!(req.flags & SCIF_FP_PEER_REMOTE);
		f->rx_ring = (const unsigned char *)f->local + req.ring_off;
		f->tx_ring = (unsigned char *)f->remote + req.ring_off;
	}
	err = errno;
	close(req.fd);
	if (!f || !f->ctl || !f->local || !f->remote) {
		/* Out of mappings (vm.max_map_count) or memory: not again. */
		*never = 1;
		if (f && f->ctl)
			fp_unmap(f);
		else
			free(f);
		f = NULL;
	}
	errno = err;
	return f;
}

/* Install a new data path for @epd in @slot, or take the one there. */
static struct fp *fp_install(int epd, struct fp_slot *slot)
{
	struct fp *f, *cur = NULL;
	int never = 0;

	f = fp_open(epd, &never);
	if (!f) {
		if (never)
			__atomic_compare_exchange_n(&slot->f, &cur, FP_NONE, 0,
						    __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST);
		return NULL;
	}
	if (!__atomic_compare_exchange_n(&slot->f, &cur, f, 0,
					 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
		fp_unmap(f);	/* another thread was first */
		f = cur;
	}
	return f == FP_NONE ? NULL : f;
}

/* The data path of @epd, its use counted in *@slotp, or NULL. */
static struct fp *fp_get(int epd, size_t len, struct fp_slot **slotp)
{
	struct fp_slot *slot;
	struct fp *f;

	if (!__atomic_load_n(&fp_inited, __ATOMIC_ACQUIRE))
		pthread_once(&fp_once, fp_init);
	if (fp_off)
		return NULL;
	slot = fp_slot(epd, 1);
	if (!slot)
		return NULL;
	__atomic_add_fetch(&slot->users, 1, __ATOMIC_SEQ_CST);
	f = __atomic_load_n(&slot->f, __ATOMIC_SEQ_CST);
	if (!f && __atomic_add_fetch(&slot->calls, 1 + len / FP_WARMUP_BYTES,
				     __ATOMIC_RELAXED) > fp_warmup)
		f = fp_install(epd, slot);
	if (!f || f == FP_NONE) {
		__atomic_sub_fetch(&slot->users, 1, __ATOMIC_SEQ_CST);
		return NULL;
	}
	*slotp = slot;
	return f;
}

static void fp_put(struct fp_slot *slot)
{
	__atomic_sub_fetch(&slot->users, 1, __ATOMIC_SEQ_CST);
}

void scif_fp_forget(int epd)
{
	struct fp_slot *slot = fp_slot(epd, 0);
	struct fp *f;

	if (!slot)
		return;
	__atomic_store_n(&slot->calls, 0, __ATOMIC_RELAXED);
	f = __atomic_exchange_n(&slot->f, NULL, __ATOMIC_SEQ_CST);
	if (!f || f == FP_NONE)
		return;
	/* Calls that saw it finish with it first. */
	while (__atomic_load_n(&slot->users, __ATOMIC_SEQ_CST))
		sched_yield();
	fp_unmap(f);
}

static int fp_trylock(uint32_t *lock)
{
	uint32_t free_ = 0;

	return __atomic_compare_exchange_n(lock, &free_,
					   __atomic_load_n(&fp_pid,
							   __ATOMIC_RELAXED),
					   0, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

static void fp_unlock(uint32_t *lock)
{
	__atomic_store_n(lock, 0, __ATOMIC_RELEASE);
}

/*
 * Let go of the lock after a round that moved data, with a full barrier
 * (a locked instruction on x86, as cheap as a fence): the count the
 * round published is out before fp_notify() looks at the peer's flag.
 */
static void fp_unlock_moved(uint32_t *lock)
{
	__atomic_exchange_n(lock, 0, __ATOMIC_SEQ_CST);
}

/*
 * The bytes of a round are out before its count.  They may sit in
 * write-combining buffers (the peer's ring, through a BAR), which on
 * x86 only a store fence orders; elsewhere a full fence.
 */
static void fp_bytes_before_count(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("sfence" : : : "memory");
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

static int fp_live(const struct fp *f)
{
	return __atomic_load_n(&f->ctl->state, __ATOMIC_ACQUIRE) ==
	       SCIF_FP_LIVE;
}

enum fp_stop { FP_MOVED, FP_WAIT, FP_KERNEL };

static void fp_copy(void *dst, const void *src, size_t len)
{
	size_t k;

	while (len) {
		k = len < FP_COPY_PIECE ? len : FP_COPY_PIECE;
		memcpy(dst, src, k);
		dst = (char *)dst + k;
		src = (const char *)src + k;
		len -= k;
	}
}

/*
 * One round of sending, at most one piece.  FP_MOVED (*@n bytes),
 * FP_WAIT (no room), FP_KERNEL (the kernel must answer: the lock is
 * taken, the connection is not live, or the counts make no sense).
 */
static enum fp_stop fp_send_round(struct fp *f, const unsigned char *buf,
				  size_t len, int first, size_t *n)
{
	struct scif_fp_ctl *c = f->ctl;
	uint32_t w, used, pos;
	size_t k, head;

	if (!fp_live(f) || !fp_trylock(&c->tx_lock))
		return FP_KERNEL;
	w = c->tx_write;
	used = w - __atomic_load_n(&f->local->tx_read, __ATOMIC_ACQUIRE);
	if (!fp_live(f) || used > f->tx_size) {
		fp_unlock(&c->tx_lock);
		return FP_KERNEL;
	}
	k = f->tx_size - used;
	if (k > len)
		k = len;
	if (k > FP_PIECE(f->tx_size))
		k = FP_PIECE(f->tx_size);
	if (!k) {
		fp_unlock(&c->tx_lock);
		return FP_WAIT;
	}
	pos = w & (f->tx_size - 1);
	head = f->tx_size - pos < k ? f->tx_size - pos : k;
	fp_copy(f->tx_ring + pos, buf, head);
	fp_copy(f->tx_ring, buf + head, k - head);
	fp_bytes_before_count();
	c->tx_write = w + k;
	__atomic_store_n(&f->remote->rx_write, w + k, __ATOMIC_RELEASE);
	c->tx_bytes += k;
	c->tx_msgs += first;
	fp_unlock_moved(&c->tx_lock);
	*n = k;
	return FP_MOVED;
}

/* One round of receiving, as fp_send_round() (FP_WAIT: nothing there). */
static enum fp_stop fp_recv_round(struct fp *f, unsigned char *buf,
				  size_t len, int first, size_t *n)
{
	struct scif_fp_ctl *c = f->ctl;
	uint32_t r, avail, pos;
	size_t k, head;

	if (!fp_live(f) || !fp_trylock(&c->rx_lock))
		return FP_KERNEL;
	r = c->rx_read;
	avail = __atomic_load_n(&f->local->rx_write, __ATOMIC_ACQUIRE) - r;
	if (!fp_live(f) || avail > f->rx_size) {
		fp_unlock(&c->rx_lock);
		return FP_KERNEL;
	}
	k = avail < len ? avail : len;
	if (k > FP_PIECE(f->rx_size))
		k = FP_PIECE(f->rx_size);
	if (!k) {
		fp_unlock(&c->rx_lock);
		return FP_WAIT;
	}
	pos = r & (f->rx_size - 1);
	head = f->rx_size - pos < k ? f->rx_size - pos : k;
	fp_copy(buf, f->rx_ring + pos, head);
	fp_copy(buf + head, f->rx_ring, k - head);
	/* Our reads are done before the peer may overwrite the bytes. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	c->rx_read = r + k;
	__atomic_store_n(&f->remote->tx_read, r + k, __ATOMIC_RELEASE);
	c->rx_bytes += k;
	c->rx_msgs += first;
	fp_unlock_moved(&c->rx_lock);
	*n = k;
	return FP_MOVED;
}

/*
 * Tell the peer, if it asked, that a round moved data.  Our count is out
 * before we look at its flag (scif_proto.h): fp_unlock_moved() saw to it.
 */
static void fp_notify(int epd, const volatile uint32_t *wants, int what)
{
	if (*wants)
		ioctl(epd, SCIF_FP_NOTIFY, (long)what);
}

/* Whether a round would move something now (a hint, without the lock). */
static int fp_ready(const struct fp *f, int tx)
{
	const struct scif_fp_ctl *c = f->ctl;

	if (!fp_live(f))
		return 1;
	if (tx)
		return __atomic_load_n(&c->tx_write, __ATOMIC_RELAXED) -
		       __atomic_load_n(&f->local->tx_read, __ATOMIC_ACQUIRE) <
		       f->tx_size;
	return __atomic_load_n(&f->local->rx_write, __ATOMIC_ACQUIRE) !=
	       __atomic_load_n(&c->rx_read, __ATOMIC_RELAXED);
}

static uint64_t fp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

/*
 * Watch the ring for up to the busy-poll time, as the kernel does before
 * it sleeps: the peer's count lands in our memory, so an answer that
 * comes soon is seen without a system call, a doorbell or a wake-up.
 * The CPU is offered to others every 64 looks when the peer is on this
 * node (it may be waiting for this very CPU), and only every
 * FP_REMOTE_YIELD_NS when it is on another: there a yield is a system
 * call that helps nobody in the usual case, and a round trip that
 * waited for one took twice as long (performance.rst).
 * Returns whether a round may move something now.
 */
static int fp_spin(const struct fp *f, int tx)
{
	uint64_t gap = f->peer_remote ? FP_REMOTE_YIELD_NS : 0;
	uint64_t now = fp_now_ns(), until = now + fp_spin_ns;
	uint64_t next_yield = now + gap;
	unsigned int i;

	for (i = 1;; i++) {
		if (fp_ready(f, tx))
			return 1;
		if (!(i % 64)) {
			now = fp_now_ns();
			if (now >= until)
				return 0;
			if (now >= next_yield) {
				sched_yield();
				next_yield = now + gap;
			}
		}
	}
}

/* Why fp_xfer() stopped short of @len. */
enum fp_why { FP_DONE, FP_ASK_KERNEL, FP_SLEEP };

/*
 * Move data round by round until done, or until a round must wait (then,
 * with @block, spin a little and leave the sleep to the kernel: FP_SLEEP)
 * or the kernel must answer (FP_ASK_KERNEL).  Returns the bytes moved.
 */
static size_t fp_xfer(int epd, struct fp *f, unsigned char *buf, size_t len,
		      int first, int block, int tx, enum fp_why *why)
{
	enum fp_stop stop;
	size_t done = 0, n;

	*why = FP_DONE;
	while (done < len) {
		stop = tx ? fp_send_round(f, buf + done, len - done,
					  first && !done, &n) :
			    fp_recv_round(f, buf + done, len - done,
					  first && !done, &n);
		if (stop == FP_MOVED) {
			done += n;
			if (tx)
				fp_notify(epd, &f->local->tx_wanted,
					  SCIF_FP_NOTIFY_DATA);
			else
				fp_notify(epd, &f->local->rx_waiting,
					  SCIF_FP_NOTIFY_SPACE);
			continue;
		}
		if (stop == FP_KERNEL) {
			if ((first && !done) || block)
				*why = FP_ASK_KERNEL;
			break;
		}
		if (!block)
			break;
		if (!fp_spin(f, tx)) {
			*why = FP_SLEEP;
			break;
		}
	}
	return done;
}

/*
 * A call through the fast path: rounds in user space; when a blocking
 * call must sleep, the kernel sleeps and moves FP_SLEEP_BYTES, and the
 * call goes on here.  The kernel's answer (an error, a signal, a lock it
 * holds) ends the call as the kernel's own path would.
 */
static int fp_msg(int epd, void *msg, int len, int flags, int tx,
		  int (*kcall)(int, void *, int, int))
{
	unsigned char *buf = msg;
	struct fp_slot *slot;
	enum fp_why why;
	size_t done = 0;
	struct fp *f;
	int n, ask;

	/*
	 * Errors are the kernel's to report, and so is a buffer in the
	 * page range no process may map (EFAULT); any other buffer the
	 * process cannot access faults here, as memcpy() would.
	 */
	if (len <= 0 || (flags & ~SCIF_SEND_BLOCK) ||
	    (uintptr_t)msg < FP_MIN_ADDR)
		return kcall(epd, msg, len, flags);
	for (;;) {
		f = fp_get(epd, len - done, &slot);
		if (f) {
			done += fp_xfer(epd, f, buf + done, len - done, !done,
					flags & SCIF_SEND_BLOCK, tx, &why);
			fp_put(slot);
		} else {
			why = FP_ASK_KERNEL;
		}
		if (why == FP_DONE || done == (size_t)len)
			return done;
		ask = len - done;
		if (why == FP_SLEEP && ask > FP_SLEEP_BYTES)
			ask = FP_SLEEP_BYTES;
		n = kcall(epd, buf + done, ask, flags);
		if (n < 0)
			return done ? (int)done : -1;
		done += n;
		/* Short: a signal came while the kernel had the call. */
		if (why == FP_ASK_KERNEL || n < ask || done == (size_t)len)
			return done;
	}
}

int scif_fp_send(int epd, void *msg, int len, int flags,
		 int (*kcall)(int, void *, int, int))
{
	return fp_msg(epd, msg, len, flags, 1, kcall);
}

int scif_fp_recv(int epd, void *msg, int len, int flags,
		 int (*kcall)(int, void *, int, int))
{
	return fp_msg(epd, msg, len, flags, 0, kcall);
}
