/* SPDX-License-Identifier: BSD-2-Clause */
/* RISC-V state of a vCPU and a VM, embedded in core's struct vcpu / struct vm. */
#ifndef ARCH_VCPU_ARCH_H
#define ARCH_VCPU_ARCH_H

#include <stdbool.h>
#include <stdint.h>
#include "arch/riscv/ctx.h"

struct vcpu;
struct vm;

struct vcpu_arch {
	struct vcpu_ctx ctx; /* first: the trap path finds it through sscratch */
	/* VS-level CSRs, live only while the vCPU is loaded on a hart */
	unsigned long vsstatus, vsie, vstvec, vsscratch, vsepc, vscause, vstval, vsatp;
	/* VS-mode writes these HS registers directly: there is no VS copy */
	unsigned long scounteren, senvcfg;
	unsigned long hvip;
	unsigned long vstimecmp;  /* Sstc hosts: the guest writes it directly */
	unsigned long timer_next; /* non-Sstc hosts: deadline from SBI set_timer */
	unsigned long fp[33];	  /* f0..f31, fcsr */
	/* side by side: the scheduler's short way tests both at once (vcpu_arch_entry_work) */
	bool lcofi_soft;	/* a virtual LCOFI waits for software delivery */
	bool lcofi_in_hvip;	/* hvip path: an LCOFI was raised and may still be pending */
	bool fp_live;		/* fp[] holds the state, not the hart */
	bool lcofi_by_software; /* the core's choice: never through hvip (kept across resets) */
	unsigned long nr_lcofi; /* virtual LCOFIs raised, for statistics */
	unsigned long nr_lcofi_dropped; /* software LCOFIs dropped before delivery */
};

/*
 * Earliest time the vCPU's own timer fires, while it is not loaded. Only one
 * of the two is ever set, the other stays UINT64_MAX: vstimecmp on Sstc
 * hosts (the guest writes it directly), timer_next (SBI set_timer) on the
 * others. Inline: the scheduler's short way reads it after every SBI call.
 */
static inline uint64_t vcpu_arch_timer_deadline(const struct vcpu_arch *a)
{
	return a->vstimecmp < a->timer_next ? a->vstimecmp : a->timer_next;
}

/* The vCPU needs the hart back soon even without a trap (pending software LCOFI) */
static inline bool vcpu_arch_wants_recheck(const struct vcpu_arch *a)
{
	return a->lcofi_soft;
}

struct vm_arch {
	unsigned long hgatp;
	uintptr_t gstage_root;
};

void vcpu_arch_reset(struct vcpu *vcpu, unsigned long pc, unsigned long a1);
void vcpu_arch_load(struct vcpu *vcpu);
void vcpu_arch_put(struct vcpu *vcpu);
/* Before every entry: interrupts other harts raised, LCOFI first, the non-Sstc timer */
void vcpu_arch_prepare_entry(struct vcpu *vcpu);
/*
 * Whether vcpu_arch_prepare_entry has anything to do besides the pending
 * interrupts other harts raised: inline, so that the common entry (an SBI
 * call answered on the short way) makes no call for it.
 */
static inline bool vcpu_arch_entry_work(const struct vcpu_arch *a)
{
	return a->lcofi_soft || a->lcofi_in_hvip || a->timer_next != UINT64_MAX;
}
/* Of that work, what an SBI PMU call can add: an LCOFI to deliver */
static inline bool vcpu_arch_lcofi_work(const struct vcpu_arch *a)
{
	return a->lcofi_soft || a->lcofi_in_hvip;
}
/* Enter the guest (loaded and prepared); returns on its next trap that the
 * trap vector's short way (SBI calls, core's sched_guest_ecall) did not answer */
void vcpu_arch_run(struct vcpu *vcpu);
/* The instruction the vCPU trapped on (virtual-instruction exceptions) */
unsigned long vcpu_arch_trapped_insn(struct vcpu *vcpu);
/* A VS interrupt is pending and enabled, per the vCPU's saved state */
bool vcpu_arch_irq_pending(struct vcpu *vcpu, unsigned long now);
/* Emulate an exception trap into the guest's VS-mode handler */
void vcpu_arch_inject_exception(struct vcpu *vcpu, unsigned long cause, unsigned long tval);
/* Clear hvip bits of the vCPU, loaded or not */
void vcpu_arch_clear_irq(struct vcpu *vcpu, unsigned long hvip_bits);
/* Raise the guest's counter-overflow interrupt (LCOFI, 13) */
void vcpu_arch_raise_lcofi(struct vcpu *vcpu);
void vcpu_arch_cancel_lcofi(struct vcpu *vcpu);

/* How LCOFI reaches guests on this host: "hvip" (Ssaia) or "software" */
const char *vcpu_arch_lcofi_path(void);
/* Set the guest's timer (SBI set_timer) */
void vcpu_arch_set_timer(struct vcpu *vcpu, uint64_t when);

int vm_arch_init(struct vm *vm);

#endif
