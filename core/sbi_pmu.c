/* SPDX-License-Identifier: BSD-2-Clause */
/* Guest SBI PMU extension: its row of the table (the adapter is core/sbi_pmu.h) */
#include "core/sbi_pmu.h"

static struct sbi_ret pmu_handler(struct vcpu *vcpu, unsigned long eid, unsigned long fid,
				  const unsigned long args[6])
{
	(void)eid;
	return sbi_pmu_call(vcpu, fid, args);
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
