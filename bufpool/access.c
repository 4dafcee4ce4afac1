/* SPDX-License-Identifier: MIT */
/*
 * access.c - pinning pages: bp_get, bp_release, bp_new_page, bp_mark_dirty,
 * and readahead.
 *
 * Layer 7 (access): calls only evict.c, io.c, pagetable.c, frame.c and
 * account.c.
 *
 * Design note
 * -----------
 * bp_get first looks the page up and pins it (pagetable.c).  On a miss it
 * claims a frame (evict.c, returned LOCKED with one pin), then inserts it;
 * if another thread inserted the page meanwhile, it frees its frame and
 * pins that one.  The inserting thread reads the page (io.c's bp_io_read:
 * itself when the kernel has it cached, else through the I/O engine) and,
 * like every other thread that wants the page, waits on (frame, LOCKED)
 * with fwait_bit_wait: the kernel's lock_page / wait_on_page_locked
 * pattern.  Whoever did the read sets UPTODATE or ERROR and unlocks.  A
 * frame found in ERROR (not LOCKED) is read again by the first thread
 * that finds it.
 *
 * Creating pages (bp_new_page, bp_get with BP_GET_CREATE) keeps one rule:
 * a page number comes below npages (bp_page_count) only while its creator
 * holds its mapping LOCKED, or as a hole (zeros in the file) left below a
 * page created further on.  So whoever finds a page below npages unmapped
 * may read it from the file, and a creator that still sees its page past
 * npages after mapping it knows nobody has written it.  bp_new_page claims
 * its frame first, maps it as n = npages, then moves npages from n to n + 1
 * with one CAS; if the CAS fails, n became a hole meanwhile and is read in
 * as a normal miss instead.  A miss decides whether it creates its page
 * once, when its mapping is made (fill_miss; miss_allowed before the claim
 * only refuses what could never be allowed), and all three ways of making
 * a page (past the end, BP_GET_OVERWRITE, bp_new_page) end in one
 * create_page.  Pins saturate at BP_PIN_MAX (-EAGAIN).
 *
 * Readahead: a miss on the page right after the previous sequential miss
 * of a stream reads the next readahead pages too (into unpinned LOCKED
 * frames, submitted as one batch), so they are in flight while the reader
 * waits on the first.  Each file follows BP_RA_STREAMS streams at once
 * (detect_stream), so concurrent scans each get theirs.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "bufpool/internal.h"
#include "util/chaos.h"

#define BP_GET_FLAGS (BP_GET_CREATE | BP_GET_NOREADAHEAD | BP_GET_OVERWRITE)

/* Wait until a pinned frame is readable.  0, or the read's negative errno.
 * A frame found in ERROR is read again, unless own_read (the caller
 * submitted the read that failed) or this call already waited on a read. */
static int wait_ready(struct bp_pool *p, struct bp_frame *f, uint64_t tag, bool own_read,
		      bool overwrite)
{
	bool waited = own_read; /* the outcome of our own read is final */
	for (;;) {
		/* Acquire pairs with the release in the read completion. */
		uint32_t s = atomic_load_explicit(&f->state, memory_order_acquire);
		if (s & BP_F_LOCKED) {
			bp_wait_locked(p, f);
			waited = true;
			continue;
		}
		if (s & BP_F_UPTODATE)
			return 0;
		if (overwrite && (s & BP_F_ERROR)) {
			/* BP_GET_OVERWRITE on a failed read: the caller
			 * replaces the page, so take it zeroed instead of
			 * reading it again (get_page refused OVERWRITE on a
			 * read-only file).  Acquire as the retry's below. */
			uint32_t ns = (s & ~BP_F_ERROR) | BP_F_LOCKED;
			if (atomic_compare_exchange_strong_explicit(&f->state, &s, ns,
					memory_order_acquire, memory_order_relaxed)) {
				/* Release fence before the zeroes, as a claim's
				 * (optread.c's design note: F_f). */
				util_fence_release();
				memset(f->data, 0, p->page_size);
				atomic_fetch_or_explicit(&f->state, BP_F_UPTODATE | BP_F_DIRTY,
							 memory_order_relaxed);
				/* Release pairs with waiters' acquire loads. */
				fwait_bit_unlock(p->wt, &f->state, BP_LOCKED);
				return 0;
			}
			continue;
		}
		if (waited || !(s & BP_F_ERROR)) {
			int err = atomic_load_explicit(&f->io_err, memory_order_relaxed);
			return -(err ? err : EIO);
		}
		/* Found a failed read: retry it ourselves.  Acquire pairs with
		 * the failed completion's release unlock (we reuse the frame). */
		uint32_t ns = (s & ~BP_F_ERROR) | BP_F_LOCKED;
		if (atomic_compare_exchange_strong_explicit(&f->state, &s, ns,
				memory_order_acquire, memory_order_relaxed)) {
			bp_count(p, BP_C_READS);
			bp_io_read(p, f, tag);
			waited = true; /* our own read decides now */
		}
	}
}

/* Last step of bp_get on a pinned frame: wait for it to be readable; on
 * error drop the pin.  own_read: see wait_ready (and it is a miss, not a hit). */
static int finish_get(struct bp_pool *p, struct bp_frame *f, uint64_t tag, bool own_read,
		      unsigned flags, struct bp_frame **out)
{
	if (!own_read)
		bp_count(p, BP_C_HITS);
	int r = wait_ready(p, f, tag, own_read, flags & BP_GET_OVERWRITE);
	if (r < 0) {
		bp_unpin(p, f);
		return r;
	}
	*out = f;
	return 0;
}

static void submit_readahead(struct bp_pool *p, struct bp_frame *const *fs, const uint64_t *tags,
			     unsigned n)
{
	if (!n)
		return;
	bp_io_submit_reads(p, fs, tags, n);
	for (unsigned i = 0; i < n; i++)
		bp_unpin(p, fs[i]); /* LOCKED keeps it from eviction until read */
}

/* Read ahead the pages after pageno of file (tags of its id), for its
 * stream number stream. */
static void readahead(struct bp_pool *p, struct bp_file *file, uint64_t pageno, unsigned stream)
{
	/* npages: acquire/release pair with grow_npages and new_page so a
	 * page count, once seen, is never older than a page we saw created. */
	uint64_t npages = atomic_load_explicit(&file->npages, memory_order_acquire);
	uint64_t q = pageno + 1;
	/* The reads go out in batches (one submission on the io_uring
	 * engine), each frame LOCKED and pinned until then. */
	enum { RA_BATCH = 32 };
	struct bp_frame *fs[RA_BATCH];
	uint64_t tags[RA_BATCH];
	unsigned n = 0;
	for (; q <= pageno + p->readahead && q < npages; q++) {
		uint64_t tag = bp_tag(file->id, q);
		if (bp_pt_contains(p, tag))
			continue;
		struct bp_frame *f, *g;
		if (bp_claim_frame(p, BP_CLAIM_NOWAIT, tag, NULL, &f) < 0)
			break;
		int r = bp_pt_insert_or_pin(p, f, tag, &g);
		if (r != 0) { /* resident after all */
			CHAOS_POINT("access.c:readahead:resident_before_free");
			bp_free_claimed(p, f);
			if (r > 0)
				bp_unpin(p, g);
			continue;
		}
		bp_count(p, BP_C_READS);
		bp_count(p, BP_C_READAHEADS);
		fs[n] = f;
		tags[n++] = tag;
		if (n == RA_BATCH) {
			submit_readahead(p, fs, tags, n);
			n = 0;
		}
	}
	submit_readahead(p, fs, tags, n);
	/* The stream goes on from the last page read ahead. */
	atomic_store_explicit(&file->ra_last[stream], q - 1, memory_order_relaxed);
}

/* A miss on pageno: read ahead if it continues one of the file's streams,
 * else start a stream there (in the round robin's next slot).  Relaxed
 * loads and stores: two misses racing on a slot at worst both read ahead
 * (readahead skips resident pages) or lose a stream for one miss. */
static void detect_stream(struct bp_pool *p, struct bp_file *file, uint64_t pageno)
{
	for (unsigned i = 0; i < BP_RA_STREAMS; i++) {
		if (atomic_load_explicit(&file->ra_last[i], memory_order_relaxed) + 1 == pageno) {
			readahead(p, file, pageno, i);
			return;
		}
	}
	unsigned slot = atomic_fetch_add_explicit(&file->ra_cursor, 1, memory_order_relaxed) %
			BP_RA_STREAMS;
	atomic_store_explicit(&file->ra_last[slot], pageno, memory_order_relaxed);
}

static void grow_npages(struct bp_file *file, uint64_t pageno)
{
	uint64_t n = atomic_load_explicit(&file->npages, memory_order_relaxed);
	/* release: pairs with the acquire loads of npages in get_page and
	 * readahead, so a thread that sees the larger count also sees the
	 * created page's mapping published before it. */
	while (n <= pageno &&
	       !atomic_compare_exchange_weak_explicit(&file->npages, &n, pageno + 1,
			memory_order_release, memory_order_relaxed))
		;
}

static bool read_only(const struct bp_pool *p, const struct bp_file *file)
{
	return ((p->flags | file->flags) & BP_OPEN_READONLY) != 0;
}

/* The three ways a page is made rather than read (the create paths). */
enum create_path {
	CREATE_PAST_END,  /* get_page: past the end; npages grows past it */
	CREATE_OVERWRITE, /* get_page, BP_GET_OVERWRITE: below the end, replaced */
	CREATE_NEW,       /* new_page: its CAS has moved npages past it */
};

/* The end of every create path, on claimed frame f mapped as pageno of
 * file and LOCKED: zeroes, npages grown and the create counted where the
 * page is new, then UPTODATE, DIRTY (the file does not hold these zeroes)
 * and REFERENCED, and LOCKED cleared. */
static void create_page(struct bp_pool *p, struct bp_file *file, struct bp_frame *f,
			uint64_t pageno, enum create_path how)
{
	memset(f->data, 0, p->page_size);
	if (how == CREATE_PAST_END)
		grow_npages(file, pageno);
	if (how != CREATE_OVERWRITE)
		bp_count(p, BP_C_CREATES);
	atomic_fetch_or_explicit(&f->state, BP_F_UPTODATE | BP_F_DIRTY | BP_F_REFERENCED,
				 memory_order_relaxed);
	/* Release pairs with waiters' acquire loads of the state. */
	fwait_bit_unlock(p->wt, &f->state, BP_LOCKED);
}

/* May a miss on pageno go on to claim a frame?  A page past the end (as
 * the count stands now) only to be created: -ENXIO without BP_GET_CREATE
 * or BP_GET_OVERWRITE, -EROFS on a read-only file.  Whether it is created
 * is decided once the mapping is ours (fill_miss): it may have been
 * created meanwhile. */
static int miss_allowed(struct bp_pool *p, struct bp_file *file, uint64_t pageno, unsigned flags)
{
	/* acquire: pairs with grow_npages / new_page (see readahead). */
	if (pageno < atomic_load_explicit(&file->npages, memory_order_acquire))
		return 0;
	if (!(flags & (BP_GET_CREATE | BP_GET_OVERWRITE)))
		return -ENXIO;
	return read_only(p, file) ? -EROFS : 0;
}

/* A miss's frame f, claimed and now mapped as tag (page pageno of file):
 * create the page or read it in. */
static int fill_miss(struct bp_pool *p, struct bp_file *file, struct bp_frame *f, uint64_t tag,
		     uint64_t pageno, unsigned flags, struct bp_frame **out)
{
	/* Decided for good now that we own the mapping: the page may have
	 * been created (and even written and evicted) since miss_allowed.
	 * If it is still past the end, nobody can have written it: a page
	 * only comes below npages while its creator holds its mapping (here,
	 * or new_page's CAS), or as a hole made by a create further on, and
	 * a hole is zeros until someone maps it, which now only we can. */
	if (pageno >= atomic_load_explicit(&file->npages, memory_order_acquire)) {
		create_page(p, file, f, pageno, CREATE_PAST_END);
		*out = f;
		return 0;
	}
	/* An overwrite of a page below the end is not read: its caller
	 * replaces all of it, and the frame is DIRTY, so the file's copy is
	 * never taken for the page's. */
	if (flags & BP_GET_OVERWRITE) {
		create_page(p, file, f, pageno, CREATE_OVERWRITE);
		*out = f;
		return 0;
	}
	atomic_fetch_or_explicit(&f->state, BP_F_REFERENCED, memory_order_relaxed);
	bp_count(p, BP_C_READS);
	CHAOS_POINT("access.c:get_page:before_read");
	bp_io_read(p, f, tag);
	if (p->readahead && !(flags & BP_GET_NOREADAHEAD))
		detect_stream(p, file, pageno);
	return finish_get(p, f, tag, true, flags, out);
}

static int get_page(struct bp_file *file, uint64_t pageno, unsigned flags,
		    const struct timespec *deadline, bool timed, struct bp_frame **out)
{
	if (!file || !out || (flags & ~BP_GET_FLAGS))
		return -EINVAL;
	if (!fwait_deadline_valid(deadline))
		return -EINVAL; /* checked up front: it is only used once every frame is pinned */
	if (pageno > file->max_pageno)
		return -EFBIG;
	struct bp_pool *p = file->pool;
	/* OVERWRITE is a write (the page comes back DIRTY), so a read-only
	 * file refuses it up front, resident page or not: a resident page in
	 * ERROR would otherwise be zeroed and dirtied by wait_ready, and a
	 * dirty page of a read-only file can never be written (a writable
	 * pool's flushes fail with -EBADF on it) nor evicted. */
	if ((flags & BP_GET_OVERWRITE) && read_only(p, file))
		return -EROFS;
	uint64_t tag = bp_tag(file->id, pageno);
	for (;;) {
		struct bp_frame *f, *g;
		int r = bp_pt_lookup_pin(p, tag, &f);
		if (r == 0)
			return finish_get(p, f, tag, false, flags, out);
		if (r == -EAGAIN)
			return r; /* resident, but at the pin limit */
		r = miss_allowed(p, file, pageno, flags);
		if (r < 0)
			return r;
		CHAOS_POINT("access.c:get_page:miss_before_claim");
		r = bp_claim_frame(p, timed ? BP_CLAIM_WAIT_UNPIN : BP_CLAIM_WAIT_IO, tag, deadline, &f);
		if (r < 0) {
			/* The frames may have been taken by concurrent misses on
			 * this very page: one last look. */
			if (bp_pt_lookup_pin(p, tag, &f) == 0)
				return finish_get(p, f, tag, false, flags, out);
			bp_count(p, BP_C_BUSY);
			return r;
		}
		CHAOS_POINT("access.c:get_page:claimed_before_insert");
		r = bp_pt_insert_or_pin(p, f, tag, &g);
		if (r != 0) { /* lost the race: use theirs */
			CHAOS_POINT("access.c:get_page:lost_insert_race");
			bp_free_claimed(p, f);
			if (r < 0)
				return r; /* theirs is at the pin limit */
			bp_unpin(p, g);
			continue;
		}
		bp_count(p, BP_C_MISSES);
		return fill_miss(p, file, f, tag, pageno, flags, out);
	}
}

int bp_get(struct bp_pool *pool, uint64_t pageno, unsigned flags, struct bp_frame **frame)
{
	return get_page(bp_file0(pool), pageno, flags, NULL, false, frame);
}

int bp_get_timed(struct bp_pool *pool, uint64_t pageno, unsigned flags,
		 const struct timespec *deadline, struct bp_frame **frame)
{
	return get_page(bp_file0(pool), pageno, flags, deadline, true, frame);
}

int bp_file_get(struct bp_file *file, uint64_t pageno, unsigned flags, struct bp_frame **frame)
{
	return get_page(file, pageno, flags, NULL, false, frame);
}

int bp_file_get_timed(struct bp_file *file, uint64_t pageno, unsigned flags,
		      const struct timespec *deadline, struct bp_frame **frame)
{
	return get_page(file, pageno, flags, deadline, true, frame);
}

/* new_page found n mapped (f pinned): someone else is creating it or it
 * already exists.  If npages has not moved past n yet, its creator holds it
 * LOCKED until it has (get_page grows npages before unlocking, new_page
 * CASes it): wait for that rather than spin, then let the caller retry. */
static void wait_created(struct bp_pool *p, struct bp_file *file, struct bp_frame *f, uint64_t n)
{
	/* acquire: pairs with the creator's release update of npages. */
	if (atomic_load_explicit(&file->npages, memory_order_acquire) <= n)
		fwait_bit_wait(p->wt, &f->state, BP_LOCKED, NULL);
	bp_unpin(p, f);
}

/* The tag whose home frame a new page should take: the next page number
 * as things stand (a guess: a concurrent creator may take it first). */
static uint64_t next_home(struct bp_file *file)
{
	return bp_tag(file->id, atomic_load_explicit(&file->npages, memory_order_relaxed));
}

/* timed: wait for an unpin (until deadline, NULL: without bound) when
 * every frame is pinned, as get_page's timed form does. */
static int new_page(struct bp_file *file, const struct timespec *deadline, bool timed,
		    uint64_t *pageno, struct bp_frame **frame)
{
	if (!file || !pageno || !frame)
		return -EINVAL;
	if (!fwait_deadline_valid(deadline))
		return -EINVAL;
	struct bp_pool *pool = file->pool;
	if (read_only(pool, file))
		return -EROFS;
	/* Claim the frame before choosing the number: page n becomes visible
	 * (n < bp_page_count) only once it is mapped here, LOCKED, so a bp_get
	 * of n can only find this frame and wait for it, never read n as a
	 * hole and write into a copy that this call would then zero over.  A
	 * failed claim therefore has no number to give back. */
	struct bp_frame *f, *g;
	const enum bp_claim_mode mode = timed ? BP_CLAIM_WAIT_UNPIN : BP_CLAIM_WAIT_IO;
	int r = bp_claim_frame(pool, mode, next_home(file), deadline, &f);
	for (;;) {
		if (r < 0) {
			bp_count(pool, BP_C_BUSY);
			return r;
		}
		/* acquire: pairs with the release updates of npages, so if n
		 * was created and evicted we see its mapping gone only after
		 * npages moved past it (then the CAS below fails). */
		uint64_t n = atomic_load_explicit(&file->npages, memory_order_acquire);
		if (n > file->max_pageno) {
			bp_free_claimed(pool, f);
			return -EFBIG;
		}
		uint64_t tag = bp_tag(file->id, n);
		r = bp_pt_insert_or_pin(pool, f, tag, &g);
		if (r > 0) {
			wait_created(pool, file, g, n);
			r = 0; /* f is still ours, unmapped: try the next number */
			continue;
		}
		if (r < 0) { /* n mapped at the pin limit: let its creator run */
			sched_yield();
			r = 0;
			continue;
		}
		/* f is n's frame, LOCKED.  Take the number: release publishes
		 * the mapping (made under the partition lock) before the count;
		 * acquire on failure pairs with whoever moved it. */
		uint64_t expect = n;
		if (atomic_compare_exchange_strong_explicit(&file->npages, &expect, n + 1,
				memory_order_acq_rel, memory_order_acquire)) {
			bp_count(pool, BP_C_MISSES);
			create_page(pool, file, f, n, CREATE_NEW);
			*pageno = n;
			*frame = f;
			return 0;
		}
		/* A bp_get(CREATE) further on made n a hole, which may have been
		 * written and evicted since: n exists.  Read it into f as a miss
		 * would (whoever waits on f gets the file's page), leave it
		 * unpinned like readahead, and start over with a new frame. */
		bp_count(pool, BP_C_READS);
		bp_io_read(pool, f, tag);
		bp_unpin(pool, f); /* LOCKED keeps it from eviction until read */
		r = bp_claim_frame(pool, mode, next_home(file), deadline, &f);
	}
}

int bp_new_page(struct bp_pool *pool, uint64_t *pageno, struct bp_frame **frame)
{
	return new_page(bp_file0(pool), NULL, false, pageno, frame);
}

int bp_new_page_timed(struct bp_pool *pool, const struct timespec *deadline, uint64_t *pageno,
		      struct bp_frame **frame)
{
	return new_page(bp_file0(pool), deadline, true, pageno, frame);
}

int bp_file_new_page(struct bp_file *file, uint64_t *pageno, struct bp_frame **frame)
{
	return new_page(file, NULL, false, pageno, frame);
}

int bp_file_new_page_timed(struct bp_file *file, const struct timespec *deadline,
			   uint64_t *pageno, struct bp_frame **frame)
{
	return new_page(file, deadline, true, pageno, frame);
}

int bp_release(struct bp_pool *pool, struct bp_frame *frame)
{
	if (!bp_frame_valid(pool, frame))
		return -EINVAL;
	return bp_unpin_checked(pool, frame); /* -EINVAL: a double release */
}

void *bp_data(const struct bp_frame *frame)
{
	return frame ? frame->data : NULL;
}

uint64_t bp_frame_pageno(const struct bp_frame *frame)
{
	if (!frame)
		return BP_NO_PAGE;
	uint64_t tag = atomic_load_explicit(&frame->tag, memory_order_relaxed);
	return tag == BP_NO_PAGE ? tag : bp_tag_page(tag);
}

uint32_t bp_frame_file_id(const struct bp_frame *frame)
{
	if (!frame)
		return UINT32_MAX;
	uint64_t tag = atomic_load_explicit(&frame->tag, memory_order_relaxed);
	return tag == BP_NO_PAGE ? UINT32_MAX : bp_tag_file(tag);
}

int bp_mark_dirty_lsn(struct bp_pool *pool, struct bp_frame *frame, uint64_t lsn)
{
	if (lsn == 0)
		return -EINVAL;
	int r = bp_mark_dirty(pool, frame);
	if (r < 0)
		return r;
	/* After bp_mark_dirty waited for WRITEBACK: a write finishing now
	 * would reset rec_lsn after we set it.  Relaxed: the caller's
	 * exclusive latch keeps write-backs out until its unlatch publishes
	 * these (internal.h, struct bp_frame). */
	if (atomic_load_explicit(&frame->lsn, memory_order_relaxed) < lsn)
		atomic_store_explicit(&frame->lsn, lsn, memory_order_relaxed);
	if (atomic_load_explicit(&frame->rec_lsn, memory_order_relaxed) == 0)
		atomic_store_explicit(&frame->rec_lsn, lsn, memory_order_relaxed);
	return 0;
}

uint64_t bp_frame_lsn(const struct bp_frame *frame)
{
	return frame ? atomic_load_explicit(&frame->lsn, memory_order_relaxed) : 0;
}

int bp_mark_dirty(struct bp_pool *pool, struct bp_frame *frame)
{
	if (!bp_frame_valid(pool, frame))
		return -EINVAL;
	/* Acquire pairs with the write completion's release clear of
	 * WRITEBACK: the write has read the page before we re-dirty it. */
	uint32_t s = atomic_load_explicit(&frame->state, memory_order_acquire);
	if (!bp_pins(s))
		return -EINVAL;
	/* Pinned: its tag is a page of an open file. */
	if (read_only(pool, bp_file_of(pool, atomic_load_explicit(&frame->tag,
								   memory_order_relaxed))))
		return -EROFS;
	bp_debug_check(pool, bp_debug_x_mine(frame),
		       "bp_mark_dirty: the caller does not hold the frame's exclusive latch");
	if (s & BP_F_WRITEBACK)
		bp_wait_writeback(pool, frame, NULL);
	/* Release pairs with the writer's acquire CAS that clears DIRTY and
	 * sets WRITEBACK (writeback.c), so it writes what we wrote. */
	atomic_fetch_or_explicit(&frame->state, BP_F_DIRTY, memory_order_release);
	return 0;
}
