/* SPDX-License-Identifier: MIT */
/*
 * pagemem.c - the pool's page memory and frame metadata.
 *
 * Layer 3 (page memory): calls no other file of bufpool (only jemalloc or
 * the system allocator).
 *
 * Design note
 * -----------
 * Two implementations, chosen at build time (-Djemalloc, which defines
 * BUFPOOL_HAVE_JEMALLOC):
 *   - jemalloc: each pool gets a dedicated arena (arenas.create) and its
 *     blocks come from mallocx(MALLOCX_ARENA | MALLOCX_ALIGN | MALLOCX_ZERO)
 *     without the thread cache, so the pool's memory shows on its own in
 *     jemalloc's stats.arenas.<i>; the arena is destroyed with the pool.
 *     Only the non-standard entry points are called (mallctl, mallocx,
 *     dallocx): the library never depends on which malloc the process uses.
 *   - system: posix_memalign, then memset to zero (which touches, and so
 *     commits, the whole pool at bp_open); there is no arena and
 *     bp_stats.jemalloc_arena reads BP_NO_ARENA.
 * Alignment: page memory to the page size (O_DIRECT), frames to a cache line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bufpool/pagemem.h"

#ifdef BUFPOOL_HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>

#define PM_FLAGS(arena) (MALLOCX_ARENA(arena) | MALLOCX_TCACHE_NONE)

int bp_pagemem_create(unsigned *arena)
{
	size_t sz = sizeof(*arena);
	if (mallctl("arenas.create", arena, &sz, NULL, 0) != 0)
		return -ENOMEM;
	return 0;
}

void *bp_pagemem_alloc(unsigned arena, size_t bytes, size_t align)
{
	return mallocx(bytes, PM_FLAGS(arena) | MALLOCX_ALIGN(align) | MALLOCX_ZERO);
}

void bp_pagemem_free(unsigned arena, void *ptr)
{
	if (ptr)
		dallocx(ptr, PM_FLAGS(arena));
}

void bp_pagemem_destroy(unsigned arena)
{
	char name[64];
	snprintf(name, sizeof(name), "arena.%u.destroy", arena);
	mallctl(name, NULL, NULL, NULL, 0);
}

#else /* system allocator */

int bp_pagemem_create(unsigned *arena)
{
	*arena = BP_NO_ARENA;
	return 0;
}

void *bp_pagemem_alloc(unsigned arena, size_t bytes, size_t align)
{
	(void)arena;
	void *p = NULL;
	if (posix_memalign(&p, align, bytes ? bytes : 1) != 0)
		return NULL;
	memset(p, 0, bytes);
	return p;
}

void bp_pagemem_free(unsigned arena, void *ptr)
{
	(void)arena;
	free(ptr);
}

void bp_pagemem_destroy(unsigned arena)
{
	(void)arena;
}

#endif
