/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of vpmu/probe.c: the layout found at boot (counters, holes,
 * widths, counters the host cannot filter), the boot probes (what counts
 * where, other harts' instructions), hosts without a PMU or Sscofpmf.
 */

#include "helpers.h"

/* --------------------------------------------------------------- layout */

static void test_layout_probe(void **state)
{
	(void)state;
	assert_true(vpmu_available());
	assert_int_equal(vpmu_num_hw(), NHW);
	assert_int_equal(vpmu_num_total(), NTOT);
	assert_int_equal(vpmu_hw_valid_mask(), HWMASK);
	assert_true(vpmu_prog_counts(0)); /* QEMU 10: the first cycles counter of a hart counts */
	assert_true(vpmu_prog_counts(1));
}

static void test_layout_holes(void **state)
{
	(void)state;
	fake_reset();
	fake.hw_mask = 0x5 | (1U << 4) | (1U << 6); /* 0, 2, 4, 6 */
	fake.num_hw = 7;
	reboot_host();
	assert_int_equal(NUM().value, 7 + 22);
	assert_int_equal(INFO(3).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(INFO(5).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(INFO(4).error, SBI_SUCCESS);
	assert_true(INFO(7).value & SBI_PMU_CTR_INFO_FW);
	/* a hole in the set is an invalid counter */
	assert_int_equal(CFG(3, 1, 0, EV_INSTR, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(CFG(4, 1, 0, EV_INSTR, 0).value, 4);
}

/* Programmable counters 64 bits wide are the ones kept in the upper half */
static void test_wide_counters_told(void **state)
{
	(void)state;
	fake_reset();
	vpmu_global_init();
	assert_int_equal(fake.wide, HWMASK & ~7U);
}

/*
 * Counters the host cannot filter by mode (no Sscofpmf: OpenSBI sets no
 * inhibit bits on programmable counters; no Smcntrpmf: none on 0 and 2)
 * would count the hypervisor: they are not offered. NUM_COUNTERS shrinks
 * with them; the firmware counters follow the last hardware one.
 */
static void test_unfiltered_counters_hidden(void **state)
{
	(void)state;
	fake_reset();
	fake.sscofpmf = false;
	fake.unfiltered = 0x7fff8; /* the programmable ones */
	reboot_host();
	assert_int_equal(vpmu_hw_valid_mask(), 0x5);
	assert_int_equal(vpmu_num_hw(), 3);
	assert_int_equal(NUM().value, 3 + 22);
	assert_int_equal(INFO(3).value, FW_INFO);
	assert_int_equal(CFG(0, 0x5, 0, EV_INSTR, 0).value, 2);
	assert_int_equal(CFG(0, 0x5, 0, EV_DTLB_RD, 0).error, SBI_ERR_NOT_SUPPORTED);
	/* no hardware counter the host can filter: only firmware counters */
	fake_reset();
	fake.unfiltered = 0x7fffd;
	reboot_host();
	assert_int_equal(vpmu_hw_valid_mask(), 0);
	assert_int_equal(NUM().value, 3 + 22);
	assert_int_equal(INFO(0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(CFG(0, 0x7, 0, EV_CYCLES, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(CFG(3, 1, 0, EV_FW(5), 0).value, 3);
}

/* ---------------------------------------------------------- boot probes */

static void test_layout_prog_cycles_probe(void **state)
{
	(void)state;
	fake_reset();
	fake.prog_cycles_count = false;
	vpmu_global_init();
	assert_false(vpmu_prog_counts(0));
}

/* What the host can count where is known from the boot probe: no host call for a refusal */
static void test_cfg_capabilities_from_boot(void **state)
{
	unsigned int n = fake.n_config;

	(void)state;
	assert_int_equal(CFG(0, ALLMASK, 0, 0x10000, 0).error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(CFG(0, ALLMASK, 0, 0x10000, 0).error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(CFG(0, ALLMASK, 0, 0x5, 0).error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(fake.n_config, n);
	/* the probe released every programmable counter */
	for (unsigned int p = 3; p < NHW; p++)
		assert_false(fake_busy(p));
}

/* The cross-hart probe: only instruction-exact counters charged by a sleeping hart */
static void test_probe_other_harts(void **state)
{
	(void)state;
	vpmu_probe_other_harts();
	assert_false(vpmu_counts_other_harts());
	fake.charged = true;
	vpmu_probe_other_harts();
	assert_true(vpmu_counts_other_harts());
	for (unsigned int p = 3; p < NHW; p++)
		assert_false(fake_busy(p));
}

/* -------------------------------------- hosts without a PMU or Sscofpmf */

static void test_no_host_pmu(void **state)
{
	(void)state;
	fake_reset();
	fake.available = 0;
	vpmu_global_init();
	vpmu_vcpu_init(v);
	assert_false(vpmu_available());
	assert_false(vpmu_available());
	assert_int_equal(NUM().error, SBI_ERR_NOT_SUPPORTED);
}

/* Without Sscofpmf on the host: no scountovf, no overflow bits, no LCOFI */
static void test_no_sscofpmf(void **state)
{
	unsigned long val;

	(void)state;
	fake_reset();
	fake.sscofpmf = false;
	reboot_host();
	assert_false(vpmu_overflow_available());
	assert_int_equal(SHMEM_SET(SHMEM, 0, 0).error, SBI_SUCCESS);
	cfg_start(3, 1, EV_INSTR, -5UL);
	fake_advance(10);
	vpmu_overflow_irq(v);
	assert_int_equal(STOP(3, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT).error, SBI_SUCCESS);
	assert_int_equal(ram64(SHMEM), 0);
	assert_int_equal(fake.nr_lcofi, 0);
	assert_int_equal(vpmu_csr_read(v, VPMU_CSR_SCOUNTOVF, &val), -1);
}

/*
 * A host with Sscofpmf but only the fixed counters: the guest is not told
 * of Sscofpmf (no programmable counter needs it), so a wrap of cycles on
 * counter 0 raises nothing and leaves the snapshot's overflow bitmap 0.
 */
static void test_sscofpmf_without_programmable_counters(void **state)
{
	struct sbi_ret r;

	(void)state;
	fake_reset();
	fake.num_hw = 3;
	fake.hw_mask = 0x5;
	fake.cycles_map = 0;
	reboot_host();
	assert_false(vpmu_overflow_available());
	assert_int_equal(SHMEM_SET(SHMEM, 0, 0).error, SBI_SUCCESS);
	r = CFG(0, 1, 0, EV_CYCLES, 0);
	assert_int_equal(r.error, SBI_SUCCESS);
	assert_int_equal(r.value, 0);
	assert_int_equal(START(0, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -51UL).error, SBI_SUCCESS);
	fake_advance(1000);
	vpmu_overflow_irq(v);
	set_ram64(SHMEM, 0x5a5a5a5a5a5a5a5aULL); /* what the snapshot must overwrite */
	set_ram64(SHMEM + 8, 0x5a5a5a5a5a5a5a5aULL);
	assert_int_equal(STOP(0, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT).error, SBI_SUCCESS);
	assert_int_equal(ram64(SHMEM), 0);
	assert_int_equal(ram64(SHMEM + 8), 949); /* wrapped: 1000 counts from 51 below the top */
	assert_int_equal(fake.nr_lcofi, 0);
	assert_int_equal(v->nr_overflows, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_layout_probe),
		T(test_layout_holes),
		T(test_wide_counters_told),
		T(test_unfiltered_counters_hidden),
		T(test_layout_prog_cycles_probe),
		T(test_cfg_capabilities_from_boot),
		T(test_probe_other_harts),
		T(test_no_host_pmu),
		T(test_no_sscofpmf),
		T(test_sscofpmf_without_programmable_counters),
	};

	return cmocka_run_group_tests_name("vpmu_probe", tests, NULL, NULL);
}
