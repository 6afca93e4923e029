// SPDX-License-Identifier: BSD-2-Clause
/*
 * past-timer: a vCPU that waits with its own timer in the past and the timer
 * interrupt disabled (sie = 0) never wakes, and must not take its hart from
 * the other vCPUs there (docs/security.md T3). Bootargs:
 *   wait       vstimecmp = 0 (Sstc), then WFI forever
 *   wait sbi   the same through SBI set_timer(0), then an HSM retentive suspend
 *   (none)     the meter: starts at once (not after the waiters' watchdogs
 *              stopped them) and runs 300 ms of its own time on the shared
 *              hart; the longest gap between two reads of `time` is the
 *              longest the hypervisor kept it from running
 */
#include "guest-tests/lib/gt.h"

GT_IMAGE("past-timer");

#define CSR_STIMECMP 0x14d

static void wait_forever(void)
{
	gt_irq_disable();
	csr_write(sie, 0);
	if (gt_arg_has("sbi")) {
		gt_sbi_set_timer(0); /* on an Sstc host the hypervisor writes vstimecmp */
		gt_printf("past-timer: set_timer(0), sie 0, HSM retentive suspend\n");
		gt_sbi_hart_suspend(0, 0, 0);
	} else {
		csr_write(CSR_STIMECMP, 0);
		gt_printf("past-timer: stimecmp 0, sie 0, WFI\n");
	}
	for (;;)
		gt_wfi();
}

void gt_main(unsigned long hartid, const void *fdt)
{
	uint64_t start, end, last, now, gap = 0;

	(void)hartid;
	(void)fdt;
	if (gt_arg_has("wait"))
		wait_forever();
	if (!GT_CHECK_EQ("sstc", gt_hart_has_ext(0, "sstc"), 1))
		gt_exit();
	start = last = gt_rdtime();
	/* the waiters' watchdogs stop them after 2 s: a starved meter starts after that */
	gt_printf("past-timer: meter starts at %lu ms\n",
		  (unsigned long)(start * 1000 / gt_us_to_ticks(1000000)));
	GT_CHECK_LE("meter-starts-before-500ms", start, gt_us_to_ticks(500000));
	end = start + gt_us_to_ticks(300000);
	while ((now = gt_rdtime()) < end) {
		if (now - last > gap)
			gap = now - last;
		last = now;
	}
	gt_printf("past-timer: longest gap %lu us in 300 ms\n",
		  (unsigned long)(gap * 1000000 / gt_us_to_ticks(1000000)));
	/* the hart has nothing else to run: the hypervisor's own work, a few us at a time */
	GT_CHECK_LE("meter-longest-gap-1ms", gap, gt_us_to_ticks(1000));
	gt_exit();
}
