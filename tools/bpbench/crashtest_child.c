/* SPDX-License-Identifier: MIT */
/*
 * crashtest_child.c - bpbench crashtest's child: a durable write workload
 * that acknowledges every commit on the pipe, until it is killed.
 *
 * Design note
 * -----------
 * Layer: bpbench, on the store (kv_open durable, kv_put, kv_commit) and
 * bufpool (bp_fault_set for --break-wal); gen.h's rng (util/prng.h).
 *
 * The child opens the store itself (round 1 creates and truncates it;
 * later rounds reopen what the parent's check left), then runs `threads`
 * writers and waits for the kill.  Writer t picks keys k % threads == t
 * uniformly from stream CRASH_STREAM(round, t + 1) of the seed, and writes
 * version (round, ++seq) with a value that encodes both.  An ack is sent
 * only after the change is durable by the store's contract:
 *   --batch 1: the store has sync_commit, so kv_put returning 0 is the
 *              commit; that one put is acked;
 *   --batch B: B puts, then kv_commit; on 0 the B puts are acked.
 * Acks go out in writes of at most PIPE_BUF bytes (atomic, so writers share
 * the pipe and a kill never leaves half a record); a write blocks while
 * the parent is behind, which only slows the writer down.  Any error
 * (open, put, commit, the pipe) is printed and ends the child with
 * _exit(3), never exit(): the child must not run the parent's atexit work
 * nor flush stdio buffers it inherited.
 */
#include "crashtest_int.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen.h"

/* Acks per pipe write: PIPE_BUF is a multiple of the 16-byte record. */
#define ACKS_PER_WRITE (PIPE_BUF / sizeof(struct crash_ack))

struct child_writer {
	const struct crash_run *C;
	struct kv_store *kv;
	int fd;
	unsigned t;
	struct crash_ack *pending; /* [batch] */
};

static _Noreturn void child_die(const struct crash_run *C, int t, const char *what, int rc)
{
	if (t < 0)
		fprintf(stderr, CRASH_PROG ": child of round %u: %s: %s\n", C->round, what,
			strerror(-rc));
	else
		fprintf(stderr, CRASH_PROG ": child of round %u, thread %d: %s: %s\n", C->round,
			t, what, strerror(-rc));
	_exit(3);
}

/* Send n acks, PIPE_BUF bytes at a time at most. */
static void send_acks(struct child_writer *w, const struct crash_ack *a, size_t n)
{
	while (n > 0) {
		size_t k = n < ACKS_PER_WRITE ? n : ACKS_PER_WRITE;
		ssize_t got = write(w->fd, a, k * sizeof(*a));
		if (got < 0 && errno == EINTR)
			continue;
		/* a pipe write of <= PIPE_BUF is all or nothing: short is broken */
		if (got != (ssize_t)(k * sizeof(*a)))
			child_die(w->C, (int)w->t, "writing acks to the parent",
				  got < 0 ? -errno : -EPIPE);
		a += k;
		n -= k;
	}
}

static void *child_writer_main(void *arg)
{
	struct child_writer *w = arg;
	const struct crash_run *C = w->C;
	const unsigned T = C->o.threads;
	const uint64_t mine = (C->o.keys - w->t + T - 1) / T; /* keys k % T == t */
	const uint32_t vs = kv_value_size(w->kv);
	struct rng rng = rng_seeded(C->o.seed, CRASH_STREAM(C->round, w->t + 1));
	uint8_t value[KV_VALUE_SIZE_MAX];
	uint64_t seq = 0;

	for (;;) {
		for (unsigned i = 0; i < C->o.batch; i++) {
			uint64_t key = w->t + (uint64_t)T * rng_below(&rng, mine);
			if (++seq > UINT32_MAX)
				child_die(C, (int)w->t, "sequence numbers of the round", -EOVERFLOW);
			uint64_t ver = CRASH_VERSION(C->round, seq);
			crash_value_encode(value, vs, key, ver);
			int rc = kv_put(w->kv, key, value);
			if (rc < 0)
				child_die(C, (int)w->t, "kv_put", rc);
			w->pending[i] = (struct crash_ack){key, ver};
		}
		if (C->o.batch > 1) {
			int rc = kv_commit(w->kv);
			if (rc < 0)
				child_die(C, (int)w->t, "kv_commit", rc);
		}
		send_acks(w, w->pending, C->o.batch);
	}
	return NULL;
}

_Noreturn void crash_child(const struct crash_run *C, int fd)
{
	struct kv_config kc;
	struct kv_store *kv;

	crash_store_config(C, &kc, C->round == 1);
	kc.sync_commit = C->o.batch == 1;
	int rc = kv_open(&kv, &kc);
	if (rc)
		child_die(C, -1, "kv_open", rc);
	if (kv_value_size(kv) < 16)
		child_die(C, -1, "the store's values cannot hold a key and a version", -EINVAL);
	if (C->o.break_wal) {
		rc = bp_fault_set(kv_pool(kv), &(struct bp_fault){.op = BP_FAULT_WRITE,
								 .kind = BP_FAULT_NO_WAL});
		if (rc)
			child_die(C, -1, "bp_fault_set (--break-wal)", rc);
	}
	struct child_writer *w = calloc(C->o.threads, sizeof(*w));
	if (!w)
		child_die(C, -1, "allocating the writers", -ENOMEM);
	for (unsigned t = 0; t < C->o.threads; t++) {
		w[t] = (struct child_writer){.C = C, .kv = kv, .fd = fd, .t = t,
					     .pending = calloc(C->o.batch, sizeof(struct crash_ack))};
		if (!w[t].pending)
			child_die(C, -1, "allocating the writers", -ENOMEM);
		pthread_t th;
		rc = pthread_create(&th, NULL, child_writer_main, &w[t]);
		if (rc)
			child_die(C, -1, "pthread_create", -rc);
	}
	/* the writers never return: wait for the kill */
	for (;;)
		pause();
}
