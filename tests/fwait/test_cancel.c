/* SPDX-License-Identifier: MIT */
/*
 * test_cancel.c - a thread cancelled (pthread_cancel) while parked.
 *
 * Design note: fwait's waits are not cancellation points, with either
 * parker (fwait.h, "Cancellation").  A thread parked in a bit wait, a bit
 * lock (with a deadline, so the pthread parker's timed wait is covered) or
 * a keyed wait is cancelled; it must stay parked, return from the wait once
 * woken, and act on the cancel at its next cancellation point
 * (pthread_testcancel), so that it exits with PTHREAD_CANCELED and leaves
 * no waiter record (which lives on its stack) in the bucket.  The wake
 * runs in a helper thread joined with a deadline: had the cancel acted
 * inside pthread_cond_wait, the dead thread's record would still be
 * linked and the wake would block on that thread's parker mutex, which
 * the cancelled wait re-took and never released, or touch its stack.
 * Built with both parkers (CI's DRD build uses -Dfwait_park=pthread).
 * Failing first, before fw_sleep disabled cancellation: with the pthread
 * parker every form failed with "cancelled inside the wait, which never
 * returned" (the futex parker's sleep is no cancellation point; it passed).
 *
 * A signal to a parked thread: its handler runs during the wait, which
 * goes on sleeping and returns 0 once woken (either parker re-checks its
 * state after an interrupted or spurious return and sleeps again).  The victim is signalled once it sleeps in the kernel
 * (th_wait_asleep says why that matters under ThreadSanitizer); main then
 * waits for the handler while the victim stays parked.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

#include "helpers.h"
#include "../check_run.h"

#define BIT 3

enum form { BIT_WAIT, BIT_LOCK, KEYED, NFORMS };

struct victim {
	struct fwait_table *t;
	_Atomic uint32_t *word;
	_Atomic bool *ready;        /* the keyed wait's condition */
	enum form form;
	int rc;                     /* the wait's return */
	_Atomic bool returned;      /* the wait returned */
	_Atomic bool past_testcancel;
	_Atomic long tid;           /* its kernel thread id, once set */
};

static bool is_ready(void *arg)
{
	return atomic_load((_Atomic bool *)arg);
}

static void *victim_main(void *arg)
{
	struct victim *v = arg;
	struct timespec dl;
	atomic_store(&v->tid, th_gettid());
	switch (v->form) {
	case BIT_WAIT:
		v->rc = fwait_bit_wait(v->t, v->word, BIT, NULL);
		break;
	case BIT_LOCK:
		dl = fwait_deadline_after_ns((uint64_t)TH_DEADLINE_MS * 1000000u);
		v->rc = fwait_bit_lock(v->t, v->word, BIT, &dl);
		if (v->rc == 0)
			fwait_bit_unlock(v->t, v->word, BIT);
		break;
	default:
		v->rc = fwait_wait(v->t, v->ready, 0, is_ready, v->ready, NULL);
		break;
	}
	atomic_store(&v->returned, true);
	pthread_testcancel(); /* the pending cancel acts here */
	atomic_store(&v->past_testcancel, true);
	return NULL;
}

static void *waker_main(void *arg)
{
	struct victim *v = arg;
	switch (v->form) {
	case BIT_WAIT:
		fwait_bit_clear(v->t, v->word, BIT);
		break;
	case BIT_LOCK:
		fwait_bit_unlock(v->t, v->word, BIT);
		break;
	default:
		atomic_store(v->ready, true);
		fwait_wake(v->t, v->ready, FWAIT_ALL);
		break;
	}
	return NULL;
}

/* A table, and the word as the form's wait needs it: a lock bit held, an
 * event bit set (a keyed wait's condition starts false). */
static struct fwait_table *victim_scene(int form, _Atomic uint32_t *word)
{
	struct fwait_table *t = th_table_for(FWAIT_WAKE_ONE, 4);
	if (form == BIT_LOCK)
		ck_assert_int_eq(fwait_bit_trylock(word, BIT), 0);
	else if (form == BIT_WAIT)
		fwait_bit_set(word, BIT);
	return t;
}

/* Loop index: the form of the wait (enum form). */
START_TEST(cancelled_waiter_returns_then_exits)
{
	_Atomic uint32_t word = 0;
	_Atomic bool ready = false;
	struct fwait_table *t = victim_scene(_i, &word);
	struct victim v = { .t = t, .word = &word, .ready = &ready, .form = (enum form)_i,
			    .rc = 1 };
	pthread_t vt, wt;
	th_spawn(&vt, victim_main, &v);
	ck_assert_msg(th_wait_parked(t, 1, TH_DEADLINE_MS), "the victim never parked");
	ck_assert_int_eq(pthread_cancel(vt), 0);

	th_spawn(&wt, waker_main, &v);
	th_join_all(&wt, 1, TH_DEADLINE_MS, "the wake of a cancelled waiter", NULL);
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += TH_DEADLINE_MS / 1000;
	void *ret = NULL;
	int jr = pthread_timedjoin_np(vt, &ret, &dl);
	ck_assert_msg(jr == 0, "the cancelled waiter still runs after the wake: %d", jr);
	ck_assert_msg(ret == PTHREAD_CANCELED, "the waiter was not cancelled");
	ck_assert_msg(atomic_load(&v.returned), "cancelled inside the wait, which never returned");
	ck_assert_int_eq(v.rc, 0);
	ck_assert(!atomic_load(&v.past_testcancel));
	ck_assert_uint_eq(th_parked(t), 0);
	uint32_t left = atomic_load(&word) & ~FWAIT_WAITERS_MASK;
	ck_assert_uint_eq(left, 0);
	fwait_table_destroy(t);
}
END_TEST

/* ---- a signal to a parked waiter ---------------------------------------- */

/* Signal handlers reach only globals: this flag is this file's.  A
 * lock-free atomic store is async-signal-safe (and, unlike sem_post from a
 * handler, Valgrind's DRD follows it). */
static _Atomic bool handled;

static void note_handler(int sig)
{
	(void)sig;
	atomic_store(&handled, true);
}

static bool was_handled(void *arg)
{
	(void)arg;
	return atomic_load(&handled);
}

/* Loop index: the form of the wait (enum form). */
START_TEST(signalled_waiter_runs_its_handler)
{
	_Atomic uint32_t word = 0;
	_Atomic bool ready = false;
	struct fwait_table *t = victim_scene(_i, &word);
	atomic_store(&handled, false);
	struct sigaction sa = { .sa_handler = note_handler }, old;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, &old), 0);

	struct victim v = { .t = t, .word = &word, .ready = &ready, .form = (enum form)_i,
			    .rc = 1 };
	pthread_t vt, wt;
	th_spawn(&vt, victim_main, &v);
	ck_assert_msg(th_wait_parked(t, 1, TH_DEADLINE_MS), "the victim never parked");
	ck_assert_msg(th_wait_asleep(atomic_load(&v.tid), TH_DEADLINE_MS), "the victim never slept");
	ck_assert_int_eq(pthread_kill(vt, SIGUSR1), 0);
	/* Half the bit lock's deadline: a handler deferred to the wait's
	 * end would run only after this. */
	ck_assert_msg(th_poll(was_handled, NULL, TH_DEADLINE_MS / 2),
		      "the handler never ran while parked");
	ck_assert_msg(!atomic_load(&v.returned), "the signal ended the wait");
	ck_assert_uint_eq(th_parked(t), 1);

	th_spawn(&wt, waker_main, &v);
	th_join_all(&wt, 1, TH_DEADLINE_MS, "the waker", NULL);
	th_join_all(&vt, 1, TH_DEADLINE_MS, "the signalled waiter", t);
	ck_assert_int_eq(v.rc, 0);
	ck_assert_uint_eq(th_parked(t), 0);
	ck_assert_int_eq(sigaction(SIGUSR1, &old, NULL), 0);
	fwait_table_destroy(t);
}
END_TEST

/* The loop index's form, for the failure lines (th_add_loop). */
static const char *form_label(int i)
{
	static const char *const l[NFORMS] = { [BIT_WAIT] = "bit wait", [BIT_LOCK] = "bit lock",
					       [KEYED] = "keyed wait" };
	return l[i];
}

int main(void)
{
	Suite *su = suite_create("fwait-cancel");
	th_add_loop(su, "cancel", 60, cancelled_waiter_returns_then_exits, 0, NFORMS, form_label);
	th_add_loop(su, "signal", 60, signalled_waiter_runs_its_handler, 0, NFORMS, form_label);
	return check_run_suite(su);
}
