/* SPDX-License-Identifier: MIT */
/*
 * test_args.c - argument checking, error codes, policy names, configs.
 *
 * Design note: single-threaded except where a call could hang on bad input
 * (a malformed deadline), which runs in a thread joined against a deadline
 * so that a spin or an endless sleep fails the test instead of hanging it.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "../check_run.h"

static bool yes(void *arg)
{
	return true;
}

START_TEST(bad_bit_word_table)
{
	struct fwait_table *t = th_table_for(_i, 4);
	_Atomic uint32_t word = 0;
	static const unsigned bad_bits[] = { 31, 32, 63, 1000, ~0u };

	for (size_t i = 0; i < sizeof(bad_bits) / sizeof(bad_bits[0]); i++) {
		unsigned b = bad_bits[i];
		ck_assert_int_eq(fwait_bit_lock(t, &word, b, NULL), -EINVAL);
		ck_assert_int_eq(fwait_bit_trylock(&word, b), -EINVAL);
		ck_assert_int_eq(fwait_bit_unlock(t, &word, b), -EINVAL);
		ck_assert_int_eq(fwait_bit_wait(t, &word, b, NULL), -EINVAL);
		ck_assert_int_eq(fwait_bit_clear(t, &word, b), -EINVAL);
		ck_assert(!fwait_bit_set(&word, b));
		ck_assert(!fwait_bit_test(&word, b));
	}
	/* Nothing above touched the word (bit 31 is fwait's own). */
	ck_assert_uint_eq(atomic_load(&word), 0);

	ck_assert_int_eq(fwait_bit_lock(t, NULL, 0, NULL), -EINVAL);
	ck_assert_int_eq(fwait_bit_trylock(NULL, 0), -EINVAL);
	ck_assert_int_eq(fwait_bit_unlock(t, NULL, 0), -EINVAL);
	ck_assert_int_eq(fwait_bit_wait(t, NULL, 0, NULL), -EINVAL);
	ck_assert_int_eq(fwait_bit_clear(t, NULL, 0), -EINVAL);
	ck_assert(!fwait_bit_set(NULL, 0));
	ck_assert(!fwait_bit_test(NULL, 0));

	ck_assert_int_eq(fwait_bit_lock(NULL, &word, 0, NULL), -EINVAL);
	ck_assert_int_eq(fwait_bit_unlock(NULL, &word, 0), -EINVAL);
	ck_assert_int_eq(fwait_bit_wait(NULL, &word, 0, NULL), -EINVAL);
	ck_assert_int_eq(fwait_bit_clear(NULL, &word, 0), -EINVAL);
	ck_assert_uint_eq(atomic_load(&word), 0);

	/* Generic waits. */
	int key;
	ck_assert_int_eq(fwait_wait(NULL, &key, 0, yes, NULL, NULL), -EINVAL);
	ck_assert_int_eq(fwait_wait(t, NULL, 0, yes, NULL, NULL), -EINVAL);
	ck_assert_int_eq(fwait_wait(t, &key, 0, NULL, NULL, NULL), -EINVAL);
	ck_assert_int_eq(fwait_wait(t, &key, 4, yes, NULL, NULL), -EINVAL);
	ck_assert_int_eq(fwait_wait(t, &key, FWAIT_EXCLUSIVE | 0x80, yes, NULL, NULL), -EINVAL);
	ck_assert_int_eq(fwait_wait(t, &key, ~0u, yes, NULL, NULL), -EINVAL);
	ck_assert_int_eq(fwait_wait(t, &key, FWAIT_EXCLUSIVE, yes, NULL, NULL), 0);
	ck_assert_int_eq(fwait_wake(NULL, &key, 1), -EINVAL);
	ck_assert_int_eq(fwait_wake(t, NULL, 1), -EINVAL);
	ck_assert_int_eq(fwait_wake(t, &key, 0), 0);

	/* Introspection with bad arguments: an error or a no-op, no crash. */
	ck_assert_int_eq(fwait_waiters_walk(NULL, NULL, NULL), -EINVAL);
	ck_assert_int_eq(fwait_waiters_walk(t, NULL, NULL), -EINVAL);
	struct fwait_stats st;
	memset(&st, 0xab, sizeof(st));
	fwait_stats_get(NULL, &st);
	fwait_stats_get(t, NULL);
	fwait_stats_reset(NULL);
	fwait_table_destroy(NULL);
	fwait_table_destroy(t);
}
END_TEST

START_TEST(lock_errors)
{
	struct fwait_table *t = th_table_for(_i, 4);
	_Atomic uint32_t word = 0x100; /* someone else's bit 8 */

	/* Unlock of a clear bit: -EPERM, nothing changed. */
	ck_assert_int_eq(fwait_bit_unlock(t, &word, 3), -EPERM);
	ck_assert_uint_eq(atomic_load(&word), 0x100);
	ck_assert_int_eq(fwait_bit_trylock(&word, 3), 0);
	ck_assert_int_eq(fwait_bit_trylock(&word, 3), -EBUSY);
	ck_assert_int_eq(fwait_bit_trylock(&word, 8), -EBUSY);
	ck_assert_uint_eq(atomic_load(&word), 0x108);
	ck_assert_int_eq(fwait_bit_unlock(t, &word, 3), 0);
	ck_assert_int_eq(fwait_bit_unlock(t, &word, 3), -EPERM);
	ck_assert_uint_eq(atomic_load(&word), 0x100);
	fwait_table_destroy(t);
}
END_TEST

START_TEST(policy_names_round_trip)
{
	for (int p = 0; p < FWAIT_POLICY_COUNT; p++) {
		const char *name = fwait_policy_name((enum fwait_policy)p);
		enum fwait_policy back = FWAIT_POLICY_COUNT;
		ck_assert_ptr_nonnull(name);
		ck_assert_int_eq(fwait_policy_parse(name, &back), 0);
		ck_assert_int_eq(back, p);
	}
	ck_assert_str_eq(fwait_policy_name(FWAIT_WAKE_ONE), "wake-one");
	ck_assert_str_eq(fwait_policy_name(FWAIT_WAKE_ALL), "wake-all");
	ck_assert_str_eq(fwait_policy_name(FWAIT_BROADCAST), "broadcast");
	ck_assert_str_eq(fwait_policy_name(FWAIT_FUTEX), "futex");
	ck_assert_ptr_nonnull(fwait_policy_name(FWAIT_POLICY_COUNT));
	ck_assert_ptr_nonnull(fwait_policy_name((enum fwait_policy)-1));

	enum fwait_policy p = FWAIT_BROADCAST;
	static const char *const bad[] = { "", "wake_one", "WAKE-ONE", "wake-one ",
		"bogus", "futex2", "wake" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(fwait_policy_parse(bad[i], &p), -EINVAL);
		ck_assert_int_eq(p, FWAIT_BROADCAST); /* untouched on error */
	}
	ck_assert_int_eq(fwait_policy_parse(NULL, &p), -EINVAL);
	ck_assert_int_eq(fwait_policy_parse("wake-one", NULL), -EINVAL);
}
END_TEST

START_TEST(configs)
{
	struct fwait_table *t = NULL, *sentinel = (struct fwait_table *)&t;
	struct fwait_stats st;

	/* NULL and zero-initialised configs: WAKE_ONE, 256 buckets. */
	ck_assert_int_eq(fwait_table_create(&t, NULL), 0);
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(fwait_table_policy(t), FWAIT_WAKE_ONE);
	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.nbuckets, 256);
	fwait_table_destroy(t);

	struct fwait_config zero;
	memset(&zero, 0, sizeof(zero));
	t = NULL;
	ck_assert_int_eq(fwait_table_create(&t, &zero), 0);
	ck_assert_int_eq(fwait_table_policy(t), FWAIT_WAKE_ONE);
	fwait_stats_get(t, &st);
	ck_assert_uint_eq(st.nbuckets, 256);
	fwait_table_destroy(t);

	/* Every policy can be created and reports itself. */
	for (int p = 0; p < FWAIT_POLICY_COUNT; p++) {
		struct fwait_config c = { .policy = (enum fwait_policy)p, .nbuckets = 4 };
		t = NULL;
		ck_assert_int_eq(fwait_table_create(&t, &c), 0);
		ck_assert_int_eq(fwait_table_policy(t), p);
		fwait_table_destroy(t);
	}

	/* Bad configs: -EINVAL, *out untouched. */
	struct fwait_config bad[] = {
		{ .policy = FWAIT_POLICY_COUNT },
		{ .policy = (enum fwait_policy)99 },
		{ .policy = (enum fwait_policy)-1 },
		{ .nbuckets = (1u << 24) + 1 },
		{ .nbuckets = ~0u },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		t = sentinel;
		ck_assert_int_eq(fwait_table_create(&t, &bad[i]), -EINVAL);
		ck_assert_ptr_eq(t, sentinel);
	}
	ck_assert_int_eq(fwait_table_create(NULL, NULL), -EINVAL);
}
END_TEST

/* A malformed deadline (tv_nsec outside [0, 1e9), negative tv_sec) is bad
 * input: -EINVAL, whether or not the call would have had to wait, and never
 * a spin or an endless sleep (hence the thread and the bounded join). */
struct bad_deadline {
	struct fwait_table *t;
	_Atomic uint32_t word;
	struct timespec dl;
	int lock_free_rc, lock_held_rc, wait_rc, generic_rc;
};

static bool never(void *arg)
{
	return false;
}

static void *bad_deadline_main(void *arg)
{
	struct bad_deadline *b = arg;
	int key;

	b->lock_free_rc = fwait_bit_lock(b->t, &b->word, 1, &b->dl); /* bit 1: free */
	b->lock_held_rc = fwait_bit_lock(b->t, &b->word, 0, &b->dl); /* bit 0: held */
	b->wait_rc = fwait_bit_wait(b->t, &b->word, 0, &b->dl);
	b->generic_rc = fwait_wait(b->t, &key, FWAIT_EXCLUSIVE, never, NULL, &b->dl);
	return NULL;
}

START_TEST(bad_deadline_is_einval)
{
	static const struct timespec bad[] = {
		{ .tv_sec = 0, .tv_nsec = 1000000000L },
		{ .tv_sec = 0, .tv_nsec = -1 },
		{ .tv_sec = -1, .tv_nsec = 0 },
		{ .tv_sec = 1, .tv_nsec = 2000000000L },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct bad_deadline b = { .dl = bad[i] };
		pthread_t tid;
		b.t = th_table_for(_i, 4);
		ck_assert_int_eq(fwait_bit_trylock(&b.word, 0), 0);
		th_spawn(&tid, bad_deadline_main, &b);
		th_join_all(&tid, 1, 5000, "call with an invalid deadline", b.t);
		ck_assert_int_eq(b.lock_free_rc, -EINVAL);
		ck_assert_int_eq(b.lock_held_rc, -EINVAL);
		ck_assert_int_eq(b.wait_rc, -EINVAL);
		ck_assert_int_eq(b.generic_rc, -EINVAL);
		ck_assert_uint_eq(atomic_load(&b.word), 1); /* bit 1 not taken */
		ck_assert_int_eq(fwait_bit_unlock(b.t, &b.word, 0), 0);
		ck_assert_uint_eq(th_parked(b.t), 0);
		struct fwait_stats st;
		fwait_stats_get(b.t, &st);
		ck_assert_uint_eq(st.waits, 0);
		fwait_table_destroy(b.t);
	}
}
END_TEST

int main(void)
{
	Suite *su = suite_create("fwait-args");
	TCase *tc = tcase_create("args");
	tcase_set_timeout(tc, 30);
	th_add_loop(su, "args", 30, bad_bit_word_table, 0, TC_NVARIANTS, tc_variant_name);
	th_add_loop(su, "args", 30, lock_errors, 0, TC_NVARIANTS, tc_variant_name);
	tcase_add_test(tc, policy_names_round_trip);
	tcase_add_test(tc, configs);
	th_add_loop(su, "args", 30, bad_deadline_is_einval, 0, TC_NVARIANTS, tc_variant_name);
	suite_add_tcase(su, tc);
	return check_run_suite(su);
}
