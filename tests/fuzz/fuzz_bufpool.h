/* SPDX-License-Identifier: MIT */
/*
 * fuzz_bufpool.h - the bufpool fuzz harness, shared by the libFuzzer target
 * (clang only) and the replay driver (any compiler, runs as a test).
 */
#ifndef TESTS_FUZZ_BUFPOOL_H
#define TESTS_FUZZ_BUFPOOL_H

#include <stddef.h>
#include <stdint.h>

/* Runs one input (see fuzz_bufpool.c); aborts with a message on a
 * mismatch with the model, returns 0 otherwise. */
int fuzz_bufpool_one(const uint8_t *data, size_t size);

#endif
