/* SPDX-License-Identifier: MIT */
/*
 * tiotest.h - the tiotest-style run of the workload driver (bpbench tiotest).
 *
 * Design note
 * -----------
 * Layer: bpbench, on bufpool.  The driver's main (bpbench.c) dispatches the "tiotest" subcommand here;
 * argv[0] is "tiotest".  Everything else about the run lives in tiotest*.c
 * behind tiotest_int.h.
 */
#ifndef TOOLS_BPBENCH_TIOTEST_H
#define TOOLS_BPBENCH_TIOTEST_H

/* Returns a process exit status (0 on success). */
int bpbench_tiotest_main(int argc, char **argv);

#endif
