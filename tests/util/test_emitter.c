/* SPDX-License-Identifier: MIT */
/*
 * test_emitter.c - the emitter's three back-ends write the same report,
 * JSON strings are escaped, a failing sink is reported (suite util).
 *
 * Design note: the sink is a growing string; each case builds one small
 * report and compares the exact text, so a change of format is a test
 * failure, not a surprise in a tool's output.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/emitter.h"
#include "../check_run.h"

struct sink {
	char buf[4096];
	size_t len;
	int fail_after; /* fail the write after this many calls (-1: never) */
	int calls;
};

static int sink_write(void *arg, const char *text)
{
	struct sink *s = arg;
	size_t n = strlen(text);

	if (s->fail_after >= 0 && s->calls++ >= s->fail_after)
		return -ENOSPC;
	ck_assert_uint_lt(s->len + n, sizeof(s->buf));
	memcpy(s->buf + s->len, text, n + 1);
	s->len += n;
	return 0;
}

/* One report: a group, a nested group, a list of lists, a string. */
static int report(enum emitter_output out, struct sink *s)
{
	struct emitter e;

	*s = (struct sink){ .fail_after = -1 };
	emitter_init(&e, out, sink_write, s);
	emitter_dict_begin(&e, NULL);
	emitter_dict_begin(&e, "config");
	emitter_kv_u64(&e, "frames", 64);
	emitter_kv_str(&e, "policy", "wake-one");
	emitter_dict_end(&e);
	emitter_dict_begin(&e, "waits");
	emitter_kv_i64(&e, "delta", -3);
	emitter_kv_double(&e, "ratio", 0.25, 3);
	emitter_kv_bool(&e, "ok", true);
	emitter_list_begin(&e, "hist");
	for (unsigned i = 3; i < 5; i++) {
		emitter_list_begin(&e, NULL);
		emitter_kv_u64(&e, NULL, i);
		emitter_kv_u64(&e, NULL, 10 * i);
		emitter_list_end(&e);
	}
	emitter_list_end(&e);
	emitter_dict_end(&e);
	emitter_dict_end(&e);
	return emitter_finish(&e);
}

START_TEST(table_backend)
{
	struct sink s;

	ck_assert_int_eq(report(EMITTER_TABLE, &s), 0);
	ck_assert_str_eq(s.buf, "  config:\n"
				"    frames                   64\n"
				"    policy                   wake-one\n"
				"  waits:\n"
				"    delta                    -3\n"
				"    ratio                    0.250\n"
				"    ok                       true\n");
}
END_TEST

START_TEST(json_backend)
{
	struct sink s;

	ck_assert_int_eq(report(EMITTER_JSON, &s), 0);
	ck_assert_str_eq(s.buf, "{\n"
				"  \"config\": {\n"
				"    \"frames\": 64,\n"
				"    \"policy\": \"wake-one\"\n"
				"  },\n"
				"  \"waits\": {\n"
				"    \"delta\": -3,\n"
				"    \"ratio\": 0.250,\n"
				"    \"ok\": true,\n"
				"    \"hist\": [[3, 30], [4, 40]]\n"
				"  }\n"
				"}\n");
}
END_TEST

START_TEST(compact_backend)
{
	struct sink s;

	ck_assert_int_eq(report(EMITTER_JSON_COMPACT, &s), 0);
	ck_assert_str_eq(s.buf, "{\"config\":{\"frames\":64,\"policy\":\"wake-one\"},"
				"\"waits\":{\"delta\":-3,\"ratio\":0.250,\"ok\":true,"
				"\"hist\":[[3,30],[4,40]]}}\n");
}
END_TEST

/* JSON lines: one emitter, several top-level objects, objects in lists,
 * a raw value (another emitter's output) and a null string. */
START_TEST(json_lines)
{
	struct sink s = { .fail_after = -1 };
	struct emitter e;

	emitter_init(&e, EMITTER_JSON_COMPACT, sink_write, &s);
	for (int i = 0; i < 2; i++) {
		emitter_dict_begin(&e, NULL);
		emitter_kv_i64(&e, "i", i);
		emitter_list_begin(&e, "rows");
		emitter_dict_begin(&e, NULL);
		emitter_kv_str(&e, "name", NULL);
		emitter_dict_end(&e);
		emitter_list_end(&e);
		emitter_kv_raw(&e, "pool", "{\"a\":1}");
		emitter_dict_end(&e);
	}
	ck_assert_int_eq(emitter_finish(&e), 0);
	ck_assert_str_eq(s.buf, "{\"i\":0,\"rows\":[{\"name\":null}],\"pool\":{\"a\":1}}\n"
				"{\"i\":1,\"rows\":[{\"name\":null}],\"pool\":{\"a\":1}}\n");
}
END_TEST

START_TEST(strings_are_escaped)
{
	struct sink s = { .fail_after = -1 };
	struct emitter e;
	char long_str[600];

	emitter_init(&e, EMITTER_JSON_COMPACT, sink_write, &s);
	emitter_dict_begin(&e, NULL);
	emitter_kv_str(&e, "k\"ey", "a\"b\\c\nd\te\x01\x1f/");
	emitter_dict_end(&e);
	ck_assert_int_eq(emitter_finish(&e), 0);
	ck_assert_str_eq(s.buf, "{\"k\\\"ey\":\"a\\\"b\\\\c\\nd\\te\\u0001\\u001f/\"}\n");

	/* Longer than the escaper's chunk, every character escaped. */
	memset(long_str, '"', sizeof(long_str) - 1);
	long_str[sizeof(long_str) - 1] = '\0';
	s = (struct sink){ .fail_after = -1 };
	emitter_init(&e, EMITTER_JSON_COMPACT, sink_write, &s);
	emitter_dict_begin(&e, NULL);
	emitter_kv_str(&e, "s", long_str);
	emitter_dict_end(&e);
	ck_assert_int_eq(emitter_finish(&e), 0);
	ck_assert_uint_eq(s.len, strlen("{\"s\":\"\"}\n") + 2 * (sizeof(long_str) - 1));
}
END_TEST

START_TEST(non_finite_is_null_in_json)
{
	struct sink s = { .fail_after = -1 };
	struct emitter e;

	emitter_init(&e, EMITTER_JSON_COMPACT, sink_write, &s);
	emitter_dict_begin(&e, NULL);
	emitter_kv_double(&e, "nan", NAN, 2);
	emitter_kv_double(&e, "inf", INFINITY, -1);
	emitter_kv_double(&e, "x", 1.5, -1);
	emitter_dict_end(&e);
	ck_assert_int_eq(emitter_finish(&e), 0);
	ck_assert_str_eq(s.buf, "{\"nan\":null,\"inf\":null,\"x\":1.5}\n");
}
END_TEST

START_TEST(table_printf_only_in_tables)
{
	struct sink s = { .fail_after = -1 };
	struct emitter e;
	char wide[1500];

	emitter_init(&e, EMITTER_JSON, sink_write, &s);
	emitter_table_printf(&e, "%s\n", "not in json");
	ck_assert_uint_eq(s.len, 0);

	memset(wide, 'x', sizeof(wide) - 1); /* past the stack buffer */
	wide[sizeof(wide) - 1] = '\0';
	emitter_init(&e, EMITTER_TABLE, sink_write, &s);
	emitter_table_printf(&e, "%-8s|%s", "a", wide);
	ck_assert_int_eq(emitter_finish(&e), 0);
	ck_assert_uint_eq(s.len, 9 + sizeof(wide) - 1);
	ck_assert(strncmp(s.buf, "a       |xxx", 12) == 0);
}
END_TEST

/* The first error of the sink is kept, and nothing is written after it. */
START_TEST(write_error_is_sticky)
{
	struct sink s;

	for (int after = 0; after < 6; after++) {
		struct emitter e;
		s = (struct sink){ .fail_after = after };
		emitter_init(&e, EMITTER_JSON, sink_write, &s);
		emitter_dict_begin(&e, NULL);
		emitter_kv_u64(&e, "a", 1);
		emitter_kv_u64(&e, "b", 2);
		emitter_dict_end(&e);
		ck_assert_int_eq(emitter_finish(&e), -ENOSPC);
		ck_assert_int_eq(s.calls, after + 1); /* stopped at the failure */
	}
}
END_TEST

START_TEST(unbalanced_nesting_is_refused)
{
	struct sink s = { .fail_after = -1 };
	struct emitter e;

	emitter_init(&e, EMITTER_JSON, sink_write, &s);
	emitter_dict_begin(&e, NULL);
	ck_assert_int_eq(emitter_finish(&e), -EINVAL); /* still open */
	emitter_dict_end(&e);
	ck_assert_int_eq(emitter_finish(&e), 0);
	emitter_dict_end(&e); /* one end too many */
	ck_assert_int_eq(emitter_finish(&e), -EINVAL);

	emitter_init(&e, EMITTER_JSON, sink_write, &s);
	for (int i = 0; i < EMITTER_MAX_DEPTH + 2; i++)
		emitter_list_begin(&e, NULL);
	ck_assert_int_eq(emitter_finish(&e), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("emitter");
	TCase *tc = tcase_create("emitter");

	tcase_add_test(tc, table_backend);
	tcase_add_test(tc, json_backend);
	tcase_add_test(tc, compact_backend);
	tcase_add_test(tc, json_lines);
	tcase_add_test(tc, strings_are_escaped);
	tcase_add_test(tc, non_finite_is_null_in_json);
	tcase_add_test(tc, table_printf_only_in_tables);
	tcase_add_test(tc, write_error_is_sticky);
	tcase_add_test(tc, unbalanced_nesting_is_refused);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
