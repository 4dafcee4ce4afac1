/* SPDX-License-Identifier: MIT */
/*
 * statsread.h - the reading side of the stats file (bufpool/statsfile.h,
 * written by bp_stats_publish): find the publishers, map a file read-only,
 * copy consistent snapshots, tell a live publisher from a dead or stale one.
 *
 * Design note
 * -----------
 * Layer: tools (bpstat and its tests), on bufpool's internal statsfile.h
 * and libc.  No state outside the reader object; nothing is written to
 * the files.  Single-threaded use of one reader.
 */
#ifndef TOOLS_BPSTAT_STATSREAD_H
#define TOOLS_BPSTAT_STATSREAD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bufpool/statsfile.h"

/* A stats file found in BP_SF_DIR. */
struct bpstat_found {
	char path[300];
	char key[128];  /* what follows BP_SF_PREFIX: "<pid>.<name as a file name>" */
	pid_t pid;
};

/* Up to max stats files of BP_SF_DIR (any process, alive or dead) into
 * out[], sorted by key; *n gets how many exist (may exceed max).  0 or
 * -errno of opening the directory (-ENOENT: none can exist). */
int bpstat_find(struct bpstat_found *out, size_t max, size_t *n);

/* Map path read-only.  0; -EPROTO: not a stats file (too short, no
 * magic); -EPROTONOSUPPORT: a stats file of another layout or size, which
 * *head (if not NULL) then describes; or another -errno. */
struct bpstat_reader;
int bpstat_reader_open(struct bpstat_reader **out, const char *path, struct bp_sf_head *head);
/* A consistent snapshot into *out: retries a torn copy for up to 2 s
 * (yielding, then backing off), then -EAGAIN. */
int bpstat_reader_read(struct bpstat_reader *r, struct bp_statsfile *out);
void bpstat_reader_close(struct bpstat_reader *r);

enum bpstat_liveness {
	BPSTAT_LIVE = 0,
	BPSTAT_DEAD,   /* the publishing process is gone (kill(pid, 0): ESRCH) */
	BPSTAT_STALE,  /* no update for bpstat_stale_ns: stopped, hung, a zombie */
};
/* How long without an update makes a file stale: 50 periods, at least 5 s
 * (a busy machine may hold the publisher thread off for a while). */
uint64_t bpstat_stale_ns(const struct bp_statsfile *s);
/* What s says of its publisher at CLOCK_MONOTONIC now_ns. */
enum bpstat_liveness bpstat_liveness(const struct bp_statsfile *s, uint64_t now_ns);

#endif
