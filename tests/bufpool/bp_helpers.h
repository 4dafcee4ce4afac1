/* SPDX-License-Identifier: MIT */
/*
 * bp_helpers.h - shared scaffolding of the bufpool unit tests.
 *
 * Design note: each test works in its own mkdtemp directory under /tmp,
 * removed (with its files) at the end.  Every wait in a test is bounded:
 * threads are joined against a deadline, and "is a thread parked yet?" is
 * answered by polling the pool's fwait table with a deadline.  Nothing
 * sleeps to synchronise; workers record what they saw and the Check thread
 * asserts.
 */
#ifndef TESTS_BUFPOOL_BP_HELPERS_H
#define TESTS_BUFPOOL_BP_HELPERS_H

#include <check.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bufpool/bufpool.h"

#define BT_DEADLINE_MS 30000u

/* Checks for loop tests (tcase_add_loop_test): as ck_assert, the
 * ck_assert_int/uint comparisons and ck_assert_ptr_eq/ne, with a message
 * that begins with the variant's name v, so that a failure says which
 * variant failed and not only Check's loop index.  OP is the comparison
 * (==, !=, <, <=, >, >=).  Each operand is evaluated once. */
#define bt_check_v(v, E) ck_assert_msg((E), "%s: assertion '%s' failed", (v), #E)
#define bt_cmp_v(v, T, FMT, X, OP, Y)                                                  \
	do {                                                                           \
		T bt_x_ = (X);                                                         \
		T bt_y_ = (Y);                                                         \
		ck_assert_msg(bt_x_ OP bt_y_, "%s: assertion '%s " #OP " %s' failed: "  \
			      FMT ", " FMT, (v), #X, #Y, bt_x_, bt_y_);                \
	} while (0)
#define bt_int_v(v, X, OP, Y) bt_cmp_v(v, intmax_t, "%jd", X, OP, Y)
#define bt_uint_v(v, X, OP, Y) bt_cmp_v(v, uintmax_t, "%ju", X, OP, Y)
#define bt_ptr_v(v, X, OP, Y) bt_cmp_v(v, const void *, "%p", X, OP, Y)

struct bt_dir {
	char path[128];
	char file[160];
};

/* Unchecked fixture (runs in the Check parent, so it also runs when a
 * forked test fails): mkdtemp("/tmp/bufpool-test-XXXXXX") as the root of
 * every test directory; the teardown removes the whole tree. */
void bt_root_make(void);
void bt_root_remove(void);
/* A fresh directory under the root; file = path + "/pages". */
void bt_dir_make(struct bt_dir *d);
/* Removes the file and the directory. */
void bt_dir_remove(struct bt_dir *d);

/* A config for d->file: nframes, no background writer unless bgwriter,
 * no readahead; create. */
struct bp_config bt_config(const struct bt_dir *d, uint32_t nframes, bool bgwriter);
/* A pool of nframes on d->file truncated to nothing (bt_config's, no
 * background writer); fails the test if it does not open. */
struct bp_pool *bt_open_empty(const struct bt_dir *d, uint32_t nframes);

/* A bp_config.log that keeps what it is given, for tests of the messages:
 * each message appended to text as one line (cut when text is full). */
struct bt_log {
	unsigned n;         /* messages so far */
	int level;          /* of the last one */
	bool newline;       /* some message held a '\n' (none may) */
	char text[2048];
};
void bt_log_fn(void *log_arg, int level, const char *msg);
/* Clear *l and make it c's log: c->log = bt_log_fn, c->log_arg = l. */
void bt_log_into(struct bp_config *c, struct bt_log *l);
void bt_log_clear(struct bt_log *l);

/* stderr sent to a file of d from bt_stderr_begin to bt_stderr_end, which
 * restores it and copies what was written meanwhile into buf (NUL-ended,
 * possibly empty), for tests that the library writes nothing there. */
struct bt_stderr {
	int fd, saved;
	char path[200];
};
void bt_stderr_begin(const struct bt_dir *d, struct bt_stderr *s);
void bt_stderr_end(struct bt_stderr *s, char *buf, size_t len);

/* Threads, bounded joins and "is it parked yet?" polls are the fwait
 * tests' scaffolding (th_spawn, th_join_all, th_wait_parked, th_scaled). */
#include "../fwait/helpers.h"

/* Truncate d's file and write npages pages of bt_fill(pageno, version)
 * into it through a pool, closed again. */
void bt_make_file(const struct bt_dir *d, uint64_t npages, uint64_t version);

/* Fill page with a pattern derived from (pageno, version); check it. */
void bt_fill(void *page, uint32_t size, uint64_t pageno, uint64_t version);
bool bt_check(const void *page, uint32_t size, uint64_t pageno, uint64_t version);

/* Flags of the frame currently holding pageno (UINT32_MAX if none). */
uint32_t bt_flags_of(struct bp_pool *pool, uint64_t pageno);
/* Snapshot of the frame currently holding pageno (its latch holders and
 * waiters among the rest); false if none does. */
bool bt_frame_of(struct bp_pool *pool, uint64_t pageno, struct bp_frame_info *out);

#endif
