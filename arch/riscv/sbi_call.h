/* SPDX-License-Identifier: BSD-2-Clause */
/* Calls from the hypervisor (HS-mode) down to the host SBI (OpenSBI). */
#ifndef ARCH_SBI_CALL_H
#define ARCH_SBI_CALL_H

#include "arch/riscv/sbi_spec.h"

static inline struct sbi_ret sbi_ecall(unsigned long ext, unsigned long fid, unsigned long arg0,
				       unsigned long arg1, unsigned long arg2, unsigned long arg3,
				       unsigned long arg4, unsigned long arg5)
{
	register unsigned long a0 asm("a0") = arg0;
	register unsigned long a1 asm("a1") = arg1;
	register unsigned long a2 asm("a2") = arg2;
	register unsigned long a3 asm("a3") = arg3;
	register unsigned long a4 asm("a4") = arg4;
	register unsigned long a5 asm("a5") = arg5;
	register unsigned long a6 asm("a6") = fid;
	register unsigned long a7 asm("a7") = ext;
	struct sbi_ret ret;

	asm volatile("ecall"
		     : "+r"(a0), "+r"(a1)
		     : "r"(a2), "r"(a3), "r"(a4), "r"(a5), "r"(a6), "r"(a7)
		     : "memory");
	ret.error = (long)a0;
	ret.value = a1;
	return ret;
}

#endif
