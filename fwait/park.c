/*
 * park.c - parking a waiter in its bucket, sleeping, and waking it.
 *
 * Design note
 * -----------
 * This file owns the handshake between a waiter and a waker; bitops.c and
 * keyed.c only decide *whom* to wake.  The rules (see internal.h for which
 * lock guards which field):
 *
 *  1. A waiter is queued, and a waker chooses (unlinks) it, only under the
 *     bucket lock.  Choosing appends it to a private wake list.
 *  2. The waker drops the bucket lock, then for each chosen waiter: reads
 *     its list link, locks the waiter's own mutex, sets state, signals the
 *     waiter's own condvar, unlocks.  That unlock is the waker's last access
 *     to the waiter (its record lives on the waiter's stack), and no waker
 *     ever signals with the bucket lock held, so a woken thread never runs
 *     straight into a lock its waker still holds.
 *  3. A waiter whose deadline passes is not timed out until it has looked
 *     under the bucket lock and found itself still queued ("it is not a
 *     timeout until we unlink the unsignalled node", as parking lots say).
 *     If a waker already unlinked it, the wake is in flight: it waits for the
 *     signal (the waker is between steps 1 and 2) and reports the race, so
 *     the caller honours or passes on what it was given.
 */
#include "fwait/internal.h"

#include <errno.h>

void fw_waiter_init(struct fw_waiter *w, const void *key, int bit, bool exclusive)
{
	pthread_condattr_t attr;

	w->next = w->prev = NULL;
	w->queued = false;
	w->exclusive = exclusive;
	w->bit = bit;
	w->key = key;
	w->since_ns = 0;
	w->steals = 0;
	w->state = FW_WAITING;
	/* Adaptive: the waker signals with w->mtx held, and the woken thread
	 * needs w->mtx to return from the wait; the waker lets go a moment
	 * later, so a short spin beats sleeping on the mutex (which costs a
	 * futex wait here and a futex wake in the waker's unlock). */
	pthread_mutexattr_t mattr;
	pthread_mutexattr_init(&mattr);
	pthread_mutexattr_settype(&mattr, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(&w->mtx, &mattr);
	pthread_mutexattr_destroy(&mattr);
	/* Deadlines are CLOCK_MONOTONIC: immune to wall-clock steps. */
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cond, &attr);
	pthread_condattr_destroy(&attr);
}

void fw_waiter_destroy(struct fw_waiter *w)
{
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->mtx);
}

void fw_enqueue(struct fw_bucket *b, struct fw_waiter *w)
{
	w->next = NULL;
	w->prev = b->tail;
	if (b->tail)
		b->tail->next = w;
	else
		b->head = w;
	b->tail = w;
	w->queued = true;
	w->since_ns = fw_now_ns();

	b->depth++;
	fw_stat_add(&b->stats.waits, 1);
	if (b->depth > atomic_load_explicit(&b->stats.max_depth, memory_order_relaxed))
		atomic_store_explicit(&b->stats.max_depth, b->depth, memory_order_relaxed);
}

void fw_unlink(struct fw_bucket *b, struct fw_waiter *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else
		b->head = w->next;
	if (w->next)
		w->next->prev = w->prev;
	else
		b->tail = w->prev;
	w->next = w->prev = NULL;
	w->queued = false;
	b->depth--;
}

bool fw_word_has_waiters(const struct fw_bucket *b, const void *word)
{
	for (const struct fw_waiter *w = b->head; w; w = w->next)
		if (w->key == word && w->bit != FW_GENERIC_BIT)
			return true;
	return false;
}

void fw_choose(struct fw_bucket *b, struct fw_wake_list *l, struct fw_waiter *w)
{
	fw_unlink(b, w);
	if (l->last)
		l->last->next = w;
	else
		l->first = w;
	l->last = w;
	l->count++;
	fw_stat_add(&b->stats.wakeups, 1);
}

void fw_collect(struct fwait_table *t, struct fw_bucket *b, const void *key,
		int bit, uint32_t nr_exclusive, struct fw_wake_list *l)
{
	uint64_t foreign = 0;
	struct fw_waiter *w = b->head;

	while (w) {
		struct fw_waiter *next = w->next;
		bool match = w->key == key && w->bit == bit;

		if (t->policy == FWAIT_BROADCAST) {
			/* The pre-2004 hashed queue: everyone in the bucket. */
			fw_choose(b, l, w);
		} else if (!match) {
			foreign++;
		} else if (!w->exclusive) {
			fw_choose(b, l, w);
		} else if (nr_exclusive > 0) {
			if (nr_exclusive != FWAIT_ALL)
				nr_exclusive--;
			fw_choose(b, l, w);
		}
		w = next;
	}
	if (foreign)
		fw_stat_add(&b->stats.foreign, foreign);
}

struct fw_waiter *fw_first_exclusive(struct fw_bucket *b, const void *key, int bit,
				     bool *word_others)
{
	uint64_t foreign = 0;
	struct fw_waiter *found = NULL;
	bool others = false;

	/* One walk: stop once the answer is known, i.e. at the first match
	 * if nobody asked about the rest of the word, else once both the
	 * match and another waiter of the word have been seen. */
	for (struct fw_waiter *w = b->head; w; w = w->next) {
		bool match = w->key == key && w->bit == bit;

		if (match && w->exclusive && !found) {
			found = w;
			if (word_others == NULL || others)
				break;
			continue;
		}
		if (!found && !match)
			foreign++;
		if (w->key == key && bit != FW_GENERIC_BIT && w->bit != FW_GENERIC_BIT) {
			others = true; /* another waiter of the same word */
			if (found)
				break;
		}
	}
	if (word_others)
		*word_others = others;
	/* Count the walk only when it chose someone: callers that find nobody
	 * go on to fw_collect, which walks and counts the bucket itself. */
	if (found && foreign)
		fw_stat_add(&b->stats.foreign, foreign);
	return found;
}

void fw_signal_all(struct fw_wake_list *l, int state)
{
	struct fw_waiter *w = l->first;

	while (w) {
		/* Read the link before the signal: once w->mtx is unlocked the
		 * waiter may return and its stack frame be reused. */
		struct fw_waiter *next = w->next;

		pthread_mutex_lock(&w->mtx);
		w->state = state;
		pthread_cond_signal(&w->cond);
		/* Last touch of w.  The mutex handshake is also what orders the
		 * waker's critical section before the woken thread's (for a
		 * handoff the lock bit never cleared, so there is no atomic
		 * acquire/release pair on the word to do it). */
		pthread_mutex_unlock(&w->mtx);
		w = next;
	}
	l->first = l->last = NULL;
}

int fw_sleep(struct fwait_table *t, struct fw_bucket *b, struct fw_waiter *w,
	     const struct timespec *deadline, bool *raced)
{
	bool expired = false;
	int state;

	*raced = false;
	pthread_mutex_unlock(&b->lock);

	pthread_mutex_lock(&w->mtx);
	while (w->state == FW_WAITING) {
		if (deadline == NULL) {
			pthread_cond_wait(&w->cond, &w->mtx);
		} else if (pthread_cond_timedwait(&w->cond, &w->mtx, deadline) != 0 &&
			   w->state == FW_WAITING) {
			/* ETIMEDOUT (EINVAL cannot happen: callers validate
			 * the deadline, and treating it as expiry cannot hang). */
			expired = true;
			break;
		}
	}
	state = w->state;
	w->state = FW_WAITING; /* ready for another trip through the queue */
	pthread_mutex_unlock(&w->mtx);
	if (!expired)
		goto out;

	pthread_mutex_lock(&b->lock);
	if (w->queued) {
		fw_unlink(b, w);
		state = FW_TIMEDOUT; /* returns with b->lock held */
		goto out;
	}
	pthread_mutex_unlock(&b->lock);

	/* A waker chose us just as the deadline passed; it is between dropping
	 * the bucket lock and signalling us, so this wait is short. */
	pthread_mutex_lock(&w->mtx);
	while (w->state == FW_WAITING)
		pthread_cond_wait(&w->cond, &w->mtx);
	state = w->state;
	w->state = FW_WAITING;
	pthread_mutex_unlock(&w->mtx);
	*raced = true;
out:
	fw_hist_record(t, b, fw_now_ns() - w->since_ns);
	return state;
}
