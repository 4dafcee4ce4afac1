/* SPDX-License-Identifier: MIT */
/*
 * log.c - the one place the library formats a message.
 *
 * Layer 1 (log): calls no other file of bufpool.
 *
 * Design note
 * -----------
 * Into a bounded stack buffer (a longer message is cut, never allocated
 * for: this also runs when memory is short), then to the embedder's
 * callback, if any, on the calling thread.  log and arg are those of the
 * bp_config, or of the pool that copied them.  The library writes nothing
 * to any stream itself.
 */
#include <stdarg.h>
#include <stdio.h>

#include "bufpool/internal.h"

void bp_log(void (*log)(void *, int, const char *), void *arg, int level, const char *fmt, ...)
{
	if (!log)
		return;
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log(arg, level, msg);
}
