/* SPDX-License-Identifier: MIT */
/*
 * hit_report.c - bpbench hit's reports: the config line, the table of
 * cells, one JSON line per cell, the pool's counters.
 *
 * Design note
 * -----------
 * Layer: bpbench, on the samples of hit_run.c (struct hit_sample) and a
 * struct bp_stats; it calls nothing of the pool.  Each item goes to both
 * emitters (hit_int.h): a line of the table through R->out, a JSON line
 * through R->json with --json.
 *
 * The figures of a cell, from its --repeat samples:
 *   ns per access    wall x threads / accesses, per sample; min, median
 *                    and max over the samples (the machine is noisy: the
 *                    spread is part of the answer);
 *   cpu ns           the process's user + system time (rusage) over the
 *                    sample / accesses, the median: below the wall figure
 *                    once threads outnumber CPUs;
 *   x memory         the median over the median of the memory floor at
 *                    the same pattern and thread count (measured in the
 *                    same run, minutes apart at most): the pool's cost as
 *                    a multiple of touching the byte at all;
 *   M acc/s          the whole cell's accesses per second (the median's).
 */
#include "hit_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct hit_figures {
	double min_ns, med_ns, max_ns, cpu_ns;
	uint64_t accesses;
	long vcsw, ivcsw;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double ns_per_access(const struct hit_sample *s, unsigned threads)
{
	return s->accesses ? s->wall_s * 1e9 * threads / (double)s->accesses : NAN;
}

static struct hit_figures figures(const struct hit_options *o, const struct hit_sample *all,
				  int mode, int pattern, unsigned t)
{
	double ns[HIT_MAX_REPEAT], cpu[HIT_MAX_REPEAT];
	struct hit_figures f = { 0 };
	for (unsigned r = 0; r < o->repeat; r++) {
		const struct hit_sample *s = &all[hit_index(o, mode, pattern, t, r)];
		ns[r] = ns_per_access(s, o->threads[t]);
		cpu[r] = s->accesses ? s->cpu_s * 1e9 / (double)s->accesses : NAN;
		f.accesses += s->accesses;
		f.vcsw += s->vcsw;
		f.ivcsw += s->ivcsw;
	}
	f.med_ns = median(ns, o->repeat);
	f.min_ns = ns[0];
	f.max_ns = ns[o->repeat - 1];
	f.cpu_ns = median(cpu, o->repeat);
	return f;
}

static void emit_list(struct emitter *e, const char *key, unsigned n, const unsigned *v)
{
	emitter_list_begin(e, key);
	for (unsigned i = 0; i < n; i++)
		emitter_kv_u64(e, NULL, v[i]);
	emitter_list_end(e);
}

void hit_report_config(const struct hit_report *R, const struct hit_options *o,
		       const struct bp_stats *s, const char *path)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	double mib = (double)o->pages * o->page_size / (1024.0 * 1024.0);
	emitter_table_printf(R->out, HIT_PROG ": %" PRIu32 " pages x %" PRIu32 " B (%.1f MiB), "
			     "%" PRIu32 " frames, %" PRIu32 " partitions, %u x %g s per cell, seed %"
			     PRIu64 ", %ld CPUs online\n  threads", o->pages, o->page_size, mib,
			     s->nframes, s->partitions, o->repeat, o->duration_s, o->seed, cpus);
	for (unsigned t = 0; t < o->nthreads; t++)
		emitter_table_printf(R->out, "%s%u", t ? "," : " ", o->threads[t]);
	emitter_table_printf(R->out, "; modes");
	for (int m = 0, n = 0; m < HIT_MODE_COUNT; m++)
		if (o->modes[m])
			emitter_table_printf(R->out, "%s%s", n++ ? "," : " ", hit_modes[m].name);
	emitter_table_printf(R->out, "; file %s\n", path);
	emitter_table_printf(R->out, "  ns = wall x threads / accesses (per-thread latency), "
			     "min/median/max of the repeats;\n  cpu ns = process CPU (rusage) / "
			     "accesses; x memory = median / the memory floor's median\n\n");
	if (R->json == NULL)
		return;
	struct emitter *j = R->json;
	emitter_dict_begin(j, NULL);
	emitter_kv_str(j, "type", "config");
	emitter_kv_str(j, "bench", "hit");
	emitter_kv_u64(j, "pages", o->pages);
	emitter_kv_u64(j, "page_size", o->page_size);
	emitter_kv_u64(j, "frames", s->nframes);
	emitter_kv_u64(j, "partitions", s->partitions);
	emitter_kv_u64(j, "pool_bytes", s->pool_bytes);
	emit_list(j, "threads", o->nthreads, o->threads);
	emitter_list_begin(j, "modes");
	for (int m = 0; m < HIT_MODE_COUNT; m++)
		if (o->modes[m])
			emitter_kv_str(j, NULL, hit_modes[m].name);
	emitter_list_end(j);
	emitter_list_begin(j, "patterns");
	for (int p = 0; p < HIT_PATTERN_COUNT; p++)
		emitter_kv_str(j, NULL, hit_pattern_names[p]);
	emitter_list_end(j);
	emitter_kv_double(j, "duration_s", o->duration_s, 3);
	emitter_kv_u64(j, "repeat", o->repeat);
	emitter_kv_u64(j, "seed", o->seed);
	emitter_kv_i64(j, "cpus", cpus);
	emitter_kv_str(j, "file", path);
	emitter_dict_end(j);
}

static void json_cell(struct emitter *j, const struct hit_options *o, const struct hit_sample *all,
		      int m, int p, unsigned t, const struct hit_figures *f, double ratio)
{
	emitter_dict_begin(j, NULL);
	emitter_kv_str(j, "type", "hit");
	emitter_kv_str(j, "mode", hit_modes[m].name);
	emitter_kv_str(j, "pattern", hit_pattern_names[p]);
	emitter_kv_u64(j, "threads", o->threads[t]);
	emitter_kv_u64(j, "repeat", o->repeat);
	emitter_kv_double(j, "duration_s", o->duration_s, 3);
	emitter_kv_u64(j, "accesses", f->accesses);
	emitter_kv_double(j, "ns_per_access_min", f->min_ns, 3);
	emitter_kv_double(j, "ns_per_access_median", f->med_ns, 3);
	emitter_kv_double(j, "ns_per_access_max", f->max_ns, 3);
	emitter_list_begin(j, "ns_per_access_runs");
	for (unsigned r = 0; r < o->repeat; r++)
		emitter_kv_double(j, NULL, ns_per_access(&all[hit_index(o, m, p, t, r)],
							 o->threads[t]), 3);
	emitter_list_end(j);
	emitter_kv_double(j, "cpu_ns_per_access", f->cpu_ns, 3);
	emitter_kv_double(j, "ratio_to_memory", ratio, 3); /* null without the floor */
	emitter_kv_double(j, "maccess_per_s", o->threads[t] * 1e3 / f->med_ns, 3);
	emitter_kv_i64(j, "vol_ctxsw", f->vcsw);
	emitter_kv_i64(j, "invol_ctxsw", f->ivcsw);
	emitter_dict_end(j);
}

void hit_report_cells(const struct hit_report *R, const struct hit_options *o,
		      const struct hit_sample *all)
{
	emitter_table_printf(R->out, "%-10s %-7s %7s %9s %9s %9s %9s %8s %9s\n", "mode", "pattern",
			     "threads", "min ns", "median ns", "max ns", "cpu ns", "x memory",
			     "M acc/s");
	for (int p = 0; p < HIT_PATTERN_COUNT; p++) {
		if (p > 0)
			emitter_table_printf(R->out, "\n");
		for (unsigned t = 0; t < o->nthreads; t++) {
			double floor = NAN;
			if (o->modes[HIT_MEMORY])
				floor = figures(o, all, HIT_MEMORY, p, t).med_ns;
			for (int m = 0; m < HIT_MODE_COUNT; m++) {
				if (!o->modes[m])
					continue;
				struct hit_figures f = figures(o, all, m, p, t);
				double ratio = f.med_ns / floor;
				char x[16] = "-"; /* no floor without --modes memory */
				if (!isnan(ratio))
					snprintf(x, sizeof(x), "%.2fx", ratio);
				emitter_table_printf(R->out, "%-10s %-7s %7u %9.2f %9.2f %9.2f %9.2f "
						     "%8s %9.1f\n", hit_modes[m].name,
						     hit_pattern_names[p], o->threads[t], f.min_ns,
						     f.med_ns, f.max_ns, f.cpu_ns, x,
						     o->threads[t] * 1e3 / f.med_ns);
				if (R->json != NULL)
					json_cell(R->json, o, all, m, p, t, &f, ratio);
			}
		}
	}
}

void hit_report_pool(const struct hit_report *R, const struct bp_stats *s, uint64_t accesses)
{
	emitter_table_printf(R->out, "\npool: %" PRIu64 " hits and %" PRIu64 " optimistic reads (%"
			     PRIu64 " restarts) for %" PRIu64 " accesses, %" PRIu64 " misses, %"
			     PRIu64 " reads, %" PRIu64 " evictions\n", s->hits, s->optimistic_reads,
			     s->optimistic_restarts, accesses, s->misses, s->reads, s->evictions);
	if (R->json == NULL)
		return;
	emitter_dict_begin(R->json, NULL);
	emitter_kv_str(R->json, "type", "pool");
	emitter_kv_u64(R->json, "accesses", accesses);
	emitter_kv_u64(R->json, "hits", s->hits);
	emitter_kv_u64(R->json, "optimistic_reads", s->optimistic_reads);
	emitter_kv_u64(R->json, "optimistic_restarts", s->optimistic_restarts);
	emitter_kv_u64(R->json, "misses", s->misses);
	emitter_kv_u64(R->json, "reads", s->reads);
	emitter_kv_u64(R->json, "evictions", s->evictions);
	emitter_dict_end(R->json);
}
