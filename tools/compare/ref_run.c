/*
 * ref_run.c - ycsb-ref's measured phases: the value codec, the operations,
 * the workers and the monitor.
 *
 * Design note
 * -----------
 * Layer: ycsb-ref, on the engine (ref_engine.h), gen.c's generators and
 * util's clock and histogram.  The phases are bpbench ycsb's
 * (tools/bpbench/ycsb_run.c), step for step where the engine allows: see
 * ref.h for what is the same and what differs, and for the threads and
 * the shared state.  The codec is ycsb_run.c's value_encode and
 * ycsb_value_decode, byte for byte, so each engine stores the values the
 * kv store stores.
 */
#include "ref.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/clock.h"

/* ---- Values (ycsb_run.c's codec) ------------------------------------------ */

static void value_encode(uint8_t *v, uint32_t vs, uint64_t key, uint64_t ver)
{
	uint64_t x = key ^ (ver * UINT64_C(0x9e3779b97f4a7c15));
	memcpy(v, &key, 8);
	memcpy(v + 8, &ver, 8);
	for (uint32_t i = 16; i < vs; i++)
		v[i] = (uint8_t)((x >> ((i & 7) * 8)) ^ i);
}

static int value_decode(const uint8_t *v, uint32_t vs, uint64_t key)
{
	uint64_t k, ver;
	memcpy(&k, v, 8);
	memcpy(&ver, v + 8, 8);
	uint64_t x = key ^ (ver * UINT64_C(0x9e3779b97f4a7c15));
	for (uint32_t i = 16; i < vs; i++)
		if (v[i] != (uint8_t)((x >> ((i & 7) * 8)) ^ i))
			return -EBADMSG;
	return k == key && ver > 0 ? 0 : -EBADMSG;
}

/* ---- Operations ------------------------------------------------------------ */

static int fail(struct ref_worker *w, int rc, const char *what, uint64_t recno)
{
	if (w->rc == 0) {
		w->rc = rc;
		snprintf(w->err, sizeof(w->err), "%s of record %" PRIu64 ": %s", what, recno,
			 strerror(-rc));
	}
	atomic_store_explicit(&w->run->stop, true, memory_order_relaxed);
	return rc;
}

static int op_read(struct ref_worker *w, uint64_t recno)
{
	struct ref_run *R = w->run;
	uint8_t buf[REF_VALUE_SIZE_MAX];
	uint64_t key = key_of(recno);
	int rc = R->o.engine->get(w->session, key, buf, R->o.value_size);
	if (rc)
		return fail(w, rc, "get", recno);
	if (value_decode(buf, R->o.value_size, key) != 0)
		return fail(w, -EBADMSG, "read-back (wrong value)", recno);
	return 0;
}

/* A blind write of the next version of this worker's writes (the load's
 * first write of a record is version 1, as bpbench's is). */
static int op_write(struct ref_worker *w, uint64_t recno, const char *what)
{
	struct ref_run *R = w->run;
	uint8_t buf[REF_VALUE_SIZE_MAX];
	uint64_t key = key_of(recno);
	value_encode(buf, R->o.value_size, key, R->phase == PHASE_LOAD ? 1 : ++w->writes);
	int rc = R->o.engine->put(w->session, key, buf, R->o.value_size);
	return rc ? fail(w, rc, what, recno) : 0;
}

static int do_op(struct ref_worker *w, enum ref_op op)
{
	struct ref_run *R = w->run;
	uint64_t recno = key_choose(R->o.dist, &w->zipf, &w->rng, R->o.records);
	switch (op) {
	case OP_UPDATE:
		return op_write(w, recno, "update");
	case OP_RMW:
		return op_read(w, recno) ? w->rc : op_write(w, recno, "read-modify-write");
	case OP_READ:
	default: /* inserts and scans: refused by ref_parse_opts */
		return op_read(w, recno);
	}
}

/* bpbench ycsb's pick_op: one rng_double against the cumulative mix. */
static enum ref_op pick_op(struct ref_worker *w)
{
	double u = rng_double(&w->rng), acc = 0;
	for (int i = 0; i < OP_COUNT; i++) {
		acc += w->run->o.mix->p[i];
		if (u < acc)
			return (enum ref_op)i;
	}
	return OP_READ;
}

static void *worker_main(void *arg)
{
	struct ref_worker *w = arg;
	struct ref_run *R = w->run;
	if (R->phase == PHASE_LOAD) {
		for (;;) {
			uint64_t r = atomic_fetch_add_explicit(&R->insert_next, 1, memory_order_relaxed);
			if (r >= R->o.records || atomic_load_explicit(&R->stop, memory_order_relaxed))
				break;
			if (op_write(w, r, "load"))
				break;
			atomic_fetch_add_explicit(&w->done, 1, memory_order_relaxed);
		}
	} else {
		for (uint64_t i = 0; !R->o.ops || i < w->quota; i++) {
			if (atomic_load_explicit(&R->stop, memory_order_relaxed))
				break;
			enum ref_op op = pick_op(w);
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

/* ---- Setup ------------------------------------------------------------------ */

int ref_run_init(struct ref_run *R)
{
	R->w = calloc(R->o.threads, sizeof(*R->w));
	if (!R->w) {
		fprintf(stderr, REF_PROG ": out of memory\n");
		return -ENOMEM;
	}
	pthread_mutex_init(&R->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* util_now_ns's clock */
	pthread_cond_init(&R->done_cv, &ca);
	pthread_condattr_destroy(&ca);
	zipf_init(&R->w[0].zipf, R->o.records, R->o.theta); /* O(records): once */
	for (unsigned i = 0; i < R->o.threads; i++) {
		R->w[i].run = R;
		R->w[i].rng = rng_seeded(R->o.seed, i);
		R->w[i].zipf = R->w[0].zipf;
	}
	/* sessions before either phase: opening them is not timed (bpbench's
	 * workers need none) */
	for (unsigned i = 0; i < R->o.threads; i++) {
		int rc = R->o.engine->session_open(R->db, &R->w[i].session);
		if (rc) {
			fprintf(stderr, REF_PROG ": %s: cannot open session %u: %s\n",
				R->o.engine->name, i, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

void ref_run_fini(struct ref_run *R)
{
	if (!R->w)
		return;
	for (unsigned i = 0; i < R->o.threads; i++)
		if (R->w[i].session)
			R->o.engine->session_close(R->w[i].session);
	pthread_cond_destroy(&R->done_cv);
	pthread_mutex_destroy(&R->lock);
	free(R->w);
	R->w = NULL;
}

/* ---- The monitor ---------------------------------------------------------------- */

uint64_t ref_ops_done(const struct ref_run *R)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < R->o.threads; i++)
		sum += atomic_load_explicit(&R->w[i].done, memory_order_relaxed);
	return sum;
}

int ref_run_phase(struct ref_run *R, enum ref_phase phase, double *seconds)
{
	const char *name = phase == PHASE_LOAD ? "load" : "run ";
	const uint64_t tick_ns = 100000000; /* the clock's 0.1 s; progress every 5 s */
	R->phase = phase;
	unsigned started = 0;
	/* before the first worker starts, as bpbench's: a short --ops phase can
	 * be over before the last pthread_create returns */
	uint64_t t0 = util_now_ns(), last_ns = t0, last_ops = 0, ticks = 0;
	R->running = R->o.threads;
	for (unsigned i = 0; i < R->o.threads; i++, started++) {
		struct ref_worker *w = &R->w[i];
		atomic_store_explicit(&w->done, 0, memory_order_relaxed);
		w->quota = R->o.ops / R->o.threads + (i < R->o.ops % R->o.threads);
		if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
			fprintf(stderr, REF_PROG ": cannot start thread %u\n", i);
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
		if (pthread_cond_timedwait(&R->done_cv, &R->lock, &dl) != ETIMEDOUT)
			continue; /* the last worker finished (or a spurious wake) */
		pthread_mutex_unlock(&R->lock);
		uint64_t now = util_now_ns(), ops = ref_ops_done(R);
		ticks++;
		if (end && now >= end)
			atomic_store_explicit(&R->stop, true, memory_order_relaxed);
		if (!R->o.quiet && ticks % 50 == 0) {
			fprintf(stderr, "%s %6.1fs  ops %12" PRIu64 "  ops/s %10.0f\n", name,
				(double)(now - t0) / 1e9, ops,
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
			fprintf(stderr, REF_PROG ": %s failed: %s\n", name, R->w[i].err);
			rc = R->w[i].rc;
		}
	}
	return rc;
}
