/*
 * ref_report.c - ycsb-ref's reports: the configuration, the load and the
 * run (throughput, latency percentiles, CPU and context switches per
 * operation).
 *
 * Design note
 * -----------
 * Layer: ycsb-ref, on util's emitter and histogram.  Each item is written
 * once to each of the two emitters (see ref.h): a line of the human report
 * on R->out, a JSON line on R->json with --json.  The lines and JSON keys
 * are bpbench ycsb's (tools/bpbench/ycsb_report.c) where the figure is the
 * same one: "load:", "run:", the latency table, "cpu per op:";
 * {"type":"load"} with ops_per_s, {"type":"result"} with ops, seconds,
 * ops_per_s, cpu_user_us_per_op, cpu_sys_us_per_op, vcsw_per_op and
 * ivcsw_per_op, {"type":"latency"} per op, so one script reads both
 * programs' output alike.  The pool's figures (hit ratio, waits, pool
 * statistics) have no counterpart here; "engine" is added to config and
 * result.
 */
#include "ref.h"

#include <inttypes.h>

static void json_begin(struct ref_run *R, const char *type)
{
	emitter_dict_begin(&R->json, NULL);
	emitter_kv_str(&R->json, "type", type);
}

void ref_report_config(struct ref_run *R, const char *dir)
{
	const struct ref_opts *o = &R->o;
	struct emitter *h = &R->out, *j = &R->json;
	const char *settings = o->engine->settings(R->db);
	char version[32];
	o->engine->version(version, sizeof(version));
	emitter_table_printf(h, REF_PROG ": workload %c, %s", o->mix->name, ref_dist_names[o->dist]);
	if (o->dist != DIST_UNIFORM)
		emitter_table_printf(h, " %.2f", o->theta);
	emitter_table_printf(h, ", %u threads, %" PRIu64 " records, ", o->threads, o->records);
	if (o->ops)
		emitter_table_printf(h, "%" PRIu64 " ops\n", o->ops);
	else
		emitter_table_printf(h, "%.1f s\n", o->duration_s);
	emitter_table_printf(h, "  engine %s %s, cache %" PRIu64 " B (%.1f MiB), page %u B, "
			     "value %u B, dir %s\n", o->engine->name, version, o->cache_bytes,
			     (double)o->cache_bytes / 1048576.0, o->page_size, o->value_size, dir);
	emitter_table_printf(h, "  settings: %s\n", settings);
	if (!o->json)
		return;
	char workload[2] = {o->mix->name, '\0'};
	json_begin(R, "config");
	emitter_kv_str(j, "engine", o->engine->name);
	emitter_kv_str(j, "engine_version", version);
	emitter_kv_str(j, "settings", settings);
	emitter_kv_str(j, "workload", workload);
	emitter_kv_u64(j, "threads", o->threads);
	emitter_kv_u64(j, "records", o->records);
	emitter_kv_u64(j, "ops", o->ops);
	emitter_kv_double(j, "duration_s", o->duration_s, 1);
	emitter_kv_str(j, "dist", ref_dist_names[o->dist]);
	emitter_kv_double(j, "theta", o->theta, 3);
	emitter_kv_u64(j, "cache_bytes", o->cache_bytes);
	emitter_kv_u64(j, "page_size", o->page_size);
	emitter_kv_u64(j, "value_size", o->value_size);
	emitter_kv_u64(j, "seed", o->seed);
	emitter_kv_str(j, "dir", dir);
	emitter_dict_end(j);
}

void ref_report_load(struct ref_run *R, double secs)
{
	uint64_t n = R->o.records;
	emitter_table_printf(&R->out, "load: %" PRIu64 " records in %.2f s (%.0f inserts/s)\n",
			     n, secs, (double)n / secs);
	if (!R->o.json)
		return;
	json_begin(R, "load");
	emitter_kv_u64(&R->json, "records", n);
	emitter_kv_double(&R->json, "seconds", secs, 3);
	emitter_kv_double(&R->json, "ops_per_s", (double)n / secs, 1);
	emitter_dict_end(&R->json);
}

static void report_latency(struct ref_run *R, const char *name, const struct util_hist *h)
{
	double mean = h->count ? (double)h->sum_ns / (double)h->count : 0;
	uint64_t p50 = util_hist_quantile(h, 0.5), p99 = util_hist_quantile(h, 0.99),
		 p999 = util_hist_quantile(h, 0.999);
	emitter_table_printf(&R->out, "  %-8s %11" PRIu64 " %9.1f %9.1f %9.1f %9.1f %9.1f\n",
			     name, h->count, mean / 1e3, p50 / 1e3, p99 / 1e3, p999 / 1e3,
			     h->max_ns / 1e3);
	if (!R->o.json)
		return;
	json_begin(R, "latency");
	emitter_kv_str(&R->json, "op", name);
	emitter_kv_u64(&R->json, "count", h->count);
	emitter_kv_double(&R->json, "mean_ns", mean, 0);
	emitter_kv_u64(&R->json, "p50_ns", p50);
	emitter_kv_u64(&R->json, "p99_ns", p99);
	emitter_kv_u64(&R->json, "p999_ns", p999);
	emitter_kv_u64(&R->json, "max_ns", h->max_ns);
	emitter_dict_end(&R->json);
}

void ref_report_run(struct ref_run *R, double secs, struct cpu_usage u0, struct cpu_usage u1)
{
	struct util_hist all = {0}, per[OP_COUNT] = {{0}};
	for (unsigned i = 0; i < R->o.threads; i++)
		for (int op = 0; op < OP_COUNT; op++) {
			util_hist_merge(&per[op], &R->w[i].hist[op]);
			util_hist_merge(&all, &R->w[i].hist[op]);
		}
	uint64_t ops = all.count;
	double dops = ops ? (double)ops : 1, rate = secs > 0 ? (double)ops / secs : 0;
	/* user, sys us per op; voluntary, involuntary switches per op */
	double cost[4] = {(u1.user_s - u0.user_s) * 1e6 / dops, (u1.sys_s - u0.sys_s) * 1e6 / dops,
			  (double)(u1.vcsw - u0.vcsw) / dops, (double)(u1.ivcsw - u0.ivcsw) / dops};
	struct emitter *h = &R->out;
	emitter_table_printf(h, "run:  %" PRIu64 " ops in %.2f s: %.0f ops/s\n", ops, secs, rate);
	emitter_table_printf(h, "latency (us)    count      mean       p50       p99      p999"
			     "       max\n");
	for (int op = 0; op < OP_COUNT; op++)
		if (per[op].count)
			report_latency(R, ref_op_names[op], &per[op]);
	report_latency(R, "all", &all);
	emitter_table_printf(h, "cpu per op: user %.2f us, sys %.2f us (whole process, incl. the "
			     "engine's threads)\n", cost[0], cost[1]);
	emitter_table_printf(h, "  context switches per op: %.3f voluntary, %.3f involuntary\n",
			     cost[2], cost[3]);
	if (!R->o.json)
		return;
	struct emitter *j = &R->json;
	char workload[2] = {R->o.mix->name, '\0'};
	json_begin(R, "result");
	emitter_kv_str(j, "engine", R->o.engine->name);
	emitter_kv_str(j, "workload", workload);
	emitter_kv_u64(j, "ops", ops);
	emitter_kv_double(j, "seconds", secs, 3);
	emitter_kv_double(j, "ops_per_s", rate, 1);
	emitter_kv_double(j, "cpu_user_us_per_op", cost[0], 3);
	emitter_kv_double(j, "cpu_sys_us_per_op", cost[1], 3);
	emitter_kv_double(j, "vcsw_per_op", cost[2], 4);
	emitter_kv_double(j, "ivcsw_per_op", cost[3], 4);
	emitter_dict_end(j);
}
