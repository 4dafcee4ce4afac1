/*
 * account.c - the pool's bottom-layer accounting: event counters, wait
 * histograms and per-frame wait totals (times come from util/clock.h).
 *
 * Layer 1 (account): calls no other file of bufpool.
 *
 * Design note
 * -----------
 * Counters and histograms are sharded: each page-table partition holds one
 * struct bp_counters on its own cache lines (the partitions' array doubles
 * as the shard array), and an event is counted in the shard of the CPU that
 * counts it, so no counter is one hot shared line.  All updates are relaxed
 * atomics (they order nothing); bp_stats_get (stats.c) sums the shards.
 * Wait times are only measured on slow paths (a thread that actually
 * waited), so the hit path never reads the clock.  Each frame also
 * accumulates the ns waited on it (relaxed), for bp_frames_hottest.
 *
 * Why sharding: the hit path of every thread counts (BP_C_HITS); one
 * shared counter would be a cache line bounced between every CPU on every
 * bp_get, the very contention the partitioned page table avoids.
 *
 * Why the CPU as shard key: two threads never run on one CPU at the same
 * instant, so a shard is touched by one CPU at a time (unless more CPUs
 * than partitions share it) and its line stays in that CPU's cache; the
 * key needs no state of its own (no global, no thread-local registry) and
 * no caller has to supply one (a page number is not always at hand: fsync,
 * a wait for any frame).  sched_getcpu is a load from the rseq area on
 * current glibc (a vDSO call on older ones).  Where it fails (-1: no
 * getcpu, or a non-Linux build) the thread's stack address stands in: each
 * thread's stack is its own mapping, so hashing the address (64 KiB
 * granules, so call depth hardly moves it) spreads threads over shards just
 * as well, only without the one-CPU-at-a-time property.
 *
 * Why relaxed atomics are enough: the shard key is only a locality hint,
 * not ownership (a thread can migrate between reading its CPU and counting,
 * and CPUs past npart share shards), so updates must be atomic RMWs; but a
 * counter publishes nothing else, so no update needs to order any other
 * access.  A reader (bp_stats_get) gets each counter exactly, the sum not
 * as one atomic cut.
 */
#include <sched.h>

#include "bufpool/internal.h"
#include "util/log2.h"

/* The calling thread's shard: its CPU, else its stack (see above). */
static struct bp_counters *my_shard(struct bp_pool *p)
{
	uint64_t key;
#ifdef __linux__
	int cpu = sched_getcpu();
#else
	int cpu = -1;
#endif
	if (cpu >= 0) {
		key = (uint64_t)cpu;
	} else {
		char here;
		/* Fibonacci hashing, top bits: stacks are a power-of-two
		 * distance apart, which the low bits alone would fold onto
		 * one shard. */
		key = (((uint64_t)(uintptr_t)&here >> 16) * UINT64_C(0x9E3779B97F4A7C15)) >> 32;
	}
	return &p->parts[key & (p->npart - 1)].ctr;
}

void bp_count(struct bp_pool *p, enum bp_counter c)
{
	atomic_fetch_add_explicit(&my_shard(p)->c[c], 1, memory_order_relaxed);
}


static void hist_add(struct bp_hist_atomic *h, uint64_t ns)
{
	atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->total_ns, ns, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->b[util_log2_bucket(ns, FWAIT_HIST_BUCKETS)], 1,
				  memory_order_relaxed);
	uint64_t m = atomic_load_explicit(&h->max_ns, memory_order_relaxed);
	while (ns > m && !atomic_compare_exchange_weak_explicit(&h->max_ns, &m, ns,
			memory_order_relaxed, memory_order_relaxed))
		;
}

void bp_account_wait(struct bp_pool *p, struct bp_frame *f, enum bp_hist_kind kind, uint64_t ns)
{
	hist_add(&my_shard(p)->h[kind], ns);
	if (f)
		atomic_fetch_add_explicit(&f->wait_ns, ns, memory_order_relaxed);
}
