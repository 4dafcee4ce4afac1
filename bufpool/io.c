/*
 * io.c - the I/O engine: a FIFO of requests served by a few threads doing
 * pread/pwrite, and the completions that end a frame's LOCKED or WRITEBACK.
 *
 * Layer 4 (I/O): calls only fault.c and account.c.
 *
 * Design note
 * -----------
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
 * fsync is never forgotten (bp_io_fsync): a failed fsync may have dropped
 * pages the kernel had accepted from us (Linux marks them clean and reports
 * the error to one fsync of the file), and nothing we hold tells us which,
 * so from then on the pool can no longer claim durability.  Its errno is
 * kept in pool.fsync_failed for the pool's life and returned by every later
 * fsync, whatever the kernel says (PostgreSQL's answer: since 2018 it
 * refuses to go on after a failed fsync).  The fsyncs are serialised under
 * fsync_lock, with the error recorded before the lock is dropped: without
 * it, two flushes could fsync at once, the kernel report the lost write-back
 * to one and 0 to the other, and the second read fsync_failed before the
 * first set it, returning 0 for pages that may be gone.
 *
 * Guards: io_engine.lock protects head/tail/stop; the condvar wakes idle
 * I/O threads (an engine queue, not a per-frame wait).  fsync_lock
 * serialises bp_io_fsync and guards the writes of fsync_failed.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bufpool/internal.h"

static void sleep_us(uint64_t us)
{
	struct timespec ts = { (time_t)(us / 1000000u), (long)(us % 1000000u) * 1000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Transfer the whole page; 0, or positive errno (EIO for a short transfer). */
static int transfer(struct bp_pool *p, enum bp_io_op op, unsigned char *buf, uint64_t pageno,
		    size_t len)
{
	off_t off = (off_t)(pageno << p->page_shift);
	size_t done = 0;
	while (done < len) {
		ssize_t n = op == BP_IO_READ
			? pread(p->fd, buf + done, len - done, off + (off_t)done)
			: pwrite(p->fd, buf + done, len - done, off + (off_t)done);
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

static int do_io(struct bp_pool *p, struct bp_io_req *r)
{
	if (p->io_latency_us)
		sleep_us(p->io_latency_us);
	int err = 0;
	uint64_t delay = 0;
	enum bp_fault_action a = bp_fault_check(p, r->op == BP_IO_READ ? BP_FAULT_READ : BP_FAULT_WRITE,
						r->pageno, &err, &delay);
	if (delay)
		sleep_us(delay);
	if (a == BP_FA_FAIL)
		return err;
	if (a == BP_FA_SHORT) {
		/* Transfer half the page, then report the short transfer. */
		transfer(p, r->op, r->frame->data, r->pageno, p->page_size / 2);
		return EIO;
	}
	return transfer(p, r->op, r->frame->data, r->pageno, p->page_size);
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
		/* Release (fwait_bit_unlock): the page data and flags above
		 * happen before a waiter's acquire load that sees LOCKED clear. */
		fwait_bit_unlock(p->wt, &f->state, BP_LOCKED);
		return;
	}
	if (err) {
		bp_count(p, BP_C_WRITE_ERRORS);
		int zero = 0;
		atomic_compare_exchange_strong_explicit(&p->write_err, &zero, err,
				memory_order_relaxed, memory_order_relaxed);
		atomic_fetch_or_explicit(&f->state, BP_F_DIRTY, memory_order_relaxed);
	}
	/* Release (fwait_bit_clear): our read of the page and DIRTY/write_err
	 * happen before an exclusive latcher or flusher sees WRITEBACK clear. */
	fwait_bit_clear(p->wt, &f->state, BP_WRITEBACK);
}

static void *io_thread(void *arg)
{
	struct bp_pool *p = arg;
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
		complete(p, r, do_io(p, r));
		pthread_mutex_lock(&e->lock);
	}
	pthread_mutex_unlock(&e->lock);
	return NULL;
}

void bp_io_submit(struct bp_pool *p, struct bp_frame *f, enum bp_io_op op, uint64_t pageno)
{
	struct bp_io_engine *e = &p->io;
	struct bp_io_req *r = &f->io;
	r->next = NULL;
	r->op = op;
	r->pageno = pageno;
	r->frame = f;
	if (op == BP_IO_WRITE)
		bp_count(p, BP_C_WRITES);
	pthread_mutex_lock(&e->lock);
	if (e->tail)
		e->tail->next = r;
	else
		e->head = r;
	e->tail = r;
	pthread_cond_signal(&e->cond);
	pthread_mutex_unlock(&e->lock);
}

int bp_io_fsync(struct bp_pool *p)
{
	int err = 0;
	uint64_t delay = 0;
	pthread_mutex_lock(&p->fsync_lock);
	enum bp_fault_action a = bp_fault_check(p, BP_FAULT_FSYNC, 0, &err, &delay);
	if (delay)
		sleep_us(delay);
	bp_count(p, BP_C_FSYNCS);
	if (a == BP_FA_NONE && fsync(p->fd) < 0)
		err = errno;
	else if (a == BP_FA_SHORT)
		err = EIO;
	if (err) {
		bp_count(p, BP_C_FSYNC_ERRORS);
		/* The first failure is the one kept (relaxed: fsync_lock
		 * orders it for the fsyncs; see the design note). */
		if (!atomic_load_explicit(&p->fsync_failed, memory_order_relaxed))
			atomic_store_explicit(&p->fsync_failed, err, memory_order_relaxed);
	}
	/* Sticky: once an fsync failed, this one's success proves nothing
	 * about the pages written before that failure. */
	int sticky = atomic_load_explicit(&p->fsync_failed, memory_order_relaxed);
	pthread_mutex_unlock(&p->fsync_lock);
	return -sticky;
}

int bp_io_start(struct bp_pool *p)
{
	struct bp_io_engine *e = &p->io;
	e->head = e->tail = NULL;
	e->stop = false;
	e->nthreads = 0;
	if (pthread_mutex_init(&e->lock, NULL))
		return -ENOMEM;
	if (pthread_cond_init(&e->cond, NULL)) {
		pthread_mutex_destroy(&e->lock);
		return -ENOMEM;
	}
	if (pthread_mutex_init(&p->fsync_lock, NULL)) {
		pthread_cond_destroy(&e->cond);
		pthread_mutex_destroy(&e->lock);
		return -ENOMEM;
	}
	atomic_init(&p->fsync_failed, 0);
	return 0;
}

int bp_io_spawn(struct bp_pool *p, unsigned n)
{
	struct bp_io_engine *e = &p->io;
	for (unsigned i = 0; i < n; i++) {
		int r = pthread_create(&e->threads[i], NULL, io_thread, p);
		if (r)
			return -r;
		e->nthreads++;
	}
	return 0;
}

void bp_io_stop(struct bp_pool *p)
{
	struct bp_io_engine *e = &p->io;
	pthread_mutex_lock(&e->lock);
	e->stop = true;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	for (unsigned i = 0; i < e->nthreads; i++)
		pthread_join(e->threads[i], NULL);
	e->nthreads = 0;
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
	pthread_mutex_destroy(&p->fsync_lock);
}
