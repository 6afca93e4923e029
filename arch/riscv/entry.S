/* SPDX-License-Identifier: BSD-2-Clause */
/* Boot entry from OpenSBI, secondary hart entry, guest enter/exit. */
#include "arch/riscv/ctx.h"
#include "arch/riscv/csr.h"
#include "arch/riscv/sbi_spec.h"

#define HV_STACK_SIZE 16384

	.section .text.entry, "ax"
	.globl _start
/*
 * The C code is built for RVA22's bit manipulation, Zba, Zbb and Zbs (one
 * instruction for a counter mask's lowest bit, its bit tests and its
 * index arithmetic). Before any of it runs, each hart executes one
 * instruction of each: an illegal one reaches stvec (OpenSBI redirects
 * what it does not emulate), and a hart without them says so on the SBI
 * console and shuts the machine down (system failure). t0-t3 only.
 */
.macro PROBE_BITMANIP
	la	t0, bitmanip_probe_trap
	csrw	stvec, t0
	li	t1, 0			/* traps taken */
	sh1add	t2, t1, t1		/* Zba */
	ctz	t2, t1			/* Zbb */
	bexti	t2, t1, 0		/* Zbs */
	bnez	t1, no_bitmanip
.endm

/* Boot hart: a0 = hart id, a1 = host FDT (fw_dynamic convention). */
_start:
	csrw	sscratch, zero
	PROBE_BITMANIP
	la	t0, hs_trap_vector
	csrw	stvec, t0
	la	sp, boot_stack_top
	mv	tp, zero
	/* clear BSS (boot_stack lives in .data so it survives) */
	la	t0, _bss_start
	la	t1, _bss_end
1:	bgeu	t0, t1, 2f
	sd	zero, 0(t0)
	addi	t0, t0, 8
	j	1b
2:	call	hv_main
3:	wfi
	j	3b

	.globl _secondary_start
/* Secondary harts via SBI HSM hart_start: a0 = hart id, a1 = struct hart *. */
_secondary_start:
	csrw	sscratch, zero
	PROBE_BITMANIP
	la	t0, hs_trap_vector
	csrw	stvec, t0
	mv	tp, a1
	ld	sp, 0(a1)		/* struct hart starts with its stack top */
	call	hv_secondary_main
1:	wfi
	j	1b

	.align 2
bitmanip_probe_trap:			/* skip the probe instruction, count it */
	csrr	t3, sepc
	addi	t3, t3, 4
	csrw	sepc, t3
	addi	t1, t1, 1
	sret

no_bitmanip:
	la	t0, no_bitmanip_msg
1:	lbu	a0, 0(t0)
	beqz	a0, 2f
	li	a7, SBI_EXT_DBCN
	li	a6, SBI_EXT_DBCN_CONSOLE_WRITE_BYTE
	ecall
	addi	t0, t0, 1
	j	1b
2:	li	a7, SBI_EXT_SRST
	li	a6, SBI_EXT_SRST_RESET
	li	a0, SBI_SRST_RESET_TYPE_SHUTDOWN
	li	a1, SBI_SRST_RESET_REASON_SYSFAIL
	ecall
3:	wfi
	j	3b

	.section .rodata
no_bitmanip_msg:
	.asciz	"pmuvisor: PANIC: this hart lacks Zba, Zbb or Zbs (RVA22 bit manipulation), which pmuvisor is built for\n"

	.text
/*
 * void ctx_enter_guest(struct vcpu_ctx *ctx)
 * Saves the hypervisor's callee-saved state on its stack, loads the guest
 * and srets into it. The guest's trap comes back through hs_trap_vector,
 * which returns from this function.
 */
	.globl ctx_enter_guest
ctx_enter_guest:
	addi	sp, sp, -16 * 8
	sd	ra, 0 * 8(sp)
	sd	s0, 1 * 8(sp)
	sd	s1, 2 * 8(sp)
	sd	s2, 3 * 8(sp)
	sd	s3, 4 * 8(sp)
	sd	s4, 5 * 8(sp)
	sd	s5, 6 * 8(sp)
	sd	s6, 7 * 8(sp)
	sd	s7, 8 * 8(sp)
	sd	s8, 9 * 8(sp)
	sd	s9, 10 * 8(sp)
	sd	s10, 11 * 8(sp)
	sd	s11, 12 * 8(sp)
	sd	tp, 13 * 8(sp)
	sd	gp, 14 * 8(sp)
	sd	sp, CTX_HV_SP(a0)

	/* what the short way keeps in place; the rest is ctx_resume's, in hs_trap_vector */
	ld	t0, CTX_HSTATUS(a0)
	csrw	hstatus, t0
	ld	t0, CTX_SSTATUS(a0)
	csrw	sstatus, t0
	mv	sp, a0
	ld	gp, CTX_REG(3)(sp)
	ld	s0, CTX_REG(8)(sp)
	ld	s1, CTX_REG(9)(sp)
	ld	s2, CTX_REG(18)(sp)
	ld	s3, CTX_REG(19)(sp)
	ld	s4, CTX_REG(20)(sp)
	ld	s5, CTX_REG(21)(sp)
	ld	s6, CTX_REG(22)(sp)
	ld	s7, CTX_REG(23)(sp)
	ld	s8, CTX_REG(24)(sp)
	ld	s9, CTX_REG(25)(sp)
	ld	s10, CTX_REG(26)(sp)
	ld	s11, CTX_REG(27)(sp)
	j	ctx_resume

/*
 * Every trap lands here. From a guest, sscratch holds its vcpu_ctx; from
 * the hypervisor itself it holds 0, which is a hypervisor bug: report it.
 *
 * First only what a C call may clobber is saved. An SBI call (the hot path:
 * every guest PMU operation) is then answered by sched_guest_ecall on the
 * hypervisor stack, while s0-s11 still hold the guest's values (C keeps
 * them), and the guest resumes without a trip through the scheduler. Any
 * other trap, or a call after which the scheduler must look, takes the long
 * way: the rest of the context is saved and ctx_enter_guest returns.
 */
	.align 2
	.globl hs_trap_vector
hs_trap_vector:
	csrrw	sp, sscratch, sp
	beqz	sp, hs_self_trap
	/* sp = ctx, sscratch = guest sp */
	sd	ra, CTX_REG(1)(sp)
	sd	tp, CTX_REG(4)(sp)
	sd	t0, CTX_REG(5)(sp)
	sd	t1, CTX_REG(6)(sp)
	sd	t2, CTX_REG(7)(sp)
	sd	a0, CTX_REG(10)(sp)
	sd	a1, CTX_REG(11)(sp)
	sd	a2, CTX_REG(12)(sp)
	sd	a3, CTX_REG(13)(sp)
	sd	a4, CTX_REG(14)(sp)
	sd	a5, CTX_REG(15)(sp)
	sd	a6, CTX_REG(16)(sp)
	sd	a7, CTX_REG(17)(sp)
	sd	t3, CTX_REG(28)(sp)
	sd	t4, CTX_REG(29)(sp)
	sd	t5, CTX_REG(30)(sp)
	sd	t6, CTX_REG(31)(sp)
	csrrw	t0, sscratch, zero
	sd	t0, CTX_REG(2)(sp)
	csrr	t0, sstatus
	sd	t0, CTX_SSTATUS(sp)
	csrr	t1, scause
	sd	t1, CTX_SCAUSE(sp)
	csrr	t0, sepc
	li	t2, CAUSE_VS_ECALL
	bne	t1, t2, hs_trap_other
	addi	t0, t0, 4		/* an SBI call returns past its ecall (a restart undoes it) */
	sd	t0, CTX_SEPC(sp)

	/*
	 * The hypervisor's tp from ctx_enter_guest's frame, its stack below it.
	 * gp stays the guest's: the hypervisor never uses it (no __global_pointer$,
	 * so the linker relaxes nothing to it).
	 */
	mv	a0, sp
	ld	t0, CTX_HV_SP(sp)
	ld	tp, 13 * 8(t0)
	addi	sp, t0, -16
	sd	a0, 0(sp)
	call	sched_guest_ecall
	ld	sp, 0(sp)
	beqz	a0, hs_trap_long
	/*
	 * Answered (hstatus and sstatus are still the trap's: C changes the CSR
	 * when it changes the copy, vcpu_arch_inject_exception). Also the end of
	 * ctx_enter_guest: sp = ctx; sepc as C left it, the registers a C call may
	 * clobber, sp last.
	 */
ctx_resume:
	ld	t0, CTX_SEPC(sp)
	csrw	sepc, t0
	csrw	sscratch, sp
	ld	ra, CTX_REG(1)(sp)
	ld	tp, CTX_REG(4)(sp)
	ld	t0, CTX_REG(5)(sp)
	ld	t1, CTX_REG(6)(sp)
	ld	t2, CTX_REG(7)(sp)
	ld	a0, CTX_REG(10)(sp)
	ld	a1, CTX_REG(11)(sp)
	ld	a2, CTX_REG(12)(sp)
	ld	a3, CTX_REG(13)(sp)
	ld	a4, CTX_REG(14)(sp)
	ld	a5, CTX_REG(15)(sp)
	ld	a6, CTX_REG(16)(sp)
	ld	a7, CTX_REG(17)(sp)
	ld	t3, CTX_REG(28)(sp)
	ld	t4, CTX_REG(29)(sp)
	ld	t5, CTX_REG(30)(sp)
	ld	t6, CTX_REG(31)(sp)
	ld	sp, CTX_REG(2)(sp)
	sret

/*
 * Any trap but an SBI call: sepc as it is (t0). The local counter overflow
 * interrupt (t1 = scause) takes the short way too: sched_guest_lcofi, like
 * sched_guest_ecall, answers it or says the long way must (NULL).
 */
hs_trap_other:
	sd	t0, CTX_SEPC(sp)
	bgez	t1, hs_trap_long	/* an exception */
	slli	t2, t1, 1		/* the interrupt's number, doubled */
	li	t3, IRQ_PMU_OVF * 2
	bne	t2, t3, hs_trap_long
	mv	a0, sp
	ld	t0, CTX_HV_SP(sp)
	ld	tp, 13 * 8(t0)
	addi	sp, t0, -16
	sd	a0, 0(sp)
	call	sched_guest_lcofi
	ld	sp, 0(sp)
	bnez	a0, ctx_resume
/* The long way: sp = ctx, sscratch = 0; the rest of the guest's state, then back to C */
hs_trap_long:
	sd	gp, CTX_REG(3)(sp)
	sd	s0, CTX_REG(8)(sp)
	sd	s1, CTX_REG(9)(sp)
	sd	s2, CTX_REG(18)(sp)
	sd	s3, CTX_REG(19)(sp)
	sd	s4, CTX_REG(20)(sp)
	sd	s5, CTX_REG(21)(sp)
	sd	s6, CTX_REG(22)(sp)
	sd	s7, CTX_REG(23)(sp)
	sd	s8, CTX_REG(24)(sp)
	sd	s9, CTX_REG(25)(sp)
	sd	s10, CTX_REG(26)(sp)
	sd	s11, CTX_REG(27)(sp)
	csrr	t0, hstatus
	sd	t0, CTX_HSTATUS(sp)
	csrr	t0, stval
	sd	t0, CTX_STVAL(sp)
	csrr	t0, htval
	sd	t0, CTX_HTVAL(sp)
	csrr	t0, htinst
	sd	t0, CTX_HTINST(sp)

	ld	sp, CTX_HV_SP(sp)
	ld	ra, 0 * 8(sp)
	ld	s0, 1 * 8(sp)
	ld	s1, 2 * 8(sp)
	ld	s2, 3 * 8(sp)
	ld	s3, 4 * 8(sp)
	ld	s4, 5 * 8(sp)
	ld	s5, 6 * 8(sp)
	ld	s6, 7 * 8(sp)
	ld	s7, 8 * 8(sp)
	ld	s8, 9 * 8(sp)
	ld	s9, 10 * 8(sp)
	ld	s10, 11 * 8(sp)
	ld	s11, 12 * 8(sp)
	ld	tp, 13 * 8(sp)
	ld	gp, 14 * 8(sp)
	addi	sp, sp, 16 * 8
	ret

hs_self_trap:
	csrrw	sp, sscratch, sp	/* back to the hypervisor stack, sscratch = 0 */
	addi	sp, sp, -32
	sd	ra, 0(sp)
	csrr	a0, scause
	csrr	a1, sepc
	csrr	a2, stval
	mv	a3, ra
	call	hv_self_trap
	/* it returned: sepc is where to go on (a fault the code expected) */
	ld	ra, 0(sp)
	addi	sp, sp, 32
	sret

	.section .data
	.align 4
boot_stack:
	.space HV_STACK_SIZE
boot_stack_top:
