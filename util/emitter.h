/* SPDX-License-Identifier: MIT */
/*
 * util/emitter.h - one emitter for every report: a human table, indented
 * JSON, or compact one-line JSON, written through a callback.
 *
 * Design note
 * -----------
 * Layer 0 (util): calls only libc.  Modelled on jemalloc's emitter.h: the
 * caller walks its data once and says what each item is (a group, a list,
 * a number, a string); the emitter decides how it looks in the chosen
 * back-end.  So the table and the JSON of a report can never disagree,
 * and JSON strings are escaped in exactly one place (emitter_kv_str).
 *
 *   EMITTER_TABLE         "name:" headers for groups, "key   value" lines,
 *                         indented two spaces per level; free-form lines
 *                         through emitter_table_printf.
 *   EMITTER_JSON          one object, two-space indent, a member a line;
 *                         lists (and everything inside them) on one line.
 *   EMITTER_JSON_COMPACT  one object on one line, no spaces: a JSON line.
 *
 * Output goes through write(arg, text) piece by piece (the emitter keeps
 * no buffer, so a caller that also writes to the same sink stays in
 * order).  The first non-zero return of write is remembered, nothing more
 * is written, and emitter_finish returns it.  State lives in the caller's
 * struct emitter; nothing global.  Nesting deeper than EMITTER_MAX_DEPTH is
 * a caller bug and is reported as -EINVAL by emitter_finish.
 */
#ifndef UTIL_EMITTER_H
#define UTIL_EMITTER_H

#include <stdbool.h>
#include <stdint.h>

#define EMITTER_MAX_DEPTH 16

enum emitter_output { EMITTER_TABLE = 0, EMITTER_JSON, EMITTER_JSON_COMPACT };

/* Write one NUL-terminated piece; 0 or a negative errno. */
typedef int emitter_write_cb(void *arg, const char *text);

struct emitter {
	emitter_write_cb *write;
	void *arg;
	enum emitter_output out;
	int err;             /* first failure of write (or -EINVAL), sticky */
	int depth;           /* open groups and lists */
	int inline_depth;    /* depth of the outermost open list (0: none) */
	int key_width;       /* table: keys padded to this width (24) */
	bool first[EMITTER_MAX_DEPTH + 1]; /* no separator before the first member */
	bool list[EMITTER_MAX_DEPTH + 1];  /* level is a list (values have no key) */
};

void emitter_init(struct emitter *e, enum emitter_output out, emitter_write_cb *write,
		  void *arg);
/* 0, or the first error of the write callback (or -EINVAL for unbalanced
 * or too deep nesting). */
int emitter_finish(const struct emitter *e);

static inline bool emitter_is_json(const struct emitter *e)
{
	return e->out != EMITTER_TABLE;
}

/* A group of named members: a JSON object, a "key:" header in the table.
 * key is NULL for the outermost object and for an object inside a list.
 * Closing the outermost object ends the JSON line/document with "\n". */
void emitter_dict_begin(struct emitter *e, const char *key);
void emitter_dict_end(struct emitter *e);

/* A list of values (JSON only: nothing is written in the table back-end,
 * whose caller shows lists its own way).  Members of a list have key NULL. */
void emitter_list_begin(struct emitter *e, const char *key);
void emitter_list_end(struct emitter *e);

/* One member (key NULL inside a list).  Table: "key  value" on its own
 * line; JSON: "key": value.  emitter_kv_double prints `decimals` places
 * (or %.17g when decimals < 0); a NaN or an infinity is JSON null. */
void emitter_kv_u64(struct emitter *e, const char *key, uint64_t v);
void emitter_kv_i64(struct emitter *e, const char *key, int64_t v);
void emitter_kv_double(struct emitter *e, const char *key, double v, int decimals);
void emitter_kv_bool(struct emitter *e, const char *key, bool v);
void emitter_kv_str(struct emitter *e, const char *key, const char *s);
/* A value that is already JSON text (another emitter's compact output). */
void emitter_kv_raw(struct emitter *e, const char *key, const char *json);

/* Free text, written only by the table back-end. */
void emitter_table_printf(struct emitter *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A write callback for a stdio stream (arg is the FILE *): -EIO when the
 * stream reports an error. */
int emitter_write_file(void *arg, const char *text);

#endif
