/* SPDX-License-Identifier: MIT */
/*
 * ycsb_verify.c - bpbench ycsb --verify: after the run, every record reads
 * back with the last version written and the tree is well formed.
 *
 * Design note
 * -----------
 * Layer: bpbench, on the store (kv_scan, kv_check).  Runs after the
 * workers are joined, so versions[] and insert_next are read relaxed.  One
 * full scan in key order: every key maps back to a record (recno_of) whose
 * recorded version its value must carry, and each record is met once; then
 * kv_check walks the tree, and both must count the records written.  The
 * first few problems are named on stderr; the verdict is one line of the
 * human report and, with --json, a "verify" JSON line.
 */
#include "ycsb_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct verify_scan {
	struct ycsb_run *R;
	uint64_t end, seen, bad;
	uint8_t *found; /* bitmap of records met */
};

static int verify_visit(uint64_t key, const void *value, void *arg)
{
	struct verify_scan *v = arg;
	uint64_t r = recno_of(key), ver;
	const char *why = NULL;
	if (r >= v->end)
		why = "a key nobody wrote";
	else if (v->found[r / 8] & (1u << (r % 8)))
		why = "a key seen twice";
	else if (ycsb_value_decode(value, v->R->o.value_size, key, &ver) != 0)
		why = "a corrupt value";
	else if (ver != atomic_load_explicit(&v->R->versions[r], memory_order_relaxed))
		why = "not the last version written";
	if (why && v->bad++ < 5)
		fprintf(stderr, "verify: key %#" PRIx64 " (record %" PRIu64 "): %s\n", key, r, why);
	if (r < v->end)
		v->found[r / 8] |= (uint8_t)(1u << (r % 8));
	v->seen++;
	return 0;
}

static void report_verify(struct ycsb_run *R, bool ok, uint64_t written,
			  const struct verify_scan *v, const struct kv_check_info *ci)
{
	emitter_table_printf(&R->out, "verify: %s: %" PRIu64 " records read back with their last "
			     "version; tree: %" PRIu64 " keys, %" PRIu64 " leaves, %" PRIu64
			     " inner nodes, height %u\n", ok ? "OK" : "FAILED", v->seen - v->bad,
			     ci->nkeys, ci->leaves, ci->internal, ci->height);
	if (!R->o.json)
		return;
	struct emitter *j = &R->json;
	ycsb_json_begin(&R->json, "verify");
	emitter_kv_bool(j, "ok", ok);
	emitter_kv_u64(j, "records", written);
	emitter_kv_u64(j, "bad", v->bad);
	emitter_kv_u64(j, "tree_keys", ci->nkeys);
	emitter_kv_u64(j, "leaves", ci->leaves);
	emitter_kv_u64(j, "inner", ci->internal);
	emitter_kv_u64(j, "height", ci->height);
	emitter_dict_end(j);
}

int ycsb_verify(struct ycsb_run *R)
{
	struct kv_check_info ci;
	/* the workers are joined: every atomic below can be relaxed */
	struct verify_scan v = {.R = R,
		.end = atomic_load_explicit(&R->crew.insert_next, memory_order_relaxed)};
	uint64_t written = 0;
	if (v.end > R->capacity)
		v.end = R->capacity;
	v.found = calloc(v.end / 8 + 1, 1);
	if (!v.found)
		return -ENOMEM;
	for (uint64_t r = 0; r < v.end; r++)
		written += atomic_load_explicit(&R->versions[r], memory_order_relaxed) != 0;
	int rc = 0;
	for (unsigned f = 0; f < R->o.files && rc >= 0; f++) /* every store */
		rc = kv_scan(R->kv[f], 0, SIZE_MAX, verify_visit, &v);
	if (rc < 0)
		fprintf(stderr, "verify: scan failed: %s\n", strerror(-rc));
	for (uint64_t r = 0; r < v.end && rc >= 0; r++)
		if (!(v.found[r / 8] & (1u << (r % 8))) && v.bad++ < 5)
			fprintf(stderr, "verify: record %" PRIu64 " (key %#" PRIx64 ") is missing%s\n",
				r, key_of(r), atomic_load_explicit(&R->versions[r], memory_order_relaxed) ?
				"" : " (never written)");
	free(v.found);
	/* every store's tree checked; ci adds up their keys and nodes */
	struct kv_check_info one;
	int crc = 0;
	ci = (struct kv_check_info){0};
	for (unsigned f = 0; f < R->o.files && crc == 0; f++) {
		crc = kv_check(R->kv[f], &one);
		ci.nkeys += one.nkeys;
		ci.leaves += one.leaves;
		ci.internal += one.internal;
		if (one.height > ci.height)
			ci.height = one.height;
		memcpy(ci.error, one.error, sizeof(ci.error));
	}
	if (crc)
		fprintf(stderr, "verify: tree check failed: %s\n", ci.error[0] ? ci.error : strerror(-crc));
	else if (ci.nkeys != written || v.seen != written) {
		fprintf(stderr, "verify: %" PRIu64 " records written, the tree holds %" PRIu64
			", a scan saw %" PRIu64 "\n", written, ci.nkeys, v.seen);
		crc = -EBADMSG;
	}
	bool ok = rc >= 0 && crc == 0 && v.bad == 0;
	report_verify(R, ok, written, &v, &ci);
	return ok ? 0 : -EBADMSG;
}
