/* SPDX-License-Identifier: MIT */
/*
 * tiotest_plot.c - bpbench tiotest --plot: the run at several thread
 * counts, a data file, and gnuplot drawing CPU and spurious wakeups per MB
 * against threads.
 *
 * Design note
 * -----------
 * Layer: bpbench, on tiotest_run.c's runs and tiotest_report.c's summary;
 * spawns gnuplot (posix_spawnp, no shell: the file names reach gnuplot as
 * gnuplot single-quoted strings in one -e argument) with
 * tools/bpbench/plot.gp and a data file written next to OUT.png
 * (OUT.png.dat: one block per policy, one row per thread count).  With
 * --json the JSON lines of every thread count go to stdout as they are
 * measured and no summary table is printed.
 */
#include "tiotest_int.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Data file for plot.gp: one block per policy (gnuplot `index`), one row per
 * thread count; columns documented in the header and in plot.gp. */
static int write_plot_data(const char *path, const struct tio_options *opt,
			   const struct tio_result *all)
{
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		int e = errno;
		fprintf(stderr, TIO_PROG ": cannot write %s: %s\n", path, strerror(e));
		return -e;
	}
	fprintf(f, "# bpbench tiotest --plot: page %" PRIu32 " B, %u buckets, latency %" PRIu32
		   " us, %.3g MB/thread\n", opt->page_size, opt->buckets, opt->latency_us,
		opt->mb_per_thread);
	fprintf(f, "# columns: 1 threads | 2-5 cpu ms/MB (W RW R RR) | 6-9 spurious/MB |"
		   " 10-13 ctxsw/MB | 14-17 MB/cpusec\n");
	for (unsigned p = 0; p < opt->npolicies; p++) {
		fprintf(f, "# policy %s\n", fwait_policy_name(opt->policies[p]));
		for (unsigned t = 0; t < opt->nplot_threads; t++) {
			const struct tio_result *r =
				&all[(t * opt->npolicies + p) * TIO_ITEM_COUNT];
			fprintf(f, "%u", r[0].threads);
			for (int i = 0; i < TIO_ITEM_COUNT; i++)
				fprintf(f, " %.6f", tio_per_mb(&r[i], tio_res_cpu(&r[i]) * 1000.0));
			for (int i = 0; i < TIO_ITEM_COUNT; i++)
				fprintf(f, " %.3f", tio_per_mb(&r[i], (double)r[i].fwait_spurious));
			for (int i = 0; i < TIO_ITEM_COUNT; i++)
				fprintf(f, " %.3f", tio_per_mb(&r[i], (double)(r[i].vcsw + r[i].ivcsw)));
			for (int i = 0; i < TIO_ITEM_COUNT; i++)
				fprintf(f, " %.4f", tio_mb_per_cpusec(&r[i]));
			fprintf(f, "\n");
		}
		fprintf(f, "\n\n");
	}
	if (fclose(f) != 0) {
		fprintf(stderr, TIO_PROG ": writing %s: %s\n", path, strerror(errno));
		return -EIO;
	}
	return 0;
}

/* The gnuplot script: --plot-script, else $BPBENCH_PLOT_GP, else plot.gp
 * next to the executable (the build tree), else the installed one
 * (BPBENCH_PLOT_GP_INSTALLED: <datadir>/fwait-bufpool/plot.gp), else
 * tools/bpbench/plot.gp under the working directory (the repository
 * root). */
static const char *find_plot_script(const struct tio_options *opt, char *buf, size_t len)
{
	if (opt->plot_script != NULL)
		return opt->plot_script;
	const char *env = getenv("BPBENCH_PLOT_GP");
	if (env != NULL && env[0] != '\0')
		return env;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash != NULL) {
			*slash = '\0';
			int n2 = snprintf(buf, len, "%s/plot.gp", exe);
			if (n2 > 0 && (size_t)n2 < len && access(buf, R_OK) == 0)
				return buf;
		}
	}
	if (access(BPBENCH_PLOT_GP_INSTALLED, R_OK) == 0)
		return BPBENCH_PLOT_GP_INSTALLED;
	if (access("tools/bpbench/plot.gp", R_OK) == 0)
		return "tools/bpbench/plot.gp";
	return NULL;
}

/* Append s to a gnuplot single-quoted string ('' stands for '). */
static int gp_quote(char *dst, size_t len, const char *s)
{
	size_t o = 0;
	for (; *s; s++) {
		if (o + 3 >= len)
			return -ENAMETOOLONG;
		if (*s == '\'')
			dst[o++] = '\'';
		dst[o++] = *s;
	}
	dst[o] = '\0';
	return 0;
}

static int run_gnuplot(const struct tio_options *opt, const char *data, const char *script)
{
	char qdata[PATH_MAX * 2], qout[PATH_MAX * 2], pols[128] = "", expr[PATH_MAX * 5];
	if (gp_quote(qdata, sizeof(qdata), data) || gp_quote(qout, sizeof(qout), opt->plot_out))
		return -ENAMETOOLONG;
	for (unsigned p = 0; p < opt->npolicies; p++) {
		strcat(pols, p ? " " : "");
		strcat(pols, fwait_policy_name(opt->policies[p]));
	}
	snprintf(expr, sizeof(expr),
		 "datafile='%s'; outfile='%s'; policies='%s'; "
		 "subtitle='%u-byte pages, %u fwait buckets, %" PRIu32 " us latency, %.3g MB/thread'",
		 qdata, qout, pols, opt->page_size, opt->buckets, opt->latency_us,
		 opt->mb_per_thread);
	char *argv[] = { "gnuplot", "-e", expr, (char *)script, NULL };
	pid_t pid;
	int e = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);
	if (e != 0) {
		fprintf(stderr, TIO_PROG ": cannot run gnuplot: %s\n", strerror(e));
		return -e;
	}
	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, TIO_PROG ": gnuplot failed (status %d); data in %s\n",
			status, data);
		return -EIO;
	}
	return 0;
}

int tio_plot(const struct tio_options *opt, const char *path, struct emitter *table,
	     struct emitter *json)
{
	char script_buf[PATH_MAX];
	const char *script = find_plot_script(opt, script_buf, sizeof(script_buf));
	if (script == NULL) {
		fprintf(stderr, TIO_PROG ": cannot find plot.gp; give --plot-script "
			"(it is tools/bpbench/plot.gp in the source tree)\n");
		return -ENOENT;
	}
	size_t per = (size_t)opt->npolicies * TIO_ITEM_COUNT;
	struct tio_result *all = calloc(per * opt->nplot_threads, sizeof(*all));
	if (all == NULL)
		return -ENOMEM;
	int worst = 0;
	for (unsigned t = 0; t < opt->nplot_threads; t++) {
		int rc = tio_run_all_policies(opt, path, opt->plot_threads[t], &all[t * per]);
		if (rc < 0) {
			free(all);
			return rc;
		}
		if (rc > 0)
			worst = 1;
		if (opt->json)
			tio_report_json(json, opt, &all[t * per]);
	}
	char data[PATH_MAX];
	int rc = 0;
	if ((size_t)snprintf(data, sizeof(data), "%s.dat", opt->plot_out) >= sizeof(data))
		rc = -ENAMETOOLONG;
	if (rc == 0)
		rc = write_plot_data(data, opt, all);
	if (rc == 0)
		rc = run_gnuplot(opt, data, script);
	if (rc == 0 && !opt->json) {
		emitter_table_printf(table, TIO_PROG ": wrote %s (data %s, script %s)\n",
				     opt->plot_out, data, script);
		tio_report_plot_summary(table, opt, all);
	}
	free(all);
	return rc < 0 ? rc : worst;
}
