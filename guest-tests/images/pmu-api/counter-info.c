// SPDX-License-Identifier: BSD-2-Clause
/* pmu-api: NUM_COUNTERS and COUNTER_GET_INFO of every index */
#include "guest-tests/images/pmu-api/pmu-api.h"

/* ---------------------------------------------------------------- layout */
void check_layout(void)
{
	struct sbi_ret r;
	unsigned long i, last_hw = 0, info_errors = 0;

	GT_CHECK_NE("probe-pmu", gt_sbi_probe(SBI_EXT_PMU), 0);
	r = gt_pmu_num_counters();
	GT_CHECK_SBI("num-counters-ok", r, SBI_SUCCESS);
	GT_CHECK_LE("num-counters-lt-64", r.value, 63);
	GT_CHECK_GE("num-counters-ge-3", r.value, 3);
	num = r.value < 64 ? r.value : 63;
	gt_printf("pmu-api: %lu counters\n", num);

	fw_first = ~0UL;
	for (i = 0; i < num; i++) {
		r = gt_pmu_counter_info(i);
		if (i == 1) {
			GT_CHECK_SBI("info-1-time-invalid", r, SBI_ERR_INVALID_PARAM);
			continue;
		}
		if (r.error) {
			gt_printf("pmu-api: counter %lu: error %ld\n", i, r.error);
			info_errors++;
			continue;
		}
		info[i] = r.value;
		if (r.value & SBI_PMU_CTR_INFO_FW) {
			GT_CHECK_BITS(NAME("info-%lu-fw-64bit", i), r.value,
				      SBI_PMU_CTR_INFO_FW | (0x3fUL << 12),
				      SBI_PMU_CTR_INFO_FW | (63UL << 12));
			if (fw_first == ~0UL)
				fw_first = i;
			nfw++;
			continue;
		}
		hw_mask |= 1UL << i;
		if (i >= 3)
			prog_mask |= 1UL << i;
		last_hw = i;
		GT_CHECK_EQ(NAME("info-%lu-csr", i), SBI_PMU_CTR_INFO_CSR(r.value), 0xc00 + i);
		/* QEMU's counters are all 64 bits wide: width field 63 */
		GT_CHECK_EQ(NAME("info-%lu-width", i), SBI_PMU_CTR_INFO_WIDTH(r.value), 63);
	}
	/* every index but time's answers, but for the holes the configuration names */
	GT_CHECK_EQ("info-errors-only-holes", info_errors, gt_arg_ul("holes=", 0));
	/* bootargs "firmware-only": a host that can filter no counter by mode */
	if (gt_arg_has("firmware-only"))
		GT_CHECK_EQ("hw-none-unfiltered", hw_mask, 0);
	else
		GT_CHECK_BITS("hw-has-cycle-instret", hw_mask, 5, 5);
	/* the layout the configuration's machine gives (bootargs, when it says) */
	if (gt_arg_has("num="))
		GT_CHECK_EQ("num-counters-expected", num, gt_arg_ul("num=", 0));
	if (gt_arg_has("hw="))
		GT_CHECK_EQ("hw-counters-expected", __builtin_popcountl(hw_mask),
			    gt_arg_ul("hw=", 0));
	/*
	 * Without Sscofpmf the host cannot keep the hypervisor out of its
	 * programmable counters (OpenSBI sets their inhibit bits only with it):
	 * pmuvisor offers none then (docs/vpmu.md).
	 */
	if (gt_hart_has_ext(0, "sscofpmf") || gt_native())
		GT_CHECK_NE("hw-has-programmable", prog_mask, 0);
	else
		GT_CHECK_EQ("hw-no-unfiltered-programmable", prog_mask, 0);
	GT_CHECK_GE("fw-counters-after-hw", fw_first, last_hw + 1);
	GT_CHECK_EQ("fw-counters-contiguous-to-end", fw_first + nfw, num);
	if (gt_native()) /* OpenSBI 1.5 has 16 firmware counters */
		gt_printf("pmu-api: native: %lu firmware counters\n", nfw);
	else
		GT_CHECK_EQ("fw-counters-22", nfw, SBI_PMU_FW_MAX);
	r = gt_pmu_counter_info(num);
	GT_CHECK_SBI("info-num-invalid", r, SBI_ERR_INVALID_PARAM);
	r = gt_pmu_counter_info(64);
	GT_CHECK_SBI("info-64-invalid", r, SBI_ERR_INVALID_PARAM);
	r = gt_pmu_counter_info(~0UL);
	GT_CHECK_SBI("info-all-ones-invalid", r, SBI_ERR_INVALID_PARAM);
}
