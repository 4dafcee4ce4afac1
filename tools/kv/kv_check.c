/* SPDX-License-Identifier: MIT */
/*
 * kv_check.c - the structure check of the kv store (kv_check, see kv.h).
 *
 * Design note
 * -----------
 * Layer: the store, on bufpool (see kv.h); reads the tree through
 * kv_node.h's helpers only.
 *
 * A depth-first walk from the root: each node is read under a shared latch
 * and released before its children are visited (at most one page pinned at
 * a time besides the meta page), so it must run while no writer changes the
 * tree.  A bitmap of pages seen catches a page reached twice; the leaves met
 * in tree order must be exactly the leaf chain, in order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv.h"
#include "kv_node.h"

struct kv_check_ctx {
	struct kv_store *kv;
	struct kv_check_info *info;
	uint8_t *seen;          /* bitmap of pages reached */
	uint64_t npages;
	uint64_t expect_leaf;   /* the previous leaf's next; KV_NO_PAGE at the start */
	bool any_leaf;
	bool any_key;
	uint64_t last_key;
};

#define KV_CHECK_FAIL(ctx, ...) \
	(snprintf((ctx)->info->error, sizeof((ctx)->info->error), __VA_ARGS__), -EBADMSG)

/* Check the subtree at pageno: level, keys sorted and in [lo, hi). */
static int check_node(struct kv_check_ctx *ctx, uint64_t pageno, unsigned level,
		      uint64_t lo, bool has_hi, uint64_t hi)
{
	struct kv_store *kv = ctx->kv;
	struct bp_frame *f;
	if (pageno == 0 || pageno >= ctx->npages)
		return KV_CHECK_FAIL(ctx, "page %llu out of range", (unsigned long long)pageno);
	if (ctx->seen[pageno / 8] & (1u << (pageno % 8)))
		return KV_CHECK_FAIL(ctx, "page %llu reached twice", (unsigned long long)pageno);
	ctx->seen[pageno / 8] |= (uint8_t)(1u << (pageno % 8));
	int rc = kv_node_pin_latch(kv, pageno, BP_LATCH_SHARED, &f);
	if (rc)
		return rc == -EBADMSG ? KV_CHECK_FAIL(ctx, "page %llu: bad key count",
						   (unsigned long long)pageno) : rc;
	const struct kv_node_hdr *h = kv_hdr_of(f);
	const uint64_t *k = kv_keys_of(f);
	unsigned n = h->nkeys;
	uint64_t *children = NULL;
	if (h->level != level)
		rc = KV_CHECK_FAIL(ctx, "page %llu: level %u, expected %u",
				(unsigned long long)pageno, h->level, level);
	for (unsigned i = 0; rc == 0 && i < n; i++)
		if ((i > 0 && k[i] <= k[i - 1]) || k[i] < lo || (has_hi && k[i] >= hi))
			rc = KV_CHECK_FAIL(ctx, "page %llu: key %u (%llu) out of order or bounds",
					(unsigned long long)pageno, i, (unsigned long long)k[i]);
	if (rc == 0 && level == 0) {
		if (ctx->any_leaf && ctx->expect_leaf != pageno)
			rc = KV_CHECK_FAIL(ctx, "leaf chain goes to %llu, tree to %llu",
					(unsigned long long)ctx->expect_leaf, (unsigned long long)pageno);
		else if (n && ctx->any_key && k[0] <= ctx->last_key)
			rc = KV_CHECK_FAIL(ctx, "page %llu: keys not above the previous leaf",
					(unsigned long long)pageno);
		ctx->any_leaf = true;
		ctx->expect_leaf = h->next;
		if (n) {
			ctx->any_key = true;
			ctx->last_key = k[n - 1];
		}
		ctx->info->nkeys += n;
		ctx->info->leaves++;
	} else if (rc == 0) {
		ctx->info->internal++;
		if (n == 0)
			rc = KV_CHECK_FAIL(ctx, "inner page %llu is empty", (unsigned long long)pageno);
		else if (!(children = malloc((2 * (size_t)n + 1) * sizeof(uint64_t))))
			rc = -ENOMEM;
		else {
			memcpy(children, kv_children_of(kv, f), (n + 1) * sizeof(uint64_t));
			memcpy(children + n + 1, k, n * sizeof(uint64_t));
		}
	}
	kv_node_unlatch_unpin(kv, f, BP_LATCH_SHARED); /* children are checked unlatched */
	for (unsigned i = 0; rc == 0 && children && i <= n; i++) {
		const uint64_t *ck = children + n + 1;
		rc = check_node(ctx, children[i], level - 1, i ? ck[i - 1] : lo,
				i < n ? true : has_hi, i < n ? ck[i] : hi);
	}
	free(children);
	return rc;
}

int kv_check(struct kv_store *kv, struct kv_check_info *info)
{
	if (!kv || !info)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	struct kv_check_ctx ctx = {.kv = kv, .info = info, .npages = bp_file_page_count(kv->file)};
	ctx.seen = calloc(ctx.npages / 8 + 1, 1);
	if (!ctx.seen)
		return -ENOMEM;
	bp_latch(kv->pool, kv->meta, BP_LATCH_SHARED);
	const struct kv_meta *m = bp_data(kv->meta);
	uint64_t root = m->root;
	info->height = m->height;
	bp_unlatch(kv->pool, kv->meta, BP_LATCH_SHARED);
	int rc = check_node(&ctx, root, info->height, 0, false, 0);
	if (rc == 0 && ctx.expect_leaf != KV_NO_PAGE)
		rc = KV_CHECK_FAIL(&ctx, "last leaf points on to page %llu",
				(unsigned long long)ctx.expect_leaf);
	free(ctx.seen);
	return rc;
}
