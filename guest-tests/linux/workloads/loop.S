/* SPDX-License-Identifier: GPL-2.0 */
/*
 * No-libc user workload with an analytically known instruction count.
 *
 *   _start:    lui   t0, %hi(N)        1
 *              addiw t0, t0, %lo(N)    1
 *   loop:      addi  t0, t0, -1        N
 *              nop                     N
 *              bnez  t0, loop          N
 *   loop_end:  li    a7, 93 (exit)     1
 *              ecall                   1
 *                                      ---------
 *                                      3N + 4
 *
 * a0 (exit status) is 0: Linux clears the registers at execve.
 * ITERATIONS must be in [1, 2^31 - 2049]. Built with norvc so every
 * instruction is 4 bytes and loop/loop_end bound the sampled IPs.
 */
	.option	norvc
	.text
	.globl	_start, loop, loop_end
	.type	_start, @function
_start:
	lui	t0, %hi(ITERATIONS)
	addiw	t0, t0, %lo(ITERATIONS)
loop:
	addi	t0, t0, -1
	nop
	bnez	t0, loop
loop_end:
	li	a7, 93
	ecall
	.size	_start, . - _start
