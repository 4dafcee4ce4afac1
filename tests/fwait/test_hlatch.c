/* SPDX-License-Identifier: MIT */
/*
 * test_hlatch.c - hybrid latches on a caller-laid-out word (fwait_hlatch_*).
 *
 * Design note: most tests use the layout of the C++ buffer manager that
 * issue 29 ported (state in the top byte: bits 56..62 here, shared 1..124,
 * exclusive 125, marked 126, 127 the engine's "evicted"; W bit 63; the
 * version in bits 0..55), and one with no W.  Single-thread tests check
 * the word's fields after each call; the waiting tests park a thread and
 * poll the table until it is parked, then release, and check who got the
 * latch and what the word says.  The stress test mixes writers (two
 * fields kept equal), shared readers (which check no writer is inside
 * and their own count is at most the word's), optimistic readers (which
 * check the invariant only when validate passes) and exact W: at the end
 * the word is free, its version counts every exclusive release, and W is
 * clear (nobody times out there).
 */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "helpers.h"
#include "../check_run.h"

/* The engine's layout; EVICTED is its own state (not the latch's). */
static const struct fwait_hlatch_layout engine = {
	.state_shift = 56, .state_bits = 7, .shared_max = 124, .exclusive = 125,
	.marked = 126, .waiters_bit = 63, .version_shift = 0, .version_bits = 56,
};
#define EVICTED 127u
/* The same without W, and spare caller bits 60..63. */
static const struct fwait_hlatch_layout no_w = {
	.state_shift = 48, .state_bits = 8, .shared_max = 200, .exclusive = 255,
	.waiters_bit = -1, .version_shift = 0, .version_bits = 48,
};
#define W63 (UINT64_C(1) << 63)
/* The engine's, releasing exclusive with a plain store while nobody waits. */
static const struct fwait_hlatch_layout engine_store = {
	.state_shift = 56, .state_bits = 7, .shared_max = 124, .exclusive = 125,
	.marked = 126, .waiters_bit = 63, .version_shift = 0, .version_bits = 56,
	.flags = FWAIT_HLATCH_STORE_RELEASE,
};
/* The layouts the loop tests run, by index. */
static const struct fwait_hlatch_layout *const layouts[] = { &engine, &no_w, &engine_store };
#define NLAYOUTS 3

static unsigned st(const struct fwait_hlatch_layout *l, fwait_atomic_u64 *w)
{
	return fwait_hlatch_state(l, atomic_load(w));
}

static uint64_t ver(const struct fwait_hlatch_layout *l, fwait_atomic_u64 *w)
{
	return fwait_hlatch_version(l, atomic_load(w));
}

START_TEST(layout_check)
{
	ck_assert_int_eq(fwait_hlatch_layout_check(&engine), 0);
	ck_assert_int_eq(fwait_hlatch_layout_check(&no_w), 0);
	ck_assert_int_eq(fwait_hlatch_layout_check(NULL), -EINVAL);
	struct fwait_hlatch_layout l;
	/* Each row breaks one rule. */
	l = engine; l.version_bits = 57;          /* version into the state */
	ck_assert_int_eq(fwait_hlatch_layout_check(&l), -EINVAL);
	l = engine; l.state_bits = 9;             /* state past bit 63 */
	ck_assert_int_eq(fwait_hlatch_layout_check(&l), -EINVAL);
	l = engine; l.waiters_bit = 60;           /* W inside the state */
	ck_assert_int_eq(fwait_hlatch_layout_check(&l), -EINVAL);
	l = engine; l.waiters_bit = 3;            /* W inside the version */
	ck_assert_int_eq(fwait_hlatch_layout_check(&l), -EINVAL);
	l = engine; l.waiters_bit = -2;
	ck_assert_int_eq(fwait_hlatch_layout_check(&l), -EINVAL);
	l = engine; l.exclusive = 124;            /* a shared count */
	ck_assert_int_eq(fwait_hlatch_layout_check(&l), -EINVAL);
	l = engine; l.exclusive = 128;            /* does not fit 7 bits */
	ck_assert_int_eq(fwait_hlatch_layout_check(&l), -EINVAL);
	l = engine; l.marked = 125;               /* marked == exclusive */
	ck_assert_int_eq(fwait_hlatch_layout_check(&l), -EINVAL);
	l = engine; l.marked = 3;                 /* marked a shared count */
	ck_assert_int_eq(fwait_hlatch_layout_check(&l), -EINVAL);
	l = engine; l.version_bits = 0;
	ck_assert_int_eq(fwait_hlatch_layout_check(&l), -EINVAL);
	l = engine; l.state_bits = 1;
	ck_assert_int_eq(fwait_hlatch_layout_check(&l), -EINVAL);
	l = engine; l.flags = 2;                  /* an unknown flag */
	ck_assert_int_eq(fwait_hlatch_layout_check(&l), -EINVAL);
	ck_assert_int_eq(fwait_hlatch_layout_check(&engine_store), 0);
	/* Every call refuses a bad layout. */
	fwait_atomic_u64 w = 0;
	uint64_t snap;
	struct fwait_table *t = th_table_for(FWAIT_WAKE_ONE, 0);
	l = engine; l.exclusive = 0;
	ck_assert_int_eq(fwait_hlatch_lock(t, &l, &w, NULL), -EINVAL);
	ck_assert_int_eq(fwait_hlatch_trylock(&l, &w), -EINVAL);
	ck_assert_int_eq(fwait_hlatch_lock_shared(t, &l, &w, NULL), -EINVAL);
	ck_assert_int_eq(fwait_hlatch_unlock(t, &l, &w), -EINVAL);
	ck_assert_int_eq(fwait_hlatch_read_begin(t, &l, &w, NULL, &snap), -EINVAL);
	ck_assert(!fwait_hlatch_validate(&l, &w, 0));
	ck_assert_int_eq(fwait_hlatch_lock(NULL, &engine, &w, NULL), -EINVAL);
	ck_assert_int_eq(fwait_hlatch_lock(t, &engine, NULL, NULL), -EINVAL);
	/* No shared mode. */
	l = engine; l.shared_max = 0;
	ck_assert_int_eq(fwait_hlatch_layout_check(&l), 0);
	ck_assert_int_eq(fwait_hlatch_lock_shared(t, &l, &w, NULL), -EINVAL);
	ck_assert_uint_eq(atomic_load(&w), 0);
	fwait_table_destroy(t);
}
END_TEST

/* Uncontended: the fields after each call; loop index: a layout. */
START_TEST(uncontended_fields)
{
	const struct fwait_hlatch_layout *l = layouts[_i];
	struct fwait_table *t = th_table_for(FWAIT_WAKE_ONE, 0);
	/* The no-W layout's spare bits are the caller's: kept throughout. */
	uint64_t mine = l == &no_w ? UINT64_C(0xa) << 60 : 0;
	fwait_atomic_u64 w = mine;
	uint64_t snap;

	ck_assert_int_eq(fwait_hlatch_lock(t, l, &w, NULL), 0);
	ck_assert_uint_eq(st(l, &w), l->exclusive);
	ck_assert_int_eq(fwait_hlatch_trylock(l, &w), -EBUSY);
	ck_assert_int_eq(fwait_hlatch_trylock_shared(l, &w), -EBUSY);
	ck_assert_int_eq(fwait_hlatch_unlock_shared(t, l, &w), -EPERM);
	ck_assert_int_eq(fwait_hlatch_unlock(t, l, &w), 0);
	ck_assert_uint_eq(st(l, &w), 0);
	ck_assert_uint_eq(ver(l, &w), 1);
	ck_assert_int_eq(fwait_hlatch_unlock(t, l, &w), -EPERM);

	ck_assert_int_eq(fwait_hlatch_read_begin(t, l, &w, NULL, &snap), 0);
	ck_assert(fwait_hlatch_validate(l, &w, snap));
	ck_assert_int_eq(fwait_hlatch_lock_shared(t, l, &w, NULL), 0);
	ck_assert_int_eq(fwait_hlatch_trylock_shared(l, &w), 0);
	ck_assert_uint_eq(st(l, &w), 2);
	/* Shared holders do not fail an optimistic read. */
	ck_assert(fwait_hlatch_validate(l, &w, snap));
	ck_assert_int_eq(fwait_hlatch_trylock(l, &w), -EBUSY);
	ck_assert_int_eq(fwait_hlatch_unlock(t, l, &w), -EPERM);
	ck_assert_int_eq(fwait_hlatch_unlock_shared(t, l, &w), 0);
	ck_assert_int_eq(fwait_hlatch_unlock_shared(t, l, &w), 0);
	ck_assert_int_eq(fwait_hlatch_unlock_shared(t, l, &w), -EPERM);
	ck_assert_uint_eq(st(l, &w), 0);
	ck_assert_uint_eq(ver(l, &w), 1); /* shared releases keep it */
	/* An exclusive hold fails it, held or released. */
	ck_assert_int_eq(fwait_hlatch_trylock(l, &w), 0);
	ck_assert(!fwait_hlatch_validate(l, &w, snap));
	ck_assert_int_eq(fwait_hlatch_unlock(t, l, &w), 0);
	ck_assert(!fwait_hlatch_validate(l, &w, snap));
	ck_assert_uint_eq(atomic_load(&w) & (UINT64_C(0xf) << 60), mine);

	/* Nobody waits: no call took a bucket lock. */
	struct fwait_stats s;
	fwait_stats_get(t, &s);
	ck_assert_uint_eq(s.slow_wakes, 0);
	ck_assert_uint_eq(s.slow_waits, 0);
	fwait_table_destroy(t);
}
END_TEST

/* Marked counts as free; the engine's own states are refused. */
START_TEST(marked_and_callers_states)
{
	struct fwait_table *t = th_table_for(FWAIT_WAKE_ONE, 0);
	fwait_atomic_u64 w = (uint64_t)engine.marked << 56 | 7;
	uint64_t snap;

	ck_assert_int_eq(fwait_hlatch_trylock_shared(&engine, &w), 0);
	ck_assert_uint_eq(st(&engine, &w), 1);
	ck_assert_int_eq(fwait_hlatch_unlock_shared(t, &engine, &w), 0);
	atomic_store(&w, (uint64_t)engine.marked << 56 | 7);
	ck_assert_int_eq(fwait_hlatch_lock(t, &engine, &w, NULL), 0);
	/* Evict: release into the engine's own state; the version moves. */
	ck_assert_int_eq(fwait_hlatch_unlock_to(t, &engine, &w, EVICTED), 0);
	ck_assert_uint_eq(st(&engine, &w), EVICTED);
	ck_assert_uint_eq(ver(&engine, &w), 8);
	ck_assert_int_eq(fwait_hlatch_lock(t, &engine, &w, NULL), -EAGAIN);
	ck_assert_int_eq(fwait_hlatch_trylock(&engine, &w), -EAGAIN);
	ck_assert_int_eq(fwait_hlatch_lock_shared(t, &engine, &w, NULL), -EAGAIN);
	ck_assert_int_eq(fwait_hlatch_trylock_shared(&engine, &w), -EAGAIN);
	ck_assert_int_eq(fwait_hlatch_read_begin(t, &engine, &w, NULL, &snap), -EAGAIN);
	ck_assert_uint_eq(snap, atomic_load(&w));
	ck_assert_int_eq(fwait_hlatch_unlock(t, &engine, &w), -EPERM);
	/* unlock_to refuses the latch's own states. */
	atomic_store(&w, 0);
	ck_assert_int_eq(fwait_hlatch_lock(t, &engine, &w, NULL), 0);
	ck_assert_int_eq(fwait_hlatch_unlock_to(t, &engine, &w, 3), -EINVAL);
	ck_assert_int_eq(fwait_hlatch_unlock_to(t, &engine, &w, engine.exclusive), -EINVAL);
	ck_assert_int_eq(fwait_hlatch_unlock_to(t, &engine, &w, 128), -EINVAL);
	ck_assert_int_eq(fwait_hlatch_unlock_to(t, &engine, &w, engine.marked), 0);
	ck_assert_uint_eq(st(&engine, &w), engine.marked);
	fwait_table_destroy(t);
}
END_TEST

/* The version wraps within its field and never touches the state. */
START_TEST(version_wraps_in_its_field)
{
	struct fwait_table *t = th_table_for(FWAIT_WAKE_ONE, 0);
	struct fwait_hlatch_layout l = engine;
	l.version_bits = 2;
	l.version_shift = 8;
	fwait_atomic_u64 w = 0x55; /* caller's bits 0..7 */
	for (unsigned i = 1; i <= 5; i++) {
		ck_assert_int_eq(fwait_hlatch_lock(t, &l, &w, NULL), 0);
		ck_assert_int_eq(fwait_hlatch_unlock(t, &l, &w), 0);
		ck_assert_uint_eq(fwait_hlatch_version(&l, atomic_load(&w)), i % 4);
		ck_assert_uint_eq(st(&l, &w), 0);
		ck_assert_uint_eq(atomic_load(&w) & 0xff, 0x55);
	}
	fwait_table_destroy(t);
}
END_TEST

/* ---- waiting ------------------------------------------------------------- */

struct latcher {
	struct fwait_table *t;
	const struct fwait_hlatch_layout *l;
	fwait_atomic_u64 *word;
	bool shared;
	const struct timespec *deadline;
	int rc;
	uint64_t seen; /* the word just after taking */
	_Atomic bool done;
};

static void *latcher_main(void *arg)
{
	struct latcher *c = arg;
	c->rc = c->shared ? fwait_hlatch_lock_shared(c->t, c->l, c->word, c->deadline) :
			    fwait_hlatch_lock(c->t, c->l, c->word, c->deadline);
	c->seen = atomic_load(c->word);
	atomic_store(&c->done, true);
	return NULL;
}

static void park_latcher(struct latcher *c, pthread_t *tid, size_t before)
{
	th_spawn(tid, latcher_main, c);
	ck_assert_msg(th_wait_parked(c->t, before + 1, TH_DEADLINE_MS), "latcher did not park");
}

/* A writer parks on a held latch: W is set; the release wakes it and,
 * with nobody else queued, clears W (exact).  Loop index: a variant. */
START_TEST(waiters_bit_is_exact)
{
	struct fwait_table *t = th_table_for(_i, 0);
	fwait_atomic_u64 w = 0;
	ck_assert_int_eq(fwait_hlatch_lock(t, &engine, &w, NULL), 0);
	ck_assert_uint_eq(atomic_load(&w) & W63, 0);

	struct latcher c = { .t = t, .l = &engine, .word = &w };
	pthread_t tid;
	park_latcher(&c, &tid, 0);
	ck_assert_uint_eq(atomic_load(&w) & W63, W63);
	ck_assert_int_eq(fwait_hlatch_unlock(t, &engine, &w), 0);
	th_join_all(&tid, 1, TH_DEADLINE_MS, "writer", t);
	ck_assert_int_eq(c.rc, 0);
	ck_assert_uint_eq(st(&engine, &w), engine.exclusive);
	ck_assert_uint_eq(atomic_load(&w) & W63, 0);
	/* Its release is a fast one: W is clear, no table. */
	struct fwait_stats before, after;
	fwait_stats_get(t, &before);
	ck_assert_int_eq(fwait_hlatch_unlock(t, &engine, &w), 0);
	fwait_stats_get(t, &after);
	ck_assert_uint_eq(after.slow_wakes, before.slow_wakes);
	ck_assert_uint_eq(ver(&engine, &w), 2);
	fwait_table_destroy(t);
}
END_TEST

/* An exclusive release store can overwrite W: a waiter sets it between
 * the releaser's load and its store.  fwait_hlatch_unlocked, which the
 * inline unlock calls after the store, then finds the waiters counted in
 * the bucket, wakes one writer and sets W again for the one still queued,
 * so the next release goes slow and wakes it.  Here the test is that
 * releaser: two writers park, then it stores the value its load would
 * have seen before W.  Loop index: membarrier allowed (0) or not (1). */
START_TEST(overwritten_w_is_restored)
{
	struct fwait_config cfg = { .no_membarrier = _i };
	struct fwait_table *t;
	ck_assert_int_eq(fwait_table_create(&t, &cfg), 0);
	fwait_atomic_u64 w = 0;
	ck_assert_int_eq(fwait_hlatch_lock(t, &engine_store, &w, NULL), 0);
	struct latcher c[2] = { { .t = t, .l = &engine_store, .word = &w },
				{ .t = t, .l = &engine_store, .word = &w } };
	pthread_t tids[2];
	park_latcher(&c[0], &tids[0], 0);
	park_latcher(&c[1], &tids[1], 1);
	ck_assert_uint_eq(atomic_load(&w) & W63, W63);

	uint64_t freed = 1; /* free (state 0), version 1, W clear */
	atomic_store(&w, freed);
	ck_assert_int_eq(fwait_hlatch_unlocked(t, &engine_store, &w, 0), 0);
	/* The oldest writer wakes and takes it; the other is still queued,
	 * and W says so again. */
	th_join_all(&tids[0], 1, TH_DEADLINE_MS, "oldest writer", t);
	ck_assert_int_eq(c[0].rc, 0);
	ck_assert_uint_eq(c[0].seen & W63, W63);
	ck_assert(!atomic_load(&c[1].done));
	ck_assert_uint_eq(th_parked(t), 1);
	ck_assert_int_eq(fwait_hlatch_unlock(t, &engine_store, &w), 0);
	th_join_all(&tids[1], 1, TH_DEADLINE_MS, "second writer", t);
	ck_assert_int_eq(c[1].rc, 0);
	ck_assert_uint_eq(atomic_load(&w) & W63, 0);
	ck_assert_int_eq(fwait_hlatch_unlock(t, &engine_store, &w), 0);
	ck_assert_uint_eq(atomic_load(&w), 3); /* free, version 3, W clear */
	ck_assert_int_eq(fwait_hlatch_unlocked(NULL, &engine_store, &w, 0), -EINVAL);
	fwait_table_destroy(t);
}
END_TEST

/* A release in a bucket where only another word's waiter sleeps is a CAS
 * (the count is per bucket, W per word): it takes no bucket lock, and
 * leaves the other word's W and waiter as they were; nor does a release
 * in an empty bucket (a store).  One bucket, so both words share it. */
START_TEST(release_beside_another_words_waiter)
{
	struct fwait_table *t = th_table_for(FWAIT_WAKE_ONE, 1);
	fwait_atomic_u64 a = 0, b = 0;
	struct fwait_stats before, after;

	fwait_stats_get(t, &before);
	ck_assert_int_eq(fwait_hlatch_lock(t, &engine, &b, NULL), 0);
	ck_assert_int_eq(fwait_hlatch_unlock(t, &engine, &b), 0);
	fwait_stats_get(t, &after);
	ck_assert_uint_eq(after.slow_wakes, before.slow_wakes);

	ck_assert_int_eq(fwait_hlatch_lock(t, &engine, &a, NULL), 0);
	struct latcher c = { .t = t, .l = &engine, .word = &a };
	pthread_t tid;
	park_latcher(&c, &tid, 0);
	ck_assert_int_eq(fwait_hlatch_lock(t, &engine, &b, NULL), 0);
	fwait_stats_get(t, &before);
	ck_assert_int_eq(fwait_hlatch_unlock(t, &engine, &b), 0);
	fwait_stats_get(t, &after);
	ck_assert_uint_eq(after.slow_wakes, before.slow_wakes);
	ck_assert_uint_eq(after.wakeups, before.wakeups);
	ck_assert_uint_eq(atomic_load(&b), 2); /* free, version 2, no W */
	ck_assert_uint_eq(atomic_load(&a) & W63, W63);
	ck_assert_uint_eq(th_parked(t), 1);
	ck_assert_int_eq(fwait_hlatch_unlock(t, &engine, &a), 0);
	th_join_all(&tid, 1, TH_DEADLINE_MS, "writer", t);
	ck_assert_int_eq(c.rc, 0);
	ck_assert_int_eq(fwait_hlatch_unlock(t, &engine, &a), 0);
	fwait_table_destroy(t);
}
END_TEST

/* STRICT hands an exclusive release to the oldest writer: the word stays
 * exclusive through it (the writer's first look sees it so), and the
 * reader chosen beside it waits again, then gets the latch shared. */
START_TEST(handoff_keeps_it_exclusive)
{
	struct fwait_table *t = th_table_for(TC_VARIANT_STRICT, 0);
	fwait_atomic_u64 w = 0;
	ck_assert_int_eq(fwait_hlatch_lock(t, &engine, &w, NULL), 0);
	struct latcher wr = { .t = t, .l = &engine, .word = &w };
	struct latcher rd = { .t = t, .l = &engine, .word = &w, .shared = true };
	pthread_t tids[2];
	park_latcher(&wr, &tids[0], 0);
	park_latcher(&rd, &tids[1], 1);

	ck_assert_int_eq(fwait_hlatch_unlock(t, &engine, &w), 0);
	/* Handed over: exclusive at once, the version moved, W kept for
	 * the reader. */
	ck_assert_uint_eq(st(&engine, &w), engine.exclusive);
	ck_assert_uint_eq(ver(&engine, &w), 1);
	th_join_all(&tids[0], 1, TH_DEADLINE_MS, "writer", t);
	ck_assert_int_eq(wr.rc, 0);
	ck_assert_msg(th_wait_parked(t, 1, TH_DEADLINE_MS), "the reader did not wait again");
	ck_assert_uint_eq(atomic_load(&w) & W63, W63);
	ck_assert(!atomic_load(&rd.done));
	ck_assert_int_eq(fwait_hlatch_unlock(t, &engine, &w), 0);
	th_join_all(&tids[1], 1, TH_DEADLINE_MS, "reader", t);
	ck_assert_int_eq(rd.rc, 0);
	ck_assert_uint_eq(st(&engine, &w), 1);
	ck_assert_uint_eq(atomic_load(&w) & W63, 0);
	ck_assert_int_eq(fwait_hlatch_unlock_shared(t, &engine, &w), 0);
	struct fwait_stats s;
	fwait_stats_get(t, &s);
	ck_assert_uint_ge(s.handoffs, 1);
	fwait_table_destroy(t);
}
END_TEST

/* A new reader does not join a shared latch a writer waits for; the last
 * reader's release lets the writer in.  Loop index: a variant. */
START_TEST(readers_queue_behind_a_waiting_writer)
{
	struct fwait_table *t = th_table_for(_i, 0);
	fwait_atomic_u64 w = 0;
	ck_assert_int_eq(fwait_hlatch_lock_shared(t, &engine, &w, NULL), 0);
	struct latcher wr = { .t = t, .l = &engine, .word = &w };
	struct latcher rd = { .t = t, .l = &engine, .word = &w, .shared = true };
	pthread_t tids[2];
	park_latcher(&wr, &tids[0], 0);
	ck_assert_int_eq(fwait_hlatch_trylock_shared(&engine, &w), -EBUSY);
	park_latcher(&rd, &tids[1], 1);
	ck_assert_int_eq(fwait_hlatch_unlock_shared(t, &engine, &w), 0);
	/* The writer gets it first or the woken reader does: one at a time
	 * (they exclude each other), and the other once it is let go. */
	bool wr_out = false, rd_out = false;
	for (int n = 0; n < 2; n++) {
		unsigned spins = 0;
		while (!(atomic_load(&wr.done) && !wr_out) && !(atomic_load(&rd.done) && !rd_out))
			th_poll_pause(&spins);
		bool wr_in = atomic_load(&wr.done) && !wr_out, rd_in = atomic_load(&rd.done) && !rd_out;
		ck_assert_msg(!(wr_in && rd_in), "writer and reader hold it together");
		if (wr_in) {
			ck_assert_int_eq(wr.rc, 0);
			ck_assert_uint_eq(st(&engine, &w), engine.exclusive);
			ck_assert_int_eq(fwait_hlatch_unlock(t, &engine, &w), 0);
			wr_out = true;
		} else {
			ck_assert_int_eq(rd.rc, 0);
			ck_assert_uint_eq(st(&engine, &w), 1);
			ck_assert_int_eq(fwait_hlatch_unlock_shared(t, &engine, &w), 0);
			rd_out = true;
		}
	}
	th_join_all(tids, 2, TH_DEADLINE_MS, "writer and reader", t);
	ck_assert_uint_eq(st(&engine, &w), 0);
	ck_assert_uint_eq(atomic_load(&w) & W63, 0);
	fwait_table_destroy(t);
}
END_TEST

/* A timed-out writer leaves W set; the next release goes slow once and
 * clears it.  Waiters of an eviction get -EAGAIN. */
START_TEST(timeout_and_eviction)
{
	struct fwait_table *t = th_table_for(FWAIT_WAKE_ONE, 0);
	fwait_atomic_u64 w = 0;
	ck_assert_int_eq(fwait_hlatch_lock(t, &engine, &w, NULL), 0);
	struct timespec dl = fwait_deadline_after_ns(2000000);
	ck_assert_int_eq(fwait_hlatch_lock(t, &engine, &w, &dl), -ETIMEDOUT);
	ck_assert_int_eq(fwait_hlatch_lock_shared(t, &engine, &w, &dl), -ETIMEDOUT);
	uint64_t snap;
	ck_assert_int_eq(fwait_hlatch_read_begin(t, &engine, &w, &dl, &snap), -ETIMEDOUT);
	ck_assert_uint_eq(atomic_load(&w) & W63, W63);
	ck_assert_int_eq(fwait_hlatch_unlock(t, &engine, &w), 0);
	ck_assert_uint_eq(atomic_load(&w) & W63, 0);

	ck_assert_int_eq(fwait_hlatch_lock(t, &engine, &w, NULL), 0);
	struct latcher a = { .t = t, .l = &engine, .word = &w };
	struct latcher b = { .t = t, .l = &engine, .word = &w, .shared = true };
	struct latcher c = { .t = t, .l = &engine, .word = &w };
	pthread_t tids[3];
	park_latcher(&a, &tids[0], 0);
	park_latcher(&b, &tids[1], 1);
	park_latcher(&c, &tids[2], 2);
	ck_assert_int_eq(fwait_hlatch_unlock_to(t, &engine, &w, EVICTED), 0);
	th_join_all(tids, 3, TH_DEADLINE_MS, "waiters of an evicted page", t);
	ck_assert_int_eq(a.rc, -EAGAIN);
	ck_assert_int_eq(b.rc, -EAGAIN);
	ck_assert_int_eq(c.rc, -EAGAIN);
	ck_assert_uint_eq(st(&engine, &w), EVICTED);
	ck_assert_uint_eq(atomic_load(&w) & W63, 0);
	fwait_table_destroy(t);
}
END_TEST

/* ---- stress ---------------------------------------------------------------- */

struct stress {
	struct fwait_table *t;
	const struct fwait_hlatch_layout *l;
	fwait_atomic_u64 word;
	/* The protected data: relaxed atomics, kept equal by writers. */
	_Atomic uint64_t a, b;
	_Atomic unsigned writers_in, readers_in;
	_Atomic uint64_t x_releases, restarts, validated;
	_Atomic bool bad;
	unsigned iters;
};

static const char *stress_label(int i);

struct stress_thread {
	struct stress *s;
	unsigned id;
};

static void *stress_main(void *arg)
{
	struct stress_thread *th = arg;
	struct stress *s = th->s;
	uint64_t rng = util_rand_seed(29, th->id);

	for (unsigned i = 0; i < s->iters; i++) {
		unsigned role = th->id % 3;
		if (role == 0 || util_rand_next(&rng) % 8 == 0) {
			if (fwait_hlatch_lock(s->t, s->l, &s->word, NULL) != 0) {
				atomic_store(&s->bad, true);
				break;
			}
			if (atomic_fetch_add(&s->writers_in, 1) != 0 || atomic_load(&s->readers_in))
				atomic_store(&s->bad, true);
			uint64_t v = atomic_load_explicit(&s->a, memory_order_relaxed) + 1;
			atomic_store_explicit(&s->a, v, memory_order_relaxed);
			/* Now and then give the CPU away while holding it: on
			 * two cores that is what makes others wait. */
			if (util_rand_next(&rng) % 16 == 0)
				sched_yield();
			atomic_store_explicit(&s->b, v, memory_order_relaxed);
			atomic_fetch_sub(&s->writers_in, 1);
			atomic_fetch_add(&s->x_releases, 1);
			if (fwait_hlatch_unlock(s->t, s->l, &s->word) != 0)
				atomic_store(&s->bad, true);
		} else if (role == 1) {
			if (fwait_hlatch_lock_shared(s->t, s->l, &s->word, NULL) != 0) {
				atomic_store(&s->bad, true);
				break;
			}
			atomic_fetch_add(&s->readers_in, 1);
			/* Shared counts are exact: ours is in the word (and
			 * every release got back -EPERM-free, and the word
			 * ends at 0, checked at the end). */
			unsigned c = fwait_hlatch_state(s->l, atomic_load(&s->word));
			if (atomic_load(&s->writers_in) || c < 1 || c > s->l->shared_max ||
			    atomic_load_explicit(&s->a, memory_order_relaxed) !=
			    atomic_load_explicit(&s->b, memory_order_relaxed))
				atomic_store(&s->bad, true);
			if (util_rand_next(&rng) % 16 == 0)
				sched_yield();
			atomic_fetch_sub(&s->readers_in, 1);
			if (fwait_hlatch_unlock_shared(s->t, s->l, &s->word) != 0)
				atomic_store(&s->bad, true);
		} else {
			uint64_t snap;
			if (fwait_hlatch_read_begin(s->t, s->l, &s->word, NULL, &snap) != 0) {
				atomic_store(&s->bad, true);
				break;
			}
			uint64_t a = atomic_load_explicit(&s->a, memory_order_relaxed);
			uint64_t b = atomic_load_explicit(&s->b, memory_order_relaxed);
			if (fwait_hlatch_validate(s->l, &s->word, snap)) {
				if (a != b)
					atomic_store(&s->bad, true);
				atomic_fetch_add(&s->validated, 1);
			} else {
				atomic_fetch_add(&s->restarts, 1);
			}
		}
	}
	return NULL;
}

/* The stress on table t (taken over) with layout l. */
static void stress_run(struct fwait_table *t, const struct fwait_hlatch_layout *l,
		       const char *label)
{
	struct stress s = { .t = t, .l = l, .iters = th_scaled(3000, 300) };
	unsigned n = th_scaled(24, 6);
	pthread_t *tids = calloc(n, sizeof *tids);
	struct stress_thread *ths = calloc(n, sizeof *ths);
	ck_assert_ptr_nonnull(tids);
	ck_assert_ptr_nonnull(ths);
	for (unsigned i = 0; i < n; i++) {
		ths[i] = (struct stress_thread){ .s = &s, .id = i };
		th_spawn(&tids[i], stress_main, &ths[i]);
	}
	th_join_all(tids, n, 60000, "hlatch stress", s.t);
	ck_assert(!atomic_load(&s.bad));
	uint64_t end = atomic_load(&s.word);
	ck_assert_uint_eq(fwait_hlatch_state(s.l, end), 0);
	ck_assert_uint_eq(fwait_hlatch_version(s.l, end), atomic_load(&s.x_releases));
	ck_assert_uint_eq(atomic_load(&s.a), atomic_load(&s.x_releases));
	/* Exact W: nobody timed out, so nobody left it set. */
	if (s.l->waiters_bit >= 0)
		ck_assert_uint_eq(end & W63, 0);
	ck_assert_uint_gt(atomic_load(&s.validated), 0);
	struct fwait_stats fs;
	fwait_stats_get(s.t, &fs);
	if (getenv("HLATCH_STATS"))
		fprintf(stderr, "%s: waits %llu wakeups %llu spurious %llu handoffs %llu slow_wakes %llu restarts %llu validated %llu\n",
			label, (unsigned long long)fs.waits, (unsigned long long)fs.wakeups,
			(unsigned long long)fs.spurious_wakeups, (unsigned long long)fs.handoffs,
			(unsigned long long)fs.slow_wakes, (unsigned long long)atomic_load(&s.restarts),
			(unsigned long long)atomic_load(&s.validated));
	free(tids);
	free(ths);
	fwait_table_destroy(s.t);
}

static const char *layout_label(int i)
{
	static const char *const names[NLAYOUTS] = { "engine", "no-w", "engine-store" };
	return names[i];
}

static const char *stress_label(int i)
{
	static char names[NLAYOUTS * TC_NVARIANTS][48];
	char *n = names[i];
	snprintf(n, sizeof names[0], "%s/%s", tc_variant_name(i / NLAYOUTS),
		 layout_label(i % NLAYOUTS));
	return n;
}

/* Loop index: variant * NLAYOUTS + layout. */
START_TEST(stress_mixed)
{
	stress_run(th_table_for(_i / NLAYOUTS, 4), layouts[_i % NLAYOUTS], stress_label(_i));
}
END_TEST

/* The same with a full fence after each release store instead of the
 * waiters' membarrier (what a kernel without it gets).  Loop index: a
 * layout. */
START_TEST(stress_fenced)
{
	struct fwait_config cfg = { .nbuckets = 4, .no_membarrier = true };
	struct fwait_table *t;
	ck_assert_int_eq(fwait_table_create(&t, &cfg), 0);
	stress_run(t, layouts[_i], layout_label(_i));
}
END_TEST

static const char *membarrier_label(int i)
{
	return i ? "fenced" : "membarrier";
}

int main(void)
{
	Suite *su = suite_create("fwait-hlatch");
	TCase *tc = tcase_create("hlatch");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, layout_check);
	th_add_loop(su, "hlatch", 60, uncontended_fields, 0, NLAYOUTS, layout_label);
	tcase_add_test(tc, marked_and_callers_states);
	tcase_add_test(tc, version_wraps_in_its_field);
	th_add_loop(su, "hlatch", 60, waiters_bit_is_exact, 0, TC_NVARIANTS, tc_variant_name);
	th_add_loop(su, "hlatch", 60, overwritten_w_is_restored, 0, 2, membarrier_label);
	tcase_add_test(tc, release_beside_another_words_waiter);
	tcase_add_test(tc, handoff_keeps_it_exclusive);
	th_add_loop(su, "hlatch", 60, readers_queue_behind_a_waiting_writer,
		    0, TC_NVARIANTS, tc_variant_name);
	tcase_add_test(tc, timeout_and_eviction);
	th_add_loop(su, "hlatch", 120, stress_mixed, 0, NLAYOUTS * TC_NVARIANTS, stress_label);
	th_add_loop(su, "hlatch fenced", 120, stress_fenced, 0, NLAYOUTS, layout_label);
	suite_add_tcase(su, tc);
	return check_run_suite(su);
}
