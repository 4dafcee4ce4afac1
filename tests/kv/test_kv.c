/* SPDX-License-Identifier: MIT */
/*
 * test_kv.c - unit tests of the B+-tree store (tools/kv/kv.c).
 *
 * Design note: through kv.h only, the store's public (kv_) API, as an
 * embedding program uses it, and kv_mem.h, its copy in plain memory; that
 * nothing else of libkv is global, and that all of it is kv_-prefixed, is
 * kv_symbols.sh's check.  Small pages
 * (512 B) and a small pool make a deep tree with many splits and force
 * pages out to the file, so close/reopen really reads them back.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kv.h"
#include "kv_mem.h"
#include "../check_run.h"

#define VSIZE 40u

static char path[256];

static void setup(void)
{
	snprintf(path, sizeof(path), "/tmp/test_kv.%ld.%d.db", (long)getpid(), rand());
}
static void teardown(void)
{
	unlink(path);
}

static int open_store(struct kv_store **kv, bool create, uint32_t nframes)
{
	struct kv_config c = {.path = path, .create = create, .truncate = create,
			      .value_size = create ? VSIZE : 0};
	c.pool.page_size = 512;
	c.pool.nframes = nframes;
	return kv_open(kv, &c);
}

/* A value that names its key and a version. */
static void make_value(uint8_t *v, uint64_t key, uint64_t ver)
{
	for (unsigned i = 0; i < VSIZE; i++)
		v[i] = (uint8_t)(key * 7 + ver * 13 + i);
	memcpy(v, &key, 8);
}

static uint64_t scatter(uint64_t i)
{
	return (i * UINT64_C(0x9e3779b97f4a7c15)) ^ (i >> 3);
}

START_TEST(test_reopen_keeps_every_key)
{
	struct kv_store *kv;
	struct kv_check_info ci;
	uint8_t v[VSIZE], got[VSIZE];
	const uint64_t n = 3000;
	ck_assert_int_eq(open_store(&kv, true, 32), 0);
	for (uint64_t i = 0; i < n; i++) {
		make_value(v, scatter(i), 1);
		ck_assert_int_eq(kv_put(kv, scatter(i), v), 1);
	}
	for (uint64_t i = 0; i < n; i += 3) { /* overwrite a third */
		make_value(v, scatter(i), 2);
		ck_assert_int_eq(kv_put(kv, scatter(i), v), 0);
	}
	ck_assert_int_eq(kv_check(kv, &ci), 0);
	ck_assert_uint_eq(ci.nkeys, n);
	ck_assert_uint_ge(ci.height, 2);
	ck_assert_int_eq(kv_close(kv), 0);

	ck_assert_int_eq(open_store(&kv, false, 16), 0);
	ck_assert_uint_eq(kv_value_size(kv), VSIZE);
	for (uint64_t i = 0; i < n; i++) {
		make_value(v, scatter(i), i % 3 == 0 ? 2 : 1);
		ck_assert_int_eq(kv_get(kv, scatter(i), got), 0);
		ck_assert_mem_eq(got, v, VSIZE);
	}
	ck_assert_int_eq(kv_get(kv, scatter(n), got), -ENOENT);
	ck_assert_int_eq(kv_check(kv, &ci), 0);
	ck_assert_uint_eq(ci.nkeys, n);
	ck_assert_int_eq(kv_close(kv), 0);
}
END_TEST

struct scan_state {
	uint64_t last, count;
	bool sorted;
};
static int scan_cb(uint64_t key, const void *value, void *arg)
{
	struct scan_state *s = arg;
	uint64_t vk;
	memcpy(&vk, value, 8);
	if ((s->count && key <= s->last) || vk != key)
		s->sorted = false;
	s->last = key;
	s->count++;
	return 0;
}

START_TEST(test_scan_in_order)
{
	struct kv_store *kv;
	uint8_t v[VSIZE];
	ck_assert_int_eq(open_store(&kv, true, 64), 0);
	for (uint64_t i = 0; i < 1000; i++) { /* keys 10, 20, ..., 10000 */
		uint64_t k = ((i * 389) % 1000 + 1) * 10;
		make_value(v, k, 1);
		ck_assert_int_eq(kv_put(kv, k, v), 1);
	}
	struct scan_state s = {.sorted = true};
	ck_assert_int_eq(kv_scan(kv, 0, SIZE_MAX, scan_cb, &s), 1000);
	ck_assert(s.sorted);
	ck_assert_uint_eq(s.count, 1000);
	s = (struct scan_state){.sorted = true};
	ck_assert_int_eq(kv_scan(kv, 55, 7, scan_cb, &s), 7); /* 60..120 */
	ck_assert(s.sorted);
	ck_assert_uint_eq(s.last, 120);
	s = (struct scan_state){.sorted = true};
	ck_assert_int_eq(kv_scan(kv, 9995, 100, scan_cb, &s), 1); /* only 10000 */
	ck_assert_uint_eq(s.last, 10000);
	ck_assert_int_eq(kv_scan(kv, 10001, 100, scan_cb, &s), 0);
	ck_assert_int_eq(kv_close(kv), 0);
}
END_TEST

#define NTHREADS 6
#define PER_THREAD 600u
static struct kv_store *shared_kv;
static pthread_barrier_t start_line;

static void *inserter(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	uint8_t v[VSIZE], got[VSIZE];
	pthread_barrier_wait(&start_line);
	for (uint64_t i = 0; i < PER_THREAD; i++) {
		uint64_t k = scatter(i * NTHREADS + id);
		make_value(v, k, 1);
		if (kv_put(shared_kv, k, v) != 1 || kv_get(shared_kv, k, got) != 0 ||
		    memcmp(got, v, VSIZE) != 0)
			return (void *)1;
		if (kv_get(shared_kv, scatter((i / 2) * NTHREADS + (id + 1) % NTHREADS), got) == -EINVAL)
			return (void *)1;
	}
	return NULL;
}

START_TEST(test_concurrent_inserts)
{
	pthread_t th[NTHREADS];
	struct kv_check_info ci;
	uint8_t got[VSIZE];
	ck_assert_int_eq(open_store(&shared_kv, true, 128), 0);
	pthread_barrier_init(&start_line, NULL, NTHREADS);
	for (uintptr_t i = 0; i < NTHREADS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, inserter, (void *)i), 0);
	for (int i = 0; i < NTHREADS; i++) {
		void *r;
		pthread_join(th[i], &r);
		ck_assert_ptr_null(r);
	}
	pthread_barrier_destroy(&start_line);
	ck_assert_int_eq(kv_check(shared_kv, &ci), 0);
	ck_assert_uint_eq(ci.nkeys, (uint64_t)NTHREADS * PER_THREAD);
	for (uint64_t i = 0; i < (uint64_t)NTHREADS * PER_THREAD; i++) {
		ck_assert_int_eq(kv_get(shared_kv, scatter(i), got), 0);
		uint64_t k;
		memcpy(&k, got, 8);
		ck_assert_uint_eq(k, scatter(i));
	}
	ck_assert_int_eq(kv_close(shared_kv), 0);
}
END_TEST

/* Readers look up keys loaded before they start while inserters split
 * the tree under them (a small pool: pages come and go too): every lookup
 * finds its key with its value, whichever path it took (the optimistic
 * descent, its restarts, the latched fallback), and scans stay sorted. */
#define NREADERS 4
#define PRELOADED 3000u
static atomic_uint reader_errors;
static atomic_bool inserters_done;

static void *reader(void *arg)
{
	uint64_t x = (uintptr_t)arg * 2654435761u + 1;
	uint8_t got[VSIZE], want[VSIZE];
	unsigned rounds = 0;
	pthread_barrier_wait(&start_line);
	while (!atomic_load(&inserters_done) || rounds < 2000) {
		x = x * 6364136223846793005u + 1442695040888963407u;
		uint64_t k = scatter(UINT64_C(1) << 40 | (x >> 33) % PRELOADED);
		make_value(want, k, 1);
		if (kv_get(shared_kv, k, got) != 0 || memcmp(got, want, VSIZE) != 0)
			atomic_fetch_add(&reader_errors, 1);
		if (rounds++ % 64 == 0) {
			struct scan_state s = {.sorted = true};
			if (kv_scan(shared_kv, k, 50, scan_cb, &s) < 1 || !s.sorted)
				atomic_fetch_add(&reader_errors, 1);
		}
	}
	return NULL;
}

START_TEST(test_lookups_during_splits)
{
	pthread_t th[NTHREADS + NREADERS];
	uint8_t v[VSIZE];
	ck_assert_int_eq(open_store(&shared_kv, true, 64), 0);
	for (uint64_t i = 0; i < PRELOADED; i++) {
		uint64_t k = scatter(UINT64_C(1) << 40 | i);
		make_value(v, k, 1);
		ck_assert_int_eq(kv_put(shared_kv, k, v), 1);
	}
	atomic_store(&reader_errors, 0);
	atomic_store(&inserters_done, false);
	pthread_barrier_init(&start_line, NULL, NTHREADS + NREADERS);
	for (uintptr_t i = 0; i < NTHREADS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, inserter, (void *)i), 0);
	for (uintptr_t i = 0; i < NREADERS; i++)
		ck_assert_int_eq(pthread_create(&th[NTHREADS + i], NULL, reader, (void *)i), 0);
	for (int i = 0; i < NTHREADS; i++) {
		void *r;
		pthread_join(th[i], &r);
		ck_assert_ptr_null(r);
	}
	atomic_store(&inserters_done, true);
	for (int i = 0; i < NREADERS; i++)
		pthread_join(th[NTHREADS + i], NULL);
	pthread_barrier_destroy(&start_line);
	ck_assert_uint_eq(atomic_load(&reader_errors), 0);
	struct bp_stats st;
	bp_stats_init(&st);
	ck_assert_int_eq(bp_stats_get(kv_pool(shared_kv), &st), 0);
	ck_assert_uint_gt(st.optimistic_reads, 0); /* the optimistic paths ran */
	struct kv_check_info ci;
	ck_assert_int_eq(kv_check(shared_kv, &ci), 0);
	ck_assert_uint_eq(ci.nkeys, (uint64_t)NTHREADS * PER_THREAD + PRELOADED);
	ck_assert_int_eq(kv_close(shared_kv), 0);
}
END_TEST

/* A damaged inner node whose children are all page 0 (the meta page, never
 * a node; a torn read can also see 0, from a frame being zeroed for a new
 * node): lookups and inserts fail with -EBADMSG on every path (optimistic
 * and latched), and the meta page keeps no extra pin or latch (kv_close
 * would fail with -EBUSY). */
START_TEST(test_child_zero_is_refused)
{
	struct kv_store *kv;
	uint8_t v[VSIZE];
	ck_assert_int_eq(open_store(&kv, true, 16), 0);
	for (uint64_t k = 1; k <= 200; k++) {
		make_value(v, k, 1);
		ck_assert_int_eq(kv_put(kv, k, v), 1);
	}
	ck_assert_int_eq(kv_close(kv), 0);
	/* the root (an inner node by now): every child page number -> 0 */
	int fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	uint64_t root, hdr[3];
	ck_assert_int_eq(pread(fd, &root, 8, 24), 8); /* kv_meta: lsn, magic, sizes, root */
	ck_assert_int_eq(pread(fd, hdr, 24, (off_t)root * 512), 24);
	unsigned level = (unsigned)(hdr[1] & 0xffff), nkeys = (unsigned)((hdr[1] >> 16) & 0xffff);
	ck_assert_uint_ge(level, 1);
	unsigned inner_cap = (512 - 24 - 8) / 16;   /* kv_open.c, set_geometry */
	uint64_t zeros[64] = {0};
	ck_assert_int_eq(pwrite(fd, zeros, (nkeys + 1) * 8, (off_t)root * 512 + 24 + inner_cap * 8),
			 (ssize_t)((nkeys + 1) * 8));
	close(fd);
	ck_assert_int_eq(open_store(&kv, false, 16), 0);
	uint8_t got[VSIZE];
	ck_assert_int_eq(kv_get(kv, 5, got), -EBADMSG);
	ck_assert_int_eq(kv_put(kv, 1000, v), -EBADMSG);
	ck_assert_int_eq(kv_close(kv), 0);
}
END_TEST

START_TEST(test_bad_input)
{
	struct kv_store *kv = NULL;
	struct kv_config c = {.path = NULL};
	ck_assert_int_eq(kv_open(&kv, &c), -EINVAL);
	ck_assert_int_eq(kv_open(NULL, &c), -EINVAL);
	c.path = path;
	c.create = true;
	c.value_size = 4;
	ck_assert_int_eq(kv_open(&kv, &c), -EINVAL);
	c.value_size = 1000; /* 512-byte pages cannot hold 4 such values */
	c.pool.page_size = 512;
	ck_assert_int_eq(kv_open(&kv, &c), -EINVAL);
	ck_assert_ptr_null(kv);
	/* a store reopened with another value size is refused */
	ck_assert_int_eq(open_store(&kv, true, 16), 0);
	ck_assert_int_eq(kv_put(kv, 1, (uint8_t[VSIZE]){0}), 1);
	ck_assert_int_eq(kv_get(kv, 1, NULL), -EINVAL);
	ck_assert_int_eq(kv_close(kv), 0);
	c = (struct kv_config){.path = path, .value_size = VSIZE + 8};
	c.pool.page_size = 512;
	ck_assert_int_eq(kv_open(&kv, &c), -EBADMSG);
	c.value_size = 0;
	c.pool.page_size = 1024; /* wrong page size */
	ck_assert_int_eq(kv_open(&kv, &c), -EBADMSG);
}
END_TEST

static int count_files(const struct bp_frame_info *fi, void *arg)
{
	unsigned *seen = arg;
	if (fi->pageno != BP_NO_PAGE && fi->file < 3)
		seen[fi->file]++;
	return 0;
}

/* Three stores in one pool (kv_config.shared_pool): one memory budget
 * (64 frames for all), each store its own file and tree; the frame walk
 * shows pages of all three files; each reopens alone with its keys.  A
 * shared pool is refused for a durable store. */
START_TEST(test_three_stores_share_one_pool)
{
	char paths[3][300];
	struct kv_store *kv[3];
	uint8_t v[VSIZE], got[VSIZE];
	for (int f = 0; f < 3; f++)
		snprintf(paths[f], sizeof(paths[f]), "%s.%d", path, f);
	struct kv_config c = {.path = paths[0], .create = true, .truncate = true, .value_size = VSIZE};
	c.pool.page_size = 512;
	c.pool.nframes = 64;
	ck_assert_int_eq(kv_open(&kv[0], &c), 0);
	c.shared_pool = kv_pool(kv[0]);
	c.durable = true;
	c.path = paths[1];
	ck_assert_int_eq(kv_open(&kv[1], &c), -EINVAL);
	c.durable = false;
	for (int f = 1; f < 3; f++) {
		c.path = paths[f];
		ck_assert_int_eq(kv_open(&kv[f], &c), 0);
		ck_assert_ptr_eq(kv_pool(kv[f]), kv_pool(kv[0]));
	}
	for (uint64_t i = 0; i < 3000; i++) {
		make_value(v, scatter(i), i % 3);
		ck_assert_int_ge(kv_put(kv[i % 3], scatter(i), v), 0);
	}
	unsigned seen[3] = {0};
	ck_assert_int_eq(bp_frames_walk(kv_pool(kv[0]), count_files, seen), 0);
	for (int f = 0; f < 3; f++)
		ck_assert_uint_gt(seen[f], 0);
	for (int f = 2; f >= 0; f--) { /* the owner of the pool last */
		struct kv_check_info ci;
		ck_assert_int_eq(kv_check(kv[f], &ci), 0);
		ck_assert_uint_eq(ci.nkeys, 1000);
		ck_assert_int_eq(kv_close(kv[f]), 0);
	}
	for (int f = 0; f < 3; f++) {
		c = (struct kv_config){.path = paths[f]};
		c.pool.page_size = 512;
		ck_assert_int_eq(kv_open(&kv[f], &c), 0);
		for (uint64_t i = f; i < 3000; i += 3) {
			make_value(v, scatter(i), i % 3);
			ck_assert_int_eq(kv_get(kv[f], scatter(i), got), 0);
			ck_assert_int_eq(memcmp(v, got, VSIZE), 0);
		}
		ck_assert_int_eq(kv_get(kv[f], scatter((f + 1) % 3), got), -ENOENT);
		ck_assert_int_eq(kv_close(kv[f]), 0);
		unlink(paths[f]);
	}
}
END_TEST

struct msgs {
	unsigned n;
	char text[1024];
};

static void keep_msg(void *arg, int level, const char *msg)
{
	struct msgs *m = arg;
	ck_assert_int_eq(level, BP_LOG_ERROR);
	m->n++;
	size_t used = strlen(m->text);
	snprintf(m->text + used, sizeof(m->text) - used, "%s\n", msg);
}

/* A close that cannot write: kv_close returns the error, and both the
 * pool's report and the store's own "discarded" go to the callback given
 * in kv_config.pool (the store prints nothing itself). */
START_TEST(test_close_failure_is_logged)
{
	struct msgs m = {0};
	struct kv_config c = {.path = path, .create = true, .truncate = true, .value_size = VSIZE};
	c.pool.page_size = 512;
	c.pool.nframes = 16;
	c.pool.log = keep_msg;
	c.pool.log_arg = &m;
	struct kv_store *kv;
	ck_assert_int_eq(kv_open(&kv, &c), 0);
	ck_assert_int_eq(kv_put(kv, 1, (uint8_t[VSIZE]){0}), 1);
	struct bp_fault fa = {.op = BP_FAULT_WRITE, .kind = BP_FAULT_FAIL, .err = EIO};
	ck_assert_int_eq(bp_fault_set(kv_pool(kv), &fa), 0);
	ck_assert_int_eq(kv_close(kv), -EIO);
	ck_assert_msg(m.n == 2 && strstr(m.text, "bp_close: a write-back failed") &&
		      strstr(m.text, "kv_close: close failed"), "logged: %s", m.text);
}
END_TEST

/* The store copied to plain memory (kv_mem.h): every key reads back from
 * the copy as from the store, a key never written is -ENOENT, the copy
 * stays what it was when taken.  32 frames hold a fraction of the tree,
 * so the copy pins pages that must be read back from the file first. */
START_TEST(test_mem_copy_reads_like_the_store)
{
	struct kv_store *kv;
	struct kv_mem *m;
	struct kv_check_info ci;
	uint8_t v[VSIZE], got[VSIZE], want[VSIZE];
	ck_assert_int_eq(open_store(&kv, true, 32), 0);
	const uint64_t n = 3000;
	for (uint64_t i = 0; i < n; i++) {
		make_value(v, scatter(i), 1);
		ck_assert_int_eq(kv_put(kv, scatter(i), v), 1);
	}
	ck_assert_int_eq(kv_check(kv, &ci), 0);
	ck_assert_uint_ge(ci.height, 2); /* inner nodes on more than one level */
	ck_assert_int_eq(kv_mem_copy(kv, &m), 0);
	/* the meta page, every leaf and every inner node */
	ck_assert_uint_eq(kv_mem_pages(m), 1 + ci.leaves + ci.internal);
	ck_assert_uint_eq(kv_mem_bytes(m), kv_mem_pages(m) * 512);
	for (uint64_t i = 0; i < n; i++) {
		make_value(want, scatter(i), 1);
		ck_assert_int_eq(kv_mem_get(m, scatter(i), got), 0);
		ck_assert_mem_eq(got, want, VSIZE);
	}
	ck_assert_int_eq(kv_mem_get(m, scatter(n), got), -ENOENT);
	/* a snapshot: a later put changes the store, not the copy */
	make_value(v, scatter(0), 2);
	ck_assert_int_eq(kv_put(kv, scatter(0), v), 0);
	ck_assert_int_eq(kv_get(kv, scatter(0), got), 0);
	ck_assert_mem_eq(got, v, VSIZE);
	make_value(want, scatter(0), 1);
	ck_assert_int_eq(kv_mem_get(m, scatter(0), got), 0);
	ck_assert_mem_eq(got, want, VSIZE);
	kv_mem_free(m);
	ck_assert_int_eq(kv_close(kv), 0);
}
END_TEST

START_TEST(test_mem_copy_empty_store_and_bad_input)
{
	struct kv_store *kv;
	struct kv_mem *m = NULL;
	uint8_t got[VSIZE];
	ck_assert_int_eq(open_store(&kv, true, 32), 0);
	ck_assert_int_eq(kv_mem_copy(NULL, &m), -EINVAL);
	ck_assert_int_eq(kv_mem_copy(kv, NULL), -EINVAL);
	ck_assert_ptr_null(m);
	ck_assert_int_eq(kv_mem_copy(kv, &m), 0); /* the meta page and an empty root */
	ck_assert_int_eq(kv_mem_get(m, 1, got), -ENOENT);
	ck_assert_int_eq(kv_mem_get(m, 1, NULL), -EINVAL);
	ck_assert_int_eq(kv_mem_get(NULL, 1, got), -EINVAL);
	kv_mem_free(m);
	kv_mem_free(NULL);
	ck_assert_int_eq(kv_close(kv), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kv");
	TCase *tc = tcase_create("kv");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_reopen_keeps_every_key);
	tcase_add_test(tc, test_scan_in_order);
	tcase_add_test(tc, test_concurrent_inserts);
	tcase_add_test(tc, test_lookups_during_splits);
	tcase_add_test(tc, test_bad_input);
	tcase_add_test(tc, test_child_zero_is_refused);
	tcase_add_test(tc, test_close_failure_is_logged);
	tcase_add_test(tc, test_three_stores_share_one_pool);
	tcase_add_test(tc, test_mem_copy_reads_like_the_store);
	tcase_add_test(tc, test_mem_copy_empty_store_and_bad_input);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
