/* SPDX-License-Identifier: MIT */
/*
 * ycsb_floor.c - bpbench ycsb --no-pool: the run again on the store's
 * tree copied to plain memory, the floor the pool's cost is a ratio to.
 *
 * Design note
 * -----------
 * Layer: bpbench, on the store's plain-memory copy (tools/kv/kv_mem.h),
 * the run (ycsb_run.c) and the report (ycsb_report.c).
 *
 * After the run (workload C: nothing was written since the load), every
 * store is copied page by page through the pool (kv_mem_copy), then the
 * run's phase is repeated as PHASE_FLOOR: the same threads, each with its
 * generator seeded again as for the run (so the same keys in the same
 * order), the same --ops or --duration, each read checked as in the run
 * (ycsb_run.c's op_read), but searched with kv_mem_get in the copy, the
 * store's own node code with no page table, pin or latch.  The copy is
 * not timed.  Both phases are measured the same way (wall clock and
 * getrusage around the phase, the whole process: the pool's I/O and
 * writer threads stay up in the floor, as they are in the run), and a
 * phase that did no lookup fails the run rather than print a ratio of
 * nothing.
 */
#include "ycsb_int.h"

#include <errno.h>
#include <string.h>

#include "util/clock.h"

int ycsb_floor(struct ycsb_run *R, const struct ycsb_measure *pool)
{
	uint64_t t0 = util_now_ns(), pages = 0, bytes = 0;
	int rc = 0;
	for (unsigned i = 0; i < R->o.files && rc == 0; i++) {
		rc = kv_mem_copy(R->kv[i], &R->mem[i]);
		if (rc) {
			fprintf(stderr, YCSB_PROG ": --no-pool: copying store %u: %s\n", i,
				strerror(-rc));
			break;
		}
		pages += kv_mem_pages(R->mem[i]);
		bytes += kv_mem_bytes(R->mem[i]);
	}
	double copy_s = (double)(util_now_ns() - t0) / 1e9;
	if (rc == 0) {
		for (unsigned i = 0; i < R->o.threads; i++) { /* the run's keys again */
			R->w[i].h.rng = rng_seeded(R->o.seed, i);
			memset(R->w[i].h.hist, 0, sizeof(R->w[i].h.hist));
		}
		/* a timed run ended by setting stop; the workers are joined */
		atomic_store_explicit(&R->crew.stop, false, memory_order_relaxed);
		struct ycsb_measure floor = {.u0 = cpu_usage_now()};
		rc = ycsb_run_phase(R, PHASE_FLOOR, &floor.secs);
		floor.u1 = cpu_usage_now();
		floor.ops = ycsb_crew_done(&R->crew);
		if (rc == 0)
			ycsb_report_floor(R, pages, bytes, copy_s, pool, &floor);
		if (rc == 0 && (pool->ops == 0 || floor.ops == 0)) {
			fprintf(stderr, YCSB_PROG ": --no-pool: the %s did no lookup\n",
				pool->ops == 0 ? "run on the pool" : "floor");
			rc = -EIO;
		}
	}
	for (unsigned i = 0; i < R->o.files; i++) {
		kv_mem_free(R->mem[i]);
		R->mem[i] = NULL;
	}
	return rc;
}
