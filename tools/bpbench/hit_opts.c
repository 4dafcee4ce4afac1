/* SPDX-License-Identifier: MIT */
/*
 * hit_opts.c - bpbench hit's options, usage text, and the pool size
 * derived from them.
 *
 * Design note
 * -----------
 * Layer: bpbench (see hit_int.h).  Numbers go through util/opt.h, the one
 * strict parser of the tools (through bench_opt.h for a page size, a
 * 32-bit count or an open interval), which prints its own message; the
 * two lists (thread counts, modes) are split here by one splitter.  A
 * refusal is -EINVAL and bpbench hit exits 2.  The default thread counts
 * are the powers of two up to twice the online CPUs (and that count
 * itself), so the default run shows both the scaling up to the CPUs and
 * what oversubscription does.
 */
#include "hit_int.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench_opt.h"
#include "util/opt.h"

uint32_t hit_frames_for(const struct hit_options *o)
{
	return o->pages + HIT_SPARE_FRAMES;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bpbench hit [options]\n"
		"  ns per access of a resident page, for 1..T threads, random pages and one hot\n"
		"  page, in each access mode; the pool's cost also as a ratio to the memory floor.\n"
		"  Every page fits in the pool and is read once first: the run has only hits.\n"
		"      --pages N         pages in the file and the pool (default %u)\n"
		"      --page-size N     page size in bytes, power of two in [%u, %u] (default %u)\n"
		"      --threads LIST    comma-separated thread counts (default: powers of two up\n"
		"                        to 2 x the online CPUs, e.g. 1,2,4 on 2 CPUs)\n"
		"      --duration S      seconds per cell and repeat (default %g)\n"
		"      --repeat R        runs of every cell; min, median and max printed (default %u)\n"
		"      --modes LIST      comma-separated, of:", HIT_DEFAULT_PAGES, BP_PAGE_SIZE_MIN,
		BP_PAGE_SIZE_MAX, BP_PAGE_SIZE_DEFAULT, HIT_DEFAULT_DURATION_S, HIT_DEFAULT_REPEAT);
	for (int m = 0; m < HIT_MODE_COUNT; m++)
		fprintf(f, "%s%s", m ? "," : " ", hit_modes[m].name);
	fprintf(f, " (default all)\n");
	for (int m = 0; m < HIT_MODE_COUNT; m++)
		fprintf(f, "                        %-8s %s\n", hit_modes[m].name, hit_modes[m].help);
	fprintf(f,
		"      --seed N          seed of the random pages (default %u)\n"
		"      --file PATH       data file (default: a temporary file in $TMPDIR or /tmp)\n"
		"      --keep-file       do not delete the data file at the end\n"
		"      --json            JSON lines on stdout (config, one hit per cell, pool);\n"
		"                        the table goes to stderr\n"
		"  -h, --help            this text\n"
		"Exit status: 0 ok, 1 the run failed (a pool call, a wrong byte, a miss), 2 bad\n"
		"arguments, 130 interrupted by Ctrl-C (no report; the temporary file is removed).\n",
		HIT_DEFAULT_SEED);
}

static int thread_count_item(const char *tok, void *arg)
{
	struct hit_options *o = arg;
	if (o->nthreads == HIT_MAX_COUNTS) {
		fprintf(stderr, HIT_PROG ": at most %u thread counts\n", HIT_MAX_COUNTS);
		return -EINVAL;
	}
	if (util_opt_unsigned(HIT_PROG, "--threads", tok, 1, HIT_MAX_THREADS,
			      &o->threads[o->nthreads]) != 0)
		return -EINVAL;
	o->nthreads++;
	return 0;
}

static int mode_item(const char *tok, void *arg)
{
	struct hit_options *o = arg;
	for (int m = 0; m < HIT_MODE_COUNT; m++) {
		if (strcmp(tok, hit_modes[m].name) == 0) {
			o->modes[m] = true;
			return 0;
		}
	}
	fprintf(stderr, HIT_PROG ": unknown mode '%s' (try --help)\n", tok);
	return -EINVAL;
}

/* 1, 2, 4, ... up to twice the online CPUs, and that count itself. */
static void default_threads(struct hit_options *o)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned top = cpus < 1 ? 2 : cpus > HIT_MAX_THREADS / 2 ? HIT_MAX_THREADS : 2 * (unsigned)cpus;
	o->nthreads = 0;
	for (unsigned t = 1; t < top && o->nthreads < HIT_MAX_COUNTS - 1; t *= 2)
		o->threads[o->nthreads++] = t;
	o->threads[o->nthreads++] = top;
}

enum {
	OPT_PAGES = 256, OPT_PAGE_SIZE, OPT_THREADS, OPT_DURATION, OPT_REPEAT, OPT_MODES, OPT_SEED,
	OPT_FILE, OPT_KEEP, OPT_JSON,
};

/* One option: 0, 1 (help printed) or -EINVAL (message printed). */
static int parse_one(int c, const char *arg, char **argv, struct hit_options *o)
{
	switch (c) {
	case OPT_PAGES:
		return bench_opt_u32(HIT_PROG, "--pages", arg, 1, HIT_MAX_PAGES, &o->pages);
	case OPT_PAGE_SIZE:
		return bench_opt_page_size(HIT_PROG, arg, &o->page_size);
	case OPT_THREADS:
		o->nthreads = 0;
		return util_opt_list(HIT_PROG, "--threads", arg, thread_count_item, o);
	case OPT_DURATION:
		return bench_opt_double_above(HIT_PROG, "--duration", arg, 0, 3600, true,
					      &o->duration_s);
	case OPT_REPEAT:
		return util_opt_unsigned(HIT_PROG, "--repeat", arg, 1, HIT_MAX_REPEAT, &o->repeat);
	case OPT_MODES:
		memset(o->modes, 0, sizeof(o->modes));
		return util_opt_list(HIT_PROG, "--modes", arg, mode_item, o);
	case OPT_SEED:
		return util_opt_u64(HIT_PROG, "--seed", arg, 0, UINT64_MAX, &o->seed);
	case OPT_FILE:
		o->file = arg;
		return 0;
	case OPT_KEEP:
		o->keep_file = true;
		return 0;
	case OPT_JSON:
		o->json = true;
		return 0;
	case 'h':
		usage(stdout);
		return 1;
	case ':':
		fprintf(stderr, HIT_PROG ": %s needs an argument\n", argv[optind - 1]);
		return -EINVAL;
	default:
		fprintf(stderr, HIT_PROG ": unknown option '%s' (try --help)\n", argv[optind - 1]);
		return -EINVAL;
	}
}

int hit_parse_options(int argc, char **argv, struct hit_options *o)
{
	static const struct option longopts[] = {
		{ "pages", required_argument, NULL, OPT_PAGES },
		{ "page-size", required_argument, NULL, OPT_PAGE_SIZE },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "repeat", required_argument, NULL, OPT_REPEAT },
		{ "modes", required_argument, NULL, OPT_MODES },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "file", required_argument, NULL, OPT_FILE },
		{ "keep-file", no_argument, NULL, OPT_KEEP },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	*o = (struct hit_options){
		.pages = HIT_DEFAULT_PAGES,
		.page_size = BP_PAGE_SIZE_DEFAULT,
		.duration_s = HIT_DEFAULT_DURATION_S,
		.repeat = HIT_DEFAULT_REPEAT,
		.seed = HIT_DEFAULT_SEED,
	};
	for (int m = 0; m < HIT_MODE_COUNT; m++)
		o->modes[m] = true;
	default_threads(o);
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		int rc = parse_one(c, optarg, argv, o);
		if (rc != 0)
			return rc;
	}
	if (optind < argc) {
		fprintf(stderr, HIT_PROG ": unexpected argument '%s' (try --help)\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}
