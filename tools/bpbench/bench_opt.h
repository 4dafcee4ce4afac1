/* SPDX-License-Identifier: MIT */
/*
 * bench_opt.h - the option values both bpbench workloads take beyond what
 * util/opt.h checks: 32-bit counts, a page size, a number with open ends,
 * a name from a table of choices.
 *
 * Design note: bpbench's, on util/opt.h (layer 0) and bufpool.h's page
 * size limits and engine names.  Each wraps one util_opt_* call and adds the one check it
 * cannot express; a refusal prints one line on stderr in util/opt.h's
 * format ("<prog>: <opt> wants ..., not '<s>'") and returns -EINVAL with
 * *out unchanged.
 */
#ifndef TOOLS_BPBENCH_BENCH_OPT_H
#define TOOLS_BPBENCH_BENCH_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int bench_opt_u32(const char *prog, const char *opt, const char *s, uint32_t min, uint32_t max,
		  uint32_t *out);
/* --page-size: a power of two in [BP_PAGE_SIZE_MIN, BP_PAGE_SIZE_MAX]. */
int bench_opt_page_size(const char *prog, const char *s, uint32_t *out);
/* The store's frames for T threads: each pins at most a root-to-leaf path
 * plus a new page, so a pool needs >= 8 frames a thread + 8; -EINVAL (with
 * the message) below that. */
int bench_opt_frames_fit(const char *prog, uint32_t frames, uint32_t threads);
/* A number in (lo, hi), or (lo, hi] when hi_closed. */
int bench_opt_double_above(const char *prog, const char *opt, const char *s, double lo,
			   double hi, bool hi_closed, double *out);

/* One table per choice: the name a user types, the value it stands for. */
struct bench_choice {
	const char *name;
	int value;
};
#define BENCH_NCHOICES(tab) (sizeof(tab) / sizeof((tab)[0]))

/* *out = the value of the row of tab[0..n) named s; a refusal lists the
 * names: "<prog>: <opt> wants a, b or c, not '<s>'". */
int bench_opt_choice(const char *prog, const char *opt, const char *s,
		     const struct bench_choice *tab, size_t n, int *out);
/* The name of value's row in tab[0..n), or "?". */
const char *bench_choice_name(const struct bench_choice *tab, size_t n, int value);

/* --io-engine: auto, threads or uring (enum bp_io_engine_kind). */
int bench_opt_io_engine(const char *prog, const char *s, unsigned *out);
/* --read-path: auto, engine or cached (enum bp_read_path). */
int bench_opt_read_path(const char *prog, const char *s, unsigned *out);
/* Their names, for the reports. */
const char *bench_io_engine_name(unsigned engine);
const char *bench_read_path_name(unsigned path);

#endif
