/* SPDX-License-Identifier: MIT */
/*
 * toolutil.c - the pools' log callback, --version, the stop signals and
 * temporary files, shared by the tools (see toolutil.h).
 */
#include "toolutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"

void tool_bp_log(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	fprintf(stderr, "bufpool: %s\n", msg);
}

bool tool_version_asked(int argc, char **argv)
{
	return argc >= 2 && strcmp(argv[1], "--version") == 0;
}

int tool_version_print(const char *prog)
{
	printf("%s (fwait-bufpool) %s\n", prog, TOOLS_VERSION);
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}

/* An atomic, not a volatile sig_atomic_t: the handler may run on any of
 * the process's threads (the pool's I/O threads included), and only a
 * lock-free atomic is both async-signal-safe and race-free across threads
 * (C11 7.14.1.1; ThreadSanitizer reported the volatile).  Relaxed: the flag
 * orders nothing, each loop only looks at it. */
atomic_int tool_stop_signal;

static void on_stop(int sig)
{
	atomic_store_explicit(&tool_stop_signal, sig, memory_order_relaxed);
}

void tool_catch_stop(void)
{
	/* No SA_RESTART: a sleep the signal interrupts returns (EINTR) and
	 * its loop looks at the flag. */
	struct sigaction sa = {.sa_handler = on_stop};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

bool tool_sleep(double seconds)
{
	uint64_t end = util_now_ns() + (uint64_t)(seconds * 1e9);
	for (;;) {
		if (tool_stop_signal)
			return false;
		uint64_t now = util_now_ns();
		if (now >= end)
			return true;
		/* Slices: the signal may go to another thread, whose handler
		 * sets the flag without waking this one. */
		uint64_t ns = end - now < 100000000u ? end - now : 100000000u;
		struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
		nanosleep(&ts, NULL); /* EINTR: the loop looks at the flag */
	}
}

int tool_exit_status(int status)
{
	return tool_stop_signal == SIGINT ? 128 + SIGINT : status;
}

int tool_temp_file(const char *prog, const char *stem, char *buf, size_t len)
{
	const char *dir = getenv("TMPDIR");
	if (dir == NULL || dir[0] == '\0')
		dir = "/tmp";
	int n = snprintf(buf, len, "%s/%s-XXXXXX", dir, stem);
	int fd = n < 0 || (size_t)n >= len ? (errno = ENAMETOOLONG, -1) : mkstemp(buf);
	if (fd < 0) {
		int e = errno;
		fprintf(stderr, "%s: cannot create a file in %s: %s (use --file)\n", prog, dir,
			strerror(e));
		return -e;
	}
	close(fd);
	return 0;
}
