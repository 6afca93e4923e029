/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Guest test image entry points: the boot hart (a0 = hart id, a1 = FDT),
 * secondary harts started by SBI HSM (a0 = hart id, a1 = opaque), the
 * stvec trap entry and the U-mode trampoline.
 */
#define GT_MAX_HARTS	8
#define GT_STACK_SIZE	16384
#define GT_USTACK_SIZE	8192
#define GT_USER_EXIT_EID 0x47545558
#define FRAME_SIZE	288	/* 32 regs + sepc, sstatus, scause, stval */
#define HART_USER_KSP	8	/* offsetof(struct gt_hart, user_ksp) */
#define HART_ENTRY_SSTATUS 16
#define HART_ENTRY_SATP	24

	.section .text.entry, "ax"
	.globl _start
_start:
	.option push
	.option norelax
	la	gp, __global_pointer$
	.option pop
	csrw	sie, zero
	csrci	sstatus, 2
	li	t0, GT_MAX_HARTS
	bgeu	a0, t0, .Lhang
	/* clear .bss (the stacks live outside it) */
	la	t0, __bss_start
	la	t1, __bss_end
1:	bgeu	t0, t1, 2f
	sd	zero, 0(t0)
	addi	t0, t0, 8
	j	1b
2:	jal	t6, .Lsetup_hart
	call	gt_boot_c
	j	.Lhang

	.text
	.globl gt_secondary_entry
	.align 2
gt_secondary_entry:
	csrr	t4, sstatus
	csrr	t5, satp
	.option push
	.option norelax
	la	gp, __global_pointer$
	.option pop
	csrw	sie, zero
	csrci	sstatus, 2
	li	t0, GT_MAX_HARTS
	bgeu	a0, t0, .Lhang
	jal	t6, .Lsetup_hart
	sd	t4, HART_ENTRY_SSTATUS(tp)
	sd	t5, HART_ENTRY_SATP(tp)
	call	gt_secondary_c
	j	.Lhang

/* a0 = hart id: set tp, sp, stvec, sscratch; returns through t6 */
.Lsetup_hart:
	la	tp, gt_harts
	la	t0, gt_hart_size
	ld	t0, 0(t0)
	mul	t0, t0, a0
	add	tp, tp, t0
	la	sp, gt_stacks
	li	t0, GT_STACK_SIZE
	addi	t1, a0, 1
	mul	t0, t0, t1
	add	sp, sp, t0
	la	t0, gt_trap_entry
	csrw	stvec, t0
	csrw	sscratch, zero
	jr	t6

.Lhang:
	wfi
	j	.Lhang

/*
 * Trap entry. sscratch is 0 while in S-mode and holds the kernel stack
 * pointer while a gt_run_user() function runs in U-mode.
 */
	.globl gt_trap_entry
	.align 4
gt_trap_entry:
	csrrw	sp, sscratch, sp
	bnez	sp, 1f
	csrr	sp, sscratch
1:	addi	sp, sp, -FRAME_SIZE
	sd	x1, 1*8(sp)
	sd	x3, 3*8(sp)
	sd	x4, 4*8(sp)
	sd	x5, 5*8(sp)
	sd	x6, 6*8(sp)
	sd	x7, 7*8(sp)
	sd	x8, 8*8(sp)
	sd	x9, 9*8(sp)
	sd	x10, 10*8(sp)
	sd	x11, 11*8(sp)
	sd	x12, 12*8(sp)
	sd	x13, 13*8(sp)
	sd	x14, 14*8(sp)
	sd	x15, 15*8(sp)
	sd	x16, 16*8(sp)
	sd	x17, 17*8(sp)
	sd	x18, 18*8(sp)
	sd	x19, 19*8(sp)
	sd	x20, 20*8(sp)
	sd	x21, 21*8(sp)
	sd	x22, 22*8(sp)
	sd	x23, 23*8(sp)
	sd	x24, 24*8(sp)
	sd	x25, 25*8(sp)
	sd	x26, 26*8(sp)
	sd	x27, 27*8(sp)
	sd	x28, 28*8(sp)
	sd	x29, 29*8(sp)
	sd	x30, 30*8(sp)
	sd	x31, 31*8(sp)
	csrr	t0, sscratch
	sd	t0, 2*8(sp)
	sd	zero, 0(sp)
	csrw	sscratch, zero
	csrr	t0, sepc
	sd	t0, 32*8(sp)
	csrr	t0, sstatus
	sd	t0, 33*8(sp)
	csrr	t0, scause
	sd	t0, 34*8(sp)
	csrr	t0, stval
	sd	t0, 35*8(sp)
	.option push
	.option norelax
	la	gp, __global_pointer$
	.option pop
	mv	a0, sp
	call	gt_trap_c
	ld	t0, 32*8(sp)
	csrw	sepc, t0
	ld	t0, 33*8(sp)
	csrw	sstatus, t0
	andi	t0, t0, 0x100	/* SPP */
	bnez	t0, 2f
	addi	t0, sp, FRAME_SIZE
	csrw	sscratch, t0
2:	ld	x1, 1*8(sp)
	ld	x3, 3*8(sp)
	ld	x4, 4*8(sp)
	ld	x5, 5*8(sp)
	ld	x6, 6*8(sp)
	ld	x7, 7*8(sp)
	ld	x8, 8*8(sp)
	ld	x9, 9*8(sp)
	ld	x10, 10*8(sp)
	ld	x11, 11*8(sp)
	ld	x12, 12*8(sp)
	ld	x13, 13*8(sp)
	ld	x14, 14*8(sp)
	ld	x15, 15*8(sp)
	ld	x16, 16*8(sp)
	ld	x17, 17*8(sp)
	ld	x18, 18*8(sp)
	ld	x19, 19*8(sp)
	ld	x20, 20*8(sp)
	ld	x21, 21*8(sp)
	ld	x22, 22*8(sp)
	ld	x23, 23*8(sp)
	ld	x24, 24*8(sp)
	ld	x25, 25*8(sp)
	ld	x26, 26*8(sp)
	ld	x27, 27*8(sp)
	ld	x28, 28*8(sp)
	ld	x29, 29*8(sp)
	ld	x30, 30*8(sp)
	ld	x31, 31*8(sp)
	ld	x2, 2*8(sp)
	sret

/*
 * unsigned long gt_run_user(unsigned long (*fn)(unsigned long), unsigned long arg)
 * Runs fn(arg) in U-mode on this hart's user stack. fn returns to
 * gt_user_exit_stub, whose ecall lands in gt_trap_c, which calls
 * gt_user_return(a0) to resume here.
 */
	.globl gt_run_user
gt_run_user:
	addi	sp, sp, -112
	sd	ra, 0(sp)
	sd	s0, 8(sp)
	sd	s1, 16(sp)
	sd	s2, 24(sp)
	sd	s3, 32(sp)
	sd	s4, 40(sp)
	sd	s5, 48(sp)
	sd	s6, 56(sp)
	sd	s7, 64(sp)
	sd	s8, 72(sp)
	sd	s9, 80(sp)
	sd	s10, 88(sp)
	sd	s11, 96(sp)
	csrr	t0, sstatus
	sd	t0, 104(sp)
	sd	sp, HART_USER_KSP(tp)
	csrci	sstatus, 2		/* no interrupts until sret */
	csrw	sscratch, sp
	csrw	sepc, a0
	mv	a0, a1
	la	ra, gt_user_exit_stub
	/* user sp = gt_ustacks + (hartid + 1) * GT_USTACK_SIZE */
	ld	t0, 0(tp)
	addi	t0, t0, 1
	li	t1, GT_USTACK_SIZE
	mul	t0, t0, t1
	la	t1, gt_ustacks
	add	sp, t1, t0
	li	t1, 0x100		/* SPP = U */
	csrc	sstatus, t1
	li	t1, 0x20		/* SPIE */
	csrs	sstatus, t1
	sret

	.globl gt_user_exit_stub
gt_user_exit_stub:
	li	a7, GT_USER_EXIT_EID
	ecall
	j	gt_user_exit_stub

/* void gt_user_return(unsigned long ret): called from the trap handler */
	.globl gt_user_return
gt_user_return:
	ld	sp, HART_USER_KSP(tp)
	csrw	sscratch, zero
	ld	t0, 104(sp)
	csrw	sstatus, t0
	ld	ra, 0(sp)
	ld	s0, 8(sp)
	ld	s1, 16(sp)
	ld	s2, 24(sp)
	ld	s3, 32(sp)
	ld	s4, 40(sp)
	ld	s5, 48(sp)
	ld	s6, 56(sp)
	ld	s7, 64(sp)
	ld	s8, 72(sp)
	ld	s9, 80(sp)
	ld	s10, 88(sp)
	ld	s11, 96(sp)
	addi	sp, sp, 112
	ret

	.section .stacks, "aw", @nobits
	.align 12
	.globl gt_stacks
gt_stacks:
	.space GT_MAX_HARTS * GT_STACK_SIZE
	.globl gt_ustacks
gt_ustacks:
	.space GT_MAX_HARTS * GT_USTACK_SIZE
