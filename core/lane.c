// SPDX-License-Identifier: BSD-2-Clause
/*
 * The trap vector's short way for a guest's SBI call (arch/riscv/entry.S):
 * the PMU lane (sched_guest_ecall), which answers a PMU call without the
 * scheduler's loop when nothing it watches changed; every other call goes
 * on to sched_sbi_ecall (core/sched.c).
 * Guest-visible costs: docs/performance.md.
 */
#include "core/ecall.h"
#include "core/hart.h"
#include "core/sched.h"
#include "core/sched_internal.h"
#include "core/vcpu.h"
#include "vpmu/vpmu.h"
#include "vpmu/vpmu_sbi.h"

/*
 * After a PMU call or overflow, under exclusive counting or after a
 * restart: may the guest resume at once? Not after a restart. A vCPU that
 * stops or starts counting needs the loop unless core/excl.c finds its
 * turn with the token goes on (excl_lane: its pause starts or ends). The
 * timer is armed again, with exclusive counting's deadlines
 * (excl_arm_timer), when that or the vPMU's deadline moved.
 */
static bool sched_pmu_excl(struct hart *h, struct vcpu *v)
{
	struct sched_seen *seen = &h->seen;
	uint64_t d = vpmu_deadline(&v->vpmu);

	if (h->resched)
		return false;
	if (!excl_unchanged(h, v, seen->counting)) {
		if (!excl_lane(h, v))
			return false;
	} else if (d == seen->pmu_deadline) {
		return true;
	}
	seen->pmu_deadline = d;
	seen->counting = vpmu_counting(&v->vpmu);
	excl_arm_timer(h, sched_timer_with(h, d));
	return true;
}

/* The vPMU's deadline moved: the hart's timer for it */
static void sched_pmu_rearm(struct hart *h, struct vcpu *v)
{
	uint64_t d = vpmu_deadline(&v->vpmu);

	h->seen.pmu_deadline = d;
	hart_arm_timer(h, sched_timer_with(h, d));
}

/*
 * After a PMU call or overflow: whether the guest resumes at once. Only what
 * the lane's contract lets them change is looked at, as sched_pmu_call_unchanged
 * looks at it for the loop (a restart, exclusive counting, the vPMU's
 * deadline), the timer re-armed here when the deadline moved, then the
 * LCOFI if there is one to deliver. A software LCOFI that the
 * guest cannot take yet sends it to the loop, which re-checks soon
 * (recheck). Otherwise the loop takes over, the exit handled.
 */
static inline bool sched_pmu_resume(struct hart *h, struct vcpu *v)
{
	if (unlikely(h->resched || h->excl_on)) {
		if (!sched_pmu_excl(h, v))
			goto to_loop;
	} else if (unlikely(vpmu_deadline(&v->vpmu) != h->seen.pmu_deadline)) {
		sched_pmu_rearm(h, v);
	}
	if (unlikely(vcpu_arch_lcofi_work(&v->arch))) {
		vcpu_arch_deliver_lcofi(&v->arch);
		if (vcpu_arch_wants_recheck(&v->arch) && !this_hart()->seen.recheck)
			goto to_loop;
	}
	return true;
to_loop:
	h = this_hart();
	sched_after_exit(h, v);
	h->exit_handled = true;
	return false;
}

/*
 * The trap vector's short way for an SBI call (arch/riscv/entry.S): only the
 * registers a C call may clobber are saved, which is all an SBI call reads
 * and writes. The call is answered and the context returned to resume at
 * once, or NULL: the scheduler must look; the vector saves the rest and
 * ctx_enter_guest returns, and the loop does not answer the call again.
 *
 * Any call but a PMU one goes on to sched_sbi_ecall. This function is the
 * PMU lane: perf's every event switch is a few SBI PMU calls, so they skip
 * what the others need. The PMU adapter is called without the table, and
 * afterwards only what the lane's contract in vpmu/vpmu_sbi.h lets a PMU
 * call change is looked at (sched_pmu_resume). The rest of the entry work
 * needs no look: interrupts other harts posted (pending_irqs) come with an
 * IPI, and the hart's timer is armed for the guest's (non-Sstc) timer, so
 * the guest exits again at once for either. hart_status keeps saying
 * "guest": to a hang report the call is part of the guest's turn.
 */
struct vcpu_ctx *sched_guest_ecall(struct vcpu_ctx *c)
{
	struct vcpu *v = container_of(c, struct vcpu, arch.ctx);
	struct hart *h;

	if (c->regs[17] != SBI_EXT_PMU) /* a tail call, before this lane's frame is built */
		return sched_sbi_ecall(c);
	vcpu_ecall_begin(v);
	vcpu_ecall_end(v, vpmu_sbi_call(&v->vpmu, c->regs[16], &c->regs[10]));
	/* the hart looked up again after each call: no register keeps it across one */
	h = this_hart();
	return sched_pmu_resume(h, v) ? c : NULL;
}

/*
 * The trap vector's short way for the local counter overflow interrupt
 * (LCOFI, 13): a guest that samples takes one per sample, and handling it
 * changes only what a PMU call may change (the lane's contract). NULL
 * before anything is done when the hypervisor samples this vCPU: its
 * sample reads the guest's whole register file, which the long way saves.
 */
struct vcpu_ctx *sched_guest_lcofi(struct vcpu_ctx *c)
{
	struct vcpu *v = container_of(c, struct vcpu, arch.ctx);

	if (vpmu_sampled(&v->vpmu))
		return NULL;
	vpmu_overflow_irq(&v->vpmu);
	return sched_pmu_resume(this_hart(), v) ? c : NULL;
}
