/* SPDX-License-Identifier: MIT */
/*
 * util/chaos.h - CHAOS_POINT(name): preemption at the worst moment, on
 * purpose (the chaos build, -Dchaos=true).
 *
 * Design note
 * -----------
 * Layer 0 (util): header only, calls nothing of the project but prng.h.
 * A chaos point marks a window of a wait, pin, claim, eviction or
 * write-back protocol where another thread running in between is a race
 * worth testing (issue 28: "routine on a loaded server, rare in a test").
 * In the default build CHAOS_POINT expands to ((void)0): no code, no
 * data, the library's objects are those of a build without the points.
 * With -Dchaos=true (meson_options.txt; meson.build defines UTIL_CHAOS=1
 * for the whole project) each point, with seeded probabilities, calls
 * sched_yield() or sleeps 1..max_us microseconds (nanosleep), which
 * stretches the window as a preemption would, in the manner of rr's chaos
 * mode.  The stress suite and tests/stress/stress_frame_wait.c run under
 * it in CI (.ci/run; docs/reliability.md, "The chaos build").
 *
 * Reproducible: each thread has its own xorshift stream (util/prng.h,
 * thread-local state, so no lock and no shared mutable state), seeded with
 * FWAIT_CHAOS_SEED and advanced once per point the thread passes; the
 * decision at a point mixes that draw with a hash of the point's name.
 * So a seed fixes every thread's sequence of decisions for a given
 * sequence of points (every thread starts the same stream; they part as
 * their paths differ, which keeps a thread's decisions independent of how
 * many threads started before it); the interleaving itself is the
 * kernel's, so a failing seed is rerun (FWAIT_CHAOS_SEED=S) a few times
 * to show again.
 * The state is per translation unit as well (a static in this header):
 * fwait's and bufpool's files each advance their own stream.
 *
 * Environment (read once per thread and file, at its first point):
 *   FWAIT_CHAOS_SEED    the seed (decimal or 0x hex; default 0x5eed)
 *   FWAIT_CHAOS_YIELD   per-mille chance that a point yields (default 100)
 *   FWAIT_CHAOS_SLEEP   per-mille chance that a point sleeps (default 20)
 *   FWAIT_CHAOS_MAX_US  longest sleep in microseconds, 1..500 (default 500)
 * FWAIT_CHAOS_YIELD=0 FWAIT_CHAOS_SLEEP=0 turns the points off at run time.
 * Why the library may read the environment here, when it otherwise takes
 * every setting from its caller's config: only the chaos build does, which
 * is a test build never shipped; the points sit in internal paths no
 * config reaches, and the test programs that run under it (the stress
 * suite, CI) must not need an API for it.  getenv is safe while nobody
 * calls setenv at the same time; the tests set the variables in the shell.
 */
#ifndef UTIL_CHAOS_H
#define UTIL_CHAOS_H

#if defined(UTIL_CHAOS) && UTIL_CHAOS

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "util/prng.h"

struct util_chaos_state {
	bool ready;
	uint64_t s;         /* the thread's stream (prng.h) */
	uint32_t yield_pm;  /* per mille */
	uint32_t sleep_pm;  /* per mille */
	uint32_t max_us;
};

static inline uint64_t util_chaos_env(const char *var, uint64_t dflt, uint64_t max)
{
	const char *v = getenv(var);
	char *end;

	if (!v || !*v)
		return dflt;
	unsigned long long x = strtoull(v, &end, 0);
	if (*end || x > max)
		return dflt;
	return x;
}

/* FNV-1a of the point's name: which point, mixed into the decision. */
static inline uint64_t util_chaos_name_hash(const char *name)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * UINT64_C(0x100000001b3);
	return h;
}

static inline void util_chaos_point(const char *name)
{
	static _Thread_local struct util_chaos_state st;

	if (!st.ready) {
		st.s = util_rand_seed(util_chaos_env("FWAIT_CHAOS_SEED", 0x5eed, UINT64_MAX), 0);
		st.yield_pm = (uint32_t)util_chaos_env("FWAIT_CHAOS_YIELD", 100, 1000);
		st.sleep_pm = (uint32_t)util_chaos_env("FWAIT_CHAOS_SLEEP", 20, 1000);
		st.max_us = (uint32_t)util_chaos_env("FWAIT_CHAOS_MAX_US", 500, 500);
		if (st.max_us == 0)
			st.max_us = 1;
		st.ready = true;
	}
	/* The thread's next draw, scrambled with the name (util_rand_seed is
	 * a mixer): the same stream position decides differently at
	 * different points. */
	uint64_t r = util_rand_seed(util_rand_next(&st.s), util_chaos_name_hash(name));
	uint32_t pm = (uint32_t)(r % 1000);

	if (pm < st.sleep_pm) {
		struct timespec ts = { 0, (long)(1 + (r >> 32) % st.max_us) * 1000L };
		nanosleep(&ts, NULL);
	} else if (pm < st.sleep_pm + st.yield_pm) {
		sched_yield();
	}
}

#define CHAOS_POINT(name) util_chaos_point(name)

#else

#define CHAOS_POINT(name) ((void)0)

#endif

#endif
