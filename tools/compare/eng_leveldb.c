/* SPDX-License-Identifier: MIT */
/*
 * eng_leveldb.c - ycsb-ref's LevelDB engine (struct ref_engine), on its C
 * API (leveldb/c.h).
 *
 * Design note
 * -----------
 * Layer: ycsb-ref's engines (ref_engine.h), on libleveldb.  One DB,
 * create_if_missing, no compression, an LRU block cache of the cache
 * bytes, blocks of the page size (--page-size; 4 KiB, LevelDB's default
 * and the pool's page) and a
 * write_buffer_size of the cache bytes (LevelDB's default is 4 MiB, the
 * default cache bytes; see eng_rocksdb.c for why it is capped).  LevelDB
 * maps its table files with mmap on 64-bit hosts (up to 1000 of them), and
 * reads through a mapping bypass the block cache: its reads are then
 * served by the OS page cache, whatever --cache-bytes says (issue 33's
 * "mmap, cache not capped" column).  The default write options: the log
 * is written, not synced.  Keys are the 8 big-endian bytes.  The read and
 * write options are shared by the threads (read-only after open); a
 * session is only its db.  leveldb_get returns a malloc'd copy, freed
 * here (its C API has no pinned read).
 */
#include "ref_engine.h"

#include <errno.h>
#include <leveldb/c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ldb {
	leveldb_t *db;
	leveldb_options_t *opts;
	leveldb_cache_t *cache;
	leveldb_readoptions_t *ropts;
	leveldb_writeoptions_t *wopts;
	char settings[200];
};

static void ldb_version(char *buf, size_t len)
{
	snprintf(buf, len, "%d.%d", leveldb_major_version(), leveldb_minor_version());
}

/* LevelDB's error string (malloc'd, or NULL): reported and freed. */
static int ldb_err(const char *what, char *err)
{
	if (!err)
		return 0;
	fprintf(stderr, "ycsb-ref: leveldb: %s: %s\n", what, err);
	leveldb_free(err);
	return -EIO;
}

static void ldb_free(struct ldb *l)
{
	if (l->db)
		leveldb_close(l->db);
	if (l->ropts)
		leveldb_readoptions_destroy(l->ropts);
	if (l->wopts)
		leveldb_writeoptions_destroy(l->wopts);
	if (l->opts)
		leveldb_options_destroy(l->opts);
	if (l->cache)
		leveldb_cache_destroy(l->cache);
	free(l);
}

static int ldb_open(const struct ref_db_config *c, void **out)
{
	if (c->extra) {
		fprintf(stderr, "ycsb-ref: leveldb: --engine-config: none taken\n");
		return -EINVAL;
	}
	struct ldb *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->opts = leveldb_options_create();
	l->cache = leveldb_cache_create_lru((size_t)c->cache_bytes);
	l->ropts = leveldb_readoptions_create();
	l->wopts = leveldb_writeoptions_create();
	leveldb_options_set_cache(l->opts, l->cache);
	leveldb_options_set_block_size(l->opts, c->page_size);
	leveldb_options_set_create_if_missing(l->opts, 1);
	leveldb_options_set_compression(l->opts, leveldb_no_compression);
	leveldb_options_set_write_buffer_size(l->opts, (size_t)c->cache_bytes);
	snprintf(l->settings, sizeof(l->settings),
		 "block cache LRU %llu B, block_size=%u, write_buffer_size=%llu, no compression, "
		 "log not synced, table files mmapped", (unsigned long long)c->cache_bytes, c->page_size,
		 (unsigned long long)c->cache_bytes);
	char *err = NULL;
	l->db = leveldb_open(l->opts, c->dir, &err);
	int rc = ldb_err("open", err);
	if (rc) {
		ldb_free(l);
		return rc;
	}
	*out = l;
	return 0;
}

static int ldb_close(void *p)
{
	ldb_free(p);
	return 0;
}

static int ldb_session_open(void *p, void **out)
{
	*out = p;
	return 0;
}

static void ldb_session_close(void *p)
{
	(void)p;
}

static int ldb_get(void *p, uint64_t key, void *buf, uint32_t vs)
{
	struct ldb *l = p;
	unsigned char k[8];
	char *err = NULL;
	size_t len;
	ref_key_bytes(key, k);
	char *v = leveldb_get(l->db, l->ropts, (const char *)k, 8, &len, &err);
	if (err)
		return ldb_err("get", err);
	if (!v)
		return -ENOENT;
	int rc = len == vs ? 0 : -EBADMSG;
	if (rc == 0)
		memcpy(buf, v, vs);
	leveldb_free(v);
	return rc;
}

static int ldb_put(void *p, uint64_t key, const void *val, uint32_t vs)
{
	struct ldb *l = p;
	unsigned char k[8];
	char *err = NULL;
	ref_key_bytes(key, k);
	leveldb_put(l->db, l->wopts, (const char *)k, 8, val, vs, &err);
	return ldb_err("put", err);
}

static const char *ldb_settings(void *p)
{
	return ((struct ldb *)p)->settings;
}

const struct ref_engine ref_leveldb = {
	.name = "leveldb",
	.version = ldb_version,
	.open = ldb_open,
	.close = ldb_close,
	.session_open = ldb_session_open,
	.session_close = ldb_session_close,
	.get = ldb_get,
	.put = ldb_put,
	.settings = ldb_settings,
};
