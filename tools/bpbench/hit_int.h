/* SPDX-License-Identifier: MIT */
/*
 * hit_int.h - the internal interface of bpbench hit, shared by its files.
 *
 * Design note
 * -----------
 * Layer: bpbench, directly on bufpool (no store), with util for the
 * clock, the PRNG, the emitter and the option parser, and cpu.h for
 * rusage.  bpbench hit measures what one access to a resident page costs:
 * every page of the file fits in the pool and is read once before the
 * clock starts, so every measured bp_get is a hit (the pool's own
 * counters are checked afterwards: no miss, no eviction).  The files, one
 * job each:
 *   hit.c         bpbench_hit_main: the data, the matrix of cells (each
 *                 repeated), the exit status;
 *   hit_opts.c    the options, the usage text, the derived sizes;
 *   hit_data.c    the data file, the pool with every page resident, the
 *                 floor's array;
 *   hit_run.c     the access modes (the table below) and one cell: its
 *                 workers, timed;
 *   hit_report.c  the config line, the table rows and the JSON lines.
 *
 * The matrix: every access mode x every pattern x every thread count,
 * each cell run --repeat times for --duration seconds.  A cell's figure
 * is per-thread latency, wall x threads / accesses, so a flat line over
 * thread counts is perfect scaling; while threads <= CPUs it is also what
 * one access costs.  Past the CPUs it counts time spent descheduled, so
 * the CPU time per access (rusage) is printed beside it.
 *
 * Access modes are rows of one table (hit_modes[], hit_run.c), indexed by
 * enum hit_mode_id: a mode is a name, whether it needs the pool, and its
 * worker loop; nothing else here knows the modes.
 * HIT_MEMORY is the floor: every row's ratio is to its median at the
 * same pattern and thread count (so it stays the first row printed).
 *
 * Output: every human line through a table emitter (stdout, or stderr
 * with --json, as bpbench ycsb), every JSON line through a compact
 * emitter on stdout (--json only): a "config" line, one "hit" line per
 * cell, a "pool" line with the pool's counters.  Diagnostics and the
 * progress line (a terminal only) go to stderr.
 */
#ifndef TOOLS_BPBENCH_HIT_INT_H
#define TOOLS_BPBENCH_HIT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bufpool/bufpool.h"
#include "util/emitter.h"

#define HIT_PROG "bpbench hit"

/* ---- Modes and patterns ----------------------------------------------------- */

enum hit_mode_id {
	HIT_MEMORY = 0, /* the floor: a byte of a plain array, no pool */
	HIT_PIN,        /* bp_get, read a byte, bp_release */
	HIT_LATCHED,    /* bp_get, bp_latch SHARED, read, bp_unlatch, bp_release */
	HIT_OPTIMISTIC, /* bp_read_begin, read, bp_read_end: no pin, no latch */
	HIT_MODE_COUNT
};

struct hit_worker;
struct hit_mode {
	const char *name;
	const char *help;  /* one line of --help */
	bool uses_pool;
	/* Access pages until the cell's stop flag: 0, or the first error
	 * (the worker records which call and page). */
	int (*loop)(struct hit_worker *w);
};
extern const struct hit_mode hit_modes[HIT_MODE_COUNT];

enum hit_pattern {
	HIT_RANDOM = 0, /* a uniform random page per access (util/prng.h) */
	HIT_HOT,        /* every thread the same page: a B-tree root */
	HIT_PATTERN_COUNT
};
extern const char *const hit_pattern_names[HIT_PATTERN_COUNT];

/* The page of the hot pattern. */
#define HIT_HOT_PAGE 0u

/* Every byte of page p holds hit_page_byte(p), in the file and in the
 * floor's array, so each access checks it read its own page. */
static inline uint8_t hit_page_byte(uint64_t p)
{
	return (uint8_t)(p ^ (p >> 8) ^ 0x5a);
}

/* ---- Options ---------------------------------------------------------------- */

#define HIT_MAX_THREADS 1024u
#define HIT_MAX_COUNTS 16u        /* thread counts in --threads */
#define HIT_MAX_REPEAT 100u
#define HIT_MAX_PAGES (1u << 24)  /* 64 GiB of 4 KiB pages: far past any test */
#define HIT_DEFAULT_PAGES 8192u   /* 32 MiB: past the caches, not past memory */
#define HIT_DEFAULT_DURATION_S 1.0
#define HIT_DEFAULT_REPEAT 3u
#define HIT_DEFAULT_SEED 13u      /* issue 13 */
/* Frames beyond the pages: see hit_frames_for. */
#define HIT_SPARE_FRAMES 64u

struct hit_options {
	uint32_t pages, page_size;
	unsigned threads[HIT_MAX_COUNTS];
	unsigned nthreads;
	double duration_s;
	unsigned repeat;
	uint64_t seed;
	bool modes[HIT_MODE_COUNT];   /* --modes: which rows run */
	const char *file;             /* NULL: a temporary file */
	bool keep_file, json;
};

/* hit_opts.c: 0, 1 (help printed) or -EINVAL (message printed). */
int hit_parse_options(int argc, char **argv, struct hit_options *o);
/* Frames of the pool: the pages and HIT_SPARE_FRAMES more, so that no
 * page ever needs another's frame and the clock never runs. */
uint32_t hit_frames_for(const struct hit_options *o);

/* ---- Data and cells ----------------------------------------------------------- */

/* What every cell reads: the pool (every page resident) and the floor's
 * array of the same pages (NULL unless the memory mode runs). */
struct hit_data {
	const struct hit_options *opt;
	struct bp_pool *pool;
	uint8_t *mem;
	unsigned page_shift;          /* log2 of the page size */
};

/* One run of one cell. */
struct hit_sample {
	uint64_t accesses;            /* all threads' */
	double wall_s, cpu_s;         /* cpu_s: user + system, the whole process */
	long vcsw, ivcsw;             /* voluntary, involuntary context switches */
};

/* hit_data.c: write the file at path (every page filled), open the pool on
 * it and read every page once, allocate and fill the floor's array.  0 or
 * -errno (reported); on an error d holds what must still be closed. */
int hit_data_open(struct hit_data *d, const struct hit_options *o, const char *path);
/* Close the pool (its error returned, after a message) and free the
 * array; d is then empty. */
int hit_data_close(struct hit_data *d);
/* hit_run.c: run one cell: threads workers access pages in mode and pattern for
 * --duration seconds.  Worker i's random pages are stream i of --seed in
 * every cell, so every mode reads the same pages.  0 or -errno (reported
 * on stderr). */
int hit_run_cell(const struct hit_data *d, enum hit_mode_id mode, enum hit_pattern pattern,
		 unsigned threads, struct hit_sample *out);

/* The sample of (mode, pattern, the t-th thread count, repeat r) in the
 * matrix's flat array. */
static inline size_t hit_index(const struct hit_options *o, int mode, int pattern, unsigned t,
			       unsigned r)
{
	return (((size_t)mode * HIT_PATTERN_COUNT + (size_t)pattern) * o->nthreads + t) * o->repeat
	       + r;
}

/* ---- Reports (hit_report.c) ------------------------------------------------- */

struct hit_report {
	struct emitter *out;          /* table emitter (the human report) */
	struct emitter *json;         /* compact emitter on stdout; NULL without --json */
};

/* s: the pool's configuration (frames, partitions, bytes). */
void hit_report_config(const struct hit_report *R, const struct hit_options *o,
		       const struct bp_stats *s, const char *path);
/* Every cell of the matrix: the table (one row per mode, pattern and
 * thread count) and one JSON line per cell.  all: hit_index's layout. */
void hit_report_cells(const struct hit_report *R, const struct hit_options *o,
		      const struct hit_sample *all);
/* The pool's counters over the measured cells: expected pool accesses
 * against its hits, misses and evictions. */
void hit_report_pool(const struct hit_report *R, const struct bp_stats *s, uint64_t accesses);

#endif
