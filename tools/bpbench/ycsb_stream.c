/*
 * ycsb_stream.c - the YCSB operation stream (see ycsb_stream.h): the mix
 * table, the operation choice, the value codec.
 *
 * Design note: layer: ycsb_common, on gen.c and libc; constant tables and
 * pure functions, nothing shared but read-only data.
 */
#include "ycsb_stream.h"

#include <errno.h>
#include <string.h>

const char *const ycsb_op_names[OP_COUNT] = {"read", "update", "insert", "scan", "rmw"};
const char *const ycsb_dist_names[3] = {"zipfian", "uniform", "latest"};

static const struct ycsb_mix mixes[] = {
	{'A', {0.50, 0.50, 0, 0, 0}, DIST_ZIPFIAN},
	{'B', {0.95, 0.05, 0, 0, 0}, DIST_ZIPFIAN},
	{'C', {1.00, 0, 0, 0, 0}, DIST_ZIPFIAN},
	{'D', {0.95, 0, 0.05, 0, 0}, DIST_LATEST},
	{'E', {0, 0, 0.05, 0.95, 0}, DIST_ZIPFIAN},
	{'F', {0.50, 0, 0, 0, 0.50}, DIST_ZIPFIAN},
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
