/* SPDX-License-Identifier: MIT */
/*
 * test_bpstat.c BPSTAT - bpstat reports exactly what a pool did.
 *
 * A tiny publisher: open a pool, create P pages, evict them, reset the
 * stats, then do K gets (the first P miss and read, the rest hit), publish
 * one snapshot with ops = K, and run `bpstat -n 2 --json` on the file.  The
 * first line's totals must equal the known counts, the second line (nothing
 * happened in between) must show zero rates.  A second publisher's label
 * holds a quote, a backslash, a newline, a tab and a control character:
 * its line must carry them escaped, on one line.  No sleeps: the file
 * exists before bpstat starts, and bpstat's own interval paces it.
 *
 * test_bpstat --emit BPSTAT: only publish a pool under that label and let
 * `bpstat -n 2 --json` write to stdout (for tests/json_lines.sh: every
 * line must parse); diagnostics go to stderr.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bufpool/bufpool.h"
#include "statsfile.h"

#define P 40u
#define K 100u
/* A label JSON must escape: quote, backslash, newline, tab, U+0001. */
#define NASTY_LABEL "q\"b\\s\nn\tc\x01"
#define NASTY_JSON "\"label\":\"q\\\"b\\\\s\\nn\\tc\\u0001\""

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
	struct bpstat_publisher *pub;
	if (open_pool("test_bpstat_emit", db, stats, &pool))
		return 1;
	int rc = bpstat_publisher_create(&pub, stats, NASTY_LABEL, pool);
	EXPECT(rc == 0, "publisher: %d", rc);
	int status = -1;
	if (rc == 0) {
		bpstat_publish(pub, 1);
		snprintf(cmd, sizeof(cmd), "'%s' -n 2 -i 0.05 --json '%s'", bpstat, stats);
		fflush(stdout);
		status = system(cmd); /* bpstat writes to our stdout */
		EXPECT(status == 0, "%s: exit status %d", cmd, status);
		bpstat_publisher_destroy(pub);
	}
	EXPECT(bp_close(pool) == 0, "close");
	unlink(db);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	char db[128], stats[128], lines[2][4096];
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

	struct bpstat_publisher *pub;
	rc = bpstat_publisher_create(&pub, stats, "test", pool);
	EXPECT(rc == 0, "publisher: %d", rc);
	if (rc)
		return 1;
	bpstat_publish(pub, K);
	int n;
	int status = run_bpstat(argv[1], stats, 2, lines, 2, &n);
	EXPECT(status == 0, "bpstat exit status %d", status);
	EXPECT(n == 2, "bpstat printed %d lines", n);
	if (n == 2) {
		EXPECT(json_num(lines[0], "\"totals\"", "hits") == K - P, "%s", lines[0]);
		EXPECT(json_num(lines[0], "\"totals\"", "misses") == P, "%s", lines[0]);
		EXPECT(json_num(lines[0], "\"totals\"", "reads") == P, "%s", lines[0]);
		EXPECT(json_num(lines[0], "\"totals\"", "ops") == K, "%s", lines[0]);
		EXPECT(json_num(lines[0], "\"pid\"", "pid") == getpid(), "%s", lines[0]);
		EXPECT(strstr(lines[0], "\"label\":\"test\"") != NULL, "%s", lines[0]);
		/* the second line covers an interval in which nothing happened */
		EXPECT(json_num(lines[1], "\"totals\"", "hits") == K - P, "%s", lines[1]);
		EXPECT(json_num(lines[1], "\"rates\"", "hits") == 0, "%s", lines[1]);
		EXPECT(json_num(lines[1], "\"rates\"", "misses") == 0, "%s", lines[1]);
	}
	bpstat_publisher_destroy(pub);
	EXPECT(access(stats, F_OK) != 0, "stats file still there");

	/* The label is escaped, and the line stays one line. */
	rc = bpstat_publisher_create(&pub, stats, NASTY_LABEL, pool);
	EXPECT(rc == 0, "publisher (label with escapes): %d", rc);
	if (rc == 0) {
		bpstat_publish(pub, K);
		status = run_bpstat(argv[1], stats, 1, lines, 1, &n);
		EXPECT(status == 0, "bpstat exit status %d", status);
		EXPECT(n == 1, "bpstat printed %d lines for one (a raw newline?)", n);
		if (n == 1) {
			EXPECT(strstr(lines[0], NASTY_JSON) != NULL, "want %s in %s", NASTY_JSON,
			       lines[0]);
			size_t len = strlen(lines[0]);
			EXPECT(len >= 2 && strcmp(lines[0] + len - 2, "}\n") == 0, "%s", lines[0]);
		}
		bpstat_publisher_destroy(pub);
	}
	EXPECT(bp_close(pool) == 0, "close");
	unlink(db);
	/* the reader refuses what is not a stats file */
	struct bpstat_reader *r;
	EXPECT(bpstat_reader_open(&r, "/dev/null") == -EPROTO, "reader on /dev/null");
	if (failures == 0)
		printf("ok\n");
	return failures ? 1 : 0;
}
