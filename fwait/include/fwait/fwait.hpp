/*
 * fwait.hpp - C++ RAII helpers over fwait.h (C++11 and later).
 *
 * Header-only, and only a thin layer: each helper makes the C calls a C
 * caller would make, and guarantees exactly what those calls guarantee
 * (ordering, handoff, fairness: see fwait.h and docs/design.md).  Nothing
 * here throws, so it builds with -fno-exceptions: a failed call is reported
 * as its negative errno through error(), as the C API returns it.
 *
 * The word is a std::atomic<uint32_t> (fwait_atomic_u32, see fwait.h),
 * which the table keys by its address; bit 31 is fwait's.
 */
#ifndef FWAIT_FWAIT_HPP
#define FWAIT_FWAIT_HPP

#ifndef __cplusplus
#error "fwait/fwait.hpp is a C++ header; C callers include fwait/fwait.h"
#endif

#include <atomic>
#include <cstdint>

#include "fwait/fwait.h"

namespace fwait {

/*
 * Scoped lock bit, as std::lock_guard: the constructor takes (word, bit)
 * with fwait_bit_lock (sleeping as an exclusive waiter, until deadline if
 * one is given), the destructor releases it with fwait_bit_unlock, which
 * under FWAIT_WAKE_ONE hands it to the oldest exclusive waiter.  The lock
 * orders like the C calls: taking it is an acquire, releasing it a release.
 *
 *   fwait::bit_lock_guard g(table, word, 0);
 *   if (!g) return g.error();  // -EINVAL, or -ETIMEDOUT with a deadline
 *   ... the bit is held ...
 *
 * Not copyable or movable; the table and the word must outlive it.
 */
class bit_lock_guard {
public:
	bit_lock_guard(fwait_table *table, fwait_atomic_u32 &word, unsigned bit,
		       const timespec *deadline = nullptr) noexcept
		: table_(table), word_(&word), bit_(bit),
		  error_(fwait_bit_lock(table, &word, bit, deadline)),
		  owns_(error_ == 0)
	{
	}

	~bit_lock_guard() { unlock(); }

	bit_lock_guard(const bit_lock_guard &) = delete;
	bit_lock_guard &operator=(const bit_lock_guard &) = delete;

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
		return fwait_bit_unlock(table_, word_, bit_);
	}

private:
	fwait_table *table_;
	fwait_atomic_u32 *word_;
	unsigned bit_;
	int error_;
	bool owns_;
};

} // namespace fwait

#endif /* FWAIT_FWAIT_HPP */
