/* SPDX-License-Identifier: MIT */
/*
 * util/opt.c - strict option values (see opt.h).
 */
#include "util/opt.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int util_opt_u64(const char *prog, const char *opt, const char *s, uint64_t min, uint64_t max,
		 uint64_t *out)
{
	if (s && isdigit((unsigned char)s[0])) {
		bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
		const char *digits = hex ? s + 2 : s;
		char *end;

		errno = 0;
		unsigned long long v = strtoull(digits, &end, hex ? 16 : 10);
		if (isxdigit((unsigned char)digits[0]) && errno == 0 && *end == '\0' &&
		    v >= min && v <= max) {
			*out = v;
			return 0;
		}
	}
	fprintf(stderr, "%s: %s wants an integer in [%" PRIu64 ", %" PRIu64 "], not '%s'\n", prog,
		opt, min, max, s ? s : "");
	return -EINVAL;
}

int util_opt_unsigned(const char *prog, const char *opt, const char *s, unsigned min,
		      unsigned max, unsigned *out)
{
	uint64_t v;
	int rc = util_opt_u64(prog, opt, s, min, max, &v);

	if (rc == 0)
		*out = (unsigned)v;
	return rc;
}

int util_opt_double(const char *prog, const char *opt, const char *s, double min, double max,
		    double *out)
{
	if (s && *s && !isspace((unsigned char)s[0])) {
		char *end;

		errno = 0;
		double v = strtod(s, &end);
		if (errno == 0 && *end == '\0' && isfinite(v) && v >= min && v <= max) {
			*out = v;
			return 0;
		}
	}
	fprintf(stderr, "%s: %s wants a number in [%g, %g], not '%s'\n", prog, opt, min, max,
		s ? s : "");
	return -EINVAL;
}

int util_opt_list(const char *prog, const char *opt, const char *s,
		  int (*item)(const char *tok, void *arg), void *arg)
{
	char buf[256];
	unsigned n = 0;
	if (strlen(s) < sizeof(buf)) {
		strcpy(buf, s);
		char *save = NULL;
		for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), n++)
			if (item(tok, arg) != 0)
				return -EINVAL;
		if (n > 0)
			return 0;
	}
	fprintf(stderr, "%s: %s wants a comma-separated list, not '%s'\n", prog, opt, s);
	return -EINVAL;
}
