/* SPDX-License-Identifier: MIT */
/*
 * stats.c - the pool's introspection: bp_stats_get/reset over the counters
 * and wait histograms (kept by account.c), and the per-frame views
 * (bp_frames_walk, bp_frames_hottest, bp_flags_format).
 *
 * Layer 9 (stats): calls only pool.c, latch.c, writeback.c and account.c.
 *
 * Design note
 * -----------
 * The counters and histograms are kept by account.c (sharded, relaxed
 * atomics; see its note); bp_stats_get sums the shards, one relaxed load
 * each, so a snapshot is exact per counter but not one atomic cut.  The
 * counters come from one table, BP_COUNTERS (internal.h): its plain rows
 * are copied by expanding it; the fields it does not give 1:1 (the
 * optimistic reads, inline_reads, durability_err) are filled by hand.
 * The snapshot is taken whole, then only the caller's size bytes of it
 * copied out (struct bp_stats' size field, bufpool.h).
 *
 * bp_stats_print (statsprint.c) is one emitter walking the stats once, with
 * two back-ends (human table, JSON), as jemalloc's malloc_stats_print.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bufpool/internal.h"
#include "util/clock.h"

/* Each C row of BP_COUNTERS names a uint64_t field of struct bp_stats: the
 * copy in bp_stats_get would otherwise truncate without a word. */
#define BP_FIELD_IS_U64_C_(name, field)						\
	_Static_assert(_Generic(((struct bp_stats *)0)->field, uint64_t: 1, default: 0), \
		       "BP_COUNTERS: " #field " is not a uint64_t of struct bp_stats");
#define BP_FIELD_IS_U64_D_(field, type)
#define BP_FIELD_IS_U64_N_(name)
BP_COUNTERS(BP_FIELD_IS_U64_C_, BP_FIELD_IS_U64_D_, BP_FIELD_IS_U64_N_)
#undef BP_FIELD_IS_U64_C_
#undef BP_FIELD_IS_U64_D_
#undef BP_FIELD_IS_U64_N_

static void hist_sum(struct bp_wait_hist *out, struct bp_hist_atomic *h)
{
	out->count += atomic_load_explicit(&h->count, memory_order_relaxed);
	out->total_ns += atomic_load_explicit(&h->total_ns, memory_order_relaxed);
	uint64_t m = atomic_load_explicit(&h->max_ns, memory_order_relaxed);
	if (m > out->max_ns)
		out->max_ns = m;
	for (unsigned i = 0; i < FWAIT_HIST_BUCKETS; i++)
		out->ns_hist[i] += atomic_load_explicit(&h->b[i], memory_order_relaxed);
}

/* The whole snapshot, in the library's own layout. */
static void stats_fill(struct bp_pool *pool, struct bp_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->page_size = pool->page_size;
	out->nframes = pool->nframes;
	out->partitions = pool->npart;
	out->io_threads = pool->io.nthreads;
	out->io_engine = pool->io.ring ? BP_IO_ENGINE_URING : BP_IO_ENGINE_THREADS;
	out->io_depth = pool->io.depth;
	out->policy = fwait_table_policy(pool->wt);
	out->jemalloc_arena = pool->arena;
	out->pool_bytes = pool->pages_bytes + pool->frames_bytes;
	out->file_pages = atomic_load_explicit(&bp_file0(pool)->npages, memory_order_relaxed);
	uint64_t c[BP_C_COUNT];
	bp_counters_sum(pool, c);
	for (unsigned i = 0; i < pool->npart; i++) {
		struct bp_counters *ctr = &pool->parts[i].ctr;
		hist_sum(&out->io_wait, &ctr->h[BP_H_IO]);
		hist_sum(&out->writeback_wait, &ctr->h[BP_H_WRITEBACK]);
		hist_sum(&out->latch_shared_wait, &ctr->h[BP_H_LATCH_S]);
		hist_sum(&out->latch_exclusive_wait, &ctr->h[BP_H_LATCH_X]);
		hist_sum(&out->frame_wait, &ctr->h[BP_H_FRAME]);
		hist_sum(&out->inline_read, &ctr->h[BP_H_INLINE_READ]);
	}
	/* The C rows of BP_COUNTERS, 1:1; the D rows by hand below. */
#define BP_COPY_C_(name, field) out->field = c[BP_C_##name];
#define BP_COPY_D_(field, type)
#define BP_COPY_N_(name)
	BP_COUNTERS(BP_COPY_C_, BP_COPY_D_, BP_COPY_N_)
#undef BP_COPY_C_
#undef BP_COPY_D_
#undef BP_COPY_N_
	/* begins tried less those refused (optread.c counts them so); a
	 * snapshot taken while a refusal is counted can see it before its
	 * begin, hence the clamp. */
	out->optimistic_reads = c[BP_C_OPT_BEGINS] > c[BP_C_OPT_REFUSED] ?
				c[BP_C_OPT_BEGINS] - c[BP_C_OPT_REFUSED] : 0;
	out->durability_err = bp_durability_err(pool);
	out->durable_lsn = atomic_load_explicit(&pool->durable_lsn, memory_order_relaxed);
	uint64_t oldest = bp_oldest_dirty_lsn(pool);
	out->oldest_dirty_lsn = oldest == UINT64_MAX ? 0 : oldest;
	for (uint32_t i = 0; i < pool->nframes; i++) {
		struct bp_frame *f = &pool->frames[i];
		uint32_t s = atomic_load_explicit(&f->state, memory_order_relaxed);
		if (atomic_load_explicit(&f->tag, memory_order_relaxed) != BP_NO_PAGE)
			out->frames_mapped++;
		out->frames_pinned += bp_pins(s) != 0;
		out->frames_dirty += (s & BP_F_DIRTY) != 0;
		out->frames_writeback += (s & BP_F_WRITEBACK) != 0;
		out->frames_locked += (s & BP_F_LOCKED) != 0;
	}
	/* After the histograms are summed (above): a D row of BP_COUNTERS,
	 * the count of inline_read. */
	out->inline_reads = out->inline_read.count;
	fwait_stats_get(pool->wt, &out->fwait);
}

int bp_stats_get(struct bp_pool *pool, struct bp_stats *out)
{
	if (!pool || !out || out->size < BP_STATS_SIZE_VER0)
		return -EINVAL;
	/* Only the caller's size bytes are written (an older program's struct
	 * is shorter); the bytes of a newer program's fields are zeroed. */
	size_t usize = out->size;
	size_t n = usize < sizeof(struct bp_stats) ? usize : sizeof(struct bp_stats);
	struct bp_stats all;
	stats_fill(pool, &all);
	all.size = n;
	memcpy(out, &all, n);
	memset((unsigned char *)out + n, 0, usize - n);
	return 0;
}

int bp_stats_reset(struct bp_pool *pool)
{
	if (!pool)
		return -EINVAL;
	bp_counters_reset(pool);
	for (unsigned i = 0; i < pool->npart; i++) {
		struct bp_counters *ctr = &pool->parts[i].ctr;
		for (unsigned k = 0; k < BP_H_COUNT; k++) {
			struct bp_hist_atomic *h = &ctr->h[k];
			atomic_store_explicit(&h->count, 0, memory_order_relaxed);
			atomic_store_explicit(&h->total_ns, 0, memory_order_relaxed);
			atomic_store_explicit(&h->max_ns, 0, memory_order_relaxed);
			for (unsigned b = 0; b < FWAIT_HIST_BUCKETS; b++)
				atomic_store_explicit(&h->b[b], 0, memory_order_relaxed);
		}
	}
	for (uint32_t i = 0; i < pool->nframes; i++)
		atomic_store_explicit(&pool->frames[i].wait_ns, 0, memory_order_relaxed);
	fwait_stats_reset(pool->wt);
	/* The stats file's since_ns (statspub.c): relaxed, a report. */
	atomic_store_explicit(&pool->stats_reset_ns, util_now_ns(), memory_order_relaxed);
	return 0;
}

/* ---- frame introspection ---- */

static void frame_info(struct bp_frame *f, struct bp_frame_info *info)
{
	uint32_t s = atomic_load_explicit(&f->state, memory_order_relaxed);
	info->frame = f->index;
	uint64_t tag = atomic_load_explicit(&f->tag, memory_order_relaxed);
	info->pageno = tag == BP_NO_PAGE ? tag : bp_tag_page(tag);
	info->file = tag == BP_NO_PAGE ? 0 : bp_tag_file(tag);
	info->flags = s & BP_FLAGS_MASK;
	info->pins = bp_pins(s);
	info->usage = (s & BP_F_REFERENCED) ? 1 : 0;
	bp_latch_peek(f, &info->latch_shared, &info->latch_exclusive, &info->latch_waiters);
	info->wait_ns = atomic_load_explicit(&f->wait_ns, memory_order_relaxed);
}

int bp_frames_walk(struct bp_pool *pool,
		   int (*fn)(const struct bp_frame_info *info, void *arg), void *arg)
{
	if (!pool || !fn)
		return -EINVAL;
	for (uint32_t i = 0; i < pool->nframes; i++) {
		struct bp_frame_info info;
		frame_info(&pool->frames[i], &info);
		int r = fn(&info, arg);
		if (r)
			return r;
	}
	return 0;
}

static int by_wait_desc(const void *a, const void *b)
{
	const struct bp_frame_info *x = a, *y = b;
	if (x->wait_ns != y->wait_ns)
		return x->wait_ns < y->wait_ns ? 1 : -1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

int bp_frames_hottest(struct bp_pool *pool, struct bp_frame_info *out, size_t n)
{
	if (!pool || (!out && n))
		return -EINVAL;
	struct bp_frame_info *all = malloc(sizeof(*all) * pool->nframes);
	if (!all)
		return -ENOMEM;
	size_t cnt = 0;
	for (uint32_t i = 0; i < pool->nframes; i++) {
		frame_info(&pool->frames[i], &all[cnt]);
		if (all[cnt].wait_ns)
			cnt++;
	}
	qsort(all, cnt, sizeof(*all), by_wait_desc);
	if (cnt > n)
		cnt = n;
	if (cnt)
		memcpy(out, all, cnt * sizeof(*all));
	free(all);
	return (int)cnt;
}

int bp_flags_format(uint32_t flags, char *buf, size_t len)
{
	/* Indexed by bit (bufpool.h's table), printed lowest bit first;
	 * reserved bits have no name and are not printed. */
#define BP_STATE_NAME_(name, bit, kind) [bit] = #name,
	static const char *const names[BP_PIN_SHIFT] = { BP_STATE_BITS(BP_STATE_NAME_) };
#undef BP_STATE_NAME_
	if (!buf || !len)
		return -EINVAL;
	size_t pos = 0;
	buf[0] = '\0';
	for (unsigned b = 0; b < BP_PIN_SHIFT; b++) {
		if (!(flags & (1u << b)) || !names[b])
			continue;
		int n = snprintf(buf + pos, len - pos, "%s%s", pos ? "|" : "", names[b]);
		if (n < 0)
			return -EINVAL;
		pos += (size_t)n;
		if (pos >= len) {
			pos = len - 1;
			break;
		}
	}
	if (pos == 0)
		pos = (size_t)snprintf(buf, len, "-") >= len ? len - 1 : 1;
	return (int)pos;
}
