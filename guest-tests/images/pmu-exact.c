// SPDX-License-Identifier: BSD-2-Clause
/*
 * pmu-exact: under QEMU -icount shift=0 a counter filtered to one guest
 * privilege mode counts exactly the instructions that mode executed, none
 * of the hypervisor's or the firmware's. The expected counts are derived
 * from the instruction sequences below, not measured, with QEMU's rule for
 * the two instructions that switch modes: the trapping ecall counts in the
 * mode that executes it, and the xRET that enters a mode counts in that
 * mode. Run on OpenSBI without the hypervisor, this image reads the very
 * same numbers (docs/vpmu.md).
 */
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

GT_IMAGE("pmu-exact");

#define HW_INSTRUCTIONS SBI_PMU_HW_INSTRUCTIONS
#define HW_CYCLES	SBI_PMU_HW_CPU_CYCLES

static unsigned long hw_mask; /* hardware counters, from counter_get_info as Linux builds it */

/* Find a counter for event, cleared and stopped, with the guest's filter flags */
static long configure(unsigned long event, unsigned long filter)
{
	return gt_pmu_cfg_idx(0, hw_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE | filter, event);
}

/* U-mode part: gt_pmu_user_loop(n), 2n + 4 instructions (see pmu.h) */
#define USER_LOOP_COUNT(n) GT_PMU_USER_LOOP_COUNT(n)

/*
 * VS-mode part, all in one asm block so the count is exact: the sret that
 * returns from the START ecall, `mv`, the loop, five instructions that set
 * up the STOP ecall, and that ecall: 2n + 8 instructions.
 */
static void vs_loop(unsigned long idx, unsigned long n)
{
	register unsigned long a0 asm("a0") = idx;
	register unsigned long a1 asm("a1") = 1;
	register unsigned long a2 asm("a2") = 0;
	register unsigned long a3 asm("a3") = 0;
	register unsigned long a6 asm("a6") = SBI_EXT_PMU_COUNTER_START;
	register unsigned long a7 asm("a7") = SBI_EXT_PMU;
	unsigned long saved_idx = idx;

	asm volatile("ecall\n"
		     "	mv t0, %[n]\n"
		     "1:	addi t0, t0, -1\n"
		     "	bnez t0, 1b\n"
		     "	li a7, %[pmu]\n"
		     "	li a6, %[stop]\n"
		     "	mv a0, %[idx]\n"
		     "	li a1, 1\n"
		     "	li a2, 0\n"
		     "	ecall\n"
		     : "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3), "+r"(a6), "+r"(a7)
		     : [n] "r"(n), [idx] "r"(saved_idx), [pmu] "i"(SBI_EXT_PMU),
		       [stop] "i"(SBI_EXT_PMU_COUNTER_STOP)
		     : "t0", "memory");
}
#define VS_LOOP_COUNT(n) (2 * (n) + 8)

static unsigned long measure_user(unsigned long event, unsigned long filter, unsigned long n)
{
	long idx = configure(event, filter);
	struct sbi_ret r;
	unsigned long v;

	if (idx < 0)
		return (unsigned long)idx;
	r = gt_pmu_start((unsigned long)idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0);
	if (r.error)
		return (unsigned long)r.error;
	gt_run_user(gt_pmu_user_loop, n);
	gt_pmu_stop((unsigned long)idx, 1, 0);
	v = gt_pmu_read_csr((unsigned long)idx);
	gt_pmu_release((unsigned long)idx);
	return v;
}

static unsigned long measure_vs(unsigned long event, unsigned long filter, unsigned long n)
{
	long idx = configure(event, filter);
	unsigned long v;

	if (idx < 0)
		return (unsigned long)idx;
	vs_loop((unsigned long)idx, n);
	v = gt_pmu_read_csr((unsigned long)idx);
	gt_pmu_release((unsigned long)idx);
	return v;
}

static void check_event(const char *what, unsigned long event)
{
	static const unsigned long ns[] = {1000, 300000};
	/* UINH around a U-mode loop: only the VS-mode code of gt_run_user */
	unsigned long around = measure_user(event, SBI_PMU_CFG_FLAG_SET_UINH, 10);
	char name[64];

	gt_snprintf(name, sizeof(name), "%s-vs-around-user-loop", what);
	GT_CHECK_LE(name, around - 1, 1000); /* non-zero, and only a few hundred */
	for (unsigned int i = 0; i < 2; i++) {
		unsigned long n = ns[i];

		gt_snprintf(name, sizeof(name), "%s-vu-sinh-%lu", what, n);
		GT_CHECK_EQ(name, measure_user(event, SBI_PMU_CFG_FLAG_SET_SINH, n),
			    USER_LOOP_COUNT(n));
		/* the U-mode loop adds exactly nothing when U is inhibited */
		gt_snprintf(name, sizeof(name), "%s-vu-uinh-%lu", what, n);
		GT_CHECK_EQ(name, measure_user(event, SBI_PMU_CFG_FLAG_SET_UINH, n), around);
		gt_snprintf(name, sizeof(name), "%s-vu-all-%lu", what, n);
		GT_CHECK_EQ(name, measure_user(event, 0, n), USER_LOOP_COUNT(n) + around);
		gt_snprintf(name, sizeof(name), "%s-vs-uinh-%lu", what, n);
		GT_CHECK_EQ(name, measure_vs(event, SBI_PMU_CFG_FLAG_SET_UINH, n),
			    VS_LOOP_COUNT(n));
		gt_snprintf(name, sizeof(name), "%s-vs-sinh-%lu", what, n);
		GT_CHECK_EQ(name, measure_vs(event, SBI_PMU_CFG_FLAG_SET_SINH, n), 0);
	}
	/* unfiltered: both modes, never anything of the hypervisor's */
	gt_snprintf(name, sizeof(name), "%s-vs-all-1000", what);
	GT_CHECK_EQ(name, measure_vs(event, 0, 1000), VS_LOOP_COUNT(1000));
}

void gt_main(unsigned long hartid, const void *fdt)
{
	struct gt_pmu_layout pl;
	struct sbi_ret r;

	(void)hartid;
	(void)fdt;
	r = gt_pmu_layout(&pl);
	GT_CHECK_SBI("num-counters", r, SBI_SUCCESS);
	hw_mask = pl.hw_mask;
	GT_CHECK_NE("hw-counters-found", hw_mask, 0);
	check_event("instret", HW_INSTRUCTIONS);
	check_event("cycles", HW_CYCLES);
	gt_exit();
}
