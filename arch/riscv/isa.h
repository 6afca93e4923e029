/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The host harts' ISA extensions the hypervisor acts on. core/hostdt.c fills
 * riscv_isa once at boot from the host device tree (the first usable cpu
 * node); afterwards the arch (a vCPU's CSRs, interrupt injection) and the
 * core only read it.
 */
#ifndef ARCH_RISCV_ISA_H
#define ARCH_RISCV_ISA_H

#include <stdbool.h>
#include <stdint.h>

enum riscv_ext {
	RISCV_EXT_H,
	RISCV_EXT_SSCOFPMF,
	RISCV_EXT_SSAIA,
	RISCV_EXT_SMCNTRPMF,
	RISCV_EXT_SSTC,
	RISCV_EXT_SVPBMT,
	RISCV_EXT_ZICBOM,
	RISCV_EXT_ZICBOZ,
	RISCV_EXT_SMSTATEEN,
	RISCV_EXT_MAX
};

struct riscv_isa {
	bool ext[RISCV_EXT_MAX];
	uint32_t cbom_block, cboz_block; /* riscv,cbo[mz]-block-size (0: none) */
};

extern struct riscv_isa riscv_isa;

static inline bool riscv_has(enum riscv_ext e)
{
	return riscv_isa.ext[e];
}

/* Its name in a DT's riscv,isa-extensions (and in the boot banner) */
const char *riscv_ext_name(enum riscv_ext e);

#endif
