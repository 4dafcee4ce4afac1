/* SPDX-License-Identifier: MIT */
/*
 * test_hybrid_latch.cpp - fwait.hpp's keyed-wait lambdas (fwait::wait,
 * wait_ex, wake_ex, spin) and fwait::hybrid_latch with its guards, on a
 * latch word laid out as a storage engine's page state (suite cxx; suite
 * fwait too, so the sanitizer builds of .ci/run run it: TSan checks the
 * latch's orders and fwait's).
 *
 * Design note.  The word: state in the top byte's low 7 bits (bits 56..62:
 * 0 free, 1..124 shared holders, 125 exclusive, 126 marked, 127 the
 * caller's own "evicted"), W = bit 63, version = bits 0..55.
 *   Unit part, one table per policy: the lambda wrappers (a capturing
 *   predicate; wake_ex's report; a token reaching a parked waiter through
 *   wait_ex's out; FIFO and the policy's choice with two waiters), every
 *   latch call's result on each state (marked, evicted, the shared limit,
 *   version wrap, caller bits kept, timeouts clearing W), and the guards
 *   (moves release exactly once).
 *   Stress part, one table per policy: writers keep a == b on two guarded
 *   fields (one evicts and reloads, one leaves the state marked), an owner
 *   counter proves mutual exclusion, shared readers check the word's
 *   shared count against their own exact count (taken under a gate, with
 *   bounds for the holders that bypass it), optimistic readers assert
 *   a == b only when validate passes, and a producer hands items to two
 *   lambda keyed waiters by token or through a pool.  At the end: the
 *   version equals the number of exclusive releases mod 2^56, W is clear,
 *   every item was taken exactly once.
 * Every wait has a deadline (a -ETIMEDOUT fails a check where it happens)
 * and alarm() fails a run that hangs anyway.  Nothing sleeps to
 * synchronise: a thread that must see another parked polls
 * fwait_waiters_walk, yielding.  A failed check prints what failed and
 * exits 1 from any thread.
 */
#include "fwait/fwait.hpp"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <unistd.h>
#include "check.hpp"

/* A ThreadSanitizer build (GCC defines the first, Clang has the second). */
#if defined(__SANITIZE_THREAD__)
#define TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TEST_TSAN 1
#endif
#endif

/* ---- checks ------------------------------------------------------------ */


/* ---- the layout -------------------------------------------------------- */

namespace {

const unsigned kShared_max = 124, kExclusive = 125, kMarked = 126, kEvicted = 127;
constexpr fwait_hlatch_layout kLayout = { 56, 7, kShared_max, kExclusive, kMarked, 63, 0, 56, 0 };
/* The same, releasing exclusive with a plain store while nobody waits. */
constexpr fwait_hlatch_layout kStoreLayout = { 56, 7, kShared_max, kExclusive, kMarked, 63, 0, 56,
					       FWAIT_HLATCH_STORE_RELEASE };
const uint64_t kStateMask = UINT64_C(0x7f) << 56;
const uint64_t kW = UINT64_C(1) << 63;
const uint64_t kVersionMask = (UINT64_C(1) << 56) - 1;
const uint64_t kBound = UINT64_C(60000000000); /* every wait's deadline: 60 s, in ns */
const timespec kPast = { 0, 0 };

uint64_t with_state(uint64_t v, unsigned state)
{
	return (v & ~kStateMask) | (static_cast<uint64_t>(state) << 56);
}

static_assert(!std::is_copy_constructible<fwait::hlatch_guard>::value &&
		      !std::is_copy_assignable<fwait::hlatch_guard>::value &&
		      !std::is_copy_constructible<fwait::hlatch_shared_guard>::value &&
		      !std::is_copy_assignable<fwait::hlatch_shared_guard>::value,
	      "the latch guards are not copyable");
static_assert(std::is_nothrow_move_constructible<fwait::hlatch_guard>::value &&
		      std::is_nothrow_move_assignable<fwait::hlatch_guard>::value &&
		      std::is_nothrow_move_constructible<fwait::hlatch_shared_guard>::value &&
		      std::is_nothrow_move_assignable<fwait::hlatch_shared_guard>::value &&
		      std::is_nothrow_move_constructible<fwait::bit64_lock_guard>::value &&
		      std::is_nothrow_move_assignable<fwait::bit_lock_guard>::value,
	      "the guards are movable");
static_assert(std::is_copy_constructible<fwait::hybrid_latch>::value,
	      "a latch handle is a reference: copyable");
static_assert(!std::is_constructible<fwait::hybrid_latch, fwait_table *, fwait_hlatch_layout,
				     fwait_atomic_u64 &>::value,
	      "a latch handle does not keep a pointer to a temporary layout");

struct config {
	const char *name;
	fwait_policy policy;
	fwait_handoff handoff;
};
const config kConfigs[] = {
	{ "wake-one fair", FWAIT_WAKE_ONE, FWAIT_HANDOFF_FAIR },
	{ "wake-one strict", FWAIT_WAKE_ONE, FWAIT_HANDOFF_STRICT },
	{ "wake-all", FWAIT_WAKE_ALL, FWAIT_HANDOFF_FAIR },
	{ "broadcast", FWAIT_BROADCAST, FWAIT_HANDOFF_FAIR },
	{ "futex", FWAIT_FUTEX, FWAIT_HANDOFF_FAIR },
};

fwait_table *table_of(const config &c)
{
	fwait_config cfg = {};
	cfg.policy = c.policy;
	cfg.handoff = c.handoff;
	cfg.nbuckets = 4; /* few buckets: the latch and the keyed pair share them */
	fwait_table *t = nullptr;
	int r = fwait_table_create(&t, &cfg);
	if (r == -ENOTSUP && c.policy == FWAIT_FUTEX)
		return nullptr;
	CHECK_EQ(r, 0);
	return t;
}

bool before(const timespec &a, const timespec &b)
{
	return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

/* Yields until n exclusive waiters are queued on key (bounded). */
void wait_queued(fwait_table *t, const void *key, unsigned n)
{
	struct count {
		const void *key;
		unsigned n;
	};
	const timespec dl = fwait_deadline_after_ns(kBound);
	for (;;) {
		count c = { key, 0 };
		CHECK_EQ(fwait_waiters_walk(
				 t,
				 [](const fwait_waiter_info *w, void *arg) -> int {
					 count *p = static_cast<count *>(arg);
					 if (w->key == p->key && w->bit == -1 && w->exclusive)
						 p->n++;
					 return 0;
				 },
				 &c),
			 0);
		if (c.n == n)
			return;
		CHECK(c.n < n);
		CHECK(before(fwait_deadline_after_ns(0), dl));
		std::this_thread::yield();
	}
}

/* ---- unit: the lambda wrappers ----------------------------------------- */

void test_wait_lambdas(fwait_table *t)
{
	std::atomic<uint32_t> x(3);
	const uint32_t want = 3;
	unsigned calls = 0; /* only this thread calls pred */
	auto pred = [&] {
		calls++;
		return x.load() == want;
	};
	CHECK_EQ(fwait::wait(t, &x, 0, pred), 0);
	CHECK(calls >= 1);

	fwait_wait_result res;
	calls = 0;
	CHECK_EQ(fwait::wait_ex(t, &x, FWAIT_PRECHECK, pred, nullptr, &res), 0);
	CHECK_EQ(res.how, FWAIT_HOW_PRECHECK);
	CHECK_EQ(calls, 1);
	CHECK_EQ(res.sleeps, 0);
	CHECK_EQ(res.token, 0);
	CHECK_EQ(fwait::wait_ex(t, &x, FWAIT_EXCLUSIVE, pred, nullptr, &res), 0);
	CHECK_EQ(res.how, FWAIT_HOW_LOCKED);
	CHECK_EQ(res.sleeps, 0);
	CHECK_EQ(fwait::wait_ex(t, &x, FWAIT_SPIN, pred, nullptr, &res), 0);
	CHECK_EQ(res.how, FWAIT_HOW_PRECHECK);

	/* A temporary and a const lambda; a false one times out. */
	CHECK_EQ(fwait::wait(t, &x, 0, [&] { return x.load() == 3; }), 0);
	const auto never = [] { return false; };
	CHECK_EQ(fwait::wait_ex(t, &x, 0, never, &kPast, &res), -ETIMEDOUT);
	CHECK_EQ(res.how, FWAIT_HOW_TIMEDOUT);
	CHECK_EQ(fwait::wait(t, &x, FWAIT_EXCLUSIVE, never, &kPast), -ETIMEDOUT);
	CHECK_EQ(fwait::wait_ex(t, nullptr, 0, pred, nullptr, &res), -EINVAL);
	CHECK_EQ(fwait::wait(t, &x, 64, pred), -EINVAL);

	CHECK(fwait::spin(t, pred));
	CHECK(!fwait::spin(t, never));

	/* wake_ex with nobody waiting: the callback still runs, once. */
	fwait_wake_report seen = {};
	unsigned cb_calls = 0;
	CHECK_EQ(fwait::wake_ex(t, &x, 1, 0,
				[&](const fwait_wake_report &r) -> uint64_t {
					seen = r;
					cb_calls++;
					return 7;
				}),
		 0);
	CHECK_EQ(cb_calls, 1);
	CHECK_EQ(seen.woken, 0);
	CHECK_EQ(seen.woken_exclusive, 0);
	CHECK(!seen.more_waiters);
	CHECK(!seen.due);
	CHECK_EQ(fwait::wake_ex(t, &x, 1, 99, [](const fwait_wake_report &) -> uint64_t { return 0; }),
		 -EINVAL);
}

/* Two waiters whose predicate never holds: only a token ends their waits.
 * The first queued is the oldest; what one wake_ex(nr 1) chooses is the
 * policy's. */
void test_tokens(fwait_table *t, const config &c)
{
	std::atomic<uint32_t> key(0);
	fwait_wait_result res[2];
	int rc[2] = { 1, 1 };
	std::vector<std::thread> ws;
	for (unsigned i = 0; i < 2; i++) {
		ws.emplace_back([&, i] {
			const timespec dl = fwait_deadline_after_ns(kBound);
			rc[i] = fwait::wait_ex(t, &key, FWAIT_EXCLUSIVE, [] { return false; }, &dl,
					       &res[i]);
		});
		wait_queued(t, &key, i + 1);
	}
	const bool one = c.policy == FWAIT_WAKE_ONE || c.policy == FWAIT_FUTEX;
	fwait_wake_report seen = {};
	auto hand = [&](uint64_t token) {
		return [&seen, token](const fwait_wake_report &r) -> uint64_t {
			seen = r;
			return token;
		};
	};
	CHECK_EQ(fwait::wake_ex(t, &key, 1, 0, hand(5)), one ? 1 : 2);
	CHECK_EQ(seen.woken, one ? 1 : 2);
	CHECK_EQ(seen.woken_exclusive, seen.woken);
	CHECK(seen.more_waiters == one);
	if (c.handoff == FWAIT_HANDOFF_STRICT)
		CHECK(seen.due);
	if (!one)
		CHECK(!seen.due);
	if (one) {
		ws[0].join(); /* the oldest got 5 */
		CHECK_EQ(rc[0], 0);
		CHECK_EQ(res[0].how, FWAIT_HOW_WOKEN);
		CHECK_EQ(res[0].token, 5);
		CHECK(res[0].sleeps >= 1);
		CHECK_EQ(fwait::wake_ex(t, &key, 1, FWAIT_WAKE_EXCLUSIVE_ONLY, hand(6)), 1);
		CHECK_EQ(seen.woken_exclusive, 1);
		CHECK(!seen.more_waiters);
		ws[1].join();
		CHECK_EQ(res[1].token, 6);
	} else {
		for (auto &w : ws)
			w.join();
		CHECK_EQ(res[1].token, 5); /* every chosen waiter receives the token */
	}
	for (unsigned i = 0; i < 2; i++) {
		CHECK_EQ(rc[i], 0);
		CHECK_EQ(res[i].how, FWAIT_HOW_WOKEN);
	}
}

/* ---- unit: the latch --------------------------------------------------- */

void test_latch_states(fwait_table *t)
{
	CHECK_EQ(fwait_hlatch_layout_check(&kLayout), 0);
	fwait_atomic_u64 w(0);
	fwait::hybrid_latch l(t, kLayout, w);

	/* A read across a writer fails; one after it succeeds. */
	uint64_t s0 = 1;
	CHECK_EQ(l.read_begin(&s0), 0);
	CHECK_EQ(s0, 0);
	CHECK(l.validate(s0));
	CHECK_EQ(l.try_lock(), 0);
	CHECK_EQ(l.state(w.load()), kExclusive);
	CHECK(!l.validate(s0));
	CHECK_EQ(l.try_lock(), -EBUSY);
	CHECK_EQ(l.try_lock_shared(), -EBUSY);
	CHECK_EQ(l.unlock(), 0);
	CHECK(!l.validate(s0));
	CHECK_EQ(w.load(), 1); /* version 1, free, W clear */
	CHECK_EQ(l.version(w.load()), 1);
	CHECK_EQ(l.unlock(), -EPERM);
	CHECK_EQ(l.unlock_shared(), -EPERM);
	uint64_t s1 = 0;
	CHECK_EQ(l.read_begin(&s1), 0);
	CHECK(l.validate(s1));

	/* Shared: exactly shared_max holders, the version kept. */
	for (unsigned i = 0; i < kShared_max; i++)
		CHECK_EQ(l.try_lock_shared(), 0);
	CHECK_EQ(l.state(w.load()), kShared_max);
	CHECK_EQ(l.try_lock_shared(), -EBUSY);
	CHECK_EQ(l.try_lock(), -EBUSY);
	CHECK(l.validate(s1)); /* readers do not move the version */
	for (unsigned i = 0; i < kShared_max; i++)
		CHECK_EQ(l.unlock_shared(), 0);
	CHECK_EQ(w.load(), 1);
	CHECK_EQ(l.unlock_shared(), -EPERM);
	CHECK_EQ(l.lock_shared(), 0);
	CHECK_EQ(l.unlock(), -EPERM);
	CHECK_EQ(l.unlock_shared(), 0);

	/* Marked counts as free; taking the latch replaces it. */
	CHECK_EQ(l.lock(), 0);
	CHECK_EQ(l.unlock_to(kMarked), 0);
	CHECK_EQ(w.load(), with_state(2, kMarked));
	CHECK_EQ(l.try_lock_shared(), 0);
	CHECK_EQ(l.state(w.load()), 1);
	CHECK_EQ(l.unlock_shared(), 0);
	CHECK_EQ(w.load(), 2);
	CHECK_EQ(l.lock(), 0);
	CHECK_EQ(l.unlock_to(kMarked), 0);
	CHECK_EQ(l.lock(), 0);
	CHECK_EQ(l.state(w.load()), kExclusive);
	CHECK_EQ(l.unlock(), 0);
	CHECK_EQ(w.load(), 4);

	/* unlock_to refuses the latch's own states. */
	CHECK_EQ(l.lock(), 0);
	CHECK_EQ(l.unlock_to(kExclusive), -EINVAL);
	CHECK_EQ(l.unlock_to(3), -EINVAL);
	CHECK_EQ(l.unlock(), 0);
	CHECK_EQ(w.load(), 5);

	/* Evicted: the caller's own state, refused by every call. */
	CHECK_EQ(l.lock(), 0);
	CHECK_EQ(l.unlock_to(kEvicted), 0);
	const uint64_t evicted = with_state(6, kEvicted);
	CHECK_EQ(w.load(), evicted);
	CHECK_EQ(l.lock(), -EAGAIN);
	CHECK_EQ(l.try_lock(), -EAGAIN);
	CHECK_EQ(l.lock_shared(), -EAGAIN);
	CHECK_EQ(l.try_lock_shared(), -EAGAIN);
	uint64_t s2 = 0;
	CHECK_EQ(l.read_begin(&s2), -EAGAIN);
	CHECK_EQ(s2, evicted);
	unsigned runs = 0;
	CHECK_EQ(l.optimistic_read([&] { runs++; }), -EAGAIN);
	CHECK_EQ(runs, 0);
	{
		fwait::hlatch_guard g(l);
		CHECK(!g);
		CHECK_EQ(g.error(), -EAGAIN);
		fwait::hlatch_shared_guard sg(l);
		CHECK(!sg.owns_lock());
		CHECK_EQ(sg.error(), -EAGAIN);
	}
	CHECK_EQ(l.unlock(), -EPERM);
	CHECK_EQ(w.load(), evicted);
	w.store(6); /* the caller "reloads" it: free again */

	/* Timeouts: a waiter that gives up may leave W set; the next release
	 * clears it. */
	CHECK_EQ(l.lock(), 0);
	CHECK_EQ(l.lock(&kPast), -ETIMEDOUT);
	CHECK_EQ(l.lock_shared(&kPast), -ETIMEDOUT);
	CHECK_EQ(l.read_begin(&kPast, &s2), -ETIMEDOUT);
	CHECK_EQ(l.optimistic_read([&] { runs++; }, &kPast), -ETIMEDOUT);
	CHECK_EQ(runs, 0);
	CHECK_EQ(l.unlock(), 0);
	CHECK_EQ(w.load(), 7);

	/* The version wraps within its field. */
	w.store(kVersionMask);
	CHECK_EQ(l.lock(), 0);
	CHECK_EQ(l.unlock(), 0);
	CHECK_EQ(w.load(), 0);

	/* One optimistic read on a free latch: one run. */
	runs = 0;
	CHECK_EQ(l.optimistic_read([&] { runs++; }), 0);
	CHECK_EQ(runs, 1);

	/* A layout with caller bits and no W: they are kept, the version
	 * wraps without carrying into them. */
	const fwait_hlatch_layout small = { 0, 2, 2, 3, 0, -1, 8, 8, 0 };
	CHECK_EQ(fwait_hlatch_layout_check(&small), 0);
	const uint64_t mine = UINT64_C(0xabcd) << 16 | UINT64_C(0x3c);
	fwait_atomic_u64 w2(mine | UINT64_C(0xff) << 8);
	fwait::hybrid_latch l2(t, small, w2);
	CHECK_EQ(l2.lock(), 0);
	CHECK_EQ(l2.try_lock_shared(), -EBUSY);
	CHECK_EQ(l2.unlock(), 0);
	CHECK_EQ(w2.load(), mine);
	CHECK_EQ(l2.lock_shared(), 0);
	CHECK_EQ(l2.lock_shared(), 0);
	CHECK_EQ(l2.try_lock_shared(), -EBUSY); /* shared_max 2 */
	CHECK_EQ(l2.unlock_shared(), 0);
	CHECK_EQ(l2.unlock_shared(), 0);
	CHECK_EQ(w2.load(), mine);

	/* Bad layouts. */
	fwait_hlatch_layout bad = kLayout;
	bad.version_bits = 57; /* overlaps the state */
	CHECK_EQ(fwait_hlatch_layout_check(&bad), -EINVAL);
	CHECK_EQ(fwait::hybrid_latch(t, bad, w).lock(), -EINVAL);
	bad = kLayout;
	bad.shared_max = kExclusive;
	CHECK_EQ(fwait_hlatch_layout_check(&bad), -EINVAL);
	bad = kLayout;
	bad.marked = 3; /* a shared count */
	CHECK_EQ(fwait_hlatch_layout_check(&bad), -EINVAL);
}

void test_guards(fwait_table *t)
{
	fwait_atomic_u64 w(0);
	fwait::hybrid_latch l(t, kLayout, w);
	{
		fwait::hlatch_guard g(l);
		CHECK(g);
		CHECK_EQ(g.error(), 0);
		CHECK_EQ(l.state(w.load()), kExclusive);
		fwait::hlatch_guard g2(std::move(g));
		CHECK(!g.owns_lock());
		CHECK(g2.owns_lock());
		CHECK_EQ(g.unlock(), 0); /* holds nothing: does nothing */
		CHECK_EQ(l.state(w.load()), kExclusive);
	}
	CHECK_EQ(w.load(), 1); /* released exactly once */
	{
		/* Move assignment releases the target's hold first. */
		fwait::hlatch_guard a(l);
		CHECK(a);
		CHECK_EQ(a.unlock_to(kMarked), 0);
		CHECK_EQ(w.load(), with_state(2, kMarked));
		fwait::hlatch_guard b(fwait::hybrid_latch(t, kLayout, w)); /* a temporary handle */
		CHECK(b);
		a = std::move(b);
		CHECK(a && !b);
		fwait_atomic_u64 w2(0);
		fwait::hybrid_latch l2(t, kLayout, w2);
		fwait::hlatch_guard c(l2);
		c = std::move(a); /* releases l2, takes over l */
		CHECK_EQ(w2.load(), 1);
		CHECK_EQ(l.state(w.load()), kExclusive);
	}
	CHECK_EQ(w.load(), 3);
	{
		std::vector<fwait::hlatch_shared_guard> gs;
		for (unsigned i = 0; i < 3; i++) {
			gs.emplace_back(l);
			CHECK(gs.back());
		}
		CHECK_EQ(l.state(w.load()), 3); /* the vector's moves released nothing */
		fwait::hlatch_shared_guard moved(std::move(gs[0]));
		gs.clear();
		CHECK_EQ(l.state(w.load()), 1);
		fwait::hlatch_shared_guard other(l);
		moved = std::move(other);
		CHECK_EQ(l.state(w.load()), 1);
		CHECK_EQ(moved.unlock(), 0);
		CHECK_EQ(moved.unlock(), 0);
	}
	CHECK_EQ(w.load(), 3);

	/* The bit guard moves too. */
	fwait_atomic_u64 bw(0);
	{
		fwait::bit64_lock_guard g(t, bw, 40);
		CHECK(g);
		fwait::bit64_lock_guard g2(std::move(g));
		CHECK(!g && g2);
		CHECK(fwait_bit64_test(&bw, 40));
	}
	CHECK_EQ(bw.load(), 0);
}

/* fixed_hybrid_latch: the same calls with the layout folded in; its
 * guards; and threads contending on it (each hold counted, the version
 * moved by each exclusive release, W clear at the end).  L: kLayout, or
 * kStoreLayout (the inline store release and its count, waiters_). */
void hold_pause(unsigned i);
static_assert(!std::is_constructible<fwait::fixed_hybrid_latch<kLayout>, fwait_table *,
				     fwait_hlatch_layout, fwait_atomic_u64 &>::value,
	      "a fixed latch takes no layout");

template <const fwait_hlatch_layout &L> void test_fixed_latch(fwait_table *t)
{
	typedef fwait::fixed_hybrid_latch<L> fixed_latch;
	fwait_atomic_u64 w(0);
	fixed_latch l(t, w);
	CHECK(&l.layout() == &L);
	CHECK_EQ(l.lock(), 0);
	CHECK_EQ(l.state(w.load()), kExclusive);
	CHECK_EQ(l.try_lock(), -EBUSY);
	CHECK_EQ(l.unlock(), 0);
	CHECK_EQ(w.load(), 1);
	CHECK_EQ(l.unlock(), -EPERM);
	uint64_t snap = 0;
	CHECK_EQ(l.read_begin(&snap), 0);
	CHECK_EQ(l.lock_shared(), 0);
	CHECK(l.validate(snap));
	CHECK_EQ(l.unlock_shared(), 0);
	{
		fwait::basic_hlatch_guard<false, fixed_latch> g(l);
		CHECK(g);
		CHECK(!l.validate(snap));
	}
	CHECK_EQ(w.load(), 2);
	{
		fwait::basic_hlatch_guard<true, fixed_latch> g(l);
		CHECK(g);
		CHECK_EQ(l.state(w.load()), 1);
	}
	CHECK_EQ(l.unlock_to(0), -EPERM);
	CHECK_EQ(fixed_latch(nullptr, w).lock(), -EINVAL);

	const unsigned nthreads = 6, iters = 3000;
	fwait_atomic_u64 cw(0);
	fixed_latch cl(t, cw);
	std::atomic<unsigned> inside(0);
	uint64_t count = 0; /* guarded by cl */
	std::vector<std::thread> ths;
	for (unsigned i = 0; i < nthreads; i++)
		ths.emplace_back([&, i] {
			for (unsigned k = 0; k < iters; k++) {
				CHECK_EQ(cl.lock(), 0);
				CHECK_EQ(inside.fetch_add(1), 0);
				count++;
				hold_pause(k + i);
				CHECK_EQ(inside.fetch_sub(1), 1);
				CHECK_EQ(cl.unlock(), 0);
			}
		});
	for (std::thread &th : ths)
		th.join();
	CHECK_EQ(count, (uint64_t)nthreads * iters);
	CHECK_EQ(cw.load(), (uint64_t)nthreads * iters); /* free, W clear, the version */
}

/* ---- stress ------------------------------------------------------------ */

#if defined(TEST_TSAN)
const unsigned kIters = 400, kItems = 2000;
#else
const unsigned kIters = 2000, kItems = 10000;
#endif
const unsigned kWriters = 4, kGated = 2, kBlocking = 2, kOptimistic = 3, kConsumers = 2;

struct stress {
	explicit stress(fwait_table *table) : t(table), latch(table, kLayout, word) {}
	fwait_table *t;
	fwait_atomic_u64 word{0};
	fwait::hybrid_latch latch;
	std::atomic<uint64_t> a{0}, b{0}; /* guarded by the latch: a == b outside a writer */
	std::atomic<unsigned> owners{0};  /* exclusive holders now */
	std::atomic<uint64_t> releases{0}; /* exclusive releases: each bumps the version */
	std::atomic<unsigned> writers_left{kWriters};
	/* The gated shared readers take and release their holds and count
	 * them in gated under the gate, so while it is held the word's shared
	 * count is gated plus the blocking readers' holds (0..kBlocking). */
	std::mutex gate;
	unsigned gated = 0;
	std::atomic<uint64_t> valid_reads{0}, restarts{0}, shared_reads{0}, eagain{0};
	/* The keyed pair: items go to a waiter by token or into the pool. */
	std::atomic<uint64_t> pool{0}, consumed{0}, by_token{0}, from_pool{0};
	std::vector<std::atomic<bool> > taken = std::vector<std::atomic<bool> >(kItems + 1);

	bool writing() const { return writers_left.load(std::memory_order_relaxed) != 0; }
	void check_shared_count_gated()
	{
		unsigned s = latch.state(word.load());
		CHECK(s >= gated && s <= gated + kBlocking);
	}
};

void hold_pause(unsigned i)
{
	for (int k = 0; k < 50; k++)
		std::atomic_signal_fence(std::memory_order_seq_cst); /* a compiler barrier: kept */
	if (i % 16 == 0)
		std::this_thread::yield(); /* a holder preempted in its hold */
}

/* util/fence.h's util_fence_release in C++ (that header is C11's
 * <stdatomic.h>): GCC refuses atomic_thread_fence under -fsanitize=thread
 * (-Wtsan, an error with -Dwerror=true) and TSan does not model fences, so
 * there a compiler barrier keeps the emitted order (x86's TSO does the
 * rest) and TSan's happens-before comes from the atomics. */
void release_fence()
{
#ifdef TEST_TSAN
	std::atomic_signal_fence(std::memory_order_acq_rel);
#else
	std::atomic_thread_fence(std::memory_order_release);
#endif
}

/* The exclusive hold, as a guard the caller moves out (a page loader
 * would): retried while the latch is evicted. */
fwait::hlatch_guard lock_retrying(stress &s, const timespec *dl)
{
	for (;;) {
		fwait::hlatch_guard g(s.latch, dl);
		if (g)
			return g;
		CHECK_EQ(g.error(), -EAGAIN);
		s.eagain.fetch_add(1, std::memory_order_relaxed);
		std::this_thread::yield();
	}
}

void write_fields(stress &s, unsigned i)
{
	CHECK_EQ(s.owners.fetch_add(1), 0);
	CHECK_EQ(s.latch.state(s.word.load()), kExclusive);
	uint64_t v = s.a.load(std::memory_order_relaxed) + 1;
	s.a.store(v, std::memory_order_relaxed);
	hold_pause(i);
	s.b.store(v, std::memory_order_relaxed);
	CHECK_EQ(s.owners.fetch_sub(1), 1);
}

/* Writer 0 evicts every 64th time and reloads (takes the evicted latch
 * with its own CAS, as a page loader owns an evicted page); writer 1
 * leaves the state marked every 8th time. */
void writer(stress *s, unsigned id)
{
	const timespec dl = fwait_deadline_after_ns(kBound);
	for (unsigned i = 1; i <= kIters; i++) {
		fwait::hlatch_guard g = lock_retrying(*s, &dl);
		write_fields(*s, i);
		s->releases.fetch_add(1);
		if (id == 0 && i % 64 == 0) {
			CHECK_EQ(g.unlock_to(kEvicted), 0);
			uint64_t v = s->word.load(std::memory_order_relaxed);
			/* acquire: pairs with unlock_to's release, as the
			 * latch's own takes do. */
			do
				CHECK_EQ(s->latch.state(v), kEvicted);
			while (!s->word.compare_exchange_weak(v, with_state(v, kExclusive),
							       std::memory_order_acquire,
							       std::memory_order_relaxed));
			/* The release fence the latch puts after an exclusive
			 * take (fwait.h, "Ordering"): an optimistic reader
			 * that reads a store below and then validates sees
			 * this CAS's word or a later one, and fails. */
			release_fence();
			write_fields(*s, i);
			s->releases.fetch_add(1);
			CHECK_EQ(s->latch.unlock(), 0);
		} else if (id == 1 && i % 8 == 0) {
			CHECK_EQ(g.unlock_to(kMarked), 0);
		} else {
			CHECK_EQ(g.unlock(), 0);
		}
	}
	s->writers_left.fetch_sub(1);
}

void check_held_shared(stress &s)
{
	CHECK_EQ(s.owners.load(), 0);
	unsigned st = s.latch.state(s.word.load());
	CHECK(st >= 1 && st <= kGated + kBlocking);
	CHECK_EQ(s.a.load(std::memory_order_relaxed), s.b.load(std::memory_order_relaxed));
	s.shared_reads.fetch_add(1, std::memory_order_relaxed);
}

void gated_reader(stress *s)
{
	while (s->writing()) {
		int rc;
		{
			std::lock_guard<std::mutex> g(s->gate);
			rc = s->latch.try_lock_shared();
			if (rc == 0) {
				s->gated++;
				s->check_shared_count_gated();
			}
		}
		if (rc != 0) {
			CHECK(rc == -EBUSY || rc == -EAGAIN);
			std::this_thread::yield();
			continue;
		}
		check_held_shared(*s);
		std::lock_guard<std::mutex> g(s->gate);
		s->check_shared_count_gated();
		s->gated--;
		CHECK_EQ(s->latch.unlock_shared(), 0);
	}
}

void blocking_reader(stress *s)
{
	const timespec dl = fwait_deadline_after_ns(kBound);
	while (s->writing()) {
		fwait::hlatch_shared_guard g(s->latch, &dl);
		if (!g) {
			CHECK_EQ(g.error(), -EAGAIN);
			s->eagain.fetch_add(1, std::memory_order_relaxed);
			std::this_thread::yield();
			continue;
		}
		check_held_shared(*s);
		CHECK_EQ(g.unlock(), 0);
	}
}

void optimistic_reader(stress *s)
{
	const timespec dl = fwait_deadline_after_ns(kBound);
	while (s->writing()) {
		uint64_t a = 0, b = 0, runs = 0;
		int rc = s->latch.optimistic_read(
			[&] {
				runs++;
				a = s->a.load(std::memory_order_relaxed);
				b = s->b.load(std::memory_order_relaxed);
			},
			&dl);
		if (rc == -EAGAIN) {
			s->eagain.fetch_add(1, std::memory_order_relaxed);
			std::this_thread::yield();
			continue;
		}
		CHECK_EQ(rc, 0);
		CHECK(runs >= 1);
		CHECK_EQ(a, b);
		s->valid_reads.fetch_add(1, std::memory_order_relaxed);
		s->restarts.fetch_add(runs - 1, std::memory_order_relaxed);
	}
}

/* Item i goes by token to the one exclusive waiter a wake chose, else into
 * the pool (nobody chosen, or several under WAKE_ALL: each would receive
 * the same token). */
void producer(stress *s)
{
	for (uint64_t i = 1; i <= kItems; i++) {
		int n = fwait::wake_ex(s->t, &s->pool, 1, 0, [&](const fwait_wake_report &r) -> uint64_t {
			CHECK(r.woken_exclusive <= r.woken && r.woken <= kConsumers);
			if (r.woken == 1 && r.woken_exclusive == 1)
				return i;
			s->pool.fetch_add(1, std::memory_order_release);
			return 0;
		});
		CHECK(n >= 0);
		if (i % 8 == 0)
			std::this_thread::yield(); /* let the consumers drain and sleep */
	}
}

void consumer(stress *s, unsigned id)
{
	const timespec dl = fwait_deadline_after_ns(kBound);
	for (unsigned round = 0;; round++) {
		bool took = false;
		/* Takes an item from the pool (a CAS: safe unlocked, as
		 * FWAIT_SPIN runs it), or sees that all are consumed. */
		auto pred = [&] {
			uint64_t n = s->pool.load(std::memory_order_acquire);
			while (n != 0)
				if (s->pool.compare_exchange_weak(n, n - 1, std::memory_order_acquire,
								  std::memory_order_relaxed)) {
					took = true;
					return true;
				}
			return s->consumed.load() >= kItems;
		};
		fwait_wait_result res;
		unsigned flags = FWAIT_EXCLUSIVE | ((round + id) % 2 ? FWAIT_SPIN : 0u);
		CHECK_EQ(fwait::wait_ex(s->t, &s->pool, flags, pred, &dl, &res), 0);
		if (res.token != 0) {
			CHECK_EQ(res.how, FWAIT_HOW_WOKEN);
			CHECK(!took);
			CHECK(res.token <= kItems);
			CHECK(!s->taken[res.token].exchange(true));
			s->by_token.fetch_add(1);
		} else if (took) {
			s->from_pool.fetch_add(1);
		} else {
			CHECK(s->consumed.load() >= kItems);
			return;
		}
		/* The last item: wake the other consumer to see it. */
		if (s->consumed.fetch_add(1) + 1 == kItems)
			CHECK(fwait::wake_ex(s->t, &s->pool, FWAIT_ALL, 0,
					     [](const fwait_wake_report &) -> uint64_t { return 0; }) >= 0);
	}
}

void test_stress(fwait_table *t, const config &c)
{
	stress s(t);
	std::vector<std::thread> ts;
	for (unsigned i = 0; i < kConsumers; i++)
		ts.emplace_back(consumer, &s, i);
	for (unsigned i = 0; i < kGated; i++)
		ts.emplace_back(gated_reader, &s);
	for (unsigned i = 0; i < kBlocking; i++)
		ts.emplace_back(blocking_reader, &s);
	for (unsigned i = 0; i < kOptimistic; i++)
		ts.emplace_back(optimistic_reader, &s);
	for (unsigned i = 0; i < kWriters; i++)
		ts.emplace_back(writer, &s, i);
	ts.emplace_back(producer, &s);
	for (auto &th : ts)
		th.join();

	const uint64_t w = s.word.load();
	CHECK_EQ(s.latch.version(w), s.releases.load() & kVersionMask);
	CHECK_EQ(s.releases.load(), kWriters * kIters + kIters / 64);
	CHECK(s.latch.state(w) == 0 || s.latch.state(w) == kMarked);
	CHECK_EQ(w & kW, 0); /* nobody waits: W is clear */
	CHECK_EQ(s.a.load(), s.b.load());
	CHECK_EQ(s.a.load(), s.releases.load());
	CHECK(s.valid_reads.load() > 0);
	CHECK_EQ(s.consumed.load(), kItems);
	CHECK_EQ(s.by_token.load() + s.from_pool.load(), kItems);
	CHECK_EQ(s.pool.load(), 0);
	fwait_stats st;
	fwait_stats_get(t, &st);
	std::printf("%s: %llu shared and %llu optimistic reads (%llu restarts), %llu -EAGAIN; "
		    "items %llu by token, %llu from the pool; fwait: %llu sleeps, %llu wakeups, "
		    "%llu handoffs\n",
		    c.name, static_cast<unsigned long long>(s.shared_reads.load()),
		    static_cast<unsigned long long>(s.valid_reads.load()),
		    static_cast<unsigned long long>(s.restarts.load()),
		    static_cast<unsigned long long>(s.eagain.load()),
		    static_cast<unsigned long long>(s.by_token.load()),
		    static_cast<unsigned long long>(s.from_pool.load()),
		    static_cast<unsigned long long>(st.waits),
		    static_cast<unsigned long long>(st.wakeups),
		    static_cast<unsigned long long>(st.handoffs));
	CHECK(st.waits > 0); /* threads did sleep, so the waits were exercised */
}

} // namespace

int main()
{
	alarm(240); /* a lost wakeup: a join below never returns */
	for (const config &c : kConfigs) {
		fwait_table *t = table_of(c);
		if (t == nullptr) {
			std::printf("%s: not supported here, skipped\n", c.name);
			continue;
		}
		test_wait_lambdas(t);
		test_tokens(t, c);
		test_latch_states(t);
		test_guards(t);
		test_fixed_latch<kLayout>(t);
		test_fixed_latch<kStoreLayout>(t);
		fwait_stats_reset(t);
		/* Under BROADCAST too: its wakes choose every waiter of the
		 * bucket, and the producer's item tokens once reached the
		 * latch's waiters of the same bucket (fwait_hlatch_lock
		 * returned 0 while another thread held it); fwait_wake_ex now
		 * gives a token only to the key's own waiters. */
		test_stress(t, c);
		fwait_table_destroy(t);
		std::printf("%s: ok\n", c.name);
	}
	std::printf("ok\n");
	return 0;
}
