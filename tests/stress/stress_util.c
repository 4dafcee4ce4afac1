/* SPDX-License-Identifier: MIT */
/*
 * stress_util.c - deadlines, options and failure reporting of the stress
 * programs (see stress_util.h).  st_ctx is written by the main thread only
 * while no worker runs; workers read it only inside st_fail.
 */
#include "stress_util.h"
#include "util/opt.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct st_context st_ctx;

struct timespec st_deadline_ns(uint64_t ns)
{
	return fwait_deadline_after_ns(ns);
}

void st_fail(const char *fmt, ...)
{
	static _Atomic int failing;
	va_list ap;

	/* One report; any other failing thread just waits for the exit. */
	if (atomic_exchange(&failing, 1)) {
		for (;;)
			pause();
	}
	/* If the dump itself blocks (a bucket lock never released), the
	 * default SIGALRM action ends the process. */
	alarm(10);
	fflush(stdout);
	char msg[512];
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (st_ctx.expected_failure && strstr(msg, st_ctx.expected_failure)) {
		printf("injected fault detected as expected: %s\nPASS\n", msg);
		tc_dump_waiters(st_ctx.table, 8);
		fflush(stdout);
		fflush(stderr);
		if (st_ctx.cleanup)
			st_ctx.cleanup();
		_exit(0);
	}
	fprintf(stderr, "FAIL: %s", msg);
	if (st_ctx.rerun_args)
		fprintf(stderr, "\n  reproduce: %s --seed %" PRIu64 " %s\n",
			st_ctx.program ? st_ctx.program : "?", st_ctx.seed, st_ctx.rerun_args);
	else
		fprintf(stderr, "\n  reproduce: %s --seed %" PRIu64 "  (round %u: policy %s, "
			"width %u, nbuckets %u, max_steals %u, threads %u)\n",
			st_ctx.program ? st_ctx.program : "?", st_ctx.seed, st_ctx.round,
			st_ctx.policy ? st_ctx.policy : "?", st_ctx.width, st_ctx.nbuckets,
			st_ctx.max_steals, st_ctx.threads);
	if (st_ctx.dump_extra)
		st_ctx.dump_extra(st_ctx.dump_arg);
	tc_dump_waiters(st_ctx.table, 64);
	fflush(stderr);
	if (st_ctx.cleanup)
		st_ctx.cleanup();
	_exit(1);
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [--seconds N] [--seed S] [--threads N] [--soak]\n"
		"          [--stall-seconds N] [--mix NAME] [--policy NAME] [--width 32|64]\n"
		"          [--inject lost-wake]  (self-test: must be detected)\n"
		"  FWAIT_STRESS_SEED=S in the environment sets the default seed.\n"
		"  --soak: run rounds until --seconds (default: forever).\n",
		prog);
	exit(2);
}

/* util/opt.h's values, or the usage and exit 2. */
static double parse_double(const char *prog, const char *opt, const char *s, double max)
{
	double v;
	if (util_opt_double(prog, opt, s, 0, max, &v))
		usage(prog);
	return v;
}

static uint64_t parse_u64(const char *prog, const char *opt, const char *s, uint64_t max)
{
	uint64_t v;
	if (util_opt_u64(prog, opt, s, 0, max, &v))
		usage(prog);
	return v;
}

void st_parse_options(int argc, char **argv, struct st_options *o)
{
	const char *prog = argv[0];
	bool seeded = false;

	memset(o, 0, sizeof(*o));
	o->seconds = -1;
	o->stall_seconds = 15;
	o->policy = -1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--soak") == 0) {
			o->soak = true;
			continue;
		}
		if (v == NULL)
			usage(prog);
		if (strcmp(a, "--seconds") == 0)
			o->seconds = parse_double(prog, a, v, 1e9);
		else if (strcmp(a, "--seed") == 0)
			o->seed = parse_u64(prog, a, v, UINT64_MAX), seeded = true;
		else if (strcmp(a, "--threads") == 0) /* 0: the default; programs bound it */
			o->threads = (unsigned)parse_u64(prog, a, v, UINT32_MAX);
		else if (strcmp(a, "--stall-seconds") == 0)
			o->stall_seconds = parse_double(prog, a, v, 1e9);
		else if (strcmp(a, "--mix") == 0)
			o->mix = v;
		else if (strcmp(a, "--inject") == 0)
			o->inject = v;
		else if (strcmp(a, "--width") == 0) {
			o->width = (unsigned)parse_u64(prog, a, v, 64);
			if (o->width != 32 && o->width != 64)
				usage(prog);
		}
		else if (strcmp(a, "--policy") == 0) {
			o->policy = tc_variant_parse(v);
			if (o->policy < 0) {
				fprintf(stderr, "%s: unknown policy '%s'\n", prog, v);
				usage(prog);
			}
		} else
			usage(prog);
		i++;
	}
	if (!seeded) {
		const char *env = getenv("FWAIT_STRESS_SEED");
		if (env && *env)
			o->seed = parse_u64(prog, "FWAIT_STRESS_SEED", env, UINT64_MAX);
		else
			o->seed = util_now_ns() ^ ((uint64_t)getpid() << 32);
	}
	if (o->seconds < 0)
		o->seconds = o->soak ? 0 : 20; /* soak: 0 = forever */
}

void st_poll_pause(void)
{
	struct timespec ts = { 0, 2000000 }; /* 2 ms */
	nanosleep(&ts, NULL);
}

void st_watch_begin(struct st_watch *w, int kind, const struct timespec *deadline)
{
	atomic_store_explicit(&w->deadline_ns, deadline ? util_timespec_ns(deadline) : 0,
			      memory_order_relaxed);
	atomic_store_explicit(&w->kind, kind, memory_order_relaxed);
	atomic_store_explicit(&w->start_ns, util_now_ns(), memory_order_relaxed);
}

void st_watch_end(struct st_watch *w)
{
	atomic_store_explicit(&w->start_ns, 0, memory_order_relaxed);
}

void st_watch_check(const struct st_watch *w, int id, uint64_t now, uint64_t stall_ns,
		    const char *const names[], const char *hint)
{
	uint64_t start = atomic_load_explicit(&w->start_ns, memory_order_relaxed);
	if (start == 0)
		return;
	uint64_t dl = atomic_load_explicit(&w->deadline_ns, memory_order_relaxed);
	uint64_t limit = (dl > start ? dl : start) + stall_ns;
	/* re-read: the worker may have finished and started anew meanwhile */
	if (now > limit && atomic_load_explicit(&w->start_ns, memory_order_relaxed) == start)
		st_fail("thread %d stuck in %s for %.1f s (deadline %s): %s", id,
			names[atomic_load(&w->kind)], (double)(now - start) / 1e9,
			dl ? "passed" : "none", hint);
}

void st_watch_dump(const struct st_watch *w, int id, uint64_t now, const char *const names[])
{
	uint64_t s = atomic_load(&w->start_ns);
	if (s)
		fprintf(stderr, "  thread %d in %s for %.3f s\n", id,
			names[atomic_load(&w->kind)], (double)(now - s) / 1e9);
}
