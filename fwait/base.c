/* SPDX-License-Identifier: MIT */
/*
 * base.c - the helpers every other file of fwait uses: deadlines (the clock itself is util/clock.h), and on Linux the
 * futex system call (futex.c's policy and park.c's parker both sleep on it)
 * and membarrier(2) (the hybrid latches' asymmetric fence, hlatch.c).
 *
 * Layer 1 (base): calls no other file of fwait.
 *
 * Design note
 * -----------
 * Keys are hashed by address alone (fw_bucket_of, inline in internal.h), so
 * every bit of one word lands in the same bucket and the word's waiters bit
 * can be kept exact under that bucket's lock.  Nothing here has state: each function reads only its arguments, the
 * table's immutable geometry (mask, hash_shift) and the clock.
 */
#include "fwait/internal.h"
#include "util/clock.h"

#include <stdlib.h>
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

#if defined(__linux__) && defined(SYS_membarrier)
#include <linux/membarrier.h>

bool fw_membarrier_register(void)
{
	/* Registration is per process and idempotent: every table asks, the
	 * first succeeds for all.  A kernel without it (before 4.14), a
	 * seccomp filter or an emulator (qemu-user, Valgrind) refuses, and
	 * the table falls back to the full fence. */
	return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

void fw_membarrier(void)
{
	/* Cannot fail once registered (membarrier(2)); were it to, a full
	 * fence would not be enough, so it is not ignored silently. */
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
		abort();
}
#else
bool fw_membarrier_register(void)
{
	return false;
}

void fw_membarrier(void)
{
	abort(); /* never called: t->membarrier is false */
}
#endif

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
