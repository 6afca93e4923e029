/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of vpmu/sbi.c: the SBI PMU functions' argument checks,
 * NUM_COUNTERS, COUNTER_GET_INFO, CONFIG_MATCHING (flags, errors, which
 * counter of the set it takes), START and STOP of one counter and the
 * counter state machine, FW_READ(_HI) and firmware events, the dispatcher.
 */

#include "helpers.h"

/* ------------------------------------ NUM_COUNTERS and COUNTER_GET_INFO */

static void test_num_counters(void **state)
{
	struct sbi_ret r = NUM();

	(void)state;
	assert_int_equal(r.error, SBI_SUCCESS);
	assert_int_equal(r.value, NTOT);
	assert_true(r.value < 64);
}

static void test_get_info_hw(void **state)
{
	struct sbi_ret r;
	unsigned long i;

	(void)state;
	r = INFO(0);
	assert_int_equal(r.error, SBI_SUCCESS);
	assert_int_equal(SBI_PMU_CTR_INFO_CSR(r.value), 0xc00);
	assert_int_equal(SBI_PMU_CTR_INFO_WIDTH(r.value), 63);
	assert_int_equal(r.value >> 63, 0);
	r = INFO(2);
	assert_int_equal(SBI_PMU_CTR_INFO_CSR(r.value), 0xc02);
	for (i = 3; i < NHW; i++) {
		r = INFO(i);
		assert_int_equal(r.error, SBI_SUCCESS);
		assert_int_equal(SBI_PMU_CTR_INFO_CSR(r.value), 0xc00 + i);
	}
}

static void test_get_info_time_invalid(void **state)
{
	(void)state;
	assert_int_equal(INFO(1).error, SBI_ERR_INVALID_PARAM);
}

static void test_get_info_fw(void **state)
{
	unsigned long i;

	(void)state;
	for (i = FW0; i < NTOT; i++) {
		struct sbi_ret r = INFO(i);

		assert_int_equal(r.error, SBI_SUCCESS);
		assert_true(r.value & SBI_PMU_CTR_INFO_FW);
		assert_int_equal(SBI_PMU_CTR_INFO_CSR(r.value), 0);
		assert_int_equal(SBI_PMU_CTR_INFO_WIDTH(r.value), 63);
	}
}

static void test_get_info_out_of_range(void **state)
{
	(void)state;
	assert_int_equal(INFO(NTOT).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(INFO(63).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(INFO(~0UL).error, SBI_ERR_INVALID_PARAM);
}

static void test_get_info_true_width(void **state)
{
	(void)state;
	fake_reset();
	fake.prog_width = 48;
	vpmu_global_init();
	assert_int_equal(SBI_PMU_CTR_INFO_WIDTH(INFO(3).value), 47);
	assert_int_equal(SBI_PMU_CTR_INFO_WIDTH(INFO(0).value), 63);
	/* no programmable counter is 64 bits wide: none is biased (QEMU quirk `bias`) */
	assert_int_equal(fake.wide, 0);
}

/* ------------------------------------------------------ CONFIG_MATCHING */

static void test_cfg_reserved_flags(void **state)
{
	(void)state;
	assert_int_equal(CFG(0, ALLMASK, 1UL << 8, EV_INSTR, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(CFG(0, ALLMASK, 1UL << 63, EV_INSTR, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(fake.n_config, 0);
}

static void test_cfg_invalid_sets(void **state)
{
	(void)state;
	assert_int_equal(CFG(0, 0, 0, EV_INSTR, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(CFG(NTOT, 1, 0, EV_FW(5), 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(CFG(NTOT - 1, 3, 0, EV_FW(5), 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(CFG(~0UL, 1, 0, EV_FW(5), 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(CFG(2, 1UL << 63, 0, EV_FW(5), 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(CFG(1, 1, 0, EV_INSTR, 0).error, SBI_ERR_INVALID_PARAM);    /* time */
	assert_int_equal(CFG(0, ~0UL, 0, EV_INSTR, 0).error, SBI_ERR_INVALID_PARAM); /* has 1 */
}

static void test_cfg_filter_translation(void **state)
{
	(void)state;
	assert_int_equal(CFG(3, 1, 0, EV_INSTR, 0).value, 3);
	assert_int_equal(fake.c[3].flags, BASE_INH);
	assert_int_equal(CFG(4, 1, SBI_PMU_CFG_FLAG_SET_SINH, EV_INSTR, 0).value, 4);
	assert_int_equal(fake.c[4].flags, BASE_INH | SBI_PMU_CFG_FLAG_SET_VSINH);
	assert_int_equal(CFG(5, 1, SBI_PMU_CFG_FLAG_SET_UINH, EV_INSTR, 0).value, 5);
	assert_int_equal(fake.c[5].flags, BASE_INH | SBI_PMU_CFG_FLAG_SET_VUINH);
	assert_int_equal(
		CFG(0, 1, SBI_PMU_CFG_FLAG_SET_SINH | SBI_PMU_CFG_FLAG_SET_UINH, EV_CYCLES, 0)
			.value,
		0);
	assert_int_equal(fake.c[0].flags,
			 BASE_INH | SBI_PMU_CFG_FLAG_SET_VSINH | SBI_PMU_CFG_FLAG_SET_VUINH);
}

static void test_cfg_guest_vsinh_vuinh_minh_ignored(void **state)
{
	(void)state;
	assert_int_equal(CFG(3, 1,
			     SBI_PMU_CFG_FLAG_SET_VSINH | SBI_PMU_CFG_FLAG_SET_VUINH |
				     SBI_PMU_CFG_FLAG_SET_MINH,
			     EV_INSTR, 0)
				 .error,
			 SBI_SUCCESS);
	assert_int_equal(fake.c[3].flags, BASE_INH);
}

static void test_cfg_skip_match(void **state)
{
	unsigned int n_config;

	(void)state;
	/* Linux legacy mode: instructions on counter 2, cycles on 0 */
	assert_int_equal(CFG(2, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_INSTR, 0).value, 2);
	assert_int_equal(CFG(0, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_CYCLES, 0).value, 0);
	/* the first counter of the set, whatever follows */
	assert_int_equal(CFG(8, 0xf0, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_INSTR, 0).value, 12);
	/* SKIP_MATCH reconfigures a stopped counter */
	assert_int_equal(CFG(12, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_DTLB_RD, 0).value, 12);
	assert_int_equal(fake.c[12].event_idx, EV_DTLB_RD);
	/* but not a started one */
	assert_int_equal(START(12, 1, 0, 0).error, SBI_SUCCESS);
	assert_int_equal(CFG(12, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_INSTR, 0).error,
			 SBI_ERR_NOT_SUPPORTED);
	assert_true(fake.c[12].running);
	/* wrong kind of counter: refused before the host is asked (it would refuse too) */
	n_config = fake.n_config;
	assert_int_equal(CFG(3, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_FW(5), 0).error,
			 SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(fake.n_config, n_config);
	assert_false(fake.c[3].configured);
	assert_int_equal(CFG(FW0, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_INSTR, 0).error,
			 SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(CFG(FW0, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_FW(5), 0).value, FW0);
}

static void test_cfg_skip_match_refused_keeps_old(void **state)
{
	(void)state;
	assert_int_equal(CFG(3, 1, 0, EV_DTLB_RD, 0).value, 3);
	assert_int_equal(CFG(3, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_RAW, 0x999).error,
			 SBI_ERR_NOT_SUPPORTED);
	assert_true(fake.c[3].configured);
	assert_int_equal(fake.c[3].event_idx, EV_DTLB_RD);
	assert_int_equal(START(3, 1, 0, 0).error, SBI_SUCCESS);
}

static void test_cfg_busy_counters_skipped(void **state)
{
	unsigned int i;

	(void)state;
	/* started counters are busy; configured but stopped ones would be reused */
	assert_int_equal(CFG(0, ALLMASK, AUTO, EV_INSTR, 0).value, 3);
	assert_int_equal(CFG(0, ALLMASK, AUTO, EV_INSTR, 0).value, 2);
	for (i = 4; i < NHW; i++)
		assert_int_equal(CFG(0, ALLMASK, AUTO, EV_INSTR, 0).value, i);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_INSTR, 0).error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_DTLB_RD, 0).error, SBI_ERR_NOT_SUPPORTED);
	/* a stopped one is taken again, reconfigured */
	assert_int_equal(STOP(7, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_DTLB_RD, 0).value, 7);
	assert_int_equal(fake.c[7].event_idx, EV_DTLB_RD);
}

/* Configured but stopped firmware counters are matched again (D6) */
static void test_cfg_reuses_stopped_counters(void **state)
{
	unsigned int e, n = 0;

	(void)state;
	for (e = 4; e <= 13; e++)
		assert_int_equal(CFG(FW0, FWMASK >> FW0, 0, EV_FW(e), 0).value, FW0 + n++);
	for (; n < 22; n++)
		assert_int_equal(CFG(FW0, FWMASK >> FW0, 0, EV_FW(5), 0).value, FW0 + n);
	/* every firmware counter configured, none started: one is reconfigured */
	assert_int_equal(CFG(FW0, FWMASK >> FW0, 0, EV_FW(6), 0).value, FW0);
	assert_int_equal(START(FW0, FWMASK >> FW0, 0, 0).error, SBI_SUCCESS);
	/* all started: nothing left */
	assert_int_equal(CFG(FW0, FWMASK >> FW0, 0, EV_FW(6), 0).error, SBI_ERR_NOT_SUPPORTED);
}

static void test_cfg_clear_value(void **state)
{
	unsigned long i;

	(void)state;
	i = cfg_start(0, ALLMASK, EV_INSTR, 100);
	fake_advance(50);
	assert_int_equal(STOP(i, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(vpmu_ctr_value(v, i), 150);
	/* reconfigure without CLEAR_VALUE keeps the value, with it zeroes */
	assert_int_equal(CFG(i, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_INSTR, 0).value, i);
	assert_int_equal(vpmu_ctr_value(v, i), 150);
	assert_int_equal(
		CFG(i, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH | SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_INSTR, 0)
			.value,
		i);
	assert_int_equal(vpmu_ctr_value(v, i), 0);
}

/*
 * CLEAR_VALUE on a firmware counter at index 32 or more (35 here: FW0 +
 * 16) touches that counter alone: it once cleared the synced bit of
 * hardware counter idx - 32, so counter 3's stop skipped its physical stop
 * and lost the counts since its start.
 */
static void test_cfg_clear_value_fw_above_31(void **state)
{
	const unsigned long fw = 35;

	(void)state;
	assert_int_equal(CFG(3, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_INSTR, 0).value, 3);
	assert_int_equal(START(3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 100).error, SBI_SUCCESS);
	assert_int_equal(
		CFG(fw, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH | SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_FW(5), 0)
			.value,
		fw);
	assert_int_equal(vpmu_hcounteren(v) & (1UL << 3), 1UL << 3); /* still read directly */
	fake_advance(50);
	assert_int_equal(STOP(3, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(vpmu_ctr_value(v, 3), 150);
	assert_false(fake.c[3].running);
}

static void test_cfg_auto_start(void **state)
{
	struct sbi_ret r;

	(void)state;
	r = CFG(0, ALLMASK, SBI_PMU_CFG_FLAG_AUTO_START | SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_INSTR,
		0);
	assert_int_equal(r.error, SBI_SUCCESS);
	assert_true(fake.c[r.value].running);
	fake_advance(7);
	assert_int_equal(vpmu_ctr_value(v, r.value), 7);
	assert_int_equal(START(r.value, 1, 0, 0).error, SBI_ERR_ALREADY_STARTED);
	/* fw counter auto start */
	r = CFG(0, ALLMASK, SBI_PMU_CFG_FLAG_AUTO_START, EV_FW(SBI_PMU_FW_SET_TIMER), 0);
	assert_int_equal(r.value, FW0);
	vpmu_fw_event(v, SBI_PMU_FW_SET_TIMER, 1);
	assert_int_equal(FWREAD(FW0).value, 1);
}

static void test_cfg_event_data_from_a4(void **state)
{
	unsigned long args[6] = {0, ALLMASK, 0, EV_RAW, FAKE_RAW_OK, 0xffffffff};

	(void)state;
	assert_int_equal(vpmu_sbi_call(v, SBI_EXT_PMU_COUNTER_CFG_MATCH, args).value, 3);
	assert_int_equal(fake.c[3].event_data, FAKE_RAW_OK);
}

/* ---------------------------------------- START and STOP of one counter */

static void test_start_stop_counts(void **state)
{
	unsigned long i;
	unsigned long val;

	(void)state;
	i = cfg_start(0, ALLMASK, EV_INSTR, 1000);
	fake_advance(234);
	assert_int_equal(vpmu_csr_read(v, 0xc00 + i, &val), 0);
	assert_int_equal(val, 1234);
	assert_int_equal(STOP(i, 1, 0).error, SBI_SUCCESS);
	fake_advance(1000);
	assert_int_equal(vpmu_csr_read(v, 0xc00 + i, &val), 0);
	assert_int_equal(val, 1234);
	/* restart without SET_INIT_VALUE continues from the current value */
	assert_int_equal(START(i, 1, 0, 5).error, SBI_SUCCESS);
	fake_advance(6);
	assert_int_equal(vpmu_ctr_value(v, i), 1240);
}

static void test_start_flags(void **state)
{
	(void)state;
	CFG(3, 1, 0, EV_INSTR, 0);
	assert_int_equal(START(3, 1, 1UL << 2, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(
		START(3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE | SBI_PMU_START_FLAG_INIT_SNAPSHOT, 0)
			.error,
		SBI_ERR_INVALID_PARAM);
	assert_int_equal(START(3, 1, SBI_PMU_START_FLAG_INIT_SNAPSHOT, 0).error, SBI_ERR_NO_SHMEM);
	assert_false(fake.c[3].running);
}

static void test_start_invalid_sets(void **state)
{
	(void)state;
	assert_int_equal(START(0, 0, 0, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(START(NTOT, 1, 0, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(START(~0UL, 2, 0, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(START(0, 2, 0, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(START(1UL << 63, 1UL << 63, 0, 0).error, SBI_ERR_INVALID_PARAM);
}

static void test_start_init_value_width(void **state)
{
	(void)state;
	fake_reset();
	fake.prog_width = 48;
	reboot_host();
	cfg_start(3, 1, EV_INSTR, (1ULL << 48) + 5);
	assert_int_equal(vpmu_ctr_value(v, 3), 5);
	assert_int_equal(fake.c[3].value, 5);
}

static void test_stop_already_stopped(void **state)
{
	unsigned long i;

	(void)state;
	i = cfg_start(0, ALLMASK, EV_INSTR, 0);
	assert_int_equal(STOP(i, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(STOP(i, 1, 0).error, SBI_ERR_ALREADY_STOPPED);
	/* configured, never started */
	assert_int_equal(STOP(CFG(0, ALLMASK, 0, EV_INSTR, 0).value, 1, 0).error,
			 SBI_ERR_ALREADY_STOPPED);
	/* unconfigured counters are not running either */
	assert_int_equal(STOP(10, 1, 0).error, SBI_ERR_ALREADY_STOPPED);
}

static void test_stop_fw_already_stopped(void **state)
{
	struct sbi_ret r;

	(void)state;
	/* OpenSBI returns success here; the spec says ALREADY_STOPPED */
	r = CFG(0, ALLMASK, 0, EV_FW(SBI_PMU_FW_IPI_SENT), 0);
	assert_int_equal(START(r.value, 1, 0, 0).error, SBI_SUCCESS);
	assert_int_equal(STOP(r.value, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(STOP(r.value, 1, 0).error, SBI_ERR_ALREADY_STOPPED);
}

static void test_stop_flags_and_sets(void **state)
{
	(void)state;
	cfg_start(3, 1, EV_INSTR, 0);
	assert_int_equal(STOP(3, 1, 1UL << 2).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(STOP(3, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT).error, SBI_ERR_NO_SHMEM);
	assert_int_equal(STOP(3, 0, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(STOP(NTOT, 1, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(STOP(0, 2, 0).error, SBI_ERR_INVALID_PARAM);
	assert_true(fake.c[3].running);
}

/* A RESET counter whose OF bit is set is released: no stale flag in scountovf */
static void test_stop_reset_releases_overflowed(void **state)
{
	(void)state;
	cfg_start(3, 1, EV_INSTR, -2UL);
	fake_advance(5);
	assert_true(fake.c[3].of);
	assert_int_equal(STOP(3, 1, SBI_PMU_STOP_FLAG_RESET).error, SBI_SUCCESS);
	assert_false(fake_busy(3));
	assert_false(fake.c[3].of);
}

static void test_state_machine(void **state)
{
	(void)state;
	assert_int_equal(v->ctr[3].state, VPMU_CTR_UNCONFIGURED);
	assert_int_equal(STOP(3, 1, 0).error, SBI_ERR_ALREADY_STOPPED);
	assert_int_equal(START(3, 1, 0, 0).error, SBI_ERR_INVALID_PARAM);
	CFG(3, 1, 0, EV_INSTR, 0);
	assert_int_equal(v->ctr[3].state, VPMU_CTR_CONFIGURED);
	assert_int_equal((v->placed >> 3) & 1, 1);
	assert_int_equal(STOP(3, 1, 0).error, SBI_ERR_ALREADY_STOPPED);
	assert_int_equal(START(3, 1, 0, 0).error, SBI_SUCCESS);
	assert_int_equal(v->ctr[3].state, VPMU_CTR_STARTED);
	assert_int_equal(START(3, 1, 0, 0).error, SBI_ERR_ALREADY_STARTED);
	assert_int_equal(STOP(3, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(v->ctr[3].state, VPMU_CTR_CONFIGURED);
	assert_int_equal(START(3, 1, 0, 0).error, SBI_SUCCESS);
	assert_int_equal(STOP(3, 1, SBI_PMU_STOP_FLAG_RESET).error, SBI_SUCCESS);
	assert_int_equal(v->ctr[3].state, VPMU_CTR_UNCONFIGURED);
	assert_int_equal((v->placed >> 3) & 1, 0);
}

/* ---------------------------------------------------- firmware counters */

static void test_fw_counts_only_started(void **state)
{
	unsigned long i;

	(void)state;
	i = CFG(0, ALLMASK, 0, EV_FW(SBI_PMU_FW_SET_TIMER), 0).value;
	assert_int_equal(i, FW0);
	vpmu_fw_event(v, SBI_PMU_FW_SET_TIMER, 1);
	assert_int_equal(FWREAD(i).value, 0);
	assert_int_equal(START(i, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 10).error, SBI_SUCCESS);
	vpmu_fw_event(v, SBI_PMU_FW_SET_TIMER, 1);
	vpmu_fw_event(v, SBI_PMU_FW_SET_TIMER, 1);
	vpmu_fw_event(v, SBI_PMU_FW_IPI_SENT, 1);
	vpmu_fw_event(v, 99, 1);
	assert_int_equal(FWREAD(i).error, SBI_SUCCESS);
	assert_int_equal(FWREAD(i).value, 12);
	assert_int_equal(STOP(i, 1, 0).error, SBI_SUCCESS);
	vpmu_fw_event(v, SBI_PMU_FW_SET_TIMER, 1);
	assert_int_equal(FWREAD(i).value, 12);
	/* n events of a kind at once (the core folds posted events so): n added */
	assert_int_equal(START(i, 1, 0, 0).error, SBI_SUCCESS);
	vpmu_fw_event(v, SBI_PMU_FW_SET_TIMER, 1000000);
	vpmu_fw_event(v, SBI_PMU_FW_IPI_SENT, 5);
	assert_int_equal(FWREAD(i).value, 1000012);
}

/*
 * All 22 standard firmware events can be counted at once, each on its own
 * firmware counter: those the core posts (illegal instructions it injects,
 * SET_TIMER, IPIs, remote fences) and those it never sees (misaligned and
 * access faults go to the guest directly, a guest has no HFENCE), which
 * count 0 as on a host whose firmware never takes them (perf then
 * schedules every one of them, issue 29).
 */
static void test_fw_counted_events(void **state)
{
	unsigned int e, n = 0;

	(void)state;
	for (e = 0; e < SBI_PMU_FW_MAX; e++) {
		struct sbi_ret r = CFG(0, ALLMASK, SBI_PMU_CFG_FLAG_AUTO_START, EV_FW(e), 0);

		assert_int_equal(r.error, SBI_SUCCESS);
		assert_int_equal(r.value, FW0 + n++);
	}
	for (e = 0; e < SBI_PMU_FW_MAX; e++) {
		unsigned int k;

		for (k = 0; k <= e; k++)
			vpmu_fw_event(v, e, 1);
	}
	for (e = 0; e < SBI_PMU_FW_MAX; e++)
		assert_int_equal(FWREAD(FW0 + e).value, e + 1);
}

static void test_fw_two_counters_same_event(void **state)
{
	(void)state;
	cfg_start(0, ALLMASK, EV_FW(SBI_PMU_FW_ILLEGAL_INSN), 0);
	cfg_start(0, ALLMASK, EV_FW(SBI_PMU_FW_ILLEGAL_INSN), 100);
	vpmu_fw_event(v, SBI_PMU_FW_ILLEGAL_INSN, 1);
	assert_int_equal(FWREAD(FW0).value, 1);
	assert_int_equal(FWREAD(FW0 + 1).value, 101);
}

static void test_fw_read_errors(void **state)
{
	(void)state;
	cfg_start(3, 1, EV_INSTR, 0);
	assert_int_equal(FWREAD(3).error, SBI_ERR_INVALID_PARAM);   /* hardware */
	assert_int_equal(FWREAD(FW0).error, SBI_ERR_INVALID_PARAM); /* unconfigured */
	assert_int_equal(FWREAD(NTOT).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(FWREAD(1).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(FWREAD(~0UL).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(FWREADHI(3).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(FWREADHI(FW0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(FWREADHI(NTOT).error, SBI_ERR_INVALID_PARAM);
}

static void test_fw_read_hi_zero(void **state)
{
	(void)state;
	cfg_start(0, ALLMASK, EV_FW(8), 0xffffffffffULL);
	assert_int_equal(FWREAD(FW0).value, 0xffffffffffULL);
	assert_int_equal(FWREADHI(FW0).error, SBI_SUCCESS);
	assert_int_equal(FWREADHI(FW0).value, 0);
}

static void test_fw_reset_releases(void **state)
{
	(void)state;
	cfg_start(0, ALLMASK, EV_FW(8), 0);
	assert_int_equal(STOP(FW0, 1, SBI_PMU_STOP_FLAG_RESET).error, SBI_SUCCESS);
	assert_int_equal(FWREAD(FW0).error, SBI_ERR_INVALID_PARAM);
	vpmu_fw_event(v, 8, 1);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_FW(9), 0).value, FW0);
}

/* ----------------------------------------------------------- dispatcher */

static void test_unknown_fid(void **state)
{
	(void)state;
	assert_int_equal(call(9, 0, 0, 0, 0, 0).error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(call(~0UL, 0, 0, 0, 0, 0).error, SBI_ERR_NOT_SUPPORTED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_num_counters),
		T(test_get_info_hw),
		T(test_get_info_time_invalid),
		T(test_get_info_fw),
		T(test_get_info_out_of_range),
		T(test_get_info_true_width),
		T(test_cfg_reserved_flags),
		T(test_cfg_invalid_sets),
		T(test_cfg_filter_translation),
		T(test_cfg_guest_vsinh_vuinh_minh_ignored),
		T(test_cfg_skip_match),
		T(test_cfg_skip_match_refused_keeps_old),
		T(test_cfg_busy_counters_skipped),
		T(test_cfg_reuses_stopped_counters),
		T(test_cfg_clear_value),
		T(test_cfg_clear_value_fw_above_31),
		T(test_cfg_auto_start),
		T(test_cfg_event_data_from_a4),
		T(test_start_stop_counts),
		T(test_start_flags),
		T(test_start_invalid_sets),
		T(test_start_init_value_width),
		T(test_stop_already_stopped),
		T(test_stop_fw_already_stopped),
		T(test_stop_flags_and_sets),
		T(test_stop_reset_releases_overflowed),
		T(test_state_machine),
		T(test_fw_counts_only_started),
		T(test_fw_counted_events),
		T(test_fw_two_counters_same_event),
		T(test_fw_read_errors),
		T(test_fw_read_hi_zero),
		T(test_fw_reset_releases),
		T(test_unknown_fid),
	};

	return cmocka_run_group_tests_name("vpmu_sbi", tests, NULL, NULL);
}
