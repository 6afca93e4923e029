/* SPDX-License-Identifier: BSD-2-Clause */
/* Save and restore a guest's FP registers; the hypervisor itself has no FP. */
	.option push
	.option arch, +d
	.text
	.globl fpu_save
/* void fpu_save(unsigned long *area): f0..f31 then fcsr */
fpu_save:
	.irp n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	fsd	f\n, \n * 8(a0)
	.endr
	frcsr	t0
	sd	t0, 32 * 8(a0)
	ret

	.globl fpu_restore
fpu_restore:
	.irp n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	fld	f\n, \n * 8(a0)
	.endr
	ld	t0, 32 * 8(a0)
	fscsr	t0
	ret
	.option pop
