/*
 * optread.c - optimistic reads: a page read with no pin, no latch and no
 * store to shared memory, validated by the frame's version afterwards.
 *
 * Layer 4 (optimistic reads): calls only pagetable.c, latch.c, frame.c and
 * account.c.
 *
 * Design note
 * -----------
 * A seqlock reader over the pool's frames (bufpool.h states the rules for
 * callers).  latch.c's design note says who raises frame.version and why
 * every change of a page is either under the exclusive latch (X) or after
 * a raise; this file is the reading side:
 *
 *   begin:  find the frame (bp_pt_find: the page map or the lock-free
 *           chain walk, no pin; it prefetches the page), v = version
 *           (acquire), then check, in this order after it: the state is
 *           UPTODATE without LOCKED, the tag is still ours, X is clear
 *           (acquire).
 *   read:   the caller's plain loads of the page.
 *   end:    acquire fence, X still clear (acquire), version still v.
 *
 * Why it is enough:
 *   - the frame taken for another page: the take's seq_cst raise
 *     (bp_latch_version_bump) comes after its LOCKED and before the new
 *     tag and contents.  If begin's acquire load read the raised version,
 *     it synchronises with that RMW, so its state load sees LOCKED (or a
 *     later state, with the new tag): begin refuses.  If it read the old
 *     one, any byte of the new page the caller reads was stored after the
 *     raise, so end's version load (after the fence) sees the raise;
 *   - a writer: its stores to the page come after its seq_cst CAS that
 *     set X, so a reader that read one of them sees X at end, or, if the
 *     writer has left, the release CAS that cleared X, after which the
 *     version load sees the raise unlock_exclusive stored before it;
 *   - begin's acquire load of the latch, when it reads a release that
 *     cleared X, makes the last holder's page visible to the reader; a
 *     read completion's release (the LOCKED clear, fwait_bit_unlock) is
 *     acquired by the state load, for a page read in and never latched.
 * The fence in end keeps the caller's page loads before the two checks
 * (a seqlock's read_seqcount_retry has smp_rmb in the same place).
 *
 * A reader stores nothing shared: the walk, the version, state, tag and
 * latch are loads; the frame's cache line stays shared between readers on
 * every core.  Two exceptions, both rare or CPU-local: REFERENCED is set
 * (one fetch_or) only when the clock has cleared it, and the counters are
 * the calling CPU's shard (account.c).
 *
 * ThreadSanitizer: the caller's page loads race with a writer's stores by
 * design (a seqlock's benign race, Linux's data_race()), and TSan does not
 * model fences.  In a TSan build a begin that succeeds opens
 * AnnotateIgnoreReadsBegin and end closes it, so the reads between are not
 * reported; the atomics above still carry TSan's happens-before.  A begin
 * left without its end leaves the thread's reads ignored, which TSan
 * reports when the thread exits: the misuse shows up in the tests.
 */
#include <errno.h>

#include "bufpool/internal.h"

#if defined(__SANITIZE_THREAD__)
#define BP_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BP_TSAN 1
#endif
#endif

#ifdef BP_TSAN
/* TSan's runtime (dynamic annotations). */
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
#define OPEN_SECTION() AnnotateIgnoreReadsBegin(__FILE__, __LINE__)
#define CLOSE_SECTION() AnnotateIgnoreReadsEnd(__FILE__, __LINE__)
#else
#define OPEN_SECTION() ((void)0)
#define CLOSE_SECTION() ((void)0)
#endif

/* Counting.  bp_stats' optimistic_reads is the begins that succeeded,
 * counted as tries less refusals, and the try is counted first, before
 * the begin loads anything of the frame.  Where a counter's add is an
 * atomic RMW (account.c: no restartable sequences here), that is a locked
 * instruction on x86, which waits for every earlier load and which no
 * later load passes: counted as a success, after the frame's loads, it
 * would hold the caller's loads of the page back until the frame's cache
 * line had come.  At the start it waits only for loads the caller has
 * finished with (the parent node it took the page number from).  Refusals
 * count on the way out, off the fast path. */
static inline void count_try(struct bp_pool *p)
{
	bp_count(p, BP_C_OPT_BEGINS);
}

static int refused(struct bp_pool *p, int err)
{
	bp_count(p, BP_C_OPT_REFUSED);
	return err;
}

/* Begin on f, which the caller found holding tag: 0, -ENOENT, -EBUSY.
 * The caller has counted the try (count_try). */
static int begin_on(struct bp_pool *p, struct bp_frame *f, uint64_t tag, struct bp_read *rd)
{
	/* Acquire: the loads below come after it (see the design note). */
	uint64_t v = atomic_load_explicit(&f->version, memory_order_acquire);
	/* Acquire: pairs with the read completion's release of LOCKED, for
	 * a page read in and never latched since. */
	uint32_t s = atomic_load_explicit(&f->state, memory_order_acquire);
	if ((s & (BP_F_LOCKED | BP_F_UPTODATE)) != BP_F_UPTODATE ||
	    atomic_load_explicit(&f->pageno, memory_order_relaxed) != tag)
		return refused(p, -ENOENT);
	if (bp_latch_excl_held(f))
		return refused(p, -EBUSY);
	if (!(s & BP_F_REFERENCED))
		atomic_fetch_or_explicit(&f->state, BP_F_REFERENCED, memory_order_relaxed);
	*rd = (struct bp_read){ .pool = p, .frame = f, .data = bp_frame_page(p, f), .version = v };
	OPEN_SECTION();
	return 0;
}

static int begin_tag(struct bp_file *file, uint64_t pageno, struct bp_read *rd)
{
	if (!file || !rd)
		return -EINVAL;
	if (pageno > file->max_pageno)
		return -EFBIG;
	count_try(file->pool);
	uint64_t tag = bp_tag(file->id, pageno);
	struct bp_frame *f = bp_pt_find(file, tag);
	return f ? begin_on(file->pool, f, tag, rd) : refused(file->pool, -ENOENT);
}

int bp_read_begin(struct bp_pool *pool, uint64_t pageno, struct bp_read *rd)
{
	return begin_tag(bp_file0(pool), pageno, rd);
}

int bp_file_read_begin(struct bp_file *file, uint64_t pageno, struct bp_read *rd)
{
	return begin_tag(file, pageno, rd);
}

int bp_read_begin_frame(struct bp_pool *pool, struct bp_frame *frame, struct bp_read *rd)
{
	if (!bp_frame_valid(pool, frame) || !rd)
		return -EINVAL;
	/* Relaxed: the caller's own pin is what is checked; it keeps the tag. */
	if (!bp_pins(atomic_load_explicit(&frame->state, memory_order_relaxed)))
		return -EINVAL;
	count_try(pool);
	return begin_on(pool, frame, atomic_load_explicit(&frame->pageno, memory_order_relaxed), rd);
}

static bool still_valid(const struct bp_read *rd)
{
	/* The caller's page loads come before the checks below (a seqlock
	 * reader's smp_rmb).  TSan does not model fences (GCC refuses them
	 * under -fsanitize=thread): there the reads are ignored anyway and a
	 * compiler barrier keeps them in place on x86. */
#ifdef BP_TSAN
	atomic_signal_fence(memory_order_acq_rel);
#else
	atomic_thread_fence(memory_order_acquire);
#endif
	if (bp_latch_excl_held(rd->frame))
		return false;
	/* Relaxed: after bp_latch_excl_held's acquire (design note). */
	return atomic_load_explicit(&rd->frame->version, memory_order_relaxed) == rd->version;
}

bool bp_read_valid(const struct bp_read *rd)
{
	return rd && bp_frame_valid(rd->pool, rd->frame) && still_valid(rd);
}

int bp_read_end(struct bp_read *rd)
{
	if (!rd || !bp_frame_valid(rd->pool, rd->frame))
		return -EINVAL;
	bool ok = still_valid(rd);
	CLOSE_SECTION();
	rd->frame = NULL; /* ended: a second end is -EINVAL */
	if (ok)
		return 0;
	bp_count(rd->pool, BP_C_OPT_RESTARTS);
	return -ESTALE;
}
