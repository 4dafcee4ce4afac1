/* SPDX-License-Identifier: MIT */
/*
 * frame.c - primitives on one frame's state word: checking a frame
 * handle, taking and dropping pins outside the page table, and waiting on
 * a state bit (LOCKED, WRITEBACK) with the wait accounted.
 *
 * Layer 2 (frame): calls only account.c.
 *
 * Design note
 * -----------
 * The state word (internal.h, bufpool.h) carries the flags, the pin count
 * and fwait's waiters bit 31; every file above changes it only through
 * atomics, and the ones whose ordering more than one file relies on live
 * here:
 *   - dropping a pin (bp_unpin, bp_unpin_checked, and bp_unpin_claim for
 *     the pin a claim holds on its LOCKED frame): release, so the
 *     pinner's accesses to the page happen before an evictor's acquire
 *     CAS; seq_cst, for the Dekker pairing with evict.c's wait_for_unpin;
 *     the drop to zero wakes bp_get_timed callers waiting for a frame.
 *     Every pin drop in the pool is one of these three (the one
 *     exception, pin_found's undo at the pin limit, never reaches zero),
 *     so no drop can leave a frame waiter asleep: wait_for_unpin counts
 *     every pin, a claim's included, and every drop to zero wakes it;
 *   - pinning a dirty frame for its write-back (bp_pin_if_dirty), which
 *     excludes the evictor's CAS without the partition lock;
 *   - waiting for WRITEBACK or LOCKED to clear, through fwait_bit_wait,
 *     with the time waited accounted (account.c).
 * Pinning a frame found through the page table is pagetable.c's (pin_found):
 * it is only valid under the partition lock that keeps the frame mapped.
 */
#include <errno.h>
#include <sched.h>

#include "bufpool/internal.h"
#include "util/chaos.h"
#include "util/clock.h"

bool bp_frame_valid(const struct bp_pool *p, const struct bp_frame *f)
{
	if (!p || !f || f < p->frames || f >= p->frames + p->nframes)
		return false;
	return ((const char *)f - (const char *)p->frames) % sizeof(*f) == 0;
}

/* After a pin count dropped to zero: wake bp_get_timed callers waiting for
 * a frame, if any. */
static void unpin_wake(struct bp_pool *p)
{
	if (atomic_load_explicit(&p->frame_waiters, memory_order_seq_cst) > 0) {
		/* Release pairs with unpin_seen's acquire load (evict.c). */
		atomic_fetch_add_explicit(&p->unpin_seq, 1, memory_order_release);
		CHAOS_POINT("frame.c:unpin_wake:bumped_before_wake");
		fwait_wake(p->wt, &p->unpin_seq, FWAIT_ALL);
	}
}

void bp_unpin(struct bp_pool *p, struct bp_frame *f)
{
	CHAOS_POINT("frame.c:bp_unpin:before_drop");
	/* Release: our accesses to the page happen before an evictor's
	 * acquire CAS.  seq_cst for the Dekker pairing with wait_for_unpin
	 * (evict.c argues it): pin drop, then unpin_wake's seq_cst load of
	 * frame_waiters. */
	uint32_t old = atomic_fetch_sub_explicit(&f->state, BP_PIN_ONE, memory_order_seq_cst);
	CHAOS_POINT("frame.c:bp_unpin:dropped_before_wake");
	if (bp_pins(old) == 1)
		unpin_wake(p);
}

int bp_unpin_checked(struct bp_pool *p, struct bp_frame *f)
{
	uint32_t s = atomic_load_explicit(&f->state, memory_order_relaxed);
	do {
		if (!bp_pins(s))
			return -EINVAL; /* double release */
		/* seq_cst: see bp_unpin. */
	} while (!atomic_compare_exchange_weak_explicit(&f->state, &s, s - BP_PIN_ONE,
			memory_order_seq_cst, memory_order_relaxed));
	if (bp_pins(s) == 1)
		unpin_wake(p);
	return 0;
}

void bp_unpin_claim(struct bp_pool *p, struct bp_frame *f)
{
	/* Clear the flags but LOCKED, and drop our own pin only: a lock-free
	 * hit that found this frame under its old tag may hold a speculative
	 * pin on it right now (pagetable.c, lookup_pin_fast), and will drop it
	 * once it sees LOCKED or the tag; wiping the pin field would make
	 * that unpin wrap the count (tests/bufpool/test_claim_race.c).  The
	 * frame is free once both pins are gone: try_take_free wants the
	 * whole word 0.  seq_cst, as bp_unpin's drop: the claim's pin is a
	 * pin like any other to wait_for_unpin (evict.c), whose all_pinned
	 * counts it, so this drop is the first half of the same Dekker
	 * pairing (pin drop, then the load of frame_waiters in unpin_wake;
	 * evict.c argues it). */
	uint32_t s = atomic_load_explicit(&f->state, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&f->state, &s,
			(s & (FWAIT_WAITERS_MASK | BP_F_LOCKED | BP_PIN_MASK)) - BP_PIN_ONE,
			memory_order_seq_cst, memory_order_relaxed))
		;
	CHAOS_POINT("frame.c:bp_unpin_claim:dropped_before_unlock");
	/* Release: a later claimer (acquire CAS from 0) sees our writes. */
	fwait_bit_unlock(p->wt, &f->state, BP_LOCKED);
	/* After the unlock, so that a waiter woken here finds the frame
	 * free (state 0) rather than LOCKED; one that runs before the
	 * unlock sees LOCKED and waits for the bit (bp_claim_frame's
	 * transient wait), which the unlock wakes. */
	if (bp_pins(s) == 1)
		unpin_wake(p);
}

/* Acquire on the pin pairs with the release of the previous unpin.  Callers'
 * pins stop at BP_PIN_MAX, half the field, so this pin always fits in
 * practice (see pagetable.c's pin_found); the CAS refuses at the field's
 * end all the same, so it can never carry into fwait's bit 31. */
bool bp_pin_if_dirty(struct bp_frame *f)
{
	uint32_t s = atomic_load_explicit(&f->state, memory_order_relaxed);
	for (;;) {
		if (!(s & BP_F_DIRTY) || (s & BP_F_INFLIGHT) ||
		    bp_pins(s) == BP_PIN_FIELD_MAX)
			return false;
		if (atomic_compare_exchange_weak_explicit(&f->state, &s, s + BP_PIN_ONE,
				memory_order_acquire, memory_order_relaxed))
			return true;
	}
}

void bp_wait_writeback(struct bp_pool *p, struct bp_frame *f, const struct timespec *deadline)
{
	/* Acquire pairs with the completion's release clear of WRITEBACK. */
	if (!(atomic_load_explicit(&f->state, memory_order_acquire) & BP_F_WRITEBACK))
		return;
	debug_assert_below_rank(UTIL_RANK_BP_FILES); /* internal.h: no pool mutex held while waiting */
	CHAOS_POINT("frame.c:bp_wait_writeback:before_wait");
	uint64_t t0 = util_now_ns();
	fwait_bit_wait(p->wt, &f->state, BP_WRITEBACK, deadline);
	bp_account_wait(p, f, BP_H_WRITEBACK, util_now_ns() - t0);
}

void bp_wait_locked(struct bp_pool *p, struct bp_frame *f)
{
	debug_assert_below_rank(UTIL_RANK_BP_FILES); /* internal.h: no pool mutex held while waiting */
	CHAOS_POINT("frame.c:bp_wait_locked:before_wait");
	uint64_t t0 = util_now_ns();
	fwait_bit_wait(p->wt, &f->state, BP_LOCKED, NULL);
	bp_account_wait(p, f, BP_H_IO, util_now_ns() - t0);
}

bool bp_transient_patience(uint64_t *since, uint64_t limit_ns)
{
	uint64_t now = util_now_ns();
	if (*since == 0)
		*since = now;
	if (now - *since >= limit_ns)
		return false;
	sched_yield();
	return true;
}
