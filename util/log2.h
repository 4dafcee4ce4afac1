/* SPDX-License-Identifier: MIT */
/*
 * util/log2.h - the one integer log2 of the project (histogram buckets).
 *
 * Design note
 * -----------
 * Layer 0 (util): header only.  fwait's and bufpool's wait-time histograms
 * bucket by floor(log2 ns); the tools' log-linear latency histogram splits
 * each such bucket further.  Both take the exponent from here.
 */
#ifndef UTIL_LOG2_H
#define UTIL_LOG2_H

#include <stdint.h>

/* floor(log2 v) for v > 0; 0 for v == 0 (both land in the first bucket). */
static inline unsigned util_log2_floor(uint64_t v)
{
	return v ? 63u - (unsigned)__builtin_clzll(v) : 0u;
}

/* The log2 histogram bucket of v among nbuckets (> 0): floor(log2 v),
 * the last bucket taking everything above. */
static inline unsigned util_log2_bucket(uint64_t v, unsigned nbuckets)
{
	unsigned b = util_log2_floor(v);

	return b < nbuckets ? b : nbuckets - 1;
}

#endif
