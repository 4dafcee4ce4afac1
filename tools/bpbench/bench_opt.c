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
