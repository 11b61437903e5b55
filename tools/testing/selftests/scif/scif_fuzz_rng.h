/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fuzzers' seeded random numbers (xorshift64*, one state per thread,
 * so that a seed replays the same run) and their clock.
 */
#ifndef SCIF_FUZZ_RNG_H
#define SCIF_FUZZ_RNG_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

static inline long fuzz_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* The next number of the state at @s (never 0). */
static inline uint64_t fuzz_rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* A number below @n (0 if @n is 0). */
static inline uint64_t fuzz_below(uint64_t *s, uint64_t n)
{
	return n ? fuzz_rnd(s) % n : 0;
}

/* True @pct times in 100. */
static inline bool fuzz_chance(uint64_t *s, int pct)
{
	return (int)fuzz_below(s, 100) < pct;
}

#endif /* SCIF_FUZZ_RNG_H */
