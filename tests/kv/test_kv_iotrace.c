/* SPDX-License-Identifier: MIT */
/*
 * test_kv_iotrace.c - the order of the store's file operations, seen
 * through the I/O trace hook (bufpool.h, "I/O tracing"): the orders a
 * power failure makes matter (issue 28's losses).
 *
 * Design note: through kv.h only.  A recorder keeps every event's op,
 * file and result in an array (a mutex: the pool's I/O threads report
 * too), and each test asserts an order in it; the power-loss test
 * (bpbench crashtest --power-loss) rebuilds the files themselves.  A
 * crash is a child that _exits without closing, as in test_kv_durable.c.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kv.h"
#include "../check_run.h"

#define VSIZE 40u
#define MAX_EV 200000u

static char path[256], wal[300], ctl[300], dirpath[32] = "/tmp";

enum which { F_DATA, F_WAL, F_CTL, F_TMP, F_DIR, F_OTHER };

struct ev {
	enum bp_io_trace_op op;
	enum which file;
	int result;
	unsigned flags;
	uint64_t offset, len;
};

static struct {
	pthread_mutex_t mu;
	struct ev ev[MAX_EV];
	unsigned n;
	enum which fail_file; /* inject -EIO at this file's fail_nth SYNC_BEGIN */
	unsigned fail_nth, syncs_seen;
} rec = {.mu = PTHREAD_MUTEX_INITIALIZER, .fail_file = F_OTHER};

static enum which which_file(const char *p)
{
	if (!p)
		return F_OTHER;
	if (strcmp(p, path) == 0)
		return F_DATA;
	if (strcmp(p, wal) == 0)
		return F_WAL;
	if (strcmp(p, ctl) == 0)
		return F_CTL;
	if (strncmp(p, ctl, strlen(ctl)) == 0)
		return F_TMP;
	return strcmp(p, dirpath) == 0 ? F_DIR : F_OTHER;
}

static int record(void *arg, const struct bp_io_trace_event *e)
{
	(void)arg;
	int r = 0;
	pthread_mutex_lock(&rec.mu);
	enum which w = which_file(e->path);
	if (e->op == BP_IO_TRACE_SYNC_BEGIN && w == rec.fail_file && ++rec.syncs_seen == rec.fail_nth)
		r = -EIO;
	if (rec.n < MAX_EV)
		rec.ev[rec.n++] = (struct ev){e->op, e->op == BP_IO_TRACE_RENAME
			? which_file(e->path2) : w, e->result, e->flags, e->offset, e->len};
	pthread_mutex_unlock(&rec.mu);
	return r;
}

static void rec_reset(void)
{
	pthread_mutex_lock(&rec.mu);
	rec.n = 0;
	rec.fail_file = F_OTHER;
	rec.fail_nth = rec.syncs_seen = 0;
	pthread_mutex_unlock(&rec.mu);
}

/* The index of the first event of op on file at or after from, or -1. */
static long find(unsigned from, enum bp_io_trace_op op, enum which file)
{
	for (unsigned i = from; i < rec.n; i++)
		if (rec.ev[i].op == op && rec.ev[i].file == file)
			return i;
	return -1;
}

static void setup(void)
{
	snprintf(path, sizeof(path), "/tmp/test_kv_iotrace.%ld.%d.db", (long)getpid(), rand());
	snprintf(wal, sizeof(wal), "%s.wal", path);
	snprintf(ctl, sizeof(ctl), "%s.ctl", path);
	rec_reset();
}
static void teardown(void)
{
	unlink(path);
	unlink(wal);
	unlink(ctl);
}

static struct kv_config config(bool create, uint32_t nframes)
{
	struct kv_config c = {.path = path, .create = create, .truncate = create,
			      .value_size = VSIZE, .durable = true};
	c.pool.page_size = 512;
	c.pool.nframes = nframes;
	c.pool.io_trace = record;
	return c;
}

static uint64_t scatter(uint64_t i) { return (i * UINT64_C(0x9e3779b97f4a7c15)) ^ (i >> 3); }

/* A child that writes n keys, commits, and dies without closing: the log
 * holds them all, the file few, and the log's last writes were never
 * synced by anyone but that child. */
static void crash_after_puts(uint64_t n)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct kv_config c = config(true, 64);
		c.pool.io_trace = NULL;
		struct kv_store *kv;
		if (kv_open(&kv, &c))
			_exit(10);
		uint8_t v[VSIZE] = {1};
		for (uint64_t i = 0; i < n; i++)
			if (kv_put(kv, scatter(i), v) < 0)
				_exit(11);
		_exit(kv_commit(kv) ? 12 : 0);
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child failed: status %d", st);
}

/* Recovery writes back every log record it read and syncs the log before
 * the pool writes any page: a page stamped with a record's LSN never
 * reaches the file while that record may exist only in the page cache
 * (the dead process's unsynced write, or a page a failed fdatasync left
 * clean).  The pool is small (8 frames), so replay itself evicts dirty
 * pages.  Before issue 28: no record was written back, and the first page
 * write came before the log's first sync. */
START_TEST(recovery_makes_the_log_durable_before_any_page_write)
{
	crash_after_puts(2000);
	struct kv_config c = config(false, 8);
	struct kv_store *kv;
	ck_assert_int_eq(kv_open(&kv, &c), 0);
	pthread_mutex_lock(&rec.mu);
	long first_page = find(0, BP_IO_TRACE_WRITE, F_DATA);
	long rewrite = find(0, BP_IO_TRACE_WRITE, F_WAL);
	long sync = rewrite < 0 ? -1 : find((unsigned)rewrite, BP_IO_TRACE_SYNC_END, F_WAL);
	ck_assert_msg(first_page >= 0, "recovery wrote no page (the test needs it to)");
	ck_assert_msg(rewrite >= 0 && rewrite < first_page,
		      "no log record was written back before the first page write (event %ld)",
		      first_page);
	ck_assert_msg(sync >= 0 && sync < first_page && rec.ev[sync].result == 0,
		      "the log was not synced before the first page write (event %ld)", first_page);
	/* the rewrite covers the whole log, from offset 0 (redo = base) */
	ck_assert_uint_eq(rec.ev[rewrite].offset, 0);
	pthread_mutex_unlock(&rec.mu);
	struct kv_check_info ci;
	ck_assert_msg(kv_check(kv, &ci) == 0, "tree: %s", ci.error);
	uint8_t got[VSIZE];
	for (uint64_t i = 0; i < 2000; i++)
		ck_assert_int_eq(kv_get(kv, scatter(i), got), 0);
	ck_assert_int_eq(kv_close(kv), 0);
}
END_TEST

/* A log whose recovery cannot sync it (an injected EIO at the log's first
 * sync) opens nothing: kv_open fails, and no page was written. */
START_TEST(recovery_fails_when_the_log_cannot_be_synced)
{
	crash_after_puts(500);
	rec.fail_file = F_WAL;
	rec.fail_nth = 1;
	struct kv_config c = config(false, 8);
	struct kv_store *kv;
	ck_assert_int_eq(kv_open(&kv, &c), -EIO);
	ck_assert_int_lt(find(0, BP_IO_TRACE_WRITE, F_DATA), 0);
	rec_reset();
	ck_assert_int_eq(kv_open(&kv, &c), 0); /* the next try, without the fault */
	ck_assert_int_eq(kv_close(kv), 0);
}
END_TEST

/* A truncating open records its intent in the control file (renamed in
 * and its directory synced) before it changes the store file or the log:
 * else a power failure brings back the old pages, with LSNs far above the
 * new log's (the redo rule then skips every new record on them), or
 * leaves the emptied file under the old, used log (-EBADMSG).  Before
 * issue 28 the file was emptied by the open's O_TRUNC, never synced, and
 * the log restarted after it.  An open cut short after the intent empties
 * the file itself and finishes the truncation: the old keys are gone. */
START_TEST(truncating_open_records_its_intent_first)
{
	struct kv_config c = config(true, 32);
	struct kv_store *kv;
	uint8_t v[VSIZE] = {2}, got[VSIZE];
	ck_assert_int_eq(kv_open(&kv, &c), 0);
	for (uint64_t i = 0; i < 500; i++)
		ck_assert_int_ge(kv_put(kv, scatter(i), v), 0);
	ck_assert_int_eq(kv_close(kv), 0);
	rec_reset();
	ck_assert_int_eq(kv_open(&kv, &c), 0); /* truncate */
	pthread_mutex_lock(&rec.mu);
	long renamed = find(0, BP_IO_TRACE_RENAME, F_CTL);
	long dirsync = renamed < 0 ? -1 : find((unsigned)renamed, BP_IO_TRACE_SYNC_END, F_DIR);
	ck_assert_msg(dirsync >= 0, "no control file was made durable");
	for (long i = 0; i < dirsync; i++)
		ck_assert_msg((rec.ev[i].file != F_DATA && rec.ev[i].file != F_WAL) ||
			      (rec.ev[i].op == BP_IO_TRACE_OPEN &&
			       !(rec.ev[i].flags & BP_IO_TRACE_TRUNC)),
			      "event %ld (op %d) changed the store file or the log before the "
			      "truncation's intent was durable (event %ld)",
			      i, (int)rec.ev[i].op, dirsync);
	pthread_mutex_unlock(&rec.mu);
	ck_assert_int_eq(kv_get(kv, scatter(7), got), -ENOENT);
	for (uint64_t i = 0; i < 500; i++)
		ck_assert_int_ge(kv_put(kv, scatter(i), v), 0);
	ck_assert_int_eq(kv_close(kv), 0);
	/* Cut short after the intent (the log's second sync fails: the
	 * first cuts the old .wal, the second is replay's): the next open,
	 * without truncate, finishes the truncation. */
	rec_reset();
	rec.fail_file = F_WAL;
	rec.fail_nth = 2;
	ck_assert_int_lt(kv_open(&kv, &c), 0);
	rec_reset();
	struct kv_config again = config(false, 32);
	ck_assert_int_eq(kv_open(&kv, &again), 0);
	ck_assert_int_eq(kv_get(kv, scatter(7), got), -ENOENT);
	struct kv_check_info ci;
	ck_assert_msg(kv_check(kv, &ci) == 0, "tree: %s", ci.error);
	ck_assert_int_eq(kv_close(kv), 0);
}
END_TEST

/* A first kv_open cut short once the control file is in but before the
 * store was formatted (here: the directory's sync fails) leaves an empty
 * file and an unused log; an open without create formats it, where it
 * said -EBADMSG before issue 28 and the operator was stuck. */
START_TEST(an_interrupted_first_open_is_finished_later)
{
	rec.fail_file = F_DIR;
	rec.fail_nth = 1;
	struct kv_config c = config(true, 32);
	struct kv_store *kv;
	ck_assert_int_eq(kv_open(&kv, &c), -EIO);
	ck_assert_int_eq(access(ctl, F_OK), 0);
	rec_reset();
	c = config(false, 32);
	ck_assert_int_eq(kv_open(&kv, &c), 0);
	uint8_t v[VSIZE] = {3}, got[VSIZE];
	ck_assert_int_ge(kv_put(kv, 42, v), 0);
	ck_assert_int_eq(kv_get(kv, 42, got), 0);
	ck_assert_int_eq(kv_close(kv), 0);
	/* a used store's empty file is still refused */
	ck_assert_int_eq(truncate(path, 0), 0);
	ck_assert_int_eq(kv_open(&kv, &c), -EBADMSG);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("kv iotrace");
	TCase *tc = tcase_create("order");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, recovery_makes_the_log_durable_before_any_page_write);
	tcase_add_test(tc, recovery_fails_when_the_log_cannot_be_synced);
	tcase_add_test(tc, truncating_open_records_its_intent_first);
	tcase_add_test(tc, an_interrupted_first_open_is_finished_later);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(suite());
}
