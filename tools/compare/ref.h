/*
 * ref.h - the internal interface of ycsb-ref, bpbench ycsb's workloads on
 * the reference engines (WiredTiger, RocksDB, LevelDB, LMDB) of issue 33.
 *
 * Design note
 * -----------
 * Layer: a tool beside bpbench, on the engines' C APIs, bpbench's key
 * generators (tools/bpbench/gen.c: rng_seeded, zipf, key_choose, key_of,
 * linked as the same source) and cpu.h, and util's clock, histogram,
 * emitter and option parser.  It links neither bufpool nor the kv store:
 * the point is to run exactly bpbench ycsb's operation stream on
 * something else.  The files, one job each:
 *   ref_main.c    main: options, the directory, open, load, run, report,
 *                 close, remove, in that order;
 *   ref_opts.c    the workloads (bpbench ycsb's mix table), the engines
 *                 compiled in, the options and the usage text;
 *   ref_run.c     the value codec, the operations, the workers and the
 *                 phase clock;
 *   ref_report.c  the configuration, load and run reports, human and JSON
 *                 (bpbench ycsb's lines and key names);
 *   eng_*.c       one engine each behind struct ref_engine (ref_engine.h).
 *
 * What is the same as bpbench ycsb (tools/bpbench/ycsb_run.c, ycsb.c):
 * worker i's generator is rng_seeded(seed, i); one zipf_init(records,
 * theta) copied to every worker; the load claims record numbers 0..records-1
 * from a shared counter with the same threads; the run picks each op by
 * one rng_double against the mix, then its record by key_choose(dist,
 * zipf, rng, records); the key is key_of(recno), a uint64_t (the kv
 * store's key type); the value is ycsb_run.c's codec (key, version,
 * pattern) of value_size bytes; --ops splits as ops/threads plus one for
 * the first ops%threads workers; the wall clock starts before the first
 * pthread_create; CPU is getrusage(RUSAGE_SELF) around the run phase.
 * What differs: an update is a blind overwrite (the engines' put; the kv
 * store rewrites the value in place under the leaf latch, reading the old
 * version); a read checks the value decodes for its key, not the version
 * order bpbench checks (a blind write's version is the writer's own
 * count).  Workloads D and E (inserts after the load, scans) are refused.
 *
 * Threads and shared state (struct ref_run): the workers (struct
 * ref_worker, each touched only by its thread until joined, except
 * `done`, read relaxed by the monitor) and the main thread, the monitor:
 * it ends a timed run and prints progress.  Shared: insert_next (the load's
 * next record, fetch_add), stop (relaxed: only a signal to end, it
 * publishes nothing), running + lock + done_cv (the workers left).
 */
#ifndef TOOLS_COMPARE_REF_H
#define TOOLS_COMPARE_REF_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cpu.h"
#include "gen.h"
#include "ref_engine.h"
#include "util/emitter.h"
#include "util/hist.h"

#define REF_PROG "ycsb-ref"
/* bpbench ycsb's --value-size range (KV_VALUE_SIZE_MAX of tools/kv). */
#define REF_VALUE_SIZE_MIN 16u
#define REF_VALUE_SIZE_MAX 1024u

/* bpbench ycsb's operations, in its order (ycsb_int.h): the mix table's
 * columns and the latency rows. */
enum ref_op { OP_READ, OP_UPDATE, OP_INSERT, OP_SCAN, OP_RMW, OP_COUNT };
extern const char *const ref_op_names[OP_COUNT];
extern const char *const ref_dist_names[3]; /* by enum key_dist */

struct ref_mix {
	char name;
	double p[OP_COUNT];
	enum key_dist dist;
};

struct ref_opts {
	const struct ref_mix *mix;
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
	alignas(64) _Atomic uint64_t done; /* ops finished; relaxed, read by the monitor */
	struct ref_run *run;
	void *session;        /* the engine's per-thread handle */
	pthread_t thread;
	uint64_t quota;       /* ops to do (op-count mode) */
	uint64_t writes;      /* this worker's writes: the versions it writes */
	struct rng rng;
	struct zipf zipf;
	int rc;
	char err[200];
	struct util_hist hist[OP_COUNT];
};

enum ref_phase { PHASE_LOAD, PHASE_RUN };

struct ref_run {
	struct ref_opts o;
	void *db;
	enum ref_phase phase;
	_Atomic uint64_t insert_next;
	_Atomic bool stop;
	pthread_mutex_t lock;
	pthread_cond_t done_cv; /* running reached 0 */
	unsigned running;       /* guarded by lock */
	struct ref_worker *w;
	struct emitter out;     /* the human report: stdout, or stderr with --json */
	struct emitter json;    /* JSON lines on stdout (--json) */
};

/* ref_opts.c: 0, or -EINVAL with a message on stderr (--help exits 0). */
int ref_parse_opts(int argc, char **argv, struct ref_opts *o);

/* ref_run.c */
/* Allocations, the lock, the workers' generators and sessions; 0 or an
 * error (reported).  ref_run_fini undoes what ref_run_init did. */
int ref_run_init(struct ref_run *R);
void ref_run_fini(struct ref_run *R);
/* Start the workers for a phase and watch them until they finish: 0 or
 * the first worker's error (reported on stderr). */
int ref_run_phase(struct ref_run *R, enum ref_phase phase, double *seconds);
uint64_t ref_ops_done(const struct ref_run *R);

/* ref_report.c */
void ref_report_config(struct ref_run *R, const char *dir);
void ref_report_load(struct ref_run *R, double secs);
void ref_report_run(struct ref_run *R, double secs, struct cpu_usage u0, struct cpu_usage u1);

#endif
