/* SPDX-License-Identifier: MIT */
/*
 * kv_recover.c - redo: apply one logged part to its page (kv_open runs
 * kv_log_replay with it).
 *
 * Design note
 * -----------
 * Layer: on the tree's page helpers (kv_node.h) and bufpool; kv_open.c
 * calls it.  Single-threaded: recovery runs inside kv_open, before the
 * store is handed to anyone, so the latches taken here only keep the
 * pool's write-back out of a page while it changes.
 *
 * The redo rule (ARIES), for UPSERT parts: a page whose LSN is at or
 * above the record's already holds the record's change (the page was
 * written after it), so it is left alone; otherwise the part is applied
 * and the page takes the record's LSN.  A page is changed by records in
 * log order, and a page with LSN L holds exactly the changes of records up
 * to L, so an UPSERT replays on the state it was logged on.  An IMAGE is
 * applied whatever the page's LSN (as PostgreSQL restores a full-page
 * image): it sets the page to its state at the record, and every later
 * change of the page follows it in the log, so replay ends in the same
 * state, even when the page on disk is newer or torn.  Every page changed
 * since the redo position has an image first (full page writes,
 * kv_log.c), so a torn page is rebuilt before any UPSERT reads it.  Pages past the end of the file
 * (created after the last write of the file) are created zero-filled:
 * their LSN 0 is below every record.
 */
#include "kv_node.h"

#include <errno.h>
#include <string.h>

/* Redo an UPSERT on a leaf that holds the state the record was logged on;
 * -EBADMSG if it cannot be that state. */
static int redo_upsert(struct kv_store *kv, struct bp_frame *f, uint64_t key, const void *value)
{
	const struct kv_node_hdr *h = kv_hdr_of(f);
	if (h->level != 0 || h->nkeys > kv->leaf_cap)
		return -EBADMSG;
	unsigned pos = kv_lower_bound(kv_keys_of(f), h->nkeys, key);
	uint8_t *v;
	if (pos < h->nkeys && kv_keys_of(f)[pos] == key)
		v = kv_value_at(kv, f, pos);
	else if (h->nkeys < kv->leaf_cap)
		v = kv_leaf_open_slot(kv, f, pos, key);
	else
		return -EBADMSG; /* logged on a leaf that had room */
	memcpy(v, value, kv->value_size);
	return 0;
}

int kv_recover_apply(void *arg, uint64_t lsn, const struct kv_log_part *part)
{
	struct kv_store *kv = arg;
	struct bp_frame *f;
	bool image = part->type == KV_LOG_IMAGE;
	/* An image replaces the page whatever is on disk, so it is not read
	 * (a page torn by a power failure may not even pass its checksum). */
	int rc = bp_file_get(kv->file, part->pageno,
			(image ? BP_GET_OVERWRITE : BP_GET_CREATE) | BP_GET_NOREADAHEAD, &f);
	if (rc)
		return rc;
	bp_latch(kv->pool, f, BP_LATCH_EXCLUSIVE);
	uint64_t page_lsn;
	memcpy(&page_lsn, bp_data(f), sizeof(page_lsn));
	if (image || page_lsn < lsn) {
		if (image) /* the image carries lsn itself */
			memcpy(bp_data(f), part->data, bp_data_size(kv->pool));
		else
			rc = redo_upsert(kv, f, part->key, part->value);
		if (rc == 0) {
			memcpy(bp_data(f), &lsn, sizeof(lsn));
			rc = bp_mark_dirty_lsn(kv->pool, f, lsn);
		}
	}
	bp_unlatch(kv->pool, f, BP_LATCH_EXCLUSIVE);
	bp_release(kv->pool, f);
	return rc;
}
