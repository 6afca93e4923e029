// SPDX-License-Identifier: BSD-2-Clause
/* pmu-api: the counter CSRs before any configuration, after it, and from U-mode */
#include "guest-tests/images/pmu-api/pmu-api.h"

/* --------------------------------------------------- counter CSRs, before */
void check_unconfigured_csrs(void)
{
	uint64_t t0, t1;

	if (gt_native()) {
		/* OpenSBI leaves mcounteren open: an unconfigured counter just reads */
		gt_printf("pmu-api: native: unconfigured hpmcounter5 reads 0x%lx\n",
			  csr_read(0xc05));
	} else {
		gt_expect_trap(EXC_ILLEGAL_INSN);
		(void)csr_read(0xc05);
		GT_CHECK_EQ("csr-unconfigured-hpmcounter5-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
		gt_expect_trap(EXC_ILLEGAL_INSN);
		(void)csr_read(cycle);
		GT_CHECK_EQ("csr-unconfigured-cycle-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
		gt_expect_trap(EXC_ILLEGAL_INSN);
		(void)csr_read(instret);
		GT_CHECK_EQ("csr-unconfigured-instret-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
		/* beyond the host's counters (QEMU has 3..18) */
		gt_expect_trap(EXC_ILLEGAL_INSN);
		(void)csr_read(0xc1f);
		GT_CHECK_EQ("csr-hpmcounter31-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
	}
	/* time is not a PMU counter: always readable */
	gt_expect_trap(EXC_ILLEGAL_INSN);
	t0 = gt_rdtime();
	spin(1000);
	t1 = gt_rdtime();
	GT_CHECK_EQ("csr-time-no-trap", gt_trapped(), -1L);
	GT_CHECK_GE("csr-time-advances", t1 - t0, 1);
}

/* -------------------------------------------------- counter CSRs, after */
void check_csrs(void)
{
	struct sbi_ret r;
	unsigned long idx, v0, v1;

	if (!ins_set)
		return;
	/* configured, never started, value cleared: reads 0 (emulated on pmuvisor) */
	r = gt_pmu_cfg(0, ins_set, SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_INSTRET, 0);
	idx = r.value;
	gt_expect_trap(EXC_ILLEGAL_INSN);
	v0 = gt_pmu_read_csr(idx);
	GT_CHECK_EQ("csr-configured-no-trap", gt_trapped(), -1L);
	GT_CHECK_EQ("csr-configured-not-started-zero", v0, 0);
	/* started: a direct read, advancing with the guest's instructions */
	gt_pmu_start(idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 1UL << 40);
	v0 = gt_pmu_read_csr(idx);
	spin(5000);
	v1 = gt_pmu_read_csr(idx);
	GT_CHECK_GE("csr-started-init-value", v0, 1UL << 40);
	GT_CHECK_GE("csr-started-advances", v1 - v0, 10000);
	if (!gt_native()) /* see SANE in pmu-api.h */
		GT_CHECK_LE("csr-started-advances-sane", v1 - v0, 10100);
	/* writes to a counter CSR are illegal (read-only CSRs), configured or not */
	gt_expect_trap(EXC_ILLEGAL_INSN);
	asm volatile("csrw hpmcounter3, zero" ::: "memory");
	GT_CHECK_EQ("csr-write-hpmcounter3-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
	gt_expect_trap(EXC_ILLEGAL_INSN);
	asm volatile("csrw cycle, zero" ::: "memory");
	GT_CHECK_EQ("csr-write-cycle-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
	gt_expect_trap(EXC_ILLEGAL_INSN);
	asm volatile("csrs hpmcounter5, %0" ::"r"(1UL) : "memory");
	GT_CHECK_EQ("csr-set-hpmcounter5-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
	gt_pmu_stop(idx, 1, 0);
	v0 = gt_pmu_read_csr(idx);
	GT_CHECK_GE("csr-stopped-value", v0, (1UL << 40) + 10000);
	gt_pmu_release(idx);

	/* cycles on counter 0, read with rdcycle */
	r = gt_pmu_cfg(0, 1, SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_CYCLES, 0);
	GT_CHECK_SBI("cycle-cfg-ok", r, SBI_SUCCESS);
	r = gt_pmu_start(0, 1, 0, 0);
	if (gt_native()) /* platform.md: OpenSBI reports the fixed counter already started */
		gt_printf("pmu-api: native: start of counter 0 after cfg -> %ld\n", r.error);
	else
		GT_CHECK_SBI("cycle-start-ok", r, SBI_SUCCESS);
	v0 = csr_read(cycle);
	spin(5000); /* 10,000 instructions */
	v1 = csr_read(cycle);
	gt_printf("pmu-api: cycle advanced %lu over 10,000 instructions\n", v1 - v0);
	/* at least one cycle an instruction; under -icount one ns, one cycle, an instruction */
	GT_CHECK_GE("cycle-advances", v1 - v0, 10000);
	if (!gt_native())
		GT_CHECK_LE("cycle-advances-with-the-guest-only", v1 - v0, 11000);
	gt_pmu_release(0);
}

/* ------------------------------------------------------------ U-mode */
static unsigned long user_read(unsigned long idx)
{
	return gt_pmu_read_csr(idx);
}

void check_user(void)
{
	struct sbi_ret r;
	unsigned long idx, v, saved = csr_read(scounteren);
	long c;

	if (!ins_set)
		return;
	r = gt_pmu_cfg(0, ins_set, SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_INSTRET, 0);
	idx = r.value;
	gt_pmu_start(idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 1UL << 32);

	/* scounteren bit clear: illegal instruction, as on hardware */
	csr_write(scounteren, 0);
	gt_expect_trap(EXC_ILLEGAL_INSN);
	gt_run_user(user_read, idx);
	c = gt_trapped();
	GT_CHECK_EQ("user-no-scounteren-illegal", c, EXC_ILLEGAL_INSN);
	/* taken from U-mode (SPP = 0); ~0 when there was no trap at all */
	GT_CHECK_EQ("user-no-scounteren-trap-from-u",
		    c == EXC_ILLEGAL_INSN ? gt_this_hart()->trapped_spp : ~0UL, 0);
	/* the bit of another counter does not help */
	csr_write(scounteren, ~(1UL << idx) & ~2UL);
	gt_expect_trap(EXC_ILLEGAL_INSN);
	gt_run_user(user_read, idx);
	GT_CHECK_EQ("user-other-scounteren-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
	/* with it: the value */
	csr_write(scounteren, 1UL << idx);
	gt_expect_trap(EXC_ILLEGAL_INSN);
	v = gt_run_user(user_read, idx);
	GT_CHECK_EQ("user-scounteren-no-trap", gt_trapped(), -1L);
	GT_CHECK_GE("user-scounteren-value", v, 1UL << 32);
	if (!gt_native()) /* see SANE in pmu-api.h */
		GT_CHECK_LE("user-scounteren-value-sane", v, (1UL << 32) + 100000);
	/* stopped: still readable, the stopped value */
	gt_pmu_stop(idx, 1, 0);
	v = gt_pmu_read_csr(idx);
	GT_CHECK_EQ("user-stopped-value", gt_run_user(user_read, idx), v);
	csr_write(scounteren, 0);
	gt_expect_trap(EXC_ILLEGAL_INSN);
	gt_run_user(user_read, idx);
	GT_CHECK_EQ("user-stopped-no-scounteren-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
	gt_pmu_release(idx);
	/* an unconfigured counter is illegal from U-mode even with scounteren */
	if (!gt_native()) {
		csr_write(scounteren, ~0UL);
		gt_expect_trap(EXC_ILLEGAL_INSN);
		gt_run_user(user_read, idx);
		GT_CHECK_EQ("user-unconfigured-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
	}
	csr_write(scounteren, saved);
}
