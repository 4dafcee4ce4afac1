/*
 * version_lock_bench.cpp - the version lock of version_lock.hpp against the
 * same lock word waited for by spinning and by std::atomic::wait
 * (libstdc++'s futex-based wait), in the three hold regimes.
 *
 * Design note: T threads take one lock exclusively, hold it (no hold; a
 * compute hold of -C ns spinning on the clock; a sleeping hold of -H us),
 * release it, for -d seconds per variant, one variant after the other in
 * one process.  Each variant keeps the same word layout (bit 0 held,
 * version above) and differs only in how a thread waits for a held lock:
 *   fwait   version_lock: fwait_wait on the word's key, fwait_wake(1)
 *   atomic  word.wait(seen) and word.notify_one() after every release
 *   spin    pause-loop on the word, sched_yield every 64 rounds
 * Printed per variant: acquisitions/s, CPU us per acquisition
 * (getrusage, the whole process), the workers' voluntary context
 * switches per acquisition (how often a thread parked: each worker's
 * RUSAGE_THREAD, so the main thread's sleep and joins are not counted),
 * the process's involuntary ones, and the
 * fewest acquisitions of one thread over the mean (fairness).
 */
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>
#include <vector>

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include "version_lock.hpp"

namespace {

uint64_t now_ns()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

inline void cpu_relax()
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

constexpr uint64_t locked = 1, version_one = 2;

struct spin_lock {
	std::atomic<uint64_t> word{0};
	void lock()
	{
		for (unsigned i = 1;; i++) {
			uint64_t v = word.load(std::memory_order_relaxed);
			if (!(v & locked) && word.compare_exchange_weak(v, v | locked,
					std::memory_order_acquire, std::memory_order_relaxed))
				return;
			if (i % 64 == 0)
				sched_yield();
			else
				cpu_relax();
		}
	}
	void unlock()
	{
		uint64_t v = word.load(std::memory_order_relaxed);
		word.store((v & ~locked) + version_one, std::memory_order_release);
	}
};

struct atomic_wait_lock {
	std::atomic<uint64_t> word{0};
	void lock()
	{
		for (;;) {
			uint64_t v = word.load(std::memory_order_relaxed);
			if (!(v & locked)) {
				if (word.compare_exchange_weak(v, v | locked, std::memory_order_acquire,
							       std::memory_order_relaxed))
					return;
				continue;
			}
			word.wait(v, std::memory_order_relaxed);
		}
	}
	void unlock()
	{
		uint64_t v = word.load(std::memory_order_relaxed);
		word.store((v & ~locked) + version_one, std::memory_order_release);
		word.notify_one();
	}
};

struct fwait_lock {
	fwait::example::version_lock l;
	explicit fwait_lock(fwait_table *t) : l(t) {}
	void lock() { l.lock(); }
	void unlock() { l.unlock(); }
};

struct params {
	unsigned threads = 8;
	uint64_t compute_ns = 200, sleep_us = 0;
	double seconds = 1.0;
};

void hold(const params &p)
{
	if (p.sleep_us) {
		timespec ts = { 0, (long)(p.sleep_us * 1000) };
		nanosleep(&ts, nullptr);
	} else if (p.compute_ns) {
		uint64_t end = now_ns() + p.compute_ns;
		while (now_ns() < end)
			cpu_relax();
	}
}

double tv_s(const timeval &tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }

template <class Lock> void run(const char *name, Lock &lk, const params &p)
{
	std::atomic<bool> stop{false};
	std::vector<uint64_t> counts(p.threads, 0);
	/* Each worker's own voluntary switches (RUSAGE_THREAD): its parks,
	 * without the main thread's sleep and joins, which RUSAGE_SELF would
	 * add to every variant alike. */
	std::vector<long> parks(p.threads, 0);
	std::vector<std::thread> ts;
	uint64_t guarded_counter = 0; /* guarded by the lock */
	rusage r0, r1;
	getrusage(RUSAGE_SELF, &r0);
	uint64_t t0 = now_ns();
	for (unsigned i = 0; i < p.threads; i++)
		ts.emplace_back([&, i] {
			uint64_t n = 0;
			rusage u0, u1;
			getrusage(RUSAGE_THREAD, &u0);
			while (!stop.load(std::memory_order_relaxed)) {
				lk.lock();
				guarded_counter++;
				hold(p);
				lk.unlock();
				n++;
			}
			getrusage(RUSAGE_THREAD, &u1);
			counts[i] = n;
			parks[i] = u1.ru_nvcsw - u0.ru_nvcsw;
		});
	timespec d = { (time_t)p.seconds, (long)((p.seconds - (double)(time_t)p.seconds) * 1e9) };
	nanosleep(&d, nullptr);
	stop.store(true);
	for (auto &t : ts)
		t.join();
	double wall = (double)(now_ns() - t0) / 1e9;
	getrusage(RUSAGE_SELF, &r1);
	uint64_t total = 0, mn = UINT64_MAX;
	for (uint64_t c : counts) {
		total += c;
		if (c < mn)
			mn = c;
	}
	if (total != guarded_counter) {
		fprintf(stderr, "%s: %" PRIu64 " acquisitions but the counter says %" PRIu64 "\n",
			name, total, guarded_counter);
		exit(1);
	}
	double cpu = tv_s(r1.ru_utime) - tv_s(r0.ru_utime) + tv_s(r1.ru_stime) - tv_s(r0.ru_stime);
	double a = total ? (double)total : 1;
	long nparks = 0;
	for (long k : parks)
		nparks += k;
	printf("%-8s %12.0f %10.3f %9.4f %9.3f %8.3f\n", name, (double)total / wall, cpu / a * 1e6,
	       (double)nparks / a, (double)(r1.ru_nivcsw - r0.ru_nivcsw) / a,
	       total ? (double)mn / ((double)total / p.threads) : 0.0);
}

void usage()
{
	fputs("usage: version_lock_bench [-t THREADS] [-C NS | -H US | -0] [-d SECONDS]\n"
	      "  -C NS  compute hold (default 200 ns)   -H US  sleeping hold   -0  no hold\n",
	      stderr);
	exit(2);
}

} // namespace

int main(int argc, char **argv)
{
	params p;
	int c;
	while ((c = getopt(argc, argv, "t:C:H:0d:h")) != -1) {
		char *end = nullptr;
		switch (c) {
		case 't': p.threads = (unsigned)strtoul(optarg, &end, 10); break;
		case 'C': p.compute_ns = strtoull(optarg, &end, 10); p.sleep_us = 0; break;
		case 'H': p.sleep_us = strtoull(optarg, &end, 10); p.compute_ns = 0; break;
		case '0': p.compute_ns = 0; p.sleep_us = 0; break;
		case 'd': p.seconds = strtod(optarg, &end); break;
		default: usage();
		}
		if (end && *end)
			usage();
	}
	if (p.threads < 1 || p.threads > 4096 || p.seconds <= 0 || p.sleep_us >= 1000000)
		usage();
	fwait_table *t = nullptr;
	if (fwait_table_create(&t, nullptr) != 0)
		return 1;
	printf("# version_lock_bench: %u threads, hold %s %" PRIu64 " %s, %.1f s per variant, %ld CPUs\n",
	       p.threads, p.sleep_us ? "sleep" : p.compute_ns ? "compute" : "none",
	       p.sleep_us ? p.sleep_us : p.compute_ns, p.sleep_us ? "us" : "ns", p.seconds,
	       sysconf(_SC_NPROCESSORS_ONLN));
	printf("%-8s %12s %10s %9s %9s %8s\n", "variant", "acq/s", "cpu_us/acq", "vcsw/acq",
	       "ivcsw/acq", "min/mean");
	{
		fwait_lock l(t);
		run("fwait", l, p);
	}
	{
		atomic_wait_lock l;
		run("atomic", l, p);
	}
	{
		spin_lock l;
		run("spin", l, p);
	}
	fwait_stats st;
	fwait_stats_get(t, &st);
	printf("# fwait: %" PRIu64 " sleeps, %" PRIu64 " wakeups, %" PRIu64 " slow wakes\n",
	       st.waits, st.wakeups, st.slow_wakes);
	fwait_table_destroy(t);
	return 0;
}
