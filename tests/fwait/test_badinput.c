/* SPDX-License-Identifier: MIT */
/*
 * test_badinput.c - checks, row by row, the "Bad input" table of
 * docs/reliability.md: every public fwait function given NULL pointers,
 * out-of-range bits, unknown flags or policies, malformed deadlines, or a
 * lock it does not hold, returns the documented errno (or is a documented
 * no-op) and changes nothing.  Each row runs under every policy.
 *
 * Design note: single-threaded, so a call that hangs instead of failing
 * makes the test time out (meson's timeout), which is a failure.  A bit
 * that would make a call sleep is held first, so an argument check that
 * came after the sleep would show up as a hang, not pass by luck.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fwait/fwait.h"

static int failures, checks;

#define EXPECT_EQ(row, got, want)                                                   \
	do {                                                                        \
		long long g_ = (long long)(got), w_ = (long long)(want);            \
		checks++;                                                           \
		if (g_ != w_) {                                                     \
			failures++;                                                 \
			fprintf(stderr, "FAIL [%s] %s: %s = %lld, want %lld\n",     \
				policy, row, #got, g_, w_);                          \
		}                                                                   \
	} while (0)

static bool yes(void *arg)
{
	return true;
}

static void no_done(struct fwait_async *a, uint64_t token, void *arg)
{
	(void)a;
	(void)token;
	(void)arg;
}

static bool never(void *arg)
{
	return false;
}

static int count_fn(const struct fwait_waiter_info *w, void *arg)
{
	return 0;
}

static void table_rows(void)
{
	const char *policy = "-";
	struct fwait_table *t = (struct fwait_table *)0x1; /* must stay untouched */
	struct fwait_config cfg = { 0 };

	EXPECT_EQ("create: NULL out", fwait_table_create(NULL, NULL), -EINVAL);
	cfg.policy = FWAIT_POLICY_COUNT;
	EXPECT_EQ("create: unknown policy", fwait_table_create(&t, &cfg), -EINVAL);
	cfg.policy = (enum fwait_policy)-1;
	EXPECT_EQ("create: negative policy", fwait_table_create(&t, &cfg), -EINVAL);
	cfg.policy = FWAIT_WAKE_ONE;
	cfg.nbuckets = (1u << 24) + 1;
	EXPECT_EQ("create: nbuckets > 2^24", fwait_table_create(&t, &cfg), -EINVAL);
	cfg.nbuckets = ~0u;
	EXPECT_EQ("create: nbuckets = UINT_MAX", fwait_table_create(&t, &cfg), -EINVAL);
	EXPECT_EQ("create: *out untouched on error", (uintptr_t)t, 1);

	EXPECT_EQ("create: NULL cfg = defaults", fwait_table_create(&t, NULL), 0);
	struct fwait_stats st;
	fwait_stats_get(t, &st);
	EXPECT_EQ("create: NULL cfg gives 256 buckets", st.nbuckets, 256);
	fwait_table_destroy(t);
	cfg.nbuckets = 3;
	EXPECT_EQ("create: nbuckets 3", fwait_table_create(&t, &cfg), 0);
	fwait_stats_get(t, &st);
	EXPECT_EQ("create: nbuckets rounded up to 4", st.nbuckets, 4);
	fwait_table_destroy(t);

	fwait_table_destroy(NULL); /* no-op */
	EXPECT_EQ("table_policy: NULL", fwait_table_policy(NULL), FWAIT_POLICY_COUNT);
	struct timespec ok_dl = { 0, 999999999L }, big_ns = { 1, 1000000000L },
		neg_ns = { 1, -1 }, neg_s = { -1, 0 };
	EXPECT_EQ("deadline_valid: NULL", fwait_deadline_valid(NULL), true);
	EXPECT_EQ("deadline_valid: tv_nsec 999999999", fwait_deadline_valid(&ok_dl), true);
	EXPECT_EQ("deadline_valid: tv_nsec 1e9", fwait_deadline_valid(&big_ns), false);
	EXPECT_EQ("deadline_valid: tv_nsec -1", fwait_deadline_valid(&neg_ns), false);
	EXPECT_EQ("deadline_valid: tv_sec -1", fwait_deadline_valid(&neg_s), false);
	EXPECT_EQ("policy_name: out of range",
		  strcmp(fwait_policy_name(FWAIT_POLICY_COUNT), "invalid"), 0);
	EXPECT_EQ("policy_name: negative",
		  strcmp(fwait_policy_name((enum fwait_policy)-1), "invalid"), 0);
	enum fwait_policy p = FWAIT_WAKE_ALL;
	EXPECT_EQ("policy_parse: NULL name", fwait_policy_parse(NULL, &p), -EINVAL);
	EXPECT_EQ("policy_parse: NULL out", fwait_policy_parse("wake-one", NULL), -EINVAL);
	EXPECT_EQ("policy_parse: unknown", fwait_policy_parse("wake_one", &p), -EINVAL);
	EXPECT_EQ("policy_parse: empty", fwait_policy_parse("", &p), -EINVAL);
	EXPECT_EQ("policy_parse: out untouched", p, FWAIT_WAKE_ALL);
}

static void policy_rows(enum fwait_policy pol)
{
	const char *policy = fwait_policy_name(pol);
	struct fwait_config cfg = { .nbuckets = 4, .policy = pol };
	struct fwait_table *t;
	int rc = fwait_table_create(&t, &cfg);
	if (rc == -ENOTSUP) {
		printf("%s: not supported here, skipped\n", policy);
		return;
	}
	EXPECT_EQ("create", rc, 0);
	if (rc)
		return;

	_Atomic uint32_t word = 0, held = 0;
	static const unsigned bad_bits[] = { 31, 32, 63, 1000, ~0u };
	static const struct timespec bad_dl[] = {
		{ .tv_sec = 0, .tv_nsec = 1000000000L },
		{ .tv_sec = 0, .tv_nsec = -1 },
		{ .tv_sec = -1, .tv_nsec = 0 },
	};
	int key = 0;

	/* held bit 0 of `held`: a call that got past its checks would sleep */
	EXPECT_EQ("setup: trylock", fwait_bit_trylock(&held, 0), 0);

	for (size_t i = 0; i < sizeof(bad_bits) / sizeof(bad_bits[0]); i++) {
		unsigned b = bad_bits[i];
		EXPECT_EQ("bit_lock: bit > 30", fwait_bit_lock(t, &word, b, NULL), -EINVAL);
		EXPECT_EQ("bit_trylock: bit > 30", fwait_bit_trylock(&word, b), -EINVAL);
		EXPECT_EQ("bit_unlock: bit > 30", fwait_bit_unlock(t, &word, b), -EINVAL);
		EXPECT_EQ("bit_wait: bit > 30", fwait_bit_wait(t, &word, b, NULL), -EINVAL);
		EXPECT_EQ("bit_clear: bit > 30", fwait_bit_clear(t, &word, b), -EINVAL);
		EXPECT_EQ("bit_set: bit > 30", fwait_bit_set(&word, b), false);
		EXPECT_EQ("bit_test: bit > 30", fwait_bit_test(&word, b), false);
	}
	EXPECT_EQ("bad bits leave the word alone", atomic_load(&word), 0);

	EXPECT_EQ("bit_lock: NULL table", fwait_bit_lock(NULL, &word, 0, NULL), -EINVAL);
	EXPECT_EQ("bit_lock: NULL word", fwait_bit_lock(t, NULL, 0, NULL), -EINVAL);
	EXPECT_EQ("bit_trylock: NULL word", fwait_bit_trylock(NULL, 0), -EINVAL);
	EXPECT_EQ("bit_unlock: NULL table", fwait_bit_unlock(NULL, &held, 0), -EINVAL);
	EXPECT_EQ("bit_unlock: NULL word", fwait_bit_unlock(t, NULL, 0), -EINVAL);
	EXPECT_EQ("bit_wait: NULL table", fwait_bit_wait(NULL, &held, 0, NULL), -EINVAL);
	EXPECT_EQ("bit_wait: NULL word", fwait_bit_wait(t, NULL, 0, NULL), -EINVAL);
	EXPECT_EQ("bit_set: NULL word", fwait_bit_set(NULL, 0), false);
	EXPECT_EQ("bit_clear: NULL table", fwait_bit_clear(NULL, &word, 0), -EINVAL);
	EXPECT_EQ("bit_clear: NULL word", fwait_bit_clear(t, NULL, 0), -EINVAL);
	EXPECT_EQ("bit_test: NULL word", fwait_bit_test(NULL, 0), false);

	for (size_t i = 0; i < sizeof(bad_dl) / sizeof(bad_dl[0]); i++) {
		EXPECT_EQ("bit_lock: malformed deadline (bit held)",
			  fwait_bit_lock(t, &held, 0, &bad_dl[i]), -EINVAL);
		EXPECT_EQ("bit_wait: malformed deadline (bit set)",
			  fwait_bit_wait(t, &held, 0, &bad_dl[i]), -EINVAL);
		EXPECT_EQ("wait: malformed deadline",
			  fwait_wait(t, &key, 0, never, NULL, &bad_dl[i]), -EINVAL);
	}

	/* unlocking a bit not held: -EPERM, nothing changes */
	EXPECT_EQ("bit_unlock: bit not held", fwait_bit_unlock(t, &word, 3), -EPERM);
	EXPECT_EQ("bit_unlock: -EPERM leaves the word alone", atomic_load(&word), 0);
	EXPECT_EQ("bit_clear: bit already clear", fwait_bit_clear(t, &word, 5), 0);
	EXPECT_EQ("bit_clear: no-op on a clear bit", atomic_load(&word), 0);

	EXPECT_EQ("wait: NULL table", fwait_wait(NULL, &key, 0, yes, NULL, NULL), -EINVAL);
	EXPECT_EQ("wait: NULL key", fwait_wait(t, NULL, 0, yes, NULL, NULL), -EINVAL);
	EXPECT_EQ("wait: NULL ready", fwait_wait(t, &key, 0, NULL, NULL, NULL), -EINVAL);
	EXPECT_EQ("wait: unknown flag 4", fwait_wait(t, &key, 4, never, NULL, NULL), -EINVAL);
	EXPECT_EQ("wait: unknown flags ~0", fwait_wait(t, &key, ~0u, never, NULL, NULL), -EINVAL);
	EXPECT_EQ("wake: NULL table", fwait_wake(NULL, &key, 1), -EINVAL);
	EXPECT_EQ("wake: NULL key", fwait_wake(t, NULL, 1), -EINVAL);
	EXPECT_EQ("wake: nr 0, nobody waiting", fwait_wake(t, &key, 0), 0);

	struct fwait_async a, blank;
	memset(&blank, 0, sizeof(blank));
	EXPECT_EQ("async_init: NULL record", fwait_async_init(NULL, no_done, NULL), -EINVAL);
	EXPECT_EQ("async_init: NULL completion", fwait_async_init(&a, NULL, NULL), -EINVAL);
	EXPECT_EQ("async_init", fwait_async_init(&a, no_done, NULL), 0);
	EXPECT_EQ("wait_async: NULL table", fwait_wait_async(NULL, &key, 0, never, NULL, &a),
		  -EINVAL);
	EXPECT_EQ("wait_async: NULL key", fwait_wait_async(t, NULL, 0, never, NULL, &a), -EINVAL);
	EXPECT_EQ("wait_async: NULL ready", fwait_wait_async(t, &key, 0, NULL, NULL, &a), -EINVAL);
	EXPECT_EQ("wait_async: NULL record", fwait_wait_async(t, &key, 0, never, NULL, NULL),
		  -EINVAL);
	EXPECT_EQ("wait_async: record not initialised",
		  fwait_wait_async(t, &key, 0, never, NULL, &blank), -EINVAL);
	EXPECT_EQ("wait_async: unknown flag 4 (FWAIT_SPIN)",
		  fwait_wait_async(t, &key, 4, never, NULL, &a), -EINVAL);
	EXPECT_EQ("wait_async: unknown flags ~0", fwait_wait_async(t, &key, ~0u, never, NULL, &a),
		  -EINVAL);
	EXPECT_EQ("cancel_async: NULL table", fwait_cancel_async(NULL, &a), -EINVAL);
	EXPECT_EQ("cancel_async: NULL record", fwait_cancel_async(t, NULL), -EINVAL);
	EXPECT_EQ("cancel_async: never waited", fwait_cancel_async(t, &a), -EINVAL);
	EXPECT_EQ("cancel_async: not initialised", fwait_cancel_async(t, &blank), -EINVAL);

	EXPECT_EQ("waiters_walk: NULL table", fwait_waiters_walk(NULL, count_fn, NULL), -EINVAL);
	EXPECT_EQ("waiters_walk: NULL fn", fwait_waiters_walk(t, NULL, NULL), -EINVAL);
	struct fwait_stats st;
	memset(&st, 0xab, sizeof(st));
	fwait_stats_get(NULL, &st); /* no-op */
	EXPECT_EQ("stats_get: NULL table leaves out alone", st.waits, UINT64_C(0xabababababababab));
	fwait_stats_get(t, NULL);   /* no-op */
	fwait_stats_reset(NULL);    /* no-op */

	/* nothing above parked anyone or left a stray bit */
	EXPECT_EQ("no waiter parked", fwait_waiters_walk(t, count_fn, NULL), 0);
	EXPECT_EQ("held word still just bit 0", atomic_load(&held), 1);
	EXPECT_EQ("cleanup: unlock", fwait_bit_unlock(t, &held, 0), 0);
	EXPECT_EQ("held word clear", atomic_load(&held), 0);
	fwait_table_destroy(t);
}

/* The fwait_bit64_* rows: the same checks on a 64-bit word, bit > 62; the
 * held bit (40) is in the high half, a sentinel (5) in the low one. */
static void policy_rows64(enum fwait_policy pol)
{
	const char *policy = fwait_policy_name(pol);
	struct fwait_config cfg = { .nbuckets = 4, .policy = pol };
	struct fwait_table *t;
	int rc = fwait_table_create(&t, &cfg);
	if (rc == -ENOTSUP)
		return;
	EXPECT_EQ("create (bit64)", rc, 0);
	if (rc)
		return;

	const uint64_t sentinel = UINT64_C(1) << 5, hb = UINT64_C(1) << 40;
	_Atomic uint64_t word = sentinel, held = 0;
	static const unsigned bad_bits[] = { 63, 64, 1000, ~0u };
	static const struct timespec bad_dl[] = {
		{ .tv_sec = 0, .tv_nsec = 1000000000L },
		{ .tv_sec = 0, .tv_nsec = -1 },
		{ .tv_sec = -1, .tv_nsec = 0 },
	};

	EXPECT_EQ("bit64 setup: trylock", fwait_bit64_trylock(&held, 40), 0);
	for (size_t i = 0; i < sizeof(bad_bits) / sizeof(bad_bits[0]); i++) {
		unsigned b = bad_bits[i];
		EXPECT_EQ("bit64_lock: bit > 62", fwait_bit64_lock(t, &word, b, NULL), -EINVAL);
		EXPECT_EQ("bit64_trylock: bit > 62", fwait_bit64_trylock(&word, b), -EINVAL);
		EXPECT_EQ("bit64_unlock: bit > 62", fwait_bit64_unlock(t, &word, b), -EINVAL);
		EXPECT_EQ("bit64_wait: bit > 62", fwait_bit64_wait(t, &word, b, NULL), -EINVAL);
		EXPECT_EQ("bit64_clear: bit > 62", fwait_bit64_clear(t, &word, b), -EINVAL);
		EXPECT_EQ("bit64_set: bit > 62", fwait_bit64_set(&word, b), false);
		EXPECT_EQ("bit64_test: bit > 62", fwait_bit64_test(&word, b), false);
	}
	EXPECT_EQ("bit64: bad bits leave the word alone", atomic_load(&word), sentinel);

	EXPECT_EQ("bit64_lock: NULL table", fwait_bit64_lock(NULL, &word, 0, NULL), -EINVAL);
	EXPECT_EQ("bit64_lock: NULL word", fwait_bit64_lock(t, NULL, 0, NULL), -EINVAL);
	EXPECT_EQ("bit64_trylock: NULL word", fwait_bit64_trylock(NULL, 0), -EINVAL);
	EXPECT_EQ("bit64_unlock: NULL table", fwait_bit64_unlock(NULL, &held, 40), -EINVAL);
	EXPECT_EQ("bit64_unlock: NULL word", fwait_bit64_unlock(t, NULL, 0), -EINVAL);
	EXPECT_EQ("bit64_wait: NULL table", fwait_bit64_wait(NULL, &held, 40, NULL), -EINVAL);
	EXPECT_EQ("bit64_wait: NULL word", fwait_bit64_wait(t, NULL, 0, NULL), -EINVAL);
	EXPECT_EQ("bit64_set: NULL word", fwait_bit64_set(NULL, 0), false);
	EXPECT_EQ("bit64_clear: NULL table", fwait_bit64_clear(NULL, &word, 0), -EINVAL);
	EXPECT_EQ("bit64_clear: NULL word", fwait_bit64_clear(t, NULL, 0), -EINVAL);
	EXPECT_EQ("bit64_test: NULL word", fwait_bit64_test(NULL, 0), false);
	for (size_t i = 0; i < sizeof(bad_dl) / sizeof(bad_dl[0]); i++) {
		EXPECT_EQ("bit64_lock: malformed deadline (bit held)",
			  fwait_bit64_lock(t, &held, 40, &bad_dl[i]), -EINVAL);
		EXPECT_EQ("bit64_wait: malformed deadline (bit set)",
			  fwait_bit64_wait(t, &held, 40, &bad_dl[i]), -EINVAL);
	}
	EXPECT_EQ("bit64_unlock: bit not held", fwait_bit64_unlock(t, &word, 40), -EPERM);
	EXPECT_EQ("bit64_trylock: bit held", fwait_bit64_trylock(&held, 40), -EBUSY);
	EXPECT_EQ("bit64_clear: bit already clear", fwait_bit64_clear(t, &word, 33), 0);
	EXPECT_EQ("bit64: -EPERM and no-op clear leave the word alone", atomic_load(&word),
		  sentinel);
	EXPECT_EQ("bit64: no waiter parked", fwait_waiters_walk(t, count_fn, NULL), 0);
	EXPECT_EQ("bit64: held word still just bit 40", atomic_load(&held), hb);
	EXPECT_EQ("bit64 cleanup: unlock", fwait_bit64_unlock(t, &held, 40), 0);
	EXPECT_EQ("bit64: held word clear", atomic_load(&held), 0);
	fwait_table_destroy(t);
}

int main(void)
{
	table_rows();
	for (int p = 0; p < FWAIT_POLICY_COUNT; p++) {
		policy_rows((enum fwait_policy)p);
		policy_rows64((enum fwait_policy)p);
	}
	printf("%d checks, %d failure(s)\n", checks, failures);
	return failures ? 1 : 0;
}
