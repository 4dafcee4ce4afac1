/* SPDX-License-Identifier: MIT */
/*
 * pool.c - bp_open / bp_close, the small accessors and bp_version.
 *
 * Layer 8 (pool): calls only file.c, writeback.c, io.c, fault.c,
 * pagemem.c, frame.c, account.c and log.c.
 *
 * Design note
 * -----------
 * bp_open first copies the caller's config into its own full-size one
 * (bp_struct_in: the size field's rules, bufpool.h), then validates it and
 * builds the wait table (fwait checks the
 * rest of the config: refused before the file is opened, so a bad config
 * never truncates it), opens the file, and allocates the page memory
 * (aligned to the page size, for O_DIRECT) and the frame metadata
 * (cache-line aligned) through pagemem.c (a dedicated jemalloc arena, or
 * the system allocator in a build without jemalloc).  It then builds the
 * page table partitions, the fault injector, the I/O engine (io.c: the
 * io_uring ring or the thread pool, bp_config.io_engine; the environment's
 * BP_IO_ENGINE stands for AUTO; and the read path, bp_config.read_path,
 * for which BP_READ_PATH stands when AUTO), the I/O threads and the
 * background writer.  Every step is undone in reverse
 * by pool_destroy, which bp_close calls after writing everything back.
 * The pool holds no global state; all fields are set before any thread is
 * started (pthread_create orders them) and are read-only afterwards except
 * the atomics listed in internal.h.
 *
 * The library writes nothing to any stream: the few messages it has (why
 * bp_open refused a config, which frame keeps bp_close from closing, what
 * failed at bp_close) go through bp_log to the embedder's bp_config.log,
 * or nowhere when that is NULL.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bufpool/internal.h"
#include "bufpool/pagemem.h"

/* As fwait_version: this library's BP_VERSION, whatever header the
 * program was built with. */
int bp_version(void)
{
	return BP_VERSION;
}

static unsigned log2u(uint64_t v)
{
	unsigned n = 0;
	while ((UINT64_C(1) << n) < v)
		n++;
	return n;
}


#define CFG_ERR(cfg, ...) bp_log((cfg)->log, (cfg)->log_arg, BP_LOG_ERROR, __VA_ARGS__)

static int check_config(const struct bp_config *cfg, uint32_t *page_size, uint32_t *nframes)
{
	*page_size = cfg->page_size ? cfg->page_size : BP_PAGE_SIZE_DEFAULT;
	*nframes = cfg->nframes ? cfg->nframes : BP_NFRAMES_DEFAULT;
	if (!cfg->path || !cfg->path[0]) {
		CFG_ERR(cfg, "bp_open: no file path in the config");
		return -EINVAL;
	}
	if (*page_size < BP_PAGE_SIZE_MIN || *page_size > BP_PAGE_SIZE_MAX ||
	    (*page_size & (*page_size - 1))) {
		CFG_ERR(cfg, "bp_open: page size %u must be a power of two in [%u, %u]",
			*page_size, BP_PAGE_SIZE_MIN, BP_PAGE_SIZE_MAX);
		return -EINVAL;
	}
	if (*nframes < 2 || *nframes >= (UINT32_C(1) << 30)) {
		CFG_ERR(cfg, "bp_open: nframes %u out of range [2, 2^30)", *nframes);
		return -EINVAL;
	}
	if (cfg->io_engine > BP_IO_ENGINE_URING) {
		CFG_ERR(cfg, "bp_open: io_engine %u unknown", cfg->io_engine);
		return -EINVAL;
	}
	if (cfg->read_path > BP_READ_CACHED) {
		CFG_ERR(cfg, "bp_open: read_path %u unknown", cfg->read_path);
		return -EINVAL;
	}
	if (cfg->io_depth > BP_IO_DEPTH_MAX) {
		CFG_ERR(cfg, "bp_open: io_depth %u > %u", cfg->io_depth, BP_IO_DEPTH_MAX);
		return -EINVAL;
	}
	if (cfg->io_threads > BP_MAX_IO_THREADS) {
		CFG_ERR(cfg, "bp_open: io_threads %u > %u", cfg->io_threads, BP_MAX_IO_THREADS);
		return -EINVAL;
	}
	const unsigned known = BP_OPEN_CREATE | BP_OPEN_TRUNCATE | BP_OPEN_DIRECT |
			       BP_OPEN_NO_BGWRITER | BP_OPEN_NO_READAHEAD | BP_OPEN_READONLY |
			       BP_OPEN_CHECKSUMS;
	if (cfg->flags & ~known) {
		CFG_ERR(cfg, "bp_open: unknown flags 0x%x", cfg->flags & ~known);
		return -EINVAL;
	}
	if ((cfg->flags & BP_OPEN_READONLY) && (cfg->flags & (BP_OPEN_CREATE | BP_OPEN_TRUNCATE))) {
		CFG_ERR(cfg, "bp_open: read-only excludes create/truncate");
		return -EINVAL;
	}
	return 0;
}

static int alloc_memory(struct bp_pool *p)
{
	unsigned arena;
	if (bp_pagemem_create(&arena) < 0)
		return -ENOMEM;
	p->arena = arena;
	p->pages_bytes = (size_t)p->nframes * p->page_size;
	p->frames_bytes = (size_t)p->nframes * sizeof(struct bp_frame);
	p->pages = bp_pagemem_alloc(arena, p->pages_bytes, p->page_size);
	p->frames = bp_pagemem_alloc(arena, p->frames_bytes, BP_CACHELINE);
	if (!p->pages || !p->frames) {
		/* free_memory destroys the arena only with both blocks. */
		bp_pagemem_free(arena, p->pages);
		bp_pagemem_free(arena, p->frames);
		bp_pagemem_destroy(arena);
		p->pages = NULL;
		p->frames = NULL;
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < p->nframes; i++) {
		struct bp_frame *f = &p->frames[i];
		atomic_init(&f->state, 0);
		atomic_init(&f->io_err, 0);
		atomic_init(&f->latch, 0);
		atomic_init(&f->tag, BP_NO_PAGE);
		atomic_init(&f->wait_ns, 0);
		atomic_init(&f->version, 0);
		atomic_init(&f->hash_next, BP_NONE_IDX);
		bp_debug_x_dropped(f); /* debug-checks build: no exclusive holder */
		f->index = i;
		f->data = p->pages + (size_t)i * p->page_size;
	}
	return 0;
}

static void free_memory(struct bp_pool *p)
{
	if (!p->pages || !p->frames)
		return;
	bp_pagemem_free(p->arena, p->pages);
	bp_pagemem_free(p->arena, p->frames);
	bp_pagemem_destroy(p->arena);
}

static int build_page_table(struct bp_pool *p, unsigned partitions)
{
	unsigned np = partitions ? partitions : (p->nframes >= 4096 ? 128 : 32);
	np = 1u << log2u(np);
	unsigned bshift = log2u((uint64_t)p->nframes * 2);
	if (bshift < 6)
		bshift = 6;
	p->nbuckets = 1u << bshift;
	if (np > p->nbuckets)
		np = p->nbuckets;
	p->npart = np;
	p->bucket_shift = 64 - bshift;
	p->heads = malloc(sizeof(*p->heads) * p->nbuckets);
	p->parts = aligned_alloc(BP_CACHELINE, sizeof(*p->parts) * np);
	if (!p->heads || !p->parts)
		return -ENOMEM;
	memset(p->parts, 0, sizeof(*p->parts) * np);
	for (unsigned i = 0; i < p->nbuckets; i++)
		atomic_init(&p->heads[i], BP_NONE_IDX);
	for (unsigned i = 0; i < np; i++) {
		if (pthread_rwlock_init(&p->parts[i].lock, NULL)) {
			p->npart = i;
			return -ENOMEM;
		}
	}
	debug_lock_rank_range(&p->parts[0].lock, np, sizeof(struct bp_partition),
			      UTIL_RANK_BP_PARTITION, "bufpool partition lock");
	return 0;
}

/* A choice of the config, asked (0 is AUTO for both): asked, or for AUTO
 * the environment variable var's value, names[v] standing for v (NULL
 * names none; an unknown or absent value is AUTO).  BP_IO_ENGINE (auto,
 * threads, uring) and BP_READ_PATH (auto, engine, cached) are how tests
 * and CI run one build on each engine and read path.  Read once per
 * bp_open; the pool keeps no global state. */
static unsigned wanted(unsigned asked, const char *var, const char *const names[], unsigned n)
{
	const char *env = asked ? NULL : getenv(var);
	for (unsigned v = 0; env && v < n; v++)
		if (names[v] && !strcmp(env, names[v]))
			return v;
	return asked;
}

static unsigned engine_wanted(const struct bp_config *cfg)
{
	static const char *const names[] = {
		[BP_IO_ENGINE_THREADS] = "threads", [BP_IO_ENGINE_URING] = "uring" };
	return wanted(cfg->io_engine, "BP_IO_ENGINE", names, BP_IO_ENGINE_URING + 1);
}

static unsigned read_path_wanted(const struct bp_config *cfg)
{
	static const char *const names[] = {
		[BP_READ_ENGINE] = "engine", [BP_READ_CACHED] = "cached" };
	return wanted(cfg->read_path, "BP_READ_PATH", names, BP_READ_CACHED + 1);
}

/* Stages reached by bp_open, undone in reverse by pool_destroy. */
enum { ST_MEM = 1, ST_PT, ST_FAULT, ST_IO, ST_WRITER };

static void pool_destroy(struct bp_pool *p, int stage)
{
	/* First: the stats publisher reads frames and counters (statspub.c
	 * set the hook when it started one). */
	if (p->statspub_stop)
		p->statspub_stop(p);
	if (stage >= ST_WRITER)
		bp_writer_stop(p);
	if (stage >= ST_IO)
		bp_io_stop(p);
	if (stage >= ST_FAULT)
		bp_fault_destroy(p);
	if (stage >= ST_PT)
		for (unsigned i = 0; i < p->npart; i++)
			pthread_rwlock_destroy(&p->parts[i].lock);
	bp_account_fini(p);
	free(p->parts);
	free(p->heads);
	fwait_table_destroy(p->wt); /* NULL (not built yet) is a no-op */
	free_memory(p);
	/* Last: no frame, I/O thread or writer is left to use a file. */
	for (uint32_t i = 0; i < BP_MAX_FILES; i++) {
		struct bp_file *file = atomic_load_explicit(&p->files[i], memory_order_relaxed);
		if (file)
			bp_file_teardown(p, file);
	}
	pthread_mutex_destroy(&p->files_lock);
	free(p);
}

int bp_open(struct bp_pool **out, const struct bp_config *ucfg)
{
	if (!out || !ucfg)
		return -EINVAL;
	/* The caller's layout may be older (shorter: its missing fields are
	 * 0, their default) or newer than ours; from here on only our copy. */
	struct bp_config copy;
	const struct bp_config *cfg = &copy;
	int r = bp_struct_in(&copy, sizeof copy, ucfg, ucfg->size, BP_CONFIG_SIZE_VER0);
	if (r == -E2BIG)
		CFG_ERR(ucfg, "bp_open: config of %zu bytes sets a field this library "
			"(%zu bytes, version %d) does not know", ucfg->size, sizeof copy,
			BP_VERSION);
	if (r < 0)
		return r;
	uint32_t page_size, nframes;
	r = check_config(cfg, &page_size, &nframes);
	if (r < 0)
		return r;
	struct bp_pool *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (pthread_mutex_init(&p->files_lock, NULL)) {
		free(p);
		return -ENOMEM;
	}
	debug_lock_rank(&p->files_lock, UTIL_RANK_BP_FILES, "bufpool files_lock");
	p->flags = cfg->flags;
	p->page_size = page_size;
	p->page_shift = log2u(page_size);
	p->nframes = nframes;
	p->readahead = (cfg->flags & BP_OPEN_NO_READAHEAD) ? 0
		     : cfg->readahead_pages ? cfg->readahead_pages : BP_READAHEAD_DEFAULT;
	p->io_latency_us = cfg->io_latency_us;
	p->read_path = read_path_wanted(cfg);
	p->writer_interval_ms = cfg->writer_interval_ms ? cfg->writer_interval_ms
							: BP_WRITER_INTERVAL_MS_DEFAULT;
	p->log = cfg->log;
	p->log_arg = cfg->log_arg;
	p->flush_log = cfg->flush_log;
	p->flush_log_arg = cfg->flush_log_arg;
	p->io_trace = cfg->io_trace;
	p->io_trace_arg = cfg->io_trace_arg;
	atomic_init(&p->durable_lsn, 0);
	atomic_init(&p->clock_hand, 0);
	atomic_init(&p->write_err, 0);
	atomic_init(&p->unpin_seq, 0);
	atomic_init(&p->frame_waiters, 0);
	atomic_init(&p->statspub, NULL);
	atomic_init(&p->stats_reset_ns, 0);
	atomic_init(&p->pub_ops, 0);

	/* The wait table first: it is the last part of the config that can be
	 * refused, and that must happen before open() may truncate the file. */
	if ((r = fwait_table_create(&p->wt, &cfg->fwait)) < 0) {
		if (r == -EINVAL) /* the only config field fwait checks itself */
			CFG_ERR(cfg, "bp_open: fwait config refused (policy %d, nbuckets %u, "
				"max_steals %u)", (int)cfg->fwait.policy, cfg->fwait.nbuckets,
				cfg->fwait.max_steals);
		pool_destroy(p, 0);
		return r;
	}

	/* File 0, the pool's first (bp_pool_file). */
	struct bp_file *main_file;
	if ((r = bp_file_setup(p, cfg->path, cfg->flags, &main_file)) < 0) {
		pool_destroy(p, 0);
		return r;
	}

	int stage = 0;
	if ((r = alloc_memory(p)) < 0)
		goto fail;
	stage = ST_MEM;
	if ((r = build_page_table(p, cfg->partitions)) < 0)
		goto fail;
	stage = ST_PT;
	/* The per-CPU counters (pool_destroy frees them at any stage). */
	if ((r = bp_account_init(p)) < 0)
		goto fail;
	if ((r = bp_fault_init(p)) < 0)
		goto fail;
	stage = ST_FAULT;
	int why;
	if ((r = bp_io_start(p, engine_wanted(cfg), cfg->io_depth ? cfg->io_depth
			      : BP_IO_DEPTH_DEFAULT, &why)) < 0) {
		if (r == -EOPNOTSUPP)
			CFG_ERR(cfg, "bp_open: io_uring engine unavailable: %s",
				why == EOPNOTSUPP ? "built without liburing" : strerror(why));
		goto fail;
	}
	stage = ST_IO;
	if ((r = bp_io_spawn(p, cfg->io_threads ? cfg->io_threads : BP_IO_THREADS_DEFAULT)) < 0)
		goto fail;
	if ((r = bp_writer_start(p)) < 0)
		goto fail;
	stage = ST_WRITER;
	*out = p;
	return 0;
fail:
	pool_destroy(p, stage);
	return r;
}

/* caller: "bp_close" or "bp_discard", for the message. */

static bool any_dirty(struct bp_pool *p)
{
	for (uint32_t i = 0; i < p->nframes; i++)
		if (atomic_load_explicit(&p->frames[i].state, memory_order_relaxed) & BP_F_DIRTY)
			return true;
	return false;
}

/* Stop the writer and let in-flight writes drop their pins, so only the
 * callers' pins remain; -EBUSY (writer restarted) if any remain. */
static int quiesce(struct bp_pool *pool, const char *caller)
{
	bp_writer_stop(pool);
	for (uint32_t i = 0; i < pool->nframes; i++)
		bp_wait_writeback(pool, &pool->frames[i], NULL);
	if (bp_check_unpinned(pool, NULL, 0, caller) < 0) {
		bp_writer_start(pool);
		return -EBUSY;
	}
	return 0;
}

/* bp_close's report when its flush failed, the one place it is worded.
 * write_err is the first write error since the previous flush, which may be
 * stale (the page written again since: then nothing is dirty), fsync_err
 * the fsync's; both negative errno or 0, at least one non-zero. */
static void log_close_failure(struct bp_pool *p, int write_err, int fsync_err, bool dirty)
{
	/* The fsync's text is copied first: a second strerror in the same
	 * argument list may reuse the first one's buffer. */
	char fsync_too[96] = "";
	if (write_err && fsync_err)
		snprintf(fsync_too, sizeof(fsync_too), "; fsync failed too (%s)",
			 strerror(-fsync_err));
	if (write_err && dirty)
		bp_log(p->log, p->log_arg, BP_LOG_ERROR,
		       "bp_close: a write-back failed (%s)%s; pool left open (dirty pages kept)",
		       strerror(-write_err), fsync_too);
	else if (write_err)
		bp_log(p->log, p->log_arg, BP_LOG_ERROR,
		       "bp_close: a write-back failed earlier (%s); the page has since been "
		       "written%s; pool left open", strerror(-write_err), fsync_too);
	else
		bp_log(p->log, p->log_arg, BP_LOG_ERROR,
		       "bp_close: fsync failed (%s); pool left open%s; durability lost for "
		       "good: pages written before it may be gone, so no close can succeed: "
		       "bp_discard the pool, reopen the file and recover", strerror(-fsync_err),
		       dirty ? " (dirty pages kept)" : "");
}

int bp_close(struct bp_pool *pool)
{
	if (!pool)
		return -EINVAL;
	int r = quiesce(pool, "bp_close");
	if (r < 0)
		return r;
	int fsync_err;
	int write_err = bp_flush_errors(pool, &fsync_err);
	r = write_err ? write_err : fsync_err;
	if (r < 0) {
		/* Freeing now could lose pages the file does not have, or hide
		 * a failed write or fsync: keep the pool, so the caller can
		 * retry once the cause is fixed, or give up explicitly with
		 * bp_discard. */
		log_close_failure(pool, write_err, fsync_err, any_dirty(pool));
		bp_writer_start(pool);
		return r;
	}
	pool_destroy(pool, ST_IO);
	return 0;
}

int bp_discard(struct bp_pool *pool)
{
	if (!pool)
		return -EINVAL;
	int r = quiesce(pool, "bp_discard");
	if (r < 0)
		return r;
	pool_destroy(pool, ST_IO);
	return 0;
}

int bp_durability_err(const struct bp_pool *pool)
{
	if (!pool)
		return -EINVAL;
	/* Relaxed: a report (bufpool.h); io.c's fsync_lock orders the fsyncs. */
	for (uint32_t i = 0; i < BP_MAX_FILES; i++) {
		struct bp_file *file = atomic_load_explicit(&((struct bp_pool *)pool)->files[i],
							    memory_order_acquire);
		int r = file ? bp_file_durability_err(file) : 0;
		if (r)
			return r;
	}
	return 0;
}

struct fwait_table *bp_fwait_table(struct bp_pool *pool)
{
	return pool ? pool->wt : NULL;
}

uint32_t bp_page_size(const struct bp_pool *pool)
{
	return pool ? pool->page_size : 0;
}

uint32_t bp_data_size(const struct bp_pool *pool)
{
	if (!pool)
		return 0;
	return pool->page_size - ((pool->flags & BP_OPEN_CHECKSUMS) ? BP_CHECKSUM_BYTES : 0);
}

uint32_t bp_nframes(const struct bp_pool *pool)
{
	return pool ? pool->nframes : 0;
}

uint64_t bp_page_count(const struct bp_pool *pool)
{
	return pool ? bp_file_page_count(bp_file0((struct bp_pool *)pool)) : 0;
}
