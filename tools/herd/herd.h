/* SPDX-License-Identifier: MIT */
/*
 * herd.h - the herd microbenchmark's internal interface.
 *
 * Design note: herd.c parses the command line and runs the variants;
 * herd_run.c runs one variant (one fwait policy, or the per-object
 * mutex+condvar baseline) and measures it; herd_report.c prints the
 * header, the rows and the summaries through one emitter.  A run owns
 * everything it touches (table, objects, threads); nothing is shared
 * between runs.
 */
#ifndef TOOLS_HERD_HERD_H
#define TOOLS_HERD_HERD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fwait/fwait.h"

/* What a variant locks: an fwait table, or one of two per-object
 * baselines that use no fwait at all. */
enum herd_kind {
	HERD_FWAIT,   /* bit 0 of the object's word, through one fwait table */
	HERD_PERCOND, /* a mutex, a condvar and a held flag in every object */
	HERD_MUTEX,   /* a plain pthread mutex in every object (no condvar) */
};

/* One variant (herd.c): one per fwait policy, named and described by
 * fwait's policy table, then herd.c's own rows.  An fwait variant is a
 * whole fwait_config (a policy plus any tweak: max_steals today, whatever
 * fwait_config gains later) written with designated initializers, so a
 * new variant is one line; nbuckets is ignored (-b sets it). */
struct herd_variant {
	const char *name;          /* as printed and as given to -p */
	const char *help;          /* one line, for the usage text */
	enum herd_kind kind;
	struct fwait_config cfg;   /* HERD_FWAIT only */
};

struct herd_params {
	unsigned threads, objects, buckets, hold_us;
	unsigned compute_ns;       /* > 0: a compute hold instead (hold_us is 0) */
	double seconds;            /* per variant, when ops == 0 */
	uint64_t ops;              /* acquisitions per variant; 0 = timed */
	uint64_t seed;
};

/* The per-object baseline with a condvar: the memory-hungry ideal. */
struct herd_percond {
	pthread_mutex_t mtx;
	pthread_cond_t cond;
	bool held;
};

struct herd_result {
	uint64_t acquisitions;
	double wall_s, user_s, sys_s;
	uint64_t vcsw, ivcsw;
	uint64_t spurious;         /* woken but had to sleep again */
	double hold_s;             /* time actually spent in the holds */
	uint64_t waits, wakeups, handoffs, foreign_skipped;
	uint32_t max_bucket_depth;
	size_t sync_bytes;         /* fwait: table_bytes; others: K * object bytes */
	/* The wait: from calling lock to holding, over every acquisition. */
	uint64_t wait_p50_ns, wait_p99_ns, wait_max_ns;
	double wait_mean_ns;
	/* Fairness: acquisitions per thread, over the threads that ran. */
	unsigned threads;
	uint64_t acq_min, acq_max;
};

/* The synchronisation state one object adds: fwait its 32-bit word (the
 * table is fixed), percond a struct herd_percond, mutex a pthread_mutex_t. */
size_t herd_object_bytes(enum herd_kind kind);

#define HERD_MAX_VARIANTS 16

/* The command line, parsed (herd.c); lives in main's frame.  all[] is
 * every variant, in the default run's order; chosen[] points into it. */
struct herd_options {
	struct herd_params p;
	bool json;
	struct herd_variant all[HERD_MAX_VARIANTS];
	unsigned nall;
	const struct herd_variant *chosen[HERD_MAX_VARIANTS];
	unsigned nchosen;
};

struct emitter;

/* herd_report.c: the report, through e (table or JSON lines). */
void herd_print_header(struct emitter *e, const struct herd_options *o, int argc,
		       char **argv);
void herd_print_row(struct emitter *e, const struct herd_options *o,
		    const struct herd_variant *v, const struct herd_result *r);
/* After every row: rs[i] is the result of o->chosen[i]. */
void herd_print_summary(struct emitter *e, const struct herd_options *o,
			const struct herd_result *rs);

/* Runs one variant; 0 or a negative errno (with a message on stderr). */
int herd_run(const struct herd_variant *v, const struct herd_params *p,
	     struct herd_result *out);

#endif
