// SPDX-License-Identifier: BSD-2-Clause
/* Trap mechanics the core's exit handling (core/exit.c) needs, and traps of the hypervisor itself. */
#include "arch/riscv/csr.h"
#include "arch/riscv/guest_va.h"
#include "core/lib.h"
#include "arch/riscv/vcpu_arch.h"

unsigned long hlvx_hu_probe(unsigned long va, unsigned long *val);

/* 16 bits at guest virtual address va as the guest fetches them; false and *f if that faults */
static bool read_half(unsigned long va, unsigned long *half, struct vcpu_fetch_fault *f)
{
	unsigned long cause = hlvx_hu_probe(va, half);

	if (!cause)
		return true;
	f->cause = cause;
	f->stval = csr_read(CSR_STVAL);
	f->htval = csr_read(CSR_HTVAL);
	return false;
}

/*
 * The instruction that trapped, read through the guest's translation (where
 * stval does not hold it). That read may fault although the guest fetched
 * the instruction: the guest changed its page table without sfence.vma, or
 * another of its harts did, between its fetch and this read. The fault is
 * caught here (a trap in the hypervisor is a panic) and given back in *f.
 */
unsigned long vcpu_arch_fetch_insn(const struct vcpu_ctx *c, struct vcpu_fetch_fault *f)
{
	unsigned long lo, hi;

	f->cause = 0; /* read: a 0 returned is the instruction 0x0000, defined illegal */
	if (!read_half(c->sepc, &lo, f))
		return 0;
	if ((lo & 3) != 3)
		return lo;
	if (!read_half(c->sepc + 2, &hi, f))
		return 0;
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
