/* SPDX-License-Identifier: MIT */
/*
 * fwait.h - filtered, hashed, wake-one wait table (public API).
 *
 * Design note
 * -----------
 * A storage engine has millions of objects that a thread may have to wait
 * for (a page being read in, a page under write-back, a latch).  A mutex and
 * condition variable in each object would cost ~88 bytes per object for
 * something that is idle 99.99 % of the time.  Instead, every waiter parks in
 * one small, fixed, hashed table of buckets (the user-space form of Linux's
 * page wait table).  Each bucket is a mutex and a FIFO queue of waiters per
 * key; each waiter's record is on its own stack, and it sleeps on its
 * thread's parker (a futex word on Linux; a mutex and condvar elsewhere).
 * A waiter carries a *key*: (word address, bit number) for bit waits, or an
 * arbitrary address for generic waits.  A wake looks in its bucket and wakes
 * only the waiters whose key matches ("filtered wakeups", Irwin 2004);
 * lock-style bits are handed to exactly one exclusive waiter, oldest first.
 *
 * The bucket is chosen by the word's address alone, so all bits of one word
 * share a bucket; that lets fwait keep bit 31 of every word
 * (FWAIT_WAITERS_BIT; bit 63 of the 64-bit words of fwait_bit64_*)
 * exact enough to skip the table when nobody waits: an
 * uncontended lock, unlock or clear is a single atomic operation on the
 * caller's word and never touches the table (as Linux's PG_waiters).
 *
 * Policies (chosen per table, for honest comparison in one process):
 *   FWAIT_WAKE_ONE   filtered; unlock wakes exactly one exclusive waiter of
 *                    that key, the oldest.  By default (eventual fairness,
 *                    FWAIT_HANDOFF_FAIR) unlock releases the bit and a
 *                    running thread may take it first; a waiter that has
 *                    waited fwait_config.fair_ns (or lost max_steals races)
 *                    is handed the bit instead.  FWAIT_HANDOFF_STRICT always
 *                    hands it over (strict FIFO, no barging: a lock convoy
 *                    for short critical sections).
 *   FWAIT_WAKE_ALL   filtered; every waiter of the key is woken and they
 *                    race for the bit (Linux 2004, patches 1 and 2).
 *   FWAIT_BROADCAST  unfiltered; every waiter of the bucket is woken
 *                    (hashed wait queues before 2004).
 *   FWAIT_FUTEX      bit waits sleep on the word itself with
 *                    FUTEX_WAIT_BITSET / FUTEX_WAKE_BITSET: the kernel's own
 *                    hashed, filtered queue, as a reference point (Linux
 *                    only; generic keyed waits use the table as WAKE_ONE).
 *
 * Thread safety: every function may be called from any thread; a table must
 * outlive every call on it.  Deadlines are absolute CLOCK_MONOTONIC times;
 * NULL means wait forever.
 *
 * What the caller must not do:
 *   - call fwait from a signal handler, except fwait_bit_set and
 *     fwait_bit_test (and their 64-bit forms), which are single atomics:
 *     every other call may take a bucket lock the interrupted thread holds;
 *   - use a table in the child of a fork() (a bucket lock may have been
 *     copied held, and the queued waiters are other threads' stacks):
 *     create a new one there;
 *   - unload the library (dlclose) while a table exists or a thread is
 *     inside a call; with the pthread parker (-Dfwait_park=pthread, or off
 *     Linux) also not while a thread that ever waited is still running,
 *     as its parker's destructor lives in the library.
 *
 * Cancellation: no fwait call is a cancellation point, whichever parker the
 * library was built with.  A waiter's record lives on its stack, linked in
 * its bucket while it sleeps, so a thread unwound by pthread_cancel there
 * would leave it for the next wake to touch.  A wait therefore sleeps with
 * cancellation disabled and restores the caller's state when it returns: a
 * cancel that arrives meanwhile stays pending, the wait ends as it would
 * have (woken, handed the bit, or timed out) and the cancel acts at the
 * caller's next cancellation point.  To cancel a thread waiting with no
 * deadline, wake it too.  No call is async-cancel-safe: do not call fwait
 * with PTHREAD_CANCEL_ASYNCHRONOUS enabled.
 *
 * Memory ordering: "acquire" and "release" are C11's; each declaration
 * below says what its call orders (a failed call orders nothing).  The
 * pairs on a word hold as long as every change of the word is an atomic
 * read-modify-write (fwait's calls, or the caller's fetch_or/and/add or
 * CAS on its own bits), each of which continues a release's release
 * sequence; a plain store would break them, and could clear W.
 */
#ifndef FWAIT_FWAIT_H
#define FWAIT_FWAIT_H

/* The version of this header, which is the project's (meson.build's
 * project version; tests/abi checks that they agree).  FWAIT_VERSION is one
 * integer, major * 10000 + minor * 100 + patch, for #if tests.  Which
 * versions share an ABI is docs/abi.md's policy: before 1.0 a minor
 * release may break it, after 1.0 only a major; a break changes the
 * soname (libfwait.so.1 for 0.2). */
#define FWAIT_VERSION_MAJOR 0
#define FWAIT_VERSION_MINOR 2
#define FWAIT_VERSION_PATCH 0
#define FWAIT_VERSION \
	(FWAIT_VERSION_MAJOR * 10000 + FWAIT_VERSION_MINOR * 100 + FWAIT_VERSION_PATCH)

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/*
 * The word type, for C and C++
 * ----------------------------
 * Every call that takes a caller's word takes a fwait_atomic_u32 * (the
 * fwait_bit64_* calls a fwait_atomic_u64 *, checked the same way).  In C
 * that is _Atomic uint32_t, so C callers may keep writing _Atomic uint32_t;
 * in C++ (any standard from C++11 on) it is std::atomic<uint32_t>.  The
 * header includes <stdatomic.h> only in C (in C++ before C++23 it does not
 * exist or is not the C header) and <atomic> only in C++.
 *
 * The two are the same object in memory, and the library's C code and a
 * C++ caller may operate on one word together: libstdc++'s
 * std::atomic<uint32_t> holds one uint32_t aligned to its size and uses
 * the same lock-free __atomic builtins GCC and Clang use for C's _Atomic
 * uint32_t; libc++ (with Clang) holds a C11 _Atomic(uint32_t) itself.
 * C++23 makes that the rule (P0943: its <stdatomic.h> defines _Atomic(T)
 * as std::atomic<T>).  Waits are keyed on the word's address (FWAIT_FUTEX
 * sleeps on the word itself), which a C++ caller passes as &word.
 * What is checked here, when the header is compiled:
 *   C:    _Static_assert: sizeof and _Alignof(_Atomic uint32_t) equal
 *         uint32_t's, and ATOMIC_INT_LOCK_FREE == 2 (always lock-free);
 *   C++:  static_assert: sizeof and alignof(std::atomic<uint32_t>) equal
 *         uint32_t's, and std::atomic<uint32_t>::is_always_lock_free from
 *         C++17 on (else ATOMIC_INT_LOCK_FREE == 2).
 * The structs' bool members are C's _Bool (<stdbool.h>, included in C
 * only) and C++'s bool, one byte in both under the psABIs GCC and Clang
 * follow.  tests/cxx compares the struct layouts the C and the C++
 * compiler see.
 */
#ifdef __cplusplus
#include <atomic>
typedef std::atomic<uint32_t> fwait_atomic_u32;
static_assert(sizeof(fwait_atomic_u32) == sizeof(uint32_t),
	      "fwait: std::atomic<uint32_t> must have uint32_t's size");
static_assert(alignof(fwait_atomic_u32) == alignof(uint32_t),
	      "fwait: std::atomic<uint32_t> must have uint32_t's alignment");
#if defined(__cpp_lib_atomic_is_always_lock_free)
static_assert(fwait_atomic_u32::is_always_lock_free,
	      "fwait: std::atomic<uint32_t> must be always lock-free");
#else
static_assert(ATOMIC_INT_LOCK_FREE == 2,
	      "fwait: std::atomic<uint32_t> must be always lock-free");
#endif
typedef std::atomic<uint64_t> fwait_atomic_u64;
static_assert(sizeof(fwait_atomic_u64) == sizeof(uint64_t),
	      "fwait: std::atomic<uint64_t> must have uint64_t's size");
static_assert(alignof(fwait_atomic_u64) == alignof(uint64_t),
	      "fwait: std::atomic<uint64_t> must have uint64_t's alignment");
#if defined(__cpp_lib_atomic_is_always_lock_free)
static_assert(fwait_atomic_u64::is_always_lock_free,
	      "fwait: std::atomic<uint64_t> must be always lock-free");
#else
static_assert(ATOMIC_LLONG_LOCK_FREE == 2,
	      "fwait: std::atomic<uint64_t> must be always lock-free");
#endif
#else /* C */
#include <stdatomic.h>
#include <stdbool.h>
typedef _Atomic uint32_t fwait_atomic_u32;
_Static_assert(sizeof(fwait_atomic_u32) == sizeof(uint32_t),
	       "fwait: _Atomic uint32_t must have uint32_t's size");
_Static_assert(_Alignof(fwait_atomic_u32) == _Alignof(uint32_t),
	       "fwait: _Atomic uint32_t must have uint32_t's alignment");
_Static_assert(ATOMIC_INT_LOCK_FREE == 2,
	       "fwait: _Atomic uint32_t must be always lock-free");
typedef _Atomic uint64_t fwait_atomic_u64;
_Static_assert(sizeof(fwait_atomic_u64) == sizeof(uint64_t),
	       "fwait: _Atomic uint64_t must have uint64_t's size");
_Static_assert(_Alignof(fwait_atomic_u64) == _Alignof(uint64_t),
	       "fwait: _Atomic uint64_t must have uint64_t's alignment");
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2,
	       "fwait: _Atomic uint64_t must be always lock-free");
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility; everything declared here is
 * its exported API. */
#pragma GCC visibility push(default)

/* The version of the library the program runs on, as FWAIT_VERSION
 * (major * 10000 + minor * 100 + patch): it may be newer than the header
 * the program was built with (the soname keeps it ABI-compatible).  An
 * int, not a string, so that a program checks what it needs without
 * parsing, e.g. fwait_version() >= FWAIT_VERSION for "at least the release
 * I was built against"; printing it is the caller's ("%d.%d.%d",
 * v / 10000, v / 100 % 100, v % 100).  Never fails. */
int fwait_version(void);

/* Bit 31 of every word used with fwait_bit_* is fwait's: "someone may be
 * waiting on a bit of this word".  Callers must not set or clear it. */
#define FWAIT_WAITERS_BIT 31u
#define FWAIT_WAITERS_MASK (UINT32_C(1) << FWAIT_WAITERS_BIT)
/* Bits 0..FWAIT_MAX_BIT are usable by callers. */
#define FWAIT_MAX_BIT 30u
/* The same for 64-bit words (fwait_bit64_*): bit 63 is fwait's, bits
 * 0..FWAIT64_MAX_BIT are the caller's. */
#define FWAIT64_WAITERS_BIT 63u
#define FWAIT64_WAITERS_MASK (UINT64_C(1) << FWAIT64_WAITERS_BIT)
#define FWAIT64_MAX_BIT 62u

/* Wake every waiter (fwait_wake's nr argument). */
#define FWAIT_ALL UINT32_MAX

/* Number of log2 buckets in wait-time histograms: bucket i counts waits of
 * [2^i, 2^(i+1)) nanoseconds; the last bucket also takes anything longer. */
#define FWAIT_HIST_BUCKETS 40

enum fwait_policy {
	FWAIT_WAKE_ONE = 0, /* default */
	FWAIT_WAKE_ALL,
	FWAIT_BROADCAST,
	FWAIT_FUTEX,
	FWAIT_POLICY_COUNT
};

/* How FWAIT_WAKE_ONE passes a contended lock bit on (fwait_config.handoff);
 * the other policies always release and let the woken race. */
enum fwait_handoff {
	/* Default: eventual fairness.  A contended unlock releases the bit
	 * and wakes the oldest exclusive waiter; a running thread may take the
	 * free bit first (the woken one then re-queues at the head of its key,
	 * keeping its place).  The bit is handed over directly (never freed)
	 * once the oldest waiter is due: it has waited fair_ns since it first
	 * queued, or has lost max_steals races; and while the bucket's
	 * recent holds have been long (handoff_hold_ns), when a woken waiter
	 * costs a hold little idle time and a barger would only make it wake
	 * in vain.  Lock bits spin briefly (spin_ns) before they queue. */
	FWAIT_HANDOFF_FAIR = 0,
	/* Strict FIFO: every contended unlock hands the bit to the oldest
	 * exclusive waiter, and nobody spins (the behaviour before fairness
	 * was eventual; keep it for FIFO guarantees and comparisons). */
	FWAIT_HANDOFF_STRICT
};

/* fair_ns = 0: the oldest waiter is due a handoff after 1 ms (parking lots
 * use 0.5-1 ms). */
#define FWAIT_FAIR_NS_DEFAULT 1000000u
/* spin_ns = 0: a lock waiter spins up to ~2 us before it queues. */
#define FWAIT_SPIN_NS_DEFAULT 2000u
/* spin_ns = FWAIT_SPIN_OFF: never spin, queue at once. */
#define FWAIT_SPIN_OFF UINT32_MAX
/* handoff_hold_ns = 0: holds of 20 us or more count as long (see
 * docs/benchmarks.md, "Handing off long holds", for the measurement). */
#define FWAIT_HANDOFF_HOLD_NS_DEFAULT 20000u
/* handoff_hold_ns = FWAIT_HANDOFF_HOLD_OFF: never hand off for long holds. */
#define FWAIT_HANDOFF_HOLD_OFF UINT32_MAX

/* A zero-initialised config is the default table: 256 buckets, WAKE_ONE,
 * eventual fairness with the defaults above. */
struct fwait_config {
	unsigned nbuckets;          /* 0 = default (256); rounded up to 2^n */
	enum fwait_policy policy;   /* 0 = FWAIT_WAKE_ONE */
	/* WAKE_ONE with FWAIT_HANDOFF_FAIR only: the count bound on unfairness.
	 * A waiter woken by an unlock that finds the bit taken again (a lost
	 * race, stats.lost_races) is due a handoff after this many losses,
	 * whatever its age (Linux tolerates 5).  0 = no count bound: only
	 * fair_ns makes a waiter due.  Ignored under FWAIT_HANDOFF_STRICT. */
	unsigned max_steals;
	enum fwait_handoff handoff; /* 0 = FWAIT_HANDOFF_FAIR */
	/* FAIR only: the time bound, in ns since the waiter first queued; 0 =
	 * FWAIT_FAIR_NS_DEFAULT. */
	uint32_t fair_ns;
	/* FAIR only: how long fwait_bit_lock spins on the word (relaxed loads
	 * and a pause, a CAS only when the bit looks free) before it queues;
	 * 0 = FWAIT_SPIN_NS_DEFAULT, FWAIT_SPIN_OFF = never.  It does not spin
	 * while its bucket is handing lock bits over (a waiter is due).  Keyed
	 * waits spin only when asked (fwait_wait_ex's FWAIT_SPIN, fwait_spin,
	 * the hybrid latches), as their ready() must then be safe to run
	 * unlocked; after spin_ns they also yield the CPU a few times
	 * (sched_yield) before they queue, which lets a preempted holder run
	 * when threads outnumber CPUs. */
	uint32_t spin_ns;
	/* FAIR lock bits only: a hold counts as long if it lasts this many ns
	 * or more.  A contended unlock of a thread that took its bit after
	 * queueing measures its hold and votes long or short in its bucket;
	 * while the recent votes say long, unlocks in the bucket hand the bit
	 * to the oldest waiter (no lost races, no wasted wakes: with holds
	 * this long the bit sits idle for a wake-up only a small part of a
	 * hold) and spinners queue at once.  0 = FWAIT_HANDOFF_HOLD_NS_DEFAULT,
	 * FWAIT_HANDOFF_HOLD_OFF = never. */
	uint32_t handoff_hold_ns;
	/* true: keep no statistics (fwait_stats_get reads zeros, the
	 * histogram stays empty): no counter RMW and no clock read for the
	 * histogram on any path.  What they cost when on: docs/benchmarks.md,
	 * "Statistics on and off". */
	bool stats_off;
	/* false (default): on Linux with membarrier(2), register the process
	 * for MEMBARRIER_CMD_PRIVATE_EXPEDITED, so that hybrid latches whose
	 * layout sets FWAIT_HLATCH_STORE_RELEASE may release exclusive with a
	 * plain store (their waiters pay a membarrier instead).  true, or
	 * where membarrier is missing: every latch release is a CAS. */
	bool no_membarrier;
};

struct fwait_table;

struct fwait_stats {
	uint64_t waits;            /* times a thread went to sleep */
	uint64_t wakeups;          /* waiters woken (a handoff counts too) */
	uint64_t spurious_wakeups; /* woken, but had to sleep again */
	uint64_t foreign_skipped;  /* waiters of other keys passed over by wakes */
	uint64_t timeouts;         /* waits that returned -ETIMEDOUT */
	uint64_t handoffs;         /* lock bits handed directly to a waiter, and
	                            * waiters woken with a token (fwait_wake_ex) */
	uint64_t slow_wakes;       /* wake calls that took a bucket lock */
	uint64_t slow_waits;       /* wait calls that took a bucket lock (slept or not) */
	/* FAIR only: exclusive waiters (lock bits and keyed waits) that were
	 * woken, found the bit taken (or ready() false) and re-queued at the
	 * head of their key; each also counts in spurious_wakeups. */
	uint64_t lost_races;
	uint32_t max_bucket_depth; /* most waiters seen queued in one bucket */
	uint32_t nbuckets;
	size_t table_bytes;        /* memory held by the table */
	uint64_t wait_ns_hist[FWAIT_HIST_BUCKETS]; /* log2 histogram of waits */
};

/* One waiter parked right now, as seen by fwait_waiters_walk. */
struct fwait_waiter_info {
	const void *key;    /* word address, or the generic key */
	int bit;            /* bit number, or -1 for a generic key */
	bool exclusive;
	uint64_t waited_ns; /* how long it has been parked */
	unsigned bucket;
};

/* Constructor: *out is set only on success.  cfg may be NULL (defaults).
 * Returns 0, -EINVAL (bad policy, nbuckets > 2^24, NULL out), -ENOTSUP
 * (FWAIT_FUTEX off Linux) or -ENOMEM.  Not synchronised: publish the table
 * to other threads as any object (e.g. before pthread_create). */
int fwait_table_create(struct fwait_table **out, const struct fwait_config *cfg);
/* No thread may be waiting on, or calling into, the table. NULL is a no-op. */
void fwait_table_destroy(struct fwait_table *t);
/* The table's policy; FWAIT_POLICY_COUNT (not a policy) for NULL. */
enum fwait_policy fwait_table_policy(const struct fwait_table *t);
/* The policies are 0 .. FWAIT_POLICY_COUNT - 1; each has a name and a
 * one-line help text (for a tool's usage), both static strings; "invalid"
 * for any other value. */
const char *fwait_policy_name(enum fwait_policy p);
const char *fwait_policy_help(enum fwait_policy p);
/* Parses a policy's name ("wake-one", "wake-all", "broadcast", "futex");
 * -EINVAL otherwise. */
int fwait_policy_parse(const char *name, enum fwait_policy *out);

/* ---- Bit operations on a caller's word; key = (word, bit) ---------------- */

/* Take a lock-style bit (PG_locked), sleeping as an exclusive waiter.
 * 0, -ETIMEDOUT (nothing held), or -EINVAL (NULL t/word, bit > 30, a
 * deadline with tv_nsec outside [0, 1e9) or a negative tv_sec).
 * 0 is an acquire, in every mode: what the previous holder did before its
 * fwait_bit_unlock happens before this return.  When the bit was free (the
 * fast path, a spin, a woken or barging thread under FWAIT_HANDOFF_FAIR) it
 * is the word's release/acquire pair; when WAKE_ONE hands the bit over
 * without clearing it (strict; under fair, a due waiter, or any while the
 * bucket's holds are long), it is the bucket lock and the handshake that
 * wakes the waiter (a release store and acquire load of its parker, see
 * park.c). */
int fwait_bit_lock(struct fwait_table *t, fwait_atomic_u32 *word, unsigned bit,
		   const struct timespec *deadline);
/* 0 if taken, -EBUSY if held, -EINVAL; never sleeps, never touches a table.
 * 0 is an acquire, as fwait_bit_lock's; -EBUSY promises nothing. */
int fwait_bit_trylock(fwait_atomic_u32 *word, unsigned bit);
/* Release a held lock bit; the caller must hold it.  Under WAKE_ONE the
 * oldest exclusive waiter of (word, bit) is woken (FAIR: the bit is released
 * and it races for it, unless it is due or the bucket's recent holds were
 * long (handoff_hold_ns), when it is handed the bit) or handed the bit
 * (STRICT); waiters in fwait_bit_wait on the key are woken
 * whenever the bit is released.
 * Returns -EPERM (and changes nothing) if the bit was not set, -EINVAL.
 * 0 is a release: what the caller did before it happens before the return
 * of the next fwait_bit_lock/trylock that takes the bit, and of a
 * fwait_bit_wait or fwait_bit_test that sees the bit clear after it.
 * Under FWAIT_FUTEX the waiters bit is sticky (the kernel cannot say when
 * a word's last waiter left): once a word has had a waiter, every unlock
 * and clear of it makes a FUTEX_WAKE system call, for the word's life. */
int fwait_bit_unlock(struct fwait_table *t, fwait_atomic_u32 *word, unsigned bit);
/* Wait until the bit is clear, without taking it (wait_on_page_writeback).
 * Loops until the bit is really observed clear.  0, -ETIMEDOUT, -EINVAL.
 * 0: the bit was seen clear by an acquire, so the fwait_bit_clear or
 * fwait_bit_unlock that cleared it happens before the return.  The bit may
 * be set again by the time the call returns. */
int fwait_bit_wait(struct fwait_table *t, fwait_atomic_u32 *word, unsigned bit,
		   const struct timespec *deadline);
/* Set an event-style bit (PG_writeback).  Returns the old state of the bit
 * (true if it was already set); a plain atomic OR, no table access.
 * acq_rel: it acquires the fwait_bit_clear that ended the previous event
 * (so false, used as a try-lock, is an acquire), and releases the caller's
 * earlier writes to a thread that then sees the bit set (fwait_bit_test). */
bool fwait_bit_set(fwait_atomic_u32 *word, unsigned bit);
/* Clear an event-style bit and wake every waiter of (word, bit).  Clearing a
 * clear bit is harmless.  0 or -EINVAL.
 * 0 is a release, also on a clear bit: what the caller did before it
 * happens before the return of a fwait_bit_wait, fwait_bit_test or
 * fwait_bit_set that sees the bit clear after it. */
int fwait_bit_clear(struct fwait_table *t, fwait_atomic_u32 *word, unsigned bit);
/* Predicate: is the bit set (acquire load; no table access).  Seeing it
 * clear acquires the fwait_bit_clear/unlock that cleared it; seeing it set
 * acquires a fwait_bit_set that set it (taking a lock releases nothing). */
bool fwait_bit_test(const fwait_atomic_u32 *word, unsigned bit);

/* ---- The same on a caller's 64-bit word ---------------------------------- */
/* fwait_bit64_* are fwait_bit_* on a fwait_atomic_u64: bits 0..62 are the
 * caller's, bit 63 is W (FWAIT64_WAITERS_MASK); -EINVAL for bit > 62.
 * Every policy, statistic, error and ordering guarantee is the 32-bit
 * call's above, word for word (one implementation serves both widths).
 * Under FWAIT_FUTEX a waiter sleeps on the 32-bit half of the word that
 * holds its bit.  Do not use one address both as a 32-bit and as a 64-bit
 * word. */
int fwait_bit64_lock(struct fwait_table *t, fwait_atomic_u64 *word, unsigned bit,
		     const struct timespec *deadline);
int fwait_bit64_trylock(fwait_atomic_u64 *word, unsigned bit);
int fwait_bit64_unlock(struct fwait_table *t, fwait_atomic_u64 *word, unsigned bit);
int fwait_bit64_wait(struct fwait_table *t, fwait_atomic_u64 *word, unsigned bit,
		     const struct timespec *deadline);
bool fwait_bit64_set(fwait_atomic_u64 *word, unsigned bit);
int fwait_bit64_clear(struct fwait_table *t, fwait_atomic_u64 *word, unsigned bit);
bool fwait_bit64_test(const fwait_atomic_u64 *word, unsigned bit);

/* ---- Generic keyed waits (wait_event_filtered) --------------------------- */

#define FWAIT_EXCLUSIVE 1u /* flag: exclusive waiter (woken one at a time) */
/* flag: call ready(arg) once before taking the bucket lock, and return 0 at
 * once if it is true (no lock, no statistics: the fast path of a wait whose
 * condition often already holds).  That first call runs without the bucket
 * lock, so concurrently with other threads' ready() calls and with wakers:
 * ready() must be safe for that (atomics only, as a lock word's check is),
 * and a false answer decides nothing: fwait_wait then proceeds as without
 * the flag, and only the check under the lock decides to sleep. */
#define FWAIT_PRECHECK 2u

/* Called with the bucket lock held: return true to stop waiting.  Because it
 * runs under the same lock fwait_wake takes, a waker that makes the condition
 * true *before* calling fwait_wake can never be missed: whatever the waker
 * wrote before fwait_wake(key) is visible to every ready() call that starts
 * after that fwait_wake took the lock.  It may also set a caller's own
 * "waiters" flag (as parking lots' validate callbacks do).  It must not call
 * into the same table, block, or take a lock that a thread may hold while
 * it calls into the table (that thread may be waiting for this bucket's
 * lock): keep it to loads and stores of the caller's own atomics.  It may
 * run any number of times per wait, so it must have no other effect.  (In
 * a debug-checks build, -Ddebug_checks=true, a fwait_wait or fwait_wake
 * from ready() aborts with a message.) */
typedef bool (*fwait_ready_fn)(void *arg);

/* Sleep on key until ready(arg) holds.  Returns 0 once ready(arg) returned
 * true, -ETIMEDOUT, or -EINVAL (NULL t/key/ready, unknown flags).  An
 * exclusive waiter that is woken but times out at the same moment passes the
 * wake on to the next exclusive waiter, so no wake is lost.  Under WAKE_ONE
 * with FWAIT_HANDOFF_FAIR an exclusive waiter woken to find ready() false
 * re-queues at the head of its key (it keeps its place; stats.lost_races);
 * otherwise it re-queues at the tail.  fwait cannot hand the caller's
 * resource over by itself and fwait_wait does not spin: fwait_wait_ex
 * (below) spins on request and ends on a waker's token, the handoff a
 * caller makes in its own state (fwait_hlatch_* do).  0 orders what
 * that true ready() call saw (see fwait_ready_fn; with FWAIT_PRECHECK it may
 * be the unlocked first call, which orders only what its own loads
 * acquire), and nothing more.
 * Passing a wake on: an exclusive waiter that returns 0 but then does not
 * take what it was woken for (an optimistic reader that restarts, a page
 * that was evicted meanwhile) must call fwait_wake(t, key, 1) before it
 * goes, as Linux's abort_exclusive_wait does for a woken waiter that
 * leaves; otherwise, with nr = 1, the next exclusive waiter is not woken.
 * A pass that turns out unneeded costs that waiter one spurious wakeup. */
int fwait_wait(struct fwait_table *t, const void *key, unsigned flags,
	       fwait_ready_fn ready, void *arg, const struct timespec *deadline);
/* Wake every non-exclusive waiter of key and up to nr exclusive ones (oldest
 * first); nr = FWAIT_ALL wakes all.  Returns the number woken (>= 0) or
 * -EINVAL.  Under FWAIT_BROADCAST every waiter of the bucket is woken.
 * It starts with a seq_cst fence and returns 0 at once, without the bucket
 * lock, when no thread is inside fwait_wait on key's bucket (except under
 * FWAIT_BROADCAST, which always takes the lock).  Either way, whatever the
 * caller wrote before the call (even with relaxed stores) is seen by every
 * ready() of a waiter that could still sleep: the waiter announces itself
 * and fences before its first ready(), so either fwait_wake sees it and
 * takes the lock, or its ready() sees the caller's write.  It orders
 * nothing else for threads that do not wait on the key. */
int fwait_wake(struct fwait_table *t, const void *key, uint32_t nr);

/* ---- Keyed waits, complete: how a wait ended, wake reports, tokens ------- */
/*
 * What a parking lot gives its users (parking_lot_core's park/unpark_one,
 * WebKit's ParkingLot::unparkOne), on the same table and the same keys as
 * fwait_wait and fwait_wake; the two pairs mix freely on one key.
 *
 * The pattern they serve: a lock word with its own waiters bit W.  A
 * waiter's ready() either takes the lock (so a woken waiter that loses
 * keeps its place: the take is inside the wake path) or sets W with a CAS
 * and returns false; both run under the bucket lock.  Unlock releases
 * with one RMW when W is clear and never calls fwait; when W is set it
 * calls fwait_wake_ex, whose callback runs under the same bucket lock and
 * learns exactly whether waiters of the key remain, so it clears or keeps
 * W, and hands the lock over (a token) instead of releasing it when the
 * oldest waiter is due.  fwait_hlatch_* below is that pattern, built; in
 * outline, for a lock word w with bits HELD and W (CAS: a C11 compare
 * exchange that reloads v when it fails):
 *
 *   ready(l):  (under the bucket lock; FWAIT_SPIN also runs it unlocked,
 *               where it must not set W: pass a flag)
 *       for (v = load(w);;)
 *           if (!(v & HELD)) { if (CAS(w, v, v | HELD)) return true; }
 *           else if ((v & W) || CAS(w, v, v | W)) return false;
 *   lock:      if (CAS(w, 0, HELD)) return;
 *              fwait_wait_ex(t, w, FWAIT_EXCLUSIVE, ready, l, NULL, &r);
 *              held either way: ready() took it, or r.token == HANDOFF
 *   unlock:    if (CAS(w, HELD, 0)) return;          (W clear: no call)
 *              fwait_wake_ex(t, w, 1, 0, release, l);
 *   release(r, l):  (under the bucket lock)
 *       if (r->woken_exclusive && r->due) { w = HELD | (r->more_waiters ? W : 0);
 *                                           return HANDOFF; }
 *       w = r->more_waiters ? W : 0; return 0;
 *
 * A waiter that returns FWAIT_HOW_WOKEN and then leaves without what it
 * was woken for passes the wake on: fwait_wake_ex(t, key, 1,
 * FWAIT_WAKE_EXCLUSIVE_ONLY, NULL, NULL).
 */

/* fwait_wait_ex flag: before queueing, call ready() without the lock, with
 * a pause between calls, for up to the table's spin_ns, then once after
 * each of a few sched_yield() calls (fwait_spin; FAIR tables only, as
 * fwait_bit_lock's spin: on other tables one call).
 * It implies FWAIT_PRECHECK, and ready() must be safe to run unlocked. */
#define FWAIT_SPIN 4u

/* How fwait_wait_ex returned (fwait_wait_result.how). */
enum fwait_wait_how {
	/* ready() held at an unlocked look (FWAIT_PRECHECK, FWAIT_SPIN):
	 * the thread never queued and consumed no wake. */
	FWAIT_HOW_PRECHECK = 1,
	/* ready() held under the bucket lock, not right after a wake: before
	 * the thread slept at all, or at the last look of a wait whose
	 * deadline passed.  It consumed no wake either. */
	FWAIT_HOW_LOCKED,
	/* The thread slept and was woken: ready() then held, or the wake
	 * carried a token (token != 0, ready() not called again).  It
	 * consumed a wake: if it now leaves without taking what it was woken
	 * for, it must pass the wake on (fwait_wake_ex with
	 * FWAIT_WAKE_EXCLUSIVE_ONLY, nr 1). */
	FWAIT_HOW_WOKEN,
	/* -ETIMEDOUT: the deadline passed and ready() still failed (a wake
	 * that raced with the deadline was passed on already). */
	FWAIT_HOW_TIMEDOUT
};

struct fwait_wait_result {
	enum fwait_wait_how how;
	uint32_t sleeps;  /* times the thread slept (woken ones: >= 1) */
	uint64_t token;   /* FWAIT_HOW_WOKEN: the last wake's token; else 0 */
};

/* fwait_wait with flags FWAIT_EXCLUSIVE, FWAIT_PRECHECK and FWAIT_SPIN,
 * telling how it returned in *out (which may be NULL), and ending on a
 * token: a wake by fwait_wake_ex whose callback returned a token other
 * than 0 ends the wait at once, without calling ready() again; the call
 * returns 0 with out->how FWAIT_HOW_WOKEN and out->token set, even if the
 * deadline passed at the same moment (the waker handed something over).
 * A token 0 (every fwait_wake) re-checks ready() as fwait_wait does.
 * Returns 0, -ETIMEDOUT or -EINVAL, with fwait_wait's rules for ready(),
 * fairness and ordering; a token's return is an acquire of the waker's
 * callback: what the waker did before or in it happens before the return
 * (the bucket lock, then the parker's release/acquire handshake). */
int fwait_wait_ex(struct fwait_table *t, const void *key, unsigned flags,
		  fwait_ready_fn ready, void *arg, const struct timespec *deadline,
		  struct fwait_wait_result *out);

/* What fwait_wake_ex's callback is told, under the bucket lock. */
struct fwait_wake_report {
	uint32_t woken;         /* waiters of key this wake chose (they run
				 * once the lock is dropped; under
				 * FWAIT_BROADCAST the bucket's other waiters,
				 * woken too, are not counted) */
	uint32_t woken_exclusive; /* of which exclusive */
	bool more_waiters;      /* waiters of key are still queued after it:
				 * exact, under the lock every waiter queues
				 * under */
	/* The oldest exclusive waiter chosen is due a handoff: under FAIR it
	 * has waited the table's fair_ns since it first queued or lost
	 * max_steals races; under FWAIT_HANDOFF_STRICT, whenever an
	 * exclusive waiter was chosen; false under WAKE_ALL and BROADCAST. */
	bool due;
};

/* Runs under the bucket lock, once per fwait_wake_ex; its return value is
 * the token every chosen waiter of key receives (0: none, they re-check
 * ready(); so do other keys' waiters that FWAIT_BROADCAST woke).
 * The rules of fwait_ready_fn apply: atomics on the caller's own words,
 * no call into the table, no blocking. */
typedef uint64_t (*fwait_wake_fn)(const struct fwait_wake_report *r, void *arg);
/* A callback's return value that undoes the wake: the callback found that
 * nobody should wake after all (a shared release that finds it is not the
 * last holder any more).  Every waiter the wake chose goes back to the
 * head of its key in its order, keeping its age, as if never chosen;
 * nobody wakes and fwait_wake_ex returns 0.  (Not a token: never
 * delivered.) */
#define FWAIT_WAKE_CANCEL UINT64_MAX

/* fwait_wake_ex flag: choose up to nr exclusive waiters and no shared one
 * (the pass-on of a woken exclusive waiter that leaves). */
#define FWAIT_WAKE_EXCLUSIVE_ONLY 1u

/* Wake as fwait_wake (every shared waiter of key and up to nr exclusive
 * ones, oldest first; FWAIT_WAKE_EXCLUSIVE_ONLY: the exclusive ones only),
 * and, when cb is not NULL, call cb(report, arg) under the bucket lock,
 * after the choice and before anyone chosen runs, also when nobody was
 * chosen; the chosen receive its token.  With cb, the call always takes
 * the bucket lock (a callback that changes the caller's word must be
 * ordered against every waiter's ready()); without, it skips the lock
 * when nobody waits in the bucket, as fwait_wake.  Returns the number
 * woken (>= 0) or -EINVAL (NULL t/key, unknown flags).  Ordering: that of
 * fwait_wake; what cb writes is seen by every later ready() and, through
 * the token's handshake, by the woken waiters' returns. */
int fwait_wake_ex(struct fwait_table *t, const void *key, uint32_t nr, unsigned flags,
		  fwait_wake_fn cb, void *arg);

/* The spin of FWAIT_SPIN, for callers that poll a word themselves: calls
 * ready(arg) without any lock, pausing between calls, until it returns
 * true (then true) or the table's spin_ns has passed; then yields the CPU
 * (sched_yield) and calls it again, a few times (4), and returns false if
 * it never held.  The yields let a holder that was preempted run, where
 * threads outnumber CPUs, at one system call each when nothing else is
 * runnable (docs/benchmarks.md has the three regimes).  On a
 * table that does not spin (not FAIR, or spin_ns FWAIT_SPIN_OFF) it calls
 * ready() once.  Orders what ready()'s own loads order. */
bool fwait_spin(const struct fwait_table *t, fwait_ready_fn ready, void *arg);

/* ---- Asynchronous keyed waits --------------------------------------------- */
/*
 * A keyed wait that does not block its thread, for task-based engines
 * (one thread per core running many tasks): the caller supplies the waiter
 * record (intrusive: no allocation) and a completion, which the waker runs
 * once it has chosen the record.  Same table, keys, filtering, FIFO order
 * and fairness as fwait_wait: blocking and asynchronous waiters mix on one
 * key, and fwait_wake / fwait_wake_ex wake either kind, oldest first.
 *
 *   struct fwait_async a;            // lives until completion or cancel
 *   fwait_async_init(&a, done, task);
 *   rc = fwait_wait_async(t, key, FWAIT_EXCLUSIVE, ready, arg, &a);
 *       0: ready() held; no completion will run.  1: queued.
 *   done(&a, token, task) runs later, on the waking thread, after the
 *   bucket lock is dropped: keep it short (push the task to a run queue).
 *   The task then looks again: ready() taken (take inside ready(), as
 *   with fwait_wait_ex), or fwait_wait_async(..., &a) once more, which,
 *   after a wake and under FAIR, queues it at the head of its key (it
 *   keeps its place, as a blocking waiter that lost a race does).
 *
 * Cancellation (a deadline is the caller's timer calling it):
 * fwait_cancel_async returns 0 if the record was still queued (it is
 * unlinked; its completion never runs), or -EALREADY if a wake chose it
 * first: the completion runs or has run, and the task must treat it as a
 * wake.  An exclusive waiter that no longer wants what it was woken for
 * passes the wake on, as after fwait_wait_ex: fwait_wake_ex(t, key, 1,
 * FWAIT_WAKE_EXCLUSIVE_ONLY, NULL, NULL), so the next waiter is never
 * stranded.
 *
 * Record lifetime: from fwait_wait_async returning 1 until its completion
 * has started or fwait_cancel_async returned 0, the record belongs to the
 * table: do not free, move or re-wait it.  The completion's call is the
 * waker's last touch; done may free or re-wait the record itself.
 *
 * Ordering: as fwait_wait for the checks (the waiter counts itself in the
 * bucket and fences before its locked ready(), fwait_wake's pairing); the
 * completion runs on the waker's thread after its critical section, so
 * whatever the waker wrote before its wake is visible to done, and to the
 * task through whatever done uses to hand it on (a run queue's lock).  A
 * token is fwait_wake_ex's, as a blocking waiter receives it.
 */
struct fwait_async;
/* The completion: the record, the token of the wake (0 from fwait_wake),
 * the arg given to fwait_async_init. */
typedef void (*fwait_async_fn)(struct fwait_async *a, uint64_t token, void *arg);

#define FWAIT_ASYNC_WORDS 20
struct fwait_async {
	uint64_t fwait_private_[FWAIT_ASYNC_WORDS]; /* the library's waiter record */
};

/* Prepares a record for fwait_wait_async with its completion.  0 or
 * -EINVAL (NULL a or done).  Not on a record that is queued. */
int fwait_async_init(struct fwait_async *a, fwait_async_fn done, void *arg);

/* Waits for ready(arg) on key without blocking: as fwait_wait (flags
 * FWAIT_EXCLUSIVE, FWAIT_PRECHECK; ready() runs under the bucket lock and
 * must not call into the table), but instead of sleeping it queues a and
 * returns 1; a's completion runs when a wake chooses it.  0: ready() held
 * (no completion).  -EINVAL: NULL t, key, ready or a, a not initialised,
 * unknown flags. */
int fwait_wait_async(struct fwait_table *t, const void *key, unsigned flags,
		     fwait_ready_fn ready, void *arg, struct fwait_async *a);

/* Cancels a's queued wait: 0 if it was queued (unlinked now; no completion
 * will run; counted as a timeout in the statistics), -EALREADY if it is not
 * queued (a wake chose it: its completion runs or ran), -EINVAL (NULL t or
 * a, a never waited on t).  Ordering: the bucket lock's; a 0 return is
 * final. */
int fwait_cancel_async(struct fwait_table *t, struct fwait_async *a);

/* ---- Hybrid latches on a caller's 64-bit word ---------------------------- */
/*
 * A shared/exclusive latch with optimistic reads (LeanStore's hybrid latch,
 * vmcache's page state) on the caller's own word, laid out as the caller
 * chooses: a state field (0 free; 1..shared_max shared holders; exclusive
 * held exclusive; optionally one "marked" value that counts as free, as
 * vmcache's clock mark; every other value is the caller's own, such as
 * "evicted", and latch calls refuse it with -EAGAIN), a version field that
 * every exclusive release bumps (wrapping within the field), and
 * optionally one waiters bit W (set by a waiter under the bucket lock; a
 * release that sees it goes slow, wakes, and leaves it saying whether
 * waiters are still queued).  Bits outside the three are the caller's and
 * kept as they are: change them only with atomic RMWs (and, under
 * FWAIT_HLATCH_STORE_RELEASE, not while another thread holds the latch
 * exclusive: its release writes them back as it read them).
 *
 * Uncontended, taking is one load and one CAS, a release one CAS, and
 * with W clear a release takes no table lock.  Under
 * FWAIT_HLATCH_STORE_RELEASE an exclusive release that finds nobody
 * waiting in the word's bucket is one plain store and a read of the
 * bucket's waiter count instead (no locked instruction).  The store is
 * safe because the latch's waiters pay for it: the first waiter of a
 * contention episode in the bucket makes one membarrier(2) call after it
 * counts itself in, which orders every running thread as a full fence
 * would (liburcu's urcu-memb does the same for its readers); without
 * membarrier, or with the table's no_membarrier, the flag is ignored.
 * Contended: spin (fwait_spin), then sleep as a keyed waiter on
 * the word's address, shared and exclusive waiters on that one key; the
 * take runs inside ready() under the bucket lock, so a woken writer that
 * loses keeps its place at the head of the key (FAIR), and an exclusive
 * release that finds W set hands the latch directly to the oldest writer
 * once it is due (fwait_wake_report .due).  New shared holders queue
 * behind a waiting writer (W set while shared), so a stream of readers
 * does not starve it.  Without W (waiters_bit -1) releases wake without a
 * handoff, and new readers do not wait behind writers.
 *
 * Ordering.  Taking the latch (shared or exclusive) is an acquire of the
 * release that last freed or handed it; every release is a release.  An
 * exclusive take is followed by a release fence, so optimistic readers
 * may read the protected data with relaxed atomics: a reader that reads
 * any store the holder made after taking it, then calls
 * fwait_hlatch_validate (which starts with an acquire fence), sees the
 * latch held or the version moved, and fails (Boehm's seqlock argument).
 * Deadlines are CLOCK_MONOTONIC; a waiter that times out may leave W set:
 * the next release then takes the slow path once and clears it.
 */
struct fwait_hlatch_layout {
	uint8_t state_shift;   /* lowest bit of the state field */
	uint8_t state_bits;    /* its width, 2..16 */
	uint16_t shared_max;   /* shared holders count 1..shared_max; 0: no shared mode */
	uint16_t exclusive;    /* the state "held exclusive": > shared_max, fits the field */
	uint16_t marked;       /* a caller state that counts as free (taking the
				* latch replaces it); 0: none */
	int8_t waiters_bit;    /* W, outside both fields; -1: no W */
	uint8_t version_shift; /* lowest bit of the version field */
	uint8_t version_bits;  /* its width, 1..62, outside the state field */
	uint8_t flags;         /* FWAIT_HLATCH_STORE_RELEASE, or 0 */
};

/* fwait_hlatch_layout.flags: an uncontended exclusive release is a plain
 * store instead of a CAS (on a table with membarrier; see "Uncontended"
 * above): an uncontended lock + unlock then costs about a CAS and a store
 * (1.1x, where the CAS release costs 1.9x), but each contention episode
 * of a bucket costs a membarrier(2), which interrupts every CPU running
 * the process (tens of microseconds on a VM), and contended with a
 * short compute hold it uses 9-24 % more CPU per acquisition than the CAS
 * release (less with no hold, the same with a sleeping one;
 * docs/benchmarks.md).  The choice for a word that is mostly uncontended,
 * as a page's latch is.  Not for words whose caller bits other
 * threads change while the latch is held exclusive (a clock's reference
 * bit set by fetch_or): the store would write them back as it read them. */
#define FWAIT_HLATCH_STORE_RELEASE 1u

/* 0 if the layout is usable, -EINVAL otherwise (fields overlapping or
 * past bit 63, exclusive or marked not fitting, shared_max >= exclusive,
 * marked equal to 0, exclusive or a shared count).  The latch calls check
 * it too, and return -EINVAL for a bad one. */
int fwait_hlatch_layout_check(const struct fwait_hlatch_layout *l);

/*
 * The calls below marked "inline" have their uncontended path in this
 * header, as liburcu's fast paths: with a layout the compiler can see (a
 * static const struct), taking or releasing is one load and one CAS, no
 * call; a layout known only at run time adds its checks (a dozen
 * compares).  Anything else calls the out-of-line fwait_hlatch_*_slow,
 * which does the whole call (its fast path again included): what a
 * binding from another language calls.  The word's protocol is therefore
 * part of the ABI: a later release changes it only with a new soname.
 */
int fwait_hlatch_lock_slow(struct fwait_table *t, const struct fwait_hlatch_layout *l,
			   fwait_atomic_u64 *word, const struct timespec *deadline);
int fwait_hlatch_unlock_slow(struct fwait_table *t, const struct fwait_hlatch_layout *l,
			     fwait_atomic_u64 *word);
int fwait_hlatch_lock_shared_slow(struct fwait_table *t, const struct fwait_hlatch_layout *l,
				  fwait_atomic_u64 *word, const struct timespec *deadline);
int fwait_hlatch_unlock_shared_slow(struct fwait_table *t, const struct fwait_hlatch_layout *l,
				    fwait_atomic_u64 *word);
int fwait_hlatch_read_begin_slow(struct fwait_table *t, const struct fwait_hlatch_layout *l,
				 const fwait_atomic_u64 *word, const struct timespec *deadline,
				 uint64_t *snapshot);

/* What the inline fwait_hlatch_unlock calls after its plain store (and
 * fwait_hlatch_unlock_to after its own), the latch released into state
 * `to`: when anyone waits in the word's bucket, wake the latch's waiters
 * (all of them when `to` is the caller's own state) and set W to whether
 * some are still queued.  0, or -EINVAL.  Not for other callers. */
int fwait_hlatch_unlocked(struct fwait_table *t, const struct fwait_hlatch_layout *l,
			  fwait_atomic_u64 *word, unsigned to);

/* The count of threads waiting in word's bucket, which the inline unlock
 * reads before and after a store release (a binding that keeps a latch
 * object keeps it too: fwait.hpp's hybrid_latch).  NULL when the table has
 * no membarrier (then every release is a CAS), or for a NULL table or
 * word.  Valid for the table's life. */
const fwait_atomic_u32 *fwait_hlatch_waiters(const struct fwait_table *t, const void *word);

/* 0 taken, -EBUSY held (shared or exclusive), -EAGAIN the caller's state,
 * -EINVAL.  Never sleeps, never touches a table. */
int fwait_hlatch_trylock(const struct fwait_hlatch_layout *l, fwait_atomic_u64 *word);
/* 0, -EBUSY, -EAGAIN, -EINVAL, as fwait_hlatch_trylock.  -EBUSY also
 * while W is set on a shared latch (a writer waits: readers queue). */
int fwait_hlatch_trylock_shared(const struct fwait_hlatch_layout *l, fwait_atomic_u64 *word);
/* Release exclusive into `state` instead of free: 0, marked, or one of
 * the caller's own values (e.g. "evicted": waiters then wake and get
 * -EAGAIN); bumps the version, as fwait_hlatch_unlock.  -EPERM (not held
 * exclusive), -EINVAL (also for a shared count or exclusive). */
int fwait_hlatch_unlock_to(struct fwait_table *t, const struct fwait_hlatch_layout *l,
			   fwait_atomic_u64 *word, unsigned state);

/* The inline paths' atomics, in C and in C++ (the word is the same object,
 * see "The word type"), and their fence: the exclusive take's release
 * fence and validate's acquire fence (the Ordering paragraph above).
 * GCC refuses thread fences under -fsanitize=thread; there a compiler
 * barrier stands in (ThreadSanitizer takes its order from the atomics). */
#ifdef __cplusplus
#define FWAIT_HL_UNSIGNED_(x) static_cast<unsigned>(x)
#define FWAIT_HL_LOAD_(p, mo) ((p)->load(std::memory_order_##mo))
#define FWAIT_HL_STORE_(p, d, mo) ((p)->store((d), std::memory_order_##mo))
#define FWAIT_HL_COMPILER_BARRIER_() std::atomic_signal_fence(std::memory_order_seq_cst)
#define FWAIT_HL_CAS_(p, e, d, mo) \
	((p)->compare_exchange_weak((e), (d), std::memory_order_##mo, std::memory_order_relaxed))
#ifdef __SANITIZE_THREAD__
#define FWAIT_HL_FENCE_(mo) std::atomic_signal_fence(std::memory_order_acq_rel)
#else
#define FWAIT_HL_FENCE_(mo) std::atomic_thread_fence(std::memory_order_##mo)
#endif
#else
#define FWAIT_HL_UNSIGNED_(x) ((unsigned)(x))
#define FWAIT_HL_LOAD_(p, mo) atomic_load_explicit((p), memory_order_##mo)
#define FWAIT_HL_STORE_(p, d, mo) atomic_store_explicit((p), (d), memory_order_##mo)
#define FWAIT_HL_COMPILER_BARRIER_() atomic_signal_fence(memory_order_seq_cst)
#define FWAIT_HL_CAS_(p, e, d, mo) \
	atomic_compare_exchange_weak_explicit((p), &(e), (d), memory_order_##mo, memory_order_relaxed)
#ifdef __SANITIZE_THREAD__
#define FWAIT_HL_FENCE_(mo) atomic_signal_fence(memory_order_acq_rel)
#else
#define FWAIT_HL_FENCE_(mo) atomic_thread_fence(memory_order_##mo)
#endif
#endif

/* The layout's fields and rules, one home (hlatch.c decodes with them). */
static inline uint64_t fwait_hl_smax_(const struct fwait_hlatch_layout *l)
{
	return (UINT64_C(1) << l->state_bits) - 1;
}
static inline uint64_t fwait_hl_vmask_(const struct fwait_hlatch_layout *l)
{
	return ((UINT64_C(1) << l->version_bits) - 1) << l->version_shift;
}
static inline uint64_t fwait_hl_wmask_(const struct fwait_hlatch_layout *l)
{
	return l->waiters_bit >= 0 ? UINT64_C(1) << l->waiters_bit : 0;
}
/* fwait_hlatch_layout_check's rules, as a predicate. */
static inline bool fwait_hl_valid_(const struct fwait_hlatch_layout *l)
{
	if (l == NULL || l->state_bits < 2 || l->state_bits > 16 ||
	    l->state_shift + l->state_bits > 64 || l->version_bits < 1 ||
	    l->version_bits > 62 || l->version_shift + l->version_bits > 64 ||
	    l->waiters_bit < -1 || l->waiters_bit > 63 || (l->flags & ~FWAIT_HLATCH_STORE_RELEASE))
		return false;
	uint64_t top = fwait_hl_smax_(l), smask = top << l->state_shift;
	return l->exclusive != 0 && l->exclusive <= top && l->exclusive > l->shared_max &&
	       (l->marked == 0 || (l->marked <= top && l->marked != l->exclusive &&
				   l->marked > l->shared_max)) &&
	       !(smask & fwait_hl_vmask_(l)) && !(fwait_hl_wmask_(l) & (smask | fwait_hl_vmask_(l)));
}
static inline uint64_t fwait_hl_state_(const struct fwait_hlatch_layout *l, uint64_t v)
{
	return (v >> l->state_shift) & fwait_hl_smax_(l);
}
static inline uint64_t fwait_hl_with_(const struct fwait_hlatch_layout *l, uint64_t v, uint64_t s)
{
	return (v & ~(fwait_hl_smax_(l) << l->state_shift)) | (s << l->state_shift);
}
static inline bool fwait_hl_free_(const struct fwait_hlatch_layout *l, uint64_t s)
{
	return s == 0 || (l->marked != 0 && s == l->marked);
}
static inline bool fwait_hl_deadline_ok_(const struct timespec *d)
{
	return d == NULL || (d->tv_sec >= 0 && d->tv_nsec >= 0 && d->tv_nsec < 1000000000);
}

/*
 * The uncontended paths, each in two parts: fwait_hl_*_ (internal) takes
 * a table and word that are not NULL and a layout that fwait_hl_valid_
 * accepted, and the public call checks those first.  fwait.hpp's latch
 * checks once, when it is made, and calls the parts directly.
 */
static inline int fwait_hl_lock_(struct fwait_table *t, const struct fwait_hlatch_layout *l,
				 fwait_atomic_u64 *word, const struct timespec *deadline)
{
	if (fwait_hl_deadline_ok_(deadline)) {
		uint64_t v = FWAIT_HL_LOAD_(word, relaxed);
		if (fwait_hl_free_(l, fwait_hl_state_(l, v)) &&
		    FWAIT_HL_CAS_(word, v, fwait_hl_with_(l, v, l->exclusive), acquire)) {
			FWAIT_HL_FENCE_(release);
			return 0;
		}
	}
	return fwait_hlatch_lock_slow(t, l, word, deadline);
}
/* waiters: fwait_hlatch_waiters(t, word) (NULL: no membarrier, or not
 * needed).  Under FWAIT_HLATCH_STORE_RELEASE, while nobody waits in the
 * word's bucket, an exclusive release is a plain store, then a second look
 * at the count (fwait_hlatch_unlocked when it is not 0); otherwise one
 * release CAS that keeps W exact, as a shared release (hlatch.c). */
static inline int fwait_hl_unlock_(struct fwait_table *t, const struct fwait_hlatch_layout *l,
				   fwait_atomic_u64 *word, const fwait_atomic_u32 *waiters)
{
	uint64_t v = FWAIT_HL_LOAD_(word, relaxed), vm = fwait_hl_vmask_(l);
	uint64_t nv = (fwait_hl_with_(l, v, 0) & ~vm) |
		      ((v + (UINT64_C(1) << l->version_shift)) & vm);
	if (fwait_hl_state_(l, v) == l->exclusive && !(v & fwait_hl_wmask_(l))) {
		if ((l->flags & FWAIT_HLATCH_STORE_RELEASE) && waiters != NULL &&
		    FWAIT_HL_LOAD_(waiters, relaxed) == 0) {
			FWAIT_HL_STORE_(word, nv, release);
			FWAIT_HL_COMPILER_BARRIER_();
			if (FWAIT_HL_LOAD_(waiters, relaxed) == 0)
				return 0;
			return fwait_hlatch_unlocked(t, l, word, 0);
		}
		/* Without W, a CAS release must wake: the slow path. */
		if (l->waiters_bit >= 0 && FWAIT_HL_CAS_(word, v, nv, release))
			return 0;
	}
	return fwait_hlatch_unlock_slow(t, l, word);
}
static inline int fwait_hl_lock_shared_(struct fwait_table *t,
					const struct fwait_hlatch_layout *l,
					fwait_atomic_u64 *word, const struct timespec *deadline)
{
	if (l->shared_max != 0 && fwait_hl_deadline_ok_(deadline)) {
		uint64_t v = FWAIT_HL_LOAD_(word, relaxed), s = fwait_hl_state_(l, v);
		if ((fwait_hl_free_(l, s) ||
		     (s < l->shared_max && !(v & fwait_hl_wmask_(l)))) &&
		    FWAIT_HL_CAS_(word, v, fwait_hl_with_(l, v, fwait_hl_free_(l, s) ? 1 : s + 1),
				  acquire))
			return 0;
	}
	return fwait_hlatch_lock_shared_slow(t, l, word, deadline);
}
static inline int fwait_hl_unlock_shared_(struct fwait_table *t,
					  const struct fwait_hlatch_layout *l,
					  fwait_atomic_u64 *word)
{
	if (l->waiters_bit >= 0) {
		uint64_t v = FWAIT_HL_LOAD_(word, relaxed), s = fwait_hl_state_(l, v);
		/* Not the last holder, or the last with W clear. */
		if (s >= 1 && s <= l->shared_max && (s > 1 || !(v & fwait_hl_wmask_(l))) &&
		    FWAIT_HL_CAS_(word, v, fwait_hl_with_(l, v, s - 1), release))
			return 0;
	}
	return fwait_hlatch_unlock_shared_slow(t, l, word);
}
static inline int fwait_hl_read_begin_(struct fwait_table *t,
				       const struct fwait_hlatch_layout *l,
				       const fwait_atomic_u64 *word,
				       const struct timespec *deadline, uint64_t *snapshot)
{
	if (snapshot != NULL && fwait_hl_deadline_ok_(deadline)) {
		uint64_t v = FWAIT_HL_LOAD_(word, acquire), s = fwait_hl_state_(l, v);
		if (fwait_hl_free_(l, s) || (s >= 1 && s <= l->shared_max)) {
			*snapshot = v;
			return 0;
		}
	}
	return fwait_hlatch_read_begin_slow(t, l, word, deadline, snapshot);
}
static inline bool fwait_hl_validate_(const struct fwait_hlatch_layout *l,
				      const fwait_atomic_u64 *word, uint64_t snapshot)
{
	FWAIT_HL_FENCE_(acquire);
	uint64_t v = FWAIT_HL_LOAD_(word, relaxed);
	return ((v ^ snapshot) & fwait_hl_vmask_(l)) == 0 &&
	       fwait_hl_state_(l, v) != l->exclusive && fwait_hl_state_(l, snapshot) != l->exclusive;
}

/* Inline.  Take exclusive: 0; -EAGAIN at once (nothing held) if the state
 * is the caller's own (not free, shared or exclusive); -ETIMEDOUT; -EINVAL.
 * 0 is an acquire of the release that freed or handed it, followed by a
 * release fence (Ordering). */
static inline int fwait_hlatch_lock(struct fwait_table *t, const struct fwait_hlatch_layout *l,
				    fwait_atomic_u64 *word, const struct timespec *deadline)
{
	return t != NULL && word != NULL && fwait_hl_valid_(l) ?
	       fwait_hl_lock_(t, l, word, deadline) : fwait_hlatch_lock_slow(t, l, word, deadline);
}

/* Inline.  Release exclusive, bump the version (wrapping within its
 * field), and wake or hand over: 0, -EPERM (the state is not exclusive;
 * nothing changed), -EINVAL.  A release: what the holder did happens
 * before the next take's return and before a validate that sees the new
 * version.  With W clear and nobody waiting in the bucket: a release
 * store, then fwait_hlatch_unlocked if someone came meanwhile (the
 * compiler barrier between keeps its read after the store; the hardware's
 * order is the waiters' membarrier, hlatch.c); else one release CAS. */
static inline int fwait_hlatch_unlock(struct fwait_table *t, const struct fwait_hlatch_layout *l,
				      fwait_atomic_u64 *word)
{
	return t != NULL && word != NULL && fwait_hl_valid_(l) ?
	       fwait_hl_unlock_(t, l, word, (l->flags & FWAIT_HLATCH_STORE_RELEASE) ?
					    fwait_hlatch_waiters(t, word) : NULL) :
	       fwait_hlatch_unlock_slow(t, l, word);
}

/* Inline.  Take shared: 0; -EAGAIN the caller's state; -ETIMEDOUT;
 * -EINVAL (also with no shared mode).  Waits while the latch is
 * exclusive, while shared_max holders hold it, or while W is set on it
 * (a writer waits).  0 is an acquire, as fwait_hlatch_lock's. */
static inline int fwait_hlatch_lock_shared(struct fwait_table *t,
					   const struct fwait_hlatch_layout *l,
					   fwait_atomic_u64 *word, const struct timespec *deadline)
{
	return t != NULL && word != NULL && fwait_hl_valid_(l) ?
	       fwait_hl_lock_shared_(t, l, word, deadline) :
	       fwait_hlatch_lock_shared_slow(t, l, word, deadline);
}

/* Inline.  Release shared (the version is kept): 0, -EPERM (not held
 * shared), -EINVAL.  A release, as fwait_hlatch_unlock's. */
static inline int fwait_hlatch_unlock_shared(struct fwait_table *t,
					     const struct fwait_hlatch_layout *l,
					     fwait_atomic_u64 *word)
{
	return t != NULL && word != NULL && fwait_hl_valid_(l) ?
	       fwait_hl_unlock_shared_(t, l, word) : fwait_hlatch_unlock_shared_slow(t, l, word);
}

/* Inline.  Start an optimistic read: waits while the latch is exclusive,
 * then stores the word in *snapshot and returns 0; -EAGAIN (with
 * *snapshot set) for the caller's own state; -ETIMEDOUT; -EINVAL.  Then
 * read the data (relaxed atomic loads suffice) and call
 * fwait_hlatch_validate.  The load is an acquire: the data the last
 * exclusive holder wrote is seen. */
static inline int fwait_hlatch_read_begin(struct fwait_table *t,
					  const struct fwait_hlatch_layout *l,
					  const fwait_atomic_u64 *word,
					  const struct timespec *deadline, uint64_t *snapshot)
{
	return t != NULL && word != NULL && fwait_hl_valid_(l) ?
	       fwait_hl_read_begin_(t, l, word, deadline, snapshot) :
	       fwait_hlatch_read_begin_slow(t, l, word, deadline, snapshot);
}

/* Inline predicate: no exclusive holder ran since read_begin's snapshot
 * (the version is unchanged and the latch is not exclusive): what was
 * read in between is consistent.  Starts with an acquire fence (see
 * Ordering).  False for a bad layout or word. */
static inline bool fwait_hlatch_validate(const struct fwait_hlatch_layout *l,
					 const fwait_atomic_u64 *word, uint64_t snapshot)
{
	return word != NULL && fwait_hl_valid_(l) && fwait_hl_validate_(l, word, snapshot);
}

/* Inline field readers for a word or a snapshot (0 for a bad layout). */
static inline unsigned fwait_hlatch_state(const struct fwait_hlatch_layout *l, uint64_t v)
{
	return fwait_hl_valid_(l) ? FWAIT_HL_UNSIGNED_(fwait_hl_state_(l, v)) : 0u;
}
static inline uint64_t fwait_hlatch_version(const struct fwait_hlatch_layout *l, uint64_t v)
{
	return fwait_hl_valid_(l) ? (v & fwait_hl_vmask_(l)) >> l->version_shift : 0;
}

/* ---- Statistics and introspection ---------------------------------------- */

/* Relaxed atomics: they order nothing, and a snapshot is not atomic across
 * buckets (nor is a reset, against concurrent updates). */
void fwait_stats_get(const struct fwait_table *t, struct fwait_stats *out);
void fwait_stats_reset(struct fwait_table *t);
/* Calls fn for each waiter parked now, one bucket at a time, with that
 * bucket's lock held (fn must not call into the table): each bucket is
 * exact while fn runs, the table as a whole is no snapshot.  Stops early and
 * returns fn's value if it returns non-zero; otherwise returns 0. */
int fwait_waiters_walk(struct fwait_table *t,
		       int (*fn)(const struct fwait_waiter_info *w, void *arg),
		       void *arg);

/* Predicate: deadline is NULL or well formed (tv_sec >= 0 and
 * 0 <= tv_nsec < 1e9); calls taking a deadline return -EINVAL otherwise. */
bool fwait_deadline_valid(const struct timespec *deadline);

/* Helper: absolute CLOCK_MONOTONIC deadline ns nanoseconds from now,
 * saturated at 2^64 - 1 ns (tv_sec 18446744073): a far-future deadline
 * never wraps into the past.  (Calls taking a deadline accept any larger
 * well-formed tv_sec too, up to the time_t maximum, as "never".) */
struct timespec fwait_deadline_after_ns(uint64_t ns);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif /* FWAIT_FWAIT_H */
