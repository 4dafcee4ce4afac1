/* SPDX-License-Identifier: MIT */
/*
 * bufpool.hpp - C++ RAII helpers over bufpool.h (C++11 and later).
 *
 * Header-only, and only a thin layer: each helper makes the C calls a C
 * caller would make, and guarantees exactly what those calls guarantee
 * (see bufpool.h and docs/bufpool.md).  Nothing here throws, so it builds
 * with -fno-exceptions: a failed call is reported as its negative errno
 * through error(), as the C API returns it.
 */
#ifndef BUFPOOL_BUFPOOL_HPP
#define BUFPOOL_BUFPOOL_HPP

#ifndef __cplusplus
#error "bufpool/bufpool.hpp is a C++ header; C callers include bufpool/bufpool.h"
#endif

#include <cerrno>
#include <cstdint>

#include "bufpool/bufpool.h"

namespace bufpool {

/*
 * A pinned and latched page for one scope.  The constructor pins the page
 * with bp_get (bp_get_timed when given a deadline), then latches it in
 * mode with bp_latch; if the latch fails the pin is dropped again.  The
 * destructor (or release()) undoes both in reverse: bp_unlatch, then
 * bp_release, so the page is never released while still latched.
 *
 *   bufpool::page_guard g(pool, pageno, BP_LATCH_EXCLUSIVE);
 *   if (!g) return g.error();  // bp_get's or bp_latch's errno
 *   std::memcpy(g.data(), rec, len);
 *   g.mark_dirty();
 *
 * The latch is not recursive and follows bp_latch's rules (exclusive also
 * waits for write-back); do not call bp_flush while holding one.  Movable
 * (a moved-from guard holds nothing; a move assignment releases what the
 * target held first), not copyable; the pool must outlive the guard.
 */
class page_guard {
public:
	page_guard(bp_pool *pool, uint64_t pageno, bp_latch_mode mode,
		   unsigned get_flags = 0) noexcept
		: pool_(pool), frame_(nullptr), mode_(mode), error_(0)
	{
		bp_frame *f = nullptr;
		error_ = bp_get(pool, pageno, get_flags, &f);
		if (error_ == 0)
			latch(f);
	}

	page_guard(bp_pool *pool, uint64_t pageno, bp_latch_mode mode,
		   unsigned get_flags, const timespec *deadline) noexcept
		: pool_(pool), frame_(nullptr), mode_(mode), error_(0)
	{
		bp_frame *f = nullptr;
		error_ = bp_get_timed(pool, pageno, get_flags, deadline, &f);
		if (error_ == 0)
			latch(f);
	}

	~page_guard() { release(); }

	page_guard(const page_guard &) = delete;
	page_guard &operator=(const page_guard &) = delete;
	page_guard(page_guard &&o) noexcept
		: pool_(o.pool_), frame_(o.frame_), mode_(o.mode_), error_(o.error_)
	{
		o.frame_ = nullptr;
	}
	page_guard &operator=(page_guard &&o) noexcept
	{
		if (this != &o) {
			release();
			pool_ = o.pool_;
			frame_ = o.frame_;
			mode_ = o.mode_;
			error_ = o.error_;
			o.frame_ = nullptr;
		}
		return *this;
	}

	/* 0 if the page was pinned and latched, else the failing call's
	 * negative errno (bp_get / bp_get_timed, or bp_latch). */
	int error() const noexcept { return error_; }
	/* Whether the guard holds the page now (not yet released). */
	bool owns() const noexcept { return frame_ != nullptr; }
	explicit operator bool() const noexcept { return owns(); }

	/* The frame, its memory (page_size bytes) and page number while held;
	 * nullptr, nullptr and BP_NO_PAGE otherwise. */
	bp_frame *frame() const noexcept { return frame_; }
	void *data() const noexcept { return bp_data(frame_); }
	uint64_t pageno() const noexcept { return bp_frame_pageno(frame_); }
	bp_latch_mode mode() const noexcept { return mode_; }

	/* bp_mark_dirty: call after modifying the page under an exclusive
	 * latch.  -EINVAL if the guard does not hold the page. */
	int mark_dirty() noexcept { return bp_mark_dirty(pool_, frame_); }

	/* Unlatch and unpin now; the destructor then does nothing.  Returns
	 * the first error of bp_unlatch and bp_release (0 normally, or if the
	 * guard held nothing). */
	int release() noexcept
	{
		if (frame_ == nullptr)
			return 0;
		bp_frame *f = frame_;
		frame_ = nullptr;
		int r = bp_unlatch(pool_, f, mode_);
		int r2 = bp_release(pool_, f);
		return r != 0 ? r : r2;
	}

private:
	void latch(bp_frame *f) noexcept
	{
		error_ = bp_latch(pool_, f, mode_);
		if (error_ == 0)
			frame_ = f;
		else
			(void)bp_release(pool_, f);
	}

	bp_pool *pool_;
	bp_frame *frame_;
	bp_latch_mode mode_;
	int error_;
};

/*
 * Owns a pool: open() is bp_open into it, close() is bp_close (0, or the
 * errno with the pool still open and owned, as bp_close leaves it), and
 * the destructor closes what is still open.  A destructor cannot report
 * an error, so one whose bp_close fails (a write or fsync error, already
 * logged through the pool's log callback) gives up with bp_discard: the
 * pages that could not be written are dropped.  Call close() first where
 * that matters.  Movable (the moved-from owns nothing), not copyable.
 *
 *   bufpool::pool p;
 *   bp_config cfg;
 *   bp_config_init(&cfg);
 *   cfg.path = "db";
 *   if (int rc = p.open(cfg)) return rc;
 *   bufpool::page_guard g(p.get(), 0, BP_LATCH_SHARED);
 *   ...
 *   return p.close();
 */
class pool {
public:
	pool() noexcept : p_(nullptr) {}
	~pool() { discard_on_failed_close(); }
	pool(const pool &) = delete;
	pool &operator=(const pool &) = delete;
	pool(pool &&o) noexcept : p_(o.p_) { o.p_ = nullptr; }
	pool &operator=(pool &&o) noexcept
	{
		if (this != &o) {
			discard_on_failed_close();
			p_ = o.p_;
			o.p_ = nullptr;
		}
		return *this;
	}

	/* bp_open; -EBUSY (nothing done) while this owns an open pool. */
	int open(const bp_config &cfg) noexcept
	{
		return p_ != nullptr ? -EBUSY : bp_open(&p_, &cfg);
	}
	/* bp_close: 0 (nothing owned after), or its errno with the pool
	 * still open and owned.  0 if nothing is owned. */
	int close() noexcept
	{
		if (p_ == nullptr)
			return 0;
		int rc = bp_close(p_);
		if (rc == 0)
			p_ = nullptr;
		return rc;
	}
	bp_pool *get() const noexcept { return p_; }
	explicit operator bool() const noexcept { return p_ != nullptr; }

private:
	void discard_on_failed_close() noexcept
	{
		if (p_ != nullptr && bp_close(p_) != 0)
			(void)bp_discard(p_);
		p_ = nullptr;
	}

	bp_pool *p_;
};

} // namespace bufpool

#endif /* BUFPOOL_BUFPOOL_HPP */
