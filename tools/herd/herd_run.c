/* SPDX-License-Identifier: MIT */
/*
 * herd_run.c - runs one herd variant and measures it.
 *
 * Design note: T threads each repeat lock / hold / unlock on an object
 * picked at random (util_rand_next, the state util_rand_seed(seed, thread),
 * so every variant sees the same sequence of picks).  The hold is one of
 * three regimes: a nanosleep of -H us, as an I/O would be, so holders sleep
 * with the lock held and waiters really queue; a compute hold of -C ns,
 * which spins on util_now_ns until that much time has passed since the lock
 * was taken (it never sleeps or yields: a short critical section); or no
 * hold at all.  The compute hold spins on the clock rather than running a
 * calibrated loop of arithmetic because the hold is specified in time and
 * the machine is shared: a calibration taken once would be off by whatever
 * else ran during it, and by any change of clock speed afterwards, while
 * the clock (the vDSO, about 25 ns a read) is right by construction and the
 * hold's last read is also its measurement.  Each acquisition reads the
 * clock once before the lock call and once after it returns: their
 * difference (the wait, including one clock read) goes into the worker's
 * own log-linear histogram (util/hist.h), and the second read is also the
 * start of the hold.  Nothing is allocated on that path.  fwait
 * variants lock bit 0 of the object's word through one table of B buckets;
 * the percond baseline gives every object its own mutex, condvar and held
 * flag (unlock signals one waiter); the mutex baseline a plain pthread
 * mutex (default type: glibc's barging futex lock, no spinning).  CPU time and context switches are getrusage(RUSAGE_SELF) deltas
 * over the whole run, from the start gate to the last join.  Each object
 * sits on its own cache line in both layouts, so neither pays false
 * sharing; reported memory counts only the synchronisation state.
 */
#include "herd.h"
#include "toolutil.h"
#include "util/clock.h"
#include "util/prng.h"
#include "util/hist.h"

#include <errno.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define HERD_STACK_BYTES (256u << 10)

struct herd_obj {
	alignas(64) _Atomic uint32_t word; /* bit 0: the object's lock */
};

struct herd_pc_slot {
	alignas(64) struct herd_percond pc; /* pc.held guarded by pc.mtx */
};

struct herd_mx_slot {
	alignas(64) pthread_mutex_t mtx;
};

struct herd_shared {
	const struct herd_variant *v;
	const struct herd_params *p;
	struct fwait_table *t;
	struct herd_obj *objs;
	struct herd_pc_slot *pcs;
	struct herd_mx_slot *mxs;
	/* relaxed: a plain "time is up" flag; workers finish their current
	 * operation, and the joins order everything that matters. */
	_Atomic bool stop;
	_Atomic uint64_t tickets; /* acquisitions handed out (ops mode) */
	/* The start gate: every worker waits here until main has taken its
	 * "before" measurements.  gate_open guarded by gate_mtx. */
	pthread_mutex_t gate_mtx;
	pthread_cond_t gate_cond;
	bool gate_open;
};

/* One per thread, each on its own cache lines (aligned_alloc). */
struct herd_worker {
	alignas(64) struct herd_shared *s;
	unsigned id;
	uint64_t acquisitions, spurious;
	uint64_t hold_ns; /* measured: nanosleep overshoots by the timer slack */
	int err;
	struct util_hist wait; /* ns from calling lock to holding */
};

/* Seconds since t0_ns (a util_now_ns). */
static double since_s(uint64_t t0_ns)
{
	return (double)(util_now_ns() - t0_ns) * 1e-9;
}

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

/* Holds the lock taken at t1 (a util_now_ns); returns the ns held. */
static uint64_t hold(const struct herd_params *p, uint64_t t1)
{
	if (p->compute_ns) {
		uint64_t now;
		do
			now = util_now_ns();
		while (now - t1 < p->compute_ns);
		return now - t1;
	}
	if (p->hold_us == 0)
		return 0;
	struct timespec ts = { p->hold_us / 1000000u, (long)(p->hold_us % 1000000u) * 1000L };
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
	return util_now_ns() - t1;
}

static bool take_ticket(struct herd_shared *s)
{
	if (s->p->ops)
		return atomic_fetch_add_explicit(&s->tickets, 1, memory_order_relaxed) < s->p->ops;
	return !atomic_load_explicit(&s->stop, memory_order_relaxed);
}

static int percond_lock(struct herd_percond *pc, uint64_t *spurious)
{
	bool woken = false;
	pthread_mutex_lock(&pc->mtx);
	while (pc->held) {
		if (woken)
			++*spurious; /* signalled, but someone else got it */
		pthread_cond_wait(&pc->cond, &pc->mtx);
		woken = true;
	}
	pc->held = true;
	pthread_mutex_unlock(&pc->mtx);
	return 0;
}

static int percond_unlock(struct herd_percond *pc)
{
	pthread_mutex_lock(&pc->mtx);
	pc->held = false;
	pthread_cond_signal(&pc->cond);
	pthread_mutex_unlock(&pc->mtx);
	return 0;
}

/* Takes object k as variant kind does; 0 or a negative errno. */
static int obj_lock(struct herd_shared *s, struct herd_worker *w, unsigned k)
{
	switch (s->v->kind) {
	case HERD_FWAIT:
		return fwait_bit_lock(s->t, &s->objs[k].word, 0, NULL);
	case HERD_PERCOND:
		return percond_lock(&s->pcs[k].pc, &w->spurious);
	case HERD_MUTEX:
		return -pthread_mutex_lock(&s->mxs[k].mtx);
	}
	return -EINVAL;
}

static int obj_unlock(struct herd_shared *s, unsigned k)
{
	switch (s->v->kind) {
	case HERD_FWAIT:
		return fwait_bit_unlock(s->t, &s->objs[k].word, 0);
	case HERD_PERCOND:
		return percond_unlock(&s->pcs[k].pc);
	case HERD_MUTEX:
		return -pthread_mutex_unlock(&s->mxs[k].mtx);
	}
	return -EINVAL;
}

static void gate_wait(struct herd_shared *s);

static void *worker_main(void *arg)
{
	struct herd_worker *w = arg;
	struct herd_shared *s = w->s;
	const struct herd_params *p = s->p;
	uint64_t rng = util_rand_seed(p->seed, w->id);

	gate_wait(s);
	while (take_ticket(s)) {
		unsigned k = (unsigned)(util_rand_next(&rng) % p->objects);
		uint64_t t0 = util_now_ns();
		int rc = obj_lock(s, w, k);
		if (rc == 0) {
			uint64_t t1 = util_now_ns();
			util_hist_add(&w->wait, t1 - t0);
			w->hold_ns += hold(p, t1);
			rc = obj_unlock(s, k);
		}
		if (rc) {
			w->err = rc;
			break;
		}
		w->acquisitions++;
	}
	return NULL;
}

static int setup(struct herd_shared *s, const struct herd_variant *v,
		 const struct herd_params *p)
{
	memset(s, 0, sizeof(*s));
	s->v = v;
	s->p = p;
	pthread_mutex_init(&s->gate_mtx, NULL);
	pthread_cond_init(&s->gate_cond, NULL);
	if (v->kind == HERD_FWAIT) {
		struct fwait_config cfg = v->cfg;
		cfg.nbuckets = p->buckets;
		int rc = fwait_table_create(&s->t, &cfg);
		if (rc) {
			fprintf(stderr, "fwait-herd: %s: fwait_table_create: %s\n", v->name,
				strerror(-rc));
			return rc;
		}
		s->objs = aligned_alloc(64, sizeof(*s->objs) * p->objects);
		if (!s->objs)
			return -ENOMEM;
		memset(s->objs, 0, sizeof(*s->objs) * p->objects);
	} else if (v->kind == HERD_MUTEX) {
		s->mxs = aligned_alloc(64, sizeof(*s->mxs) * p->objects);
		if (!s->mxs)
			return -ENOMEM;
		for (unsigned k = 0; k < p->objects; k++)
			pthread_mutex_init(&s->mxs[k].mtx, NULL);
	} else {
		s->pcs = aligned_alloc(64, sizeof(*s->pcs) * p->objects);
		if (!s->pcs)
			return -ENOMEM;
		for (unsigned k = 0; k < p->objects; k++) {
			pthread_mutex_init(&s->pcs[k].pc.mtx, NULL);
			pthread_cond_init(&s->pcs[k].pc.cond, NULL);
			s->pcs[k].pc.held = false;
		}
	}
	return 0;
}

static void teardown(struct herd_shared *s)
{
	if (s->pcs) {
		for (unsigned k = 0; k < s->p->objects; k++) {
			pthread_cond_destroy(&s->pcs[k].pc.cond);
			pthread_mutex_destroy(&s->pcs[k].pc.mtx);
		}
	}
	if (s->mxs) {
		for (unsigned k = 0; k < s->p->objects; k++)
			pthread_mutex_destroy(&s->mxs[k].mtx);
	}
	free(s->pcs);
	free(s->mxs);
	free(s->objs);
	fwait_table_destroy(s->t);
	pthread_cond_destroy(&s->gate_cond);
	pthread_mutex_destroy(&s->gate_mtx);
}

static void fill_stats(const struct herd_shared *s, struct herd_result *out)
{
	if (s->v->kind != HERD_FWAIT) {
		out->sync_bytes = (size_t)s->p->objects * herd_object_bytes(s->v->kind);
		return;
	}
	struct fwait_stats st;
	fwait_stats_get(s->t, &st);
	out->spurious = st.spurious_wakeups;
	out->waits = st.waits;
	out->wakeups = st.wakeups;
	out->handoffs = st.handoffs;
	out->foreign_skipped = st.foreign_skipped;
	out->max_bucket_depth = st.max_bucket_depth;
	out->sync_bytes = st.table_bytes;
}

size_t herd_object_bytes(enum herd_kind kind)
{
	switch (kind) {
	case HERD_FWAIT: return sizeof(uint32_t);
	case HERD_PERCOND: return sizeof(struct herd_percond);
	case HERD_MUTEX: return sizeof(pthread_mutex_t);
	}
	return 0;
}

static void gate_wait(struct herd_shared *s)
{
	pthread_mutex_lock(&s->gate_mtx);
	while (!s->gate_open)
		pthread_cond_wait(&s->gate_cond, &s->gate_mtx);
	pthread_mutex_unlock(&s->gate_mtx);
}

static void gate_release(struct herd_shared *s)
{
	pthread_mutex_lock(&s->gate_mtx);
	s->gate_open = true;
	pthread_cond_broadcast(&s->gate_cond);
	pthread_mutex_unlock(&s->gate_mtx);
}

static unsigned start_threads(struct herd_shared *s, struct herd_worker *ws,
			      pthread_t *tids, int *rc)
{
	pthread_attr_t attr;
	unsigned started = 0;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, HERD_STACK_BYTES);
	for (; started < s->p->threads; started++) {
		ws[started].s = s;
		ws[started].id = started;
		int e = pthread_create(&tids[started], &attr, worker_main, &ws[started]);
		if (e) {
			fprintf(stderr, "fwait-herd: pthread_create (thread %u of %u): %s\n",
				started, s->p->threads, strerror(e));
			*rc = -e;
			/* Those already started stop at their first ticket. */
			atomic_store(&s->stop, true);
			atomic_store(&s->tickets, UINT64_MAX / 2);
			break;
		}
	}
	pthread_attr_destroy(&attr);
	return started;
}

int herd_run(const struct herd_variant *v, const struct herd_params *p,
	     struct herd_result *out)
{
	struct herd_shared s;
	struct rusage ru0, ru1;

	memset(out, 0, sizeof(*out));
	int rc = setup(&s, v, p);
	struct herd_worker *ws = aligned_alloc(64, sizeof(*ws) * p->threads);
	pthread_t *tids = calloc(p->threads, sizeof(*tids));
	if (rc == 0 && (!ws || !tids))
		rc = -ENOMEM;
	if (ws)
		memset(ws, 0, sizeof(*ws) * p->threads);
	if (rc) {
		teardown(&s);
		free(ws);
		free(tids);
		return rc;
	}

	unsigned started = start_threads(&s, ws, tids, &rc);
	uint64_t t0 = util_now_ns();
	getrusage(RUSAGE_SELF, &ru0);
	gate_release(&s);
	if (rc == 0 && p->ops == 0) {
		tool_sleep(p->seconds); /* cut short by a stop signal */
		atomic_store_explicit(&s.stop, true, memory_order_relaxed);
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	getrusage(RUSAGE_SELF, &ru1);
	out->wall_s = since_s(t0);

	uint64_t pc_spurious = 0, hold_ns = 0;
	out->threads = started;
	out->acq_min = started ? UINT64_MAX : 0;
	for (unsigned i = 0; i < started; i++) {
		out->acquisitions += ws[i].acquisitions;
		hold_ns += ws[i].hold_ns;
		pc_spurious += ws[i].spurious;
		if (ws[i].acquisitions < out->acq_min)
			out->acq_min = ws[i].acquisitions;
		if (ws[i].acquisitions > out->acq_max)
			out->acq_max = ws[i].acquisitions;
		if (i)
			util_hist_merge(&ws[0].wait, &ws[i].wait);
		if (ws[i].err && rc == 0) {
			fprintf(stderr, "fwait-herd: %s: thread %u: %s\n", v->name, i,
				strerror(-ws[i].err));
			rc = ws[i].err;
		}
	}
	out->hold_s = (double)hold_ns * 1e-9;
	if (started) {
		const struct util_hist *h = &ws[0].wait; /* all of them, merged */
		out->wait_p50_ns = util_hist_quantile(h, 0.50);
		out->wait_p99_ns = util_hist_quantile(h, 0.99);
		out->wait_max_ns = h->max_ns;
		out->wait_mean_ns = h->count ? (double)h->sum_ns / (double)h->count : 0;
	}
	out->user_s = tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime);
	out->sys_s = tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime);
	out->vcsw = (uint64_t)(ru1.ru_nvcsw - ru0.ru_nvcsw);
	out->ivcsw = (uint64_t)(ru1.ru_nivcsw - ru0.ru_nivcsw);
	fill_stats(&s, out);
	if (v->kind == HERD_PERCOND)
		out->spurious = pc_spurious;
	teardown(&s);
	free(ws);
	free(tids);
	return rc;
}
