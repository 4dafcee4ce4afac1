/* SPDX-License-Identifier: MIT */
/*
 * stress_fwait.c - seeded, time-bounded stress of the fwait wait table.
 *
 * Design note
 * -----------
 * A run is a sequence of rounds; each round creates a table with one policy
 * (wake-one (fair), wake-one fair with max_steals, wake-one strict,
 * wake-all, broadcast, futex; cycled)
 * and 1..8 buckets (so keys collide), and a word width (the first cycle of
 * policies on 32-bit words with fwait_bit_*, the second on 64-bit words
 * with fwait_bit64_*, whose lock and event bits lie in both 32-bit halves,
 * 62 next to W; --seconds is split over both cycles; --width 32 or 64
 * runs one cycle of that width only),
 * starts T worker threads (200; 64 under
 * TSan), lets them run random operations for its share of --seconds, stops
 * them, and checks the end state.  Operations (--mix bits | all):
 *   - bit_lock with a deadline drawn from {none, already past, 1-50 us,
 *     50-1000 us, 1-20 ms}, bit_trylock, then a critical section that swaps an owner
 *     field (two holders = failure), bumps a plain counter (a lost update or
 *     a TSan report = broken mutual exclusion / ordering) and sometimes holds
 *     the bit long, so that short deadlines expire while handoffs are in
 *     flight;
 *   - bit_wait on a lock bit; event bits set by whoever finds them clear
 *     (fwait_bit_set as a try-lock) and cleared after an event generation
 *     counter is bumped; an event waiter that saw an event in progress must,
 *     once bit_wait returns 0, see that event finished;
 *   - (mix all) generic keys: exclusive consumers take tokens in the ready
 *     callback, producers add a token then fwait_wake(key, 1); shared
 *     waiters wait for a generation to move, bumpers fwait_wake(key, ALL).
 * The main thread is the watchdog: every wait must end within its deadline
 * plus --stall-seconds (no deadline: within --stall-seconds), and every
 * parked bit waiter must satisfy the model's invariants (W set on its word;
 * under strict WAKE_ONE an exclusive waiter's bit set), otherwise the run
 * fails with a dump of fwait_waiters_walk.  --inject lost-wake is the
 * self-test: thread 0 releases lock bits the broken way, and the run passes
 * only if that is detected.  At the end of a round: no
 * waiter parked, every caller bit clear, W clear (except where the design
 * allows it to stay: broadcast, futex), owners free, plain counters equal
 * to the critical sections entered, tokens conserved, and the table's
 * timeout counter equal to the -ETIMEDOUT results the workers saw.
 *
 * Sharing: the round's words, owners and counters are shared by workers
 * through atomics (or the lock bit, for the plain counters); each worker's
 * tallies are its own until the main thread joins it.
 */
#include "stress_util.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NWORDS 6
#define NLOCK 4   /* lock bits per word */
#define NEV 2     /* event bits per word */
#define NKEYS 4   /* generic keys */
#define MAX_THREADS 1024

static const unsigned lock_bits32[NLOCK] = { 0, 1, 17, 30 }; /* 30: next to W */
static const unsigned ev_bits32[NEV] = { 8, 9 };
/* 64-bit rounds: both halves (the futex half-word), 62 next to W. */
static const unsigned lock_bits64[NLOCK] = { 0, 31, 40, 62 };
static const unsigned ev_bits64[NEV] = { 9, 45 };

/* Round "policies": TC_VARIANT_STEAL, TC_NVARIANTS, tc_variant_name (stress_util.h). */

enum op_kind {
	OP_NONE, OP_LOCK, OP_BITWAIT, OP_EVWAIT, OP_KEYWAIT_EX, OP_KEYWAIT_GEN,
	OP_HOLD
};
static const char *const op_names[] = {
	"none", "bit_lock", "bit_wait(lock bit)", "bit_wait(event bit)",
	"fwait_wait(exclusive)", "fwait_wait(shared)", "holding a lock bit"
};

struct gkey {
	_Atomic int64_t tokens;   /* taken in the ready callback */
	_Atomic uint64_t gen;     /* moved by bumpers */
	_Atomic uint64_t produced, consumed;
};

struct round {
	struct fwait_table *t;
	int policy;               /* 0..TC_NVARIANTS-1 */
	bool keyed;
	_Atomic bool stop;
	bool wide;                /* fwait_bit64_* on words64, else words */
	const unsigned *lock_bits, *ev_bits; /* this width's bits */
	alignas(64) _Atomic uint32_t words[NWORDS];
	alignas(64) _Atomic uint64_t words64[NWORDS];
	_Atomic int owner[NWORDS][NLOCK];
	uint64_t plain[NWORDS][NLOCK];     /* guarded by the lock bit */
	_Atomic uint64_t entered[NWORDS][NLOCK];
	_Atomic uint64_t ev_gen[NWORDS][NEV];
	struct gkey keys[NKEYS];
};

/* The bit operations on word wi of the round's width. */
static int b_lock(struct round *r, unsigned wi, unsigned bit, const struct timespec *d)
{
	return r->wide ? fwait_bit64_lock(r->t, &r->words64[wi], bit, d)
		       : fwait_bit_lock(r->t, &r->words[wi], bit, d);
}

static int b_trylock(struct round *r, unsigned wi, unsigned bit)
{
	return r->wide ? fwait_bit64_trylock(&r->words64[wi], bit)
		       : fwait_bit_trylock(&r->words[wi], bit);
}

static int b_unlock(struct round *r, unsigned wi, unsigned bit)
{
	return r->wide ? fwait_bit64_unlock(r->t, &r->words64[wi], bit)
		       : fwait_bit_unlock(r->t, &r->words[wi], bit);
}

static int b_wait(struct round *r, unsigned wi, unsigned bit, const struct timespec *d)
{
	return r->wide ? fwait_bit64_wait(r->t, &r->words64[wi], bit, d)
		       : fwait_bit_wait(r->t, &r->words[wi], bit, d);
}

static bool b_set(struct round *r, unsigned wi, unsigned bit)
{
	return r->wide ? fwait_bit64_set(&r->words64[wi], bit)
		       : fwait_bit_set(&r->words[wi], bit);
}

static int b_clear(struct round *r, unsigned wi, unsigned bit)
{
	return r->wide ? fwait_bit64_clear(r->t, &r->words64[wi], bit)
		       : fwait_bit_clear(r->t, &r->words[wi], bit);
}

static bool b_test(struct round *r, unsigned wi, unsigned bit)
{
	return r->wide ? fwait_bit64_test(&r->words64[wi], bit)
		       : fwait_bit_test(&r->words[wi], bit);
}

/* Word wi's value and address, and the width's W. */
static uint64_t b_value(struct round *r, unsigned wi)
{
	return r->wide ? atomic_load(&r->words64[wi]) : atomic_load(&r->words[wi]);
}

static const void *b_addr(struct round *r, unsigned wi)
{
	return r->wide ? (const void *)&r->words64[wi] : (const void *)&r->words[wi];
}

static uint64_t b_wmask(const struct round *r)
{
	return r->wide ? FWAIT64_WAITERS_MASK : FWAIT_WAITERS_MASK;
}

struct worker {
	pthread_t tid;
	int id;
	uint64_t rng;
	struct round *r;
	/* read by the watchdog */
	struct st_watch watch;
	_Atomic bool done;
	/* own tallies, read after the join */
	uint64_t ops, timeouts, cs, handoff_waits, events, ev_waits;
};

static struct worker *workers;
/* --inject lost-wake: thread 0 releases lock bits the broken way. */
static bool inject_lost_wake;

/* ---- deadlines ---------------------------------------------------------- */

/* none / already past / 1-50 us / 50-1000 us / 1-20 ms, in proportions
 * 25/10/20/25/20.  The 50-1000 us class matches the long holds, so many
 * deadlines expire just as a handoff reaches their waiter. */
static const struct timespec *pick_deadline(struct worker *w, struct timespec *dl,
					    bool allow_none)
{
	uint32_t r = st_below(&w->rng, 100);
	if (r < 25 && allow_none)
		return NULL;
	if (r < 35)
		*dl = st_deadline_ns(0);
	else if (r < 55)
		*dl = st_deadline_ns(1000 + st_below(&w->rng, 49000));
	else if (r < 80)
		*dl = st_deadline_ns(50000 + st_below(&w->rng, 950000));
	else
		*dl = st_deadline_ns(1000000 + st_below(&w->rng, 19000000));
	return dl;
}

static void op_begin(struct worker *w, int kind, const struct timespec *dl)
{
	st_watch_begin(&w->watch, kind, dl);
}

static void op_end(struct worker *w)
{
	st_watch_end(&w->watch);
	w->ops++;
}

/* ---- lock bits ---------------------------------------------------------- */

static void hold(struct worker *w)
{
	uint32_t r = st_below(&w->rng, 100);
	if (r < 80)
		return;
	if (r < 95) {
		for (uint32_t i = st_below(&w->rng, 3); i-- > 0;)
			sched_yield();
		return;
	}
	/* a long hold: queues build up behind it, and their short deadlines
	 * expire while it hands off */
	op_begin(w, OP_HOLD, NULL);
	uint64_t until = util_now_ns() + 50000 + st_below(&w->rng, 450000);
	while (util_now_ns() < until)
		sched_yield();
	op_end(w);
}

static void critical_section(struct worker *w, unsigned wi, unsigned li)
{
	struct round *r = w->r;
	int prev = atomic_exchange_explicit(&r->owner[wi][li], w->id + 1, memory_order_relaxed);
	if (prev != 0)
		st_fail("word %u bit %u held by two threads: %d and %d", wi,
			r->lock_bits[li], prev - 1, w->id);
	if (!b_test(r, wi, r->lock_bits[li]))
		st_fail("word %u bit %u clear inside its critical section", wi, r->lock_bits[li]);
	r->plain[wi][li]++; /* a lost update = two holders */
	atomic_fetch_add_explicit(&r->entered[wi][li], 1, memory_order_relaxed);
	w->cs++;
	hold(w);
	prev = atomic_exchange_explicit(&r->owner[wi][li], 0, memory_order_relaxed);
	if (prev != w->id + 1)
		st_fail("word %u bit %u: owner changed under thread %d (now %d)", wi,
			r->lock_bits[li], w->id, prev - 1);
	if (inject_lost_wake && w->id == 0) {
		/* The bug the model's BROKEN_UNLOCK describes: release with W
		 * dropped and no wake, stranding whoever is queued. */
		if (r->wide)
			atomic_fetch_and(&r->words64[wi],
					 ~((UINT64_C(1) << r->lock_bits[li]) | FWAIT64_WAITERS_MASK));
		else
			atomic_fetch_and(&r->words[wi],
					 ~((UINT32_C(1) << r->lock_bits[li]) | FWAIT_WAITERS_MASK));
		return;
	}
	int rc = b_unlock(r, wi, r->lock_bits[li]);
	if (rc != 0)
		st_fail("fwait_bit_unlock(word %u, bit %u) = %d", wi, r->lock_bits[li], rc);
}

static void do_lock(struct worker *w, unsigned wi, unsigned li)
{
	struct timespec dl;
	const struct timespec *d = pick_deadline(w, &dl, true);

	op_begin(w, OP_LOCK, d);
	int rc = b_lock(w->r, wi, w->r->lock_bits[li], d);
	op_end(w);
	if (rc == 0)
		critical_section(w, wi, li);
	else if (rc == -ETIMEDOUT)
		w->timeouts++;
	else
		st_fail("fwait_bit_lock(word %u, bit %u) = %d", wi, w->r->lock_bits[li], rc);
}

static void do_trylock(struct worker *w, unsigned wi, unsigned li)
{
	int rc = b_trylock(w->r, wi, w->r->lock_bits[li]);
	if (rc == 0)
		critical_section(w, wi, li);
	else if (rc != -EBUSY)
		st_fail("fwait_bit_trylock(word %u, bit %u) = %d", wi, w->r->lock_bits[li], rc);
}

static void do_bitwait_lock(struct worker *w, unsigned wi, unsigned li)
{
	struct timespec dl;
	/* always a deadline: strict handoff may keep a hot lock bit set for
	 * as long as exclusive waiters queue up, which is not a lost wake */
	const struct timespec *d = pick_deadline(w, &dl, false);

	op_begin(w, OP_BITWAIT, d);
	int rc = b_wait(w->r, wi, w->r->lock_bits[li], d);
	op_end(w);
	if (rc == -ETIMEDOUT)
		w->timeouts++;
	else if (rc != 0)
		st_fail("fwait_bit_wait(word %u, bit %u) = %d", wi, w->r->lock_bits[li], rc);
}

/* ---- event bits ---------------------------------------------------------- */

static void do_event(struct worker *w, unsigned wi, unsigned ei)
{
	struct round *r = w->r;
	/* fwait_bit_set as a try-lock (test_set_page_writeback) */
	if (b_set(r, wi, r->ev_bits[ei]))
		return;
	/* odd: in progress.  release: a waiter that reads the odd value also
	 * sees the bit set (the set came first in this thread). */
	uint64_t g = atomic_fetch_add_explicit(&r->ev_gen[wi][ei], 1, memory_order_release);
	if (g & 1)
		st_fail("event word %u bit %u: two owners (generation %" PRIu64 ")", wi,
			r->ev_bits[ei], g);
	hold(w);
	/* even: finished, published by the clear's release */
	atomic_fetch_add_explicit(&r->ev_gen[wi][ei], 1, memory_order_relaxed);
	int rc = b_clear(r, wi, r->ev_bits[ei]);
	if (rc != 0)
		st_fail("fwait_bit_clear = %d", rc);
	w->events++;
}

static void do_event_wait(struct worker *w, unsigned wi, unsigned ei)
{
	struct round *r = w->r;
	struct timespec dl;
	const struct timespec *d = pick_deadline(w, &dl, true);
	uint64_t g = atomic_load_explicit(&r->ev_gen[wi][ei], memory_order_acquire);

	op_begin(w, OP_EVWAIT, d);
	int rc = b_wait(r, wi, r->ev_bits[ei], d);
	op_end(w);
	if (rc == -ETIMEDOUT) {
		w->timeouts++;
		return;
	}
	if (rc != 0)
		st_fail("fwait_bit_wait(event word %u, bit %u) = %d", wi, r->ev_bits[ei], rc);
	w->ev_waits++;
	/* bit_wait saw the bit clear (acquire) after we saw event g in
	 * progress: the clear that ended it comes after its "finished" bump */
	if ((g & 1) && atomic_load_explicit(&r->ev_gen[wi][ei], memory_order_relaxed) == g)
		st_fail("bit_wait(word %u, bit %u) returned 0 while event %" PRIu64
			" is still in progress", wi, r->ev_bits[ei], g);
}

/* ---- generic keys -------------------------------------------------------- */

struct take_ctx {
	struct round *r;
	struct gkey *k;
	bool took;
};

/* Called under the bucket lock. */
static bool take_token(void *arg)
{
	struct take_ctx *c = arg;
	int64_t n = atomic_load_explicit(&c->k->tokens, memory_order_relaxed);
	while (n > 0) {
		if (atomic_compare_exchange_weak_explicit(&c->k->tokens, &n, n - 1,
				memory_order_acquire, memory_order_relaxed)) {
			c->took = true;
			return true;
		}
	}
	return atomic_load_explicit(&c->r->stop, memory_order_relaxed);
}

struct gen_ctx {
	struct round *r;
	struct gkey *k;
	uint64_t seen;
};

static bool gen_moved(void *arg)
{
	struct gen_ctx *c = arg;
	return atomic_load_explicit(&c->k->gen, memory_order_acquire) != c->seen ||
	       atomic_load_explicit(&c->r->stop, memory_order_relaxed);
}

static void do_key_consume(struct worker *w, unsigned ki)
{
	struct round *r = w->r;
	struct take_ctx c = { r, &r->keys[ki], false };
	struct timespec dl;
	const struct timespec *d = pick_deadline(w, &dl, st_below(&w->rng, 4) == 0);

	op_begin(w, OP_KEYWAIT_EX, d);
	int rc = fwait_wait(r->t, &r->keys[ki], FWAIT_EXCLUSIVE, take_token, &c, d);
	op_end(w);
	if (c.took)
		atomic_fetch_add_explicit(&r->keys[ki].consumed, 1, memory_order_relaxed);
	if (rc == -ETIMEDOUT) {
		w->timeouts++;
		if (c.took)
			st_fail("fwait_wait returned -ETIMEDOUT after ready() returned true");
	} else if (rc != 0) {
		st_fail("fwait_wait(exclusive) = %d", rc);
	} else if (!c.took && !atomic_load(&r->stop)) {
		st_fail("fwait_wait returned 0 but ready() never returned true");
	}
}

static void do_key_produce(struct worker *w, unsigned ki)
{
	struct round *r = w->r;
	/* release: pairs with the consumer's acquire CAS; the wake comes
	 * after, so a consumer that checks under the bucket lock later sees
	 * the token (the lock orders them). */
	atomic_fetch_add_explicit(&r->keys[ki].tokens, 1, memory_order_release);
	atomic_fetch_add_explicit(&r->keys[ki].produced, 1, memory_order_relaxed);
	int rc = fwait_wake(r->t, &r->keys[ki], 1);
	if (rc < 0)
		st_fail("fwait_wake = %d", rc);
}

static void do_key_genwait(struct worker *w, unsigned ki)
{
	struct round *r = w->r;
	struct gen_ctx c = { r, &r->keys[ki], atomic_load(&r->keys[ki].gen) };
	struct timespec dl;
	const struct timespec *d = pick_deadline(w, &dl, true);

	op_begin(w, OP_KEYWAIT_GEN, d);
	int rc = fwait_wait(r->t, &r->keys[ki], 0, gen_moved, &c, d);
	op_end(w);
	if (rc == -ETIMEDOUT)
		w->timeouts++;
	else if (rc != 0)
		st_fail("fwait_wait(shared) = %d", rc);
	else if (!gen_moved(&c))
		st_fail("fwait_wait(shared) returned 0 but the generation did not move");
}

static void do_key_bump(struct worker *w, unsigned ki)
{
	struct round *r = w->r;
	atomic_fetch_add_explicit(&r->keys[ki].gen, 1, memory_order_release);
	int rc = fwait_wake(r->t, &r->keys[ki], FWAIT_ALL);
	if (rc < 0)
		st_fail("fwait_wake(ALL) = %d", rc);
}

/* ---- the worker ---------------------------------------------------------- */

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct round *r = w->r;

	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		unsigned wi = st_below(&w->rng, NWORDS);
		unsigned li = st_below(&w->rng, NLOCK);
		unsigned ei = st_below(&w->rng, NEV);
		unsigned ki = st_below(&w->rng, NKEYS);
		uint32_t op = st_below(&w->rng, r->keyed ? 100 : 70);

		if (op < 30)
			do_lock(w, wi, li);
		else if (op < 38)
			do_trylock(w, wi, li);
		else if (op < 48)
			do_bitwait_lock(w, wi, li);
		else if (op < 58)
			do_event(w, wi, ei);
		else if (op < 70)
			do_event_wait(w, wi, ei);
		else if (op < 82)
			do_key_consume(w, ki);
		else if (op < 92)
			do_key_produce(w, ki);
		else if (op < 97)
			do_key_genwait(w, ki);
		else
			do_key_bump(w, ki);
	}
	atomic_store_explicit(&w->done, true, memory_order_release);
	return NULL;
}

/* ---- the round ------------------------------------------------------------ */


static void dump_round(void *arg)
{
	struct round *r = arg;
	for (unsigned i = 0; i < NWORDS; i++)
		fprintf(stderr, "  word %u @%p = 0x%08" PRIx64 " (%u-bit)\n", i, b_addr(r, i),
			b_value(r, i), r->wide ? 64 : 32);
	for (unsigned i = 0; i < NKEYS; i++)
		fprintf(stderr, "  key %u @%p tokens=%" PRId64 " gen=%" PRIu64 "\n", i,
			(void *)&r->keys[i], atomic_load(&r->keys[i].tokens),
			atomic_load(&r->keys[i].gen));
	if (workers == NULL)
		return;
	uint64_t now = util_now_ns();
	for (unsigned i = 0; i < st_ctx.threads; i++)
		st_watch_dump(&workers[i].watch, (int)i, now, op_names);
}

/* The watchdog's view of one worker: fail if its wait overran. */
static void check_stall(struct worker *w, uint64_t now, uint64_t stall_ns)
{
	st_watch_check(&w->watch, w->id, now, stall_ns, op_names, "lost wakeup?");
}

/* The model's invariants, checked live on every parked waiter under its
 * bucket lock (fwait_waiters_walk holds it): a queued bit waiter's word has
 * W set (else a release that skips the table strands it), and under strict
 * WAKE_ONE (TC_VARIANT_STRICT) a queued exclusive waiter's bit is set (else
 * its handoff was dropped).  The callback only records; failing happens after the walk. */
struct parked_check {
	struct round *r;
	const void *key;
	int bit;
	uint64_t word;
	const char *what;
};

static int check_parked(const struct fwait_waiter_info *w, void *arg)
{
	struct parked_check *c = arg;
	if (w->bit < 0)
		return 0; /* a generic key */
	uint64_t v = c->r->wide
		? atomic_load_explicit((_Atomic uint64_t *)w->key, memory_order_relaxed)
		: atomic_load_explicit((_Atomic uint32_t *)w->key, memory_order_relaxed);
	c->key = w->key;
	c->bit = w->bit;
	c->word = v;
	if (!(v & b_wmask(c->r))) {
		c->what = "parked with W clear";
		return 1;
	}
	/* Only strict: under eventual fairness an unlock frees the bit and
	 * wakes only the oldest, so the others stay parked on a clear bit
	 * until the next unlock (the stall watchdog catches one left there). */
	if (c->r->policy == TC_VARIANT_STRICT && w->exclusive && !(v & (UINT64_C(1) << w->bit))) {
		c->what = "exclusive waiter parked on a clear bit under strict handoff";
		return 1;
	}
	return 0;
}

static void check_parked_waiters(struct round *r)
{
	struct parked_check c = { .r = r };
	if (r->policy == FWAIT_FUTEX)
		return; /* bit waiters sleep in the kernel, not in the table */
	if (fwait_waiters_walk(r->t, check_parked, &c))
		st_fail("lost wakeup: waiter of word %p bit %d %s (word = 0x%08" PRIx64 ")",
			c.key, c.bit, c.what, c.word);
}

struct round_result {
	uint64_t ops, cs, timeouts, events, ev_waits, produced;
};

static void run_round(struct round *r, unsigned nthreads, uint64_t seed, unsigned round_no,
		      double seconds, double stall_seconds, struct round_result *res)
{
	uint64_t stall_ns = (uint64_t)(stall_seconds * 1e9);
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (unsigned i = 0; i < nthreads; i++) {
		struct worker *w = &workers[i];
		memset(w, 0, sizeof(*w));
		w->id = (int)i;
		w->r = r;
		w->rng = util_rand_seed(seed, (uint64_t)round_no * MAX_THREADS + i);
		int rc = pthread_create(&w->tid, &attr, worker_main, w);
		if (rc != 0)
			st_fail("pthread_create: %s (thread %u)", strerror(rc), i);
	}
	pthread_attr_destroy(&attr);

	/* Watchdog while the round runs. */
	uint64_t end = util_now_ns() + (uint64_t)(seconds * 1e9);
	for (uint64_t now = util_now_ns(); now < end; now = util_now_ns()) {
		for (unsigned i = 0; i < nthreads; i++)
			check_stall(&workers[i], now, stall_ns);
		check_parked_waiters(r);
		st_poll_pause();
	}

	/* Stop.  Waiters of generic keys see `stop` in ready(), checked under
	 * the bucket lock, and this wake takes that lock after the store: one
	 * wake per key reaches every waiter queued before it. */
	atomic_store(&r->stop, true);
	for (unsigned k = 0; k < NKEYS; k++)
		if (fwait_wake(r->t, &r->keys[k], FWAIT_ALL) < 0)
			st_fail("fwait_wake(ALL) at stop failed");
	uint64_t stop_by = util_now_ns() + stall_ns + 5000000000u;
	for (bool all = false; !all;) {
		uint64_t now = util_now_ns();
		if (now > stop_by)
			st_fail("threads still running %.1f s after stop (none of them in a wait): "
				"lost wakeup or livelock?", (double)(stall_ns + 5000000000u) / 1e9);
		all = true;
		for (unsigned i = 0; i < nthreads; i++) {
			if (!atomic_load_explicit(&workers[i].done, memory_order_acquire)) {
				all = false;
				check_stall(&workers[i], now, stall_ns);
			}
		}
		check_parked_waiters(r);
		if (!all)
			st_poll_pause();
	}
	for (unsigned i = 0; i < nthreads; i++) {
		struct worker *w = &workers[i];
		pthread_join(w->tid, NULL);
		res->ops += w->ops;
		res->cs += w->cs;
		res->timeouts += w->timeouts;
		res->events += w->events;
		res->ev_waits += w->ev_waits;
	}
}

static void check_round(struct round *r, const struct round_result *res)
{
	struct fwait_stats st;
	bool table_policy = r->policy != FWAIT_FUTEX;
	bool w_may_stay = r->policy == FWAIT_BROADCAST || r->policy == FWAIT_FUTEX;

	unsigned parked = (unsigned)tc_parked_on(r->t, NULL, -1);
	if (parked)
		st_fail("%u waiter(s) still parked after every thread returned", parked);
	for (unsigned i = 0; i < NWORDS; i++) {
		uint64_t v = b_value(r, i);
		if (v & ~b_wmask(r))
			st_fail("word %u = 0x%08" PRIx64 ": bits left set", i, v);
		if ((v & b_wmask(r)) && !w_may_stay)
			st_fail("word %u = 0x%08" PRIx64 ": W set with nobody waiting", i, v);
		for (unsigned l = 0; l < NLOCK; l++) {
			if (atomic_load(&r->owner[i][l]))
				st_fail("word %u bit %u: owner left set", i, r->lock_bits[l]);
			if (r->plain[i][l] != atomic_load(&r->entered[i][l]))
				st_fail("word %u bit %u: %" PRIu64 " increments under the lock, %"
					PRIu64 " critical sections (lost update)", i, r->lock_bits[l],
					r->plain[i][l], atomic_load(&r->entered[i][l]));
		}
		for (unsigned e = 0; e < NEV; e++)
			if (atomic_load(&r->ev_gen[i][e]) & 1)
				st_fail("word %u event %u left in progress", i, r->ev_bits[e]);
	}
	for (unsigned k = 0; k < NKEYS; k++) {
		struct gkey *g = &r->keys[k];
		int64_t left = atomic_load(&g->tokens);
		uint64_t p = atomic_load(&g->produced), c = atomic_load(&g->consumed);
		if (left < 0 || (uint64_t)left + c != p)
			st_fail("key %u: produced %" PRIu64 ", consumed %" PRIu64 ", left %" PRId64,
				k, p, c, left);
	}

	fwait_stats_get(r->t, &st);
	if (st.timeouts != res->timeouts)
		st_fail("stats: %" PRIu64 " timeouts counted, %" PRIu64 " -ETIMEDOUT returned",
			st.timeouts, res->timeouts);
	if (table_policy) {
		if (st.wakeups > st.waits)
			st_fail("stats: %" PRIu64 " wakeups > %" PRIu64 " waits", st.wakeups, st.waits);
		/* every parking ended by a wake or by a timeout that unlinked
		 * itself (bit waits: always counted as a timeout) */
		if (!r->keyed && st.waits > st.wakeups + st.timeouts)
			st_fail("stats: waits %" PRIu64 " > wakeups %" PRIu64 " + timeouts %" PRIu64,
				st.waits, st.wakeups, st.timeouts);
	}
	if (st.handoffs > st.wakeups)
		st_fail("stats: %" PRIu64 " handoffs > %" PRIu64 " wakeups", st.handoffs, st.wakeups);
	if (st.handoffs && r->policy != FWAIT_WAKE_ONE && r->policy != TC_VARIANT_STEAL &&
	    r->policy != TC_VARIANT_STRICT)
		st_fail("stats: %" PRIu64 " handoffs under %s", st.handoffs, tc_variant_name(r->policy));
}

static int create_table(struct round *r, unsigned nbuckets, unsigned max_steals)
{
	struct fwait_config cfg = { .nbuckets = nbuckets };
	tc_variant_config(r->policy, max_steals, &cfg);
	return fwait_table_create(&r->t, &cfg);
}

int main(int argc, char **argv)
{
	struct st_options o;

	setvbuf(stdout, NULL, _IOLBF, 0);
	st_parse_options(argc, argv, &o);
	bool keyed = o.mix == NULL || strcmp(o.mix, "all") == 0;
	if (o.mix && strcmp(o.mix, "all") != 0 && strcmp(o.mix, "bits") != 0) {
		fprintf(stderr, "%s: --mix must be bits or all\n", argv[0]);
		return 2;
	}
	if (o.inject) {
		if (strcmp(o.inject, "lost-wake") != 0) {
			fprintf(stderr, "%s: --inject must be lost-wake\n", argv[0]);
			return 2;
		}
		inject_lost_wake = true;
	}
	unsigned nthreads = o.threads ? o.threads : (TC_TSAN ? 64 : 200);
	if (nthreads < 2 || nthreads > MAX_THREADS) {
		fprintf(stderr, "%s: --threads must be 2..%d\n", argv[0], MAX_THREADS);
		return 2;
	}
	workers = calloc(nthreads, sizeof(*workers));
	if (workers == NULL)
		return 1;

	/* rounds: one per policy and word width (32, then 64 bits) when
	 * bounded, the --seconds split between them; soak cycles until
	 * --seconds */
	unsigned per_width = o.policy >= 0 ? 1 : TC_NVARIANTS;
	unsigned nrounds = o.width ? per_width : 2 * per_width;
	double per_round = o.seconds / nrounds;
	if (o.soak) {
		nrounds = 0; /* unbounded */
		per_round = 5;
	} else if (per_round < 0.5) {
		per_round = 0.5;
	}
	printf("%s: seed %" PRIu64 " (rerun: --seed %" PRIu64 " or FWAIT_STRESS_SEED=%" PRIu64
	       "), mix %s, %u threads, %.1f s per round%s\n",
	       argv[0], o.seed, o.seed, o.seed, keyed ? "all" : "bits", nthreads, per_round,
	       o.soak ? ", soak" : "");

	uint64_t round_rng = util_rand_seed(o.seed, UINT64_MAX);
	uint64_t run_start = util_now_ns();
	for (unsigned n = 0; nrounds == 0 || n < nrounds; n++) {
		if (o.soak && o.seconds > 0 && util_now_ns() - run_start > (uint64_t)(o.seconds * 1e9))
			break;
		struct round *r = aligned_alloc(64, sizeof(*r));
		if (r == NULL)
			return 1;
		memset(r, 0, sizeof(*r));
		r->policy = o.policy >= 0 ? o.policy : (int)(n % TC_NVARIANTS);
		r->keyed = keyed;
		r->wide = o.width ? o.width == 64 : (n / per_width) % 2 == 1;
		r->lock_bits = r->wide ? lock_bits64 : lock_bits32;
		r->ev_bits = r->wide ? ev_bits64 : ev_bits32;
		unsigned nbuckets = 1 + st_below(&round_rng, 8);
		unsigned max_steals = 1 + st_below(&round_rng, 5);

		st_ctx = (struct st_context){
			.program = argv[0], .seed = o.seed, .round = n,
			.policy = tc_variant_name(r->policy), .width = r->wide ? 64 : 32,
			.nbuckets = nbuckets,
			.max_steals = r->policy == TC_VARIANT_STEAL ? max_steals : 0,
			.threads = nthreads, .dump_extra = dump_round, .dump_arg = r,
			.expected_failure = inject_lost_wake ? "lost wakeup" : NULL,
		};
		int rc = create_table(r, nbuckets, max_steals);
		if (rc == -ENOTSUP) {
			printf("round %u: %s not supported here, skipped\n", n, tc_variant_name(r->policy));
			free(r);
			continue;
		}
		if (rc != 0)
			st_fail("fwait_table_create = %d", rc);
		st_ctx.table = r->t;

		struct round_result res = { 0 };
		uint64_t t0 = util_now_ns();
		run_round(r, nthreads, o.seed, n, per_round, o.stall_seconds, &res);
		check_round(r, &res);

		struct fwait_stats st;
		fwait_stats_get(r->t, &st);
		printf("round %u: %-14s %u-bit, nbuckets %u, max_steals %u: %" PRIu64 " ops, %" PRIu64 " critical sections, %"
		       PRIu64 " timeouts, %" PRIu64 " events, %" PRIu64 " waits, %" PRIu64
		       " handoffs, max depth %u, %.1f s: ok\n",
		       n, tc_variant_name(r->policy), r->wide ? 64 : 32, nbuckets,
		       st_ctx.max_steals,
		       res.ops, res.cs, res.timeouts, res.events, st.waits, st.handoffs,
		       st.max_bucket_depth, (double)(util_now_ns() - t0) / 1e9);
		st_ctx.table = NULL;
		fwait_table_destroy(r->t);
		free(r);
	}
	free(workers);
	if (inject_lost_wake) {
		printf("%s: FAIL: the injected lost wakeup was NOT detected (seed %" PRIu64 ")\n",
		       argv[0], o.seed);
		return 1;
	}
	printf("%s: PASS (seed %" PRIu64 ")\n", argv[0], o.seed);
	return 0;
}
