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
 * after -n lines, or when the publisher is gone.  Single-threaded; no state
 * outside main's locals.
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

struct figures {
	uint64_t hits, misses, reads, writes, io_waits, wb_waits, latch_waits, spurious, ops;
};

static struct figures figures_of(const struct bpstat_shared *s)
{
	const struct bp_stats *b = &s->stats;
	return (struct figures){b->hits, b->misses, b->reads, b->writes, b->io_wait.count,
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
		if (prev->hot[i].frame == f->frame && prev->hot[i].pageno == f->pageno)
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

static void print_line(const struct bpstat_shared *cur, const struct bpstat_shared *prev,
		       unsigned top, bool json, bool header)
{
	struct figures tot = figures_of(cur);
	/* a reset since prev: the counters count from since_ns */
	bool reset = !prev || prev->since_ns != cur->since_ns;
	struct figures d = reset ? tot : figures_delta(tot, figures_of(prev));
	uint64_t from = reset ? cur->since_ns : prev->mono_ns;
	double secs = cur->mono_ns > from ? (double)(cur->mono_ns - from) / 1e9 : 0;
	double per = secs >= 1e-3 ? 1.0 / secs : 0; /* no rates over a blink */
	struct hot hot[BPSTAT_TOP_N];
	unsigned nhot = 0;
	for (uint32_t i = 0; i < cur->nhot && i < BPSTAT_TOP_N; i++) {
		uint64_t ns = hot_delta(&cur->hot[i], reset ? NULL : prev);
		if (ns)
			hot[nhot++] = (struct hot){&cur->hot[i], ns};
	}
	qsort(hot, nhot, sizeof(hot[0]), hot_cmp);
	if (nhot > top)
		nhot = top;
	double hit = d.hits + d.misses ? 100.0 * (double)d.hits / (double)(d.hits + d.misses) : 0;
	if (json) {
		printf("{\"pid\":%d,\"label\":\"%s\",\"interval_s\":%.3f,"
		       "\"totals\":{\"hits\":%" PRIu64 ",\"misses\":%" PRIu64 ",\"reads\":%" PRIu64
		       ",\"writes\":%" PRIu64 ",\"io_waits\":%" PRIu64 ",\"writeback_waits\":%" PRIu64
		       ",\"latch_waits\":%" PRIu64 ",\"spurious_wakeups\":%" PRIu64 ",\"ops\":%" PRIu64
		       "},\"rates\":{\"hits\":%.1f,\"misses\":%.1f,\"reads\":%.1f,\"writes\":%.1f,"
		       "\"io_waits\":%.1f,\"writeback_waits\":%.1f,\"latch_waits\":%.1f,"
		       "\"spurious_wakeups\":%.1f,\"ops\":%.1f},\"hit_ratio\":%.4f,\"hot\":[",
		       cur->pid, cur->label, secs, tot.hits, tot.misses, tot.reads, tot.writes,
		       tot.io_waits, tot.wb_waits, tot.latch_waits, tot.spurious, tot.ops,
		       d.hits * per, d.misses * per, d.reads * per, d.writes * per, d.io_waits * per,
		       d.wb_waits * per, d.latch_waits * per, d.spurious * per, d.ops * per, hit / 100);
		for (unsigned i = 0; i < nhot; i++)
			printf("%s{\"frame\":%u,\"page\":%" PRIu64 ",\"wait_ns\":%" PRIu64 "}",
			       i ? "," : "", hot[i].f->frame, hot[i].f->pageno, hot[i].ns);
		puts("]}");
	} else {
		if (header)
			printf("%9s %9s %8s %8s %8s %8s %8s %7s %6s %9s  %s\n", "hits/s", "misses/s",
			       "reads/s", "writes/s", "iowait/s", "wbwait/s", "latchw/s", "spur/s",
			       "hit%", "ops/s", "hottest frames: frame:page wait-ms");
		printf("%9.0f %9.0f %8.0f %8.0f %8.0f %8.0f %8.0f %7.0f %6.1f %9.0f ", d.hits * per,
		       d.misses * per, d.reads * per, d.writes * per, d.io_waits * per,
		       d.wb_waits * per, d.latch_waits * per, d.spurious * per, hit, d.ops * per);
		for (unsigned i = 0; i < nhot; i++)
			printf(" %u:%" PRIu64 " %.2f", hot[i].f->frame, hot[i].f->pageno,
			       (double)hot[i].ns / 1e6);
		putchar('\n');
	}
	fflush(stdout);
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

int main(int argc, char **argv)
{
	static const struct option lo[] = {{"interval", 1, 0, 'i'}, {"count", 1, 0, 'n'},
		{"top", 1, 0, 'N'}, {"json", 0, 0, 'j'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
	double interval = 1.0;
	long count = 0, top = 3;
	bool json = false;
	char path[300], *end;
	int c;
	while ((c = getopt_long(argc, argv, "i:n:N:h", lo, NULL)) != -1) {
		switch (c) {
		case 'i':
			interval = strtod(optarg, &end);
			if (*end || end == optarg || !(interval >= 0.001 && interval <= 86400)) {
				fprintf(stderr, "bpstat: -i wants seconds in [0.001, 86400], got '%s'\n", optarg);
				return 2;
			}
			break;
		case 'n':
			count = strtol(optarg, &end, 10);
			if (*end || end == optarg || count < 1) {
				fprintf(stderr, "bpstat: -n wants a count >= 1, got '%s'\n", optarg);
				return 2;
			}
			break;
		case 'N':
			top = strtol(optarg, &end, 10);
			if (*end || end == optarg || top < 0 || top > (long)BPSTAT_TOP_N) {
				fprintf(stderr, "bpstat: -N wants 0..%u, got '%s'\n", BPSTAT_TOP_N, optarg);
				return 2;
			}
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
		long pid = strtol(a, &end, 10);
		if (*a && !*end && pid > 0)
			bpstat_default_path((pid_t)pid, path, sizeof(path));
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
	print_line(&snap[0], NULL, (unsigned)top, json, true);
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (long line = 1; !count || line < count; line++) {
		struct bpstat_shared *cur = &snap[line & 1], *prev = &snap[(line - 1) & 1];
		uint64_t ns = (uint64_t)next.tv_nsec + (uint64_t)(interval * 1e9);
		next.tv_sec += (time_t)(ns / 1000000000u);
		next.tv_nsec = (long)(ns % 1000000000u);
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
		print_line(cur, prev, (unsigned)top, json, !json && line % 20 == 0);
	}
	bpstat_reader_close(r);
	return rc ? 1 : 0;
}
