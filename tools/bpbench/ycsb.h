/* SPDX-License-Identifier: MIT */
/*
 * ycsb.h - the YCSB core workloads A-F on the kv store (bpbench ycsb).
 *
 * Design note
 * -----------
 * Layer: bpbench, on the kv store (tools/kv) and bufpool.  bpbench.c
 * dispatches subcommands; argv[0] is the subcommand's name.
 * Returns a process exit status: 0 success, 1 a failed run, 2 bad usage.
 * The store's check (bpbench check) lives beside the store, in
 * tools/kv/kv_check_cmd.c.
 */
#ifndef TOOLS_BPBENCH_YCSB_H
#define TOOLS_BPBENCH_YCSB_H

int bpbench_ycsb_main(int argc, char **argv);

#endif
