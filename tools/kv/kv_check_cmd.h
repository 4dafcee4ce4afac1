/* SPDX-License-Identifier: MIT */
/*
 * kv_check_cmd.h - the store's check as a command (bpbench check).
 *
 * Design note
 * -----------
 * Layer: a program's part on top of the store, not part of libkv: it
 * prints, parses options (util/opt.h) and gives the pool the tools' log
 * callback, none of which the store itself does.  It is compiled into the
 * program that offers it (bpbench, whose main dispatches "check" here).
 */
#ifndef TOOLS_KV_KV_CHECK_CMD_H
#define TOOLS_KV_KV_CHECK_CMD_H

/* `check --file PATH [--frames N] [--page-size B]`: open the store read-only
 * and run kv_check.  argv[0] is the subcommand's name.  Returns a process
 * exit status: 0 the tree is well formed, 1 it is not (or cannot be
 * opened), 2 bad usage. */
int kv_check_cmd(int argc, char **argv);

#endif
