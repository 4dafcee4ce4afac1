/* SPDX-License-Identifier: MIT */
/*
 * check_run.h - the one way every Check test program runs its suite.
 *
 * Output follows CK_VERBOSITY (Check's default: normal); CK_RUN_SUITE and
 * CK_RUN_CASE select what runs.  Header-only so each suite's meson.build
 * needs nothing more.
 */
#ifndef TESTS_CHECK_RUN_H
#define TESTS_CHECK_RUN_H

#include <check.h>
#include <stdlib.h>

/* Runs s (and frees it); the process exit status for main. */
static inline int check_run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
