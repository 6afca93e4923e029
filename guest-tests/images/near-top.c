// SPDX-License-Identifier: BSD-2-Clause
/*
 * near-top: a hart whose counter stands one count below its top while the
 * hart is in HS-mode is not left without time (docs/quirks.md, near-top).
 * Two guests, each pinned to its own hart; bootargs name the role:
 *   "busy ms=<n>"  runs n ms of its own time without a trap (no SBI call)
 *   "edge kmax=<k> max-gap-us=<g> | min-gap-us=<g>"
 *                  on the second hart, while busy runs: for every start
 *                  value 2^64 - 1 .. 2^64 - k of a cycles counter that
 *                  counts guest modes only, START it from that value and
 *                  STOP it at once: one of them stands one count below its
 *                  top when STOP traps. Measures with rdtime the longest
 *                  START-STOP and checks it against g (at most g with the
 *                  workaround, at least g without: the symptom).
 * Exclusive counting must be off (pmu-quirks without other-harts): under it
 * a counting vCPU runs alone, and nothing is starved.
 */
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

GT_IMAGE("near-top");

static void busy(void)
{
	uint64_t t0 = gt_rdtime(), end = t0 + gt_us_to_ticks(gt_arg_ul("ms=", 500) * 1000);

	while (gt_rdtime() < end)
		;
	gt_printf("near-top: busy for %lu ms\n", gt_ticks_to_us(gt_rdtime() - t0) / 1000);
	gt_exit();
}

static void edge(void)
{
	unsigned long kmax = gt_arg_ul("kmax=", 64), worst_k = 0;
	struct gt_pmu_layout pl = {0};
	uint64_t worst = 0;
	long ctr;

	GT_CHECK_SBI("layout", gt_pmu_layout(&pl), SBI_SUCCESS);
	ctr = gt_pmu_cfg_idx(0, pl.hw_mask, 0, SBI_PMU_HW_CPU_CYCLES);
	GT_CHECK_CTR("counter", ctr, 0);
	if (ctr < 0)
		gt_exit();
	for (unsigned long k = 1; k <= kmax; k++) {
		uint64_t t0 = gt_rdtime(), t;

		gt_pmu_start((unsigned long)ctr, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -k);
		gt_pmu_stop((unsigned long)ctr, 1, 0);
		t = gt_rdtime() - t0;
		if (t > worst) {
			worst = t;
			worst_k = k;
		}
	}
	gt_pmu_release((unsigned long)ctr);
	gt_printf("near-top: %lu START-STOP pairs, the longest %lu us (from 2^64 - %lu)\n", kmax,
		  gt_ticks_to_us(worst), worst_k);
	if (gt_arg_has("max-gap-us="))
		GT_CHECK_LE("longest-start-stop-us", gt_ticks_to_us(worst),
			    gt_arg_ul("max-gap-us=", 0));
	if (gt_arg_has("min-gap-us="))
		GT_CHECK_GE("longest-start-stop-us", gt_ticks_to_us(worst),
			    gt_arg_ul("min-gap-us=", 0));
	gt_exit();
}

void gt_main(unsigned long hartid, const void *fdt)
{
	(void)hartid;
	(void)fdt;
	if (gt_arg_has("busy"))
		busy();
	edge();
}
