/* SPDX-License-Identifier: MIT */
/*
 * test_basic.c - bufpool: open/close, round trips through the file, bad
 * inputs, stats printing and introspection.
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

/* bp_stats_print writers: to a stdio stream; failing at the third piece. */
static int file_write(void *arg, const char *text)
{
	return fputs(text, arg) < 0 ? -EIO : 0;
}

static int fail_third_write(void *arg, const char *text)
{
	int *calls = arg;
	return ++*calls == 3 ? -ENOSPC : 0;
}

/* Pages created and left dirty are written by bp_close: reopen, compare. */
START_TEST(close_writes_dirty_pages)
{
	struct bp_config c = bt_config(&dir, 8, false);
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	ck_assert_uint_eq(bp_page_count(p), 0);
	for (uint64_t i = 0; i < 6; i++) {
		uint64_t pg;
		struct bp_frame *f;
		ck_assert_int_eq(bp_new_page(p, &pg, &f), 0);
		ck_assert_uint_eq(pg, i);
		ck_assert_int_eq(bp_latch(p, f, BP_LATCH_EXCLUSIVE), 0);
		bt_fill(bp_data(f), bp_page_size(p), pg, 1);
		ck_assert_int_eq(bp_mark_dirty(p, f), 0);
		ck_assert_int_eq(bp_unlatch(p, f, BP_LATCH_EXCLUSIVE), 0);
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.frames_dirty, 6);
	ck_assert_uint_eq(s.writes, 0);
	ck_assert_int_eq(bp_close(p), 0);

	c.flags &= ~BP_OPEN_CREATE;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	ck_assert_uint_eq(bp_page_count(p), 6);
	for (uint64_t i = 0; i < 6; i++) {
		struct bp_frame *f;
		ck_assert_int_eq(bp_get(p, i, 0, &f), 0);
		ck_assert_uint_eq(bp_frame_pageno(f), i);
		ck_assert_int_eq(bp_latch(p, f, BP_LATCH_SHARED), 0);
		ck_assert(bt_check(bp_data(f), bp_page_size(p), i, 1));
		ck_assert_int_eq(bp_unlatch(p, f, BP_LATCH_SHARED), 0);
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.reads, 6);
	ck_assert_uint_eq(s.misses, 6);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* Every legal page size round-trips; BP_GET_CREATE extends the file. */
START_TEST(page_sizes_round_trip)
{
	for (uint32_t ps = BP_PAGE_SIZE_MIN; ps <= BP_PAGE_SIZE_MAX; ps *= 2) {
		struct bp_config c = bt_config(&dir, 4, false);
		c.page_size = ps;
		c.flags |= BP_OPEN_TRUNCATE;
		struct bp_pool *p;
		ck_assert_int_eq(bp_open(&p, &c), 0);
		struct bp_frame *f;
		ck_assert_int_eq(bp_get(p, 2, 0, &f), -ENXIO);
		ck_assert_int_eq(bp_get(p, 2, BP_GET_CREATE, &f), 0);
		ck_assert_uint_eq(bp_page_count(p), 3);
		ck_assert_uint_eq((uintptr_t)bp_data(f) % ps, 0);
		ck_assert_int_eq(bp_latch(p, f, BP_LATCH_EXCLUSIVE), 0);
		bt_fill(bp_data(f), ps, 2, ps);
		ck_assert_int_eq(bp_mark_dirty(p, f), 0);
		ck_assert_int_eq(bp_unlatch(p, f, BP_LATCH_EXCLUSIVE), 0);
		ck_assert_int_eq(bp_release(p, f), 0);
		ck_assert_int_eq(bp_close(p), 0);
		c.flags &= ~BP_OPEN_TRUNCATE;
		ck_assert_int_eq(bp_open(&p, &c), 0);
		ck_assert_int_eq(bp_get(p, 2, 0, &f), 0);
		ck_assert(bt_check(bp_data(f), ps, 2, ps));
		ck_assert_int_eq(bp_release(p, f), 0);
		ck_assert_int_eq(bp_get(p, 0, 0, &f), 0); /* a hole reads as zeros */
		ck_assert_uint_eq(((unsigned char *)bp_data(f))[ps - 1], 0);
		ck_assert_int_eq(bp_release(p, f), 0);
		ck_assert_int_eq(bp_close(p), 0);
	}
}
END_TEST

/* A config refused by fwait (the wait table is built inside bp_open) must
 * be refused before the file is opened: with BP_OPEN_TRUNCATE the old code
 * truncated the file first. */
START_TEST(refused_config_leaves_the_file_alone)
{
	bt_make_file(&dir, 3, 1);
	struct bp_config c = bt_config(&dir, 8, false);
	c.flags |= BP_OPEN_TRUNCATE;
	c.fwait.policy = FWAIT_POLICY_COUNT;
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), -EINVAL);
	c.flags &= ~BP_OPEN_TRUNCATE;
	c.fwait.policy = FWAIT_WAKE_ONE;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	ck_assert_uint_eq(bp_page_count(p), 3);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

START_TEST(bad_open_inputs)
{
	struct bp_pool *p = (struct bp_pool *)0x1;
	struct bp_config c = bt_config(&dir, 8, false);
	ck_assert_int_eq(bp_open(NULL, &c), -EINVAL);
	ck_assert_int_eq(bp_open(&p, NULL), -EINVAL);
	const uint32_t bad_sizes[] = { 3000, 256, 131072, 4097, 1 };
	for (size_t i = 0; i < sizeof(bad_sizes) / sizeof(bad_sizes[0]); i++) {
		c.page_size = bad_sizes[i];
		ck_assert_int_eq(bp_open(&p, &c), -EINVAL);
	}
	c.page_size = 0;
	c.nframes = 1;
	ck_assert_int_eq(bp_open(&p, &c), -EINVAL);
	c.nframes = 8;
	c.flags |= 0x8000;
	ck_assert_int_eq(bp_open(&p, &c), -EINVAL);
	c.flags = BP_OPEN_NO_BGWRITER;
	ck_assert_int_eq(bp_open(&p, &c), -ENOENT); /* no create: file absent */
	c.path = NULL;
	ck_assert_int_eq(bp_open(&p, &c), -EINVAL);
	c = bt_config(&dir, 8, false);
	c.fwait.policy = FWAIT_POLICY_COUNT;
	ck_assert_int_eq(bp_open(&p, &c), -EINVAL);
	ck_assert_ptr_eq(p, (struct bp_pool *)0x1); /* untouched on failure */
	ck_assert_int_eq(bp_close(NULL), -EINVAL);
}
END_TEST

/* bp_open's config errors reach the config's log callback: level ERROR,
 * one message per refusal naming the bad value, no newline, log_arg passed
 * through, and nothing on stderr. */
START_TEST(open_errors_reach_the_log)
{
	struct bp_config c = bt_config(&dir, 8, false);
	struct bt_log log;
	bt_log_into(&c, &log);
	struct bp_pool *p = (struct bp_pool *)0x1;
	struct bt_stderr se;
	char err[256];
	bt_stderr_begin(&dir, &se);
	c.page_size = 3000;
	int rc = bp_open(&p, &c);
	bt_stderr_end(&se, err, sizeof(err));
	ck_assert_int_eq(rc, -EINVAL);
	ck_assert_uint_eq(log.n, 1);
	ck_assert_int_eq(log.level, BP_LOG_ERROR);
	ck_assert_msg(strstr(log.text, "page size 3000"), "logged: %s", log.text);
	ck_assert(!log.newline);
	ck_assert_msg(err[0] == '\0', "written to stderr: %s", err);
	/* each other field it checks, and the fwait config it hands on */
	c.page_size = 0;
	c.nframes = 1;
	bt_log_clear(&log);
	ck_assert_int_eq(bp_open(&p, &c), -EINVAL);
	ck_assert_msg(log.n == 1 && strstr(log.text, "nframes 1"), "logged: %s", log.text);
	c.nframes = 8;
	c.fwait.policy = FWAIT_POLICY_COUNT;
	bt_log_clear(&log);
	ck_assert_int_eq(bp_open(&p, &c), -EINVAL);
	ck_assert_msg(log.n == 1 && strstr(log.text, "fwait"), "logged: %s", log.text);
	ck_assert_int_eq(log.level, BP_LOG_ERROR);
	c.fwait.policy = FWAIT_WAKE_ONE;
	c.path = NULL;
	bt_log_clear(&log);
	ck_assert_int_eq(bp_open(&p, &c), -EINVAL);
	ck_assert_msg(log.n == 1 && strstr(log.text, "path"), "logged: %s", log.text);
	ck_assert_ptr_eq(p, (struct bp_pool *)0x1);
	/* a good config logs nothing */
	c = bt_config(&dir, 8, false);
	bt_log_into(&c, &log);
	ck_assert_int_eq(bp_open(&p, &c), 0);
	ck_assert_int_eq(bp_close(p), 0);
	ck_assert_uint_eq(log.n, 0);
}
END_TEST

/* Without a log callback the library writes nothing, where it used to print
 * on stderr: a refused config, bp_close and bp_discard with a page pinned,
 * and a bp_close whose write-back failed. */
START_TEST(silent_without_a_log)
{
	struct bp_config c = bt_config(&dir, 4, false);
	ck_assert(c.log == NULL);
	struct bp_pool *p;
	struct bp_frame *f;
	uint64_t pg;
	struct bt_stderr se;
	char err[512];
	/* A failed assertion in between is reported through Check's own
	 * channel, not stderr, so asserting inside the capture is fine. */
	bt_stderr_begin(&dir, &se);
	c.page_size = 3000;
	ck_assert_int_eq(bp_open(&p, &c), -EINVAL);
	c.page_size = 0;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	ck_assert_int_eq(bp_new_page(p, &pg, &f), 0);
	ck_assert_int_eq(bp_close(p), -EBUSY);
	ck_assert_int_eq(bp_discard(p), -EBUSY);
	ck_assert_int_eq(bp_release(p, f), 0);
	struct bp_fault fa = { .op = BP_FAULT_WRITE, .kind = BP_FAULT_FAIL, .err = EIO };
	ck_assert_int_eq(bp_fault_set(p, &fa), 0);
	ck_assert_int_eq(bp_close(p), -EIO);
	bt_stderr_end(&se, err, sizeof(err));
	ck_assert_msg(err[0] == '\0', "written to stderr: %s", err);
	ck_assert_int_eq(bp_discard(p), 0);
}
END_TEST

/* bp_close (and bp_discard) refused for a pinned page log which frame and
 * page, under the call's own name. */
START_TEST(close_logs_the_pinned_frame)
{
	struct bp_config c = bt_config(&dir, 4, false);
	struct bt_log log;
	bt_log_into(&c, &log);
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	struct bp_frame *f;
	uint64_t pg;
	for (int i = 0; i < 3; i++) { /* page 2 is the pinned one */
		ck_assert_int_eq(bp_new_page(p, &pg, &f), 0);
		if (i < 2)
			ck_assert_int_eq(bp_release(p, f), 0);
	}
	struct bp_frame_info fi;
	ck_assert(bt_frame_of(p, 2, &fi));
	char want[96];
	snprintf(want, sizeof(want), "bp_close: frame %u (page 2) is still pinned", fi.frame);
	ck_assert_int_eq(bp_close(p), -EBUSY);
	ck_assert_uint_eq(log.n, 1);
	ck_assert_int_eq(log.level, BP_LOG_ERROR);
	ck_assert_msg(strstr(log.text, want), "logged: %s, not %s", log.text, want);
	ck_assert(!log.newline);
	bt_log_clear(&log);
	ck_assert_int_eq(bp_discard(p), -EBUSY);
	snprintf(want, sizeof(want), "bp_discard: frame %u (page 2) is still pinned", fi.frame);
	ck_assert_msg(log.n == 1 && strstr(log.text, want), "logged: %s, not %s", log.text, want);
	ck_assert_int_eq(bp_release(p, f), 0);
	bt_log_clear(&log);
	ck_assert_int_eq(bp_close(p), 0);
	ck_assert_uint_eq(log.n, 0);
}
END_TEST

START_TEST(bad_access_inputs)
{
	struct bp_config c = bt_config(&dir, 4, false);
	struct bp_pool *p, *q;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	struct bt_dir dir2;
	bt_dir_make(&dir2);
	struct bp_config c2 = bt_config(&dir2, 4, false);
	ck_assert_int_eq(bp_open(&q, &c2), 0);
	struct bp_frame *f, *g;
	uint64_t pg;
	ck_assert_int_eq(bp_get(NULL, 0, BP_GET_CREATE, &f), -EINVAL);
	ck_assert_int_eq(bp_get(p, 0, BP_GET_CREATE, NULL), -EINVAL);
	ck_assert_int_eq(bp_get(p, 0, 0x80, &f), -EINVAL);
	ck_assert_int_eq(bp_get(p, 0, 0, &f), -ENXIO);
	ck_assert_int_eq(bp_get(p, UINT64_MAX - 1, BP_GET_CREATE, &f), -EFBIG);
	ck_assert_int_eq(bp_new_page(p, NULL, &f), -EINVAL);
	ck_assert_int_eq(bp_new_page(p, &pg, &f), 0);
	ck_assert_int_eq(bp_new_page(q, &pg, &g), 0);
	/* frames of another pool, NULL, or not pinned */
	ck_assert_int_eq(bp_release(p, g), -EINVAL);
	ck_assert_int_eq(bp_release(p, NULL), -EINVAL);
	ck_assert_int_eq(bp_latch(p, g, BP_LATCH_SHARED), -EINVAL);
	ck_assert_int_eq(bp_latch(p, f, (enum bp_latch_mode)7), -EINVAL);
	ck_assert_int_eq(bp_mark_dirty(NULL, f), -EINVAL);
	ck_assert_ptr_null(bp_data(NULL));
	ck_assert_uint_eq(bp_frame_pageno(NULL), BP_NO_PAGE);
	/* unlatch what is not held */
	ck_assert_int_eq(bp_unlatch(p, f, BP_LATCH_SHARED), -EPERM);
	ck_assert_int_eq(bp_unlatch(p, f, BP_LATCH_EXCLUSIVE), -EPERM);
	ck_assert_int_eq(bp_latch(p, f, BP_LATCH_SHARED), 0);
	ck_assert_int_eq(bp_unlatch(p, f, BP_LATCH_EXCLUSIVE), -EPERM);
	ck_assert_int_eq(bp_latch_try(p, f, BP_LATCH_EXCLUSIVE), -EBUSY);
	ck_assert_int_eq(bp_unlatch(p, f, BP_LATCH_SHARED), 0);
	/* close refuses while pinned, then double release */
	ck_assert_int_eq(bp_close(p), -EBUSY);
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_release(p, f), -EINVAL);
	ck_assert_int_eq(bp_latch(p, f, BP_LATCH_SHARED), -EINVAL); /* unpinned */
	ck_assert_int_eq(bp_mark_dirty(p, f), -EINVAL);
	ck_assert_int_eq(bp_release(q, g), 0);
	/* misc NULLs */
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(NULL, &s), -EINVAL);
	ck_assert_int_eq(bp_stats_get(p, NULL), -EINVAL);
	ck_assert_int_eq(bp_stats_print(NULL, file_write, stdout, BP_STATS_JSON), -EINVAL);
	ck_assert_int_eq(bp_stats_print(&s, NULL, stdout, BP_STATS_JSON), -EINVAL);
	ck_assert_int_eq(bp_stats_print(&s, file_write, stdout, (enum bp_stats_format)9),
			 -EINVAL);
	ck_assert_int_eq(bp_flush(NULL), -EINVAL);
	ck_assert_int_eq(bp_evict_page(NULL, 0), -EINVAL);
	ck_assert_int_eq(bp_evict_page(p, 99), -ENOENT);
	ck_assert_int_eq(bp_evict_all(NULL), -EINVAL);
	ck_assert_int_eq(bp_fault_set(p, NULL), -EINVAL);
	struct bp_fault bad = { .op = BP_FAULT_OP_COUNT };
	ck_assert_int_eq(bp_fault_set(p, &bad), -EINVAL);
	ck_assert_int_eq(bp_fault_clear(NULL), -EINVAL);
	ck_assert_int_eq(bp_frames_walk(p, NULL, NULL), -EINVAL);
	char buf[8];
	ck_assert_int_eq(bp_flags_format(0, NULL, 0), -EINVAL);
	ck_assert_int_eq(bp_flags_format(0, buf, sizeof(buf)), 1);
	ck_assert_str_eq(buf, "-");
	ck_assert_ptr_null(bp_fwait_table(NULL));
	ck_assert_uint_eq(bp_page_size(NULL), 0);
	ck_assert_int_eq(bp_close(p), 0);
	ck_assert_int_eq(bp_close(q), 0);
	bt_dir_remove(&dir2);
}
END_TEST

/* The three stats formats come from one call; JSON is balanced and names the
 * counters; the table names them too; the counts are the real ones. */
START_TEST(stats_print_and_frames)
{
	struct bp_config c = bt_config(&dir, 8, false);
	c.fwait.policy = FWAIT_WAKE_ALL;
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	struct bp_frame *f;
	uint64_t pg;
	ck_assert_int_eq(bp_new_page(p, &pg, &f), 0);
	ck_assert_int_eq(bp_latch(p, f, BP_LATCH_EXCLUSIVE), 0);
	ck_assert_int_eq(bp_mark_dirty(p, f), 0);
	ck_assert_int_eq(bp_unlatch(p, f, BP_LATCH_EXCLUSIVE), 0);
	char flags[64];
	struct bp_frame_info top[4];
	ck_assert_int_eq(bp_frames_hottest(p, top, 4), 0); /* nobody waited */
	ck_assert_int_gt(bp_flags_format(bt_flags_of(p, pg), flags, sizeof(flags)), 0);
	ck_assert_ptr_nonnull(strstr(flags, "DIRTY"));
	ck_assert_ptr_nonnull(strstr(flags, "UPTODATE"));
	ck_assert_ptr_null(strstr(flags, "LOCKED"));
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_flush(p), 0);
	ck_assert_uint_eq(bt_flags_of(p, pg) & BP_F_DIRTY, 0);


	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.creates, 1);
	ck_assert_uint_eq(s.writes, 1);
	ck_assert_uint_eq(s.fsyncs, 1);
	ck_assert_uint_eq(s.nframes, 8);
	ck_assert_uint_eq(s.policy, FWAIT_WAKE_ALL);
	ck_assert_uint_ge(s.pool_bytes, 8 * 4096);
	ck_assert_ptr_nonnull(bp_fwait_table(p));
	for (int fmt = 0; fmt <= BP_STATS_JSON_COMPACT; fmt++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		ck_assert_ptr_nonnull(m);
		ck_assert_int_eq(bp_stats_print(&s, file_write, m, (enum bp_stats_format)fmt), 0);
		fclose(m);
		ck_assert_ptr_nonnull(strstr(buf, "writes"));
		ck_assert_ptr_nonnull(strstr(buf, "latch_exclusive"));
		ck_assert_ptr_nonnull(strstr(buf, "wake-all"));
		if (fmt == BP_STATS_JSON_COMPACT) {
			/* One line, ending the line. */
			ck_assert_ptr_eq(strchr(buf, '\n'), buf + len - 1);
			ck_assert_ptr_nonnull(strstr(buf, "\"creates\":1,"));
		}
		if (fmt == BP_STATS_JSON) {
			int depth = 0, min = 0;
			for (char *q = buf; *q; q++) {
				depth += (*q == '{' || *q == '[') - (*q == '}' || *q == ']');
				if (depth < min)
					min = depth;
			}
			ck_assert_int_eq(depth, 0);
			ck_assert_int_eq(min, 0);
			ck_assert_ptr_nonnull(strstr(buf, "\"creates\": 1"));
			ck_assert_int_eq(buf[0], '{');
		}
		free(buf);
	}
	/* The writer's error stops the report and is returned. */
	int calls = 0;
	ck_assert_int_eq(bp_stats_print(&s, fail_third_write, &calls, BP_STATS_TABLE), -ENOSPC);
	ck_assert_int_eq(calls, 3);
	ck_assert_int_eq(bp_stats_reset(p), 0);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.writes, 0);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* Creating a page past the end leaves holes below it; they read as zeros,
 * before and after the created page reaches the file. */
START_TEST(holes_read_as_zeros)
{
	struct bp_config c = bt_config(&dir, 4, false);
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	struct bp_frame *f;
	ck_assert_int_eq(bp_get(p, 5, BP_GET_CREATE, &f), 0);
	bt_fill(bp_data(f), bp_page_size(p), 5, 4);
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_uint_eq(bp_page_count(p), 6);
	ck_assert_int_eq(bp_get(p, 2, 0, &f), 0); /* not in the file at all yet */
	const unsigned char *d = bp_data(f);
	for (uint32_t i = 0; i < bp_page_size(p); i++)
		ck_assert_uint_eq(d[i], 0);
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_close(p), 0);
	ck_assert_int_eq(bp_open(&p, &c), 0);
	ck_assert_uint_eq(bp_page_count(p), 6);
	ck_assert_int_eq(bp_get(p, 3, 0, &f), 0);
	ck_assert_uint_eq(((const uint64_t *)bp_data(f))[7], 0);
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_get(p, 5, 0, &f), 0);
	ck_assert(bt_check(bp_data(f), bp_page_size(p), 5, 4));
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_get(p, 6, 0, &f), -ENXIO);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

struct reader_arg {
	struct bp_pool *pool;
	struct bp_frame *frame;
	int rc;
};

static void *shared_reader(void *arg)
{
	struct reader_arg *a = arg;
	a->rc = bp_latch(a->pool, a->frame, BP_LATCH_SHARED);
	if (a->rc == 0)
		a->rc = bp_unlatch(a->pool, a->frame, BP_LATCH_SHARED);
	return NULL;
}

/* The uncontended hit path (get, shared latch, unlatch, release) and the
 * exclusive latch path never touch the fwait table: no bucket lock is taken
 * (slow_waits, slow_wakes), nobody sleeps.  It runs after one reader phase
 * (a reader queued behind an exclusive holder and admitted by its release),
 * which leaves the latch's EPOCH bit set: an idle latch is idle whatever
 * EPOCH is. */
START_TEST(hit_path_skips_the_wait_table)
{
	struct bp_config c = bt_config(&dir, 8, false);
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	uint64_t pg;
	struct bp_frame *f;
	ck_assert_int_eq(bp_new_page(p, &pg, &f), 0);
	ck_assert_int_eq(bp_latch(p, f, BP_LATCH_EXCLUSIVE), 0);
	struct reader_arg r = { p, f, -1 };
	pthread_t tid;
	th_spawn(&tid, shared_reader, &r);
	ck_assert_msg(th_wait_parked(bp_fwait_table(p), 1, BT_DEADLINE_MS), "reader never parked");
	ck_assert_int_eq(bp_unlatch(p, f, BP_LATCH_EXCLUSIVE), 0);
	th_join_all(&tid, 1, BT_DEADLINE_MS, "reader", bp_fwait_table(p));
	ck_assert_int_eq(r.rc, 0);
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_stats_reset(p), 0);
	for (unsigned i = 0; i < 1000; i++) {
		ck_assert_int_eq(bp_get(p, pg, 0, &f), 0);
		enum bp_latch_mode m = i % 2 ? BP_LATCH_SHARED : BP_LATCH_EXCLUSIVE;
		ck_assert_int_eq(bp_latch(p, f, m), 0);
		ck_assert_int_eq(bp_unlatch(p, f, m), 0);
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.hits, 1000);
	ck_assert_uint_eq(s.reads + s.misses, 0);
	ck_assert_uint_eq(s.fwait.slow_waits, 0);
	ck_assert_uint_eq(s.fwait.waits, 0);
	ck_assert_uint_eq(s.fwait.slow_wakes, 0);
	ck_assert_uint_eq(s.fwait.wakeups, 0);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* O_DIRECT: page memory is aligned, so direct I/O round-trips (on a file
 * system without O_DIRECT, bp_open reports open's -EINVAL instead). */
START_TEST(direct_io_round_trip)
{
	struct bp_config c = bt_config(&dir, 4, false);
	c.flags |= BP_OPEN_DIRECT;
	struct bp_pool *p;
	int r = bp_open(&p, &c);
	if (r == -EINVAL)
		return;
	ck_assert_int_eq(r, 0);
	for (uint64_t i = 0; i < 8; i++) { /* 8 pages through 4 frames */
		uint64_t pg;
		struct bp_frame *f;
		ck_assert_int_eq(bp_new_page(p, &pg, &f), 0);
		bt_fill(bp_data(f), bp_page_size(p), pg, 9);
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	for (uint64_t i = 0; i < 8; i++) {
		struct bp_frame *f;
		ck_assert_int_eq(bp_get(p, i, 0, &f), 0);
		ck_assert(bt_check(bp_data(f), bp_page_size(p), i, 9));
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.write_errors + s.read_errors, 0);
	ck_assert_uint_gt(s.evictions, 0);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bufpool basic");
	TCase *tc = tcase_create("basic");
	tcase_add_unchecked_fixture(tc, bt_root_make, bt_root_remove);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, close_writes_dirty_pages);
	tcase_add_test(tc, page_sizes_round_trip);
	tcase_add_test(tc, bad_open_inputs);
	tcase_add_test(tc, refused_config_leaves_the_file_alone);
	tcase_add_test(tc, open_errors_reach_the_log);
	tcase_add_test(tc, silent_without_a_log);
	tcase_add_test(tc, close_logs_the_pinned_frame);
	tcase_add_test(tc, bad_access_inputs);
	tcase_add_test(tc, stats_print_and_frames);
	tcase_add_test(tc, direct_io_round_trip);
	tcase_add_test(tc, hit_path_skips_the_wait_table);
	tcase_add_test(tc, holes_read_as_zeros);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(suite());
}
