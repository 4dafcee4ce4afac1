/* SPDX-License-Identifier: MIT */
/*
 * embed.c - the smallest complete program embedding bufpool: create a page,
 * write it, make it durable, close; reopen, read it back, compare, close.
 *
 * Design note: an application of the public API only (bufpool/bufpool.h),
 * nothing internal.  docs/bufpool.md shows this file verbatim, and the test
 * "example embed is the one in docs/bufpool.md" fails if the two differ.
 * Usage: embed [FILE]  (default: a file in a new directory under /tmp).
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <bufpool/bufpool.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Every bufpool call returns 0 (or a count) or a negative errno, and never
 * aborts: check each one. */
#define CHECK(call)                                                           \
	do {                                                                  \
		int rc_ = (call);                                             \
		if (rc_ < 0) {                                                \
			fprintf(stderr, "embed: %s: %s\n", #call, strerror(-rc_)); \
			exit(1);                                              \
		}                                                             \
	} while (0)

/* The library writes nothing itself; this callback shows why a call failed
 * (a refused config, a page still pinned at close, a failed write-back).
 * It runs on the thread of the failing call and must not call the pool. */
static void log_to_stderr(void *arg, int level, const char *msg)
{
	(void)arg;
	fprintf(stderr, "bufpool%s: %s\n", level == BP_LOG_ERROR ? " error" : "", msg);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/embed-XXXXXX", tmp[64];
	const char *path = argv[1];
	if (argc < 2) {
		if (!mkdtemp(dir)) {
			perror("embed: mkdtemp");
			return 1;
		}
		snprintf(tmp, sizeof(tmp), "%s/pages", dir);
		path = tmp;
	}
	struct bp_config cfg;
	bp_config_init(&cfg);                 /* every 0 is a default */
	cfg.path = path;
	cfg.flags = BP_OPEN_CREATE | BP_OPEN_TRUNCATE; /* start empty */
	cfg.nframes = 64;                     /* 64 frames of 4 KiB pages */
	cfg.log = log_to_stderr;
	struct bp_pool *pool;
	CHECK(bp_open(&pool, &cfg));

	/* A new page at the end of the file, returned pinned (its frame stays
	 * valid and in memory until bp_release), zero-filled, already dirty. */
	uint64_t pageno;
	struct bp_frame *f;
	CHECK(bp_new_page(pool, &pageno, &f));
	char text[64];
	snprintf(text, sizeof(text), "hello from page %llu", (unsigned long long)pageno);
	/* Exclusive latch: no reader sees the page half-written, and no
	 * write-back of it is in flight while it changes. */
	CHECK(bp_latch(pool, f, BP_LATCH_EXCLUSIVE));
	memcpy(bp_data(f), text, strlen(text) + 1);
	/* Dirty again, before unlatching: the background writer may have
	 * written the zero page meanwhile, and this change must be written. */
	CHECK(bp_mark_dirty(pool, f));
	CHECK(bp_unlatch(pool, f, BP_LATCH_EXCLUSIVE));
	CHECK(bp_release(pool, f));           /* unpinned: f may be evicted, forget it */
	/* Write back every dirty page, wait, fsync: once this returns 0 the
	 * page survives a crash (the point to acknowledge a commit). */
	CHECK(bp_flush(pool));
	/* Flushes again and frees the pool, only if it returns 0: -EBUSY while
	 * a page is pinned; on a write error the pool stays open, pages kept. */
	CHECK(bp_close(pool));

	/* Reopen the file as it is now and read the page back. */
	cfg.flags = BP_OPEN_READONLY;
	CHECK(bp_open(&pool, &cfg));
	/* Pins the page, reading it in if absent: -ENXIO past the end of the
	 * file (BP_GET_CREATE would create it instead). */
	CHECK(bp_get(pool, pageno, 0, &f));
	CHECK(bp_latch(pool, f, BP_LATCH_SHARED)); /* readers share, writers wait */
	int same = strcmp(bp_data(f), text) == 0;
	CHECK(bp_unlatch(pool, f, BP_LATCH_SHARED));
	CHECK(bp_release(pool, f));
	CHECK(bp_close(pool));

	if (argc < 2) {
		unlink(path);
		rmdir(dir);
	}
	if (!same) {
		fprintf(stderr, "embed: page %llu did not read back\n", (unsigned long long)pageno);
		return 1;
	}
	printf("embed: page %llu read back: %s\n", (unsigned long long)pageno, text);
	return 0;
}
