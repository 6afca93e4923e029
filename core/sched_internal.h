/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Private to the scheduler (core/sched.c, sched_steal.c, lane.c, boot_sync.c):
 * what the loop saw when it chose the vCPU, the tests that tell whether an
 * exit changed any of it, and the bookkeeping around a guest entry. Inline:
 * the trap vector's short way (core/lane.c) runs them after every SBI call,
 * and nothing is inlined across files (-O2, no LTO).
 */
#ifndef CORE_SCHED_INTERNAL_H
#define CORE_SCHED_INTERNAL_H

#include <stdbool.h>
#include "arch/riscv/csr.h"
#include "core/excl.h"
#include "core/hart.h"
#include "core/vcpu.h"
#include "core/vm.h"

/* Harts sleeping with nothing to run: a busy hart wakes one to take work (sched_offer_work) */
extern volatile unsigned long idle_harts;
/*
 * A hart with nothing to run (core/sched_steal.c): whether it took a vCPU
 * of another hart; if not, it is in idle_harts, and takes itself out after
 * its sleep
 */
bool sched_steal_or_say_idle(struct hart *h);

/* What the scheduler arms the timer and chooses from: sched_fast_return compares with it */
static inline void sched_see(struct hart *h, const struct vcpu *v)
{
	struct sched_seen *s = &h->seen;

	s->timer = vcpu_arch_timer_deadline(&v->arch);
	s->pmu_deadline = vpmu_deadline(&v->vpmu);
	s->recheck = vcpu_arch_wants_recheck(&v->arch);
	/* only exclusive counting asks whether the vCPU counts */
	s->counting = h->excl_on && vpmu_counting(&v->vpmu);
}

/*
 * What a PMU call may change of what the loop watches (the contract in
 * vpmu/vpmu_sbi.h), but a software LCOFI, which the PMU lane looks at only
 * when an LCOFI waits: a restart (resched), exclusive counting, the vPMU's
 * deadline. resched and excl_on are side by side, one load for both.
 */
static inline bool sched_pmu_call_unchanged(struct hart *h, struct vcpu *v,
					    const struct sched_seen *was)
{
	if (h->resched || h->excl_on) {
		if (h->resched || !excl_unchanged(h, v, was->counting))
			return false;
	}
	return vpmu_deadline(&v->vpmu) == was->pmu_deadline;
}

/* The hart's next timer, given the vCPU's vPMU deadline d: d or what sched_arm_timer found */
static inline uint64_t sched_timer_with(const struct hart *h, uint64_t d)
{
	return d < h->timer_rest ? d : h->timer_rest;
}

/* ... and a software LCOFI's recheck: what sched_fast_return asks of the vPMU after other exits */
static inline bool sched_pmu_unchanged(struct hart *h, struct vcpu *v, const struct sched_seen *was)
{
	return sched_pmu_call_unchanged(h, v, was) &&
	       vcpu_arch_wants_recheck(&v->arch) == was->recheck;
}

/*
 * After an SBI call or an emulated instruction: back into the guest at once
 * when the loop would decide nothing new. What other harts ask for comes
 * with an IPI (an interrupt exit: the long way); a call that changes what
 * this hart runs sets resched or the vCPU's state; the timer stays right as
 * long as the deadlines it was armed for stay (a later watchdog heartbeat
 * only makes it fire early). Exclusive counting: the vCPU keeps counting
 * within the turn it holds, or keeps not counting without the token
 * (excl_unchanged). Inline: the trap vector's short way asks this after
 * every SBI call.
 */
static inline bool sched_fast_return(struct hart *h, struct vcpu *v, const struct sched_seen *was)
{
	const struct vcpu_arch *a = &v->arch;

	if ((a->ctx.scause & CAUSE_IRQ_FLAG) || h->cur != v || v->state != VCPU_RUNNABLE ||
	    v->vm->state != VM_RUNNING || vcpu_arch_timer_deadline(a) != was->timer)
		return false;
	return sched_pmu_unchanged(h, v, was);
}

/* Before every entry but the PMU lane's: the interrupts to inject, the arch's other entry work */
static inline void sched_before_entry(struct hart *h, struct vcpu *v)
{
	struct hart_status *st = h->status;

#ifdef HV_DEBUG
	/* the debug build's check: a vCPU runs only with its state in this hart's registers */
	if (hart_loaded(h) != v)
		hv_panic("hart %lu enters guest %s vcpu %u, which is not loaded on it", h->hartid,
			 v->vm->name, v->id);
#endif
	st->doing = HART_GUEST;
	st->entries++;
	if (unlikely(vcpu_arch_entry_work(&v->arch)))
		vcpu_arch_prepare_entry(&v->arch);
}

static inline void sched_after_exit(struct hart *h, struct vcpu *v)
{
	struct hart_status *st = h->status;

	st->doing = HART_HYPERVISOR;
	st->last_cause = vcpu_ctx(v)->scause;
	st->last_pc = vcpu_ctx(v)->sepc;
}

/* The boot barrier (core/boot_sync.c): h reached its first idle sleep or guest entry */
void sched_settle_slow(struct hart *h);
static inline void sched_settle(struct hart *h)
{
	if (!h->settled)
		sched_settle_slow(h);
}
/* An idle hart, woken: the vPMU's boot probe may have asked it for work */
void sched_probe_poll(void);
/*
 * The short way's SBI calls but PMU ones (core/lane.c): the context to resume
 * at once, or NULL with the exit handled
 */
struct vcpu_ctx *sched_sbi_ecall(struct vcpu_ctx *c);

#endif
