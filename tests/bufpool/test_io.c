/* SPDX-License-Identifier: MIT */
/*
 * test_io.c - bufpool reads and write-back under concurrency: one read for
 * many concurrent readers of an absent page, write-back never overlapping a
 * modification, every frame pinned gives -EBUSY (and bp_get_timed waits
 * for an unpin), readahead.
 */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bp_helpers.h"
#include "../check_run.h"

static struct bt_dir dir;

static void setup(void) { bt_dir_make(&dir); }
static void teardown(void) { bt_dir_remove(&dir); }

struct reader {
	struct bp_pool *pool;
	pthread_barrier_t *start;
	uint64_t pageno;
	struct bp_frame *frame;
	int rc;
	bool data_ok;
	pthread_t tid;
};

static void *reader_fn(void *arg)
{
	struct reader *r = arg;
	pthread_barrier_wait(r->start);
	r->rc = bp_get(r->pool, r->pageno, 0, &r->frame);
	if (r->rc == 0) {
		bp_latch(r->pool, r->frame, BP_LATCH_SHARED);
		r->data_ok = bt_check(bp_data(r->frame), bp_page_size(r->pool), r->pageno, 1);
		bp_unlatch(r->pool, r->frame, BP_LATCH_SHARED);
	}
	return NULL;
}

/* Many threads ask for one absent page at once: exactly one read. */
START_TEST(one_read_for_concurrent_readers)
{
	bt_make_file(&dir, 4, 1);
	struct bp_config c = bt_config(&dir, 16, false);
	c.io_latency_us = 20000; /* keep the read in flight while others arrive */
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	enum { N = 64 };
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, N);
	static struct reader r[N];
	pthread_t tids[N];
	for (unsigned i = 0; i < N; i++) {
		r[i] = (struct reader){ p, &start, 2, NULL, -1, false, 0 };
		th_spawn(&r[i].tid, reader_fn, &r[i]);
		tids[i] = r[i].tid;
	}
	th_join_all(tids, N, BT_DEADLINE_MS, "readers", NULL);
	for (unsigned i = 0; i < N; i++) {
		ck_assert_int_eq(r[i].rc, 0);
		ck_assert(r[i].data_ok);
		ck_assert_ptr_eq(r[i].frame, r[0].frame);
	}
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.reads, 1);
	ck_assert_uint_eq(s.misses, 1);
	ck_assert_uint_eq(s.hits, N - 1);
	ck_assert_uint_eq(s.frames_pinned, 1);
	ck_assert_uint_eq(s.frames_locked, 0);
	for (unsigned i = 0; i < N; i++)
		ck_assert_int_eq(bp_release(p, r[i].frame), 0);
	ck_assert_int_eq(bp_release(p, r[0].frame), -EINVAL);
	ck_assert_int_eq(bp_close(p), 0);
	pthread_barrier_destroy(&start);
}
END_TEST

/* ---- write-back vs modification ---- */

#define WB_PAGES 4

struct wb_shared {
	struct bp_pool *pool;
	unsigned iters;
	pthread_barrier_t start; /* modifiers and flusher start together */
	atomic_bool stop;
	atomic_uint overlaps;
	atomic_uint errors;
	uint64_t version[WB_PAGES]; /* guarded by the page's exclusive latch */
};

struct wb_worker {
	struct wb_shared *sh;
	unsigned id;
};

static void *modifier_fn(void *arg)
{
	struct wb_worker *w = arg;
	struct wb_shared *sh = w->sh;
	uint32_t ps = bp_page_size(sh->pool);
	pthread_barrier_wait(&sh->start);
	for (unsigned i = 0; i < sh->iters; i++) {
		uint64_t pg = (w->id + i) % WB_PAGES;
		struct bp_frame *f;
		if (bp_get(sh->pool, pg, 0, &f) != 0) {
			atomic_fetch_add(&sh->errors, 1);
			continue;
		}
		bp_latch(sh->pool, f, BP_LATCH_EXCLUSIVE);
		if (bt_flags_of(sh->pool, pg) & BP_F_WRITEBACK)
			atomic_fetch_add(&sh->overlaps, 1);
		uint64_t v = ++sh->version[pg];
		bt_fill(bp_data(f), ps, pg, v);
		sched_yield();
		if (bt_flags_of(sh->pool, pg) & BP_F_WRITEBACK)
			atomic_fetch_add(&sh->overlaps, 1);
		bp_mark_dirty(sh->pool, f);
		bp_unlatch(sh->pool, f, BP_LATCH_EXCLUSIVE);
		bp_release(sh->pool, f);
	}
	return NULL;
}

static void *flusher_fn(void *arg)
{
	struct wb_shared *sh = arg;
	pthread_barrier_wait(&sh->start);
	do {
		if (bp_flush(sh->pool) != 0)
			atomic_fetch_add(&sh->errors, 1);
	} while (!atomic_load(&sh->stop));
	return NULL;
}

/* Writers (background writer + a bp_flush loop, writes made slow) never
 * write a page while a modifier holds it exclusive, and the file ends with
 * every page's last version, untorn. */
START_TEST(writeback_never_overlaps_modification)
{
	bt_make_file(&dir, WB_PAGES, 1);
	struct bp_config c = bt_config(&dir, 8, true);
	c.writer_interval_ms = 1;
	struct wb_shared sh;
	memset(&sh, 0, sizeof(sh));
	sh.iters = th_scaled(300, 60);
	for (unsigned i = 0; i < WB_PAGES; i++)
		sh.version[i] = 1;
	ck_assert_int_eq(bp_open(&sh.pool, &c), 0);
	struct bp_fault slow = { .op = BP_FAULT_WRITE, .kind = BP_FAULT_SLOW, .delay_us = 200 };
	ck_assert_int_eq(bp_fault_set(sh.pool, &slow), 0);
	enum { NMOD = 6 };
	pthread_barrier_init(&sh.start, NULL, NMOD + 1);
	struct wb_worker w[NMOD];
	pthread_t mods[NMOD], flusher;
	th_spawn(&flusher, flusher_fn, &sh);
	for (unsigned i = 0; i < NMOD; i++) {
		w[i] = (struct wb_worker){ &sh, i };
		th_spawn(&mods[i], modifier_fn, &w[i]);
	}
	th_join_all(mods, NMOD, BT_DEADLINE_MS, "modifiers", NULL);
	atomic_store(&sh.stop, true);
	th_join_all(&flusher, 1, BT_DEADLINE_MS, "flusher", NULL);
	ck_assert_uint_eq(atomic_load(&sh.errors), 0);
	ck_assert_uint_eq(atomic_load(&sh.overlaps), 0);
	ck_assert_int_eq(bp_flush(sh.pool), 0);
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(sh.pool, &s), 0);
	ck_assert_uint_gt(s.writes, 0);
	ck_assert_int_eq(bp_close(sh.pool), 0);
	pthread_barrier_destroy(&sh.start);

	/* reopen: every page holds its last version, whole */
	c = bt_config(&dir, 8, false);
	ck_assert_int_eq(bp_open(&sh.pool, &c), 0);
	for (uint64_t pg = 0; pg < WB_PAGES; pg++) {
		struct bp_frame *f;
		ck_assert_int_eq(bp_get(sh.pool, pg, 0, &f), 0);
		ck_assert_msg(bt_check(bp_data(f), bp_page_size(sh.pool), pg, sh.version[pg]),
			      "page %llu is not version %llu", (unsigned long long)pg,
			      (unsigned long long)sh.version[pg]);
		ck_assert_int_eq(bp_release(sh.pool, f), 0);
	}
	ck_assert_int_eq(bp_close(sh.pool), 0);
}
END_TEST

/* ---- every frame pinned ---- */

struct timed_get {
	struct bp_pool *pool;
	int rc;
	struct bp_frame *frame;
	bool new_page; /* bp_new_page_timed, not bp_get_timed of page 6 */
	uint64_t pageno;
};

static void *timed_get_fn(void *arg)
{
	struct timed_get *g = arg;
	if (g->new_page)
		g->rc = bp_new_page_timed(g->pool, NULL, &g->pageno, &g->frame);
	else
		g->rc = bp_get_timed(g->pool, 6, BP_GET_CREATE, NULL, &g->frame);
	return NULL;
}

START_TEST(all_frames_pinned_is_ebusy)
{
	struct bp_config c = bt_config(&dir, 4, false);
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	struct bp_frame *f[4], *g;
	for (unsigned i = 0; i < 4; i++)
		ck_assert_int_eq(bp_get(p, i, BP_GET_CREATE, &f[i]), 0);
	ck_assert_int_eq(bp_get(p, 4, BP_GET_CREATE, &g), -EBUSY);
	uint64_t pg;
	ck_assert_int_eq(bp_new_page(p, &pg, &g), -EBUSY);
	struct timespec dl = fwait_deadline_after_ns(20u * 1000u * 1000u);
	ck_assert_int_eq(bp_get_timed(p, 5, BP_GET_CREATE, &dl, &g), -EBUSY);
	dl = fwait_deadline_after_ns(20u * 1000u * 1000u);
	ck_assert_int_eq(bp_new_page_timed(p, &dl, &pg, &g), -EBUSY);
	/* a malformed deadline is refused, not spun on */
	struct timespec bad = { .tv_sec = 1, .tv_nsec = 1000000000L };
	ck_assert_int_eq(bp_get_timed(p, 5, BP_GET_CREATE, &bad, &g), -EINVAL);
	ck_assert_int_eq(bp_new_page_timed(p, &bad, &pg, &g), -EINVAL);
	bad = (struct timespec){ .tv_sec = -1, .tv_nsec = 0 };
	ck_assert_int_eq(bp_get_timed(p, 5, BP_GET_CREATE, &bad, &g), -EINVAL);
	ck_assert_int_eq(bp_new_page_timed(p, &bad, &pg, &g), -EINVAL);
	/* a resident page is still a hit */
	ck_assert_int_eq(bp_get(p, 1, 0, &g), 0);
	ck_assert_ptr_eq(g, f[1]);
	ck_assert_int_eq(bp_release(p, g), 0);
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.busy, 4);
	ck_assert_uint_eq(s.frames_pinned, 4);

	/* bp_get_timed without deadline waits for an unpin */
	struct timed_get tg = { p, -1, NULL, false, 0 };
	pthread_t tid;
	th_spawn(&tid, timed_get_fn, &tg);
	ck_assert(th_wait_parked(bp_fwait_table(p), 1, BT_DEADLINE_MS));
	ck_assert_int_eq(bp_release(p, f[0]), 0);
	th_join_all(&tid, 1, BT_DEADLINE_MS, "timed getter", NULL);
	ck_assert_int_eq(tg.rc, 0);
	ck_assert_uint_eq(bp_frame_pageno(tg.frame), 6);
	/* and so does bp_new_page_timed (the page is pinned again: all 4 are) */
	struct timed_get tn = { p, -1, NULL, true, 0 };
	th_spawn(&tid, timed_get_fn, &tn);
	ck_assert(th_wait_parked(bp_fwait_table(p), 1, BT_DEADLINE_MS));
	ck_assert_int_eq(bp_release(p, tg.frame), 0);
	th_join_all(&tid, 1, BT_DEADLINE_MS, "timed page creator", NULL);
	ck_assert_int_eq(tn.rc, 0);
	ck_assert_uint_eq(tn.pageno, 7);
	ck_assert_uint_eq(bp_frame_pageno(tn.frame), 7);
	ck_assert_int_eq(bp_release(p, tn.frame), 0);
	for (unsigned i = 1; i < 4; i++)
		ck_assert_int_eq(bp_release(p, f[i]), 0);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	/* the two timed-out waits and these two */
	ck_assert_uint_eq(s.frame_wait.count, 4);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

struct far_get {
	struct bp_pool *pool;
	struct timespec dl;
	_Atomic bool *released; /* set by main just before it unpins a frame */
	int rc;
	bool saw_release;       /* *released when bp_get_timed returned */
	struct bp_frame *frame;
};

static void *far_get_fn(void *arg)
{
	struct far_get *g = arg;
	g->rc = bp_get_timed(g->pool, 6, BP_GET_CREATE, &g->dl, &g->frame);
	g->saw_release = atomic_load(g->released);
	return NULL;
}

/* A far-future deadline keeps bp_get_timed waiting for an unpin: it
 * returns the page only after main unpins a frame (the flag is set before
 * the unpin).  Loop index: the deadline, _i = 0: 18446744074 s (past 2^64
 * ns); 1: 2^62 s; 2: fwait_deadline_after_ns(UINT64_MAX).  The clock
 * helper used to wrap them into the past, so the claim gave up with
 * -EBUSY at its first deadline check, after the first wait. */
START_TEST(far_deadline_keeps_waiting)
{
	static const char *const names[] = { "18446744074 s", "2^62 s",
					     "fwait_deadline_after_ns(UINT64_MAX)" };
	const char *variant = names[_i];
	struct bp_config c = bt_config(&dir, 4, false);
	struct bp_pool *p;
	bt_int_v(variant, bp_open(&p, &c), ==, 0);
	struct bp_frame *f[4];
	for (unsigned i = 0; i < 4; i++)
		bt_int_v(variant, bp_get(p, i, BP_GET_CREATE, &f[i]), ==, 0);
	const struct timespec far[] = {
		{ .tv_sec = 18446744074, .tv_nsec = 0 },
		{ .tv_sec = (time_t)1 << 62, .tv_nsec = 0 },
		fwait_deadline_after_ns(UINT64_MAX),
	};
	_Atomic bool released = false;
	struct far_get g = { p, far[_i], &released, 1, false, NULL };
	pthread_t tid;
	th_spawn(&tid, far_get_fn, &g);
	bt_check_v(variant, th_wait_parked(bp_fwait_table(p), 1, BT_DEADLINE_MS));
	atomic_store(&released, true);
	bt_int_v(variant, bp_release(p, f[0]), ==, 0);
	th_join_all(&tid, 1, BT_DEADLINE_MS, "a getter with a far deadline", bp_fwait_table(p));
	bt_int_v(variant, g.rc, ==, 0);
	bt_check_v(variant, g.saw_release);
	bt_uint_v(variant, bp_frame_pageno(g.frame), ==, 6);
	bt_int_v(variant, bp_release(p, g.frame), ==, 0);
	for (unsigned i = 1; i < 4; i++)
		bt_int_v(variant, bp_release(p, f[i]), ==, 0);
	bt_int_v(variant, bp_close(p), ==, 0);
}
END_TEST

/* ---- frames busy with I/O ---- */

struct slow_reader {
	struct bp_pool *pool;
	uint64_t pageno;
	int rc;
	struct bp_frame *frame;
};

static void *slow_reader_fn(void *arg)
{
	struct slow_reader *r = arg;
	r->rc = bp_get(r->pool, r->pageno, 0, &r->frame);
	return NULL;
}

#define SLOW_READ_US 2500000u /* keeps the frames LOCKED well past the old 800 ms */

/* Two frames pinned by the test, the other two LOCKED by slow reads: a
 * bp_get_timed of another page with a 10 ms deadline gives -EBUSY at about
 * its deadline.  (It used to wait 50 ms per round for the reads, 16 rounds:
 * ~800 ms.)  Untimed bp_get keeps its own bound: -EBUSY, not a hang. */
START_TEST(timed_get_deadline_bounds_io_waits)
{
	bt_make_file(&dir, 8, 1);
	struct bp_config c = bt_config(&dir, 4, false);
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	struct bp_frame *held[2];
	for (unsigned i = 0; i < 2; i++)
		ck_assert_int_eq(bp_get(p, i, 0, &held[i]), 0);
	struct bp_fault slow = { .op = BP_FAULT_READ, .kind = BP_FAULT_SLOW,
				 .delay_us = SLOW_READ_US, .page_first = 2, .page_count = 2 };
	ck_assert_int_eq(bp_fault_set(p, &slow), 0);
	struct slow_reader r[2];
	pthread_t tids[2];
	for (unsigned i = 0; i < 2; i++) {
		r[i] = (struct slow_reader){ p, 2 + i, -1, NULL };
		th_spawn(&tids[i], slow_reader_fn, &r[i]);
	}
	/* both readers wait on their frame's LOCKED: every frame is busy */
	ck_assert(th_wait_parked(bp_fwait_table(p), 2, BT_DEADLINE_MS));
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.frames_locked, 2);

	struct bp_frame *g;
	uint64_t t0 = util_now_ns();
	struct timespec dl = fwait_deadline_after_ns(10u * 1000u * 1000u);
	int rc = bp_get_timed(p, 5, 0, &dl, &g);
	uint64_t timed_ms = (util_now_ns() - t0) / 1000000u;
	/* a deadline already passed: one sweep, no wait */
	struct timespec past = fwait_deadline_after_ns(0);
	t0 = util_now_ns();
	int rc_past = bp_get_timed(p, 6, 0, &past, &g);
	uint64_t past_ms = (util_now_ns() - t0) / 1000000u;
	/* untimed bp_get: still bounded (rounds of 50 ms), still -EBUSY */
	t0 = util_now_ns();
	int rc_untimed = bp_get(p, 7, 0, &g);
	uint64_t untimed_ms = (util_now_ns() - t0) / 1000000u;
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	uint32_t locked_after = s.frames_locked;

	th_join_all(tids, 2, BT_DEADLINE_MS, "slow readers", bp_fwait_table(p));
	fprintf(stderr, "busy frames: bp_get_timed 10 ms deadline %llu ms, past deadline "
		"%llu ms, untimed bp_get %llu ms\n", (unsigned long long)timed_ms,
		(unsigned long long)past_ms, (unsigned long long)untimed_ms);
	ck_assert_int_eq(rc, -EBUSY);
	ck_assert_msg(timed_ms < 400, "bp_get_timed with a 10 ms deadline took %llu ms",
		      (unsigned long long)timed_ms);
	ck_assert_int_eq(rc_past, -EBUSY);
	ck_assert_msg(past_ms < 400, "bp_get_timed with a past deadline took %llu ms",
		      (unsigned long long)past_ms);
	ck_assert_int_eq(rc_untimed, -EBUSY);
	ck_assert_msg(locked_after == 2, "the slow reads ended during the measurement "
		      "(%u frames still LOCKED): the timings above prove nothing", locked_after);
	ck_assert_msg(untimed_ms < 10000, "untimed bp_get took %llu ms",
		      (unsigned long long)untimed_ms);
	for (unsigned i = 0; i < 2; i++) {
		ck_assert_int_eq(r[i].rc, 0);
		ck_assert(bt_check(bp_data(r[i].frame), bp_page_size(p), 2 + i, 1));
		ck_assert_int_eq(bp_release(p, r[i].frame), 0);
		ck_assert_int_eq(bp_release(p, held[i]), 0);
	}
	/* once frames are free again the same call succeeds */
	dl = fwait_deadline_after_ns(10u * 1000u * 1000u);
	ck_assert_int_eq(bp_get_timed(p, 5, 0, &dl, &g), 0);
	ck_assert(bt_check(bp_data(g), bp_page_size(p), 5, 1));
	ck_assert_int_eq(bp_release(p, g), 0);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* A sequential scan reads ahead: reads are submitted for pages not yet
 * asked for, and every page still reads back right. */
START_TEST(sequential_scan_reads_ahead)
{
	bt_make_file(&dir, 64, 1);
	struct bp_config c = bt_config(&dir, 32, false);
	c.flags &= ~BP_OPEN_NO_READAHEAD;
	c.readahead_pages = 4;
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	for (uint64_t pg = 0; pg < 64; pg++) {
		struct bp_frame *f;
		ck_assert_int_eq(bp_get(p, pg, 0, &f), 0);
		ck_assert(bt_check(bp_data(f), bp_page_size(p), pg, 1));
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_gt(s.readaheads, 0);
	ck_assert_uint_eq(s.misses + s.readaheads, s.reads);
	ck_assert_uint_lt(s.misses, 64);
	ck_assert_uint_eq(s.hits + s.misses, 64);
	/* Each readahead's pages are adjacent: one read I/O (readv) for
	 * them, beside each miss's own. */
	ck_assert_uint_lt(s.read_ios, s.reads);
	ck_assert_uint_le(s.read_ios, 2 * s.misses);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* Readahead runs over pages past the end of the file (created, never
 * written: holes) and with page checksums: the readv comes back short,
 * and every page still reads right, the holes as zeros. */
START_TEST(readahead_runs_short_and_checksummed)
{
	struct bp_config c = bt_config(&dir, 64, false);
	c.flags &= ~BP_OPEN_NO_READAHEAD;
	c.flags |= BP_OPEN_CHECKSUMS;
	c.readahead_pages = 8;
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	uint32_t ds = bp_data_size(p);
	/* Pages 0-19 written; then page 39 created and kept in memory, so
	 * pages 20-38 are below the page count but past the end of the
	 * file: a readv over them comes back short (or empty). */
	for (uint64_t i = 0; i < 20; i++) {
		struct bp_frame *f;
		ck_assert_int_eq(bp_get(p, i, BP_GET_CREATE, &f), 0);
		bp_latch(p, f, BP_LATCH_EXCLUSIVE);
		bt_fill(bp_data(f), ds, i, 5);
		bp_mark_dirty(p, f);
		bp_unlatch(p, f, BP_LATCH_EXCLUSIVE);
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	ck_assert_int_eq(bp_flush(p), 0);
	ck_assert_int_eq(bp_evict_all(p), 20);
	struct bp_frame *last;
	ck_assert_int_eq(bp_get(p, 39, BP_GET_CREATE, &last), 0);
	ck_assert_int_eq(bp_stats_reset(p), 0);
	static const unsigned char zero[4096];
	for (uint64_t i = 0; i < 39; i++) {
		struct bp_frame *f;
		ck_assert_int_eq(bp_get(p, i, 0, &f), 0);
		if (i < 20)
			ck_assert(bt_check(bp_data(f), ds, i, 5));
		else
			ck_assert_int_eq(memcmp(bp_data(f), zero, ds), 0);
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_gt(s.readaheads, 0);
	ck_assert_uint_lt(s.read_ios, s.reads);
	ck_assert_uint_eq(s.read_errors, 0);
	ck_assert_uint_eq(s.checksum_errors, 0);
	ck_assert_int_eq(bp_release(p, last), 0);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* Three sequential scans interleaved page by page (one thread, so the
 * order is fixed): each is followed as a stream of its own and gets its
 * readahead; one detector for the file would see no sequential miss at
 * all. */
START_TEST(interleaved_scans_each_read_ahead)
{
	enum { NSCAN = 3, LEN = 100, GAP = 300 };
	bt_make_file(&dir, NSCAN * GAP, 1);
	struct bp_config c = bt_config(&dir, 64, false);
	c.flags &= ~BP_OPEN_NO_READAHEAD;
	c.readahead_pages = 4;
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	for (uint64_t i = 0; i < LEN; i++) {
		for (uint64_t k = 0; k < NSCAN; k++) {
			uint64_t pg = k * GAP + i;
			struct bp_frame *f;
			ck_assert_int_eq(bp_get(p, pg, 0, &f), 0);
			ck_assert(bt_check(bp_data(f), bp_page_size(p), pg, 1));
			ck_assert_int_eq(bp_release(p, f), 0);
		}
	}
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	/* Per scan: a miss or two to start, then one per 5 pages (it
	 * reads 4 ahead); one detector for the file: 300 misses. */
	ck_assert_uint_le(s.misses, NSCAN * (3 + LEN / 5));
	ck_assert_uint_ge(s.readaheads, NSCAN * (LEN - 3 - LEN / 5));
	ck_assert_uint_eq(s.misses + s.readaheads, s.reads);
	ck_assert_uint_eq(s.hits + s.misses, NSCAN * LEN);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bufpool io");
	TCase *tc = tcase_create("io");
	tcase_add_unchecked_fixture(tc, bt_root_make, bt_root_remove);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, one_read_for_concurrent_readers);
	tcase_add_test(tc, writeback_never_overlaps_modification);
	tcase_add_test(tc, all_frames_pinned_is_ebusy);
	tcase_add_loop_test(tc, far_deadline_keeps_waiting, 0, 3);
	tcase_add_test(tc, timed_get_deadline_bounds_io_waits);
	tcase_add_test(tc, sequential_scan_reads_ahead);
	tcase_add_test(tc, interleaved_scans_each_read_ahead);
	tcase_add_test(tc, readahead_runs_short_and_checksummed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(suite());
}
