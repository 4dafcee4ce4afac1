/* SPDX-License-Identifier: MIT */
/*
 * powerloss_trace.c - the power-loss test's trace: the recorder a child's
 * store reports its I/O to (bp_io_trace_fn), and the reader.
 *
 * Design note
 * -----------
 * Layer: bpbench (see powerloss_int.h), on bufpool.h's trace event and
 * POSIX files.
 *
 * Recording: every event becomes one record, appended with one writev(2)
 * on a descriptor opened O_APPEND, under the recorder's mutex.  The mutex
 * makes one process's records follow the order in which its threads
 * reported them: the hook is called after an operation returned (before
 * its dependants), so a record never precedes the operation's cause, e.g.
 * a page's WRITE follows the log WRITE and SYNC_END its write-back waited
 * for.  Two processes never append at once (a round's child is dead
 * before the next starts).  A SIGKILL can cut an append short (the kernel
 * stops a write between pages for a fatal signal); only the dying
 * process's last record can be torn, it is the file's last, and the
 * reader cuts it off before anything else is appended.
 *
 * The seeded fsync EIO: the eio_at-th SYNC_BEGIN of eio_file in this
 * process returns -EIO (once), which the store sees as the kernel's
 * failure; the SYNC_BEGIN record carries result -EIO, so the model knows
 * the sync failed even before its SYNC_END.
 *
 * Reading: the whole file into memory, then an index of the records.  A
 * record with a bad magic or a size past the end at the file's tail is
 * the torn append above: the file is truncated to the records before it.
 * Anywhere else it is a broken trace (-EPROTO).
 */
#include "powerloss_int.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static const char *const pl_suffix[PL_NNAMES] = {"", ".wal", ".ctl", ".ctl.tmp"};

int pl_recorder_open(struct pl_recorder *r, const char *trace, const char *path)
{
	char dir[4096];

	for (unsigned i = 0; i < PL_NNAMES; i++)
		if ((size_t)snprintf(r->path[i], sizeof(r->path[i]), "%s%s", path, pl_suffix[i]) >=
		    sizeof(r->path[i]))
			return -ENAMETOOLONG;
	snprintf(dir, sizeof(dir), "%s", path);
	snprintf(r->path[PL_F_DIR], sizeof(r->path[PL_F_DIR]), "%s", dirname(dir));
	r->fd = open(trace, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (r->fd < 0)
		return -errno;
	r->err = 0;
	r->syncs = 0;
	atomic_init(&r->eio_done, false);
	return pthread_mutex_init(&r->lock, NULL) ? -ENOMEM : 0;
}

uint16_t pl_file_of(const struct pl_recorder *r, const char *path)
{
	for (uint16_t i = 0; path && i < PL_NFILES; i++)
		if (strcmp(path, r->path[i]) == 0)
			return i;
	return PL_F_NONE;
}

/* Append under r->lock. */
static int append_locked(struct pl_recorder *r, struct pl_rec *h, const void *data)
{
	struct iovec iov[2] = {{h, sizeof(*h)}, {(void *)data, data ? h->len : 0}};
	size_t want = sizeof(*h) + iov[1].iov_len;
	h->magic = PL_MAGIC;
	h->size = want;
	/* A regular file's O_APPEND write is whole unless a signal or a full
	 * disk cuts it; a short one is an error here (the torn record stays
	 * for the reader to cut off). */
	ssize_t n = writev(r->fd, iov, data ? 2 : 1);
	int e = n == (ssize_t)want ? 0 : n < 0 ? -errno : -EIO;
	if (e && !r->err)
		r->err = e;
	return e;
}

int pl_record(struct pl_recorder *r, const struct pl_rec *h, const void *data)
{
	struct pl_rec c = *h;
	pthread_mutex_lock(&r->lock);
	int e = append_locked(r, &c, data);
	pthread_mutex_unlock(&r->lock);
	return e;
}

int pl_trace_hook(void *arg, const struct bp_io_trace_event *ev)
{
	struct pl_recorder *r = arg;
	struct pl_rec h = {.type = ev->op, .result = ev->result, .flags = ev->flags,
			   .file = pl_file_of(r, ev->path), .file2 = pl_file_of(r, ev->path2),
			   .tid = (uint32_t)syscall(SYS_gettid), .offset = ev->offset,
			   .len = ev->len};
	int ret = 0;

	pthread_mutex_lock(&r->lock);
	if (ev->op == BP_IO_TRACE_SYNC_BEGIN && r->eio_at && h.file == r->eio_file &&
	    ++r->syncs == r->eio_at) {
		ret = -EIO;
		h.result = -EIO;
		atomic_store_explicit(&r->eio_done, true, memory_order_relaxed);
	}
	(void)append_locked(r, &h, ev->op == BP_IO_TRACE_WRITE ? ev->data : NULL);
	pthread_mutex_unlock(&r->lock);
	return ret;
}

/* Read the whole of path into t->buf. */
static int read_all(const char *path, struct pl_trace *t, int *fdp)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		int e = -errno;
		fprintf(stderr, PL_PROG ": reading the trace %s: %s\n", path, strerror(-e));
		if (fd >= 0)
			close(fd);
		return e;
	}
	t->bytes = (size_t)st.st_size;
	t->buf = malloc(t->bytes ? t->bytes : 1);
	size_t got = 0;
	while (t->buf && got < t->bytes) {
		ssize_t n = pread(fd, t->buf + got, t->bytes - got, (off_t)got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (!t->buf || got != t->bytes) {
		fprintf(stderr, PL_PROG ": reading the trace %s: %s\n", path,
			t->buf ? "short read" : "out of memory");
		close(fd);
		return t->buf ? -EIO : -ENOMEM;
	}
	*fdp = fd;
	return 0;
}

int pl_trace_load(const char *path, struct pl_trace *t)
{
	int fd = -1;
	*t = (struct pl_trace){0};
	int rc = read_all(path, t, &fd);
	if (rc)
		return rc;
	size_t cap = 0, off = 0;
	while (off < t->bytes) {
		struct pl_rec h;
		bool whole = t->bytes - off >= sizeof(h);
		if (whole)
			memcpy(&h, t->buf + off, sizeof(h));
		if (!whole || h.magic != PL_MAGIC || h.size < sizeof(h) ||
		    h.size > t->bytes - off ||
		    h.size != sizeof(h) + (h.type == BP_IO_TRACE_WRITE ? h.len : 0)) {
			/* only the tail may be torn: nothing valid follows it */
			if (whole && h.magic == PL_MAGIC && h.size <= t->bytes - off) {
				fprintf(stderr, PL_PROG ": the trace is broken at byte %zu\n", off);
				close(fd);
				return -EPROTO;
			}
			if (ftruncate(fd, (off_t)off) != 0) {
				rc = -errno;
				close(fd);
				return rc;
			}
			t->bytes = off;
			break;
		}
		if (t->n == cap) {
			cap = cap ? 2 * cap : 4096;
			struct pl_ev *ev = realloc(t->ev, cap * sizeof(*ev));
			if (!ev) {
				close(fd);
				return -ENOMEM;
			}
			t->ev = ev;
		}
		t->ev[t->n++] = (struct pl_ev){.type = h.type, .result = h.result, .flags = h.flags,
					       .file = h.file, .file2 = h.file2, .tid = h.tid,
					       .offset = h.offset, .len = h.len,
					       .data = t->buf + off + sizeof(h)};
		off += h.size;
	}
	close(fd);
	return 0;
}

void pl_trace_free(struct pl_trace *t)
{
	free(t->buf);
	free(t->ev);
	*t = (struct pl_trace){0};
}
