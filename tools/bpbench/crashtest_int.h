/* SPDX-License-Identifier: MIT */
/*
 * crashtest_int.h - the internal interface of bpbench crashtest, shared by
 * its files.
 *
 * Design note
 * -----------
 * Layer: bpbench, on the store (tools/kv: kv_open with durable, kv_put,
 * kv_commit, kv_check, kv_get, kv_scan, kv_log_stats) and bufpool (only
 * bp_fault_set, for --break-wal); util for the PRNG (through gen.h's rng)
 * and the option parser.  The files, one job each:
 *   crashtest.c        bpbench_crashtest_main: the rounds in order, the
 *                      summary, the files removed;
 *   crashtest_opts.c   the options and the usage text;
 *   crashtest_value.c  the value codec (key, version, pattern);
 *   crashtest_child.c  the child: the durable write workload, acks on the
 *                      pipe, until it is killed;
 *   crashtest_round.c  the parent's half of a round: fork, read acks,
 *                      SIGKILL at the seeded ack count, drain, reap;
 *   crashtest_recover.c  a recovery killed at a seeded delay, before the
 *                      check recovers again;
 *   crashtest_check.c  the parent's check after the kill: reopen (the
 *                      store recovers), kv_check, every acked key, a scan.
 * --power-loss is powerloss*.c (powerloss_int.h), on these pieces.
 *
 * Processes: the parent is single-threaded whenever it forks (its own
 * store is closed between rounds), so the child may start threads and
 * open the store as a fresh process would.  The only channel is one pipe:
 * the child's threads write 16-byte acks (struct crash_ack) in writes of at
 * most PIPE_BUF bytes, which POSIX makes atomic, so the records of
 * different threads never interleave and a kill never tears one.
 *
 * Versions: version = (round << 32) | seq, seq counting from 1 per thread
 * and round; thread t writes only keys with key % threads == t, so one
 * key's versions are written by one thread in increasing order, and a
 * later round's are above every earlier round's.  Messages print a version
 * as round.seq.
 */
#ifndef TOOLS_BPBENCH_CRASHTEST_INT_H
#define TOOLS_BPBENCH_CRASHTEST_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "kv.h"

#define CRASH_PROG "bpbench crashtest"
/* A round whose child sends no ack for this long is stuck: killed, failed. */
#define CRASH_STALL_S 60

struct crash_opts {
	unsigned kills, threads, batch;
	uint64_t seed, keys, max_acks, checkpoint_bytes;
	uint64_t recovery_kill_us;  /* 0: no kill during recovery */
	uint32_t frames;
	const char *file;
	bool keep, break_wal, quiet;
	/* --power-loss (powerloss_int.h): cut states to check, and the
	 * test-only switch of the store's old trusting replay */
	bool power_loss, break_recovery;
	uint64_t states;
	unsigned truncate_every; /* 0: only round 1 opens truncating */
	unsigned eio_every;      /* --power-loss: one round in N injects an fsync EIO */
};

/* One acknowledged change, as it travels on the pipe (native byte order:
 * both ends are one program on one machine). */
struct crash_ack {
	uint64_t key, version;
};

/* The state of the whole run; the child gets a copy (fork) and only
 * reads it. */
struct crash_run {
	struct crash_opts o;
	const char *file;
	unsigned round;         /* 1..kills */
	uint64_t *acked;        /* [keys]: highest acked version, 0 = none yet */
	uint64_t keys_acked;    /* keys with acked[key] != 0 */
	uint64_t total_acks, total_recovered;
	uint64_t recovery_kills;        /* recovery children killed */
	uint64_t recovery_kills_inside; /* of those, before kv_open returned */
};

/* What one round saw, for its line and the summary. */
struct crash_round {
	uint64_t target;        /* the seeded ack count the kill came after */
	uint64_t acks;          /* acks read, those drained after the kill too */
	uint64_t recovered;     /* kv_log_stats.recovered_records at the reopen */
	uint64_t checked;       /* acked keys read back */
	uint64_t tree_keys;     /* keys in the recovered tree */
	double seconds;
};

#define CRASH_VERSION(round, seq) (((uint64_t)(round) << 32) | (uint32_t)(seq))
#define CRASH_ROUND_OF(v) ((unsigned)((v) >> 32))
#define CRASH_SEQ_OF(v) ((unsigned)((uint32_t)(v)))
/* The PRNG stream of (round, who): who 0 is the parent's kill choice,
 * t + 1 the child's thread t (threads < 2^16). */
#define CRASH_STREAM(round, who) (((uint64_t)(round) << 16) | (uint64_t)(who))
#define CRASH_WHO_RECOVERY 0xffffu /* the recovery kill's delay */

/* crashtest_opts.c: 0, or -EINVAL with a message on stderr (--help exits 0). */
int crash_parse_opts(int argc, char **argv, struct crash_opts *o);

/* crashtest_value.c: a value of vs >= 16 bytes holding key, version and a
 * pattern of both; decode returns 0 if v is a well-formed value of key
 * (its version, non-zero, in *ver), -EBADMSG otherwise (*ver is what the
 * version field holds either way). */
void crash_value_encode(uint8_t *v, uint32_t vs, uint64_t key, uint64_t ver);
int crash_value_decode(const uint8_t *v, uint32_t vs, uint64_t key, uint64_t *ver);

/* crashtest.c: the store's configuration, the same in the child and the
 * parent's check (create: round 1's child, which also truncates). */
void crash_store_config(const struct crash_run *C, struct kv_config *kc, bool create);

/* crashtest_child.c: the child's whole life; never returns (killed, or
 * _exit(3) after printing an error).  fd is the pipe's write end. */
_Noreturn void crash_child(const struct crash_run *C, int fd);

/* crashtest_round.c: the process helpers, and the round.  crash_spawn
 * forks child(C, write end of a new pipe) (the child never returns) and
 * gives the read end; crash_reap waits for pid; crash_killed_check says
 * whether status is a death by SIGKILL (else prints why not, about who).
 * Each is 0 or a negative errno after printing why. */
typedef void (*crash_child_fn)(const struct crash_run *C, int fd); /* must not return */
int crash_spawn(struct crash_run *C, crash_child_fn child, int *rfd, pid_t *pid);
int crash_reap(struct crash_run *C, pid_t pid, int *status);
int crash_killed_check(const struct crash_run *C, int status, const char *who);
/* crashtest_round.c: fork the child, read its acks into C->acked, kill it
 * after r->target of them, drain and reap it.  0 once it died of SIGKILL,
 * or a negative errno after printing why the round failed. */
int crash_round_run(struct crash_run *C, struct crash_round *r);
/* crashtest_round.c: the same with child, r->target set by the caller
 * (UINT64_MAX: no kill, the child ends by itself): *st its wait status,
 * *killed whether the kill went out.  0, or a negative errno after
 * printing why (the child is reaped either way). */
int crash_round_drive(struct crash_run *C, struct crash_round *r, crash_child_fn child,
		      int *st, bool *killed);

/* crashtest_recover.c: open the store in a child (recovery) and kill it
 * after a seeded delay (see the file).  0, or a negative errno after
 * printing why the round failed. */
int crash_recovery_kill(struct crash_run *C);

/* crashtest_check.c: reopen the store, check the tree, every acked key
 * and every value.  0, or -EBADMSG (a lost or damaged key, a bad tree) or
 * the store's error, after printing the first failure. */
int crash_check(struct crash_run *C, struct crash_round *r);
/* crashtest_check.c: the tree of an open store (kv_check) and every value
 * in it (well formed, of a key of the key space and a round up to
 * C->round); r->tree_keys set.  0, or an error, printed if print. */
int crash_check_tree(struct crash_run *C, struct crash_round *r, struct kv_store *kv,
		     uint32_t vs, bool print);

#endif
