// SPDX-License-Identifier: BSD-2-Clause
/*
 * pmu-quirks: what a guest sees of QEMU 10's PMU quirks, with pmuvisor's
 * workaround on, and with it off (the hypervisor's bootargs
 * pmu-quirks=...; docs/quirks.md). The guest's bootargs say which scenario
 * runs, and "-off" that the symptom is expected. Run under -icount shift=0.
 * - stale-deadline: a counter counts from 2^63 + 1 (Linux's counting
 *   value), then samples from 10,000 below its top: its overflow interrupt
 *   arrives either way (the hypervisor's deadline catches a wrap QEMU does
 *   not signal), but only the test config's expect-log tells whether the
 *   platform flagged it (the hypervisor's stop line).
 * - event-map: instret on counter 3, stopped with RESET (the physical
 *   counter stays configured), then instret on counter 4 counts a U-mode
 *   loop: exactly with the workaround, 0 without (QEMU still maps instret
 *   to counter 3).
 * - other-harts: a U-mode loop counted on this hart while a guest on the
 *   other hart spins: exactly with the workaround, the other hart's
 *   instructions too without.
 * - spin: the other hart's guest: spins for a fixed number of instructions.
 */
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

GT_IMAGE("pmu-quirks");

#define IRQ_LCOF	13
#define SIP_LCOFIP	(1UL << IRQ_LCOF)
#define EV_INSTRUCTIONS SBI_PMU_HW_INSTRUCTIONS
#define NEAR_TOP	10000UL
#define LOOP		100000UL

static volatile unsigned long nirq;

static void lcofi_handler(unsigned long irq, struct gt_frame *f)
{
	(void)irq;
	(void)f;
	nirq++;
	csr_clear(sip, SIP_LCOFIP);
}

static long on_counter(unsigned long idx, unsigned long flags)
{
	return gt_pmu_cfg_idx(idx, 1,
			      SBI_PMU_CFG_FLAG_SKIP_MATCH | SBI_PMU_CFG_FLAG_CLEAR_VALUE | flags,
			      EV_INSTRUCTIONS);
}

static void stale_deadline(void)
{
	long idx = on_counter(3, SBI_PMU_CFG_FLAG_SET_SINH);

	if (!GT_CHECK_EQ("stale-deadline-configure", (unsigned long)idx, 3))
		return;
	gt_irq_register(IRQ_LCOF, lcofi_handler);
	csr_set(sie, SIP_LCOFIP);
	/* counting, far from the top */
	GT_CHECK_SBI("stale-deadline-count",
		     gt_pmu_start(3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, (1UL << 63) + 1),
		     SBI_SUCCESS);
	gt_run_user(gt_pmu_user_loop, LOOP);
	gt_pmu_stop(3, 1, 0);
	GT_CHECK_EQ("stale-deadline-counted", gt_pmu_read_csr(3),
		    (1UL << 63) + 1 + GT_PMU_USER_LOOP_COUNT(LOOP));
	/* sampling: one overflow NEAR_TOP user instructions in */
	GT_CHECK_SBI("stale-deadline-sample",
		     gt_pmu_start(3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -NEAR_TOP), SBI_SUCCESS);
	gt_run_user(gt_pmu_user_loop, LOOP);
	gt_pmu_stop(3, 1, SBI_PMU_STOP_FLAG_RESET);
	GT_CHECK_EQ("stale-deadline-one-lcofi", nirq, 1);
}

static void event_map(bool off)
{
	long a = on_counter(3, SBI_PMU_CFG_FLAG_SET_SINH), b;
	unsigned long got;

	if (!GT_CHECK_EQ("event-map-configure-3", (unsigned long)a, 3))
		return;
	gt_pmu_start(3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0);
	gt_run_user(gt_pmu_user_loop, 1000);
	gt_pmu_stop(3, 1, SBI_PMU_STOP_FLAG_RESET);
	b = on_counter(4, SBI_PMU_CFG_FLAG_SET_SINH);
	if (!GT_CHECK_EQ("event-map-configure-4", (unsigned long)b, 4))
		return;
	gt_pmu_start(4, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0);
	gt_run_user(gt_pmu_user_loop, LOOP);
	gt_pmu_stop(4, 1, 0);
	got = gt_pmu_read_csr(4);
	if (off)
		GT_CHECK_EQ("event-map-off-counts-nothing", got, 0);
	else
		GT_CHECK_EQ("event-map-exact", got, GT_PMU_USER_LOOP_COUNT(LOOP));
	gt_pmu_release(4);
}

static void other_harts(bool off)
{
	long idx = on_counter(3, SBI_PMU_CFG_FLAG_SET_SINH);
	unsigned long got, exact = GT_PMU_USER_LOOP_COUNT(200 * LOOP);

	if (!GT_CHECK_EQ("other-harts-configure", (unsigned long)idx, 3))
		return;
	gt_pmu_start(3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0);
	gt_run_user(gt_pmu_user_loop, 200 * LOOP);
	gt_pmu_stop(3, 1, 0);
	got = gt_pmu_read_csr(3);
	if (off)
		GT_CHECK_GE("other-harts-off-counts-the-other-hart", got, exact + 10000);
	else
		GT_CHECK_EQ("other-harts-exact", got, exact);
	gt_pmu_release(3);
}

/*
 * The other hart's load: about 400 M instructions, longer than the counted
 * guest runs (40 M instructions). A timer deadline 10 us ahead all along
 * keeps QEMU's -icount round-robin turns short, so that the two harts take
 * turns while the other counts (with one long turn each they would not).
 */
static void spin(void)
{
	unsigned long ok = 0;

	for (unsigned int i = 0; i < 10000; i++) {
		ok += gt_sbi_set_timer(gt_rdtime() + 100).error == SBI_SUCCESS;
		gt_run_user(gt_pmu_user_loop, 20000);
	}
	GT_CHECK_EQ("spin-set-timer-ok", ok, 10000);
}

void gt_main(unsigned long hartid, const void *fdt)
{
	const char *args = gt_fdt_getprop("/chosen", "bootargs", NULL);

	(void)hartid;
	(void)fdt;
	if (!args)
		args = "";
	if (!__builtin_strcmp(args, "stale-deadline"))
		stale_deadline();
	else if (!__builtin_strcmp(args, "event-map") || !__builtin_strcmp(args, "event-map-off"))
		event_map(args[9] == '-');
	else if (!__builtin_strcmp(args, "other-harts") ||
		 !__builtin_strcmp(args, "other-harts-off"))
		other_harts(args[11] == '-');
	else if (!__builtin_strcmp(args, "spin"))
		spin();
	else
		GT_CHECK_EQ("known-scenario", 0, 1);
	gt_exit();
}
