/* SPDX-License-Identifier: MIT */
/*
 * ycsb_opts.c - bpbench ycsb's workloads A-F, options and usage text.
 *
 * Design note
 * -----------
 * Layer: bpbench (see ycsb_int.h).  Numbers are parsed by util/opt.h, the
 * one strict parser of the tools (through bench_opt.h for a page size, a
 * 32-bit count or an open interval), which prints its own message on a
 * refusal; a bad name prints "bpbench ycsb: <why> (got '<value>')".
 * Either way the result is -EINVAL and bpbench ycsb exits 2.
 *
 * --durable asks the store for its redo log with sync_commit (see ycsb.c);
 * --checkpoint-bytes is refused without it rather than silently ignored,
 * for the same reason a bad number is: the run would not be the one asked
 * for.  --no-pool is refused for every workload but C: the others write
 * (E inserts as well as scans), and the floor's copy of the tree is taken
 * once, after the run.
 */
#include "ycsb_int.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>

#include "bench_opt.h"
#include "policy_opt.h"
#include "util/opt.h"

static void ycsb_usage(FILE *f)
{
	fputs("usage: bpbench ycsb [options]\n"
	      "  -w, --workload A-F     YCSB core workload (default A)\n"
	      "                           A 50/50 read/update   B 95/5 read/update   C read only\n"
	      "                           D read latest + 5% insert   E short scans + 5% insert\n"
	      "                           F 50/50 read/read-modify-write\n"
	      "  -t, --threads N        worker threads (default 16)\n"
	      "  -r, --records N        records loaded before the run (default 200000)\n"
	      "  -o, --ops N            operations to run (default: run for --duration)\n"
	      "  -d, --duration S       seconds to run (default 30)\n"
	      "      --dist NAME        zipfian, uniform or latest (default: the workload's)\n"
	      "      --theta X          zipfian constant (default 0.99)\n"
	      "      --scan-max N       longest scan of workload E (default 100)\n"
	      "      --frames N         pool frames (default 1024)\n"
	      "      --page-size B      page size (default 4096)\n"
	      "      --value-size B     value size, 16..1024 (default 100)\n", f);
	/* The policies' lines come from fwait's policy table. */
	fprintf(f, "      --policy NAME      the wait table's policy (default %s):\n",
		fwait_policy_name(FWAIT_WAKE_ONE));
	tool_policy_usage(f, "                           ");
	fputs("      --latency-us N     simulated device latency per I/O (default 0)\n"
	      "      --io-engine E      the pool's I/O engine: auto, threads or uring (default auto)\n"
	      "      --read-path P      who reads a miss: auto (the thread that missed, pread),\n"
	      "                         engine (the I/O engine) or cached (the thread that\n"
	      "                         missed if the kernel has the page cached, else the\n"
	      "                         engine); default auto\n"
	      "      --direct           O_DIRECT: every miss reads the device\n"
	      "      --file PATH        the store (default /tmp/bpbench.<pid>.db, removed after)\n"
	      "      --keep             keep the default file\n"
	      "      --stats-file PATH  publish pool stats there for bpstat (default\n"
	      "                         /dev/shm/bufpool.<pid>.ycsb-<workload>)\n"
	      "      --no-stats-file    do not publish\n"
	      "      --verify           check every record and the tree after the run\n"
	      "      --checksums        CRC-32C page checksums (BP_OPEN_CHECKSUMS)\n"
	      "      --durable          a redo log: every update, insert and read-modify-write\n"
	      "                         returns once durable (sync_commit, group commit); the\n"
	      "                         log (<file>.wal) is fsynced for real only on a disk\n"
	      "                         file system, not in /dev/shm\n"
	      "      --checkpoint-bytes N\n"
	      "                         with --durable: checkpoint every N bytes of log\n"
	      "                         (default 0: the store's, 64 MiB)\n"
	      "      --files N          N stores (files) in one pool, record k in store k % N\n"
	      "                         (1..16, default 1; a scan stays in one store)\n"
	      "      --no-pool          workload C only: after the run, copy the tree to plain\n"
	      "                         memory and run again on the copy (no pool, no pin, no\n"
	      "                         latch), same threads, keys and length; print both and\n"
	      "                         the ratio pool/floor\n"
	      "      --counters         the pool's raw statistics (bp_stats_print) too, before\n"
	      "                         the run's summary\n"
	      "      --json             JSON lines on stdout (the report goes to stderr)\n"
	      "  -q, --quiet            no progress lines\n"
	      "      --seed N           random seed (default 1)\n", f);
}

/* The long options without a short form. */
enum { O_DIST = 256, O_THETA, O_SCAN, O_FRAMES, O_PAGE, O_VALUE, O_LAT, O_SEED, O_POLICY,
       O_FILE, O_KEEP, O_STATS, O_NOSTATS, O_VERIFY, O_JSON, O_CHECKSUMS, O_DURABLE, O_FILES,
       O_CKPT, O_NOPOOL, O_ENGINE, O_READPATH, O_DIRECT, O_COUNTERS };

/* The options that take a number; 0 or -EINVAL (message printed). */
static int parse_number(int c, const char *arg, struct ycsb_opts *o)
{
	switch (c) {
	case 't':
		return util_opt_unsigned(YCSB_PROG, "--threads", arg, 1, 4096, &o->threads);
	case 'r':
		return util_opt_u64(YCSB_PROG, "--records", arg, 1, UINT64_C(1) << 32, &o->records);
	case 'o':
		return util_opt_u64(YCSB_PROG, "--ops", arg, 1, UINT64_C(1) << 40, &o->ops);
	case 'd':
		return bench_opt_double_above(YCSB_PROG, "--duration", arg, 0, 1e6, false,
					      &o->duration_s);
	case O_THETA:
		return bench_opt_double_above(YCSB_PROG, "--theta", arg, 0, 1, false, &o->theta);
	case O_SCAN:
		return util_opt_unsigned(YCSB_PROG, "--scan-max", arg, 1, 100000, &o->scan_max);
	case O_FRAMES:
		return bench_opt_u32(YCSB_PROG, "--frames", arg, 2, UINT32_MAX, &o->frames);
	case O_PAGE:
		return bench_opt_page_size(YCSB_PROG, arg, &o->page_size);
	case O_VALUE:
		return bench_opt_u32(YCSB_PROG, "--value-size", arg, 16, KV_VALUE_SIZE_MAX,
				     &o->value_size);
	case O_LAT:
		return bench_opt_u32(YCSB_PROG, "--latency-us", arg, 0, 10000000, &o->latency_us);
	case O_CKPT:
		return util_opt_u64(YCSB_PROG, "--checkpoint-bytes", arg, 0, UINT64_C(1) << 48,
				    &o->checkpoint_bytes);
	case O_FILES:
		return util_opt_unsigned(YCSB_PROG, "--files", arg, 1, YCSB_MAX_FILES, &o->files);
	case O_SEED:
	default:
		return util_opt_u64(YCSB_PROG, "--seed", arg, 0, UINT64_MAX, &o->seed);
	}
}

int ycsb_parse_opts(int argc, char **argv, struct ycsb_opts *o)
{
	static const struct option lo[] = {
		{"workload", 1, 0, 'w'}, {"threads", 1, 0, 't'}, {"records", 1, 0, 'r'},
		{"ops", 1, 0, 'o'}, {"duration", 1, 0, 'd'}, {"dist", 1, 0, O_DIST},
		{"theta", 1, 0, O_THETA}, {"scan-max", 1, 0, O_SCAN}, {"frames", 1, 0, O_FRAMES},
		{"page-size", 1, 0, O_PAGE}, {"value-size", 1, 0, O_VALUE},
		{"policy", 1, 0, O_POLICY}, {"latency-us", 1, 0, O_LAT}, {"file", 1, 0, O_FILE},
		{"keep", 0, 0, O_KEEP}, {"stats-file", 1, 0, O_STATS},
		{"no-stats-file", 0, 0, O_NOSTATS}, {"verify", 0, 0, O_VERIFY},
		{"json", 0, 0, O_JSON}, {"quiet", 0, 0, 'q'}, {"seed", 1, 0, O_SEED},
		{"checksums", 0, 0, O_CHECKSUMS}, {"durable", 0, 0, O_DURABLE},
		{"checkpoint-bytes", 1, 0, O_CKPT}, {"files", 1, 0, O_FILES},
		{"no-pool", 0, 0, O_NOPOOL}, {"io-engine", 1, 0, O_ENGINE},
		{"read-path", 1, 0, O_READPATH}, {"direct", 0, 0, O_DIRECT},
		{"counters", 0, 0, O_COUNTERS},
		{"help", 0, 0, 'h'}, {0, 0, 0, 0}};
	*o = (struct ycsb_opts){.mix = ycsb_mix_default(), .dist = DIST_ZIPFIAN, .threads = 16,
				.records = 200000, .duration_s = 30, .theta = ZIPF_THETA_DEFAULT,
				.scan_max = 100, .frames = 1024, .page_size = 4096,
				.value_size = KV_VALUE_SIZE_DEFAULT, .seed = 1, .files = 1};
	bool dist_set = false, ckpt_set = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "w:t:r:o:d:qh", lo, NULL)) != -1) {
		const char *bad = NULL;
		switch (c) {
		case 'w':
			if (!(o->mix = ycsb_mix_named(optarg)))
				bad = "--workload must be one of A-F";
			break;
		case 't': case 'r': case 'o': case 'd': case O_THETA: case O_SCAN:
		case O_FRAMES: case O_PAGE: case O_VALUE: case O_LAT: case O_SEED: case O_CKPT:
		case O_FILES:
			if (parse_number(c, optarg, o) != 0)
				return -EINVAL;
			ckpt_set |= c == O_CKPT;
			break;
		case O_DIST:
			if (ycsb_dist_named(optarg, 3, &o->dist) != 0)
				bad = "--dist must be zipfian, uniform or latest";
			dist_set |= !bad;
			break;
		case O_POLICY:
			if (tool_policy_parse(YCSB_PROG, "--policy", optarg, &o->policy) != 0)
				return -EINVAL;
			break;
		case O_FILE: o->file = optarg; break;
		case O_KEEP: o->keep = true; break;
		case O_STATS: o->stats_file = optarg; break;
		case O_NOSTATS: o->no_stats = true; break;
		case O_VERIFY: o->verify = true; break;
		case O_JSON: o->json = true; break;
		case O_CHECKSUMS: o->checksums = true; break;
		case O_DURABLE: o->durable = true; break;
		case O_NOPOOL: o->no_pool = true; break;
		case O_DIRECT: o->direct = true; break;
		case O_COUNTERS: o->counters = true; break;
		case O_ENGINE:
			if (bench_opt_io_engine(YCSB_PROG, optarg, &o->io_engine) != 0)
				return -EINVAL;
			break;
		case O_READPATH:
			if (bench_opt_read_path(YCSB_PROG, optarg, &o->read_path) != 0)
				return -EINVAL;
			break;
		case 'q': o->quiet = true; break;
		case 'h':
			ycsb_usage(stdout);
			exit(0);
		default:
			ycsb_usage(stderr);
			return -EINVAL;
		}
		if (bad) {
			fprintf(stderr, YCSB_PROG ": %s (got '%s')\n", bad, optarg);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, YCSB_PROG ": unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (!dist_set)
		o->dist = o->mix->dist;
	if (ckpt_set && !o->durable) {
		fprintf(stderr, YCSB_PROG ": --checkpoint-bytes needs --durable\n");
		return -EINVAL;
	}
	/* the copy is taken once: a write after it would not be in it; and
	 * the floor does point lookups only */
	struct ycsb_op_info does = ycsb_mix_does(o->mix);
	if (o->no_pool && (does.writes || does.scans)) {
		fprintf(stderr, YCSB_PROG ": --no-pool needs a read-only workload (C), "
			"and workload %c writes\n", o->mix->name);
		return -EINVAL;
	}
	if (o->files > 1 && o->durable) { /* a shared pool's hook is its owner's */
		fprintf(stderr, YCSB_PROG ": --files and --durable do not go together\n");
		return -EINVAL;
	}
	return bench_opt_frames_fit(YCSB_PROG, o->frames, o->threads);
}
