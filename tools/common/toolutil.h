/*
 * toolutil.h - small pieces every tool shares: strict integer options and a
 * seeded pseudo-random sequence, and the log callback the tools give pools.
 *
 * Design note
 * -----------
 * Benchmarks must give every policy the same work, so their random choices
 * come from a per-thread xorshift64* sequence seeded from the command line;
 * and a benchmark that silently takes "-t 1x" as 1 measures the wrong thing,
 * so options are parsed strictly, with one message format for all tools.
 * No state: everything is in the caller's variables.
 */
#ifndef TOOLS_COMMON_TOOLUTIL_H
#define TOOLS_COMMON_TOOLUTIL_H

#include <stdint.h>

/* Parse s as a decimal integer in [min, max] into *out.  On anything else
 * (empty, sign, trailing characters, overflow, out of range) print
 * "<tool>: <opt> wants an integer in [min, max], not '<s>'" to stderr and
 * return -EINVAL, leaving *out unchanged. */
int tool_parse_u64(const char *tool, const char *opt, const char *s, uint64_t min,
		   uint64_t max, uint64_t *out);
int tool_parse_unsigned(const char *tool, const char *opt, const char *s, unsigned min,
			unsigned max, unsigned *out);

/* The bp_config.log (and kv_config.pool.log) of every tool: prints
 * "bufpool: <msg>" on stderr, whatever the level, so the pool's messages
 * read as they did when the library printed them itself.  arg is unused.
 * (Declared without bufpool.h: level is an enum bp_log_level.) */
void tool_bp_log(void *arg, int level, const char *msg);

/* xorshift64*: the next number of the sequence whose state is *s (never 0). */
static inline uint64_t tool_rand_next(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * UINT64_C(0x2545f4914f6cdd1d);
}

#endif
