/* SPDX-License-Identifier: MIT */
/*
 * util/debug.h - the debug-checks build (-Ddebug_checks=true): asserts,
 * lock ranks checked as jemalloc's witness does, "does this thread hold
 * it".
 *
 * Design note
 * -----------
 * Layer 0 (util): calls nothing of the project; its one source, debug.c,
 * is compiled into libfwait in the debug-checks build only.
 * Off (the default): every macro here expands to ((void)0) and evaluates
 * nothing, and no function of debug.c exists, so the libraries' objects
 * are those of a build without the checks (docs/reliability.md, "The
 * debug-checks build", shows how that was compared).  On: meson.build
 * defines FWAIT_DEBUG_CHECKS=1 for the whole project (tests can say which
 * build they run in, as with UTIL_CHAOS).
 *
 * A failed check writes one line to stderr (file:line, what failed, the
 * locks this thread holds) and calls abort(), as PostgreSQL's Assert does.
 * The libraries otherwise print nothing (bufpool reports through the
 * embedder's bp_config.log; fwait has no message path at all): writing to
 * stderr is done in the debug-checks build only, a build for tests and
 * development, never shipped, and only on the way to abort().  bufpool's
 * API-misuse checks first send the message to the pool's log callback too
 * (bufpool/internal.h, bp_debug_check).
 *
 * Lock ranks (enum util_lock_rank): every lock class of fwait and bufpool
 * has a rank, from bufpool/internal.h's "Lock ranks" and fwait/internal.h's
 * "Locks".  A thread may take a lock only while every lock it holds ranks
 * strictly lower: locks of one rank never nest (the design allows no two
 * bucket locks, no two partition locks, no leaf under a leaf).  The rank
 * of a lock is registered where the lock is initialised (debug_lock_rank,
 * debug_lock_rank_range for an array of them) and forgotten when it is
 * destroyed; each thread keeps a stack of the locks it holds
 * (_Thread_local, debug.c).
 *
 * The hook: in the libraries' own sources (built with UTIL_WITNESS_HOOK,
 * fwait/ and bufpool/meson.build, debug-checks build only) the pthread
 * lock calls below are macros that report to the witness first, so no
 * call site names the witness and a lock call added later is checked too.
 * They evaluate their argument twice: pass a plain address (&b->lock).  A
 * library lock with no registered rank fails the check at its first
 * acquisition: a new lock class must be given its rank.  trylock is not
 * hooked (the libraries use none): a lock taken that way would be
 * unknown to the witness and fail at its unlock.
 */
#ifndef UTIL_DEBUG_H
#define UTIL_DEBUG_H

/* The lock classes and their ranks.  Equal ranks never nest; a lower rank
 * is taken first.  Where each class is taken: docs/reliability.md ("The
 * debug-checks build"), and the init site that registers it. */
enum util_lock_rank {
	/* bufpool: pool.files_lock (file.c: open/close; io.c: the fsync walk
	 * takes fsync_lock under it). */
	UTIL_RANK_BP_FILES = 1,
	/* bufpool: bp_file.fsync_lock (io.c, bp_io_fsync_file); under it the
	 * fault check (fault_state.lock). */
	UTIL_RANK_BP_FSYNC = 2,
	/* The leaves: taken holding only lower ranks, and nothing under them. */
	UTIL_RANK_LEAF = 3,
	UTIL_RANK_BP_PARTITION = UTIL_RANK_LEAF, /* rwlock; pagetable.c, evict.c */
	UTIL_RANK_BP_IO_ENGINE = UTIL_RANK_LEAF, /* io.c: request queue */
	UTIL_RANK_BP_URING = UTIL_RANK_LEAF,     /* uring.c: the ring */
	UTIL_RANK_BP_FAULT = UTIL_RANK_LEAF,     /* fault.c: the rules */
	UTIL_RANK_BP_WRITER = UTIL_RANK_LEAF,    /* writeback.c: bgwriter stop */
	UTIL_RANK_BP_STATSPUB = UTIL_RANK_LEAF,  /* statspub.c: publisher stop */
	/* fwait's: taken only inside fwait calls, so never under a pool
	 * mutex; a bucket lock and a parker's mtx never nest (the waker posts
	 * after dropping the bucket lock). */
	UTIL_RANK_FW_BUCKET = UTIL_RANK_LEAF,    /* keyed.c, bitops_word.h, park.c, stats.c */
	UTIL_RANK_FW_PARKER = UTIL_RANK_LEAF     /* park.c, the pthread parker only */
};

#if defined(FWAIT_DEBUG_CHECKS) && FWAIT_DEBUG_CHECKS

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exported by libfwait (debug-checks build only) so that libbufpool's
 * checks share one witness, and one per-thread stack, with fwait's: a
 * bucket lock taken under a partition lock is then seen. */
#define UTIL_DEBUG_API __attribute__((visibility("default")))

UTIL_DEBUG_API _Noreturn void fwait_debug_fail(const char *file, int line, const char *what);
/* An identity of the calling thread, never 0 (the address of one of its
 * thread-locals: unique among live threads). */
UTIL_DEBUG_API uintptr_t fwait_debug_self(void);
/* Register n locks of one class, stride bytes apart from first (n 1:
 * stride ignored).  Registering the same first again replaces it. */
UTIL_DEBUG_API void fwait_witness_rank(const void *first, size_t n, size_t stride,
				       enum util_lock_rank rank, const char *name);
/* The lock at first is destroyed: forget its registration (the whole
 * range it began), if any.  Fails the check if this thread holds it. */
UTIL_DEBUG_API void fwait_witness_forget(const void *first);
/* About to take lock (shared: a read lock): fails the check if the thread
 * holds it already or holds a lock of the same or a higher rank; then
 * records it as held.  Called before the thread can block on it. */
UTIL_DEBUG_API void fwait_witness_lock(const void *lock, bool shared, const char *file, int line);
UTIL_DEBUG_API void fwait_witness_unlock(const void *lock, const char *file, int line);
/* Does this thread hold lock (excl: as a writer or a mutex)? */
UTIL_DEBUG_API bool fwait_witness_held(const void *lock, bool excl);
/* Does this thread hold any lock of rank r or higher? */
UTIL_DEBUG_API bool fwait_witness_holds_rank(enum util_lock_rank r);

#define debug_assert_msg(e, what) \
	((e) ? (void)0 : fwait_debug_fail(__FILE__, __LINE__, (what)))
#define debug_assert(e) debug_assert_msg((e), "assertion failed: " #e)
#define debug_assert_held(lock) \
	debug_assert_msg(fwait_witness_held((lock), false), "lock not held: " #lock)
#define debug_assert_held_excl(lock) \
	debug_assert_msg(fwait_witness_held((lock), true), "lock not held exclusive: " #lock)
#define debug_assert_not_held(lock) \
	debug_assert_msg(!fwait_witness_held((lock), false), "lock held: " #lock)
/* This thread holds no lock of rank r or above. */
#define debug_assert_below_rank(r) \
	debug_assert_msg(!fwait_witness_holds_rank(r), "a lock of rank >= " #r " is held")
#define debug_lock_rank(lock, rank, name) fwait_witness_rank((lock), 1, 0, (rank), (name))
#define debug_lock_rank_range(first, n, stride, rank, name) \
	fwait_witness_rank((first), (n), (stride), (rank), (name))

#if defined(UTIL_WITNESS_HOOK) && !defined(UTIL_DEBUG_IMPL)
#include <pthread.h>
#define pthread_mutex_lock(m) \
	(fwait_witness_lock((m), false, __FILE__, __LINE__), pthread_mutex_lock(m))
#define pthread_mutex_unlock(m) \
	(fwait_witness_unlock((m), __FILE__, __LINE__), pthread_mutex_unlock(m))
#define pthread_rwlock_rdlock(l) \
	(fwait_witness_lock((l), true, __FILE__, __LINE__), pthread_rwlock_rdlock(l))
#define pthread_rwlock_wrlock(l) \
	(fwait_witness_lock((l), false, __FILE__, __LINE__), pthread_rwlock_wrlock(l))
#define pthread_rwlock_unlock(l) \
	(fwait_witness_unlock((l), __FILE__, __LINE__), pthread_rwlock_unlock(l))
#define pthread_mutex_destroy(m) (fwait_witness_forget(m), pthread_mutex_destroy(m))
#define pthread_rwlock_destroy(l) (fwait_witness_forget(l), pthread_rwlock_destroy(l))
#endif

#else /* no debug checks: nothing, not even the arguments' evaluation */

#define debug_assert_msg(e, what) ((void)0)
#define debug_assert(e) ((void)0)
#define debug_assert_held(lock) ((void)0)
#define debug_assert_held_excl(lock) ((void)0)
#define debug_assert_not_held(lock) ((void)0)
#define debug_assert_below_rank(r) ((void)0)
#define debug_lock_rank(lock, rank, name) ((void)0)
#define debug_lock_rank_range(first, n, stride, rank, name) ((void)0)

#endif

#endif
