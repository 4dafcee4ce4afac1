/*
 * ycsb.c - bpbench ycsb: the YCSB core workloads on the kv store, and
 * bpbench check.
 *
 * Design note
 * -----------
 * One run: open a fresh store on a pool smaller than the data, load
 * `records` records with N threads, reset the pool statistics, run the
 * workload's operation mix with N threads for an op count or a duration,
 * then report throughput, latency percentiles, CPU and context switches per
 * operation, the hit ratio and the pool's contention statistics.
 *
 * Threads: the workers (struct worker, one per thread, touched only by its
 * thread until joined, except `done`, read by the monitor) and the main
 * thread, which is the monitor: every 100 ms it publishes the pool's stats
 * to the stats file, prints progress and ends a timed run.  Shared state
 * (struct run):
 *   - insert_next: next record number to insert (claimed by fetch_add);
 *   - versions[r]: the highest version of record r whose write completed
 *     (0 = not written yet), raised by atomic max after each write;
 *   - acked: every record below it is written; reads choose below it;
 *   - stop / failed: flags; running + lock + done_cv: workers left.
 * A value encodes (key, version, pattern); a write sets version = old + 1
 * under the leaf's exclusive latch (kv_upsert), so versions of one key grow
 * in latch order and a read must find a version >= the one recorded before
 * it started.  --verify re-reads every record after the run and checks the
 * tree's structure.
 */
#include "ycsb.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "gen.h"
#include "hist.h"
#include "kv.h"
#include "statsfile.h"
#include "toolutil.h"
#include "util/emitter.h"

enum op { OP_READ, OP_UPDATE, OP_INSERT, OP_SCAN, OP_RMW, OP_COUNT };
static const char *const op_names[OP_COUNT] = {"read", "update", "insert", "scan", "rmw"};
static const char *const dist_names[] = {"zipfian", "uniform", "latest"};

struct mix {
	char name;
	double p[OP_COUNT];
	enum key_dist dist;
};
static const struct mix mixes[] = {
	{'A', {0.50, 0.50, 0, 0, 0}, DIST_ZIPFIAN},
	{'B', {0.95, 0.05, 0, 0, 0}, DIST_ZIPFIAN},
	{'C', {1.00, 0, 0, 0, 0}, DIST_ZIPFIAN},
	{'D', {0.95, 0, 0.05, 0, 0}, DIST_LATEST},
	{'E', {0, 0, 0.05, 0.95, 0}, DIST_ZIPFIAN},
	{'F', {0.50, 0, 0, 0, 0.50}, DIST_ZIPFIAN},
};

struct opts {
	const struct mix *mix;
	enum key_dist dist;
	unsigned threads, scan_max;
	uint64_t records, ops, seed;
	double duration_s, theta;
	uint32_t frames, page_size, value_size, latency_us;
	enum fwait_policy policy;
	const char *file, *stats_file;
	bool keep, no_stats, verify, json, quiet;
};

struct run;
struct worker {
	alignas(64) _Atomic uint64_t done; /* ops finished; relaxed, read by the monitor */
	struct run *run;
	pthread_t thread;
	uint64_t quota; /* ops to do (op-count mode) */
	struct rng rng;
	struct zipf zipf;
	int rc;
	char err[200];
	struct hist hist[OP_COUNT];
};

enum phase { PHASE_LOAD, PHASE_RUN };

struct run {
	struct opts o;
	struct kv_store *kv;
	struct bp_pool *pool;
	struct bpstat_publisher *pub;
	enum phase phase;
	_Atomic uint32_t *versions;
	uint64_t capacity;            /* records that fit in versions[] */
	_Atomic uint64_t insert_next;
	_Atomic uint64_t acked;
	_Atomic bool stop;
	pthread_mutex_t lock;
	pthread_cond_t done_cv;       /* running reached 0 */
	unsigned running;             /* guarded by lock */
	struct worker *w;
	FILE *human;                  /* report: stdout, or stderr with --json */
	bool tty;
};

static volatile sig_atomic_t interrupted;
static void on_signal(int sig) { (void)sig; interrupted = 1; }

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
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

/* 0 if v is a well-formed value of key; its version in *ver. */
static int value_decode(const uint8_t *v, uint32_t vs, uint64_t key, uint64_t *ver)
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
	if (existed && value_decode(value, a->vs, a->key, &old) != 0)
		old = UINT32_MAX; /* corrupt: make the verify fail loudly */
	a->version = old + 1;
	value_encode(value, a->vs, a->key, a->version);
}

/* ---- Operations ------------------------------------------------------------ */

static int fail(struct worker *w, int rc, const char *what, uint64_t recno)
{
	if (w->rc == 0) {
		w->rc = rc;
		snprintf(w->err, sizeof(w->err), "%s of record %" PRIu64 ": %s", what, recno,
			 strerror(-rc));
	}
	atomic_store_explicit(&w->run->stop, true, memory_order_relaxed);
	return rc;
}

static int op_read(struct worker *w, uint64_t recno)
{
	struct run *R = w->run;
	uint8_t buf[KV_VALUE_SIZE_MAX];
	uint64_t key = key_of(recno), ver;
	/* Pairs with the release in record_version: the write it records is
	 * complete, so our get must see it or a later one. */
	uint32_t before = atomic_load_explicit(&R->versions[recno], memory_order_acquire);
	int rc = kv_get(R->kv, key, buf);
	if (rc)
		return fail(w, rc, "get", recno);
	if (value_decode(buf, R->o.value_size, key, &ver) != 0 || ver < before)
		return fail(w, -EBADMSG, "read-back (wrong value or old version)", recno);
	return 0;
}

static void record_version(struct run *R, uint64_t recno, uint64_t ver)
{
	uint32_t cur = atomic_load_explicit(&R->versions[recno], memory_order_relaxed);
	/* Release: publishes the completed write to readers that load this
	 * version with acquire (op_read, advance_acked, verify). */
	while (cur < ver && !atomic_compare_exchange_weak_explicit(&R->versions[recno], &cur,
			(uint32_t)ver, memory_order_release, memory_order_relaxed))
		;
}

static int op_write(struct worker *w, uint64_t recno, const char *what)
{
	struct run *R = w->run;
	struct write_arg a = {.key = key_of(recno), .vs = R->o.value_size};
	int rc = kv_upsert(R->kv, a.key, fill_next_version, &a);
	if (rc < 0)
		return fail(w, rc, what, recno);
	record_version(R, recno, a.version);
	return 0;
}

/* Move acked past every record whose first write is recorded. */
static void advance_acked(struct run *R)
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
	if (value_decode(value, s->vs, key, &ver) != 0)
		s->bad = true;
	return s->bad;
}

static int do_op(struct worker *w, enum op op)
{
	struct run *R = w->run;
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
		int rc = kv_scan(R->kv, key_of(recno), 1 + rng_below(&w->rng, R->o.scan_max),
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

static enum op pick_op(struct worker *w)
{
	double u = rng_double(&w->rng), acc = 0;
	for (int i = 0; i < OP_COUNT; i++) {
		acc += w->run->o.mix->p[i];
		if (u < acc)
			return (enum op)i;
	}
	return OP_READ;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *R = w->run;
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
			enum op op = pick_op(w);
			uint64_t t0 = now_ns();
			if (do_op(w, op))
				break;
			hist_add(&w->hist[op], now_ns() - t0);
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

static uint64_t ops_done(const struct run *R)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < R->o.threads; i++)
		sum += atomic_load_explicit(&R->w[i].done, memory_order_relaxed);
	return sum;
}

static double hit_ratio(const struct bp_stats *s)
{
	uint64_t all = s->hits + s->misses;
	return all ? (double)s->hits / (double)all : 0.0;
}

static void progress(struct run *R, const char *phase, double t, uint64_t ops, double rate)
{
	struct bp_stats s;
	bp_stats_get(R->pool, &s);
	if (R->tty)
		fprintf(stderr, "\r\033[K%s %6.1fs  ops %12" PRIu64 "  ops/s %10.0f  hit %5.1f%%",
			phase, t, ops, rate, 100 * hit_ratio(&s));
	else
		fprintf(stderr, "%s %6.1fs  ops %12" PRIu64 "  ops/s %10.0f  hit %5.1f%%\n",
			phase, t, ops, rate, 100 * hit_ratio(&s));
	if (R->o.json)
		printf("{\"type\":\"progress\",\"phase\":\"%s\",\"t_s\":%.1f,\"ops\":%" PRIu64
		       ",\"ops_per_s\":%.0f,\"hit_ratio\":%.4f}\n", phase, t, ops, rate, hit_ratio(&s));
}

/* Start the workers for a phase and watch them until they finish. */
static int run_phase(struct run *R, enum phase phase, double *seconds)
{
	const char *name = phase == PHASE_LOAD ? "load" : "run ";
	const uint64_t tick_ns = 100000000, every = R->tty ? 5 : 50; /* progress: 0.5 s or 5 s */
	R->phase = phase;
	unsigned started = 0;
	R->running = R->o.threads;
	for (unsigned i = 0; i < R->o.threads; i++, started++) {
		struct worker *w = &R->w[i];
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
	uint64_t t0 = now_ns(), last_ns = t0, last_ops = 0, ticks = 0;
	uint64_t end = phase == PHASE_RUN && !R->o.ops ? t0 + (uint64_t)(R->o.duration_s * 1e9) : 0;
	pthread_mutex_lock(&R->lock);
	while (R->running > 0) {
		uint64_t next = t0 + (ticks + 1) * tick_ns;
		struct timespec dl = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
		if (pthread_cond_timedwait(&R->done_cv, &R->lock, &dl) != ETIMEDOUT)
			continue; /* the last worker finished (or a spurious wake) */
		pthread_mutex_unlock(&R->lock);
		uint64_t now = now_ns(), ops = ops_done(R);
		ticks++;
		if (R->pub)
			bpstat_publish(R->pub, ops);
		if ((end && now >= end) || interrupted)
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
	*seconds = (double)(now_ns() - t0) / 1e9;
	int rc = 0;
	for (unsigned i = 0; i < started; i++) {
		pthread_join(R->w[i].thread, NULL);
		if (R->w[i].rc && !rc) {
			fprintf(stderr, "\nbpbench: %s failed: %s\n", name, R->w[i].err);
			rc = R->w[i].rc;
		}
	}
	if (R->tty && !R->o.quiet)
		fputs("\r\033[K", stderr);
	if (R->pub)
		bpstat_publish(R->pub, ops_done(R));
	return rc;
}

/* ---- Report ------------------------------------------------------------------ */

struct usage {
	double user_s, sys_s;
	long vcsw, ivcsw;
};
static struct usage usage_now(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (struct usage){ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
			      ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
			      ru.ru_nvcsw, ru.ru_nivcsw};
}

static void report_latency(struct run *R, const char *name, const struct hist *h)
{
	double mean = h->count ? (double)h->sum_ns / (double)h->count : 0;
	fprintf(R->human, "  %-8s %11" PRIu64 " %9.1f %9.1f %9.1f %9.1f %9.1f\n", name, h->count,
		mean / 1e3, hist_quantile(h, 0.5) / 1e3, hist_quantile(h, 0.99) / 1e3,
		hist_quantile(h, 0.999) / 1e3, h->max_ns / 1e3);
	if (R->o.json)
		printf("{\"type\":\"latency\",\"op\":\"%s\",\"count\":%" PRIu64 ",\"mean_ns\":%.0f,"
		       "\"p50_ns\":%" PRIu64 ",\"p99_ns\":%" PRIu64 ",\"p999_ns\":%" PRIu64
		       ",\"max_ns\":%" PRIu64 "}\n", name, h->count, mean, hist_quantile(h, 0.5),
		       hist_quantile(h, 0.99), hist_quantile(h, 0.999), h->max_ns);
}

static void report_wait(struct run *R, const char *name, const char *json_name,
			const struct bp_wait_hist *w, uint64_t ops)
{
	fprintf(R->human, "  %-30s %10" PRIu64 " %10.3f %10.1f %10.1f\n", name, w->count,
		ops ? 1e3 * (double)w->count / (double)ops : 0,
		w->count ? (double)w->total_ns / (double)w->count / 1e3 : 0, w->max_ns / 1e3);
	if (R->o.json)
		printf("{\"type\":\"wait\",\"bit\":\"%s\",\"count\":%" PRIu64 ",\"per_kop\":%.4f,"
		       "\"total_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64 "}\n", json_name, w->count,
		       ops ? 1e3 * (double)w->count / (double)ops : 0, w->total_ns, w->max_ns);
}

/* The pool stats as one JSON line: bp_stats_print's object, newlines removed. */
static void print_pool_json(const struct bp_stats *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return;
	bp_stats_print(s, emitter_write_file, m, BP_STATS_JSON_COMPACT);
	fclose(m);
	if (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	printf("{\"type\":\"pool_stats\",\"stats\":%s}\n", buf);
	free(buf);
}

static void report(struct run *R, double secs, struct usage u0, struct usage u1)
{
	struct hist all = {0}, per[OP_COUNT] = {{0}};
	struct bp_stats s;
	bp_stats_get(R->pool, &s);
	for (unsigned i = 0; i < R->o.threads; i++)
		for (int op = 0; op < OP_COUNT; op++) {
			hist_merge(&per[op], &R->w[i].hist[op]);
			hist_merge(&all, &R->w[i].hist[op]);
		}
	uint64_t ops = all.count;
	double dops = ops ? (double)ops : 1, rate = secs > 0 ? (double)ops / secs : 0;
	double user = (u1.user_s - u0.user_s) * 1e6 / dops, sys = (u1.sys_s - u0.sys_s) * 1e6 / dops;
	double vcsw = (double)(u1.vcsw - u0.vcsw) / dops, ivcsw = (double)(u1.ivcsw - u0.ivcsw) / dops;
	FILE *h = R->human;
	fprintf(h, "run:  %" PRIu64 " ops in %.2f s: %.0f ops/s, hit ratio %.2f%%\n", ops, secs,
		rate, 100 * hit_ratio(&s));
	fprintf(h, "latency (us)    count      mean       p50       p99      p999       max\n");
	for (int op = 0; op < OP_COUNT; op++)
		if (per[op].count)
			report_latency(R, op_names[op], &per[op]);
	report_latency(R, "all", &all);
	fprintf(h, "cpu per op: user %.2f us, sys %.2f us (whole process, incl. I/O threads)\n",
		user, sys);
	fprintf(h, "contention                         waits  per 1k ops    avg us     max us\n");
	report_wait(R, "io_wait (BP_LOCKED)", "io_wait", &s.io_wait, ops);
	report_wait(R, "writeback_wait (BP_WRITEBACK)", "writeback_wait", &s.writeback_wait, ops);
	report_wait(R, "latch_shared_wait", "latch_shared_wait", &s.latch_shared_wait, ops);
	report_wait(R, "latch_exclusive_wait", "latch_exclusive_wait", &s.latch_exclusive_wait, ops);
	report_wait(R, "frame_wait (no free frame)", "frame_wait", &s.frame_wait, ops);
	fprintf(h, "  fwait: %" PRIu64 " sleeps, %" PRIu64 " wakeups, %" PRIu64
		" spurious wakeups, %" PRIu64 " handoffs, max bucket depth %u\n", s.fwait.waits,
		s.fwait.wakeups, s.fwait.spurious_wakeups, s.fwait.handoffs, s.fwait.max_bucket_depth);
	fprintf(h, "  context switches per op: %.3f voluntary, %.3f involuntary\n", vcsw, ivcsw);
	if (R->o.json) {
		printf("{\"type\":\"result\",\"workload\":\"%c\",\"ops\":%" PRIu64 ",\"seconds\":%.3f,"
		       "\"ops_per_s\":%.1f,\"hit_ratio\":%.4f,\"cpu_user_us_per_op\":%.3f,"
		       "\"cpu_sys_us_per_op\":%.3f,\"vcsw_per_op\":%.4f,\"ivcsw_per_op\":%.4f,"
		       "\"spurious_wakeups\":%" PRIu64 ",\"fwait_sleeps\":%" PRIu64
		       ",\"fwait_wakeups\":%" PRIu64 "}\n", R->o.mix->name, ops, secs, rate,
		       hit_ratio(&s), user, sys, vcsw, ivcsw, s.fwait.spurious_wakeups,
		       s.fwait.waits, s.fwait.wakeups);
		print_pool_json(&s);
	}
	fprintf(h, "pool statistics (run phase):\n");
	bp_stats_print(&s, emitter_write_file, h, BP_STATS_TABLE);
}

/* ---- Verify -------------------------------------------------------------------- */

/* One full scan in key order: every key maps back to a record (recno_of)
 * whose recorded version its value must carry; each record is seen once. */
struct verify_scan {
	struct run *R;
	uint64_t end, seen, bad;
	uint8_t *found; /* bitmap of records met */
};
static int verify_visit(uint64_t key, const void *value, void *arg)
{
	struct verify_scan *v = arg;
	uint64_t r = recno_of(key), ver;
	const char *why = NULL;
	if (r >= v->end)
		why = "a key nobody wrote";
	else if (v->found[r / 8] & (1u << (r % 8)))
		why = "a key seen twice";
	else if (value_decode(value, v->R->o.value_size, key, &ver) != 0)
		why = "a corrupt value";
	else if (ver != atomic_load_explicit(&v->R->versions[r], memory_order_relaxed))
		why = "not the last version written";
	if (why && v->bad++ < 5)
		fprintf(stderr, "verify: key %#" PRIx64 " (record %" PRIu64 "): %s\n", key, r, why);
	if (r < v->end)
		v->found[r / 8] |= (uint8_t)(1u << (r % 8));
	v->seen++;
	return 0;
}

static int verify(struct run *R)
{
	struct kv_check_info ci;
	/* the workers are joined: every atomic below can be relaxed */
	struct verify_scan v = {.R = R,
		.end = atomic_load_explicit(&R->insert_next, memory_order_relaxed)};
	uint64_t written = 0;
	if (v.end > R->capacity)
		v.end = R->capacity;
	v.found = calloc(v.end / 8 + 1, 1);
	if (!v.found)
		return -ENOMEM;
	for (uint64_t r = 0; r < v.end; r++)
		written += atomic_load_explicit(&R->versions[r], memory_order_relaxed) != 0;
	int rc = kv_scan(R->kv, 0, SIZE_MAX, verify_visit, &v);
	if (rc < 0)
		fprintf(stderr, "verify: scan failed: %s\n", strerror(-rc));
	for (uint64_t r = 0; r < v.end && rc >= 0; r++)
		if (!(v.found[r / 8] & (1u << (r % 8))) && v.bad++ < 5)
			fprintf(stderr, "verify: record %" PRIu64 " (key %#" PRIx64 ") is missing%s\n",
				r, key_of(r), atomic_load_explicit(&R->versions[r], memory_order_relaxed) ?
				"" : " (never written)");
	free(v.found);
	int crc = kv_check(R->kv, &ci);
	if (crc)
		fprintf(stderr, "verify: tree check failed: %s\n", ci.error[0] ? ci.error : strerror(-crc));
	else if (ci.nkeys != written || v.seen != written) {
		fprintf(stderr, "verify: %" PRIu64 " records written, the tree holds %" PRIu64
			", a scan saw %" PRIu64 "\n", written, ci.nkeys, v.seen);
		crc = -EBADMSG;
	}
	bool ok = rc >= 0 && crc == 0 && v.bad == 0;
	fprintf(R->human, "verify: %s: %" PRIu64 " records read back with their last version; tree: "
		"%" PRIu64 " keys, %" PRIu64 " leaves, %" PRIu64 " inner nodes, height %u\n",
		ok ? "OK" : "FAILED", v.seen - v.bad, ci.nkeys, ci.leaves, ci.internal, ci.height);
	if (R->o.json)
		printf("{\"type\":\"verify\",\"ok\":%s,\"records\":%" PRIu64 ",\"bad\":%" PRIu64
		       ",\"tree_keys\":%" PRIu64 ",\"leaves\":%" PRIu64 ",\"inner\":%" PRIu64
		       ",\"height\":%u}\n", ok ? "true" : "false", written, v.bad, ci.nkeys,
		       ci.leaves, ci.internal, ci.height);
	return ok ? 0 : -EBADMSG;
}

/* ---- Options ------------------------------------------------------------------- */

static void ycsb_usage(FILE *f)
{
	fputs("usage: bpbench ycsb [options]\n"
	      "  -w, --workload A-F     YCSB core workload (default A)\n"
	      "                           A 50/50 read/update   B 95/5 read/update   C read only\n"
	      "                           D read latest + 5% insert   E short scans + 5% insert\n"
	      "                           F 50/50 read/read-modify-write\n"
	      "  -t, --threads N        worker threads (default 16)\n"
	      "  -r, --records N        records loaded before the run (default 200000)\n"
	      "  -o, --ops N            operations to run (default: run for --duration)\n"
	      "  -d, --duration S       seconds to run (default 30)\n"
	      "      --dist NAME        zipfian, uniform or latest (default: the workload's)\n"
	      "      --theta X          zipfian constant (default 0.99)\n"
	      "      --scan-max N       longest scan of workload E (default 100)\n"
	      "      --frames N         pool frames (default 1024)\n"
	      "      --page-size B      page size (default 4096)\n"
	      "      --value-size B     value size, 16..1024 (default 100)\n"
	      "      --policy NAME      wake-one, wake-all, broadcast or futex (default wake-one)\n"
	      "      --latency-us N     simulated device latency per I/O (default 0)\n"
	      "      --file PATH        the store (default /tmp/bpbench.<pid>.db, removed after)\n"
	      "      --keep             keep the default file\n"
	      "      --stats-file PATH  publish pool stats there (default /dev/shm/bpbench.<pid>)\n"
	      "      --no-stats-file    do not publish\n"
	      "      --verify           check every record and the tree after the run\n"
	      "      --json             JSON lines on stdout (the report goes to stderr)\n"
	      "  -q, --quiet            no progress lines\n"
	      "      --seed N           random seed (default 1)\n", f);
}

static bool parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max)
		return false;
	*out = v;
	return true;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	enum { O_DIST = 256, O_THETA, O_SCAN, O_FRAMES, O_PAGE, O_VALUE, O_POLICY, O_LAT, O_FILE,
	       O_KEEP, O_STATS, O_NOSTATS, O_VERIFY, O_JSON, O_SEED };
	static const struct option lo[] = {
		{"workload", 1, 0, 'w'}, {"threads", 1, 0, 't'}, {"records", 1, 0, 'r'},
		{"ops", 1, 0, 'o'}, {"duration", 1, 0, 'd'}, {"dist", 1, 0, O_DIST},
		{"theta", 1, 0, O_THETA}, {"scan-max", 1, 0, O_SCAN}, {"frames", 1, 0, O_FRAMES},
		{"page-size", 1, 0, O_PAGE}, {"value-size", 1, 0, O_VALUE},
		{"policy", 1, 0, O_POLICY}, {"latency-us", 1, 0, O_LAT}, {"file", 1, 0, O_FILE},
		{"keep", 0, 0, O_KEEP}, {"stats-file", 1, 0, O_STATS},
		{"no-stats-file", 0, 0, O_NOSTATS}, {"verify", 0, 0, O_VERIFY},
		{"json", 0, 0, O_JSON}, {"quiet", 0, 0, 'q'}, {"seed", 1, 0, O_SEED},
		{"help", 0, 0, 'h'}, {0, 0, 0, 0}};
	*o = (struct opts){.mix = &mixes[0], .dist = mixes[0].dist, .threads = 16,
			   .records = 200000, .duration_s = 30, .theta = ZIPF_THETA_DEFAULT,
			   .scan_max = 100, .frames = 1024, .page_size = 4096,
			   .value_size = KV_VALUE_SIZE_DEFAULT, .seed = 1};
	bool dist_set = false;
	uint64_t v;
	int c;
	char *end;
	optind = 1;
	while ((c = getopt_long(argc, argv, "w:t:r:o:d:qh", lo, NULL)) != -1) {
		const char *bad = NULL;
		switch (c) {
		case 'w':
			o->mix = NULL;
			for (size_t i = 0; i < sizeof(mixes) / sizeof(mixes[0]); i++)
				if (optarg[0] && !optarg[1] && (optarg[0] & ~0x20) == mixes[i].name)
					o->mix = &mixes[i];
			if (!o->mix)
				bad = "--workload must be one of A-F";
			break;
		case 't':
			if (!parse_u64(optarg, 1, 4096, &v))
				bad = "--threads must be 1..4096";
			o->threads = (unsigned)v;
			break;
		case 'r':
			if (!parse_u64(optarg, 1, UINT64_C(1) << 32, &v))
				bad = "--records must be 1..2^32";
			o->records = v;
			break;
		case 'o':
			if (!parse_u64(optarg, 1, UINT64_C(1) << 40, &v))
				bad = "--ops must be >= 1";
			o->ops = v;
			break;
		case 'd':
			o->duration_s = strtod(optarg, &end);
			if (*end || end == optarg || !(o->duration_s > 0 && o->duration_s < 1e6))
				bad = "--duration must be a positive number of seconds";
			break;
		case O_DIST:
			bad = "--dist must be zipfian, uniform or latest";
			for (int i = 0; i < 3; i++)
				if (strcmp(optarg, dist_names[i]) == 0) {
					o->dist = (enum key_dist)i;
					dist_set = true;
					bad = NULL;
				}
			break;
		case O_THETA:
			o->theta = strtod(optarg, &end);
			if (*end || end == optarg || !(o->theta > 0 && o->theta < 1))
				bad = "--theta must be in (0, 1)";
			break;
		case O_SCAN:
			if (!parse_u64(optarg, 1, 100000, &v))
				bad = "--scan-max must be 1..100000";
			o->scan_max = (unsigned)v;
			break;
		case O_FRAMES:
			if (!parse_u64(optarg, 2, UINT32_MAX, &v))
				bad = "--frames must be >= 2";
			o->frames = (uint32_t)v;
			break;
		case O_PAGE:
			if (!parse_u64(optarg, BP_PAGE_SIZE_MIN, BP_PAGE_SIZE_MAX, &v) || (v & (v - 1)))
				bad = "--page-size must be a power of two in 512..65536";
			o->page_size = (uint32_t)v;
			break;
		case O_VALUE:
			if (!parse_u64(optarg, 16, KV_VALUE_SIZE_MAX, &v))
				bad = "--value-size must be 16..1024";
			o->value_size = (uint32_t)v;
			break;
		case O_POLICY:
			if (fwait_policy_parse(optarg, &o->policy) != 0)
				bad = "--policy must be wake-one, wake-all, broadcast or futex";
			break;
		case O_LAT:
			if (!parse_u64(optarg, 0, 10000000, &v))
				bad = "--latency-us must be 0..10000000";
			o->latency_us = (uint32_t)v;
			break;
		case O_FILE: o->file = optarg; break;
		case O_KEEP: o->keep = true; break;
		case O_STATS: o->stats_file = optarg; break;
		case O_NOSTATS: o->no_stats = true; break;
		case O_VERIFY: o->verify = true; break;
		case O_JSON: o->json = true; break;
		case 'q': o->quiet = true; break;
		case O_SEED:
			if (!parse_u64(optarg, 0, UINT64_MAX, &v))
				bad = "--seed must be a number";
			o->seed = v;
			break;
		case 'h':
			ycsb_usage(stdout);
			exit(0);
		default:
			ycsb_usage(stderr);
			return -EINVAL;
		}
		if (bad) {
			fprintf(stderr, "bpbench ycsb: %s (got '%s')\n", bad, optarg);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "bpbench ycsb: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (!dist_set)
		o->dist = o->mix->dist;
	/* each thread pins at most a root-to-leaf path plus a new page */
	if ((uint64_t)o->frames < 8ull * o->threads + 8) {
		fprintf(stderr, "bpbench ycsb: --frames %u is too small for %u threads "
			"(need >= 8 per thread + 8 = %u)\n", o->frames, o->threads, 8 * o->threads + 8);
		return -EINVAL;
	}
	return 0;
}

/* ---- Main ------------------------------------------------------------------------ */

/* s as the body of a JSON string (quotes, backslashes, controls escaped) */
static void json_escaped(const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
}

static void print_config(struct run *R, const char *file)
{
	const struct opts *o = &R->o;
	fprintf(R->human, "bpbench ycsb: workload %c, %s", o->mix->name, dist_names[o->dist]);
	if (o->dist != DIST_UNIFORM)
		fprintf(R->human, " %.2f", o->theta);
	fprintf(R->human, ", %u threads, %" PRIu64 " records, ", o->threads, o->records);
	if (o->ops)
		fprintf(R->human, "%" PRIu64 " ops\n", o->ops);
	else
		fprintf(R->human, "%.1f s\n", o->duration_s);
	fprintf(R->human, "  pool %u frames x %u B (%.1f MiB), value %u B, policy %s, "
		"latency %u us, file %s\n", o->frames, o->page_size,
		(double)o->frames * o->page_size / 1048576.0, o->value_size,
		fwait_policy_name(o->policy), o->latency_us, file);
	if (o->json)
		printf("{\"type\":\"config\",\"workload\":\"%c\",\"threads\":%u,\"records\":%" PRIu64
		       ",\"ops\":%" PRIu64 ",\"duration_s\":%.1f,\"dist\":\"%s\",\"theta\":%.3f,"
		       "\"frames\":%u,\"page_size\":%u,\"value_size\":%u,\"policy\":\"%s\","
		       "\"latency_us\":%u,\"file\":\"", o->mix->name, o->threads, o->records,
		       o->ops, o->duration_s, dist_names[o->dist], o->theta, o->frames, o->page_size,
		       o->value_size, fwait_policy_name(o->policy), o->latency_us);
	if (o->json) {
		json_escaped(file);
		puts("\"}");
	}
}

int bpbench_ycsb_main(int argc, char **argv)
{
	struct run R = {.human = stdout};
	char default_file[128];
	double secs;
	if (parse_opts(argc, argv, &R.o) != 0)
		return 2;
	if (R.o.json)
		R.human = stderr;
	R.tty = !R.o.quiet && isatty(STDERR_FILENO);
	const char *file = R.o.file;
	if (!file) {
		snprintf(default_file, sizeof(default_file), "/tmp/bpbench.%ld.db", (long)getpid());
		file = default_file;
	}
	bool mixes_insert = R.o.mix->p[OP_INSERT] > 0;
	R.capacity = R.o.records + (mixes_insert ? (R.o.ops ? R.o.ops : UINT64_C(1) << 24) : 0);
	R.versions = calloc(R.capacity, sizeof(*R.versions));
	R.w = calloc(R.o.threads, sizeof(*R.w));
	if (!R.versions || !R.w) {
		fprintf(stderr, "bpbench ycsb: out of memory\n");
		free(R.versions);
		free(R.w);
		return 1;
	}
	pthread_mutex_init(&R.lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&R.done_cv, &ca);
	pthread_condattr_destroy(&ca);
	zipf_init(&R.w[0].zipf, R.o.records, R.o.theta); /* O(records): once */
	for (unsigned i = 0; i < R.o.threads; i++) {
		R.w[i].run = &R;
		R.w[i].rng.s = R.o.seed * 1000003u + i;
		R.w[i].zipf = R.w[0].zipf;
	}

	struct kv_config kc = {.path = file, .create = true, .truncate = true,
			       .value_size = R.o.value_size};
	kc.pool.nframes = R.o.frames;
	kc.pool.page_size = R.o.page_size;
	kc.pool.io_latency_us = R.o.latency_us;
	kc.pool.fwait.policy = R.o.policy;
	kc.pool.log = tool_bp_log;
	int rc = kv_open(&R.kv, &kc), status = 1;
	if (rc) {
		fprintf(stderr, "bpbench ycsb: cannot open store %s: %s\n", file, strerror(-rc));
		goto out;
	}
	R.pool = kv_pool(R.kv);
	print_config(&R, file);
	/* before the stats file appears: whoever sees it may signal us */
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!R.o.no_stats) {
		char label[32];
		snprintf(label, sizeof(label), "ycsb %c", R.o.mix->name);
		rc = bpstat_publisher_create(&R.pub, R.o.stats_file, label, R.pool);
		if (rc) /* not fatal: the run is still worth doing */
			fprintf(stderr, "bpbench ycsb: cannot publish stats: %s\n", strerror(-rc));
		else if (!R.o.quiet)
			fprintf(R.human, "  stats published in %s (bpstat %ld)\n",
				bpstat_publisher_path(R.pub), (long)getpid());
	}

	if ((rc = run_phase(&R, PHASE_LOAD, &secs)) != 0)
		goto close;
	fprintf(R.human, "load: %" PRIu64 " records in %.2f s (%.0f inserts/s)\n", R.o.records,
		secs, (double)R.o.records / secs);
	if (R.o.json)
		printf("{\"type\":\"load\",\"records\":%" PRIu64 ",\"seconds\":%.3f,"
		       "\"ops_per_s\":%.1f}\n", R.o.records, secs, (double)R.o.records / secs);
	if (interrupted) {
		fprintf(stderr, "bpbench ycsb: interrupted during the load\n");
		goto close;
	}
	/* the load's workers are joined, the run's not started: relaxed */
	atomic_store_explicit(&R.acked, R.o.records, memory_order_relaxed);
	bp_stats_reset(R.pool);
	if (R.pub)
		bpstat_publisher_counters_reset(R.pub, 0);
	struct usage u0 = usage_now();
	rc = run_phase(&R, PHASE_RUN, &secs);
	struct usage u1 = usage_now();
	report(&R, secs, u0, u1);
	if (rc == 0 && interrupted)
		fprintf(R.human, "interrupted\n");
	if (rc == 0 && R.o.verify)
		rc = verify(&R);
	if (rc == 0)
		status = 0;
close:
	bpstat_publisher_destroy(R.pub);
	rc = kv_close(R.kv);
	if (rc) {
		fprintf(stderr, "bpbench ycsb: closing the store: %s\n", strerror(-rc));
		status = 1;
	}
	if (!R.o.file && !R.o.keep)
		unlink(file);
out:
	pthread_cond_destroy(&R.done_cv);
	pthread_mutex_destroy(&R.lock);
	free(R.versions);
	free(R.w);
	return status;
}

/* ---- bpbench check --------------------------------------------------------------- */

int bpbench_check_main(int argc, char **argv)
{
	static const struct option lo[] = {{"file", 1, 0, 'f'}, {"frames", 1, 0, 'n'},
		{"page-size", 1, 0, 'p'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
	const char *file = NULL;
	uint64_t frames = 256, page_size = 4096;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:h", lo, NULL)) != -1) {
		if (c == 'f')
			file = optarg;
		else if (c == 'n' && parse_u64(optarg, 16, UINT32_MAX, &frames))
			;
		else if (c == 'p' && parse_u64(optarg, BP_PAGE_SIZE_MIN, BP_PAGE_SIZE_MAX, &page_size) &&
			 !(page_size & (page_size - 1)))
			;
		else {
			fprintf(c == 'h' ? stdout : stderr, "usage: bpbench check --file PATH "
				"[--frames N (>= 16)] [--page-size B]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (!file || optind < argc) {
		fprintf(stderr, "usage: bpbench check --file PATH [--frames N] [--page-size B]\n");
		return 2;
	}
	struct kv_store *kv;
	struct kv_config kc = {.path = file};
	kc.pool.nframes = (uint32_t)frames;
	kc.pool.page_size = (uint32_t)page_size;
	kc.pool.flags = BP_OPEN_READONLY | BP_OPEN_NO_BGWRITER;
	kc.pool.log = tool_bp_log;
	int rc = kv_open(&kv, &kc);
	if (rc) {
		fprintf(stderr, "bpbench check: cannot open %s: %s%s\n", file, strerror(-rc),
			rc == -EBADMSG ? " (not a store, or another --page-size)" : "");
		return 1;
	}
	struct kv_check_info ci;
	rc = kv_check(kv, &ci);
	if (rc)
		fprintf(stderr, "bpbench check: %s: FAILED: %s\n", file,
			ci.error[0] ? ci.error : strerror(-rc));
	else
		printf("bpbench check: %s: OK: %" PRIu64 " keys, %" PRIu64 " leaves, %" PRIu64
		       " inner nodes, height %u, value size %u\n", file, ci.nkeys, ci.leaves,
		       ci.internal, ci.height, kv_value_size(kv));
	int crc = kv_close(kv);
	return rc || crc ? 1 : 0;
}
