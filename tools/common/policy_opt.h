/* SPDX-License-Identifier: MIT */
/*
 * policy_opt.h - the tools' wait-policy options, generated from fwait's
 * policy table.
 *
 * Design note
 * -----------
 * Tools layer, on fwait.h only.  fwait's policy table (fwait/table.c) is
 * the one list of wait policies: its names (fwait_policy_name), one-line
 * help (fwait_policy_help) and count (FWAIT_POLICY_COUNT).  Every tool's
 * usage text, name list and refusal message comes from it through these
 * helpers, so a new policy shows up in every tool with no tool edited.
 * No state.
 */
#ifndef TOOLS_COMMON_POLICY_OPT_H
#define TOOLS_COMMON_POLICY_OPT_H

#include <stddef.h>
#include <stdio.h>

#include "fwait/fwait.h"

/* One usage line of a named choice: indent, the name in a column width
 * wide, the help.  The policies' lines and a tool's own variants (herd's)
 * print through it, so they read alike. */
void tool_usage_choice(FILE *f, const char *indent, int width, const char *name,
		       const char *help);
/* Every policy's usage line, in the policy table's order, the names in a
 * column TOOL_POLICY_NAME_WIDTH wide. */
#define TOOL_POLICY_NAME_WIDTH 10
void tool_policy_usage(FILE *f, const char *indent);

/* Every policy's name into buf (size bytes, truncated if need be), in the
 * policy table's order, separated by sep, the last two by last: (", ",
 * " or ") gives "wake-one, wake-all, broadcast or futex".  Returns buf. */
#define TOOL_POLICY_NAMES_MAX 256
const char *tool_policy_names(char *buf, size_t size, const char *sep, const char *last);

/* The value of a policy option (opt, e.g. "--policy"): 0 and *out, or
 * -EINVAL with *out unchanged after one line on stderr in util/opt.h's
 * format: "<prog>: <opt> wants wake-one, ... or futex, not '<s>'". */
int tool_policy_parse(const char *prog, const char *opt, const char *s, enum fwait_policy *out);

#endif
