/*
 * hlatch.pml - Promela model of the hybrid latch's parking-lot protocol:
 * a lock word with an in-word waiters bit W (fwait_hlatch_lock/unlock)
 * over one wait-table bucket, used through fwait_wait_ex (a ready() that
 * takes the latch or sets W, under the bucket lock; a wake may carry a
 * token) and fwait_wake_ex (a callback under the bucket lock that learns
 * whether waiters remain and whether the chosen one is due).  Checked with
 * spin by tests/model/run_model.sh (registered in tests/model/meson.build;
 * docs/design.md says what it checks).  fwait.pml models the bit waits.
 *
 * What is modelled
 * ----------------
 * NT = 3 threads, each doing NOPS exclusive lock/unlock pairs on one latch
 * word, whose key hashes to one bucket.  The word is a state (FREE, or XS:
 * held exclusive) and W; the version field is not modelled (no optimistic
 * readers).  The bucket is a mutex (bl), the count of threads inside
 * fwait_wait_ex (nkeyed) and a FIFO of sleepers; a sleeper's record is a
 * posted flag and the token it was posted with (the parker's handshake,
 * one step), and alive[] says its stack frame exists.
 *
 * Granularity, as in fwait.pml: each atomic RMW on the word is one step; a
 * CAS loop whose failed iterations change nothing is one step (only its
 * successful iteration is visible); work under the bucket lock that touches
 * only what that lock guards is merged into the adjacent step (no other
 * thread can look at the queue meanwhile).  Memory is sequentially
 * consistent (the C11 orders are hlatch.c's and keyed.c's design notes').
 *
 *   lock():  fast path: one CAS FREE -> XS (W kept).  Slow: bucket lock,
 *            nkeyed++, then ready(): the latch FREE: take it (CAS) and
 *            return; else set W on the value seen (CAS) and return false;
 *            then queue at the tail (-DFAIR: at the head once woken, with
 *            one lost race counted), drop the bucket lock and sleep until
 *            posted.  Posted with token HANDOFF: the latch is ours, no
 *            ready().  Token 0: bucket lock, ready() again.
 *   unlock(): W clear: one CAS XS -> FREE; if W was set meanwhile, the slow
 *            path (merged: the CAS loop sees W or frees).  Slow: bucket
 *            lock; choose the oldest sleeper, if any, and unlink it; the
 *            callback, under the lock, gets {woken, more_waiters (the queue
 *            not empty after the choice), due}: woken && due: the state
 *            stays XS (handoff), W = more_waiters, token HANDOFF; else
 *            state FREE, W = more_waiters, token 0.  Drop the lock, post
 *            the chosen with the token.
 *   due:     a nondeterministic choice at every wake (fair_ns's clock, the
 *            hold vote; strict handoff is the runs where it is always
 *            true); -DFAIR: forced true once the chosen lost MAXS races
 *            (max_steals), and bounded bypass is asserted.
 *   -DTIMEOUT: thread NT-1's locks have a deadline that may pass, once,
 *            while it sleeps.  It takes the bucket lock: still queued, it
 *            unlinks itself and takes one last look (ready(), which may take
 *            the latch or set W: a W left set is stale, the next release
 *            takes the slow path once and clears it).  Already chosen (the
 *            waker raced the deadline), it waits for the post: HANDOFF, it
 *            owns the latch; token 0, it takes the bucket lock and runs
 *            ready(); false: it passes the wake on (the oldest sleeper, if
 *            any, is unlinked and posted with token 0) and returns
 *            -ETIMEDOUT.
 *
 * Checked: mutual exclusion (owner, and a holder finds the state XS); the
 * W invariant: a queued sleeper always finds W set (a monitor process, and
 * an assertion where the fast unlock skips the table, where it matters:
 * nobody may be queued then); a post reaches a live, sleeping record;
 * -DFAIR: bounded bypass (no sleeper loses more than MAXS races; MAXS + 1
 * with -DTIMEOUT, see BYPASS); the final state (latch free, bucket empty, nkeyed 0, W clear
 * unless a timeout left it stale); invalid end states (a thread asleep
 * after the others finished: a lost wakeup or a deadlock); and, with
 * --ltl, no_lost_wakeup: never, from some point on, a sleeper queued
 * forever while the latch is free.
 *
 * -DNO_MONITOR drops the W invariant (monitor and point assertion), so a
 * broken variant must be caught by mutual exclusion, the end states or the
 * ltl property.  Broken variants (spin must reject each):
 *   -DBROKEN_CB_CLEARS_W      the callback clears W whatever more_waiters
 *                             says: a handed-over holder's unlock then
 *                             takes the fast path past a queued sleeper.
 *   -DBROKEN_CB_UNLOCKED      the callback's W update is made after the
 *                             bucket lock is dropped: a sleeper that queued
 *                             (and set W) in between has its W cleared.
 *   -DBROKEN_TOKEN_RELEASE    a handoff also frees the state: a barger and
 *                             the handed sleeper both own the latch.
 *   -DBROKEN_FAST_UNLOCK_STORE the fast unlock stores FREE over the value
 *                             it read (not a CAS), wiping a W set meanwhile.
 */

#define NT 3
#ifndef NOPS
#define NOPS 2          /* lock/unlock pairs per thread */
#endif
#ifndef MAXS
#define MAXS 1          /* -DFAIR: max_steals */
#endif

/* the latch word's state field (fwait_hlatch_layout: 0 free, exclusive) */
#define FREE 0
#define XS 3

/* the token fwait_wake_ex's callback returns; 0: none, re-check ready() */
#define HANDOFF 1

#define OK 0
#define TIMEDOUT 1

byte ls;               /* the word's state field */
bool lw;               /* the word's W */
byte bl;               /* bucket lock: 0 free, else tid+1 */
byte q[NT];            /* the bucket's FIFO of sleepers, oldest first */
byte qlen;
bool queued[NT];       /* guarded by bl */
bool posted[NT];       /* the parker's state: woken, with tok[] */
byte tok[NT];
bool alive[NT];        /* the sleeper's record exists */
byte nk;               /* nkeyed: threads inside fwait_wait_ex */
byte owner;            /* tid+1 of the thread in its critical section */
byte finished;
#ifdef FAIR
/* Bounded bypass: a sleeper loses at most MAXS races (woken with token 0,
 * the latch taken) before a wake hands the latch to it; one more per
 * timeout, since a raced timeout's pass-on is a plain wake (token 0) that
 * may reach a sleeper already due, which can then lose once more. */
#ifdef TIMEOUT
#define BYPASS (MAXS + 1)
#else
#define BYPASS MAXS
#endif
byte steals[NT];       /* races lost since first queued (fw_requeue) */
#endif

/* ---- bucket-guarded helpers: inside an atomic step holding bl ---------- */

inline bucket_lock() { atomic { bl == 0 -> bl = me + 1 } }

inline enqueue_tail() {
	q[qlen] = me; qlen++; queued[me] = true
}

#ifdef FAIR
/* fw_requeue of a woken loser: back to the head of the key */
inline enqueue_head() {
	i = qlen;
	do
	:: i > 0 -> q[i] = q[i - 1]; i--
	:: else -> break
	od;
	q[0] = me; qlen++; queued[me] = true
}
#endif

/* fw_unlink; i, j scratch */
inline unlink(x) {
	assert(bl == me + 1 && queued[x]);
	i = 0;
	do
	:: i < qlen && q[i] != x -> i++
	:: else -> break
	od;
	assert(i < qlen);
	j = i;
	do
	:: j + 1 < qlen -> q[j] = q[j + 1]; j++
	:: else -> break
	od;
	qlen--; q[qlen] = 0; queued[x] = false;
	i = 0; j = 0
}

/* the oldest sleeper (all are exclusive): unlinked into w, NT if none */
inline choose_oldest() {
	if
	:: qlen > 0 -> w = q[0]; unlink(w)
	:: else -> w = NT
	fi
}

/* hlatch's ready(), exclusive: one CAS loop on the word, under bl.  Takes
 * a free latch (got), or sets W on the value it saw (a CAS: the state may
 * not change under it) and says false. */
inline ready() {
	if
	:: ls == FREE -> ls = XS; got = true
	:: else -> lw = true; got = false
	fi
}

/* the parker's post: the waker's last touch of the record */
inline post(x, t) {
	atomic {
		assert(alive[x] && !posted[x] && !queued[x]);
		tok[x] = t; posted[x] = true; x = NT; t = 0
	}
}

/* ---- fwait_hlatch_lock: res = OK (owned) or TIMEDOUT -------------------- */

inline hlatch_lock() {
	/* fast path: CAS FREE -> XS */
	atomic { if :: ls == FREE -> ls = XS; got = true :: else -> got = false fi };
	if
	:: got -> got = false; res = OK
	:: else ->
		/* fwait_wait_ex: announce (nkeyed++, the fence) under bl */
		atomic { bl == 0 -> bl = me + 1; alive[me] = true; nk++; woken = false };
		do
		:: atomic {
			ready();
			if
			:: got -> nk--; bl = 0
#ifdef FAIR
			:: !got && woken ->
				steals[me]++;
				assert(steals[me] <= BYPASS);
				enqueue_head(); bl = 0
			:: !got && !woken -> enqueue_tail(); bl = 0
#else
			:: else -> enqueue_tail(); bl = 0
#endif
			fi
		   };
		   if
		   :: got -> got = false; res = OK; break
		   :: else -> skip
		   fi;
		   /* asleep until posted, or (-DTIMEOUT) the deadline */
		   if
		   :: atomic { posted[me] -> t = tok[me]; posted[me] = false; raced = false; timed = false }
#ifdef TIMEOUT
		   :: atomic { tmo > 0 && !posted[me] -> tmo-- };
			bucket_lock();
			atomic {
				if
				:: queued[me] ->
					/* not chosen: leave, one last look */
					unlink(me); ready();
					if :: got -> res = OK :: else -> res = TIMEDOUT fi;
					got = false; nk--; bl = 0; timed = true
				:: else -> bl = 0; timed = false
				fi
			};
			if
			:: !timed ->
				/* chosen as the deadline passed: the post
				 * comes, the waker's last act */
				atomic { posted[me] -> t = tok[me]; posted[me] = false };
				raced = true
			:: else -> skip
			fi
#endif
		   fi;
		   if
		   :: timed -> timed = false; break
		   :: !timed && t == HANDOFF ->
			/* handed over: ours, no ready() */
			atomic { assert(ls == XS); nk--; t = 0; raced = false; res = OK };
			break
		   :: !timed && t != HANDOFF && raced ->
			/* a plain wake raced the deadline: ready() once; if it
			 * fails, pass the wake on to the next sleeper */
			bucket_lock();
			atomic {
				ready();
				if
				:: got -> res = OK; w = NT
				:: else -> res = TIMEDOUT; choose_oldest()
				fi;
				got = false; nk--; bl = 0
			};
			if :: w < NT -> post(w, t) :: else -> w = 0 fi;
			raced = false;
			break
		   :: !timed && t != HANDOFF && !raced ->
			/* woken with token 0: look again under the lock */
			woken = true;
			bucket_lock()
		fi
		od;
#ifdef FAIR
		atomic { alive[me] = false; woken = false; steals[me] = 0 }
#else
		atomic { alive[me] = false; woken = false }
#endif
	fi
}

/* ---- fwait_hlatch_unlock ------------------------------------------------- */

inline hlatch_unlock() {
	atomic { assert(owner == me + 1 && ls == XS); owner = 0 };
#ifdef BROKEN_FAST_UNLOCK_STORE
	/* broken: read, then a plain store of FREE over the value read */
	oldw = lw;
	if
	:: !oldw -> atomic { ls = FREE; lw = oldw }; got = true
	:: else -> got = false
	fi;
	oldw = false;
#else
	/* one CAS XS -> FREE while W is clear; W seen: the slow path */
	atomic {
		if
		:: !lw ->
#ifndef NO_MONITOR
			/* the table is skipped: nobody may be queued */
			assert(qlen == 0);
#endif
			ls = FREE; got = true
		:: else -> got = false
		fi
	};
#endif
	if
	:: got -> got = false
	:: else ->
		/* fwait_wake_ex(key, 1, FWAIT_WAKE_EXCLUSIVE_ONLY, cb) */
		bucket_lock();
		atomic {
			choose_oldest();
			more = (qlen > 0);
			if
			:: due = true
			:: due = false
			fi;
#ifdef FAIR
			if :: w < NT && steals[w] >= MAXS -> due = true :: else -> skip fi;
#endif
			/* the callback, under bl */
			if
			:: w < NT && due ->
				/* handoff: the state stays XS */
#ifdef BROKEN_TOKEN_RELEASE
				ls = FREE;
#endif
				t = HANDOFF
			:: else -> ls = FREE; t = 0
			fi;
#if defined(BROKEN_CB_CLEARS_W)
			lw = false;
#elif !defined(BROKEN_CB_UNLOCKED)
			lw = more;
#endif
			due = false;
			bl = 0
		};
#ifdef BROKEN_CB_UNLOCKED
		/* broken: W written after the bucket lock is dropped */
		lw = more;
#endif
		more = false;
		if :: w < NT -> post(w, t) :: else -> w = 0; t = 0 fi
	fi
}

inline critical_section() {
	atomic { assert(owner == 0 && ls == XS); owner = me + 1 }
}

proctype thread(byte me)
{
	byte i, j, w, t, res, n;
	bool got, woken, raced, timed, more, due, oldw;
#ifdef TIMEOUT
	/* one thread has a deadline that may pass once */
	byte tmo = (me == NT - 1 -> 1 : 0);
#endif

	do
	:: n < NOPS ->
		hlatch_lock();
		if
		:: res == OK -> critical_section(); hlatch_unlock()
		:: else -> skip
		fi;
		atomic { n++; res = 0 }
	:: else -> break
	od;
	finished++
}

active proctype monitor()
{
#ifndef NO_MONITOR
end:	do
	:: atomic {
		/* a queued sleeper always finds W set: no release that skips
		 * the table can strand it (so: never W clear with a sleeper
		 * queued and the latch held) */
		qlen > 0 && !lw -> assert(false) }
	:: atomic { finished == NT -> break }
	od;
#else
	finished == NT;
#endif
	/* the final state: latch free, nobody queued or inside the bucket */
	assert(ls == FREE && owner == 0 && qlen == 0 && nk == 0 && bl == 0);
#ifndef TIMEOUT
	/* only a timed-out sleeper leaves W stale */
	assert(!lw)
#endif
}

init
{
	atomic { run thread(0); run thread(1); run thread(2) }
}

/* A lost wakeup: a sleeper queued, from some point on forever, while the
 * latch is free.  Checked with ./pan -a (runs end by stuttering). */
#define LOST (qlen > 0 && ls == FREE)
ltl no_lost_wakeup { [] <> !LOST }
