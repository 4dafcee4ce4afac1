/* SPDX-License-Identifier: MIT */
/*
 * test_keyed.c - generic keyed waits: fwait_wait / fwait_wake.
 *
 * Design note: the waiters' conditions are atomics that main or a poster
 * changes *before* calling fwait_wake, the pattern the API promises never
 * to miss because ready() runs under the bucket lock fwait_wake takes.
 * Waiters are parked one at a time (polling fwait_waiters_walk) where the
 * test depends on arrival order.  The semaphore tests use a ready() that
 * consumes a permit, so every permit posted with a wake must be consumed:
 * a lost wake leaves a permit behind and a consumer asleep, which the
 * bounded join and the final count catch.
 */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "helpers.h"
#include "../check_run.h"

/* ---- wake(n): n exclusive, every non-exclusive, oldest first ----------- */

struct flag_waiter {
	struct fwait_table *t;
	const void *key;
	unsigned flags;
	_Atomic bool *open;
	_Atomic unsigned calls;  /* how often ready() ran */
	int rc;
	_Atomic bool done;
};

static bool flag_ready(void *arg)
{
	struct flag_waiter *w = arg;
	atomic_fetch_add(&w->calls, 1);
	return atomic_load(w->open);
}

static void *flag_waiter_main(void *arg)
{
	struct flag_waiter *w = arg;
	w->rc = fwait_wait(w->t, w->key, w->flags, flag_ready, w, NULL);
	atomic_store(&w->done, true);
	return NULL;
}

struct done_count {
	struct flag_waiter *ws;
	unsigned n, want;
};

static bool done_reached(void *arg)
{
	struct done_count *d = arg;
	unsigned c = 0;
	for (unsigned i = 0; i < d->n; i++)
		c += atomic_load(&d->ws[i].done);
	return c >= d->want;
}

/* Loop index: FWAIT_WAKE_ONE or FWAIT_FUTEX (generic waits behave as
 * WAKE_ONE there). */
START_TEST(wake_n_exclusive_and_all_shared)
{
	struct fwait_table *t = th_table_for(_i ? FWAIT_FUTEX : FWAIT_WAKE_ONE, 1);
	_Atomic bool open = false, foreign_open = false;
	int key, other_key;
	/* Arrival order: E0 S0 E1 S1 E2 S2 E3 E4, then a foreigner on another
	 * key (the same bucket: nbuckets = 1). */
	const unsigned excl[] = { 1, 0, 1, 0, 1, 0, 1, 1 };
	enum { N = 8 };
	struct flag_waiter ws[N + 1];
	pthread_t tids[N + 2];

	for (unsigned i = 0; i < N; i++) {
		ws[i] = (struct flag_waiter){ .t = t, .key = &key, .open = &open,
			.flags = excl[i] ? FWAIT_EXCLUSIVE : 0 };
		th_spawn(&tids[i], flag_waiter_main, &ws[i]);
		ck_assert(th_wait_parked(t, i + 1, TH_DEADLINE_MS));
	}
	ws[N] = (struct flag_waiter){ .t = t, .key = &other_key, .open = &foreign_open };
	th_spawn(&tids[N], flag_waiter_main, &ws[N]);
	ck_assert(th_wait_parked(t, N + 1, TH_DEADLINE_MS));
	fwait_stats_reset(t);
	atomic_store(&open, true);
	ck_assert_int_eq(fwait_wake(t, &key, 2), 5);
	struct done_count five = { ws, N, 5 };
	ck_assert(th_poll(done_reached, &five, TH_DEADLINE_MS));
	ck_assert_uint_eq(th_parked(t), 4);
	for (unsigned i = 0; i < N; i++) {
		bool should = !excl[i] || i == 0 || i == 2;
		ck_assert_msg(atomic_load(&ws[i].done) == should,
			      "waiter %u (%s): done %d, expected %d", i,
			      excl[i] ? "exclusive" : "shared", atomic_load(&ws[i].done), should);
	}
	struct fwait_stats st;
	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.wakeups, 5);
	ck_assert_uint_eq(st.spurious_wakeups, 0);
	/* Waiters are grouped by key in arrival order of each key's oldest
	 * waiter: the foreigner's group comes after this key's, so the wake
	 * found its group first and never passed over the foreigner. */
	ck_assert_uint_eq(st.foreign_skipped, 0);

	/* No waiters of a key: wake returns 0. */
	int lonely;
	ck_assert_int_eq(fwait_wake(t, &lonely, FWAIT_ALL), 0);
	/* The rest of the exclusive ones. */
	ck_assert_int_eq(fwait_wake(t, &key, FWAIT_ALL), 3);
	th_join_all(tids, N, TH_DEADLINE_MS, "keyed waiters", t);
	for (unsigned i = 0; i < N; i++)
		ck_assert_int_eq(ws[i].rc, 0);
	ck_assert_uint_eq(th_parked(t), 1);
	ck_assert(!atomic_load(&ws[N].done));
	atomic_store(&foreign_open, true);
	ck_assert_int_eq(fwait_wake(t, &other_key, 1), 1);
	th_join_all(&tids[N], 1, TH_DEADLINE_MS, "foreign keyed waiter", t);
	ck_assert_int_eq(ws[N].rc, 0);
	fwait_table_destroy(t);
}
END_TEST

struct bit_waiter_arg {
	struct fwait_table *t;
	_Atomic uint32_t *word;
	int rc;
};

static void *bit_waiter_main(void *arg)
{
	struct bit_waiter_arg *b = arg;
	b->rc = fwait_bit_wait(b->t, b->word, 0, NULL);
	return NULL;
}

/* A generic key and a bit key on the same address never match each other. */
START_TEST(generic_and_bit_keys_do_not_match)
{
	struct fwait_table *t = th_table_for(FWAIT_WAKE_ONE, 1);
	_Atomic uint32_t word = 0;
	_Atomic bool open = false;
	struct flag_waiter gw = { .t = t, .key = (const void *)&word, .open = &open };
	struct bit_waiter_arg bw = { .t = t, .word = &word, .rc = 1 };
	pthread_t gt, bt;

	fwait_bit_set(&word, 0);
	th_spawn(&bt, bit_waiter_main, &bw);
	ck_assert(th_wait_parked(t, 1, TH_DEADLINE_MS));
	th_spawn(&gt, flag_waiter_main, &gw);
	ck_assert(th_wait_parked(t, 2, TH_DEADLINE_MS));

	atomic_store(&open, true);
	ck_assert_int_eq(fwait_wake(t, (const void *)&word, FWAIT_ALL), 1);
	th_join_all(&gt, 1, TH_DEADLINE_MS, "generic waiter", t);
	ck_assert_int_eq(gw.rc, 0);
	ck_assert_uint_eq(tc_parked_on(t, (const void *)&word, 0), 1);
	ck_assert_int_eq(fwait_bit_clear(t, &word, 0), 0);
	th_join_all(&bt, 1, TH_DEADLINE_MS, "bit waiter", t);
	ck_assert_int_eq(bw.rc, 0);
	struct fwait_stats st;
	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.spurious_wakeups, 0);
	fwait_table_destroy(t);
}
END_TEST

/* ---- ready() semantics ------------------------------------------------- */

START_TEST(ready_semantics)
{
	struct fwait_table *t = th_table_for(_i, 4);
	_Atomic bool open = true;
	int key;
	struct flag_waiter w = { .t = t, .key = &key, .open = &open,
				 .flags = FWAIT_EXCLUSIVE };

	/* Ready at entry: returns at once, called once, never sleeps. */
	ck_assert_int_eq(fwait_wait(t, &key, FWAIT_EXCLUSIVE, flag_ready, &w, NULL), 0);
	ck_assert_uint_eq(atomic_load(&w.calls), 1);
	struct fwait_stats st;
	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.waits, 0);

	/* Woken while not ready: it must go back to sleep. */
	atomic_store(&open, false);
	atomic_store(&w.calls, 0);
	pthread_t tid;
	th_spawn(&tid, flag_waiter_main, &w);
	ck_assert(th_wait_parked(t, 1, TH_DEADLINE_MS));
	ck_assert_uint_eq(atomic_load(&w.calls), 1);
	ck_assert_int_eq(fwait_wake(t, &key, 1), 1);
	/* After re-checking (a second call) it is parked again. */
	uint64_t end = util_now_ns() + (uint64_t)TH_DEADLINE_MS * 1000000u;
	unsigned spins = 0;
	while (!(atomic_load(&w.calls) >= 2 && th_parked(t) == 1)) {
		ck_assert_msg(util_now_ns() < end, "woken waiter did not re-park");
		th_poll_pause(&spins);
	}
	ck_assert(!atomic_load(&w.done));
	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.spurious_wakeups, 1);

	/* Condition made true before the wake: the wake cannot be missed. */
	atomic_store(&open, true);
	ck_assert_int_eq(fwait_wake(t, &key, 1), 1);
	th_join_all(&tid, 1, TH_DEADLINE_MS, "ready waiter", t);
	ck_assert_int_eq(w.rc, 0);
	ck_assert_uint_eq(atomic_load(&w.calls), 3);
	fwait_table_destroy(t);
}
END_TEST

/* ready() may set the caller's own "someone waits" flag (a parking lot's
 * validate): the waker sets the condition, then wakes only if the flag is
 * set.  Store-then-load on both sides (seq_cst), so neither can miss. */
struct gen_event {
	struct fwait_table *t;
	_Atomic uint64_t gen;
	_Atomic bool has_waiters;
	unsigned rounds;
};

struct gen_waiter {
	struct gen_event *ev;
	uint64_t target;
	int bad_rc;
};

static bool gen_ready(void *arg)
{
	struct gen_waiter *w = arg;
	atomic_store(&w->ev->has_waiters, true); /* seq_cst: before the load */
	return atomic_load(&w->ev->gen) >= w->target;
}

static void *gen_waiter_main(void *arg)
{
	struct gen_waiter *w = arg;
	for (unsigned r = 1; r <= w->ev->rounds; r++) {
		w->target = r;
		int rc = fwait_wait(w->ev->t, &w->ev->gen, 0, gen_ready, w, NULL);
		if (rc && !w->bad_rc)
			w->bad_rc = rc;
	}
	return NULL;
}

START_TEST(ready_sets_callers_waiters_flag)
{
	unsigned n = th_scaled(128, 64);
	struct gen_event ev = { .rounds = 60 };
	struct gen_waiter *ws = calloc(n, sizeof(*ws));
	pthread_t *tids = calloc(n, sizeof(*tids));
	ck_assert(ws && tids);

	ev.t = th_table_for(_i, 4);
	for (unsigned k = 0; k < n; k++) {
		ws[k].ev = &ev;
		th_spawn(&tids[k], gen_waiter_main, &ws[k]);
	}
	unsigned woke = 0;
	for (unsigned r = 1; r <= ev.rounds; r++) {
		/* Every other round, let everyone park first; otherwise race
		 * the waiters on their way in. */
		if (r % 2)
			ck_assert_msg(th_wait_parked(ev.t, n, TH_DEADLINE_MS),
				      "round %u: not all waiters parked", r);
		atomic_store(&ev.gen, r);
		if (atomic_load(&ev.has_waiters)) {
			woke++;
			ck_assert_int_ge(fwait_wake(ev.t, &ev.gen, FWAIT_ALL), 0);
		}
	}
	th_join_all(tids, n, TH_DEADLINE_MS, "generation waiters", ev.t);
	for (unsigned k = 0; k < n; k++)
		ck_assert_int_eq(ws[k].bad_rc, 0);
	ck_assert_uint_ge(woke, ev.rounds / 2);
	ck_assert_uint_eq(th_parked(ev.t), 0);
	fwait_table_destroy(ev.t);
	free(ws);
	free(tids);
}
END_TEST

/* ---- semaphores: no wake lost, also when a waiter times out ------------ */

struct sem {
	struct fwait_table *t;
	_Atomic int64_t permits;
};

static bool sem_take(void *arg)
{
	struct sem *s = arg;
	int64_t p = atomic_load(&s->permits);
	while (p > 0)
		if (atomic_compare_exchange_weak(&s->permits, &p, p - 1))
			return true;
	return false;
}

static void sem_post(struct sem *s)
{
	atomic_fetch_add(&s->permits, 1); /* before the wake: cannot be missed */
	fwait_wake(s->t, &s->permits, 1);
}

struct sem_waiter {
	struct sem *s;
	const struct timespec *deadline;
	int rc;
	_Atomic bool done;
};

static void *sem_waiter_main(void *arg)
{
	struct sem_waiter *w = arg;
	w->rc = fwait_wait(w->s->t, &w->s->permits, FWAIT_EXCLUSIVE, sem_take, w->s,
			   w->deadline);
	atomic_store(&w->done, true);
	return NULL;
}

static bool permit_gone(void *arg)
{
	return atomic_load(&((struct sem *)arg)->permits) == 0;
}

static bool sem_waiter_done(void *arg)
{
	return atomic_load(&((struct sem_waiter *)arg)->done);
}

struct parked_or_done {
	struct fwait_table *t;
	size_t n;
	struct sem_waiter *a;
};

static bool parked_or_a_done(void *arg)
{
	struct parked_or_done *p = arg;
	return th_parked(p->t) == p->n || atomic_load(&p->a->done);
}

/* A (oldest, with a deadline) and B (no deadline) wait; one permit is
 * posted with wake(1) right around A's deadline.  Whether A was woken in
 * time, timed out first, or was chosen while timing out, the permit must be
 * consumed, by exactly one of them, and A's result must say which. */
START_TEST(exclusive_wake_survives_timeout_race)
{
	unsigned iters = th_sanitized() ? 150 : 400;
	unsigned a_won = 0, a_timed_out = 0;
	struct sem s = { .permits = 0 };
	s.t = th_table_for(FWAIT_WAKE_ONE, 1);
	uint64_t rng = util_rand_seed(99, 0);

	for (unsigned it = 0; it < iters; it++) {
		const uint64_t d_ns = 500000; /* A's deadline: 0.5 ms */
		struct timespec a_dl = fwait_deadline_after_ns(d_ns);
		uint64_t a_dl_ns = (uint64_t)a_dl.tv_sec * 1000000000u + (uint64_t)a_dl.tv_nsec;
		struct sem_waiter a = { .s = &s, .deadline = &a_dl };
		struct sem_waiter b = { .s = &s };
		pthread_t at, bt;

		th_spawn(&at, sem_waiter_main, &a);
		struct parked_or_done pa = { s.t, 1, &a };
		ck_assert(th_poll(parked_or_a_done, &pa, TH_DEADLINE_MS));
		th_spawn(&bt, sem_waiter_main, &b);
		/* B parked (2 parked), or A already gone and B parked (1). */
		uint64_t end = util_now_ns() + (uint64_t)TH_DEADLINE_MS * 1000000u;
		unsigned spins = 0;
		while (!(th_parked(s.t) == 2 ||
			 (atomic_load(&a.done) && th_parked(s.t) == 1))) {
			ck_assert_msg(util_now_ns() < end, "iteration %u: B never parked", it);
			th_poll_pause(&spins);
		}
		/* Post somewhere in [deadline - 150 us, deadline + 50 us]. */
		uint64_t post_at = a_dl_ns - 150000 + util_rand_next(&rng) % 200000;
		while (util_now_ns() < post_at)
			;
		sem_post(&s);
		ck_assert_msg(th_poll(permit_gone, &s, TH_DEADLINE_MS),
			      "iteration %u: the permit was never taken (lost wake)", it);
		ck_assert(th_poll(sem_waiter_done, &a, TH_DEADLINE_MS));
		if (a.rc == 0) {
			a_won++;
			/* A took it, so B must still be asleep: wake it. */
			ck_assert(!atomic_load(&b.done));
			sem_post(&s);
		} else {
			ck_assert_int_eq(a.rc, -ETIMEDOUT);
			a_timed_out++;
		}
		th_join_all(&bt, 1, TH_DEADLINE_MS, "semaphore B", s.t);
		th_join_all(&at, 1, TH_DEADLINE_MS, "semaphore A", s.t);
		ck_assert_int_eq(b.rc, 0);
		ck_assert_int_eq(atomic_load(&s.permits), 0);
		ck_assert_uint_eq(th_parked(s.t), 0);
	}
	fprintf(stderr, "timeout race: A took the permit %u times, timed out %u times\n",
		a_won, a_timed_out);
	fwait_table_destroy(s.t);
}
END_TEST

/* Posters and consumers: every post is consumed, for every policy. */
struct sem_worker {
	struct sem *s;
	bool poster;
	unsigned ops;
	int bad_rc;
};

static void *sem_worker_main(void *arg)
{
	struct sem_worker *w = arg;
	for (unsigned i = 0; i < w->ops; i++) {
		if (w->poster) {
			sem_post(w->s);
			if (i % 4 == 0)
				sched_yield();
		} else {
			int rc = fwait_wait(w->s->t, &w->s->permits, FWAIT_EXCLUSIVE,
					    sem_take, w->s, NULL);
			if (rc && !w->bad_rc)
				w->bad_rc = rc;
		}
	}
	return NULL;
}

START_TEST(semaphore_no_lost_wake)
{
	unsigned consumers = th_scaled(256, 64), posters = 8;
	const unsigned per_consumer = 20;
	unsigned n = consumers + posters;
	struct sem s = { .permits = 0 };
	struct sem_worker *ws = calloc(n, sizeof(*ws));
	pthread_t *tids = calloc(n, sizeof(*tids));
	ck_assert(ws && tids);

	s.t = th_table_for(_i, 4);
	for (unsigned k = 0; k < n; k++) {
		ws[k].s = &s;
		ws[k].poster = k >= consumers;
		ws[k].ops = ws[k].poster ? consumers * per_consumer / posters : per_consumer;
		th_spawn(&tids[k], sem_worker_main, &ws[k]);
	}
	th_join_all(tids, n, TH_DEADLINE_MS, "semaphore workers", s.t);
	for (unsigned k = 0; k < n; k++)
		ck_assert_int_eq(ws[k].bad_rc, 0);
	ck_assert_int_eq(atomic_load(&s.permits), 0);
	ck_assert_uint_eq(th_parked(s.t), 0);
	fwait_table_destroy(s.t);
	free(ws);
	free(tids);
}
END_TEST

/* ---- a wake with nobody to wake skips the bucket lock ------------------- */

/* Loop index: a policy.  fwait_wake on a key whose bucket has no keyed
 * waiter returns 0 without taking the lock (slow_wakes stays 0; BROADCAST,
 * which must reach the bucket's bit waiters too, always takes it), and once
 * a waiter is inside fwait_wait the wake takes the lock and finds it. */
START_TEST(wake_without_waiters_skips_the_lock)
{
	struct fwait_config cfg = { .nbuckets = 1, .policy = (enum fwait_policy)_i };
	struct fwait_table *t;
	struct fwait_stats st;
	static int key;
	_Atomic bool open = false;
	int rc = fwait_table_create(&t, &cfg);
	if (rc == -ENOTSUP)
		return; /* FWAIT_FUTEX off Linux */
	ck_assert_int_eq(rc, 0);

	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(fwait_wake(t, &key, FWAIT_ALL), 0);
	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.slow_wakes, _i == FWAIT_BROADCAST ? 3 : 0);

	struct flag_waiter w = { .t = t, .key = &key, .flags = FWAIT_EXCLUSIVE, .open = &open };
	pthread_t tid;
	th_spawn(&tid, flag_waiter_main, &w);
	ck_assert(th_wait_parked(t, 1, TH_DEADLINE_MS));
	atomic_store(&open, true);
	ck_assert_int_eq(fwait_wake(t, &key, 1), 1);
	th_join_all(&tid, 1, TH_DEADLINE_MS, "keyed waiter", t);
	ck_assert_int_eq(w.rc, 0);
	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.slow_wakes, _i == FWAIT_BROADCAST ? 4 : 1);

	/* The waiter has left: the next wake skips the lock again. */
	ck_assert_int_eq(fwait_wake(t, &key, 1), 0);
	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.slow_wakes, _i == FWAIT_BROADCAST ? 5 : 1);
	fwait_table_destroy(t);
}
END_TEST

/* ---- FWAIT_PRECHECK: a condition that already holds takes no lock ------ */

START_TEST(precheck_skips_the_lock)
{
	struct fwait_config cfg = { .nbuckets = 1 };
	struct fwait_table *t;
	struct fwait_stats st;
	static int key;
	_Atomic bool open = true;
	ck_assert_int_eq(fwait_table_create(&t, &cfg), 0);
	struct flag_waiter w = { .t = t, .key = &key, .open = &open };

	/* Holds already: with the flag, one unlocked call and no lock. */
	ck_assert_int_eq(fwait_wait(t, &key, FWAIT_PRECHECK | FWAIT_EXCLUSIVE, flag_ready, &w, NULL), 0);
	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.slow_waits, 0);
	ck_assert_uint_eq(atomic_load(&w.calls), 1);
	/* Without it, the lock is taken for the same answer. */
	ck_assert_int_eq(fwait_wait(t, &key, FWAIT_EXCLUSIVE, flag_ready, &w, NULL), 0);
	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.slow_waits, 1);

	/* Does not hold yet: the precheck decides nothing; the waiter parks,
	 * is woken by a wake after the condition was set, and returns. */
	atomic_store(&open, false);
	atomic_store(&w.calls, 0);
	w.flags = FWAIT_PRECHECK | FWAIT_EXCLUSIVE;
	pthread_t tid;
	th_spawn(&tid, flag_waiter_main, &w);
	ck_assert(th_wait_parked(t, 1, TH_DEADLINE_MS));
	atomic_store(&open, true);
	ck_assert_int_eq(fwait_wake(t, &key, 1), 1);
	th_join_all(&tid, 1, TH_DEADLINE_MS, "prechecking waiter", t);
	ck_assert_int_eq(w.rc, 0);
	ck_assert_uint_ge(atomic_load(&w.calls), 3); /* unlocked, locked, after the wake */
	ck_assert_int_eq(fwait_wait(t, &key, 4u, flag_ready, &w, NULL), -EINVAL);
	fwait_table_destroy(t);
}
END_TEST

/* ---- an abandoned exclusive wake is passed on --------------------------- */

/* A lock in the caller's own word, waited for with keyed waits and woken
 * one at a time (nr = 1).  Half the threads ("leavers") wait for it once
 * and, woken, leave without taking it (an optimistic restart elsewhere):
 * each passes the wake on with fwait_wake(key, 1), as fwait.h says.  The
 * others ("stayers") take it iters times.  main holds the lock until the
 * leavers, then the stayers, are parked, so the first wake goes to a
 * leaver: without the pass, it leaves for good with the lock free and
 * every stayer asleep, which the bounded join reports (checked by hand:
 * with the pass removed, every round but WAKE_ALL's and BROADCAST's leaves
 * 31 of the 32 threads asleep).  Under
 * WAKE_ALL and BROADCAST a wake reaches everyone and nothing can strand.
 * The counter checks mutual exclusion. */
struct abandon_lock {
	struct fwait_table *t;
	_Atomic uint32_t word;    /* 1: held */
	uint64_t counter;         /* guarded by word */
	_Atomic uint64_t abandoned;
};

static bool looks_free(void *arg)
{
	return atomic_load(&((struct abandon_lock *)arg)->word) == 0;
}

struct abandoner {
	struct abandon_lock *l;
	bool leaver;
	unsigned iters;
};

static void *abandoner_main(void *arg)
{
	struct abandoner *a = arg;
	struct abandon_lock *l = a->l;
	if (a->leaver) {
		/* main holds the lock: this parks, and leaves once woken. */
		fwait_wait(l->t, &l->word, FWAIT_EXCLUSIVE, looks_free, l, NULL);
		atomic_fetch_add(&l->abandoned, 1);
		fwait_wake(l->t, &l->word, 1); /* pass the wake on */
		return NULL;
	}
	for (unsigned i = 0; i < a->iters;) {
		uint32_t free_ = 0;
		if (atomic_compare_exchange_strong(&l->word, &free_, 1)) {
			l->counter++;
			i++;
			if (i % 2 == 0)
				sched_yield(); /* hold it a while: others queue */
			atomic_store(&l->word, 0);
			fwait_wake(l->t, &l->word, 1);
			continue;
		}
		fwait_wait(l->t, &l->word, FWAIT_EXCLUSIVE, looks_free, l, NULL);
	}
	return NULL;
}

START_TEST(abandoned_wakes_are_passed_on)
{
	unsigned n = th_scaled(32, 8), iters = th_sanitized() ? 100 : 400;
	unsigned nleave = n / 2;
	struct abandon_lock l = { .t = th_table_for(_i, 2), .word = 1 };
	struct abandoner *as = calloc(n, sizeof(*as));
	pthread_t *tids = calloc(n, sizeof(*tids));
	ck_assert(as && tids);
	for (unsigned k = 0; k < n; k++) {
		as[k] = (struct abandoner){ &l, k < nleave, iters };
		th_spawn(&tids[k], abandoner_main, &as[k]);
		if (k + 1 == nleave) /* the leavers first in the queue */
			ck_assert_msg(th_wait_parked(l.t, nleave, TH_DEADLINE_MS),
				      "the leavers never parked");
	}
	ck_assert_msg(th_wait_parked(l.t, n, TH_DEADLINE_MS), "the waiters never all parked");
	atomic_store(&l.word, 0);
	fwait_wake(l.t, &l.word, 1);
	th_join_all(tids, n, TH_DEADLINE_MS, "waiters that abandon their wakes", l.t);
	ck_assert_uint_eq(l.counter, (uint64_t)(n - nleave) * iters);
	ck_assert_uint_eq(atomic_load(&l.abandoned), nleave);
	ck_assert_uint_eq(atomic_load(&l.word), 0);
	ck_assert_uint_eq(th_parked(l.t), 0);
	fwait_table_destroy(l.t);
	free(as);
	free(tids);
}
END_TEST

/* What the loop index of wake_n_exclusive_and_all_shared stands for. */
static const char *wake_n_label(int i)
{
	return tc_variant_name(i ? FWAIT_FUTEX : FWAIT_WAKE_ONE);
}

int main(void)
{
	Suite *su = suite_create("fwait-keyed");
	TCase *tc = tcase_create("keyed");
	tcase_set_timeout(tc, 60);
	th_add_loop(su, "keyed", 60, wake_n_exclusive_and_all_shared, 0, 2, wake_n_label);
	tcase_add_test(tc, generic_and_bit_keys_do_not_match);
	th_add_loop(su, "keyed", 60, ready_semantics, 0, FWAIT_POLICY_COUNT, tc_variant_name);
	th_add_loop(su, "keyed", 60, ready_sets_callers_waiters_flag,
		    0, FWAIT_POLICY_COUNT, tc_variant_name);
	tcase_add_test(tc, exclusive_wake_survives_timeout_race);
	th_add_loop(su, "keyed", 60, semaphore_no_lost_wake, 0, TC_NVARIANTS, tc_variant_name);
	th_add_loop(su, "keyed", 60, wake_without_waiters_skips_the_lock,
		    0, FWAIT_POLICY_COUNT, tc_variant_name);
	tcase_add_test(tc, precheck_skips_the_lock);
	th_add_loop(su, "keyed", 60, abandoned_wakes_are_passed_on,
		    0, TC_NVARIANTS, tc_variant_name);
	suite_add_tcase(su, tc);
	return check_run_suite(su);
}
