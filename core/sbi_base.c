// SPDX-License-Identifier: BSD-2-Clause
/* SBI BASE extension */
#include "core/sbi.h"
#include "arch/riscv/sbi_call.h"

/* Not an assigned SBI implementation ID; chosen to read "pmuv" in ASCII */
#define PMUVISOR_SBI_IMPL_ID	  0x706d7576UL
#define PMUVISOR_SBI_IMPL_VERSION 0x00000100UL /* 0.1 */

/* The guest runs on the real harts: report their identity */
static __attribute__((noinline)) struct sbi_ret base_host_id(unsigned long fid)
{
	struct sbi_ret r = sbi_ecall(SBI_EXT_BASE, fid, 0, 0, 0, 0, 0, 0);

	return r.error ? (struct sbi_ret){0, 0} : r;
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
		return base_host_id(fid);
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
