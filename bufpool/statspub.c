/* SPDX-License-Identifier: MIT */
/*
 * statspub.c - bp_stats_publish: a pool's statistics, kept up to date in a
 * shared-memory file (statsfile.h) for bpstat in another process.
 *
 * Layer 10 (stats publisher): calls only stats.c.
 *
 * Design note
 * -----------
 * Off by default: nothing here runs until bp_stats_publish.  It creates the
 * file under a temporary name, maps it, writes a first complete update,
 * then link()s it to its name: a reader never finds a half-made file, and
 * link, unlike rename, fails when the name is taken (-EEXIST) instead of
 * stealing another publisher's file.  Then one thread of the pool's own
 * (this file's, not the background writer, which BP_OPEN_NO_BGWRITER
 * removes and bp_close stops early) wakes every BP_STATS_PUBLISH_PERIOD_MS
 * on a CLOCK_MONOTONIC condvar (absolute deadlines: no drift) and
 * publishes one update:
 *   - each frame's wait_ns growth since its previous look, credited to the
 *     page the frame holds now, the longest BP_SF_TOP_N into this period's
 *     window (statsfile.h says why a page, not a frame, and where the
 *     credit can be off);
 *   - bp_stats_get's counters, since_ns from bp_stats_reset's time
 *     (pool.stats_reset_ns), the embedder's ops (pool.pub_ops);
 *   - the heartbeat: mono_ns and updates.
 * The update is built in a private image (snap) and copied into the
 * mapping under the seqlock (bp_sf_store); this thread is the mapping's
 * only writer, readers map it read-only.  The frame fields are read
 * relaxed, as bp_frames_walk does: a report, ordered with nothing.
 *
 * Who owns what: pool.statspub is installed with a CAS and taken with an
 * exchange (acq_rel: the taker sees the publisher the installer built),
 * so of two racing bp_stats_publish calls one gets -EBUSY, and of two
 * racing unpublishes one gets -ENOENT; whoever takes it joins the thread
 * and frees it.  pool_destroy (bp_close, bp_discard) ends it through the
 * hook pool.statspub_stop, which this file sets: pool.c sits below and
 * never calls up.  lock guards stop; the condvar wakes the thread for it.
 * The library prints nothing: every failure is a return value.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bufpool/internal.h"
#include "bufpool/statsfile.h"
#include "util/clock.h"

struct bp_statspub {
	struct bp_pool *pool;
	struct bp_statsfile *map;   /* the file, shared, read-write */
	uint64_t *last_wait;        /* per frame: wait_ns at the previous look */
	pthread_t thread;
	pthread_mutex_t lock;       /* guards stop */
	pthread_cond_t cond;        /* CLOCK_MONOTONIC: paces the loop */
	bool stop;
	char path[256];
	struct bp_statsfile snap;   /* the next update, private (the thread's) */
};

/* Credit ns of waiting to (file, page) in w, whose top[] stays sorted by
 * wait, longest first.  A page can appear twice in one period (evicted
 * and read into another frame): its entries merge. */
static void window_add(struct bp_sf_window *w, uint32_t file, uint64_t page, uint64_t ns)
{
	uint32_t i;
	for (i = 0; i < w->n; i++)
		if (w->top[i].pageno == page && w->top[i].file == file)
			break;
	if (i < w->n) {
		ns += w->top[i].wait_ns;
	} else if (w->n < BP_SF_TOP_N) {
		i = w->n++;
	} else {
		if (ns <= w->top[BP_SF_TOP_N - 1].wait_ns)
			return;
		i = BP_SF_TOP_N - 1; /* replaces the shortest */
	}
	while (i > 0 && w->top[i - 1].wait_ns < ns) {
		w->top[i] = w->top[i - 1];
		i--;
	}
	w->top[i] = (struct bp_sf_page){.pageno = page, .wait_ns = ns, .file = file};
}

/* Build the next update in snap and publish it. */
static void update(struct bp_statspub *sp)
{
	struct bp_pool *p = sp->pool;
	struct bp_statsfile *s = &sp->snap;
	uint64_t no = s->window + 1;
	struct bp_sf_window *w = &s->windows[no % BP_SF_WINDOWS];

	*w = (struct bp_sf_window){.no = no};
	for (uint32_t i = 0; i < p->nframes; i++) {
		struct bp_frame *f = &p->frames[i];
		uint64_t ns = atomic_load_explicit(&f->wait_ns, memory_order_relaxed);
		/* lower than last time: bp_stats_reset zeroed it since */
		uint64_t d = ns >= sp->last_wait[i] ? ns - sp->last_wait[i] : ns;
		sp->last_wait[i] = ns;
		uint64_t tag = atomic_load_explicit(&f->tag, memory_order_relaxed);
		if (d && tag != BP_NO_PAGE)
			window_add(w, bp_tag_file(tag), bp_tag_page(tag), d);
	}
	bp_stats_init(&s->stats);
	bp_stats_get(p, &s->stats);
	uint64_t now = util_now_ns();
	uint64_t reset = atomic_load_explicit(&p->stats_reset_ns, memory_order_relaxed);
	w->end_ns = now;
	s->window = no;
	s->since_ns = reset > s->start_ns ? reset : s->start_ns;
	s->ops = atomic_load_explicit(&p->pub_ops, memory_order_relaxed);
	s->mono_ns = now;
	s->updates++;
	bp_sf_store(sp->map, s);
}

static void *publisher_thread(void *arg)
{
	struct bp_statspub *sp = arg;
	uint64_t period = sp->snap.period_ns, next = util_now_ns();

	pthread_mutex_lock(&sp->lock);
	while (!sp->stop) {
		next += period;
		struct timespec ts = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
		while (!sp->stop && pthread_cond_timedwait(&sp->cond, &sp->lock, &ts) != ETIMEDOUT)
			;
		if (sp->stop)
			break;
		pthread_mutex_unlock(&sp->lock);
		update(sp);
		/* Fell a period behind (the machine was busy): start afresh
		 * rather than publish a burst of catch-up updates. */
		uint64_t now = util_now_ns();
		if (now > next + period)
			next = now;
		pthread_mutex_lock(&sp->lock);
	}
	pthread_mutex_unlock(&sp->lock);
	return NULL;
}

/* Stop the thread (if started), remove the file, free. */
static void publisher_free(struct bp_statspub *sp, bool started)
{
	if (sp->map) {
		unlink(sp->path); /* first: bpstat sees the end, not a stale file */
		if (started) {
			pthread_mutex_lock(&sp->lock);
			sp->stop = true;
			pthread_cond_signal(&sp->cond);
			pthread_mutex_unlock(&sp->lock);
			pthread_join(sp->thread, NULL);
		}
		munmap(sp->map, sizeof(*sp->map));
	}
	pthread_cond_destroy(&sp->cond);
	pthread_mutex_destroy(&sp->lock);
	free(sp->last_wait);
	free(sp);
}

/* Create the file at sp->path with a first update in it: 0 or -errno. */
static int create_file(struct bp_statspub *sp)
{
	char tmp[sizeof(sp->path) + 32];
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", sp->path, (long)getpid());
	int rc = 0, fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, sizeof(struct bp_statsfile)) != 0)
		rc = -errno;
	if (rc == 0) {
		void *m = mmap(NULL, sizeof(struct bp_statsfile), PROT_READ | PROT_WRITE,
			       MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			rc = -errno;
		else
			sp->map = m;
	}
	close(fd);
	if (rc == 0) {
		update(sp); /* readers find a complete file */
		if (link(tmp, sp->path) != 0) {
			rc = -errno;
			munmap(sp->map, sizeof(*sp->map));
			sp->map = NULL;
		}
	}
	unlink(tmp);
	return rc;
}

static void stop_hook(struct bp_pool *p)
{
	bp_stats_unpublish(p);
}

int bp_stats_publish_file(struct bp_pool *pool, const char *name, const char *path)
{
	if (!pool || !name || !*name || strlen(name) > BP_SF_NAME_MAX || !path || !*path)
		return -EINVAL;
	if (atomic_load_explicit(&pool->statspub, memory_order_relaxed))
		return -EBUSY; /* the early answer; the CAS below decides */
	struct bp_statspub *sp = calloc(1, sizeof(*sp));
	if (!sp)
		return -ENOMEM;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	int rc = pthread_cond_init(&sp->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (rc || pthread_mutex_init(&sp->lock, NULL)) {
		if (!rc)
			pthread_cond_destroy(&sp->cond);
		free(sp);
		return -ENOMEM;
	}
	debug_lock_rank(&sp->lock, UTIL_RANK_BP_STATSPUB, "bufpool statspub.lock");
	sp->pool = pool;
	sp->last_wait = malloc(sizeof(uint64_t) * pool->nframes);
	if ((size_t)snprintf(sp->path, sizeof(sp->path), "%s", path) >= sizeof(sp->path))
		rc = -ENAMETOOLONG;
	else if (!sp->last_wait)
		rc = -ENOMEM;
	if (rc) {
		publisher_free(sp, false);
		return rc;
	}
	/* The first window counts waits from now on. */
	for (uint32_t i = 0; i < pool->nframes; i++)
		sp->last_wait[i] = atomic_load_explicit(&pool->frames[i].wait_ns,
							memory_order_relaxed);
	struct bp_statsfile *s = &sp->snap;
	s->head = (struct bp_sf_head){.magic = BP_SF_MAGIC, .layout = BP_SF_LAYOUT,
		.size = sizeof(*s), .pid = (int32_t)getpid()};
	s->period_ns = (uint64_t)BP_STATS_PUBLISH_PERIOD_MS * 1000000u;
	s->start_ns = util_now_ns();
	snprintf(s->name, sizeof(s->name), "%s", name);
	if ((rc = create_file(sp)) != 0) {
		publisher_free(sp, false);
		return rc;
	}
	if ((rc = pthread_create(&sp->thread, NULL, publisher_thread, sp)) != 0) {
		publisher_free(sp, false);
		return -rc;
	}
	/* Set before the install, read by pool_destroy, which races no call. */
	pool->statspub_stop = stop_hook;
	struct bp_statspub *none = NULL;
	/* acq_rel: the release publishes sp's initialisation to whoever
	 * takes it out (bp_stats_unpublish's exchange, pool_destroy's hook),
	 * the acquire pairs with an earlier unpublish's release of the slot. */
	if (!atomic_compare_exchange_strong_explicit(&pool->statspub, &none, sp,
						     memory_order_acq_rel, memory_order_relaxed)) {
		publisher_free(sp, true); /* another call won the race */
		return -EBUSY;
	}
	return 0;
}

int bp_stats_publish(struct bp_pool *pool, const char *name)
{
	char path[256];
	if (!pool || !name || !*name || strlen(name) > BP_SF_NAME_MAX)
		return -EINVAL;
	int n = snprintf(path, sizeof(path), BP_SF_DIR "/" BP_SF_PREFIX "%ld.", (long)getpid());
	/* the name as a file name: no '/', nothing a shell must quote */
	for (const char *c = name; *c; c++)
		path[n++] = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			    (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' || *c == '-'
			    ? *c : '_';
	path[n] = '\0';
	return bp_stats_publish_file(pool, name, path);
}

int bp_stats_unpublish(struct bp_pool *pool)
{
	if (!pool)
		return -EINVAL;
	/* acq_rel: the acquire pairs with bp_stats_publish's release of sp
	 * (its fields are set before it is installed); the release orders our
	 * earlier calls before a later publish that reuses the slot. */
	struct bp_statspub *sp = atomic_exchange_explicit(&pool->statspub, NULL,
							  memory_order_acq_rel);
	if (!sp)
		return -ENOENT;
	publisher_free(sp, true);
	return 0;
}

int bp_stats_publish_ops(struct bp_pool *pool, uint64_t ops)
{
	if (!pool)
		return -EINVAL;
	atomic_store_explicit(&pool->pub_ops, ops, memory_order_relaxed);
	return 0;
}
