/* SPDX-License-Identifier: MIT */
/*
 * version_lock_bench.cpp - fwait::hybrid_latch (fwait.hpp, on
 * fwait_hlatch_*) against the same kind of 64-bit lock word waited for by
 * std::atomic::wait (libstdc++'s futex-based wait) and by spinning, in the
 * three hold regimes.
 *
 * Design note: T threads take one lock exclusively, hold it (none; a
 * compute hold of -C ns spinning on the clock; a sleeping hold of -H us),
 * release it, for -d seconds per variant, one variant after the other in
 * one process, for each regime asked for (all three by default: none,
 * -C 200, -H 50).  The variants differ in the word's layout only as their
 * locks need and in how a thread waits for a held lock:
 *   fwait   fwait::fixed_hybrid_latch on an engine's page-state layout (state
 *           in bits 56..62, W bit 63, version bits 0..55): spin (pause,
 *           then yield: fwait_spin), then a keyed wait on the word;
 *           unlock calls into the table only
 *           while W is set
 *   fw-store  (-S) the same with FWAIT_HLATCH_STORE_RELEASE: an
 *           uncontended exclusive release is a plain store
 *   atomic  bit 0 held, version above; word.wait(seen), and
 *           word.notify_one() after every release (C++20)
 *   spin    the same word; CAS to take, a release store to free; a pause
 *           loop with sched_yield every 64 rounds
 * Printed per regime and variant: acquisitions/s, CPU us per acquisition
 * (getrusage, the whole process), the workers' voluntary context switches
 * per acquisition (how often a thread parked: each worker's RUSAGE_THREAD,
 * so the main thread's sleep and joins are not counted), the process's
 * involuntary ones, the fewest acquisitions of one thread over the mean
 * (fairness) and, for fwait, the unlocks that called into the table
 * (fwait_stats slow_wakes / unlocks).  Then, uncontended (one thread, a
 * free lock): ns per lock+unlock pair for fwait, fw-store, fwait-ref
 * (fwait::hybrid_latch: the layout read at run time), atomic and spin,
 * and the table calls per unlock when nobody waits of fwait (0 by design:
 * W is clear) and of fw-store (0: nobody counted in the bucket).
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

#include "fwait/fwait.hpp"

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
			/* acquire: pairs with unlock's release store, so the
			 * last holder's critical section happens before ours. */
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
		/* Only the holder writes the word while it is held, so a
		 * load and a store suffice; release: pairs with lock's
		 * acquire CAS. */
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
				/* acquire: pairs with unlock's release store. */
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
		/* release: pairs with lock's acquire CAS.  notify_one
		 * after the store: std::atomic::wait re-checks the value
		 * after it registers, so a waiter that saw the old value
		 * either sees the new one or is notified. */
		uint64_t v = word.load(std::memory_order_relaxed);
		word.store((v & ~locked) + version_one, std::memory_order_release);
		word.notify_one();
	}
};

/* An engine's page state: shared holders 1..124, exclusive 125, marked
 * 126 (127 would be the engine's "evicted"); W bit 63; version 0..55. */
constexpr fwait_hlatch_layout page_layout = { 56, 7, 124, 125, 126, 63, 0, 56, 0 };
/* The same, releasing with a plain store while nobody waits (fwait.h). */
constexpr fwait_hlatch_layout page_layout_store = { 56, 7, 124, 125, 126, 63, 0, 56,
						    FWAIT_HLATCH_STORE_RELEASE };

void must(int rc, const char *what)
{
	if (rc != 0) {
		fprintf(stderr, "version_lock_bench: %s: %s\n", what, strerror(-rc));
		exit(1);
	}
}

/* Latch: fwait::fixed_hybrid_latch<page_layout> (the layout folded into
 * each call) or fwait::hybrid_latch (the layout read at run time). */
template <class Latch> Latch make_latch(fwait_table *t, std::atomic<uint64_t> &w)
{
	return Latch(t, w);
}
template <> fwait::hybrid_latch make_latch<fwait::hybrid_latch>(fwait_table *t,
								std::atomic<uint64_t> &w)
{
	return fwait::hybrid_latch(t, page_layout, w);
}
template <class Latch> struct basic_fwait_lock {
	std::atomic<uint64_t> word{0};
	Latch latch;
	explicit basic_fwait_lock(fwait_table *t) : latch(make_latch<Latch>(t, word)) {}
	void lock() { must(latch.lock(), "lock"); }
	void unlock() { must(latch.unlock(), "unlock"); }
};
using fwait_lock = basic_fwait_lock<fwait::fixed_hybrid_latch<page_layout>>;
using fwait_store_lock = basic_fwait_lock<fwait::fixed_hybrid_latch<page_layout_store>>;
using fwait_ref_lock = basic_fwait_lock<fwait::hybrid_latch>;

struct regime {
	uint64_t compute_ns, sleep_us;
};

struct params {
	unsigned threads = 8;
	regime hold = { 0, 0 };
	double seconds = 1.0;
	bool store = false; /* -S: also the fw-store variant */
};

void hold(const regime &h)
{
	if (h.sleep_us) {
		timespec ts = { 0, (long)(h.sleep_us * 1000) };
		nanosleep(&ts, nullptr);
	} else if (h.compute_ns) {
		uint64_t end = now_ns() + h.compute_ns;
		while (now_ns() < end)
			cpu_relax();
	}
}

double tv_s(const timeval &tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }

/* The contended run; returns the acquisitions (= unlocks). */
template <class Lock> uint64_t run(const char *name, Lock &lk, const params &p)
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
				hold(p.hold);
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
	printf("%-8s %12.0f %10.3f %9.4f %9.3f %8.3f", name, (double)total / wall, cpu / a * 1e6,
	       (double)nparks / a, (double)(r1.ru_nivcsw - r0.ru_nivcsw) / a,
	       total ? (double)mn / ((double)total / p.threads) : 0.0);
	return total;
}

/* One thread, a free lock: ns per lock+unlock pair, the best of `batches`
 * batches of `pairs` (on a shared machine the best batch is the one no
 * other job preempted). */
template <class Lock> double uncontended_ns(Lock &lk, unsigned batches, uint64_t pairs)
{
	double best = 0;
	for (unsigned b = 0; b < batches; b++) {
		uint64_t t0 = now_ns();
		for (uint64_t i = 0; i < pairs; i++) {
			lk.lock();
			lk.unlock();
		}
		double ns = (double)(now_ns() - t0) / (double)pairs;
		if (b == 0 || ns < best)
			best = ns;
	}
	return best;
}

double slow_wakes(fwait_table *t)
{
	fwait_stats st;
	fwait_stats_get(t, &st);
	return (double)st.slow_wakes;
}

void run_regime(fwait_table *t, const params &p)
{
	printf("# %u threads, hold %s %" PRIu64 " %s, %.1f s per variant\n", p.threads,
	       p.hold.sleep_us ? "sleep" : p.hold.compute_ns ? "compute" : "none",
	       p.hold.sleep_us ? p.hold.sleep_us : p.hold.compute_ns, p.hold.sleep_us ? "us" : "ns",
	       p.seconds);
	printf("%-8s %12s %10s %9s %9s %8s %12s\n", "variant", "acq/s", "cpu_us/acq", "vcsw/acq",
	       "ivcsw/acq", "min/mean", "table/unlock");
	{
		fwait_lock l(t);
		fwait_stats_reset(t);
		uint64_t n = run("fwait", l, p);
		printf(" %12.4f\n", slow_wakes(t) / (double)(n ? n : 1));
	}
	if (p.store) {
		fwait_store_lock l(t);
		fwait_stats_reset(t);
		uint64_t n = run("fw-store", l, p);
		printf(" %12.4f\n", slow_wakes(t) / (double)(n ? n : 1));
	}
	{
		atomic_wait_lock l;
		run("atomic", l, p);
		printf("\n");
	}
	{
		spin_lock l;
		run("spin", l, p);
		printf("\n");
	}
}

void usage()
{
	fputs("usage: version_lock_bench [-t THREADS] [-C NS] [-H US] [-0] [-d SECONDS] [-M] [-S]\n"
	      "  each of -C NS (compute hold), -H US (sleeping hold) and -0 (no hold) adds a\n"
	      "  regime; none given: -0 -C 200 -H 50.  -M: the table's no_membarrier (every\n"
	      "  latch release a CAS).  -S: the contended runs also with\n"
	      "  FWAIT_HLATCH_STORE_RELEASE (fw-store)\n",
	      stderr);
	exit(2);
}

} // namespace

int main(int argc, char **argv)
{
	params p;
	std::vector<regime> regimes;
	fwait_config cfg = fwait_config();
	int c;
	while ((c = getopt(argc, argv, "t:C:H:0d:MSh")) != -1) {
		char *end = nullptr;
		switch (c) {
		case 't': p.threads = (unsigned)strtoul(optarg, &end, 10); break;
		case 'C': regimes.push_back({ strtoull(optarg, &end, 10), 0 }); break;
		case 'H': regimes.push_back({ 0, strtoull(optarg, &end, 10) }); break;
		case '0': regimes.push_back({ 0, 0 }); break;
		case 'd': p.seconds = strtod(optarg, &end); break;
		case 'M': cfg.no_membarrier = true; break;
		case 'S': p.store = true; break;
		default: usage();
		}
		if (end && *end)
			usage();
	}
	if (regimes.empty())
		regimes = { { 0, 0 }, { 200, 0 }, { 0, 50 } };
	if (p.threads < 1 || p.threads > 4096 || p.seconds <= 0)
		usage();
	for (const regime &r : regimes)
		if (r.sleep_us >= 1000000)
			usage();
	fwait_table *t = nullptr;
	if (fwait_table_create(&t, &cfg) != 0)
		return 1;
	printf("# version_lock_bench: %ld CPUs\n", sysconf(_SC_NPROCESSORS_ONLN));
	for (const regime &r : regimes) {
		p.hold = r;
		run_regime(t, p);
	}

	const unsigned batches = 32;
	const uint64_t pairs = 1u << 17;
	fwait_lock fl(t);
	fwait_store_lock sfl(t);
	fwait_ref_lock rl(t);
	atomic_wait_lock al;
	spin_lock sl;
	fwait_stats_reset(t);
	double f_ns = uncontended_ns(fl, batches, pairs);
	double f_table = slow_wakes(t) / ((double)batches * (double)pairs);
	fwait_stats_reset(t);
	double st_ns = uncontended_ns(sfl, batches, pairs);
	double st_table = slow_wakes(t) / ((double)batches * (double)pairs);
	double r_ns = uncontended_ns(rl, batches, pairs);
	double a_ns = uncontended_ns(al, batches, pairs);
	double s_ns = uncontended_ns(sl, batches, pairs);
	printf("# uncontended, 1 thread: ns per lock+unlock pair, best of %u batches of %" PRIu64 "\n",
	       batches, pairs);
	printf("fwait %.2f (table/unlock %.4f)  fw-store %.2f (table/unlock %.4f)  fwait-ref %.2f"
	       "  atomic %.2f  spin %.2f  fw-store/spin %.2f\n", f_ns, f_table, st_ns, st_table,
	       r_ns, a_ns, s_ns, st_ns / s_ns);
	fwait_table_destroy(t);
	return 0;
}
