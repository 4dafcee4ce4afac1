/* SPDX-License-Identifier: MIT */
/*
 * ycsb_emit.h - the report lines bpbench ycsb and ycsb-ref print alike:
 * the title, the load, the latency table, the CPU cost per op, and the
 * end of the report.
 *
 * Design note
 * -----------
 * Layer: ycsb_common (see ycsb_stream.h), on util's emitter and histogram
 * and cpu.h.  Each item goes once to each of a tool's two emitters: h, the
 * human table, and j, the JSON lines (NULL without --json), so that one
 * script reads both programs' output alike: the same lines, the same JSON
 * keys, one definition.  No state.
 */
#ifndef TOOLS_BPBENCH_YCSB_EMIT_H
#define TOOLS_BPBENCH_YCSB_EMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu.h"
#include "util/emitter.h"
#include "util/hist.h"
#include "ycsb_stream.h"

/* Open a JSON line {"type":type,...}; close it with emitter_dict_end(j). */
void ycsb_json_begin(struct emitter *j, const char *type);

/* "<prog>: workload A, zipfian 0.99, 16 threads, 200000 records, 30.0 s" */
void ycsb_emit_title(struct emitter *h, const char *prog, const struct ycsb_mix *mix,
		     enum key_dist dist, double theta, unsigned threads, uint64_t records,
		     uint64_t ops, double duration_s);

/* The same figures as the title's, keys workload, threads, records, ops,
 * duration_s, dist and theta of the {"type":"config"} line. */
void ycsb_json_workload(struct emitter *j, const struct ycsb_mix *mix, enum key_dist dist,
			double theta, unsigned threads, uint64_t records, uint64_t ops,
			double duration_s);

/* "load: N records in S s (R inserts/s)" and {"type":"load"}. */
void ycsb_emit_load(struct emitter *h, struct emitter *j, uint64_t records, double secs);

/* One latency row and its {"type":"latency"} line. */
void ycsb_emit_latency(struct emitter *h, struct emitter *j, const char *name,
		       const struct util_hist *hist);
/* The latency table: its header, a row per op that ran, then "all". */
void ycsb_emit_latency_table(struct emitter *h, struct emitter *j,
			     const struct util_hist per[OP_COUNT], const struct util_hist *all);

/* The process's CPU and context switches per op over [u0, u1]. */
struct ycsb_cost {
	double user_us, sys_us, vcsw, ivcsw;
};
struct ycsb_cost ycsb_cost_of(struct cpu_usage u0, struct cpu_usage u1, uint64_t ops);
/* The cost's four keys of the {"type":"result"} line. */
void ycsb_json_cost(struct emitter *j, const struct ycsb_cost *c);
/* "  context switches per op: V voluntary, I involuntary" */
void ycsb_emit_switches(struct emitter *h, const struct ycsb_cost *c);

/* Finish both emitters (j: only with json) and flush stdout; 0, or -errno
 * after "<prog>: writing the report: <why>" on stderr. */
int ycsb_emit_finish(const char *prog, struct emitter *h, struct emitter *j, bool json);

#endif
