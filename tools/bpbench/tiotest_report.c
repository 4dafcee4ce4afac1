/* SPDX-License-Identifier: MIT */
/*
 * tiotest_report.c - bpbench tiotest's reports: the tiotest tables, the
 * cost and ratio tables, the claim check, the JSON lines and --plot's
 * summary.
 *
 * Design note
 * -----------
 * Layer: bpbench, on the results of tiotest_run.c only (struct tio_result);
 * it calls nothing of the pool.  Human text goes through a table emitter
 * (emitter_table_printf keeps the exact layout of tiotest's tables), JSON
 * lines through a compact emitter: one object per policy and item, its
 * members in a fixed order, the ratio to the reference policy named after
 * it (mb_per_cpusec_vs_<policy>).
 */
#include "bench_opt.h"
#include "tiotest_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The claim of the 2004 mail, checked on this run's Random Read: filtered
 * wake-one has at least 2.5x broadcast's MB per CPU-second and no spurious
 * wakeups.  Printed only when both policies ran. */
#define TIO_CLAIM_RATIO 2.5

static void print_mb(char *buf, size_t len, double mb)
{
	if (mb >= 100.0 || mb == (double)(uint64_t)mb)
		snprintf(buf, len, "%.0f", mb);
	else
		snprintf(buf, len, "%.1f", mb);
}

static void print_tiotest_table(struct emitter *e, const struct tio_result *r, unsigned threads,
				enum fwait_policy policy)
{
	emitter_table_printf(e, "Tiotest results for %u concurrent io threads, policy %s:\n",
			     threads, fwait_policy_name(policy));
	emitter_table_printf(e, ",----------------------------------------------------------------------.\n"
			     "| Item                  | Time     | Rate         | Usr CPU  | Sys CPU |\n"
			     "+-----------------------+----------+--------------+----------+---------+\n");
	for (int i = 0; i < TIO_ITEM_COUNT; i++) {
		char mb[32];
		print_mb(mb, sizeof(mb), r[i].mb);
		int pad = 21 - (int)strlen(tio_item_names[i]) - (int)strlen(mb) - 4;
		if (pad < 1)
			pad = 1;
		double wall = r[i].wall_s > 0 ? r[i].wall_s : 1e-9;
		emitter_table_printf(e, "| %s%*s%s MBs | %6.2f s | %7.3f MB/s | %6.1f %% | %5.1f %% |\n",
				     tio_item_names[i], pad, "", mb, r[i].wall_s, r[i].mb / wall,
				     r[i].usr_s / wall * 100.0, r[i].sys_s / wall * 100.0);
	}
	emitter_table_printf(e, "`----------------------------------------------------------------------'\n");
}

static void print_cost_table(struct emitter *e, const struct tio_result *all, unsigned npol)
{
	emitter_table_printf(e, "\nThroughput scaled by cpu consumption, and wait-table work per MB:\n");
	emitter_table_printf(e, "| %-9s | %-12s | %9s | %9s | %9s | %10s | %11s | %10s |\n", "Policy",
			     "Item", "MB/cpusec", "ctxsw/MB", "waits/MB", "wakeups/MB",
			     "spurious/MB", "foreign/MB");
	emitter_table_printf(e, "|-----------|--------------|-----------|-----------|-----------|"
			     "------------|-------------|------------|\n");
	for (unsigned p = 0; p < npol; p++) {
		for (int i = 0; i < TIO_ITEM_COUNT; i++) {
			const struct tio_result *r = &all[p * TIO_ITEM_COUNT + i];
			emitter_table_printf(e, "| %-9s | %-12s | %9.3f | %9.1f | %9.1f | %10.1f | "
					     "%11.1f | %10.1f |\n", fwait_policy_name(r->policy),
					     tio_item_names[i], tio_mb_per_cpusec(r),
					     tio_per_mb(r, (double)(r->vcsw + r->ivcsw)),
					     tio_per_mb(r, (double)r->fwait_waits),
					     tio_per_mb(r, (double)r->fwait_wakeups),
					     tio_per_mb(r, (double)r->fwait_spurious),
					     tio_per_mb(r, (double)r->fwait_foreign));
		}
	}
}

/* Index of the reference policy for ratios: broadcast if it ran, else the
 * first policy. */
static unsigned ratio_base(const struct tio_options *opt)
{
	for (unsigned p = 0; p < opt->npolicies; p++)
		if (opt->policies[p] == FWAIT_BROADCAST)
			return p;
	return 0;
}

static void print_ratio_table(struct emitter *e, const struct tio_options *opt,
			      const struct tio_result *all)
{
	unsigned base = ratio_base(opt);
	emitter_table_printf(e, "\nMB/cpusec relative to %s (higher is better):\n",
			     fwait_policy_name(opt->policies[base]));
	emitter_table_printf(e, "| %-12s |", "Item");
	for (unsigned p = 0; p < opt->npolicies; p++)
		emitter_table_printf(e, " %9s |", fwait_policy_name(opt->policies[p]));
	emitter_table_printf(e, "\n|--------------|");
	for (unsigned p = 0; p < opt->npolicies; p++)
		emitter_table_printf(e, "-----------|");
	emitter_table_printf(e, "\n");
	for (int i = 0; i < TIO_ITEM_COUNT; i++) {
		double b = tio_mb_per_cpusec(&all[base * TIO_ITEM_COUNT + i]);
		emitter_table_printf(e, "| %-12s |", tio_item_names[i]);
		for (unsigned p = 0; p < opt->npolicies; p++) {
			double v = tio_mb_per_cpusec(&all[p * TIO_ITEM_COUNT + i]);
			emitter_table_printf(e, " %8.2fx |", b > 0 ? v / b : 0.0);
		}
		emitter_table_printf(e, "\n");
	}
}

static void print_claim(struct emitter *e, const struct tio_options *opt,
			const struct tio_result *all)
{
	int bc = -1, w1 = -1;
	for (unsigned p = 0; p < opt->npolicies; p++) {
		if (opt->policies[p] == FWAIT_BROADCAST)
			bc = (int)p;
		if (opt->policies[p] == FWAIT_WAKE_ONE)
			w1 = (int)p;
	}
	if (bc < 0 || w1 < 0)
		return;
	const struct tio_result *b = &all[bc * TIO_ITEM_COUNT + TIO_RANDOM_READ];
	const struct tio_result *w = &all[w1 * TIO_ITEM_COUNT + TIO_RANDOM_READ];
	double bm = tio_mb_per_cpusec(b), wm = tio_mb_per_cpusec(w);
	double ratio = bm > 0 ? wm / bm : 0;
	bool met = ratio >= TIO_CLAIM_RATIO && w->fwait_spurious == 0;
	emitter_table_printf(e, "\nClaim (Random Read): wake-one %.3f MB/cpusec = %.2fx broadcast's "
			     "%.3f (target >= %.1fx), %" PRIu64 " spurious wakeups (target 0; "
			     "broadcast %" PRIu64 "): %s\n", wm, ratio, bm, TIO_CLAIM_RATIO,
			     w->fwait_spurious, b->fwait_spurious, met ? "MET" : "NOT MET");
}

void tio_report_tables(struct emitter *e, const struct tio_options *opt,
		       const struct tio_result *all)
{
	emitter_table_printf(e, TIO_PROG ": %u threads, %" PRIu64 " pages x %" PRIu32
			     " B per thread (%" PRIu64 " random), %" PRIu32 " frames, %" PRIu32
			     " buckets, %" PRIu32 " us latency, I/O engine %s, read path %s%s\n",
			     opt->threads,
			     tio_pages_per_thread_for(opt), opt->page_size, tio_random_ops_for(opt),
			     tio_frames_for(opt, opt->threads), all[0].nbuckets, opt->latency_us,
			     bench_io_engine_name(opt->io_engine), bench_read_path_name(opt->read_path),
			     opt->direct ? ", O_DIRECT" : "");
	emitter_table_printf(e, "(%ld CPUs online; 1-minute load average at the start of each "
			     "policy's Write:", sysconf(_SC_NPROCESSORS_ONLN));
	for (unsigned p = 0; p < opt->npolicies; p++)
		emitter_table_printf(e, " %s %.1f", fwait_policy_name(opt->policies[p]),
				     all[p * TIO_ITEM_COUNT].loadavg);
	emitter_table_printf(e, ")\n\n");
	for (unsigned p = 0; p < opt->npolicies; p++) {
		print_tiotest_table(e, &all[p * TIO_ITEM_COUNT], opt->threads, opt->policies[p]);
		emitter_table_printf(e, "\n");
	}
	print_cost_table(e, all, opt->npolicies);
	print_ratio_table(e, opt, all);
	print_claim(e, opt, all);
}

static void json_line(struct emitter *e, const struct tio_options *opt, const struct tio_result *r,
		      const struct tio_result *base)
{
	double wall = r->wall_s > 0 ? r->wall_s : 1e-9;
	double b = base ? tio_mb_per_cpusec(base) : 0.0;
	emitter_dict_begin(e, NULL);
	emitter_kv_str(e, "bench", "tiotest");
	emitter_kv_str(e, "policy", fwait_policy_name(r->policy));
	emitter_kv_str(e, "item", tio_item_names[r->item]);
	emitter_kv_u64(e, "threads", r->threads);
	emitter_kv_u64(e, "page_size", opt->page_size);
	emitter_kv_u64(e, "frames", r->frames);
	emitter_kv_u64(e, "buckets", r->nbuckets);
	emitter_kv_u64(e, "latency_us", opt->latency_us);
	emitter_kv_u64(e, "pages", r->pages);
	emitter_kv_double(e, "mb", r->mb, 6);
	emitter_kv_double(e, "time_s", r->wall_s, 6);
	emitter_kv_double(e, "rate_mb_s", r->mb / wall, 6);
	emitter_kv_double(e, "usr_cpu_pct", r->usr_s / wall * 100.0, 3);
	emitter_kv_double(e, "sys_cpu_pct", r->sys_s / wall * 100.0, 3);
	emitter_kv_double(e, "usr_s", r->usr_s, 6);
	emitter_kv_double(e, "sys_s", r->sys_s, 6);
	emitter_kv_double(e, "mb_per_cpusec", tio_mb_per_cpusec(r), 6);
	if (base != NULL && b > 0) {
		char key[64];
		snprintf(key, sizeof(key), "mb_per_cpusec_vs_%s", fwait_policy_name(base->policy));
		emitter_kv_double(e, key, tio_mb_per_cpusec(r) / b, 6);
	}
	emitter_kv_u64(e, "vol_ctxsw", r->vcsw);
	emitter_kv_u64(e, "invol_ctxsw", r->ivcsw);
	emitter_kv_double(e, "ctxsw_per_mb", tio_per_mb(r, (double)(r->vcsw + r->ivcsw)), 3);
	emitter_kv_u64(e, "fwait_waits", r->fwait_waits);
	emitter_kv_u64(e, "fwait_wakeups", r->fwait_wakeups);
	emitter_kv_u64(e, "fwait_spurious_wakeups", r->fwait_spurious);
	emitter_kv_u64(e, "fwait_foreign_skipped", r->fwait_foreign);
	emitter_kv_u64(e, "fwait_max_bucket_depth", r->max_bucket_depth);
	emitter_kv_double(e, "spurious_per_mb", tio_per_mb(r, (double)r->fwait_spurious), 3);
	emitter_kv_u64(e, "io_waits", r->io_waits);
	emitter_kv_u64(e, "writeback_waits", r->writeback_waits);
	emitter_kv_u64(e, "latch_waits", r->latch_waits);
	emitter_kv_u64(e, "reads", r->reads);
	emitter_kv_u64(e, "writes", r->writes);
	emitter_kv_u64(e, "evictions", r->evictions);
	emitter_kv_double(e, "loadavg_1m", r->loadavg, 2);
	emitter_dict_end(e);
}

void tio_report_json(struct emitter *e, const struct tio_options *opt,
		     const struct tio_result *all)
{
	unsigned base = ratio_base(opt);
	for (unsigned p = 0; p < opt->npolicies; p++)
		for (int i = 0; i < TIO_ITEM_COUNT; i++)
			json_line(e, opt, &all[p * TIO_ITEM_COUNT + i],
				  &all[base * TIO_ITEM_COUNT + i]);
}

void tio_report_plot_summary(struct emitter *e, const struct tio_options *opt,
			     const struct tio_result *all)
{
	size_t per = (size_t)opt->npolicies * TIO_ITEM_COUNT;
	emitter_table_printf(e, "%-9s %7s %12s %12s %14s %14s\n", "policy", "threads",
			     "RR cpu ms/MB", "R cpu ms/MB", "RR spurious/MB", "R spurious/MB");
	for (unsigned p = 0; p < opt->npolicies; p++) {
		for (unsigned t = 0; t < opt->nplot_threads; t++) {
			const struct tio_result *r = &all[t * per + p * TIO_ITEM_COUNT];
			const struct tio_result *rr = &r[TIO_RANDOM_READ], *sr = &r[TIO_READ];
			emitter_table_printf(e, "%-9s %7u %12.3f %12.3f %14.1f %14.1f\n",
					     fwait_policy_name(opt->policies[p]), r->threads,
					     tio_per_mb(rr, tio_res_cpu(rr) * 1000),
					     tio_per_mb(sr, tio_res_cpu(sr) * 1000),
					     tio_per_mb(rr, (double)rr->fwait_spurious),
					     tio_per_mb(sr, (double)sr->fwait_spurious));
		}
	}
}
