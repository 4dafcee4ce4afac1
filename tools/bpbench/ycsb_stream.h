/* SPDX-License-Identifier: MIT */
/*
 * ycsb_stream.h - the YCSB operation stream: the operations' table, the
 * workloads' mix table, the choice of each operation, and the value codec.
 *
 * Design note
 * -----------
 * Layer: ycsb_common (tools/bpbench/meson.build), a static library that
 * bpbench ycsb and ycsb-ref (tools/compare) both link, so that the two run
 * the same stream from one definition; on gen.c (the key generators, in
 * the same library) and libc only.  No state: the two tables are constant,
 * the generators are the caller's (one struct rng per worker).
 *
 * A value of vs bytes encodes (key, version, pattern): the key and the
 * version in its first 16 bytes, then a pattern derived from both, so a
 * read can tell a value that is not its key's, or is torn, from a good
 * one.  Version 0 is never written (a record's first write is 1).
 */
#ifndef TOOLS_BPBENCH_YCSB_STREAM_H
#define TOOLS_BPBENCH_YCSB_STREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "gen.h"

/* The operations, in the latency tables' row order.  A new operation is
 * a member here, a row of ycsb_ops[], its share in the mixes that do it
 * (ycsb_stream.c) and the code that executes it (do_op in
 * tools/bpbench/ycsb_run.c and, if ycsb-ref can run it, in
 * tools/compare/ref_run.c); everything else asks the row. */
enum ycsb_op { OP_READ, OP_UPDATE, OP_INSERT, OP_SCAN, OP_RMW, OP_COUNT };

/* What the tools ask about an operation: one row per enum ycsb_op. */
struct ycsb_op_info {
	const char *name; /* its latency row and the JSON "op" member */
	bool writes;      /* changes a record: with --durable its latency is a commit's
			   * (the "commit" row merges these); not in --no-pool's floor */
	bool adds;        /* creates records beyond the load's (the run sizes its
			   * version table for them; not in ycsb-ref) */
	bool scans;       /* reads a range, not one record (not in ycsb-ref, nor in
			   * --no-pool's floor, which has point lookups only) */
};
extern const struct ycsb_op_info ycsb_ops[OP_COUNT];
extern const char *const ycsb_dist_names[3]; /* by enum key_dist */

struct ycsb_mix {
	char name;          /* 'A'..'F' */
	double p[OP_COUNT]; /* each op's share; they sum to 1 */
	enum key_dist dist; /* the workload's key distribution */
};

/* The workload named arg ("A".."F", either case), or NULL. */
const struct ycsb_mix *ycsb_mix_named(const char *arg);
/* Workload A, the tools' default. */
const struct ycsb_mix *ycsb_mix_default(void);
/* 0 and *d if arg is one of the first n of ycsb_dist_names, else -EINVAL. */
int ycsb_dist_named(const char *arg, int n, enum key_dist *d);

/* What workload m does: each flag of the result is set if an operation
 * with a share in m has it (its name is NULL). */
struct ycsb_op_info ycsb_mix_does(const struct ycsb_mix *m);

/* The next operation: one rng_double against the cumulative mix. */
enum ycsb_op ycsb_pick_op(const struct ycsb_mix *m, struct rng *r);

/* The value of key at version ver, vs (>= 16) bytes at v. */
void ycsb_value_encode(uint8_t *v, uint32_t vs, uint64_t key, uint64_t ver);
/* 0 if v is a well-formed value of key, its version in *ver; -EBADMSG
 * if not. */
int ycsb_value_decode(const uint8_t *v, uint32_t vs, uint64_t key, uint64_t *ver);

#endif
