/* SPDX-License-Identifier: MIT */
/*
 * hlatch.c - hybrid latches (optimistic, shared, exclusive) on a caller's
 * 64-bit word laid out as the caller chooses.
 *
 * Layer 5 (hybrid latch): calls only keyed.c and base.c (the public
 * fwait_wake_ex, fwait_wake, fwait_spin and fwait_deadline_valid; the
 * internal fw_wait_latch and fw_released_waiters).
 *
 * Design note
 * -----------
 * The uncontended calls are inline in fwait.h (one load and one CAS; the
 * layout's rules, fwait_hl_valid_, live there too); this file holds what
 * they call when that fails, each the whole call again (its fast path
 * included), and the calls with no fast path.
 *
 * The parking-lot pattern of fwait.h ("Keyed waits, complete"), built: the
 * word holds the state, a version and (optionally) a waiters bit W; fwait
 * holds nothing per latch.  Shared and exclusive waiters sleep on one key,
 * the word's address.  No lock of our own: the bucket lock of that key,
 * which fwait takes around every ready() and wake callback, is what
 * orders W's changes against the waiters.
 *
 * W.  A waiter sets W (a CAS on the value it saw held) in its ready(),
 * under the bucket lock, then sleeps.  A release that sees W set calls
 * fwait_wake_ex; its callback (release_cb), under the same bucket lock,
 * frees (or hands over) the latch and sets W to the report's
 * more_waiters: exactly whether anyone is still queued, since a woken
 * waiter that loses its race sets W again in its next ready(), under that
 * lock.  A waiter that times out leaves W set: the next release goes slow
 * once and clears it (more_waiters false).
 *
 * A release that sees W clear.  Usually one release CAS, and no call into
 * fwait; a W set meanwhile fails it.  Why relaxed suffices for W's CAS:
 * that release is an RMW, which reads the last value in the word's
 * modification order, and a W-setting CAS expected a held value, so it
 * precedes (in that order) the release that ends the hold, which
 * therefore sees W.  But an exclusive release under
 * FWAIT_HLATCH_STORE_RELEASE on a table with membarrier that finds the
 * bucket's nkeyed 0 (nobody waiting there: the uncontended case) makes a
 * plain release store of the freed value instead (only the holder writes
 * a held word, but for the caller's bits, fwait.h, and a waiter's W), then
 * reads nkeyed again (fw_released_waiters), and only if it is not 0 calls
 * fwait_wake_ex with released_cb.  A W set between the load and the store
 * is wiped by the store, so the waiter that set it must be found by that
 * second read: it counted itself in nkeyed before its ready(), and between
 * the two a membarrier was made (fw_wait_latch), which puts a full barrier
 * into every running thread, hence into the releaser before its store
 * (its read then sees the count), after its read (the waiter's ready()
 * then sees the store and takes the latch) or between them (a fence on
 * each side of Dekker's pair).  That is the kernel's guarantee
 * (membarrier(2)), not C11's, as liburcu's urcu-memb readers rely on it.
 * The first read is only a choice of path: the CAS is right whatever it
 * said, and the store is right because of the second read.  Under
 * contention the CAS keeps W exact, so releases call into the table only
 * for their own key's waiters (nkeyed is per bucket and counts the
 * not-yet-queued too).  Without membarrier (the table's no_membarrier, an
 * old kernel, qemu-user, Valgrind) every release is the CAS.
 * released_cb restores W under the bucket lock, or hands the latch to a
 * due writer (below).  So W is exact under the lock except between a store
 * release and its callback, and nothing skips the table on W's word in
 * that window without a release still to come: a CAS release that sees
 * W wiped runs while the store release's own wake is pending
 * (tests/model/hlatch.pml's npost).
 *
 * Fairness.  The take is inside ready(), so a woken writer that loses to
 * a running thread re-queues at the head of the key (fwait's FAIR), and
 * an exclusive release whose report says the oldest writer is due keeps
 * the latch exclusive and hands it over with a token (HL_HANDOFF); the
 * shared waiters chosen by the same wake get the token too and wait
 * again.  A store release's callback does the same for a due writer while
 * the latch is still free, and cancels its wake if it was taken again (a
 * plain wake there let a due writer lose once more, past max_steals: the
 * model's bounded bypass caught it; and under contention such wakes tripled
 * the parks per acquisition, docs/benchmarks.md).  A shared release whose callback finds that woken readers have
 * joined since it looked (it is not the last holder) cancels the wake
 * (FWAIT_WAKE_CANCEL): the chosen stay queued in their places and the
 * last holder comes back; waking them would send a due writer to lose
 * again (tests/model/hlatch.pml found it).  A new reader does not join a shared latch while W is set (a
 * writer, or a reader held back by shared_max, is queued), so readers
 * cannot starve a writer; a woken reader does join, or the readers of one
 * wake would send each other back to sleep.
 *
 * Optimistic readers (Boehm's seqlock, "Can seqlocks get along with
 * programming language memory models?", 2012): every exclusive take is
 * followed by a release fence before the holder's first store to the data
 * (x_taken: on ARM a later store may become visible before the CAS's
 * store), and fwait_hlatch_validate starts with an acquire fence.  If a
 * reader's relaxed load of the data reads a store the holder made after
 * taking, the holder's release fence synchronises with the reader's
 * acquire fence, so the take's CAS happens before validate's load of the
 * word, which then reads that CAS's value or a later one: exclusive, or a
 * bumped version, and the read fails.  A handoff keeps the latch exclusive
 * throughout and bumps the version, and the new holder's stores follow its
 * own x_taken, so the same argument holds for it.
 */
#include "fwait/internal.h"
#include "util/fence.h"

#include <errno.h>

/* The token of a handoff: the latch was kept exclusive for the waiter. */
#define HL_HANDOFF 1u

/* A layout, decoded: masks in place. */
struct hl {
	unsigned shift;      /* state_shift */
	uint64_t smask;      /* the state field */
	uint64_t vmask, vone;/* the version field, its 1 */
	uint64_t w;          /* W, or 0 */
	unsigned smax, x, marked;
	bool store;          /* FWAIT_HLATCH_STORE_RELEASE */
};

/* What the latch calls a state value. */
enum hl_kind { HL_FREE, HL_SHARED, HL_X, HL_OTHER };

/* The rules are the header's (fwait_hl_valid_, one home), the masks its. */
static int decode(const struct fwait_hlatch_layout *l, struct hl *h)
{
	if (!fwait_hl_valid_(l))
		return -EINVAL;
	h->shift = l->state_shift;
	h->smask = fwait_hl_smax_(l) << l->state_shift;
	h->vone = UINT64_C(1) << l->version_shift;
	h->vmask = fwait_hl_vmask_(l);
	h->w = fwait_hl_wmask_(l);
	h->smax = l->shared_max;
	h->x = l->exclusive;
	h->marked = l->marked;
	h->store = l->flags & FWAIT_HLATCH_STORE_RELEASE;
	return 0;
}

static inline unsigned state_of(const struct hl *h, uint64_t v)
{
	return (unsigned)((v & h->smask) >> h->shift);
}

static inline uint64_t with_state(const struct hl *h, uint64_t v, unsigned s)
{
	return (v & ~h->smask) | ((uint64_t)s << h->shift);
}

static inline uint64_t bumped(const struct hl *h, uint64_t v)
{
	return (v & ~h->vmask) | ((v + h->vone) & h->vmask);
}

static enum hl_kind kind_of(const struct hl *h, unsigned s)
{
	if (s == 0 || (h->marked && s == h->marked))
		return HL_FREE;
	if (s == h->x)
		return HL_X;
	return s <= h->smax ? HL_SHARED : HL_OTHER;
}

/* The exclusive holder's first stores follow this (design note). */
static inline void x_taken(void)
{
	util_fence_release();
}

/* ---- taking: one attempt on a value already loaded ---- */

/* A wait's state, shared by its spin, its ready() and the call. */
struct hl_wait {
	const struct hl *h;
	fwait_atomic_u64 *word;
	int err;      /* -EAGAIN: the caller's own state */
	bool taken;
	bool queued;  /* ready() returned false once: a woken reader joins */
};

/* One try at exclusive.  0 taken, -EBUSY held, -EAGAIN the caller's
 * state.  acquire on success: pairs with the release of the RMW that last
 * freed the latch (a release CAS, or a wake callback's). */
static int try_x(const struct hl *h, fwait_atomic_u64 *word)
{
	uint64_t v = atomic_load_explicit(word, memory_order_relaxed);
	for (;;) {
		switch (kind_of(h, state_of(h, v))) {
		case HL_OTHER:
			return -EAGAIN;
		case HL_FREE:
			if (atomic_compare_exchange_weak_explicit(word, &v, with_state(h, v, h->x),
					memory_order_acquire, memory_order_relaxed))
				return 0;
			continue;
		default:
			return -EBUSY;
		}
	}
}

/* One try at shared; fresh: a new reader, which defers to W.  Same
 * returns and ordering as try_x. */
static int try_s(const struct hl *h, fwait_atomic_u64 *word, bool fresh)
{
	uint64_t v = atomic_load_explicit(word, memory_order_relaxed);
	for (;;) {
		unsigned s = state_of(h, v);
		uint64_t nv;
		switch (kind_of(h, s)) {
		case HL_OTHER:
			return -EAGAIN;
		case HL_FREE:
			nv = with_state(h, v, 1);
			break;
		case HL_SHARED:
			if (s == h->smax || (fresh && (v & h->w)))
				return -EBUSY;
			nv = with_state(h, v, s + 1);
			break;
		default:
			return -EBUSY;
		}
		if (atomic_compare_exchange_weak_explicit(word, &v, nv,
				memory_order_acquire, memory_order_relaxed))
			return 0;
	}
}

/* Under the bucket lock: the latch is held as seen in v; set W unless it
 * is set already.  false: the word changed, look again.  Relaxed: the
 * release that ends this hold is an RMW after this CAS in the word's
 * modification order, so it reads W (design note). */
static bool announce(struct hl_wait *c, uint64_t v)
{
	if (!c->h->w || (v & c->h->w))
		return true;
	return atomic_compare_exchange_strong_explicit(c->word, &v, v | c->h->w,
			memory_order_relaxed, memory_order_relaxed);
}

/* A wait's ready(): take, or announce and sleep.  Under the bucket lock,
 * except from the spin (spinning: no W), where a look is all it is. */
static bool take_or_announce(struct hl_wait *c, bool exclusive, bool locked)
{
	for (;;) {
		int rc = exclusive ? try_x(c->h, c->word) : try_s(c->h, c->word, !c->queued);
		if (rc != -EBUSY) {
			c->err = rc;
			c->taken = rc == 0;
			return true;
		}
		if (!locked)
			return false;
		uint64_t v = atomic_load_explicit(c->word, memory_order_relaxed);
		enum hl_kind k = kind_of(c->h, state_of(c->h, v));
		if (k == HL_FREE || k == HL_OTHER)
			continue; /* released meanwhile: try again */
		if (!exclusive && k == HL_SHARED && c->queued && state_of(c->h, v) < c->h->smax)
			continue; /* a woken reader may join */
		if (announce(c, v)) {
			c->queued = true;
			return false;
		}
	}
}

static bool ready_x(void *arg) { return take_or_announce(arg, true, true); }
static bool ready_s(void *arg) { return take_or_announce(arg, false, true); }
static bool spin_x(void *arg) { return take_or_announce(arg, true, false); }
static bool spin_s(void *arg) { return take_or_announce(arg, false, false); }

/* Spin, then sleep until taken (0), handed over (0), the caller's state
 * (-EAGAIN) or the deadline (-ETIMEDOUT). */
static int hl_wait(struct fwait_table *t, struct hl_wait *c, bool exclusive,
		   const struct timespec *deadline)
{
	if (fwait_spin(t, exclusive ? spin_x : spin_s, c))
		return c->err;
	for (;;) {
		struct fwait_wait_result r;
		int rc = fw_wait_latch(t, c->word, exclusive ? FWAIT_EXCLUSIVE : 0,
				       exclusive ? ready_x : ready_s, c, deadline, c->h->store, &r);
		if (rc < 0)
			return rc;
		if (r.token == HL_HANDOFF && exclusive)
			return 0; /* kept exclusive for us */
		if (r.token)
			/* A reader chosen beside a writer's handoff, or a
			 * token of the caller's own fwait_wake_ex on the
			 * word: not ours; ready() did not run after it. */
			continue;
		if (c->err == -EAGAIN && r.how == FWAIT_HOW_WOKEN && exclusive)
			/* Woken, and leaving without the latch: pass the
			 * wake on (fwait.h, FWAIT_HOW_WOKEN). */
			fwait_wake(t, c->word, 1);
		return c->err;
	}
}

int fwait_hlatch_layout_check(const struct fwait_hlatch_layout *l)
{
	struct hl h;
	return decode(l, &h);
}

int fwait_hlatch_trylock(const struct fwait_hlatch_layout *l, fwait_atomic_u64 *word)
{
	struct hl h;
	if (word == NULL || decode(l, &h))
		return -EINVAL;
	int rc = try_x(&h, word);
	if (rc == 0)
		x_taken();
	return rc;
}

int fwait_hlatch_lock_slow(struct fwait_table *t, const struct fwait_hlatch_layout *l,
		      fwait_atomic_u64 *word, const struct timespec *deadline)
{
	struct hl h;
	if (t == NULL || word == NULL || decode(l, &h) || !fwait_deadline_valid(deadline))
		return -EINVAL;
	int rc = try_x(&h, word);
	if (rc == -EBUSY) {
		struct hl_wait c = { .h = &h, .word = word };
		rc = hl_wait(t, &c, true, deadline);
	}
	if (rc == 0)
		x_taken();
	return rc;
}

int fwait_hlatch_trylock_shared(const struct fwait_hlatch_layout *l, fwait_atomic_u64 *word)
{
	struct hl h;
	if (word == NULL || decode(l, &h) || h.smax == 0)
		return -EINVAL;
	return try_s(&h, word, true);
}

int fwait_hlatch_lock_shared_slow(struct fwait_table *t, const struct fwait_hlatch_layout *l,
			     fwait_atomic_u64 *word, const struct timespec *deadline)
{
	struct hl h;
	if (t == NULL || word == NULL || decode(l, &h) || h.smax == 0 ||
	    !fwait_deadline_valid(deadline))
		return -EINVAL;
	int rc = try_s(&h, word, true);
	if (rc == -EBUSY) {
		struct hl_wait c = { .h = &h, .word = word };
		rc = hl_wait(t, &c, false, deadline);
	}
	return rc;
}

/* ---- releasing ---- */

/* A slow release's callback, under the bucket lock: from the held value
 * (exclusive, or the last shared holder), free the latch into `to` or,
 * if the oldest writer chosen is due, keep it exclusive for that writer;
 * either way W becomes "waiters are still queued".  Release CAS: the
 * freed latch publishes the hold to whoever takes it next (their acquire
 * CAS), and the handoff to the woken writer, whose return the token's
 * handshake orders besides. */
struct hl_release {
	const struct hl *h;
	fwait_atomic_u64 *word;
	unsigned to;   /* the state after a free release */
	bool bump;     /* an exclusive release: the version moves */
};

static uint64_t release_cb(const struct fwait_wake_report *r, void *arg)
{
	struct hl_release *c = arg;
	const struct hl *h = c->h;
	uint64_t v = atomic_load_explicit(c->word, memory_order_relaxed);
	uint64_t nv;
	bool handoff, last;

	/* A loop for the caller's own bits (fwait.h: changed with RMWs only)
	 * and, for a shared release, for woken readers that joined after we
	 * saw ourselves last: then we are not last any more, and only leave. */
	do {
		unsigned s = state_of(h, v);
		last = c->bump || s == 1;
		handoff = last && r->woken_exclusive && r->due && kind_of(h, c->to) == HL_FREE;
		nv = !last ? with_state(h, v, s - 1) :
		     with_state(h, v, handoff ? h->x : c->to);
		if (c->bump)
			nv = bumped(h, nv);
		/* Not last: those chosen go back to the queue (below). */
		if (r->more_waiters || (!last && r->woken))
			nv |= h->w;
		else if (last)
			nv &= ~h->w;
	} while (!atomic_compare_exchange_weak_explicit(c->word, &v, nv,
			memory_order_release, memory_order_relaxed));
	if (!last)
		/* The latch stays shared: whoever was chosen would only lose
		 * to the readers that joined (a due writer, again and again:
		 * tests/model/hlatch.pml, SHARED_BYPASS).  They stay queued
		 * in their places, and W stays set, so the last holder's
		 * release comes back here. */
		return FWAIT_WAKE_CANCEL;
	return handoff ? HL_HANDOFF : 0;
}

/* After a plain-store release, under the bucket lock (wake_released's
 * callback).  The latch may be anyone's by now.  Still free: wake the
 * chosen, or hand it to a due writer among them (the take a ready() would
 * make, with the token of a handoff, so it cannot lose the race the store
 * opened), W set to whether waiters are still queued (the store wrote it
 * back clear, and a waiter may have set it between the releaser's load
 * and that store).  Taken again: cancel, W set, so that holder's release
 * comes back to the table (release_cb, or its own wake_released if it is
 * a store that wipes W again); waking the chosen would only send them to
 * lose to it.  The caller's own state: wake them (-EAGAIN).  The take is
 * an acquire: the latch may have been freed by another holder's release
 * since our store.  The W updates are relaxed, as announce()'s: a
 * holder's store that overwrites one is followed by its own
 * wake_released, which finds these waiters counted in the bucket. */
static uint64_t released_cb(const struct fwait_wake_report *r, void *arg)
{
	const struct hl_release *c = arg;
	const struct hl *h = c->h;
	uint64_t v = atomic_load_explicit(c->word, memory_order_relaxed);
	bool due = r->woken_exclusive && r->due;

	for (;;) {
		enum hl_kind k = kind_of(h, state_of(h, v));
		bool queued = r->more_waiters || (k != HL_FREE && k != HL_OTHER && r->woken);
		uint64_t nv = queued ? v | h->w : v & ~h->w;
		uint64_t token = 0;
		if (k == HL_FREE && due) {
			nv = with_state(h, nv, h->x);
			token = HL_HANDOFF;
		} else if (k != HL_FREE && k != HL_OTHER && r->woken) {
			token = FWAIT_WAKE_CANCEL;
		}
		if (nv == v || atomic_compare_exchange_weak_explicit(c->word, &v, nv,
				memory_order_acquire, memory_order_relaxed))
			return token;
	}
}

/* The waiters of a latch just released into `to` by a plain store, if
 * its bucket has any: one writer and every reader, or all of them when
 * the state became the caller's own (each then returns -EAGAIN). */
static int wake_released(struct fwait_table *t, const struct hl *h, fwait_atomic_u64 *word,
			 unsigned to)
{
	struct hl_release c = { .h = h, .word = word };
	fwait_wake_ex(t, word, kind_of(h, to) == HL_OTHER ? FWAIT_ALL : 1, 0,
		      h->w ? released_cb : NULL, &c);
	return 0;
}

/* Release the hold seen in v (state now `held`) into `to`.  W set: the
 * callback above decides under the bucket lock.  W clear, exclusive, on a
 * table with membarrier, nobody waiting in the bucket: a plain release
 * store (only the holder writes the word, but for a waiter's W, which
 * wake_released restores), then wake_released if someone came meanwhile.
 * Otherwise (shared, no FWAIT_HLATCH_STORE_RELEASE, someone waiting, no
 * membarrier): one release CAS (a W set meanwhile fails it); without W,
 * free, then fwait_wake (which skips the bucket when nobody waits
 * there). */
static int release(struct fwait_table *t, const struct hl *h, fwait_atomic_u64 *word,
		   unsigned to, bool exclusive)
{
	uint64_t v = atomic_load_explicit(word, memory_order_relaxed);
	for (;;) {
		unsigned s = state_of(h, v);
		if (exclusive ? s != h->x : kind_of(h, s) != HL_SHARED)
			return -EPERM;
		bool last = exclusive || s == 1;
		if (last && (v & h->w))
			break;
		uint64_t nv = last ? with_state(h, v, to) : with_state(h, v, s - 1);
		if (exclusive)
			nv = bumped(h, nv);
		/* release: publishes the hold to the next taker's acquire
		 * CAS, and (exclusive) the version to readers' validate. */
		if (exclusive && h->store && t->membarrier && !fw_released_waiters(t, word)) {
			atomic_store_explicit(word, nv, memory_order_release);
			return fw_released_waiters(t, word) ? wake_released(t, h, word, to) : 0;
		}
		if (atomic_compare_exchange_weak_explicit(word, &v, nv,
				memory_order_release, memory_order_relaxed)) {
			if (!h->w && last)
				fwait_wake(t, word, kind_of(h, to) == HL_OTHER ? FWAIT_ALL : 1);
			return 0;
		}
	}
	struct hl_release c = { .h = h, .word = word, .to = to, .bump = exclusive };
	/* One writer and every reader; all of them when the state becomes
	 * the caller's (each then returns -EAGAIN). */
	fwait_wake_ex(t, word, kind_of(h, to) == HL_OTHER ? FWAIT_ALL : 1, 0, release_cb, &c);
	return 0;
}

/* fwait_hlatch_unlocked once someone waits in the bucket.  Apart, so the
 * uncontended call builds no frame for it. */
static __attribute__((noinline)) int unlocked_wake(struct fwait_table *t,
						   const struct fwait_hlatch_layout *l,
						   fwait_atomic_u64 *word, unsigned to)
{
	struct hl h;
	if (decode(l, &h) || to > (h.smask >> h.shift))
		return -EINVAL;
	return wake_released(t, &h, word, to);
}

const fwait_atomic_u32 *fwait_hlatch_waiters(const struct fwait_table *t, const void *word)
{
	if (t == NULL || word == NULL || !t->membarrier)
		return NULL;
	return &fw_bucket_of(t, word)->nkeyed;
}

int fwait_hlatch_unlocked(struct fwait_table *t, const struct fwait_hlatch_layout *l,
			  fwait_atomic_u64 *word, unsigned to)
{
	if (t == NULL || word == NULL)
		return -EINVAL;
	/* Every uncontended exclusive unlock comes here after its store:
	 * the layout is decoded only when someone waits in the bucket. */
	return fw_released_waiters(t, word) ? unlocked_wake(t, l, word, to) : 0;
}

int fwait_hlatch_unlock_to(struct fwait_table *t, const struct fwait_hlatch_layout *l,
			   fwait_atomic_u64 *word, unsigned state)
{
	struct hl h;
	if (t == NULL || word == NULL || decode(l, &h) || state > (h.smask >> h.shift))
		return -EINVAL;
	enum hl_kind k = kind_of(&h, state);
	if (k == HL_SHARED || k == HL_X)
		return -EINVAL;
	return release(t, &h, word, state, true);
}

int fwait_hlatch_unlock_slow(struct fwait_table *t, const struct fwait_hlatch_layout *l,
			fwait_atomic_u64 *word)
{
	return fwait_hlatch_unlock_to(t, l, word, 0);
}

int fwait_hlatch_unlock_shared_slow(struct fwait_table *t, const struct fwait_hlatch_layout *l,
			       fwait_atomic_u64 *word)
{
	struct hl h;
	if (t == NULL || word == NULL || decode(l, &h) || h.smax == 0)
		return -EINVAL;
	return release(t, &h, word, 0, false);
}

/* ---- optimistic reads ---- */

/* ready() of a reader waiting out an exclusive holder: not exclusive any
 * more, or announced. */
static bool not_x(void *arg)
{
	struct hl_wait *c = arg;
	for (;;) {
		uint64_t v = atomic_load_explicit(c->word, memory_order_relaxed);
		if (state_of(c->h, v) != c->h->x)
			return true;
		if (announce(c, v))
			return false;
	}
}

static bool spin_not_x(void *arg)
{
	struct hl_wait *c = arg;
	return state_of(c->h, atomic_load_explicit(c->word, memory_order_relaxed)) != c->h->x;
}

int fwait_hlatch_read_begin_slow(struct fwait_table *t, const struct fwait_hlatch_layout *l,
			    const fwait_atomic_u64 *word, const struct timespec *deadline,
			    uint64_t *snapshot)
{
	struct hl h;
	if (t == NULL || word == NULL || snapshot == NULL || decode(l, &h) ||
	    !fwait_deadline_valid(deadline))
		return -EINVAL;
	/* The waits only read the word, and W's CAS is an atomic RMW that
	 * changes no field of the latch's: the const is the caller's view. */
	struct hl_wait c = { .h = &h, .word = (fwait_atomic_u64 *)word };
	for (;;) {
		/* acquire: pairs with the release of the last exclusive
		 * release (a reader that then reads the data sees its
		 * writes), as Boehm's seqlock reader's first load. */
		uint64_t v = atomic_load_explicit(word, memory_order_acquire);
		enum hl_kind k = kind_of(&h, state_of(&h, v));
		if (k != HL_X) {
			*snapshot = v;
			return k == HL_OTHER ? -EAGAIN : 0;
		}
		if (fwait_spin(t, spin_not_x, &c))
			continue;
		struct fwait_wait_result r;
		int rc = fw_wait_latch(t, word, 0, not_x, &c, deadline, h.store, &r);
		if (rc < 0)
			return rc;
	}
}
