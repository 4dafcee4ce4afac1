/* SPDX-License-Identifier: MIT */
/*
 * ycsb_crew.h - the YCSB workers and their phase clock: N threads that
 * load the records, then run the mix for an op count or a duration,
 * watched by the calling thread.
 *
 * Design note
 * -----------
 * Layer: ycsb_common (see ycsb_stream.h), on ycsb_stream.c, gen.c and
 * util's clock and histogram; shared by bpbench ycsb (ycsb_run.c) and
 * ycsb-ref (tools/compare/ref_run.c), which supply what an operation does
 * on their store (the load and op hooks) and what the monitor adds each
 * tick (tick, progress).  Each tool's worker struct starts with a struct
 * ycsb_hand, the part the crew and the reports see; the crew walks the
 * tool's array of them by stride.
 *
 * The stream is the seed's alone: worker i's generator is
 * rng_seeded(seed, i), every worker gets a copy of one zipf_init(records,
 * theta); the load claims record numbers 0..records-1 from insert_next
 * (fetch_add); the run picks each op by ycsb_pick_op; --ops splits as
 * ops/threads plus one for the first ops%threads workers.  The wall clock
 * starts before the first pthread_create: a short --ops phase can be over
 * before the last pthread_create returns.
 *
 * Threads and shared state: each hand is touched only by its thread until
 * joined, except `done` (relaxed: a progress count, it publishes
 * nothing).  insert_next: fetch_add, relaxed (a claim; the write it names
 * is the claimer's).  stop: relaxed, only a signal to end.  running is
 * guarded by lock; the last worker signals done_cv, which waits on
 * CLOCK_MONOTONIC, util_now_ns's clock, so a tick's deadline is absolute.
 */
#ifndef TOOLS_BPBENCH_YCSB_CREW_H
#define TOOLS_BPBENCH_YCSB_CREW_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "gen.h"
#include "util/hist.h"
#include "ycsb_stream.h"

struct ycsb_crew;

/* One worker's part that the crew and the reports see: the first member
 * of each tool's worker struct. */
struct ycsb_hand {
	alignas(64) _Atomic uint64_t done; /* ops finished; relaxed, read by the monitor */
	struct ycsb_crew *crew;
	pthread_t thread;
	uint64_t quota; /* ops to do (op-count mode) */
	struct rng rng;
	struct zipf zipf;
	int rc;
	char err[200];
	struct util_hist hist[OP_COUNT];
};

struct ycsb_crew {
	/* Set by the tool before ycsb_crew_init, constant after. */
	const char *prog;      /* error lines' prefix */
	const char *fail_lead; /* before a failed phase's line ("\n" ends a status line) */
	const struct ycsb_mix *mix;
	unsigned threads;
	uint64_t records, ops; /* ops: the run's count, or 0: for duration_s */
	double duration_s;
	void *workers;         /* the tool's array of threads elements ... */
	size_t stride;         /* ... of this size, each starting with a struct ycsb_hand */
	/* Write record recno (the load); one op of the run.  0, or an error
	 * that the hook recorded with ycsb_hand_fail. */
	int (*load)(struct ycsb_hand *h, uint64_t recno);
	int (*op)(struct ycsb_hand *h, enum ycsb_op op);
	/* The monitor, every 0.1 s: tick (may be NULL) returns true to end
	 * the phase now; progress every progress_every ticks (0: never). */
	void *arg;
	bool (*tick)(void *arg, uint64_t ops);
	void (*progress)(void *arg, const char *phase, double t, uint64_t ops, double rate);
	unsigned progress_every;
	/* Shared while a phase runs (see above). */
	_Atomic uint64_t insert_next;
	_Atomic bool stop;
	pthread_mutex_t lock;
	pthread_cond_t done_cv; /* running reached 0 */
	unsigned running;       /* guarded by lock */
};

/* The lock, done_cv and every worker's generators (seed, theta). */
void ycsb_crew_init(struct ycsb_crew *c, uint64_t seed, double theta);
void ycsb_crew_fini(struct ycsb_crew *c);
/* Worker i's hand. */
static inline struct ycsb_hand *ycsb_crew_hand(const struct ycsb_crew *c, unsigned i)
{
	return (struct ycsb_hand *)((char *)c->workers + (size_t)i * c->stride);
}
/* Operations the workers of the current or last phase finished. */
uint64_t ycsb_crew_done(const struct ycsb_crew *c);
/* Record h's first error (what of record recno: why) and end the phase;
 * returns rc. */
int ycsb_hand_fail(struct ycsb_hand *h, int rc, const char *what, uint64_t recno);
/* Start the workers for a phase (load: the load, else the run's mix) and
 * watch them until they finish; the phase's wall seconds in *seconds.  0
 * or the first worker's error (reported on stderr, as "<name> failed"). */
int ycsb_crew_phase(struct ycsb_crew *c, const char *name, bool load, double *seconds);
/* The last phase's latencies, per op and all together. */
void ycsb_crew_latency(const struct ycsb_crew *c, struct util_hist per[OP_COUNT],
		       struct util_hist *all);

#endif
