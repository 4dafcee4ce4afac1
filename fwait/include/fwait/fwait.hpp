/*
 * fwait.hpp - C++ RAII helpers over fwait.h (C++11 and later).
 *
 * Header-only, and only a thin layer: each helper makes the C calls a C
 * caller would make, and guarantees exactly what those calls guarantee
 * (ordering, handoff, fairness: see fwait.h and docs/design.md).  Nothing
 * here throws, so it builds with -fno-exceptions: a failed call is reported
 * as its negative errno through error(), as the C API returns it.
 *
 * The word is a std::atomic<uint32_t> (fwait_atomic_u32, see fwait.h; bit
 * 31 is fwait's) or a std::atomic<uint64_t> (fwait_atomic_u64, the
 * fwait_bit64_* calls; bit 63 is fwait's), which the table keys by its
 * address.
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
 * Not copyable or movable; the table and the word must outlive it.
 */
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

} // namespace fwait

#endif /* FWAIT_FWAIT_HPP */
