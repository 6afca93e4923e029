// SPDX-License-Identifier: BSD-2-Clause
/* pmu-api: CFG_MATCH refused: reserved flags, invalid counter sets, events nobody counts */
#include "guest-tests/images/pmu-api/pmu-api.h"

/*
 * A CFG_MATCH the spec refuses with err: check it, or natively print what
 * OpenSBI answered (as "pmu-api: native: <what> -> <error>") and release the
 * counter it may have configured
 */
static void cfg_refused(const char *what, const char *name, struct sbi_ret r, long err)
{
	if (gt_native()) {
		gt_printf("pmu-api: native: %s -> %ld\n", what, r.error);
		if (!r.error)
			gt_pmu_release(r.value);
	} else {
		GT_CHECK_SBI(name, r, err);
	}
}

/* ------------------------------------------------------------ CFG_MATCH */
void check_cfg_errors(void)
{
	struct sbi_ret r;
	/* a set and an event that could be granted but for the error checked */
	unsigned long set = ins_set ? ins_set : fw_set;
	unsigned long ev = ins_set ? EV_INSTRET : GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER);
	/* the counters a hardware event may ask for */
	unsigned long hw_set = hw_mask ? hw_mask : fw_set;

	/* reserved flag bits 8..63 */
	r = gt_pmu_cfg(0, set, 1UL << 8, ev, 0);
	cfg_refused("cfg flag bit 8", "cfg-reserved-flag-8", r, SBI_ERR_INVALID_PARAM);
	if (!gt_native()) {
		r = gt_pmu_cfg(0, set, 1UL << 63, ev, 0);
		GT_CHECK_SBI("cfg-reserved-flag-63", r, SBI_ERR_INVALID_PARAM);
	}

	/* invalid counter sets */
	r = gt_pmu_cfg(0, 0, 0, ev, 0);
	if (gt_native()) /* OpenSBI: an empty set finds no counter */
		gt_printf("pmu-api: native: cfg mask 0 -> %ld\n", r.error);
	else
		GT_CHECK_SBI("cfg-mask-0", r, SBI_ERR_INVALID_PARAM);
	r = gt_pmu_cfg(0, set | (1UL << num), 0, ev, 0);
	GT_CHECK_SBI("cfg-mask-past-last", r, SBI_ERR_INVALID_PARAM);
	r = gt_pmu_cfg(num - 1, 1UL | (1UL << 63), 0, GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER), 0);
	GT_CHECK_SBI("cfg-base-plus-bit63", r, SBI_ERR_INVALID_PARAM);
	r = gt_pmu_cfg(~0UL, 2, 0, ev, 0); /* base + 1 wraps to 0 */
	if (gt_native())
		gt_printf("pmu-api: native: cfg base ~0 -> %ld\n", r.error);
	else
		GT_CHECK_SBI("cfg-base-wraps", r, SBI_ERR_INVALID_PARAM);
	r = gt_pmu_cfg(num, 1, 0, GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER), 0);
	GT_CHECK_SBI("cfg-base-eq-num", r, SBI_ERR_INVALID_PARAM);
	r = gt_pmu_cfg(num + 5, 1, 0, GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER), 0);
	GT_CHECK_SBI("cfg-base-gt-num", r, SBI_ERR_INVALID_PARAM);
	r = gt_pmu_cfg(1, 1, 0, EV_CYCLES, 0);
	if (gt_native())
		gt_printf("pmu-api: native: cfg on counter 1 (time) -> %ld\n", r.error);
	else
		GT_CHECK_SBI("cfg-counter-1-time", r, SBI_ERR_INVALID_PARAM);

	/* events nobody counts */
	r = gt_pmu_cfg(0, hw_set, 0, 0x1234, 0);
	if (gt_native()) /* platform.md: OpenSBI 1.5 answers INVALID_PARAM */
		gt_printf("pmu-api: native: event 0x1234 -> %ld\n", r.error);
	else
		GT_CHECK_SBI("cfg-event-0x1234", r, SBI_ERR_NOT_SUPPORTED);
	r = gt_pmu_cfg(0, hw_set, 0, SBI_PMU_HW_BRANCH_MISSES, 0);
	GT_CHECK_SBI("cfg-hw-branch-misses-unsupported", r, SBI_ERR_NOT_SUPPORTED);
	r = gt_pmu_cfg(0, hw_set, 0, 0x10000 | (7 << 3), 0); /* cache id 7 is reserved */
	if (gt_native())
		gt_printf("pmu-api: native: cache id 7 -> %ld\n", r.error);
	else
		GT_CHECK_SBI("cfg-cache-reserved-id", r, SBI_ERR_NOT_SUPPORTED);
	r = gt_pmu_cfg(0, fw_set, 0, GT_PMU_EV_FW(SBI_PMU_FW_MAX), 0);
	if (gt_native())
		gt_printf("pmu-api: native: fw event 22 -> %ld\n", r.error);
	else
		GT_CHECK_SBI("cfg-fw-event-22", r, SBI_ERR_NOT_SUPPORTED);
	/* pmuvisor defines no platform firmware events (docs/vpmu.md) */
	r = gt_pmu_cfg(0, fw_set, 0, GT_PMU_EV_FW(SBI_PMU_FW_PLATFORM), 0x1);
	cfg_refused("fw platform event", "cfg-fw-platform-unsupported", r, SBI_ERR_NOT_SUPPORTED);
	r = gt_pmu_cfg(0, hw_set, 0, 0x40002, 0); /* type 4 */
	if (gt_native())
		gt_printf("pmu-api: native: event type 4 -> %ld\n", r.error);
	else
		GT_CHECK_SBI("cfg-event-type-4", r, SBI_ERR_NOT_SUPPORTED);
	/* raw events with reserved event_data bits */
	r = gt_pmu_cfg(0, hw_set, 0, 0x20000, 1UL << 48);
	if (gt_native())
		gt_printf("pmu-api: native: raw data bit 48 -> %ld\n", r.error);
	else
		GT_CHECK_SBI("cfg-raw-data-bit48", r, SBI_ERR_NOT_SUPPORTED);
	/* SBI v3.0: raw event v2 data is event_data[55:0]; bits 56.. are reserved */
	r = gt_pmu_cfg(0, hw_set, 0, 0x30000, 1UL << 56);
	if (gt_native())
		gt_printf("pmu-api: native: raw v2 data bit 56 -> %ld\n", r.error);
	else
		GT_CHECK_SBI("cfg-raw-v2-data-bit56", r, SBI_ERR_NOT_SUPPORTED);
}
