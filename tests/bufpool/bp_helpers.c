/*
 * bp_helpers.c - scaffolding of the bufpool unit tests (see bp_helpers.h).
 */
#include "bp_helpers.h"

#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char root[64];

void bt_root_make(void)
{
	snprintf(root, sizeof(root), "/tmp/bufpool-test-XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		abort();
	}
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	remove(path);
	return 0;
}

void bt_root_remove(void)
{
	if (root[0])
		nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void bt_dir_make(struct bt_dir *d)
{
	snprintf(d->path, sizeof(d->path), "%s/t-XXXXXX", root);
	ck_assert_ptr_nonnull(mkdtemp(d->path));
	snprintf(d->file, sizeof(d->file), "%s/pages", d->path);
}

void bt_dir_remove(struct bt_dir *d)
{
	unlink(d->file);
	rmdir(d->path);
}

struct bp_config bt_config(const struct bt_dir *d, uint32_t nframes, bool bgwriter)
{
	struct bp_config c;
	memset(&c, 0, sizeof(c));
	c.path = d->file;
	c.nframes = nframes;
	c.flags = BP_OPEN_CREATE | BP_OPEN_NO_READAHEAD | (bgwriter ? 0 : BP_OPEN_NO_BGWRITER);
	return c;
}

uint64_t bt_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool bt_sanitized(void)
{
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
	return true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
	return true;
#else
	return false;
#endif
#else
	return false;
#endif
}

unsigned bt_scaled(unsigned n, unsigned floor)
{
	if (!bt_sanitized())
		return n;
	return n / 4 > floor ? n / 4 : floor;
}

void bt_spawn(pthread_t *tid, void *(*fn)(void *), void *arg)
{
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 256 * 1024);
	int r = pthread_create(tid, &a, fn, arg);
	pthread_attr_destroy(&a);
	ck_assert_msg(r == 0, "pthread_create: %s", strerror(r));
}

void bt_join_all(pthread_t *tids, size_t n, unsigned timeout_ms, const char *what)
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
		int r = pthread_timedjoin_np(tids[i], NULL, &dl);
		ck_assert_msg(r == 0, "%s: thread %zu not done within %u ms (%s)", what, i,
			      timeout_ms, strerror(r));
	}
}

struct count_arg {
	const void *key;
	size_t n;
};

static int count_fn(const struct fwait_waiter_info *w, void *arg)
{
	struct count_arg *c = arg;
	if (!c->key || w->key == c->key)
		c->n++;
	return 0;
}

size_t bt_parked_on(struct fwait_table *t, const void *key)
{
	struct count_arg c = { key, 0 };
	fwait_waiters_walk(t, count_fn, &c);
	return c.n;
}

size_t bt_parked(struct fwait_table *t)
{
	return bt_parked_on(t, NULL);
}

void bt_pause(unsigned *spins)
{
	if (++*spins % 64 == 0) {
		struct timespec ts = { 0, 20000 };
		nanosleep(&ts, NULL);
	} else {
		sched_yield();
	}
}

bool bt_wait_parked(struct fwait_table *t, size_t n, unsigned timeout_ms)
{
	uint64_t end = bt_now_ns() + (uint64_t)timeout_ms * 1000000u;
	unsigned spins = 0;
	while (bt_parked(t) < n) {
		if (bt_now_ns() > end)
			return false;
		bt_pause(&spins);
	}
	return true;
}

void bt_fill(void *page, uint32_t size, uint64_t pageno, uint64_t version)
{
	uint64_t *w = page;
	for (uint32_t i = 0; i < size / 8; i++)
		w[i] = (pageno << 32) ^ (version << 8) ^ i;
}

bool bt_check(const void *page, uint32_t size, uint64_t pageno, uint64_t version)
{
	const uint64_t *w = page;
	for (uint32_t i = 0; i < size / 8; i++)
		if (w[i] != ((pageno << 32) ^ (version << 8) ^ i))
			return false;
	return true;
}

struct flags_arg {
	uint64_t pageno;
	uint32_t flags;
};

static int flags_fn(const struct bp_frame_info *info, void *arg)
{
	struct flags_arg *a = arg;
	if (info->pageno == a->pageno) {
		a->flags = info->flags;
		return 1;
	}
	return 0;
}

uint32_t bt_flags_of(struct bp_pool *pool, uint64_t pageno)
{
	struct flags_arg a = { pageno, UINT32_MAX };
	bp_frames_walk(pool, flags_fn, &a);
	return a.flags;
}
