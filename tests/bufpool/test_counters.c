/* SPDX-License-Identifier: MIT */
/*
 * test_counters.c - white-box: the pool's counters' one table
 * (BP_COUNTERS in bufpool/internal.h) agrees with struct bp_stats and with
 * bp_stats_print.
 *
 * Design note: each counter is counted once (bp_count, so the test links
 * the test-only static build) and must read 1 in its row's field and under
 * that name in the printed "counters" dict, and 0 in every other field of
 * the dict: a copy into the wrong field, two rows on one field, a row the
 * print leaves out or a derived field computed from the wrong counter
 * fails here.  The dict must hold exactly the printed rows, in the table's
 * order.  Apart from the table, the keys tools and tests parse today are
 * spelled out as a contract, in their order, in both the JSON and the
 * table output: rows may be added anywhere, not renamed or reordered.
 */
#include <check.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bp_helpers.h"
#include "bufpool/internal.h"
#include "../check_run.h"

static struct bt_dir dir;

static void setup(void) { bt_dir_make(&dir); }
static void teardown(void) { bt_dir_remove(&dir); }

/* The table's rows as data, in the order written. */
enum kind { KIND_C, KIND_D, KIND_N };
struct row {
	enum kind kind;
	const char *name;   /* BP_C_<name>; NULL for a D row */
	int counter;        /* BP_C_<name>; -1 for a D row */
	const char *field;  /* in struct bp_stats and the dict; NULL for an N row */
	size_t off, size;
};
#define ROW_C_(name, field) { KIND_C, #name, BP_C_##name, #field, \
	offsetof(struct bp_stats, field), sizeof(((struct bp_stats *)0)->field) },
#define ROW_D_(field, type) { KIND_D, NULL, -1, #field, \
	offsetof(struct bp_stats, field), sizeof(((struct bp_stats *)0)->field) },
#define ROW_N_(name) { KIND_N, #name, BP_C_##name, NULL, 0, 0 },
static const struct row rows[] = { BP_COUNTERS(ROW_C_, ROW_D_, ROW_N_) };
#undef ROW_C_
#undef ROW_D_
#undef ROW_N_
#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* What counting an N row once shows: stats.c derives these by hand, so
 * the test states them by hand.  A new N row needs its line here. */
static const struct {
	int counter;
	const char *field; /* the one field that reads 1; NULL: none */
} derived[] = {
	{ BP_C_OPT_BEGINS, "optimistic_reads" }, /* begins less refused */
	{ BP_C_OPT_REFUSED, NULL },              /* refused alone: clamped to 0 */
};

/* The keys of the "counters" dict as released, in order: tools and tests
 * parse them (tests/bpbench/ycsb_no_pool.sh, bpstat, users' scripts). */
static const char *const contract[] = {
	"hits", "misses", "reads", "writes", "readaheads", "read_ios",
	"inline_reads", "inline_blocked", "creates", "evictions", "dirty_evictions",
	"bgwriter_writes", "fsyncs", "read_errors", "write_errors", "fsync_errors",
	"checksum_errors", "log_flushes", "durability_err", "faults_injected", "busy",
	"optimistic_reads", "optimistic_restarts",
};
#define NCONTRACT (sizeof(contract) / sizeof(contract[0]))

/* The printed "counters" dict, parsed. */
#define MAX_KEYS 64
struct dict {
	size_t n;
	char key[MAX_KEYS][48];
	long long val[MAX_KEYS];
};

static int write_mem(void *arg, const char *text)
{
	return fputs(text, arg) < 0 ? -EIO : 0;
}

/* bp_stats_print of *s in format fmt, as a malloc'd string. */
static char *print(const struct bp_stats *s, enum bp_stats_format fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(bp_stats_print(s, write_mem, m, fmt), 0);
	ck_assert_int_eq(fclose(m), 0);
	return buf;
}

/* The "counters" dict of one JSON line: "key":integer pairs up to '}'. */
static void parse_counters(const char *json, struct dict *d)
{
	const char *q = strstr(json, "\"counters\":{");
	ck_assert_msg(q != NULL, "no counters dict in %s", json);
	q += strlen("\"counters\":{");
	d->n = 0;
	while (*q != '}') {
		ck_assert_msg(d->n < MAX_KEYS && *q == '"', "dict malformed at %.40s", q);
		const char *end = strchr(q + 1, '"');
		ck_assert_msg(end && end[1] == ':' && (size_t)(end - q - 1) < sizeof(d->key[0]),
			      "key malformed at %.40s", q);
		memcpy(d->key[d->n], q + 1, (size_t)(end - q - 1));
		d->key[d->n][end - q - 1] = '\0';
		char *after;
		d->val[d->n] = strtoll(end + 2, &after, 10);
		ck_assert_msg(after != end + 2, "key %s: no number", d->key[d->n]);
		d->n++;
		q = *after == ',' ? after + 1 : after;
	}
}

static const long long *dict_value(const struct dict *d, const char *key)
{
	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->key[i], key) == 0)
			return &d->val[i];
	return NULL;
}

/* A printed row's field of *s: an unsigned 8-byte count or a signed int. */
static long long field_value(const struct bp_stats *s, const struct row *r)
{
	const char *base = (const char *)s + r->off;
	if (r->size == sizeof(uint64_t)) {
		uint64_t v;
		memcpy(&v, base, sizeof(v));
		return (long long)v;
	}
	ck_assert_msg(r->size == sizeof(int), "field %s: size %zu", r->field, r->size);
	int v;
	memcpy(&v, base, sizeof(v));
	return v;
}

/* The field that counting row r once sets to 1 (NULL: none). */
static const char *expected_field(const struct row *r)
{
	if (r->kind == KIND_C)
		return r->field;
	for (size_t i = 0; i < sizeof(derived) / sizeof(derived[0]); i++)
		if (derived[i].counter == r->counter)
			return derived[i].field;
	ck_abort_msg("N row %s: no line in derived[] saying what it shows", r->name);
	return NULL;
}

/* Every counter, counted once on an idle pool, reads 1 in its field (the
 * struct's and the printed dict's) and nothing else in the dict moves. */
START_TEST(each_counter_lands_in_its_field)
{
	struct bp_pool *p = bt_open_empty(&dir, 8);
	unsigned counters = 0;
	for (size_t k = 0; k < NROWS; k++) {
		const struct row *r = &rows[k];
		if (r->kind == KIND_D)
			continue;
		counters++;
		ck_assert_int_eq(bp_stats_reset(p), 0);
		bp_count(p, (enum bp_counter)r->counter);
		struct bp_stats s;
		bp_stats_init(&s);
		ck_assert_int_eq(bp_stats_get(p, &s), 0);
		char *json = print(&s, BP_STATS_JSON_COMPACT);
		struct dict d;
		parse_counters(json, &d);
		const char *want = expected_field(r);
		for (size_t i = 0; i < NROWS; i++) {
			const struct row *f = &rows[i];
			if (f->kind == KIND_N)
				continue;
			long long exp = want && strcmp(f->field, want) == 0;
			ck_assert_msg(field_value(&s, f) == exp,
				      "BP_C_%s counted once: struct bp_stats.%s is %lld, not %lld",
				      r->name, f->field, field_value(&s, f), exp);
			const long long *v = dict_value(&d, f->field);
			ck_assert_msg(v && *v == exp, "BP_C_%s counted once: printed %s is %s%lld, not %lld",
				      r->name, f->field, v ? "" : "missing ", v ? *v : 0, exp);
		}
		free(json);
	}
	ck_assert_uint_eq(counters, BP_C_COUNT);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* The dict holds the C and D rows, each once, in the table's order. */
START_TEST(dict_is_the_rows_in_order)
{
	struct bp_stats s;
	bp_stats_init(&s);
	char *json = print(&s, BP_STATS_JSON_COMPACT);
	struct dict d;
	parse_counters(json, &d);
	size_t i = 0;
	for (size_t k = 0; k < NROWS; k++) {
		if (rows[k].kind == KIND_N)
			continue;
		ck_assert_msg(i < d.n, "row %s not printed (dict has %zu keys)", rows[k].field, d.n);
		ck_assert_msg(strcmp(d.key[i], rows[k].field) == 0, "printed key %zu is %s, row says %s",
			      i, d.key[i], rows[k].field);
		i++;
	}
	ck_assert_msg(i == d.n, "dict has %zu keys, the table %zu printed rows", d.n, i);
	free(json);
}
END_TEST

/* Each contract key, searched from where the one before it was found,
 * between the counters heading and the next one. */
static void contract_in_order(const char *out, const char *head, const char *next,
			      const char *fmt_key)
{
	const char *from = strstr(out, head), *to = strstr(out, next);
	ck_assert_msg(from && to && from < to, "no %s ... %s section in\n%s", head, next, out);
	for (size_t i = 0; i < NCONTRACT; i++) {
		char pat[64];
		snprintf(pat, sizeof(pat), fmt_key, contract[i]);
		const char *at = strstr(from, pat);
		ck_assert_msg(at && at < to, "counter key %s missing or out of order (after %s)",
			      contract[i], i ? contract[i - 1] : "the heading");
		from = at + strlen(pat);
	}
}

/* The released keys keep their names and order, in JSON and the table. */
START_TEST(released_keys_kept)
{
	struct bp_stats s;
	bp_stats_init(&s);
	char *json = print(&s, BP_STATS_JSON_COMPACT);
	contract_in_order(json, "\"counters\":{", "\"waits\":{", "\"%s\":");
	free(json);
	char *table = print(&s, BP_STATS_TABLE);
	contract_in_order(table, "\n  counters:\n", "\n  waits:\n", "\n    %s ");
	free(table);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bufpool counters");
	TCase *tc = tcase_create("counters");
	tcase_add_unchecked_fixture(tc, bt_root_make, bt_root_remove);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, each_counter_lands_in_its_field);
	tcase_add_test(tc, dict_is_the_rows_in_order);
	tcase_add_test(tc, released_keys_kept);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(suite());
}
