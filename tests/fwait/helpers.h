/* SPDX-License-Identifier: MIT */
/*
 * helpers.h - shared scaffolding of the fwait unit tests.
 *
 * Design note: the tests run hundreds of threads on two cores, so every wait
 * in a test is bounded: threads are joined against a deadline (a hung join is
 * a failed test with a diagnostic, never a hang), and "is this waiter parked
 * yet?" is answered by polling fwait_waiters_walk until a deadline.  Nothing
 * here sleeps to synchronise; the short pause inside a poll loop only keeps
 * the poller from starving the threads it is waiting for.  Assertions are
 * made on the main (Check) thread only; workers record what they saw.
 *
 * Atomics in the tests: every flag or counter shared between a worker and
 * main is a plain seq_cst C11 atomic (the default operations); each worker
 * store pairs with main's load of the same object, which then also sees the
 * worker's earlier plain writes (its result fields).  Everything else a
 * worker writes is read by main only after pthread_join.
 */
#ifndef TESTS_FWAIT_HELPERS_H
#define TESTS_FWAIT_HELPERS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <check.h>

#include "fwait/fwait.h"
/* The policy variants the loop tests iterate over (TC_NVARIANTS,
 * tc_variant_name), and counting parked waiters, are tests/common's. */
#include "../common/variants.h"
#include "../common/waiters.h"
/* The tests' clock (util_now_ns) and per-thread pseudo-random streams
 * (util_rand_next from util_rand_seed(seed, thread)) are util's. */
#include "util/clock.h"
#include "util/prng.h"

/* Upper bound of any single poll or join in the tests, in milliseconds. */
#define TH_DEADLINE_MS 20000u

/* True when built with ThreadSanitizer, which slows threads the most. */
bool th_sanitized(void);
/* n scaled down under ThreadSanitizer (to n / 4, never below floor). */
unsigned th_scaled(unsigned n, unsigned floor);

/* Creates a table of variant v (0..TC_NVARIANTS-1, tests/common's
 * variants.h; wake-one+steal with max_steals 5) with nbuckets. */
struct fwait_table *th_table_for(int v, unsigned nbuckets);

/* Adds loop test tf over [from, to) to su, each index in a test case of
 * its own named "<name> <label(i)>" with the given timeout, so that Check's
 * failure line, "file:line:F:<case>:<test>:<i>: message", says what index
 * i stands for (a variant's name, a word width) rather than only its
 * number.  Pass tc_variant_name for a loop over variants. */
void th_add_loop(Suite *su, const char *name, int timeout_s, const TTest *tf, int from,
		 int to, const char *(*label)(int i));

/* pthread_create with a small stack; aborts the test on failure. */
void th_spawn(pthread_t *tid, void *(*fn)(void *), void *arg);
/* Joins n threads; fails the test (naming what and dumping the parked
 * waiters of t, if t is not NULL) if they are not all done within
 * timeout_ms of the call. */
void th_join_all(pthread_t *tids, size_t n, unsigned timeout_ms,
		 const char *what, struct fwait_table *t);

/* Number of waiters parked in t right now (fwait_waiters_walk; the
 * parked waiters of one key: tc_parked_on, tests/common/waiters.h). */
size_t th_parked(struct fwait_table *t);
/* Polls until th_parked(t) == n; false if the deadline passes first. */
bool th_wait_parked(struct fwait_table *t, size_t n, unsigned timeout_ms);
/* Polls until pred(arg) holds; false if the deadline passes first. */
bool th_poll(bool (*pred)(void *arg), void *arg, unsigned timeout_ms);
/* The calling thread's kernel id (gettid), for th_wait_asleep. */
long th_gettid(void);
/* Polls until thread tid (th_gettid) sleeps in the kernel (its /proc task
 * state is S); false if the deadline passes first.  Before signalling a
 * parked waiter: ThreadSanitizer holds back a signal that arrives outside
 * a call it intercepts until the thread's next one, and a waiter that is
 * counted as parked but not yet inside its futex syscall (which is not
 * intercepted) would sleep with the signal held back until its wake or
 * deadline.  Once it sleeps there, the signal interrupts the syscall and
 * the parker's next atomic load, which TSan does see, runs the handler. */
bool th_wait_asleep(long tid, unsigned timeout_ms);
/* One step of a poll loop: yields, and now and then pauses ~20 us so the
 * polled threads get the CPU on an oversubscribed machine. */
void th_poll_pause(unsigned *spins);

#endif
