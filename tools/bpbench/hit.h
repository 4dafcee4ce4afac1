/* SPDX-License-Identifier: MIT */
/*
 * hit.h - the cost of a page hit (bpbench hit).
 *
 * Design note
 * -----------
 * Layer: bpbench, directly on bufpool.  bpbench.c dispatches the "hit"
 * subcommand here; argv[0] is "hit".  Everything else about the run lives
 * in hit*.c behind hit_int.h.  Returns a process exit status: 0 success,
 * 1 a failed run, 2 bad usage.
 */
#ifndef TOOLS_BPBENCH_HIT_H
#define TOOLS_BPBENCH_HIT_H

int bpbench_hit_main(int argc, char **argv);

#endif
