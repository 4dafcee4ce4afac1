/* SPDX-License-Identifier: MIT */
/*
 * bpbench.c - the workload driver of the buffer pool: main and dispatch.
 *
 * Design note
 * -----------
 * Layer: bpbench sits on the store (tools/kv) and bufpool.
 * `bpbench SUBCOMMAND [options]`: each subcommand lives in its own files
 * and gets argv starting at its own name (ycsb*.c: ycsb; tiotest*.c:
 * tiotest; crashtest*.c: crashtest; hit*.c: hit; tools/kv/kv_check_cmd.c,
 * beside the store: check).  No state here.
 */
#include <stdio.h>
#include <string.h>

#include "crashtest.h"
#include "hit.h"
#include "kv_check_cmd.h"
#include "tiotest.h"
#include "toolutil.h"
#include "ycsb.h"

static void usage(FILE *f)
{
	fputs("usage: bpbench SUBCOMMAND [options]   (bpbench SUBCOMMAND --help; bpbench --version)\n"
	      "  ycsb      YCSB workloads A-F on a B+-tree store over the buffer pool\n"
	      "  tiotest   threaded I/O test of the pool\n"
	      "  crashtest kill -9 a durable store's writer, recover, check every commit\n"
	      "  hit       ns per access of a resident page: pinned, latched, and plain memory\n"
	      "  check     verify the B+-tree of an existing store file\n", f);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (tool_version_asked(argc, argv))
		return tool_version_print("bpbench");
	const char *cmd = argv[1];
	if (strcmp(cmd, "ycsb") == 0)
		return bpbench_ycsb_main(argc - 1, argv + 1);
	if (strcmp(cmd, "tiotest") == 0)
		return bpbench_tiotest_main(argc - 1, argv + 1);
	if (strcmp(cmd, "crashtest") == 0)
		return bpbench_crashtest_main(argc - 1, argv + 1);
	if (strcmp(cmd, "hit") == 0)
		return bpbench_hit_main(argc - 1, argv + 1);
	if (strcmp(cmd, "check") == 0)
		return kv_check_cmd(argc - 1, argv + 1);
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "bpbench: unknown subcommand '%s'\n", cmd);
	usage(stderr);
	return 2;
}
