/* SPDX-License-Identifier: MIT */
/*
 * base.c - the helpers every other file of fwait uses: hashing a key to its
 * bucket, deadlines (the clock itself is util/clock.h), and on Linux the
 * futex system call (futex.c's policy and park.c's parker both sleep on it).
 *
 * Layer 1 (base): calls no other file of fwait.
 *
 * Design note
 * -----------
 * Keys are hashed by address alone (Fibonacci hashing of the address without
 * its low alignment bits), so every bit of one word lands in the same bucket
 * and the word's waiters bit can be kept exact under that bucket's lock.
 * Nothing here has state: each function reads only its arguments, the
 * table's immutable geometry (mask, hash_shift) and the clock.
 */
#include "fwait/internal.h"
#include "util/clock.h"

#include <time.h>

#ifdef __linux__
#include <sys/syscall.h>
#include <unistd.h>

long fw_sys_futex(uint32_t *uaddr, int op, uint32_t val,
		  const struct timespec *abs_deadline, uint32_t bitset)
{
	return syscall(SYS_futex, uaddr, op | FUTEX_PRIVATE_FLAG, val,
		       abs_deadline, NULL, bitset);
}
#endif

struct fw_bucket *fw_bucket_of(const struct fwait_table *t, const void *key)
{
	/* Fibonacci hashing: multiply by 2^64 / phi and keep the *top*
	 * log2(nbuckets) bits, the ones every bit of the address feeds, so
	 * objects a cache line or a page apart spread over all buckets.  (Bits
	 * from the middle of the product clustered such objects in a few.) */
	uint64_t h = (uint64_t)(uintptr_t)key * UINT64_C(0x9E3779B97F4A7C15);
	return &t->buckets[t->mask ? (uint32_t)(h >> t->hash_shift) : 0];
}

bool fwait_deadline_valid(const struct timespec *deadline)
{
	return deadline == NULL ||
	       (deadline->tv_sec >= 0 && deadline->tv_nsec >= 0 && deadline->tv_nsec < 1000000000L);
}

struct timespec fwait_deadline_after_ns(uint64_t ns)
{
	uint64_t now = util_now_ns();
	/* Saturated, as util_timespec_ns: a deadline past 2^64 - 1 ns is
	 * that, so it converts back to UINT64_MAX and never wraps. */
	uint64_t at = ns > UINT64_MAX - now ? UINT64_MAX : now + ns;

	return (struct timespec){ .tv_sec = (time_t)(at / 1000000000u),
				  .tv_nsec = (long)(at % 1000000000u) };
}
