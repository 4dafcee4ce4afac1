/* SPDX-License-Identifier: MIT */
/*
 * check.hpp - the C++ tests' one assertion pair, CHECK and CHECK_EQ.
 *
 * Design note: the C++ tests run without a test framework (tests/cxx
 * builds them with every C++ standard the compiler has); a failed check
 * prints file, line, the expression and both values, and ends the process
 * at once with _Exit, from any thread, with others still running (no
 * destructors, no joins that could hang on the broken state).
 */
#ifndef TESTS_CXX_CHECK_HPP
#define TESTS_CXX_CHECK_HPP

#include <cstdio>
#include <cstdlib>

[[noreturn]] static inline void check_fail(const char *file, int line, const char *what,
					   long long a, long long b)
{
	std::fprintf(stderr, "%s:%d: check failed: %s (%lld, %lld)\n", file, line, what, a, b);
	std::_Exit(1);
}

#define CHECK(c)                                                  \
	do {                                                      \
		if (!(c))                                         \
			check_fail(__FILE__, __LINE__, #c, 0, 0); \
	} while (0)
#define CHECK_EQ(a, b)                                                        \
	do {                                                                  \
		long long a_ = static_cast<long long>(a);                     \
		long long b_ = static_cast<long long>(b);                     \
		if (a_ != b_)                                                 \
			check_fail(__FILE__, __LINE__, #a " == " #b, a_, b_); \
	} while (0)

#endif
