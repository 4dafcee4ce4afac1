/* SPDX-License-Identifier: MIT */
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
 *
 * Counting without a locked instruction.  An atomic add is a locked
 * instruction on x86: it waits for every earlier load and no later load
 * passes it, so on a path that counts between cache misses (the optimistic
 * read, the hit) it puts the misses one after the other.  Where the kernel
 * and the C library support it (x86-64 Linux with glibc's restartable
 * sequence registered, not under ThreadSanitizer, which would not see the
 * asm's write), bp_count adds with a plain add inside a restartable
 * sequence (rseq(2)) to a per-CPU array, cpu_ctr, of one cache line per
 * CPU: the sequence checks that the thread still runs on the CPU whose
 * counters it chose, and the kernel sends it to the abort handler (which
 * tries again) if it is preempted, migrated or signalled before the add
 * has committed, so each CPU's counters are only ever written by one
 * thread at a time, exactly, as Linux's this_cpu_add.  Nothing else writes
 * cpu_ctr: a thread without a usable CPU number (rseq not registered for
 * it, a CPU past ncpu) counts in the shards with the atomic add, so the
 * two never mix on one word.  A reset cannot zero a word that a plain add
 * may be rewriting (the add's store would bring the old count back), so it
 * records what the per-CPU words sum to (cpu_base) and the sums subtract
 * it; a reset racing with a count may keep or lose that one count, as with
 * the shards.
 *
 * In the C11 model (the counters' one argument).  The shards are relaxed
 * RMWs and relaxed loads: each word is exact by its own modification
 * order, and orders nothing else; a sum is no snapshot.  The per-CPU words
 * are _Atomic, but the rseq sequence adds to them with a plain asm add,
 * outside the model (formally a race with bp_counters_sum's relaxed
 * loads).  It is built only on x86-64, where an aligned 8-byte store is
 * single-copy atomic, so a load sees the old count or the new one, never
 * a torn one; the asm's memory clobber keeps the compiler from caching
 * the word.  Everywhere else (ARM included) only the atomic shards count.
 * A reset's relaxed stores race with counts as said above; a sum in the
 * resetting thread, or in one that synchronised with it, reads the new
 * base and per-CPU words at least as new as the reset read (coherence),
 * so a difference can only go negative beside a racing reset, and is then
 * clamped at 0.  No fence is needed.
 */
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "bufpool/internal.h"
#include "util/log2.h"

#if defined(__SANITIZE_THREAD__)
#define BP_NO_RSEQ 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BP_NO_RSEQ 1
#endif
#endif
#if !defined(BP_NO_RSEQ) && defined(__x86_64__) && defined(__linux__) && \
	defined(__GLIBC__) && defined(__has_include)
#if __has_include(<sys/rseq.h>)
#include <sys/rseq.h>
#define BP_RSEQ 1
#endif
#endif

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

#ifdef BP_RSEQ
_Static_assert(offsetof(struct rseq, cpu_id) == 4 && offsetof(struct rseq, rseq_cs) == 8,
	       "the asm below uses the rseq ABI's offsets");
_Static_assert(RSEQ_SIG == 0x53053053, "the abort handler's signature is glibc's");

/* Add 1 to counter c of the CPU the thread runs on, in a restartable
 * sequence: true, or false if the thread has no usable CPU number (rseq
 * not registered for it, or a CPU past ncpu).  The sequence, as the
 * kernel's rseq selftests and librseq write it: a descriptor (start,
 * length to the commit, abort address) in section __rseq_cs; its address
 * stored in the thread's rseq_cs; then, from label 1 to label 2, the check
 * that the CPU is still the one read before (else abort) and the add,
 * whose store is the commit.  Preemption, migration or a signal between 1
 * and 2 makes the kernel resume at label 4, which must follow the
 * registered signature (the ud1 instruction that encodes it), and that
 * jumps back to try again.  After the commit rseq_cs is cleared again: the
 * kernel reads the descriptor it names at every preemption, and must not
 * find it unmapped once the library is unloaded (dlclose). */
static bool rseq_count(struct bp_pool *p, enum bp_counter c)
{
	struct rseq *rs = (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
	for (;;) {
		/* The kernel writes cpu_id on every return to user space. */
		uint32_t cpu = *(volatile uint32_t *)&rs->cpu_id;
		if (cpu >= p->ncpu) /* also RSEQ_CPU_ID_UNINITIALIZED, _REGISTRATION_FAILED */
			return false;
		uint64_t *v = (uint64_t *)&p->cpu_ctr[cpu].c[c];
		__asm__ __volatile__ goto(
			".pushsection __rseq_cs, \"aw\"\n\t"
			".balign 32\n\t"
			"3:\n\t"
			".long 0x0, 0x0\n\t"
			".quad 1f, (2f - 1f), 4f\n\t"
			".popsection\n\t"
			"leaq 3b(%%rip), %%rax\n\t"
			"movq %%rax, 8(%[rs])\n\t"
			"1:\n\t"
			"cmpl %[cpu], 4(%[rs])\n\t"
			"jnz %l[abort]\n\t"
			"addq $1, %[v]\n\t"
			"2:\n\t"
			"movq $0, 8(%[rs])\n\t"
			".pushsection __rseq_failure, \"ax\"\n\t"
			".byte 0x0f, 0xb9, 0x3d\n\t"
			".long 0x53053053\n\t"
			"4:\n\t"
			"jmp %l[abort]\n\t"
			".popsection\n\t"
			:
			: [rs] "r"(rs), [cpu] "r"(cpu), [v] "m"(*v)
			: "memory", "cc", "rax"
			: abort);
		return true;
abort:
		/* Preempted, migrated or signalled in the sequence: again.
		 * Relaxed, and rare: a diagnostic the tests read. */
		atomic_fetch_add_explicit(&p->rseq_aborts, 1, memory_order_relaxed);
	}
}
#endif

int bp_account_init(struct bp_pool *p)
{
	p->cpu_ctr = NULL;
	p->ncpu = 0;
	for (unsigned k = 0; k < BP_C_COUNT; k++)
		atomic_init(&p->cpu_base[k], 0);
	atomic_init(&p->rseq_aborts, 0);
#ifdef BP_RSEQ
	long n = sysconf(_SC_NPROCESSORS_CONF);
	if (__rseq_size == 0 || n <= 0)
		return 0; /* no rseq: the shards alone */
	p->cpu_ctr = aligned_alloc(BP_CACHELINE, sizeof(*p->cpu_ctr) * (size_t)n);
	if (!p->cpu_ctr)
		return -ENOMEM;
	for (long i = 0; i < n; i++)
		for (unsigned k = 0; k < BP_C_COUNT; k++)
			atomic_init(&p->cpu_ctr[i].c[k], 0);
	p->ncpu = (unsigned)n;
#endif
	return 0;
}

void bp_account_fini(struct bp_pool *p)
{
	free(p->cpu_ctr);
	p->cpu_ctr = NULL;
	p->ncpu = 0;
}

void bp_count(struct bp_pool *p, enum bp_counter c)
{
#ifdef BP_RSEQ
	if (p->cpu_ctr && rseq_count(p, c))
		return;
#endif
	atomic_fetch_add_explicit(&my_shard(p)->c[c], 1, memory_order_relaxed);
}

/* The per-CPU words' sum of counter k. */
static uint64_t cpu_sum(struct bp_pool *p, unsigned k)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < p->ncpu; i++)
		sum += atomic_load_explicit(&p->cpu_ctr[i].c[k], memory_order_relaxed);
	return sum;
}

void bp_counters_sum(struct bp_pool *p, uint64_t out[BP_C_COUNT])
{
	for (unsigned k = 0; k < BP_C_COUNT; k++) {
		uint64_t c = cpu_sum(p, k), base = atomic_load_explicit(&p->cpu_base[k],
								       memory_order_relaxed);
		out[k] = c > base ? c - base : 0; /* < only beside a racing reset */
		for (unsigned i = 0; i < p->npart; i++)
			out[k] += atomic_load_explicit(&p->parts[i].ctr.c[k], memory_order_relaxed);
	}
}

void bp_counters_reset(struct bp_pool *p)
{
	for (unsigned k = 0; k < BP_C_COUNT; k++) {
		atomic_store_explicit(&p->cpu_base[k], cpu_sum(p, k), memory_order_relaxed);
		for (unsigned i = 0; i < p->npart; i++)
			atomic_store_explicit(&p->parts[i].ctr.c[k], 0, memory_order_relaxed);
	}
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
