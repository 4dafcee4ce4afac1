/* SPDX-License-Identifier: MIT */
/*
 * fuzz_bufpool.c - libFuzzer target: random bufpool API call sequences on a
 * small pool, checked against a simple model of the page contents.
 *
 * Design note
 * -----------
 * The input's first byte picks the pool (2..9 frames of 512 bytes, 1 or 2
 * I/O threads, readahead on or off, the fwait policy); every following
 * group of bytes is one operation: get (with or without CREATE), new page,
 * release, write under an exclusive latch + mark dirty, read and compare
 * under a shared latch, try-latches, flush, evict one, evict all, arm a
 * read/write/fsync fault (fail, or slow), clear faults, an optimistic read
 * (of any page number; evicting the page in between must fail it), and
 * close + reopen
 * (which must preserve every page).  The model is an array of page images
 * and the page count; every read compares the whole page with it.  Errors
 * are accepted only where the header allows them (e.g. -EIO only while a
 * fault was armed since the last clear, -EBUSY only while a page is
 * pinned), and anything else aborts with a message, which libFuzzer (or the
 * replay driver) reports as a crash with the input that caused it.
 *
 * One pool per input, in one directory made once per process (removed at
 * exit); single-threaded apart from the pool's own I/O threads.
 */
#include "fuzz_bufpool.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bufpool/bufpool.h"

#define PAGE 512u
#define MAX_PAGES 24u   /* page numbers the ops touch */
#define MAX_PINS 12u
#define MAX_OPS 200u

static char dir_path[64];
static int trace = -1; /* FUZZ_TRACE=1 in the environment: print every op */

#define TRACE(...) do { if (trace > 0) fprintf(stderr, __VA_ARGS__); } while (0)
static char file_path[96];

struct reader {
	const uint8_t *p;
	size_t n;
};

static uint8_t take(struct reader *r)
{
	if (r->n == 0)
		return 0;
	r->n--;
	return *r->p++;
}

struct model {
	uint8_t pages[MAX_PAGES * 4][PAGE]; /* up to 4 x MAX_PAGES via new_page */
	uint64_t count;
	struct bp_frame *pins[MAX_PINS];
	uint64_t pin_page[MAX_PINS];
	unsigned npins;
	bool read_fault, write_fault, fsync_fault; /* armed since the last clear */
	/* A write error is kept until a bp_flush reports it, so one may show
	 * up after the fault was cleared; the next flush without faults
	 * consumes it. */
	bool stale_error;
	/* An fsync failed in this pool (bp_durability_err): every flush and
	 * close fails from then on, and the pool is left with bp_discard. */
	bool sticky;
	struct bp_config cfg;
};

#define MODEL_PAGES (MAX_PAGES * 4)

__attribute__((noreturn, format(printf, 1, 2)))
static void fuzz_fail(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "fuzz_bufpool: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* The pool's messages (why a close failed under an armed fault) help read
 * a crash report: on stderr, as the library once printed them. */
static void pool_log(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	fprintf(stderr, "bufpool: %s\n", msg);
}

static void cleanup_dir(void)
{
	unlink(file_path);
	rmdir(dir_path);
}

static void setup_dir(void)
{
	if (dir_path[0])
		return;
	strcpy(dir_path, "/tmp/bufpool-fuzz-XXXXXX");
	if (!mkdtemp(dir_path))
		fuzz_fail("mkdtemp: %s", strerror(errno));
	snprintf(file_path, sizeof(file_path), "%s/pages", dir_path);
	atexit(cleanup_dir);
}

static void check_count(struct bp_pool *pool, struct model *m, const char *after)
{
	uint64_t c = bp_page_count(pool);
	if (c != m->count)
		fuzz_fail("after %s: bp_page_count %llu, model %llu", after,
			  (unsigned long long)c, (unsigned long long)m->count);
}

static void compare(struct model *m, struct bp_frame *f, uint64_t pageno, const char *when)
{
	const uint8_t *d = bp_data(f);
	if (memcmp(d, m->pages[pageno], PAGE) != 0) {
		unsigned i = 0;
		while (d[i] == m->pages[pageno][i])
			i++;
		fuzz_fail("%s: page %llu differs at byte %u: 0x%02x, model 0x%02x", when,
			  (unsigned long long)pageno, i, d[i], m->pages[pageno][i]);
	}
}

static bool io_error_allowed(const struct model *m, int rc)
{
	return rc < 0 && rc != -EINVAL && rc != -ENOENT &&
	       (m->read_fault || m->write_fault || m->fsync_fault || m->stale_error ||
		m->sticky);
}

static void op_get(struct bp_pool *pool, struct model *m, struct reader *r)
{
	uint64_t pageno = take(r) % MAX_PAGES;
	bool create = take(r) & 1;
	struct bp_frame *f = NULL;

	if (m->npins == MAX_PINS)
		return;
	int rc = bp_get(pool, pageno, create ? BP_GET_CREATE : 0, &f);
	TRACE("  bp_get(%llu, create %d) = %d\n", (unsigned long long)pageno, create, rc);
	if (rc == 0) {
		if (bp_frame_pageno(f) != pageno)
			fuzz_fail("bp_get(%llu) returned frame of page %llu",
				  (unsigned long long)pageno, (unsigned long long)bp_frame_pageno(f));
		if (pageno >= m->count) {
			if (!create)
				fuzz_fail("bp_get(%llu) past the end (%llu) without CREATE succeeded",
					  (unsigned long long)pageno, (unsigned long long)m->count);
			for (uint64_t p = m->count; p <= pageno; p++)
				memset(m->pages[p], 0, PAGE);
			m->count = pageno + 1;
		}
		m->pins[m->npins] = f;
		m->pin_page[m->npins++] = pageno;
		/* read without a latch is fine single-threaded */
		compare(m, f, pageno, "bp_get");
	} else if (rc == -ENXIO) {
		if (create || pageno < m->count)
			fuzz_fail("bp_get(%llu, create %d) = -ENXIO with %llu pages",
				  (unsigned long long)pageno, create, (unsigned long long)m->count);
	} else if (rc == -EBUSY) {
		if (m->npins == 0)
			fuzz_fail("bp_get = -EBUSY with nothing pinned");
	} else if (!(m->read_fault || m->write_fault) || rc == -EINVAL) {
		/* a read fault fails the read; a write fault can fail the
		 * write-back of the frame eviction picked */
		fuzz_fail("bp_get(%llu) = %d", (unsigned long long)pageno, rc);
	}
	check_count(pool, m, "bp_get");
}

static void op_new_page(struct bp_pool *pool, struct model *m)
{
	uint64_t pageno;
	struct bp_frame *f;

	if (m->npins == MAX_PINS || m->count >= MODEL_PAGES)
		return;
	int rc = bp_new_page(pool, &pageno, &f);
	TRACE("  bp_new_page = %d (page %llu)\n", rc, (unsigned long long)pageno);
	if (rc == 0) {
		if (pageno != m->count)
			fuzz_fail("bp_new_page gave page %llu, model count %llu",
				  (unsigned long long)pageno, (unsigned long long)m->count);
		memset(m->pages[pageno], 0, PAGE);
		m->count++;
		m->pins[m->npins] = f;
		m->pin_page[m->npins++] = pageno;
		compare(m, f, pageno, "bp_new_page");
	} else if (!(rc == -EBUSY && m->npins > 0) && !io_error_allowed(m, rc)) {
		fuzz_fail("bp_new_page = %d", rc);
	}
	check_count(pool, m, "bp_new_page");
}

static void release_at(struct bp_pool *pool, struct model *m, unsigned i)
{
	int rc = bp_release(pool, m->pins[i]);
	if (rc != 0)
		fuzz_fail("bp_release(page %llu) = %d", (unsigned long long)m->pin_page[i], rc);
	m->pins[i] = m->pins[m->npins - 1];
	m->pin_page[i] = m->pin_page[m->npins - 1];
	m->npins--;
}

static void op_write(struct bp_pool *pool, struct model *m, struct reader *r)
{
	unsigned i = take(r);
	unsigned off = (unsigned)take(r) * 2 % PAGE;
	unsigned len = 1 + take(r) % 64;
	uint8_t val = take(r);

	if (m->npins == 0)
		return;
	i %= m->npins;
	if (off + len > PAGE)
		len = PAGE - off;
	struct bp_frame *f = m->pins[i];
	uint64_t pageno = m->pin_page[i];
	int rc = bp_latch(pool, f, BP_LATCH_EXCLUSIVE);
	if (rc != 0)
		fuzz_fail("bp_latch(exclusive) = %d", rc);
	compare(m, f, pageno, "before write");
	memset((uint8_t *)bp_data(f) + off, val, len);
	memset(m->pages[pageno] + off, val, len);
	rc = bp_mark_dirty(pool, f);
	if (rc != 0)
		fuzz_fail("bp_mark_dirty = %d", rc);
	rc = bp_unlatch(pool, f, BP_LATCH_EXCLUSIVE);
	if (rc != 0)
		fuzz_fail("bp_unlatch(exclusive) = %d", rc);
}

static void op_check(struct bp_pool *pool, struct model *m, struct reader *r)
{
	unsigned i = take(r);
	if (m->npins == 0)
		return;
	i %= m->npins;
	struct bp_frame *f = m->pins[i];
	int rc = bp_latch(pool, f, BP_LATCH_SHARED);
	if (rc != 0)
		fuzz_fail("bp_latch(shared) = %d", rc);
	compare(m, f, m->pin_page[i], "shared read");
	rc = bp_unlatch(pool, f, BP_LATCH_SHARED);
	if (rc != 0)
		fuzz_fail("bp_unlatch(shared) = %d", rc);
	/* a latch not held in that mode */
	if (bp_unlatch(pool, f, BP_LATCH_SHARED) != -EPERM)
		fuzz_fail("bp_unlatch of a latch not held did not return -EPERM");
}

static void op_trylatch(struct bp_pool *pool, struct model *m, struct reader *r)
{
	unsigned i = take(r);
	enum bp_latch_mode mode = (take(r) & 1) ? BP_LATCH_EXCLUSIVE : BP_LATCH_SHARED;
	if (m->npins == 0)
		return;
	struct bp_frame *f = m->pins[i % m->npins];
	int rc = bp_latch_try(pool, f, mode);
	if (rc == 0) {
		rc = bp_unlatch(pool, f, mode);
		if (rc != 0)
			fuzz_fail("bp_unlatch after bp_latch_try = %d", rc);
	} else if (!(rc == -EBUSY && mode == BP_LATCH_EXCLUSIVE)) {
		/* nobody else latches; only write-back in flight may make an
		 * exclusive try fail */
		fuzz_fail("bp_latch_try(mode %d) = %d", mode, rc);
	}
}

static void op_flush(struct bp_pool *pool, struct model *m)
{
	int rc = bp_flush(pool);
	TRACE("  bp_flush = %d\n", rc);
	if (rc != 0 && !io_error_allowed(m, rc))
		fuzz_fail("bp_flush = %d", rc);
	if (rc == 0 && m->sticky)
		fuzz_fail("bp_flush = 0 after a failed fsync (durability_err %d)",
			  bp_durability_err(pool));
	m->sticky = bp_durability_err(pool) != 0;
	if (!m->write_fault && !m->fsync_fault)
		m->stale_error = false;
}

static bool pinned(const struct model *m, uint64_t pageno)
{
	for (unsigned i = 0; i < m->npins; i++)
		if (m->pin_page[i] == pageno)
			return true;
	return false;
}

static void op_evict(struct bp_pool *pool, struct model *m, struct reader *r)
{
	uint64_t pageno = take(r) % MAX_PAGES;
	int rc = bp_evict_page(pool, pageno);
	TRACE("  bp_evict_page(%llu) = %d\n", (unsigned long long)pageno, rc);
	if (rc == 0 || rc == -ENOENT) {
		if (pinned(m, pageno))
			fuzz_fail("bp_evict_page(%llu) = %d while pinned", (unsigned long long)pageno, rc);
	} else if (rc == -EBUSY) {
		/* pinned, latched or being read (readahead) */
	} else if (!io_error_allowed(m, rc)) {
		fuzz_fail("bp_evict_page(%llu) = %d", (unsigned long long)pageno, rc);
	}
}

/* An optimistic read of any page number (garbage ones too): a resident
 * page reads as the model has it and ends valid, unless this op evicted
 * it in between, when the end must say so (-ESTALE). */
static void op_optimistic(struct bp_pool *pool, struct model *m, struct reader *r)
{
	uint8_t a = take(r);
	uint64_t pageno = (a & 0x80) ? UINT64_MAX - (a & 0x3f) : a % (MAX_PAGES * 4);
	struct bp_read rd;
	int rc = bp_read_begin(pool, pageno, &rd);
	TRACE("  bp_read_begin(%llu) = %d\n", (unsigned long long)pageno, rc);
	if (rc == -ENOENT || (rc == -EFBIG && (a & 0x80)))
		return;
	if (rc != 0)
		fuzz_fail("bp_read_begin(%llu) = %d", (unsigned long long)pageno, rc);
	if (pageno >= m->count)
		fuzz_fail("bp_read_begin(%llu) began past the end (%llu pages)",
			  (unsigned long long)pageno, (unsigned long long)m->count);
	compare(m, rd.frame, pageno, "optimistic read");
	bool evicted = (a & 0x40) && bp_evict_page(pool, pageno) == 0;
	rc = bp_read_end(&rd);
	if (rc != (evicted ? -ESTALE : 0))
		fuzz_fail("bp_read_end = %d (page %s)", rc, evicted ? "evicted" : "untouched");
}

static void op_evict_all(struct bp_pool *pool, struct model *m)
{
	int rc = bp_evict_all(pool);
	TRACE("  bp_evict_all = %d\n", rc);
	if (rc < 0 && !io_error_allowed(m, rc))
		fuzz_fail("bp_evict_all = %d", rc);
	if (rc == 0 && m->sticky)
		fuzz_fail("bp_evict_all = 0 after a failed fsync");
	m->sticky = bp_durability_err(pool) != 0;
}

static void op_fault(struct bp_pool *pool, struct model *m, struct reader *r)
{
	uint8_t a = take(r), b = take(r);
	struct bp_fault fl = {
		.op = (enum bp_fault_op)(a % BP_FAULT_OP_COUNT),
		.kind = (b & 1) ? BP_FAULT_SLOW : BP_FAULT_FAIL,
		.err = 0,
		.count = 1 + (b >> 1) % 3,
		.delay_us = 50 + (b >> 3) * 4,
		.page_first = (a >> 2) % MAX_PAGES,
		.page_count = (a >> 7) ? 1 + (b >> 4) % 4 : 0,
	};
	TRACE("  fault op %d kind %d count %u pages [%llu, +%llu)\n", fl.op, fl.kind, fl.count,
	      (unsigned long long)fl.page_first, (unsigned long long)fl.page_count);
	int rc = bp_fault_set(pool, &fl);
	if (rc != 0)
		fuzz_fail("bp_fault_set = %d", rc);
	if (fl.kind == BP_FAULT_FAIL) {
		if (fl.op == BP_FAULT_READ)
			m->read_fault = true;
		else if (fl.op == BP_FAULT_WRITE)
			m->write_fault = true;
		else
			m->fsync_fault = true;
	}
}

static void op_fault_clear(struct bp_pool *pool, struct model *m)
{
	int rc = bp_fault_clear(pool);
	TRACE("  bp_fault_clear = %d\n", rc);
	if (rc != 0)
		fuzz_fail("bp_fault_clear = %d", rc);
	m->stale_error = m->stale_error || m->write_fault || m->fsync_fault;
	m->read_fault = m->write_fault = m->fsync_fault = false;
}

static struct bp_pool *open_pool(struct model *m, bool truncate)
{
	struct bp_pool *pool;
	struct bp_config cfg = m->cfg;
	if (truncate)
		cfg.flags |= BP_OPEN_TRUNCATE;
	int rc = bp_open(&pool, &cfg);
	if (rc != 0)
		fuzz_fail("bp_open = %d", rc);
	return pool;
}

/* Close with every fault cleared.  An error from before the clear may still
 * be reported once, and bp_close then keeps the pool open: the second close
 * must succeed, unless an fsync failed, when no close can (sticky) and the
 * pool must be discarded.  Every close writes the dirty pages first, and
 * with the faults cleared those writes succeed, so the discard loses
 * nothing the model holds. */
static void close_pool(struct bp_pool *pool, struct model *m)
{
	if (bp_close(pool) == 0 || bp_close(pool) == 0) {
		if (m->sticky)
			fuzz_fail("bp_close = 0 after a failed fsync");
	} else {
		m->sticky = m->sticky || bp_durability_err(pool) != 0;
		if (!m->sticky)
			fuzz_fail("bp_close failed twice after the faults were cleared");
		int rc = bp_discard(pool);
		if (rc != 0)
			fuzz_fail("bp_discard after a failed fsync = %d", rc);
	}
	m->sticky = false;
}

/* Release everything, close cleanly, reopen, and check every page. */
static struct bp_pool *op_reopen(struct bp_pool *pool, struct model *m)
{
	while (m->npins)
		release_at(pool, m, m->npins - 1);
	op_fault_clear(pool, m);
	close_pool(pool, m);
	pool = open_pool(m, false);
	check_count(pool, m, "reopen");
	for (uint64_t p = 0; p < m->count; p++) {
		struct bp_frame *f;
		int rc = bp_get(pool, p, BP_GET_NOREADAHEAD, &f);
		if (rc != 0)
			fuzz_fail("after reopen: bp_get(%llu) = %d", (unsigned long long)p, rc);
		compare(m, f, p, "after reopen");
		rc = bp_release(pool, f);
		if (rc != 0)
			fuzz_fail("after reopen: bp_release = %d", rc);
	}
	return pool;
}

int fuzz_bufpool_one(const uint8_t *data, size_t size)
{
	static struct model m; /* big: keep it off the stack */
	struct reader r = { data, size };

	setup_dir();
	memset(&m, 0, sizeof(m));
	uint8_t c = take(&r);
	bp_config_init(&m.cfg);
	m.cfg.path = file_path;
	m.cfg.flags = BP_OPEN_CREATE | BP_OPEN_NO_BGWRITER | ((c & 8) ? 0 : BP_OPEN_NO_READAHEAD);
	m.cfg.page_size = PAGE;
	m.cfg.nframes = 2 + (c & 7);
	m.cfg.io_threads = 1 + ((c >> 6) & 1);
	m.cfg.readahead_pages = 2;
	m.cfg.fwait.nbuckets = 4;
	m.cfg.fwait.policy = (enum fwait_policy)((c >> 4) % FWAIT_POLICY_COUNT);
	m.cfg.log = pool_log;
	struct bp_pool *pool = open_pool(&m, true);
	check_count(pool, &m, "open");

	if (trace < 0)
		trace = getenv("FUZZ_TRACE") != NULL;
	TRACE("open: nframes %u io_threads %u readahead %d policy %d\n", m.cfg.nframes,
	      m.cfg.io_threads, !(m.cfg.flags & BP_OPEN_NO_READAHEAD), (int)m.cfg.fwait.policy);
	for (unsigned n = 0; n < MAX_OPS && r.n > 0; n++) {
		unsigned op = take(&r) % 14;
		TRACE("op %u: %u (pins %u, pages %llu)\n", n, op, m.npins, (unsigned long long)m.count);
		switch (op) {
		case 0:
		case 1:
			op_get(pool, &m, &r);
			break;
		case 2:
			op_new_page(pool, &m);
			break;
		case 3:
			if (m.npins)
				release_at(pool, &m, take(&r) % m.npins);
			break;
		case 4:
		case 5:
			op_write(pool, &m, &r);
			break;
		case 6:
			op_check(pool, &m, &r);
			break;
		case 7:
			op_trylatch(pool, &m, &r);
			break;
		case 8:
			op_flush(pool, &m);
			break;
		case 9:
			op_evict(pool, &m, &r);
			break;
		case 10:
			op_evict_all(pool, &m);
			break;
		case 11:
			if (take(&r) & 1)
				op_fault(pool, &m, &r);
			else
				op_fault_clear(pool, &m);
			break;
		case 12:
			op_optimistic(pool, &m, &r);
			break;
		default:
			pool = op_reopen(pool, &m);
			break;
		}
	}
	pool = op_reopen(pool, &m);
	while (m.npins)
		release_at(pool, &m, m.npins - 1);
	op_fault_clear(pool, &m);
	close_pool(pool, &m);
	return 0;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_bufpool_one(data, size);
}
#endif
