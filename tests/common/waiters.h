/* SPDX-License-Identifier: MIT */
/*
 * waiters.h - counting and printing the waiters parked in a table, for the
 * fwait unit tests' polls and joins and the stress programs' failure dumps.
 *
 * Design note: tests/common, on fwait.h's fwait_waiters_walk only (each
 * bucket exact while its lock is held, the table no snapshot: fine for a
 * poll that waits for a count to settle, and for a dump).  No state.
 */
#ifndef TESTS_COMMON_WAITERS_H
#define TESTS_COMMON_WAITERS_H

#include <stddef.h>

#include "fwait/fwait.h"

/* Waiters parked in t whose key is key and bit is bit (bit -1: any bit;
 * key NULL: every waiter). */
size_t tc_parked_on(struct fwait_table *t, const void *key, int bit);
/* Prints the first max_lines parked waiters of t on stderr, one line each,
 * then their count; returns the count.  t NULL: prints nothing, 0. */
size_t tc_dump_waiters(struct fwait_table *t, size_t max_lines);

#endif
