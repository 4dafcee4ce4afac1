/* SPDX-License-Identifier: MIT */
// consumer.cpp - the C++ side of tests/consumer (see consumer.c): the same
// pool round trip through bufpool's C API, and an fwait lock bit on a
// std::atomic<uint32_t> word, compiled as C++17 (g++ -std=c++17).
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

#include <bufpool/bufpool.h>
#include <fwait/fwait.h>

namespace {

int failures = 0;

void expect(const char *what, long got, long want)
{
	if (got != want) {
		std::fprintf(stderr, "consumer (C++): %s returned %ld, expected %ld\n", what, got, want);
		failures++;
	}
}

void pool_check(const std::string &path)
{
	static const char msg[] = "written by the C++ consumer";
	bp_config cfg;
	bp_config_init(&cfg);
	cfg.path = path.c_str();
	cfg.flags = BP_OPEN_CREATE | BP_OPEN_TRUNCATE | BP_OPEN_NO_BGWRITER;
	cfg.nframes = 8;
	bp_pool *pool = nullptr;
	int r = bp_open(&pool, &cfg);
	expect("bp_open", r, 0);
	if (r)
		return;

	uint64_t pageno = BP_NO_PAGE;
	bp_frame *f = nullptr;
	expect("bp_new_page", bp_new_page(pool, &pageno, &f), 0);
	if (!f) {
		bp_discard(pool);
		return;
	}
	expect("bp_new_page's page number", static_cast<long>(pageno), 0);
	expect("bp_latch exclusive", bp_latch(pool, f, BP_LATCH_EXCLUSIVE), 0);
	std::memcpy(bp_data(f), msg, sizeof(msg));
	expect("bp_mark_dirty", bp_mark_dirty(pool, f), 0);
	expect("bp_unlatch", bp_unlatch(pool, f, BP_LATCH_EXCLUSIVE), 0);
	expect("bp_release", bp_release(pool, f), 0);

	expect("bp_flush", bp_flush(pool), 0);
	expect("bp_evict_page", bp_evict_page(pool, pageno), 0);
	f = nullptr;
	expect("bp_get", bp_get(pool, pageno, 0, &f), 0);
	if (f) {
		expect("bp_latch shared", bp_latch(pool, f, BP_LATCH_SHARED), 0);
		expect("page contents after the read", std::memcmp(bp_data(f), msg, sizeof(msg)), 0);
		expect("bp_unlatch", bp_unlatch(pool, f, BP_LATCH_SHARED), 0);
		expect("bp_release", bp_release(pool, f), 0);
	}
	r = bp_close(pool);
	expect("bp_close", r, 0);
	if (r)
		bp_discard(pool);
}

void fwait_check()
{
	fwait_table *t = nullptr;
	int r = fwait_table_create(&t, nullptr);
	expect("fwait_table_create", r, 0);
	if (r)
		return;
	std::atomic<uint32_t> word{0};
	expect("fwait_bit_lock", fwait_bit_lock(t, &word, 3, nullptr), 0);
	expect("fwait_bit_test after lock", fwait_bit_test(&word, 3), 1);
	expect("the word after lock", static_cast<long>(word.load()), 1L << 3);
	expect("fwait_bit_trylock of a held bit", fwait_bit_trylock(&word, 3), -EBUSY);
	expect("fwait_bit_unlock", fwait_bit_unlock(t, &word, 3), 0);
	expect("fwait_bit_test after unlock", fwait_bit_test(&word, 3), 0);
	fwait_table_destroy(t);
}

} // namespace

int main()
{
	char dir[] = "/tmp/fb-consumer-cxx.XXXXXX";
	if (!mkdtemp(dir)) {
		std::perror("consumer (C++): mkdtemp");
		return 1;
	}
	const std::string path = std::string(dir) + "/pages";
	pool_check(path);
	fwait_check();
	unlink(path.c_str());
	rmdir(dir);
	if (failures) {
		std::fprintf(stderr, "consumer (C++): %d check(s) failed\n", failures);
		return 1;
	}
	std::printf("consumer (C++): ok\n");
	return 0;
}
