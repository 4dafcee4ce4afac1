/*
 * hist.c - log-linear latency histogram (see hist.h).
 *
 * Design note: bpbench's, but it needs only util (layer 0): a value's
 * exponent comes from util/log2.h, the one integer log2 of the project
 * (fwait's and bufpool's wait histograms use it too); its linear
 * sub-bucket is the HIST_SUB_BITS bits below its top bit.
 */
#include "hist.h"

#include "util/log2.h"

static unsigned bucket_of(uint64_t v)
{
	if (v < (UINT64_C(1) << HIST_SUB_BITS))
		return (unsigned)v;
	unsigned e = util_log2_floor(v); /* >= HIST_SUB_BITS */
	if (e > HIST_MAX_LOG2)
		return HIST_BUCKETS - 1;
	unsigned sub = (unsigned)(v >> (e - HIST_SUB_BITS)) & ((1u << HIST_SUB_BITS) - 1);
	return ((e - HIST_SUB_BITS + 1) << HIST_SUB_BITS) + sub;
}

/* The largest value that falls in bucket i. */
static uint64_t bucket_top(unsigned i)
{
	if (i < (1u << HIST_SUB_BITS))
		return i;
	unsigned e = (i >> HIST_SUB_BITS) + HIST_SUB_BITS - 1;
	uint64_t sub = i & ((1u << HIST_SUB_BITS) - 1);
	uint64_t lo = (UINT64_C(1) << e) + (sub << (e - HIST_SUB_BITS));
	return lo + (UINT64_C(1) << (e - HIST_SUB_BITS)) - 1;
}

void hist_add(struct hist *h, uint64_t ns)
{
	h->b[bucket_of(ns)]++;
	h->count++;
	h->sum_ns += ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

void hist_merge(struct hist *into, const struct hist *from)
{
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		into->b[i] += from->b[i];
	into->count += from->count;
	into->sum_ns += from->sum_ns;
	if (from->max_ns > into->max_ns)
		into->max_ns = from->max_ns;
}

uint64_t hist_quantile(const struct hist *h, double q)
{
	if (h->count == 0)
		return 0;
	uint64_t rank = (uint64_t)(q * (double)h->count), seen = 0;
	if (rank >= h->count)
		rank = h->count - 1;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen > rank) {
			uint64_t top = bucket_top(i);
			return top < h->max_ns ? top : h->max_ns;
		}
	}
	return h->max_ns;
}
