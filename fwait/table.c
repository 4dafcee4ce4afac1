/*
 * table.c - creating and destroying a wait table; policy names.
 *
 * Layer 5 (table): calls only futex.c (whether futexes work).
 *
 * Design note
 * -----------
 * The table is sized once and never grows: its memory is per bucket, never
 * per object (how a key finds its bucket: base.c).  Nothing here is mutable
 * after creation except what the buckets themselves guard.
 */
#include "fwait/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifdef FWAIT_HAVE_VALGRIND
#include <valgrind/drd.h>
#else
#define ANNOTATE_BENIGN_RACE_SIZED(addr, size, why) ((void)0)
#endif

static const char *const policy_names[FWAIT_POLICY_COUNT] = {
	[FWAIT_WAKE_ONE] = "wake-one",
	[FWAIT_WAKE_ALL] = "wake-all",
	[FWAIT_BROADCAST] = "broadcast",
	[FWAIT_FUTEX] = "futex",
};

const char *fwait_policy_name(enum fwait_policy p)
{
	if ((unsigned)p >= FWAIT_POLICY_COUNT)
		return "invalid";
	return policy_names[p];
}

int fwait_policy_parse(const char *name, enum fwait_policy *out)
{
	if (name == NULL || out == NULL)
		return -EINVAL;
	for (unsigned p = 0; p < FWAIT_POLICY_COUNT; p++) {
		if (strcmp(name, policy_names[p]) == 0) {
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
	if (cfg->policy == FWAIT_FUTEX && !fw_futex_supported())
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
	/* Fairness settings matter only to WAKE_ONE's lock bits and exclusive
	 * keyed waits (bitops.c, keyed.c); zero fields take the defaults. */
	t->strict = cfg->handoff == FWAIT_HANDOFF_STRICT;
	t->max_steals = cfg->max_steals;
	t->fair_ns = cfg->fair_ns ? cfg->fair_ns : FWAIT_FAIR_NS_DEFAULT;
	t->spin_ns = cfg->spin_ns == FWAIT_SPIN_OFF ? 0 :
		     cfg->spin_ns ? cfg->spin_ns : FWAIT_SPIN_NS_DEFAULT;
	t->hold_ns = cfg->handoff_hold_ns == FWAIT_HANDOFF_HOLD_OFF ? 0 :
		     cfg->handoff_hold_ns ? cfg->handoff_hold_ns : FWAIT_HANDOFF_HOLD_NS_DEFAULT;
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
