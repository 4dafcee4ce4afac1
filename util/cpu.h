/* SPDX-License-Identifier: MIT */
/*
 * util/cpu.h - the one spin-loop pause of the project.
 *
 * Design note
 * -----------
 * Layer 0 (util): header only.  fwait's lock spinning (bitops.c) and
 * bufpool's latch spinning (latch.c) pause between relaxed loads of the
 * word they watch: on x86 `pause` lets the sibling hyperthread run and
 * avoids the memory-order pipeline flush when the watched line changes;
 * on aarch64 `yield` is the hint; elsewhere nothing.  It orders nothing
 * (a compiler barrier at most): the loops re-load the word each time.
 */
#ifndef UTIL_CPU_H
#define UTIL_CPU_H

static inline void util_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

#endif
