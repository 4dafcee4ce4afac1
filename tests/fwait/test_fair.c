/* SPDX-License-Identifier: MIT */
/*
 * test_fair.c - eventual fairness (FWAIT_HANDOFF_FAIR, WAKE_ONE's default):
 * unlock releases and wakes the oldest exclusive waiter; a woken loser keeps
 * its place; a due waiter (fair_ns, max_steals) is handed the bit.
 *
 * Design note: the lost-race scenarios are built step by step with main as
 * the barging thread.  main holds the bit while the waiters park (polled
 * with fwait_waiters_walk), then unlocks, which wakes the oldest, and
 * re-takes the bit with a trylock at once, before the woken thread can run
 * on two oversubscribed cores.  The woken one then finds the bit taken (a
 * lost race, stats.lost_races) and re-queues; main polls until it is parked
 * again before the next round.  If the woken thread did run first and took
 * the bit, main's trylock fails and the waiter has simply won: the
 * assertions accept both outcomes, each checked for what it implies.  To
 * make main's win likely, main and the waiters share one CPU and the
 * waiters run at nice 19 (pin_to_shared_cpu): odds only.  The tests of
 * one woken waiter do not leave it to odds: they freeze it in a signal
 * handler across main's unlock and trylock (freeze), so main's win is
 * certain unless the unlock handed the bit over, and that is asserted.
 * Every wait and join has a deadline.
 * Nothing here measures speed.
 */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/resource.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>

#include "helpers.h"
#include "../check_run.h"

static struct fwait_table *fair_table(unsigned max_steals, uint32_t fair_ns, uint32_t spin_ns)
{
	struct fwait_config cfg = { .nbuckets = 1, .policy = FWAIT_WAKE_ONE,
				    .max_steals = max_steals, .fair_ns = fair_ns,
				    .spin_ns = spin_ns };
	struct fwait_table *t = NULL;
	ck_assert_int_eq(fwait_table_create(&t, &cfg), 0);
	return t;
}

/* ---- a waiter that records when, and in which order, it acquired ----- */

struct scene {
	struct fwait_table *t;
	_Atomic uint32_t word;
	_Atomic uint64_t word64; /* long_holds_are_handed_over's 64-bit run */
	bool wide;
	atomic_uint next_seq;
};

struct waiter {
	struct scene *sc;
	int rc, unlock_rc;
	unsigned seq;
	uint64_t waited_ns;
	atomic_bool done;
	_Atomic long ktid; /* its kernel id (th_gettid), for freeze */
};

/* Make main's barging near certain: main and the waiters share one CPU,
 * and the waiters run at nice 19, so a waiter woken by main's unlock does
 * not preempt main (its wakeup-preemption granularity is scaled by its tiny
 * weight) before main's trylock.  Nothing depends on it for correctness:
 * a waiter that still wins is accepted by the assertions. */
static int shared_cpu = -1;

static void pin_to_shared_cpu(void)
{
	cpu_set_t set;
	if (shared_cpu < 0) {
		if (sched_getaffinity(0, sizeof(set), &set) != 0)
			return;
		for (int c = 0; c < CPU_SETSIZE && shared_cpu < 0; c++)
			if (CPU_ISSET(c, &set))
				shared_cpu = c;
	}
	CPU_ZERO(&set);
	CPU_SET(shared_cpu, &set);
	(void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	atomic_store(&w->ktid, th_gettid());
	pin_to_shared_cpu();
	/* Per thread on Linux (the tid is a PRIO_PROCESS target); failing is
	 * harmless (see pin_to_shared_cpu). */
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
	struct timespec dl = fwait_deadline_after_ns((uint64_t)TH_DEADLINE_MS * 1000000u);
	uint64_t t0 = util_now_ns();

	w->rc = fwait_bit_lock(w->sc->t, &w->sc->word, 0, &dl);
	w->waited_ns = util_now_ns() - t0;
	if (w->rc == 0) {
		w->seq = atomic_fetch_add(&w->sc->next_seq, 1);
		w->unlock_rc = fwait_bit_unlock(w->sc->t, &w->sc->word, 0);
	}
	atomic_store(&w->done, true);
	return NULL;
}

struct lost_reached {
	struct fwait_table *t;
	uint64_t lost;
	size_t parked;
	atomic_bool *done;
};

/* The woken loser is parked again (or it won after all). */
static bool lost_and_parked(void *arg)
{
	struct lost_reached *r = arg;
	struct fwait_stats st;
	if (r->done && atomic_load(r->done))
		return true;
	fwait_stats_get(r->t, &st);
	return st.lost_races >= r->lost && th_parked(r->t) == r->parked;
}

/* main, holding the bit, lets it go and takes it back at once.  true: main
 * holds it again (the woken waiter lost); false: a waiter has it. */
static bool release_and_barge(struct scene *sc)
{
	ck_assert_int_eq(fwait_bit_unlock(sc->t, &sc->word, 0), 0);
	return fwait_bit_trylock(&sc->word, 0) == 0;
}

/* Freezing a parked waiter, so that main's barge cannot lose: SIGUSR1 to
 * the waiter runs freeze_handler in it (inside its condvar wait, or on its
 * way there), which says so and blocks until thaw().  While it is frozen,
 * main's unlock wakes it (sets its state, signals its condvar: the waiter
 * mutex is free while the waiter is in the handler) and main's trylock
 * takes the bit back before the woken thread can run at all; thawed, it
 * finds the bit taken.  Semaphores: sem_post is async-signal-safe.
 * (Signal handlers reach only globals: these two are this file's.) */
static sem_t frozen_in, frozen_out;

static void freeze_handler(int sig)
{
	(void)sig;
	sem_post(&frozen_in);
	while (sem_wait(&frozen_out) != 0)
		;
}

/* Freeze waiter w (thread tid), parked; false if it did not stop within
 * the deadline.  It is signalled only once it sleeps in the kernel
 * (th_wait_asleep: under ThreadSanitizer a signal that came while it was
 * counted as parked but not yet asleep was held back until its deadline,
 * 20 s; by then it was due by time, and the count bound's test saw a
 * handoff after 0 lost races). */
static bool freeze(pthread_t tid, const struct waiter *w)
{
	if (!th_wait_asleep(atomic_load(&w->ktid), TH_DEADLINE_MS))
		return false;
	static bool installed;
	if (!installed) {
		struct sigaction sa = { .sa_handler = freeze_handler };
		sigemptyset(&sa.sa_mask);
		ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
		ck_assert_int_eq(sem_init(&frozen_in, 0, 0), 0);
		ck_assert_int_eq(sem_init(&frozen_out, 0, 0), 0);
		installed = true;
	}
	ck_assert_int_eq(pthread_kill(tid, SIGUSR1), 0);
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl); /* sem_timedwait's clock */
	dl.tv_sec += TH_DEADLINE_MS / 1000 + 1;
	while (sem_timedwait(&frozen_in, &dl) != 0)
		if (errno != EINTR)
			return false;
	return true;
}

static void thaw(void)
{
	sem_post(&frozen_out);
}

/* Two waiters A (older) and B.  The unlock wakes A (frozen, see freeze),
 * main barges, A loses
 * and must re-queue at the HEAD: the next unlock must wake A again, not B,
 * so A acquires first.  (Re-queued at the tail, B would go first.)  No
 * count or time bound applies (max_steals 0, fair_ns ~4.3 s), so the unlock
 * releases and wakes rather than hands off. */
START_TEST(woken_loser_keeps_its_place)
{
	pin_to_shared_cpu();
	for (unsigned attempt = 0;; attempt++) {
		ck_assert_msg(attempt < 20, "main never won the race against the woken waiter");
		struct scene sc = { .t = fair_table(0, UINT32_MAX, FWAIT_SPIN_OFF) };
		struct waiter ws[2] = { { .sc = &sc }, { .sc = &sc } };
		pthread_t tids[2];

		ck_assert_int_eq(fwait_bit_trylock(&sc.word, 0), 0);
		for (unsigned i = 0; i < 2; i++) {
			th_spawn(&tids[i], waiter_main, &ws[i]);
			ck_assert_msg(th_wait_parked(sc.t, i + 1, TH_DEADLINE_MS),
				      "waiter %u never parked", i);
		}
		/* A, the oldest, is the one the unlock wakes: frozen, it
		 * cannot beat main's trylock, so main wins (first attempt). */
		ck_assert_msg(freeze(tids[0], &ws[0]), "waiter A never took the freeze signal");
		bool lost = release_and_barge(&sc);
		thaw();
		ck_assert_msg(lost, "main's trylock lost to a frozen waiter");
		if (lost) {
			struct lost_reached r = { sc.t, 1, 2, &ws[0].done };
			ck_assert_msg(th_poll(lost_and_parked, &r, TH_DEADLINE_MS),
				      "the woken loser never re-queued");
			if (atomic_load(&ws[0].done)) {
				/* A won and was done before main's trylock:
				 * main holds the bit after A; not a loss. */
				lost = false;
				ck_assert_int_eq(fwait_bit_unlock(sc.t, &sc.word, 0), 0);
			}
		}
		if (lost) {
			struct fwait_stats st;
			fwait_stats_get(sc.t, &st);
			ck_assert_uint_eq(st.lost_races, 1);
			ck_assert_uint_eq(st.spurious_wakeups, 1);
			ck_assert_uint_eq(st.handoffs, 0);
			/* W re-announced by the loser: the next unlock must
			 * come to the table. */
			ck_assert(atomic_load(&sc.word) & FWAIT_WAITERS_MASK);
			ck_assert_int_eq(fwait_bit_unlock(sc.t, &sc.word, 0), 0);
		}
		th_join_all(tids, 2, TH_DEADLINE_MS, "A and B", sc.t);
		for (unsigned i = 0; i < 2; i++) {
			ck_assert_int_eq(ws[i].rc, 0);
			ck_assert_int_eq(ws[i].unlock_rc, 0);
		}
		/* Whether A lost or won, it acquires before B. */
		ck_assert_msg(ws[0].seq == 0 && ws[1].seq == 1,
			      "B acquired before A (A lost: %d)", lost);
		ck_assert_uint_eq(atomic_load(&sc.word), 0);
		fwait_table_destroy(sc.t);
		if (lost)
			break;
	}
}
END_TEST

/* main barges after every unlock; the one waiter V must still get the
 * bit: after max_steals lost races (loop 0: max_steals 3, time bound out of
 * reach) or once it has waited fair_ns (loop 1: 2 ms, no count bound), the
 * unlock hands it the bit instead of releasing it. */
START_TEST(due_waiter_is_handed_the_bit)
{
	unsigned max_steals = _i == 0 ? 3 : 0;
	uint32_t fair_ns = _i == 0 ? UINT32_MAX : 2000000u;
	struct scene sc = { .t = fair_table(max_steals, fair_ns, FWAIT_SPIN_OFF) };
	struct waiter v = { .sc = &sc };
	pthread_t tid;
	uint64_t rounds = 0;

	pin_to_shared_cpu();
	ck_assert_int_eq(fwait_bit_trylock(&sc.word, 0), 0);
	th_spawn(&tid, waiter_main, &v);
	ck_assert(th_wait_parked(sc.t, 1, TH_DEADLINE_MS));
	uint64_t end = util_now_ns() + (uint64_t)TH_DEADLINE_MS * 1000000u;
	for (;;) {
		ck_assert_msg(util_now_ns() < end, "V never got the bit (%llu rounds)",
			      (unsigned long long)rounds);
		rounds++;
		/* Frozen, V cannot beat main's trylock: main's trylock fails
		 * only when the unlock handed V the bit. */
		ck_assert_msg(freeze(tid, &v), "V never took the freeze signal");
		bool barged = release_and_barge(&sc);
		thaw();
		if (!barged)
			break; /* V was handed the bit */
		struct lost_reached r = { sc.t, rounds, 1, &v.done };
		ck_assert_msg(th_poll(lost_and_parked, &r, TH_DEADLINE_MS),
			      "V neither re-queued nor acquired");
		if (atomic_load(&v.done)) {
			/* V won this round's race and was done before main's
			 * trylock, which then took the bit after it. */
			ck_assert_int_eq(fwait_bit_unlock(sc.t, &sc.word, 0), 0);
			break;
		}
	}
	th_join_all(&tid, 1, TH_DEADLINE_MS, "V", sc.t);
	ck_assert_int_eq(v.rc, 0);
	ck_assert_int_eq(v.unlock_rc, 0);

	struct fwait_stats st;
	fwait_stats_get(sc.t, &st);
	/* V is the only waiter: every lost race is its own, and, frozen
	 * across each unlock, it got the bit by a handoff once due. */
	fprintf(stderr, "due (%s bound): %llu rounds, %llu lost races, %llu handoffs, "
		"V waited %llu ns\n", max_steals ? "count" : "time",
		(unsigned long long)rounds, (unsigned long long)st.lost_races,
		(unsigned long long)st.handoffs, (unsigned long long)v.waited_ns);
	ck_assert_uint_eq(st.handoffs, 1);
	ck_assert_uint_eq(st.lost_races, rounds - 1);
	if (max_steals) {
		/* The count bound: a handoff exactly when V had lost
		 * max_steals races, not before, not after. */
		ck_assert_uint_eq(st.lost_races, max_steals);
	} else {
		/* The time bound: handed over only once V had waited fair_ns. */
		ck_assert_uint_ge(v.waited_ns, fair_ns);
	}
	ck_assert_uint_eq(atomic_load(&sc.word), 0);
	fwait_table_destroy(sc.t);
}
END_TEST

/* ---- long holds are handed over (handoff_hold_ns) --------------------- */

#define VOTE_HOLD_NS 100000000u /* the threshold: 100 ms */
#define NLONG 12
#define NSHORT 6

struct holder {
	struct scene *sc;
	uint64_t hold_ns; /* how long to keep the bit: VOTE_HOLD_NS + 10 ms, or 0 */
	int rc, unlock_rc;
	unsigned seq;
};

/* Lock (after queueing: main holds the bit until all are parked), keep the
 * bit hold_ns (the length of the hold is what is under test, so the
 * sleep here is the hold itself, not a synchronisation), unlock. */
static void *holder_main(void *arg)
{
	struct holder *h = arg;
	struct timespec dl = fwait_deadline_after_ns((uint64_t)TH_DEADLINE_MS * 1000000u);

	struct scene *sc = h->sc;
	h->rc = sc->wide ? fwait_bit64_lock(sc->t, &sc->word64, 40, &dl)
			 : fwait_bit_lock(sc->t, &sc->word, 0, &dl);
	if (h->rc != 0)
		return NULL;
	h->seq = atomic_fetch_add(&h->sc->next_seq, 1);
	uint64_t t0 = util_now_ns();
	while (util_now_ns() - t0 < h->hold_ns) {
		struct timespec ts = { 0, (long)(h->hold_ns / 4) };
		nanosleep(&ts, NULL);
	}
	h->unlock_rc = sc->wide ? fwait_bit64_unlock(sc->t, &sc->word64, 40)
				: fwait_bit_unlock(sc->t, &sc->word, 0);
	return NULL;
}

/* A queue of NLONG holders that keep the bit past the threshold, then
 * NSHORT that let it go at once, all parked in FIFO order behind main and
 * released by main's one unlock.  Nobody barges and no waiter is due
 * (fair_ns ~4.3 s, no count bound), so every handoff comes from the hold
 * vote, and it is exact: the first three long unlocks vote 1..3 and
 * release (waking the next), the fourth reaches FW_HOLD_VOTE_LONG and hands
 * off, and so does every later long one (the vote saturates at
 * FW_HOLD_VOTE_MAX = 8); the short ones then vote 7, 6, 5, 4 (still long:
 * hand off) and 3 (release).  Handoffs: 8 to the long holders after the
 * fourth, 1 to the first short one, 4 from the short ones = 13.  Had the
 * vote not saturated, it would stand at 12 after the long holders and
 * every short unlock would hand off (14).  Loop index % 2 = 1:
 * handoff_hold_ns = FWAIT_HANDOFF_HOLD_OFF, no handoff at all.  All: FIFO,
 * no lost race.  Index / 2 = 1: the same on bit 40 of a 64-bit word. */
START_TEST(long_holds_are_handed_over)
{
	bool vote = _i % 2 == 0;
	struct fwait_config cfg = { .nbuckets = 1, .max_steals = 0, .fair_ns = UINT32_MAX,
				    .spin_ns = FWAIT_SPIN_OFF,
				    .handoff_hold_ns = vote ? VOTE_HOLD_NS : FWAIT_HANDOFF_HOLD_OFF };
	struct scene sc = { .wide = _i / 2 == 1 };
	struct holder hs[NLONG + NSHORT];
	pthread_t tids[NLONG + NSHORT];

	ck_assert_int_eq(fwait_table_create(&sc.t, &cfg), 0);
	ck_assert_int_eq(sc.wide ? fwait_bit64_trylock(&sc.word64, 40)
				 : fwait_bit_trylock(&sc.word, 0), 0);
	for (unsigned i = 0; i < NLONG + NSHORT; i++) {
		hs[i] = (struct holder){ .sc = &sc,
					 .hold_ns = i < NLONG ? VOTE_HOLD_NS + 10000000u : 0 };
		th_spawn(&tids[i], holder_main, &hs[i]);
		ck_assert_msg(th_wait_parked(sc.t, i + 1, TH_DEADLINE_MS),
			      "holder %u never parked", i);
	}
	ck_assert_int_eq(sc.wide ? fwait_bit64_unlock(sc.t, &sc.word64, 40)
				 : fwait_bit_unlock(sc.t, &sc.word, 0), 0);
	th_join_all(tids, NLONG + NSHORT, TH_DEADLINE_MS, "the holders", sc.t);
	for (unsigned i = 0; i < NLONG + NSHORT; i++) {
		ck_assert_int_eq(hs[i].rc, 0);
		ck_assert_int_eq(hs[i].unlock_rc, 0);
		ck_assert_msg(hs[i].seq == i, "holder %u acquired %u-th", i, hs[i].seq);
	}
	struct fwait_stats st;
	fwait_stats_get(sc.t, &st);
	ck_assert_uint_eq(st.lost_races, 0);
	uint64_t want_handoffs = vote ? 13 : 0;
	ck_assert_uint_eq(st.handoffs, want_handoffs);
	ck_assert_uint_eq(atomic_load(&sc.word), 0);
	ck_assert_uint_eq(atomic_load(&sc.word64), 0);
	fwait_table_destroy(sc.t);
}
END_TEST

/* ---- hundreds of threads: mutual exclusion, no lost wakeup ------------- */

#define NWORDS 4
#define ITERS 200

struct crowd {
	struct fwait_table *t;
	_Atomic uint32_t words[NWORDS];
	uint64_t counters[NWORDS];   /* guarded by bit 0 of words[i] */
	atomic_int kheld;            /* a keyed mutex: 1 held */
	uint64_t kcounter;           /* guarded by kheld */
	pthread_barrier_t start;
};

struct member {
	struct crowd *c;
	unsigned id;
	int bad_rc;
};

/* ready() of the keyed mutex, under the bucket lock: take it if free.
 * acquire: pairs with the release store of the keyed unlock below. */
static bool ktake(void *arg)
{
	int zero = 0;
	return atomic_compare_exchange_strong_explicit((atomic_int *)arg, &zero, 1,
			memory_order_acquire, memory_order_relaxed);
}

static void *member_main(void *arg)
{
	struct member *m = arg;
	struct crowd *c = m->c;
	uint64_t rng = util_rand_seed(0xfa1e, m->id);

	pthread_barrier_wait(&c->start);
	for (unsigned k = 0; k < ITERS && !m->bad_rc; k++) {
		uint64_t r = util_rand_next(&rng);
		if (r % 4 == 0) {
			/* An exclusive keyed wait as a mutex: release, then
			 * wake one (a lost wake would strand a waiter). */
			int rc = fwait_wait(c->t, &c->kheld, FWAIT_EXCLUSIVE, ktake, &c->kheld, NULL);
			if (rc) {
				m->bad_rc = rc;
				break;
			}
			c->kcounter++;
			atomic_store_explicit(&c->kheld, 0, memory_order_release);
			fwait_wake(c->t, &c->kheld, 1);
			continue;
		}
		unsigned i = (unsigned)(r >> 8) % NWORDS;
		int rc = fwait_bit_lock(c->t, &c->words[i], 0, NULL);
		if (rc) {
			m->bad_rc = rc;
			break;
		}
		/* A plain read-modify-write: a second holder would lose an
		 * update, which the final count catches. */
		uint64_t v = c->counters[i];
		if (r % 16 == 1)
			sched_yield(); /* held across a reschedule now and then */
		c->counters[i] = v + 1;
		rc = fwait_bit_unlock(c->t, &c->words[i], 0);
		if (rc) {
			m->bad_rc = rc;
			break;
		}
	}
	return NULL;
}

/* Loop: 0 the default config; 1 short bounds (fair_ns 20 us, max_steals
 * 2: many handoffs mixed with releases); 2 no spinning; 3 strict. */
START_TEST(crowd_mutual_exclusion_no_lost_wakeup)
{
	unsigned n = th_scaled(256, 48);
	struct fwait_config cfg = { .nbuckets = 2 };
	if (_i == 1) {
		cfg.fair_ns = 20000;
		cfg.max_steals = 2;
	} else if (_i == 2) {
		cfg.spin_ns = FWAIT_SPIN_OFF;
	} else if (_i == 3) {
		cfg.handoff = FWAIT_HANDOFF_STRICT;
	}
	struct crowd *c = calloc(1, sizeof(*c));
	struct member *ms = calloc(n, sizeof(*ms));
	pthread_t *tids = calloc(n, sizeof(*tids));
	ck_assert(c && ms && tids);
	ck_assert_int_eq(fwait_table_create(&c->t, &cfg), 0);
	pthread_barrier_init(&c->start, NULL, n);
	for (unsigned k = 0; k < n; k++) {
		ms[k] = (struct member){ .c = c, .id = k };
		th_spawn(&tids[k], member_main, &ms[k]);
	}
	th_join_all(tids, n, TH_DEADLINE_MS * 3, "crowd", c->t);

	uint64_t locked = 0;
	for (unsigned k = 0; k < n; k++)
		ck_assert_msg(ms[k].bad_rc == 0, "member %u: rc %d", k, ms[k].bad_rc);
	for (unsigned i = 0; i < NWORDS; i++) {
		locked += c->counters[i];
		ck_assert_uint_eq(atomic_load(&c->words[i]), 0);
	}
	ck_assert_uint_eq(locked + c->kcounter, (uint64_t)n * ITERS);
	ck_assert_int_eq(atomic_load(&c->kheld), 0);
	ck_assert_uint_eq(th_parked(c->t), 0);

	struct fwait_stats st;
	fwait_stats_get(c->t, &st);
	ck_assert_uint_le(st.lost_races, st.spurious_wakeups);
	if (_i == 3)
		ck_assert_uint_eq(st.lost_races, 0);
	fwait_table_destroy(c->t);
	pthread_barrier_destroy(&c->start);
	free(tids);
	free(ms);
	free(c);
}
END_TEST

/* A zero config is fair; strict and the new fields are validated. */
START_TEST(config_defaults_and_validation)
{
	struct fwait_table *t = NULL;
	struct fwait_config bad = { .handoff = (enum fwait_handoff)2 };
	ck_assert_int_eq(fwait_table_create(&t, &bad), -EINVAL);
	ck_assert_ptr_null(t);

	/* Strict: the unlock hands off even to a waiter parked a moment. */
	struct fwait_config strict = { .nbuckets = 1, .handoff = FWAIT_HANDOFF_STRICT };
	struct scene sc = { 0 };
	ck_assert_int_eq(fwait_table_create(&sc.t, &strict), 0);
	struct waiter w = { .sc = &sc };
	pthread_t tid;
	ck_assert_int_eq(fwait_bit_trylock(&sc.word, 0), 0);
	th_spawn(&tid, waiter_main, &w);
	ck_assert(th_wait_parked(sc.t, 1, TH_DEADLINE_MS));
	ck_assert_int_eq(fwait_bit_unlock(sc.t, &sc.word, 0), 0);
	th_join_all(&tid, 1, TH_DEADLINE_MS, "strict waiter", sc.t);
	struct fwait_stats st;
	fwait_stats_get(sc.t, &st);
	ck_assert_uint_eq(st.handoffs, 1);
	fwait_table_destroy(sc.t);
}
END_TEST

/* What the loop indices stand for, for the failure lines (th_add_loop). */
static const char *due_label(int i)
{
	return i == 0 ? "max_steals 3" : "fair_ns 2 ms";
}

static const char *long_holds_label(int i)
{
	static const char *const l[] = { "hold vote 32-bit", "hold vote off 32-bit",
					 "hold vote 64-bit", "hold vote off 64-bit" };
	return l[i];
}

static const char *crowd_label(int i)
{
	static const char *const l[] = { "default", "short bounds", "no spin", "strict" };
	return l[i];
}

int main(void)
{
	Suite *su = suite_create("fwait-fair");
	TCase *tc = tcase_create("fair");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, config_defaults_and_validation);
	tcase_add_test(tc, woken_loser_keeps_its_place);
	th_add_loop(su, "fair", 120, due_waiter_is_handed_the_bit, 0, 2, due_label);
	th_add_loop(su, "fair", 120, long_holds_are_handed_over, 0, 4, long_holds_label);
	th_add_loop(su, "fair", 120, crowd_mutual_exclusion_no_lost_wakeup, 0, 4, crowd_label);
	suite_add_tcase(su, tc);
	return check_run_suite(su);
}
