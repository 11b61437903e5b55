/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the remote mmap tests: touch an address and report the
 * signal it raised, and an 8-byte ping-pong through shared memory.
 */
#ifndef SCIF_MMAP_TEST_H
#define SCIF_MMAP_TEST_H

#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

static sigjmp_buf probe_jb;
static volatile sig_atomic_t probe_sig;

static inline void probe_handler(int sig)
{
	probe_sig = sig;
	siglongjmp(probe_jb, 1);
}

/* Read (or write) *@p: 0, or the signal that the access raised. */
static inline int probe(volatile uint64_t *p, bool write)
{
	struct sigaction sa = { .sa_handler = probe_handler }, obus, osegv;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &obus);
	sigaction(SIGSEGV, &sa, &osegv);
	probe_sig = 0;
	if (!sigsetjmp(probe_jb, 1)) {
		if (write)
			*p = 0x5c1f;
		else
			(void)*p;
	}
	sigaction(SIGBUS, &obus, NULL);
	sigaction(SIGSEGV, &osegv, NULL);
	return probe_sig;
}

/* Poll @p until the access raises @sig (up to @ms): 0 if it did. */
static inline int probe_until(volatile uint64_t *p, int sig, int ms)
{
	for (int i = 0; i < ms / 10; i++) {
		if (probe(p, false) == sig)
			return 0;
		usleep(10000);
	}
	return -1;
}

static inline double mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/*
 * Wait for *@p to become @want, yielding now and then (a guest may have
 * fewer CPUs than spinners); -1 after @ms milliseconds.
 */
static inline int spin_for(volatile uint64_t *p, uint64_t want, int ms)
{
	double limit = mono_us() + ms * 1000.0;
	unsigned int n = 0;

	while (__atomic_load_n(p, __ATOMIC_ACQUIRE) != want) {
		if (++n % 256 == 0) {
			if (mono_us() > limit)
				return -1;
			sched_yield();
		}
	}
	return 0;
}

/*
 * The pinging side of an 8-byte ping-pong: write i to @ping, wait for
 * the other side to echo it in @pong, @rounds times.  The mean round
 * trip in microseconds, or a negative value on a timeout.
 */
static inline double ping_rounds(volatile uint64_t *ping,
				 volatile uint64_t *pong, uint64_t rounds)
{
	double t0 = mono_us();

	for (uint64_t i = 1; i <= rounds; i++) {
		__atomic_store_n(ping, i, __ATOMIC_RELEASE);
		if (spin_for(pong, i, 5000))
			return -1;
	}
	return (mono_us() - t0) / rounds;
}

/* The echoing side: every value seen in @ping goes back in @pong. */
static inline int pong_rounds(volatile uint64_t *ping,
			      volatile uint64_t *pong, uint64_t rounds)
{
	for (uint64_t i = 1; i <= rounds; i++) {
		if (spin_for(ping, i, 5000))
			return -1;
		__atomic_store_n(pong, i, __ATOMIC_RELEASE);
	}
	return 0;
}

#endif /* SCIF_MMAP_TEST_H */
