/* SPDX-License-Identifier: MIT */
/*
 * test_async.c - asynchronous keyed waits (fwait/async.c):
 * fwait_async_init, fwait_wait_async, fwait_cancel_async.
 *
 * Design note: a completion runs on the waking thread, so when main is the
 * waker the completion has run when fwait_wake returns: the single-thread
 * cases check it there, with no waiting at all.  Blocking waiters, where
 * they mix in, are threads parked one at a time (th_wait_parked), so the
 * arrival order is known.  A "ticket" stands for what a wake announces:
 * ready() takes one under the bucket lock if one is there and records
 * who took it, so the order of the takes is the order of the service.
 * The stress case runs threads that each drive their own asynchronous
 * waits (waiting for a completion by polling a flag, as an executor
 * would run the task later), cancel at random, and pass on wakes they
 * no longer want, beside blocking waiters, on three lock words: it checks
 * mutual exclusion, that every wait ends (deadlines) and that nothing is
 * left queued, under ThreadSanitizer in CI.  It cannot show a lost wake
 * by itself (the next release wakes the stranded waiter; with the pass-on
 * removed it still passed): cancel_after_the_wake_passes_it_on and the
 * model (tests/model/async.pml) do.
 */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "helpers.h"
#include "../check_run.h"

#define KEY_ORDER_MAX 16

/* The key's state: tickets to take, and who took them, in order. */
struct tickets {
	_Atomic unsigned avail;
	_Atomic unsigned taken;
	int order[KEY_ORDER_MAX]; /* written under the bucket lock (ready) */
};

struct taker {
	struct tickets *k;
	int id;
};

/* Under the bucket lock: take a ticket if one is there. */
static bool take_ticket(void *arg)
{
	struct taker *w = arg;
	unsigned a = atomic_load(&w->k->avail);
	if (a == 0)
		return false;
	atomic_store(&w->k->avail, a - 1);
	unsigned n = atomic_fetch_add(&w->k->taken, 1);
	if (n < KEY_ORDER_MAX)
		w->k->order[n] = w->id;
	return true;
}

/* A completion that counts itself and keeps the token. */
struct done_rec {
	_Atomic unsigned calls;
	_Atomic uint64_t token;
};

static void note_done(struct fwait_async *a, uint64_t token, void *arg)
{
	(void)a;
	struct done_rec *d = arg;
	atomic_store(&d->token, token);
	atomic_fetch_add(&d->calls, 1);
}

static uint64_t give_token(const struct fwait_wake_report *r, void *arg)
{
	(void)r;
	return *(uint64_t *)arg;
}

static struct fwait_table *fair_table(void)
{
	struct fwait_config cfg = { .nbuckets = 4, .policy = FWAIT_WAKE_ONE };
	struct fwait_table *t = NULL;
	ck_assert_int_eq(fwait_table_create(&t, &cfg), 0);
	return t;
}

/* One asynchronous waiter (id 1) of a ticket key, on its own table. */
struct one {
	struct fwait_table *t;
	struct tickets k;
	struct taker w;
	struct done_rec d;
	struct fwait_async a;
};

/* Sets o up with avail tickets and starts its wait: returns
 * fwait_wait_async's answer. */
static int one_wait(struct one *o, unsigned avail)
{
	o->t = fair_table();
	atomic_store(&o->k.avail, avail);
	o->w = (struct taker){ &o->k, 1 };
	ck_assert_int_eq(fwait_async_init(&o->a, note_done, &o->d), 0);
	return fwait_wait_async(o->t, &o->k, FWAIT_EXCLUSIVE, take_ticket, &o->w, &o->a);
}

START_TEST(ready_at_once_runs_no_completion)
{
	struct one o = { 0 };
	ck_assert_int_eq(one_wait(&o, 1), 0);
	ck_assert_uint_eq(atomic_load(&o.k.taken), 1);
	ck_assert_uint_eq(th_parked(o.t), 0);
	/* Nobody counted in the bucket: the wake skips it and wakes none. */
	ck_assert_int_eq(fwait_wake(o.t, &o.k, FWAIT_ALL), 0);
	ck_assert_uint_eq(atomic_load(&o.d.calls), 0);
	/* Nothing queued: nothing to cancel. */
	ck_assert_int_eq(fwait_cancel_async(o.t, &o.a), -EINVAL);
	fwait_table_destroy(o.t);
}
END_TEST

START_TEST(wake_runs_the_completion_once_with_its_token)
{
	struct one o = { 0 };
	ck_assert_int_eq(one_wait(&o, 0), 1);
	ck_assert_uint_eq(th_parked(o.t), 1); /* queued like any waiter */
	ck_assert_uint_eq(atomic_load(&o.d.calls), 0);

	uint64_t tok = 42;
	ck_assert_int_eq(fwait_wake_ex(o.t, &o.k, 1, 0, give_token, &tok), 1);
	/* main was the waker: the completion ran inside that call. */
	ck_assert_uint_eq(atomic_load(&o.d.calls), 1);
	ck_assert_uint_eq(atomic_load(&o.d.token), 42);
	ck_assert_uint_eq(th_parked(o.t), 0);
	/* Chosen: cancel says so, and a second wake finds nobody. */
	ck_assert_int_eq(fwait_cancel_async(o.t, &o.a), -EALREADY);
	ck_assert_int_eq(fwait_wake(o.t, &o.k, FWAIT_ALL), 0);
	ck_assert_uint_eq(atomic_load(&o.d.calls), 1);
	/* The task looks again: a ticket now, taken under the lock. */
	atomic_store(&o.k.avail, 1);
	ck_assert_int_eq(fwait_wait_async(o.t, &o.k, FWAIT_EXCLUSIVE, take_ticket, &o.w, &o.a), 0);
	ck_assert_uint_eq(atomic_load(&o.k.taken), 1);
	fwait_table_destroy(o.t);
}
END_TEST

START_TEST(cancel_before_the_wake_is_final)
{
	struct one o = { 0 };
	ck_assert_int_eq(one_wait(&o, 0), 1);
	ck_assert_int_eq(fwait_cancel_async(o.t, &o.a), 0);
	ck_assert_uint_eq(th_parked(o.t), 0);
	ck_assert_int_eq(fwait_wake(o.t, &o.k, FWAIT_ALL), 0);
	ck_assert_uint_eq(atomic_load(&o.d.calls), 0);
	ck_assert_int_eq(fwait_cancel_async(o.t, &o.a), -EINVAL); /* waits no more */
	struct fwait_stats st;
	fwait_stats_get(o.t, &st);
	ck_assert_uint_eq(st.timeouts, 1);
	fwait_table_destroy(o.t);
}
END_TEST

/* A blocking waiter of the ticket key, for the mixed cases. */
struct blocker {
	struct fwait_table *t;
	struct taker w;
	int rc;
};

static void *blocker_main(void *arg)
{
	struct blocker *b = arg;
	struct timespec dl = fwait_deadline_after_ns((uint64_t)TH_DEADLINE_MS * 1000000u);
	b->rc = fwait_wait(b->t, b->w.k, FWAIT_EXCLUSIVE, take_ticket, &b->w, &dl);
	return NULL;
}

static bool taken_reaches(void *arg)
{
	struct tickets *k = arg;
	return atomic_load(&k->avail) == 0;
}

/* Loop index 0: the next waiter is asynchronous; 1: blocking.  A is woken,
 * cancels too late (-EALREADY), no longer wants the ticket and passes the
 * wake on: the next waiter gets it.  Had the cancel swallowed the wake,
 * the next waiter would stay queued with a ticket free. */
START_TEST(cancel_after_the_wake_passes_it_on)
{
	struct fwait_table *t = fair_table();
	struct tickets k = { 0 };
	struct taker wa = { &k, 1 }, wb = { &k, 2 };
	struct done_rec da = { 0 }, db = { 0 };
	struct fwait_async a, b;
	struct blocker bl = { .t = t, .w = wb, .rc = 1 };
	pthread_t tid;
	ck_assert_int_eq(fwait_async_init(&a, note_done, &da), 0);
	ck_assert_int_eq(fwait_async_init(&b, note_done, &db), 0);
	ck_assert_int_eq(fwait_wait_async(t, &k, FWAIT_EXCLUSIVE, take_ticket, &wa, &a), 1);
	if (_i == 0) {
		ck_assert_int_eq(fwait_wait_async(t, &k, FWAIT_EXCLUSIVE, take_ticket, &wb, &b), 1);
	} else {
		th_spawn(&tid, blocker_main, &bl);
		ck_assert(th_wait_parked(t, 2, TH_DEADLINE_MS));
	}
	/* One ticket, one wake: A, the oldest, is chosen. */
	atomic_store(&k.avail, 1);
	ck_assert_int_eq(fwait_wake(t, &k, 1), 1);
	ck_assert_uint_eq(atomic_load(&da.calls), 1);
	ck_assert_int_eq(fwait_cancel_async(t, &a), -EALREADY);
	/* A passes the wake on. */
	ck_assert_int_eq(fwait_wake_ex(t, &k, 1, FWAIT_WAKE_EXCLUSIVE_ONLY, NULL, NULL), 1);
	if (_i == 0) {
		ck_assert_uint_eq(atomic_load(&db.calls), 1);
		ck_assert_int_eq(fwait_wait_async(t, &k, FWAIT_EXCLUSIVE, take_ticket, &wb, &b), 0);
	} else {
		ck_assert(th_poll(taken_reaches, &k, TH_DEADLINE_MS));
		th_join_all(&tid, 1, TH_DEADLINE_MS, "the blocking waiter", t);
		ck_assert_int_eq(bl.rc, 0);
	}
	ck_assert_uint_eq(atomic_load(&k.taken), 1);
	ck_assert_int_eq(k.order[0], 2);
	ck_assert_uint_eq(th_parked(t), 0);
	fwait_table_destroy(t);
}
END_TEST

/* Blocking and asynchronous waiters queued alternately on one key are
 * served oldest first: one ticket per wake, and each asynchronous waiter
 * takes its ticket when its task looks again (here, at once). */
START_TEST(blocking_and_async_keep_fifo_order)
{
	struct fwait_table *t = fair_table();
	struct tickets k = { 0 };
	struct blocker bl[2] = { { t, { &k, 1 }, 1 }, { t, { &k, 3 }, 1 } };
	struct taker wa[2] = { { &k, 2 }, { &k, 4 } };
	struct done_rec d[2] = { { 0 }, { 0 } };
	struct fwait_async a[2];
	pthread_t tids[2];
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(fwait_async_init(&a[i], note_done, &d[i]), 0);
		th_spawn(&tids[i], blocker_main, &bl[i]);
		ck_assert(th_wait_parked(t, 2 * (size_t)i + 1, TH_DEADLINE_MS));
		ck_assert_int_eq(fwait_wait_async(t, &k, FWAIT_EXCLUSIVE, take_ticket, &wa[i], &a[i]),
				 1);
	}
	for (int served = 0; served < 4; served++) {
		atomic_store(&k.avail, 1);
		ck_assert_int_eq(fwait_wake(t, &k, 1), 1);
		int i = served / 2;
		if (served % 2 == 0) {
			ck_assert(th_poll(taken_reaches, &k, TH_DEADLINE_MS));
		} else {
			ck_assert_uint_eq(atomic_load(&d[i].calls), 1);
			ck_assert_int_eq(fwait_wait_async(t, &k, FWAIT_EXCLUSIVE, take_ticket,
							  &wa[i], &a[i]), 0);
		}
	}
	th_join_all(tids, 2, TH_DEADLINE_MS, "the blocking waiters", t);
	ck_assert_uint_eq(atomic_load(&k.taken), 4);
	for (int n = 0; n < 4; n++)
		ck_assert_msg(k.order[n] == n + 1, "service %d went to waiter %d", n, k.order[n]);
	fwait_table_destroy(t);
}
END_TEST

/* FAIR: a woken asynchronous waiter that finds its ticket gone (main took
 * it first) and waits again keeps its place: the next wake is its again,
 * not the younger B's, and a lost race is counted. */
START_TEST(woken_async_loser_keeps_its_place)
{
	struct fwait_table *t = fair_table();
	struct tickets k = { 0 };
	struct taker wa = { &k, 1 }, wb = { &k, 2 }, barger = { &k, 9 };
	struct done_rec da = { 0 }, db = { 0 };
	struct fwait_async a, b;
	ck_assert_int_eq(fwait_async_init(&a, note_done, &da), 0);
	ck_assert_int_eq(fwait_async_init(&b, note_done, &db), 0);
	ck_assert_int_eq(fwait_wait_async(t, &k, FWAIT_EXCLUSIVE, take_ticket, &wa, &a), 1);
	ck_assert_int_eq(fwait_wait_async(t, &k, FWAIT_EXCLUSIVE, take_ticket, &wb, &b), 1);
	atomic_store(&k.avail, 1);
	ck_assert_int_eq(fwait_wake(t, &k, 1), 1);
	ck_assert_uint_eq(atomic_load(&da.calls), 1);
	ck_assert(take_ticket(&barger)); /* the barger, before A's task runs */
	ck_assert_int_eq(fwait_wait_async(t, &k, FWAIT_EXCLUSIVE, take_ticket, &wa, &a), 1);
	atomic_store(&k.avail, 1);
	ck_assert_int_eq(fwait_wake(t, &k, 1), 1);
	ck_assert_uint_eq(atomic_load(&da.calls), 2);
	ck_assert_uint_eq(atomic_load(&db.calls), 0);
	struct fwait_stats st;
	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.lost_races, 1);
	ck_assert_int_eq(fwait_cancel_async(t, &b), 0);
	fwait_table_destroy(t);
}
END_TEST

START_TEST(bad_input)
{
	struct fwait_table *t = fair_table(), *other = fair_table();
	struct tickets k = { 0 };
	struct taker w = { &k, 1 };
	struct done_rec d = { 0 };
	struct fwait_async a, blank = { { 0 } };
	ck_assert_int_eq(fwait_async_init(NULL, note_done, &d), -EINVAL);
	ck_assert_int_eq(fwait_async_init(&a, NULL, &d), -EINVAL);
	ck_assert_int_eq(fwait_async_init(&a, note_done, &d), 0);
	ck_assert_int_eq(fwait_wait_async(NULL, &k, 0, take_ticket, &w, &a), -EINVAL);
	ck_assert_int_eq(fwait_wait_async(t, NULL, 0, take_ticket, &w, &a), -EINVAL);
	ck_assert_int_eq(fwait_wait_async(t, &k, 0, NULL, &w, &a), -EINVAL);
	ck_assert_int_eq(fwait_wait_async(t, &k, 0, take_ticket, &w, NULL), -EINVAL);
	ck_assert_int_eq(fwait_wait_async(t, &k, FWAIT_SPIN, take_ticket, &w, &a), -EINVAL);
	ck_assert_int_eq(fwait_wait_async(t, &k, 0, take_ticket, &w, &blank), -EINVAL);
	ck_assert_int_eq(fwait_cancel_async(NULL, &a), -EINVAL);
	ck_assert_int_eq(fwait_cancel_async(t, NULL), -EINVAL);
	ck_assert_int_eq(fwait_cancel_async(t, &blank), -EINVAL);
	ck_assert_int_eq(fwait_wait_async(t, &k, 0, take_ticket, &w, &a), 1);
	ck_assert_int_eq(fwait_cancel_async(other, &a), -EINVAL); /* queued on t */
	ck_assert_int_eq(fwait_cancel_async(t, &a), 0);
	ck_assert_uint_eq(atomic_load(&d.calls), 0);
	fwait_table_destroy(t);
	fwait_table_destroy(other);
}
END_TEST

/* ---- stress: asynchronous and blocking waiters on a few locks ---------- */

#define NLOCKS 3

struct arena {
	struct fwait_table *t;
	_Atomic uint32_t locks[NLOCKS];
	_Atomic int holders[NLOCKS];
	_Atomic int bad;
	unsigned iters;
	/* What the asynchronous workers went through, to show the stress
	 * reached each path: queued, cancelled (0), cancelled too late
	 * (-EALREADY), passed on. */
	_Atomic unsigned queued, cancelled, late, passed;
};

struct lock_want {
	_Atomic uint32_t *lock;
};

static bool take_lock(void *arg)
{
	struct lock_want *w = arg;
	uint32_t v = 0;
	return atomic_compare_exchange_strong(w->lock, &v, 1);
}

static void hold_and_release(struct arena *ar, unsigned i)
{
	if (atomic_fetch_add(&ar->holders[i], 1) != 0)
		atomic_store(&ar->bad, 1);
	/* Let the others run into the held lock and queue: the hold is
	 * what makes waiters, not a synchronisation. */
	sched_yield();
	atomic_fetch_sub(&ar->holders[i], 1);
	atomic_store(&ar->locks[i], 0);
	fwait_wake(ar->t, &ar->locks[i], 1);
}

struct flag_done {
	_Atomic bool fired;
	_Atomic uint64_t fires;
};

static void set_fired(struct fwait_async *a, uint64_t token, void *arg)
{
	(void)a;
	(void)token;
	struct flag_done *f = arg;
	atomic_fetch_add(&f->fires, 1);
	atomic_store_explicit(&f->fired, true, memory_order_release);
}

/* The task's executor, here: poll for the completion (bounded). */
static bool await_fired(struct flag_done *f)
{
	uint64_t end = util_now_ns() + (uint64_t)TH_DEADLINE_MS * 1000000u;
	while (!atomic_load_explicit(&f->fired, memory_order_acquire)) {
		if (util_now_ns() > end)
			return false;
		sched_yield();
	}
	atomic_store(&f->fired, false);
	return true;
}

struct worker {
	struct arena *ar;
	unsigned id;
	bool async;
	int rc;
};

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct arena *ar = wk->ar;
	uint64_t r = util_rand_seed(0xa57cULL, wk->id);
	struct flag_done f = { 0 };
	struct fwait_async a;
	fwait_async_init(&a, set_fired, &f);
	for (unsigned n = 0; n < ar->iters; n++) {
		unsigned i = (unsigned)(util_rand_next(&r) % NLOCKS);
		struct lock_want w = { &ar->locks[i] };
		if (!wk->async) {
			struct timespec dl = fwait_deadline_after_ns((uint64_t)TH_DEADLINE_MS * 1000000u);
			int rc = fwait_wait(ar->t, w.lock, FWAIT_EXCLUSIVE, take_lock, &w, &dl);
			if (rc != 0) {
				wk->rc = rc;
				return NULL;
			}
			hold_and_release(ar, i);
			continue;
		}
		for (;;) {
			int rc = fwait_wait_async(ar->t, w.lock, FWAIT_EXCLUSIVE, take_lock, &w, &a);
			if (rc == 0)
				break; /* taken */
			if (rc != 1) {
				wk->rc = rc;
				return NULL;
			}
			atomic_fetch_add(&ar->queued, 1);
			uint64_t coin = util_rand_next(&r) % 4;
			if (coin == 0) {
				/* The caller's timer: cancel, a little later. */
				sched_yield();
				int c = fwait_cancel_async(ar->t, &a);
				if (c == 0) {
					atomic_fetch_add(&ar->cancelled, 1);
					continue; /* gave up this wait; try again */
				}
				if (c != -EALREADY) {
					wk->rc = c;
					return NULL;
				}
				/* Woken meanwhile: it is a wake.  Half the time
				 * the task no longer wants it and passes it on. */
				atomic_fetch_add(&ar->late, 1);
				if (!await_fired(&f)) {
					wk->rc = -ETIMEDOUT;
					return NULL;
				}
				if (util_rand_next(&r) % 2) {
					atomic_fetch_add(&ar->passed, 1);
					fwait_wake_ex(ar->t, w.lock, 1, FWAIT_WAKE_EXCLUSIVE_ONLY,
						      NULL, NULL);
					fwait_async_init(&a, set_fired, &f); /* a fresh wait */
				}
				continue;
			}
			if (!await_fired(&f)) {
				wk->rc = -ETIMEDOUT;
				return NULL;
			}
		}
		hold_and_release(ar, i);
	}
	return NULL;
}

START_TEST(stress_async_blocking_and_cancels)
{
	enum { NW = 8 };
	struct arena ar = { .t = fair_table(), .iters = th_scaled(3000, 300) };
	struct worker wk[NW];
	pthread_t tids[NW];
	for (unsigned i = 0; i < NW; i++) {
		wk[i] = (struct worker){ .ar = &ar, .id = i, .async = i % 2 == 0 };
		th_spawn(&tids[i], worker_main, &wk[i]);
	}
	th_join_all(tids, NW, TH_DEADLINE_MS * 3, "the workers", ar.t);
	fprintf(stderr, "async stress: %u queued, %u cancelled, %u cancelled too late, "
		"%u passed on\n", atomic_load(&ar.queued), atomic_load(&ar.cancelled),
		atomic_load(&ar.late), atomic_load(&ar.passed));
	for (unsigned i = 0; i < NW; i++)
		ck_assert_msg(wk[i].rc == 0, "worker %u: %d", i, wk[i].rc);
	ck_assert_int_eq(atomic_load(&ar.bad), 0);
	for (unsigned i = 0; i < NLOCKS; i++)
		ck_assert_uint_eq(atomic_load(&ar.locks[i]), 0);
	ck_assert_uint_eq(th_parked(ar.t), 0);
	/* The paths under test were reached (not the rarer too-late cancel:
	 * it needs a wake between the queueing and the cancel's lock). */
	ck_assert_uint_gt(atomic_load(&ar.queued), 0);
	ck_assert_uint_gt(atomic_load(&ar.cancelled), 0);
	fwait_table_destroy(ar.t);
}
END_TEST

static const char *next_label(int i)
{
	return i == 0 ? "next async" : "next blocking";
}

int main(void)
{
	Suite *su = suite_create("fwait-async");
	TCase *tc = tcase_create("async");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ready_at_once_runs_no_completion);
	tcase_add_test(tc, wake_runs_the_completion_once_with_its_token);
	tcase_add_test(tc, cancel_before_the_wake_is_final);
	tcase_add_test(tc, blocking_and_async_keep_fifo_order);
	tcase_add_test(tc, woken_async_loser_keeps_its_place);
	tcase_add_test(tc, bad_input);
	suite_add_tcase(su, tc);
	th_add_loop(su, "pass on", 60, cancel_after_the_wake_passes_it_on, 0, 2, next_label);
	TCase *ts = tcase_create("stress");
	tcase_set_timeout(ts, 120);
	tcase_add_test(ts, stress_async_blocking_and_cancels);
	suite_add_tcase(su, ts);
	return check_run_suite(su);
}
