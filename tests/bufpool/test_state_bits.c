/* SPDX-License-Identifier: MIT */
/*
 * test_state_bits.c - bufpool: the page state bits' one table
 * (BP_STATE_BITS in bufpool.h) agrees with everything made from it and
 * with the public contract: each row's enum value, mask and printed name
 * (bp_flags_format), the row count, no two rows on one bit, every bit
 * below the pin count and away from fwait's waiters bit, the derived masks
 * by kind.  A row added, moved or misnamed without the code that goes with
 * it fails here (e.g. a positional names table listed out of order, or two
 * rows given one bit).
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "bufpool/bufpool.h"
#include "../check_run.h"

/* The table's rows as data, in the order written. */
struct row {
	const char *name;
	unsigned bit;
	uint32_t mask;
	const char *kind;
};
#define ROW(name, bit, kind) { #name, bit, BP_F_##name, #kind },
static const struct row rows[] = { BP_STATE_BITS(ROW) };
#undef ROW
#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* Every row's mask is its bit, and prints as its name alone. */
START_TEST(each_row_formats_to_its_name)
{
	char buf[128];
	ck_assert_uint_eq(NROWS, BP_STATE_BIT_COUNT);
	for (size_t i = 0; i < NROWS; i++) {
		const struct row *r = &rows[i];
		ck_assert_msg(r->mask == UINT32_C(1) << r->bit, "row %s: mask %#x is not bit %u",
			      r->name, (unsigned)r->mask, r->bit);
		int n = bp_flags_format(r->mask, buf, sizeof(buf));
		ck_assert_msg(n == (int)strlen(r->name) && strcmp(buf, r->name) == 0,
			      "row %s (bit %u) formats as \"%s\" (%d)", r->name, r->bit, buf, n);
	}
}
END_TEST

/* The names and values are a public contract (bp_frame_info.flags, tools,
 * users' code): spelled out here, not taken from the table. */
START_TEST(public_values_kept)
{
	static const struct {
		const char *name;
		unsigned bit, value;
	} contract[] = {
		{ "LOCKED", 0, BP_LOCKED },     { "WRITEBACK", 1, BP_WRITEBACK },
		{ "DIRTY", 2, BP_DIRTY },       { "UPTODATE", 3, BP_UPTODATE },
		{ "ERROR", 4, BP_ERROR },       { "REFERENCED", 5, BP_REFERENCED },
	};
	char buf[64];
	for (size_t i = 0; i < sizeof(contract) / sizeof(contract[0]); i++) {
		ck_assert_msg(contract[i].value == contract[i].bit, "BP_%s is %u, was %u",
			      contract[i].name, contract[i].value, contract[i].bit);
		bp_flags_format(UINT32_C(1) << contract[i].bit, buf, sizeof(buf));
		ck_assert_msg(strcmp(buf, contract[i].name) == 0, "bit %u formats as \"%s\", not %s",
			      contract[i].bit, buf, contract[i].name);
	}
	ck_assert_uint_eq(BP_F_INFLIGHT, BP_F_LOCKED | BP_F_WRITEBACK);
	ck_assert_uint_eq(BP_F_PAGE_STATE, BP_F_DIRTY | BP_F_UPTODATE | BP_F_ERROR | BP_F_REFERENCED);
}
END_TEST

/* No two rows on one bit; all in the flags byte, below the pin count and
 * clear of fwait's waiters bit (bit 31). */
START_TEST(bits_distinct_and_in_range)
{
	uint32_t seen = 0;
	for (size_t i = 0; i < NROWS; i++) {
		const struct row *r = &rows[i];
		ck_assert_msg(r->bit < BP_PIN_SHIFT, "row %s: bit %u not below BP_PIN_SHIFT",
			      r->name, r->bit);
		ck_assert_msg(!(seen & r->mask), "row %s: bit %u already taken", r->name, r->bit);
		seen |= r->mask;
	}
	ck_assert_uint_eq(seen & ~BP_FLAGS_MASK, 0);
	ck_assert_uint_eq(seen & BP_PIN_MASK, 0);
	ck_assert_uint_eq(seen & FWAIT_WAITERS_MASK, 0);
	ck_assert_uint_eq(BP_FLAGS_MASK & BP_PIN_MASK, 0);
}
END_TEST

/* The derived masks are exactly the rows of their kind, and every row has
 * one of the two kinds. */
START_TEST(derived_masks_by_kind)
{
	uint32_t inflight = 0, page = 0;
	for (size_t i = 0; i < NROWS; i++) {
		const struct row *r = &rows[i];
		bool is_inflight = strcmp(r->kind, "INFLIGHT") == 0;
		bool is_page = strcmp(r->kind, "PAGE") == 0;
		ck_assert_msg(is_inflight != is_page, "row %s: kind %s", r->name, r->kind);
		if (is_inflight)
			inflight |= r->mask;
		else
			page |= r->mask;
	}
	ck_assert_uint_eq(BP_F_INFLIGHT, inflight);
	ck_assert_uint_eq(BP_F_PAGE_STATE, page);
}
END_TEST

/* All bits print lowest first, joined by '|'; reserved bits and the pin
 * count print nothing. */
START_TEST(all_bits_in_bit_order)
{
	char want[256] = "", buf[256];
	uint32_t all = 0;
	for (unsigned b = 0; b < BP_PIN_SHIFT; b++)
		for (size_t i = 0; i < NROWS; i++)
			if (rows[i].bit == b) {
				strcat(want, *want ? "|" : "");
				strcat(want, rows[i].name);
				all |= rows[i].mask;
			}
	bp_flags_format(all | BP_PIN_ONE * 3, buf, sizeof(buf));
	ck_assert_str_eq(buf, want);
	for (unsigned b = 0; b < BP_PIN_SHIFT; b++) {
		if (all & (UINT32_C(1) << b))
			continue;
		bp_flags_format(UINT32_C(1) << b, buf, sizeof(buf));
		ck_assert_msg(strcmp(buf, "-") == 0, "reserved bit %u formats as \"%s\"", b, buf);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bufpool state_bits");
	TCase *tc = tcase_create("state_bits");
	tcase_add_test(tc, each_row_formats_to_its_name);
	tcase_add_test(tc, public_values_kept);
	tcase_add_test(tc, bits_distinct_and_in_range);
	tcase_add_test(tc, derived_masks_by_kind);
	tcase_add_test(tc, all_bits_in_bit_order);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(suite());
}
