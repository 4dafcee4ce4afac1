/* SPDX-License-Identifier: MIT */
/*
 * kv.h - a small embedded key-value store: a B+-tree on bufpool pages.
 *
 * Design note
 * -----------
 * Layer: the store sits on bufpool (its public API, bufpool.h, and fwait's
 * deadline helper, nothing else); tools/bpbench sits on the store.  Every
 * name it exports, and every name of its internal header kv_node.h, starts
 * with kv_ (KV_ for macros).
 *
 * The example to copy when embedding the buffer pool.  Keys are uint64_t,
 * values have one fixed size chosen when the file is created.  Page 0 of the
 * file is the meta page (magic, geometry, root page number, tree height);
 * every other page is a B+-tree node.  Leaves are chained left to right for
 * range scans.  There are no deletes.
 *
 * Concurrency (latch coupling, "crabbing", on the pool's content latches):
 *   - readers and the writers' first try go down the inner nodes with
 *     optimistic reads (bp_read_begin: no pin, no latch), each child's
 *     read begun before its parent's is validated; a lookup reads its
 *     leaf so too, the others latch it; a read that fails validation
 *     starts again, and a page not resident or being written sends the
 *     operation down the latched path, which goes:
 *   - readers go down with shared latches, holding the parent until the
 *     child is latched;
 *   - writers first go down optimistically the same way, latching only the
 *     leaf exclusive; if the leaf is full they start again pessimistically:
 *     exclusive latches from the root down (the meta page shared, or
 *     exclusive when the root itself is full), releasing every ancestor as
 *     soon as the child is "safe" (not full, so a split cannot reach above
 *     it), then split bottom-up inside the latched path.
 * Latches are always taken top-down (meta, root, ..., leaf) and, on the leaf
 * level, left to right, so there is no deadlock.  See kv.c.
 *
 * Durability (kv_config.durable; kv_log.c, kv_recover.c): every change is
 * written to a redo log (<path>.wal, with its control file <path>.ctl)
 * before any page it touched can reach the file, through the pool's
 * write-ahead hook (bp_config.flush_log).  A change is durable once
 * kv_commit returns after it, or when kv_put/kv_upsert return with
 * sync_commit set; concurrent commits share one log fsync (group commit).
 * kv_open replays the log from the last checkpoint, so after a crash
 * (kill -9, or a power failure that drops or tears unsynced writes; both
 * tested by bpbench crashtest, the latter with --power-loss) the tree and
 * every durable change are back.  Without durable the store is as fast as
 * before and a crash may leave it torn.
 *
 * Thread safety: every function except kv_open/kv_close may be called from
 * any number of threads at once; kv_close must not race with other calls.
 * Functions return 0 (or a count) or a negative errno.
 */
#ifndef TOOLS_KV_KV_H
#define TOOLS_KV_KV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bufpool/bufpool.h"

#define KV_VALUE_SIZE_DEFAULT 100u
#define KV_VALUE_SIZE_MAX 1024u

struct kv_store;

/* Zero-initialise; every 0 means "default".  page_size/value_size matter
 * only when the file is created; an existing file must match them if set. */
struct kv_config {
	const char *path;        /* required */
	bool create;             /* create the file if absent */
	bool truncate;           /* start from an empty store */
	uint32_t value_size;     /* 8..KV_VALUE_SIZE_MAX; 0 = 100 (or the file's) */
	struct bp_config pool;   /* nframes, page_size, policy, io_latency_us...;
				  * size, path, the create/truncate flags
				  * and flush_log are set by kv_open; pool.log gets
				  * the store's own messages too (NULL: silent) */
	/* Durability (see above).  A store with a control file (<path>.ctl)
	 * is always recovered at kv_open, durable or not, so that a crashed
	 * durable run is never overwritten unlogged. */
	bool durable;            /* keep the redo log */
	bool sync_commit;        /* durable: kv_put/kv_upsert return only once
				  * their change is durable (an implicit
				  * kv_commit, group-committed) */
	uint64_t checkpoint_bytes; /* durable: checkpoint after this much log;
				    * 0 = KV_CHECKPOINT_BYTES_DEFAULT */
	/* Open the store as another file of this pool (bp_file_open) instead
	 * of a pool of its own, so that several stores share one memory
	 * budget, one set of I/O threads and one wait table; pool is then
	 * ignored, the pool must outlive the store, and kv_close closes only
	 * the file.  Not durable: -EINVAL with durable or for a store that
	 * has a log (the pool's write-ahead hook is its owner's). */
	struct bp_pool *shared_pool;
	/* Tests only: recover as before issue 28, trusting every log byte
	 * replay could read (kv_log_replay's trust_read), so that the
	 * power-loss test can show it catches that recovery. */
	bool break_recovery;
};
#define KV_CHECKPOINT_BYTES_DEFAULT (UINT64_C(64) << 20)

/* Open (or create) a store.  *out is set only on success.  -EINVAL for bad
 * arguments or a file that is not a store of this geometry (-EBADMSG), or
 * the error of bp_open.  An empty file with a log that was never used (the
 * first kv_open of the store, create or truncate, interrupted by a crash
 * before it returned) is formatted without create: it was being made an
 * empty store, and nothing in it was acknowledged.  Every change to the
 * store's files is reported to cfg->pool.io_trace, the log's included. */
int kv_open(struct kv_store **out, const struct kv_config *cfg);
/* Flush everything through bp_close and free the store (NULL is a no-op).
 * Returns 0 or the first write/fsync error; on an error the unwritten pages
 * are discarded (bp_discard), which is logged to the config's pool.log. */
int kv_close(struct kv_store *kv);

/* Make every change that returned before this call durable: on 0, each is
 * in the log on disk (written, then fdatasync returned 0), so a crash from
 * now on keeps it.  Concurrent calls share one fsync (group commit).
 * -EINVAL if the store is not durable; once a log write or fsync has
 * failed, that error from then on for changes not yet durable (sticky,
 * like the pool's: reopen to recover). */
int kv_commit(struct kv_store *kv);
/* A fuzzy checkpoint: write the pages the log has changed so far
 * (bp_checkpoint, readers and writers keep going), then record in the
 * control file where recovery starts, so the log before it is no longer
 * read (its disk space is freed where the file system can punch holes).
 * Runs by itself every checkpoint_bytes of log.  0, -EINVAL (not
 * durable), or the pool's or the control file's error (the previous
 * checkpoint still stands). */
int kv_checkpoint(struct kv_store *kv);

/* The redo log's counters since kv_open (all 0 for a store that is not
 * durable, except recovered_records). */
struct kv_log_stats {
	uint64_t records;           /* log records appended (one per change) */
	uint64_t bytes;             /* log bytes appended */
	uint64_t commits;           /* kv_commit calls and sync_commit changes */
	uint64_t fsyncs;            /* log fdatasync calls: commits / fsyncs is
				     * the group-commit factor */
	uint64_t checkpoints;       /* checkpoints completed */
	uint64_t recovered_records; /* records replayed by kv_open */
	uint64_t durable_lsn;       /* the log is on disk below this position */
};
/* Fill *out.  -EINVAL for NULL. */
int kv_log_stats(struct kv_store *kv, struct kv_log_stats *out);

/* Copy the value of key into value (value_size bytes).  0, -ENOENT, or an
 * I/O error of the pool. */
int kv_get(struct kv_store *kv, uint64_t key, void *value);
/* Insert or overwrite.  Returns 1 if the key was inserted, 0 if updated. */
int kv_put(struct kv_store *kv, uint64_t key, const void *value);
/* Insert or update in place: fill(value, existed, arg) runs with the leaf
 * latched exclusive, value holding the old value (if existed) to be
 * overwritten with the new one, so read-modify-write is atomic per key.
 * Returns 1 if inserted, 0 if updated. */
typedef void (*kv_fill_fn)(void *value, bool existed, void *arg);
int kv_upsert(struct kv_store *kv, uint64_t key, kv_fill_fn fill, void *arg);
/* Call fn for up to max keys >= start, in key order (fn's non-zero return
 * stops the scan).  Returns the number of keys visited or an error.  A scan
 * is not a snapshot: each leaf is read under its own shared latch. */
typedef int (*kv_scan_fn)(uint64_t key, const void *value, void *arg);
int kv_scan(struct kv_store *kv, uint64_t start, size_t max, kv_scan_fn fn, void *arg);

/* The result of a structure check. */
struct kv_check_info {
	uint64_t nkeys;
	uint64_t leaves;
	uint64_t internal;
	unsigned height;        /* levels above the leaves */
	char error[192];        /* why the check failed, "" if it passed */
};
/* Walk the whole tree (call it while no writer runs): keys sorted and within
 * their parent's bounds, all leaves at one depth, the leaf chain visiting
 * exactly the leaves the tree reaches, in order.  0, -EBADMSG (see
 * info->error) or an I/O error. */
int kv_check(struct kv_store *kv, struct kv_check_info *info);

uint32_t kv_value_size(const struct kv_store *kv);
struct bp_pool *kv_pool(struct kv_store *kv);

#endif
