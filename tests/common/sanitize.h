/* SPDX-License-Identifier: MIT */
/*
 * sanitize.h - whether the tests are built with a sanitizer, for the
 * fwait and stress tests' thread counts and stacks.
 *
 * Design note: header only, macros only (no state).  TC_TSAN: built with
 * ThreadSanitizer, which slows threads the most and caps live threads;
 * TC_SANITIZED: with TSan or AddressSanitizer, which need deeper stacks.
 */
#ifndef TESTS_COMMON_SANITIZE_H
#define TESTS_COMMON_SANITIZE_H

#if defined(__SANITIZE_THREAD__)
#define TC_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TC_TSAN 1
#endif
#endif
#ifndef TC_TSAN
#define TC_TSAN 0
#endif

#if TC_TSAN || defined(__SANITIZE_ADDRESS__)
#define TC_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TC_SANITIZED 1
#endif
#endif
#ifndef TC_SANITIZED
#define TC_SANITIZED 0
#endif

#endif
