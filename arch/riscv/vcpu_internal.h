/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Private to arch/riscv/vcpu_arch.c, vcpu_irq.c and vcpu_imsic.c: which vCPU
 * this hart holds, how LCOFI reaches guests on this host, and the one way
 * to write vstimecmp. Inline: vcpu_arch_load runs them at every switch.
 */
#ifndef ARCH_RISCV_VCPU_INTERNAL_H
#define ARCH_RISCV_VCPU_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include "arch/riscv/cpu.h"
#include "arch/riscv/csr.h"
#include "arch/riscv/vcpu_arch.h"

/* hvien/hvip bit 13 are writable: LCOFI can be injected by hardware (Ssaia) */
extern bool vcpu_lcofi_hvip;
/* Probe once whether hvip bit 13 can inject LCOFI into VS-mode (vcpu_arch_hart_init) */
void vcpu_probe_lcofi_hvip(void);

static inline bool uses_hvip(const struct vcpu_arch *a)
{
	return vcpu_lcofi_hvip && !a->lcofi_by_software;
}

/* This hart's part of its state (struct arch_hart, first in what tp points at) */
static inline struct arch_hart *this_arch_hart(void)
{
	return cpu_get_tp();
}

/* Whether a's state is live in this hart's CSRs, or saved in *a */
static inline bool loaded(const struct vcpu_arch *a)
{
	return this_arch_hart()->loaded == a;
}

/*
 * Every write of vstimecmp goes through here. QEMU 10 (time_helper.c,
 * riscv_timer_write_timecmp) keeps one host timer per hart for it: a value
 * in the past raises VSTIP at once but leaves armed the timer an earlier
 * value set, and that timer's callback sets VSTIP whatever vstimecmp holds
 * when it runs, late under host load. Another vCPU's deadline became a
 * timer interrupt for a guest whose compare value was UINT64_MAX (a fourth
 * tick in smp4-onehart, about 1 run in 100; docs/architecture.md, "A vCPU's
 * life"). UINT64_MAX drops the timer; a callback QEMU has already taken off
 * its list holds the lock (BQL) the second write waits for, so the value is
 * written after it.
 */
static inline void write_vstimecmp(uint64_t when)
{
	csr_write(CSR_VSTIMECMP, UINT64_MAX);
	csr_write(CSR_VSTIMECMP, UINT64_MAX);
	csr_write(CSR_VSTIMECMP, when);
}

#endif
