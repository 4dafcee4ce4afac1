/* SPDX-License-Identifier: MIT */
/*
 * waiters.c - counting and printing parked waiters (see waiters.h).
 *
 * Design note: tests/common, on fwait.h only; the walks' state lives on
 * the caller's stack.
 */
#include "waiters.h"

#include <stdio.h>

struct parked_filter {
	const void *key; /* NULL: any */
	int bit;         /* -1: any */
	size_t count;
};

static int count_one(const struct fwait_waiter_info *w, void *arg)
{
	struct parked_filter *f = arg;
	if (!f->key || (w->key == f->key && (f->bit < 0 || w->bit == f->bit)))
		f->count++;
	return 0;
}

size_t tc_parked_on(struct fwait_table *t, const void *key, int bit)
{
	struct parked_filter f = { .key = key, .bit = bit };
	fwait_waiters_walk(t, count_one, &f);
	return f.count;
}

struct dump_state {
	size_t count, max_lines;
};

static int dump_one(const struct fwait_waiter_info *w, void *arg)
{
	struct dump_state *d = arg;
	if (d->count++ < d->max_lines)
		fprintf(stderr, "  parked: key %p bit %d %s bucket %u waited %.3f ms\n", w->key,
			w->bit, w->exclusive ? "exclusive" : "shared", w->bucket,
			(double)w->waited_ns / 1e6);
	return 0;
}

size_t tc_dump_waiters(struct fwait_table *t, size_t max_lines)
{
	struct dump_state d = { 0, max_lines };
	if (t == NULL)
		return 0;
	fwait_waiters_walk(t, dump_one, &d);
	fprintf(stderr, "  %zu waiter(s) parked\n", d.count);
	return d.count;
}
