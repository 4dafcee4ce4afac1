/*
 * ycsb.h - the YCSB core workloads A-F on the kv store (bpbench ycsb) and
 * the store check (bpbench check).
 *
 * Design note
 * -----------
 * bpbench.c dispatches subcommands; argv[0] is the subcommand's name.  Both
 * return a process exit status: 0 success, 1 a failed run or check, 2 bad
 * usage.
 */
#ifndef TOOLS_ENGINE_YCSB_H
#define TOOLS_ENGINE_YCSB_H

int bpbench_ycsb_main(int argc, char **argv);
int bpbench_check_main(int argc, char **argv);

#endif
