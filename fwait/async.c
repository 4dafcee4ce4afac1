/* SPDX-License-Identifier: MIT */
/*
 * async.c - asynchronous keyed waits: fwait_wait_async, fwait_cancel_async.
 *
 * Layer 4 (keyed waits): calls only park.c, stats.c and base.c.
 *
 * Design note
 * -----------
 * An asynchronous wait is a keyed wait (keyed.c) whose waiter record is the
 * caller's (struct fw_async inside struct fwait_async, internal.h) and
 * whose sleep is replaced by a completion the waker runs.  Everything up to
 * the sleep is fwait_wait's: bucket lock, count the record in nkeyed with
 * a seq_cst RMW and fence (the Dekker pairing with fwait_wake's fence, as
 * keyed.c argues it), ready() under the lock, then queue.  The record stays
 * counted while it is queued, so a wake never skips the bucket while it
 * could be chosen.  It leaves the count in one of three places, each once:
 * at once when ready() held; in fw_signal_all when a wake chose it (park.c,
 * after the waker dropped the bucket lock, before the completion); or in
 * fwait_cancel_async when it was still queued.
 *
 * Who owns the record: the caller until fwait_wait_async queues it; the
 * bucket (its lock guards the links, as for any waiter) while queued; the
 * waker from its choice (under the lock) to the completion's call, which is
 * its last touch; the caller again after that.  Cancel decides between the
 * waker and itself under the bucket lock by the record's `queued`, which
 * only a holder of that lock writes: still queued, cancel unlinks it and no
 * waker can have chosen it; not queued, a waker did, and its completion
 * runs or ran, so cancel reports -EALREADY and touches nothing more.  A
 * cancelled exclusive wake is thus never lost silently: the caller learns
 * that it was woken and passes the wake on if it does not want it
 * (fwait.h).
 *
 * Fairness: a record re-waited after a wake (fw_async.woken, written by
 * the waker before the completion) goes back to the head of its key under
 * FAIR, keeping its age and counting a lost race, exactly as a blocking
 * waiter that found ready() false after its wake (fw_requeue).
 */
#include "fwait/internal.h"
#include "util/debug.h"

#include <errno.h>
#include <string.h>

static struct fw_async *rec(struct fwait_async *a)
{
	return (struct fw_async *)(void *)a;
}

int fwait_async_init(struct fwait_async *a, fwait_async_fn done, void *arg)
{
	if (a == NULL || done == NULL)
		return -EINVAL;
	struct fw_async *r = rec(a);
	memset(r, 0, sizeof(*r));
	r->done = done;
	r->arg = arg;
	r->magic = FW_ASYNC_MAGIC;
	return 0;
}

int fwait_wait_async(struct fwait_table *t, const void *key, unsigned flags,
		     fwait_ready_fn ready, void *arg, struct fwait_async *a)
{
	if (t == NULL || key == NULL || ready == NULL || a == NULL ||
	    (flags & ~(FWAIT_EXCLUSIVE | FWAIT_PRECHECK)) || rec(a)->magic != FW_ASYNC_MAGIC)
		return -EINVAL;
	debug_assert_msg(!fwait_witness_holds_rank(UTIL_RANK_FW_BUCKET),
			 "fwait_wait_async called under a bucket or pool lock");
	struct fw_async *r = rec(a);
	bool exclusive = flags & FWAIT_EXCLUSIVE;
	/* A wake's last touch was its completion call, before this (the
	 * caller's hand-off from done orders it): woken is ours to read. */
	bool woken = r->woken;
	r->woken = false;
	if ((flags & FWAIT_PRECHECK) && ready(arg))
		return 0;

	struct fw_bucket *b = fw_bucket_of(t, key);
	pthread_mutex_lock(&b->lock);
	FW_STAT(b, slow_waits, 1);
	/* seq_cst RMW and fence before ready(): the waiter's half of the
	 * Dekker pair with fwait_wake's fence (keyed.c's design note). */
	atomic_fetch_add_explicit(&b->nkeyed, 1, memory_order_seq_cst);
	atomic_thread_fence(memory_order_seq_cst);
	if (ready(arg)) {
		fw_nkeyed_leave(b);
		pthread_mutex_unlock(&b->lock);
		return 0;
	}
	if (woken && r->t == t && r->w.key == key && r->w.exclusive == exclusive) {
		/* The same wait again after its wake: first_ns and steals
		 * kept, at the head under FAIR (fw_requeue). */
		fw_requeue(t, b, &r->w, true);
	} else {
		fw_waiter_init_async(&r->w, key, exclusive);
		fw_enqueue(b, &r->w);
	}
	r->t = t;
	r->b = b;
	pthread_mutex_unlock(&b->lock);
	return 1;
}

int fwait_cancel_async(struct fwait_table *t, struct fwait_async *a)
{
	if (t == NULL || a == NULL || rec(a)->magic != FW_ASYNC_MAGIC || rec(a)->t != t)
		return -EINVAL;
	struct fw_async *r = rec(a);
	struct fw_bucket *b = r->b;
	int rc = -EALREADY;

	pthread_mutex_lock(&b->lock);
	if (r->w.queued) {
		fw_unlink(b, &r->w);
		fw_nkeyed_leave(b);
		FW_STAT(b, timeouts, 1);
		/* Waiting no more: a second cancel is -EINVAL, not
		 * -EALREADY, which would claim a wake. */
		r->t = NULL;
		r->b = NULL;
		rc = 0;
	}
	pthread_mutex_unlock(&b->lock);
	return rc;
}
