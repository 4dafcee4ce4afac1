/* SPDX-License-Identifier: MIT */
/*
 * ref_opts.c - ycsb-ref's workloads, engines, options and usage text.
 *
 * Design note
 * -----------
 * Layer: ycsb-ref (see ref.h), on util/opt.h, the tools' one strict
 * number parser, which prints its own message on a refusal; a bad name
 * prints "ycsb-ref: <why> (got '<value>')".  Either way the result is
 * -EINVAL and ycsb-ref exits 2.  The options are bpbench ycsb's spelling
 * and defaults (tools/bpbench/ycsb_opts.c) where they mean the same;
 * --cache-bytes stands for --frames x --page-size (default 1024 x 4096),
 * --dir for --file.  The mix table is bpbench ycsb's own, from
 * ycsb_common (ycsb_stream.c).
 */
#include "ref.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "util/opt.h"

/* The engines this build has (tools/compare/meson.build defines
 * REF_HAVE_<ENGINE> for each library it found, and builds ycsb-ref only
 * when it found one). */
#if !defined(REF_HAVE_WIREDTIGER) && !defined(REF_HAVE_ROCKSDB) && \
	!defined(REF_HAVE_LEVELDB) && !defined(REF_HAVE_LMDB)
#error "ycsb-ref needs at least one engine (REF_HAVE_WIREDTIGER, ...)"
#endif
static const struct ref_engine *const engines[] = {
#ifdef REF_HAVE_WIREDTIGER
	&ref_wiredtiger,
#endif
#ifdef REF_HAVE_ROCKSDB
	&ref_rocksdb,
#endif
#ifdef REF_HAVE_LEVELDB
	&ref_leveldb,
#endif
#ifdef REF_HAVE_LMDB
	&ref_lmdb,
#endif
};
#define N_ENGINES (sizeof(engines) / sizeof(engines[0]))

static void ref_usage(FILE *f)
{
	fputs("usage: ycsb-ref --engine NAME [options]\n"
	      "  bpbench ycsb's workloads, keys, values and threads on another engine\n"
	      "      --engine NAME      one of:", f);
	for (size_t i = 0; i < N_ENGINES; i++)
		fprintf(f, " %s", engines[i]->name);
	fputs(" (default: the first)\n"
	      "  -w, --workload A|B|C|F YCSB core workload (default A)\n"
	      "                           A 50/50 read/update   B 95/5 read/update   C read only\n"
	      "                           F 50/50 read/read-modify-write (D, E: not here)\n"
	      "  -t, --threads N        worker threads (default 16)\n"
	      "  -r, --records N        records loaded before the run (default 200000)\n"
	      "  -o, --ops N            operations to run (default: run for --duration)\n"
	      "  -d, --duration S       seconds to run (default 30)\n"
	      "      --dist NAME        zipfian or uniform (default: the workload's)\n"
	      "      --theta X          zipfian constant (default 0.99)\n"
	      "      --value-size B     value size, 16..1024 (default 100)\n"
	      "      --cache-bytes B    the engine's cache (default 4194304: bpbench's\n"
	      "                         default pool, 1024 frames x 4096 B)\n"
	      "      --page-size B      the engine's page or block size, a power of two\n"
	      "                         (default 4096, bpbench's; not LMDB's: the OS's)\n"
	      "      --engine-config S  appended to the engine's configuration string\n"
	      "                         (wiredtiger: its wiredtiger_open config)\n"
	      "      --dir PATH         the engine's directory (default a new\n"
	      "                         /tmp/ycsb-ref.XXXXXX, removed after)\n"
	      "      --json             JSON lines on stdout (the report goes to stderr)\n"
	      "  -q, --quiet            no progress lines\n"
	      "      --seed N           random seed (default 1)\n", f);
}

enum { O_ENGINE = 256, O_DIST, O_THETA, O_VALUE, O_PAGE, O_CACHE, O_ECONF, O_DIR, O_JSON, O_SEED };

/* The options that take a number; 0 or -EINVAL (message printed). */
static int parse_number(int c, const char *arg, struct ref_opts *o)
{
	unsigned u;
	switch (c) {
	case 't':
		return util_opt_unsigned(REF_PROG, "--threads", arg, 1, 4096, &o->threads);
	case 'r':
		return util_opt_u64(REF_PROG, "--records", arg, 1, UINT64_C(1) << 32, &o->records);
	case 'o':
		return util_opt_u64(REF_PROG, "--ops", arg, 1, UINT64_C(1) << 40, &o->ops);
	case 'd': /* bpbench's (0, 1e6]; util_opt_double's range is closed */
		return util_opt_double(REF_PROG, "--duration", arg, 1e-3, 1e6, &o->duration_s);
	case O_THETA:
		return util_opt_double(REF_PROG, "--theta", arg, 1e-6, 1 - 1e-6, &o->theta);
	case O_VALUE:
		if (util_opt_unsigned(REF_PROG, "--value-size", arg, REF_VALUE_SIZE_MIN,
				      REF_VALUE_SIZE_MAX, &u) != 0)
			return -EINVAL;
		o->value_size = u;
		return 0;
	case O_PAGE: /* bpbench's range (BP_PAGE_SIZE_MIN..MAX: 512 B..1 MiB) */
		if (util_opt_unsigned(REF_PROG, "--page-size", arg, 512, 1u << 20, &u) != 0)
			return -EINVAL;
		if (u & (u - 1)) {
			fprintf(stderr, REF_PROG ": --page-size wants a power of two, not '%s'\n", arg);
			return -EINVAL;
		}
		o->page_size = u;
		return 0;
	case O_CACHE: /* WiredTiger's floor is 1 MB */
		return util_opt_u64(REF_PROG, "--cache-bytes", arg, UINT64_C(1) << 20,
				    UINT64_C(1) << 48, &o->cache_bytes);
	case O_SEED:
	default:
		return util_opt_u64(REF_PROG, "--seed", arg, 0, UINT64_MAX, &o->seed);
	}
}

/* A name's option (--engine, -w, --dist); NULL, or why it is refused. */
static const char *parse_name(int c, const char *arg, struct ref_opts *o, bool *dist_set)
{
	switch (c) {
	case O_ENGINE:
		for (size_t i = 0; i < N_ENGINES; i++)
			if (strcmp(arg, engines[i]->name) == 0) {
				o->engine = engines[i];
				return NULL;
			}
		return "--engine: not one this build has (see --help)";
	case 'w': {
		if (!(o->mix = ycsb_mix_named(arg)))
			return "--workload must be one of A-F";
		/* the engines get and put records the load made (ref_run.c) */
		struct ycsb_op_info does = ycsb_mix_does(o->mix);
		if (does.adds || does.scans)
			return "workloads D and E (inserts, scans) are not in ycsb-ref";
		return NULL;
	}
	case O_DIST:
	default:
		/* latest: only with inserts (D) */
		if (ycsb_dist_named(arg, 2, &o->dist) != 0)
			return "--dist must be zipfian or uniform";
		*dist_set = true;
		return NULL;
	}
}

int ref_parse_opts(int argc, char **argv, struct ref_opts *o)
{
	static const struct option lo[] = {
		{"engine", 1, 0, O_ENGINE}, {"workload", 1, 0, 'w'}, {"threads", 1, 0, 't'},
		{"records", 1, 0, 'r'}, {"ops", 1, 0, 'o'}, {"duration", 1, 0, 'd'},
		{"dist", 1, 0, O_DIST}, {"theta", 1, 0, O_THETA}, {"value-size", 1, 0, O_VALUE},
		{"page-size", 1, 0, O_PAGE},		{"cache-bytes", 1, 0, O_CACHE}, {"engine-config", 1, 0, O_ECONF},
		{"dir", 1, 0, O_DIR}, {"json", 0, 0, O_JSON}, {"quiet", 0, 0, 'q'},
		{"seed", 1, 0, O_SEED}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
	*o = (struct ref_opts){.mix = ycsb_mix_default(), .dist = DIST_ZIPFIAN,
			       .engine = engines[0], .threads = 16,
			       .records = 200000, .duration_s = 30, .theta = ZIPF_THETA_DEFAULT,
			       .value_size = 100, .page_size = 4096,
			       .cache_bytes = 1024 * 4096, .seed = 1};
	bool dist_set = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "w:t:r:o:d:qh", lo, NULL)) != -1) {
		const char *bad = NULL;
		switch (c) {
		case O_ENGINE: case 'w': case O_DIST:
			bad = parse_name(c, optarg, o, &dist_set);
			break;
		case 't': case 'r': case 'o': case 'd': case O_THETA: case O_VALUE: case O_PAGE: case O_CACHE:
		case O_SEED:
			if (parse_number(c, optarg, o) != 0)
				return -EINVAL;
			break;
		case O_ECONF: o->engine_config = optarg; break;
		case O_DIR: o->dir = optarg; break;
		case O_JSON: o->json = true; break;
		case 'q': o->quiet = true; break;
		case 'h':
			ref_usage(stdout);
			exit(0);
		default:
			ref_usage(stderr);
			return -EINVAL;
		}
		if (bad) {
			fprintf(stderr, REF_PROG ": %s (got '%s')\n", bad, optarg);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, REF_PROG ": unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (!dist_set)
		o->dist = o->mix->dist;
	return 0;
}
