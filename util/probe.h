/* SPDX-License-Identifier: MIT */
/*
 * util/probe.h - USDT (SystemTap SDT) tracing probes for fwait and bufpool.
 *
 * Design note
 * -----------
 * Layer 0 (util): header only, calls nothing of the project; no state, no
 * lock.  UTIL_PROBEn(provider, name, n args) marks a static probe point
 * that bpftrace, perf and SystemTap can attach to (usdt:<library>:
 * <provider>:<name>), as PostgreSQL's buffer and lock-wait probes do.
 * With -Dprobes (meson_options.txt; on by default where <sys/sdt.h>, Debian's
 * systemtap-sdt-dev, is found) the build defines UTIL_HAVE_PROBES and each
 * probe is <sys/sdt.h>'s STAP_PROBEn: one nop instruction in the code and a
 * note in the ELF section .note.stapsdt naming the probe and where its
 * arguments live.  The arguments are asm operands: the compiler computes
 * each into a register, memory or an immediate whether or not a tracer is
 * attached, so a probe is given only values the code already holds or one
 * instruction makes (a tag's file and page), never a clock read or other
 * work done for the tracer (one that wants a duration subtracts a start
 * time the code already has: the fwait probes).  Without UTIL_HAVE_PROBES
 * every probe is ((void)0) and its arguments are not evaluated.  One macro per argument count, not sdt.h's variadic
 * STAP_PROBEV, whose GNU ", ##__VA_ARGS__" clang's -Wpedantic flags.
 *
 * The probes (providers fwait and bufpool) are listed in docs/bufpool.md
 * ("Tracing probes") and checked in the built libraries by
 * tests/probes/meson.build: keep the three in step.
 */
#ifndef UTIL_PROBE_H
#define UTIL_PROBE_H

#ifdef UTIL_HAVE_PROBES
#include <sys/sdt.h>
/* sdt.h's macros pass its inner variadic macro no variadic argument,
 * which clang's -Wpedantic flags (in C before C2x) at the probe's line:
 * not ours to fix, so not flagged there. */
#if defined(__clang__)
#define UTIL_PROBE_QUIET_ \
	_Pragma("clang diagnostic push") \
	_Pragma("clang diagnostic ignored \"-Wgnu-zero-variadic-macro-arguments\"")
#define UTIL_PROBE_LOUD_ _Pragma("clang diagnostic pop")
#else
#define UTIL_PROBE_QUIET_
#define UTIL_PROBE_LOUD_
#endif
#define UTIL_PROBE1(provider, name, a1) \
	UTIL_PROBE_QUIET_ STAP_PROBE1(provider, name, a1) UTIL_PROBE_LOUD_
#define UTIL_PROBE2(provider, name, a1, a2) \
	UTIL_PROBE_QUIET_ STAP_PROBE2(provider, name, a1, a2) UTIL_PROBE_LOUD_
#define UTIL_PROBE3(provider, name, a1, a2, a3) \
	UTIL_PROBE_QUIET_ STAP_PROBE3(provider, name, a1, a2, a3) UTIL_PROBE_LOUD_
#else
#define UTIL_PROBE1(provider, name, a1) ((void)0)
#define UTIL_PROBE2(provider, name, a1, a2) ((void)0)
#define UTIL_PROBE3(provider, name, a1, a2, a3) ((void)0)
#endif

#endif
