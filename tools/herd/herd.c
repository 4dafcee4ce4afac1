/* SPDX-License-Identifier: MIT */
/*
 * herd.c - fwait-herd: the thundering-herd microbenchmark of the wait table.
 *
 * Design note: parses the command line, runs every requested variant in
 * the same process one after another (herd_run.c), and has herd_report.c
 * print one row per variant, then CPU-per-acquisition ratios against
 * BROADCAST (the unfiltered pre-2004 hashed queue) and against percond (a
 * mutex + condvar in every object, the memory-hungry ideal), then the
 * memory comparison; --json prints the same as JSON lines.  No global
 * mutable state but toolutil.h's stop flag: the options live in main's
 * frame and are passed down.  SIGINT (or SIGTERM) ends the variant running
 * (herd_run.c's timed sleep looks at the flag; an -n run goes on to its
 * count), skips the rest and exits 130 (SIGTERM: 1) without the summary,
 * which needs every variant.
 */
#include "herd.h"
#include "policy_opt.h"
#include "toolutil.h"
#include "util/emitter.h"
#include "util/opt.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* The variants beyond fwait's policies (one each, first, from the
 * library's policy table: herd_variants): a policy plus an fwait_config
 * tweak is one line here, as is a per-object baseline.  The usage text,
 * -p and the report take their names from the variants. */
static const struct herd_variant extra_variants[] = {
	{ "wake-one-strict", "wake-one, strict FIFO handoff", HERD_FWAIT,
	  { .policy = FWAIT_WAKE_ONE, .handoff = FWAIT_HANDOFF_STRICT } },
	{ "wake-one+steal", "wake-one, due after 5 lost races", HERD_FWAIT,
	  { .policy = FWAIT_WAKE_ONE, .max_steals = 5 } },
	/* wake-one without the handoff for long holds: what it saves. */
	{ "wake-one-novote", "wake-one, no handoff for long holds", HERD_FWAIT,
	  { .policy = FWAIT_WAKE_ONE, .handoff_hold_ns = FWAIT_HANDOFF_HOLD_OFF } },
	/* wake-one counting nothing: what the statistics cost. */
	{ "wake-one-nostats", "wake-one, statistics off", HERD_FWAIT,
	  { .policy = FWAIT_WAKE_ONE, .stats_off = true } },
	{ "percond", "a mutex and a condvar in every object", HERD_PERCOND, { 0 } },
	{ "mutex", "a plain pthread mutex in every object", HERD_MUTEX, { 0 } },
};
#define NEXTRA (sizeof(extra_variants) / sizeof(extra_variants[0]))
_Static_assert(FWAIT_POLICY_COUNT + NEXTRA <= HERD_MAX_VARIANTS,
	       "fwait-herd: HERD_MAX_VARIANTS too small for every variant");

/* Every variant into o->all, in the order the default run (no -p) runs
 * them: each fwait policy as it is, then the extras. */
static void herd_variants(struct herd_options *o)
{
	o->nall = 0;
	for (int p = 0; p < FWAIT_POLICY_COUNT; p++)
		o->all[o->nall++] = (struct herd_variant){
			.name = fwait_policy_name((enum fwait_policy)p),
			.help = fwait_policy_help((enum fwait_policy)p),
			.kind = HERD_FWAIT,
			.cfg = { .policy = (enum fwait_policy)p },
		};
	for (size_t i = 0; i < NEXTRA; i++)
		o->all[o->nall++] = extra_variants[i];
}

/* The variants' names, comma-separated, to f. */
static void list_variants(FILE *f, const struct herd_options *o)
{
	for (unsigned i = 0; i < o->nall; i++)
		fprintf(f, "%s%s", i ? "," : "", o->all[i].name);
}

static void usage(FILE *f, const struct herd_options *o)
{
	fprintf(f,
		"usage: fwait-herd [options]\n"
		"  -t N        threads (default 512)\n"
		"  -k N        objects (default 32)\n"
		"  -b N        wait-table buckets (default 8)\n"
		"  -H US       hold time in microseconds, a nanosleep (default 50)\n"
		"  -C NS       compute hold instead of the sleep: spin on the clock for NS\n"
		"              nanoseconds inside the lock, never sleeping (-H then absent\n"
		"              or 0; -H 0 -C 0: no hold at all)\n"
		"  -d SECONDS  run time per policy (default 3)\n"
		"  -n OPS      acquisitions per policy instead of a run time\n"
		"  -s SEED     seed of the object picks (default 1)\n"
		"  -p LIST     comma-separated variants (default: all, in this order):\n");
	for (unsigned i = 0; i < o->nall; i++)
		tool_usage_choice(f, "              ", 16, o->all[i].name, o->all[i].help);
	fprintf(f,
		"  --json      JSON lines instead of a table\n"
		"  -h, --help  this text\n"
		"  --version   the version\n");
}

static int parse_policies(const char *list, struct herd_options *o)
{
	char *copy = strdup(list), *save = NULL;
	int rc = 0;
	if (!copy)
		return -ENOMEM;
	o->nchosen = 0;
	for (char *name = strtok_r(copy, ",", &save); name && rc == 0;
	     name = strtok_r(NULL, ",", &save)) {
		size_t i;
		for (i = 0; i < o->nall; i++)
			if (strcmp(name, o->all[i].name) == 0)
				break;
		if (i == o->nall) {
			fprintf(stderr, "fwait-herd: unknown policy '%s' (want one of ", name);
			list_variants(stderr, o);
			fprintf(stderr, ")\n");
			rc = -EINVAL;
		} else if (o->nchosen == HERD_MAX_VARIANTS) {
			fprintf(stderr, "fwait-herd: at most %d policies\n", HERD_MAX_VARIANTS);
			rc = -EINVAL;
		} else {
			o->chosen[o->nchosen++] = &o->all[i];
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
static int parse_options(int argc, char **argv, struct herd_options *o)
{
	static const struct option longs[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc = 0;
	bool hold_given = false;

	memset(o, 0, sizeof(*o));
	o->p = (struct herd_params){ .threads = 512, .objects = 32, .buckets = 8,
				     .hold_us = 50, .seconds = 3, .seed = 1 };
	herd_variants(o);
	for (unsigned i = 0; i < o->nall; i++)
		o->chosen[o->nchosen++] = &o->all[i];

	while (rc == 0 && (c = getopt_long(argc, argv, "t:k:b:H:C:d:n:s:p:h", longs, NULL)) != -1) {
		switch (c) {
		case 't': rc = util_opt_unsigned("fwait-herd", "-t", optarg, 1, 32768, &o->p.threads); break;
		case 'k': rc = util_opt_unsigned("fwait-herd", "-k", optarg, 1, 1u << 26, &o->p.objects); break;
		case 'b': rc = util_opt_unsigned("fwait-herd", "-b", optarg, 1, 1u << 24, &o->p.buckets); break;
		case 'H':
			rc = util_opt_unsigned("fwait-herd", "-H", optarg, 0, 10000000, &o->p.hold_us);
			hold_given = true;
			break;
		case 'C': rc = util_opt_unsigned("fwait-herd", "-C", optarg, 0, 10000000, &o->p.compute_ns); break;
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
	/* One hold: a sleep or a spin, not both. */
	if (rc == 0 && o->p.compute_ns) {
		if (hold_given && o->p.hold_us) {
			fprintf(stderr, "fwait-herd: -H %u and -C %u: the hold is a sleep (-H) or a "
				"compute hold (-C), not both\n", o->p.hold_us, o->p.compute_ns);
			rc = -EINVAL;
		}
		o->p.hold_us = 0;
	}
	return rc;
}

/* 0, or the first error writing stdout (through e or at the flush). */
static int flushed(const struct emitter *e)
{
	int rc = emitter_finish(e);
	return rc == 0 && fflush(stdout) != 0 ? -EIO : rc;
}

int main(int argc, char **argv)
{
	struct herd_options o;
	if (tool_version_asked(argc, argv))
		return tool_version_print("fwait-herd");
	int rc = parse_options(argc, argv, &o);
	if (rc == 1) {
		usage(stdout, &o);
		return 0;
	}
	if (rc) {
		usage(stderr, &o);
		return 2;
	}

	struct herd_result rs[HERD_MAX_VARIANTS];
	struct emitter e;
	memset(rs, 0, sizeof(rs));
	emitter_init(&e, o.json ? EMITTER_JSON_COMPACT : EMITTER_TABLE, emitter_write_file,
		     stdout);
	tool_catch_stop();
	herd_print_header(&e, &o, argc, argv);
	rc = flushed(&e);
	for (unsigned i = 0; rc == 0 && i < o.nchosen && !tool_stop_signal; i++) {
		rc = herd_run(o.chosen[i], &o.p, &rs[i]);
		if (rc) {
			fprintf(stderr, "fwait-herd: %s failed: %s\n", o.chosen[i]->name,
				strerror(-rc));
			return 1;
		}
		if (tool_stop_signal)
			break; /* a row of a cut run would read as a full one */
		herd_print_row(&e, &o, o.chosen[i], &rs[i]);
		rc = flushed(&e);
	}
	if (tool_stop_signal) {
		fprintf(stderr, "fwait-herd: interrupted\n");
		return tool_exit_status(1);
	}
	if (rc == 0) {
		herd_print_summary(&e, &o, rs);
		rc = flushed(&e);
	}
	if (rc) {
		fprintf(stderr, "fwait-herd: writing the report: %s\n", strerror(-rc));
		return 1;
	}
	return 0;
}
