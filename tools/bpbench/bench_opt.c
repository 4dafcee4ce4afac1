/* SPDX-License-Identifier: MIT */
/*
 * bench_opt.c - bpbench's option values on top of util/opt.h (see
 * bench_opt.h).
 *
 * Design note: layer: bpbench, on util (layer 0) and bufpool.h's limits;
 * each number's function is one util_opt_* call plus the check it cannot
 * express; every name option is one bench_choice table and the one lookup,
 * bench_opt_choice, so all refuse a name in one format.
 */
#include "bench_opt.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bufpool/bufpool.h"
#include "util/opt.h"

int bench_opt_u32(const char *prog, const char *opt, const char *s, uint32_t min, uint32_t max,
		  uint32_t *out)
{
	uint64_t v;
	int rc = util_opt_u64(prog, opt, s, min, max, &v);

	if (rc == 0)
		*out = (uint32_t)v;
	return rc;
}

int bench_opt_page_size(const char *prog, const char *s, uint32_t *out)
{
	uint32_t v;
	int rc = bench_opt_u32(prog, "--page-size", s, BP_PAGE_SIZE_MIN, BP_PAGE_SIZE_MAX, &v);

	if (rc == 0 && (v & (v - 1)) != 0) {
		fprintf(stderr, "%s: --page-size wants a power of two in [%u, %u], not '%s'\n", prog,
			BP_PAGE_SIZE_MIN, BP_PAGE_SIZE_MAX, s);
		rc = -EINVAL;
	}
	if (rc == 0)
		*out = v;
	return rc;
}

int bench_opt_frames_fit(const char *prog, uint32_t frames, uint32_t threads)
{
	if ((uint64_t)frames < 8ull * threads + 8) {
		fprintf(stderr, "%s: --frames %u is too small for %u threads "
			"(need >= 8 per thread + 8 = %llu)\n", prog, frames, threads,
			8ull * threads + 8);
		return -EINVAL;
	}
	return 0;
}

int bench_opt_double_above(const char *prog, const char *opt, const char *s, double lo,
			   double hi, bool hi_closed, double *out)
{
	double v;
	int rc = util_opt_double(prog, opt, s, lo, hi, &v);

	/* util_opt_double took [lo, hi]; refuse the open ends */
	if (rc == 0 && (v == lo || (v == hi && !hi_closed))) {
		fprintf(stderr, "%s: %s wants a number in (%g, %g%c, not '%s'\n", prog, opt, lo, hi,
			hi_closed ? ']' : ')', s);
		rc = -EINVAL;
	}
	if (rc == 0)
		*out = v;
	return rc;
}

int bench_opt_choice(const char *prog, const char *opt, const char *s,
		     const struct bench_choice *tab, size_t n, int *out)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, tab[i].name)) {
			*out = tab[i].value;
			return 0;
		}
	fprintf(stderr, "%s: %s wants", prog, opt);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s %s", i == 0 ? "" : i + 1 == n ? " or" : ",", tab[i].name);
	fprintf(stderr, ", not '%s'\n", s);
	return -EINVAL;
}

const char *bench_choice_name(const struct bench_choice *tab, size_t n, int value)
{
	for (size_t i = 0; i < n; i++)
		if (tab[i].value == value)
			return tab[i].name;
	return "?";
}

static const struct bench_choice io_engines[] = {
	{"auto", BP_IO_ENGINE_AUTO}, {"threads", BP_IO_ENGINE_THREADS}, {"uring", BP_IO_ENGINE_URING},
};
static const struct bench_choice read_paths[] = {
	{"auto", BP_READ_AUTO}, {"engine", BP_READ_ENGINE}, {"cached", BP_READ_CACHED},
};

/* The options whose value is an unsigned field of the tools' options. */
static int choice_unsigned(const char *prog, const char *opt, const char *s,
			   const struct bench_choice *tab, size_t n, unsigned *out)
{
	int v;
	int rc = bench_opt_choice(prog, opt, s, tab, n, &v);
	if (rc == 0)
		*out = (unsigned)v;
	return rc;
}

int bench_opt_io_engine(const char *prog, const char *s, unsigned *out)
{
	return choice_unsigned(prog, "--io-engine", s, io_engines, BENCH_NCHOICES(io_engines), out);
}

int bench_opt_read_path(const char *prog, const char *s, unsigned *out)
{
	return choice_unsigned(prog, "--read-path", s, read_paths, BENCH_NCHOICES(read_paths), out);
}

const char *bench_io_engine_name(unsigned engine)
{
	return bench_choice_name(io_engines, BENCH_NCHOICES(io_engines), (int)engine);
}

const char *bench_read_path_name(unsigned path)
{
	return bench_choice_name(read_paths, BENCH_NCHOICES(read_paths), (int)path);
}
