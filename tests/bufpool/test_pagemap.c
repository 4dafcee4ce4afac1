/* SPDX-License-Identifier: MIT */
/*
 * test_pagemap.c - white-box: the lookups' hints (pagetable.c): the home
 * frames and the page map, the dense hint from page number to frame that
 * the lock-free lookups try before the hash chains.
 *
 * Design note: the map is only a hint, so the pool stays correct whatever
 * it holds as long as every lookup checks the frame it names; what these
 * tests pin down is that it is kept exact (set by an insert, cleared by
 * the removal, so a hit never pays the chain walk), that a wrong entry
 * costs nothing but the walk (a lookup through a stale entry still finds
 * the page's real frame), and that pages past the map's range work
 * through the chains alone.  For the home frames: a page claimed while
 * its home is free lives there (so a lookup needs no map), and a home
 * that holds another page, or none, is only a candidate: the lookup goes
 * on to the map and the chain.  They read and write map entries through
 * bp_pt_map_entry, so they link the test-only static build of the pool
 * (bufpool/meson.build).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "bp_helpers.h"
#include "bufpool/internal.h"
#include "../check_run.h"

static struct bt_dir dir;

static void setup(void) { bt_dir_make(&dir); }
static void teardown(void) { bt_dir_remove(&dir); }

/* The frame the map names for page, or NULL. */
static struct bp_frame *named(struct bp_pool *p, uint64_t page)
{
	_Atomic uint32_t *e = bp_pt_map_entry(bp_file0(p), page, false);
	uint32_t i = e ? atomic_load(e) : 0;
	return i ? &p->frames[i - 1] : NULL;
}

/* Every page of the file: named iff resident, and then by its own frame. */
static void check_exact(struct bp_pool *p, uint64_t npages)
{
	for (uint64_t pg = 0; pg < npages; pg++) {
		struct bp_frame *f = named(p, pg);
		bool resident = bp_pt_contains(p, bp_tag(0, pg));
		ck_assert_msg(resident == (f != NULL), "page %llu: resident %d, named %p",
			      (unsigned long long)pg, resident, (void *)f);
		if (f)
			ck_assert_uint_eq(atomic_load(&f->tag), bp_tag(0, pg));
	}
}

START_TEST(map_follows_the_table)
{
	const uint64_t npages = 40;
	bt_make_file(&dir, npages, 1);
	struct bp_pool *p;
	struct bp_config c = bt_config(&dir, 4, false);
	ck_assert_int_eq(bp_open(&p, &c), 0);
	check_exact(p, npages);
	/* 4 frames for 40 pages: every get past the fourth evicts one */
	for (unsigned round = 0; round < 3; round++) {
		for (uint64_t pg = 0; pg < npages; pg += 1 + round) {
			struct bp_frame *f;
			ck_assert_int_eq(bp_get(p, pg, 0, &f), 0);
			ck_assert_ptr_eq(named(p, pg), f);
			ck_assert(bt_check(bp_data(f), bp_page_size(p), pg, 1));
			ck_assert_int_eq(bp_release(p, f), 0);
			check_exact(p, npages);
		}
	}
	/* an evicted page leaves no entry */
	struct bp_frame *f;
	ck_assert_int_eq(bp_get(p, 7, 0, &f), 0);
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_evict_page(p, 7), 0);
	ck_assert_ptr_null(named(p, 7));
	check_exact(p, npages);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

START_TEST(a_stale_entry_costs_only_the_walk)
{
	bt_make_file(&dir, 8, 1);
	struct bp_pool *p;
	struct bp_config c = bt_config(&dir, 4, false);
	ck_assert_int_eq(bp_open(&p, &c), 0);
	struct bp_frame *fa, *fb, *g, *home;
	/* page 2 takes its home, frame 2; page 6, whose home is frame 2 too,
	 * lives elsewhere, so its lookups need the map */
	ck_assert_int_eq(bp_get(p, 2, 0, &home), 0);
	ck_assert_uint_eq(home->index, bp_home(p, bp_tag(0, 6)));
	ck_assert_int_eq(bp_get(p, 6, 0, &fa), 0);
	ck_assert_int_eq(bp_get(p, 5, 0, &fb), 0);
	ck_assert_ptr_ne(fa, home);
	ck_assert_ptr_ne(fa, fb);
	/* page 6's entry names page 5's frame (as a lookup racing with an
	 * eviction and a reuse might find it) */
	atomic_store(bp_pt_map_entry(bp_file0(p), 6, false), fb->index + 1);
	/* the optimistic read of page 6 still reads page 6, through the chain */
	struct bp_read rd;
	ck_assert_int_eq(bp_read_begin(p, 6, &rd), 0);
	ck_assert_ptr_eq(rd.frame, fa);
	ck_assert_ptr_eq(rd.data, bp_data(fa));
	ck_assert(bt_check(rd.data, bp_page_size(p), 6, 1));
	ck_assert_int_eq(bp_read_end(&rd), 0);
	/* and so does a pinned hit */
	ck_assert_int_eq(bp_get(p, 6, 0, &g), 0);
	ck_assert_ptr_eq(g, fa);
	ck_assert_int_eq(bp_release(p, g), 0);
	/* an empty entry of a resident page: the chain again */
	atomic_store(bp_pt_map_entry(bp_file0(p), 6, false), 0);
	ck_assert_int_eq(bp_read_begin(p, 6, &rd), 0);
	ck_assert_ptr_eq(rd.frame, fa);
	ck_assert_int_eq(bp_read_end(&rd), 0);
	/* the removal leaves another frame's entry alone */
	atomic_store(bp_pt_map_entry(bp_file0(p), 6, false), fb->index + 1);
	ck_assert_int_eq(bp_release(p, fa), 0);
	ck_assert_int_eq(bp_evict_page(p, 6), 0);
	ck_assert_ptr_eq(named(p, 6), fb);
	ck_assert_int_eq(bp_release(p, fb), 0);
	ck_assert_int_eq(bp_release(p, home), 0);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* Pages claimed while their homes are free live there, whatever order
 * they come in (the clock alone would give frames 0, 1, ... in the order
 * of the misses), and so do new pages. */
START_TEST(pages_live_at_home_while_they_fit)
{
	const uint64_t npages = 12;
	bt_make_file(&dir, npages, 1);
	struct bp_pool *p;
	struct bp_config c = bt_config(&dir, 16, false);
	ck_assert_int_eq(bp_open(&p, &c), 0);
	for (uint64_t pg = npages; pg-- > 0;) {
		struct bp_frame *f;
		ck_assert_int_eq(bp_get(p, pg, 0, &f), 0);
		ck_assert_uint_eq(f->index, pg);
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	for (uint64_t pg = npages; pg < 16; pg++) {
		uint64_t n;
		struct bp_frame *f;
		ck_assert_int_eq(bp_new_page(p, &n, &f), 0);
		ck_assert_uint_eq(n, pg);
		ck_assert_uint_eq(f->index, pg);
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	for (uint64_t pg = 0; pg < npages; pg++) {
		struct bp_read rd;
		ck_assert_int_eq(bp_read_begin(p, pg, &rd), 0);
		ck_assert_uint_eq(rd.frame->index, pg);
		ck_assert(bt_check(rd.data, bp_page_size(p), pg, 1));
		ck_assert_int_eq(bp_read_end(&rd), 0);
	}
	ck_assert_int_eq(bp_discard(p), 0);
}
END_TEST

/* A home frame holding another page, or none, is only a candidate: the
 * lookups must not take it for the page they look for. */
START_TEST(a_home_is_only_a_candidate)
{
	bt_make_file(&dir, 12, 1);
	struct bp_pool *p;
	struct bp_config c = bt_config(&dir, 4, false);
	ck_assert_int_eq(bp_open(&p, &c), 0);
	struct bp_frame *f1, *f5, *g;
	/* page 1 at its home (frame 1); page 5 (home 1 too) elsewhere */
	ck_assert_int_eq(bp_get(p, 1, 0, &f1), 0);
	ck_assert_uint_eq(f1->index, 1);
	ck_assert_int_eq(bp_get(p, 5, 0, &f5), 0);
	ck_assert_uint_eq(bp_home(p, bp_tag(0, 5)), 1);
	ck_assert_ptr_ne(f5, f1);
	ck_assert_int_eq(bp_release(p, f1), 0);
	for (int round = 0; round < 2; round++) {
		struct bp_read rd;
		ck_assert_int_eq(bp_read_begin(p, 5, &rd), 0);
		ck_assert_ptr_eq(rd.frame, f5);
		ck_assert(bt_check(rd.data, bp_page_size(p), 5, 1));
		ck_assert_int_eq(bp_read_end(&rd), 0);
		ck_assert_int_eq(bp_get(p, 5, 0, &g), 0);
		ck_assert_ptr_eq(g, f5);
		ck_assert(bt_check(bp_data(g), bp_page_size(p), 5, 1));
		ck_assert_int_eq(bp_release(p, g), 0);
		/* the second time round the home holds no page */
		ck_assert_int_eq(bp_evict_page(p, 1), round ? -ENOENT : 0);
		ck_assert_uint_eq(atomic_load(&p->frames[1].tag), BP_NO_PAGE);
	}
	ck_assert_int_eq(bp_release(p, f5), 0);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

START_TEST(pages_past_the_map_use_the_chains)
{
	struct bp_config c = bt_config(&dir, 4, false);
	c.page_size = 512; /* the file is sparse up to 8 GiB */
	c.flags |= BP_OPEN_TRUNCATE;
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	const uint64_t far = BP_PMAP_PAGES + 3;
	struct bp_frame *f, *g;
	ck_assert_int_eq(bp_get(p, far, BP_GET_CREATE, &f), 0);
	ck_assert_ptr_null(bp_pt_map_entry(bp_file0(p), far, true));
	bt_fill(bp_data(f), 512, far, 4);
	ck_assert_int_eq(bp_get(p, far, 0, &g), 0);
	ck_assert_ptr_eq(g, f);
	ck_assert_int_eq(bp_release(p, g), 0);
	struct bp_read rd;
	ck_assert_int_eq(bp_read_begin(p, far, &rd), 0);
	ck_assert_ptr_eq(rd.frame, f);
	ck_assert(bt_check(rd.data, 512, far, 4));
	ck_assert_int_eq(bp_read_end(&rd), 0);
	/* the last page with a hint has one */
	ck_assert_int_eq(bp_get(p, BP_PMAP_PAGES - 1, BP_GET_CREATE, &g), 0);
	ck_assert_ptr_eq(named(p, BP_PMAP_PAGES - 1), g);
	ck_assert_int_eq(bp_release(p, g), 0);
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_discard(p), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bufpool pagemap");
	TCase *tc = tcase_create("pagemap");
	tcase_add_unchecked_fixture(tc, bt_root_make, bt_root_remove);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, map_follows_the_table);
	tcase_add_test(tc, a_stale_entry_costs_only_the_walk);
	tcase_add_test(tc, pages_past_the_map_use_the_chains);
	tcase_add_test(tc, pages_live_at_home_while_they_fit);
	tcase_add_test(tc, a_home_is_only_a_candidate);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(suite());
}
