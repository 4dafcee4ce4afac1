/* SPDX-License-Identifier: MIT */
/*
 * kv_log.h - the kv store's redo log (internal to tools/kv).
 *
 * Design note
 * -----------
 * Layer: the bottom of the store: on bufpool's public API (it marks the
 * pages it logs dirty) and util's CRC-32C; kv_recover.c and kv.c call it,
 * it calls neither.  It knows one thing of the page layout: every page of
 * the store begins with its page LSN, a uint64_t (kv_node.h).
 *
 * Positions.  The log is one stream of bytes; a position names a byte of
 * it and only grows.  A record's LSN is the position of its first byte,
 * so a page's LSN is the start of the last record that changed it, and
 * "replay every record at or after R" is exact.  The file <path>.wal holds
 * the stream from position base on (file offset = position - base); the
 * control file <path>.ctl holds base and the redo position (where
 * recovery starts), replaced atomically (write a temporary, fsync,
 * rename, fsync the directory).  Positions start at 1: LSN 0 means "none"
 * to the pool.
 *
 * Durability.  Records are copied into an in-memory buffer under the log
 * mutex; kv_log_flush writes and fdatasyncs everything buffered.  One
 * flusher at a time: it swaps the buffer for the spare, writes outside the
 * mutex, and the threads that wanted the same or less wait for it; those
 * that wanted more flush next, together (group commit).  durable is
 * always a record boundary: every record below it is whole on disk.  The
 * pool's write-ahead rule asks for a page's LSN L; the record starting at
 * L is durable once durable > L, so the store reports durable - 1 to the
 * pool (kv_log_pool_durable).
 *
 * Lock: mu guards every field below it in struct kv_log (kv_log.c); the
 * flusher owns the spare buffer while flushing is set.  A failed write or
 * fsync is sticky (err): nothing after it is ever called durable.
 */
#ifndef TOOLS_KV_KV_LOG_H
#define TOOLS_KV_KV_LOG_H

#include <stdbool.h>
#include <stdint.h>

#include "bufpool/bufpool.h"

struct kv_log;

enum kv_log_part_type {
	KV_LOG_IMAGE = 1,  /* the page's whole data (bp_data_size bytes) */
	KV_LOG_UPSERT = 2, /* in a leaf: insert key, or overwrite its value */
};

/* One page's share of a record.  For kv_log_append: frame is the page,
 * pinned and latched exclusive by the caller, already changed; data its
 * bytes; key and value (value_size bytes, inside the page) for UPSERT.
 * For replay: frame is NULL, data points into the record. */
struct kv_log_part {
	enum kv_log_part_type type;
	uint64_t pageno;
	struct bp_frame *frame;
	const void *data;    /* IMAGE: the page's data */
	uint64_t key;        /* UPSERT */
	const void *value;   /* UPSERT */
};

/* Without sync_commit, a writer flushes the log once this much is
 * buffered, so the buffer does not grow with the time between commits. */
#define KV_LOG_FLUSH_BYTES (UINT64_C(8) << 20)

/* The most parts of one record: a split of every level plus a new root and
 * the meta page (kv.c's change set is this size). */
#define KV_LOG_MAX_PARTS 40u

/* Open the log of the store at path (<path>.wal, <path>.ctl).  A missing
 * control file starts an empty log (an old .wal is cut to nothing first)
 * for records of value_size; truncate (the store is being emptied) starts
 * one whatever was there, recording the truncation's intent in the
 * control file first (kv_log_truncating; kv_log.c's start_log says why);
 * otherwise the control file's value size is kept (kv_log_value_size) and
 * its page size must be page_bytes (the pool's bp_data_size), else
 * -EBADMSG.  The pool's
 * flush_log is set up by the caller to kv_log_flush_for_pool with this
 * log.  Every change to the log's files is reported to trace_fn (NULL:
 * none), as bufpool.h's "I/O tracing" describes.  0 or a negative errno. */
int kv_log_open(struct kv_log **out, const char *path, bool truncate, uint32_t page_bytes,
		uint32_t value_size, bp_io_trace_fn trace_fn, void *trace_arg);
void kv_log_close(struct kv_log *log);
/* Whether the store at path has a log (its control file exists). */
bool kv_log_exists(const char *path);
/* The pool whose frames appends mark dirty (set once, before any append). */
void kv_log_set_pool(struct kv_log *log, struct bp_pool *pool);

/* Append one record of n parts (1..KV_LOG_MAX_PARTS).  Under the log
 * mutex: an UPSERT part of a page not logged since the latest checkpoint
 * began becomes an IMAGE (full page writes: see kv_log.c), the record
 * gets LSN *lsn = the current end, every part's page gets it as its page
 * LSN (its first 8 bytes) and is marked dirty with bp_mark_dirty_lsn.  Dirtying inside the mutex is what makes a
 * checkpoint exact: kv_log_end read by a checkpoint after this returns
 * covers the record, and the checkpoint's scan of dirty pages, which
 * starts after that read, finds these pages dirty (the mutex orders the
 * dirtying before it).  *end = the position after the record (what to
 * pass to kv_log_flush to make it durable).  0, -ENOMEM, -EINVAL. */
int kv_log_append(struct kv_log *log, struct kv_log_part *parts, unsigned n,
		  uint64_t *lsn, uint64_t *end);
/* Make every record below end durable (group commit: joins a flush in
 * progress, or writes and fdatasyncs everything buffered); an end past the
 * log's (UINT64_MAX) means every record appended before the call.  commit
 * counts one commit, under the same lock; *durable (if not NULL) gets the
 * durable position as the call returns.  0 once durable >= end, else the
 * sticky error of a failed write or fsync. */
int kv_log_flush(struct kv_log *log, uint64_t end, bool commit, uint64_t *durable);
/* The pool's bp_config.flush_log: the record at lsn made durable; *durable
 * is the highest LSN the pool may write without asking again. */
int kv_log_flush_for_pool(void *log, uint64_t lsn, uint64_t *durable);
/* A checkpoint starts: the current end, which it will write up to; from
 * now on the first change of every page last logged below it is an
 * image. */
uint64_t kv_log_begin_checkpoint(struct kv_log *log);
/* The current end position (the LSN the next record gets). */
uint64_t kv_log_end(struct kv_log *log);

/* Record redo as where recovery starts (the control file), then free the
 * file's space below it where the file system can.  0 or a negative errno
 * (the old control file stands). */
int kv_log_set_redo(struct kv_log *log, uint64_t redo);
/* Whether the store is being truncated (a truncating kv_open has not
 * finished): its file must be emptied before replay; the next
 * kv_log_reset, once every page is on disk, ends it. */
bool kv_log_truncating(const struct kv_log *log);
/* Whether the log was never used: it starts at the first position, or a
 * truncation, and holds no record (after kv_log_replay: none was found). */
bool kv_log_unused(struct kv_log *log);
/* The value size of UPSERT parts (what kv_log_replay reads). */
uint32_t kv_log_value_size(const struct kv_log *log);
/* Everything logged is in pages on disk: start the file afresh at the
 * current end (control file first: base = redo = end, the store's
 * value_size from now on, no truncation pending; then the .wal cut to
 * nothing).  Call with no
 * appender running.  0 or a negative errno. */
int kv_log_reset(struct kv_log *log, uint32_t value_size);

/* Replay: find the whole records from the redo position on, up to the
 * first that is incomplete or fails its CRC (the torn tail of a crash);
 * write them back, cut the file there and sync it, so that they are
 * durable before anything is applied (kv_log.c: "Recovery trusts no byte
 * it merely read"); then call apply for every part of every one, in log
 * order, with the record's LSN, and continue the log from the end.
 * trust_read (kv_config.break_recovery, tests only) restores the old,
 * wrong replay: records are called durable as they are read and applied
 * at once, and the file is synced only at the end.  Call once, right
 * after kv_log_open, before any append.  *records = the records replayed.
 * 0, the first non-zero return of apply, or an I/O error. */
typedef int (*kv_log_apply_fn)(void *arg, uint64_t lsn, const struct kv_log_part *part);
int kv_log_replay(struct kv_log *log, kv_log_apply_fn apply, void *arg, bool trust_read,
		  uint64_t *records);

/* Counters (kv.h's struct kv_log_stats; recovered_records is kv_open's). */
struct kv_log_stats;
void kv_log_get_stats(struct kv_log *log, struct kv_log_stats *out);
/* Count one completed checkpoint. */
void kv_log_count_checkpoint(struct kv_log *log);

#endif
