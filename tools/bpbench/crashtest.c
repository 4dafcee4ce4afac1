/* SPDX-License-Identifier: MIT */
/*
 * crashtest.c - bpbench crashtest: kill -9 a durable store's writer again
 * and again, and check after each kill that nothing acknowledged is lost.
 *
 * Design note
 * -----------
 * Layer: bpbench, on the store (tools/kv) and bufpool; util for the clock,
 * the PRNG and the option parser.  This file is the run's sequence; the
 * jobs are in crashtest_opts.c, crashtest_child.c, crashtest_round.c,
 * crashtest_check.c and crashtest_value.c (see crashtest_int.h).
 *
 * One run is `kills` rounds on one file: round 1's child creates the
 * store; each round forks a child that writes and acks until the parent
 * kills it (crashtest_round.c), then the parent reopens the store, which
 * recovers from its log, and checks it against every ack of every round so
 * far (crashtest_check.c); the next round's child reopens what the check
 * closed.  The first failed round ends the run.  One line per round unless
 * -q, then one summary line on stdout; failures on stderr.  Exit 0, 1 (a
 * failed round) or 2 (bad usage).  The file and its .wal and .ctl are
 * removed at the end unless --keep.
 *
 * SIGINT or SIGTERM (toolutil.h) makes the running round's kill come at
 * once: that round is checked as any other, the run stops there and the
 * summary counts the rounds done; the status is then 130 after SIGINT.
 * The children ignore both (crash_spawn), so a Ctrl-C sent to the whole
 * process group does not kill them: the parent still decides every kill,
 * which the checks rely on.
 */
#include "crashtest.h"
#include "crashtest_int.h"
#include "powerloss_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "toolutil.h"
#include "util/clock.h"

void crash_store_config(const struct crash_run *C, struct kv_config *kc, bool create)
{
	*kc = (struct kv_config){.path = C->file, .create = create, .truncate = create,
				 .durable = true, .checkpoint_bytes = C->o.checkpoint_bytes};
	kc->pool.nframes = C->o.frames;
	kc->pool.log = tool_bp_log;
}

static void remove_files(const char *file)
{
	static const char *const suffix[] = {"", ".wal", ".ctl"};
	char path[4096];

	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		int n = snprintf(path, sizeof(path), "%s%s", file, suffix[i]);
		if (n > 0 && (size_t)n < sizeof(path) && unlink(path) != 0 && errno != ENOENT)
			fprintf(stderr, CRASH_PROG ": removing %s: %s\n", path, strerror(errno));
	}
}

static void print_config(const struct crash_run *C)
{
	const struct crash_opts *o = &C->o;
	printf("crashtest: %s, %u kills, seed %" PRIu64 ", %u threads, %" PRIu64 " keys, %s, "
	       "%u frames, checkpoint every %" PRIu64 " bytes, kill after 1..%" PRIu64
	       " acks%s\n", C->file, o->kills, o->seed, o->threads, o->keys,
	       o->batch == 1 ? "sync_commit" : "batches", o->frames, o->checkpoint_bytes,
	       o->max_acks, o->break_wal ? ", BROKEN POOL (--break-wal)" : "");
	if (o->batch > 1)
		printf("crashtest: batches of %u puts, one kv_commit each\n", o->batch);
}

int bpbench_crashtest_main(int argc, char **argv)
{
	struct crash_run C = {0};
	char default_file[4096];

	if (crash_parse_opts(argc, argv, &C.o) != 0)
		return 2;
	tool_catch_stop();
	if (C.o.power_loss)
		return crash_power_loss_main(&C.o);
	C.file = C.o.file;
	if (!C.file) {
		const char *tmp = getenv("TMPDIR");
		snprintf(default_file, sizeof(default_file), "%s/bpbench-crash.%ld.db",
			 tmp && *tmp ? tmp : "/tmp", (long)getpid());
		C.file = default_file;
	}
	C.acked = calloc(C.o.keys, sizeof(*C.acked));
	if (!C.acked) {
		fprintf(stderr, CRASH_PROG ": out of memory for %" PRIu64 " keys\n", C.o.keys);
		return 1;
	}
	if (!C.o.quiet)
		print_config(&C);
	uint64_t t0 = util_now_ns();
	int rc = 0;
	for (C.round = 1; C.round <= C.o.kills && rc == 0 && !tool_stop_signal; C.round++) {
		struct crash_round r = {0};
		uint64_t r0 = util_now_ns();
		rc = crash_round_run(&C, &r);
		if (rc == 0)
			rc = crash_recovery_kill(&C);
		if (rc == 0)
			rc = crash_check(&C, &r);
		r.seconds = (double)(util_now_ns() - r0) * 1e-9;
		if (rc == 0 && !C.o.quiet)
			printf("round %u: %" PRIu64 " acks (kill after %" PRIu64 "), %" PRIu64
			       " records recovered, %" PRIu64 " keys checked, %" PRIu64
			       " tree keys, %.2f s\n", C.round, r.acks, r.target, r.recovered,
			       r.checked, r.tree_keys, r.seconds);
	}
	double secs = (double)(util_now_ns() - t0) * 1e-9;
	if (rc == 0 && C.round - 1 < C.o.kills)
		printf("crashtest: interrupted after round %u of %u\n", C.round - 1, C.o.kills);
	if (rc == 0)
		printf("crashtest: OK: %u rounds, %" PRIu64 " acks, %" PRIu64 " keys checked, %"
		       PRIu64 " records recovered, %" PRIu64 " recoveries killed (%" PRIu64
		       " inside kv_open), %.1f s\n", C.round - 1, C.total_acks, C.keys_acked,
		       C.total_recovered, C.recovery_kills, C.recovery_kills_inside, secs);
	else
		fprintf(stderr, CRASH_PROG ": FAILED in round %u of %u (seed %" PRIu64 "%s), "
			"%.1f s%s\n", C.round - 1, C.o.kills, C.o.seed,
			C.o.break_wal ? ", --break-wal" : "", secs,
			C.o.keep ? "" : "; --keep keeps the store to look at");
	if (C.o.keep)
		printf("crashtest: the store is kept in %s (and .wal, .ctl)\n", C.file);
	else
		remove_files(C.file);
	free(C.acked);
	if (fflush(stdout) != 0 && rc == 0) {
		fprintf(stderr, CRASH_PROG ": writing the report: %s\n", strerror(errno));
		rc = -EIO;
	}
	return tool_exit_status(rc == 0 ? 0 : 1);
}
