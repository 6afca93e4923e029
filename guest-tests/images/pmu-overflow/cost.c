// SPDX-License-Identifier: BSD-2-Clause
/* pmu-overflow: SBI calls cost as much after an overflow as before it (issue 30) */
#include "guest-tests/images/pmu-overflow/pmu-overflow.h"

/*
 * What COST_CALLS calls of (eid, fid) cost, in instructions, loop included:
 * the best of COST_ROUNDS rounds, timed with the `time` CSR, which ticks
 * once per 1e9 / timebase instructions under -icount shift=0 (exact to a
 * tick at each end: +-0.1 instruction per call).
 */
#define COST_CALLS  2000UL
#define COST_ROUNDS 5
#define COST_SLACK  3 /* instructions per call */

static uint64_t calls_cost(unsigned long eid, unsigned long fid)
{
	uint64_t best = ~0ULL;

	for (int r = 0; r < COST_ROUNDS; r++) {
		uint64_t t0 = gt_rdtime(), t;

		for (unsigned long i = 0; i < COST_CALLS; i++)
			gt_sbi_call(eid, fid, 0, 0, 0, 0, 0, 0);
		t = gt_rdtime() - t0;
		if (t < best)
			best = t;
	}
	return best * (1000000000UL / gt_timebase());
}

/* A null call (the scheduler's way) and num_counters (the PMU lane), SIE clear */
void measure_calls(struct call_cost *c)
{
	c->base = calls_cost(SBI_EXT_BASE, SBI_EXT_BASE_GET_SPEC_VERSION);
	c->pmu = calls_cost(SBI_EXT_PMU, SBI_EXT_PMU_NUM_COUNTERS);
}

/*
 * After an overflow taken in VS-mode and cleared by the handler, the guest
 * makes its calls with SIE clear, as Linux makes its PMU calls: each costs
 * what it cost on the fresh vCPU (fresh), within COST_SLACK. The hvip
 * path's "LCOFI may be pending" flag was tested only with SIE set and made
 * every later call 33 to 38 instructions dearer for good (issue 30).
 */
void cost_after_overflow(const struct call_cost *fresh)
{
	struct call_cost after;

	overflow_run("cost-after-overflow", EV_INSTRUCTIONS, false, 0, gt_pmu_user_loop,
		     2 * NEAR_TOP, true);
	measure_calls(&after);
	gt_printf(
		"cost-after-overflow: %lu calls, instructions fresh / after: null call %lu / %lu, "
		"num_counters %lu / %lu\n",
		COST_CALLS, (unsigned long)fresh->base, (unsigned long)after.base,
		(unsigned long)fresh->pmu, (unsigned long)after.pmu);
	GT_CHECK_LE("cost-after-overflow-null-call", after.base,
		    fresh->base + COST_SLACK * COST_CALLS);
	GT_CHECK_LE("cost-after-overflow-pmu-call", after.pmu,
		    fresh->pmu + COST_SLACK * COST_CALLS);
}
