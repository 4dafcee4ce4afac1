/* SPDX-License-Identifier: MIT */
/* layout_c.c - the C side of layout.h (compiled as C, linked into the C++
 * test). */
#include "layout.h"

#include <stdatomic.h>

#define LAYOUT_VALUE(e) (e),
const size_t cxx_layout_c[] = { LAYOUT_ITEMS(LAYOUT_VALUE) };
const size_t cxx_layout_c_count = sizeof(cxx_layout_c) / sizeof(cxx_layout_c[0]);

uint32_t cxx_c_fetch_or(fwait_atomic_u32 *word, uint32_t bits)
{
	return atomic_fetch_or(word, bits);
}

uint32_t cxx_c_load(const fwait_atomic_u32 *word)
{
	return atomic_load(word);
}
