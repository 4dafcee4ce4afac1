/* SPDX-License-Identifier: MIT */
/*
 * uring.c - the io_uring ring of the io_uring I/O engine: one ring per
 * pool, its submission queue, its depth, and the reaper thread.
 *
 * Layer 3 (ring): calls no other file of bufpool.
 *
 * Design note
 * -----------
 * This file moves bytes and knows no page: io.c (the layer above) decides
 * the fault, the delay and the buffer of each request, and gets every
 * result back through the done callback it gave bp_uring_create, which
 * the reaper calls; so the completions (LOCKED / WRITEBACK cleared through
 * fwait) stay one copy, in io.c, for both engines.
 *
 * One thread, the reaper, owns the ring: it alone prepares SQEs, submits
 * and reaps.  Submitters only append their requests to the pending list
 * under lock and ring a doorbell (an eventfd the ring polls) if nobody
 * rang it since the reaper last took the list.  Why not submit from the
 * caller's thread: io_uring ties a request it punts to a worker (a
 * buffered write, say) to the submitting task and cancels it when that
 * task exits (-ECANCELED), and a pool's callers are any threads, short
 * lived ones too; the reaper lives as long as the pool.  Nor a miss's
 * read, whose caller waits for it (tried, issue 33): io_uring completes a
 * request as task work of the task that submitted it, so a starter asleep
 * on the page's LOCKED bit is woken to post its own completion, then
 * woken again by the reaper's wake-up: more context switches and CPU per
 * read than the reaper's submission (docs/benchmarks.md, "The pool
 * smaller than the data").
 *
 * The reaper's loop: one io_uring_submit_and_wait (what it prepared, and
 * a wait for one completion), then a batch of completions; under lock it
 * takes pending requests into the slots freed (fewer than depth in
 * flight; the rest stay pending, in order), then, without the lock, calls
 * done for each finished transfer.  Many submitters' requests go in with
 * one system call, and the depth (bp_config.io_depth) is independent of
 * any thread count; a submitter never blocks on it.
 *
 * Delays (the simulated latency, a SLOW fault): a request with delay_us
 * goes in as an IORING_OP_TIMEOUT first (user_data: the request | 1); when
 * that fires the reaper prepares the transfer itself, the slot passing
 * from one to the other.  So delayed I/Os overlap as on a device, and no
 * thread sleeps for them.  The kernel reads a timeout's timespec when the
 * SQE is submitted, so ts[] is reused after each submit.
 *
 * A run (bp_io_req.run_len > 1: reads of adjacent pages, io.c) is one
 * IORING_OP_READV in one slot; its completion gives each page its share
 * of the bytes, in order, and calls done for each.
 *
 * Stop: bp_uring_destroy sets stop and rings; the reaper leaves once
 * nothing is in flight or pending.
 *
 * Guards: lock (rank 3, a leaf; under it the reaper prepares SQEs, no
 * system call) protects the pending list, kicked and stop.  The ring,
 * inflight and ts[] are the reaper's alone.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "bufpool/internal.h"

#ifdef BUFPOOL_HAVE_URING
#include <liburing.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#define URING_BATCH 64u   /* completions taken per wake; timeouts per submit */
#define URING_IOV 256u    /* iovecs of readv runs per submit */
#define UD_KICK UINT64_C(2) /* user_data of the eventfd poll (no request is 2) */

struct bp_uring {
	struct io_uring ring;
	pthread_mutex_t lock;
	unsigned depth;
	int efd;                    /* the submitters' doorbell */
	/* under lock: */
	struct bp_io_req *pend_head, *pend_tail;
	bool kicked;                /* the doorbell rang since the reaper last took the list */
	bool stop;
	/* the reaper's own: */
	unsigned inflight;          /* requests holding a slot (their timeout or transfer) */
	unsigned nts;               /* timespecs used in ts[] since the last submit */
	struct __kernel_timespec ts[URING_BATCH];
	unsigned niov;              /* iovecs used in iov[] since the last submit */
	struct iovec iov[URING_IOV];
	struct bp_pool *p;
	bp_uring_done_fn *done;
	void *arg;
	pthread_t reaper;
};

static void submit_sqes(struct bp_uring *u)
{
	while (io_uring_sq_ready(&u->ring) > 0) {
		int r = io_uring_submit(&u->ring);
		if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY)
			break; /* left queued: the next submit carries them */
	}
	u->nts = 0;
	u->niov = 0;
}

/* A free SQE: the SQ holds depth + 2 (the slots, the doorbell's poll),
 * and the reaper submits before it waits, so one is there; submitting
 * first is only a guard. */
static struct io_uring_sqe *get_sqe(struct bp_uring *u)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
	while (!sqe) {
		submit_sqes(u);
		sqe = io_uring_get_sqe(&u->ring);
	}
	return sqe;
}

/* Prepare the transfer of r (its slot already counted in flight). */
static void prep_rw(struct bp_uring *u, struct bp_io_req *r)
{
	/* A run of adjacent pages is one readv into their frames.  The
	 * kernel has read the iovecs once the SQE is submitted
	 * (IORING_FEAT_SUBMIT_STABLE, 5.5), so iov[] is reused after each
	 * submit, as ts[]. */
	if (r->run_len > 1 && u->niov + r->run_len > URING_IOV)
		submit_sqes(u);
	struct io_uring_sqe *sqe = get_sqe(u);
	struct bp_pool *p = u->p;
	int fd = bp_file_of(p, r->tag)->fd;
	uint64_t off = bp_tag_page(r->tag) << p->page_shift;
	if (r->run_len > 1) {
		struct iovec *iov = &u->iov[u->niov];
		unsigned k = 0;
		for (struct bp_io_req *m = r; m; m = m->run_next)
			iov[k++] = (struct iovec){ m->buf, p->page_size };
		u->niov += k;
		io_uring_prep_readv(sqe, fd, iov, k, off);
	} else if (r->op == BP_IO_READ) {
		io_uring_prep_read(sqe, fd, r->buf, p->page_size, off);
	} else {
		io_uring_prep_write(sqe, fd, r->buf, p->page_size, off);
	}
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)r);
}

/* Start r in a free slot: its delay first, if any. */
static void start_req(struct bp_uring *u, struct bp_io_req *r)
{
	u->inflight++;
	if (!r->delay_us) {
		prep_rw(u, r);
		return;
	}
	if (u->nts == URING_BATCH)
		submit_sqes(u); /* the kernel has read the timespecs so far */
	struct io_uring_sqe *sqe = get_sqe(u);
	struct __kernel_timespec *ts = &u->ts[u->nts++];
	ts->tv_sec = r->delay_us / 1000000u;
	ts->tv_nsec = (long long)(r->delay_us % 1000000u) * 1000;
	io_uring_prep_timeout(sqe, ts, 0, 0);
	/* Requests are 8-aligned (in the frame): bit 0 marks the delay. */
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)r | 1u);
}

static void arm_doorbell(struct bp_uring *u)
{
	struct io_uring_sqe *sqe = get_sqe(u);
	io_uring_prep_poll_add(sqe, u->efd, POLLIN);
	io_uring_sqe_set_data64(sqe, UD_KICK);
}

void bp_uring_submit(struct bp_uring *u, struct bp_io_req *const *rs, unsigned n)
{
	pthread_mutex_lock(&u->lock);
	for (unsigned i = 0; i < n; i++) {
		struct bp_io_req *r = rs[i];
		r->next = NULL;
		if (u->pend_tail)
			u->pend_tail->next = r;
		else
			u->pend_head = r;
		u->pend_tail = r;
	}
	/* One ring per batch of submitters: whoever finds the doorbell
	 * quiet rings it; the reaper silences it when it takes the list,
	 * under lock, so a request appended after that rings again. */
	bool ring = !u->kicked;
	u->kicked = true;
	pthread_mutex_unlock(&u->lock);
	if (ring) {
		/* write is a cancellation point: a cancel acting there would
		 * leave kicked set and the doorbell silent, so no later
		 * submitter would ring it and the reaper would sleep with
		 * requests pending.  A pending cancel acts at the caller's
		 * next cancellation point. */
		int cancel_state;
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
		uint64_t one = 1;
		while (write(u->efd, &one, sizeof(one)) < 0 && errno == EINTR)
			;
		pthread_setcancelstate(cancel_state, NULL);
	}
}

static void *reaper(void *arg)
{
	struct bp_uring *u = arg;
	struct { struct bp_io_req *r; int res; } done[URING_BATCH];
	arm_doorbell(u);
	for (;;) {
		/* Submit what was prepared, then wait for a completion:
		 * one system call. */
		u->nts = 0;
		struct io_uring_cqe *cqe;
		int rc = io_uring_submit_and_wait(&u->ring, 1);
		if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY)
			continue; /* nothing else is expected; try again */
		if (io_uring_peek_cqe(&u->ring, &cqe) != 0)
			continue;
		struct io_uring_cqe *cqes[URING_BATCH];
		unsigned n = io_uring_peek_batch_cqe(&u->ring, cqes, URING_BATCH);
		unsigned nd = 0;
		for (unsigned i = 0; i < n; i++) {
			uint64_t ud = io_uring_cqe_get_data64(cqes[i]);
			int res = cqes[i]->res;
			if (ud == UD_KICK) {
				uint64_t v;
				while (read(u->efd, &v, sizeof(v)) < 0 && errno == EINTR)
					;
				arm_doorbell(u);
				continue;
			}
			struct bp_io_req *r = (struct bp_io_req *)(uintptr_t)(ud & ~UINT64_C(1));
			if (ud & 1) {
				prep_rw(u, r); /* delay over: the transfer keeps its slot */
				continue;
			}
			u->inflight--;
			done[nd].r = r;
			done[nd].res = res;
			nd++;
		}
		io_uring_cq_advance(&u->ring, n);

		/* Take pending requests into the free slots.  The lock also
		 * orders each submitter's writes (the request, its bounce
		 * buffer) before our use of them, for the thread sanitizer
		 * too, which does not see the kernel in between. */
		pthread_mutex_lock(&u->lock);
		u->kicked = false;
		while (u->pend_head && u->inflight < u->depth) {
			struct bp_io_req *r = u->pend_head;
			u->pend_head = r->next;
			if (!u->pend_head)
				u->pend_tail = NULL;
			start_req(u, r);
		}
		bool quit = u->stop && !u->inflight && !u->pend_head;
		pthread_mutex_unlock(&u->lock);
		for (unsigned i = 0; i < nd; i++) {
			/* Each page of a run gets its share of the bytes (a
			 * short one: done finishes it).  The next link is
			 * read before done, which gives the frame back. */
			int res = done[i].res;
			long ps = (long)u->p->page_size, k = 0;
			for (struct bp_io_req *r = done[i].r, *next; r; r = next, k++) {
				next = r->run_next;
				long left = res < 0 ? res : (long)res - k * ps;
				int share = res < 0 ? res : left <= 0 ? 0 : left > ps ? (int)ps : (int)left;
				u->done(u->arg, r, share);
			}
		}
		if (quit)
			break;
	}
	return NULL;
}

int bp_uring_create(struct bp_pool *p, unsigned depth, bp_uring_done_fn *done, void *arg,
		    struct bp_uring **out)
{
	struct bp_uring *u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->p = p;
	u->depth = depth;
	u->done = done;
	u->arg = arg;
	u->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (u->efd < 0) {
		int r = -errno;
		free(u);
		return r;
	}
	/* depth requests plus the doorbell's poll (and one spare); the CQ
	 * (twice the SQ) never overflows, as at most depth + 1 are ever
	 * outstanding. */
	int r = io_uring_queue_init(depth + 2, &u->ring, 0);
	if (r < 0) {
		close(u->efd);
		free(u);
		return r;
	}
	if (pthread_mutex_init(&u->lock, NULL)) {
		io_uring_queue_exit(&u->ring);
		close(u->efd);
		free(u);
		return -ENOMEM;
	}
	debug_lock_rank(&u->lock, UTIL_RANK_BP_URING, "bufpool bp_uring.lock");
	r = pthread_create(&u->reaper, NULL, reaper, u);
	if (r) {
		pthread_mutex_destroy(&u->lock);
		io_uring_queue_exit(&u->ring);
		close(u->efd);
		free(u);
		return -r;
	}
	*out = u;
	return 0;
}

void bp_uring_destroy(struct bp_uring *u)
{
	if (!u)
		return;
	pthread_mutex_lock(&u->lock);
	u->stop = true;
	u->kicked = true;
	pthread_mutex_unlock(&u->lock);
	uint64_t one = 1;
	while (write(u->efd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
	pthread_join(u->reaper, NULL);
	pthread_mutex_destroy(&u->lock);
	io_uring_queue_exit(&u->ring);
	close(u->efd);
	free(u);
}

#else /* !BUFPOOL_HAVE_URING: a build without liburing has no ring */

int bp_uring_create(struct bp_pool *p, unsigned depth, bp_uring_done_fn *done, void *arg,
		    struct bp_uring **out)
{
	(void)p;
	(void)depth;
	(void)done;
	(void)arg;
	(void)out;
	return -EOPNOTSUPP;
}

void bp_uring_submit(struct bp_uring *u, struct bp_io_req *const *rs, unsigned n)
{
	(void)u;
	(void)rs;
	(void)n;
}

void bp_uring_destroy(struct bp_uring *u)
{
	(void)u;
}

#endif
