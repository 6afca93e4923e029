/* SPDX-License-Identifier: GPL-2.0 */
/*
 * No-libc workload that sleeps 10 x 10 ms with nanosleep(2), so the kernel
 * programs its timer (SBI SET_TIMER, or stimecmp with Sstc) many times.
 */
	.option	norvc
	.text
	.globl	_start
	.type	_start, @function
_start:
	li	s0, 10
1:
	la	a0, ten_ms
	li	a1, 0
	li	a7, 101			/* nanosleep */
	ecall
	addi	s0, s0, -1
	bnez	s0, 1b
	li	a0, 0
	li	a7, 93			/* exit */
	ecall
	.size	_start, . - _start

	.section .rodata
	.balign	8
ten_ms:
	.dword	0			/* tv_sec */
	.dword	10000000		/* tv_nsec */
