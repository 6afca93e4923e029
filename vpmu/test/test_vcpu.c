/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of vpmu/vcpu.c: a vCPU's vPMU over its life. hcounteren,
 * load / put (lazy: counters stay configured on the hart), two vCPUs on one
 * hart, migration between harts, reset (reboot, HSM stop) and the policy.
 */

#include "helpers.h"

/* ----------------------------------------------------------- hcounteren */

static void test_hcounteren_rules(void **state)
{
	(void)state;
	assert_int_equal(vpmu_hcounteren(v), 0);
	CFG(3, 1, 0, EV_INSTR, 0);
	/* configured only: the physical value is stale, reads must trap */
	assert_int_equal(vpmu_hcounteren(v), 0);
	START(3, 1, 0, 0);
	assert_int_equal(vpmu_hcounteren(v), 1UL << 3);
	assert_int_equal(fake.counteren, 1UL << 3);
	fake_advance(10);
	STOP(3, 1, 0);
	/* stopped after counting: the physical counter holds the value */
	assert_int_equal(vpmu_hcounteren(v), 1UL << 3);
	assert_int_equal(fake.c[3].value, vpmu_ctr_value(v, 3));
	/* CLEAR_VALUE makes them differ again */
	CFG(3, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH | SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_INSTR, 0);
	assert_int_equal(vpmu_hcounteren(v), 0);
	START(3, 1, 0, 0);
	cfg_start(0, ALLMASK, EV_FW(10), 0);
	assert_int_equal(vpmu_hcounteren(v), 1UL << 3); /* fw counters: no bits */
	STOP(3, 1, SBI_PMU_STOP_FLAG_RESET);
	assert_int_equal(vpmu_hcounteren(v), 0);
	assert_int_equal(fake.counteren, 0);
}

static void test_hcounteren_keeps_tm(void **state)
{
	(void)state;
	fake.counteren = 2;
	cfg_start(3, 1, EV_INSTR, 0);
	assert_int_equal(fake.counteren, 2 | (1UL << 3));
	vpmu_vcpu_put(v);
	assert_int_equal(fake.counteren, 2);
	assert_int_equal(vpmu_hcounteren(v) & 2, 0);
}

static void test_hcounteren_start_failure(void **state)
{
	(void)state;
	CFG(3, 1, 0, EV_INSTR, 0);
	fake.fail_start = 1;
	assert_int_equal(START(3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 9).error, SBI_SUCCESS);
	assert_int_equal(vpmu_hcounteren(v), 0);
	assert_int_equal(vpmu_ctr_value(v, 3), 9);
}

/* ----------------------------------------------------------- load / put */

static void test_put_stops_keeps_resident(void **state)
{
	unsigned long val;

	(void)state;
	cfg_start(3, 1, EV_INSTR, 100);
	cfg_start(0, 1, EV_CYCLES, 5);
	CFG(4, 1, 0, EV_DTLB_RD, 0);
	fake_advance(20);
	vpmu_vcpu_put(v);
	assert_false(v->loaded);
	/* lazy: stopped in one call, still configured on this hart */
	assert_true(fake_busy(3));
	assert_true(fake_busy(4));
	assert_false(fake.c[3].running);
	assert_false(fake.c[0].running);
	assert_int_equal(vpmu_hcounteren(v), 0);
	fake_advance(1000); /* someone else runs */
	assert_int_equal(vpmu_csr_read(v, 0xc03, &val), 0);
	assert_int_equal(val, 120);
	assert_int_equal(vpmu_ctr_value(v, 0), 25);
	fake.n_config = fake.n_start = 0;
	vpmu_vcpu_load(v);
	/* nobody used the hart's counters: one start, no configuration */
	assert_int_equal(fake.n_config, 0);
	assert_int_equal(fake.n_start, 1);
	assert_true(fake.c[3].running);
	assert_int_equal(fake.c[3].value, 120);
	assert_true(fake_busy(4));
	assert_false(fake.c[4].running);
	assert_int_equal(vpmu_hcounteren(v), (1UL << 3) | 1);
	fake_advance(1);
	assert_int_equal(vpmu_ctr_value(v, 3), 121);
	assert_int_equal(vpmu_ctr_value(v, 0), 26);
}

static void test_put_twice_harmless(void **state)
{
	(void)state;
	cfg_start(3, 1, EV_INSTR, 0);
	vpmu_vcpu_put(v);
	vpmu_vcpu_put(v);
	vpmu_vcpu_load(v);
	assert_true(fake.c[3].running);
}

/* Counter 3 counted instructions from 100 to 105 and stopped, in place */
static void counted_105_stopped(void)
{
	cfg_start(3, 1, EV_INSTR, 100);
	fake_advance(5);
	STOP(3, 1, 0);
}

/*
 * A stop leaves a counter whose physical value is not its own unsynced:
 * direct reads would see that value. Two ways to get one: a start the host
 * refused, and a start with a new value while the vCPU was put.
 */
static void test_stop_keeps_counter_unsynced(void **state)
{
	unsigned long val;

	(void)state;
	counted_105_stopped();
	assert_int_equal(fake.counteren, 1UL << 3); /* stopped in place: 105 */
	fake.fail_start = 1;
	assert_int_equal(START(3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 500).error, SBI_SUCCESS);
	fake.fail_start = 0;
	assert_int_equal(fake.counteren, 0);
	assert_int_equal(STOP(3, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(fake.c[3].value, 105);
	assert_int_equal(fake.counteren, 0);
	assert_int_equal(vpmu_hcounteren(v), 0);
	assert_int_equal(vpmu_csr_read(v, 0xc03, &val), 0);
	assert_int_equal(val, 500);

	vpmu_vcpu_put(v);
	START(3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 1000);
	STOP(3, 1, 0);
	vpmu_vcpu_load(v);
	assert_int_equal(vpmu_hcounteren(v), 0);
	assert_int_equal(fake.counteren, 0);
	assert_int_equal(vpmu_csr_read(v, 0xc03, &val), 0);
	assert_int_equal(val, 1000);
	START(3, 1, 0, 0); /* from its value: in place again */
	assert_int_equal(fake.c[3].value, 1000);
	assert_int_equal(fake.counteren, 1UL << 3);
}

static void test_put_load_stopped_counter(void **state)
{
	unsigned long val;

	(void)state;
	counted_105_stopped();
	vpmu_vcpu_put(v);
	/* another vCPU configures the same physical counter: v's is evicted */
	vpmu_vcpu_init(&other_vc.vpmu);
	vpmu_vcpu_load(&other_vc.vpmu);
	assert_int_equal(vpmu_counter_config_matching(&other_vc.vpmu, 3, 1, 0, EV_INSTR, 0).value,
			 3);
	assert_int_equal(
		vpmu_counter_start(&other_vc.vpmu, 3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 999),
		SBI_SUCCESS);
	vpmu_vcpu_put(&other_vc.vpmu);
	vpmu_vcpu_load(v);
	/* stopped, and the physical value is not ours: reads trap and emulate */
	assert_int_equal(vpmu_hcounteren(v), 0);
	assert_int_equal(vpmu_csr_read(v, 0xc03, &val), 0);
	assert_int_equal(val, 105);
	START(3, 1, 0, 0);
	assert_int_equal(fake.c[3].value, 105);
	assert_int_equal(vpmu_hcounteren(v), 1UL << 3);
}

static void test_two_vcpus_share_hart(void **state)
{
	struct vpmu *w;

	(void)state;
	w = other_takes_counter_3(0, 10);
	assert_int_equal(vpmu_counter_start(w, 3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 500),
			 SBI_SUCCESS);
	fake_advance(1);
	vpmu_vcpu_put(w);
	assert_int_equal(vpmu_ctr_value(w, 3), 501);
	vpmu_vcpu_load(v);
	assert_int_equal(fake.c[3].event_idx, EV_INSTR);
	fake_advance(2);
	assert_int_equal(vpmu_ctr_value(v, 3), 12);
}

static void test_fw_counts_while_put(void **state)
{
	(void)state;
	cfg_start(0, ALLMASK, EV_FW(SBI_PMU_FW_IPI_RCVD), 0);
	vpmu_vcpu_put(v);
	vpmu_fw_event(v, SBI_PMU_FW_IPI_RCVD, 1);
	vpmu_vcpu_load(v);
	assert_int_equal(FWREAD(FW0).value, 1);
}

/* ------------------------------------------------------------ migration */

/* A vCPU that moves to another hart is configured there from its saved value */
static void test_move_to_other_hart(void **state)
{
	(void)state;
	cfg_start(3, 1, EV_INSTR, 40);
	fake_advance(2);
	vpmu_vcpu_put(v);
	fake_set_hart(1); /* the fake's counters stand for the new hart's now */
	fake.c[3].configured = false;
	fake.c[3].value = 0;
	fake.n_config = 0;
	vpmu_vcpu_load(v);
	assert_int_equal(fake.n_config, 1);
	assert_true(fake.c[3].running);
	assert_int_equal(vpmu_ctr_value(v, 3), 42);
	assert_int_equal(fake_hart->owner[3], v);
	vpmu_vcpu_put(v); /* loaded means on fake_hart (on_this_hart relies on it) */
	fake_set_hart(0);
}

/*
 * Migration A -> B -> A: the counter the vCPU left configured on A is its
 * own stale entry there; coming back must reuse it, not find it busy (the
 * refusal used to be cached for every guest until power-off).
 */
static void test_migrate_back_and_forth(void **state)
{
	(void)state;
	two_harts();
	cfg_start(3, 1, EV_INSTR, 100);
	fake_advance(10);
	for (int round = 0; round < 3; round++) {
		vpmu_vcpu_put(v);
		run_on_hart(1);
		vpmu_vcpu_load(v);
		assert_true(fake.c[3].running);
		fake_advance(10);
		vpmu_vcpu_put(v);
		run_on_hart(0);
		vpmu_vcpu_load(v);
		assert_true(fake.c[3].running);
		assert_int_equal(fake.map[2], 3); /* QEMU counts instret there */
		fake_advance(10);
	}
	assert_int_equal(vpmu_ctr_value(v, 3), 170);
	assert_int_equal(fake_hart->owner[3], v); /* hart 0's, where it runs again */
	/* the same event on the same counter, for another vCPU, still works */
	assert_int_equal(STOP(3, 1, SBI_PMU_STOP_FLAG_RESET).error, SBI_SUCCESS);
	vpmu_vcpu_put(v);
	vpmu_vcpu_init(&other_vc.vpmu);
	vpmu_vcpu_load(&other_vc.vpmu);
	assert_int_equal(vpmu_counter_config_matching(&other_vc.vpmu, 3, 1, 0, EV_INSTR, 0).value,
			 3);
	vpmu_vcpu_put(&other_vc.vpmu);
	run_on_hart(0);
}

/*
 * A vCPU reset on a hart other than the one its counters are configured
 * on (a guest reboot or HSM stop handled there): nothing stays refused.
 */
static void test_reset_on_other_hart(void **state)
{
	(void)state;
	two_harts();
	cfg_start(3, 1, EV_INSTR, 0);
	cfg_start(4, 1, EV_DTLB_RD, 0);
	vpmu_vcpu_put(v);
	run_on_hart(1);
	vpmu_vcpu_reset(v); /* not loaded, resident on hart 0 */
	run_on_hart(0);
	vpmu_vcpu_load(v);
	assert_int_equal(CFG(3, 1, 0, EV_INSTR, 0).value, 3);
	assert_int_equal(CFG(4, 1, 0, EV_DTLB_RD, 0).value, 4);
	assert_int_equal(START(3, 3, SBI_PMU_START_FLAG_SET_INIT_VALUE, 5).error, SBI_SUCCESS);
	fake_advance(2);
	assert_int_equal(vpmu_ctr_value(v, 3), 7);
	assert_int_equal(vpmu_ctr_value(v, 4), 7);
}

/* ----------------------------------------------------- reset and policy */

static void test_vcpu_reset(void **state)
{
	(void)state;
	cfg_start(3, 1, EV_INSTR, 0);
	cfg_start(0, ALLMASK, EV_FW(8), 0);
	assert_int_equal(SHMEM_SET(SHMEM, 0, 0).error, SBI_SUCCESS);
	vpmu_vcpu_reset(v);
	assert_true(v->loaded);
	assert_false(fake_busy(3));
	assert_int_equal(FWREAD(FW0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(STOP(3, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT).error, SBI_ERR_NO_SHMEM);
	assert_int_equal(vpmu_hcounteren(v), 0);
	assert_int_equal(fake.counteren, 0);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_INSTR, 0).value, 3);
}

/* A wrap the reset's own stop finds is counted like any other: one LCOFI, one overflow */
static void test_vcpu_reset_counts_its_overflow(void **state)
{
	(void)state;
	fake.lose_of = true; /* nothing flags the wrap: the reset's save finds it */
	cfg_start(3, 1, EV_INSTR, -2UL);
	fake_advance(5);
	assert_int_equal(v->nr_overflows, 0);
	vpmu_vcpu_reset(v);
	assert_int_equal(fake.nr_lcofi, 1);
	assert_int_equal(v->nr_overflows, 1);
}

/* A reset (HSM stop, reboot) keeps the guest's policy, and what it hides stays hidden */
static void test_reset_keeps_policy(void **state)
{
	static const struct vpmu_policy pol = {.counters_mask = 0x18, .no_firmware = true};

	(void)state;
	vpmu_vcpu_set_policy(v, &pol);
	assert_int_equal(NUM().value, NHW);
	assert_int_equal(INFO(5).error, SBI_ERR_INVALID_PARAM);
	vpmu_vcpu_reset(v);
	assert_int_equal(NUM().value, NHW);
	assert_int_equal(INFO(3).error, SBI_SUCCESS);
	assert_int_equal(INFO(5).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(CFG(0, 0x18, 0, EV_DTLB_RD, 0).value, 3);
	vpmu_vcpu_set_policy(v, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_hcounteren_rules),
		T(test_hcounteren_keeps_tm),
		T(test_hcounteren_start_failure),
		T(test_put_stops_keeps_resident),
		T(test_put_twice_harmless),
		T(test_stop_keeps_counter_unsynced),
		T(test_put_load_stopped_counter),
		T(test_two_vcpus_share_hart),
		T(test_fw_counts_while_put),
		T(test_move_to_other_hart),
		T(test_migrate_back_and_forth),
		T(test_reset_on_other_hart),
		T(test_vcpu_reset),
		T(test_vcpu_reset_counts_its_overflow),
		T(test_reset_keeps_policy),
	};

	return cmocka_run_group_tests_name("vpmu_vcpu", tests, NULL, NULL);
}
