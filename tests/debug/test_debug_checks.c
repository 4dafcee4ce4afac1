/* SPDX-License-Identifier: MIT */
/*
 * test_debug_checks.c - the debug-checks build (-Ddebug_checks=true)
 * catches what it says it catches (util/debug.h, docs/reliability.md).
 *
 * Each misuse runs in a forked child, which must die of SIGABRT with the
 * check's message on its stderr; the parent asserts both.  On a build
 * without the checks (or the code before them) the child does not abort:
 * marking a page dirty without the latch returns 0 and the child exits 0,
 * latching exclusive twice waits for itself forever, and alarm() ends that
 * child with SIGALRM; either way the test fails.  Each misuse has a
 * control beside it, the same calls done right, which must exit 0: the
 * checks do not fire on correct use.
 * Registered only in the debug-checks build (tests/debug/meson.build).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bufpool/bufpool.h"
#include "fwait/fwait.h"
#include "util/debug.h"
#include "../bufpool/bp_helpers.h"
#include "../check_run.h"

#define CHILD_ALARM_S 5u /* a child that has not aborted by then hangs */

static struct bt_dir dir;

static void setup(void) { bt_dir_make(&dir); }
static void teardown(void) { bt_dir_remove(&dir); }

/* Run fn in a child with its stderr in a file; its wait status, and what
 * it wrote to stderr into out. */
static int run_child(void (*fn)(void), char *out, size_t len)
{
	char path[200];
	snprintf(path, sizeof(path), "%s/stderr", dir.path);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	fflush(NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fd, STDERR_FILENO);
		/* Check's own SIGALRM handler (its test timeout, inherited)
		 * would kill the whole test: the default ends this child. */
		signal(SIGALRM, SIG_DFL);
		alarm(CHILD_ALARM_S);
		fn();
		_exit(0);
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ssize_t n = pread(fd, out, len - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(path);
	return status;
}

/* fn must abort (SIGABRT, not SIGALRM: a hang), saying want on stderr. */
static void expect_abort(const char *what, void (*fn)(void), const char *want)
{
	char err[2048];
	int status = run_child(fn, err, sizeof(err));
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
		      "%s: the child did not abort (%s %d); stderr: %s", what,
		      WIFSIGNALED(status) ? "signal" : "exit status",
		      WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), err);
	ck_assert_msg(strstr(err, want) != NULL, "%s: stderr lacks \"%s\": %s", what, want, err);
}

/* fn, the same calls done right, must exit 0 with nothing on stderr. */
static void expect_clean(const char *what, void (*fn)(void))
{
	char err[2048];
	int status = run_child(fn, err, sizeof(err));
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "%s: the child failed (status 0x%x); stderr: %s", what, status, err);
	ck_assert_msg(err[0] == '\0', "%s: stderr: %s", what, err);
}

/* ---- bufpool: the content latch ---- */

static struct bp_pool *child_pool;
static struct bp_frame *child_frame;
static struct bt_log child_log;

/* In the child: a pool with one new page, pinned. */
static void child_open(void)
{
	struct bp_config c = bt_config(&dir, 8, false);
	bt_log_into(&c, &child_log);
	uint64_t pg;
	if (bp_open(&child_pool, &c) != 0 || bp_new_page(child_pool, &pg, &child_frame) != 0)
		_exit(3);
}

static void dirty_unlatched(void)
{
	child_open();
	bp_mark_dirty(child_pool, child_frame);
}

static void dirty_shared(void)
{
	child_open();
	bp_latch(child_pool, child_frame, BP_LATCH_SHARED);
	bp_mark_dirty(child_pool, child_frame);
}

static void dirty_latched(void)
{
	child_open();
	if (bp_latch(child_pool, child_frame, BP_LATCH_EXCLUSIVE) != 0 ||
	    bp_mark_dirty(child_pool, child_frame) != 0 ||
	    bp_mark_dirty_lsn(child_pool, child_frame, 7) != 0 ||
	    bp_unlatch(child_pool, child_frame, BP_LATCH_EXCLUSIVE) != 0 ||
	    bp_latch_try(child_pool, child_frame, BP_LATCH_EXCLUSIVE) != 0 ||
	    bp_mark_dirty(child_pool, child_frame) != 0 ||
	    bp_unlatch(child_pool, child_frame, BP_LATCH_EXCLUSIVE) != 0 ||
	    bp_release(child_pool, child_frame) != 0 || bp_close(child_pool) != 0)
		_exit(4);
	/* The message went to the pool's log callback too: none on success. */
	if (child_log.n != 0)
		_exit(5);
}

/* After an unlatch the thread no longer holds it: dirtying is a misuse. */
static void dirty_after_unlatch(void)
{
	child_open();
	bp_latch(child_pool, child_frame, BP_LATCH_EXCLUSIVE);
	bp_unlatch(child_pool, child_frame, BP_LATCH_EXCLUSIVE);
	bp_mark_dirty(child_pool, child_frame);
}

static void latch_x_twice(void)
{
	child_open();
	bp_latch(child_pool, child_frame, BP_LATCH_EXCLUSIVE);
	bp_latch(child_pool, child_frame, BP_LATCH_EXCLUSIVE);
}

static void latch_s_under_x(void)
{
	child_open();
	bp_latch(child_pool, child_frame, BP_LATCH_EXCLUSIVE);
	bp_latch(child_pool, child_frame, BP_LATCH_SHARED);
}

static void latch_x_relatch(void)
{
	child_open();
	for (int i = 0; i < 3; i++)
		if (bp_latch(child_pool, child_frame, BP_LATCH_EXCLUSIVE) != 0 ||
		    bp_unlatch(child_pool, child_frame, BP_LATCH_EXCLUSIVE) != 0)
			_exit(4);
	if (bp_latch(child_pool, child_frame, BP_LATCH_SHARED) != 0 ||
	    bp_latch(child_pool, child_frame, BP_LATCH_SHARED) != 0 ||
	    bp_unlatch(child_pool, child_frame, BP_LATCH_SHARED) != 0 ||
	    bp_unlatch(child_pool, child_frame, BP_LATCH_SHARED) != 0)
		_exit(4);
}

START_TEST(mark_dirty_needs_exclusive_latch)
{
	const char *want = "bp_mark_dirty: the caller does not hold the frame's exclusive latch";
	expect_abort("bp_mark_dirty unlatched", dirty_unlatched, want);
	expect_abort("bp_mark_dirty under the shared latch", dirty_shared, want);
	expect_abort("bp_mark_dirty after bp_unlatch", dirty_after_unlatch, want);
	expect_clean("bp_mark_dirty under the exclusive latch", dirty_latched);
}
END_TEST

START_TEST(latch_twice_is_caught_before_it_blocks)
{
	const char *want = "holds the frame's exclusive latch already (self-deadlock)";
	expect_abort("bp_latch exclusive twice", latch_x_twice, want);
	expect_abort("bp_latch shared under own exclusive", latch_s_under_x, want);
	expect_clean("bp_latch after bp_unlatch, shared twice", latch_x_relatch);
}
END_TEST

/* ---- fwait: a ready() callback calling into its table ---- */

static struct fwait_table *child_table;
static int child_key[2];

static bool ready_calls_wake(void *arg)
{
	static int calls;
	(void)arg;
	/* The first call is made before the bucket lock, the next under it. */
	if (calls++ > 0)
		fwait_wake(child_table, &child_key[1], 1);
	return calls > 1;
}

static void ready_reenters(void)
{
	if (fwait_table_create(&child_table, NULL) != 0)
		_exit(3);
	struct timespec dl = fwait_deadline_after_ns(1000000000u);
	fwait_wait(child_table, &child_key[0], FWAIT_PRECHECK, ready_calls_wake, NULL, &dl);
}

START_TEST(ready_callback_must_not_call_its_table)
{
	expect_abort("fwait_wake from ready()", ready_reenters,
		     "fwait_wake called under a bucket or pool lock");
}
END_TEST

/* ---- the witness itself: lock ranks, "held" ---- */

static pthread_mutex_t m_low, m_leaf;

static void witness_setup(void)
{
	pthread_mutex_init(&m_low, NULL);
	pthread_mutex_init(&m_leaf, NULL);
	debug_lock_rank(&m_low, UTIL_RANK_BP_FILES, "test low");
	debug_lock_rank(&m_leaf, UTIL_RANK_LEAF, "test leaf");
}

static void lock(pthread_mutex_t *m)
{
	fwait_witness_lock(m, false, __FILE__, __LINE__);
	pthread_mutex_lock(m);
}

static void unlock(pthread_mutex_t *m)
{
	fwait_witness_unlock(m, __FILE__, __LINE__);
	pthread_mutex_unlock(m);
}

static void rank_inverted(void)
{
	witness_setup();
	lock(&m_leaf);
	lock(&m_low);
}

static void rank_equal(void)
{
	pthread_mutex_t other = PTHREAD_MUTEX_INITIALIZER;
	witness_setup();
	debug_lock_rank(&other, UTIL_RANK_LEAF, "test leaf 2");
	lock(&m_leaf);
	lock(&other);
}

static void rank_in_order(void)
{
	witness_setup();
	lock(&m_low);
	debug_assert_held(&m_low);
	debug_assert_below_rank(UTIL_RANK_LEAF);
	lock(&m_leaf);
	debug_assert_held(&m_leaf);
	unlock(&m_leaf);
	debug_assert_not_held(&m_leaf);
	unlock(&m_low);
	debug_assert_below_rank(UTIL_RANK_BP_FILES);
}

static void held_not_held(void)
{
	witness_setup();
	lock(&m_low);
	unlock(&m_low);
	debug_assert_held(&m_low);
}

static void unranked(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	lock(&m);
}

START_TEST(lock_ranks)
{
	expect_abort("leaf, then a lower rank", rank_inverted,
		     "lock order: taking test low (rank 1) while holding test leaf (rank 3)");
	expect_abort("two locks of one rank", rank_equal,
		     "lock order: taking test leaf 2 (rank 3) while holding test leaf (rank 3)");
	expect_abort("a lock with no rank", unranked, "has no rank");
	expect_clean("in rank order", rank_in_order);
}
END_TEST

START_TEST(assert_held)
{
	expect_abort("debug_assert_held of a released lock", held_not_held,
		     "lock not held: &m_low");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("debug checks");
	TCase *tc = tcase_create("misuse");
	tcase_add_unchecked_fixture(tc, bt_root_make, bt_root_remove);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, mark_dirty_needs_exclusive_latch);
	tcase_add_test(tc, latch_twice_is_caught_before_it_blocks);
	tcase_add_test(tc, ready_callback_must_not_call_its_table);
	tcase_add_test(tc, lock_ranks);
	tcase_add_test(tc, assert_held);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(suite());
}
