/* SPDX-License-Identifier: MIT */
/*
 * ycsb_stream.c - the YCSB operation stream (see ycsb_stream.h): the
 * operation table, the mix table, the operation choice, the value codec.
 *
 * Design note: layer: ycsb_common, on gen.c and libc; constant tables and
 * pure functions, nothing shared but read-only data.
 */
#include "ycsb_stream.h"

#include <errno.h>
#include <string.h>

const struct ycsb_op_info ycsb_ops[OP_COUNT] = {
	[OP_READ] = {.name = "read"},
	[OP_UPDATE] = {.name = "update", .writes = true},
	[OP_INSERT] = {.name = "insert", .writes = true, .adds = true},
	[OP_SCAN] = {.name = "scan", .scans = true},
	[OP_RMW] = {.name = "rmw", .writes = true},
};
const char *const ycsb_dist_names[3] = {"zipfian", "uniform", "latest"};

/* The YCSB core workloads; an operation a row does not name has no share. */
static const struct ycsb_mix mixes[] = {
	{.name = 'A', .p = {[OP_READ] = 0.50, [OP_UPDATE] = 0.50}, .dist = DIST_ZIPFIAN},
	{.name = 'B', .p = {[OP_READ] = 0.95, [OP_UPDATE] = 0.05}, .dist = DIST_ZIPFIAN},
	{.name = 'C', .p = {[OP_READ] = 1.00}, .dist = DIST_ZIPFIAN},
	{.name = 'D', .p = {[OP_READ] = 0.95, [OP_INSERT] = 0.05}, .dist = DIST_LATEST},
	{.name = 'E', .p = {[OP_INSERT] = 0.05, [OP_SCAN] = 0.95}, .dist = DIST_ZIPFIAN},
	{.name = 'F', .p = {[OP_READ] = 0.50, [OP_RMW] = 0.50}, .dist = DIST_ZIPFIAN},
};

const struct ycsb_mix *ycsb_mix_named(const char *arg)
{
	for (size_t i = 0; i < sizeof(mixes) / sizeof(mixes[0]); i++)
		if (arg[0] && !arg[1] && (arg[0] & ~0x20) == mixes[i].name)
			return &mixes[i];
	return NULL;
}

const struct ycsb_mix *ycsb_mix_default(void)
{
	return &mixes[0];
}

int ycsb_dist_named(const char *arg, int n, enum key_dist *d)
{
	for (int i = 0; i < n; i++)
		if (strcmp(arg, ycsb_dist_names[i]) == 0) {
			*d = (enum key_dist)i;
			return 0;
		}
	return -EINVAL;
}

struct ycsb_op_info ycsb_mix_does(const struct ycsb_mix *m)
{
	struct ycsb_op_info does = {0};
	for (int i = 0; i < OP_COUNT; i++)
		if (m->p[i] > 0) {
			does.writes |= ycsb_ops[i].writes;
			does.adds |= ycsb_ops[i].adds;
			does.scans |= ycsb_ops[i].scans;
		}
	return does;
}

enum ycsb_op ycsb_pick_op(const struct ycsb_mix *m, struct rng *r)
{
	double u = rng_double(r), acc = 0;
	for (int i = 0; i < OP_COUNT; i++) {
		acc += m->p[i];
		if (u < acc)
			return (enum ycsb_op)i;
	}
	return OP_READ;
}

void ycsb_value_encode(uint8_t *v, uint32_t vs, uint64_t key, uint64_t ver)
{
	uint64_t x = key ^ (ver * UINT64_C(0x9e3779b97f4a7c15));
	memcpy(v, &key, 8);
	memcpy(v + 8, &ver, 8);
	for (uint32_t i = 16; i < vs; i++)
		v[i] = (uint8_t)((x >> ((i & 7) * 8)) ^ i);
}

int ycsb_value_decode(const uint8_t *v, uint32_t vs, uint64_t key, uint64_t *ver)
{
	uint64_t k;
	memcpy(&k, v, 8);
	memcpy(ver, v + 8, 8);
	uint64_t x = key ^ (*ver * UINT64_C(0x9e3779b97f4a7c15));
	for (uint32_t i = 16; i < vs; i++)
		if (v[i] != (uint8_t)((x >> ((i & 7) * 8)) ^ i))
			return -EBADMSG;
	return k == key && *ver > 0 ? 0 : -EBADMSG;
}
