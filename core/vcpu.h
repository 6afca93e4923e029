/* SPDX-License-Identifier: BSD-2-Clause */
/* A virtual hart: its state machine, pending interrupts and PMU. */
#ifndef CORE_VCPU_H
#define CORE_VCPU_H

#include <stdint.h>
#include "core/hart.h"
#include "core/lib.h"
#include "arch/riscv/sbi_spec.h"
#include "arch/riscv/vcpu_arch.h"
#include "vpmu/vpmu.h"

struct vm;

enum vcpu_state {
	VCPU_STOPPED,	    /* HSM stopped, waits for hart_start */
	VCPU_STARTING,	    /* a hart_start claimed it and writes its start (core/sbi_hsm.c) */
	VCPU_START_PENDING, /* hart_start called, its hart will set it up */
	VCPU_RUNNABLE,
	VCPU_WFI,	   /* blocked in WFI until an interrupt is pending */
	VCPU_SUSPENDED,	   /* HSM retentive suspend */
	VCPU_SUSPENDED_NR, /* HSM non-retentive suspend */
	VCPU_DEAD,	   /* its VM stopped */
	VCPU_RELOAD,	   /* dead, and it asked for the reboot its hart now does (struct vm) */
};

struct vcpu {
	struct vcpu_arch arch; /* first */
	struct vm *vm;
	struct hart *hart;  /* the physical hart whose queue holds it */
	struct vcpu *next;  /* in that queue */
	unsigned int id;    /* the guest's hart id */
	bool pinned;	    /* cpu-affinity given: never moves to another hart */
	unsigned int moves; /* migrations so far, for the log */
	volatile int state;
	unsigned long start_pc, start_arg, resume_pc;
	/* firmware events raised by other harts, folded in by the owner */
	volatile unsigned long fw_pending[SBI_PMU_FW_MAX];
	volatile unsigned long fw_pending_any;
	struct vpmu vpmu;
};

static inline struct vcpu_ctx *vcpu_ctx(struct vcpu *v)
{
	return &v->arch.ctx;
}

/* The arch's loaded pointer is a vCPU's arch state, its first member: NULL stays NULL */
_Static_assert(offsetof(struct vcpu, arch) == 0, "struct vcpu starts with its arch state");

/* The vCPU whose state is live in hart h's registers (vcpu_arch_load/put), or NULL */
static inline struct vcpu *hart_loaded(const struct hart *h)
{
	return container_of(h->arch.loaded, struct vcpu, arch);
}

/* Raise an interrupt (hvip bit) on a vCPU from any hart */
void vcpu_raise_irq(struct vcpu *v, unsigned long hvip_bit);
/* Count a firmware event on a vCPU from any hart */
void vcpu_fw_event(struct vcpu *v, unsigned int fw_event);
void vcpu_fold_pending_slow(struct vcpu *v);
/* On the owner hart, before entering: fold what other harts raised */
static inline void vcpu_fold_pending(struct vcpu *v)
{
	/* a relaxed test on every SBI call; the acquire only when there is something to fold */
	if (__atomic_load_n(&v->fw_pending_any, __ATOMIC_RELAXED)) {
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		vcpu_fold_pending_slow(v);
	}
}
/* After vcpu_arch_run returns: handle the vCPU's exit (core/exit.c) */
void vcpu_handle_exit(struct vcpu *v);
/* Read trapped instructions from guest memory even where stval holds them (boot option) */
extern bool exit_insn_from_memory;
/* Its SBI call part, vcpu_handle_ecall (also the short way's), is inline in core/ecall.h */
/* Wake the hart owning v so it re-examines its queue */
void vcpu_kick(struct vcpu *v);

#endif
