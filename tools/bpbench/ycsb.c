/* SPDX-License-Identifier: MIT */
/*
 * ycsb.c - bpbench ycsb: the YCSB core workloads A-F on the kv store.
 *
 * Design note
 * -----------
 * Layer: bpbench, on the store (tools/kv) and bufpool (whose
 * bp_stats_publish feeds bpstat); util for the clock, the PRNG, the emitter and
 * the option parser.  This file is the run's sequence; the jobs are in
 * ycsb_opts.c, ycsb_run.c, ycsb_report.c and ycsb_verify.c (see
 * ycsb_int.h).
 *
 * One run: open a fresh store on a pool smaller than the data, load
 * `records` records with N threads, reset the pool statistics, run the
 * workload's operation mix with N threads for an op count or a duration,
 * then report throughput, latency percentiles, CPU and context switches per
 * operation, the hit ratio and the pool's contention statistics; --verify
 * then re-reads every record and checks the tree's structure.  With
 * --durable the store keeps its redo log with sync_commit for both phases
 * (open_store), one untimed checkpoint separates them (load_and_run), and
 * the reports add the log's figures (ycsb_report.c).  --no-pool (workload
 * C) writes the load's pages back (bp_flush, untimed) before the run, and
 * after it runs the same reads on the tree copied to plain memory
 * (ycsb_floor.c), before --verify.  The exit
 * status is 0, 1 (a failed run, verify, close or report write) or 2 (bad
 * usage), or 130 after SIGINT.  SIGINT and SIGTERM end the phase running
 * (the report says "interrupted"); SIGTERM keeps the status.
 */
#include "ycsb.h"
#include "ycsb_int.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "toolutil.h"

/* Allocations, the workers (their lock, their generators). */
static int run_init(struct ycsb_run *R)
{
	bool adds = ycsb_mix_does(R->o.mix).adds;
	R->capacity = R->o.records + (adds ? (R->o.ops ? R->o.ops : UINT64_C(1) << 24) : 0);
	R->versions = calloc(R->capacity, sizeof(*R->versions));
	R->w = calloc(R->o.threads, sizeof(*R->w));
	if (!R->versions || !R->w) {
		fprintf(stderr, YCSB_PROG ": out of memory\n");
		free(R->versions);
		free(R->w);
		return -ENOMEM;
	}
	ycsb_run_setup(R);
	return 0;
}

static void run_fini(struct ycsb_run *R)
{
	ycsb_crew_fini(&R->crew);
	free(R->versions);
	free(R->w);
}

/* Store i's file: file itself for store 0, <file>.<i> for the others. */
static const char *store_path(const char *file, unsigned i, char *buf, size_t len)
{
	if (i == 0)
		return file;
	return (size_t)snprintf(buf, len, "%s.%u", file, i) < len ? buf : NULL;
}

static int open_store(struct ycsb_run *R, const char *file)
{
	struct kv_config kc = {.path = file, .create = true, .truncate = true,
			       .value_size = R->o.value_size};
	kc.pool.nframes = R->o.frames;
	kc.pool.page_size = R->o.page_size;
	kc.pool.io_latency_us = R->o.latency_us;
	kc.pool.io_engine = R->o.io_engine;
	kc.pool.read_path = R->o.read_path;
	if (R->o.checksums)
		kc.pool.flags |= BP_OPEN_CHECKSUMS;
	if (R->o.direct)
		kc.pool.flags |= BP_OPEN_DIRECT;
	kc.pool.fwait.policy = R->o.policy;
	kc.pool.log = tool_bp_log;
	/* --durable: sync_commit for the load and the run alike, so that every
	 * write either phase reports returned only once it was durable.  The
	 * store takes sync_commit at kv_open only, so loading without it and
	 * running with it would need a close and reopen between the phases:
	 * a cold pool for the run, unlike the run without --durable, and a
	 * second publisher.  A durable load is slower (4-7x on the 2-core CI
	 * machine for 100000 records and 16 threads, 6-9 s: each insert waits
	 * for its group's fsync, and with fewer threads fewer inserts share
	 * one), but its inserts/s is then what it says, the rate of durable
	 * inserts, and nothing is timed as durable that was not. */
	kc.durable = R->o.durable;
	kc.sync_commit = R->o.durable;
	kc.checkpoint_bytes = R->o.checkpoint_bytes;
	int rc = 0;
	/* --files: store 0 opens the pool, the others join it as files */
	for (unsigned i = 0; i < R->o.files && rc == 0; i++) {
		char buf[160];
		kc.path = store_path(file, i, buf, sizeof(buf));
		rc = kc.path ? kv_open(&R->kv[i], &kc) : -ENAMETOOLONG;
		if (rc)
			fprintf(stderr, YCSB_PROG ": cannot open store %s: %s\n",
				kc.path ? kc.path : file, strerror(-rc));
		else if (i == 0)
			kc.shared_pool = R->pool = kv_pool(R->kv[0]);
	}
	return rc;
}

/* Close the stores, the pool's owner last; 0 or the first error
 * (reported). */
static int close_stores(struct ycsb_run *R)
{
	int first = 0;
	for (unsigned i = R->o.files; i-- > 0;) {
		int rc = R->kv[i] ? kv_close(R->kv[i]) : 0;
		R->kv[i] = NULL;
		if (rc)
			fprintf(stderr, YCSB_PROG ": closing store %u: %s\n", i, strerror(-rc));
		if (rc && !first)
			first = rc;
	}
	return first;
}

/* The default file and the log files beside it (kv.h: <path>.wal and
 * <path>.ctl, present only after a durable run; an absent one is fine). */
static void remove_store(const char *file, unsigned files)
{
	static const char *const ext[] = {".wal", ".ctl"};
	char path[160]; /* the default name is under 128 bytes */
	unlink(file);
	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++)
		if ((size_t)snprintf(path, sizeof(path), "%s%s", file, ext[i]) < sizeof(path))
			unlink(path);
	for (unsigned i = 1; i < files; i++)
		if (store_path(file, i, path, sizeof(path)))
			unlink(path);
}

/* The bpstat that watches this bpbench, as the user can type it: the one
 * installed beside it, else the build tree's (tools/bpstat/bpstat next to
 * tools/bpbench/), relative to the working directory when below it; else
 * a bare "bpstat" (on the PATH, we hope).  Into buf (len bytes). */
static void bpstat_command(char *buf, size_t len)
{
	static const char *const beside[] = {"bpstat", "../bpstat/bpstat"};
	char exe[PATH_MAX], cand[PATH_MAX + 32], cwd[PATH_MAX], *full;
	snprintf(buf, len, "bpstat");
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return;
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0'; /* an absolute path: it has a '/' */
	for (size_t i = 0; i < sizeof(beside) / sizeof(beside[0]); i++) {
		snprintf(cand, sizeof(cand), "%s/%s", exe, beside[i]);
		if (access(cand, X_OK) != 0 || !(full = realpath(cand, NULL)))
			continue;
		size_t c = getcwd(cwd, sizeof(cwd)) ? strlen(cwd) : 0;
		const char *shown = full;
		if (c > 1 && strncmp(full, cwd, c) == 0 && full[c] == '/')
			shown = full + c + 1;
		/* a path a shell takes as typed: quoted if it needs to be */
		bool plain = strspn(shown, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789/._-+") == strlen(shown);
		snprintf(buf, len, plain ? "%s%s" : "'%s%s'", shown == full ? "" : "./", shown);
		free(full);
		return;
	}
}

static void publish_stats(struct ycsb_run *R)
{
	char name[32], cmd[PATH_MAX + 8];
	snprintf(name, sizeof(name), "ycsb-%c", R->o.mix->name);
	int rc = R->o.stats_file ? bp_stats_publish_file(R->pool, name, R->o.stats_file)
				 : bp_stats_publish(R->pool, name);
	R->pub = rc == 0;
	if (rc) { /* not fatal: the run is still worth doing */
		fprintf(stderr, YCSB_PROG ": cannot publish stats: %s\n", strerror(-rc));
	} else if (!R->o.quiet) {
		bpstat_command(cmd, sizeof(cmd));
		if (R->o.stats_file) /* bpstat takes a path only with a '/' */
			emitter_table_printf(&R->out, "  stats published in %s (watch: %s %s%s)\n",
					     R->o.stats_file, cmd,
					     strchr(R->o.stats_file, '/') ? "" : "./",
					     R->o.stats_file);
		else
			emitter_table_printf(&R->out, "  stats published (watch: %s %ld)\n", cmd,
					     (long)getpid());
	}
}

/* Load, then run and report; 0 or an error (already reported). */
static int load_and_run(struct ycsb_run *R)
{
	double secs;
	int rc = ycsb_run_phase(R, PHASE_LOAD, &secs);
	if (rc)
		return rc;
	ycsb_report_load(R, secs);
	/* Out now, through a pipe too (tee, a test waiting for it): the run
	 * that follows may be long. */
	fflush(R->human);
	if (tool_stop_signal) {
		fprintf(stderr, YCSB_PROG ": interrupted during the load\n");
		return -EINTR;
	}
	/* --durable: a checkpoint between the phases, not timed.  The load's
	 * log (~620 B an insert with its splits: 62 MB for 100000 records)
	 * would otherwise trip the store's first checkpoint early in the run,
	 * at a moment set by --records; after this one the run's checkpoints
	 * are its own, one per checkpoint_bytes of the run's log.  It writes
	 * at most the pool's dirty pages, which the run would write back
	 * anyway. */
	if (R->o.durable && (rc = kv_checkpoint(R->kv[0])) != 0) { /* one store */
		fprintf(stderr, YCSB_PROG ": checkpoint after the load: %s\n", strerror(-rc));
		return rc;
	}
	/* --no-pool: the load's pages written back now, not timed, so that
	 * neither the run nor the floor pays for it (the background writer
	 * would write them during both, in shares set by its pace): a
	 * read-only run on a clean pool measures the lookups alone. */
	if (R->o.no_pool && (rc = bp_flush(R->pool)) != 0) {
		fprintf(stderr, YCSB_PROG ": flushing the pool after the load: %s\n", strerror(-rc));
		return rc;
	}
	/* the load's workers are joined, the run's not started: relaxed */
	atomic_store_explicit(&R->acked, R->o.records, memory_order_relaxed);
	bp_stats_reset(R->pool); /* the stats file counts from here (since_ns) */
	if (R->pub)
		bp_stats_publish_ops(R->pool, 0);
	struct ycsb_measure run = {.u0 = cpu_usage_now()};
	rc = ycsb_run_phase(R, PHASE_RUN, &run.secs);
	run.u1 = cpu_usage_now();
	run.ops = ycsb_crew_done(&R->crew);
	if (rc == 0 && tool_stop_signal)
		emitter_table_printf(&R->out, "interrupted\n");
	ycsb_report_run(R, run.secs, run.u0, run.u1);
	if (rc == 0 && R->o.no_pool && !tool_stop_signal)
		rc = ycsb_floor(R, &run);
	if (rc == 0 && R->o.verify)
		rc = ycsb_verify(R);
	return rc;
}

int bpbench_ycsb_main(int argc, char **argv)
{
	struct ycsb_run R = {.human = stdout};
	char default_file[128];
	if (ycsb_parse_opts(argc, argv, &R.o) != 0)
		return 2;
	if (R.o.json)
		R.human = stderr;
	emitter_init(&R.out, EMITTER_TABLE, emitter_write_file, R.human);
	emitter_init(&R.json, EMITTER_JSON_COMPACT, emitter_write_file, stdout);
	R.tty = !R.o.quiet && isatty(STDERR_FILENO);
	const char *file = R.o.file;
	if (!file) {
		snprintf(default_file, sizeof(default_file), "/tmp/bpbench.%ld.db", (long)getpid());
		file = default_file;
	}
	if (run_init(&R) != 0)
		return 1;
	int status = 1;
	if (open_store(&R, file) != 0) {
		close_stores(&R); /* those that did open */
		goto out;
	}
	ycsb_report_config(&R, file);
	/* before the stats file appears: whoever sees it may signal us */
	tool_catch_stop();
	if (!R.o.no_stats)
		publish_stats(&R);
	if (load_and_run(&R) == 0)
		status = 0;
	if (R.pub)
		bp_stats_unpublish(R.pool);
	int rc = close_stores(&R);
	if (rc)
		status = 1;
	if (!R.o.file && !R.o.keep)
		remove_store(file, R.o.files);
	if (ycsb_emit_finish(YCSB_PROG, &R.out, &R.json, R.o.json) != 0)
		status = 1;
out:
	run_fini(&R);
	return tool_exit_status(status);
}
