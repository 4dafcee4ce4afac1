/* SPDX-License-Identifier: MIT */
/*
 * keyed.c - generic keyed waits: the wait_event_filtered analog.
 *
 * Layer 4 (keyed waits): calls only park.c, stats.c and base.c.
 *
 * Design note
 * -----------
 * A waiter parks on any address until a caller's condition holds.  The
 * condition is evaluated under the bucket lock, and fwait_wake takes the same
 * lock, so a waker that makes the condition true before it calls fwait_wake
 * cannot slip between the waiter's check and its enqueue: the lock orders
 * them.  Generic keys match (key, FW_GENERIC_BIT) and so never match a bit
 * waiter on the same address.  Under FWAIT_FUTEX, generic waits use the
 * table with WAKE_ONE semantics (there is no word to sleep on).
 *
 * Fairness (FWAIT_HANDOFF_FAIR, the default): an exclusive waiter that is
 * woken, finds ready() false (another thread took what the wake announced)
 * and must sleep again re-queues at the head of its key, so it is the one
 * the next fwait_wake(key, 1) picks.  fwait owns no resource here, so there
 * is no handoff: a caller that wants one hands over in its own state (as the
 * buffer pool's latches do) and ready() takes it.  Queueing at the head is
 * safe for the same reason queueing at all is: ready() and the enqueue are
 * under the bucket lock that fwait_wake takes.
 *
 * The parking-lot calls (fwait_wait_ex, fwait_wake_ex) are the same walk
 * with three more outputs.  The waker's callback runs under the bucket
 * lock after the choice, so what it reports (how many were chosen, whether
 * the key still has waiters) is exact: every waiter queues under that
 * lock, after a ready() that also runs under it.  Its token is written
 * into each chosen record before the post that wakes it (the parker's
 * release/acquire then orders it), and a waiter woken with a token returns
 * without another ready(): what the waker handed over (a lock kept held
 * for it) is not there for ready() to find.  How a wait ended is what the
 * loop already knows: the pre-check, a first locked check, or a check (or
 * a token) right after a wake, the one case that consumed a wake.
 *
 * FWAIT_PRECHECK calls ready() once before all of this, without the lock:
 * a true answer returns at once (it claims nothing fwait guards), a false
 * one changes nothing, as the locked check after the announce decides.
 * FWAIT_SPIN repeats that look for up to spin_ns (fwait_spin).
 *
 * A wake with nobody to wake skips the bucket lock.  Each bucket counts the
 * threads inside fwait_wait on it (nkeyed).  The pairing is Dekker's, as in
 * folly's ParkingLot (numWaiters):
 *   waiter:  lock; nkeyed++ (seq_cst RMW); seq_cst fence; ready() reads C
 *   waker:   caller writes C; seq_cst fence; read nkeyed; 0: return
 * This is the C11 model's own rule for seq_cst fences, and the skip's one
 * argument: both fences are in the single total order S, and for a store
 * A sequenced before fence X and a load B after fence Y, with X before Y
 * in S, B reads A or a later value of its object.  If the waker's fence
 * comes first, the waiter's ready() (after its own fence) sees the
 * caller's write of C and does not sleep; if the waiter's fence comes
 * first, the waker's read of nkeyed (after its fence) sees the increment
 * or a later value and takes the lock as before, which orders it against
 * the waiter's enqueue.  A later value is never 0 while the waiter is
 * inside: every thread's decrement follows its own increment in the
 * count's modification order, and the waiter's comes only once it has
 * stopped looking.  So the caller's write needs no particular ordering of
 * its own (relaxed suffices; ready() must read it with an atomic load);
 * the fence is fwait_wake's.  It is a store-then-load order, which no
 * acquire or release gives: a full fence on every machine (DMB ISH on
 * ARMv8, MFENCE or a locked op on x86), on both sides.  A hybrid latch's
 * waits (fw_wait_latch) also make one membarrier(2) after the fence, so
 * its releases may read nkeyed with no fence of their own
 * (fw_released_waiters; hlatch.c's design note).  Under
 * FWAIT_BROADCAST a wake must reach the bit waiters of the bucket too,
 * which nkeyed does not count, so it always takes the lock.
 */
#include "fwait/internal.h"
#include "util/chaos.h"
#include "util/clock.h"
#include "util/cpu.h"

#include <errno.h>
#include <sched.h>

/* Caller holds b->lock and has stopped calling ready(): lower the count
 * and drop the lock. */
static void leave(struct fw_bucket *b)
{
	debug_assert_held(&b->lock); /* internal.h: caller holds b->lock */
	fw_nkeyed_leave(b);
	pthread_mutex_unlock(&b->lock);
}

/* The wait itself (fwait_wait, fwait_wait_ex, fw_wait_latch).  ex:
 * fwait_wait_ex's contract, which takes FWAIT_SPIN and ends the wait on a
 * wake's token instead of re-checking ready(); fwait_wait's refuses
 * FWAIT_SPIN as an unknown flag, as it always has.  latch: the wait of a
 * hybrid latch whose releases may be plain stores (fw_released_waiters). */
static int keyed_wait(struct fwait_table *t, const void *key, unsigned flags,
		      fwait_ready_fn ready, void *arg, const struct timespec *deadline,
		      bool ex, bool latch, struct fwait_wait_result *out)
{
	unsigned known = FWAIT_EXCLUSIVE | FWAIT_PRECHECK | (ex ? FWAIT_SPIN : 0);
	if (t == NULL || key == NULL || ready == NULL || (flags & ~known) ||
	    !fwait_deadline_valid(deadline))
		return -EINVAL;
	debug_assert_msg(!fwait_witness_holds_rank(UTIL_RANK_FW_BUCKET),
			 "fwait_wait called under a bucket or pool lock (from a ready() callback?)");
	*out = (struct fwait_wait_result){ .how = FWAIT_HOW_PRECHECK };
	/* The caller's fast path (fwait.h): unlocked looks that can only
	 * say "no need to wait"; a false answer is re-checked under the lock
	 * below, after the Dekker announce, like any first check. */
	if ((flags & FWAIT_SPIN) ? fwait_spin(t, ready, arg) :
	    (flags & FWAIT_PRECHECK) && ready(arg))
		return 0;

	bool exclusive = flags & FWAIT_EXCLUSIVE;
	struct fw_bucket *b = fw_bucket_of(t, key);
	struct fw_waiter w;
	bool woken = false;
	int rc = 0;

	CHAOS_POINT("keyed.c:fwait_wait:before_announce");
	fw_waiter_init(&w, key, FW_GENERIC_BIT, exclusive);
	pthread_mutex_lock(&b->lock);
	FW_STAT(b, slow_waits, 1);
	/* seq_cst RMW and fence before the first ready(): the waiter's half of
	 * the Dekker pair with fwait_wake's fence (design note). */
	uint32_t was = atomic_fetch_add_explicit(&b->nkeyed, 1, memory_order_seq_cst);
	atomic_thread_fence(memory_order_seq_cst);
	if (latch && t->membarrier && !(was & FW_NKEYED_FENCED)) {
		/* The waiter's half of the asymmetric pair (fw_released_waiters):
		 * every thread passes a full barrier after our increment and
		 * before our first ready().  Not under the lock: the call
		 * interrupts every running thread of the process, and
		 * nothing is queued yet, so dropping the lock lets no wake
		 * miss us (the count says we are here).  Then FENCED, while
		 * we keep the count above 0: a release that read the count 0
		 * read it before an increment that a membarrier followed, so
		 * its store was visible to everyone when that call returned,
		 * and a later latch waiter (which finds FENCED under this
		 * lock, after it) sees the store without a call of its own.
		 * One call per contention episode of the bucket, not per
		 * wait: on a VM an expedited membarrier's IPIs cost tens of
		 * microseconds (docs/benchmarks.md). */
		pthread_mutex_unlock(&b->lock);
		fw_membarrier();
		pthread_mutex_lock(&b->lock);
		atomic_fetch_or_explicit(&b->nkeyed, FW_NKEYED_FENCED, memory_order_relaxed);
	}
	for (;;) {
		if (ready(arg))
			break;
		/* FAIR: woken as the oldest exclusive waiter and the
		 * condition was taken first: keep our place. */
		fw_requeue(t, b, &w, woken);

		bool raced;
		int state = fw_sleep(t, b, &w, deadline, &raced);
		out->sleeps++;
		if (state == FW_TIMEDOUT) {
			/* Not woken.  One last look, under the lock. */
			woken = false;
			if (!ready(arg)) {
				FW_STAT(b, timeouts, 1);
				rc = -ETIMEDOUT;
			}
			break;
		}
		woken = true;
		/* The token was written before the post that woke us (the
		 * parker's acquire orders it): the waker handed us something,
		 * which the deadline cannot take back.  Leaving needs no lock:
		 * the count's decrement is relaxed either way (leave()). */
		if (ex && w.token) {
			out->token = w.token;
			fw_nkeyed_leave(b);
			out->how = FWAIT_HOW_WOKEN;
			return 0;
		}
		if (raced) {
			/* Woken as the deadline passed.  If the condition does
			 * not hold for us, an exclusive wake must go on to the
			 * next exclusive waiter, or it would be lost. */
			struct fw_wake_list l = { 0 };
			pthread_mutex_lock(&b->lock);
			if (!ready(arg)) {
				FW_STAT(b, timeouts, 1);
				rc = -ETIMEDOUT;
				struct fw_waiter *next = exclusive ?
					fw_first_exclusive(b, key, FW_GENERIC_BIT, NULL, NULL) : NULL;
				if (next)
					fw_choose(b, &l, next);
			}
			leave(b);
			fw_signal_all(&l, FW_WOKEN);
			out->how = rc ? FWAIT_HOW_TIMEDOUT : FWAIT_HOW_WOKEN;
			return rc;
		}
		pthread_mutex_lock(&b->lock);
	}
	leave(b);
	out->how = rc ? FWAIT_HOW_TIMEDOUT : woken ? FWAIT_HOW_WOKEN : FWAIT_HOW_LOCKED;
	return rc;
}

int fwait_wait(struct fwait_table *t, const void *key, unsigned flags,
	       fwait_ready_fn ready, void *arg, const struct timespec *deadline)
{
	struct fwait_wait_result r;
	return keyed_wait(t, key, flags, ready, arg, deadline, false, false, &r);
}

int fwait_wait_ex(struct fwait_table *t, const void *key, unsigned flags,
		  fwait_ready_fn ready, void *arg, const struct timespec *deadline,
		  struct fwait_wait_result *out)
{
	struct fwait_wait_result r;
	return keyed_wait(t, key, flags, ready, arg, deadline, true, false, out ? out : &r);
}

int fw_wait_latch(struct fwait_table *t, const void *key, unsigned flags, fwait_ready_fn ready,
		  void *arg, const struct timespec *deadline, bool store_release,
		  struct fwait_wait_result *out)
{
	return keyed_wait(t, key, flags, ready, arg, deadline, true, store_release, out);
}

/* A chosen waiter of key itself: under FWAIT_BROADCAST a wake chooses the
 * whole bucket, but only the key's own waiters are reported and given
 * the token (the others were woken for nothing of the caller's, and
 * re-check their ready()). */
static bool of_key(const struct fw_waiter *w, const void *key)
{
	return w->key == key && w->bit == FW_GENERIC_BIT;
}

/* Under b->lock, after the choice: what fwait_wake_ex's callback is told. */
static struct fwait_wake_report report_of(const struct fwait_table *t, const struct fw_bucket *b,
					  const void *key, const struct fw_wake_list *l)
{
	struct fwait_wake_report r = { 0 };
	const struct fw_waiter *oldest = NULL;

	for (const struct fw_waiter *w = l->first; w; w = w->next) {
		if (!of_key(w, key))
			continue;
		r.woken++;
		if (!w->exclusive)
			continue;
		if (!oldest)
			oldest = w; /* the list is in FIFO order */
		r.woken_exclusive++;
	}
	r.more_waiters = fw_key_queued(b, key, FW_GENERIC_BIT);
	r.due = oldest && t->pf.wake_one && (t->strict || fw_due(t, oldest));
	return r;
}

int fwait_wake_ex(struct fwait_table *t, const void *key, uint32_t nr, unsigned flags,
		  fwait_wake_fn cb, void *arg)
{
	if (t == NULL || key == NULL || (flags & ~FWAIT_WAKE_EXCLUSIVE_ONLY))
		return -EINVAL;

	debug_assert_msg(!fwait_witness_holds_rank(UTIL_RANK_FW_BUCKET),
			 "fwait_wake called under a bucket or pool lock (from a ready() callback?)");
	struct fw_bucket *b = fw_bucket_of(t, key);
	struct fw_wake_list l = { 0 };

	/* With a callback the lock is always taken: the callback may change
	 * the caller's word (clear its waiters bit), which must be ordered
	 * against every waiter's ready() by the lock they run under; skipped
	 * unlocked, a waiter arriving after the skip could set the bit that
	 * the late callback then clears, and sleep unseen. */
	if (cb == NULL && !t->pf.unfiltered) {
		CHAOS_POINT("keyed.c:fwait_wake:before_fence");
		/* The waker's half of the Dekker pair (design note): the fence
		 * orders the caller's write of the condition before the read
		 * of nkeyed, against the waiter's increment and fence. */
		atomic_thread_fence(memory_order_seq_cst);
		if (atomic_load_explicit(&b->nkeyed, memory_order_relaxed) == 0)
			return 0;
	}
	CHAOS_POINT("keyed.c:fwait_wake:before_lock");
	pthread_mutex_lock(&b->lock);
	FW_STAT(b, slow_wakes, 1);
	fw_collect(t, b, key, FW_GENERIC_BIT, !(flags & FWAIT_WAKE_EXCLUSIVE_ONLY),
		   t->pf.wake_one ? nr : FWAIT_ALL, &l);
	if (cb) {
		struct fwait_wake_report r = report_of(t, b, key, &l);
		uint64_t token = cb(&r, arg);
		if (token == FWAIT_WAKE_CANCEL) {
			/* Nobody chosen has been told yet: they go back as
			 * they were, and nobody wakes. */
			fw_unchoose(b, &l);
			pthread_mutex_unlock(&b->lock);
			return 0;
		}
		/* Written before fw_signal_all's post to each waiter, which
		 * orders it for the waiter (fw_waiter.token). */
		for (struct fw_waiter *w = l.first; w && token; w = w->next)
			if (of_key(w, key))
				w->token = token;
		if (token && r.woken)
			FW_STAT(b, handoffs, r.woken);
	}
	pthread_mutex_unlock(&b->lock);
	fw_signal_all(&l, FW_WOKEN);
	return (int)(l.count > INT32_MAX ? INT32_MAX : l.count);
}

int fwait_wake(struct fwait_table *t, const void *key, uint32_t nr)
{
	return fwait_wake_ex(t, key, nr, 0, NULL, NULL);
}

bool fwait_spin(const struct fwait_table *t, fwait_ready_fn ready, void *arg)
{
	if (t == NULL || ready == NULL)
		return false;
	if (ready(arg))
		return true;
	if (!fw_fair(t) || t->spin_ns == 0)
		return false;
	/* As fwait_bit_lock's spin (bitops_word.h): the clock is read every
	 * 16 looks, a pause between looks. */
	uint64_t start = util_now_ns();
	for (unsigned i = 1;; i++) {
		util_cpu_relax();
		if (ready(arg))
			return true;
		if (i % 16 == 0 && util_now_ns() - start >= t->spin_ns)
			break;
	}
	/* Then a few yields before the caller parks.  With more threads
	 * than CPUs the holder is often preempted, and no pause lets it
	 * run; a park costs two context switches and a wake.  A yield hands
	 * the CPU to the holder (or another runnable thread) for a timeslice
	 * and costs one system call when nothing else is runnable.  64
	 * threads on 2 CPUs, 200 ns holds (version_lock_bench, alternating
	 * builds): 0.66-0.79 CPU us per acquisition against 2.39-3.40, parks
	 * per acquisition 0.002-0.006 against 0.045-0.096; a 50 us sleeping
	 * hold, which parks anyway, pays 27-41 us against 23-28
	 * (docs/benchmarks.md). */
	for (unsigned i = 0; i < FW_SPIN_YIELDS; i++) {
		sched_yield();
		if (ready(arg))
			return true;
	}
	return false;
}
