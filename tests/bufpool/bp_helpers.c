/* SPDX-License-Identifier: MIT */
/*
 * bp_helpers.c - scaffolding of the bufpool unit tests (see bp_helpers.h).
 */
#include "bp_helpers.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char root[64];

void bt_root_make(void)
{
	snprintf(root, sizeof(root), "/tmp/bufpool-test-XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		abort();
	}
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	remove(path);
	return 0;
}

void bt_root_remove(void)
{
	if (root[0])
		nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void bt_dir_make(struct bt_dir *d)
{
	snprintf(d->path, sizeof(d->path), "%s/t-XXXXXX", root);
	ck_assert_ptr_nonnull(mkdtemp(d->path));
	snprintf(d->file, sizeof(d->file), "%s/pages", d->path);
}

void bt_dir_remove(struct bt_dir *d)
{
	unlink(d->file);
	rmdir(d->path);
}

struct bp_config bt_config(const struct bt_dir *d, uint32_t nframes, bool bgwriter)
{
	struct bp_config c;
	bp_config_init(&c);
	c.path = d->file;
	c.nframes = nframes;
	c.flags = BP_OPEN_CREATE | BP_OPEN_NO_READAHEAD | (bgwriter ? 0 : BP_OPEN_NO_BGWRITER);
	return c;
}

struct bp_pool *bt_open_empty(const struct bt_dir *d, uint32_t nframes)
{
	struct bp_config c = bt_config(d, nframes, false);
	c.flags |= BP_OPEN_TRUNCATE;
	struct bp_pool *p;
	ck_assert_int_eq(bp_open(&p, &c), 0);
	return p;
}

void bt_log_fn(void *log_arg, int level, const char *msg)
{
	struct bt_log *l = log_arg;
	l->n++;
	l->level = level;
	if (strchr(msg, '\n'))
		l->newline = true;
	size_t used = strlen(l->text);
	snprintf(l->text + used, sizeof(l->text) - used, "%s\n", msg);
}

void bt_log_clear(struct bt_log *l)
{
	memset(l, 0, sizeof(*l));
}

void bt_log_into(struct bp_config *c, struct bt_log *l)
{
	bt_log_clear(l);
	c->log = bt_log_fn;
	c->log_arg = l;
}

void bt_stderr_begin(const struct bt_dir *d, struct bt_stderr *s)
{
	snprintf(s->path, sizeof(s->path), "%s/stderr", d->path);
	s->fd = open(s->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(s->fd, 0);
	fflush(stderr);
	s->saved = dup(STDERR_FILENO);
	ck_assert_int_ge(s->saved, 0);
	ck_assert_int_ge(dup2(s->fd, STDERR_FILENO), 0);
}

void bt_stderr_end(struct bt_stderr *s, char *buf, size_t len)
{
	fflush(stderr);
	dup2(s->saved, STDERR_FILENO);
	close(s->saved);
	ssize_t n = pread(s->fd, buf, len - 1, 0);
	buf[n > 0 ? (size_t)n : 0] = '\0';
	close(s->fd);
	unlink(s->path);
}

void bt_make_file(const struct bt_dir *d, uint64_t npages, uint64_t version)
{
	struct bp_pool *p = bt_open_empty(d, 8);
	for (uint64_t i = 0; i < npages; i++) {
		uint64_t pg;
		struct bp_frame *f;
		ck_assert_int_eq(bp_new_page(p, &pg, &f), 0);
		bt_fill(bp_data(f), bp_page_size(p), pg, version);
		ck_assert_int_eq(bp_release(p, f), 0);
	}
	ck_assert_int_eq(bp_close(p), 0);
}

void bt_fill(void *page, uint32_t size, uint64_t pageno, uint64_t version)
{
	uint64_t *w = page;
	for (uint32_t i = 0; i < size / 8; i++)
		w[i] = (pageno << 32) ^ (version << 8) ^ i;
}

bool bt_check(const void *page, uint32_t size, uint64_t pageno, uint64_t version)
{
	const uint64_t *w = page;
	for (uint32_t i = 0; i < size / 8; i++)
		if (w[i] != ((pageno << 32) ^ (version << 8) ^ i))
			return false;
	return true;
}

struct flags_arg {
	uint64_t pageno;
	uint32_t flags;
};

static int flags_fn(const struct bp_frame_info *info, void *arg)
{
	struct flags_arg *a = arg;
	if (info->pageno == a->pageno) {
		a->flags = info->flags;
		return 1;
	}
	return 0;
}

uint32_t bt_flags_of(struct bp_pool *pool, uint64_t pageno)
{
	struct flags_arg a = { pageno, UINT32_MAX };
	bp_frames_walk(pool, flags_fn, &a);
	return a.flags;
}

struct frame_arg {
	uint64_t pageno;
	struct bp_frame_info *out;
};

static int frame_fn(const struct bp_frame_info *info, void *arg)
{
	struct frame_arg *a = arg;
	if (info->pageno != a->pageno)
		return 0;
	*a->out = *info;
	return 1;
}

bool bt_frame_of(struct bp_pool *pool, uint64_t pageno, struct bp_frame_info *out)
{
	struct frame_arg a = { pageno, out };
	return bp_frames_walk(pool, frame_fn, &a) == 1;
}
