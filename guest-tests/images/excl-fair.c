// SPDX-License-Identifier: BSD-2-Clause
/*
 * excl-fair: no guest keeps another from running through exclusive counting
 * (docs/vpmu.md): under QEMU -icount a vCPU whose hardware counters run
 * holds a token and every other hart is parked meanwhile. Two guests, each
 * pinned to its own hart; bootargs name the role:
 *   "hog ms=<n>"   counts for n ms of its own time in two patterns, half each:
 *                  (1) START an instret counter with SET_INIT_VALUE, 8 ms of
 *                  work, STOP, 100 us without counting, again (it gives the
 *                  token back just before its turn would end and asks for it
 *                  again at once); (2) one START, then counting throughout
 *   "neighbour ms=<n> max-gap-us=<g>"
 *                  makes an SBI call per loop (and ~2 us of work) for n ms
 *                  and measures, with
 *                  rdtime, the longest time between two of its loops (any
 *                  time its vCPU did not run); checks it against g
 * Both print their figures and end with TEST DONE.
 */
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

GT_IMAGE("excl-fair");

/* About n instructions of work (2 per iteration) */
static void spin(unsigned long n)
{
	asm volatile("1: addi %0, %0, -2\n\tbgtz %0, 1b" : "+r"(n));
}

/* Work in VS-mode until rdtime reaches `until`: rdtime every ~2,000 instructions */
static void work_until(uint64_t until)
{
	while (gt_rdtime() < until)
		spin(2000);
}

static void hog(void)
{
	uint64_t half = gt_us_to_ticks(gt_arg_ul("ms=", 400) * 1000 / 2), end;
	unsigned long loops = 0, bad = 0;
	struct gt_pmu_layout pl;
	long c;

	gt_pmu_layout(&pl);
	c = gt_pmu_cfg_idx(0, pl.hw_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE, SBI_PMU_HW_INSTRUCTIONS);
	if (!GT_CHECK_CTR("hog-counter", c, 0))
		gt_exit();
	/* (1) counting that stops shortly before each turn would end */
	for (end = gt_rdtime() + half; gt_rdtime() < end; loops++) {
		bad += gt_pmu_start((unsigned long)c, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0)
			       .error != SBI_SUCCESS;
		work_until(gt_rdtime() + gt_us_to_ticks(8000));
		bad += gt_pmu_stop((unsigned long)c, 1, 0).error != SBI_SUCCESS;
		work_until(gt_rdtime() + gt_us_to_ticks(100));
	}
	gt_printf("excl-fair: hog: %lu loops of START, 8 ms, STOP, 100 us\n", loops);
	GT_CHECK_EQ("hog-start-stop", bad, 0);
	/* (2) counting throughout */
	GT_CHECK_EQ("hog-steady-start", gt_pmu_start((unsigned long)c, 1, 0, 0).error, SBI_SUCCESS);
	work_until(gt_rdtime() + half);
	GT_CHECK_EQ("hog-steady-stop", gt_pmu_stop((unsigned long)c, 1, 0).error, SBI_SUCCESS);
	gt_exit();
}

static void neighbour(void)
{
	uint64_t end = gt_rdtime() + gt_us_to_ticks(gt_arg_ul("ms=", 400) * 1000);
	uint64_t last = gt_rdtime(), worst = 0, worst_at = 0, t0 = last;
	unsigned long calls = 0;

	while (last < end) {
		uint64_t t;

		spin(2000);
		gt_sbi0(SBI_EXT_BASE, SBI_EXT_BASE_GET_SPEC_VERSION);
		calls++;
		t = gt_rdtime();
		if (t - last > worst) {
			worst = t - last;
			worst_at = last - t0;
		}
		last = t;
	}
	gt_printf("excl-fair: neighbour: %lu SBI calls in %lu ms, longest gap %lu us (at %lu ms)\n",
		  calls, gt_ticks_to_us(last - t0) / 1000, gt_ticks_to_us(worst),
		  gt_ticks_to_us(worst_at) / 1000);
	GT_CHECK_LE("neighbour-longest-gap-us", gt_ticks_to_us(worst),
		    gt_arg_ul("max-gap-us=", 20000));
	gt_exit();
}

void gt_main(unsigned long hartid, const void *fdt)
{
	(void)hartid;
	(void)fdt;
	if (gt_arg_has("hog"))
		hog();
	neighbour();
}
