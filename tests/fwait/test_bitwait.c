/* SPDX-License-Identifier: MIT */
/*
 * test_bitwait.c - event bits and filtering: who a wake reaches.
 *
 * Design note: nbuckets = 1, so every key collides in one bucket.  Foreign
 * waiters (another word, or another bit of the same word) are parked first,
 * the matching ones last, so a wake must walk past all of them.  Filtered
 * policies must leave the foreigners asleep (no spurious wakeups, wakeups ==
 * matching waiters, foreign_skipped counted); BROADCAST must wake them too,
 * which shows up as spurious wakeups: the herd the library exists to avoid.
 * The "set again" test holds the bucket lock (from inside a
 * fwait_waiters_walk callback) while a clearer has cleared the bit but not
 * yet woken anyone, sets the bit again, and so makes the waiter run into a
 * set bit deterministically.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "helpers.h"
#include "../check_run.h"

#define M 4 /* waiters per key */

struct ev_waiter {
	struct fwait_table *t;
	_Atomic uint32_t *word;
	unsigned bit;
	bool lock;      /* fwait_bit_lock (then unlock) instead of bit_wait */
	int rc;
	_Atomic bool done;
};

static void *ev_waiter_main(void *arg)
{
	struct ev_waiter *w = arg;
	if (w->lock) {
		w->rc = fwait_bit_lock(w->t, w->word, w->bit, NULL);
		if (w->rc == 0)
			w->rc = fwait_bit_unlock(w->t, w->word, w->bit);
	} else {
		w->rc = fwait_bit_wait(w->t, w->word, w->bit, NULL);
	}
	atomic_store(&w->done, true);
	return NULL;
}

static void park(struct ev_waiter *w, pthread_t *tid, size_t *parked)
{
	th_spawn(tid, ev_waiter_main, w);
	++*parked;
	ck_assert_msg(th_wait_parked(w->t, *parked, TH_DEADLINE_MS),
		      "waiter on bit %u never parked", w->bit);
}

struct settle {
	struct fwait_table *t;
	uint64_t min_spurious;
	size_t parked;
};

/* Every woken waiter that must sleep again has done so. */
static bool settled(void *arg)
{
	struct settle *s = arg;
	struct fwait_stats st;
	fwait_stats_get(s->t, &st);
	return st.spurious_wakeups >= s->min_spurious && th_parked(s->t) == s->parked;
}

/* Loop index = policy: WAKE_ONE, WAKE_ALL, BROADCAST.  lock selects lock
 * bits (unlock hands to matching waiters) or event bits (clear). */
static void filtering_scenario(enum fwait_policy policy, bool lock)
{
	/* WAKE_ONE strict: each matching lock waiter is handed the bit
	 * (counted exactly below); fair would hand off only to those parked
	 * longer than 1 ms, which is timing. */
	struct fwait_table *t = th_table_for(policy == FWAIT_WAKE_ONE ? TC_VARIANT_STRICT :
					     (int)policy, 1);
	_Atomic uint32_t a = 0, b = 0;
	/* Lock bits under WAKE_ALL: one matching waiter, or the losers of
	 * the race for the bit would (rightly) sleep again. */
	unsigned nmatch = (lock && policy != FWAIT_WAKE_ONE) ? 1 : M;
	struct ev_waiter ws[3 * M];
	pthread_t tids[3 * M];
	size_t n = 0, parked = 0;

	fwait_bit_set(&a, 0);
	fwait_bit_set(&a, 1);
	fwait_bit_set(&b, 0);
	/* Foreigners first: M on (b, 0), M on (a, 1); then the targets. */
	struct { _Atomic uint32_t *word; unsigned bit, count; } groups[3] = {
		{ &b, 0, M }, { &a, 1, M }, { &a, 0, nmatch },
	};
	for (unsigned g = 0; g < 3; g++) {
		for (unsigned k = 0; k < groups[g].count; k++, n++) {
			ws[n] = (struct ev_waiter){ .t = t, .word = groups[g].word,
				.bit = groups[g].bit, .lock = lock };
			park(&ws[n], &tids[n], &parked);
		}
	}
	fwait_stats_reset(t);

	int rc = lock ? fwait_bit_unlock(t, &a, 0) : fwait_bit_clear(t, &a, 0);
	ck_assert_int_eq(rc, 0);
	th_join_all(tids + 2 * M, nmatch, TH_DEADLINE_MS, "matching waiters", t);
	for (unsigned k = 2 * M; k < n; k++)
		ck_assert_int_eq(ws[k].rc, 0);

	struct settle want = { t, policy == FWAIT_BROADCAST ? 2 * M : 0, 2 * M };
	if (policy == FWAIT_BROADCAST) {
		/* The foreigners were woken for nothing: each goes back to
		 * sleep, counted as a spurious wakeup. */
		ck_assert_msg(th_poll(settled, &want, TH_DEADLINE_MS),
			      "broadcast: foreigners did not re-park");
	}
	struct fwait_stats st;
	fwait_stats_get(t, &st);
	for (unsigned k = 0; k < 2 * M; k++)
		ck_assert_msg(!atomic_load(&ws[k].done), "foreign waiter %u returned", k);
	ck_assert_uint_eq(tc_parked_on(t, (const void *)&b, 0), M);
	ck_assert_uint_eq(tc_parked_on(t, (const void *)&a, 1), M);
	ck_assert_uint_eq(tc_parked_on(t, (const void *)&a, 0), 0);
	if (policy == FWAIT_BROADCAST) {
		ck_assert_uint_gt(st.spurious_wakeups, 0);
		/* Event bits: one clear, one herd.  Lock bits: the matching
		 * waiter's own unlock may wake the herd a second time. */
		if (lock)
			ck_assert_uint_ge(st.spurious_wakeups, 2 * M);
		else
			ck_assert_uint_eq(st.spurious_wakeups, 2 * M);
		ck_assert_uint_ge(st.wakeups, 2 * M + nmatch);
	} else {
		ck_assert_uint_eq(st.spurious_wakeups, 0);
		ck_assert_uint_eq(st.wakeups, nmatch);
		ck_assert_uint_gt(st.foreign_skipped, 0);
		ck_assert_uint_ge(st.foreign_skipped, 2 * M);
		ck_assert_uint_eq(st.handoffs, lock && policy == FWAIT_WAKE_ONE ? nmatch : 0);
	}

	/* Release the foreigners and check everyone returns cleanly. */
	ck_assert_int_eq(lock ? fwait_bit_unlock(t, &b, 0) : fwait_bit_clear(t, &b, 0), 0);
	ck_assert_int_eq(lock ? fwait_bit_unlock(t, &a, 1) : fwait_bit_clear(t, &a, 1), 0);
	th_join_all(tids, 2 * M, TH_DEADLINE_MS, "foreign waiters", t);
	for (unsigned k = 0; k < 2 * M; k++)
		ck_assert_int_eq(ws[k].rc, 0);
	ck_assert_uint_eq(atomic_load(&a), 0);
	ck_assert_uint_eq(atomic_load(&b), 0);
	ck_assert_uint_eq(th_parked(t), 0);
	fwait_table_destroy(t);
}

START_TEST(filter_event_bits)
{
	filtering_scenario((enum fwait_policy)_i, false);
}
END_TEST

START_TEST(filter_lock_bits)
{
	filtering_scenario((enum fwait_policy)_i, true);
}
END_TEST

/* ---- bit_wait loops until the bit is really clear ---------------------- */

struct reset_ctx {
	_Atomic uint32_t *word;
	unsigned bit;
	_Atomic bool go;   /* tells the clearer to clear */
	bool saw_clear;    /* written in the walk callback, read after it */
};

/* Runs with the bucket lock held: the clearer can clear the bit (one atomic
 * on the word) but cannot reach the waiter until we return. */
static int hold_bucket_and_reset(const struct fwait_waiter_info *info, void *arg)
{
	struct reset_ctx *c = arg;
	uint64_t end = util_now_ns() + (uint64_t)TH_DEADLINE_MS * 1000000u;
	unsigned spins = 0;

	atomic_store(&c->go, true);
	while (fwait_bit_test(c->word, c->bit)) {
		if (util_now_ns() > end)
			return 1;
		th_poll_pause(&spins);
	}
	c->saw_clear = true;
	fwait_bit_set(c->word, c->bit); /* a new "writeback" starts */
	return 1;
}

struct clearer {
	struct fwait_table *t;
	struct reset_ctx *c;
	int rc;
};

static bool go_set(void *arg)
{
	return atomic_load(&((struct reset_ctx *)arg)->go);
}

static void *clearer_main(void *arg)
{
	struct clearer *cl = arg;
	if (!th_poll(go_set, cl->c, TH_DEADLINE_MS)) {
		cl->rc = -ETIMEDOUT;
		return NULL;
	}
	cl->rc = fwait_bit_clear(cl->t, cl->c->word, cl->c->bit);
	return NULL;
}

START_TEST(bit_wait_rechecks_after_wake)
{
	struct fwait_table *t = th_table_for(_i, 1);
	_Atomic uint32_t word = 0;
	struct ev_waiter w = { .t = t, .word = &word, .bit = 7 };
	struct reset_ctx c = { .word = &word, .bit = 7 };
	struct clearer cl = { .t = t, .c = &c };
	pthread_t wt, ct;
	size_t parked = 0;

	fwait_bit_set(&word, 7);
	park(&w, &wt, &parked);
	fwait_stats_reset(t);
	th_spawn(&ct, clearer_main, &cl);
	ck_assert_int_eq(fwait_waiters_walk(t, hold_bucket_and_reset, &c), 1);
	ck_assert_msg(c.saw_clear, "the clearer never cleared the bit");
	th_join_all(&ct, 1, TH_DEADLINE_MS, "clearer", t);
	ck_assert_int_eq(cl.rc, 0);

	/* The waiter was woken but found the bit set again: it must sleep. */
	struct settle want = { t, 1, 1 };
	ck_assert_msg(th_poll(settled, &want, TH_DEADLINE_MS),
		      "waiter did not go back to sleep on the re-set bit");
	ck_assert(!atomic_load(&w.done));
	struct fwait_stats st;
	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.wakeups, 1);
	ck_assert_uint_eq(st.spurious_wakeups, 1);
	ck_assert(fwait_bit_test(&word, 7));

	ck_assert_int_eq(fwait_bit_clear(t, &word, 7), 0);
	th_join_all(&wt, 1, TH_DEADLINE_MS, "bit_wait waiter", t);
	ck_assert_int_eq(w.rc, 0);
	ck_assert_uint_eq(atomic_load(&word), 0);
	fwait_table_destroy(t);
}
END_TEST

START_TEST(bit_wait_on_clear_bit_returns_at_once)
{
	struct fwait_table *t = th_table_for(_i, 4);
	_Atomic uint32_t word = 0x5; /* other bits set: not ours */
	struct timespec past = { 0, 0 };

	ck_assert_int_eq(fwait_bit_wait(t, &word, 1, NULL), 0);
	ck_assert_int_eq(fwait_bit_wait(t, &word, 1, &past), 0);
	/* Clearing a clear bit is harmless and touches nothing else. */
	ck_assert_int_eq(fwait_bit_clear(t, &word, 1), 0);
	ck_assert_uint_eq(atomic_load(&word), 0x5);
	ck_assert(!fwait_bit_set(&word, 1));
	ck_assert(fwait_bit_set(&word, 1));
	ck_assert_int_eq(fwait_bit_clear(t, &word, 1), 0);
	ck_assert_uint_eq(atomic_load(&word), 0x5);
	struct fwait_stats st;
	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.waits, 0);
	fwait_table_destroy(t);
}
END_TEST

/* Many waiters of one event all return on one clear, for every policy. */
START_TEST(clear_releases_every_waiter)
{
	unsigned n = th_scaled(256, 64);
	struct fwait_table *t = th_table_for(_i, 2);
	_Atomic uint32_t word = 0;
	struct ev_waiter *ws = calloc(n, sizeof(*ws));
	pthread_t *tids = calloc(n, sizeof(*tids));
	ck_assert(ws && tids);

	fwait_bit_set(&word, 30);
	for (unsigned k = 0; k < n; k++) {
		ws[k] = (struct ev_waiter){ .t = t, .word = &word, .bit = 30 };
		th_spawn(&tids[k], ev_waiter_main, &ws[k]);
	}
	/* Some are parked, some may still be on their way: both must end. */
	ck_assert_int_eq(fwait_bit_clear(t, &word, 30), 0);
	th_join_all(tids, n, TH_DEADLINE_MS, "event waiters", t);
	for (unsigned k = 0; k < n; k++)
		ck_assert_int_eq(ws[k].rc, 0);
	ck_assert_uint_eq(atomic_load(&word) & ~FWAIT_WAITERS_MASK, 0);
	ck_assert_uint_eq(th_parked(t), 0);
	free(ws);
	free(tids);
	fwait_table_destroy(t);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("fwait-bitwait");
	th_add_loop(su, "bitwait", 60, filter_event_bits,
		    FWAIT_WAKE_ONE, FWAIT_BROADCAST + 1, tc_variant_name);
	th_add_loop(su, "bitwait", 60, filter_lock_bits,
		    FWAIT_WAKE_ONE, FWAIT_BROADCAST + 1, tc_variant_name);
	th_add_loop(su, "bitwait", 60, bit_wait_rechecks_after_wake,
		    FWAIT_WAKE_ONE, FWAIT_BROADCAST + 1, tc_variant_name);
	th_add_loop(su, "bitwait", 60, bit_wait_on_clear_bit_returns_at_once,
		    0, TC_NVARIANTS, tc_variant_name);
	th_add_loop(su, "bitwait", 60, clear_releases_every_waiter,
		    0, TC_NVARIANTS, tc_variant_name);
	return check_run_suite(su);
}
