/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Host replacement for arch/riscv/cpu.h (found first through
 * -I core/test/stubs): no RISC-V assembly on the host.
 */
#ifndef ARCH_RISCV_CPU_H
#define ARCH_RISCV_CPU_H

#include "arch/riscv/sbi_call.h"

static inline void cpu_spin(unsigned long iters)
{
	for (volatile unsigned long i = 0; i < iters; i++)
		;
}

/* defined by the test that polls for another hart (core/excl.c): what that hart does meanwhile */
void cpu_relax(void);

extern void *host_tp; /* defined by the test that uses this_hart() */
static inline void *cpu_get_tp(void)
{
	return host_tp;
}

static inline void cpu_set_tp(void *p)
{
	host_tp = p;
}

static inline void cpu_wfi(void)
{
}

/* defined by the test that parks harts (core/excl.c) */
void hart_fence_guests(void);

static inline void hart_send_ipi(unsigned long hartid)
{
	sbi_ecall(SBI_EXT_IPI, SBI_EXT_IPI_SEND_IPI, 1, hartid, 0, 0, 0, 0);
}

#endif
