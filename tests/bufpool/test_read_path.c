/* SPDX-License-Identifier: MIT */
/*
 * test_read_path.c - who reads a miss (bp_config.read_path, io.c's
 * bp_io_read): the faulting thread itself (AUTO: from the page cache or
 * the device, O_DIRECT too; CACHED: only what the kernel has cached), the
 * I/O engine (CACHED when that would block, ENGINE or BP_READ_PATH=engine,
 * a simulated latency, an injected fault); the page's bytes, its checksum
 * and every waiter's wake the same either way; a cancel pending during a
 * miss acts after it.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bp_helpers.h"
#include "../check_run.h"

static struct bt_dir dir;

static void setup(void)
{
	/* Each test decides the path itself; CI's engine pass sets this. */
	unsetenv("BP_READ_PATH");
	bt_dir_make(&dir);
}
static void teardown(void) { bt_dir_remove(&dir); }

enum { NPAGES = 16 };

/* Does the kernel (or the emulator running this test) take RWF_NOWAIT on
 * d's file?  Where it does not, BP_READ_CACHED sends every read to the
 * engine (io.c remembers the refusal in the file), and the tests say so. */
static bool nowait_taken(void)
{
	int fd = open(dir.file, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	char b[512];
	struct iovec iov = { b, sizeof(b) };
	ssize_t n = preadv2(fd, &iov, 1, 0, RWF_NOWAIT);
	bool taken = n >= 0 || errno == EAGAIN;
	close(fd);
	return taken;
}

/* Get every page of the file once, checking its bytes; the pool's stats
 * after. */
static struct bp_stats read_all(struct bp_pool *p, uint64_t npages)
{
	for (uint64_t i = 0; i < npages; i++) {
		struct bp_frame *f;
		ck_assert_int_eq(bp_get(p, i, 0, &f), 0);
		ck_assert_msg(bt_check(bp_data(f), bp_page_size(p), i, 1), "page %lu's bytes",
			      (unsigned long)i);
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	return s;
}

/* The file's pages just written are in the page cache: every miss is read
 * by the thread that missed, none goes to the engine, on AUTO and CACHED
 * alike (CACHED where RWF_NOWAIT is refused: all by the engine). */
START_TEST(cached_misses_are_read_inline)
{
	const char *variant = _i ? "BP_READ_CACHED" : "BP_READ_AUTO";
	bt_make_file(&dir, NPAGES, 1);
	struct bp_config c = bt_config(&dir, 64, false);
	c.read_path = _i ? BP_READ_CACHED : BP_READ_AUTO;
	bool inl = !_i || nowait_taken();
	struct bp_pool *p;
	bt_int_v(variant, bp_open(&p, &c), ==, 0);
	struct bp_stats s = read_all(p, NPAGES);
	bt_uint_v(variant, s.misses, ==, NPAGES);
	bt_uint_v(variant, s.reads, ==, NPAGES);
	bt_uint_v(variant, s.inline_reads, ==, inl ? NPAGES : 0);
	bt_uint_v(variant, s.inline_read.count, ==, s.inline_reads);
	bt_uint_v(variant, s.inline_blocked, ==, 0);
	bt_uint_v(variant, s.read_ios, ==, inl ? 0 : NPAGES);
	if (inl)
		bt_uint_v(variant, s.io_wait.count, ==, 0); /* nobody slept on LOCKED */
	bt_int_v(variant, bp_close(p), ==, 0);
}
END_TEST

static void engine_only(struct bp_pool *p)
{
	struct bp_stats s = read_all(p, NPAGES);
	ck_assert_uint_eq(s.misses, NPAGES);
	ck_assert_uint_eq(s.inline_reads, 0);
	ck_assert_uint_eq(s.inline_blocked, 0);
	ck_assert_uint_eq(s.read_ios, NPAGES);
	ck_assert_int_eq(bp_close(p), 0);
}

START_TEST(engine_path_never_reads_inline)
{
	bt_make_file(&dir, NPAGES, 1);
	struct bp_config c = bt_config(&dir, 64, false);
	c.read_path = BP_READ_ENGINE;
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	engine_only(p);
}
END_TEST

START_TEST(environment_selects_the_engine_path)
{
	bt_make_file(&dir, NPAGES, 1);
	struct bp_config c = bt_config(&dir, 64, false);
	setenv("BP_READ_PATH", "engine", 1);
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	unsetenv("BP_READ_PATH");
	engine_only(p);
}
END_TEST

/* A simulated device latency means nothing is cached: the engine reads. */
START_TEST(simulated_latency_reads_through_the_engine)
{
	bt_make_file(&dir, NPAGES, 1);
	struct bp_config c = bt_config(&dir, 64, false);
	c.io_latency_us = 1;
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	engine_only(p);
}
END_TEST

START_TEST(unknown_read_path_is_refused)
{
	struct bp_config c = bt_config(&dir, 64, false);
	c.read_path = BP_READ_CACHED + 1;
	struct bt_log log;
	bt_log_into(&c, &log);
	struct bp_pool *p = NULL;
	ck_assert_int_eq(bp_open(&p, &c), -EINVAL);
	ck_assert_ptr_null(p);
	ck_assert_ptr_nonnull(strstr(log.text, "read_path"));
}
END_TEST

/* Is page pageno of the file in the page cache? */
static bool cached(int fd, uint64_t pageno, uint32_t page_size)
{
	size_t len = (size_t)(pageno + 1) * page_size;
	void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	long os = sysconf(_SC_PAGESIZE);
	unsigned char vec[(NPAGES * 4096) / 512 + 1];
	ck_assert_uint_le((len + (size_t)os - 1) / (size_t)os, sizeof(vec));
	ck_assert_int_eq(mincore(m, len, vec), 0);
	size_t first = (size_t)pageno * page_size / (size_t)os;
	bool in = vec[first] & 1;
	munmap(m, len);
	return in;
}

/* Get every page of the file once, each dropped from the page cache
 * first; the pages really dropped (the kernel may keep one: a page under
 * its readahead, started by the last get, is not dropped until its read
 * ends, so each is tried a few times). */
static unsigned read_all_uncached(struct bp_pool *p, int fd)
{
	uint32_t ps = bp_page_size(p);
	unsigned dropped = 0;
	for (uint64_t i = 0; i < NPAGES; i++) {
		unsigned tries = 0;
		do {
			ck_assert_int_eq(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
			sched_yield();
		} while (cached(fd, i, ps) && ++tries < 100);
		dropped += !cached(fd, i, ps);
		struct bp_frame *f;
		ck_assert_int_eq(bp_get(p, i, 0, &f), 0);
		ck_assert(bt_check(bp_data(f), ps, i, 1));
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	return dropped;
}

/* Open the file of bt_make_file's pages for the page cache tests, its
 * pages clean (written back by the pool's close, synced here) so that
 * DONTNEED drops them. */
static int open_synced(void)
{
	int fd = open(dir.file, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fdatasync(fd), 0);
	return fd;
}

/* AUTO: a page the kernel does not hold is read by the thread that
 * missed all the same, waiting for the device in the kernel; the engine
 * does nothing. */
START_TEST(uncached_misses_are_read_by_the_thread_that_missed)
{
	bt_make_file(&dir, NPAGES, 1);
	int fd = open_synced();
	struct bp_config c = bt_config(&dir, 64, false);
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	ck_assert_uint_ge(read_all_uncached(p, fd), NPAGES / 2);
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.inline_reads, NPAGES);
	ck_assert_uint_eq(s.inline_blocked, 0);
	ck_assert_uint_eq(s.read_ios, 0);
	ck_assert_uint_eq(s.io_wait.count, 0);
	ck_assert_int_eq(bp_close(p), 0);
	close(fd);
}
END_TEST

/* CACHED: a page the kernel does not hold would block: the faulting
 * thread hands it to the engine (counted), sleeps on LOCKED if the read
 * is still in flight, and gets the right bytes.  Not every such try
 * blocks: the RWF_NOWAIT read itself starts the kernel's readahead, which
 * on a fast device (a VM's disk in its host's cache) may finish before the
 * kernel looks again, and then the page is read inline after all.  So the
 * test asks that some blocked, all of those went to the engine, and every
 * page read right. */
START_TEST(cached_path_sends_uncached_misses_to_the_engine)
{
	bt_make_file(&dir, NPAGES, 1);
	int fd = open_synced();
	struct bp_config c = bt_config(&dir, 64, false);
	c.read_path = BP_READ_CACHED;
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	ck_assert_uint_ge(read_all_uncached(p, fd), NPAGES / 2);
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	if (!nowait_taken()) { /* refused: everything by the engine */
		ck_assert_uint_eq(s.inline_blocked + s.inline_reads, 0);
		ck_assert_uint_eq(s.read_ios, NPAGES);
		ck_assert_int_eq(bp_close(p), 0);
		close(fd);
		return;
	}
	ck_assert_uint_ge(s.inline_blocked, 1);
	ck_assert_uint_eq(s.read_ios, s.inline_blocked);
	ck_assert_uint_eq(s.inline_reads + s.inline_blocked, NPAGES);
	ck_assert_uint_le(s.io_wait.count, s.inline_blocked);
	ck_assert_int_eq(bp_close(p), 0);
	close(fd);
}
END_TEST

/* O_DIRECT: AUTO reads in the thread that missed (waiting for the device
 * in the kernel), CACHED sends every read to the engine (nothing is
 * cached to take); both read right (a file system without O_DIRECT
 * refuses the open with -EINVAL: nothing to test there). */
START_TEST(direct_io_reads_inline_on_auto_by_the_engine_on_cached)
{
	const char *variant = _i ? "BP_READ_CACHED" : "BP_READ_AUTO";
	bt_make_file(&dir, NPAGES, 1);
	struct bp_config c = bt_config(&dir, 64, false);
	c.flags |= BP_OPEN_DIRECT;
	c.read_path = _i ? BP_READ_CACHED : BP_READ_AUTO;
	struct bp_pool *p;
	int r = bp_open(&p, &c);
	if (r == -EINVAL)
		return;
	bt_int_v(variant, r, ==, 0);
	struct bp_stats s = read_all(p, NPAGES);
	bt_uint_v(variant, s.inline_reads, ==, _i ? 0 : NPAGES);
	bt_uint_v(variant, s.read_ios, ==, _i ? NPAGES : 0);
	bt_uint_v(variant, s.inline_blocked, ==, 0);
	bt_int_v(variant, bp_close(p), ==, 0);
}
END_TEST

/* An injected fault is the engine's to apply, whatever the cache holds:
 * the failed read's errno reaches the caller and the page reads again. */
START_TEST(injected_fault_is_applied_by_the_engine)
{
	bt_make_file(&dir, NPAGES, 1);
	struct bp_config c = bt_config(&dir, 64, false);
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	struct bp_fault fault = { .op = BP_FAULT_READ, .kind = BP_FAULT_FAIL, .err = EIO,
				  .count = 1, .page_first = 3, .page_count = 1 };
	ck_assert_int_eq(bp_fault_set(p, &fault), 0);
	struct bp_frame *f;
	ck_assert_int_eq(bp_get(p, 3, 0, &f), -EIO);
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.read_ios, 1);
	ck_assert_uint_eq(s.inline_reads, 0);
	ck_assert_uint_eq(s.read_errors, 1);
	/* The fault is spent: the retry is inline and right. */
	ck_assert_int_eq(bp_get(p, 3, 0, &f), 0);
	ck_assert(bt_check(bp_data(f), bp_page_size(p), 3, 1));
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.inline_reads, 1);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* A page whose bytes were changed on disk fails its checksum when read
 * inline as when read by the engine: -EBADMSG, counted. */
START_TEST(inline_read_verifies_the_checksum)
{
	struct bp_config c = bt_config(&dir, 64, false);
	c.flags |= BP_OPEN_CHECKSUMS;
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	for (uint64_t i = 0; i < 4; i++) {
		struct bp_frame *f;
		uint64_t n;
		ck_assert_int_eq(bp_new_page(p, &n, &f), 0);
		bp_latch(p, f, BP_LATCH_EXCLUSIVE);
		bt_fill(bp_data(f), bp_page_size(p), n, 1);
		ck_assert_int_eq(bp_mark_dirty(p, f), 0);
		bp_unlatch(p, f, BP_LATCH_EXCLUSIVE);
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	uint32_t ps = bp_page_size(p);
	ck_assert_int_eq(bp_close(p), 0);
	int fd = open(dir.file, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "x", 1, (off_t)2 * ps + 100), 1);
	close(fd);
	ck_assert_int_eq(bp_open(&p, &c), 0);
	struct bp_frame *f;
	ck_assert_int_eq(bp_get(p, 1, 0, &f), 0);
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_get(p, 2, 0, &f), -EBADMSG);
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.inline_reads, 2);
	ck_assert_uint_eq(s.checksum_errors, 1);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* Many threads miss on one cached page at once: one read, inline, and
 * everyone gets the page (those that found it LOCKED were woken). */
struct reader {
	struct bp_pool *pool;
	pthread_barrier_t *start;
	int rc;
	bool ok;
};

static void *reader_fn(void *arg)
{
	struct reader *r = arg;
	pthread_barrier_wait(r->start);
	struct bp_frame *f;
	r->rc = bp_get(r->pool, 7, 0, &f);
	if (r->rc == 0) {
		r->ok = bt_check(bp_data(f), bp_page_size(r->pool), 7, 1);
		bp_release(r->pool, f);
	}
	return NULL;
}

START_TEST(concurrent_misses_share_one_inline_read)
{
	bt_make_file(&dir, NPAGES, 1);
	struct bp_config c = bt_config(&dir, 64, false);
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	enum { N = 16 };
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, N);
	struct reader r[N];
	pthread_t tid[N];
	for (unsigned i = 0; i < N; i++) {
		r[i] = (struct reader){ p, &start, -1, false };
		th_spawn(&tid[i], reader_fn, &r[i]);
	}
	th_join_all(tid, N, BT_DEADLINE_MS, "the readers", bp_fwait_table(p));
	for (unsigned i = 0; i < N; i++) {
		ck_assert_int_eq(r[i].rc, 0);
		ck_assert(r[i].ok);
	}
	pthread_barrier_destroy(&start);
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.reads, 1);
	ck_assert_uint_eq(s.inline_reads, 1);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* A thread with a cancel pending (deferred) calls bp_get: the miss's read,
 * inline or by the engine, is no cancellation point (preadv2 and the
 * ring's doorbell write would be ones), so bp_get returns, the page is up
 * to date and unlocked, and the cancel acts at the thread's next
 * cancellation point.  Had it acted inside the read, the frame would stay
 * LOCKED for ever and every later getter of the page would sleep on it. */
struct cancelled {
	struct bp_pool *pool;
	_Atomic bool go, returned;
	_Atomic bool past_testcancel; /* set only if the cancel did not act there */
	int rc;
};

static void *cancelled_fn(void *arg)
{
	struct cancelled *c = arg;
	while (!atomic_load(&c->go)) /* no cancellation point */
		sched_yield();
	struct bp_frame *f;
	c->rc = bp_get(c->pool, 9, 0, &f);
	if (c->rc == 0)
		bp_release(c->pool, f);
	atomic_store(&c->returned, true);
	pthread_testcancel();
	atomic_store(&c->past_testcancel, true);
	return NULL;
}

/* Page 9 got by a thread with a cancel pending: it must return from
 * bp_get (0), then exit cancelled at its own cancellation point. */
static void get_with_a_cancel_pending(struct bp_pool *p)
{
	struct cancelled c = { .pool = p, .rc = -1 };
	pthread_t tid;
	th_spawn(&tid, cancelled_fn, &c);
	ck_assert_int_eq(pthread_cancel(tid), 0);
	atomic_store(&c.go, true);
	th_join_all(&tid, 1, BT_DEADLINE_MS, "the cancelled getter", bp_fwait_table(p));
	ck_assert_msg(!atomic_load(&c.past_testcancel), "the thread was not cancelled");
	ck_assert_msg(atomic_load(&c.returned), "the cancel acted inside bp_get");
	ck_assert_int_eq(c.rc, 0);
}

static void cancel_during_get(unsigned read_path, unsigned engine)
{
	bt_make_file(&dir, NPAGES, 1);
	struct bp_config cfg = bt_config(&dir, 64, false);
	cfg.read_path = read_path;
	cfg.io_engine = engine;
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &cfg), 0);
	get_with_a_cancel_pending(p);
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.frames_locked, 0);
	ck_assert_uint_eq(s.reads, 1);
	struct bp_frame *f;
	ck_assert_int_eq(bp_get(p, 9, 0, &f), 0);
	ck_assert(bt_check(bp_data(f), bp_page_size(p), 9, 1));
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_close(p), 0);
}

/* A miss read inline (a preadv2, a cancellation point, with the frame
 * LOCKED): the cancel waits for bp_get to return.  Failing first, with the
 * read not guarded by pthread_setcancelstate: "the cancel acted inside
 * bp_get", and every later getter of the page slept for ever. */
START_TEST(a_cancel_waits_for_an_inline_read)
{
	cancel_during_get(BP_READ_AUTO, BP_IO_ENGINE_AUTO);
}
END_TEST

START_TEST(a_cancel_waits_for_an_engine_read)
{
	cancel_during_get(BP_READ_ENGINE, BP_IO_ENGINE_THREADS);
}
END_TEST

/* The same on the io_uring engine, through its doorbell: both frames of
 * the pool are dirty, so the cancelled thread's miss starts a write-back
 * (queued on the ring, the doorbell rung: a write(2), a cancellation
 * point) and waits for it.  Had the cancel acted at the doorbell, the
 * ring's reaper would never hear of the write, and the write-back (and
 * the close's flush) would wait for ever. */
START_TEST(a_cancel_waits_for_the_rings_doorbell)
{
	bt_make_file(&dir, NPAGES, 1);
	struct bp_config cfg = bt_config(&dir, 2, false);
	cfg.io_engine = BP_IO_ENGINE_URING;
	struct bp_pool *p;
	int rc = bp_open(&p, &cfg);
	if (rc == -EOPNOTSUPP)
		return; /* no io_uring here: nothing to test */
	ck_assert_int_eq(rc, 0);
	for (uint64_t i = 0; i < 2; i++) {
		struct bp_frame *f;
		ck_assert_int_eq(bp_get(p, i, 0, &f), 0);
		bp_latch(p, f, BP_LATCH_EXCLUSIVE);
		bt_fill(bp_data(f), bp_page_size(p), i, 2);
		ck_assert_int_eq(bp_mark_dirty(p, f), 0);
		bp_unlatch(p, f, BP_LATCH_EXCLUSIVE);
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	get_with_a_cancel_pending(p);
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_ge(s.dirty_evictions, 1);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bufpool read_path");
	TCase *tc = tcase_create("read path");
	tcase_add_unchecked_fixture(tc, bt_root_make, bt_root_remove);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, cached_misses_are_read_inline, 0, 2); /* AUTO, CACHED */
	tcase_add_test(tc, engine_path_never_reads_inline);
	tcase_add_test(tc, environment_selects_the_engine_path);
	tcase_add_test(tc, simulated_latency_reads_through_the_engine);
	tcase_add_test(tc, unknown_read_path_is_refused);
	tcase_add_test(tc, uncached_misses_are_read_by_the_thread_that_missed);
	tcase_add_test(tc, cached_path_sends_uncached_misses_to_the_engine);
	tcase_add_loop_test(tc, direct_io_reads_inline_on_auto_by_the_engine_on_cached, 0, 2);
	tcase_add_test(tc, injected_fault_is_applied_by_the_engine);
	tcase_add_test(tc, inline_read_verifies_the_checksum);
	tcase_add_test(tc, concurrent_misses_share_one_inline_read);
	tcase_add_test(tc, a_cancel_waits_for_an_inline_read);
	tcase_add_test(tc, a_cancel_waits_for_an_engine_read);
	tcase_add_test(tc, a_cancel_waits_for_the_rings_doorbell);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(suite());
}
