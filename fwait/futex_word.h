/* SPDX-License-Identifier: MIT */
/*
 * futex_word.h - the FWAIT_FUTEX policy, written once for any word width.
 *
 * Not a header: a template that futex.c includes twice (no include guard),
 * once for 32-bit and once for 64-bit words, on Linux only.  It is part of
 * futex.c (its layer, its calls) and is compiled only there.
 *
 * Design note
 * -----------
 * The includer defines, before each inclusion:
 *   FW_WORD_T         the word's integer type (uint32_t, uint64_t)
 *   FW_W_MASK         the word's W bit
 *   FW_FUTEX(n)       this width's name of entry point n (internal.h)
 *   FW_LOCAL(n)       the name of static helper n (n##32, n##64)
 *   FW_HALF(word, m)  the 32-bit futex word holding the bits of m (m has
 *                     one bit): the word itself, or one half of it
 *   FW_HALF_VAL(v, m) the value of that half in a word value v
 *   FW_HALF_MASK(m)   m's bit within that half (the futex bitset)
 * and this file #undefs them all at its end.  Why the half-word sleep loses
 * no wakeup is futex.c's design note.  Statistics go to the bucket of the
 * whole word (fw_bucket_of(t, word)), whichever half is slept on.
 */

/* Sleep while the half of the word holding m still reads FW_HALF_VAL(seen).
 * Returns 0 (woken by a wake), -EAGAIN (half changed or signal: just
 * re-check), -ETIMEDOUT. */
static int FW_LOCAL(futex_sleep)(struct fwait_table *t, _Atomic FW_WORD_T *word,
				 FW_WORD_T seen, FW_WORD_T m,
				 const struct timespec *deadline)
{
	struct fw_bucket *b = fw_bucket_of(t, word);
	uint64_t start = b->stats_on ? util_now_ns() : 0;

	FW_STAT(b, waits, 1);
	UTIL_PROBE2(fwait, park, (const void *)word, __builtin_ctzll(m));
	long r = fw_sys_futex(FW_HALF(word, m), FUTEX_WAIT_BITSET, FW_HALF_VAL(seen, m),
			   deadline, FW_HALF_MASK(m));
	int err = r == 0 ? 0 : errno;
	/* start is 0 with statistics off: no clock read for the probe. */
	UTIL_PROBE3(fwait, unpark, (const void *)word, __builtin_ctzll(m), start);
	fw_hist_since(t, b, start);
	if (err == ETIMEDOUT) {
		FW_STAT(b, timeouts, 1);
		return -ETIMEDOUT;
	}
	return err == 0 ? 0 : -EAGAIN;
}

static void FW_LOCAL(wake)(struct fwait_table *t, _Atomic FW_WORD_T *word,
			   FW_WORD_T m, int n)
{
	futex_wake(fw_bucket_of(t, word), FW_HALF(word, m), FW_HALF_MASK(m), n);
}

/* Make sure W is set in v (and in the word); false if the word moved. */
static bool FW_LOCAL(announce)(_Atomic FW_WORD_T *word, FW_WORD_T *v)
{
	if (*v & FW_W_MASK)
		return true;
	/* relaxed: a releaser reads W through its own RMW on the word, and
	 * FUTEX_WAIT re-reads the (half) word under the kernel's bucket lock. */
	if (!atomic_compare_exchange_weak_explicit(word, v, *v | FW_W_MASK,
			memory_order_relaxed, memory_order_relaxed))
		return false;
	*v |= FW_W_MASK;
	return true;
}

int FW_FUTEX(wait)(struct fwait_table *t, _Atomic FW_WORD_T *word, FW_WORD_T m,
		   bool exclusive, const struct timespec *deadline)
{
	/* acquire: pairs with the release in fw_futex_unlock / clear, for a
	 * non-exclusive waiter that returns on seeing the bit clear. */
	FW_WORD_T v = atomic_load_explicit(word, memory_order_acquire);
	bool woken = false;

	for (;;) {
		if (!(v & m)) {
			if (!exclusive) {
				/* We may have absorbed an unlock's wake-one meant
				 * for a lock waiter: pass it on. */
				if (woken && (v & FW_W_MASK))
					FW_LOCAL(wake)(t, word, m, 1);
				return 0;
			}
			/* acquire: pairs with the release in fw_futex_unlock. */
			if (atomic_compare_exchange_weak_explicit(word, &v, v | m,
					memory_order_acquire, memory_order_acquire))
				return 0;
			continue;
		}
		if (!FW_LOCAL(announce)(word, &v))
			continue;
		if (woken)
			FW_STAT(fw_bucket_of(t, word), spurious, 1);
		int rc = FW_LOCAL(futex_sleep)(t, word, v, m, deadline);
		if (rc == -ETIMEDOUT)
			return rc;
		woken = woken || rc == 0;
		/* acquire: as the first load above. */
		v = atomic_load_explicit(word, memory_order_acquire);
	}
}

int FW_FUTEX(unlock)(struct fwait_table *t, _Atomic FW_WORD_T *word, FW_WORD_T m)
{
	FW_WORD_T v = atomic_load_explicit(word, memory_order_relaxed);

	do {
		if (!(v & m))
			return -EPERM;
		/* release: pairs with the next locker's acquire.  Clears the
		 * bit and reads W in one RMW on the whole word. */
	} while (!atomic_compare_exchange_weak_explicit(word, &v, v & ~m,
			memory_order_release, memory_order_relaxed));
	if (v & FW_W_MASK)
		FW_LOCAL(wake)(t, word, m, 1);
	return 0;
}

void FW_FUTEX(wake_all)(struct fwait_table *t, _Atomic FW_WORD_T *word, FW_WORD_T m)
{
	FW_LOCAL(wake)(t, word, m, INT_MAX);
}

#undef FW_WORD_T
#undef FW_W_MASK
#undef FW_FUTEX
#undef FW_LOCAL
#undef FW_HALF
#undef FW_HALF_VAL
#undef FW_HALF_MASK
