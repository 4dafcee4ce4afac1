/*
 * tiotest.c - the tiotest-style run of the workload driver (bpbench tiotest).
 *
 * Design note
 * -----------
 * Reproduces the tables of Irwin's 2004 "filtered wakeups" mail with the
 * buffer pool in place of the page cache: T threads (default 512) each own a
 * contiguous region of pages of one file and run four phases, as tiotest
 * does: sequential write, random write, sequential read, random read.  Every
 * page goes through the pool: writes pin it with BP_GET_CREATE, latch it
 * exclusive, check the old contents, fill a pattern and mark it dirty; reads
 * pin it, latch it shared and check every word of the pattern, so the data
 * really is verified (any mismatch or pool error makes the run exit 1).
 *
 * The four phases run once per fwait policy (broadcast, wake-all, wake-one,
 * futex) in the same process, each on a freshly emptied file pre-sized to
 * its final length (see presize_file), with the same pages in the same order (the random sequences are seeded per thread and
 * phase), so the policies are compared on identical work.
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
 * CLOCK_MONOTONIC, CPU and context switches from getrusage(RUSAGE_SELF)
 * deltas (so the pool's I/O and writer threads count, as the kernel's work
 * counted in tiotest's Sys CPU), wakeups from the pool's fwait statistics
 * (reset at the start of each phase).  Write phases include the final
 * bp_flush (the data is on the "device" when the phase ends); read phases
 * start from an empty pool (bp_evict_all, untimed).
 *
 * Threads: the main thread owns the pool and the results; workers own their
 * page-generation arrays and random state.  Workers first wait at a gate
 * (gate_lock/gate_cond) until all of them exist, so a failed pthread_create
 * can send the started ones home.  The phase number and the quit flag
 * are written by the main thread before a barrier and read by workers after
 * it (pthread_barrier_wait synchronises memory).  Error counters are relaxed
 * atomics read after the phase's closing barrier; the first error message is
 * kept under a mutex.
 *
 * --plot OUT.png repeats the run at several thread counts and draws CPU per
 * MB and spurious wakeups per MB against threads with gnuplot, using
 * tools/bpbench/plot.gp and a data file written next to OUT.png.
 */
#include "tiotest.h"
#include "toolutil.h"

#include "bufpool/bufpool.h"
#include "fwait/fwait.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ---- Items (phases) ------------------------------------------------------- */

enum tio_item {
	TIO_WRITE = 0,
	TIO_RANDOM_WRITE,
	TIO_READ,
	TIO_RANDOM_READ,
	TIO_ITEM_COUNT
};

static const char *const tio_item_names[TIO_ITEM_COUNT] = {
	"Write", "Random Write", "Read", "Random Read",
};

static bool item_is_write(enum tio_item it)
{
	return it == TIO_WRITE || it == TIO_RANDOM_WRITE;
}

static bool item_is_random(enum tio_item it)
{
	return it == TIO_RANDOM_WRITE || it == TIO_RANDOM_READ;
}

/* ---- Options ---------------------------------------------------------------- */

#define TIO_MAX_THREADS 8192u
#define TIO_MAX_PLOT_POINTS 16u
#define TIO_DEFAULT_THREADS 512u
#define TIO_DEFAULT_MB 0.5
#define TIO_DEFAULT_BUCKETS 64u
#define TIO_DEFAULT_LATENCY_US 150u
#define TIO_DEFAULT_SEED 2004u
/* Frames per thread when --frames is not given: enough that every thread can
 * pin one page and have a read-ahead window in flight, far below the data. */
#define TIO_DEFAULT_FRAMES_PER_THREAD 4u
#define TIO_MIN_DEFAULT_FRAMES 64u
/* How long one bp_get may wait for a free frame before the run gives up. */
#define TIO_FRAME_WAIT_NS (60ull * 1000 * 1000 * 1000)

struct tio_options {
	unsigned threads;
	double mb_per_thread;
	uint64_t random_ops;       /* per thread; 0 = pages per thread / 4 */
	uint32_t page_size;
	uint32_t frames;           /* 0 = scale with threads */
	unsigned buckets;
	uint32_t latency_us;
	unsigned io_threads;       /* 0 = pool default */
	int readahead;             /* -1 = pool default, 0 = off */
	uint64_t seed;
	uint32_t fault_read_ppm;   /* injected read failures per million reads */
	const char *file;          /* NULL = temporary file */
	bool keep_file;
	bool json;
	enum fwait_policy policies[FWAIT_POLICY_COUNT];
	unsigned npolicies;
	const char *plot_out;      /* NULL = no plot */
	unsigned plot_threads[TIO_MAX_PLOT_POINTS];
	unsigned nplot_threads;
	const char *plot_script;   /* NULL = search */
};

/* ---- Results ---------------------------------------------------------------- */

struct tio_result {
	enum fwait_policy policy;
	unsigned threads;
	uint32_t frames;
	enum tio_item item;
	uint64_t pages;            /* pages transferred */
	double mb;                 /* MiB transferred */
	double wall_s, usr_s, sys_s;
	uint64_t vcsw, ivcsw;      /* voluntary, involuntary context switches */
	uint64_t fwait_waits, fwait_wakeups, fwait_spurious, fwait_foreign;
	uint64_t io_waits, writeback_waits, latch_waits;
	uint64_t reads, writes, evictions;
	uint32_t max_bucket_depth;
	uint32_t nbuckets;         /* the table's real bucket count (a power of two) */
	double loadavg;            /* 1-minute load average when the phase began */
};

static double res_cpu(const struct tio_result *r)
{
	return r->usr_s + r->sys_s;
}

static double res_mb_per_cpusec(const struct tio_result *r)
{
	return res_cpu(r) > 0 ? r->mb / res_cpu(r) : 0.0;
}

static double per_mb(const struct tio_result *r, double v)
{
	return r->mb > 0 ? v / r->mb : 0.0;
}

/* ---- Page pattern ----------------------------------------------------------
 *
 * A page of generation 0 was never written: all zero.  A page of generation
 * g > 0 holds its page number, g, then words derived from both, so a page
 * that landed at the wrong offset, a stale generation or a torn write is
 * caught by the check of every word. */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	x ^= x >> 31;
	return x;
}

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

/* bp_get, and if every frame is pinned, wait (bounded) for an unpin. */
static int get_page(struct tio_run *run, uint64_t pageno, unsigned flags,
		    struct bp_frame **f)
{
	int rc = bp_get(run->pool, pageno, flags, f);
	if (rc == -EBUSY) {
		struct timespec dl = fwait_deadline_after_ns(TIO_FRAME_WAIT_NS);
		rc = bp_get_timed(run->pool, pageno, flags, &dl, f);
	}
	return rc;
}

static void write_page(struct tio_worker *w, uint64_t idx)
{
	struct tio_run *run = w->run;
	uint64_t pageno = w->first_page + idx;
	struct bp_frame *f;
	int rc = get_page(run, pageno, BP_GET_CREATE, &f);
	if (rc != 0) {
		run_error(run, false, "bp_get(page %" PRIu64 ", CREATE): %s", pageno, strerror(-rc));
		return;
	}
	rc = bp_latch(run->pool, f, BP_LATCH_EXCLUSIVE);
	if (rc != 0) {
		run_error(run, false, "bp_latch(page %" PRIu64 ", EXCLUSIVE): %s", pageno, strerror(-rc));
		bp_release(run->pool, f);
		return;
	}
	uint64_t *data = bp_data(f);
	if (!page_check(data, run->page_words, pageno, w->gen[idx]))
		run_error(run, true, "page %" PRIu64 ": old contents are not generation %" PRIu32
			  " before a write", pageno, w->gen[idx]);
	w->gen[idx]++;
	page_fill(data, run->page_words, pageno, w->gen[idx]);
	rc = bp_mark_dirty(run->pool, f);
	if (rc != 0)
		run_error(run, false, "bp_mark_dirty(page %" PRIu64 "): %s", pageno, strerror(-rc));
	rc = bp_unlatch(run->pool, f, BP_LATCH_EXCLUSIVE);
	if (rc != 0)
		run_error(run, false, "bp_unlatch(page %" PRIu64 "): %s", pageno, strerror(-rc));
	rc = bp_release(run->pool, f);
	if (rc != 0)
		run_error(run, false, "bp_release(page %" PRIu64 "): %s", pageno, strerror(-rc));
}

static void read_page(struct tio_worker *w, uint64_t idx)
{
	struct tio_run *run = w->run;
	uint64_t pageno = w->first_page + idx;
	struct bp_frame *f;
	int rc = get_page(run, pageno, 0, &f);
	if (rc != 0) {
		run_error(run, false, "bp_get(page %" PRIu64 "): %s", pageno, strerror(-rc));
		return;
	}
	rc = bp_latch(run->pool, f, BP_LATCH_SHARED);
	if (rc != 0) {
		run_error(run, false, "bp_latch(page %" PRIu64 ", SHARED): %s", pageno, strerror(-rc));
		bp_release(run->pool, f);
		return;
	}
	if (!page_check(bp_data(f), run->page_words, pageno, w->gen[idx]))
		run_error(run, true, "page %" PRIu64 ": read contents are not generation %" PRIu32,
			  pageno, w->gen[idx]);
	rc = bp_unlatch(run->pool, f, BP_LATCH_SHARED);
	if (rc != 0)
		run_error(run, false, "bp_unlatch(page %" PRIu64 "): %s", pageno, strerror(-rc));
	rc = bp_release(run->pool, f);
	if (rc != 0)
		run_error(run, false, "bp_release(page %" PRIu64 "): %s", pageno, strerror(-rc));
}

static void worker_phase(struct tio_worker *w, enum tio_item it)
{
	struct tio_run *run = w->run;
	if (!item_is_random(it)) {
		for (uint64_t i = 0; i < run->pages_per_thread; i++) {
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
	for (uint64_t n = 0; n < run->random_ops; n++) {
		uint64_t i = tool_rand_next(&s) % run->pages_per_thread;
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

static double ts_diff(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static double tv_diff(const struct timeval *a, const struct timeval *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_usec - a->tv_usec) / 1e6;
}

/* Run one phase on every worker and measure it into *res.  0 or -errno of a
 * pool call the main thread made (the workers' errors are counted in run). */
static int run_phase(struct tio_run *run, enum tio_item it, struct tio_result *res)
{
	int rc;
	if (!item_is_write(it)) {
		/* Reads start cold: nothing of the file is in the pool. */
		rc = bp_evict_all(run->pool);
		if (rc < 0) {
			fprintf(stderr, "bpbench tiotest: bp_evict_all: %s\n", strerror(-rc));
			return rc;
		}
	}
	rc = bp_stats_reset(run->pool);
	if (rc != 0)
		return rc;

	struct rusage ru0, ru1;
	struct timespec t0, t1;
	double load[1] = { -1.0 };
	if (getloadavg(load, 1) != 1)
		load[0] = -1.0;
	res->loadavg = load[0];
	getrusage(RUSAGE_SELF, &ru0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	run->item = it;
	pthread_barrier_wait(&run->start);
	pthread_barrier_wait(&run->done);
	int flush_rc = 0;
	if (item_is_write(it))
		flush_rc = bp_flush(run->pool);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	getrusage(RUSAGE_SELF, &ru1);

	struct bp_stats st;
	rc = bp_stats_get(run->pool, &st);
	if (rc != 0)
		return rc;
	if (flush_rc != 0) {
		fprintf(stderr, "bpbench tiotest: bp_flush: %s\n", strerror(-flush_rc));
		return flush_rc;
	}

	uint64_t ops = item_is_random(it) ? run->random_ops : run->pages_per_thread;
	res->item = it;
	res->threads = run->threads;
	res->frames = bp_nframes(run->pool);
	res->policy = st.policy;
	res->pages = ops * run->threads;
	res->mb = (double)res->pages * (double)bp_page_size(run->pool) / (1024.0 * 1024.0);
	res->wall_s = ts_diff(&t0, &t1);
	res->usr_s = tv_diff(&ru0.ru_utime, &ru1.ru_utime);
	res->sys_s = tv_diff(&ru0.ru_stime, &ru1.ru_stime);
	res->vcsw = (uint64_t)(ru1.ru_nvcsw - ru0.ru_nvcsw);
	res->ivcsw = (uint64_t)(ru1.ru_nivcsw - ru0.ru_nivcsw);
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

static uint32_t frames_for(const struct tio_options *opt, unsigned threads)
{
	if (opt->frames != 0)
		return opt->frames;
	uint64_t f = (uint64_t)threads * TIO_DEFAULT_FRAMES_PER_THREAD;
	return f < TIO_MIN_DEFAULT_FRAMES ? TIO_MIN_DEFAULT_FRAMES : (uint32_t)f;
}

static uint64_t pages_per_thread_for(const struct tio_options *opt)
{
	double pages = opt->mb_per_thread * 1024.0 * 1024.0 / (double)opt->page_size;
	return pages < 1.0 ? 1 : (uint64_t)(pages + 0.5);
}

static uint64_t random_ops_for(const struct tio_options *opt)
{
	if (opt->random_ops != 0)
		return opt->random_ops;
	uint64_t n = pages_per_thread_for(opt) / 4;
	return n == 0 ? 1 : n;
}

/* Empty the file and give it its final size as one hole, before the pool
 * opens it, so every first write of a page reads the hole (zeros, checked)
 * and overwrites it: the pool has no "whole page overwrite" hint, and a page
 * below the pool's page count is read before it is written.  Without this,
 * which pages of the parallel Write phase are created and which are read
 * would depend on how the threads happen to interleave (a page is created
 * only if no thread has yet created a higher one), so the policies would not
 * do identical I/O. */
static int presize_file(const char *path, uint64_t bytes)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		int e = errno;
		fprintf(stderr, "bpbench tiotest: cannot open %s: %s\n", path, strerror(e));
		return -e;
	}
	int rc = 0;
	if (ftruncate(fd, (off_t)bytes) != 0) {
		rc = -errno;
		fprintf(stderr, "bpbench tiotest: cannot size %s to %" PRIu64 " bytes: %s\n", path,
			bytes, strerror(-rc));
	}
	close(fd);
	return rc;
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
		.pages_per_thread = pages_per_thread_for(opt),
		.random_ops = random_ops_for(opt),
		.page_words = opt->page_size / sizeof(uint64_t),
	};
	if (run.pages_per_thread > UINT64_MAX / threads)
		return -EFBIG;
	int rc;

	rc = presize_file(path, (uint64_t)threads * run.pages_per_thread * opt->page_size);
	if (rc != 0)
		return rc;

	struct bp_config cfg = {
		.path = path,
		.flags = 0,
		.page_size = opt->page_size,
		.nframes = frames_for(opt, threads),
		.io_threads = opt->io_threads,
		.io_latency_us = opt->latency_us,
		.fwait = { .nbuckets = opt->buckets, .policy = policy },
		.log = tool_bp_log,
	};
	if (opt->readahead == 0)
		cfg.flags |= BP_OPEN_NO_READAHEAD;
	else if (opt->readahead > 0)
		cfg.readahead_pages = (unsigned)opt->readahead;

	rc = bp_open(&run.pool, &cfg);
	if (rc != 0) {
		fprintf(stderr, "bpbench tiotest: bp_open(%s, %s): %s\n", path,
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
			fprintf(stderr, "bpbench tiotest: bp_fault_set: %s\n", strerror(-rc));
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
			fprintf(stderr, "bpbench tiotest: cannot start thread %u of %u: %s\n",
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
		for (int it = 0; it < TIO_ITEM_COUNT && rc == 0; it++)
			rc = run_phase(&run, (enum tio_item)it, &out[it]);
		run.quit = true;
		pthread_barrier_wait(&run.start);
	} else {
		fprintf(stderr, "bpbench tiotest: try fewer threads (-t) or a larger ulimit -u\n");
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(workers[i].tid, NULL);

	int close_rc = bp_close(run.pool);
	if (close_rc != 0) {
		fprintf(stderr, "bpbench tiotest: bp_close: %s\n", strerror(-close_rc));
		bp_discard(run.pool); /* bp_close left it open */
	}

	uint64_t verr = atomic_load_explicit(&run.verify_errors, memory_order_relaxed);
	uint64_t perr = atomic_load_explicit(&run.pool_errors, memory_order_relaxed);
	if (verr != 0 || perr != 0) {
		fprintf(stderr, "bpbench tiotest: %s, %u threads: %" PRIu64 " data check failures, %"
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

/* ---- Output ------------------------------------------------------------------ */

static void print_mb(char *buf, size_t len, double mb)
{
	if (mb >= 100.0 || mb == (double)(uint64_t)mb)
		snprintf(buf, len, "%.0f", mb);
	else
		snprintf(buf, len, "%.1f", mb);
}

static void print_tiotest_table(FILE *o, const struct tio_result *r, unsigned threads,
				enum fwait_policy policy)
{
	fprintf(o, "Tiotest results for %u concurrent io threads, policy %s:\n", threads,
		fwait_policy_name(policy));
	fprintf(o, ",----------------------------------------------------------------------.\n");
	fprintf(o, "| Item                  | Time     | Rate         | Usr CPU  | Sys CPU |\n");
	fprintf(o, "+-----------------------+----------+--------------+----------+---------+\n");
	for (int i = 0; i < TIO_ITEM_COUNT; i++) {
		char mb[32];
		print_mb(mb, sizeof(mb), r[i].mb);
		int pad = 21 - (int)strlen(tio_item_names[i]) - (int)strlen(mb) - 4;
		if (pad < 1)
			pad = 1;
		double wall = r[i].wall_s > 0 ? r[i].wall_s : 1e-9;
		fprintf(o, "| %s%*s%s MBs | %6.2f s | %7.3f MB/s | %6.1f %% | %5.1f %% |\n",
			tio_item_names[i], pad, "", mb, r[i].wall_s, r[i].mb / wall,
			r[i].usr_s / wall * 100.0, r[i].sys_s / wall * 100.0);
	}
	fprintf(o, "`----------------------------------------------------------------------'\n");
}

static void print_cost_table(FILE *o, const struct tio_result *all, unsigned npol)
{
	fprintf(o, "\nThroughput scaled by cpu consumption, and wait-table work per MB:\n");
	fprintf(o, "| %-9s | %-12s | %9s | %9s | %9s | %10s | %11s | %10s |\n", "Policy", "Item",
		"MB/cpusec", "ctxsw/MB", "waits/MB", "wakeups/MB", "spurious/MB", "foreign/MB");
	fprintf(o, "|-----------|--------------|-----------|-----------|-----------|"
		   "------------|-------------|------------|\n");
	for (unsigned p = 0; p < npol; p++) {
		for (int i = 0; i < TIO_ITEM_COUNT; i++) {
			const struct tio_result *r = &all[p * TIO_ITEM_COUNT + i];
			fprintf(o, "| %-9s | %-12s | %9.3f | %9.1f | %9.1f | %10.1f | %11.1f | %10.1f |\n",
				fwait_policy_name(r->policy), tio_item_names[i],
				res_mb_per_cpusec(r), per_mb(r, (double)(r->vcsw + r->ivcsw)),
				per_mb(r, (double)r->fwait_waits), per_mb(r, (double)r->fwait_wakeups),
				per_mb(r, (double)r->fwait_spurious), per_mb(r, (double)r->fwait_foreign));
		}
	}
}

/* Index of the reference policy for ratios: broadcast if it ran, else the
 * first policy. */
static unsigned ratio_base(const struct tio_options *opt)
{
	for (unsigned p = 0; p < opt->npolicies; p++)
		if (opt->policies[p] == FWAIT_BROADCAST)
			return p;
	return 0;
}

static void print_ratio_table(FILE *o, const struct tio_options *opt, const struct tio_result *all)
{
	unsigned base = ratio_base(opt);
	fprintf(o, "\nMB/cpusec relative to %s (higher is better):\n",
		fwait_policy_name(opt->policies[base]));
	fprintf(o, "| %-12s |", "Item");
	for (unsigned p = 0; p < opt->npolicies; p++)
		fprintf(o, " %9s |", fwait_policy_name(opt->policies[p]));
	fprintf(o, "\n|--------------|");
	for (unsigned p = 0; p < opt->npolicies; p++)
		fprintf(o, "-----------|");
	fprintf(o, "\n");
	for (int i = 0; i < TIO_ITEM_COUNT; i++) {
		double b = res_mb_per_cpusec(&all[base * TIO_ITEM_COUNT + i]);
		fprintf(o, "| %-12s |", tio_item_names[i]);
		for (unsigned p = 0; p < opt->npolicies; p++) {
			double v = res_mb_per_cpusec(&all[p * TIO_ITEM_COUNT + i]);
			fprintf(o, " %8.2fx |", b > 0 ? v / b : 0.0);
		}
		fprintf(o, "\n");
	}
}

static void print_json(FILE *o, const struct tio_options *opt, const struct tio_result *r,
		       const struct tio_result *base)
{
	double wall = r->wall_s > 0 ? r->wall_s : 1e-9;
	double b = base ? res_mb_per_cpusec(base) : 0.0;
	fprintf(o, "{\"bench\":\"tiotest\",\"policy\":\"%s\",\"item\":\"%s\",\"threads\":%u,"
		   "\"page_size\":%" PRIu32 ",\"frames\":%" PRIu32 ",\"buckets\":%" PRIu32 ","
		   "\"latency_us\":%" PRIu32 ",\"pages\":%" PRIu64 ",\"mb\":%.6f,"
		   "\"time_s\":%.6f,\"rate_mb_s\":%.6f,\"usr_cpu_pct\":%.3f,\"sys_cpu_pct\":%.3f,"
		   "\"usr_s\":%.6f,\"sys_s\":%.6f,\"mb_per_cpusec\":%.6f,",
		fwait_policy_name(r->policy), tio_item_names[r->item], r->threads,
		opt->page_size, r->frames, r->nbuckets, opt->latency_us, r->pages, r->mb,
		r->wall_s, r->mb / wall, r->usr_s / wall * 100.0, r->sys_s / wall * 100.0,
		r->usr_s, r->sys_s, res_mb_per_cpusec(r));
	if (base != NULL && b > 0)
		fprintf(o, "\"mb_per_cpusec_vs_%s\":%.6f,", fwait_policy_name(base->policy),
			res_mb_per_cpusec(r) / b);
	fprintf(o, "\"vol_ctxsw\":%" PRIu64 ",\"invol_ctxsw\":%" PRIu64 ",\"ctxsw_per_mb\":%.3f,"
		   "\"fwait_waits\":%" PRIu64 ",\"fwait_wakeups\":%" PRIu64
		   ",\"fwait_spurious_wakeups\":%" PRIu64 ",\"fwait_foreign_skipped\":%" PRIu64
		   ",\"fwait_max_bucket_depth\":%" PRIu32 ",\"spurious_per_mb\":%.3f,"
		   "\"io_waits\":%" PRIu64 ",\"writeback_waits\":%" PRIu64 ",\"latch_waits\":%" PRIu64
		   ",\"reads\":%" PRIu64 ",\"writes\":%" PRIu64 ",\"evictions\":%" PRIu64
		   ",\"loadavg_1m\":%.2f}\n",
		r->vcsw, r->ivcsw, per_mb(r, (double)(r->vcsw + r->ivcsw)), r->fwait_waits,
		r->fwait_wakeups, r->fwait_spurious, r->fwait_foreign, r->max_bucket_depth,
		per_mb(r, (double)r->fwait_spurious), r->io_waits, r->writeback_waits,
		r->latch_waits, r->reads, r->writes, r->evictions, r->loadavg);
}

/* The claim of the 2004 mail, checked on this run's Random Read: filtered
 * wake-one has at least 2.5x broadcast's MB per CPU-second and no spurious
 * wakeups.  Printed only when both policies ran. */
#define TIO_CLAIM_RATIO 2.5

static void print_claim(FILE *o, const struct tio_options *opt, const struct tio_result *all)
{
	int bc = -1, w1 = -1;
	for (unsigned p = 0; p < opt->npolicies; p++) {
		if (opt->policies[p] == FWAIT_BROADCAST)
			bc = (int)p;
		if (opt->policies[p] == FWAIT_WAKE_ONE)
			w1 = (int)p;
	}
	if (bc < 0 || w1 < 0)
		return;
	const struct tio_result *b = &all[bc * TIO_ITEM_COUNT + TIO_RANDOM_READ];
	const struct tio_result *w = &all[w1 * TIO_ITEM_COUNT + TIO_RANDOM_READ];
	double ratio = res_mb_per_cpusec(b) > 0 ? res_mb_per_cpusec(w) / res_mb_per_cpusec(b) : 0;
	bool met = ratio >= TIO_CLAIM_RATIO && w->fwait_spurious == 0;
	fprintf(o, "\nClaim (Random Read): wake-one %.3f MB/cpusec = %.2fx broadcast's %.3f "
		   "(target >= %.1fx), %" PRIu64 " spurious wakeups (target 0; broadcast %" PRIu64
		   "): %s\n", res_mb_per_cpusec(w), ratio, res_mb_per_cpusec(b), TIO_CLAIM_RATIO,
		w->fwait_spurious, b->fwait_spurious, met ? "MET" : "NOT MET");
}

/* ---- Plot -------------------------------------------------------------------- */

/* Data file for plot.gp: one block per policy (gnuplot `index`), one row per
 * thread count; columns documented in the header and in plot.gp. */
static int write_plot_data(const char *path, const struct tio_options *opt,
			   const struct tio_result *all)
{
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		fprintf(stderr, "bpbench tiotest: cannot write %s: %s\n", path, strerror(errno));
		return -errno;
	}
	fprintf(f, "# bpbench tiotest --plot: page %" PRIu32 " B, %u buckets, latency %" PRIu32
		   " us, %.3g MB/thread\n", opt->page_size, opt->buckets, opt->latency_us,
		opt->mb_per_thread);
	fprintf(f, "# columns: 1 threads | 2-5 cpu ms/MB (W RW R RR) | 6-9 spurious/MB |"
		   " 10-13 ctxsw/MB | 14-17 MB/cpusec\n");
	for (unsigned p = 0; p < opt->npolicies; p++) {
		fprintf(f, "# policy %s\n", fwait_policy_name(opt->policies[p]));
		for (unsigned t = 0; t < opt->nplot_threads; t++) {
			const struct tio_result *r =
				&all[(t * opt->npolicies + p) * TIO_ITEM_COUNT];
			fprintf(f, "%u", r[0].threads);
			for (int i = 0; i < TIO_ITEM_COUNT; i++)
				fprintf(f, " %.6f", per_mb(&r[i], res_cpu(&r[i]) * 1000.0));
			for (int i = 0; i < TIO_ITEM_COUNT; i++)
				fprintf(f, " %.3f", per_mb(&r[i], (double)r[i].fwait_spurious));
			for (int i = 0; i < TIO_ITEM_COUNT; i++)
				fprintf(f, " %.3f", per_mb(&r[i], (double)(r[i].vcsw + r[i].ivcsw)));
			for (int i = 0; i < TIO_ITEM_COUNT; i++)
				fprintf(f, " %.4f", res_mb_per_cpusec(&r[i]));
			fprintf(f, "\n");
		}
		fprintf(f, "\n\n");
	}
	if (fclose(f) != 0) {
		fprintf(stderr, "bpbench tiotest: writing %s: %s\n", path, strerror(errno));
		return -EIO;
	}
	return 0;
}

/* The gnuplot script: --plot-script, else $BPBENCH_PLOT_GP, else plot.gp
 * next to the executable, else tools/bpbench/plot.gp under the working
 * directory (the repository root). */
static const char *find_plot_script(const struct tio_options *opt, char *buf, size_t len)
{
	if (opt->plot_script != NULL)
		return opt->plot_script;
	const char *env = getenv("BPBENCH_PLOT_GP");
	if (env != NULL && env[0] != '\0')
		return env;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash != NULL) {
			*slash = '\0';
			int n2 = snprintf(buf, len, "%s/plot.gp", exe);
			if (n2 > 0 && (size_t)n2 < len && access(buf, R_OK) == 0)
				return buf;
		}
	}
	if (access("tools/bpbench/plot.gp", R_OK) == 0)
		return "tools/bpbench/plot.gp";
	return NULL;
}

/* Append s to a gnuplot single-quoted string ('' stands for '). */
static int gp_quote(char *dst, size_t len, const char *s)
{
	size_t o = 0;
	for (; *s; s++) {
		if (o + 3 >= len)
			return -ENAMETOOLONG;
		if (*s == '\'')
			dst[o++] = '\'';
		dst[o++] = *s;
	}
	dst[o] = '\0';
	return 0;
}

static int run_gnuplot(const struct tio_options *opt, const char *data, const char *script)
{
	char qdata[PATH_MAX * 2], qout[PATH_MAX * 2], pols[128] = "", expr[PATH_MAX * 5];
	if (gp_quote(qdata, sizeof(qdata), data) || gp_quote(qout, sizeof(qout), opt->plot_out))
		return -ENAMETOOLONG;
	for (unsigned p = 0; p < opt->npolicies; p++) {
		strcat(pols, p ? " " : "");
		strcat(pols, fwait_policy_name(opt->policies[p]));
	}
	snprintf(expr, sizeof(expr),
		 "datafile='%s'; outfile='%s'; policies='%s'; "
		 "subtitle='%u-byte pages, %u fwait buckets, %" PRIu32 " us latency, %.3g MB/thread'",
		 qdata, qout, pols, opt->page_size, opt->buckets, opt->latency_us,
		 opt->mb_per_thread);
	char *argv[] = { "gnuplot", "-e", expr, (char *)script, NULL };
	pid_t pid;
	int e = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);
	if (e != 0) {
		fprintf(stderr, "bpbench tiotest: cannot run gnuplot: %s\n", strerror(e));
		return -e;
	}
	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bpbench tiotest: gnuplot failed (status %d); data in %s\n",
			status, data);
		return -EIO;
	}
	return 0;
}

/* ---- Option parsing ------------------------------------------------------------ */

static void usage(FILE *o)
{
	fprintf(o,
		"usage: bpbench tiotest [options]\n"
		"  T threads write, random-write, read and random-read their own regions of one\n"
		"  file through the buffer pool, once per fwait policy, and print tiotest tables,\n"
		"  MB per CPU-second, spurious wakeups and context switches per MB, and ratios.\n"
		"  -t, --threads N       worker threads (default %u)\n"
		"      --mb X            MB (2^20 bytes) per thread for the sequential phases\n"
		"                        (default %.2g; decimals allowed)\n"
		"      --random-ops N    pages per thread in the random phases\n"
		"                        (default: a quarter of the pages per thread)\n"
		"      --page-size N     page size in bytes, power of two in [%u, %u] (default %u)\n"
		"      --frames N        pool frames (default %u x threads, at least %u)\n"
		"      --buckets N       fwait table buckets (default %u)\n"
		"      --latency-us N    simulated device latency per I/O (default %u; 0 = none)\n"
		"      --io-threads N    pool I/O threads (default: the pool's, %u)\n"
		"      --readahead N     read-ahead pages (default: the pool's, %u; 0 = off)\n"
		"      --policies LIST   comma-separated: broadcast,wake-all,wake-one,futex (default all)\n"
		"      --seed N          seed of the random phases (default %u)\n"
		"      --fault-read-ppm N\n"
		"                        make N in a million page reads fail with EIO (shows\n"
		"                        that errors are caught: the run then exits 1)\n"
		"      --file PATH       data file (default: a temporary file in $TMPDIR or /tmp)\n"
		"      --keep-file       do not delete the data file at the end\n"
		"      --json            print JSON lines (one object per policy and item)\n"
		"      --plot OUT.png    run at several thread counts and draw CPU and spurious\n"
		"                        wakeups per MB against threads (data in OUT.png.dat)\n"
		"      --plot-threads L  comma-separated thread counts (default 32,64,128,256,512)\n"
		"      --plot-script P   gnuplot script (default: tools/bpbench/plot.gp)\n"
		"  -h, --help            this text\n"
		"Exit status: 0 ok, 1 a data check or pool call failed, 2 bad arguments.\n",
		TIO_DEFAULT_THREADS, TIO_DEFAULT_MB, BP_PAGE_SIZE_MIN, BP_PAGE_SIZE_MAX,
		BP_PAGE_SIZE_DEFAULT, TIO_DEFAULT_FRAMES_PER_THREAD, TIO_MIN_DEFAULT_FRAMES,
		TIO_DEFAULT_BUCKETS, TIO_DEFAULT_LATENCY_US, BP_IO_THREADS_DEFAULT,
		BP_READAHEAD_DEFAULT, TIO_DEFAULT_SEED);
}

static int parse_policies(const char *s, struct tio_options *o)
{
	char buf[256];
	if (strlen(s) >= sizeof(buf))
		goto bad;
	strcpy(buf, s);
	o->npolicies = 0;
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		enum fwait_policy p;
		if (fwait_policy_parse(tok, &p) != 0) {
			fprintf(stderr, "bpbench tiotest: unknown policy '%s' (broadcast, wake-all, "
				"wake-one, futex)\n", tok);
			return -EINVAL;
		}
		for (unsigned i = 0; i < o->npolicies; i++) {
			if (o->policies[i] == p) {
				fprintf(stderr, "bpbench tiotest: policy '%s' given twice\n", tok);
				return -EINVAL;
			}
		}
		o->policies[o->npolicies++] = p;
	}
	if (o->npolicies > 0)
		return 0;
bad:
	fprintf(stderr, "bpbench tiotest: --policies wants a comma-separated list, not '%s'\n", s);
	return -EINVAL;
}

static int parse_thread_list(const char *s, struct tio_options *o)
{
	char buf[256];
	if (strlen(s) >= sizeof(buf))
		goto bad;
	strcpy(buf, s);
	o->nplot_threads = 0;
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nplot_threads == TIO_MAX_PLOT_POINTS) {
			fprintf(stderr, "bpbench tiotest: at most %u thread counts\n",
				TIO_MAX_PLOT_POINTS);
			return -EINVAL;
		}
		if (tool_parse_unsigned("bpbench tiotest", "--plot-threads", tok, 1, TIO_MAX_THREADS,
				   &o->plot_threads[o->nplot_threads]) != 0)
			return -EINVAL;
		o->nplot_threads++;
	}
	if (o->nplot_threads > 0)
		return 0;
bad:
	fprintf(stderr, "bpbench tiotest: --plot-threads wants a comma-separated list, not '%s'\n", s);
	return -EINVAL;
}

enum {
	OPT_MB = 256, OPT_RANDOM_OPS, OPT_PAGE_SIZE, OPT_FRAMES, OPT_BUCKETS, OPT_LATENCY,
	OPT_IO_THREADS, OPT_READAHEAD, OPT_POLICIES, OPT_SEED, OPT_FILE, OPT_KEEP, OPT_JSON,
	OPT_PLOT, OPT_PLOT_THREADS, OPT_PLOT_SCRIPT, OPT_FAULT_READ,
};

/* 0, 1 (help printed) or -EINVAL (message printed). */
static int parse_options(int argc, char **argv, struct tio_options *o)
{
	static const struct option longopts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "mb", required_argument, NULL, OPT_MB },
		{ "random-ops", required_argument, NULL, OPT_RANDOM_OPS },
		{ "page-size", required_argument, NULL, OPT_PAGE_SIZE },
		{ "frames", required_argument, NULL, OPT_FRAMES },
		{ "buckets", required_argument, NULL, OPT_BUCKETS },
		{ "latency-us", required_argument, NULL, OPT_LATENCY },
		{ "io-threads", required_argument, NULL, OPT_IO_THREADS },
		{ "readahead", required_argument, NULL, OPT_READAHEAD },
		{ "policies", required_argument, NULL, OPT_POLICIES },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "fault-read-ppm", required_argument, NULL, OPT_FAULT_READ },
		{ "file", required_argument, NULL, OPT_FILE },
		{ "keep-file", no_argument, NULL, OPT_KEEP },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "plot", required_argument, NULL, OPT_PLOT },
		{ "plot-threads", required_argument, NULL, OPT_PLOT_THREADS },
		{ "plot-script", required_argument, NULL, OPT_PLOT_SCRIPT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	*o = (struct tio_options){
		.threads = TIO_DEFAULT_THREADS,
		.mb_per_thread = TIO_DEFAULT_MB,
		.page_size = BP_PAGE_SIZE_DEFAULT,
		.buckets = TIO_DEFAULT_BUCKETS,
		.latency_us = TIO_DEFAULT_LATENCY_US,
		.readahead = -1,
		.seed = TIO_DEFAULT_SEED,
		.policies = { FWAIT_BROADCAST, FWAIT_WAKE_ALL, FWAIT_WAKE_ONE, FWAIT_FUTEX },
		.npolicies = 4,
		.plot_threads = { 32, 64, 128, 256, 512 },
		.nplot_threads = 5,
	};
	optind = 1;
	opterr = 0;
	int c;
	uint64_t v;
	unsigned u;
	while ((c = getopt_long(argc, argv, ":t:h", longopts, NULL)) != -1) {
		int rc = 0;
		switch (c) {
		case 't':
			rc = tool_parse_unsigned("bpbench tiotest", "--threads", optarg, 1, TIO_MAX_THREADS, &o->threads);
			break;
		case OPT_MB: {
			char *end;
			errno = 0;
			double d = strtod(optarg, &end);
			if (errno != 0 || *end != '\0' || end == optarg || !(d > 0) || d > 1e6) {
				fprintf(stderr, "bpbench tiotest: --mb wants a number in (0, 1e6], "
					"not '%s'\n", optarg);
				rc = -EINVAL;
			}
			o->mb_per_thread = d;
			break;
		}
		case OPT_RANDOM_OPS:
			rc = tool_parse_u64("bpbench tiotest", "--random-ops", optarg, 1, UINT64_C(1) << 40, &o->random_ops);
			break;
		case OPT_PAGE_SIZE:
			rc = tool_parse_u64("bpbench tiotest", "--page-size", optarg, BP_PAGE_SIZE_MIN, BP_PAGE_SIZE_MAX, &v);
			if (rc == 0 && (v & (v - 1)) != 0) {
				fprintf(stderr, "bpbench tiotest: --page-size must be a power of two\n");
				rc = -EINVAL;
			}
			o->page_size = (uint32_t)v;
			break;
		case OPT_FRAMES:
			rc = tool_parse_u64("bpbench tiotest", "--frames", optarg, 2, UINT32_MAX, &v);
			o->frames = (uint32_t)v;
			break;
		case OPT_BUCKETS:
			rc = tool_parse_unsigned("bpbench tiotest", "--buckets", optarg, 1, 1u << 24, &o->buckets);
			break;
		case OPT_LATENCY:
			rc = tool_parse_u64("bpbench tiotest", "--latency-us", optarg, 0, 10 * 1000 * 1000, &v);
			o->latency_us = (uint32_t)v;
			break;
		case OPT_IO_THREADS:
			rc = tool_parse_unsigned("bpbench tiotest", "--io-threads", optarg, 1, 64, &o->io_threads);
			break;
		case OPT_READAHEAD:
			rc = tool_parse_unsigned("bpbench tiotest", "--readahead", optarg, 0, 1u << 16, &u);
			o->readahead = (int)u;
			break;
		case OPT_POLICIES:
			rc = parse_policies(optarg, o);
			break;
		case OPT_SEED:
			rc = tool_parse_u64("bpbench tiotest", "--seed", optarg, 0, UINT64_MAX, &o->seed);
			break;
		case OPT_FAULT_READ:
			rc = tool_parse_u64("bpbench tiotest", "--fault-read-ppm", optarg, 0, 1000000, &v);
			o->fault_read_ppm = (uint32_t)v;
			break;
		case OPT_FILE:
			o->file = optarg;
			break;
		case OPT_KEEP:
			o->keep_file = true;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_PLOT:
			o->plot_out = optarg;
			break;
		case OPT_PLOT_THREADS:
			rc = parse_thread_list(optarg, o);
			break;
		case OPT_PLOT_SCRIPT:
			o->plot_script = optarg;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case ':':
			fprintf(stderr, "bpbench tiotest: %s needs an argument\n", argv[optind - 1]);
			rc = -EINVAL;
			break;
		default:
			fprintf(stderr, "bpbench tiotest: unknown option '%s' (try --help)\n",
				argv[optind - 1]);
			rc = -EINVAL;
			break;
		}
		if (rc != 0)
			return rc;
	}
	if (optind < argc) {
		fprintf(stderr, "bpbench tiotest: unexpected argument '%s' (try --help)\n",
			argv[optind]);
		return -EINVAL;
	}
	/* The file must hold threads x pages per thread pages. */
	double pages = (double)o->threads * (double)pages_per_thread_for(o);
	if (o->plot_out != NULL)
		for (unsigned i = 0; i < o->nplot_threads; i++)
			if ((double)o->plot_threads[i] * (double)pages_per_thread_for(o) > pages)
				pages = (double)o->plot_threads[i] * (double)pages_per_thread_for(o);
	if (pages * (double)o->page_size > 1e15) {
		fprintf(stderr, "bpbench tiotest: threads x --mb is too large\n");
		return -EINVAL;
	}
	return 0;
}

/* ---- Main -------------------------------------------------------------------- */

/* Runs every policy at `threads`; results to out[p * TIO_ITEM_COUNT + item].
 * Returns 0, 1 (some check failed) or -errno. */
static int run_all_policies(const struct tio_options *opt, const char *path, unsigned threads,
			    struct tio_result *out)
{
	int worst = 0;
	for (unsigned p = 0; p < opt->npolicies; p++) {
		fprintf(stderr, "bpbench tiotest: %u threads, %s ...\n", threads,
			fwait_policy_name(opt->policies[p]));
		int rc = run_policy(opt, path, opt->policies[p], threads, &out[p * TIO_ITEM_COUNT]);
		if (rc < 0)
			return rc;
		if (rc > 0)
			worst = 1;
	}
	return worst;
}

static void emit_json_all(const struct tio_options *opt, const struct tio_result *all)
{
	unsigned base = ratio_base(opt);
	for (unsigned p = 0; p < opt->npolicies; p++)
		for (int i = 0; i < TIO_ITEM_COUNT; i++)
			print_json(stdout, opt, &all[p * TIO_ITEM_COUNT + i],
				   &all[base * TIO_ITEM_COUNT + i]);
}

static int tiotest_table(const struct tio_options *opt, const char *path)
{
	struct tio_result *all = calloc((size_t)opt->npolicies * TIO_ITEM_COUNT, sizeof(*all));
	if (all == NULL)
		return -ENOMEM;
	int rc = run_all_policies(opt, path, opt->threads, all);
	if (rc >= 0) {
		if (opt->json) {
			emit_json_all(opt, all);
		} else {
			printf("bpbench tiotest: %u threads, %" PRIu64 " pages x %" PRIu32
			       " B per thread (%" PRIu64 " random), %" PRIu32 " frames, %" PRIu32 " buckets,"
			       " %" PRIu32 " us latency\n", opt->threads, pages_per_thread_for(opt),
			       opt->page_size, random_ops_for(opt), frames_for(opt, opt->threads),
			       all[0].nbuckets, opt->latency_us);
			printf("(%ld CPUs online; 1-minute load average at the start of each policy's "
			       "Write:", sysconf(_SC_NPROCESSORS_ONLN));
			for (unsigned p = 0; p < opt->npolicies; p++)
				printf(" %s %.1f", fwait_policy_name(opt->policies[p]),
				       all[p * TIO_ITEM_COUNT].loadavg);
			printf(")\n\n");
			for (unsigned p = 0; p < opt->npolicies; p++) {
				print_tiotest_table(stdout, &all[p * TIO_ITEM_COUNT], opt->threads,
						    opt->policies[p]);
				printf("\n");
			}
			print_cost_table(stdout, all, opt->npolicies);
			print_ratio_table(stdout, opt, all);
			print_claim(stdout, opt, all);
		}
	}
	free(all);
	return rc;
}

static int tiotest_plot(const struct tio_options *opt, const char *path)
{
	char script_buf[PATH_MAX];
	const char *script = find_plot_script(opt, script_buf, sizeof(script_buf));
	if (script == NULL) {
		fprintf(stderr, "bpbench tiotest: cannot find plot.gp; give --plot-script "
			"(it is tools/bpbench/plot.gp in the source tree)\n");
		return -ENOENT;
	}
	size_t per = (size_t)opt->npolicies * TIO_ITEM_COUNT;
	struct tio_result *all = calloc(per * opt->nplot_threads, sizeof(*all));
	if (all == NULL)
		return -ENOMEM;
	int worst = 0;
	for (unsigned t = 0; t < opt->nplot_threads; t++) {
		int rc = run_all_policies(opt, path, opt->plot_threads[t], &all[t * per]);
		if (rc < 0) {
			free(all);
			return rc;
		}
		if (rc > 0)
			worst = 1;
		if (opt->json)
			emit_json_all(opt, &all[t * per]);
	}
	char data[PATH_MAX];
	int rc = 0;
	if ((size_t)snprintf(data, sizeof(data), "%s.dat", opt->plot_out) >= sizeof(data))
		rc = -ENAMETOOLONG;
	if (rc == 0)
		rc = write_plot_data(data, opt, all);
	if (rc == 0)
		rc = run_gnuplot(opt, data, script);
	if (rc == 0 && !opt->json) {
		printf("bpbench tiotest: wrote %s (data %s, script %s)\n", opt->plot_out, data,
		       script);
		printf("%-9s %7s %12s %12s %14s %14s\n", "policy", "threads", "RR cpu ms/MB",
		       "R cpu ms/MB", "RR spurious/MB", "R spurious/MB");
		for (unsigned p = 0; p < opt->npolicies; p++) {
			for (unsigned t = 0; t < opt->nplot_threads; t++) {
				const struct tio_result *r = &all[t * per + p * TIO_ITEM_COUNT];
				const struct tio_result *rr = &r[TIO_RANDOM_READ], *sr = &r[TIO_READ];
				printf("%-9s %7u %12.3f %12.3f %14.1f %14.1f\n",
				       fwait_policy_name(opt->policies[p]), r->threads,
				       per_mb(rr, res_cpu(rr) * 1000), per_mb(sr, res_cpu(sr) * 1000),
				       per_mb(rr, (double)rr->fwait_spurious),
				       per_mb(sr, (double)sr->fwait_spurious));
			}
		}
	}
	free(all);
	return rc < 0 ? rc : worst;
}

int bpbench_tiotest_main(int argc, char **argv)
{
	struct tio_options opt;
	int rc = parse_options(argc, argv, &opt);
	if (rc > 0)
		return 0;
	if (rc < 0)
		return 2;

	char tmp_path[PATH_MAX];
	const char *path = opt.file;
	if (path == NULL) {
		const char *dir = getenv("TMPDIR");
		if (dir == NULL || dir[0] == '\0')
			dir = "/tmp";
		snprintf(tmp_path, sizeof(tmp_path), "%s/bpbench-tiotest-XXXXXX", dir);
		int fd = mkstemp(tmp_path);
		if (fd < 0) {
			fprintf(stderr, "bpbench tiotest: cannot create a file in %s: %s "
				"(use --file)\n", dir, strerror(errno));
			return 1;
		}
		close(fd);
		path = tmp_path;
	}

	rc = opt.plot_out != NULL ? tiotest_plot(&opt, path) : tiotest_table(&opt, path);
	fflush(stdout);

	if (!opt.keep_file && unlink(path) != 0 && errno != ENOENT)
		fprintf(stderr, "bpbench tiotest: cannot remove %s: %s\n", path, strerror(errno));
	if (rc < 0) {
		fprintf(stderr, "bpbench tiotest: failed: %s\n", strerror(-rc));
		return 1;
	}
	if (rc > 0) {
		fprintf(stderr, "bpbench tiotest: FAILED: data checks or pool calls failed\n");
		return 1;
	}
	return 0;
}
