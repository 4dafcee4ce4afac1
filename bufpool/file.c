/* SPDX-License-Identifier: MIT */
/*
 * file.c - the files of a pool: opening and closing them, dropping and
 * truncating their pages.
 *
 * Layer 7 (files): calls only evict.c, writeback.c, io.c, pagetable.c
 * (the page map's setup and teardown), fault.c (the I/O trace), frame.c
 * and log.c.
 *
 * Design note
 * -----------
 * One pool, one memory budget, one set of I/O threads and one wait table
 * serve any number of files (PostgreSQL's shared buffers serve every
 * relation the same way).  A file gets an id, the lowest free one (file 0
 * is bp_open's), and its pages are tagged (id << 48 | page number) in the
 * frames and the page table (internal.h), so nothing below this layer but
 * the I/O engine knows files exist.  Opening publishes the file in
 * pool.files[id] with a release store once it is set up; closing takes it
 * out only once none of its pages is in a frame, so any reader of a tag
 * (an I/O thread, a report) finds its file open.
 *
 * Closing writes the file's dirty pages, waits for them, fsyncs the file
 * and drops its frames; an error (a write that failed, the fsync, a
 * pinned page) leaves the file open, as bp_close does for the pool, and
 * bp_file_discard gives up without writing.  bp_file_truncate drops the
 * pages past the new end without writing them (DropRelationBuffers, then
 * ftruncate), for an engine that truncates or empties a relation.  The
 * caller must not use the file, or the pages being dropped, meanwhile.
 *
 * Guards: pool.files_lock serialises open, close and the walk of every
 * file for the flush's fsync (io.c), and guards which ids are in use.
 * Opening and truncating a file are reported to the I/O trace (fault.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bufpool/internal.h"

#define BP_FILE_FLAGS (BP_OPEN_CREATE | BP_OPEN_TRUNCATE | BP_OPEN_READONLY)

/* A file's own memory and descriptor (fd -1: none yet). */
static void file_free(struct bp_file *file)
{
	if (file->fd >= 0)
		close(file->fd);
	free(file->path);
	free(file);
}

/* A set-up file no slot names: its I/O state, page map, then the rest. */
static void file_destroy(struct bp_file *file)
{
	bp_io_file_destroy(file);
	bp_pt_file_fini(file);
	file_free(file);
}

int bp_file_setup(struct bp_pool *p, const char *path, unsigned flags, struct bp_file **out)
{
	struct bp_file *file = calloc(1, sizeof(*file));
	if (!file)
		return -ENOMEM;
	file->pool = p;
	file->flags = flags & BP_OPEN_READONLY;
	int oflags = (flags & BP_OPEN_READONLY) ? O_RDONLY : O_RDWR;
	oflags |= O_CLOEXEC;
	if (flags & BP_OPEN_CREATE)
		oflags |= O_CREAT;
	if (flags & BP_OPEN_TRUNCATE)
		oflags |= O_TRUNC;
	if (p->flags & BP_OPEN_DIRECT)
		oflags |= O_DIRECT;
	file->path = strdup(path);
	if (!file->path) {
		free(file);
		return -ENOMEM;
	}
	file->fd = open(path, oflags, 0644);
	struct stat st;
	if (file->fd < 0 || fstat(file->fd, &st) < 0) {
		int r = -errno;
		file_free(file);
		return r;
	}
	bp_trace(p, &(struct bp_io_trace_event){.op = BP_IO_TRACE_OPEN, .path = file->path,
		.flags = ((oflags & O_CREAT) ? BP_IO_TRACE_CREAT : 0u) |
			 ((oflags & O_TRUNC) ? BP_IO_TRACE_TRUNC : 0u)});
	/* A page's offset must fit off_t, and its number the tag. */
	file->max_pageno = ((uint64_t)INT64_MAX >> p->page_shift) - 1;
	if (file->max_pageno > BP_TAG_PAGE_MASK - 1)
		file->max_pageno = BP_TAG_PAGE_MASK - 1;
	atomic_init(&file->npages, (uint64_t)st.st_size >> p->page_shift);
	for (unsigned i = 0; i < BP_RA_STREAMS; i++)
		atomic_init(&file->ra_last[i], BP_NO_PAGE - 1);
	atomic_init(&file->ra_cursor, 0);
	atomic_init(&file->read_inline, bp_io_read_mode(p, file->fd));
	int r = bp_pt_file_init(file);
	if (r == 0)
		r = bp_io_file_init(file);
	if (r < 0) {
		bp_pt_file_fini(file);
		file_free(file);
		return r;
	}
	pthread_mutex_lock(&p->files_lock);
	uint32_t id = 0;
	while (id < BP_MAX_FILES && atomic_load_explicit(&p->files[id], memory_order_relaxed))
		id++;
	if (id == BP_MAX_FILES) {
		pthread_mutex_unlock(&p->files_lock);
		file_destroy(file);
		return -EMFILE;
	}
	file->id = id;
	/* Release: pairs with bp_file_of's acquire; the file is set up. */
	atomic_store_explicit(&p->files[id], file, memory_order_release);
	pthread_mutex_unlock(&p->files_lock);
	*out = file;
	return 0;
}

void bp_file_teardown(struct bp_pool *p, struct bp_file *file)
{
	pthread_mutex_lock(&p->files_lock);
	/* Relaxed: no frame holds a page of the file and no I/O of it is in
	 * flight, so no reader (bp_file_of) looks at this slot now; the lock
	 * orders it against bp_io_fsync's walk and the next open's reuse. */
	atomic_store_explicit(&p->files[file->id], NULL, memory_order_relaxed);
	pthread_mutex_unlock(&p->files_lock);
	file_destroy(file);
}

int bp_file_open(struct bp_file **out, struct bp_pool *pool, const char *path, unsigned flags)
{
	if (!out || !pool || !path || !path[0] || (flags & ~BP_FILE_FLAGS))
		return -EINVAL;
	if ((flags & BP_OPEN_READONLY) && (flags & (BP_OPEN_CREATE | BP_OPEN_TRUNCATE)))
		return -EINVAL;
	if ((pool->flags & BP_OPEN_READONLY) && !(flags & BP_OPEN_READONLY))
		return -EROFS;
	return bp_file_setup(pool, path, flags, out);
}

/* How long, in all, bp_check_unpinned lets pins found on frames be the
 * pool's own transient ones (bp_transient_patience) before it calls one
 * the caller's. */
#define PIN_PATIENCE_NS (UINT64_C(50) * 1000u * 1000u)

int bp_check_unpinned(struct bp_pool *p, const struct bp_file *file, uint64_t from,
		      const char *caller)
{
	uint64_t waited_from = 0;
	for (uint32_t i = 0; i < p->nframes; i++) {
		struct bp_frame *f = &p->frames[i];
		uint64_t tag = atomic_load_explicit(&f->tag, memory_order_relaxed);
		if (file && (tag == BP_NO_PAGE || bp_tag_file(tag) != file->id ||
			     bp_tag_page(tag) < from))
			continue;
		/* Acquire pairs with the release of the last unpin.  For one
		 * file, the tag again after the pins: a frame of ours that
		 * was clean may have been evicted and pinned for another
		 * file's page in between, whose pin is not ours to refuse. */
		if (!bp_pins(atomic_load_explicit(&f->state, memory_order_acquire)) ||
		    (file && atomic_load_explicit(&f->tag, memory_order_relaxed) != tag))
			continue;
		/* Maybe the pool's own transient pin: look at this frame again
		 * (a caller's pin stays; without this, bp_file_truncate beside
		 * the background writer gave a spurious -EBUSY,
		 * tests/bufpool/test_files.c). */
		if (bp_transient_patience(&waited_from, PIN_PATIENCE_NS)) {
			i--; /* the same frame again (wraps to 0 from 0 with i++) */
			continue;
		}
		if (tag == BP_NO_PAGE || bp_tag_file(tag) == 0)
			bp_log(p->log, p->log_arg, BP_LOG_ERROR, "%s: frame %u (page %llu) is still pinned",
			       caller, i, (unsigned long long)tag);
		else
			bp_log(p->log, p->log_arg, BP_LOG_ERROR,
			       "%s: frame %u (page %llu of file %u) is still pinned", caller, i,
			       (unsigned long long)bp_tag_page(tag), bp_tag_file(tag));
		return -EBUSY;
	}
	return 0;
}

/* bp_write_frames's pick: a frame holding a page of file arg.  Relaxed: the
 * tag only changes under a partition lock with no pin, and nobody pins the
 * file's pages while it closes; a frame re-tagged meanwhile is not ours. */
static bool of_file(const struct bp_frame *f, void *arg)
{
	uint64_t tag = atomic_load_explicit(&((struct bp_frame *)f)->tag, memory_order_relaxed);
	return tag != BP_NO_PAGE && bp_tag_file(tag) == ((const struct bp_file *)arg)->id;
}

int bp_file_close(struct bp_file *file)
{
	if (!file || file->id == 0)
		return -EINVAL; /* file 0 is closed by bp_close */
	struct bp_pool *p = file->pool;
	int r = bp_check_unpinned(p, file, 0, "bp_file_close");
	if (r < 0)
		return r;
	if (!(file->flags & BP_OPEN_READONLY)) {
		int unwritten = bp_write_frames(p, of_file, file);
		for (uint32_t i = 0; i < p->nframes && !unwritten; i++) {
			/* Still dirty after the writes: one failed.  Relaxed:
			 * the completion's DIRTY is ordered before the WRITEBACK
			 * clear bp_write_frames's waits acquired.  of_file looks
			 * at the tag again: an unpinned frame, written, may have
			 * been evicted and taken by another file's dirty page. */
			struct bp_frame *f = &p->frames[i];
			if (of_file(f, file) &&
			    (atomic_load_explicit(&f->state, memory_order_relaxed) & BP_F_DIRTY))
				unwritten = -EIO;
		}
		if (unwritten) {
			bp_log(p->log, p->log_arg, BP_LOG_ERROR,
			       "bp_file_close: file %u: a page could not be written; file left open "
			       "(dirty pages kept)", file->id);
			return unwritten;
		}
		r = bp_io_fsync_file(p, file);
		if (r < 0) {
			bp_log(p->log, p->log_arg, BP_LOG_ERROR,
			       "bp_file_close: file %u: fsync failed; file left open: "
			       "bp_file_discard it, reopen and recover", file->id);
			return r;
		}
	}
	r = bp_drop_frames(p, file->id, 0);
	if (r < 0)
		return r;
	bp_file_teardown(p, file);
	return 0;
}

int bp_file_discard(struct bp_file *file)
{
	if (!file || file->id == 0)
		return -EINVAL;
	struct bp_pool *p = file->pool;
	int r = bp_check_unpinned(p, file, 0, "bp_file_discard");
	if (r == 0)
		r = bp_drop_frames(p, file->id, 0);
	if (r < 0)
		return r;
	bp_file_teardown(p, file);
	return 0;
}

int bp_file_truncate(struct bp_file *file, uint64_t npages)
{
	if (!file)
		return -EINVAL;
	struct bp_pool *p = file->pool;
	if (file->flags & BP_OPEN_READONLY)
		return -EROFS;
	if (npages > file->max_pageno)
		return -EFBIG;
	int r = bp_check_unpinned(p, file, npages, "bp_file_truncate");
	if (r == 0)
		r = bp_drop_frames(p, file->id, npages);
	if (r < 0)
		return r;
	if (ftruncate(file->fd, (off_t)(npages << p->page_shift)) < 0)
		return -errno;
	bp_trace(p, &(struct bp_io_trace_event){.op = BP_IO_TRACE_TRUNCATE, .path = file->path,
						  .offset = npages << p->page_shift});
	/* Release: as the other updates of npages (access.c). */
	atomic_store_explicit(&file->npages, npages, memory_order_release);
	return 0;
}

struct bp_file *bp_pool_file(struct bp_pool *pool)
{
	return bp_file0(pool);
}

uint64_t bp_file_page_count(const struct bp_file *file)
{
	/* Acquire pairs with the release updates of npages (access.c). */
	return file ? atomic_load_explicit(&((struct bp_file *)file)->npages,
					   memory_order_acquire) : 0;
}

uint32_t bp_file_id(const struct bp_file *file)
{
	return file ? file->id : UINT32_MAX;
}

int bp_file_durability_err(const struct bp_file *file)
{
	if (!file)
		return -EINVAL;
	/* Relaxed: a report (bufpool.h); io.c's fsync_lock orders the fsyncs. */
	return -atomic_load_explicit(&((struct bp_file *)file)->fsync_failed,
				     memory_order_relaxed);
}
