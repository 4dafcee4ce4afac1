/* SPDX-License-Identifier: MIT */
/*
 * test_ycsb_stream.c - the YCSB operation and mix tables
 * (tools/bpbench/ycsb_stream.c) agree with the enum and with YCSB.
 *
 * Design note: through ycsb_stream.h only (ycsb_common, the library both
 * bpbench ycsb and ycsb-ref link).  The tables are designated
 * initializers, so an operation added to enum ycsb_op without its row in
 * ycsb_ops[] compiles and leaves a NULL name: the first test catches it.
 * The mixes are checked against the YCSB core workloads' definitions,
 * the flags of each through ycsb_mix_does, the one question the tools ask
 * of a mix (--no-pool, ycsb-ref, the run's version table).
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "ycsb_stream.h"
#include "../check_run.h"

/* Every operation has a row with a name, no two alike. */
START_TEST(op_rows_are_complete)
{
	for (int i = 0; i < OP_COUNT; i++) {
		ck_assert_msg(ycsb_ops[i].name != NULL && ycsb_ops[i].name[0] != '\0',
			      "enum ycsb_op member %d has no row in ycsb_ops[]", i);
		for (int j = 0; j < i; j++)
			ck_assert_msg(strcmp(ycsb_ops[i].name, ycsb_ops[j].name) != 0,
				      "ops %d and %d are both named '%s'", j, i, ycsb_ops[i].name);
	}
}
END_TEST

/* The writes are update, insert and rmw: the durable report's "commit"
 * row merges exactly these.  (An operation added later is not listed
 * here: its row is the one place that says what it does.) */
START_TEST(op_flags)
{
	static const struct {
		enum ycsb_op op;
		bool writes, adds, scans;
	} want[] = {
		{OP_READ, false, false, false}, {OP_UPDATE, true, false, false},
		{OP_INSERT, true, true, false}, {OP_SCAN, false, false, true},
		{OP_RMW, true, false, false},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct ycsb_op_info *o = &ycsb_ops[want[i].op];
		ck_assert_msg(o->writes == want[i].writes && o->adds == want[i].adds &&
			      o->scans == want[i].scans, "op %d (%s): writes %d adds %d scans %d",
			      (int)want[i].op, o->name ? o->name : "no row", o->writes, o->adds,
			      o->scans);
	}
}
END_TEST

/* Each workload A-F: found in either case, its shares in [0, 1] summing
 * to 1, and what it does as YCSB defines it. */
START_TEST(mixes_are_ycsb)
{
	static const struct {
		char name;
		bool writes, adds, scans;
	} want[] = {
		{'A', true, false, false}, {'B', true, false, false}, {'C', false, false, false},
		{'D', true, true, false},  {'E', true, true, true},   {'F', true, false, false},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char up[2] = {want[i].name, '\0'}, low[2] = {(char)(want[i].name | 0x20), '\0'};
		const struct ycsb_mix *m = ycsb_mix_named(up);
		ck_assert_msg(m != NULL && m->name == want[i].name, "workload %s not found", up);
		ck_assert_msg(ycsb_mix_named(low) == m, "workload %s not found as %s", up, low);
		double sum = 0;
		for (int op = 0; op < OP_COUNT; op++) {
			ck_assert_msg(m->p[op] >= 0 && m->p[op] <= 1, "workload %c: %s's share %g",
				      m->name, ycsb_ops[op].name, m->p[op]);
			sum += m->p[op];
		}
		ck_assert_msg(fabs(sum - 1) < 1e-9, "workload %c: shares sum to %g", m->name, sum);
		struct ycsb_op_info does = ycsb_mix_does(m);
		ck_assert_msg(does.name == NULL && does.writes == want[i].writes &&
			      does.adds == want[i].adds && does.scans == want[i].scans,
			      "workload %c: writes %d adds %d scans %d", m->name, does.writes,
			      does.adds, does.scans);
	}
	ck_assert_ptr_eq(ycsb_mix_default(), ycsb_mix_named("A"));
	ck_assert_ptr_null(ycsb_mix_named("G"));
	ck_assert_ptr_null(ycsb_mix_named("AB"));
	ck_assert_ptr_null(ycsb_mix_named(""));
}
END_TEST

/* ycsb_pick_op draws only operations with a share, each about as often
 * as its share says (20000 draws: 5 sigma of a 5% share is about 0.8%). */
START_TEST(pick_follows_the_mix)
{
	for (char w = 'A'; w <= 'F'; w++) {
		char name[2] = {w, '\0'};
		const struct ycsb_mix *m = ycsb_mix_named(name);
		struct rng r = rng_seeded(42, (unsigned)w);
		unsigned n[OP_COUNT] = {0}, draws = 20000;
		for (unsigned i = 0; i < draws; i++)
			n[ycsb_pick_op(m, &r)]++;
		for (int op = 0; op < OP_COUNT; op++)
			ck_assert_msg(fabs((double)n[op] / draws - m->p[op]) < 0.015,
				      "workload %c: %s drawn %u of %u times, share %g", w,
				      ycsb_ops[op].name, n[op], draws, m->p[op]);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ycsb_stream");
	TCase *tc = tcase_create("tables");
	tcase_add_test(tc, op_rows_are_complete);
	tcase_add_test(tc, op_flags);
	tcase_add_test(tc, mixes_are_ycsb);
	tcase_add_test(tc, pick_follows_the_mix);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
