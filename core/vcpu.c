// SPDX-License-Identifier: BSD-2-Clause
/* Cross-hart signalling to vCPUs: interrupts, firmware events, kicks. */
#include "arch/riscv/cpu.h"
#include "core/excl.h"
#include "core/hart.h"
#include "core/vcpu.h"
#include "core/vm.h"

void vcpu_kick(struct vcpu *v)
{
	struct hart *h = this_hart();

	if (v->hart != h) {
		if (!excl_defer_kick(v->hart))
			hart_send_ipi(v->hart->hartid);
	} else if (v != h->cur)
		h->resched = true; /* let a sleeping vCPU on this hart get its turn */
}

/*
 * The bit, then the hart to kick; a hart taking v sets v->hart, then reads
 * the bits before entry (sched_add). A full fence on each side: either that
 * hart's read sees the bit, or this one kicks that hart. The PMU lane does
 * not look at pending_irqs: it relies on the kick. A bit already pending was
 * kicked for by whoever set it, and v's hart has not taken it yet: no IPI
 * again, or a guest sending IPIs in a loop to its vCPU that does not run
 * (stopped, or waiting for its turn) would interrupt that hart, and the
 * guest running there, at every call. This hart's own kick costs nothing.
 */
void vcpu_raise_irq(struct vcpu *v, unsigned long hvip_bit)
{
	if ((__atomic_fetch_or(&v->arch.pending_irqs, hvip_bit, __ATOMIC_SEQ_CST) & hvip_bit) &&
	    v->hart != this_hart())
		return;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	vcpu_kick(v);
}

void vcpu_fw_event(struct vcpu *v, unsigned int fw_event)
{
	if (fw_event >= SBI_PMU_FW_MAX)
		return;
	/*
	 * Only the hart running v touches its vPMU. Any other hart (also the one
	 * whose queue holds v: another hart may be stealing it right now) posts
	 * the event atomically, and v's hart folds it in before v runs.
	 */
	if (this_hart()->cur == v) {
		vpmu_fw_event(&v->vpmu, fw_event, 1);
		return;
	}
	__atomic_add_fetch(&v->fw_pending[fw_event], 1, __ATOMIC_RELAXED);
	__atomic_store_n(&v->fw_pending_any, 1, __ATOMIC_RELEASE);
}

/*
 * Each event's count is added at once: folded one by one, with interrupts
 * off, the events other harts posted while v was away cost one walk over
 * its firmware counters each (a guest can post millions)
 */
void vcpu_fold_pending_slow(struct vcpu *v)
{
	__atomic_store_n(&v->fw_pending_any, 0, __ATOMIC_RELAXED);
	for (unsigned int e = 0; e < SBI_PMU_FW_MAX; e++) {
		unsigned long n = __atomic_exchange_n(&v->fw_pending[e], 0, __ATOMIC_ACQ_REL);

		if (n)
			vpmu_fw_event(&v->vpmu, e, n);
	}
}
