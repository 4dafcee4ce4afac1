/* SPDX-License-Identifier: MIT */
/*
 * toolutil.c - the pools' log callback, shared by the tools (see
 * toolutil.h).
 */
#include "toolutil.h"

#include <stdio.h>

void tool_bp_log(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	fprintf(stderr, "bufpool: %s\n", msg);
}
