/* SPDX-License-Identifier: MIT */
/*
 * test_claim_race.c - white-box: a claimed frame given back (bp_free_claimed)
 * while a lock-free hit holds a speculative pin on it keeps that pin.
 *
 * Design note: the hit path (pagetable.c, lookup_pin_fast) walks a chain
 * without the lock and pins the frame it finds with one fetch_add before
 * it checks LOCKED and the tag; a frame taken and unmapped meanwhile keeps
 * its chain link, so the walker can still reach it and pin it.  If the
 * claimer then gives the frame back (a lost insert race in bp_get, a page
 * readahead found resident, bp_drop_frames), the walker's pin is still
 * there until it sees LOCKED and unpins.  Giving back must therefore drop
 * only the claimer's own pin: wiping the pin field made the walker's unpin
 * wrap the count, and the frame stayed "pinned" for good (bp_close:
 * -EBUSY, "frame N (page 18446744073709551615) is still pinned", seen in
 * stress_bufpool under TSan).  The interleaving is made here by calling
 * the internal steps in that order, so it is exact, not a timing hope; the
 * test links the test-only static build of the pool, whose internal
 * functions are reachable (bufpool/meson.build).
 *
 * The second test is a lost wakeup: bp_get_timed with no deadline
 * waiting for a frame (evict.c, wait_for_unpin) counts the pin a claim
 * holds on its LOCKED frame as a user's pin, and the claim's give-back
 * dropped that pin without waking it, so it slept for ever beside a free
 * frame.  The window is between the waiter's io_busy_frame scan and its
 * all_pinned check (the chaos build's stress test hits it by timing,
 * tests/stress); here the waiter's half is played by hand: it is counted in
 * frame_waiters and sleeps until unpin_seq moves.  Failing first, before
 * every pin drop woke frame waiters at zero (frame.c): "the claim's last
 * pin dropped without waking the frame waiters".
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "bp_helpers.h"
#include "bufpool/internal.h"
#include "../check_run.h"

static struct bt_dir dir;

static void setup(void) { bt_dir_make(&dir); }
static void teardown(void) { bt_dir_remove(&dir); }

/* A fresh 4-frame pool with one frame claimed (LOCKED | one pin) in *f. */
static struct bp_pool *open_and_claim(struct bp_frame **f)
{
	struct bp_pool *p = bt_open_empty(&dir, 4);
	ck_assert_int_eq(bp_claim_frame(p, BP_CLAIM_NOWAIT, BP_NO_PAGE, NULL, f), 0);
	return p;
}

START_TEST(give_back_keeps_a_walkers_pin)
{
	struct bp_frame *f;
	struct bp_pool *p = open_and_claim(&f);
	ck_assert_uint_eq(bp_pins(atomic_load(&f->state)), 1);
	/* a walker that found this frame under its old tag pins it ... */
	atomic_fetch_add(&f->state, BP_PIN_ONE);
	/* ... the claimer gives it back ... */
	bp_free_claimed(p, f);
	ck_assert_uint_eq(bp_pins(atomic_load(&f->state)), 1); /* the walker's */
	ck_assert(!(atomic_load(&f->state) & BP_F_LOCKED));
	/* ... and the walker, seeing LOCKED or a wrong tag, unpins */
	bp_unpin(p, f);
	uint32_t s = atomic_load(&f->state);
	ck_assert_msg((s & ~FWAIT_WAITERS_MASK) == 0, "state %#x: a free frame is 0", s);
	/* the frame is free: claimed again, and the pool closes */
	struct bp_stats st;
	bp_stats_init(&st);
	ck_assert_int_eq(bp_stats_get(p, &st), 0);
	ck_assert_uint_eq(st.frames_pinned, 0);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

START_TEST(giving_back_a_claim_wakes_frame_waiters)
{
	struct bp_frame *f;
	struct bp_pool *p = open_and_claim(&f);
	/* a frame waiter that has counted the claim's pin as a user's ... */
	atomic_fetch_add(&p->frame_waiters, 1);
	uint64_t seq = atomic_load(&p->unpin_seq);
	/* ... is told when the claim is given back (the pin drops to 0) */
	bp_free_claimed(p, f);
	ck_assert_msg(atomic_load(&p->unpin_seq) != seq,
		      "the claim's last pin dropped without waking the frame waiters");
	atomic_fetch_sub(&p->frame_waiters, 1);
	ck_assert_int_eq(bp_close(p), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bufpool claim_race");
	TCase *tc = tcase_create("claim");
	tcase_add_unchecked_fixture(tc, bt_root_make, bt_root_remove);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, give_back_keeps_a_walkers_pin);
	tcase_add_test(tc, giving_back_a_claim_wakes_frame_waiters);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(suite());
}
