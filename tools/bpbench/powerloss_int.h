/* SPDX-License-Identifier: MIT */
/*
 * powerloss_int.h - the internal interface of bpbench crashtest
 * --power-loss, shared by its files.
 *
 * Design note
 * -----------
 * Layer: bpbench, on crashtest's pieces (crashtest_int.h: the options, the
 * value codec, the process helpers, the tree check), the store (kv_open
 * with the pool's I/O trace hook, bufpool.h's bp_io_trace_event) and util.
 * The files, one job each:
 *   powerloss.c        the run: rounds of children, then the cut states;
 *   powerloss_trace.c  the recorder (the hook of the children) and the
 *                      reader of the trace file;
 *   powerloss_model.c  the files a power failure at a cut leaves;
 *   powerloss_child.c  a round's child: the workload, acks into the trace,
 *                      a seeded fsync EIO, a kill or a clean close;
 *   powerloss_check.c  one cut state: open (recover), check, count losses.
 *
 * The trace is one file of records (struct pl_rec, native byte order: one
 * program on one machine writes and reads it), each appended by one
 * writev(2) with O_APPEND (a mutex orders one process's threads; the
 * kernel's file lock keeps two appends apart).  Records of the store's I/O
 * carry a file id (enum pl_file) instead of a path, and a WRITE its data.
 * Besides the hook's events: PL_ACK (a commit the workload was told is
 * durable: offset = key, len = version), PL_ROUND (a child started: offset
 * = round), PL_EPOCH (a truncating kv_open begins: the acks before it no
 * longer count once it has).  Records with tid 0 are the parent's: after a
 * child dies, the parent appends what it finds in the files that the trace
 * does not explain (operations the kill cut off between their return and
 * their record; see powerloss.c).
 */
#ifndef TOOLS_BPBENCH_POWERLOSS_INT_H
#define TOOLS_BPBENCH_POWERLOSS_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "crashtest_int.h"
#include "gen.h"

#define PL_PROG "bpbench crashtest --power-loss"
#define PL_MAGIC 0x504c5452u /* "PLTR" */
#define PL_SECTOR 512u       /* the unit of a torn write */
/* The power-loss store's page size: small pages so that a few hundred keys
 * are many pages, more than the pool's frames (evictions write pages). */
#define PL_PAGE_SIZE 1024u
/* A child that stopped because of the injected fsync EIO exits so. */
#define PL_EXIT_EIO 4

enum pl_file { PL_F_DATA, PL_F_WAL, PL_F_CTL, PL_F_TMP, PL_F_DIR, PL_NFILES, PL_F_NONE = 0xffff };
/* The names of the files are PL_F_DATA..PL_F_TMP; PL_F_DIR is only synced. */
#define PL_NNAMES PL_F_DIR

enum pl_type { PL_ACK = 16, PL_ROUND, PL_EPOCH };

struct pl_rec {
	uint32_t magic, type;   /* PL_MAGIC; enum bp_io_trace_op or pl_type */
	uint64_t size;          /* this header and the data that follows */
	int32_t result;
	uint32_t flags;
	uint16_t file, file2;   /* enum pl_file */
	uint32_t tid;           /* the recording thread; 0: the parent */
	uint64_t offset, len;
};

/* One record of the trace as read back (data points into the loaded
 * trace). */
struct pl_ev {
	uint32_t type;
	int32_t result;
	uint32_t flags;
	uint16_t file, file2;
	uint32_t tid;
	uint64_t offset, len;
	const uint8_t *data;
};

/* The recorder of one process (the child's hook argument). */
struct pl_recorder {
	int fd;                            /* the trace, O_APPEND */
	char path[PL_NFILES][4096];        /* the files' paths, as the store names them */
	pthread_mutex_t lock;              /* one record at a time in this process */
	int err;                           /* the first failed append (under lock) */
	/* The seeded fsync EIO: fail the eio_at-th SYNC_BEGIN of eio_file
	 * (0: none this round).  syncs counts them (under lock). */
	uint16_t eio_file;
	uint64_t eio_at, syncs;
	atomic_bool eio_done;              /* the EIO was injected */
};

/* The whole run. */
struct pl_run {
	struct crash_run C;     /* first: the child functions get &C */
	char dir[4096];         /* the working directory of the run */
	char store[4200];       /* dir/store.db: the children's store */
	char state[4200];       /* one cut state at a time: on tmpfs (/dev/shm)
				 * where there is one, else dir/state */
	char trace[4200];       /* dir/trace */
	struct pl_recorder rec; /* the child's, set up after the fork */
	/* The child's store: store (traced) in the rounds, a cut state's
	 * (untraced) when a state is continued (powerloss.c). */
	const char *cur_store;
	bool tracing;
	uint64_t *acked_saved;  /* [keys]: the cuts' acks while a state is continued */
	/* The round's plan (crashtest_round's target is the kill's). */
	bool clean, truncate;   /* close cleanly after clean_after acks; open truncating */
	uint64_t clean_after;
	uint16_t eio_file;
	uint64_t eio_at;
	uint64_t unexplained;   /* parent records added after kills */
	uint64_t continued;     /* states continued by a round of work and a kill */
	uint64_t eio_rounds, clean_rounds, truncating_rounds;
};

/* The trace: all of it in memory. */
struct pl_trace {
	uint8_t *buf;
	size_t bytes;
	struct pl_ev *ev;
	size_t n;
};

/* powerloss.c: the whole run (crashtest.c calls it for --power-loss):
 * 0, 1 (a lost commit or a failed round). */
int crash_power_loss_main(const struct crash_opts *o);

/* powerloss_trace.c: the recorder.  pl_recorder_open opens the trace for
 * appending and names the files of the store at path; 0 or a negative
 * errno. */
int pl_recorder_open(struct pl_recorder *r, const char *trace, const char *path);
/* bp_io_trace_fn: records ev (and injects the seeded EIO).  arg: the
 * recorder. */
int pl_trace_hook(void *arg, const struct bp_io_trace_event *ev);
/* Append one record of the workload (PL_ACK...), or any record (the
 * parent's); 0 or a negative errno. */
int pl_record(struct pl_recorder *r, const struct pl_rec *h, const void *data);
/* The file id of a path of the store, PL_F_NONE for another. */
uint16_t pl_file_of(const struct pl_recorder *r, const char *path);

/* powerloss_trace.c: the reader.  pl_trace_load reads the whole trace;
 * a torn last record (a child killed inside its append) is cut off the
 * file first.  0, or a negative errno after printing why. */
int pl_trace_load(const char *path, struct pl_trace *t);
void pl_trace_free(struct pl_trace *t);

/* powerloss_model.c: the files after a power failure. */
struct pl_model;
int pl_model_new(struct pl_model **out);
void pl_model_free(struct pl_model *m);
/* Feed event i of t (in order); 0, or -EPROTO after printing why (an
 * event the model cannot place). */
int pl_model_feed(struct pl_model *m, const struct pl_trace *t, size_t i);
/* Write the files a power failure after the events fed so far leaves
 * into dir/store.db* (each pending operation kept, dropped or torn by
 * rng); 0 or a negative errno after printing why. */
int pl_model_build(struct pl_model *m, struct rng *rng, const char *dir);
/* The files as the page cache holds them (every operation kept): name's
 * content in a malloc'd *buf of *size bytes; 1 if it exists, 0 if not,
 * or -ENOMEM. */
int pl_model_volatile(struct pl_model *m, unsigned name, uint8_t **buf, uint64_t *size);

/* powerloss_child.c: a round's child (crash_child_fn). */
_Noreturn void pl_child(const struct crash_run *C, int fd);
/* The store's configuration (power-loss geometry) for path. */
void pl_store_config(const struct crash_run *C, struct kv_config *kc, const char *path,
		     bool create);

/* powerloss_check.c: one cut state: a store at dir/store.db, the acks of
 * the current epoch in C->acked (any_ack: some commit was acknowledged
 * before the cut, in any epoch).  0 if it holds, -EBADMSG (losses counted
 * into *lost) or another error, *stage the step that failed; prints why if
 * print. */
enum pl_stage { PL_STAGE_OPEN, PL_STAGE_TREE, PL_STAGE_KEYS, PL_STAGE_CLOSE,
		PL_STAGE_CONTINUED /* powerloss.c's count */, PL_NSTAGES };
int pl_check_state(struct crash_run *C, const char *dir, bool any_ack, uint64_t *checked,
		   uint64_t *lost, bool print, enum pl_stage *stage);

#endif
