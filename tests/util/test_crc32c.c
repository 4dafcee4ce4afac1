/* SPDX-License-Identifier: MIT */
/*
 * test_crc32c.c - util_crc32c: published check values (RFC 3720, B.4, and
 * the usual "123456789"), continuation, and the hardware path agreeing with
 * the table on every length and alignment.
 */
#include <check.h>
#include <string.h>

#include "util/crc32c.h"
#include "util/prng.h"
#include "../check_run.h"

START_TEST(known_values)
{
	unsigned char b[32];
	ck_assert_uint_eq(util_crc32c(0, "123456789", 9), 0xE3069283u);
	ck_assert_uint_eq(util_crc32c_sw(0, "123456789", 9), 0xE3069283u);
	memset(b, 0, sizeof(b));
	ck_assert_uint_eq(util_crc32c(0, b, 32), 0x8A9136AAu);
	memset(b, 0xff, sizeof(b));
	ck_assert_uint_eq(util_crc32c(0, b, 32), 0x62A8AB43u);
	for (unsigned i = 0; i < 32; i++)
		b[i] = (unsigned char)i;
	ck_assert_uint_eq(util_crc32c(0, b, 32), 0x46DD794Eu);
	for (unsigned i = 0; i < 32; i++)
		b[i] = (unsigned char)(31 - i);
	ck_assert_uint_eq(util_crc32c(0, b, 32), 0x113FDB5Cu);
	ck_assert_uint_eq(util_crc32c(0, b, 0), 0);
}
END_TEST

START_TEST(continuation_and_hw_agree)
{
	unsigned char buf[4096 + 16];
	uint64_t rng = util_rand_seed(42, 0);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)util_rand_next(&rng);
	for (size_t len = 0; len <= 300; len++) {
		for (size_t off = 0; off < 9; off++) {
			uint32_t sw = util_crc32c_sw(0, buf + off, len);
			ck_assert_uint_eq(util_crc32c(0, buf + off, len), sw);
			size_t cut = len / 3;
			uint32_t part = util_crc32c(0, buf + off, cut);
			ck_assert_uint_eq(util_crc32c(part, buf + off + cut, len - cut), sw);
		}
	}
	ck_assert_uint_eq(util_crc32c(0, buf, 4096), util_crc32c_sw(0, buf, 4096));
	/* One flipped bit changes it. */
	uint32_t before = util_crc32c(0, buf, 4096);
	buf[1000] ^= 0x10;
	ck_assert_uint_ne(util_crc32c(0, buf, 4096), before);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("util-crc32c");
	TCase *tc = tcase_create("crc32c");
	tcase_add_test(tc, known_values);
	tcase_add_test(tc, continuation_and_hw_agree);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
