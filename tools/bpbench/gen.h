/* SPDX-License-Identifier: MIT */
/*
 * gen.h - random number and key-choice generators of the YCSB workloads.
 *
 * Design note
 * -----------
 * Layer: bpbench's, on util only.  Each worker thread owns its generators
 * (no shared state, no locks).
 *   - rng: the project's one PRNG (util/prng.h, xorshift64*), one stream
 *     per thread from util_rand_seed(seed, thread).
 *   - zipfian: YCSB's ZipfianGenerator (Gray et al., "Quickly generating
 *     billion-record synthetic databases"), theta 0.99 by default; the item
 *     count may grow (inserts) and zeta is then extended incrementally.
 *   - scrambled zipfian: a zipfian rank hashed (FNV-1a 64) over the item
 *     space, so the hot items are spread over the key space (YCSB default).
 *   - latest: the most recently inserted items are the hottest.
 * Record numbers map to keys with key_of(), a bijection of uint64_t, so keys
 * are scattered over the tree and never collide.  mix64 (splitmix64's
 * finaliser) is that bijection's core; tiotest's page patterns use it too.
 */
#ifndef TOOLS_BPBENCH_GEN_H
#define TOOLS_BPBENCH_GEN_H

#include <stdint.h>

#define ZIPF_THETA_DEFAULT 0.99

enum key_dist { DIST_ZIPFIAN = 0, DIST_UNIFORM, DIST_LATEST };

struct rng {
	uint64_t s; /* util_rand_next's state: never 0 (util_rand_seed) */
};

struct zipf {
	double theta, alpha, zetan, eta, zeta2;
	uint64_t n; /* items zetan covers */
};

/* A stream of seed for one thread. */
struct rng rng_seeded(uint64_t seed, uint64_t thread);
/* Uniform in [0, n); n > 0. */
uint64_t rng_below(struct rng *r, uint64_t n);
/* Uniform in [0, 1). */
double rng_double(struct rng *r);

void zipf_init(struct zipf *z, uint64_t n, double theta);
/* A zipfian rank in [0, n), 0 the most popular; n may grow between calls. */
uint64_t zipf_next(struct zipf *z, struct rng *r, uint64_t n);

/* Choose a record number in [0, n) by distribution d (latest: n - 1 is the
 * hottest). */
uint64_t key_choose(enum key_dist d, struct zipf *z, struct rng *r, uint64_t n);

/* Record number <-> key (a bijection of uint64_t). */
uint64_t key_of(uint64_t recno);
uint64_t recno_of(uint64_t key);
uint64_t fnv64(uint64_t v);
/* splitmix64's finaliser: a bijection of uint64_t that spreads nearby
 * inputs over all 64 bits. */
uint64_t mix64(uint64_t x);

#endif
