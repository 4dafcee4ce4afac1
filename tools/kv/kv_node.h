/* SPDX-License-Identifier: MIT */
/*
 * kv_node.h - the on-page layout of the kv store's B+-tree (internal to
 * the store: kv.c, kv_check.c, kv_mem.c).
 *
 * Design note
 * -----------
 * Layer: inside the store (on bufpool); never included outside tools/kv.
 * Its types, inline helpers and the two page helpers kv.c exports to
 * kv_check.c are all kv_-prefixed, so nothing of the store can collide
 * with a program that links it.
 *
 * Every page begins with its page LSN (uint64_t; 0 = never logged): the
 * start of the last log record that changed it (kv_log.h).  Recovery
 * applies a record to a page only if the page's LSN is below the
 * record's, so a page written after the record is not changed twice.
 *
 * Page 0 is the meta page (struct kv_meta); it stays pinned while the store
 * is open.  Every other page is a node: a struct kv_node_hdr, then the keys,
 * then either the values (leaf, level 0) or the child page numbers (inner
 * node, level >= 1):
 *
 *   leaf:  hdr | key[leaf_cap]  | value[leaf_cap] (value_size bytes each)
 *   inner: hdr | key[inner_cap] | child[inner_cap + 1]
 *
 * An inner node with n keys has n + 1 children; child[i] holds the keys k
 * with key[i-1] <= k < key[i].  Leaves are chained by hdr.next (0 = last;
 * page 0 is never a leaf).  A node's level never changes; a root split puts
 * a new root above the old one, so only the meta page points at the root.
 * Read a page's fields only under its content latch or inside a validated
 * optimistic read (see kv.c).
 */
#ifndef TOOLS_KV_KV_NODE_H
#define TOOLS_KV_KV_NODE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "kv.h"
#include "kv_log.h"

#define KV_MAGIC UINT64_C(0x32305452544b5642) /* "BVKTRT02": page LSNs */
#define KV_MAX_HEIGHT 16u
#define KV_NO_PAGE 0u /* leaf chain end; page 0 is the meta page */

struct kv_meta {
	uint64_t lsn;   /* first in every page */
	uint64_t magic;
	uint32_t page_size;
	uint32_t value_size;
	uint64_t root;
	uint32_t height; /* levels above the leaves: root's level */
	uint32_t reserved;
};

struct kv_node_hdr {
	uint64_t lsn;   /* first in every page */
	uint16_t level; /* 0 = leaf */
	uint16_t nkeys;
	uint32_t reserved;
	uint64_t next;  /* leaves: right sibling, KV_NO_PAGE at the end */
};

struct kv_log;

/* kv_store.root_word: the root's page number above the height's 8 bits. */
#define KV_ROOT_WORD(root, height) ((uint64_t)(root) << 8 | (uint64_t)(height))
#define KV_ROOT_PAGE(word) ((word) >> 8)
#define KV_ROOT_HEIGHT(word) ((unsigned)((word) & 0xff))

struct kv_store {
	struct bp_pool *pool;
	struct bp_file *file;  /* the store's file in the pool */
	bool own_pool;         /* false: kv_config.shared_pool's, not closed */
	struct bp_frame *meta; /* page 0, pinned from open to close */
	/* The meta page's root and height, for the optimistic descents
	 * (kv.c): KV_ROOT_WORD(root, height).  Written with the meta page by
	 * the root split (release), under the exclusive latches of the meta
	 * page and of the old and new roots, and set by kv_open before any
	 * reader; opt_descend (kv.c) argues its orders. */
	_Atomic uint64_t root_word;
	struct kv_log *log;    /* NULL: not durable */
	bool sync_commit;
	uint64_t checkpoint_bytes;
	_Atomic uint64_t next_checkpoint; /* log position that triggers one */
	_Atomic uint64_t next_flush;      /* without sync_commit: the position
					   * at which a writer flushes the log,
					   * so the buffer stays bounded */
	pthread_mutex_t checkpoint_lock;  /* one checkpoint at a time */
	uint64_t recovered_records;
	uint32_t value_size;
	uint32_t leaf_cap;
	uint32_t inner_cap;
	void (*log_fn)(void *log_arg, int level, const char *msg); /* cfg->pool.log */
	void *log_arg;
};

/* ---- Node layout ------------------------------------------------------ */

/* On a raw page: a frame's data, or a copy of the page (kv_mem.c). */
static inline struct kv_node_hdr *kv_page_hdr(const void *page) { return (struct kv_node_hdr *)page; }
static inline uint64_t *kv_page_keys(const void *page) { return (uint64_t *)(kv_page_hdr(page) + 1); }
static inline uint64_t *kv_page_children(const struct kv_store *kv, const void *page)
{
	return kv_page_keys(page) + kv->inner_cap;
}
static inline uint8_t *kv_page_value_at(const struct kv_store *kv, const void *page, unsigned i)
{
	return (uint8_t *)(kv_page_keys(page) + kv->leaf_cap) + (size_t)i * kv->value_size;
}
static inline unsigned kv_page_cap(const struct kv_store *kv, const void *page)
{
	return kv_page_hdr(page)->level ? kv->inner_cap : kv->leaf_cap;
}
/* The same on a pinned frame's page. */
static inline struct kv_node_hdr *kv_hdr_of(struct bp_frame *f) { return kv_page_hdr(bp_data(f)); }
static inline uint64_t *kv_keys_of(struct bp_frame *f) { return kv_page_keys(bp_data(f)); }
static inline uint64_t *kv_children_of(const struct kv_store *kv, struct bp_frame *f)
{
	return kv_page_children(kv, bp_data(f));
}
static inline uint8_t *kv_value_at(const struct kv_store *kv, struct bp_frame *f, unsigned i)
{
	return kv_page_value_at(kv, bp_data(f), i);
}
static inline unsigned kv_node_cap(const struct kv_store *kv, struct bp_frame *f)
{
	return kv_page_cap(kv, bp_data(f));
}

/* First index with key[i] >= key. */
static inline unsigned kv_lower_bound(const uint64_t *k, unsigned n, uint64_t key)
{
	unsigned lo = 0, hi = n;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (k[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
/* First index with key[i] > key: the child of an inner node holding key. */
static inline unsigned kv_upper_bound(const uint64_t *k, unsigned n, uint64_t key)
{
	unsigned lo = 0, hi = n;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (k[mid] <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Make room at slot pos of a leaf that is not full and put key there;
 * returns the slot's value, zeroed. */
static inline uint8_t *kv_leaf_open_slot(const struct kv_store *kv, struct bp_frame *f,
					 unsigned pos, uint64_t key)
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

/* Pin page pageno and latch it in mode; -EBADMSG if it is not a node of
 * this store (its key count exceeds the capacity). */
int kv_node_pin_latch(struct kv_store *kv, uint64_t pageno, enum bp_latch_mode mode,
		      struct bp_frame **out);
/* Unlatch and unpin (the meta page stays pinned). */
void kv_node_unlatch_unpin(struct kv_store *kv, struct bp_frame *f, enum bp_latch_mode mode);

/* ---- Changes (kv.c) ----------------------------------------------------- */

/* The pages one operation changed, all latched exclusive by it until
 * kv_change_finish has logged them; fresh are the pages it created, which
 * kv_change_finish unlatches and unpins.  Zero-initialise. */
struct kv_change {
	struct kv_log_part parts[KV_LOG_MAX_PARTS];
	struct bp_frame *fresh[KV_LOG_MAX_PARTS];
	unsigned n, nfresh;
};
int kv_new_node(struct kv_store *kv, struct kv_change *c, unsigned level, uint64_t *pageno,
		struct bp_frame **out);
void kv_change_page(struct kv_store *kv, struct kv_change *c, struct bp_frame *f);
int kv_change_finish(struct kv_store *kv, struct kv_change *c, uint64_t *end);
/* kv_checkpoint with checkpoint_lock held. */
int kv_checkpoint_locked(struct kv_store *kv);
/* Replay one log part into the pool (kv_recover.c): a kv_log_apply_fn. */
int kv_recover_apply(void *kv, uint64_t lsn, const struct kv_log_part *part);

#endif
