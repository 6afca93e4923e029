/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Loads at a guest-virtual address (HLV.D): through the loaded vCPU's vsatp
 * and its VM's G-stage, with the permissions of hstatus.SPVP's mode. Any
 * fault ends the load instead of stopping the hypervisor: hv_self_trap
 * (trap.c) sends a trap at guest_va_load to guest_va_fault. A C caller
 * sees an ordinary call, so the registers a call may clobber are free.
 */
	.text
	.align 2
/* long guest_va_load(unsigned long va, uint64_t *out): 0, or -1 if it faulted */
	.globl guest_va_load
guest_va_load:
	.insn r 0x73, 0x4, 0x36, t0, a0, x0	/* hlv.d t0, (a0) */
	sd	t0, 0(a1)
	li	a0, 0
	ret
	.globl guest_va_fault
guest_va_fault:
	li	a0, -1
	ret
