// SPDX-License-Identifier: BSD-2-Clause
/*
 * core/unstarve.c on the host: hart 0 looks at hart 1 at each of its timer
 * interrupts, and halts a moment only when hart 1 runs (in a guest or the
 * hypervisor) without a guest entry for two looks: what a hart that QEMU's
 * round robin leaves no time looks like (docs/quirks.md, near-top).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "core/hart.h"
#include "core/hostdt.h"
#include "core/unstarve.h"

uint64_t stub_time;
void *host_tp;
struct host_info host;
struct hart harts[HART_MAX];
struct hart_status hart_status[HART_MAX];
unsigned int nr_harts;

static unsigned int halts;
static bool sleeping1; /* hart 1 waits for its exclusive-counting turn */

bool excl_sleeping(unsigned int index)
{
	return index == 1 && sleeping1;
}
static uint64_t halted_until;

void timer_halt(uint64_t until)
{
	halts++;
	halted_until = until;
}

void timer_arm(uint64_t when)
{
	(void)when;
}

#define MS 10000 /* timer ticks at 10 MHz */

static int setup(void **state)
{
	(void)state;
	memset(harts, 0, sizeof(harts));
	memset(hart_status, 0, sizeof(hart_status));
	host.timebase = 1000 * MS;
	nr_harts = 2;
	for (unsigned int i = 0; i < nr_harts; i++) {
		harts[i].index = i;
		harts[i].status = &hart_status[i];
		harts[i].timer_armed = UINT64_MAX;
		harts[i].look_at = UINT64_MAX;
	}
	halts = 0;
	sleeping1 = false;
	stub_time = 100 * MS;
	unstarve_init(true);
	assert_true(unstarve_on);
	hart_status[1].doing = HART_GUEST;
	hart_status[1].entries = 7;
	return 0;
}

/* hart 0 looks every ms (its timer is bounded by look_at); each look moves it on */
static void look(void)
{
	stub_time += MS;
	unstarve_tick(&harts[0], stub_time);
	assert_int_equal(harts[0].look_at, stub_time + MS);
}

static void first_look_at_once(void **state)
{
	(void)state;
	/* the first timer interrupt of a run comes at once, then one a ms */
	assert_int_equal(harts[0].look_at, 0);
	look();
	assert_int_equal(halts, 0);
}

/* Hart 1 enters its guest between every two looks: never starved */
static void progress_no_halt(void **state)
{
	(void)state;
	for (int i = 0; i < 20; i++) {
		hart_status[1].entries++;
		look();
	}
	assert_int_equal(halts, 0);
}

/* Hart 1 runs with no entry: a halt of 100 us after two looks, then one per two looks */
static void starved_halts(void **state)
{
	(void)state;
	look(); /* what hart 1 had entered so far */
	look();
	assert_int_equal(halts, 0);
	look();
	assert_int_equal(halts, 1);
	assert_int_equal(halted_until, stub_time + MS / 10);
	look();
	assert_int_equal(halts, 1);
	look();
	assert_int_equal(halts, 2);
	/* it ran again: no more halts */
	for (int i = 0; i < 5; i++) {
		hart_status[1].entries++;
		look();
	}
	assert_int_equal(halts, 2);
}

/* Idle or parked: no entries, but nothing to give it either */
static void idle_or_parked_no_halt(void **state)
{
	(void)state;
	hart_status[1].doing = HART_IDLE;
	for (int i = 0; i < 5; i++)
		look();
	hart_status[1].doing = HART_PARKED;
	for (int i = 0; i < 5; i++)
		look();
	assert_int_equal(halts, 0);
}

/* Waiting for its turn (it says "hypervisor" meanwhile): not starved */
static void turn_wait_no_halt(void **state)
{
	(void)state;
	hart_status[1].doing = HART_HYPERVISOR;
	sleeping1 = true;
	for (int i = 0; i < 5; i++)
		look();
	assert_int_equal(halts, 0);
	/* woken, and no entry for two looks since its last sleeping one: starved */
	sleeping1 = false;
	look();
	assert_int_equal(halts, 0);
	look();
	assert_int_equal(halts, 1);
}

/* After an idle sleep the next look is a look away, not at once */
static void awake_moves_look(void **state)
{
	(void)state;
	stub_time += 50 * MS;
	unstarve_awake(&harts[0]);
	assert_int_equal(harts[0].look_at, stub_time + MS);
}

/* One hart: nobody to look out for */
static void one_hart_off(void **state)
{
	(void)state;
	nr_harts = 1;
	harts[0].look_at = UINT64_MAX;
	unstarve_init(true);
	assert_false(unstarve_on);
	assert_int_equal(harts[0].look_at, UINT64_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(first_look_at_once, setup),
		cmocka_unit_test_setup(progress_no_halt, setup),
		cmocka_unit_test_setup(starved_halts, setup),
		cmocka_unit_test_setup(idle_or_parked_no_halt, setup),
		cmocka_unit_test_setup(turn_wait_no_halt, setup),
		cmocka_unit_test_setup(awake_moves_look, setup),
		cmocka_unit_test_setup(one_hart_off, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
