/*
 * ycsb_stream.h - the YCSB operation stream: the workloads' mix table, the
 * choice of each operation, and the value codec.
 *
 * Design note
 * -----------
 * Layer: ycsb_common (tools/bpbench/meson.build), a static library that
 * bpbench ycsb and ycsb-ref (tools/compare) both link, so that the two run
 * the same stream from one definition; on gen.c (the key generators, in
 * the same library) and libc only.  No state: the mix table is constant,
 * the generators are the caller's (one struct rng per worker).
 *
 * A value of vs bytes encodes (key, version, pattern): the key and the
 * version in its first 16 bytes, then a pattern derived from both, so a
 * read can tell a value that is not its key's, or is torn, from a good
 * one.  Version 0 is never written (a record's first write is 1).
 */
#ifndef TOOLS_BPBENCH_YCSB_STREAM_H
#define TOOLS_BPBENCH_YCSB_STREAM_H

#include <stdint.h>

#include "gen.h"

/* The operations, in the mix table's column order (and the latency
 * tables' row order). */
enum ycsb_op { OP_READ, OP_UPDATE, OP_INSERT, OP_SCAN, OP_RMW, OP_COUNT };
extern const char *const ycsb_op_names[OP_COUNT];
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

/* The next operation: one rng_double against the cumulative mix. */
enum ycsb_op ycsb_pick_op(const struct ycsb_mix *m, struct rng *r);

/* The value of key at version ver, vs (>= 16) bytes at v. */
void ycsb_value_encode(uint8_t *v, uint32_t vs, uint64_t key, uint64_t ver);
/* 0 if v is a well-formed value of key, its version in *ver; -EBADMSG
 * if not. */
int ycsb_value_decode(const uint8_t *v, uint32_t vs, uint64_t key, uint64_t *ver);

#endif
