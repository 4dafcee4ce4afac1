/* SPDX-License-Identifier: MIT */
/*
 * consumer.c - a program that uses the installed (or subproject) fwait and
 * bufpool only through their public headers and pkg-config / Meson
 * dependency, as any consumer would (tests/consumer/run.sh).
 *
 * Opens a pool on a file in a fresh temporary directory, creates a page,
 * writes it, evicts it, reads it back from the file, closes the pool; then
 * locks and unlocks a bit of a word with fwait.  Exits non-zero, naming the
 * call, on the first unexpected result.
 *
 * Built with -DCONSUMER_POOL_ONLY it calls bufpool alone (no fwait_*
 * call), so that a link with --as-needed leaves libfwait.so out of its
 * NEEDED entries: it then starts only if libbufpool.so finds libfwait.so
 * itself (its RUNPATH), the program's own rpath naming only the prefix
 * (tests/consumer/cmake, consumer-pool-only).
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bufpool/bufpool.h>
#include <fwait/fwait.h>

static int failures;

static void expect(const char *what, int got, int want)
{
	if (got != want) {
		fprintf(stderr, "consumer (C): %s returned %d, expected %d\n", what, got, want);
		failures++;
	}
}

static int pool_check(const char *path)
{
	static const char msg[] = "written by the C consumer";
	struct bp_config cfg;
	bp_config_init(&cfg);
	cfg.path = path;
	cfg.flags = BP_OPEN_CREATE | BP_OPEN_TRUNCATE | BP_OPEN_NO_BGWRITER;
	cfg.nframes = 8;
	struct bp_pool *pool = NULL;
	int r = bp_open(&pool, &cfg);
	expect("bp_open", r, 0);
	if (r)
		return 1;

	uint64_t pageno = BP_NO_PAGE;
	struct bp_frame *f = NULL;
	expect("bp_new_page", bp_new_page(pool, &pageno, &f), 0);
	if (!f) {
		bp_discard(pool);
		return 1;
	}
	expect("bp_new_page's page number", (int)pageno, 0);
	expect("bp_latch exclusive", bp_latch(pool, f, BP_LATCH_EXCLUSIVE), 0);
	memcpy(bp_data(f), msg, sizeof(msg));
	expect("bp_mark_dirty", bp_mark_dirty(pool, f), 0);
	expect("bp_unlatch", bp_unlatch(pool, f, BP_LATCH_EXCLUSIVE), 0);
	expect("bp_release", bp_release(pool, f), 0);

	/* Written back and dropped from the pool: the read comes from the file. */
	expect("bp_flush", bp_flush(pool), 0);
	expect("bp_evict_page", bp_evict_page(pool, pageno), 0);
	f = NULL;
	expect("bp_get", bp_get(pool, pageno, 0, &f), 0);
	if (f) {
		expect("bp_latch shared", bp_latch(pool, f, BP_LATCH_SHARED), 0);
		expect("page contents after the read", memcmp(bp_data(f), msg, sizeof(msg)), 0);
		expect("bp_unlatch", bp_unlatch(pool, f, BP_LATCH_SHARED), 0);
		expect("bp_release", bp_release(pool, f), 0);
	}


	struct bp_stats st;
	bp_stats_init(&st);
	expect("bp_stats_get", bp_stats_get(pool, &st), 0);
	expect("bp_stats.file_pages", (int)st.file_pages, 1);
	printf("consumer (C): pool of %u frames, %zu bytes, jemalloc_arena %u\n",
	       st.nframes, st.pool_bytes, st.jemalloc_arena);
	r = bp_close(pool);
	expect("bp_close", r, 0);
	if (r)
		bp_discard(pool);
	return 0;
}

#ifndef CONSUMER_POOL_ONLY
static int fwait_check(void)
{
	struct fwait_table *t = NULL;
	int r = fwait_table_create(&t, NULL);
	expect("fwait_table_create", r, 0);
	if (r)
		return 1;
	_Atomic uint32_t word = 0;
	expect("fwait_bit_lock", fwait_bit_lock(t, &word, 3, NULL), 0);
	expect("fwait_bit_test after lock", fwait_bit_test(&word, 3), 1);
	expect("fwait_bit_trylock of a held bit", fwait_bit_trylock(&word, 3), -EBUSY);
	expect("fwait_bit_unlock", fwait_bit_unlock(t, &word, 3), 0);
	expect("fwait_bit_test after unlock", fwait_bit_test(&word, 3), 0);
	expect("fwait_bit_unlock of a free bit", fwait_bit_unlock(t, &word, 3), -EPERM);
	fwait_table_destroy(t);
	return 0;
}
#endif

int main(void)
{
	char dir[] = "/tmp/fb-consumer-c.XXXXXX";
	if (!mkdtemp(dir)) {
		perror("consumer (C): mkdtemp");
		return 1;
	}
	char path[sizeof(dir) + 16];
	snprintf(path, sizeof(path), "%s/pages", dir);
	pool_check(path);
#ifndef CONSUMER_POOL_ONLY
	fwait_check();
#endif
	unlink(path);
	rmdir(dir);
	if (failures) {
		fprintf(stderr, "consumer (C): %d check(s) failed\n", failures);
		return 1;
	}
	printf("consumer (C): ok\n");
	return 0;
}
