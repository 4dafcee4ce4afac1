/*
 * latch.c - phase-fair shared/exclusive content latches on fwait keys.
 *
 * Design note
 * -----------
 * One 64-bit atomic word per frame (frame.latch):
 *   bits  0..15  shared holders
 *   bit  16      X: held exclusive (or handed to a queued exclusive waiter)
 *   bit  17      HANDOFF: X was handed over and not yet taken by the waiter
 *   bit  18      EPOCH: flips each time the queued readers are admitted
 *   bits 20..39  queued exclusive waiters (XW)
 *   bits 40..59  queued shared waiters (SW)
 * Fast paths are one CAS and never touch the wait table: shared when no X
 * is held or queued, exclusive when the word is all zero.  Otherwise the
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
 * An exclusive latch also waits for BP_WRITEBACK to clear once held: writers
 * set WRITEBACK only under a shared latch, so no new write-back can start
 * while it is held and the page is stable while written.
 */
#include <errno.h>

#include "bufpool/internal.h"

#define L_SHARED_MASK UINT64_C(0xffff)
#define L_X (UINT64_C(1) << 16)
#define L_HANDOFF (UINT64_C(1) << 17)
#define L_EPOCH (UINT64_C(1) << 18)
#define L_XW_SHIFT 20
#define L_XW_ONE (UINT64_C(1) << L_XW_SHIFT)
#define L_XW_MASK (UINT64_C(0xfffff) << L_XW_SHIFT)
#define L_SW_SHIFT 40
#define L_SW_ONE (UINT64_C(1) << L_SW_SHIFT)
#define L_SW_MASK (UINT64_C(0xfffff) << L_SW_SHIFT)

static inline const void *key_x(struct bp_frame *f) { return &f->latch; }
static inline const void *key_s(struct bp_frame *f) { return (const char *)&f->latch + 1; }

struct latch_wait {
	struct bp_frame *f;
	bool queued;
	uint64_t epoch;
};

/* Acquire on success pairs with the release in the unlatch that freed or
 * handed over the latch: the holder sees the previous holder's writes. */
static bool ready_shared(void *arg)
{
	struct latch_wait *w = arg;
	uint64_t v = atomic_load_explicit(&w->f->latch, memory_order_acquire);
	if (w->queued)
		return (v & L_EPOCH) != w->epoch;
	for (;;) {
		if (!(v & (L_X | L_XW_MASK))) {
			if (atomic_compare_exchange_weak_explicit(&w->f->latch, &v, v + 1,
					memory_order_acquire, memory_order_acquire))
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
					memory_order_acquire, memory_order_acquire))
				return true;
		} else if (!(v & (L_SHARED_MASK | L_X | L_XW_MASK))) {
			if (atomic_compare_exchange_weak_explicit(&w->f->latch, &v, v | L_X,
					memory_order_acquire, memory_order_acquire))
				return true;
		} else if (atomic_compare_exchange_weak_explicit(&w->f->latch, &v, v + L_XW_ONE,
				memory_order_acquire, memory_order_acquire)) {
			w->queued = true;
			return false;
		}
	}
}

static bool try_shared(struct bp_frame *f)
{
	uint64_t v = atomic_load_explicit(&f->latch, memory_order_relaxed);
	while (!(v & (L_X | L_XW_MASK)) && (v & L_SHARED_MASK) < L_SHARED_MASK) {
		if (atomic_compare_exchange_weak_explicit(&f->latch, &v, v + 1,
				memory_order_acquire, memory_order_relaxed))
			return true;
	}
	return false;
}

static bool try_exclusive(struct bp_frame *f)
{
	uint64_t v = 0;
	return atomic_compare_exchange_strong_explicit(&f->latch, &v, L_X,
			memory_order_acquire, memory_order_relaxed);
}

static void lock_shared(struct bp_pool *p, struct bp_frame *f)
{
	if (try_shared(f))
		return;
	struct latch_wait w = { f, false, 0 };
	uint64_t t0 = bp_now_ns();
	fwait_wait(p->wt, key_s(f), 0, ready_shared, &w, NULL);
	if (w.queued)
		bp_account_wait(p, f, atomic_load_explicit(&f->pageno, memory_order_relaxed),
				BP_H_LATCH_S, bp_now_ns() - t0);
}

static void lock_exclusive(struct bp_pool *p, struct bp_frame *f)
{
	if (try_exclusive(f))
		return;
	struct latch_wait w = { f, false, 0 };
	uint64_t t0 = bp_now_ns();
	fwait_wait(p->wt, key_x(f), FWAIT_EXCLUSIVE, ready_exclusive, &w, NULL);
	if (w.queued)
		bp_account_wait(p, f, atomic_load_explicit(&f->pageno, memory_order_relaxed),
				BP_H_LATCH_X, bp_now_ns() - t0);
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
	do {
		if (!(v & L_X) || (v & L_HANDOFF))
			return -EPERM;
		if (v & L_SW_MASK) {
			uint64_t readers = (v & L_SW_MASK) >> L_SW_SHIFT;
			nv = ((v & ~(L_X | L_SW_MASK)) + readers) ^ L_EPOCH;
			wake = 1;
		} else if (v & L_XW_MASK) {
			nv = (v - L_XW_ONE) | L_HANDOFF;
			wake = 2;
		} else {
			nv = v & ~L_X;
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
	if (mode == BP_LATCH_SHARED) {
		lock_shared(pool, frame);
	} else {
		lock_exclusive(pool, frame);
		wait_no_writeback(pool, frame);
	}
	return 0;
}

int bp_latch_try(struct bp_pool *pool, struct bp_frame *frame, enum bp_latch_mode mode)
{
	int r = check_args(pool, frame, mode);
	if (r < 0)
		return r;
	if (mode == BP_LATCH_SHARED)
		return try_shared(frame) ? 0 : -EBUSY;
	if (!try_exclusive(frame))
		return -EBUSY;
	/* acquire: as in wait_no_writeback. */
	if (atomic_load_explicit(&frame->state, memory_order_acquire) & BP_F_WRITEBACK) {
		unlock_exclusive(pool, frame);
		return -EBUSY;
	}
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
		return try_shared(f) ? 0 : -EBUSY;
	lock_shared(p, f);
	return 0;
}

void bp_unlatch_shared_internal(struct bp_pool *p, struct bp_frame *f)
{
	unlock_shared(p, f);
}

/* Every field of the word that says someone holds or waits for the latch;
 * EPOCH (and unused bits) are not among them: an idle latch may have
 * EPOCH set. */
#define L_BUSY_MASK (L_SHARED_MASK | L_X | L_HANDOFF | L_XW_MASK | L_SW_MASK)

bool bp_latch_idle(const struct bp_frame *f)
{
	/* Relaxed: callers use it only to give up early (bp_evict_page);
	 * they take the latch with a try before relying on it. */
	return !(atomic_load_explicit(&f->latch, memory_order_relaxed) & L_BUSY_MASK);
}

void bp_latch_peek(const struct bp_frame *f, uint32_t *shared, bool *excl, uint32_t *waiters)
{
	uint64_t v = atomic_load_explicit(&f->latch, memory_order_relaxed);
	*shared = (uint32_t)(v & L_SHARED_MASK);
	*excl = (v & L_X) != 0;
	*waiters = (uint32_t)(((v & L_XW_MASK) >> L_XW_SHIFT) + ((v & L_SW_MASK) >> L_SW_SHIFT));
}
