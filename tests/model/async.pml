/* SPDX-License-Identifier: MIT */
/*
 * async.pml - Promela model of fwait's asynchronous keyed waits
 * (fwait_wait_async, fwait_cancel_async and the completion that a wake
 * runs; fwait/async.c) beside the blocking exclusive fwait_wait of
 * keyed.c, on one key.  Checked with spin by tests/model/run_model.sh
 * (runs registered in tests/model/meson.build; docs/design.md says what it
 * checks).  fwait.pml models the bit waits and blocking keyed waits,
 * hlatch.pml the hybrid latch.
 *
 * What is modelled
 * ----------------
 * NT = 3 threads; each does NOPS rounds of: take "the resource" (held, a
 * lock standing for the caller's lock word), hold it, release it.  The key
 * hashes to one bucket: a mutex (bl), nkeyed (nk) and a FIFO of queued
 * exclusive records, oldest first.  ready() is "if the resource is free,
 * take it and say true", evaluated under bl as the library's latches do.
 *
 *   take:    optionally a pre-check first (ready() without the lock: a
 *            CAS that fails changes nothing, so it is one step, taken or
 *            not).  Then a wait, blocking or (the default) asynchronous;
 *            -DMIXED chooses anew for every round.
 *   blocking (fwait_wait, FWAIT_EXCLUSIVE): lock bl and nk++ (one step);
 *            then ready(): true, nk-- and unlock; false, queue at the tail
 *            and unlock, sleep until posted; posted: lock bl, ready()
 *            again; false: queue again (-DFAIR: at the head, keeping its
 *            place, fw_requeue), counted all along.
 *   async:   (fwait_wait_async) the same first two steps; queued, the call
 *            returns 1 and the task is not blocked: it either sees its
 *            completion or (at most CANC times per thread) cancels:
 *            fwait_cancel_async, one step under bl: still queued, unlink,
 *            nk--, return 0 (the attempt is given up); else -EALREADY:
 *            it waits for the completion (the record must outlive it)
 *            and then either still wants the resource (a normal
 *            completion, below) or passes the wake on with wake(1).  A
 *            completion seen: lock bl, nk++, ready() (one step each, as
 *            at the start); false: queue again (-DFAIR: at the head).
 *   release: the store that frees the resource (seq_cst), then wake(1):
 *            read nk (after fwait_wake's fence), 0: skip; else lock bl,
 *            unlink the oldest record (still counted), unlock; then a
 *            blocking waiter is posted (one step, the parker's
 *            handshake), an async record gets its completion on the
 *            waker's thread: nk-- (relaxed, no lock), then the callback,
 *            the waker's last touch of the record (two steps).
 *
 * Granularity, as in fwait.pml: an atomic RMW is one step; work under bl
 * that touches only what bl guards is merged into the adjacent step, but
 * nk++ and the ready() after it stay two steps (the Dekker pair with a
 * release's store and read of nk, which may fall in between).  Memory is
 * sequentially consistent: for the announce (nk++, ready()) against a
 * release (store, read of nk) the seq_cst fences of keyed.c's design note
 * give that.  The completion's decrement may be relaxed because the
 * record's increment happens before it (the increment precedes the
 * enqueue under bl, the waker's unlink follows it under bl), so it cannot
 * take the count below another waiter's share; a release that reads the
 * lowered count finds a task that has not looked again yet, and that look
 * is a new announce.  Not modelled: more threads,
 * keys or buckets, shared (non-exclusive) waiters, deadlines, tokens
 * (fwait_wait_ex), the executor that runs a completed task, and the
 * memory of the record (alive[] stands for its lifetime).
 *
 * Checked: mutual exclusion on the resource; a completion or a post
 * reaches a live record of the wait that queued it, which nobody queued
 * again meanwhile and which was not cancelled (a cancel that returned 0
 * never gets a completion: gen[] numbers the waits, cancelled[] marks
 * one cancelled); the monitor's invariant (every queued record is
 * counted, nk >= qlen, so no release that skips the bucket strands one);
 * the final state (resource free, bucket empty, nk 0, no completion or
 * post pending); invalid end states (a task waiting for a completion, or
 * a thread asleep, after everyone else finished); and, with --ltl,
 * no_lost_wakeup: never, from some point on, a record queued forever on
 * a free resource.
 *
 * -DNO_MONITOR drops the monitor's invariant, so a broken variant must be
 * caught by the lost wakeup itself.  Broken variants (spin must reject
 * each):
 *   -DBROKEN_CANCEL_DROPS_WAKE  a cancel that finds its record already
 *                    chosen waits for the completion and reports
 *                    "cancelled"; the task ends without passing the wake
 *                    on: the next waiter sleeps on a free resource.
 *   -DBROKEN_CANCEL_CHOSEN  a cancel returns 0 ("cancelled") whether or
 *                    not the record is still queued: the completion of a
 *                    chosen record then reaches a wait that was cancelled
 *                    (a record that no longer exists, or the next wait's).
 *   -DBROKEN_ASYNC_NO_COUNT  async records are never counted in nk (nor
 *                    uncounted by their completion or cancel): a release
 *                    that reads nk == 0 skips a queued record.
 */

#define NT 3
#ifndef NOPS
#define NOPS 2          /* take/release rounds per thread */
#endif
#ifndef CANC
#define CANC 1          /* cancels each thread may make */
#endif

bool held;             /* the resource (the caller's lock word) */
byte owner;            /* tid+1 of the holder in its critical section */
byte bl;               /* bucket lock: 0 free, else tid+1 */
byte nk;               /* nkeyed */
byte q[NT];            /* the bucket's FIFO, oldest first; guarded by bl */
byte qlen;
bool queued[NT];       /* guarded by bl */
bool wasync[NT];       /* the queued record is an async one; guarded by bl */
bool posted[NT];       /* blocking waiter's parker: posted */
bool completed[NT];    /* async record: its completion's callback ran */
bool alive[NT];        /* the waiter's record exists */
byte gen[NT];          /* which wait of the thread the record belongs to */
bool cancelled[NT];    /* the record's wait was cancelled (returned 0) */
byte finished;

#ifdef BROKEN_ASYNC_NO_COUNT
#define ACOUNT(x) skip
#else
#define ACOUNT(x) x
#endif

inline bucket_lock() { atomic { bl == 0 -> bl = me + 1 } }

inline nk_dec() { assert(nk > 0); nk-- }

/* ready(): the take happens inside, under bl */
inline ready() {
	if
	:: !held -> held = true; got = true
	:: else -> got = false
	fi
}

/* queue our record: a re-wait after a wake keeps its place at the head
 * under -DFAIR (fw_requeue); the first wait goes to the tail */
inline enqueue(isasync) {
#ifdef FAIR
	if
	:: woken ->
		i = qlen;
		do
		:: i > 0 -> q[i] = q[i - 1]; i--
		:: else -> break
		od;
		q[0] = me
	:: else -> q[qlen] = me
	fi;
#else
	q[qlen] = me;
#endif
	qlen++; queued[me] = true; wasync[me] = isasync; i = 0
}

/* fw_unlink; i scratch */
inline unlink(x) {
	assert(bl == me + 1 && queued[x]);
	i = 0;
	do
	:: i < qlen && q[i] != x -> i++
	:: else -> break
	od;
	assert(i < qlen);
	do
	:: i + 1 < qlen -> q[i] = q[i + 1]; i++
	:: else -> break
	od;
	qlen--; q[qlen] = 0; queued[x] = false; wasync[x] = false;
	i = 0
}

/* fwait_wake(key, 1) after the resource was freed (or to pass a wake
 * on): the oldest record, unlinked under bl, stays counted until its
 * completion (async) or its own leave (blocking) */
inline wake1() {
	if
	:: nk == 0 -> skip
	:: nk != 0 ->
		bucket_lock();
		atomic {
			if
			:: qlen > 0 -> w = q[0]; wa = wasync[w]; wg = gen[w]; unlink(w); ch = true
			:: else -> ch = false
			fi;
			bl = 0
		};
		if
		:: ch && wa ->
			/* the completion, on this thread, bl dropped */
			atomic { ACOUNT(nk_dec()) };
			atomic {
				assert(alive[w] && gen[w] == wg && !cancelled[w] &&
				       !queued[w] && !completed[w]);
				completed[w] = true
			}
		:: ch && !wa ->
			atomic { assert(alive[w] && !queued[w] && !posted[w]); posted[w] = true }
		:: else -> skip
		fi;
		atomic { w = 0; wa = false; wg = 0; ch = false }
	fi
}

inline release() {
	/* leave the critical section and store "free": one step */
	atomic { assert(owner == me + 1 && held); owner = 0; held = false };
	wake1()
}

/* fwait_wait(key, FWAIT_EXCLUSIVE, ready): got = took it */
inline blocking_take() {
	atomic { bl == 0 -> bl = me + 1; alive[me] = true; nk++ };
	do
	:: atomic {
		ready();
		if
		:: got -> nk_dec(); bl = 0
		:: else -> enqueue(false); bl = 0
		fi
	   };
	   if
	   :: got -> break
	   :: else -> skip
	   fi;
	   atomic { posted[me] -> posted[me] = false; woken = true };
	   bucket_lock()
	od;
	atomic { alive[me] = false; woken = false }
}

/* fwait_wait_async(key, FWAIT_EXCLUSIVE, ready, rec) and what the task
 * does with its result: got = took it; !got = the attempt was given up */
inline async_take() {
	atomic { alive[me] = true; gen[me]++; cancelled[me] = false };
	do
	:: atomic { bl == 0 -> bl = me + 1; ACOUNT(nk++) };
	   atomic {
		ready();
		if
		:: got -> ACOUNT(nk_dec()); bl = 0
		:: else -> enqueue(true); bl = 0
		fi
	   };
	   if
	   :: got -> break
	   :: else -> skip
	   fi;
	   /* returned 1: queued; the task runs on */
	   if
	   :: atomic { completed[me] -> completed[me] = false; woken = true }
	   :: canc > 0 ->
		canc--;
		/* fwait_cancel_async */
		bucket_lock();
		atomic {
			if
			:: queued[me] -> unlink(me); ACOUNT(nk_dec()); cres = 0
#ifdef BROKEN_CANCEL_CHOSEN
			:: else -> cres = 0      /* broken: "cancelled" */
#else
			:: else -> cres = 1      /* -EALREADY */
#endif
			fi;
			bl = 0
		};
		if
		:: cres == 0 ->
			/* cancelled: no completion has run, none will */
			atomic { assert(!completed[me]); cancelled[me] = true; got = false };
			break
		:: else -> skip
		fi;
		/* -EALREADY: a waker chose us; the completion runs or ran */
		atomic { completed[me] -> completed[me] = false; woken = true; cres = 0 };
#ifdef BROKEN_CANCEL_DROPS_WAKE
		/* broken: reported as cancelled, the wake swallowed */
		got = false; break
#else
		if
		:: skip          /* still wants it: a normal completion */
		:: wake1(); got = false; break   /* pass the exclusive wake on */
		fi
#endif
	   fi
	   /* completed: look again (counted in again first) */
	od;
	atomic { alive[me] = false; woken = false }
}

proctype thread(byte me)
{
	byte i, w, wg, n, cres;
	bool got, woken, wa, ch, isasync;
	byte canc = CANC;

	do
	:: n < NOPS ->
#ifdef MIXED
		if :: isasync = true :: isasync = false fi;
#else
		isasync = true;
#endif
		/* the pre-check (FWAIT_PRECHECK), or none */
		if
		:: atomic { ready() }
		:: got = false
		fi;
		if
		:: got -> skip
		:: !got && isasync -> async_take()
		:: !got && !isasync -> blocking_take()
		fi;
		if
		:: got ->
			atomic { assert(owner == 0 && held); owner = me + 1 };
			release()
		:: else -> skip
		fi;
		atomic { n++; got = false; isasync = false }
	:: else -> break
	od;
	finished++
}

active proctype monitor()
{
#ifndef NO_MONITOR
end:	do
	:: atomic {
		/* every queued record is counted: no release that reads nk
		 * as 0 can strand one */
		nk < qlen -> assert(false) }
	:: atomic { finished == NT -> break }
	od;
#else
	finished == NT;
#endif
	/* the final state: resource free, bucket empty, nothing pending */
	assert(!held && owner == 0 && bl == 0 && qlen == 0 && nk == 0);
	assert(!completed[0] && !completed[1] && !completed[2]);
	assert(!posted[0] && !posted[1] && !posted[2])
}

init
{
	atomic { run thread(0); run thread(1); run thread(2) }
}

/* A lost wakeup: a record queued, from some point on forever, while the
 * resource is free.  Checked with ./pan -a (runs end by stuttering). */
#define LOST (qlen > 0 && !held)
ltl no_lost_wakeup { [] <> !LOST }
