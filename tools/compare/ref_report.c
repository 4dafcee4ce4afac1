/* SPDX-License-Identifier: MIT */
/*
 * ref_report.c - ycsb-ref's reports: the configuration, the load and the
 * run (throughput, latency percentiles, CPU and context switches per
 * operation).
 *
 * Design note
 * -----------
 * Layer: ycsb-ref, on ycsb_common's report lines (ycsb_emit.h), util's
 * emitter and histogram.  Each item is written once to each of the two
 * emitters (see ref.h): a line of the human report on R->out, a JSON line
 * on R->json with --json.  The lines and JSON keys are bpbench ycsb's,
 * from the same code where the figure is the same one: the title,
 * "load:", the latency table, the CPU cost; and as bpbench's "run:" and
 * "cpu per op:";
 * {"type":"load"} with ops_per_s, {"type":"result"} with ops, seconds,
 * ops_per_s, cpu_user_us_per_op, cpu_sys_us_per_op, vcsw_per_op and
 * ivcsw_per_op, {"type":"latency"} per op, so one script reads both
 * programs' output alike.  The pool's figures (hit ratio, waits, pool
 * statistics) have no counterpart here; "engine" is added to config and
 * result.
 */
#include "ref.h"

#include <inttypes.h>

void ref_report_config(struct ref_run *R, const char *dir)
{
	const struct ref_opts *o = &R->o;
	struct emitter *h = &R->out, *j = &R->json;
	const char *settings = o->engine->settings(R->db);
	char version[32];
	o->engine->version(version, sizeof(version));
	ycsb_emit_title(h, REF_PROG, o->mix, o->dist, o->theta, o->threads, o->records, o->ops,
			o->duration_s);
	emitter_table_printf(h, "  engine %s %s, cache %" PRIu64 " B (%.1f MiB), page %u B, "
			     "value %u B, dir %s\n", o->engine->name, version, o->cache_bytes,
			     (double)o->cache_bytes / 1048576.0, o->page_size, o->value_size, dir);
	emitter_table_printf(h, "  settings: %s\n", settings);
	if (!o->json)
		return;
	ycsb_json_begin(j, "config");
	emitter_kv_str(j, "engine", o->engine->name);
	emitter_kv_str(j, "engine_version", version);
	emitter_kv_str(j, "settings", settings);
	ycsb_json_workload(j, o->mix, o->dist, o->theta, o->threads, o->records, o->ops,
			   o->duration_s);
	emitter_kv_u64(j, "cache_bytes", o->cache_bytes);
	emitter_kv_u64(j, "page_size", o->page_size);
	emitter_kv_u64(j, "value_size", o->value_size);
	emitter_kv_u64(j, "seed", o->seed);
	emitter_kv_str(j, "dir", dir);
	emitter_dict_end(j);
}

void ref_report_load(struct ref_run *R, double secs)
{
	ycsb_emit_load(&R->out, R->o.json ? &R->json : NULL, R->o.records, secs);
}

void ref_report_run(struct ref_run *R, double secs, struct cpu_usage u0, struct cpu_usage u1)
{
	struct util_hist all = {0}, per[OP_COUNT] = {{0}};
	ycsb_crew_latency(&R->crew, per, &all);
	uint64_t ops = all.count;
	double rate = secs > 0 ? (double)ops / secs : 0;
	struct ycsb_cost cost = ycsb_cost_of(u0, u1, ops);
	struct emitter *h = &R->out, *j = R->o.json ? &R->json : NULL;
	emitter_table_printf(h, "run:  %" PRIu64 " ops in %.2f s: %.0f ops/s\n", ops, secs, rate);
	ycsb_emit_latency_table(h, j, per, &all);
	emitter_table_printf(h, "cpu per op: user %.2f us, sys %.2f us (whole process, incl. the "
			     "engine's threads)\n", cost.user_us, cost.sys_us);
	ycsb_emit_switches(h, &cost);
	if (!j)
		return;
	char workload[2] = {R->o.mix->name, '\0'};
	ycsb_json_begin(j, "result");
	emitter_kv_str(j, "engine", R->o.engine->name);
	emitter_kv_str(j, "workload", workload);
	emitter_kv_u64(j, "ops", ops);
	emitter_kv_double(j, "seconds", secs, 3);
	emitter_kv_double(j, "ops_per_s", rate, 1);
	ycsb_json_cost(j, &cost);
	emitter_dict_end(j);
}
