/* SPDX-License-Identifier: MIT */
/*
 * crc32c.h - CRC-32C (Castagnoli), the checksum of bufpool's page trailers.
 *
 * Layer 0 (util).  The polynomial of iSCSI, ext4 metadata and SSE4.2's
 * crc32 instruction (0x1EDC6F41, reflected 0x82F63B78), with the usual
 * pre- and post-inversion, so util_crc32c(0, "123456789", 9) = 0xE3069283
 * and a checksum can be continued: util_crc32c(util_crc32c(0, a, n), b, m)
 * is the checksum of a followed by b.  On x86-64 with SSE4.2 (checked once
 * per call by the compiler's CPU-feature test, no state of ours) it uses
 * the instruction, 8 bytes at a time; elsewhere a byte-wise table.  Pure
 * functions: no state at all.
 */
#ifndef UTIL_CRC32C_H
#define UTIL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

uint32_t util_crc32c(uint32_t crc, const void *buf, size_t len);
/* The table version, whatever the CPU: for the tests, which check that the
 * two agree. */
uint32_t util_crc32c_sw(uint32_t crc, const void *buf, size_t len);

#endif
