/* SPDX-License-Identifier: MIT */
/*
 * statsfile.h - a running pool's statistics in a small shared-memory file,
 * written by bpbench and read by bpstat from another process.
 *
 * Design note
 * -----------
 * The file (default /dev/shm/bpbench.<pid>) holds one struct bpstat_shared.
 * The publisher is the only writer; it updates the snapshot ~10x/s under a
 * sequence counter (seqlock): seq is odd while an update is in progress.  A
 * reader copies the struct and accepts the copy only if seq was even and
 * unchanged across the copy.  The publisher builds the file under a
 * temporary name and renames it into place, so a reader never sees a
 * half-initialised file; it unlinks it at the end.  Both sides must be the
 * same build (magic, layout version and struct size are checked).
 */
#ifndef TOOLS_ENGINE_STATSFILE_H
#define TOOLS_ENGINE_STATSFILE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bufpool/bufpool.h"

#define BPSTAT_MAGIC UINT32_C(0x54535042) /* "BPST" */
#define BPSTAT_LAYOUT 3u /* 3: bp_stats grew (durability, checksums, log), frames have a file */
#define BPSTAT_TOP_N 16u

struct bpstat_frame {
	uint32_t frame;
	uint32_t pins;
	uint64_t pageno;
	uint64_t wait_ns;       /* total ns waited on this frame (cumulative) */
	uint32_t flags;         /* BP_F_* */
	uint32_t latch_waiters;
	uint32_t file;          /* bp_frame_info.file: 0 for bp_open's */
	uint32_t reserved;
};

struct bpstat_shared {
	uint32_t magic;
	uint32_t layout;
	uint32_t size;          /* sizeof(struct bpstat_shared) */
	int32_t pid;            /* the publisher */
	_Atomic uint64_t seq;   /* seqlock: odd while the publisher writes */
	uint64_t updates;       /* snapshots published */
	uint64_t mono_ns;       /* CLOCK_MONOTONIC of this snapshot */
	uint64_t start_ns;      /* CLOCK_MONOTONIC when publishing began */
	uint64_t since_ns;      /* CLOCK_MONOTONIC the counters count from:
				 * start, or their last reset */
	uint64_t ops;           /* workload operations done (0 if unknown) */
	char label[64];         /* what runs, e.g. "ycsb A" */
	uint32_t nhot;          /* valid entries of hot[] */
	uint32_t reserved;
	struct bp_stats stats;
	struct bpstat_frame hot[BPSTAT_TOP_N];
};

struct bpstat_publisher;

/* The default path of pid's file into buf. */
void bpstat_default_path(pid_t pid, char *buf, size_t len);

/* Create the file (path NULL = the default for this process), publish a
 * first snapshot of pool and make it visible.  *out set only on success. */
int bpstat_publisher_create(struct bpstat_publisher **out, const char *path,
			    const char *label, struct bp_pool *pool);
/* Publish a new snapshot: the pool's stats, its hottest frames, ops. */
int bpstat_publish(struct bpstat_publisher *p, uint64_t ops);
/* Say the pool's counters were just reset (bp_stats_reset), so readers
 * compute their first rates from now; publishes.  Call it from the thread
 * that publishes. */
int bpstat_publisher_counters_reset(struct bpstat_publisher *p, uint64_t ops);
/* Remove the file and free.  NULL is a no-op. */
void bpstat_publisher_destroy(struct bpstat_publisher *p);
const char *bpstat_publisher_path(const struct bpstat_publisher *p);

/* Reader: map the file read-only. -ENOENT, -EPROTO (not a stats file of
 * this build), or another errno. */
struct bpstat_reader;
int bpstat_reader_open(struct bpstat_reader **out, const char *path);
/* Copy a consistent snapshot into *out.  -EAGAIN if none could be read
 * within 2 s (a publisher stopped or died mid-update). */
int bpstat_reader_read(struct bpstat_reader *r, struct bpstat_shared *out);
void bpstat_reader_close(struct bpstat_reader *r);

#endif
