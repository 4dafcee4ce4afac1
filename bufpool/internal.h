/* SPDX-License-Identifier: MIT */
/*
 * internal.h - private structures of the buffer pool, shared by its files.
 *
 * Design note
 * -----------
 * Layers, bottom to top.  A file calls only files of lower layers: never one
 * of its own layer nor one above, so no two files call each other, directly
 * or round a loop.  Each file's head comment says its layer and the files it
 * calls; tests/layers/check_layers.sh reads those lines and checks them
 * against the built objects (nm).  All may call fwait, libc and util/
 * (layer 0: the clock, the PRNG, log2, the emitter).
 *
 *   L  file          holds                                  calls
 *   1  account.c     sharded counters, wait histograms      -
 *   1  log.c         bp_log, the one message formatter      -
 *   2  frame.c       pins, unpin wake, accounted bit waits  account
 *   3  pagemem.c     page memory: jemalloc arena or system  -
 *   3  pagetable.c   partitioned hash tag -> frame          frame
 *   3  fault.c       I/O fault injector and trace           account
 *   3  uring.c       the io_uring ring: submission queue,   -
 *                    depth, delays, reaper thread
 *   3  latch.c       phase-fair content latches on fwait    frame account
 *   4  io.c          the engines' front: thread pool, or    uring fault
 *                    uring.c; completions (one copy)        account
 *   4  optread.c     optimistic reads (bp_read_begin/end)   pagetable latch
 *                                                           frame account
 *   5  writeback.c   start write-back, bp_flush, bgwriter   io latch frame
 *                                                           account
 *   6  evict.c       clock sweep (claim, try_evict),        writeback latch
 *                    bp_evict_page, bp_evict_all            pagetable frame
 *                                                           account
 *   7  access.c      bp_get, bp_new_page, bp_release,       evict io pagetable
 *                    bp_mark_dirty, readahead               frame account
 *   7  file.c        files: open, close, discard, truncate  evict writeback io
 *                    (drop their pages), accessors          pagetable fault
 *                                                           frame log
 *   8  pool.c        bp_open/close/discard, accessors       file writeback io
 *                                                           fault pagemem frame
 *                                                           account log
 *   9  stats.c       bp_stats_get/reset, frame walks,       pool latch account
 *                                                           writeback
 *                    bp_frames_hottest, bp_flags_format
 *  10  statsprint.c  bp_stats_print (through util/emitter)  -
 *  10  statspub.c    bp_stats_publish: the stats file's     stats
 *                    publisher thread (statsfile.h)
 *
 * Locks and what they guard
 *   bp_partition.lock  the hash chains (heads[] of its buckets, frame.hash_next
 *                      of frames on those chains), the page map entries of
 *                      their pages (bp_file.pmap) and every change of a mapped
 *                      frame's tag (frame.tag); eviction of a mapped frame
 *                      happens under the write lock of its page's partition.
 *                      A hit pins without the lock, speculatively, and keeps
 *                      the pin only if the frame was not being taken and
 *                      still holds its page (pagetable.c); a miss pins
 *                      under the read lock.  Either way a pin and an
 *                      eviction never cross.
 *   frame.state        atomic; bits in bufpool.h.  A frame whose state (minus
 *                      fwait's waiters bit) is 0 is free and unmapped.
 *   frame.latch        atomic; see latch.c.
 *   io_engine.lock     the request queue, the stop flag, the free bounce
 *                      buffers of the io_uring engine.
 *   bp_uring.lock      the ring's submission queue, in-flight count and
 *                      pending list (uring.c).
 *   fault_state.lock   the fault rules.
 *   writer.lock        the background writer's stop flag (with its condvar).
 *   files_lock         which file ids are in use (pool.files[] slots change
 *                      under it); held by the flush's walk that fsyncs every
 *                      file, so a file is never closed under that fsync.
 *   bp_file.fsync_lock one file's fsyncs (one at a time) and the writes of
 *                      its sticky fsync_failed.
 *
 * Lock ranks (as jemalloc's witness ranks: a lock may be taken only while
 * every lock held ranks lower; locks of one rank never nest):
 *   rank 0  the sleeping locks, held across calls and waited for through
 *           fwait: a content latch (frame.latch), a claimed frame or a read
 *           in flight (LOCKED), a write in flight (WRITEBACK).  A thread
 *           may hold several while it takes the locks below, and waits for
 *           one only while it holds no rank-1 lock.  Among themselves the
 *           protocol orders them: WRITEBACK is cleared by an I/O thread and
 *           LOCKED by an I/O thread or by its claimer, and neither an I/O
 *           thread nor a claimer holding LOCKED waits for a latch (the one
 *           wait made with a frame LOCKED is bp_new_page's for another
 *           frame's creator, who unlocks it without waiting), so a wait for
 *           either bit ends; a latch is waited for only by bp_latch and
 *           bp_flush's write-back (bufpool.h: not while holding a latch),
 *           never by the sweep or bp_evict_page (they only try it).
 *   rank 1  files_lock: taken holding no mutex; under it only
 *           bp_file.fsync_lock (the fsync walk) and plain stores.
 *   rank 2  bp_file.fsync_lock: under it the fsync(2) call and the fault
 *           check (fault_state.lock); nothing waits through fwait.
 *   rank 3  the pool's other mutexes, each a leaf: bp_partition.lock
 *           (rwlock, one partition at a time), io_engine.lock,
 *           bp_uring.lock, fault_state.lock, writer.lock.  Taken while holding only
 *           locks of lower ranks; while one is held no other lock is taken,
 *           no fwait call is made, no thread is joined, no callback runs.
 *           Under them: atomics, the data they guard, bp_count (fault.c:
 *           account.c takes no lock) and the condvar waits on their own
 *           mutex (io_engine, writer).  The engine's flush_log callback
 *           runs in an I/O thread holding none of them (only WRITEBACK).
 *   rank 3  fwait's locks, taken only inside fwait calls, so never under a
 *           pool mutex: one bucket lock at a time, and a waiter's mtx only
 *           once the bucket lock is dropped (fwait/internal.h).  Under a
 *           bucket lock fwait runs the pool's ready callbacks (latch.c's
 *           ready_shared / ready_exclusive, evict.c's unpin_seen): atomics
 *           only, no lock and no fwait call.
 * The debug-checks build checks these ranks (util/debug.h's enum
 * util_lock_rank: one entry per mutex class above, registered where the
 * lock is initialised) and the held-lock asserts; docs/reliability.md.
 */
#ifndef BUFPOOL_INTERNAL_H
#define BUFPOOL_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bufpool/bufpool.h"
#include "util/debug.h" /* debug-checks build: asserts, the lock witness */

#include "util/fence.h" /* util_fence_release/acquire, UTIL_TSAN */

#define BP_CACHELINE 64
#define BP_NONE_IDX UINT32_MAX
#define BP_MAX_IO_THREADS 64u

enum bp_io_op { BP_IO_READ = 0, BP_IO_WRITE = 1 };

/* Files in a pool.  A frame's tag (bp_frame.tag, the page table's key,
 * the I/O request's tag) is (file id << 48) | page number, so the page
 * table, eviction and the frames know one 64-bit key and never the file;
 * only access.c (which file's page count), io.c (which descriptor, which
 * offset) and the reports split it.  File 0 is the one bp_open opens;
 * BP_NO_PAGE (all ones) is no tag, as id 0xffff is never given out. */
#define BP_TAG_FILE_SHIFT 48
#define BP_TAG_PAGE_MASK ((UINT64_C(1) << BP_TAG_FILE_SHIFT) - 1)
#define BP_MAX_FILES 4096u
#define BP_RA_STREAMS 8u /* sequential streams readahead follows per file */

/* A caller's extensible struct (bp_config, bp_stats: their size field,
 * bufpool.h) read into the library's own: *dst (dsize bytes, the library's
 * sizeof) gets the first usize bytes of *src and zeros after them.  usize
 * below min (the first published layout's size) is -EINVAL; usize beyond
 * dsize is -E2BIG if a byte past dsize is nonzero (a field this library
 * does not know was set; Linux's copy_struct_from_user rule), else fine. */
static inline int bp_struct_in(void *dst, size_t dsize, const void *src, size_t usize,
			       size_t min)
{
	if (usize < min)
		return -EINVAL;
	const unsigned char *tail = (const unsigned char *)src;
	for (size_t i = dsize; i < usize; i++)
		if (tail[i])
			return -E2BIG;
	memset(dst, 0, dsize);
	memcpy(dst, src, usize < dsize ? usize : dsize);
	return 0;
}

static inline uint64_t bp_tag(uint32_t file, uint64_t pageno)
{
	return ((uint64_t)file << BP_TAG_FILE_SHIFT) | pageno;
}

static inline uint32_t bp_tag_file(uint64_t tag)
{
	return (uint32_t)(tag >> BP_TAG_FILE_SHIFT);
}

static inline uint64_t bp_tag_page(uint64_t tag)
{
	return tag & BP_TAG_PAGE_MASK;
}

/* One open file.  Set up by bp_open (file 0) or bp_file_open and read-only
 * after that but for the atomics; freed by bp_file_close/discard or with
 * the pool, once none of its pages is in a frame and no I/O of it runs. */
struct bp_file {
	struct bp_pool *pool;
	uint32_t id;
	int fd;
	char *path;                   /* as opened: for the I/O trace (fault.c) */
	unsigned flags;               /* BP_OPEN_READONLY, as opened */
	uint64_t max_pageno;          /* largest page number: fits off_t and the tag */
	_Atomic uint64_t npages;      /* pages in the file, including created ones */
	/* Readahead's stream detector (access.c): per stream, the last page
	 * of its last sequential miss or readahead; a miss on the page after
	 * one continues that stream, any other miss takes the slot at
	 * ra_cursor (round robin).  Relaxed: a heuristic, a lost update
	 * costs one readahead at most. */
	_Atomic uint64_t ra_last[BP_RA_STREAMS];
	_Atomic unsigned ra_cursor;
	/* The errno of the file's first failed fsync, 0 before one: sticky for
	 * the file's life (bp_durability_err).  Written and read by
	 * bp_io_fsync under fsync_lock, which also serialises the file's
	 * fsyncs (the kernel reports a lost write-back to one fsync of a
	 * file, so two at once could see 0 and the error; io.c says why that
	 * matters).  Atomic only for the readers without the lock (relaxed: a
	 * report, it orders nothing). */
	_Atomic int fsync_failed;
	pthread_mutex_t fsync_lock;
	/* The page map (pagetable.c): a hint from page number to frame, for
	 * the lock-free lookups; BP_PMAP_DIR chunk pointers, each NULL until
	 * a page of its range is inserted. */
	_Atomic(_Atomic uint32_t *) *pmap;
	/* How a miss's read is done inline (enum bp_read_inline, io.c): set
	 * at open, lowered to BP_RI_NONE once the kernel refuses RWF_NOWAIT
	 * for the file.  Relaxed: a hint; a thread that still tries after the
	 * refusal gets EOPNOTSUPP again and sends the read to the engine. */
	_Atomic unsigned read_inline;
};

/* bp_file.read_inline. */
enum bp_read_inline {
	BP_RI_NONE = 0,   /* every read goes to the engine */
	BP_RI_NOWAIT,     /* preadv2(RWF_NOWAIT): only what the page cache holds */
	BP_RI_PLAIN       /* pread, waiting for the device if need be (AUTO;
			   * CACHED on tmpfs, ramfs) */
};

struct bp_frame;

/* One I/O request; embedded in its frame (a frame has at most one read or
 * write in flight: reads only while LOCKED, writes only while WRITEBACK).
 * The fields past frame are the io_uring engine's (io.c, uring.c): the
 * fault decision made at submission (decided), the delay before the
 * transfer, and the buffer it uses (the frame's page, or a sealed bounce
 * copy).  Written by the submitter before the request is queued, read by
 * whoever runs it: the queue's lock orders them. */
struct bp_io_req {
	struct bp_io_req *next; /* queue link, guarded by io_engine.lock or the ring's lock */
	enum bp_io_op op;
	uint64_t tag;
	struct bp_frame *frame;
	unsigned char *buf;
	uint32_t delay_us;
	bool decided;
	uint8_t fa;             /* enum bp_fault_action, when decided */
	int ferr;
	/* A run of reads of adjacent pages done as one I/O (readv): the
	 * head holds run_len, each links the next page's request. */
	struct bp_io_req *run_next;
	uint32_t run_len;
};
#define BP_RUN_MAX 32u /* pages in one read I/O at most */

struct bp_frame {
	_Atomic uint32_t state;   /* BP_F_* | pins << BP_PIN_SHIFT | fwait bit 31 */
	_Atomic int io_err;       /* positive errno of the last failed read */
	_Atomic uint64_t latch;   /* latch.c */
	_Atomic uint64_t tag;     /* bp_tag; BP_NO_PAGE if free; changed under partition lock */
	/* The optimistic readers' version (optread.c): raised by every
	 * exclusive unlatch and by every take of the mapped frame for reuse
	 * (latch.c says how and why), never lowered.  Written by the one
	 * thread that holds the frame's exclusive latch or has just taken it
	 * (those exclude each other: both need the pin count or the latch
	 * the other holds), read by anyone.  In the first cache line with the
	 * state, latch and tag, which an optimistic reader reads too. */
	_Atomic uint64_t version;
	/* The write-ahead log (bp_mark_dirty_lsn): the page LSN, and the LSN
	 * of its oldest change not yet written (0: none).  Written by the
	 * dirtier under the exclusive latch, reset by a successful write
	 * (under WRITEBACK, when nobody may dirty the page), when the page is
	 * dropped unwritten (evict.c, try_take) and when the frame takes a
	 * new page; relaxed: the latch and WRITEBACK order them (a
	 * write-back starts under the shared latch, which the dirtier's
	 * unlatch released). */
	_Atomic uint64_t lsn;
	_Atomic uint64_t rec_lsn;
	/* Chain link, written under the partition's write lock; atomic
	 * (relaxed) because the hit path walks chains without the lock
	 * (pagetable.c). */
	_Atomic uint32_t hash_next;
	uint32_t index;
	unsigned char *data;
	_Atomic uint64_t wait_ns; /* total ns waited on this frame (relaxed) */
	struct bp_io_req io;
#if FWAIT_DEBUG_CHECKS
	/* Debug-checks build only: the exclusive latch's holder
	 * (fwait_debug_self; 0: none), which the latch word cannot tell, for
	 * the API-misuse checks (bp_debug_x_mine).  Set by the thread that
	 * gained X, cleared by the unlatch before its release CAS, so the
	 * next holder's store is the later one; relaxed: each thread only
	 * compares it with itself.  In the padding: the frame's size is
	 * unchanged. */
	_Atomic uintptr_t x_owner;
#endif
} __attribute__((aligned(BP_CACHELINE)));
/* Sizes docs/architecture.md quotes ("Memory layout"), pinned so the page
 * cannot drift from the code (tests/docs checks the page quotes these
 * numbers).  LP64 only: pointers are 8 bytes in both.  The version must sit
 * in the first cache line with the state, latch and tag: an optimistic
 * reader reads all four (optread.c). */
#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(struct bp_frame) == 192, "docs/architecture.md: struct bp_frame 192 bytes");
_Static_assert(sizeof(struct bp_io_req) == 72, "docs/architecture.md: struct bp_io_req 72 bytes");
#endif
_Static_assert(offsetof(struct bp_frame, version) + sizeof(uint64_t) <= BP_CACHELINE,
	       "docs/architecture.md: state, latch, tag and version in the first cache line");

/* A wait-time histogram updated with relaxed atomics. */
struct bp_hist_atomic {
	_Atomic uint64_t count, total_ns, max_ns;
	_Atomic uint64_t b[FWAIT_HIST_BUCKETS];
};

enum bp_hist_kind {
	BP_H_IO = 0,
	BP_H_WRITEBACK,
	BP_H_LATCH_S,
	BP_H_LATCH_X,
	BP_H_FRAME,
	BP_H_INLINE_READ,  /* not a wait: an inline read's duration (io.c) */
	BP_H_COUNT
};

/* The pool's event counters, one row each (bp_count counts BP_C_NAME),
 * written in the order bp_stats_print lists its "counters" dict, which
 * tools and tests parse: the order of the rows is the print order, the
 * enum values are internal (the shards are indexed by them) and follow.
 * Three kinds of row:
 *   C(NAME, field)  counter BP_C_NAME, copied 1:1 into the uint64_t
 *                   `field` of struct bp_stats (stats.c asserts the type),
 *                   printed under the field's name;
 *   D(field, type)  a field of the "counters" dict that no one counter
 *                   gives: stats.c fills it by hand, printed with
 *                   emitter_kv_<type>;
 *   N(NAME)         counter BP_C_NAME with no field of its own: stats.c
 *                   derives fields from it by hand; not printed.
 * Adding a counter: its C row (in the place it should print), the field
 * in struct bp_stats (appended: the struct is ABI), the bp_count that
 * counts it.  tests/bufpool/test_counters.c checks the rows against the
 * struct and the print. */
#define BP_COUNTERS(C, D, N)						\
	C(HITS, hits)							\
	C(MISSES, misses)						\
	C(READS, reads)							\
	C(WRITES, writes)						\
	C(READAHEADS, readaheads)					\
	C(READ_IOS, read_ios)						\
	D(inline_reads, u64)	/* the inline_read histogram's count */	\
	C(INLINE_BLOCKED, inline_blocked) /* would block (io.c) */	\
	C(CREATES, creates)						\
	C(EVICTIONS, evictions)						\
	C(DIRTY_EVICTIONS, dirty_evictions)				\
	C(BGWRITER_WRITES, bgwriter_writes)				\
	C(FSYNCS, fsyncs)						\
	C(READ_ERRORS, read_errors)					\
	C(WRITE_ERRORS, write_errors)					\
	C(FSYNC_ERRORS, fsync_errors)					\
	C(CHECKSUM_ERRORS, checksum_errors)				\
	C(LOG_FLUSHES, log_flushes)					\
	D(durability_err, i64)	/* the sticky fsync error, no count */	\
	C(FAULTS, faults_injected)					\
	C(BUSY, busy)							\
	/* optimistic begins tried (optread.c says why not "done") */	\
	N(OPT_BEGINS)							\
	N(OPT_REFUSED)		/* ... of which refused */		\
	D(optimistic_reads, u64) /* OPT_BEGINS - OPT_REFUSED */		\
	C(OPT_RESTARTS, optimistic_restarts)

#define BP_COUNTER_ENUM_C_(name, field) BP_C_##name,
#define BP_COUNTER_ENUM_D_(field, type)
#define BP_COUNTER_ENUM_N_(name) BP_C_##name,
enum bp_counter {
	BP_COUNTERS(BP_COUNTER_ENUM_C_, BP_COUNTER_ENUM_D_, BP_COUNTER_ENUM_N_)
	BP_C_COUNT
};
#undef BP_COUNTER_ENUM_C_
#undef BP_COUNTER_ENUM_D_
#undef BP_COUNTER_ENUM_N_

/* One shard of the counters; each partition holds one, so counters are
 * spread over as many cache lines as there are partitions (the shard of an
 * event is its CPU's, not its page's: account.c). */
struct bp_counters {
	_Atomic uint64_t c[BP_C_COUNT];
	struct bp_hist_atomic h[BP_H_COUNT];
};

/* One CPU's counters (account.c): written only by that CPU, in a
 * restartable sequence. */
struct bp_cpu_counters {
	_Atomic uint64_t c[BP_C_COUNT];
} __attribute__((aligned(BP_CACHELINE)));

struct bp_partition {
	pthread_rwlock_t lock;
	/* own cache lines: counting does not bounce the lock's line */
	struct bp_counters ctr __attribute__((aligned(BP_CACHELINE)));
} __attribute__((aligned(BP_CACHELINE)));

/* One I/O thread: its pool, and (BP_OPEN_CHECKSUMS) the page-sized buffer
 * it writes from, the page with its checksum trailer (io.c), owned by the
 * thread while it runs. */
struct bp_io_thread {
	struct bp_pool *p;
	unsigned char *bounce;
	pthread_t tid;
};

struct bp_uring;

struct bp_io_engine {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct bp_io_req *head, *tail; /* FIFO of submitted requests */
	bool stop;
	unsigned nthreads;
	struct bp_io_thread threads[BP_MAX_IO_THREADS];
	/* The io_uring engine (uring.c), NULL with the thread pool; set by
	 * bp_io_start before any I/O, read-only after.  Its checksummed
	 * writes' bounce buffers: a stack of free ones under lock. */
	struct bp_uring *ring;
	unsigned depth;                /* the ring's depth; 0 without one */
	unsigned char *bounce_mem;
	unsigned char **bounce_free;
	unsigned nbounce_free;
};

struct bp_fault_rule {
	bool active;
	struct bp_fault f;
	uint32_t fired;
	uint64_t rng;
};

struct bp_fault_state {
	pthread_mutex_t lock;
	_Atomic unsigned active_mask; /* bit per op: skip the lock when 0 */
	struct bp_fault_rule rules[BP_FAULT_OP_COUNT];
};

struct bp_writer {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	bool started;
	pthread_t thread;
};

struct bp_pool {
	unsigned flags;
	uint32_t page_size;
	unsigned page_shift;
	uint32_t nframes;
	unsigned readahead;
	uint32_t io_latency_us;
	unsigned read_path;       /* enum bp_read_path, the environment's applied */
	unsigned writer_interval_ms;
	void (*log)(void *log_arg, int level, const char *msg); /* bp_config.log */
	void *log_arg;

	struct bp_frame *frames;
	unsigned char *pages;
	unsigned arena;
	size_t pages_bytes, frames_bytes;

	struct fwait_table *wt;

	unsigned npart;           /* power of two */
	struct bp_partition *parts;
	/* Per-CPU counters counted in restartable sequences (account.c), or
	 * NULL where there are none; ncpu of them; and the sums a reset left
	 * in them (written by bp_counters_reset, relaxed). */
	struct bp_cpu_counters *cpu_ctr;
	unsigned ncpu;
	_Atomic uint64_t cpu_base[BP_C_COUNT];
	_Atomic uint64_t rseq_aborts; /* sequences the kernel aborted (tests look) */
	_Atomic uint32_t *heads;  /* hash bucket heads: frame index or BP_NONE_IDX;
				   * atomic as hash_next */
	unsigned nbuckets;        /* power of two; bucket b belongs to partition b & (npart-1) */
	unsigned bucket_shift;    /* 64 - log2(nbuckets) */

	/* The open files by id (files[0]: bp_open's).  A slot is published
	 * with a release store once the file is set up and cleared once it is
	 * gone; readers (the I/O threads, the tag's users) load it with
	 * acquire.  files_lock serialises opening and closing (which id is
	 * free, the flush of every file). */
	_Atomic(struct bp_file *) files[BP_MAX_FILES];
	pthread_mutex_t files_lock;
	_Atomic uint64_t clock_hand;
	_Atomic int write_err;        /* first write error since the last bp_flush */
	/* The write-ahead-log rule (io.c): the callback, and the highest LSN
	 * the log is known durable up to (raised with a CAS loop by the
	 * callback's answers and bp_log_durable; relaxed: only compared). */
	int (*flush_log)(void *arg, uint64_t lsn, uint64_t *durable);
	void *flush_log_arg;
	bp_io_trace_fn io_trace;      /* bp_config.io_trace (fault.c reports) */
	void *io_trace_arg;
	_Atomic uint64_t durable_lsn;
	_Atomic uint64_t unpin_seq;   /* bumped on unpin-to-zero while someone waits */
	_Atomic uint32_t frame_waiters;

	struct bp_io_engine io;
	struct bp_fault_state fault;
	struct bp_writer writer;

	/* The stats file (statspub.c, layer 10).  statspub: the publisher,
	 * installed and taken with atomic RMWs, so two bp_stats_publish or
	 * unpublish calls cannot both own it (acq_rel: the taker sees the
	 * installer's publisher fully built).  statspub_stop: set by
	 * statspub.c before it installs one, called by pool_destroy (bp_close
	 * and bp_discard, which race no other call) to end the thread: pool.c
	 * (layer 8) never calls statspub.c itself.  stats_reset_ns
	 * (CLOCK_MONOTONIC of the last bp_stats_reset, 0: none) and pub_ops
	 * (bp_stats_publish_ops) are reports read by the publisher: relaxed. */
	_Atomic(struct bp_statspub *) statspub;
	void (*statspub_stop)(struct bp_pool *p);
	_Atomic uint64_t stats_reset_ns;
	_Atomic uint64_t pub_ops;
};

/* The file of a valid tag (one a frame or request holds): open while any of
 * its pages is in a frame.  Acquire pairs with the release that published
 * the slot (pool.c), so the file's fields are set up. */
static inline struct bp_file *bp_file_of(struct bp_pool *p, uint64_t tag)
{
	return atomic_load_explicit(&p->files[bp_tag_file(tag)], memory_order_acquire);
}

/* The home frame of a tag (pagetable.c, "Home frames"): page n of file 0
 * is frame n while n < nframes, each other file starts at its own offset,
 * and numbers past the pool wrap once, then hash.  Multiplies and adds
 * only: it is computed on every lock-free lookup. */
static inline uint32_t bp_home(const struct bp_pool *p, uint64_t tag)
{
	uint64_t n = p->nframes;
	/* file 0 at 0; file k at k times the golden ratio of n, spread */
	uint64_t off = ((uint64_t)(bp_tag_file(tag) * 0x9E3779B1u) * n) >> 32;
	uint64_t x = bp_tag_page(tag) + off;
	if (x < n)
		return (uint32_t)x;
	if (x < 2 * n)
		return (uint32_t)(x - n);
	return (uint32_t)(((x * UINT64_C(0x9E3779B97F4A7C15) >> 32) * n) >> 32);
}

/* The pool's file 0 (bp_open's), or NULL for a NULL pool. */
static inline struct bp_file *bp_file0(struct bp_pool *p)
{
	return p ? atomic_load_explicit(&p->files[0], memory_order_acquire) : NULL;
}

/* ---- the debug-checks build (util/debug.h) ---- */

#if FWAIT_DEBUG_CHECKS
/* An API misuse: to the pool's log callback (the library's message path),
 * then util/debug.h's report and abort().  Calls the callback through the
 * pointer, not bp_log, so a file of any layer may check. */
static inline void bp_debug_fail(struct bp_pool *p, const char *file, int line, const char *what)
{
	if (p && p->log)
		p->log(p->log_arg, BP_LOG_ERROR, what);
	fwait_debug_fail(file, line, what);
}
#define bp_debug_check(p, e, what) \
	((e) ? (void)0 : bp_debug_fail((p), __FILE__, __LINE__, (what)))
/* Does the calling thread hold f's exclusive latch? */
#define bp_debug_x_mine(f) \
	(atomic_load_explicit(&(f)->x_owner, memory_order_relaxed) == fwait_debug_self())
#define bp_debug_x_taken(f) \
	atomic_store_explicit(&(f)->x_owner, fwait_debug_self(), memory_order_relaxed)
#define bp_debug_x_dropped(f) atomic_store_explicit(&(f)->x_owner, 0, memory_order_relaxed)
#else
#define bp_debug_check(p, e, what) ((void)0)
#define bp_debug_x_taken(f) ((void)0)
#define bp_debug_x_dropped(f) ((void)0)
#endif

/* ---- helpers ---- */

/* Largest value of the pin field.  Past BP_PIN_MAX go only the transient
 * pin of a bp_get being refused (pagetable.c) and the pool's write-back
 * pins: at most one per thread at a time, fewer than the headroom. */
#define BP_PIN_FIELD_MAX (BP_PIN_MASK >> BP_PIN_SHIFT)

/* The state bits (bufpool.h's table) fit in the low byte, below the pin
 * count and fwait's waiters bit (tests/bufpool/test_state_bits.c checks
 * the same at run time, with the names). */
_Static_assert((BP_F_INFLIGHT | BP_F_PAGE_STATE) <= BP_FLAGS_MASK &&
	       BP_FLAGS_MASK < BP_PIN_ONE, "state bits overlap the pin count");
_Static_assert(((BP_F_INFLIGHT | BP_F_PAGE_STATE) & FWAIT_WAITERS_MASK) == 0,
	       "state bits overlap fwait's waiters bit");

/* What a claim adds to a free or victim frame's state word in its one CAS:
 * LOCKED and the claimer's pin (evict.c). */
#define BP_CLAIM_BITS ((uint32_t)BP_F_LOCKED | BP_PIN_ONE)
/* A mapped frame with one of these set is not evicted: an I/O in flight,
 * or a change not yet written (the sweep and bp_try_evict;
 * bp_drop_frames, which drops pages unwritten, minds only BP_F_INFLIGHT). */
#define BP_F_UNEVICTABLE ((uint32_t)(BP_F_INFLIGHT | BP_F_DIRTY))

static inline uint32_t bp_pins(uint32_t s)
{
	return (s & BP_PIN_MASK) >> BP_PIN_SHIFT;
}

/* Frame f's page, from f's place in the frames array: the same address
 * as f->data (pool.c lays the pages out in frame order), computed without
 * loading f, so a reader that has not yet loaded f's cache line (optread.c)
 * can start on the page at the same time. */
static inline unsigned char *bp_frame_page(const struct bp_pool *p, const struct bp_frame *f)
{
	return p->pages + (size_t)(f - p->frames) * p->page_size;
}

static inline uint64_t bp_hash_bucket(const struct bp_pool *p, uint64_t tag)
{
	return (tag * UINT64_C(0x9E3779B97F4A7C15)) >> p->bucket_shift;
}

static inline struct bp_partition *bp_part_of(struct bp_pool *p, uint64_t tag)
{
	return &p->parts[bp_hash_bucket(p, tag) & (p->npart - 1)];
}

/* ---- the files' entry points, bottom layer first ---- */

/* log.c (layer 1): a message to the embedder's callback (or nowhere). */
__attribute__((format(printf, 4, 5)))
void bp_log(void (*log)(void *, int, const char *), void *arg, int level, const char *fmt, ...);

/* account.c (layer 1) */
/* The per-CPU counters of a pool being opened (where restartable sequences
 * work: account.c): 0, -ENOMEM; and their teardown (NULL-safe). */
int bp_account_init(struct bp_pool *p);
void bp_account_fini(struct bp_pool *p);
/* Count one event c, in the calling CPU's counters (account.c). */
void bp_count(struct bp_pool *p, enum bp_counter c);
/* Every counter summed over CPUs and shards, less what the last reset
 * left; and the reset (account.c says how a reset and a count race). */
void bp_counters_sum(struct bp_pool *p, uint64_t out[BP_C_COUNT]);
void bp_counters_reset(struct bp_pool *p);
/* Record a wait of ns of the given kind (in the calling CPU's shard) and,
 * if f is not NULL, add it to f's per-frame total. */
void bp_account_wait(struct bp_pool *p, struct bp_frame *f, enum bp_hist_kind kind, uint64_t ns);

/* frame.c (layer 2) */
bool bp_frame_valid(const struct bp_pool *p, const struct bp_frame *f);
/* A pin or shared latch found where no user may hold one (a file being
 * dropped, closed or truncated) may be the pool's own transient one: the
 * background writer's (pin, try the shared latch, set WRITEBACK, unpin) or
 * a lock-free hit's speculative pin, a few instructions long unless their
 * thread is preempted.  Call with *since 0 the first time: yields and
 * returns true while less than limit_ns has passed since that first call
 * (look again), false once it has (it is the caller's after all). */
bool bp_transient_patience(uint64_t *since, uint64_t limit_ns);
/* Drop one pin (the caller holds it); the last one wakes frame waiters. */
void bp_unpin(struct bp_pool *p, struct bp_frame *f);
/* bp_unpin for a caller that may not hold a pin (bp_release): 0, or
 * -EINVAL (and nothing changed) if f has no pin. */
int bp_unpin_checked(struct bp_pool *p, struct bp_frame *f);
/* Drop the pin of a claim (LOCKED | our pin), clear the flags and LOCKED:
 * the frame is free once any other (speculative) pin is gone; the last
 * pin wakes frame waiters, as bp_unpin's does. */
void bp_unpin_claim(struct bp_pool *p, struct bp_frame *f);
/* Pin f for its write-back, only while it is DIRTY and neither WRITEBACK
 * nor LOCKED (one CAS): true if pinned. */
bool bp_pin_if_dirty(struct bp_frame *f);
/* Wait (until deadline, NULL: none) for f's WRITEBACK to clear, if set;
 * the wait is accounted as BP_H_WRITEBACK. */
void bp_wait_writeback(struct bp_pool *p, struct bp_frame *f, const struct timespec *deadline);
/* Wait for f's LOCKED (a read in flight, a claim) to clear; the wait is
 * accounted as BP_H_IO. */
void bp_wait_locked(struct bp_pool *p, struct bp_frame *f);

/* pagetable.c (layer 3) */
/* Pin the frame of tag: 0 (*out set), -ENOENT (not mapped), -EAGAIN (mapped,
 * but already pinned BP_PIN_MAX times). */
int bp_pt_lookup_pin(struct bp_pool *p, uint64_t tag, struct bp_frame **out);
bool bp_pt_contains(struct bp_pool *p, uint64_t tag);
/* The frame that held tag (a page of file) when it was looked up, without
 * lock or pin, or NULL: a candidate for an optimistic reader, which checks
 * it.  Its page is prefetched. */
struct bp_frame *bp_pt_find(struct bp_file *file, uint64_t tag);
/* The page map's shape (pagetable.c): chunks of 4096 entries (16 KiB), a
 * directory of 4096 chunks, so pages 0 .. BP_PMAP_PAGES - 1 have a hint. */
#define BP_PMAP_CHUNK_SHIFT 12
#define BP_PMAP_CHUNK (1u << BP_PMAP_CHUNK_SHIFT)
#define BP_PMAP_DIR 4096u
#define BP_PMAP_PAGES ((uint64_t)BP_PMAP_DIR << BP_PMAP_CHUNK_SHIFT)
/* The page map of a file being opened: 0, -ENOMEM; and its teardown, once
 * no frame holds a page of the file. */
int bp_pt_file_init(struct bp_file *file);
void bp_pt_file_fini(struct bp_file *file);
/* The page map's entry of page (a page number, not a tag): frame index + 1,
 * or 0 for none; NULL when page is past the map or its chunk is not there
 * and not to be made (create false) or not to be had (calloc failed: the
 * page goes without a hint).  Its writes belong to this file; tests look. */
_Atomic uint32_t *bp_pt_map_entry(struct bp_file *file, uint64_t page, bool create);
/* Insert claimed frame f as tag: 0.  If tag is already mapped, pin
 * that frame instead and return 1 with it in *found (f untouched), or
 * -EAGAIN if it is at the pin limit. */
int bp_pt_insert_or_pin(struct bp_pool *p, struct bp_frame *f, uint64_t tag,
			struct bp_frame **found);
/* Called with the partition write lock held. */
void bp_pt_remove_locked(struct bp_pool *p, struct bp_frame *f, uint64_t tag);

/* fault.c (layer 3) */
enum bp_fault_action { BP_FA_NONE = 0, BP_FA_FAIL, BP_FA_SHORT, BP_FA_NO_WAL };
int bp_fault_init(struct bp_pool *p);
void bp_fault_destroy(struct bp_pool *p);
/* Decide the fault for one I/O; *err gets the errno for FAIL, *delay_us the
 * added latency (SLOW). */
enum bp_fault_action bp_fault_check(struct bp_pool *p, enum bp_fault_op op,
				    uint64_t pageno, int *err, uint64_t *delay_us);
/* Report ev to bp_config.io_trace: its answer (0, or at SYNC_BEGIN an
 * errno to inject), 0 without a hook. */
int bp_trace(struct bp_pool *p, const struct bp_io_trace_event *ev);
/* Report a sync of path about to start: 0 (sync), or the negative errno
 * the hook injects (do not sync: fail with it). */
int bp_trace_sync_begin(struct bp_pool *p, const char *path);
void bp_trace_sync_end(struct bp_pool *p, const char *path, int result);

/* latch.c (layer 3) */
void bp_latch_peek(const struct bp_frame *f, uint32_t *shared, bool *excl, uint32_t *waiters);
/* Predicate: no shared holder, no exclusive holder (or hand-over), no
 * queued waiter; EPOCH aside (relaxed load: see latch.c). */
bool bp_latch_idle(const struct bp_frame *f);
/* Predicate: the exclusive latch is held or being handed over (an acquire
 * load: optread.c says what it pairs with). */
bool bp_latch_excl_held(const struct bp_frame *f);
/* Raise f's version for optimistic readers as the frame is taken for reuse
 * (evict.c), before its tag or contents change. */
void bp_latch_version_bump(struct bp_frame *f);
/* Latch helpers for writers (shared, try or wait): 0, -EBUSY (try_only and
 * it would wait) or -EAGAIN (a latch count at BP_LATCH_COUNT_MAX); callers
 * treat any error as "latch busy". */
int bp_latch_shared_internal(struct bp_pool *p, struct bp_frame *f, bool try_only);
void bp_unlatch_shared_internal(struct bp_pool *p, struct bp_frame *f);

/* uring.c (layer 3): the io_uring ring.  done(arg, r, res) is called by
 * the ring's reaper thread, holding no lock, for every request submitted,
 * with the transfer's result (bytes, or a negative errno). */
typedef void bp_uring_done_fn(void *arg, struct bp_io_req *r, int res);
/* 0, or a negative errno: -EOPNOTSUPP in a build without liburing, else
 * io_uring_queue_init's (-ENOSYS, -EPERM where it is blocked, -ENOMEM). */
int bp_uring_create(struct bp_pool *p, unsigned depth, bp_uring_done_fn *done, void *arg,
		    struct bp_uring **out);
/* Queue n requests (r->buf, r->delay_us set) and submit them in one call. */
void bp_uring_submit(struct bp_uring *u, struct bp_io_req *const *rs, unsigned n);
/* Finish every request submitted, stop the reaper and free the ring. */
void bp_uring_destroy(struct bp_uring *u);

/* io.c (layer 4) */
/* Set up the engine: engine BP_IO_ENGINE_THREADS, _URING or _AUTO (a
 * ring if one can be had), depth for the ring.  -EOPNOTSUPP for URING
 * without a ring (*why: the ring's errno). */
int bp_io_start(struct bp_pool *p, unsigned engine, unsigned depth, int *why);
/* Start n I/O threads (after bp_io_start); bp_io_stop joins those started. */
int bp_io_spawn(struct bp_pool *p, unsigned n);
void bp_io_stop(struct bp_pool *p);
void bp_io_submit(struct bp_pool *p, struct bp_frame *f, enum bp_io_op op, uint64_t tag);
/* The read of a miss (f LOCKED by the caller, pinned): inline when the file
 * allows it and the kernel has the page (completed, LOCKED cleared, before
 * this returns), else submitted as bp_io_submit does. */
void bp_io_read(struct bp_pool *p, struct bp_frame *f, uint64_t tag);
/* bp_file.read_inline for a file just opened on fd (with O_DIRECT or not). */
unsigned bp_io_read_mode(const struct bp_pool *p, int fd);
/* n reads at once (readahead): one submission on the ring, and the
 * pages adjacent in the file (consecutive tags) read as one I/O each run. */
void bp_io_submit_reads(struct bp_pool *p, struct bp_frame *const *fs, const uint64_t *tags,
			unsigned n);
/* fsync every open file through the fault injector; 0 or the first sticky
 * negative errno (a file's failed fsync, this one or an earlier one). */
int bp_io_fsync(struct bp_pool *p);
/* The same for one file. */
int bp_io_fsync_file(struct bp_pool *p, struct bp_file *file);
/* Set up and tear down a file's fsync state (bp_io_fsync_file). */
int bp_io_file_init(struct bp_file *file);
void bp_io_file_destroy(struct bp_file *file);

/* writeback.c (layer 5) */
enum bp_wb_mode { BP_WB_TRY = 0, BP_WB_WAIT };
/* Start write-back of f if dirty: 1 started, 0 nothing to do / latch busy
 * (BP_WB_TRY); with BP_WB_WAIT, -EAGAIN if the shared latch was refused
 * (BP_LATCH_COUNT_MAX holders): the page stays dirty. */
int bp_start_writeback(struct bp_pool *p, struct bp_frame *f, enum bp_wb_mode mode);
/* bp_flush of a valid pool with its two outcomes apart: returns the first
 * write error since the previous flush (negative errno, or 0; the page may
 * have been written since), *fsync_err the fsync's (0 or negative). */
int bp_flush_errors(struct bp_pool *p, int *fsync_err);
/* Write back every dirty frame want(f, arg) picks (every frame for a NULL
 * want), waiting for a write in flight on it first, then wait for all
 * write-back.  0, or the first bp_start_writeback error (-EAGAIN). */
int bp_write_frames(struct bp_pool *p, bool (*want)(const struct bp_frame *f, void *arg),
		    void *arg);
int bp_writer_start(struct bp_pool *p);
void bp_writer_stop(struct bp_pool *p);

/* evict.c (layer 6) */
enum bp_claim_mode { BP_CLAIM_NOWAIT = 0, BP_CLAIM_WAIT_IO, BP_CLAIM_WAIT_UNPIN };
/* A frame with state LOCKED | one pin, unmapped.  -EBUSY if none.  The
 * home frame of tag (BP_NO_PAGE: none) is tried first, if free. */
int bp_claim_frame(struct bp_pool *p, enum bp_claim_mode mode, uint64_t tag,
		   const struct timespec *deadline, struct bp_frame **out);
/* Give back a claimed, unmapped frame (LOCKED | pin) as free. */
void bp_free_claimed(struct bp_pool *p, struct bp_frame *f);
/* Evict mapped frame f if it still holds tag, unpinned, clean, unlocked;
 * on success the frame is claimed (LOCKED | one pin, unmapped). */
bool bp_try_evict(struct bp_pool *p, struct bp_frame *f, uint64_t tag, bool ignore_ref);
/* Drop every page of file id at or past page from out of the pool without
 * writing it (dirty or not); waits for its I/O in flight.  -EBUSY if one is
 * pinned (the caller checked before; a pin now breaks its contract). */
int bp_drop_frames(struct bp_pool *p, uint32_t file, uint64_t from);

/* file.c (layer 7) */
/* Open path as a new file of p (the lowest free id: 0 for bp_open's) with
 * BP_OPEN_CREATE/TRUNCATE/READONLY of flags (and the pool's O_DIRECT),
 * and publish it.  0, -EMFILE (BP_MAX_FILES open), -ENOMEM, -errno. */
int bp_file_setup(struct bp_pool *p, const char *path, unsigned flags, struct bp_file **out);
/* -EBUSY (logged as caller's, naming the frame and its page) if a frame
 * holding a page of file at or past page from is pinned; a NULL file: any
 * pinned frame.  Else 0. */
int bp_check_unpinned(struct bp_pool *p, const struct bp_file *file, uint64_t from,
		      const char *caller);
/* Unpublish, close and free a file none of whose pages is in a frame. */
void bp_file_teardown(struct bp_pool *p, struct bp_file *file);

/* optread.c (4), access.c (7), pool.c (8), stats.c (9), statsprint.c
 * (10) and statspub.c (10) define only the public API (bufpool.h). */

#endif /* BUFPOOL_INTERNAL_H */
