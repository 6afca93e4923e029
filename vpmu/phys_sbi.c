/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The SBI physical backend: the host SBI PMU (OpenSBI) configures, starts
 * and stops the counters; counter values are read from their CSRs
 * (phys_common.c). Used where counter delegation is missing or refused
 * (phys_common.c chooses), and for what only the host can say (layout).
 *
 * OpenSBI 1.5 quirks absorbed here:
 * - the fixed counters 0 and 2 run from boot, so after config_matching they
 *   are "already started": config stops them, start retries after a stop;
 * - config_matching is never given AUTO_START, CLEAR_VALUE or SKIP_MATCH:
 *   start always sets the initial value, and SKIP_MATCH would skip the
 *   fixed counters' filter programming (mcyclecfg/minstretcfg).
 * QEMU's quirks, for both backends: phys_common.c.
 */
#include "arch/riscv/cpu.h"
#include "arch/riscv/sbi_call.h"
#include "vpmu/phys_backend.h"
#include "vpmu/vpmu.h"
#include "vpmu/vpmu_host.h"
#include "vpmu/vpmu_phys.h"

struct sbi_ret phys_sbi_call(unsigned long fid, unsigned long a0, unsigned long a1,
			     unsigned long a2, unsigned long a3, unsigned long a4)
{
	return sbi_ecall(SBI_EXT_PMU, fid, a0, a1, a2, a3, a4, 0);
}

int vpmu_phys_available(void)
{
	struct sbi_ret r =
		sbi_ecall(SBI_EXT_BASE, SBI_EXT_BASE_PROBE_EXT, SBI_EXT_PMU, 0, 0, 0, 0, 0);

	return r.error == SBI_SUCCESS && r.value != 0;
}

unsigned long vpmu_phys_num_counters(void)
{
	struct sbi_ret r = phys_sbi_call(SBI_EXT_PMU_NUM_COUNTERS, 0, 0, 0, 0, 0);

	return r.error ? 0 : r.value;
}

struct sbi_ret vpmu_phys_counter_info(unsigned long idx)
{
	return phys_sbi_call(SBI_EXT_PMU_COUNTER_GET_INFO, idx, 0, 0, 0, 0);
}

static struct sbi_ret phys_sbi_config(unsigned int idx, unsigned long host_flags,
				      unsigned long event_idx, uint64_t event_data)
{
	struct sbi_ret r = phys_sbi_call(SBI_EXT_PMU_COUNTER_CFG_MATCH, idx, 1,
					 host_flags & PHYS_HOST_FILTERS, event_idx, event_data);

	/* A fixed counter keeps running after config_matching: stop it */
	if (r.error == SBI_SUCCESS && r.value <= 2)
		phys_sbi_call(SBI_EXT_PMU_COUNTER_STOP, r.value, 1, 0, 0, 0);
	/* QEMU maps the event here unless another counter has it (quirk 2) */
	if (r.error == SBI_SUCCESS && r.value >= PHYS_FIRST_PROG && r.value < VPMU_MAX_HW &&
	    phys_holder_of(vpmu_host_hart(), event_idx) < 0)
		vpmu_host_hart()->phys_ev[r.value] = (uint32_t)event_idx;
	return r;
}

/* Counter idx is stopped and about to start near its top: see phys_common.c */
static void consume_stale_deadline(unsigned int idx)
{
	phys_sbi_call(SBI_EXT_PMU_COUNTER_START, idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE,
		      -(uint64_t)PHYS_CONSUME_COUNTS, 0);
	cpu_spin(2UL * PHYS_CONSUME_COUNTS); /* 4 x its distance to the top, in instructions */
	phys_sbi_call(SBI_EXT_PMU_COUNTER_STOP, idx, 1, 0, 0, 0);
}

static long phys_sbi_start(unsigned int idx, uint64_t value, bool consume)
{
	struct sbi_ret r;

	if (consume)
		consume_stale_deadline(idx);
	r = phys_sbi_call(SBI_EXT_PMU_COUNTER_START, idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE,
			  value, 0);
	if (r.error == SBI_ERR_ALREADY_STARTED) {
		phys_sbi_call(SBI_EXT_PMU_COUNTER_STOP, idx, 1, 0, 0, 0);
		r = phys_sbi_call(SBI_EXT_PMU_COUNTER_START, idx, 1,
				  SBI_PMU_START_FLAG_SET_INIT_VALUE, value, 0);
	}
	return r.error;
}

static long phys_sbi_stop(unsigned int idx, int reset)
{
	/* OpenSBI's reset writes mhpmevent = 0: QEMU drops the counter's mapping */
	if (reset && idx >= PHYS_FIRST_PROG && idx < VPMU_MAX_HW)
		vpmu_host_hart()->phys_ev[idx] = 0;
	return phys_sbi_call(SBI_EXT_PMU_COUNTER_STOP, idx, 1, reset ? SBI_PMU_STOP_FLAG_RESET : 0,
			     0, 0)
		.error;
}

static uint64_t phys_sbi_stop_read_one(unsigned int idx)
{
	phys_sbi_stop(idx, 0);
	return phys_read_raw(idx);
}

static long phys_sbi_stop_mask(uint32_t mask)
{
	return phys_sbi_call(SBI_EXT_PMU_COUNTER_STOP, 0, mask, 0, 0, 0).error;
}

static long phys_sbi_start_mask(uint32_t mask)
{
	for (unsigned int i = PHYS_FIRST_PROG; i < 32; i++) {
		uint64_t v;

		if (!((mask >> i) & 1))
			continue;
		v = phys_read_raw(i); /* they continue from their values, bias and all */
		if (phys_quirk_stale_deadline(i, v)) {
			consume_stale_deadline(i);
			phys_sbi_call(SBI_EXT_PMU_COUNTER_START, i, 1,
				      SBI_PMU_START_FLAG_SET_INIT_VALUE, v, 0);
			phys_sbi_call(SBI_EXT_PMU_COUNTER_STOP, i, 1, 0, 0, 0);
		}
	}
	return phys_sbi_call(SBI_EXT_PMU_COUNTER_START, 0, mask, 0, 0, 0).error;
}

const struct phys_ops phys_sbi_ops = {
	.config = phys_sbi_config,
	.start = phys_sbi_start,
	.stop = phys_sbi_stop,
	.stop_read_one = phys_sbi_stop_read_one,
	.start_keeps_of = true, /* OpenSBI re-arms a counter only while LCOFIP is clear */
	.stop_mask = phys_sbi_stop_mask,
	.start_mask = phys_sbi_start_mask,
};
