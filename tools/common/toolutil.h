/* SPDX-License-Identifier: MIT */
/*
 * toolutil.h - what every tool shares and util/ does not have: the log
 * callback the tools give their pools.
 *
 * Design note
 * -----------
 * Options, random numbers and clocks are util's (util/opt.h, util/prng.h,
 * util/clock.h): one of each for the whole project.  This header keeps
 * only the pools' log callback, which needs nothing of util.  No state.
 */
#ifndef TOOLS_COMMON_TOOLUTIL_H
#define TOOLS_COMMON_TOOLUTIL_H

/* The bp_config.log (and kv_config.pool.log) of every tool: prints
 * "bufpool: <msg>" on stderr, whatever the level, so the pool's messages
 * read as they did when the library printed them itself.  arg is unused.
 * (Declared without bufpool.h: level is an enum bp_log_level.) */
void tool_bp_log(void *arg, int level, const char *msg);

#endif
