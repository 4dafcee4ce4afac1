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
 * The steal test is white-box (internal.h): main holds the bucket lock to
 * stop an unlocker between releasing the bit and handing it off, steals the
 * bit in that window, and checks the bucket's strict flag directly.
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

/* Loop index: policy (0..3) or TH_POLICY_STEAL. */
START_TEST(timeout_on_held_bit)
{
	struct fwait_table *t = th_table_for(_i, 8);
	bool futex = _i == FWAIT_FUTEX;
	_Atomic uint32_t word = 0;
	struct fwait_stats st;

	ck_assert_int_eq(fwait_bit_trylock(&word, 4), 0);
	struct timespec dl = fwait_deadline_after_ns(20 * 1000000u);
	uint64_t start = util_now_ns();
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
			      th_policy_label(_i), k, rs[k].bad_op, rs[k].bad_rc);
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
		"%llu handoffs\n", th_policy_label(_i), n,
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

struct bit_op {
	struct fwait_table *t;
	_Atomic uint32_t *word;
	struct timespec deadline;
	const struct timespec *dl;  /* &deadline, or NULL: wait forever */
	int rc, unlock_rc;          /* read by main after pthread_join */
};

static void *lock_then_unlock(void *arg)
{
	struct bit_op *op = arg;
	op->rc = fwait_bit_lock(op->t, op->word, 0, op->dl);
	if (op->rc == 0)
		op->unlock_rc = fwait_bit_unlock(op->t, op->word, 0);
	return NULL;
}

static void *unlock_bit(void *arg)
{
	struct bit_op *op = arg;
	op->rc = fwait_bit_unlock(op->t, op->word, 0);
	return NULL;
}

static bool bit0_clear(void *arg)
{
	return !fwait_bit_test(arg, 0);
}

static bool strict_of(const struct fw_bucket *b)
{
	return atomic_load_explicit(&b->strict, memory_order_relaxed);
}

/* With main holding bit 0 of *word and one waiter queued on it: another
 * thread unlocks while main holds the bucket lock, so the unlock releases the
 * bit (stealing mode) and then blocks; main takes the bit in that window.
 * Fails if the unlock never releases the bit, i.e. the bucket is in strict
 * handoff, which does not touch the bit before it has the bucket lock. */
static void steal_from_waiter(struct fwait_table *t, struct fw_bucket *b,
			      _Atomic uint32_t *word, const char *what)
{
	struct bit_op u = { .t = t, .word = word };
	pthread_t tid;

	pthread_mutex_lock(&b->lock);
	th_spawn(&tid, unlock_bit, &u);
	bool released = th_poll(bit0_clear, (void *)word, TH_DEADLINE_MS);
	if (released)
		ck_assert_int_eq(fwait_bit_trylock(word, 0), 0);
	pthread_mutex_unlock(&b->lock);
	th_join_all(&tid, 1, TH_DEADLINE_MS, what, t);
	ck_assert_msg(released, "%s: the unlock never released the bit: the bucket "
		      "is in strict handoff", what);
	ck_assert_int_eq(u.rc, 0);
	ck_assert_msg(strict_of(b), "%s: a steal at max_steals = 1 did not make the "
		      "bucket strict", what);
}

/* A waiter robbed max_steals times makes its bucket strict; if it then times
 * out instead of being handed the bit, the bucket must go back to allowing
 * steals, or it would stay in strict handoff for good. */
START_TEST(robbed_waiter_timeout_ends_strict)
{
	struct fwait_config cfg = { .nbuckets = 1, .policy = FWAIT_WAKE_ONE,
				    .max_steals = 1 };
	struct fwait_table *t = NULL;
	_Atomic uint32_t word = 0;
	pthread_t tid;

	ck_assert_int_eq(fwait_table_create(&t, &cfg), 0);
	ck_assert_uint_eq(t->mask, 0);
	struct fw_bucket *b = &t->buckets[0]; /* the only one: fw_bucket_of is hidden */
	ck_assert_int_eq(fwait_bit_lock(t, &word, 0, NULL), 0);

	/* W waits with a deadline far enough away that it is still queued
	 * when the steal is counted. */
	struct bit_op w = { .t = t, .word = &word, .dl = &w.deadline };
	w.deadline = fwait_deadline_after_ns(UINT64_C(2000000000));
	th_spawn(&tid, lock_then_unlock, &w);
	ck_assert_msg(th_wait_parked(t, 1, TH_DEADLINE_MS), "W never parked");
	steal_from_waiter(t, b, &word, "steal from W");
	ck_assert_msg(th_parked(t) == 1, "W left the queue before its deadline");

	/* W gives up unserved: the bucket must leave strict mode. */
	th_join_all(&tid, 1, TH_DEADLINE_MS, "W timing out", t);
	ck_assert_int_eq(w.rc, -ETIMEDOUT);
	ck_assert_uint_eq(th_parked(t), 0);
	ck_assert_uint_eq(atomic_load(&word), 1u); /* main's, and W tidied */
	ck_assert_msg(!strict_of(b), "bucket still strict after the robbed waiter timed out");

	/* Black box: a newcomer can steal from the next waiter again, and
	 * serving that waiter ends the strict mode its robbery starts. */
	struct bit_op w2 = { .t = t, .word = &word };
	th_spawn(&tid, lock_then_unlock, &w2);
	ck_assert_msg(th_wait_parked(t, 1, TH_DEADLINE_MS), "W2 never parked");
	steal_from_waiter(t, b, &word, "steal from W2");
	ck_assert_int_eq(fwait_bit_unlock(t, &word, 0), 0); /* hands to W2 */
	th_join_all(&tid, 1, TH_DEADLINE_MS, "W2", t);
	ck_assert_int_eq(w2.rc, 0);
	ck_assert_int_eq(w2.unlock_rc, 0);
	ck_assert(!strict_of(b));
	ck_assert_uint_eq(atomic_load(&word), 0);

	struct fwait_stats st;
	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.timeouts, 1);
	ck_assert_uint_eq(st.handoffs, 1);
	fwait_table_destroy(t);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("fwait-timeout");
	TCase *tc = tcase_create("timeout");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, timeout_on_held_bit, 0, TH_NPOLICIES);
	tcase_add_loop_test(tc, timeouts_race_handoffs, 0, TH_NPOLICIES);
	tcase_add_test(tc, robbed_waiter_timeout_ends_strict);
	suite_add_tcase(su, tc);
	return check_run_suite(su);
}
