/*
 * test_version_lock.cpp - the version lock of tools/examples/version_lock.hpp
 * under stress: writers never overlap (a two-field invariant and an exact
 * count), an optimistic read that validates saw a consistent snapshot, a
 * read that overlapped a writer fails validation, and nobody is left
 * asleep.  Also run by the sanitizer builds (suite fwait), so TSan checks
 * the seqlock's orders and fwait's.
 *
 * Design note: the guarded data is two guarded<uint64_t> fields a and b,
 * which every writer sets to the same new value, a first, a busy pause,
 * then b: a reader that validates must see a == b.  Every wait is fwait's
 * with no deadline; a lost wakeup shows as the join never returning, which
 * the test's alarm() turns into a failure.
 */
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include <unistd.h>

#include "../../tools/examples/version_lock.hpp"

using fwait::example::guarded;
using fwait::example::version_lock;

#define CHECK(cond)                                                                   \
	do {                                                                          \
		if (!(cond)) {                                                        \
			std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
				     #cond);                                          \
			std::exit(1);                                                 \
		}                                                                     \
	} while (0)

namespace {

struct shared {
	explicit shared(fwait_table *t) : lock(t) {}
	version_lock lock;
	guarded<uint64_t> a, b;
	std::atomic<bool> writers_done{false};
	std::atomic<uint64_t> valid_reads{0}, failed_reads{0}, torn{0};
};

void writer(shared *s, unsigned iters)
{
	for (unsigned i = 0; i < iters; i++) {
		CHECK(s->lock.lock() == 0);
		uint64_t v = s->a.load() + 1;
		s->a.store(v);
		for (volatile int k = 0; k < 50; k++)
			;
		if (i % 16 == 0)
			std::this_thread::yield(); /* a writer preempted in the lock */
		s->b.store(v);
		s->lock.unlock();
	}
}

void reader(shared *s)
{
	while (!s->writers_done.load(std::memory_order_relaxed)) {
		uint64_t v = s->lock.read_begin();
		uint64_t a = s->a.load(), b = s->b.load();
		if (s->lock.validate(v)) {
			s->valid_reads.fetch_add(1, std::memory_order_relaxed);
			if (a != b)
				s->torn.fetch_add(1, std::memory_order_relaxed);
		} else {
			s->failed_reads.fetch_add(1, std::memory_order_relaxed);
		}
	}
}

} // namespace

int main()
{
	alarm(120); /* a lost wakeup: the joins below never return */
#if defined(__SANITIZE_THREAD__)
	const unsigned nwriters = 8, nreaders = 4, iters = 2000;
#else
	const unsigned nwriters = 32, nreaders = 8, iters = 5000;
#endif
	fwait_table *t = nullptr;
	CHECK(fwait_table_create(&t, nullptr) == 0);
	shared s(t);

	/* A read across a writer fails; one after it succeeds. */
	uint64_t v0 = s.lock.read_begin();
	CHECK(s.lock.try_lock());
	CHECK(!s.lock.try_lock());
	s.lock.unlock();
	CHECK(!s.lock.validate(v0));
	CHECK(s.lock.validate(s.lock.read_begin()));
	CHECK(s.lock.raw() == 2); /* version 1, not held */

	std::vector<std::thread> ws, rs;
	for (unsigned i = 0; i < nreaders; i++)
		rs.emplace_back(reader, &s);
	for (unsigned i = 0; i < nwriters; i++)
		ws.emplace_back(writer, &s, iters);
	for (auto &w : ws)
		w.join();
	s.writers_done.store(true);
	for (auto &r : rs)
		r.join();

	CHECK(s.a.load() == (uint64_t)nwriters * iters);
	CHECK(s.b.load() == s.a.load());
	CHECK(s.torn.load() == 0);
	CHECK(s.valid_reads.load() > 0);
	/* Every release bumped the version once: the try_lock above, then
	 * one per writer iteration. */
	CHECK(s.lock.raw() == 2 * (1 + (uint64_t)nwriters * iters));
	fwait_stats st;
	fwait_stats_get(t, &st);
	std::printf("version lock: %llu valid reads, %llu restarted; fwait: %llu sleeps, "
		    "%llu wakeups, %llu slow wakes\n",
		    (unsigned long long)s.valid_reads.load(), (unsigned long long)s.failed_reads.load(),
		    (unsigned long long)st.waits, (unsigned long long)st.wakeups,
		    (unsigned long long)st.slow_wakes);
	CHECK(st.waits > 0); /* the writers did park, so the waits were exercised */
	fwait_table_destroy(t);
	std::printf("ok\n");
	return 0;
}
