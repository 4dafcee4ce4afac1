/* SPDX-License-Identifier: MIT */
/*
 * ycsb_crew.c - the YCSB workers' loops and the monitor (see ycsb_crew.h).
 *
 * Design note: layer: ycsb_common, on ycsb_stream.c, gen.c, util's clock
 * and histogram.  Locks and orderings: ycsb_crew.h.
 */
#include "ycsb_crew.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util/clock.h"

void ycsb_crew_init(struct ycsb_crew *c, uint64_t seed, double theta)
{
	pthread_mutex_init(&c->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* util_now_ns's clock */
	pthread_cond_init(&c->done_cv, &ca);
	pthread_condattr_destroy(&ca);
	struct ycsb_hand *h0 = ycsb_crew_hand(c, 0);
	zipf_init(&h0->zipf, c->records, theta); /* O(records): once */
	for (unsigned i = 0; i < c->threads; i++) {
		struct ycsb_hand *h = ycsb_crew_hand(c, i);
		h->crew = c;
		h->rng = rng_seeded(seed, i);
		h->zipf = h0->zipf;
	}
}

void ycsb_crew_fini(struct ycsb_crew *c)
{
	pthread_cond_destroy(&c->done_cv);
	pthread_mutex_destroy(&c->lock);
}

int ycsb_hand_fail(struct ycsb_hand *h, int rc, const char *what, uint64_t recno)
{
	if (h->rc == 0) {
		h->rc = rc;
		snprintf(h->err, sizeof(h->err), "%s of record %" PRIu64 ": %s", what, recno,
			 strerror(-rc));
	}
	atomic_store_explicit(&h->crew->stop, true, memory_order_relaxed);
	return rc;
}

static void load_loop(struct ycsb_hand *h)
{
	struct ycsb_crew *c = h->crew;
	for (;;) {
		uint64_t r = atomic_fetch_add_explicit(&c->insert_next, 1, memory_order_relaxed);
		if (r >= c->records || atomic_load_explicit(&c->stop, memory_order_relaxed)) {
			if (r >= c->records) /* undo the overshoot: the run inserts from here */
				atomic_fetch_sub_explicit(&c->insert_next, 1, memory_order_relaxed);
			break;
		}
		if (c->load(h, r))
			break;
		atomic_fetch_add_explicit(&h->done, 1, memory_order_relaxed);
	}
}

static void run_loop(struct ycsb_hand *h)
{
	struct ycsb_crew *c = h->crew;
	for (uint64_t i = 0; !c->ops || i < h->quota; i++) {
		if (atomic_load_explicit(&c->stop, memory_order_relaxed))
			break;
		enum ycsb_op op = ycsb_pick_op(c->mix, &h->rng);
		uint64_t t0 = util_now_ns();
		if (c->op(h, op))
			break;
		util_hist_add(&h->hist[op], util_now_ns() - t0);
		atomic_fetch_add_explicit(&h->done, 1, memory_order_relaxed);
	}
}

/* A worker's end: the last one wakes the monitor. */
static void leave(struct ycsb_crew *c)
{
	pthread_mutex_lock(&c->lock);
	if (--c->running == 0)
		pthread_cond_signal(&c->done_cv);
	pthread_mutex_unlock(&c->lock);
}

static void *load_main(void *arg)
{
	struct ycsb_hand *h = arg;
	load_loop(h);
	leave(h->crew);
	return NULL;
}

static void *run_main(void *arg)
{
	struct ycsb_hand *h = arg;
	run_loop(h);
	leave(h->crew);
	return NULL;
}

uint64_t ycsb_crew_done(const struct ycsb_crew *c)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < c->threads; i++)
		sum += atomic_load_explicit(&ycsb_crew_hand(c, i)->done, memory_order_relaxed);
	return sum;
}

int ycsb_crew_phase(struct ycsb_crew *c, const char *name, bool load, double *seconds)
{
	const uint64_t tick_ns = 100000000; /* 0.1 s */
	unsigned started = 0;
	/* Before the first worker starts: a short --ops phase can be over
	 * before the last pthread_create returns. */
	uint64_t t0 = util_now_ns(), last_ns = t0, last_ops = 0, ticks = 0;
	c->running = c->threads;
	for (unsigned i = 0; i < c->threads; i++, started++) {
		struct ycsb_hand *h = ycsb_crew_hand(c, i);
		atomic_store_explicit(&h->done, 0, memory_order_relaxed);
		h->quota = c->ops / c->threads + (i < c->ops % c->threads);
		if (pthread_create(&h->thread, NULL, load ? load_main : run_main, h) != 0) {
			fprintf(stderr, "%s: cannot start thread %u\n", c->prog, i);
			atomic_store_explicit(&c->stop, true, memory_order_relaxed);
			pthread_mutex_lock(&c->lock);
			c->running -= c->threads - i;
			pthread_mutex_unlock(&c->lock);
			break;
		}
	}
	uint64_t end = !load && !c->ops ? t0 + (uint64_t)(c->duration_s * 1e9) : 0;
	pthread_mutex_lock(&c->lock);
	while (c->running > 0) {
		uint64_t next = t0 + (ticks + 1) * tick_ns;
		struct timespec dl = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
		if (pthread_cond_timedwait(&c->done_cv, &c->lock, &dl) != ETIMEDOUT)
			continue; /* the last worker finished (or a spurious wake) */
		pthread_mutex_unlock(&c->lock);
		uint64_t now = util_now_ns(), ops = ycsb_crew_done(c);
		ticks++;
		bool quit = c->tick && c->tick(c->arg, ops);
		if ((end && now >= end) || quit)
			atomic_store_explicit(&c->stop, true, memory_order_relaxed);
		if (c->progress_every && ticks % c->progress_every == 0) {
			c->progress(c->arg, name, (double)(now - t0) / 1e9, ops,
				    (double)(ops - last_ops) * 1e9 / (double)(now - last_ns));
			last_ns = now;
			last_ops = ops;
		}
		pthread_mutex_lock(&c->lock);
	}
	pthread_mutex_unlock(&c->lock);
	*seconds = (double)(util_now_ns() - t0) / 1e9;
	int rc = 0;
	for (unsigned i = 0; i < started; i++) {
		struct ycsb_hand *h = ycsb_crew_hand(c, i);
		pthread_join(h->thread, NULL);
		if (h->rc && !rc) {
			fprintf(stderr, "%s%s: %s failed: %s\n", c->fail_lead, c->prog, name,
				h->err);
			rc = h->rc;
		}
	}
	return rc;
}

void ycsb_crew_latency(const struct ycsb_crew *c, struct util_hist per[OP_COUNT],
		       struct util_hist *all)
{
	for (unsigned i = 0; i < c->threads; i++)
		for (int op = 0; op < OP_COUNT; op++) {
			util_hist_merge(&per[op], &ycsb_crew_hand(c, i)->hist[op]);
			util_hist_merge(all, &ycsb_crew_hand(c, i)->hist[op]);
		}
}
