/* SPDX-License-Identifier: MIT */
/*
 * test_keyed_ex.c - the parking-lot calls: fwait_wait_ex (how a wait
 * ended, tokens), fwait_wake_ex (the exact report, tokens,
 * FWAIT_WAKE_EXCLUSIVE_ONLY) and fwait_spin.
 *
 * Design note: waiters are parked one at a time (polling
 * fwait_waiters_walk), so arrival order is known; each waiter's ready()
 * counts its calls, so "a token ends the wait without ready()" is a
 * count that did not move.  Reports are copied out of the callback and
 * checked on the Check thread.
 */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include "helpers.h"
#include "../check_run.h"

struct ex_waiter {
	struct fwait_table *t;
	const void *key;
	unsigned flags;
	_Atomic bool *open;
	_Atomic unsigned calls;
	bool old_api;   /* fwait_wait instead of fwait_wait_ex */
	const struct timespec *deadline;
	int rc;
	struct fwait_wait_result res;
	_Atomic bool done;
};

static bool ex_ready(void *arg)
{
	struct ex_waiter *w = arg;
	atomic_fetch_add(&w->calls, 1);
	return atomic_load(w->open);
}

static void *ex_main(void *arg)
{
	struct ex_waiter *w = arg;
	if (w->old_api)
		w->rc = fwait_wait(w->t, w->key, w->flags, ex_ready, w, w->deadline);
	else
		w->rc = fwait_wait_ex(w->t, w->key, w->flags, ex_ready, w, w->deadline, &w->res);
	atomic_store(&w->done, true);
	return NULL;
}

/* Parks w (spawned as tid) and waits until the table shows it parked. */
static void park(struct ex_waiter *w, pthread_t *tid, size_t parked_before)
{
	th_spawn(tid, ex_main, w);
	ck_assert_msg(th_wait_parked(w->t, parked_before + 1, TH_DEADLINE_MS),
		      "waiter %zu did not park", parked_before);
}

struct cb_log {
	unsigned calls;
	struct fwait_wake_report last;
	uint64_t token;
};

static uint64_t log_cb(const struct fwait_wake_report *r, void *arg)
{
	struct cb_log *l = arg;
	l->calls++;
	l->last = *r;
	return l->token;
}

/* ---- how a wait ended ---------------------------------------------------- */

START_TEST(how_precheck_locked_woken_timedout)
{
	struct fwait_table *t = th_table_for(_i, 1);
	_Atomic bool open = true;
	int key;
	struct ex_waiter w = { .t = t, .key = &key, .open = &open };
	struct fwait_wait_result r;

	/* Ready at the unlocked look: no lock, no sleep. */
	ck_assert_int_eq(fwait_wait_ex(t, &key, FWAIT_PRECHECK, ex_ready, &w, NULL, &r), 0);
	ck_assert_int_eq(r.how, FWAIT_HOW_PRECHECK);
	ck_assert_uint_eq(r.sleeps, 0);
	/* FWAIT_SPIN implies the pre-check. */
	ck_assert_int_eq(fwait_wait_ex(t, &key, FWAIT_SPIN, ex_ready, &w, NULL, &r), 0);
	ck_assert_int_eq(r.how, FWAIT_HOW_PRECHECK);
	/* Ready at the first locked check. */
	ck_assert_int_eq(fwait_wait_ex(t, &key, 0, ex_ready, &w, NULL, &r), 0);
	ck_assert_int_eq(r.how, FWAIT_HOW_LOCKED);
	ck_assert_uint_eq(r.sleeps, 0);
	ck_assert_uint_eq(r.token, 0);
	/* out may be NULL. */
	ck_assert_int_eq(fwait_wait_ex(t, &key, 0, ex_ready, &w, NULL, NULL), 0);

	/* Timed out: never ready. */
	atomic_store(&open, false);
	struct timespec dl = fwait_deadline_after_ns(2000000);
	ck_assert_int_eq(fwait_wait_ex(t, &key, FWAIT_EXCLUSIVE, ex_ready, &w, &dl, &r), -ETIMEDOUT);
	ck_assert_int_eq(r.how, FWAIT_HOW_TIMEDOUT);
	ck_assert_uint_ge(r.sleeps, 1);

	/* Woken: parked, then the condition opens and a wake comes. */
	pthread_t tid;
	park(&w, &tid, 0);
	atomic_store(&open, true);
	ck_assert_int_eq(fwait_wake(t, &key, 1), 1);
	th_join_all(&tid, 1, TH_DEADLINE_MS, "woken waiter", t);
	ck_assert_int_eq(w.rc, 0);
	ck_assert_int_eq(w.res.how, FWAIT_HOW_WOKEN);
	ck_assert_uint_eq(w.res.sleeps, 1);
	ck_assert_uint_eq(w.res.token, 0);
	fwait_table_destroy(t);
}
END_TEST

/* ---- tokens ---------------------------------------------------------------- */

/* A wake's token ends fwait_wait_ex without another ready(); fwait_wait,
 * whose contract is "returns once ready() held", ignores it. */
START_TEST(token_ends_the_wait_without_ready)
{
	struct fwait_table *t = th_table_for(FWAIT_WAKE_ONE, 1);
	_Atomic bool open = false;
	int key;
	struct ex_waiter ex = { .t = t, .key = &key, .open = &open, .flags = FWAIT_EXCLUSIVE };
	struct ex_waiter old = { .t = t, .key = &key, .open = &open, .flags = FWAIT_EXCLUSIVE,
				 .old_api = true };
	pthread_t tids[2];

	park(&ex, &tids[0], 0);
	park(&old, &tids[1], 1);
	unsigned ex_calls = atomic_load(&ex.calls), old_calls = atomic_load(&old.calls);
	struct cb_log log = { .token = 42 };
	/* Both, with the token: ex returns on it, old re-checks ready()
	 * (false) and sleeps again. */
	ck_assert_int_eq(fwait_wake_ex(t, &key, 2, 0, log_cb, &log), 2);
	th_join_all(&tids[0], 1, TH_DEADLINE_MS, "token waiter", t);
	ck_assert_int_eq(ex.rc, 0);
	ck_assert_int_eq(ex.res.how, FWAIT_HOW_WOKEN);
	ck_assert_uint_eq(ex.res.token, 42);
	ck_assert_uint_eq(atomic_load(&ex.calls), ex_calls);
	ck_assert_msg(th_wait_parked(t, 1, TH_DEADLINE_MS), "fwait_wait did not sleep again");
	ck_assert_uint_gt(atomic_load(&old.calls), old_calls);
	ck_assert(!atomic_load(&old.done));
	atomic_store(&open, true);
	ck_assert_int_eq(fwait_wake(t, &key, 1), 1);
	th_join_all(&tids[1], 1, TH_DEADLINE_MS, "fwait_wait waiter", t);
	ck_assert_int_eq(old.rc, 0);

	struct fwait_stats st;
	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.handoffs, 2); /* each waiter woken with a token */
	fwait_table_destroy(t);
}
END_TEST

/* ---- the report ------------------------------------------------------------ */

/* Queue E0 S0 E1 S1 E2 on one key (and a foreigner on another key of the
 * same bucket): each wake's report counts exactly what it chose and
 * whether waiters of the key remain.  Tokens end every wait. */
START_TEST(report_is_exact)
{
	struct fwait_table *t = th_table_for(FWAIT_WAKE_ONE, 1);
	_Atomic bool open = false;
	int key, other;
	const unsigned excl[] = { 1, 0, 1, 0, 1 };
	enum { N = 5 };
	struct ex_waiter ws[N + 1];
	pthread_t tids[N + 1];

	for (unsigned i = 0; i < N; i++) {
		ws[i] = (struct ex_waiter){ .t = t, .key = &key, .open = &open,
			.flags = excl[i] ? FWAIT_EXCLUSIVE : 0 };
		park(&ws[i], &tids[i], i);
	}
	ws[N] = (struct ex_waiter){ .t = t, .key = &other, .open = &open };
	park(&ws[N], &tids[N], N);

	struct cb_log log = { .token = 1 };
	/* Exclusive only: E0, and waiters remain. */
	ck_assert_int_eq(fwait_wake_ex(t, &key, 1, FWAIT_WAKE_EXCLUSIVE_ONLY, log_cb, &log), 1);
	ck_assert_uint_eq(log.last.woken, 1);
	ck_assert_uint_eq(log.last.woken_exclusive, 1);
	ck_assert(log.last.more_waiters);
	th_join_all(&tids[0], 1, TH_DEADLINE_MS, "E0", t);
	ck_assert_uint_eq(tc_parked_on(t, &key, -1), 4);
	/* Every shared one and one exclusive: S0 S1 E1; E2 remains. */
	ck_assert_int_eq(fwait_wake_ex(t, &key, 1, 0, log_cb, &log), 3);
	ck_assert_uint_eq(log.last.woken, 3);
	ck_assert_uint_eq(log.last.woken_exclusive, 1);
	ck_assert(log.last.more_waiters);
	/* The last one: nobody of the key remains (the foreigner does). */
	ck_assert_int_eq(fwait_wake_ex(t, &key, 1, 0, log_cb, &log), 1);
	ck_assert(!log.last.more_waiters);
	/* Nobody left: the callback still runs, told so. */
	ck_assert_int_eq(fwait_wake_ex(t, &key, 1, 0, log_cb, &log), 0);
	ck_assert_uint_eq(log.calls, 4);
	ck_assert_uint_eq(log.last.woken, 0);
	ck_assert(!log.last.more_waiters);
	ck_assert(!log.last.due);
	th_join_all(tids + 1, N - 1, TH_DEADLINE_MS, "key waiters", t); /* E0: above */
	for (unsigned i = 0; i < N; i++) {
		ck_assert_int_eq(ws[i].rc, 0);
		ck_assert_uint_eq(ws[i].res.token, 1);
	}
	ck_assert_uint_eq(tc_parked_on(t, &other, -1), 1);
	ck_assert_int_eq(fwait_wake_ex(t, &other, 1, 0, log_cb, &log), 1);
	th_join_all(&tids[N], 1, TH_DEADLINE_MS, "foreigner", t);
	fwait_table_destroy(t);
}
END_TEST

/* due: the oldest exclusive waiter chosen is due.  STRICT: always; FAIR
 * with fair_ns 1 ns: always (it has waited longer); WAKE_ALL: never; a
 * wake of shared waiters only: never. */
START_TEST(report_due)
{
	static const struct {
		enum fwait_policy policy;
		enum fwait_handoff handoff;
		uint32_t fair_ns;
		bool excl, due;
	} rows[] = {
		{ FWAIT_WAKE_ONE, FWAIT_HANDOFF_STRICT, 0, true, true },
		{ FWAIT_WAKE_ONE, FWAIT_HANDOFF_FAIR, 1, true, true },
		{ FWAIT_WAKE_ONE, FWAIT_HANDOFF_FAIR, 1, false, false },
		{ FWAIT_WAKE_ALL, FWAIT_HANDOFF_FAIR, 1, true, false },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct fwait_config cfg = { .nbuckets = 1, .policy = rows[i].policy,
			.handoff = rows[i].handoff, .fair_ns = rows[i].fair_ns };
		struct fwait_table *t;
		ck_assert_int_eq(fwait_table_create(&t, &cfg), 0);
		_Atomic bool open = false;
		int key;
		struct ex_waiter w = { .t = t, .key = &key, .open = &open,
			.flags = rows[i].excl ? FWAIT_EXCLUSIVE : 0 };
		pthread_t tid;
		park(&w, &tid, 0);
		struct cb_log log = { .token = 9 };
		ck_assert_int_eq(fwait_wake_ex(t, &key, 1, 0, log_cb, &log), 1);
		ck_assert_msg(log.last.due == rows[i].due, "row %zu: due %d", i, log.last.due);
		th_join_all(&tid, 1, TH_DEADLINE_MS, "due waiter", t);
		fwait_table_destroy(t);
	}
}
END_TEST


/* Under FWAIT_BROADCAST a wake wakes the whole bucket, but the report
 * counts, and the token reaches, only the key's own waiters: a waiter of
 * another key re-checks its ready() (false) and sleeps again.  (Before,
 * the token reached it, and a hybrid latch's waiter returned holding
 * nothing: its ready() had not run.) */
START_TEST(broadcast_token_only_to_the_key)
{
	struct fwait_table *t = th_table_for(FWAIT_BROADCAST, 1);
	_Atomic bool open = false;
	int key, other;
	struct ex_waiter mine = { .t = t, .key = &key, .open = &open, .flags = FWAIT_EXCLUSIVE };
	struct ex_waiter theirs = { .t = t, .key = &other, .open = &open, .flags = FWAIT_EXCLUSIVE };
	pthread_t tids[2];

	park(&theirs, &tids[1], 0);
	park(&mine, &tids[0], 1);
	struct cb_log log = { .token = 5 };
	ck_assert_int_eq(fwait_wake_ex(t, &key, 1, 0, log_cb, &log), 2);
	ck_assert_uint_eq(log.last.woken, 1);
	ck_assert_uint_eq(log.last.woken_exclusive, 1);
	th_join_all(&tids[0], 1, TH_DEADLINE_MS, "key's waiter", t);
	ck_assert_uint_eq(mine.res.token, 5);
	ck_assert_msg(th_wait_parked(t, 1, TH_DEADLINE_MS), "the other key's waiter did not sleep again");
	ck_assert(!atomic_load(&theirs.done));
	atomic_store(&open, true);
	ck_assert_int_eq(fwait_wake(t, &other, 1), 1);
	th_join_all(&tids[1], 1, TH_DEADLINE_MS, "other key's waiter", t);
	ck_assert_int_eq(theirs.res.how, FWAIT_HOW_WOKEN);
	ck_assert_uint_eq(theirs.res.token, 0);
	fwait_table_destroy(t);
}
END_TEST


/* FWAIT_WAKE_CANCEL undoes the choice: nobody wakes, and the next wake
 * chooses exactly as if the cancelled one had not happened (the oldest
 * exclusive waiter is still the oldest); the statistics count no wait or
 * wake for it. */
START_TEST(cancel_undoes_the_choice)
{
	struct fwait_table *t = th_table_for(FWAIT_WAKE_ONE, 1);
	_Atomic bool open = false;
	int key;
	const unsigned excl[] = { 1, 0, 1 };
	struct ex_waiter ws[3];
	pthread_t tids[3];
	for (unsigned i = 0; i < 3; i++) {
		ws[i] = (struct ex_waiter){ .t = t, .key = &key, .open = &open,
			.flags = excl[i] ? FWAIT_EXCLUSIVE : 0 };
		park(&ws[i], &tids[i], i);
	}
	struct fwait_stats before, after;
	fwait_stats_get(t, &before);
	struct cb_log log = { .token = FWAIT_WAKE_CANCEL };
	ck_assert_int_eq(fwait_wake_ex(t, &key, 1, 0, log_cb, &log), 0);
	ck_assert_uint_eq(log.last.woken, 2); /* it had chosen E0 and S0 */
	ck_assert_uint_eq(tc_parked_on(t, &key, -1), 3);
	fwait_stats_get(t, &after);
	ck_assert_uint_eq(after.waits, before.waits);
	ck_assert_uint_eq(after.wakeups, before.wakeups);
	/* Again, with a token: E0 and S0, as the first time; E1 stays. */
	log.token = 3;
	ck_assert_int_eq(fwait_wake_ex(t, &key, 1, 0, log_cb, &log), 2);
	th_join_all(tids, 2, TH_DEADLINE_MS, "E0 and S0", t);
	ck_assert(!atomic_load(&ws[2].done));
	ck_assert_uint_eq(ws[0].res.token, 3);
	ck_assert_uint_eq(ws[1].res.token, 3);
	ck_assert_uint_eq(ws[0].res.sleeps, 1);
	ck_assert_int_eq(fwait_wake_ex(t, &key, 1, 0, log_cb, &log), 1);
	th_join_all(&tids[2], 1, TH_DEADLINE_MS, "E1", t);
	fwait_table_destroy(t);
}
END_TEST

/* ---- spin and bad input ---------------------------------------------------- */

static bool count_false(void *arg)
{
	atomic_fetch_add((_Atomic unsigned *)arg, 1);
	return false;
}

static bool count_true(void *arg)
{
	atomic_fetch_add((_Atomic unsigned *)arg, 1);
	return true;
}

START_TEST(spin_looks_then_gives_up)
{
	struct fwait_config fair = { .spin_ns = 200000 }; /* 200 us */
	struct fwait_config off = { .spin_ns = FWAIT_SPIN_OFF };
	struct fwait_config wake_all = { .policy = FWAIT_WAKE_ALL };
	struct fwait_table *tf, *to, *ta;
	ck_assert_int_eq(fwait_table_create(&tf, &fair), 0);
	ck_assert_int_eq(fwait_table_create(&to, &off), 0);
	ck_assert_int_eq(fwait_table_create(&ta, &wake_all), 0);
	_Atomic unsigned n = 0;

	ck_assert(fwait_spin(tf, count_true, &n));
	ck_assert_uint_eq(atomic_load(&n), 1);
	atomic_store(&n, 0);
	ck_assert(!fwait_spin(tf, count_false, &n));
	ck_assert_uint_gt(atomic_load(&n), 16); /* it looked again and again */
	/* Tables that do not spin look once. */
	atomic_store(&n, 0);
	ck_assert(!fwait_spin(to, count_false, &n));
	ck_assert(!fwait_spin(ta, count_false, &n));
	ck_assert_uint_eq(atomic_load(&n), 2);
	ck_assert(!fwait_spin(NULL, count_true, &n));
	ck_assert(!fwait_spin(tf, NULL, &n));
	fwait_table_destroy(tf);
	fwait_table_destroy(to);
	fwait_table_destroy(ta);
}
END_TEST

/* The spin's yields: a thread pinned to the spinner's CPU, runnable all
 * along (it yields in a loop, at the spinner's priority), opens the
 * condition once main has asked (go) only if it gets the CPU while
 * fwait_spin still looks.  Sharing one CPU, it cannot run while main
 * pauses, only when main yields or is preempted; a spin that only pauses
 * gives up after spin_ns with the opener still waiting for the CPU (no
 * success in 20 tries, three runs, before the yields).  Odds, not
 * certainty: other processes on that CPU may take the yields (CI's
 * parallel tests did, under TSan, for a first version whose opener slept
 * at nice 19 and so was never the scheduler's pick while they ran), or a
 * tick may preempt main inside its pause; so one success in 50 tries is
 * asked for. */
struct opener {
	int cpu;
	_Atomic bool go, open, stop;
};

static void pin_to(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ck_assert_int_eq(pthread_setaffinity_np(pthread_self(), sizeof(set), &set), 0);
}

static void *opener_main(void *arg)
{
	struct opener *o = arg;
	pin_to(o->cpu);
	while (!atomic_load(&o->stop)) {
		if (atomic_exchange(&o->go, false))
			atomic_store(&o->open, true);
		sched_yield();
	}
	return NULL;
}

static bool is_open(void *arg)
{
	return atomic_load(&((struct opener *)arg)->open);
}

START_TEST(spin_yields_to_a_thread_on_its_cpu)
{
	struct fwait_config fair = { .spin_ns = FWAIT_SPIN_NS_DEFAULT };
	struct fwait_table *t;
	ck_assert_int_eq(fwait_table_create(&t, &fair), 0);
	cpu_set_t saved;
	ck_assert_int_eq(pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved), 0);
	struct opener o = { .cpu = -1 };
	for (int c = 0; c < CPU_SETSIZE && o.cpu < 0; c++)
		if (CPU_ISSET(c, &saved))
			o.cpu = c;
	pin_to(o.cpu);
	pthread_t tid;
	th_spawn(&tid, opener_main, &o);

	unsigned wins = 0, tries;
	for (tries = 0; tries < 50 && wins == 0; tries++) {
		atomic_store(&o.open, false);
		atomic_store(&o.go, true);
		/* Only a spin that found it closed and then open counts (a
		 * preemption between the two stores and here lets the
		 * opener in first). */
		bool open_at_start = is_open(&o);
		if (fwait_spin(t, is_open, &o) && !open_at_start)
			wins++;
		/* The opener's round done before the next (polls yield). */
		ck_assert_msg(th_poll(is_open, &o, TH_DEADLINE_MS), "the opener never ran");
	}
	atomic_store(&o.stop, true);
	th_join_all(&tid, 1, TH_DEADLINE_MS, "the opener", NULL);
	ck_assert_int_eq(pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved), 0);
	fwait_table_destroy(t);
	ck_assert_msg(wins > 0, "the spin never let the opener run (%u tries)", tries);
}
END_TEST

START_TEST(bad_input)
{
	struct fwait_table *t = th_table_for(FWAIT_WAKE_ONE, 1);
	int key;
	_Atomic unsigned n = 0;
	struct timespec bad = { .tv_sec = 0, .tv_nsec = -1 };

	ck_assert_int_eq(fwait_wait_ex(t, &key, 8, count_true, &n, NULL, NULL), -EINVAL);
	ck_assert_int_eq(fwait_wait_ex(NULL, &key, 0, count_true, &n, NULL, NULL), -EINVAL);
	ck_assert_int_eq(fwait_wait_ex(t, NULL, 0, count_true, &n, NULL, NULL), -EINVAL);
	ck_assert_int_eq(fwait_wait_ex(t, &key, 0, NULL, &n, NULL, NULL), -EINVAL);
	ck_assert_int_eq(fwait_wait_ex(t, &key, 0, count_true, &n, &bad, NULL), -EINVAL);
	ck_assert_int_eq(fwait_wake_ex(t, &key, 1, 2, NULL, NULL), -EINVAL);
	ck_assert_int_eq(fwait_wake_ex(NULL, &key, 1, 0, NULL, NULL), -EINVAL);
	ck_assert_int_eq(fwait_wake_ex(t, NULL, 1, 0, NULL, NULL), -EINVAL);
	ck_assert_uint_eq(atomic_load(&n), 0);
	fwait_table_destroy(t);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("fwait-keyed-ex");
	TCase *tc = tcase_create("keyed_ex");
	tcase_set_timeout(tc, 60);
	th_add_loop(su, "keyed_ex", 60, how_precheck_locked_woken_timedout,
		    0, TC_NVARIANTS, tc_variant_name);
	tcase_add_test(tc, token_ends_the_wait_without_ready);
	tcase_add_test(tc, report_is_exact);
	tcase_add_test(tc, report_due);
	tcase_add_test(tc, broadcast_token_only_to_the_key);
	tcase_add_test(tc, cancel_undoes_the_choice);
	tcase_add_test(tc, spin_looks_then_gives_up);
	tcase_add_test(tc, spin_yields_to_a_thread_on_its_cpu);
	tcase_add_test(tc, bad_input);
	suite_add_tcase(su, tc);
	return check_run_suite(su);
}
