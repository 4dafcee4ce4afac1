/* SPDX-License-Identifier: MIT */
/*
 * ref_main.c - ycsb-ref: bpbench ycsb's workloads A, B, C and F, with its
 * generator, keys, values and threads, on another engine (WiredTiger,
 * RocksDB, LevelDB or LMDB), for issue 33's side-by-side runs
 * (scripts/bench-outofpool.sh).
 *
 * Design note
 * -----------
 * Layer: ycsb-ref (see ref.h); this file is the run's sequence: parse the
 * options, make the directory (a new /tmp/ycsb-ref.XXXXXX unless --dir),
 * open the engine there with the cache asked for, open a session per
 * worker, load `records` records with N threads, run the mix with N
 * threads for an op count or a duration (getrusage around the run only,
 * as bpbench ycsb), report, close the sessions and the engine (its
 * close may write everything back: not timed), and remove the directory
 * it made.  The exit status is 0, 1 (a failed open, phase, close or
 * report write) or 2 (bad usage), bpbench ycsb's.
 */
#include "ref.h"
#include "toolutil.h"

#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	if (remove(path) != 0)
		fprintf(stderr, REF_PROG ": cannot remove %s: %s\n", path, strerror(errno));
	return 0; /* go on: remove what can be removed */
}

/* The engine's directory: --dir (made if missing, kept), or a new one
 * under /tmp (removed after, *made set); 0 or -errno (reported). */
static int make_dir(const struct ref_opts *o, char *buf, size_t len, const char **dir,
		    bool *made)
{
	*made = false;
	if (o->dir) {
		*dir = o->dir;
		if (mkdir(o->dir, 0755) != 0 && errno != EEXIST) {
			int e = errno;
			fprintf(stderr, REF_PROG ": cannot make %s: %s\n", o->dir, strerror(e));
			return -e;
		}
		return 0;
	}
	snprintf(buf, len, "/tmp/ycsb-ref.XXXXXX");
	if (!mkdtemp(buf)) {
		int e = errno;
		fprintf(stderr, REF_PROG ": cannot make a directory in /tmp: %s\n", strerror(e));
		return -e;
	}
	*dir = buf;
	*made = true;
	return 0;
}

/* Load, then run and report; 0 or an error (already reported). */
static int load_and_run(struct ref_run *R)
{
	double secs;
	int rc = ref_run_phase(R, PHASE_LOAD, &secs);
	if (rc)
		return rc;
	ref_report_load(R, secs);
	struct cpu_usage u0 = cpu_usage_now();
	rc = ref_run_phase(R, PHASE_RUN, &secs);
	struct cpu_usage u1 = cpu_usage_now();
	if (rc == 0)
		ref_report_run(R, secs, u0, u1);
	return rc;
}

int main(int argc, char **argv)
{
	struct ref_run R = {0};
	if (tool_version_asked(argc, argv))
		return tool_version_print(REF_PROG);
	if (ref_parse_opts(argc, argv, &R.o) != 0)
		return 2;
	emitter_init(&R.out, EMITTER_TABLE, emitter_write_file, R.o.json ? stderr : stdout);
	emitter_init(&R.json, EMITTER_JSON_COMPACT, emitter_write_file, stdout);
	char tmp[64];
	const char *dir = NULL;
	bool made;
	if (make_dir(&R.o, tmp, sizeof(tmp), &dir, &made) != 0)
		return 1;
	const struct ref_engine *e = R.o.engine;
	struct ref_db_config c = {.dir = dir, .cache_bytes = R.o.cache_bytes,
				  .page_size = R.o.page_size,
				  .records = R.o.records, .value_size = R.o.value_size,
				  .threads = R.o.threads, .extra = R.o.engine_config};
	int status = 1, rc = e->open(&c, &R.db);
	if (rc) {
		fprintf(stderr, REF_PROG ": cannot open %s in %s: %s\n", e->name, dir, strerror(-rc));
		goto out;
	}
	ref_report_config(&R, dir);
	if (ref_run_init(&R) == 0 && load_and_run(&R) == 0)
		status = 0;
	ref_run_fini(&R);
	if ((rc = e->close(R.db)) != 0) {
		fprintf(stderr, REF_PROG ": closing %s: %s\n", e->name, strerror(-rc));
		status = 1;
	}
	if (ycsb_emit_finish(REF_PROG, &R.out, &R.json, R.o.json) != 0)
		status = 1;
out:
	if (made)
		nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	return status;
}
