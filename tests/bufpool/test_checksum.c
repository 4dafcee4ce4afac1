/* SPDX-License-Identifier: MIT */
/*
 * test_checksum.c - BP_OPEN_CHECKSUMS: pages written with a CRC-32C trailer
 * read back clean; a flipped byte, a page moved to another page's place,
 * a torn write and a checksum itself damaged each fail with -EBADMSG, to
 * every caller waiting for that read, counted, and never cached; holes (all
 * zeros) pass.
 *
 * Design note: the file is damaged between a close and an open with plain
 * pread/pwrite on the page file, so the pool sees exactly what a disk that
 * corrupted the page would give it.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bp_helpers.h"
#include "../check_run.h"

#define PS 4096u

static struct bt_dir dir;

static void setup(void) { bt_dir_make(&dir); }
static void teardown(void) { bt_dir_remove(&dir); }

static struct bp_config sum_config(void)
{
	struct bp_config c = bt_config(&dir, 8, false);
	c.flags |= BP_OPEN_CHECKSUMS;
	return c;
}

/* npages pages of bt_fill(pageno, version) in the caller's part of each
 * page, written through a checksumming pool. */
static void make_sum_file(uint64_t npages, uint64_t version)
{
	struct bp_config c = sum_config();
	c.flags |= BP_OPEN_TRUNCATE;
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	ck_assert_uint_eq(bp_data_size(p), PS - BP_CHECKSUM_BYTES);
	for (uint64_t pg = 0; pg < npages; pg++) {
		struct bp_frame *f;
		ck_assert_int_eq(bp_get(p, pg, BP_GET_CREATE, &f), 0);
		ck_assert_int_eq(bp_latch(p, f, BP_LATCH_EXCLUSIVE), 0);
		bt_fill(bp_data(f), bp_data_size(p), pg, version);
		ck_assert_int_eq(bp_mark_dirty(p, f), 0);
		ck_assert_int_eq(bp_unlatch(p, f, BP_LATCH_EXCLUSIVE), 0);
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	ck_assert_int_eq(bp_close(p), 0);
}

static void file_rw(bool write, void *buf, size_t len, off_t off)
{
	int fd = open(dir.file, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ssize_t n = write ? pwrite(fd, buf, len, off) : pread(fd, buf, len, off);
	ck_assert_int_eq(n, (ssize_t)len);
	ck_assert_int_eq(close(fd), 0);
}

static int get_rc(struct bp_pool *p, uint64_t pg)
{
	struct bp_frame *f;
	int rc = bp_get(p, pg, BP_GET_NOREADAHEAD, &f);
	if (rc == 0)
		ck_assert_int_eq(bp_release(p, f), 0);
	return rc;
}

static uint64_t checksum_errors(struct bp_pool *p)
{
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	return s.checksum_errors;
}

START_TEST(round_trip_and_bad_input)
{
	make_sum_file(4, 1);
	struct bp_config c = sum_config();
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	for (uint64_t pg = 0; pg < 4; pg++) {
		struct bp_frame *f;
		ck_assert_int_eq(bp_get(p, pg, 0, &f), 0);
		ck_assert(bt_check(bp_data(f), bp_data_size(p), pg, 1));
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	ck_assert_uint_eq(checksum_errors(p), 0);
	ck_assert_int_eq(bp_close(p), 0);
	ck_assert_uint_eq(bp_data_size(NULL), 0);

	/* Without the flag the whole page is the caller's. */
	struct bp_config plain = bt_config(&dir, 8, false);
	ck_assert_int_eq(bp_open(&p, &plain), 0);
	ck_assert_uint_eq(bp_data_size(p), PS);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* Loop index: how the page on disk is damaged. */
enum damage { FLIP_BYTE, MOVED_PAGE, TORN_WRITE, BAD_TRAILER, NDAMAGE };

START_TEST(damaged_page_is_ebadmsg_and_never_cached)
{
	static const char *const names[NDAMAGE] = { "flipped byte", "moved page", "torn write",
						     "bad trailer" };
	const char *variant = names[_i];
	make_sum_file(4, 1);
	unsigned char good[PS], bad[PS];
	file_rw(false, good, PS, 2 * PS);
	memcpy(bad, good, PS);
	switch ((enum damage)_i) {
	case FLIP_BYTE:
		bad[100] ^= 0x01;
		break;
	case MOVED_PAGE: /* page 1's bytes, whole and well-sealed, at page 2 */
		file_rw(false, bad, PS, 1 * PS);
		break;
	case TORN_WRITE: /* the second half is a newer version of the page */
		bt_fill(bad, PS - BP_CHECKSUM_BYTES, 2, 2);
		memcpy(bad, good, PS / 2);
		break;
	case BAD_TRAILER:
		bad[PS - 1] ^= 0x80;
		break;
	default:
		ck_abort();
	}
	file_rw(true, bad, PS, 2 * PS);

	struct bp_config c = sum_config();
	struct bp_pool *p;
	bt_int_v(variant, bp_open(&p, &c), ==, 0);
	bt_int_v(variant, get_rc(p, 2), ==, -EBADMSG);
	bt_int_v(variant, get_rc(p, 2), ==, -EBADMSG); /* read again, not cached */
	bt_uint_v(variant, checksum_errors(p), ==, 2);
	bt_int_v(variant, get_rc(p, 1), ==, 0);        /* the others are fine */
	bt_int_v(variant, get_rc(p, 3), ==, 0);
	/* Repaired on disk: the next bp_get reads the good page. */
	file_rw(true, good, PS, 2 * PS);
	struct bp_frame *f;
	bt_int_v(variant, bp_get(p, 2, 0, &f), ==, 0);
	bt_check_v(variant, bt_check(bp_data(f), bp_data_size(p), 2, 1));
	bt_int_v(variant, bp_release(p, f), ==, 0);
	bt_uint_v(variant, checksum_errors(p), ==, 2);
	bt_int_v(variant, bp_close(p), ==, 0);
}
END_TEST

/* A hole (page 2 never written: page 4 was created past it) reads as zeros
 * and passes; so does a page created and never written back. */
START_TEST(holes_pass)
{
	make_sum_file(2, 1);
	struct bp_config c = sum_config();
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	struct bp_frame *f;
	ck_assert_int_eq(bp_get(p, 4, BP_GET_CREATE, &f), 0);
	ck_assert_int_eq(bp_latch(p, f, BP_LATCH_EXCLUSIVE), 0);
	bt_fill(bp_data(f), bp_data_size(p), 4, 1);
	ck_assert_int_eq(bp_mark_dirty(p, f), 0);
	ck_assert_int_eq(bp_unlatch(p, f, BP_LATCH_EXCLUSIVE), 0);
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_close(p), 0);
	ck_assert_int_eq(bp_open(&p, &c), 0);
	for (uint64_t pg = 2; pg < 4; pg++) {
		ck_assert_int_eq(bp_get(p, pg, BP_GET_NOREADAHEAD, &f), 0);
		const unsigned char *d = bp_data(f);
		for (unsigned i = 0; i < PS; i++)
			ck_assert_uint_eq(d[i], 0);
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	ck_assert_int_eq(get_rc(p, 4), 0);
	ck_assert_uint_eq(checksum_errors(p), 0);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* BP_GET_OVERWRITE (recovery restoring a page image) does not read the
 * page: a damaged page on disk is no error, the frame comes zeroed and
 * DIRTY, and what the caller writes into it reads back after a reopen.
 * Past the end it creates the page; on a read-only pool it is -EROFS. */
START_TEST(overwrite_skips_a_damaged_page)
{
	make_sum_file(3, 1);
	unsigned char b = 0;
	file_rw(false, &b, 1, 1 * PS + 100);
	b ^= 0x40;
	file_rw(true, &b, 1, 1 * PS + 100);
	struct bp_config c = sum_config();
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	ck_assert_int_eq(get_rc(p, 1), -EBADMSG);
	struct bp_frame *f;
	ck_assert_int_eq(bp_get(p, 1, BP_GET_OVERWRITE, &f), 0);
	const unsigned char *d = bp_data(f);
	for (unsigned i = 0; i < bp_data_size(p); i++)
		ck_assert_uint_eq(d[i], 0);
	struct bp_stats st;
	bp_stats_init(&st);
	ck_assert_int_eq(bp_stats_get(p, &st), 0);
	ck_assert_uint_eq(st.frames_dirty, 1);
	bt_fill(bp_data(f), bp_data_size(p), 1, 2);
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_get(p, 5, BP_GET_OVERWRITE, &f), 0); /* past the end */
	ck_assert_uint_eq(bp_page_count(p), 6);
	bt_fill(bp_data(f), bp_data_size(p), 5, 2);
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_close(p), 0);
	c.flags = (c.flags & ~(unsigned)BP_OPEN_CREATE) | BP_OPEN_READONLY;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	ck_assert_int_eq(bp_get(p, 1, BP_GET_NOREADAHEAD, &f), 0);
	ck_assert(bt_check(bp_data(f), bp_data_size(p), 1, 2));
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_get(p, 2, BP_GET_OVERWRITE, &f), -EROFS);
	ck_assert_int_eq(get_rc(p, 5), 0);
	ck_assert_uint_eq(checksum_errors(p), 0);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

struct reader {
	struct bp_pool *p;
	pthread_barrier_t *start;
	int rc;
};

static void *reader_fn(void *arg)
{
	struct reader *r = arg;
	pthread_barrier_wait(r->start);
	r->rc = get_rc(r->p, 2);
	return NULL;
}

/* Sixteen callers of a page whose read is slow (2 ms) and fails its
 * checksum: every one of them gets -EBADMSG, whether it issued the read or
 * waited for it, and no frame stays LOCKED. */
START_TEST(every_waiter_gets_ebadmsg)
{
	make_sum_file(4, 1);
	unsigned char page[PS];
	file_rw(false, page, PS, 2 * PS);
	page[7] ^= 0xff;
	file_rw(true, page, PS, 2 * PS);
	struct bp_config c = sum_config();
	c.io_latency_us = 2000;
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	enum { N = 16 };
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, N);
	struct reader r[N];
	pthread_t tids[N];
	for (unsigned i = 0; i < N; i++) {
		r[i] = (struct reader){ p, &start, 1 };
		th_spawn(&tids[i], reader_fn, &r[i]);
	}
	th_join_all(tids, N, BT_DEADLINE_MS, "readers of a damaged page", NULL);
	for (unsigned i = 0; i < N; i++)
		ck_assert_int_eq(r[i].rc, -EBADMSG);
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_ge(s.checksum_errors, 1);
	ck_assert_uint_eq(s.checksum_errors, s.read_errors);
	ck_assert_uint_eq(s.frames_locked, 0);
	ck_assert_uint_eq(s.frames_pinned, 0);
	ck_assert_int_eq(bp_close(p), 0);
	pthread_barrier_destroy(&start);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bufpool checksum");
	TCase *tc = tcase_create("checksum");
	tcase_add_unchecked_fixture(tc, bt_root_make, bt_root_remove);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, round_trip_and_bad_input);
	tcase_add_loop_test(tc, damaged_page_is_ebadmsg_and_never_cached, 0, NDAMAGE);
	tcase_add_test(tc, holes_pass);
	tcase_add_test(tc, overwrite_skips_a_damaged_page);
	tcase_add_test(tc, every_waiter_gets_ebadmsg);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
