/*
 * kv_node.h - the on-page layout of the kv store's B+-tree (internal to
 * kv.c and kv_check.c).
 *
 * Design note
 * -----------
 * Layer: inside the store (on bufpool); never included outside tools/kv.
 * Its types, inline helpers and the two page helpers kv.c exports to
 * kv_check.c are all kv_-prefixed, so nothing of the store can collide
 * with a program that links it.
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
 * Read a page's fields only under its content latch (see kv.c).
 */
#ifndef TOOLS_KV_KV_NODE_H
#define TOOLS_KV_KV_NODE_H

#include <stdint.h>

#include "kv.h"

#define KV_MAGIC UINT64_C(0x31305452544b5642) /* "BVKTRT01" */
#define KV_MAX_HEIGHT 16u
#define KV_NO_PAGE 0u /* leaf chain end; page 0 is the meta page */

struct kv_meta {
	uint64_t magic;
	uint32_t page_size;
	uint32_t value_size;
	uint64_t root;
	uint32_t height; /* levels above the leaves: root's level */
	uint32_t reserved;
};

struct kv_node_hdr {
	uint16_t level; /* 0 = leaf */
	uint16_t nkeys;
	uint32_t reserved;
	uint64_t next;  /* leaves: right sibling, KV_NO_PAGE at the end */
};

struct kv_store {
	struct bp_pool *pool;
	struct bp_frame *meta; /* page 0, pinned from open to close */
	uint32_t value_size;
	uint32_t leaf_cap;
	uint32_t inner_cap;
	void (*log)(void *log_arg, int level, const char *msg); /* cfg->pool.log */
	void *log_arg;
};

/* ---- Node layout ------------------------------------------------------ */

static inline struct kv_node_hdr *kv_hdr_of(struct bp_frame *f) { return bp_data(f); }
static inline uint64_t *kv_keys_of(struct bp_frame *f) { return (uint64_t *)(kv_hdr_of(f) + 1); }
static inline uint64_t *kv_children_of(const struct kv_store *kv, struct bp_frame *f)
{
	return kv_keys_of(f) + kv->inner_cap;
}
static inline uint8_t *kv_value_at(const struct kv_store *kv, struct bp_frame *f, unsigned i)
{
	return (uint8_t *)(kv_keys_of(f) + kv->leaf_cap) + (size_t)i * kv->value_size;
}
static inline unsigned kv_node_cap(const struct kv_store *kv, struct bp_frame *f)
{
	return kv_hdr_of(f)->level ? kv->inner_cap : kv->leaf_cap;
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

/* Pin page pageno and latch it in mode; -EBADMSG if it is not a node of
 * this store (its key count exceeds the capacity). */
int kv_node_pin_latch(struct kv_store *kv, uint64_t pageno, enum bp_latch_mode mode,
		      struct bp_frame **out);
/* Unlatch and unpin (the meta page stays pinned). */
void kv_node_unlatch_unpin(struct kv_store *kv, struct bp_frame *f, enum bp_latch_mode mode);

#endif
