// SPDX-License-Identifier: BSD-2-Clause
/*
 * Exclusive counting as a counting vCPU's PMU calls meet it (core/excl.c is
 * the token and the turns): a start that needs the token, and the PMU
 * lane's question whether its call changed what the token decides.
 */
#include "arch/riscv/timer.h"
#include "core/excl.h"
#include "core/hart.h"
#include "core/vcpu.h"
#include "vpmu/vpmu.h"

/*
 * v's hardware counters are about to start (SBI START on its own hart):
 * take the token first, so that they never run while another hart does.
 * vpmu calls this only while exclusive counting is on (vpmu_set_exclusive).
 */
void excl_counting_starts(struct vcpu *v)
{
	struct hart *h = this_hart();

	if (!excl_enabled)
		return;
	/* it counts from now on: its WFI must trap, lest it wait in VS-mode holding the token */
	if (vcpu_arch_wfi_may_halt(&v->arch))
		vcpu_arch_wfi_traps_now(&v->arch);
	if (excl_mine(h))
		return;
	/* from the PMU lane too, which leaves hart_status at "guest": a hang here must say otherwise */
	hart_set_doing(h, HART_HYPERVISOR);
	while (!excl_mine(h))
		excl_acquire(h);
	/*
	 * Its parks took IPIs, maybe the one kicked for an interrupt another
	 * hart posted it (vcpu_raise_irq kicks once), and the lane enters the
	 * guest without looking at them: the kick again, to trap at entry.
	 */
	if (__atomic_load_n(&v->arch.pending_irqs, __ATOMIC_ACQUIRE))
		timer_repost_ipi();
}

/*
 * The PMU lane's question (core/lane.c), out of its line: the vCPU keeps
 * counting within the turn it holds, or keeps not counting without the token
 */
bool excl_unchanged(struct hart *h, struct vcpu *v, bool was_counting)
{
	bool counting = vpmu_counting(&v->vpmu);

	if (counting != was_counting)
		return false;
	return counting ? excl_mine(h) && timer_now() < h->excl.turn_end : !excl_mine(h);
}
