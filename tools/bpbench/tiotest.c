/* SPDX-License-Identifier: MIT */
/*
 * tiotest.c - bpbench tiotest: the tiotest-style run of the workload
 * driver, its main.
 *
 * Design note
 * -----------
 * Layer: bpbench, on bufpool (see tiotest_int.h for the files and their
 * jobs).  This file makes the data file (a temporary one unless --file;
 * emptied and sized before each policy's run by tio_presize_file),
 * sets up the two emitters on stdout (a table one for the human report, a
 * compact JSON one for --json), runs either table mode (every policy at
 * --threads, then the tables) or --plot (tiotest_plot.c), and turns the
 * outcome into the exit status: 0 ok, 1 a data check, a pool call or a
 * write of the report failed, 2 bad arguments.  SIGINT or SIGTERM
 * (toolutil.h) ends the running phase early; its figures would be a
 * partial phase's, so nothing is reported, the temporary file is removed,
 * and the status is 130 after SIGINT, 1 after SIGTERM.
 */
#include "tiotest.h"
#include "tiotest_int.h"
#include "toolutil.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Every policy at --threads, then the tables or the JSON lines.  0, 1 or
 * -errno. */
static int tiotest_table(const struct tio_options *opt, const char *path,
			 struct emitter *table, struct emitter *json)
{
	struct tio_result *all = calloc((size_t)opt->npolicies * TIO_ITEM_COUNT, sizeof(*all));
	if (all == NULL)
		return -ENOMEM;
	int rc = tio_run_all_policies(opt, path, opt->threads, all);
	if (rc >= 0) {
		if (opt->json)
			tio_report_json(json, opt, all);
		else
			tio_report_tables(table, opt, all);
	}
	free(all);
	return rc;
}

/* Empty the file and give it its final size as one hole, before the pool
 * opens it, so every first write of a page reads the hole (zeros, checked)
 * and overwrites it: the pool has no "whole page overwrite" hint, and a page
 * below the pool's page count is read before it is written.  Without this,
 * which pages of the parallel Write phase are created and which are read
 * would depend on how the threads happen to interleave (a page is created
 * only if no thread has yet created a higher one), so the policies would not
 * do identical I/O. */
int tio_presize_file(const char *path, uint64_t bytes)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		int e = errno;
		fprintf(stderr, TIO_PROG ": cannot open %s: %s\n", path, strerror(e));
		return -e;
	}
	int rc = 0;
	if (ftruncate(fd, (off_t)bytes) != 0) {
		rc = -errno;
		fprintf(stderr, TIO_PROG ": cannot size %s to %" PRIu64 " bytes: %s\n", path,
			bytes, strerror(-rc));
	}
	close(fd);
	return rc;
}

int bpbench_tiotest_main(int argc, char **argv)
{
	struct tio_options opt;
	int rc = tio_parse_options(argc, argv, &opt);
	if (rc > 0)
		return 0;
	if (rc < 0)
		return 2;

	char tmp_path[PATH_MAX];
	const char *path = opt.file;
	if (path == NULL) {
		if (tool_temp_file(TIO_PROG, "bpbench-tiotest", tmp_path, sizeof(tmp_path)) != 0)
			return 1;
		path = tmp_path;
	}

	struct emitter table, json;
	emitter_init(&table, EMITTER_TABLE, emitter_write_file, stdout);
	emitter_init(&json, EMITTER_JSON_COMPACT, emitter_write_file, stdout);
	tool_catch_stop(); /* after the file exists: a stop now still removes it */
	rc = opt.plot_out != NULL ? tio_plot(&opt, path, &table, &json)
				  : tiotest_table(&opt, path, &table, &json);
	int out_rc = emitter_finish(opt.json ? &json : &table);
	if (fflush(stdout) != 0 && out_rc == 0)
		out_rc = -EIO;

	if (!opt.keep_file && unlink(path) != 0 && errno != ENOENT)
		fprintf(stderr, TIO_PROG ": cannot remove %s: %s\n", path, strerror(errno));
	if (rc == -EINTR) {
		fprintf(stderr, TIO_PROG ": interrupted: a phase was cut short, no report\n");
		return tool_exit_status(1);
	}
	if (rc < 0) {
		fprintf(stderr, TIO_PROG ": failed: %s\n", strerror(-rc));
		return 1;
	}
	if (out_rc != 0) {
		fprintf(stderr, TIO_PROG ": writing the report: %s\n", strerror(-out_rc));
		return 1;
	}
	if (rc > 0) {
		fprintf(stderr, TIO_PROG ": FAILED: data checks or pool calls failed\n");
		return 1;
	}
	return 0;
}
