/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The SBI backend: the host SBI PMU (OpenSBI) configures, starts and stops
 * the counters; their values are read from the CSRs (phys.c). Used where
 * counter delegation is missing or refused (phys.c chooses), and for what
 * only the host can say (the layout).
 *
 * OpenSBI 1.5's behaviour absorbed here:
 * - the fixed counters 0 and 2 run from boot, so after config_matching they
 *   are "already started": config stops them, start retries after a stop;
 * - config_matching is never given AUTO_START, CLEAR_VALUE or SKIP_MATCH:
 *   start always sets the initial value, and SKIP_MATCH would skip the
 *   fixed counters' filter programming (mcyclecfg/minstretcfg);
 * - its start re-arms a counter (clears mhpmevent.OF) only while sip.LCOFIP
 *   is clear (keeps_of).
 */
#include "arch/riscv/csr.h"
#include "arch/riscv/sbi_call.h"
#include "vpmu/phys.h"
#include "vpmu/phys/backend.h"

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

static struct sbi_ret sbi_config(unsigned int idx, unsigned long host_flags,
				 unsigned long event_idx, uint64_t event_data)
{
	struct sbi_ret r = phys_sbi_call(SBI_EXT_PMU_COUNTER_CFG_MATCH, idx, 1,
					 host_flags & PHYS_HOST_FILTERS, event_idx, event_data);

	/* A fixed counter keeps running after config_matching: stop it */
	if (r.error == SBI_SUCCESS && r.value <= 2)
		phys_sbi_call(SBI_EXT_PMU_COUNTER_STOP, r.value, 1, 0, 0, 0);
	return r;
}

static long sbi_start(unsigned int idx, uint64_t value)
{
	struct sbi_ret r = phys_sbi_call(SBI_EXT_PMU_COUNTER_START, idx, 1,
					 SBI_PMU_START_FLAG_SET_INIT_VALUE, value, 0);

	if (r.error == SBI_ERR_ALREADY_STARTED) {
		phys_sbi_call(SBI_EXT_PMU_COUNTER_STOP, idx, 1, 0, 0, 0);
		r = phys_sbi_call(SBI_EXT_PMU_COUNTER_START, idx, 1,
				  SBI_PMU_START_FLAG_SET_INIT_VALUE, value, 0);
	}
	return r.error;
}

/*
 * OpenSBI's configuration sets OF, and its start clears it only while
 * sip.LCOFIP is clear: with LCOFIP raised around the start, the counter
 * runs with OF set (the logic took any pending LCOFI before the start)
 */
static long sbi_start_held(unsigned int idx, uint64_t value)
{
	long err;

	csr_set(CSR_SIP, 1UL << IRQ_PMU_OVF);
	err = sbi_start(idx, value);
	csr_clear(CSR_SIP, 1UL << IRQ_PMU_OVF);
	return err;
}

static long sbi_stop(unsigned int idx)
{
	return phys_sbi_call(SBI_EXT_PMU_COUNTER_STOP, idx, 1, 0, 0, 0).error;
}

/* OpenSBI's reset writes mhpmevent = 0 */
static long sbi_release(unsigned int idx)
{
	return phys_sbi_call(SBI_EXT_PMU_COUNTER_STOP, idx, 1, SBI_PMU_STOP_FLAG_RESET, 0, 0).error;
}

static uint64_t sbi_stop_read_one(unsigned int idx)
{
	sbi_stop(idx);
	return phys_read_csr(idx);
}

static long sbi_stop_mask(uint32_t mask)
{
	return phys_sbi_call(SBI_EXT_PMU_COUNTER_STOP, 0, mask, 0, 0, 0).error;
}

static long sbi_start_mask(uint32_t mask)
{
	return phys_sbi_call(SBI_EXT_PMU_COUNTER_START, 0, mask, 0, 0, 0).error;
}

const struct phys_ops phys_sbi_ops = {
	.name = "host SBI PMU",
	.config_host = sbi_config,
	.start = sbi_start,
	.start_held = sbi_start_held,
	.stop = sbi_stop,
	.release = sbi_release,
	.stop_read_one = sbi_stop_read_one,
	.stop_mask = sbi_stop_mask,
	.start_mask = sbi_start_mask,
	.keeps_of = true,
};
