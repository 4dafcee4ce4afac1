/* SPDX-License-Identifier: MIT */
/*
 * kv_mem.h - a read-only copy of a kv store in plain memory, searched by
 * the store's own node code with no pool: the physical floor that
 * `bpbench ycsb --no-pool` measures the pool against.
 *
 * Design note
 * -----------
 * Layer: the store (tools/kv), beside kv_check.c: on kv.c's page helpers
 * (kv_node.h) and bufpool's public API.  Every name is kv_mem_-prefixed.
 *
 * kv_mem_copy copies every page of the store's file, each pinned and
 * shared-latched while it is copied, into one array indexed by page
 * number, so a child page number is a direct index: no page table, no
 * pin, no latch.  The copy is a snapshot only if no writer runs while it
 * is taken; it never changes afterwards, so any number of threads may
 * call kv_mem_get at once.  It keeps a pointer to the store for the
 * node geometry (the capacities, the value size): free it before the
 * store is closed.
 */
#ifndef TOOLS_KV_KV_MEM_H
#define TOOLS_KV_KV_MEM_H

#include <stdint.h>

#include "kv.h"

struct kv_mem;

/* Copy every page of kv.  0, -ENOMEM, -EBADMSG (a page is not a node of
 * the store) or the pool's error; *out is set only on success. */
int kv_mem_copy(struct kv_store *kv, struct kv_mem **out);
/* Free the copy (NULL is a no-op). */
void kv_mem_free(struct kv_mem *m);
/* Pages copied, and the bytes the copy holds. */
uint64_t kv_mem_pages(const struct kv_mem *m);
uint64_t kv_mem_bytes(const struct kv_mem *m);
/* kv_get on the copy: the value of key into value (value_size bytes).
 * 0, -ENOENT, or -EBADMSG for a damaged tree. */
int kv_mem_get(const struct kv_mem *m, uint64_t key, void *value);

#endif
