/* SPDX-License-Identifier: MIT */
/*
 * hit_run.c - bpbench hit's access modes (the table of rows) and one
 * cell: its workers, started together, stopped by a flag, timed.
 *
 * Design note
 * -----------
 * Layer: bpbench, directly on bufpool, with util for the clock and the
 * PRNG and cpu.h for rusage (see hit_int.h).
 *
 * A mode is one access function (a page number and a byte offset in, the
 * byte out, or an error) and one worker loop made from it by hit_loop:
 * hit_loop is always inlined into each mode's loop, so every mode runs
 * the same loop (PRNG, page choice, the byte's check, the stop test) with
 * its access inlined, and no mode pays an indirect call per access the
 * floor would not.  A new mode (the optimistic read) is an access
 * function, a one-line loop and a row of hit_modes[] (the optimistic read
 * is one).
 *
 * Each access draws one number from the worker's xorshift64* (util/prng.h):
 * its high 32 bits pick the page (multiply-shift: no division), its low
 * bits the byte in the page, in both patterns, so the hot pattern differs
 * from the random one only in the page.  Every access checks that its
 * byte is its page's (hit_page_byte); a wrong one fails the run.
 *
 * Why the pin mode may read without a latch: nothing writes a page during
 * the run, and bp_get orders the contents its read left (the warm-up's)
 * before its return (bufpool.h).  It measures what the pin alone costs;
 * the latched mode is what a reader must do once writers exist (the
 * store's read path).
 *
 * Threads: the main thread creates every worker, which waits at a gate
 * (lock/cond) until all exist, so a failed pthread_create can send the
 * started ones home (gate 2).  Then it reads the clock and rusage, opens
 * the gate, sleeps until the deadline, sets stop (relaxed: it publishes
 * nothing; the workers' results are read after pthread_join, which
 * orders them), joins them and reads the clock and rusage again.  The
 * workers test stop once per HIT_BATCH accesses, so the floor's loop does
 * not pay a load of a shared line per access.
 */
#include "hit_int.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu.h"
#include "toolutil.h"
#include "util/clock.h"
#include "util/prng.h"

#define HIT_BATCH 64

const char *const hit_pattern_names[HIT_PATTERN_COUNT] = { "random", "hot" };

struct hit_cell {
	const struct hit_data *d;
	enum hit_mode_id mode;
	enum hit_pattern pattern;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int gate;                 /* guarded by lock: 0 wait, 1 go, 2 go home */
	_Atomic bool stop;
};

struct hit_worker {
	alignas(64) struct hit_cell *cell;
	pthread_t tid;
	uint64_t rng;
	uint64_t accesses;        /* results: read after pthread_join */
	uint64_t wrong;           /* accesses that read another page's byte */
	int rc;
	const char *call;         /* the call that failed, with rc */
	uint64_t page;            /* its page */
};

/* Record the first error of a worker's access: rc, after noting where. */
static int fail(struct hit_worker *w, const char *call, uint64_t page, int rc)
{
	w->call = call;
	w->page = page;
	return rc;
}

/* The worker loop of an access function (see above). */
typedef int hit_access_fn(struct hit_worker *w, const struct hit_data *d, uint64_t page,
			  uint32_t off, uint8_t *out);

static inline __attribute__((always_inline)) int hit_loop(struct hit_worker *w,
							  hit_access_fn *access)
{
	const struct hit_data *d = w->cell->d;
	const bool hot = w->cell->pattern == HIT_HOT;
	const uint64_t npages = d->opt->pages;
	const uint32_t mask = d->opt->page_size - 1;
	uint64_t s = w->rng, n = 0, wrong = 0;
	int rc = 0;

	while (rc == 0 && !atomic_load_explicit(&w->cell->stop, memory_order_relaxed)) {
		for (int i = 0; i < HIT_BATCH; i++) {
			uint64_t r = util_rand_next(&s);
			uint64_t page = hot ? HIT_HOT_PAGE : ((r >> 32) * npages) >> 32;
			uint8_t b;
			rc = access(w, d, page, (uint32_t)r & mask, &b);
			if (rc != 0)
				break;
			wrong += b != hit_page_byte(page);
			n++;
		}
	}
	w->rng = s;
	w->accesses = n;
	w->wrong = wrong;
	return rc;
}

/* ---- The modes --------------------------------------------------------------- */

static inline int access_memory(struct hit_worker *w, const struct hit_data *d, uint64_t page,
				uint32_t off, uint8_t *out)
{
	(void)w;
	*out = d->mem[(page << d->page_shift) + off];
	return 0;
}

static inline int access_pin(struct hit_worker *w, const struct hit_data *d, uint64_t page,
			     uint32_t off, uint8_t *out)
{
	struct bp_frame *f;
	int rc = bp_get(d->pool, page, 0, &f);
	if (rc != 0)
		return fail(w, "bp_get", page, rc);
	*out = ((const uint8_t *)bp_data(f))[off];
	rc = bp_release(d->pool, f);
	return rc != 0 ? fail(w, "bp_release", page, rc) : 0;
}

static inline int access_latched(struct hit_worker *w, const struct hit_data *d, uint64_t page,
				 uint32_t off, uint8_t *out)
{
	struct bp_frame *f;
	int rc = bp_get(d->pool, page, 0, &f);
	if (rc != 0)
		return fail(w, "bp_get", page, rc);
	rc = bp_latch(d->pool, f, BP_LATCH_SHARED);
	if (rc != 0) {
		bp_release(d->pool, f);
		return fail(w, "bp_latch", page, rc);
	}
	*out = ((const uint8_t *)bp_data(f))[off];
	rc = bp_unlatch(d->pool, f, BP_LATCH_SHARED);
	int rc2 = bp_release(d->pool, f);
	if (rc != 0)
		return fail(w, "bp_unlatch", page, rc);
	return rc2 != 0 ? fail(w, "bp_release", page, rc2) : 0;
}

/* Nothing writes the pages during a run, so a read that ends invalid is
 * an error here (the pool's counters also show no restart). */
static inline int access_optimistic(struct hit_worker *w, const struct hit_data *d,
				    uint64_t page, uint32_t off, uint8_t *out)
{
	struct bp_read rd;
	int rc = bp_read_begin(d->pool, page, &rd);
	if (rc != 0)
		return fail(w, "bp_read_begin", page, rc);
	*out = ((const uint8_t *)rd.data)[off];
	rc = bp_read_end(&rd);
	return rc != 0 ? fail(w, "bp_read_end", page, rc) : 0;
}

static int loop_memory(struct hit_worker *w) { return hit_loop(w, access_memory); }
static int loop_optimistic(struct hit_worker *w) { return hit_loop(w, access_optimistic); }
static int loop_pin(struct hit_worker *w) { return hit_loop(w, access_pin); }
static int loop_latched(struct hit_worker *w) { return hit_loop(w, access_latched); }

const struct hit_mode hit_modes[HIT_MODE_COUNT] = {
	[HIT_MEMORY] = { "memory", "a byte of a plain array, no pool (the floor)", false,
			 loop_memory },
	[HIT_PIN] = { "pin", "bp_get, read a byte, bp_release", true, loop_pin },
	[HIT_LATCHED] = { "latched", "bp_get + latch shared, read, unlatch + release", true,
			  loop_latched },
	[HIT_OPTIMISTIC] = { "optimistic", "bp_read_begin, read a byte, bp_read_end (no pin, "
			     "no latch)", true, loop_optimistic },
};

/* ---- One cell ------------------------------------------------------------------ */

static void *worker_main(void *arg)
{
	struct hit_worker *w = arg;
	struct hit_cell *c = w->cell;

	pthread_mutex_lock(&c->lock);
	while (c->gate == 0)
		pthread_cond_wait(&c->cond, &c->lock);
	bool go = c->gate == 1;
	pthread_mutex_unlock(&c->lock);
	if (go)
		w->rc = hit_modes[c->mode].loop(w);
	return NULL;
}

static void open_gate(struct hit_cell *c, int gate)
{
	pthread_mutex_lock(&c->lock);
	c->gate = gate;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

/* Sum the workers' results into out; 0, or the first worker's error
 * (reported). */
static int collect(const struct hit_cell *c, const struct hit_worker *w, unsigned threads,
		   struct hit_sample *out)
{
	uint64_t wrong = 0;
	int rc = 0;
	for (unsigned i = 0; i < threads; i++) {
		out->accesses += w[i].accesses;
		wrong += w[i].wrong;
		if (w[i].rc != 0 && rc == 0) {
			rc = w[i].rc;
			fprintf(stderr, HIT_PROG ": %s %s, %u threads: %s(page %" PRIu64 "): %s\n",
				hit_modes[c->mode].name, hit_pattern_names[c->pattern], threads,
				w[i].call, w[i].page, strerror(-rc));
		}
	}
	if (rc == 0 && wrong != 0) {
		fprintf(stderr, HIT_PROG ": %s %s, %u threads: %" PRIu64 " accesses read another "
			"page's byte\n", hit_modes[c->mode].name, hit_pattern_names[c->pattern],
			threads, wrong);
		rc = -EBADMSG;
	}
	return rc;
}

int hit_run_cell(const struct hit_data *d, enum hit_mode_id mode, enum hit_pattern pattern,
		 unsigned threads, struct hit_sample *out)
{
	struct hit_cell c = { .d = d, .mode = mode, .pattern = pattern };
	struct hit_worker *w = aligned_alloc(64, threads * sizeof(*w));
	if (w == NULL)
		return -ENOMEM;
	pthread_mutex_init(&c.lock, NULL);
	pthread_cond_init(&c.cond, NULL);
	unsigned started = 0;
	int rc = 0;
	for (; started < threads; started++) {
		w[started] = (struct hit_worker){
			.cell = &c, .rng = util_rand_seed(d->opt->seed, started),
		};
		rc = -pthread_create(&w[started].tid, NULL, worker_main, &w[started]);
		if (rc != 0) {
			fprintf(stderr, HIT_PROG ": cannot start thread %u of %u: %s\n", started + 1,
				threads, strerror(-rc));
			break;
		}
	}
	*out = (struct hit_sample){ 0 };
	struct cpu_usage u0 = cpu_usage_now();
	uint64_t t0 = util_now_ns();
	open_gate(&c, rc == 0 ? 1 : 2);
	if (rc == 0) {
		tool_sleep(d->opt->duration_s); /* cut short by a stop signal */
		atomic_store_explicit(&c.stop, true, memory_order_relaxed);
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(w[i].tid, NULL);
	uint64_t t1 = util_now_ns();
	struct cpu_usage u1 = cpu_usage_now();
	if (rc == 0) {
		out->wall_s = (double)(t1 - t0) / 1e9;
		out->cpu_s = (u1.user_s - u0.user_s) + (u1.sys_s - u0.sys_s);
		out->vcsw = u1.vcsw - u0.vcsw;
		out->ivcsw = u1.ivcsw - u0.ivcsw;
		rc = collect(&c, w, threads, out);
	}
	pthread_cond_destroy(&c.cond);
	pthread_mutex_destroy(&c.lock);
	free(w);
	return rc;
}
