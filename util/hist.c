/* SPDX-License-Identifier: MIT */
/*
 * util/hist.c - the latency histogram's cold half (see hist.h): a
 * bucket's top, the merge after the joins, the quantiles; the add on the
 * measured path is inline in the header.
 */
#include "util/hist.h"

uint64_t util_hist_bucket_top(unsigned i)
{
	if (i < (1u << UTIL_HIST_SUB_BITS))
		return i;
	if (i >= UTIL_HIST_BUCKETS - 1)
		return UINT64_MAX; /* the last bucket also takes everything above */
	unsigned e = (i >> UTIL_HIST_SUB_BITS) + UTIL_HIST_SUB_BITS - 1;
	uint64_t sub = i & ((1u << UTIL_HIST_SUB_BITS) - 1);
	uint64_t lo = (UINT64_C(1) << e) + (sub << (e - UTIL_HIST_SUB_BITS));
	return lo + (UINT64_C(1) << (e - UTIL_HIST_SUB_BITS)) - 1;
}

void util_hist_merge(struct util_hist *into, const struct util_hist *from)
{
	for (unsigned i = 0; i < UTIL_HIST_BUCKETS; i++)
		into->b[i] += from->b[i];
	into->count += from->count;
	into->sum_ns += from->sum_ns;
	if (from->max_ns > into->max_ns)
		into->max_ns = from->max_ns;
}

uint64_t util_hist_quantile(const struct util_hist *h, double q)
{
	if (h->count == 0)
		return 0;
	uint64_t rank = (uint64_t)(q * (double)h->count), seen = 0;
	if (rank >= h->count)
		rank = h->count - 1;
	for (unsigned i = 0; i < UTIL_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen > rank) {
			uint64_t top = util_hist_bucket_top(i);
			return top < h->max_ns ? top : h->max_ns;
		}
	}
	return h->max_ns;
}
