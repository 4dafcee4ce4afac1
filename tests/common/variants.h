/* SPDX-License-Identifier: MIT */
/*
 * variants.h - the one table of policy variants the fwait unit tests loop
 * over and the stress programs run rounds of.
 *
 * Design note
 * -----------
 * A variant is a wait policy plus a tweak of its config.  Variant v <
 * FWAIT_POLICY_COUNT is policy v as it is (named by fwait's policy table,
 * so a new policy joins every loop test and stress run by itself); the
 * rows after it are WAKE_ONE variants: "wake-one+steal" (FAIR with a
 * max_steals bound, which the caller gives) and "wake-one+strict"
 * (FWAIT_HANDOFF_STRICT, what the FIFO tests use).  A failure names its
 * variant by tc_variant_name, never by its number.  No state.
 */
#ifndef TESTS_COMMON_VARIANTS_H
#define TESTS_COMMON_VARIANTS_H

#include "fwait/fwait.h"

#define TC_VARIANT_STEAL FWAIT_POLICY_COUNT
#define TC_VARIANT_STRICT (FWAIT_POLICY_COUNT + 1)
#define TC_NVARIANTS (FWAIT_POLICY_COUNT + 2)

/* "wake-one", ..., "wake-one+steal", "wake-one+strict"; "invalid" for
 * anything else. */
const char *tc_variant_name(int v);
/* Variant v's name back to v; -1 if no variant has that name. */
int tc_variant_parse(const char *name);
/* Sets cfg's policy, handoff and max_steals (max_steals for
 * TC_VARIANT_STEAL, 0 otherwise) for variant v; the rest of cfg is the
 * caller's. */
void tc_variant_config(int v, unsigned max_steals, struct fwait_config *cfg);

#endif
