/* SPDX-License-Identifier: MIT */
/*
 * herd_report.c - fwait-herd's report: the header, one row per variant,
 * then the wait-and-fairness table, the CPU ratios and the memory
 * comparison.
 *
 * Design note: everything goes through one emitter (util/emitter.h): JSON
 * lines are its compact back-end, the table its table back-end
 * (emitter_table_printf), so the two can never disagree.  Only figures
 * derived from a herd_result are computed here; nothing is measured.
 */
#include "herd.h"
#include "util/emitter.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROJECTED_OBJECTS 1000000ull

/* ---- derived figures ---------------------------------------------------- */

static double per_1k(double v, uint64_t acq)
{
	return acq ? v * 1000.0 / (double)acq : NAN;
}

static double per_acq(double v, uint64_t acq)
{
	return acq ? v / (double)acq : NAN;
}

static double cpu_per_acq(const struct herd_result *r)
{
	return per_acq(r->user_s + r->sys_s, r->acquisitions);
}

static double mean_per_thread(const struct herd_result *r)
{
	return r->threads ? (double)r->acquisitions / (double)r->threads : NAN;
}

/* min/mean acquisitions per thread: 1 = every thread got its share, 0 = at
 * least one thread starved. */
static double fairness(const struct herd_result *r)
{
	double mean = mean_per_thread(r);
	return mean > 0 ? (double)r->acq_min / mean : NAN;
}

static size_t percond_bytes(uint64_t objects)
{
	return (size_t)(objects * sizeof(struct herd_percond));
}

/* fwait at n objects: the fixed table plus each object's 32-bit word. */
static double fwait_bytes_at(const struct herd_result *r, uint64_t n)
{
	return (double)r->sync_bytes + 4.0 * (double)n;
}

/* Any variant at n objects: fwait's table grows by a word per object, the
 * per-object baselines by their whole state. */
static double bytes_at(const struct herd_variant *v, const struct herd_result *r, uint64_t n)
{
	if (v->kind == HERD_FWAIT)
		return fwait_bytes_at(r, n);
	return (double)n * (double)herd_object_bytes(v->kind);
}

/* The command line, its words joined by spaces (malloc'd; NULL: no memory). */
static char *cmdline(int argc, char **argv)
{
	size_t len = 1;
	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	char *s = malloc(len), *p = s;
	for (int i = 0; s && i < argc; i++)
		p += sprintf(p, "%s%s", i ? " " : "", argv[i]);
	if (s)
		*p = '\0';
	return s;
}

/* The hold regime, as the JSON header names it. */
static const char *hold_kind(const struct herd_params *p)
{
	return p->compute_ns ? "compute" : p->hold_us ? "sleep" : "none";
}

/* A number as printf's %g writes it (finite values only: valid JSON). */
static void kv_g(struct emitter *e, const char *key, double v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%g", v);
	emitter_kv_raw(e, key, buf);
}

void herd_print_header(struct emitter *e, const struct herd_options *o, int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	const struct herd_params *p = &o->p;
	char *cmd = cmdline(argc, argv);

	if (emitter_is_json(e)) {
		emitter_dict_begin(e, NULL);
		emitter_kv_str(e, "type", "header");
		emitter_kv_str(e, "argv", cmd ? cmd : "");
		emitter_kv_i64(e, "nproc", ncpu);
		emitter_kv_u64(e, "threads", p->threads);
		emitter_kv_u64(e, "objects", p->objects);
		emitter_kv_u64(e, "buckets", p->buckets);
		emitter_kv_u64(e, "hold_us", p->hold_us);
		kv_g(e, "seconds", p->seconds);
		emitter_kv_u64(e, "ops", p->ops);
		emitter_kv_u64(e, "seed", p->seed);
		emitter_kv_u64(e, "compute_ns", p->compute_ns);
		emitter_kv_str(e, "hold", hold_kind(p));
		emitter_dict_end(e);
		free(cmd);
		return;
	}
	emitter_table_printf(e, "# command: %s\n", cmd ? cmd : "?");
	free(cmd);
	emitter_table_printf(e, "# machine: nproc %ld; threads %u, objects %u, buckets %u, ",
			     ncpu, p->threads, p->objects, p->buckets);
	if (p->compute_ns)
		emitter_table_printf(e, "hold %u ns (compute: spin on the clock), ", p->compute_ns);
	else if (p->hold_us)
		emitter_table_printf(e, "hold %u us (nanosleep), ", p->hold_us);
	else
		emitter_table_printf(e, "no hold (-H 0 -C 0), ");
	if (p->ops)
		emitter_table_printf(e, "%llu acquisitions per policy", (unsigned long long)p->ops);
	else
		emitter_table_printf(e, "%g s per policy", p->seconds);
	emitter_table_printf(e, ", seed %llu\n", (unsigned long long)p->seed);
	emitter_table_printf(e, "# CPU = getrusage(RUSAGE_SELF) user+sys over the run; vcsw = "
			     "voluntary context switches; spurious = woken but had to sleep again\n");
	emitter_table_printf(e, "# hold_us = measured mean hold (nanosleep + timer slack, or the "
			     "spin up to the next clock read); "
			     "fgn/acq = waiters of other keys walked past per acquisition; "
			     "maxdep = max_bucket_depth\n");
	emitter_table_printf(e, "%-15s %9s %9s %7s %9s %9s %9s %8s %8s %9s %8s %7s %6s %10s %12s\n",
			     "policy", "acq", "acq/s", "hold_us", "usr_s/1k", "sys_s/1k",
			     "cpu_s/1k", "vcsw/acq", "wake/acq", "spurious", "spur/acq",
			     "fgn/acq", "maxdep", "sync_bytes", "1M_obj_bytes");
}

void herd_print_row(struct emitter *e, const struct herd_options *o, const struct herd_variant *v,
		      const struct herd_result *r)
{
	uint64_t a = r->acquisitions;
	double proj = bytes_at(v, r, PROJECTED_OBJECTS);
	/* A plain mutex cannot tell a spurious wakeup (glibc does not count
	 * them): JSON null, "-" in the table. */
	bool spur_known = v->kind != HERD_MUTEX;
	double wake = v->kind == HERD_FWAIT ? per_acq((double)r->wakeups, a) : NAN;

	if (emitter_is_json(e)) {
		emitter_dict_begin(e, NULL);
		emitter_kv_str(e, "type", "row");
		emitter_kv_str(e, "policy", v->name);
		emitter_kv_u64(e, "acquisitions", a);
		emitter_kv_double(e, "wall_s", r->wall_s, 4);
		emitter_kv_double(e, "acq_per_s", (double)a / r->wall_s, 1);
		emitter_kv_double(e, "hold_us_mean", per_acq(r->hold_s, a) * 1e6, 2);
		emitter_kv_double(e, "user_s", r->user_s, 4);
		emitter_kv_double(e, "sys_s", r->sys_s, 4);
		emitter_kv_double(e, "cpu_s_per_1k", per_1k(r->user_s + r->sys_s, a), 6);
		emitter_kv_double(e, "user_s_per_1k", per_1k(r->user_s, a), 6);
		emitter_kv_double(e, "sys_s_per_1k", per_1k(r->sys_s, a), 6);
		emitter_kv_u64(e, "vcsw", r->vcsw);
		emitter_kv_u64(e, "ivcsw", r->ivcsw);
		emitter_kv_double(e, "vcsw_per_acq", per_acq((double)r->vcsw, a), 4);
		if (spur_known)
			emitter_kv_u64(e, "spurious", r->spurious);
		else
			emitter_kv_double(e, "spurious", NAN, 0);
		emitter_kv_u64(e, "waits", r->waits);
		emitter_kv_u64(e, "wakeups", r->wakeups);
		emitter_kv_u64(e, "handoffs", r->handoffs);
		emitter_kv_u64(e, "foreign_skipped", r->foreign_skipped);
		emitter_kv_u64(e, "max_bucket_depth", r->max_bucket_depth);
		emitter_kv_u64(e, "sync_bytes", r->sync_bytes);
		emitter_kv_u64(e, "percond_bytes", percond_bytes(o->p.objects));
		emitter_kv_double(e, "projected_1m_bytes", proj, 0);
		/* Appended in issue 11: involuntary switches, CPU in us, the
		 * wait's quantiles and the fairness of the threads. */
		emitter_kv_double(e, "ivcsw_per_acq", per_acq((double)r->ivcsw, a), 4);
		emitter_kv_double(e, "cpu_us_per_acq", cpu_per_acq(r) * 1e6, 4);
		emitter_kv_u64(e, "wait_p50_ns", r->wait_p50_ns);
		emitter_kv_u64(e, "wait_p99_ns", r->wait_p99_ns);
		emitter_kv_u64(e, "wait_max_ns", r->wait_max_ns);
		emitter_kv_double(e, "wait_mean_ns", r->wait_mean_ns, 1);
		emitter_kv_u64(e, "threads_run", r->threads);
		emitter_kv_u64(e, "acq_per_thread_min", r->acq_min);
		emitter_kv_double(e, "acq_per_thread_mean", mean_per_thread(r), 1);
		emitter_kv_u64(e, "acq_per_thread_max", r->acq_max);
		emitter_kv_double(e, "fairness_min_mean", fairness(r), 4);
		emitter_dict_end(e);
		return;
	}
	/* percond and mutex keep no wakeup, walk or depth counts. */
	char wake_s[32] = "-", fgn_s[32] = "-", dep_s[32] = "-";
	char spur_s[32] = "-", spa_s[32] = "-";
	if (spur_known) {
		snprintf(spur_s, sizeof(spur_s), "%llu", (unsigned long long)r->spurious);
		snprintf(spa_s, sizeof(spa_s), "%.3f", per_acq((double)r->spurious, a));
	}
	if (v->kind == HERD_FWAIT) {
		snprintf(wake_s, sizeof(wake_s), "%.2f", wake);
		snprintf(fgn_s, sizeof(fgn_s), "%.1f", per_acq((double)r->foreign_skipped, a));
		snprintf(dep_s, sizeof(dep_s), "%u", r->max_bucket_depth);
	}
	emitter_table_printf(e, "%-15s %9llu %9.0f %7.2f %9.4f %9.4f %9.4f %8.2f %8s %9s %8s "
			     "%7s %6s %10zu %12.0f\n",
			     v->name, (unsigned long long)a, (double)a / r->wall_s,
			     per_acq(r->hold_s, a) * 1e6, per_1k(r->user_s, a), per_1k(r->sys_s, a),
			     per_1k(r->user_s + r->sys_s, a), per_acq((double)r->vcsw, a), wake_s,
			     spur_s, spa_s, fgn_s, dep_s, r->sync_bytes, proj);
}

static const struct herd_result *find(const struct herd_options *o,
				      const struct herd_result *rs, const char *name)
{
	for (unsigned i = 0; i < o->nchosen; i++)
		if (strcmp(o->chosen[i]->name, name) == 0 && rs[i].acquisitions)
			return &rs[i];
	return NULL;
}

static void print_ratios(struct emitter *e, const struct herd_options *o,
			 const struct herd_result *rs)
{
	const struct herd_result *bc = find(o, rs, fwait_policy_name(FWAIT_BROADCAST));
	const struct herd_result *pc = find(o, rs, "percond");
	const struct herd_result *mx = find(o, rs, "mutex");

	emitter_table_printf(e, "\n# CPU per acquisition relative to broadcast, to percond and to "
			     "mutex (lower is better)\n%-15s %12s %12s %12s\n", "policy",
			     "vs_broadcast", "vs_percond", "vs_mutex");
	for (unsigned i = 0; i < o->nchosen; i++) {
		double c = cpu_per_acq(&rs[i]);
		double vb = bc ? c / cpu_per_acq(bc) : NAN;
		double vp = pc ? c / cpu_per_acq(pc) : NAN;
		double vm = mx ? c / cpu_per_acq(mx) : NAN;
		if (emitter_is_json(e)) {
			/* -1: no such variant in this run */
			emitter_dict_begin(e, NULL);
			emitter_kv_str(e, "type", "ratio");
			emitter_kv_str(e, "policy", o->chosen[i]->name);
			emitter_kv_double(e, "cpu_vs_broadcast", isnan(vb) ? -1.0 : vb, 4);
			emitter_kv_double(e, "cpu_vs_percond", isnan(vp) ? -1.0 : vp, 4);
			emitter_kv_double(e, "cpu_vs_mutex", isnan(vm) ? -1.0 : vm, 4);
			emitter_dict_end(e);
		} else {
			/* "-": no such variant in this run (not "nan") */
			char sb[16] = "-", sp[16] = "-", sm[16] = "-";
			if (!isnan(vb))
				snprintf(sb, sizeof(sb), "%.3f", vb);
			if (!isnan(vp))
				snprintf(sp, sizeof(sp), "%.3f", vp);
			if (!isnan(vm))
				snprintf(sm, sizeof(sm), "%.3f", vm);
			emitter_table_printf(e, "%-15s %12s %12s %12s\n", o->chosen[i]->name, sb, sp,
					     sm);
		}
	}
}

static void print_memory(struct emitter *e, const struct herd_options *o,
			 const struct herd_result *rs)
{
	const struct herd_result *fw = NULL;
	for (unsigned i = 0; i < o->nchosen && !fw; i++)
		if (o->chosen[i]->kind == HERD_FWAIT && rs[i].sync_bytes)
			fw = &rs[i];
	if (!fw)
		return;
	size_t pc_now = percond_bytes(o->p.objects);
	double pc_1m = (double)percond_bytes(PROJECTED_OBJECTS);
	double fw_1m = fwait_bytes_at(fw, PROJECTED_OBJECTS);
	size_t mx_obj = herd_object_bytes(HERD_MUTEX);
	double mx_1m = (double)PROJECTED_OBJECTS * (double)mx_obj;

	if (emitter_is_json(e)) {
		emitter_dict_begin(e, NULL);
		emitter_kv_str(e, "type", "memory");
		emitter_kv_u64(e, "fwait_table_bytes", fw->sync_bytes);
		emitter_kv_u64(e, "percond_bytes", pc_now);
		emitter_kv_u64(e, "percond_object_bytes", sizeof(struct herd_percond));
		emitter_kv_double(e, "ratio_now", (double)fw->sync_bytes / (double)pc_now, 4);
		emitter_kv_u64(e, "projected_objects", PROJECTED_OBJECTS);
		emitter_kv_double(e, "fwait_projected_bytes", fw_1m, 0);
		emitter_kv_double(e, "percond_projected_bytes", pc_1m, 0);
		emitter_kv_double(e, "ratio_projected", fw_1m / pc_1m, 4);
		emitter_kv_u64(e, "mutex_object_bytes", mx_obj);
		emitter_kv_u64(e, "mutex_bytes", (uint64_t)o->p.objects * mx_obj);
		emitter_kv_double(e, "mutex_projected_bytes", mx_1m, 0);
		emitter_dict_end(e);
		return;
	}
	emitter_table_printf(e, "\n# memory: fwait table %zu B (%u buckets) vs percond %u x %zu B "
			     "(mutex+cond+flag) = %zu B: fwait/percond = %.3f\n",
			     fw->sync_bytes, o->p.buckets, o->p.objects,
			     sizeof(struct herd_percond), pc_now,
			     (double)fw->sync_bytes / (double)pc_now);
	emitter_table_printf(e, "# projected at %llu objects: fwait %.1f MiB (table + 4 B word "
			     "per object) vs percond %.1f MiB: fwait/percond = %.3f\n",
			     PROJECTED_OBJECTS, fw_1m / 1048576.0, pc_1m / 1048576.0,
			     fw_1m / pc_1m);
	emitter_table_printf(e, "# mutex: %u x %zu B = %zu B now, %.1f MiB at %llu objects\n",
			     o->p.objects, mx_obj, (size_t)o->p.objects * mx_obj,
			     mx_1m / 1048576.0, PROJECTED_OBJECTS);
}

/* The table's view of the rows' appended fields: per variant, what a
 * caller of lock sees (throughput, cost, switches, the wait) and whether
 * every thread got its share. */
static void print_waits(struct emitter *e, const struct herd_options *o,
			const struct herd_result *rs)
{
	if (emitter_is_json(e))
		return; /* the rows carry all of it */
	emitter_table_printf(e, "\n# per variant: cpu_us/acq = CPU us per acquisition; "
			     "vcsw, ivcsw = voluntary, involuntary context switches; "
			     "spur = spurious wakeups\n");
	emitter_table_printf(e, "# wait = from calling lock to holding (p50, p99, max over every "
			     "acquisition; includes one clock read); acq/thread min and mean over "
			     "the %u threads: min/mean 1 = fair, 0 = a thread starved\n",
			     o->p.threads);
	emitter_table_printf(e, "%-15s %10s %10s %9s %9s %9s %11s %11s %11s %9s %10s %8s\n",
			     "policy", "acq/s", "cpu_us/acq", "vcsw/acq", "ivcsw/acq",
			     "spur/acq", "wait_p50_us", "wait_p99_us", "wait_max_us", "thr_min",
			     "thr_mean", "min/mean");
	for (unsigned i = 0; i < o->nchosen; i++) {
		const struct herd_result *r = &rs[i];
		uint64_t a = r->acquisitions;
		char spa_s[32] = "-";
		if (o->chosen[i]->kind != HERD_MUTEX)
			snprintf(spa_s, sizeof(spa_s), "%.3f", per_acq((double)r->spurious, a));
		emitter_table_printf(e, "%-15s %10.0f %10.3f %9.3f %9.3f %9s %11.2f %11.2f %11.1f "
				     "%9llu %10.1f %8.3f\n",
				     o->chosen[i]->name, (double)a / r->wall_s, cpu_per_acq(r) * 1e6,
				     per_acq((double)r->vcsw, a), per_acq((double)r->ivcsw, a), spa_s,
				     (double)r->wait_p50_ns * 1e-3, (double)r->wait_p99_ns * 1e-3,
				     (double)r->wait_max_ns * 1e-3, (unsigned long long)r->acq_min,
				     mean_per_thread(r), fairness(r));
	}
}

void herd_print_summary(struct emitter *e, const struct herd_options *o,
			const struct herd_result *rs)
{
	print_waits(e, o, rs);
	print_ratios(e, o, rs);
	print_memory(e, o, rs);
}
