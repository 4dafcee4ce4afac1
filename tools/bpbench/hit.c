/* SPDX-License-Identifier: MIT */
/*
 * hit.c - bpbench hit: the cost of a page hit, its main.
 *
 * Design note
 * -----------
 * Layer: bpbench, directly on bufpool (see hit_int.h for the files and
 * their jobs).  This file makes the data (a temporary file unless --file),
 * runs the matrix, checks the pool's counters and turns the outcome into
 * the exit status: 0 ok, 1 a pool call, a byte check, the hits-only check
 * or a write of the report failed, 2 bad arguments.
 *
 * Order of the matrix: repeat, then thread count, then pattern, then mode
 * (the floor first).  The repeats are the outer loop, not each cell run R
 * times back to back, so that a burst of noise on this shared machine
 * lands in one sample of many cells (and shows as a spread) rather than
 * in every sample of one cell; and a mode and its floor are always
 * measured seconds apart.
 *
 * The hits-only check: the pool's counters are reset after the warm-up,
 * and after the matrix they must show exactly one hit or optimistic read
 * per pool access, and no restart, miss, read or eviction; else the figures are not those of a hit and
 * the run fails.
 *
 * SIGINT or SIGTERM (toolutil.h) ends the cell running at once; the
 * matrix is then incomplete, so nothing is reported, the temporary file is
 * removed and the exit status is 130 after SIGINT, 1 after SIGTERM.
 */
#include "hit.h"
#include "hit_int.h"
#include "toolutil.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Every cell, --repeat times, into all (hit_index's layout); the pool
 * accesses made in *pool_accesses.  0 or -errno (reported). */
static int run_matrix(const struct hit_data *d, struct hit_sample *all, uint64_t *pool_accesses)
{
	const struct hit_options *o = d->opt;
	bool tty = isatty(STDERR_FILENO);
	*pool_accesses = 0;
	for (unsigned r = 0; r < o->repeat; r++) {
		for (unsigned t = 0; t < o->nthreads; t++) {
			for (int p = 0; p < HIT_PATTERN_COUNT; p++) {
				for (int m = 0; m < HIT_MODE_COUNT; m++) {
					if (!o->modes[m])
						continue;
					if (tty)
						fprintf(stderr, "\r\033[K" HIT_PROG ": repeat %u/%u, "
							"%u threads, %s %s", r + 1, o->repeat,
							o->threads[t], hit_pattern_names[p],
							hit_modes[m].name);
					struct hit_sample *s = &all[hit_index(o, m, p, t, r)];
					int rc = hit_run_cell(d, m, p, o->threads[t], s);
					if (rc == 0 && tool_stop_signal)
						rc = -EINTR; /* a cell cut short: no report */
					if (rc != 0) {
						if (tty)
							fprintf(stderr, "\r\033[K");
						return rc;
					}
					if (hit_modes[m].uses_pool)
						*pool_accesses += s->accesses;
				}
			}
		}
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
	return 0;
}

/* The hits-only check (see above): 0 or -EPROTO (reported). */
static int check_hits(const struct bp_stats *s, uint64_t accesses)
{
	if (s->hits + s->optimistic_reads == accesses && s->optimistic_restarts == 0 &&
	    s->misses == 0 && s->reads == 0 && s->evictions == 0)
		return 0;
	fprintf(stderr, HIT_PROG ": the run was not hits only (see the pool line): its figures "
		"are not a hit's\n");
	return -EPROTO;
}

/* Open the data, run, report.  0 or -errno (reported). */
static int run(const struct hit_options *o, const char *path, const struct hit_report *R)
{
	size_t n = hit_index(o, HIT_MODE_COUNT, 0, 0, 0);
	struct hit_sample *all = calloc(n, sizeof(*all));
	if (all == NULL)
		return -ENOMEM;
	struct hit_data d;
	struct bp_stats s;
	bp_stats_init(&s);
	uint64_t accesses = 0;
	int rc = hit_data_open(&d, o, path);
	if (rc == 0)
		rc = bp_stats_get(d.pool, &s);
	if (rc == 0) {
		hit_report_config(R, o, &s, path);
		/* Out now, through a pipe too: the matrix may be long. */
		fflush(stdout);
		rc = bp_stats_reset(d.pool);
	}
	if (rc == 0)
		rc = run_matrix(&d, all, &accesses);
	if (rc == 0)
		rc = bp_stats_get(d.pool, &s);
	if (rc == 0) {
		hit_report_cells(R, o, all);
		hit_report_pool(R, &s, accesses);
		rc = check_hits(&s, accesses);
	}
	int crc = hit_data_close(&d);
	free(all);
	return rc != 0 ? rc : crc;
}

int bpbench_hit_main(int argc, char **argv)
{
	struct hit_options o;
	int rc = hit_parse_options(argc, argv, &o);
	if (rc > 0)
		return 0;
	if (rc < 0)
		return 2;

	char tmp_path[PATH_MAX];
	const char *path = o.file;
	if (path == NULL) {
		if (tool_temp_file(HIT_PROG, "bpbench-hit", tmp_path, sizeof(tmp_path)) != 0)
			return 1;
		path = tmp_path;
	}
	struct emitter out, json;
	emitter_init(&out, EMITTER_TABLE, emitter_write_file, o.json ? stderr : stdout);
	emitter_init(&json, EMITTER_JSON_COMPACT, emitter_write_file, stdout);
	struct hit_report R = { &out, o.json ? &json : NULL };

	tool_catch_stop(); /* after the file exists: a stop now still removes it */
	rc = run(&o, path, &R);
	int out_rc = emitter_finish(&out);
	if (out_rc == 0 && o.json)
		out_rc = emitter_finish(&json);
	if (fflush(stdout) != 0 && out_rc == 0)
		out_rc = -EIO;
	if (!o.keep_file && unlink(path) != 0 && errno != ENOENT)
		fprintf(stderr, HIT_PROG ": cannot remove %s: %s\n", path, strerror(errno));
	if (rc == -EINTR) {
		fprintf(stderr, HIT_PROG ": interrupted: the matrix is incomplete, no report\n");
		return tool_exit_status(1);
	}
	if (rc != 0) {
		fprintf(stderr, HIT_PROG ": failed: %s\n", strerror(-rc));
		return 1;
	}
	if (out_rc != 0) {
		fprintf(stderr, HIT_PROG ": writing the report: %s\n", strerror(-out_rc));
		return 1;
	}
	return 0;
}
