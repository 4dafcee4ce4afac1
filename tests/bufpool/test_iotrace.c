/* SPDX-License-Identifier: MIT */
/*
 * test_iotrace.c - the I/O trace hook (bufpool.h, "I/O tracing"): every
 * change to the pool's files is reported, in the order the header
 * promises, with the bytes the file got; an injected sync failure is the
 * sync's failure.
 *
 * Design note: a recorder keeps each event (op, path, range, result and a
 * copy of a write's bytes) under a mutex, since the I/O threads report;
 * the tests then compare the record with the file itself.  Runs on both
 * I/O engines (the CI's threads setup runs the suite again).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bp_helpers.h"
#include "../check_run.h"

#define PAGE 4096u
#define MAX_EV 256u

struct ev {
	enum bp_io_trace_op op;
	int result;
	unsigned flags;
	uint64_t offset, len;
	unsigned char *data;
};

static struct {
	pthread_mutex_t mu;
	struct ev ev[MAX_EV];
	unsigned n;
	bool fail_sync;
	char path[160];
} rec = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int record(void *arg, const struct bp_io_trace_event *e)
{
	ck_assert_ptr_eq(arg, &rec);
	pthread_mutex_lock(&rec.mu);
	ck_assert_str_eq(e->path, rec.path);
	ck_assert_uint_lt(rec.n, MAX_EV);
	struct ev *v = &rec.ev[rec.n++];
	*v = (struct ev){e->op, e->result, e->flags, e->offset, e->len, NULL};
	if (e->op == BP_IO_TRACE_WRITE) {
		v->data = malloc(e->len);
		memcpy(v->data, e->data, e->len);
	}
	int r = e->op == BP_IO_TRACE_SYNC_BEGIN && rec.fail_sync ? -EIO : 0;
	pthread_mutex_unlock(&rec.mu);
	return r;
}

static struct bt_dir dir;

static void setup(void)
{
	bt_dir_make(&dir);
	rec.n = 0;
	rec.fail_sync = false;
	strcpy(rec.path, dir.file);
}
static void teardown(void)
{
	for (unsigned i = 0; i < rec.n; i++)
		free(rec.ev[i].data);
	bt_dir_remove(&dir);
}

static struct bp_pool *open_traced(unsigned flags)
{
	struct bp_config c = bt_config(&dir, 8, false);
	c.flags |= BP_OPEN_TRUNCATE | flags;
	c.io_trace = record;
	c.io_trace_arg = &rec;
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	return p;
}

static void write_pages(struct bp_pool *p, unsigned n, uint64_t version)
{
	for (uint64_t i = 0; i < n; i++) {
		struct bp_frame *f;
		ck_assert_int_eq(bp_get(p, i, BP_GET_CREATE, &f), 0);
		bp_latch(p, f, BP_LATCH_EXCLUSIVE);
		bt_fill(bp_data(f), bp_data_size(p), i, version);
		ck_assert_int_eq(bp_mark_dirty(p, f), 0);
		bp_unlatch(p, f, BP_LATCH_EXCLUSIVE);
		ck_assert_int_eq(bp_release(p, f), 0);
	}
}

/* The index of the last event of op, or -1. */
static long last(enum bp_io_trace_op op)
{
	for (long i = (long)rec.n - 1; i >= 0; i--)
		if (rec.ev[i].op == op)
			return i;
	return -1;
}

/* Open, writes and a flush: the open says it created and truncated; each
 * page's write carries exactly the bytes now in the file at its offset
 * (checksummed pages too, trailer included), and comes before the sync
 * that covers it, which reports success. */
START_TEST(events_match_the_file)
{
	const char *variant = _i == 1 ? "with checksums" : "without checksums";
	bool checksums = _i == 1;
	struct bp_pool *p = open_traced(checksums ? BP_OPEN_CHECKSUMS : 0);
	bt_uint_v(variant, rec.n, >=, 1);
	bt_int_v(variant, rec.ev[0].op, ==, BP_IO_TRACE_OPEN);
	bt_uint_v(variant, rec.ev[0].flags, ==, BP_IO_TRACE_CREAT | BP_IO_TRACE_TRUNC);
	write_pages(p, 5, 1);
	bt_int_v(variant, bp_flush(p), ==, 0);
	pthread_mutex_lock(&rec.mu);
	long begin = last(BP_IO_TRACE_SYNC_BEGIN), end = last(BP_IO_TRACE_SYNC_END);
	bt_check_v(variant, begin > 0 && end == begin + 1);
	bt_int_v(variant, rec.ev[end].result, ==, 0);
	int fd = open(dir.file, O_RDONLY);
	bt_int_v(variant, fd, >=, 0);
	unsigned writes = 0;
	unsigned char buf[PAGE];
	for (long i = 0; i < begin; i++) {
		if (rec.ev[i].op != BP_IO_TRACE_WRITE)
			continue;
		writes++;
		bt_int_v(variant, rec.ev[i].result, ==, 0);
		bt_uint_v(variant, rec.ev[i].len, ==, PAGE);
		bt_int_v(variant, pread(fd, buf, PAGE, (off_t)rec.ev[i].offset), ==, PAGE);
		ck_assert_msg(memcmp(buf, rec.ev[i].data, PAGE) == 0,
			      "%s: the write at %llu reported other bytes than the file holds",
			      variant, (unsigned long long)rec.ev[i].offset);
	}
	close(fd);
	bt_uint_v(variant, writes, ==, 5);
	pthread_mutex_unlock(&rec.mu);
	bt_int_v(variant, bp_close(p), ==, 0);
}
END_TEST

/* A sync the hook fails is the sync's failure (bp_flush, and sticky as a
 * kernel's: bp_durability_err); bp_file_truncate reports the new size. */
START_TEST(injected_sync_failure_and_truncate)
{
	struct bp_pool *p = open_traced(0);
	write_pages(p, 3, 1);
	rec.fail_sync = true;
	ck_assert_int_eq(bp_flush(p), -EIO);
	ck_assert_int_eq(rec.ev[last(BP_IO_TRACE_SYNC_END)].result, -EIO);
	ck_assert_int_eq(bp_durability_err(p), -EIO);
	rec.fail_sync = false;
	ck_assert_int_eq(bp_file_truncate(bp_pool_file(p), 1), 0);
	long t = last(BP_IO_TRACE_TRUNCATE);
	ck_assert(t >= 0);
	ck_assert_uint_eq(rec.ev[t].offset, PAGE);
	ck_assert_int_eq(bp_discard(p), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bufpool iotrace");
	TCase *tc = tcase_create("trace");
	tcase_add_unchecked_fixture(tc, bt_root_make, bt_root_remove);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, events_match_the_file, 0, 2);
	tcase_add_test(tc, injected_sync_failure_and_truncate);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(suite());
}
