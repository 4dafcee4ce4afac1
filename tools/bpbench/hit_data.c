/* SPDX-License-Identifier: MIT */
/*
 * hit_data.c - what bpbench hit's cells read: the data file, the pool with
 * every page of it resident, and the memory floor's array of the same
 * pages.
 *
 * Design note
 * -----------
 * Layer: bpbench, directly on bufpool (see hit_int.h).  The file is
 * written with pwrite, not through the pool: the cells measure reads
 * only, and a page written by the pool would start dirty.  Every byte of
 * page p is hit_page_byte(p).  The pool then gets every page plus
 * HIT_SPARE_FRAMES frames and each page is read once (bp_get, checked,
 * bp_release), so a measured bp_get never misses, never takes a frame and
 * never runs the clock; hit.c checks the pool's counters afterwards.
 *
 * The pool is opened read-only and without the background writer: there
 * is nothing to write, and a writer waking every 50 ms to scan every
 * frame's state word would add its own CPU to the rusage figures and
 * pull the frames' cache lines away from the workers.  Read-ahead stays
 * on: it only speeds up the warm-up's sequential reads.
 *
 * The floor's array is aligned to the page size as the pool's page memory
 * is (one block from its own arena, bufpool/pagemem.c), so the bytes the
 * floor reads fall on the same cache sets; neither asks for huge pages.
 */
#include "hit_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "toolutil.h"

/* Empty the file at path and write every page of it.  0 or -errno
 * (reported). */
static int write_file(const struct hit_options *o, const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		int e = errno;
		fprintf(stderr, HIT_PROG ": cannot open %s: %s\n", path, strerror(e));
		return -e;
	}
	uint8_t *buf = malloc(o->page_size);
	int rc = buf == NULL ? -ENOMEM : 0;
	for (uint64_t p = 0; rc == 0 && p < o->pages; p++) {
		memset(buf, hit_page_byte(p), o->page_size);
		ssize_t n = pwrite(fd, buf, o->page_size, (off_t)(p * o->page_size));
		if (n != (ssize_t)o->page_size)
			rc = n < 0 ? -errno : -EIO;
	}
	if (rc != 0)
		fprintf(stderr, HIT_PROG ": cannot write %s: %s\n", path, strerror(-rc));
	free(buf);
	close(fd);
	return rc;
}

/* Read every page once, checking its first and last byte.  0 or -errno
 * (reported). */
static int warm_up(const struct hit_data *d)
{
	const struct hit_options *o = d->opt;
	for (uint64_t p = 0; p < o->pages; p++) {
		struct bp_frame *f;
		int rc = bp_get(d->pool, p, 0, &f);
		if (rc != 0) {
			fprintf(stderr, HIT_PROG ": bp_get(page %" PRIu64 "): %s\n", p, strerror(-rc));
			return rc;
		}
		const uint8_t *b = bp_data(f);
		bool ok = b[0] == hit_page_byte(p) && b[o->page_size - 1] == hit_page_byte(p);
		rc = bp_release(d->pool, f);
		if (!ok) {
			fprintf(stderr, HIT_PROG ": page %" PRIu64 " does not hold what was written\n", p);
			return -EBADMSG;
		}
		if (rc != 0) {
			fprintf(stderr, HIT_PROG ": bp_release(page %" PRIu64 "): %s\n", p, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

int hit_data_open(struct hit_data *d, const struct hit_options *o, const char *path)
{
	*d = (struct hit_data){ .opt = o };
	while ((1u << d->page_shift) < o->page_size)
		d->page_shift++;
	int rc = write_file(o, path);
	if (rc != 0)
		return rc;
	struct bp_config cfg;
	bp_config_init(&cfg);
	cfg.path = path;
	cfg.flags = BP_OPEN_READONLY | BP_OPEN_NO_BGWRITER;
	cfg.page_size = o->page_size;
	cfg.nframes = hit_frames_for(o);
	cfg.log = tool_bp_log;
	rc = bp_open(&d->pool, &cfg);
	if (rc != 0) {
		fprintf(stderr, HIT_PROG ": bp_open(%s, %" PRIu32 " frames): %s\n", path, cfg.nframes,
			strerror(-rc));
		d->pool = NULL;
		return rc;
	}
	rc = warm_up(d);
	if (rc != 0 || !o->modes[HIT_MEMORY])
		return rc;
	size_t bytes = (size_t)o->pages << d->page_shift;
	d->mem = aligned_alloc(o->page_size, bytes);
	if (d->mem == NULL) {
		fprintf(stderr, HIT_PROG ": cannot allocate the floor's %zu bytes\n", bytes);
		return -ENOMEM;
	}
	for (uint64_t p = 0; p < o->pages; p++)
		memset(d->mem + (p << d->page_shift), hit_page_byte(p), o->page_size);
	return 0;
}

int hit_data_close(struct hit_data *d)
{
	int rc = 0;
	if (d->pool != NULL) {
		rc = bp_close(d->pool);
		if (rc != 0) {
			fprintf(stderr, HIT_PROG ": bp_close: %s\n", strerror(-rc));
			bp_discard(d->pool);
		}
	}
	free(d->mem);
	*d = (struct hit_data){ 0 };
	return rc;
}
