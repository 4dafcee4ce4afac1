/* SPDX-License-Identifier: MIT */
/*
 * test_until.cpp - fwait::until, the C++20 awaitable over
 * fwait_wait_async (suites cxx and fwait: the sanitizer builds run it).
 *
 * Design note: coroutines run on a minimal executor (a run queue under a
 * mutex, two threads that pop and resume; the woken coroutines come back
 * through the awaitable's resume callable, which pushes them).  The
 * executor's threads never block in fwait: every wait is a co_await.  Many
 * tasks take a lock word inside pred() (the take under the bucket lock),
 * count under it, hold it across a trip through the run queue (so the
 * others find it held and queue) and release it (store, then fwait_wake
 * of one); the
 * checks are mutual exclusion, the exact count, every task finished
 * within the deadline (a lost wake strands a task), and nothing left
 * queued.  main waits for the tasks on a condition variable with a
 * deadline.  A failed check prints what failed and exits 1.
 */
#include "fwait/fwait.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <coroutine>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#ifndef FWAIT_HAVE_COROUTINES
#error "test_until.cpp needs C++20 coroutines (tests/cxx/meson.build builds it only then)"
#endif

#define CHECK(c)                                                                    \
	do {                                                                        \
		if (!(c)) {                                                         \
			std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
				     __LINE__, #c);                                 \
			std::exit(1);                                               \
		}                                                                   \
	} while (0)

namespace {

/* A coroutine started by the executor and destroyed when it ends. */
struct task {
	struct promise_type {
		task get_return_object() noexcept
		{
			return task{ std::coroutine_handle<promise_type>::from_promise(*this) };
		}
		std::suspend_always initial_suspend() noexcept { return {}; }
		std::suspend_never final_suspend() noexcept { return {}; }
		void return_void() noexcept {}
		void unhandled_exception() noexcept { std::abort(); }
	};
	std::coroutine_handle<promise_type> h;
};

class executor {
public:
	explicit executor(unsigned nthreads)
	{
		for (unsigned i = 0; i < nthreads; i++)
			threads_.emplace_back([this] { run(); });
	}
	~executor()
	{
		{
			std::lock_guard<std::mutex> g(m_);
			stop_ = true;
		}
		cv_.notify_all();
		for (std::thread &t : threads_)
			t.join();
	}
	void push(std::coroutine_handle<> h)
	{
		{
			std::lock_guard<std::mutex> g(m_);
			q_.push_back(h);
		}
		cv_.notify_one();
	}

private:
	void run()
	{
		for (;;) {
			std::coroutine_handle<> h;
			{
				std::unique_lock<std::mutex> g(m_);
				cv_.wait(g, [this] { return stop_ || !q_.empty(); });
				if (q_.empty())
					return;
				h = q_.front();
				q_.pop_front();
			}
			h.resume();
		}
	}
	std::mutex m_;
	std::condition_variable cv_;
	std::deque<std::coroutine_handle<>> q_;
	bool stop_ = false;
	std::vector<std::thread> threads_;
};

/* co_await: go to the back of the executor's run queue. */
struct reschedule {
	executor *ex;
	bool await_ready() const noexcept { return false; }
	void await_suspend(std::coroutine_handle<> h) const { ex->push(h); }
	void await_resume() const noexcept {}
};

struct shared_state {
	fwait_table *t = nullptr;
	executor *ex = nullptr;
	fwait_atomic_u32 lock{ 0 };
	std::atomic<int> holders{ 0 };
	std::atomic<int> bad{ 0 };
	std::atomic<int> rc_bad{ 0 };
	uint64_t count = 0; /* guarded by lock */
	std::mutex done_m;
	std::condition_variable done_cv;
	unsigned done = 0; /* guarded by done_m */
};

task worker(shared_state *s, unsigned iters)
{
	for (unsigned n = 0; n < iters; n++) {
		int rc = co_await fwait::until(
			s->t, &s->lock, FWAIT_EXCLUSIVE,
			[s] {
				uint32_t v = 0;
				return s->lock.compare_exchange_strong(v, 1);
			},
			[s](std::coroutine_handle<> h) { s->ex->push(h); });
		if (rc != 0) {
			s->rc_bad.store(rc);
			break;
		}
		if (s->holders.fetch_add(1) != 0)
			s->bad.store(1);
		s->count++;
		/* Hold the lock across a trip through the run queue, so that
		 * the other tasks find it held and wait for it. */
		co_await reschedule{ s->ex };
		s->holders.fetch_sub(1);
		s->lock.store(0);
		fwait_wake(s->t, &s->lock, 1);
	}
	std::lock_guard<std::mutex> g(s->done_m);
	s->done++;
	s->done_cv.notify_all();
}

void many_tasks_share_a_lock()
{
	const unsigned ntasks = 200, iters = 50;
	shared_state s;
	fwait_config cfg = {};
	cfg.policy = FWAIT_WAKE_ONE;
	CHECK(fwait_table_create(&s.t, &cfg) == 0);
	{
		executor ex(2);
		s.ex = &ex;
		for (unsigned i = 0; i < ntasks; i++)
			ex.push(worker(&s, iters).h);
		std::unique_lock<std::mutex> g(s.done_m);
		bool all = s.done_cv.wait_for(g, std::chrono::seconds(60),
					      [&] { return s.done == ntasks; });
		if (!all)
			std::fprintf(stderr, "only %u of %u tasks finished\n", s.done, ntasks);
		CHECK(all);
	}
	CHECK(s.rc_bad.load() == 0);
	CHECK(s.bad.load() == 0);
	CHECK(s.count == (uint64_t)ntasks * iters);
	CHECK(s.lock.load() == 0);
	fwait_stats st;
	fwait_stats_get(s.t, &st);
	std::printf("until: %u tasks x %u on 2 threads: %llu waits queued, %llu wakeups\n", ntasks,
		    iters, (unsigned long long)st.waits, (unsigned long long)st.wakeups);
	CHECK(st.waits > 0); /* the tasks did queue: the asynchronous path ran */
	fwait_table_destroy(s.t);
}

task await_once(fwait_table *t, const void *key, bool *ready, int *rc, bool *finished)
{
	*rc = co_await fwait::until(
		t, key, 0, [ready] { return *ready; },
		[](std::coroutine_handle<> h) { h.resume(); });
	*finished = true;
}

/* Ready at once: the coroutine never suspends; a null key: -EINVAL,
 * without suspending either; not ready: suspended until a wake, then
 * resumed (here inline, by the resume callable, inside fwait_wake). */
void ready_now_bad_key_and_one_wake()
{
	fwait_table *t = nullptr;
	CHECK(fwait_table_create(&t, nullptr) == 0);
	int key = 0, rc = 1;
	bool ready = true, finished = false;
	task a = await_once(t, &key, &ready, &rc, &finished);
	a.h.resume();
	CHECK(finished && rc == 0);

	rc = 1;
	finished = false;
	task b = await_once(t, nullptr, &ready, &rc, &finished);
	b.h.resume();
	CHECK(finished && rc == -EINVAL);

	rc = 1;
	finished = false;
	ready = false;
	task c = await_once(t, &key, &ready, &rc, &finished);
	c.h.resume();
	CHECK(!finished);
	CHECK(fwait_wake(t, &key, FWAIT_ALL) == 1); /* woken: ready() still false */
	CHECK(!finished);                           /* queued again, not resumed */
	ready = true;
	CHECK(fwait_wake(t, &key, FWAIT_ALL) == 1);
	CHECK(finished && rc == 0);
	fwait_table_destroy(t);
}

} // namespace

int main()
{
	ready_now_bad_key_and_one_wake();
	many_tasks_share_a_lock();
	std::printf("test_until: ok\n");
	return 0;
}
