/* SPDX-License-Identifier: MIT */
/*
 * bpstat.c - show a running pool's statistics from another process, like
 * `vmstat 1`.
 *
 * Design note
 * -----------
 * bpstat maps the stats file a publisher (bpbench) keeps up to date (see
 * statsfile.h), reads a consistent snapshot every interval and prints one
 * line of per-second rates over that interval: hits, misses, reads, writes,
 * waits on each bit, spurious wakeups, and the frames threads waited on
 * longest during the interval.  As vmstat's first line covers the time
 * since boot, the first line covers the time since the publisher's counters
 * were last reset (or it started); so does a line after a reset.  It stops
 * after -n lines, or when the publisher is gone.  Every line, a table row
 * or (--json) a JSON line, goes through one emitter (util/emitter.h), so
 * strings such as the label are escaped in one place.  Single-threaded; no
 * state outside main's locals.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "statsfile.h"
#include "util/clock.h"
#include "util/emitter.h"
#include "util/opt.h"

struct figures {
	uint64_t hits, misses, reads, writes, io_waits, wb_waits, latch_waits, spurious, ops;
};

static struct figures figures_of(const struct bpstat_shared *s)
{
	const struct bp_stats *b = &s->stats;
	/* hits: every resident access, pinned or optimistic */
	return (struct figures){b->hits + b->optimistic_reads, b->misses, b->reads, b->writes, b->io_wait.count,
		b->writeback_wait.count, b->latch_shared_wait.count + b->latch_exclusive_wait.count,
		b->fwait.spurious_wakeups, s->ops};
}

/* cur - prev, counter by counter; a counter that went down was reset: then
 * its whole current value is the interval's. */
static struct figures figures_delta(struct figures c, struct figures p)
{
#define D(f) c.f = c.f >= p.f ? c.f - p.f : c.f
	D(hits); D(misses); D(reads); D(writes); D(io_waits); D(wb_waits); D(latch_waits);
	D(spurious); D(ops);
#undef D
	return c;
}

/* Wait time a hot frame gathered since prev (whole if it was not listed). */
static uint64_t hot_delta(const struct bpstat_frame *f, const struct bpstat_shared *prev)
{
	for (uint32_t i = 0; prev && i < prev->nhot; i++)
		if (prev->hot[i].frame == f->frame && prev->hot[i].pageno == f->pageno &&
		    prev->hot[i].file == f->file)
			return f->wait_ns >= prev->hot[i].wait_ns ? f->wait_ns - prev->hot[i].wait_ns : f->wait_ns;
	return f->wait_ns;
}

struct hot {
	const struct bpstat_frame *f;
	uint64_t ns;
};
static int hot_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct hot *)a)->ns, y = ((const struct hot *)b)->ns;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* One line's figures: the interval's deltas and rates, its hottest frames. */
struct line {
	const struct bpstat_shared *cur;
	struct figures tot, d;
	double secs, per, hit; /* interval, 1/interval (0: no rates), hit % */
	struct hot hot[BPSTAT_TOP_N];
	unsigned nhot;
};

static void line_compute(struct line *l, const struct bpstat_shared *cur,
			 const struct bpstat_shared *prev, unsigned top)
{
	l->cur = cur;
	l->tot = figures_of(cur);
	/* a reset since prev: the counters count from since_ns */
	bool reset = !prev || prev->since_ns != cur->since_ns;
	l->d = reset ? l->tot : figures_delta(l->tot, figures_of(prev));
	uint64_t from = reset ? cur->since_ns : prev->mono_ns;
	l->secs = cur->mono_ns > from ? (double)(cur->mono_ns - from) / 1e9 : 0;
	l->per = l->secs >= 1e-3 ? 1.0 / l->secs : 0; /* no rates over a blink */
	l->nhot = 0;
	for (uint32_t i = 0; i < cur->nhot && i < BPSTAT_TOP_N; i++) {
		uint64_t ns = hot_delta(&cur->hot[i], reset ? NULL : prev);
		if (ns)
			l->hot[l->nhot++] = (struct hot){&cur->hot[i], ns};
	}
	qsort(l->hot, l->nhot, sizeof(l->hot[0]), hot_cmp);
	if (l->nhot > top)
		l->nhot = top;
	const struct figures *d = &l->d;
	l->hit = d->hits + d->misses ? 100.0 * (double)d->hits / (double)(d->hits + d->misses) : 0;
}

/* The counters of f, named as in the JSON; scaled by `per` as rates. */
static void emit_figures(struct emitter *e, const char *key, const struct figures *f,
			 bool rates, double per)
{
	const char *names[] = {"hits", "misses", "reads", "writes", "io_waits", "writeback_waits",
			       "latch_waits", "spurious_wakeups", "ops"};
	const uint64_t v[] = {f->hits, f->misses, f->reads, f->writes, f->io_waits, f->wb_waits,
			      f->latch_waits, f->spurious, f->ops};

	emitter_dict_begin(e, key);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		if (rates)
			emitter_kv_double(e, names[i], (double)v[i] * per, 1);
		else
			emitter_kv_u64(e, names[i], v[i]);
	}
	emitter_dict_end(e);
}

/* One JSON line: pid, label, interval, totals, rates, hit ratio, hot frames. */
static void line_json(struct emitter *e, const struct line *l)
{
	emitter_dict_begin(e, NULL);
	emitter_kv_i64(e, "pid", l->cur->pid);
	emitter_kv_str(e, "label", l->cur->label);
	emitter_kv_double(e, "interval_s", l->secs, 3);
	emit_figures(e, "totals", &l->tot, false, 0);
	emit_figures(e, "rates", &l->d, true, l->per);
	emitter_kv_double(e, "hit_ratio", l->hit / 100, 4);
	emitter_list_begin(e, "hot");
	for (unsigned i = 0; i < l->nhot; i++) {
		emitter_dict_begin(e, NULL);
		emitter_kv_u64(e, "frame", l->hot[i].f->frame);
		emitter_kv_u64(e, "file", l->hot[i].f->file);
		emitter_kv_u64(e, "page", l->hot[i].f->pageno);
		emitter_kv_u64(e, "wait_ns", l->hot[i].ns);
		emitter_dict_end(e);
	}
	emitter_list_end(e);
	emitter_dict_end(e);
}

/* One row of the vmstat-like table, after a header row when asked. */
static void line_table(struct emitter *e, const struct line *l, bool header)
{
	const struct figures *d = &l->d;
	double per = l->per;

	if (header)
		emitter_table_printf(e, "%9s %9s %8s %8s %8s %8s %8s %7s %6s %9s  %s\n", "hits/s",
				     "misses/s", "reads/s", "writes/s", "iowait/s", "wbwait/s",
				     "latchw/s", "spur/s", "hit%", "ops/s",
				     "hottest frames: frame:page (frame:file/page past file 0) wait-ms");
	emitter_table_printf(e, "%9.0f %9.0f %8.0f %8.0f %8.0f %8.0f %8.0f %7.0f %6.1f %9.0f ",
			     d->hits * per, d->misses * per, d->reads * per, d->writes * per,
			     d->io_waits * per, d->wb_waits * per, d->latch_waits * per,
			     d->spurious * per, l->hit, d->ops * per);
	for (unsigned i = 0; i < l->nhot; i++) {
		const struct bpstat_frame *f = l->hot[i].f;
		if (f->file)
			emitter_table_printf(e, " %u:%u/%" PRIu64 " %.2f", f->frame, f->file,
					     f->pageno, (double)l->hot[i].ns / 1e6);
		else
			emitter_table_printf(e, " %u:%" PRIu64 " %.2f", f->frame, f->pageno,
					     (double)l->hot[i].ns / 1e6);
	}
	emitter_table_printf(e, "\n");
}

/* A line through e (a JSON line or a table row); 0 or the first error
 * writing stdout. */
static int print_line(struct emitter *e, const struct bpstat_shared *cur,
		      const struct bpstat_shared *prev, unsigned top, bool header)
{
	struct line l;

	line_compute(&l, cur, prev, top);
	if (emitter_is_json(e))
		line_json(e, &l);
	else
		line_table(e, &l, header);
	int rc = emitter_finish(e);
	if (rc == 0 && fflush(stdout) != 0)
		rc = -EIO;
	return rc;
}

/* The file of the only bpbench publishing now, for a bare `bpstat`. */
static int find_default(char *path, size_t len)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;
	int found = 0;
	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (strncmp(e->d_name, "bpbench.", 8) == 0 && !strstr(e->d_name, ".tmp")) {
			if (found++ == 0)
				snprintf(path, len, "/dev/shm/%s", e->d_name);
		}
	closedir(d);
	return found;
}

static void usage(FILE *f)
{
	fputs("usage: bpstat [-i interval_s] [-n count] [-N top] [--json] [file|pid]\n"
	      "  -i, --interval S   seconds between lines (default 1; fractions allowed)\n"
	      "  -n, --count N      stop after N lines (default: until the publisher exits)\n"
	      "  -N, --top N        hottest frames per line (default 3, max 16)\n"
	      "      --json         one JSON object per line (totals, rates, hot frames)\n"
	      "  file|pid           a stats file, or the pid of a bpbench publishing in\n"
	      "                     /dev/shm/bpbench.<pid> (default: the only one there)\n", f);
}

/* A pid, when arg is all digits (a file of that name: "./NAME"); else 0. */
static int pid_arg(const char *arg, pid_t *pid)
{
	unsigned v;

	*pid = 0;
	if (!*arg || arg[strspn(arg, "0123456789")] != '\0')
		return 0;
	if (util_opt_unsigned("bpstat", "pid", arg, 1, INT32_MAX, &v))
		return -EINVAL;
	*pid = (pid_t)v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {{"interval", 1, 0, 'i'}, {"count", 1, 0, 'n'},
		{"top", 1, 0, 'N'}, {"json", 0, 0, 'j'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
	double interval = 1.0;
	uint64_t count = 0;
	unsigned top = 3;
	bool json = false;
	char path[300];
	pid_t pid;
	int c;
	while ((c = getopt_long(argc, argv, "i:n:N:h", lo, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (util_opt_double("bpstat", "-i", optarg, 0.001, 86400, &interval))
				return 2;
			break;
		case 'n':
			if (util_opt_u64("bpstat", "-n", optarg, 1, UINT64_MAX, &count))
				return 2;
			break;
		case 'N':
			if (util_opt_unsigned("bpstat", "-N", optarg, 0, BPSTAT_TOP_N, &top))
				return 2;
			break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (argc - optind > 1) {
		usage(stderr);
		return 2;
	}
	if (optind < argc) {
		const char *a = argv[optind];
		if (pid_arg(a, &pid))
			return 2;
		if (pid)
			bpstat_default_path(pid, path, sizeof(path));
		else
			snprintf(path, sizeof(path), "%s", a);
	} else {
		int n = find_default(path, sizeof(path));
		if (n != 1) {
			fprintf(stderr, "bpstat: %s in /dev/shm; name a file or pid\n",
				n ? "several bpbench stats files" : "no bpbench stats file");
			return 1;
		}
	}
	struct bpstat_reader *r;
	struct bpstat_shared snap[2];
	struct stat st0, st;
	int rc = bpstat_reader_open(&r, path);
	if (rc == 0 && stat(path, &st0) != 0)
		rc = -errno;
	if (rc == 0)
		rc = bpstat_reader_read(r, &snap[0]);
	if (rc) {
		fprintf(stderr, "bpstat: %s: %s\n", path, rc == -EPROTO ?
			"not a stats file of this bpbench build" : strerror(-rc));
		return 1;
	}
	/* One emitter for every line: JSON lines, or the table. */
	struct emitter e;
	emitter_init(&e, json ? EMITTER_JSON_COMPACT : EMITTER_TABLE, emitter_write_file, stdout);
	int out = print_line(&e, &snap[0], NULL, top, true);
	uint64_t interval_ns = (uint64_t)(interval * 1e9), next_ns = util_now_ns();
	for (uint64_t line = 1; out == 0 && (!count || line < count); line++) {
		struct bpstat_shared *cur = &snap[line & 1], *prev = &snap[(line - 1) & 1];
		next_ns += interval_ns;
		struct timespec next = {(time_t)(next_ns / 1000000000u),
					(long)(next_ns % 1000000000u)};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
		/* the publisher removed (or replaced) its file, or died */
		if (stat(path, &st) != 0 || st.st_ino != st0.st_ino ||
		    (kill(prev->pid, 0) != 0 && errno == ESRCH)) {
			if (!json)
				fprintf(stderr, "bpstat: the publisher has exited\n");
			break;
		}
		if ((rc = bpstat_reader_read(r, cur)) != 0) {
			fprintf(stderr, "bpstat: %s: %s\n", path, strerror(-rc));
			break;
		}
		out = print_line(&e, cur, prev, top, !json && line % 20 == 0);
	}
	bpstat_reader_close(r);
	if (out)
		fprintf(stderr, "bpstat: writing the report: %s\n", strerror(-out));
	return rc || out ? 1 : 0;
}
