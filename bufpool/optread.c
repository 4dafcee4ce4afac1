/* SPDX-License-Identifier: MIT */
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
 * Why it is enough, in the C11 model (the protocol's one argument; latch.c
 * and evict.c name their halves and point here).  Boehm's seqlock recipe
 * ("Can Seqlocks Get Along With Programming Language Memory Models?",
 * 2012), with the page's bytes treated as relaxed atomics (see "Data race"
 * below for what they really are).  The writers:
 *   X   a latch holder gains X with an acquire RMW, then a release fence
 *       (latch.c x_taken: F_x), then stores to the page and raises the
 *       version with a relaxed store, then clears X with a release CAS (U);
 *   T   a take of a mapped frame sets LOCKED with an acquire CAS, raises
 *       the version with a release RMW (R_t), then a release fence (F_t),
 *       then stores the tag; the new page's tag and bytes come after it,
 *       and a thread that takes the frame once freed puts its own release
 *       fence before its stores (evict.c try_take_free: F_f), as does one
 *       that zeroes a page left by a failed read (access.c wait_ready).
 * The pairs (reader's load <- writer's release):
 *   begin's version (acquire) <- F_x (the raise is a store after it) or
 *     R_t: a begin that reads a raised version then sees, at its state and
 *     latch loads, the X or LOCKED that came before the raise (refused),
 *     or a later state: X cleared by an unlatch, whose release published
 *     the whole change; LOCKED cleared by a release made after the new
 *     tag was stored, so the tag check refuses;
 *   begin's state (acquire) <- the release that cleared LOCKED (the read's
 *     completion, the creator's unlock): a page read in and never latched;
 *   begin's and end's latch loads (acquire) <- U: X seen clear after an
 *     unlatch means that holder's page stores and raise are visible;
 *   end's acquire fence <- F_x, F_t, F_f (fence to fence): a reader that
 *     read any store made after one of those fences synchronises there, so
 *     the X gain or the raise before that fence happens before end's two
 *     loads.  End then sees X still set, or X cleared by an unlatch (U,
 *     which raised the version first), or the take's raise: the version is
 *     above the one begin read, unless begin already read that raise, and
 *     then the first pair says begin saw the change begun or finished,
 *     never half done.  The version load may be relaxed: it comes after
 *     the fence and the latch's acquire load, which carry those edges.
 * Without F_x (the code before it named a "seq_cst CAS, a full barrier"),
 * the model lets a reader read a new byte of the page and then X clear,
 * and so does ARMv8 when the CAS is an LDAXR/STLXR loop (cores without
 * LSE atomics, where GCC's outline-atomics helpers use that loop too): a
 * later plain store may become visible before the STLXR.  A reader could then accept
 * a page half old and half new.  F_t and F_f close the same hole in the
 * model; the hardware's cumulativity already closed it for them.  On x86
 * (TSO) every one of these fences is a compiler barrier only, and the
 * RMWs are the same locked instructions as before.  Bytes the kernel
 * writes (a read into the page: pread, io_uring) are outside the model:
 * the claiming thread's F_t or F_f comes before the submission that hands
 * the page over, and x86 and ARMv8 are multi-copy atomic, so a CPU that
 * sees a byte of the read sees the raise too.
 * The fence in end keeps the caller's page loads before the two checks
 * (a seqlock's read_seqcount_retry has smp_rmb in the same place; here it
 * is DMB ISHLD on ARM, nothing on x86).
 *
 * Data race.  The caller's page loads are plain loads (memcpy, struct
 * fields, binary searches) racing with writers' plain stores: in C11 a
 * data race, whose behaviour the standard leaves undefined; Boehm's recipe
 * assumes relaxed atomic loads there, which the pool cannot impose on its
 * callers' code.  What the code relies on instead, as Linux's seqlocks
 * (data_race()) and LeanStore do: the compiler cannot move a page load out
 * of the window (begin's acquire loads keep it after them, end's acquire
 * fence keeps it before the checks, inlined or not); callers read each
 * value they act on once, through a volatile load (tools/kv's KV_ONCE),
 * and bound it, so a racing value is never re-read differently or used
 * unchecked; and nothing read is trusted before end passes.  A racing
 * load may return any mix of old and new bytes; end rejects it.
 *
 * A reader stores nothing shared: the walk, the version, state, tag and
 * latch are loads; the frame's cache line stays shared between readers on
 * every core.  Two exceptions, both rare or CPU-local: REFERENCED is set
 * (one fetch_or) only when the clock has cleared it, and the counters are
 * the calling CPU's shard (account.c).
 *
 * ThreadSanitizer: the caller's page loads race with a writer's stores by
 * design (above), and TSan does not model fences.  In a TSan build a
 * begin that succeeds opens AnnotateIgnoreReadsBegin and end closes it, so
 * the reads between are not reported; the atomics above still carry TSan's happens-before.  A begin
 * left without its end leaves the thread's reads ignored, which TSan
 * reports when the thread exits: the misuse shows up in the tests.
 */
#include <errno.h>

#include "bufpool/internal.h"

#ifdef UTIL_TSAN
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
	    atomic_load_explicit(&f->tag, memory_order_relaxed) != tag)
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
	return begin_on(pool, frame, atomic_load_explicit(&frame->tag, memory_order_relaxed), rd);
}

static bool still_valid(const struct bp_read *rd)
{
	/* The caller's page loads come before the checks below (a seqlock
	 * reader's smp_rmb; under TSan the reads are ignored anyway). */
	util_fence_acquire();
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
