/*
 * ycsb_run.c - bpbench ycsb's measured run: the value codec, the
 * operations, the workers and the monitor.
 *
 * Design note
 * -----------
 * Layer: bpbench, on the store (kv_get, kv_upsert, kv_scan), the stats-file
 * publisher and util (clock, emitter).
 *
 * One phase: the load inserts `records` records with N threads; the run
 * does the workload's operation mix with N threads for an op count or a
 * duration.  Threads: the workers (struct ycsb_worker, one per thread,
 * touched only by its thread until joined, except `done`, read by the
 * monitor) and the main thread, which is the monitor: every 100 ms it
 * publishes the pool's stats to the stats file, prints progress and ends a
 * timed run.  Shared state (struct ycsb_run):
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
#include <time.h>

#include "util/clock.h"

volatile sig_atomic_t ycsb_interrupted;
static void on_signal(int sig) { (void)sig; ycsb_interrupted = 1; }

void ycsb_catch_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* ---- Values ---------------------------------------------------------------- */

static void value_encode(uint8_t *v, uint32_t vs, uint64_t key, uint64_t ver)
{
	uint64_t x = key ^ (ver * UINT64_C(0x9e3779b97f4a7c15));
	memcpy(v, &key, 8);
	memcpy(v + 8, &ver, 8);
	for (uint32_t i = 16; i < vs; i++)
		v[i] = (uint8_t)((x >> ((i & 7) * 8)) ^ i);
}

int ycsb_value_decode(const uint8_t *v, uint32_t vs, uint64_t key, uint64_t *ver)
{
	uint64_t k;
	memcpy(&k, v, 8);
	memcpy(ver, v + 8, 8);
	uint64_t x = key ^ (*ver * UINT64_C(0x9e3779b97f4a7c15));
	for (uint32_t i = 16; i < vs; i++)
		if (v[i] != (uint8_t)((x >> ((i & 7) * 8)) ^ i))
			return -EBADMSG;
	return k == key && *ver > 0 ? 0 : -EBADMSG;
}

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
	value_encode(value, a->vs, a->key, a->version);
}

/* ---- Operations ------------------------------------------------------------ */

static int fail(struct ycsb_worker *w, int rc, const char *what, uint64_t recno)
{
	if (w->rc == 0) {
		w->rc = rc;
		snprintf(w->err, sizeof(w->err), "%s of record %" PRIu64 ": %s", what, recno,
			 strerror(-rc));
	}
	atomic_store_explicit(&w->run->stop, true, memory_order_relaxed);
	return rc;
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
		return fail(w, rc, "get", recno);
	if (ycsb_value_decode(buf, R->o.value_size, key, &ver) != 0 || ver < before)
		return fail(w, -EBADMSG, "read-back (wrong value or old version)", recno);
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
		return fail(w, rc, what, recno);
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

static int do_op(struct ycsb_worker *w, enum ycsb_op op)
{
	struct ycsb_run *R = w->run;
	/* Pairs with advance_acked's CAS: every record below n is written, so
	 * a read of one must find it. */
	uint64_t n = atomic_load_explicit(&R->acked, memory_order_acquire), recno;
	switch (op) {
	case OP_INSERT:
		recno = atomic_fetch_add_explicit(&R->insert_next, 1, memory_order_relaxed);
		if (recno >= R->capacity) /* no room to track it: read instead */
			return op_read(w, key_choose(R->o.dist, &w->zipf, &w->rng, n));
		if (op_write(w, recno, "insert"))
			return w->rc;
		advance_acked(R);
		return 0;
	case OP_SCAN: {
		recno = key_choose(R->o.dist, &w->zipf, &w->rng, n);
		struct scan_arg s = {.vs = R->o.value_size};
		int rc = kv_scan(ycsb_store(R, key_of(recno)), key_of(recno), 1 + rng_below(&w->rng, R->o.scan_max),
				 scan_visit, &s);
		if (rc < 0 || s.bad)
			return fail(w, rc < 0 ? rc : -EBADMSG, "scan", recno);
		return 0;
	}
	case OP_UPDATE:
		return op_write(w, key_choose(R->o.dist, &w->zipf, &w->rng, n), "update");
	case OP_RMW:
		recno = key_choose(R->o.dist, &w->zipf, &w->rng, n);
		return op_read(w, recno) ? w->rc : op_write(w, recno, "read-modify-write");
	case OP_READ:
	default:
		return op_read(w, key_choose(R->o.dist, &w->zipf, &w->rng, n));
	}
}

static enum ycsb_op pick_op(struct ycsb_worker *w)
{
	double u = rng_double(&w->rng), acc = 0;
	for (int i = 0; i < OP_COUNT; i++) {
		acc += w->run->o.mix->p[i];
		if (u < acc)
			return (enum ycsb_op)i;
	}
	return OP_READ;
}

static void *worker_main(void *arg)
{
	struct ycsb_worker *w = arg;
	struct ycsb_run *R = w->run;
	if (R->phase == PHASE_LOAD) {
		for (;;) {
			uint64_t r = atomic_fetch_add_explicit(&R->insert_next, 1, memory_order_relaxed);
			if (r >= R->o.records || atomic_load_explicit(&R->stop, memory_order_relaxed)) {
				if (r >= R->o.records) /* undo the overshoot */
					atomic_fetch_sub_explicit(&R->insert_next, 1, memory_order_relaxed);
				break;
			}
			if (op_write(w, r, "load"))
				break;
			atomic_fetch_add_explicit(&w->done, 1, memory_order_relaxed);
		}
	} else {
		for (uint64_t i = 0; !R->o.ops || i < w->quota; i++) {
			if (atomic_load_explicit(&R->stop, memory_order_relaxed))
				break;
			enum ycsb_op op = pick_op(w);
			uint64_t t0 = util_now_ns();
			if (do_op(w, op))
				break;
			util_hist_add(&w->hist[op], util_now_ns() - t0);
			atomic_fetch_add_explicit(&w->done, 1, memory_order_relaxed);
		}
	}
	pthread_mutex_lock(&R->lock);
	if (--R->running == 0)
		pthread_cond_signal(&R->done_cv);
	pthread_mutex_unlock(&R->lock);
	return NULL;
}

/* ---- The monitor: progress, stats publishing, the clock ------------------------ */

uint64_t ycsb_ops_done(const struct ycsb_run *R)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < R->o.threads; i++)
		sum += atomic_load_explicit(&R->w[i].done, memory_order_relaxed);
	return sum;
}

static void progress(struct ycsb_run *R, const char *phase, double t, uint64_t ops, double rate)
{
	struct bp_stats s;
	bp_stats_get(R->pool, &s);
	double hit = ycsb_hit_ratio(&s);
	if (R->tty)
		fprintf(stderr, "\r\033[K%s %6.1fs  ops %12" PRIu64 "  ops/s %10.0f  hit %5.1f%%",
			phase, t, ops, rate, 100 * hit);
	else
		fprintf(stderr, "%s %6.1fs  ops %12" PRIu64 "  ops/s %10.0f  hit %5.1f%%\n",
			phase, t, ops, rate, 100 * hit);
	if (R->o.json) {
		ycsb_json_begin(R, "progress");
		emitter_kv_str(&R->json, "phase", phase);
		emitter_kv_double(&R->json, "t_s", t, 1);
		emitter_kv_u64(&R->json, "ops", ops);
		emitter_kv_double(&R->json, "ops_per_s", rate, 0);
		emitter_kv_double(&R->json, "hit_ratio", hit, 4);
		emitter_dict_end(&R->json);
	}
}

int ycsb_run_phase(struct ycsb_run *R, enum ycsb_phase phase, double *seconds)
{
	const char *name = phase == PHASE_LOAD ? "load" : phase == PHASE_RUN ? "run " : "floor";
	const uint64_t tick_ns = 100000000, every = R->tty ? 5 : 50; /* progress: 0.5 s or 5 s */
	R->phase = phase;
	if (R->o.durable)
		kv_log_stats(R->kv[0], &R->log0); /* only -EINVAL for NULL */
	unsigned started = 0;
	/* Before the first worker starts: a short --ops phase can be over
	 * before the last pthread_create returns. */
	uint64_t t0 = util_now_ns(), last_ns = t0, last_ops = 0, ticks = 0;
	R->running = R->o.threads;
	for (unsigned i = 0; i < R->o.threads; i++, started++) {
		struct ycsb_worker *w = &R->w[i];
		atomic_store_explicit(&w->done, 0, memory_order_relaxed);
		w->quota = R->o.ops / R->o.threads + (i < R->o.ops % R->o.threads);
		if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
			fprintf(stderr, "bpbench: cannot start thread %u\n", i);
			atomic_store_explicit(&R->stop, true, memory_order_relaxed);
			pthread_mutex_lock(&R->lock);
			R->running -= R->o.threads - i;
			pthread_mutex_unlock(&R->lock);
			break;
		}
	}
	uint64_t end = phase != PHASE_LOAD && !R->o.ops ? t0 + (uint64_t)(R->o.duration_s * 1e9) : 0;
	pthread_mutex_lock(&R->lock);
	while (R->running > 0) {
		uint64_t next = t0 + (ticks + 1) * tick_ns;
		struct timespec dl = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
		/* done_cv waits on CLOCK_MONOTONIC (ycsb.c), util_now_ns's clock */
		if (pthread_cond_timedwait(&R->done_cv, &R->lock, &dl) != ETIMEDOUT)
			continue; /* the last worker finished (or a spurious wake) */
		pthread_mutex_unlock(&R->lock);
		uint64_t now = util_now_ns(), ops = ycsb_ops_done(R);
		ticks++;
		if (R->pub)
			bpstat_publish(R->pub, ops);
		if ((end && now >= end) || ycsb_interrupted)
			atomic_store_explicit(&R->stop, true, memory_order_relaxed);
		if (!R->o.quiet && ticks % every == 0) {
			progress(R, name, (double)(now - t0) / 1e9, ops,
				 (double)(ops - last_ops) * 1e9 / (double)(now - last_ns));
			last_ns = now;
			last_ops = ops;
		}
		pthread_mutex_lock(&R->lock);
	}
	pthread_mutex_unlock(&R->lock);
	*seconds = (double)(util_now_ns() - t0) / 1e9;
	int rc = 0;
	for (unsigned i = 0; i < started; i++) {
		pthread_join(R->w[i].thread, NULL);
		if (R->w[i].rc && !rc) {
			fprintf(stderr, "\nbpbench: %s failed: %s\n", name, R->w[i].err);
			rc = R->w[i].rc;
		}
	}
	if (R->o.durable)
		kv_log_stats(R->kv[0], &R->log1);
	if (R->tty && !R->o.quiet)
		fputs("\r\033[K", stderr);
	if (R->pub)
		bpstat_publish(R->pub, ycsb_ops_done(R));
	return rc;
}
