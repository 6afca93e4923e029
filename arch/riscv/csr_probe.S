/* SPDX-License-Identifier: BSD-2-Clause */
/* CSR accesses that may trap on some harts, tried with a trap vector of their own. */
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
