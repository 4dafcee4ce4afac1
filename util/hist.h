/* SPDX-License-Identifier: MIT */
/*
 * util/hist.h - the one latency histogram of the tools: log-linear
 * (HdrHistogram-style), one per worker thread, merged after the joins.
 *
 * Design note
 * -----------
 * Layer 0 (util): calls only util/log2.h.  Values (nanoseconds) below
 * 2^UTIL_HIST_SUB_BITS are counted exactly; above, each power of two (its
 * exponent from util_log2_floor) is split into 2^UTIL_HIST_SUB_BITS linear
 * sub-buckets, so a bucket is at most 1/16 (6 %) of its value wide.  A
 * quantile is reported as the top of its bucket (never above the maximum,
 * which is kept exactly).  util_hist_add is inline and touches one counter
 * line plus the header: a measured path stays cheap and allocates nothing.
 * Not thread-safe: a worker owns its histogram.  Used by bpbench ycsb
 * (operation latencies) and fwait-herd (wait times).
 */
#ifndef UTIL_HIST_H
#define UTIL_HIST_H

#include "util/log2.h"

#include <stdint.h>

#define UTIL_HIST_SUB_BITS 4u
#define UTIL_HIST_MAX_LOG2 44u /* values up to ~4.9 hours; above: the last bucket */
#define UTIL_HIST_BUCKETS ((UTIL_HIST_MAX_LOG2 - UTIL_HIST_SUB_BITS + 2) << UTIL_HIST_SUB_BITS)

struct util_hist {
	uint64_t count, sum_ns, max_ns;
	uint64_t b[UTIL_HIST_BUCKETS];
};

/* The bucket of v (see the design note). */
static inline unsigned util_hist_bucket(uint64_t v)
{
	if (v < (UINT64_C(1) << UTIL_HIST_SUB_BITS))
		return (unsigned)v;
	unsigned e = util_log2_floor(v); /* >= UTIL_HIST_SUB_BITS */
	if (e > UTIL_HIST_MAX_LOG2)
		return UTIL_HIST_BUCKETS - 1;
	unsigned sub = (unsigned)(v >> (e - UTIL_HIST_SUB_BITS)) & ((1u << UTIL_HIST_SUB_BITS) - 1);
	return ((e - UTIL_HIST_SUB_BITS + 1) << UTIL_HIST_SUB_BITS) + sub;
}

static inline void util_hist_add(struct util_hist *h, uint64_t ns)
{
	h->b[util_hist_bucket(ns)]++;
	h->count++;
	h->sum_ns += ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

/* The largest value bucket i holds. */
uint64_t util_hist_bucket_top(unsigned i);
void util_hist_merge(struct util_hist *into, const struct util_hist *from);
/* The value at or below which a fraction q (0..1) of the samples lie: the
 * top of the bucket holding that rank, at most max_ns; 0 if empty. */
uint64_t util_hist_quantile(const struct util_hist *h, double q);

#endif
