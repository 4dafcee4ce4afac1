/* SPDX-License-Identifier: MIT */
/*
 * statsfile.h - the stats file: a pool's statistics in a small shared
 * mapping, written by the pool's publisher thread (statspub.c,
 * bp_stats_publish) and read by bpstat from another process.
 *
 * Design note
 * -----------
 * Internal to this repository (not installed): the library and
 * tools/bpstat include it; nothing else may rely on the layout.  The file
 * (default /dev/shm/bufpool.<pid>.<name>) holds one struct bp_statsfile.
 * Its first 16 bytes, struct bp_sf_head, never change from one layout to
 * the next, so a reader of any version can say what it found (not a stats
 * file, or a stats file of layout N and S bytes) and refuse the rest: an
 * installed bpstat reads only the files of the library it was built with,
 * and says so instead of showing garbage.  Bump BP_SF_LAYOUT whenever
 * anything after the head changes (struct bp_stats included: the size
 * check catches a grown bp_stats even if the bump is forgotten).
 *
 * One writer, any number of readers, in any processes: the publisher
 * thread is the only writer of the mapping; readers map it read-only.
 * Consistency is a seqlock on seq: the writer makes seq odd, stores the
 * data, makes seq even; a reader accepts a copy only if seq was even and
 * unchanged across it.  Every data word is stored and loaded with relaxed
 * atomics (__atomic builtins on the words of the plain struct), so a
 * reader that races an update reads stale or new words, never tearing a
 * word and never a data race in the C11 model; the seq protocol then
 * throws such a mixed copy away.  The two fences, each named with its
 * pair at bp_sf_store and bp_sf_load_once:
 *   writer: seq = odd (relaxed); release fence; data stores; seq = even
 *           (release store)
 *   reader: s1 = seq (acquire load); data loads; acquire fence; s2 = seq
 *           (relaxed); accept iff s1 == s2 and s1 even.
 * If the reader's copy saw any store of an update, its acquire fence
 * synchronises with that update's release fence (fence-to-fence through
 * the data word), so s2 reads the odd seq or later and the copy is
 * refused.  If s1 read an even seq written by the release store, the
 * data stores before it happen-before the copy.  The mapping is
 * MAP_SHARED on one machine, so the C11 argument holds across the
 * processes as across threads (the kernel maps the same physical pages).
 *
 * Per-page waits ("hot pages"): the publisher wakes every
 * BP_STATS_PUBLISH_PERIOD_MS, reads each frame's cumulative wait_ns and
 * credits what it grew since the previous look to the page the frame holds
 * now; the BP_SF_TOP_N pages that waited longest in that window go into
 * windows[no % BP_SF_WINDOWS] with the window's number no (1, 2, ...).  A
 * reader sums a page's waits over the windows numbered after its previous
 * snapshot's `window`: waits during its own interval, keyed by page, for
 * any interval up to BP_SF_WINDOWS periods long (12.8 s).  A frame that
 * took another page during a window has that window's waits credited to
 * the new page.  A wait is accounted as it ends, by a thread that holds a
 * pin (the frame keeps its page) or that waited for a write-back (which
 * keeps the frame from eviction until it ends), so what is misplaced is a
 * wait on the old page that ended in the same window before the page left
 * (and, rarely, a write-back wait whose frame is taken in the instant
 * between the write's end and its accounting).
 */
#ifndef BUFPOOL_STATSFILE_H
#define BUFPOOL_STATSFILE_H

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "bufpool/bufpool.h"
#include "util/fence.h"

#define BP_SF_MAGIC UINT32_C(0x46535042) /* "BPSF" */
#define BP_SF_LAYOUT 1u
#define BP_SF_TOP_N 16u      /* hot pages kept per window */
#define BP_SF_WINDOWS 128u   /* windows kept: 12.8 s at 100 ms */
#define BP_SF_DIR "/dev/shm"
#define BP_SF_PREFIX "bufpool." /* BP_SF_DIR/bufpool.<pid>.<name> */
#define BP_SF_NAME_MAX 63u

/* Never changes: what any reader checks first. */
struct bp_sf_head {
	uint32_t magic;  /* BP_SF_MAGIC */
	uint32_t layout; /* BP_SF_LAYOUT of the writer */
	uint32_t size;   /* sizeof(struct bp_statsfile) of the writer */
	int32_t pid;     /* the publishing process */
};

struct bp_sf_page {
	uint64_t pageno;
	uint64_t wait_ns; /* waited on this page during the window */
	uint32_t file;    /* bp_file_id of its file (0: bp_open's) */
	uint32_t reserved;
};

struct bp_sf_window {
	uint64_t no;      /* the window's number; 0: never written */
	uint64_t end_ns;  /* CLOCK_MONOTONIC at its end */
	uint32_t n;       /* valid entries of top[], longest wait first */
	uint32_t reserved;
	struct bp_sf_page top[BP_SF_TOP_N];
};

struct bp_statsfile {
	struct bp_sf_head head;   /* written once, before the file is visible */
	_Atomic uint64_t seq;     /* seqlock: odd while the publisher writes */
	uint64_t period_ns;       /* the publisher's period */
	uint64_t updates;         /* updates published (the heartbeat) */
	uint64_t mono_ns;         /* CLOCK_MONOTONIC of this update */
	uint64_t start_ns;        /* CLOCK_MONOTONIC when publishing began */
	uint64_t since_ns;        /* the counters count from here: start, or
				   * the last bp_stats_reset */
	uint64_t ops;             /* bp_stats_publish_ops' last value */
	uint64_t window;          /* the newest window's number (0: none) */
	char name[BP_SF_NAME_MAX + 1];
	struct bp_stats stats;
	struct bp_sf_window windows[BP_SF_WINDOWS];
};
_Static_assert(sizeof(struct bp_statsfile) % sizeof(uint64_t) == 0,
	       "bp_sf_store and bp_sf_load_once copy the file in 64-bit words");
_Static_assert(offsetof(struct bp_statsfile, seq) % sizeof(uint64_t) == 0, "seq is a word");

#define BP_SF_WORDS (sizeof(struct bp_statsfile) / sizeof(uint64_t))
#define BP_SF_SEQ_WORD (offsetof(struct bp_statsfile, seq) / sizeof(uint64_t))

/* The writer: copy snap (a private, complete image) into the mapping as
 * one seqlock update.  The only writer of map (its caller serialises). */
static inline void bp_sf_store(struct bp_statsfile *map, const struct bp_statsfile *snap)
{
	uint64_t *dst = (uint64_t *)(void *)map;
	const uint64_t *src = (const uint64_t *)(const void *)snap;
	uint64_t seq = atomic_load_explicit(&map->seq, memory_order_relaxed);

	atomic_store_explicit(&map->seq, seq + 1, memory_order_relaxed);
	/* Orders the odd seq before the data stores below; pairs with the
	 * reader's acquire fence in bp_sf_load_once: a reader that loaded
	 * any word stored below then reads seq odd (or later) and retries. */
	util_fence_release();
	for (size_t i = 0; i < BP_SF_WORDS; i++)
		if (i != BP_SF_SEQ_WORD)
			__atomic_store_n(&dst[i], src[i], __ATOMIC_RELAXED);
	/* Publishes the data with the even seq; pairs with the reader's
	 * acquire load of seq before its copy. */
	atomic_store_explicit(&map->seq, seq + 2, memory_order_release);
}

/* The reader: one try at a consistent copy of map into *out.  0, or
 * -EAGAIN when an update was in progress or ran across the copy (the
 * caller retries, backing off as it likes). */
static inline int bp_sf_load_once(const struct bp_statsfile *map, struct bp_statsfile *out)
{
	const uint64_t *src = (const uint64_t *)(const void *)map;
	uint64_t *dst = (uint64_t *)(void *)out;

	/* Pairs with bp_sf_store's release store of the even seq: the data
	 * of that update is visible to the loads below. */
	uint64_t s1 = atomic_load_explicit(&map->seq, memory_order_acquire);
	if (s1 & 1)
		return -EAGAIN;
	for (size_t i = 0; i < BP_SF_WORDS; i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
	/* Orders the copy before the re-read of seq; pairs with bp_sf_store's
	 * release fence after it made seq odd. */
	util_fence_acquire();
	if (atomic_load_explicit(&map->seq, memory_order_relaxed) != s1)
		return -EAGAIN;
	return 0;
}

#endif
