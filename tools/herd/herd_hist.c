/*
 * herd_hist.c - fwait-herd's log-linear wait-time histogram (see
 * herd_hist.h).
 *
 * Design note: only the cold half lives here (a bucket's top, the merge
 * after the joins, the quantiles); the add on the measured path is inline
 * in the header.
 */
#include "herd_hist.h"

uint64_t herd_hist_bucket_top(unsigned i)
{
	if (i < (1u << HERD_HIST_SUB_BITS))
		return i;
	if (i >= HERD_HIST_BUCKETS - 1)
		return UINT64_MAX; /* the last bucket also takes everything above */
	unsigned e = (i >> HERD_HIST_SUB_BITS) + HERD_HIST_SUB_BITS - 1;
	uint64_t sub = i & ((1u << HERD_HIST_SUB_BITS) - 1);
	uint64_t lo = (UINT64_C(1) << e) + (sub << (e - HERD_HIST_SUB_BITS));
	return lo + (UINT64_C(1) << (e - HERD_HIST_SUB_BITS)) - 1;
}

void herd_hist_merge(struct herd_hist *into, const struct herd_hist *from)
{
	for (unsigned i = 0; i < HERD_HIST_BUCKETS; i++)
		into->b[i] += from->b[i];
	into->count += from->count;
	into->sum_ns += from->sum_ns;
	if (from->max_ns > into->max_ns)
		into->max_ns = from->max_ns;
}

uint64_t herd_hist_quantile(const struct herd_hist *h, double q)
{
	if (h->count == 0)
		return 0;
	uint64_t rank = (uint64_t)(q * (double)h->count), seen = 0;
	if (rank >= h->count)
		rank = h->count - 1;
	for (unsigned i = 0; i < HERD_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen > rank) {
			uint64_t top = herd_hist_bucket_top(i);
			return top < h->max_ns ? top : h->max_ns;
		}
	}
	return h->max_ns;
}
