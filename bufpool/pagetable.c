/* SPDX-License-Identifier: MIT */
/*
 * pagetable.c - the page number -> frame mapping.
 *
 * Layer 3 (page table): calls only frame.c.
 *
 * Design note
 * -----------
 * A chained hash table whose buckets are split over npart partitions (bucket
 * b belongs to partition b & (npart - 1)), each with its own rwlock, as
 * PostgreSQL's buffer mapping partitions.  Chains link frames through
 * frame.hash_next.
 *
 * An optimistic reader (optread.c) walks the chain the same way without
 * pinning what it finds (bp_pt_find): the frame is only a candidate, which
 * it checks against its version.
 *
 * The page map.  Each file also has a dense map from page number to frame
 * (vmcache's per-page state array, reduced to a hint): a directory of
 * BP_PMAP_DIR chunks of BP_PMAP_CHUNK 32-bit entries, frame index + 1 or 0
 * for none, a chunk allocated (zeroed) the first time a page of its range
 * is inserted and freed with the file.  The lock-free lookups (the hit,
 * the optimistic read) try it before the chain: a page number indexes it
 * directly, and it is 4 bytes a page of the file where the bucket heads
 * are hashed over the whole pool, so it stays in the CPU's cache where the
 * heads do not (the heads' load was 42 % of the chain walk's cost in the
 * store's lookups: docs/benchmarks.md).  It is only a hint: an entry is
 * written under the same partition write lock as the chain (set with the
 * insert, cleared with the removal), and a lookup checks the frame's tag
 * as it checks a frame found on a chain; an empty entry (no chunk for it,
 * a page past the map's range, a page inserted when its chunk could not
 * be allocated) sends it to the chain.  The lookups also prefetch the
 * page of the frame they find, from the frame's index alone (the page's
 * address does not need the frame's cache line), so the page's cache miss
 * and the frame's run side by side instead of one after the other.
 *
 * Home frames.  Every page has a home frame computed from its tag alone
 * (bp_home: page n of file 0 is frame n while n < nframes), and a claim
 * for a page takes its home first if that frame is free (evict.c; the
 * creator of a new page guesses its number).  So while the data fits in
 * the pool, nearly every page sits at home, and a lookup finds it with
 * no load at all before the page's address is known: the page and the
 * home frame's line are fetched side by side, as vmcache computes a
 * page's address from its number.  The lookups check the home frame's
 * tag first and go on to the map (then the chain) when it holds another
 * page.  Like the map, the home is only a candidate, checked as any
 * frame found without the lock: find_fast's relaxed loads of the home's
 * tag, the map's entry and the chain only choose a frame (frames are never
 * freed, so any index is a frame), and all that is trusted comes after it,
 * from the hit's pin above or the optimistic begin's acquire loads
 * (optread.c).  The one publication on this path is a map chunk's zeroes
 * (bp_pt_map_entry: release CAS, acquire load).  The claim of a free home
 * (evict.c try_take_free) is an acquire CAS paired with bp_free_claimed's
 * release, as any claim of a free frame.  (Before: the map's entry had
 * to come before either fetch could start, and the store's lookups ran
 * at 0.69-0.71x the plain-memory floor, docs/benchmarks.md.)
 *
 * A hit takes no lock (lookup_pin_fast), as Linux's page cache finds a
 * folio under RCU and takes a reference speculatively: walk the chain,
 * pin the frame found with one fetch_add, then keep the pin only if
 *   - the state the fetch_add replaced had no LOCKED: every take of a
 *     mapped frame (evict.c: try_take) is one CAS from zero pins to
 *     LOCKED plus its own pin, and both are RMWs of the one state word,
 *     so its modification order alone decides (no fence, no TSO): if our
 *     add comes first the take's CAS fails (it reads our pin), if the
 *     take comes first our add reads its LOCKED or a later value; a
 *     frame LOCKED for its read is left to the locked path too, which
 *     waits for it;
 *   - the frame still holds our page after the pin: a later value without
 *     LOCKED was made by a release RMW that cleared it (the read's
 *     completion, the creator's unlock, bp_free_claimed: fwait_bit_unlock)
 *     or by an RMW after that one, and every change of the state word is
 *     an RMW (only bp_open initialises it), so our acquire fetch_add reads
 *     from that release's release sequence and synchronises with it.  The
 *     new tag (or BP_NO_PAGE) was stored before that release, in the
 *     claimer's thread or one that handed the frame on to the releaser
 *     through a lock or a release, so it happens before our tag load,
 *     which therefore reads it or a later tag: a remap is always seen.
 * This is the argument in the C11 model (ARM included); no fence is
 * needed beyond the acquire on the pin.
 * Anything else (no match, a chain changing under us, the pin limit) drops
 * the pin and asks the locked path, which is the old protocol: the
 * partition's read lock, the walk and the pin under it, so an evictor,
 * which needs that partition's write lock and a zero pin count, can never
 * take a frame between lookup and pin.  Frames are never freed, so an
 * unlocked walk only ever reads frames; a walk that another chain's
 * changes send astray ends at BP_NONE_IDX or after nframes steps.
 *
 * Guards: heads[b], hash_next of chained frames and the page map's entry
 * of a mapped page are written under the partition's write lock and read
 * relaxed by the unlocked walk and lookups; a page map chunk pointer is
 * set once (CAS, release; loaded with acquire);
 * frame.tag is written only under the write lock of the page's partition
 * (or while the frame is claimed and unmapped), read relaxed by evict.c and
 * the unlocked walk.
 */
#include <errno.h>
#include <stdlib.h>

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

/* The chain walk; under the partition lock it is exact, without it at
 * most nframes steps (relaxed loads: the fast path checks what it finds). */
static struct bp_frame *chain_find(struct bp_pool *p, uint64_t b, uint64_t tag)
{
	struct bp_frame *f = frame_at(p, atomic_load_explicit(&p->heads[b], memory_order_relaxed));
	for (uint32_t steps = 0; f && steps <= p->nframes; steps++) {
		if (atomic_load_explicit(&f->tag, memory_order_relaxed) == tag)
			return f;
		f = frame_at(p, atomic_load_explicit(&f->hash_next, memory_order_relaxed));
	}
	return NULL;
}

/* ---- The page map ---- */

int bp_pt_file_init(struct bp_file *file)
{
	file->pmap = calloc(BP_PMAP_DIR, sizeof(*file->pmap));
	return file->pmap ? 0 : -ENOMEM;
}

void bp_pt_file_fini(struct bp_file *file)
{
	if (!file->pmap)
		return;
	for (unsigned i = 0; i < BP_PMAP_DIR; i++)
		free(atomic_load_explicit(&file->pmap[i], memory_order_relaxed));
	free(file->pmap);
	file->pmap = NULL;
}

_Atomic uint32_t *bp_pt_map_entry(struct bp_file *file, uint64_t page, bool create)
{
	uint64_t c = page >> BP_PMAP_CHUNK_SHIFT;
	if (!file || !file->pmap || c >= BP_PMAP_DIR)
		return NULL;
	/* Acquire: pairs with the release CAS below, so the chunk's zeroes
	 * are seen before any entry is read. */
	_Atomic uint32_t *chunk = atomic_load_explicit(&file->pmap[c], memory_order_acquire);
	if (!chunk && create) {
		_Atomic uint32_t *mine = calloc(BP_PMAP_CHUNK, sizeof(*mine));
		if (!mine)
			return NULL;
		/* Release: publishes the zeroed chunk.  Two inserters of one
		 * range (different partitions) may race: the loser frees its
		 * own and takes the winner's. */
		if (atomic_compare_exchange_strong_explicit(&file->pmap[c], &chunk, mine,
				memory_order_release, memory_order_acquire))
			chunk = mine;
		else
			free(mine);
	}
	return chunk ? &chunk[page & (BP_PMAP_CHUNK - 1)] : NULL;
}

/* The frame the map names for tag, if it holds tag now (relaxed: a
 * candidate, which both callers check again). */
static struct bp_frame *pmap_find(struct bp_pool *p, struct bp_file *file, uint64_t tag)
{
	_Atomic uint32_t *e = bp_pt_map_entry(file, bp_tag_page(tag), false);
	uint32_t i = e ? atomic_load_explicit(e, memory_order_relaxed) : 0;
	if (i == 0)
		return NULL;
	struct bp_frame *f = &p->frames[i - 1];
	__builtin_prefetch(bp_frame_page(p, f));
	return atomic_load_explicit(&f->tag, memory_order_relaxed) == tag ? f : NULL;
}

/* The lock-free lookup (home frame, map, then chain), with the page
 * prefetched; the bucket is hashed only when the map has no answer. */
static struct bp_frame *find_fast(struct bp_pool *p, struct bp_file *file, uint64_t tag)
{
	struct bp_frame *h = &p->frames[bp_home(p, tag)];
	__builtin_prefetch(bp_frame_page(p, h));
	/* Relaxed: a candidate, which both callers check again (the hit
	 * after its pin, the optimistic begin after its version load). */
	if (atomic_load_explicit(&h->tag, memory_order_relaxed) == tag)
		return h;
	struct bp_frame *f = file ? pmap_find(p, file, tag) : NULL;
	if (f)
		return f;
	f = chain_find(p, bp_hash_bucket(p, tag), tag);
	if (f)
		__builtin_prefetch(bp_frame_page(p, f));
	return f;
}

/* ---- Lookups ---- */

/* The hit path without the lock (see the design note): 0 with the frame
 * pinned, or 1: ask the locked path. */
static int lookup_pin_fast(struct bp_pool *p, uint64_t tag, struct bp_frame **out)
{
	struct bp_frame *f = find_fast(p, bp_file_of(p, tag), tag);
	if (!f)
		return 1;
	/* Acquire: as pin_found's, and it is what makes the tag load below
	 * see a remap (the design note's second condition). */
	uint32_t old = atomic_fetch_add_explicit(&f->state, BP_PIN_ONE, memory_order_acquire);
	if ((old & BP_F_LOCKED) || bp_pins(old) >= BP_PIN_MAX ||
	    atomic_load_explicit(&f->tag, memory_order_relaxed) != tag) {
		bp_unpin(p, f); /* wakes an unpin waiter, as any unpin */
		return 1;
	}
	if (!(old & BP_F_REFERENCED))
		atomic_fetch_or_explicit(&f->state, BP_F_REFERENCED, memory_order_relaxed);
	*out = f;
	return 0;
}

struct bp_frame *bp_pt_find(struct bp_file *file, uint64_t tag)
{
	return find_fast(file->pool, file, tag);
}

int bp_pt_lookup_pin(struct bp_pool *p, uint64_t tag, struct bp_frame **out)
{
	if (lookup_pin_fast(p, tag, out) == 0)
		return 0;
	uint64_t b = bp_hash_bucket(p, tag);
	struct bp_partition *part = &p->parts[b & (p->npart - 1)];
	pthread_rwlock_rdlock(&part->lock);
	struct bp_frame *f = chain_find(p, b, tag);
	int r = f ? pin_found(f) : -ENOENT;
	pthread_rwlock_unlock(&part->lock);
	if (r == 0)
		*out = f;
	return r;
}

bool bp_pt_contains(struct bp_pool *p, uint64_t tag)
{
	uint64_t b = bp_hash_bucket(p, tag);
	struct bp_partition *part = &p->parts[b & (p->npart - 1)];
	pthread_rwlock_rdlock(&part->lock);
	bool found = chain_find(p, b, tag) != NULL;
	pthread_rwlock_unlock(&part->lock);
	return found;
}

int bp_pt_insert_or_pin(struct bp_pool *p, struct bp_frame *f, uint64_t tag,
			struct bp_frame **found)
{
	uint64_t b = bp_hash_bucket(p, tag);
	struct bp_partition *part = &p->parts[b & (p->npart - 1)];
	/* The map's chunk is made before the lock (a pool mutex is a leaf:
	 * no allocation under it). */
	_Atomic uint32_t *e = bp_pt_map_entry(bp_file_of(p, tag), bp_tag_page(tag), true);
	pthread_rwlock_wrlock(&part->lock);
	struct bp_frame *g = chain_find(p, b, tag);
	int r = 0;
	if (g) {
		r = pin_found(g);
		if (r == 0) {
			*found = g;
			r = 1;
		}
	} else {
		atomic_store_explicit(&f->tag, tag, memory_order_relaxed);
		/* A new page: no LSN yet (the frame was clean to be taken). */
		atomic_store_explicit(&f->lsn, 0, memory_order_relaxed);
		atomic_store_explicit(&f->rec_lsn, 0, memory_order_relaxed);
		/* Relaxed: an unlocked walker that reaches f checks it after
		 * pinning (lookup_pin_fast), and the LOCKED bit this frame
		 * carries until its read completes sends it to the lock. */
		atomic_store_explicit(&f->hash_next,
				      atomic_load_explicit(&p->heads[b], memory_order_relaxed),
				      memory_order_relaxed);
		atomic_store_explicit(&p->heads[b], f->index, memory_order_relaxed);
		/* Relaxed: a hint, checked as a chain is (see above). */
		if (e)
			atomic_store_explicit(e, f->index + 1, memory_order_relaxed);
	}
	pthread_rwlock_unlock(&part->lock);
	return r;
}

void bp_pt_remove_locked(struct bp_pool *p, struct bp_frame *f, uint64_t tag)
{
	debug_assert_held_excl(&bp_part_of(p, tag)->lock); /* internal.h: write lock held */
	/* Only our own entry: the map may lack it (no chunk when inserted),
	 * never name another frame for this page (one insert at a time, under
	 * this lock). */
	_Atomic uint32_t *e = bp_pt_map_entry(bp_file_of(p, tag), bp_tag_page(tag), false);
	/* Relaxed: under the lock, as the chain's links; lookups without it
	 * check the tag of what an entry names. */
	if (e && atomic_load_explicit(e, memory_order_relaxed) == f->index + 1)
		atomic_store_explicit(e, 0, memory_order_relaxed);
	uint64_t b = bp_hash_bucket(p, tag);
	_Atomic uint32_t *link = &p->heads[b];
	for (;;) {
		uint32_t i = atomic_load_explicit(link, memory_order_relaxed);
		if (i == BP_NONE_IDX)
			return;
		if (i == f->index) {
			/* f keeps its link until it is reused, so an unlocked
			 * walker standing on f goes on down the chain. */
			atomic_store_explicit(link, atomic_load_explicit(&f->hash_next,
					      memory_order_relaxed), memory_order_relaxed);
			return;
		}
		link = &p->frames[i].hash_next;
	}
}
