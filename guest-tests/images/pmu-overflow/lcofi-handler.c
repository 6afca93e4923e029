// SPDX-License-Identifier: BSD-2-Clause
/* pmu-overflow: the LCOFI handler, the statistics it keeps, the counter every group configures */
#include "guest-tests/images/pmu-overflow/pmu-overflow.h"

void lcofi_handler(unsigned long irq, struct gt_frame *f)
{
	struct sbi_ret r;

	nirq++;
	if (csr_read(sip) & SIP_LCOFIP)
		lcofip_seen++;
	if (leave_pending) { /* return at once, sip.LCOFIP still set */
		leave_pending--;
		return;
	}
	if (f->sstatus & SSTATUS_SPP)
		lcofi_from_s++;
	if (irq != IRQ_LCOF || f->scause != (SCAUSE_IRQ | IRQ_LCOF))
		bad_scause++;
	if (ctr < 0)
		return;
	r = gt_pmu_stop((unsigned long)ctr, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT);
	if (r.error)
		stop_errors++;
	/* the snapshot is relative to counter_idx_base = ctr: bit 0, slot 0 */
	if (!(shmem[0] & 1))
		ovf_missing++;
	if (shmem[1] >= rearm_value) /* it wrapped: now a small number */
		not_wrapped++;
	csr_clear(sip, SIP_LCOFIP);
	if (rearms_left) {
		rearms_left--;
		gt_pmu_start((unsigned long)ctr, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, rearm_value);
	}
}

long configure(unsigned long event, unsigned long flags)
{
	return gt_pmu_cfg_idx(0, prog_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE | flags, event);
}

void reset_stats(void)
{
	nirq = bad_scause = ovf_missing = not_wrapped = stop_errors = 0;
	lcofi_from_s = timer_irqs = lcofip_seen = leave_pending = 0;
}
