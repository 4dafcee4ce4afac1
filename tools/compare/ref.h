/* SPDX-License-Identifier: MIT */
/*
 * ref.h - the internal interface of ycsb-ref, bpbench ycsb's workloads on
 * the reference engines (WiredTiger, RocksDB, LevelDB, LMDB) of issue 33.
 *
 * Design note
 * -----------
 * Layer: a tool beside bpbench, on the engines' C APIs, bpbench's
 * ycsb_common (tools/bpbench: gen.c's generators, ycsb_stream.c's mix
 * table, op choice and value codec, ycsb_crew.c's workers and phase clock,
 * ycsb_emit.c's report lines: the library bpbench ycsb links) and cpu.h,
 * and util's histogram, emitter and option parser.  It links neither
 * bufpool nor the kv store: the point is to run exactly bpbench ycsb's
 * operation stream on something else.  The files, one job each:
 *   ref_main.c    main: options, the directory, open, load, run, report,
 *                 close, remove, in that order;
 *   ref_opts.c    the engines compiled in, the options and the usage text;
 *   ref_run.c     the operations on the engine, the sessions, the crew's
 *                 hooks;
 *   ref_report.c  the configuration, load and run reports, human and JSON
 *                 (bpbench ycsb's lines and key names);
 *   eng_*.c       one engine each behind struct ref_engine (ref_engine.h).
 *
 * What is the same as bpbench ycsb, by the same code (ycsb_crew.h says
 * what it does): the seeding, the load's claims, the op choice, the
 * quotas and the phase clock; then the record is key_choose(dist, zipf,
 * rng, records); the key is key_of(recno), a uint64_t (the kv store's key
 * type); the value is ycsb_stream.c's codec (key, version, pattern) of
 * value_size bytes; CPU is getrusage(RUSAGE_SELF) around the run phase.
 * What differs: an update is a blind overwrite (the engines' put; the kv
 * store rewrites the value in place under the leaf latch, reading the old
 * version); a read checks the value decodes for its key, not the version
 * order bpbench checks (a blind write's version is the writer's own
 * count).  Workloads D and E (inserts after the load, scans) are refused.
 *
 * Threads and shared state: the crew's (ycsb_crew.h); the workers (struct
 * ref_worker) and the main thread, the monitor, which ends a timed run
 * and prints progress.  A worker's session and writes are its own.
 */
#ifndef TOOLS_COMPARE_REF_H
#define TOOLS_COMPARE_REF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cpu.h"
#include "gen.h"
#include "ref_engine.h"
#include "util/emitter.h"
#include "util/hist.h"
#include "ycsb_crew.h"
#include "ycsb_emit.h"
#include "ycsb_stream.h"

#define REF_PROG "ycsb-ref"
/* bpbench ycsb's --value-size range (KV_VALUE_SIZE_MAX of tools/kv). */
#define REF_VALUE_SIZE_MIN 16u
#define REF_VALUE_SIZE_MAX 1024u

struct ref_opts {
	const struct ycsb_mix *mix;
	const struct ref_engine *engine;
	enum key_dist dist;
	unsigned threads;
	uint64_t records, ops, seed, cache_bytes;
	double duration_s, theta;
	uint32_t value_size, page_size;
	const char *dir;         /* --dir, or NULL: a new one under /tmp */
	const char *engine_config; /* --engine-config: appended to the engine's */
	bool json, quiet;
};

struct ref_run;
struct ref_worker {
	struct ycsb_hand h;   /* first: the crew's part (ycsb_crew.h) */
	struct ref_run *run;
	void *session;        /* the engine's per-thread handle */
	uint64_t writes;      /* this worker's writes: the versions it writes */
};

enum ref_phase { PHASE_LOAD, PHASE_RUN };

struct ref_run {
	struct ref_opts o;
	void *db;
	enum ref_phase phase;
	struct ycsb_crew crew;  /* the workers w[] */
	struct ref_worker *w;
	struct emitter out;     /* the human report: stdout, or stderr with --json */
	struct emitter json;    /* JSON lines on stdout (--json) */
};

/* ref_opts.c: 0, or -EINVAL with a message on stderr (--help exits 0). */
int ref_parse_opts(int argc, char **argv, struct ref_opts *o);

/* ref_run.c */
/* Allocations, the crew, the workers' sessions; 0 or an error (reported).
 * ref_run_fini undoes what ref_run_init did. */
int ref_run_init(struct ref_run *R);
void ref_run_fini(struct ref_run *R);
/* Start the workers for a phase and watch them until they finish: 0 or
 * the first worker's error (reported on stderr). */
int ref_run_phase(struct ref_run *R, enum ref_phase phase, double *seconds);

/* ref_report.c */
void ref_report_config(struct ref_run *R, const char *dir);
void ref_report_load(struct ref_run *R, double secs);
void ref_report_run(struct ref_run *R, double secs, struct cpu_usage u0, struct cpu_usage u1);

#endif
