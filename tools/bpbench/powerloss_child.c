/* SPDX-License-Identifier: MIT */
/*
 * powerloss_child.c - a round's child of bpbench crashtest --power-loss:
 * the durable write workload on a store whose I/O is traced, each
 * acknowledged commit recorded in the trace, until the kill, a clean
 * close, or the injected fsync EIO.
 *
 * Design note
 * -----------
 * Layer: bpbench (see powerloss_int.h), on the store (kv_open with
 * pool.io_trace, kv_put, kv_commit, kv_close), bufpool (bp_fault_set for
 * --break-wal) and the recorder (powerloss_trace.c).
 *
 * The workload is crashtest's (crashtest_child.c: writer t owns the keys
 * k % threads == t, versions (round, seq), --batch 1 sync_commit, else B
 * puts and a kv_commit), on the power-loss geometry.  An ack is recorded
 * in the trace (PL_ACK) before it goes on the pipe, and only after the
 * commit returned 0: every PL_ACK follows the SYNC_END of the log sync
 * that made it durable, so a cut after the PL_ACK keeps that sync.  The
 * pipe only tells the parent when to kill.
 *
 * A continued state (powerloss.c) runs the same workload on the state's
 * store, untraced (tracing false): its acks only go on the pipe.
 *
 * The round's plan (the parent's, inherited through the fork): truncate
 * (round 1 always: the first create) writes PL_EPOCH before kv_open; a
 * clean round stops its writers after clean_after acks and closes the
 * store (exit 0); eio_at arms the recorder's fsync EIO.  An error of the
 * store after the EIO was injected ends the child with PL_EXIT_EIO (as a
 * crash would: no close), any other error with 3 after printing it.
 */
#include "powerloss_int.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "toolutil.h"

struct pl_writer {
	struct pl_run *P;
	struct kv_store *kv;
	int fd;
	unsigned t;
	atomic_uint_fast64_t *acks; /* clean rounds: acks sent by all writers */
	pthread_t th;
};

void pl_store_config(const struct crash_run *C, struct kv_config *kc, const char *path,
		     bool create)
{
	*kc = (struct kv_config){.path = path, .create = create, .truncate = create,
				 .durable = true, .checkpoint_bytes = C->o.checkpoint_bytes};
	kc->pool.nframes = C->o.frames;
	kc->pool.page_size = PL_PAGE_SIZE;
	kc->break_recovery = C->o.break_recovery;
}

static _Noreturn void pl_die(struct pl_run *P, const char *what, int rc)
{
	if (atomic_load_explicit(&P->rec.eio_done, memory_order_relaxed))
		_exit(PL_EXIT_EIO); /* the store's answer to the injected EIO */
	fprintf(stderr, PL_PROG ": child of round %u: %s: %s\n", P->C.round, what, strerror(-rc));
	_exit(3);
}

/* Record n acks in the trace, then send them to the parent. */
static void ack(struct pl_writer *w, const struct crash_ack *a, size_t n)
{
	uint32_t tid = (uint32_t)syscall(SYS_gettid);
	for (size_t i = 0; w->P->tracing && i < n; i++) {
		int rc = pl_record(&w->P->rec, &(struct pl_rec){.type = PL_ACK, .tid = tid,
								  .offset = a[i].key,
								  .len = a[i].version}, NULL);
		if (rc)
			pl_die(w->P, "recording an ack", rc);
	}
	/* one pipe write of <= PIPE_BUF bytes: atomic, never torn by the kill */
	size_t bytes = n * sizeof(*a);
	if (bytes > PIPE_BUF || write(w->fd, a, bytes) != (ssize_t)bytes)
		pl_die(w->P, "writing acks to the parent", -EPIPE);
}

static void *writer_main(void *arg)
{
	struct pl_writer *w = arg;
	const struct crash_run *C = &w->P->C;
	const unsigned T = C->o.threads, B = C->o.batch;
	const uint64_t mine = (C->o.keys - w->t + T - 1) / T; /* keys k % T == t */
	const uint32_t vs = kv_value_size(w->kv);
	struct rng rng = rng_seeded(C->o.seed, CRASH_STREAM(C->round, w->t + 1));
	uint8_t value[KV_VALUE_SIZE_MAX];
	struct crash_ack pending[PIPE_BUF / sizeof(struct crash_ack)];
	uint64_t seq = 0;

	while (!w->P->clean ||
	       atomic_load_explicit(w->acks, memory_order_relaxed) < w->P->clean_after) {
		for (unsigned i = 0; i < B; i++) {
			uint64_t key = w->t + (uint64_t)T * rng_below(&rng, mine);
			uint64_t ver = CRASH_VERSION(C->round, ++seq);
			crash_value_encode(value, vs, key, ver);
			int rc = kv_put(w->kv, key, value);
			if (rc < 0)
				pl_die(w->P, "kv_put", rc);
			pending[i] = (struct crash_ack){key, ver};
		}
		if (B > 1) {
			int rc = kv_commit(w->kv);
			if (rc < 0)
				pl_die(w->P, "kv_commit", rc);
		}
		ack(w, pending, B);
		atomic_fetch_add_explicit(w->acks, B, memory_order_relaxed);
	}
	return NULL;
}

_Noreturn void pl_child(const struct crash_run *C, int fd)
{
	/* the fork gave this process its own copy of the run */
	struct pl_run *P = (struct pl_run *)(uintptr_t)C;
	struct kv_config kc;
	struct kv_store *kv;

	int rc = 0;
	pl_store_config(C, &kc, P->cur_store, P->truncate);
	kc.pool.log = tool_bp_log;
	kc.sync_commit = C->o.batch == 1;
	if (P->tracing) {
		if ((rc = pl_recorder_open(&P->rec, P->trace, P->cur_store)))
			pl_die(P, "opening the trace", rc);
		P->rec.eio_file = P->eio_file;
		P->rec.eio_at = P->eio_at;
		uint32_t tid = (uint32_t)syscall(SYS_gettid);
		rc = pl_record(&P->rec, &(struct pl_rec){.type = PL_ROUND, .tid = tid,
							 .offset = C->round}, NULL);
		if (rc == 0 && P->truncate)
			rc = pl_record(&P->rec, &(struct pl_rec){.type = PL_EPOCH, .tid = tid},
				       NULL);
		if (rc)
			pl_die(P, "recording the round", rc);
		kc.pool.io_trace = pl_trace_hook;
		kc.pool.io_trace_arg = &P->rec;
	}
	rc = kv_open(&kv, &kc);
	if (rc)
		pl_die(P, "kv_open", rc);
	if (kv_value_size(kv) < 16)
		pl_die(P, "the store's values cannot hold a key and a version", -EINVAL);
	if (C->o.break_wal &&
	    (rc = bp_fault_set(kv_pool(kv), &(struct bp_fault){.op = BP_FAULT_WRITE,
							       .kind = BP_FAULT_NO_WAL})))
		pl_die(P, "bp_fault_set (--break-wal)", rc);
	atomic_uint_fast64_t acks;
	atomic_init(&acks, 0);
	struct pl_writer *w = calloc(C->o.threads, sizeof(*w));
	if (!w)
		pl_die(P, "allocating the writers", -ENOMEM);
	for (unsigned t = 0; t < C->o.threads; t++) {
		w[t] = (struct pl_writer){.P = P, .kv = kv, .fd = fd, .t = t, .acks = &acks};
		if ((rc = pthread_create(&w[t].th, NULL, writer_main, &w[t])))
			pl_die(P, "pthread_create", -rc);
	}
	if (!P->clean)
		for (;;)
			pause(); /* the writers never return: wait for the kill */
	for (unsigned t = 0; t < C->o.threads; t++)
		pthread_join(w[t].th, NULL);
	if ((rc = kv_close(kv)))
		pl_die(P, "kv_close", rc);
	_exit(0);
}
