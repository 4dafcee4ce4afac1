/* SPDX-License-Identifier: MIT */
/*
 * test_account.c - white-box: the pool's counters (account.c) are exact,
 * counted in restartable sequences per CPU where the platform has them,
 * in the atomic shards otherwise, and both together.
 *
 * Design note: bp_count adds with a plain add inside a restartable
 * sequence (rseq(2)), which the kernel aborts and the code retries when
 * the thread is preempted, migrated or signalled in it; a sequence that
 * could commit on the wrong CPU, or an abort that skipped or doubled the
 * add, would lose or add counts.  So the test counts from many more
 * threads than CPUs, in a tight loop (most of the time inside the
 * sequence, so preemptions land in it), and demands the exact total; it
 * also checks that the per-CPU counters are in use where they should be
 * (else the test would only prove the atomic shards), that a reset does
 * not bring old counts back, and that a thread without a usable CPU
 * number (counted in the shards) adds to the same sums.  It calls
 * bp_count directly, so it links the test-only static build of the pool
 * (bufpool/meson.build).
 */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "bp_helpers.h"
#include "bufpool/internal.h"
#include "../check_run.h"

#if defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__) && defined(__has_include)
#if __has_include(<sys/rseq.h>)
#include <sys/rseq.h>
#define RSEQ_HEADER 1
#endif
#endif

#if defined(__SANITIZE_THREAD__)
#define NO_RSEQ_EXPECTED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NO_RSEQ_EXPECTED 1
#endif
#endif

#define THREADS 64
/* Counts a thread makes: long enough (several scheduler ticks) for
 * preemptions to land in the sequences; with the atomic shards alone
 * (ThreadSanitizer) fewer, which prove as much there. */
#define PER_THREAD_RSEQ 2000000u
#define PER_THREAD_SHARDS 100000u

static struct bt_dir dir;

static void setup(void) { bt_dir_make(&dir); }
static void teardown(void) { bt_dir_remove(&dir); }

struct counter_arg {
	struct bp_pool *p;
	pthread_barrier_t *go;
	unsigned n;
};

static void *counter(void *arg)
{
	struct counter_arg *a = arg;
	pthread_barrier_wait(a->go);
	/* No yield: the threads must be preempted by the scheduler's tick,
	 * which lands inside the sequence now and then. */
	for (unsigned i = 0; i < a->n; i++)
		bp_count(a->p, BP_C_HITS);
	return NULL;
}

static uint64_t hits(struct bp_pool *p)
{
	uint64_t c[BP_C_COUNT];
	bp_counters_sum(p, c);
	return c[BP_C_HITS];
}

/* THREADS threads count hits; returns how many they counted. */
static uint64_t count_from_threads(struct bp_pool *p)
{
	pthread_t t[THREADS];
	pthread_barrier_t go;
	pthread_barrier_init(&go, NULL, THREADS);
	struct counter_arg a = {p, &go, p->cpu_ctr ? PER_THREAD_RSEQ : PER_THREAD_SHARDS};
	for (int i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, counter, &a), 0);
	for (int i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	pthread_barrier_destroy(&go);
	return (uint64_t)THREADS * a.n;
}

START_TEST(per_cpu_counters_where_expected)
{
	struct bp_pool *p = bt_open_empty(&dir, 8);
#if defined(RSEQ_HEADER) && !defined(NO_RSEQ_EXPECTED)
	/* x86-64 glibc registers rseq for every thread unless told not to */
	if (__rseq_size > 0) {
		ck_assert_ptr_nonnull(p->cpu_ctr);
		ck_assert_uint_eq(p->ncpu, (unsigned)sysconf(_SC_NPROCESSORS_CONF));
	}
#else
	ck_assert_ptr_null(p->cpu_ctr);
#endif
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

START_TEST(exact_under_oversubscription)
{
	struct bp_pool *p = bt_open_empty(&dir, 8);
	/* Again until the kernel has aborted some sequences (preempted in
	 * them), so the abort path is part of what the total checks. */
	uint64_t expect = 0;
	for (unsigned pass = 0; pass < 20; pass++) {
		expect += count_from_threads(p);
		ck_assert_uint_eq(hits(p), expect);
		if (!p->cpu_ctr || atomic_load(&p->rseq_aborts) >= 10)
			break;
	}
	if (p->cpu_ctr)
		ck_assert_uint_ge(atomic_load(&p->rseq_aborts), 10);
	struct bp_stats st;
	bp_stats_init(&st);
	ck_assert_int_eq(bp_stats_get(p, &st), 0);
	ck_assert_uint_eq(st.hits, expect);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

START_TEST(reset_brings_nothing_back)
{
	struct bp_pool *p = bt_open_empty(&dir, 8);
	for (unsigned i = 0; i < 1000; i++)
		bp_count(p, BP_C_HITS);
	ck_assert_uint_eq(hits(p), 1000);
	ck_assert_int_eq(bp_stats_reset(p), 0);
	ck_assert_uint_eq(hits(p), 0);
	uint64_t n = count_from_threads(p);
	ck_assert_uint_eq(hits(p), n);
	ck_assert_int_eq(bp_stats_reset(p), 0);
	ck_assert_uint_eq(hits(p), 0);
	bp_count(p, BP_C_HITS);
	ck_assert_uint_eq(hits(p), 1);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

START_TEST(shards_and_cpus_add_up)
{
	struct bp_pool *p = bt_open_empty(&dir, 8);
	for (unsigned i = 0; i < 500; i++)
		bp_count(p, BP_C_MISSES);
	/* as a thread with no usable CPU number counts: in the shards */
	unsigned ncpu = p->ncpu;
	p->ncpu = 0;
	for (unsigned i = 0; i < 700; i++)
		bp_count(p, BP_C_MISSES);
	p->ncpu = ncpu;
	uint64_t c[BP_C_COUNT];
	bp_counters_sum(p, c);
	ck_assert_uint_eq(c[BP_C_MISSES], 1200);
	uint64_t shards = 0;
	for (unsigned i = 0; i < p->npart; i++)
		shards += atomic_load(&p->parts[i].ctr.c[BP_C_MISSES]);
	ck_assert_uint_eq(shards, p->cpu_ctr ? 700 : 1200);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bufpool account");
	TCase *tc = tcase_create("account");
	tcase_add_unchecked_fixture(tc, bt_root_make, bt_root_remove);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, per_cpu_counters_where_expected);
	tcase_add_test(tc, exact_under_oversubscription);
	tcase_add_test(tc, reset_brings_nothing_back);
	tcase_add_test(tc, shards_and_cpus_add_up);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(suite());
}
