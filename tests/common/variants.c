/* SPDX-License-Identifier: MIT */
/*
 * variants.c - the tests' policy-variant table (see variants.h).
 *
 * Design note: tests/common, on fwait.h only; the rows are const.
 */
#include "variants.h"

#include <stdbool.h>
#include <string.h>

/* The rows after the policies, indexed by v - FWAIT_POLICY_COUNT. */
static const struct {
	const char *name;
	enum fwait_handoff handoff;
	bool steals; /* max_steals from the caller */
} wake_one_rows[TC_NVARIANTS - FWAIT_POLICY_COUNT] = {
	[TC_VARIANT_STEAL - FWAIT_POLICY_COUNT] = { "wake-one+steal", FWAIT_HANDOFF_FAIR, true },
	[TC_VARIANT_STRICT - FWAIT_POLICY_COUNT] = { "wake-one+strict", FWAIT_HANDOFF_STRICT,
						     false },
};

const char *tc_variant_name(int v)
{
	if (v >= FWAIT_POLICY_COUNT && v < TC_NVARIANTS)
		return wake_one_rows[v - FWAIT_POLICY_COUNT].name;
	return fwait_policy_name((enum fwait_policy)v); /* "invalid" out of range */
}

int tc_variant_parse(const char *name)
{
	for (int v = 0; name && v < TC_NVARIANTS; v++)
		if (strcmp(name, tc_variant_name(v)) == 0)
			return v;
	return -1;
}

void tc_variant_config(int v, unsigned max_steals, struct fwait_config *cfg)
{
	if (v < FWAIT_POLICY_COUNT) {
		cfg->policy = (enum fwait_policy)v;
		cfg->handoff = FWAIT_HANDOFF_FAIR;
		cfg->max_steals = 0;
		return;
	}
	cfg->policy = FWAIT_WAKE_ONE;
	cfg->handoff = wake_one_rows[v - FWAIT_POLICY_COUNT].handoff;
	cfg->max_steals = wake_one_rows[v - FWAIT_POLICY_COUNT].steals ? max_steals : 0;
}
