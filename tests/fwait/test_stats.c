/* SPDX-License-Identifier: MIT */
/*
 * test_stats.c - statistics and introspection: counters, histogram, reset,
 * max_bucket_depth, table_bytes, fwait_waiters_walk.
 *
 * Design note: counts are checked where the scenario fixes them exactly
 * (a handoff chain of N parked waiters; one timed-out wait), and as
 * invariants where scheduling decides the numbers (after a contended run,
 * the histogram holds one entry per completed wait).
 */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include "helpers.h"
#include "../check_run.h"

#define N 8

static uint64_t hist_sum(const struct fwait_stats *st, unsigned from)
{
	uint64_t s = 0;
	for (unsigned i = from; i < FWAIT_HIST_BUCKETS; i++)
		s += st->wait_ns_hist[i];
	return s;
}

static void assert_counters_zero(const struct fwait_stats *st)
{
	ck_assert_uint_eq(st->waits, 0);
	ck_assert_uint_eq(st->wakeups, 0);
	ck_assert_uint_eq(st->spurious_wakeups, 0);
	ck_assert_uint_eq(st->foreign_skipped, 0);
	ck_assert_uint_eq(st->timeouts, 0);
	ck_assert_uint_eq(st->handoffs, 0);
	ck_assert_uint_eq(st->slow_wakes, 0);
	ck_assert_uint_eq(st->slow_waits, 0);
	ck_assert_uint_eq(st->max_bucket_depth, 0);
	ck_assert_uint_eq(hist_sum(st, 0), 0);
}

START_TEST(fresh_table_and_sizes)
{
	static const struct { unsigned asked, got; } sizes[] = {
		{ 0, 256 }, { 1, 1 }, { 2, 2 }, { 5, 8 }, { 64, 64 }, { 1000, 1024 },
	};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct fwait_config cfg = { .nbuckets = sizes[i].asked };
		struct fwait_table *t = NULL;
		struct fwait_stats st;
		ck_assert_int_eq(fwait_table_create(&t, &cfg), 0);
		fwait_stats_get(t, &st);
		assert_counters_zero(&st);
		ck_assert_uint_eq(st.nbuckets, sizes[i].got);
		/* A bucket is at least its mutex. */
		ck_assert_uint_ge(st.table_bytes, (size_t)st.nbuckets * sizeof(pthread_mutex_t));
		fwait_table_destroy(t);
	}
	/* Memory grows with buckets, never with objects. */
	struct fwait_table *small = th_table_for(FWAIT_WAKE_ONE, 8);
	struct fwait_table *big = th_table_for(FWAIT_WAKE_ONE, 64);
	struct fwait_stats s1, s2;
	fwait_stats_get(small, &s1);
	fwait_stats_get(big, &s2);
	ck_assert_uint_gt(s2.table_bytes, s1.table_bytes);
	ck_assert_uint_ge(s2.table_bytes - s1.table_bytes, 56 * sizeof(pthread_mutex_t));
	fwait_table_destroy(small);
	fwait_table_destroy(big);
}
END_TEST

struct chain_waiter {
	struct fwait_table *t;
	_Atomic uint32_t *word;
	int rc;
};

static void *chain_waiter_main(void *arg)
{
	struct chain_waiter *w = arg;
	w->rc = fwait_bit_lock(w->t, w->word, 2, NULL);
	if (w->rc == 0)
		w->rc = fwait_bit_unlock(w->t, w->word, 2);
	return NULL;
}

struct walk_seen {
	unsigned count;
	const void *key;
	bool all_match;
	unsigned nbuckets;
};

static int check_info(const struct fwait_waiter_info *w, void *arg)
{
	struct walk_seen *s = arg;
	s->count++;
	if (w->key != s->key || w->bit != 2 || !w->exclusive || w->bucket >= s->nbuckets)
		s->all_match = false;
	return 0;
}

static int stop_at_third(const struct fwait_waiter_info *w, void *arg)
{
	unsigned *seen = arg;
	return ++*seen == 3 ? 77 : 0;
}

/* main takes bit 2 of word, then N waiters park on it one by one. */
static void park_chain(struct fwait_table *t, _Atomic uint32_t *word,
		       struct chain_waiter *ws, pthread_t *tids)
{
	ck_assert_int_eq(fwait_bit_trylock(word, 2), 0);
	for (unsigned i = 0; i < N; i++) {
		ws[i] = (struct chain_waiter){ .t = t, .word = word };
		th_spawn(&tids[i], chain_waiter_main, &ws[i]);
		ck_assert(th_wait_parked(t, i + 1, TH_DEADLINE_MS));
	}
}

START_TEST(handoff_chain_counts)
{
	/* Strict: every unlock is a handoff (fair would hand off only to
	 * waiters older than 1 ms, which is timing). */
	struct fwait_table *t = th_table_for(TC_VARIANT_STRICT, 1);
	_Atomic uint32_t word = 0;
	struct chain_waiter ws[N];
	pthread_t tids[N];
	struct fwait_stats st;

	park_chain(t, &word, ws, tids);
	struct walk_seen seen = { .key = (const void *)&word, .all_match = true, .nbuckets = 1 };
	ck_assert_int_eq(fwait_waiters_walk(t, check_info, &seen), 0);
	ck_assert_uint_eq(seen.count, N);
	ck_assert(seen.all_match);
	unsigned stops = 0;
	ck_assert_int_eq(fwait_waiters_walk(t, stop_at_third, &stops), 77);
	ck_assert_uint_eq(stops, 3);

	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.max_bucket_depth, N);
	ck_assert_uint_eq(st.waits, N);
	ck_assert_uint_eq(hist_sum(&st, 0), 0); /* nobody finished yet */

	ck_assert_int_eq(fwait_bit_unlock(t, &word, 2), 0);
	th_join_all(tids, N, TH_DEADLINE_MS, "chain", t);
	for (unsigned i = 0; i < N; i++)
		ck_assert_int_eq(ws[i].rc, 0);

	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.waits, N);
	ck_assert_uint_eq(hist_sum(&st, 0), N);
	ck_assert_uint_eq(st.wakeups, N);
	ck_assert_uint_eq(st.handoffs, N);
	/* N unlocks found waiters (main's and the first N-1 holders'); the
	 * last holder's unlock found the word tidy and stayed off the table. */
	ck_assert_uint_eq(st.slow_wakes, N);
	ck_assert_uint_eq(st.slow_waits, N); /* each waiter entered bit_sleep once */
	ck_assert_uint_eq(st.spurious_wakeups, 0);
	ck_assert_uint_eq(st.timeouts, 0);
	ck_assert_uint_eq(st.foreign_skipped, 0);
	ck_assert_uint_eq(st.max_bucket_depth, N);
	ck_assert_uint_eq(atomic_load(&word), 0);

	fwait_stats_reset(t);
	fwait_stats_get(t, &st);
	assert_counters_zero(&st);
	ck_assert_uint_eq(st.nbuckets, 1);
	ck_assert_uint_gt(st.table_bytes, 0);
	fwait_table_destroy(t);
}
END_TEST

/* stats_off: the same handoff chain works, and nothing is counted (loop
 * index: strict handoff, the default fair mode). */
START_TEST(stats_off_counts_nothing)
{
	struct fwait_config cfg = { .nbuckets = 1, .stats_off = true,
				    .handoff = _i == 0 ? FWAIT_HANDOFF_STRICT : FWAIT_HANDOFF_FAIR };
	struct fwait_table *t;
	ck_assert_int_eq(fwait_table_create(&t, &cfg), 0);
	_Atomic uint32_t word = 0;
	struct chain_waiter ws[N];
	pthread_t tids[N];
	struct fwait_stats st;

	park_chain(t, &word, ws, tids);
	ck_assert_int_eq(fwait_bit_unlock(t, &word, 2), 0);
	th_join_all(tids, N, TH_DEADLINE_MS, "chain without statistics", t);
	for (unsigned i = 0; i < N; i++)
		ck_assert_int_eq(ws[i].rc, 0);
	ck_assert_uint_eq(atomic_load(&word), 0);
	fwait_stats_get(t, &st);
	assert_counters_zero(&st);
	ck_assert_uint_eq(hist_sum(&st, 0), 0);
	ck_assert_uint_eq(st.nbuckets, 1);
	fwait_table_destroy(t);
}
END_TEST

static bool always_ready(void *arg)
{
	(void)arg;
	return true;
}

/* A wait that never sleeps still takes the bucket lock once: slow_waits
 * counts it (a caller's fast path can be checked with it), waits does not. */
START_TEST(slow_waits_counts_lock_taken_without_sleep)
{
	struct fwait_table *t = th_table_for(FWAIT_WAKE_ONE, 4);
	struct fwait_stats st;
	int key;
	ck_assert_int_eq(fwait_wait(t, &key, 0, always_ready, NULL, NULL), 0);
	ck_assert_int_eq(fwait_wait(t, &key, FWAIT_EXCLUSIVE, always_ready, NULL, NULL), 0);
	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.slow_waits, 2);
	ck_assert_uint_eq(st.waits, 0);
	/* The bit fast paths stay off the table. */
	_Atomic uint32_t word = 0;
	ck_assert_int_eq(fwait_bit_lock(t, &word, 3, NULL), 0);
	ck_assert_int_eq(fwait_bit_unlock(t, &word, 3), 0);
	ck_assert_int_eq(fwait_bit_wait(t, &word, 3, NULL), 0);
	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.slow_waits, 2);
	fwait_stats_reset(t);
	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.slow_waits, 0);
	fwait_table_destroy(t);
}
END_TEST

START_TEST(timed_out_wait_lands_in_histogram)
{
	struct fwait_table *t = th_table_for(_i, 8);
	_Atomic uint32_t word = 0;
	struct fwait_stats st;

	ck_assert_int_eq(fwait_bit_trylock(&word, 0), 0);
	/* The wait is timed from inside the call, so it is the deadline less
	 * however long the thread took to get there: under a loaded CI
	 * machine and a sanitizer that was once over 1.6 ms, and a 10 ms
	 * deadline's wait landed below 8.4 ms.  A 50 ms deadline leaves
	 * 41 ms of such delay before the wait could fall below bucket 23. */
	struct timespec dl = fwait_deadline_after_ns(50 * 1000000u);
	ck_assert_int_eq(fwait_bit_lock(t, &word, 0, &dl), -ETIMEDOUT);
	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.timeouts, 1);
	ck_assert_uint_eq(st.waits, 1);
	ck_assert_uint_eq(hist_sum(&st, 0), 1);
	/* Bucket 23 ([8.4 ms, 16.8 ms)) or later, never earlier. */
	ck_assert_uint_eq(hist_sum(&st, 23), 1);
	ck_assert_int_eq(fwait_bit_unlock(t, &word, 0), 0);
	fwait_table_destroy(t);
}
END_TEST

struct busy {
	struct fwait_table *t;
	_Atomic uint32_t *words;
	unsigned id;
	int bad_rc;
};

static void *busy_main(void *arg)
{
	struct busy *b = arg;
	uint64_t rng = util_rand_seed(5, b->id);
	for (unsigned i = 0; i < 60; i++) {
		_Atomic uint32_t *w = &b->words[util_rand_next(&rng) % 4];
		int rc = fwait_bit_lock(b->t, w, 0, NULL);
		if (rc == 0) {
			sched_yield();
			rc = fwait_bit_unlock(b->t, w, 0);
		}
		if (rc && !b->bad_rc)
			b->bad_rc = rc;
	}
	return NULL;
}

/* After a contended run, every wait that went to sleep has completed and
 * left exactly one histogram entry, whatever the policy. */
START_TEST(histogram_matches_waits_after_contention)
{
	unsigned n = 64;
	struct fwait_table *t = th_table_for(_i, 2);
	_Atomic uint32_t words[4] = { 0 };
	struct busy bs[64];
	pthread_t tids[64];

	for (unsigned k = 0; k < n; k++) {
		bs[k] = (struct busy){ .t = t, .words = words, .id = k };
		th_spawn(&tids[k], busy_main, &bs[k]);
	}
	th_join_all(tids, n, TH_DEADLINE_MS, "busy", t);
	struct fwait_stats st;
	fwait_stats_get(t, &st);
	for (unsigned k = 0; k < n; k++)
		ck_assert_int_eq(bs[k].bad_rc, 0);
	ck_assert_uint_eq(hist_sum(&st, 0), st.waits);
	ck_assert_uint_eq(st.timeouts, 0);
	if (_i != FWAIT_FUTEX) {
		/* max_bucket_depth never exceeds the threads that could wait. */
		ck_assert_uint_le(st.max_bucket_depth, n);
		ck_assert_uint_ge(st.wakeups, st.spurious_wakeups);
	}
	/* Strict handoff never wakes a thread for nothing; fair wakes may
	 * lose their race, and each loss is also a spurious wakeup. */
	if (_i == TC_VARIANT_STRICT)
		ck_assert_uint_eq(st.spurious_wakeups, 0);
	ck_assert_uint_le(st.lost_races, st.spurious_wakeups);
	if (_i != FWAIT_WAKE_ONE && _i != TC_VARIANT_STEAL && _i != FWAIT_FUTEX)
		ck_assert_uint_eq(st.lost_races, 0);
	fwait_table_destroy(t);
}
END_TEST

/* What the loop index of stats_off_counts_nothing stands for. */
static const char *stats_off_label(int i)
{
	return i == 0 ? "strict" : "fair";
}

int main(void)
{
	Suite *su = suite_create("fwait-stats");
	TCase *tc = tcase_create("stats");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, fresh_table_and_sizes);
	tcase_add_test(tc, handoff_chain_counts);
	th_add_loop(su, "stats", 60, stats_off_counts_nothing, 0, 2, stats_off_label);
	tcase_add_test(tc, slow_waits_counts_lock_taken_without_sleep);
	th_add_loop(su, "stats", 60, timed_out_wait_lands_in_histogram,
		    0, TC_NVARIANTS, tc_variant_name);
	th_add_loop(su, "stats", 60, histogram_matches_waits_after_contention,
		    0, TC_NVARIANTS, tc_variant_name);
	suite_add_tcase(su, tc);
	return check_run_suite(su);
}
