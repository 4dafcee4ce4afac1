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

#include <stdint.h>

/* The bp_config.log (and kv_config.pool.log) of every tool: prints
 * "bufpool: <msg>" on stderr, whatever the level, so the pool's messages
 * read as they did when the library printed them itself.  arg is unused.
 * (Declared without bufpool.h: level is an enum bp_log_level.) */
void tool_bp_log(void *arg, int level, const char *msg);

/* ---- transitional: removed once bpbench uses util/opt.h ----------------
 * tools/bpbench (ycsb.c, tiotest.c) still calls these old names; they are
 * util's parser and generator under another name, nothing more.  Integers
 * are now util_opt_u64's: decimal or 0x hex, no sign, no blanks. */
#include "util/opt.h"
#include "util/prng.h"

static inline int tool_parse_u64(const char *tool, const char *opt, const char *s,
				 uint64_t min, uint64_t max, uint64_t *out)
{
	return util_opt_u64(tool, opt, s, min, max, out);
}

static inline int tool_parse_unsigned(const char *tool, const char *opt, const char *s,
				      unsigned min, unsigned max, unsigned *out)
{
	return util_opt_unsigned(tool, opt, s, min, max, out);
}

static inline uint64_t tool_rand_next(uint64_t *s)
{
	return util_rand_next(s);
}
/* ---- end of transitional ----------------------------------------------- */

#endif
