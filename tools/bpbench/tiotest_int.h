/* SPDX-License-Identifier: MIT */
/*
 * tiotest_int.h - the internal interface of bpbench tiotest, shared by its
 * files.
 *
 * Design note
 * -----------
 * Layer: bpbench, directly on bufpool (no store: every page goes through
 * bp_get/bp_latch), with util for the clock, the PRNG, the emitter and the
 * option parser.  The files, one job each:
 *   tiotest.c         bpbench_tiotest_main: the data file, table mode;
 *   tiotest_opts.c    options, usage, and the sizes derived from them;
 *   tiotest_run.c     the workload: a pool, its workers, the four phases
 *                     under one policy, measured;
 *   tiotest_report.c  the tiotest tables, the cost and ratio tables, the
 *                     claim check, the JSON lines, the plot summary;
 *   tiotest_plot.c    --plot: the runs at several thread counts, the data
 *                     file and gnuplot.
 * Output: human tables through a table emitter on stdout, JSON lines (one
 * object per policy and item, --json) through a compact emitter on stdout;
 * progress and diagnostics on stderr.
 */
#ifndef TOOLS_BPBENCH_TIOTEST_INT_H
#define TOOLS_BPBENCH_TIOTEST_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "bufpool/bufpool.h"
#include "fwait/fwait.h"
#include "util/emitter.h"

#define TIO_PROG "bpbench tiotest"

/* ---- Items (phases) ------------------------------------------------------- */

enum tio_item {
	TIO_WRITE = 0,
	TIO_RANDOM_WRITE,
	TIO_READ,
	TIO_RANDOM_READ,
	TIO_ITEM_COUNT
};

extern const char *const tio_item_names[TIO_ITEM_COUNT];

static inline bool tio_item_is_write(enum tio_item it)
{
	return it == TIO_WRITE || it == TIO_RANDOM_WRITE;
}

static inline bool tio_item_is_random(enum tio_item it)
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
	unsigned io_engine;        /* bp_config.io_engine (0 = auto) */
	unsigned read_path;        /* bp_config.read_path (0 = auto) */
	bool direct;               /* BP_OPEN_DIRECT */
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

/* tiotest_opts.c: 0, 1 (help printed) or -EINVAL (message printed). */
int tio_parse_options(int argc, char **argv, struct tio_options *o);
uint32_t tio_frames_for(const struct tio_options *opt, unsigned threads);
uint64_t tio_pages_per_thread_for(const struct tio_options *opt);
uint64_t tio_random_ops_for(const struct tio_options *opt);

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

static inline double tio_res_cpu(const struct tio_result *r)
{
	return r->usr_s + r->sys_s;
}

static inline double tio_mb_per_cpusec(const struct tio_result *r)
{
	return tio_res_cpu(r) > 0 ? r->mb / tio_res_cpu(r) : 0.0;
}

static inline double tio_per_mb(const struct tio_result *r, double v)
{
	return r->mb > 0 ? v / r->mb : 0.0;
}

/* tiotest.c: empty the file at path and size it to bytes (a hole); 0 or
 * -errno (reported). */
int tio_presize_file(const char *path, uint64_t bytes);

/* tiotest_run.c: every policy at `threads`; results to
 * out[p * TIO_ITEM_COUNT + item].  0, 1 (some check failed) or -errno. */
int tio_run_all_policies(const struct tio_options *opt, const char *path, unsigned threads,
			 struct tio_result *out);

/* tiotest_report.c: all[p * TIO_ITEM_COUNT + item] for opt->threads. */
void tio_report_tables(struct emitter *e, const struct tio_options *opt,
		       const struct tio_result *all);
/* One JSON line per policy and item of all (one thread count). */
void tio_report_json(struct emitter *e, const struct tio_options *opt,
		     const struct tio_result *all);
/* --plot's summary: all[(t * npolicies + p) * TIO_ITEM_COUNT + item]. */
void tio_report_plot_summary(struct emitter *e, const struct tio_options *opt,
			     const struct tio_result *all);

/* tiotest_plot.c: --plot; 0, 1 (some check failed) or -errno. */
int tio_plot(const struct tio_options *opt, const char *path, struct emitter *table,
	     struct emitter *json);

#endif
