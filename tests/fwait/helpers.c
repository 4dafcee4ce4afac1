/* SPDX-License-Identifier: MIT */
/*
 * helpers.c - bounded joins, parked-waiter polling, sanitizer scaling,
 * table construction and labelled loop tests shared by the fwait unit
 * tests (see helpers.h).
 * No shared mutable state: every helper works on what its caller passes.
 */
#include "helpers.h"
#include "../common/sanitize.h"

#include <check.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* TSan slows threads most (and caps live threads), so thread counts scale
 * down under it; ASan only needs deeper stacks (tests/common/sanitize.h):
 * plain builds keep 512 threads cheap. */
#define TH_STACK_BYTES (TC_SANITIZED ? (1u << 20) : (256u << 10))

bool th_sanitized(void)
{
	return TC_TSAN;
}

unsigned th_scaled(unsigned n, unsigned floor)
{
	if (!TC_TSAN)
		return n;
	return n / 4 > floor ? n / 4 : floor;
}

struct fwait_table *th_table_for(int v, unsigned nbuckets)
{
	struct fwait_config cfg = { .nbuckets = nbuckets };
	struct fwait_table *t = NULL;

	tc_variant_config(v, 5, &cfg);
	int rc = fwait_table_create(&t, &cfg);
	ck_assert_msg(rc == 0, "fwait_table_create(%s, nbuckets %u) = %d",
		      tc_variant_name(v), nbuckets, rc);
	ck_assert_ptr_nonnull(t);
	return t;
}

/* The test-case names th_add_loop made: Check keeps each name's pointer
 * until the runner is freed, so they are freed at exit (before
 * LeakSanitizer's check, which was registered earlier and so runs later). */
static char **loop_names;
static size_t loop_names_n;

static void free_loop_names(void)
{
	for (size_t i = 0; i < loop_names_n; i++)
		free(loop_names[i]);
	free(loop_names);
	loop_names = NULL;
	loop_names_n = 0;
}

void th_add_loop(Suite *su, const char *name, int timeout_s, const TTest *tf, int from,
		 int to, const char *(*label)(int i))
{
	for (int i = from; i < to; i++) {
		char *tcname = NULL;
		char **grown = realloc(loop_names, (loop_names_n + 1) * sizeof(*loop_names));
		if (!grown || asprintf(&tcname, "%s %s", name, label(i)) < 0)
			abort(); /* out of memory before any test ran */
		if (loop_names_n == 0 && !loop_names)
			atexit(free_loop_names);
		loop_names = grown;
		loop_names[loop_names_n++] = tcname;
		TCase *tc = tcase_create(tcname);
		tcase_set_timeout(tc, timeout_s);
		tcase_add_loop_test(tc, tf, i, i + 1);
		suite_add_tcase(su, tc);
	}
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
		tc_dump_waiters(t, 16);
		ck_abort_msg("%s: thread %zu of %zu still running after %u ms "
			     "(lost wakeup or deadlock?), %zu waiters parked",
			     what, i, n, timeout_ms, parked);
	}
}

size_t th_parked(struct fwait_table *t)
{
	return tc_parked_on(t, NULL, -1);
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

long th_gettid(void)
{
	return (long)syscall(SYS_gettid);
}

static bool task_asleep(void *arg)
{
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/self/task/%ld/stat", *(const long *)arg);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return false;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *end = strrchr(buf, ')'); /* the name may hold spaces */
	return end != NULL && end[1] == ' ' && end[2] == 'S';
}

bool th_wait_asleep(long tid, unsigned timeout_ms)
{
	return th_poll(task_asleep, &tid, timeout_ms);
}
