/* SPDX-License-Identifier: MIT */
/*
 * stress_frame_wait.c - seeded, time-bounded stress of the wait for a free
 * frame: bp_get_timed with no deadline must return once a frame is free
 * (issue 28's lost wakeup).
 *
 * Design note
 * -----------
 * bp_get_timed(NULL) on a miss with every frame pinned sleeps in
 * wait_for_unpin (evict.c) until an unpin bumps unpin_seq (frame.c,
 * unpin_wake).  It counts every pin, so the pin a claim holds on a LOCKED
 * frame looks like a user's; if that claim is then given up by
 * bp_free_claimed (an eviction, a lost insert race, readahead of a
 * resident page, a file's close, discard or truncate), the frame becomes
 * free without anyone bumping unpin_seq, and the waiter sleeps while a
 * frame is free.  It takes an evictor preempted at the right moment: its
 * lookup pin seen by the waiter's sweep, then its unpin and claim between
 * the waiter's sweep and its all_pinned check.
 *
 * The set-up makes that the only way to get stuck.  A pool of F frames
 * (NFRAMES, 4) with no readahead and no background writer; the
 * "holder" (a thread) pins pages 1..F-1 for the whole run, so one frame is
 * left to fight over.  Each round:
 *   holder    bp_get(0) and bp_release: page 0 resident and unpinned in
 *             the last frame (evicting the previous round's page);
 *   -- barrier: the waiter and the evictor start together --
 *   waiter    bp_get_timed(Q, no deadline) of page Q (F..F+3, rotating),
 *             then bp_release: it needs the last frame;
 *   evictor   bp_evict_page(0) (one round in 8: bp_evict_all);
 * each after a seeded spin of 0..JITTER_SPINS pauses, which slides their
 * starts against each other (jitter, not synchronisation);
 *   -- barrier: the round is over --
 * Whatever the interleaving, the last frame is free or holds an unpinned
 * page once the evictor returns, so the waiter must return: it is never
 * the only one left to make progress with nothing to wait for.  The main
 * thread is the watchdog: a bp_get_timed that has not returned for
 * --stall-seconds (default 10) fails the run with "LOST WAKEUP" if a frame
 * is unpinned (bp_frames_walk), or with a plain stall if none is.
 *
 * In the plain build the window is a few instructions wide; with the
 * jitter the run still finds it, after some 20,000 rounds (seconds).  The
 * chaos build (-Dchaos=true, util/chaos.h) stretches it with yields and
 * sleeps at the points on both sides (evict.c's try_take,
 * bp_free_claimed, bp_claim_frame before its wait; frame.c's bp_unpin)
 * and finds it some 20 times sooner.  docs/reliability.md ("The chaos
 * build") has the figures.
 * Rerun: --seed S (the jitter and the eviction kinds) and, in the chaos
 * build, FWAIT_CHAOS_SEED (the points' decisions).
 *
 * Sharing: the pool (its own locks and atomics), the rounds' barrier, the
 * watch records (st_watch: relaxed, the watchdog only reads), the stop
 * flag (set by main, read by the holder between rounds), the holder's
 * last_round (ordered by the barrier) and the count of threads done
 * (release/acquire: main joins only once all three have returned).
 */
#include "stress_util.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bufpool/bufpool.h"
#include "util/cpu.h"

#define NFRAMES 4u
#define NQ 4u /* pages the waiter rotates through: NFRAMES .. NFRAMES+NQ-1 */
#define JITTER_SPINS 2048u

enum { W_GET_TIMED, W_EVICT, W_HOLD };
static const char *const watch_names[] = {
	"bp_get_timed(no deadline)", "bp_evict_page / bp_evict_all", "bp_get (holder)"
};

static struct bp_pool *pool;
static pthread_barrier_t round_barrier;
static atomic_bool stop;       /* main: the time is up */
static atomic_bool last_round; /* the holder's reading of stop for this round */
static atomic_uint done; /* threads returned (release; main acquires) */
static struct st_watch watch[3];
static uint64_t seed;
static char dir_path[64], file_path[96];

/* Rounds begun (the holder's; relaxed: main reports it, also on failure). */
static _Atomic uint64_t rounds;
static uint64_t run_start_ns;
static char rerun_args[96];
/* Per-thread tallies, read by main after the join. */
static uint64_t waiter_busy, evicted_by_evictor, evict_all_calls;

static void remove_files(void)
{
	unlink(file_path);
	rmdir(dir_path);
}

static void jitter(uint64_t *rng)
{
	for (uint32_t n = st_below(rng, JITTER_SPINS); n > 0; n--)
		util_cpu_relax();
}

/* The holder: pins pages 1..NFRAMES-1 for the run and starts each round
 * with page 0 resident and unpinned. */
static void *holder_main(void *arg)
{
	struct bp_frame *held[NFRAMES];
	for (uint32_t i = 1; i < NFRAMES; i++) {
		int rc = bp_get(pool, i, 0, &held[i]);
		if (rc != 0)
			st_fail("holder: bp_get(%u) = %d", i, rc);
	}
	for (uint64_t n = 0;; n++) {
		bool last = atomic_load_explicit(&stop, memory_order_relaxed);
		if (!last) {
			struct bp_frame *f;
			st_watch_begin(&watch[W_HOLD], W_HOLD, NULL);
			int rc = bp_get(pool, 0, BP_GET_NOREADAHEAD, &f);
			st_watch_end(&watch[W_HOLD]);
			if (rc != 0)
				st_fail("holder: bp_get(0) = %d at the start of round %" PRIu64
					" (the waiter and the evictor have returned)", rc, n);
			bp_release(pool, f);
		}
		/* The holder's decision travels with the barrier: the others
		 * read last_round after the wait, which orders it after this
		 * store (the barrier synchronises memory, POSIX 4.12).  They
		 * must not read stop itself: main may set it in between, and
		 * the three would part ways at the next barrier. */
		atomic_store_explicit(&last_round, last, memory_order_relaxed);
		pthread_barrier_wait(&round_barrier);
		if (last)
			break;
		atomic_store_explicit(&rounds, n + 1, memory_order_relaxed);
		pthread_barrier_wait(&round_barrier);
	}
	for (uint32_t i = 1; i < NFRAMES; i++)
		bp_release(pool, held[i]);
	atomic_fetch_add_explicit(&done, 1, memory_order_release);
	return arg;
}

/* The waiter's and the evictor's start of a round: false once the holder
 * has said it is the last (last_round, read after the barrier). */
static bool round_begin(void)
{
	pthread_barrier_wait(&round_barrier);
	return !atomic_load_explicit(&last_round, memory_order_relaxed);
}

static void *waiter_main(void *arg)
{
	uint64_t rng = util_rand_seed(seed, 0);
	for (uint64_t n = 0; round_begin(); n++) {
		jitter(&rng);
		uint64_t q = NFRAMES + n % NQ;
		struct bp_frame *f;
		st_watch_begin(&watch[W_GET_TIMED], W_GET_TIMED, NULL);
		int rc = bp_get_timed(pool, q, BP_GET_NOREADAHEAD, NULL, &f);
		st_watch_end(&watch[W_GET_TIMED]);
		if (rc == 0)
			bp_release(pool, f);
		else if (rc == -EBUSY)
			waiter_busy++; /* possible after many transient waits, not a hang */
		else
			st_fail("waiter: bp_get_timed(%" PRIu64 ", NULL) = %d in round %" PRIu64,
				q, rc, n);
		pthread_barrier_wait(&round_barrier);
	}
	atomic_fetch_add_explicit(&done, 1, memory_order_release);
	return arg;
}

static void *evictor_main(void *arg)
{
	uint64_t rng = util_rand_seed(seed, 1);
	for (uint64_t n = 0; round_begin(); n++) {
		bool all = st_below(&rng, 8) == 0;
		jitter(&rng);
		st_watch_begin(&watch[W_EVICT], W_EVICT, NULL);
		int rc = all ? bp_evict_all(pool) : bp_evict_page(pool, 0);
		st_watch_end(&watch[W_EVICT]);
		if (all) {
			evict_all_calls++;
			if (rc < 0)
				st_fail("evictor: bp_evict_all = %d in round %" PRIu64, rc, n);
		} else if (rc == 0) {
			evicted_by_evictor++;
		} else if (rc != -ENOENT && rc != -EBUSY) {
			st_fail("evictor: bp_evict_page(0) = %d in round %" PRIu64, rc, n);
		}
		pthread_barrier_wait(&round_barrier);
	}
	atomic_fetch_add_explicit(&done, 1, memory_order_release);
	return arg;
}

static int find_unpinned(const struct bp_frame_info *fi, void *arg)
{
	if (fi->pins != 0)
		return 0;
	*(struct bp_frame_info *)arg = *fi;
	return 1;
}

/* The watchdog's check of the waiter: stuck for stall_ns with a frame
 * unpinned is the lost wakeup; stuck with none is some other hang. */
static void check_waiter(uint64_t now, uint64_t stall_ns)
{
	uint64_t start = atomic_load_explicit(&watch[W_GET_TIMED].start_ns, memory_order_relaxed);
	/* now was read before start: a call begun since has start > now, so
	 * compare without subtracting (now - start would wrap to "stuck"). */
	if (start == 0 || now <= start + stall_ns)
		return;
	struct bp_frame_info fi;
	if (bp_frames_walk(pool, find_unpinned, &fi) == 1 &&
	    atomic_load_explicit(&watch[W_GET_TIMED].start_ns, memory_order_relaxed) == start) {
		char flags[64], page[32] = "none: free";
		bp_flags_format(fi.flags, flags, sizeof(flags));
		if (fi.pageno != BP_NO_PAGE)
			snprintf(page, sizeof(page), "%" PRIu64, fi.pageno);
		st_fail("LOST WAKEUP: bp_get_timed(no deadline) has not returned for %.1f s "
			"while frame %u is unpinned (page %s, flags %s); the evictor is %s; "
			"round %" PRIu64 ", stuck since %.3f s into the run",
			(double)(now - start) / 1e9, fi.frame, page, flags,
			atomic_load_explicit(&watch[W_EVICT].start_ns, memory_order_relaxed) ?
				"still in its call" : "done",
			atomic_load_explicit(&rounds, memory_order_relaxed),
			(double)(start - run_start_ns) / 1e9);
	}
	st_watch_check(&watch[W_GET_TIMED], W_GET_TIMED, now, stall_ns, watch_names,
		       "no frame unpinned: stuck otherwise");
}

static void dump_state(void *arg)
{
	uint64_t now = util_now_ns();
	for (int i = 0; i < 3; i++)
		st_watch_dump(&watch[i], i, now, watch_names);
}

static void setup_pages(void)
{
	/* Pages 0..NFRAMES+NQ-1, written and flushed, so that every later
	 * miss is a read of a clean page and every victim is clean. */
	for (uint64_t p = 0; p < NFRAMES + NQ; p++) {
		struct bp_frame *f;
		int rc = bp_get(pool, p, BP_GET_CREATE, &f);
		if (rc != 0)
			st_fail("setup: bp_get(%" PRIu64 ", CREATE) = %d", p, rc);
		bp_release(pool, f);
	}
	int rc = bp_flush(pool);
	if (rc != 0)
		st_fail("setup: bp_flush = %d", rc);
}

int main(int argc, char **argv)
{
	struct st_options o;

	setvbuf(stdout, NULL, _IOLBF, 0);
	st_parse_options(argc, argv, &o);
	if (o.mix || o.inject || o.threads || o.policy >= 0 || o.soak) {
		fprintf(stderr, "%s: only --seconds, --seed and --stall-seconds here\n", argv[0]);
		return 2;
	}
	seed = o.seed;
	if (o.stall_seconds == 15)
		o.stall_seconds = 10; /* st_parse_options' default: ours is 10 s */

	snprintf(dir_path, sizeof(dir_path), "/tmp/stress-frame-wait-XXXXXX");
	if (mkdtemp(dir_path) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(file_path, sizeof(file_path), "%s/pages", dir_path);
#if defined(UTIL_CHAOS) && UTIL_CHAOS
	/* The chaos points' seed reruns with the run (util/chaos.h). */
	const char *chaos_seed = getenv("FWAIT_CHAOS_SEED");
	snprintf(rerun_args, sizeof(rerun_args), "(chaos build: with FWAIT_CHAOS_SEED=%s)",
		 chaos_seed && *chaos_seed ? chaos_seed : "0x5eed");
#else
	snprintf(rerun_args, sizeof(rerun_args), "(plain build)");
#endif
	printf("%s: seed %" PRIu64 " (rerun: --seed %" PRIu64 " %s), %u frames, %.1f s, "
	       "stall %.1f s\n", argv[0], o.seed, o.seed, rerun_args, NFRAMES, o.seconds,
	       o.stall_seconds);
	st_ctx = (struct st_context){
		.program = argv[0], .seed = o.seed, .threads = 3,
		.dump_extra = dump_state, .rerun_args = rerun_args, .cleanup = remove_files,
	};

	struct bp_config cfg;
	bp_config_init(&cfg);
	cfg.path = file_path;
	cfg.flags = BP_OPEN_CREATE | BP_OPEN_TRUNCATE | BP_OPEN_NO_BGWRITER | BP_OPEN_NO_READAHEAD;
	cfg.page_size = 512;
	cfg.nframes = NFRAMES;
	int rc = bp_open(&pool, &cfg);
	if (rc != 0)
		st_fail("bp_open(%s) = %d", file_path, rc);
	st_ctx.table = bp_fwait_table(pool);
	setup_pages();

	pthread_barrier_init(&round_barrier, NULL, 3);
	run_start_ns = util_now_ns();
	pthread_t tid[3];
	void *(*mains[3])(void *) = { holder_main, waiter_main, evictor_main };
	for (int i = 0; i < 3; i++) {
		rc = pthread_create(&tid[i], NULL, mains[i], NULL);
		if (rc != 0)
			st_fail("pthread_create: %s", strerror(rc));
	}

	uint64_t stall_ns = (uint64_t)(o.stall_seconds * 1e9);
	uint64_t t0 = run_start_ns, end = t0 + (uint64_t)(o.seconds * 1e9);
	for (uint64_t now = t0; now < end; now = util_now_ns()) {
		check_waiter(now, stall_ns);
		st_watch_check(&watch[W_EVICT], W_EVICT, now, stall_ns, watch_names, "hang?");
		st_watch_check(&watch[W_HOLD], W_HOLD, now, stall_ns, watch_names, "hang?");
		st_poll_pause();
	}
	atomic_store_explicit(&stop, true, memory_order_relaxed);
	/* Keep watching until every thread has returned: a waiter stuck in
	 * the last round must be reported, not joined for ever. */
	while (atomic_load_explicit(&done, memory_order_acquire) < 3) {
		uint64_t now = util_now_ns();
		check_waiter(now, stall_ns);
		st_watch_check(&watch[W_EVICT], W_EVICT, now, stall_ns, watch_names, "hang?");
		st_watch_check(&watch[W_HOLD], W_HOLD, now, stall_ns, watch_names, "hang?");
		st_poll_pause();
	}
	for (int i = 0; i < 3; i++)
		pthread_join(tid[i], NULL);


	struct bp_stats st;
	bp_stats_init(&st);
	bp_stats_get(pool, &st);
	st_ctx.table = NULL;
	rc = bp_close(pool);
	if (rc != 0)
		st_fail("bp_close = %d", rc);
	remove_files();
	pthread_barrier_destroy(&round_barrier);
	printf("%" PRIu64 " rounds in %.1f s: page 0 evicted by the evictor %" PRIu64
	       " times, %" PRIu64 " bp_evict_all, %" PRIu64 " -EBUSY to the waiter; pool: %"
	       PRIu64 " evictions, %" PRIu64 " reads, %" PRIu64 " waits for an unpin\n",
	       atomic_load_explicit(&rounds, memory_order_relaxed),
	       (double)(util_now_ns() - t0) / 1e9, evicted_by_evictor, evict_all_calls,
	       waiter_busy, st.evictions, st.reads, st.frame_wait.count);
	printf("%s: PASS (seed %" PRIu64 ")\n", argv[0], o.seed);
	return 0;
}
