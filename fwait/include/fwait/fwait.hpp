/* SPDX-License-Identifier: MIT */
/*
 * fwait.hpp - C++ helpers over fwait.h (C++11 and later).
 *
 * Header-only, and only a thin layer: each helper makes the C calls a C
 * caller would make, and guarantees exactly what those calls guarantee
 * (ordering, handoff, fairness: see fwait.h and docs/design.md).  Nothing
 * here throws or allocates, so it builds with -fno-exceptions: a failed
 * call is reported as its negative errno, as the C API returns it.
 *
 * What it holds:
 *   - basic_bit_lock_guard (bit_lock_guard, bit64_lock_guard): a scoped
 *     lock bit on a std::atomic<uint32_t> (fwait_atomic_u32, see fwait.h;
 *     bit 31 is fwait's) or std::atomic<uint64_t> (fwait_atomic_u64, the
 *     fwait_bit64_* calls; bit 63 is fwait's), which the table keys by its
 *     address;
 *   - wait, wait_ex, wake_ex, spin: the keyed waits with a lambda (any
 *     callable) as the ready() predicate or the wake callback, called
 *     through a static trampoline that gets the callable's address as the
 *     C call's void *arg (no copy, no allocation);
 *   - until (C++20 coroutines only): co_await a keyed wait without
 *     blocking the thread, over fwait_wait_async, the awaitable's frame
 *     slot holding the waiter record;
 *   - hybrid_latch, a handle on a caller's 64-bit latch word (it does not
 *     own the word), with its guards hlatch_guard and hlatch_shared_guard
 *     and the retry loop optimistic_read.
 * Every lock here is the table's or the caller's word's; the helpers add
 * no state of their own that threads share, so they need no lock.
 */
#ifndef FWAIT_FWAIT_HPP
#define FWAIT_FWAIT_HPP

#ifndef __cplusplus
#error "fwait/fwait.hpp is a C++ header; C callers include fwait/fwait.h"
#endif

#include <atomic>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>

/* fwait::until, the C++20 awaitable: only where the compiler has
 * coroutines (C++20 and a <coroutine> header). */
#if defined(__cpp_impl_coroutine) && __cpp_impl_coroutine >= 201902L && defined(__has_include)
#if __has_include(<coroutine>)
#include <coroutine>
#define FWAIT_HAVE_COROUTINES 1
#endif
#endif

#include "fwait/fwait.h"

namespace fwait {

namespace detail {
/* The C calls by word width, so one guard serves both. */
inline int bit_lock(fwait_table *t, fwait_atomic_u32 *w, unsigned bit,
		    const timespec *deadline) noexcept
{
	return fwait_bit_lock(t, w, bit, deadline);
}
inline int bit_lock(fwait_table *t, fwait_atomic_u64 *w, unsigned bit,
		    const timespec *deadline) noexcept
{
	return fwait_bit64_lock(t, w, bit, deadline);
}
inline int bit_unlock(fwait_table *t, fwait_atomic_u32 *w, unsigned bit) noexcept
{
	return fwait_bit_unlock(t, w, bit);
}
inline int bit_unlock(fwait_table *t, fwait_atomic_u64 *w, unsigned bit) noexcept
{
	return fwait_bit64_unlock(t, w, bit);
}
} // namespace detail

/*
 * Scoped lock bit, as std::lock_guard: the constructor takes (word, bit)
 * with fwait_bit_lock (sleeping as an exclusive waiter, until deadline if
 * one is given), the destructor releases it with fwait_bit_unlock, which
 * under FWAIT_WAKE_ONE wakes or hands it to the oldest exclusive waiter.
 * The lock orders like the C calls: taking it is an acquire, releasing it a
 * release.  bit64_lock_guard is the same on a 64-bit word (fwait_bit64_lock
 * and fwait_bit64_unlock, bits 0..62).
 *
 *   fwait::bit_lock_guard g(table, word, 0);
 *   if (!g) return g.error();  // -EINVAL, or -ETIMEDOUT with a deadline
 *   ... the bit is held ...
 *
 * Movable, not copyable: a moved-from guard holds nothing and its
 * destructor does nothing.  The table and the word must outlive it.
 */
/*
 * Owns a wait table: create() is fwait_table_create into it (what it
 * owned before is destroyed first), the destructor fwait_table_destroy.
 * The table must outlive every waiter and every handle on it (a latch, a
 * guard).  Movable (the moved-from owns nothing), not copyable.
 *
 *   fwait::table t;
 *   if (int rc = t.create()) return rc;
 *   fwait::bit_lock_guard g(t.get(), word, 0);
 */
class table {
public:
	table() noexcept : t_(nullptr) {}
	~table() { reset(); }
	table(const table &) = delete;
	table &operator=(const table &) = delete;
	table(table &&o) noexcept : t_(o.t_) { o.t_ = nullptr; }
	table &operator=(table &&o) noexcept
	{
		if (this != &o) {
			reset();
			t_ = o.t_;
			o.t_ = nullptr;
		}
		return *this;
	}

	/* fwait_table_create: 0 or its negative errno (then this owns what
	 * it owned before). */
	int create(const fwait_config *cfg = nullptr) noexcept
	{
		fwait_table *t = nullptr;
		int rc = fwait_table_create(&t, cfg);
		if (rc == 0) {
			reset();
			t_ = t;
		}
		return rc;
	}
	/* Destroy the table now, if any. */
	void reset() noexcept
	{
		if (t_ != nullptr)
			fwait_table_destroy(t_);
		t_ = nullptr;
	}
	fwait_table *get() const noexcept { return t_; }
	explicit operator bool() const noexcept { return t_ != nullptr; }

private:
	fwait_table *t_;
};

template <class Word> class basic_bit_lock_guard {
public:
	basic_bit_lock_guard(fwait_table *table, Word &word, unsigned bit,
		       const timespec *deadline = nullptr) noexcept
		: table_(table), word_(&word), bit_(bit),
		  error_(detail::bit_lock(table, &word, bit, deadline)),
		  owns_(error_ == 0)
	{
	}

	~basic_bit_lock_guard() { unlock(); }

	basic_bit_lock_guard(const basic_bit_lock_guard &) = delete;
	basic_bit_lock_guard &operator=(const basic_bit_lock_guard &) = delete;

	/* The bit (if held) moves to the new guard; other holds nothing. */
	basic_bit_lock_guard(basic_bit_lock_guard &&other) noexcept
		: table_(other.table_), word_(other.word_), bit_(other.bit_),
		  error_(other.error_), owns_(other.owns_)
	{
		other.owns_ = false;
	}
	/* Releases the bit this guard holds, then takes other's. */
	basic_bit_lock_guard &operator=(basic_bit_lock_guard &&other) noexcept
	{
		if (this != &other) {
			unlock();
			table_ = other.table_;
			word_ = other.word_;
			bit_ = other.bit_;
			error_ = other.error_;
			owns_ = other.owns_;
			other.owns_ = false;
		}
		return *this;
	}

	/* What fwait_bit_lock returned: 0 if the bit was taken. */
	int error() const noexcept { return error_; }
	/* Whether this guard holds the bit now (taken, not yet unlocked). */
	bool owns_lock() const noexcept { return owns_; }
	explicit operator bool() const noexcept { return owns_; }

	/* Release early; the destructor then does nothing.  Returns what
	 * fwait_bit_unlock returns (-EPERM if someone cleared the bit behind
	 * the guard's back), or 0 if the bit was not held by this guard. */
	int unlock() noexcept
	{
		if (!owns_)
			return 0;
		owns_ = false;
		return detail::bit_unlock(table_, word_, bit_);
	}

private:
	fwait_table *table_;
	Word *word_;
	unsigned bit_;
	int error_;
	bool owns_;
};

using bit_lock_guard = basic_bit_lock_guard<fwait_atomic_u32>;
using bit64_lock_guard = basic_bit_lock_guard<fwait_atomic_u64>;

/* ---- Keyed waits with a lambda ------------------------------------------ */

namespace detail {
/* A callable's address as the C calls' void *arg.  The const is cast away
 * only for the trip through void *: the trampoline casts arg back to F *,
 * F const-qualified when the callable was, so nothing writes through it
 * that the caller did not allow. */
template <class F> void *arg_of(F &f) noexcept
{
	return const_cast<void *>(static_cast<const volatile void *>(std::addressof(f)));
}
/* noexcept: they run inside C code, ready() and the wake callback under
 * a bucket lock; an exception unwinding through them would leave that
 * lock held and a waiter's record linked, so it terminates instead. */
template <class F> bool ready_trampoline(void *arg) noexcept
{
	return (*static_cast<F *>(arg))();
}
template <class F> uint64_t wake_trampoline(const fwait_wake_report *r, void *arg) noexcept
{
	return (*static_cast<F *>(arg))(*r);
}
template <class F> struct is_predicate
	: std::is_convertible<decltype(std::declval<F &>()()), bool> {};
template <class F> struct is_wake_callback
	: std::is_convertible<decltype(std::declval<F &>()(std::declval<const fwait_wake_report &>())),
			      uint64_t> {};
} // namespace detail

/*
 * fwait_wait with a callable as ready(): pred is any callable `bool()` (a
 * lambda with captures, a functor), taken by reference and called in
 * place (never copied), so it may be a temporary or a local of the
 * caller's frame.  Sleep on key until pred() holds: 0 once it returned
 * true, -ETIMEDOUT (deadline: absolute CLOCK_MONOTONIC; nullptr waits
 * forever), or -EINVAL (NULL t/key, unknown flags).  flags: FWAIT_EXCLUSIVE,
 * FWAIT_PRECHECK.
 * pred() follows fwait_ready_fn's rules: it runs under the bucket lock (the
 * first call without it, with FWAIT_PRECHECK), any number of times; keep it
 * to loads and RMWs of the caller's own atomics (a call that returns true
 * may take what it waited for, as a lock's CAS does; a false one changes
 * nothing, or only a waiters flag of the caller's); no call into the
 * table, no blocking.  An exception escaping it terminates.
 * Ordering, fairness and the pass-on rule for an exclusive waiter that
 * leaves after a wake: as fwait_wait.
 *
 *   int rc = fwait::wait(t, &w, FWAIT_EXCLUSIVE, [&] { return w.load() >= n; });
 */
template <class Pred>
int wait(fwait_table *t, const void *key, unsigned flags, Pred &&pred,
	 const timespec *deadline = nullptr) noexcept
{
	typedef typename std::remove_reference<Pred>::type P;
	static_assert(detail::is_predicate<P>::value, "fwait::wait: pred must be callable as bool()");
	return fwait_wait(t, key, flags, &detail::ready_trampoline<P>, detail::arg_of(pred),
			  deadline);
}

/*
 * fwait_wait_ex with a callable as ready(): as fwait::wait, plus flag
 * FWAIT_SPIN (pred() then also runs unlocked, for up to the table's
 * spin_ns), a wake's token ending the wait at once (pred() not called
 * again), and how it returned in *out (which may be nullptr): how,
 * sleeps, and the token (FWAIT_HOW_WOKEN; else 0).  0, -ETIMEDOUT or
 * -EINVAL.  Ordering as fwait_wait; a token's return is an acquire of the
 * waker's callback (as fwait_wait_ex).  A waiter that returns
 * FWAIT_HOW_WOKEN and then leaves without taking what it was woken for
 * passes the wake on: fwait::wake_ex or fwait_wake_ex with
 * FWAIT_WAKE_EXCLUSIVE_ONLY, nr 1.
 */
template <class Pred>
int wait_ex(fwait_table *t, const void *key, unsigned flags, Pred &&pred,
	    const timespec *deadline, fwait_wait_result *out) noexcept
{
	typedef typename std::remove_reference<Pred>::type P;
	static_assert(detail::is_predicate<P>::value,
		      "fwait::wait_ex: pred must be callable as bool()");
	return fwait_wait_ex(t, key, flags, &detail::ready_trampoline<P>, detail::arg_of(pred),
			     deadline, out);
}

/*
 * fwait_wake_ex with a callable as the callback: cb is any callable
 * `uint64_t(const fwait_wake_report &)`, taken by reference.  Wakes every
 * shared waiter of key and up to nr exclusive ones (FWAIT_WAKE_EXCLUSIVE_ONLY:
 * the exclusive ones only), and calls cb once, under the bucket lock,
 * after the choice and before anyone chosen runs (also when nobody was
 * chosen): the report says how many were chosen, whether waiters of key
 * remain (exact) and whether the oldest chosen is due a handoff; cb's
 * return value is the token every chosen waiter's fwait::wait_ex receives
 * (0: none, they re-check pred()).  cb follows fwait_wake_fn's rules (the
 * caller's own atomics only, no call into the table, no blocking); an
 * exception escaping it terminates.  Always takes the bucket lock.
 * Returns the number woken (>= 0) or -EINVAL.  Ordering: as fwait_wake;
 * what cb writes is seen by every later pred() and by the woken waiters'
 * returns.
 */
template <class Cb>
int wake_ex(fwait_table *t, const void *key, uint32_t nr, unsigned flags, Cb &&cb) noexcept
{
	typedef typename std::remove_reference<Cb>::type C;
	static_assert(detail::is_wake_callback<C>::value,
		      "fwait::wake_ex: cb must be callable as uint64_t(const fwait_wake_report &)");
	return fwait_wake_ex(t, key, nr, flags, &detail::wake_trampoline<C>, detail::arg_of(cb));
}

/*
 * fwait_spin with a callable: calls pred() without any lock, pausing
 * between calls, until it returns true (then true) or the table's spin_ns
 * has passed, then once after each of a few sched_yield() calls (false
 * if it never held); once on a table that does not spin.  pred()
 * must be safe to run unlocked (atomics only).  Orders what pred()'s own
 * loads order.
 */
template <class Pred> bool spin(const fwait_table *t, Pred &&pred) noexcept
{
	typedef typename std::remove_reference<Pred>::type P;
	static_assert(detail::is_predicate<P>::value, "fwait::spin: pred must be callable as bool()");
	return fwait_spin(t, &detail::ready_trampoline<P>, detail::arg_of(pred));
}

/* ---- Asynchronous keyed waits as a C++20 awaitable ------------------------ */

#ifdef FWAIT_HAVE_COROUTINES
/*
 * co_await fwait::until(t, key, flags, pred, resume): suspends the calling
 * coroutine until pred() holds, without blocking its thread
 * (fwait_wait_async; flags FWAIT_EXCLUSIVE, FWAIT_PRECHECK).  pred follows
 * fwait::wait's rules (it runs under the bucket lock; it may take what it
 * waits for).  resume is how a woken coroutine goes on: a callable taken
 * by value and called as resume(std::coroutine_handle<>) on the waking
 * thread, after the bucket lock is dropped; it should push the handle to
 * the caller's executor (calling handle.resume() there would run the
 * coroutine inside the waker's fwait_wake).  The result is 0 once pred()
 * held, or -EINVAL (as fwait_wait_async).
 *
 * A woken coroutine is not resumed to find pred() false: the completion
 * looks again on the waking thread (fwait_wait_async once more, pred()
 * under the lock), and only a true answer resumes it; a false one queues
 * the record again, at the head of its key under FAIR, keeping its place.
 * The awaitable (in the coroutine frame for the whole suspension) holds
 * the waiter record, pred and resume: no allocation.  It cannot be
 * cancelled; a wait with a deadline uses fwait_wait_async directly.
 * Ordering: as fwait_wait for pred(); the waker's writes before its wake
 * are visible to the resumed coroutine through resume's hand-off.
 */
template <class Pred, class Resume> class until_awaitable {
public:
	until_awaitable(fwait_table *t, const void *key, unsigned flags, Pred pred,
			Resume resume) noexcept
		: t_(t), key_(key), flags_(flags), pred_(std::move(pred)),
		  resume_(std::move(resume))
	{
	}
	until_awaitable(const until_awaitable &) = delete;
	until_awaitable &operator=(const until_awaitable &) = delete;

	bool await_ready() const noexcept { return false; }
	/* false: pred() held (or an error), go on without suspending. */
	bool await_suspend(std::coroutine_handle<> h) noexcept
	{
		h_ = h;
		rc_ = fwait_async_init(&rec_, &done, this);
		return rc_ == 0 && queue();
	}
	int await_resume() const noexcept { return rc_; }

private:
	/* true: queued (the completion will come); false: rc_ is the answer. */
	bool queue() noexcept
	{
		int rc = fwait_wait_async(t_, key_, flags_, &detail::ready_trampoline<Pred>,
					  detail::arg_of(pred_), &rec_);
		if (rc == 1)
			return true;
		rc_ = rc;
		return false;
	}
	/* The completion, on the waking thread, the waker's last touch of
	 * rec_: look again, and resume only on a true answer.  resume and the
	 * handle are taken out first: the resumed coroutine may run (on
	 * another thread, or inside this call) to its end, and its frame,
	 * this awaitable included, be gone before the call returns. */
	static void done(fwait_async *, uint64_t, void *arg) noexcept
	{
		until_awaitable *self = static_cast<until_awaitable *>(arg);
		if (self->queue())
			return;
		Resume resume(std::move(self->resume_));
		std::coroutine_handle<> h = self->h_;
		resume(h);
	}

	fwait_table *t_;
	const void *key_;
	unsigned flags_;
	Pred pred_;
	Resume resume_;
	std::coroutine_handle<> h_;
	fwait_async rec_;
	int rc_ = 0;
};

template <class Pred, class Resume>
until_awaitable<typename std::decay<Pred>::type, typename std::decay<Resume>::type>
until(fwait_table *t, const void *key, unsigned flags, Pred &&pred, Resume &&resume) noexcept
{
	typedef typename std::decay<Pred>::type P;
	static_assert(detail::is_predicate<P>::value, "fwait::until: pred must be callable as bool()");
	return until_awaitable<P, typename std::decay<Resume>::type>(
		t, key, flags, std::forward<Pred>(pred), std::forward<Resume>(resume));
}

#endif /* FWAIT_HAVE_COROUTINES */

/* ---- Hybrid latches on a caller's 64-bit word ---------------------------- */

/*
 * A handle on a hybrid latch (fwait_hlatch_*, see fwait.h): the table, the
 * layout and the caller's word.  It owns none of them and holds no state
 * of its own (copying it copies the reference); the three must outlive it
 * and every guard made from it.  The layout is usually one static const
 * per kind of word; a temporary one is refused at compile time.
 *
 * Each member is the C call of the same name and returns what it returns
 * (0 or a negative errno: no exceptions), with its ordering: taking the
 * latch is an acquire of the release that last freed or handed it, every
 * release is a release, and validate pairs with the release fence after
 * an exclusive take (Boehm's seqlock argument, fwait.h "Ordering").
 *
 * Not a standard Lockable: try_lock and try_lock_shared return 0 when
 * they take the latch (as the C calls), where std::unique_lock and
 * std::lock expect true; use hlatch_guard and hlatch_shared_guard.
 */
/* How a latch holds its layout: hlatch_layout_ref, a pointer to the
 * caller's (one static const per kind of word; a temporary is refused at
 * compile time), or hlatch_fixed_layout<L>, a static one known at compile
 * time: the compiler then folds the layout into each call, and an
 * uncontended lock + unlock costs about what a CAS and a store do
 * (docs/benchmarks.md).  L must be a constant expression: a constexpr
 * fwait_hlatch_layout (GCC refuses a plain const one before C++17). */
class hlatch_layout_ref {
public:
	hlatch_layout_ref(const fwait_hlatch_layout &l) noexcept : l_(&l) {}
	hlatch_layout_ref(const fwait_hlatch_layout &&) = delete;
	const fwait_hlatch_layout *get() const noexcept { return l_; }

private:
	const fwait_hlatch_layout *l_;
};
template <const fwait_hlatch_layout &L> class hlatch_fixed_layout {
public:
	constexpr const fwait_hlatch_layout *get() const noexcept { return &L; }
};

template <class Layout> class basic_hybrid_latch {
public:
	basic_hybrid_latch(fwait_table *table, Layout layout, fwait_atomic_u64 &word) noexcept
		: table_(table), layout_(layout), word_(&word),
		  waiters_(fwait_hlatch_waiters(table, &word)),
		  ok_(table != nullptr && fwait_hlatch_layout_check(layout.get()) == 0)
	{
	}
	/* A fixed layout's latch: (table, word). */
	basic_hybrid_latch(fwait_table *table, fwait_atomic_u64 &word) noexcept
		: basic_hybrid_latch(table, Layout(), word)
	{
	}

	/* Exclusive: fwait_hlatch_lock: 0; -EAGAIN at once (nothing held) if
	 * the state is the caller's own; -ETIMEDOUT; -EINVAL. */
	int lock(const timespec *deadline = nullptr) noexcept
	{
		return ok_ ? fwait_hl_lock_(table_, layout_.get(), word_, deadline) :
			     fwait_hlatch_lock_slow(table_, layout_.get(), word_, deadline);
	}
	/* fwait_hlatch_trylock: 0 taken, -EBUSY held, -EAGAIN the caller's
	 * state, -EINVAL.  Never sleeps. */
	int try_lock() noexcept { return fwait_hlatch_trylock(layout_.get(), word_); }
	/* fwait_hlatch_unlock: release, bump the version, wake or hand over:
	 * 0, -EPERM (not held exclusive; nothing changed), -EINVAL. */
	int unlock() noexcept
	{
		return ok_ ? fwait_hl_unlock_(table_, layout_.get(), word_, waiters_) :
			     fwait_hlatch_unlock_slow(table_, layout_.get(), word_);
	}
	/* fwait_hlatch_unlock_to: the same, leaving the state `state` (0,
	 * marked, or one of the caller's own values such as "evicted"). */
	int unlock_to(unsigned state) noexcept
	{
		return fwait_hlatch_unlock_to(table_, layout_.get(), word_, state);
	}

	/* Shared: fwait_hlatch_lock_shared, fwait_hlatch_trylock_shared,
	 * fwait_hlatch_unlock_shared (the version is kept). */
	int lock_shared(const timespec *deadline = nullptr) noexcept
	{
		return ok_ ? fwait_hl_lock_shared_(table_, layout_.get(), word_, deadline) :
			     fwait_hlatch_lock_shared_slow(table_, layout_.get(), word_, deadline);
	}
	int try_lock_shared() noexcept { return fwait_hlatch_trylock_shared(layout_.get(), word_); }
	int unlock_shared() noexcept
	{
		return ok_ ? fwait_hl_unlock_shared_(table_, layout_.get(), word_) :
			     fwait_hlatch_unlock_shared_slow(table_, layout_.get(), word_);
	}

	/* Optimistic: fwait_hlatch_read_begin (waits while the latch is
	 * exclusive; -EAGAIN with *snapshot set for the caller's own state),
	 * then read with relaxed atomic loads, then validate(*snapshot). */
	int read_begin(uint64_t *snapshot) noexcept { return read_begin(nullptr, snapshot); }
	int read_begin(const timespec *deadline, uint64_t *snapshot) noexcept
	{
		return ok_ ? fwait_hl_read_begin_(table_, layout_.get(), word_, deadline, snapshot) :
			     fwait_hlatch_read_begin_slow(table_, layout_.get(), word_, deadline, snapshot);
	}
	/* Predicate: no exclusive holder ran since the snapshot. */
	bool validate(uint64_t snapshot) const noexcept
	{
		return ok_ ? fwait_hl_validate_(layout_.get(), word_, snapshot) :
			     fwait_hlatch_validate(layout_.get(), word_, snapshot);
	}

	/*
	 * The retry loop of an optimistic read: read_begin, f(), validate,
	 * until validate passes; then 0, and what f() read in its last run
	 * is consistent.  -EAGAIN (the caller's own state: f() is not called
	 * for that look), -ETIMEDOUT (each read_begin waits until deadline),
	 * -EINVAL: returned at once.  f() runs once per attempt, so each
	 * run must overwrite what the one before produced; it may see a
	 * writer's half-done changes, so it reads with relaxed atomic loads
	 * and must not act on them (follow a pointer it read, loop on a
	 * length) before validate passed.
	 *
	 *   uint64_t a, b;
	 *   int rc = latch.optimistic_read([&] { a = x.load(std::memory_order_relaxed);
	 *                                        b = y.load(std::memory_order_relaxed); });
	 */
	template <class F> int optimistic_read(F &&f, const timespec *deadline = nullptr)
	{
		for (;;) {
			uint64_t snapshot = 0;
			int rc = read_begin(deadline, &snapshot);
			if (rc != 0)
				return rc;
			f();
			if (validate(snapshot))
				return 0;
		}
	}

	/* Field readers for a value of the word (fwait_hlatch_state,
	 * fwait_hlatch_version). */
	unsigned state(uint64_t v) const noexcept { return fwait_hlatch_state(layout_.get(), v); }
	uint64_t version(uint64_t v) const noexcept { return fwait_hlatch_version(layout_.get(), v); }

	fwait_table *table() const noexcept { return table_; }
	const fwait_hlatch_layout &layout() const noexcept { return *layout_.get(); }
	fwait_atomic_u64 &word() const noexcept { return *word_; }

private:
	fwait_table *table_;
	Layout layout_;
	fwait_atomic_u64 *word_;
	/* What an uncontended unlock reads after its store: nonzero (or NULL,
	 * a table without membarrier), it calls into the table. */
	const fwait_atomic_u32 *waiters_;
	/* The table is not NULL and the layout valid, checked once when
	 * made (the layout must not change after): the calls then skip the
	 * C inline paths' checks (fwait_hl_*_). */
	bool ok_;
};

/* The latch with a layout of the caller's (hybrid_latch(t, layout, word))
 * or a fixed one (fixed_hybrid_latch<layout>(t, word)). */
typedef basic_hybrid_latch<hlatch_layout_ref> hybrid_latch;
template <const fwait_hlatch_layout &L>
using fixed_hybrid_latch = basic_hybrid_latch<hlatch_fixed_layout<L>>;

/*
 * Scoped hold of a hybrid latch: hlatch_guard takes it exclusive
 * (hybrid_latch::lock, until deadline if one is given) and its destructor
 * releases it with unlock (the version moves on); hlatch_shared_guard
 * the same with lock_shared and unlock_shared.  Test it: a latch in the
 * caller's own state ("evicted") gives -EAGAIN.
 *
 *   fwait::hlatch_guard g(latch);
 *   if (!g) return g.error();  // -EAGAIN, -ETIMEDOUT, -EINVAL
 *
 * Movable, not copyable: a moved-from guard holds nothing.  It keeps a
 * copy of the handle, so the handle itself may be a temporary.  For a
 * fixed_hybrid_latch, basic_hlatch_guard<false, decltype(latch)> (or
 * <true, ...> for shared) keeps its folded layout.
 */
template <bool Shared, class Latch = hybrid_latch> class basic_hlatch_guard {
public:
	explicit basic_hlatch_guard(const Latch &latch,
				    const timespec *deadline = nullptr) noexcept
		: latch_(latch),
		  error_(Shared ? latch_.lock_shared(deadline) : latch_.lock(deadline)),
		  owns_(error_ == 0)
	{
	}
	~basic_hlatch_guard() { unlock(); }

	basic_hlatch_guard(const basic_hlatch_guard &) = delete;
	basic_hlatch_guard &operator=(const basic_hlatch_guard &) = delete;
	basic_hlatch_guard(basic_hlatch_guard &&other) noexcept
		: latch_(other.latch_), error_(other.error_), owns_(other.owns_)
	{
		other.owns_ = false;
	}
	/* Releases what this guard holds, then takes other's hold. */
	basic_hlatch_guard &operator=(basic_hlatch_guard &&other) noexcept
	{
		if (this != &other) {
			unlock();
			latch_ = other.latch_;
			error_ = other.error_;
			owns_ = other.owns_;
			other.owns_ = false;
		}
		return *this;
	}

	/* What lock (lock_shared) returned: 0 if the latch was taken. */
	int error() const noexcept { return error_; }
	bool owns_lock() const noexcept { return owns_; }
	explicit operator bool() const noexcept { return owns_; }

	/* Release early (unlock's or unlock_shared's return; 0 if not held
	 * by this guard); the destructor then does nothing. */
	int unlock() noexcept
	{
		if (!owns_)
			return 0;
		owns_ = false;
		return Shared ? latch_.unlock_shared() : latch_.unlock();
	}
	/* Exclusive only: release early, leaving the state `state`
	 * (hybrid_latch::unlock_to). */
	int unlock_to(unsigned state) noexcept
	{
		static_assert(!Shared, "fwait::hlatch_shared_guard has no unlock_to");
		if (!owns_)
			return 0;
		owns_ = false;
		return latch_.unlock_to(state);
	}

private:
	Latch latch_;
	int error_;
	bool owns_;
};

using hlatch_guard = basic_hlatch_guard<false>;
using hlatch_shared_guard = basic_hlatch_guard<true>;

} // namespace fwait

#endif /* FWAIT_FWAIT_HPP */
