/* SPDX-License-Identifier: MIT */
/*
 * hlatch.pml - Promela model of the hybrid latch's parking-lot protocol
 * (fwait/hlatch.c: fwait_hlatch_lock/unlock, _lock_shared/_unlock_shared,
 * the wait of _read_begin): a latch word with an in-word waiters bit W over
 * one wait-table bucket, used through fwait_wait_ex (a ready() that takes
 * the latch or sets W, under the bucket lock; a wake may carry a token
 * that ends the wait) and fwait_wake_ex (a callback under the bucket lock
 * that learns whether waiters remain and whether the chosen writer is
 * due).  Checked with spin by tests/model/run_model.sh (runs registered in
 * tests/model/meson.build; docs/design.md says what it checks).  fwait.pml
 * models the bit waits.
 *
 * What is modelled
 * ----------------
 * NT = 3 threads, each doing NOPS lock/unlock pairs on one latch word,
 * exclusive (default) or, with -DSHARED, exclusive or shared, chosen anew
 * for each pair (shared_max SMAX = 2, so a third reader can find the latch
 * full); -DOPTIMISTIC adds a third choice, an optimistic read's begin
 * (fwait_hlatch_read_begin: wait while the latch is exclusive, take
 * nothing).  The word is its state field (FREE, 1..SMAX shared holders, XS
 * exclusive) and W; the version field (so validate) and the caller's own
 * states (-EAGAIN) are not modelled.  The latch's key hashes to one
 * bucket: a mutex (bl), nkeyed (nk) and a FIFO of sleepers, each exclusive
 * or shared; a sleeper's record is a posted flag and the token it was
 * posted with (the parker's handshake, one step), and alive[] says its
 * stack frame exists.
 *
 * Granularity, as in fwait.pml: each atomic RMW on the word is one step; a
 * CAS loop whose failed iterations change nothing is one step (only its
 * successful iteration is visible); work under the bucket lock that touches
 * only what that lock guards is merged into the adjacent step (no other
 * thread can look at the queue meanwhile).  Memory is sequentially
 * consistent (the C11 orders are hlatch.c's and keyed.c's design notes').
 * The spin before queueing is left out: a take in the spin is the fast
 * path's CAS, later, and a failed look changes nothing.
 *
 *   lock:    fast path: one CAS FREE -> XS (W kept); shared: FREE -> 1, or
 *            one more holder below SMAX while W is clear.  Slow: bucket
 *            lock, nkeyed++, then ready() (take_or_announce): take as the
 *            fast path does, except that a reader that has slept (cq, the
 *            wait's "queued") joins a shared latch even with W set; else
 *            set W on the value seen (CAS) and say false; then queue at the
 *            tail (-DFAIR: a woken writer that lost goes back to the head,
 *            one lost race counted), drop the bucket lock, sleep until
 *            posted.  Token HANDOFF: a writer owns the latch (no ready());
 *            a reader chosen beside a writer's handoff waits again (a new
 *            fwait_wait_ex, cq kept).  Token 0: bucket lock, ready() again.
 *            read_begin: done while the state is not XS (its load, then
 *            its ready(), not_x), else set W and sleep as a shared sleeper;
 *            a token ends its wait and it looks again.
 *   unlock:  (FWAIT_HLATCH_STORE_RELEASE) exclusive with W clear (its
 *            load), and (a nondeterministic
 *            choice: its first read of nkeyed, whatever it returned)
 *            nobody waiting in the bucket: a plain store of FREE, W
 *            clear, over the value read, so a W a waiter set since is
 *            wiped; then the read of nkeyed, which may pass the store
 *            (store buffering, the one reordering the missing fence
 *            allows: the store waits in pend until this thread's next
 *            step or another's membarrier drains it); nkeyed not 0: the
 *            wake below, whose callback (released_cb), the latch still
 *            free, hands it to a due writer or wakes the chosen, W set to
 *            more_waiters; the latch taken again (not the releaser's any
 *            more), cancels the wake and sets W.  A waiter's
 *            fwait_wait_ex makes one membarrier between nkeyed++ and its
 *            first ready(), dropping the bucket lock around it (keyed.c),
 *            unless FENCED says one was made since nkeyed was last 0:
 *            it drains pend.  -DCAS_RELEASE (a layout without FWAIT_HLATCH_STORE_RELEASE: the default),
 *            an exclusive release that chose otherwise, and every shared
 *            release: one CAS: a shared holder that is
 *            not the last decrements; the last holder frees while W is
 *            clear (a W set meanwhile fails the CAS), else the slow path: fwait_wake_ex(nr 1): under the
 *            bucket lock, every shared sleeper and the oldest exclusive one
 *            are chosen and unlinked, then the callback (release_cb), told
 *            {woken_exclusive, more_waiters (the queue not empty after the
 *            choice), due}: the last holder (always, exclusive; shared:
 *            the count is still 1, no woken reader joined meanwhile) hands
 *            over if a writer was chosen and is due (the state becomes or
 *            stays XS, token HANDOFF) or frees (token 0); a shared holder
 *            that is not last any more only decrements.  W = more_waiters,
 *            except that a release that is not last never clears it.  Drop
 *            the lock, post each chosen with the token.
 *   due:     a nondeterministic choice at every wake (fair_ns's clock, the
 *            hold vote; strict handoff is the runs where it is always
 *            true); -DFAIR: forced true once the writer lost MAXS races
 *            (max_steals).
 *   -DTIMEOUT: thread NT-1's calls have a deadline, which may pass at any
 *            sleep.  It takes the bucket lock: still queued, it unlinks
 *            itself and takes one last look (ready(), which may take the
 *            latch or set W: a W left set is stale, the next release goes
 *            slow once and clears it).  Already chosen (the waker raced the
 *            deadline), it waits for the post: HANDOFF, as above; token 0,
 *            it takes the bucket lock and runs ready(); false: a writer
 *            passes the wake on (the oldest exclusive sleeper, if any, is
 *            unlinked and posted with token 0), and returns -ETIMEDOUT.
 *
 * Checked: mutual exclusion (an exclusive holder alone, shared holders no
 * more than the count, each finding the state it holds); the W invariant:
 * a queued sleeper always finds W set, unless a store release is between
 * its store and its wake's callback (a monitor process, and an assertion
 * where a release skips the table: nobody may be queued then); a post
 * reaches a live, sleeping, unlinked record; -DFAIR: bounded bypass (see
 * BYPASS); the final state (latch free, bucket empty, nkeyed 0, W clear
 * unless a timeout left it stale); invalid end states (a thread asleep
 * after the others finished: a lost wakeup or a deadlock); and, with
 * --ltl, no_lost_wakeup: never, from some point on, a sleeper queued
 * forever while the latch is free.
 *
 * -DNO_MONITOR drops the W invariant (monitor and point assertion), so a
 * broken variant must be caught by mutual exclusion, the end states or the
 * ltl property.  Broken variants (spin must reject each):
 *   -DBROKEN_STORE_NO_CHECK   the store release does not read nkeyed
 *                             after its store: a W set meanwhile is wiped
 *                             and nobody wakes its setter.
 *   -DBROKEN_NO_MEMBARRIER    the waiter makes no membarrier: the store
 *                             release's read of nkeyed passes its store,
 *                             and the waiter's ready() misses the store.
 *   -DBROKEN_FENCED_EARLY     FENCED is set with the first waiter's
 *                             increment, before its membarrier: a second
 *                             waiter skips its own call, and its ready()
 *                             misses a store still buffered.
 *   -DBROKEN_TOKEN_RELEASE    a handoff also frees the state: a barger and
 *                             the handed writer both own the latch.
 * and, where W decides (-DCAS_RELEASE: the CAS release skips the table
 * while W is clear; a store release reads nkeyed whatever W says):
 *   -DBROKEN_CB_CLEARS_W      the callback clears W whatever more_waiters
 *                             says: a handed-over holder's unlock then
 *                             takes the fast path past a queued sleeper.
 *   -DBROKEN_CB_UNLOCKED      the callback's W update is made after the
 *                             bucket lock is dropped: a sleeper that queued
 *                             (and set W) in between has its W cleared.
 *   -DSHARED -DBROKEN_CB_LAST a shared release's callback takes itself for
 *                             the last holder without looking again: a
 *                             woken reader that joined meanwhile holds a
 *                             latch freed or handed to a writer.
 *   -DOPTIMISTIC -DBROKEN_OPT_NO_W read_begin's ready() sleeps on an
 *                             exclusive latch without setting W: the
 *                             holder's unlock takes the fast path.
 */

#define NT 3
#ifndef NOPS
#define NOPS 2          /* lock/unlock pairs per thread */
#endif
#ifndef MAXS
#define MAXS 1          /* -DFAIR: max_steals */
#endif
#ifndef SMAX
#define SMAX 2          /* -DSHARED: shared_max */
#endif

/* the latch word's state field (fwait_hlatch_layout): 0 free, 1..SMAX
 * shared holders, XS held exclusive */
#define FREE 0
#define XS (SMAX + 1)
#define SHARED_S(s) ((s) >= 1 && (s) <= SMAX)

/* the token fwait_wake_ex's callback returns (HL_HANDOFF); 0: none */
#define HANDOFF 1

#define OK 0
#define TIMEDOUT 1

byte ls;               /* the word's state field */
bool lw;               /* the word's W */
byte bl;               /* bucket lock: 0 free, else tid+1 */
byte q[NT];            /* the bucket's FIFO of sleepers, oldest first */
byte qlen;
bool queued[NT];       /* guarded by bl */
bool wex[NT];          /* the sleeper waits exclusive; guarded by bl */
bool posted[NT];       /* the parker's state: woken, with tok[] */
byte tok[NT];
bool alive[NT];        /* the sleeper's record exists */
byte nk;               /* nkeyed: threads inside fwait_wait_ex */
bool fenced;           /* FW_NKEYED_FENCED: a membarrier since nk was 0 */
byte pend;             /* tid+1 of a store release whose store is still
			* buffered (its value: FREE, W clear) */
byte npost;            /* store releases between their store and the end
			* of their wake's callback (W may be wiped) */
byte owner;            /* tid+1 of the exclusive holder in its critical section */
byte nsh;              /* shared holders in their critical sections */
byte finished;
#ifdef FAIR
/* Bounded bypass: a writer loses at most MAXS races (woken with token 0,
 * the latch taken) before a wake hands the latch to it, plus one for each
 * pass-on it received (-DTIMEOUT): a raced timeout's pass-on is a plain
 * wake (token 0) that may reach a writer already due, which can then lose
 * once more.  With -DSHARED it holds because a shared release that finds
 * a woken reader joined since it looked (not the last) cancels its wake
 * (FWAIT_WAKE_CANCEL: the chosen go back to the head, unwoken); without
 * that (BROKEN_NO_CANCEL) it woke the due writer with token 0, which lost
 * again, and two readers could repeat that (docs/design.md). */
#define BYPASS(x) (MAXS + passons[x])
byte steals[NT];       /* races lost since first queued (fw_requeue) */
byte passons[NT];      /* pass-on wakes received meanwhile */
#endif

/* ---- bucket-guarded helpers: inside an atomic step holding bl ---------- */

inline bucket_lock() { atomic { bl == 0 -> bl = me + 1 } }

/* membarrier(2): every thread passes a full barrier, so a buffered store
 * becomes visible */
inline drain() {
	atomic { if :: pend -> ls = FREE; lw = false; pend = 0 :: else -> skip fi }
}

/* fwait_wait_ex's announce: bucket lock, nkeyed++, then (a latch's wait)
 * the membarrier with the lock dropped, then the lock again */
inline announce() {
#ifdef BROKEN_NO_MEMBARRIER
	atomic { bl == 0 -> bl = me + 1; nk++ }
#else
	/* One membarrier per contention episode (keyed.c): a waiter that
	 * finds FENCED set (a membarrier was made since nkeyed was last 0)
	 * skips its own; the first sets FENCED after its call, under the
	 * lock again.  BROKEN_FENCED_EARLY sets it with the increment, so a
	 * second waiter may skip while the first has not made its call yet. */
	atomic { bl == 0 -> bl = me + 1; skipmb = fenced; nk++;
#ifdef BROKEN_FENCED_EARLY
		fenced = true;
#endif
		if :: !skipmb -> bl = 0 :: else -> skip fi };
	if
	:: !skipmb -> drain(); atomic { bl == 0 -> bl = me + 1; fenced = true }
	:: else -> skip
	fi;
	skipmb = false
#endif
}

/* nkeyed_leave: the decrement that reaches 0 clears FENCED in the same
 * RMW (inside the caller's atomic step) */
inline nk_leave() {
	nk--; fenced = (fenced && nk > 0)
}

inline enqueue_tail() {
	q[qlen] = me; qlen++; queued[me] = true; wex[me] = ex
}

#ifdef FAIR
/* fw_requeue of a woken writer that lost: back to the head of the key */
inline enqueue_head() {
	i = qlen;
	do
	:: i > 0 -> q[i] = q[i - 1]; i--
	:: else -> break
	od;
	q[0] = me; qlen++; queued[me] = true; wex[me] = ex
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
	qlen--; q[qlen] = 0; queued[x] = false; wex[x] = false;
	i = 0; j = 0
}

/* fw_first_exclusive: w = the oldest exclusive sleeper, NT if none */
inline first_exclusive() {
	i = 0; w = NT;
	do
	:: i < qlen && wex[q[i]] -> w = q[i]; break
	:: i < qlen && !wex[q[i]] -> i++
	:: i >= qlen -> break
	od;
	i = 0
}

/* fw_collect(nr 1): every shared sleeper and the oldest exclusive one (w,
 * NT if none), unlinked into the bitmask chosen; c, v scratch (unlink's
 * argument must not be q[c], which unlink shifts) */
inline collect() {
	first_exclusive();
	if :: w < NT -> unlink(w); chosen = 1 << w :: else -> skip fi;
	c = 0;
	do
	:: c < qlen && !wex[q[c]] -> v = q[c]; chosen = chosen | (1 << v); unlink(v)
	:: c < qlen && wex[q[c]] -> c++
	:: c >= qlen -> break
	od;
	c = 0; v = 0
}

/* fw_unchoose: FWAIT_WAKE_CANCEL puts every chosen sleeper back at the
 * head of the key, unwoken, the oldest writer (w) first; only its place
 * among the shared ones can differ from before, which no wake looks at
 * (a wake takes every shared sleeper and the oldest writer); c scratch */
inline uncollect() {
	c = 0;
	do
	:: c < NT && (chosen & (1 << c)) && c != w ->
		i = qlen;
		do
		:: i > 0 -> q[i] = q[i - 1]; i--
		:: else -> break
		od;
		q[0] = c; qlen++; queued[c] = true; wex[c] = false; c++
	:: c < NT && !((chosen & (1 << c)) && c != w) -> c++
	:: c >= NT -> break
	od;
	if
	:: w < NT ->
		i = qlen;
		do
		:: i > 0 -> q[i] = q[i - 1]; i--
		:: else -> break
		od;
		q[0] = w; qlen++; queued[w] = true; wex[w] = true
	:: else -> skip
	fi;
	chosen = 0; c = 0; i = 0
}

/* hlatch.c's take_or_announce, one CAS loop on the word under bl (ready()):
 * exclusive: take a free latch.  Shared: take a free latch, or join a
 * shared one below SMAX unless W is set and we never slept (cq, the
 * wait's "queued": a woken reader joins).  Else set W on the value seen
 * (a CAS: the state may not change under it) and say false. */
inline ready() {
	if
	:: opt && ls != XS -> got = true
	:: !opt && ls == FREE -> ls = (ex -> XS : 1); got = true
	:: !opt && !ex && SHARED_S(ls) && ls < SMAX && (cq || !lw) -> ls++; got = true
#ifdef BROKEN_OPT_NO_W
	:: else ->
		if :: opt -> skip :: else -> lw = true fi;   /* read_begin: no W */
		cq = true; got = false
#else
	:: else -> lw = true; cq = true; got = false
#endif
	fi
}

/* the parker's post of each chosen, with token t: the waker's last touch
 * of the record */
inline post_chosen() {
	i = 0;
	do
	:: i < NT && (chosen & (1 << i)) ->
		atomic {
			assert(alive[i] && !posted[i] && !queued[i]);
			tok[i] = t; posted[i] = true; chosen = chosen & ~(1 << i); i++
		}
	:: i < NT && !(chosen & (1 << i)) -> i++
	:: i >= NT -> break
	od;
	i = 0; t = 0
}

/* ---- fwait_hlatch_lock (ex) / lock_shared (!ex): res = OK or TIMEDOUT ---- */

inline hlatch_lock() {
	/* fast path (try_x / try_s, fresh): one CAS loop */
	atomic {
		if
		:: opt && ls != XS -> got = true
		:: !opt && ls == FREE -> ls = (ex -> XS : 1); got = true
		:: !opt && !ex && SHARED_S(ls) && ls < SMAX && !lw -> ls++; got = true
		:: else -> got = false
		fi
	};
	if
	:: got -> got = false; res = OK
	:: else ->
		/* fwait_wait_ex: announce (nkeyed++, the membarrier) */
		atomic { alive[me] = true; woken = false; cq = false };
		announce();
		do
		:: atomic {
			ready();
			if
			:: got -> nk_leave(); bl = 0
#ifdef FAIR
			:: !got && ex && woken ->
				steals[me]++;
				assert(steals[me] <= BYPASS(me));
				enqueue_head(); bl = 0
			:: !got && !(ex && woken) -> enqueue_tail(); bl = 0
#else
			:: else -> enqueue_tail(); bl = 0
#endif
			fi
		   };
		   if
		   :: got -> got = false; res = OK; break
		   :: else -> skip
		   fi;
		   /* asleep until posted, or (-DTIMEOUT, thread NT-1) the
		    * deadline passes (any sleep of the call may see it) */
		   if
		   :: atomic { posted[me] -> t = tok[me]; posted[me] = false; raced = false; timed = false }
#ifdef TIMEOUT
		   :: atomic { me == NT - 1 && !posted[me] -> skip };
			bucket_lock();
			atomic {
				if
				:: queued[me] ->
					/* not chosen: leave, one last look */
					unlink(me); ready();
					if :: got -> res = OK :: else -> res = TIMEDOUT fi;
					got = false; nk_leave(); bl = 0; timed = true
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
		   :: !timed && t == HANDOFF && ex ->
			/* handed over: ours, no ready() */
			atomic { assert(ls == XS); nk_leave(); t = 0; raced = false; res = OK };
			break
		   :: !timed && t == HANDOFF && !ex ->
			/* a reader chosen beside a writer's handoff: the wait
			 * returns (token), hl_wait waits again (cq kept);
			 * read_begin loops, its load sees XS and waits again */
			atomic { nk_leave(); t = 0; raced = false; woken = false };
			announce()
		   :: !timed && t != HANDOFF && raced ->
			/* a plain wake raced the deadline: ready() once; if it
			 * fails, an exclusive wake goes on to the next writer */
			bucket_lock();
			atomic {
				ready();
				if
				:: got -> res = OK
				:: else ->
					res = TIMEDOUT;
					if
					:: ex -> first_exclusive();
						if
						:: w < NT -> unlink(w); chosen = 1 << w;
#ifdef FAIR
							passons[w]++
#else
							skip
#endif
						:: else -> skip
						fi;
						w = 0
					:: else -> skip
					fi
				fi;
				got = false; nk_leave(); bl = 0
			};
			post_chosen();   /* t is 0 here */
			raced = false;
			break
		   :: !timed && t != HANDOFF && !raced ->
			/* woken with token 0: look again under the lock */
			woken = true;
			bucket_lock()
		fi
		od;
#ifdef FAIR
		atomic { alive[me] = false; woken = false; cq = false; steals[me] = 0; passons[me] = 0 }
#else
		atomic { alive[me] = false; woken = false; cq = false }
#endif
	fi
}

/* ---- fwait_hlatch_unlock (ex) / unlock_shared (!ex) ---------------------- */

inline hlatch_unlock() {
#ifndef CAS_RELEASE
	/* exclusive, W clear: a plain store over the value read */
	atomic { oldw = lw };
	if
	:: ex && !oldw ->
		/* the store, and the read of nkeyed: in order, or the read
		 * first with the store buffered until the drain below */
		if
		:: atomic { ls = FREE; lw = false; npost++ };
		   atomic { rd = nk;
#ifndef NO_MONITOR
			if :: rd == 0 -> assert(qlen == 0) :: else -> skip fi;
#endif
			skip }
		:: atomic { rd = nk; pend = me + 1; npost++ }
		fi;
		drain();
#ifdef BROKEN_STORE_NO_CHECK
		rd = 0;
#endif
		if
		:: rd > 0 ->
			/* fwait_wake_ex(key, 1, 0, released_cb) */
			bucket_lock();
			atomic {
				collect();
				if
				:: due = true
				:: due = false
				fi;
#ifdef FAIR
				if :: w < NT && steals[w] >= MAXS -> due = true :: else -> skip fi;
#endif
				if
				:: ls == FREE && w < NT && due ->
					/* still free: hand it to the due writer */
					ls = XS; t = HANDOFF; lw = (qlen > 0)
				:: ls == FREE && !(w < NT && due) -> t = 0; lw = (qlen > 0)
				:: ls != FREE && chosen != 0 ->
					/* taken meanwhile: cancel, W set, so
					 * that holder's release comes back */
					uncollect(); lw = true
				:: ls != FREE && chosen == 0 -> lw = (qlen > 0)
				fi;
				npost--; due = false; w = 0; bl = 0
			};
			post_chosen()
		:: else -> npost--
		fi;
		rd = 0; oldw = false; got = true
	:: ex && !oldw ->
		/* its first read of nkeyed said someone waits (any value it
		 * may read): the CAS release below */
		oldw = false; got = false
	:: else -> oldw = false; got = false
	fi;
	if
	:: !got ->
#endif
	/* release: one CAS loop; a shared holder that is not last decrements
	 * (W is the last one's business); the last frees only while W is
	 * clear (a W set meanwhile fails its CAS), else the slow path */
	atomic {
		if
		:: !ex && ls > 1 -> ls--; got = true
		:: (ex || ls == 1) && !lw ->
#ifndef NO_MONITOR
			/* the table is skipped: nobody may be queued, unless
			 * a store release wiped W and has yet to wake them */
			assert(qlen == 0 || npost > 0);
#endif
			ls = FREE; got = true
		:: else -> got = false
		fi
	};
#ifndef CAS_RELEASE
	:: else -> skip
	fi;
#endif
	if
	:: got -> got = false
	:: else ->
		/* fwait_wake_ex(key, 1, 0, release_cb) */
		bucket_lock();
		atomic {
			collect();
			more = (qlen > 0);
			if
			:: due = true
			:: due = false
			fi;
#ifdef FAIR
			if :: w < NT && steals[w] >= MAXS -> due = true :: else -> skip fi;
#endif
			/* release_cb, under bl: last holder?  (A shared release
			 * may find that woken readers joined since it looked.) */
			assert(ex -> ls == XS : SHARED_S(ls));
#ifdef BROKEN_CB_LAST
			last = true;
#else
			last = ex || ls == 1;
#endif
			if
			:: last && w < NT && due ->
				/* handoff: the state stays (becomes) XS */
#ifdef BROKEN_TOKEN_RELEASE
				ls = FREE;
#else
				ls = XS;
#endif
				t = HANDOFF
			:: last && !(w < NT && due) -> ls = FREE; t = 0
			:: !last -> ls--; t = 0;
#ifndef BROKEN_NO_CANCEL
				/* FWAIT_WAKE_CANCEL: nobody wakes; W stays set
				 * (they are queued again) */
				uncollect(); more = (qlen > 0)
#endif
			fi;
#if defined(BROKEN_CB_CLEARS_W)
			lw = false;
#elif !defined(BROKEN_CB_UNLOCKED)
			if :: more -> lw = true :: !more && last -> lw = false :: else -> skip fi;
#endif
			due = false; w = 0;
			bl = 0
		};
#ifdef BROKEN_CB_UNLOCKED
		/* broken: W written after the bucket lock is dropped */
		if :: more -> lw = true :: !more && last -> lw = false :: else -> skip fi;
#endif
		more = false; last = false;
		post_chosen()
	fi
}

inline critical_section() {
	atomic {
		if
		:: ex -> assert(owner == 0 && nsh == 0 && ls == XS); owner = me + 1
		:: else -> assert(owner == 0 && SHARED_S(ls) && nsh < ls); nsh++
		fi
	}
}

inline leave_critical_section() {
	atomic {
		if
		:: ex -> assert(owner == me + 1 && ls == XS); owner = 0
		:: else -> assert(owner == 0 && SHARED_S(ls) && nsh > 0); nsh--
		fi
	}
}

proctype thread(byte me)
{
	byte i, j, c, v, w, t, res, n, chosen, rd;
	bool ex, opt, got, woken, cq, raced, timed, more, due, last, oldw, skipmb;

	do
	:: n < NOPS ->
#ifdef SHARED
		if
		:: ex = true
		:: ex = false
#ifdef OPTIMISTIC
		:: opt = true
#endif
		fi;
#else
#ifdef OPTIMISTIC
		if :: ex = true :: opt = true fi;
#else
		ex = true;
#endif
#endif
		hlatch_lock();
		if
		:: res == OK && !opt -> critical_section(); leave_critical_section(); hlatch_unlock()
		:: res == OK && opt -> skip    /* read, then validate: the word only */
		:: else -> skip
		fi;
		atomic { n++; res = 0; ex = false; opt = false }
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
		qlen > 0 && !lw && npost == 0 -> assert(false) }
	:: atomic { finished == NT -> break }
	od;
#else
	finished == NT;
#endif
	/* the final state: latch free, nobody queued or inside the bucket */
	assert(ls == FREE && owner == 0 && nsh == 0 && qlen == 0 && nk == 0 && !fenced && bl == 0 &&
	       pend == 0 && npost == 0);
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
