// SPDX-License-Identifier: BSD-2-Clause
/* pmu-api: START and STOP with their flags and state errors, FW_READ and FW_READ_HI */
#include "guest-tests/images/pmu-api/pmu-api.h"

/* ---------------------------------------------------------- START / STOP */
/* START and STOP of instructions on ins_set */
static void check_start_stop_hw(void)
{
	struct sbi_ret r, r2, r3;
	unsigned long idx, v0, v1, v2;

	r = gt_pmu_cfg(0, ins_set, SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_INSTRET, 0);
	idx = r.value;
	/* flag errors before anything starts */
	r = gt_pmu_start(idx, 1, 1UL << 2, 0);
	if (gt_native())
		gt_printf("pmu-api: native: start flag bit 2 -> %ld\n", r.error);
	else
		GT_CHECK_SBI("start-reserved-flag", r, SBI_ERR_INVALID_PARAM);
	if (!gt_native()) {
		r = gt_pmu_start(
			idx, 1,
			SBI_PMU_START_FLAG_SET_INIT_VALUE | SBI_PMU_START_FLAG_INIT_SNAPSHOT, 0);
		GT_CHECK_SBI("start-both-init-flags", r, SBI_ERR_INVALID_PARAM);
	}
	gt_pmu_stop(idx, 1, 0);
	r = gt_pmu_start(idx, 1, SBI_PMU_START_FLAG_INIT_SNAPSHOT, 0);
	GT_CHECK_SBI("start-init-snapshot-no-shmem", r, SBI_ERR_NO_SHMEM);
	gt_pmu_stop(idx, 1, 0);
	r = gt_pmu_start(idx, 0, 0, 0);
	if (gt_native())
		gt_printf("pmu-api: native: start mask 0 -> %ld\n", r.error);
	else
		GT_CHECK_SBI("start-mask-0", r, SBI_ERR_INVALID_PARAM);
	r = gt_pmu_start(num, 1, 0, 0);
	GT_CHECK_SBI("start-base-eq-num", r, SBI_ERR_INVALID_PARAM);

	/* counts, stops, continues */
	/* no check prints while the counter runs: the bound below is for the loop and two calls */
	r = gt_pmu_start(idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 100);
	r2 = gt_pmu_start(idx, 1, 0, 0);
	spin(10000);
	r3 = gt_pmu_stop(idx, 1, 0);
	v0 = gt_pmu_read_csr(idx);
	GT_CHECK_SBI("start-ok", r, SBI_SUCCESS);
	GT_CHECK_SBI("start-double-already-started", r2, SBI_ERR_ALREADY_STARTED);
	GT_CHECK_SBI("stop-ok", r3, SBI_SUCCESS);
	GT_CHECK_GE("stop-counted-loop", v0, 100 + 20000);
	if (!gt_native()) /* see SANE in pmu-api.h */
		GT_CHECK_LE("stop-counted-loop-sane", v0, 100 + 20000 + 2000);
	spin(10000);
	v1 = gt_pmu_read_csr(idx);
	GT_CHECK_EQ("stopped-does-not-advance", v1, v0);
	GT_CHECK_SBI("stop-double-already-stopped", gt_pmu_stop(idx, 1, 0),
		     SBI_ERR_ALREADY_STOPPED);
	r = gt_pmu_stop(idx, 1, 1UL << 2);
	if (gt_native())
		gt_printf("pmu-api: native: stop flag bit 2 -> %ld\n", r.error);
	else
		GT_CHECK_SBI("stop-reserved-flag", r, SBI_ERR_INVALID_PARAM);
	r = gt_pmu_stop(idx, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT);
	GT_CHECK_SBI("stop-take-snapshot-no-shmem", r, SBI_ERR_NO_SHMEM);
	r = gt_pmu_stop(num, 1, 0);
	GT_CHECK_SBI("stop-base-eq-num", r, SBI_ERR_INVALID_PARAM);
	/* start without SET_INIT_VALUE continues from the stopped value */
	gt_pmu_start(idx, 1, 0, 0);
	spin(10000);
	gt_pmu_stop(idx, 1, 0);
	v2 = gt_pmu_read_csr(idx);
	GT_CHECK_GE("restart-continues", v2, v0 + 20000);
	if (!gt_native()) /* see SANE in pmu-api.h */
		GT_CHECK_LE("restart-continues-sane", v2, v0 + 20000 + 2000);
	/* RESET releases: start refused, the counter is free again */
	GT_CHECK_SBI("stop-reset-ok", gt_pmu_stop(idx, 1, SBI_PMU_STOP_FLAG_RESET),
		     SBI_ERR_ALREADY_STOPPED);
	GT_CHECK_SBI("start-after-reset-invalid", gt_pmu_start(idx, 1, 0, 0),
		     SBI_ERR_INVALID_PARAM);
	if (!gt_native()) {
		gt_expect_trap(EXC_ILLEGAL_INSN);
		(void)gt_pmu_read_csr(idx);
		GT_CHECK_EQ("csr-after-reset-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
	}
	r = gt_pmu_cfg(idx, 1, 0, EV_INSTRET, 0);
	GT_CHECK_SBI("cfg-after-reset-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("cfg-after-reset-same-counter", r.value, idx);
	/* a started counter reset in one call */
	gt_pmu_start(idx, 1, 0, 0);
	GT_CHECK_SBI("stop-reset-started-ok", gt_pmu_stop(idx, 1, SBI_PMU_STOP_FLAG_RESET),
		     SBI_SUCCESS);
	GT_CHECK_SBI("start-unconfigured-invalid", gt_pmu_start(idx, 1, 0, 0),
		     SBI_ERR_INVALID_PARAM);
	/* FW_READ(_HI) of a hardware counter */
	r = gt_pmu_cfg(0, ins_set, 0, EV_INSTRET, 0);
	idx = r.value;
	r = gt_pmu_fw_read(idx);
	if (gt_native())
		gt_printf("pmu-api: native: fw_read of a hw counter -> %ld\n", r.error);
	else
		GT_CHECK_SBI("fw-read-hw-invalid", r, SBI_ERR_INVALID_PARAM);
	if (!gt_native())
		GT_CHECK_SBI("fw-read-hi-hw-invalid", gt_pmu_fw_read_hi(idx),
			     SBI_ERR_INVALID_PARAM);
	gt_pmu_release(idx);
}

/* START and STOP of a firmware counter, FW_READ and FW_READ_HI */
static void check_start_stop_fw(void)
{
	struct sbi_ret r;
	unsigned long f;

	r = gt_pmu_cfg(0, fw_set, SBI_PMU_CFG_FLAG_CLEAR_VALUE, GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER),
		       0);
	f = r.value;
	GT_CHECK_SBI("fw-read-configured", gt_pmu_fw_read(f), SBI_SUCCESS);
	GT_CHECK_EQ("fw-read-cleared-zero", gt_pmu_fw_read(f).value, 0);
	gt_pmu_start(f, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 40);
	r = gt_pmu_start(f, 1, 0, 0);
	if (gt_native()) /* OpenSBI 1.5: SUCCESS for a started firmware counter */
		gt_printf("pmu-api: native: fw double start -> %ld\n", r.error);
	else
		GT_CHECK_SBI("fw-start-double", r, SBI_ERR_ALREADY_STARTED);
	gt_sbi_set_timer(~0UL);
	GT_CHECK_EQ("fw-read-init-plus-1", gt_pmu_fw_read(f).value, 41);
	r = gt_pmu_fw_read_hi(f);
	GT_CHECK_SBI("fw-read-hi-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("fw-read-hi-zero", r.value, 0);
	GT_CHECK_SBI("fw-stop-ok", gt_pmu_stop(f, 1, 0), SBI_SUCCESS);
	r = gt_pmu_stop(f, 1, 0);
	if (gt_native()) /* platform.md: OpenSBI answers SUCCESS */
		gt_printf("pmu-api: native: fw double stop -> %ld\n", r.error);
	else
		GT_CHECK_SBI("fw-stop-double-already-stopped", r, SBI_ERR_ALREADY_STOPPED);
	gt_pmu_release(f);
	GT_CHECK_SBI("fw-read-after-reset-invalid", gt_pmu_fw_read(f), SBI_ERR_INVALID_PARAM);
	/* OpenSBI 1.5 answers FW_READ_HI with SUCCESS, 0 for any index on RV64 */
	if (!gt_native())
		GT_CHECK_SBI("fw-read-hi-after-reset-invalid", gt_pmu_fw_read_hi(f),
			     SBI_ERR_INVALID_PARAM);
	GT_CHECK_SBI("fw-start-after-reset-invalid", gt_pmu_start(f, 1, 0, 0),
		     SBI_ERR_INVALID_PARAM);
	GT_CHECK_SBI("fw-read-unconfigured-invalid", gt_pmu_fw_read(fw_first + nfw - 1),
		     SBI_ERR_INVALID_PARAM);
	GT_CHECK_SBI("fw-read-num-invalid", gt_pmu_fw_read(num), SBI_ERR_INVALID_PARAM);
}

void check_start_stop(void)
{
	if (ins_set)
		check_start_stop_hw();
	check_start_stop_fw();
}
