/* SPDX-License-Identifier: MIT */
/*
 * test_latch.c - bufpool content latches: exclusion under hundreds of
 * threads (a checksum invariant), FIFO hand-over of exclusive waiters,
 * readers admitted together, no reader barging past a queued writer.
 */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bp_helpers.h"
#include "../check_run.h"

static struct bt_dir dir;

static void setup(void) { bt_dir_make(&dir); }
static void teardown(void) { bt_dir_remove(&dir); }

#define NPAGES 4

struct shared {
	struct bp_pool *pool;
	unsigned iters;
	pthread_barrier_t start;
	atomic_uint violations;
	atomic_uint excl_ops[NPAGES];
	atomic_uint errors;
};

struct worker {
	struct shared *sh;
	unsigned id;
	pthread_t tid;
};

/* Page layout: word 0 = a, word 1 = b.  Under the exclusive latch a and b
 * are incremented one after the other; any reader or writer that sees
 * a != b saw a half-done update: the latch did not exclude. */
static void *latch_worker(void *arg)
{
	struct worker *w = arg;
	struct shared *sh = w->sh;
	uint64_t seed = w->id * 2654435761u + 1;
	pthread_barrier_wait(&sh->start);
	for (unsigned i = 0; i < sh->iters; i++) {
		seed = seed * 6364136223846793005u + 1442695040888963407u;
		unsigned pg = (unsigned)(seed >> 33) % NPAGES;
		bool excl = ((seed >> 40) & 3) == 0;
		struct bp_frame *f;
		if (bp_get(sh->pool, pg, 0, &f) != 0) {
			atomic_fetch_add(&sh->errors, 1);
			continue;
		}
		volatile uint64_t *d = bp_data(f);
		if (excl) {
			bp_latch(sh->pool, f, BP_LATCH_EXCLUSIVE);
			if (d[0] != d[1])
				atomic_fetch_add(&sh->violations, 1);
			d[0]++;
			if ((seed >> 50) % 8 == 0)
				sched_yield();
			d[1]++;
			bp_mark_dirty(sh->pool, f);
			atomic_fetch_add(&sh->excl_ops[pg], 1);
			bp_unlatch(sh->pool, f, BP_LATCH_EXCLUSIVE);
		} else {
			bp_latch(sh->pool, f, BP_LATCH_SHARED);
			uint64_t a = d[0];
			if ((seed >> 50) % 8 == 0)
				sched_yield();
			if (a != d[1])
				atomic_fetch_add(&sh->violations, 1);
			bp_unlatch(sh->pool, f, BP_LATCH_SHARED);
		}
		bp_release(sh->pool, f);
	}
	return NULL;
}

static void run_exclusion(enum fwait_policy policy, unsigned nthreads, unsigned iters)
{
	const char *variant = fwait_policy_name(policy);
	struct bp_config c = bt_config(&dir, 8, true);
	c.flags |= BP_OPEN_TRUNCATE;
	c.writer_interval_ms = 1; /* write-back races with the writers */
	c.fwait.policy = policy;
	struct shared sh;
	memset(&sh, 0, sizeof(sh));
	sh.iters = iters;
	bt_int_v(variant, bp_open(&sh.pool, &c), ==, 0);
	for (unsigned i = 0; i < NPAGES; i++) {
		uint64_t pg;
		struct bp_frame *f;
		bt_int_v(variant, bp_new_page(sh.pool, &pg, &f), ==, 0);
		bt_int_v(variant, bp_release(sh.pool, f), ==, 0);
	}
	pthread_barrier_init(&sh.start, NULL, nthreads);
	struct worker *w = calloc(nthreads, sizeof(*w));
	pthread_t *tids = calloc(nthreads, sizeof(*tids));
	for (unsigned i = 0; i < nthreads; i++) {
		w[i] = (struct worker){ &sh, i, 0 };
		th_spawn(&tids[i], latch_worker, &w[i]);
	}
	th_join_all(tids, nthreads, BT_DEADLINE_MS, "latch workers", NULL);
	bt_uint_v(variant, atomic_load(&sh.errors), ==, 0);
	ck_assert_msg(atomic_load(&sh.violations) == 0, "%s: %u torn updates seen", variant,
		      atomic_load(&sh.violations));
	for (unsigned pg = 0; pg < NPAGES; pg++) {
		struct bp_frame *f;
		bt_int_v(variant, bp_get(sh.pool, pg, 0, &f), ==, 0);
		const uint64_t *d = bp_data(f);
		bt_uint_v(variant, d[0], ==, atomic_load(&sh.excl_ops[pg]));
		bt_uint_v(variant, d[1], ==, d[0]);
		bt_int_v(variant, bp_release(sh.pool, f), ==, 0);
	}
	struct bp_stats st;
	bp_stats_init(&st);
	bt_int_v(variant, bp_stats_get(sh.pool, &st), ==, 0);
	bt_uint_v(variant, st.frames_pinned, ==, 0);
	bt_int_v(variant, bp_close(sh.pool), ==, 0);
	pthread_barrier_destroy(&sh.start);
	free(w);
	free(tids);
}

START_TEST(exclusion_hundreds_of_threads)
{
	run_exclusion(FWAIT_WAKE_ONE, 256, th_scaled(200, 40));
}
END_TEST

START_TEST(exclusion_each_policy)
{
	run_exclusion((enum fwait_policy)_i, 64, th_scaled(200, 40));
}
END_TEST

/* ---- ordering ---- */

struct order {
	struct bp_pool *pool;
	struct bp_frame *frame;
	atomic_uint seq;
};

struct order_thread {
	struct order *o;
	enum bp_latch_mode mode;
	unsigned got; /* sequence number at acquisition */
	int rc;
	pthread_t tid;
};

static void *order_worker(void *arg)
{
	struct order_thread *t = arg;
	t->rc = bp_latch(t->o->pool, t->o->frame, t->mode);
	t->got = atomic_fetch_add(&t->o->seq, 1);
	if (t->rc == 0)
		t->rc = bp_unlatch(t->o->pool, t->o->frame, t->mode);
	return NULL;
}

/* Under WAKE_ONE: readers queued behind a writer are admitted together
 * when it releases, then the queued writers get the latch one at a time in
 * arrival order. */
START_TEST(fifo_handover_and_reader_phase)
{
	struct bp_config c = bt_config(&dir, 4, false);
	struct order o;
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(bp_open(&o.pool, &c), 0);
	uint64_t pg;
	ck_assert_int_eq(bp_new_page(o.pool, &pg, &o.frame), 0);
	struct fwait_table *t = bp_fwait_table(o.pool);
	ck_assert_int_eq(bp_latch(o.pool, o.frame, BP_LATCH_EXCLUSIVE), 0);
	enum { NX = 3, NS = 2, N = NX + NS };
	struct order_thread th[N];
	pthread_t tids[N];
	for (unsigned i = 0; i < N; i++) {
		th[i] = (struct order_thread){ &o, i < NX ? BP_LATCH_EXCLUSIVE : BP_LATCH_SHARED,
					       0, -1, 0 };
		th_spawn(&th[i].tid, order_worker, &th[i]);
		tids[i] = th[i].tid;
		ck_assert_msg(th_wait_parked(t, i + 1, BT_DEADLINE_MS), "waiter %u never parked", i);
	}
	ck_assert_int_eq(bp_unlatch(o.pool, o.frame, BP_LATCH_EXCLUSIVE), 0);
	th_join_all(tids, N, BT_DEADLINE_MS, "ordered waiters", NULL);
	for (unsigned i = 0; i < N; i++)
		ck_assert_int_eq(th[i].rc, 0);
	/* the readers first (together), then the writers in FIFO order */
	ck_assert_uint_lt(th[NX].got, NS);
	ck_assert_uint_lt(th[NX + 1].got, NS);
	for (unsigned i = 0; i < NX; i++)
		ck_assert_uint_eq(th[i].got, NS + i);
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(o.pool, &s), 0);
	ck_assert_uint_eq(s.latch_exclusive_wait.count, NX);
	ck_assert_uint_eq(s.latch_shared_wait.count, NS);
	ck_assert_int_eq(bp_release(o.pool, o.frame), 0);
	ck_assert_int_eq(bp_close(o.pool), 0);
}
END_TEST

/* A queued writer blocks new readers (no writer starvation); the waiting
 * writer gets the latch when the last reader leaves. */
START_TEST(readers_do_not_barge_past_writer)
{
	struct bp_config c = bt_config(&dir, 4, false);
	struct order o;
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(bp_open(&o.pool, &c), 0);
	uint64_t pg;
	ck_assert_int_eq(bp_new_page(o.pool, &pg, &o.frame), 0);
	ck_assert_int_eq(bp_latch(o.pool, o.frame, BP_LATCH_SHARED), 0);
	ck_assert_int_eq(bp_latch_try(o.pool, o.frame, BP_LATCH_SHARED), 0); /* no writer yet */
	struct order_thread w = { &o, BP_LATCH_EXCLUSIVE, 0, -1, 0 };
	th_spawn(&w.tid, order_worker, &w);
	ck_assert(th_wait_parked(bp_fwait_table(o.pool), 1, BT_DEADLINE_MS));
	ck_assert_int_eq(bp_latch_try(o.pool, o.frame, BP_LATCH_SHARED), -EBUSY);
	ck_assert_int_eq(bp_latch_try(o.pool, o.frame, BP_LATCH_EXCLUSIVE), -EBUSY);
	ck_assert_int_eq(bp_unlatch(o.pool, o.frame, BP_LATCH_SHARED), 0);
	ck_assert_int_eq(bp_unlatch(o.pool, o.frame, BP_LATCH_SHARED), 0);
	th_join_all(&w.tid, 1, BT_DEADLINE_MS, "writer", NULL);
	ck_assert_int_eq(w.rc, 0);
	ck_assert_int_eq(bp_latch_try(o.pool, o.frame, BP_LATCH_EXCLUSIVE), 0);
	ck_assert_int_eq(bp_unlatch(o.pool, o.frame, BP_LATCH_EXCLUSIVE), 0);
	ck_assert_int_eq(bp_release(o.pool, o.frame), 0);
	ck_assert_int_eq(bp_close(o.pool), 0);
}
END_TEST

/* One reader phase: X held, a reader queued behind it, X released admits
 * it (EPOCH flips).  Returns when the reader has come and gone. */
static void reader_phase(struct order *o)
{
	struct fwait_table *t = bp_fwait_table(o->pool);
	ck_assert_int_eq(bp_latch(o->pool, o->frame, BP_LATCH_EXCLUSIVE), 0);
	struct order_thread r = { o, BP_LATCH_SHARED, 0, -1, 0 };
	th_spawn(&r.tid, order_worker, &r);
	ck_assert_msg(th_wait_parked(t, 1, BT_DEADLINE_MS), "reader never parked");
	ck_assert_int_eq(bp_unlatch(o->pool, o->frame, BP_LATCH_EXCLUSIVE), 0);
	th_join_all(&r.tid, 1, BT_DEADLINE_MS, "reader", t);
	ck_assert_int_eq(r.rc, 0);
}

/* After any number of reader phases (odd ones leave EPOCH set) an idle
 * latch is taken exclusive by the fast path: bp_latch_try succeeds and an
 * uncontended bp_latch/bp_unlatch takes no bucket lock. */
START_TEST(idle_latch_after_reader_phases_takes_fast_path)
{
	struct bp_config c = bt_config(&dir, 4, false);
	struct order o;
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(bp_open(&o.pool, &c), 0);
	uint64_t pg;
	ck_assert_int_eq(bp_new_page(o.pool, &pg, &o.frame), 0);
	for (unsigned phase = 1; phase <= 3; phase++) {
		reader_phase(&o);
		ck_assert_int_eq(bp_stats_reset(o.pool), 0);
		ck_assert_msg(bp_latch_try(o.pool, o.frame, BP_LATCH_EXCLUSIVE) == 0,
			      "idle latch refused bp_latch_try(EXCLUSIVE) after %u reader phases",
			      phase);
		ck_assert_int_eq(bp_unlatch(o.pool, o.frame, BP_LATCH_EXCLUSIVE), 0);
		ck_assert_int_eq(bp_latch(o.pool, o.frame, BP_LATCH_EXCLUSIVE), 0);
		ck_assert_int_eq(bp_unlatch(o.pool, o.frame, BP_LATCH_EXCLUSIVE), 0);
		struct bp_stats s;
		bp_stats_init(&s);
		ck_assert_int_eq(bp_stats_get(o.pool, &s), 0);
		ck_assert_msg(s.fwait.slow_waits == 0,
			      "uncontended exclusive latch took a bucket lock %llu times after "
			      "%u reader phases", (unsigned long long)s.fwait.slow_waits, phase);
		ck_assert_uint_eq(s.fwait.waits + s.fwait.slow_wakes, 0);
		ck_assert_uint_eq(s.latch_exclusive_wait.count, 0);
	}
	ck_assert_int_eq(bp_release(o.pool, o.frame), 0);
	ck_assert_int_eq(bp_close(o.pool), 0);
}
END_TEST

/* One thread takes BP_LATCH_COUNT_MAX shared latches of one frame: all
 * are granted, the count never carries into the exclusive bit, and the next
 * one is refused with -EAGAIN (bp_latch and bp_latch_try alike) without
 * changing anything.  The loop checks only now and then (and around 2^16,
 * where the old 16-bit count carried), so it stays a CAS loop. */
START_TEST(shared_count_saturates_at_the_limit)
{
	struct bp_config c = bt_config(&dir, 4, false);
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	uint64_t pg;
	struct bp_frame *f;
	ck_assert_int_eq(bp_new_page(p, &pg, &f), 0);
	const uint32_t max = BP_LATCH_COUNT_MAX;
	struct bp_frame_info fi;
	for (uint32_t i = 1; i <= max; i++) {
		int rc = bp_latch(p, f, BP_LATCH_SHARED);
		if (rc != 0)
			ck_abort_msg("shared latch %u of %u: %d", i, max, rc);
		if ((i & 0xfff) == 0 || (i >= 0xfffe && i <= 0x10002) || i == max) {
			if (!bt_frame_of(p, pg, &fi))
				ck_abort_msg("page %llu not resident", (unsigned long long)pg);
			if (fi.latch_shared != i || fi.latch_exclusive || fi.latch_waiters)
				ck_abort_msg("after %u shared latches: shared %u, exclusive %d, "
					     "waiters %u", i, fi.latch_shared, fi.latch_exclusive,
					     fi.latch_waiters);
		}
	}
	ck_assert_int_eq(bp_latch(p, f, BP_LATCH_SHARED), -EAGAIN);
	ck_assert_int_eq(bp_latch_try(p, f, BP_LATCH_SHARED), -EAGAIN);
	ck_assert_int_eq(bp_latch_try(p, f, BP_LATCH_EXCLUSIVE), -EBUSY);
	ck_assert(bt_frame_of(p, pg, &fi));
	ck_assert_uint_eq(fi.latch_shared, max);
	ck_assert(!fi.latch_exclusive);
	ck_assert_uint_eq(fi.latch_waiters, 0);
	ck_assert_uint_eq(th_parked(bp_fwait_table(p)), 0);
	/* The new page is dirty, and its write-back needs one more shared
	 * latch: bp_flush says it could not write it (it used to return 0). */
	ck_assert_int_eq(bp_flush(p), -EAGAIN);
	ck_assert(bt_frame_of(p, pg, &fi));
	ck_assert_uint_eq(fi.flags & (BP_F_DIRTY | BP_F_WRITEBACK), BP_F_DIRTY);
	for (uint32_t i = 1; i <= max; i++) {
		int rc = bp_unlatch(p, f, BP_LATCH_SHARED);
		if (rc != 0)
			ck_abort_msg("shared unlatch %u of %u: %d", i, max, rc);
	}
	ck_assert_int_eq(bp_unlatch(p, f, BP_LATCH_SHARED), -EPERM);
	ck_assert_int_eq(bp_latch_try(p, f, BP_LATCH_EXCLUSIVE), 0);
	ck_assert_int_eq(bp_unlatch(p, f, BP_LATCH_EXCLUSIVE), 0);
	ck_assert_int_eq(bp_flush(p), 0);
	ck_assert(bt_frame_of(p, pg, &fi));
	ck_assert_uint_eq(fi.flags & BP_F_DIRTY, 0);
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bufpool latch");
	TCase *tc = tcase_create("latch");
	tcase_add_unchecked_fixture(tc, bt_root_make, bt_root_remove);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, exclusion_hundreds_of_threads);
	tcase_add_loop_test(tc, exclusion_each_policy, 0, FWAIT_POLICY_COUNT);
	tcase_add_test(tc, fifo_handover_and_reader_phase);
	tcase_add_test(tc, readers_do_not_barge_past_writer);
	tcase_add_test(tc, idle_latch_after_reader_phases_takes_fast_path);
	tcase_add_test(tc, shared_count_saturates_at_the_limit);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(suite());
}
