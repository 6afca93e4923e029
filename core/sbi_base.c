// SPDX-License-Identifier: BSD-2-Clause
/* SBI BASE extension */
#include "core/lib.h"
#include "core/sbi.h"
#include "arch/riscv/sbi_call.h"

/* Not an assigned SBI implementation ID; chosen to read "pmuv" in ASCII */
#define PMUVISOR_SBI_IMPL_ID	  0x706d7576UL
#define PMUVISOR_SBI_IMPL_VERSION 0x00000100UL /* 0.1 */

/*
 * The guest runs on the real harts: it reads their mvendorid, marchid and
 * mimpid, which the host SBI gives once at boot, on the boot hart (a host
 * error reads as 0). A vCPU may run on any hart, so one set for all: on a
 * host of mixed cores, the boot hart's.
 */
static unsigned long host_ids[3];

void sbi_base_init(void)
{
	for (unsigned long i = 0; i < ARRAY_SIZE(host_ids); i++) {
		struct sbi_ret r =
			sbi_ecall(SBI_EXT_BASE, SBI_EXT_BASE_GET_MVENDORID + i, 0, 0, 0, 0, 0, 0);

		host_ids[i] = r.error ? 0 : r.value;
	}
}

/*
 * Calls that need more than a constant are tail calls (probe_extension to the
 * table's file, core/sbi.c): no frame for the others
 */
static struct sbi_ret base_handler(struct vcpu *vcpu, unsigned long eid, unsigned long fid,
				   const unsigned long args[6])
{
	(void)eid;
	switch (fid) {
	case SBI_EXT_BASE_GET_SPEC_VERSION:
		return (struct sbi_ret){0, SBI_SPEC_VERSION(3, 0)};
	case SBI_EXT_BASE_GET_IMP_ID:
		return (struct sbi_ret){0, PMUVISOR_SBI_IMPL_ID};
	case SBI_EXT_BASE_GET_IMP_VERSION:
		return (struct sbi_ret){0, PMUVISOR_SBI_IMPL_VERSION};
	case SBI_EXT_BASE_PROBE_EXT:
		return sbi_probe_ext(vcpu, args[0]);
	case SBI_EXT_BASE_GET_MVENDORID:
	case SBI_EXT_BASE_GET_MARCHID:
	case SBI_EXT_BASE_GET_MIMPID:
		return (struct sbi_ret){0, host_ids[fid - SBI_EXT_BASE_GET_MVENDORID]};
	default:
		return (struct sbi_ret){SBI_ERR_NOT_SUPPORTED, 0};
	}
}

const struct sbi_ext sbi_ext_base = {
	.eid_min = SBI_EXT_BASE,
	.eid_max = SBI_EXT_BASE,
	.name = "base",
	.handler = base_handler,
};
