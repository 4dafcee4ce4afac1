/* SPDX-License-Identifier: MIT */
/*
 * fwait.pml - Promela model of fwait's bit-wait protocol, as implemented in
 * fwait/bitops.c (take_or_announce, clear_or_announce, tidy_waiters_bit,
 * fwait_bit_lock/unlock/wait/clear, unlock_handoff,
 * handoff_or_count_steal) and fwait/park.c (fw_sleep, fw_signal_all).
 * Checked with spin by tests/model/run_model.sh; see docs/reliability.md.
 *
 * What is modelled
 * ----------------
 * NT = 3 threads and two keys that share ONE bucket: two bits of one word
 * (default; the waiters bit W is shared by both keys) or bit 0 of two words
 * (-DTWO_WORDS; each word has its own W).  The bucket is a mutex and a FIFO
 * of waiter records; a record (key, exclusive, state, queued) is what
 * struct fw_waiter holds on the waiter's stack, and alive[i] says whether
 * that stack frame exists (between fw_waiter_init and the return).
 *
 * Granularity.  Each atomic RMW on a word is one step.  A CAS loop whose
 * failed iterations change nothing (take_or_announce, clear_or_announce,
 * the unlock fast path) is one step: only its final, successful iteration
 * is visible.  Work done while holding the bucket lock that only touches
 * lock-guarded fields is merged into the adjacent step; a word RMW made
 * under the bucket lock stays its own visible effect, but the steps around
 * it are merged since no other thread can observe the queue meanwhile.  The
 * waiter/waker handshake under the waiter's own mutex is one step on
 * wstate[].  Memory is sequentially consistent (see docs: not modelled).
 *
 * A deadline is a nondeterministic choice a sleeping waiter may take while
 * its state is still WAITING (pthread_cond_timedwait returning ETIMEDOUT
 * with state == FW_WAITING), at most TMO times per thread, so every
 * interleaving of a timeout with a wake or a handoff is explored.  A waiter
 * chosen as its deadline passed (bit_sleep's `raced`) passes a handoff on
 * through unlock and returns -ETIMEDOUT; after a plain wake it reports what
 * is true now (lock: one trylock; wait: the bit clear).
 *
 * Policies: WAKE_ONE strict handoff (default, FWAIT_HANDOFF_STRICT),
 * -DWAKE_ALL, -DBROADCAST, and -DFAIR (WAKE_ONE's eventual fairness,
 * FWAIT_HANDOFF_FAIR, unlock_wake_one): an unlock that sees W decides under
 * the bucket lock with the bit held: if the oldest exclusive waiter is due
 * it is handed the bit (it stays set); otherwise one RMW clears the bit (and
 * W if nobody of the word stays queued) and the oldest exclusive waiter and
 * every non-exclusive waiter of the key are woken.  Any running thread may
 * take the free bit first (every lock_unlock is a potential barger); a woken
 * waiter that loses re-announces W and re-queues at the HEAD of its key
 * (bit_sleep, fw_requeue), counting one lost race (steals[]).  "Due"
 * is steals >= MAXS (max_steals, the count bound) or aged[], the time bound
 * fair_ns, modelled as a flag the unlock may set nondeterministically and
 * that then stays set (time only grows).  The unlock also hands over when
 * the bucket's hold vote says long (fw_holds_long), which can change either
 * way between unlocks: a fresh nondeterministic choice each time (longh), so
 * every unlock may hand over or release.  Bounded bypass: a waiter never
 * loses more than MAXS races (assertion).  Under -DKEYED -DFAIR a woken
 * consumer that finds no token re-queues at the head as well.
 * Workloads: default = every thread does NOPS of {bit_lock+unlock on key k,
 * bit_wait on key k}; -DEVENTS = key 1 is an event bit that thread 0 sets and
 * clears (up to NOPS times) while threads 1 and 2 bit_wait on it or lock
 * key 0; -DKEYED = generic keyed waits (keyed.c): thread 0 produces 2 x NOPS
 * tokens, each followed by fwait_wake(key, 1); threads 1 and 2 consume with
 * an exclusive fwait_wait whose ready() takes a token (timeouts included,
 * so the raced "pass the wake on" path is explored) or lock key 0 in the
 * same bucket.  -DKEYED -DABANDON: a lock made of a keyed wait (the version
 * lock's pattern): one token, the lock being free; every thread takes it
 * with an exclusive fwait_wait and releases it with tokens++ and
 * fwait_wake(key, 1); a woken waiter may instead abandon its wait, once
 * per thread, token or not (an optimistic reader restarting), and then
 * passes the wake on with fwait_wake(key, 1), as fwait.h tells such callers
 * to (tests/fwait: abandoned_wakes_are_passed_on).  Without the pass-on,
 * the waiter behind it sleeps on a free lock (BROKEN_ABANDON).
 *
 * -DNO_MONITOR drops the invariant monitor, so that a broken variant must be
 * caught by the end-state and ltl checks alone.
 *
 * Broken variants (spin must reject each):
 *   -DBROKEN_UNLOCK   the unlock fast path reads W, then clears the bit with
 *                     a plain store of the value it read (not one RMW).
 *   -DBROKEN_RECHECK  the lock slow path announces W and sleeps without
 *                     re-checking the bit under the bucket lock.
 *   -DBROKEN_RACE     a timed-out waiter that a handoff chose at the same
 *                     moment drops the bit instead of passing it on
 *                     (the 2008 exclusive-wait abort race).
 *   -DKEYED -DBROKEN_KEYED_COUNT  fwait_wait raises the bucket's count of
 *                     keyed waiters only after its first ready(), so a
 *                     fwait_wake that reads the count as 0 skips a waiter
 *                     that goes to sleep (the fences' reason, keyed.c).
 *   -DKEYED -DBROKEN_KEYED_CHECK  fwait_wait evaluates ready() before it
 *                     takes the bucket lock (and queues without looking
 *                     again), so a wake can fall in between.
 *   -DFAIR -DBROKEN_FAIR_REQUEUE  a woken loser re-queues at the head
 *                     without re-announcing W (the unlock that woke it may
 *                     have cleared W, leaving nobody queued): the next
 *                     holder's unlock then skips the table.
 *   -DFAIR -DBROKEN_FAIR_VOTE  an unlock that hands over only because the
 *                     hold vote says long (the waiter is not due) clears the
 *                     bit as well, as if it released: a barger and the
 *                     handed waiter then both hold it.
 *   -DFAIR -DBROKEN_FAIR_NOWAKE  the fair unlock releases the bit but wakes
 *                     nobody (forgets the oldest exclusive waiter).
 *   -DKEYED -DABANDON -DBROKEN_ABANDON  a woken consumer that abandons its
 *                     wait (ready() says restart) leaves without passing
 *                     the exclusive wake on: the next waiter of the key
 *                     sleeps on with a token there to take.
 *
 * Checked: assertions (mutual exclusion via owner[]; FIFO handoff: the
 * chosen exclusive waiter holds the oldest ticket of its key; a waker only
 * touches live waiter records; a HANDED waiter finds its bit set; the
 * monitor's invariants; the final state); invalid end states (a waiter
 * asleep after everyone else finished is a lost wakeup or a deadlock); and
 * ltl no_lost_wakeup (never, from some point on, a waiter queued forever on
 * a clear bit).
 */

#define NT 3
#ifndef NOPS
#define NOPS 2          /* operations per thread */
#endif
#ifndef TMO
#define TMO 1           /* timeouts each thread may take */
#endif

#define WMASK 128       /* W, FWAIT_WAITERS_MASK */
#ifndef MAXS
#define MAXS 1          /* -DFAIR: max_steals, the count bound */
#endif

#ifdef TWO_WORDS
#define KWORD(k) (k)
#define KBIT(k) 1
#else
#define KWORD(k) 0
#define KBIT(k) (1 << (k))
#endif

/* enum fw_wake_state */
#define WAITING 0
#define WOKEN   1
#define HANDED  2

/* results */
#define OK      0
#define TIMEDOUT 1

byte word[2];          /* the callers' words */
byte bl;               /* bucket lock: 0 free, else tid+1 */
byte q[NT];            /* the bucket's FIFO, oldest first */
byte qlen;
bool queued[NT];       /* guarded by bl */
byte wkey[NT];         /* set before queueing, reset when unlinked */
bool wexcl[NT];
byte wstate[NT];       /* guarded by the waiter's own mutex */
bool alive[NT];        /* the waiter's stack record exists */
byte ticket[NT];       /* enqueue order of queued exclusive waiters */
byte next_ticket;
byte owner[2];         /* tid+1 of the lock-bit holder, 0 none */
byte finished;
#ifdef KEYED
byte tokens;           /* the generic key's condition: ready() takes one */
byte nkw;              /* threads inside fwait_wait on the bucket (nkeyed) */
#endif
#ifdef FAIR
byte steals[NT];       /* races lost since the waiter first queued */
bool aged[NT];         /* waited fair_ns: due by time */
bool longh;            /* the bucket's hold vote says long: set (or not) and
			* reset inside one unlock's atomic step, so always
			* false between steps and no part of the state */
#endif

#define BITSET(k) ((word[KWORD(k)] & KBIT(k)) != 0)
#define WSET(wd) ((word[wd] & WMASK) != 0)
/* GKEY: the generic key of -DKEYED (fwait_wait / fwait_wake); its waiters
 * never touch a word or W. */
#define GKEY 2
#define QB(i) (queued[i] && wkey[i] != GKEY)
#define QW(i, wd) (QB(i) && KWORD(wkey[i]) == (wd))
#define HASW(wd) (QW(0, wd) || QW(1, wd) || QW(2, wd))
#define QEC(i) (QB(i) && wexcl[i] && !BITSET(wkey[i]))
#define QWOK(i) (!QB(i) || WSET(KWORD(wkey[i])))
#ifdef KEYED
/* a bit waiter on a clear bit, or a token consumer while tokens are left */
#define QC(i) ((QB(i) && !BITSET(wkey[i])) || (queued[i] && wkey[i] == GKEY && tokens > 0))
#else
#define QC(i) (QB(i) && !BITSET(wkey[i]))
#endif
#define WEXACT (bl != 0 || (WSET(0) == HASW(0) && WSET(1) == HASW(1)))
#define OLDER(j, k, tk) (queued[j] && wexcl[j] && wkey[j] == (k) && ticket[j] < (tk))

/* ---- bucket-guarded helpers: call inside an atomic step holding bl ----- */

inline enqueue(k, ex) {
	wkey[me] = k; wexcl[me] = ex;
	if
	:: ex -> ticket[me] = next_ticket; next_ticket++
	:: else -> skip
	fi;
	q[qlen] = me; qlen++; queued[me] = true
}

#ifdef FAIR
/* fw_requeue for a woken loser: first of the bucket, so first of its
 * key; ticket 0: no queued waiter of its key may be chosen before it. */
inline enqueue_head(k, ex) {
	wkey[me] = k; wexcl[me] = ex; ticket[me] = 0;
	i = qlen;
	do
	:: i > 0 -> q[i] = q[i - 1]; i--
	:: else -> break
	od;
	q[0] = me; qlen++; queued[me] = true; i = 0
}
#endif

/* fw_unlink; locals i, j are scratch */
inline unlink(w) {
	assert(bl == me + 1 && queued[w]);
	i = 0;
	do
	:: i < qlen && q[i] != w -> i++
	:: else -> break
	od;
	assert(i < qlen);
	j = i;
	do
	:: j + 1 < qlen -> q[j] = q[j + 1]; j++
	:: else -> break
	od;
	qlen--; q[qlen] = 0; queued[w] = false;
	wkey[w] = 0; wexcl[w] = false; ticket[w] = 0;
	if :: qlen == 0 -> next_ticket = 0 :: else -> skip fi;
	i = 0; j = 0
}

/* tidy_waiters_bit */
inline tidy(wd) {
	if :: !HASW(wd) -> word[wd] = word[wd] & ~WMASK :: else -> skip fi
}

/* fw_collect into the bitmask `chosen`: waiters of key k, non-exclusive
 * ones always, exclusive ones when allex; BROADCAST: everyone */
inline collect(k, allex) {
	c = 0;
	do
	:: c < qlen ->
		w = q[c];
#ifdef BROADCAST
		if
		:: true ->
#else
		if
		:: wkey[w] == k && (!wexcl[w] || allex) ->
#endif
			unlink(w); chosen = chosen | (1 << w)
		:: else -> c++
		fi
	:: else -> break
	od;
	c = 0; w = 0
}

/* fw_first_exclusive: w = oldest exclusive waiter of k, NT if none */
inline first_exclusive(k) {
	c = 0; w = NT;
	do
	:: c < qlen && wkey[q[c]] == k && wexcl[q[c]] -> w = q[c]; break
	:: c < qlen && !(wkey[q[c]] == k && wexcl[q[c]]) -> c++
	:: c >= qlen -> break
	od;
	c = 0
}

inline assert_fifo(w, k) {
	assert(!OLDER(0, k, ticket[w]) && !OLDER(1, k, ticket[w]) && !OLDER(2, k, ticket[w]))
}

/* ---- the waiter/waker handshake (park.c) ------------------------------ */

inline bucket_lock() { atomic { bl == 0 -> bl = me + 1 } }

/* fw_signal_all: one step per chosen waiter, the last touch of each */
inline signal_chosen(st) {
	i = 0;
	do
	:: i < NT && (chosen & (1 << i)) ->
		atomic {
			assert(alive[i] && wstate[i] == WAITING);
			wstate[i] = st; chosen = chosen & ~(1 << i); i++
		}
	:: i < NT && !(chosen & (1 << i)) -> i++
	:: i >= NT -> break
	od;
	i = 0
}

/*
 * fw_sleep, entered right after the step that queued us and dropped bl.
 * Sets st to the state we were woken with, or TIMEDOUT-path results:
 * res = TIMEDOUT with raced = false (we unlinked ourselves) or raced = true
 * (a waker had chosen us; st is what it gave).
 */
inline sleep(k) {
	raced = false; res = OK;
	if
	:: atomic { wstate[me] != WAITING -> st = wstate[me]; wstate[me] = WAITING }
	:: atomic { tmo > 0 && wstate[me] == WAITING -> tmo-- };
		/* expired: decide under the bucket lock */
		bucket_lock();
		atomic {
			if
			:: queued[me] ->
				unlink(me); tidy(KWORD(k)); bl = 0;
				res = TIMEDOUT; st = WAITING
			:: else -> bl = 0
			fi
		};
		if
		:: res == OK ->
			/* a waker chose us as the deadline passed: wait for
			 * its signal, the last thing it does */
			atomic { wstate[me] != WAITING -> st = wstate[me]; wstate[me] = WAITING };
			raced = true; res = TIMEDOUT
		:: else -> skip
		fi
	fi
}

/* unlock_handoff: the bit is still ours and W was seen */
inline unlock_handoff(k) {
	bucket_lock();
	atomic {
		first_exclusive(k);
		if
		:: w < NT ->
			/* the bit stays set: ownership passes to w */
			assert_fifo(w, k);
			unlink(w); chosen = 1 << w; tidy(KWORD(k)); bl = 0; w = 0;
			hand = true
		:: else ->
			collect(k, false);
			/* one RMW clears the bit, and W if nobody is left */
			word[KWORD(k)] = word[KWORD(k)] & ~KBIT(k);
			tidy(KWORD(k)); bl = 0;
			hand = false
		fi
	};
	if
	:: hand -> hand = false; signal_chosen(HANDED)
	:: else -> signal_chosen(WOKEN)
	fi
}

/* WAKE_ALL, BROADCAST: release first, then wake every waiter of the key */
inline release_then_wake(k) {
	word[KWORD(k)] = word[KWORD(k)] & ~KBIT(k);   /* fetch_and, release */
	bucket_lock();
	atomic { collect(k, true); tidy(KWORD(k)); bl = 0 };
	signal_chosen(WOKEN)
}

#ifdef FAIR
/* unlock_wake_one under FWAIT_HANDOFF_FAIR: the bit is still ours and W was
 * seen; decide under the bucket lock */
inline unlock_fair(k) {
	bucket_lock();
	atomic {
		first_exclusive(k);
		if
		:: w < NT && !aged[w] -> aged[w] = true   /* fair_ns has passed */
		:: true -> skip                           /* or not yet */
		fi;
		/* The hold vote (fw_holds_long) goes both ways with the holds
		 * measured, so it is a fresh choice at every unlock: any
		 * unlock may hand over even to a waiter that is not due. */
		if
		:: w < NT -> longh = true
		:: true -> skip
		fi;
		if
		:: w < NT && (steals[w] >= MAXS || aged[w] || longh) ->
			/* due: hand over, the bit stays set */
			assert_fifo(w, k);
			unlink(w); chosen = 1 << w; tidy(KWORD(k)); bl = 0;
#ifdef BROKEN_FAIR_VOTE
			if
			:: !(steals[w] >= MAXS || aged[w]) ->
				word[KWORD(k)] = word[KWORD(k)] & ~KBIT(k)
			:: else -> skip
			fi;
#endif
			hand = true
		:: else ->
			/* release: wake the oldest exclusive waiter and every
			 * bit_wait waiter of k; one RMW clears the bit, and W
			 * if nobody of the word stays queued */
#ifdef BROKEN_FAIR_NOWAKE
			skip;
#else
			if
			:: w < NT -> assert_fifo(w, k); unlink(w); chosen = 1 << w
			:: else -> skip
			fi;
			collect(k, false);
#endif
			word[KWORD(k)] = word[KWORD(k)] & ~KBIT(k);
			tidy(KWORD(k)); bl = 0;
			hand = false
		fi;
		w = 0; longh = false
	};
	if
	:: hand -> hand = false; signal_chosen(HANDED)
	:: else -> signal_chosen(WOKEN)
	fi
}
#endif

/* ---- fwait_bit_unlock --------------------------------------------------- */

inline bit_unlock(k) {
	assert(owner[k] == me + 1); owner[k] = 0;
#ifdef BROKEN_UNLOCK
	old = word[KWORD(k)];
	if
	:: !(old & WMASK) -> word[KWORD(k)] = old & ~KBIT(k); got = true
	:: else -> got = false
	fi;
#else
	atomic {
		old = word[KWORD(k)];
		assert(old & KBIT(k));
		if
		:: !(old & WMASK) -> word[KWORD(k)] = old & ~KBIT(k); got = true
		:: else -> got = false
		fi
	};
#endif
	old = 0;
	if
	:: got -> got = false
	:: else ->
#if defined(WAKE_ALL) || defined(BROADCAST)
		release_then_wake(k)
#elif defined(FAIR)
		unlock_fair(k)
#else
		unlock_handoff(k)
#endif
	fi
}

/* ---- fwait_bit_lock: res = OK (owned) or TIMEDOUT ----------------------- */

inline bit_lock(k) {
	/* fwait_bit_trylock: fetch_or */
	atomic { old = word[KWORD(k)]; word[KWORD(k)] = old | KBIT(k); got = !(old & KBIT(k)); old = 0 };
	if
	:: got -> got = false; res = OK
	:: else ->
		atomic { bl == 0 -> bl = me + 1; alive[me] = true; first = true };
		do
		:: atomic {
			/* take_or_announce, then queue and drop bl */
#ifdef BROKEN_RECHECK
			if
			:: !BITSET(k) && !first -> word[KWORD(k)] = word[KWORD(k)] | KBIT(k); got = true
			:: else -> word[KWORD(k)] = word[KWORD(k)] | WMASK; got = false
			fi;
#elif defined(BROKEN_FAIR_REQUEUE)
			if
			:: !BITSET(k) -> word[KWORD(k)] = word[KWORD(k)] | KBIT(k); got = true
			:: BITSET(k) && first -> word[KWORD(k)] = word[KWORD(k)] | WMASK; got = false
			:: BITSET(k) && !first -> got = false   /* W not re-announced */
			fi;
#else
			if
			:: !BITSET(k) -> word[KWORD(k)] = word[KWORD(k)] | KBIT(k); got = true
			:: else -> word[KWORD(k)] = word[KWORD(k)] | WMASK; got = false
			fi;
#endif
#ifdef FAIR
			if
			:: got -> bl = 0
			:: !got && first -> enqueue(k, true); bl = 0
			:: !got && !first ->
				/* a woken loser: back to the head, one race
				 * lost; bounded bypass */
				steals[me]++;
				assert(steals[me] <= MAXS);
				enqueue_head(k, true); bl = 0
			fi;
#else
			if
			:: got -> bl = 0
			:: else -> enqueue(k, true); bl = 0
			fi;
#endif
			first = false
		   };
		   if
		   :: got -> got = false; res = OK; break
		   :: else -> skip
		   fi;
		   sleep(k);
		   if
		   :: res == TIMEDOUT ->
			if
			:: raced && st == HANDED ->
#ifdef BROKEN_RACE
				/* drop it: clear the bit, wake nobody */
				word[KWORD(k)] = word[KWORD(k)] & ~KBIT(k)
#else
				/* pass the handoff on; still -ETIMEDOUT */
				critical_section(k); bit_unlock(k)
#endif
			:: raced && st == WOKEN ->
				/* a plain wake raced the deadline: report what
				 * is true now, i.e. try the bit once */
				atomic {
					old = word[KWORD(k)]; word[KWORD(k)] = old | KBIT(k);
					if :: !(old & KBIT(k)) -> res = OK :: else -> skip fi;
					old = 0
				}
			:: else -> skip
			fi;
			break
		   :: res == OK && st == HANDED ->
			assert(BITSET(k)); break
		   :: else ->
			/* WOKEN (release-first policies): race again */
			bucket_lock()
		   fi
		od;
#ifdef FAIR
		atomic { alive[me] = false; st = 0; raced = false; steals[me] = 0; aged[me] = false }
#else
		atomic { alive[me] = false; st = 0; raced = false }
#endif
	fi
}

/* ---- fwait_bit_wait: res = OK (seen clear) or TIMEDOUT ------------------ */

inline bit_wait(k) {
	res = OK;
	if
	:: BITSET(k) ->
		atomic { bl == 0 -> bl = me + 1; alive[me] = true };
		do
		:: atomic {
			/* clear_or_announce */
			if
			:: !BITSET(k) -> bl = 0; got = true
			:: else -> word[KWORD(k)] = word[KWORD(k)] | WMASK;
				enqueue(k, false); bl = 0; got = false
			fi
		   };
		   if
		   :: got -> got = false; break
		   :: else -> skip
		   fi;
		   sleep(k);
		   if
		   :: res == TIMEDOUT && !raced -> break
		   :: res == TIMEDOUT && raced ->
			if :: !BITSET(k) -> res = OK :: else -> skip fi;
			break
		   :: else -> bucket_lock()     /* WOKEN: re-check */
		   fi
		od;
		atomic { alive[me] = false; st = 0; raced = false }
	:: else -> skip
	fi
}

/* ---- event bits --------------------------------------------------------- */

inline bit_set(k) {
	word[KWORD(k)] = word[KWORD(k)] | KBIT(k)
}

inline bit_clear(k) {
	atomic { old = word[KWORD(k)]; word[KWORD(k)] = old & ~KBIT(k); got = (old & WMASK) != 0; old = 0 };
	if
	:: got ->
		got = false;
		bucket_lock();
		atomic { collect(k, true); tidy(KWORD(k)); bl = 0 };
		signal_chosen(WOKEN)
	:: else -> skip
	fi
}


/* ---- generic keyed waits (keyed.c), -DKEYED ------------------------------ */
#ifdef KEYED
/* fwait_wake(GKEY, 1) (FWAIT_ALL under WAKE_ALL): every non-exclusive
 * waiter of the key and up to nb exclusive ones, oldest first; BROADCAST:
 * the whole bucket */
inline gcollect() {
	c = 0;
#ifdef WAKE_ALL
	nb = NT;
#else
	nb = 1;
#endif
	do
	:: c < qlen ->
		w = q[c];
		if
#ifdef BROADCAST
		:: true ->
#else
		:: wkey[w] == GKEY && (!wexcl[w] || nb > 0) ->
			if :: wexcl[w] -> nb-- :: else -> skip fi;
#endif
			unlink(w); chosen = chosen | (1 << w)
		:: else -> c++
		fi
	:: else -> break
	od;
	c = 0; w = 0; nb = 0
}

/* fwait_wake skips the bucket when nobody is inside fwait_wait on it
 * (nkw == 0; not under BROADCAST).  The model is sequentially consistent:
 * the read of nkw after tokens++ is what fwait_wake's seq_cst fence gives,
 * and BROKEN_KEYED_COUNT shows what the fences prevent. */
inline key_produce() {
	atomic { tokens++ };
	key_wake()
}

/* fwait_wake(GKEY, 1) after the condition changed (or to pass a wake on) */
inline key_wake() {
#ifndef BROADCAST
	if
	:: nkw == 0 -> skip
	:: else ->
#endif
		bucket_lock();
		atomic { gcollect(); bl = 0 };
		signal_chosen(WOKEN)
#ifndef BROADCAST
	fi
#endif
}

/* fw_sleep for a generic waiter: a timeout that finds itself queued
 * unlinks itself and takes one last look under the lock (keyed.c) */
inline gsleep() {
	raced = false; timed = false; res = OK;
	if
	:: atomic { wstate[me] != WAITING -> st = wstate[me]; wstate[me] = WAITING }
	:: atomic { tmo > 0 && wstate[me] == WAITING -> tmo-- };
		bucket_lock();
		atomic {
			if
			:: queued[me] ->
				unlink(me);
				if :: tokens > 0 -> tokens-- :: else -> res = TIMEDOUT fi;
				timed = true; nkw--; bl = 0
			:: else -> bl = 0
			fi
		};
		if
		:: !timed ->
			atomic { wstate[me] != WAITING -> st = wstate[me]; wstate[me] = WAITING };
			raced = true
		:: else -> skip
		fi
	fi
}

/* fwait_wait(GKEY, FWAIT_EXCLUSIVE, take a token) */
inline key_consume() {
#ifdef BROKEN_KEYED_COUNT
	/* broken: the count is raised after the first ready() (as if the
	 * waiter's fence were missing and its read of the condition passed
	 * its increment), so a wake can read 0 and skip a waiter that sleeps */
	atomic { bl == 0 -> bl = me + 1; alive[me] = true; first = true };
#else
	atomic { bl == 0 -> bl = me + 1; alive[me] = true; first = true; nkw++ };
#endif
#ifdef BROKEN_KEYED_CHECK
	/* broken: ready() is evaluated before the bucket lock is taken */
	bl = 0;
	got = tokens > 0;
	bucket_lock();
#endif
	do
	:: atomic {
		if
#ifdef BROKEN_KEYED_CHECK
		:: got -> tokens--; bl = 0
		:: else -> enqueue(GKEY, true); bl = 0; got = false
#elif defined(FAIR)
		:: tokens > 0 -> tokens--; nkw--; bl = 0; got = true
		:: tokens == 0 && first -> enqueue(GKEY, true); bl = 0; got = false
		:: tokens == 0 && !first -> enqueue_head(GKEY, true); bl = 0; got = false
#else
		:: tokens > 0 -> tokens--; nkw--; bl = 0; got = true
		:: tokens == 0 -> enqueue(GKEY, true); bl = 0; got = false
#endif
#ifdef ABANDON
		/* woken, ready() says "abandon" (the caller's optimistic
		 * restart: the version changed): leave without the token,
		 * whether one is there or not, at most once per thread */
		:: !first && aban > 0 -> aban--; nkw--; bl = 0; got = false; abandoned = true
#endif
		fi
	   };
#ifdef ABANDON
	   if
	   :: abandoned ->
		abandoned = false;
#ifndef BROKEN_ABANDON
		/* pass the exclusive wake on: the documented fwait_wake(key,
		 * 1) after an abandoned wait, so the next waiter looks */
		key_wake();
#endif
		res = TIMEDOUT; break
	   :: else -> skip
	   fi;
#endif
#ifdef BROKEN_KEYED_COUNT
	   if :: first -> atomic { nkw++ } :: else -> skip fi;
#endif
	   first = false;
	   if
	   :: got -> got = false; res = OK; break
	   :: else -> skip
	   fi;
	   gsleep();
	   if
	   :: timed -> break
	   :: raced ->
		/* woken as the deadline passed: if the condition does not
		 * hold for us, pass the exclusive wake on */
		bucket_lock();
		atomic {
			if
			:: tokens > 0 -> tokens--; res = OK
			:: else ->
				res = TIMEDOUT;
				first_exclusive(GKEY);
				if :: w < NT -> unlink(w); chosen = 1 << w :: else -> skip fi;
				w = 0
			fi;
			nkw--; bl = 0
		};
		signal_chosen(WOKEN);
		break
	   :: else ->
		/* woken: look again */
#ifdef BROKEN_KEYED_CHECK
		got = tokens > 0;
#endif
		bucket_lock()
	   fi
	od;
	atomic { alive[me] = false; st = 0; raced = false; timed = false }
}
#endif

inline critical_section(k) {
	atomic { assert(owner[k] == 0 && BITSET(k)); owner[k] = me + 1 }
}

inline lock_unlock(k) {
	bit_lock(k);
	if :: res == OK -> critical_section(k); bit_unlock(k) :: else -> skip fi
}

proctype thread(byte me)
{
	byte i, j, c, w, chosen, old, res, k, n, st, handw, nb;
	bool got, raced, hand, first, timed, abandoned;
	byte tmo = TMO;
#ifdef ABANDON
	byte aban = 1;         /* abandoned waits each thread may make */
#endif

	do
	:: n < NOPS ->
		if :: k = 0 :: k = 1 fi;
#if defined(KEYED) && defined(ABANDON)
		/* a lock made of a keyed wait: the one token is the lock being
		 * free; ready() takes it, the release puts it back and wakes
		 * one (fwait_wake(key, 1)).  An abandoned wait takes nothing
		 * and releases nothing, so the wake it got must go on. */
		key_consume();
		if :: res == OK -> key_produce() :: else -> skip fi;
#elif defined(KEYED)
		/* thread 0 produces two tokens per operation; threads 1 and 2
		 * consume one, then consume another or lock key 0 (bit waiters
		 * and generic waiters share the bucket); supply >= demand */
		if
		:: me == 0 -> key_produce(); key_produce()
		:: me != 0 && n == 0 -> key_consume()
		:: me != 0 && n > 0 -> key_consume()
		:: me != 0 && n > 0 -> lock_unlock(0)
		fi;
#elif defined(EVENTS)
		if
		:: me == 0 && k == 1 -> bit_set(1); bit_clear(1)
		:: me != 0 && k == 1 -> bit_wait(1)
		:: k == 0 -> lock_unlock(0)
		fi;
#else
		if
		:: lock_unlock(k)
		:: bit_wait(k)
		fi;
#endif
		atomic { n++; k = 0; res = 0 }
	:: else -> break
	od;
	finished++
}

/* Invariants of every reachable state. */
active proctype monitor()
{
#ifndef NO_MONITOR
end:	do
	:: atomic {
		/* a queued waiter always finds W set on its word, so no
		 * release that skips the table can strand it */
		!QWOK(0) || !QWOK(1) || !QWOK(2) ->
		assert(QWOK(0) && QWOK(1) && QWOK(2)) }
#if !defined(WAKE_ALL) && !defined(FAIR) && !defined(BROADCAST)
	:: atomic {
		/* strict handoff: a queued exclusive waiter's bit is never
		 * clear (no barging, no dropped handoff) */
		QEC(0) || QEC(1) || QEC(2) ->
		assert(!QEC(0) && !QEC(1) && !QEC(2)) }
#endif
#if !defined(BROADCAST)
	:: atomic {
		/* with the bucket free, W is exact (BROADCAST may leave
		 * another word's W stale, which the design allows) */
		!WEXACT -> assert(WEXACT) }
#endif
	:: atomic {
		finished == NT -> break }
	od;
#else
	finished == NT;
#endif
	/* the final state: nothing held, nobody queued */
	assert(qlen == 0 && owner[0] == 0 && owner[1] == 0 && bl == 0);
#ifdef KEYED
	assert(nkw == 0);
#endif
#ifdef BROADCAST
	assert((word[0] & ~WMASK) == 0 && (word[1] & ~WMASK) == 0)
#else
	assert(word[0] == 0 && word[1] == 0)
#endif
}

init
{
	atomic {
#if defined(KEYED) && defined(ABANDON)
		tokens = 1; /* the lock starts free */
#endif
		run thread(0); run thread(1); run thread(2)
	}
}

/* A lost wakeup: a waiter queued, from some point on forever, on a clear
 * bit.  Checked with ./pan -a (acceptance cycles; runs end by stuttering). */
#define LOST (QC(0) || QC(1) || QC(2))
ltl no_lost_wakeup { [] <> !LOST }
