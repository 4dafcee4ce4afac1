/*
 * herd_hist.h - fwait-herd's wait-time histogram: log-linear, one per
 * worker thread, merged after the joins.
 *
 * Design note: values (nanoseconds) below 2^HERD_HIST_SUB_BITS are counted
 * exactly; above, each power of two (its exponent from util_log2_floor,
 * the project's one integer log2) is split into 2^HERD_HIST_SUB_BITS
 * linear sub-buckets, so a bucket is at most 1/16 (6 %) of its value wide.
 * A quantile is reported as the top of its bucket (never above the
 * maximum, which is kept exactly).  herd_hist_add is inline and touches
 * one counter line plus the header: the measured path stays cheap and
 * allocates nothing.  (bpbench has the same shape of histogram in
 * tools/bpbench/hist.[ch]; herd keeps its own so the two tools stay
 * independent.)  Not thread-safe: a worker owns its histogram.
 */
#ifndef TOOLS_HERD_HERD_HIST_H
#define TOOLS_HERD_HERD_HIST_H

#include "util/log2.h"

#include <stdint.h>

#define HERD_HIST_SUB_BITS 4u
#define HERD_HIST_MAX_LOG2 42u /* values up to ~73 minutes; above: the last bucket */
#define HERD_HIST_BUCKETS ((HERD_HIST_MAX_LOG2 - HERD_HIST_SUB_BITS + 2) << HERD_HIST_SUB_BITS)

struct herd_hist {
	uint64_t count, sum_ns, max_ns;
	uint64_t b[HERD_HIST_BUCKETS];
};

/* The bucket of v (see the design note). */
static inline unsigned herd_hist_bucket(uint64_t v)
{
	if (v < (UINT64_C(1) << HERD_HIST_SUB_BITS))
		return (unsigned)v;
	unsigned e = util_log2_floor(v); /* >= HERD_HIST_SUB_BITS */
	if (e > HERD_HIST_MAX_LOG2)
		return HERD_HIST_BUCKETS - 1;
	unsigned sub = (unsigned)(v >> (e - HERD_HIST_SUB_BITS)) & ((1u << HERD_HIST_SUB_BITS) - 1);
	return ((e - HERD_HIST_SUB_BITS + 1) << HERD_HIST_SUB_BITS) + sub;
}

static inline void herd_hist_add(struct herd_hist *h, uint64_t ns)
{
	h->b[herd_hist_bucket(ns)]++;
	h->count++;
	h->sum_ns += ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

/* The largest value bucket i holds. */
uint64_t herd_hist_bucket_top(unsigned i);
void herd_hist_merge(struct herd_hist *into, const struct herd_hist *from);
/* The value at or below which a fraction q (0..1) of the samples lie: the
 * top of the bucket holding that rank, at most max_ns; 0 if empty. */
uint64_t herd_hist_quantile(const struct herd_hist *h, double q);

#endif
