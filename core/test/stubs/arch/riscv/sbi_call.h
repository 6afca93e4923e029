/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Host replacement for arch/riscv/sbi_call.h (found first through
 * -I core/test/stubs): sbi_ecall is an ordinary function the test defines.
 */
#ifndef ARCH_SBI_CALL_H
#define ARCH_SBI_CALL_H

#include "arch/riscv/sbi_spec.h"

struct sbi_ret sbi_ecall(unsigned long ext, unsigned long fid, unsigned long arg0,
			 unsigned long arg1, unsigned long arg2, unsigned long arg3,
			 unsigned long arg4, unsigned long arg5);

#endif
