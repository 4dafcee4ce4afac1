/* SPDX-License-Identifier: MIT */
/*
 * util/fence.h - the C11 fences of the lock-free protocols.
 *
 * Design note
 * -----------
 * Layer 0 (util): header only.  The seqlock-style protocols (bufpool's
 * optimistic reads, optread.c; fwait's hybrid latch, hlatch.c) need a
 * release fence after a writer's taking RMW and an acquire fence before a
 * reader's validating load; each call site names its pair.  They are
 * DMB ISH / DMB ISHLD on ARMv8 and nothing on x86.  ThreadSanitizer does
 * not model fences, and GCC refuses them under -fsanitize=thread (-Wtsan,
 * an error with -Dwerror=true): there a compiler barrier keeps the order
 * the compiler emits (x86's TSO does the rest), and TSan's happens-before
 * comes from the atomics.  UTIL_TSAN is defined in TSan builds.
 */
#ifndef UTIL_FENCE_H
#define UTIL_FENCE_H

#include <stdatomic.h>

#if defined(__SANITIZE_THREAD__)
#define UTIL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UTIL_TSAN 1
#endif
#endif

static inline void util_fence_release(void)
{
#ifdef UTIL_TSAN
	atomic_signal_fence(memory_order_acq_rel);
#else
	atomic_thread_fence(memory_order_release);
#endif
}

static inline void util_fence_acquire(void)
{
#ifdef UTIL_TSAN
	atomic_signal_fence(memory_order_acq_rel);
#else
	atomic_thread_fence(memory_order_acquire);
#endif
}

#endif
