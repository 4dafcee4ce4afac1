/* SPDX-License-Identifier: MIT */
/*
 * stats.c - statistics and the walk over parked waiters.
 *
 * Layer 2 (stats): calls only base.c (low, as every file above counts
 * through it; its readers, fwait_stats_get and the walk, need no more).
 *
 * Design note
 * -----------
 * Counters live in the buckets (struct fw_bucket_stats) and the wait-time
 * histogram in FW_HIST_SHARDS cache-line shards picked by bucket index, so a
 * counter update touches a line the updater already owns (the bucket's) or
 * one shared by 1/FW_HIST_SHARDS of the buckets, never one global hot line.
 * All are relaxed atomics: they are statistics, ordered with nothing, and
 * atomics only so that a reader summing them concurrently is not a data race.
 * A snapshot is therefore not an atomic cut across buckets.
 */
#include "fwait/internal.h"
#include "util/log2.h"
#include "util/clock.h"

#include <errno.h>
#include <string.h>

void fw_hist_since(struct fwait_table *t, const struct fw_bucket *b, uint64_t since_ns)
{
	if (!b->stats_on)
		return; /* and no clock read */
	uint64_t ns = util_now_ns() - since_ns;
	unsigned shard = (unsigned)(b - t->buckets) % FW_HIST_SHARDS;
	atomic_fetch_add_explicit(&t->hist[shard].count[util_log2_bucket(ns, FWAIT_HIST_BUCKETS)],
				  1, memory_order_relaxed);
}

static uint64_t rd(const _Atomic uint64_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

void fwait_stats_get(const struct fwait_table *t, struct fwait_stats *out)
{
	if (t == NULL || out == NULL)
		return;
	memset(out, 0, sizeof(*out));
	for (uint32_t i = 0; i <= t->mask; i++) {
		const struct fw_bucket_stats *s = &t->buckets[i].stats;
		uint32_t depth = atomic_load_explicit(&s->max_depth, memory_order_relaxed);

		out->waits += rd(&s->waits);
		out->wakeups += rd(&s->wakeups);
		out->spurious_wakeups += rd(&s->spurious);
		out->foreign_skipped += rd(&s->foreign);
		out->timeouts += rd(&s->timeouts);
		out->handoffs += rd(&s->handoffs);
		out->slow_wakes += rd(&s->slow_wakes);
		out->slow_waits += rd(&s->slow_waits);
		out->lost_races += rd(&s->lost_races);
		if (depth > out->max_bucket_depth)
			out->max_bucket_depth = depth;
	}
	for (unsigned s = 0; s < FW_HIST_SHARDS; s++)
		for (unsigned i = 0; i < FWAIT_HIST_BUCKETS; i++)
			out->wait_ns_hist[i] += rd(&t->hist[s].count[i]);
	out->nbuckets = t->mask + 1;
	out->table_bytes = t->bytes;
}

void fwait_stats_reset(struct fwait_table *t)
{
	if (t == NULL)
		return;
	for (uint32_t i = 0; i <= t->mask; i++) {
		struct fw_bucket_stats *s = &t->buckets[i].stats;
		_Atomic uint64_t *counters[] = { &s->waits, &s->wakeups, &s->spurious,
			&s->foreign, &s->timeouts, &s->handoffs, &s->slow_wakes,
			&s->slow_waits, &s->lost_races };

		for (size_t c = 0; c < sizeof(counters) / sizeof(counters[0]); c++)
			atomic_store_explicit(counters[c], 0, memory_order_relaxed);
		atomic_store_explicit(&s->max_depth, 0, memory_order_relaxed);
	}
	for (unsigned s = 0; s < FW_HIST_SHARDS; s++)
		for (unsigned i = 0; i < FWAIT_HIST_BUCKETS; i++)
			atomic_store_explicit(&t->hist[s].count[i], 0, memory_order_relaxed);
}

int fwait_waiters_walk(struct fwait_table *t,
		       int (*fn)(const struct fwait_waiter_info *w, void *arg),
		       void *arg)
{
	if (t == NULL || fn == NULL)
		return -EINVAL;
	uint64_t now = util_now_ns();

	for (uint32_t i = 0; i <= t->mask; i++) {
		struct fw_bucket *b = &t->buckets[i];
		int rc = 0;

		pthread_mutex_lock(&b->lock);
		for (struct fw_waiter *h = b->keys; h && rc == 0; h = h->knext) {
			const struct fw_waiter *w = h;
			do {
				struct fwait_waiter_info info = {
					.key = w->key,
					.bit = w->bit,
					.exclusive = w->exclusive,
					.waited_ns = now > w->since_ns ? now - w->since_ns : 0,
					.bucket = i,
				};
				rc = fn(&info, arg);
				w = w->next;
			} while (w != h && rc == 0);
		}
		pthread_mutex_unlock(&b->lock);
		if (rc)
			return rc;
	}
	return 0;
}
