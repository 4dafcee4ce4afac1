/*
 * version_lock.hpp - a 64-bit version lock (hybrid latch) on fwait keyed
 * waits: the template for an engine whose pages carry their own lock word.
 *
 * Design note
 * -----------
 * One std::atomic<uint64_t> per object, nothing else (no waiter array, no
 * per-object mutex): bit 0 is "held exclusive", bits 1..63 a version that
 * every exclusive release bumps, as LeanStore's hybrid latch and vmcache's
 * page state do.  Optimistic readers take no lock and write nothing: they
 * read the version, read the object, and validate that the version did not
 * move (else they restart).  Writers take the lock exclusively.
 *
 * Waiting is fwait's keyed wait on the word's address, in the process's
 * (or the engine's) one wait table, instead of spinning:
 *   - a writer that finds the lock held spins briefly (spin_rounds pause
 *     instructions, a few microseconds), then yields the CPU a few times
 *     (yield_rounds sched_yield calls: on an oversubscribed machine the
 *     holder may be the thread waiting to run, as libstdc++'s
 *     std::atomic::wait also assumes), more rounds of yields while the
 *     lock keeps passing at least once per yield (short holds it only
 *     lost the races for), then sleeps as an exclusive
 *     waiter (FWAIT_EXCLUSIVE) until the word reads unlocked, then tries
 *     its CAS again; FWAIT_PRECHECK looks once without the bucket lock, so
 *     a lock freed meanwhile costs no lock at all;
 *   - a reader that finds it held sleeps as a shared waiter until it reads
 *     unlocked;
 *   - unlock stores the new version with a release store and calls
 *     fwait_wake(table, word, 1): every sleeping reader and one writer
 *     (the oldest) wake.  When nobody waits in the word's bucket,
 *     fwait_wake returns without its lock after one fence and one load:
 *     the waiters indicator is fwait's, and it orders the caller's store
 *     for it (fwait.h: a relaxed store would do), so the lock needs no
 *     side array of waiter counts and no fence of its own for the wait.
 *   - a writer woken for a free lock whose CAS then loses to a running
 *     thread simply waits again: the winner's unlock wakes the next one,
 *     so no wake is lost.  A caller that gives up after being woken
 *     (an optimistic restart elsewhere) must pass the wake on with
 *     fwait_wake(table, word, 1) (fwait.h); this lock never gives up.
 *
 * Memory order of the optimistic read (a seqlock; H.-J. Boehm, "Can
 * seqlocks get along with programming language memory models?", 2012).
 * The protected data is read and written through guarded<T> (below):
 * release stores by the writer, acquire loads by the reader, plain moves
 * on x86.  If a reader's load sees any store of a writer, that store's
 * release synchronises with the load's acquire, so the writer's lock CAS
 * (before the store) happens before the reader's second load of the word
 * (after the load): that load sees the lock or a later version, validation
 * fails and the read restarts.  If it sees no such store, it read the
 * state before that writer, consistently.  So there is no fence anywhere,
 * neither for the wait nor for the seqlock (a racing plain read would be
 * undefined behaviour in C++, hence atomics for the data too).
 */
#ifndef FWAIT_EXAMPLE_VERSION_LOCK_HPP
#define FWAIT_EXAMPLE_VERSION_LOCK_HPP

#include <atomic>
#include <cstdint>
#include <thread>

#include "fwait/fwait.h"

namespace fwait {
namespace example {

class version_lock {
public:
	explicit version_lock(fwait_table *table) noexcept : table_(table), word_(0) {}
	version_lock(const version_lock &) = delete;
	version_lock &operator=(const version_lock &) = delete;

	/* ---- exclusive ---- */

	/* Take the lock; returns 0, or fwait_wait's negative errno. */
	int lock() noexcept
	{
		unsigned spins = 0, yields = 0;
		uint64_t yields_from = 0; /* the version when this round of yields began */
		for (;;) {
			uint64_t v = word_.load(std::memory_order_relaxed);
			/* acquire: pairs with unlock's release store, so the
			 * last writer's changes are visible to us. */
			if (!(v & locked)) {
				if (word_.compare_exchange_weak(v, v | locked, std::memory_order_acquire,
								std::memory_order_relaxed))
					return 0;
				continue;
			}
			/* Spin: a short hold ends within a few microseconds,
			 * cheaper to wait out running than asleep. */
			if (spins < spin_rounds) {
				spins++;
				cpu_relax();
				continue;
			}
			/* Then yield: on an oversubscribed machine the holder
			 * may be the thread waiting to run. */
			if (yields == 0)
				yields_from = v >> 1;
			/* A round of yields spent while the lock kept passing
			 * between running threads (at least one release per
			 * yield: the version counts them) buys another round:
			 * the holds are short and we only lost the races, so
			 * sleeping would cost more than it saves.  A lock that
			 * stayed with one holder (a sleeping or preempted one)
			 * advanced less and we park.  The rate, not a count of
			 * changes, is what tells the two apart: under a
			 * sleeping hold with many yielders each yield is long
			 * enough to see a release, and renewing on any change
			 * kept all of them yielding (docs/benchmarks.md). */
			if (yields == yield_rounds && (v >> 1) - yields_from >= yield_rounds) {
				yields = 0;
				yields_from = v >> 1;
			}
			if (yields < yield_rounds) {
				yields++;
				std::this_thread::yield();
				continue;
			}
			int rc = fwait_wait(table_, &word_, FWAIT_EXCLUSIVE | FWAIT_PRECHECK,
					    unlocked, this, nullptr);
			if (rc < 0)
				return rc;
		}
	}

	bool try_lock() noexcept
	{
		uint64_t v = word_.load(std::memory_order_relaxed);
		return !(v & locked) && word_.compare_exchange_strong(v, v | locked,
				std::memory_order_acquire, std::memory_order_relaxed);
	}

	/* Release and bump the version: every optimistic read that overlapped
	 * this critical section fails its validation. */
	void unlock() noexcept
	{
		uint64_t v = word_.load(std::memory_order_relaxed);
		/* release: publishes the critical section to the next locker's
		 * acquire CAS and to readers' version loads. */
		word_.store((v & ~locked) + version_one, std::memory_order_release);
		/* One writer and every reader; no lock taken if nobody waits. */
		fwait_wake(table_, &word_, 1);
	}

	/* ---- optimistic ---- */

	/* A version to read under: waits (sleeping) while a writer holds the
	 * lock.  Then read the object and call validate(v). */
	uint64_t read_begin() noexcept
	{
		for (;;) {
			/* acquire: pairs with unlock's release store. */
			uint64_t v = word_.load(std::memory_order_acquire);
			if (!(v & locked))
				return v;
			if (fwait_wait(table_, &word_, FWAIT_PRECHECK, unlocked, this, nullptr) < 0)
				return v; /* cannot happen without a deadline; validate fails */
		}
	}

	/* True if no writer ran since read_begin returned v: what was read in
	 * between (through guarded<T>'s acquire loads, which keep this load
	 * after them) is a consistent snapshot.  False: restart the read. */
	bool validate(uint64_t v) const noexcept
	{
		return word_.load(std::memory_order_relaxed) == v && !(v & locked);
	}

	/* The word, for tests and reports. */
	uint64_t raw() const noexcept { return word_.load(std::memory_order_relaxed); }

private:
	static constexpr uint64_t locked = 1;
	static constexpr uint64_t version_one = 2;
	/* About 1-3 us of pause instructions before a writer yields, then
	 * rounds of yield_rounds yields before it parks, renewed while the
	 * lock passes at least once per yield.  The yields cut parks at a
	 * 200 ns hold by 5-30x and CPU per acquisition by a third or more;
	 * the renewal takes the parks left at that hold to zero, like
	 * std::atomic::wait's, without spinning through a 50 us sleeping
	 * hold (docs/benchmarks.md, "The version-lock example"). */
	static constexpr unsigned spin_rounds = 64;
	static constexpr unsigned yield_rounds = 16;

	static void cpu_relax() noexcept
	{
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#elif defined(__aarch64__)
		__asm__ __volatile__("yield");
#endif
	}

	/* ready(): under the bucket lock (or, with FWAIT_PRECHECK, once
	 * without it): the lock reads free.  Only a look, so it is safe to run
	 * unlocked; the CAS that takes the lock is in lock(). */
	static bool unlocked(void *arg)
	{
		auto *self = static_cast<version_lock *>(arg);
		return !(self->word_.load(std::memory_order_relaxed) & locked);
	}

	fwait_table *table_;
	std::atomic<uint64_t> word_;
};

/* A word-sized field of an object under a version_lock, read optimistically:
 * acquire loads and release stores (plain moves on x86), which give the
 * seqlock its order without a fence (design note) and no data race. */
template <class T> class guarded {
public:
	guarded() noexcept : v_(T()) {}
	/* acquire: a later validate's load of the word stays after it. */
	T load() const noexcept { return v_.load(std::memory_order_acquire); }
	/* release: the writer's lock CAS is ordered before it. */
	void store(T v) noexcept { v_.store(v, std::memory_order_release); }

private:
	std::atomic<T> v_;
};

} // namespace example
} // namespace fwait

#endif /* FWAIT_EXAMPLE_VERSION_LOCK_HPP */
