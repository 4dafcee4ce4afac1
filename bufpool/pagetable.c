/*
 * pagetable.c - the page number -> frame mapping.
 *
 * Layer 3 (page table): calls no other file of bufpool.
 *
 * Design note
 * -----------
 * A chained hash table whose buckets are split over npart partitions (bucket
 * b belongs to partition b & (npart - 1)), each with its own rwlock, as
 * PostgreSQL's buffer mapping partitions.  Chains link frames through
 * frame.hash_next.  A hit takes one partition's read lock (no system call
 * when uncontended), finds the frame and pins it before unlocking, so an
 * evictor, which needs that partition's write lock and a zero pin count,
 * can never take a frame between lookup and pin.
 *
 * Guards: heads[b] and hash_next of chained frames by the partition lock;
 * frame.pageno is written only under the write lock of the page's partition
 * (or while the frame is claimed and unmapped), read relaxed by evict.c.
 */
#include <errno.h>

#include "bufpool/internal.h"

static inline struct bp_frame *frame_at(struct bp_pool *p, uint32_t idx)
{
	return idx == BP_NONE_IDX ? NULL : &p->frames[idx];
}

/* Pin f found through the table (the partition lock keeps it mapped): one
 * fetch_add on the hit path, and one fetch_or the first time after the
 * clock cleared REFERENCED.  Acquire pairs with the release in the read
 * completion's fwait_bit_unlock, so a pinner that then sees UPTODATE also
 * sees the page data.  At the pin limit the add is undone and -EAGAIN
 * returned.  The add itself cannot carry into bit 31 (fwait's waiters
 * bit): BP_PIN_MAX leaves 2^22 values of headroom in the field, and each
 * thread holds at most one pin past BP_PIN_MAX at a time (this add before
 * its undo, or a write-back pin, which bp_pin_if_dirty bounds by CAS), while a
 * Linux process cannot have 2^22 threads (PID_MAX_LIMIT). */
static int pin_found(struct bp_frame *f)
{
	uint32_t old = atomic_fetch_add_explicit(&f->state, BP_PIN_ONE, memory_order_acquire);
	if (bp_pins(old) >= BP_PIN_MAX) {
		/* Relaxed: nothing was done under this pin; the count stays
		 * far from zero, so no unpin wake is due. */
		atomic_fetch_sub_explicit(&f->state, BP_PIN_ONE, memory_order_relaxed);
		return -EAGAIN;
	}
	if (!(old & BP_F_REFERENCED))
		atomic_fetch_or_explicit(&f->state, BP_F_REFERENCED, memory_order_relaxed);
	return 0;
}

static struct bp_frame *chain_find(struct bp_pool *p, uint64_t b, uint64_t pageno)
{
	struct bp_frame *f = frame_at(p, p->heads[b]);
	while (f) {
		if (atomic_load_explicit(&f->pageno, memory_order_relaxed) == pageno)
			return f;
		f = frame_at(p, f->hash_next);
	}
	return NULL;
}

int bp_pt_lookup_pin(struct bp_pool *p, uint64_t pageno, struct bp_frame **out)
{
	uint64_t b = bp_hash_bucket(p, pageno);
	struct bp_partition *part = &p->parts[b & (p->npart - 1)];
	pthread_rwlock_rdlock(&part->lock);
	struct bp_frame *f = chain_find(p, b, pageno);
	int r = f ? pin_found(f) : -ENOENT;
	pthread_rwlock_unlock(&part->lock);
	if (r == 0)
		*out = f;
	return r;
}

bool bp_pt_contains(struct bp_pool *p, uint64_t pageno)
{
	uint64_t b = bp_hash_bucket(p, pageno);
	struct bp_partition *part = &p->parts[b & (p->npart - 1)];
	pthread_rwlock_rdlock(&part->lock);
	bool found = chain_find(p, b, pageno) != NULL;
	pthread_rwlock_unlock(&part->lock);
	return found;
}

int bp_pt_insert_or_pin(struct bp_pool *p, struct bp_frame *f, uint64_t pageno,
			struct bp_frame **found)
{
	uint64_t b = bp_hash_bucket(p, pageno);
	struct bp_partition *part = &p->parts[b & (p->npart - 1)];
	pthread_rwlock_wrlock(&part->lock);
	struct bp_frame *g = chain_find(p, b, pageno);
	int r = 0;
	if (g) {
		r = pin_found(g);
		if (r == 0) {
			*found = g;
			r = 1;
		}
	} else {
		atomic_store_explicit(&f->pageno, pageno, memory_order_relaxed);
		/* A new page: no LSN yet (the frame was clean to be taken). */
		atomic_store_explicit(&f->lsn, 0, memory_order_relaxed);
		atomic_store_explicit(&f->rec_lsn, 0, memory_order_relaxed);
		f->hash_next = p->heads[b];
		p->heads[b] = f->index;
	}
	pthread_rwlock_unlock(&part->lock);
	return r;
}

void bp_pt_remove_locked(struct bp_pool *p, struct bp_frame *f, uint64_t pageno)
{
	uint64_t b = bp_hash_bucket(p, pageno);
	uint32_t *link = &p->heads[b];
	while (*link != BP_NONE_IDX) {
		if (*link == f->index) {
			*link = f->hash_next;
			f->hash_next = BP_NONE_IDX;
			return;
		}
		link = &p->frames[*link].hash_next;
	}
}
