/* SPDX-License-Identifier: MIT */
/*
 * test_cxx.cpp - fwait and bufpool used from C++ (suite: cxx).
 *
 * Built once per C++ standard the compiler has (tests/cxx/meson.build).
 * std::atomic<uint32_t> words go through fwait_bit_* from several
 * std::thread threads under every policy (a lost-update check of a counter
 * under fwait::bit_lock_guard, event bits set and cleared alongside, a
 * parked fwait_bit_wait woken by fwait_bit_clear, a keyed wait with a
 * lambda as its ready function), and a bufpool pool on a temporary file is
 * written and read back under bufpool::page_guard.  A std::atomic<uint64_t>
 * word goes through fwait_bit64_lock/unlock the same way.  Every fwait wait is
 * bounded by a deadline; bufpool waits are bounded by the test's timeout.
 * Loop counts are fixed; nothing sleeps to synchronise.  A failed check
 * prints what failed and exits 1.
 */
#include "fwait/fwait.hpp"
#include "bufpool/bufpool.hpp"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "layout.h"
#include "check.hpp"

/* ---- checks ------------------------------------------------------------ */


/* ---- the C and the C++ view of the headers agree ---------------------- */

static_assert(std::is_same<fwait_atomic_u32, std::atomic<uint32_t> >::value,
	      "C++ word type is std::atomic<uint32_t>");
static_assert(sizeof(fwait_atomic_u32) == 4 && alignof(fwait_atomic_u32) == 4,
	      "word is 4 bytes, 4-aligned, as C's _Atomic uint32_t");
static_assert(sizeof(bool) == 1, "bool members are one byte, as C's _Bool");
static_assert(std::is_same<decltype(&fwait_bit_lock),
			   int (*)(fwait_table *, std::atomic<uint32_t> *, unsigned,
				   const timespec *)>::value,
	      "fwait_bit_lock takes a std::atomic<uint32_t> *");
static_assert(std::is_same<decltype(&fwait_bit_test),
			   bool (*)(const std::atomic<uint32_t> *, unsigned)>::value,
	      "fwait_bit_test takes a const std::atomic<uint32_t> *");
static_assert(std::is_same<fwait_atomic_u64, std::atomic<uint64_t> >::value,
	      "C++ 64-bit word type is std::atomic<uint64_t>");
static_assert(sizeof(fwait_atomic_u64) == 8 && alignof(fwait_atomic_u64) == 8,
	      "64-bit word is 8 bytes, 8-aligned, as C's _Atomic uint64_t");
static_assert(std::is_same<decltype(&fwait_bit64_lock),
			   int (*)(fwait_table *, std::atomic<uint64_t> *, unsigned,
				   const timespec *)>::value,
	      "fwait_bit64_lock takes a std::atomic<uint64_t> *");
static_assert(std::is_standard_layout<fwait_waiter_info>::value &&
		      std::is_standard_layout<fwait_stats>::value &&
		      std::is_standard_layout<bp_config>::value &&
		      std::is_standard_layout<bp_stats>::value &&
		      std::is_standard_layout<bp_frame_info>::value,
	      "the public structs are standard-layout in C++");
static_assert(!std::is_copy_constructible<fwait::bit_lock_guard>::value &&
		      !std::is_copy_constructible<fwait::bit64_lock_guard>::value &&
		      !std::is_copy_assignable<fwait::bit_lock_guard>::value &&
		      !std::is_copy_constructible<bufpool::page_guard>::value &&
		      !std::is_copy_assignable<bufpool::page_guard>::value &&
		      !std::is_copy_constructible<bufpool::pool>::value &&
		      !std::is_copy_constructible<fwait::table>::value,
	      "the guards and owners are not copyable");
static_assert(std::is_nothrow_move_constructible<bufpool::page_guard>::value &&
		      std::is_nothrow_move_assignable<bufpool::page_guard>::value &&
		      std::is_nothrow_move_constructible<bufpool::pool>::value &&
		      std::is_nothrow_move_assignable<fwait::table>::value,
	      "the guards and owners move");

#define LAYOUT_VALUE(e) (e),
#define LAYOUT_NAME(e) #e,
static const size_t layout_cxx[] = { LAYOUT_ITEMS(LAYOUT_VALUE) };
static const char *const layout_names[] = { LAYOUT_ITEMS(LAYOUT_NAME) };

static void test_layout()
{
	const size_t n = sizeof(layout_cxx) / sizeof(layout_cxx[0]);
	CHECK_EQ(cxx_layout_c_count, n);
	for (size_t i = 0; i < n; i++) {
		if (cxx_layout_c[i] != layout_cxx[i]) {
			std::fprintf(stderr, "layout: %s is %zu in C, %zu in C++\n",
				     layout_names[i], cxx_layout_c[i], layout_cxx[i]);
			CHECK_EQ(cxx_layout_c[i], layout_cxx[i]);
		}
	}

	/* C code and C++ code on one word. */
	fwait_atomic_u32 w(0x10u);
	CHECK_EQ(cxx_c_fetch_or(&w, 0x3u), 0x10u);
	CHECK_EQ(w.load(), 0x13u);
	w.fetch_and(~0x1u);
	CHECK_EQ(cxx_c_load(&w), 0x12u);
	CHECK(fwait_bit_test(&w, 1));
	CHECK(!fwait_bit_test(&w, 0));
}

/* ---- fwait ------------------------------------------------------------- */

static const unsigned kThreads = 4;
static const unsigned kIters = 2000;
static const unsigned kLockBit = 3;
static const unsigned kEventBit = 5;
static const unsigned kWaitBit = 7;
static const uint64_t kBound = UINT64_C(30000000000); /* 30 s, in ns */

static fwait_table *table_of(fwait_policy policy)
{
	fwait_config cfg = {};
	cfg.policy = policy;
	cfg.nbuckets = 4; /* few buckets: keys share them */
	fwait_table *t = nullptr;
	int r = fwait_table_create(&t, &cfg);
	if (r == -ENOTSUP && policy == FWAIT_FUTEX)
		return nullptr;
	CHECK_EQ(r, 0);
	CHECK(t != nullptr);
	return t;
}

/* The same lost-update check on a std::atomic<uint64_t> word under
 * fwait::bit64_lock_guard (fwait_bit64_lock/unlock), on a bit of the high half (40) while a bit of
 * the low half (3) is held by main all along: neither disturbs the other. */
static void test_bit64_lock(fwait_table *t)
{
	const unsigned kBit = 40, kOther = 3;
	fwait_atomic_u64 word(0);
	uint64_t counter = 0; /* guarded by (word, kBit) */
	const timespec dl = fwait_deadline_after_ns(kBound);

	CHECK_EQ(fwait_bit64_trylock(&word, kOther), 0);
	std::vector<std::thread> threads;
	for (unsigned i = 0; i < kThreads; i++) {
		threads.emplace_back([&] {
			for (unsigned n = 0; n < kIters; n++) {
				fwait::bit64_lock_guard g(t, word, kBit, &dl);
				CHECK_EQ(g.error(), 0);
				CHECK(fwait_bit64_test(&word, kBit));
				uint64_t c = counter;
				if (n % 8 == 0)
					std::this_thread::yield();
				counter = c + 1;
				CHECK_EQ(g.unlock(), 0);
			}
		});
	}
	for (std::thread &th : threads)
		th.join();
	CHECK_EQ(counter, static_cast<uint64_t>(kThreads) * kIters);
	CHECK_EQ(word.load() & ~FWAIT64_WAITERS_MASK, UINT64_C(1) << kOther);
	CHECK_EQ(fwait_bit64_unlock(t, &word, kOther), 0);
	CHECK_EQ(fwait_bit64_unlock(t, &word, kOther), -EPERM);
	CHECK_EQ(fwait_bit64_lock(t, &word, FWAIT64_WAITERS_BIT, nullptr), -EINVAL);
	{
		fwait::bit64_lock_guard bad(t, word, FWAIT64_WAITERS_BIT);
		CHECK(!bad);
		CHECK_EQ(bad.error(), -EINVAL);
		/* Bit 40 through the guard, and a second guard timing out. */
		fwait::bit64_lock_guard g(t, word, kBit);
		CHECK(g);
		CHECK_EQ(fwait_bit64_trylock(&word, kBit), -EBUSY);
		const timespec past = fwait_deadline_after_ns(0);
		fwait::bit64_lock_guard g2(t, word, kBit, &past);
		CHECK_EQ(g2.error(), -ETIMEDOUT);
	}
	CHECK(!fwait_bit64_test(&word, kBit)); /* released by g's destructor */
	CHECK_EQ(word.load() & ~FWAIT64_WAITERS_MASK, 0u);
}

/* kThreads threads add 1 to a plain counter kIters times each under
 * fwait::bit_lock_guard on (word, kLockBit), with a yield inside the
 * critical section now and then; one more thread sets and clears an event
 * bit of the same word all along.  No update may be lost, no bit clobbered. */
static void test_bit_lock(fwait_table *t)
{
	fwait_atomic_u32 word(0);
	uint64_t counter = 0; /* guarded by (word, kLockBit) */
	const timespec dl = fwait_deadline_after_ns(kBound);

	std::vector<std::thread> threads;
	for (unsigned i = 0; i < kThreads; i++) {
		threads.emplace_back([&] {
			for (unsigned n = 0; n < kIters; n++) {
				fwait::bit_lock_guard g(t, word, kLockBit, &dl);
				CHECK_EQ(g.error(), 0);
				CHECK(g.owns_lock());
				CHECK(fwait_bit_test(&word, kLockBit));
				uint64_t c = counter;
				if (n % 8 == 0)
					std::this_thread::yield();
				counter = c + 1;
			}
		});
	}
	threads.emplace_back([&] {
		for (unsigned n = 0; n < kIters; n++) {
			CHECK(!fwait_bit_set(&word, kEventBit));
			CHECK(fwait_bit_test(&word, kEventBit));
			CHECK_EQ(fwait_bit_clear(t, &word, kEventBit), 0);
		}
	});
	for (std::thread &th : threads)
		th.join();

	CHECK_EQ(counter, static_cast<uint64_t>(kThreads) * kIters);
	CHECK_EQ(word.load() & ~FWAIT_WAITERS_MASK, 0u);

	/* The guard's other paths, and the C calls next to it. */
	{
		fwait::bit_lock_guard g(t, word, kLockBit);
		CHECK(g);
		CHECK_EQ(fwait_bit_trylock(&word, kLockBit), -EBUSY);
		/* Held: a guard with a passed deadline times out, holds nothing,
		 * and its destructor leaves the bit alone. */
		const timespec past = fwait_deadline_after_ns(0);
		{
			fwait::bit_lock_guard g2(t, word, kLockBit, &past);
			CHECK(!g2);
			CHECK_EQ(g2.error(), -ETIMEDOUT);
			CHECK_EQ(g2.unlock(), 0);
		}
		CHECK(fwait_bit_test(&word, kLockBit));
		CHECK_EQ(g.unlock(), 0);
		CHECK(!g.owns_lock());
		CHECK(!fwait_bit_test(&word, kLockBit));
		CHECK_EQ(g.unlock(), 0); /* nothing held: a no-op */
		CHECK_EQ(fwait_bit_trylock(&word, kLockBit), 0);
		CHECK_EQ(fwait_bit_unlock(t, &word, kLockBit), 0);
		CHECK_EQ(fwait_bit_unlock(t, &word, kLockBit), -EPERM);
	}
	{
		fwait::bit_lock_guard bad(t, word, FWAIT_WAITERS_BIT);
		CHECK(!bad);
		CHECK_EQ(bad.error(), -EINVAL);
	}
	CHECK_EQ(word.load() & ~FWAIT_WAITERS_MASK, 0u);
}

struct parked_count {
	const void *key;
	int bit;
	unsigned n;
};

/* Waits (yielding, bounded) until a waiter is asleep on (word, bit): seen
 * by fwait_waiters_walk, or under FWAIT_FUTEX (which sleeps on the word, not
 * in the table) counted in the stats just before its futex call. */
static void wait_parked(fwait_table *t, const fwait_atomic_u32 &word, unsigned bit)
{
	const timespec dl = fwait_deadline_after_ns(kBound);
	for (;;) {
		if (fwait_table_policy(t) == FWAIT_FUTEX) {
			fwait_stats s;
			fwait_stats_get(t, &s);
			if (s.waits >= 1)
				return;
		} else {
			parked_count pc = { &word, static_cast<int>(bit), 0 };
			int r = fwait_waiters_walk(
				t,
				[](const fwait_waiter_info *w, void *arg) -> int {
					parked_count *p = static_cast<parked_count *>(arg);
					if (w->key == p->key && w->bit == p->bit && !w->exclusive)
						p->n++;
					return 0;
				},
				&pc);
			CHECK_EQ(r, 0);
			if (pc.n == 1)
				return;
		}
		timespec now = fwait_deadline_after_ns(0);
		CHECK(now.tv_sec < dl.tv_sec ||
		      (now.tv_sec == dl.tv_sec && now.tv_nsec < dl.tv_nsec));
		std::this_thread::yield();
	}
}

/* A thread parks in fwait_bit_wait on an event bit; fwait_bit_clear wakes
 * it. */
static void test_bit_wait(fwait_table *t)
{
	fwait_atomic_u32 word(0);
	fwait_stats_reset(t);
	CHECK(!fwait_bit_set(&word, kWaitBit));
	std::atomic<int> result(1);
	const timespec dl = fwait_deadline_after_ns(kBound);
	std::thread waiter([&] { result.store(fwait_bit_wait(t, &word, kWaitBit, &dl)); });
	wait_parked(t, word, kWaitBit);
	CHECK_EQ(result.load(), 1); /* still waiting: the bit is set */
	CHECK_EQ(fwait_bit_clear(t, &word, kWaitBit), 0);
	waiter.join();
	CHECK_EQ(result.load(), 0);
	CHECK(!fwait_bit_test(&word, kWaitBit));
	/* Clear bit: returns at once. */
	CHECK_EQ(fwait_bit_wait(t, &word, kWaitBit, nullptr), 0);
}

/* A keyed wait whose ready function is a captureless lambda. */
static void test_keyed(fwait_table *t)
{
	std::atomic<int> flag(0);
	std::atomic<int> result(1);
	const timespec dl = fwait_deadline_after_ns(kBound);
	std::thread waiter([&] {
		result.store(fwait_wait(
			t, &flag, FWAIT_EXCLUSIVE,
			[](void *arg) -> bool {
				return static_cast<std::atomic<int> *>(arg)->load() != 0;
			},
			&flag, &dl));
	});
	flag.store(1);
	int woken = fwait_wake(t, &flag, 1);
	CHECK(woken == 0 || woken == 1);
	waiter.join();
	CHECK_EQ(result.load(), 0);
}

static void test_fwait()
{
	{
		/* fwait::table owns its table: created, moved, destroyed. */
		fwait::table a;
		CHECK(!a);
		fwait_config bad = fwait_config();
		bad.policy = FWAIT_POLICY_COUNT;
		CHECK_EQ(a.create(&bad), -EINVAL);
		CHECK(!a);
		CHECK_EQ(a.create(), 0);
		fwait_table *raw = a.get();
		CHECK(raw != nullptr);
		fwait::table b(std::move(a));
		CHECK(!a && b.get() == raw);
		std::atomic<uint32_t> w(0);
		{
			fwait::bit_lock_guard g(b.get(), w, 0);
			CHECK(g);
		}
		b.reset();
		CHECK(!b);
	}
	for (int p = 0; p < FWAIT_POLICY_COUNT; p++) {
		fwait_policy policy = static_cast<fwait_policy>(p);
		fwait_table *t = table_of(policy);
		if (t == nullptr) {
			std::printf("fwait %s: not supported here, skipped\n",
				    fwait_policy_name(policy));
			continue;
		}
		CHECK_EQ(fwait_table_policy(t), policy);
		test_bit_lock(t);
		test_bit64_lock(t);
		test_bit_wait(t);
		test_keyed(t);
		fwait_table_destroy(t);
		std::printf("fwait %s: ok\n", fwait_policy_name(policy));
	}
}

/* ---- bufpool ----------------------------------------------------------- */

static const uint32_t kPageSize = 4096;
static const unsigned kWriters = 4;
static const unsigned kReaders = 2;
static const unsigned kWrites = 200;

/* Page layout of the test: a 64-bit counter at offset 0 and its copy at
 * the end of the page (a reader under a shared latch must see them equal),
 * a fill byte in between. */
static uint64_t get_u64(const void *page, size_t off)
{
	uint64_t v;
	std::memcpy(&v, static_cast<const unsigned char *>(page) + off, sizeof v);
	return v;
}

static void put_u64(void *page, size_t off, uint64_t v)
{
	std::memcpy(static_cast<unsigned char *>(page) + off, &v, sizeof v);
}

static const size_t kCopyOff = kPageSize - sizeof(uint64_t);

static void check_page(bp_pool *pool, uint64_t pageno, unsigned char fill,
		       uint64_t counter)
{
	bufpool::page_guard g(pool, pageno, BP_LATCH_SHARED);
	CHECK_EQ(g.error(), 0);
	CHECK(g);
	CHECK_EQ(g.pageno(), pageno);
	CHECK_EQ(g.mode(), BP_LATCH_SHARED);
	const unsigned char *d = static_cast<const unsigned char *>(g.data());
	CHECK(d != nullptr);
	CHECK_EQ(get_u64(d, 0), counter);
	CHECK_EQ(get_u64(d, kCopyOff), counter);
	for (size_t i = sizeof(uint64_t); i < kCopyOff; i++)
		if (d[i] != fill)
			CHECK_EQ(d[i], fill);
}

static void check_unpinned(bp_pool *pool)
{
	bp_stats s;
	bp_stats_init(&s);
	CHECK_EQ(bp_stats_get(pool, &s), 0);
	CHECK_EQ(s.frames_pinned, 0);
}

static bp_pool *open_pool(const std::string &path, unsigned flags)
{
	bp_config cfg;
	bp_config_init(&cfg);
	cfg.path = path.c_str();
	cfg.flags = flags;
	cfg.page_size = kPageSize;
	cfg.nframes = 8;
	cfg.io_threads = 1;
	bp_pool *pool = nullptr;
	CHECK_EQ(bp_open(&pool, &cfg), 0);
	CHECK(pool != nullptr);
	return pool;
}

static void test_bufpool()
{
	const char *tmp = std::getenv("TMPDIR");
	std::string tmpl = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
			   "/fwait-cxx-XXXXXX";
	std::vector<char> dirbuf(tmpl.begin(), tmpl.end());
	dirbuf.push_back('\0');
	CHECK(mkdtemp(dirbuf.data()) != nullptr);
	const std::string dir(dirbuf.data());
	const std::string path = dir + "/pages";

	bp_pool *pool = open_pool(path, BP_OPEN_CREATE | BP_OPEN_TRUNCATE);
	CHECK_EQ(bp_page_count(pool), 0);

	/* Page 0 by bp_new_page (C), written under an exclusive page_guard. */
	uint64_t pageno = BP_NO_PAGE;
	bp_frame *f = nullptr;
	CHECK_EQ(bp_new_page(pool, &pageno, &f), 0);
	CHECK_EQ(pageno, 0);
	CHECK_EQ(bp_release(pool, f), 0);
	{
		bufpool::page_guard g(pool, 0, BP_LATCH_EXCLUSIVE);
		CHECK_EQ(g.error(), 0);
		CHECK(g);
		CHECK(g.frame() != nullptr);
		std::memset(g.data(), 0xa5, kPageSize);
		put_u64(g.data(), 0, 0);
		put_u64(g.data(), kCopyOff, 0);
		CHECK_EQ(g.mark_dirty(), 0);
	}
	/* Page 1 created by the guard itself (BP_GET_CREATE at the count). */
	{
		bufpool::page_guard g(pool, 1, BP_LATCH_EXCLUSIVE, BP_GET_CREATE);
		CHECK_EQ(g.error(), 0);
		std::memset(g.data(), 0x3c, kPageSize);
		put_u64(g.data(), 0, 77);
		put_u64(g.data(), kCopyOff, 77);
		CHECK_EQ(g.mark_dirty(), 0);
	}
	check_unpinned(pool);
	CHECK_EQ(bp_page_count(pool), 2);
	check_page(pool, 0, 0xa5, 0);
	check_page(pool, 1, 0x3c, 77);

	/* Failure: reported, nothing held, the destructor does nothing. */
	{
		bufpool::page_guard g(pool, 1000, BP_LATCH_SHARED);
		CHECK(!g);
		CHECK_EQ(g.error(), -ENXIO);
		CHECK(g.frame() == nullptr);
		CHECK(g.data() == nullptr);
		CHECK_EQ(g.pageno(), BP_NO_PAGE);
		CHECK_EQ(g.mark_dirty(), -EINVAL);
		CHECK_EQ(g.release(), 0);
	}
	{
		bufpool::page_guard g(pool, 0, static_cast<bp_latch_mode>(3));
		CHECK_EQ(g.error(), -EINVAL); /* bp_latch refused; pin dropped */
		CHECK(!g);
	}
	check_unpinned(pool);

	/* release() early: the page can be evicted (written back) at once. */
	{
		bufpool::page_guard g(pool, 0, BP_LATCH_SHARED);
		CHECK(g);
		CHECK_EQ(bp_evict_page(pool, 0), -EBUSY);
		CHECK_EQ(g.release(), 0);
		CHECK(!g);
		CHECK_EQ(g.release(), 0);
		CHECK_EQ(bp_evict_page(pool, 0), 0);
	}
	check_page(pool, 0, 0xa5, 0); /* read back from the file */

	/* Lost-update check through the page: writers add 1 under exclusive
	 * guards, readers check the two copies agree under shared ones. */
	std::vector<std::thread> threads;
	for (unsigned i = 0; i < kWriters; i++) {
		threads.emplace_back([pool] {
			for (unsigned n = 0; n < kWrites; n++) {
				bufpool::page_guard g(pool, 0, BP_LATCH_EXCLUSIVE);
				CHECK_EQ(g.error(), 0);
				uint64_t c = get_u64(g.data(), 0);
				if (n % 8 == 0)
					std::this_thread::yield();
				put_u64(g.data(), 0, c + 1);
				put_u64(g.data(), kCopyOff, c + 1);
				CHECK_EQ(g.mark_dirty(), 0);
			}
		});
	}
	for (unsigned i = 0; i < kReaders; i++) {
		threads.emplace_back([pool] {
			for (unsigned n = 0; n < kWrites; n++) {
				bufpool::page_guard g(pool, 0, BP_LATCH_SHARED);
				CHECK_EQ(g.error(), 0);
				CHECK_EQ(get_u64(g.data(), 0), get_u64(g.data(), kCopyOff));
			}
		});
	}
	for (std::thread &th : threads)
		th.join();
	const uint64_t total = static_cast<uint64_t>(kWriters) * kWrites;
	check_page(pool, 0, 0xa5, total);
	check_unpinned(pool);
	CHECK_EQ(bp_flush(pool), 0);
	CHECK_EQ(bp_close(pool), 0);

	/* Reopened through bufpool::pool: what was written is in the file;
	 * a guard moves out of its scope and keeps the page, and a move
	 * assignment releases the target's page first. */
	{
		bufpool::pool owner;
		CHECK(!owner);
		CHECK_EQ(owner.close(), 0);
		bp_config cfg;
		bp_config_init(&cfg);
		cfg.path = path.c_str();
		cfg.page_size = kPageSize;
		cfg.nframes = 8;
		CHECK_EQ(owner.open(cfg), 0);
		CHECK_EQ(owner.open(cfg), -EBUSY);
		CHECK_EQ(bp_page_count(owner.get()), 2);
		check_page(owner.get(), 0, 0xa5, total);
		check_page(owner.get(), 1, 0x3c, 77);
		bufpool::page_guard moved(owner.get(), 1000, BP_LATCH_SHARED); /* holds nothing */
		{
			bufpool::page_guard g(owner.get(), 0, BP_LATCH_SHARED);
			CHECK(g);
			moved = std::move(g);
			CHECK(!g);
		}
		CHECK(moved);
		CHECK_EQ(moved.pageno(), 0);
		CHECK_EQ(bp_evict_page(owner.get(), 0), -EBUSY); /* still pinned */
		bufpool::page_guard other(owner.get(), 1, BP_LATCH_SHARED);
		moved = std::move(other); /* releases page 0 first */
		CHECK_EQ(moved.pageno(), 1);
		CHECK_EQ(bp_evict_page(owner.get(), 0), 0);
		CHECK_EQ(owner.close(), -EBUSY); /* page 1 is pinned: still open */
		CHECK(owner);
		CHECK_EQ(moved.release(), 0);
		bufpool::pool second(std::move(owner));
		CHECK(!owner && second);
		CHECK_EQ(second.close(), 0);
		CHECK(!second);
		CHECK_EQ(second.open(cfg), 0); /* the destructor closes it */
	}

	CHECK_EQ(unlink(path.c_str()), 0);
	CHECK_EQ(rmdir(dir.c_str()), 0);
	std::printf("bufpool: ok\n");
}

int main()
{
	std::printf("C++ %ld\n", static_cast<long>(__cplusplus));
	test_layout();
	test_fwait();
	test_bufpool();
	return 0;
}
