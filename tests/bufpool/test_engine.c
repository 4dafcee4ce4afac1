/* SPDX-License-Identifier: MIT */
/*
 * test_engine.c - the I/O engines: which one bp_open picks (config, the
 * BP_IO_ENGINE override of AUTO), the clean fall-back to the thread pool
 * where io_uring is blocked (a seccomp filter makes io_uring_setup fail
 * with EPERM, as a container's profile does), and the io_uring engine
 * itself: a queue depth far below the I/Os asked for, the simulated
 * latency as overlapping timeouts, checksummed writes with more writes
 * than bounce buffers, and the fault injector.  The other bufpool suites
 * run on whichever engine BP_IO_ENGINE picks (meson test --setup).
 */
#include <check.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "bp_helpers.h"
#include "util/clock.h"
#include "../check_run.h"

static struct bt_dir dir;

static void setup(void) { bt_dir_make(&dir); }
static void teardown(void) { bt_dir_remove(&dir); }

/* Open with engine (and depth), 0 or bp_open's error; *eng the engine. */
static int open_engine(struct bp_config *c, unsigned engine, unsigned depth, struct bp_pool **p,
		       unsigned *eng)
{
	c->io_engine = engine;
	c->io_depth = depth;
	int r = bp_open(p, c);
	if (r == 0) {
		struct bp_stats s;
		bp_stats_init(&s);
		ck_assert_int_eq(bp_stats_get(*p, &s), 0);
		*eng = s.io_engine;
		if (s.io_engine == BP_IO_ENGINE_URING)
			ck_assert_uint_eq(s.io_depth, depth ? depth : BP_IO_DEPTH_DEFAULT);
		else
			ck_assert_uint_eq(s.io_depth, 0);
	}
	return r;
}

/* Is io_uring available here?  (Asked through the pool itself.) */
static bool uring_available(void)
{
	struct bp_config c = bt_config(&dir, 8, false);
	struct bp_pool *p;
	unsigned eng;
	int r = open_engine(&c, BP_IO_ENGINE_URING, 0, &p, &eng);
	if (r == -EOPNOTSUPP)
		return false;
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(eng, BP_IO_ENGINE_URING);
	ck_assert_int_eq(bp_close(p), 0);
	return true;
}

/* Read every page of an npages file (bt_make_file's version 1) once. */
static void read_all(struct bp_pool *p, uint64_t npages)
{
	for (uint64_t i = 0; i < npages; i++) {
		struct bp_frame *f;
		ck_assert_int_eq(bp_get(p, i, 0, &f), 0);
		ck_assert(bt_check(bp_data(f), bp_page_size(p), i, 1));
		ck_assert_int_eq(bp_release(p, f), 0);
	}
}

START_TEST(config_picks_the_engine)
{
	bt_make_file(&dir, 16, 1);
	unsetenv("BP_IO_ENGINE");
	bool have = uring_available();
	struct bp_config c = bt_config(&dir, 8, false);
	struct bp_pool *p;
	unsigned eng;
	ck_assert_int_eq(open_engine(&c, BP_IO_ENGINE_THREADS, 0, &p, &eng), 0);
	ck_assert_uint_eq(eng, BP_IO_ENGINE_THREADS);
	read_all(p, 16);
	ck_assert_int_eq(bp_close(p), 0);
	/* AUTO: io_uring where it can be had. */
	ck_assert_int_eq(open_engine(&c, BP_IO_ENGINE_AUTO, 0, &p, &eng), 0);
	ck_assert_uint_eq(eng, have ? BP_IO_ENGINE_URING : BP_IO_ENGINE_THREADS);
	ck_assert_int_eq(bp_close(p), 0);
	if (have) {
		ck_assert_int_eq(open_engine(&c, BP_IO_ENGINE_URING, 4, &p, &eng), 0);
		read_all(p, 16);
		ck_assert_int_eq(bp_close(p), 0);
	}
	/* Out of range: refused, and said why. */
	struct bt_log l;
	bt_log_clear(&l);
	bt_log_into(&c, &l);
	ck_assert_int_eq(open_engine(&c, 3, 0, &p, &eng), -EINVAL);
	ck_assert_ptr_nonnull(strstr(l.text, "io_engine"));
	ck_assert_int_eq(open_engine(&c, BP_IO_ENGINE_URING, BP_IO_DEPTH_MAX + 1, &p, &eng), -EINVAL);
	ck_assert_ptr_nonnull(strstr(l.text, "io_depth"));
}
END_TEST

/* BP_IO_ENGINE stands for AUTO only; an explicit engine wins. */
START_TEST(environment_overrides_auto)
{
	bt_make_file(&dir, 4, 1);
	unsetenv("BP_IO_ENGINE");
	bool have = uring_available();
	struct bp_config c = bt_config(&dir, 8, false);
	struct bp_pool *p;
	unsigned eng;
	ck_assert_int_eq(setenv("BP_IO_ENGINE", "threads", 1), 0);
	ck_assert_int_eq(open_engine(&c, BP_IO_ENGINE_AUTO, 0, &p, &eng), 0);
	ck_assert_uint_eq(eng, BP_IO_ENGINE_THREADS);
	ck_assert_int_eq(bp_close(p), 0);
	if (have) {
		ck_assert_int_eq(open_engine(&c, BP_IO_ENGINE_URING, 0, &p, &eng), 0);
		ck_assert_uint_eq(eng, BP_IO_ENGINE_URING);
		ck_assert_int_eq(bp_close(p), 0);
		ck_assert_int_eq(setenv("BP_IO_ENGINE", "uring", 1), 0);
		ck_assert_int_eq(open_engine(&c, BP_IO_ENGINE_AUTO, 0, &p, &eng), 0);
		ck_assert_uint_eq(eng, BP_IO_ENGINE_URING);
		ck_assert_int_eq(bp_close(p), 0);
		ck_assert_int_eq(open_engine(&c, BP_IO_ENGINE_THREADS, 0, &p, &eng), 0);
		ck_assert_uint_eq(eng, BP_IO_ENGINE_THREADS);
		ck_assert_int_eq(bp_close(p), 0);
	}
	unsetenv("BP_IO_ENGINE");
}
END_TEST

/* Make io_uring_setup fail with EPERM in this process (seccomp), as a
 * container's default profile does.  0, or -errno. */
static int block_io_uring(void)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { (unsigned short)(sizeof(insns) / sizeof(insns[0])), insns };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return -errno;
	return 0;
}

/* The child of blocked_io_uring_falls_back: exit status 0 if all held,
 * else the number of the check that failed. */
static int blocked_child(void)
{
	if (block_io_uring() < 0)
		return 1;
	if (syscall(__NR_io_uring_setup, 4, NULL) != -1 || errno != EPERM)
		return 2; /* the filter is not in force */
	unsetenv("BP_IO_ENGINE");
	struct bp_config c = bt_config(&dir, 8, false);
	struct bt_log l;
	bt_log_clear(&l);
	bt_log_into(&c, &l);
	struct bp_pool *p;
	/* AUTO: the thread pool, quietly, and it works. */
	c.io_engine = BP_IO_ENGINE_AUTO;
	if (bp_open(&p, &c) != 0)
		return 3;
	struct bp_stats s;
	bp_stats_init(&s);
	if (bp_stats_get(p, &s) != 0 || s.io_engine != BP_IO_ENGINE_THREADS || s.io_depth != 0)
		return 4;
	for (uint64_t i = 0; i < 16; i++) {
		struct bp_frame *f;
		if (bp_get(p, i, 0, &f) != 0 || !bt_check(bp_data(f), bp_page_size(p), i, 1))
			return 5;
		bp_release(p, f);
	}
	if (bp_close(p) != 0 || l.n != 0)
		return 6;
	/* URING asked for: refused, with the reason. */
	c.io_engine = BP_IO_ENGINE_URING;
	if (bp_open(&p, &c) != -EOPNOTSUPP)
		return 7;
	if (l.n != 1 || !strstr(l.text, "io_uring") ||
	    !(strstr(l.text, strerror(EPERM)) || strstr(l.text, "built without liburing")))
		return 8;
	/* The environment's "uring" asks for it as well. */
	c.io_engine = BP_IO_ENGINE_AUTO;
	setenv("BP_IO_ENGINE", "uring", 1);
	if (bp_open(&p, &c) != -EOPNOTSUPP)
		return 9;
	return 0;
}

START_TEST(blocked_io_uring_falls_back)
{
	bt_make_file(&dir, 16, 1);
	/* In a child of its own: the filter cannot be taken off again. */
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(blocked_child());
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	/* Under an emulator (BT_EMULATED, set by tests/bufpool/meson.build
	 * for a cross build run through its exe wrapper) the filter cannot
	 * go in: qemu-user refuses PR_SET_SECCOMP (EINVAL), since a filter on
	 * the guest's calls would apply to the emulator's own.  There, and
	 * only there, check 1 failing leaves nothing to check; anywhere else
	 * it fails the test. */
	if (WEXITSTATUS(st) == 1 && getenv("BT_EMULATED")) {
		printf("blocked_io_uring_falls_back: no seccomp filter under %s: not checked\n",
		       getenv("BT_EMULATED"));
		return;
	}
	ck_assert_msg(WEXITSTATUS(st) == 0, "check %d of the blocked child failed",
		      WEXITSTATUS(st));
}
END_TEST

struct rd {
	struct bp_pool *p;
	pthread_barrier_t *start;
	uint64_t first, n;
	int rc;
	pthread_t tid;
};

static void *rd_fn(void *arg)
{
	struct rd *r = arg;
	pthread_barrier_wait(r->start);
	r->rc = 0;
	for (uint64_t i = r->first; i < r->first + r->n && !r->rc; i++) {
		struct bp_frame *f;
		r->rc = bp_get(r->p, i, 0, &f);
		if (r->rc)
			break;
		if (!bt_check(bp_data(f), bp_page_size(r->p), i, 1))
			r->rc = -EILSEQ;
		bp_release(r->p, f);
	}
	return NULL;
}

/* Run nthr readers of pages [0, nthr * per) at once; the elapsed ns. */
static uint64_t read_concurrently(struct bp_pool *p, unsigned nthr, uint64_t per)
{
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, nthr + 1);
	struct rd r[32];
	pthread_t tids[32];
	ck_assert_uint_le(nthr, 32);
	for (unsigned i = 0; i < nthr; i++) {
		r[i] = (struct rd){ p, &start, i * per, per, -1, 0 };
		th_spawn(&r[i].tid, rd_fn, &r[i]);
		tids[i] = r[i].tid;
	}
	uint64_t t0 = util_now_ns();
	pthread_barrier_wait(&start);
	th_join_all(tids, nthr, BT_DEADLINE_MS, "readers", NULL);
	uint64_t ns = util_now_ns() - t0;
	for (unsigned i = 0; i < nthr; i++)
		ck_assert_int_eq(r[i].rc, 0);
	pthread_barrier_destroy(&start);
	return ns;
}

/* Depth 2 under 16 readers: the rest wait in the ring's pending list, and
 * every read still completes with the right page. */
START_TEST(uring_depth_below_demand)
{
	if (!uring_available())
		return;
	bt_make_file(&dir, 256, 1);
	struct bp_config c = bt_config(&dir, 64, false);
	c.io_latency_us = 200;
	struct bp_pool *p;
	unsigned eng;
	ck_assert_int_eq(open_engine(&c, BP_IO_ENGINE_URING, 2, &p, &eng), 0);
	read_concurrently(p, 16, 16);
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.reads, 256);
	ck_assert_uint_eq(s.read_errors, 0);
	ck_assert_uint_eq(s.frames_locked, 0);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* The simulated latency is a timeout per I/O on the ring: 16 reads of
 * 100 ms each, at once, take about 100 ms, not 16 x 100 ms / threads. */
START_TEST(uring_latency_overlaps)
{
	if (!uring_available())
		return;
	bt_make_file(&dir, 16, 1);
	struct bp_config c = bt_config(&dir, 32, false);
	c.io_latency_us = 100000;
	c.io_threads = 1;
	struct bp_pool *p;
	unsigned eng;
	ck_assert_int_eq(open_engine(&c, BP_IO_ENGINE_URING, 64, &p, &eng), 0);
	uint64_t ns = read_concurrently(p, 16, 1);
	/* Each read waited its latency; all 16 overlapped (one I/O thread
	 * would take 1.6 s). */
	ck_assert_uint_ge(ns, 100000000u);
	ck_assert_uint_lt(ns, 800000000u);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* Checksummed writes through the ring with more writes than its depth
 * (and bounce buffers): write 128 pages, evict them, read them back
 * verified; then a damaged page read through the ring is -EBADMSG. */
START_TEST(uring_checksummed_writes)
{
	if (!uring_available())
		return;
	struct bp_config c = bt_config(&dir, 200, false);
	c.flags |= BP_OPEN_CHECKSUMS;
	struct bp_pool *p;
	unsigned eng;
	ck_assert_int_eq(open_engine(&c, BP_IO_ENGINE_URING, 4, &p, &eng), 0);
	uint32_t ds = bp_data_size(p);
	for (uint64_t i = 0; i < 128; i++) {
		struct bp_frame *f;
		uint64_t no;
		ck_assert_int_eq(bp_new_page(p, &no, &f), 0);
		ck_assert_uint_eq(no, i);
		bp_latch(p, f, BP_LATCH_EXCLUSIVE);
		bt_fill(bp_data(f), ds, i, 7);
		bp_mark_dirty(p, f);
		bp_unlatch(p, f, BP_LATCH_EXCLUSIVE);
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	ck_assert_int_eq(bp_flush(p), 0);
	ck_assert_int_eq(bp_evict_all(p), 128);
	for (uint64_t i = 0; i < 128; i++) {
		struct bp_frame *f;
		ck_assert_int_eq(bp_get(p, i, 0, &f), 0);
		ck_assert(bt_check(bp_data(f), ds, i, 7));
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_ge(s.writes, 128);
	ck_assert_uint_eq(s.write_errors, 0);
	ck_assert_uint_eq(s.checksum_errors, 0);
	ck_assert_int_eq(bp_close(p), 0);

	/* Damage page 5 on disk: its read fails its checksum. */
	FILE *fp = fopen(dir.file, "r+b");
	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(fseek(fp, 5 * 4096 + 100, SEEK_SET), 0);
	ck_assert_int_eq(fputc(0x5a, fp), 0x5a);
	ck_assert_int_eq(fclose(fp), 0);
	c.flags &= ~(unsigned)BP_OPEN_CREATE;
	ck_assert_int_eq(open_engine(&c, BP_IO_ENGINE_URING, 4, &p, &eng), 0);
	struct bp_frame *f;
	ck_assert_int_eq(bp_get(p, 5, 0, &f), -EBADMSG);
	ck_assert_int_eq(bp_get(p, 6, 0, &f), 0);
	ck_assert(bt_check(bp_data(f), ds, 6, 7));
	ck_assert_int_eq(bp_release(p, f), 0);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

/* The fault injector on the ring: FAIL, SHORT (through the helpers) and
 * SLOW (a timeout on the ring) on reads; a failed write stays dirty. */
START_TEST(uring_faults)
{
	if (!uring_available())
		return;
	bt_make_file(&dir, 16, 1);
	struct bp_config c = bt_config(&dir, 32, false);
	struct bp_pool *p;
	unsigned eng;
	ck_assert_int_eq(open_engine(&c, BP_IO_ENGINE_URING, 0, &p, &eng), 0);
	struct bp_frame *f;
	struct bp_fault fl = { .op = BP_FAULT_READ, .kind = BP_FAULT_FAIL, .err = ENOSPC,
			       .page_first = 3, .page_count = 1, .count = 1 };
	ck_assert_int_eq(bp_fault_set(p, &fl), 0);
	ck_assert_int_eq(bp_get(p, 3, 0, &f), -ENOSPC);
	ck_assert_int_eq(bp_get(p, 3, 0, &f), 0); /* count 1: the retry reads */
	ck_assert(bt_check(bp_data(f), bp_page_size(p), 3, 1));
	ck_assert_int_eq(bp_release(p, f), 0);
	struct bp_fault sh = { .op = BP_FAULT_READ, .kind = BP_FAULT_SHORT,
			       .page_first = 4, .page_count = 1, .count = 1 };
	ck_assert_int_eq(bp_fault_set(p, &sh), 0);
	ck_assert_int_eq(bp_get(p, 4, 0, &f), -EIO);
	struct bp_fault sl = { .op = BP_FAULT_READ, .kind = BP_FAULT_SLOW, .delay_us = 50000,
			       .page_first = 5, .page_count = 1, .count = 1 };
	ck_assert_int_eq(bp_fault_set(p, &sl), 0);
	uint64_t t0 = util_now_ns();
	ck_assert_int_eq(bp_get(p, 5, 0, &f), 0);
	ck_assert_uint_ge(util_now_ns() - t0, 50000000u);
	ck_assert(bt_check(bp_data(f), bp_page_size(p), 5, 1));
	/* A failed write: reported by the flush, the page still dirty. */
	struct bp_fault wf = { .op = BP_FAULT_WRITE, .kind = BP_FAULT_FAIL, .err = EIO, .count = 1 };
	ck_assert_int_eq(bp_fault_set(p, &wf), 0);
	bp_latch(p, f, BP_LATCH_EXCLUSIVE);
	bt_fill(bp_data(f), bp_page_size(p), 5, 2);
	bp_mark_dirty(p, f);
	bp_unlatch(p, f, BP_LATCH_EXCLUSIVE);
	ck_assert_int_eq(bp_flush(p), -EIO);
	ck_assert_uint_ne(bt_flags_of(p, 5) & BP_F_DIRTY, 0);
	ck_assert_int_eq(bp_flush(p), 0);
	ck_assert_int_eq(bp_release(p, f), 0);
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.faults_injected, 4);
	ck_assert_uint_eq(s.read_errors, 2);
	ck_assert_uint_eq(s.write_errors, 1);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

struct creator {
	struct bp_pool *p;
	uint64_t first;
	int rc;
};

/* Create 4 pages and leave: the evictions this causes start writes that
 * are still in flight when the thread is gone. */
static void *creator_fn(void *arg)
{
	struct creator *c = arg;
	c->rc = 0;
	for (uint64_t i = c->first; i < c->first + 4; i++) {
		struct bp_frame *f;
		c->rc = bp_get(c->p, i, BP_GET_CREATE, &f);
		if (c->rc)
			return NULL;
		bp_latch(c->p, f, BP_LATCH_EXCLUSIVE);
		bt_fill(bp_data(f), bp_page_size(c->p), i, 3);
		bp_mark_dirty(c->p, f);
		bp_unlatch(c->p, f, BP_LATCH_EXCLUSIVE);
		bp_release(c->p, f);
	}
	return NULL;
}

/* io_uring cancels a request punted to a worker when the thread that
 * submitted it exits; the engine submits from its own thread only, so
 * the writes started by threads that are gone all land. */
START_TEST(uring_writes_outlive_their_threads)
{
	if (!uring_available())
		return;
	struct bp_config c = bt_config(&dir, 16, false);
	struct bp_pool *p;
	unsigned eng;
	ck_assert_int_eq(open_engine(&c, BP_IO_ENGINE_URING, 0, &p, &eng), 0);
	for (uint64_t t = 0; t < 32; t++) {
		struct creator cr = { p, t * 4, -1 };
		pthread_t tid;
		th_spawn(&tid, creator_fn, &cr);
		th_join_all(&tid, 1, BT_DEADLINE_MS, "creator", NULL);
		ck_assert_int_eq(cr.rc, 0);
	}
	ck_assert_int_eq(bp_flush(p), 0);
	struct bp_stats s;
	bp_stats_init(&s);
	ck_assert_int_eq(bp_stats_get(p, &s), 0);
	ck_assert_uint_eq(s.write_errors, 0);
	ck_assert_uint_ge(s.dirty_evictions, 100);
	ck_assert_int_eq(bp_close(p), 0);
	c.flags &= ~(unsigned)BP_OPEN_CREATE;
	ck_assert_int_eq(open_engine(&c, BP_IO_ENGINE_THREADS, 0, &p, &eng), 0);
	for (uint64_t i = 0; i < 128; i++) {
		struct bp_frame *f;
		ck_assert_int_eq(bp_get(p, i, 0, &f), 0);
		ck_assert(bt_check(bp_data(f), bp_page_size(p), i, 3));
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bufpool engine");
	TCase *tc = tcase_create("engine");
	tcase_add_unchecked_fixture(tc, bt_root_make, bt_root_remove);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, config_picks_the_engine);
	tcase_add_test(tc, environment_overrides_auto);
	tcase_add_test(tc, blocked_io_uring_falls_back);
	tcase_add_test(tc, uring_depth_below_demand);
	tcase_add_test(tc, uring_latency_overlaps);
	tcase_add_test(tc, uring_checksummed_writes);
	tcase_add_test(tc, uring_faults);
	tcase_add_test(tc, uring_writes_outlive_their_threads);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
