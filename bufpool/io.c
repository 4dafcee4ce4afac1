/* SPDX-License-Identifier: MIT */
/*
 * io.c - the I/O engines' front: the thread pool (a FIFO of requests served
 * by a few threads doing pread/pwrite) or the io_uring ring (uring.c), and
 * the completions that end a frame's LOCKED or WRITEBACK, one copy for both.
 *
 * Layer 4 (I/O): calls only uring.c, fault.c and account.c.
 *
 * Design note
 * -----------
 * The engine (bp_io_start): the thread pool, or a ring when one is asked
 * for or AUTO finds one (io_uring_queue_init fails where io_uring is
 * blocked, e.g. by a container's seccomp profile: EPERM, ENOSYS; AUTO then
 * uses the thread pool quietly).  With a ring the I/O threads stay, as
 * helpers for what a ring does not do (below).
 *
 * On the ring (submit_ring), the submitter decides the request's fault at
 * submission; a request the ring carries gets the simulated latency plus a
 * SLOW fault's delay as a timeout before its transfer (uring.c), and a
 * checksummed write is sealed into one of depth bounce buffers.  The ring's
 * reaper thread calls ring_done, which finishes a short or interrupted
 * transfer synchronously, verifies a read's checksum and completes as the
 * threads do.  Handed to the helper threads instead, with the decision
 * made (do_io then applies it as the thread pool does): a FAIL or SHORT
 * fault, a write whose LSN needs flush_log first (the callback may block;
 * it runs on an I/O thread, never the submitter's), and a checksummed
 * write that finds no free bounce buffer.
 *
 * The inline read (bp_io_read, a miss's read; bp_config.read_path): the
 * faulting thread, which holds the frame LOCKED and would sleep until the
 * page is in, reads it itself, then verifies and completes it as an
 * engine would (complete(): the same release unlock of LOCKED wakes every
 * thread that found the page in flight).  AUTO: a plain pread, as
 * WiredTiger and RocksDB do: a page in the OS page cache costs one copy,
 * and one on the device one sleep in the kernel, woken by the I/O's
 * completion itself; no hand-off to another thread and no wake-up back
 * (two context switches and a wake-up latency per miss).  CACHED: only
 * what the page cache holds, with preadv2(RWF_NOWAIT) (a plain pread on
 * tmpfs or ramfs, which refuse RWF_NOWAIT in some kernels and are memory
 * anyway); what would block (EAGAIN, or part of a larger page cached) and
 * O_DIRECT go to the engine, whose depth bounds the device reads in
 * flight.  A file system that refuses RWF_NOWAIT (EOPNOTSUPP) is
 * remembered in the file.  Never inline: ENGINE, a simulated latency (a
 * device the engine models), an injected fault or delay (decided here,
 * once, and applied by the engine as always), and readahead, which is
 * asynchronous by purpose.
 *
 * bp_io_submit queues the request embedded in the frame (one read or write
 * per frame at a time) and signals an I/O thread; the submitter then waits
 * on the frame's state bit through fwait, never on the engine.  An I/O
 * thread applies the simulated device latency and the fault injector, does
 * the transfer, and completes:
 *   read:  UPTODATE (or ERROR + io_err), then fwait_bit_unlock(LOCKED),
 *          which wakes every fwait_bit_wait waiter of (frame, LOCKED);
 *   write: on failure DIRTY again (nothing lost) and the pool's write_err;
 *          then fwait_bit_clear(WRITEBACK), which wakes every waiter of
 *          (frame, WRITEBACK).
 * The thread that set LOCKED/WRITEBACK and the one that clears it differ;
 * fwait's bit operations do not track owners.
 *
 * Checksums (BP_OPEN_CHECKSUMS): a write copies the page into its I/O
 * thread's bounce buffer and stores the trailer there, so the frame's
 * memory is never written while shared latchers read it (WRITEBACK keeps
 * only exclusive latchers out); a read verifies the trailer in the frame,
 * which is LOCKED and read by nobody else until the completion.  The page
 * number is part of the checksum, so a page written to or read from the
 * wrong place fails as surely as a torn or flipped one.  A page of zeros
 * only passes: that is a hole, or a page created and never written (what
 * a file system returns for both).
 *
 * Runs (bp_io_submit_reads, readahead's reads): reads of pages adjacent in
 * the file are one I/O, a readv into their frames (BP_RUN_MAX pages at
 * most; counted once in read_ios): an IORING_OP_READV on the ring, a
 * preadv on an I/O thread (run_io).  Each page gets its share of the
 * bytes, and a page whose share is short (past the end of the file) is
 * finished alone by transfer, as a single read would be; each is
 * verified and completed alone.  On the ring a page whose fault is not
 * plain goes alone to a helper; on a thread, a run any of whose pages
 * draws a fault is done page by page.
 *
 * The write-ahead-log rule (wal_rule): before a write, if the page's LSN
 * is above the durable LSN the pool knows, the I/O thread calls the
 * engine's flush_log and writes only once it says the log is durable that
 * far; a failed flush_log is a failed write (the page stays dirty).  Doing
 * it here, where every write passes, covers every writer at once.
 *
 * fsync is never forgotten (bp_io_fsync): a failed fsync may have dropped
 * pages the kernel had accepted from us (Linux marks them clean and reports
 * the error to one fsync of the file), and nothing we hold tells us which,
 * so from then on the pool can no longer claim durability.  Its errno is
 * kept in the file's fsync_failed for its life and returned by every later
 * fsync of it, whatever the kernel says (PostgreSQL's answer: since 2018 it
 * refuses to go on after a failed fsync).  The fsyncs are serialised under
 * fsync_lock, with the error recorded before the lock is dropped: without
 * it, two flushes could fsync at once, the kernel report the lost write-back
 * to one and 0 to the other, and the second read fsync_failed before the
 * first set it, returning 0 for pages that may be gone.
 *
 * Guards: io_engine.lock protects head/tail/stop; the condvar wakes idle
 * I/O threads (an engine queue, not a per-frame wait).  A file's
 * fsync_lock serialises its fsyncs and guards the writes of its
 * fsync_failed; bp_io_fsync walks the files under the pool's files_lock.
 */
#include <errno.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "bufpool/internal.h"
#include "util/chaos.h"
#include "util/clock.h"
#include "util/crc32c.h"
#include "util/probe.h"

static void sleep_us(uint64_t us)
{
	struct timespec ts = { (time_t)(us / 1000000u), (long)(us % 1000000u) * 1000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Transfer the page of tag (its file's descriptor, its page's offset)
 * from byte done (0: the whole page; more: the rest of a short one) up to
 * len; 0, or positive errno (EIO for a short transfer). */
static int transfer(struct bp_pool *p, enum bp_io_op op, unsigned char *buf, uint64_t tag,
		    size_t done, size_t len)
{
	int fd = bp_file_of(p, tag)->fd;
	off_t off = (off_t)(bp_tag_page(tag) << p->page_shift);
	while (done < len) {
		ssize_t n = op == BP_IO_READ
			? pread(fd, buf + done, len - done, off + (off_t)done)
			: pwrite(fd, buf + done, len - done, off + (off_t)done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (n == 0) {
			/* A read wholly past the end of the file is a page that
			 * exists but was never written (a hole: a higher page
			 * was created first): zeros, as a file system reads a
			 * hole.  Part of a page, or a write without progress,
			 * is a short transfer. */
			if (op == BP_IO_READ && done == 0 && len == p->page_size) {
				memset(buf, 0, len);
				return 0;
			}
			return EIO;
		}
		done += (size_t)n;
	}
	return 0;
}

/* The checksum of page pageno as stored in its trailer: CRC-32C of the
 * page number (8 bytes, little-endian) then the page less its trailer. */
static uint32_t page_checksum(const struct bp_pool *p, const unsigned char *page, uint64_t pageno)
{
	unsigned char no[8];
	for (unsigned i = 0; i < 8; i++)
		no[i] = (unsigned char)(pageno >> (8 * i));
	uint32_t crc = util_crc32c(0, no, sizeof(no));
	return util_crc32c(crc, page, p->page_size - BP_CHECKSUM_BYTES);
}

static unsigned char *trailer(const struct bp_pool *p, unsigned char *page)
{
	return page + p->page_size - BP_CHECKSUM_BYTES;
}

static void put_le32(unsigned char *b, uint32_t v)
{
	for (unsigned i = 0; i < 4; i++)
		b[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_le32(const unsigned char *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* The bytes a checksummed write sends: the page copied into dst (the page
 * is stable under WRITEBACK, which keeps exclusive latchers out, and may
 * be read meanwhile, so the frame itself is never written) and sealed. */
static void seal_copy(const struct bp_pool *p, unsigned char *dst, const struct bp_io_req *r)
{
	memcpy(dst, r->frame->data, p->page_size);
	put_le32(trailer(p, dst), page_checksum(p, dst, bp_tag_page(r->tag)));
}

static bool all_zero(const unsigned char *b, size_t n)
{
	/* b[0] == 0 and every byte equals the one before it. */
	return n == 0 || (b[0] == 0 && memcmp(b, b + 1, n - 1) == 0);
}

/* A page just read into the frame: 0, or EBADMSG if its trailer does not
 * match (counted).  Never a hole: the file system's zeros pass. */
static int verify(struct bp_pool *p, unsigned char *page, uint64_t pageno)
{
	uint32_t want = get_le32(trailer(p, page));
	if (want == page_checksum(p, page, pageno))
		return 0;
	if (want == 0 && all_zero(page, p->page_size))
		return 0;
	bp_count(p, BP_C_CHECKSUM_ERRORS);
	return EBADMSG;
}

/* Raise the known durable LSN to lsn (never lower it). */
static void raise_durable(struct bp_pool *p, uint64_t lsn)
{
	uint64_t d = atomic_load_explicit(&p->durable_lsn, memory_order_relaxed);
	while (d < lsn && !atomic_compare_exchange_weak_explicit(&p->durable_lsn, &d, lsn,
			memory_order_relaxed, memory_order_relaxed))
		;
}

int bp_log_durable(struct bp_pool *pool, uint64_t lsn)
{
	if (!pool)
		return -EINVAL;
	raise_durable(pool, lsn);
	return 0;
}

/* The write-ahead-log rule, before page f is written: its LSN must be
 * durable in the log.  0, or the positive errno of the failed flush_log
 * (EIO if it claims less than was asked). */
static int wal_rule(struct bp_pool *p, struct bp_frame *f)
{
	if (!p->flush_log)
		return 0;
	/* Relaxed: WRITEBACK keeps dirtiers out, and the latch handed us the
	 * dirtier's store (internal.h, struct bp_frame). */
	uint64_t lsn = atomic_load_explicit(&f->lsn, memory_order_relaxed);
	if (lsn <= atomic_load_explicit(&p->durable_lsn, memory_order_relaxed))
		return 0;
	uint64_t durable = 0;
	bp_count(p, BP_C_LOG_FLUSHES);
	UTIL_PROBE1(bufpool, log_flush_start, lsn);
	int rc = p->flush_log(p->flush_log_arg, lsn, &durable);
	UTIL_PROBE3(bufpool, log_flush_done, lsn, durable, rc);
	if (rc < 0)
		return -rc;
	if (rc > 0 || durable < lsn)
		return EIO; /* a callback that broke its contract writes nothing */
	raise_durable(p, durable);
	return 0;
}

/* A fault's delay as a request keeps it: room left for the latency the
 * ring adds to it. */
static uint32_t clamp_delay(const struct bp_pool *p, uint64_t delay)
{
	uint64_t room = UINT32_MAX - (uint64_t)p->io_latency_us;
	return (uint32_t)(delay > room ? room : delay);
}

/* r's fault, decided once whoever asks first (the submitter, the ring's
 * router or an I/O thread), and kept in r with its error and delay: the
 * fault filter's page numbers are a file's own (each file's). */
static enum bp_fault_action decide(struct bp_pool *p, struct bp_io_req *r)
{
	if (!r->decided) {
		int err = 0;
		uint64_t delay = 0;
		enum bp_fault_action a = bp_fault_check(p, r->op == BP_IO_READ ? BP_FAULT_READ
							: BP_FAULT_WRITE, bp_tag_page(r->tag),
							&err, &delay);
		r->decided = true;
		r->fa = (uint8_t)a;
		r->ferr = err;
		r->delay_us = clamp_delay(p, delay); /* the ring adds the latency to it */
	}
	return (enum bp_fault_action)r->fa;
}

static int do_io(struct bp_io_thread *th, struct bp_io_req *r)
{
	struct bp_pool *p = th->p;
	/* Before the write-ahead rule, which BP_FAULT_NO_WAL skips; already
	 * decided for a request a submitter or the ring handed over. */
	enum bp_fault_action a = decide(p, r);
	int err = r->ferr;
	uint64_t delay = r->delay_us;
	if (r->op == BP_IO_WRITE && a != BP_FA_NO_WAL) {
		int werr = wal_rule(p, r->frame);
		if (werr)
			return werr;
	}
	if (p->io_latency_us)
		sleep_us(p->io_latency_us);
	if (delay)
		sleep_us(delay);
	if (a == BP_FA_FAIL)
		return err;
	unsigned char *buf = r->frame->data;
	if (th->bounce && r->op == BP_IO_WRITE) {
		seal_copy(p, th->bounce, r);
		buf = th->bounce;
	}
	if (a == BP_FA_SHORT) {
		/* Transfer half the page, then report the short transfer. */
		transfer(p, r->op, buf, r->tag, 0, p->page_size / 2);
		return EIO;
	}
	err = transfer(p, r->op, buf, r->tag, 0, p->page_size);
	if (!err && th->bounce && r->op == BP_IO_READ)
		err = verify(p, buf, bp_tag_page(r->tag));
	return err;
}

/* Report a page write that returned (err: 0 or its positive errno) to the
 * I/O trace, before its completion is published: the bytes the file got,
 * which with checksums are the page sealed as its bounce buffer was (the
 * frame is still under WRITEBACK, so its data is what was written). */
static void trace_write(struct bp_pool *p, struct bp_io_req *r, int err)
{
	const unsigned char *data = r->frame->data;
	unsigned char *sealed = NULL;
	if (p->flags & BP_OPEN_CHECKSUMS) {
		sealed = malloc(p->page_size);
		if (sealed) {
			seal_copy(p, sealed, r);
			data = sealed;
		} else {
			err = ENOMEM; /* cannot say what was written: a failed write */
		}
	}
	bp_trace(p, &(struct bp_io_trace_event){.op = BP_IO_TRACE_WRITE, .result = -err,
		.path = bp_file_of(p, r->tag)->path,
		.offset = bp_tag_page(r->tag) << p->page_shift, .len = p->page_size,
		.data = data});
	free(sealed);
}

static void complete(struct bp_pool *p, struct bp_io_req *r, int err)
{
	struct bp_frame *f = r->frame;
	if (r->op == BP_IO_READ) {
		if (err) {
			atomic_store_explicit(&f->io_err, err, memory_order_relaxed);
			bp_count(p, BP_C_READ_ERRORS);
			atomic_fetch_or_explicit(&f->state, BP_F_ERROR, memory_order_relaxed);
		} else {
			atomic_fetch_or_explicit(&f->state, BP_F_UPTODATE, memory_order_relaxed);
		}
		CHAOS_POINT("io.c:complete:read_before_unlock");
		/* Before the unlock: after it the frame (and r) may be reused. */
		UTIL_PROBE3(bufpool, read_done, bp_tag_file(r->tag), bp_tag_page(r->tag), err);
		/* Release (fwait_bit_unlock): the page data and flags above
		 * happen before a waiter's acquire load that sees LOCKED clear. */
		fwait_bit_unlock(p->wt, &f->state, BP_LOCKED);
		return;
	}
	if (p->io_trace)
		trace_write(p, r, err);
	if (err) {
		bp_count(p, BP_C_WRITE_ERRORS);
		int zero = 0;
		atomic_compare_exchange_strong_explicit(&p->write_err, &zero, err,
				memory_order_relaxed, memory_order_relaxed);
		atomic_fetch_or_explicit(&f->state, BP_F_DIRTY, memory_order_relaxed);
	} else {
		/* Written: its changes are on disk (nobody may dirty it while
		 * WRITEBACK is set, so none is newer than the write). */
		atomic_store_explicit(&f->rec_lsn, 0, memory_order_relaxed);
	}
	CHAOS_POINT("io.c:complete:write_before_clear");
	UTIL_PROBE3(bufpool, write_done, bp_tag_file(r->tag), bp_tag_page(r->tag), err);
	/* Release (fwait_bit_clear): our read of the page and DIRTY/write_err
	 * happen before an exclusive latcher or flusher sees WRITEBACK clear. */
	fwait_bit_clear(p->wt, &f->state, BP_WRITEBACK);
}

/* A run of reads of adjacent pages on an I/O thread: one preadv when no
 * fault applies to any of its pages (each page's fault is decided once,
 * here), else each page alone as do_io does it. */
static void run_io(struct bp_io_thread *th, struct bp_io_req *head)
{
	struct bp_pool *p = th->p;
	bool plain = true;
	for (struct bp_io_req *m = head; m; m = m->run_next)
		if (decide(p, m) != BP_FA_NONE || m->delay_us)
			plain = false;
	if (!plain) {
		/* The next link is read before the completion gives the
		 * frame (and its request) back. */
		for (struct bp_io_req *m = head, *next; m; m = next) {
			next = m->run_next;
			complete(p, m, do_io(th, m));
		}
		return;
	}
	if (p->io_latency_us)
		sleep_us(p->io_latency_us); /* one I/O, one latency */
	struct iovec iov[BP_RUN_MAX];
	unsigned k = 0;
	for (struct bp_io_req *m = head; m; m = m->run_next)
		iov[k++] = (struct iovec){ m->frame->data, p->page_size };
	int fd = bp_file_of(p, head->tag)->fd;
	off_t off = (off_t)(bp_tag_page(head->tag) << p->page_shift);
	ssize_t got;
	while ((got = preadv(fd, iov, (int)k, off)) < 0 && errno == EINTR)
		;
	int rerr = got < 0 ? errno : 0;
	long ps = (long)p->page_size, i = 0;
	for (struct bp_io_req *m = head, *next; m; m = next, i++) {
		next = m->run_next;
		int err = rerr;
		if (!err) {
			/* This page's share; a short one is finished alone (a
			 * page wholly past the end: a hole, zeros). */
			long left = (long)got - i * ps;
			size_t share = left <= 0 ? 0 : left > ps ? (size_t)ps : (size_t)left;
			if (share < p->page_size)
				err = transfer(p, BP_IO_READ, m->frame->data, m->tag, share,
					       p->page_size);
		}
		if (!err && th->bounce)
			err = verify(p, m->frame->data, bp_tag_page(m->tag));
		complete(p, m, err);
	}
}

static void *io_thread(void *arg)
{
	struct bp_io_thread *th = arg;
	struct bp_pool *p = th->p;
	struct bp_io_engine *e = &p->io;
	pthread_mutex_lock(&e->lock);
	for (;;) {
		while (!e->head && !e->stop)
			pthread_cond_wait(&e->cond, &e->lock);
		struct bp_io_req *r = e->head;
		if (!r)
			break; /* stop, queue drained */
		e->head = r->next;
		if (!e->head)
			e->tail = NULL;
		pthread_mutex_unlock(&e->lock);
		if (r->run_len > 1)
			run_io(th, r);
		else
			complete(p, r, do_io(th, r));
		pthread_mutex_lock(&e->lock);
	}
	pthread_mutex_unlock(&e->lock);
	return NULL;
}

/* Queue r for the I/O threads. */
static void submit_threads(struct bp_pool *p, struct bp_io_req *r)
{
	struct bp_io_engine *e = &p->io;
	r->next = NULL;
	pthread_mutex_lock(&e->lock);
	if (e->tail)
		e->tail->next = r;
	else
		e->head = r;
	e->tail = r;
	pthread_cond_signal(&e->cond);
	pthread_mutex_unlock(&e->lock);
}

static unsigned char *bounce_get(struct bp_io_engine *e)
{
	unsigned char *b = NULL;
	pthread_mutex_lock(&e->lock);
	if (e->nbounce_free)
		b = e->bounce_free[--e->nbounce_free];
	pthread_mutex_unlock(&e->lock);
	return b;
}

static void bounce_put(struct bp_io_engine *e, unsigned char *b)
{
	pthread_mutex_lock(&e->lock);
	e->bounce_free[e->nbounce_free++] = b;
	pthread_mutex_unlock(&e->lock);
}

static bool is_bounce(const struct bp_io_engine *e, const struct bp_pool *p,
		      const unsigned char *b)
{
	return e->bounce_mem && b >= e->bounce_mem &&
	       b < e->bounce_mem + (size_t)e->depth * p->page_size;
}

/* The ring's completion of r (its reaper thread, holding no lock): res is
 * the bytes moved or a negative errno. */
static void ring_done(void *arg, struct bp_io_req *r, int res)
{
	struct bp_pool *p = arg;
	struct bp_io_engine *e = &p->io;
	int err = 0;
	if (res == -EAGAIN || res == -EINTR || res == -ECANCELED)
		/* Transient (or cancelled: should not happen, the reaper
		 * owns every request): do it here, synchronously. */
		err = transfer(p, r->op, r->buf, r->tag, 0, p->page_size);
	else if (res < 0)
		err = -res;
	else if ((size_t)res < p->page_size)
		/* Short: go on as pread/pwrite would (a read wholly past
		 * the end is a hole, zeros; part of a page is EIO). */
		err = transfer(p, r->op, r->buf, r->tag, (size_t)res, p->page_size);
	if (!err && r->op == BP_IO_READ && (p->flags & BP_OPEN_CHECKSUMS))
		err = verify(p, r->buf, bp_tag_page(r->tag));
	if (r->op == BP_IO_WRITE && is_bounce(e, p, r->buf))
		bounce_put(e, r->buf);
	complete(p, r, err);
}

/* Does writing f need flush_log first (the write-ahead rule)?  Relaxed
 * loads as wal_rule's. */
static bool wal_pending(struct bp_pool *p, struct bp_frame *f)
{
	return p->flush_log &&
	       atomic_load_explicit(&f->lsn, memory_order_relaxed) >
	       atomic_load_explicit(&p->durable_lsn, memory_order_relaxed);
}

/* Decide r's fault and route: true if it goes on the ring (r->buf and
 * r->delay_us set), false if it is for the helper threads. */
static bool ring_route(struct bp_pool *p, struct bp_io_req *r)
{
	enum bp_fault_action a = decide(p, r);
	r->buf = r->frame->data;
	bool helper = a == BP_FA_FAIL || a == BP_FA_SHORT ||
		      (r->op == BP_IO_WRITE && a != BP_FA_NO_WAL && wal_pending(p, r->frame));
	if (!helper && r->op == BP_IO_WRITE && (p->flags & BP_OPEN_CHECKSUMS)) {
		unsigned char *b = bounce_get(&p->io);
		if (!b) {
			helper = true;
		} else {
			seal_copy(p, b, r);
			r->buf = b;
		}
	}
	if (helper)
		return false;
	r->delay_us += p->io_latency_us;
	return true;
}

static void init_req(struct bp_io_req *r, struct bp_frame *f, enum bp_io_op op, uint64_t tag)
{
	r->next = NULL;
	r->op = op;
	r->tag = tag;
	r->frame = f;
	r->buf = NULL;
	r->delay_us = 0;
	r->decided = false;
	r->fa = 0;
	r->ferr = 0;
	r->run_next = NULL;
	r->run_len = 1;
	if (op == BP_IO_READ)
		UTIL_PROBE2(bufpool, read_start, bp_tag_file(tag), bp_tag_page(tag));
	else
		UTIL_PROBE2(bufpool, write_start, bp_tag_file(tag), bp_tag_page(tag));
}

/* Hand r (initialised, its fault perhaps decided) to the engine. */
static void submit(struct bp_pool *p, struct bp_io_req *r)
{
	bp_count(p, r->op == BP_IO_WRITE ? BP_C_WRITES : BP_C_READ_IOS);
	if (p->io.ring && ring_route(p, r))
		bp_uring_submit(p->io.ring, &r, 1);
	else
		submit_threads(p, r);
}

void bp_io_submit(struct bp_pool *p, struct bp_frame *f, enum bp_io_op op, uint64_t tag)
{
	struct bp_io_req *r = &f->io;
	init_req(r, f, op, tag);
	submit(p, r);
}

unsigned bp_io_read_mode(const struct bp_pool *p, int fd)
{
	/* A simulated latency stands for a device the engine models. */
	if (p->read_path == BP_READ_ENGINE || p->io_latency_us)
		return BP_RI_NONE;
	if (p->read_path == BP_READ_AUTO)
		return BP_RI_PLAIN;
	/* CACHED: O_DIRECT always goes to the device (RWF_NOWAIT would
	 * refuse it, nothing is cached to take); a file in memory is read
	 * plainly (tmpfs and ramfs refuse RWF_NOWAIT in some kernels). */
	if (p->flags & BP_OPEN_DIRECT)
		return BP_RI_NONE;
	struct statfs fs;
	if (fstatfs(fd, &fs) == 0 && (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC))
		return BP_RI_PLAIN;
	return BP_RI_NOWAIT;
}

/* Read page tag into buf in this thread: in mode BP_RI_PLAIN waiting for
 * the device if need be, in BP_RI_NOWAIT only from the page cache.  0, a
 * positive errno (the read's result, final), or for NOWAIT -EAGAIN (it
 * would block) or -EOPNOTSUPP (RWF_NOWAIT refused): the engine must do
 * it. */
static int read_inline(struct bp_pool *p, struct bp_file *file, unsigned mode,
		       unsigned char *buf, uint64_t tag)
{
	struct iovec iov = { buf, p->page_size };
	off_t off = (off_t)(bp_tag_page(tag) << p->page_shift);
	ssize_t n;
	while ((n = preadv2(file->fd, &iov, 1, off, mode == BP_RI_NOWAIT ? RWF_NOWAIT : 0)) < 0 &&
	       errno == EINTR)
		;
	if (n == (ssize_t)p->page_size)
		return 0;
	if (n == 0) {
		/* Wholly past the end: a hole, zeros (as transfer()). */
		memset(buf, 0, p->page_size);
		return 0;
	}
	if (n > 0) {
		/* Part of the page: the rest is past the end (transfer()
		 * says EIO as an engine would); under NOWAIT the rest may be
		 * on the device, so the engine reads it all. */
		return mode == BP_RI_PLAIN ? transfer(p, BP_IO_READ, buf, tag, (size_t)n,
						      p->page_size) : -EAGAIN;
	}
	if (errno == EAGAIN)
		return -EAGAIN;
	if (mode == BP_RI_NOWAIT && (errno == EOPNOTSUPP || errno == EINVAL || errno == ENOSYS)) {
		/* The file system (EOPNOTSUPP), the kernel (EINVAL: an
		 * unknown flag; ENOSYS: no preadv2) or an emulator does not
		 * do RWF_NOWAIT: never ask again. */
		atomic_store_explicit(&file->read_inline, BP_RI_NONE, memory_order_relaxed);
		return -EOPNOTSUPP;
	}
	return errno;
}

/* bp_io_read's body. */
static void read_page(struct bp_pool *p, struct bp_frame *f, uint64_t tag)
{
	struct bp_io_req *r = &f->io;
	init_req(r, f, BP_IO_READ, tag);
	struct bp_file *file = bp_file_of(p, tag);
	unsigned mode = atomic_load_explicit(&file->read_inline, memory_order_relaxed);
	/* The fault is decided once, here; an injected one (or a delay) is
	 * the engine's to apply, with this decision. */
	if (mode == BP_RI_NONE || decide(p, r) != BP_FA_NONE || r->delay_us) {
		submit(p, r);
		return;
	}
	uint64_t t0 = util_now_ns();
	int err = read_inline(p, file, mode, f->data, tag);
	if (err == -EAGAIN || err == -EOPNOTSUPP) {
		if (err == -EAGAIN)
			bp_count(p, BP_C_INLINE_BLOCKED);
		submit(p, r);
		return;
	}
	if (!err && (p->flags & BP_OPEN_CHECKSUMS))
		err = verify(p, f->data, bp_tag_page(tag));
	bp_account_wait(p, NULL, BP_H_INLINE_READ, util_now_ns() - t0);
	CHAOS_POINT("io.c:bp_io_read:inline_before_complete");
	complete(p, r, err);
}

void bp_io_read(struct bp_pool *p, struct bp_frame *f, uint64_t tag)
{
	/* Not a cancellation point, as fwait's waits are not (fwait.h,
	 * "Cancellation"): preadv2 is one, and a cancel acting there would
	 * unwind the caller with the frame LOCKED and never completed, every
	 * later getter of the page asleep on it for ever.  A pending cancel
	 * acts at the caller's next cancellation point. */
	int cancel_state;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
	read_page(p, f, tag);
	pthread_setcancelstate(cancel_state, NULL);
}

/* The reads of bp_io_submit_reads gathered into runs: run heads for the
 * ring, submitted 64 at a time. */
struct run_batch {
	struct bp_io_req *head, *tail; /* the run being built */
	uint64_t next;                 /* the tag that would extend it */
	bool ring;                     /* its head goes on the ring */
	struct bp_io_req *ring_heads[64];
	unsigned nring;
};

static void end_run(struct bp_pool *p, struct run_batch *b)
{
	if (!b->head)
		return;
	bp_count(p, BP_C_READ_IOS);
	if (!b->ring) {
		submit_threads(p, b->head);
	} else {
		b->ring_heads[b->nring++] = b->head;
		if (b->nring == 64) {
			bp_uring_submit(p->io.ring, b->ring_heads, b->nring);
			b->nring = 0;
		}
	}
	b->head = b->tail = NULL;
}

void bp_io_submit_reads(struct bp_pool *p, struct bp_frame *const *fs, const uint64_t *tags,
			unsigned n)
{
	struct run_batch b = { .head = NULL, .tail = NULL, .next = 0, .ring = false, .nring = 0 };
	for (unsigned i = 0; i < n; i++) {
		struct bp_io_req *r = &fs[i]->io;
		init_req(r, fs[i], BP_IO_READ, tags[i]);
		bool ring = p->io.ring && ring_route(p, r);
		if (p->io.ring && !ring) {
			/* A fault to apply or the like: alone, on a helper. */
			bp_count(p, BP_C_READ_IOS);
			submit_threads(p, r);
			continue;
		}
		/* Adjacent in the file (the tag holds the file), same delay,
		 * room in the run: one I/O with the run so far. */
		if (b.head && tags[i] == b.next && b.head->run_len < BP_RUN_MAX &&
		    r->delay_us == b.head->delay_us) {
			b.tail->run_next = r;
			b.tail = r;
			b.head->run_len++;
			b.next++;
			continue;
		}
		end_run(p, &b);
		b.head = b.tail = r;
		b.next = tags[i] + 1;
		b.ring = ring;
	}
	end_run(p, &b);
	if (b.nring)
		bp_uring_submit(p->io.ring, b.ring_heads, b.nring);
}

int bp_io_file_init(struct bp_file *file)
{
	atomic_init(&file->fsync_failed, 0);
	debug_lock_rank(&file->fsync_lock, UTIL_RANK_BP_FSYNC, "bufpool bp_file.fsync_lock");
	return pthread_mutex_init(&file->fsync_lock, NULL) ? -ENOMEM : 0;
}

void bp_io_file_destroy(struct bp_file *file)
{
	pthread_mutex_destroy(&file->fsync_lock);
}

int bp_io_fsync_file(struct bp_pool *p, struct bp_file *file)
{
	int err = 0;
	uint64_t delay = 0;
	pthread_mutex_lock(&file->fsync_lock);
	enum bp_fault_action a = bp_fault_check(p, BP_FAULT_FSYNC, 0, &err, &delay);
	if (delay)
		sleep_us(delay);
	bp_count(p, BP_C_FSYNCS);
	int inject = a == BP_FA_NONE ? bp_trace_sync_begin(p, file->path) : 0;
	if (inject)
		err = -inject;
	else if (a == BP_FA_NONE && fsync(file->fd) < 0)
		err = errno;
	else if (a == BP_FA_SHORT)
		err = EIO;
	if (a == BP_FA_NONE)
		bp_trace_sync_end(p, file->path, -err);
	if (err) {
		bp_count(p, BP_C_FSYNC_ERRORS);
		/* The first failure is the one kept (relaxed: fsync_lock
		 * orders it for the fsyncs; see the design note). */
		if (!atomic_load_explicit(&file->fsync_failed, memory_order_relaxed))
			atomic_store_explicit(&file->fsync_failed, err, memory_order_relaxed);
	}
	/* Sticky: once an fsync failed, this one's success proves nothing
	 * about the pages written before that failure. */
	int sticky = atomic_load_explicit(&file->fsync_failed, memory_order_relaxed);
	pthread_mutex_unlock(&file->fsync_lock);
	return -sticky;
}

int bp_io_fsync(struct bp_pool *p)
{
	/* Under files_lock: no file opens or closes while we go through them
	 * (a flush's fsync of every file), and each fsync is the file's own. */
	int first = 0;
	pthread_mutex_lock(&p->files_lock);
	for (uint32_t i = 0; i < BP_MAX_FILES; i++) {
		struct bp_file *file = atomic_load_explicit(&p->files[i], memory_order_acquire);
		if (!file || (file->flags & BP_OPEN_READONLY))
			continue;
		int r = bp_io_fsync_file(p, file);
		if (r && !first)
			first = r;
	}
	pthread_mutex_unlock(&p->files_lock);
	return first;
}

int bp_io_start(struct bp_pool *p, unsigned engine, unsigned depth, int *why)
{
	struct bp_io_engine *e = &p->io;
	e->head = e->tail = NULL;
	e->stop = false;
	e->nthreads = 0;
	e->ring = NULL;
	e->depth = 0;
	e->bounce_mem = NULL;
	e->bounce_free = NULL;
	e->nbounce_free = 0;
	*why = 0;
	if (pthread_mutex_init(&e->lock, NULL))
		return -ENOMEM;
	debug_lock_rank(&e->lock, UTIL_RANK_BP_IO_ENGINE, "bufpool io_engine.lock");
	if (pthread_cond_init(&e->cond, NULL)) {
		pthread_mutex_destroy(&e->lock);
		return -ENOMEM;
	}
	if (engine == BP_IO_ENGINE_THREADS)
		return 0;
	if (p->flags & BP_OPEN_CHECKSUMS) {
		e->bounce_mem = aligned_alloc(p->page_size, (size_t)depth * p->page_size);
		e->bounce_free = malloc(sizeof(*e->bounce_free) * depth);
		if (!e->bounce_mem || !e->bounce_free) {
			bp_io_stop(p);
			return -ENOMEM;
		}
		for (unsigned i = 0; i < depth; i++)
			e->bounce_free[i] = e->bounce_mem + (size_t)i * p->page_size;
		e->nbounce_free = depth;
	}
	int r = bp_uring_create(p, depth, ring_done, p, &e->ring);
	if (r < 0) {
		e->ring = NULL;
		*why = -r;
		if (engine == BP_IO_ENGINE_URING) {
			bp_io_stop(p);
			return -EOPNOTSUPP;
		}
		/* AUTO: the thread pool, quietly. */
		free(e->bounce_mem);
		free(e->bounce_free);
		e->bounce_mem = NULL;
		e->bounce_free = NULL;
		e->nbounce_free = 0;
		return 0;
	}
	e->depth = depth;
	return 0;
}

int bp_io_spawn(struct bp_pool *p, unsigned n)
{
	struct bp_io_engine *e = &p->io;
	for (unsigned i = 0; i < n; i++) {
		struct bp_io_thread *th = &e->threads[i];
		th->p = p;
		th->bounce = NULL;
		if (p->flags & BP_OPEN_CHECKSUMS) {
			/* Aligned to the page, as the frames are (O_DIRECT). */
			th->bounce = aligned_alloc(p->page_size, p->page_size);
			if (!th->bounce)
				return -ENOMEM;
		}
		int r = pthread_create(&th->tid, NULL, io_thread, th);
		if (r) {
			free(th->bounce);
			return -r;
		}
		e->nthreads++;
	}
	return 0;
}

void bp_io_stop(struct bp_pool *p)
{
	struct bp_io_engine *e = &p->io;
	/* The ring first: its last completions may not need the threads,
	 * but its reaper must be gone before anything it uses is. */
	bp_uring_destroy(e->ring);
	e->ring = NULL;
	pthread_mutex_lock(&e->lock);
	e->stop = true;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	for (unsigned i = 0; i < e->nthreads; i++) {
		pthread_join(e->threads[i].tid, NULL);
		free(e->threads[i].bounce);
	}
	e->nthreads = 0;
	free(e->bounce_mem);
	free(e->bounce_free);
	e->bounce_mem = NULL;
	e->bounce_free = NULL;
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
}
