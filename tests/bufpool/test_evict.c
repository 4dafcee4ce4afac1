/* SPDX-License-Identifier: MIT */
/*
 * test_evict.c - bufpool eviction: a page evicted while dirty comes back
 * with its data (through bp_evict_page and through clock pressure from a
 * tiny pool, under many threads), bp_evict_all, frame introspection, and
 * bp_evict_page on a latched page returning -EBUSY instead of waiting.
 */
#include <check.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bp_helpers.h"
#include "../check_run.h"

static struct bt_dir dir;

static void setup(void) { bt_dir_make(&dir); }
static void teardown(void) { bt_dir_remove(&dir); }

START_TEST(evict_dirty_page_comes_back)
{
	struct bp_config c = bt_config(&dir, 4, false);
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	uint64_t pg;
	struct bp_frame *f;
	ck_assert_int_eq(bp_new_page(p, &pg, &f), 0);
	ck_assert_int_eq(bp_latch(p, f, BP_LATCH_EXCLUSIVE), 0);
	bt_fill(bp_data(f), bp_page_size(p), pg, 7);
	ck_assert_int_eq(bp_mark_dirty(p, f), 0);
	ck_assert_int_eq(bp_unlatch(p, f, BP_LATCH_EXCLUSIVE), 0);
	ck_assert_int_eq(bp_evict_page(p, pg), -EBUSY); /* pinned */
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_evict_page(p, pg), 0);
	ck_assert_uint_eq(bt_flags_of(p, pg), UINT32_MAX); /* not resident */
	ck_assert_int_eq(bp_evict_page(p, pg), -ENOENT);
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.writes, 1);
	ck_assert_uint_eq(s.evictions, 1);
	ck_assert_uint_eq(s.frames_mapped, 0);
	ck_assert_int_eq(bp_get(p, pg, 0, &f), 0);
	ck_assert(bt_check(bp_data(f), bp_page_size(p), pg, 7));
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.reads, 1);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

START_TEST(evict_all_unpinned)
{
	struct bp_config c = bt_config(&dir, 8, false);
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	struct bp_frame *keep = NULL;
	for (unsigned i = 0; i < 6; i++) {
		uint64_t pg;
		struct bp_frame *f;
		ck_assert_int_eq(bp_new_page(p, &pg, &f), 0);
		ck_assert_int_eq(bp_latch(p, f, BP_LATCH_EXCLUSIVE), 0);
		bt_fill(bp_data(f), bp_page_size(p), pg, 3);
		ck_assert_int_eq(bp_mark_dirty(p, f), 0);
		ck_assert_int_eq(bp_unlatch(p, f, BP_LATCH_EXCLUSIVE), 0);
		if (i == 2)
			keep = f;
		else
			ck_assert_int_eq(bp_release(p, f), 0);
	}
	ck_assert_int_eq(bp_evict_all(p), 5);
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.frames_mapped, 1);
	ck_assert_uint_eq(s.frames_dirty, 0);
	ck_assert_int_eq(bp_release(p, keep), 0);
	for (uint64_t pg = 0; pg < 6; pg++) {
		struct bp_frame *f;
		ck_assert_int_eq(bp_get(p, pg, 0, &f), 0);
		ck_assert(bt_check(bp_data(f), bp_page_size(p), pg, 3));
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* ---- clock pressure: many threads, 64 pages, 8 frames ---- */

#define PR_PAGES 64

struct pressure {
	struct bp_pool *pool;
	unsigned iters;
	atomic_uint bad, errors;
	uint64_t version[PR_PAGES]; /* guarded by the page's exclusive latch */
};

struct pr_worker {
	struct pressure *pr;
	unsigned id;
};

static void *pressure_fn(void *arg)
{
	struct pr_worker *w = arg;
	struct pressure *pr = w->pr;
	uint32_t ps = bp_page_size(pr->pool);
	uint64_t seed = w->id * 7919u + 17;
	for (unsigned i = 0; i < pr->iters; i++) {
		seed = seed * 6364136223846793005u + 1442695040888963407u;
		uint64_t pg = (seed >> 33) % PR_PAGES;
		struct bp_frame *f;
		int r = bp_get(pr->pool, pg, 0, &f);
		if (r == -EBUSY)
			continue; /* all frames pinned right now: allowed */
		if (r != 0) {
			atomic_fetch_add(&pr->errors, 1);
			continue;
		}
		bp_latch(pr->pool, f, BP_LATCH_EXCLUSIVE);
		if (bp_frame_pageno(f) != pg || !bt_check(bp_data(f), ps, pg, pr->version[pg]))
			atomic_fetch_add(&pr->bad, 1);
		bt_fill(bp_data(f), ps, pg, ++pr->version[pg]);
		bp_mark_dirty(pr->pool, f);
		bp_unlatch(pr->pool, f, BP_LATCH_EXCLUSIVE);
		bp_release(pr->pool, f);
	}
	return NULL;
}

/* Every access finds the last version written, though pages are evicted
 * dirty all the time (written back by the clock first). */
START_TEST(dirty_pages_survive_clock_pressure)
{
	const char *variant = _i ? "with the background writer" : "without the background writer";
	struct bp_config c = bt_config(&dir, 8, _i == 1);
	c.writer_interval_ms = 2;
	c.flags |= BP_OPEN_TRUNCATE;
	static struct pressure pr;
	memset(&pr, 0, sizeof(pr));
	pr.iters = th_scaled(400, 80);
	bt_int_v(variant, bp_open(&pr.pool, &c), ==, 0);
	for (unsigned i = 0; i < PR_PAGES; i++) {
		uint64_t pg;
		struct bp_frame *f;
		bt_int_v(variant, bp_new_page(pr.pool, &pg, &f), ==, 0);
		bt_fill(bp_data(f), bp_page_size(pr.pool), pg, 0);
		bt_int_v(variant, bp_release(pr.pool, f), ==, 0);
	}
	enum { N = 6 };
	struct pr_worker w[N];
	pthread_t tids[N];
	for (unsigned i = 0; i < N; i++) {
		w[i] = (struct pr_worker){ &pr, i };
		th_spawn(&tids[i], pressure_fn, &w[i]);
	}
	th_join_all(tids, N, BT_DEADLINE_MS, "pressure workers", NULL);
	bt_uint_v(variant, atomic_load(&pr.errors), ==, 0);
	bt_uint_v(variant, atomic_load(&pr.bad), ==, 0);
	struct bp_stats s;
	bp_stats_init(&s);
	bt_int_v(variant, bp_stats_get(pr.pool, &s), ==, 0);
	bt_uint_v(variant, s.evictions, >, 0);
	bt_uint_v(variant, s.writes, >, 0);
	bt_uint_v(variant, s.frames_locked, ==, 0);
	bt_int_v(variant, bp_close(pr.pool), ==, 0);
	c.flags &= ~BP_OPEN_TRUNCATE;
	bt_int_v(variant, bp_open(&pr.pool, &c), ==, 0);
	for (uint64_t pg = 0; pg < PR_PAGES; pg++) {
		struct bp_frame *f;
		bt_int_v(variant, bp_get(pr.pool, pg, 0, &f), ==, 0);
		bt_check_v(variant, bt_check(bp_data(f), bp_page_size(pr.pool), pg, pr.version[pg]));
		bt_int_v(variant, bp_release(pr.pool, f), ==, 0);
	}
	bt_int_v(variant, bp_close(pr.pool), ==, 0);
}
END_TEST

/* Waits are charged to the frame waited on: bp_frames_hottest finds it. */
struct s_waiter {
	struct bp_pool *pool;
	int rc;
};

static void *s_waiter_fn(void *arg)
{
	struct s_waiter *w = arg;
	struct bp_frame *f;
	w->rc = bp_get(w->pool, 1, 0, &f);
	if (w->rc == 0) {
		w->rc = bp_latch(w->pool, f, BP_LATCH_SHARED);
		bp_unlatch(w->pool, f, BP_LATCH_SHARED);
		bp_release(w->pool, f);
	}
	return NULL;
}

START_TEST(hottest_frame_is_the_waited_one)
{
	struct bp_config c = bt_config(&dir, 8, false);
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	uint64_t pg;
	struct bp_frame *f0, *f;
	ck_assert_int_eq(bp_new_page(p, &pg, &f0), 0);
	ck_assert_int_eq(bp_new_page(p, &pg, &f), 0); /* page 1 is the hot one */
	ck_assert_int_eq(bp_latch(p, f, BP_LATCH_EXCLUSIVE), 0);
	struct bp_frame_info top[2];
	ck_assert_int_eq(bp_frames_hottest(p, top, 2), 0);
	struct s_waiter w = { p, -1 };
	pthread_t tid;
	th_spawn(&tid, s_waiter_fn, &w);
	ck_assert(th_wait_parked(bp_fwait_table(p), 1, BT_DEADLINE_MS));
	ck_assert_int_eq(bp_unlatch(p, f, BP_LATCH_EXCLUSIVE), 0);
	th_join_all(&tid, 1, BT_DEADLINE_MS, "shared waiter", NULL);
	ck_assert_int_eq(w.rc, 0);
	ck_assert_int_eq(bp_frames_hottest(p, top, 2), 1);
	ck_assert_uint_eq(top[0].pageno, 1);
	ck_assert_uint_gt(top[0].wait_ns, 0);
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.latch_shared_wait.count, 1);
	ck_assert_uint_eq(s.latch_exclusive_wait.count, 0);
	ck_assert_uint_ge(s.fwait.waits, 1);
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_release(p, f0), 0);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* ---- eviction never waits for a latch ---- */

struct x_holder {
	struct bp_pool *pool;
	uint64_t pageno;
	atomic_bool latched;       /* set by the holder once it holds X */
	atomic_bool evict_returned;/* set by main once bp_evict_page returned */
	bool saw_return;           /* holder: main's evict returned while we held X */
	int rc;
};

static bool evict_returned(void *arg)
{
	return atomic_load(&((struct x_holder *)arg)->evict_returned);
}

/* Holds page pageno exclusive until main's bp_evict_page has returned, or
 * gives up after 3 s (so code that blocks the evict shows as a failed
 * assertion, not a hang). */
static void *x_holder_fn(void *arg)
{
	struct x_holder *h = arg;
	struct bp_frame *f;
	h->rc = bp_get(h->pool, h->pageno, 0, &f);
	if (h->rc == 0)
		h->rc = bp_latch(h->pool, f, BP_LATCH_EXCLUSIVE);
	atomic_store(&h->latched, true);
	if (h->rc != 0)
		return NULL;
	h->saw_return = th_poll(evict_returned, h, 3000);
	bp_unlatch(h->pool, f, BP_LATCH_EXCLUSIVE);
	bp_release(h->pool, f);
	return NULL;
}

static bool holder_latched(void *arg)
{
	return atomic_load(&((struct x_holder *)arg)->latched);
}

/* A dirty page held exclusive by another thread: bp_evict_page returns
 * -EBUSY at once (it used to wait for the shared latch until the holder
 * let go), and does not write the page. */
START_TEST(evict_latched_by_other_is_ebusy)
{
	struct bp_config c = bt_config(&dir, 4, false);
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	uint64_t pg;
	struct bp_frame *f;
	ck_assert_int_eq(bp_new_page(p, &pg, &f), 0); /* dirty */
	bt_fill(bp_data(f), bp_page_size(p), pg, 4);
	ck_assert_int_eq(bp_release(p, f), 0);
	static struct x_holder h;
	memset(&h, 0, sizeof(h));
	h.pool = p;
	h.pageno = pg;
	pthread_t tid;
	th_spawn(&tid, x_holder_fn, &h);
	ck_assert(th_poll(holder_latched, &h, BT_DEADLINE_MS));
	uint64_t t0 = util_now_ns();
	int rc = bp_evict_page(p, pg);
	uint64_t ms = (util_now_ns() - t0) / 1000000u;
	atomic_store(&h.evict_returned, true);
	th_join_all(&tid, 1, BT_DEADLINE_MS, "exclusive holder", bp_fwait_table(p));
	ck_assert_int_eq(h.rc, 0);
	ck_assert_msg(h.saw_return, "bp_evict_page waited for the exclusive holder "
		      "(returned %d after %llu ms, once the holder gave up)", rc,
		      (unsigned long long)ms);
	ck_assert_int_eq(rc, -EBUSY);
	ck_assert_msg(ms < 1000, "bp_evict_page took %llu ms", (unsigned long long)ms);
	ck_assert_uint_ne(bt_flags_of(p, pg) & BP_F_DIRTY, 0); /* not written */
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.writes, 0);
	/* unlatched now: it is written and evicted */
	ck_assert_int_eq(bp_evict_page(p, pg), 0);
	ck_assert_int_eq(bp_get(p, pg, 0, &f), 0);
	ck_assert(bt_check(bp_data(f), bp_page_size(p), pg, 4));
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

struct self_latch {
	struct bp_pool *pool;
	enum bp_latch_mode mode;
	int rc_latch, rc_evict;
	uint32_t flags_after;
};

/* The caller latches a dirty page, then asks to evict it. */
static void *self_latch_fn(void *arg)
{
	struct self_latch *t = arg;
	uint64_t pg;
	struct bp_frame *f;
	t->rc_latch = bp_new_page(t->pool, &pg, &f);
	if (t->rc_latch == 0)
		t->rc_latch = bp_latch(t->pool, f, t->mode);
	if (t->rc_latch != 0)
		return NULL;
	t->rc_evict = bp_evict_page(t->pool, pg);
	t->flags_after = bt_flags_of(t->pool, pg);
	bp_unlatch(t->pool, f, t->mode);
	bp_release(t->pool, f);
	return NULL;
}

/* The latch holder itself (exclusive: _i = 0, shared: _i = 1) evicting its
 * dirty page: -EBUSY, page untouched.  Exclusive used to deadlock (the
 * evict waited for a shared latch behind the caller's own X); the bounded
 * join turns that into a failure. */
START_TEST(evict_latched_by_caller_is_ebusy)
{
	const char *variant = _i == 0 ? "exclusive" : "shared";
	struct bp_config c = bt_config(&dir, 4, false);
	struct self_latch t = { NULL, _i == 0 ? BP_LATCH_EXCLUSIVE : BP_LATCH_SHARED, -1, -1, 0 };
	bt_int_v(variant, bp_open(&t.pool, &c), ==, 0);
	pthread_t tid;
	th_spawn(&tid, self_latch_fn, &t);
	th_join_all(&tid, 1, 5000, "bp_evict_page by the latch holder", bp_fwait_table(t.pool));
	bt_int_v(variant, t.rc_latch, ==, 0);
	bt_int_v(variant, t.rc_evict, ==, -EBUSY);
	bt_uint_v(variant, t.flags_after & BP_F_DIRTY, !=, 0);
	bt_uint_v(variant, t.flags_after & BP_F_WRITEBACK, ==, 0);
	bt_int_v(variant, bp_evict_page(t.pool, 0), ==, 0);
	bt_int_v(variant, bp_close(t.pool), ==, 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bufpool evict");
	TCase *tc = tcase_create("evict");
	tcase_add_unchecked_fixture(tc, bt_root_make, bt_root_remove);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, evict_dirty_page_comes_back);
	tcase_add_test(tc, evict_all_unpinned);
	tcase_add_loop_test(tc, dirty_pages_survive_clock_pressure, 0, 2);
	tcase_add_test(tc, hottest_frame_is_the_waited_one);
	suite_add_tcase(s, tc);
	/* Its own case for a short timeout: code that deadlocks here fails in
	 * seconds, not after the minute of the case above. */
	tc = tcase_create("evict latched");
	tcase_add_unchecked_fixture(tc, bt_root_make, bt_root_remove);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 15);
	tcase_add_test(tc, evict_latched_by_other_is_ebusy);
	tcase_add_loop_test(tc, evict_latched_by_caller_is_ebusy, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(suite());
}
