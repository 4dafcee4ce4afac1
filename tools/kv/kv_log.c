/* SPDX-License-Identifier: MIT */
/*
 * kv_log.c - the kv store's redo log: records, group commit, the control
 * file, replay (see kv_log.h for positions and the protocol).
 *
 * Design note
 * -----------
 * Layer: the bottom of the store (on bufpool's public API and util's
 * CRC-32C).
 *
 * On disk, a record is a header, then its parts, all 8-byte aligned:
 *   header: crc u32 | len u32 (whole record) | lsn u64 | nparts u32 | 0 u32
 *   part:   type u32 | len u32 (payload) | pageno u64 | payload (padded)
 *   IMAGE payload:  the page's data (page_bytes)
 *   UPSERT payload: key u64 | value (value_size)
 * crc is the CRC-32C of everything after it.  A record is valid only
 * whole, with its crc right and its lsn equal to its position, which
 * also rejects what an old file left past the end (kv_log_reset).
 * Integers are in host order: the log is read by the machine that wrote
 * it, as the store file is.
 *
 * Recovery trusts no byte it merely read.  After a crash the log's last
 * writes may sit only in the OS page cache (the dead process never synced
 * them), or worse, in pages a failed fdatasync left clean but unwritten
 * (Linux forgets the dirtiness of pages it failed to write, and a later
 * fdatasync returns 0 without writing them).  Records read from there are
 * not durable, yet replay would stamp their LSNs on pages the pool may
 * then write, and the next recovery, if the power failed meanwhile, would
 * find those pages above a log that lost its tail.  So replay first reads
 * every whole record and writes its bytes back where they are (dirtying
 * them again), cuts the torn tail, and syncs: only then is anything
 * durable and applied.  The rewrite costs one pass over the log since the
 * last checkpoint, once per recovery.
 *
 * Every change to the log's files is reported to the store's I/O trace
 * hook (bufpool.h, "I/O tracing"), as the pool reports its own, and the
 * hook may fail a sync there (an injected EIO).
 *
 * Locks: mu guards the buffers, positions, err and the counters; ctl_mu
 * serialises control-file writers (a checkpoint and a reset).  The
 * flusher writes the spare buffer with mu released; flushing tells the
 * others it owns it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fallocate's FALLOC_FL_PUNCH_HOLE */
#endif
#include "kv_log.h"

#include "kv.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/crc32c.h"

#define KV_LOG_CTL_MAGIC UINT64_C(0x314c54434c57564b) /* "KVWLCTL1" */
#define KV_LOG_FIRST_POS 1u /* LSN 0 is "none" to the pool */

struct kv_log_buf {
	uint8_t *p;
	size_t used, cap;
};

struct kv_log {
	int fd;
	bp_io_trace_fn trace;       /* the I/O trace hook, or NULL (set at open) */
	void *trace_arg;
	char *wal_path, *ctl_path, *tmp_path, *dir_path;
	uint32_t page_bytes, value_size;
	size_t max_record;
	struct bp_pool *pool;
	pthread_mutex_t ctl_mu;

	pthread_mutex_t mu;
	pthread_cond_t cv;          /* a flush finished */
	struct kv_log_buf act;      /* records from act_pos on, not yet being written */
	struct kv_log_buf spare;    /* the flusher's, while flushing */
	uint64_t act_pos;           /* position of act.p[0] */
	uint64_t durable;           /* every record below it is on disk */
	uint64_t base;              /* position of file offset 0 */
	uint64_t redo;              /* where recovery starts (the control file's) */
	uint64_t fpw_from;          /* a page last logged below it is imaged */
	uint32_t ctl_flags;         /* the control file's KV_LOG_CTL_* (ctl_mu) */
	bool flushing;
	int err;                    /* sticky: the first failed write or fsync */
	uint64_t records, bytes, commits, fsyncs, checkpoints;
};

/* The control file.  page_bytes and value_size size the parts of the
 * records (a log cannot be read with other sizes). */
struct kv_log_ctl {
	uint64_t magic;
	uint64_t base;
	uint64_t redo;
	uint32_t page_bytes;
	uint32_t value_size;
	uint32_t flags;    /* KV_LOG_CTL_TRUNCATE (0 in files older than it) */
	uint32_t crc; /* of the bytes before it */
};
/* The store is being truncated: whoever opens it empties the store file
 * before replaying (kv_log_truncating); cleared by the next reset. */
#define KV_LOG_CTL_TRUNCATE 0x1u

struct rec_hdr {
	uint32_t crc;
	uint32_t len;
	uint64_t lsn;
	uint32_t nparts;
	uint32_t reserved;
};

struct part_hdr {
	uint32_t type;
	uint32_t len;
	uint64_t pageno;
};

static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

static size_t payload_len(const struct kv_log *log, enum kv_log_part_type type)
{
	return type == KV_LOG_IMAGE ? log->page_bytes : sizeof(uint64_t) + log->value_size;
}

/* ---- Files ------------------------------------------------------------------ */

static int pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	const uint8_t *p = buf;
	while (len > 0) {
		ssize_t n = pwrite(fd, p, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

/* 0, or -ENODATA when the file ends first. */
static int pread_all(int fd, void *buf, size_t len, off_t off)
{
	uint8_t *p = buf;
	while (len > 0) {
		ssize_t n = pread(fd, p, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENODATA;
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

/* The file operations that change something, each reported to the trace
 * hook after it returned (a sync: before it starts too, and the hook may
 * fail it), as bufpool.h's "I/O tracing" orders them. */
static int trace(const struct kv_log *log, const struct bp_io_trace_event *ev)
{
	return log->trace ? log->trace(log->trace_arg, ev) : 0;
}

static int open_traced(const struct kv_log *log, const char *path, int oflags)
{
	int fd = open(path, oflags, 0644);
	if (fd >= 0)
		trace(log, &(struct bp_io_trace_event){.op = BP_IO_TRACE_OPEN, .path = path,
			.flags = ((oflags & O_CREAT) ? BP_IO_TRACE_CREAT : 0u) |
				 ((oflags & O_TRUNC) ? BP_IO_TRACE_TRUNC : 0u)});
	return fd;
}

static int pwrite_traced(const struct kv_log *log, int fd, const char *path, const void *buf,
			 size_t len, off_t off)
{
	int rc = pwrite_all(fd, buf, len, off);
	trace(log, &(struct bp_io_trace_event){.op = BP_IO_TRACE_WRITE, .result = rc,
		.path = path, .offset = (uint64_t)off, .len = len, .data = buf});
	return rc;
}

/* fdatasync (data_only) or fsync fd, the file or directory at path. */
static int sync_traced(const struct kv_log *log, int fd, const char *path, bool data_only)
{
	int rc = trace(log, &(struct bp_io_trace_event){.op = BP_IO_TRACE_SYNC_BEGIN,
							  .path = path});
	if (rc >= 0)
		rc = (data_only ? fdatasync(fd) : fsync(fd)) < 0 ? -errno : 0;
	trace(log, &(struct bp_io_trace_event){.op = BP_IO_TRACE_SYNC_END, .path = path,
						  .result = rc});
	return rc;
}

/* Cut the .wal to size bytes and make that durable. */
static int truncate_wal(const struct kv_log *log, uint64_t size)
{
	if (ftruncate(log->fd, (off_t)size) < 0)
		return -errno;
	trace(log, &(struct bp_io_trace_event){.op = BP_IO_TRACE_TRUNCATE, .path = log->wal_path,
						  .offset = size});
	return sync_traced(log, log->fd, log->wal_path, true);
}

/* Replace the control file: a crash leaves the old one or the new one. */
static int write_ctl(struct kv_log *log, uint64_t base, uint64_t redo)
{
	struct kv_log_ctl c = {.magic = KV_LOG_CTL_MAGIC, .base = base, .redo = redo,
			       .page_bytes = log->page_bytes, .value_size = log->value_size,
			       .flags = log->ctl_flags};
	c.crc = util_crc32c(0, &c, offsetof(struct kv_log_ctl, crc));
	int fd = open_traced(log, log->tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = pwrite_traced(log, fd, log->tmp_path, &c, sizeof(c), 0);
	if (rc == 0)
		rc = sync_traced(log, fd, log->tmp_path, false);
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(log->tmp_path, log->ctl_path) < 0)
		rc = -errno;
	if (rc == 0) /* the rename is durable only with its directory */
		trace(log, &(struct bp_io_trace_event){.op = BP_IO_TRACE_RENAME,
			.path = log->tmp_path, .path2 = log->ctl_path});
	if (rc == 0) {
		int dfd = open(log->dir_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		rc = dfd < 0 ? -errno : sync_traced(log, dfd, log->dir_path, false);
		if (dfd >= 0)
			close(dfd);
	}
	return rc;
}

/* 0 (found, *c filled), -ENOENT (none), -EBADMSG (damaged), or -errno. */
static int read_ctl(const struct kv_log *log, struct kv_log_ctl *c)
{
	int fd = open(log->ctl_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = pread_all(fd, c, sizeof(*c), 0);
	close(fd);
	if (rc == -ENODATA)
		return -EBADMSG;
	if (rc)
		return rc;
	if (c->magic != KV_LOG_CTL_MAGIC ||
	    c->crc != util_crc32c(0, c, offsetof(struct kv_log_ctl, crc)) ||
	    c->base < KV_LOG_FIRST_POS || c->redo < c->base)
		return -EBADMSG;
	return 0;
}

static char *concat(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *s = malloc(la + lb + 1);
	if (s) {
		memcpy(s, a, la);
		memcpy(s + la, b, lb + 1);
	}
	return s;
}

static int set_paths(struct kv_log *log, const char *path)
{
	char *copy = strdup(path);
	log->wal_path = concat(path, ".wal");
	log->ctl_path = concat(path, ".ctl");
	log->tmp_path = concat(path, ".ctl.tmp");
	log->dir_path = copy ? strdup(dirname(copy)) : NULL;
	free(copy);
	return log->wal_path && log->ctl_path && log->tmp_path && log->dir_path ? 0 : -ENOMEM;
}

bool kv_log_exists(const char *path)
{
	char *ctl = concat(path, ".ctl");
	bool yes = ctl && access(ctl, F_OK) == 0;
	free(ctl);
	return yes;
}

void kv_log_close(struct kv_log *log)
{
	if (!log)
		return;
	if (log->fd >= 0)
		close(log->fd);
	pthread_mutex_destroy(&log->mu);
	pthread_mutex_destroy(&log->ctl_mu);
	pthread_cond_destroy(&log->cv);
	free(log->act.p);
	free(log->spare.p);
	free(log->wal_path);
	free(log->ctl_path);
	free(log->tmp_path);
	free(log->dir_path);
	free(log);
}

/* Start an empty log (the .wal open).  For a store without a log: the
 * file cut first, then the control file at the first position: a crash
 * in between leaves no log at all, as before.  For a store being
 * truncated (old: its control file, if it had a readable one): the
 * control file first, with the truncation's intent and at a base past
 * every position the old file can hold (its base plus its size), then the
 * file cut: a crash in between leaves the new control file over bytes no
 * record can claim (a record must carry its own position), and whoever
 * opens the store next empties its file before replaying (kv_open).  The
 * old store is then gone at once, whether its file's O_TRUNC reached the
 * disk or not, and no page of it can come back under the new log. */
static int start_log(struct kv_log *log, bool truncating, const struct kv_log_ctl *old,
		     struct kv_log_ctl *c)
{
	struct stat st;
	if (fstat(log->fd, &st) < 0)
		return -errno;
	uint64_t base = truncating ? (old ? old->base : KV_LOG_FIRST_POS) + (uint64_t)st.st_size
				   : KV_LOG_FIRST_POS;
	*c = (struct kv_log_ctl){.base = base, .redo = base};
	log->ctl_flags = truncating ? KV_LOG_CTL_TRUNCATE : 0;
	int rc;
	if (truncating) {
		rc = write_ctl(log, base, base);
		if (rc == 0)
			rc = truncate_wal(log, 0);
	} else {
		rc = truncate_wal(log, 0);
		if (rc == 0)
			rc = write_ctl(log, base, base);
	}
	return rc;
}

int kv_log_open(struct kv_log **out, const char *path, bool truncate, uint32_t page_bytes,
		uint32_t value_size, bp_io_trace_fn trace_fn, void *trace_arg)
{
	struct kv_log *log = calloc(1, sizeof(*log));
	if (!log)
		return -ENOMEM;
	log->fd = -1;
	log->trace = trace_fn;
	log->trace_arg = trace_arg;
	log->page_bytes = page_bytes;
	log->value_size = value_size;
	log->max_record = sizeof(struct rec_hdr) +
			  KV_LOG_MAX_PARTS * (sizeof(struct part_hdr) + pad8(page_bytes));
	pthread_mutex_init(&log->mu, NULL);
	pthread_mutex_init(&log->ctl_mu, NULL);
	pthread_cond_init(&log->cv, NULL);
	int rc = set_paths(log, path);
	struct kv_log_ctl c = {0}, old;
	bool fresh = false, have_old = false;
	if (rc == 0) {
		rc = read_ctl(log, &old);
		if (rc == -ENOENT || (truncate && rc == -EBADMSG)) { /* none, or to go */
			fresh = !truncate;
			rc = 0;
		} else if (rc == 0 && truncate) {
			have_old = true;
		} else if (rc == 0 && (old.page_bytes != page_bytes || old.value_size < 8 ||
				       (old.flags & ~KV_LOG_CTL_TRUNCATE))) {
			rc = -EBADMSG; /* another page geometry, or a newer format */
		} else if (rc == 0) {
			c = old;
			log->value_size = c.value_size;
			log->ctl_flags = c.flags;
		}
	}
	if (rc == 0) {
		log->fd = open_traced(log, log->wal_path, O_RDWR | O_CREAT | O_CLOEXEC);
		if (log->fd < 0)
			rc = -errno;
	}
	if (rc == 0 && (truncate || fresh))
		rc = start_log(log, truncate, have_old ? &old : NULL, &c);
	if (rc) {
		kv_log_close(log);
		return rc;
	}
	log->base = c.base;
	log->redo = c.redo;
	/* Until kv_log_replay finds the end, the log ends where replay starts. */
	log->act_pos = log->durable = log->fpw_from = c.redo;
	*out = log;
	return 0;
}

void kv_log_set_pool(struct kv_log *log, struct bp_pool *pool) { log->pool = pool; }

/* ---- Appending and flushing ---------------------------------------------------- */

static int reserve(struct kv_log_buf *b, size_t len)
{
	if (b->cap - b->used >= len)
		return 0;
	size_t cap = b->cap ? b->cap : 1u << 16;
	while (cap - b->used < len)
		cap *= 2;
	uint8_t *p = realloc(b->p, cap);
	if (!p)
		return -ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

int kv_log_append(struct kv_log *log, struct kv_log_part *parts, unsigned n,
		  uint64_t *lsn, uint64_t *end)
{
	if (n == 0 || n > KV_LOG_MAX_PARTS)
		return -EINVAL;
	pthread_mutex_lock(&log->mu);
	/* Full page writes: a page whose last record is older than the
	 * latest checkpoint's start may be written (and torn, by a power
	 * failure) before the next change reaches the log, and recovery will
	 * not look before that checkpoint: its first change after it is
	 * logged whole, so replay can rebuild it from nothing.  Decided
	 * under the mutex, so a checkpoint starting concurrently either
	 * sees this record below its start or makes us image the page. */
	size_t len = sizeof(struct rec_hdr);
	for (unsigned i = 0; i < n; i++) {
		uint64_t page_lsn;
		memcpy(&page_lsn, bp_data(parts[i].frame), sizeof(page_lsn));
		if (parts[i].type == KV_LOG_UPSERT && page_lsn < log->fpw_from) {
			parts[i].type = KV_LOG_IMAGE;
			parts[i].data = bp_data(parts[i].frame);
		}
		len += sizeof(struct part_hdr) + pad8(payload_len(log, parts[i].type));
	}
	uint64_t at = log->act_pos + log->act.used;
	int rc = reserve(&log->act, len);
	if (rc) {
		/* The pages are changed and cannot be logged: the log is
		 * broken for good, and the pages are dirtied above every
		 * durable LSN, so the write-ahead rule keeps them off the
		 * disk (flush_log fails from now on). */
		if (!log->err)
			log->err = rc;
		for (unsigned i = 0; i < n; i++)
			bp_mark_dirty_lsn(log->pool, parts[i].frame, at);
		pthread_mutex_unlock(&log->mu);
		return rc;
	}
	uint8_t *rec = log->act.p + log->act.used, *p = rec + sizeof(struct rec_hdr);
	/* Stamp first, so a page image carries its own new LSN. */
	for (unsigned i = 0; i < n; i++)
		memcpy(bp_data(parts[i].frame), &at, sizeof(at));
	for (unsigned i = 0; i < n; i++) {
		size_t pl = payload_len(log, parts[i].type);
		struct part_hdr ph = {.type = parts[i].type, .len = (uint32_t)pl,
				      .pageno = parts[i].pageno};
		memcpy(p, &ph, sizeof(ph));
		p += sizeof(ph);
		if (parts[i].type == KV_LOG_IMAGE) {
			memcpy(p, parts[i].data, pl);
		} else {
			memcpy(p, &parts[i].key, sizeof(uint64_t));
			memcpy(p + sizeof(uint64_t), parts[i].value, log->value_size);
		}
		memset(p + pl, 0, pad8(pl) - pl);
		p += pad8(pl);
	}
	struct rec_hdr h = {.len = (uint32_t)len, .lsn = at, .nparts = n};
	memcpy(rec, &h, sizeof(h));
	h.crc = util_crc32c(0, rec + sizeof(h.crc), len - sizeof(h.crc));
	memcpy(rec, &h.crc, sizeof(h.crc));
	log->act.used += len;
	log->records++;
	log->bytes += len;
	/* Inside the mutex: see kv_log_append in kv_log.h.  It does not
	 * sleep: the caller's exclusive latch already waited out WRITEBACK. */
	for (unsigned i = 0; i < n; i++)
		bp_mark_dirty_lsn(log->pool, parts[i].frame, at);
	pthread_mutex_unlock(&log->mu);
	*lsn = at;
	*end = at + len;
	return 0;
}

int kv_log_flush(struct kv_log *log, uint64_t end, bool commit, uint64_t *durable)
{
	pthread_mutex_lock(&log->mu);
	if (commit)
		log->commits++;
	uint64_t stop = log->act_pos + log->act.used;
	if (end > stop)
		end = stop; /* nothing past the end can be waited for */
	while (log->durable < end && !log->err) {
		if (log->flushing) { /* join the flush in progress, or the next */
			pthread_cond_wait(&log->cv, &log->mu);
			continue;
		}
		/* Lead: take everything buffered, so the waiters behind us
		 * ride on this fsync. */
		log->flushing = true;
		struct kv_log_buf w = log->act;
		log->act = log->spare;
		log->act.used = 0;
		uint64_t from = log->act_pos;
		log->act_pos += w.used;
		uint64_t to = log->act_pos;
		pthread_mutex_unlock(&log->mu);
		int rc = pwrite_traced(log, log->fd, log->wal_path, w.p, w.used,
				       (off_t)(from - log->base));
		if (rc == 0)
			rc = sync_traced(log, log->fd, log->wal_path, true);
		pthread_mutex_lock(&log->mu);
		w.used = 0;
		log->spare = w;
		log->fsyncs++;
		if (rc)
			log->err = rc;
		else
			log->durable = to;
		log->flushing = false;
		pthread_cond_broadcast(&log->cv);
	}
	/* What was durable before a failure stays durable. */
	int rc = log->durable >= end ? 0 : log->err;
	if (durable)
		*durable = log->durable;
	pthread_mutex_unlock(&log->mu);
	return rc;
}

int kv_log_flush_for_pool(void *arg, uint64_t lsn, uint64_t *durable)
{
	struct kv_log *log = arg;
	uint64_t d;
	int rc = kv_log_flush(log, lsn + 1, false, &d);
	/* durable is a record boundary: a record starting below it is whole. */
	*durable = d - 1;
	return rc ? rc : (*durable >= lsn ? 0 : -EIO);
}

uint64_t kv_log_begin_checkpoint(struct kv_log *log)
{
	pthread_mutex_lock(&log->mu);
	uint64_t e = log->fpw_from = log->act_pos + log->act.used;
	pthread_mutex_unlock(&log->mu);
	return e;
}

uint64_t kv_log_end(struct kv_log *log)
{
	pthread_mutex_lock(&log->mu);
	uint64_t e = log->act_pos + log->act.used;
	pthread_mutex_unlock(&log->mu);
	return e;
}

/* ---- Checkpoints and reset ----------------------------------------------------- */

int kv_log_set_redo(struct kv_log *log, uint64_t redo)
{
	pthread_mutex_lock(&log->ctl_mu);
	int rc = redo < log->redo ? 0 : write_ctl(log, log->base, redo);
	if (rc == 0 && redo > log->redo) {
		log->redo = redo;
		/* Nothing below redo is read again or rewritten.  A file
		 * system without hole punching keeps the bytes: harmless. */
		uint64_t cut = (redo - log->base) & ~UINT64_C(4095);
		if (cut && fallocate(log->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
				     (off_t)cut) == 0)
			trace(log, &(struct bp_io_trace_event){.op = BP_IO_TRACE_PUNCH,
				.path = log->wal_path, .offset = 0, .len = cut});
	}
	pthread_mutex_unlock(&log->ctl_mu);
	return rc;
}

uint32_t kv_log_value_size(const struct kv_log *log) { return log->value_size; }

bool kv_log_truncating(const struct kv_log *log)
{
	return log->ctl_flags & KV_LOG_CTL_TRUNCATE;
}

bool kv_log_unused(struct kv_log *log)
{
	return (log->base == KV_LOG_FIRST_POS || kv_log_truncating(log)) &&
	       kv_log_end(log) == log->base;
}

int kv_log_reset(struct kv_log *log, uint32_t value_size)
{
	uint64_t end = kv_log_end(log);
	int rc = kv_log_flush(log, end, false, NULL);
	if (rc)
		return rc;
	pthread_mutex_lock(&log->ctl_mu);
	log->value_size = value_size; /* no appender runs */
	log->ctl_flags = 0;           /* every page is on disk: a truncation is done */
	/* Control file first: once it says base = end, whatever the old file
	 * holds sits at positions below end, which no record can claim. */
	rc = write_ctl(log, end, end);
	if (rc == 0)
		rc = truncate_wal(log, 0);
	if (rc == 0) {
		pthread_mutex_lock(&log->mu);
		log->base = log->redo = log->fpw_from = end;
		pthread_mutex_unlock(&log->mu);
	}
	pthread_mutex_unlock(&log->ctl_mu);
	return rc;
}

/* ---- Replay ------------------------------------------------------------------- */

/* Parse the n parts of a record body [p, stop); false if malformed. */
static bool parse_parts(const struct kv_log *log, const uint8_t *p, const uint8_t *stop,
			unsigned n, struct kv_log_part *parts)
{
	for (unsigned i = 0; i < n; i++) {
		struct part_hdr ph;
		if ((size_t)(stop - p) < sizeof(ph))
			return false;
		memcpy(&ph, p, sizeof(ph));
		p += sizeof(ph);
		if ((ph.type != KV_LOG_IMAGE && ph.type != KV_LOG_UPSERT) ||
		    ph.len != payload_len(log, ph.type) || (size_t)(stop - p) < pad8(ph.len))
			return false;
		parts[i] = (struct kv_log_part){.type = ph.type, .pageno = ph.pageno};
		if (ph.type == KV_LOG_IMAGE) {
			parts[i].data = p;
		} else {
			memcpy(&parts[i].key, p, sizeof(uint64_t));
			parts[i].value = p + sizeof(uint64_t);
		}
		p += pad8(ph.len);
	}
	return p == stop;
}

/* The record at pos, read into buf and its parts parsed: its length, 0 at
 * the end of the log (nothing, or a torn or stale record), or a negative
 * errno (a read error). */
static int64_t read_record(struct kv_log *log, uint64_t pos, uint8_t *buf,
			   struct kv_log_part *parts, unsigned *nparts)
{
	struct rec_hdr h;
	off_t off = (off_t)(pos - log->base);
	int r = pread_all(log->fd, &h, sizeof(h), off);
	if (r)
		return r == -ENODATA ? 0 : r;
	if (h.lsn != pos || h.len < sizeof(h) || h.len % 8 || h.len > log->max_record ||
	    h.nparts == 0 || h.nparts > KV_LOG_MAX_PARTS)
		return 0;
	r = pread_all(log->fd, buf, h.len, off);
	if (r)
		return r == -ENODATA ? 0 : r;
	if (util_crc32c(0, buf + sizeof(h.crc), h.len - sizeof(h.crc)) != h.crc ||
	    !parse_parts(log, buf + sizeof(h), buf + h.len, h.nparts, parts))
		return 0;
	*nparts = h.nparts;
	return h.len;
}

static void set_durable(struct kv_log *log, uint64_t pos)
{
	pthread_mutex_lock(&log->mu);
	log->act_pos = log->durable = pos;
	pthread_mutex_unlock(&log->mu);
}

/* Find the end of the whole records from redo on, writing each back where
 * it is; cut the tail there and sync (see the design note): then every
 * record below *end is durable. */
static int make_durable(struct kv_log *log, uint8_t *buf, struct kv_log_part *parts,
			uint64_t *end)
{
	uint64_t pos = log->redo;
	unsigned n;
	int64_t len;
	while ((len = read_record(log, pos, buf, parts, &n)) > 0) {
		int rc = pwrite_traced(log, log->fd, log->wal_path, buf, (size_t)len,
				       (off_t)(pos - log->base));
		if (rc)
			return rc;
		pos += (uint64_t)len;
	}
	if (len < 0)
		return (int)len;
	*end = pos;
	return truncate_wal(log, pos - log->base);
}

int kv_log_replay(struct kv_log *log, kv_log_apply_fn apply, void *arg, bool trust_read,
		  uint64_t *records)
{
	uint64_t pos = log->redo, end = UINT64_MAX, nrec = 0;
	uint8_t *buf = malloc(log->max_record);
	struct kv_log_part *parts = malloc(KV_LOG_MAX_PARTS * sizeof(*parts));
	int rc = buf && parts ? 0 : -ENOMEM;
	if (rc == 0 && !trust_read && (rc = make_durable(log, buf, parts, &end)) == 0)
		set_durable(log, end); /* the pool may write what replay dirties */
	while (rc == 0 && pos < end) {
		unsigned n;
		int64_t len = read_record(log, pos, buf, parts, &n);
		if (len <= 0) {
			/* Only a trusting replay finds its end here; the
			 * records below a synced end were read once already. */
			rc = len < 0 ? (int)len : trust_read ? 0 : -EIO;
			break;
		}
		if (trust_read) /* kv_config.break_recovery: the old, wrong way */
			set_durable(log, pos + (uint64_t)len);
		for (unsigned i = 0; i < n && rc == 0; i++)
			rc = apply(arg, pos, &parts[i]);
		pos += (uint64_t)len;
		nrec++;
	}
	free(buf);
	free(parts);
	if (rc == 0 && trust_read && (rc = truncate_wal(log, pos - log->base)) == 0)
		set_durable(log, pos);
	if (rc == 0)
		*records = nrec;
	return rc;
}

/* ---- Counters ------------------------------------------------------------------ */

void kv_log_get_stats(struct kv_log *log, struct kv_log_stats *out)
{
	pthread_mutex_lock(&log->mu);
	out->records = log->records;
	out->bytes = log->bytes;
	out->commits = log->commits;
	out->fsyncs = log->fsyncs;
	out->checkpoints = log->checkpoints;
	out->durable_lsn = log->durable;
	pthread_mutex_unlock(&log->mu);
}

void kv_log_count_checkpoint(struct kv_log *log)
{
	pthread_mutex_lock(&log->mu);
	log->checkpoints++;
	pthread_mutex_unlock(&log->mu);
}
