/* SPDX-License-Identifier: MIT */
/*
 * gen.c - YCSB key generators (see gen.h).
 *
 * Design note: layer: bpbench, on util (the PRNG) only.  Pure functions of
 * their arguments and per-thread state; nothing shared.
 */
#include "gen.h"

#include <math.h>

#include "util/prng.h"

struct rng rng_seeded(uint64_t seed, uint64_t thread)
{
	return (struct rng){util_rand_seed(seed, thread)};
}

uint64_t rng_below(struct rng *r, uint64_t n)
{
	return util_rand_next(&r->s) % n; /* bias < n / 2^64: negligible */
}

double rng_double(struct rng *r)
{
	return (double)(util_rand_next(&r->s) >> 11) * 0x1.0p-53;
}

static double zeta_add(uint64_t from, uint64_t to, double theta, double sum)
{
	for (uint64_t i = from; i < to; i++)
		sum += 1.0 / pow((double)(i + 1), theta);
	return sum;
}

static void zipf_derive(struct zipf *z)
{
	z->eta = (1.0 - pow(2.0 / (double)z->n, 1.0 - z->theta)) / (1.0 - z->zeta2 / z->zetan);
}

void zipf_init(struct zipf *z, uint64_t n, double theta)
{
	z->theta = theta;
	z->alpha = 1.0 / (1.0 - theta);
	z->zeta2 = zeta_add(0, 2, theta, 0.0);
	z->n = n < 2 ? 2 : n;
	z->zetan = zeta_add(0, z->n, theta, 0.0);
	zipf_derive(z);
}

uint64_t zipf_next(struct zipf *z, struct rng *r, uint64_t n)
{
	if (n > z->n) { /* items were inserted: extend zeta incrementally */
		z->zetan = zeta_add(z->n, n, z->theta, z->zetan);
		z->n = n;
		zipf_derive(z);
	}
	double u = rng_double(r), uz = u * z->zetan;
	uint64_t v;
	if (uz < 1.0)
		v = 0;
	else if (uz < 1.0 + pow(0.5, z->theta))
		v = 1;
	else
		v = (uint64_t)((double)z->n * pow(z->eta * u - z->eta + 1.0, z->alpha));
	return v < n ? v : n - 1;
}

uint64_t fnv64(uint64_t v)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (int i = 0; i < 8; i++) {
		h ^= v & 0xff;
		h *= UINT64_C(0x100000001b3);
		v >>= 8;
	}
	return h;
}

uint64_t key_choose(enum key_dist d, struct zipf *z, struct rng *r, uint64_t n)
{
	switch (d) {
	case DIST_UNIFORM:
		return rng_below(r, n);
	case DIST_LATEST:
		return n - 1 - zipf_next(z, r, n);
	case DIST_ZIPFIAN:
	default:
		return fnv64(zipf_next(z, r, n)) % n;
	}
}

uint64_t mix64(uint64_t z)
{
	/* xor-shifts and odd multipliers: invertible (see recno_of) */
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

uint64_t key_of(uint64_t recno)
{
	return mix64(recno + UINT64_C(0x9e3779b97f4a7c15));
}

static uint64_t unxorshift(uint64_t y, unsigned s)
{
	uint64_t x = y;
	for (unsigned i = 0; i < 64 / s + 1; i++)
		x = y ^ (x >> s);
	return x;
}

static uint64_t mul_inverse(uint64_t m) /* m odd: Newton's iteration mod 2^64 */
{
	uint64_t inv = m;
	for (int i = 0; i < 6; i++)
		inv *= 2 - m * inv;
	return inv;
}

uint64_t recno_of(uint64_t key)
{
	uint64_t z = unxorshift(key, 31) * mul_inverse(UINT64_C(0x94d049bb133111eb));
	z = unxorshift(z, 27) * mul_inverse(UINT64_C(0xbf58476d1ce4e5b9));
	return unxorshift(z, 30) - UINT64_C(0x9e3779b97f4a7c15);
}
