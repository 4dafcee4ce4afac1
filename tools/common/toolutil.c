/*
 * toolutil.c - strict integer option parsing and the pools' log callback,
 * shared by the tools (see toolutil.h).
 */
#include "toolutil.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

int tool_parse_u64(const char *tool, const char *opt, const char *s, uint64_t min,
		   uint64_t max, uint64_t *out)
{
	char *end;

	errno = 0;
	if (s != NULL && *s != '\0' && *s != '-') {
		unsigned long long v = strtoull(s, &end, 10);
		if (errno == 0 && *end == '\0' && v >= min && v <= max) {
			*out = v;
			return 0;
		}
	}
	fprintf(stderr, "%s: %s wants an integer in [%" PRIu64 ", %" PRIu64 "], not '%s'\n",
		tool, opt, min, max, s ? s : "");
	return -EINVAL;
}

int tool_parse_unsigned(const char *tool, const char *opt, const char *s, unsigned min,
			unsigned max, unsigned *out)
{
	uint64_t v;
	int rc = tool_parse_u64(tool, opt, s, min, max, &v);

	if (rc == 0)
		*out = (unsigned)v;
	return rc;
}

void tool_bp_log(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	fprintf(stderr, "bufpool: %s\n", msg);
}
