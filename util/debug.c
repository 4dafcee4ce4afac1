/* SPDX-License-Identifier: MIT */
/*
 * util/debug.c - the witness of the debug-checks build: lock ranks by
 * address, each thread's held locks, the failure report.
 *
 * Design note
 * -----------
 * Layer 0 (util): calls only libc and pthreads.  Compiled into libfwait,
 * and only with -Ddebug_checks=true (util/meson.build); util/debug.h says
 * what is checked and why a failure may write to stderr here.
 *
 * The registry maps a lock's address to its rank and class name: slots of
 * (first, last, stride, rank, name), one per lock or per array of locks of
 * one class (a table's buckets, a pool's partitions).  reg_lock (a plain
 * mutex, not itself witnessed) serialises registrations; lookups, made at
 * every lock acquisition, take no lock: each slot is a seqlock (seq odd
 * while it is being written; a reader retries a slot whose seq changed),
 * and the slots in use are those below `used` (release on registration,
 * acquire on lookup).  A lock being looked up is live, so its own slot is
 * stable; only other slots can be rewritten under a reader, and those it
 * skips.  Slots are few (a handful per pool or table), so the lookup is a
 * short scan.
 *
 * The registry is process-wide mutable state, the one exception to the
 * house rule against it: a witness must see every pool's and table's locks
 * to check ranks across them, and it exists only in the debug-checks build.
 *
 * The held stack is _Thread_local: the locks this thread holds, in the
 * order taken, with their rank and where each was taken (for the report).
 * Nothing else is shared, so the checks themselves add no contention.
 */
#define UTIL_DEBUG_IMPL 1 /* no hooks here: the registry's own mutex is not witnessed */
#include "util/debug.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define SLOTS 8192u
#define DEPTH 16u /* the design holds two at most (files_lock, fsync_lock) */

struct slot {
	_Atomic unsigned seq;
	_Atomic uintptr_t first, last, stride;
	_Atomic unsigned rank;
	_Atomic(const char *) name;
};

struct held {
	const void *lock;
	const char *name;
	const char *file;
	int line;
	unsigned rank;
	bool shared;
};

static struct slot slots[SLOTS];
static _Atomic unsigned used;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;

static _Thread_local struct held held[DEPTH];
static _Thread_local unsigned nheld;

uintptr_t fwait_debug_self(void)
{
	static _Thread_local char me;
	return (uintptr_t)&me;
}

static void report_held(void)
{
	for (unsigned i = 0; i < nheld; i++)
		fprintf(stderr, "  holding %s %p (rank %u%s), taken at %s:%d\n", held[i].name,
			held[i].lock, held[i].rank, held[i].shared ? ", shared" : "",
			held[i].file, held[i].line);
}

_Noreturn void fwait_debug_fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "debug check failed at %s:%d: %s\n", file, line, what);
	report_held();
	fflush(stderr);
	abort();
}

/* Writer side of a slot's seqlock; caller holds reg_lock. */
static void slot_write(struct slot *s, uintptr_t first, uintptr_t last, uintptr_t stride,
		       unsigned rank, const char *name)
{
	unsigned q = atomic_load_explicit(&s->seq, memory_order_relaxed);
	atomic_store_explicit(&s->seq, q + 1, memory_order_relaxed);
	/* Release fence: a reader that sees any field below also sees seq odd
	 * (or its later value) at its re-check. */
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&s->first, first, memory_order_relaxed);
	atomic_store_explicit(&s->last, last, memory_order_relaxed);
	atomic_store_explicit(&s->stride, stride, memory_order_relaxed);
	atomic_store_explicit(&s->rank, rank, memory_order_relaxed);
	atomic_store_explicit(&s->name, name, memory_order_relaxed);
	/* Release: a reader that reads this seq reads the fields above. */
	atomic_store_explicit(&s->seq, q + 2, memory_order_release);
}

void fwait_witness_rank(const void *first, size_t n, size_t stride, enum util_lock_rank rank,
			const char *name)
{
	uintptr_t a = (uintptr_t)first;
	uintptr_t st = n > 1 ? stride : 1;
	uintptr_t last = a + (n > 1 ? (n - 1) * stride : 0);
	struct slot *free_slot = NULL;

	pthread_mutex_lock(&reg_lock);
	unsigned u = atomic_load_explicit(&used, memory_order_relaxed);
	for (unsigned i = 0; i < u; i++) {
		uintptr_t f = atomic_load_explicit(&slots[i].first, memory_order_relaxed);
		if (f == a) {
			free_slot = &slots[i];
			break;
		}
		if (f == 0 && !free_slot)
			free_slot = &slots[i];
	}
	if (!free_slot) {
		if (u == SLOTS) {
			pthread_mutex_unlock(&reg_lock);
			fwait_debug_fail(__FILE__, __LINE__, "witness: more live lock registrations than SLOTS");
		}
		free_slot = &slots[u];
		slot_write(free_slot, a, last, st, rank, name);
		/* Release: a lookup that reads the new count reads the slot. */
		atomic_store_explicit(&used, u + 1, memory_order_release);
	} else {
		slot_write(free_slot, a, last, st, rank, name);
	}
	pthread_mutex_unlock(&reg_lock);
}

/* The rank and name of lock; false if it has none. */
static bool lookup(const void *lock, unsigned *rank, const char **name)
{
	uintptr_t a = (uintptr_t)lock;
	unsigned u = atomic_load_explicit(&used, memory_order_acquire);

	for (unsigned i = 0; i < u; i++) {
		struct slot *s = &slots[i];
		unsigned q = atomic_load_explicit(&s->seq, memory_order_acquire);
		if (q & 1)
			continue; /* being written: not the live lock's own slot */
		uintptr_t f = atomic_load_explicit(&s->first, memory_order_relaxed);
		uintptr_t l = atomic_load_explicit(&s->last, memory_order_relaxed);
		uintptr_t st = atomic_load_explicit(&s->stride, memory_order_relaxed);
		unsigned r = atomic_load_explicit(&s->rank, memory_order_relaxed);
		const char *nm = atomic_load_explicit(&s->name, memory_order_relaxed);
		/* Acquire fence, then seq again: unchanged means the fields
		 * read above are one registration's, not a mix. */
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&s->seq, memory_order_relaxed) != q)
			continue;
		if (f != 0 && a >= f && a <= l && (a - f) % st == 0) {
			*rank = r;
			*name = nm;
			return true;
		}
	}
	return false;
}

void fwait_witness_forget(const void *first)
{
	if (fwait_witness_held(first, false))
		fwait_debug_fail(__FILE__, __LINE__, "witness: destroying a lock this thread holds");
	pthread_mutex_lock(&reg_lock);
	unsigned u = atomic_load_explicit(&used, memory_order_relaxed);
	for (unsigned i = 0; i < u; i++) {
		if (atomic_load_explicit(&slots[i].first, memory_order_relaxed) == (uintptr_t)first) {
			slot_write(&slots[i], 0, 0, 1, 0, NULL);
			break;
		}
	}
	pthread_mutex_unlock(&reg_lock);
}

void fwait_witness_lock(const void *lock, bool shared, const char *file, int line)
{
	unsigned rank;
	const char *name;
	char what[256];

	if (!lookup(lock, &rank, &name)) {
		snprintf(what, sizeof(what), "witness: lock %p has no rank (register it where it "
			 "is initialised: debug_lock_rank)", lock);
		fwait_debug_fail(file, line, what);
	}
	for (unsigned i = 0; i < nheld; i++) {
		if (held[i].lock == lock) {
			snprintf(what, sizeof(what), "witness: taking %s %p, which this thread "
				 "already holds (self-deadlock)", name, lock);
			fwait_debug_fail(file, line, what);
		}
		if (held[i].rank >= rank) {
			snprintf(what, sizeof(what), "witness: lock order: taking %s (rank %u) "
				 "while holding %s (rank %u)", name, rank, held[i].name,
				 held[i].rank);
			fwait_debug_fail(file, line, what);
		}
	}
	if (nheld == DEPTH)
		fwait_debug_fail(file, line, "witness: more locks held than DEPTH");
	held[nheld++] = (struct held){ lock, name, file, line, rank, shared };
}

void fwait_witness_unlock(const void *lock, const char *file, int line)
{
	for (unsigned i = nheld; i-- > 0;) {
		if (held[i].lock == lock) {
			for (unsigned j = i; j + 1 < nheld; j++)
				held[j] = held[j + 1];
			nheld--;
			return;
		}
	}
	fwait_debug_fail(file, line, "witness: releasing a lock this thread does not hold");
}

bool fwait_witness_held(const void *lock, bool excl)
{
	for (unsigned i = 0; i < nheld; i++)
		if (held[i].lock == lock)
			return !(excl && held[i].shared);
	return false;
}

bool fwait_witness_holds_rank(enum util_lock_rank r)
{
	for (unsigned i = 0; i < nheld; i++)
		if (held[i].rank >= (unsigned)r)
			return true;
	return false;
}
