/*
 * herd.c - fwait-herd: the thundering-herd microbenchmark of the wait table.
 *
 * Design note: parses the command line, runs every requested variant in
 * the same process one after another (herd_run.c), and prints one row per
 * variant, then CPU-per-acquisition ratios against BROADCAST (the unfiltered
 * pre-2004 hashed queue) and against percond (a mutex + condvar in every
 * object, the memory-hungry ideal), then the memory comparison.  --json
 * prints the same as JSON lines.  Both go through one emitter
 * (util/emitter.h): JSON lines are its compact back-end, the table its
 * table back-end (emitter_table_printf).  No global mutable state: the
 * options live in main's frame and are passed down.
 */
#include "herd.h"
#include "util/emitter.h"
#include "util/opt.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_VARIANTS 16
#define PROJECTED_OBJECTS 1000000ull

static const struct herd_variant all_variants[] = {
	{ "wake-one", HERD_FWAIT, FWAIT_WAKE_ONE, 0 },
	{ "wake-all", HERD_FWAIT, FWAIT_WAKE_ALL, 0 },
	{ "broadcast", HERD_FWAIT, FWAIT_BROADCAST, 0 },
	{ "futex", HERD_FWAIT, FWAIT_FUTEX, 0 },
	{ "wake-one+steal", HERD_FWAIT, FWAIT_WAKE_ONE, 5 },
	{ "percond", HERD_PERCOND, FWAIT_WAKE_ONE, 0 },
};
#define NALL (sizeof(all_variants) / sizeof(all_variants[0]))

struct options {
	struct herd_params p;
	bool json;
	const struct herd_variant *chosen[MAX_VARIANTS];
	unsigned nchosen;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: fwait-herd [options]\n"
		"  -t N        threads (default 512)\n"
		"  -k N        objects (default 32)\n"
		"  -b N        wait-table buckets (default 8)\n"
		"  -H US       hold time in microseconds, a nanosleep (default 50)\n"
		"  -d SECONDS  run time per policy (default 3)\n"
		"  -n OPS      acquisitions per policy instead of a run time\n"
		"  -s SEED     seed of the object picks (default 1)\n"
		"  -p LIST     comma-separated variants (default: all):\n"
		"              wake-one,wake-all,broadcast,futex,wake-one+steal,percond\n"
		"  --json      JSON lines instead of a table\n"
		"  -h, --help  this text\n");
}

static int parse_policies(const char *list, struct options *o)
{
	char *copy = strdup(list), *save = NULL;
	int rc = 0;
	if (!copy)
		return -ENOMEM;
	o->nchosen = 0;
	for (char *name = strtok_r(copy, ",", &save); name && rc == 0;
	     name = strtok_r(NULL, ",", &save)) {
		size_t i;
		for (i = 0; i < NALL; i++)
			if (strcmp(name, all_variants[i].name) == 0)
				break;
		if (i == NALL) {
			fprintf(stderr, "fwait-herd: unknown policy '%s' (want one of "
				"wake-one, wake-all, broadcast, futex, wake-one+steal, percond)\n",
				name);
			rc = -EINVAL;
		} else if (o->nchosen == MAX_VARIANTS) {
			fprintf(stderr, "fwait-herd: at most %d policies\n", MAX_VARIANTS);
			rc = -EINVAL;
		} else {
			o->chosen[o->nchosen++] = &all_variants[i];
		}
	}
	if (rc == 0 && o->nchosen == 0) {
		fprintf(stderr, "fwait-herd: -p: empty policy list\n");
		rc = -EINVAL;
	}
	free(copy);
	return rc;
}

/* 0 to run, 1 for --help, negative on a bad command line. */
static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longs[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc = 0;

	memset(o, 0, sizeof(*o));
	o->p = (struct herd_params){ .threads = 512, .objects = 32, .buckets = 8,
				     .hold_us = 50, .seconds = 3, .seed = 1 };
	for (size_t i = 0; i < NALL; i++)
		o->chosen[o->nchosen++] = &all_variants[i];

	while (rc == 0 && (c = getopt_long(argc, argv, "t:k:b:H:d:n:s:p:h", longs, NULL)) != -1) {
		switch (c) {
		case 't': rc = util_opt_unsigned("fwait-herd", "-t", optarg, 1, 32768, &o->p.threads); break;
		case 'k': rc = util_opt_unsigned("fwait-herd", "-k", optarg, 1, 1u << 26, &o->p.objects); break;
		case 'b': rc = util_opt_unsigned("fwait-herd", "-b", optarg, 1, 1u << 24, &o->p.buckets); break;
		case 'H': rc = util_opt_unsigned("fwait-herd", "-H", optarg, 0, 10000000, &o->p.hold_us); break;
		case 'd': rc = util_opt_double("fwait-herd", "-d", optarg, 0.001, 3600, &o->p.seconds); break;
		case 'n': rc = util_opt_u64("fwait-herd", "-n", optarg, 1, UINT64_MAX / 4, &o->p.ops); break;
		case 's': rc = util_opt_u64("fwait-herd", "-s", optarg, 0, UINT64_MAX - 1, &o->p.seed); break;
		case 'p': rc = parse_policies(optarg, o); break;
		case 'J': o->json = true; break;
		case 'h': return 1;
		default: rc = -EINVAL; break;
		}
	}
	if (rc == 0 && optind < argc) {
		fprintf(stderr, "fwait-herd: unexpected argument '%s'\n", argv[optind]);
		rc = -EINVAL;
	}
	return rc;
}

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

static size_t percond_bytes(uint64_t objects)
{
	return (size_t)(objects * sizeof(struct herd_percond));
}

/* fwait at n objects: the fixed table plus each object's 32-bit word. */
static double fwait_bytes_at(const struct herd_result *r, uint64_t n)
{
	return (double)r->sync_bytes + 4.0 * (double)n;
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

/* A number as printf's %g writes it (finite values only: valid JSON). */
static void kv_g(struct emitter *e, const char *key, double v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%g", v);
	emitter_kv_raw(e, key, buf);
}

static void print_header(struct emitter *e, const struct options *o, int argc, char **argv)
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
		emitter_dict_end(e);
		free(cmd);
		return;
	}
	emitter_table_printf(e, "# command: %s\n", cmd ? cmd : "?");
	free(cmd);
	emitter_table_printf(e, "# machine: nproc %ld; threads %u, objects %u, buckets %u, "
			     "hold %u us (nanosleep), ", ncpu, p->threads, p->objects,
			     p->buckets, p->hold_us);
	if (p->ops)
		emitter_table_printf(e, "%llu acquisitions per policy", (unsigned long long)p->ops);
	else
		emitter_table_printf(e, "%g s per policy", p->seconds);
	emitter_table_printf(e, ", seed %llu\n", (unsigned long long)p->seed);
	emitter_table_printf(e, "# CPU = getrusage(RUSAGE_SELF) user+sys over the run; vcsw = "
			     "voluntary context switches; spurious = woken but had to sleep again\n");
	emitter_table_printf(e, "# hold_us = measured mean hold (nanosleep + timer slack); "
			     "fgn/acq = waiters of other keys walked past per acquisition; "
			     "maxdep = max_bucket_depth\n");
	emitter_table_printf(e, "%-15s %9s %9s %7s %9s %9s %9s %8s %8s %9s %8s %7s %6s %10s %12s\n",
			     "policy", "acq", "acq/s", "hold_us", "usr_s/1k", "sys_s/1k",
			     "cpu_s/1k", "vcsw/acq", "wake/acq", "spurious", "spur/acq",
			     "fgn/acq", "maxdep", "sync_bytes", "1M_obj_bytes");
}

static void print_row(struct emitter *e, const struct options *o, const struct herd_variant *v,
		      const struct herd_result *r)
{
	uint64_t a = r->acquisitions;
	double proj = v->kind == HERD_FWAIT ? fwait_bytes_at(r, PROJECTED_OBJECTS)
					    : (double)percond_bytes(PROJECTED_OBJECTS);
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
		emitter_kv_u64(e, "spurious", r->spurious);
		emitter_kv_u64(e, "waits", r->waits);
		emitter_kv_u64(e, "wakeups", r->wakeups);
		emitter_kv_u64(e, "handoffs", r->handoffs);
		emitter_kv_u64(e, "foreign_skipped", r->foreign_skipped);
		emitter_kv_u64(e, "max_bucket_depth", r->max_bucket_depth);
		emitter_kv_u64(e, "sync_bytes", r->sync_bytes);
		emitter_kv_u64(e, "percond_bytes", percond_bytes(o->p.objects));
		emitter_kv_double(e, "projected_1m_bytes", proj, 0);
		emitter_dict_end(e);
		return;
	}
	/* percond keeps no wakeup, walk or depth counts. */
	char wake_s[32] = "-", fgn_s[32] = "-", dep_s[32] = "-";
	if (v->kind == HERD_FWAIT) {
		snprintf(wake_s, sizeof(wake_s), "%.2f", wake);
		snprintf(fgn_s, sizeof(fgn_s), "%.1f", per_acq((double)r->foreign_skipped, a));
		snprintf(dep_s, sizeof(dep_s), "%u", r->max_bucket_depth);
	}
	emitter_table_printf(e, "%-15s %9llu %9.0f %7.1f %9.4f %9.4f %9.4f %8.2f %8s %9llu %8.3f "
			     "%7s %6s %10zu %12.0f\n",
			     v->name, (unsigned long long)a, (double)a / r->wall_s,
			     per_acq(r->hold_s, a) * 1e6, per_1k(r->user_s, a), per_1k(r->sys_s, a),
			     per_1k(r->user_s + r->sys_s, a), per_acq((double)r->vcsw, a), wake_s,
			     (unsigned long long)r->spurious, per_acq((double)r->spurious, a),
			     fgn_s, dep_s, r->sync_bytes, proj);
}

static const struct herd_result *find(const struct options *o,
				      const struct herd_result *rs, const char *name)
{
	for (unsigned i = 0; i < o->nchosen; i++)
		if (strcmp(o->chosen[i]->name, name) == 0 && rs[i].acquisitions)
			return &rs[i];
	return NULL;
}

static void print_ratios(struct emitter *e, const struct options *o,
			 const struct herd_result *rs)
{
	const struct herd_result *bc = find(o, rs, "broadcast");
	const struct herd_result *pc = find(o, rs, "percond");

	emitter_table_printf(e, "\n# CPU per acquisition relative to broadcast and to percond "
			     "(lower is better)\n%-15s %12s %12s\n", "policy", "vs_broadcast",
			     "vs_percond");
	for (unsigned i = 0; i < o->nchosen; i++) {
		double c = cpu_per_acq(&rs[i]);
		double vb = bc ? c / cpu_per_acq(bc) : NAN;
		double vp = pc ? c / cpu_per_acq(pc) : NAN;
		if (emitter_is_json(e)) {
			/* -1: no such variant in this run */
			emitter_dict_begin(e, NULL);
			emitter_kv_str(e, "type", "ratio");
			emitter_kv_str(e, "policy", o->chosen[i]->name);
			emitter_kv_double(e, "cpu_vs_broadcast", isnan(vb) ? -1.0 : vb, 4);
			emitter_kv_double(e, "cpu_vs_percond", isnan(vp) ? -1.0 : vp, 4);
			emitter_dict_end(e);
		} else {
			emitter_table_printf(e, "%-15s %12.3f %12.3f\n", o->chosen[i]->name, vb, vp);
		}
	}
}

static void print_memory(struct emitter *e, const struct options *o,
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
}

/* 0, or the first error writing stdout (through e or at the flush). */
static int flushed(const struct emitter *e)
{
	int rc = emitter_finish(e);
	return rc == 0 && fflush(stdout) != 0 ? -EIO : rc;
}

int main(int argc, char **argv)
{
	struct options o;
	int rc = parse_options(argc, argv, &o);
	if (rc == 1) {
		usage(stdout);
		return 0;
	}
	if (rc) {
		usage(stderr);
		return 2;
	}

	struct herd_result rs[MAX_VARIANTS];
	struct emitter e;
	memset(rs, 0, sizeof(rs));
	emitter_init(&e, o.json ? EMITTER_JSON_COMPACT : EMITTER_TABLE, emitter_write_file,
		     stdout);
	print_header(&e, &o, argc, argv);
	rc = flushed(&e);
	for (unsigned i = 0; rc == 0 && i < o.nchosen; i++) {
		rc = herd_run(o.chosen[i], &o.p, &rs[i]);
		if (rc) {
			fprintf(stderr, "fwait-herd: %s failed: %s\n", o.chosen[i]->name,
				strerror(-rc));
			return 1;
		}
		print_row(&e, &o, o.chosen[i], &rs[i]);
		rc = flushed(&e);
	}
	if (rc == 0) {
		print_ratios(&e, &o, rs);
		print_memory(&e, &o, rs);
		rc = flushed(&e);
	}
	if (rc) {
		fprintf(stderr, "fwait-herd: writing the report: %s\n", strerror(-rc));
		return 1;
	}
	return 0;
}
