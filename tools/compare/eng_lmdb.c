/* SPDX-License-Identifier: MIT */
/*
 * eng_lmdb.c - ycsb-ref's LMDB engine (struct ref_engine).
 *
 * Design note
 * -----------
 * Layer: ycsb-ref's engines (ref_engine.h), on liblmdb.  One environment
 * in the directory, opened MDB_NOSYNC (a commit does not fsync: the kv
 * store without --durable does not either) and MDB_NOTLS (a read
 * transaction's reader slot belongs to the transaction, not the thread, so
 * the main thread can make each worker's before the phases), with a map
 * of at least 1 GiB and 16x the records' bytes, and a reader slot per
 * thread.  LMDB has no cache of its own: the file is mapped and the OS
 * page cache is its cache, so --cache-bytes does not apply (the settings
 * line says so), and its page is the OS's: --page-size does not apply
 * either.  The main database, keys the 8 big-endian bytes.  A
 * session is one read transaction, reset after each read and renewed
 * before the next (no allocation per read); a write is its own write
 * transaction (begin, put, commit), LMDB's single writer serialising
 * them.
 */
#include "ref_engine.h"

#include <errno.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lmdb {
	MDB_env *env;
	MDB_dbi dbi;
	char settings[200];
};

struct lmdb_session {
	struct lmdb *l;
	MDB_txn *rtxn; /* reset between reads */
};

static void lmdb_version(char *buf, size_t len)
{
	int maj, min, patch;
	mdb_version(&maj, &min, &patch);
	snprintf(buf, len, "%d.%d.%d", maj, min, patch);
}

/* LMDB's return (0, an errno > 0, or its own < 0) as ours. */
static int lmdb_err(const char *what, int ret)
{
	if (ret == 0)
		return 0;
	if (ret == MDB_NOTFOUND)
		return -ENOENT;
	fprintf(stderr, "ycsb-ref: lmdb: %s: %s\n", what, mdb_strerror(ret));
	return ret > 0 ? -ret : -EIO;
}

static int lmdb_open(const struct ref_db_config *c, void **out)
{
	if (c->extra) {
		fprintf(stderr, "ycsb-ref: lmdb: --engine-config: none taken\n");
		return -EINVAL;
	}
	struct lmdb *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	uint64_t map = 16 * c->records * (c->value_size + 8);
	if (map < (UINT64_C(1) << 30))
		map = UINT64_C(1) << 30;
	snprintf(l->settings, sizeof(l->settings), "mapsize=%llu, MDB_NOSYNC|MDB_NOTLS, no cache "
		 "of its own (the file is mapped: --cache-bytes does not apply), the OS's pages",
		 (unsigned long long)map);
	MDB_txn *txn = NULL;
	int rc = lmdb_err("env_create", mdb_env_create(&l->env));
	if (rc == 0)
		rc = lmdb_err("set_mapsize", mdb_env_set_mapsize(l->env, (size_t)map));
	if (rc == 0)
		rc = lmdb_err("set_maxreaders", mdb_env_set_maxreaders(l->env, c->threads + 8));
	if (rc == 0)
		rc = lmdb_err("env_open", mdb_env_open(l->env, c->dir, MDB_NOSYNC | MDB_NOTLS, 0644));
	if (rc == 0)
		rc = lmdb_err("txn_begin", mdb_txn_begin(l->env, NULL, 0, &txn));
	if (rc == 0) {
		rc = lmdb_err("dbi_open", mdb_dbi_open(txn, NULL, 0, &l->dbi));
		rc = rc ? (mdb_txn_abort(txn), rc) : lmdb_err("commit", mdb_txn_commit(txn));
	}
	if (rc) {
		if (l->env)
			mdb_env_close(l->env);
		free(l);
		return rc;
	}
	*out = l;
	return 0;
}

static int lmdb_close(void *p)
{
	struct lmdb *l = p;
	mdb_env_close(l->env);
	free(l);
	return 0;
}

static int lmdb_session_open(void *p, void **out)
{
	struct lmdb_session *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->l = p;
	int rc = lmdb_err("txn_begin (read)", mdb_txn_begin(s->l->env, NULL, MDB_RDONLY, &s->rtxn));
	if (rc) {
		free(s);
		return rc;
	}
	mdb_txn_reset(s->rtxn); /* renewed by each read */
	*out = s;
	return 0;
}

static void lmdb_session_close(void *p)
{
	struct lmdb_session *s = p;
	mdb_txn_abort(s->rtxn);
	free(s);
}

static int lmdb_get(void *p, uint64_t key, void *buf, uint32_t vs)
{
	struct lmdb_session *s = p;
	unsigned char k[8];
	ref_key_bytes(key, k);
	MDB_val mk = {8, k}, mv;
	int rc = lmdb_err("txn_renew", mdb_txn_renew(s->rtxn));
	if (rc)
		return rc;
	rc = lmdb_err("get", mdb_get(s->rtxn, s->l->dbi, &mk, &mv));
	if (rc == 0 && mv.mv_size != vs)
		rc = -EBADMSG;
	if (rc == 0)
		memcpy(buf, mv.mv_data, vs);
	mdb_txn_reset(s->rtxn);
	return rc;
}

static int lmdb_put(void *p, uint64_t key, const void *val, uint32_t vs)
{
	struct lmdb_session *s = p;
	unsigned char k[8];
	ref_key_bytes(key, k);
	MDB_val mk = {8, k}, mv = {vs, (void *)val};
	MDB_txn *txn;
	int rc = lmdb_err("txn_begin", mdb_txn_begin(s->l->env, NULL, 0, &txn));
	if (rc)
		return rc;
	rc = lmdb_err("put", mdb_put(txn, s->l->dbi, &mk, &mv, 0));
	if (rc) {
		mdb_txn_abort(txn);
		return rc;
	}
	return lmdb_err("commit", mdb_txn_commit(txn));
}

static const char *lmdb_settings(void *p)
{
	return ((struct lmdb *)p)->settings;
}

const struct ref_engine ref_lmdb = {
	.name = "lmdb",
	.version = lmdb_version,
	.open = lmdb_open,
	.close = lmdb_close,
	.session_open = lmdb_session_open,
	.session_close = lmdb_session_close,
	.get = lmdb_get,
	.put = lmdb_put,
	.settings = lmdb_settings,
};
