/* SPDX-License-Identifier: MIT */
/*
 * test_version.c - the headers' version macros are the project's version
 * (meson.build's, passed as argv[1] by tests/abi/meson.build), and the
 * libraries' fwait_version and bp_version return them.
 *
 * The macros are literal in fwait.h and bufpool.h rather than generated,
 * so that <fwait/fwait.h> works the same from the source tree, the build
 * tree, an install and a Meson subproject; this test is what keeps them in
 * step with meson.build.  It fails on a project version bumped without the
 * headers (or the reverse), and on a library built from another header.
 */
#include <stdio.h>

#include <bufpool/bufpool.h>
#include <fwait/fwait.h>

static int failures;

static void expect(const char *what, long got, long want)
{
	if (got != want) {
		fprintf(stderr, "FAIL: %s is %ld, meson.build's version says %ld\n", what, got, want);
		failures++;
	} else {
		printf("ok: %s = %ld\n", what, got);
	}
}

int main(int argc, char **argv)
{
	int major, minor, patch;
	char tail;
	if (argc != 2 || sscanf(argv[1], "%d.%d.%d%c", &major, &minor, &patch, &tail) != 3) {
		fprintf(stderr, "usage: test_version MAJOR.MINOR.PATCH (got %s)\n",
			argc > 1 ? argv[1] : "nothing");
		return 99;
	}
	long want = major * 10000L + minor * 100L + patch;
	expect("FWAIT_VERSION_MAJOR", FWAIT_VERSION_MAJOR, major);
	expect("FWAIT_VERSION_MINOR", FWAIT_VERSION_MINOR, minor);
	expect("FWAIT_VERSION_PATCH", FWAIT_VERSION_PATCH, patch);
	expect("FWAIT_VERSION", FWAIT_VERSION, want);
	expect("fwait_version()", fwait_version(), want);
	expect("BP_VERSION_MAJOR", BP_VERSION_MAJOR, major);
	expect("BP_VERSION_MINOR", BP_VERSION_MINOR, minor);
	expect("BP_VERSION_PATCH", BP_VERSION_PATCH, patch);
	expect("BP_VERSION", BP_VERSION, want);
	expect("bp_version()", bp_version(), want);
	return failures ? 1 : 0;
}
