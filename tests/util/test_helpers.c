/* SPDX-License-Identifier: MIT */
/*
 * test_helpers.c - the option parser, the PRNG, log2 and the clock of
 * util/ (suite util).
 */
#include <check.h>
#include <errno.h>
#include <string.h>
#include <stdint.h>

#include "util/clock.h"
#include "util/log2.h"
#include "util/opt.h"
#include "util/prng.h"
#include "../check_run.h"

START_TEST(opt_accepts_whole_numbers_in_range)
{
	uint64_t v = 7;
	unsigned u = 7;
	double d = 7;

	ck_assert_int_eq(util_opt_u64("t", "-n", "42", 0, 100, &v), 0);
	ck_assert_uint_eq(v, 42);
	ck_assert_int_eq(util_opt_u64("t", "-n", "0x1F", 0, 100, &v), 0);
	ck_assert_uint_eq(v, 31);
	ck_assert_int_eq(util_opt_u64("t", "-n", "010", 0, 100, &v), 0);
	ck_assert_uint_eq(v, 10); /* not octal */
	ck_assert_int_eq(util_opt_u64("t", "-n", "18446744073709551615", 0, UINT64_MAX, &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	ck_assert_int_eq(util_opt_unsigned("t", "-t", "100", 1, 100, &u), 0);
	ck_assert_uint_eq(u, 100);
	ck_assert_int_eq(util_opt_double("t", "-d", "0.5", 0, 1, &d), 0);
	ck_assert(d == 0.5);
}
END_TEST

START_TEST(opt_refuses_everything_else)
{
	static const char *const bad[] = { "", "-1", "+1", " 1", "1x", "1 ", "0x", "0xg",
					   "101", "18446744073709551616", "1e3", "x" };
	uint64_t v = 7;
	unsigned u = 7;
	double d = 7;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(util_opt_u64("t", "-n", bad[i], 0, 100, &v) == -EINVAL, "%s", bad[i]);
	ck_assert_int_eq(util_opt_u64("t", "-n", NULL, 0, 100, &v), -EINVAL);
	ck_assert_int_eq(util_opt_u64("t", "-n", "0", 1, 100, &v), -EINVAL);
	ck_assert_uint_eq(v, 7); /* unchanged on refusal */
	ck_assert_int_eq(util_opt_unsigned("t", "-t", "4294967296", 0, UINT32_MAX, &u), -EINVAL);
	ck_assert_uint_eq(u, 7);
	static const char *const bad_d[] = { "", "nan", "inf", "1.5x", " 1", "2", "-0.1" };
	for (size_t i = 0; i < sizeof(bad_d) / sizeof(bad_d[0]); i++)
		ck_assert_msg(util_opt_double("t", "-d", bad_d[i], 0, 1, &d) == -EINVAL, "%s",
			      bad_d[i]);
	ck_assert(d == 7);
}
END_TEST

struct list_seen {
	unsigned n;
	unsigned v[8];
};

static int list_item(const char *tok, void *arg)
{
	struct list_seen *l = arg;
	return l->n < 8 ? util_opt_unsigned("t", "--list", tok, 1, 99, &l->v[l->n++]) : -EINVAL;
}

/* A comma-separated list: each item in order; an item's refusal, an empty
 * list or one too long is -EINVAL. */
START_TEST(opt_list_calls_each_item)
{
	struct list_seen l = {0};
	ck_assert_int_eq(util_opt_list("t", "--list", "3,1,42", list_item, &l), 0);
	ck_assert_uint_eq(l.n, 3);
	ck_assert_uint_eq(l.v[0], 3);
	ck_assert_uint_eq(l.v[1], 1);
	ck_assert_uint_eq(l.v[2], 42);
	l.n = 0;
	ck_assert_int_eq(util_opt_list("t", "--list", "3,x", list_item, &l), -EINVAL);
	ck_assert_int_eq(util_opt_list("t", "--list", ",", list_item, &l), -EINVAL);
	char big[300];
	memset(big, '1', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(util_opt_list("t", "--list", big, list_item, &l), -EINVAL);
}
END_TEST

START_TEST(prng_is_xorshift64star_and_seeded_nonzero)
{
	/* xorshift64* from state 1, worked out from the definition by hand. */
	uint64_t s = 1;
	ck_assert_uint_eq(util_rand_next(&s), UINT64_C(5180492295206395165));
	ck_assert_uint_eq(s, UINT64_C(33554433));

	/* Streams of one seed differ, and a state is never 0. */
	ck_assert_uint_ne(util_rand_seed(1, 0), util_rand_seed(1, 1));
	ck_assert_uint_ne(util_rand_seed(1, 0), util_rand_seed(2, 0));
	for (uint64_t i = 0; i < 1000; i++)
		ck_assert_uint_ne(util_rand_seed(i, i), 0);
}
END_TEST

START_TEST(log2_floor)
{
	ck_assert_uint_eq(util_log2_floor(0), 0);
	ck_assert_uint_eq(util_log2_floor(1), 0);
	ck_assert_uint_eq(util_log2_floor(2), 1);
	ck_assert_uint_eq(util_log2_floor(3), 1);
	ck_assert_uint_eq(util_log2_floor(1024), 10);
	ck_assert_uint_eq(util_log2_floor(UINT64_MAX), 63);
	ck_assert_uint_eq(util_log2_bucket(0, 4), 0);
	ck_assert_uint_eq(util_log2_bucket(8, 4), 3);
	ck_assert_uint_eq(util_log2_bucket(16, 4), 3); /* the last takes the rest */
	ck_assert_uint_eq(util_log2_bucket(UINT64_MAX, 40), 39);
}
END_TEST

START_TEST(clock_is_monotonic_ns)
{
	struct timespec ts = { .tv_sec = 2, .tv_nsec = 5 };
	ck_assert_uint_eq(util_timespec_ns(&ts), UINT64_C(2000000005));

	uint64_t a = util_now_ns(), b = util_now_ns();
	ck_assert_uint_le(a, b);
	ck_assert_uint_gt(a, 0);
}
END_TEST

/* A far-future deadline saturates at UINT64_MAX instead of wrapping into
 * the past (18446744074 s used to read as 0.29 s, 2^62 s as 0). */
START_TEST(clock_saturates_far_deadlines)
{
	const struct { time_t sec; long nsec; uint64_t ns; } cases[] = {
		{ 18446744073, 0, UINT64_C(18446744073000000000) },
		{ 18446744073, 709551615, UINT64_MAX },        /* exactly 2^64 - 1 */
		{ 18446744073, 709551616, UINT64_MAX },        /* one past */
		{ 18446744073, 999999999, UINT64_MAX },
		{ 18446744074, 0, UINT64_MAX },
		{ (time_t)1 << 62, 0, UINT64_MAX },
		{ INT64_MAX, 0, UINT64_MAX },
		{ INT64_MAX, 999999999, UINT64_MAX },
		{ -1, 0, 0 },                                  /* not well formed */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct timespec ts = { .tv_sec = cases[i].sec, .tv_nsec = cases[i].nsec };
		ck_assert_msg(util_timespec_ns(&ts) == cases[i].ns,
			      "{%lld, %ld}: %llu ns, want %llu", (long long)ts.tv_sec, ts.tv_nsec,
			      (unsigned long long)util_timespec_ns(&ts),
			      (unsigned long long)cases[i].ns);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("util");
	TCase *tc = tcase_create("helpers");

	tcase_add_test(tc, opt_accepts_whole_numbers_in_range);
	tcase_add_test(tc, opt_refuses_everything_else);
	tcase_add_test(tc, opt_list_calls_each_item);
	tcase_add_test(tc, prng_is_xorshift64star_and_seeded_nonzero);
	tcase_add_test(tc, log2_floor);
	tcase_add_test(tc, clock_is_monotonic_ns);
	tcase_add_test(tc, clock_saturates_far_deadlines);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
