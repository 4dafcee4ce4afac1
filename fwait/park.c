/* SPDX-License-Identifier: MIT */
/*
 * park.c - parking a waiter in its bucket, sleeping, and waking it.
 *
 * Layer 3 (park): calls only stats.c and base.c.
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
 *     its list link and its parker, and posts the state to the parker
 *     (pk_post).  That post is the waker's last access to the waiter's
 *     memory (its record lives on the waiter's stack), and no waker ever
 *     posts with the bucket lock held, so a woken thread never runs
 *     straight into a lock its waker still holds.
 *  3. A waiter whose deadline passes is not timed out until it has looked
 *     under the bucket lock and found itself still queued ("it is not a
 *     timeout until we unlink the unsignalled node", as parking lots say).
 *     If a waker already unlinked it, the wake is in flight: it waits for the
 *     post (the waker is between steps 1 and 2) and reports the race, so
 *     the caller honours or passes on what it was given.
 *  4. What a waiter sleeps on (struct fw_parker) is its thread's own and
 *     thread-local (the futex word needs no set-up; the pthread parker is
 *     set up on the thread's first wait).  Reuse is safe
 *     because no post outlives the wait it was meant for: a waker posts
 *     only to a waiter it unlinked, and a waiter leaves fw_sleep only after
 *     it has consumed that post (rule 3) or unlinked itself (then nobody
 *     chose it).  The next wait therefore starts with state FW_WAITING and
 *     no post in flight.
 *  5. A sleep is no cancellation point (fwait.h, "Cancellation"):
 *     fw_sleep disables cancellation around it, for both parkers, since a
 *     thread unwound there would leave its record linked (rule 4's
 *     reasoning needs every wait to leave fw_sleep).
 *
 * The parker, on Linux: one word.  The waker stores the state with release
 * order and then calls FUTEX_WAKE on the word; the sleeper loads it with
 * acquire order and sleeps with FUTEX_WAIT while it reads FW_WAITING.  The
 * release/acquire pair orders the waker's critical section before the woken
 * thread's (for a handoff the lock bit never clears, so no pair on the lock
 * word does it), and the kernel re-reads the word under its own hash-bucket
 * lock before it sleeps, so a store that lands between the sleeper's load
 * and its FUTEX_WAIT makes the wait return at once (no lost wakeup).  The
 * FUTEX_WAKE comes after the store, so the woken thread may already have
 * returned and its stack gone; that is harmless: a private FUTEX_WAKE only
 * hashes the address and never reads or writes the memory (glibc relies on
 * the same for its mutexes and semaphores).  Its only effect can be an
 * early return from a FUTEX_WAIT of the same thread's *next* wait on the
 * same word, which re-reads the state and sleeps again.
 *
 * The parker elsewhere (or built with -Dfwait_park=pthread): a mutex, a
 * condvar and the state; the waker sets the state and signals under the
 * mutex, whose unlock is its last touch.  Its destructor runs at thread
 * exit through a pthread key created once per process (pthread_once), which
 * never changes after: configuration, not mutable state.  If the key cannot
 * be created (PTHREAD_KEYS_MAX reached) waits still work and the parker is
 * simply not destroyed (glibc's mutex and condvar hold no resources).  The
 * library must not be unloaded (dlclose) while a thread that has waited is
 * still running: its destructor would point into it.
 */
#include "fwait/internal.h"
#include "util/chaos.h"
#include "util/clock.h"
#include "util/probe.h"

#include <errno.h>

static _Thread_local struct fw_parker parker;

#if FW_PARK_FUTEX
static struct fw_parker *parker_get(void)
{
	/* Zero-initialised thread-local storage is FW_WAITING already. */
	return &parker;
}

static void pk_post(struct fw_parker *pk, int state)
{
	/* Release: pairs with pk_wait's acquire load (see the note above). */
	atomic_store_explicit(&pk->state, (uint32_t)state, memory_order_release);
	fw_sys_futex((uint32_t *)(void *)&pk->state, FUTEX_WAKE_BITSET, 1, NULL,
		     FUTEX_BITSET_MATCH_ANY);
}

/* Waits for a post, or until the CLOCK_MONOTONIC deadline (NULL: none).
 * Returns the posted state and resets the parker for the next wait, or
 * FW_WAITING if the deadline passed first. */
static int pk_wait(struct fw_parker *pk, const struct timespec *deadline)
{
	uint32_t s;

	/* Acquire: pairs with pk_post's release store. */
	while ((s = atomic_load_explicit(&pk->state, memory_order_acquire)) == FW_WAITING) {
		/* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC
		 * deadline.  EAGAIN (posted meanwhile) and EINTR re-check. */
		long r = fw_sys_futex((uint32_t *)(void *)&pk->state, FUTEX_WAIT_BITSET,
				      FW_WAITING, deadline, FUTEX_BITSET_MATCH_ANY);
		if (r != 0 && errno == ETIMEDOUT &&
		    atomic_load_explicit(&pk->state, memory_order_acquire) == FW_WAITING)
			return FW_WAITING;
	}
	/* Only the owner writes the word between posts (rule 4). */
	atomic_store_explicit(&pk->state, FW_WAITING, memory_order_relaxed);
	return (int)s;
}

#else /* the pthread parker */

static pthread_once_t parker_once = PTHREAD_ONCE_INIT;
static pthread_key_t parker_key;
static bool parker_key_ok;

/* Runs at the exit of a thread that has waited.  Its last wait has returned,
 * so every waker has made its last touch (the unlock of mtx, rule 2). */
static void parker_destroy(void *arg)
{
	struct fw_parker *pk = arg;

	pthread_cond_destroy(&pk->cond);
	pthread_mutex_destroy(&pk->mtx);
	pk->ready = false;
}

static void parker_key_create(void)
{
	parker_key_ok = pthread_key_create(&parker_key, parker_destroy) == 0;
}

/* The calling thread's parker, set up on first use. */
static struct fw_parker *parker_get(void)
{
	struct fw_parker *pk = &parker;

	if (pk->ready)
		return pk;
	/* Adaptive: the waker signals with pk->mtx held, and the woken thread
	 * needs pk->mtx to return from the wait; the waker lets go a moment
	 * later, so a short spin beats sleeping on the mutex (which costs a
	 * futex wait here and a futex wake in the waker's unlock). */
	pthread_mutexattr_t mattr;
	pthread_mutexattr_init(&mattr);
#ifdef __GLIBC__ /* PTHREAD_MUTEX_ADAPTIVE_NP is an enum constant, not a macro */
	pthread_mutexattr_settype(&mattr, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
	pthread_mutex_init(&pk->mtx, &mattr);
	debug_lock_rank(&pk->mtx, UTIL_RANK_FW_PARKER, "fwait parker mtx");
	pthread_mutexattr_destroy(&mattr);
	/* Deadlines are CLOCK_MONOTONIC: immune to wall-clock steps. */
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&pk->cond, &attr);
	pthread_condattr_destroy(&attr);
	pk->state = FW_WAITING;
	pk->ready = true;
	/* pthread_once synchronises every caller with the one call, so
	 * parker_key and parker_key_ok are seen as it set them. */
	pthread_once(&parker_once, parker_key_create);
	if (parker_key_ok)
		pthread_setspecific(parker_key, pk);
	return pk;
}

static void pk_post(struct fw_parker *pk, int state)
{
	pthread_mutex_lock(&pk->mtx);
	pk->state = state;
	pthread_cond_signal(&pk->cond);
	/* Last touch of the waiter.  The mutex handshake is also what orders
	 * the waker's critical section before the woken thread's (for a
	 * handoff the lock bit never cleared, so there is no atomic
	 * acquire/release pair on the word to do it). */
	pthread_mutex_unlock(&pk->mtx);
}

static int pk_wait(struct fw_parker *pk, const struct timespec *deadline)
{
	int state;

	pthread_mutex_lock(&pk->mtx);
	while (pk->state == FW_WAITING) {
		if (deadline == NULL) {
			pthread_cond_wait(&pk->cond, &pk->mtx);
		} else if (pthread_cond_timedwait(&pk->cond, &pk->mtx, deadline) != 0 &&
			   pk->state == FW_WAITING) {
			/* ETIMEDOUT (EINVAL cannot happen: callers validate
			 * the deadline, and treating it as expiry cannot hang). */
			break;
		}
	}
	state = pk->state;
	pk->state = FW_WAITING; /* ready for another trip through the queue */
	pthread_mutex_unlock(&pk->mtx);
	return state;
}
#endif

static void waiter_init(struct fw_waiter *w, const void *key, int bit, bool exclusive)
{
	w->next = w->prev = NULL;
	w->queued = false;
	w->exclusive = exclusive;
	w->async = false;
	w->bit = bit;
	w->key = key;
	w->since_ns = 0;
	w->first_ns = 0;
	w->steals = 0;
	w->token = 0;
	w->pk = NULL;
}

void fw_waiter_init(struct fw_waiter *w, const void *key, int bit, bool exclusive)
{
	waiter_init(w, key, bit, exclusive);
	w->pk = parker_get();
}

void fw_waiter_init_async(struct fw_waiter *w, const void *key, bool exclusive)
{
	waiter_init(w, key, FW_GENERIC_BIT, exclusive);
	w->async = true;
}

/* The head of the group of (key, bit) in b, or NULL.  Adds to *foreign
 * (if not NULL) the waiters of the other keys passed over on the way. */
static struct fw_waiter *group_of(const struct fw_bucket *b, const void *key, int bit,
				  uint64_t *foreign)
{
	for (struct fw_waiter *h = b->keys; h; h = h->knext) {
		if (h->key == key && h->bit == bit)
			return h;
		if (foreign)
			*foreign += h->kcount;
	}
	return NULL;
}

/* Link w into its key's FIFO: at the tail, or at the head (w takes the
 * group's place in the bucket's list of groups). */
static void link_waiter(struct fw_bucket *b, struct fw_waiter *w, bool at_head)
{
	debug_assert_held(&b->lock); /* internal.h: caller holds b->lock */
	struct fw_waiter *h, *last = NULL;

	for (h = b->keys; h; last = h, h = h->knext)
		if (h->key == w->key && h->bit == w->bit)
			break;
	if (h) {
		/* Into the ring between the newest (h->prev) and h: as the
		 * newest, or, at_head, as the new oldest. */
		struct fw_waiter *newest = h->prev;
		w->prev = newest;
		w->next = h;
		newest->next = w;
		h->prev = w;
		if (at_head) {
			w->khead = true;
			w->kcount = h->kcount + 1;
			w->kprev = h->kprev;
			w->knext = h->knext;
			if (w->kprev)
				w->kprev->knext = w;
			else
				b->keys = w;
			if (w->knext)
				w->knext->kprev = w;
			h->khead = false;
			h->knext = h->kprev = NULL;
		} else {
			h->kcount++;
			w->khead = false;
		}
	} else {
		/* First waiter of this key: a new group at the list's end, so
		 * groups stay in order of their oldest waiter. */
		w->next = w->prev = w;
		w->khead = true;
		w->kcount = 1;
		w->kprev = last;
		w->knext = NULL;
		if (last)
			last->knext = w;
		else
			b->keys = w;
	}
	w->queued = true;
	w->since_ns = util_now_ns();
	if (w->first_ns == 0)
		w->first_ns = w->since_ns;

	b->depth++;
	FW_STAT(b, waits, 1);
	if (b->stats_on &&
	    b->depth > atomic_load_explicit(&b->stats.max_depth, memory_order_relaxed))
		atomic_store_explicit(&b->stats.max_depth, b->depth, memory_order_relaxed);
}

void fw_enqueue(struct fw_bucket *b, struct fw_waiter *w)
{
	link_waiter(b, w, false);
}

bool fw_requeue(struct fwait_table *t, struct fw_bucket *b, struct fw_waiter *w, bool woken)
{
	if (woken)
		FW_STAT(b, spurious, 1);
	bool head = woken && w->exclusive && fw_fair(t);
	if (head) {
		FW_STAT(b, lost_races, 1);
		w->steals++;
	}
	link_waiter(b, w, head);
	return head;
}

bool fw_due(const struct fwait_table *t, const struct fw_waiter *w)
{
	if (t->max_steals && w->steals >= t->max_steals)
		return true;
	/* first_ns is 0 only before w ever queued: a newcomer is not due. */
	return w->first_ns && util_now_ns() - w->first_ns >= t->fair_ns;
}

void fw_hold_vote(const struct fwait_table *t, struct fw_bucket *b, uint64_t hold_ns)
{
	debug_assert_held(&b->lock); /* internal.h: caller holds b->lock */
	if (t->hold_ns == 0)
		return;
	if (hold_ns >= t->hold_ns) {
		if (b->hold_vote < FW_HOLD_VOTE_MAX)
			b->hold_vote++;
	} else if (b->hold_vote > 0) {
		b->hold_vote--;
	}
}

bool fw_holds_long(const struct fwait_table *t, const struct fw_bucket *b)
{
	debug_assert_held(&b->lock); /* internal.h: caller holds b->lock */
	return t->hold_ns != 0 && b->hold_vote >= FW_HOLD_VOTE_LONG;
}

void fw_unlink(struct fw_bucket *b, struct fw_waiter *w)
{
	debug_assert_held(&b->lock); /* internal.h: the lists are guarded by b->lock */
	if (!w->khead) {
		/* Inside a FIFO: the ring closes over it (if w was the newest,
		 * its successor is the head, whose prev becomes the new newest). */
		w->prev->next = w->next;
		w->next->prev = w->prev;
		group_of(b, w->key, w->bit, NULL)->kcount--;
	} else if (w->next == w) {
		/* Last waiter of its key: the group goes. */
		if (w->kprev)
			w->kprev->knext = w->knext;
		else
			b->keys = w->knext;
		if (w->knext)
			w->knext->kprev = w->kprev;
	} else {
		/* The next-oldest waiter heads the group, in w's place. */
		struct fw_waiter *n = w->next;
		n->prev = w->prev;
		w->prev->next = n;
		n->khead = true;
		n->kcount = w->kcount - 1;
		n->kprev = w->kprev;
		n->knext = w->knext;
		if (n->kprev)
			n->kprev->knext = n;
		else
			b->keys = n;
		if (n->knext)
			n->knext->kprev = n;
	}
	w->next = w->prev = w->knext = w->kprev = NULL;
	w->khead = false;
	w->queued = false;
	b->depth--;
}

bool fw_key_queued(const struct fw_bucket *b, const void *key, int bit)
{
	debug_assert_held(&b->lock); /* internal.h: caller holds b->lock */
	return group_of(b, key, bit, NULL) != NULL;
}

bool fw_word_has_waiters(const struct fw_bucket *b, const void *word)
{
	for (const struct fw_waiter *h = b->keys; h; h = h->knext)
		if (h->key == word && h->bit != FW_GENERIC_BIT)
			return true;
	return false;
}

void fw_choose(struct fw_bucket *b, struct fw_wake_list *l, struct fw_waiter *w)
{
	debug_assert_held(&b->lock); /* internal.h: caller holds b->lock */
	fw_unlink(b, w);
	if (l->last)
		l->last->next = w;
	else
		l->first = w;
	l->last = w;
	l->count++;
	FW_STAT(b, wakeups, 1);
}

void fw_unchoose(struct fw_bucket *b, struct fw_wake_list *l)
{
	debug_assert_held(&b->lock); /* internal.h: caller holds b->lock */
	/* Reverse the list, then link each at the head of its key: the
	 * oldest ends first again, and each keeps its age (first_ns). */
	struct fw_waiter *rev = NULL;
	for (struct fw_waiter *w = l->first, *next; w; w = next) {
		next = w->next;
		w->next = rev;
		rev = w;
	}
	for (struct fw_waiter *w = rev, *next; w; w = next) {
		next = w->next;
		link_waiter(b, w, true);
		/* Neither a new wait nor a wake: take back what link_waiter
		 * and fw_choose counted (unsigned wrap-around subtracts). */
		FW_STAT(b, waits, UINT64_MAX);
		FW_STAT(b, wakeups, UINT64_MAX);
	}
	l->first = l->last = NULL;
	l->count = 0;
}

/* Choose, oldest first, every non-exclusive waiter of the group headed by h
 * (unless !shared) and up to *nr_exclusive exclusive ones (FWAIT_ALL: all). */
static void choose_from_group(struct fw_bucket *b, struct fw_waiter *h, bool shared,
			      uint32_t *nr_exclusive, struct fw_wake_list *l)
{
	struct fw_waiter *newest = h->prev, *w = h;

	while (w) {
		/* Read the successor first: choosing w relinks the ring. */
		struct fw_waiter *next = w == newest ? NULL : w->next;

		if (!w->exclusive) {
			if (shared)
				fw_choose(b, l, w);
		} else if (*nr_exclusive > 0) {
			if (*nr_exclusive != FWAIT_ALL)
				(*nr_exclusive)--;
			fw_choose(b, l, w);
		}
		w = next;
	}
}

void fw_collect(struct fwait_table *t, struct fw_bucket *b, const void *key,
		int bit, bool shared, uint32_t nr_exclusive, struct fw_wake_list *l)
{
	debug_assert_held(&b->lock); /* internal.h: the wake walk runs under b->lock */
	if (t->pf.unfiltered) {
		/* The pre-2004 hashed queue: everyone in the bucket. */
		uint32_t all = FWAIT_ALL;
		struct fw_waiter *h = b->keys;
		while (h) {
			struct fw_waiter *next_group = h->knext;
			choose_from_group(b, h, true, &all, l);
			h = next_group;
		}
		return;
	}
	uint64_t foreign = 0;
	struct fw_waiter *h = group_of(b, key, bit, &foreign);
	if (h)
		choose_from_group(b, h, shared, &nr_exclusive, l);
	if (foreign)
		FW_STAT(b, foreign, foreign);
}

struct fw_waiter *fw_first_exclusive(struct fw_bucket *b, const void *key, int bit,
				     bool *word_others, uint64_t *walked)
{
	debug_assert_held(&b->lock); /* internal.h: caller holds b->lock */
	uint64_t foreign = 0;
	struct fw_waiter *h = group_of(b, key, bit, &foreign), *found = NULL;

	if (h) {
		struct fw_waiter *w = h;
		do {
			if (w->exclusive) {
				found = w;
				break;
			}
			w = w->next;
		} while (w != h);
	}
	if (word_others) {
		/* Another waiter of the same word: in this key's FIFO, or in a
		 * group of another bit of the word. */
		bool others = h && h->kcount > (found ? 1u : 0u);
		for (struct fw_waiter *g = b->keys; g && !others; g = g->knext)
			others = g != h && g->key == key && g->bit != FW_GENERIC_BIT;
		*word_others = others;
	}
	/* Count the walk only when it chose someone: callers that find nobody
	 * go on to fw_collect, which counts the bucket itself; callers that
	 * may still go on to fw_collect take the count in *walked instead. */
	if (walked)
		*walked = foreign;
	else if (found && foreign)
		FW_STAT(b, foreign, foreign);
	return found;
}

void fw_signal_all(struct fw_wake_list *l, int state)
{
	debug_assert_below_rank(UTIL_RANK_FW_BUCKET); /* internal.h: no bucket lock held */
	struct fw_waiter *w = l->first;

	while (w) {
		/* Read the link and the parker before the post: after it the
		 * waiter may return and its stack frame be reused. */
		struct fw_waiter *next = w->next;
		struct fw_parker *pk = w->pk;

		CHAOS_POINT("park.c:fw_signal_all:unlinked_before_post");
		if (w->async) {
			/* An asynchronous record: it leaves the bucket's count
			 * here, as a blocking waiter does once it stops looking
			 * (nothing of it is left to wake), then its completion
			 * runs.  Everything is read before the call: done may
			 * start the record's next wait, or free it. */
			struct fw_async *a = (struct fw_async *)(void *)w;
			fwait_async_fn done = a->done;
			void *arg = a->arg;
			uint64_t token = w->token;
			fw_hist_since(a->t, a->b, w->since_ns);
			fw_nkeyed_leave(a->b);
			a->woken = true;
			done((struct fwait_async *)(void *)a, token, arg);
		} else {
			pk_post(pk, state);
		}
		w = next;
	}
	l->first = l->last = NULL;
}

int fw_sleep(struct fwait_table *t, struct fw_bucket *b, struct fw_waiter *w,
	     const struct timespec *deadline, bool *raced)
{
	debug_assert_held(&b->lock); /* internal.h: called with b->lock held */
	struct fw_parker *pk = w->pk;
	int state, cancel_state;

	*raced = false;
	/* Not a cancellation point, with either parker (fwait.h,
	 * "Cancellation"): pthread_cond_wait and pthread_cond_timedwait are
	 * ones, and a cancel acting there would unwind this thread with w,
	 * on its stack, still linked in b (the next wake would post through
	 * its dead record) and pk->mtx re-taken for ever.  A cancel that
	 * comes meanwhile stays pending until the caller's next
	 * cancellation point, after this wait has returned as it would
	 * have.  The futex parker needs no change, but shares the rule. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
	pthread_mutex_unlock(&b->lock);
	CHAOS_POINT("park.c:fw_sleep:queued_before_wait");
	UTIL_PROBE2(fwait, park, w->key, w->bit);

	state = pk_wait(pk, deadline);
	CHAOS_POINT("park.c:fw_sleep:after_wait");
	if (state != FW_WAITING)
		goto out;

	pthread_mutex_lock(&b->lock);
	if (w->queued) {
		fw_unlink(b, w);
		state = FW_TIMEDOUT; /* returns with b->lock held */
		goto out;
	}
	pthread_mutex_unlock(&b->lock);

	/* A waker chose us just as the deadline passed; it is between dropping
	 * the bucket lock and posting to us, so this wait is short. */
	CHAOS_POINT("park.c:fw_sleep:raced_before_wait");
	state = pk_wait(pk, NULL);
	*raced = true;
out:
	/* Restoring the state is no cancellation point either: a pending
	 * cancel waits for the caller's next one (deferred cancellation). */
	pthread_setcancelstate(cancel_state, NULL);
	/* since_ns: the queueing's clock read (link_waiter), no new one. */
	UTIL_PROBE3(fwait, unpark, w->key, w->bit, w->since_ns);
	fw_hist_since(t, b, w->since_ns);
	return state;
}
