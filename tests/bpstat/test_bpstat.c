/*
 * test_bpstat.c BPSTAT - bpstat reports exactly what a pool did.
 *
 * A tiny publisher: open a pool, create P pages, evict them, reset the
 * stats, then do K gets (the first P miss and read, the rest hit), publish
 * one snapshot with ops = K, and run `bpstat -n 2 --json` on the file.  The
 * first line's totals must equal the known counts, the second line (nothing
 * happened in between) must show zero rates.  No sleeps: the file exists
 * before bpstat starts, and bpstat's own interval paces it.
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

int main(int argc, char **argv)
{
	char db[128], stats[128], cmd[600], lines[2][4096];
	struct bp_pool *pool;
	struct bp_frame *f;
	struct bp_stats s;
	if (argc != 2) {
		fprintf(stderr, "usage: test_bpstat BPSTAT\n");
		return 2;
	}
	snprintf(db, sizeof(db), "/tmp/test_bpstat.%ld.db", (long)getpid());
	snprintf(stats, sizeof(stats), "/tmp/test_bpstat.%ld.stats", (long)getpid());
	struct bp_config cfg = {.path = db, .nframes = 64, .page_size = 4096,
		.flags = BP_OPEN_CREATE | BP_OPEN_TRUNCATE | BP_OPEN_NO_BGWRITER | BP_OPEN_NO_READAHEAD};
	int rc = bp_open(&pool, &cfg);
	EXPECT(rc == 0, "bp_open: %d", rc);
	if (rc)
		return 1;
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
	snprintf(cmd, sizeof(cmd), "'%s' -n 2 -i 0.05 --json '%s'", argv[1], stats);
	FILE *out = popen(cmd, "r");
	EXPECT(out != NULL, "popen");
	int n = 0;
	while (out && n < 2 && fgets(lines[n], sizeof(lines[n]), out))
		n++;
	int status = out ? pclose(out) : -1;
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
	EXPECT(bp_close(pool) == 0, "close");
	unlink(db);
	/* the reader refuses what is not a stats file */
	struct bpstat_reader *r;
	EXPECT(bpstat_reader_open(&r, "/dev/null") == -EPROTO, "reader on /dev/null");
	if (failures == 0)
		printf("ok\n");
	return failures ? 1 : 0;
}
