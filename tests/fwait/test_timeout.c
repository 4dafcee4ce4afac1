/* SPDX-License-Identifier: MIT */
/*
 * test_timeout.c - deadlines: -ETIMEDOUT, nothing held, nothing stranded.
 *
 * Design note: the single-waiter tests time out on a bit that main holds
 * (the lock bit has no owner, so main itself can be the waiter).  The race
 * test lets many threads lock with deadlines of 0-2 ms while others
 * unlock and hand off, so deadlines keep expiring exactly while handoffs
 * are in flight; whatever the interleaving, every successful lock must be
 * matched by an unlock, the bit must end clear with nobody parked, and the
 * table's timeout count must equal the -ETIMEDOUT returns the threads saw.
 * (What fairness adds, lost races and handoffs to due waiters: test_fair.c.)
 */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "fwait/internal.h"
#include "helpers.h"
#include "../check_run.h"

#define RACE_ITERS 200
#define RACE_WORDS 2

static bool never_ready(void *arg)
{
	return false;
}

/* Loop index: policy (0..3) or TC_VARIANT_STEAL. */
START_TEST(timeout_on_held_bit)
{
	struct fwait_table *t = th_table_for(_i, 8);
	bool futex = _i == FWAIT_FUTEX;
	_Atomic uint32_t word = 0;
	struct fwait_stats st;

	ck_assert_int_eq(fwait_bit_trylock(&word, 4), 0);
	/* start before the deadline, as test_bit64.c's timeouts. */
	uint64_t start = util_now_ns();
	struct timespec dl = fwait_deadline_after_ns(20 * 1000000u);
	ck_assert_int_eq(fwait_bit_lock(t, &word, 4, &dl), -ETIMEDOUT);
	/* It waited until the deadline (CLOCK_MONOTONIC), not less. */
	ck_assert_uint_ge(util_now_ns() - start, 19 * 1000000u);
	ck_assert_uint_eq(th_parked(t), 0);
	/* Still exactly our bit; the waiters bit was tidied when the waiter
	 * left (futex: sticky by design, see futex.c). */
	if (futex)
		ck_assert_uint_eq(atomic_load(&word) & ~FWAIT_WAITERS_MASK, 1u << 4);
	else
		ck_assert_uint_eq(atomic_load(&word), 1u << 4);

	/* An expired deadline fails fast on a held bit, and on a set event. */
	struct timespec past = { 0, 0 };
	ck_assert_int_eq(fwait_bit_lock(t, &word, 4, &past), -ETIMEDOUT);
	ck_assert_int_eq(fwait_bit_wait(t, &word, 4, &past), -ETIMEDOUT);
	dl = fwait_deadline_after_ns(2 * 1000000u);
	ck_assert_int_eq(fwait_bit_wait(t, &word, 4, &dl), -ETIMEDOUT);
	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.timeouts, 4);

	/* The unlock finds nothing to hand to and leaves the word clean. */
	ck_assert_int_eq(fwait_bit_unlock(t, &word, 4), 0);
	if (futex)
		ck_assert_uint_eq(atomic_load(&word) & ~FWAIT_WAITERS_MASK, 0);
	else
		ck_assert_uint_eq(atomic_load(&word), 0);
	ck_assert_int_eq(fwait_bit_trylock(&word, 4), 0);
	ck_assert_int_eq(fwait_bit_unlock(t, &word, 4), 0);
	ck_assert_int_eq(fwait_bit_unlock(t, &word, 4), -EPERM);

	/* A generic wait times out too, and a deadline on a free bit is
	 * irrelevant: the bit is simply taken. */
	int key;
	dl = fwait_deadline_after_ns(2 * 1000000u);
	ck_assert_int_eq(fwait_wait(t, &key, FWAIT_EXCLUSIVE, never_ready, NULL, &dl), -ETIMEDOUT);
	ck_assert_int_eq(fwait_wait(t, &key, 0, never_ready, NULL, &past), -ETIMEDOUT);
	ck_assert_int_eq(fwait_bit_lock(t, &word, 4, &past), 0);
	ck_assert_int_eq(fwait_bit_unlock(t, &word, 4), 0);
	ck_assert_uint_eq(th_parked(t), 0);
	fwait_table_destroy(t);
}
END_TEST

struct race {
	struct fwait_table *t;
	_Atomic uint32_t words[RACE_WORDS];
	uint64_t counters[RACE_WORDS]; /* guarded by bit 0 of words[i] */
	pthread_barrier_t start;
};

struct racer {
	struct race *r;
	unsigned id;
	uint64_t locked[RACE_WORDS], lock_timeouts, wait_ok, wait_timeouts;
	int bad_rc;
	const char *bad_op;
};

static void racer_bad(struct racer *me, const char *op, int rc)
{
	if (!me->bad_rc) {
		me->bad_rc = rc;
		me->bad_op = op;
	}
}

static void *racer_main(void *arg)
{
	struct racer *me = arg;
	struct race *r = me->r;
	uint64_t rng = util_rand_seed(7, me->id);

	pthread_barrier_wait(&r->start);
	for (unsigned i = 0; i < RACE_ITERS; i++) {
		uint64_t x = util_rand_next(&rng);
		unsigned w = (unsigned)(x % RACE_WORDS);
		/* A quarter of the deadlines are 0-50 us (expire at once),
		 * the rest 0.05-2 ms (expire around a handoff). */
		uint64_t ns = (x >> 10) % 4 == 0 ? (x >> 12) % 50000u
						 : 50000u + (x >> 12) % 1950000u;
		struct timespec dl = fwait_deadline_after_ns(ns);
		if ((x >> 40) % 4 == 0) {
			/* A bit_wait on the lock bit: "until it is free". */
			int rc = fwait_bit_wait(r->t, &r->words[w], 0, &dl);
			if (rc == 0)
				me->wait_ok++;
			else if (rc == -ETIMEDOUT)
				me->wait_timeouts++;
			else
				racer_bad(me, "bit_wait", rc);
			continue;
		}
		int rc = fwait_bit_lock(r->t, &r->words[w], 0, &dl);
		if (rc == -ETIMEDOUT) {
			me->lock_timeouts++;
			continue;
		}
		if (rc) {
			racer_bad(me, "bit_lock", rc);
			continue;
		}
		r->counters[w]++;
		me->locked[w]++;
		if ((x >> 32) % 2)
			sched_yield(); /* hold it across a reschedule */
		rc = fwait_bit_unlock(r->t, &r->words[w], 0);
		if (rc)
			racer_bad(me, "bit_unlock", rc);
	}
	return NULL;
}

START_TEST(timeouts_race_handoffs)
{
	unsigned n = th_scaled(128, 64);
	struct race *r = calloc(1, sizeof(*r));
	struct racer *rs = calloc(n, sizeof(*rs));
	pthread_t *tids = calloc(n, sizeof(*tids));
	ck_assert(r && rs && tids);

	r->t = th_table_for(_i, 2);
	pthread_barrier_init(&r->start, NULL, n);
	for (unsigned k = 0; k < n; k++) {
		rs[k].r = r;
		rs[k].id = k;
		th_spawn(&tids[k], racer_main, &rs[k]);
	}
	th_join_all(tids, n, TH_DEADLINE_MS, "timeout racers", r->t);

	uint64_t locked[RACE_WORDS] = { 0 }, timeouts = 0, lock_timeouts = 0;
	for (unsigned k = 0; k < n; k++) {
		ck_assert_msg(rs[k].bad_rc == 0, "%s: racer %u: %s returned %d",
			      tc_variant_name(_i), k, rs[k].bad_op, rs[k].bad_rc);
		for (unsigned w = 0; w < RACE_WORDS; w++)
			locked[w] += rs[k].locked[w];
		timeouts += rs[k].lock_timeouts + rs[k].wait_timeouts;
		lock_timeouts += rs[k].lock_timeouts;
	}
	for (unsigned w = 0; w < RACE_WORDS; w++) {
		ck_assert_uint_eq(r->counters[w], locked[w]);
		ck_assert_uint_eq(atomic_load(&r->words[w]) & ~FWAIT_WAITERS_MASK, 0);
		/* Not stranded: the bit can be taken and released at once. */
		ck_assert_int_eq(fwait_bit_trylock(&r->words[w], 0), 0);
		ck_assert_int_eq(fwait_bit_unlock(r->t, &r->words[w], 0), 0);
		if (_i != FWAIT_FUTEX)
			ck_assert_uint_eq(atomic_load(&r->words[w]), 0);
	}
	ck_assert_uint_eq(th_parked(r->t), 0);
	struct fwait_stats st;
	fwait_stats_get(r->t, &st);
	ck_assert_uint_eq(st.timeouts, timeouts);
	/* How often the race was hit depends on scheduling: shown, not
	 * asserted (CK_VERBOSITY=verbose or the test log shows it). */
	fprintf(stderr, "%s: %u threads: %llu lock timeouts, %llu wait timeouts, "
		"%llu handoffs\n", tc_variant_name(_i), n,
		(unsigned long long)lock_timeouts,
		(unsigned long long)(timeouts - lock_timeouts),
		(unsigned long long)st.handoffs);

	fwait_table_destroy(r->t);
	pthread_barrier_destroy(&r->start);
	free(tids);
	free(rs);
	free(r);
}
END_TEST

struct far_locker {
	struct fwait_table *t;
	_Atomic uint32_t *word;
	struct timespec dl;
	int rc;
};

static void *far_locker_main(void *arg)
{
	struct far_locker *l = arg;
	l->rc = fwait_bit_lock(l->t, l->word, 4, &l->dl);
	if (l->rc == 0)
		fwait_bit_unlock(l->t, l->word, 4);
	return NULL;
}

/* Far-future deadlines mean "never".  fwait_deadline_after_ns saturates at
 * 2^64 - 1 ns (it used to return now + 18446744073 s, which the clock
 * helper then wrapped into the past), and a waiter with that deadline, or
 * one past 2^64 ns, or the time_t maximum, sleeps until the bit is free. */
START_TEST(far_deadlines_are_never)
{
	struct timespec sat = fwait_deadline_after_ns(UINT64_MAX);
	ck_assert_int_eq((long long)sat.tv_sec, 18446744073LL);
	ck_assert_int_eq(sat.tv_nsec, 709551615L);
	ck_assert_uint_eq(util_timespec_ns(&sat), UINT64_MAX);
	struct timespec near_sat = fwait_deadline_after_ns(UINT64_MAX - util_now_ns() / 2);
	ck_assert_uint_eq(util_timespec_ns(&near_sat), UINT64_MAX);

	const struct timespec far[] = {
		sat, { .tv_sec = 18446744074, .tv_nsec = 0 },
		{ .tv_sec = INT64_MAX, .tv_nsec = 999999999 },
	};
	struct fwait_table *t = th_table_for(FWAIT_WAKE_ONE, 8);
	_Atomic uint32_t word = 0;
	for (size_t i = 0; i < sizeof(far) / sizeof(far[0]); i++) {
		ck_assert(fwait_deadline_valid(&far[i]));
		ck_assert_int_eq(fwait_bit_trylock(&word, 4), 0);
		struct far_locker l = { t, &word, far[i], 1 };
		pthread_t tid;
		th_spawn(&tid, far_locker_main, &l);
		ck_assert_msg(th_wait_parked(t, 1, TH_DEADLINE_MS), "deadline %zu: never parked", i);
		ck_assert_int_eq(fwait_bit_unlock(t, &word, 4), 0);
		th_join_all(&tid, 1, TH_DEADLINE_MS, "a waiter with a far deadline", t);
		ck_assert_msg(l.rc == 0, "deadline %zu: %d", i, l.rc);
	}
	ck_assert_uint_eq(atomic_load(&word), 0);
	fwait_table_destroy(t);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("fwait-timeout");
	TCase *tc = tcase_create("timeout");
	tcase_set_timeout(tc, 60);
	th_add_loop(su, "timeout", 60, timeout_on_held_bit, 0, TC_NVARIANTS, tc_variant_name);
	th_add_loop(su, "timeout", 60, timeouts_race_handoffs, 0, TC_NVARIANTS, tc_variant_name);
	tcase_add_test(tc, far_deadlines_are_never);
	suite_add_tcase(su, tc);
	return check_run_suite(su);
}
