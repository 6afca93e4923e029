/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Host replacement for arch/riscv/csr.h (found first through
 * -I core/test/stubs): its numbers and bits, with the CSR accesses on a
 * plain array the test can look at (stub_csr[number]) instead of RISC-V
 * instructions.
 */
#ifndef STUB_ARCH_RISCV_CSR_H
#define STUB_ARCH_RISCV_CSR_H

#include_next "arch/riscv/csr.h"

extern unsigned long stub_csr[4096];

#undef csr_read
#undef csr_write
#undef csr_set
#undef csr_clear
#undef csr_swap
#define csr_read(csr)	    (stub_csr[(csr)])
#define csr_write(csr, val) ((void)(stub_csr[(csr)] = (unsigned long)(val)))
#define csr_set(csr, val)   ((void)(stub_csr[(csr)] |= (unsigned long)(val)))
#define csr_clear(csr, val) ((void)(stub_csr[(csr)] &= ~(unsigned long)(val)))
#define csr_swap(csr, val)                                                                         \
	({                                                                                         \
		unsigned long __old = stub_csr[(csr)];                                             \
		stub_csr[(csr)] = (unsigned long)(val);                                            \
		__old;                                                                             \
	})

#endif
