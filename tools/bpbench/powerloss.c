/* SPDX-License-Identifier: MIT */
/*
 * powerloss.c - bpbench crashtest --power-loss: rounds of a traced durable
 * store's writer ended by SIGKILL (or a clean close, or an injected fsync
 * EIO), then power failures at seeded cut points of the whole trace, each
 * recovered and checked against every commit acknowledged before it.
 *
 * Design note
 * -----------
 * Layer: bpbench (see powerloss_int.h for the files and the trace), on
 * crashtest's process helpers, the store, util's clock and gen.h's rng.
 *
 * Rounds.  Round r's plan comes from stream CRASH_STREAM(r, 0) of the
 * seed: the kill after 1..max_acks acks; round 1 and one in
 * --truncate-every later rounds open truncating (a new epoch); one in four
 * closes cleanly at that count instead of being killed; one in
 * --eio-every (2) arms an fsync EIO (three in four the log's n-th sync, n
 * up to the commits before the kill, the ack count over the batch, so
 * that it mostly fires; else one of the data file's first three), after
 * which the store's
 * sticky error ends the child (PL_EXIT_EIO).  The children append to one
 * trace; the store's files stay between rounds, so the next child
 * recovers what the last left in the page cache, and a power failure
 * after it still loses what no sync made durable.
 *
 * Explaining a kill.  A SIGKILL between an operation's return and its
 * record leaves the files ahead of the trace.  After each child the parent
 * compares the model's page-cache view (every operation kept) with the
 * files and appends, as tid 0, what explains them: a RENAME of .ctl.tmp it
 * finds done, an OPEN of a file it finds created, WRITEs of the differing
 * sectors, a TRUNCATE to the size.  They are pending like any other write
 * (the dead process never synced them).  Their count is printed: 0 after
 * clean closes, a few after kills; many would mean the hook misses
 * operations.
 *
 * Continuing a state.  One failure per state cannot show a loss that
 * needs work after the failure: old pages a failed truncating open brought
 * back, or pages a trusting recovery wrote, carry LSNs above a log that
 * restarted below them, and only the commits acknowledged after that are
 * skipped, at the next recovery.  So one passing state in
 * PL_CONTINUE_EVERY (one in four of those cut among a round's first
 * PL_RECOVERY_EVENTS events, where a recovery's writes are) gets a round
 * of the same workload (untraced, versions
 * of round kills + 1, killed after a seeded 1..max_acks acks from stream
 * CRASH_STREAM(s + 1, 0xfffc)), and is checked again with those acks too.
 *
 * Cuts.  N cut points over the whole trace from stream CRASH_STREAM(0,
 * 0xfffe): a third just after an ACK or a log sync (where a lost write
 * shows), a sixth just after a sync of the data file or the directory (a
 * checkpoint's or a recovery's flush, before the control file moves), a
 * half among the first PL_RECOVERY_EVENTS events of a round (its
 * recovery: pages written before the log is synced), a sixth uniform.  In
 * increasing order, one pass over the trace feeds a fresh model and the
 * acks; at each cut the state (coins from stream CRASH_STREAM(s + 1,
 * 0xfffd), s the state's number) is written to the state directory and
 * checked (powerloss_check.c).  The first 5 failing states of each kind
 * (not opened, a bad tree, lost keys, not closed) are printed with their
 * cut (built again with the same coins, to say what failed); all are
 * counted.  Exit 0, 1, 2.
 */
#include "powerloss_int.h"
#include "toolutil.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/clock.h"

#define PL_PRINT_FAILURES 5
/* A recovery (kv_open after a kill) and the first writes after it: the
 * events after a PL_ROUND that a third of the cuts fall among. */
#define PL_RECOVERY_EVENTS 200
/* One state in this many that passes is continued (see the design note);
 * one in four of those cut in a recovery window. */
#define PL_CONTINUE_EVERY 16

static const char *const pl_name[PL_NNAMES] = {"", ".wal", ".ctl", ".ctl.tmp"};

/* The plan of round C->round into P. */
static void plan_round(struct pl_run *P, struct crash_round *r)
{
	struct rng rng = rng_seeded(P->C.o.seed, CRASH_STREAM(P->C.round, 0));
	uint64_t target = 1 + rng_below(&rng, P->C.o.max_acks);
	P->truncate = P->C.round == 1 ||
		      (P->C.o.truncate_every && rng_below(&rng, P->C.o.truncate_every) == 0);
	P->clean = rng_below(&rng, 4) == 0;
	P->clean_after = target;
	r->target = P->clean ? UINT64_MAX : target;
	P->eio_at = 0;
	if (P->C.o.eio_every && rng_below(&rng, P->C.o.eio_every) == 0) {
		P->eio_file = rng_below(&rng, 4) ? PL_F_WAL : PL_F_DATA;
		P->eio_at = 1 + rng_below(&rng, P->eio_file == PL_F_WAL
						      ? target / P->C.o.batch + 1 : 3);
	}
}

/* Append a parent's record (tid 0) through rec. */
static int parent_record(struct pl_run *P, struct pl_recorder *rec, struct pl_rec h,
			 const void *data)
{
	P->unexplained++;
	return pl_record(rec, &h, data);
}

/* The file of name in the store: 1 and its bytes, 0 if absent, or an
 * error. */
static int read_real(struct pl_run *P, unsigned name, uint8_t **buf, uint64_t *size)
{
	char path[8300];
	struct stat st;
	snprintf(path, sizeof(path), "%s%s", P->store, pl_name[name]);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	int rc = fstat(fd, &st) ? -errno : 0;
	*size = rc ? 0 : (uint64_t)st.st_size;
	*buf = malloc(*size ? *size : 1);
	uint64_t got = 0;
	while (rc == 0 && *buf && got < *size) {
		ssize_t n = pread(fd, *buf + got, *size - got, (off_t)got);
		if (n <= 0)
			rc = n < 0 ? -errno : -EIO;
		got += n > 0 ? (uint64_t)n : 0;
	}
	close(fd);
	if (rc == 0 && !*buf)
		rc = -ENOMEM;
	if (rc)
		free(*buf);
	return rc ? rc : 1;
}

/* Names: a rename or a creation the trace lacks.  Contents: the sectors
 * and the size that differ.  *added counts the records. */
static int explain_name(struct pl_run *P, struct pl_model *m, struct pl_recorder *rec,
			unsigned name, bool names)
{
	uint8_t *v = NULL, *f = NULL;
	uint64_t vs = 0, fs = 0;
	int hv = pl_model_volatile(m, name, &v, &vs);
	int hf = hv < 0 ? hv : read_real(P, name, &f, &fs);
	int rc = hf < 0 ? hf : 0;
	if (rc == 0 && names && hv && !hf) {
		if (name == PL_F_TMP) /* the kill came between rename(2) and its record */
			rc = parent_record(P, rec, (struct pl_rec){.type = BP_IO_TRACE_RENAME,
								  .file = PL_F_TMP, .file2 = PL_F_CTL},
					   NULL);
		else {
			fprintf(stderr, PL_PROG ": round %u: the trace has %s%s, the disk does not\n",
				P->C.round, P->store, pl_name[name]);
			rc = -EPROTO;
		}
	} else if (rc == 0 && names && !hv && hf) {
		rc = parent_record(P, rec, (struct pl_rec){.type = BP_IO_TRACE_OPEN, .file = name,
							  .flags = BP_IO_TRACE_CREAT}, NULL);
	} else if (rc == 0 && !names && hv && hf) {
		uint64_t common = vs < fs ? vs : fs;
		for (uint64_t a = 0; a < common && rc == 0;) {
			uint64_t b = a;
			while (b < common && memcmp(v + b, f + b, PL_SECTOR < common - b ?
						    PL_SECTOR : common - b) != 0)
				b = b + PL_SECTOR < common ? b + PL_SECTOR : common;
			if (b > a)
				rc = parent_record(P, rec, (struct pl_rec){.type = BP_IO_TRACE_WRITE,
									  .file = name, .offset = a,
									  .len = b - a}, f + a);
			a = b > a ? b : a + PL_SECTOR;
		}
		if (rc == 0 && fs > vs)
			rc = parent_record(P, rec, (struct pl_rec){.type = BP_IO_TRACE_WRITE,
								  .file = name, .offset = vs,
								  .len = fs - vs}, f + vs);
		if (rc == 0 && fs < vs)
			rc = parent_record(P, rec, (struct pl_rec){.type = BP_IO_TRACE_TRUNCATE,
								  .file = name, .offset = fs}, NULL);
	}
	free(v);
	free(f);
	return rc;
}

/* Load the trace and feed what the model has not seen. */
static int load_and_feed(struct pl_trace *t, const char *path, struct pl_model *m, size_t *fed)
{
	pl_trace_free(t);
	int rc = pl_trace_load(path, t);
	while (rc == 0 && *fed < t->n)
		rc = pl_model_feed(m, t, (*fed)++);
	return rc;
}

/* After a child: make the trace explain the files (see the design note). */
static int explain(struct pl_run *P, struct pl_model *m, struct pl_trace *t, size_t *fed)
{
	int rc = load_and_feed(t, P->trace, m, fed);
	for (int pass = 0; pass < 2 && rc == 0; pass++) {
		struct pl_recorder rec = {.fd = open(P->trace, O_WRONLY | O_APPEND | O_CLOEXEC)};
		if (rec.fd < 0 || pthread_mutex_init(&rec.lock, NULL)) {
			rc = rec.fd < 0 ? -errno : -ENOMEM;
			if (rec.fd >= 0)
				close(rec.fd);
			return rc;
		}
		for (unsigned name = 0; name < PL_NNAMES && rc == 0; name++)
			rc = explain_name(P, m, &rec, name, pass == 0);
		pthread_mutex_destroy(&rec.lock);
		close(rec.fd);
		if (rc == 0)
			rc = load_and_feed(t, P->trace, m, fed);
	}
	return rc;
}

/* How round C->round's child ended: 0 if as planned. */
static int round_verdict(struct pl_run *P, int st, bool killed)
{
	/* the injected EIO may end the child before the kill that follows */
	if (WIFEXITED(st) && WEXITSTATUS(st) == PL_EXIT_EIO && P->eio_at)
		return 0;
	if (killed)
		return crash_killed_check(&P->C, st, "the child");
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	fprintf(stderr, PL_PROG ": round %u: the child ended with %s %d\n", P->C.round,
		WIFEXITED(st) ? "exit status" : "signal", WIFEXITED(st) ? WEXITSTATUS(st)
		: WTERMSIG(st));
	return -ECHILD;
}

static int run_rounds(struct pl_run *P, struct pl_trace *t)
{
	struct pl_model *m = NULL;
	size_t fed = 0;
	int rc = pl_model_new(&m);
	P->cur_store = P->store;
	P->tracing = true;
	for (P->C.round = 1; P->C.round <= P->C.o.kills && rc == 0 && !tool_stop_signal;
	     P->C.round += rc == 0) {
		struct crash_round r = {0};
		int st = 0;
		bool killed = false;
		plan_round(P, &r);
		rc = crash_round_drive(&P->C, &r, pl_child, &st, &killed);
		if (rc == 0)
			rc = round_verdict(P, st, killed);
		uint64_t before = P->unexplained;
		if (rc == 0)
			rc = explain(P, m, t, &fed);
		P->eio_rounds += WIFEXITED(st) && WEXITSTATUS(st) == PL_EXIT_EIO;
		P->clean_rounds += P->clean && !killed && WIFEXITED(st) && WEXITSTATUS(st) == 0;
		P->truncating_rounds += P->truncate;
		if (rc == 0 && !P->C.o.quiet)
			printf("round %u: %" PRIu64 " acks, %s%s%s, %" PRIu64 " records added after "
			       "it, trace %zu events\n", P->C.round, r.acks,
			       !WIFEXITED(st) ? "killed" : WEXITSTATUS(st) == 0 ? "closed"
			       : "fsync EIO",
			       P->truncate ? ", truncating open" : "",
			       P->eio_at ? (P->eio_file == PL_F_WAL ? ", EIO armed (log)"
					    : ", EIO armed (data)") : "",
			       P->unexplained - before, t->n);
	}
	pl_model_free(m);
	return rc;
}

static int cut_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* N cut points in [1, n], sorted (see the design note). */
static uint64_t *choose_cuts(const struct pl_run *P, const struct pl_trace *t)
{
	uint64_t N = P->C.o.states, *cut = malloc(N * sizeof(*cut));
	/* after an ACK or a log sync; after a data file or directory sync; a
	 * round's start */
	size_t *mark[3], nmark[3] = {0};
	for (int k = 0; k < 3; k++)
		mark[k] = malloc((t->n + 1) * sizeof(*mark[k]));
	if (!cut || !mark[0] || !mark[1] || !mark[2]) {
		for (int k = 0; k < 3; k++)
			free(mark[k]);
		free(cut);
		return NULL;
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct pl_ev *e = &t->ev[i];
		bool end = e->type == BP_IO_TRACE_SYNC_END;
		if (e->type == PL_ACK || (end && e->file == PL_F_WAL))
			mark[0][nmark[0]++] = i;
		else if (end && (e->file == PL_F_DATA || e->file == PL_F_DIR))
			mark[1][nmark[1]++] = i;
		else if (e->type == PL_ROUND)
			mark[2][nmark[2]++] = i;
	}
	struct rng rng = rng_seeded(P->C.o.seed, CRASH_STREAM(0, 0xfffe));
	for (uint64_t s = 0; s < N; s++) {
		uint64_t kind = rng_below(&rng, 6), c;
		if (kind < 2 && nmark[0])
			c = mark[0][rng_below(&rng, nmark[0])] + 1;
		else if (kind == 2 && nmark[1])
			c = mark[1][rng_below(&rng, nmark[1])] + 1;
		else if (kind < 5 && nmark[2]) /* in a recovery: its first events */
			c = mark[2][rng_below(&rng, nmark[2])] + 1 + rng_below(&rng, PL_RECOVERY_EVENTS);
		else
			c = 1 + rng_below(&rng, t->n);
		cut[s] = c < t->n ? c : t->n;
	}
	for (int k = 0; k < 3; k++)
		free(mark[k]);
	qsort(cut, N, sizeof(*cut), cut_cmp);
	return cut;
}

struct cut_totals {
	uint64_t states, failed, checked, lost;
	uint64_t by_stage[PL_NSTAGES]; /* failed states by the step that failed */
};

static const char *const stage_name[PL_NSTAGES] = {"did not open", "had a bad tree or value",
						   "lost acknowledged keys", "did not close",
						   "failed once continued"};

/* Continue state s (it passed its check): a round of work on it, killed,
 * then the check again with that round's acks too (see the design note).
 * 0, or an error of the run (a failed state is counted, not an error). */
static int continue_state(struct pl_run *P, uint64_t s, uint64_t c, struct cut_totals *tot)
{
	struct crash_run *C = &P->C;
	char path[8300];
	struct stat st;
	snprintf(path, sizeof(path), "%s/store.db", P->state);
	if (stat(path, &st) != 0)
		return 0; /* a first create the failure undid: nothing to continue */
	unsigned round = C->round;
	uint64_t acks = C->total_acks;
	memcpy(P->acked_saved, C->acked, C->o.keys * sizeof(*C->acked));
	struct rng rng = rng_seeded(C->o.seed, CRASH_STREAM(s + 1, 0xfffc));
	struct crash_round r = {.target = 1 + rng_below(&rng, C->o.max_acks)};
	C->round = C->o.kills + 1; /* its versions above every round's */
	P->cur_store = path;
	P->tracing = P->truncate = P->clean = false;
	P->eio_at = 0;
	int status = 0;
	bool killed = false;
	enum pl_stage stage = PL_STAGE_OPEN;
	uint64_t lost = 0, ignored = 0;
	bool print = tot->by_stage[PL_STAGE_CONTINUED] < PL_PRINT_FAILURES;
	int rc = crash_round_drive(C, &r, pl_child, &status, &killed);
	if (rc == 0)
		rc = killed ? crash_killed_check(C, status, "the continuing child") : -ECHILD;
	if (rc == 0)
		rc = pl_check_state(C, P->state, true, &ignored, &lost, print, &stage);
	P->continued++;
	if (rc) {
		tot->failed++;
		tot->lost += lost;
		if (tot->by_stage[PL_STAGE_CONTINUED]++ < PL_PRINT_FAILURES)
			fprintf(stderr, PL_PROG ": (above) state %" PRIu64 ": a power failure after "
				"event %" PRIu64 " (round %u), then %" PRIu64 " acks and a kill: %s\n",
				s, c, round, r.acks, killed ? stage_name[stage] : "no kill");
	}
	memcpy(C->acked, P->acked_saved, C->o.keys * sizeof(*C->acked));
	C->round = round;
	C->total_acks = acks;
	P->cur_store = P->store;
	return 0;
}

/* One state at cut c (events [0, c) done): 0, or an error of the model
 * (a failed state is counted, not an error). */
static int check_cut(struct pl_run *P, struct pl_model *m, uint64_t s, uint64_t c, size_t n,
		     bool any_ack, bool in_recovery, struct cut_totals *tot)
{
	struct rng rng = rng_seeded(P->C.o.seed, CRASH_STREAM(s + 1, 0xfffd));
	int rc = pl_model_build(m, &rng, P->state);
	if (rc)
		return rc;
	uint64_t lost = 0;
	enum pl_stage stage;
	tot->states++;
	if (pl_check_state(&P->C, P->state, any_ack, &tot->checked, &lost, false, &stage) == 0)
		return s % (in_recovery ? 4 : PL_CONTINUE_EVERY) ? 0 : continue_state(P, s, c, tot);
	tot->lost += lost;
	tot->failed++;
	/* the first few failures of each kind are printed */
	if (tot->by_stage[stage]++ >= PL_PRINT_FAILURES)
		return 0;
	fprintf(stderr, PL_PROG ": state %" PRIu64 ": a power failure after event %" PRIu64
		" of %zu (round %u) %s:\n", s, c, n, P->C.round, stage_name[stage]);
	/* the same coins build the same state again, to print what failed */
	rng = rng_seeded(P->C.o.seed, CRASH_STREAM(s + 1, 0xfffd));
	uint64_t ignored = 0;
	lost = 0;
	if ((rc = pl_model_build(m, &rng, P->state)) == 0)
		(void)pl_check_state(&P->C, P->state, any_ack, &ignored, &lost, true, &stage);
	return rc;
}

static int run_cuts(struct pl_run *P, const struct pl_trace *t, struct cut_totals *tot)
{
	struct pl_model *m;
	uint64_t *cut = choose_cuts(P, t);
	int rc = cut ? pl_model_new(&m) : -ENOMEM;
	if (rc) {
		free(cut);
		return rc;
	}
	memset(P->C.acked, 0, P->C.o.keys * sizeof(*P->C.acked));
	bool any_ack = false;
	uint64_t s = 0;
	size_t round_at = 0; /* the last PL_ROUND's index */
	P->C.round = 0;
	for (size_t i = 0; i <= t->n && rc == 0; i++) {
		while (s < P->C.o.states && cut[s] == i && rc == 0 && !tool_stop_signal) {
			rc = check_cut(P, m, s, i, t->n, any_ack,
				       i - round_at <= PL_RECOVERY_EVENTS, tot);
			s++;
		}
		if (i == t->n || rc || tool_stop_signal)
			break;
		const struct pl_ev *e = &t->ev[i];
		if (e->type == PL_ACK && e->offset < P->C.o.keys) {
			any_ack = true;
			if (P->C.acked[e->offset] < e->len)
				P->C.acked[e->offset] = e->len;
		} else if (e->type == PL_EPOCH) {
			memset(P->C.acked, 0, P->C.o.keys * sizeof(*P->C.acked));
		} else if (e->type == PL_ROUND) {
			P->C.round = (unsigned)e->offset;
			round_at = i;
		}
		rc = pl_model_feed(m, t, i);
	}
	pl_model_free(m);
	free(cut);
	return rc;
}

/* The run's directory and files; 0 or a negative errno after printing. */
static int setup_dir(struct pl_run *P)
{
	const char *tmp = getenv("TMPDIR");
	if (P->C.o.file) {
		snprintf(P->dir, sizeof(P->dir), "%s", P->C.o.file);
		if (mkdir(P->dir, 0755) != 0 && errno != EEXIST) {
			fprintf(stderr, PL_PROG ": mkdir %s: %s\n", P->dir, strerror(errno));
			return -errno;
		}
	} else {
		snprintf(P->dir, sizeof(P->dir), "%s/bpbench-power.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(P->dir)) {
			fprintf(stderr, PL_PROG ": mkdtemp %s: %s\n", P->dir, strerror(errno));
			return -errno;
		}
	}
	snprintf(P->store, sizeof(P->store), "%s/store.db", P->dir);
	snprintf(P->trace, sizeof(P->trace), "%s/trace", P->dir);
	/* the states need a file system, not durability: tmpfs where there is
	 * one (their recoveries' fsyncs cost nothing there) */
	struct stat st;
	snprintf(P->state, sizeof(P->state), "/dev/shm/bpbench-power-state.XXXXXX");
	if (stat("/dev/shm", &st) != 0 || !S_ISDIR(st.st_mode) || !mkdtemp(P->state))
		snprintf(P->state, sizeof(P->state), "%s/state", P->dir);
	if (mkdir(P->state, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, PL_PROG ": mkdir %s: %s\n", P->state, strerror(errno));
		return -errno;
	}
	int fd = open(P->trace, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, PL_PROG ": creating %s: %s\n", P->trace, strerror(errno));
		return -errno;
	}
	close(fd);
	return 0;
}

static void remove_dir(struct pl_run *P)
{
	char path[8400];
	for (unsigned i = 0; i < PL_NNAMES; i++) {
		snprintf(path, sizeof(path), "%s%s", P->store, pl_name[i]);
		unlink(path);
		snprintf(path, sizeof(path), "%s/store.db%s", P->state, pl_name[i]);
		unlink(path);
	}
	unlink(P->trace);
	rmdir(P->state);
	rmdir(P->dir);
}

int crash_power_loss_main(const struct crash_opts *o)
{
	struct pl_run *P = calloc(1, sizeof(*P));
	struct pl_trace t = {0};
	struct cut_totals tot = {0};
	if (!P)
		return 1;
	P->C.o = *o;
	int rc = setup_dir(P);
	P->C.file = P->store;
	P->C.acked = rc ? NULL : calloc(o->keys, sizeof(*P->C.acked));
	P->acked_saved = rc ? NULL : calloc(o->keys, sizeof(*P->acked_saved));
	if (rc == 0 && (!P->C.acked || !P->acked_saved))
		rc = -ENOMEM;
	if (rc == 0 && !o->quiet) {
		const char *engine = getenv("BP_IO_ENGINE");
		printf("crashtest --power-loss: %s, %u rounds, %" PRIu64 " states, seed %" PRIu64
		       ", %u threads, %" PRIu64 " keys, %s, %u frames of %u bytes, checkpoint every %"
		       PRIu64 " bytes, kill after 1..%" PRIu64 " acks, engine %s%s%s\n", P->dir,
		       o->kills, o->states, o->seed, o->threads, o->keys,
		       o->batch == 1 ? "sync_commit" : "batches", o->frames, PL_PAGE_SIZE,
		       o->checkpoint_bytes, o->max_acks, engine && *engine ? engine : "auto",
		       o->break_wal ? ", BROKEN POOL (--break-wal)" : "",
		       o->break_recovery ? ", BROKEN RECOVERY (--break-recovery)" : "");
	}
	uint64_t t0 = util_now_ns();
	if (rc == 0)
		rc = run_rounds(P, &t);
	unsigned rounds = P->C.round - 1; /* done, when rc == 0 */
	double rounds_s = (double)(util_now_ns() - t0) * 1e-9;
	if (rc == 0)
		rc = run_cuts(P, &t, &tot);
	double secs = (double)(util_now_ns() - t0) * 1e-9;
	if (rc == 0 && tool_stop_signal)
		printf("crashtest --power-loss: interrupted after %u of %u rounds and %" PRIu64
		       " of %" PRIu64 " states\n", rounds, o->kills, tot.states, o->states);
	if (rc == 0 && tot.failed == 0)
		printf("crashtest --power-loss: OK: %u rounds (%" PRIu64 " clean closes, %" PRIu64
		       " fsync EIO, %" PRIu64 " truncating opens), %" PRIu64 " acks, %zu events, %"
		       PRIu64 " records added after kills; %" PRIu64 " states (%" PRIu64
		       " continued), %" PRIu64 " acked keys checked, 0 lost; %.1f s (rounds %.1f s)\n",
		       rounds, P->clean_rounds, P->eio_rounds, P->truncating_rounds,
		       P->C.total_acks, t.n, P->unexplained, tot.states, P->continued, tot.checked,
		       secs, rounds_s);
	else if (rc == 0)
		fprintf(stderr, PL_PROG ": FAILED: %" PRIu64 " of %" PRIu64 " states: %" PRIu64
			" %s, %" PRIu64 " %s, %" PRIu64 " %s (%" PRIu64 " keys), %" PRIu64 " %s, %"
			PRIu64 " %s of %" PRIu64 " (seed %" PRIu64 "%s%s), %.1f s\n", tot.failed,
			tot.states, tot.by_stage[0], stage_name[0], tot.by_stage[1], stage_name[1],
			tot.by_stage[2], stage_name[2], tot.lost, tot.by_stage[3], stage_name[3],
			tot.by_stage[4], stage_name[4], P->continued,
			o->seed, o->break_wal ? ", --break-wal" : "",
			o->break_recovery ? ", --break-recovery" : "", secs);
	else
		fprintf(stderr, PL_PROG ": FAILED in round %u of %u (seed %" PRIu64 ")\n",
			P->C.round > o->kills ? o->kills : P->C.round, o->kills, o->seed);
	if (o->keep)
		printf("crashtest --power-loss: the trace and the store are kept in %s, the last "
		       "state in %s\n", P->dir, P->state);
	else if (P->dir[0])
		remove_dir(P);
	pl_trace_free(&t);
	free(P->C.acked);
	free(P->acked_saved);
	bool ok = rc == 0 && tot.failed == 0;
	free(P);
	return tool_exit_status(ok && fflush(stdout) == 0 ? 0 : 1);
}
