/* SPDX-License-Identifier: MIT */
/*
 * ref_engine.h - what ycsb-ref needs of an engine: open a store in a
 * directory with a cache size, a handle per thread, get and put of an
 * 8-byte key.
 *
 * Design note
 * -----------
 * Layer: ycsb-ref's lowest; each eng_*.c implements one struct ref_engine
 * on its library's C API and is compiled only where Meson found that
 * library (REF_HAVE_<ENGINE>, tools/compare/meson.build).  Every function
 * returns 0 or a negative errno (-ENOENT: no such key; -EBADMSG: a value
 * of the wrong size; -EIO: the engine's own error, whose text the engine
 * file prints on stderr with the engine's name: this is a tool).  Handles
 * are opaque (void *): a db is shared by all threads, a session belongs to
 * one thread, as each engine's threading rules ask (a WiredTiger session
 * and cursor are single-threaded; an LMDB read transaction is reset and
 * renewed by its one thread).  Keys are the kv store's uint64_t; an engine
 * that stores bytes stores them big-endian, so its order is the kv
 * store's numeric order.
 */
#ifndef TOOLS_COMPARE_REF_ENGINE_H
#define TOOLS_COMPARE_REF_ENGINE_H

#include <stddef.h>
#include <stdint.h>

struct ref_db_config {
	const char *dir;        /* exists, empty: the engine's files go in it */
	uint64_t cache_bytes;   /* the engine's page/block cache */
	uint32_t page_size;     /* its page or block size (bpbench's --page-size) */
	uint64_t records;       /* to size what must be sized up front (LMDB's map) */
	uint32_t value_size;
	unsigned threads;       /* sessions that will be open at once */
	const char *extra;      /* --engine-config, or NULL */
};

struct ref_engine {
	const char *name;
	/* The library's version ("3.2.1") in buf, as it reports it at run
	 * time, or as its header or pkg-config said at build time. */
	void (*version)(char *buf, size_t len);
	int (*open)(const struct ref_db_config *c, void **db);
	int (*close)(void *db);
	int (*session_open)(void *db, void **s);
	void (*session_close)(void *s);
	int (*get)(void *s, uint64_t key, void *buf, uint32_t vs);
	int (*put)(void *s, uint64_t key, const void *val, uint32_t vs);
	/* The engine's settings as this db was opened with them, one line
	 * for the report (WiredTiger: its wiredtiger_open string). */
	const char *(*settings)(void *db);
};

extern const struct ref_engine ref_wiredtiger, ref_rocksdb, ref_leveldb, ref_lmdb;

/* Big-endian bytes of key (byte order = the key's numeric order). */
static inline void ref_key_bytes(uint64_t key, unsigned char out[8])
{
	for (int i = 7; i >= 0; i--, key >>= 8)
		out[i] = (unsigned char)key;
}

#endif
