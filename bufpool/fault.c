/* SPDX-License-Identifier: MIT */
/*
 * fault.c - the I/O fault injector and the I/O trace of the pool's I/O
 * layer.
 *
 * Layer 3 (fault injector): calls only account.c.
 *
 * Design note
 * -----------
 * At most one rule per operation (read, write, fsync), installed with
 * bp_fault_set and removed with bp_fault_clear.  io.c asks bp_fault_check
 * before each transfer; with no rule active that is one relaxed load of
 * active_mask.  A rule matches by page range, fires at most count times
 * (0 = unlimited), with probability_ppm drawn from its own seeded
 * xorshift64* generator (deterministic for a given I/O order).
 *
 * The I/O trace (bp_trace): every change to the pool's files is reported
 * to bp_config.io_trace where it is made (file.c: open, truncate; io.c:
 * page writes at their completion, fsyncs around the call), under the
 * ordering bufpool.h states; at SYNC_BEGIN the hook may inject the sync's
 * failure, which is why fsync's caller asks here first, as it asks the
 * fault rules.  Without a hook: one load and a branch.
 *
 * Guards: fault_state.lock protects rules[]; active_mask mirrors which rules
 * are active (written under the lock, read relaxed as a hint).  io_trace is
 * set by bp_open and read only.
 */
#include <errno.h>
#include <string.h>

#include "bufpool/internal.h"
#include "util/prng.h"

int bp_fault_init(struct bp_pool *p)
{
	memset(p->fault.rules, 0, sizeof(p->fault.rules));
	atomic_init(&p->fault.active_mask, 0);
	debug_lock_rank(&p->fault.lock, UTIL_RANK_BP_FAULT, "bufpool fault_state.lock");
	return pthread_mutex_init(&p->fault.lock, NULL) ? -ENOMEM : 0;
}

void bp_fault_destroy(struct bp_pool *p)
{
	pthread_mutex_destroy(&p->fault.lock);
}

int bp_fault_set(struct bp_pool *pool, const struct bp_fault *fault)
{
	if (!pool || !fault)
		return -EINVAL;
	if ((unsigned)fault->op >= BP_FAULT_OP_COUNT || (unsigned)fault->kind > BP_FAULT_NO_WAL ||
	    fault->err < 0 || fault->probability_ppm > 1000000u)
		return -EINVAL;
	if ((fault->op == BP_FAULT_FSYNC && fault->kind == BP_FAULT_SHORT) ||
	    (fault->op != BP_FAULT_WRITE && fault->kind == BP_FAULT_NO_WAL))
		return -EINVAL;
	pthread_mutex_lock(&pool->fault.lock);
	struct bp_fault_rule *r = &pool->fault.rules[fault->op];
	r->f = *fault;
	if (r->f.kind == BP_FAULT_FAIL && r->f.err == 0)
		r->f.err = EIO;
	r->fired = 0;
	/* xorshift64*'s state must not be 0: seed 0 starts from a fixed one. */
	r->rng = fault->seed ? fault->seed : UINT64_C(0x9E3779B97F4A7C15);
	r->active = true;
	atomic_fetch_or_explicit(&pool->fault.active_mask, 1u << fault->op, memory_order_relaxed);
	pthread_mutex_unlock(&pool->fault.lock);
	return 0;
}

int bp_fault_clear(struct bp_pool *pool)
{
	if (!pool)
		return -EINVAL;
	pthread_mutex_lock(&pool->fault.lock);
	for (unsigned i = 0; i < BP_FAULT_OP_COUNT; i++)
		pool->fault.rules[i].active = false;
	atomic_store_explicit(&pool->fault.active_mask, 0, memory_order_relaxed);
	pthread_mutex_unlock(&pool->fault.lock);
	return 0;
}

enum bp_fault_action bp_fault_check(struct bp_pool *p, enum bp_fault_op op,
				    uint64_t pageno, int *err, uint64_t *delay_us)
{
	*err = 0;
	*delay_us = 0;
	if (!(atomic_load_explicit(&p->fault.active_mask, memory_order_relaxed) & (1u << op)))
		return BP_FA_NONE;
	enum bp_fault_action a = BP_FA_NONE;
	pthread_mutex_lock(&p->fault.lock);
	struct bp_fault_rule *r = &p->fault.rules[op];
	if (!r->active)
		goto out;
	if (op != BP_FAULT_FSYNC && r->f.page_count &&
	    (pageno < r->f.page_first || pageno - r->f.page_first >= r->f.page_count))
		goto out;
	if (r->f.probability_ppm && util_rand_next(&r->rng) % 1000000u >= r->f.probability_ppm)
		goto out;
	r->fired++;
	if (r->f.count && r->fired >= r->f.count) {
		r->active = false;
		atomic_fetch_and_explicit(&p->fault.active_mask, ~(1u << op), memory_order_relaxed);
	}
	switch (r->f.kind) {
	case BP_FAULT_FAIL:
		a = BP_FA_FAIL;
		*err = r->f.err;
		break;
	case BP_FAULT_SHORT:
		a = BP_FA_SHORT;
		*err = EIO;
		break;
	case BP_FAULT_SLOW:
		*delay_us = r->f.delay_us;
		break;
	case BP_FAULT_NO_WAL:
		a = BP_FA_NO_WAL;
		break;
	}
	bp_count(p, BP_C_FAULTS);
out:
	pthread_mutex_unlock(&p->fault.lock);
	return a;
}

int bp_trace(struct bp_pool *p, const struct bp_io_trace_event *ev)
{
	return p->io_trace ? p->io_trace(p->io_trace_arg, ev) : 0;
}

int bp_trace_sync_begin(struct bp_pool *p, const char *path)
{
	int r = bp_trace(p, &(struct bp_io_trace_event){.op = BP_IO_TRACE_SYNC_BEGIN, .path = path});
	return r < 0 ? r : 0;
}

void bp_trace_sync_end(struct bp_pool *p, const char *path, int result)
{
	bp_trace(p, &(struct bp_io_trace_event){.op = BP_IO_TRACE_SYNC_END, .path = path,
						  .result = result});
}
