/* SPDX-License-Identifier: MIT */
/*
 * ycsb_report.c - bpbench ycsb's reports: the configuration, the load and
 * the run (throughput, latency percentiles, CPU and context switches per
 * operation, the hit ratio, the pool's contention statistics).
 *
 * Design note
 * -----------
 * Layer: bpbench, on bufpool's statistics (bp_stats_get, bp_stats_print)
 * and util's emitter.  Each item is written once to each of the two
 * emitters (see ycsb_int.h): a line of the human report on R->out, a JSON
 * line on R->json with --json.  The run's summary (throughput, latency,
 * CPU, misses, contention) ends the human report; the pool's own report
 * is bp_stats_print's: its table goes through R->out only with --counters,
 * before that summary, and its compact JSON (always, with --json) is
 * collected in a buffer and embedded as the "stats" member of the
 * pool_stats line.  The hit ratio is ycsb_hit_ratio's, named by
 * YCSB_HIT_RATIO_DEF over the table (ycsb_int.h).
 *
 * --no-pool adds one table after the run's report (ycsb_report_floor):
 * the run on the pool and the floor on the plain copy, each as lookups,
 * seconds, lookups per second, lookups per CPU-second and user and sys
 * us per lookup, then the two ratios pool/floor; and a {"type":"floor"}
 * JSON line with the same figures.
 *
 * --durable adds the log's figures (report_log) to the load and the run,
 * and a "commit" row to the latency table: the histograms of the
 * operations that write (ycsb_ops[].writes: update, insert and
 * read-modify-write) merged.  With sync_commit a write returns
 * only once its change is in the log on disk, so its latency is the
 * commit latency as a client sees it (the wait for the group's fsync and
 * the tree work before it); the store offers no separate reading of the
 * fsync wait, and timing one inside kv_upsert would not be ours to add.
 * MB in the log's figures is 10^6 bytes, as in tiotest's MB/s.
 */
#include "bench_opt.h"
#include "ycsb_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* bp_stats_print's table through the human emitter (arg). */
static int table_write(void *arg, const char *text)
{
	struct emitter *e = arg;

	emitter_table_printf(e, "%s", text);
	return emitter_finish(e);
}

/* bp_stats_print's JSON collected in a growing string (arg). */
struct text_buf {
	char *s;
	size_t len, cap;
};

static int text_buf_write(void *arg, const char *text)
{
	struct text_buf *b = arg;
	size_t n = strlen(text);

	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *s = realloc(b->s, cap);
		if (!s)
			return -ENOMEM;
		b->s = s;
		b->cap = cap;
	}
	memcpy(b->s + b->len, text, n + 1);
	b->len += n;
	return 0;
}

void ycsb_report_config(struct ycsb_run *R, const char *file)
{
	const struct ycsb_opts *o = &R->o;
	struct emitter *h = &R->out, *j = &R->json;
	ycsb_emit_title(h, YCSB_PROG, o->mix, o->dist, o->theta, o->threads, o->records, o->ops,
			o->duration_s);
	emitter_table_printf(h, "  pool %u frames x %u B (%.1f MiB), value %u B, policy %s, "
			     "latency %u us, %s, file %s\n", o->frames, o->page_size,
			     (double)o->frames * o->page_size / 1048576.0, o->value_size,
			     fwait_policy_name(o->policy), o->latency_us,
			     o->checksums ? "checksums" : "no checksums", file);
	emitter_table_printf(h, "  I/O engine %s, read path %s%s\n", bench_io_engine_name(o->io_engine),
			     bench_read_path_name(o->read_path), o->direct ? ", O_DIRECT" : "");
	if (o->files > 1)
		emitter_table_printf(h, "  %u stores in the one pool: %s and %s.1 .. %s.%u, "
				     "record k in store k %% %u\n", o->files, file, file, file,
				     o->files - 1, o->files);
	/* what the store was asked for, the checkpoint interval as it applies */
	uint64_t ckpt = o->checkpoint_bytes ? o->checkpoint_bytes : KV_CHECKPOINT_BYTES_DEFAULT;
	if (o->durable) /* in MiB when whole (the default's 64), else in bytes */
		emitter_table_printf(h, "  durable: redo log %s.wal, sync_commit (a write returns once "
				     "its log record is on disk), checkpoint every "
				     "%" PRIu64 " %s of log\n", file,
				     ckpt % 1048576 ? ckpt : ckpt / 1048576,
				     ckpt % 1048576 ? "B" : "MiB");
	if (o->no_pool)
		emitter_table_printf(h, "  no pool: the load's pages written back before the run; "
				     "after it, the same reads on the tree copied to plain memory "
				     "(the floor)\n");
	if (!o->json)
		return;
	ycsb_json_begin(j, "config");
	ycsb_json_workload(j, o->mix, o->dist, o->theta, o->threads, o->records, o->ops,
			   o->duration_s);
	emitter_kv_u64(j, "frames", o->frames);
	emitter_kv_u64(j, "page_size", o->page_size);
	emitter_kv_u64(j, "value_size", o->value_size);
	emitter_kv_str(j, "policy", fwait_policy_name(o->policy));
	emitter_kv_u64(j, "latency_us", o->latency_us);
	emitter_kv_bool(j, "checksums", o->checksums);
	emitter_kv_str(j, "io_engine", bench_io_engine_name(o->io_engine));
	emitter_kv_str(j, "read_path", bench_read_path_name(o->read_path));
	emitter_kv_bool(j, "direct", o->direct);
	if (o->files > 1) /* absent with one store: that output is as it was */
		emitter_kv_u64(j, "files", o->files);
	emitter_kv_str(j, "file", file);
	if (o->no_pool) /* absent without --no-pool: that output is as it was */
		emitter_kv_bool(j, "no_pool", true);
	if (o->durable) { /* absent without --durable: that output is as it was */
		emitter_kv_bool(j, "durable", true);
		emitter_kv_bool(j, "sync_commit", true);
		emitter_kv_u64(j, "checkpoint_bytes", ckpt);
	}
	emitter_dict_end(j);
}

/* The log's work over the phase just ended (R->log1 - R->log0), two
 * lines under the phase's own and a {"type":"log","phase":...} line.
 * Commits per fsync is the group-commit factor: how many writes one
 * fdatasync made durable. */
static void report_log(struct ycsb_run *R, const char *phase, double secs)
{
	const struct kv_log_stats *a = &R->log0, *b = &R->log1;
	uint64_t commits = b->commits - a->commits, fsyncs = b->fsyncs - a->fsyncs,
		 records = b->records - a->records, bytes = b->bytes - a->bytes,
		 ckpts = b->checkpoints - a->checkpoints;
	double t = secs > 0 ? secs : 1;
	double per_fsync = fsyncs ? (double)commits / (double)fsyncs : 0,
	       per_commit = commits ? (double)bytes / (double)commits : 0;
	emitter_table_printf(&R->out, "  log: %.0f commits/s, %.0f fsyncs/s (%.1f commits per "
			     "fsync), %.2f MB/s (%.0f B per commit)\n", (double)commits / t,
			     (double)fsyncs / t, per_fsync, (double)bytes / 1e6 / t, per_commit);
	emitter_table_printf(&R->out, "       %" PRIu64 " commits, %" PRIu64 " fsyncs, %" PRIu64
			     " records, %.2f MB, %" PRIu64 " checkpoints\n", commits, fsyncs,
			     records, (double)bytes / 1e6, ckpts);
	if (!R->o.json)
		return;
	struct emitter *j = &R->json;
	ycsb_json_begin(&R->json, "log");
	emitter_kv_str(j, "phase", phase);
	emitter_kv_u64(j, "commits", commits);
	emitter_kv_u64(j, "fsyncs", fsyncs);
	emitter_kv_u64(j, "records", records);
	emitter_kv_u64(j, "bytes", bytes);
	emitter_kv_u64(j, "checkpoints", ckpts);
	emitter_kv_double(j, "commits_per_s", (double)commits / t, 1);
	emitter_kv_double(j, "fsyncs_per_s", (double)fsyncs / t, 1);
	emitter_kv_double(j, "commits_per_fsync", per_fsync, 2);
	emitter_kv_double(j, "log_mb_per_s", (double)bytes / 1e6 / t, 3);
	emitter_kv_double(j, "bytes_per_commit", per_commit, 1);
	emitter_kv_u64(j, "durable_lsn", b->durable_lsn);
	emitter_dict_end(j);
}

void ycsb_report_load(struct ycsb_run *R, double secs)
{
	ycsb_emit_load(&R->out, ycsb_json(R), R->o.records, secs);
	if (R->o.durable)
		report_log(R, "load", secs);
}

static void report_wait(struct ycsb_run *R, const char *name, const char *json_name,
			const struct bp_wait_hist *w, uint64_t ops)
{
	double per_kop = ops ? 1e3 * (double)w->count / (double)ops : 0;
	emitter_table_printf(&R->out, "  %-30s %10" PRIu64 " %10.3f %10.1f %10.1f\n", name,
			     w->count, per_kop,
			     w->count ? (double)w->total_ns / (double)w->count / 1e3 : 0,
			     w->max_ns / 1e3);
	if (!R->o.json)
		return;
	ycsb_json_begin(&R->json, "wait");
	emitter_kv_str(&R->json, "bit", json_name);
	emitter_kv_u64(&R->json, "count", w->count);
	emitter_kv_double(&R->json, "per_kop", per_kop, 4);
	emitter_kv_u64(&R->json, "total_ns", w->total_ns);
	emitter_kv_u64(&R->json, "max_ns", w->max_ns);
	emitter_dict_end(&R->json);
}

/* {"type":"pool_stats","stats":<bp_stats_print's compact object>} */
static void report_pool_json(struct ycsb_run *R, const struct bp_stats *s)
{
	struct text_buf b = {0};
	int rc = bp_stats_print(s, text_buf_write, &b, BP_STATS_JSON_COMPACT);
	if (rc == 0 && b.len && b.s[b.len - 1] == '\n')
		b.s[--b.len] = '\0';
	if (rc == 0 && b.len) {
		ycsb_json_begin(&R->json, "pool_stats");
		emitter_kv_raw(&R->json, "stats", b.s);
		emitter_dict_end(&R->json);
	} else {
		fprintf(stderr, YCSB_PROG ": cannot write the pool statistics: %s\n",
			strerror(rc ? -rc : EINVAL));
	}
	free(b.s);
}

/* Where the misses' time went: per op, who read them, and the mean time a
 * miss waited for its page (an inline read's own duration, or the sleep
 * on LOCKED while the engine read it; the sleeps of threads that found
 * another's read in flight count too). */
struct miss_figures {
	double per_op, wait_us, inline_us, engine_us;
	uint64_t inline_reads, engine_reads;
};

static double mean_us(const struct bp_wait_hist *h)
{
	return h->count ? (double)h->total_ns / (double)h->count / 1e3 : 0;
}

static struct miss_figures miss_figures(const struct bp_stats *s, uint64_t ops)
{
	struct miss_figures m = {0};
	m.per_op = ops ? (double)s->misses / (double)ops : 0;
	m.inline_reads = s->inline_reads;
	m.engine_reads = s->reads > s->inline_reads ? s->reads - s->inline_reads : 0;
	m.inline_us = mean_us(&s->inline_read);
	m.engine_us = mean_us(&s->io_wait);
	if (s->misses)
		m.wait_us = (double)(s->inline_read.total_ns + s->io_wait.total_ns) /
			    (double)s->misses / 1e3;
	return m;
}

static void report_misses(struct ycsb_run *R, const struct bp_stats *s, uint64_t ops)
{
	struct miss_figures m = miss_figures(s, ops);
	emitter_table_printf(&R->out, "misses: %.3f per op, mean wait %.1f us; read inline %" PRIu64
			     " (mean %.1f us), by the %s engine %" PRIu64 " (incl. readahead; "
			     "mean io_wait %.1f us)\n", m.per_op, m.wait_us, m.inline_reads,
			     m.inline_us, s->io_engine == BP_IO_ENGINE_URING ? "io_uring" : "threads",
			     m.engine_reads, m.engine_us);
}

static void report_result_json(struct ycsb_run *R, const struct bp_stats *s, uint64_t ops,
			       double secs, double rate, const struct ycsb_cost *cost)
{
	struct miss_figures m = miss_figures(s, ops);
	struct emitter *j = &R->json;
	char workload[2] = {R->o.mix->name, '\0'};
	ycsb_json_begin(&R->json, "result");
	emitter_kv_str(j, "workload", workload);
	emitter_kv_u64(j, "ops", ops);
	emitter_kv_double(j, "seconds", secs, 3);
	emitter_kv_double(j, "ops_per_s", rate, 1);
	emitter_kv_double(j, "hit_ratio", ycsb_hit_ratio(s), 4);
	ycsb_json_cost(j, cost);
	emitter_kv_u64(j, "spurious_wakeups", s->fwait.spurious_wakeups);
	emitter_kv_u64(j, "fwait_sleeps", s->fwait.waits);
	emitter_kv_u64(j, "fwait_wakeups", s->fwait.wakeups);
	emitter_kv_double(j, "misses_per_op", m.per_op, 4);
	emitter_kv_double(j, "miss_wait_us", m.wait_us, 2);
	emitter_kv_u64(j, "inline_reads", m.inline_reads);
	emitter_kv_u64(j, "engine_reads", m.engine_reads);
	emitter_kv_double(j, "inline_read_us", m.inline_us, 2);
	emitter_kv_double(j, "io_wait_us", m.engine_us, 2);
	emitter_kv_str(j, "io_engine", s->io_engine == BP_IO_ENGINE_URING ? "uring" : "threads");
	emitter_dict_end(j);
}

/* The "commit" row: the writes' rows merged, as each includes its commit
 * (see above), and the note that names them ("the update, insert and rmw
 * rows together"). */
static void report_commit(struct ycsb_run *R, const struct util_hist per[OP_COUNT])
{
	struct util_hist commit = {0};
	int writes = 0;
	for (int op = 0; op < OP_COUNT; op++)
		if (ycsb_ops[op].writes) {
			util_hist_merge(&commit, &per[op]);
			writes++;
		}
	ycsb_emit_latency(&R->out, ycsb_json(R), "commit", &commit);
	emitter_table_printf(&R->out, "  (commit: the");
	for (int op = 0, k = 0; op < OP_COUNT; op++) {
		if (!ycsb_ops[op].writes)
			continue;
		const char *sep = k == 0 ? "" : k == writes - 1 ? " and" : ",";
		emitter_table_printf(&R->out, "%s %s", sep, ycsb_ops[op].name);
		k++;
	}
	emitter_table_printf(&R->out, " rows together; each returned once durable)\n");
}

void ycsb_report_run(struct ycsb_run *R, double secs, struct cpu_usage u0, struct cpu_usage u1)
{
	struct util_hist all = {0}, per[OP_COUNT] = {{0}};
	struct bp_stats s;
	bp_stats_init(&s);
	bp_stats_get(R->pool, &s);
	ycsb_crew_latency(&R->crew, per, &all);
	uint64_t ops = all.count;
	double rate = secs > 0 ? (double)ops / secs : 0;
	struct ycsb_cost cost = ycsb_cost_of(u0, u1, ops);
	struct emitter *h = &R->out;
	/* The raw counters, asked for, come first: the summary ends the
	 * report. */
	if (R->o.counters) {
		emitter_table_printf(h, "pool statistics (run phase; hits are pinned hits only, the "
				     "hit ratio below is\n  " YCSB_HIT_RATIO_DEF "):\n");
		bp_stats_print(&s, table_write, h, BP_STATS_TABLE);
	}
	emitter_table_printf(h, "run:  %" PRIu64 " ops in %.2f s: %.0f ops/s, hit ratio %.2f%%\n",
			     ops, secs, rate, 100 * ycsb_hit_ratio(&s));
	if (R->o.durable)
		report_log(R, "run", secs);
	ycsb_emit_latency_table(h, ycsb_json(R), per, &all);
	if (R->o.durable)
		report_commit(R, per);
	emitter_table_printf(h, "cpu per op: user %.2f us, sys %.2f us (whole process, incl. I/O "
			     "threads)\n", cost.user_us, cost.sys_us);
	report_misses(R, &s, ops);
	emitter_table_printf(h, "contention                         waits  per 1k ops    avg us"
			     "     max us\n");
	report_wait(R, "io_wait (BP_LOCKED)", "io_wait", &s.io_wait, ops);
	report_wait(R, "writeback_wait (BP_WRITEBACK)", "writeback_wait", &s.writeback_wait, ops);
	report_wait(R, "latch_shared_wait", "latch_shared_wait", &s.latch_shared_wait, ops);
	report_wait(R, "latch_exclusive_wait", "latch_exclusive_wait", &s.latch_exclusive_wait, ops);
	report_wait(R, "frame_wait (no free frame)", "frame_wait", &s.frame_wait, ops);
	emitter_table_printf(h, "  fwait: %" PRIu64 " sleeps, %" PRIu64 " wakeups, %" PRIu64
			     " spurious wakeups, %" PRIu64 " handoffs, max bucket depth %u\n",
			     s.fwait.waits, s.fwait.wakeups, s.fwait.spurious_wakeups,
			     s.fwait.handoffs, s.fwait.max_bucket_depth);
	ycsb_emit_switches(h, &cost);
	if (R->o.json) {
		report_result_json(R, &s, ops, secs, rate, &cost);
		report_pool_json(R, &s);
	}
}

/* Lookups per second of wall time, and per second of CPU time (user +
 * sys, the whole process), of one phase. */
static double per_s(const struct ycsb_measure *m)
{
	return m->secs > 0 ? (double)m->ops / m->secs : 0;
}
static double per_cpu_s(const struct ycsb_measure *m)
{
	double cpu = (m->u1.user_s - m->u0.user_s) + (m->u1.sys_s - m->u0.sys_s);
	return cpu > 0 ? (double)m->ops / cpu : 0;
}

static void report_floor_row(struct ycsb_run *R, const char *name, const struct ycsb_measure *m)
{
	double ops = m->ops ? (double)m->ops : 1;
	emitter_table_printf(&R->out, "  %-6s %12" PRIu64 " %8.2f %12.0f %14.0f %9.3f %9.3f\n", name,
			     m->ops, m->secs, per_s(m), per_cpu_s(m),
			     (m->u1.user_s - m->u0.user_s) * 1e6 / ops,
			     (m->u1.sys_s - m->u0.sys_s) * 1e6 / ops);
}

void ycsb_report_floor(struct ycsb_run *R, uint64_t pages, uint64_t bytes, double copy_s,
		       const struct ycsb_measure *pool, const struct ycsb_measure *floor)
{
	struct emitter *h = &R->out;
	double fs = per_s(floor), fc = per_cpu_s(floor);
	double ratio_s = fs > 0 ? per_s(pool) / fs : 0, ratio_cpu = fc > 0 ? per_cpu_s(pool) / fc : 0;
	emitter_table_printf(h, "no pool: the same reads on the tree copied to plain memory "
			     "(%" PRIu64 " pages, %.1f MiB, copied in %.2f s)\n", pages,
			     (double)bytes / 1048576.0, copy_s);
	emitter_table_printf(h, "  phase       lookups        s    lookups/s  lookups/cpu-s"
			     "   user us    sys us (per lookup)\n");
	report_floor_row(R, "pool", pool);
	report_floor_row(R, "floor", floor);
	emitter_table_printf(h, "  pool/floor: %.3fx lookups/s, %.3fx lookups per CPU-second\n",
			     ratio_s, ratio_cpu);
	if (!R->o.json)
		return;
	struct emitter *j = &R->json;
	ycsb_json_begin(&R->json, "floor");
	emitter_kv_u64(j, "pages", pages);
	emitter_kv_u64(j, "bytes", bytes);
	emitter_kv_double(j, "copy_s", copy_s, 3);
	emitter_kv_u64(j, "pool_ops", pool->ops);
	emitter_kv_double(j, "pool_seconds", pool->secs, 3);
	emitter_kv_double(j, "pool_ops_per_s", per_s(pool), 1);
	emitter_kv_double(j, "pool_ops_per_cpu_s", per_cpu_s(pool), 1);
	emitter_kv_u64(j, "floor_ops", floor->ops);
	emitter_kv_double(j, "floor_seconds", floor->secs, 3);
	emitter_kv_double(j, "floor_ops_per_s", fs, 1);
	emitter_kv_double(j, "floor_ops_per_cpu_s", fc, 1);
	emitter_kv_double(j, "ratio_ops_per_s", ratio_s, 4);
	emitter_kv_double(j, "ratio_ops_per_cpu_s", ratio_cpu, 4);
	emitter_dict_end(j);
}
