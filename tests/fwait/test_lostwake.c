/* SPDX-License-Identifier: MIT */
/*
 * test_lostwake.c - no lost wakeup under hundreds of threads, for every
 * policy.
 *
 * Design note: 512 threads (128 under a sanitizer) hammer 64 words whose
 * keys share 8 buckets.  Each thread runs a fixed, seeded sequence of
 * operations: mostly lock / (maybe yield) / unlock of one of two lock bits,
 * bumping a plain (non-atomic) counter that only the bit lock protects; the
 * rest are "I/O" events on a third bit: the thread that sets it yields and
 * clears it, a thread that finds it set waits for it with fwait_bit_wait.
 * Because the sequences are seeded, main replays them to know exactly what
 * each counter must read.  A lost wakeup leaves a thread parked forever; the
 * bounded join turns that into a failure that names the parked waiters.
 */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include "helpers.h"
#include "../check_run.h"

#define NWORDS 64
#define NBUCKETS 8
#define EVENT_BIT 5
#define OPS_PER_THREAD 48

static const unsigned lock_bits[2] = { 0, 2 };

struct stress {
	struct fwait_table *t;
	_Atomic uint32_t words[NWORDS];
	uint64_t counters[NWORDS][2]; /* guarded by bit lock_bits[j] of words[i] */
	uint64_t seed;
	pthread_barrier_t start;
};

struct worker {
	struct stress *s;
	unsigned id;
	int bad_rc;        /* first unexpected return code, 0 if none */
	const char *bad_op;
	unsigned events_set, events_waited;
};

enum op_kind { OP_LOCK, OP_EVENT };

struct op {
	enum op_kind kind;
	unsigned word, lockidx;
	bool yield_inside;
};

static struct op next_op(uint64_t *rng)
{
	uint64_t r = util_rand_next(rng);
	struct op op = {
		.word = (unsigned)(r % NWORDS),
		.kind = ((r >> 8) % 8) < 6 ? OP_LOCK : OP_EVENT,
		.lockidx = (unsigned)((r >> 12) & 1),
		.yield_inside = ((r >> 16) % 4) == 0,
	};
	return op;
}

static void note_bad(struct worker *w, const char *op, int rc)
{
	if (!w->bad_rc) {
		w->bad_rc = rc ? rc : -1;
		w->bad_op = op;
	}
}

static void *stress_worker(void *arg)
{
	struct worker *w = arg;
	struct stress *s = w->s;
	uint64_t rng = util_rand_seed(s->seed, w->id);

	pthread_barrier_wait(&s->start);
	for (unsigned i = 0; i < OPS_PER_THREAD; i++) {
		struct op op = next_op(&rng);
		_Atomic uint32_t *word = &s->words[op.word];
		if (op.kind == OP_LOCK) {
			unsigned bit = lock_bits[op.lockidx];
			int rc = fwait_bit_lock(s->t, word, bit, NULL);
			if (rc) {
				note_bad(w, "bit_lock", rc);
				continue;
			}
			s->counters[op.word][op.lockidx]++;
			if (op.yield_inside)
				sched_yield();
			rc = fwait_bit_unlock(s->t, word, bit);
			if (rc)
				note_bad(w, "bit_unlock", rc);
		} else if (!fwait_bit_set(word, EVENT_BIT)) {
			/* We started the "I/O": let others find the bit set. */
			sched_yield();
			w->events_set++;
			int rc = fwait_bit_clear(s->t, word, EVENT_BIT);
			if (rc)
				note_bad(w, "bit_clear", rc);
		} else {
			w->events_waited++;
			int rc = fwait_bit_wait(s->t, word, EVENT_BIT, NULL);
			if (rc)
				note_bad(w, "bit_wait", rc);
		}
	}
	return NULL;
}

START_TEST(no_lost_wakeup)
{
	unsigned nthreads = th_scaled(512, 64);
	struct stress *s = calloc(1, sizeof(*s));
	struct worker *ws = calloc(nthreads, sizeof(*ws));
	pthread_t *tids = calloc(nthreads, sizeof(*tids));
	ck_assert(s && ws && tids);

	s->t = th_table_for(_i, NBUCKETS);
	s->seed = 42 + (uint64_t)_i;
	pthread_barrier_init(&s->start, NULL, nthreads);
	for (unsigned i = 0; i < nthreads; i++) {
		ws[i].s = s;
		ws[i].id = i;
		th_spawn(&tids[i], stress_worker, &ws[i]);
	}
	th_join_all(tids, nthreads, 15000, tc_variant_name(_i), s->t);

	/* Replay every thread's sequence to know what each counter must be. */
	uint64_t expect[NWORDS][2] = { { 0 } };
	uint64_t total = 0, got = 0;
	unsigned set = 0, waited = 0;
	for (unsigned i = 0; i < nthreads; i++) {
		uint64_t rng = util_rand_seed(s->seed, i);
		for (unsigned k = 0; k < OPS_PER_THREAD; k++) {
			struct op op = next_op(&rng);
			if (op.kind == OP_LOCK) {
				expect[op.word][op.lockidx]++;
				total++;
			}
		}
		ck_assert_msg(ws[i].bad_rc == 0, "%s: thread %u: %s returned %d",
			      tc_variant_name(_i), i, ws[i].bad_op, ws[i].bad_rc);
		set += ws[i].events_set;
		waited += ws[i].events_waited;
	}
	for (unsigned w = 0; w < NWORDS; w++) {
		for (unsigned j = 0; j < 2; j++) {
			ck_assert_msg(s->counters[w][j] == expect[w][j],
				      "%s: word %u lock bit %u: counter %llu, expected %llu",
				      tc_variant_name(_i), w, lock_bits[j],
				      (unsigned long long)s->counters[w][j],
				      (unsigned long long)expect[w][j]);
			got += s->counters[w][j];
		}
		uint32_t v = atomic_load(&s->words[w]);
		ck_assert_msg((v & ~FWAIT_WAITERS_MASK) == 0,
			      "%s: word %u left as %#x", tc_variant_name(_i), w, v);
	}
	ck_assert_uint_eq(got, total);
	ck_assert_uint_eq(th_parked(s->t), 0);
	/* Some "I/O" was started (the first event op of any word always
	 * finds its bit clear); how many waited is scheduling-dependent. */
	ck_assert_uint_gt(set, 0);
	(void)waited;

	fwait_table_destroy(s->t);
	pthread_barrier_destroy(&s->start);
	free(tids);
	free(ws);
	free(s);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("fwait-lostwake");
	th_add_loop(su, "stress", 60, no_lost_wakeup, 0, TC_NVARIANTS, tc_variant_name);
	return check_run_suite(su);
}
