/* SPDX-License-Identifier: MIT */
/*
 * kv.c - a B+-tree key-value store on bufpool pages (see kv.h): lookups,
 * scans, inserts with splits, commits and checkpoints.  The page layout is
 * in kv_node.h, the log in kv_log.c, recovery in kv_recover.c, open and
 * close in kv_open.c, the structure check in kv_check.c.
 *
 * Design note
 * -----------
 * Layer: the tree, on the log (kv_log.h) and bufpool; kv_open.c and
 * kv_recover.c sit on it.
 *
 * Latches (every page's content is guarded by its pool content latch; the
 * meta page's latch guards root and height):
 *   - read a node under a shared latch, change it under an exclusive one,
 *     then log the change (kv_change_finish: one record for all the pages
 *     of one operation, each stamped with its LSN and marked dirty) before
 *     unlatching any of them, so no one sees, and the pool writes, no page
 *     of a change before the change has its place in the log;
 *   - a commit (sync_commit) waits for the log only after every latch is
 *     released: no latch is held across an fsync;
 *   - descents couple latches: the child is latched before the parent is
 *     released ("crabbing"), so a node seen through its parent cannot be
 *     split away in between; the optimistic descents (below) couple reads
 *     the same way: the child's read begins (or its latch is taken) before
 *     the parent's read is validated;
 *   - order: meta, then down the tree, then (scans only) rightwards along
 *     the leaf chain; writers never latch a sibling except the page they
 *     just created (unreachable until linked), so waits form no cycle.
 * Inserts are optimistic first (shared latches down, the leaf exclusive);
 * only a full leaf sends them down again with exclusive latches, releasing
 * the ancestors of every node that is not full ("safe").
 * A scan releases a leaf before latching its right neighbour: keys only ever
 * move right (a split moves the upper half into a new right sibling) and
 * nothing is deleted, so following hdr.next with a "> last key" bound sees
 * every key that existed when the scan started, once.
 */
#include "kv.h"
#include "kv_node.h"
#include "kv_log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Pinning and latching ------------------------------------------------- */

/* How long a pin or a new page waits for a frame when every frame is
 * pinned (a pool small against the threads' pins, or a pinning thread
 * descheduled on a loaded machine) before the operation fails -EBUSY. */
#define KV_FRAME_WAIT_NS UINT64_C(10000000000)

int kv_node_pin_latch(struct kv_store *kv, uint64_t pageno, enum bp_latch_mode mode,
		      struct bp_frame **out)
{
	/* Page 0 is the meta page, never a node: a damaged file, or a child
	 * number read from a torn page (a frame being zeroed for a new node)
	 * before its read was validated.  Refused before pinning: its magic
	 * read as a key count already fails the check below, but the meta
	 * page is not to be latched as a node, nor unpinned as one
	 * (kv_node_unlatch_unpin keeps its store-long pin). */
	if (pageno == KV_NO_PAGE)
		return -EBADMSG;
	int rc = bp_file_get(kv->file, pageno, 0, out);
	if (rc == -EBUSY) { /* every frame pinned right now: wait a while */
		struct timespec dl = fwait_deadline_after_ns(KV_FRAME_WAIT_NS);
		rc = bp_file_get_timed(kv->file, pageno, 0, &dl, out);
	}
	if (rc)
		return rc;
	rc = bp_latch(kv->pool, *out, mode);
	if (rc == 0 && kv_hdr_of(*out)->nkeys > kv_node_cap(kv, *out))
		rc = -EBADMSG; /* not a node of this store */
	if (rc) {
		if (rc == -EBADMSG)
			bp_unlatch(kv->pool, *out, mode);
		bp_release(kv->pool, *out);
	}
	return rc;
}

void kv_node_unlatch_unpin(struct kv_store *kv, struct bp_frame *f, enum bp_latch_mode mode)
{
	bp_unlatch(kv->pool, f, mode);
	if (f != kv->meta)
		bp_release(kv->pool, f);
}

/* ---- Changes ---------------------------------------------------------------- */

/* A fresh page, pinned and latched exclusive, as a node of this level; it
 * joins the change c, which unlatches and unpins it when done. */
int kv_new_node(struct kv_store *kv, struct kv_change *c, unsigned level, uint64_t *pageno,
		struct bp_frame **out)
{
	if (c->nfresh == KV_LOG_MAX_PARTS)
		return -EFBIG;
	int rc = bp_file_new_page(kv->file, pageno, out);
	if (rc == -EBUSY) { /* every frame pinned right now: wait a while */
		struct timespec dl = fwait_deadline_after_ns(KV_FRAME_WAIT_NS);
		rc = bp_file_new_page_timed(kv->file, &dl, pageno, out);
	}
	if (rc)
		return rc;
	bp_latch(kv->pool, *out, BP_LATCH_EXCLUSIVE);
	memset(bp_data(*out), 0, bp_page_size(kv->pool));
	kv_hdr_of(*out)->level = (uint16_t)level;
	c->fresh[c->nfresh++] = *out;
	return 0;
}

/* Page f (latched exclusive) was changed as a whole: log its image. */
void kv_change_page(struct kv_store *kv, struct kv_change *c, struct bp_frame *f)
{
	for (unsigned i = 0; i < c->n; i++)
		if (c->parts[i].frame == f) {
			c->parts[i].type = KV_LOG_IMAGE; /* an upsert grew into more */
			c->parts[i].data = bp_data(f);
			return;
		}
	/* Bounded: a change touches at most two pages a level, a root and
	 * the meta page, which KV_LOG_MAX_PARTS covers (KV_MAX_HEIGHT). */
	c->parts[c->n++] = (struct kv_log_part){.type = KV_LOG_IMAGE, .frame = f,
						.pageno = bp_frame_pageno(f), .data = bp_data(f)};
}

/* Slot pos of leaf f got key's new value: log just that. */
static void change_upsert(struct kv_change *c, struct bp_frame *f, uint64_t key, const void *value)
{
	c->parts[c->n++] = (struct kv_log_part){.type = KV_LOG_UPSERT, .frame = f,
						.pageno = bp_frame_pageno(f), .key = key,
						.value = value};
}

/* Log the change (every page gets its LSN and is marked dirty) or, with no
 * log, mark its pages dirty; then unlatch and unpin its fresh pages.  The
 * caller still holds the latches of the others: it unlatches them after
 * this, so no page of the change is seen without its LSN.  *end: the log
 * position to flush for this change to be durable (0: no log). */
int kv_change_finish(struct kv_store *kv, struct kv_change *c, uint64_t *end)
{
	int rc = 0;
	uint64_t lsn;
	*end = 0;
	if (c->n && kv->log)
		rc = kv_log_append(kv->log, c->parts, c->n, &lsn, end);
	else
		for (unsigned i = 0; i < c->n; i++)
			bp_mark_dirty(kv->pool, c->parts[i].frame);
	for (unsigned i = 0; i < c->nfresh; i++)
		kv_node_unlatch_unpin(kv, c->fresh[i], BP_LATCH_EXCLUSIVE);
	c->n = c->nfresh = 0;
	return rc;
}

/* After a change, with no latch held: the commit of sync_commit, a
 * checkpoint when the log has grown by checkpoint_bytes. */
static int after_change(struct kv_store *kv, uint64_t end)
{
	if (!kv->log || end == 0)
		return 0;
	int rc = 0;
	if (kv->sync_commit) {
		rc = kv_log_flush(kv->log, end, true, NULL);
	} else if (end >= atomic_load_explicit(&kv->next_flush, memory_order_relaxed)) {
		/* Nobody commits: keep the buffer to KV_LOG_FLUSH_BYTES or so.
		 * Relaxed: a few writers may flush together, which is fine. */
		atomic_store_explicit(&kv->next_flush, end + KV_LOG_FLUSH_BYTES,
				      memory_order_relaxed);
		rc = kv_log_flush(kv->log, end, false, NULL);
	}
	/* Relaxed: a trigger, not a guard; checkpoint_lock serialises them
	 * and a stale read only moves one checkpoint by a change or two. */
	if (end >= atomic_load_explicit(&kv->next_checkpoint, memory_order_relaxed) &&
	    pthread_mutex_trylock(&kv->checkpoint_lock) == 0) {
		/* A failed checkpoint leaves the previous one standing; the
		 * change itself is logged, so it is not this caller's error. */
		(void)kv_checkpoint_locked(kv);
		pthread_mutex_unlock(&kv->checkpoint_lock);
	}
	return rc;
}

/* ---- Optimistic descents ----------------------------------------------------
 *
 * Readers and the optimistic insert go down the inner nodes with
 * optimistic reads (bp_read_begin: no pin, no latch, nothing written),
 * starting from the root that kv->root_word names instead of a read of the
 * meta page (opt_descend says why that is safe), coupling as the latches
 * do: the child's read begins before the parent's ends, and the parent's
 * end validates the child page number that was read from it.  kv_get reads
 * its leaf optimistically too; the others pin and latch the leaf, then
 * validate its parent.  What is read from a page before its read ends may
 * be torn: every count is
 * bounded by the node's capacity before use and read once (KV_ONCE), so
 * the binary searches stay inside the page, and nothing read is trusted
 * until the read validates.  A read that does not validate restarts the
 * descent; a page not resident or held exclusive (bp_read_begin's -ENOENT
 * or -EBUSY), or OPT_TRIES failed descents, send the operation down the
 * latched path ("crabbing", below), which reads pages in and waits. */
#define OPT_TRIES 4
#define KV_ONCE(x) (*(const volatile __typeof__(x) *)&(x))

enum { OPT_DONE = 0, OPT_RESTART = 1, OPT_LATCHED = 2 };

/* Begin the optimistic read of page, then end the read of its parent:
 * OPT_DONE (*rd is the page's read), OPT_RESTART (the parent changed), or
 * OPT_LATCHED (the page cannot be read optimistically now). */
static int opt_step(struct kv_store *kv, struct bp_read *parent, uint64_t page,
		    struct bp_read *rd)
{
	int r = bp_file_read_begin(kv->file, page, rd);
	if (bp_read_end(parent) != 0) {
		if (r == 0)
			bp_read_end(rd);
		return OPT_RESTART;
	}
	return r == 0 ? OPT_DONE : OPT_LATCHED;
}

/* Down to the node of level stop on key's path, optimistically: on
 * OPT_DONE, *rd is that node's open read, checked to be a node of that
 * level with a sane key count (*n). */
static int opt_descend(struct kv_store *kv, uint64_t key, unsigned stop, struct bp_read *rd,
		       unsigned *n)
{
	struct bp_read cur, next;
	/* The root word, in the C11 model (its one argument; kv.md points
	 * here).  The root split (grow_root) makes the new root R with
	 * kv_new_node, which latches R exclusive before writing it, and stores
	 * the word with a release store while R and the old root P are still
	 * latched exclusive.
	 * Acquire, pairing with that release: a descent that reads R's word
	 * then has R's exclusive latch happen before its begin on R, whose
	 * latch check sees X (-EBUSY: the latched path) or the unlatch that
	 * published the whole of R.  (Relaxed, as before, let the model and
	 * ARMv8 show the word before R's X: the descent began on R as if
	 * unlatched, and only R's validation and the node's level check stood
	 * between it and a half-written root.) */
	uint64_t w = atomic_load_explicit(&kv->root_word, memory_order_acquire);
	uint64_t page = KV_ROOT_PAGE(w);
	unsigned level = KV_ROOT_HEIGHT(w);
	/* (level < stop): a root that is a leaf, which leaf_optimistic
	 * cannot latch below a parent */
	if (level < stop || bp_file_read_begin(kv->file, page, &cur) != 0)
		return OPT_LATCHED;
	/* Still the root?  The split stores the word while P is latched
	 * exclusive, before P's unlatch (U) raises P's version.  The begin
	 * above succeeded, so its acquire load of P's latch read X clear:
	 *   - from U or a later unlatch: U synchronises with it, the word's
	 *     store happens before this load, which sees the new root: the
	 *     descent restarts;
	 *   - from before the split's X on P: then the begin read a version
	 *     older than U's raise (one that read U's raise would have seen
	 *     the X before it: optread.c's first pair), and P's end fails if
	 *     this read saw any of the split's stores to P (optread.c's last
	 *     pair), or else it read P whole, as it was before the split.
	 * Relaxed is enough: the edges come from the begin's acquire loads.
	 * Either way a half root is never taken for the whole tree. */
	if (atomic_load_explicit(&kv->root_word, memory_order_relaxed) != w) {
		bp_read_end(&cur);
		return OPT_RESTART;
	}
	for (;;) {
		const struct kv_node_hdr *h = kv_page_hdr(cur.data);
		*n = KV_ONCE(h->nkeys);
		if (KV_ONCE(h->level) != level ||
		    *n > (level ? kv->inner_cap : kv->leaf_cap)) {
			bp_read_end(&cur);
			return OPT_RESTART;
		}
		if (level == stop) {
			*rd = cur;
			return OPT_DONE;
		}
		page = kv_page_children(kv, cur.data)[kv_upper_bound(kv_page_keys(cur.data), *n, key)];
		level--;
		int r = opt_step(kv, &cur, page, &next);
		if (r != OPT_DONE)
			return r;
		cur = next;
	}
}

/* kv_get without a latch: OPT_DONE with *rc its result (0 or -ENOENT), or
 * OPT_RESTART / OPT_LATCHED. */
static int get_optimistic(struct kv_store *kv, uint64_t key, void *value, int *rc)
{
	struct bp_read leaf;
	unsigned n;
	unsigned char copy[KV_VALUE_SIZE_MAX];
	int r = opt_descend(kv, key, 0, &leaf, &n);
	if (r != OPT_DONE)
		return r;
	const uint64_t *k = kv_page_keys(leaf.data);
	unsigned i = kv_lower_bound(k, n, key);
	bool found = i < n && k[i] == key;
	if (found)
		memcpy(copy, kv_page_value_at(kv, leaf.data, i), kv->value_size);
	if (bp_read_end(&leaf) != 0)
		return OPT_RESTART;
	if (found)
		memcpy(value, copy, kv->value_size);
	*rc = found ? 0 : -ENOENT;
	return OPT_DONE;
}

/* The leaf of key, pinned and latched leaf_mode, found with optimistic
 * reads of the nodes above it: OPT_DONE (*rc: 0, *leaf set; or the error
 * of pinning it), or OPT_RESTART / OPT_LATCHED. */
static int leaf_optimistic(struct kv_store *kv, uint64_t key, enum bp_latch_mode leaf_mode,
			   struct bp_frame **leaf, int *rc)
{
	struct bp_read parent;
	unsigned n;
	/* A tree of one leaf has no parent to read: the latched path. */
	int r = opt_descend(kv, key, 1, &parent, &n);
	if (r != OPT_DONE)
		return r;
	uint64_t page = kv_page_children(kv, parent.data)[kv_upper_bound(kv_page_keys(parent.data),
									 n, key)];
	/* Pinning and latching may wait (for a read, for a writer) with the
	 * parent's read still open: nothing is held, and the parent's end
	 * then says whether page is still key's leaf. */
	*rc = kv_node_pin_latch(kv, page, leaf_mode, leaf);
	if (bp_read_end(&parent) != 0) {
		if (*rc == 0)
			kv_node_unlatch_unpin(kv, *leaf, leaf_mode);
		return OPT_RESTART;
	}
	if (*rc == 0 && kv_hdr_of(*leaf)->level != 0) {
		kv_node_unlatch_unpin(kv, *leaf, leaf_mode);
		*rc = -EBADMSG;
	}
	return OPT_DONE;
}

/* Crab down with shared latches to the leaf holding key; the leaf is
 * latched leaf_mode. */
static int descend_latched(struct kv_store *kv, uint64_t key, enum bp_latch_mode leaf_mode,
			   struct bp_frame **leaf)
{
	struct bp_frame *cur, *child;
	bp_latch(kv->pool, kv->meta, BP_LATCH_SHARED);
	const struct kv_meta *m = bp_data(kv->meta);
	enum bp_latch_mode mode = m->height == 0 ? leaf_mode : BP_LATCH_SHARED;
	unsigned level = m->height;
	int rc = kv_node_pin_latch(kv, m->root, mode, &cur);
	bp_unlatch(kv->pool, kv->meta, BP_LATCH_SHARED);
	/* every step goes one level down, so a damaged file cannot loop us */
	if (rc == 0 && kv_hdr_of(cur)->level != level) {
		kv_node_unlatch_unpin(kv, cur, mode);
		rc = -EBADMSG;
	}
	while (rc == 0 && level > 0) {
		const struct kv_node_hdr *h = kv_hdr_of(cur);
		uint64_t next = kv_children_of(kv, cur)[kv_upper_bound(kv_keys_of(cur), h->nkeys, key)];
		mode = --level == 0 ? leaf_mode : BP_LATCH_SHARED;
		rc = kv_node_pin_latch(kv, next, mode, &child);
		kv_node_unlatch_unpin(kv, cur, BP_LATCH_SHARED);
		if (rc == 0 && kv_hdr_of(child)->level != level) {
			kv_node_unlatch_unpin(kv, child, mode);
			rc = -EBADMSG;
		}
		cur = child;
	}
	if (rc == 0)
		*leaf = cur;
	return rc;
}

/* The leaf holding key, latched leaf_mode: optimistically down to it if
 * that works within OPT_TRIES, else crabbing. */
static int descend(struct kv_store *kv, uint64_t key, enum bp_latch_mode leaf_mode,
		   struct bp_frame **leaf)
{
	int rc;
	for (unsigned t = 0; t < OPT_TRIES; t++) {
		int r = leaf_optimistic(kv, key, leaf_mode, leaf, &rc);
		if (r == OPT_DONE)
			return rc;
		if (r == OPT_LATCHED)
			break;
	}
	return descend_latched(kv, key, leaf_mode, leaf);
}

/* ---- Reads ---------------------------------------------------------------- */

int kv_get(struct kv_store *kv, uint64_t key, void *value)
{
	struct bp_frame *leaf;
	if (!kv || !value)
		return -EINVAL;
	int rc;
	for (unsigned t = 0; t < OPT_TRIES; t++) {
		int r = get_optimistic(kv, key, value, &rc);
		if (r == OPT_DONE)
			return rc;
		if (r == OPT_LATCHED)
			break;
	}
	rc = descend(kv, key, BP_LATCH_SHARED, &leaf);
	if (rc)
		return rc;
	unsigned n = kv_hdr_of(leaf)->nkeys, i = kv_lower_bound(kv_keys_of(leaf), n, key);
	if (i < n && kv_keys_of(leaf)[i] == key)
		memcpy(value, kv_value_at(kv, leaf, i), kv->value_size);
	else
		rc = -ENOENT;
	kv_node_unlatch_unpin(kv, leaf, BP_LATCH_SHARED);
	return rc;
}

int kv_scan(struct kv_store *kv, uint64_t start, size_t max, kv_scan_fn fn, void *arg)
{
	struct bp_frame *leaf;
	size_t seen = 0;
	bool stop = false;
	if (!kv || !fn)
		return -EINVAL;
	if (max == 0)
		return 0;
	int rc = descend(kv, start, BP_LATCH_SHARED, &leaf);
	for (bool first = true; rc == 0; first = false) {
		const uint64_t *k = kv_keys_of(leaf);
		unsigned n = kv_hdr_of(leaf)->nkeys, from = kv_lower_bound(k, n, start), i;
		for (i = from; i < n && !stop && seen < max; i++, seen++)
			stop = fn(k[i], kv_value_at(kv, leaf, i), arg) != 0;
		bool done = stop || seen >= max || (i > from && k[i - 1] == UINT64_MAX);
		if (i > from)
			start = k[i - 1] + 1; /* resume after the last key visited */
		else if (!first)
			rc = -EBADMSG; /* a right sibling always holds keys >= start */
		uint64_t next = kv_hdr_of(leaf)->next;
		kv_node_unlatch_unpin(kv, leaf, BP_LATCH_SHARED);
		if (done || rc || next == KV_NO_PAGE)
			break;
		rc = kv_node_pin_latch(kv, next, BP_LATCH_SHARED, &leaf);
	}
	return rc ? rc : (int)(seen > INT32_MAX ? INT32_MAX : seen);
}

/* ---- Writes --------------------------------------------------------------- */

static void inner_insert(struct kv_store *kv, struct bp_frame *f, uint64_t sep, uint64_t child)
{
	unsigned n = kv_hdr_of(f)->nkeys, pos = kv_upper_bound(kv_keys_of(f), n, sep);
	uint64_t *k = kv_keys_of(f), *c = kv_children_of(kv, f);
	memmove(k + pos + 1, k + pos, (n - pos) * sizeof(*k));
	memmove(c + pos + 2, c + pos + 1, (n - pos) * sizeof(*c));
	k[pos] = sep;
	c[pos + 1] = child;
	kv_hdr_of(f)->nkeys = (uint16_t)(n + 1);
}

/* Split the full leaf f while inserting key at pos: the upper half moves to
 * a new right sibling, whose first key (*sep) and page (*right) the caller
 * inserts into the parent.  Both halves end with about (n + 1) / 2 keys.
 * Both pages join the change (the new one stays latched until it is
 * logged: its LSN must be set before anyone can reach it). */
static int split_leaf(struct kv_store *kv, struct kv_change *ch, struct bp_frame *f, unsigned pos,
		      uint64_t key, kv_fill_fn fill, void *arg, uint64_t *sep, uint64_t *right)
{
	struct bp_frame *nf;
	int rc = kv_new_node(kv, ch, 0, right, &nf);
	if (rc)
		return rc;
	unsigned n = kv_hdr_of(f)->nkeys, half = (n + 1) / 2;
	bool goes_left = pos < half;
	unsigned cut = goes_left ? half - 1 : half; /* entries [cut, n) move right */
	memcpy(kv_keys_of(nf), kv_keys_of(f) + cut, (n - cut) * sizeof(uint64_t));
	memcpy(kv_value_at(kv, nf, 0), kv_value_at(kv, f, cut), (size_t)(n - cut) * kv->value_size);
	kv_hdr_of(nf)->nkeys = (uint16_t)(n - cut);
	kv_hdr_of(f)->nkeys = (uint16_t)cut;
	if (goes_left)
		fill(kv_leaf_open_slot(kv, f, pos, key), false, arg);
	else
		fill(kv_leaf_open_slot(kv, nf, pos - cut, key), false, arg);
	kv_hdr_of(nf)->next = kv_hdr_of(f)->next;
	kv_hdr_of(f)->next = *right;
	*sep = kv_keys_of(nf)[0];
	kv_change_page(kv, ch, f);
	kv_change_page(kv, ch, nf);
	return 0;
}

/* Split the full inner node f while inserting the pair (*sep, *right): the
 * middle key moves up, the keys above it go to a new right node; on return
 * (*sep, *right) is the pair for the parent.  Both join the change. */
static int split_inner(struct kv_store *kv, struct kv_change *ch, struct bp_frame *f,
		       uint64_t *sep, uint64_t *right)
{
	unsigned n = kv_hdr_of(f)->nkeys, pos = kv_upper_bound(kv_keys_of(f), n, *sep);
	uint64_t *k = malloc((n + 1) * sizeof(*k)), *c = malloc((n + 2) * sizeof(*c));
	uint64_t *fk = kv_keys_of(f), *fc = kv_children_of(kv, f), rpage;
	struct bp_frame *nf;
	int rc = k && c ? kv_new_node(kv, ch, kv_hdr_of(f)->level, &rpage, &nf) : -ENOMEM;
	if (rc == 0) {
		/* k, c: the node's keys and children with the pair inserted */
		memcpy(k, fk, pos * sizeof(*k));
		k[pos] = *sep;
		memcpy(k + pos + 1, fk + pos, (n - pos) * sizeof(*k));
		memcpy(c, fc, (pos + 1) * sizeof(*c));
		c[pos + 1] = *right;
		memcpy(c + pos + 2, fc + pos + 1, (n - pos) * sizeof(*c));
		unsigned mid = (n + 1) / 2; /* k[mid] goes up */
		memcpy(fk, k, mid * sizeof(*k));
		memcpy(fc, c, (mid + 1) * sizeof(*c));
		kv_hdr_of(f)->nkeys = (uint16_t)mid;
		memcpy(kv_keys_of(nf), k + mid + 1, (n - mid) * sizeof(*k));
		memcpy(kv_children_of(kv, nf), c + mid + 1, (n - mid + 1) * sizeof(*c));
		kv_hdr_of(nf)->nkeys = (uint16_t)(n - mid);
		*sep = k[mid];
		*right = rpage;
		kv_change_page(kv, ch, f);
		kv_change_page(kv, ch, nf);
	}
	free(k);
	free(c);
	return rc;
}

/* The pessimistic insert's latched path: f[0] is the meta page (latched
 * in meta_mode), f[1..depth) the nodes from the root down to the leaf,
 * each latched exclusive; f[first..depth) are the pages still latched. */
struct kv_path {
	struct bp_frame *f[KV_MAX_HEIGHT + 2];
	unsigned first, depth;
	enum bp_latch_mode meta_mode;
};

/* Unlatch (and unpin) the path's pages below index upto, top first. */
static void path_release(struct kv_store *kv, struct kv_path *p, unsigned upto)
{
	for (; p->first < upto; p->first++)
		kv_node_unlatch_unpin(kv, p->f[p->first],
				      p->first ? BP_LATCH_EXCLUSIVE : p->meta_mode);
}

enum { PATH_AT_LEAF = 0, PATH_ROOT_FULL = 1 };

/* Step 1 of upsert_pessimistic: latch the meta page in p->meta_mode, then
 * go down to key's leaf with exclusive latches, releasing everything above
 * a safe (not full) node: a split stops there, so p->f[p->first] is the
 * highest page it can change (the meta page: the root splits).
 * PATH_AT_LEAF; PATH_ROOT_FULL, nothing latched: the root is full and the
 * meta page was only shared (go again with it exclusive); or the error,
 * what was latched still in the path. */
static int descend_exclusive(struct kv_store *kv, uint64_t key, struct kv_path *p)
{
	bp_latch(kv->pool, kv->meta, p->meta_mode);
	p->f[0] = kv->meta;
	p->first = 0;
	p->depth = 1;
	uint64_t pageno = ((const struct kv_meta *)bp_data(kv->meta))->root;
	for (;;) {
		struct bp_frame *f;
		int rc = kv_node_pin_latch(kv, pageno, BP_LATCH_EXCLUSIVE, &f);
		if (rc)
			return rc;
		p->f[p->depth++] = f;
		if (kv_hdr_of(f)->nkeys < kv_node_cap(kv, f)) { /* safe: release ancestors */
			path_release(kv, p, p->depth - 1);
		} else if (p->depth == 2 && p->meta_mode == BP_LATCH_SHARED) { /* full root */
			kv_node_unlatch_unpin(kv, f, BP_LATCH_EXCLUSIVE);
			bp_unlatch(kv->pool, kv->meta, BP_LATCH_SHARED);
			p->first = p->depth; /* nothing left to release */
			return PATH_ROOT_FULL;
		}
		if (kv_hdr_of(f)->level == 0)
			return PATH_AT_LEAF;
		if (p->depth == KV_MAX_HEIGHT + 2)
			return -EBADMSG;
		pageno = kv_children_of(kv, f)[kv_upper_bound(kv_keys_of(f), kv_hdr_of(f)->nkeys, key)];
	}
}

/* The root split: a new root above the old one, the pair's two halves its
 * only children (as nbtree's _bt_newroot), so the tree grows at the top
 * and every leaf stays at one depth.  The meta page is latched exclusive
 * (step 1 went again for it) and joins the change with the new root. */
static int grow_root(struct kv_store *kv, struct kv_change *ch, uint64_t sep, uint64_t right)
{
	struct kv_meta *m = bp_data(kv->meta);
	struct bp_frame *rf;
	uint64_t rpage;
	if (m->height + 1 >= KV_MAX_HEIGHT)
		return -EFBIG;
	int rc = kv_new_node(kv, ch, m->height + 1, &rpage, &rf);
	if (rc)
		return rc;
	kv_keys_of(rf)[0] = sep;
	kv_children_of(kv, rf)[0] = m->root;
	kv_children_of(kv, rf)[1] = right;
	kv_hdr_of(rf)->nkeys = 1;
	kv_change_page(kv, ch, rf);
	m->root = rpage;
	m->height++;
	/* Release, with rf (the new root) and the old root still latched
	 * exclusive: opt_descend says what it pairs with. */
	atomic_store_explicit(&kv->root_word, KV_ROOT_WORD(rpage, m->height),
			      memory_order_release);
	kv_change_page(kv, ch, kv->meta);
	return 0;
}

/* Step 4: the pair (sep, right) a split made into the parents, from the
 * leaf's up: a node with room takes it; a full one splits and passes its
 * own pair up; reaching the meta page, the root split (grow_root).  Step
 * 1 latched every page this can reach. */
static int insert_upward(struct kv_store *kv, struct kv_change *ch, const struct kv_path *p,
			 uint64_t sep, uint64_t right)
{
	for (unsigned i = p->depth - 2;; i--) {
		struct bp_frame *f = p->f[i];
		if (f == kv->meta)
			return grow_root(kv, ch, sep, right);
		if (kv_hdr_of(f)->nkeys < kv->inner_cap) {
			inner_insert(kv, f, sep, right);
			kv_change_page(kv, ch, f);
			return 0;
		}
		int rc = split_inner(kv, ch, f, &sep, &right);
		if (rc)
			return rc;
	}
}

/* Steps 2 and 3 (and 4) on the latched leaf: 0 (key was there: updated),
 * 1 (inserted), or the error. */
static int upsert_leaf(struct kv_store *kv, struct kv_change *ch, const struct kv_path *p,
		       uint64_t key, kv_fill_fn fill, void *arg)
{
	struct bp_frame *leaf = p->f[p->depth - 1];
	unsigned n = kv_hdr_of(leaf)->nkeys, pos = kv_lower_bound(kv_keys_of(leaf), n, key);
	/* 2. No split after all: another writer got here between the
	 * optimistic try and step 1. */
	if (pos < n && kv_keys_of(leaf)[pos] == key) { /* someone inserted it meanwhile */
		fill(kv_value_at(kv, leaf, pos), true, arg);
		change_upsert(ch, leaf, key, kv_value_at(kv, leaf, pos));
		return 0;
	}
	if (n < kv->leaf_cap) { /* someone split it meanwhile */
		uint8_t *v = kv_leaf_open_slot(kv, leaf, pos, key);
		fill(v, false, arg);
		change_upsert(ch, leaf, key, v);
		return 1;
	}
	/* 3. Split the leaf, key in its half; 4. its pair into the parents. */
	uint64_t sep, right;
	int rc = split_leaf(kv, ch, leaf, pos, key, fill, arg, &sep, &right);
	if (rc == 0)
		rc = insert_upward(kv, ch, p, sep, right);
	/* A split that fails half way (no memory or frame for a new page) can
	 * leave a new sibling reachable only through the leaf chain; kv_check
	 * reports it.  What was changed is logged all the same (step 5), so
	 * the file and the log agree with memory. */
	return rc ? rc : 1;
}

/* The pessimistic insert, for a key whose leaf was full:
 *   1. exclusive latches down the tree (descend_exclusive), everything
 *      above a safe (not full) node released, so a split stops at the
 *      highest page still latched or, if that is the meta page, grows a
 *      new root; the meta page is latched shared first and exclusive
 *      only on a second descent when the root itself is full;
 *   2. the leaf, if it needs no split after all (upsert_leaf);
 *   3. else split it (split_leaf),
 *   4. and insert the new pair into the parents, splitting the full ones,
 *      up to a new root if need be (insert_upward, grow_root);
 *   5. log the change, then unlatch the path.
 * The whole split is one change: every page it touched is logged as an
 * image in one record, before any of them is unlatched. */
static int upsert_pessimistic(struct kv_store *kv, uint64_t key, kv_fill_fn fill, void *arg,
			      enum bp_latch_mode meta_mode, uint64_t *end)
{
	struct kv_path p = {.meta_mode = meta_mode};
	struct kv_change ch = {0};
	int rc = descend_exclusive(kv, key, &p);
	if (rc == PATH_ROOT_FULL)
		return upsert_pessimistic(kv, key, fill, arg, BP_LATCH_EXCLUSIVE, end);
	if (rc == PATH_AT_LEAF)
		rc = upsert_leaf(kv, &ch, &p, key, fill, arg);
	int lrc = kv_change_finish(kv, &ch, end);
	path_release(kv, &p, p.depth);
	return rc < 0 ? rc : lrc ? lrc : rc;
}

int kv_upsert(struct kv_store *kv, uint64_t key, kv_fill_fn fill, void *arg)
{
	struct bp_frame *leaf;
	struct kv_change ch = {0};
	uint64_t end = 0;
	if (!kv || !fill)
		return -EINVAL;
	/* Optimistic: shared latches down, the leaf exclusive. */
	int rc = descend(kv, key, BP_LATCH_EXCLUSIVE, &leaf);
	if (rc)
		return rc;
	unsigned n = kv_hdr_of(leaf)->nkeys, pos = kv_lower_bound(kv_keys_of(leaf), n, key);
	uint8_t *v = NULL;
	if (pos < n && kv_keys_of(leaf)[pos] == key) {
		v = kv_value_at(kv, leaf, pos);
		fill(v, true, arg);
	} else if (n < kv->leaf_cap) {
		v = kv_leaf_open_slot(kv, leaf, pos, key);
		fill(v, false, arg);
		rc = 1;
	}
	if (!v) { /* full: split, pessimistically */
		kv_node_unlatch_unpin(kv, leaf, BP_LATCH_EXCLUSIVE);
		rc = upsert_pessimistic(kv, key, fill, arg, BP_LATCH_SHARED, &end);
	} else {
		change_upsert(&ch, leaf, key, v);
		int lrc = kv_change_finish(kv, &ch, &end);
		kv_node_unlatch_unpin(kv, leaf, BP_LATCH_EXCLUSIVE);
		if (lrc)
			return lrc;
	}
	if (rc < 0)
		return rc;
	int crc = after_change(kv, end);
	return crc ? crc : rc;
}

struct kv_copy_arg {
	const void *src;
	size_t len;
};
static void fill_copy(void *value, bool existed, void *arg)
{
	const struct kv_copy_arg *a = arg;
	memcpy(value, a->src, a->len);
}

int kv_put(struct kv_store *kv, uint64_t key, const void *value)
{
	if (!kv || !value)
		return -EINVAL;
	struct kv_copy_arg a = {value, kv->value_size};
	return kv_upsert(kv, key, fill_copy, &a);
}

/* ---- Commit and checkpoint --------------------------------------------------- */

int kv_commit(struct kv_store *kv)
{
	if (!kv || !kv->log)
		return -EINVAL;
	/* UINT64_MAX: every change that returned before this call */
	return kv_log_flush(kv->log, UINT64_MAX, true, NULL);
}

int kv_checkpoint_locked(struct kv_store *kv)
{
	/* Every record below upto has dirtied its pages before upto was
	 * read (kv_log_append dirties inside the log mutex), so the
	 * checkpoint's scan sees them all. */
	uint64_t upto = kv_log_begin_checkpoint(kv->log), redo;
	atomic_store_explicit(&kv->next_checkpoint, upto + kv->checkpoint_bytes,
			      memory_order_relaxed);
	int rc = bp_checkpoint(kv->pool, upto, &redo);
	if (rc == 0)
		rc = kv_log_set_redo(kv->log, redo);
	if (rc == 0)
		kv_log_count_checkpoint(kv->log);
	return rc;
}

int kv_checkpoint(struct kv_store *kv)
{
	if (!kv || !kv->log)
		return -EINVAL;
	pthread_mutex_lock(&kv->checkpoint_lock);
	int rc = kv_checkpoint_locked(kv);
	pthread_mutex_unlock(&kv->checkpoint_lock);
	return rc;
}

int kv_log_stats(struct kv_store *kv, struct kv_log_stats *out)
{
	if (!kv || !out)
		return -EINVAL;
	*out = (struct kv_log_stats){0};
	if (kv->log)
		kv_log_get_stats(kv->log, out);
	out->recovered_records = kv->recovered_records;
	return 0;
}

uint32_t kv_value_size(const struct kv_store *kv) { return kv ? kv->value_size : 0; }
struct bp_pool *kv_pool(struct kv_store *kv) { return kv ? kv->pool : NULL; }
