/* SPDX-License-Identifier: MIT */
/*
 * crashtest_value.c - bpbench crashtest's value codec.
 *
 * Design note
 * -----------
 * Layer: bpbench (see crashtest_int.h), libc only.  A value is the key
 * (8 bytes), the version (8 bytes) and, in the rest, a pattern derived
 * from both, so a value that is torn (half of one write, half of another,
 * or of a page never written), foreign (another key's), or zero reads as
 * malformed, not as some version of the key.  The same shape as ycsb's
 * values, with its own multiplier: a crash test's values are not a
 * benchmark's.
 */
#include "crashtest_int.h"

#include <errno.h>
#include <string.h>

static uint8_t pattern_byte(uint64_t key, uint64_t ver, uint32_t i)
{
	uint64_t x = key * UINT64_C(0xff51afd7ed558ccd) ^ ver * UINT64_C(0x9e3779b97f4a7c15);

	return (uint8_t)((x >> ((i & 7) * 8)) ^ (i * 0x5bu));
}

void crash_value_encode(uint8_t *v, uint32_t vs, uint64_t key, uint64_t ver)
{
	memcpy(v, &key, 8);
	memcpy(v + 8, &ver, 8);
	for (uint32_t i = 16; i < vs; i++)
		v[i] = pattern_byte(key, ver, i);
}

int crash_value_decode(const uint8_t *v, uint32_t vs, uint64_t key, uint64_t *ver)
{
	uint64_t k;

	memcpy(&k, v, 8);
	memcpy(ver, v + 8, 8);
	if (k != key || CRASH_SEQ_OF(*ver) == 0)
		return -EBADMSG;
	for (uint32_t i = 16; i < vs; i++)
		if (v[i] != pattern_byte(key, *ver, i))
			return -EBADMSG;
	return 0;
}
