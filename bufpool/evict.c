/* SPDX-License-Identifier: MIT */
/*
 * evict.c - clock (second-chance) sweep: find a frame for a new page; and
 * the eviction entry points bp_evict_page / bp_evict_all.
 *
 * Layer 6 (evict): calls only writeback.c, pagetable.c, latch.c, frame.c and
 * account.c.
 *
 * Design note
 * -----------
 * A claim for a known page first tries that page's home frame
 * (pagetable.c, "Home frames") if it is free; only then the sweep.
 * The hand is one atomic counter; a sweeper takes the next CLOCK_RUN
 * frames with one fetch_add and looks at them in order, so sweeping
 * threads spread over different frames without meeting on the hand's
 * cache line at every frame (one add per frame was 40% of the sweep's
 * time with 2 threads missing 0.47 times per YCSB-C op, and the modulo
 * another 12%: perf annotate, issue 33); a sweeper that finds its victim
 * early gives the rest of its run back when it can (clock_give_back).
 * A frame
 * is taken by one CAS on its state word that sets LOCKED and one pin:
 *   - a free frame (state 0, unmapped) directly;
 *   - a mapped frame only under the write lock of its page's partition, if
 *     it is unpinned, clean, not LOCKED/WRITEBACK and not REFERENCED (a set
 *     REFERENCED bit is cleared instead: the second chance).  The mapping is
 *     removed under the same lock.
 * A dirty victim gets its write-back started (writeback.c) and is taken on a
 * later pass once clean.  A claim is a sweep (clock_sweep: two laps of the
 * clock) and, if that finds nothing, a wait (wait_for_frame) for a
 * write-back or read in flight, or (BP_CLAIM_WAIT_UNPIN) for an unpin, in
 * rounds (bp_claim_frame numbers the steps).  It returns -EBUSY when
 * every frame is pinned; it never deadlocks because it holds no lock
 * while waiting and every wait has a deadline.  One wait for
 * a busy frame lasts at most TRANSIENT_WAIT_NS, or until the caller's
 * deadline if that is sooner, and each round after the first begins by
 * checking the deadline, so a caller's deadline bounds the whole claim
 * (one sweep past it at most).  Without a deadline (bp_get) the claim is
 * bounded by CLOCK_MAX_ROUNDS rounds of at most TRANSIENT_WAIT_NS each;
 * bp_get_timed with a NULL deadline restarts that count after each unpin,
 * so it waits for unpins without bound.  Frames
 * pinned but LOCKED (claimed by a concurrent miss, or being read) are not
 * "pinned by users": the sweep waits for their LOCKED to clear and retries,
 * so many concurrent misses on one page with few frames do not give -EBUSY.
 * The wait for an unpin (wait_for_unpin) counts every pin, a claim's on
 * its LOCKED frame included, because the frame can be claimed between
 * the scan for busy frames and that count; giving a claim back
 * (bp_free_claimed, through frame.c's bp_unpin_claim) therefore wakes
 * frame waiters as any drop to zero does (issue 28's lost wakeup).
 *
 * bp_evict_page never waits for a content latch (its caller may hold it):
 * a latched page is -EBUSY, and the shared latch for its write-back is
 * only tried.  It waits only for write-back, which is I/O and ends by
 * itself.  bp_evict_all is bp_flush, then bp_try_evict of every mapped
 * frame, ignoring REFERENCED.
 */
#include <errno.h>

#include "bufpool/internal.h"
#include "util/chaos.h"
#include "util/clock.h"
#include "util/probe.h"

#define CLOCK_MAX_ROUNDS 16
#define CLOCK_RUN 8u /* frames a sweeper takes from the hand at once */
#define TRANSIENT_WAIT_NS (50u * 1000u * 1000u) /* bound on one wait for a busy frame */
#define DROP_PATIENCE_NS (UINT64_C(1000) * 1000u * 1000u) /* bp_drop_frames: 1 s */

/* Take frame f, mapped to tag, for reuse if no state bit in busy is set,
 * no pin is held and its latch is idle (see bp_try_evict). */
static bool try_take(struct bp_pool *p, struct bp_frame *f, uint64_t tag, uint32_t busy)
{
	struct bp_partition *part = bp_part_of(p, tag);
	pthread_rwlock_wrlock(&part->lock);
	if (atomic_load_explicit(&f->tag, memory_order_relaxed) != tag) {
		pthread_rwlock_unlock(&part->lock);
		return false;
	}
	/* A latched frame with no pin was released by a caller still holding
	 * its latch (a misuse that bp_release cannot see without owners):
	 * never reuse it, or the new page would be born latched and the old
	 * holder could write into it.  Every legitimate holder or waiter of a
	 * latch holds a pin, and nobody can pin while we hold the write lock,
	 * so with the zero pin count checked below this cannot refuse a frame
	 * in legitimate use. */
	if (!bp_latch_idle(f)) {
		pthread_rwlock_unlock(&part->lock);
		return false;
	}
	uint32_t s = atomic_load_explicit(&f->state, memory_order_relaxed);
	for (;;) {
		if (bp_pins(s) || (s & busy)) {
			pthread_rwlock_unlock(&part->lock);
			return false;
		}
		/* Acquire pairs with the release of the last unpin / write-back
		 * completion, so our later reuse of the page memory is ordered
		 * after their accesses. */
		if (atomic_compare_exchange_weak_explicit(&f->state, &s,
				s | BP_CLAIM_BITS,
				memory_order_acquire, memory_order_relaxed))
			break;
	}
	CHAOS_POINT("evict.c:try_take:after_cas");
	/* Taken: optimistic readers of the page must now fail, before the
	 * tag or the contents change: the version's release RMW and a release
	 * fence (latch.c; paired in optread.c's design note). */
	bp_latch_version_bump(f);
	bp_pt_remove_locked(p, f, tag);
	atomic_store_explicit(&f->tag, BP_NO_PAGE, memory_order_relaxed);
	pthread_rwlock_unlock(&part->lock);
	atomic_fetch_and_explicit(&f->state,
		~(uint32_t)BP_F_PAGE_STATE, memory_order_relaxed);
	/* Only bp_drop_frames takes a dirty page (dropped unwritten by a
	 * truncate or discard).  Its oldest unwritten change goes with it, as
	 * a successful write forgets it (io.c): bp_oldest_dirty_lsn scans
	 * every frame, free ones too, so a rec_lsn left here would hold every
	 * checkpoint's redo point at it until the frame took another page.
	 * Relaxed, as that reset: the dirtier stored rec_lsn before its
	 * release unlatch and unpin, which our acquire CAS above read (zero
	 * pins), so this store is the later one; nobody can dirty the frame
	 * while we hold it LOCKED with the only pin, and the next page's
	 * insert resets it again anyway. */
	if (s & BP_F_DIRTY)
		atomic_store_explicit(&f->rec_lsn, 0, memory_order_relaxed);
	CHAOS_POINT("evict.c:try_take:taken");
	UTIL_PROBE3(bufpool, evict, bp_tag_file(tag), bp_tag_page(tag), (s & BP_F_DIRTY) != 0);
	bp_count(p, BP_C_EVICTIONS);
	return true;
}

bool bp_try_evict(struct bp_pool *p, struct bp_frame *f, uint64_t tag, bool ignore_ref)
{
	return try_take(p, f, tag, BP_F_UNEVICTABLE | (ignore_ref ? 0 : BP_F_REFERENCED));
}

int bp_drop_frames(struct bp_pool *p, uint32_t file, uint64_t from)
{
	uint64_t since = 0;
	for (uint32_t i = 0; i < p->nframes; i++) {
		struct bp_frame *f = &p->frames[i];
		for (;;) {
			uint64_t tag = atomic_load_explicit(&f->tag, memory_order_relaxed);
			if (tag == BP_NO_PAGE || bp_tag_file(tag) != file || bp_tag_page(tag) < from)
				break;
			/* A read (readahead's) or a write in flight ends by
			 * itself; then take the frame, dirty or not: its page is
			 * being dropped, not written. */
			fwait_bit_wait(p->wt, &f->state, BP_LOCKED, NULL);
			bp_wait_writeback(p, f, NULL);
			if (try_take(p, f, tag, BP_F_INFLIGHT)) {
				bp_free_claimed(p, f);
				break;
			}
			/* Pinned or latched: the callers checked that no user
			 * pins the file's pages, so this is the pool's own
			 * transient pin and shared latch (the background
			 * writer or a flush starting a write-back, a few
			 * instructions long): yield and look again.  Still so
			 * after DROP_PATIENCE_NS, it is a caller's pin after
			 * all (a broken contract, or a latch kept without a
			 * pin): say so rather than wait for it.  Else an I/O
			 * began in the window: look again. */
			if ((bp_pins(atomic_load_explicit(&f->state, memory_order_acquire)) ||
			     !bp_latch_idle(f)) && !bp_transient_patience(&since, DROP_PATIENCE_NS))
				return -EBUSY;
		}
	}
	return 0;
}

void bp_free_claimed(struct bp_pool *p, struct bp_frame *f)
{
	atomic_store_explicit(&f->tag, BP_NO_PAGE, memory_order_relaxed);
	CHAOS_POINT("evict.c:bp_free_claimed:before_drop");
	bp_unpin_claim(p, f); /* frame.c: clears the flags, unlocks, wakes */
}

static bool try_take_free(struct bp_frame *f, uint32_t s)
{
	if (s & ~FWAIT_WAITERS_MASK)
		return false;
	/* Acquire pairs with bp_free_claimed's release unlock (or a later RMW
	 * in its release sequence, such as a speculative hit's unpin). */
	if (!atomic_compare_exchange_strong_explicit(&f->state, &s,
			s | BP_CLAIM_BITS, memory_order_acquire, memory_order_relaxed))
		return false;
	/* Release fence before this thread's first store of the new page (its
	 * tag, its zeroes): the take that freed the frame raised the version
	 * (try_take), and an optimistic reader that began before that raise
	 * and reads one of our stores must see it at its end.  The raise
	 * happens before our CAS (the unlock above), but the reader only
	 * synchronises with a fence in the thread whose store it read: this
	 * one, paired with optread.c's acquire fence in still_valid.  Nothing
	 * on x86, and ARM orders it anyway (the chain is cumulative there):
	 * the C11 model needs it, not today's hardware. */
	util_fence_release();
	return true;
}

/* seq_cst loads: the second half of the Dekker pairing described in
 * wait_for_unpin. */
static bool all_pinned(struct bp_pool *p)
{
	for (uint32_t i = 0; i < p->nframes; i++)
		if (!bp_pins(atomic_load_explicit(&p->frames[i].state, memory_order_seq_cst)))
			return false;
	return true;
}

/* A frame with a read, claim or write in flight (pinned or not): its bit
 * will clear without any user action, so waiting on it makes progress. */
static struct bp_frame *io_busy_frame(struct bp_pool *p)
{
	for (uint32_t i = 0; i < p->nframes; i++) {
		uint32_t s = atomic_load_explicit(&p->frames[i].state, memory_order_relaxed);
		if (s & BP_F_INFLIGHT)
			return &p->frames[i];
	}
	return NULL;
}

struct unpin_wait {
	struct bp_pool *p;
	uint64_t seq;
};

static bool unpin_seen(void *arg)
{
	struct unpin_wait *w = arg;
	return atomic_load_explicit(&w->p->unpin_seq, memory_order_acquire) != w->seq;
}

/* Sleep until some frame is unpinned or the deadline passes. */
static int wait_for_unpin(struct bp_pool *p, const struct timespec *deadline)
{
	/* Acquire pairs with unpin_wake's release increment (frame.c). */
	struct unpin_wait w = { p, atomic_load_explicit(&p->unpin_seq, memory_order_acquire) };
	/* Dekker, in the C11 model (the pairing's one argument; frame.c's
	 * bp_unpin, bp_unpin_checked and bp_unpin_claim point here).  Here: a
	 * seq_cst RMW of
	 * frame_waiters, then seq_cst loads of the pin counts (all_pinned);
	 * there: a seq_cst RMW dropping the pin, then a seq_cst load of
	 * frame_waiters (unpin_wake).  All four are seq_cst operations, so
	 * they lie in the one total order S, which agrees with each thread's
	 * program order, and a seq_cst load reads the last seq_cst change of
	 * its object before it in S, or a later one (the rule as C++20's
	 * P0668 words it and compilers implement it; the state word's other
	 * RMWs are not seq_cst, which C11's wording mishandled).  If our load of that
	 * frame's state comes after the drop in S, it reads the drop (or a
	 * later value: a new pin, whose own drop wakes us); if it comes
	 * before, our increment comes before the unpinner's load of
	 * frame_waiters, which reads it and wakes.  Operations, not fences:
	 * on ARMv8 a seq_cst load is LDAR, which an earlier store-release
	 * (STLXR/LDADDAL) does not pass, so no DMB is needed; on x86 the RMWs
	 * are locked and the loads plain. */
	atomic_fetch_add_explicit(&p->frame_waiters, 1, memory_order_seq_cst);
	CHAOS_POINT("evict.c:wait_for_unpin:announced");
	int r = 0;
	if (all_pinned(p)) {
		uint64_t t0 = util_now_ns();
		r = fwait_wait(p->wt, &p->unpin_seq, 0, unpin_seen, &w, deadline);
		bp_account_wait(p, NULL, BP_H_FRAME, util_now_ns() - t0);
	}
	atomic_fetch_sub_explicit(&p->frame_waiters, 1, memory_order_seq_cst);
	return r == -ETIMEDOUT ? -EBUSY : r; /* any other error ends the wait too */
}

/* The bound of one wait for a busy frame: TRANSIENT_WAIT_NS from now, or
 * the caller's deadline if that comes first. */
static struct timespec transient_deadline(const struct timespec *deadline)
{
	struct timespec d = fwait_deadline_after_ns(TRANSIENT_WAIT_NS);
	if (deadline && util_timespec_ns(deadline) < util_timespec_ns(&d))
		d = *deadline;
	return d;
}

/* The run of the clock a sweeper holds: the hand's value past it (end),
 * the next frame's index, the frames left. */
struct clock_run {
	uint64_t end;
	uint32_t idx, left;
};

static struct bp_frame *clock_next(struct bp_pool *p, struct clock_run *run)
{
	if (run->left == 0) {
		/* Relaxed: the hand only spreads sweepers over the frames;
		 * each frame's state CAS decides. */
		uint64_t h = atomic_fetch_add_explicit(&p->clock_hand, CLOCK_RUN,
						       memory_order_relaxed);
		run->end = h + CLOCK_RUN;
		run->idx = (uint32_t)(h % p->nframes);
		run->left = CLOCK_RUN;
	}
	struct bp_frame *f = &p->frames[run->idx];
	if (++run->idx == p->nframes)
		run->idx = 0;
	run->left--;
	return f;
}

/* A victim found before the run's end: move the hand back to just past it
 * if nobody took a run since, so that the frames not looked at keep their
 * turn (one sweeper alone then moves the hand exactly as one step per
 * frame would: readahead's pages and second chances last as long). */
static void clock_give_back(struct bp_pool *p, const struct clock_run *run)
{
	uint64_t end = run->end;
	/* Relaxed, as the fetch_add: the hand orders nothing, it only says
	 * where the next sweeper looks; if another took a run meanwhile the
	 * CAS fails and the frames not looked at wait for the next lap. */
	if (run->left)
		atomic_compare_exchange_strong_explicit(&p->clock_hand, &end, run->end - run->left,
							memory_order_relaxed, memory_order_relaxed);
}

/* What a sweep saw besides a victim: the dirty frame whose write-back it
 * started (at most one per sweep), and a frame with I/O in flight. */
struct sweep_busy {
	struct bp_frame *wb, *transient;
};

/* Look at frame f for the sweep: true if it was taken (free, or an
 * unpinned clean victim without a second chance left). */
static bool sweep_frame(struct bp_pool *p, enum bp_claim_mode mode, struct bp_frame *f,
			struct sweep_busy *busy)
{
	uint32_t s = atomic_load_explicit(&f->state, memory_order_relaxed);
	if (try_take_free(f, s))
		return true;
	if (bp_pins(s))
		return false;
	if (s & BP_F_INFLIGHT) {
		busy->transient = f;
		return false;
	}
	uint64_t tag = atomic_load_explicit(&f->tag, memory_order_relaxed);
	if (tag == BP_NO_PAGE)
		return false;
	if (s & BP_F_REFERENCED) {
		atomic_fetch_and_explicit(&f->state, ~BP_F_REFERENCED, memory_order_relaxed);
		return false;
	}
	if (s & BP_F_DIRTY) {
		if (mode != BP_CLAIM_NOWAIT && !busy->wb &&
		    bp_start_writeback(p, f, BP_WB_TRY) > 0) {
			bp_count(p, BP_C_DIRTY_EVICTIONS);
			busy->wb = f;
		}
		return false;
	}
	return bp_try_evict(p, f, tag, false);
}

/* One sweep of the clock (PostgreSQL's StrategyGetBuffer): one lap for
 * BP_CLAIM_NOWAIT, else two, so that a second chance taken away in the
 * first lap can be used in the second.  The frame taken, or NULL. */
static struct bp_frame *clock_sweep(struct bp_pool *p, enum bp_claim_mode mode,
				    struct sweep_busy *busy)
{
	uint64_t laps = mode == BP_CLAIM_NOWAIT ? 1 : 2;
	struct clock_run run = { 0, 0, 0 };
	for (uint64_t i = 0; i < laps * p->nframes; i++) {
		struct bp_frame *f = clock_next(p, &run);
		if (sweep_frame(p, mode, f, busy)) {
			clock_give_back(p, &run);
			return f;
		}
	}
	return NULL;
}

/* No frame was taken by a sweep: wait for one to become takable, bounded.
 * A write-back the sweep started, else an I/O in flight anywhere, is
 * waited for at most TRANSIENT_WAIT_NS (or to the deadline); with every
 * frame pinned by users and nothing in flight, BP_CLAIM_WAIT_UNPIN waits
 * for an unpin (*unpinned set) and any other mode gives up.  0 after a
 * wait (the caller sweeps again), -EBUSY to give up. */
static int wait_for_frame(struct bp_pool *p, enum bp_claim_mode mode,
			  const struct timespec *deadline, struct sweep_busy busy, bool *unpinned)
{
	*unpinned = false;
	if (!busy.wb && !busy.transient)
		busy.transient = io_busy_frame(p);
	/* Named for the claim this wait belongs to (the name seeds the
	 * chaos build's decisions: util/chaos.h). */
	CHAOS_POINT("evict.c:bp_claim_frame:before_wait");
	if (!busy.wb && !busy.transient && all_pinned(p)) {
		/* Pinned by users, nothing in flight: -EBUSY, or wait. */
		if (mode != BP_CLAIM_WAIT_UNPIN || wait_for_unpin(p, deadline) < 0)
			return -EBUSY;
		*unpinned = true;
		return 0;
	}
	struct timespec d = transient_deadline(deadline);
	if (busy.wb) {
		bp_wait_writeback(p, busy.wb, &d);
	} else if (busy.transient) {
		/* Its lowest bit in flight (LOCKED before WRITEBACK), if any
		 * is still set. */
		uint32_t s = atomic_load_explicit(&busy.transient->state, memory_order_relaxed) &
			     BP_F_INFLIGHT;
		if (s)
			fwait_bit_wait(p->wt, &busy.transient->state,
				       (unsigned)__builtin_ctz(s), &d);
	}
	return 0;
}

/* A claim, in steps (as vmcache's evict numbers its own):
 *   1. the page's home frame, if it is free (never evicted for it: the
 *      clock alone chooses victims), so that the lock-free lookups find
 *      the page without the page map (pagetable.c);
 *   2. every round but the very first: the deadline, so that neither
 *      transient waits nor unpins that others keep winning carry the
 *      call past it (the first sweep always runs: a free frame is taken
 *      even with a deadline already passed);
 *   3. one sweep of the clock (clock_sweep): a free frame or a victim,
 *      starting a write-back of a dirty one;
 *   4. none: BP_CLAIM_NOWAIT gives up, any other mode waits for a frame
 *      (wait_for_frame) and goes back to 2, at most CLOCK_MAX_ROUNDS
 *      rounds; an unpin is progress and starts the count over. */
int bp_claim_frame(struct bp_pool *p, enum bp_claim_mode mode, uint64_t tag,
		   const struct timespec *deadline, struct bp_frame **out)
{
	/* 1. Relaxed, as the sweep's: a snapshot; the CAS in try_take_free
	 * decides, with its own acquire. */
	if (tag != BP_NO_PAGE) {
		struct bp_frame *h = &p->frames[bp_home(p, tag)];
		if (try_take_free(h, atomic_load_explicit(&h->state, memory_order_relaxed))) {
			*out = h;
			return 0;
		}
	}
	for (int round = 0;;) {
		/* 2. */
		if (deadline && round != 0 && util_now_ns() >= util_timespec_ns(deadline))
			return -EBUSY;
		/* 3. */
		struct sweep_busy busy = { NULL, NULL };
		struct bp_frame *f = clock_sweep(p, mode, &busy);
		if (f) {
			*out = f;
			return 0;
		}
		/* 4. After an unpin the count starts over at 1, so that the
		 * next round still checks the deadline. */
		bool unpinned;
		if (mode == BP_CLAIM_NOWAIT ||
		    wait_for_frame(p, mode, deadline, busy, &unpinned) < 0)
			return -EBUSY;
		round = unpinned ? 1 : round + 1;
		if (round == CLOCK_MAX_ROUNDS)
			return -EBUSY;
	}
}

/* bp_evict_page of the page with this tag. */
static int evict_tag(struct bp_pool *pool, uint64_t tag)
{
	struct bp_frame *f;
	int r = bp_pt_lookup_pin(pool, tag, &f);
	if (r < 0)
		return r == -EAGAIN ? -EBUSY : r; /* at the pin limit: pinned */
	/* Acquire pairs with the read completion's release unlock. */
	uint32_t s = atomic_load_explicit(&f->state, memory_order_acquire);
	if (s & BP_F_LOCKED) {
		bp_unpin(pool, f);
		return -EBUSY;
	}
	/* Never wait for a latch: a holder may be the caller itself (an
	 * exclusive one would deadlock us) or keep it for as long as it
	 * likes.  A latched page is busy, dirty or not. */
	if (!bp_latch_idle(f)) {
		bp_unpin(pool, f);
		return -EBUSY;
	}
	/* A write-back in flight is I/O: it ends by itself, wait for it. */
	bp_wait_writeback(pool, f, NULL);
	/* A dirty page is written (and waited for) before it can go; the
	 * shared latch for that is only tried, for the same reason. */
	bool started = false;
	if (atomic_load_explicit(&f->state, memory_order_relaxed) & BP_F_DIRTY) {
		started = bp_start_writeback(pool, f, BP_WB_TRY) > 0;
		bp_wait_writeback(pool, f, NULL);
	}
	/* Acquire pairs with the completion's release clear of WRITEBACK,
	 * ordered after its DIRTY re-set and write_err store. */
	bool still_dirty = atomic_load_explicit(&f->state, memory_order_acquire) & BP_F_DIRTY;
	bp_unpin(pool, f);
	if (still_dirty) {
		/* Not our write (the latch was taken since the idle check, or
		 * another writer's write failed): busy, and its error is left
		 * for bp_flush.  Ours failed: report it (acq_rel: as in
		 * bp_flush). */
		if (!started)
			return -EBUSY;
		int err = atomic_exchange_explicit(&pool->write_err, 0, memory_order_acq_rel);
		return err ? -err : -EBUSY;
	}
	CHAOS_POINT("evict.c:evict_tag:unpinned_before_take");
	if (!bp_try_evict(pool, f, tag, true))
		return -EBUSY;
	bp_free_claimed(pool, f);
	return 0;
}

int bp_evict_page(struct bp_pool *pool, uint64_t pageno)
{
	if (!pool)
		return -EINVAL;
	if (pageno > BP_TAG_PAGE_MASK)
		return -ENOENT; /* no page of file 0 (and no other file's tag) */
	return evict_tag(pool, pageno); /* file 0: the tag is the number */
}

int bp_file_evict_page(struct bp_file *file, uint64_t pageno)
{
	if (!file)
		return -EINVAL;
	if (pageno > BP_TAG_PAGE_MASK)
		return -ENOENT;
	return evict_tag(file->pool, bp_tag(file->id, pageno));
}

int bp_evict_all(struct bp_pool *pool)
{
	if (!pool)
		return -EINVAL;
	int r = bp_flush(pool);
	if (r < 0)
		return r;
	int n = 0;
	for (uint32_t i = 0; i < pool->nframes; i++) {
		struct bp_frame *f = &pool->frames[i];
		uint64_t tag = atomic_load_explicit(&f->tag, memory_order_relaxed);
		if (tag == BP_NO_PAGE)
			continue;
		if (bp_try_evict(pool, f, tag, true)) {
			bp_free_claimed(pool, f);
			n++;
		}
	}
	return n;
}
