/* SPDX-License-Identifier: MIT */
/*
 * test_files.c - many files in one pool: pages of different files with the
 * same numbers stay apart through eviction and I/O; a file closes (its
 * pages written, fsynced and dropped), discards (dropped unwritten) and
 * truncates (DropRelationBuffers) while the others go on; the reports and
 * the sticky fsync state are per file; bad input is refused.
 *
 * Design note: file A is the pool's file 0 (bp_open's), B and C are opened
 * with bp_file_open in the same directory.  A page of a file at number pg
 * holds bt_fill(pg, version) with a version per file, so a page read from
 * the wrong file fails bt_check.  The pool is small (4 frames) against
 * 3 x 6 pages, so every pass evicts and reads back.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bp_helpers.h"
#include "../check_run.h"

#define NPG 6
#define PS 4096u

static struct bt_dir dir;
static char path_b[200], path_c[200];

static void setup(void)
{
	bt_dir_make(&dir);
	snprintf(path_b, sizeof(path_b), "%s/b", dir.path);
	snprintf(path_c, sizeof(path_c), "%s/c", dir.path);
}

static void teardown(void)
{
	unlink(path_b);
	unlink(path_c);
	bt_dir_remove(&dir);
}

static struct bp_pool *open_pool(uint32_t nframes, unsigned extra_flags)
{
	struct bp_config c = bt_config(&dir, nframes, false);
	c.flags |= BP_OPEN_TRUNCATE | extra_flags;
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	return p;
}

static struct bp_file *open_file(struct bp_pool *p, const char *path, unsigned flags)
{
	struct bp_file *file = NULL;
	ck_assert_int_eq(bp_file_open(&file, p, path, flags), 0);
	ck_assert_ptr_nonnull(file);
	return file;
}

/* Write pages 0..n-1 of file with version v (created as needed). */
static void write_pages(struct bp_pool *p, struct bp_file *file, uint64_t n, uint64_t v)
{
	for (uint64_t pg = 0; pg < n; pg++) {
		struct bp_frame *f;
		ck_assert_int_eq(bp_file_get(file, pg, BP_GET_CREATE, &f), 0);
		ck_assert_uint_eq(bp_frame_file_id(f), bp_file_id(file));
		ck_assert_uint_eq(bp_frame_pageno(f), pg);
		ck_assert_int_eq(bp_latch(p, f, BP_LATCH_EXCLUSIVE), 0);
		bt_fill(bp_data(f), PS, pg, v);
		ck_assert_int_eq(bp_mark_dirty(p, f), 0);
		ck_assert_int_eq(bp_unlatch(p, f, BP_LATCH_EXCLUSIVE), 0);
		ck_assert_int_eq(bp_release(p, f), 0);
	}
}

/* Every page 0..n-1 of file holds version v. */
static void check_pages(struct bp_pool *p, struct bp_file *file, uint64_t n, uint64_t v)
{
	for (uint64_t pg = 0; pg < n; pg++) {
		struct bp_frame *f;
		ck_assert_int_eq(bp_file_get(file, pg, 0, &f), 0);
		ck_assert_msg(bt_check(bp_data(f), PS, pg, v), "file %u page %llu is not version %llu",
			      bp_file_id(file), (unsigned long long)pg, (unsigned long long)v);
		ck_assert_int_eq(bp_release(p, f), 0);
	}
}

struct per_file {
	unsigned frames[4];  /* mapped frames per file id 0..3 */
};

static int count_files(const struct bp_frame_info *info, void *arg)
{
	struct per_file *pf = arg;
	if (info->pageno != BP_NO_PAGE && info->file < 4)
		pf->frames[info->file]++;
	return 0;
}

static struct per_file frames_per_file(struct bp_pool *p)
{
	struct per_file pf = { { 0 } };
	ck_assert_int_eq(bp_frames_walk(p, count_files, &pf), 0);
	return pf;
}

/* Same page numbers in three files, 4 frames: they never mix, through
 * eviction, write-back and reads; the page counts are per file; after a
 * close and reopen of the whole pool every file has its own pages. */
START_TEST(files_keep_their_pages_apart)
{
	struct bp_pool *p = open_pool(4, 0);
	struct bp_file *a = bp_pool_file(p);
	ck_assert_uint_eq(bp_file_id(a), 0);
	struct bp_file *b = open_file(p, path_b, BP_OPEN_CREATE | BP_OPEN_TRUNCATE);
	struct bp_file *c = open_file(p, path_c, BP_OPEN_CREATE | BP_OPEN_TRUNCATE);
	ck_assert_uint_eq(bp_file_id(b), 1);
	ck_assert_uint_eq(bp_file_id(c), 2);
	write_pages(p, a, NPG, 1);
	write_pages(p, b, NPG, 2);
	write_pages(p, c, NPG - 2, 3);
	ck_assert_uint_eq(bp_page_count(p), NPG);
	ck_assert_uint_eq(bp_file_page_count(a), NPG);
	ck_assert_uint_eq(bp_file_page_count(b), NPG);
	ck_assert_uint_eq(bp_file_page_count(c), NPG - 2);
	for (int round = 0; round < 2; round++) {
		check_pages(p, c, NPG - 2, 3);
		check_pages(p, a, NPG, 1);
		check_pages(p, b, NPG, 2);
	}
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_gt(s.evictions, 0);
	ck_assert_uint_eq(s.file_pages, NPG);
	ck_assert_int_eq(bp_flush(p), 0);
	ck_assert_int_eq(bp_file_close(c), 0);
	ck_assert_int_eq(bp_file_close(b), 0);
	ck_assert_int_eq(bp_close(p), 0);

	struct stat st;
	ck_assert_int_eq(stat(path_b, &st), 0);
	ck_assert_int_eq(st.st_size, (off_t)NPG * PS);
	struct bp_config cfg = bt_config(&dir, 4, false);
	ck_assert_int_eq(bp_open(&p, &cfg), 0);
	b = open_file(p, path_b, 0);
	c = open_file(p, path_c, BP_OPEN_READONLY);
	check_pages(p, b, NPG, 2);
	check_pages(p, bp_pool_file(p), NPG, 1);
	check_pages(p, c, NPG - 2, 3);
	ck_assert_int_eq(bp_file_close(b), 0);
	ck_assert_int_eq(bp_file_close(c), 0);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* bp_file_close writes the file's dirty pages and drops them, leaving the
 * other files' pages (dirty ones too) alone; a pinned page refuses it; the
 * id is reused; what was written is there on reopen.  bp_file_discard
 * drops dirty pages unwritten. */
START_TEST(close_and_discard_one_file)
{
	struct bp_pool *p = open_pool(8, 0);
	struct bp_file *b = open_file(p, path_b, BP_OPEN_CREATE | BP_OPEN_TRUNCATE);
	write_pages(p, bp_pool_file(p), 3, 1);
	write_pages(p, b, 3, 2);
	struct per_file pf = frames_per_file(p);
	ck_assert_uint_eq(pf.frames[0], 3);
	ck_assert_uint_eq(pf.frames[1], 3);

	struct bp_frame *f;
	ck_assert_int_eq(bp_file_get(b, 1, 0, &f), 0);
	ck_assert_int_eq(bp_file_close(b), -EBUSY);
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_file_close(b), 0);
	pf = frames_per_file(p);
	ck_assert_uint_eq(pf.frames[0], 3);     /* A's pages stay, still dirty */
	ck_assert_uint_eq(pf.frames[1], 0);
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.frames_dirty, 3);

	b = open_file(p, path_b, 0);            /* id 1 again, pages on disk */
	ck_assert_uint_eq(bp_file_id(b), 1);
	ck_assert_uint_eq(bp_file_page_count(b), 3);
	check_pages(p, b, 3, 2);
	write_pages(p, b, 3, 5);                /* dirty, then thrown away */
	ck_assert_int_eq(bp_file_discard(b), 0);
	b = open_file(p, path_b, 0);
	check_pages(p, b, 3, 2);
	ck_assert_int_eq(bp_file_close(b), 0);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* bp_file_truncate drops the pages past the new end unwritten (a dirty one
 * included), shortens the file and its count; a pinned page past the end
 * refuses it and nothing is dropped; pages below stay. */
START_TEST(truncate_drops_the_tail)
{
	struct bp_pool *p = open_pool(8, 0);
	struct bp_file *b = open_file(p, path_b, BP_OPEN_CREATE | BP_OPEN_TRUNCATE);
	write_pages(p, b, NPG, 2);
	ck_assert_int_eq(bp_flush(p), 0);
	write_pages(p, b, NPG, 3);              /* all dirty again */
	struct bp_frame *f;
	ck_assert_int_eq(bp_file_get(b, 4, 0, &f), 0);
	ck_assert_int_eq(bp_file_truncate(b, 3), -EBUSY);
	ck_assert_uint_eq(frames_per_file(p).frames[1], NPG);
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_file_truncate(b, 3), 0);
	ck_assert_uint_eq(frames_per_file(p).frames[1], 3);
	ck_assert_uint_eq(bp_file_page_count(b), 3);
	struct stat st;
	ck_assert_int_eq(stat(path_b, &st), 0);
	ck_assert_int_eq(st.st_size, 3 * (off_t)PS);
	ck_assert_int_eq(bp_file_get(b, 4, 0, &f), -ENXIO);
	check_pages(p, b, 3, 3);
	/* Emptied, then grown again: the new page 3 is zeros, not the old. */
	ck_assert_int_eq(bp_file_truncate(b, 0), 0);
	ck_assert_int_eq(bp_file_get(b, 3, BP_GET_CREATE, &f), 0);
	const unsigned char *d = bp_data(f);
	for (unsigned i = 0; i < PS; i++)
		ck_assert_uint_eq(d[i], 0);
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_uint_eq(bp_file_page_count(b), 4);
	ck_assert_int_eq(bp_file_close(b), 0);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* The sticky fsync state is the file's: a failed fsync of file 0 (the
 * first the flush syncs) fails every later flush and bp_close, but file B
 * closes, as its fsyncs succeed. */
START_TEST(fsync_failure_is_per_file)
{
	struct bp_pool *p = open_pool(8, 0);
	struct bp_file *b = open_file(p, path_b, BP_OPEN_CREATE | BP_OPEN_TRUNCATE);
	write_pages(p, bp_pool_file(p), 2, 1);
	write_pages(p, b, 2, 2);
	struct bp_fault fa = { .op = BP_FAULT_FSYNC, .kind = BP_FAULT_FAIL, .count = 1 };
	ck_assert_int_eq(bp_fault_set(p, &fa), 0);
	ck_assert_int_eq(bp_flush(p), -EIO);
	ck_assert_int_eq(bp_file_durability_err(bp_pool_file(p)), -EIO);
	ck_assert_int_eq(bp_file_durability_err(b), 0);
	ck_assert_int_eq(bp_durability_err(p), -EIO);
	ck_assert_int_eq(bp_flush(p), -EIO);
	ck_assert_int_eq(bp_file_close(b), 0);
	ck_assert_int_eq(bp_close(p), -EIO);
	ck_assert_int_eq(bp_discard(p), 0);
}
END_TEST

/* Read-only files, a read-only pool, and bad input. */
START_TEST(bad_input_and_read_only)
{
	struct bp_pool *p = open_pool(8, 0);
	struct bp_file *b = NULL;
	ck_assert_int_eq(bp_file_open(NULL, p, path_b, 0), -EINVAL);
	ck_assert_int_eq(bp_file_open(&b, NULL, path_b, 0), -EINVAL);
	ck_assert_int_eq(bp_file_open(&b, p, NULL, 0), -EINVAL);
	ck_assert_int_eq(bp_file_open(&b, p, "", 0), -EINVAL);
	ck_assert_int_eq(bp_file_open(&b, p, path_b, BP_OPEN_DIRECT), -EINVAL);
	ck_assert_int_eq(bp_file_open(&b, p, path_b, BP_OPEN_READONLY | BP_OPEN_CREATE), -EINVAL);
	ck_assert_int_eq(bp_file_open(&b, p, path_b, 0), -ENOENT);
	ck_assert_ptr_null(b);
	ck_assert_int_eq(bp_file_close(NULL), -EINVAL);
	ck_assert_int_eq(bp_file_close(bp_pool_file(p)), -EINVAL);
	ck_assert_int_eq(bp_file_discard(bp_pool_file(p)), -EINVAL);
	ck_assert_int_eq(bp_file_truncate(NULL, 0), -EINVAL);
	ck_assert_uint_eq(bp_file_id(NULL), UINT32_MAX);
	ck_assert_uint_eq(bp_file_page_count(NULL), 0);
	ck_assert_int_eq(bp_file_durability_err(NULL), -EINVAL);
	ck_assert_ptr_null(bp_pool_file(NULL));
	ck_assert_uint_eq(bp_frame_file_id(NULL), UINT32_MAX);
	struct bp_frame *f;
	ck_assert_int_eq(bp_file_get(NULL, 0, 0, &f), -EINVAL);
	uint64_t pg;
	ck_assert_int_eq(bp_file_new_page(NULL, &pg, &f), -EINVAL);
	ck_assert_int_eq(bp_evict_page(p, (UINT64_C(1) << 48) | 1), -ENOENT);

	b = open_file(p, path_b, BP_OPEN_CREATE);
	ck_assert_int_eq(bp_file_new_page(b, &pg, &f), 0);
	ck_assert_uint_eq(pg, 0);
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_file_close(b), 0);
	b = open_file(p, path_b, BP_OPEN_READONLY);
	ck_assert_int_eq(bp_file_get(b, 5, BP_GET_CREATE, &f), -EROFS);
	ck_assert_int_eq(bp_file_new_page(b, &pg, &f), -EROFS);
	ck_assert_int_eq(bp_file_truncate(b, 0), -EROFS);
	ck_assert_int_eq(bp_file_get(b, 0, 0, &f), 0);
	ck_assert_int_eq(bp_mark_dirty(p, f), -EROFS);
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_file_close(b), 0);
	ck_assert_int_eq(bp_close(p), 0);

	struct bp_config ro = bt_config(&dir, 8, false);
	ro.flags = BP_OPEN_READONLY | BP_OPEN_NO_BGWRITER;
	ck_assert_int_eq(bp_open(&p, &ro), 0);
	ck_assert_int_eq(bp_file_open(&b, p, path_b, 0), -EROFS);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* Checksums seal a page with its number in its own file: a file written as
 * file 1 of one pool reads back as file 0 of another. */
START_TEST(checksums_use_the_file_page_number)
{
	struct bp_pool *p = open_pool(8, BP_OPEN_CHECKSUMS);
	struct bp_file *b = open_file(p, path_b, BP_OPEN_CREATE | BP_OPEN_TRUNCATE);
	for (uint64_t pg = 0; pg < 3; pg++) {
		struct bp_frame *f;
		ck_assert_int_eq(bp_file_get(b, pg, BP_GET_CREATE, &f), 0);
		ck_assert_int_eq(bp_latch(p, f, BP_LATCH_EXCLUSIVE), 0);
		bt_fill(bp_data(f), bp_data_size(p), pg, 4);
		ck_assert_int_eq(bp_mark_dirty(p, f), 0);
		ck_assert_int_eq(bp_unlatch(p, f, BP_LATCH_EXCLUSIVE), 0);
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	ck_assert_int_eq(bp_file_close(b), 0);
	ck_assert_int_eq(bp_close(p), 0);
	struct bp_config c = bt_config(&dir, 8, false);
	c.path = path_b;
	c.flags |= BP_OPEN_CHECKSUMS;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	for (uint64_t pg = 0; pg < 3; pg++) {
		struct bp_frame *f;
		ck_assert_int_eq(bp_get(p, pg, 0, &f), 0);
		ck_assert(bt_check(bp_data(f), bp_data_size(p), pg, 4));
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* Threads on three files through four frames: every page read is its
 * file's and its last version (each thread owns pages: page = thread id). */
struct worker {
	struct bp_pool *p;
	struct bp_file *files[3];
	unsigned id;
	int bad;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t rng = util_rand_seed(11, w->id);
	uint64_t version[3] = { 0, 0, 0 };
	for (unsigned i = 0; i < 300; i++) {
		unsigned fi = (unsigned)(util_rand_next(&rng) % 3);
		struct bp_frame *f;
		int r = bp_file_get(w->files[fi], w->id, BP_GET_CREATE, &f);
		if (r == -EBUSY) {
			sched_yield();
			continue; /* all four frames pinned by the others: retry */
		}
		if (r != 0) {
			w->bad = r;
			return NULL;
		}
		bp_latch(w->p, f, BP_LATCH_EXCLUSIVE);
		if (version[fi] && !bt_check(bp_data(f), PS, w->id + 100 * fi, version[fi]))
			w->bad = -EBADMSG;
		version[fi]++;
		bt_fill(bp_data(f), PS, w->id + 100 * fi, version[fi]);
		bp_mark_dirty(w->p, f);
		bp_unlatch(w->p, f, BP_LATCH_EXCLUSIVE);
		bp_release(w->p, f);
		if (w->bad)
			return NULL;
	}
	return NULL;
}

START_TEST(threads_on_three_files)
{
	enum { N = 6 };
	struct bp_pool *p = open_pool(4, 0);
	struct bp_file *files[3] = { bp_pool_file(p),
				     open_file(p, path_b, BP_OPEN_CREATE | BP_OPEN_TRUNCATE),
				     open_file(p, path_c, BP_OPEN_CREATE | BP_OPEN_TRUNCATE) };
	struct worker ws[N];
	pthread_t tids[N];
	for (unsigned i = 0; i < N; i++) {
		ws[i] = (struct worker){ p, { files[0], files[1], files[2] }, i, 0 };
		th_spawn(&tids[i], worker_main, &ws[i]);
	}
	th_join_all(tids, N, BT_DEADLINE_MS, "workers on three files", NULL);
	for (unsigned i = 0; i < N; i++)
		ck_assert_int_eq(ws[i].bad, 0);
	ck_assert_int_eq(bp_file_close(files[1]), 0);
	ck_assert_int_eq(bp_file_close(files[2]), 0);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* The background writer (every millisecond) and a thread on file A race
 * every truncate and close of file B: they must not fail, and what B holds
 * after each reopen is exactly what was written and kept.  (The window in
 * which the writer's own pin and latch sit on one of B's frames is a few
 * instructions long: these rounds exercise it, they do not force it.) */
struct a_worker {
	struct bp_pool *p;
	_Atomic bool stop;
	int bad;
};

static void *a_worker_main(void *arg)
{
	struct a_worker *w = arg;
	uint64_t v = 1;
	while (!atomic_load(&w->stop) && !w->bad) {
		for (uint64_t pg = 0; pg < 3 && !w->bad; pg++) {
			struct bp_frame *f;
			int r = bp_get(w->p, pg, BP_GET_CREATE, &f);
			if (r == -EBUSY)
				continue;
			if (r) {
				w->bad = r;
				break;
			}
			bp_latch(w->p, f, BP_LATCH_EXCLUSIVE);
			bt_fill(bp_data(f), PS, pg, v);
			bp_mark_dirty(w->p, f);
			bp_unlatch(w->p, f, BP_LATCH_EXCLUSIVE);
			bp_release(w->p, f);
		}
		v++;
	}
	return NULL;
}

START_TEST(close_and_truncate_beside_the_writer)
{
	/* 16 frames for 3 + 6 pages: no eviction, so no -EBUSY from a claim
	 * that finds every frame dirty and busy (it happened under ASan) */
	struct bp_config c = bt_config(&dir, 16, true);
	c.writer_interval_ms = 1;
	c.flags |= BP_OPEN_TRUNCATE;
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	struct a_worker aw = { .p = p };
	pthread_t tid;
	th_spawn(&tid, a_worker_main, &aw);
	unsigned rounds = th_sanitized() ? 20 : 60;
	for (unsigned r = 0; r < rounds; r++) {
		struct bp_file *b = open_file(p, path_b, BP_OPEN_CREATE | (r == 0 ? BP_OPEN_TRUNCATE : 0));
		if (r > 0)
			check_pages(p, b, 2, r);  /* what the last round kept */
		write_pages(p, b, NPG, r + 1);
		ck_assert_int_eq(bp_file_truncate(b, 2), 0);
		ck_assert_uint_eq(bp_file_page_count(b), 2);
		ck_assert_int_eq(bp_file_close(b), 0);
	}
	atomic_store(&aw.stop, true);
	th_join_all(&tid, 1, BT_DEADLINE_MS, "file A's worker", NULL);
	ck_assert_int_eq(aw.bad, 0);
	struct stat st;
	ck_assert_int_eq(stat(path_b, &st), 0);
	ck_assert_int_eq(st.st_size, 2 * (off_t)PS);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bufpool files");
	TCase *tc = tcase_create("files");
	tcase_add_unchecked_fixture(tc, bt_root_make, bt_root_remove);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, files_keep_their_pages_apart);
	tcase_add_test(tc, close_and_discard_one_file);
	tcase_add_test(tc, truncate_drops_the_tail);
	tcase_add_test(tc, fsync_failure_is_per_file);
	tcase_add_test(tc, bad_input_and_read_only);
	tcase_add_test(tc, checksums_use_the_file_page_number);
	tcase_add_test(tc, threads_on_three_files);
	tcase_add_test(tc, close_and_truncate_beside_the_writer);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
