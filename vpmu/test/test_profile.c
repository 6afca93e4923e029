/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * vpmu/profile.c: the hypervisor's sampling counter. The guest never sees
 * it (not offered, not readable, no overflow bit, no LCOFI), it counts only
 * guest modes, every wrap is one sample wherever it is found, and it lives
 * through loads, puts, evictions by another vCPU and resets.
 */
#include "helpers.h"

#define PERIOD 1000
#define PCTR   18 /* the fake's highest programmable counter */
/* guest filter flags 0 as the host gets them: M, S (HS) and U inhibited */
#define GUEST_ONLY BASE_INH
/* What Linux passes as its counter mask: the counters COUNTER_GET_INFO accepts */
#define GUEST_HW (HWMASK & ~(1UL << PCTR))

static struct vpmu_policy pol;

/* v, loaded, profiled with cycles every PERIOD */
static int setup_profiled(void **state)
{
	setup(state);
	memset(&pol, 0, sizeof(pol));
	pol.profile.event_idx = EV_CYCLES;
	pol.profile.period = PERIOD;
	vpmu_vcpu_set_policy(v, &pol);
	check(v);
	return 0;
}

#define TP(f) cmocka_unit_test_setup(f, setup_profiled)

static void test_profile_counter_is_not_offered(void **state)
{
	unsigned int n = 0;
	struct sbi_ret r;

	(void)state;
	assert_int_equal(vpmu_profile_counter(v), PCTR);
	/* the physical counter counts cycles in guest modes, period events before its wrap */
	assert_true(fake.c[PCTR].configured && fake.c[PCTR].running);
	assert_int_equal(fake.c[PCTR].event_idx, EV_CYCLES);
	assert_int_equal(fake.c[PCTR].flags, GUEST_ONLY);
	assert_int_equal(fake.c[PCTR].value, -(uint64_t)PERIOD);
	/* NUM_COUNTERS keeps its meaning (the highest index + 1); the index is invalid */
	assert_int_equal(NUM().value, NTOT);
	assert_int_equal(INFO(PCTR).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(INFO(PCTR - 1).error, SBI_SUCCESS);
	/* CONFIG_MATCHING, until every counter runs, never gives it */
	assert_int_equal(CFG(0, HWMASK, 0, EV_DTLB_RD, 0).error, SBI_ERR_INVALID_PARAM);
	while (n < 40 && (r = CFG(0, GUEST_HW, AUTO, EV_DTLB_RD, 0)).error == SBI_SUCCESS) {
		assert_int_not_equal(r.value, PCTR);
		n++;
	}
	assert_int_equal(n, 15); /* 3..17 */
	assert_int_equal(CFG(PCTR, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_CYCLES, 0).error,
			 SBI_ERR_INVALID_PARAM);
	assert_int_equal(START(PCTR, 1, 0, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(STOP(PCTR, 1, 0).error, SBI_ERR_INVALID_PARAM);
}

static void test_profile_counter_is_not_readable(void **state)
{
	unsigned long val = 0;

	(void)state;
	cfg_start(3, 1, EV_INSTR, 0);
	/* the guest reads its own counters directly, never the sampling one */
	assert_int_equal(fake.counteren & (1UL << PCTR), 0);
	assert_int_equal(fake.counteren & (1UL << 3), 1UL << 3);
	assert_int_equal(vpmu_csr_read(v, 0xc00 + PCTR, &val), -1);
	assert_int_equal(vpmu_csr_read(v, 0xc00 + 3, &val), 0);
}

/* A wrap taken by the interrupt: one sample, no guest overflow, counting again */
static void test_profile_wrap_is_a_sample(void **state)
{
	unsigned long ovf = 1;

	(void)state;
	fake_advance(PERIOD + 500);
	assert_true(fake.lcofip);
	vpmu_overflow_irq(v);
	assert_int_equal(fake.nr_samples, 1);
	assert_int_equal(v->nr_samples, 1);
	assert_int_equal(fake.nr_lcofi, 0);
	assert_int_equal(v->overflow, 0);
	assert_int_equal(vpmu_csr_read(v, VPMU_CSR_SCOUNTOVF, &ovf), 0);
	assert_int_equal(ovf, 0);
	/* running again from its start value, OF clear so that it interrupts again */
	assert_true(fake.c[PCTR].running);
	assert_false(fake.c[PCTR].of);
	assert_int_equal(fake.c[PCTR].value, -(uint64_t)PERIOD);
	fake_advance(PERIOD - 1);
	vpmu_overflow_irq(v);
	assert_int_equal(fake.nr_samples, 1);
	fake_advance(1);
	vpmu_overflow_irq(v);
	assert_int_equal(fake.nr_samples, 2);
}

/* A wrap the platform did not signal is found at the deadline, once */
static void test_profile_wrap_found_at_deadline(void **state)
{
	(void)state;
	fake.lose_of = true;
	assert_int_not_equal(v->deadline, UINT64_MAX);
	fake_advance(PERIOD + 10);
	fake.now = v->deadline;
	vpmu_timer(v);
	assert_int_equal(fake.nr_samples, 1);
	vpmu_timer(v);
	assert_int_equal(fake.nr_samples, 1);
	assert_int_equal(fake.nr_lcofi, 0);
}

/* A wrap found as the vCPU is put: a sample, and the next load starts a fresh period */
static void test_profile_wrap_at_put(void **state)
{
	(void)state;
	fake.lose_of = true;
	fake_advance(PERIOD + 10);
	vpmu_vcpu_put(v);
	assert_int_equal(fake.nr_samples, 1);
	assert_false(fake.c[PCTR].running);
	vpmu_vcpu_load(v);
	assert_true(fake.c[PCTR].running);
	assert_int_equal(fake.c[PCTR].value, -(uint64_t)PERIOD);
	assert_int_equal(fake.nr_lcofi, 0);
}

/* Put and load keep the count: a period spans vCPU switches */
static void test_profile_period_spans_switches(void **state)
{
	(void)state;
	fake_advance(600);
	vpmu_vcpu_put(v);
	fake_advance(5000); /* another vCPU runs: not counted */
	vpmu_vcpu_load(v);
	assert_int_equal(fake.nr_samples, 0);
	fake_advance(400);
	vpmu_overflow_irq(v);
	assert_int_equal(fake.nr_samples, 1);
}

/*
 * A vCPU of another guest takes the physical counter while v is away; v's
 * next load takes it back, with the count it had
 */
static void test_profile_counter_taken_back(void **state)
{
	struct vpmu *w;
	unsigned int i;

	(void)state;
	fake_advance(600);
	w = switch_to_other();
	vpmu_vcpu_set_guest(w, 1);
	for (i = 3; i <= PCTR; i++)
		assert_int_equal(vpmu_counter_config_matching(w, i, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH,
							      EV_DTLB_RD, 0)
					 .error,
				 SBI_SUCCESS);
	assert_int_equal(fake.c[PCTR].event_idx, EV_DTLB_RD);
	vpmu_vcpu_put(w);
	vpmu_vcpu_load(v);
	assert_int_equal(fake.c[PCTR].event_idx, EV_CYCLES);
	assert_int_equal(fake.c[PCTR].value, -(uint64_t)PERIOD + 600);
	assert_true(fake.c[PCTR].running);
}

/*
 * The guest's own cycles: on QEMU an event counts on one programmable
 * counter per hart, and the guest's come first. Its counter gets the event
 * (the sampling counter gives it up and stands still), and the sampling
 * counter counts again once the guest's is gone.
 */
static void test_profile_gives_way_to_guest_event(void **state)
{
	unsigned long c;

	(void)state;
	fake_advance(300);
	c = cfg_start(0, GUEST_HW, EV_CYCLES, -(uint64_t)5000);
	assert_int_equal(c, 3); /* a programmable counter: it can sample */
	assert_false(fake.c[PCTR].configured);
	assert_int_equal(v->ctr[PCTR].value, -(uint64_t)PERIOD + 300); /* saved */
	fake_advance(PERIOD);
	vpmu_overflow_irq(v);
	assert_int_equal(fake.nr_samples, 0);
	assert_int_equal(vpmu_ctr_value(v, 3), -(uint64_t)5000 + PERIOD);
	vpmu_timer(v); /* the guest's counter still has the event: no change */
	assert_false(fake.c[PCTR].configured);
	fake_advance(4000);
	vpmu_overflow_irq(v);
	assert_int_equal(fake.nr_lcofi, 1); /* the guest's own wrap, its own LCOFI */
	assert_int_equal(v->overflow, 1U << 3);
	/* Linux's del: the sampling counter is back at the next tick, where it stopped */
	assert_int_equal(STOP(3, 1, SBI_PMU_STOP_FLAG_RESET).error, SBI_SUCCESS);
	vpmu_timer(v);
	assert_true(fake.c[PCTR].running);
	assert_int_equal(fake.c[PCTR].event_idx, EV_CYCLES);
	assert_int_equal(fake.c[PCTR].value, -(uint64_t)PERIOD + 300);
	fake_advance(PERIOD - 300);
	vpmu_overflow_irq(v);
	assert_int_equal(fake.nr_samples, 1);
}

/* A reset (reboot, HSM stop) forgets the guest's counters, not the profile */
static void test_profile_survives_reset(void **state)
{
	(void)state;
	cfg_start(3, 1, EV_INSTR, 0);
	vpmu_vcpu_reset(v);
	assert_int_equal(vpmu_profile_counter(v), PCTR);
	assert_true(fake.c[PCTR].running);
	assert_int_equal(fake.c[PCTR].value, -(uint64_t)PERIOD);
	assert_int_equal(INFO(PCTR).error, SBI_ERR_INVALID_PARAM);
	fake_advance(PERIOD);
	vpmu_overflow_irq(v);
	assert_int_equal(fake.nr_samples, 1);
}

/* The guest's STOP of everything, with RESET, leaves the sampling counter running */
static void test_profile_guest_stops_all(void **state)
{
	(void)state;
	cfg_start(3, 1, EV_INSTR, 0);
	assert_int_equal(STOP(0, HWMASK, SBI_PMU_STOP_FLAG_RESET).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(STOP(3, 1, SBI_PMU_STOP_FLAG_RESET).error, SBI_SUCCESS);
	assert_true(fake.c[PCTR].running);
	assert_int_equal(v->started_hw, 1U << PCTR);
}

/* Without Sscofpmf there is no wrap to sample: no profile, every counter the guest's */
static void test_profile_needs_sscofpmf(void **state)
{
	(void)state;
	fake_reset();
	fake.sscofpmf = false;
	reboot_host();
	vpmu_vcpu_set_policy(v, &pol);
	check(v);
	assert_int_equal(vpmu_profile_counter(v), 0);
	assert_int_equal(INFO(PCTR).error, SBI_SUCCESS);
}

/* A period the counter cannot hold, or a firmware event: no profile */
static void test_profile_refused_settings(void **state)
{
	(void)state;
	pol.profile.event_idx = (uint32_t)EV_FW(5);
	vpmu_vcpu_set_policy(v, &pol);
	check(v);
	assert_int_equal(vpmu_profile_counter(v), 0);
	assert_false(fake.c[PCTR].running);
	assert_int_equal(INFO(PCTR).error, SBI_SUCCESS);
	fake_reset();
	fake.prog_width = 40;
	reboot_host();
	pol.profile.event_idx = EV_CYCLES;
	pol.profile.period = 1ULL << 41;
	vpmu_vcpu_set_policy(v, &pol);
	check(v);
	assert_int_equal(vpmu_profile_counter(v), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TP(test_profile_counter_is_not_offered),
		TP(test_profile_counter_is_not_readable),
		TP(test_profile_wrap_is_a_sample),
		TP(test_profile_wrap_found_at_deadline),
		TP(test_profile_wrap_at_put),
		TP(test_profile_period_spans_switches),
		TP(test_profile_counter_taken_back),
		TP(test_profile_gives_way_to_guest_event),
		TP(test_profile_survives_reset),
		TP(test_profile_guest_stops_all),
		TP(test_profile_needs_sscofpmf),
		TP(test_profile_refused_settings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
