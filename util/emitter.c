/* SPDX-License-Identifier: MIT */
/*
 * util/emitter.c - the emitter's back-ends (see emitter.h).
 *
 * Design note
 * -----------
 * Layer 0 (util): calls only libc.  Every piece of output passes through
 * put(), which stops at the first error; numbers are formatted into a
 * small stack buffer; strings are escaped as they are written (RFC 8259:
 * the quote, the backslash and every control character), in pieces, so a
 * string of any length needs no allocation.
 */
#include "util/emitter.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(struct emitter *e, const char *s)
{
	if (e->err == 0 && *s)
		e->err = e->write(e->arg, s);
}

void emitter_init(struct emitter *e, enum emitter_output out, emitter_write_cb *write,
		  void *arg)
{
	memset(e, 0, sizeof(*e));
	e->write = write;
	e->arg = arg;
	e->out = out;
	e->key_width = 24;
	e->first[0] = true;
}

int emitter_finish(const struct emitter *e)
{
	if (e->err)
		return e->err;
	return e->depth == 0 ? 0 : -EINVAL;
}

static void indent(struct emitter *e, int depth)
{
	for (int i = 0; i < depth; i++)
		put(e, "  ");
}

static void put_escaped(struct emitter *e, const char *s)
{
	char buf[128];
	size_t n = 0;

	put(e, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (n + 7 >= sizeof(buf)) {
			buf[n] = '\0';
			put(e, buf);
			n = 0;
		}
		if (c == '"' || c == '\\') {
			buf[n++] = '\\';
			buf[n++] = (char)c;
		} else if (c < 0x20) {
			static const char short_esc[] = "btn\0fr"; /* \b \t \n - \f \r */
			if (c >= '\b' && c <= '\r' && short_esc[c - '\b']) {
				buf[n++] = '\\';
				buf[n++] = short_esc[c - '\b'];
			} else {
				n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\\u%04x", c);
			}
		} else {
			buf[n++] = (char)c;
		}
	}
	buf[n] = '\0';
	put(e, buf);
	put(e, "\"");
}

/* Everything before a member's value: the separator from the previous
 * member, the indent and the key.  Returns false when the table back-end
 * shows nothing for this member (a member of a list). */
static bool member(struct emitter *e, const char *key)
{
	bool first = e->first[e->depth];

	e->first[e->depth] = false;
	if (e->out == EMITTER_TABLE) {
		if (e->inline_depth)
			return false;
		indent(e, e->depth);
		if (key) {
			char buf[128];
			snprintf(buf, sizeof(buf), "%-*s ", e->key_width, key);
			put(e, buf);
		}
		return true;
	}
	if (e->out == EMITTER_JSON_COMPACT) {
		if (!first)
			put(e, ",");
	} else if (e->inline_depth) {
		if (!first)
			put(e, ", ");
	} else if (e->depth > 0) {
		put(e, first ? "\n" : ",\n");
		indent(e, e->depth);
	}
	if (key && !e->list[e->depth]) {
		put_escaped(e, key);
		put(e, e->out == EMITTER_JSON_COMPACT ? ":" : ": ");
	}
	return true;
}

/* The value of a member; the table back-end ends its line. */
static void value(struct emitter *e, const char *v)
{
	put(e, v);
	if (e->out == EMITTER_TABLE)
		put(e, "\n");
}

static void open_level(struct emitter *e, bool list)
{
	if (e->depth >= EMITTER_MAX_DEPTH) {
		if (e->err == 0)
			e->err = -EINVAL;
		return;
	}
	e->depth++;
	e->first[e->depth] = true;
	e->list[e->depth] = list;
}

void emitter_dict_begin(struct emitter *e, const char *key)
{
	if (e->out == EMITTER_TABLE) {
		/* A header line for a named group; the outermost group (no key)
		 * has none but still indents what it holds by one level. */
		if (key && !e->inline_depth) {
			indent(e, e->depth);
			put(e, key);
			put(e, ":\n");
		}
		open_level(e, false);
		return;
	}
	if (e->depth > 0 || key)
		member(e, key);
	put(e, "{");
	open_level(e, false);
}

void emitter_dict_end(struct emitter *e)
{
	if (e->depth == 0) {
		if (e->err == 0)
			e->err = -EINVAL;
		return;
	}
	bool empty = e->first[e->depth];
	e->depth--;
	if (e->out == EMITTER_TABLE)
		return;
	if (e->out == EMITTER_JSON && !e->inline_depth && !empty) {
		put(e, "\n");
		indent(e, e->depth);
	}
	put(e, "}");
	if (e->depth == 0)
		put(e, "\n");
}

void emitter_list_begin(struct emitter *e, const char *key)
{
	if (e->out != EMITTER_TABLE) {
		member(e, key);
		put(e, "[");
	}
	open_level(e, true);
	if (!e->inline_depth)
		e->inline_depth = e->depth;
}

void emitter_list_end(struct emitter *e)
{
	if (e->depth == 0) {
		if (e->err == 0)
			e->err = -EINVAL;
		return;
	}
	if (e->inline_depth == e->depth)
		e->inline_depth = 0;
	e->depth--;
	if (e->out != EMITTER_TABLE)
		put(e, "]");
}

void emitter_kv_raw(struct emitter *e, const char *key, const char *json)
{
	if (member(e, key))
		value(e, json);
}

void emitter_kv_u64(struct emitter *e, const char *key, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	emitter_kv_raw(e, key, buf);
}

void emitter_kv_i64(struct emitter *e, const char *key, int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	emitter_kv_raw(e, key, buf);
}

void emitter_kv_double(struct emitter *e, const char *key, double v, int decimals)
{
	char buf[64];

	if (!isfinite(v) && emitter_is_json(e))
		snprintf(buf, sizeof(buf), "null");
	else if (decimals < 0)
		snprintf(buf, sizeof(buf), "%.17g", v);
	else
		snprintf(buf, sizeof(buf), "%.*f", decimals > 30 ? 30 : decimals, v);
	emitter_kv_raw(e, key, buf);
}

void emitter_kv_bool(struct emitter *e, const char *key, bool v)
{
	emitter_kv_raw(e, key, v ? "true" : "false");
}

void emitter_kv_str(struct emitter *e, const char *key, const char *s)
{
	if (!member(e, key))
		return;
	if (e->out == EMITTER_TABLE) {
		value(e, s ? s : "-");
	} else if (s) {
		put_escaped(e, s);
	} else {
		put(e, "null");
	}
}

void emitter_table_printf(struct emitter *e, const char *fmt, ...)
{
	char small[512];
	va_list ap;
	int n;

	if (e->out != EMITTER_TABLE || e->err)
		return;
	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		e->err = -EINVAL;
		return;
	}
	if ((size_t)n < sizeof(small)) {
		put(e, small);
		return;
	}
	char *big = malloc((size_t)n + 1);
	if (!big) {
		e->err = -ENOMEM;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	put(e, big);
	free(big);
}

int emitter_write_file(void *arg, const char *text)
{
	FILE *f = arg;

	return fputs(text, f) < 0 || ferror(f) ? -EIO : 0;
}
