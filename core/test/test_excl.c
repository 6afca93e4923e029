// SPDX-License-Identifier: BSD-2-Clause
/*
 * Exclusive counting (core/excl.c) on the host, two harts played in one
 * thread: the test includes excl.c to set its token and turn directly, and
 * the stubs below stand for what the other hart does meanwhile. The case
 * checked: a hart whose turn is over releases the token at its vCPU's
 * entry, which puts the counting vCPU (sched_put_counting). That vCPU must
 * not be entered before the scheduler has loaded it again, even when the
 * hart could take the token back at once (the other hart's turn was over
 * too by then, as under QEMU -icount's round robin, whose budget for the
 * other hart can pass between two instructions of this one). And a hart
 * taking the token waits until the other has parked after its IPI arrived.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "core/excl.c"

/* ---- what excl.c needs from the rest of the hypervisor ---- */
uint64_t stub_time;
void *host_tp;
unsigned long stub_csr[4096];
struct host_info host;
struct hart harts[HART_MAX];
struct hart_status hart_status[HART_MAX];
unsigned int nr_harts;

static unsigned int puts_done, spins, ipis_sent, sleeps;
static uint64_t time_at_put; /* what the put's while lets pass: the other hart's budget */

/*
 * What hart 1 does when hart 0 sends its IPI (before hart 0 marks it):
 * IPI_ARRIVES: nothing yet; it parks while hart 0 spins (cpu_relax).
 * IPI_LATE: it takes an older IPI and parks, and hart 0's IPI arrives after
 * its acknowledgement (QEMU's round robin ran hart 1 between hart 0's look
 * at it and the send): it wakes, and parks again only while hart 0 spins.
 * IPI_TAKEN_UNMARKED: it takes hart 0's IPI before the mark, parks and
 * halts: only another IPI wakes it.
 */
static enum { IPI_ARRIVES, IPI_LATE, IPI_TAKEN_UNMARKED } ipi_case;
static bool hart1_halted; /* parked with nothing pending: it runs only when an IPI comes */

/* Hart 1 parks: the mark it read, then its acknowledgement (excl_park) */
static void hart1_parks(void)
{
	harts[1].excl.ipi_seen = harts[1].excl.ipi_gen;
	__atomic_or_fetch(&excl_parked, BIT(1), __ATOMIC_SEQ_CST);
	harts[1].excl.park_gen = excl_gen(excl_token);
}

/* sched_put_counting (core/sched.c): the loaded vCPU, if it counts, leaves the hart */
void sched_put_counting(struct hart *h)
{
	struct vcpu *v = hart_loaded(h);

	if (v && vpmu_counting(&v->vpmu)) {
		h->arch.loaded = NULL;
		h->resched = true;
		puts_done++;
	}
	if (time_at_put)
		stub_time = time_at_put;
}

struct sbi_ret sbi_ecall(unsigned long ext, unsigned long fid, unsigned long arg0,
			 unsigned long arg1, unsigned long arg2, unsigned long arg3,
			 unsigned long arg4, unsigned long arg5)
{
	(void)fid, (void)arg0, (void)arg2, (void)arg3, (void)arg4, (void)arg5;
	assert_int_equal(ext, SBI_EXT_IPI);
	ipis_sent += arg1 == 1;
	if (hart1_halted) {
		hart1_halted = false;
		hart1_parks(); /* woken: it takes the IPI, reads the mark and parks again */
		return (struct sbi_ret){0, 0};
	}
	if (ipi_case == IPI_LATE) {
		hart1_parks(); /* acknowledged before this IPI arrives: it wakes at its next run */
	} else if (ipi_case == IPI_TAKEN_UNMARKED) {
		hart1_parks();
		hart1_halted = true;
	}
	return (struct sbi_ret){0, 0};
}

/*
 * A hart waiting for the others to park spins: meanwhile hart 1 runs (takes
 * the IPI and parks), unless it halted; time passes
 */
void cpu_relax(void)
{
	spins++;
	stub_time++;
	if (!hart1_halted)
		hart1_parks();
}

bool timer_nap(uint64_t until)
{
	(void)until;
	fail_msg("no vCPU spins on another in these cases (excl_spin_nap)");
	return false;
}

void timer_arm(uint64_t when)
{
	(void)when;
}

void timer_halt(uint64_t until)
{
	(void)until;
}

void timer_repost_ipi(void)
{
}

bool timer_wait_ipi(bool timer, volatile unsigned long *signal, unsigned long val)
{
	(void)timer, (void)signal, (void)val;
	fail_msg("hart 0 parked: no hart holds the token in these cases");
	return false;
}

/* Hart 0 waits for its turn: the other hart's passes */
unsigned long excl_sleep(struct hart *h, uint64_t until, bool rest)
{
	(void)h, (void)rest;
	sleeps++;
	stub_time = until;
	return 0;
}

void hart_fence_guests(void)
{
}

void vpmu_set_exclusive(bool on)
{
	(void)on;
}

void spin_lock_contended(spinlock_t *l)
{
	(void)l;
	fail_msg("no lock is contended in one thread");
}

/* ---- the two harts ---- */

#define TICKS_PER_SEC 10000000UL
#define T0	      (TICKS_PER_SEC * 5) /* when hart 0's turn ends */

static struct vcpu vcpu;

/*
 * Hart 0 holds the token for its counting vCPU, loaded and current; its
 * turn ended at T0, which is now. Hart 1 runs a vCPU that does not count
 * (busy, not waiting for the token): the slice after hart 0's turn is its.
 */
static int setup(void **state)
{
	(void)state;
	memset(&vcpu, 0, sizeof(vcpu));
	memset(harts, 0, sizeof(harts));
	memset(hart_status, 0, sizeof(hart_status));
	host.timebase = TICKS_PER_SEC;
	nr_harts = 2;
	for (unsigned int i = 0; i < nr_harts; i++) {
		harts[i].index = i;
		harts[i].hartid = i;
		harts[i].status = &hart_status[i];
		harts[i].timer_armed = UINT64_MAX;
	}
	host_tp = &harts[0];
	excl_init(true);
	assert_true(excl_enabled);

	vcpu.vpmu.started_hw = BIT(3); /* a guest counter runs: it counts */
	harts[0].arch.loaded = &vcpu.arch;
	harts[0].cur = &vcpu;
	hart_status[0].doing = HART_HYPERVISOR;
	hart_status[1].doing = HART_GUEST;

	excl_token = (1UL << EXCL_OWNER_BITS) | 1; /* generation 1, hart 0 */
	excl_parked = BIT(1);
	excl_want = 0;
	harts[1].excl.park_gen = 1;
	turn_hart = 0;
	turn_end = T0;
	turn_unstarted = false;
	harts[0].excl.turn_end = T0;
	harts[0].excl.counter = &vcpu;
	stub_time = T0;
	harts[1].excl.ipi_gen = harts[1].excl.ipi_seen = 0;
	puts_done = spins = ipis_sent = sleeps = 0;
	time_at_put = 0;
	ipi_case = IPI_ARRIVES;
	hart1_halted = false;
	return 0;
}

/* The entry the scheduler asks for is allowed only for a vCPU still loaded */
static void assert_entry_sound(bool entered)
{
	if (entered)
		assert_ptr_equal(hart_loaded(&harts[0]), &vcpu);
}

/*
 * The plain case: hart 1's slice follows. Hart 0 releases, its vCPU put, and
 * waits for that slice to pass before the scheduler looks at its queue
 * again (had it gone round its queue at once, a vCPU it switched to would
 * have spent its slice parked: excl-fair-shared's neighbour starved)
 */
static void turn_over_releases(void **state)
{
	(void)state;
	assert_false(excl_enter(&harts[0], &vcpu, T0));
	assert_int_equal(puts_done, 1);
	assert_true(harts[0].resched);
	assert_int_equal(excl_owner(excl_token), -1);
	assert_int_equal(sleeps, 1);
	assert_int_equal(turn_hart, 1);
	assert_int_equal(stub_time, T0 + TICKS_PER_SEC / 100);
}

/*
 * While the put runs, hart 1's slice passes as well (its budget under
 * -icount): the turn is hart 0's again and it takes the token back. The
 * vCPU was put: it may run only after the scheduler loads it again.
 */
static void token_back_at_once(void **state)
{
	bool entered;

	(void)state;
	time_at_put = T0 + 3 * (TICKS_PER_SEC / 100);
	entered = excl_enter(&harts[0], &vcpu, T0);
	assert_int_equal(puts_done, 1);
	assert_int_equal(excl_owner(excl_token), 0);
	assert_int_equal(sleeps, 0);
	assert_true(harts[0].resched);
	assert_entry_sound(entered);
	assert_false(entered);
}

/* The vCPU's turn goes on while it lasts: nothing is put */
static void within_turn_goes_on(void **state)
{
	(void)state;
	harts[0].excl.turn_end = T0 + 100;
	assert_true(excl_enter(&harts[0], &vcpu, T0));
	assert_int_equal(puts_done, 0);
	assert_ptr_equal(hart_loaded(&harts[0]), &vcpu);
	assert_int_equal(excl_owner(excl_token), 0);
}

/* Nobody else has work: hart 0 renews its turn and its vCPU goes on, loaded */
static void renewed_turn_goes_on(void **state)
{
	(void)state;
	hart_status[1].doing = HART_IDLE;
	assert_true(excl_enter(&harts[0], &vcpu, T0));
	assert_int_equal(puts_done, 0);
	assert_ptr_equal(hart_loaded(&harts[0]), &vcpu);
	assert_int_equal(turn_hart, 0);
	assert_int_equal(harts[0].excl.turn_end, T0 + TICKS_PER_SEC / 100);
}

/* The token free (generation 1), nobody parked, both slices over: the turn is anyone's */
static void token_free_turn_anyones(void)
{
	excl_token = 1UL << EXCL_OWNER_BITS;
	excl_parked = 0;
	turn_end = T0 - 1;
	stub_time = T0 + 3 * (TICKS_PER_SEC / 100);
}

/*
 * Not the token's holder (it was released): acquiring it for a vCPU that is
 * loaded lets it run, once hart 1 has parked for this acquisition
 */
static void acquire_for_loaded_vcpu(void **state)
{
	(void)state;
	token_free_turn_anyones();
	assert_true(excl_enter(&harts[0], &vcpu, stub_time));
	assert_int_equal(puts_done, 0);
	assert_int_equal(excl_owner(excl_token), 0);
	assert_int_equal(ipis_sent, 1);
	assert_true(spins >= 1);
	assert_ptr_equal(hart_loaded(&harts[0]), &vcpu);
}

/*
 * Hart 1 takes an older IPI and parks (acknowledges) between hart 0's look
 * at it and hart 0's IPI: that IPI wakes it after the acknowledgement, and
 * what it runs then would count as hart 0's vCPU's (QEMU -icount). Hart 0
 * waits until hart 1 has parked again having read the mark of its IPI.
 */
static void late_ipi_not_taken_for_parked(void **state)
{
	(void)state;
	ipi_case = IPI_LATE;
	token_free_turn_anyones();
	assert_true(excl_acquire(&harts[0]));
	assert_true(spins >= 1);
	assert_int_equal(harts[1].excl.ipi_seen, 2);
	assert_int_equal(harts[1].excl.park_gen, 2);
}

/*
 * Hart 1 takes hart 0's IPI before hart 0 marks it, parks and halts: hart 0
 * sends another, after which hart 1 parks having read the mark
 */
static void unmarked_ipi_sent_again(void **state)
{
	(void)state;
	ipi_case = IPI_TAKEN_UNMARKED;
	token_free_turn_anyones();
	assert_true(excl_acquire(&harts[0]));
	assert_int_equal(ipis_sent, 2);
	assert_false(hart1_halted);
	assert_int_equal(harts[1].excl.ipi_seen, 2);
}

/*
 * Hart 0 looks at the turn just before T0 (still its own), hart 1 just
 * after (the next one, its own); then hart 0 takes the free token (QEMU's
 * round robin switched harts between its look and its take) and hart 1,
 * finding it taken, parks. Hart 0's turn is over at once: it does not count
 * through hart 1's turn.
 */
static void turn_passed_before_the_token(void **state)
{
	unsigned long tok;

	(void)state;
	excl_token = 1UL << EXCL_OWNER_BITS; /* generation 1, free */
	excl_parked = 0;
	hart_status[1].doing = HART_HYPERVISOR;
	stub_time = T0 - 10;
	assert_true(turn_ours(&harts[0]));
	stub_time = T0 + 10;
	assert_true(turn_ours(&harts[1]));
	assert_int_equal(turn_hart, 1);
	tok = excl_token;
	assert_true(__atomic_compare_exchange_n(&excl_token, &tok,
						((excl_gen(tok) + 1) << EXCL_OWNER_BITS) | 1, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	turn_started(&harts[0]);
	assert_true(harts[0].excl.turn_end <= stub_time);
	assert_false(excl_goes_on(&harts[0], &vcpu, stub_time + 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(turn_over_releases, setup),
		cmocka_unit_test_setup(token_back_at_once, setup),
		cmocka_unit_test_setup(within_turn_goes_on, setup),
		cmocka_unit_test_setup(renewed_turn_goes_on, setup),
		cmocka_unit_test_setup(acquire_for_loaded_vcpu, setup),
		cmocka_unit_test_setup(late_ipi_not_taken_for_parked, setup),
		cmocka_unit_test_setup(unmarked_ipi_sent_again, setup),
		cmocka_unit_test_setup(turn_passed_before_the_token, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
