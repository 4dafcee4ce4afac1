/* SPDX-License-Identifier: MIT */
/*
 * stress_util.h - scaffolding shared by the stress programs: seeded random
 * numbers, clocks, option parsing, and failing loudly with enough context
 * (seed, round, policy, the parked waiters) to reproduce a failure.
 *
 * Design note: a failure anywhere (a worker thread or the watchdog) calls
 * st_fail(), which prints the context once, dumps the table's parked
 * waiters and exits the process; an alarm bounds the dump itself, in case
 * the failure is a bucket lock that is never released.  Nothing here is
 * synchronisation: the only shared mutable state is the failure context,
 * set by the main thread before workers start and read-only afterwards.
 */
#ifndef TESTS_STRESS_UTIL_H
#define TESTS_STRESS_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "fwait/fwait.h"
/* The clock (util_now_ns, util_timespec_ns) and the generator
 * (util_rand_next; per-thread streams util_rand_seed(seed, stream)) are
 * util's: the stress programs call them directly. */
#include "util/clock.h"
#include "util/prng.h"

/* Whether a sanitizer is built in (TC_TSAN), the policy variants the
 * rounds cycle through (TC_NVARIANTS, tc_variant_name, tc_variant_config)
 * and the parked waiters' count and dump are tests/common's. */
#include "../common/sanitize.h"
#include "../common/variants.h"
#include "../common/waiters.h"

/* Uniform in [0, n), from the stream whose state is *s. */
static inline uint32_t st_below(uint64_t *s, uint32_t n)
{
	return (uint32_t)(((util_rand_next(s) >> 32) * (uint64_t)n) >> 32);
}

/* Absolute CLOCK_MONOTONIC time ns nanoseconds from now (may be "now"). */
struct timespec st_deadline_ns(uint64_t ns);

/* What a failure message names.  Set by the main thread between rounds. */
struct st_context {
	const char *program;
	uint64_t seed;
	unsigned round;
	const char *policy;    /* the round's variant (tc_variant_name) */
	unsigned width;        /* the round's word width, 32 or 64; 0: none */
	unsigned nbuckets;
	unsigned max_steals;
	unsigned threads;
	struct fwait_table *table; /* dumped on failure, may be NULL */
	/* Extra state printed on failure (words, counters). */
	void (*dump_extra)(void *arg);
	void *dump_arg;
	/* Self-test (--inject): a failure whose message contains this is the
	 * expected outcome; st_fail reports it and exits 0. */
	const char *expected_failure;
	/* Programs without rounds of table policies (stress_bufpool): when
	 * set, printed after "--seed S" instead of the round/policy line
	 * (the other options that reproduce the run). */
	const char *rerun_args;
	/* Called last before the exit (e.g. remove the program's files). */
	void (*cleanup)(void);
};
extern struct st_context st_ctx;

/* Prints "FAIL ...", the context, the parked waiters; exits with 1. */
__attribute__((noreturn, format(printf, 1, 2)))
void st_fail(const char *fmt, ...);

/* Common command line: --seconds N --seed S --threads N --soak
 * --stall-seconds N; FWAIT_STRESS_SEED in the environment is the default
 * seed (else one is drawn from the clock and printed). */
struct st_options {
	double seconds;        /* wall-clock budget of the run */
	uint64_t seed;
	unsigned threads;      /* 0 = program default */
	bool soak;             /* loop rounds until --seconds (default: forever) */
	double stall_seconds;  /* a wait longer than this past its deadline fails */
	const char *mix;       /* program specific */
	const char *inject;    /* program specific fault injection (self-test) */
	int policy;            /* a variant (tests/common); -1 = cycle through all */
	unsigned width;        /* --width 32|64: word width (program specific);
				* 0 = both */
};
void st_parse_options(int argc, char **argv, struct st_options *o);

/* A short pause inside a poll loop (never used as synchronisation). */
void st_poll_pause(void);

/* What one worker is blocked in, for the main thread's stall watchdog.
 * The worker writes it (relaxed stores) around each call that may wait;
 * the watchdog only reads it. */
struct st_watch {
	_Atomic uint64_t start_ns;    /* 0: not in a watched call */
	_Atomic uint64_t deadline_ns; /* 0: no deadline */
	_Atomic int kind;             /* index into the program's names[] */
};
void st_watch_begin(struct st_watch *w, int kind, const struct timespec *deadline);
void st_watch_end(struct st_watch *w);
/* st_fail if the watched call of thread id has run past its deadline (or,
 * without one, its start) by more than stall_ns: "thread ID stuck in
 * NAME for S s (deadline ...): HINT". */
void st_watch_check(const struct st_watch *w, int id, uint64_t now, uint64_t stall_ns,
		    const char *const names[], const char *hint);
/* Prints "  thread ID in NAME for S s" if thread id is in a watched call. */
void st_watch_dump(const struct st_watch *w, int id, uint64_t now, const char *const names[]);

#endif
