/* SPDX-License-Identifier: MIT */
/*
 * crashtest_recover.c - a kill during recovery: between a round's kill and
 * its check, a child opens the store (kv_open recovers it) and is killed
 * with SIGKILL after a seeded delay, so the check's own kv_open recovers
 * a store whose last recovery may have died anywhere: in the replay, in
 * the flush of the replayed pages, in the reset of the log, or after.
 *
 * Design note
 * -----------
 * Layer: bpbench, on the store and POSIX processes; gen.h's rng.
 *
 * The delay is stream CRASH_STREAM(round, CRASH_WHO_RECOVERY) of the seed,
 * uniform in [0, recovery_kill_us].  The child writes one byte to a pipe
 * when kv_open has returned 0, then waits to be killed; the parent reads
 * the pipe after the kill to tell a kill during recovery from one after
 * (counted for the summary).  The child dies of SIGKILL, or exits 3 after
 * printing why kv_open failed (a failed round).
 */
#include "crashtest_int.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gen.h"

_Noreturn static void recovery_child(const struct crash_run *C, int fd)
{
	struct kv_config kc;
	struct kv_store *kv;
	crash_store_config(C, &kc, false);
	int rc = kv_open(&kv, &kc);
	if (rc) {
		fprintf(stderr, CRASH_PROG ": round %u: recovery (to be killed): kv_open: %s\n",
			C->round, strerror(-rc));
		_exit(3);
	}
	if (write(fd, "r", 1) != 1)
		_exit(3);
	for (;;)
		pause(); /* until the kill */
}

int crash_recovery_kill(struct crash_run *C)
{
	if (C->o.recovery_kill_us == 0)
		return 0;
	struct rng rng = rng_seeded(C->o.seed, CRASH_STREAM(C->round, CRASH_WHO_RECOVERY));
	uint64_t us = rng_below(&rng, C->o.recovery_kill_us + 1);
	int fd, st;
	pid_t pid;
	int rc = crash_spawn(C, recovery_child, &fd, &pid);
	if (rc)
		return rc;
	struct timespec d = {.tv_sec = (time_t)(us / 1000000), .tv_nsec = (long)(us % 1000000) * 1000};
	while (nanosleep(&d, &d) != 0 && errno == EINTR)
		;
	kill(pid, SIGKILL);
	rc = crash_reap(C, pid, &st);
	char b;
	bool recovered = read(fd, &b, 1) == 1;
	close(fd);
	if (rc == 0)
		rc = crash_killed_check(C, st, "the recovery child");
	if (rc)
		return rc;
	C->recovery_kills++;
	if (!recovered)
		C->recovery_kills_inside++;
	return 0;
}
