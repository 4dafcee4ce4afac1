/* SPDX-License-Identifier: MIT */
/*
 * crashtest.h - the kill -9 test of the store's redo log (bpbench crashtest).
 *
 * Design note
 * -----------
 * Layer: bpbench, on the kv store (tools/kv) and bufpool.  bpbench.c
 * dispatches the "crashtest" subcommand here; argv[0] is "crashtest".
 * Everything else lives in crashtest*.c behind crashtest_int.h.
 * Returns a process exit status: 0 every round passed, 1 a failed round
 * (a lost or damaged key, a bad tree, a child that did not die of the
 * kill), 2 bad usage.
 */
#ifndef TOOLS_BPBENCH_CRASHTEST_H
#define TOOLS_BPBENCH_CRASHTEST_H

int bpbench_crashtest_main(int argc, char **argv);

#endif
