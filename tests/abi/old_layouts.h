/* SPDX-License-Identifier: MIT */
/*
 * old_layouts.h - the older layouts of bufpool's extensible structs, as a
 * program built against them has them (tests/abi/test_layouts.c).
 *
 * struct old_bp_config and struct old_bp_stats are struct bp_config and
 * struct bp_stats as 0.1 had them before its last additions (read_path;
 * the inline_* statistics), with 0.2's size field in front: the first
 * published layouts, BP_CONFIG_SIZE_VER0 and BP_STATS_SIZE_VER0 bytes.  Copied field for field (comments left out), not derived from
 * bufpool.h, so that a change to the header's prefix shows up as a
 * mismatch of the _Static_asserts in test_layouts.c rather than being
 * followed silently.
 */
#ifndef TESTS_ABI_OLD_LAYOUTS_H
#define TESTS_ABI_OLD_LAYOUTS_H

#include <bufpool/bufpool.h>

struct old_bp_config {
	size_t size;
	const char *path;
	unsigned flags;
	uint32_t page_size;
	uint32_t nframes;
	unsigned io_threads;
	unsigned readahead_pages;
	unsigned partitions;
	unsigned writer_interval_ms;
	uint32_t io_latency_us;
	struct fwait_config fwait;
	void (*log)(void *log_arg, int level, const char *msg);
	void *log_arg;
	int (*flush_log)(void *flush_log_arg, uint64_t lsn, uint64_t *durable);
	void *flush_log_arg;
	unsigned io_engine;
	unsigned io_depth;
	bp_io_trace_fn io_trace;
	void *io_trace_arg;
};

struct old_bp_stats {
	size_t size;
	uint32_t page_size;
	uint32_t nframes;
	uint32_t partitions;
	uint32_t io_threads;
	uint32_t io_engine;
	uint32_t io_depth;
	enum fwait_policy policy;
	unsigned jemalloc_arena;
	size_t pool_bytes;
	uint64_t file_pages;
	uint64_t hits;
	uint64_t misses;
	uint64_t reads;
	uint64_t writes;
	uint64_t readaheads;
	uint64_t read_ios;
	uint64_t creates;
	uint64_t evictions;
	uint64_t dirty_evictions;
	uint64_t bgwriter_writes;
	uint64_t fsyncs;
	uint64_t read_errors;
	uint64_t write_errors;
	uint64_t fsync_errors;
	uint64_t checksum_errors;
	uint64_t log_flushes;
	uint64_t durable_lsn;
	uint64_t oldest_dirty_lsn;
	int durability_err;
	uint64_t faults_injected;
	uint64_t busy;
	uint64_t optimistic_reads;
	uint64_t optimistic_restarts;
	struct bp_wait_hist io_wait;
	struct bp_wait_hist writeback_wait;
	struct bp_wait_hist latch_shared_wait;
	struct bp_wait_hist latch_exclusive_wait;
	struct bp_wait_hist frame_wait;
	uint32_t frames_mapped;
	uint32_t frames_pinned;
	uint32_t frames_dirty;
	uint32_t frames_writeback;
	uint32_t frames_locked;
	struct fwait_stats fwait;
};

#endif
