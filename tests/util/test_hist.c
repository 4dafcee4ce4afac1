/* SPDX-License-Identifier: MIT */
/*
 * test_hist.c - the tools' latency histogram, util/hist.[ch]
 * (suite util): its buckets, merge and quantiles.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "util/hist.h"
#include "../check_run.h"

START_TEST(small_values_are_exact)
{
	for (uint64_t v = 0; v < (1u << UTIL_HIST_SUB_BITS); v++) {
		ck_assert_uint_eq(util_hist_bucket(v), v);
		ck_assert_uint_eq(util_hist_bucket_top((unsigned)v), v);
	}
}
END_TEST

/* Every value lands in a bucket whose range holds it and is at most 1/16
 * of the value wide; buckets are in order of value. */
START_TEST(buckets_hold_their_values)
{
	uint64_t s = 12345;
	unsigned prev = 0;
	for (uint64_t v = 16; v < 100000; v++) {
		unsigned b = util_hist_bucket(v);
		ck_assert_uint_ge(b, prev);
		prev = b;
		ck_assert_uint_ge(util_hist_bucket_top(b), v);
		ck_assert_uint_lt(util_hist_bucket_top(b - 1), v);
	}
	for (int i = 0; i < 100000; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		uint64_t v = (s >> (s & 31)) | 16; /* spread over many octaves */
		if (v >> UTIL_HIST_MAX_LOG2)
			continue;
		unsigned b = util_hist_bucket(v);
		uint64_t top = util_hist_bucket_top(b), lo = util_hist_bucket_top(b - 1) + 1;
		ck_assert_msg(lo <= v && v <= top, "v %llu in [%llu, %llu]",
			      (unsigned long long)v, (unsigned long long)lo,
			      (unsigned long long)top);
		ck_assert_msg((top - lo + 1) * 16 <= v, "bucket of %llu is %llu wide",
			      (unsigned long long)v, (unsigned long long)(top - lo + 1));
	}
}
END_TEST

START_TEST(huge_values_take_the_last_bucket)
{
	ck_assert_uint_eq(util_hist_bucket(UINT64_MAX), UTIL_HIST_BUCKETS - 1);
	ck_assert_uint_eq(util_hist_bucket(UINT64_C(1) << (UTIL_HIST_MAX_LOG2 + 1)),
			  UTIL_HIST_BUCKETS - 1);
	/* 2^MAX_LOG2 still has a bucket of its own, below the last. */
	ck_assert_uint_lt(util_hist_bucket(UINT64_C(1) << UTIL_HIST_MAX_LOG2),
			  UTIL_HIST_BUCKETS - 1);
	ck_assert_uint_eq(util_hist_bucket_top(UTIL_HIST_BUCKETS - 1), UINT64_MAX);
}
END_TEST

START_TEST(quantiles_merge_and_max)
{
	static struct util_hist a, b;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	ck_assert_uint_eq(util_hist_quantile(&a, 0.5), 0); /* empty */
	/* 1..1000 ns in a, then 99 samples of 1 s and one of 5 s in b. */
	for (uint64_t v = 1; v <= 1000; v++)
		util_hist_add(&a, v);
	ck_assert_uint_eq(a.count, 1000);
	ck_assert_uint_eq(a.sum_ns, 500500);
	ck_assert_uint_eq(a.max_ns, 1000);
	uint64_t p50 = util_hist_quantile(&a, 0.5);
	ck_assert_msg(p50 >= 500 && p50 <= 500 + 500 / 16 + 1, "p50 %llu",
		      (unsigned long long)p50);
	ck_assert_uint_eq(util_hist_quantile(&a, 1.0), 1000); /* capped at the max */
	ck_assert_uint_le(util_hist_quantile(&a, 0.99), 1000);
	ck_assert_uint_ge(util_hist_quantile(&a, 0.99), 990);
	for (int i = 0; i < 99; i++)
		util_hist_add(&b, 1000000000);
	util_hist_add(&b, 5000000000);
	util_hist_merge(&a, &b);
	ck_assert_uint_eq(a.count, 1100);
	ck_assert_uint_eq(a.max_ns, 5000000000);
	ck_assert_uint_le(util_hist_quantile(&a, 0.5), 600); /* still among the small */
	uint64_t p99 = util_hist_quantile(&a, 0.99);
	ck_assert_msg(p99 >= 1000000000 && p99 <= 1000000000 + 1000000000 / 16, "p99 %llu",
		      (unsigned long long)p99);
	ck_assert_uint_eq(util_hist_quantile(&a, 1.0), 5000000000);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("util_hist");
	TCase *tc = tcase_create("hist");
	tcase_add_test(tc, small_values_are_exact);
	tcase_add_test(tc, buckets_hold_their_values);
	tcase_add_test(tc, huge_values_take_the_last_bucket);
	tcase_add_test(tc, quantiles_merge_and_max);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
