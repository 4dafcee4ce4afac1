/* SPDX-License-Identifier: MIT */
/*
 * util/prng.h - the one pseudo-random generator of the project.
 *
 * Design note
 * -----------
 * Layer 0 (util): header only.  xorshift64* (Marsaglia's xorshift with a
 * multiplicative output scramble, as in Vigna's "An experimental
 * exploration of Marsaglia's xorshift generators"): 8 bytes of state, a
 * period of 2^64 - 1, good enough for picking keys, injecting faults and
 * shuffling tests, and deterministic, so a seed reproduces a run.  The
 * state lives in the caller's variable (one per thread); no global state.
 * The state must never be 0 (0 is a fixed point): util_rand_seed gives a
 * non-zero state for any seed.
 */
#ifndef UTIL_PRNG_H
#define UTIL_PRNG_H

#include <stdint.h>

/* The next number of the sequence whose state is *s (never 0). */
static inline uint64_t util_rand_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * UINT64_C(0x2545f4914f6cdd1d);
}

/* A non-zero state for stream `stream` of seed `seed`: splitmix64's
 * finaliser spreads nearby (seed, stream) pairs over the whole state
 * space, so per-thread streams of one seed do not start correlated. */
static inline uint64_t util_rand_seed(uint64_t seed, uint64_t stream)
{
	uint64_t z = seed + (stream + 1) * UINT64_C(0x9e3779b97f4a7c15);

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	z ^= z >> 31;
	return z ? z : UINT64_C(0x9e3779b97f4a7c15);
}

#endif
