/* SPDX-License-Identifier: MIT */
/*
 * crashtest_opts.c - bpbench crashtest's options and usage text.
 *
 * Design note
 * -----------
 * Layer: bpbench (see crashtest_int.h).  Numbers are parsed by util/opt.h,
 * the one strict parser of the tools (through bench_opt.h for a 32-bit
 * count), which prints its own message on a refusal; a combination that
 * cannot run prints "bpbench crashtest: <why>".  Either way the result is
 * -EINVAL and bpbench crashtest exits 2.
 *
 * The defaults make a short run exercise everything recovery has to get
 * right: 20000 keys on a pool of 128 frames (the tree splits often and is
 * several times the pool, so eviction writes pages mid-run), a checkpoint
 * every 256 KiB of log (several per round), and a kill after up to 3000
 * acks (so some rounds die early, some after a checkpoint).  --power-loss
 * (powerloss_int.h) has defaults of its own for the options not given
 * (a small store: thousands of states, each cheap, that still evict and
 * checkpoint), kept apart by `given`.
 */
#include "crashtest_int.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_opt.h"
#include "util/opt.h"

static void usage(FILE *f)
{
	fputs("usage: bpbench crashtest [options]\n"
	      "  Rounds of: a child process writes to a durable store with T threads and\n"
	      "  reports every acknowledged commit; it is killed (SIGKILL) after a seeded\n"
	      "  random number of acks; the store is reopened (recovered) and checked:\n"
	      "  the tree, and every acknowledged key at its acknowledged version or later.\n"
	      "  Exit 0 if every round passes, 1 at the first failure, 2 for bad usage.\n"
	      "  -k, --kills N              rounds, each ending in a kill (default 20)\n"
	      "      --seed S               random seed: the keys and the kill points (default 1)\n"
	      "  -t, --threads T            writer threads of the child (default 4)\n"
	      "      --keys K               key space 0..K-1 (default 20000)\n"
	      "      --batch B              1: sync_commit, each put acked when it returns;\n"
	      "                             B > 1: B puts, kv_commit, then B acks (default 1)\n"
	      "      --frames N             pool frames (default 128)\n"
	      "      --checkpoint-bytes N   checkpoint after this much log (default 262144)\n"
	      "      --max-acks M           kill after 1..M acks, seeded (default 3000)\n"
	      "      --recovery-kill-us U   then kill a recovery (kv_open in a child) after\n"
	      "                             0..U us, seeded, before the check (default 20000;\n"
	      "                             0: no such kill)\n"
	      "      --file PATH            the store (default bpbench-crash.<pid>.db in\n"
	      "                             $TMPDIR or /tmp);\n"
	      "                             PATH, PATH.wal and PATH.ctl are removed after\n"
	      "      --keep                 keep them (to look at a failed run)\n"
	      "      --break-wal            break the pool on purpose (BP_FAULT_NO_WAL: pages\n"
	      "                             written without the write-ahead rule)\n"
	      "  -q, --quiet                no line per round, only the summary\n"
	      "      --power-loss           power failures instead (powerloss.c): rounds of\n"
	      "                             traced children (killed, closed, or failed by an\n"
	      "                             injected fsync EIO), then --states cut points of\n"
	      "                             the trace, each rebuilt as a power failure leaves\n"
	      "                             the files, recovered and checked.  Its defaults:\n"
	      "                             -k 8 -t 2 --keys 500 --frames 24 --max-acks 300\n"
	      "                             --checkpoint-bytes 32768; --file names a directory\n"
	      "                             (default: a new one in $TMPDIR or /tmp); the engine\n"
	      "                             is BP_IO_ENGINE's (threads, uring; default auto)\n"
	      "      --states N             cut states to check (default 2000)\n"
	      "      --truncate-every N     one in N rounds after the first opens the store\n"
	      "                             truncating (default 8; 0: only the first round)\n"
	      "      --eio-every N          one in N rounds injects an fsync EIO (of the log,\n"
	      "                             three times in four; default 2; 0: none)\n"
	      "      --break-recovery       the store's old recovery on purpose\n"
	      "                             (kv_config.break_recovery: replay trusts the log\n"
	      "                             bytes it reads)\n"
	      "Exit status: 0 ok, 1 a round or a state failed, 2 bad arguments, 130 after\n"
	      "Ctrl-C (the running round is killed and checked, then the summary).\n", f);
}

/* The long options without a short form. */
enum { O_SEED = 256, O_KEYS, O_BATCH, O_FRAMES, O_CKPT, O_MAXACKS, O_FILE, O_KEEP, O_BREAK,
       O_RKILL, O_POWER, O_STATES, O_TRUNC_EVERY, O_EIO_EVERY, O_BREAK_RECOVERY };

/* The options that take a number; 0 or -EINVAL (message printed). */
static int parse_number(int c, const char *arg, struct crash_opts *o)
{
	switch (c) {
	case 'k':
		return util_opt_unsigned(CRASH_PROG, "--kills", arg, 1, 1u << 20, &o->kills);
	case 't': /* below 2^16: CRASH_STREAM's field */
		return util_opt_unsigned(CRASH_PROG, "--threads", arg, 1, 1024, &o->threads);
	case O_KEYS: /* the parent keeps 8 bytes per key */
		return util_opt_u64(CRASH_PROG, "--keys", arg, 1, UINT64_C(1) << 26, &o->keys);
	case O_BATCH:
		return util_opt_unsigned(CRASH_PROG, "--batch", arg, 1, 1u << 16, &o->batch);
	case O_FRAMES:
		return bench_opt_u32(CRASH_PROG, "--frames", arg, 2, UINT32_MAX, &o->frames);
	case O_CKPT:
		return util_opt_u64(CRASH_PROG, "--checkpoint-bytes", arg, 1, UINT64_C(1) << 40,
				    &o->checkpoint_bytes);
	case O_RKILL:
		return util_opt_u64(CRASH_PROG, "--recovery-kill-us", arg, 0, 10000000,
				    &o->recovery_kill_us);
	case O_MAXACKS:
		return util_opt_u64(CRASH_PROG, "--max-acks", arg, 1, UINT64_C(1) << 32,
				    &o->max_acks);
	case O_STATES:
		return util_opt_u64(CRASH_PROG, "--states", arg, 1, UINT64_C(1) << 32, &o->states);
	case O_TRUNC_EVERY:
		return util_opt_unsigned(CRASH_PROG, "--truncate-every", arg, 0, 1u << 20,
					 &o->truncate_every);
	case O_EIO_EVERY:
		return util_opt_unsigned(CRASH_PROG, "--eio-every", arg, 0, 1u << 20,
					 &o->eio_every);
	case O_SEED:
	default:
		return util_opt_u64(CRASH_PROG, "--seed", arg, 0, UINT64_MAX, &o->seed);
	}
}

int crash_parse_opts(int argc, char **argv, struct crash_opts *o)
{
	static const struct option lo[] = {
		{"kills", 1, 0, 'k'}, {"seed", 1, 0, O_SEED}, {"threads", 1, 0, 't'},
		{"keys", 1, 0, O_KEYS}, {"batch", 1, 0, O_BATCH}, {"frames", 1, 0, O_FRAMES},
		{"checkpoint-bytes", 1, 0, O_CKPT}, {"max-acks", 1, 0, O_MAXACKS},
		{"recovery-kill-us", 1, 0, O_RKILL},
		{"file", 1, 0, O_FILE}, {"keep", 0, 0, O_KEEP}, {"break-wal", 0, 0, O_BREAK},
		{"quiet", 0, 0, 'q'}, {"help", 0, 0, 'h'}, {"power-loss", 0, 0, O_POWER},
		{"states", 1, 0, O_STATES}, {"break-recovery", 0, 0, O_BREAK_RECOVERY},
		{"truncate-every", 1, 0, O_TRUNC_EVERY}, {"eio-every", 1, 0, O_EIO_EVERY},
		{0, 0, 0, 0}};
	*o = (struct crash_opts){.kills = 20, .seed = 1, .threads = 4, .keys = 20000,
				 .batch = 1, .frames = 128, .checkpoint_bytes = 262144,
				 .max_acks = 3000, .recovery_kill_us = 20000, .states = 2000,
				 .truncate_every = 8, .eio_every = 2};
	bool given[O_BREAK_RECOVERY + 1] = {0}; /* by option: --power-loss's defaults */
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "k:t:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'k': case 't': case O_SEED: case O_KEYS: case O_BATCH: case O_FRAMES:
		case O_CKPT: case O_MAXACKS: case O_RKILL: case O_STATES: case O_TRUNC_EVERY:
		case O_EIO_EVERY:
			if (parse_number(c, optarg, o) != 0)
				return -EINVAL;
			given[c] = true;
			break;
		case O_POWER: o->power_loss = true; break;
		case O_BREAK_RECOVERY: o->break_recovery = true; break;
		case O_FILE: o->file = optarg; break;
		case O_KEEP: o->keep = true; break;
		case O_BREAK: o->break_wal = true; break;
		case 'q': o->quiet = true; break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, CRASH_PROG ": unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (o->power_loss) { /* a small store: cheap states that still evict and checkpoint */
		o->kills = given['k'] ? o->kills : 8;
		o->threads = given['t'] ? o->threads : 2;
		o->keys = given[O_KEYS] ? o->keys : 500;
		o->frames = given[O_FRAMES] ? o->frames : 24;
		o->max_acks = given[O_MAXACKS] ? o->max_acks : 300;
		o->checkpoint_bytes = given[O_CKPT] ? o->checkpoint_bytes : 32768;
		if (o->batch > 256) { /* a child's acks of one commit go in one pipe write */
			fprintf(stderr, CRASH_PROG ": --power-loss takes --batch up to 256\n");
			return -EINVAL;
		}
	}
	/* thread t writes the keys k % threads == t: each needs one */
	if (o->keys < o->threads) {
		fprintf(stderr, CRASH_PROG ": --keys %llu is fewer than the %u threads\n",
			(unsigned long long)o->keys, o->threads);
		return -EINVAL;
	}
	return bench_opt_frames_fit(CRASH_PROG, o->frames, o->threads);
}
