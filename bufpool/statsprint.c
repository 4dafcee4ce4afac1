/*
 * statsprint.c - bp_stats_print: one emitter, two back-ends.
 *
 * Layer 10 (stats printer): calls no other file of bufpool.
 *
 * Design note
 * -----------
 * The stats are walked once by print_stats(), which only calls the emitter
 * (begin/end of a group, a number, a string, a histogram).  The emitter
 * writes either an indented human table or one JSON object, as jemalloc's
 * malloc_stats_print does with its emitter.  No state outside the call.
 */
#include <errno.h>
#include <inttypes.h>

#include "bufpool/internal.h"

#define EM_MAX_DEPTH 8

struct emitter {
	FILE *out;
	enum bp_stats_format fmt;
	int depth;
	bool first[EM_MAX_DEPTH]; /* JSON: no comma before the first member */
};

static void em_indent(struct emitter *e)
{
	for (int i = 0; i < e->depth; i++)
		fputs("  ", e->out);
}

static void em_key(struct emitter *e, const char *name)
{
	if (e->fmt == BP_STATS_JSON) {
		fputs(e->first[e->depth] ? "\n" : ",\n", e->out);
		e->first[e->depth] = false;
		em_indent(e);
		fprintf(e->out, "\"%s\": ", name);
	} else {
		em_indent(e);
		fprintf(e->out, "%-24s ", name);
	}
}

static void em_begin(struct emitter *e, const char *name)
{
	if (e->fmt == BP_STATS_JSON) {
		if (name)
			em_key(e, name);
		fputc('{', e->out);
	} else if (name) {
		em_indent(e);
		fprintf(e->out, "%s:\n", name);
	}
	if (e->depth + 1 < EM_MAX_DEPTH)
		e->depth++;
	e->first[e->depth] = true;
}

static void em_end(struct emitter *e)
{
	if (e->depth > 0)
		e->depth--;
	if (e->fmt == BP_STATS_JSON) {
		fputc('\n', e->out);
		em_indent(e);
		fputc('}', e->out);
		if (e->depth == 0)
			fputc('\n', e->out);
	}
}

static void em_u64(struct emitter *e, const char *name, uint64_t v)
{
	em_key(e, name);
	fprintf(e->out, e->fmt == BP_STATS_JSON ? "%" PRIu64 : "%" PRIu64 "\n", v);
}

static void em_str(struct emitter *e, const char *name, const char *s)
{
	em_key(e, name);
	fprintf(e->out, e->fmt == BP_STATS_JSON ? "\"%s\"" : "%s\n", s);
}

static void em_hist(struct emitter *e, const char *name, const uint64_t *b, size_t n)
{
	em_key(e, name);
	if (e->fmt == BP_STATS_JSON) {
		/* [[log2_ns, count], ...] for the non-empty buckets */
		bool first = true;
		fputc('[', e->out);
		for (size_t i = 0; i < n; i++) {
			if (!b[i])
				continue;
			fprintf(e->out, "%s[%zu, %" PRIu64 "]", first ? "" : ", ", i, b[i]);
			first = false;
		}
		fputc(']', e->out);
	} else {
		bool any = false;
		for (size_t i = 0; i < n; i++) {
			if (!b[i])
				continue;
			fprintf(e->out, "2^%zu:%" PRIu64 " ", i, b[i]);
			any = true;
		}
		fputs(any ? "\n" : "-\n", e->out);
	}
}

static void print_wait(struct emitter *e, const char *name, const struct bp_wait_hist *h)
{
	em_begin(e, name);
	em_u64(e, "count", h->count);
	em_u64(e, "total_ns", h->total_ns);
	em_u64(e, "mean_ns", h->count ? h->total_ns / h->count : 0);
	em_u64(e, "max_ns", h->max_ns);
	em_hist(e, "ns_log2_hist", h->ns_hist, FWAIT_HIST_BUCKETS);
	em_end(e);
}

static void print_stats(struct emitter *e, const struct bp_stats *s)
{
	em_begin(e, NULL);
	em_begin(e, "config");
	em_u64(e, "page_size", s->page_size);
	em_u64(e, "nframes", s->nframes);
	em_u64(e, "partitions", s->partitions);
	em_u64(e, "io_threads", s->io_threads);
	em_str(e, "policy", fwait_policy_name(s->policy));
	em_u64(e, "jemalloc_arena", s->jemalloc_arena);
	em_u64(e, "pool_bytes", s->pool_bytes);
	em_u64(e, "file_pages", s->file_pages);
	em_end(e);
	em_begin(e, "counters");
	em_u64(e, "hits", s->hits);
	em_u64(e, "misses", s->misses);
	em_u64(e, "reads", s->reads);
	em_u64(e, "writes", s->writes);
	em_u64(e, "readaheads", s->readaheads);
	em_u64(e, "creates", s->creates);
	em_u64(e, "evictions", s->evictions);
	em_u64(e, "dirty_evictions", s->dirty_evictions);
	em_u64(e, "bgwriter_writes", s->bgwriter_writes);
	em_u64(e, "fsyncs", s->fsyncs);
	em_u64(e, "read_errors", s->read_errors);
	em_u64(e, "write_errors", s->write_errors);
	em_u64(e, "fsync_errors", s->fsync_errors);
	em_u64(e, "faults_injected", s->faults_injected);
	em_u64(e, "busy", s->busy);
	em_end(e);
	em_begin(e, "waits");
	print_wait(e, "io", &s->io_wait);
	print_wait(e, "writeback", &s->writeback_wait);
	print_wait(e, "latch_shared", &s->latch_shared_wait);
	print_wait(e, "latch_exclusive", &s->latch_exclusive_wait);
	print_wait(e, "frame", &s->frame_wait);
	em_end(e);
	em_begin(e, "frames");
	em_u64(e, "mapped", s->frames_mapped);
	em_u64(e, "pinned", s->frames_pinned);
	em_u64(e, "dirty", s->frames_dirty);
	em_u64(e, "writeback", s->frames_writeback);
	em_u64(e, "locked", s->frames_locked);
	em_end(e);
	em_begin(e, "fwait");
	em_u64(e, "waits", s->fwait.waits);
	em_u64(e, "wakeups", s->fwait.wakeups);
	em_u64(e, "spurious_wakeups", s->fwait.spurious_wakeups);
	em_u64(e, "foreign_skipped", s->fwait.foreign_skipped);
	em_u64(e, "timeouts", s->fwait.timeouts);
	em_u64(e, "handoffs", s->fwait.handoffs);
	em_u64(e, "slow_wakes", s->fwait.slow_wakes);
	em_u64(e, "slow_waits", s->fwait.slow_waits);
	em_u64(e, "max_bucket_depth", s->fwait.max_bucket_depth);
	em_u64(e, "nbuckets", s->fwait.nbuckets);
	em_u64(e, "table_bytes", s->fwait.table_bytes);
	em_hist(e, "wait_ns_log2_hist", s->fwait.wait_ns_hist, FWAIT_HIST_BUCKETS);
	em_end(e);
	em_end(e);
}

int bp_stats_print(const struct bp_stats *s, FILE *out, enum bp_stats_format fmt)
{
	if (!s || !out || (fmt != BP_STATS_TABLE && fmt != BP_STATS_JSON))
		return -EINVAL;
	struct emitter e = { .out = out, .fmt = fmt, .depth = 0 };
	e.first[0] = true;
	print_stats(&e, s);
	if (fflush(out) != 0 || ferror(out))
		return -EIO;
	return 0;
}
