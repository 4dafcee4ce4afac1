/* SPDX-License-Identifier: MIT */
/*
 * eng_rocksdb.c - ycsb-ref's RocksDB engine (struct ref_engine), on its C
 * API (rocksdb/c.h).
 *
 * Design note
 * -----------
 * Layer: ycsb-ref's engines (ref_engine.h), on librocksdb.  One DB,
 * create_if_missing, no compression (the kv store compresses nothing), a
 * block-based table whose block cache is an LRU cache of the cache bytes,
 * blocks of the page size (--page-size; 4 KiB, RocksDB's default and the
 * pool's page), and a
 * write_buffer_size (memtable) of the cache bytes too: the default 64 MiB
 * would hold all of the 32 MB of data in memory, which the pool
 * is not allowed either (so RocksDB may hold up to max_write_buffer_number
 * (2) memtables beside the block cache: up to 3x the cache bytes).  The
 * default write options: the WAL is written, not synced (the kv store
 * without --durable writes no log at all; turning RocksDB's off is
 * --engine-config wal=off's job: nothing else is read from it).  Keys
 * are the 8 big-endian bytes (ref_key_bytes).  A read is
 * rocksdb_get_pinned (no copy into a malloc'd buffer); handles (the read
 * and write options) are shared by the threads, which RocksDB allows:
 * they are read-only after open.  A session is only its db.
 */
#include "ref_engine.h"

#include <errno.h>
#include <rocksdb/c.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef REF_ROCKSDB_VERSION /* tools/compare/meson.build: pkg-config's */
#define REF_ROCKSDB_VERSION "unknown"
#endif

struct rdb {
	rocksdb_t *db;
	rocksdb_options_t *opts;
	rocksdb_block_based_table_options_t *table;
	rocksdb_cache_t *cache;
	rocksdb_readoptions_t *ropts;
	rocksdb_writeoptions_t *wopts;
	char settings[256];
};

static void rdb_version(char *buf, size_t len)
{
	snprintf(buf, len, "%s", REF_ROCKSDB_VERSION);
}

/* RocksDB's error string (malloc'd, or NULL): reported and freed. */
static int rdb_err(const char *what, char *err)
{
	if (!err)
		return 0;
	fprintf(stderr, "ycsb-ref: rocksdb: %s: %s\n", what, err);
	rocksdb_free(err);
	return -EIO;
}

static void rdb_free(struct rdb *r)
{
	if (r->db)
		rocksdb_close(r->db);
	if (r->ropts)
		rocksdb_readoptions_destroy(r->ropts);
	if (r->wopts)
		rocksdb_writeoptions_destroy(r->wopts);
	if (r->opts)
		rocksdb_options_destroy(r->opts);
	if (r->table)
		rocksdb_block_based_options_destroy(r->table);
	if (r->cache)
		rocksdb_cache_destroy(r->cache);
	free(r);
}

static int rdb_open(const struct ref_db_config *c, void **out)
{
	struct rdb *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	bool wal = !(c->extra && strcmp(c->extra, "wal=off") == 0);
	if (c->extra && wal) {
		fprintf(stderr, "ycsb-ref: rocksdb: --engine-config takes only wal=off\n");
		free(r);
		return -EINVAL;
	}
	r->opts = rocksdb_options_create();
	r->table = rocksdb_block_based_options_create();
	r->cache = rocksdb_cache_create_lru((size_t)c->cache_bytes);
	r->ropts = rocksdb_readoptions_create();
	r->wopts = rocksdb_writeoptions_create();
	rocksdb_block_based_options_set_block_cache(r->table, r->cache);
	rocksdb_block_based_options_set_block_size(r->table, c->page_size);
	rocksdb_options_set_block_based_table_factory(r->opts, r->table);
	rocksdb_options_set_create_if_missing(r->opts, 1);
	rocksdb_options_set_compression(r->opts, rocksdb_no_compression);
	rocksdb_options_set_write_buffer_size(r->opts, (size_t)c->cache_bytes);
	rocksdb_writeoptions_disable_WAL(r->wopts, !wal);
	snprintf(r->settings, sizeof(r->settings),
		 "block_cache=LRU %llu B, block_size=%u, write_buffer_size=%llu, no compression, "
		 "WAL %s (not synced)", (unsigned long long)c->cache_bytes, c->page_size,
		 (unsigned long long)c->cache_bytes, wal ? "on" : "off");
	char *err = NULL;
	r->db = rocksdb_open(r->opts, c->dir, &err);
	int rc = rdb_err("open", err);
	if (rc) {
		rdb_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

static int rdb_close(void *p)
{
	rdb_free(p);
	return 0;
}

static int rdb_session_open(void *p, void **out)
{
	*out = p;
	return 0;
}

static void rdb_session_close(void *p)
{
	(void)p;
}

static int rdb_get(void *p, uint64_t key, void *buf, uint32_t vs)
{
	struct rdb *r = p;
	unsigned char k[8];
	char *err = NULL;
	ref_key_bytes(key, k);
	rocksdb_pinnableslice_t *ps = rocksdb_get_pinned(r->db, r->ropts, (const char *)k, 8, &err);
	if (err)
		return rdb_err("get", err);
	if (!ps)
		return -ENOENT;
	size_t len;
	const char *v = rocksdb_pinnableslice_value(ps, &len);
	int rc = len == vs ? 0 : -EBADMSG;
	if (rc == 0)
		memcpy(buf, v, vs);
	rocksdb_pinnableslice_destroy(ps);
	return rc;
}

static int rdb_put(void *p, uint64_t key, const void *val, uint32_t vs)
{
	struct rdb *r = p;
	unsigned char k[8];
	char *err = NULL;
	ref_key_bytes(key, k);
	rocksdb_put(r->db, r->wopts, (const char *)k, 8, val, vs, &err);
	return rdb_err("put", err);
}

static const char *rdb_settings(void *p)
{
	return ((struct rdb *)p)->settings;
}

const struct ref_engine ref_rocksdb = {
	.name = "rocksdb",
	.version = rdb_version,
	.open = rdb_open,
	.close = rdb_close,
	.session_open = rdb_session_open,
	.session_close = rdb_session_close,
	.get = rdb_get,
	.put = rdb_put,
	.settings = rdb_settings,
};
