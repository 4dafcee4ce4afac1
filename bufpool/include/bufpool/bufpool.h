/* SPDX-License-Identifier: MIT */
/*
 * bufpool.h - a database buffer manager whose frames wait through fwait
 * (public API).
 *
 * Entry points: which call for which job
 *   open, close          bp_open, bp_close (bp_discard after a failed close)
 *   pin, unpin a page    bp_get, bp_get_timed, bp_new_page, bp_new_page_timed,
 *                        bp_release;
 *                        bp_data (its bytes), bp_frame_pageno
 *   latch its contents   bp_latch, bp_latch_try, bp_unlatch
 *   read without a pin   bp_read_begin, bp_read_valid, bp_read_end
 *                        (optimistic reads, validated by a version)
 *   change it            bp_mark_dirty, bp_mark_dirty_lsn (with a redo log)
 *   write back           bp_flush, bp_checkpoint, bp_log_durable,
 *                        bp_oldest_dirty_lsn, bp_durability_err;
 *                        bp_evict_page, bp_evict_all
 *   more files           bp_file_open, bp_file_close, bp_file_discard,
 *                        bp_file_truncate and the bp_file_* forms of the
 *                        page calls (bp_file_get, bp_file_new_page, ...)
 *   look at it           bp_stats_get, bp_stats_reset, bp_stats_print,
 *                        bp_frames_walk, bp_frames_hottest, bp_flags_format
 *                        and the accessors (bp_nframes, bp_page_count, ...)
 *   watch it live        bp_stats_publish (bpstat reads it from another
 *                        process), bp_stats_publish_ops, bp_stats_unpublish
 *   test it              bp_fault_set, bp_fault_clear; bp_config.io_trace
 * docs/bufpool.md walks through them with an example.
 *
 * Design note
 * -----------
 * A pool caches fixed-size pages of one or more files (bp_open's, and any
 * added with bp_file_open) in a fixed number of frames.
 * Page memory is aligned to the page size (so O_DIRECT works) and comes
 * from a dedicated jemalloc arena (the pool shows up in jemalloc's stats),
 * or from posix_memalign in a build with -Djemalloc=disabled.  Each
 * frame has one 32-bit atomic state word with page-cache-style bits and its
 * pin count (layout below); there is no mutex or condition variable in a
 * frame: every wait (page read in, write-back, content latch, free frame)
 * parks in the pool's single fwait_table.
 *
 *   - bp_get pins a page.  If it is absent, exactly one thread claims a
 *     frame, sets BP_LOCKED and reads the page (itself, or through the I/O
 *     engine: bp_config.read_path); every other thread that wants the page
 *     pins the same frame and waits on (frame, BP_LOCKED) with
 *     fwait_bit_wait, as lock_page / wait_on_page_locked.  Whoever did the
 *     read sets BP_UPTODATE or BP_ERROR and clears BP_LOCKED with
 *     fwait_bit_unlock.
 *   - Content latches (bp_latch) are shared/exclusive, phase-fair:
 *     exclusive waiters are served one at a time in FIFO order, shared
 *     waiters all together, and neither side starves.
 *   - A writer (background writer, eviction, bp_flush) sets BP_WRITEBACK
 *     only while holding the latch shared; an exclusive latch is granted
 *     only once BP_WRITEBACK is clear, so a page never changes while it is
 *     being written.
 *   - The hit path (resident page, shared latch, unlatch, release) makes no
 *     system call and does not touch the fwait table when uncontended.
 *
 * Thread safety: every function may be called from any thread, except that
 * bp_close must not race with any other call on the same pool.  Functions
 * return 0 (or a count) on success and a negative errno on failure; they
 * never abort on bad input.  Deadlines are absolute CLOCK_MONOTONIC times.
 *
 * What the caller must not do (each call says its own rules as well):
 *   - call into the pool from a signal handler: calls take mutexes and may
 *     wait (through fwait, whose rule this is too: fwait.h);
 *   - use a pool after fork() in the child: the child has none of the
 *     pool's threads (I/O, background writer) nor the waiters that other
 *     threads had queued, and may have a lock copied held.  Open a new
 *     pool in the child (the parent's stays the parent's);
 *   - unload the library (dlclose) while a pool is open or a thread is
 *     inside a call, nor, in a -Dfwait_park=pthread build, while a thread
 *     that ever waited is still running (fwait.h);
 *   - call bp_flush or bp_close while holding a latch: they wait for a
 *     shared latch on every dirty page.  The order in which latches are
 *     taken is the caller's (the pool never waits for one while holding
 *     anything): keep one order, as a B-tree goes root to leaf.
 *
 * Memory ordering: a page's contents are ordered by two things only: its
 * frame's state word (a read's completion releases BP_UPTODATE with
 * BP_LOCKED's clear, bp_get acquires it) and its content latch (bp_unlatch
 * releases, bp_latch acquires).  Each declaration says what its call
 * orders; a failed call orders nothing.
 */
#ifndef BUFPOOL_BUFPOOL_H
#define BUFPOOL_BUFPOOL_H

/* The version of this header, as fwait.h's (the project's version: the two
 * libraries are released together, so BP_VERSION == FWAIT_VERSION):
 * major * 10000 + minor * 100 + patch.  Which versions share an ABI:
 * docs/abi.md. */
#define BP_VERSION_MAJOR 0
#define BP_VERSION_MINOR 2
#define BP_VERSION_PATCH 0
#define BP_VERSION (BP_VERSION_MAJOR * 10000 + BP_VERSION_MINOR * 100 + BP_VERSION_PATCH)

#ifndef __cplusplus
#include <stdbool.h>
#endif
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

/* Also C++: the C/C++ notes and the word type are fwait.h's. */
#include "fwait/fwait.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility; everything declared here is
 * its exported API. */
#pragma GCC visibility push(default)

/* The version of the library the program runs on, as BP_VERSION (an int,
 * for the reasons fwait_version gives).  Never fails. */
int bp_version(void);

/* ---- Sizes and defaults ---------------------------------------------------- */

#define BP_PAGE_SIZE_MIN 512u
#define BP_PAGE_SIZE_MAX 65536u
#define BP_PAGE_SIZE_DEFAULT 4096u
#define BP_NFRAMES_DEFAULT 1024u
#define BP_IO_THREADS_DEFAULT 2u
#define BP_READAHEAD_DEFAULT 8u       /* pages read ahead on sequential misses */
#define BP_IO_DEPTH_DEFAULT 128u      /* io_uring engine: I/Os in flight at most */
#define BP_IO_DEPTH_MAX 4096u
#define BP_WRITER_INTERVAL_MS_DEFAULT 50u
#define BP_NO_PAGE UINT64_MAX         /* pageno of an unmapped frame */
#define BP_NO_ARENA (~0u)             /* bp_stats.jemalloc_arena without jemalloc */

/* ---- Frame state word ------------------------------------------------------
 *
 *   bits 0..7   page state bits: the rows of BP_STATE_BITS below; unused
 *               bits of the byte are reserved (0)
 *   bits 8..30  pin count (BP_PIN_SHIFT)
 *   bit  31     fwait's waiters bit (FWAIT_WAITERS_BIT)
 *
 * BP_STATE_BITS is the one list of the state bits, as Linux's page flags
 * and PostgreSQL's BM_ block: X(name, bit, kind) per bit, from which come
 * enum bp_state_bit (BP_<name> = bit), enum bp_state_flag (the masks
 * BP_F_<name>), the derived masks BP_F_INFLIGHT and BP_F_PAGE_STATE (from
 * the kind), BP_STATE_BIT_COUNT, and the names bp_flags_format prints.
 * kind is INFLIGHT for an operation in flight on the frame (it ends by
 * itself; the frame cannot be claimed meanwhile), PAGE for the state of
 * the page the frame holds (cleared when the frame is reused for another
 * page).  A new bit is one row here plus the code that gives it meaning;
 * tests/bufpool/test_state_bits.c checks the table against its uses. */
#define BP_STATE_BITS(X)                                                          \
	X(LOCKED,     0, INFLIGHT) /* frame being read in or taken for eviction */ \
	X(WRITEBACK,  1, INFLIGHT) /* a write of the page is in flight */          \
	X(DIRTY,      2, PAGE)     /* page differs from the file */                \
	X(UPTODATE,   3, PAGE)     /* page holds valid data */                     \
	X(ERROR,      4, PAGE)     /* the last read failed */                      \
	X(REFERENCED, 5, PAGE)     /* clock (second-chance) usage bit */

#define BP_STATE_KIND_INFLIGHT 1
#define BP_STATE_KIND_PAGE 2
#define BP_STATE_BIT_(name, bit, kind) BP_##name = bit,
#define BP_STATE_COUNT_(name, bit, kind) + 1
#define BP_STATE_FLAG_(name, bit, kind) BP_F_##name = 1 << BP_##name,
#define BP_STATE_IF_INFLIGHT_(name, bit, kind) \
	| (BP_STATE_KIND_##kind == BP_STATE_KIND_INFLIGHT ? BP_F_##name : 0)
#define BP_STATE_IF_PAGE_(name, bit, kind) \
	| (BP_STATE_KIND_##kind == BP_STATE_KIND_PAGE ? BP_F_##name : 0)
enum bp_state_bit {
	BP_STATE_BITS(BP_STATE_BIT_)
	BP_STATE_BIT_COUNT = 0 BP_STATE_BITS(BP_STATE_COUNT_) /* rows in the table */
};
/* The masks are enumeration constants, not macros, so that the table
 * alone makes them: in C int (all below bit 8), in C++ of an enumeration
 * based on uint32_t, so that ~BP_F_DIRTY is unsigned there as the state
 * word; one enumeration, so that C++20 sees no operation between two
 * enumeration types.
 * BP_F_INFLIGHT: a read, claim or write in flight (LOCKED|WRITEBACK): the
 * frame cannot be claimed, and a wait on it ends without user action.
 * BP_F_PAGE_STATE: what a frame knows of its page (DIRTY|UPTODATE|ERROR|
 * REFERENCED), cleared when the frame is taken for another page. */
enum bp_state_flag
#ifdef __cplusplus
	: uint32_t
#endif
{
	BP_STATE_BITS(BP_STATE_FLAG_)
	BP_F_INFLIGHT = 0 BP_STATE_BITS(BP_STATE_IF_INFLIGHT_),
	BP_F_PAGE_STATE = 0 BP_STATE_BITS(BP_STATE_IF_PAGE_)
};
#undef BP_STATE_BIT_
#undef BP_STATE_COUNT_
#undef BP_STATE_FLAG_
#undef BP_STATE_IF_INFLIGHT_
#undef BP_STATE_IF_PAGE_
#undef BP_STATE_KIND_INFLIGHT
#undef BP_STATE_KIND_PAGE
#define BP_FLAGS_MASK UINT32_C(0xff)
#define BP_PIN_SHIFT 8u
#define BP_PIN_ONE (UINT32_C(1) << BP_PIN_SHIFT)
#define BP_PIN_MASK (((UINT32_C(1) << 23) - 1) << BP_PIN_SHIFT)
/* Most pins callers can hold on one frame (bp_get, bp_new_page): 2^22 - 1.
 * One more is refused with -EAGAIN, never carried into fwait's waiters
 * bit.  The upper half of the field is headroom, so pinning stays one
 * fetch_add and the pool's own short write-back pins still fit on a fully
 * pinned page. */
#define BP_PIN_MAX ((BP_PIN_MASK >> BP_PIN_SHIFT) >> 1)

/* ---- Configuration ---------------------------------------------------------- */

/* bp_config.flags */
#define BP_OPEN_CREATE 0x01u       /* create the file if it does not exist */
#define BP_OPEN_TRUNCATE 0x02u     /* truncate the file to 0 pages */
#define BP_OPEN_DIRECT 0x04u       /* O_DIRECT (fails with the open errno where unsupported) */
#define BP_OPEN_NO_BGWRITER 0x08u  /* no background writer thread */
#define BP_OPEN_NO_READAHEAD 0x10u /* never read ahead */
#define BP_OPEN_READONLY 0x20u     /* open O_RDONLY; bp_mark_dirty fails with -EROFS */
/* Page checksums: the last BP_CHECKSUM_BYTES of every page are the pool's,
 * a CRC-32C of the page number (8 bytes, little-endian) and the rest of the
 * page, stored on every write and verified on every read.  A page that
 * fails is not cached: every caller waiting for that read gets -EBADMSG
 * (counted in checksum_errors), and the next bp_get reads it again.  A page
 * of zeros only (a hole, never written) passes.  The caller may use the
 * first bp_data_size bytes of a page; the trailer's bytes in memory belong
 * to the pool (it writes from a copy, so they are never raced).  A file
 * must be opened with the flag always or never. */
#define BP_OPEN_CHECKSUMS 0x40u
#define BP_CHECKSUM_BYTES 4u

/* The I/O trace hook (bp_config.io_trace; see "I/O tracing" below). */
struct bp_io_trace_event;
typedef int (*bp_io_trace_fn)(void *io_trace_arg, const struct bp_io_trace_event *ev);

/* Fill with bp_config_init, then set what you need; every 0 means
 * "default".
 *
 * size: the caller's sizeof(struct bp_config) (bp_config_init sets it), so
 * that the struct can grow by fields appended at its end (docs/abi.md):
 * bp_open reads the first size bytes only, and treats a field past them
 * as 0 (its default: a program built against an older, shorter layout);
 * a size larger than this library's struct is accepted only if every byte
 * past the library's struct is 0 (a newer program that set no new field;
 * else -E2BIG, as Linux's copy_struct_from_user); a size below
 * BP_CONFIG_SIZE_VER0 (0: bp_config_init not called) is -EINVAL. */
struct bp_config {
	size_t size;                /* set by bp_config_init */
	const char *path;           /* file of pages; required */
	unsigned flags;             /* BP_OPEN_* */
	uint32_t page_size;         /* power of two in [512, 65536]; 0 = 4096 */
	uint32_t nframes;           /* frames in the pool; 0 = 1024; at least
				     * 2, below 2^30 (else -EINVAL) */
	unsigned io_threads;        /* I/O engine threads; 0 = 2, max 64 */
	unsigned readahead_pages;   /* 0 = 8; see BP_OPEN_NO_READAHEAD */
	unsigned partitions;        /* page-table partitions; 0 = auto; rounded to 2^n */
	unsigned writer_interval_ms;/* background writer period; 0 = 50 */
	uint32_t io_latency_us;     /* simulated device latency per I/O; 0 = off */
	struct fwait_config fwait;  /* policy, nbuckets, max_steals of the pool's table */
	/* Where the pool's messages go; NULL (the default) = nowhere: the
	 * library itself never writes to stderr or any other stream.  See
	 * enum bp_log_level. */
	void (*log)(void *log_arg, int level, const char *msg);
	void *log_arg;              /* passed to log as is */
	/* The write-ahead-log rule (NULL = no log).  Before the pool writes a
	 * page whose LSN (bp_mark_dirty_lsn) is above the durable LSN it
	 * knows, whoever writes it (eviction, the background writer,
	 * bp_flush, bp_checkpoint), it calls flush_log(arg, lsn, &durable):
	 * make the log durable up to at least lsn, set *durable to the LSN it
	 * is now durable up to (>= lsn), return 0; or return a negative errno,
	 * and the page is not written (it stays dirty; the error is reported
	 * as a write error: by bp_flush, bp_checkpoint, bp_close).  Called
	 * from the pool's I/O threads, possibly several at once; it must not
	 * call into the pool.  The engine's own log flushes can be reported
	 * with bp_log_durable, so that the pool does not ask again. */
	int (*flush_log)(void *flush_log_arg, uint64_t lsn, uint64_t *durable);
	void *flush_log_arg;
	/* The I/O engine (enum bp_io_engine_kind; 0 = BP_IO_ENGINE_AUTO) and, for
	 * io_uring, its queue depth (I/Os in flight at most, whatever the
	 * thread count; 0 = BP_IO_DEPTH_DEFAULT, max BP_IO_DEPTH_MAX). */
	unsigned io_engine;
	unsigned io_depth;
	/* Every change the pool makes to its files, reported as it happens
	 * (NULL = none): for tests that rebuild what a power failure leaves
	 * (see "I/O tracing"). */
	bp_io_trace_fn io_trace;
	void *io_trace_arg;
	/* Who reads a missed page (enum bp_read_path; 0 = BP_READ_AUTO). */
	unsigned read_path;
	/* New fields go here, at the end, each with 0 as its default. */
};

/* The first published layout of struct bp_config: the fields through
 * io_trace_arg (0.1's before its last addition, read_path), the smallest
 * size bp_open accepts.  A layout a release adds gets the next VER. */
#define BP_CONFIG_SIZE_VER0 offsetof(struct bp_config, read_path)

/* Zero *cfg (every field its default) and set cfg->size to the size of
 * the layout this program was compiled with.  Inline, not a library call:
 * the size must be the program's sizeof, which the library cannot know.
 * Cannot fail (cfg must point to a struct bp_config). */
static inline void bp_config_init(struct bp_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->size = sizeof *cfg;
}

/* bp_config.io_engine.  AUTO: io_uring where the build has it and the
 * kernel lets the pool set up a ring, else the thread pool; the
 * environment variable BP_IO_ENGINE (threads, uring or auto), read by
 * bp_open for AUTO only, overrides it (tests and CI pick an engine so).
 * URING where no ring can be had fails bp_open with -EOPNOTSUPP (logged
 * with the reason).  bp_stats.io_engine says which one runs. */
enum bp_io_engine_kind {
	BP_IO_ENGINE_AUTO = 0,
	BP_IO_ENGINE_THREADS = 1,
	BP_IO_ENGINE_URING = 2
};

/* bp_config.read_path: who reads the page of a miss.
 *
 * AUTO: the thread that missed reads it itself, with pread, as it would
 * otherwise sleep until the page is in: a page in the OS page cache costs
 * one copy, a page on the device one sleep in the kernel, woken by the
 * I/O's completion itself (with BP_OPEN_DIRECT too).  No hand-off to an
 * I/O thread and no wake-up back, which cost two context switches and a
 * wake-up latency per miss.
 * ENGINE: every read goes to the I/O engine (the behaviour before AUTO),
 * the requester sleeping on the page's LOCKED bit until it is woken.
 * CACHED: the thread that missed reads only what the kernel has cached,
 * with preadv2(RWF_NOWAIT) (a plain pread on tmpfs and ramfs); what would
 * block (EAGAIN), and BP_OPEN_DIRECT, go to the engine, whose io_depth
 * then bounds the device reads in flight whatever the thread count.
 * On every path the engine reads for readahead, under a simulated
 * io_latency_us, and when a fault is injected (bp_fault_set); the page is
 * verified (BP_OPEN_CHECKSUMS) and completed the same way: UPTODATE or
 * ERROR, then LOCKED cleared with release order, waking every thread
 * waiting for the page.  A read done by the thread that missed is not a
 * cancellation point.  bp_stats.inline_reads, inline_blocked and read_ios
 * count the choices.  The environment variable BP_READ_PATH (auto,
 * engine or cached), read by bp_open for AUTO only, overrides it (tests
 * and CI run the engine path so). */
enum bp_read_path {
	BP_READ_AUTO = 0,
	BP_READ_ENGINE = 1,
	BP_READ_CACHED = 2
};

/* Levels of bp_config.log, most severe first (new levels may be added, so
 * treat an unknown one as BP_LOG_INFO).  Every message today is
 * BP_LOG_ERROR: it says why a call returned the error it did (which field
 * of the config bp_open refused, which frame is still pinned, what failed
 * at bp_close).  log is called from the thread making that call, before the
 * call returns, with a NUL-terminated message without trailing newline
 * (e.g. "bp_open: page size 3000 must be a power of two in [512, 65536]"),
 * which it must copy if it keeps it.  It must not call into the pool (the
 * pool may be in the middle of bp_open or bp_close) and should return
 * quickly. */
enum bp_log_level {
	BP_LOG_ERROR = 1,
	BP_LOG_WARN = 2,
	BP_LOG_INFO = 3,
};

struct bp_pool;
struct bp_frame; /* opaque; valid while pinned */

/* Open (and with BP_OPEN_CREATE create) the file and build the pool.
 * *out is set only on success.  Errors: -EINVAL (NULL, cfg->size below
 * BP_CONFIG_SIZE_VER0, no path, page size not a power of two in range, bad
 * fwait config, nframes < 2), -E2BIG (cfg->size beyond this library's
 * struct with a nonzero byte there: a field this library does not know),
 * -ENOMEM, or the open/fstat errno (e.g. -ENOENT without BP_OPEN_CREATE).
 * Each -EINVAL for a field of *cfg, and -E2BIG, is explained to cfg->log
 * (BP_LOG_ERROR); a bad size below BP_CONFIG_SIZE_VER0 is not (cfg->log
 * may lie past what the caller has). */
int bp_open(struct bp_pool **out, const struct bp_config *cfg);

/* Write back every dirty page, wait for it, fsync, stop the threads, free
 * everything.  The pool is freed if and only if bp_close returns 0.  On an
 * error it returns what bp_flush would (the first write error since the
 * previous flush, even one whose page has since been written, else the
 * fsync error), logs (BP_LOG_ERROR) which of these it was (a write-back
 * that left pages dirty, one that failed earlier and was written since, or
 * fsync), and leaves the pool open and usable (a page that could not be
 * written stays dirty: nothing is dropped silently), so the caller can
 * retry bp_close once the cause is fixed, or give up with bp_discard.
 * After a failed fsync (bp_durability_err) a retry cannot succeed: every
 * bp_close writes the dirty pages and returns the fsync's error, and the
 * pool is freed only by bp_discard.
 * -EBUSY (changes nothing, logs the first pinned frame) if a page is still
 * pinned; -EINVAL for NULL. */
int bp_close(struct bp_pool *pool);
/* Free the pool without writing anything back: dirty pages are lost.  For a
 * caller giving up after bp_close failed.  0, -EBUSY (a page is pinned,
 * logged as by bp_close), -EINVAL for NULL. */
int bp_discard(struct bp_pool *pool);

/* ---- Page access ------------------------------------------------------------ */

/* bp_get flags */
#define BP_GET_CREATE 0x01u       /* a page at or past the end of file is
                                     created zero-filled (and the file grows
                                     when it is written) instead of -ENXIO */
#define BP_GET_NOREADAHEAD 0x02u  /* do not trigger readahead on this miss */
#define BP_GET_OVERWRITE 0x04u    /* the caller will overwrite the whole page
                                     (recovery restoring a page image): a
                                     page not in memory is not read but
                                     zero-filled, UPTODATE and DIRTY, so a
                                     torn or damaged page on disk is no
                                     error; a resident page is returned as
                                     it is (one left by a failed read is
                                     zeroed and dirtied).  Implies
                                     BP_GET_CREATE; -EROFS on a read-only
                                     pool or file, resident page or not. */

/* Pin page pageno and return its frame in *frame (set only on success).
 * If the page is absent it is read in (one read however many threads ask);
 * a page below bp_page_count that was never written (a hole) reads as zeros.
 * Errors: -EINVAL (NULL args, unknown flags), -ENXIO (pageno past the end of
 * the file without BP_GET_CREATE), -EFBIG (pageno too large for a file
 * offset), -EIO (or the injected errno) when the read failed (a later
 * bp_get retries), -EBUSY when no frame can be freed (every frame pinned),
 * -EAGAIN when the page is already pinned BP_PIN_MAX times.
 * How long it may wait for a frame: while every frame is pinned or busy
 * with I/O it sweeps and waits for a read or write-back to end, at most
 * 16 rounds of at most 50 ms each (about 0.8 s), then gives -EBUSY; it
 * never waits for an unpin (bp_get_timed does).
 * On 0 the frame holds pageno until bp_release, and the contents its read
 * left (or a creator's zeros) happen before the return: the completion
 * sets BP_UPTODATE and clears BP_LOCKED with a release, bp_get sees
 * BP_UPTODATE with an acquire.  Later changes by other threads are ordered
 * only by the latch: read the page under bp_latch. */
int bp_get(struct bp_pool *pool, uint64_t pageno, unsigned flags,
	   struct bp_frame **frame);
/* As bp_get (ordering included), but when no frame can be freed, wait for
 * an unpin until deadline (NULL: wait forever) before returning -EBUSY.
 * The deadline bounds the whole search for a frame, waits for frames busy
 * with I/O (a read or write-back in flight) included: once it has passed,
 * -EBUSY (a free frame is still taken with a deadline already passed).
 * Once a frame holds the page, waiting for its read is not bounded by it.
 * A deadline with tv_nsec outside [0, 1e9) or a negative tv_sec gives
 * -EINVAL. */
int bp_get_timed(struct bp_pool *pool, uint64_t pageno, unsigned flags,
		 const struct timespec *deadline, struct bp_frame **frame);
/* Append a new zero-filled page: *pageno = the old page count; the page is
 * returned pinned, UPTODATE and DIRTY.  Errors as bp_get.  This call wrote
 * the zeros (a bp_get of the page by another thread sees them, as above);
 * the page is not latched: latch it exclusive before changing it once
 * another thread may bp_get it. */
int bp_new_page(struct bp_pool *pool, uint64_t *pageno, struct bp_frame **frame);
/* As bp_new_page, but when no frame can be freed, wait for an unpin until
 * deadline (NULL: wait forever) before returning -EBUSY, with
 * bp_get_timed's rules for the deadline (-EINVAL if malformed).  For an
 * engine whose pool is small against its threads' pins: a page split
 * then waits for a frame instead of failing.  Since 0.2.0. */
int bp_new_page_timed(struct bp_pool *pool, const struct timespec *deadline, uint64_t *pageno,
		      struct bp_frame **frame);
/* Unpin.  -EINVAL for NULL, a frame of another pool, or a frame that is not
 * pinned (double release).  Unlatch before releasing: a frame released
 * while its latch is still held (or waited for) is never evicted or reused
 * until the latch is idle again, so the holder's writes stay in that page;
 * bp_evict_page gives -EBUSY for it meanwhile.  0 is a release (a seq_cst
 * RMW): the caller's accesses through this pin happen before the frame is
 * reused for another page.  It publishes nothing to the page's other users:
 * that is the latch's job. */
int bp_release(struct bp_pool *pool, struct bp_frame *frame);

/* The page's memory (page_size bytes, aligned to page_size); NULL if frame is
 * NULL.  Read it under a shared latch, modify it under an exclusive one. */
void *bp_data(const struct bp_frame *frame);
/* Page number of a pinned frame; BP_NO_PAGE for NULL. */
uint64_t bp_frame_pageno(const struct bp_frame *frame);

/* Mark a pinned page dirty (call with the exclusive latch held, after
 * modifying it).  Waits for BP_WRITEBACK to clear first.  -EINVAL (NULL,
 * not pinned), -EROFS (read-only pool).  DIRTY is set with a release that
 * the write-back taking it acquires, so the caller's changes before this
 * call are what gets written, by the next write-back of the page or, at
 * the latest, by a bp_flush that starts after this call returns.  In a
 * debug-checks build (-Ddebug_checks=true): a caller that does not hold
 * the frame's exclusive latch (bp_mark_dirty_lsn too) aborts with a
 * message, sent to bp_config.log and stderr. */
int bp_mark_dirty(struct bp_pool *pool, struct bp_frame *frame);
/* bp_mark_dirty for an engine with a log: also raises the frame's page LSN
 * to lsn (it never goes down) and, if the page was clean, records lsn as
 * its oldest unwritten change (bp_oldest_dirty_lsn, bp_checkpoint).  Call
 * it with the exclusive latch held, after logging the change and
 * modifying the page; lsn 0 is refused (-EINVAL: 0 means "none").  Once a
 * write of the page succeeds, the page is clean and its oldest change is
 * forgotten.  Pages dirtied with plain bp_mark_dirty have no LSN: the
 * write-ahead rule and the checkpoint do not see them. */
int bp_mark_dirty_lsn(struct bp_pool *pool, struct bp_frame *frame, uint64_t lsn);
/* The page LSN of a pinned frame (0: none since it was read). */
uint64_t bp_frame_lsn(const struct bp_frame *frame);

/* ---- Content latches ---------------------------------------------------------- */

enum bp_latch_mode {
	BP_LATCH_SHARED = 1,
	BP_LATCH_EXCLUSIVE = 2,
};

/* Per frame, at most BP_LATCH_COUNT_MAX (2^20 - 1) shared holders, as many
 * threads queued for the shared latch and as many queued for the exclusive
 * one.  A latch call that would go past one of these is refused with
 * -EAGAIN and changes nothing. */
#define BP_LATCH_COUNT_MAX 1048575u

/* Latch a pinned frame.  Exclusive also waits until BP_WRITEBACK is clear.
 * Latches are not recursive.  -EINVAL (NULL, bad mode, frame not pinned),
 * -EAGAIN (BP_LATCH_COUNT_MAX shared holders already, for shared with no
 * exclusive holder or waiter; else BP_LATCH_COUNT_MAX threads already queued
 * in that mode).  0 is an acquire.  Shared: what the last exclusive holder
 * did before bp_unlatch happens before the return; shared holders run
 * together and must not write the page.  Exclusive: what every earlier
 * holder did before unlatching happens before it, and so does the end of
 * the page's last write-back (BP_WRITEBACK seen clear with an acquire).
 * In a debug-checks build (-Ddebug_checks=true): bp_latch by the thread
 * that holds the frame's exclusive latch (either mode: it would wait for
 * itself forever) aborts with a message before it blocks. */
int bp_latch(struct bp_pool *pool, struct bp_frame *frame, enum bp_latch_mode mode);
/* As bp_latch without sleeping: -EBUSY if it would wait (for exclusive, also
 * while BP_WRITEBACK is set); for shared, -EAGAIN if the frame already has
 * BP_LATCH_COUNT_MAX shared holders (and no exclusive holder or waiter).
 * 0 orders as bp_latch. */
int bp_latch_try(struct bp_pool *pool, struct bp_frame *frame, enum bp_latch_mode mode);
/* -EPERM if the latch is not held in that mode; -EINVAL.  0 is a release:
 * the holder's accesses to the page happen before the return of the next
 * bp_latch (or bp_latch_try) of the frame that gets the latch, in either
 * mode. */
int bp_unlatch(struct bp_pool *pool, struct bp_frame *frame, enum bp_latch_mode mode);

/* ---- Optimistic reads ------------------------------------------------------------
 *
 * A read that takes no pin and no latch and writes no shared memory (as
 * LeanStore's hybrid latch and vmcache's optimistic guard): begin records
 * the frame's version, the caller reads the page, end says whether the
 * version still holds.  Every exclusive unlatch and every reuse of a frame
 * for another page raises the version, so a read that ends valid saw the
 * page as one exclusive holder left it, wholly; one that ends invalid saw
 * a page changing under it (or another page's bytes: the frame's memory
 * stays mapped and owned by the pool while it is open, so reading it is
 * never a fault), and must throw away everything it read and start again.
 *
 * Rules for the code between begin and end (it runs while a writer may
 * change the page, as a seqlock reader does):
 *   - trust nothing read until end (or bp_read_valid) says it was valid:
 *     check every length, count and offset taken from the page against
 *     the page's size before using it, never loop on a count read from it
 *     without a bound, never follow a pointer or page number read from it
 *     before validating (a page number may be passed to another
 *     bp_read_begin, which is safe for any value, and the caller then
 *     validates this read before using that one, as lock coupling);
 *   - no side effect that cannot be undone: copy out, decide later;
 *   - keep it short: a writer does not wait for readers, so a long read
 *     under a busy page keeps failing (fall back to bp_get + bp_latch);
 *   - every successful begin is closed by exactly one bp_read_end, on
 *     every path, valid or not.
 * And for writers: only a change made under the exclusive latch is seen
 * by the version, so change a page that another thread may be reading
 * only under it (bp_new_page's page may be filled without it while no
 * other thread can know its number).
 * The counts are in bp_stats: optimistic_reads (successful begins) and
 * optimistic_restarts (ends that found the read invalid).
 *
 * Ordering: a begin that returns 0 is an acquire of the page as its last
 * exclusive holder (or its read completion) left it: what they did before
 * unlatching happens before the return.  End orders nothing further; its
 * "valid" means that no exclusive holder and no reuse of the frame came
 * between the begin and the end. */
struct bp_file;
struct bp_read {
	struct bp_pool *pool;
	struct bp_frame *frame;
	/* The page, read-only: bp_data(frame), found from the frame's place
	 * in the pool without loading the frame, so the first load of the
	 * page need not wait for the frame's cache line. */
	const void *data;
	uint64_t version;
};

/* Begin an optimistic read of page pageno, if it is resident: 0 (*rd set).
 * -ENOENT: not in the pool, or not readable now (being read in, failed,
 * being evicted): use bp_get, which reads it.  -EBUSY: an exclusive
 * holder is in the page: use bp_get + bp_latch, which wait for it (or
 * retry).  -EFBIG (pageno past any file offset), -EINVAL (NULL).  Any
 * pageno is safe to pass, garbage included. */
int bp_read_begin(struct bp_pool *pool, uint64_t pageno, struct bp_read *rd);
/* The same on a page of file. */
int bp_file_read_begin(struct bp_file *file, uint64_t pageno, struct bp_read *rd);
/* The same on a frame the caller holds pinned (bp_get), to read it without
 * its latch: 0, -EBUSY, -ENOENT (not readable), -EINVAL (NULL, not pinned,
 * another pool's). */
int bp_read_begin_frame(struct bp_pool *pool, struct bp_frame *frame, struct bp_read *rd);
/* Predicate: the read is still valid so far (everything read before this
 * call was a consistent page).  The read stays open: end it all the
 * same.  false for NULL. */
bool bp_read_valid(const struct bp_read *rd);
/* End the read: 0 if it was valid throughout (what was read is a
 * consistent page as some exclusive holder left it), -ESTALE if a writer
 * or the frame's reuse came in between: discard what was read.  -EINVAL
 * for NULL or a read that was never begun. */
int bp_read_end(struct bp_read *rd);

/* ---- Write-back, eviction ------------------------------------------------------ */

/* Write every dirty page, wait for all write-back, fsync.  Returns 0, the
 * first write error since the previous bp_flush (by any writer: this flush,
 * the background writer, eviction; each error is reported once), -EAGAIN
 * if a dirty page could not be written because its latch already had
 * BP_LATCH_COUNT_MAX shared holders (it stays dirty), else the fsync
 * error.  A failed fsync is sticky: from then on every bp_flush (and
 * bp_close) returns its error, even when the fault is gone and this
 * flush's own fsync succeeded, because the kernel may have dropped pages
 * written before it that the pool no longer holds dirty (see
 * bp_durability_err).  A page whose write failed stays dirty, so a later
 * flush writes it again.  Pages dirtied concurrently may or may not be
 * included.  Do not call it while holding a latch.
 * 0: every page dirty when the call began (marked or created before it)
 * was written by a write that succeeded, then fsync(2) returned 0, and no
 * fsync of the pool ever failed: durable as far as fsync makes it.
 * Except: a failed write whose error went to a concurrent bp_flush or
 * bp_evict_page (reported once). */
int bp_flush(struct bp_pool *pool);
/* The engine's log is durable up to lsn (it flushed it itself, as a group
 * commit does): pages with an LSN up to there are written without calling
 * flush_log.  The pool keeps the highest value it was told.  0, -EINVAL. */
int bp_log_durable(struct bp_pool *pool, uint64_t lsn);
/* The oldest change (bp_mark_dirty_lsn) not yet written, over every dirty
 * page; UINT64_MAX if none.  A scan of the frames: a snapshot, which a
 * concurrent bp_mark_dirty_lsn may make stale at once. */
uint64_t bp_oldest_dirty_lsn(struct bp_pool *pool);
/* A fuzzy checkpoint: write every page whose oldest unwritten change is at
 * or below upto, wait for those writes, fsync, and set *redo_lsn to where
 * recovery must start replaying the log: min(upto, the oldest unwritten
 * change left, measured after the writes, so a page dirtied meanwhile is
 * counted).  Pages with later changes, and their readers and writers, are
 * not touched or waited for; it waits for the shared latch of a page it
 * writes, as bp_flush does, so do not call it holding a latch on such a
 * page.  Returns 0, the first write error (including a flush_log failure;
 * *redo_lsn is still set, and covers the page left dirty), -EAGAIN as
 * bp_flush, or the fsync error (sticky, as bp_flush's).  A read-only pool
 * writes nothing: 0 and min(upto, oldest).  -EINVAL for NULL arguments.
 * 0 means: every change below *redo_lsn is in a page on disk (written,
 * then fsync returned 0), so a recovery that replays the log from
 * *redo_lsn misses nothing. */
int bp_checkpoint(struct bp_pool *pool, uint64_t upto, uint64_t *redo_lsn);
/* 0 while the pool can still claim durability; once an fsync of one of its
 * files has failed, that fsync's negative errno, while that file is open
 * (a sticky failed state, as PostgreSQL's since 2018: pages written before
 * the failure may be lost on disk though the pool holds them clean).  The
 * pool stays usable for reads and writes, but bp_flush and bp_close
 * return the error; to go on, bp_discard the pool, reopen the file and
 * recover (rewrite what must be durable).  -EINVAL for NULL.  Reads a
 * flag: no ordering beyond this: a failure being recorded by a concurrent
 * flush may or may not be seen. */
int bp_durability_err(const struct bp_pool *pool);
/* Evict one page (written back first if dirty).  Never waits for a content
 * latch: a page latched by anyone, the caller included (or with threads
 * queued on its latch), gives -EBUSY at once and is not written.  A
 * write-back already in flight is waited for.  0; -ENOENT (not resident);
 * -EBUSY (pinned, latched or being read; a dirty page pinned by others but
 * not latched is written back first); the write error if its write failed
 * (the page then stays resident and dirty). */
int bp_evict_page(struct bp_pool *pool, uint64_t pageno);
/* Evict every unpinned page, writing dirty ones back first.  Returns the
 * number evicted (>= 0) or the first write error. */
int bp_evict_all(struct bp_pool *pool);

/* ---- Fault injection (the pool's I/O layer) ------------------------------------ */

enum bp_fault_op { BP_FAULT_READ = 0, BP_FAULT_WRITE, BP_FAULT_FSYNC, BP_FAULT_OP_COUNT };
enum bp_fault_kind {
	BP_FAULT_FAIL = 0, /* the I/O fails with err */
	BP_FAULT_SHORT,    /* read/write transfers only half the page */
	BP_FAULT_SLOW,     /* the I/O succeeds delay_us later */
	BP_FAULT_NO_WAL,   /* write only: the page is written without the
			    * write-ahead rule (flush_log is not called): a
			    * deliberately broken pool, for the tests that
			    * show a crash test catches one */
};
struct bp_fault {
	enum bp_fault_op op;
	enum bp_fault_kind kind;
	int err;                  /* positive errno for FAIL; 0 = EIO */
	uint32_t count;           /* fire this many times, then stop; 0 = no limit */
	uint32_t probability_ppm; /* chance per matching I/O in 1e-6; 0 = always */
	uint64_t seed;            /* PRNG seed for probability (deterministic) */
	uint64_t delay_us;        /* SLOW: added latency */
	uint64_t page_first;      /* page filter [page_first, page_first + page_count) */
	uint64_t page_count;      /* 0 = every page (fsync ignores the filter) */
};
/* Install (replace) the rule for fault->op.  -EINVAL for NULL or bad fields. */
int bp_fault_set(struct bp_pool *pool, const struct bp_fault *fault);
/* Remove every rule.  -EINVAL for NULL. */
int bp_fault_clear(struct bp_pool *pool);

/* ---- I/O tracing (tests: what a power failure would leave) --------------------- */

/* Every operation that changes the pool's files (and, for an engine that
 * reports its own files through the same hook, theirs) is reported to
 * bp_config.io_trace, so that a test can record them and rebuild, for any
 * point of the run, the files a power failure there could leave: what a
 * successful sync covered, and any subset of the rest (SQLite's crash-test
 * VFS, ALICE and CrashMonkey work so).
 *
 * Ordering guarantee: an event is reported after its operation returned
 * (OPEN, WRITE, TRUNCATE, PUNCH, RENAME, SYNC_END) or just before it
 * starts (SYNC_BEGIN), and before anything that depends on it is done: a
 * page's write-back is complete (WRITEBACK cleared) only after its WRITE
 * event was reported, and a sync's caller learns its result only after
 * its SYNC_END.  Hence for a sync whose SYNC_END reports 0, every WRITE,
 * TRUNCATE and PUNCH of that path reported before its SYNC_BEGIN is
 * durable after it; one reported after the SYNC_BEGIN may or may not be.
 * A sync of a directory makes the creations (OPEN with BP_IO_TRACE_CREAT)
 * and RENAMEs into it reported before its SYNC_BEGIN durable.  The pool
 * itself never syncs a directory: an engine that creates files makes
 * their names durable itself.
 *
 * The hook is called from any thread, several at once (the io_uring
 * engine reports page writes from its reaper thread), and must not call
 * into the pool.  It returns 0; at SYNC_BEGIN it may instead return a
 * negative errno, and that sync then fails with it without syncing: an
 * injected fsync error, seen by the caller as the kernel's (after which
 * Linux forgets the dirtiness of the pages it failed to write, so a
 * power-loss model must treat the writes that sync was to cover as never
 * durable).  Its return is ignored for every other event. */
enum bp_io_trace_op {
	BP_IO_TRACE_OPEN = 1,   /* path opened (flags) */
	BP_IO_TRACE_WRITE,      /* path, offset, len, data; result */
	BP_IO_TRACE_TRUNCATE,   /* path; offset = the new size */
	BP_IO_TRACE_PUNCH,      /* path, offset, len: a hole (reads as zeros) */
	BP_IO_TRACE_SYNC_BEGIN, /* path (a file or a directory) */
	BP_IO_TRACE_SYNC_END,   /* path; result */
	BP_IO_TRACE_RENAME,     /* path renamed to path2 */
};
#define BP_IO_TRACE_CREAT 0x1u /* OPEN: O_CREAT was given */
#define BP_IO_TRACE_TRUNC 0x2u /* OPEN: O_TRUNC was given (the file is empty) */
struct bp_io_trace_event {
	enum bp_io_trace_op op;
	int result;             /* WRITE, SYNC_END: 0 or a negative errno */
	unsigned flags;         /* OPEN: BP_IO_TRACE_* */
	const char *path;       /* as it was opened */
	const char *path2;      /* RENAME: the new name */
	uint64_t offset, len;   /* WRITE, PUNCH: the range; TRUNCATE: offset = size */
	const void *data;       /* WRITE: the len bytes written (valid during the call) */
};

/* ---- Statistics and introspection ---------------------------------------------- */

struct bp_wait_hist {
	uint64_t count;    /* waits that slept */
	uint64_t total_ns;
	uint64_t max_ns;
	uint64_t ns_hist[FWAIT_HIST_BUCKETS]; /* log2 buckets, as fwait_stats */
};

/* Set size before bp_stats_get (bp_stats_init does): the struct grows
 * as bp_config does (docs/abi.md), and bp_stats_get writes only the
 * caller's size bytes. */
struct bp_stats {
	size_t size;              /* set by bp_stats_init; bp_stats_get sets
				   * it to the bytes it filled */
	/* configuration */
	uint32_t page_size;
	uint32_t nframes;
	uint32_t partitions;
	uint32_t io_threads;
	uint32_t io_engine;       /* enum bp_io_engine_kind: THREADS or URING */
	uint32_t io_depth;        /* io_uring queue depth; 0 for threads */
	enum fwait_policy policy;
	unsigned jemalloc_arena;  /* arena index holding the pool memory;
				   * BP_NO_ARENA in a build without jemalloc */
	size_t pool_bytes;        /* page memory + frame metadata */
	uint64_t file_pages;      /* current page count */
	/* counters */
	uint64_t hits;            /* bp_get found the page mapped */
	uint64_t misses;          /* bp_get had to read (or create) it */
	uint64_t reads;           /* page reads submitted (incl. readahead, retries) */
	uint64_t writes;          /* page writes submitted */
	uint64_t readaheads;      /* reads submitted by readahead */
	uint64_t read_ios;        /* read I/Os issued to the engine: fewer than
				   * reads when adjacent pages went as one
				   * (readv) or a miss read inline */
	uint64_t creates;         /* pages created zero-filled */
	uint64_t evictions;       /* frames taken from a page for reuse/eviction */
	uint64_t dirty_evictions; /* write-backs started by eviction */
	uint64_t bgwriter_writes; /* writes started by the background writer */
	uint64_t fsyncs;
	uint64_t read_errors;
	uint64_t write_errors;
	uint64_t fsync_errors;
	uint64_t checksum_errors; /* reads whose page failed its checksum (-EBADMSG) */
	uint64_t log_flushes;     /* flush_log calls (the write-ahead rule) */
	uint64_t durable_lsn;     /* the highest LSN the log is known durable up to */
	uint64_t oldest_dirty_lsn;/* bp_oldest_dirty_lsn at the snapshot; 0: none */
	int durability_err;       /* bp_durability_err: 0, or the sticky
				   * negative errno of the first failed fsync */
	uint64_t faults_injected;
	uint64_t busy;            /* bp_get calls that found no frame (-EBUSY) */
	uint64_t optimistic_reads;    /* bp_read_begin* calls that began a read
				       * (resident accesses besides hits) */
	uint64_t optimistic_restarts; /* bp_read_end calls that found it invalid */
	/* waits (each with a wait-time histogram) */
	struct bp_wait_hist io_wait;        /* on (frame, BP_LOCKED) */
	struct bp_wait_hist writeback_wait; /* on (frame, BP_WRITEBACK) */
	struct bp_wait_hist latch_shared_wait;
	struct bp_wait_hist latch_exclusive_wait;
	struct bp_wait_hist frame_wait;     /* bp_get_timed waiting for an unpin */
	/* snapshot of the frames */
	uint32_t frames_mapped;
	uint32_t frames_pinned;
	uint32_t frames_dirty;
	uint32_t frames_writeback;
	uint32_t frames_locked;
	/* the pool's wait table */
	struct fwait_stats fwait;
	/* Misses read by the faulting thread itself (bp_config.read_path):
	 * added after the fields above so that those keep their offsets. */
	uint64_t inline_reads;    /* reads done by the thread that missed (also
				   * counted in reads) */
	uint64_t inline_blocked;  /* BP_READ_CACHED: tries that would have
				   * blocked, sent to the engine (read_ios) */
	struct bp_wait_hist inline_read; /* duration of each inline read (the
					  * faulting thread's own, not a wait) */
	/* New fields go here, at the end. */
};

/* The first published layout of struct bp_stats: the fields through fwait
 * (those before inline_reads was added), the smallest size accepted. */
#define BP_STATS_SIZE_VER0 offsetof(struct bp_stats, inline_reads)

/* Zero *s and set s->size to this program's sizeof, as bp_config_init. */
static inline void bp_stats_init(struct bp_stats *s)
{
	memset(s, 0, sizeof *s);
	s->size = sizeof *s;
}

/* Fill *out (a consistent-enough snapshot: counters are read one by one,
 * relaxed, and order nothing), its first out->size bytes only: fields this
 * library does not know (a newer program's) are set to 0, and out->size
 * to the bytes the library filled, min(out->size, its own struct's).
 * -EINVAL for NULL or out->size below BP_STATS_SIZE_VER0 (0: bp_stats_init
 * not called); nothing is written then. */
int bp_stats_get(struct bp_pool *pool, struct bp_stats *out);
/* Zero the counters and histograms (and the fwait table's stats and the
 * per-frame wait times). */
int bp_stats_reset(struct bp_pool *pool);

/* A human table, one indented JSON object, or the same object on one line
 * (a JSON line, to embed in a tool's own records). */
enum bp_stats_format { BP_STATS_TABLE = 0, BP_STATS_JSON, BP_STATS_JSON_COMPACT };
/* Receives the report piece by piece, in order: text is NUL-terminated and
 * valid only during the call.  Return 0, or a negative errno to stop the
 * report (bp_stats_print then returns it).  E.g. for a FILE *:
 *     return fputs(text, (FILE *)arg) < 0 ? -EIO : 0;                     */
typedef int bp_write_cb(void *arg, const char *text);
/* One walk of *s through one emitter with three back-ends (as jemalloc's
 * malloc_stats_print with its write_cb): every format shows the same
 * items.  0, -EINVAL (NULL s or write, bad format, s->size below
 * BP_STATS_SIZE_VER0), -E2BIG (s->size past this library's struct with a
 * nonzero byte there), or write's error.  Reads only the first s->size
 * bytes of *s (a field past them shows as 0): no lock, no ordering with
 * the pool. */
int bp_stats_print(const struct bp_stats *s, bp_write_cb *write, void *arg,
		   enum bp_stats_format fmt);

/* Live statistics for another process: bpstat.  Off until called.
 * bp_stats_publish starts a thread of the pool that writes the pool's
 * statistics into a shared-memory file every BP_STATS_PUBLISH_PERIOD_MS:
 * the bp_stats counters, a heartbeat, and which pages threads waited on
 * longest in each period (per page, not per frame).  bpstat, from any
 * process of the same user, finds the file by pid or name and shows
 * per-interval figures; it says so when this process is gone.
 *   name   1 to 63 bytes, shown by bpstat; the file is
 *          /dev/shm/bufpool.<pid>.<name>, each byte of name outside
 *          [A-Za-z0-9._-] written as '_'.
 * The file goes away at bp_stats_unpublish, bp_close or bp_discard; if the
 * process dies first it stays, and bpstat reports it dead.  The thread
 * reads counters and frames without locks (as bp_stats_get and
 * bp_frames_walk) and prints nothing.  0; -EINVAL (NULL, empty or long
 * name); -EBUSY (this pool publishes already); -EEXIST (the file exists:
 * another pool of this process publishes under that name); -ENOMEM; or
 * the errno of creating the file or the thread. */
#define BP_STATS_PUBLISH_PERIOD_MS 100u
int bp_stats_publish(struct bp_pool *pool, const char *name);
/* As bp_stats_publish, into the file at path (on a file system whose files
 * can be mapped shared: /dev/shm, any tmpfs) instead of the default. */
int bp_stats_publish_file(struct bp_pool *pool, const char *name, const char *path);
/* Stop publishing, join the thread, remove the file.  0, -EINVAL (NULL),
 * -ENOENT (not publishing). */
int bp_stats_unpublish(struct bp_pool *pool);
/* The embedder's own count of operations done (any meaning: queries,
 * transactions), published with the next update; bpstat shows its rate as
 * ops/s.  Cheap (one relaxed store): call it as often as convenient.
 * 0, -EINVAL (NULL). */
int bp_stats_publish_ops(struct bp_pool *pool, uint64_t ops);

/* One frame, as pg_buffercache shows a buffer. */
struct bp_frame_info {
	uint32_t frame;          /* index */
	uint64_t pageno;         /* BP_NO_PAGE if unmapped */
	uint32_t file;           /* bp_file_id of its file (0: bp_open's) */
	uint32_t flags;          /* BP_F_* bits of the state word */
	uint32_t pins;
	uint32_t usage;          /* 1 if BP_REFERENCED */
	uint32_t latch_shared;   /* shared holders now */
	bool latch_exclusive;    /* held exclusive now */
	uint32_t latch_waiters;  /* threads queued on the latch */
	uint64_t wait_ns;        /* total ns threads waited on this frame */
};
/* Call fn for every frame (unlocked, racy snapshot of each).  Stops early and
 * returns fn's value if non-zero; else 0.  -EINVAL for NULL. */
int bp_frames_walk(struct bp_pool *pool,
		   int (*fn)(const struct bp_frame_info *info, void *arg), void *arg);
/* Fill out[0..n) with the frames of largest wait_ns (> 0), largest first.
 * Returns how many were filled, or -EINVAL. */
int bp_frames_hottest(struct bp_pool *pool, struct bp_frame_info *out, size_t n);
/* Write the BP_F_* names of flags ("LOCKED|DIRTY", or "-") into buf.
 * Returns the length written (truncated to len - 1), or -EINVAL. */
int bp_flags_format(uint32_t flags, char *buf, size_t len);

/* ---- Small accessors ----------------------------------------------------------- */

/* The pool's wait table (for stats, fwait_waiters_walk, tools); NULL for NULL. */
struct fwait_table *bp_fwait_table(struct bp_pool *pool);
uint32_t bp_page_size(const struct bp_pool *pool);   /* 0 for NULL */
/* The bytes of a page the caller may use: the page size, less
 * BP_CHECKSUM_BYTES with BP_OPEN_CHECKSUMS.  0 for NULL. */
uint32_t bp_data_size(const struct bp_pool *pool);
uint32_t bp_nframes(const struct bp_pool *pool);     /* 0 for NULL */
uint64_t bp_page_count(const struct bp_pool *pool);  /* pages in the file (incl. created) */

/* ---- Files: many per pool --------------------------------------------------- */

/* A pool serves any number of files (up to 4095 besides bp_open's): one
 * memory budget, one set of I/O threads and one wait table for all, a page
 * being (file, page number) in the page table, the frames and the reports
 * (PostgreSQL's buffer tag).  bp_open's file is the pool's file 0, and
 * every call above that takes a page number means a page of it. */
struct bp_file;

/* Open path as another file of the pool.  flags: BP_OPEN_CREATE,
 * BP_OPEN_TRUNCATE, BP_OPEN_READONLY (as bp_open's; the pool's
 * BP_OPEN_DIRECT and BP_OPEN_CHECKSUMS apply to every file).  *out is set
 * on success only.  -EINVAL (NULL, empty path, other flags, read-only with
 * create/truncate), -EROFS (a read-only pool), -EMFILE (4096 files open),
 * -ENOMEM, or the open/fstat errno.  Not to be called concurrently with
 * bp_close of the pool. */
int bp_file_open(struct bp_file **out, struct bp_pool *pool, const char *path, unsigned flags);
/* Write the file's dirty pages, wait, fsync it, drop its pages from the
 * pool and close it.  Freed only on 0.  -EBUSY (changes nothing, logs the
 * page) if a page of it is pinned; a write or fsync error (logged): the
 * file stays open, its unwritten pages dirty; after a failed fsync no
 * close can succeed (sticky, as bp_flush's): give up with
 * bp_file_discard.  -EINVAL for NULL or the pool's file 0 (bp_close closes
 * that).  No thread may use the file meanwhile or after. */
int bp_file_close(struct bp_file *file);
/* Drop the file's pages without writing them (dirty pages are lost), and
 * close it: for a file being deleted, or after a failed bp_file_close.
 * 0, -EBUSY (a page pinned), -EINVAL (NULL, file 0). */
int bp_file_discard(struct bp_file *file);
/* Truncate the file to npages pages: its pages from npages on are dropped
 * from the pool without being written (PostgreSQL's DropRelationBuffers,
 * then ftruncate), and its page count becomes npages.  For truncating or
 * emptying a relation (npages = 0).  0, -EBUSY (one of those pages is
 * pinned: nothing dropped), -EROFS, -EFBIG, -EINVAL, or ftruncate's
 * errno.  The caller must not use those pages meanwhile. */
int bp_file_truncate(struct bp_file *file, uint64_t npages);
/* The file bp_open opened (file 0); NULL for NULL. */
struct bp_file *bp_pool_file(struct bp_pool *pool);
/* bp_get, bp_get_timed, bp_new_page and bp_new_page_timed on a page of
 * file (same rules, errors and ordering; -EROFS for a read-only file). */
int bp_file_get(struct bp_file *file, uint64_t pageno, unsigned flags, struct bp_frame **frame);
int bp_file_get_timed(struct bp_file *file, uint64_t pageno, unsigned flags,
		      const struct timespec *deadline, struct bp_frame **frame);
int bp_file_new_page(struct bp_file *file, uint64_t *pageno, struct bp_frame **frame);
int bp_file_new_page_timed(struct bp_file *file, const struct timespec *deadline,
			   uint64_t *pageno, struct bp_frame **frame);
/* bp_evict_page on a page of file. */
int bp_file_evict_page(struct bp_file *file, uint64_t pageno);
/* Pages in the file, including created ones; 0 for NULL. */
uint64_t bp_file_page_count(const struct bp_file *file);
/* The file's id in the pool (0 for bp_open's), as bp_frame_info.file and
 * bp_frame_file_id show it; UINT32_MAX for NULL.  An id is reused once its
 * file is closed. */
uint32_t bp_file_id(const struct bp_file *file);
/* The id of the file whose page a pinned frame holds; UINT32_MAX for NULL. */
uint32_t bp_frame_file_id(const struct bp_frame *frame);
/* bp_durability_err for one file: 0, or its first failed fsync's negative
 * errno, until it is closed.  -EINVAL for NULL. */
int bp_file_durability_err(const struct bp_file *file);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif /* BUFPOOL_BUFPOOL_H */
