/*
 * util/probe.h - USDT (SystemTap SDT) tracing probes for fwait and bufpool.
 *
 * Design note
 * -----------
 * Layer 0 (util): header only, calls nothing of the project; no state, no
 * lock.  UTIL_PROBE(provider, name, args...) marks a static probe point
 * that bpftrace, perf and SystemTap can attach to (usdt:<library>:
 * <provider>:<name>), as PostgreSQL's buffer and lock-wait probes do.
 * With -Dprobes (meson_options.txt; on by default where <sys/sdt.h>, Debian's
 * systemtap-sdt-dev, is found) the build defines UTIL_HAVE_PROBES and each
 * probe is <sys/sdt.h>'s STAP_PROBEV: one nop instruction in the code and a
 * note in the ELF section .note.stapsdt naming the probe and where its
 * arguments live.  Arguments are passed as asm operands: they are
 * evaluated only as far as the compiler needs them in a register or
 * memory anyway, so a probe must be given values the code already holds
 * (no clock read or other work made for the probe; a tracer that wants a
 * duration subtracts a start time the code already has, see the fwait
 * probes).  Without it every probe is ((void)0) and its arguments are not
 * evaluated.
 *
 * The probes (providers fwait and bufpool) are listed in docs/bufpool.md
 * ("Tracing probes") and checked in the built libraries by
 * tests/probes/meson.build: keep the three in step.
 */
#ifndef UTIL_PROBE_H
#define UTIL_PROBE_H

#ifdef UTIL_HAVE_PROBES
#define SDT_USE_VARIADIC 1 /* for STAP_PROBEV, any argument count */
#include <sys/sdt.h>
#define UTIL_PROBE(provider, name, ...) STAP_PROBEV(provider, name, __VA_ARGS__)
#else
#define UTIL_PROBE(provider, name, ...) ((void)0)
#endif

#endif
