/* SPDX-License-Identifier: MIT */
/*
 * tiotest_run.c - bpbench tiotest's workload: one pool, its workers and the
 * four phases under one wait policy, measured.
 *
 * Design note
 * -----------
 * Layer: bpbench, directly on bufpool (and fwait's policies and deadlines),
 * with util for the clock and the PRNG.
 *
 * Reproduces the tables of Irwin's 2004 "filtered wakeups" mail with the
 * buffer pool in place of the page cache: T threads (default 512) each own a
 * contiguous region of pages of one file and run four phases, as tiotest
 * does: sequential write, random write, sequential read, random read.  Every
 * page goes through the pool: writes pin it with BP_GET_CREATE, latch it
 * exclusive, check the old contents, fill a pattern and mark it dirty; reads
 * pin it, latch it shared and check every word of the pattern, so the data
 * really is verified (any mismatch or pool error makes the run exit 1).
 *
 * The four phases run once per fwait policy asked for (--policies; default
 * every policy of fwait's table) in the same process, each on a freshly
 * emptied file pre-sized to its final length (tio_presize_file,
 * tiotest.c), with the same pages in the same order (the random sequences
 * are seeded per thread and phase), so the policies are compared on
 * identical work.
 *
 * Where the herd comes from: the pool is far smaller than the data and every
 * I/O has a simulated device latency, so nearly every access is a miss and
 * nearly every thread is asleep on (its frame, BP_LOCKED) at any moment.  The
 * wait table has few buckets (64 by default), so each bucket holds waiters of
 * many unrelated frames, as the kernel's hashed page wait table did.  Under
 * BROADCAST each I/O completion wakes every waiter of its bucket, and all but
 * one go back to sleep (spurious wakeups, context switches, CPU); the
 * filtered policies wake only the waiter(s) of the completed page.
 *
 * Measurement: each phase is bracketed by barriers; wall time from
 * util_now_ns (CLOCK_MONOTONIC), CPU and context switches from cpu.h's
 * getrusage(RUSAGE_SELF) deltas (so the pool's I/O and writer threads
 * count, as the kernel's work counted in tiotest's Sys CPU), wakeups from
 * the pool's fwait statistics (reset at the start of each phase).  Write
 * phases include the final bp_flush (the data is on the "device" when the
 * phase ends); read phases start from an empty pool (bp_evict_all,
 * untimed).
 *
 * Threads: the main thread owns the pool and the results; workers own their
 * page-generation arrays and random state.  Workers first wait at a gate
 * (gate_lock/gate_cond) until all of them exist, so a failed pthread_create
 * can send the started ones home.  The phase number and the quit flag
 * are written by the main thread before a barrier and read by workers after
 * it (pthread_barrier_wait synchronises memory).  Error counters are relaxed
 * atomics read after the phase's closing barrier; the first error message is
 * kept under a mutex.
 */
#include "tiotest_int.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu.h"
#include "gen.h"
#include "toolutil.h"
#include "util/clock.h"
#include "util/prng.h"

/* How long one bp_get may wait for a free frame before the run gives up. */
#define TIO_FRAME_WAIT_NS (60ull * 1000 * 1000 * 1000)

/* ---- Page pattern ----------------------------------------------------------
 *
 * A page of generation 0 was never written: all zero.  A page of generation
 * g > 0 holds its page number, g, then words derived from both, so a page
 * that landed at the wrong offset, a stale generation or a torn write is
 * caught by the check of every word.  mix64 is gen.h's (splitmix64's
 * finaliser). */

#define TIO_GOLDEN UINT64_C(0x9e3779b97f4a7c15)

static void page_fill(uint64_t *w, size_t nwords, uint64_t pageno, uint32_t gen)
{
	if (gen == 0) {
		memset(w, 0, nwords * sizeof(*w));
		return;
	}
	uint64_t s = mix64(pageno * TIO_GOLDEN + gen);
	w[0] = pageno;
	w[1] = gen;
	for (size_t i = 2; i < nwords; i++)
		w[i] = s + i * TIO_GOLDEN;
}

static bool page_check(const uint64_t *w, size_t nwords, uint64_t pageno, uint32_t gen)
{
	uint64_t bad = 0;
	if (gen == 0) {
		for (size_t i = 0; i < nwords; i++)
			bad |= w[i];
		return bad == 0;
	}
	uint64_t s = mix64(pageno * TIO_GOLDEN + gen);
	bad = (w[0] ^ pageno) | (w[1] ^ gen);
	for (size_t i = 2; i < nwords; i++)
		bad |= w[i] ^ (s + i * TIO_GOLDEN);
	return bad == 0;
}


/* ---- One run: a pool, its workers, four phases ----------------------------- */

struct tio_run {
	const struct tio_options *opt;
	struct bp_pool *pool;
	const char *path;
	unsigned threads;
	uint64_t pages_per_thread;
	uint64_t random_ops;
	size_t page_words;
	pthread_mutex_t gate_lock;
	pthread_cond_t gate_cond;
	int gate;                  /* guarded by gate_lock: 0 wait, 1 go, 2 abort */
	pthread_barrier_t start;   /* main + workers: a phase (or quit) begins */
	pthread_barrier_t done;    /* main + workers: the phase is over */
	enum tio_item item;        /* written by main before start */
	bool quit;                 /* written by main before start */
	_Atomic uint64_t verify_errors; /* relaxed: read after the done barrier */
	_Atomic uint64_t pool_errors;   /* relaxed: read after the done barrier */
	pthread_mutex_t msg_lock;
	char first_error[256];     /* guarded by msg_lock */
};

struct tio_worker {
	struct tio_run *run;
	unsigned id;
	pthread_t tid;
	uint64_t first_page;
	uint32_t *gen;             /* generation of each page of the region */
};

static void run_error(struct tio_run *run, bool verify, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void run_error(struct tio_run *run, bool verify, const char *fmt, ...)
{
	atomic_fetch_add_explicit(verify ? &run->verify_errors : &run->pool_errors, 1,
				  memory_order_relaxed);
	pthread_mutex_lock(&run->msg_lock);
	if (run->first_error[0] == '\0') {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(run->first_error, sizeof(run->first_error), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&run->msg_lock);
}

/* Pin pageno (BP_GET_CREATE for a write; if every frame is pinned, wait,
 * bounded, for an unpin) and latch it, exclusive for a write, shared for a
 * read.  NULL after counting and recording the error. */
static struct bp_frame *pin_latch(struct tio_run *run, uint64_t pageno, bool write)
{
	unsigned flags = write ? BP_GET_CREATE : 0;
	struct bp_frame *f;
	int rc = bp_get(run->pool, pageno, flags, &f);
	if (rc == -EBUSY) {
		struct timespec dl = fwait_deadline_after_ns(TIO_FRAME_WAIT_NS);
		rc = bp_get_timed(run->pool, pageno, flags, &dl, &f);
	}
	if (rc != 0) {
		run_error(run, false, "bp_get(page %" PRIu64 "%s): %s", pageno,
			  write ? ", CREATE" : "", strerror(-rc));
		return NULL;
	}
	rc = bp_latch(run->pool, f, write ? BP_LATCH_EXCLUSIVE : BP_LATCH_SHARED);
	if (rc != 0) {
		run_error(run, false, "bp_latch(page %" PRIu64 ", %s): %s", pageno,
			  write ? "EXCLUSIVE" : "SHARED", strerror(-rc));
		bp_release(run->pool, f);
		return NULL;
	}
	return f;
}

/* The other half: mark a written page dirty, unlatch, release; each error
 * counted and recorded. */
static void unlatch_release(struct tio_run *run, struct bp_frame *f, uint64_t pageno, bool write)
{
	int rc = write ? bp_mark_dirty(run->pool, f) : 0;
	if (rc != 0)
		run_error(run, false, "bp_mark_dirty(page %" PRIu64 "): %s", pageno, strerror(-rc));
	rc = bp_unlatch(run->pool, f, write ? BP_LATCH_EXCLUSIVE : BP_LATCH_SHARED);
	if (rc != 0)
		run_error(run, false, "bp_unlatch(page %" PRIu64 "): %s", pageno, strerror(-rc));
	rc = bp_release(run->pool, f);
	if (rc != 0)
		run_error(run, false, "bp_release(page %" PRIu64 "): %s", pageno, strerror(-rc));
}

static void write_page(struct tio_worker *w, uint64_t idx)
{
	struct tio_run *run = w->run;
	uint64_t pageno = w->first_page + idx;
	struct bp_frame *f = pin_latch(run, pageno, true);
	if (f == NULL)
		return;
	uint64_t *data = bp_data(f);
	if (!page_check(data, run->page_words, pageno, w->gen[idx]))
		run_error(run, true, "page %" PRIu64 ": old contents are not generation %" PRIu32
			  " before a write", pageno, w->gen[idx]);
	w->gen[idx]++;
	page_fill(data, run->page_words, pageno, w->gen[idx]);
	unlatch_release(run, f, pageno, true);
}

static void read_page(struct tio_worker *w, uint64_t idx)
{
	struct tio_run *run = w->run;
	uint64_t pageno = w->first_page + idx;
	struct bp_frame *f = pin_latch(run, pageno, false);
	if (f == NULL)
		return;
	if (!page_check(bp_data(f), run->page_words, pageno, w->gen[idx]))
		run_error(run, true, "page %" PRIu64 ": read contents are not generation %" PRIu32,
			  pageno, w->gen[idx]);
	unlatch_release(run, f, pageno, false);
}

static void worker_phase(struct tio_worker *w, enum tio_item it)
{
	struct tio_run *run = w->run;
	/* A stop signal ends the phase early. */
	if (!tio_item_is_random(it)) {
		for (uint64_t i = 0; i < run->pages_per_thread && !tool_stopped(); i++) {
			if (it == TIO_WRITE)
				write_page(w, i);
			else
				read_page(w, i);
		}
		return;
	}
	/* The same sequence for every policy: seeded by (seed, thread, phase). */
	uint64_t s = mix64(run->opt->seed ^ mix64(((uint64_t)w->id << 8) | (unsigned)it));
	if (s == 0)
		s = 1;
	for (uint64_t n = 0; n < run->random_ops && !tool_stopped(); n++) {
		uint64_t i = util_rand_next(&s) % run->pages_per_thread;
		if (it == TIO_RANDOM_WRITE)
			write_page(w, i);
		else
			read_page(w, i);
	}
}

static void *worker_main(void *arg)
{
	struct tio_worker *w = arg;
	struct tio_run *run = w->run;
	/* Wait until every worker exists (or thread creation failed). */
	pthread_mutex_lock(&run->gate_lock);
	while (run->gate == 0)
		pthread_cond_wait(&run->gate_cond, &run->gate_lock);
	bool go = run->gate == 1;
	pthread_mutex_unlock(&run->gate_lock);
	if (!go)
		return NULL;
	for (;;) {
		pthread_barrier_wait(&run->start);
		if (run->quit)
			break;
		worker_phase(w, run->item);
		pthread_barrier_wait(&run->done);
	}
	return NULL;
}

/* Run one phase on every worker and measure it into *res.  0 or -errno of a
 * pool call the main thread made (the workers' errors are counted in run). */
static int run_phase(struct tio_run *run, enum tio_item it, struct tio_result *res)
{
	int rc;
	if (!tio_item_is_write(it)) {
		/* Reads start cold: nothing of the file is in the pool. */
		rc = bp_evict_all(run->pool);
		if (rc < 0) {
			fprintf(stderr, TIO_PROG ": bp_evict_all: %s\n", strerror(-rc));
			return rc;
		}
	}
	rc = bp_stats_reset(run->pool);
	if (rc != 0)
		return rc;

	double load[1] = { -1.0 };
	if (getloadavg(load, 1) != 1)
		load[0] = -1.0;
	res->loadavg = load[0];
	struct cpu_usage u0 = cpu_usage_now();
	uint64_t t0 = util_now_ns();
	run->item = it;
	pthread_barrier_wait(&run->start);
	pthread_barrier_wait(&run->done);
	int flush_rc = 0;
	if (tio_item_is_write(it))
		flush_rc = bp_flush(run->pool);
	uint64_t t1 = util_now_ns();
	struct cpu_usage u1 = cpu_usage_now();


	struct bp_stats st;
	bp_stats_init(&st);
	rc = bp_stats_get(run->pool, &st);
	if (rc != 0)
		return rc;
	if (flush_rc != 0) {
		fprintf(stderr, TIO_PROG ": bp_flush: %s\n", strerror(-flush_rc));
		return flush_rc;
	}

	uint64_t ops = tio_item_is_random(it) ? run->random_ops : run->pages_per_thread;
	res->item = it;
	res->threads = run->threads;
	res->frames = bp_nframes(run->pool);
	res->policy = st.policy;
	res->pages = ops * run->threads;
	res->mb = (double)res->pages * (double)bp_page_size(run->pool) / (1024.0 * 1024.0);
	res->wall_s = (double)(t1 - t0) / 1e9;
	res->usr_s = u1.user_s - u0.user_s;
	res->sys_s = u1.sys_s - u0.sys_s;
	res->vcsw = (uint64_t)(u1.vcsw - u0.vcsw);
	res->ivcsw = (uint64_t)(u1.ivcsw - u0.ivcsw);
	res->fwait_waits = st.fwait.waits;
	res->fwait_wakeups = st.fwait.wakeups;
	res->fwait_spurious = st.fwait.spurious_wakeups;
	res->fwait_foreign = st.fwait.foreign_skipped;
	res->max_bucket_depth = st.fwait.max_bucket_depth;
	res->nbuckets = st.fwait.nbuckets;
	res->io_waits = st.io_wait.count;
	res->writeback_waits = st.writeback_wait.count;
	res->latch_waits = st.latch_shared_wait.count + st.latch_exclusive_wait.count;
	res->reads = st.reads;
	res->writes = st.writes;
	res->evictions = st.evictions;
	return 0;
}

/* All four phases under one policy with `threads` workers; results go to
 * out[0..TIO_ITEM_COUNT).  Returns 0, 1 (data check or pool error: the run
 * completed but is wrong) or -errno (could not run). */
static int run_policy(const struct tio_options *opt, const char *path,
		      enum fwait_policy policy, unsigned threads, struct tio_result *out)
{
	struct tio_run run = {
		.opt = opt,
		.path = path,
		.threads = threads,
		.pages_per_thread = tio_pages_per_thread_for(opt),
		.random_ops = tio_random_ops_for(opt),
		.page_words = opt->page_size / sizeof(uint64_t),
	};
	if (run.pages_per_thread > UINT64_MAX / threads)
		return -EFBIG;
	int rc;

	rc = tio_presize_file(path, (uint64_t)threads * run.pages_per_thread * opt->page_size);
	if (rc != 0)
		return rc;

	struct bp_config cfg;
	bp_config_init(&cfg);
	cfg.path = path;
	cfg.flags = opt->direct ? BP_OPEN_DIRECT : 0;
	cfg.page_size = opt->page_size;
	cfg.nframes = tio_frames_for(opt, threads);
	cfg.io_threads = opt->io_threads;
	cfg.io_engine = opt->io_engine;
	cfg.read_path = opt->read_path;
	cfg.io_latency_us = opt->latency_us;
	cfg.fwait = (struct fwait_config){ .nbuckets = opt->buckets, .policy = policy };
	cfg.log = tool_bp_log;
	if (opt->readahead == 0)
		cfg.flags |= BP_OPEN_NO_READAHEAD;
	else if (opt->readahead > 0)
		cfg.readahead_pages = (unsigned)opt->readahead;

	rc = bp_open(&run.pool, &cfg);
	if (rc != 0) {
		fprintf(stderr, TIO_PROG ": bp_open(%s, %s): %s\n", path,
			fwait_policy_name(policy), strerror(-rc));
		return rc;
	}
	if (opt->fault_read_ppm != 0) {
		struct bp_fault fault = {
			.op = BP_FAULT_READ,
			.kind = BP_FAULT_FAIL,
			.err = EIO,
			.probability_ppm = opt->fault_read_ppm,
			.seed = opt->seed,
		};
		rc = bp_fault_set(run.pool, &fault);
		if (rc != 0) {
			fprintf(stderr, TIO_PROG ": bp_fault_set: %s\n", strerror(-rc));
			if (bp_close(run.pool) < 0)
				bp_discard(run.pool);
			return rc;
		}
	}

	struct tio_worker *workers = calloc(threads, sizeof(*workers));
	uint32_t *gens = calloc((size_t)threads * run.pages_per_thread, sizeof(*gens));
	if (workers == NULL || gens == NULL) {
		free(workers);
		free(gens);
		if (bp_close(run.pool) < 0)
			bp_discard(run.pool);
		return -ENOMEM;
	}
	pthread_mutex_init(&run.msg_lock, NULL);
	pthread_mutex_init(&run.gate_lock, NULL);
	pthread_cond_init(&run.gate_cond, NULL);
	pthread_barrier_init(&run.start, NULL, threads + 1);
	pthread_barrier_init(&run.done, NULL, threads + 1);

	pthread_attr_t attr;
	pthread_attr_init(&attr);
	/* Hundreds of threads: keep their stacks modest (ample for the pool). */
	pthread_attr_setstacksize(&attr, 1024 * 1024);
	unsigned started = 0;
	for (; started < threads; started++) {
		struct tio_worker *w = &workers[started];
		w->run = &run;
		w->id = started;
		w->first_page = (uint64_t)started * run.pages_per_thread;
		w->gen = gens + (size_t)started * run.pages_per_thread;
		int e = pthread_create(&w->tid, &attr, worker_main, w);
		if (e != 0) {
			fprintf(stderr, TIO_PROG ": cannot start thread %u of %u: %s\n",
				started + 1, threads, strerror(e));
			rc = -e;
			break;
		}
	}
	pthread_attr_destroy(&attr);

	pthread_mutex_lock(&run.gate_lock);
	run.gate = started == threads ? 1 : 2;
	pthread_cond_broadcast(&run.gate_cond);
	pthread_mutex_unlock(&run.gate_lock);

	if (started == threads) {
		for (int it = 0; it < TIO_ITEM_COUNT && rc == 0; it++) {
			rc = run_phase(&run, (enum tio_item)it, &out[it]);
			if (rc == 0 && tool_stop_signal)
				rc = -EINTR; /* the phase was cut short */
		}
		run.quit = true;
		pthread_barrier_wait(&run.start);
	} else {
		fprintf(stderr, TIO_PROG ": try fewer threads (-t) or a larger ulimit -u\n");
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(workers[i].tid, NULL);

	int close_rc = bp_close(run.pool);
	if (close_rc != 0) {
		fprintf(stderr, TIO_PROG ": bp_close: %s\n", strerror(-close_rc));
		bp_discard(run.pool); /* bp_close left it open */
	}

	uint64_t verr = atomic_load_explicit(&run.verify_errors, memory_order_relaxed);
	uint64_t perr = atomic_load_explicit(&run.pool_errors, memory_order_relaxed);
	if (verr != 0 || perr != 0) {
		fprintf(stderr, TIO_PROG ": %s, %u threads: %" PRIu64 " data check failures, %"
			PRIu64 " pool errors; first: %s\n", fwait_policy_name(policy), threads,
			verr, perr, run.first_error);
	}

	pthread_barrier_destroy(&run.start);
	pthread_barrier_destroy(&run.done);
	pthread_mutex_destroy(&run.msg_lock);
	pthread_cond_destroy(&run.gate_cond);
	pthread_mutex_destroy(&run.gate_lock);
	free(gens);
	free(workers);
	if (rc < 0)
		return rc;
	return (verr != 0 || perr != 0 || close_rc != 0) ? 1 : 0;
}

int tio_run_all_policies(const struct tio_options *opt, const char *path, unsigned threads,
			 struct tio_result *out)
{
	int worst = 0;
	for (unsigned p = 0; p < opt->npolicies; p++) {
		fprintf(stderr, TIO_PROG ": %u threads, %s ...\n", threads,
			fwait_policy_name(opt->policies[p]));
		int rc = run_policy(opt, path, opt->policies[p], threads, &out[p * TIO_ITEM_COUNT]);
		if (rc < 0)
			return rc;
		if (rc > 0)
			worst = 1;
	}
	return worst;
}
