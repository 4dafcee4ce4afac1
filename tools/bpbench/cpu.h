/* SPDX-License-Identifier: MIT */
/*
 * cpu.h - the process's CPU time and context switches, for per-operation
 * and per-MB costs (bpbench ycsb and tiotest).
 *
 * Design note: layer: bpbench, on libc only (no project code).  getrusage(RUSAGE_SELF) counts
 * every thread of the process, the pool's I/O and writer threads too, as
 * the kernel's work counted in tiotest's Sys CPU; a measurement is the
 * difference of two readings around the measured interval.  Wall time is
 * util_now_ns (util/clock.h), not here.
 */
#ifndef TOOLS_BPBENCH_CPU_H
#define TOOLS_BPBENCH_CPU_H

#include <sys/resource.h>

struct cpu_usage {
	double user_s, sys_s;
	long vcsw, ivcsw; /* voluntary, involuntary context switches */
};

static inline struct cpu_usage cpu_usage_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (struct cpu_usage){ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
				  ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
				  ru.ru_nvcsw, ru.ru_nivcsw};
}

#endif
