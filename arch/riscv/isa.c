// SPDX-License-Identifier: BSD-2-Clause
/* The host's ISA extensions (arch/riscv/isa.h): the facts, and their DT names. */
#include "arch/riscv/isa.h"

struct riscv_isa riscv_isa;

static const char *const names[RISCV_EXT_MAX] = {
	[RISCV_EXT_H] = "h",
	[RISCV_EXT_SSCOFPMF] = "sscofpmf",
	[RISCV_EXT_SSAIA] = "ssaia",
	[RISCV_EXT_SMCNTRPMF] = "smcntrpmf",
	[RISCV_EXT_SSTC] = "sstc",
	[RISCV_EXT_SVPBMT] = "svpbmt",
	[RISCV_EXT_ZICBOM] = "zicbom",
	[RISCV_EXT_ZICBOZ] = "zicboz",
	[RISCV_EXT_SMSTATEEN] = "smstateen",
};

const char *riscv_ext_name(enum riscv_ext e)
{
	return names[e];
}
