/* SPDX-License-Identifier: MIT */
/*
 * powerloss_check.c - one cut state of bpbench crashtest --power-loss:
 * open the store a power failure left (kv_open recovers it), check the
 * tree and every acknowledged key.
 *
 * Design note
 * -----------
 * Layer: bpbench (see powerloss_int.h), on the store (kv_open, kv_get,
 * kv_close) and crashtest_check.c's tree check.  The parent's, single-
 * threaded; the store's pool traces nothing.
 *
 * What must hold (the brief of issue 28): kv_open without create
 * succeeds whenever a commit was acknowledged before the cut, in any
 * epoch; before the first ack it may also say -ENOENT (the first create
 * did not become durable), never anything else (-EBADMSG: a store that
 * cannot be opened).  Then kv_check passes, every value in the tree is
 * well formed, and every key acknowledged in the current epoch (since the
 * last truncating open began) is found at its acknowledged version or a
 * later one.  Every lost key is counted, the first one printed.
 */
#include "powerloss_int.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

/* The acked keys: how many are lost (the first printed if print). */
static uint64_t check_acked(struct crash_run *C, struct kv_store *kv, uint32_t vs,
			    uint64_t *checked, bool print)
{
	uint8_t value[KV_VALUE_SIZE_MAX];
	uint64_t lost = 0;

	for (uint64_t key = 0; key < C->o.keys; key++) {
		uint64_t want = C->acked[key], ver = 0;
		if (want == 0)
			continue;
		int rc = kv_get(kv, key, value);
		bool ok = rc == 0 && crash_value_decode(value, vs, key, &ver) == 0;
		if (ok && ver >= want) {
			(*checked)++;
			continue;
		}
		if (lost++ > 0 || !print)
			continue;
		char found[96];
		if (rc)
			snprintf(found, sizeof(found), "%s", rc == -ENOENT ? "nothing" : strerror(-rc));
		else if (!ok)
			snprintf(found, sizeof(found), "a torn or foreign value");
		else
			snprintf(found, sizeof(found), "version %u.%u", CRASH_ROUND_OF(ver),
				 CRASH_SEQ_OF(ver));
		fprintf(stderr, PL_PROG ": key %" PRIu64 " acknowledged at version %u.%u, found %s\n",
			key, CRASH_ROUND_OF(want), CRASH_SEQ_OF(want), found);
	}
	return lost;
}

int pl_check_state(struct crash_run *C, const char *dir, bool any_ack, uint64_t *checked,
		   uint64_t *lost, bool print, enum pl_stage *stage)
{
	char path[8192];
	struct kv_config kc;
	struct kv_store *kv;

	snprintf(path, sizeof(path), "%s/store.db", dir);
	pl_store_config(C, &kc, path, false);
	*stage = PL_STAGE_OPEN;
	int rc = kv_open(&kv, &kc);
	if (rc == -ENOENT && !any_ack)
		return 0; /* the first create was lost: nothing was promised */
	if (rc) {
		if (print)
			fprintf(stderr, PL_PROG ": kv_open (recovery): %s%s\n", strerror(-rc),
				any_ack ? " (commits were acknowledged)" : "");
		return rc;
	}
	uint32_t vs = kv_value_size(kv);
	struct crash_round r = {0};
	if (vs < 16) {
		if (print)
			fprintf(stderr, PL_PROG ": the store's values are %u bytes\n", vs);
		rc = -EBADMSG;
	}
	if (rc == 0) {
		*stage = PL_STAGE_TREE;
		rc = crash_check_tree(C, &r, kv, vs, print);
	}
	if (rc == 0) {
		*stage = PL_STAGE_KEYS;
		uint64_t n = check_acked(C, kv, vs, checked, print);
		*lost += n;
		rc = n ? -EBADMSG : 0;
	}
	int crc = kv_close(kv);
	if (rc == 0 && crc)
		*stage = PL_STAGE_CLOSE;
	if (crc && print)
		fprintf(stderr, PL_PROG ": closing the recovered store: %s\n", strerror(-crc));
	return rc ? rc : crc;
}
