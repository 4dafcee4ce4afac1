/* SPDX-License-Identifier: MIT */
/*
 * bitops.c - lock-style and event-style bits on a caller's 32- or 64-bit
 * word.
 *
 * Layer 4 (bit waits): calls only park.c, futex.c, stats.c and base.c.
 * The code is in bitops_word.h (see the end of the design note).
 *
 * Design note
 * -----------
 * Key = (word, bit).  The word's top bit, W (bit 31, FWAIT_WAITERS_MASK, of
 * a 32-bit word; bit 63, FWAIT64_WAITERS_MASK, of a 64-bit one), means
 * "a waiter of some bit of this word may be queued in the word's bucket".
 *
 *  - W is set only under the bucket lock, by a waiter, with an RMW on the
 *    word that also re-checks the bit it waits for (take_or_announce,
 *    clear_or_announce).  W is cleared only under the bucket lock, once no
 *    waiter of the word is left queued (tidy_waiters_bit); it may be left
 *    set for a while (stale), which only costs one slow wake that finds
 *    nobody and clears it.
 *  - A release (unlock or clear) changes the bit and reads W in a single
 *    RMW on the word.  Both sides are read-modify-writes of one location, so
 *    the word's modification order alone decides the race: either the
 *    waiter's RMW came first (the releaser sees W and goes to the bucket,
 *    whose lock it can only take after the waiter has queued and dropped
 *    it), or the release came first (the waiter's RMW sees the bit already
 *    released and does not sleep).  No fence is needed beyond the RMWs
 *    themselves, which is the same argument Linux makes for clearing
 *    PG_locked and testing PG_waiters in one instruction.  In the C11
 *    model (this is the waiters bit's one argument; ARM included), the
 *    first case needs only coherence and the mutex: had the releaser's
 *    lock of the bucket come before the waiter's in the mutex's order,
 *    the releaser's RMW (before its lock) would happen before the
 *    waiter's RMW (after its own lock), so it would precede it in the
 *    word's modification order and could not read its W.  So the
 *    releaser locks after the waiter unlocked, and finds it queued.  The
 *    orders of the RMWs (relaxed announce, release unlock, acquire take)
 *    only publish the critical sections; none of them decides a wakeup.
 *
 * Lock bits under FWAIT_WAKE_ONE: a contended unlock (W seen) takes the
 * bucket lock with the bit still held and decides there (unlock_wake_one).
 * By default (FWAIT_HANDOFF_FAIR, eventual fairness) it releases the bit,
 * clearing W in the same RMW if nobody of the word stays queued, and wakes
 * the oldest exclusive waiter of the key; a running thread (a spinner, a
 * newcomer, the unlocker itself coming back) may take the free bit first,
 * so the lock never sits held while a woken thread is being scheduled (the
 * convoy of strict handoff).  A woken waiter that loses re-announces W in
 * take_or_announce, under the bucket lock, and re-queues at the head of its
 * key with its age; once the oldest waiter is due (fair_ns since it first
 * queued, or max_steals races lost: fw_due) the unlock hands it the bit
 * instead, leaving it set, exactly as strict mode always does
 * (FWAIT_HANDOFF_STRICT: strict FIFO).  It does the same while the bucket's
 * recent holds have been long (fw_holds_long, a vote of holds measured from
 * a slow acquisition to its contended unlock): freeing the bit then buys a
 * barger a hold at the price of the woken waiter's wasted wake, while
 * handing it over idles the bit for one wake-up, a small part of a long
 * hold.  Short holds keep the release, which is what avoids the convoy.
 * Which reason triggers a handoff never matters to correctness: the spin
 * model lets any unlock hand off or release.  Before queueing, a FAIR lock waiter
 * spins briefly on the word (spin_for_bit).  The no-lost-wakeup argument is
 * unchanged: a contended release happens under the bucket lock, which also
 * serialises it against every waiter's "re-check and set W".
 *
 * Two widths, one implementation.  The code lives in bitops_word.h, a
 * template this file includes twice with macros naming the word type, its
 * W mask, its highest bit and a name suffix (fwait_bit_* and fwait_bit64_*,
 * helpers foo32 and foo64).  A template rather than a "word ops" table of
 * function pointers, because the fast paths (trylock, uncontended unlock,
 * set, test) must stay one inlined atomic op on the real type, and because
 * the RMWs of the protocol (take_or_announce, the unlock that clears the
 * bit and reads W) must be single RMWs on the whole word, which an
 * indirection would only hide.  Nothing above depends on the width: the
 * bucket is the word's address, the waiter's key is (address, bit) and
 * fw_word_has_waiters compares addresses only, which is exact because a
 * 32-bit and a 64-bit word never share an address in correct use.
 */
#include "fwait/internal.h"
#include "util/chaos.h"
#include "util/clock.h"
#include "util/cpu.h"

#include <errno.h>

/* FAIR: the lock bit this thread last took in bit_sleep, and when: the
 * start of a hold that its contended unlock measures and votes on
 * (fw_hold_vote).  One per thread, as each thread's parker is, so nothing
 * is shared between threads.  A hold begun by trylock or a spin is not
 * measured (that would put a clock read on the fast path); a lock bit
 * released by a thread other than its taker is not either.  A stale entry
 * (the bit was released uncontended, so not measured, then taken fast
 * again) measures one hold too long: one vote, which the saturating vote
 * outweighs as soon as the next measured holds are short. */
static _Thread_local struct {
	const void *word;
	unsigned bit;
	uint64_t ns;
} fw_hold;

static void hold_begin(const struct fwait_table *t, const void *word, unsigned bit)
{
	if (!fw_fair(t) || t->hold_ns == 0)
		return;
	fw_hold.word = word;
	fw_hold.bit = bit;
	fw_hold.ns = util_now_ns();
}

/* The hold of (word, bit) ending now, if this thread began it in bit_sleep:
 * true, and its length in *ns. */
static bool hold_end(const void *word, unsigned bit, uint64_t *ns)
{
	if (fw_hold.word != word || fw_hold.bit != bit)
		return false;
	fw_hold.word = NULL;
	*ns = util_now_ns() - fw_hold.ns;
	return true;
}

/* 32-bit words: fwait_bit_*, bits 0..30, W = bit 31. */
#define FW_WORD_T uint32_t
#define FW_ONE UINT32_C(1)
#define FW_W_MASK FWAIT_WAITERS_MASK
#define FW_MAX_BIT FWAIT_MAX_BIT
#define FW_API(n) fwait_bit_##n
#define FW_LOCAL(n) n##32
#define FW_FUTEX(n) fw_futex_##n
#include "fwait/bitops_word.h"

/* 64-bit words: fwait_bit64_*, bits 0..62, W = bit 63. */
#define FW_WORD_T uint64_t
#define FW_ONE UINT64_C(1)
#define FW_W_MASK FWAIT64_WAITERS_MASK
#define FW_MAX_BIT FWAIT64_MAX_BIT
#define FW_API(n) fwait_bit64_##n
#define FW_LOCAL(n) n##64
#define FW_FUTEX(n) fw_futex64_##n
#include "fwait/bitops_word.h"
