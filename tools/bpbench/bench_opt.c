/*
 * bench_opt.c - bpbench's option values on top of util/opt.h (see
 * bench_opt.h).
 *
 * Design note: layer: bpbench, on util (layer 0) and bufpool.h's limits;
 * each function is one util_opt_* call plus the check it cannot express.
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

/* One table per choice: the name a user types, the value it stands for. */
struct bench_name {
	const char *name;
	unsigned value;
};

static const struct bench_name io_engines[] = {
	{"auto", BP_IO_ENGINE_AUTO}, {"threads", BP_IO_ENGINE_THREADS}, {"uring", BP_IO_ENGINE_URING},
};
static const struct bench_name read_paths[] = {
	{"auto", BP_READ_AUTO}, {"engine", BP_READ_ENGINE}, {"cached", BP_READ_CACHED},
};

static int by_name(const char *prog, const char *opt, const struct bench_name *t, size_t n,
		   const char *s, unsigned *out)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, t[i].name)) {
			*out = t[i].value;
			return 0;
		}
	fprintf(stderr, "%s: %s wants", prog, opt);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s %s", i == 0 ? "" : i + 1 == n ? " or" : ",", t[i].name);
	fprintf(stderr, ", not '%s'\n", s);
	return -EINVAL;
}

static const char *name_of(const struct bench_name *t, size_t n, unsigned v)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].value == v)
			return t[i].name;
	return "?";
}

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

int bench_opt_io_engine(const char *prog, const char *s, unsigned *out)
{
	return by_name(prog, "--io-engine", io_engines, NELEM(io_engines), s, out);
}

int bench_opt_read_path(const char *prog, const char *s, unsigned *out)
{
	return by_name(prog, "--read-path", read_paths, NELEM(read_paths), s, out);
}

const char *bench_io_engine_name(unsigned engine)
{
	return name_of(io_engines, NELEM(io_engines), engine);
}

const char *bench_read_path_name(unsigned path)
{
	return name_of(read_paths, NELEM(read_paths), path);
}
