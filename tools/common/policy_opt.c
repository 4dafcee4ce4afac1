/* SPDX-License-Identifier: MIT */
/*
 * policy_opt.c - the tools' wait-policy options from fwait's policy table
 * (see policy_opt.h).
 *
 * Design note: tools layer, on fwait.h only; every function reads the
 * library's table through fwait_policy_name/_help and keeps no state.
 */
#include "policy_opt.h"

#include <errno.h>
#include <string.h>

void tool_usage_choice(FILE *f, const char *indent, int width, const char *name,
		       const char *help)
{
	fprintf(f, "%s%-*s %s\n", indent, width, name, help);
}

void tool_policy_usage(FILE *f, const char *indent)
{
	for (int p = 0; p < FWAIT_POLICY_COUNT; p++)
		tool_usage_choice(f, indent, TOOL_POLICY_NAME_WIDTH,
				  fwait_policy_name((enum fwait_policy)p),
				  fwait_policy_help((enum fwait_policy)p));
}

const char *tool_policy_names(char *buf, size_t size, const char *sep, const char *last)
{
	size_t n = 0;

	if (size == 0)
		return buf;
	buf[0] = '\0';
	for (int p = 0; p < FWAIT_POLICY_COUNT && n < size; p++) {
		const char *before = p == 0 ? "" : p + 1 == FWAIT_POLICY_COUNT ? last : sep;
		int w = snprintf(buf + n, size - n, "%s%s", before,
				 fwait_policy_name((enum fwait_policy)p));
		if (w < 0)
			break;
		n += (size_t)w;
	}
	return buf;
}

int tool_policy_parse(const char *prog, const char *opt, const char *s, enum fwait_policy *out)
{
	char names[TOOL_POLICY_NAMES_MAX];

	if (fwait_policy_parse(s, out) == 0)
		return 0;
	fprintf(stderr, "%s: %s wants %s, not '%s'\n", prog, opt,
		tool_policy_names(names, sizeof(names), ", ", " or "), s);
	return -EINVAL;
}
