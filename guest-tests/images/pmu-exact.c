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
#include "gt.h"

GT_IMAGE("pmu-exact");

#define HW_INSTRUCTIONS SBI_PMU_HW_INSTRUCTIONS
#define HW_CYCLES	SBI_PMU_HW_CPU_CYCLES

static unsigned long hw_mask; /* hardware counters, from counter_get_info as Linux builds it */

static unsigned long read_counter(unsigned long idx)
{
#define RD(n)                                                                                      \
	case n:                                                                                    \
		return csr_read(0xc00 + n)
	switch (idx) {
		RD(0); RD(2); RD(3); RD(4); RD(5); RD(6); RD(7); RD(8); RD(9); RD(10); RD(11);
		RD(12); RD(13); RD(14); RD(15); RD(16); RD(17); RD(18); RD(19); RD(20); RD(21);
		RD(22); RD(23); RD(24); RD(25); RD(26); RD(27); RD(28); RD(29); RD(30); RD(31);
	}
#undef RD
	return ~0UL;
}

/* Find a counter for event, cleared and stopped, with the guest's filter flags */
static long configure(unsigned long event, unsigned long filter)
{
	struct sbi_ret r = gt_sbi_call(SBI_EXT_PMU, SBI_EXT_PMU_COUNTER_CFG_MATCH, 0, hw_mask,
				       SBI_PMU_CFG_FLAG_CLEAR_VALUE | filter, event, 0, 0);

	return r.error ? r.error : (long)r.value;
}

static void release(unsigned long idx)
{
	gt_sbi_call(SBI_EXT_PMU, SBI_EXT_PMU_COUNTER_STOP, idx, 1, SBI_PMU_STOP_FLAG_RESET, 0, 0,
		    0);
}

/*
 * U-mode part: the sret that enters U, 2 instructions per iteration, `ret`,
 * then the library's exit stub: `li a7` and the `ecall` that traps back:
 * 2n + 4 instructions.
 */
unsigned long user_loop(unsigned long n);
asm(".text\n.globl user_loop\nuser_loop:\n"
    "1:	addi a0, a0, -1\n"
    "	bnez a0, 1b\n"
    "	ret\n");
#define USER_LOOP_COUNT(n) (2 * (n) + 4)

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
	r = gt_sbi_call(SBI_EXT_PMU, SBI_EXT_PMU_COUNTER_START, (unsigned long)idx, 1,
			SBI_PMU_START_FLAG_SET_INIT_VALUE, 0, 0, 0);
	if (r.error)
		return (unsigned long)r.error;
	gt_run_user(user_loop, n);
	gt_sbi_call(SBI_EXT_PMU, SBI_EXT_PMU_COUNTER_STOP, (unsigned long)idx, 1, 0, 0, 0, 0);
	v = read_counter((unsigned long)idx);
	release((unsigned long)idx);
	return v;
}

static unsigned long measure_vs(unsigned long event, unsigned long filter, unsigned long n)
{
	long idx = configure(event, filter);
	unsigned long v;

	if (idx < 0)
		return (unsigned long)idx;
	vs_loop((unsigned long)idx, n);
	v = read_counter((unsigned long)idx);
	release((unsigned long)idx);
	return v;
}

static void check_event(const char *what, unsigned long event)
{
	static const unsigned long ns[] = { 1000, 300000 };
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
	struct sbi_ret r;

	(void)hartid;
	(void)fdt;
	r = gt_sbi0(SBI_EXT_PMU, SBI_EXT_PMU_NUM_COUNTERS);
	GT_CHECK_SBI("num-counters", r, SBI_SUCCESS);
	for (unsigned long i = 0; i < r.value && i < 64; i++) {
		struct sbi_ret info = gt_sbi1(SBI_EXT_PMU, SBI_EXT_PMU_COUNTER_GET_INFO, i);

		if (!info.error && !(info.value & SBI_PMU_CTR_INFO_FW))
			hw_mask |= 1UL << i;
	}
	GT_CHECK_NE("hw-counters-found", hw_mask, 0);
	check_event("instret", HW_INSTRUCTIONS);
	check_event("cycles", HW_CYCLES);
	gt_exit();
}
