// SPDX-License-Identifier: BSD-2-Clause
/* Trap mechanics the core's exit handling (core/exit.c) needs, and traps of the hypervisor itself. */
#include "arch/riscv/csr.h"
#include "arch/riscv/guest_va.h"
#include "core/lib.h"
#include "arch/riscv/vcpu_arch.h"

/* The instruction that trapped: stval has it on QEMU, else read it through VS translation */
unsigned long vcpu_arch_trapped_insn(const struct vcpu_ctx *c)
{
	unsigned long lo, hi;

	if (c->stval)
		return c->stval;
	/* hlvx.hu: a guest-virtual fetch-permission read of 16 bits */
	asm volatile(".insn r 0x73, 0x4, 0x32, %0, %1, x3" : "=r"(lo) : "r"(c->sepc));
	if ((lo & 3) != 3)
		return lo;
	asm volatile(".insn r 0x73, 0x4, 0x32, %0, %1, x3" : "=r"(hi) : "r"(c->sepc + 2));
	return lo | (hi << 16);
}

/* A trap of the hypervisor itself: a guest-virtual load's fault returns (guest_va.c), else a bug */
void hv_self_trap(unsigned long scause, unsigned long sepc, unsigned long stval, unsigned long ra)
{
	if (guest_va_fixup(scause, sepc))
		return;
	hv_panic("trap in the hypervisor: scause=0x%lx sepc=0x%lx stval=0x%lx ra=0x%lx", scause,
		 sepc, stval, ra);
}
