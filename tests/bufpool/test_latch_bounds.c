/* SPDX-License-Identifier: MIT */
/*
 * test_latch_bounds.c - bufpool content latches at the limits of their
 * counts.  Built against the test-only bufpool with BP_LATCH_COUNT_BITS = 4
 * (bufpool/meson.build), so each count (shared holders, queued readers,
 * queued writers) tops out at 15 and a handful of threads reach it: the
 * call past the limit gets -EAGAIN, changes nothing, and never sets the
 * exclusive bit.
 */
#include <check.h>
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "bp_helpers.h"
#include "../check_run.h"

#ifndef BP_LATCH_COUNT_BITS
#error "built against the bufpool with narrow latch counts (bufpool/meson.build)"
#endif
#define MAX ((1u << BP_LATCH_COUNT_BITS) - 1)

static struct bt_dir dir;

static void setup(void) { bt_dir_make(&dir); }
static void teardown(void) { bt_dir_remove(&dir); }

struct bounds {
	struct bp_pool *pool;
	struct bp_frame *frame;
	uint64_t pageno;
	atomic_uint holding; /* workers holding the latch now */
	atomic_bool go;      /* holding workers may unlatch */
};

struct worker {
	struct bounds *b;
	enum bp_latch_mode mode;
	bool hold;           /* keep the latch until b->go */
	int rc;              /* bp_latch */
	int unlatch_rc;
	bool held_too_long;  /* b->go never came (main failed) */
	pthread_t tid;
};

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	struct bounds *b = w->b;
	w->rc = bp_latch(b->pool, b->frame, w->mode);
	if (w->rc != 0)
		return NULL;
	atomic_fetch_add(&b->holding, 1);
	if (w->hold) {
		uint64_t end = util_now_ns() + (uint64_t)BT_DEADLINE_MS * 1000000u;
		unsigned spins = 0;
		while (!atomic_load(&b->go)) {
			if (util_now_ns() > end) {
				w->held_too_long = true;
				break;
			}
			th_poll_pause(&spins);
		}
	}
	atomic_fetch_sub(&b->holding, 1);
	w->unlatch_rc = bp_unlatch(b->pool, b->frame, w->mode);
	return NULL;
}

static void open_one(struct bounds *b)
{
	memset(b, 0, sizeof(*b));
	struct bp_config c = bt_config(&dir, 4, false);
	ck_assert_int_eq(bp_open(&b->pool, &c), 0);
	ck_assert_int_eq(bp_new_page(b->pool, &b->pageno, &b->frame), 0);
}

static void close_one(struct bounds *b)
{
	ck_assert_int_eq(bp_release(b->pool, b->frame), 0);
	ck_assert_int_eq(bp_close(b->pool), 0);
}

static void assert_latch(struct bounds *b, uint32_t shared, bool excl, uint32_t waiters)
{
	struct bp_frame_info fi;
	ck_assert(bt_frame_of(b->pool, b->pageno, &fi));
	ck_assert_msg(fi.latch_shared == shared && fi.latch_exclusive == excl &&
		      fi.latch_waiters == waiters,
		      "latch: shared %u exclusive %d waiters %u, expected %u %d %u",
		      fi.latch_shared, fi.latch_exclusive, fi.latch_waiters,
		      shared, excl, waiters);
}

/* A thread that is refused returns at once: run it and join it (bounded). */
static int latch_in_thread(struct bounds *b, enum bp_latch_mode mode)
{
	struct worker w = { b, mode, false, -1, 0, false, 0 };
	th_spawn(&w.tid, worker_fn, &w);
	th_join_all(&w.tid, 1, BT_DEADLINE_MS, "refused latcher", bp_fwait_table(b->pool));
	return w.rc;
}

static bool holding_is_max(void *arg)
{
	return atomic_load(&((struct bounds *)arg)->holding) == MAX;
}

/* MAX shared holders; the next shared latch is refused, X is never set:
 * the exclusive try fails until the last holder leaves. */
START_TEST(shared_holders_bound)
{
	struct bounds b;
	open_one(&b);
	for (unsigned i = 0; i < MAX; i++)
		ck_assert_int_eq(bp_latch(b.pool, b.frame, BP_LATCH_SHARED), 0);
	assert_latch(&b, MAX, false, 0);
	ck_assert_int_eq(bp_latch(b.pool, b.frame, BP_LATCH_SHARED), -EAGAIN);
	ck_assert_int_eq(bp_latch_try(b.pool, b.frame, BP_LATCH_SHARED), -EAGAIN);
	assert_latch(&b, MAX, false, 0);
	ck_assert_uint_eq(th_parked(bp_fwait_table(b.pool)), 0);
	for (unsigned i = 0; i < MAX; i++) {
		ck_assert_int_eq(bp_latch_try(b.pool, b.frame, BP_LATCH_EXCLUSIVE), -EBUSY);
		ck_assert_int_eq(bp_unlatch(b.pool, b.frame, BP_LATCH_SHARED), 0);
	}
	assert_latch(&b, 0, false, 0);
	ck_assert_int_eq(bp_latch_try(b.pool, b.frame, BP_LATCH_EXCLUSIVE), 0);
	ck_assert_int_eq(bp_unlatch(b.pool, b.frame, BP_LATCH_EXCLUSIVE), 0);
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(b.pool, &s), 0);
	ck_assert_uint_eq(s.latch_shared_wait.count, 0);
	close_one(&b);
}
END_TEST

/* MAX readers queued behind an exclusive holder; the next is refused.  The
 * release admits exactly the MAX queued, which fills the shared count: one
 * more shared latch is refused while they hold it. */
START_TEST(queued_readers_bound)
{
	struct bounds b;
	open_one(&b);
	struct fwait_table *t = bp_fwait_table(b.pool);
	ck_assert_int_eq(bp_latch(b.pool, b.frame, BP_LATCH_EXCLUSIVE), 0);
	struct worker w[MAX];
	pthread_t tids[MAX];
	for (unsigned i = 0; i < MAX; i++) {
		w[i] = (struct worker){ &b, BP_LATCH_SHARED, true, -1, -1, false, 0 };
		th_spawn(&w[i].tid, worker_fn, &w[i]);
		tids[i] = w[i].tid;
	}
	ck_assert_msg(th_wait_parked(t, MAX, BT_DEADLINE_MS), "%u readers never parked", MAX);
	assert_latch(&b, 0, true, MAX);
	ck_assert_int_eq(latch_in_thread(&b, BP_LATCH_SHARED), -EAGAIN);
	ck_assert_uint_eq(th_parked(t), MAX);
	assert_latch(&b, 0, true, MAX);

	ck_assert_int_eq(bp_unlatch(b.pool, b.frame, BP_LATCH_EXCLUSIVE), 0);
	assert_latch(&b, MAX, false, 0); /* admitted at once, by the release */
	ck_assert_msg(th_poll(holding_is_max, &b, BT_DEADLINE_MS), "admitted readers never ran");
	assert_latch(&b, MAX, false, 0);
	ck_assert_int_eq(bp_latch(b.pool, b.frame, BP_LATCH_SHARED), -EAGAIN);
	ck_assert_int_eq(bp_latch_try(b.pool, b.frame, BP_LATCH_SHARED), -EAGAIN);
	ck_assert_int_eq(bp_latch_try(b.pool, b.frame, BP_LATCH_EXCLUSIVE), -EBUSY);
	atomic_store(&b.go, true);
	th_join_all(tids, MAX, BT_DEADLINE_MS, "admitted readers", t);
	for (unsigned i = 0; i < MAX; i++) {
		ck_assert_int_eq(w[i].rc, 0);
		ck_assert_int_eq(w[i].unlatch_rc, 0);
		ck_assert(!w[i].held_too_long);
	}
	assert_latch(&b, 0, false, 0);
	ck_assert_int_eq(bp_latch_try(b.pool, b.frame, BP_LATCH_EXCLUSIVE), 0);
	ck_assert_int_eq(bp_unlatch(b.pool, b.frame, BP_LATCH_EXCLUSIVE), 0);
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(b.pool, &s), 0);
	ck_assert_uint_eq(s.latch_shared_wait.count, MAX);
	close_one(&b);
}
END_TEST

/* MAX writers queued behind an exclusive holder; the next is refused; the
 * release hands the latch to the MAX queued, one after the other. */
START_TEST(queued_writers_bound)
{
	struct bounds b;
	open_one(&b);
	struct fwait_table *t = bp_fwait_table(b.pool);
	ck_assert_int_eq(bp_latch(b.pool, b.frame, BP_LATCH_EXCLUSIVE), 0);
	struct worker w[MAX];
	pthread_t tids[MAX];
	for (unsigned i = 0; i < MAX; i++) {
		w[i] = (struct worker){ &b, BP_LATCH_EXCLUSIVE, false, -1, -1, false, 0 };
		th_spawn(&w[i].tid, worker_fn, &w[i]);
		tids[i] = w[i].tid;
	}
	ck_assert_msg(th_wait_parked(t, MAX, BT_DEADLINE_MS), "%u writers never parked", MAX);
	assert_latch(&b, 0, true, MAX);
	ck_assert_int_eq(latch_in_thread(&b, BP_LATCH_EXCLUSIVE), -EAGAIN);
	ck_assert_uint_eq(th_parked(t), MAX);
	assert_latch(&b, 0, true, MAX);

	ck_assert_int_eq(bp_unlatch(b.pool, b.frame, BP_LATCH_EXCLUSIVE), 0);
	th_join_all(tids, MAX, BT_DEADLINE_MS, "queued writers", t);
	for (unsigned i = 0; i < MAX; i++) {
		ck_assert_int_eq(w[i].rc, 0);
		ck_assert_int_eq(w[i].unlatch_rc, 0);
	}
	assert_latch(&b, 0, false, 0);
	ck_assert_int_eq(bp_latch_try(b.pool, b.frame, BP_LATCH_EXCLUSIVE), 0);
	ck_assert_int_eq(bp_unlatch(b.pool, b.frame, BP_LATCH_EXCLUSIVE), 0);
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(b.pool, &s), 0);
	ck_assert_uint_eq(s.latch_exclusive_wait.count, MAX);
	close_one(&b);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bufpool latch_bounds");
	TCase *tc = tcase_create("latch bounds");
	tcase_add_unchecked_fixture(tc, bt_root_make, bt_root_remove);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, shared_holders_bound);
	tcase_add_test(tc, queued_readers_bound);
	tcase_add_test(tc, queued_writers_bound);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(suite());
}
