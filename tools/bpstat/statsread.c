/* SPDX-License-Identifier: MIT */
/*
 * statsread.c - find, map and read stats files (statsread.h; the layout
 * and the seqlock: bufpool/statsfile.h).
 *
 * Design note
 * -----------
 * A reader maps the whole file read-only once its head has been checked
 * with pread: the head (magic, layout, size, pid) is the one part every
 * layout shares, so a file of another library version is refused with
 * what it is, never mapped at the wrong size.  Snapshots are copied by
 * bp_sf_load_once (the seqlock's reading half) and retried here.
 */
#include "statsread.h"
#include "util/clock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct bpstat_reader {
	const struct bp_statsfile *map;
};

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct bpstat_found *)a)->key, ((const struct bpstat_found *)b)->key);
}

int bpstat_find(struct bpstat_found *out, size_t max, size_t *n)
{
	const size_t plen = strlen(BP_SF_PREFIX);
	DIR *d = opendir(BP_SF_DIR);
	struct dirent *e;

	*n = 0;
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		const char *key = e->d_name + plen;
		size_t len = strlen(e->d_name);
		char *end;
		/* bufpool.<pid>.<name>, not a publisher's temporary .tmp */
		if (strncmp(e->d_name, BP_SF_PREFIX, plen) != 0 ||
		    (len > 4 && strcmp(e->d_name + len - 4, ".tmp") == 0))
			continue;
		long pid = strtol(key, &end, 10);
		if (end == key || *end != '.' || pid <= 0 || strlen(key) >= sizeof(out->key))
			continue;
		if (*n < max) {
			struct bpstat_found *f = &out[*n];
			snprintf(f->path, sizeof(f->path), "%s/%s", BP_SF_DIR, e->d_name);
			snprintf(f->key, sizeof(f->key), "%s", key);
			f->pid = (pid_t)pid;
		}
		++*n;
	}
	closedir(d);
	qsort(out, *n < max ? *n : max, sizeof(*out), by_key);
	return 0;
}

int bpstat_reader_open(struct bpstat_reader **out, const char *path, struct bp_sf_head *head)
{
	struct bp_sf_head h;
	struct stat st;
	if (!out || !path)
		return -EINVAL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = fstat(fd, &st) != 0 ? -errno : 0;
	if (rc == 0 && (st.st_size < (off_t)sizeof(h) || pread(fd, &h, sizeof(h), 0) != sizeof(h)))
		rc = -EPROTO;
	if (rc == 0 && h.magic != BP_SF_MAGIC)
		rc = -EPROTO;
	if (rc == 0 && (h.layout != BP_SF_LAYOUT || h.size != sizeof(struct bp_statsfile) ||
			st.st_size != (off_t)sizeof(struct bp_statsfile))) {
		rc = -EPROTONOSUPPORT;
		if (head)
			*head = h;
	}
	const struct bp_statsfile *map = NULL;
	if (rc == 0) {
		map = mmap(NULL, sizeof(*map), PROT_READ, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED) {
			rc = -errno;
			map = NULL;
		}
	}
	close(fd);
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

int bpstat_reader_read(struct bpstat_reader *r, struct bp_statsfile *out)
{
	if (!r || !out)
		return -EINVAL;
	/* The publisher may be preempted mid-update: retry for up to 2 s,
	 * yielding the CPU, then backing off 100 us at a time. */
	uint64_t deadline = util_now_ns() + UINT64_C(2000000000);
	for (unsigned tries = 0;; tries++) {
		if (bp_sf_load_once(r->map, out) == 0)
			return 0;
		if (util_now_ns() > deadline)
			return -EAGAIN;
		if (tries < 100)
			sched_yield();
		else
			nanosleep(&(struct timespec){0, 100000}, NULL);
	}
}

void bpstat_reader_close(struct bpstat_reader *r)
{
	if (!r)
		return;
	munmap((void *)r->map, sizeof(*r->map));
	free(r);
}

uint64_t bpstat_stale_ns(const struct bp_statsfile *s)
{
	uint64_t ns = 50 * s->period_ns, floor = UINT64_C(5000000000);
	return ns > floor ? ns : floor;
}

enum bpstat_liveness bpstat_liveness(const struct bp_statsfile *s, uint64_t now_ns)
{
	if (kill((pid_t)s->head.pid, 0) != 0 && errno == ESRCH)
		return BPSTAT_DEAD;
	if (now_ns > s->mono_ns && now_ns - s->mono_ns > bpstat_stale_ns(s))
		return BPSTAT_STALE;
	return BPSTAT_LIVE;
}
