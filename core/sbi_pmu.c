/* SPDX-License-Identifier: BSD-2-Clause */
/* Guest SBI PMU extension: its row of the table (the adapter is vpmu/vpmu_sbi.h) */
#include "core/sbi.h"
#include "core/vcpu.h"
#include "vpmu/vpmu_sbi.h"

/* An unfinished call passes through as it is: the core re-executes the ecall */
_Static_assert(VPMU_RET_RESTART == SBI_RET_RESTART, "vpmu's restart is the core's");

static struct sbi_ret pmu_handler(struct vcpu *vcpu, unsigned long eid, unsigned long fid,
				  const unsigned long args[6])
{
	(void)eid;
	return vpmu_sbi_call(&vcpu->vpmu, fid, args);
}

static long pmu_probe(struct vcpu *vcpu)
{
	(void)vcpu;
	return vpmu_available() ? 1 : 0;
}

const struct sbi_ext sbi_ext_pmu = {
	.eid_min = SBI_EXT_PMU,
	.eid_max = SBI_EXT_PMU,
	.name = "pmu",
	.handler = pmu_handler,
	.probe = pmu_probe,
};
