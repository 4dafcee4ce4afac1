/* SPDX-License-Identifier: MIT */
/*
 * ycsb_int.h - the internal interface of bpbench ycsb, shared by its files.
 *
 * Design note
 * -----------
 * Layer: bpbench sits on the store (tools/kv) and bufpool (whose
 * bp_stats_publish feeds bpstat), and takes its clock, PRNG, option parser and
 * emitter from util.  The files, one job each:
 *   ycsb.c         bpbench_ycsb_main: open the store, load, run, report,
 *                  verify, close, in that order;
 *   ycsb_opts.c    the workloads A-F, the options and the usage text;
 *   ycsb_run.c     the operations on the store and what the monitor adds
 *                  (progress, the stats file, signals);
 *   ycsb_report.c  the configuration, load and run reports;
 *   ycsb_verify.c  --verify: every record read back, the tree checked;
 *   ycsb_floor.c   --no-pool: the run again on the tree copied to plain
 *                  memory (tools/kv/kv_mem.c), the pool's floor.
 *
 * Output: every human line goes through R->out, a table emitter on the
 * human stream (stdout, or stderr with --json); every JSON line through
 * R->json, a compact emitter on stdout, used only with --json.  Progress
 * lines go to stderr (a status line, rewritten in place on a terminal)
 * and, with --json, to R->json.  Diagnostics go to stderr.
 *
 * --durable adds to the reports, and changes nothing else in them: the
 * configuration says the store is durable, the load and the run each get
 * a "log" line (commits, fsyncs, the group-commit factor, log bytes, from
 * kv_log_stats over the phase), and the run's latency table a "commit"
 * row, the writes' latency, which includes their commit.  Without it the
 * output and the measured path are what they were.
 *
 * What bpbench ycsb shares with ycsb-ref (tools/compare) is in ycsb_common
 * (tools/bpbench/meson.build): the mix table, the op choice and the value
 * codec (ycsb_stream.h), the workers' loops and the phase clock
 * (ycsb_crew.h), the report lines both print (ycsb_emit.h).
 *
 * Threads and shared state (struct ycsb_run): see ycsb_run.c.
 */
#ifndef TOOLS_BPBENCH_YCSB_INT_H
#define TOOLS_BPBENCH_YCSB_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cpu.h"
#include "gen.h"
#include "util/hist.h"
#include "kv.h"
#include "kv_mem.h"
#include "util/emitter.h"
#include "ycsb_crew.h"
#include "ycsb_emit.h"
#include "ycsb_stream.h"

#define YCSB_PROG "bpbench ycsb"

struct ycsb_opts {
	const struct ycsb_mix *mix;
	enum key_dist dist;
	unsigned threads, scan_max;
	uint64_t records, ops, seed;
	uint64_t checkpoint_bytes;    /* --durable: kv_config's (0 = the store's) */
	unsigned files;               /* --files: stores sharing the one pool */
	double duration_s, theta;
	uint32_t frames, page_size, value_size, latency_us;
	enum fwait_policy policy;
	const char *file, *stats_file;
	bool keep, no_stats, verify, json, quiet, checksums, durable;
	bool no_pool;                 /* --no-pool: the floor after the run */
	bool direct;                  /* --direct: BP_OPEN_DIRECT */
	bool counters;                /* --counters: bp_stats_print's table too */
	unsigned io_engine;           /* --io-engine: bp_config.io_engine */
	unsigned read_path;           /* --read-path: bp_config.read_path */
};

struct ycsb_run;
struct ycsb_worker {
	struct ycsb_hand h; /* first: the crew's part (ycsb_crew.h) */
	struct ycsb_run *run;
};

/* PHASE_FLOOR: the run's reads on the copies in mem[] (--no-pool). */
enum ycsb_phase { PHASE_LOAD, PHASE_RUN, PHASE_FLOOR };

/* --files N: N stores (files) in one pool (kv_config.shared_pool); record
 * key k lives in store k % N.  kv[0] owns the pool. */
#define YCSB_MAX_FILES 16u

struct ycsb_run {
	struct ycsb_opts o;
	struct kv_store *kv[YCSB_MAX_FILES];
	struct kv_mem *mem[YCSB_MAX_FILES]; /* --no-pool: kv[i] in plain memory */
	struct bp_pool *pool;
	bool pub;                     /* the pool publishes its stats (bp_stats_publish) */
	enum ycsb_phase phase;
	_Atomic uint32_t *versions;
	uint64_t capacity;            /* records that fit in versions[] */
	_Atomic uint64_t acked;
	struct ycsb_crew crew;        /* the workers w[], insert_next, stop */
	struct ycsb_worker *w;
	FILE *human;                  /* report: stdout, or stderr with --json */
	struct emitter out;           /* table emitter on human */
	struct emitter json;          /* compact JSON lines on stdout (--json) */
	bool tty;
	/* --durable: the log's counters when a phase started and ended
	 * (ycsb_run_phase); the reports are their differences. */
	struct kv_log_stats log0, log1;
};

/* The store that holds key. */
static inline struct kv_store *ycsb_store(const struct ycsb_run *R, uint64_t key)
{
	return R->kv[key % R->o.files];
}
/* Its copy in plain memory (PHASE_FLOOR). */
static inline const struct kv_mem *ycsb_mem(const struct ycsb_run *R, uint64_t key)
{
	return R->mem[key % R->o.files];
}

/* One measured phase: operations done, wall seconds, the CPU readings
 * around it. */
struct ycsb_measure {
	uint64_t ops;
	double secs;
	struct cpu_usage u0, u1;
};

/* ycsb_opts.c: 0, or -EINVAL with a message on stderr (--help exits 0). */
int ycsb_parse_opts(int argc, char **argv, struct ycsb_opts *o);

/* ycsb_run.c */
/* Set up R->crew on R->w (its hooks are ycsb_run.c's). */
void ycsb_run_setup(struct ycsb_run *R);
/* Start the workers for a phase and watch them until they finish: 0 or
 * the first worker's error (reported on stderr). */
int ycsb_run_phase(struct ycsb_run *R, enum ycsb_phase phase, double *seconds);

/* ycsb_report.c */
/* The hit ratio, one definition for every figure bpbench ycsb prints (the
 * progress lines, the run's summary, its JSON; bpstat's is the same):
 * accesses that found their page resident, pinned hits (bp_stats.hits)
 * plus optimistic reads (optimistic_reads, which pin nothing and are not
 * in hits), over all accesses (those and misses).  YCSB_HIT_RATIO_DEF
 * says so in the human report, next to the raw counters. */
#define YCSB_HIT_RATIO_DEF "(hits + optimistic_reads) / (hits + optimistic_reads + misses)"
static inline double ycsb_hit_ratio(const struct bp_stats *s)
{
	uint64_t resident = s->hits + s->optimistic_reads, all = resident + s->misses;
	return all ? (double)resident / (double)all : 0.0;
}
/* R->json with --json, else NULL (ycsb_emit.h's j). */
static inline struct emitter *ycsb_json(struct ycsb_run *R)
{
	return R->o.json ? &R->json : NULL;
}
void ycsb_report_config(struct ycsb_run *R, const char *file);
void ycsb_report_load(struct ycsb_run *R, double secs);
void ycsb_report_run(struct ycsb_run *R, double secs, struct cpu_usage u0, struct cpu_usage u1);
/* --no-pool: the copies (pages, bytes, seconds to copy), the run on the
 * pool and the floor's, side by side, and their ratio. */
void ycsb_report_floor(struct ycsb_run *R, uint64_t pages, uint64_t bytes, double copy_s,
		       const struct ycsb_measure *pool, const struct ycsb_measure *floor);

/* ycsb_floor.c: --no-pool after the run (pool: the run's figures); 0 or
 * an error (reported), -EIO when either phase did no lookup. */
int ycsb_floor(struct ycsb_run *R, const struct ycsb_measure *pool);

/* ycsb_verify.c: 0, or -EBADMSG (or another error) after reporting why. */
int ycsb_verify(struct ycsb_run *R);

#endif
