/* SPDX-License-Identifier: MIT */
/*
 * futex.c - the FWAIT_FUTEX reference policy: sleep on the word itself.
 *
 * Layer 3 (futex): calls only stats.c and base.c.
 *
 * Design note
 * -----------
 * The kernel's futex hash is itself a filtered hashed wait queue: waiters
 * are keyed by address and FUTEX_WAKE_BITSET filters by a 32-bit mask.  Here
 * a waiter for bit b sleeps with FUTEX_WAIT_BITSET(word, seen, 1 << b) and a
 * release wakes FUTEX_WAKE_BITSET(word, n, 1 << b).  No table lock is taken;
 * the bucket is used only for statistics counters (relaxed atomics).
 *
 * W (bit 31) is sticky under this policy: the futex interface cannot tell
 * us when the last waiter of a word has gone, so once set it stays set and
 * every later release of that word makes a wake system call (the classic
 * price of a futex mutex's "contended" state).
 *
 * Exclusive and non-exclusive waiters of one bit share the bitset, so an
 * unlock's wake-one may land on a bit_wait waiter; that waiter passes the
 * wake on (one more FUTEX_WAKE) when it sees the bit clear, so a lock waiter
 * is never left asleep.  The kernel returns 0 from FUTEX_WAIT to a waiter it
 * dequeued for a wake even if the timeout fired too, so a wake is never
 * swallowed by a timeout.
 *
 * 64-bit words (fwait_bit64_*).  Futexes are 32-bit, so a waiter for bit b
 * of a 64-bit word sleeps on the 32-bit half that holds b (the half at the
 * lower address is the low half on a little-endian machine, the high half
 * on a big-endian one: __BYTE_ORDER__ picks), comparing that half's value,
 * with bitset 1 << (b % 32); a release wakes that half with the same
 * bitset.  W (bit 63) lives in the high half, so for b < 32 the waiter
 * announces in one half and sleeps on the other.  That loses no wakeup:
 * the waiter sets W with a 64-bit RMW and reads the word (bit b set) after
 * it; the releaser clears b and reads W in one 64-bit RMW.  If the release
 * comes first in the word's modification order, the waiter's RMW or load
 * sees b clear and never sleeps; if the announce comes first, the releaser
 * sees W and will FUTEX_WAKE the half holding b.  A release between the
 * waiter's read and its FUTEX_WAIT changed b, which is in the half the
 * kernel compares, so FUTEX_WAIT returns EAGAIN instead of sleeping; a
 * release after the kernel queued the waiter finds it.  (If b is released
 * and taken again in between, the half reads as before and the waiter
 * sleeps, exactly as on a 32-bit word: W is sticky, so the new holder's
 * release wakes it.)  Only which half the kernel compares differs from
 * the 32-bit case, and it always holds the waited bit.
 *
 * Both widths share one implementation: futex_word.h, a template included
 * twice below with macros for the word type, its W bit and its half-word
 * (the whole word for 32 bits); only sys_futex and futex_wake are here.
 */
#include "fwait/internal.h"
#include "util/clock.h"
#include "util/probe.h"

#include <errno.h>
#include <limits.h>

#ifdef __linux__
bool fw_futex_supported(void)
{
	return true;
}

/* Wake up to n sleepers of bitset on the 32-bit futex word uaddr; counted
 * in b, the bucket of the caller's (whole) word. */
static void futex_wake(struct fw_bucket *b, uint32_t *uaddr, uint32_t bitset, int n)
{
	long woken = fw_sys_futex(uaddr, FUTEX_WAKE_BITSET, (uint32_t)n, NULL, bitset);

	FW_STAT(b, slow_wakes, 1);
	if (woken > 0)
		FW_STAT(b, wakeups, (uint64_t)woken);
}

/* 32-bit words: the futex word is the word.  _Atomic uint32_t has the
 * layout of uint32_t on every Linux ABI. */
#define FW_WORD_T uint32_t
#define FW_W_MASK FWAIT_WAITERS_MASK
#define FW_FUTEX(n) fw_futex_##n
#define FW_LOCAL(n) n##32
#define FW_HALF(word, m) ((uint32_t *)(void *)(word))
#define FW_HALF_VAL(v, m) (v)
#define FW_HALF_MASK(m) (m)
#include "fwait/futex_word.h"

/* 64-bit words: the futex word is the half holding m's bit (design note). */
static uint32_t *half64(_Atomic uint64_t *word, uint64_t m)
{
	unsigned hi = (m >> 32) != 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (uint32_t *)(void *)word + hi;
#elif __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return (uint32_t *)(void *)word + !hi;
#else
#error "fwait: unknown byte order"
#endif
}

#define FW_WORD_T uint64_t
#define FW_W_MASK FWAIT64_WAITERS_MASK
#define FW_FUTEX(n) fw_futex64_##n
#define FW_LOCAL(n) n##64
#define FW_HALF(word, m) half64((word), (m))
#define FW_HALF_VAL(v, m) ((uint32_t)((m) >> 32 ? (v) >> 32 : (v)))
#define FW_HALF_MASK(m) ((uint32_t)((m) >> 32 ? (m) >> 32 : (m)))
#include "fwait/futex_word.h"

#else /* !__linux__ */

bool fw_futex_supported(void)
{
	return false;
}

int fw_futex_wait(struct fwait_table *t, _Atomic uint32_t *word, uint32_t m,
		  bool exclusive, const struct timespec *deadline)
{
	return -ENOTSUP;
}

int fw_futex_unlock(struct fwait_table *t, _Atomic uint32_t *word, uint32_t m)
{
	return -ENOTSUP;
}

void fw_futex_wake_all(struct fwait_table *t, _Atomic uint32_t *word, uint32_t m)
{
}

int fw_futex64_wait(struct fwait_table *t, _Atomic uint64_t *word, uint64_t m,
		    bool exclusive, const struct timespec *deadline)
{
	return -ENOTSUP;
}

int fw_futex64_unlock(struct fwait_table *t, _Atomic uint64_t *word, uint64_t m)
{
	return -ENOTSUP;
}

void fw_futex64_wake_all(struct fwait_table *t, _Atomic uint64_t *word, uint64_t m)
{
}
#endif
