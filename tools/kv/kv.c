/*
 * kv.c - a B+-tree key-value store on bufpool pages (see kv.h): lookups,
 * scans, inserts with splits, open and close.  The page layout is in
 * kv_node.h, the structure check in kv_check.c.
 *
 * Design note
 * -----------
 * Layer: the store, on bufpool (see kv.h).
 *
 * Latches (every page's content is guarded by its pool content latch; the
 * meta page's latch guards root and height):
 *   - read a node under a shared latch, change it under an exclusive one,
 *     then bp_mark_dirty before unlatching;
 *   - descents couple latches: the child is latched before the parent is
 *     released ("crabbing"), so a node seen through its parent cannot be
 *     split away in between;
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

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Pinning and latching ------------------------------------------------- */

int kv_node_pin_latch(struct kv_store *kv, uint64_t pageno, enum bp_latch_mode mode,
		      struct bp_frame **out)
{
	int rc = bp_get(kv->pool, pageno, 0, out);
	if (rc == -EBUSY) { /* every frame pinned right now: wait a while */
		struct timespec dl = fwait_deadline_after_ns(UINT64_C(10000000000));
		rc = bp_get_timed(kv->pool, pageno, 0, &dl, out);
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

/* A fresh page, pinned and latched exclusive, as a node of this level. */
static int new_node(struct kv_store *kv, unsigned level, uint64_t *pageno, struct bp_frame **out)
{
	int rc = bp_new_page(kv->pool, pageno, out);
	if (rc)
		return rc;
	bp_latch(kv->pool, *out, BP_LATCH_EXCLUSIVE);
	memset(bp_data(*out), 0, bp_page_size(kv->pool));
	kv_hdr_of(*out)->level = (uint16_t)level;
	return 0;
}

static void dirty_unlatch_unpin(struct kv_store *kv, struct bp_frame *f)
{
	bp_mark_dirty(kv->pool, f);
	kv_node_unlatch_unpin(kv, f, BP_LATCH_EXCLUSIVE);
}

/* Crab down with shared latches to the leaf holding key; the leaf is
 * latched leaf_mode. */
static int descend(struct kv_store *kv, uint64_t key, enum bp_latch_mode leaf_mode,
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

/* ---- Reads ---------------------------------------------------------------- */

int kv_get(struct kv_store *kv, uint64_t key, void *value)
{
	struct bp_frame *leaf;
	if (!kv || !value)
		return -EINVAL;
	int rc = descend(kv, key, BP_LATCH_SHARED, &leaf);
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

/* Make room at slot pos of a leaf that is not full, return the slot's value. */
static uint8_t *leaf_open_slot(struct kv_store *kv, struct bp_frame *f, unsigned pos, uint64_t key)
{
	unsigned n = kv_hdr_of(f)->nkeys;
	uint64_t *k = kv_keys_of(f);
	memmove(k + pos + 1, k + pos, (n - pos) * sizeof(*k));
	memmove(kv_value_at(kv, f, pos + 1), kv_value_at(kv, f, pos), (size_t)(n - pos) * kv->value_size);
	k[pos] = key;
	kv_hdr_of(f)->nkeys = (uint16_t)(n + 1);
	memset(kv_value_at(kv, f, pos), 0, kv->value_size);
	return kv_value_at(kv, f, pos);
}

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
 * inserts into the parent.  Both halves end with about (n + 1) / 2 keys. */
static int split_leaf(struct kv_store *kv, struct bp_frame *f, unsigned pos, uint64_t key,
		      kv_fill_fn fill, void *arg, uint64_t *sep, uint64_t *right)
{
	struct bp_frame *nf;
	int rc = new_node(kv, 0, right, &nf);
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
		fill(leaf_open_slot(kv, f, pos, key), false, arg);
	else
		fill(leaf_open_slot(kv, nf, pos - cut, key), false, arg);
	kv_hdr_of(nf)->next = kv_hdr_of(f)->next;
	kv_hdr_of(f)->next = *right;
	*sep = kv_keys_of(nf)[0];
	dirty_unlatch_unpin(kv, nf);
	return 0;
}

/* Split the full inner node f while inserting the pair (*sep, *right): the
 * middle key moves up, the keys above it go to a new right node; on return
 * (*sep, *right) is the pair for the parent. */
static int split_inner(struct kv_store *kv, struct bp_frame *f, uint64_t *sep, uint64_t *right)
{
	unsigned n = kv_hdr_of(f)->nkeys, pos = kv_upper_bound(kv_keys_of(f), n, *sep);
	uint64_t *k = malloc((n + 1) * sizeof(*k)), *c = malloc((n + 2) * sizeof(*c));
	uint64_t *fk = kv_keys_of(f), *fc = kv_children_of(kv, f), rpage;
	struct bp_frame *nf;
	int rc = k && c ? new_node(kv, kv_hdr_of(f)->level, &rpage, &nf) : -ENOMEM;
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
		dirty_unlatch_unpin(kv, nf);
	}
	free(k);
	free(c);
	return rc;
}

/* The pessimistic insert: exclusive latches down the tree; path[0] is the
 * meta page, path[first..depth) the pages still latched.  Everything above
 * a safe (not full) node is released, so a split stops at path[first] or,
 * if that is the meta page, grows a new root.  The meta page is latched
 * shared first and exclusive only on a retry when the root itself is full. */
static int upsert_pessimistic(struct kv_store *kv, uint64_t key, kv_fill_fn fill, void *arg,
			      enum bp_latch_mode meta_mode)
{
	struct bp_frame *path[KV_MAX_HEIGHT + 2];
	unsigned first = 0, depth = 1, i;
	int rc;
	bp_latch(kv->pool, kv->meta, meta_mode);
	path[0] = kv->meta;
	uint64_t pageno = ((const struct kv_meta *)bp_data(kv->meta))->root;
	for (;;) {
		struct bp_frame *f;
		rc = kv_node_pin_latch(kv, pageno, BP_LATCH_EXCLUSIVE, &f);
		if (rc)
			goto out;
		path[depth++] = f;
		if (kv_hdr_of(f)->nkeys < kv_node_cap(kv, f)) { /* safe: release ancestors */
			for (; first < depth - 1; first++)
				kv_node_unlatch_unpin(kv, path[first], first ? BP_LATCH_EXCLUSIVE : meta_mode);
		} else if (depth == 2 && meta_mode == BP_LATCH_SHARED) { /* full root */
			kv_node_unlatch_unpin(kv, f, BP_LATCH_EXCLUSIVE);
			bp_unlatch(kv->pool, kv->meta, BP_LATCH_SHARED);
			return upsert_pessimistic(kv, key, fill, arg, BP_LATCH_EXCLUSIVE);
		}
		if (kv_hdr_of(f)->level == 0)
			break;
		if (depth == KV_MAX_HEIGHT + 2) {
			rc = -EBADMSG;
			goto out;
		}
		pageno = kv_children_of(kv, f)[kv_upper_bound(kv_keys_of(f), kv_hdr_of(f)->nkeys, key)];
	}
	struct bp_frame *leaf = path[depth - 1];
	unsigned n = kv_hdr_of(leaf)->nkeys, pos = kv_lower_bound(kv_keys_of(leaf), n, key);
	if (pos < n && kv_keys_of(leaf)[pos] == key) { /* someone inserted it meanwhile */
		fill(kv_value_at(kv, leaf, pos), true, arg);
		bp_mark_dirty(kv->pool, leaf);
		goto out;
	}
	rc = 1;
	if (n < kv->leaf_cap) { /* someone split it meanwhile */
		fill(leaf_open_slot(kv, leaf, pos, key), false, arg);
		bp_mark_dirty(kv->pool, leaf);
		goto out;
	}
	uint64_t sep, right;
	int err = split_leaf(kv, leaf, pos, key, fill, arg, &sep, &right);
	for (i = depth - 2; err == 0; i--) {
		bp_mark_dirty(kv->pool, path[i + 1]);
		struct bp_frame *f = path[i];
		if (f == kv->meta) { /* the root split: grow a new root above it */
			struct kv_meta *m = bp_data(f);
			struct bp_frame *rf;
			uint64_t rpage;
			if (m->height + 1 >= KV_MAX_HEIGHT) {
				err = -EFBIG;
				break;
			}
			err = new_node(kv, m->height + 1, &rpage, &rf);
			if (err)
				break;
			kv_keys_of(rf)[0] = sep;
			kv_children_of(kv, rf)[0] = m->root;
			kv_children_of(kv, rf)[1] = right;
			kv_hdr_of(rf)->nkeys = 1;
			dirty_unlatch_unpin(kv, rf);
			m->root = rpage;
			m->height++;
			bp_mark_dirty(kv->pool, f);
			break;
		}
		if (kv_hdr_of(f)->nkeys < kv->inner_cap) {
			inner_insert(kv, f, sep, right);
			bp_mark_dirty(kv->pool, f);
			break;
		}
		err = split_inner(kv, f, &sep, &right);
	}
	/* A split that fails half way (no memory or frame for a new page) can
	 * leave a new sibling reachable only through the leaf chain; kv_check
	 * reports it. */
	if (err)
		rc = err;
out:
	for (; first < depth; first++)
		kv_node_unlatch_unpin(kv, path[first], first ? BP_LATCH_EXCLUSIVE : meta_mode);
	return rc;
}

int kv_upsert(struct kv_store *kv, uint64_t key, kv_fill_fn fill, void *arg)
{
	struct bp_frame *leaf;
	if (!kv || !fill)
		return -EINVAL;
	/* Optimistic: shared latches down, the leaf exclusive. */
	int rc = descend(kv, key, BP_LATCH_EXCLUSIVE, &leaf);
	if (rc)
		return rc;
	unsigned n = kv_hdr_of(leaf)->nkeys, pos = kv_lower_bound(kv_keys_of(leaf), n, key);
	if (pos < n && kv_keys_of(leaf)[pos] == key) {
		fill(kv_value_at(kv, leaf, pos), true, arg);
		dirty_unlatch_unpin(kv, leaf);
		return 0;
	}
	if (n < kv->leaf_cap) {
		fill(leaf_open_slot(kv, leaf, pos, key), false, arg);
		dirty_unlatch_unpin(kv, leaf);
		return 1;
	}
	kv_node_unlatch_unpin(kv, leaf, BP_LATCH_EXCLUSIVE);
	return upsert_pessimistic(kv, key, fill, arg, BP_LATCH_SHARED);
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

/* ---- Open and close ------------------------------------------------------------ */

/* Node capacities for this page and value size; -EINVAL if too small. */
static int set_geometry(struct kv_store *kv)
{
	/* bp_data_size: with BP_OPEN_CHECKSUMS the page's trailer is the pool's. */
	uint32_t body = bp_data_size(kv->pool) - (uint32_t)sizeof(struct kv_node_hdr);
	kv->leaf_cap = body / (uint32_t)(sizeof(uint64_t) + kv->value_size);
	kv->inner_cap = (body - (uint32_t)sizeof(uint64_t)) / (2 * (uint32_t)sizeof(uint64_t));
	return kv->leaf_cap < 4 || kv->inner_cap > UINT16_MAX ? -EINVAL : 0;
}

static int format_store(struct kv_store *kv)
{
	struct bp_frame *rf;
	uint64_t meta_page, root_page;
	int rc = bp_new_page(kv->pool, &meta_page, &kv->meta);
	if (rc)
		return rc;
	rc = meta_page == 0 ? new_node(kv, 0, &root_page, &rf) : -EBADMSG;
	if (rc)
		return rc;
	dirty_unlatch_unpin(kv, rf);
	bp_latch(kv->pool, kv->meta, BP_LATCH_EXCLUSIVE);
	struct kv_meta *m = bp_data(kv->meta);
	*m = (struct kv_meta){.magic = KV_MAGIC, .page_size = bp_page_size(kv->pool),
			      .value_size = kv->value_size, .root = root_page};
	bp_mark_dirty(kv->pool, kv->meta);
	bp_unlatch(kv->pool, kv->meta, BP_LATCH_EXCLUSIVE);
	return 0;
}

static int load_meta(struct kv_store *kv, uint32_t want_value_size)
{
	int rc = bp_get(kv->pool, 0, 0, &kv->meta);
	if (rc)
		return rc;
	bp_latch(kv->pool, kv->meta, BP_LATCH_SHARED);
	const struct kv_meta *m = bp_data(kv->meta);
	if (m->magic != KV_MAGIC || m->page_size != bp_page_size(kv->pool) ||
	    (want_value_size && m->value_size != want_value_size) || m->value_size < 8 ||
	    m->value_size > KV_VALUE_SIZE_MAX || m->height >= KV_MAX_HEIGHT ||
	    m->root == 0 || m->root >= bp_page_count(kv->pool))
		rc = -EBADMSG;
	kv->value_size = m->value_size;
	bp_unlatch(kv->pool, kv->meta, BP_LATCH_SHARED);
	return rc;
}

int kv_open(struct kv_store **out, const struct kv_config *cfg)
{
	if (!out || !cfg || !cfg->path ||
	    (cfg->value_size && (cfg->value_size < 8 || cfg->value_size > KV_VALUE_SIZE_MAX)))
		return -EINVAL;
	struct kv_store *kv = calloc(1, sizeof(*kv));
	if (!kv)
		return -ENOMEM;
	kv->log = cfg->pool.log;
	kv->log_arg = cfg->pool.log_arg;
	struct bp_config pc = cfg->pool;
	pc.path = cfg->path;
	pc.flags |= (cfg->create ? BP_OPEN_CREATE : 0) | (cfg->truncate ? BP_OPEN_TRUNCATE : 0);
	int rc = bp_open(&kv->pool, &pc);
	if (rc) {
		free(kv);
		return rc;
	}
	bool fresh = bp_page_count(kv->pool) == 0;
	kv->value_size = cfg->value_size ? cfg->value_size : KV_VALUE_SIZE_DEFAULT;
	if (fresh && !cfg->create && !cfg->truncate)
		rc = -EBADMSG; /* an empty file we were not asked to format */
	else if (fresh)
		rc = set_geometry(kv) ? -EINVAL : format_store(kv);
	else if ((rc = load_meta(kv, cfg->value_size)) == 0)
		rc = set_geometry(kv) ? -EBADMSG : 0;
	if (rc) {
		if (kv->meta)
			bp_release(kv->pool, kv->meta);
		if (bp_close(kv->pool) < 0)
			bp_discard(kv->pool);
		free(kv);
		return rc;
	}
	*out = kv;
	return 0;
}

int kv_close(struct kv_store *kv)
{
	if (!kv)
		return 0;
	bp_release(kv->pool, kv->meta);
	int rc = bp_close(kv->pool);
	if (rc < 0 && bp_discard(kv->pool) == 0 && kv->log) { /* bp_close left it open */
		/* The store has no stream of its own either: its one message
		 * goes where the pool's go. */
		char msg[128];
		snprintf(msg, sizeof(msg), "kv_close: close failed (%s): unwritten pages discarded",
			 strerror(-rc));
		kv->log(kv->log_arg, BP_LOG_ERROR, msg);
	}
	free(kv);
	return rc;
}

uint32_t kv_value_size(const struct kv_store *kv) { return kv ? kv->value_size : 0; }
struct bp_pool *kv_pool(struct kv_store *kv) { return kv ? kv->pool : NULL; }
