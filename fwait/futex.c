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
 */
#include "fwait/internal.h"
#include "util/clock.h"

#include <errno.h>
#include <limits.h>

#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

bool fw_futex_supported(void)
{
	return true;
}

static long sys_futex(_Atomic uint32_t *word, int op, uint32_t val,
		      const struct timespec *abs_deadline, uint32_t bitset)
{
	/* _Atomic uint32_t has the layout of uint32_t on every Linux ABI. */
	return syscall(SYS_futex, (uint32_t *)word, op | FUTEX_PRIVATE_FLAG, val,
		       abs_deadline, NULL, bitset);
}

static void futex_wake(struct fwait_table *t, _Atomic uint32_t *word, uint32_t m, int n)
{
	struct fw_bucket *b = fw_bucket_of(t, word);
	long woken = sys_futex(word, FUTEX_WAKE_BITSET, (uint32_t)n, NULL, m);

	fw_stat_add(&b->stats.slow_wakes, 1);
	if (woken > 0)
		fw_stat_add(&b->stats.wakeups, (uint64_t)woken);
}

/* Sleep while the word still reads `seen`.  Returns 0 (woken by a wake),
 * -EAGAIN (word changed or signal: just re-check), -ETIMEDOUT. */
static int futex_sleep(struct fwait_table *t, _Atomic uint32_t *word, uint32_t seen,
		       uint32_t m, const struct timespec *deadline)
{
	struct fw_bucket *b = fw_bucket_of(t, word);
	uint64_t start = util_now_ns();

	fw_stat_add(&b->stats.waits, 1);
	long r = sys_futex(word, FUTEX_WAIT_BITSET, seen, deadline, m);
	int err = r == 0 ? 0 : errno;
	fw_hist_record(t, b, util_now_ns() - start);
	if (err == ETIMEDOUT) {
		fw_stat_add(&b->stats.timeouts, 1);
		return -ETIMEDOUT;
	}
	return err == 0 ? 0 : -EAGAIN;
}

/* Make sure W is set in v (and in the word); false if the word moved. */
static bool announce(_Atomic uint32_t *word, uint32_t *v)
{
	if (*v & FWAIT_WAITERS_MASK)
		return true;
	/* relaxed: a releaser reads W through its own RMW on the word, and
	 * FUTEX_WAIT re-reads the word under the kernel's bucket lock. */
	if (!atomic_compare_exchange_weak_explicit(word, v, *v | FWAIT_WAITERS_MASK,
			memory_order_relaxed, memory_order_relaxed))
		return false;
	*v |= FWAIT_WAITERS_MASK;
	return true;
}

int fw_futex_wait(struct fwait_table *t, _Atomic uint32_t *word, uint32_t m,
		  bool exclusive, const struct timespec *deadline)
{
	/* acquire: pairs with the release in fw_futex_unlock / clear, for a
	 * non-exclusive waiter that returns on seeing the bit clear. */
	uint32_t v = atomic_load_explicit(word, memory_order_acquire);
	bool woken = false;

	for (;;) {
		if (!(v & m)) {
			if (!exclusive) {
				/* We may have absorbed an unlock's wake-one meant
				 * for a lock waiter: pass it on. */
				if (woken && (v & FWAIT_WAITERS_MASK))
					futex_wake(t, word, m, 1);
				return 0;
			}
			/* acquire: pairs with the release in fw_futex_unlock. */
			if (atomic_compare_exchange_weak_explicit(word, &v, v | m,
					memory_order_acquire, memory_order_acquire))
				return 0;
			continue;
		}
		if (!announce(word, &v))
			continue;
		if (woken)
			fw_stat_add(&fw_bucket_of(t, word)->stats.spurious, 1);
		int rc = futex_sleep(t, word, v, m, deadline);
		if (rc == -ETIMEDOUT)
			return rc;
		woken = woken || rc == 0;
		/* acquire: as the first load above. */
		v = atomic_load_explicit(word, memory_order_acquire);
	}
}

int fw_futex_unlock(struct fwait_table *t, _Atomic uint32_t *word, uint32_t m)
{
	uint32_t v = atomic_load_explicit(word, memory_order_relaxed);

	do {
		if (!(v & m))
			return -EPERM;
		/* release: pairs with the next locker's acquire. */
	} while (!atomic_compare_exchange_weak_explicit(word, &v, v & ~m,
			memory_order_release, memory_order_relaxed));
	if (v & FWAIT_WAITERS_MASK)
		futex_wake(t, word, m, 1);
	return 0;
}

void fw_futex_wake_all(struct fwait_table *t, _Atomic uint32_t *word, uint32_t m)
{
	futex_wake(t, word, m, INT_MAX);
}

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
#endif
