/* SPDX-License-Identifier: MIT */
/*
 * bpstat.c - show a running pool's statistics from another process, like
 * `vmstat 1`: any program that called bp_stats_publish.
 *
 * Design note
 * -----------
 * bpstat finds the stats files in /dev/shm (statsread.h: one per
 * publishing pool, bufpool.<pid>.<name>), picks the one named by pid, name
 * or path (or the only one), maps it and copies a consistent snapshot
 * every interval.  Every line covers one interval only, the first too
 * (bpstat waits one interval before it): per-second rates of hits,
 * misses, reads, writes, waits and the embedder's ops, the hit ratio, and
 * the pages threads waited on longest during the interval, summed per
 * page over the publisher's windows that ended in it (bufpool/statsfile.h
 * explains the windows).  A bp_stats_reset inside an interval shows as the
 * counters since the reset.  A line fits 80 columns (numbers shortened to
 * k/M/G, as many hot pages as fit) unless --wide.  bpstat stops after -n
 * lines, or when the publisher ends: a removed file is a clean end (exit
 * 0); a dead process (kill(pid, 0): ESRCH) or a stale file (no update for
 * bpstat_stale_ns) is said on stderr and exits 1.  Every line, a table row
 * or (--json) a JSON line, goes through one emitter (util/emitter.h), so
 * strings such as the name are escaped in one place.  Single-threaded; no
 * state outside main's locals.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "statsread.h"
#include "toolutil.h"
#include "util/clock.h"
#include "util/emitter.h"
#include "util/opt.h"

#define MAX_FOUND 256u
#define COLUMNS 80u

struct figures {
	uint64_t hits, misses, reads, writes, io_waits, wb_waits, latch_waits, spurious, ops;
};

static struct figures figures_of(const struct bp_statsfile *s)
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

/* A page's wait during the interval. */
struct hot {
	uint64_t pageno, ns;
	uint32_t file;
};
static int by_page(const void *a, const void *b)
{
	const struct hot *x = a, *y = b;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->pageno < y->pageno ? -1 : x->pageno > y->pageno;
}
static int by_wait_desc(const void *a, const void *b)
{
	uint64_t x = ((const struct hot *)a)->ns, y = ((const struct hot *)b)->ns;
	return x < y ? 1 : x > y ? -1 : by_page(a, b);
}

/* One line's figures: the interval's deltas and rates, its hottest pages. */
struct line {
	const struct bp_statsfile *cur;
	struct figures tot, d;
	double secs, per, hit; /* interval, 1/interval (0: no rates), hit % */
	struct hot hot[BP_SF_TOP_N];
	unsigned nhot;
};

/* The pages waited on in cur's windows numbered after prev's newest,
 * summed per page, the longest top first. */
static void hot_pages(struct line *l, const struct bp_statsfile *cur,
		      const struct bp_statsfile *prev, unsigned top)
{
	static struct hot all[BP_SF_WINDOWS * BP_SF_TOP_N];
	size_t n = 0;
	for (unsigned i = 0; i < BP_SF_WINDOWS; i++) {
		const struct bp_sf_window *w = &cur->windows[i];
		if (w->no <= prev->window || w->no > cur->window)
			continue;
		for (uint32_t j = 0; j < w->n && j < BP_SF_TOP_N; j++)
			all[n++] = (struct hot){w->top[j].pageno, w->top[j].wait_ns, w->top[j].file};
	}
	qsort(all, n, sizeof(all[0]), by_page);
	size_t m = 0; /* merge each page's entries */
	for (size_t i = 0; i < n; i++) {
		if (m && all[m - 1].file == all[i].file && all[m - 1].pageno == all[i].pageno)
			all[m - 1].ns += all[i].ns;
		else
			all[m++] = all[i];
	}
	qsort(all, m, sizeof(all[0]), by_wait_desc);
	l->nhot = m < top ? (unsigned)m : top;
	memcpy(l->hot, all, l->nhot * sizeof(all[0]));
}

static void line_compute(struct line *l, const struct bp_statsfile *cur,
			 const struct bp_statsfile *prev, unsigned top)
{
	l->cur = cur;
	l->tot = figures_of(cur);
	/* a reset since prev: the counters count from since_ns */
	bool reset = prev->since_ns != cur->since_ns;
	l->d = reset ? l->tot : figures_delta(l->tot, figures_of(prev));
	uint64_t from = reset ? cur->since_ns : prev->mono_ns;
	l->secs = cur->mono_ns > from ? (double)(cur->mono_ns - from) / 1e9 : 0;
	l->per = l->secs >= 1e-3 ? 1.0 / l->secs : 0; /* no rates over a blink */
	hot_pages(l, cur, prev, top);
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

/* One JSON line: pid, name, interval, totals (since the counters' last
 * reset), the interval's rates, hit ratio and hot pages. */
static void line_json(struct emitter *e, const struct line *l)
{
	emitter_dict_begin(e, NULL);
	emitter_kv_i64(e, "pid", l->cur->head.pid);
	emitter_kv_str(e, "name", l->cur->name);
	emitter_kv_double(e, "interval_s", l->secs, 3);
	emit_figures(e, "totals", &l->tot, false, 0);
	emit_figures(e, "rates", &l->d, true, l->per);
	emitter_kv_double(e, "hit_ratio", l->hit / 100, 4);
	emitter_list_begin(e, "hot");
	for (unsigned i = 0; i < l->nhot; i++) {
		emitter_dict_begin(e, NULL);
		emitter_kv_u64(e, "file", l->hot[i].file);
		emitter_kv_u64(e, "page", l->hot[i].pageno);
		emitter_kv_u64(e, "wait_ns", l->hot[i].ns);
		emitter_dict_end(e);
	}
	emitter_list_end(e);
	emitter_dict_end(e);
}

/* v in at most width characters: as is, else with a k/M/G/T/P suffix. */
static const char *num(char *buf, size_t len, unsigned width, double v)
{
	static const char suffix[] = "kMGTP";
	snprintf(buf, len, "%.0f", v);
	for (unsigned i = 0; strlen(buf) > width && suffix[i]; i++) {
		v /= 1000;
		snprintf(buf, len, "%.1f%c", v, suffix[i]);
		if (strlen(buf) > width)
			snprintf(buf, len, "%.0f%c", v, suffix[i]);
	}
	return buf;
}

/* A hot page as "page:ms" ("file/page:ms" past file 0) into buf. */
static int hot_text(char *buf, size_t len, const struct hot *h)
{
	double ms = (double)h->ns / 1e6;
	int prec = ms < 10 ? 2 : ms < 100 ? 1 : 0;
	if (h->file)
		return snprintf(buf, len, " %" PRIu32 "/%" PRIu64 ":%.*f", h->file, h->pageno, prec, ms);
	return snprintf(buf, len, " %" PRIu64 ":%.*f", h->pageno, prec, ms);
}

/* One row of the vmstat-like table, after a header row when asked: 80
 * columns, or every column and all -N hot pages with wide. */
static void line_table(struct emitter *e, const struct line *l, bool header, bool wide)
{
	const struct figures *d = &l->d;
	double per = l->per;
	char b[10][16], row[512], h[64];
	int len;

	if (wide) {
		if (header)
			emitter_table_printf(e, "%9s %9s %8s %8s %8s %8s %8s %7s %6s %9s  %s\n",
					     "hits/s", "misses/s", "reads/s", "writes/s", "iowait/s",
					     "wbwait/s", "latchw/s", "spur/s", "hit%", "ops/s",
					     "hot pages: [file/]page:wait-ms");
		len = snprintf(row, sizeof(row), "%9s %9s %8s %8s %8s %8s %8s %7s %6.1f %9s ",
			       num(b[0], 16, 9, d->hits * per), num(b[1], 16, 9, d->misses * per),
			       num(b[2], 16, 8, d->reads * per), num(b[3], 16, 8, d->writes * per),
			       num(b[4], 16, 8, d->io_waits * per), num(b[5], 16, 8, d->wb_waits * per),
			       num(b[6], 16, 8, d->latch_waits * per),
			       num(b[7], 16, 7, d->spurious * per), l->hit, num(b[8], 16, 9, d->ops * per));
	} else {
		if (header)
			emitter_table_printf(e, "%7s %7s %6s %6s %6s %5s %7s  %s\n", "hits/s",
					     "miss/s", "read/s", "writ/s", "wait/s", "hit%", "ops/s",
					     "hot page:wait-ms");
		len = snprintf(row, sizeof(row), "%7s %7s %6s %6s %6s %5.1f %7s ",
			       num(b[0], 16, 7, d->hits * per), num(b[1], 16, 7, d->misses * per),
			       num(b[2], 16, 6, d->reads * per), num(b[3], 16, 6, d->writes * per),
			       num(b[4], 16, 6, (d->io_waits + d->wb_waits + d->latch_waits) * per),
			       l->hit, num(b[5], 16, 7, d->ops * per));
	}
	for (unsigned i = 0; i < l->nhot; i++) {
		int n = hot_text(h, sizeof(h), &l->hot[i]);
		if (!wide && (unsigned)(len + n) > COLUMNS)
			break;
		if ((size_t)(len + n) >= sizeof(row))
			break;
		memcpy(row + len, h, (size_t)n + 1);
		len += n;
	}
	emitter_table_printf(e, "%s\n", row);
}

/* A line through e (a JSON line or a table row); 0 or the first error
 * writing stdout. */
static int print_line(struct emitter *e, const struct bp_statsfile *cur,
		      const struct bp_statsfile *prev, unsigned top, bool header, bool wide)
{
	struct line l;

	line_compute(&l, cur, prev, top);
	if (emitter_is_json(e))
		line_json(e, &l);
	else
		line_table(e, &l, header, wide);
	int rc = emitter_finish(e);
	if (rc == 0 && fflush(stdout) != 0)
		rc = -EIO;
	return rc;
}

static const char *liveness_word(enum bpstat_liveness v)
{
	return v == BPSTAT_DEAD ? "dead" : v == BPSTAT_STALE ? "stale" : "live";
}

/* One row per publisher in found[0..n): target, state, name, file. */
static void list(FILE *out, const struct bpstat_found *found, size_t n)
{
	static struct bp_statsfile s;
	fprintf(out, "%-24s %-5s %s\n", "TARGET", "STATE", "NAME");
	for (size_t i = 0; i < n; i++) {
		struct bpstat_reader *r;
		struct bp_sf_head head;
		int rc = bpstat_reader_open(&r, found[i].path, &head);
		if (rc == 0) {
			rc = bpstat_reader_read(r, &s);
			bpstat_reader_close(r);
		}
		if (rc == 0)
			fprintf(out, "%-24s %-5s %s\n", found[i].key,
				liveness_word(bpstat_liveness(&s, util_now_ns())), s.name);
		else
			fprintf(out, "%-24s %-5s (%s)\n", found[i].key, "?",
				rc == -EPROTONOSUPPORT ? "another bufpool version" : strerror(-rc));
	}
}

static void usage(FILE *f)
{
	fputs("usage: bpstat [-i interval_s] [-n count] [-N top] [--wide] [--json] [TARGET]\n"
	      "       bpstat --list\n"
	      "Shows, once an interval, what a pool published with bp_stats_publish did\n"
	      "during that interval.  TARGET: the pid of the publishing process, the\n"
	      "name it published under, <pid>.<name>, or a stats file's path (with a /);\n"
	      "default: the only publisher in /dev/shm (several: they are listed).\n"
	      "  -i, --interval S   seconds between lines (default 1; fractions allowed)\n"
	      "  -n, --count N      stop after N lines (default: until the publisher ends)\n"
	      "  -N, --top N        hottest pages per line (default 3, max 16; the\n"
	      "                     80-column table shows as many as fit)\n"
	      "  -w, --wide         every column and all -N hot pages, past 80 columns\n"
	      "      --json         one JSON object per line (totals, rates, hot pages)\n"
	      "  -l, --list         list the publishers (live, dead or stale) and exit\n"
	      "Exit status: 0 after -n lines or when the publisher stops publishing,\n"
	      "1 when it is dead or its file stale (said on stderr) or on an error,\n"
	      "2 on a usage error.\n", f);
}

/* Does found (bufpool.<pid>.<file name>) match target: its pid, its name
 * as a file name, or both as <pid>.<name>? */
static bool matches(const struct bpstat_found *f, const char *target)
{
	char pid[24];
	snprintf(pid, sizeof(pid), "%ld", (long)f->pid);
	const char *name = f->key + strlen(pid) + 1;
	return strcmp(target, pid) == 0 || strcmp(target, name) == 0 ||
	       strcmp(target, f->key) == 0;
}

/* The file target names into path (target NULL: the only one); 0, or 1
 * after saying why not (nothing, or several, which it lists). */
static int resolve(const char *target, char *path, size_t len)
{
	static struct bpstat_found found[MAX_FOUND];
	size_t n, m = 0;
	if (target && strchr(target, '/')) {
		snprintf(path, len, "%s", target);
		return 0;
	}
	int rc = bpstat_find(found, MAX_FOUND, &n);
	if (rc && rc != -ENOENT) {
		fprintf(stderr, "bpstat: %s: %s\n", BP_SF_DIR, strerror(-rc));
		return 1;
	}
	if (n > MAX_FOUND)
		n = MAX_FOUND;
	for (size_t i = 0; i < n; i++)
		if (!target || matches(&found[i], target))
			found[m++] = found[i];
	if (m == 1) {
		snprintf(path, len, "%s", found[0].path);
		return 0;
	}
	if (m == 0) {
		if (target)
			fprintf(stderr, "bpstat: no publisher matches %s in %s\n", target, BP_SF_DIR);
		else
			fprintf(stderr, "bpstat: no publisher in %s (a program publishes with "
				"bp_stats_publish)\n", BP_SF_DIR);
		return 1;
	}
	fprintf(stderr, "bpstat: %zu publishers%s%s: choose one by TARGET\n", m,
		target ? " match " : "", target ? target : "");
	list(stdout, found, m);
	return 1;
}

/* Says on stderr why s's publisher cannot be followed; 1 if so, else 0. */
static int check_alive(const char *path, const struct bp_statsfile *s)
{
	uint64_t now = util_now_ns();
	switch (bpstat_liveness(s, now)) {
	case BPSTAT_DEAD:
		fprintf(stderr, "bpstat: publisher %d (%s) is dead: %s is left over from it "
			"(remove it)\n", s->head.pid, s->name, path);
		return 1;
	case BPSTAT_STALE:
		fprintf(stderr, "bpstat: %s is stale: no update for %.1f s from publisher %d (%s), "
			"which still exists (stopped? hung? a zombie?)\n", path,
			(double)(now - s->mono_ns) / 1e9, s->head.pid, s->name);
		return 1;
	default:
		return 0;
	}
}

/* A pid as a TARGET, when arg is all digits; checked for range. */
static int check_target(const char *arg)
{
	unsigned v;
	if (!*arg || arg[strspn(arg, "0123456789")] != '\0')
		return 0;
	return util_opt_unsigned("bpstat", "pid", arg, 1, INT32_MAX, &v) ? -EINVAL : 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {{"interval", 1, 0, 'i'}, {"count", 1, 0, 'n'},
		{"top", 1, 0, 'N'}, {"json", 0, 0, 'j'}, {"wide", 0, 0, 'w'}, {"list", 0, 0, 'l'},
		{"help", 0, 0, 'h'}, {0, 0, 0, 0}};
	static struct bp_statsfile snap[2];
	double interval = 1.0;
	if (tool_version_asked(argc, argv))
		return tool_version_print("bpstat");
	uint64_t count = 0;
	unsigned top = 3;
	bool json = false, wide = false, list_only = false;
	char path[300];
	int c;
	while ((c = getopt_long(argc, argv, "i:n:N:wlh", lo, NULL)) != -1) {
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
			if (util_opt_unsigned("bpstat", "-N", optarg, 0, BP_SF_TOP_N, &top))
				return 2;
			break;
		case 'j': json = true; break;
		case 'w': wide = true; break;
		case 'l': list_only = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (argc - optind > 1 || (list_only && argc > optind)) {
		usage(stderr);
		return 2;
	}
	if (list_only) {
		static struct bpstat_found found[MAX_FOUND];
		size_t n;
		int rc = bpstat_find(found, MAX_FOUND, &n);
		if (rc && rc != -ENOENT) {
			fprintf(stderr, "bpstat: %s: %s\n", BP_SF_DIR, strerror(-rc));
			return 1;
		}
		list(stdout, found, n < MAX_FOUND ? n : MAX_FOUND);
		return 0;
	}
	const char *target = optind < argc ? argv[optind] : NULL;
	if (target && check_target(target))
		return 2;
	if (resolve(target, path, sizeof(path)))
		return 1;

	struct bpstat_reader *r;
	struct bp_sf_head head;
	struct stat st0, st;
	int rc = bpstat_reader_open(&r, path, &head);
	if (rc == 0 && stat(path, &st0) != 0)
		rc = -errno;
	if (rc == 0)
		rc = bpstat_reader_read(r, &snap[0]);
	if (rc == -EPROTONOSUPPORT) {
		fprintf(stderr, "bpstat: %s: a stats file of layout %u (%u bytes) from pid %d; this "
			"bpstat reads layout %u (%zu bytes): use the bpstat of the bufpool that "
			"process runs\n", path, head.layout, head.size, head.pid, BP_SF_LAYOUT,
			sizeof(struct bp_statsfile));
		return 1;
	}
	if (rc) {
		fprintf(stderr, "bpstat: %s: %s\n", path, rc == -EPROTO ?
			"not a bufpool stats file" : strerror(-rc));
		return 1;
	}
	if (check_alive(path, &snap[0])) {
		bpstat_reader_close(r);
		return 1;
	}
	/* One emitter for every line: JSON lines, or the table. */
	struct emitter e;
	emitter_init(&e, json ? EMITTER_JSON_COMPACT : EMITTER_TABLE, emitter_write_file, stdout);
	uint64_t interval_ns = (uint64_t)(interval * 1e9), next_ns = util_now_ns();
	int out = 0, gone = 0;
	for (uint64_t line = 1; out == 0 && !gone && (!count || line <= count); line++) {
		struct bp_statsfile *cur = &snap[line & 1], *prev = &snap[(line - 1) & 1];
		next_ns += interval_ns;
		struct timespec next = {(time_t)(next_ns / 1000000000u),
					(long)(next_ns % 1000000000u)};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
		/* the publisher removed (or replaced) its file: a clean end */
		if (stat(path, &st) != 0 || st.st_ino != st0.st_ino) {
			fprintf(stderr, "bpstat: publisher %d (%s) stopped publishing\n",
				prev->head.pid, prev->name);
			break;
		}
		if ((rc = bpstat_reader_read(r, cur)) != 0) {
			fprintf(stderr, "bpstat: %s: %s\n", path, strerror(-rc));
			break;
		}
		if ((gone = check_alive(path, cur)) != 0)
			break;
		out = print_line(&e, cur, prev, top, !json && line % 20 == 1, wide);
	}
	bpstat_reader_close(r);
	if (out)
		fprintf(stderr, "bpstat: writing the report: %s\n", strerror(-out));
	return rc || out || gone ? 1 : 0;
}
