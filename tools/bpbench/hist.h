/*
 * hist.h - a log-linear latency histogram (HdrHistogram-style).
 *
 * Design note
 * -----------
 * Layer: bpbench, on util (log2) only; used by bpbench ycsb.
 * Values (nanoseconds) below 2^HIST_SUB_BITS are counted exactly; above,
 * each power of two is split into 2^HIST_SUB_BITS linear sub-buckets, so a
 * bucket's width is at most 1/16 (6 %) of its value.  A worker owns its
 * histograms; they are merged after the workers are joined.  Not
 * thread-safe by design.
 */
#ifndef TOOLS_BPBENCH_HIST_H
#define TOOLS_BPBENCH_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS 4u
#define HIST_MAX_LOG2 44u /* values up to ~4.9 hours */
#define HIST_BUCKETS ((HIST_MAX_LOG2 - HIST_SUB_BITS + 2) << HIST_SUB_BITS)

struct hist {
	uint64_t count;
	uint64_t sum_ns;
	uint64_t max_ns;
	uint64_t b[HIST_BUCKETS];
};

void hist_add(struct hist *h, uint64_t ns);
void hist_merge(struct hist *into, const struct hist *from);
/* The value below which a fraction q (0..1) of the samples lie (the upper
 * edge of the bucket holding that rank); 0 if empty. */
uint64_t hist_quantile(const struct hist *h, double q);

#endif
