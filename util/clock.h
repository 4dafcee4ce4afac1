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
 */
#ifndef UTIL_CLOCK_H
#define UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

/* A (well-formed) timespec in nanoseconds. */
static inline uint64_t util_timespec_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * UINT64_C(1000000000) + (uint64_t)ts->tv_nsec;
}

/* CLOCK_MONOTONIC now, in nanoseconds. */
static inline uint64_t util_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return util_timespec_ns(&ts);
}

#endif
