/* SPDX-License-Identifier: MIT */
/*
 * test_bpstat.c BPSTAT - bpstat reports exactly what a pool did, and the
 * stats file's seqlock never hands out a torn copy.
 *
 * A tiny publisher: open a pool, create P pages, evict them, reset the
 * stats, then do K gets (the first P miss and read, the rest hit), say
 * ops = K, bp_stats_publish_file, and run `bpstat -n 2 --json` on the
 * file.  Both lines' totals must equal the known counts and (nothing
 * happens meanwhile) their rates be zero.  A second publisher's name
 * holds a quote, a backslash, a newline, a tab and a control character:
 * its line must carry them escaped, on one line.  bpstat must refuse a
 * file of another layout (naming both layouts) and a stale file of a live
 * process (a fabricated one, its heartbeat 60 s old).  No sleeps: the file
 * exists before bpstat starts, and bpstat's own interval paces it.
 *
 * The torn-read check: a writer thread stores images whose every stats
 * word holds its update number, through bp_sf_store, while this thread
 * copies with bp_sf_load_once; every copy accepted must hold one number
 * throughout (a broken seqlock accepts mixes).  A copy started while seq
 * is odd must be refused.
 *
 * test_bpstat --emit BPSTAT: only publish a pool under that name and let
 * `bpstat -n 2 --json` write to stdout (for tests/json_lines.sh: every
 * line must parse); diagnostics go to stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bufpool/bufpool.h"
#include "statsread.h"

#define P 40u
#define K 100u
/* A label JSON must escape: quote, backslash, newline, tab, U+0001. */
#define NASTY_LABEL "q\"b\\s\nn\tc\x01"
#define NASTY_JSON "\"name\":\"q\\\"b\\\\s\\nn\\tc\\u0001\""

static int failures;
#define EXPECT(cond, ...) do { if (!(cond)) { failures++; \
	fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

/* The number after "name": inside the JSON object that starts at obj. */
static long long json_num(const char *line, const char *obj, const char *name)
{
	char key[64];
	const char *o = strstr(line, obj);
	snprintf(key, sizeof(key), "\"%s\":", name);
	const char *p = o ? strstr(o, key) : NULL;
	return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

/* Runs `BPSTAT -n n -i 0.05 --json FILE`, reads up to max lines (and
 * counts any beyond them); returns its exit status. */
static int run_bpstat(const char *bpstat, const char *file, int n, char (*lines)[4096],
		      int max, int *nlines)
{
	char cmd[600], extra[4096];
	snprintf(cmd, sizeof(cmd), "'%s' -n %d -i 0.05 --json '%s'", bpstat, n, file);
	FILE *out = popen(cmd, "r");
	EXPECT(out != NULL, "popen %s", cmd);
	*nlines = 0;
	while (out && *nlines < max && fgets(lines[*nlines], sizeof(lines[0]), out))
		++*nlines;
	while (out && fgets(extra, sizeof(extra), out))
		++*nlines;
	return out ? pclose(out) : -1;
}

/* A fresh pool of 64 frames on /tmp/<name>.<pid>.db, its stats file to be
 * /tmp/<name>.<pid>.stats (db and stats: 128 bytes); 0 or bp_open's error. */
static int open_pool(const char *name, char *db, char *stats, struct bp_pool **pool)
{
	snprintf(db, 128, "/tmp/%s.%ld.db", name, (long)getpid());
	snprintf(stats, 128, "/tmp/%s.%ld.stats", name, (long)getpid());
	struct bp_config cfg;
	bp_config_init(&cfg);
	cfg.path = db;
	cfg.nframes = 64;
	cfg.page_size = 4096;
	cfg.flags = BP_OPEN_CREATE | BP_OPEN_TRUNCATE | BP_OPEN_NO_BGWRITER | BP_OPEN_NO_READAHEAD;
	int rc = bp_open(pool, &cfg);
	EXPECT(rc == 0, "bp_open: %d", rc);
	return rc;
}

/* --emit: a pool published under NASTY_LABEL, bpstat's JSON on stdout. */
static int emit(const char *bpstat)
{
	char db[128], stats[128], cmd[600];
	struct bp_pool *pool;
	if (open_pool("test_bpstat_emit", db, stats, &pool))
		return 1;
	bp_stats_publish_ops(pool, 1);
	int rc = bp_stats_publish_file(pool, NASTY_LABEL, stats);
	EXPECT(rc == 0, "publisher: %d", rc);
	int status = -1;
	if (rc == 0) {
		snprintf(cmd, sizeof(cmd), "'%s' -n 2 -i 0.05 --json '%s'", bpstat, stats);
		fflush(stdout);
		status = system(cmd); /* bpstat writes to our stdout */
		EXPECT(status == 0, "%s: exit status %d", cmd, status);
		EXPECT(bp_stats_unpublish(pool) == 0, "unpublish");
	}
	EXPECT(bp_close(pool) == 0, "close");
	unlink(db);
	return failures ? 1 : 0;
}

/* Fabricate a stats file at path: a complete image from a live process
 * (us) whose heartbeat is age_ns old, of the given layout.  0 or -1. */
static int fabricate(const char *path, uint32_t layout, uint64_t age_ns)
{
	static struct bp_statsfile img;
	memset(&img, 0, sizeof(img));
	img.head = (struct bp_sf_head){.magic = BP_SF_MAGIC, .layout = layout,
		.size = sizeof(img), .pid = (int32_t)getpid()};
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	img.period_ns = 100000000u;
	img.mono_ns = img.start_ns = img.since_ns = now - age_ns;
	img.updates = 1;
	snprintf(img.name, sizeof(img.name), "fabricated");
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	EXPECT(fd >= 0, "create %s", path);
	if (fd < 0)
		return -1;
	int rc = write(fd, &img, sizeof(img)) == (ssize_t)sizeof(img) ? 0 : -1;
	EXPECT(rc == 0, "write %s", path);
	close(fd);
	return rc;
}

/* Runs `BPSTAT -n 1 -i 0.05 FILE`; its exit status, its stderr in err. */
static int run_bpstat_err(const char *bpstat, const char *file, char *err, size_t len)
{
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "'%s' -n 1 -i 0.05 '%s' 2>&1 >/dev/null", bpstat, file);
	FILE *out = popen(cmd, "r");
	EXPECT(out != NULL, "popen %s", cmd);
	size_t n = out ? fread(err, 1, len - 1, out) : 0;
	err[n] = '\0';
	return out ? pclose(out) : -1;
}

/* ---- the seqlock ---- */

#define TORN_UPDATES 20000u
static struct bp_statsfile torn_map; /* the "mapping", shared by two threads */
static _Atomic int torn_done;

static void *torn_writer(void *arg)
{
	static struct bp_statsfile img;
	(void)arg;
	for (uint64_t k = 1; k <= TORN_UPDATES; k++) {
		uint64_t *w = (uint64_t *)(void *)&img.stats;
		for (size_t i = 0; i < sizeof(img.stats) / sizeof(uint64_t); i++)
			w[i] = k;
		img.updates = k;
		bp_sf_store(&torn_map, &img);
		/* room between updates, so that copies also succeed (the
		 * reader never waits on this: a pace, not a synchronisation) */
		for (volatile unsigned spin = 0; spin < 20000; spin++)
			;
	}
	atomic_store(&torn_done, 1);
	return NULL;
}

/* Every copy bp_sf_load_once accepts holds one update throughout. */
static void check_torn_reads(void)
{
	static struct bp_statsfile copy;
	pthread_t t;
	unsigned long accepted = 0, refused = 0, torn = 0;
	/* seq odd: an update in progress; the copy must be refused */
	atomic_store(&torn_map.seq, 1);
	EXPECT(bp_sf_load_once(&torn_map, &copy) == -EAGAIN, "copy accepted with seq odd");
	atomic_store(&torn_map.seq, 0);
	EXPECT(pthread_create(&t, NULL, torn_writer, NULL) == 0, "writer thread");
	while (!atomic_load(&torn_done)) {
		if (bp_sf_load_once(&torn_map, &copy) != 0) {
			refused++;
			continue;
		}
		accepted++;
		const uint64_t *w = (const uint64_t *)(const void *)&copy.stats;
		for (size_t i = 0; i < sizeof(copy.stats) / sizeof(uint64_t); i++)
			if (w[i] != copy.updates) {
				torn++;
				break;
			}
	}
	pthread_join(t, NULL);
	EXPECT(bp_sf_load_once(&torn_map, &copy) == 0 && copy.updates == TORN_UPDATES,
	       "final copy: update %" PRIu64, copy.updates);
	EXPECT(torn == 0, "%lu torn copies accepted (of %lu; %lu refused)", torn, accepted, refused);
	fprintf(stderr, "seqlock: %lu copies accepted, %lu refused, %lu torn\n", accepted, refused, torn);
}

int main(int argc, char **argv)
{
	char db[128], stats[128], lines[2][4096], err[1024];
	struct bp_pool *pool;
	struct bp_frame *f;
	struct bp_stats s;
	bp_stats_init(&s);
	if (argc == 3 && strcmp(argv[1], "--emit") == 0)
		return emit(argv[2]);
	if (argc != 2) {
		fprintf(stderr, "usage: test_bpstat [--emit] BPSTAT\n");
		return 2;
	}
	check_torn_reads();
	if (open_pool("test_bpstat", db, stats, &pool))
		return 1;
	int rc;
	for (unsigned i = 0; i < P; i++) {
		uint64_t pg;
		EXPECT(bp_new_page(pool, &pg, &f) == 0 && pg == i, "new page %u", i);
		bp_release(pool, f);
	}
	EXPECT(bp_flush(pool) == 0, "flush");
	EXPECT(bp_evict_all(pool) == (int)P, "evict all");
	bp_stats_reset(pool);
	for (unsigned i = 0; i < K; i++) {
		EXPECT(bp_get(pool, i % P, 0, &f) == 0, "get %u", i);
		bp_release(pool, f);
	}
	bp_stats_get(pool, &s);
	EXPECT(s.hits == K - P && s.misses == P && s.reads == P, "pool: hits %" PRIu64
	       " misses %" PRIu64 " reads %" PRIu64, s.hits, s.misses, s.reads);

	bp_stats_publish_ops(pool, K);
	EXPECT(bp_stats_publish(NULL, "x") == -EINVAL, "NULL pool");
	EXPECT(bp_stats_publish(pool, "") == -EINVAL, "empty name");
	EXPECT(bp_stats_unpublish(pool) == -ENOENT, "unpublish before publish");
	rc = bp_stats_publish_file(pool, "test", stats);
	EXPECT(rc == 0, "publisher: %d", rc);
	if (rc)
		return 1;
	EXPECT(bp_stats_publish_file(pool, "again", stats) == -EBUSY, "second publisher");
	int n;
	int status = run_bpstat(argv[1], stats, 2, lines, 2, &n);
	EXPECT(status == 0, "bpstat exit status %d", status);
	EXPECT(n == 2, "bpstat printed %d lines", n);
	for (int i = 0; i < n && i < 2; i++) {
		EXPECT(json_num(lines[i], "\"totals\"", "hits") == K - P, "%s", lines[i]);
		EXPECT(json_num(lines[i], "\"totals\"", "misses") == P, "%s", lines[i]);
		EXPECT(json_num(lines[i], "\"totals\"", "reads") == P, "%s", lines[i]);
		EXPECT(json_num(lines[i], "\"totals\"", "ops") == K, "%s", lines[i]);
		EXPECT(json_num(lines[i], "\"pid\"", "pid") == getpid(), "%s", lines[i]);
		EXPECT(strstr(lines[i], "\"name\":\"test\"") != NULL, "%s", lines[i]);
		/* every line covers an interval in which nothing happened */
		EXPECT(json_num(lines[i], "\"rates\"", "hits") == 0, "%s", lines[i]);
		EXPECT(json_num(lines[i], "\"rates\"", "misses") == 0, "%s", lines[i]);
	}
	EXPECT(bp_stats_unpublish(pool) == 0, "unpublish");
	EXPECT(access(stats, F_OK) != 0, "stats file still there");

	/* The name is escaped, and the line stays one line. */
	rc = bp_stats_publish_file(pool, NASTY_LABEL, stats);
	EXPECT(rc == 0, "publisher (name with escapes): %d", rc);
	if (rc == 0) {
		status = run_bpstat(argv[1], stats, 1, lines, 1, &n);
		EXPECT(status == 0, "bpstat exit status %d", status);
		EXPECT(n == 1, "bpstat printed %d lines for one (a raw newline?)", n);
		if (n == 1) {
			EXPECT(strstr(lines[0], NASTY_JSON) != NULL, "want %s in %s", NASTY_JSON,
			       lines[0]);
			size_t len = strlen(lines[0]);
			EXPECT(len >= 2 && strcmp(lines[0] + len - 2, "}\n") == 0, "%s", lines[0]);
		}
	}
	/* bp_close ends the publisher and removes its file */
	EXPECT(bp_close(pool) == 0, "close");
	EXPECT(access(stats, F_OK) != 0, "stats file left by bp_close");
	unlink(db);

	/* the reader refuses what is not a stats file */
	struct bpstat_reader *r;
	EXPECT(bpstat_reader_open(&r, "/dev/null", NULL) == -EPROTO, "reader on /dev/null");
	/* a stats file of another layout: refused, both layouts named */
	if (fabricate(stats, BP_SF_LAYOUT + 1, 0) == 0) {
		status = run_bpstat_err(argv[1], stats, err, sizeof(err));
		EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 1, "layout: status %d", status);
		EXPECT(strstr(err, "layout") != NULL, "layout: %s", err);
	}
	/* a stale file of a live process: said, exit status 1 */
	if (fabricate(stats, BP_SF_LAYOUT, UINT64_C(60000000000)) == 0) {
		status = run_bpstat_err(argv[1], stats, err, sizeof(err));
		EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 1, "stale: status %d", status);
		EXPECT(strstr(err, "stale") != NULL, "stale: %s", err);
	}
	unlink(stats);
	if (failures == 0)
		printf("ok\n");
	return failures ? 1 : 0;
}
