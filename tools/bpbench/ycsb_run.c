/* SPDX-License-Identifier: MIT */
/*
 * ycsb_run.c - bpbench ycsb's measured run: the operations on the store
 * and what its monitor adds (progress, the stats file, signals).
 *
 * Design note
 * -----------
 * Layer: bpbench, on the store (kv_get, kv_upsert, kv_scan), bufpool's
 * stats publisher (bp_stats_publish_ops), ycsb_common's workers and phase clock (ycsb_crew.h: the loops,
 * the seeding, the quotas, insert_next, stop; ycsb-ref runs the same) and
 * util's emitter.
 *
 * One phase: the load inserts `records` records with N threads; the run
 * does the workload's operation mix with N threads for an op count or a
 * duration.  Threads: the workers (struct ycsb_worker, one per thread,
 * touched only by its thread until joined, except `done`, read by the
 * monitor) and the main thread, which is the monitor: every 100 ms it
 * hands the ops done to the pool's stats publisher (whose own thread
 * writes the stats file), prints progress and ends a timed run.  Shared state (struct ycsb_run, and its crew's):
 *   - insert_next: next record number to insert (claimed by fetch_add);
 *   - versions[r]: the highest version of record r whose write completed
 *     (0 = not written yet), raised by atomic max after each write;
 *   - acked: every record below it is written; reads choose below it;
 *   - stop: the workers' signal to end; running + lock + done_cv: the
 *     workers left (a worker's error is in its own rc and err).
 * A value encodes (key, version, pattern); a write sets version = old + 1
 * under the leaf's exclusive latch (kv_upsert), so versions of one key grow
 * in latch order and a read must find a version >= the one recorded before
 * it started (ycsb_verify.c checks the last one after the run).
 *
 * --no-pool adds a third phase, PHASE_FLOOR (ycsb_floor.c): the run's
 * reads again, each on the store's copy in plain memory (kv_mem_get)
 * instead of the store (kv_get), checked the same way.
 *
 * --durable changes nothing here but two readings of the log's counters
 * around a phase (log0 before the workers start, log1 after the joins);
 * the commits themselves happen inside kv_upsert (sync_commit), so a
 * write's latency in its histogram includes its commit.
 */
#include "ycsb_int.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "toolutil.h"

/* ---- Values and operations ------------------------------------------------ */

struct write_arg {
	uint64_t key, version;
	uint32_t vs;
};
/* Runs under the leaf's exclusive latch: version = old + 1. */
static void fill_next_version(void *value, bool existed, void *arg)
{
	struct write_arg *a = arg;
	uint64_t old = 0;
	if (existed && ycsb_value_decode(value, a->vs, a->key, &old) != 0)
		old = UINT32_MAX; /* corrupt: make the verify fail loudly */
	a->version = old + 1;
	ycsb_value_encode(value, a->vs, a->key, a->version);
}

static int op_read(struct ycsb_worker *w, uint64_t recno)
{
	struct ycsb_run *R = w->run;
	uint8_t buf[KV_VALUE_SIZE_MAX];
	uint64_t key = key_of(recno), ver;
	/* Pairs with the release in record_version: the write it records is
	 * complete, so our get must see it or a later one. */
	uint32_t before = atomic_load_explicit(&R->versions[recno], memory_order_acquire);
	int rc = R->phase == PHASE_FLOOR ? kv_mem_get(ycsb_mem(R, key), key, buf)
					 : kv_get(ycsb_store(R, key), key, buf);
	if (rc)
		return ycsb_hand_fail(&w->h, rc, "get", recno);
	if (ycsb_value_decode(buf, R->o.value_size, key, &ver) != 0 || ver < before)
		return ycsb_hand_fail(&w->h, -EBADMSG, "read-back (wrong value or old version)",
				      recno);
	return 0;
}

static void record_version(struct ycsb_run *R, uint64_t recno, uint64_t ver)
{
	uint32_t cur = atomic_load_explicit(&R->versions[recno], memory_order_relaxed);
	/* Release: publishes the completed write to readers that load this
	 * version with acquire (op_read, advance_acked, verify). */
	while (cur < ver && !atomic_compare_exchange_weak_explicit(&R->versions[recno], &cur,
			(uint32_t)ver, memory_order_release, memory_order_relaxed))
		;
}

static int op_write(struct ycsb_worker *w, uint64_t recno, const char *what)
{
	struct ycsb_run *R = w->run;
	struct write_arg a = {.key = key_of(recno), .vs = R->o.value_size};
	int rc = kv_upsert(ycsb_store(R, a.key), a.key, fill_next_version, &a);
	if (rc < 0)
		return ycsb_hand_fail(&w->h, rc, what, recno);
	record_version(R, recno, a.version);
	return 0;
}

/* Move acked past every record whose first write is recorded. */
static void advance_acked(struct ycsb_run *R)
{
	uint64_t a = atomic_load_explicit(&R->acked, memory_order_acquire);
	/* acquire on versions pairs with record_version's release; the CAS's
	 * release passes it on to readers that load acked with acquire. */
	while (a < R->capacity && atomic_load_explicit(&R->versions[a], memory_order_acquire))
		if (atomic_compare_exchange_weak_explicit(&R->acked, &a, a + 1,
				memory_order_acq_rel, memory_order_acquire))
			a++;
}

struct scan_arg {
	uint32_t vs;
	bool bad;
};
static int scan_visit(uint64_t key, const void *value, void *arg)
{
	struct scan_arg *s = arg;
	uint64_t ver;
	if (ycsb_value_decode(value, s->vs, key, &ver) != 0)
		s->bad = true;
	return s->bad;
}

/* The crew's hooks: h is the first member of a struct ycsb_worker. */
static int do_load(struct ycsb_hand *h, uint64_t recno)
{
	return op_write((struct ycsb_worker *)h, recno, "load");
}

static int do_op(struct ycsb_hand *h, enum ycsb_op op)
{
	struct ycsb_worker *w = (struct ycsb_worker *)h;
	struct ycsb_run *R = w->run;
	/* Pairs with advance_acked's CAS: every record below n is written, so
	 * a read of one must find it. */
	uint64_t n = atomic_load_explicit(&R->acked, memory_order_acquire), recno;
	switch (op) {
	case OP_INSERT:
		recno = atomic_fetch_add_explicit(&R->crew.insert_next, 1, memory_order_relaxed);
		if (recno >= R->capacity) /* no room to track it: read instead */
			return op_read(w, key_choose(R->o.dist, &w->h.zipf, &w->h.rng, n));
		if (op_write(w, recno, "insert"))
			return w->h.rc;
		advance_acked(R);
		return 0;
	case OP_SCAN: {
		recno = key_choose(R->o.dist, &w->h.zipf, &w->h.rng, n);
		struct scan_arg s = {.vs = R->o.value_size};
		int rc = kv_scan(ycsb_store(R, key_of(recno)), key_of(recno),
				 1 + rng_below(&w->h.rng, R->o.scan_max), scan_visit, &s);
		if (rc < 0 || s.bad)
			return ycsb_hand_fail(&w->h, rc < 0 ? rc : -EBADMSG, "scan", recno);
		return 0;
	}
	case OP_UPDATE:
		return op_write(w, key_choose(R->o.dist, &w->h.zipf, &w->h.rng, n), "update");
	case OP_RMW:
		recno = key_choose(R->o.dist, &w->h.zipf, &w->h.rng, n);
		return op_read(w, recno) ? w->h.rc : op_write(w, recno, "read-modify-write");
	case OP_READ:
	default:
		return op_read(w, key_choose(R->o.dist, &w->h.zipf, &w->h.rng, n));
	}
}

/* ---- The monitor's additions: progress, stats publishing, signals ---------- */

static void progress(void *arg, const char *phase, double t, uint64_t ops, double rate)
{
	struct ycsb_run *R = arg;
	struct bp_stats s;
	bp_stats_init(&s);
	bp_stats_get(R->pool, &s);
	double hit = ycsb_hit_ratio(&s);
	if (R->tty)
		fprintf(stderr, "\r\033[K%s %6.1fs  ops %12" PRIu64 "  ops/s %10.0f  hit %5.1f%%",
			phase, t, ops, rate, 100 * hit);
	else
		fprintf(stderr, "%s %6.1fs  ops %12" PRIu64 "  ops/s %10.0f  hit %5.1f%%\n",
			phase, t, ops, rate, 100 * hit);
	if (R->o.json) {
		ycsb_json_begin(&R->json, "progress");
		emitter_kv_str(&R->json, "phase", phase);
		emitter_kv_double(&R->json, "t_s", t, 1);
		emitter_kv_u64(&R->json, "ops", ops);
		emitter_kv_double(&R->json, "ops_per_s", rate, 0);
		emitter_kv_double(&R->json, "hit_ratio", hit, 4);
		emitter_dict_end(&R->json);
	}
}

/* Every tick: the ops for the stats file; a stop signal (toolutil.h) ends
 * the phase. */
static bool tick(void *arg, uint64_t ops)
{
	struct ycsb_run *R = arg;
	if (R->pub)
		bp_stats_publish_ops(R->pool, ops);
	return tool_stop_signal != 0;
}

void ycsb_run_setup(struct ycsb_run *R)
{
	R->crew = (struct ycsb_crew){
		.prog = "bpbench", .fail_lead = "\n", .mix = R->o.mix, .threads = R->o.threads,
		.records = R->o.records, .ops = R->o.ops, .duration_s = R->o.duration_s,
		.workers = R->w, .stride = sizeof(*R->w), .load = do_load, .op = do_op,
		.arg = R, .tick = tick, .progress = progress,
		/* progress: every 0.5 s on a terminal (a status line), else 5 s */
		.progress_every = R->o.quiet ? 0 : R->tty ? 5 : 50};
	for (unsigned i = 0; i < R->o.threads; i++)
		R->w[i].run = R;
	ycsb_crew_init(&R->crew, R->o.seed, R->o.theta);
}

int ycsb_run_phase(struct ycsb_run *R, enum ycsb_phase phase, double *seconds)
{
	const char *name = phase == PHASE_LOAD ? "load" : phase == PHASE_RUN ? "run " : "floor";
	R->phase = phase;
	if (R->o.durable)
		kv_log_stats(R->kv[0], &R->log0); /* only -EINVAL for NULL */
	int rc = ycsb_crew_phase(&R->crew, name, phase == PHASE_LOAD, seconds);
	if (R->o.durable)
		kv_log_stats(R->kv[0], &R->log1);
	if (R->tty && !R->o.quiet)
		fputs("\r\033[K", stderr);
	if (R->pub)
		bp_stats_publish_ops(R->pool, ycsb_crew_done(&R->crew));
	return rc;
}
