// SPDX-License-Identifier: BSD-2-Clause
/*
 * stop-pending: a hart stops itself (HSM HART_STOP) with a virtual
 * interrupt pending and enabled (sip.SSIP and sie.SSIE set, sstatus.SIE
 * clear). Its vCPU stays loaded on the physical hart, which must then idle,
 * not wake at once from every sleep (the dts forbids the hypervisor's spin
 * line). Hart 0 waits 2 s of its own time meanwhile, then checks the
 * other hart is STOPPED.
 */
#include "guest-tests/lib/gt.h"

GT_IMAGE("stop-pending");

static void stop_with_pending(unsigned long hartid, unsigned long opaque)
{
	(void)hartid;
	(void)opaque;
	gt_irq_disable();
	csr_write(sie, SIE_SSIE);
	csr_set(sip, SIP_SSIP);
	gt_sbi_hart_stop();
}

void gt_main(unsigned long hartid, const void *fdt)
{
	uint64_t end;
	unsigned long n = 0;

	(void)hartid;
	(void)fdt;
	GT_CHECK_SBI("hart-start", gt_hart_start(1, stop_with_pending, 0), SBI_SUCCESS);
	GT_CHECK_EQ("hart-1-stopped",
		    gt_wait_hart_state(1, SBI_HSM_STATE_STOPPED, gt_us_to_ticks(100000)),
		    SBI_HSM_STATE_STOPPED);
	end = gt_rdtime() + gt_us_to_ticks(2000000);
	while (gt_rdtime() < end)
		n++;
	gt_printf("stop-pending: %lu loops in 2 s\n", n);
	GT_CHECK_EQ("hart-1-still-stopped", gt_sbi_hart_status(1).value, SBI_HSM_STATE_STOPPED);
	gt_exit();
}
