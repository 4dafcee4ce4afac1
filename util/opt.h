/* SPDX-License-Identifier: MIT */
/*
 * util/opt.h - the one strict option-value parser of the tools and tests.
 *
 * Design note
 * -----------
 * Layer 0 (util): calls only libc.  A benchmark that silently takes
 * "-t 1x" as 1 measures the wrong thing, so a value is accepted only when
 * all of it is a number in range: no sign on unsigned values, no trailing
 * characters, no overflow.  Integers are decimal, or hexadecimal with a
 * 0x prefix (seeds); a leading 0 is not octal.  On refusal one message
 * format for every program goes to stderr:
 *     "<prog>: <opt> wants an integer in [min, max], not '<s>'"
 * and -EINVAL is returned with *out unchanged.  (The libraries never link
 * this: they print nothing.)
 */
#ifndef UTIL_OPT_H
#define UTIL_OPT_H

#include <stdint.h>

int util_opt_u64(const char *prog, const char *opt, const char *s, uint64_t min, uint64_t max,
		 uint64_t *out);
int util_opt_unsigned(const char *prog, const char *opt, const char *s, unsigned min,
		      unsigned max, unsigned *out);
/* A finite decimal number in [min, max]. */
int util_opt_double(const char *prog, const char *opt, const char *s, double min, double max,
		    double *out);
/* A comma-separated list (at most 255 characters): item(tok, arg) for each
 * item, in order.  0, or -EINVAL: item's (it prints its own message), or
 * after "<prog>: <opt> wants a comma-separated list, not '<s>'" when the
 * list is empty or too long. */
int util_opt_list(const char *prog, const char *opt, const char *s,
		  int (*item)(const char *tok, void *arg), void *arg);

#endif
