/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The SBI PMU extension (EID 0x504D55, SBI v3.0 FIDs 0-8) as the core calls
 * it: vpmu_sbi_call() unpacks a guest's registers into the nine functions.
 * Inline: the scheduler's PMU lane (core/lane.c) answers every PMU call with
 * it, the dispatch table's row (core/sbi_pmu.c) the rest.
 *
 * The lane's contract: a PMU call changes only the vpmu itself, its
 * deadline (vpmu_deadline), whether it counts (vpmu_counting), raises or
 * cancels the guest's LCOFI through vpmu_host_raise_lcofi /
 * vpmu_host_cancel_lcofi, or answers VPMU_RET_RESTART. It never changes a
 * vCPU's or VM's state, a guest timer or what the hart runs: the lane looks
 * at nothing else after the call.
 */
#ifndef VPMU_VPMU_SBI_H
#define VPMU_VPMU_SBI_H

#include <stdint.h>
#include "arch/riscv/sbi_spec.h"
#include "vpmu/vpmu.h"

/*
 * Not an SBI error: the call is not finished; the guest must issue it
 * again (the core re-executes its ecall), and it resumes where it stopped.
 */
#define VPMU_RET_RESTART (-1001L)

struct sbi_ret vpmu_num_counters(struct vpmu *v);
struct sbi_ret vpmu_counter_get_info(struct vpmu *v, unsigned long counter_idx);
struct sbi_ret vpmu_counter_config_matching(struct vpmu *v, unsigned long counter_idx_base,
					    unsigned long counter_idx_mask,
					    unsigned long config_flags, unsigned long event_idx,
					    uint64_t event_data);
/* START and STOP answer an error code alone (their value is 0) */
long vpmu_counter_start(struct vpmu *v, unsigned long counter_idx_base,
			unsigned long counter_idx_mask, unsigned long start_flags,
			uint64_t initial_value);
long vpmu_counter_stop(struct vpmu *v, unsigned long counter_idx_base,
		       unsigned long counter_idx_mask, unsigned long stop_flags);
struct sbi_ret vpmu_counter_fw_read(struct vpmu *v, unsigned long counter_idx);
struct sbi_ret vpmu_counter_fw_read_hi(struct vpmu *v, unsigned long counter_idx);
struct sbi_ret vpmu_snapshot_set_shmem(struct vpmu *v, unsigned long shmem_phys_lo,
				       unsigned long shmem_phys_hi, unsigned long flags);
struct sbi_ret vpmu_event_get_info(struct vpmu *v, unsigned long shmem_phys_lo,
				   unsigned long shmem_phys_hi, unsigned long num_entries,
				   unsigned long flags);

/* START and STOP, perf's every event switch, are tested first: no jump table for them */
static inline struct sbi_ret vpmu_sbi_dispatch(struct vpmu *v, unsigned long fid,
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
		/* an unfinished call comes back as VPMU_RET_RESTART */
		return vpmu_event_get_info(v, args[0], args[1], args[2], args[3]);
	default:
		return ret;
	}
}

/*
 * One guest SBI PMU call: fid and args[0..5] (a0..a5) as the guest passed
 * them. A debug build (make DEBUG=1) checks the vPMU's invariants after it.
 */
static inline struct sbi_ret vpmu_sbi_call(struct vpmu *v, unsigned long fid,
					   const unsigned long args[6])
{
#ifdef VPMU_DEBUG
	struct sbi_ret r = vpmu_sbi_dispatch(v, fid, args);

	vpmu_debug_check(v, "an SBI PMU call");
	return r;
#else
	return vpmu_sbi_dispatch(v, fid, args);
#endif
}

#endif
