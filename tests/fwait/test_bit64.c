/* SPDX-License-Identifier: MIT */
/*
 * test_bit64.c - fwait_bit64_*: the bit operations on a 64-bit word.
 *
 * Design note: fwait_bit64_* is the same code as fwait_bit_* (bitops_word.h
 * and futex_word.h, instantiated twice), so these cases check what the
 * width changes, on every policy: mutual exclusion under contention on a
 * bit of the low half (3) and of the high half (40, and 62, the highest),
 * which under FWAIT_FUTEX sleeps on the other 32-bit half than the one W
 * (bit 63) lives in; W cleared once contention ends (except FUTEX, where it
 * is sticky by design); wait/clear waking every waiter; timeouts; the bad
 * arguments (bit 63 and 64, NULL, a bad deadline, -EPERM, -EBUSY); and that
 * the caller's other bits, in both halves, are never disturbed.  Waiters
 * are counted as parked with fwait_waiters_walk (not FUTEX: the kernel
 * holds those, so there main only waits for them to have started; a
 * clear before one sleeps finds the bit clear and is not lost either).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "helpers.h"
#include "../check_run.h"

static const unsigned test_bits[] = { 3, 40, 62 };
#define NBITS (sizeof test_bits / sizeof test_bits[0])
/* Bits of the caller's that no case operates on: one in each half. */
#define SENTINELS ((UINT64_C(1) << 5) | (UINT64_C(1) << 33) | (UINT64_C(1) << 61))

#define NTHREADS 6

struct mx {
	struct fwait_table *t;
	_Atomic uint64_t *word;
	unsigned bit;
	unsigned iters;
	atomic_int inside;     /* threads in the critical section */
	atomic_bool overlap;   /* ever more than one */
	unsigned long counter; /* plain: guarded by the bit */
	atomic_int errors;
};

static void *mx_worker(void *arg)
{
	struct mx *m = arg;
	for (unsigned i = 0; i < m->iters; i++) {
		if (fwait_bit64_lock(m->t, m->word, m->bit, NULL) != 0) {
			atomic_fetch_add(&m->errors, 1);
			continue;
		}
		if (atomic_fetch_add(&m->inside, 1) != 0)
			atomic_store(&m->overlap, true);
		m->counter++;
		if ((i & 7) == 0)
			sched_yield(); /* hold it a while: contention */
		atomic_fetch_sub(&m->inside, 1);
		if (fwait_bit64_unlock(m->t, m->word, m->bit) != 0)
			atomic_fetch_add(&m->errors, 1);
	}
	return NULL;
}

/* Loop index: policy * NBITS + bit index. */
START_TEST(mutual_exclusion)
{
	int pol = _i / (int)NBITS;
	unsigned bit = test_bits[_i % (int)NBITS];
	struct fwait_table *t = th_table_for(pol, 8);
	_Atomic uint64_t word = SENTINELS;
	struct mx m = { .t = t, .word = &word, .bit = bit,
			.iters = th_scaled(2000, 200) };
	pthread_t tids[NTHREADS];

	for (int i = 0; i < NTHREADS; i++)
		th_spawn(&tids[i], mx_worker, &m);
	th_join_all(tids, NTHREADS, TH_DEADLINE_MS, "bit64 lockers", t);
	ck_assert_int_eq(atomic_load(&m.errors), 0);
	ck_assert_msg(!atomic_load(&m.overlap), "%s bit %u: two holders at once",
		      tc_variant_name(pol), bit);
	ck_assert_uint_eq(m.counter, (unsigned long)NTHREADS * m.iters);
	uint64_t v = atomic_load(&word);
	/* Only the sentinels are left; W too under FUTEX (sticky). */
	if (pol == FWAIT_FUTEX)
		v &= ~FWAIT64_WAITERS_MASK;
	ck_assert_msg(v == SENTINELS, "%s bit %u: word %#llx",
		      tc_variant_name(pol), bit, (unsigned long long)atomic_load(&word));
	ck_assert_uint_eq(th_parked(t), 0);
	fwait_table_destroy(t);
}
END_TEST

struct waiter {
	struct fwait_table *t;
	_Atomic uint64_t *word;
	unsigned bit;
	atomic_int *started;
	int rc;
};

static void *wait_worker(void *arg)
{
	struct waiter *w = arg;
	atomic_fetch_add(w->started, 1);
	w->rc = fwait_bit64_wait(w->t, w->word, w->bit, NULL);
	return NULL;
}

static bool all_started(void *arg)
{
	return atomic_load((atomic_int *)arg) == NTHREADS;
}

START_TEST(clear_wakes_every_waiter)
{
	int pol = _i / (int)NBITS;
	unsigned bit = test_bits[_i % (int)NBITS];
	struct fwait_table *t = th_table_for(pol, 8);
	_Atomic uint64_t word = SENTINELS;
	atomic_int started = 0;
	struct waiter w[NTHREADS];
	pthread_t tids[NTHREADS];

	ck_assert(!fwait_bit64_set(&word, bit));
	ck_assert(fwait_bit64_set(&word, bit));
	ck_assert(fwait_bit64_test(&word, bit));
	for (int i = 0; i < NTHREADS; i++) {
		w[i] = (struct waiter){ t, &word, bit, &started, -1 };
		th_spawn(&tids[i], wait_worker, &w[i]);
	}
	ck_assert(th_poll(all_started, &started, TH_DEADLINE_MS));
	if (pol != FWAIT_FUTEX) {
		ck_assert(th_wait_parked(t, NTHREADS, TH_DEADLINE_MS));
		ck_assert_uint_eq(tc_parked_on(t, (const void *)&word, (int)bit), NTHREADS);
		ck_assert(atomic_load(&word) & FWAIT64_WAITERS_MASK);
	}
	ck_assert_int_eq(fwait_bit64_clear(t, &word, bit), 0);
	th_join_all(tids, NTHREADS, TH_DEADLINE_MS, "bit64 waiters", t);
	for (int i = 0; i < NTHREADS; i++)
		ck_assert_int_eq(w[i].rc, 0);
	ck_assert(!fwait_bit64_test(&word, bit));
	uint64_t v = atomic_load(&word);
	if (pol == FWAIT_FUTEX)
		v &= ~FWAIT64_WAITERS_MASK;
	ck_assert_uint_eq(v, SENTINELS);
	fwait_table_destroy(t);
}
END_TEST

/* Loop index: policy. */
START_TEST(timeouts)
{
	struct fwait_table *t = th_table_for(_i, 8);
	_Atomic uint64_t word = SENTINELS;
	struct fwait_stats st;

	ck_assert_int_eq(fwait_bit64_trylock(&word, 40), 0);
	/* start before the deadline: a preemption between the two would
	 * otherwise shorten the wait the check expects (it did, under
	 * qemu on a loaded machine: 17.1 ms). */
	uint64_t start = util_now_ns();
	struct timespec dl = fwait_deadline_after_ns(20 * 1000000u);
	ck_assert_int_eq(fwait_bit64_lock(t, &word, 40, &dl), -ETIMEDOUT);
	ck_assert_uint_ge(util_now_ns() - start, 19 * 1000000u);
	struct timespec past = { 0, 0 };
	ck_assert_int_eq(fwait_bit64_lock(t, &word, 40, &past), -ETIMEDOUT);
	ck_assert_int_eq(fwait_bit64_wait(t, &word, 40, &past), -ETIMEDOUT);
	ck_assert(!fwait_bit64_set(&word, 2));
	dl = fwait_deadline_after_ns(2 * 1000000u);
	ck_assert_int_eq(fwait_bit64_wait(t, &word, 2, &dl), -ETIMEDOUT);
	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.timeouts, 4);
	ck_assert_uint_eq(th_parked(t), 0);
	uint64_t v = atomic_load(&word);
	if (_i == FWAIT_FUTEX)
		v &= ~FWAIT64_WAITERS_MASK;
	ck_assert_uint_eq(v, SENTINELS | (UINT64_C(1) << 40) | (UINT64_C(1) << 2));
	ck_assert_int_eq(fwait_bit64_unlock(t, &word, 40), 0);
	ck_assert_int_eq(fwait_bit64_clear(t, &word, 2), 0);
	v = atomic_load(&word);
	if (_i == FWAIT_FUTEX)
		v &= ~FWAIT64_WAITERS_MASK;
	ck_assert_uint_eq(v, SENTINELS);
	fwait_table_destroy(t);
}
END_TEST

START_TEST(bad_arguments)
{
	struct fwait_table *t = th_table_for(_i, 8);
	_Atomic uint64_t word = SENTINELS;
	struct timespec bad = { 0, 1000000000L };

	for (unsigned bit = 63; bit <= 64; bit++) {
		ck_assert_int_eq(fwait_bit64_lock(t, &word, bit, NULL), -EINVAL);
		ck_assert_int_eq(fwait_bit64_trylock(&word, bit), -EINVAL);
		ck_assert_int_eq(fwait_bit64_unlock(t, &word, bit), -EINVAL);
		ck_assert_int_eq(fwait_bit64_wait(t, &word, bit, NULL), -EINVAL);
		ck_assert(!fwait_bit64_set(&word, bit));
		ck_assert_int_eq(fwait_bit64_clear(t, &word, bit), -EINVAL);
		ck_assert(!fwait_bit64_test(&word, bit));
	}
	ck_assert_int_eq(fwait_bit64_lock(t, NULL, 1, NULL), -EINVAL);
	ck_assert_int_eq(fwait_bit64_lock(NULL, &word, 1, NULL), -EINVAL);
	ck_assert_int_eq(fwait_bit64_lock(t, &word, 1, &bad), -EINVAL);
	ck_assert_int_eq(fwait_bit64_trylock(NULL, 1), -EINVAL);
	ck_assert_int_eq(fwait_bit64_unlock(t, NULL, 1), -EINVAL);
	ck_assert_int_eq(fwait_bit64_unlock(NULL, &word, 1), -EINVAL);
	ck_assert_int_eq(fwait_bit64_wait(t, NULL, 1, NULL), -EINVAL);
	ck_assert_int_eq(fwait_bit64_wait(NULL, &word, 1, NULL), -EINVAL);
	ck_assert_int_eq(fwait_bit64_wait(t, &word, 1, &bad), -EINVAL);
	ck_assert(!fwait_bit64_set(NULL, 1));
	ck_assert_int_eq(fwait_bit64_clear(t, NULL, 1), -EINVAL);
	ck_assert_int_eq(fwait_bit64_clear(NULL, &word, 1), -EINVAL);
	ck_assert(!fwait_bit64_test(NULL, 1));
	/* -EPERM: unlocking a clear bit, low and high half, changes nothing. */
	ck_assert_int_eq(fwait_bit64_unlock(t, &word, 1), -EPERM);
	ck_assert_int_eq(fwait_bit64_unlock(t, &word, 62), -EPERM);
	/* -EBUSY: a held bit, and a set sentinel, in both halves. */
	ck_assert_int_eq(fwait_bit64_trylock(&word, 62), 0);
	ck_assert_int_eq(fwait_bit64_trylock(&word, 62), -EBUSY);
	ck_assert_int_eq(fwait_bit64_trylock(&word, 33), -EBUSY);
	ck_assert_int_eq(fwait_bit64_trylock(&word, 5), -EBUSY);
	ck_assert_int_eq(fwait_bit64_unlock(t, &word, 62), 0);
	ck_assert_uint_eq(atomic_load(&word), SENTINELS);
	fwait_table_destroy(t);
}
END_TEST

/* Every caller bit, uncontended: one atomic op each, no table access. */
START_TEST(uncontended_skips_table)
{
	struct fwait_table *t = th_table_for(_i, 8);
	_Atomic uint64_t word = 0;
	for (unsigned bit = 0; bit <= FWAIT64_MAX_BIT; bit++) {
		ck_assert_int_eq(fwait_bit64_lock(t, &word, bit, NULL), 0);
		ck_assert(fwait_bit64_test(&word, bit));
		ck_assert_int_eq(fwait_bit64_trylock(&word, bit), -EBUSY);
	}
	ck_assert_uint_eq(atomic_load(&word), FWAIT64_WAITERS_MASK - 1);
	for (unsigned bit = 0; bit <= FWAIT64_MAX_BIT; bit++) {
		ck_assert_int_eq(fwait_bit64_unlock(t, &word, bit), 0);
		ck_assert_uint_eq(atomic_load(&word) & (UINT64_C(1) << bit), 0);
	}
	ck_assert_uint_eq(atomic_load(&word), 0);
	for (unsigned bit = 0; bit <= FWAIT64_MAX_BIT; bit++)
		ck_assert_int_eq(fwait_bit64_wait(t, &word, bit, NULL), 0);
	struct fwait_stats st;
	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.waits, 0);
	ck_assert_uint_eq(st.slow_wakes, 0);
	fwait_table_destroy(t);
}
END_TEST

/* Loop index variant * NBITS + bit index, as "<variant>, bit <n>" (the
 * buffer is reused: th_add_loop copies it at once). */
static const char *variant_bit_label(int i)
{
	static char buf[64];
	snprintf(buf, sizeof(buf), "%s, bit %u", tc_variant_name(i / (int)NBITS),
		 test_bits[i % (int)NBITS]);
	return buf;
}

int main(void)
{
	Suite *su = suite_create("fwait-bit64");
	th_add_loop(su, "bit64", 60, mutual_exclusion,
		    0, TC_NVARIANTS * (int)NBITS, variant_bit_label);
	th_add_loop(su, "bit64", 60, clear_wakes_every_waiter,
		    0, TC_NVARIANTS * (int)NBITS, variant_bit_label);
	th_add_loop(su, "bit64", 60, timeouts, 0, TC_NVARIANTS, tc_variant_name);
	th_add_loop(su, "bit64", 60, bad_arguments, 0, TC_NVARIANTS, tc_variant_name);
	th_add_loop(su, "bit64", 60, uncontended_skips_table, 0, TC_NVARIANTS, tc_variant_name);
	return check_run_suite(su);
}
