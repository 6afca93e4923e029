// SPDX-License-Identifier: BSD-2-Clause
/*
 * pmu-api: the SBI PMU extension function by function, as a guest sees it:
 * NUM_COUNTERS and COUNTER_GET_INFO for every index, CFG_MATCH with every
 * flag and every invalid counter set and event type, START/STOP with their
 * flags and state errors, FW_READ/FW_READ_HI errors, EVENT_GET_INFO, and
 * the counter CSRs themselves: an unconfigured counter read is an illegal
 * instruction, a configured one reads its value (directly or emulated), a
 * write is always illegal, and U-mode reads obey scounteren.
 *
 * Counter sets are built from COUNTER_GET_INFO like Linux does. Values are
 * exact where nothing can count: a counter configured with every inhibit
 * flag holds exactly its initial value. Checks where OpenSBI 1.5 (run
 * without the hypervisor) is documented to diverge from the spec
 * (docs/vpmu.md, platform.md) are skipped under gt_native(), with the
 * native result printed.
 */
#include "guest-tests/images/pmu-api/pmu-api.h"

GT_IMAGE("pmu-api");

unsigned long num;	 /* NUM_COUNTERS */
unsigned long hw_mask;	 /* hardware counters (COUNTER_GET_INFO, type 0) */
unsigned long prog_mask; /* hardware counters 3.. */
unsigned long ins_set;	 /* where instructions can be counted */
unsigned long fw_set;	 /* the firmware counters */
unsigned long fw_first, nfw;
unsigned long info[64];
char nm[80];

void gt_main(unsigned long hartid, const void *fdt)
{
	(void)hartid;
	(void)fdt;
	check_layout();
	check_unconfigured_csrs();
	/* unknown FID */
	GT_CHECK_SBI("fid-9-not-supported", gt_pmu_call(9, 0, 0, 0, 0, 0), SBI_ERR_NOT_SUPPORTED);
	if (!nfw) /* check_layout failed: the groups below need firmware counters */
		gt_exit();
	/*
	 * Without Sscofpmf (model-nosscof-api) only counters 0 and 2 are
	 * hardware ones, and without Smcntrpmf (model-rv64h-api) none: the
	 * groups check there what a guest can configure, and that the rest
	 * is refused.
	 */
	fw_set = ((1UL << nfw) - 1) << fw_first;
	ins_set = prog_mask ? prog_mask : hw_mask & (1UL << 2);
	check_cfg_errors();
	check_cfg_raw();
	check_cfg_events();
	check_start_stop();
	check_csrs();
	check_user();
	check_event_info();
	gt_exit();
}
