/* SPDX-License-Identifier: MIT */
/*
 * kv_open.c - open (format or load, with recovery first) and close of the
 * kv store.
 *
 * Design note
 * -----------
 * Layer: the top of the store: on the tree (kv.c's change helpers), the
 * log (kv_log.c) and recovery (kv_recover.c).
 *
 * kv_open, in order:
 *   1. open the pool (its flush_log is the log's, when durable);
 *   2. if the store has a log (a control file; always when durable):
 *      open it; with truncate, the new log's control file records the
 *      truncation's intent before anything else changes (kv_log.c,
 *      start_log), and the store file is emptied only then, here and by
 *      every open that finds the intent, until step 4 ends it: a power
 *      failure can then neither bring old pages back under the new log
 *      (the redo rule would skip new records on pages with higher LSNs)
 *      nor leave an empty file under the old log; then replay from the
 *      redo position: the pages come back to their state at the last
 *      durable record (kv_recover.c);
 *   3. format an empty file (logged, when durable) or load the meta page;
 *      an empty file is formatted without create too when its log was
 *      never used (at the first position, or under a truncation's
 *      intent, and nothing replayed): a first or truncating kv_open cut
 *      short by a crash, which acknowledged nothing of the new store;
 *   4. with a log: write every page (bp_flush) and start the log afresh
 *      at its end (kv_log_reset), so the next recovery reads nothing of
 *      this one.  A crash anywhere in 1-4 recovers again, from the same
 *      control file: replay is idempotent (the redo rule).
 * kv_close writes every page (bp_close, which flushes the log first as the
 * write-ahead rule asks) and then resets the log the same way; if the close
 * fails the log is kept, and the next kv_open recovers from it.
 */
#include "kv.h"
#include "kv_node.h"
#include "kv_log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Node capacities for this page and value size; -EINVAL if too small. */
static int set_geometry(struct kv_store *kv)
{
	/* bp_data_size: with BP_OPEN_CHECKSUMS the page's trailer is the pool's. */
	uint32_t body = bp_data_size(kv->pool) - (uint32_t)sizeof(struct kv_node_hdr);
	kv->leaf_cap = body / (uint32_t)(sizeof(uint64_t) + kv->value_size);
	kv->inner_cap = (body - (uint32_t)sizeof(uint64_t)) / (2 * (uint32_t)sizeof(uint64_t));
	return kv->leaf_cap < 4 || kv->inner_cap > UINT16_MAX ? -EINVAL : 0;
}

/* The meta page and an empty root leaf, as one change. */
static int format_store(struct kv_store *kv)
{
	struct kv_change ch = {0};
	struct bp_frame *rf;
	uint64_t meta_page, root_page, end;
	int rc = bp_file_new_page(kv->file, &meta_page, &kv->meta);
	if (rc)
		return rc;
	rc = meta_page == 0 ? kv_new_node(kv, &ch, 0, &root_page, &rf) : -EBADMSG;
	if (rc)
		return rc;
	bp_latch(kv->pool, kv->meta, BP_LATCH_EXCLUSIVE);
	struct kv_meta *m = bp_data(kv->meta);
	*m = (struct kv_meta){.magic = KV_MAGIC, .page_size = bp_page_size(kv->pool),
			      .value_size = kv->value_size, .root = root_page};
	kv_change_page(kv, &ch, kv->meta);
	kv_change_page(kv, &ch, rf);
	rc = kv_change_finish(kv, &ch, &end);
	bp_unlatch(kv->pool, kv->meta, BP_LATCH_EXCLUSIVE);
	return rc;
}

static int load_meta(struct kv_store *kv, uint32_t want_value_size)
{
	int rc = bp_file_get(kv->file, 0, 0, &kv->meta);
	if (rc)
		return rc;
	bp_latch(kv->pool, kv->meta, BP_LATCH_SHARED);
	const struct kv_meta *m = bp_data(kv->meta);
	if (m->magic != KV_MAGIC || m->page_size != bp_page_size(kv->pool) ||
	    (want_value_size && m->value_size != want_value_size) || m->value_size < 8 ||
	    m->value_size > KV_VALUE_SIZE_MAX || m->height >= KV_MAX_HEIGHT ||
	    m->root == 0 || m->root >= bp_file_page_count(kv->file))
		rc = -EBADMSG;
	kv->value_size = m->value_size;
	bp_unlatch(kv->pool, kv->meta, BP_LATCH_SHARED);
	return rc;
}

/* The pool's write-ahead hook: the store's log, while it has one. */
static int flush_log(void *arg, uint64_t lsn, uint64_t *durable)
{
	struct kv_store *kv = arg;
	if (!kv->log) { /* unreachable: no page has an LSN without a log */
		*durable = lsn;
		return 0;
	}
	return kv_log_flush_for_pool(kv->log, lsn, durable);
}

/* Steps 2 and 3 of kv_open (see the design note); log may be NULL. */
static int recover_and_load(struct kv_store *kv, struct kv_log *log, const struct kv_config *cfg)
{
	int rc = 0;
	if (log) {
		kv->value_size = kv_log_value_size(log);
		rc = set_geometry(kv) ? -EBADMSG : 0;
		if (rc == 0)
			rc = kv_log_replay(log, kv_recover_apply, kv, cfg->break_recovery,
					   &kv->recovered_records);
		if (rc)
			return rc;
	}
	bool fresh = bp_file_page_count(kv->file) == 0;
	kv->value_size = cfg->value_size ? cfg->value_size : KV_VALUE_SIZE_DEFAULT;
	if (fresh && !cfg->create && !cfg->truncate && !(log && kv_log_unused(log)))
		return -EBADMSG; /* an empty file we were not asked to format */
	if (fresh)
		return set_geometry(kv) ? -EINVAL : format_store(kv);
	if ((rc = load_meta(kv, cfg->value_size)) == 0)
		rc = set_geometry(kv) ? -EBADMSG : 0;
	return rc;
}

/* Step 4: everything replayed (and formatted) on disk, the log empty. */
static int settle_log(struct kv_store *kv, struct kv_log *log)
{
	int rc = bp_flush(kv->pool);
	return rc ? rc : kv_log_reset(log, kv->value_size);
}

/* Close the store's pool, or its file in a shared pool; on a failure,
 * discard what is left unwritten (the log, if any, keeps it).  0 or the
 * close's error. */
static int close_file(struct kv_store *kv)
{
	int rc = 0;
	if (kv->own_pool) {
		rc = bp_close(kv->pool);
		if (rc < 0)
			bp_discard(kv->pool); /* bp_close left it open */
	} else if (kv->file) {
		rc = bp_file_close(kv->file);
		if (rc < 0)
			bp_file_discard(kv->file);
	}
	return rc;
}

int kv_open(struct kv_store **out, const struct kv_config *cfg)
{
	if (!out || !cfg || !cfg->path ||
	    (cfg->value_size && (cfg->value_size < 8 || cfg->value_size > KV_VALUE_SIZE_MAX)) ||
	    (cfg->sync_commit && !cfg->durable))
		return -EINVAL;
	struct kv_store *kv = calloc(1, sizeof(*kv));
	if (!kv)
		return -ENOMEM;
	kv->log_fn = cfg->pool.log;
	kv->log_arg = cfg->pool.log_arg;
	kv->sync_commit = cfg->sync_commit;
	kv->checkpoint_bytes = cfg->checkpoint_bytes ? cfg->checkpoint_bytes
						     : KV_CHECKPOINT_BYTES_DEFAULT;
	pthread_mutex_init(&kv->checkpoint_lock, NULL);
	struct kv_log *log = NULL;
	/* A store with a log is truncated under the log's intent (step 2),
	 * not by the open's O_TRUNC. */
	bool logged = cfg->durable || kv_log_exists(cfg->path);
	unsigned oflags = (cfg->create ? BP_OPEN_CREATE : 0) |
			  (cfg->truncate && !logged ? BP_OPEN_TRUNCATE : 0);
	int rc;
	if (cfg->shared_pool) {
		/* Another file of a pool someone else owns: its flush_log is
		 * not ours, so no log (and no store that has one). */
		kv->pool = cfg->shared_pool;
		rc = logged ? -EINVAL : bp_file_open(&kv->file, kv->pool, cfg->path, oflags);
	} else {
		struct bp_config pc = cfg->pool;
		/* kv_config stays zero-initialised (kv.h): kv and bufpool are
		 * one build, so the size is this one's. */
		pc.size = sizeof pc;
		pc.path = cfg->path;
		pc.flags |= oflags;
		pc.flush_log = flush_log;
		pc.flush_log_arg = kv;
		rc = bp_open(&kv->pool, &pc);
		kv->own_pool = rc == 0;
		kv->file = bp_pool_file(kv->pool);
	}
	/* A store with a log is recovered, durable or not: a crashed durable
	 * run must not be changed unlogged and replayed over later. */
	if (rc == 0 && logged)
		rc = kv_log_open(&log, cfg->path, cfg->truncate, bp_data_size(kv->pool),
				 cfg->value_size ? cfg->value_size : KV_VALUE_SIZE_DEFAULT,
				 cfg->pool.io_trace, cfg->pool.io_trace_arg);
	if (rc == 0 && log)
		kv_log_set_pool(log, kv->pool);
	if (rc == 0 && log && kv_log_truncating(log)) /* step 2 */
		rc = bp_file_truncate(kv->file, 0);
	/* Set before any page has an LSN, so the pool's I/O threads, which
	 * call flush_log only for such pages, see it (the page's dirtying
	 * orders it before their write-back). */
	kv->log = log;
	if (rc == 0)
		rc = recover_and_load(kv, log, cfg);
	if (rc == 0 && log)
		rc = settle_log(kv, log);
	if (rc == 0 && !cfg->durable && log) {
		/* Recovered and settled: every page with an LSN is written and
		 * the pool knows the log durable past them all, so it never
		 * calls flush_log again. */
		kv->log = NULL;
		kv_log_close(log);
		log = NULL;
	}
	if (rc) {
		if (kv->meta)
			bp_release(kv->pool, kv->meta);
		close_file(kv);
		kv_log_close(log);
		pthread_mutex_destroy(&kv->checkpoint_lock);
		free(kv);
		return rc;
	}
	const struct kv_meta *m = bp_data(kv->meta); /* no other thread has kv yet */
	atomic_init(&kv->root_word, KV_ROOT_WORD(m->root, m->height));
	atomic_init(&kv->next_checkpoint, log ? kv_log_end(log) + kv->checkpoint_bytes : UINT64_MAX);
	atomic_init(&kv->next_flush, log ? kv_log_end(log) + KV_LOG_FLUSH_BYTES : UINT64_MAX);
	*out = kv;
	return 0;
}

int kv_close(struct kv_store *kv)
{
	if (!kv)
		return 0;
	bp_release(kv->pool, kv->meta);
	int rc = close_file(kv);
	if (rc < 0 && kv->log_fn) {
		/* The store has no stream of its own either: its one message
		 * goes where the pool's go. */
		char msg[160];
		snprintf(msg, sizeof(msg), "kv_close: close failed (%s): unwritten pages discarded%s",
			 strerror(-rc), kv->log ? "; the log is kept for recovery" : "");
		kv->log_fn(kv->log_arg, BP_LOG_ERROR, msg);
	}
	if (rc == 0 && kv->log) /* every page is on disk: the log is done */
		rc = kv_log_reset(kv->log, kv->value_size);
	kv_log_close(kv->log);
	pthread_mutex_destroy(&kv->checkpoint_lock);
	free(kv);
	return rc;
}
