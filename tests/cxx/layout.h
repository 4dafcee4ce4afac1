/* SPDX-License-Identifier: MIT */
/*
 * layout.h - what the C and the C++ compiler must agree on about the public
 * headers: one list of sizes, alignments and offsets, evaluated once as C
 * (layout_c.c, into cxx_layout_c[]) and once as C++ (test_cxx.cpp), which
 * compares the two.  Also a C function on a word the C++ side owns.
 */
#ifndef TESTS_CXX_LAYOUT_H
#define TESTS_CXX_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "bufpool/bufpool.h"
#include "fwait/fwait.h"

#ifdef __cplusplus
#define LAYOUT_ALIGNOF(T) alignof(T)
#else
#define LAYOUT_ALIGNOF(T) _Alignof(T)
#endif

#define LAYOUT_ITEMS(X)                                                  \
	X(sizeof(fwait_atomic_u32))                                      \
	X(LAYOUT_ALIGNOF(fwait_atomic_u32))                              \
	X(sizeof(bool))                                                  \
	X(sizeof(enum fwait_policy))                                     \
	X(sizeof(struct fwait_config))                                   \
	X(offsetof(struct fwait_config, max_steals))                     \
	X(sizeof(enum fwait_handoff))                                    \
	X(offsetof(struct fwait_config, handoff))                        \
	X(offsetof(struct fwait_config, fair_ns))                        \
	X(offsetof(struct fwait_config, spin_ns))                        \
	X(sizeof(struct fwait_stats))                                    \
	X(LAYOUT_ALIGNOF(struct fwait_stats))                            \
	X(offsetof(struct fwait_stats, lost_races))                      \
	X(offsetof(struct fwait_stats, max_bucket_depth))                \
	X(offsetof(struct fwait_stats, table_bytes))                     \
	X(offsetof(struct fwait_stats, wait_ns_hist))                    \
	X(sizeof(struct fwait_waiter_info))                              \
	X(offsetof(struct fwait_waiter_info, exclusive))                 \
	X(offsetof(struct fwait_waiter_info, waited_ns))                 \
	X(offsetof(struct fwait_waiter_info, bucket))                    \
	X(sizeof(enum bp_latch_mode))                                    \
	X(sizeof(struct bp_config))                                      \
	X(LAYOUT_ALIGNOF(struct bp_config))                              \
	X(offsetof(struct bp_config, flags))                             \
	X(offsetof(struct bp_config, io_latency_us))                     \
	X(offsetof(struct bp_config, fwait))                             \
	X(sizeof(struct bp_fault))                                       \
	X(offsetof(struct bp_fault, probability_ppm))                    \
	X(offsetof(struct bp_fault, page_count))                         \
	X(sizeof(struct bp_wait_hist))                                   \
	X(sizeof(struct bp_stats))                                       \
	X(offsetof(struct bp_stats, policy))                             \
	X(offsetof(struct bp_stats, io_wait))                            \
	X(offsetof(struct bp_stats, frames_locked))                      \
	X(offsetof(struct bp_stats, fwait))                              \
	X(sizeof(struct bp_frame_info))                                  \
	X(offsetof(struct bp_frame_info, latch_exclusive))               \
	X(offsetof(struct bp_frame_info, latch_waiters))                 \
	X(offsetof(struct bp_frame_info, wait_ns))

#ifdef __cplusplus
extern "C" {
#endif

/* LAYOUT_ITEMS as the C compiler sees them, in order. */
extern const size_t cxx_layout_c[];
extern const size_t cxx_layout_c_count;

/* atomic_fetch_or(word, bits) done by C code; returns the old value. */
uint32_t cxx_c_fetch_or(fwait_atomic_u32 *word, uint32_t bits);
/* atomic_load(word) done by C code. */
uint32_t cxx_c_load(const fwait_atomic_u32 *word);

#ifdef __cplusplus
}
#endif
#endif /* TESTS_CXX_LAYOUT_H */
