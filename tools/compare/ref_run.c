/* SPDX-License-Identifier: MIT */
/*
 * ref_run.c - ycsb-ref's measured phases: the operations on the engine,
 * the workers' sessions, and the crew that runs them.
 *
 * Design note
 * -----------
 * Layer: ycsb-ref, on the engine (ref_engine.h) and ycsb_common: the
 * workers' loops, the seeding and the phase clock are ycsb_crew.c's, the
 * value codec ycsb_stream.c's, the very code bpbench ycsb runs
 * (tools/bpbench/ycsb_run.c), so each engine stores the values the kv
 * store stores, in the same order of operations.  What differs: see
 * ref.h; the threads and the shared state: ycsb_crew.h.
 */
#include "ref.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- Operations ------------------------------------------------------------ */

static int op_read(struct ref_worker *w, uint64_t recno)
{
	struct ref_run *R = w->run;
	uint8_t buf[REF_VALUE_SIZE_MAX];
	uint64_t key = key_of(recno), ver;
	int rc = R->o.engine->get(w->session, key, buf, R->o.value_size);
	if (rc)
		return ycsb_hand_fail(&w->h, rc, "get", recno);
	if (ycsb_value_decode(buf, R->o.value_size, key, &ver) != 0)
		return ycsb_hand_fail(&w->h, -EBADMSG, "read-back (wrong value)", recno);
	return 0;
}

/* A blind write of the next version of this worker's writes (the load's
 * first write of a record is version 1, as bpbench's is). */
static int op_write(struct ref_worker *w, uint64_t recno, const char *what)
{
	struct ref_run *R = w->run;
	uint8_t buf[REF_VALUE_SIZE_MAX];
	uint64_t key = key_of(recno);
	ycsb_value_encode(buf, R->o.value_size, key, R->phase == PHASE_LOAD ? 1 : ++w->writes);
	int rc = R->o.engine->put(w->session, key, buf, R->o.value_size);
	return rc ? ycsb_hand_fail(&w->h, rc, what, recno) : 0;
}

/* The crew's hooks: h is the first member of a struct ref_worker. */
static int do_load(struct ycsb_hand *h, uint64_t recno)
{
	return op_write((struct ref_worker *)h, recno, "load");
}

static int do_op(struct ycsb_hand *h, enum ycsb_op op)
{
	struct ref_worker *w = (struct ref_worker *)h;
	struct ref_run *R = w->run;
	uint64_t recno = key_choose(R->o.dist, &h->zipf, &h->rng, R->o.records);
	switch (op) {
	case OP_UPDATE:
		return op_write(w, recno, "update");
	case OP_RMW:
		return op_read(w, recno) ? h->rc : op_write(w, recno, "read-modify-write");
	case OP_READ:
	default: /* inserts and scans: refused by ref_parse_opts */
		return op_read(w, recno);
	}
}

/* The monitor's progress line, every 5 s. */
static void progress(void *arg, const char *phase, double t, uint64_t ops, double rate)
{
	(void)arg;
	fprintf(stderr, "%s %6.1fs  ops %12" PRIu64 "  ops/s %10.0f\n", phase, t, ops, rate);
}

/* ---- Setup ------------------------------------------------------------------ */

int ref_run_init(struct ref_run *R)
{
	R->w = calloc(R->o.threads, sizeof(*R->w));
	if (!R->w) {
		fprintf(stderr, REF_PROG ": out of memory\n");
		return -ENOMEM;
	}
	R->crew = (struct ycsb_crew){
		.prog = REF_PROG, .fail_lead = "", .mix = R->o.mix, .threads = R->o.threads,
		.records = R->o.records, .ops = R->o.ops, .duration_s = R->o.duration_s,
		.workers = R->w, .stride = sizeof(*R->w), .load = do_load, .op = do_op,
		.arg = R, .progress = progress, .progress_every = R->o.quiet ? 0 : 50};
	for (unsigned i = 0; i < R->o.threads; i++)
		R->w[i].run = R;
	ycsb_crew_init(&R->crew, R->o.seed, R->o.theta);
	/* sessions before either phase: opening them is not timed (bpbench's
	 * workers need none) */
	for (unsigned i = 0; i < R->o.threads; i++) {
		int rc = R->o.engine->session_open(R->db, &R->w[i].session);
		if (rc) {
			fprintf(stderr, REF_PROG ": %s: cannot open session %u: %s\n",
				R->o.engine->name, i, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

void ref_run_fini(struct ref_run *R)
{
	if (!R->w)
		return;
	for (unsigned i = 0; i < R->o.threads; i++)
		if (R->w[i].session)
			R->o.engine->session_close(R->w[i].session);
	ycsb_crew_fini(&R->crew);
	free(R->w);
	R->w = NULL;
}

int ref_run_phase(struct ref_run *R, enum ref_phase phase, double *seconds)
{
	R->phase = phase;
	return ycsb_crew_phase(&R->crew, phase == PHASE_LOAD ? "load" : "run ",
			       phase == PHASE_LOAD, seconds);
}
