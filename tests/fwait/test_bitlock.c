/* SPDX-License-Identifier: MIT */
/*
 * test_bitlock.c - lock-style bits: FIFO handoff and "wake one wakes one".
 *
 * Design note: every scenario is built step by step so its outcome is fixed:
 * main holds the bit, starts one waiter at a time and polls
 * fwait_waiters_walk until that waiter is parked before it starts the next,
 * so arrival order is known.  A waiter that acquires records its sequence
 * number; where the test must look at the state while someone holds the bit,
 * the holder waits on a condvar-backed gate that main opens.  Run for
 * WAKE_ONE with strict handoff (FIFO, every wake a handoff) and WAKE_ONE
 * with eventual fairness and max_steals = 5 (no newcomers here, so each
 * unlock's wake of the oldest wins its race, or the oldest, due after 1 ms
 * of polling, is handed the bit: the order is FIFO either way, but how many
 * were handoffs is timing, so only strict checks that count); WAKE_ALL is
 * the contrast.  The FIFO test runs on a 64-bit word too (fwait_bit64_*).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "helpers.h"
#include "../check_run.h"

#define NWAITERS 16

/* A gate main opens one holder at a time (counting semaphore). */
struct gate {
	pthread_mutex_t mtx;
	pthread_cond_t cond;
	unsigned permits;
};

static void gate_init(struct gate *g)
{
	pthread_mutex_init(&g->mtx, NULL);
	pthread_cond_init(&g->cond, NULL);
	g->permits = 0;
}

static void gate_pass(struct gate *g)
{
	pthread_mutex_lock(&g->mtx);
	while (g->permits == 0)
		pthread_cond_wait(&g->cond, &g->mtx);
	g->permits--;
	pthread_mutex_unlock(&g->mtx);
}

static void gate_open(struct gate *g, unsigned n)
{
	pthread_mutex_lock(&g->mtx);
	g->permits += n;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->mtx);
}

static void gate_destroy(struct gate *g)
{
	pthread_cond_destroy(&g->cond);
	pthread_mutex_destroy(&g->mtx);
}

struct scene {
	struct fwait_table *t;
	_Atomic uint32_t word;
	_Atomic uint64_t word64;    /* used instead when wide */
	bool wide;                  /* fwait_bit64_* on word64 */
	unsigned bit;
	_Atomic unsigned next_seq;  /* acquisition order */
	_Atomic unsigned acquired;  /* how many have taken the bit */
	struct gate hold;           /* holders wait here when gated */
	bool gated;
};

struct waiter {
	struct scene *sc;
	unsigned arrival;
	unsigned seq;   /* written before `acquired` is bumped (seq_cst) */
	_Atomic bool got;
	int lock_rc, unlock_rc;
};

/* The scene's lock, on its word of either width. */
static int sc_lock(struct scene *sc)
{
	return sc->wide ? fwait_bit64_lock(sc->t, &sc->word64, sc->bit, NULL)
			: fwait_bit_lock(sc->t, &sc->word, sc->bit, NULL);
}

static int sc_trylock(struct scene *sc)
{
	return sc->wide ? fwait_bit64_trylock(&sc->word64, sc->bit)
			: fwait_bit_trylock(&sc->word, sc->bit);
}

static int sc_unlock(struct scene *sc)
{
	return sc->wide ? fwait_bit64_unlock(sc->t, &sc->word64, sc->bit)
			: fwait_bit_unlock(sc->t, &sc->word, sc->bit);
}

static uint64_t sc_value(struct scene *sc)
{
	return sc->wide ? atomic_load(&sc->word64) : atomic_load(&sc->word);
}

static void *lock_waiter(void *arg)
{
	struct waiter *w = arg;
	struct scene *sc = w->sc;

	w->lock_rc = sc_lock(sc);
	if (w->lock_rc)
		return NULL;
	w->seq = atomic_fetch_add(&sc->next_seq, 1);
	atomic_store(&w->got, true);
	atomic_fetch_add(&sc->acquired, 1);
	if (sc->gated)
		gate_pass(&sc->hold);
	w->unlock_rc = sc_unlock(sc);
	return NULL;
}

static struct fwait_table *wake_one_table(int i, unsigned nbuckets)
{
	return th_table_for(i == 0 ? TC_VARIANT_STRICT : TC_VARIANT_STEAL, nbuckets);
}

/* Holds the bit, then parks n waiters one by one, in arrival order. */
static void park_in_order(struct scene *sc, struct waiter *ws, pthread_t *tids, unsigned n)
{
	ck_assert_int_eq(sc_trylock(sc), 0);
	for (unsigned i = 0; i < n; i++) {
		ws[i].sc = sc;
		ws[i].arrival = i;
		th_spawn(&tids[i], lock_waiter, &ws[i]);
		ck_assert_msg(th_wait_parked(sc->t, i + 1, TH_DEADLINE_MS),
			      "waiter %u never parked (%zu parked)", i, th_parked(sc->t));
	}
}

struct acquired_at_least {
	struct scene *sc;
	unsigned n;
};

static bool acquired_reached(void *arg)
{
	struct acquired_at_least *a = arg;
	return atomic_load(&a->sc->acquired) >= a->n;
}

/* Loop index % 2 = 0: WAKE_ONE strict, 1: WAKE_ONE fair with max_steals
 * = 5; index / 2 = 0: a 32-bit word, 1: a 64-bit one (bit 35, in the upper
 * half). */
START_TEST(fifo_handoff_order)
{
	bool wide = _i / 2 == 1;
	struct scene sc = { .bit = wide ? 35 : 3, .wide = wide };
	struct waiter ws[NWAITERS] = { { 0 } };
	pthread_t tids[NWAITERS];

	sc.t = wake_one_table(_i % 2, 4);
	park_in_order(&sc, ws, tids, NWAITERS);
	/* One unlock starts the chain: each waiter unlocks in turn. */
	ck_assert_int_eq(sc_unlock(&sc), 0);
	th_join_all(tids, NWAITERS, TH_DEADLINE_MS, "fifo", sc.t);

	for (unsigned i = 0; i < NWAITERS; i++) {
		ck_assert_int_eq(ws[i].lock_rc, 0);
		ck_assert_int_eq(ws[i].unlock_rc, 0);
		ck_assert_msg(ws[i].seq == i, "waiter %u (arrival order) acquired %uth",
			      i, ws[i].seq);
	}
	ck_assert_uint_eq(sc_value(&sc), 0);
	struct fwait_stats st;
	fwait_stats_get(sc.t, &st);
	if (_i % 2 == 0)
		ck_assert_uint_eq(st.handoffs, NWAITERS);
	ck_assert_uint_eq(st.wakeups, NWAITERS);
	ck_assert_uint_eq(st.spurious_wakeups, 0);
	ck_assert_uint_eq(st.lost_races, 0);
	fwait_table_destroy(sc.t);
}
END_TEST

START_TEST(wake_one_wakes_one)
{
	struct scene sc = { .bit = 0, .gated = true };
	struct waiter ws[NWAITERS] = { { 0 } };
	pthread_t tids[NWAITERS];
	struct fwait_stats before, after;

	gate_init(&sc.hold);
	sc.t = wake_one_table(_i, 8);
	park_in_order(&sc, ws, tids, NWAITERS);
	fwait_stats_get(sc.t, &before);

	ck_assert_int_eq(fwait_bit_unlock(sc.t, &sc.word, sc.bit), 0);
	struct acquired_at_least one = { &sc, 1 };
	ck_assert_msg(th_poll(acquired_reached, &one, TH_DEADLINE_MS), "nobody acquired");

	/* The acquirer is gated: nobody else can have run since. */
	fwait_stats_get(sc.t, &after);
	ck_assert_uint_eq(atomic_load(&sc.acquired), 1);
	ck_assert_uint_eq(after.wakeups - before.wakeups, 1);
	if (_i == 0)
		ck_assert_uint_eq(after.handoffs - before.handoffs, 1);
	ck_assert_uint_eq(after.spurious_wakeups, 0);
	ck_assert_uint_eq(th_parked(sc.t), NWAITERS - 1);
	ck_assert_uint_eq(tc_parked_on(sc.t, (const void *)&sc.word, (int)sc.bit), NWAITERS - 1);
	ck_assert(fwait_bit_test(&sc.word, sc.bit));
	ck_assert(atomic_load(&ws[0].got)); /* the oldest one got it */
	ck_assert_uint_eq(ws[0].seq, 0);

	/* Let each holder go in turn; each release hands to exactly one. */
	for (unsigned k = 1; k < NWAITERS; k++) {
		gate_open(&sc.hold, 1);
		struct acquired_at_least next = { &sc, k + 1 };
		ck_assert_msg(th_poll(acquired_reached, &next, TH_DEADLINE_MS),
			      "handoff %u never arrived", k);
		ck_assert_uint_eq(atomic_load(&sc.acquired), k + 1);
		ck_assert_uint_eq(th_parked(sc.t), NWAITERS - 1 - k);
	}
	gate_open(&sc.hold, 1);
	th_join_all(tids, NWAITERS, TH_DEADLINE_MS, "wake-one", sc.t);
	fwait_stats_get(sc.t, &after);
	ck_assert_uint_eq(after.wakeups - before.wakeups, NWAITERS);
	if (_i == 0)
		ck_assert_uint_eq(after.handoffs - before.handoffs, NWAITERS);
	ck_assert_uint_eq(after.spurious_wakeups, 0);
	ck_assert_uint_eq(atomic_load(&sc.word), 0);
	fwait_table_destroy(sc.t);
	gate_destroy(&sc.hold);
}
END_TEST

struct spurious_reached {
	struct scene *sc;
	uint64_t n;
	size_t parked;
};

/* The losers back asleep and the winner past its count: it bumps acquired
 * only after fwait_bit_lock returned, which may be after the losers park. */
static bool spurious_and_parked(void *arg)
{
	struct spurious_reached *s = arg;
	struct fwait_stats st;
	fwait_stats_get(s->sc->t, &st);
	return st.spurious_wakeups == s->n && th_parked(s->sc->t) == s->parked &&
	       atomic_load(&s->sc->acquired) >= 1;
}

/* The contrast: WAKE_ALL wakes every waiter of the key; one wins and the
 * rest must go back to sleep. */
START_TEST(wake_all_wakes_every_waiter_of_key)
{
	struct scene sc = { .bit = 1, .gated = true };
	struct waiter ws[NWAITERS] = { { 0 } };
	pthread_t tids[NWAITERS];

	gate_init(&sc.hold);
	sc.t = th_table_for(FWAIT_WAKE_ALL, 8);
	park_in_order(&sc, ws, tids, NWAITERS);
	fwait_stats_reset(sc.t);
	ck_assert_int_eq(fwait_bit_unlock(sc.t, &sc.word, sc.bit), 0);

	struct spurious_reached want = { &sc, NWAITERS - 1, NWAITERS - 1 };
	ck_assert_msg(th_poll(spurious_and_parked, &want, TH_DEADLINE_MS),
		      "losers did not go back to sleep");
	struct fwait_stats st;
	fwait_stats_get(sc.t, &st);
	ck_assert_uint_eq(atomic_load(&sc.acquired), 1);
	ck_assert_uint_eq(st.wakeups, NWAITERS);
	ck_assert_uint_eq(st.handoffs, 0);
	gate_open(&sc.hold, NWAITERS);
	th_join_all(tids, NWAITERS, TH_DEADLINE_MS, "wake-all", sc.t);
	for (unsigned i = 0; i < NWAITERS; i++)
		ck_assert_int_eq(ws[i].lock_rc, 0);
	ck_assert_uint_eq(atomic_load(&sc.acquired), NWAITERS);
	ck_assert_uint_eq(atomic_load(&sc.word), 0);
	fwait_table_destroy(sc.t);
	gate_destroy(&sc.hold);
}
END_TEST

/* Uncontended lock and unlock never touch the table. */
START_TEST(uncontended_skips_table)
{
	struct fwait_table *t = th_table_for(_i, 4);
	_Atomic uint32_t word = 0;
	for (unsigned bit = 0; bit <= FWAIT_MAX_BIT; bit++) {
		ck_assert_int_eq(fwait_bit_lock(t, &word, bit, NULL), 0);
		ck_assert(fwait_bit_test(&word, bit));
		ck_assert_int_eq(fwait_bit_trylock(&word, bit), -EBUSY);
	}
	ck_assert_uint_eq(atomic_load(&word), FWAIT_WAITERS_MASK - 1);
	for (unsigned bit = 0; bit <= FWAIT_MAX_BIT; bit++)
		ck_assert_int_eq(fwait_bit_unlock(t, &word, bit), 0);
	ck_assert_uint_eq(atomic_load(&word), 0);
	struct fwait_stats st;
	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.waits, 0);
	ck_assert_uint_eq(st.slow_wakes, 0);
	fwait_table_destroy(t);
}
END_TEST

/* What the loop indices stand for, for the failure lines (th_add_loop). */
static const char *fifo_label(int i)
{
	static const char *const l[] = { "wake-one+strict 32-bit", "wake-one+steal 32-bit",
					 "wake-one+strict 64-bit", "wake-one+steal 64-bit" };
	return l[i];
}

static const char *wake_one_label(int i)
{
	return tc_variant_name(i == 0 ? TC_VARIANT_STRICT : TC_VARIANT_STEAL);
}

int main(void)
{
	Suite *su = suite_create("fwait-bitlock");
	TCase *tc = tcase_create("bitlock");
	tcase_set_timeout(tc, 60);
	th_add_loop(su, "bitlock", 60, fifo_handoff_order, 0, 4, fifo_label);
	th_add_loop(su, "bitlock", 60, wake_one_wakes_one, 0, 2, wake_one_label);
	tcase_add_test(tc, wake_all_wakes_every_waiter_of_key);
	th_add_loop(su, "bitlock", 60, uncontended_skips_table, 0, TC_NVARIANTS, tc_variant_name);
	suite_add_tcase(su, tc);
	return check_run_suite(su);
}
