/* SPDX-License-Identifier: MIT */
/*
 * crashtest_round.c - the parent's half of a bpbench crashtest round:
 * fork the child, read its acks, kill it at the seeded moment, reap it.
 *
 * Design note
 * -----------
 * Layer: bpbench, on POSIX processes and pipes; gen.h's rng.
 *
 * The kill moment is seeded: stream CRASH_STREAM(round, 0) of the seed
 * picks target in [1, max_acks], and SIGKILL goes out as soon as target
 * acks have been read.  Which commits are in flight at that instant
 * depends on timing, so a seed reproduces the run's shape, not its bytes.
 * After the kill the pipe is read to EOF: an ack already in the pipe was
 * sent after its commit returned, so it counts as acknowledged like any
 * other.  EOF comes when the child's last write end closes, which is at
 * its death (the parent closes its own copy right after the fork).
 *
 * Every ack is checked on arrival (a key of the key space and of the
 * sending thread's class cannot be told apart here, but the key range and
 * the round of the version can) and raises acked[key] to its version.
 * A round fails, after killing and reaping the child, if an ack is
 * malformed, if the child ends before the kill (its own error message is
 * above ours), if it dies of anything but SIGKILL, or if no ack arrives for
 * CRASH_STALL_S seconds (a hung store).
 */
#include "crashtest_int.h"
#include "toolutil.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gen.h"

/* The parent's side of the pipe: bytes of a record split across reads. */
struct ack_reader {
	struct crash_ack buf[4096];
	size_t have; /* bytes in buf */
};

/* Take one ack: 0, or -EPROTO after printing why. */
static int take_ack(struct crash_run *C, const struct crash_ack *a)
{
	if (a->key >= C->o.keys || CRASH_ROUND_OF(a->version) != C->round ||
	    CRASH_SEQ_OF(a->version) == 0) {
		fprintf(stderr, CRASH_PROG ": round %u: the child sent a malformed ack "
			"(key %" PRIu64 ", version %u.%u)\n", C->round, a->key,
			CRASH_ROUND_OF(a->version), CRASH_SEQ_OF(a->version));
		return -EPROTO;
	}
	uint64_t *v = &C->acked[a->key];
	if (*v == 0)
		C->keys_acked++;
	if (*v < a->version)
		*v = a->version;
	return 0;
}

/* Kill the child (once), note that we did. */
static void kill_child(pid_t pid, bool *killed)
{
	if (!*killed)
		kill(pid, SIGKILL);
	*killed = true;
}

/* Read acks to EOF, killing the child at r->target.  0, or a negative
 * errno after printing why (the child is killed then too). */
static int read_acks(struct crash_run *C, struct crash_round *r, int fd, pid_t pid,
		     bool *killed)
{
	static struct ack_reader rd; /* 64 KiB: not on the stack */
	int status = 0;

	rd.have = 0;
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int n = poll(&p, 1, CRASH_STALL_S * 1000);
		if (n < 0 && errno == EINTR) {
			if (tool_stop_signal)
				kill_child(pid, killed);
			continue;
		}
		if (n == 0) {
			if (*killed)
				fprintf(stderr, CRASH_PROG ": round %u: no EOF on the pipe %d s "
					"after the kill\n", C->round, CRASH_STALL_S);
			else
				fprintf(stderr, CRASH_PROG ": round %u: no ack for %d s after %"
					PRIu64 " acks: the child is stuck\n", C->round,
					CRASH_STALL_S, r->acks);
			kill_child(pid, killed);
			return -ETIMEDOUT;
		}
		ssize_t got = n < 0 ? -1 : read(fd, (char *)rd.buf + rd.have, sizeof(rd.buf) - rd.have);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int e = -errno;
			fprintf(stderr, CRASH_PROG ": round %u: reading acks: %s\n", C->round,
				strerror(-e));
			kill_child(pid, killed);
			return e;
		}
		if (got == 0)
			break;
		if (tool_stop_signal) /* Ctrl-C: this round's kill comes now */
			kill_child(pid, killed);
		rd.have += (size_t)got;
		size_t whole = rd.have / sizeof(struct crash_ack);
		for (size_t i = 0; i < whole && status == 0; i++) {
			status = take_ack(C, &rd.buf[i]);
			if (++r->acks == r->target)
				kill_child(pid, killed);
		}
		if (status) {
			kill_child(pid, killed);
			return status;
		}
		rd.have -= whole * sizeof(struct crash_ack);
		memmove(rd.buf, rd.buf + whole, rd.have);
	}
	if (rd.have != 0) { /* atomic pipe writes make this impossible */
		fprintf(stderr, CRASH_PROG ": round %u: %zu bytes of a torn ack at EOF\n",
			C->round, rd.have);
		return -EPROTO;
	}
	return 0;
}

int crash_spawn(struct crash_run *C, crash_child_fn child, int *rfd, pid_t *pid)
{
	int p[2];
	if (pipe(p) != 0) {
		fprintf(stderr, CRASH_PROG ": round %u: pipe: %s\n", C->round, strerror(errno));
		return -errno;
	}
	/* the child must not inherit half-written output buffers */
	fflush(stdout);
	fflush(stderr);
	*pid = fork();
	if (*pid < 0) {
		int e = -errno;
		fprintf(stderr, CRASH_PROG ": round %u: fork: %s\n", C->round, strerror(-e));
		close(p[0]);
		close(p[1]);
		return e;
	}
	if (*pid == 0) {
		/* Ignored, not caught: only the parent stops a run (it kills
		 * us), and a caught signal would fail the child's blocking calls
		 * (an ack's pipe write) with EINTR. */
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		close(p[0]);
		child(C, p[1]);
		_exit(3); /* a child function that returned: not a kill */
	}
	close(p[1]);
	*rfd = p[0];
	return 0;
}

int crash_reap(struct crash_run *C, pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, CRASH_PROG ": round %u: waitpid: %s\n", C->round,
				strerror(errno));
			return -ECHILD;
		}
	return 0;
}

int crash_killed_check(const struct crash_run *C, int st, const char *who)
{
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
		return 0;
	fprintf(stderr, CRASH_PROG ": round %u: %s did not die of the kill (%s %d)\n", C->round,
		who, WIFEXITED(st) ? "exit status" : "signal",
		WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	return -ECHILD;
}

int crash_round_drive(struct crash_run *C, struct crash_round *r, crash_child_fn child,
		      int *st, bool *killed)
{
	int fd;
	pid_t pid;

	int rc = crash_spawn(C, child, &fd, &pid);
	if (rc)
		return rc;
	*killed = false;
	rc = read_acks(C, r, fd, pid, killed);
	close(fd);
	if (crash_reap(C, pid, st))
		return -ECHILD;
	C->total_acks += r->acks;
	return rc;
}

int crash_round_run(struct crash_run *C, struct crash_round *r)
{
	struct rng rng = rng_seeded(C->o.seed, CRASH_STREAM(C->round, 0));
	int st;
	bool killed;

	r->target = 1 + rng_below(&rng, C->o.max_acks);
	int rc = crash_round_drive(C, r, crash_child, &st, &killed);
	if (rc)
		return rc;
	if (!killed) {
		if (WIFEXITED(st))
			fprintf(stderr, CRASH_PROG ": round %u: the child exited with status %d "
				"after %" PRIu64 " of the %" PRIu64 " acks before its kill\n",
				C->round, WEXITSTATUS(st), r->acks, r->target);
		else
			fprintf(stderr, CRASH_PROG ": round %u: the child died of signal %d "
				"after %" PRIu64 " of the %" PRIu64 " acks before its kill\n",
				C->round, WIFSIGNALED(st) ? WTERMSIG(st) : 0, r->acks, r->target);
		return -ECHILD;
	}
	return crash_killed_check(C, st, "the child");
}
