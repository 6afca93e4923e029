/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Guest SBI PMU extension: a thin adapter from the guest's registers to the
 * vpmu_* functions (all logic lives in vpmu.c). Inline: the scheduler's PMU
 * lane (core/sched.c) answers every PMU call with it, the table's row
 * (core/sbi_pmu.c) the rest.
 */
#ifndef CORE_SBI_PMU_H
#define CORE_SBI_PMU_H

#include "core/sbi.h"
#include "vpmu/vpmu.h"
#include "vpmu/vpmu_host.h"

/* An unfinished call passes through as it is: no frame in the adapter for a conversion */
_Static_assert(VPMU_RET_RESTART == SBI_RET_RESTART, "vpmu's restart is the core's");

/*
 * v: the vCPU's vpmu (the scheduler's lane knows where it is). START and
 * STOP, perf's every event switch, are tested first: no jump table.
 */
static inline struct sbi_ret sbi_pmu_call_on(struct vpmu *v, unsigned long fid,
					     const unsigned long args[6])
{
	struct sbi_ret ret = {SBI_ERR_NOT_SUPPORTED, 0};

	if (!vpmu_available())
		return ret;
	if (fid == SBI_EXT_PMU_COUNTER_START)
		return (struct sbi_ret){vpmu_counter_start(v, args[0], args[1], args[2], args[3]),
					0};
	if (fid == SBI_EXT_PMU_COUNTER_STOP)
		return (struct sbi_ret){vpmu_counter_stop(v, args[0], args[1], args[2]), 0};
	switch (fid) {
	case SBI_EXT_PMU_NUM_COUNTERS:
		return vpmu_num_counters(v);
	case SBI_EXT_PMU_COUNTER_GET_INFO:
		return vpmu_counter_get_info(v, args[0]);
	case SBI_EXT_PMU_COUNTER_CFG_MATCH:
		/* RV64: event_data is a4 alone (a5 is its upper half on RV32) */
		return vpmu_counter_config_matching(v, args[0], args[1], args[2], args[3], args[4]);
	case SBI_EXT_PMU_COUNTER_FW_READ:
		return vpmu_counter_fw_read(v, args[0]);
	case SBI_EXT_PMU_COUNTER_FW_READ_HI:
		return vpmu_counter_fw_read_hi(v, args[0]);
	case SBI_EXT_PMU_SNAPSHOT_SET_SHMEM:
		return vpmu_snapshot_set_shmem(v, args[0], args[1], args[2]);
	case SBI_EXT_PMU_EVENT_GET_INFO:
		/* an unfinished call comes back as the core's restart (asserted above) */
		return vpmu_event_get_info(v, args[0], args[1], args[2], args[3]);
	default:
		return ret;
	}
}

static inline struct sbi_ret sbi_pmu_call(struct vcpu *vcpu, unsigned long fid,
					  const unsigned long args[6])
{
	return sbi_pmu_call_on(vcpu_vpmu(vcpu), fid, args);
}

#endif
