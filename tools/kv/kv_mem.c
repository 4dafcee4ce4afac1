/* SPDX-License-Identifier: MIT */
/*
 * kv_mem.c - the store's tree copied to plain memory, and kv_get on the
 * copy (see kv_mem.h).
 *
 * Design note
 * -----------
 * Layer: the store, beside kv_check.c: on kv.c's page helpers
 * (kv_node_pin_latch, kv_node_unlatch_unpin) and bufpool's public API;
 * only tools above the store (bpbench ycsb --no-pool) call it.
 *
 * The copy keeps the page layout of kv_node.h byte for byte, one page
 * every page_size bytes of a block aligned to the page size as the pool's
 * page memory is, so the search below is kv_get's, step for step, with
 * the same node helpers: the root and height from the meta page,
 * kv_upper_bound down the inner nodes, each child's level checked,
 * kv_lower_bound in the leaf, the value copied out.  What it leaves out
 * is exactly the pool: the page table lookup, the pin, the latches, and
 * the optimistic reads' versions and checks (kv_get reads so first, and
 * copies the value twice to validate it).  Every node's key count was checked
 * against its capacity when it was copied (kv_node_pin_latch), and every
 * child page number is checked against the copy's size here, so a damaged
 * file cannot send a lookup outside the copy.
 */
#include "kv_mem.h"
#include "kv_node.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct kv_mem {
	const struct kv_store *kv; /* the geometry: capacities, value size */
	uint8_t *pages;            /* npages x stride bytes; page 0 the meta page */
	uint64_t npages;
	size_t stride;             /* the pool's page size */
};

/* Page p of the copy, or NULL past its end. */
static inline const uint8_t *page_at(const struct kv_mem *m, uint64_t p)
{
	return p < m->npages ? m->pages + p * m->stride : NULL;
}

int kv_mem_copy(struct kv_store *kv, struct kv_mem **out)
{
	if (!kv || !out)
		return -EINVAL;
	struct kv_mem *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->kv = kv;
	m->stride = bp_page_size(kv->pool);
	m->npages = bp_file_page_count(kv->file);
	size_t data = bp_data_size(kv->pool); /* the pool's trailer is not the store's */
	void *block = NULL;
	int rc = m->npages && m->npages <= SIZE_MAX / m->stride ? 0 : -EBADMSG;
	if (rc == 0 && posix_memalign(&block, m->stride, m->npages * m->stride) != 0)
		rc = -ENOMEM;
	m->pages = block;
	if (rc == 0) { /* the meta page, pinned while the store is open */
		bp_latch(kv->pool, kv->meta, BP_LATCH_SHARED);
		memcpy(m->pages, bp_data(kv->meta), data);
		bp_unlatch(kv->pool, kv->meta, BP_LATCH_SHARED);
	}
	for (uint64_t p = 1; rc == 0 && p < m->npages; p++) {
		struct bp_frame *f;
		rc = kv_node_pin_latch(kv, p, BP_LATCH_SHARED, &f);
		if (rc == 0) {
			memcpy(m->pages + p * m->stride, bp_data(f), data);
			kv_node_unlatch_unpin(kv, f, BP_LATCH_SHARED);
		}
	}
	if (rc) {
		kv_mem_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

void kv_mem_free(struct kv_mem *m)
{
	if (!m)
		return;
	free(m->pages);
	free(m);
}

uint64_t kv_mem_pages(const struct kv_mem *m) { return m ? m->npages : 0; }
uint64_t kv_mem_bytes(const struct kv_mem *m) { return m ? m->npages * m->stride : 0; }

int kv_mem_get(const struct kv_mem *m, uint64_t key, void *value)
{
	if (!m || !value)
		return -EINVAL;
	const struct kv_store *kv = m->kv;
	const struct kv_meta *meta = (const struct kv_meta *)m->pages;
	unsigned level = meta->height;
	const uint8_t *page = page_at(m, meta->root);
	/* every step goes one level down, so a damaged copy cannot loop us */
	if (!page || kv_page_hdr(page)->level != level)
		return -EBADMSG;
	while (level > 0) {
		const struct kv_node_hdr *h = kv_page_hdr(page);
		uint64_t next = kv_page_children(kv, page)[kv_upper_bound(kv_page_keys(page), h->nkeys, key)];
		page = page_at(m, next);
		if (!page || kv_page_hdr(page)->level != --level)
			return -EBADMSG;
	}
	unsigned n = kv_page_hdr(page)->nkeys, i = kv_lower_bound(kv_page_keys(page), n, key);
	if (i >= n || kv_page_keys(page)[i] != key)
		return -ENOENT;
	memcpy(value, kv_page_value_at(kv, page, i), kv->value_size);
	return 0;
}
