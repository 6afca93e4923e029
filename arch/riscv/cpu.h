/* SPDX-License-Identifier: BSD-2-Clause */
/* Small hart-level primitives the rest of the hypervisor needs without asm of its own. */
#ifndef ARCH_RISCV_CPU_H
#define ARCH_RISCV_CPU_H

#include "arch/riscv/ipi.h"
#include "arch/riscv/sbi_call.h"

/* Execute exactly 2 * iters instructions (a known amount of work for probes) */
static inline void cpu_spin(unsigned long iters)
{
	if (iters)
		asm volatile("1: addi %0, %0, -1\n\tbnez %0, 1b" : "+r"(iters));
}

/* In a loop that polls memory: Zihintpause's PAUSE, a FENCE that does nothing without it */
static inline void cpu_relax(void)
{
	asm volatile(".4byte 0x0100000f" ::: "memory");
}

/* The hypervisor keeps this hart's `struct hart` pointer in tp */
static inline void *cpu_get_tp(void)
{
	void *p;

	asm volatile("mv %0, tp" : "=r"(p));
	return p;
}

static inline void cpu_set_tp(void *p)
{
	asm volatile("mv tp, %0" : : "r"(p));
}

/* Wait for an interrupt (any, enabled or not by sstatus.SIE) */
static inline void cpu_wfi(void)
{
	asm volatile("wfi");
}

/* Drop every VS-stage translation of this hart (hfence.vvma x0, x0) */
static inline void hfence_vvma_all(void)
{
	asm volatile(".word 0x22000073" ::: "memory");
}

/* Drop every G-stage and combined translation of this hart, all VMIDs (hfence.gvma x0, x0) */
static inline void hfence_gvma_all(void)
{
	asm volatile(".word 0x62000073" ::: "memory");
}

/* ... of VMID 0 only (hfence.gvma x0, t0 with t0 = 0: rs2 = x0 would mean every VMID) */
static inline void hfence_gvma_vmid0(void)
{
	asm volatile("li t0, 0\n\t.word 0x62500073" ::: "t0", "memory");
}

static inline void fence_i(void)
{
	asm volatile("fence.i" ::: "memory");
}

/* What a remote fence for guests does on this hart: every VS-stage translation, and fence.i */
static inline void hart_fence_guests(void)
{
	hfence_vvma_all();
	fence_i();
}

#endif
