/* SPDX-License-Identifier: MIT */
/*
 * statsfile.c - publish and read a pool's statistics through a shared
 * mapping (see statsfile.h for the layout and the seqlock protocol).
 *
 * Design note
 * -----------
 * The publisher owns one writable MAP_SHARED mapping; only the thread that
 * calls bpstat_publish writes it (the caller serialises publishes).  Readers
 * map the file read-only and never write.  The data fields are plain memory
 * guarded by seq alone: a torn read is detected and retried.
 */
#include "statsfile.h"
#include "util/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct bpstat_publisher {
	struct bp_pool *pool;
	struct bpstat_shared *map;
	char path[256];
};

struct bpstat_reader {
	const struct bpstat_shared *map;
};

void bpstat_default_path(pid_t pid, char *buf, size_t len)
{
	snprintf(buf, len, "/dev/shm/bpbench.%ld", (long)pid);
}

/* Fill the snapshot fields (everything except the header and seq). */
static void snapshot(struct bpstat_publisher *p, uint64_t ops)
{
	struct bpstat_shared *s = p->map;
	struct bp_frame_info hot[BPSTAT_TOP_N];
	int n = bp_frames_hottest(p->pool, hot, BPSTAT_TOP_N);
	bp_stats_init(&s->stats);
	bp_stats_get(p->pool, &s->stats);
	s->nhot = n > 0 ? (uint32_t)n : 0;
	for (uint32_t i = 0; i < s->nhot; i++)
		s->hot[i] = (struct bpstat_frame){.frame = hot[i].frame, .pins = hot[i].pins,
			.pageno = hot[i].pageno, .wait_ns = hot[i].wait_ns,
			.flags = hot[i].flags, .latch_waiters = hot[i].latch_waiters,
			.file = hot[i].file};
	s->ops = ops;
	s->mono_ns = util_now_ns();
	s->updates++;
}

int bpstat_publish(struct bpstat_publisher *p, uint64_t ops)
{
	if (!p)
		return -EINVAL;
	struct bpstat_shared *s = p->map;
	uint64_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
	atomic_store_explicit(&s->seq, seq + 1, memory_order_relaxed);
	/* Orders the odd seq before the data stores; pairs with the reader's
	 * acquire fence before it re-reads seq, so a reader that saw any of
	 * the new data also sees seq changed. */
	atomic_thread_fence(memory_order_release);
	snapshot(p, ops);
	/* Publishes the data with the even seq; pairs with the reader's
	 * acquire load of seq before it copies. */
	atomic_store_explicit(&s->seq, seq + 2, memory_order_release);
	return 0;
}

int bpstat_publisher_counters_reset(struct bpstat_publisher *p, uint64_t ops)
{
	if (!p)
		return -EINVAL;
	/* only this thread writes the map; readers get it with the next seq */
	p->map->since_ns = util_now_ns();
	return bpstat_publish(p, ops);
}

int bpstat_publisher_create(struct bpstat_publisher **out, const char *path,
			    const char *label, struct bp_pool *pool)
{
	char tmp[300];
	if (!out || !pool)
		return -EINVAL;
	struct bpstat_publisher *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->pool = pool;
	if (path)
		snprintf(p->path, sizeof(p->path), "%s", path);
	else
		bpstat_default_path(getpid(), p->path, sizeof(p->path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", p->path);
	int rc = 0, fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, sizeof(struct bpstat_shared)) != 0)
		rc = -errno;
	if (rc == 0) {
		p->map = mmap(NULL, sizeof(struct bpstat_shared), PROT_READ | PROT_WRITE,
			      MAP_SHARED, fd, 0);
		if (p->map == MAP_FAILED) {
			rc = -errno;
			p->map = NULL;
		}
	}
	if (fd >= 0)
		close(fd);
	if (rc == 0) {
		struct bpstat_shared *s = p->map;
		s->magic = BPSTAT_MAGIC;
		s->layout = BPSTAT_LAYOUT;
		s->size = sizeof(*s);
		s->pid = (int32_t)getpid();
		s->start_ns = s->since_ns = util_now_ns();
		snprintf(s->label, sizeof(s->label), "%s", label ? label : "");
		bpstat_publish(p, 0);
		if (rename(tmp, p->path) != 0) /* readers now see a complete file */
			rc = -errno;
	}
	if (rc) {
		unlink(tmp);
		if (p->map)
			munmap(p->map, sizeof(struct bpstat_shared));
		free(p);
		return rc;
	}
	*out = p;
	return 0;
}

void bpstat_publisher_destroy(struct bpstat_publisher *p)
{
	if (!p)
		return;
	unlink(p->path);
	munmap(p->map, sizeof(struct bpstat_shared));
	free(p);
}

const char *bpstat_publisher_path(const struct bpstat_publisher *p)
{
	return p ? p->path : NULL;
}

int bpstat_reader_open(struct bpstat_reader **out, const char *path)
{
	struct stat st;
	if (!out || !path)
		return -EINVAL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = fstat(fd, &st) != 0 ? -errno : 0;
	if (rc == 0 && st.st_size != (off_t)sizeof(struct bpstat_shared))
		rc = -EPROTO;
	const struct bpstat_shared *map = NULL;
	if (rc == 0) {
		map = mmap(NULL, sizeof(*map), PROT_READ, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED) {
			rc = -errno;
			map = NULL;
		}
	}
	close(fd);
	if (rc == 0 && (map->magic != BPSTAT_MAGIC || map->layout != BPSTAT_LAYOUT ||
			map->size != sizeof(*map)))
		rc = -EPROTO;
	struct bpstat_reader *r = rc ? NULL : malloc(sizeof(*r));
	if (rc == 0 && !r)
		rc = -ENOMEM;
	if (rc) {
		if (map)
			munmap((void *)map, sizeof(*map));
		return rc;
	}
	r->map = map;
	*out = r;
	return 0;
}

int bpstat_reader_read(struct bpstat_reader *r, struct bpstat_shared *out)
{
	if (!r || !out)
		return -EINVAL;
	/* The publisher may be preempted mid-update: retry for up to 2 s,
	 * yielding the CPU, then backing off 100 us at a time. */
	uint64_t deadline = util_now_ns() + UINT64_C(2000000000);
	for (unsigned tries = 0;; tries++) {
		if (tries > 0) {
			if (util_now_ns() > deadline)
				return -EAGAIN;
			if (tries < 100)
				sched_yield();
			else
				nanosleep(&(struct timespec){0, 100000}, NULL);
		}
		/* Pairs with the publisher's final release store of seq: an even
		 * value means the data of that update is visible. */
		uint64_t s1 = atomic_load_explicit(&r->map->seq, memory_order_acquire);
		if (s1 & 1)
			continue;
		memcpy(out, (const void *)r->map, sizeof(*out));
		/* Orders the copy before the re-read of seq; pairs with the
		 * publisher's release fence after it made seq odd. */
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&r->map->seq, memory_order_relaxed) == s1)
			return 0;
	}
}

void bpstat_reader_close(struct bpstat_reader *r)
{
	if (!r)
		return;
	munmap((void *)r->map, sizeof(*r->map));
	free(r);
}
