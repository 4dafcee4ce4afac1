/* SPDX-License-Identifier: MIT */
/*
 * eng_wiredtiger.c - ycsb-ref's WiredTiger engine (struct ref_engine).
 *
 * Design note
 * -----------
 * Layer: ycsb-ref's engines (ref_engine.h), on libwiredtiger.  One
 * connection, opened "create,cache_size=<cache bytes>,log=(enabled=false),
 * statistics=(none),session_max=<threads + 8>" plus --engine-config: no
 * log and no checkpoints while running (the kv store without --durable
 * keeps neither), no statistics (the usual benchmark setting; they cost a
 * counter update per operation).  One table, "table:ycsb", key_format=Q
 * (the kv store's uint64_t key, in its numeric order) and value_format=u
 * (the value's bytes), leaf_page_max and internal_page_max the page
 * size (--page-size, 4 KiB: the pool's page; WiredTiger's default 32 KiB
 * leaves make each miss read and instantiate 8x the bytes, and hold an
 * eighth as many hot pages in the same cache: YCSB-C at 2 threads ran at
 * 122 k ops/s with them against 357 k with 4 KiB on the 2-core machine).
 * A session and one cursor per worker thread (both single-threaded by
 * WiredTiger's rules), each operation an auto-committed transaction: a read is
 * cursor->search, a write (load insert and update alike) cursor->update
 * with the cursor's default overwrite=true (it stores the value whether
 * or not the key exists, as the kv store's upsert does), each followed by
 * cursor->reset, so the cursor holds no page between operations (a held
 * page could not be evicted, and the cache is small on purpose).  Two
 * updates of one hot key at once conflict: the loser gets WT_ROLLBACK
 * and retries, as WiredTiger's own wtperf does; close reports how many
 * on stderr.  close checkpoints the table (not timed).
 */
#include "ref_engine.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wiredtiger.h>

#define WT_TABLE "table:ycsb"
#define WT_TABLE_KV "key_format=Q,value_format=u"

struct wt_db {
	WT_CONNECTION *conn;
	_Atomic uint64_t rollbacks; /* retried conflicts; relaxed, a count only */
	char config[512];   /* wiredtiger_open's */
	char table[128];    /* the table's */
	char settings[512 + 128 + 16]; /* config; table, for the report */
};

struct wt_session {
	struct wt_db *db;
	WT_SESSION *s;
	WT_CURSOR *c;
};

static void wt_version(char *buf, size_t len)
{
	int maj, min, patch;
	wiredtiger_version(&maj, &min, &patch);
	snprintf(buf, len, "%d.%d.%d", maj, min, patch);
}

/* WiredTiger's return (0, an errno > 0, or its own < 0) as ours. */
static int wt_err(const char *what, int ret)
{
	if (ret == 0)
		return 0;
	if (ret == WT_NOTFOUND)
		return -ENOENT;
	fprintf(stderr, "ycsb-ref: wiredtiger: %s: %s\n", what, wiredtiger_strerror(ret));
	return ret > 0 ? -ret : -EIO;
}

static int wt_open(const struct ref_db_config *c, void **out)
{
	struct wt_db *db = calloc(1, sizeof(*db));
	if (!db)
		return -ENOMEM;
	int n = snprintf(db->config, sizeof(db->config),
			 "create,cache_size=%llu,log=(enabled=false),statistics=(none),"
			 "session_max=%u%s%s", (unsigned long long)c->cache_bytes, c->threads + 8,
			 c->extra ? "," : "", c->extra ? c->extra : "");
	if (n < 0 || (size_t)n >= sizeof(db->config)) {
		free(db);
		fprintf(stderr, "ycsb-ref: wiredtiger: --engine-config is too long\n");
		return -ENAMETOOLONG;
	}
	snprintf(db->table, sizeof(db->table), WT_TABLE_KV ",leaf_page_max=%u,internal_page_max=%u",
		 c->page_size, c->page_size);
	snprintf(db->settings, sizeof(db->settings), "%s; " WT_TABLE " %s", db->config, db->table);
	int rc = wt_err("wiredtiger_open", wiredtiger_open(c->dir, NULL, db->config, &db->conn));
	if (rc) {
		free(db);
		return rc;
	}
	WT_SESSION *s;
	rc = wt_err("open_session", db->conn->open_session(db->conn, NULL, NULL, &s));
	if (rc == 0) {
		rc = wt_err("create", s->create(s, WT_TABLE, db->table));
		s->close(s, NULL);
	}
	if (rc) {
		db->conn->close(db->conn, NULL);
		free(db);
		return rc;
	}
	*out = db;
	return 0;
}

static int wt_close(void *p)
{
	struct wt_db *db = p;
	uint64_t rb = atomic_load_explicit(&db->rollbacks, memory_order_relaxed);
	if (rb)
		fprintf(stderr, "ycsb-ref: wiredtiger: %llu write conflicts retried\n",
			(unsigned long long)rb);
	int rc = wt_err("close", db->conn->close(db->conn, NULL));
	free(db);
	return rc;
}

static int wt_session_open(void *p, void **out)
{
	struct wt_db *db = p;
	struct wt_session *ws = calloc(1, sizeof(*ws));
	if (!ws)
		return -ENOMEM;
	ws->db = db;
	int rc = wt_err("open_session", db->conn->open_session(db->conn, NULL, NULL, &ws->s));
	if (rc == 0) {
		rc = wt_err("open_cursor", ws->s->open_cursor(ws->s, WT_TABLE, NULL, NULL, &ws->c));
		if (rc)
			ws->s->close(ws->s, NULL);
	}
	if (rc) {
		free(ws);
		return rc;
	}
	*out = ws;
	return 0;
}

static void wt_session_close(void *p)
{
	struct wt_session *ws = p;
	ws->s->close(ws->s, NULL); /* closes its cursor too */
	free(ws);
}

static int wt_get(void *p, uint64_t key, void *buf, uint32_t vs)
{
	struct wt_session *ws = p;
	WT_CURSOR *c = ws->c;
	int ret;
	WT_ITEM v;
	do {
		c->set_key(c, key);
		ret = c->search(c);
		if (ret == 0 && (ret = c->get_value(c, &v)) == 0) {
			if (v.size == vs)
				memcpy(buf, v.data, vs);
			else
				ret = EBADMSG;
		}
		c->reset(c);
	} while (ret == WT_ROLLBACK);
	return ret == EBADMSG ? -EBADMSG : wt_err("search", ret);
}

/* A load insert (a new key) and an update alike (see the design note). */
static int wt_put(void *p, uint64_t key, const void *val, uint32_t vs)
{
	struct wt_session *ws = p;
	WT_CURSOR *c = ws->c;
	WT_ITEM v = {.data = val, .size = vs};
	int ret;
	for (;;) {
		c->set_key(c, key);
		c->set_value(c, &v);
		ret = c->update(c);
		c->reset(c);
		if (ret != WT_ROLLBACK)
			break;
		atomic_fetch_add_explicit(&ws->db->rollbacks, 1, memory_order_relaxed);
	}
	return wt_err("update", ret);
}

static const char *wt_settings(void *p)
{
	return ((struct wt_db *)p)->settings;
}

const struct ref_engine ref_wiredtiger = {
	.name = "wiredtiger",
	.version = wt_version,
	.open = wt_open,
	.close = wt_close,
	.session_open = wt_session_open,
	.session_close = wt_session_close,
	.get = wt_get,
	.put = wt_put,
	.settings = wt_settings,
};
