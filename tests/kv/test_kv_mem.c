/*
 * test_kv_mem.c - unit tests of the store's plain-memory copy
 * (tools/kv/kv_mem.c): every key reads back from the copy as from the
 * store, a key never written is -ENOENT, the copy stays what it was when
 * taken, bad arguments are refused.
 *
 * Design note: through kv.h and kv_mem.h only.  Small pages (512 B) and a
 * pool of 32 frames make a deep tree that does not fit, so the copy pins
 * pages that must be read back from the file first.
 */
#include <check.h>
#include <errno.h>
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
	snprintf(path, sizeof(path), "/tmp/test_kv_mem.%ld.%d.db", (long)getpid(), rand());
}
static void teardown(void)
{
	unlink(path);
}

static struct kv_store *open_store(void)
{
	struct kv_store *kv;
	struct kv_config c = {.path = path, .create = true, .truncate = true, .value_size = VSIZE};
	c.pool.page_size = 512;
	c.pool.nframes = 32;
	ck_assert_int_eq(kv_open(&kv, &c), 0);
	return kv;
}

static uint64_t scatter(uint64_t i)
{
	return (i * UINT64_C(0x9e3779b97f4a7c15)) ^ (i >> 3);
}

static void make_value(uint8_t *v, uint64_t key, uint64_t ver)
{
	for (unsigned i = 0; i < VSIZE; i++)
		v[i] = (uint8_t)(key * 7 + ver * 13 + i);
	memcpy(v, &key, 8);
}

START_TEST(test_copy_reads_like_the_store)
{
	struct kv_store *kv = open_store();
	struct kv_mem *m;
	struct kv_check_info ci;
	uint8_t v[VSIZE], got[VSIZE], want[VSIZE];
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

START_TEST(test_empty_store_and_bad_input)
{
	struct kv_store *kv = open_store();
	struct kv_mem *m = NULL;
	uint8_t got[VSIZE];
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
	Suite *s = suite_create("kv_mem");
	TCase *tc = tcase_create("kv_mem");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_copy_reads_like_the_store);
	tcase_add_test(tc, test_empty_store_and_bad_input);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
