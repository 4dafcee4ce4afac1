/* SPDX-License-Identifier: MIT */
/*
 * test_wal.c - the write-ahead-log hooks: flush_log runs before any write
 * of a page whose LSN is not yet durable, whoever writes it (bp_flush,
 * eviction, the background writer, bp_checkpoint), and a failing flush_log
 * writes nothing; bp_checkpoint writes exactly the pages changed up to its
 * LSN, leaves the others (and their latches) alone and returns a redo point
 * that covers what is left.
 *
 * Design note: the callback runs in an I/O thread; it reads the page
 * under test from the file with its own descriptor, so "the page was not
 * yet written when the log was asked" is checked on the disk itself.  The
 * worker and main share the callback's record through a mutex.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bp_helpers.h"
#include "../check_run.h"

static struct bt_dir dir;

static void setup(void) { bt_dir_make(&dir); }
static void teardown(void) { bt_dir_remove(&dir); }

struct wal {
	pthread_mutex_t mtx;
	uint64_t watch_page;  /* the page whose file copy the callback checks */
	uint64_t calls, last_lsn;
	uint64_t ahead;       /* *durable = lsn + ahead */
	int fail;             /* next call returns this (0: succeed) */
	bool short_answer;    /* claim durable = lsn - 1 */
	bool page_was_old;    /* every call found the watched page still v1 */
};

static bool file_page_is(uint64_t pg, uint64_t version)
{
	unsigned char buf[4096];
	int fd = open(dir.file, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ssize_t n = pread(fd, buf, sizeof(buf), (off_t)(pg * sizeof(buf)));
	close(fd);
	return n == (ssize_t)sizeof(buf) && bt_check(buf, sizeof(buf), pg, version);
}

static int flush_log(void *arg, uint64_t lsn, uint64_t *durable)
{
	struct wal *w = arg;
	pthread_mutex_lock(&w->mtx);
	w->calls++;
	w->last_lsn = lsn;
	if (!file_page_is(w->watch_page, 1))
		w->page_was_old = false;
	int rc = w->fail;
	w->fail = 0;
	*durable = w->short_answer ? lsn - 1 : lsn + w->ahead;
	pthread_mutex_unlock(&w->mtx);
	return rc;
}

static void wal_init(struct wal *w, uint64_t page)
{
	memset(w, 0, sizeof(*w));
	pthread_mutex_init(&w->mtx, NULL);
	w->watch_page = page;
	w->page_was_old = true;
	w->ahead = 5;
}

static uint64_t wal_calls(struct wal *w)
{
	pthread_mutex_lock(&w->mtx);
	uint64_t n = w->calls;
	pthread_mutex_unlock(&w->mtx);
	return n;
}

static struct bp_config wal_config(struct wal *w, bool bgwriter)
{
	struct bp_config c = bt_config(&dir, 8, bgwriter);
	if (bgwriter)
		c.writer_interval_ms = 5;
	c.flush_log = flush_log;
	c.flush_log_arg = w;
	return c;
}

/* Four pages of version 1, and a pool on them whose flush_log is w's
 * (watching page watch). */
static struct bp_pool *wal_pool(struct wal *w, uint64_t watch, bool bgwriter)
{
	bt_make_file(&dir, 4, 1);
	wal_init(w, watch);
	struct bp_config c = wal_config(w, bgwriter);
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	return p;
}

/* Page pg of file rewritten with version v (created if need be), marked
 * dirty at lsn (exclusive latch). */
static void change_in(struct bp_pool *p, struct bp_file *file, uint64_t pg, uint64_t v,
		      uint64_t lsn)
{
	struct bp_frame *f;
	ck_assert_int_eq(bp_file_get(file, pg, BP_GET_CREATE, &f), 0);
	ck_assert_int_eq(bp_latch(p, f, BP_LATCH_EXCLUSIVE), 0);
	bt_fill(bp_data(f), bp_page_size(p), pg, v);
	ck_assert_int_eq(bp_mark_dirty_lsn(p, f, lsn), 0);
	ck_assert_int_eq(bp_unlatch(p, f, BP_LATCH_EXCLUSIVE), 0);
	ck_assert_int_eq(bp_release(p, f), 0);
}

/* Page pg of file 0: see change_in. */
static void change(struct bp_pool *p, uint64_t pg, uint64_t v, uint64_t lsn)
{
	change_in(p, bp_pool_file(p), pg, v, lsn);
}

static struct bp_stats stats(struct bp_pool *p)
{
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	return s;
}

static bool written(void *arg)
{
	struct bp_pool *p = arg;
	struct bp_stats s = stats(p);
	return s.frames_dirty == 0 && s.frames_writeback == 0 && s.writes >= 1;
}

/* Loop index: who writes the page. */
enum writer { BY_FLUSH, BY_EVICTION, BY_BGWRITER, BY_CHECKPOINT, NWRITERS };

START_TEST(log_is_flushed_before_every_writer)
{
	static const char *const names[NWRITERS] = { "flush", "eviction", "background writer",
						      "checkpoint" };
	const char *variant = names[_i];
	struct wal w;
	struct bp_pool *p = wal_pool(&w, 1, _i == BY_BGWRITER);
	change(p, 1, 2, 10);
	bt_uint_v(variant, bp_oldest_dirty_lsn(p), ==, 10);
	uint64_t redo = 0;
	switch ((enum writer)_i) {
	case BY_FLUSH:
		bt_int_v(variant, bp_flush(p), ==, 0);
		break;
	case BY_EVICTION:
		bt_int_v(variant, bp_evict_page(p, 1), ==, 0);
		break;
	case BY_BGWRITER:
		ck_assert_msg(th_poll(written, p, BT_DEADLINE_MS), "%s: the writer never wrote it", variant);
		break;
	case BY_CHECKPOINT:
		bt_int_v(variant, bp_checkpoint(p, 10, &redo), ==, 0);
		bt_uint_v(variant, redo, ==, 10);
		break;
	default:
		ck_abort();
	}
	bt_uint_v(variant, wal_calls(&w), ==, 1);
	bt_uint_v(variant, w.last_lsn, ==, 10);
	ck_assert_msg(w.page_was_old, "%s: the page reached the file before the log was flushed",
		      variant);
	bt_check_v(variant, file_page_is(1, 2));
	struct bp_stats s = stats(p);
	bt_uint_v(variant, s.log_flushes, ==, 1);
	bt_uint_v(variant, s.durable_lsn, ==, 15);
	bt_uint_v(variant, s.oldest_dirty_lsn, ==, 0);
	bt_uint_v(variant, bp_oldest_dirty_lsn(p), ==, UINT64_MAX);
	bt_int_v(variant, bp_close(p), ==, 0);
}
END_TEST

/* Only LSNs past the durable one ask the log, and bp_log_durable counts. */
START_TEST(durable_lsns_are_not_asked_again)
{
	struct wal w;
	struct bp_pool *p = wal_pool(&w, 0, false);
	change(p, 1, 2, 10);
	ck_assert_int_eq(bp_flush(p), 0);
	ck_assert_uint_eq(wal_calls(&w), 1);  /* durable now 15 */
	change(p, 1, 3, 12);
	ck_assert_int_eq(bp_flush(p), 0);
	ck_assert_uint_eq(wal_calls(&w), 1);  /* 12 <= 15 */
	struct bp_frame *f;
	ck_assert_int_eq(bp_get(p, 1, 0, &f), 0);
	ck_assert_uint_eq(bp_frame_lsn(f), 12);
	ck_assert_int_eq(bp_release(p, f), 0);
	change(p, 2, 2, 20);
	ck_assert_int_eq(bp_flush(p), 0);
	ck_assert_uint_eq(wal_calls(&w), 2);
	ck_assert_uint_eq(w.last_lsn, 20);
	ck_assert_int_eq(bp_log_durable(p, 100), 0);
	ck_assert_int_eq(bp_log_durable(p, 50), 0); /* never lowers it */
	change(p, 3, 2, 90);
	ck_assert_int_eq(bp_flush(p), 0);
	ck_assert_uint_eq(wal_calls(&w), 2);
	ck_assert_uint_eq(stats(p).durable_lsn, 100);
	/* The page LSN never goes down; 0 is no LSN. */
	change(p, 3, 3, 95);
	change(p, 3, 4, 93);
	ck_assert_int_eq(bp_get(p, 3, 0, &f), 0);
	ck_assert_uint_eq(bp_frame_lsn(f), 95);
	ck_assert_int_eq(bp_latch(p, f, BP_LATCH_EXCLUSIVE), 0);
	ck_assert_int_eq(bp_mark_dirty_lsn(p, f, 0), -EINVAL);
	ck_assert_int_eq(bp_unlatch(p, f, BP_LATCH_EXCLUSIVE), 0);
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_mark_dirty_lsn(NULL, f, 5), -EINVAL);
	ck_assert_uint_eq(bp_frame_lsn(NULL), 0);
	ck_assert_int_eq(bp_log_durable(NULL, 1), -EINVAL);
	uint64_t redo;
	ck_assert_int_eq(bp_checkpoint(NULL, 1, &redo), -EINVAL);
	ck_assert_int_eq(bp_checkpoint(p, 1, NULL), -EINVAL);
	ck_assert_uint_eq(bp_oldest_dirty_lsn(NULL), UINT64_MAX);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* A flush_log that fails (loop 0) or claims less than asked (loop 1): the
 * page is not written and stays dirty, the flush says so; once the log
 * works, the next flush writes it. */
START_TEST(failed_log_flush_writes_nothing)
{
	const char *variant = _i == 0 ? "flush_log fails" : "flush_log falls short";
	struct wal w;
	struct bp_pool *p = wal_pool(&w, 1, false);
	if (_i == 0)
		w.fail = -ENOSPC;
	else
		w.short_answer = true;
	change(p, 1, 2, 10);
	bt_int_v(variant, bp_flush(p), ==, _i == 0 ? -ENOSPC : -EIO);
	bt_check_v(variant, file_page_is(1, 1));
	struct bp_stats s = stats(p);
	bt_uint_v(variant, s.frames_dirty, ==, 1);
	bt_uint_v(variant, s.write_errors, ==, 1);
	bt_uint_v(variant, s.durable_lsn, ==, 0);
	bt_uint_v(variant, bp_oldest_dirty_lsn(p), ==, 10);
	w.short_answer = false;
	bt_int_v(variant, bp_flush(p), ==, 0);
	bt_check_v(variant, file_page_is(1, 2));
	bt_uint_v(variant, wal_calls(&w), ==, 2);
	bt_int_v(variant, bp_close(p), ==, 0);
}
END_TEST

struct ckpt {
	struct bp_pool *p;
	uint64_t upto, redo;
	int rc;
};

static void *checkpoint_fn(void *arg)
{
	struct ckpt *k = arg;
	k->rc = bp_checkpoint(k->p, k->upto, &k->redo);
	return NULL;
}

/* Pages changed at LSNs 10, 20, 30; page 3 at 50 is held exclusively by
 * main throughout.  A checkpoint up to 20 (in another thread, joined with a
 * deadline: it must not wait for page 3's latch) writes pages 0 and 1 only
 * and returns redo 20; the oldest change left is 30.  Then page 0 changes
 * again at 60 and a checkpoint up to 55 writes pages 2 and 3: redo 55. */
START_TEST(checkpoint_writes_only_old_changes)
{
	struct wal w;
	struct bp_pool *p = wal_pool(&w, 0, false);
	change(p, 0, 2, 10);
	change(p, 1, 2, 20);
	change(p, 2, 2, 30);
	struct bp_frame *f3;
	ck_assert_int_eq(bp_get(p, 3, 0, &f3), 0);
	ck_assert_int_eq(bp_latch(p, f3, BP_LATCH_EXCLUSIVE), 0);
	bt_fill(bp_data(f3), bp_page_size(p), 3, 2);
	ck_assert_int_eq(bp_mark_dirty_lsn(p, f3, 50), 0);
	ck_assert_uint_eq(bp_oldest_dirty_lsn(p), 10);

	struct ckpt k = { p, 20, 0, 1 };
	pthread_t tid;
	th_spawn(&tid, checkpoint_fn, &k);
	th_join_all(&tid, 1, BT_DEADLINE_MS, "a checkpoint beside a latched newer page", NULL);
	ck_assert_int_eq(k.rc, 0);
	ck_assert_uint_eq(k.redo, 20);
	ck_assert(file_page_is(0, 2) && file_page_is(1, 2));
	ck_assert(file_page_is(2, 1) && file_page_is(3, 1));
	struct bp_stats s = stats(p);
	ck_assert_uint_eq(s.frames_dirty, 2);
	ck_assert_uint_eq(s.oldest_dirty_lsn, 30);
	ck_assert_uint_eq(wal_calls(&w), 2); /* 10 (durable 15), then 20 */

	ck_assert_int_eq(bp_unlatch(p, f3, BP_LATCH_EXCLUSIVE), 0);
	ck_assert_int_eq(bp_release(p, f3), 0);
	change(p, 0, 3, 60);
	k = (struct ckpt){ p, 55, 0, 1 };
	th_spawn(&tid, checkpoint_fn, &k);
	th_join_all(&tid, 1, BT_DEADLINE_MS, "the second checkpoint", NULL);
	ck_assert_int_eq(k.rc, 0);
	ck_assert_uint_eq(k.redo, 55);
	ck_assert(file_page_is(2, 2) && file_page_is(3, 2) && file_page_is(0, 2));
	ck_assert_uint_eq(bp_oldest_dirty_lsn(p), 60);
	ck_assert_uint_eq(stats(p).frames_dirty, 1);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* A failed write during a checkpoint keeps its page in the redo point; a
 * failed fsync fails the checkpoint (and, sticky, every later one). */
START_TEST(checkpoint_errors_keep_redo_safe)
{
	struct wal w;
	struct bp_pool *p = wal_pool(&w, 0, false);
	change(p, 0, 2, 10);
	change(p, 1, 2, 20);
	struct bp_fault fa = { .op = BP_FAULT_WRITE, .kind = BP_FAULT_FAIL,
			       .page_first = 0, .page_count = 1 };
	ck_assert_int_eq(bp_fault_set(p, &fa), 0);
	uint64_t redo = 0;
	ck_assert_int_eq(bp_checkpoint(p, 30, &redo), -EIO);
	ck_assert_uint_eq(redo, 10);           /* page 0 is still dirty */
	ck_assert(file_page_is(1, 2));
	ck_assert_int_eq(bp_fault_clear(p), 0);
	ck_assert_int_eq(bp_checkpoint(p, 30, &redo), 0);
	ck_assert_uint_eq(redo, 30);
	struct bp_fault fs = { .op = BP_FAULT_FSYNC, .kind = BP_FAULT_FAIL, .count = 1 };
	ck_assert_int_eq(bp_fault_set(p, &fs), 0);
	ck_assert_int_eq(bp_checkpoint(p, 40, &redo), -EIO);
	ck_assert_int_eq(bp_checkpoint(p, 40, &redo), -EIO); /* sticky */
	ck_assert_int_eq(bp_discard(p), 0);
}
END_TEST

/* A dirty page dropped unwritten takes its oldest change with it: the
 * oldest dirty LSN and a checkpoint's redo point move past it.  The page
 * changed at 10 is dropped, by _i = 0: bp_file_truncate of file 0 below
 * it; _i = 1: bp_file_discard of a second file holding it.  A page of file
 * 0 changed at 20 stays.  (The free frame used to keep rec_lsn 10, so both
 * stayed at 10 until the frame took another page.) */
START_TEST(dropped_dirty_page_leaves_no_rec_lsn)
{
	const char *variant = _i == 0 ? "bp_file_truncate" : "bp_file_discard";
	struct wal w;
	struct bp_pool *p = wal_pool(&w, 0, false);
	struct bp_file *other = NULL;
	char path[sizeof(dir.path) + 16];
	snprintf(path, sizeof(path), "%s/other", dir.path);
	if (_i == 0) {
		change(p, 3, 2, 10);
	} else {
		bt_int_v(variant, bp_file_open(&other, p, path, BP_OPEN_CREATE), ==, 0);
		change_in(p, other, 0, 2, 10);
	}
	change(p, 1, 2, 20);
	bt_uint_v(variant, bp_oldest_dirty_lsn(p), ==, 10);
	if (_i == 0)
		bt_int_v(variant, bp_file_truncate(bp_pool_file(p), 3), ==, 0);
	else
		bt_int_v(variant, bp_file_discard(other), ==, 0);
	bt_uint_v(variant, stats(p).frames_dirty, ==, 1);
	bt_uint_v(variant, bp_oldest_dirty_lsn(p), ==, 20);
	bt_uint_v(variant, stats(p).oldest_dirty_lsn, ==, 20);
	uint64_t redo = 0;
	bt_int_v(variant, bp_checkpoint(p, 30, &redo), ==, 0);
	bt_uint_v(variant, redo, ==, 30);
	bt_uint_v(variant, bp_oldest_dirty_lsn(p), ==, UINT64_MAX);
	bt_int_v(variant, bp_close(p), ==, 0);
	unlink(path);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bufpool wal");
	TCase *tc = tcase_create("wal");
	tcase_add_unchecked_fixture(tc, bt_root_make, bt_root_remove);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, log_is_flushed_before_every_writer, 0, NWRITERS);
	tcase_add_test(tc, durable_lsns_are_not_asked_again);
	tcase_add_loop_test(tc, failed_log_flush_writes_nothing, 0, 2);
	tcase_add_test(tc, checkpoint_writes_only_old_changes);
	tcase_add_test(tc, checkpoint_errors_keep_redo_safe);
	tcase_add_loop_test(tc, dropped_dirty_page_leaves_no_rec_lsn, 0, 2);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
