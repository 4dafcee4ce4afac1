/* SPDX-License-Identifier: MIT */
/*
 * pagemem.h - where the pool's page memory and frame metadata come from
 * (pagemem.c).  Private to the library.
 */
#ifndef BUFPOOL_PAGEMEM_H
#define BUFPOOL_PAGEMEM_H

#include <stddef.h>

#include "bufpool/bufpool.h" /* BP_NO_ARENA */

/* A new private arena for one pool: its jemalloc arena index, or
 * BP_NO_ARENA when the library is built without jemalloc.
 * 0, or -ENOMEM when jemalloc cannot create one. */
int bp_pagemem_create(unsigned *arena);

/* bytes of zeroed memory aligned to align (a power of two, a multiple of
 * sizeof(void *)), from arena; NULL when out of memory. */
void *bp_pagemem_alloc(unsigned arena, size_t bytes, size_t align);

/* Frees a block of bp_pagemem_alloc (NULL: nothing). */
void bp_pagemem_free(unsigned arena, void *ptr);

/* Destroys the arena of bp_pagemem_create, once its blocks are freed. */
void bp_pagemem_destroy(unsigned arena);

#endif
