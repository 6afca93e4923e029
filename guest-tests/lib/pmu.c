// SPDX-License-Identifier: BSD-2-Clause
/* SBI PMU helpers shared by the pmu-* and bench images (see pmu.h). */
#include "guest-tests/lib/pmu.h"

struct sbi_ret gt_pmu_call(unsigned long fid, unsigned long a0, unsigned long a1, unsigned long a2,
			   unsigned long a3, unsigned long a4)
{
	return gt_sbi_call(SBI_EXT_PMU, fid, a0, a1, a2, a3, a4, 0);
}

struct sbi_ret gt_pmu_num_counters(void)
{
	return gt_pmu_call(SBI_EXT_PMU_NUM_COUNTERS, 0, 0, 0, 0, 0);
}

struct sbi_ret gt_pmu_counter_info(unsigned long idx)
{
	return gt_pmu_call(SBI_EXT_PMU_COUNTER_GET_INFO, idx, 0, 0, 0, 0);
}

struct sbi_ret gt_pmu_cfg(unsigned long base, unsigned long mask, unsigned long flags,
			  unsigned long event, unsigned long data)
{
	return gt_pmu_call(SBI_EXT_PMU_COUNTER_CFG_MATCH, base, mask, flags, event, data);
}

struct sbi_ret gt_pmu_start(unsigned long base, unsigned long mask, unsigned long flags,
			    unsigned long ival)
{
	return gt_pmu_call(SBI_EXT_PMU_COUNTER_START, base, mask, flags, ival, 0);
}

struct sbi_ret gt_pmu_stop(unsigned long base, unsigned long mask, unsigned long flags)
{
	return gt_pmu_call(SBI_EXT_PMU_COUNTER_STOP, base, mask, flags, 0, 0);
}

struct sbi_ret gt_pmu_fw_read(unsigned long idx)
{
	return gt_pmu_call(SBI_EXT_PMU_COUNTER_FW_READ, idx, 0, 0, 0, 0);
}

struct sbi_ret gt_pmu_fw_read_hi(unsigned long idx)
{
	return gt_pmu_call(SBI_EXT_PMU_COUNTER_FW_READ_HI, idx, 0, 0, 0, 0);
}

struct sbi_ret gt_pmu_snapshot_set(unsigned long lo, unsigned long hi, unsigned long flags)
{
	return gt_pmu_call(SBI_EXT_PMU_SNAPSHOT_SET_SHMEM, lo, hi, flags, 0, 0);
}

struct sbi_ret gt_pmu_event_get_info(unsigned long lo, unsigned long hi, unsigned long n,
				     unsigned long flags)
{
	return gt_pmu_call(SBI_EXT_PMU_EVENT_GET_INFO, lo, hi, n, flags, 0);
}

long gt_pmu_cfg_idx(unsigned long base, unsigned long mask, unsigned long flags,
		    unsigned long event)
{
	struct sbi_ret r = gt_pmu_cfg(base, mask, flags, event, 0);

	return r.error ? r.error : (long)r.value;
}

void gt_pmu_release(unsigned long idx)
{
	gt_pmu_stop(idx, 1, SBI_PMU_STOP_FLAG_RESET);
}

struct sbi_ret gt_pmu_layout(struct gt_pmu_layout *l)
{
	struct sbi_ret r = gt_pmu_num_counters();

	*l = (struct gt_pmu_layout){.num = r.error ? 0 : r.value, .fw_first = ~0UL};
	for (unsigned long i = 0; i < l->num && i < 64; i++) {
		struct sbi_ret info = gt_pmu_counter_info(i);

		if (info.error)
			continue;
		if (info.value & SBI_PMU_CTR_INFO_FW) {
			if (l->fw_first == ~0UL)
				l->fw_first = i;
			l->fw_mask |= 1UL << i;
			l->nfw++;
		} else {
			l->hw_mask |= 1UL << i;
			if (i >= 3)
				l->prog_mask |= 1UL << i;
			l->hw_top = i + 1;
		}
	}
	return r;
}

unsigned long gt_pmu_read_csr(unsigned long idx)
{
#define RD(n)                                                                                      \
	case n:                                                                                    \
		return csr_read(0xc00 + (n))
	switch (idx) {
		RD(0);
		RD(1);
		RD(2);
		RD(3);
		RD(4);
		RD(5);
		RD(6);
		RD(7);
		RD(8);
		RD(9);
		RD(10);
		RD(11);
		RD(12);
		RD(13);
		RD(14);
		RD(15);
		RD(16);
		RD(17);
		RD(18);
		RD(19);
		RD(20);
		RD(21);
		RD(22);
		RD(23);
		RD(24);
		RD(25);
		RD(26);
		RD(27);
		RD(28);
		RD(29);
		RD(30);
		RD(31);
	}
#undef RD
	return ~0UL;
}

bool gt_pmu_csr_traps(unsigned long idx)
{
	gt_expect_trap(EXC_ILLEGAL_INSN);
	(void)gt_pmu_read_csr(idx);
	return gt_trapped() == EXC_ILLEGAL_INSN;
}

/* plain asm: its instructions, and so GT_PMU_USER_LOOP_COUNT, never depend on the compiler */
asm(".text\n.globl gt_pmu_user_loop\ngt_pmu_user_loop:\n"
    "1:	addi a0, a0, -1\n"
    "	bnez a0, 1b\n"
    "	ret\n");

void gt_pmu_snapshot_fill(volatile uint64_t *area, uint64_t v)
{
	for (unsigned int i = 0; i < GT_PMU_SNAPSHOT_WORDS; i++)
		area[i] = v;
}

unsigned long gt_pmu_snapshot_differing(volatile uint64_t *area, uint64_t v, unsigned int skip1,
					unsigned int skip2)
{
	unsigned long n = 0;

	for (unsigned int i = 0; i < GT_PMU_SNAPSHOT_WORDS; i++)
		if (i != skip1 && i != skip2 && area[i] != v)
			n++;
	return n;
}
