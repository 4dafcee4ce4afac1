/* SPDX-License-Identifier: MIT */
/*
 * crashtest_check.c - bpbench crashtest's check after a kill: reopen the
 * store (recovery runs in kv_open), then the tree, every acknowledged key,
 * every value.
 *
 * Design note
 * -----------
 * Layer: bpbench, on the store (kv_open, kv_log_stats, kv_check, kv_get,
 * kv_scan, kv_close).  Runs in the parent, single-threaded, after the child
 * is reaped: nothing else has the store open.
 *
 * What must hold after any kill, for a store that keeps its contract:
 *   - kv_check passes (the tree is well formed: no torn split survives);
 *   - every key ever acknowledged (in any round: acked[] is never reset)
 *     is found, its value well formed, at the acknowledged version or a
 *     later one (a later one is a commit that was durable but whose ack
 *     the kill cut off);
 *   - every value in the tree is well formed, of a key of the key space,
 *     of a round that has run: one scan, not a get per key of the space.
 * The first failure is printed as
 *   "round R: key K acknowledged at version V, found ..."
 * (versions as round.seq), or names the bad tree or value.
 */
#include "crashtest_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct check_scan {
	const struct crash_run *C;
	uint32_t vs;
	uint64_t seen;
	uint64_t bad_key, bad_ver; /* the first malformed value, if any */
	bool bad;
};

/* A well-formed value of key from a round that has run: 0 or -EBADMSG. */
static int value_ok(const struct crash_run *C, const void *value, uint32_t vs, uint64_t key,
		    uint64_t *ver)
{
	int rc = crash_value_decode(value, vs, key, ver);
	return rc == 0 && CRASH_ROUND_OF(*ver) <= C->round ? 0 : -EBADMSG;
}

static int scan_visit(uint64_t key, const void *value, void *arg)
{
	struct check_scan *s = arg;
	uint64_t ver;

	s->seen++;
	if (key < s->C->o.keys && value_ok(s->C, value, s->vs, key, &ver) == 0)
		return 0;
	s->bad = true;
	s->bad_key = key;
	memcpy(&s->bad_ver, (const uint8_t *)value + 8, 8);
	return 1; /* stop: the first one is reported */
}

/* Every acked key: 0, or -EBADMSG / the get's error after printing it. */
static int check_acked(struct crash_run *C, struct crash_round *r, struct kv_store *kv,
		       uint32_t vs)
{
	uint8_t value[KV_VALUE_SIZE_MAX];

	for (uint64_t key = 0; key < C->o.keys; key++) {
		uint64_t want = C->acked[key], ver = 0, field;
		if (want == 0)
			continue;
		int rc = kv_get(kv, key, value);
		char found[160];
		if (rc == -ENOENT) {
			snprintf(found, sizeof(found), "nothing");
		} else if (rc < 0) {
			snprintf(found, sizeof(found), "an error: %s", strerror(-rc));
		} else if (value_ok(C, value, vs, key, &ver) != 0) {
			memcpy(&field, value, 8);
			snprintf(found, sizeof(found), "a torn or foreign value (key field %" PRIu64
				 ", version field %u.%u)", field, CRASH_ROUND_OF(ver),
				 CRASH_SEQ_OF(ver));
			rc = -EBADMSG;
		} else if (ver < want) {
			snprintf(found, sizeof(found), "version %u.%u", CRASH_ROUND_OF(ver),
				 CRASH_SEQ_OF(ver));
			rc = -EBADMSG;
		} else {
			r->checked++;
			continue;
		}
		fprintf(stderr, CRASH_PROG ": round %u: key %" PRIu64 " acknowledged at version "
			"%u.%u, found %s\n", C->round, key, CRASH_ROUND_OF(want), CRASH_SEQ_OF(want),
			found);
		return rc;
	}
	return 0;
}

int crash_check_tree(struct crash_run *C, struct crash_round *r, struct kv_store *kv,
		     uint32_t vs, bool print)
{
	struct kv_check_info ci;
	int rc = kv_check(kv, &ci);
	if (rc) {
		if (print)
			fprintf(stderr, CRASH_PROG ": round %u: the recovered tree is bad: %s\n", C->round,
				ci.error[0] ? ci.error : strerror(-rc));
		return rc;
	}
	struct check_scan s = {.C = C, .vs = vs};
	long n = kv_scan(kv, 0, SIZE_MAX, scan_visit, &s);
	if (n < 0) {
		if (print)
			fprintf(stderr, CRASH_PROG ": round %u: scanning the recovered tree: %s\n",
				C->round, strerror((int)-n));
		return (int)n;
	}
	if (s.bad) {
		if (print)
			fprintf(stderr, CRASH_PROG ": round %u: key %" PRIu64 " holds a torn or foreign "
				"value (version field %u.%u)%s\n", C->round, s.bad_key,
				CRASH_ROUND_OF(s.bad_ver), CRASH_SEQ_OF(s.bad_ver),
				s.bad_key >= C->o.keys ? ", and is outside the key space" : "");
		return -EBADMSG;
	}
	if (s.seen != ci.nkeys) {
		if (print)
			fprintf(stderr, CRASH_PROG ": round %u: the scan met %" PRIu64 " keys, kv_check "
				"counted %" PRIu64 "\n", C->round, s.seen, ci.nkeys);
		return -EBADMSG;
	}
	r->tree_keys = ci.nkeys;
	return 0;
}

int crash_check(struct crash_run *C, struct crash_round *r)
{
	struct kv_config kc;
	struct kv_store *kv;

	crash_store_config(C, &kc, false);
	int rc = kv_open(&kv, &kc);
	if (rc) {
		fprintf(stderr, CRASH_PROG ": round %u: reopening the store (recovery): %s\n",
			C->round, strerror(-rc));
		return rc;
	}
	struct kv_log_stats ls;
	if (kv_log_stats(kv, &ls) == 0)
		r->recovered = ls.recovered_records;
	C->total_recovered += r->recovered;
	uint32_t vs = kv_value_size(kv);
	if (vs < 16) { /* not ours: round 1 created it with the default size */
		fprintf(stderr, CRASH_PROG ": round %u: the store's values (%u bytes) cannot "
			"hold a key and a version\n", C->round, vs);
		kv_close(kv);
		return -EINVAL;
	}
	/* the tree first: a get in a torn tree could report a symptom, not the cause */
	rc = crash_check_tree(C, r, kv, vs, true);
	if (rc == 0)
		rc = check_acked(C, r, kv, vs);
	int crc = kv_close(kv);
	if (crc) {
		fprintf(stderr, CRASH_PROG ": round %u: closing the recovered store: %s\n",
			C->round, strerror(-crc));
		if (rc == 0)
			rc = crc;
	}
	return rc;
}
