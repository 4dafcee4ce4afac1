/* SPDX-License-Identifier: MIT */
/*
 * kv_check_cmd.c - bpbench check: kv_check on an existing store file.
 *
 * Design note
 * -----------
 * Layer: on the store (kv_open read-only, kv_check, kv_close), with util's
 * option parser and the tools' pool log callback; see kv_check_cmd.h for
 * why it is not in libkv.  The pool is opened read-only without the
 * background writer, so a check never writes the file it checks.  One line
 * on stdout when the tree is well formed, one on stderr when it is not.
 */
#include "kv_check_cmd.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kv.h"
#include "toolutil.h"
#include "util/opt.h"

#define CHECK_PROG "bpbench check"

static int usage(FILE *f, int status)
{
	fprintf(f, "usage: bpbench check --file PATH [--frames N (>= 16)] [--page-size B]\n");
	return status;
}

int kv_check_cmd(int argc, char **argv)
{
	static const struct option lo[] = {{"file", 1, 0, 'f'}, {"frames", 1, 0, 'n'},
		{"page-size", 1, 0, 'p'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
	const char *file = NULL;
	uint64_t frames = 256, page_size = 4096;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:h", lo, NULL)) != -1) {
		if (c == 'f')
			file = optarg;
		else if (c == 'n' &&
			 util_opt_u64(CHECK_PROG, "--frames", optarg, 16, UINT32_MAX, &frames) == 0)
			;
		else if (c == 'p' &&
			 util_opt_u64(CHECK_PROG, "--page-size", optarg, BP_PAGE_SIZE_MIN,
				      BP_PAGE_SIZE_MAX, &page_size) == 0 &&
			 !(page_size & (page_size - 1)))
			;
		else
			return c == 'h' ? usage(stdout, 0) : usage(stderr, 2);
	}
	if (!file || optind < argc) {
		fprintf(stderr, "usage: bpbench check --file PATH [--frames N] [--page-size B]\n");
		return 2;
	}
	struct kv_store *kv;
	struct kv_config kc = {.path = file};
	kc.pool.nframes = (uint32_t)frames;
	kc.pool.page_size = (uint32_t)page_size;
	kc.pool.flags = BP_OPEN_READONLY | BP_OPEN_NO_BGWRITER;
	kc.pool.log = tool_bp_log;
	int rc = kv_open(&kv, &kc);
	if (rc) {
		fprintf(stderr, CHECK_PROG ": cannot open %s: %s%s\n", file, strerror(-rc),
			rc == -EBADMSG ? " (not a store, or another --page-size)" : "");
		return 1;
	}
	struct kv_check_info ci;
	rc = kv_check(kv, &ci);
	if (rc)
		fprintf(stderr, CHECK_PROG ": %s: FAILED: %s\n", file,
			ci.error[0] ? ci.error : strerror(-rc));
	else
		printf(CHECK_PROG ": %s: OK: %" PRIu64 " keys, %" PRIu64 " leaves, %" PRIu64
		       " inner nodes, height %u, value size %u\n", file, ci.nkeys, ci.leaves,
		       ci.internal, ci.height, kv_value_size(kv));
	int crc = kv_close(kv);
	return rc || crc ? 1 : 0;
}
