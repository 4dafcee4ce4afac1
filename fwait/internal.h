/* SPDX-License-Identifier: MIT */
/*
 * internal.h - fwait's private structures, shared by its .c files only.
 *
 * Design note
 * -----------
 * Layers, bottom to top, all above util/ (layer 0: the clock, log2).  A file calls only files of lower layers: never one
 * of its own layer nor one above, so no two files call each other, directly
 * or round a loop.  Each file's head comment says its layer and the files it
 * calls; tests/layers/check_layers.sh reads those lines and checks them
 * against the built objects (nm).
 *
 *   L  file       holds                                       calls
 *   1  base.c     deadline helpers, the futex and membarrier  -
 *                 system calls (fw_bucket_of: inline, below)
 *   2  stats.c    counters, wait histogram, stats, the walk   base
 *   3  park.c     queueing, sleeping, the waker handshake     stats base
 *   3  futex.c    the FWAIT_FUTEX policy (sleep on the word)  stats base
 *      futex_word.h  its code for one word width, included
 *                 twice by futex.c (32 and 64 bits)
 *   4  keyed.c    fwait_wait / fwait_wake                     park stats base
 *   4  async.c    fwait_wait_async / fwait_cancel_async       park stats base
 *   4  bitops.c   the bit locks and bit waits                 park futex stats
 *                                                             base
 *      bitops_word.h  its code for one word width, included
 *                 twice by bitops.c (fwait_bit_*, fwait_bit64_*)
 *   5  table.c    create/destroy (the constructor), the       futex base
 *                 policy table (names, help, traits)
 *   5  hlatch.c   the hybrid latches (fwait_hlatch_*)         keyed base
 *
 * Locks: a bucket lock (and, with the pthread parker only, a waiter's
 * mtx).  A thread holds at most one bucket lock, and posts to or sleeps on
 * a parker only with no bucket lock held (the waker after dropping it, the
 * sleeper in fw_sleep after dropping it), so the two never nest.  The
 * caller's callbacks (ready, the walk's fn) run under a bucket lock and must
 * not call into the table (fwait.h).  The debug-checks build checks these
 * rules (util/debug.h): both lock classes rank as leaves, so neither nests;
 * fw_signal_all, fwait_wait and fwait_wake assert no bucket lock is held.
 *
 * struct fwait_table is a header plus a power-of-two array of buckets.  A
 * bucket is one mutex and the waiters parked in it, grouped by key: a list
 * of key groups (linked through each group's oldest waiter, its "head"), and
 * in each group a circular, doubly linked FIFO of that key's waiters.  A
 * wake for a key walks past the other *keys* of its bucket, never past their
 * waiters one by one.  Buckets are padded and aligned to cache lines so two
 * buckets never share one.
 *
 * struct fw_waiter lives on the stack of the thread that waits (an
 * asynchronous wait's, in the caller's struct fwait_async: struct
 * fw_async below, async.c).  Its fields are guarded as follows:
 *   next, prev, queued,     bucket->lock (the list membership; knext, kprev
 *   khead, knext, kprev,    and kcount are meaningful on a group head only)
 *   kcount
 *   key, bit, exclusive,    written before the waiter is queued, read-only
 *   since_ns, first_ns      while it is queued
 *   steals                  bucket->lock
 *   pk                      written before the waiter is queued
 *   pk->state               the handshake with the waker (park.c)
 * The parker (pk) is the waiting thread's own, thread-local and reused by
 * its every wait; the rest of the record is on the waiter's stack.  A waker
 * unlinks the waiter under the bucket lock, drops the bucket lock, reads
 * w->pk, then publishes the state to the parker and wakes it (park.c, rule
 * 2); that publication is the waker's last access to the waiter's memory,
 * after which the waiter may return, its stack frame vanish and its parker
 * serve its next wait.  A waiter that times out therefore decides "was I
 * chosen?" by looking at `queued` under the bucket lock: if a waker already
 * unlinked it, it waits (briefly) for the waker's state before it returns.
 *
 * Statistics counters live in each bucket (updated under that bucket's lock,
 * or with relaxed atomics on the futex path) so no counter is a shared hot
 * cache line; the wait-time histogram is sharded the same way.
 */
#ifndef FWAIT_INTERNAL_H
#define FWAIT_INTERNAL_H

#include "fwait/fwait.h"

#include <pthread.h>
#include <stdalign.h>

#include "util/debug.h" /* debug-checks build: asserts, the lock witness */

#define FW_CACHELINE 64
#define FW_DEFAULT_BUCKETS 256u
#define FW_MAX_BUCKETS (1u << 24)
#define FW_HIST_SHARDS 8u
#define FW_GENERIC_BIT (-1)

enum fw_wake_state {
	FW_WAITING = 0, /* parked, not yet chosen */
	FW_WOKEN,       /* chosen by a wake: re-check and maybe wait again */
	FW_HANDED,      /* chosen by an unlock handoff: the lock bit is ours */
	FW_TIMEDOUT     /* fw_sleep only: timed out while still queued */
};

struct fw_waiter {
	struct fw_waiter *next, *prev;   /* the key's FIFO, circular */
	struct fw_waiter *knext, *kprev; /* the bucket's list of key groups */
	uint32_t kcount;                 /* waiters in this key's FIFO */
	bool khead;                      /* oldest waiter of its key */
	bool queued;
	bool exclusive;
	bool async;       /* a struct fw_async's (async.c): no parker; its
			   * completion runs in fw_signal_all */
	int bit;          /* 0..30 (0..62: bit64), or FW_GENERIC_BIT */
	const void *key;
	uint64_t since_ns; /* this trip through the queue (the histogram) */
	uint64_t first_ns; /* first queued: the age fairness goes by; kept
			    * when a woken loser re-queues at the head */
	unsigned steals;  /* races lost after a wake (FAIR: max_steals) */
	/* fwait_wake_ex's token: written by the waker under the bucket lock
	 * after it chose w and before it posts w's parker, read by the waiter
	 * after its parker's acquire (park.c), so the post orders it. */
	uint64_t token;
	struct fw_parker *pk; /* the waiting thread's own (park.c) */
};
/* docs/architecture.md quotes it ("Memory layout"); LP64 (tests/docs
 * checks the page quotes this number). */
#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(struct fw_waiter) == 96, "docs/architecture.md: struct fw_waiter 96 bytes");
#endif

/* What a thread sleeps on: one per thread, thread-local, initialised on the
 * thread's first wait (park.c).  A thread waits in one place at a time, so
 * one is enough; reusing it makes a park one enqueue and one sleep.  On
 * Linux it is one 32-bit word the thread sleeps on with FUTEX_WAIT and the
 * waker publishes to with a release store and one FUTEX_WAKE: no mutex for
 * the woken thread to re-take, nothing to set up or tear down.  Elsewhere
 * (or built with -Dfwait_park=pthread, which the DRD check uses: Valgrind
 * sees a mutex handshake, not an atomic one) it is a mutex, a condvar and
 * the state, destroyed at thread exit. */
#if defined(__linux__) && !defined(FWAIT_PARK_PTHREAD)
#define FW_PARK_FUTEX 1
#else
#define FW_PARK_FUTEX 0
#endif
struct fw_parker {
#if FW_PARK_FUTEX
	_Atomic uint32_t state; /* enum fw_wake_state: waker release, owner acquire */
#else
	pthread_mutex_t mtx;
	pthread_cond_t cond;
	int state;        /* enum fw_wake_state, guarded by mtx */
	bool ready;       /* set up (owner thread only) */
#endif
};

/* fwait_spin's yields after its pause-spin (keyed.c says why). */
#define FW_SPIN_YIELDS 4u

#define FW_NKEYED_FENCED (UINT32_C(1) << 31)
#define FW_NKEYED_COUNT (FW_NKEYED_FENCED - 1)

struct fw_bucket_stats {
	_Atomic uint64_t waits, wakeups, spurious, foreign, timeouts, handoffs,
		slow_wakes, slow_waits, lost_races;
	_Atomic uint32_t max_depth;
};

struct fw_bucket {
	alignas(FW_CACHELINE) pthread_mutex_t lock;
	struct fw_waiter *keys;        /* guarded by lock: key group heads */
	uint32_t depth;                /* guarded by lock */
	/* FAIR: the vote of this bucket's recent measured holds, 0..
	 * FW_HOLD_VOTE_MAX, raised by a long one and lowered by a short one
	 * (fw_hold_vote); guarded by lock.  It saturates both ways, so a long
	 * run of either kind is forgotten in a few samples of the other. */
	uint8_t hold_vote;
	bool stats_on;                 /* !fwait_config.stats_off; set at creation */
	/* Cache lines (x86-64, glibc: 192 bytes, docs/architecture.md): the
	 * lock and the fields it guards; the statistics' counters, written on
	 * every slow wait and wake; then the last counters, written rarely
	 * (lost_races, max_depth), and the two fields read without the lock
	 * by every latch release and every contended bit lock (nkeyed,
	 * handing).  Sharing the lock's line, nkeyed was a cache miss inside
	 * each store-release latch's critical section under contention (every
	 * bucket lock and unlock of its waiters took the line away); on its
	 * own line the CAS latch's CPU per acquisition at 64 threads and a
	 * 200 ns hold fell 16-39 % in alternating runs (docs/benchmarks.md,
	 * "The hybrid latch against std::atomic::wait"). */
	alignas(FW_CACHELINE) struct fw_bucket_stats stats;
	/* Threads inside fwait_wait on this bucket (keyed waiters, asleep or
	 * not; FW_NKEYED_COUNT), raised under lock before their first ready()
	 * and lowered as they leave (fw_nkeyed_leave).  fwait_wake reads it
	 * without the lock, after a seq_cst fence, and returns at once when it
	 * is 0 (keyed.c explains the pairing).  FW_NKEYED_FENCED: a hybrid
	 * latch's waiter made its membarrier since the count last was 0, so
	 * later latch waiters need not (set under lock; cleared with the
	 * decrement that reaches 0, in the same RMW, so the word is 0 exactly
	 * when the count is). */
	_Atomic uint32_t nkeyed;
	/* FAIR: "a lock bit of this bucket is being handed over", set under
	 * lock by an unlock that hands off or a loser that re-queues due,
	 * cleared under lock by an unlock that releases.  Read without the
	 * lock, relaxed, only by fwait_bit_lock to skip its spin (pointless
	 * while bits are handed over, never freed): a hint that orders and
	 * decides nothing, as the handoff itself is decided under lock.  It can
	 * stay set after contention ends (uncontended unlocks never touch the
	 * bucket): the next contended episode then starts without spinning
	 * until its first releasing unlock clears it.  That costs a spin, never
	 * a wake, so it is left stale rather than cleared on every unlock. */
	_Atomic bool handing;
};
/* docs/architecture.md and docs/design.md quote it (memory per bucket:
 * 256 buckets, 48 KiB); with glibc's 40-byte x86-64 mutex (tests/docs
 * checks the pages quote this number). */
#if defined(__x86_64__) && defined(__GLIBC__)
_Static_assert(sizeof(struct fw_bucket) == 192, "docs/architecture.md: struct fw_bucket 192 bytes");
#endif

struct fw_hist_shard {
	alignas(FW_CACHELINE) _Atomic uint64_t count[FWAIT_HIST_BUCKETS];
};

/* What the code branches on, per wait policy: one row per policy in
 * table.c's policy table (with its name and help), copied into each table
 * at creation (fwait_table.pf), so a branch on a trait is a test of a
 * field of the table the caller passes, the one load a test of t->policy
 * was, never a second load from the rows.  A new policy is a row there
 * plus the code that gives its traits meaning. */
struct fw_policy_flags {
	/* Bit waits sleep on the word itself (futex.c), never in the table;
	 * creating a table needs working futexes.  Keyed waits still use
	 * the table, as their other traits say. */
	bool on_word;
	/* A wake picks exclusive waiters oldest first, nr at a time: a
	 * contended unlock wakes (or hands the bit to) one waiter, and the
	 * fairness settings apply (fw_fair).  Off: a wake takes every waiter
	 * of the key and they race. */
	bool wake_one;
	/* A wake takes every waiter of the bucket, whatever its key
	 * (fw_collect), so fwait_wake cannot skip the lock by nkeyed, which
	 * counts keyed waiters only. */
	bool unfiltered;
};

struct fwait_table {
	enum fwait_policy policy;
	struct fw_policy_flags pf; /* the policy's row (table.c), copied */
	bool strict;       /* FWAIT_HANDOFF_STRICT (WAKE_ONE only) */
	bool fair;         /* pf.wake_one && !strict: fw_fair */
	unsigned max_steals; /* FAIR: 0 = no count bound */
	uint64_t fair_ns;  /* FAIR: age at which the oldest waiter is due */
	uint32_t spin_ns;  /* FAIR: 0 = no spin */
	uint32_t hold_ns;  /* FAIR: a hold this long is long; 0 = never */
	/* fw_membarrier may be used: hybrid-latch waits call it and their
	 * exclusive releases skip the full fence (keyed.c, hlatch.c). */
	bool membarrier;
	uint32_t mask;     /* nbuckets - 1 */
	unsigned hash_shift; /* 64 - log2(nbuckets) */
	size_t bytes;      /* what the table holds in memory */
	struct fw_hist_shard hist[FW_HIST_SHARDS];
	struct fw_bucket *buckets;
};

/* The one fairness predicate of bit and keyed waits: the policy wakes one
 * (pf.wake_one) and the handoff is FWAIT_HANDOFF_FAIR.  Then a woken
 * exclusive waiter that loses re-queues at the head of its key, a lock
 * bit's waiter spins before it queues, and an unlock releases unless the
 * oldest is due (bitops.c, keyed.c).  Under a policy with pf.on_word
 * (FUTEX) it governs keyed waits only: bit waits never reach the table. */
static inline bool fw_fair(const struct fwait_table *t)
{
	return t->fair;
}

/* ---- the files' entry points, bottom layer first ---- */

/* ---- base.c (layer 1) ---- */
/* The bucket of key (by its address alone).  Inline: the hybrid latch's
 * uncontended release reads its bucket's count. */
static inline struct fw_bucket *fw_bucket_of(const struct fwait_table *t, const void *key)
{
	/* Fibonacci hashing: multiply by 2^64 / phi and keep the *top*
	 * log2(nbuckets) bits, the ones every bit of the address feeds, so
	 * objects a cache line or a page apart spread over all buckets.  (Bits
	 * from the middle of the product clustered such objects in a few.) */
	uint64_t h = (uint64_t)(uintptr_t)key * UINT64_C(0x9E3779B97F4A7C15);
	return &t->buckets[t->mask ? (uint32_t)(h >> t->hash_shift) : 0];
}
/* (fwait_deadline_valid and fwait_deadline_after_ns, public: fwait.h) */
#ifdef __linux__
#include <linux/futex.h>
/* futex(2) on a process-private 32-bit word: op is FUTEX_WAIT_BITSET or
 * FUTEX_WAKE_BITSET (FUTEX_PRIVATE_FLAG is added); abs_deadline is absolute
 * CLOCK_MONOTONIC or NULL.  Returns what syscall(2) returns. */
long fw_sys_futex(uint32_t *uaddr, int op, uint32_t val,
		  const struct timespec *abs_deadline, uint32_t bitset);
#endif

/* membarrier(2) (MEMBARRIER_CMD_PRIVATE_EXPEDITED): register the process,
 * true if it may be used (Linux 4.14, not filtered); then the barrier:
 * every running thread of the process passes a full memory barrier
 * between the call's entry and return (the kernel's guarantee, beyond
 * C11's: hlatch.c argues with it). */
bool fw_membarrier_register(void);
void fw_membarrier(void);

/* ---- stats.c (layer 2) ---- */
/* Count n in bucket b's counter F (struct fw_bucket_stats), unless the
 * table's statistics are off (fwait_config.stats_off): then nothing is
 * written.  Inline, so a counted event costs one relaxed RMW on a line
 * the caller already holds (the bucket's), and an uncounted one a test of
 * a flag on that line. */
#define FW_STAT(b, F, n) fw_stat_add((b), &(b)->stats.F, (n))
static inline void fw_stat_add(const struct fw_bucket *b, _Atomic uint64_t *c, uint64_t n)
{
	if (b->stats_on)
		atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}
/* Record in the wait histogram the time since since_ns (a clock read),
 * unless statistics are off (then no clock read either). */
void fw_hist_since(struct fwait_table *t, const struct fw_bucket *b, uint64_t since_ns);

/* Lower a bucket's nkeyed by one, and with it FW_NKEYED_FENCED when it
 * reaches 0 (one RMW: a latch waiter that finds the flag set finds a count
 * that has stayed above 0 since a membarrier).  Relaxed: a waker that reads
 * the lower value has nobody of ours to wake.  With or without the lock. */
static inline void fw_nkeyed_leave(struct fw_bucket *b)
{
	uint32_t v = atomic_load_explicit(&b->nkeyed, memory_order_relaxed), nv;
	do
		nv = (v & FW_NKEYED_COUNT) == 1 ? 0 : v - 1;
	while (!atomic_compare_exchange_weak_explicit(&b->nkeyed, &v, nv, memory_order_relaxed,
						      memory_order_relaxed));
}

/* An asynchronous keyed wait's record (async.c), inside the caller's
 * struct fwait_async.  w is first: fw_signal_all finds the record from
 * its waiter.  Fields:
 *   w                 as any waiter's (w.async set, w.pk NULL)
 *   t, b, done, arg   written by the caller's thread before w is queued
 *                     (fwait_async_init, fwait_wait_async), read-only while
 *                     it is queued or its completion is in flight
 *   woken             written by the waker before it calls done, read by
 *                     the next fwait_wait_async on the record: the caller
 *                     may start that wait only after done ran, and its own
 *                     hand-off from done to the task orders the two. */
struct fw_async {
	struct fw_waiter w;
	struct fwait_table *t;
	struct fw_bucket *b;
	fwait_async_fn done;
	void *arg;
	uint32_t magic;  /* FW_ASYNC_MAGIC once fwait_async_init ran */
	bool woken;      /* its last wait ended by a wake (FAIR keep-place) */
};
#define FW_ASYNC_MAGIC 0x66776173u /* "fwas" */
_Static_assert(sizeof(struct fw_async) <= sizeof(struct fwait_async),
	       "fwait.h: FWAIT_ASYNC_WORDS too small for struct fw_async");
_Static_assert(alignof(struct fw_async) <= alignof(struct fwait_async),
	       "fwait.h: struct fwait_async under-aligned for struct fw_async");

/* ---- park.c (layer 3): queueing, sleeping, waking ---- */
/* Fills in w and points it at the calling thread's parker (set up on the
 * thread's first wait).  Nothing to destroy: the parker outlives the wait.
 * fw_waiter_init_async: the same for an asynchronous record (no parker). */
void fw_waiter_init(struct fw_waiter *w, const void *key, int bit, bool exclusive);
void fw_waiter_init_async(struct fw_waiter *w, const void *key, bool exclusive);
/* Caller holds b->lock.  fw_enqueue appends w to its key's FIFO.
 * fw_requeue queues w for a sleep of a bit or keyed wait: woken (it slept
 * and found its condition still false) counts a spurious wakeup, and under
 * FAIR (fw_fair) a woken exclusive waiter goes first of its key instead,
 * keeping its place and its age (first_ns), one race lost (lost_races,
 * w->steals); true if it did. */
void fw_enqueue(struct fw_bucket *b, struct fw_waiter *w);
bool fw_requeue(struct fwait_table *t, struct fw_bucket *b, struct fw_waiter *w, bool woken);
/* FAIR, caller holds b->lock: w (queued or about to be) is due a handoff:
 * it has waited t->fair_ns since it first queued, or lost max_steals races. */
bool fw_due(const struct fwait_table *t, const struct fw_waiter *w);
/* FAIR, caller holds b->lock: one measured hold of a lock bit of b, ns
 * from its slow acquisition to its contended unlock, votes long (at least
 * t->hold_ns) or short.  fw_holds_long: the votes say long, so the next
 * contended unlock should hand the bit over rather than free it. */
#define FW_HOLD_VOTE_MAX 8u
#define FW_HOLD_VOTE_LONG 4u
void fw_hold_vote(const struct fwait_table *t, struct fw_bucket *b, uint64_t hold_ns);
bool fw_holds_long(const struct fwait_table *t, const struct fw_bucket *b);
void fw_unlink(struct fw_bucket *b, struct fw_waiter *w);
/* Caller holds b->lock: is any waiter of (key, bit) queued? */
bool fw_key_queued(const struct fw_bucket *b, const void *key, int bit);
bool fw_word_has_waiters(const struct fw_bucket *b, const void *word);
/* Called with b->lock held (w queued); returns with it released, except for
 * FW_TIMEDOUT, which returns with b->lock held and w already unlinked so the
 * caller can tidy up.  *raced is set when the deadline passed but a waker had
 * already chosen w: the caller must honour or pass on that wake. */
int fw_sleep(struct fwait_table *t, struct fw_bucket *b, struct fw_waiter *w,
	     const struct timespec *deadline, bool *raced);

/* A list of chosen waiters, built under the bucket lock and signalled after
 * it is dropped.  Linked through fw_waiter.next once unlinked. */
struct fw_wake_list {
	struct fw_waiter *first, *last;
	uint32_t count;
};
/* Caller holds b->lock: unlink w and append it to the list. */
void fw_choose(struct fw_bucket *b, struct fw_wake_list *l, struct fw_waiter *w);
/* Caller holds b->lock: undo the choice of every waiter in l, none yet
 * signalled: each goes back to the head of its key, in l's order (the
 * oldest first again), keeping its age; l is left empty. */
void fw_unchoose(struct fw_bucket *b, struct fw_wake_list *l);
/* Caller does NOT hold the bucket lock.  Posts state to each blocking
 * waiter of l; for an asynchronous one (w->async), takes it out of its
 * bucket's count and runs its completion, here, on this thread. */
void fw_signal_all(struct fw_wake_list *l, int state);

/* The unified wake walk under b->lock.  Chooses, in FIFO order: every
 * waiter of (key, bit) that is non-exclusive (if shared), and up to
 * nr_exclusive of the exclusive ones (FWAIT_ALL for all); under
 * FWAIT_BROADCAST every waiter in the bucket.  Counts foreign waiters
 * walked past. */
void fw_collect(struct fwait_table *t, struct fw_bucket *b, const void *key,
		int bit, bool shared, uint32_t nr_exclusive, struct fw_wake_list *l);

/* Caller holds b->lock: the oldest exclusive waiter of (key, bit) or NULL;
 * if found, counts the foreign waiters walked past to reach it (or, if
 * walked is not NULL, stores that number there and counts nothing, for a
 * caller that may walk again with fw_collect).  For a bit key, *word_others
 * (if not NULL) tells whether any other waiter of the same word is queued,
 * so a handoff can settle W without a second walk. */
struct fw_waiter *fw_first_exclusive(struct fw_bucket *b, const void *key, int bit,
				     bool *word_others, uint64_t *walked);

/* ---- futex.c (layer 3): the FWAIT_FUTEX policy ---- */
/* Sleep on the word itself until the bit is taken (exclusive) or seen
 * clear (not exclusive).  0, -ETIMEDOUT. */
int fw_futex_wait(struct fwait_table *t, _Atomic uint32_t *word, uint32_t m,
		  bool exclusive, const struct timespec *deadline);
int fw_futex_unlock(struct fwait_table *t, _Atomic uint32_t *word, uint32_t m);
void fw_futex_wake_all(struct fwait_table *t, _Atomic uint32_t *word, uint32_t m);
/* The same on a 64-bit word (sleeping on the 32-bit half holding m). */
int fw_futex64_wait(struct fwait_table *t, _Atomic uint64_t *word, uint64_t m,
		    bool exclusive, const struct timespec *deadline);
int fw_futex64_unlock(struct fwait_table *t, _Atomic uint64_t *word, uint64_t m);
void fw_futex64_wake_all(struct fwait_table *t, _Atomic uint64_t *word, uint64_t m);
bool fw_futex_supported(void);

/* ---- keyed.c (layer 4), for hlatch.c ---- */
/* fwait_wait_ex, for a hybrid latch's waits: store_release (the layout's
 * FWAIT_HLATCH_STORE_RELEASE), after counting itself in its bucket
 * (nkeyed), the waiter calls fw_membarrier when the table uses it and the
 * bucket's episode has not yet had one, so the latch's releases may use
 * fw_released_waiters. */
int fw_wait_latch(struct fwait_table *t, const void *key, unsigned flags, fwait_ready_fn ready,
		  void *arg, const struct timespec *deadline, bool store_release,
		  struct fwait_wait_result *out);
/* After a release that made a latch's waiters' ready() true with a store
 * and no fence: whether anyone waits in key's bucket (then the caller
 * wakes them).  Sound only against fw_wait_latch's waiters.  Inline: every
 * uncontended exclusive release of a hybrid latch runs it. */
static inline bool fw_released_waiters(const struct fwait_table *t, const void *key)
{
	_Atomic uint32_t *n = &fw_bucket_of(t, key)->nkeyed;
	/* The releaser's half.  With membarrier, no fence: the caller's
	 * store and our read of nkeyed may pass each other in this thread,
	 * but the membarrier of a latch waiter's episode (keyed_wait) puts a
	 * full barrier into this thread somewhere during that call: before
	 * the store (then the read, after it, sees the waiter's increment),
	 * after the read (then the waiter's ready(), after the call, sees the
	 * store), or between them (Dekker's pair with a fence on each side).
	 * A compiler barrier keeps the store and the read in program order
	 * (the caller's is its own; the call is not always one: LTO).
	 * Without membarrier, a seq_cst RMW that adds 0: if it follows the
	 * waiter's seq_cst increment in nkeyed's order it reads it; if it
	 * precedes it, the increment reads from it, which makes our store
	 * happen before the waiter's ready().  (Not keyed.c's fence pair:
	 * GCC refuses thread fences under ThreadSanitizer, which would then
	 * see no order here at all.) */
	if (t->membarrier) {
		atomic_signal_fence(memory_order_seq_cst);
		return atomic_load_explicit(n, memory_order_relaxed) != 0;
	}
	return atomic_fetch_add_explicit(n, 0, memory_order_seq_cst) != 0;
}

/* bitops.c (layer 4) and table.c (layer 5) define only the public API
 * (fwait.h). */

#endif /* FWAIT_INTERNAL_H */
