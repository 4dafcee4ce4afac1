/*
 * bpbench.c - the workload driver of the buffer pool: main and dispatch.
 *
 * Design note
 * -----------
 * `bpbench SUBCOMMAND [options]`: each subcommand lives in its own file and
 * gets argv starting at its own name (ycsb.c: ycsb and check; tiotest.c:
 * tiotest).  No state here.
 */
#include <stdio.h>
#include <string.h>

#include "tiotest.h"
#include "ycsb.h"

static void usage(FILE *f)
{
	fputs("usage: bpbench SUBCOMMAND [options]   (bpbench SUBCOMMAND --help)\n"
	      "  ycsb      YCSB workloads A-F on a B+-tree store over the buffer pool\n"
	      "  tiotest   threaded I/O test of the pool\n"
	      "  check     verify the B+-tree of an existing store file\n", f);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "ycsb") == 0)
		return bpbench_ycsb_main(argc - 1, argv + 1);
	if (strcmp(cmd, "tiotest") == 0)
		return bpbench_tiotest_main(argc - 1, argv + 1);
	if (strcmp(cmd, "check") == 0)
		return bpbench_check_main(argc - 1, argv + 1);
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "bpbench: unknown subcommand '%s'\n", cmd);
	usage(stderr);
	return 2;
}
