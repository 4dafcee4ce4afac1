/* SPDX-License-Identifier: MIT */
/*
 * test_faults.c - bufpool under injected I/O faults: every injected error
 * reaches a caller as a negative errno, no frame stays LOCKED/WRITEBACK, no
 * waiter sleeps forever, failed writes keep their pages dirty, and after the
 * fault clears (and close + reopen) every acknowledged write is there; a
 * failed read of a read-only file never makes the pool write.
 */
#include <check.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fcntl.h>

#include "bp_helpers.h"
#include "../check_run.h"

static struct bt_dir dir;

static void setup(void) { bt_dir_make(&dir); }
static void teardown(void) { bt_dir_remove(&dir); }

static void expect_file(uint64_t npages, uint64_t version)
{
	struct bp_config c = bt_config(&dir, 8, false);
	c.flags &= ~BP_OPEN_CREATE;
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	ck_assert_uint_eq(bp_page_count(p), npages);
	for (uint64_t pg = 0; pg < npages; pg++) {
		struct bp_frame *f;
		ck_assert_int_eq(bp_get(p, pg, 0, &f), 0);
		ck_assert_msg(bt_check(bp_data(f), bp_page_size(p), pg, version),
			      "page %llu lost its version %llu", (unsigned long long)pg,
			      (unsigned long long)version);
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	ck_assert_int_eq(bp_close(p), 0);
}

static void assert_no_io_bits(struct bp_pool *p)
{
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.frames_locked, 0);
	ck_assert_uint_eq(s.frames_writeback, 0);
}

/* bp_close of a pool opened with log as its bp_config.log (bt_log_into);
 * log then holds what this close logged, and only that. */
static int close_logging(struct bp_pool *p, struct bt_log *log)
{
	bt_log_clear(log);
	int rc = bp_close(p);
	fprintf(stderr, "%s", log->text); /* still visible in the test log */
	ck_assert(!log->newline);
	if (log->n)
		ck_assert_int_eq(log->level, BP_LOG_ERROR);
	return rc;
}

struct reader {
	struct bp_pool *pool;
	pthread_barrier_t *start;
	int rc;
	pthread_t tid;
};

static void *reader_fn(void *arg)
{
	struct reader *r = arg;
	struct bp_frame *f;
	pthread_barrier_wait(r->start);
	r->rc = bp_get(r->pool, 2, 0, &f);
	if (r->rc == 0)
		bp_release(r->pool, f);
	return NULL;
}

/* A failing read reaches every concurrent caller as the injected errno;
 * other pages are unaffected; once the fault clears the page reads fine. */
START_TEST(read_error_reaches_every_waiter)
{
	bt_make_file(&dir, 4, 1);
	struct bp_config c = bt_config(&dir, 8, false);
	c.io_latency_us = 2000;
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	struct bp_fault fa = { .op = BP_FAULT_READ, .kind = BP_FAULT_FAIL, .err = EIO,
			       .page_first = 2, .page_count = 1 };
	ck_assert_int_eq(bp_fault_set(p, &fa), 0);
	enum { N = 16 };
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, N);
	struct reader r[N];
	pthread_t tids[N];
	for (unsigned i = 0; i < N; i++) {
		r[i] = (struct reader){ p, &start, 1, 0 };
		th_spawn(&r[i].tid, reader_fn, &r[i]);
		tids[i] = r[i].tid;
	}
	th_join_all(tids, N, BT_DEADLINE_MS, "readers of a failing page", NULL);
	for (unsigned i = 0; i < N; i++)
		ck_assert_int_eq(r[i].rc, -EIO);
	assert_no_io_bits(p);
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_ge(s.read_errors, 1);
	ck_assert_uint_eq(s.read_errors, s.faults_injected);
	ck_assert_uint_eq(s.frames_pinned, 0);
	struct bp_frame *f;
	ck_assert_int_eq(bp_get(p, 1, 0, &f), 0); /* filtered out */
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_fault_clear(p), 0);
	ck_assert_int_eq(bp_get(p, 2, 0, &f), 0);
	ck_assert(bt_check(bp_data(f), bp_page_size(p), 2, 1));
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_close(p), 0);
	pthread_barrier_destroy(&start);
}
END_TEST

/* One-shot read faults of each kind: the caller gets the errno, the next
 * bp_get retries the read and succeeds. */
START_TEST(read_fault_kinds_then_retry)
{
	bt_make_file(&dir, 2, 1);
	struct bp_config c = bt_config(&dir, 8, false);
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	const struct { enum bp_fault_kind kind; int err; int expect; } cases[] = {
		{ BP_FAULT_FAIL, 0, -EIO },
		{ BP_FAULT_FAIL, ENOSPC, -ENOSPC },
		{ BP_FAULT_SHORT, 0, -EIO },
		{ BP_FAULT_SLOW, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_int_eq(bp_evict_all(p), i == 0 ? 0 : 1);
		struct bp_fault fa = { .op = BP_FAULT_READ, .kind = cases[i].kind,
				       .err = cases[i].err, .count = 1, .delay_us = 500 };
		ck_assert_int_eq(bp_fault_set(p, &fa), 0);
		struct bp_frame *f;
		ck_assert_int_eq(bp_get(p, 1, 0, &f), cases[i].expect);
		if (cases[i].expect == 0)
			ck_assert_int_eq(bp_release(p, f), 0);
		assert_no_io_bits(p);
		ck_assert_int_eq(bp_get(p, 1, 0, &f), 0);
		ck_assert(bt_check(bp_data(f), bp_page_size(p), 1, 1));
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.faults_injected, 4);
	ck_assert_uint_eq(s.read_errors, 3);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* Seeded probabilistic read faults: each bp_get returns 0 or -EIO, the
 * errors are exactly the injected faults. */
START_TEST(probabilistic_read_faults)
{
	bt_make_file(&dir, 32, 1);
	struct bp_config c = bt_config(&dir, 40, false);
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	struct bp_fault fa = { .op = BP_FAULT_READ, .kind = BP_FAULT_FAIL,
			       .probability_ppm = 500000, .seed = 42 };
	ck_assert_int_eq(bp_fault_set(p, &fa), 0);
	unsigned errors = 0;
	for (uint64_t pg = 0; pg < 32; pg++) {
		struct bp_frame *f;
		int r = bp_get(p, pg, 0, &f);
		ck_assert(r == 0 || r == -EIO);
		if (r == 0)
			ck_assert_int_eq(bp_release(p, f), 0);
		else
			errors++;
	}
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.faults_injected, errors);
	ck_assert_uint_gt(errors, 0);
	ck_assert_uint_lt(errors, 32);
	assert_no_io_bits(p);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* Writes failing with EIO / ENOSPC / short: bp_flush reports the errno,
 * pages stay dirty, a later flush succeeds once the fault clears, and the
 * data is in the file after reopen. */
START_TEST(write_error_keeps_pages_dirty)
{
	static const char *const names[] = { "EIO", "ENOSPC", "short write" };
	const char *variant = names[_i];
	const struct { enum bp_fault_kind kind; int err; int expect; } cases[] = {
		{ BP_FAULT_FAIL, 0, -EIO },
		{ BP_FAULT_FAIL, ENOSPC, -ENOSPC },
		{ BP_FAULT_SHORT, 0, -EIO },
	};
	int i = _i;
	bt_make_file(&dir, 4, 1);
	struct bp_config c = bt_config(&dir, 8, false);
	struct bp_pool *p;
	bt_int_v(variant, bp_open(&p, &c), ==, 0);
	for (uint64_t pg = 0; pg < 4; pg++) {
		struct bp_frame *f;
		bt_int_v(variant, bp_get(p, pg, 0, &f), ==, 0);
		bt_int_v(variant, bp_latch(p, f, BP_LATCH_EXCLUSIVE), ==, 0);
		bt_fill(bp_data(f), bp_page_size(p), pg, 2);
		bt_int_v(variant, bp_mark_dirty(p, f), ==, 0);
		bt_int_v(variant, bp_unlatch(p, f, BP_LATCH_EXCLUSIVE), ==, 0);
		bt_int_v(variant, bp_release(p, f), ==, 0);
	}
	struct bp_fault fa = { .op = BP_FAULT_WRITE, .kind = cases[i].kind, .err = cases[i].err };
	bt_int_v(variant, bp_fault_set(p, &fa), ==, 0);
	bt_int_v(variant, bp_flush(p), ==, cases[i].expect);
	assert_no_io_bits(p);
	struct bp_stats s;
	bp_stats_init(&s);
	bt_int_v(variant, bp_stats_get(p, &s), ==, 0);
	bt_uint_v(variant, s.frames_dirty, ==, 4);
	bt_uint_v(variant, s.write_errors, ==, 4);
	/* a dirty page whose write fails cannot be evicted */
	bt_int_v(variant, bp_evict_page(p, 0), ==, cases[i].expect);
	bt_int_v(variant, bp_evict_all(p), ==, cases[i].expect);
	bt_int_v(variant, bp_fault_clear(p), ==, 0);
	bt_int_v(variant, bp_flush(p), ==, 0);
	bt_int_v(variant, bp_stats_get(p, &s), ==, 0);
	bt_uint_v(variant, s.frames_dirty, ==, 0);
	bt_int_v(variant, bp_close(p), ==, 0);
	expect_file(4, 2);
}
END_TEST

/* All frames dirty and every write failing: bp_get gives -EBUSY instead of
 * hanging; after the fault clears it works and nothing was lost. */
START_TEST(failing_writes_do_not_hang_eviction)
{
	struct bp_config c = bt_config(&dir, 4, false);
	c.flags |= BP_OPEN_TRUNCATE;
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	for (unsigned i = 0; i < 4; i++) {
		uint64_t pg;
		struct bp_frame *f;
		ck_assert_int_eq(bp_new_page(p, &pg, &f), 0);
		bt_fill(bp_data(f), bp_page_size(p), pg, 5);
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	struct bp_fault fa = { .op = BP_FAULT_WRITE, .kind = BP_FAULT_FAIL, .err = ENOSPC };
	ck_assert_int_eq(bp_fault_set(p, &fa), 0);
	struct bp_frame *f;
	ck_assert_int_eq(bp_get(p, 4, BP_GET_CREATE, &f), -EBUSY);
	assert_no_io_bits(p);
	ck_assert_int_eq(bp_flush(p), -ENOSPC);
	ck_assert_int_eq(bp_fault_clear(p), 0);
	ck_assert_int_eq(bp_get(p, 4, BP_GET_CREATE, &f), 0);
	bt_fill(bp_data(f), bp_page_size(p), 4, 5);
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_close(p), 0);
	expect_file(5, 5);
}
END_TEST

/* A failed fsync is sticky (PostgreSQL-style): every later bp_flush and
 * bp_close returns its error, even once the fault is gone and the next
 * fsync succeeds, because pages written before it may be lost on disk while
 * the pool holds them clean.  bp_close still writes the dirty pages, keeps
 * the pool open and says why no close can succeed; bp_discard frees it; the
 * file reopened is a fresh start.  (Before, the second bp_flush returned 0
 * and the close succeeded: "reported once, then lost".) */
START_TEST(fsync_failure_is_sticky)
{
	bt_make_file(&dir, 3, 1);
	struct bp_config c = bt_config(&dir, 8, false);
	struct bt_log log;
	bt_log_into(&c, &log);
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	ck_assert_int_eq(bp_durability_err(p), 0);
	struct bp_fault fa = { .op = BP_FAULT_FSYNC, .kind = BP_FAULT_FAIL, .count = 1 };
	ck_assert_int_eq(bp_fault_set(p, &fa), 0);
	ck_assert_int_eq(bp_flush(p), -EIO);
	ck_assert_int_eq(bp_durability_err(p), -EIO);
	ck_assert_int_eq(bp_flush(p), -EIO); /* one-shot fault gone: still -EIO */
	/* The pool still works: a page rewritten (version 2) is written by
	 * the failing close, so it is in the file after the discard. */
	struct bp_frame *f;
	ck_assert_int_eq(bp_get(p, 1, 0, &f), 0);
	ck_assert_int_eq(bp_latch(p, f, BP_LATCH_EXCLUSIVE), 0);
	bt_fill(bp_data(f), bp_page_size(p), 1, 2);
	ck_assert_int_eq(bp_mark_dirty(p, f), 0);
	ck_assert_int_eq(bp_unlatch(p, f, BP_LATCH_EXCLUSIVE), 0);
	ck_assert_int_eq(bp_release(p, f), 0);
	fa.err = ENOSPC; /* a second failure: the first one is what is kept */
	ck_assert_int_eq(bp_fault_set(p, &fa), 0);
	ck_assert_int_eq(close_logging(p, &log), -EIO); /* pool kept open */
	ck_assert_msg(log.n == 1 && strstr(log.text, "fsync failed") &&
		      strstr(log.text, "bp_discard") && !strstr(log.text, "write-back"),
		      "close message: %s", log.text);
	ck_assert_int_eq(bp_close(p), -EIO);    /* no retry can succeed */
	struct bp_stats st;
	bp_stats_init(&st);
	ck_assert_int_eq(bp_stats_get(p, &st), 0);
	ck_assert_int_eq(st.durability_err, -EIO);
	ck_assert_uint_eq(st.fsync_errors, 2);
	ck_assert_uint_eq(st.frames_dirty, 0);  /* the close wrote page 1 */
	ck_assert_int_eq(bp_discard(p), 0);

	/* Reopened: a new pool, durable again; page 1 has version 2. */
	ck_assert_int_eq(bp_open(&p, &c), 0);
	ck_assert_int_eq(bp_durability_err(p), 0);
	ck_assert_int_eq(bp_get(p, 1, 0, &f), 0);
	ck_assert(bt_check(bp_data(f), bp_page_size(p), 1, 2));
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_flush(p), 0);
	ck_assert_int_eq(bp_close(p), 0);
	ck_assert_int_eq(bp_durability_err(NULL), -EINVAL);
}
END_TEST

/* Two flushes at once while fsyncs fail now and then: once any flush has
 * returned an fsync error, no later flush returns 0 (fsync_lock orders the
 * report; without it a flush could read the sticky state before a
 * concurrent failing fsync recorded it). */
struct flusher {
	struct bp_pool *pool;
	_Atomic bool *failed_seen;
	int bad;       /* a 0 returned after failed_seen was set */
	pthread_t tid;
};

static void *flusher_fn(void *arg)
{
	struct flusher *fl = arg;
	for (int i = 0; i < 200; i++) {
		bool before = atomic_load(fl->failed_seen);
		int r = bp_flush(fl->pool);
		if (r == -EIO)
			atomic_store(fl->failed_seen, true);
		else if (r == 0 && before)
			fl->bad++;
	}
	return NULL;
}

START_TEST(concurrent_flushes_never_forget_an_fsync_failure)
{
	bt_make_file(&dir, 2, 1);
	struct bp_config c = bt_config(&dir, 8, false);
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	struct bp_fault fa = { .op = BP_FAULT_FSYNC, .kind = BP_FAULT_FAIL,
			       .probability_ppm = 50000, .seed = 7 };
	ck_assert_int_eq(bp_fault_set(p, &fa), 0);
	_Atomic bool failed_seen = false;
	struct flusher fl[2] = { { p, &failed_seen, 0, 0 }, { p, &failed_seen, 0, 0 } };
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&fl[i].tid, NULL, flusher_fn, &fl[i]), 0);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_join(fl[i].tid, NULL), 0);
	ck_assert_msg(atomic_load(&failed_seen), "no fsync fault fired in 400 flushes");
	ck_assert_int_eq(fl[0].bad + fl[1].bad, 0);
	ck_assert_int_eq(bp_durability_err(p), -EIO);
	ck_assert_int_eq(bp_fault_clear(p), 0);
	ck_assert_int_eq(bp_flush(p), -EIO);
	ck_assert_int_eq(bp_discard(p), 0);
}
END_TEST

/* Page 0 rewritten with version 2, dirty and unpinned. */
static void dirty_page0_with_version2(struct bp_pool *p)
{
	struct bp_frame *f;
	ck_assert_int_eq(bp_get(p, 0, 0, &f), 0);
	ck_assert_int_eq(bp_latch(p, f, BP_LATCH_EXCLUSIVE), 0);
	bt_fill(bp_data(f), bp_page_size(p), 0, 2);
	ck_assert_int_eq(bp_mark_dirty(p, f), 0);
	ck_assert_int_eq(bp_unlatch(p, f, BP_LATCH_EXCLUSIVE), 0);
	ck_assert_int_eq(bp_release(p, f), 0);
}

/* A write error at close is reported by bp_close, which keeps the pool (and
 * its dirty page) open: once the fault clears, a second close writes it. */
START_TEST(write_error_reaches_close)
{
	bt_make_file(&dir, 2, 1);
	struct bp_config c = bt_config(&dir, 8, false);
	struct bt_log log;
	bt_log_into(&c, &log);
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	struct bp_frame *f;
	dirty_page0_with_version2(p);
	struct bp_fault fa = { .op = BP_FAULT_WRITE, .kind = BP_FAULT_FAIL, .err = ENOSPC };
	ck_assert_int_eq(bp_fault_set(p, &fa), 0);
	ck_assert_int_eq(close_logging(p, &log), -ENOSPC);
	ck_assert_msg(log.n == 1 && strstr(log.text, "dirty pages kept") &&
		      !strstr(log.text, "fsync"), "close message: %s", log.text);
	/* still open, page still dirty and readable */
	struct bp_stats st;
	bp_stats_init(&st);
	ck_assert_int_eq(bp_stats_get(p, &st), 0);
	ck_assert_uint_eq(st.frames_dirty, 1);
	ck_assert_int_eq(bp_get(p, 0, 0, &f), 0);
	ck_assert(bt_check(bp_data(f), bp_page_size(p), 0, 2));
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_fault_clear(p), 0);
	ck_assert_int_eq(bp_close(p), 0);
	ck_assert_int_eq(bp_open(&p, &c), 0);
	ck_assert_int_eq(bp_get(p, 0, 0, &f), 0);
	ck_assert(bt_check(bp_data(f), bp_page_size(p), 0, 2));
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* A write error that is stale by close time: a clock sweep's write-back of
 * page 0 fails once (the sweep does not report it), the next one succeeds,
 * so at bp_close nothing is dirty.  bp_close still returns the error (each
 * write error is reported once) and leaves the pool open, but its message
 * says a write-back failed earlier, not "fsync failed" (it used to blame
 * fsync, having found no dirty page).  A second close succeeds. */
START_TEST(stale_write_error_at_close_is_not_fsync)
{
	bt_make_file(&dir, 3, 1);
	struct bp_config c = bt_config(&dir, 2, false);
	struct bt_log log;
	bt_log_into(&c, &log);
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	dirty_page0_with_version2(p);
	struct bp_frame *held, *f;
	ck_assert_int_eq(bp_get(p, 1, 0, &held), 0); /* the other frame: pinned */
	struct bp_fault fa = { .op = BP_FAULT_WRITE, .kind = BP_FAULT_FAIL, .err = EIO,
			       .count = 1, .page_first = 0, .page_count = 1 };
	ck_assert_int_eq(bp_fault_set(p, &fa), 0);
	/* page 2 needs page 0's frame: written (fails), written again, evicted */
	ck_assert_int_eq(bp_get(p, 2, 0, &f), 0);
	ck_assert(bt_check(bp_data(f), bp_page_size(p), 2, 1));
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_release(p, held), 0);
	struct bp_stats st;
	bp_stats_init(&st);
	ck_assert_int_eq(bp_stats_get(p, &st), 0);
	ck_assert_uint_eq(st.write_errors, 1);
	ck_assert_uint_eq(st.writes, 2);
	ck_assert_uint_eq(st.frames_dirty, 0);
	ck_assert_uint_eq(bt_flags_of(p, 0), UINT32_MAX); /* evicted: it was written */
	ck_assert_int_eq(close_logging(p, &log), -EIO);
	ck_assert_msg(!strstr(log.text, "fsync"), "close message blames fsync: %s", log.text);
	ck_assert_msg(strstr(log.text, "failed earlier") && strstr(log.text, "since been written"),
		      "close message: %s", log.text);
	ck_assert_int_eq(close_logging(p, &log), 0); /* reported once */
	ck_assert_uint_eq(log.n, 0);
	/* the file: page 0 at version 2 (the rewrite), the others at 1 */
	ck_assert_int_eq(bp_open(&p, &c), 0);
	for (uint64_t pg = 0; pg < 3; pg++) {
		ck_assert_int_eq(bp_get(p, pg, 0, &f), 0);
		ck_assert(bt_check(bp_data(f), bp_page_size(p), pg, pg == 0 ? 2 : 1));
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* Giving up: bp_discard frees a pool whose close failed; the file keeps
 * what it had (the unwritten page is lost, as documented). */
START_TEST(discard_after_failed_close)
{
	bt_make_file(&dir, 2, 1);
	struct bp_config c = bt_config(&dir, 8, false);
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	dirty_page0_with_version2(p);
	struct bp_frame *f;
	ck_assert_int_eq(bp_get(p, 0, 0, &f), 0);
	ck_assert_int_eq(bp_discard(p), -EBUSY); /* still pinned */
	ck_assert_int_eq(bp_release(p, f), 0);
	struct bp_fault fa = { .op = BP_FAULT_WRITE, .kind = BP_FAULT_FAIL, .err = EIO };
	ck_assert_int_eq(bp_fault_set(p, &fa), 0);
	ck_assert_int_eq(bp_close(p), -EIO);
	ck_assert_int_eq(bp_discard(p), 0);
	ck_assert_int_eq(bp_discard(NULL), -EINVAL);
	expect_file(2, 1);
}
END_TEST

/* The whole of the file at path, malloc'd; its length in *len. */
static char *file_bytes(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	*len = (size_t)st.st_size;
	char *b = malloc(*len + 1);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(pread(fd, b, *len, 0), (ssize_t)*len);
	close(fd);
	return b;
}

/* BP_GET_OVERWRITE on a read-only file is -EROFS when the page is resident
 * in ERROR after a failed read, as when it is not resident.  It used to
 * zero and dirty the page there: every flush and close then failed with
 * -EBADF, the frame was never evictable, and a read-only pool wrote.
 * _i = 0: a read-only pool (file 0); _i = 1: a read-only bp_file of a
 * writable pool.  Nothing is dirtied, the page reads back once the fault
 * is gone, the close succeeds and the file is unchanged byte for byte. */
START_TEST(overwrite_after_failed_read_of_read_only_file_is_erofs)
{
	const char *variant = _i == 0 ? "read-only pool" : "read-only bp_file";
	enum { NPG = 4, PG = 2 };
	bool ro_pool = _i == 0;
	struct bt_dir other;
	bt_dir_make(&other);
	const struct bt_dir *ro_dir = ro_pool ? &dir : &other;
	bt_make_file(ro_dir, NPG, 1);
	size_t len0, len1;
	char *before = file_bytes(ro_dir->file, &len0);

	struct bp_config c = bt_config(&dir, 8, false);
	if (ro_pool)
		c.flags = (c.flags & ~(unsigned)BP_OPEN_CREATE) | BP_OPEN_READONLY;
	struct bp_pool *p;
	bt_int_v(variant, bp_open(&p, &c), ==, 0);
	struct bp_file *file = bp_pool_file(p);
	if (!ro_pool)
		bt_int_v(variant, bp_file_open(&file, p, other.file, BP_OPEN_READONLY), ==, 0);
	struct bp_fault fa = { .op = BP_FAULT_READ, .kind = BP_FAULT_FAIL, .err = EIO,
			       .count = 1 };
	bt_int_v(variant, bp_fault_set(p, &fa), ==, 0);
	struct bp_frame *f;
	bt_int_v(variant, bp_file_get(file, PG, 0, &f), ==, -EIO); /* resident, in ERROR */
	bt_int_v(variant, bp_file_get(file, PG, BP_GET_OVERWRITE, &f), ==, -EROFS);
	bt_int_v(variant, bp_file_get(file, PG + 1, BP_GET_OVERWRITE, &f), ==, -EROFS); /* absent */
	struct bp_stats s;
	bp_stats_init(&s);
	bt_int_v(variant, bp_stats_get(p, &s), ==, 0);
	bt_uint_v(variant, s.frames_dirty, ==, 0);
	bt_int_v(variant, bp_flush(p), ==, 0);
	bt_int_v(variant, bp_file_get(file, PG, 0, &f), ==, 0); /* the fault fired once */
	bt_check_v(variant, bt_check(bp_data(f), bp_page_size(p), PG, 1));
	bt_int_v(variant, bp_release(p, f), ==, 0);
	if (!ro_pool)
		bt_int_v(variant, bp_file_close(file), ==, 0);
	bt_int_v(variant, bp_close(p), ==, 0);

	char *after = file_bytes(ro_dir->file, &len1);
	bt_uint_v(variant, len1, ==, len0);
	ck_assert_msg(memcmp(before, after, len0) == 0, "%s: the read-only file was written", variant);
	free(before);
	free(after);
	bt_dir_remove(&other);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bufpool faults");
	TCase *tc = tcase_create("faults");
	tcase_add_unchecked_fixture(tc, bt_root_make, bt_root_remove);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, read_error_reaches_every_waiter);
	tcase_add_test(tc, read_fault_kinds_then_retry);
	tcase_add_test(tc, probabilistic_read_faults);
	tcase_add_loop_test(tc, write_error_keeps_pages_dirty, 0, 3);
	tcase_add_test(tc, failing_writes_do_not_hang_eviction);
	tcase_add_test(tc, fsync_failure_is_sticky);
	tcase_add_test(tc, concurrent_flushes_never_forget_an_fsync_failure);
	tcase_add_test(tc, write_error_reaches_close);
	tcase_add_test(tc, stale_write_error_at_close_is_not_fsync);
	tcase_add_test(tc, discard_after_failed_close);
	tcase_add_loop_test(tc, overwrite_after_failed_read_of_read_only_file_is_erofs, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(suite());
}
