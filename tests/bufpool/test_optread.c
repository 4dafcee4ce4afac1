/* SPDX-License-Identifier: MIT */
/*
 * test_optread.c - optimistic reads (bp_read_begin/valid/end): a quiet
 * read validates; a writer or the frame's reuse in between makes it fail;
 * pages not readable are refused; bad input; and under writers, eviction
 * churn and hundreds of threads, no read that validates ever saw a torn
 * page or another page's bytes.
 *
 * The stress case also runs against a pool built without the version
 * raises (bufpool/meson.build, BP_TEST_NO_VERSION_RAISE), where it must
 * fail: tests/bufpool/meson.build runs that build as a should_fail test.
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

static struct bp_pool *open_pool(uint32_t nframes, uint64_t npages)
{
	struct bp_config c = bt_config(&dir, nframes, false);
	c.flags |= BP_OPEN_TRUNCATE;
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	for (uint64_t i = 0; i < npages; i++) {
		uint64_t pg;
		struct bp_frame *f;
		ck_assert_int_eq(bp_new_page(p, &pg, &f), 0);
		bt_fill(bp_data(f), bp_page_size(p), pg, 1);
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	return p;
}

static void write_page(struct bp_pool *p, uint64_t pg, uint64_t version)
{
	struct bp_frame *f;
	ck_assert_int_eq(bp_get(p, pg, 0, &f), 0);
	ck_assert_int_eq(bp_latch(p, f, BP_LATCH_EXCLUSIVE), 0);
	bt_fill(bp_data(f), bp_page_size(p), pg, version);
	ck_assert_int_eq(bp_mark_dirty(p, f), 0);
	ck_assert_int_eq(bp_unlatch(p, f, BP_LATCH_EXCLUSIVE), 0);
	ck_assert_int_eq(bp_release(p, f), 0);
}

START_TEST(quiet_read_validates)
{
	struct bp_pool *p = open_pool(8, 2);
	write_page(p, 1, 7);
	struct bp_read rd;
	ck_assert_int_eq(bp_read_begin(p, 1, &rd), 0);
	ck_assert(bt_check(bp_data(rd.frame), bp_page_size(p), 1, 7));
	ck_assert(bp_read_valid(&rd));
	ck_assert_int_eq(bp_read_end(&rd), 0);
	/* through the file, and on a pinned frame */
	ck_assert_int_eq(bp_file_read_begin(bp_pool_file(p), 1, &rd), 0);
	ck_assert_int_eq(bp_read_end(&rd), 0);
	struct bp_frame *f;
	ck_assert_int_eq(bp_get(p, 0, 0, &f), 0);
	ck_assert_int_eq(bp_read_begin_frame(p, f, &rd), 0);
	ck_assert_ptr_eq(rd.frame, f);
	ck_assert_int_eq(bp_read_end(&rd), 0);
	ck_assert_int_eq(bp_release(p, f), 0);
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.optimistic_reads, 3);
	ck_assert_uint_eq(s.optimistic_restarts, 0);
	ck_assert_uint_eq(s.frames_pinned, 0);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

START_TEST(writer_in_between_fails)
{
	struct bp_pool *p = open_pool(8, 2);
	struct bp_read rd;
	/* a whole exclusive hold between begin and end */
	ck_assert_int_eq(bp_read_begin(p, 1, &rd), 0);
	write_page(p, 1, 2);
	ck_assert(!bp_read_valid(&rd));
	ck_assert_int_eq(bp_read_end(&rd), -ESTALE);
	/* an exclusive holder still in the page at end */
	struct bp_frame *f;
	ck_assert_int_eq(bp_read_begin(p, 1, &rd), 0);
	ck_assert_int_eq(bp_get(p, 1, 0, &f), 0);
	ck_assert_int_eq(bp_latch(p, f, BP_LATCH_EXCLUSIVE), 0);
	ck_assert_int_eq(bp_read_end(&rd), -ESTALE);
	/* and at begin */
	ck_assert_int_eq(bp_read_begin(p, 1, &rd), -EBUSY);
	ck_assert_int_eq(bp_unlatch(p, f, BP_LATCH_EXCLUSIVE), 0);
	/* shared holders change nothing */
	ck_assert_int_eq(bp_read_begin(p, 1, &rd), 0);
	ck_assert_int_eq(bp_latch(p, f, BP_LATCH_SHARED), 0);
	ck_assert_int_eq(bp_unlatch(p, f, BP_LATCH_SHARED), 0);
	ck_assert_int_eq(bp_read_end(&rd), 0);
	ck_assert_int_eq(bp_release(p, f), 0);
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.optimistic_reads, 3);
	ck_assert_uint_eq(s.optimistic_restarts, 2);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

START_TEST(reuse_in_between_fails)
{
	struct bp_pool *p = open_pool(2, 4);
	struct bp_read rd;
	ck_assert_int_ge(bp_evict_all(p), 0);
	struct bp_frame *f;
	ck_assert_int_eq(bp_get(p, 0, 0, &f), 0);
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_read_begin(p, 0, &rd), 0);
	struct bp_frame *was = rd.frame;
	/* evicted: gone from the pool, a begin now refuses */
	ck_assert_int_eq(bp_evict_page(p, 0), 0);
	struct bp_read rd2;
	ck_assert_int_eq(bp_read_begin(p, 0, &rd2), -ENOENT);
	/* read again, into whichever frame: still not the page begun on */
	ck_assert_int_eq(bp_get(p, 0, 0, &f), 0);
	ck_assert(bt_check(bp_data(f), bp_page_size(p), 0, 1));
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_read_end(&rd), -ESTALE);
	(void)was;
	/* the frame reused for other pages while a read is open */
	ck_assert_int_eq(bp_read_begin(p, 0, &rd), 0);
	for (uint64_t pg = 1; pg < 4; pg++) {
		ck_assert_int_eq(bp_get(p, pg, 0, &f), 0);
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	ck_assert(!bp_read_valid(&rd));
	ck_assert_int_eq(bp_read_end(&rd), -ESTALE);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

struct slow_get {
	struct bp_pool *pool;
	int rc;
};

static void *slow_get_fn(void *arg)
{
	struct slow_get *g = arg;
	struct bp_frame *f;
	g->rc = bp_get(g->pool, 0, 0, &f);
	if (g->rc == 0)
		g->rc = bp_release(g->pool, f);
	return NULL;
}

struct read_started {
	struct bp_pool *pool;
};

static bool read_started(void *arg)
{
	uint32_t fl = bt_flags_of(((struct read_started *)arg)->pool, 0);
	return fl != UINT32_MAX && (fl & BP_F_LOCKED);
}

/* A page being read in (LOCKED, not yet UPTODATE) is refused, and read
 * optimistically once its read has completed. */
START_TEST(page_being_read_is_refused)
{
	bt_make_file(&dir, 2, 1);
	struct bp_config c = bt_config(&dir, 4, false);
	c.io_latency_us = 300000; /* the read stays in flight while we look */
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	struct slow_get g = { p, -1 };
	pthread_t tid;
	th_spawn(&tid, slow_get_fn, &g);
	struct read_started rs = { p };
	ck_assert_msg(th_poll(read_started, &rs, BT_DEADLINE_MS), "the read never started");
	struct bp_read rd;
	ck_assert_int_eq(bp_read_begin(p, 0, &rd), -ENOENT);
	th_join_all(&tid, 1, BT_DEADLINE_MS, "slow reader", NULL);
	ck_assert_int_eq(g.rc, 0);
	ck_assert_int_eq(bp_read_begin(p, 0, &rd), 0);
	ck_assert(bt_check(bp_data(rd.frame), bp_page_size(p), 0, 1));
	ck_assert_int_eq(bp_read_end(&rd), 0);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

START_TEST(bad_input)
{
	struct bp_pool *p = open_pool(4, 2);
	struct bp_read rd;
	memset(&rd, 0, sizeof(rd));
	ck_assert_int_eq(bp_read_begin(NULL, 0, &rd), -EINVAL);
	ck_assert_int_eq(bp_read_begin(p, 0, NULL), -EINVAL);
	ck_assert_int_eq(bp_file_read_begin(NULL, 0, &rd), -EINVAL);
	ck_assert_int_eq(bp_read_begin(p, UINT64_MAX, &rd), -EFBIG);
	ck_assert_int_eq(bp_read_begin(p, 5, &rd), -ENOENT);   /* past the end */
	ck_assert_int_eq(bp_read_end(NULL), -EINVAL);
	ck_assert_int_eq(bp_read_end(&rd), -EINVAL);            /* never begun */
	ck_assert(!bp_read_valid(NULL));
	ck_assert(!bp_read_valid(&rd));
	/* any page number at all, as a reader following a garbage pointer */
	uint64_t x = 88172645463325252u;
	for (unsigned i = 0; i < 100000; i++) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		uint64_t pg = i & 1 ? x : x % 8;
		int r = bp_read_begin(p, pg, &rd);
		ck_assert(r == 0 || r == -ENOENT || r == -EFBIG);
		if (r == 0) {
			ck_assert_uint_lt(pg, 2);
			ck_assert_int_eq(bp_read_end(&rd), 0);
		}
	}
	/* a second end; a frame not pinned; another pool's frame */
	ck_assert_int_eq(bp_read_begin(p, 0, &rd), 0);
	struct bp_frame *unpinned = rd.frame;
	ck_assert_int_eq(bp_read_end(&rd), 0);
	ck_assert_int_eq(bp_read_end(&rd), -EINVAL);
	ck_assert_int_eq(bp_read_begin_frame(p, unpinned, &rd), -EINVAL);
	ck_assert_int_eq(bp_read_begin_frame(NULL, unpinned, &rd), -EINVAL);
	ck_assert_int_eq(bp_read_begin_frame(p, NULL, &rd), -EINVAL);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* ---- stress ---- */

#define S_PAGES 24

struct stress {
	struct bp_pool *pool;
	unsigned iters;
	pthread_barrier_t start;
	atomic_uint torn, foreign, valid, errors;
	atomic_int last_error;
	atomic_uint writes[S_PAGES];
};

struct sworker {
	struct stress *st;
	unsigned id;
};

/* Page layout: word 0 = page number, words 1..W = the page's write count,
 * all equal.  A writer raises every count word under the exclusive latch,
 * yielding half-way now and then; a reader copies word 0 and the count
 * words optimistically, yielding half-way now and then, and only if the
 * read ends valid checks what it copied. */
#define S_WORDS 64

static void *stress_writer(void *arg)
{
	struct sworker *w = arg;
	struct stress *st = w->st;
	uint64_t seed = w->id * 2654435761u + 99;
	pthread_barrier_wait(&st->start);
	for (unsigned i = 0; i < st->iters; i++) {
		seed = seed * 6364136223846793005u + 1442695040888963407u;
		unsigned pg = (unsigned)(seed >> 33) % S_PAGES;
		struct bp_frame *f;
		/* 12 frames, 128 threads: a claim may lose to the others'
		 * (-EBUSY, evict.c's bounded rounds); the write must still
		 * happen, so try again */
		int r;
		while ((r = bp_get_timed(st->pool, pg, 0, NULL, &f)) == -EBUSY)
			sched_yield();
		if (r != 0) {
			atomic_store(&st->last_error, r);
			atomic_fetch_add(&st->errors, 1);
			continue;
		}
		bp_latch(st->pool, f, BP_LATCH_EXCLUSIVE);
		volatile uint64_t *d = bp_data(f);
		for (unsigned k = 1; k <= S_WORDS; k++) {
			d[k]++;
			if (k == S_WORDS / 2 && (seed >> 50) % 4 == 0)
				sched_yield();
		}
		bp_mark_dirty(st->pool, f);
		atomic_fetch_add(&st->writes[pg], 1);
		bp_unlatch(st->pool, f, BP_LATCH_EXCLUSIVE);
		bp_release(st->pool, f);
	}
	return NULL;
}

static void *stress_reader(void *arg)
{
	struct sworker *w = arg;
	struct stress *st = w->st;
	uint64_t seed = w->id * 2654435761u + 7;
	uint64_t copy[S_WORDS + 1];
	pthread_barrier_wait(&st->start);
	for (unsigned i = 0; i < st->iters; i++) {
		seed = seed * 6364136223846793005u + 1442695040888963407u;
		unsigned pg = (unsigned)(seed >> 33) % S_PAGES;
		struct bp_read rd;
		int r = bp_read_begin(st->pool, pg, &rd);
		if (r < 0) {
			/* not resident or being written: bring it in the
			 * usual way, which also evicts another page (or
			 * finds every frame pinned: -EBUSY, fine here) */
			struct bp_frame *f;
			if (bp_get(st->pool, pg, 0, &f) == 0)
				bp_release(st->pool, f);
			continue;
		}
		const volatile uint64_t *d = rd.data;
		for (unsigned k = 0; k <= S_WORDS; k++) {
			copy[k] = d[k];
			if (k == S_WORDS / 2 && (seed >> 50) % 4 == 0)
				sched_yield();
		}
		if (bp_read_end(&rd) != 0)
			continue;
		atomic_fetch_add(&st->valid, 1);
		if (copy[0] != pg)
			atomic_fetch_add(&st->foreign, 1);
		for (unsigned k = 2; k <= S_WORDS; k++)
			if (copy[k] != copy[1]) {
				atomic_fetch_add(&st->torn, 1);
				break;
			}
	}
	return NULL;
}

START_TEST(validated_reads_are_whole_pages)
{
	/* fewer frames than pages: the readers' misses keep evicting */
	struct bp_config c = bt_config(&dir, 12, true);
	c.flags |= BP_OPEN_TRUNCATE;
	c.writer_interval_ms = 1;
	struct stress st;
	memset(&st, 0, sizeof(st));
	ck_assert_int_eq(bp_open(&st.pool, &c), 0);
	for (uint64_t i = 0; i < S_PAGES; i++) {
		uint64_t pg;
		struct bp_frame *f;
		ck_assert_int_eq(bp_new_page(st.pool, &pg, &f), 0);
		uint64_t *d = bp_data(f);
		d[0] = pg;
		ck_assert_int_eq(bp_release(st.pool, f), 0);
	}
	enum { NW = 8, NR = 120, N = NW + NR };
	st.iters = th_scaled(3000, 300);
	pthread_barrier_init(&st.start, NULL, N);
	struct sworker w[N];
	pthread_t tids[N];
	for (unsigned i = 0; i < N; i++) {
		w[i] = (struct sworker){ &st, i };
		th_spawn(&tids[i], i < NW ? stress_writer : stress_reader, &w[i]);
	}
	th_join_all(tids, N, 4 * BT_DEADLINE_MS, "optimistic readers and writers", NULL);
	ck_assert_msg(atomic_load(&st.torn) == 0 && atomic_load(&st.foreign) == 0,
		      "validated reads: %u torn, %u of another page (of %u)",
		      atomic_load(&st.torn), atomic_load(&st.foreign), atomic_load(&st.valid));
	ck_assert_msg(atomic_load(&st.errors) == 0, "%u writes failed, the last with %d",
		      atomic_load(&st.errors), atomic_load(&st.last_error));
	ck_assert_uint_gt(atomic_load(&st.valid), 0);
	/* every write is in its page (the writers' own counts) */
	for (unsigned pg = 0; pg < S_PAGES; pg++) {
		struct bp_frame *f;
		ck_assert_int_eq(bp_get(st.pool, pg, 0, &f), 0);
		const uint64_t *d = bp_data(f);
		ck_assert_uint_eq(d[0], pg);
		ck_assert_uint_eq(d[1], atomic_load(&st.writes[pg]));
		ck_assert_int_eq(bp_release(st.pool, f), 0);
	}
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(st.pool, &s), 0);
	ck_assert_uint_ge(s.optimistic_reads, atomic_load(&st.valid));
	ck_assert_uint_eq(s.optimistic_reads - s.optimistic_restarts, atomic_load(&st.valid));
	ck_assert_int_eq(bp_close(st.pool), 0);
	pthread_barrier_destroy(&st.start);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bufpool optread");
	TCase *tc = tcase_create("optread");
	tcase_add_unchecked_fixture(tc, bt_root_make, bt_root_remove);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 240);
	if (!getenv("BP_OPTREAD_STRESS_ONLY")) {
		tcase_add_test(tc, quiet_read_validates);
		tcase_add_test(tc, writer_in_between_fails);
		tcase_add_test(tc, reuse_in_between_fails);
		tcase_add_test(tc, page_being_read_is_refused);
		tcase_add_test(tc, bad_input);
	}
	tcase_add_test(tc, validated_reads_are_whole_pages);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(suite());
}
