/* SPDX-License-Identifier: MIT */
/*
 * ycsb_emit.c - the report lines both YCSB tools print (see ycsb_emit.h).
 *
 * Design note: layer: ycsb_common, on util's emitter and histogram; pure
 * functions of their arguments.
 */
#include "ycsb_emit.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void ycsb_json_begin(struct emitter *j, const char *type)
{
	emitter_dict_begin(j, NULL);
	emitter_kv_str(j, "type", type);
}

void ycsb_emit_title(struct emitter *h, const char *prog, const struct ycsb_mix *mix,
		     enum key_dist dist, double theta, unsigned threads, uint64_t records,
		     uint64_t ops, double duration_s)
{
	emitter_table_printf(h, "%s: workload %c, %s", prog, mix->name, ycsb_dist_names[dist]);
	if (dist != DIST_UNIFORM)
		emitter_table_printf(h, " %.2f", theta);
	emitter_table_printf(h, ", %u threads, %" PRIu64 " records, ", threads, records);
	if (ops)
		emitter_table_printf(h, "%" PRIu64 " ops\n", ops);
	else
		emitter_table_printf(h, "%.1f s\n", duration_s);
}

void ycsb_json_workload(struct emitter *j, const struct ycsb_mix *mix, enum key_dist dist,
			double theta, unsigned threads, uint64_t records, uint64_t ops,
			double duration_s)
{
	char workload[2] = {mix->name, '\0'};
	emitter_kv_str(j, "workload", workload);
	emitter_kv_u64(j, "threads", threads);
	emitter_kv_u64(j, "records", records);
	emitter_kv_u64(j, "ops", ops);
	emitter_kv_double(j, "duration_s", duration_s, 1);
	emitter_kv_str(j, "dist", ycsb_dist_names[dist]);
	emitter_kv_double(j, "theta", theta, 3);
}

void ycsb_emit_load(struct emitter *h, struct emitter *j, uint64_t records, double secs)
{
	emitter_table_printf(h, "load: %" PRIu64 " records in %.2f s (%.0f inserts/s)\n",
			     records, secs, (double)records / secs);
	if (!j)
		return;
	ycsb_json_begin(j, "load");
	emitter_kv_u64(j, "records", records);
	emitter_kv_double(j, "seconds", secs, 3);
	emitter_kv_double(j, "ops_per_s", (double)records / secs, 1);
	emitter_dict_end(j);
}

void ycsb_emit_latency(struct emitter *h, struct emitter *j, const char *name,
		       const struct util_hist *hist)
{
	double mean = hist->count ? (double)hist->sum_ns / (double)hist->count : 0;
	uint64_t p50 = util_hist_quantile(hist, 0.5), p99 = util_hist_quantile(hist, 0.99),
		 p999 = util_hist_quantile(hist, 0.999);
	emitter_table_printf(h, "  %-8s %11" PRIu64 " %9.1f %9.1f %9.1f %9.1f %9.1f\n",
			     name, hist->count, mean / 1e3, p50 / 1e3, p99 / 1e3, p999 / 1e3,
			     hist->max_ns / 1e3);
	if (!j)
		return;
	ycsb_json_begin(j, "latency");
	emitter_kv_str(j, "op", name);
	emitter_kv_u64(j, "count", hist->count);
	emitter_kv_double(j, "mean_ns", mean, 0);
	emitter_kv_u64(j, "p50_ns", p50);
	emitter_kv_u64(j, "p99_ns", p99);
	emitter_kv_u64(j, "p999_ns", p999);
	emitter_kv_u64(j, "max_ns", hist->max_ns);
	emitter_dict_end(j);
}

void ycsb_emit_latency_table(struct emitter *h, struct emitter *j,
			     const struct util_hist per[OP_COUNT], const struct util_hist *all)
{
	emitter_table_printf(h, "latency (us)    count      mean       p50       p99      p999"
			     "       max\n");
	for (int op = 0; op < OP_COUNT; op++)
		if (per[op].count)
			ycsb_emit_latency(h, j, ycsb_ops[op].name, &per[op]);
	ycsb_emit_latency(h, j, "all", all);
}

struct ycsb_cost ycsb_cost_of(struct cpu_usage u0, struct cpu_usage u1, uint64_t ops)
{
	double n = ops ? (double)ops : 1;
	return (struct ycsb_cost){(u1.user_s - u0.user_s) * 1e6 / n,
				  (u1.sys_s - u0.sys_s) * 1e6 / n,
				  (double)(u1.vcsw - u0.vcsw) / n,
				  (double)(u1.ivcsw - u0.ivcsw) / n};
}

void ycsb_json_cost(struct emitter *j, const struct ycsb_cost *c)
{
	emitter_kv_double(j, "cpu_user_us_per_op", c->user_us, 3);
	emitter_kv_double(j, "cpu_sys_us_per_op", c->sys_us, 3);
	emitter_kv_double(j, "vcsw_per_op", c->vcsw, 4);
	emitter_kv_double(j, "ivcsw_per_op", c->ivcsw, 4);
}

void ycsb_emit_switches(struct emitter *h, const struct ycsb_cost *c)
{
	emitter_table_printf(h, "  context switches per op: %.3f voluntary, %.3f involuntary\n",
			     c->vcsw, c->ivcsw);
}

int ycsb_emit_finish(const char *prog, struct emitter *h, struct emitter *j, bool json)
{
	int rc = emitter_finish(h);
	if (rc == 0 && json)
		rc = emitter_finish(j);
	if (rc == 0 && fflush(stdout) != 0)
		rc = -EIO;
	if (rc)
		fprintf(stderr, "%s: writing the report: %s\n", prog, strerror(-rc));
	return rc;
}
