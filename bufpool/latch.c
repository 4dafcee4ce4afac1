/* SPDX-License-Identifier: MIT */
/*
 * latch.c - phase-fair shared/exclusive content latches on fwait keys.
 *
 * Layer 3 (latch): calls only frame.c and account.c.
 *
 * Design note
 * -----------
 * One 64-bit atomic word per frame (frame.latch); three counts of the same
 * width C = L_COUNT_BITS (20; a test build narrows it, bufpool/meson.build):
 *   bits  0..19  shared holders                       (bits 0..C-1)
 *   bit  20      X: held exclusive (or handed to a queued exclusive waiter)
 *   bit  21      HANDOFF: X was handed over and not yet taken by the waiter
 *   bit  22      EPOCH: flips each time the queued readers are admitted
 *   bits 23..42  queued exclusive waiters (XW)        (bits C+3..2C+2)
 *   bits 43..62  queued shared waiters (SW)           (bits 2C+3..3C+2)
 *   bit  63      unused
 * No count ever carries into the next field: each stops at its maximum
 * 2^C - 1 (BP_LATCH_COUNT_MAX in bufpool.h).  A latch call that would take
 * the shared count, XW or SW past it is refused with -EAGAIN and changes
 * nothing (try_shared and the ready callbacks check before their CAS).
 * Admission adds SW into the shared field while X is held, when that field
 * is 0, and SW is no wider than it (asserted below), so it cannot carry
 * either.
 * Fast paths are one CAS and never touch the wait table: shared when no X
 * is held or queued, exclusive when the word is 0.  An idle latch is
 * always 0: a release that leaves no holder and no waiter also clears
 * EPOCH, whose value only a queued (or admitted, still counted) reader
 * reads, so nobody can be looking at it then.  Otherwise the
 * thread parks with fwait_wait on one of two keys of the frame, exclusive
 * waiters on &latch (FWAIT_EXCLUSIVE) and shared waiters on &latch + 1.
 * The ready callback runs under the bucket lock: its first call either
 * takes the latch or counts the thread as queued (one CAS), so a releaser
 * that sees the count and then calls fwait_wake always finds it queued.
 *
 * Hand-over (phase-fair, neither side starves):
 *   - the last shared holder leaving with XW > 0 sets X|HANDOFF, XW-- and
 *     wakes one exclusive waiter (the oldest: FIFO under FWAIT_WAKE_ONE);
 *   - an exclusive holder leaving with SW > 0 admits every queued reader at
 *     once (shared += SW, SW = 0, EPOCH flips) and wakes them all; else with
 *     XW > 0 it hands X to the next exclusive waiter;
 *   - new readers queue while an exclusive waiter is queued, so a stream of
 *     readers cannot starve a writer, and a writer's release admits the
 *     readers queued behind it before the next writer.
 * A queued exclusive waiter takes the latch by clearing HANDOFF; a queued
 * reader is admitted once EPOCH differs from the value it queued under.
 * Latches have no timeout, so the counts stay exact.
 *
 * Spin, then park (spin_then_try): a latch call that misses its fast path
 * watches the word for ~2 us first, while nobody is queued.  Fairness is
 * otherwise the protocol's own: the hand-over above already passes the
 * latch to queued waiters (HANDOFF, admitted readers), and the wait table's
 * head re-queue (fwait's eventual fairness) does not come into play, since
 * a woken latch waiter never loses: its ready() finds what the releaser
 * handed it.  (Releasing instead of handing over, to avoid the convoy,
 * would change the phase-fair protocol and its tests: left for later.)
 *
 * An exclusive latch also waits for BP_WRITEBACK to clear once held: writers
 * set WRITEBACK only under a shared latch, so no new write-back can start
 * while it is held and the page is stable while written.
 *
 * The version (frame.version; the third mode, as LeanStore's hybrid latch
 * and vmcache's optimistic guard).  Optimistic readers (optread.c) take no
 * latch: they read the version, check X is clear, read the page, then
 * check X is still clear and the version unchanged.  So every change of a
 * page must either happen under X or raise the version first:
 *   - an exclusive holder's changes: every path that gains X (try_exclusive,
 *     and ready_exclusive's take of a free latch or of a hand-over) puts a
 *     release fence after its RMW and before the holder's first store
 *     (Boehm's seqlock writer; on ARM a later store may pass the CAS's own
 *     store, on x86 the fence is free); a hand-over keeps X set
 *     throughout.  unlock_exclusive raises the version with a relaxed
 *     store, then clears X with a release CAS;
 *   - the frame's reuse for another page (or a reread after a drop):
 *     evict.c's take calls bp_latch_version_bump (a release RMW, then a
 *     release fence) after the CAS that set LOCKED and before the tag or
 *     the memory change.  The two writers exclude each other: a holder of
 *     X holds a pin, and a take needs the pin count at zero.
 * optread.c's design note is the protocol's one argument in the C11 model:
 * which load each of these stores and fences pairs with, and why.
 * The version is 64 bits and only grows, so a reader cannot mistake a
 * changed page for its own (no wrap in any lifetime).
 */
#include <errno.h>

#include "bufpool/internal.h"
#include "util/clock.h"
#include "util/cpu.h"

#ifndef BP_LATCH_COUNT_BITS
#define BP_LATCH_COUNT_BITS 20
/* The limit bufpool.h documents is the one the default layout has. */
_Static_assert(((UINT64_C(1) << BP_LATCH_COUNT_BITS) - 1) == BP_LATCH_COUNT_MAX,
	       "BP_LATCH_COUNT_MAX is 2^BP_LATCH_COUNT_BITS - 1");
#endif
#define L_COUNT_BITS BP_LATCH_COUNT_BITS
_Static_assert(L_COUNT_BITS >= 1 && 3 * L_COUNT_BITS + 3 <= 64,
	       "three counts and X, HANDOFF, EPOCH fit in the 64-bit latch word");

#define L_COUNT_MAX ((UINT64_C(1) << L_COUNT_BITS) - 1)
#define L_SHARED_MASK L_COUNT_MAX
#define L_X (UINT64_C(1) << L_COUNT_BITS)
#define L_HANDOFF (L_X << 1)
#define L_EPOCH (L_X << 2)
#define L_XW_SHIFT (L_COUNT_BITS + 3)
#define L_XW_ONE (UINT64_C(1) << L_XW_SHIFT)
#define L_XW_MASK (L_COUNT_MAX << L_XW_SHIFT)
#define L_SW_SHIFT (L_XW_SHIFT + L_COUNT_BITS)
#define L_SW_ONE (UINT64_C(1) << L_SW_SHIFT)
#define L_SW_MASK (L_COUNT_MAX << L_SW_SHIFT)
_Static_assert((L_SW_MASK >> L_SW_SHIFT) <= L_SHARED_MASK,
	       "admitting every queued reader into an empty shared field cannot carry");

static inline const void *key_x(struct bp_frame *f) { return &f->latch; }
static inline const void *key_s(struct bp_frame *f) { return (const char *)&f->latch + 1; }

struct latch_wait {
	struct bp_frame *f;
	bool queued;
	int err;        /* -EAGAIN: refused, a count was at its maximum */
	uint64_t epoch;
};

/* X was just gained (taken from a free latch or from a hand-over):
 * Boehm's seqlock writer fence, before the holder's first store to the
 * page or to the version.  A CAS orders later stores after its load, not
 * after its store (ARMv8 without LSE atomics: a plain store may become
 * visible before the STLXR), so without it a reader could read a new byte
 * of the page and then X still clear.  It pairs with optread.c's acquire
 * fence in still_valid (a reader that read a store made after it then
 * sees X, or the unlatch) and with begin_on's acquire load of the version
 * (a reader that read the raised version then sees X taken); optread.c's
 * design note has the whole argument.  Nothing on x86. */
static inline void x_taken(void)
{
	util_fence_release();
}

/* Acquire on success pairs with the release in the unlatch that freed or
 * handed over the latch: the holder sees the previous holder's writes.
 * A refusal (w->err, returning true so fwait_wait returns) comes only from
 * the first call, before the thread is counted anywhere. */
static bool ready_shared(void *arg)
{
	struct latch_wait *w = arg;
	uint64_t v = atomic_load_explicit(&w->f->latch, memory_order_acquire);
	if (w->queued)
		return (v & L_EPOCH) != w->epoch;
	for (;;) {
		if (!(v & (L_X | L_XW_MASK))) {
			if ((v & L_SHARED_MASK) == L_COUNT_MAX) {
				w->err = -EAGAIN;
				return true;
			}
			if (atomic_compare_exchange_weak_explicit(&w->f->latch, &v, v + 1,
					memory_order_acquire, memory_order_acquire))
				return true;
		} else if ((v & L_SW_MASK) == L_SW_MASK) {
			w->err = -EAGAIN;
			return true;
		} else if (atomic_compare_exchange_weak_explicit(&w->f->latch, &v, v + L_SW_ONE,
				memory_order_acquire, memory_order_acquire)) {
			w->queued = true;
			w->epoch = v & L_EPOCH;
			return false;
		}
	}
}

static bool ready_exclusive(void *arg)
{
	struct latch_wait *w = arg;
	uint64_t v = atomic_load_explicit(&w->f->latch, memory_order_acquire);
	for (;;) {
		if (w->queued) {
			if (!(v & L_HANDOFF))
				return false;
			if (atomic_compare_exchange_weak_explicit(&w->f->latch, &v, v & ~L_HANDOFF,
					memory_order_acquire, memory_order_acquire)) {
				x_taken();
				return true;
			}
		} else if (!(v & (L_SHARED_MASK | L_X | L_XW_MASK))) {
			if (atomic_compare_exchange_weak_explicit(&w->f->latch, &v, v | L_X,
					memory_order_acquire, memory_order_acquire)) {
				x_taken();
				return true;
			}
		} else if ((v & L_XW_MASK) == L_XW_MASK) {
			w->err = -EAGAIN;
			return true;
		} else if (atomic_compare_exchange_weak_explicit(&w->f->latch, &v, v + L_XW_ONE,
				memory_order_acquire, memory_order_acquire)) {
			w->queued = true;
			return false;
		}
	}
}

/* 0 taken, -EBUSY would wait (X held or queued), -EAGAIN the shared count
 * is at its maximum. */
static int try_shared(struct bp_frame *f)
{
	uint64_t v = atomic_load_explicit(&f->latch, memory_order_relaxed);
	while (!(v & (L_X | L_XW_MASK))) {
		if ((v & L_SHARED_MASK) == L_COUNT_MAX)
			return -EAGAIN;
		/* Acquire on success pairs with the release in the unlatch that
		 * freed the latch: the holder sees the previous holder's writes. */
		if (atomic_compare_exchange_weak_explicit(&f->latch, &v, v + 1,
				memory_order_acquire, memory_order_relaxed))
			return 0;
	}
	return -EBUSY;
}

/* One CAS from 0: an idle latch word is 0, EPOCH included (the releases
 * that leave it idle clear it). */
static bool try_exclusive(struct bp_frame *f)
{
	uint64_t v = 0;
	/* Acquire on success pairs with the release in the unlatch that freed
	 * the latch: the holder sees the previous holder's writes. */
	if (!atomic_compare_exchange_strong_explicit(&f->latch, &v, L_X,
			memory_order_acquire, memory_order_relaxed))
		return false;
	x_taken();
	return true;
}

/* Spin, then park: before queueing, watch the word for up to L_SPIN_NS
 * (relaxed loads and a pause) and retry the fast path whenever it looks
 * takeable.  Phase fairness is untouched: the fast paths take the latch
 * only when no exclusive waiter is queued (shared) or the word is 0
 * (exclusive), exactly as before, so a spinner never barges past a queued
 * waiter; it stops at once when a waiter is queued or a handoff is pending,
 * since the latch will then be handed over, never freed.  true: taken. */
#define L_SPIN_NS 2000u

static bool spin_then_try(struct bp_frame *f, bool shared)
{
	uint64_t start = util_now_ns();
	for (unsigned i = 1;; i++) {
		/* Relaxed: only a look; the fast path's CAS acquires. */
		uint64_t v = atomic_load_explicit(&f->latch, memory_order_relaxed);
		if (v & (L_XW_MASK | L_SW_MASK | L_HANDOFF))
			return false; /* queued waiters: they are served first */
		if (shared ? !(v & L_X) : v == 0) {
			if (shared ? try_shared(f) == 0 : try_exclusive(f))
				return true;
		}
		if (i % 16 == 0 && util_now_ns() - start >= L_SPIN_NS)
			return false;
		util_cpu_relax();
	}
}

/* 0, or -EAGAIN (a count at its maximum; nothing changed).  A full shared
 * count also goes through ready_shared, which decides under the bucket lock
 * (X may have been queued meanwhile, and then the thread queues). */
static int lock_shared(struct bp_pool *p, struct bp_frame *f)
{
	if (try_shared(f) == 0 || spin_then_try(f, true))
		return 0;
	struct latch_wait w = { f, false, 0, 0 };
	uint64_t t0 = util_now_ns();
	fwait_wait(p->wt, key_s(f), 0, ready_shared, &w, NULL);
	if (w.queued)
		bp_account_wait(p, f, BP_H_LATCH_S, util_now_ns() - t0);
	return w.err;
}

/* 0, or -EAGAIN (XW at its maximum; nothing changed). */
static int lock_exclusive(struct bp_pool *p, struct bp_frame *f)
{
	if (try_exclusive(f) || spin_then_try(f, false))
		return 0;
	struct latch_wait w = { f, false, 0, 0 };
	uint64_t t0 = util_now_ns();
	fwait_wait(p->wt, key_x(f), FWAIT_EXCLUSIVE, ready_exclusive, &w, NULL);
	if (w.queued)
		bp_account_wait(p, f, BP_H_LATCH_X, util_now_ns() - t0);
	return w.err;
}

static int unlock_shared(struct bp_pool *p, struct bp_frame *f)
{
	uint64_t v = atomic_load_explicit(&f->latch, memory_order_relaxed);
	uint64_t nv;
	bool wake_x;
	do {
		if (!(v & L_SHARED_MASK))
			return -EPERM;
		nv = v - 1;
		wake_x = (v & L_SHARED_MASK) == 1 && (v & L_XW_MASK);
		if (wake_x)
			nv = (nv - L_XW_ONE) | L_X | L_HANDOFF;
		else if (!(nv & ~L_EPOCH))
			nv = 0; /* idle: EPOCH too, for try_exclusive */
		/* Release pairs with the next holder's acquire. */
	} while (!atomic_compare_exchange_weak_explicit(&f->latch, &v, nv,
			memory_order_release, memory_order_relaxed));
	if (wake_x)
		fwait_wake(p->wt, key_x(f), 1);
	return 0;
}

static int unlock_exclusive(struct bp_pool *p, struct bp_frame *f)
{
	uint64_t v = atomic_load_explicit(&f->latch, memory_order_relaxed);
	uint64_t nv;
	int wake; /* 0 none, 1 readers, 2 one writer */
	if (!(v & L_X) || (v & L_HANDOFF))
		return -EPERM;
	bp_debug_x_dropped(f); /* before the release CAS: the next holder's store is later */
	/* The holder may have changed the page: optimistic readers that began
	 * before must fail.  Relaxed load and store: only the holder of X
	 * writes the version now (design note); the store is after x_taken's
	 * fence, and the release CAS below publishes it to a reader whose
	 * acquire load sees X clear (optread.c). */
#ifndef BP_TEST_NO_VERSION_RAISE
	atomic_store_explicit(&f->version,
			      atomic_load_explicit(&f->version, memory_order_relaxed) + 1,
			      memory_order_relaxed);
#endif
	do {
		if (!(v & L_X) || (v & L_HANDOFF))
			return -EPERM;
		if (v & L_SW_MASK) {
			/* X is held, so the shared field is 0; readers <= L_COUNT_MAX
			 * (static assert above): the sum stays in the field. */
			uint64_t readers = (v & L_SW_MASK) >> L_SW_SHIFT;
			nv = ((v & ~(L_X | L_SW_MASK)) + readers) ^ L_EPOCH;
			wake = 1;
		} else if (v & L_XW_MASK) {
			nv = (v - L_XW_ONE) | L_HANDOFF;
			wake = 2;
		} else {
			/* Nobody queued and (X held) no reader: idle, so 0,
			 * EPOCH included, for try_exclusive. */
			nv = 0;
			wake = 0;
		}
		/* Release pairs with the next holder's acquire. */
	} while (!atomic_compare_exchange_weak_explicit(&f->latch, &v, nv,
			memory_order_release, memory_order_relaxed));
	if (wake == 1)
		fwait_wake(p->wt, key_s(f), FWAIT_ALL);
	else if (wake == 2)
		fwait_wake(p->wt, key_x(f), 1);
	return 0;
}

static void wait_no_writeback(struct bp_pool *p, struct bp_frame *f)
{
	/* acquire: pairs with the write completion's release clear of
	 * WRITEBACK, so the write has finished reading the page before the
	 * exclusive holder changes it. */
	if (atomic_load_explicit(&f->state, memory_order_acquire) & BP_F_WRITEBACK)
		bp_wait_writeback(p, f, NULL);
}

static int check_args(struct bp_pool *p, struct bp_frame *f, enum bp_latch_mode mode)
{
	if (!bp_frame_valid(p, f))
		return -EINVAL;
	if (mode != BP_LATCH_SHARED && mode != BP_LATCH_EXCLUSIVE)
		return -EINVAL;
	if (!bp_pins(atomic_load_explicit(&f->state, memory_order_relaxed)))
		return -EINVAL;
	return 0;
}

int bp_latch(struct bp_pool *pool, struct bp_frame *frame, enum bp_latch_mode mode)
{
	int r = check_args(pool, frame, mode);
	if (r < 0)
		return r;
	bp_debug_check(pool, !bp_debug_x_mine(frame),
		       "bp_latch: this thread holds the frame's exclusive latch already (self-deadlock)");
	if (mode == BP_LATCH_SHARED)
		return lock_shared(pool, frame);
	r = lock_exclusive(pool, frame);
	if (r < 0)
		return r;
	bp_debug_x_taken(frame);
	wait_no_writeback(pool, frame);
	return 0;
}

int bp_latch_try(struct bp_pool *pool, struct bp_frame *frame, enum bp_latch_mode mode)
{
	int r = check_args(pool, frame, mode);
	if (r < 0)
		return r;
	if (mode == BP_LATCH_SHARED)
		return try_shared(frame);
	if (!try_exclusive(frame))
		return -EBUSY;
	/* acquire: as in wait_no_writeback. */
	if (atomic_load_explicit(&frame->state, memory_order_acquire) & BP_F_WRITEBACK) {
		unlock_exclusive(pool, frame);
		return -EBUSY;
	}
	bp_debug_x_taken(frame);
	return 0;
}

int bp_unlatch(struct bp_pool *pool, struct bp_frame *frame, enum bp_latch_mode mode)
{
	if (!bp_frame_valid(pool, frame))
		return -EINVAL;
	if (mode == BP_LATCH_SHARED)
		return unlock_shared(pool, frame);
	if (mode == BP_LATCH_EXCLUSIVE)
		return unlock_exclusive(pool, frame);
	return -EINVAL;
}

int bp_latch_shared_internal(struct bp_pool *p, struct bp_frame *f, bool try_only)
{
	if (try_only)
		return try_shared(f);
	return lock_shared(p, f);
}

void bp_unlatch_shared_internal(struct bp_pool *p, struct bp_frame *f)
{
	unlock_shared(p, f);
}

bool bp_latch_idle(const struct bp_frame *f)
{
	/* Relaxed: a hint for bp_evict_page (which then only tries the
	 * latch), and exact enough for bp_try_evict, which asks under the
	 * partition write lock with the pin count about to be checked zero:
	 * no legitimate holder or waiter can then exist (each holds a pin). */
	return atomic_load_explicit(&f->latch, memory_order_relaxed) == 0; /* idle is 0 */
}

bool bp_latch_excl_held(const struct bp_frame *f)
{
	/* Acquire: pairs with unlock_exclusive's release CAS, so a reader that
	 * sees X clear after a holder left also sees the version it raised
	 * (optread.c). */
	return (atomic_load_explicit(&f->latch, memory_order_acquire) & L_X) != 0;
}

void bp_latch_version_bump(struct bp_frame *f)
{
	/* Release RMW: a reader whose begin reads this version (acquire)
	 * then sees the take's LOCKED (the CAS before).  Release fence after
	 * it, as x_taken's: a reader that reads the new tag or any byte of
	 * the new contents (stored after it) then reads this version or a
	 * later one at its end.  optread.c's design note pairs both. */
#ifndef BP_TEST_NO_VERSION_RAISE
	atomic_fetch_add_explicit(&f->version, 1, memory_order_release);
	util_fence_release();
#else
	(void)f; /* the broken pool of tests/bufpool/test_optread.c */
#endif
}

void bp_latch_peek(const struct bp_frame *f, uint32_t *shared, bool *excl, uint32_t *waiters)
{
	uint64_t v = atomic_load_explicit(&f->latch, memory_order_relaxed);
	*shared = (uint32_t)(v & L_SHARED_MASK);
	*excl = (v & L_X) != 0;
	*waiters = (uint32_t)(((v & L_XW_MASK) >> L_XW_SHIFT) + ((v & L_SW_MASK) >> L_SW_SHIFT));
}
