/* SPDX-License-Identifier: MIT */
/*
 * writeback.c - writing dirty pages: starting a write-back, bp_flush and the
 * background writer.
 *
 * Layer 5 (write-back): calls only io.c, latch.c, frame.c and account.c.
 *
 * Design note
 * -----------
 * Starting a write-back of frame f:
 *   1. pin f, but only while it is DIRTY (bp_pin_if_dirty, frame.c: one
 *      CAS; the evictor's CAS needs a clean frame with no pins, so the two
 *      exclude each other and no partition lock is needed);
 *   2. take the latch shared (try, or wait for bp_flush);
 *   3. one CAS clears DIRTY and sets WRITEBACK (skip if already in flight);
 *   4. drop the latch and the pin (WRITEBACK keeps the frame from eviction)
 *      and submit the write; the completion (io.c) clears WRITEBACK with
 *      fwait_bit_clear, waking every waiter of (frame, WRITEBACK).
 * Because WRITEBACK is only set under a shared latch and an exclusive latch
 * waits for WRITEBACK to clear, a page never changes while it is written.
 * Waiting for a write-back (frame.c's bp_wait_writeback) is fwait_bit_wait
 * on (frame, WRITEBACK), which loops until the bit is seen clear (it may be
 * set again meanwhile).
 *
 * Write errors: the completion re-marks the page DIRTY and records the
 * first error in pool.write_err; bp_flush (through bp_flush_errors, which
 * keeps it apart from the fsync error for bp_close's report) returns and
 * resets it, as does bp_evict_page when its own write failed.  So a write
 * error is reported once, possibly after the page was written again.
 *
 * Guards: writer.lock protects writer.stop (the condvar paces the loop).
 */
#include <errno.h>
#include <time.h>

#include "bufpool/internal.h"
#include "util/chaos.h"
#include "util/probe.h"

int bp_start_writeback(struct bp_pool *p, struct bp_frame *f, enum bp_wb_mode mode)
{
	if (!bp_pin_if_dirty(f))
		return 0;
	CHAOS_POINT("writeback.c:bp_start_writeback:pinned");
	int r = bp_latch_shared_internal(p, f, mode == BP_WB_TRY);
	if (r < 0) {
		bp_unpin(p, f);
		/* Waiting, only a full shared count refuses (-EAGAIN): the
		 * page stays dirty and bp_flush must say so, not return 0. */
		return mode == BP_WB_WAIT ? r : 0;
	}
	uint32_t s = atomic_load_explicit(&f->state, memory_order_relaxed);
	bool started = false;
	while ((s & BP_F_DIRTY) && !(s & BP_F_WRITEBACK)) {
		/* Acquire pairs with bp_mark_dirty's release: we write what the
		 * last modifier wrote. */
		if (atomic_compare_exchange_weak_explicit(&f->state, &s,
				(s & ~BP_F_DIRTY) | BP_F_WRITEBACK,
				memory_order_acquire, memory_order_relaxed)) {
			started = true;
			break;
		}
	}
	uint64_t tag = atomic_load_explicit(&f->tag, memory_order_relaxed);
	bp_unlatch_shared_internal(p, f);
	CHAOS_POINT("writeback.c:bp_start_writeback:before_unpin");
	/* WRITEBACK now keeps the frame from eviction; the pin can go. */
	bp_unpin(p, f);
	if (!started)
		return 0;
	CHAOS_POINT("writeback.c:bp_start_writeback:before_submit");
	bp_io_submit(p, f, BP_IO_WRITE, tag);
	return 1;
}

static void wait_all_writeback(struct bp_pool *p)
{
	for (uint32_t i = 0; i < p->nframes; i++)
		bp_wait_writeback(p, &p->frames[i], NULL);
}

int bp_write_frames(struct bp_pool *p, bool (*want)(const struct bp_frame *f, void *arg),
		    void *arg)
{
	int unwritten = 0;
	for (uint32_t i = 0; i < p->nframes; i++) {
		struct bp_frame *f = &p->frames[i];
		if (want && !want(f, arg))
			continue;
		/* A write in flight may fail and leave the page dirty again:
		 * wait for it before deciding whether to write. */
		bp_wait_writeback(p, f, NULL);
		int r = bp_start_writeback(p, f, BP_WB_WAIT);
		if (r < 0 && !unwritten)
			unwritten = r;
	}
	wait_all_writeback(p);
	return unwritten;
}

/* bp_write_frames, then the write error since the last report and the
 * fsync of every file: bp_flush's work, for the frames want picks. */
static int write_and_sync(struct bp_pool *pool, bool (*want)(const struct bp_frame *f, void *arg),
			  void *arg, int *fsync_err)
{
	*fsync_err = 0;
	if (pool->flags & BP_OPEN_READONLY)
		return 0;
	int unwritten = bp_write_frames(pool, want, arg);
	/* acq_rel: the completions' write_err stores happen before their
	 * fwait_bit_clear, which our bit waits observed; the exchange also
	 * takes the error so it is reported once. */
	int err = atomic_exchange_explicit(&pool->write_err, 0, memory_order_acq_rel);
	*fsync_err = bp_io_fsync(pool);
	return err ? -err : unwritten;
}

int bp_flush_errors(struct bp_pool *pool, int *fsync_err)
{
	return write_and_sync(pool, NULL, NULL, fsync_err);
}

int bp_flush(struct bp_pool *pool)
{
	if (!pool)
		return -EINVAL;
	int ferr;
	int werr = bp_flush_errors(pool, &ferr);
	return werr ? werr : ferr;
}

uint64_t bp_oldest_dirty_lsn(struct bp_pool *pool)
{
	uint64_t oldest = UINT64_MAX;
	if (!pool)
		return oldest;
	for (uint32_t i = 0; i < pool->nframes; i++) {
		/* Relaxed: a snapshot (bufpool.h). */
		uint64_t rec = atomic_load_explicit(&pool->frames[i].rec_lsn, memory_order_relaxed);
		if (rec && rec < oldest)
			oldest = rec;
	}
	return oldest;
}

/* bp_checkpoint's frames: an oldest unwritten change at or below *arg
 * (clean frames, and frames changed only after it, are not ours).  Relaxed:
 * a dirtier's rec_lsn store is published by its unlatch, which our
 * write-back's shared latch acquires; one missed here is counted by the
 * redo point taken after the writes. */
static bool changed_up_to(const struct bp_frame *f, void *arg)
{
	uint64_t rec = atomic_load_explicit(&((struct bp_frame *)f)->rec_lsn, memory_order_relaxed);
	return rec != 0 && rec <= *(const uint64_t *)arg;
}

int bp_checkpoint(struct bp_pool *pool, uint64_t upto, uint64_t *redo_lsn)
{
	if (!pool || !redo_lsn)
		return -EINVAL;
	int fsync_err;
	UTIL_PROBE1(bufpool, checkpoint_start, upto);
	int err = write_and_sync(pool, changed_up_to, &upto, &fsync_err);
	/* Measured after the writes: a page left dirty by a failed write, or
	 * dirtied meanwhile with an old LSN, keeps the redo point early. */
	uint64_t oldest = bp_oldest_dirty_lsn(pool);
	*redo_lsn = oldest < upto ? oldest : upto;
	err = err ? err : fsync_err;
	UTIL_PROBE3(bufpool, checkpoint_done, upto, *redo_lsn, err);
	return err;
}

/* ---- background writer ---- */

static void *writer_thread(void *arg)
{
	struct bp_pool *p = arg;
	struct bp_writer *w = &p->writer;
	pthread_mutex_lock(&w->lock);
	while (!w->stop) {
		/* The condvar waits on CLOCK_MONOTONIC (bp_writer_start), the
		 * clock of fwait's deadlines. */
		struct timespec ts =
			fwait_deadline_after_ns((uint64_t)p->writer_interval_ms * 1000000u);
		pthread_cond_timedwait(&w->cond, &w->lock, &ts);
		if (w->stop)
			break;
		pthread_mutex_unlock(&w->lock);
		for (uint32_t i = 0; i < p->nframes; i++) {
			struct bp_frame *f = &p->frames[i];
			uint32_t s = atomic_load_explicit(&f->state, memory_order_relaxed);
			if ((s & BP_F_DIRTY) && !bp_pins(s) &&
			    bp_start_writeback(p, f, BP_WB_TRY) > 0)
				bp_count(p, BP_C_BGWRITER_WRITES);
		}
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int bp_writer_start(struct bp_pool *p)
{
	struct bp_writer *w = &p->writer;
	w->stop = false;
	w->started = false;
	if (pthread_mutex_init(&w->lock, NULL))
		return -ENOMEM;
	debug_lock_rank(&w->lock, UTIL_RANK_BP_WRITER, "bufpool writer.lock");
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	int r = pthread_cond_init(&w->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (r) {
		pthread_mutex_destroy(&w->lock);
		return -ENOMEM;
	}
	if (p->flags & BP_OPEN_NO_BGWRITER)
		return 0;
	r = pthread_create(&w->thread, NULL, writer_thread, p);
	if (r) {
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
		return -r;
	}
	w->started = true;
	return 0;
}

void bp_writer_stop(struct bp_pool *p)
{
	struct bp_writer *w = &p->writer;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	if (w->started)
		pthread_join(w->thread, NULL);
	w->started = false;
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
}
