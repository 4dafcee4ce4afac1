/* SPDX-License-Identifier: MIT */
/*
 * test_layouts.c - bufpool's extensible structs (docs/abi.md, "Extensible
 * structs") from the side of programs built against other layouts:
 *
 *   old     struct old_bp_config / old_bp_stats (old_layouts.h: the first
 *           published layouts, shorter than this header's), each in a
 *           buffer whose bytes past the struct are a 0xa5 canary:
 *           bp_open opens a pool with it and reads nothing past it (the
 *           canary, read as read_path, would be refused: -EINVAL), and
 *           bp_stats_get fills it, leaves the canary intact and says how
 *           much it filled; bp_stats_print prints it.
 *   future  struct bp_config / bp_stats followed by one field this library
 *           does not know: with that field 0, accepted (bp_stats_get
 *           zeroes it and reports its own size); nonzero, -E2BIG.
 *   bad     size 0 (the 0.1 way: zero-initialised, no init call) and a
 *           size one byte short of the first layout: -EINVAL, and
 *           bp_stats_get writes nothing.
 *
 * Each check fails against a library that ignores the size field: it
 * reads the canary as read_path, writes its whole struct over the canary,
 * and accepts every size.  The buffers are malloc'd at their exact sizes,
 * so an ASan build also catches any access past them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bufpool/bufpool.h>

#include "old_layouts.h"

/* The copies in old_layouts.h are the header's prefix, field for field. */
_Static_assert(sizeof(struct old_bp_config) == BP_CONFIG_SIZE_VER0,
	       "old_bp_config is not BP_CONFIG_SIZE_VER0 bytes");
_Static_assert(offsetof(struct old_bp_config, io_trace_arg) ==
	       offsetof(struct bp_config, io_trace_arg), "bp_config's prefix moved");
_Static_assert(offsetof(struct old_bp_config, fwait) == offsetof(struct bp_config, fwait),
	       "bp_config's prefix moved");
_Static_assert(sizeof(struct old_bp_stats) == BP_STATS_SIZE_VER0,
	       "old_bp_stats is not BP_STATS_SIZE_VER0 bytes");
_Static_assert(offsetof(struct old_bp_stats, fwait) == offsetof(struct bp_stats, fwait),
	       "bp_stats' prefix moved");
_Static_assert(sizeof(struct old_bp_config) < sizeof(struct bp_config) &&
	       sizeof(struct old_bp_stats) < sizeof(struct bp_stats),
	       "the old layouts must be shorter, or this test shows nothing");

#define CANARY 0xa5
#define CANARY_BYTES 512 /* more than the whole bp_config and bp_stats tails */

/* A newer program's structs: this library's, then one field it lacks. */
struct future_bp_config {
	struct bp_config known;
	uint64_t new_field;
};
struct future_bp_stats {
	struct bp_stats known;
	uint64_t new_field;
};

static int failures;
static char dir[] = "/tmp/fb-abi.XXXXXX";
static char path[64];

#define EXPECT(cond, ...)                                                       \
	do {                                                                    \
		if (cond) {                                                     \
			printf("ok: %s\n", #cond);                              \
		} else {                                                        \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                           \
			fputc('\n', stderr);                                    \
			failures++;                                             \
		}                                                               \
	} while (0)

/* n bytes of struct, then CANARY_BYTES of canary, in one exact malloc. */
static unsigned char *with_canary(size_t n)
{
	unsigned char *b = malloc(n + CANARY_BYTES);
	if (!b) {
		perror("malloc");
		exit(99);
	}
	memset(b, 0, n);
	memset(b + n, CANARY, CANARY_BYTES);
	return b;
}

static size_t canary_intact(const unsigned char *b, size_t n)
{
	size_t ok = 0;
	while (ok < CANARY_BYTES && b[n + ok] == CANARY)
		ok++;
	return ok;
}

static bool all_bytes(const void *p, size_t n, unsigned char v)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i] != v)
			return false;
	return true;
}

static int discard(void *arg, const char *text)
{
	(void)arg;
	(void)text;
	return 0;
}

static void close_pool(struct bp_pool *pool)
{
	if (pool && bp_close(pool) != 0)
		bp_discard(pool);
}

/* A program built against the old layouts. */
static void old_layouts(void)
{
	unsigned char *cb = with_canary(sizeof(struct old_bp_config));
	struct old_bp_config *cfg = (struct old_bp_config *)cb;
	cfg->size = sizeof *cfg;
	cfg->path = path;
	cfg->flags = BP_OPEN_CREATE | BP_OPEN_TRUNCATE | BP_OPEN_NO_BGWRITER;
	cfg->page_size = 8192;
	cfg->nframes = 16;
	struct bp_pool *pool = NULL;
	int r = bp_open(&pool, (const struct bp_config *)cfg);
	EXPECT(r == 0, "bp_open with the old config = %d (read_path read from past its size?)", r);
	EXPECT(canary_intact(cb, sizeof *cfg) == CANARY_BYTES, "bp_open wrote past the old config");
	free(cb);
	if (r != 0)
		return;

	unsigned char *sb = with_canary(sizeof(struct old_bp_stats));
	struct old_bp_stats *st = (struct old_bp_stats *)sb;
	st->size = sizeof *st;
	r = bp_stats_get(pool, (struct bp_stats *)st);
	EXPECT(r == 0, "bp_stats_get into the old stats = %d", r);
	size_t intact = canary_intact(sb, sizeof *st);
	EXPECT(intact == CANARY_BYTES,
	       "bp_stats_get wrote past the old stats: byte %zu after it changed", intact);
	EXPECT(st->size == sizeof *st, "size reads %zu, not the %zu bytes filled", st->size,
	       sizeof *st);
	EXPECT(st->page_size == 8192 && st->nframes == 16,
	       "the old config's fields not honoured: page_size %u, nframes %u", st->page_size,
	       st->nframes);
	EXPECT(st->io_threads == BP_IO_THREADS_DEFAULT, "io_threads %u, not the default",
	       st->io_threads);
	r = bp_stats_print((const struct bp_stats *)st, discard, NULL, BP_STATS_JSON);
	EXPECT(r == 0, "bp_stats_print of the old stats = %d", r);
	EXPECT(canary_intact(sb, sizeof *st) == CANARY_BYTES, "bp_stats_print wrote past it");
	free(sb);
	close_pool(pool);
}

/* A program built against a newer layout. */
static void future_layouts(void)
{
	struct future_bp_config *cfg = malloc(sizeof *cfg);
	if (!cfg)
		exit(99);
	bp_config_init(&cfg->known);
	cfg->new_field = 0;
	cfg->known.size = sizeof *cfg;
	cfg->known.path = path;
	cfg->known.flags = BP_OPEN_CREATE | BP_OPEN_TRUNCATE | BP_OPEN_NO_BGWRITER;
	cfg->known.nframes = 8;
	struct bp_pool *pool = NULL;
	int r = bp_open(&pool, &cfg->known);
	EXPECT(r == 0, "bp_open with a longer config, its unknown field 0 = %d", r);
	cfg->new_field = 1;
	struct bp_pool *refused = NULL;
	r = bp_open(&refused, &cfg->known);
	EXPECT(r == -E2BIG, "bp_open with a longer config, its unknown field set = %d", r);
	EXPECT(refused == NULL, "*out set by a refused bp_open");
	free(cfg);
	if (!pool)
		return;

	struct future_bp_stats *st = malloc(sizeof *st);
	if (!st)
		exit(99);
	memset(st, 0xff, sizeof *st);
	st->known.size = sizeof *st;
	r = bp_stats_get(pool, &st->known);
	EXPECT(r == 0, "bp_stats_get into a longer struct = %d", r);
	EXPECT(st->new_field == 0, "the unknown field was not zeroed: %#llx",
	       (unsigned long long)st->new_field);
	EXPECT(st->known.size == sizeof(struct bp_stats), "size reads %zu, not the %zu filled",
	       st->known.size, sizeof(struct bp_stats));
	EXPECT(st->known.nframes == 8, "nframes %u", st->known.nframes);
	st->known.size = sizeof *st;
	st->new_field = 0;
	r = bp_stats_print(&st->known, discard, NULL, BP_STATS_TABLE);
	EXPECT(r == 0, "bp_stats_print of a longer struct, its unknown field 0 = %d", r);
	st->new_field = 7;
	r = bp_stats_print(&st->known, discard, NULL, BP_STATS_TABLE);
	EXPECT(r == -E2BIG, "bp_stats_print of a longer struct, its unknown field set = %d", r);
	free(st);
	close_pool(pool);
}

/* Sizes below the first layout: 0 (no init call) and one byte short. */
static void bad_sizes(void)
{
	const size_t cfg_sizes[] = { 0, BP_CONFIG_SIZE_VER0 - 1 };
	for (size_t i = 0; i < sizeof cfg_sizes / sizeof cfg_sizes[0]; i++) {
		struct bp_config cfg;
		memset(&cfg, 0, sizeof cfg); /* the 0.1 way: no bp_config_init */
		cfg.size = cfg_sizes[i];
		cfg.path = path;
		cfg.flags = BP_OPEN_CREATE | BP_OPEN_NO_BGWRITER;
		struct bp_pool *pool = NULL;
		int r = bp_open(&pool, &cfg);
		EXPECT(r == -EINVAL, "bp_open with size %zu = %d", cfg_sizes[i], r);
		close_pool(pool);
	}

	struct bp_config cfg;
	bp_config_init(&cfg);
	cfg.path = path;
	cfg.flags = BP_OPEN_CREATE | BP_OPEN_NO_BGWRITER;
	cfg.nframes = 8;
	struct bp_pool *pool = NULL;
	int r = bp_open(&pool, &cfg);
	EXPECT(r == 0, "bp_open after bp_config_init = %d", r);
	if (!pool)
		return;
	const size_t stats_sizes[] = { 0, BP_STATS_SIZE_VER0 - 1 };
	for (size_t i = 0; i < sizeof stats_sizes / sizeof stats_sizes[0]; i++) {
		struct bp_stats st;
		memset(&st, CANARY, sizeof st);
		st.size = stats_sizes[i];
		r = bp_stats_get(pool, &st);
		EXPECT(r == -EINVAL, "bp_stats_get with size %zu = %d", stats_sizes[i], r);
		EXPECT(st.size == stats_sizes[i] &&
		       all_bytes((const unsigned char *)&st + sizeof st.size,
				 sizeof st - sizeof st.size, CANARY),
		       "bp_stats_get with size %zu wrote into the struct", stats_sizes[i]);
		r = bp_stats_print(&st, discard, NULL, BP_STATS_TABLE);
		EXPECT(r == -EINVAL, "bp_stats_print with size %zu = %d", stats_sizes[i], r);
	}
	close_pool(pool);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 99;
	}
	snprintf(path, sizeof path, "%s/pages", dir);
	old_layouts();
	future_layouts();
	bad_sizes();
	unlink(path);
	rmdir(dir);
	if (failures)
		fprintf(stderr, "%d check(s) failed\n", failures);
	return failures ? 1 : 0;
}
