/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of vpmu/overflow.c: counter overflow as the guest sees it (one
 * record and one LCOFI per wrap, wherever it is found), the deadline that
 * finds wraps the platform does not signal, and the emulated counter CSR
 * reads, scountovf among them.
 */

#include "helpers.h"

/* --------------------------------------------------- overflow and LCOFI */

/*
 * An overflow still pending in HS when the vCPU is switched out is recorded
 * for it, and does not leave the next vCPU's counter disarmed (OpenSBI only
 * clears mhpmevent.OF on start while no LCOFI is pending).
 */
static void test_pending_lcofi_across_switch(void **state)
{
	struct vpmu *w = &other_vc.vpmu;

	(void)state;
	cfg_start(3, 1, EV_INSTR, -5UL);
	fake_advance(10);
	assert_true(fake.lcofip);
	fake.nr_lcofi = 0;
	vpmu_vcpu_put(v);
	assert_int_equal(fake.nr_lcofi, 1);
	assert_int_equal(v->overflow, 1UL << 3);
	vpmu_vcpu_init(w);
	vpmu_vcpu_load(w);
	assert_int_equal(vpmu_counter_config_matching(w, 4, 1, 0, EV_INSTR, 0).value, 4);
	assert_int_equal(vpmu_counter_start(w, 4, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -3UL),
			 SBI_SUCCESS);
	assert_false(fake.c[4].of);
	fake_advance(5);
	assert_true(fake.c[4].of); /* it overflowed, so it will interrupt */
	vpmu_overflow_irq(w);
	assert_int_equal(fake.nr_lcofi, 2);
	assert_int_equal(w->overflow, 1UL << 4);
	assert_int_equal(v->overflow, 1UL << 3);
}

/* A wrap the host did not flag (QEMU without icount) is still an overflow */
static void test_unflagged_wrap_recorded_at_put(void **state)
{
	(void)state;
	cfg_start(3, 1, EV_INSTR, -10UL);
	fake.c[3].value = 7; /* wrapped, but no OF and no LCOFI */
	fake.nr_lcofi = 0;
	vpmu_vcpu_put(v);
	assert_int_equal(v->overflow, 1UL << 3);
	assert_int_equal(fake.nr_lcofi, 1);
	vpmu_vcpu_load(v);
	assert_int_equal(vpmu_ctr_value(v, 3), 7);
}

/* A physical LCOFI for a counter that has not wrapped is not passed on */
static void test_spurious_lcofi_ignored(void **state)
{
	(void)state;
	fake.nr_lcofi = 0;
	cfg_start(3, 1, EV_INSTR, -1000UL);
	fake_advance(10);
	fake.c[3].of = true; /* the platform says so, the value does not */
	fake.lcofip = true;
	vpmu_overflow_irq(v);
	assert_false(fake.lcofip);
	assert_int_equal(fake.nr_lcofi, 0);
	assert_int_equal(v->overflow, 0);
}

/*
 * An LCOFI whose cause the guest cleared before taking it (it restarted or
 * reset the counter with interrupts off, as Linux does around a context
 * switch) is withdrawn: delivered, Linux finds no overflow bit and leaves
 * its counters stopped. Only when no overflow of the vCPU is left.
 */
static void test_lcofi_cancelled_when_cause_cleared(void **state)
{
	(void)state;
	fake.nr_lcofi = 0;
	fake.nr_lcofi_cancel = 0;
	cfg_start(3, 1, EV_INSTR, -100UL);
	cfg_start(4, 1, EV_CYCLES, -100UL);
	fake_advance(150);
	vpmu_overflow_irq(v);
	assert_int_equal(fake.nr_lcofi, 2);
	assert_int_equal(v->overflow, (1UL << 3) | (1UL << 4));
	/* one of two restarted: the other overflow still wants the interrupt */
	assert_int_equal(STOP(3, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(START(3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -1000UL).error,
			 SBI_SUCCESS);
	assert_int_equal(fake.nr_lcofi_cancel, 0);
	/* the last one reset: nothing left, withdrawn once */
	assert_int_equal(STOP(4, 1, SBI_PMU_STOP_FLAG_RESET).error, SBI_SUCCESS);
	assert_int_equal(v->overflow, 0);
	assert_int_equal(fake.nr_lcofi_cancel, 1);
	/* clearing what is already clear withdraws nothing */
	assert_int_equal(STOP(3, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(START(3, 1, 0, 0).error, SBI_SUCCESS);
	assert_int_equal(fake.nr_lcofi_cancel, 1);
}

/*
 * The platform loses an overflow (QEMU: its timer fires while the counter
 * is stopped, or a stale irq_overflow_left re-arms it a second later): the
 * deadline the hypervisor arms still finds the wrap, once.
 */
static void test_lost_overflow_found_at_deadline(void **state)
{
	(void)state;
	fake.lose_of = true;
	fake.nr_lcofi = 0;
	fake.now = 1000;
	cfg_start(3, 1, EV_INSTR, -10000UL);
	assert_int_equal(v->deadline, 1000 + 9999 / 100 + 32);
	fake_advance(9999);
	vpmu_timer(v); /* before the deadline: not even a look */
	assert_int_equal(fake.nr_lcofi, 0);
	fake_advance(50);
	assert_false(fake.c[3].of);
	vpmu_timer(v); /* wrapped, but still before the deadline */
	assert_int_equal(fake.nr_lcofi, 0);
	fake.now = v->deadline;
	vpmu_timer(v);
	assert_int_equal(fake.nr_lcofi, 1);
	assert_int_equal(v->overflow, 1UL << 3);
	assert_int_equal(v->deadline, UINT64_MAX); /* nothing left to watch */
	vpmu_timer(v);
	vpmu_overflow_irq(v);
	assert_int_equal(fake.nr_lcofi, 1); /* once per wrap */
	/* the guest restarts it: watched again */
	assert_int_equal(START(3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -200UL).error,
			 SBI_ERR_ALREADY_STARTED);
	assert_int_equal(STOP(3, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(START(3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -200UL).error, SBI_SUCCESS);
	assert_int_equal(v->overflow, 0);
	/* 32 ticks after the earliest wrap */
	assert_int_equal(v->deadline, fake.now + 199 / 100 + 32);
	fake_advance(300);
	vpmu_overflow_irq(v); /* any trap looks too */
	assert_int_equal(fake.nr_lcofi, 2);
}

/* ------------------------------------------------------------- deadline */

/* Counters far from wrapping need no deadline; stopped ones neither */
static void test_deadline_only_near_wraps(void **state)
{
	(void)state;
	cfg_start(3, 1, EV_INSTR, 0x8000000000000001UL); /* Linux's counting start */
	assert_int_equal(v->deadline, UINT64_MAX);
	cfg_start(4, 1, EV_DTLB_RD, -5000UL);
	assert_int_equal(v->deadline, fake.now + 4999 / 100 + 32);
	assert_int_equal(STOP(4, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(v->deadline, UINT64_MAX);
	vpmu_vcpu_put(v);
	assert_int_equal(v->deadline, UINT64_MAX);
}

/*
 * Starts and stops far from the top leave the deadline alone (it still
 * bounds the wraps of the others), but a stop that leaves nothing started
 * clears it: here the near counter wrapped, so it stops far from its top,
 * and a deadline left in the past would fire the hart's timer forever
 * (vpmu_timer looks only while a counter is started).
 */
static void test_deadline_kept_by_far_changes(void **state)
{
	uint64_t d;

	(void)state;
	cfg_start(4, 1, EV_DTLB_RD, -5000UL);
	d = v->deadline;
	assert_int_equal(d, fake.now + 4999 / 100 + 32);
	cfg_start(3, 1, EV_INSTR, 0x8000000000000001UL);
	assert_int_equal(v->deadline, d);
	assert_int_equal(STOP(3, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(v->deadline, d);
	fake_advance(6000); /* counter 4 wraps: 1000 */
	assert_int_equal(STOP(4, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(v->ctr[4].value, 1000);
	assert_int_equal(v->deadline, UINT64_MAX);
}

/*
 * A counter close to its wrap that does not advance (the guest stays in a
 * filtered mode; QEMU's second counter of one event) costs ever fewer
 * traps: the deadline backs off, and comes back (to at most
 * DEADLINE_KEPT_TICKS) when the guest restarts it.
 */
static void test_deadline_backs_off(void **state)
{
	uint64_t gap = 32;

	(void)state;
	fake.now = 5000;
	cfg_start(3, 1, EV_INSTR, -50UL);
	assert_int_equal(v->deadline, 5000 + 32);
	fake.c[3].running = false; /* stands still: as if filtered */
	for (int i = 0; i < 20; i++) {
		fake.now = v->deadline;
		vpmu_timer(v);
		gap = gap < (1UL << 17) ? 2 * gap : gap;
		assert_int_equal(v->deadline, fake.now + gap);
	}
	fake.c[3].running = true;
	assert_int_equal(STOP(3, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(START(3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -5000UL).error,
			 SBI_SUCCESS);
	assert_int_equal(v->deadline, fake.now + 4999 / 100 + 1024);
}

/*
 * A sampler: the platform signals every wrap, a little after the earliest
 * time it could have come (the uncounted work after each START). Up to 32
 * ticks of it, the deadline comes after the LCOFI from the first sample;
 * with more, it learns: after one that found nothing it comes after the
 * LCOFI, for every sample after (it came first, a trap for nothing, once
 * per sample).
 */
static void sampler_early_deadlines(uint64_t uncounted, int want_early)
{
	int early = 0;

	fake.nr_lcofi = 0;
	fake.now = 1000;
	cfg_start(3, 1, EV_INSTR, -10000UL);
	for (int i = 0; i < 10; i++) {
		/* ticks of instructions the counter does not count, then 10,000 it does */
		uint64_t t0 = fake.now, counted = 0;

		fake.now += uncounted;
		if (v->deadline < t0 + uncounted + 10000 / 100) {
			early++;
			counted = (v->deadline - fake.now) * 100;
			fake_advance(counted);
			vpmu_timer(v); /* nothing yet */
			assert_int_equal(fake.nr_lcofi, i);
		}
		fake_advance(10000 - counted + 1);
		vpmu_overflow_irq(v);
		assert_int_equal(fake.nr_lcofi, i + 1);
		assert_int_equal(STOP(3, 1, 0).error, SBI_SUCCESS);
		assert_int_equal(START(3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -10000UL).error,
				 SBI_SUCCESS);
	}
	assert_int_equal(early, want_early);
}

static void test_deadline_after_the_sampler_lcofi(void **state)
{
	(void)state;
	sampler_early_deadlines(20, 0);
}

static void test_deadline_learns_across_restarts(void **state)
{
	(void)state;
	sampler_early_deadlines(50, 1);
}

/*
 * The deadline after a load: only a counter near its top needs one, as put
 * found it (a counter that continues), or by its saved value (one
 * configured again because another vCPU took its physical counter).
 */
static void test_deadline_after_load(void **state)
{
	struct vpmu *w;

	(void)state;
	cfg_start(3, 1, EV_INSTR, 0x8000000000000001UL);
	vpmu_vcpu_put(v);
	vpmu_vcpu_load(v);
	assert_int_equal(v->deadline, UINT64_MAX);
	cfg_start(4, 1, EV_DTLB_RD, -5000UL);
	fake_advance(1000);
	vpmu_vcpu_put(v);
	assert_int_equal(v->deadline, UINT64_MAX);
	fake.now += 3;
	vpmu_vcpu_load(v);
	assert_int_equal(v->deadline, fake.now + 3999 / 100 + 32);
	/* counter 4 taken by another vCPU meanwhile: configured again, still near */
	w = switch_to_other();
	assert_int_equal(vpmu_counter_config_matching(w, 4, 1, 0, EV_INSTR, 0).value, 4);
	vpmu_vcpu_put(w);
	vpmu_vcpu_load(v);
	assert_int_equal(v->deadline, fake.now + 3999 / 100 + 32);
	assert_int_equal(vpmu_ctr_value(v, 4), -4000UL);
}

/* ------------------------------------------------------------ CSR reads */

static void test_csr_read_rules(void **state)
{
	unsigned long val = 0;

	(void)state;
	assert_int_equal(vpmu_csr_read(v, 0xc03, &val), -1); /* unconfigured */
	assert_int_equal(vpmu_csr_read(v, 0xc00, &val), -1);
	assert_int_equal(vpmu_csr_read(v, 0xc01, &val), -1);	   /* time: the core's */
	assert_int_equal(vpmu_csr_read(v, 0xc00 + NHW, &val), -1); /* no such counter */
	assert_int_equal(vpmu_csr_read(v, 0xc1f, &val), -1);
	assert_int_equal(vpmu_csr_read(v, 0xc20, &val), -1);
	assert_int_equal(vpmu_csr_read(v, 0xb03, &val), -1);
	CFG(3, 1, 0, EV_INSTR, 0);
	assert_int_equal(vpmu_csr_read(v, 0xc03, &val), 0); /* configured, stopped: value */
	assert_int_equal(val, 0);
	cfg_start(0, 1, EV_CYCLES, 77);
	fake_advance(3);
	assert_int_equal(vpmu_csr_read(v, 0xc00, &val), 0);
	assert_int_equal(val, 80);
}

/*
 * scountovf: a guest reads its own overflow bits (trapped read), and the
 * OF bits other vCPUs' stopped counters carry are gone from the hart when
 * it runs (an untrapped read sees the hart's register).
 */
static void test_scountovf_own_bits_only(void **state)
{
	struct vpmu *w;
	unsigned long val = 0;

	(void)state;
	cfg_start(4, 1, EV_INSTR, -5UL);
	fake_advance(10);
	assert_true(fake.c[4].of);
	assert_int_equal(vpmu_csr_read(v, VPMU_CSR_SCOUNTOVF, &val), 0);
	assert_int_equal(val, 1UL << 4);
	w = switch_to_other();
	assert_int_equal(vpmu_phys_overflowed() & (1U << 4), 0);
	assert_int_equal(vpmu_csr_read(w, VPMU_CSR_SCOUNTOVF, &val), 0);
	assert_int_equal(val, 0);
	vpmu_vcpu_put(w);
	vpmu_vcpu_load(v);
	assert_int_equal(vpmu_csr_read(v, VPMU_CSR_SCOUNTOVF, &val), 0);
	assert_int_equal(val, 1UL << 4); /* still its own, until it restarts the counter */
	assert_int_equal(vpmu_ctr_value(v, 4), 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_pending_lcofi_across_switch),
		T(test_unflagged_wrap_recorded_at_put),
		T(test_spurious_lcofi_ignored),
		T(test_lcofi_cancelled_when_cause_cleared),
		T(test_lost_overflow_found_at_deadline),
		T(test_deadline_only_near_wraps),
		T(test_deadline_kept_by_far_changes),
		T(test_deadline_backs_off),
		T(test_deadline_after_the_sampler_lcofi),
		T(test_deadline_learns_across_restarts),
		T(test_deadline_after_load),
		T(test_csr_read_rules),
		T(test_scountovf_own_bits_only),
	};

	return cmocka_run_group_tests_name("vpmu_overflow", tests, NULL, NULL);
}
