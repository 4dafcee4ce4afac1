/* SPDX-License-Identifier: MIT */
/*
 * tiotest_opts.c - bpbench tiotest's options, usage text, and the sizes of
 * a run derived from them (frames, pages per thread, random operations).
 *
 * Design note
 * -----------
 * Layer: bpbench (see tiotest_int.h).  Numbers go through util/opt.h, the
 * one strict parser of the tools (through bench_opt.h for a page size, a
 * 32-bit count or a half-open interval), which prints its own message;
 * lists (policies, thread counts) are split here, by one splitter.  A refusal is -EINVAL and
 * bpbench tiotest exits 2.
 */
#include "tiotest_int.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "bench_opt.h"
#include "policy_opt.h"
#include "util/opt.h"

const char *const tio_item_names[TIO_ITEM_COUNT] = {
	"Write", "Random Write", "Read", "Random Read",
};

uint32_t tio_frames_for(const struct tio_options *opt, unsigned threads)
{
	if (opt->frames != 0)
		return opt->frames;
	uint64_t f = (uint64_t)threads * TIO_DEFAULT_FRAMES_PER_THREAD;
	return f < TIO_MIN_DEFAULT_FRAMES ? TIO_MIN_DEFAULT_FRAMES : (uint32_t)f;
}

uint64_t tio_pages_per_thread_for(const struct tio_options *opt)
{
	double pages = opt->mb_per_thread * 1024.0 * 1024.0 / (double)opt->page_size;
	return pages < 1.0 ? 1 : (uint64_t)(pages + 0.5);
}

uint64_t tio_random_ops_for(const struct tio_options *opt)
{
	if (opt->random_ops != 0)
		return opt->random_ops;
	uint64_t n = tio_pages_per_thread_for(opt) / 4;
	return n == 0 ? 1 : n;
}

static void usage(FILE *o)
{
	char policies[TOOL_POLICY_NAMES_MAX]; /* fwait's policy table's names */

	fprintf(o,
		"usage: bpbench tiotest [options]\n"
		"  T threads write, random-write, read and random-read their own regions of one\n"
		"  file through the buffer pool, once per fwait policy, and print tiotest tables,\n"
		"  MB per CPU-second, spurious wakeups and context switches per MB, and ratios.\n"
		"  -t, --threads N       worker threads (default %u)\n"
		"      --mb X            MB (2^20 bytes) per thread for the sequential phases\n"
		"                        (default %.2g; decimals allowed)\n"
		"      --random-ops N    pages per thread in the random phases\n"
		"                        (default: a quarter of the pages per thread)\n"
		"      --page-size N     page size in bytes, power of two in [%u, %u] (default %u)\n"
		"      --frames N        pool frames (default %u x threads, at least %u)\n"
		"      --buckets N       fwait table buckets (default %u)\n"
		"      --latency-us N    simulated device latency per I/O (default %u; 0 = none)\n"
		"      --io-threads N    pool I/O threads (default: the pool's, %u)\n"
		"      --readahead N     read-ahead pages (default: the pool's, %u; 0 = off)\n"
		"      --io-engine E     the pool's I/O engine: auto, threads or uring (default auto)\n"
		"      --read-path P     who reads a miss: auto (the thread that missed), engine\n"
		"                        or cached (bufpool.h, bp_read_path; default auto; a\n"
		"                        simulated latency sends every read to the engine)\n"
		"      --direct          open the data file with O_DIRECT (BP_OPEN_DIRECT)\n"
		"      --policies LIST   comma-separated: %s (default all)\n"
		"      --seed N          seed of the random phases (default %u)\n"
		"      --fault-read-ppm N\n"
		"                        make N in a million page reads fail with EIO (shows\n"
		"                        that errors are caught: the run then exits 1)\n"
		"      --file PATH       data file (default: a temporary file in $TMPDIR or /tmp)\n"
		"      --keep-file       do not delete the data file at the end\n"
		"      --json            print JSON lines (one object per policy and item)\n"
		"      --plot OUT.png    run at several thread counts and draw CPU and spurious\n"
		"                        wakeups per MB against threads (data in OUT.png.dat)\n"
		"      --plot-threads L  comma-separated thread counts (default 32,64,128,256,512)\n"
		"      --plot-script P   gnuplot script (default: tools/bpbench/plot.gp)\n"
		"  -h, --help            this text\n"
		"Exit status: 0 ok, 1 a data check or pool call failed, 2 bad arguments, 130\n"
		"interrupted by Ctrl-C (no report; the temporary file is removed).\n",
		TIO_DEFAULT_THREADS, TIO_DEFAULT_MB, BP_PAGE_SIZE_MIN, BP_PAGE_SIZE_MAX,
		BP_PAGE_SIZE_DEFAULT, TIO_DEFAULT_FRAMES_PER_THREAD, TIO_MIN_DEFAULT_FRAMES,
		TIO_DEFAULT_BUCKETS, TIO_DEFAULT_LATENCY_US, BP_IO_THREADS_DEFAULT,
		BP_READAHEAD_DEFAULT, tool_policy_names(policies, sizeof(policies), ",", ","),
		TIO_DEFAULT_SEED);
}

static int policy_item(const char *tok, void *arg)
{
	struct tio_options *o = arg;
	enum fwait_policy p;
	if (tool_policy_parse(TIO_PROG, "--policies", tok, &p) != 0)
		return -EINVAL;
	for (unsigned i = 0; i < o->npolicies; i++) {
		if (o->policies[i] == p) {
			fprintf(stderr, TIO_PROG ": policy '%s' given twice\n", tok);
			return -EINVAL;
		}
	}
	o->policies[o->npolicies++] = p;
	return 0;
}

static int thread_count_item(const char *tok, void *arg)
{
	struct tio_options *o = arg;
	if (o->nplot_threads == TIO_MAX_PLOT_POINTS) {
		fprintf(stderr, TIO_PROG ": at most %u thread counts\n", TIO_MAX_PLOT_POINTS);
		return -EINVAL;
	}
	if (util_opt_unsigned(TIO_PROG, "--plot-threads", tok, 1, TIO_MAX_THREADS,
			      &o->plot_threads[o->nplot_threads]) != 0)
		return -EINVAL;
	o->nplot_threads++;
	return 0;
}

enum {
	OPT_MB = 256, OPT_RANDOM_OPS, OPT_PAGE_SIZE, OPT_FRAMES, OPT_BUCKETS, OPT_LATENCY,
	OPT_IO_THREADS, OPT_READAHEAD, OPT_POLICIES, OPT_SEED, OPT_FILE, OPT_KEEP, OPT_JSON,
	OPT_PLOT, OPT_PLOT_THREADS, OPT_PLOT_SCRIPT, OPT_FAULT_READ, OPT_IO_ENGINE, OPT_DIRECT,
	OPT_READ_PATH,
};

/* The options that take a number: 0 or -EINVAL (message printed). */
static int parse_number(int c, const char *arg, struct tio_options *o)
{
	unsigned u = 0;
	int rc;

	switch (c) {
	case 't':
		return util_opt_unsigned(TIO_PROG, "--threads", arg, 1, TIO_MAX_THREADS, &o->threads);
	case OPT_MB:
		return bench_opt_double_above(TIO_PROG, "--mb", arg, 0, 1e6, true,
					      &o->mb_per_thread);
	case OPT_RANDOM_OPS:
		return util_opt_u64(TIO_PROG, "--random-ops", arg, 1, UINT64_C(1) << 40,
				    &o->random_ops);
	case OPT_PAGE_SIZE:
		return bench_opt_page_size(TIO_PROG, arg, &o->page_size);
	case OPT_FRAMES:
		return bench_opt_u32(TIO_PROG, "--frames", arg, 2, UINT32_MAX, &o->frames);
	case OPT_BUCKETS:
		return util_opt_unsigned(TIO_PROG, "--buckets", arg, 1, 1u << 24, &o->buckets);
	case OPT_LATENCY:
		return bench_opt_u32(TIO_PROG, "--latency-us", arg, 0, 10 * 1000 * 1000,
				     &o->latency_us);
	case OPT_IO_THREADS:
		return util_opt_unsigned(TIO_PROG, "--io-threads", arg, 1, 64, &o->io_threads);
	case OPT_READAHEAD:
		rc = util_opt_unsigned(TIO_PROG, "--readahead", arg, 0, 1u << 16, &u);
		if (rc == 0)
			o->readahead = (int)u;
		return rc;
	case OPT_SEED:
		return util_opt_u64(TIO_PROG, "--seed", arg, 0, UINT64_MAX, &o->seed);
	case OPT_FAULT_READ:
	default:
		return bench_opt_u32(TIO_PROG, "--fault-read-ppm", arg, 0, 1000000,
				     &o->fault_read_ppm);
	}
}

/* The data file must hold threads x pages per thread pages (the most
 * threads, with --plot). */
static int check_size(const struct tio_options *o)
{
	double per = (double)tio_pages_per_thread_for(o), pages = (double)o->threads * per;
	if (o->plot_out != NULL)
		for (unsigned i = 0; i < o->nplot_threads; i++)
			if ((double)o->plot_threads[i] * per > pages)
				pages = (double)o->plot_threads[i] * per;
	if (pages * (double)o->page_size > 1e15) {
		fprintf(stderr, TIO_PROG ": threads x --mb is too large\n");
		return -EINVAL;
	}
	return 0;
}

int tio_parse_options(int argc, char **argv, struct tio_options *o)
{
	static const struct option longopts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "mb", required_argument, NULL, OPT_MB },
		{ "random-ops", required_argument, NULL, OPT_RANDOM_OPS },
		{ "page-size", required_argument, NULL, OPT_PAGE_SIZE },
		{ "frames", required_argument, NULL, OPT_FRAMES },
		{ "buckets", required_argument, NULL, OPT_BUCKETS },
		{ "latency-us", required_argument, NULL, OPT_LATENCY },
		{ "io-threads", required_argument, NULL, OPT_IO_THREADS },
		{ "readahead", required_argument, NULL, OPT_READAHEAD },
		{ "io-engine", required_argument, NULL, OPT_IO_ENGINE },
		{ "direct", no_argument, NULL, OPT_DIRECT },
		{ "read-path", required_argument, NULL, OPT_READ_PATH },
		{ "policies", required_argument, NULL, OPT_POLICIES },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "fault-read-ppm", required_argument, NULL, OPT_FAULT_READ },
		{ "file", required_argument, NULL, OPT_FILE },
		{ "keep-file", no_argument, NULL, OPT_KEEP },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "plot", required_argument, NULL, OPT_PLOT },
		{ "plot-threads", required_argument, NULL, OPT_PLOT_THREADS },
		{ "plot-script", required_argument, NULL, OPT_PLOT_SCRIPT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	*o = (struct tio_options){
		.threads = TIO_DEFAULT_THREADS,
		.mb_per_thread = TIO_DEFAULT_MB,
		.page_size = BP_PAGE_SIZE_DEFAULT,
		.buckets = TIO_DEFAULT_BUCKETS,
		.latency_us = TIO_DEFAULT_LATENCY_US,
		.readahead = -1,
		.seed = TIO_DEFAULT_SEED,
		.plot_threads = { 32, 64, 128, 256, 512 },
		.nplot_threads = 5,
	};
	/* Default: every policy, in fwait's policy table's order. */
	while (o->npolicies < FWAIT_POLICY_COUNT) {
		o->policies[o->npolicies] = (enum fwait_policy)o->npolicies;
		o->npolicies++;
	}
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":t:h", longopts, NULL)) != -1) {
		int rc = 0;
		switch (c) {
		case 't': case OPT_MB: case OPT_RANDOM_OPS: case OPT_PAGE_SIZE: case OPT_FRAMES:
		case OPT_BUCKETS: case OPT_LATENCY: case OPT_IO_THREADS: case OPT_READAHEAD:
		case OPT_SEED: case OPT_FAULT_READ:
			rc = parse_number(c, optarg, o);
			break;
		case OPT_POLICIES:
			o->npolicies = 0;
			rc = util_opt_list(TIO_PROG, "--policies", optarg, policy_item, o);
			break;
		case OPT_FILE:
			o->file = optarg;
			break;
		case OPT_KEEP:
			o->keep_file = true;
			break;
		case OPT_DIRECT:
			o->direct = true;
			break;
		case OPT_IO_ENGINE:
			if (bench_opt_io_engine(TIO_PROG, optarg, &o->io_engine) != 0)
				return -EINVAL;
			break;
		case OPT_READ_PATH:
			if (bench_opt_read_path(TIO_PROG, optarg, &o->read_path) != 0)
				return -EINVAL;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_PLOT:
			o->plot_out = optarg;
			break;
		case OPT_PLOT_THREADS:
			o->nplot_threads = 0;
			rc = util_opt_list(TIO_PROG, "--plot-threads", optarg, thread_count_item, o);
			break;
		case OPT_PLOT_SCRIPT:
			o->plot_script = optarg;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case ':':
			fprintf(stderr, TIO_PROG ": %s needs an argument\n", argv[optind - 1]);
			rc = -EINVAL;
			break;
		default:
			fprintf(stderr, TIO_PROG ": unknown option '%s' (try --help)\n",
				argv[optind - 1]);
			rc = -EINVAL;
			break;
		}
		if (rc != 0)
			return rc;
	}
	if (optind < argc) {
		fprintf(stderr, TIO_PROG ": unexpected argument '%s' (try --help)\n", argv[optind]);
		return -EINVAL;
	}
	return check_size(o);
}
