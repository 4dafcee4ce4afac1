/* SPDX-License-Identifier: MIT */
/*
 * powerloss_model.c - the power-loss test's model of a file system: fed
 * the trace's events in order, it writes at any point the files a power
 * failure there could leave.
 *
 * Design note
 * -----------
 * Layer: bpbench (see powerloss_int.h), on POSIX files and gen.h's rng.
 * Single-threaded (the parent's).
 *
 * Inodes and names.  A name (the store's data file, .wal, .ctl, .ctl.tmp)
 * points at an inode or at nothing.  An OPEN of a name that points at
 * nothing creates an inode; a RENAME moves an inode to another name.  Two
 * tables of names: the volatile one (every operation done: what the
 * running processes see) and the durable one (what a directory sync made
 * durable).  Writes, truncates and punches go to the inode the name points
 * at when they happen (an OPEN with O_TRUNC of an existing file is a
 * truncate to 0).  A WRITE that failed (result < 0) changes nothing: the
 * pool reports the writes it did not issue, e.g. when the log could not be
 * flushed ahead of the page; one that did land in part shows in the files
 * after its process ends, and the parent's records add it then.
 *
 * Durability (the rules of iotrace.md).  Each inode keeps a durable image
 * and the list of its operations not yet folded into it, each PENDING,
 * DURABLE or POISONED.  A sync whose SYNC_END is 0 makes the inode's
 * PENDING operations recorded before its SYNC_BEGIN DURABLE; one that
 * failed makes them POISONED: Linux forgets the dirtiness of pages it
 * failed to write, so no later sync covers them, and they stay a coin
 * toss for ever.  The list's DURABLE prefix is folded into the image; a
 * DURABLE operation behind a POISONED one stays in the list (order
 * matters where they overlap), except that a DURABLE truncate to 0 makes
 * everything before it moot.  The directory is the same with the name
 * operations (creations, renames) and the durable table.  A sync is
 * matched to its SYNC_END by thread and file; a new round (PL_ROUND)
 * forgets the syncs its dead predecessor left open (they never ended, so
 * they made nothing durable).
 *
 * A cut: copy the durable names, apply each pending name operation kept or
 * dropped (a coin each, DURABLE ones always); then for each name that
 * points at an inode, its durable image and its list in order: DURABLE
 * applied, the others each kept, dropped, or torn (every 512-byte sector
 * of it a coin of its own).  The choices are independent: a later write
 * may be lost while an earlier one to the same sector is kept, as a disk
 * that reorders its cache's writes leaves it.
 */
#include "powerloss_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum op_state { OP_PENDING, OP_DURABLE, OP_POISONED };

struct op {
	uint32_t ev;
	int32_t ino; /* a name operation's inode (the directory's list) */
	uint8_t state;
};

struct oplist {
	struct op *op;
	size_t head, n, cap; /* live: op[head..n) */
};

struct content {
	uint8_t *b;
	uint64_t size, cap;
};

struct inode {
	struct content dur;
	struct oplist ops;
};

/* A sync begun and not yet ended. */
struct open_sync {
	uint32_t tid, begin_ev;
	uint16_t file;
	int32_t ino; /* -1: the directory */
	bool failed;
};

struct pl_model {
	const struct pl_trace *t;
	struct inode *ino;
	size_t nino, cap;
	int32_t vol_name[PL_NNAMES], dur_name[PL_NNAMES];
	struct oplist dirops; /* OPEN (a creation) and RENAME events */
	struct open_sync *sync;
	size_t nsync, sync_cap;
	struct content scratch;
};

static const char *const model_suffix[PL_NNAMES] = {"", ".wal", ".ctl", ".ctl.tmp"};

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 16;
	while (c < need)
		c *= 2;
	void *q = realloc(*p, c * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

static int content_size(struct content *c, uint64_t size)
{
	if (size > c->cap) {
		uint64_t cap = c->cap ? c->cap : 4096;
		while (cap < size)
			cap *= 2;
		uint8_t *b = realloc(c->b, cap);
		if (!b)
			return -ENOMEM;
		c->b = b;
		c->cap = cap;
	}
	if (size > c->size)
		memset(c->b + c->size, 0, size - c->size);
	c->size = size;
	return 0;
}

static int content_copy(struct content *to, const struct content *from)
{
	to->size = 0;
	int rc = content_size(to, from->size);
	if (rc == 0 && from->size)
		memcpy(to->b, from->b, from->size);
	return rc;
}

/* Apply event e to c; rng NULL: whole, else torn at sectors (a coin
 * each). */
static int apply(struct content *c, const struct pl_ev *e, struct rng *rng)
{
	if (e->type == BP_IO_TRACE_OPEN) { /* with O_TRUNC (feed_open) */
		c->size = 0;
		return 0;
	}
	if (e->type == BP_IO_TRACE_TRUNCATE) {
		int rc = content_size(c, e->offset);
		c->size = e->offset;
		return rc;
	}
	uint64_t end = e->offset + e->len;
	for (uint64_t a = e->offset; a < end;) {
		uint64_t b = (a / PL_SECTOR + 1) * PL_SECTOR;
		if (b > end)
			b = end;
		if (!rng || rng_below(rng, 2)) {
			if (e->type == BP_IO_TRACE_WRITE) {
				if (b > c->size && content_size(c, b))
					return -ENOMEM;
				memcpy(c->b + a, e->data + (a - e->offset), b - a);
			} else if (a < c->size) { /* PUNCH: zeros, the size kept */
				memset(c->b + a, 0, (b < c->size ? b : c->size) - a);
			}
		}
		a = b;
	}
	return 0;
}

static int oplist_add(struct oplist *l, uint32_t ev, int32_t ino)
{
	if (l->head > 0 && l->head * 2 >= l->n) { /* compact */
		memmove(l->op, l->op + l->head, (l->n - l->head) * sizeof(*l->op));
		l->n -= l->head;
		l->head = 0;
	}
	if (grow((void **)&l->op, &l->cap, l->n + 1, sizeof(*l->op)))
		return -ENOMEM;
	l->op[l->n++] = (struct op){.ev = ev, .ino = ino, .state = OP_PENDING};
	return 0;
}

/* A name operation on the table names. */
static void apply_name(int32_t *names, const struct pl_ev *e, int32_t ino)
{
	if (e->type == BP_IO_TRACE_RENAME) {
		names[e->file2] = ino;
		if (names[e->file] == ino)
			names[e->file] = -1;
	} else {
		names[e->file] = ino;
	}
}

int pl_model_new(struct pl_model **out)
{
	struct pl_model *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	for (unsigned i = 0; i < PL_NNAMES; i++)
		m->vol_name[i] = m->dur_name[i] = -1;
	*out = m;
	return 0;
}

void pl_model_free(struct pl_model *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nino; i++) {
		free(m->ino[i].dur.b);
		free(m->ino[i].ops.op);
	}
	free(m->ino);
	free(m->dirops.op);
	free(m->sync);
	free(m->scratch.b);
	free(m);
}

/* Fold the DURABLE prefix of inode i's list into its image. */
static int fold(struct pl_model *m, struct inode *in)
{
	struct oplist *l = &in->ops;
	/* a DURABLE truncate to 0 makes all before it moot */
	for (size_t k = l->n; k-- > l->head;) {
		const struct pl_ev *e = &m->t->ev[l->op[k].ev];
		bool empties = e->type == BP_IO_TRACE_OPEN ||
			       (e->type == BP_IO_TRACE_TRUNCATE && e->offset == 0);
		if (l->op[k].state == OP_DURABLE && empties) {
			in->dur.size = 0;
			l->head = k + 1;
			break;
		}
	}
	while (l->head < l->n && l->op[l->head].state == OP_DURABLE)
		if (apply(&in->dur, &m->t->ev[l->op[l->head++].ev], NULL))
			return -ENOMEM;
	return 0;
}

/* A sync of s ended with result: its earlier PENDING operations become
 * DURABLE or POISONED. */
static int sync_end(struct pl_model *m, const struct open_sync *s, int result)
{
	uint8_t to = result == 0 && !s->failed ? OP_DURABLE : OP_POISONED;
	if (s->ino < 0) {
		struct oplist *l = &m->dirops;
		for (size_t k = l->head; k < l->n && l->op[k].ev < s->begin_ev; k++)
			if (l->op[k].state == OP_PENDING)
				l->op[k].state = to;
		while (l->head < l->n && l->op[l->head].state == OP_DURABLE) {
			size_t k = l->head++;
			apply_name(m->dur_name, &m->t->ev[l->op[k].ev], l->op[k].ino);
		}
		return 0;
	}
	struct inode *in = &m->ino[s->ino];
	struct oplist *l = &in->ops;
	for (size_t k = l->head; k < l->n && l->op[k].ev < s->begin_ev; k++)
		if (l->op[k].state == OP_PENDING)
			l->op[k].state = to;
	return fold(m, in);
}

static int model_error(size_t i, const char *what)
{
	fprintf(stderr, PL_PROG ": the trace's event %zu: %s\n", i, what);
	return -EPROTO;
}

/* A name operation: to the volatile table now, to the durable one by a
 * directory sync. */
static int name_op(struct pl_model *m, size_t i, int32_t ino)
{
	if (oplist_add(&m->dirops, (uint32_t)i, ino))
		return -ENOMEM;
	apply_name(m->vol_name, &m->t->ev[i], ino);
	return 0;
}

static int feed_open(struct pl_model *m, size_t i, const struct pl_ev *e)
{
	int32_t ino = m->vol_name[e->file];
	if (ino >= 0) /* an existing file: O_TRUNC empties it */
		return (e->flags & BP_IO_TRACE_TRUNC) ? oplist_add(&m->ino[ino].ops, (uint32_t)i, -1) : 0;
	if (grow((void **)&m->ino, &m->cap, m->nino + 1, sizeof(*m->ino)))
		return -ENOMEM;
	m->ino[m->nino] = (struct inode){0};
	return name_op(m, i, (int32_t)m->nino++);
}

static int feed_sync(struct pl_model *m, size_t i, const struct pl_ev *e)
{
	if (e->type == BP_IO_TRACE_SYNC_BEGIN) {
		int32_t ino = e->file == PL_F_DIR ? -1 : m->vol_name[e->file];
		if (e->file != PL_F_DIR && ino < 0)
			return model_error(i, "a sync of a file that does not exist");
		if (grow((void **)&m->sync, &m->sync_cap, m->nsync + 1, sizeof(*m->sync)))
			return -ENOMEM;
		m->sync[m->nsync++] = (struct open_sync){.tid = e->tid, .begin_ev = (uint32_t)i,
							 .file = e->file, .ino = ino,
							 .failed = e->result < 0};
		return 0;
	}
	for (size_t k = m->nsync; k-- > 0;) {
		if (m->sync[k].tid != e->tid || m->sync[k].file != e->file)
			continue;
		struct open_sync s = m->sync[k];
		m->sync[k] = m->sync[--m->nsync];
		return sync_end(m, &s, e->result);
	}
	return model_error(i, "a SYNC_END without its SYNC_BEGIN");
}

int pl_model_feed(struct pl_model *m, const struct pl_trace *t, size_t i)
{
	const struct pl_ev *e = &t->ev[i];
	m->t = t;
	if (e->type == PL_ROUND) {
		m->nsync = 0;
		return 0;
	}
	if (e->type == PL_ACK || e->type == PL_EPOCH)
		return 0;
	if (e->file >= PL_NFILES || (e->file == PL_F_DIR && e->type != BP_IO_TRACE_SYNC_BEGIN &&
				     e->type != BP_IO_TRACE_SYNC_END))
		return model_error(i, "an operation on a file that is not the store's");
	switch (e->type) {
	case BP_IO_TRACE_OPEN:
		return feed_open(m, i, e);
	case BP_IO_TRACE_SYNC_BEGIN:
	case BP_IO_TRACE_SYNC_END:
		return feed_sync(m, i, e);
	case BP_IO_TRACE_RENAME:
		if (e->file2 >= PL_NNAMES || m->vol_name[e->file] < 0)
			return model_error(i, "a rename of a file that does not exist");
		return name_op(m, i, m->vol_name[e->file]);
	case BP_IO_TRACE_WRITE:
		if (e->result < 0) /* see the design note */
			return 0;
		/* fall through */
	case BP_IO_TRACE_TRUNCATE:
	case BP_IO_TRACE_PUNCH:
		if (m->vol_name[e->file] < 0)
			return model_error(i, "an operation on a file that does not exist");
		return oplist_add(&m->ino[m->vol_name[e->file]].ops, (uint32_t)i, -1);
	default:
		return model_error(i, "an unknown event type");
	}
}

/* Inode ino's content into c: every live operation applied if all, else
 * by the coins of rng. */
static int inode_content(struct pl_model *m, int32_t ino, struct rng *rng, struct content *c)
{
	struct inode *in = &m->ino[ino];
	if (content_copy(c, &in->dur))
		return -ENOMEM;
	for (size_t k = in->ops.head; k < in->ops.n; k++) {
		const struct op *o = &in->ops.op[k];
		const struct pl_ev *e = &m->t->ev[o->ev];
		int rc = 0;
		if (!rng || o->state == OP_DURABLE) {
			rc = apply(c, e, NULL);
		} else {
			/* kept, dropped, or (writes and punches) torn */
			bool tearable = e->type == BP_IO_TRACE_WRITE || e->type == BP_IO_TRACE_PUNCH;
			uint64_t coin = rng_below(rng, tearable ? 3 : 2);
			if (coin != 1)
				rc = apply(c, e, coin == 2 ? rng : NULL);
		}
		if (rc)
			return rc;
	}
	return 0;
}

int pl_model_volatile(struct pl_model *m, unsigned name, uint8_t **buf, uint64_t *size)
{
	int32_t ino = m->vol_name[name];
	if (ino < 0)
		return 0;
	struct content c = {0};
	if (inode_content(m, ino, NULL, &c) || (!c.b && !(c.b = malloc(1)))) {
		free(c.b);
		return -ENOMEM;
	}
	*buf = c.b;
	*size = c.size;
	return 1;
}

static int write_file(const char *path, const struct content *c)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	for (uint64_t done = 0; done < c->size;) {
		ssize_t n = write(fd, c->b + done, c->size - done);
		if (n <= 0) {
			int e = n < 0 ? -errno : -EIO;
			close(fd);
			return e;
		}
		done += (uint64_t)n;
	}
	return close(fd) ? -errno : 0;
}

int pl_model_build(struct pl_model *m, struct rng *rng, const char *dir)
{
	int32_t names[PL_NNAMES];
	memcpy(names, m->dur_name, sizeof(names));
	const struct oplist *l = &m->dirops;
	for (size_t k = l->head; k < l->n; k++)
		if (l->op[k].state == OP_DURABLE || rng_below(rng, 2))
			apply_name(names, &m->t->ev[l->op[k].ev], l->op[k].ino);
	for (unsigned i = 0; i < PL_NNAMES; i++) {
		char path[8192];
		snprintf(path, sizeof(path), "%s/store.db%s", dir, model_suffix[i]);
		int rc = 0;
		if (names[i] < 0) {
			if (unlink(path) != 0 && errno != ENOENT)
				rc = -errno;
		} else {
			rc = inode_content(m, names[i], rng, &m->scratch);
			if (rc == 0)
				rc = write_file(path, &m->scratch);
		}
		if (rc) {
			fprintf(stderr, PL_PROG ": writing the state's %s: %s\n", path, strerror(-rc));
			return rc;
		}
	}
	return 0;
}
