/* SPDX-License-Identifier: MIT */
/*
 * bitops_word.h - the bit operations, written once for any word width.
 *
 * Not a header: a template that bitops.c includes twice (no include guard),
 * once for 32-bit and once for 64-bit words.  It is part of bitops.c (its
 * layer, its calls) and is compiled only there.
 *
 * Design note
 * -----------
 * The includer defines, before each inclusion:
 *   FW_WORD_T      the word's integer type (uint32_t, uint64_t)
 *   FW_ONE         1 of that type (UINT32_C(1), UINT64_C(1))
 *   FW_W_MASK      the word's W bit (FWAIT_WAITERS_MASK, FWAIT64_...)
 *   FW_MAX_BIT     the highest caller bit (FWAIT_MAX_BIT, FWAIT64_...)
 *   FW_API(n)      the public name of operation n (fwait_bit_n, ...)
 *   FW_LOCAL(n)    the name of static helper n (n##32, n##64)
 *   FW_FUTEX(n)    futex.c's entry point n for this width
 * and this file #undefs them all at its end.  The protocol, and why it
 * loses no wakeup, is bitops.c's design note: it does not depend on the
 * width, only on W and the bit being in one atomically updated word.
 * Every memory-order comment below holds for both widths.
 */

static int FW_LOCAL(check_bit_args)(const _Atomic FW_WORD_T *word, unsigned bit)
{
	return (word == NULL || bit > FW_MAX_BIT) ? -EINVAL : 0;
}

static FW_WORD_T FW_LOCAL(bit_mask)(unsigned bit)
{
	return FW_ONE << bit;
}

/* Under b->lock: take the bit if it is free (true), else make sure W is set
 * so that the holder's release comes to this bucket (false). */
static bool FW_LOCAL(take_or_announce)(_Atomic FW_WORD_T *word, FW_WORD_T m)
{
	FW_WORD_T v = atomic_load_explicit(word, memory_order_relaxed);

	for (;;) {
		if (!(v & m)) {
			/* acquire: pairs with the release RMW of the previous
			 * holder's unlock, publishing its critical section. */
			if (atomic_compare_exchange_weak_explicit(word, &v, v | m,
					memory_order_acquire, memory_order_relaxed))
				return true;
		} else if (v & FW_W_MASK) {
			return false;
		} else if (atomic_compare_exchange_weak_explicit(word, &v,
				v | FW_W_MASK,
				memory_order_relaxed, memory_order_relaxed)) {
			/* relaxed: the releaser reads W through its own RMW on
			 * this word (see the design note); the bucket lock
			 * orders our enqueue before its walk. */
			return false;
		}
	}
}

/* Under b->lock: true if the bit is clear (with acquire), else make sure W
 * is set and return false. */
static bool FW_LOCAL(clear_or_announce)(_Atomic FW_WORD_T *word, FW_WORD_T m)
{
	/* acquire: pairs with the release RMW of fwait_bit_clear / unlock, so
	 * what the clearer published is visible once we see the bit clear. */
	FW_WORD_T v = atomic_load_explicit(word, memory_order_acquire);

	for (;;) {
		if (!(v & m))
			return true;
		if (v & FW_W_MASK)
			return false;
		/* acquire on both outcomes: a failed CAS reloads v, and if
		 * that shows the bit clear we return true on its strength. */
		if (atomic_compare_exchange_weak_explicit(word, &v, v | FW_W_MASK,
				memory_order_acquire, memory_order_acquire))
			return false;
	}
}

/* Under b->lock: clear W once no waiter of the word is queued.  W is only
 * set under this lock, so the walk is exact; relaxed, as the releasers read W
 * through their own RMW on the word. */
static void FW_LOCAL(tidy_waiters_bit)(struct fw_bucket *b, _Atomic FW_WORD_T *word)
{
	if (!fw_word_has_waiters(b, (const void *)word))
		atomic_fetch_and_explicit(word, ~FW_W_MASK, memory_order_relaxed);
}

bool FW_API(test)(const _Atomic FW_WORD_T *word, unsigned bit)
{
	if (FW_LOCAL(check_bit_args)(word, bit))
		return false;
	/* acquire: pairs with the release of clear / unlock. */
	return atomic_load_explicit(word, memory_order_acquire) & FW_LOCAL(bit_mask)(bit);
}

int FW_API(trylock)(_Atomic FW_WORD_T *word, unsigned bit)
{
	if (FW_LOCAL(check_bit_args)(word, bit))
		return -EINVAL;
	/* acquire: pairs with the release RMW of the previous unlock. */
	if (atomic_fetch_or_explicit(word, FW_LOCAL(bit_mask)(bit), memory_order_acquire) & FW_LOCAL(bit_mask)(bit))
		return -EBUSY;
	return 0;
}

/* bit_sleep, the sleeping half of fwait_bit_lock (exclusive: take the bit)
 * and fwait_bit_wait (not exclusive: see the bit clear), on the table, is a
 * loop of named steps (as Linux's __wait_on_bit loops over its action):
 * under the bucket lock, bit_ready ends the wait or announces it; bit_queue
 * queues the waiter; fw_sleep sleeps; then its outcome either ends the wait
 * (bit_timed_out, bit_raced, a handoff: bit_done) or, after a plain wake,
 * goes round again under the lock. */

/* Under b->lock: the wait is over (the bit taken, or seen clear), or W is
 * announced so that the next release comes to this bucket. */
static bool FW_LOCAL(bit_ready)(_Atomic FW_WORD_T *word, FW_WORD_T m, bool exclusive)
{
	return exclusive ? FW_LOCAL(take_or_announce)(word, m) :
			   FW_LOCAL(clear_or_announce)(word, m);
}

/* The wait succeeded: an exclusive waiter holds the bit from now on (the
 * start of a hold its unlock may measure).  0, what bit_sleep returns. */
static int FW_LOCAL(bit_done)(struct fwait_table *t, _Atomic FW_WORD_T *word, unsigned bit,
			      bool exclusive)
{
	if (exclusive)
		hold_begin(t, word, bit);
	return 0;
}

/* Under b->lock: queue w, after a wake (woken) or for the first time. */
static void FW_LOCAL(bit_queue)(struct fwait_table *t, struct fw_bucket *b,
				struct fw_waiter *w, bool woken)
{
	/* Woken as the oldest, and a running thread took the bit first: back
	 * to the head of the key (fw_requeue).  Now due, or are holds long?
	 * Then the next unlock hands off: tell the spinners to queue instead
	 * (relaxed: a hint, see internal.h). */
	if (fw_requeue(t, b, w, woken) && (fw_due(t, w) || fw_holds_long(t, b)))
		atomic_store_explicit(&b->handing, true, memory_order_relaxed);
}

/* fw_sleep timed out with w still queued (it returned with b->lock held and
 * w unlinked): tidy W and give up.  -ETIMEDOUT. */
static int FW_LOCAL(bit_timed_out)(struct fw_bucket *b, _Atomic FW_WORD_T *word)
{
	FW_STAT(b, timeouts, 1);
	FW_LOCAL(tidy_waiters_bit)(b, word);
	pthread_mutex_unlock(&b->lock);
	return -ETIMEDOUT;
}

/* Chosen (state) just as our deadline passed; no lock held.  0 or
 * -ETIMEDOUT, whichever is true now. */
static int FW_LOCAL(bit_raced)(struct fwait_table *t, struct fw_bucket *b,
			       _Atomic FW_WORD_T *word, unsigned bit, bool exclusive,
			       int state)
{
	/* A handoff gave us the bit: pass it on to the next waiter rather
	 * than strand it.  A plain wake (WAKE_ALL, BROADCAST, clear, or
	 * FAIR's wake of the oldest) came after a release; report what is
	 * true now: if the trylock fails, the bit has a holder, and W is set
	 * while anyone of the word is still queued, so that holder's unlock
	 * wakes the next waiter: nothing is stranded. */
	if (state == FW_HANDED)
		FW_API(unlock)(t, word, bit);
	bool done = state != FW_HANDED &&
		(exclusive ? FW_API(trylock)(word, bit) == 0 : !FW_API(test)(word, bit));
	if (!done) {
		FW_STAT(b, timeouts, 1);
		return -ETIMEDOUT;
	}
	return FW_LOCAL(bit_done)(t, word, bit, exclusive);
}

static int FW_LOCAL(bit_sleep)(struct fwait_table *t, _Atomic FW_WORD_T *word, unsigned bit,
			       bool exclusive, const struct timespec *deadline)
{
	FW_WORD_T m = FW_LOCAL(bit_mask)(bit);
	struct fw_bucket *b = fw_bucket_of(t, word);
	struct fw_waiter w;

	CHAOS_POINT("bitops:bit_sleep:before_announce");
	fw_waiter_init(&w, word, (int)bit, exclusive);
	pthread_mutex_lock(&b->lock);
	FW_STAT(b, slow_waits, 1);
	for (bool woken = false;; woken = true) {
		/* Re-checked after every wake: a lock can be taken, and an
		 * event bit such as WRITEBACK set again, before we run.
		 * take_or_announce re-announces W in the same RMW that finds
		 * the bit taken, so a woken loser (dequeued by its waker, who
		 * may have cleared W as it left nobody queued) is covered by
		 * the design note's argument exactly as a first-time waiter. */
		if (FW_LOCAL(bit_ready)(word, m, exclusive)) {
			pthread_mutex_unlock(&b->lock);
			return FW_LOCAL(bit_done)(t, word, bit, exclusive);
		}
		FW_LOCAL(bit_queue)(t, b, &w, woken);

		bool raced;
		int state = fw_sleep(t, b, &w, deadline, &raced);
		if (state == FW_TIMEDOUT)
			return FW_LOCAL(bit_timed_out)(b, word);
		if (raced)
			return FW_LOCAL(bit_raced)(t, b, word, bit, exclusive, state);
		if (state == FW_HANDED) /* the unlocker left the bit set for us */
			return FW_LOCAL(bit_done)(t, word, bit, exclusive);
		pthread_mutex_lock(&b->lock);
	}
}

/* FAIR: spin up to t->spin_ns for the bit to look free, then CAS it; true
 * if taken.  Gives up at once while the bucket is handing bits over: a due
 * waiter will be given the bit without its ever being free. */
static bool FW_LOCAL(spin_for_bit)(struct fwait_table *t, _Atomic FW_WORD_T *word, FW_WORD_T m)
{
	struct fw_bucket *b = fw_bucket_of(t, word);
	uint64_t start = util_now_ns();

	for (unsigned i = 1;; i++) {
		/* Relaxed: a hint (internal.h), it decides nothing. */
		if (atomic_load_explicit(&b->handing, memory_order_relaxed))
			return false;
		/* Relaxed: only a look; the CAS below is what acquires. */
		FW_WORD_T v = atomic_load_explicit(word, memory_order_relaxed);
		/* acquire on success: pairs with the release RMW of the
		 * unlock that freed the bit (its critical section). */
		if (!(v & m) && atomic_compare_exchange_weak_explicit(word, &v, v | m,
				memory_order_acquire, memory_order_relaxed))
			return true;
		if (i % 16 == 0 && util_now_ns() - start >= t->spin_ns)
			return false;
		util_cpu_relax();
	}
}

int FW_API(lock)(struct fwait_table *t, _Atomic FW_WORD_T *word, unsigned bit,
		   const struct timespec *deadline)
{
	if (t == NULL || FW_LOCAL(check_bit_args)(word, bit) || !fwait_deadline_valid(deadline))
		return -EINVAL;
	if (FW_API(trylock)(word, bit) == 0)
		return 0; /* uncontended: one atomic op, no table access */
	if (t->pf.on_word)
		return FW_FUTEX(wait)(t, word, FW_LOCAL(bit_mask)(bit), true, deadline);
	if (fw_fair(t) && t->spin_ns && FW_LOCAL(spin_for_bit)(t, word, FW_LOCAL(bit_mask)(bit)))
		return 0;
	return FW_LOCAL(bit_sleep)(t, word, bit, true, deadline);
}

/* WAKE_ONE: the bit is still ours and W was seen.  Decide under the bucket
 * lock, with the bit still held (as parking_lot's unlock_slow does), so the
 * choice between handing over and releasing sees the queue as it is:
 *  - the oldest exclusive waiter is handed the bit (it stays set) under
 *    STRICT, or under FAIR if it is due (fw_due) or the bucket's holds are
 *    long (fw_holds_long, after this hold's vote if it was measured);
 *  - otherwise the bit is released, and the oldest exclusive waiter (if any)
 *    and every non-exclusive waiter of the key are woken to race for it. */
static int FW_LOCAL(unlock_wake_one)(struct fwait_table *t, struct fw_bucket *b,
			   _Atomic FW_WORD_T *word, unsigned bit, FW_WORD_T m)
{
	struct fw_wake_list l = { 0 };
	uint64_t walked = 0, hold;
	/* Outside the lock: the clock read of a hold this thread began. */
	bool measured = fw_fair(t) && hold_end(word, bit, &hold);

	pthread_mutex_lock(&b->lock);
	FW_STAT(b, slow_wakes, 1);
	if (measured)
		fw_hold_vote(t, b, hold);
	bool others;
	struct fw_waiter *w = fw_first_exclusive(b, word, (int)bit, &others, &walked);
	if (w && (t->strict || fw_due(t, w) || fw_holds_long(t, b))) {
		/* The bit stays set: ownership passes to w.  The mutex
		 * handshake in fw_signal_all orders our critical section
		 * before w's. */
		if (fw_fair(t)) /* relaxed: a hint for spinners, internal.h */
			atomic_store_explicit(&b->handing, true, memory_order_relaxed);
		if (walked)
			FW_STAT(b, foreign, walked);
		fw_choose(b, &l, w);
		FW_STAT(b, handoffs, 1);
		/* W is exact under the bucket lock (see tidy_waiters_bit). */
		if (!others)
			atomic_fetch_and_explicit(word, ~FW_W_MASK, memory_order_relaxed);
		pthread_mutex_unlock(&b->lock);
		fw_signal_all(&l, FW_HANDED);
		return 0;
	}

	/* Release: wake the oldest exclusive waiter (FAIR; STRICT found none)
	 * and every waiter that only waits for the bit to clear.  One RMW
	 * clears the bit and, if they were the last waiters of the word, W
	 * too; a woken exclusive waiter that then loses the race sets W again
	 * under this lock before it sleeps (bit_sleep).  release: pairs with
	 * the acquire of the next locker (woken, spinning or new) or of a
	 * bit_wait that sees the bit clear. */
	if (fw_fair(t))
		atomic_store_explicit(&b->handing, false, memory_order_relaxed);
	fw_collect(t, b, word, (int)bit, true, 1, &l);
	FW_WORD_T clear = m;
	if (!fw_word_has_waiters(b, word))
		clear |= FW_W_MASK;
	atomic_fetch_and_explicit(word, ~clear, memory_order_release);
	pthread_mutex_unlock(&b->lock);
	fw_signal_all(&l, FW_WOKEN);
	return 0;
}

int FW_API(unlock)(struct fwait_table *t, _Atomic FW_WORD_T *word, unsigned bit)
{
	if (t == NULL || FW_LOCAL(check_bit_args)(word, bit))
		return -EINVAL;

	FW_WORD_T m = FW_LOCAL(bit_mask)(bit);
	if (t->pf.on_word)
		return FW_FUTEX(unlock)(t, word, m);

	FW_WORD_T v = atomic_load_explicit(word, memory_order_relaxed);
	for (;;) {
		if (!(v & m))
			return -EPERM;
		if (v & FW_W_MASK)
			break;
		/* Uncontended: clear the bit and test W in one RMW (see the
		 * design note).  release: pairs with the acquire of whoever
		 * takes the bit next. */
		if (atomic_compare_exchange_weak_explicit(word, &v, v & ~m,
				memory_order_release, memory_order_relaxed))
			return 0;
	}

	CHAOS_POINT("bitops:unlock:contended_before_lock");
	struct fw_bucket *b = fw_bucket_of(t, word);
	if (t->pf.wake_one)
		return FW_LOCAL(unlock_wake_one)(t, b, word, bit, m);

	/* WAKE_ALL, BROADCAST (not pf.wake_one): release first, then wake every waiter of the
	 * key (the bucket).  release: pairs with the next locker's acquire. */
	atomic_fetch_and_explicit(word, ~m, memory_order_release);

	struct fw_wake_list woken = { 0 };
	pthread_mutex_lock(&b->lock);
	FW_STAT(b, slow_wakes, 1);
	fw_collect(t, b, word, (int)bit, true, FWAIT_ALL, &woken);
	FW_LOCAL(tidy_waiters_bit)(b, word);
	pthread_mutex_unlock(&b->lock);
	fw_signal_all(&woken, FW_WOKEN);
	return 0;
}

int FW_API(wait)(struct fwait_table *t, _Atomic FW_WORD_T *word, unsigned bit,
		   const struct timespec *deadline)
{
	if (t == NULL || FW_LOCAL(check_bit_args)(word, bit) || !fwait_deadline_valid(deadline))
		return -EINVAL;
	if (!FW_API(test)(word, bit))
		return 0; /* already clear: one load, no table access */
	if (t->pf.on_word)
		return FW_FUTEX(wait)(t, word, FW_LOCAL(bit_mask)(bit), false, deadline);
	return FW_LOCAL(bit_sleep)(t, word, bit, false, deadline);
}

bool FW_API(set)(_Atomic FW_WORD_T *word, unsigned bit)
{
	if (FW_LOCAL(check_bit_args)(word, bit))
		return false;
	/* acq_rel: acquire pairs with the release of the clear that ended the
	 * previous event (test_set_page_writeback uses it as a try-lock);
	 * release publishes what the setter did before announcing it. */
	return atomic_fetch_or_explicit(word, FW_LOCAL(bit_mask)(bit), memory_order_acq_rel) & FW_LOCAL(bit_mask)(bit);
}

int FW_API(clear)(struct fwait_table *t, _Atomic FW_WORD_T *word, unsigned bit)
{
	if (t == NULL || FW_LOCAL(check_bit_args)(word, bit))
		return -EINVAL;

	FW_WORD_T m = FW_LOCAL(bit_mask)(bit);
	/* release: pairs with the acquire load in fwait_bit_wait.  W is read
	 * in the same RMW (see the design note). */
	FW_WORD_T old = atomic_fetch_and_explicit(word, ~m, memory_order_release);
	if (!(old & FW_W_MASK))
		return 0;
	CHAOS_POINT("bitops:clear:cleared_before_wake");
	if (t->pf.on_word) {
		FW_FUTEX(wake_all)(t, word, m);
		return 0;
	}

	struct fw_bucket *b = fw_bucket_of(t, word);
	struct fw_wake_list l = { 0 };
	pthread_mutex_lock(&b->lock);
	FW_STAT(b, slow_wakes, 1);
	fw_collect(t, b, word, (int)bit, true, FWAIT_ALL, &l);
	FW_LOCAL(tidy_waiters_bit)(b, word);
	pthread_mutex_unlock(&b->lock);
	fw_signal_all(&l, FW_WOKEN);
	return 0;
}

#undef FW_WORD_T
#undef FW_ONE
#undef FW_W_MASK
#undef FW_MAX_BIT
#undef FW_API
#undef FW_LOCAL
#undef FW_FUTEX
