/*
 * helpers.c - bounded joins, parked-waiter polling, sanitizer scaling and
 * table construction shared by the fwait unit tests (see helpers.h).
 * No shared mutable state: every helper works on what its caller passes.
 */
#include "helpers.h"

#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* TSan slows threads most (and caps live threads), so thread counts scale
 * down under it; ASan only needs deeper stacks. */
#if defined(__SANITIZE_THREAD__)
#define TH_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TH_TSAN 1
#endif
#endif
#ifndef TH_TSAN
#define TH_TSAN 0
#endif
#if TH_TSAN || defined(__SANITIZE_ADDRESS__)
#define TH_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TH_SANITIZED 1
#endif
#endif
#ifndef TH_SANITIZED
#define TH_SANITIZED 0
#endif

/* Sanitizers need deeper stacks; plain builds keep 512 threads cheap. */
#define TH_STACK_BYTES (TH_SANITIZED ? (1u << 20) : (256u << 10))

bool th_sanitized(void)
{
	return TH_TSAN;
}

unsigned th_scaled(unsigned n, unsigned floor)
{
	if (!TH_TSAN)
		return n;
	return n / 4 > floor ? n / 4 : floor;
}

struct fwait_table *th_table_for(int i, unsigned nbuckets)
{
	struct fwait_config cfg = { .nbuckets = nbuckets };
	struct fwait_table *t = NULL;

	cfg.policy = i >= TH_POLICY_STEAL ? FWAIT_WAKE_ONE : (enum fwait_policy)i;
	cfg.max_steals = i == TH_POLICY_STEAL ? 5 : 0;
	cfg.handoff = i == TH_POLICY_STRICT ? FWAIT_HANDOFF_STRICT : FWAIT_HANDOFF_FAIR;
	int rc = fwait_table_create(&t, &cfg);
	ck_assert_msg(rc == 0, "fwait_table_create(%s, nbuckets %u) = %d",
		      th_policy_label(i), nbuckets, rc);
	ck_assert_ptr_nonnull(t);
	return t;
}

const char *th_policy_label(int i)
{
	if (i == TH_POLICY_STEAL)
		return "wake-one+steal";
	if (i == TH_POLICY_STRICT)
		return "wake-one+strict";
	return fwait_policy_name((enum fwait_policy)i);
}

void th_spawn(pthread_t *tid, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, TH_STACK_BYTES);
	int rc = pthread_create(tid, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	ck_assert_msg(rc == 0, "pthread_create: %s", strerror(rc));
}

static int dump_waiter(const struct fwait_waiter_info *w, void *arg)
{
	unsigned *shown = arg;
	if ((*shown)++ < 16)
		fprintf(stderr, "  parked: key %p bit %d %s bucket %u waited %" PRIu64 " ns\n",
			w->key, w->bit, w->exclusive ? "excl" : "shared", w->bucket,
			w->waited_ns);
	return 0;
}

void th_join_all(pthread_t *tids, size_t n, unsigned timeout_ms,
		 const char *what, struct fwait_table *t)
{
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += timeout_ms / 1000;
	dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	for (size_t i = 0; i < n; i++) {
		int rc = pthread_timedjoin_np(tids[i], NULL, &dl);
		if (rc == 0)
			continue;
		size_t parked = t ? th_parked(t) : 0;
		fprintf(stderr, "%s: thread %zu of %zu not done after %u ms (%s); %zu parked\n",
			what, i, n, timeout_ms, strerror(rc), parked);
		if (t) {
			unsigned shown = 0;
			fwait_waiters_walk(t, dump_waiter, &shown);
		}
		ck_abort_msg("%s: thread %zu of %zu still running after %u ms "
			     "(lost wakeup or deadlock?), %zu waiters parked",
			     what, i, n, timeout_ms, parked);
	}
}

struct parked_filter {
	const void *key;
	int bit;
	bool any_key;
	size_t count;
};

static int count_waiter(const struct fwait_waiter_info *w, void *arg)
{
	struct parked_filter *f = arg;
	if (f->any_key || (w->key == f->key && (f->bit < 0 || w->bit == f->bit)))
		f->count++;
	return 0;
}

size_t th_parked(struct fwait_table *t)
{
	struct parked_filter f = { .any_key = true };
	fwait_waiters_walk(t, count_waiter, &f);
	return f.count;
}

size_t th_parked_on(struct fwait_table *t, const void *key, int bit)
{
	struct parked_filter f = { .key = key, .bit = bit };
	fwait_waiters_walk(t, count_waiter, &f);
	return f.count;
}

void th_poll_pause(unsigned *spins)
{
	if (++*spins % 64 == 0) {
		struct timespec ts = { 0, 20000 };
		nanosleep(&ts, NULL);
	} else {
		sched_yield();
	}
}

bool th_wait_parked(struct fwait_table *t, size_t n, unsigned timeout_ms)
{
	uint64_t end = util_now_ns() + (uint64_t)timeout_ms * 1000000u;
	unsigned spins = 0;
	while (th_parked(t) != n) {
		if (util_now_ns() > end)
			return false;
		th_poll_pause(&spins);
	}
	return true;
}

bool th_poll(bool (*pred)(void *arg), void *arg, unsigned timeout_ms)
{
	uint64_t end = util_now_ns() + (uint64_t)timeout_ms * 1000000u;
	unsigned spins = 0;
	while (!pred(arg)) {
		if (util_now_ns() > end)
			return false;
		th_poll_pause(&spins);
	}
	return true;
}
