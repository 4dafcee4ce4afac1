/* SPDX-License-Identifier: MIT */
/*
 * toolutil.h - what every tool shares and util/ does not have: the log
 * callback the tools give their pools, --version, the stop signals and
 * the workloads' temporary files.
 *
 * Design note
 * -----------
 * Options, random numbers and clocks are util's (util/opt.h, util/prng.h,
 * util/clock.h): one of each for the whole project.  This header keeps the
 * pools' log callback, the tools' --version (the project's version, one
 * home: TOOLS_VERSION, which tools/common/meson.build defines from
 * meson.project_version() for toolutil.c alone) and the stop signals of the
 * tools that run loads.  State: tool_stop_signal only, written by the
 * signal handler, read by the tool's loops (a lock-free atomic_int, which
 * a handler may write from any thread: toolutil.c says why; a tool polls
 * it, at least every 0.1 s where it sleeps, from whatever thread it is, so
 * it does not matter which thread the kernel delivers the signal to).
 */
#ifndef TOOLS_COMMON_TOOLUTIL_H
#define TOOLS_COMMON_TOOLUTIL_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* The bp_config.log (and kv_config.pool.log) of every tool: prints
 * "bufpool: <msg>" on stderr, whatever the level, so the pool's messages
 * read as they did when the library printed them itself.  arg is unused.
 * (Declared without bufpool.h: level is an enum bp_log_level.) */
void tool_bp_log(void *arg, int level, const char *msg);

/* Is argv[1] "--version"?  (Every tool answers `TOOL --version`, whatever
 * subcommands and options it has.) */
bool tool_version_asked(int argc, char **argv);
/* Print "<prog> (fwait-bufpool) <version>" on stdout; the exit status: 0,
 * or 1 when stdout cannot be written. */
int tool_version_print(const char *prog);

/* The stop signals: after tool_catch_stop(), SIGINT (Ctrl-C) or SIGTERM
 * sets tool_stop_signal to its number instead of killing the process; the
 * tool stops its run, reports what it did, and exits with
 * tool_exit_status().  SIGTERM is a supervisor's (or a test's) request to
 * end the run early and keeps the run's status; SIGINT is the user giving
 * up, 130, so that `bpbench ... && next` stops at Ctrl-C. */
extern atomic_int tool_stop_signal;
void tool_catch_stop(void);
/* Whether a stop signal came, for a loop that looks at every step.
 * Relaxed: the flag orders nothing (toolutil.c). */
static inline bool tool_stopped(void)
{
	return atomic_load_explicit(&tool_stop_signal, memory_order_relaxed) != 0;
}
/* Sleep seconds, in slices of at most 0.1 s; false if a stop signal came
 * (the sleep cut short), true if it slept it all. */
bool tool_sleep(double seconds);
/* 130 (128 + SIGINT, as a shell reports a process that SIGINT killed) if
 * SIGINT came, else status. */
int tool_exit_status(int status);

/* Create a fresh empty file $TMPDIR/<stem>-XXXXXX (TMPDIR unset or empty:
 * /tmp) for a workload's data; its name in buf.  0, or -errno after
 * printing "<prog>: cannot create a file in DIR: why (use --file)". */
int tool_temp_file(const char *prog, const char *stem, char *buf, size_t len);

#endif
