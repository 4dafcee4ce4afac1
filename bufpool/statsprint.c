/* SPDX-License-Identifier: MIT */
/*
 * statsprint.c - bp_stats_print: the stats through the project's one
 * emitter (util/emitter.c), as a table, JSON or one JSON line.
 *
 * Layer 10 (stats printer): calls no other file of bufpool.
 *
 * Design note
 * -----------
 * The stats are walked once by print_stats(), which only tells the emitter
 * what each item is (a group, a number, a string, a histogram); the
 * emitter decides how it looks, as jemalloc's malloc_stats_print does.
 * The "counters" dict is BP_COUNTERS (internal.h) expanded in its order,
 * each key its struct bp_stats field's name.
 * Output goes through the caller's write callback, so the public header
 * needs no <stdio.h> and the caller decides where it lands.  No state
 * outside the call.
 */
#include <errno.h>
#include <inttypes.h>

#include "bufpool/internal.h"
#include "util/emitter.h"

/* A log2 histogram: JSON [[log2_ns, count], ...] for the non-empty
 * buckets; the table "2^i:count ..." on one line ("-" when empty). */
static void em_hist(struct emitter *e, const char *name, const uint64_t *b, size_t n)
{
	bool any = false;

	if (emitter_is_json(e)) {
		emitter_list_begin(e, name);
		for (size_t i = 0; i < n; i++) {
			if (!b[i])
				continue;
			emitter_list_begin(e, NULL);
			emitter_kv_u64(e, NULL, i);
			emitter_kv_u64(e, NULL, b[i]);
			emitter_list_end(e);
		}
		emitter_list_end(e);
		return;
	}
	emitter_table_printf(e, "%*s%-*s ", 2 * e->depth, "", e->key_width, name);
	for (size_t i = 0; i < n; i++) {
		if (!b[i])
			continue;
		emitter_table_printf(e, "2^%zu:%" PRIu64 " ", i, b[i]);
		any = true;
	}
	emitter_table_printf(e, any ? "\n" : "-\n");
}

static void print_wait(struct emitter *e, const char *name, const struct bp_wait_hist *h)
{
	emitter_dict_begin(e, name);
	emitter_kv_u64(e, "count", h->count);
	emitter_kv_u64(e, "total_ns", h->total_ns);
	emitter_kv_u64(e, "mean_ns", h->count ? h->total_ns / h->count : 0);
	emitter_kv_u64(e, "max_ns", h->max_ns);
	em_hist(e, "ns_log2_hist", h->ns_hist, FWAIT_HIST_BUCKETS);
	emitter_dict_end(e);
}

static void print_stats(struct emitter *e, const struct bp_stats *s)
{
	emitter_dict_begin(e, NULL);
	emitter_dict_begin(e, "config");
	emitter_kv_u64(e, "page_size", s->page_size);
	emitter_kv_u64(e, "nframes", s->nframes);
	emitter_kv_u64(e, "partitions", s->partitions);
	emitter_kv_u64(e, "io_threads", s->io_threads);
	emitter_kv_str(e, "io_engine", s->io_engine == BP_IO_ENGINE_URING ? "io_uring" : "threads");
	emitter_kv_u64(e, "io_depth", s->io_depth);
	emitter_kv_str(e, "policy", fwait_policy_name(s->policy));
	emitter_kv_u64(e, "jemalloc_arena", s->jemalloc_arena);
	emitter_kv_u64(e, "pool_bytes", s->pool_bytes);
	emitter_kv_u64(e, "file_pages", s->file_pages);
	emitter_dict_end(e);
	emitter_dict_begin(e, "counters");
	/* BP_COUNTERS' rows in their order, each under its field's name; the
	 * N rows are internal (stats.c derives fields from them). */
#define BP_PRINT_C_(name, field) emitter_kv_u64(e, #field, s->field);
#define BP_PRINT_D_(field, type) emitter_kv_##type(e, #field, s->field);
#define BP_PRINT_N_(name)
	BP_COUNTERS(BP_PRINT_C_, BP_PRINT_D_, BP_PRINT_N_)
#undef BP_PRINT_C_
#undef BP_PRINT_D_
#undef BP_PRINT_N_
	emitter_dict_end(e);
	emitter_dict_begin(e, "waits");
	print_wait(e, "io", &s->io_wait);
	print_wait(e, "writeback", &s->writeback_wait);
	print_wait(e, "latch_shared", &s->latch_shared_wait);
	print_wait(e, "latch_exclusive", &s->latch_exclusive_wait);
	print_wait(e, "frame", &s->frame_wait);
	print_wait(e, "inline_read", &s->inline_read);
	emitter_dict_end(e);
	emitter_dict_begin(e, "frames");
	emitter_kv_u64(e, "mapped", s->frames_mapped);
	emitter_kv_u64(e, "pinned", s->frames_pinned);
	emitter_kv_u64(e, "dirty", s->frames_dirty);
	emitter_kv_u64(e, "writeback", s->frames_writeback);
	emitter_kv_u64(e, "locked", s->frames_locked);
	emitter_dict_end(e);
	emitter_dict_begin(e, "log");
	emitter_kv_u64(e, "durable_lsn", s->durable_lsn);
	emitter_kv_u64(e, "oldest_dirty_lsn", s->oldest_dirty_lsn);
	emitter_dict_end(e);
	emitter_dict_begin(e, "fwait");
	emitter_kv_u64(e, "waits", s->fwait.waits);
	emitter_kv_u64(e, "wakeups", s->fwait.wakeups);
	emitter_kv_u64(e, "spurious_wakeups", s->fwait.spurious_wakeups);
	emitter_kv_u64(e, "foreign_skipped", s->fwait.foreign_skipped);
	emitter_kv_u64(e, "timeouts", s->fwait.timeouts);
	emitter_kv_u64(e, "handoffs", s->fwait.handoffs);
	emitter_kv_u64(e, "slow_wakes", s->fwait.slow_wakes);
	emitter_kv_u64(e, "slow_waits", s->fwait.slow_waits);
	emitter_kv_u64(e, "max_bucket_depth", s->fwait.max_bucket_depth);
	emitter_kv_u64(e, "nbuckets", s->fwait.nbuckets);
	emitter_kv_u64(e, "table_bytes", s->fwait.table_bytes);
	em_hist(e, "wait_ns_log2_hist", s->fwait.wait_ns_hist, FWAIT_HIST_BUCKETS);
	emitter_dict_end(e);
	emitter_dict_end(e);
}

int bp_stats_print(const struct bp_stats *s, bp_write_cb *write, void *arg,
		   enum bp_stats_format fmt)
{
	static const enum emitter_output out[] = {
		[BP_STATS_TABLE] = EMITTER_TABLE,
		[BP_STATS_JSON] = EMITTER_JSON,
		[BP_STATS_JSON_COMPACT] = EMITTER_JSON_COMPACT,
	};
	struct emitter e;
	struct bp_stats all;

	if (!s || !write || (unsigned)fmt >= sizeof(out) / sizeof(out[0]))
		return -EINVAL;
	/* An older program's shorter struct: its missing fields print as 0. */
	int r = bp_struct_in(&all, sizeof all, s, s->size, BP_STATS_SIZE_VER0);
	if (r < 0)
		return r;
	emitter_init(&e, out[fmt], write, arg);
	print_stats(&e, &all);
	return emitter_finish(&e);
}
