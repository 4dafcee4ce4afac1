/* SPDX-License-Identifier: MIT */
/*
 * table.c - creating and destroying a wait table; the policy table;
 * fwait_version.
 *
 * Layer 5 (table): calls only futex.c (whether futexes work) and base.c
 * (whether membarrier does).
 *
 * Design note
 * -----------
 * The table is sized once and never grows: its memory is per bucket, never
 * per object (how a key finds its bucket: base.c).  Nothing here is mutable
 * after creation except what the buckets themselves guard.
 *
 * The policy table is the one list of wait policies: each row is a policy's
 * name (fwait_policy_name, fwait_policy_parse), its one-line help
 * (fwait_policy_help, which the tools' usage texts print) and the traits
 * the code branches on (struct fw_policy_flags, internal.h).  A table
 * copies its row at creation, so no other file reads the rows.  Rows are
 * const and never written.
 */
#include "fwait/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The header's FWAIT_VERSION as this library was compiled: a program built
 * against another header gets this library's. */
int fwait_version(void)
{
	return FWAIT_VERSION;
}

#ifdef FWAIT_HAVE_VALGRIND
#include <valgrind/drd.h>
#else
#define ANNOTATE_BENIGN_RACE_SIZED(addr, size, why) ((void)0)
#endif

struct fw_policy_row {
	const char *name; /* what users type; unique */
	const char *help; /* one line, no newline */
	struct fw_policy_flags pf;
};

/* Indexed by enum fwait_policy (fwait.h), which says what each one is. */
static const struct fw_policy_row policies[] = {
	[FWAIT_WAKE_ONE] = { "wake-one",
		"filtered; an unlock wakes the oldest waiter",
		{ .wake_one = true } },
	[FWAIT_WAKE_ALL] = { "wake-all",
		"filtered; every waiter of the key wakes and races",
		{ 0 } },
	[FWAIT_BROADCAST] = { "broadcast",
		"unfiltered; every waiter of the bucket wakes",
		{ .unfiltered = true } },
	[FWAIT_FUTEX] = { "futex",
		"bit waits sleep on the word itself (Linux futex)",
		{ .on_word = true, .wake_one = true } },
};
/* A policy added to the enum without a row here fails to build (a row
 * added in the middle without one is caught by tests/fwait/test_policies.c:
 * its name would be NULL). */
_Static_assert(sizeof(policies) / sizeof(policies[0]) == FWAIT_POLICY_COUNT,
	       "fwait: one row per enum fwait_policy");

const char *fwait_policy_name(enum fwait_policy p)
{
	if ((unsigned)p >= FWAIT_POLICY_COUNT)
		return "invalid";
	return policies[p].name;
}

const char *fwait_policy_help(enum fwait_policy p)
{
	if ((unsigned)p >= FWAIT_POLICY_COUNT)
		return "invalid";
	return policies[p].help;
}

int fwait_policy_parse(const char *name, enum fwait_policy *out)
{
	if (name == NULL || out == NULL)
		return -EINVAL;
	for (unsigned p = 0; p < FWAIT_POLICY_COUNT; p++) {
		if (strcmp(name, policies[p].name) == 0) {
			*out = (enum fwait_policy)p;
			return 0;
		}
	}
	return -EINVAL;
}

static uint32_t round_up_pow2(uint32_t n)
{
	uint32_t p = 1;
	while (p < n)
		p <<= 1;
	return p;
}

int fwait_table_create(struct fwait_table **out, const struct fwait_config *cfg)
{
	struct fwait_config defaults = { 0 };
	if (out == NULL)
		return -EINVAL;
	if (cfg == NULL)
		cfg = &defaults;
	if ((unsigned)cfg->policy >= FWAIT_POLICY_COUNT || cfg->nbuckets > FW_MAX_BUCKETS ||
	    (unsigned)cfg->handoff > FWAIT_HANDOFF_STRICT)
		return -EINVAL;
	if (policies[cfg->policy].pf.on_word && !fw_futex_supported())
		return -ENOTSUP;

	uint32_t n = round_up_pow2(cfg->nbuckets ? cfg->nbuckets : FW_DEFAULT_BUCKETS);
	struct fwait_table *t = aligned_alloc(FW_CACHELINE, sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	memset(t, 0, sizeof(*t));
	t->buckets = aligned_alloc(FW_CACHELINE, (size_t)n * sizeof(struct fw_bucket));
	if (t->buckets == NULL) {
		free(t);
		return -ENOMEM;
	}
	memset(t->buckets, 0, (size_t)n * sizeof(struct fw_bucket));
	for (uint32_t i = 0; i < n; i++) {
		int rc = pthread_mutex_init(&t->buckets[i].lock, NULL);
		if (rc != 0) {
			while (i-- > 0)
				pthread_mutex_destroy(&t->buckets[i].lock);
			free(t->buckets);
			free(t);
			return -rc;
		}
	}
	debug_lock_rank_range(&t->buckets[0].lock, n, sizeof(struct fw_bucket),
			      UTIL_RANK_FW_BUCKET, "fwait bucket lock");
	/* The statistics are relaxed atomics read without the bucket locks on
	 * purpose; Valgrind's DRD does not model C11 atomics, so say so (a few
	 * instructions, and nothing at all outside Valgrind). */
	for (uint32_t i = 0; i < n; i++)
		ANNOTATE_BENIGN_RACE_SIZED(&t->buckets[i].stats, sizeof(t->buckets[i].stats),
					   "fwait statistics");
	ANNOTATE_BENIGN_RACE_SIZED(t->hist, sizeof(t->hist), "fwait wait-time histogram");
	for (uint32_t i = 0; i < n; i++)
		t->buckets[i].stats_on = !cfg->stats_off;
	t->policy = cfg->policy;
	t->pf = policies[cfg->policy].pf;
	/* Fairness settings matter only to a wake-one policy's lock bits and
	 * exclusive keyed waits (bitops.c, keyed.c); zero fields take the
	 * defaults. */
	t->strict = cfg->handoff == FWAIT_HANDOFF_STRICT;
	t->fair = t->pf.wake_one && !t->strict;
	t->max_steals = cfg->max_steals;
	t->fair_ns = cfg->fair_ns ? cfg->fair_ns : FWAIT_FAIR_NS_DEFAULT;
	t->spin_ns = cfg->spin_ns == FWAIT_SPIN_OFF ? 0 :
		     cfg->spin_ns ? cfg->spin_ns : FWAIT_SPIN_NS_DEFAULT;
	t->hold_ns = cfg->handoff_hold_ns == FWAIT_HANDOFF_HOLD_OFF ? 0 :
		     cfg->handoff_hold_ns ? cfg->handoff_hold_ns : FWAIT_HANDOFF_HOLD_NS_DEFAULT;
	/* Registered at creation, not at a latch's first wait: a wait's
	 * membarrier orders only threads that already skip their fence
	 * (hlatch.c), and whether they may is fixed here, for the table's
	 * life. */
	t->membarrier = !cfg->no_membarrier && fw_membarrier_register();
	t->mask = n - 1;
	t->hash_shift = 64u - (unsigned)__builtin_ctz(n); /* 64 - log2(n); unused when n == 1 */
	t->bytes = sizeof(*t) + (size_t)n * sizeof(struct fw_bucket);
	*out = t;
	return 0;
}

void fwait_table_destroy(struct fwait_table *t)
{
	if (t == NULL)
		return;
	for (uint32_t i = 0; i <= t->mask; i++)
		pthread_mutex_destroy(&t->buckets[i].lock);
	free(t->buckets);
	free(t);
}

enum fwait_policy fwait_table_policy(const struct fwait_table *t)
{
	return t ? t->policy : FWAIT_POLICY_COUNT;
}
