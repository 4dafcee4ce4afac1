/* SPDX-License-Identifier: MIT */
/*
 * util/clock.h - the one monotonic clock read of the project.
 *
 * Design note
 * -----------
 * Layer 0 (util): header only, calls nothing of the project.  Every time
 * stamp that is compared with another (wait times, deadlines, benchmark
 * intervals, stats snapshots) is CLOCK_MONOTONIC in nanoseconds, so that a
 * wall-clock step never makes an interval negative or a deadline jump.
 * fwait, bufpool, the tools and the tests all read it through here.
 * Conversions saturate rather than wrap, so a far-future deadline stays in
 * the future.
 */
#ifndef UTIL_CLOCK_H
#define UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

/* A well-formed timespec (0 <= tv_nsec < 1e9) in nanoseconds, saturated:
 * past 2^64 - 1 ns (tv_sec above 18446744073, as a caller's "never" of
 * INT64_MAX seconds) it is UINT64_MAX, not a wrapped small count that a
 * deadline check would take for a time long passed; a negative tv_sec is 0. */
static inline uint64_t util_timespec_ns(const struct timespec *ts)
{
	uint64_t ns;

	if (ts->tv_sec < 0)
		return 0;
	if (__builtin_mul_overflow((uint64_t)ts->tv_sec, UINT64_C(1000000000), &ns) ||
	    __builtin_add_overflow(ns, (uint64_t)ts->tv_nsec, &ns))
		return UINT64_MAX;
	return ns;
}

/* CLOCK_MONOTONIC now, in nanoseconds. */
static inline uint64_t util_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return util_timespec_ns(&ts);
}

#endif
