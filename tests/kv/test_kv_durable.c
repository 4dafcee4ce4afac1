/* SPDX-License-Identifier: MIT */
/*
 * test_kv_durable.c - unit tests of the store's redo log and recovery
 * (tools/kv/kv_log.c, kv_recover.c, kv_open.c).
 *
 * Design note: through kv.h (and bufpool's fault injector) only.  A crash
 * is a child process that stops with _exit without closing the store: its
 * pool's frames and the log's buffer vanish, what it wrote to the files
 * stays, as after kill -9 (bpbench crashtest does the real kill).  The
 * parent then reopens (recovery) and checks.  Small pages (512 B, 10
 * values a leaf) make every test split, so records carry page images as
 * well as single upserts.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kv.h"
#include "../check_run.h"

#define VSIZE 40u

static char path[256], wal[300], ctl[300];

static void setup(void)
{
	snprintf(path, sizeof(path), "/tmp/test_kv_durable.%ld.%d.db", (long)getpid(), rand());
	snprintf(wal, sizeof(wal), "%s.wal", path);
	snprintf(ctl, sizeof(ctl), "%s.ctl", path);
}
static void teardown(void)
{
	unlink(path);
	unlink(wal);
	unlink(ctl);
}

static struct kv_config config(bool create, bool sync)
{
	struct kv_config c = {.path = path, .create = create, .truncate = create,
			      .value_size = VSIZE, .durable = true, .sync_commit = sync};
	c.pool.page_size = 512;
	c.pool.nframes = 32;
	return c;
}

static void make_value(uint8_t *v, uint64_t key, uint64_t ver)
{
	for (unsigned i = 0; i < VSIZE; i++)
		v[i] = (uint8_t)(key * 7 + ver * 13 + i);
	memcpy(v, &key, 8);
}

static uint64_t scatter(uint64_t i) { return (i * UINT64_C(0x9e3779b97f4a7c15)) ^ (i >> 3); }

/* Run fn in a child that then "crashes" (_exit, nothing closed); the
 * child's own failures come back as its exit status. */
static void crash_after(int (*fn)(void *), void *arg)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(fn(arg));
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child failed: status %d", st);
}

/* Reopen (recover), check the tree; *kv stays open. */
static void reopen_checked(struct kv_store **kv, uint64_t *recovered)
{
	struct kv_config c = config(false, false);
	ck_assert_int_eq(kv_open(kv, &c), 0);
	struct kv_check_info ci;
	ck_assert_msg(kv_check(*kv, &ci) == 0, "tree: %s", ci.error);
	struct kv_log_stats ls;
	ck_assert_int_eq(kv_log_stats(*kv, &ls), 0);
	if (recovered)
		*recovered = ls.recovered_records;
}

static int value_is(struct kv_store *kv, uint64_t key, uint64_t ver)
{
	uint8_t v[VSIZE], got[VSIZE];
	make_value(v, key, ver);
	int rc = kv_get(kv, key, got);
	return rc ? rc : memcmp(v, got, VSIZE) == 0 ? 0 : 1;
}

/* ---- Committed changes survive ------------------------------------------------ */

struct puts_arg {
	uint64_t n, ver;
	bool sync;
	uint64_t checkpoint_bytes;
};

static int child_puts(void *p)
{
	const struct puts_arg *a = p;
	struct kv_config c = config(true, a->sync);
	c.checkpoint_bytes = a->checkpoint_bytes;
	struct kv_store *kv;
	if (kv_open(&kv, &c))
		return 10;
	uint8_t v[VSIZE];
	for (uint64_t i = 0; i < a->n; i++) {
		make_value(v, scatter(i), a->ver);
		if (kv_put(kv, scatter(i), v) < 0)
			return 11;
	}
	if (!a->sync && kv_commit(kv))
		return 12;
	return 0; /* crash: no kv_close */
}

/* Every put that returned with sync_commit, and every put before a
 * kv_commit, is back after the crash, in a well-formed tree; the log was
 * really replayed (without it the file holds few of them: most pages were
 * never written). */
START_TEST(committed_puts_survive_a_crash)
{
	struct puts_arg a = {.n = 3000, .ver = 1, .sync = _i == 0, .checkpoint_bytes = 0};
	const char *how = a.sync ? "sync_commit" : "kv_commit"; /* the variant, _i 0 or 1 */
	crash_after(child_puts, &a);
	struct kv_store *kv;
	uint64_t recovered;
	reopen_checked(&kv, &recovered);
	ck_assert_msg(recovered > 0, "%s: nothing replayed", how);
	for (uint64_t i = 0; i < a.n; i++)
		ck_assert_msg(value_is(kv, scatter(i), 1) == 0, "%s: key %llu lost", how,
			      (unsigned long long)i);
	ck_assert_int_eq(kv_close(kv), 0);
	/* After a clean close nothing is left to replay. */
	reopen_checked(&kv, &recovered);
	ck_assert_msg(recovered == 0, "%s: %llu records replayed after a clean close", how,
		      (unsigned long long)recovered);
	ck_assert_msg(value_is(kv, scatter(7), 1) == 0, "%s: key 7 lost after a clean close", how);
	ck_assert_int_eq(kv_close(kv), 0);
}
END_TEST

/* Checkpoints run while it writes (every 8 KiB of log); the crash then
 * replays only what followed the last one, and nothing is lost. */
START_TEST(checkpoints_bound_recovery)
{
	struct puts_arg a = {.n = 3000, .ver = 1, .sync = false, .checkpoint_bytes = 8192};
	crash_after(child_puts, &a);
	struct kv_store *kv;
	uint64_t recovered;
	reopen_checked(&kv, &recovered);
	/* 3000 puts are >= 3000 records; one 8 KiB stretch holds < 100. */
	ck_assert_uint_lt(recovered, 200);
	for (uint64_t i = 0; i < a.n; i++)
		ck_assert_msg(value_is(kv, scatter(i), 1) == 0, "key %llu lost", (unsigned long long)i);
	ck_assert_int_eq(kv_close(kv), 0);
}
END_TEST

static int child_checkpoint_then_three(void *p)
{
	(void)p;
	struct kv_config c = config(true, true);
	struct kv_store *kv;
	uint8_t v[VSIZE];
	if (kv_open(&kv, &c))
		return 10;
	for (uint64_t i = 0; i < 500; i++) {
		make_value(v, i, 1);
		if (kv_put(kv, i, v) < 0)
			return 11;
	}
	if (kv_checkpoint(kv))
		return 12;
	for (uint64_t i = 0; i < 3; i++) { /* updates: one record each */
		make_value(v, i * 100, 2);
		if (kv_put(kv, i * 100, v) != 0)
			return 13;
	}
	return 0;
}

/* An explicit checkpoint moves the redo position: exactly the three
 * records after it are replayed, and they win over the checkpointed
 * values. */
START_TEST(recovery_starts_at_the_checkpoint)
{
	crash_after(child_checkpoint_then_three, NULL);
	struct kv_store *kv;
	uint64_t recovered;
	reopen_checked(&kv, &recovered);
	ck_assert_uint_eq(recovered, 3);
	for (uint64_t i = 0; i < 500; i++)
		ck_assert_int_eq(value_is(kv, i, i % 100 == 0 && i < 300 ? 2 : 1), 0);
	ck_assert_int_eq(kv_close(kv), 0);
}
END_TEST

/* ---- The torn tail --------------------------------------------------------------- */

/* A crash in the middle of a log write leaves a partial record at the
 * end: recovery stops before it, cuts it off, and the store goes on. */
START_TEST(torn_tail_is_cut)
{
	struct puts_arg a = {.n = 400, .ver = 1, .sync = true};
	crash_after(child_puts, &a);
	/* A record header that claims 4 KiB, then 100 bytes of it. */
	int fd = open(wal, O_WRONLY | O_APPEND);
	ck_assert_int_ge(fd, 0);
	off_t size = lseek(fd, 0, SEEK_END);
	uint8_t junk[124];
	memset(junk, 0x5a, sizeof(junk));
	uint32_t len = 4096;
	memcpy(junk + 4, &len, 4);
	ck_assert_int_eq(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
	close(fd);
	struct kv_store *kv;
	uint64_t recovered;
	reopen_checked(&kv, &recovered);
	ck_assert_uint_gt(recovered, 0);
	for (uint64_t i = 0; i < a.n; i++)
		ck_assert_int_eq(value_is(kv, scatter(i), 1), 0);
	uint8_t v[VSIZE];
	make_value(v, 12345, 3);
	ck_assert_int_eq(kv_put(kv, 12345, v), 1);
	ck_assert_int_eq(kv_close(kv), 0);
	reopen_checked(&kv, &recovered);
	ck_assert_int_eq(value_is(kv, 12345, 3), 0);
	ck_assert_int_eq(kv_close(kv), 0);
	(void)size;
}
END_TEST

static int child_torn_page(void *p)
{
	(void)p;
	struct kv_config c = config(true, true);
	/* No background writer: the torn write must be bp_flush's own. */
	c.pool.flags |= BP_OPEN_CHECKSUMS | BP_OPEN_NO_BGWRITER;
	struct kv_store *kv;
	uint8_t v[VSIZE];
	if (kv_open(&kv, &c))
		return 10;
	for (uint64_t i = 0; i < 300; i++) {
		make_value(v, i, 1);
		if (kv_put(kv, i, v) < 0)
			return 11;
	}
	if (kv_checkpoint(kv)) /* every page on disk, whole */
		return 12;
	make_value(v, 150, 2);
	if (kv_put(kv, 150, v) != 0) /* its leaf's first change since */
		return 13;
	/* The power fails while the leaf is written: half of it reaches the
	 * disk (a SHORT write), the rest stays old. */
	struct bp_fault fa = {.op = BP_FAULT_WRITE, .kind = BP_FAULT_SHORT};
	if (bp_fault_set(kv_pool(kv), &fa) || bp_flush(kv_pool(kv)) != -EIO)
		return 14;
	return 0;
}

/* A page torn on disk after a checkpoint is rebuilt from the image its
 * first change since logged (full page writes): recovery never reads it
 * (it fails its checksum), and the committed update on it is back. */
START_TEST(torn_page_is_rebuilt_from_its_image)
{
	crash_after(child_torn_page, NULL);
	struct kv_config c = config(false, false);
	c.pool.flags |= BP_OPEN_CHECKSUMS;
	struct kv_store *kv;
	ck_assert_int_eq(kv_open(&kv, &c), 0);
	struct kv_check_info ci;
	ck_assert_msg(kv_check(kv, &ci) == 0, "tree: %s", ci.error);
	for (uint64_t i = 0; i < 300; i++)
		ck_assert_int_eq(value_is(kv, i, i == 150 ? 2 : 1), 0);
	struct bp_stats st;
	bp_stats_init(&st);
	ck_assert_int_eq(bp_stats_get(kv_pool(kv), &st), 0);
	ck_assert_uint_eq(st.checksum_errors, 0); /* the torn page was not read */
	ck_assert_int_eq(kv_close(kv), 0);
}
END_TEST

/* ---- The write-ahead rule, and a pool that breaks it ------------------------------ */

static int child_fill_then_flush(void *p)
{
	bool broken = *(const bool *)p;
	struct kv_config c = config(true, false);
	struct kv_store *kv;
	uint8_t v[VSIZE];
	if (kv_open(&kv, &c))
		return 10;
	struct bp_fault fa = {.op = BP_FAULT_WRITE, .kind = BP_FAULT_NO_WAL};
	if (broken && bp_fault_set(kv_pool(kv), &fa))
		return 11;
	for (uint64_t i = 0; i < 200; i++) {
		make_value(v, i, 1);
		if (kv_put(kv, i, v) < 0)
			return 12;
	}
	/* Every page to disk; the write-ahead rule flushes the log first
	 * (unless broken).  Nothing was committed. */
	if (bp_flush(kv_pool(kv)))
		return 13;
	return 0;
}

static int child_commit_one(void *p)
{
	(void)p;
	struct kv_config c = config(false, true);
	/* Nothing writes the updated leaf before the crash (a background
	 * write would put the update in the file, log or no log). */
	c.pool.flags |= BP_OPEN_NO_BGWRITER;
	struct kv_store *kv;
	uint8_t v[VSIZE];
	if (kv_open(&kv, &c))
		return 10;
	make_value(v, 5, 2);
	return kv_put(kv, 5, v) == 0 ? 0 : 11; /* acknowledged: durable */
}

/* A page written with changes the log does not hold yet is a page from the
 * future: after the crash the log restarts below its LSN, and the redo rule
 * skips a later, committed change to it.  The correct pool flushes the log
 * before the page, so the committed update survives; the broken pool
 * (BP_FAULT_NO_WAL) loses it: the check this test makes can fail. */
START_TEST(write_ahead_rule_keeps_a_later_commit)
{
	bool broken = _i == 1;
	crash_after(child_fill_then_flush, &broken);
	crash_after(child_commit_one, NULL);
	struct kv_store *kv;
	reopen_checked(&kv, NULL);
	int rc = value_is(kv, 5, 2);
	if (broken)
		ck_assert_msg(rc != 0, "the broken pool kept the commit: the test is vacuous");
	else
		ck_assert_msg(rc == 0, "the committed update of key 5 was lost (%d)", rc);
	ck_assert_int_eq(kv_close(kv), 0);
}
END_TEST

/* ---- A log that cannot be written ------------------------------------------------ */

struct fail_arg {
	int pipe_w;
};

/* Puts with sync_commit until the log's file hits RLIMIT_FSIZE; each put
 * that returned 0 is reported through the pipe.  Then the failure must
 * be sticky. */
static int child_log_fails(void *p)
{
	const struct fail_arg *a = p;
	struct kv_config c = config(true, true);
	c.pool.nframes = 256; /* the store file itself stays small and cached */
	struct kv_store *kv;
	uint8_t v[VSIZE];
	if (kv_open(&kv, &c))
		return 10;
	signal(SIGXFSZ, SIG_IGN); /* a write past the limit fails with EFBIG */
	struct rlimit rl = {.rlim_cur = 64 << 10, .rlim_max = RLIM_INFINITY};
	if (setrlimit(RLIMIT_FSIZE, &rl))
		return 11;
	int rc = 0;
	uint64_t i;
	for (i = 0; i < 100000 && rc >= 0; i++) {
		make_value(v, i, 1);
		rc = kv_put(kv, i, v);
		if (rc >= 0 && write(a->pipe_w, &i, sizeof(i)) != sizeof(i))
			return 12;
	}
	if (rc != -EFBIG)
		return 13;
	/* Sticky: later commits fail too, and nothing more is acknowledged. */
	make_value(v, i, 1);
	if (kv_put(kv, i, v) != -EFBIG || kv_commit(kv) != -EFBIG)
		return 14;
	return 0;
}

/* A log write that fails (the file size limit: EFBIG) fails that commit
 * and every later one; every put acknowledged before it is back after the
 * crash, and the partial record the failed write left is cut. */
START_TEST(log_write_failure_is_sticky)
{
	int fds[2];
	ck_assert_int_eq(pipe(fds), 0);
	struct fail_arg a = {.pipe_w = fds[1]};
	crash_after(child_log_fails, &a);
	close(fds[1]);
	uint64_t acked[4096], n = 0, k;
	while (read(fds[0], &k, sizeof(k)) == (ssize_t)sizeof(k)) {
		ck_assert_uint_lt(n, 4096);
		acked[n++] = k;
	}
	close(fds[0]);
	ck_assert_uint_gt(n, 10); /* some got through before the limit */
	struct kv_store *kv;
	reopen_checked(&kv, NULL);
	for (uint64_t i = 0; i < n; i++)
		ck_assert_msg(value_is(kv, acked[i], 1) == 0, "acknowledged key %llu lost",
			      (unsigned long long)acked[i]);
	ck_assert_int_eq(kv_close(kv), 0);
}
END_TEST

/* ---- Bad input ---------------------------------------------------------------------- */

START_TEST(bad_input)
{
	struct kv_config c = config(true, false);
	c.durable = false;
	c.sync_commit = true; /* sync without a log */
	struct kv_store *kv;
	ck_assert_int_eq(kv_open(&kv, &c), -EINVAL);
	c.sync_commit = false;
	ck_assert_int_eq(kv_open(&kv, &c), 0);
	ck_assert_int_eq(kv_commit(kv), -EINVAL);
	ck_assert_int_eq(kv_checkpoint(kv), -EINVAL);
	struct kv_log_stats ls;
	ck_assert_int_eq(kv_log_stats(kv, &ls), 0);
	ck_assert_uint_eq(ls.records, 0);
	ck_assert_int_eq(kv_log_stats(NULL, &ls), -EINVAL);
	ck_assert_int_eq(kv_log_stats(kv, NULL), -EINVAL);
	ck_assert_int_eq(kv_commit(NULL), -EINVAL);
	ck_assert_int_eq(kv_close(kv), 0);
	/* A damaged control file is refused, not taken for an empty log. */
	c = config(true, false);
	ck_assert_int_eq(kv_open(&kv, &c), 0);
	ck_assert_int_eq(kv_close(kv), 0);
	int fd = open(ctl, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "garbage!", 8, 8), 8);
	close(fd);
	c = config(false, false);
	ck_assert_int_eq(kv_open(&kv, &c), -EBADMSG);
	c.durable = false; /* recovery runs for any store with a log */
	ck_assert_int_eq(kv_open(&kv, &c), -EBADMSG);
}
END_TEST

/* Without sync_commit and without a kv_commit, the log is still written
 * once KV_LOG_FLUSH_BYTES (8 MiB) are buffered: the buffer stays bounded,
 * and what was flushed survives a crash. */
START_TEST(uncommitted_log_is_flushed_when_large)
{
	struct kv_config c = config(true, false);
	/* No page write may flush the log first (the write-ahead rule would):
	 * a pool that holds the whole tree, no background writer. */
	c.pool.nframes = 16384;
	c.pool.flags |= BP_OPEN_NO_BGWRITER;
	struct kv_store *kv;
	uint8_t v[VSIZE];
	ck_assert_int_eq(kv_open(&kv, &c), 0);
	struct kv_log_stats l0, ls;
	ck_assert_int_eq(kv_log_stats(kv, &l0), 0); /* after the open's own flush */
	for (uint64_t i = 0; i < 200000; i++) {
		make_value(v, scatter(i), 1);
		ck_assert_int_ge(kv_put(kv, scatter(i), v), 0);
		ck_assert_int_eq(kv_log_stats(kv, &ls), 0);
		if (ls.fsyncs > l0.fsyncs)
			break;
	}
	ck_assert_uint_eq(ls.fsyncs, l0.fsyncs + 1);
	/* flushed at the bound, by the change that crossed it */
	ck_assert_uint_ge(ls.bytes - l0.bytes, (8u << 20) - 2048);
	ck_assert_uint_le(ls.bytes - l0.bytes, (8u << 20) + (64u << 10));
	ck_assert_uint_eq(ls.commits, 0);
	ck_assert_int_eq(kv_close(kv), 0);
}
END_TEST

/* Not durable, the store writes no log and keeps none. */
START_TEST(not_durable_has_no_log)
{
	struct kv_config c = config(true, false);
	c.durable = false;
	struct kv_store *kv;
	ck_assert_int_eq(kv_open(&kv, &c), 0);
	ck_assert_int_eq(kv_put(kv, 1, (uint8_t[VSIZE]){0}), 1);
	ck_assert_int_eq(kv_close(kv), 0);
	ck_assert_int_eq(access(ctl, F_OK), -1);
	ck_assert_int_eq(access(wal, F_OK), -1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kv durable");
	TCase *tc = tcase_create("durable");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, committed_puts_survive_a_crash, 0, 2);
	tcase_add_test(tc, checkpoints_bound_recovery);
	tcase_add_test(tc, recovery_starts_at_the_checkpoint);
	tcase_add_test(tc, torn_tail_is_cut);
	tcase_add_test(tc, torn_page_is_rebuilt_from_its_image);
	tcase_add_loop_test(tc, write_ahead_rule_keeps_a_later_commit, 0, 2);
	tcase_add_test(tc, log_write_failure_is_sticky);
	tcase_add_test(tc, uncommitted_log_is_flushed_when_large);
	tcase_add_test(tc, bad_input);
	tcase_add_test(tc, not_durable_has_no_log);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
