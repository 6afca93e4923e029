/* SPDX-License-Identifier: BSD-2-Clause */
/* Accesses that may trap (CSRs some harts lack, guest memory), tried with a trap vector of their own. */
#include "arch/riscv/csr.h"

	.text
/*
 * long cdeleg_probe_access(void): 0 if counter delegation's CSRs are
 * accessible (reads of siselect 0x40 = cycle: sireg, sireg2 = cyclecfg,
 * and scountinhibit), -1 if one of them traps. A trap lands on 1: with a0
 * still -1; stvec and sstatus (SIE/SPIE/SPP) are restored either way.
 */
	.globl cdeleg_probe_access
	.align 2
cdeleg_probe_access:
	csrr	t3, sstatus
	la	t0, 1f
	csrrw	t1, stvec, t0
	li	a0, -1
	li	t2, 0x40
	csrw	0x150, t2
	csrr	t2, 0x151
	csrr	t2, 0x152
	csrr	t2, 0x120
	li	a0, 0
	.align 2
1:	csrw	stvec, t1
	csrw	sstatus, t3
	ret

/*
 * unsigned long hlvx_hu_probe(unsigned long va, unsigned long *val):
 * hlvx.hu of guest virtual address va (the guest's translation, at the
 * privilege hstatus.SPVP says, execute permission), with a trap vector of
 * its own. 0 and *val = the 16 bits; or the scause of the trap, *val
 * untouched, and stval/htval as the trap left them. stvec, sstatus and
 * hstatus (a trap from HS-mode writes its SPV and GVA) are restored either
 * way: the guest's trap state stays as it was.
 */
	.globl hlvx_hu_probe
	.align 2
hlvx_hu_probe:
	csrr	t3, sstatus
	csrr	t4, hstatus
	la	t0, 1f
	csrrw	t1, stvec, t0
	li	t2, 0
	.insn r 0x73, 0x4, 0x32, t5, a0, x3	/* hlvx.hu t5, (a0) */
	sd	t5, 0(a1)
	j	2f
	.align 2
1:	csrr	t2, scause
2:	csrw	stvec, t1
	csrw	sstatus, t3
	csrw	hstatus, t4
	mv	a0, t2
	ret
