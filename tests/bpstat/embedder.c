/* SPDX-License-Identifier: MIT */
/*
 * embedder.c NAME DB SECONDS - an embedder's own program (not bpbench)
 * that publishes its pool's statistics for bpstat: tests/bpstat's
 * bpstat_embedder.sh runs it, watches it with bpstat, then kills it.
 *
 * Design note
 * -----------
 * Opens a 64-frame pool on DB (created, truncated), creates 256 pages,
 * calls bp_stats_publish(pool, NAME), then THREADS threads read random
 * pages (misses and reads: the pool holds a quarter of them) and, one
 * operation in four, take page 0's latch exclusive and hold it 200 us
 * (so the others wait on page 0: the hot page bpstat must show).  Each
 * thread counts its operations in its own slot (relaxed: a report); the
 * main thread sums them into bp_stats_publish_ops every 10 ms.  It stops
 * by itself after SECONDS (so a failed test never leaves it running), or
 * earlier when killed: the test's point.  Uses bufpool's public API only.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bufpool/bufpool.h"

#define THREADS 3u
#define PAGES 256u

static struct bp_pool *pool;
static _Atomic int stop;
static _Atomic uint64_t ops[THREADS];

static void *worker(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	uint64_t x = 88172645463325252ull + id; /* xorshift64 */
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		struct bp_frame *f;
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		bool hot = x % 4 == 0;
		if (bp_get(pool, hot ? 0 : x % PAGES, 0, &f) != 0)
			continue;
		if (hot && bp_latch(pool, f, BP_LATCH_EXCLUSIVE) == 0) {
			/* load to contend on, not synchronisation */
			nanosleep(&(struct timespec){0, 200000}, NULL);
			bp_unlatch(pool, f, BP_LATCH_EXCLUSIVE);
		}
		bp_release(pool, f);
		atomic_fetch_add_explicit(&ops[id], 1, memory_order_relaxed);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[THREADS];
	if (argc != 4) {
		fprintf(stderr, "usage: embedder NAME DB SECONDS\n");
		return 2;
	}
	struct bp_config cfg;
	bp_config_init(&cfg);
	cfg.path = argv[2];
	cfg.nframes = 64;
	cfg.page_size = 4096;
	cfg.flags = BP_OPEN_CREATE | BP_OPEN_TRUNCATE;
	int rc = bp_open(&pool, &cfg);
	if (rc) {
		fprintf(stderr, "embedder: bp_open: %s\n", strerror(-rc));
		return 1;
	}
	for (unsigned i = 0; i < PAGES; i++) {
		struct bp_frame *f;
		uint64_t pg;
		if ((rc = bp_new_page(pool, &pg, &f)) != 0) {
			fprintf(stderr, "embedder: bp_new_page: %s\n", strerror(-rc));
			return 1;
		}
		bp_release(pool, f);
	}
	if ((rc = bp_stats_publish(pool, argv[1])) != 0) {
		fprintf(stderr, "embedder: bp_stats_publish: %s\n", strerror(-rc));
		return 1;
	}
	for (unsigned i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i) != 0)
			return 1;
	long end = atol(argv[3]) * 100;
	for (long tick = 0; tick < end; tick++) {
		nanosleep(&(struct timespec){0, 10000000}, NULL); /* the ops' pace */
		uint64_t sum = 0;
		for (unsigned i = 0; i < THREADS; i++)
			sum += atomic_load_explicit(&ops[i], memory_order_relaxed);
		bp_stats_publish_ops(pool, sum);
	}
	atomic_store(&stop, 1);
	for (unsigned i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	rc = bp_close(pool); /* removes the stats file */
	remove(argv[2]);
	return rc ? 1 : 0;
}
