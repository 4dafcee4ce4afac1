/* SPDX-License-Identifier: MIT */
/*
 * test_policies.c - fwait's policy table agrees with enum fwait_policy, and
 * each row's traits with what the policy promises (fwait/table.c,
 * internal.h's struct fw_policy_flags).
 *
 * Design note: white-box (it reads a created table's copied traits through
 * internal.h), single-threaded.  Adding a policy is a row in table.c plus
 * the code that gives its traits meaning; this test is what says the row
 * is complete: a name users can type back, a help line the tools can print,
 * and traits that do not contradict each other.  Every failure names the
 * policy by number and name.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fwait/internal.h"
#include "helpers.h"
#include "../check_run.h"

/* The tools print "<indent><name padded> <help>" on one line of a usage
 * text (tools/common/policy_opt.c). */
#define HELP_MAX 60

/* Loop index: a policy. */
START_TEST(row_is_complete)
{
	enum fwait_policy p = (enum fwait_policy)_i;
	const char *name = fwait_policy_name(p), *help = fwait_policy_help(p);

	ck_assert_msg(name && *name && strcmp(name, "invalid") != 0,
		      "policy %d has no name: a row missing in fwait/table.c?", _i);
	ck_assert_msg(help && *help && strcmp(help, "invalid") != 0,
		      "policy %d (%s) has no help line", _i, name);
	ck_assert_msg(strlen(help) <= HELP_MAX && !strchr(help, '\n'),
		      "policy %d (%s): help is not one line of at most %d characters: '%s'",
		      _i, name, HELP_MAX, help);
	enum fwait_policy back = FWAIT_POLICY_COUNT;
	ck_assert_msg(fwait_policy_parse(name, &back) == 0 && back == p,
		      "policy %d (%s) does not parse back to itself (got %d)", _i, name,
		      (int)back);
	for (int q = 0; q < _i; q++)
		ck_assert_msg(strcmp(name, fwait_policy_name((enum fwait_policy)q)) != 0,
			      "policies %d and %d are both named %s", q, _i, name);
}
END_TEST

/* Loop index: a policy.  A table of it copies its row; under either
 * handoff, fw_fair is exactly "wakes one, and FAIR". */
START_TEST(traits_are_consistent)
{
	enum fwait_policy p = (enum fwait_policy)_i;
	const char *name = fwait_policy_name(p);

	for (int h = FWAIT_HANDOFF_FAIR; h <= FWAIT_HANDOFF_STRICT; h++) {
		struct fwait_config cfg = { .nbuckets = 1, .policy = p,
					    .handoff = (enum fwait_handoff)h };
		struct fwait_table *t = NULL;
		int rc = fwait_table_create(&t, &cfg);
		if (rc == -ENOTSUP) { /* a policy that needs what this system lacks */
			printf("%s: not supported here, skipped\n", name);
			return;
		}
		ck_assert_msg(rc == 0, "%s: fwait_table_create = %d", name, rc);
		ck_assert_int_eq(fwait_table_policy(t), p);
		ck_assert_msg(fw_fair(t) == (t->pf.wake_one && h == FWAIT_HANDOFF_FAIR),
			      "%s, handoff %d: fw_fair %d, wake_one %d", name, h, fw_fair(t),
			      t->pf.wake_one);
		/* A wake that takes the whole bucket cannot also take one. */
		ck_assert_msg(!(t->pf.unfiltered && t->pf.wake_one),
			      "%s: both unfiltered and wake_one", name);
		fwait_table_destroy(t);
	}
}
END_TEST

/* The names are a contract (tools, scripts and saved results use them):
 * the existing ones never change. */
START_TEST(existing_names_stay)
{
	static const struct {
		enum fwait_policy p;
		const char *name;
	} pinned[] = {
		{ FWAIT_WAKE_ONE, "wake-one" }, { FWAIT_WAKE_ALL, "wake-all" },
		{ FWAIT_BROADCAST, "broadcast" }, { FWAIT_FUTEX, "futex" },
	};
	for (size_t i = 0; i < sizeof(pinned) / sizeof(pinned[0]); i++)
		ck_assert_str_eq(fwait_policy_name(pinned[i].p), pinned[i].name);
	ck_assert_str_eq(fwait_policy_help(FWAIT_POLICY_COUNT), "invalid");
	ck_assert_str_eq(fwait_policy_help((enum fwait_policy)-1), "invalid");
}
END_TEST

int main(void)
{
	Suite *su = suite_create("fwait-policies");
	TCase *tc = tcase_create("policies");
	th_add_loop(su, "policies", 30, row_is_complete, 0, FWAIT_POLICY_COUNT, tc_variant_name);
	th_add_loop(su, "policies", 30, traits_are_consistent,
		    0, FWAIT_POLICY_COUNT, tc_variant_name);
	tcase_add_test(tc, existing_names_stay);
	suite_add_tcase(su, tc);
	return check_run_suite(su);
}
