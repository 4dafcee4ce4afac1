/* SPDX-License-Identifier: MIT */
/*
 * stress_bufpool.c - seeded, time-bounded stress of the buffer pool: no
 * acknowledged write is ever lost, in the pool or in the file.
 *
 * Design note
 * -----------
 * A run is a sequence of rounds (ROUND_SECONDS each, the last one takes
 * what is left of --seconds).  Each round opens a fresh file in a mkdtemp
 * directory under /tmp with a small pool (8-16 frames, 512- or 4096-byte
 * pages, two I/O threads with a simulated latency of 50-200 us, background
 * writer every 2-10 ms, readahead on; drawn from the seed), so misses,
 * creations and evictions keep every frame busy and claims wait on I/O.
 * The fwait policy of the pool's table is cycled by round (--policy fixes
 * it).  Even rounds work on the pool's file 0, odd ones on a second file
 * opened with bp_file_open (closed with bp_file_close before bp_close), so
 * the tags with a file id meet every race as well.  T workers (24; 16 under TSan) run random operations:
 *
 *   writer     bp_get(p) of a page below bp_page_count(), latch exclusive,
 *              check, write version v+1, mark dirty, unlatch, release;
 *   reader     the same with a shared latch, check only; or, half the
 *              time, an optimistic read (bp_file_read_begin: no pin, no
 *              latch), its copy of the page checked only if the read
 *              ends valid: it must be one whole version of page p
 *              (pattern(p, v) for the v in its word 1, never torn nor
 *              another page's) and no later than the one acknowledged
 *              (expected[p], read after the end: the writer stores it
 *              before the unlatch whose release the end acquired);
 *   creator    bp_new_page: the page returned must hold what was last
 *              acknowledged on it (nothing: zeros) - checked under the
 *              exclusive latch - then write version v+1 as a writer;
 *   create-at  bp_get(bp_page_count() + 0..2, BP_GET_CREATE) (the pages
 *              skipped become holes), then as a writer;
 *   evictor    bp_evict_page(p); one in 16 is a bp_flush instead.
 * Pages are picked half uniformly, half among the newest four (the page
 * just appended is where creation races with other access).  Creation
 * stops at PAGE_LIMIT pages.
 *
 * The record: expected[p] is the last version acknowledged on page p
 * (0 = never written), stored by the writer while it still holds the
 * exclusive latch, so any thread that latches p sees a version equal to
 * expected[p].  Page content is a pattern of (p, version): word 0 = p,
 * word 1 = version, then a hash of (p, version, i); version 0 is all
 * zeros.  Checked:
 *   - under every latch: the page holds pattern(p, expected[p]).  A
 *     mismatch is a lost or torn write and fails with the page, the
 *     version expected and what it holds ("zeros", "page P version V", or
 *     how many words differ);
 *   - bp_new_page never returns a page below a page count this thread has
 *     seen, nor one with acknowledged data on it;
 *   - bp_page_count() never goes down (per thread: coherent loads of one
 *     atomic never go back), and bp_get(p) of a page below a count seen
 *     gives no -ENXIO;
 *   - bp_get / bp_new_page fail only with -EBUSY (every frame pinned),
 *     bp_evict_page only with -ENOENT / -EBUSY; every other call with
 *     nothing: any other result fails;
 *   - every call returns within --stall-seconds (the main thread is the
 *     watchdog; a stall dumps the pool's parked waiters);
 *   - at the end of a round: bp_close returns 0; the file reopened holds
 *     no more pages than bp_page_count() said at close, every page p in it
 *     reads back as pattern(p, expected[p]) and no page past its end was
 *     ever written: acknowledged data survives close.
 *
 * The races this is after need claims that wait: more workers than frames,
 * so every frame is often pinned, being read or written.  With fewer
 * workers than frames (--threads 4) it rarely finds anything.
 *
 * A failure prints "FAIL: <what>" with the page and versions, e.g.
 *   FAIL: thread 19 (creator, after bp_new_page): page 8 holds zeros, but
 *   version 1 was acknowledged on it: LOST WRITE (page count 17)
 * (bp_new_page handed out as new a page another thread had written), the
 * reproduction line (seed and options), the round's configuration, each
 * worker's call in progress and the pool's parked waiters, then exits 1,
 * removing its directory.  The seed fixes each worker's operation stream
 * and each round's configuration, not the thread interleaving: rerun with
 * --seed S (or FWAIT_STRESS_SEED=S) and the same --threads; a race may
 * take a few runs to show again.  --soak: rounds until --seconds (0:
 * forever).
 *
 * Sharing: expected[] and the pool are shared through atomics and the
 * page latches; each worker's tallies are its own until the join.
 */
#include "stress_util.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bufpool/bufpool.h"

#define MAX_THREADS 256
#define PAGE_LIMIT 2048u
/* create-at may go 2 past the count, and every worker may be creating
 * when the limit is reached: room for all of them */
#define EXPECTED_SLOTS (PAGE_LIMIT + 4u * MAX_THREADS)
#define ROUND_SECONDS 5.0


enum op_kind {
	OP_NONE, OP_GET, OP_GET_CREATE, OP_NEW_PAGE, OP_LATCH_S, OP_LATCH_X, OP_MARK_DIRTY,
	OP_EVICT, OP_FLUSH
};
static const char *const op_names[] = {
	"none", "bp_get", "bp_get(BP_GET_CREATE)", "bp_new_page", "bp_latch(SHARED)",
	"bp_latch(EXCLUSIVE)", "bp_mark_dirty", "bp_evict_page", "bp_flush"
};

struct round_cfg {
	uint32_t page_size, nframes, io_latency_us, writer_interval_ms;
	int policy; /* 0..TC_NVARIANTS-1 */
};

struct round {
	struct bp_pool *pool;
	/* The file the workers use: the pool's file 0 in even rounds, a
	 * second file (bp_file_open) in odd ones, so pages with a file id in
	 * their tag go through every race too; path is its file. */
	struct bp_file *file;
	const char *path;
	struct round_cfg cfg;
	_Atomic bool stop;
	_Atomic uint64_t expected[EXPECTED_SLOTS];
};

struct worker {
	pthread_t tid;
	int id;
	uint64_t rng;
	struct round *r;
	uint64_t seen_count;     /* largest bp_page_count() this worker saw */
	unsigned char *scratch;  /* one page, for describing a mismatch */
	struct st_watch watch;   /* read by the watchdog */
	_Atomic bool done;
	/* own tallies, read after the join */
	uint64_t ops, writes, reads, creates, creates_at, evictions, flushes, busy;
	uint64_t optimistic; /* optimistic reads that ended valid (in reads too) */
};

static struct worker *workers;
static unsigned nworkers;
static char dir_path[64];
static char file_path[96];
static char file2_path[96];
static char rerun_args[96];
static uint64_t run_start_ns;

/* ---- page contents ------------------------------------------------------ */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

static uint64_t pattern_word(uint64_t p, uint64_t v, uint32_t i)
{
	if (v == 0)
		return 0;
	if (i == 0)
		return p;
	if (i == 1)
		return v;
	return mix64(p * UINT64_C(0x9e3779b97f4a7c15) ^ v * UINT64_C(0xd6e8feb86659fd93) ^ i);
}

static void fill(void *page, uint32_t size, uint64_t p, uint64_t v)
{
	uint64_t *w = page;
	for (uint32_t i = 0; i < size / 8; i++)
		w[i] = pattern_word(p, v, i);
}

/* Words of page that differ from pattern(p, v); *first = the first one. */
static uint32_t differing(const void *page, uint32_t size, uint64_t p, uint64_t v,
			  uint32_t *first)
{
	const uint64_t *w = page;
	uint32_t n = 0;
	for (uint32_t i = 0; i < size / 8; i++)
		if (w[i] != pattern_word(p, v, i) && n++ == 0)
			*first = i;
	return n;
}

/* What a page holds, in words: "zeros", "page P version V", ... */
static void describe(char *buf, size_t len, const void *page, uint32_t size)
{
	const uint64_t *w = page;
	uint32_t first = 0, nz = differing(page, size, 0, 0, &first);
	if (nz == 0) {
		snprintf(buf, len, "zeros");
		return;
	}
	uint32_t nd = differing(page, size, w[0], w[1], &first);
	if (nd == 0)
		snprintf(buf, len, "page %" PRIu64 " version %" PRIu64, w[0], w[1]);
	else if (nd < size / 8 - 2)
		snprintf(buf, len, "page %" PRIu64 " version %" PRIu64 " with %u of %u words "
			 "differing (first: word %u), %u non-zero words", w[0], w[1], nd,
			 size / 8, first, nz);
	else
		snprintf(buf, len, "unrecognised data (%u of %u words non-zero)", nz, size / 8);
}

/* ---- checks -------------------------------------------------------------- */

static uint64_t page_count(struct worker *w)
{
	uint64_t c = bp_file_page_count(w->r->file);
	if (c < w->seen_count)
		st_fail("thread %d: bp_page_count() = %" PRIu64 " after it was %" PRIu64
			": the page count went down", w->id, c, w->seen_count);
	w->seen_count = c;
	return c;
}

/* The last step of a call that returned page p: it is now below the count. */
static void saw_page(struct worker *w, uint64_t p)
{
	if (p >= EXPECTED_SLOTS)
		st_fail("thread %d: page %" PRIu64 " is past the %u pages this test "
			"can create", w->id, p, EXPECTED_SLOTS);
	if (p + 1 > w->seen_count)
		w->seen_count = p + 1;
}

/* With the latch held: the page holds what was acknowledged last. */
static uint64_t check_page(struct worker *w, struct bp_frame *f, uint64_t p, const char *who)
{
	struct round *r = w->r;
	uint32_t size = r->cfg.page_size;
	/* relaxed: written under the exclusive latch we (or our shared
	 * latch's admission) acquired after its release */
	uint64_t v = atomic_load_explicit(&r->expected[p], memory_order_relaxed);
	const void *data = bp_data(f);
	uint32_t first = 0;

	if (bp_frame_pageno(f) != p)
		st_fail("thread %d (%s): asked for page %" PRIu64 ", got the frame of page %"
			PRIu64, w->id, who, p, bp_frame_pageno(f));
	if (differing(data, size, p, v, &first) == 0)
		return v;
	/* copy first: a torn page may still be changing under a broken latch */
	memcpy(w->scratch, data, size);
	char what[160];
	describe(what, sizeof(what), w->scratch, size);
	if (v > 0 && differing(w->scratch, size, 0, 0, &first) == 0)
		st_fail("thread %d (%s): page %" PRIu64 " holds zeros, but version %" PRIu64
			" was acknowledged on it: LOST WRITE (page count %" PRIu64 ")", w->id, who,
			p, v, bp_file_page_count(r->file));
	st_fail("thread %d (%s): page %" PRIu64 " holds %s, expected %s%" PRIu64
		": lost or torn write (page count %" PRIu64 ")", w->id, who, p, what,
		v ? "version " : "zeros, version ", v, bp_file_page_count(r->file));
}

static void latch(struct worker *w, struct bp_frame *f, enum bp_latch_mode m)
{
	st_watch_begin(&w->watch, m == BP_LATCH_SHARED ? OP_LATCH_S : OP_LATCH_X, NULL);
	int rc = bp_latch(w->r->pool, f, m);
	st_watch_end(&w->watch);
	if (rc != 0)
		st_fail("thread %d: bp_latch(page %" PRIu64 ", %s) = %d", w->id, bp_frame_pageno(f),
			m == BP_LATCH_SHARED ? "shared" : "exclusive", rc);
}

static void unlatch_release(struct worker *w, struct bp_frame *f, enum bp_latch_mode m)
{
	int rc = bp_unlatch(w->r->pool, f, m);
	if (rc != 0)
		st_fail("thread %d: bp_unlatch(page %" PRIu64 ") = %d", w->id, bp_frame_pageno(f), rc);
	rc = bp_release(w->r->pool, f);
	if (rc != 0)
		st_fail("thread %d: bp_release(page %" PRIu64 ") = %d", w->id, bp_frame_pageno(f), rc);
}

/* Under the exclusive latch: check, write the next version, acknowledge. */
static void write_next(struct worker *w, struct bp_frame *f, uint64_t p, const char *who)
{
	struct round *r = w->r;
	uint64_t v = check_page(w, f, p, who);
	fill(bp_data(f), r->cfg.page_size, p, v + 1);
	atomic_store_explicit(&r->expected[p], v + 1, memory_order_relaxed);
	st_watch_begin(&w->watch, OP_MARK_DIRTY, NULL);
	int rc = bp_mark_dirty(r->pool, f);
	st_watch_end(&w->watch);
	if (rc != 0)
		st_fail("thread %d: bp_mark_dirty(page %" PRIu64 ") = %d", w->id, p, rc);
	w->writes++;
}

/* ---- operations ----------------------------------------------------------- */

/* Half uniform below count, half among the newest four pages. */
static uint64_t pick_page(struct worker *w, uint64_t count)
{
	if (count <= 4 || st_below(&w->rng, 2) == 0)
		return count <= 1 ? 0 : (uint64_t)st_below(&w->rng, (uint32_t)count);
	return count - 1 - st_below(&w->rng, 4);
}

/* bp_get(p) of a page below a count seen.  NULL on -EBUSY. */
static struct bp_frame *get_existing(struct worker *w, uint64_t p)
{
	struct bp_frame *f = NULL;
	st_watch_begin(&w->watch, OP_GET, NULL);
	int rc = bp_file_get(w->r->file, p, 0, &f);
	st_watch_end(&w->watch);
	if (rc == -EBUSY) {
		w->busy++;
		return NULL;
	}
	if (rc == -ENXIO)
		st_fail("thread %d: bp_get(%" PRIu64 ") = -ENXIO after bp_page_count() was %" PRIu64
			" (now %" PRIu64 "): the page count went down", w->id, p, w->seen_count,
			bp_file_page_count(w->r->file));
	if (rc != 0)
		st_fail("thread %d: bp_get(%" PRIu64 ") = %d", w->id, p, rc);
	return f;
}

/* An optimistic read of page p: true if it ended valid (and was checked),
 * false if it could not begin or ended invalid (nothing to check). */
static bool read_optimistic(struct worker *w, uint64_t p)
{
	struct round *r = w->r;
	uint32_t size = r->cfg.page_size;
	struct bp_read rd;
	int rc = bp_file_read_begin(r->file, p, &rd);
	if (rc == -ENOENT || rc == -EBUSY)
		return false; /* not resident or not readable now; a writer in it */
	if (rc != 0)
		st_fail("thread %d: bp_file_read_begin(%" PRIu64 ") = %d", w->id, p, rc);
	memcpy(w->scratch, rd.data, size);
	if (bp_read_end(&rd) != 0)
		return false;
	uint64_t v;
	memcpy(&v, w->scratch + 8, sizeof(v)); /* word 1: the version (0: zeros) */
	uint32_t first = 0;
	uint64_t acked = atomic_load_explicit(&r->expected[p], memory_order_relaxed);
	if (differing(w->scratch, size, p, v, &first) != 0 || v > acked) {
		char what[160];
		describe(what, sizeof(what), w->scratch, size);
		st_fail("thread %d (optimistic reader): page %" PRIu64 " read valid but holds %s "
			"(version %" PRIu64 " acknowledged): a torn, foreign or unacknowledged page",
			w->id, p, what, acked);
	}
	return true;
}

static void do_access(struct worker *w, bool exclusive)
{
	uint64_t count = page_count(w);
	if (count == 0)
		return;
	uint64_t p = pick_page(w, count);
	if (!exclusive && st_below(&w->rng, 2) == 0 && read_optimistic(w, p)) {
		w->reads++;
		w->optimistic++;
		return;
	}
	struct bp_frame *f = get_existing(w, p);
	if (f == NULL)
		return;
	enum bp_latch_mode m = exclusive ? BP_LATCH_EXCLUSIVE : BP_LATCH_SHARED;
	latch(w, f, m);
	if (exclusive) {
		write_next(w, f, p, "writer");
	} else {
		check_page(w, f, p, "reader");
		w->reads++;
	}
	unlatch_release(w, f, m);
}

static void do_new_page(struct worker *w)
{
	struct round *r = w->r;
	uint64_t before = page_count(w);
	uint64_t n = UINT64_MAX;
	struct bp_frame *f = NULL;

	st_watch_begin(&w->watch, OP_NEW_PAGE, NULL);
	int rc = bp_file_new_page(r->file, &n, &f);
	st_watch_end(&w->watch);
	if (rc == -EBUSY) {
		w->busy++;
		return;
	}
	if (rc != 0)
		st_fail("thread %d: bp_new_page = %d", w->id, rc);
	if (n < before)
		st_fail("thread %d: bp_new_page returned page %" PRIu64 " as new, below the page "
			"count %" PRIu64 " seen before the call", w->id, n, before);
	saw_page(w, n);
	latch(w, f, BP_LATCH_EXCLUSIVE);
	/* Another thread may have latched and written n between the return
	 * and our latch (it is below the count); then it holds that version.
	 * Zeros with a version acknowledged is the new page overwriting an
	 * existing one. */
	write_next(w, f, n, "creator, after bp_new_page");
	unlatch_release(w, f, BP_LATCH_EXCLUSIVE);
	w->creates++;
}

static void do_create_at(struct worker *w)
{
	struct round *r = w->r;
	uint64_t p = page_count(w) + st_below(&w->rng, 3);
	struct bp_frame *f = NULL;

	st_watch_begin(&w->watch, OP_GET_CREATE, NULL);
	int rc = bp_file_get(r->file, p, BP_GET_CREATE, &f);
	st_watch_end(&w->watch);
	if (rc == -EBUSY) {
		w->busy++;
		return;
	}
	if (rc != 0)
		st_fail("thread %d: bp_get(%" PRIu64 ", BP_GET_CREATE) = %d", w->id, p, rc);
	saw_page(w, p);
	latch(w, f, BP_LATCH_EXCLUSIVE);
	write_next(w, f, p, "create-at-count");
	unlatch_release(w, f, BP_LATCH_EXCLUSIVE);
	w->creates_at++;
}

static void do_evict(struct worker *w)
{
	struct round *r = w->r;
	if (st_below(&w->rng, 16) == 0) {
		st_watch_begin(&w->watch, OP_FLUSH, NULL);
		int rc = bp_flush(r->pool);
		st_watch_end(&w->watch);
		if (rc != 0)
			st_fail("thread %d: bp_flush = %d", w->id, rc);
		w->flushes++;
		return;
	}
	uint64_t count = page_count(w);
	if (count == 0)
		return;
	uint64_t p = pick_page(w, count);
	st_watch_begin(&w->watch, OP_EVICT, NULL);
	int rc = bp_file_evict_page(r->file, p);
	st_watch_end(&w->watch);
	if (rc == 0)
		w->evictions++;
	else if (rc != -ENOENT && rc != -EBUSY)
		st_fail("thread %d: bp_evict_page(%" PRIu64 ") = %d", w->id, p, rc);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct round *r = w->r;

	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		uint32_t op = st_below(&w->rng, 100);
		bool may_create = bp_file_page_count(r->file) + 3 < PAGE_LIMIT;
		if (op < 30)
			do_access(w, true);
		else if (op < 50)
			do_access(w, false);
		else if (op < 65 && may_create)
			do_new_page(w);
		else if (op < 75 && may_create)
			do_create_at(w);
		else if (op < 65)
			do_access(w, true);
		else if (op < 75)
			do_access(w, false);
		else
			do_evict(w);
		w->ops++;
	}
	atomic_store_explicit(&w->done, true, memory_order_release);
	return NULL;
}

/* ---- the round --------------------------------------------------------------- */


static void dump_round(void *arg)
{
	struct round *r = arg;
	fprintf(stderr, "  %.3f s into the run, round %u: %u frames of %u bytes, io latency %u us, "
		"writer every %u ms, policy %s, file %s\n", (double)(util_now_ns() - run_start_ns) / 1e9,
		st_ctx.round, r->cfg.nframes, r->cfg.page_size, r->cfg.io_latency_us,
		r->cfg.writer_interval_ms, tc_variant_name(r->cfg.policy), r->path);
	if (r->file)
		fprintf(stderr, "  bp_file_page_count() = %" PRIu64 " (file %u)\n",
			bp_file_page_count(r->file), bp_file_id(r->file));
	if (workers == NULL)
		return;
	uint64_t now = util_now_ns();
	for (unsigned i = 0; i < nworkers; i++)
		st_watch_dump(&workers[i].watch, (int)i, now, op_names);
}

static void remove_files(void)
{
	if (file_path[0])
		unlink(file_path);
	if (file2_path[0])
		unlink(file2_path);
	if (dir_path[0])
		rmdir(dir_path);
}

/* The pool's messages (a close that failed, a frame still pinned) are part
 * of a failing round's report: on stderr, as the library once printed them. */
static void pool_log(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	fprintf(stderr, "bufpool: %s\n", msg);
}

static struct bp_config pool_config(const struct round_cfg *c, bool verify, const char *path)
{
	struct bp_config cfg;
	bp_config_init(&cfg);
	cfg.path = path;
	cfg.flags = verify ? BP_OPEN_NO_BGWRITER : BP_OPEN_CREATE | BP_OPEN_TRUNCATE;
	cfg.page_size = c->page_size;
	cfg.nframes = verify ? 64 : c->nframes;
	cfg.io_threads = 2;
	cfg.writer_interval_ms = c->writer_interval_ms;
	cfg.io_latency_us = verify ? 0 : c->io_latency_us;
	cfg.log = pool_log;
	tc_variant_config(c->policy, 3, &cfg.fwait);
	return cfg;
}

/* After bp_close: the file holds every acknowledged version. */
static uint64_t verify_file(struct round *r, uint64_t count_at_close)
{
	struct bp_config cfg = pool_config(&r->cfg, true, r->path);
	struct bp_pool *pool;
	int rc = bp_open(&pool, &cfg);
	if (rc != 0)
		st_fail("reopening %s: bp_open = %d", r->path, rc);
	uint64_t n = bp_page_count(pool);
	if (n > count_at_close)
		st_fail("the file holds %" PRIu64 " pages after bp_close, but bp_page_count() was %"
			PRIu64 " at close: the page count went down", n, count_at_close);
	uint64_t top = count_at_close > EXPECTED_SLOTS ? EXPECTED_SLOTS : count_at_close;
	for (uint64_t p = 0; p < top; p++) {
		uint64_t v = atomic_load(&r->expected[p]);
		if (p >= n) {
			if (v)
				st_fail("after close: version %" PRIu64 " of page %" PRIu64 " was acknowledged, "
					"but the file ends at %" PRIu64 " pages: LOST WRITE", v, p, n);
			continue;
		}
		struct bp_frame *f;
		rc = bp_get(pool, p, 0, &f);
		if (rc != 0)
			st_fail("after close: bp_get(%" PRIu64 ") = %d", p, rc);
		uint32_t first = 0;
		if (differing(bp_data(f), r->cfg.page_size, p, v, &first)) {
			char what[160];
			describe(what, sizeof(what), bp_data(f), r->cfg.page_size);
			st_fail("after close: page %" PRIu64 " of the file holds %s, but version %"
				PRIu64 " was acknowledged: %s", p, what, v,
				v ? "LOST WRITE" : "data on a page never written");
		}
		bp_release(pool, f);
	}
	rc = bp_close(pool);
	if (rc != 0)
		st_fail("closing the reopened pool: bp_close = %d", rc);
	return n;
}

struct round_result {
	uint64_t ops, writes, reads, creates, creates_at, evictions, flushes, busy, pages;
	uint64_t optimistic;
	struct bp_stats st;
};

static void run_round(struct round *r, uint64_t seed, unsigned round_no, double seconds,
		      double stall_seconds, struct round_result *res)
{
	uint64_t stall_ns = (uint64_t)(stall_seconds * 1e9);
	struct bp_config cfg = pool_config(&r->cfg, false, file_path);
	int rc = bp_open(&r->pool, &cfg);
	if (rc != 0)
		st_fail("bp_open(%s) = %d", file_path, rc);
	r->file = bp_pool_file(r->pool);
	r->path = file_path;
	if (round_no % 2 == 1) {
		rc = bp_file_open(&r->file, r->pool, file2_path, BP_OPEN_CREATE | BP_OPEN_TRUNCATE);
		if (rc != 0)
			st_fail("bp_file_open(%s) = %d", file2_path, rc);
		r->path = file2_path;
	}
	st_ctx.table = bp_fwait_table(r->pool);

	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (unsigned i = 0; i < nworkers; i++) {
		struct worker *w = &workers[i];
		unsigned char *scratch = w->scratch;
		memset(w, 0, sizeof(*w));
		w->scratch = scratch;
		w->id = (int)i;
		w->r = r;
		w->rng = util_rand_seed(seed, (uint64_t)round_no * MAX_THREADS + i);
		rc = pthread_create(&w->tid, &attr, worker_main, w);
		if (rc != 0)
			st_fail("pthread_create: %s (thread %u)", strerror(rc), i);
	}
	pthread_attr_destroy(&attr);

	uint64_t end = util_now_ns() + (uint64_t)(seconds * 1e9);
	for (uint64_t now = util_now_ns(); now < end; now = util_now_ns()) {
		for (unsigned i = 0; i < nworkers; i++)
			st_watch_check(&workers[i].watch, (int)i, now, stall_ns, op_names, "hang?");
		st_poll_pause();
	}
	atomic_store(&r->stop, true);
	uint64_t stop_by = util_now_ns() + stall_ns + 5000000000u;
	for (bool all = false; !all;) {
		uint64_t now = util_now_ns();
		if (now > stop_by)
			st_fail("workers still running %.1f s after stop (none of them in a "
				"watched call): livelock?", (double)(stall_ns + 5000000000u) / 1e9);
		all = true;
		for (unsigned i = 0; i < nworkers; i++) {
			if (!atomic_load_explicit(&workers[i].done, memory_order_acquire)) {
				all = false;
				st_watch_check(&workers[i].watch, (int)i, now, stall_ns, op_names, "hang?");
			}
		}
		if (!all)
			st_poll_pause();
	}
	for (unsigned i = 0; i < nworkers; i++) {
		struct worker *w = &workers[i];
		pthread_join(w->tid, NULL);
		res->ops += w->ops;
		res->writes += w->writes;
		res->reads += w->reads;
		res->optimistic += w->optimistic;
		res->creates += w->creates;
		res->creates_at += w->creates_at;
		res->evictions += w->evictions;
		res->flushes += w->flushes;
		res->busy += w->busy;
	}

	uint64_t count = bp_file_page_count(r->file);
	bp_stats_init(&res->st);
	bp_stats_get(r->pool, &res->st);
	st_ctx.table = NULL;
	if (r->file != bp_pool_file(r->pool)) {
		rc = bp_file_close(r->file);
		if (rc != 0)
			st_fail("bp_file_close = %d after every worker returned", rc);
	}
	r->file = NULL;
	rc = bp_close(r->pool);
	if (rc != 0)
		st_fail("bp_close = %d after every worker returned", rc);
	r->pool = NULL;
	res->pages = verify_file(r, count);
}

static struct round_cfg draw_config(uint64_t *rng, unsigned round_no, int policy)
{
	static const uint32_t frames[] = { 8, 12, 16 };
	struct round_cfg c = {
		.page_size = st_below(rng, 4) == 0 ? 4096 : 512,
		.nframes = frames[st_below(rng, 3)],
		.io_latency_us = 50 + st_below(rng, 151),
		.writer_interval_ms = 2 + st_below(rng, 9),
		.policy = policy >= 0 ? policy : (int)(round_no % TC_NVARIANTS),
	};
	return c;
}

int main(int argc, char **argv)
{
	struct st_options o;

	setvbuf(stdout, NULL, _IOLBF, 0);
	st_parse_options(argc, argv, &o);
	if (o.mix || o.inject) {
		fprintf(stderr, "%s: no --mix or --inject here\n", argv[0]);
		return 2;
	}
	nworkers = o.threads ? o.threads : (TC_TSAN ? 16 : 24);
	if (nworkers < 2 || nworkers > MAX_THREADS) {
		fprintf(stderr, "%s: --threads must be 2..%d\n", argv[0], MAX_THREADS);
		return 2;
	}
	workers = calloc(nworkers, sizeof(*workers));
	if (workers == NULL)
		return 1;
	for (unsigned i = 0; i < nworkers; i++)
		if ((workers[i].scratch = malloc(BP_PAGE_SIZE_MAX)) == NULL)
			return 1;

	snprintf(dir_path, sizeof(dir_path), "/tmp/stress-bufpool-XXXXXX");
	if (mkdtemp(dir_path) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(file_path, sizeof(file_path), "%s/pages", dir_path);
	snprintf(file2_path, sizeof(file2_path), "%s/pages2", dir_path);
	int n = snprintf(rerun_args, sizeof(rerun_args), "--threads %u", nworkers);
	if (o.policy >= 0)
		snprintf(rerun_args + n, sizeof(rerun_args) - (size_t)n, " --policy %s",
			 tc_variant_name(o.policy));

	/* rounds of ROUND_SECONDS; soak: until --seconds (0 = forever) */
	unsigned nrounds = 0;
	if (!o.soak) {
		nrounds = (unsigned)(o.seconds / ROUND_SECONDS + 0.999);
		if (nrounds == 0)
			nrounds = 1;
	}
	printf("%s: seed %" PRIu64 " (rerun: --seed %" PRIu64 " %s), %u threads, %.1f s%s\n",
	       argv[0], o.seed, o.seed, rerun_args, nworkers, o.seconds, o.soak ? ", soak" : "");

	uint64_t round_rng = util_rand_seed(o.seed, UINT64_MAX);
	uint64_t run_start = run_start_ns = util_now_ns();
	uint64_t run_ns = (uint64_t)(o.seconds * 1e9);
	for (unsigned rn = 0; nrounds == 0 || rn < nrounds; rn++) {
		uint64_t elapsed = util_now_ns() - run_start;
		if (o.soak && o.seconds > 0 && elapsed >= run_ns)
			break;
		double secs = ROUND_SECONDS;
		if (!o.soak || o.seconds > 0) {
			double left = (double)(run_ns > elapsed ? run_ns - elapsed : 0) / 1e9;
			if (left < secs)
				secs = left;
			if (secs < 0.5)
				secs = 0.5;
		}
		struct round *r = calloc(1, sizeof(*r));
		if (r == NULL)
			return 1;
		r->cfg = draw_config(&round_rng, rn, o.policy);
		st_ctx = (struct st_context){
			.program = argv[0], .seed = o.seed, .round = rn,
			.policy = tc_variant_name(r->cfg.policy), .threads = nworkers,
			.dump_extra = dump_round, .dump_arg = r, .rerun_args = rerun_args,
			.cleanup = remove_files,
		};

		struct round_result res = { 0 };
		uint64_t t0 = util_now_ns();
		run_round(r, o.seed, rn, secs, o.stall_seconds, &res);
		printf("round %u: %2u frames x %4u B, latency %3u us, writer %2u ms, %-14s: "
		       "%" PRIu64 " ops, %" PRIu64 " writes, %" PRIu64 " reads (%" PRIu64
		       " optimistic), %" PRIu64 " new pages, %"
		       PRIu64 " created at count, %" PRIu64 " evicted, %" PRIu64 " flushes, %" PRIu64
		       " busy; pool: %" PRIu64 " reads, %" PRIu64 " writes, %" PRIu64 " evictions; %"
		       PRIu64 " pages verified, %.1f s: ok\n",
		       rn, r->cfg.nframes, r->cfg.page_size, r->cfg.io_latency_us,
		       r->cfg.writer_interval_ms, tc_variant_name(r->cfg.policy), res.ops, res.writes,
		       res.reads, res.optimistic, res.creates, res.creates_at, res.evictions, res.flushes, res.busy,
		       res.st.reads, res.st.writes, res.st.evictions, res.pages,
		       (double)(util_now_ns() - t0) / 1e9);
		free(r);
	}
	remove_files();
	for (unsigned i = 0; i < nworkers; i++)
		free(workers[i].scratch);
	free(workers);
	printf("%s: PASS (seed %" PRIu64 ")\n", argv[0], o.seed);
	return 0;
}
